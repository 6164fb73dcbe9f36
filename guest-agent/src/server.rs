//! The HTTP server: shared state, the router, authentication, body limits,
//! and the helpers handlers use to reach X11, AT-SPI and child processes
//! with a timeout each.
//!
//! [`app`] builds the router from a state so tests can drive it without a
//! socket; [`serve`] binds, prints `listening on ADDR` and runs until the
//! shutdown future resolves.

use crate::a11y::{A11y, A11yOptions};
use crate::capture::{self, Capturer, Frame};
use crate::error::{chain, ApiError};
use crate::idle::{IdleScope, Probe};
use crate::input::Injector;
use crate::recording::Recorder;
use crate::routes;
use crate::watch::Watcher;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::Router;
use protocol::api::{A11yFormat, A11yQuery, A11yTree, ImageFormat};
use serde::de::DeserializeOwned;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Largest JSON body (actions, code, commands).
pub const JSON_LIMIT: usize = 4 * 1024 * 1024;
/// Largest uploaded file.
pub const UPLOAD_LIMIT: usize = 2 * 1024 * 1024 * 1024;
/// Time limit of one screenshot (capture and encode).
pub const CAPTURE_TIMEOUT: Duration = Duration::from_secs(10);
/// Time limit of connecting to the AT-SPI bus.
pub const A11Y_CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// Time limit of window-manager queries.
pub const WINDOW_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug, Clone)]
pub struct Config {
    pub listen: SocketAddr,
    pub display: String,
    /// With a token, `/v1` routes need `Authorization: Bearer <token>`.
    pub token: Option<String>,
    /// Run pyautogui code outside the native subset with python3.
    pub python_fallback: bool,
    /// The interpreter for `/run_python` and the fallback.
    pub python: String,
    /// enigo's XTest delay per event, in ms.
    pub input_delay_ms: u32,
    /// Which processes `/v1/idle` watches.
    pub idle_scope: IdleScope,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: SocketAddr::from(([0, 0, 0, 0], 5000)),
            display: std::env::var("DISPLAY").unwrap_or_else(|_| ":0".into()),
            token: None,
            python_fallback: false,
            python: "python3".into(),
            input_delay_ms: 1,
            idle_scope: IdleScope::Uid,
        }
    }
}

/// Everything the handlers share.
pub struct AppState {
    pub config: Config,
    pub screen: (u32, u32),
    pub capturer: Arc<Mutex<Capturer>>,
    pub injector: Injector,
    a11y: tokio::sync::Mutex<Option<A11y>>,
    pub recorder: Recorder,
    pub watcher: Watcher,
    pub started: Instant,
}

pub type Shared = Arc<AppState>;

#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("screen capture on display {display:?} is unavailable")]
    Capture {
        display: String,
        #[source]
        source: capture::CaptureError,
    },
    #[error("input injection on display {display:?} is unavailable")]
    Input {
        display: String,
        #[source]
        source: crate::input::InputError,
    },
    #[error("cannot listen on {addr}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("the HTTP server stopped")]
    Serve(#[source] std::io::Error),
}

impl AppState {
    /// Connects to the display (capture and input). AT-SPI is connected on
    /// first use, so an agent started before the session bus still serves.
    pub fn new(config: Config) -> Result<AppState, ServerError> {
        let capturer =
            Capturer::connect(&config.display).map_err(|source| ServerError::Capture {
                display: config.display.clone(),
                source,
            })?;
        let screen = capturer.size();
        let injector =
            Injector::start(&config.display, screen, config.input_delay_ms).map_err(|source| {
                ServerError::Input {
                    display: config.display.clone(),
                    source,
                }
            })?;
        Ok(AppState {
            config,
            screen,
            capturer: Arc::new(Mutex::new(capturer)),
            injector,
            a11y: tokio::sync::Mutex::new(None),
            recorder: Recorder::new(),
            watcher: Watcher::default(),
            started: Instant::now(),
        })
    }

    /// Captures and encodes one frame.
    pub async fn screenshot(
        &self,
        format: ImageFormat,
        quality: Option<u8>,
    ) -> Result<(Vec<u8>, Frame, f64), ApiError> {
        let cap = self.capturer.clone();
        blocking("screen capture", CAPTURE_TIMEOUT, move || {
            let frame = cap
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .capture()
                .map_err(|e| {
                    ApiError::from_chain(StatusCode::INTERNAL_SERVER_ERROR, "capture_failed", &e)
                })?;
            let (bytes, encode_ms) = capture::encode(&frame, format, quality).map_err(|e| {
                ApiError::from_chain(StatusCode::INTERNAL_SERVER_ERROR, "encode_failed", &e)
            })?;
            Ok((bytes, frame, encode_ms))
        })
        .await
    }

    /// The pointer position.
    pub async fn pointer(&self) -> Result<(i32, i32), ApiError> {
        let cap = self.capturer.clone();
        blocking("pointer query", CAPTURE_TIMEOUT, move || {
            cap.lock()
                .unwrap_or_else(|e| e.into_inner())
                .pointer()
                .map_err(|e| {
                    ApiError::from_chain(StatusCode::INTERNAL_SERVER_ERROR, "x11_failed", &e)
                })
        })
        .await
    }

    /// The cursor's image at the pointer (`None` without XFixes).
    pub async fn cursor_image(&self) -> Result<Option<protocol::api::CursorImage>, ApiError> {
        let cap = self.capturer.clone();
        blocking("cursor image", CAPTURE_TIMEOUT, move || {
            cap.lock()
                .unwrap_or_else(|e| e.into_inner())
                .cursor_image()
                .map_err(|e| {
                    ApiError::from_chain(StatusCode::INTERNAL_SERVER_ERROR, "x11_failed", &e)
                })
        })
        .await
    }

    /// The AT-SPI connection, made on first use and remade after a failure.
    pub async fn a11y(&self) -> Result<A11y, ApiError> {
        let mut slot = self.a11y.lock().await;
        if let Some(a) = slot.as_ref() {
            return Ok(a.clone());
        }
        let a = A11y::connect(A11Y_CONNECT_TIMEOUT).await.map_err(|e| {
            ApiError::from_chain(StatusCode::SERVICE_UNAVAILABLE, "atspi_unavailable", &e)
        })?;
        *slot = Some(a.clone());
        Ok(a)
    }

    /// What `/v1/idle` and an idle settle measure: the scope of the config,
    /// less the agent and its recorder.
    pub async fn idle_probe(&self) -> Probe {
        let mut exclude = vec![std::process::id()];
        exclude.extend(self.recorder.pid().await);
        Probe {
            scope: self.config.idle_scope.clone(),
            exclude,
        }
    }

    async fn forget_a11y(&self) {
        *self.a11y.lock().await = None;
    }

    /// Walks the accessibility tree and renders it as `query.format`.
    pub async fn a11y_tree(&self, query: &A11yQuery) -> Result<A11yTree, ApiError> {
        let defaults = A11yOptions::default();
        let timeout_ms = query
            .timeout_ms
            .unwrap_or(defaults.timeout.as_millis() as u64);
        if timeout_ms == 0 || timeout_ms > 120_000 {
            return Err(ApiError::bad_request(
                "bad_query",
                format!("timeout_ms must be between 1 and 120000, got {timeout_ms}"),
            ));
        }
        if query.max_nodes == Some(0) {
            return Err(ApiError::bad_request(
                "bad_query",
                "max_nodes must be at least 1",
            ));
        }
        let opts = A11yOptions {
            max_nodes: query.max_nodes.unwrap_or(defaults.max_nodes),
            timeout: Duration::from_millis(timeout_ms),
            app: query.app.clone(),
            cache: !query.fresh,
            ..defaults
        };
        let a11y = self.a11y().await?;
        // The walker keeps its own deadline; this one only guards against a
        // walker bug, so it is a little longer.
        let guard = opts.timeout + Duration::from_secs(5);
        let walk = match tokio::time::timeout(guard, a11y.walk(&opts)).await {
            Ok(Ok(w)) => w,
            Ok(Err(e)) => {
                self.forget_a11y().await;
                return Err(ApiError::from_chain(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "atspi_failed",
                    &e,
                ));
            }
            Err(_) => {
                self.forget_a11y().await;
                return Err(ApiError::timeout(
                    "the accessibility walk",
                    guard.as_millis() as u64,
                ));
            }
        };
        Ok(crate::a11y::render(&walk, query.format))
    }
}

/// Runs blocking work on the blocking pool with a time limit. On timeout the
/// request fails; the stuck thread is left to finish on its own.
pub async fn blocking<T, F>(what: &str, limit: Duration, f: F) -> Result<T, ApiError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, ApiError> + Send + 'static,
{
    match tokio::time::timeout(limit, tokio::task::spawn_blocking(f)).await {
        Ok(Ok(r)) => r,
        Ok(Err(join)) => Err(ApiError::internal(
            "internal",
            format!("{what} panicked: {join}"),
        )),
        Err(_) => Err(ApiError::timeout(what, limit.as_millis() as u64)),
    }
}

/// A JSON body whose rejection is an [`ApiError`] naming the field.
pub struct JsonBody<T>(pub T);

impl<S, T> FromRequest<S> for JsonBody<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match axum::Json::<T>::from_request(req, state).await {
            Ok(axum::Json(v)) => Ok(JsonBody(v)),
            Err(rej) => Err(json_rejection(rej)),
        }
    }
}

fn json_rejection(rej: JsonRejection) -> ApiError {
    let status = rej.status();
    let code = match rej {
        JsonRejection::MissingJsonContentType(_) => "bad_content_type",
        JsonRejection::JsonSyntaxError(_) => "bad_json",
        JsonRejection::JsonDataError(_) => "bad_request",
        _ if status == StatusCode::PAYLOAD_TOO_LARGE => "too_large",
        _ => "bad_request",
    };
    let status = if status == StatusCode::PAYLOAD_TOO_LARGE {
        status
    } else {
        StatusCode::BAD_REQUEST
    };
    ApiError::new(status, code, chain(&rej))
}

/// A query string whose rejection is an [`ApiError`].
pub struct QueryArgs<T>(pub T);

impl<S, T> FromRequestParts<S> for QueryArgs<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match axum::extract::Query::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Query(v)) => Ok(QueryArgs(v)),
            Err(rej) => Err(query_rejection(rej)),
        }
    }
}

fn query_rejection(rej: QueryRejection) -> ApiError {
    ApiError::bad_request("bad_query", chain(&rej))
}

async fn require_token(State(state): State<Shared>, req: Request, next: Next) -> Response {
    use axum::response::IntoResponse;
    if let Some(token) = &state.config.token {
        let given = req
            .headers()
            .get(axum::http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .unwrap_or("");
        if !protocol::api::token_matches(given, token) {
            return ApiError::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "this route needs the header Authorization: Bearer <token> with the token given to --token-file",
            )
            .into_response();
        }
    }
    next.run(req).await
}

async fn not_found(req: Request) -> ApiError {
    ApiError::not_found(
        "no_route",
        format!(
            "no route {} {}; see guest-agent/openapi.yaml for the routes",
            req.method(),
            req.uri().path()
        ),
    )
}

/// The whole router: `/v1` (with auth) and OSWorld's routes.
pub fn app(state: Shared) -> Router {
    let v1 = routes::v1::router()
        .route_layer(middleware::from_fn_with_state(state.clone(), require_token));
    Router::new()
        .merge(v1)
        .merge(routes::osworld::router())
        .fallback(not_found)
        .layer(tower_http::trace::TraceLayer::new_for_http())
        .with_state(state)
}

/// Binds `config.listen`, prints `listening on ADDR` on stdout (the port is
/// real even for port 0), and serves until `shutdown` resolves.
pub async fn serve(
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServerError> {
    let addr = state.config.listen;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| ServerError::Bind { addr, source })?;
    let local = listener
        .local_addr()
        .map_err(|source| ServerError::Bind { addr, source })?;
    println!("listening on {local}");
    use std::io::Write;
    let _ = std::io::stdout().flush();
    tracing::info!(
        display = %state.config.display,
        screen = ?state.screen,
        auth = state.config.token.is_some(),
        "deskenv-agent {} serving on {local}",
        env!("CARGO_PKG_VERSION")
    );
    let router = app(Arc::new(state));
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown)
        .await
        .map_err(ServerError::Serve)
}

/// Milliseconds since `t`.
pub fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

/// A format name for query strings.
pub fn parse_a11y_format(s: &str) -> Option<A11yFormat> {
    serde_json::from_value(serde_json::Value::String(s.to_string())).ok()
}
