//! One episode: setup steps, the step loop (observe → agent → act →
//! settle), postconfig, evaluation; with a trajectory written and flushed
//! one line per step, so a crash loses nothing that finished.
//!
//! OSWorld's rules: WAIT, DONE and FAIL end or pause as in OSWorld; the
//! `infeasible` metric scores 1 only when the agent's last action is FAIL,
//! and any other task scores 0 when the agent answers FAIL.

pub mod checkpoint;
pub mod faults;
pub mod generate;
pub mod getters;
pub mod runner;
pub mod setup;

use crate::guest_client::GuestError;
use crate::policy::{Decision, EpisodeContext, Observation, Policy, PolicyError, Reply};
use crate::provider::Machine;
use crate::task::LoadedTask;
use base64::Engine as _;
use protocol::api::{
    A11yFormat, A11yQuery, ActionsRequest, ImageFormat, ObserveRequest, PyautoguiRequest, Settle,
};
use protocol::task::Placeholders;
use serde::Serialize;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

/// Where screenshots and the settle after an action come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum, Default)]
#[serde(rename_all = "lowercase")]
pub enum Frames {
    /// The host's view of the machine's display where the provider has one
    /// (QEMU: a screendump, encoded on the host; the settle differences
    /// host frames), else the guest agent. The guest adds the cursor's
    /// image and the accessibility tree.
    #[default]
    Host,
    /// Always the guest agent (its capture and its settle).
    Guest,
}

/// How to wait after each action.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum SettleMode {
    /// Until the screen is quiet (the guest agent's settle), at most 3 s.
    Adaptive,
    /// A fixed pause in seconds (`fixed:2.0` reproduces OSWorld's timing).
    Fixed(f64),
}

impl std::str::FromStr for SettleMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s == "adaptive" {
            return Ok(SettleMode::Adaptive);
        }
        if let Some(x) = s.strip_prefix("fixed:") {
            let v: f64 = x
                .parse()
                .map_err(|_| format!("--settle {s}: expected fixed:SECONDS, e.g. fixed:2.0"))?;
            if (0.0..=60.0).contains(&v) {
                return Ok(SettleMode::Fixed(v));
            }
        }
        Err(format!(
            "--settle {s}: expected `adaptive` or `fixed:SECONDS` (0-60)"
        ))
    }
}

/// CPU use (percent of one core) under which a `WAIT` counts the desktop
/// idle. Higher than the evaluation's gate: under TCG a Chromium showing a
/// Jupyter notebook never goes under 5 % (about 20 % at rest, measured),
/// while one still consuming typed keys uses a whole core.
pub const WAIT_IDLE_CPU: f64 = 25.0;

/// Settings of one episode.
#[derive(Debug, Clone, Serialize)]
pub struct EpisodeSettings {
    pub observation: crate::policy::ObservationType,
    pub action_space: crate::policy::ActionSpace,
    pub max_steps: usize,
    /// Wall-clock limit of the step loop.
    pub time_limit: Duration,
    pub settle: SettleMode,
    /// Where screenshots and settles come from (`--frames`).
    pub frames: Frames,
    /// The longest wait for an idle guest before postconfig and the
    /// evaluation.
    pub idle_cap: Duration,
    /// Faults to inject (tests; `DESKENV_FAULTS`).
    #[serde(skip)]
    pub faults: faults::Faults,
    /// Which attempt at this episode this is (1 first; retries count up).
    #[serde(skip)]
    pub attempt: u32,
    /// The seed of the tasks' generated data (`generate` steps).
    pub seed: u64,
    /// Files put into the machine after the setup, before the agent's
    /// first step, by task id (`deskenv tasks check`: another seed's
    /// answer): (machine path, bytes).
    #[serde(skip)]
    pub plant: std::collections::BTreeMap<String, Vec<(String, Vec<u8>)>>,
    /// Where generators' outputs are kept and reused, keyed by generator,
    /// arguments and seed (`deskenv tasks check`: the oracle, the noop and
    /// the gaming attempts of one seed work on the same data). None: every
    /// episode runs its generators.
    #[serde(skip)]
    pub generate_cache: Option<std::path::PathBuf>,
    /// Record the agent's steps to `recording.mp4` in the episode folder
    /// at this many frames per second (the guest's ffmpeg; `--record`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record_fps: Option<u32>,
    /// Save the machine's state after these steps, while the episode runs
    /// on, so that smaller budgets are evaluated from it
    /// ([`checkpoint_dir`], [`evaluate_checkpoint`]; `--checkpoints`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checkpoints: Vec<usize>,
}

impl EpisodeSettings {
    /// The defaults of `deskenv run`, with these spaces and budget.
    pub fn new(
        observation: crate::policy::ObservationType,
        action_space: crate::policy::ActionSpace,
        max_steps: usize,
    ) -> EpisodeSettings {
        EpisodeSettings {
            observation,
            action_space,
            max_steps,
            time_limit: Duration::from_secs(600),
            settle: SettleMode::Adaptive,
            frames: Frames::Host,
            idle_cap: DEFAULT_IDLE_CAP,
            faults: faults::Faults::default(),
            attempt: 1,
            seed: DEFAULT_SEED,
            plant: Default::default(),
            generate_cache: None,
            record_fps: None,
            checkpoints: vec![],
        }
    }
}

/// The seed of `deskenv run` without `--seed`.
pub const DEFAULT_SEED: u64 = 1;

/// The default cap of the idle gate before the evaluation.
pub const DEFAULT_IDLE_CAP: Duration = Duration::from_secs(30);

pub use protocol::result::{
    Attempt, CheckpointSaved, EndReason, EpisodeResult, EpisodeTimings, FromCheckpoint,
    MetricResult, Status, StepTimings, TaskInfo, TrajectoryStep, SUCCESS_THRESHOLD,
};

/// Where an episode in `dir` keeps the checkpoint saved after step
/// `steps` (`--checkpoints`).
pub fn checkpoint_dir(dir: &Path, steps: usize) -> std::path::PathBuf {
    dir.join("checkpoints").join(format!("steps-{steps}"))
}

/// What a result records of `task`.
pub fn task_info(task: &LoadedTask) -> TaskInfo {
    TaskInfo {
        id: task.spec.id.clone(),
        instruction: task.spec.instruction.clone(),
        domain: task.domain.clone(),
        category: task.spec.category.clone(),
        difficulty: task.spec.difficulty.clone(),
        related_apps: task.spec.related_apps.clone(),
    }
}

/// The trajectory file, one JSON line per step, flushed at once.
struct Trajectory {
    file: std::fs::File,
    path: std::path::PathBuf,
}

/// A write of the episode's record that failed: the host's fault. The
/// I/O error is part of the text because the text is what the result
/// records (`cause`).
#[derive(Debug, thiserror::Error)]
#[error("host: {what} {}: {error}", path.display())]
struct HostWrite {
    what: &'static str,
    path: std::path::PathBuf,
    error: std::io::Error,
}

fn host_write(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> HostWrite {
    let path = path.to_path_buf();
    move |error| HostWrite { what, path, error }
}

impl Trajectory {
    fn create(dir: &Path) -> Result<Trajectory, HostWrite> {
        std::fs::create_dir_all(dir).map_err(host_write("creating", dir))?;
        let path = dir.join("traj.jsonl");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(host_write("opening", &path))?;
        Ok(Trajectory { file, path })
    }

    fn write(&mut self, step: &TrajectoryStep) -> Result<(), HostWrite> {
        let mut line = serde_json::to_string(step).unwrap_or_default();
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .and_then(|_| self.file.flush())
            .map_err(host_write("writing", &self.path))
    }
}

fn timestamp() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    format!("{}.{:06}", now.as_secs(), now.subsec_micros())
}

/// Writes a file of the episode's record; a failure is the host's fault.
fn write_file(path: &Path, bytes: &[u8]) -> Result<(), HostWrite> {
    std::fs::write(path, bytes).map_err(|e| {
        // No half-written screenshot stays behind.
        let _ = std::fs::remove_file(path);
        host_write("writing", path)(e)
    })
}

/// An observation and its record.
struct Observed {
    observation: Observation,
    stamp: String,
    shot_name: String,
    /// Why the a11y tree is partial (a stopped application, the deadline).
    a11y_truncated: Option<String>,
}

/// What the policy answered to one observation.
enum Decided {
    Reply(Reply),
    /// The call failed; the step is used up and the loop goes on.
    Again,
    /// The policy stopped or broke: the loop ends.
    End,
}

/// Milliseconds since `t`.
fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

/// One episode in flight.
struct Episode<'a> {
    machine: &'a dyn Machine,
    task: &'a LoadedTask,
    s: &'a EpisodeSettings,
    dir: &'a Path,
    r: EpisodeResult,
    t0: Instant,
    /// The file accesses of the agent's steps, kept after the idle gate
    /// for `file_access_log` getters.
    access_log: Option<protocol::api::WatchReport>,
}

impl Episode<'_> {
    /// Ends the episode without a score: the environment failed. The
    /// machine is checked from the outside in, and its own account of what
    /// is wrong is the cause when it has one.
    async fn env_fault(&mut self, what: String) {
        let cause = match self.machine.diagnose().await {
            Some(why) => format!("{what}: {why}"),
            None => what,
        };
        self.r.fault(Status::EnvError, cause);
    }

    /// Whether a failed guest call is the environment's fault: the agent
    /// did not answer, or the machine is unwell.
    async fn guest_failed(&mut self, what: String, e: &GuestError) -> bool {
        if let Some(why) = self.machine.diagnose().await {
            self.r
                .fault(Status::EnvError, format!("{what}: {e}: {why}"));
            return true;
        }
        if matches!(e, GuestError::Unreachable { .. }) {
            self.r.fault(
                Status::EnvError,
                format!("{what}: {e} (the guest agent answers again now)"),
            );
            return true;
        }
        false
    }

    fn finish(mut self) -> EpisodeResult {
        self.r.timings.total_s = self.t0.elapsed().as_secs_f64() + self.r.timings.reset_s;
        self.r
    }

    async fn inject(&mut self, point: faults::Point) {
        let done = self
            .s
            .faults
            .inject(point, &self.task.spec.id, self.s.attempt, self.machine)
            .await;
        self.r.errors.extend(done);
    }

    /// The task's `config` steps, then a quiet screen. `false`: the
    /// episode ends here (unscored).
    async fn setup(&mut self, ctx: &setup::StepContext<'_>) -> bool {
        let t = Instant::now();
        self.inject(faults::Point::Setup).await;
        let ok = match setup::run_steps(&self.task.spec.config, "config", ctx).await {
            Ok(_) => true,
            Err(e) => {
                let what = format!("setup failed: {e}");
                match self.machine.diagnose().await {
                    Some(why) => self.r.fault(Status::EnvError, format!("{what}: {why}")),
                    None if e.guest_unreachable => self.r.fault(
                        Status::EnvError,
                        format!("{what} (the guest agent answers again now)"),
                    ),
                    None => self.r.fault(Status::SetupError, what),
                }
                false
            }
        };
        // Applications started by the setup draw for a while (LibreOffice
        // under TCG: seconds): wait until the screen has been quiet for
        // 2 s (at most 60 s) instead of OSWorld's fixed sleeps.
        if ok && !self.task.spec.config.is_empty() {
            let quiet = Settle {
                quiet_ms: 2000,
                max_ms: 60_000,
                threshold_px: 2000,
                // And no desktop process busy: LibreOffice still loading
                // draws nothing for a while under TCG.
                idle: true,
            };
            let req = ActionsRequest {
                actions: vec![],
                settle: Some(quiet),
            };
            if let Err(e) = ctx.guest.actions(&req).await {
                if self.guest_failed("settling after setup".into(), &e).await {
                    self.r.timings.setup_s = t.elapsed().as_secs_f64();
                    return false;
                }
                self.r.errors.push(format!("settling after setup: {e}"));
            }
        }
        self.r.timings.setup_s = t.elapsed().as_secs_f64();
        ok
    }

    /// One observation, its files written. `None`: the episode ends.
    async fn observe(&mut self, step: usize) -> Option<Observed> {
        let client = self.machine.guest();
        let wants_shot = self.s.observation.wants_screenshot();
        let host = wants_shot && self.host_frames();
        let req = ObserveRequest {
            screenshot: wants_shot && !host,
            image_format: ImageFormat::Png,
            quality: None,
            a11y: self.s.observation.wants_a11y().then(|| A11yQuery {
                format: A11yFormat::Linear,
                ..Default::default()
            }),
            cursor_image: host,
        };
        // With host frames, the guest's part (the tree, the cursor) and the
        // host's frame are taken at the same time.
        let observed = if host {
            self.machine
                .host_observe(&req)
                .await
                .map(|(o, png)| (o, Some(png)))
                .map_err(|e| e.to_string())
        } else {
            client
                .observe(&req)
                .await
                .map(|o| {
                    let png = o
                        .screenshot
                        .as_deref()
                        .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok());
                    (o, png)
                })
                .map_err(|e| e.to_string())
        };
        let (obs, png) = match observed {
            Ok(o) => o,
            Err(e) => {
                self.env_fault(format!("step {}: observe: {e}", step + 1))
                    .await;
                return None;
            }
        };
        let a11y_truncated = obs.a11y.as_ref().filter(|t| t.truncated).map(|t| {
            t.reason
                .clone()
                .unwrap_or_else(|| "truncated (no reason given)".into())
        });
        let a11y = obs.a11y.and_then(|t| t.text);
        let stamp = timestamp();
        let shot_name = format!("step_{}_{stamp}.png", step + 1);
        let mut written = Ok(());
        if let Some(p) = &png {
            written = write_file(&self.dir.join(&shot_name), p);
        }
        if let (Ok(()), Some(a)) = (&written, &a11y) {
            written = write_file(
                &self.dir.join(format!("step_{}_a11y.txt", step + 1)),
                a.as_bytes(),
            );
        }
        if let Err(e) = written {
            self.r.fault(Status::EnvError, e.to_string());
            return None;
        }
        let observation = Observation {
            step,
            screen: (obs.screen.width, obs.screen.height),
            screenshot_png: png,
            a11y_linear: a11y,
        };
        Some(Observed {
            observation,
            stamp,
            shot_name,
            a11y_truncated,
        })
    }

    /// Whether this episode's screenshots and settles come from the host.
    fn host_frames(&self) -> bool {
        self.s.frames == Frames::Host && self.machine.host_display()
    }

    /// Runs one decision; the trajectory line's `info` or the error.
    async fn act(&mut self, d: &Decision, step: usize) -> (Result<serde_json::Value, String>, f64) {
        let client = self.machine.guest();
        let settle = match self.s.settle {
            SettleMode::Adaptive => Some(Settle {
                quiet_ms: 300,
                max_ms: 3000,
                threshold_px: 2000,
                idle: false,
            }),
            SettleMode::Fixed(_) => None,
        };
        // On the host, the settle runs after the guest's answer, on host
        // frames; the guest only runs the actions.
        let host_settle = settle.filter(|_| self.host_frames());
        let guest_settle = settle.filter(|_| host_settle.is_none());
        let info = |a: protocol::api::ActionsResponse| serde_json::json!({"mode": a.mode, "executed": a.executed, "terminal": a.terminal, "settle": a.settle});
        let outcome = match d {
            Decision::Code(code) => client
                .pyautogui(&PyautoguiRequest {
                    code: code.clone(),
                    settle: guest_settle,
                })
                .await
                .map(info),
            Decision::Action(a) => client
                .actions(&ActionsRequest {
                    actions: vec![a.clone()],
                    settle: guest_settle,
                })
                .await
                .map(info),
            Decision::Wait => match self.s.settle {
                SettleMode::Fixed(x) => {
                    tokio::time::sleep(Duration::from_secs_f64(x)).await;
                    Ok(serde_json::json!({}))
                }
                // A second, then until the desktop is idle (its processes
                // under WAIT_IDLE_CPU over a second, a quiet screen), at
                // most the idle cap: an application under TCG can take many
                // seconds to consume the keys it was sent, and an agent
                // that waits means to wait for that, not for a fixed second.
                SettleMode::Adaptive => {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    let req = protocol::api::IdleRequest {
                        window_ms: 1000,
                        max_ms: self.s.idle_cap.as_millis() as u64,
                        cpu_percent: WAIT_IDLE_CPU,
                        screen: true,
                    };
                    client.idle(&req).await.map(|rep| {
                        serde_json::json!({"idle": rep.idle, "idle_waited_ms": rep.waited_ms})
                    })
                }
            },
            Decision::Done | Decision::Fail => Ok(serde_json::json!({})),
        };
        let mut outcome = outcome;
        if let (Some(st), Ok(info)) = (&host_settle, &mut outcome) {
            // As the guest does: no settle after a lone DONE or FAIL.
            let ran = info.get("terminal").is_none_or(|t| t.is_null())
                || info.get("executed").and_then(|x| x.as_u64()).unwrap_or(0) > 0;
            if ran && matches!(d, Decision::Code(_) | Decision::Action(_)) {
                match self.machine.host_settle(st).await {
                    Ok(rep) => {
                        info["settle"] = serde_json::json!(rep);
                        info["settle_on"] = "host".into();
                    }
                    Err(e) => {
                        let what =
                            format!("step {}: settling on the host's display: {e}", step + 1);
                        self.env_fault(what.clone()).await;
                        return (Err(what), 0.0);
                    }
                }
            }
        }
        let mut fixed_ms = 0.0;
        if let (SettleMode::Fixed(x), Decision::Code(_) | Decision::Action(_)) = (self.s.settle, d)
        {
            let t = Instant::now();
            tokio::time::sleep(Duration::from_secs_f64(x)).await;
            fixed_ms = t.elapsed().as_secs_f64() * 1000.0;
        }
        match outcome {
            Ok(v) => (Ok(v), fixed_ms),
            Err(e) => {
                // A refused action is the agent's; a guest that does not
                // answer is the environment's.
                if matches!(e, GuestError::Unreachable { .. }) {
                    self.guest_failed(format!("step {step}: act"), &e).await;
                }
                (Err(e.to_string()), fixed_ms)
            }
        }
    }

    /// The step loop: observe, decide, then act on and record each
    /// decision (one step each) until DONE/FAIL, the budget, the time
    /// limit or a fault. Returns the last decision.
    async fn step_loop(
        &mut self,
        policy: &mut dyn Policy,
        traj: &mut Trajectory,
    ) -> Option<Decision> {
        let s = self.s;
        let loop_start = Instant::now();
        let mut last: Option<Decision> = None;
        let mut step = 0usize;
        while step < s.max_steps && self.r.status == Status::Scored {
            if loop_start.elapsed() > s.time_limit {
                self.r.end = EndReason::Timeout;
                break;
            }
            if let Err(e) = self.machine.check() {
                self.env_fault(format!("before step {}: {e}", step + 1))
                    .await;
                break;
            }
            let mut timing = StepTimings::default();
            let t = Instant::now();
            let Some(seen) = self.observe(step).await else {
                break;
            };
            timing.observe_ms = ms(t);
            let reply = match self
                .decide(policy, &seen, &mut step, &mut timing, traj)
                .await
            {
                Decided::Reply(r) => r,
                Decided::Again => {
                    self.checkpoint_at(step).await;
                    continue;
                }
                Decided::End => break,
            };
            for (k, d) in reply.decisions.iter().enumerate() {
                if step >= s.max_steps || self.r.status != Status::Scored {
                    break;
                }
                step += 1;
                let mut timing = if k == 0 {
                    timing.clone()
                } else {
                    StepTimings::default()
                };
                let outcome = self.act_timed(d, step, &mut timing).await;
                self.record(traj, step, k, d, &reply, &seen, &timing, outcome);
                self.r.timings.steps.push(timing);
                last = Some(d.clone());
                match d {
                    Decision::Done => self.r.end = EndReason::Done,
                    Decision::Fail => self.r.end = EndReason::Fail,
                    _ => {
                        self.inject(faults::Point::Step(step)).await;
                        self.checkpoint_at(step).await;
                    }
                }
                if matches!(d, Decision::Done | Decision::Fail) {
                    self.r.steps_used = step;
                    return last;
                }
            }
        }
        self.r.steps_used = step;
        last
    }

    /// Asks the policy for its next decisions. A failed call uses up a
    /// step (recorded; the loop goes on); a stopped or broken policy ends
    /// the loop.
    async fn decide(
        &mut self,
        policy: &mut dyn Policy,
        seen: &Observed,
        step: &mut usize,
        timing: &mut StepTimings,
        traj: &mut Trajectory,
    ) -> Decided {
        let t = Instant::now();
        let reply = policy.next(&seen.observation).await;
        timing.agent_ms = ms(t);
        match reply {
            Ok(reply) => {
                if let Some(u) = reply.usage {
                    self.r.tokens.prompt_tokens += u.prompt_tokens;
                    self.r.tokens.completion_tokens += u.completion_tokens;
                }
                Decided::Reply(reply)
            }
            Err(PolicyError::Call { message, .. }) => {
                *step += 1;
                self.r.errors.push(format!("step {step}: agent: {message}"));
                let line = TrajectoryStep {
                    step_num: *step,
                    action_timestamp: seen.stamp.clone(),
                    screenshot_file: seen.shot_name.clone(),
                    timings: timing.clone(),
                    error: Some(message),
                    ..TrajectoryStep::default()
                };
                if let Err(e) = traj.write(&line) {
                    self.r.fault(Status::EnvError, e.to_string());
                }
                Decided::Again
            }
            Err(PolicyError::Stopped { .. }) => {
                self.r.end = EndReason::Stopped;
                Decided::End
            }
            Err(e) => {
                self.r.end = EndReason::AgentError;
                self.r.errors.push(e.to_string());
                Decided::End
            }
        }
    }

    /// [`Self::act`], with its time split into acting and settling.
    async fn act_timed(
        &mut self,
        d: &Decision,
        step: usize,
        timing: &mut StepTimings,
    ) -> Result<serde_json::Value, String> {
        let t = Instant::now();
        let (outcome, fixed_ms) = self.act(d, step).await;
        let act_total = ms(t) - fixed_ms;
        let settle_ms = outcome
            .as_ref()
            .ok()
            .and_then(|info| info.get("settle"))
            .and_then(|x| x.get("waited_ms"))
            .and_then(|x| x.as_f64())
            .unwrap_or(0.0);
        timing.settle_ms = settle_ms + fixed_ms;
        timing.act_ms = act_total - settle_ms;
        outcome
    }

    /// The trajectory line of one step: the `k`-th decision of `reply`.
    #[allow(clippy::too_many_arguments)]
    fn record(
        &mut self,
        traj: &mut Trajectory,
        step: usize,
        k: usize,
        d: &Decision,
        reply: &Reply,
        seen: &Observed,
        timing: &StepTimings,
        outcome: Result<serde_json::Value, String>,
    ) {
        let mut line = TrajectoryStep {
            step_num: step,
            action_timestamp: seen.stamp.clone(),
            action: d.describe(),
            response: if k == 0 {
                reply.raw.clone()
            } else {
                String::new()
            },
            reward: 0.0,
            done: matches!(d, Decision::Done | Decision::Fail),
            screenshot_file: seen.shot_name.clone(),
            timings: timing.clone(),
            tokens: if k == 0 { reply.usage } else { None },
            latency_ms: reply.latency_ms,
            // The tree the agent saw was partial, and why.
            a11y_truncated: if k == 0 {
                seen.a11y_truncated.clone()
            } else {
                None
            },
            info: None,
            error: None,
        };
        match outcome {
            Ok(info) => line.info = Some(info),
            Err(e) => {
                self.r.errors.push(format!("step {step}: {e}"));
                line.error = Some(e);
            }
        }
        if let Err(e) = traj.write(&line) {
            self.r.fault(Status::EnvError, e.to_string());
        }
    }

    /// Saves a checkpoint after `step` when the settings ask for one there
    /// and the episode runs on. A failed save is noted (that budget's
    /// result is then unscored); the episode goes on.
    async fn checkpoint_at(&mut self, step: usize) {
        if !self.s.checkpoints.contains(&step)
            || step >= self.s.max_steps
            || self.r.status != Status::Scored
        {
            return;
        }
        let t = Instant::now();
        let saved = self
            .machine
            .checkpoint(&checkpoint_dir(self.dir, step))
            .await;
        let seconds = t.elapsed().as_secs_f64();
        self.r.timings.checkpoint_s += seconds;
        self.r.checkpoints.push(CheckpointSaved {
            steps: step,
            seconds,
            error: saved.err().map(|e| crate::error_chain(&e)),
        });
    }

    /// Waits until the guest is idle (no CPU use by the desktop's
    /// processes, a quiet screen), at most the cap: a command the agent
    /// started must finish before its output is judged.
    async fn idle_gate(&mut self) {
        let t = Instant::now();
        let req = protocol::api::IdleRequest {
            window_ms: 500,
            max_ms: self.s.idle_cap.as_millis() as u64,
            cpu_percent: protocol::api::default_idle_cpu(),
            screen: true,
        };
        match self.machine.guest().idle(&req).await {
            Ok(rep) => {
                self.r.timings.idle = Some(rep.idle);
                if !rep.idle {
                    let busy: Vec<String> = rep
                        .busy
                        .iter()
                        .map(|b| format!("{} (pid {}, {:.0} %)", b.name, b.pid, b.cpu_percent))
                        .collect();
                    self.r.errors.push(format!(
                        "the guest was still busy after {:.1} s: {}; evaluated anyway",
                        rep.waited_ms / 1000.0,
                        busy.join(", ")
                    ));
                }
            }
            Err(e) => {
                self.guest_failed("waiting for an idle guest".into(), &e)
                    .await;
            }
        }
        self.r.timings.idle_wait_s = t.elapsed().as_secs_f64();
    }
}

/// Runs one episode on `machine` and writes its files into `dir`.
pub async fn run_episode(
    machine: &dyn Machine,
    task: &LoadedTask,
    policy: &mut dyn Policy,
    s: &EpisodeSettings,
    dir: &Path,
    reset_s: f64,
) -> EpisodeResult {
    let mut ep = Episode {
        machine,
        task,
        s,
        dir,
        r: EpisodeResult::new(task_info(task), s.max_steps, EndReason::Budget),
        t0: Instant::now(),
        access_log: None,
    };
    ep.r.timings.reset_s = reset_s;
    ep.r.seed = s.seed;
    let mut traj = match Trajectory::create(dir) {
        Ok(t) => t,
        Err(e) => {
            ep.r.fault(Status::EnvError, e.to_string());
            return ep.finish();
        }
    };
    let client = machine.guest();
    let placeholders = Placeholders::default();
    let cache = dir.join("cache");
    let generated = generate::Generated {
        root: dir.join("generated"),
        seed: s.seed,
        cache: s.generate_cache.clone(),
    };
    let ctx = setup::StepContext {
        guest: client,
        task,
        placeholders: &placeholders,
        cache: &cache,
        generated: &generated,
    };
    if !ep.setup(&ctx).await {
        return ep.finish();
    }
    if !ep.plant().await {
        return ep.finish();
    }
    if !ep.start_access_log().await {
        return ep.finish();
    }
    let ectx = EpisodeContext {
        task_id: task.spec.id.clone(),
        instruction: task.spec.instruction.clone(),
        observation: s.observation,
        action_space: s.action_space,
        max_steps: s.max_steps,
        solution: task.spec.solution.clone(),
    };
    if let Err(e) = policy.reset(&ectx) {
        ep.r.end = EndReason::AgentError;
        ep.r.errors.push(e.to_string());
        return ep.finish();
    }
    let recording = ep.start_recording().await;
    let last = ep.step_loop(policy, &mut traj).await;
    policy.finished(ep.r.end);
    if recording {
        ep.stop_recording().await;
    }
    if ep.r.status != Status::Scored || ep.r.end == EndReason::AgentError {
        return ep.finish();
    }

    ep.inject(faults::Point::Eval).await;
    ep.idle_gate().await;
    ep.keep_access_log().await;
    if ep.r.status != Status::Scored {
        return ep.finish();
    }
    ep.postconfig(&ctx).await;
    if ep.r.status != Status::Scored {
        return ep.finish();
    }
    ep.evaluate(last.as_ref(), &cache, &generated).await;
    ep.finish()
}

impl Episode<'_> {
    /// Starts recording file accesses under the folders the task's
    /// `file_access_log` getters name, after the setup (its own accesses
    /// are not the agent's). A folder that cannot be watched is a setup
    /// error on a healthy machine.
    async fn start_access_log(&mut self) -> bool {
        let paths = getters::watched_folders(self.task);
        if paths.is_empty() {
            return true;
        }
        let req = protocol::api::WatchRequest {
            paths: paths.clone(),
            recursive: true,
        };
        match self.machine.guest().watch_start(&req).await {
            Ok(_) => true,
            Err(e) => {
                let what = format!("starting the file access log on {paths:?}");
                if !self.guest_failed(what.clone(), &e).await {
                    self.r.fault(Status::SetupError, format!("{what}: {e}"));
                }
                false
            }
        }
    }

    /// Keeps the file accesses recorded so far (the agent's steps and what
    /// they started, up to the idle gate) for the getters, and writes them
    /// to `file_access.json` beside the trajectory.
    async fn keep_access_log(&mut self) {
        if self.r.status != Status::Scored || getters::watched_folders(self.task).is_empty() {
            return;
        }
        match self.machine.guest().watch_report().await {
            Ok(log) => {
                let json = serde_json::to_vec_pretty(&log).unwrap_or_default();
                if let Err(e) = write_file(&self.dir.join("file_access.json"), &json) {
                    self.r.fault(Status::EnvError, e.to_string());
                }
                if log.overflowed {
                    self.r
                        .errors
                        .push("the file access log overflowed: accesses may be missing".into());
                }
                self.access_log = Some(log);
            }
            Err(e) => {
                if !self
                    .guest_failed("reading the file access log".into(), &e)
                    .await
                {
                    self.r
                        .errors
                        .push(format!("reading the file access log: {e}"));
                }
            }
        }
    }
}

/// Where the guest writes an episode's recording: a name of its own, since
/// local machines may share /tmp.
fn guest_recording(machine: &dyn Machine) -> String {
    format!(
        "/tmp/deskenv-recording-{}-{}.mp4",
        std::process::id(),
        machine.name()
    )
}

impl Episode<'_> {
    /// Starts the screen recording when the settings ask for one; whether
    /// it runs. A recording that fails to start is noted in the result's
    /// errors and the episode goes on: it is evidence, not a score.
    async fn start_recording(&mut self) -> bool {
        let Some(fps) = self.s.record_fps else {
            return false;
        };
        let req = protocol::api::RecordingStart {
            path: Some(guest_recording(self.machine)),
            fps: Some(fps),
        };
        match self.machine.guest().recording_start(&req).await {
            Ok(_) => true,
            Err(e) => {
                self.r.errors.push(format!("recording: not started: {e}"));
                false
            }
        }
    }

    /// Stops the recording and fetches it into `recording.mp4`; its time
    /// is `timings.recording_s`. On a machine that is unwell it is left.
    async fn stop_recording(&mut self) {
        if self.r.status != Status::Scored {
            return;
        }
        let t = Instant::now();
        let client = self.machine.guest();
        let fetched = match client.recording_stop().await {
            Ok(st) => client.get_file(&st.path).await.map(|b| (st.path, b)),
            Err(e) => Err(e),
        };
        match fetched {
            Ok((path, Some(bytes))) => {
                if let Err(e) = write_file(&self.dir.join("recording.mp4"), &bytes) {
                    self.r.errors.push(format!("recording: {e}"));
                }
                // A local machine may share /tmp with the host.
                let rm = protocol::api::Command::Argv(vec!["rm".into(), "-f".into(), path]);
                let _ = client.exec(rm, Duration::from_secs(10)).await;
            }
            Ok((path, None)) => self
                .r
                .errors
                .push(format!("recording: the guest wrote no file at {path}")),
            Err(e) => self.r.errors.push(format!("recording: {e}")),
        }
        self.r.timings.recording_s = t.elapsed().as_secs_f64();
    }

    /// The evaluator's postconfig steps (save the file, close the app).
    /// A failure on a machine that is fine is the agent's (scored); on a
    /// broken or unreachable one it is an environment fault.
    async fn postconfig(&mut self, ctx: &setup::StepContext<'_>) {
        let t = Instant::now();
        let steps = &self.task.spec.evaluator.postconfig;
        if let Err(e) = setup::run_steps(steps, "evaluator.postconfig", ctx).await {
            let what = format!("postconfig failed: {e}");
            match self.machine.diagnose().await {
                Some(why) => self.r.fault(Status::EnvError, format!("{what}: {why}")),
                None if e.guest_unreachable => self.r.fault(Status::EnvError, what),
                None => self.r.errors.push(what),
            }
        }
        self.r.timings.postconfig_s = t.elapsed().as_secs_f64();
    }

    /// Collects the artifacts and scores them; then checks the machine is
    /// still alive, since artifacts from a machine that died on the way
    /// are no evidence of anything.
    /// Puts the settings' `plant` files into the machine; a failure is an
    /// environment fault.
    async fn plant(&mut self) -> bool {
        let files = self.s.plant.get(&self.task.spec.id).into_iter().flatten();
        for (path, bytes) in files {
            if let Err(e) = self.machine.guest().put_file(path, bytes.clone()).await {
                self.r
                    .fault(Status::EnvError, format!("planting {path}: {e}"));
                return false;
            }
        }
        true
    }

    async fn evaluate(
        &mut self,
        last: Option<&Decision>,
        cache: &Path,
        generated: &generate::Generated,
    ) {
        let t = Instant::now();
        let ctx = getters::GetterContext {
            agent: self.machine.guest(),
            task: self.task,
            cache,
            generated,
            access_log: self.access_log.as_ref(),
        };
        evaluate(self.task, last, &ctx, &mut self.r).await;
        self.r.timings.eval_s = t.elapsed().as_secs_f64();
        self.r.success = self.r.score >= SUCCESS_THRESHOLD;
        if let Some(why) = self.machine.diagnose().await {
            self.r
                .fault(Status::EnvError, format!("during the evaluation: {why}"));
        }
    }
}

async fn evaluate(
    task: &LoadedTask,
    last: Option<&Decision>,
    ctx: &getters::GetterContext<'_>,
    r: &mut EpisodeResult,
) {
    let ev = &task.spec.evaluator;
    let failed = matches!(last, Some(Decision::Fail));
    if ev.is_infeasible() {
        r.score = if failed { 1.0 } else { 0.0 };
        r.metrics.push(MetricResult::plain(
            "infeasible",
            r.score,
            format!(
                "last action {}",
                last.map(|d| d.describe()).unwrap_or_else(|| "none".into())
            ),
        ));
        return;
    }
    if failed {
        r.score = 0.0;
        r.metrics.push(MetricResult::plain(
            "(FAIL)",
            0.0,
            "the agent answered FAIL on a feasible task".into(),
        ));
        return;
    }
    let metrics = match ev.metrics() {
        Ok(m) => m,
        Err(e) => {
            r.errors.push(e.to_string());
            return;
        }
    };
    let mut scores = Vec::new();
    let mut checks = Vec::new();
    let empty = serde_json::Map::new();
    for m in metrics {
        let result = match m.result {
            Some(g) => getters::collect(g, ctx).await,
            None => evaluators::Artifact::Missing("no `result` getter".into()),
        };
        let expected = match m.expected {
            Some(g) => Some(getters::collect(g, ctx).await),
            None => None,
        };
        let options = m.options.unwrap_or(&empty);
        let check = match evaluators::SubCheck::from_options(options) {
            Ok(c) => c,
            Err(e) => {
                r.errors.push(format!("metric {}: {e}", m.func));
                evaluators::SubCheck::default()
            }
        };
        let (score, detail) =
            match evaluators::evaluate(m.func, &result, expected.as_ref(), options) {
                Ok(sc) => (sc.score, sc.detail),
                Err(e) => {
                    r.errors.push(format!("metric {}: {e}", m.func));
                    (0.0, e.to_string())
                }
            };
        let weighted = ev.conj == Some(protocol::task::Conj::Weighted);
        r.metrics.push(MetricResult {
            func: m.func.to_string(),
            score,
            detail,
            check: check.name.clone(),
            weight: weighted.then_some(check.weight),
            critical: weighted.then_some(check.critical),
        });
        scores.push(score);
        checks.push(check);
    }
    r.score = match ev.conj.unwrap_or_default() {
        protocol::task::Conj::And => evaluators::combine(&scores, evaluators::Conj::And),
        protocol::task::Conj::Or => evaluators::combine(&scores, evaluators::Conj::Or),
        protocol::task::Conj::Weighted => {
            evaluators::combine_weighted(&scores, &checks, SUCCESS_THRESHOLD)
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settle_modes_parse() {
        assert_eq!("adaptive".parse::<SettleMode>(), Ok(SettleMode::Adaptive));
        assert_eq!(
            "fixed:2.0".parse::<SettleMode>(),
            Ok(SettleMode::Fixed(2.0))
        );
        assert!("fixed:abc"
            .parse::<SettleMode>()
            .unwrap_err()
            .contains("fixed:SECONDS"));
        assert!("slow".parse::<SettleMode>().is_err());
    }
}
