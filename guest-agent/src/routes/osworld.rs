//! OSWorld's guest routes with OSWorld's request and response shapes, so its
//! `PythonController` and `SetupController` drive deskenv-agent unchanged.
//!
//! Differences, all on the side of honesty and speed:
//! - every route has a time limit (OSWorld's `/accessibility` and `/file`
//!   have none, `open_file` waits up to 1800 s; here 60 s);
//! - `/execute` with OSWorld's own pyautogui wrapper
//!   (`python -c "import pyautogui; …"`) runs the code natively when it is
//!   inside the parser's subset, and with python otherwise — same reply;
//! - activating or closing a window that does not exist answers 404 instead
//!   of a silent 200.

// Helpers here return the finished error `Response` as their `Err`: it is
// built at most once per request and returned straight away, so its size
// does not matter.
#![allow(clippy::result_large_err)]

use crate::error::ApiError;
use crate::routes::v1::{
    describe_match, exec_error, find_windows, run_actions, stream_file, with_windows,
};
use crate::server::{Shared, JSON_LIMIT, UPLOAD_LIMIT, WINDOW_TIMEOUT};
use crate::{exec, files};
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Multipart, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use protocol::api::{
    A11yFormat, A11yQuery, Command, ExecRequest, ImageFormat, LaunchRequest, OpenRequest,
    RecordingStart, WindowMatch,
};
use serde::Deserialize;
use serde_json::{json, Value};
use std::time::Duration;

pub fn router() -> Router<Shared> {
    Router::new()
        .route("/screenshot", get(screenshot))
        .route("/accessibility", get(accessibility))
        .route("/execute", post(execute))
        .route("/setup/execute", post(execute))
        .route("/setup/launch", post(launch))
        .route(
            "/setup/upload",
            post(upload).layer(DefaultBodyLimit::max(UPLOAD_LIMIT)),
        )
        .route("/file", post(file))
        .route("/setup/open_file", post(open_file))
        .route("/setup/activate_window", post(activate_window))
        .route("/setup/close_window", post(close_window))
        .route("/list_directory", post(list_directory))
        .route("/screen_size", post(screen_size))
        .route("/cursor_position", get(cursor_position))
        .route("/platform", get(platform))
        .route("/desktop_path", post(desktop_path))
        .route("/start_recording", post(start_recording))
        .route("/end_recording", post(end_recording))
        .route("/run_python", post(run_python))
        .route("/run_bash_script", post(run_bash_script))
        .layer(DefaultBodyLimit::max(JSON_LIMIT))
}

/// OSWorld's error shape for its JSON routes: `{status: "error", message}`.
fn osworld_error(status: StatusCode, message: impl Into<String>) -> Response {
    (
        status,
        Json(json!({"status": "error", "message": message.into()})),
    )
        .into_response()
}

/// Parses a JSON body leniently (OSWorld's Flask uses `request.json`), with a
/// clear error when it is not a JSON object.
fn json_object(body: &Bytes, route: &str) -> Result<serde_json::Map<String, Value>, Response> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(other) => Err(osworld_error(
            StatusCode::BAD_REQUEST,
            format!("{route}: the body must be a JSON object, got {other}"),
        )),
        Err(e) => Err(osworld_error(
            StatusCode::BAD_REQUEST,
            format!("{route}: the body is not JSON: {e}"),
        )),
    }
}

async fn screenshot(State(s): State<Shared>) -> Result<Response, ApiError> {
    let (bytes, _, _) = s.screenshot(ImageFormat::Png, None).await?;
    Ok(([(header::CONTENT_TYPE, "image/png")], bytes).into_response())
}

async fn accessibility(State(s): State<Shared>) -> Result<Json<Value>, ApiError> {
    let tree = s
        .a11y_tree(&A11yQuery {
            format: A11yFormat::OsworldXml,
            ..A11yQuery::default()
        })
        .await?;
    if tree.truncated {
        tracing::warn!(
            "/accessibility: tree truncated: {}",
            tree.reason.as_deref().unwrap_or("?")
        );
    }
    Ok(Json(json!({"AT": tree.text.unwrap_or_default()})))
}

/// `{command, shell}` as OSWorld reads it: a string without shell is
/// shlex-split, and `~/` at the start of an argument is expanded.
fn command_of(m: &serde_json::Map<String, Value>, route: &str) -> Result<Command, Response> {
    let shell = m.get("shell").and_then(Value::as_bool).unwrap_or(false);
    let bad = |what: &str| {
        osworld_error(
            StatusCode::BAD_REQUEST,
            format!("{route}: \"command\" {what}"),
        )
    };
    match m.get("command") {
        Some(Value::String(s)) if shell => Ok(Command::Shell(s.clone())),
        Some(Value::String(s)) => shlex::split(s)
            .map(Command::Argv)
            .ok_or_else(|| bad("has unbalanced quotes")),
        Some(Value::Array(items)) => {
            let argv: Option<Vec<String>> = items
                .iter()
                .map(|v| v.as_str().map(str::to_string))
                .collect();
            match argv {
                Some(a) if a.is_empty() => Err(bad("is an empty list")),
                Some(a) if shell => Ok(Command::Shell(a.join(" "))),
                Some(a) => Ok(Command::Argv(a)),
                None => Err(bad("must be a list of strings")),
            }
        }
        Some(_) => Err(bad("must be a string or a list of strings")),
        None => Err(bad("is missing")),
    }
}

/// OSWorld's action wrapper: `python -c "import pyautogui; import time;
/// pyautogui.FAILSAFE = False; <code>"`. Returns the code when `cmd` is one.
fn pyautogui_code(cmd: &Command) -> Option<&str> {
    let Command::Argv(argv) = cmd else {
        return None;
    };
    let [py, flag, code] = argv.as_slice() else {
        return None;
    };
    let is_python = matches!(py.rsplit('/').next(), Some("python" | "python3"));
    (is_python && flag == "-c" && code.contains("import pyautogui")).then_some(code.as_str())
}

async fn execute(State(s): State<Shared>, body: Bytes) -> Response {
    let m = match json_object(&body, "/execute") {
        Ok(m) => m,
        Err(r) => return r,
    };
    let command = match command_of(&m, "/execute") {
        Ok(c) => c,
        Err(r) => return r,
    };
    // Fast path: OSWorld's per-action python process, run natively instead.
    if let Some(code) = pyautogui_code(&command) {
        if let Ok(actions) = protocol::pyautogui::parse(code) {
            return match run_actions(&s, actions, None).await {
                Ok(_) => {
                    Json(json!({"status": "success", "output": "", "error": "", "returncode": 0}))
                        .into_response()
                }
                Err(e) => osworld_error(e.status, e.message),
            };
        }
    }
    let req = ExecRequest {
        command,
        timeout_ms: Some(120_000),
        cwd: None,
        env: Default::default(),
        stdin: None,
    };
    match exec::run(&req).await {
        Ok(out) if out.timed_out => osworld_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!(
                "Command timed out after 120 seconds; stdout so far: {}",
                out.stdout
            ),
        ),
        Ok(out) => Json(json!({
            "status": "success",
            "output": out.stdout,
            "error": out.stderr,
            "returncode": out.exit_code.unwrap_or_else(|| -out.signal.unwrap_or(1)),
        }))
        .into_response(),
        Err(e) => osworld_error(StatusCode::INTERNAL_SERVER_ERROR, exec_error(e).message),
    }
}

async fn launch(body: Bytes) -> Response {
    let m = match json_object(&body, "/setup/launch") {
        Ok(m) => m,
        Err(r) => return r,
    };
    let command = match command_of(&m, "/setup/launch") {
        Ok(c) => c,
        Err(r) => return r,
    };
    let shown = match &command {
        Command::Shell(s) => s.clone(),
        Command::Argv(a) => a.join(" "),
    };
    let req = LaunchRequest {
        command,
        cwd: None,
        env: Default::default(),
    };
    match exec::launch(&req) {
        Ok(_) => format!("{shown} launched successfully").into_response(),
        Err(e) => osworld_error(StatusCode::INTERNAL_SERVER_ERROR, exec_error(e).message),
    }
}

async fn upload(mut form: Multipart) -> Response {
    let mut path: Option<String> = None;
    let mut written = None;
    let missing = || {
        (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": "file_path and file_data are required"})),
        )
            .into_response()
    };
    loop {
        let field = match form.next_field().await {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(e) => {
                return (
                    StatusCode::BAD_REQUEST,
                    Json(json!({"error": format!("bad multipart body: {e}")})),
                )
                    .into_response()
            }
        };
        match field.name() {
            Some("file_path") => match field.text().await {
                Ok(t) => path = Some(t),
                Err(e) => {
                    return (
                        StatusCode::BAD_REQUEST,
                        Json(json!({"error": format!("file_path: {e}")})),
                    )
                        .into_response()
                }
            },
            Some("file_data") => {
                // OSWorld's client sends file_path first; the data is streamed to it.
                let Some(p) = path.clone() else {
                    return missing();
                };
                let stream = futures::StreamExt::map(field, |r| r.map_err(|e| e.to_string()));
                match files::write_atomic(&p, stream, Some(UPLOAD_LIMIT as u64)).await {
                    Ok(w) => written = Some(w),
                    Err(e) => {
                        return (
                            StatusCode::INTERNAL_SERVER_ERROR,
                            Json(json!({"error": format!("Failed to upload file: {}", crate::error::chain(&e))})),
                        )
                            .into_response()
                    }
                }
            }
            _ => {}
        }
    }
    match written {
        Some(w) => format!("File Uploaded: {} bytes", w.bytes).into_response(),
        None => missing(),
    }
}

#[derive(Debug, Deserialize)]
struct FileForm {
    file_path: Option<String>,
}

/// The form is read by hand: a request with no body (no content type) is a
/// missing field, as in Flask, not an unsupported media type.
async fn file(body: Bytes) -> Response {
    let form: FileForm =
        serde_urlencoded::from_bytes(&body).unwrap_or(FileForm { file_path: None });
    let Some(path) = form.file_path.filter(|p| !p.is_empty()) else {
        return (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": "file_path is required"})),
        )
            .into_response();
    };
    match stream_file(&path).await {
        Ok(r) => r,
        Err(e) if e.status == StatusCode::NOT_FOUND => (
            StatusCode::NOT_FOUND,
            Json(json!({"error": "File not found", "message": e.message})),
        )
            .into_response(),
        Err(e) => (e.status, Json(json!({"error": e.message}))).into_response(),
    }
}

async fn open_file(State(s): State<Shared>, body: Bytes) -> Response {
    let m = match json_object(&body, "/setup/open_file") {
        Ok(m) => m,
        Err(r) => return r,
    };
    let Some(path) = m
        .get("path")
        .and_then(Value::as_str)
        .filter(|p| !p.is_empty())
    else {
        return (StatusCode::BAD_REQUEST, "Path not supplied!").into_response();
    };
    let req = OpenRequest {
        path: path.to_string(),
        window: None,
        timeout_ms: Some(60_000),
    };
    match exec::open(&req, &s.config.display).await {
        Ok(_) => "File opened and window activated successfully".into_response(),
        Err(e) => {
            let e = exec_error(e);
            (e.status, format!("Failed to open {path}: {}", e.message)).into_response()
        }
    }
}

/// `{window_name, strict, by_class}` → a match: strict is the exact title
/// (wmctrl -F), by_class matches WM_CLASS (wmctrl -x).
fn window_match(body: &Bytes, route: &str) -> Result<WindowMatch, Response> {
    let m = json_object(body, route)?;
    let Some(name) = m.get("window_name").and_then(Value::as_str) else {
        return Err((StatusCode::BAD_REQUEST, "window_name required").into_response());
    };
    let strict = m.get("strict").and_then(Value::as_bool).unwrap_or(false);
    let by_class = m.get("by_class").and_then(Value::as_bool).unwrap_or(false);
    Ok(WindowMatch {
        title: (!by_class).then(|| name.to_string()),
        exact: strict,
        class: by_class.then(|| name.to_string()),
        timeout_ms: None,
    })
}

/// wmctrl -a / -c semantics: act on the first match; 404 when none matches.
async fn window_action(s: &Shared, body: &Bytes, route: &str, close: bool) -> Response {
    let m = match window_match(body, route) {
        Ok(m) => m,
        Err(r) => return r,
    };
    let what = describe_match(&m);
    let Ok(found) = find_windows(s, m).await else {
        return (
            StatusCode::NOT_FOUND,
            format!("Window not found: no window matches {what}"),
        )
            .into_response();
    };
    let id = found[0].id;
    let done = with_windows(s, WINDOW_TIMEOUT, move |w| {
        if close {
            w.close(id)
        } else {
            w.activate(id)
        }
    })
    .await;
    match done {
        Ok(()) if close => "Window closed successfully.".into_response(),
        Ok(()) => "Window activated successfully".into_response(),
        Err(e) => (e.status, e.message).into_response(),
    }
}

async fn activate_window(State(s): State<Shared>, body: Bytes) -> Response {
    window_action(&s, &body, "/setup/activate_window", false).await
}

async fn close_window(State(s): State<Shared>, body: Bytes) -> Response {
    window_action(&s, &body, "/setup/close_window", true).await
}

async fn list_directory(body: Bytes) -> Response {
    let m = match json_object(&body, "/list_directory") {
        Ok(m) => m,
        Err(r) => return r,
    };
    let Some(path) = m.get("path").and_then(Value::as_str) else {
        return (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": "Missing 'path' parameter"})),
        )
            .into_response();
    };
    match files::list_tree(path).await {
        Ok(tree) => Json(json!({"directory_tree": tree})).into_response(),
        Err(e @ (files::FileError::NotFound { .. } | files::FileError::NotADirectory { .. })) => (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": "The provided path is not a directory", "message": crate::error::chain(&e)})),
        )
            .into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, Json(json!({"error": crate::error::chain(&e)}))).into_response(),
    }
}

async fn screen_size(State(s): State<Shared>) -> Json<Value> {
    Json(json!({"width": s.screen.0, "height": s.screen.1}))
}

async fn cursor_position(State(s): State<Shared>) -> Result<Json<Value>, ApiError> {
    let (x, y) = s.pointer().await?;
    Ok(Json(json!([x, y])))
}

async fn platform() -> &'static str {
    "Linux"
}

async fn desktop_path() -> Response {
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let desktop = format!("{home}/Desktop");
    if std::path::Path::new(&desktop).is_dir() {
        Json(json!({"desktop_path": desktop})).into_response()
    } else {
        (
            StatusCode::NOT_FOUND,
            Json(json!({"error": "Unsupported operating system or desktop path not found"})),
        )
            .into_response()
    }
}

async fn start_recording(State(s): State<Shared>) -> Response {
    let req = RecordingStart {
        path: Some("/tmp/osworld_recording.mp4".into()),
        fps: Some(30),
    };
    match s.recorder.start(&req, &s.config.display, s.screen).await {
        Ok(_) => Json(json!({"status": "success", "message": "Started recording successfully."}))
            .into_response(),
        Err(crate::recording::RecordingError::AlreadyRecording { .. }) => {
            osworld_error(StatusCode::BAD_REQUEST, "Recording is already in progress.")
        }
        Err(e) => osworld_error(StatusCode::INTERNAL_SERVER_ERROR, crate::error::chain(&e)),
    }
}

async fn end_recording(State(s): State<Shared>) -> Response {
    match s.recorder.stop().await {
        Ok(status) => match stream_file(&status.path).await {
            Ok(mut r) => {
                r.headers_mut().insert(
                    header::CONTENT_DISPOSITION,
                    header::HeaderValue::from_static("attachment; filename=recording.mp4"),
                );
                r
            }
            Err(e) => osworld_error(e.status, e.message),
        },
        Err(crate::recording::RecordingError::NotRecording) => {
            osworld_error(StatusCode::BAD_REQUEST, "No recording in progress to stop.")
        }
        Err(e) => osworld_error(StatusCode::INTERNAL_SERVER_ERROR, crate::error::chain(&e)),
    }
}

async fn run_python(body: Bytes) -> Response {
    let m = match json_object(&body, "/run_python") {
        Ok(m) => m,
        Err(r) => return r,
    };
    let Some(code) = m
        .get("code")
        .and_then(Value::as_str)
        .filter(|c| !c.is_empty())
    else {
        return osworld_error(StatusCode::BAD_REQUEST, "Code not supplied!");
    };
    match exec::run_python(code, None).await {
        Ok(run) if run.timed_out => {
            (StatusCode::INTERNAL_SERVER_ERROR, Json(run.python_body())).into_response()
        }
        Ok(run) => Json(run.python_body()).into_response(),
        Err(e) => osworld_error(StatusCode::INTERNAL_SERVER_ERROR, exec_error(e).message),
    }
}

async fn run_bash_script(body: Bytes) -> Response {
    let m = match json_object(&body, "/run_bash_script") {
        Ok(m) => m,
        Err(r) => return r,
    };
    let fail = |status: StatusCode, output: String| {
        (
            status,
            Json(json!({"status": "error", "output": output, "error": "", "returncode": -1})),
        )
            .into_response()
    };
    let Some(script) = m
        .get("script")
        .and_then(Value::as_str)
        .filter(|c| !c.is_empty())
    else {
        return fail(StatusCode::BAD_REQUEST, "Script not supplied!".into());
    };
    let timeout_s = m
        .get("timeout")
        .and_then(Value::as_f64)
        .unwrap_or(100.0)
        .clamp(0.001, 3600.0);
    let working_dir = m.get("working_dir").and_then(Value::as_str);
    match exec::run_bash_script(
        script,
        Some(Duration::from_secs_f64(timeout_s)),
        working_dir,
    )
    .await
    {
        Ok(run) if run.timed_out => {
            (StatusCode::INTERNAL_SERVER_ERROR, Json(run.bash_body())).into_response()
        }
        Ok(run) => Json(run.bash_body()).into_response(),
        Err(e @ exec::ExecError::Cwd { .. }) => fail(
            StatusCode::BAD_REQUEST,
            format!("Working directory does not exist: {e}"),
        ),
        Err(e) => fail(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("Failed to execute script: {}", exec_error(e).message),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_osworlds_action_wrapper() {
        let cmd = Command::Argv(vec![
            "python".into(),
            "-c".into(),
            "import pyautogui; import time; pyautogui.FAILSAFE = False; pyautogui.click(1, 2)"
                .into(),
        ]);
        assert!(pyautogui_code(&cmd).is_some());
        let other = Command::Argv(vec!["python3".into(), "-c".into(), "print(1)".into()]);
        assert!(pyautogui_code(&other).is_none());
        assert!(pyautogui_code(&Command::Shell("python -c x".into())).is_none());
    }

    #[test]
    fn command_shapes_follow_osworld() {
        let m = |v: Value| v.as_object().unwrap().clone();
        let c = command_of(&m(json!({"command": "echo 'a b'"})), "/execute").unwrap();
        assert_eq!(c, Command::Argv(vec!["echo".into(), "a b".into()]));
        let c = command_of(
            &m(json!({"command": "echo $HOME", "shell": true})),
            "/execute",
        )
        .unwrap();
        assert_eq!(c, Command::Shell("echo $HOME".into()));
        assert!(command_of(&m(json!({"command": 5})), "/execute").is_err());
        assert!(command_of(&m(json!({})), "/execute").is_err());
    }
}
