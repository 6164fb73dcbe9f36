//! A live view of a VM's screen that a person can watch in a browser,
//! served on a loopback address only: a page that reloads `/screen.png`
//! (a QMP screendump) a few times a second. API: `controller/view-openapi.yaml`.

use crate::provider::qemu::display;
use crate::provider::qemu::qmp::Qmp;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::Mutex;

#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    #[error("live view address {0}: only loopback addresses are allowed (127.0.0.1, ::1)")]
    NotLoopback(SocketAddr),
    #[error("live view: binding {addr}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
}

struct ViewState {
    qmp: Mutex<Qmp>,
    dir: PathBuf,
    title: String,
}

const PAGE: &str = r#"<!doctype html>
<html><head><meta charset="utf-8"><title>deskenv: TITLE</title>
<style>body{margin:0;background:#222;color:#ddd;font:13px sans-serif}img{max-width:100%;display:block}</style></head>
<body><div>deskenv live view: TITLE <span id="t"></span></div><img id="s" src="/screen.png">
<script>
const img = document.getElementById('s'), t = document.getElementById('t');
function next() { const s = Date.now(); const n = new Image();
  n.onload = () => { img.src = n.src; t.textContent = (Date.now() - s) + ' ms'; setTimeout(next, 250); };
  n.onerror = () => { t.textContent = 'no frame'; setTimeout(next, 1000); };
  n.src = '/screen.png?' + s; }
setTimeout(next, 250);
</script></body></html>"#;

/// Serves the live view on `addr` (loopback only) until the future is
/// dropped. Returns the bound address through `bound` first.
pub async fn serve(
    addr: SocketAddr,
    qmp: Qmp,
    dir: PathBuf,
    title: String,
    bound: impl FnOnce(SocketAddr),
) -> Result<(), ViewError> {
    if !addr.ip().is_loopback() {
        return Err(ViewError::NotLoopback(addr));
    }
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| ViewError::Bind { addr, source })?;
    bound(listener.local_addr().unwrap_or(addr));
    let state = Arc::new(ViewState {
        qmp: Mutex::new(qmp),
        dir,
        title,
    });
    let app = Router::new()
        .route("/", get(page))
        .route("/screen.png", get(screen))
        .with_state(state);
    axum::serve(listener, app)
        .await
        .map_err(|source| ViewError::Bind { addr, source })
}

async fn page(State(s): State<Arc<ViewState>>) -> Html<String> {
    Html(PAGE.replace("TITLE", &s.title))
}

async fn screen(State(s): State<Arc<ViewState>>) -> Response {
    let mut q = s.qmp.lock().await;
    match display::screendump_png(&mut q, &s.dir.join("view.ppm"), None).await {
        Ok(d) => (
            [
                (header::CONTENT_TYPE, "image/png"),
                (header::CACHE_CONTROL, "no-store"),
            ],
            d.png,
        )
            .into_response(),
        Err(e) => (StatusCode::BAD_GATEWAY, crate::error_chain(&e)).into_response(),
    }
}

#[cfg(test)]
mod tests {
    /// Every route in the router is in the OpenAPI file, and back.
    #[test]
    fn openapi_lists_the_routes() {
        let spec = include_str!("../../../view-openapi.yaml");
        let src = include_str!("view.rs");
        let routes: Vec<&str> = src
            .match_indices(".route(\"")
            .map(|(i, _)| &src[i + 8..])
            .map(|r| &r[..r.find('"').unwrap()])
            .collect();
        assert_eq!(routes, ["/", "/screen.png"]);
        for r in routes {
            assert!(
                spec.contains(&format!("\n  {r}:\n")),
                "{r} is not in view-openapi.yaml"
            );
        }
    }
}
