//! One episode: setup steps, the step loop (observe → agent → act →
//! settle), postconfig, evaluation; with a trajectory written and flushed
//! one line per step, so a crash loses nothing that finished.
//!
//! OSWorld's rules: WAIT, DONE and FAIL end or pause as in OSWorld; the
//! `infeasible` metric scores 1 only when the agent's last action is FAIL,
//! and any other task scores 0 when the agent answers FAIL.

pub mod getters;
pub mod runner;
pub mod setup;

use crate::agent::{Agent, AgentError, Decision, EpisodeContext, Observation, Usage};
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

/// Settings of one episode.
#[derive(Debug, Clone, Serialize)]
pub struct EpisodeSettings {
    pub observation: crate::agent::ObservationType,
    pub action_space: crate::agent::ActionSpace,
    pub max_steps: usize,
    /// Wall-clock limit of the step loop.
    pub time_limit: Duration,
    pub settle: SettleMode,
}

/// Why the loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    Done,
    Fail,
    Budget,
    Timeout,
    /// The agent could not go on (fatal agent error).
    AgentError,
    /// A setup step failed: the episode did not start (not the agent's fault).
    SetupError,
    /// The VM died or stopped answering.
    EnvError,
    /// The driver of the agent asked for the evaluation before DONE or
    /// FAIL (`deskenv serve`).
    Stopped,
}

/// One metric's outcome.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct MetricResult {
    pub func: String,
    pub score: f64,
    pub detail: String,
}

/// Per-step timings (ms).
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
pub struct StepTimings {
    pub observe_ms: f64,
    pub agent_ms: f64,
    pub act_ms: f64,
    pub settle_ms: f64,
}

/// Where the time went (seconds unless named).
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
pub struct EpisodeTimings {
    pub reset_s: f64,
    pub setup_s: f64,
    pub steps: Vec<StepTimings>,
    pub postconfig_s: f64,
    pub eval_s: f64,
    pub total_s: f64,
}

/// `result.json`.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct EpisodeResult {
    pub task_id: String,
    pub domain: String,
    pub category: Option<String>,
    pub score: f64,
    /// score ≥ 0.95.
    pub success: bool,
    pub steps_used: usize,
    pub max_steps: usize,
    pub end: EndReason,
    pub metrics: Vec<MetricResult>,
    pub errors: Vec<String>,
    pub tokens: Usage,
    pub timings: EpisodeTimings,
}

pub const SUCCESS_THRESHOLD: f64 = 0.95;

impl EpisodeResult {
    /// A result with score 0 that ended for `end`; the loop fills it in.
    pub fn new(task: &LoadedTask, max_steps: usize, end: EndReason) -> EpisodeResult {
        EpisodeResult {
            task_id: task.spec.id.clone(),
            domain: task.domain.clone(),
            category: task.spec.category.clone(),
            score: 0.0,
            success: false,
            steps_used: 0,
            max_steps,
            end,
            metrics: vec![],
            errors: vec![],
            tokens: Usage::default(),
            timings: EpisodeTimings::default(),
        }
    }
}

/// The trajectory file, one JSON line per step, flushed at once.
struct Trajectory {
    file: std::fs::File,
}

impl Trajectory {
    fn create(dir: &Path) -> std::io::Result<Trajectory> {
        std::fs::create_dir_all(dir)?;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("traj.jsonl"))?;
        Ok(Trajectory { file })
    }

    fn write(&mut self, v: &serde_json::Value) {
        let mut line = v.to_string();
        line.push('\n');
        if self
            .file
            .write_all(line.as_bytes())
            .and_then(|_| self.file.flush())
            .is_err()
        {
            tracing::warn!("could not write the trajectory line");
        }
    }
}

fn timestamp() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    format!("{}.{:06}", now.as_secs(), now.subsec_micros())
}

/// Runs one episode on `machine` and writes its files into `dir`.
pub async fn run_episode(
    machine: &dyn Machine,
    task: &LoadedTask,
    agent: &mut dyn Agent,
    s: &EpisodeSettings,
    dir: &Path,
    reset_s: f64,
) -> EpisodeResult {
    let t0 = Instant::now();
    let mut r = EpisodeResult::new(task, s.max_steps, EndReason::Budget);
    r.timings.reset_s = reset_s;
    let mut traj = match Trajectory::create(dir) {
        Ok(t) => t,
        Err(e) => {
            r.end = EndReason::EnvError;
            r.errors.push(format!("creating {}: {e}", dir.display()));
            return r;
        }
    };
    let client = machine.agent();
    let placeholders = Placeholders::default();
    let cache = dir.join("cache");
    let ctx = setup::StepContext {
        agent: client,
        task,
        placeholders: &placeholders,
        cache: &cache,
    };

    // Setup.
    let t = Instant::now();
    if let Err(e) = setup::run_steps(&task.spec.config, "config", &ctx).await {
        r.timings.setup_s = t.elapsed().as_secs_f64();
        r.end = EndReason::SetupError;
        r.errors.push(format!("setup failed: {e}"));
        r.timings.total_s = t0.elapsed().as_secs_f64() + reset_s;
        return r;
    }
    // Applications started by the setup draw for a while (LibreOffice under
    // TCG: seconds): wait until the screen has been quiet for 2 s (at most
    // 60 s) instead of OSWorld's fixed sleeps.
    if !task.spec.config.is_empty() {
        let quiet = Settle {
            quiet_ms: 2000,
            max_ms: 60_000,
            threshold_px: 2000,
            idle: false,
        };
        if let Err(e) = client
            .actions(&ActionsRequest {
                actions: vec![],
                settle: Some(quiet),
            })
            .await
        {
            r.errors.push(format!("settling after setup: {e}"));
        }
    }
    r.timings.setup_s = t.elapsed().as_secs_f64();

    // The loop.
    let ectx = EpisodeContext {
        task_id: task.spec.id.clone(),
        instruction: task.spec.instruction.clone(),
        observation: s.observation,
        action_space: s.action_space,
        max_steps: s.max_steps,
        solution: task.spec.solution.clone(),
    };
    if let Err(e) = agent.reset(&ectx) {
        r.end = EndReason::AgentError;
        r.errors.push(e.to_string());
        r.timings.total_s = t0.elapsed().as_secs_f64() + reset_s;
        return r;
    }
    let settle = match s.settle {
        SettleMode::Adaptive => Some(Settle {
            quiet_ms: 300,
            max_ms: 3000,
            threshold_px: 2000,
            idle: false,
        }),
        SettleMode::Fixed(_) => None,
    };
    let loop_start = Instant::now();
    let mut last: Option<Decision> = None;
    let mut step = 0usize;
    'episode: while step < s.max_steps {
        if loop_start.elapsed() > s.time_limit {
            r.end = EndReason::Timeout;
            break;
        }
        if let Err(e) = machine.check() {
            r.end = EndReason::EnvError;
            r.errors.push(e.to_string());
            break;
        }
        // Observe.
        let mut timing = StepTimings::default();
        let t = Instant::now();
        let req = ObserveRequest {
            screenshot: s.observation.wants_screenshot(),
            image_format: ImageFormat::Png,
            quality: None,
            a11y: s.observation.wants_a11y().then(|| A11yQuery {
                format: A11yFormat::Linear,
                ..Default::default()
            }),
        };
        let obs = match client.observe(&req).await {
            Ok(o) => o,
            Err(e) => {
                r.end = EndReason::EnvError;
                r.errors.push(format!("step {}: observe: {e}", step + 1));
                break;
            }
        };
        timing.observe_ms = t.elapsed().as_secs_f64() * 1000.0;
        let png = obs
            .screenshot
            .as_deref()
            .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok());
        let a11y = obs.a11y.and_then(|t| t.text);
        let stamp = timestamp();
        let shot_name = format!("step_{}_{stamp}.png", step + 1);
        if let Some(p) = &png {
            let _ = std::fs::write(dir.join(&shot_name), p);
        }
        if let Some(a) = &a11y {
            let _ = std::fs::write(dir.join(format!("step_{}_a11y.txt", step + 1)), a);
        }
        let observation = Observation {
            step,
            screen: (obs.screen.width, obs.screen.height),
            screenshot_png: png,
            a11y_linear: a11y,
        };
        // Decide.
        let t = Instant::now();
        let reply = agent.next(&observation).await;
        timing.agent_ms = t.elapsed().as_secs_f64() * 1000.0;
        let reply = match reply {
            Ok(rep) => rep,
            Err(AgentError::Call { message, .. }) => {
                step += 1;
                r.errors.push(format!("step {step}: agent: {message}"));
                traj.write(&serde_json::json!({
                    "step_num": step, "action_timestamp": stamp, "Error": message,
                    "screenshot_file": shot_name, "timings": timing,
                }));
                continue;
            }
            Err(AgentError::Stopped { .. }) => {
                r.end = EndReason::Stopped;
                break;
            }
            Err(e) => {
                r.end = EndReason::AgentError;
                r.errors.push(e.to_string());
                break;
            }
        };
        if let Some(u) = reply.usage {
            r.tokens.prompt_tokens += u.prompt_tokens;
            r.tokens.completion_tokens += u.completion_tokens;
        }
        // Act: each decision is one step.
        for (k, d) in reply.decisions.iter().enumerate() {
            if step >= s.max_steps {
                break;
            }
            step += 1;
            let mut timing = if k == 0 {
                timing.clone()
            } else {
                StepTimings::default()
            };
            let t = Instant::now();
            let outcome: Result<serde_json::Value, String> = match d {
                Decision::Code(code) => client
                    .pyautogui(&PyautoguiRequest { code: code.clone(), settle })
                    .await
                    .map(|a| serde_json::json!({"mode": a.mode, "executed": a.executed, "settle": a.settle}))
                    .map_err(|e| e.to_string()),
                Decision::Action(a) => client
                    .actions(&ActionsRequest { actions: vec![a.clone()], settle })
                    .await
                    .map(|a| serde_json::json!({"mode": a.mode, "executed": a.executed, "settle": a.settle}))
                    .map_err(|e| e.to_string()),
                Decision::Wait => {
                    let pause = match s.settle {
                        SettleMode::Fixed(x) => x,
                        SettleMode::Adaptive => 1.0,
                    };
                    tokio::time::sleep(Duration::from_secs_f64(pause)).await;
                    Ok(serde_json::json!({}))
                }
                Decision::Done | Decision::Fail => Ok(serde_json::json!({})),
            };
            let act_total = t.elapsed().as_secs_f64() * 1000.0;
            if let Ok(info) = &outcome {
                let settle_ms = info
                    .get("settle")
                    .and_then(|x| x.get("waited_ms"))
                    .and_then(|x| x.as_f64())
                    .unwrap_or(0.0);
                timing.settle_ms = settle_ms;
                timing.act_ms = act_total - settle_ms;
            }
            if let (SettleMode::Fixed(x), Decision::Code(_) | Decision::Action(_)) = (s.settle, d) {
                let t = Instant::now();
                tokio::time::sleep(Duration::from_secs_f64(x)).await;
                timing.settle_ms = t.elapsed().as_secs_f64() * 1000.0;
            }
            let done = matches!(d, Decision::Done | Decision::Fail);
            let mut line = serde_json::json!({
                "step_num": step, "action_timestamp": stamp, "action": d.describe(),
                "response": if k == 0 { reply.raw.clone() } else { String::new() },
                "reward": 0, "done": done, "screenshot_file": shot_name, "timings": timing,
                "tokens": if k == 0 { reply.usage } else { None }, "latency_ms": reply.latency_ms,
            });
            match outcome {
                Ok(info) => line["info"] = info,
                Err(e) => {
                    line["Error"] = e.clone().into();
                    r.errors.push(format!("step {step}: {e}"));
                }
            }
            traj.write(&line);
            r.timings.steps.push(timing);
            last = Some(d.clone());
            match d {
                Decision::Done => {
                    r.end = EndReason::Done;
                    break 'episode;
                }
                Decision::Fail => {
                    r.end = EndReason::Fail;
                    break 'episode;
                }
                _ => {}
            }
        }
    }
    r.steps_used = step;
    agent.finished(r.end);

    if matches!(r.end, EndReason::EnvError | EndReason::AgentError) {
        r.timings.total_s = t0.elapsed().as_secs_f64() + reset_s;
        return r;
    }

    // Postconfig and evaluation.
    let t = Instant::now();
    if let Err(e) = setup::run_steps(
        &task.spec.evaluator.postconfig,
        "evaluator.postconfig",
        &ctx,
    )
    .await
    {
        r.errors.push(format!("postconfig failed: {e}"));
    }
    r.timings.postconfig_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    evaluate(task, last.as_ref(), client, &cache, &mut r).await;
    r.timings.eval_s = t.elapsed().as_secs_f64();
    r.success = r.score >= SUCCESS_THRESHOLD;
    r.timings.total_s = t0.elapsed().as_secs_f64() + reset_s;
    r
}

async fn evaluate(
    task: &LoadedTask,
    last: Option<&Decision>,
    client: &crate::agent_client::AgentClient,
    cache: &Path,
    r: &mut EpisodeResult,
) {
    let ev = &task.spec.evaluator;
    let failed = matches!(last, Some(Decision::Fail));
    if ev.is_infeasible() {
        r.score = if failed { 1.0 } else { 0.0 };
        r.metrics.push(MetricResult {
            func: "infeasible".into(),
            score: r.score,
            detail: format!(
                "last action {}",
                last.map(|d| d.describe()).unwrap_or_else(|| "none".into())
            ),
        });
        return;
    }
    if failed {
        r.score = 0.0;
        r.metrics.push(MetricResult {
            func: "(FAIL)".into(),
            score: 0.0,
            detail: "the agent answered FAIL on a feasible task".into(),
        });
        return;
    }
    let metrics = match ev.metrics() {
        Ok(m) => m,
        Err(e) => {
            r.errors.push(e);
            return;
        }
    };
    let mut scores = Vec::new();
    let empty = serde_json::Map::new();
    for m in metrics {
        let result = match m.result {
            Some(g) => getters::collect(g, client, task, cache).await,
            None => evaluators::Artifact::Missing("no `result` getter".into()),
        };
        let expected = match m.expected {
            Some(g) => Some(getters::collect(g, client, task, cache).await),
            None => None,
        };
        let (score, detail) = match evaluators::evaluate(
            m.func,
            &result,
            expected.as_ref(),
            m.options.unwrap_or(&empty),
        ) {
            Ok(sc) => (sc.score, sc.detail),
            Err(e) => {
                r.errors.push(format!("metric {}: {e}", m.func));
                (0.0, e.to_string())
            }
        };
        r.metrics.push(MetricResult {
            func: m.func.to_string(),
            score,
            detail,
        });
        scores.push(score);
    }
    let conj = match ev.conj.unwrap_or_default() {
        protocol::task::Conj::And => evaluators::Conj::And,
        protocol::task::Conj::Or => evaluators::Conj::Or,
    };
    r.score = evaluators::combine(&scores, conj);
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
