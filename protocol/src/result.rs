//! The files a run writes and the report reads: `result.json`
//! ([`EpisodeResult`]), the trajectory's lines (`traj.jsonl`,
//! [`TrajectoryStep`]) and `run.json` ([`RunManifest`]). Each carries
//! [`FORMAT_VERSION`]; readers accept older files, whose missing fields
//! take their defaults.

use serde::{Deserialize, Serialize};

/// The version of the files below. 1: the first versioned files (adds
/// `format_version`, `instruction`, `difficulty`, `related_apps`, `repeat`).
pub const FORMAT_VERSION: u32 = 1;

/// Token counts of one model call, or of an episode.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

/// What a result records of its task.
#[derive(Debug, Clone, Default)]
pub struct TaskInfo {
    pub id: String,
    pub instruction: String,
    pub domain: String,
    pub category: Option<String>,
    pub difficulty: Option<String>,
    pub related_apps: Vec<String>,
}

/// Why the loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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

/// Whether an episode has a score.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The evaluator scored the collected artifacts (or the agent failed,
    /// which scores 0).
    #[default]
    Scored,
    /// The environment failed (the machine died, the guest agent stopped
    /// answering, a host write failed): no score; retried, then reported
    /// apart.
    EnvError,
    /// A setup step failed on a healthy machine: the task could not be set
    /// up; no score.
    SetupError,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Scored => "scored",
            Status::EnvError => "env_error",
            Status::SetupError => "setup_error",
        }
    }
}

/// One metric's outcome.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MetricResult {
    pub func: String,
    pub score: f64,
    pub detail: String,
    /// The sub-check's name (the metric's `check` option).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<String>,
    /// Its weight and whether it must pass (`"conj": "weighted"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub critical: Option<bool>,
}

impl MetricResult {
    /// A result without a sub-check name, weight or criticality.
    pub fn plain(func: &str, score: f64, detail: String) -> MetricResult {
        MetricResult {
            func: func.into(),
            score,
            detail,
            check: None,
            weight: None,
            critical: None,
        }
    }
}

/// Per-step timings (ms).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct StepTimings {
    pub observe_ms: f64,
    pub agent_ms: f64,
    pub act_ms: f64,
    pub settle_ms: f64,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// Where the time went (seconds unless named).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct EpisodeTimings {
    pub reset_s: f64,
    pub setup_s: f64,
    pub steps: Vec<StepTimings>,
    /// The wait for an idle guest before postconfig and the evaluation.
    #[serde(default)]
    pub idle_wait_s: f64,
    /// Whether the guest went idle within the cap (false: evaluated busy).
    #[serde(default)]
    pub idle: Option<bool>,
    pub postconfig_s: f64,
    /// Saving checkpoints for smaller budgets (`--checkpoints`); not in
    /// any step's time.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub checkpoint_s: f64,
    /// Stopping the screen recording and fetching it (`--record`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub recording_s: f64,
    pub eval_s: f64,
    pub total_s: f64,
}

/// An attempt that ended without a score and was retried.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Attempt {
    pub attempt: u32,
    pub status: Status,
    pub end: EndReason,
    pub cause: Option<String>,
    pub seconds: f64,
}

/// `result.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EpisodeResult {
    /// [`FORMAT_VERSION`] of the writer; 0 for files written before the
    /// field existed (they read the same).
    #[serde(default)]
    pub format_version: u32,
    pub task_id: String,
    /// The instruction the agent was given (absent in older files).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub instruction: String,
    pub domain: String,
    pub category: Option<String>,
    /// The task's `difficulty` and `related_apps` (absent in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub difficulty: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub related_apps: Vec<String>,
    /// `scored`, `env_error` or `setup_error`: only `scored` results have
    /// a score.
    #[serde(default)]
    pub status: Status,
    /// Why there is no score (status other than `scored`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    pub score: f64,
    /// score ≥ 0.95.
    pub success: bool,
    pub steps_used: usize,
    pub max_steps: usize,
    /// The seed of the task's generated data.
    #[serde(default)]
    pub seed: u64,
    /// Which repeat of the task this is (`deskenv run --repeats K`: 1 to
    /// K); absent for a run without repeats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<u32>,
    pub end: EndReason,
    pub metrics: Vec<MetricResult>,
    pub errors: Vec<String>,
    pub tokens: Usage,
    pub timings: EpisodeTimings,
    /// Earlier attempts that ended without a score, each retried on a
    /// fresh machine.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attempts: Vec<Attempt>,
    /// The checkpoints this episode saved for smaller budgets
    /// (`deskenv run --checkpoints`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checkpoints: Vec<CheckpointSaved>,
    /// Where this budget's result came from when it was cut from a longer
    /// episode (`--checkpoints`); absent for an episode run at its budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_checkpoint: Option<FromCheckpoint>,
}

/// A checkpoint an episode saved after step `steps`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CheckpointSaved {
    pub steps: usize,
    /// The time the machine was paused and the files written.
    pub seconds: f64,
    /// Why it was not saved (that budget's result is then unscored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// How a budget's result was cut from the episode at a larger budget.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FromCheckpoint {
    /// The budget of the episode that ran.
    pub episode_budget: usize,
    /// `checkpoint`: evaluated on a machine started from the state saved
    /// after step `max_steps`; `ended`: the episode ended within this
    /// budget, so its result is this budget's too.
    pub kind: String,
    /// Starting the machine from the checkpoint (0 for `ended`).
    pub restore_s: f64,
}

pub const SUCCESS_THRESHOLD: f64 = 0.95;

impl EpisodeResult {
    /// A result with score 0 that ended for `end`; the loop fills it in.
    pub fn new(task: TaskInfo, max_steps: usize, end: EndReason) -> EpisodeResult {
        EpisodeResult {
            format_version: FORMAT_VERSION,
            task_id: task.id,
            instruction: task.instruction,
            domain: task.domain,
            category: task.category,
            difficulty: task.difficulty,
            related_apps: task.related_apps,
            status: Status::Scored,
            cause: None,
            score: 0.0,
            success: false,
            steps_used: 0,
            max_steps,
            seed: 0,
            repeat: None,
            end,
            metrics: vec![],
            errors: vec![],
            tokens: Usage::default(),
            timings: EpisodeTimings::default(),
            attempts: vec![],
            checkpoints: vec![],
            from_checkpoint: None,
        }
    }

    /// A result without a score: the environment failed for `cause`.
    pub fn env_error(task: TaskInfo, max_steps: usize, cause: String) -> EpisodeResult {
        let mut r = EpisodeResult::new(task, max_steps, EndReason::EnvError);
        r.fault(Status::EnvError, cause);
        r
    }

    /// Marks the result unscored for `cause` (the first cause wins).
    pub fn fault(&mut self, status: Status, cause: String) {
        if self.status == Status::Scored {
            self.status = status;
            self.errors.push(cause.clone());
            self.cause = Some(cause);
        }
        self.score = 0.0;
        self.success = false;
        self.end = match status {
            Status::SetupError => EndReason::SetupError,
            _ if self.end == EndReason::SetupError => EndReason::SetupError,
            _ => EndReason::EnvError,
        };
    }

    /// Whether this result is a score (an older result.json without
    /// `status` is one unless it ended in an environment or setup error).
    pub fn is_scored(&self) -> bool {
        self.status == Status::Scored
            && !matches!(self.end, EndReason::EnvError | EndReason::SetupError)
    }
}

/// One line of `traj.jsonl`: one decision of the agent and what it did.
/// OSWorld's keys (`step_num`, `action_timestamp`, `action`, `response`,
/// `reward`, `done`, `screenshot_file`, `info`, `Error`) plus deskenv's.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TrajectoryStep {
    pub step_num: usize,
    pub action_timestamp: String,
    /// The action as the trajectory shows it: pyautogui code, an action
    /// object's JSON, or WAIT/DONE/FAIL; absent on the line of a failed
    /// agent call.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub action: String,
    /// The model's raw answer (on the first decision of a reply only).
    #[serde(default)]
    pub response: String,
    #[serde(default)]
    pub reward: f64,
    #[serde(default)]
    pub done: bool,
    #[serde(default)]
    pub screenshot_file: String,
    #[serde(default)]
    pub timings: StepTimings,
    #[serde(default)]
    pub tokens: Option<Usage>,
    #[serde(default)]
    pub latency_ms: f64,
    /// Why the a11y tree the agent saw was partial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub a11y_truncated: Option<String>,
    /// What the guest agent answered to the action.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub info: Option<serde_json::Value>,
    /// Why the action failed.
    #[serde(default, rename = "Error", skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// `run.json`: what ran, with which settings, and (once finished) the
/// counts per budget.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunManifest {
    #[serde(default)]
    pub format_version: u32,
    pub deskenv_version: String,
    /// The run's settings as `deskenv run` had them.
    pub settings: RunSettingsRecord,
    pub tasks: Vec<RunTask>,
    /// Unix seconds.
    pub written_at: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<Vec<BudgetSummary>>,
    /// Why the run stopped early, if it did.
    #[serde(default)]
    pub stopped: Option<String>,
}

/// The settings in `run.json`. The fields a report reads are typed; the
/// rest (provider, parallelism, the environment's digests, …) are kept as
/// they were written.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunSettingsRecord {
    pub agent: String,
    pub model: String,
    pub budgets: Vec<usize>,
    pub episode: EpisodeSettingsRecord,
    /// Times each task runs (`--repeats`); 1 when absent.
    #[serde(default = "one")]
    pub repeats: u32,
    #[serde(flatten)]
    pub other: serde_json::Map<String, serde_json::Value>,
}

fn one() -> u32 {
    1
}

/// The episode settings in `run.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EpisodeSettingsRecord {
    pub observation: String,
    pub action_space: String,
    pub max_steps: usize,
    #[serde(default)]
    pub seed: u64,
    #[serde(flatten)]
    pub other: serde_json::Map<String, serde_json::Value>,
}

/// A task of the run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunTask {
    pub id: String,
    pub domain: String,
    pub file: std::path::PathBuf,
    pub sha256: String,
}

/// The counts of one budget in `run.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BudgetSummary {
    pub budget: usize,
    pub episodes: usize,
    pub scored: usize,
    pub success: usize,
    pub success_rate: Option<f64>,
    pub env_error: usize,
    pub setup_error: usize,
    pub not_run: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_older_result_without_the_new_fields_reads_with_their_defaults() {
        let old = r#"{"task_id":"t","domain":"d","category":null,"score":1.0,"success":true,
            "steps_used":2,"max_steps":15,"end":"done","metrics":[],"errors":[],
            "tokens":{"prompt_tokens":0,"completion_tokens":0},
            "timings":{"reset_s":0,"setup_s":0,"steps":[],"postconfig_s":0,"eval_s":0,"total_s":1}}"#;
        let r: EpisodeResult = serde_json::from_str(old).unwrap();
        assert_eq!(r.format_version, 0);
        assert_eq!(r.status, Status::Scored);
        assert!(r.is_scored() && r.related_apps.is_empty() && r.repeat.is_none());
    }

    #[test]
    fn a_result_and_a_trajectory_line_round_trip() {
        let info = TaskInfo {
            instruction: String::new(),
            id: "t".into(),
            domain: "d".into(),
            difficulty: Some("hard".into()),
            related_apps: vec!["calc".into()],
            ..Default::default()
        };
        let mut r = EpisodeResult::new(info, 15, EndReason::Budget);
        r.repeat = Some(2);
        let back: EpisodeResult =
            serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
        assert_eq!(back.format_version, FORMAT_VERSION);
        assert_eq!(back.difficulty.as_deref(), Some("hard"));
        assert_eq!(back.repeat, Some(2));

        // OSWorld's keys, with the error under "Error".
        let line = TrajectoryStep {
            step_num: 3,
            action: "pyautogui.click(10, 20)".into(),
            error: Some("no such window".into()),
            ..Default::default()
        };
        let v = serde_json::to_value(&line).unwrap();
        assert_eq!(v["Error"], "no such window");
        assert_eq!(v["step_num"], 3);
        let back: TrajectoryStep = serde_json::from_value(v).unwrap();
        assert_eq!(back.action, line.action);
        // A failed agent call's line has no action.
        let v = serde_json::to_value(TrajectoryStep::default()).unwrap();
        assert!(v.get("action").is_none());
    }

    #[test]
    fn a_manifest_keeps_the_settings_it_does_not_type() {
        let text = r#"{"deskenv_version":"0.1.0","settings":{"agent":"scripted","model":"scripted",
            "budgets":[15],"provider":"qemu","episode":{"observation":"screenshot",
            "action_space":"pyautogui","max_steps":15,"seed":4,"settle":"Adaptive"}},
            "tasks":[],"written_at":1,"stopped":null}"#;
        let m: RunManifest = serde_json::from_str(text).unwrap();
        assert_eq!(m.settings.repeats, 1);
        assert_eq!(m.settings.episode.seed, 4);
        let v = serde_json::to_value(&m).unwrap();
        assert_eq!(v["settings"]["provider"], "qemu");
        assert_eq!(v["settings"]["episode"]["settle"], "Adaptive");
    }
}
