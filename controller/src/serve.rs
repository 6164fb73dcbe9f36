//! `deskenv serve`: a gym-like HTTP API, so that an agent written in any
//! language drives the same episode loop as `deskenv run` — same setup,
//! settle, trajectory files, postconfig, evaluation and result layout.
//! API: `controller/serve-openapi.yaml`; example client:
//! `examples/python/deskenv_client.py`.
//!
//! An *env* is a client's seat: its observation type, action space, step
//! budget and model name. `reset` with a task id takes a fresh machine from
//! the pool, runs the task's setup and answers the first observation;
//! `step` hands one action (or a raw model response) to the loop and
//! answers the next observation, or `done`; `evaluate` ends the loop if it
//! is still running and answers the scores; `DELETE` closes the env and
//! frees its machine.
//!
//! Inside, the loop runs [`crate::episode::run_episode`] on a task of its
//! own with a channel agent: its `next` sends the observation to the
//! waiting HTTP request and waits for the next `step` (at most the idle
//! timeout; then the episode ends as an agent error and the machine is
//! freed).

use crate::episode::runner::{episode_dir, write_result};
use crate::episode::{
    run_episode, EndReason, EpisodeResult, EpisodeSettings, SettleMode, TrajectoryStep,
};
use crate::policy::{
    ActionSpace, Decision, EpisodeContext, Observation, ObservationType, Policy, PolicyError, Reply,
};
use crate::pool::Pool;
use crate::task::LoadedTask;
use axum::body::Bytes;
use axum::extract::{Path as UrlPath, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine as _;
use futures::future::BoxFuture;
use futures::FutureExt;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, Mutex};
use tokio::task::JoinHandle;

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("unknown env `{0}` (create one with POST /v1/envs)")]
    UnknownEnv(String),
    #[error("unknown task `{id}`{hint}")]
    UnknownTask { id: String, hint: String },
    #[error("env {0} has no episode: POST /v1/envs/{0}/reset first")]
    NoEpisode(String),
    #[error(
        "the episode of task {task} has ended ({end}); POST evaluate for the scores, or reset"
    )]
    EpisodeOver { task: String, end: String },
    #[error("{0}")]
    BadRequest(String),
    #[error("action: {0}")]
    BadAction(String),
    #[error("at most {0} envs at a time (--parallel); close one with DELETE /v1/envs/ID")]
    EnvLimit(usize),
    #[error("setup of task {task} failed: {errors}")]
    SetupFailed { task: String, errors: String },
    #[error("{0}")]
    Environment(String),
    #[error("serve address {0}: not a loopback address; pass --allow-remote to serve other hosts (anyone who reaches it controls the desktops)")]
    NotLoopback(SocketAddr),
    #[error("--allow-remote needs --token-file: a server that other hosts reach must ask for a bearer token")]
    RemoteWithoutToken,
    #[error("this route needs the header `Authorization: Bearer <token>` with the token of --token-file")]
    Unauthorized,
    #[error("binding {addr}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
}

impl ServeError {
    fn status_code(&self) -> (StatusCode, &'static str) {
        match self {
            ServeError::UnknownEnv(_) => (StatusCode::NOT_FOUND, "unknown_env"),
            ServeError::UnknownTask { .. } => (StatusCode::NOT_FOUND, "unknown_task"),
            ServeError::NoEpisode(_) => (StatusCode::CONFLICT, "no_episode"),
            ServeError::EpisodeOver { .. } => (StatusCode::CONFLICT, "episode_over"),
            ServeError::BadRequest(_) => (StatusCode::BAD_REQUEST, "bad_request"),
            ServeError::BadAction(_) => (StatusCode::BAD_REQUEST, "bad_action"),
            ServeError::EnvLimit(_) => (StatusCode::SERVICE_UNAVAILABLE, "env_limit"),
            ServeError::SetupFailed { .. } => (StatusCode::UNPROCESSABLE_ENTITY, "setup_failed"),
            ServeError::Environment(_) => (StatusCode::SERVICE_UNAVAILABLE, "environment"),
            ServeError::Unauthorized => (StatusCode::UNAUTHORIZED, "unauthorized"),
            ServeError::NotLoopback(_)
            | ServeError::RemoteWithoutToken
            | ServeError::Bind { .. } => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
        }
    }
}

impl IntoResponse for ServeError {
    fn into_response(self) -> Response {
        let (status, code) = self.status_code();
        (
            status,
            Json(json!({"code": code, "message": self.to_string()})),
        )
            .into_response()
    }
}

/// Settings of the server.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// Where episodes are written (OSWorld's layout, as `deskenv run`).
    pub out: PathBuf,
    /// Wall-clock limit of each episode's step loop.
    pub time_limit: Duration,
    pub settle: SettleMode,
    /// An episode whose client sends no step for this long ends.
    pub idle_timeout: Duration,
    /// `qemu` or `local`.
    pub provider: crate::provider::Kind,
    /// What `serve.json` records about the environment.
    pub environment: Value,
    /// With a token, every route but `/v1/health` needs
    /// `Authorization: Bearer <token>`.
    pub token: Option<String>,
}

/// A task id and why it is not served.
pub type Excluded = BTreeMap<String, String>;

struct Server {
    pool: Arc<Pool>,
    cfg: ServeConfig,
    tasks: BTreeMap<String, LoadedTask>,
    excluded: Excluded,
    envs: std::sync::Mutex<BTreeMap<String, Arc<Env>>>,
    next_env: AtomicU64,
}

/// A client's seat.
struct Env {
    id: String,
    settings: EnvSettings,
    episode: Mutex<Option<Episode>>,
}

/// `POST /v1/envs`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct EnvSettings {
    #[serde(default)]
    observation: ObservationType,
    #[serde(default)]
    action_space: ActionSpace,
    #[serde(default = "default_max_steps")]
    max_steps: usize,
    /// Names the result folder (`<out>/<action_space>/<obs>/<model>/…`).
    #[serde(default = "default_model")]
    model: String,
}

fn default_max_steps() -> usize {
    15
}

fn default_model() -> String {
    "http".into()
}

enum Event {
    Observation(Observation),
    LoopEnded(EndReason),
}

enum ToLoop {
    Reply(Reply),
    Stop,
}

/// One running (or finished) episode of an env.
struct Episode {
    task_id: String,
    dir: PathBuf,
    events: mpsc::Receiver<Event>,
    to_loop: mpsc::Sender<ToLoop>,
    handle: Option<JoinHandle<EpisodeResult>>,
    result: Option<EpisodeResult>,
    /// The last observation sent, as JSON.
    observation: Option<Value>,
    ended: Option<EndReason>,
    /// traj.jsonl lines already returned.
    traj_seen: usize,
    instruction: String,
}

impl Drop for Episode {
    fn drop(&mut self) {
        // A running loop owns its machine's lease: aborting the task drops
        // the lease, which kills the machine.
        if let Some(h) = self.handle.take() {
            h.abort();
        }
    }
}

/// The agent the loop sees: observations go to the HTTP client, replies
/// come back from its `step` calls.
struct ChannelPolicy {
    events: mpsc::Sender<Event>,
    replies: mpsc::Receiver<ToLoop>,
    idle: Duration,
}

impl Policy for ChannelPolicy {
    fn name(&self) -> &str {
        "http"
    }

    fn reset(&mut self, _ctx: &EpisodeContext) -> Result<(), PolicyError> {
        Ok(())
    }

    fn next<'a>(&'a mut self, obs: &'a Observation) -> BoxFuture<'a, Result<Reply, PolicyError>> {
        async move {
            let stopped = |m: &str| PolicyError::Stopped {
                agent: "http".into(),
                message: m.into(),
            };
            if self
                .events
                .send(Event::Observation(obs.clone()))
                .await
                .is_err()
            {
                return Err(stopped("the client closed the env"));
            }
            match tokio::time::timeout(self.idle, self.replies.recv()).await {
                Ok(Some(ToLoop::Reply(r))) => Ok(r),
                Ok(Some(ToLoop::Stop)) => Err(stopped("the client asked for the evaluation")),
                Ok(None) => Err(stopped("the client closed the env")),
                Err(_) => Err(PolicyError::Fatal {
                    agent: "http".into(),
                    message: format!(
                        "no step from the client within {} s (--idle-timeout)",
                        self.idle.as_secs()
                    ),
                }),
            }
        }
        .boxed()
    }

    fn finished(&mut self, end: EndReason) {
        let _ = self.events.try_send(Event::LoopEnded(end));
    }
}

fn end_name(end: EndReason) -> String {
    serde_json::to_value(end)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

fn observation_json(o: &Observation, instruction: &str) -> Value {
    json!({
        "step": o.step,
        "screen": {"width": o.screen.0, "height": o.screen.1},
        "screenshot": o.screenshot_png.as_ref().map(|p| base64::engine::general_purpose::STANDARD.encode(p)),
        "accessibility_tree": o.a11y_linear,
        "instruction": instruction,
    })
}

fn parse_body<T: serde::de::DeserializeOwned>(body: &Bytes, what: &str) -> Result<T, ServeError> {
    let text: &[u8] = if body.iter().all(u8::is_ascii_whitespace) {
        b"{}"
    } else {
        body
    };
    let de = &mut serde_json::Deserializer::from_slice(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        if path == "." {
            ServeError::BadRequest(format!("{what}: {}", e.inner()))
        } else {
            ServeError::BadRequest(format!("{what}: field `{path}`: {}", e.inner()))
        }
    })
}

/// Serves until the future is dropped; `bound` gets the address first.
pub async fn serve(
    addr: SocketAddr,
    allow_remote: bool,
    pool: Arc<Pool>,
    tasks: Vec<LoadedTask>,
    excluded: Excluded,
    cfg: ServeConfig,
    bound: impl FnOnce(SocketAddr),
) -> Result<(), ServeError> {
    if !addr.ip().is_loopback() && !allow_remote {
        return Err(ServeError::NotLoopback(addr));
    }
    if allow_remote && cfg.token.is_none() {
        return Err(ServeError::RemoteWithoutToken);
    }
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| ServeError::Bind { addr, source })?;
    let local = listener.local_addr().unwrap_or(addr);
    std::fs::create_dir_all(&cfg.out)
        .and_then(|_| {
            std::fs::write(
                cfg.out.join("serve.json"),
                serde_json::to_string_pretty(&json!({
                    "deskenv_version": env!("CARGO_PKG_VERSION"),
                    "listen": local.to_string(),
                    "provider": cfg.provider,
                    "parallel": pool.parallel(),
                    "time_limit_s": cfg.time_limit.as_secs_f64(),
                    "idle_timeout_s": cfg.idle_timeout.as_secs_f64(),
                    "settle": cfg.settle,
                    "environment": cfg.environment,
                    "tasks": tasks.iter().map(|t| json!({
                        "id": t.spec.id, "domain": t.domain, "file": t.path, "sha256": t.sha256,
                    })).collect::<Vec<_>>(),
                    "excluded": excluded,
                }))
                .unwrap_or_default(),
            )
        })
        .map_err(|source| ServeError::Bind { addr, source })?;
    let state = Arc::new(Server {
        pool,
        cfg,
        tasks: tasks.into_iter().map(|t| (t.spec.id.clone(), t)).collect(),
        excluded,
        envs: Default::default(),
        next_env: AtomicU64::new(1),
    });
    bound(local);
    axum::serve(listener, router(state))
        .await
        .map_err(|source| ServeError::Bind { addr, source })
}

async fn require_token(
    State(state): State<Arc<Server>>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    if let Some(token) = &state.cfg.token {
        let given = req
            .headers()
            .get(axum::http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .unwrap_or("");
        let same = protocol::api::token_matches(given, token);
        if !same {
            return ServeError::Unauthorized.into_response();
        }
    }
    next.run(req).await
}

fn router(state: Arc<Server>) -> Router {
    let open = Router::new().route("/v1/health", get(health));
    Router::new()
        .route("/v1/tasks", get(list_tasks))
        .route("/v1/envs", post(create_env).get(list_envs))
        .route("/v1/envs/{id}", get(get_env).delete(close_env))
        .route("/v1/envs/{id}/reset", post(reset))
        .route("/v1/envs/{id}/observation", get(observation))
        .route("/v1/envs/{id}/step", post(step))
        .route("/v1/envs/{id}/evaluate", post(evaluate))
        .route_layer(axum::middleware::from_fn_with_state(
            state.clone(),
            require_token,
        ))
        .merge(open)
        .with_state(state)
}

impl Server {
    fn env(&self, id: &str) -> Result<Arc<Env>, ServeError> {
        self.envs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(id)
            .cloned()
            .ok_or_else(|| ServeError::UnknownEnv(id.into()))
    }
}

async fn health(State(s): State<Arc<Server>>) -> Json<Value> {
    let envs = s.envs.lock().unwrap_or_else(|e| e.into_inner()).len();
    Json(json!({
        "ok": true,
        "provider": s.cfg.provider,
        "isolated": s.cfg.provider != crate::provider::Kind::Local,
        "environment": s.cfg.environment,
        "tasks": s.tasks.len(),
        "envs": envs,
        "max_envs": s.pool.parallel(),
        "machines_in_use": s.pool.in_use(),
    }))
}

async fn list_tasks(State(s): State<Arc<Server>>) -> Json<Value> {
    Json(json!({
        "tasks": s.tasks.values().map(|t| json!({
            "id": t.spec.id, "domain": t.domain, "category": t.spec.category,
            "difficulty": t.spec.difficulty, "instruction": t.spec.instruction,
        })).collect::<Vec<_>>(),
        "excluded": s.excluded,
    }))
}

fn env_json(e: &Env, ep: Option<&Episode>) -> Value {
    json!({
        "env_id": e.id,
        "settings": e.settings,
        "task_id": ep.map(|p| p.task_id.clone()),
        "episode_dir": ep.map(|p| p.dir.clone()),
        "ended": ep.and_then(|p| p.ended.map(end_name)),
        "evaluated": ep.is_some_and(|p| p.result.is_some()),
    })
}

async fn create_env(State(s): State<Arc<Server>>, body: Bytes) -> Result<Response, ServeError> {
    let settings: EnvSettings = parse_body(&body, "POST /v1/envs")?;
    if settings.max_steps == 0 {
        return Err(ServeError::BadRequest(
            "POST /v1/envs: field `max_steps`: expected a positive step budget".into(),
        ));
    }
    if settings.model.trim().is_empty() {
        return Err(ServeError::BadRequest(
            "POST /v1/envs: field `model`: expected a non-empty name".into(),
        ));
    }
    let mut envs = s.envs.lock().unwrap_or_else(|e| e.into_inner());
    if envs.len() >= s.pool.parallel() {
        return Err(ServeError::EnvLimit(s.pool.parallel()));
    }
    let id = format!("env{}", s.next_env.fetch_add(1, Ordering::Relaxed));
    let env = Arc::new(Env {
        id: id.clone(),
        settings,
        episode: Mutex::new(None),
    });
    let v = env_json(&env, None);
    envs.insert(id, env);
    Ok((StatusCode::CREATED, Json(v)).into_response())
}

async fn list_envs(State(s): State<Arc<Server>>) -> Json<Value> {
    let envs: Vec<Arc<Env>> = s
        .envs
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .values()
        .cloned()
        .collect();
    let mut out = Vec::new();
    for e in envs {
        let ep = e.episode.lock().await;
        out.push(env_json(&e, ep.as_ref()));
    }
    Json(json!({ "envs": out }))
}

async fn get_env(
    State(s): State<Arc<Server>>,
    UrlPath(id): UrlPath<String>,
) -> Result<Json<Value>, ServeError> {
    let env = s.env(&id)?;
    let ep = env.episode.lock().await;
    Ok(Json(env_json(&env, ep.as_ref())))
}

async fn close_env(
    State(s): State<Arc<Server>>,
    UrlPath(id): UrlPath<String>,
) -> Result<StatusCode, ServeError> {
    let env = s
        .envs
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&id)
        .ok_or_else(|| ServeError::UnknownEnv(id.clone()))?;
    // Dropping the episode aborts its loop and kills its machine.
    env.episode.lock().await.take();
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ResetRequest {
    task_id: String,
    /// The seed of the task's generated data (default: deskenv's).
    #[serde(default)]
    seed: Option<u64>,
}

async fn reset(
    State(s): State<Arc<Server>>,
    UrlPath(id): UrlPath<String>,
    body: Bytes,
) -> Result<Json<Value>, ServeError> {
    let env = s.env(&id)?;
    let req: ResetRequest = parse_body(&body, "POST /v1/envs/ID/reset")?;
    let task = match s.tasks.get(&req.task_id) {
        Some(t) => t.clone(),
        None => {
            let hint = match s.excluded.get(&req.task_id) {
                Some(why) => format!(": not served: {why}"),
                None => {
                    let ids: Vec<&str> = s.tasks.keys().take(8).map(String::as_str).collect();
                    format!(
                        " (GET /v1/tasks lists them; some: {}{})",
                        ids.join(", "),
                        if s.tasks.len() > 8 { ", …" } else { "" }
                    )
                }
            };
            return Err(ServeError::UnknownTask {
                id: req.task_id,
                hint,
            });
        }
    };
    let mut slot = env.episode.lock().await;
    // The env's previous episode, finished or not, goes with its machine.
    slot.take();
    let settings = EpisodeSettings {
        time_limit: s.cfg.time_limit,
        settle: s.cfg.settle,
        seed: req.seed.unwrap_or(crate::episode::DEFAULT_SEED),
        ..EpisodeSettings::new(
            env.settings.observation,
            env.settings.action_space,
            env.settings.max_steps,
        )
    };
    let dir = episode_dir(&s.cfg.out, &settings, &env.settings.model, &task);
    if dir.exists() {
        std::fs::remove_dir_all(&dir)
            .map_err(|e| ServeError::Environment(format!("clearing {}: {e}", dir.display())))?;
    }
    std::fs::create_dir_all(&dir)
        .map_err(|e| ServeError::Environment(format!("creating {}: {e}", dir.display())))?;
    let (ev_tx, ev_rx) = mpsc::channel(4);
    let (to_loop, replies) = mpsc::channel(1);
    let mut agent = ChannelPolicy {
        events: ev_tx,
        replies,
        idle: s.cfg.idle_timeout,
    };
    let pool = s.pool.clone();
    let (task2, dir2) = (task.clone(), dir.clone());
    let handle = tokio::spawn(async move {
        let t = Instant::now();
        let result = match pool.acquire().await {
            Ok(lease) => {
                let reset_s = t.elapsed().as_secs_f64();
                let r = run_episode(
                    lease.machine(),
                    &task2,
                    &mut agent,
                    &settings,
                    &dir2,
                    reset_s,
                )
                .await;
                lease.release().await;
                r
            }
            Err(e) => EpisodeResult::env_error(
                crate::episode::task_info(&task2),
                settings.max_steps,
                format!("no machine: {}", crate::error_chain(&e)),
            ),
        };
        if let Err(e) = write_result(&dir2, &result) {
            tracing::warn!("writing the result into {}: {e}", dir2.display());
        }
        result
    });
    let mut ep = Episode {
        task_id: task.spec.id.clone(),
        dir,
        events: ev_rx,
        to_loop,
        handle: Some(handle),
        result: None,
        observation: None,
        ended: None,
        traj_seen: 0,
        instruction: task.spec.instruction.clone(),
    };
    let first = next_event(&mut ep).await;
    let out = match first {
        Some(obs) => Ok(Json(json!({
            "env_id": env.id,
            "task_id": ep.task_id,
            "instruction": ep.instruction,
            "max_steps": env.settings.max_steps,
            "episode_dir": ep.dir,
            "observation": obs,
        }))),
        None => {
            let r = ep.result.clone();
            let errors = r
                .as_ref()
                .map(|r| r.errors.join("; "))
                .unwrap_or_else(|| "the episode ended before its first step".into());
            match r.map(|r| r.end) {
                Some(EndReason::SetupError) => Err(ServeError::SetupFailed {
                    task: ep.task_id.clone(),
                    errors,
                }),
                _ => Err(ServeError::Environment(format!(
                    "task {}: the episode ended before its first step: {errors}",
                    ep.task_id
                ))),
            }
        }
    };
    *slot = Some(ep);
    out
}

/// Waits for the loop's next observation (returned as JSON) or its end
/// (`None`; `ended` and, once the task finished, `result` are set).
async fn next_event(ep: &mut Episode) -> Option<Value> {
    enum Got {
        Event(Option<Event>),
        Finished(Box<Result<EpisodeResult, tokio::task::JoinError>>),
    }
    if ep.ended.is_some() && ep.handle.is_none() {
        return None;
    }
    let got = {
        let handle = ep.handle.as_mut();
        tokio::select! {
            ev = ep.events.recv() => Got::Event(ev),
            r = async { match handle { Some(h) => h.await, None => futures::future::pending().await } } => Got::Finished(Box::new(r)),
        }
    };
    match got {
        Got::Event(Some(Event::Observation(o))) => {
            let v = observation_json(&o, &ep.instruction);
            ep.observation = Some(v.clone());
            Some(v)
        }
        Got::Event(Some(Event::LoopEnded(end))) => {
            ep.ended = Some(end);
            None
        }
        // The loop is gone: its result comes from the task.
        Got::Event(None) => {
            finish(ep).await;
            None
        }
        Got::Finished(r) => {
            ep.handle = None;
            settle_result(ep, *r);
            None
        }
    }
}

/// Takes events the loop sent while no request was waiting (a client that
/// gave up on a `step` answer): the observation endpoint then shows the
/// screen the next step acts on.
fn drain(ep: &mut Episode) {
    while let Ok(ev) = ep.events.try_recv() {
        match ev {
            Event::Observation(o) => ep.observation = Some(observation_json(&o, &ep.instruction)),
            Event::LoopEnded(end) => ep.ended = Some(end),
        }
    }
}

fn settle_result(ep: &mut Episode, r: Result<EpisodeResult, tokio::task::JoinError>) {
    match r {
        Ok(r) => {
            ep.ended.get_or_insert(r.end);
            ep.result = Some(r);
        }
        Err(e) => {
            ep.ended.get_or_insert(EndReason::EnvError);
            tracing::warn!("episode task of {}: {e}", ep.task_id);
        }
    }
}

/// Waits for the episode's task to finish (postconfig and evaluation).
async fn finish(ep: &mut Episode) {
    if let Some(h) = ep.handle.take() {
        let r = h.await;
        settle_result(ep, r);
    }
}

/// Trajectory lines written since the last call.
fn new_traj_lines(ep: &mut Episode) -> Vec<TrajectoryStep> {
    let text = std::fs::read_to_string(ep.dir.join("traj.jsonl")).unwrap_or_default();
    let lines: Vec<TrajectoryStep> = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let new = lines.get(ep.traj_seen..).unwrap_or(&[]).to_vec();
    ep.traj_seen = lines.len();
    new
}

/// The env's episode, with what the loop sent meanwhile taken in.
fn current<'a>(slot: &'a mut Option<Episode>, id: &str) -> Result<&'a mut Episode, ServeError> {
    let ep = slot
        .as_mut()
        .ok_or_else(|| ServeError::NoEpisode(id.into()))?;
    drain(ep);
    Ok(ep)
}

/// The env's episode, which must still be in its step loop.
fn running<'a>(slot: &'a mut Option<Episode>, id: &str) -> Result<&'a mut Episode, ServeError> {
    let ep = current(slot, id)?;
    match ep.ended {
        Some(end) => Err(ServeError::EpisodeOver {
            task: ep.task_id.clone(),
            end: end_name(end),
        }),
        None => Ok(ep),
    }
}

async fn observation(
    State(s): State<Arc<Server>>,
    UrlPath(id): UrlPath<String>,
) -> Result<Json<Value>, ServeError> {
    let env = s.env(&id)?;
    let mut slot = env.episode.lock().await;
    let ep = running(&mut slot, &id)?;
    ep.observation
        .clone()
        .map(Json)
        .ok_or(ServeError::NoEpisode(id))
}

/// `POST /v1/envs/ID/step`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StepRequest {
    /// pyautogui code, WAIT/DONE/FAIL, or a computer_13 action object (or
    /// a list of them).
    #[serde(default)]
    action: Option<Value>,
    /// A model's raw response, parsed the OSWorld way (fenced code blocks,
    /// WAIT/DONE/FAIL). Recorded in the trajectory either way.
    #[serde(default)]
    response: Option<String>,
}

fn decisions(req: &StepRequest, space: ActionSpace) -> Result<Vec<Decision>, ServeError> {
    match (&req.action, &req.response) {
        (None, None) => Err(ServeError::BadRequest(
            "POST /v1/envs/ID/step: expected `action` (code, WAIT, DONE, FAIL or an action object) or `response` (a model's raw text)".into(),
        )),
        (action, response) => {
            crate::policy::decisions_from(action.as_ref(), response.as_deref(), space)
                .map_err(ServeError::BadAction)
        }
    }
}

async fn step(
    State(s): State<Arc<Server>>,
    UrlPath(id): UrlPath<String>,
    body: Bytes,
) -> Result<Json<Value>, ServeError> {
    let env = s.env(&id)?;
    let req: StepRequest = parse_body(&body, "POST /v1/envs/ID/step")?;
    let mut slot = env.episode.lock().await;
    let ep = running(&mut slot, &id)?;
    let decisions = decisions(&req, env.settings.action_space)?;
    let raw = req.response.clone().unwrap_or_else(|| {
        decisions
            .iter()
            .map(Decision::describe)
            .collect::<Vec<_>>()
            .join("\n")
    });
    let reply = Reply {
        decisions,
        raw,
        usage: None,
        latency_ms: 0.0,
    };
    if ep.to_loop.send(ToLoop::Reply(reply)).await.is_err() {
        finish(ep).await;
        return Err(ServeError::EpisodeOver {
            task: ep.task_id.clone(),
            end: ep.ended.map(end_name).unwrap_or_default(),
        });
    }
    let obs = next_event(ep).await;
    let executed = new_traj_lines(ep);
    let steps_used = executed.iter().map(|l| l.step_num).max();
    Ok(Json(json!({
        "done": obs.is_none(),
        "end": ep.ended.map(end_name),
        "observation": obs,
        "steps_used": steps_used,
        "executed": executed.iter().map(|l| json!({
            "step": l.step_num, "action": (!l.action.is_empty()).then_some(&l.action),
            "error": l.error, "info": l.info,
        })).collect::<Vec<_>>(),
    })))
}

async fn evaluate(
    State(s): State<Arc<Server>>,
    UrlPath(id): UrlPath<String>,
) -> Result<Json<Value>, ServeError> {
    let env = s.env(&id)?;
    let mut slot = env.episode.lock().await;
    let ep = current(&mut slot, &id)?;
    if ep.result.is_none() {
        if ep.ended.is_none() {
            // The loop waits for a step: tell it to stop, then it evaluates.
            let _ = ep.to_loop.send(ToLoop::Stop).await;
        }
        finish(ep).await;
    }
    let r = ep.result.as_ref().ok_or_else(|| {
        ServeError::Environment(format!(
            "task {}: the episode ended without a result (see the server's log)",
            ep.task_id
        ))
    })?;
    let mut v = serde_json::to_value(r).unwrap_or_default();
    v["episode_dir"] = json!(ep.dir);
    Ok(Json(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every route in the router is in the OpenAPI file, and back.
    #[test]
    fn openapi_lists_the_routes() {
        let spec = include_str!("../serve-openapi.yaml");
        let src = include_str!("serve.rs");
        let routes: Vec<&str> = src
            .match_indices(".route(\"")
            .map(|(i, _)| &src[i + 8..])
            .map(|r| &r[..r.find('"').unwrap()])
            .filter(|r| r.starts_with('/'))
            .collect();
        assert_eq!(routes.len(), 8);
        for r in &routes {
            assert!(
                spec.contains(&format!("\n  {r}:\n")),
                "{r} is not in serve-openapi.yaml"
            );
        }
        let in_spec = spec
            .lines()
            .filter(|l| l.starts_with("  /") && l.ends_with(':'))
            .count();
        assert_eq!(
            in_spec,
            routes.len(),
            "serve-openapi.yaml lists other paths"
        );
    }

    fn req(action: Option<Value>, response: Option<&str>) -> StepRequest {
        StepRequest {
            action,
            response: response.map(str::to_string),
        }
    }

    #[test]
    fn actions_are_checked_before_they_cost_a_step() {
        let py = ActionSpace::Pyautogui;
        let c13 = ActionSpace::Computer13;
        assert_eq!(
            decisions(&req(Some(json!("DONE")), None), py).unwrap(),
            vec![Decision::Done]
        );
        assert!(matches!(
            decisions(&req(Some(json!("pyautogui.click(5, 6)")), None), py).unwrap()[0],
            Decision::Code(_)
        ));
        let e = decisions(&req(Some(json!("import os; os.system('x')")), None), py)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("action: pyautogui code:"), "{e}");
        let e = decisions(&req(Some(json!({"action_type": "CLICK"})), None), py)
            .unwrap_err()
            .to_string();
        assert!(e.contains("action space is pyautogui"), "{e}");
        assert!(matches!(
            decisions(
                &req(
                    Some(json!([{"action_type": "CLICK", "x": 1, "y": 2}, "DONE"])),
                    None
                ),
                c13
            )
            .unwrap()[..],
            [Decision::Action(_), Decision::Done]
        ));
        let e = decisions(&req(Some(json!({"action_type": "JUMP"})), None), c13)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("action: computer_13:"), "{e}");
        assert_eq!(
            decisions(
                &req(
                    None,
                    Some("I click.\n```python\npyautogui.click(1, 2)\n```")
                ),
                py
            )
            .unwrap()
            .len(),
            1
        );
        let e = decisions(&req(None, Some("```python\nos.remove('/')\n```")), py)
            .unwrap_err()
            .to_string();
        assert!(e.contains("pyautogui code"), "{e}");
        assert!(decisions(&req(None, None), py).is_err());
        assert!(decisions(&req(Some(json!(5)), None), py).is_err());
    }

    #[test]
    fn bodies_name_the_field() {
        let e = parse_body::<EnvSettings>(
            &Bytes::from_static(br#"{"max_steps": "x"}"#),
            "POST /v1/envs",
        )
        .err()
        .unwrap()
        .to_string();
        assert!(e.contains("field `max_steps`"), "{e}");
        let e = parse_body::<EnvSettings>(
            &Bytes::from_static(br#"{"observation": "video"}"#),
            "POST /v1/envs",
        )
        .err()
        .unwrap()
        .to_string();
        assert!(e.contains("observation"), "{e}");
        let s: EnvSettings = parse_body(&Bytes::from_static(b""), "x").unwrap();
        assert_eq!((s.max_steps, s.model.as_str()), (15, "http"));
    }
}
