//! A client for the guest agent's `/v1` API, as the controller uses it:
//! every call has a timeout, and errors name the call and what the agent
//! said.

use protocol::api::{
    A11yTree, ActionsRequest, ActionsResponse, ClockRequest, ClockResponse, Command, ErrorBody,
    ExecRequest, ExecResponse, Health, IdleReport, IdleRequest, LaunchRequest, LaunchResponse,
    ObserveRequest, ObserveResponse, OpenRequest, OpenResponse, PyautoguiRequest, WindowInfo,
    WindowsResponse,
};
use serde::de::DeserializeOwned;
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum GuestError {
    /// `detail` is the transport error's whole chain (connection refused,
    /// timed out, …); `cause` is kept for its kind, not printed again.
    #[error("guest agent {url}: {call}: no answer ({detail})")]
    Unreachable {
        url: String,
        call: String,
        detail: String,
        cause: reqwest::Error,
    },
    #[error("guest agent {url}: {call}: HTTP {status} {code}: {message}")]
    Status {
        url: String,
        call: String,
        status: u16,
        code: String,
        message: String,
    },
    #[error("guest agent {url}: {call}: unexpected reply: {message}")]
    Reply {
        url: String,
        call: String,
        message: String,
    },
}

/// The guest agent of one VM.
#[derive(Debug, Clone)]
pub struct GuestClient {
    base: String,
    http: reqwest::Client,
}

impl GuestClient {
    /// `base` like `http://127.0.0.1:34567`.
    pub fn new(base: &str) -> GuestClient {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(2))
            // Connections must not outlive a snapshot or a restore.
            .pool_max_idle_per_host(0)
            .build()
            .expect("reqwest client");
        GuestClient {
            base: base.trim_end_matches('/').to_string(),
            http,
        }
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    async fn send<T: DeserializeOwned>(
        &self,
        call: &str,
        req: reqwest::RequestBuilder,
        timeout: Duration,
    ) -> Result<T, GuestError> {
        let bytes = self.send_bytes(call, req, timeout).await?;
        serde_json::from_slice(&bytes).map_err(|e| GuestError::Reply {
            url: self.base.clone(),
            call: call.to_string(),
            message: format!(
                "{e}: {}",
                String::from_utf8_lossy(&bytes[..bytes.len().min(300)])
            ),
        })
    }

    async fn send_bytes(
        &self,
        call: &str,
        req: reqwest::RequestBuilder,
        timeout: Duration,
    ) -> Result<Vec<u8>, GuestError> {
        let unreachable = |cause: reqwest::Error| GuestError::Unreachable {
            url: self.base.clone(),
            call: call.to_string(),
            detail: crate::error_chain(&cause),
            cause,
        };
        let resp = req.timeout(timeout).send().await.map_err(unreachable)?;
        let status = resp.status();
        let bytes = resp.bytes().await.map_err(unreachable)?;
        if !status.is_success() {
            let body: Option<ErrorBody> = serde_json::from_slice(&bytes).ok();
            let (code, message) = match body {
                Some(b) => (b.code, b.message),
                None => (
                    "".into(),
                    String::from_utf8_lossy(&bytes[..bytes.len().min(300)]).into_owned(),
                ),
            };
            return Err(GuestError::Status {
                url: self.base.clone(),
                call: call.to_string(),
                status: status.as_u16(),
                code,
                message,
            });
        }
        Ok(bytes.to_vec())
    }

    pub async fn health(&self, timeout: Duration) -> Result<Health, GuestError> {
        self.send(
            "GET /v1/health",
            self.http.get(format!("{}/v1/health", self.base)),
            timeout,
        )
        .await
    }

    /// Runs a command to completion in the guest's desktop session.
    pub async fn exec(
        &self,
        command: Command,
        timeout: Duration,
    ) -> Result<ExecResponse, GuestError> {
        let body = ExecRequest {
            command,
            timeout_ms: Some(timeout.as_millis() as u64),
            cwd: None,
            env: Default::default(),
            stdin: None,
        };
        let req = self.http.post(format!("{}/v1/exec", self.base)).json(&body);
        self.send("POST /v1/exec", req, timeout + Duration::from_secs(5))
            .await
    }

    /// Sets the guest's clock.
    pub async fn set_clock(&self, unix_ms: u64) -> Result<ClockResponse, GuestError> {
        let req = self
            .http
            .post(format!("{}/v1/clock", self.base))
            .json(&ClockRequest { unix_ms });
        self.send("POST /v1/clock", req, Duration::from_secs(10))
            .await
    }

    pub async fn launch(&self, command: Command) -> Result<LaunchResponse, GuestError> {
        let body = LaunchRequest {
            command,
            cwd: None,
            env: Default::default(),
        };
        let req = self
            .http
            .post(format!("{}/v1/launch", self.base))
            .json(&body);
        self.send("POST /v1/launch", req, Duration::from_secs(15))
            .await
    }

    /// Opens a file or program and waits for its window.
    pub async fn open(
        &self,
        path: &str,
        window: Option<&str>,
        timeout: Duration,
    ) -> Result<OpenResponse, GuestError> {
        let body = OpenRequest {
            path: path.to_string(),
            window: window.map(str::to_string),
            timeout_ms: Some(timeout.as_millis() as u64),
        };
        let req = self.http.post(format!("{}/v1/open", self.base)).json(&body);
        self.send("POST /v1/open", req, timeout + Duration::from_secs(5))
            .await
    }

    pub async fn windows(&self) -> Result<Vec<WindowInfo>, GuestError> {
        let r: WindowsResponse = self
            .send(
                "GET /v1/windows",
                self.http.get(format!("{}/v1/windows", self.base)),
                Duration::from_secs(15),
            )
            .await?;
        Ok(r.windows)
    }

    pub async fn put_file(&self, path: &str, bytes: Vec<u8>) -> Result<(), GuestError> {
        let req = self
            .http
            .put(format!("{}/v1/files", self.base))
            .query(&[("path", path)])
            .body(bytes);
        self.send_bytes("PUT /v1/files", req, Duration::from_secs(60))
            .await
            .map(|_| ())
    }

    /// The file's bytes, or `None` when it does not exist.
    pub async fn get_file(&self, path: &str) -> Result<Option<Vec<u8>>, GuestError> {
        let req = self
            .http
            .get(format!("{}/v1/files", self.base))
            .query(&[("path", path)]);
        match self
            .send_bytes("GET /v1/files", req, Duration::from_secs(60))
            .await
        {
            Ok(b) => Ok(Some(b)),
            Err(GuestError::Status { status: 404, .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// A PNG screenshot taken by the agent.
    pub async fn screenshot(&self) -> Result<Vec<u8>, GuestError> {
        self.send_bytes(
            "GET /v1/screenshot",
            self.http.get(format!("{}/v1/screenshot", self.base)),
            Duration::from_secs(15),
        )
        .await
    }

    /// The accessibility tree: `format` is `osworld-xml`, `json` or
    /// `linear` (OSWorld's table).
    pub async fn a11y(&self, format: &str) -> Result<A11yTree, GuestError> {
        let req = self
            .http
            .get(format!("{}/v1/a11y", self.base))
            .query(&[("format", format)]);
        self.send("GET /v1/a11y", req, Duration::from_secs(30))
            .await
    }

    /// Screenshot and/or a11y tree in one round trip.
    pub async fn observe(&self, req: &ObserveRequest) -> Result<ObserveResponse, GuestError> {
        let r = self
            .http
            .post(format!("{}/v1/observe", self.base))
            .json(req);
        self.send("POST /v1/observe", r, Duration::from_secs(60))
            .await
    }

    /// `computer_13` actions, with an optional settle.
    pub async fn actions(&self, req: &ActionsRequest) -> Result<ActionsResponse, GuestError> {
        let r = self
            .http
            .post(format!("{}/v1/actions", self.base))
            .json(req);
        self.send("POST /v1/actions", r, Duration::from_secs(120))
            .await
    }

    /// Starts recording file accesses under `req.paths` (replacing any
    /// earlier record).
    pub async fn watch_start(
        &self,
        req: &protocol::api::WatchRequest,
    ) -> Result<protocol::api::WatchStarted, GuestError> {
        let r = self.http.post(format!("{}/v1/watch", self.base)).json(req);
        self.send("POST /v1/watch", r, Duration::from_secs(30))
            .await
    }

    /// The file accesses recorded since [`Self::watch_start`].
    pub async fn watch_report(&self) -> Result<protocol::api::WatchReport, GuestError> {
        let r = self.http.get(format!("{}/v1/watch", self.base));
        self.send("GET /v1/watch", r, Duration::from_secs(30)).await
    }

    /// Starts the guest's screen recording (ffmpeg x11grab to an mp4).
    pub async fn recording_start(
        &self,
        req: &protocol::api::RecordingStart,
    ) -> Result<protocol::api::RecordingStatus, GuestError> {
        let r = self
            .http
            .post(format!("{}/v1/recording/start", self.base))
            .json(req);
        self.send("POST /v1/recording/start", r, Duration::from_secs(15))
            .await
    }

    /// Stops the recording and finalizes its mp4 (the agent waits up to
    /// 15 s for ffmpeg, then signals it).
    pub async fn recording_stop(&self) -> Result<protocol::api::RecordingStatus, GuestError> {
        let r = self.http.post(format!("{}/v1/recording/stop", self.base));
        self.send("POST /v1/recording/stop", r, Duration::from_secs(40))
            .await
    }

    /// Waits until the guest is idle (CPU, and the screen unless
    /// `req.screen` is false) or `req.max_ms` passes; `idle: false` then.
    pub async fn idle(&self, req: &IdleRequest) -> Result<IdleReport, GuestError> {
        let r = self.http.post(format!("{}/v1/idle", self.base)).json(req);
        let timeout = Duration::from_millis(req.max_ms) + Duration::from_secs(5);
        self.send("POST /v1/idle", r, timeout).await
    }

    /// pyautogui code, parsed into actions by the agent.
    pub async fn pyautogui(&self, req: &PyautoguiRequest) -> Result<ActionsResponse, GuestError> {
        let r = self
            .http
            .post(format!("{}/v1/pyautogui", self.base))
            .json(req);
        self.send("POST /v1/pyautogui", r, Duration::from_secs(120))
            .await
    }

    /// OSWorld's `/setup/execute` (its semantics: a string command with
    /// `shell: false` is split, `python -c "import pyautogui; …"` runs
    /// natively): returncode, stdout, stderr.
    pub async fn osworld_execute(
        &self,
        command: &serde_json::Value,
        shell: bool,
    ) -> Result<OsExec, GuestError> {
        let body = serde_json::json!({ "command": command, "shell": shell });
        let r = self
            .http
            .post(format!("{}/setup/execute", self.base))
            .json(&body);
        let v: serde_json::Value = self
            .send("POST /setup/execute", r, Duration::from_secs(130))
            .await?;
        Ok(OsExec {
            returncode: v.get("returncode").and_then(|x| x.as_i64()).unwrap_or(0),
            output: v
                .get("output")
                .and_then(|x| x.as_str())
                .unwrap_or("")
                .to_string(),
            error: v
                .get("error")
                .and_then(|x| x.as_str())
                .unwrap_or("")
                .to_string(),
        })
    }

    /// OSWorld's `/setup/activate_window` or `/setup/close_window`.
    pub async fn osworld_window(
        &self,
        close: bool,
        window_name: &str,
        strict: bool,
        by_class: bool,
    ) -> Result<(), GuestError> {
        let route = if close {
            "/setup/close_window"
        } else {
            "/setup/activate_window"
        };
        let body = serde_json::json!({ "window_name": window_name, "strict": strict, "by_class": by_class });
        let r = self.http.post(format!("{}{route}", self.base)).json(&body);
        self.send_bytes(&format!("POST {route}"), r, Duration::from_secs(30))
            .await
            .map(|_| ())
    }
}

/// What OSWorld's `/setup/execute` returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OsExec {
    pub returncode: i64,
    pub output: String,
    pub error: String,
}
