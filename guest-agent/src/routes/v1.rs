//! The native API under `/v1` (documented in `guest-agent/openapi.yaml`).

use crate::error::ApiError;
use crate::server::{
    blocking, ms_since, JsonBody, QueryArgs, Shared, JSON_LIMIT, UPLOAD_LIMIT, WINDOW_TIMEOUT,
};
use crate::windows::Windows;
use crate::{exec, files, settle};
use axum::body::Body;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine as _;
use protocol::api::*;
use protocol::Action;
use serde::Deserialize;
use std::time::{Duration, Instant};

pub fn router() -> Router<Shared> {
    Router::new()
        .route("/v1/health", get(health))
        .route("/v1/screenshot", get(screenshot))
        .route("/v1/a11y", get(a11y))
        .route("/v1/observe", post(observe))
        .route("/v1/actions", post(actions))
        .route("/v1/pyautogui", post(pyautogui))
        .route("/v1/exec", post(exec_route))
        .route("/v1/clock", post(clock))
        .route("/v1/launch", post(launch))
        .route("/v1/open", post(open))
        .route("/v1/windows", get(windows_list))
        .route("/v1/windows/activate", post(windows_activate))
        .route("/v1/windows/close", post(windows_close))
        .route(
            "/v1/files",
            get(file_get)
                .put(file_put)
                .layer(DefaultBodyLimit::max(UPLOAD_LIMIT)),
        )
        .route("/v1/files/list", get(file_list))
        .route("/v1/recording/start", post(recording_start))
        .route("/v1/recording/stop", post(recording_stop))
        .route("/v1/watch", post(watch_start).get(watch_report))
        .route("/v1/idle", post(idle))
        .layer(DefaultBodyLimit::max(JSON_LIMIT))
}

async fn health(State(s): State<Shared>) -> Json<Health> {
    let atspi = match s.a11y().await {
        Ok(a) => a
            .probe(Duration::from_secs(2))
            .await
            .map(|_| ())
            .map_err(|e| crate::error::chain(&e)),
        Err(e) => Err(e.message),
    };
    Json(Health {
        version: env!("CARGO_PKG_VERSION").to_string(),
        display: s.config.display.clone(),
        screen: Size {
            width: s.screen.0,
            height: s.screen.1,
        },
        atspi: atspi.is_ok(),
        atspi_error: atspi.err(),
        python_fallback: s.config.python_fallback,
        uptime_ms: s.started.elapsed().as_millis() as u64,
    })
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScreenshotQuery {
    #[serde(default)]
    format: ImageFormat,
    #[serde(default)]
    quality: Option<u8>,
}

fn header_value(v: impl ToString) -> HeaderValue {
    HeaderValue::from_str(&v.to_string()).unwrap_or(HeaderValue::from_static("?"))
}

async fn screenshot(
    State(s): State<Shared>,
    QueryArgs(q): QueryArgs<ScreenshotQuery>,
) -> Result<Response, ApiError> {
    check_quality(q.quality)?;
    let (bytes, frame, encode_ms) = s.screenshot(q.format, q.quality).await?;
    let mut h = HeaderMap::new();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(q.format.mime()),
    );
    h.insert("x-frame-width", header_value(frame.width));
    h.insert("x-frame-height", header_value(frame.height));
    h.insert(
        "x-capture-ms",
        header_value(format!("{:.3}", frame.capture_ms)),
    );
    h.insert("x-encode-ms", header_value(format!("{encode_ms:.3}")));
    h.insert(
        "x-cursor",
        header_value(format!("{},{}", frame.cursor.0, frame.cursor.1)),
    );
    Ok((h, bytes).into_response())
}

fn check_quality(q: Option<u8>) -> Result<(), ApiError> {
    match q {
        Some(q) if !(1..=100).contains(&q) => Err(ApiError::bad_request(
            "bad_query",
            format!("quality must be between 1 and 100, got {q}"),
        )),
        _ => Ok(()),
    }
}

async fn a11y(
    State(s): State<Shared>,
    QueryArgs(q): QueryArgs<A11yQuery>,
) -> Result<Json<A11yTree>, ApiError> {
    Ok(Json(s.a11y_tree(&q).await?))
}

async fn observe(
    State(s): State<Shared>,
    JsonBody(req): JsonBody<ObserveRequest>,
) -> Result<Json<ObserveResponse>, ApiError> {
    check_quality(req.quality)?;
    let t = Instant::now();
    let shot = async {
        if req.screenshot {
            s.screenshot(req.image_format, req.quality).await.map(Some)
        } else {
            Ok(None)
        }
    };
    let tree = async {
        match &req.a11y {
            Some(q) => {
                let t = Instant::now();
                s.a11y_tree(q).await.map(|tree| Some((tree, ms_since(t))))
            }
            None => Ok(None),
        }
    };
    let cursor_image = async {
        if req.cursor_image {
            s.cursor_image().await
        } else {
            Ok(None)
        }
    };
    let (shot, tree, cursor_image) = tokio::join!(shot, tree, cursor_image);
    let (shot, tree, cursor_image) = (shot?, tree?, cursor_image?);
    let cursor = match (&shot, &cursor_image) {
        (Some((_, frame, _)), _) => frame.cursor,
        (None, Some(c)) => (c.x, c.y),
        (None, None) => s.pointer().await?,
    };
    let mut timings = Timings::default();
    let screenshot = shot.map(|(bytes, frame, encode_ms)| {
        timings.capture_ms = Some(frame.capture_ms);
        timings.encode_ms = Some(encode_ms);
        base64::engine::general_purpose::STANDARD.encode(bytes)
    });
    let a11y = tree.map(|(tree, ms)| {
        timings.a11y_ms = Some(ms);
        tree
    });
    timings.total_ms = ms_since(t);
    Ok(Json(ObserveResponse {
        screen: Size {
            width: s.screen.0,
            height: s.screen.1,
        },
        cursor,
        image_format: screenshot.as_ref().map(|_| req.image_format),
        screenshot,
        a11y,
        cursor_image,
        timings,
    }))
}

/// Time a batch may take: its own waits plus a margin for typing.
fn batch_limit(actions: &[Action]) -> Duration {
    let mut secs = 30.0;
    for a in actions {
        secs += match a {
            Action::Wait { seconds } => seconds.unwrap_or(crate::input::DEFAULT_WAIT_S),
            Action::Typing { text, interval } => {
                // ~50 ms per remapped non-ASCII character, plus any interval.
                text.chars().count() as f64 * (0.06 + interval.unwrap_or(0.0))
            }
            Action::Press {
                presses, interval, ..
            } => f64::from(*presses) * (0.01 + interval.unwrap_or(0.0)),
            _ => 0.05,
        };
    }
    Duration::from_secs_f64(secs.min(3600.0))
}

/// Runs actions natively, then settles if asked. Shared with OSWorld's `/execute`.
pub async fn run_actions(
    s: &Shared,
    actions: Vec<Action>,
    settle_req: Option<Settle>,
) -> Result<ActionsResponse, ApiError> {
    let t = Instant::now();
    let injector = s.injector.clone();
    let limit = batch_limit(&actions);
    let parsed = actions.clone();
    let outcome = blocking("the action batch", limit, move || {
        injector.run(actions).map_err(|e| {
            let (status, code) = match &e {
                crate::input::InputError::OffScreen { .. } => {
                    (StatusCode::BAD_REQUEST, "off_screen")
                }
                crate::input::InputError::UnknownKey { .. } => {
                    (StatusCode::BAD_REQUEST, "unknown_key")
                }
                crate::input::InputError::Invalid { .. } => (StatusCode::BAD_REQUEST, "bad_action"),
                _ => (StatusCode::INTERNAL_SERVER_ERROR, "input_failed"),
            };
            ApiError::from_chain(status, code, &e)
        })
    })
    .await?;
    let settle = match settle_req {
        Some(st) if outcome.terminal.is_none() || outcome.executed > 0 => {
            let cap = s.capturer.clone();
            let probe = s.idle_probe().await;
            let limit = Duration::from_millis(st.max_ms.min(settle::MAX_SETTLE_MS))
                + Duration::from_secs(10);
            Some(
                blocking("settling", limit, move || {
                    settle::wait(&cap, &st, &probe).map_err(idle_error)
                })
                .await?,
            )
        }
        _ => None,
    };
    Ok(ActionsResponse {
        mode: "native".into(),
        actions: parsed,
        executed: outcome.executed,
        terminal: outcome.terminal,
        elapsed_ms: ms_since(t),
        settle,
        python: None,
        warnings: outcome.warnings,
    })
}

async fn actions(
    State(s): State<Shared>,
    JsonBody(req): JsonBody<ActionsRequest>,
) -> Result<Json<ActionsResponse>, ApiError> {
    Ok(Json(run_actions(&s, req.actions, req.settle).await?))
}

/// Prefix the fallback gives code, as OSWorld's controller does.
pub const PYAUTOGUI_PRELUDE: &str = "import pyautogui; import time; pyautogui.FAILSAFE = False\n";

async fn pyautogui(
    State(s): State<Shared>,
    JsonBody(req): JsonBody<PyautoguiRequest>,
) -> Result<Json<ActionsResponse>, ApiError> {
    match protocol::pyautogui::parse(&req.code) {
        Ok(actions) => Ok(Json(run_actions(&s, actions, req.settle).await?)),
        Err(e) if e.is_outside_subset() && s.config.python_fallback => {
            tracing::info!("pyautogui code outside the native subset ({e}): running it with {}", s.config.python);
            let t = Instant::now();
            let out = run_python_code(&s, &format!("{PYAUTOGUI_PRELUDE}{}", req.code)).await?;
            Ok(Json(ActionsResponse {
                mode: "python".into(),
                actions: vec![],
                executed: 0,
                terminal: None,
                elapsed_ms: ms_since(t),
                settle: None,
                python: Some(out),
                warnings: vec![],
            }))
        }
        Err(e) if e.is_outside_subset() => Err(ApiError::bad_request(
            "unsupported_code",
            format!("{e}; this is outside the native pyautogui subset (start deskenv-agent with --python-fallback to run such code with python3)"),
        )),
        Err(e) => Err(ApiError::bad_request("bad_code", e.to_string())),
    }
}

/// Runs code with the configured interpreter (120 s limit).
pub async fn run_python_code(s: &Shared, code: &str) -> Result<ExecResponse, ApiError> {
    let req = ExecRequest {
        command: Command::Argv(vec![s.config.python.clone(), "-c".into(), code.to_string()]),
        timeout_ms: Some(120_000),
        cwd: None,
        env: Default::default(),
        stdin: None,
    };
    exec::run(&req).await.map_err(exec_error)
}

pub fn exec_error(e: exec::ExecError) -> ApiError {
    use exec::ExecError as E;
    let (status, code) = match &e {
        E::NotFound { .. } | E::OpenNotFound { .. } => (StatusCode::NOT_FOUND, "not_found"),
        E::EmptyCommand | E::Cwd { .. } => (StatusCode::BAD_REQUEST, "bad_request"),
        E::OpenTimeout { .. } => (StatusCode::GATEWAY_TIMEOUT, "timeout"),
        _ => (StatusCode::INTERNAL_SERVER_ERROR, "exec_failed"),
    };
    ApiError::from_chain(status, code, &e)
}

async fn clock(JsonBody(req): JsonBody<ClockRequest>) -> Result<Json<ClockResponse>, ApiError> {
    crate::clock::set(req.unix_ms)
        .map(Json)
        .map_err(|e| match e {
            crate::clock::ClockError::OutOfRange(_) => {
                ApiError::bad_request("bad_clock", e.to_string())
            }
            crate::clock::ClockError::Permission => {
                ApiError::new(StatusCode::FORBIDDEN, "clock_permission", e.to_string())
            }
            crate::clock::ClockError::Os(_) => ApiError::internal("clock_failed", e.to_string()),
        })
}

async fn exec_route(JsonBody(req): JsonBody<ExecRequest>) -> Result<Json<ExecResponse>, ApiError> {
    Ok(Json(exec::run(&req).await.map_err(exec_error)?))
}

async fn launch(JsonBody(req): JsonBody<LaunchRequest>) -> Result<Json<LaunchResponse>, ApiError> {
    let pid = exec::launch(&req).map_err(exec_error)?;
    Ok(Json(LaunchResponse { pid }))
}

async fn open(
    State(s): State<Shared>,
    JsonBody(req): JsonBody<OpenRequest>,
) -> Result<Json<OpenResponse>, ApiError> {
    Ok(Json(
        exec::open(&req, &s.config.display)
            .await
            .map_err(exec_error)?,
    ))
}

pub fn window_error(e: crate::windows::WindowError) -> ApiError {
    use crate::windows::WindowError as E;
    let (status, code) = match &e {
        E::NoSuchWindow { .. } | E::NotFound { .. } => (StatusCode::NOT_FOUND, "no_window"),
        E::EmptyMatch => (StatusCode::BAD_REQUEST, "bad_request"),
        _ => (StatusCode::INTERNAL_SERVER_ERROR, "x11_failed"),
    };
    ApiError::from_chain(status, code, &e)
}

/// Runs `f` with a window-manager connection, on the blocking pool.
pub async fn with_windows<T: Send + 'static>(
    s: &Shared,
    limit: Duration,
    f: impl FnOnce(&Windows) -> Result<T, crate::windows::WindowError> + Send + 'static,
) -> Result<T, ApiError> {
    let display = s.config.display.clone();
    blocking("the window manager query", limit, move || {
        let w = Windows::connect(&display).map_err(window_error)?;
        f(&w).map_err(window_error)
    })
    .await
}

async fn windows_list(State(s): State<Shared>) -> Result<Json<WindowsResponse>, ApiError> {
    let windows = with_windows(&s, WINDOW_TIMEOUT, |w| w.list()).await?;
    Ok(Json(WindowsResponse { windows }))
}

fn check_match(m: &WindowMatch) -> Result<Duration, ApiError> {
    if m.title.is_none() && m.class.is_none() {
        return Err(ApiError::bad_request(
            "bad_request",
            "give a window \"title\" or \"class\" to match",
        ));
    }
    let wait = m.timeout_ms.unwrap_or(0);
    if wait > 600_000 {
        return Err(ApiError::bad_request(
            "bad_request",
            "timeout_ms must be at most 600000",
        ));
    }
    Ok(Duration::from_millis(wait))
}

/// Finds the windows `m` names, waiting up to its timeout for one to appear.
pub async fn find_windows(s: &Shared, m: WindowMatch) -> Result<Vec<WindowInfo>, ApiError> {
    let wait = check_match(&m)?;
    let deadline = Instant::now() + wait;
    loop {
        let mm = m.clone();
        let found = with_windows(s, WINDOW_TIMEOUT, move |w| w.find(&mm)).await?;
        if !found.is_empty() {
            return Ok(found);
        }
        if Instant::now() >= deadline {
            return Err(ApiError::not_found(
                "no_window",
                format!(
                    "no window matches {}{}",
                    describe_match(&m),
                    if wait.is_zero() {
                        String::new()
                    } else {
                        format!(" within {} ms", wait.as_millis())
                    }
                ),
            ));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

pub fn describe_match(m: &WindowMatch) -> String {
    match (&m.title, &m.class) {
        (Some(t), _) if m.exact => format!("the exact title {t:?}"),
        (Some(t), _) => format!("a title containing {t:?}"),
        (None, Some(c)) => format!("the class {c:?}"),
        (None, None) => "nothing".into(),
    }
}

async fn windows_activate(
    State(s): State<Shared>,
    JsonBody(m): JsonBody<WindowMatch>,
) -> Result<Json<WindowInfo>, ApiError> {
    let found = find_windows(&s, m).await?;
    let first = found[0].clone();
    let id = first.id;
    with_windows(&s, WINDOW_TIMEOUT, move |w| w.activate(id)).await?;
    Ok(Json(WindowInfo {
        active: true,
        ..first
    }))
}

async fn windows_close(
    State(s): State<Shared>,
    JsonBody(m): JsonBody<WindowMatch>,
) -> Result<Json<WindowsResponse>, ApiError> {
    let found = find_windows(&s, m).await?;
    let ids: Vec<u32> = found.iter().map(|w| w.id).collect();
    with_windows(&s, WINDOW_TIMEOUT, move |w| {
        ids.iter().try_for_each(|id| w.close(*id))
    })
    .await?;
    Ok(Json(WindowsResponse { windows: found }))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PathQuery {
    path: String,
}

pub fn file_error(e: files::FileError) -> ApiError {
    use files::FileError as E;
    let (status, code) = match &e {
        E::NotFound { .. } => (StatusCode::NOT_FOUND, "not_found"),
        E::IsADirectory { .. } | E::NotADirectory { .. } => (StatusCode::BAD_REQUEST, "bad_path"),
        E::PermissionDenied { .. } => (StatusCode::FORBIDDEN, "permission_denied"),
        E::TooLarge { .. } => (StatusCode::PAYLOAD_TOO_LARGE, "too_large"),
        E::Body { .. } => (StatusCode::BAD_REQUEST, "bad_body"),
        _ => (StatusCode::INTERNAL_SERVER_ERROR, "io_failed"),
    };
    ApiError::from_chain(status, code, &e)
}

/// Streams a file with its length.
pub async fn stream_file(path: &str) -> Result<Response, ApiError> {
    let (file, len) = files::open_read(path).await.map_err(file_error)?;
    let body = Body::from_stream(tokio_util::io::ReaderStream::new(file));
    let mut h = HeaderMap::new();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    h.insert(header::CONTENT_LENGTH, header_value(len));
    Ok((h, body).into_response())
}

async fn file_get(QueryArgs(q): QueryArgs<PathQuery>) -> Result<Response, ApiError> {
    stream_file(&q.path).await
}

async fn file_put(
    QueryArgs(q): QueryArgs<PathQuery>,
    body: Body,
) -> Result<Json<FileWritten>, ApiError> {
    let stream = body.into_data_stream();
    Ok(Json(
        files::write_atomic(&q.path, stream, Some(UPLOAD_LIMIT as u64))
            .await
            .map_err(file_error)?,
    ))
}

async fn file_list(QueryArgs(q): QueryArgs<PathQuery>) -> Result<Json<FileList>, ApiError> {
    Ok(Json(files::list(&q.path).await.map_err(file_error)?))
}

pub fn recording_error(e: crate::recording::RecordingError) -> ApiError {
    use crate::recording::RecordingError as E;
    let (status, code) = match &e {
        E::AlreadyRecording { .. } | E::NotRecording => (StatusCode::CONFLICT, "recording_state"),
        E::BadFps { .. } | E::BadSize { .. } | E::NoFolder { .. } => {
            (StatusCode::BAD_REQUEST, "bad_request")
        }
        _ => (StatusCode::INTERNAL_SERVER_ERROR, "recording_failed"),
    };
    ApiError::from_chain(status, code, &e)
}

async fn recording_start(
    State(s): State<Shared>,
    body: axum::body::Bytes,
) -> Result<Json<RecordingStatus>, ApiError> {
    // The body is optional: an empty one means the defaults.
    let req: RecordingStart = if body.iter().all(u8::is_ascii_whitespace) {
        RecordingStart::default()
    } else {
        serde_json::from_slice(&body)
            .map_err(|e| ApiError::bad_request("bad_request", format!("recording options: {e}")))?
    };
    Ok(Json(
        s.recorder
            .start(&req, &s.config.display, s.screen)
            .await
            .map_err(recording_error)?,
    ))
}

async fn recording_stop(State(s): State<Shared>) -> Result<Json<RecordingStatus>, ApiError> {
    Ok(Json(s.recorder.stop().await.map_err(recording_error)?))
}

async fn watch_start(
    State(s): State<Shared>,
    JsonBody(req): JsonBody<WatchRequest>,
) -> Result<Json<WatchStarted>, ApiError> {
    s.watcher
        .start(&req)
        .map(Json)
        .map_err(|e| ApiError::from_chain(StatusCode::BAD_REQUEST, "watch_failed", &e))
}

async fn watch_report(State(s): State<Shared>) -> Json<WatchReport> {
    Json(s.watcher.report())
}

async fn idle(
    State(s): State<Shared>,
    JsonBody(req): JsonBody<IdleRequest>,
) -> Result<Json<IdleReport>, ApiError> {
    let params = crate::idle::params(&req).map_err(|m| ApiError::bad_request("bad_request", m))?;
    let probe = s.idle_probe().await;
    let cap = s.capturer.clone();
    // The wait keeps its own deadline; this one guards against a stuck
    // capture or /proc read.
    let limit = params.max + Duration::from_secs(10);
    let waited = blocking("waiting for idle", limit, move || {
        crate::idle::wait(&cap, &probe, &params).map_err(idle_error)
    })
    .await?;
    Ok(Json(waited.report))
}

pub fn idle_error(e: crate::idle::IdleError) -> ApiError {
    let code = match &e {
        crate::idle::IdleError::Proc(_) => "proc_failed",
        crate::idle::IdleError::Capture(_) => "capture_failed",
    };
    ApiError::from_chain(StatusCode::INTERNAL_SERVER_ERROR, code, &e)
}
