//! `deskenv run`: every task × every step budget, through a pool of
//! machines, into OSWorld's layout
//! `<out>/<action_space>/<observation>/<model>/<domain>/<task>/`
//! (`<model>-steps<N>` when several budgets run at once), with
//! `<out>/run.json` holding the settings. Rerunning the same command
//! resumes: a task folder with a `result.json` is done and skipped, any
//! other task folder is cleared and run again.

use super::{run_episode, Attempt, EpisodeResult, EpisodeSettings, Status};
use crate::policy::Policy;
use crate::pool::Pool;
use crate::task::LoadedTask;
use protocol::result::{BudgetSummary, RunManifest, RunSettingsRecord, RunTask, FORMAT_VERSION};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// Settings of a run.
#[derive(Debug, Clone, Serialize)]
pub struct RunSettings {
    pub out: PathBuf,
    /// The name in the result path: the model, or the agent kind.
    pub model: String,
    pub agent: String,
    pub budgets: Vec<usize>,
    pub episode: EpisodeSettings,
    pub provider: crate::provider::Kind,
    pub parallel: usize,
    /// Attempts after the first for an episode that ended without a score
    /// (environment or setup error), each on a fresh machine.
    pub retries: u32,
    /// What run.json records about the environment (image digest, …).
    pub environment: serde_json::Value,
    /// Episodes per task and budget, each on a fresh machine (`--repeats`;
    /// 1: once). With more than one, each goes in `repeat-<r>/` under
    /// the task's folder and its result records `repeat`.
    pub repeats: u32,
    /// Repeat r uses seed + r − 1 instead of the same seed (`--vary-seed`).
    pub vary_seed: bool,
    /// Run each task once, at the largest budget, and cut the smaller
    /// budgets from it through checkpoints ([`super::checkpoint`]).
    pub checkpoints: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("host: {what} {path}")]
    Write {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("an episode's task ended abnormally")]
    Join(#[source] tokio::task::JoinError),
}

/// One finished (or resumed) episode.
#[derive(Debug, Clone)]
pub struct Finished {
    pub budget: usize,
    /// 1 unless the run repeats tasks.
    pub repeat: u32,
    pub result: EpisodeResult,
    pub resumed: bool,
}

/// What a run did.
#[derive(Debug, Clone, Default)]
pub struct RunOutcome {
    pub finished: Vec<Finished>,
    /// Episodes not run because the run stopped.
    pub not_run: Vec<(usize, String)>,
    /// Why the run stopped early, if it did.
    pub stopped: Option<String>,
}

impl RunOutcome {
    /// Episodes that ended without a score for an environment fault.
    pub fn env_errors(&self) -> usize {
        self.finished
            .iter()
            .filter(|f| f.result.status == Status::EnvError)
            .count()
    }

    pub fn setup_errors(&self) -> usize {
        self.finished
            .iter()
            .filter(|f| f.result.status == Status::SetupError)
            .count()
    }
}

/// Builds a fresh agent per episode.
pub type PolicyFactory = Arc<dyn Fn() -> Result<Box<dyn Policy>, String> + Send + Sync>;

/// The episode's folder: the task's, and `repeat-<r>/` in it when the run
/// repeats tasks.
pub fn task_dir(s: &RunSettings, budget: usize, repeat: u32, t: &LoadedTask) -> PathBuf {
    let model = if s.budgets.len() > 1 {
        format!("{}-steps{budget}", s.model)
    } else {
        s.model.clone()
    };
    let dir = episode_dir(&s.out, &s.episode, &model, t);
    if s.repeats > 1 {
        dir.join(format!("repeat-{repeat}"))
    } else {
        dir
    }
}

impl RunSettings {
    /// The seed of repeat `r` (1-based).
    pub fn seed_of(&self, repeat: u32) -> u64 {
        if self.vary_seed {
            self.episode.seed + u64::from(repeat.saturating_sub(1))
        } else {
            self.episode.seed
        }
    }
}

/// `<out>/<action_space>/<observation>/<model>/<domain>/<task>/`, each
/// part reduced to `[A-Za-z0-9._@-]`.
pub fn episode_dir(out: &Path, e: &EpisodeSettings, model: &str, t: &LoadedTask) -> PathBuf {
    out.join(e.action_space.as_str())
        .join(e.observation.as_str())
        .join(sanitize(model))
        .join(sanitize(&t.domain))
        .join(sanitize(&t.spec.id))
}

fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.@".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Writes `bytes` to `path` through a temporary file and a rename, so a
/// reader (or a resumed run) sees the old file or the whole new one; a
/// failed write leaves no partial file behind.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let written = std::fs::write(&tmp, bytes).and_then(|_| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

fn write_run_json(
    s: &RunSettings,
    tasks: &[LoadedTask],
    outcome: Option<&RunOutcome>,
) -> Result<(), RunError> {
    let path = s.out.join("run.json");
    let fail = |source| RunError::Write {
        what: "writing",
        path: path.clone(),
        source,
    };
    std::fs::create_dir_all(&s.out).map_err(fail)?;
    // The settings go through their typed record, so run.json always
    // reads back as a RunManifest.
    let settings = serde_json::to_value(s)
        .and_then(serde_json::from_value::<RunSettingsRecord>)
        .map_err(|e| fail(std::io::Error::other(format!("the run's settings: {e}"))))?;
    let v = RunManifest {
        format_version: FORMAT_VERSION,
        deskenv_version: env!("CARGO_PKG_VERSION").into(),
        settings,
        tasks: tasks
            .iter()
            .map(|t| RunTask {
                id: t.spec.id.clone(),
                domain: t.domain.clone(),
                file: t.path.clone(),
                sha256: t.sha256.clone(),
            })
            .collect(),
        written_at: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        summary: outcome.map(|o| {
            s.budgets
                .iter()
                .map(|&b| {
                    let c = Counts::of(o, b);
                    BudgetSummary {
                        budget: b,
                        episodes: c.n,
                        scored: c.scored,
                        success: c.success,
                        success_rate: c.rate(),
                        env_error: c.env_errors,
                        setup_error: c.setup_errors,
                        not_run: c.not_run,
                    }
                })
                .collect()
        }),
        stopped: outcome.and_then(|o| o.stopped.clone()),
    };
    write_atomic(
        &path,
        serde_json::to_string_pretty(&v)
            .unwrap_or_default()
            .as_bytes(),
    )
    .map_err(fail)
}

/// Writes `result.txt`, then `result.json`, each through a rename
/// (result.json's presence marks the episode finished).
pub fn write_result(dir: &Path, r: &EpisodeResult) -> std::io::Result<()> {
    write_atomic(&dir.join("result.txt"), format!("{}\n", r.score).as_bytes())?;
    write_atomic(
        &dir.join("result.json"),
        serde_json::to_string_pretty(r)
            .unwrap_or_default()
            .as_bytes(),
    )
}

/// Moves an unscored attempt's files into `<dir>/attempts/<n>/`, so the
/// next attempt starts in a clean folder and the failed one stays readable.
fn keep_attempt(dir: &Path, n: u32) -> std::io::Result<()> {
    let dest = dir.join("attempts").join(n.to_string());
    std::fs::create_dir_all(&dest)?;
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        if e.file_name() != "attempts" {
            std::fs::rename(e.path(), dest.join(e.file_name()))?;
        }
    }
    Ok(())
}

/// Start failures in a row: the same one twice stops the run.
#[derive(Debug, Default)]
struct StartFailures {
    last: Option<String>,
    stopped: Option<String>,
}

/// A failure's shape without its numbers (pids, ports, times, paths with
/// them), so "the same way twice" is recognised.
fn failure_shape(cause: &str) -> String {
    let first = cause.lines().next().unwrap_or("");
    let mut shape = String::new();
    for c in first.chars() {
        if !c.is_ascii_digit() {
            shape.push(c);
        } else if !shape.ends_with('#') {
            shape.push('#');
        }
    }
    shape
}

struct Shared {
    pool: Arc<Pool>,
    s: Arc<RunSettings>,
    make_agent: PolicyFactory,
    progress: Arc<dyn Fn(&str) + Send + Sync>,
    starts: std::sync::Mutex<StartFailures>,
    /// finished, successes, run now
    done: std::sync::Mutex<(usize, usize, usize)>,
    total: usize,
    t0: Instant,
}

impl Shared {
    fn stopped(&self) -> Option<String> {
        self.starts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .stopped
            .clone()
    }

    fn start_ok(&self) {
        self.starts.lock().unwrap_or_else(|e| e.into_inner()).last = None;
    }

    fn start_failed(&self, cause: &str) {
        let shape = failure_shape(cause);
        let mut st = self.starts.lock().unwrap_or_else(|e| e.into_inner());
        if st.last.as_deref() == Some(shape.as_str()) && st.stopped.is_none() {
            st.stopped = Some(format!(
                "machines failed to start twice in a row the same way: {}",
                cause.lines().next().unwrap_or(cause)
            ));
        }
        st.last = Some(shape);
    }

    /// One attempt: a fresh machine, the episode, the machine ended.
    async fn attempt(
        &self,
        task: &LoadedTask,
        budget: usize,
        repeat: u32,
        dir: &Path,
        n: u32,
    ) -> Result<EpisodeResult, String> {
        let mut agent = (self.make_agent)()?;
        let t = Instant::now();
        match self.pool.acquire().await {
            Ok(lease) => {
                self.start_ok();
                let reset_s = t.elapsed().as_secs_f64();
                let mut ep = self.s.episode.clone();
                ep.max_steps = budget;
                ep.attempt = n;
                ep.seed = self.s.seed_of(repeat);
                if self.s.checkpoints {
                    ep.checkpoints = self
                        .s
                        .budgets
                        .iter()
                        .copied()
                        .filter(|&b| b < budget)
                        .collect();
                }
                let r = run_episode(lease.machine(), task, agent.as_mut(), &ep, dir, reset_s).await;
                lease.release().await;
                Ok(r)
            }
            Err(e) => {
                let cause = format!("no machine: {}", crate::error_chain(&e));
                self.start_failed(&cause);
                let mut r =
                    EpisodeResult::env_error(crate::episode::task_info(task), budget, cause);
                r.seed = self.s.seed_of(repeat);
                r.timings.reset_s = t.elapsed().as_secs_f64();
                r.timings.total_s = r.timings.reset_s;
                Ok(r)
            }
        }
    }

    /// The episode with its retries; `None` when the run stopped first.
    async fn episode(
        &self,
        task: &LoadedTask,
        budget: usize,
        repeat: u32,
        dir: &Path,
    ) -> Result<Option<EpisodeResult>, RunError> {
        let io = |what: &'static str, path: &Path| {
            let path = path.to_path_buf();
            move |source| RunError::Write { what, path, source }
        };
        let mut attempts = Vec::new();
        let mut n = 1u32;
        loop {
            if self.stopped().is_some() {
                return Ok(None);
            }
            // A half-finished folder from an earlier run is cleared; from a
            // retry, only the attempts kept so far stay.
            clear_dir(dir, n == 1).map_err(io("clearing", dir))?;
            let t = Instant::now();
            let mut r = match self.attempt(task, budget, repeat, dir, n).await {
                Ok(r) => r,
                Err(agent_error) => {
                    // The agent could not be made: the agent's failure.
                    let mut r = EpisodeResult::new(
                        crate::episode::task_info(task),
                        budget,
                        super::EndReason::AgentError,
                    );
                    r.errors.push(agent_error);
                    r.seed = self.s.seed_of(repeat);
                    r
                }
            };
            r.repeat = (self.s.repeats > 1).then_some(repeat);
            if r.is_scored() || n > self.s.retries || self.stopped().is_some() {
                r.attempts = attempts;
                return Ok(Some(r));
            }
            (self.progress)(&format!(
                "      {} (steps {budget}): attempt {n} ended without a score ({}: {}); retrying on a fresh machine",
                task.spec.id,
                r.status.as_str(),
                r.cause
                    .as_deref()
                    .and_then(|c| c.lines().next())
                    .unwrap_or("no cause recorded")
            ));
            attempts.push(attempt_of(n, &r, t));
            keep_attempt(dir, n).map_err(io("keeping the failed attempt in", dir))?;
            n += 1;
        }
    }

    /// The result at budget `budget` cut from `full`, the episode in
    /// `src` at the largest budget, into `dir`: from the checkpoint it
    /// saved after that step (retried on fresh machines like an episode),
    /// or its own result when it ended by then. A checkpoint that was not
    /// saved or does not start is an environment error, never a score.
    async fn cut(
        &self,
        task: &LoadedTask,
        full: &EpisodeResult,
        src: &Path,
        budget: usize,
        dir: &Path,
    ) -> Result<EpisodeResult, RunError> {
        use super::checkpoint::{ended_within, evaluate_checkpoint, unscored};
        let io = |what: &'static str, path: &Path| {
            let path = path.to_path_buf();
            move |source| RunError::Write { what, path, source }
        };
        clear_dir(dir, true).map_err(io("clearing", dir))?;
        if !full.is_scored() {
            return Ok(unscored(
                task,
                full,
                budget,
                format!(
                    "the episode at {} steps, which this budget is cut from, has no score: {}",
                    full.max_steps,
                    full.cause.as_deref().unwrap_or("no cause recorded")
                ),
            ));
        }
        if full.steps_used <= budget {
            return ended_within(full, budget, src, dir)
                .map_err(io("copying the episode into", dir));
        }
        let saved = full.checkpoints.iter().find(|c| c.steps == budget);
        match saved {
            None => {
                return Ok(unscored(
                    task,
                    full,
                    budget,
                    format!("no checkpoint was saved after step {budget}"),
                ))
            }
            Some(c) if c.error.is_some() => {
                return Ok(unscored(
                    task,
                    full,
                    budget,
                    format!(
                        "the checkpoint after step {budget} was not saved: {}",
                        c.error.as_deref().unwrap_or_default()
                    ),
                ))
            }
            Some(_) => {}
        }
        let from = super::checkpoint_dir(src, budget);
        let mut attempts = Vec::new();
        let mut n = 1u32;
        loop {
            let t = Instant::now();
            let mut r = match self.pool.acquire_from(&from).await {
                Ok(lease) => {
                    let restore_s = t.elapsed().as_secs_f64();
                    let mut ep = self.s.episode.clone();
                    ep.max_steps = budget;
                    ep.seed = full.seed;
                    ep.checkpoints.clear();
                    ep.record_fps = None;
                    let r =
                        evaluate_checkpoint(lease.machine(), task, &ep, full, src, dir, restore_s)
                            .await;
                    lease.release().await;
                    r
                }
                Err(e) => unscored(
                    task,
                    full,
                    budget,
                    format!(
                        "starting a machine from the checkpoint after step {budget} failed: {}",
                        crate::error_chain(&e)
                    ),
                ),
            };
            if r.is_scored() || n > self.s.retries || self.stopped().is_some() {
                r.attempts = attempts;
                return Ok(r);
            }
            attempts.push(attempt_of(n, &r, t));
            clear_dir(dir, true).map_err(io("clearing", dir))?;
            n += 1;
        }
    }

    /// The progress line of a finished episode.
    fn line(&self, budget: usize, result: &EpisodeResult) -> String {
        let name = match result.repeat {
            Some(r) => format!("{} repeat {r}", result.task_id),
            None => result.task_id.clone(),
        };
        let mut d = self.done.lock().unwrap_or_else(|e| e.into_inner());
        d.0 += 1;
        d.1 += result.success as usize;
        d.2 += 1;
        let elapsed = self.t0.elapsed().as_secs_f64();
        let eta = elapsed / d.2 as f64 * (self.total - d.0) as f64 / self.pool.parallel() as f64;
        let outcome = if result.is_scored() {
            format!(
                "score {:.2}{}",
                result.score,
                if result.success { " (success)" } else { "" }
            )
        } else {
            format!("NO SCORE ({})", result.status.as_str())
        };
        let retried = if result.attempts.is_empty() {
            String::new()
        } else {
            format!(" on attempt {}", result.attempts.len() + 1)
        };
        let note = result
            .cause
            .as_ref()
            .or(result.errors.first())
            .map(|e| format!(" [{}]", e.lines().next().unwrap_or("")))
            .unwrap_or_default();
        format!(
            "[{}/{}] {} (steps {budget}): {outcome}{retried} in {:.1}s, {:?} after {} step(s){note}; success so far {}/{}; ETA {:.0}s",
            d.0,
            self.total,
            name,
            result.timings.total_s,
            result.end,
            result.steps_used,
            d.1,
            d.0,
            eta
        )
    }
}

/// The record of attempt `n`, which ended without a score as `r`, begun at `t`.
fn attempt_of(n: u32, r: &EpisodeResult, t: Instant) -> Attempt {
    Attempt {
        attempt: n,
        status: r.status,
        end: r.end,
        cause: r.cause.clone(),
        seconds: t.elapsed().as_secs_f64(),
    }
}

/// Empties `dir` (creating it), all of it or all but `attempts/`.
fn clear_dir(dir: &Path, all: bool) -> std::io::Result<()> {
    if all && dir.exists() {
        std::fs::remove_dir_all(dir)?;
    }
    std::fs::create_dir_all(dir)?;
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        if e.file_name() == "attempts" {
            continue;
        }
        if e.file_type()?.is_dir() {
            std::fs::remove_dir_all(e.path())?;
        } else {
            std::fs::remove_file(e.path())?;
        }
    }
    Ok(())
}

/// Runs the tasks; `progress` gets a line per finished episode.
pub async fn run(
    pool: Arc<Pool>,
    s: Arc<RunSettings>,
    tasks: Vec<LoadedTask>,
    make_agent: PolicyFactory,
    progress: Arc<dyn Fn(&str) + Send + Sync>,
) -> Result<RunOutcome, RunError> {
    write_run_json(&s, &tasks, None)?;
    let mut jobs = Vec::new();
    let largest = s.budgets.iter().copied().max().unwrap_or(0);
    // With checkpoints one episode at the largest budget makes every
    // budget's result; the smaller budgets are cut from it.
    let cut: Vec<usize> = if s.checkpoints {
        let mut c: Vec<usize> = s.budgets.iter().copied().filter(|&b| b < largest).collect();
        c.sort_unstable();
        c.dedup();
        c
    } else {
        vec![]
    };
    for &budget in &s.budgets {
        if s.checkpoints && budget != largest {
            continue;
        }
        for repeat in 1..=s.repeats.max(1) {
            for t in &tasks {
                jobs.push((budget, repeat, t.clone()));
            }
        }
    }
    let shared = Arc::new(Shared {
        pool: pool.clone(),
        s: s.clone(),
        make_agent,
        progress,
        starts: Default::default(),
        done: Default::default(),
        total: jobs.len() * (1 + cut.len()),
        t0: Instant::now(),
    });
    let total = jobs.len() * (1 + cut.len());
    let mut handles = Vec::new();
    let sem = Arc::new(tokio::sync::Semaphore::new(pool.parallel()));
    for (budget, repeat, task) in jobs {
        let dir = task_dir(&s, budget, repeat, &task);
        let name = if s.repeats > 1 {
            format!("{} repeat {repeat}", task.spec.id)
        } else {
            task.spec.id.clone()
        };
        // The budgets cut from this episode, each with its folder.
        let cuts: Vec<(usize, PathBuf)> = cut
            .iter()
            .map(|&b| (b, task_dir(&s, b, repeat, &task)))
            .collect();
        let earlier_cuts: Option<Vec<Finished>> = cuts
            .iter()
            .map(|(b, d)| {
                let text = std::fs::read_to_string(d.join("result.json")).ok()?;
                let result = serde_json::from_str::<EpisodeResult>(&text).ok()?;
                Some(Finished {
                    budget: *b,
                    repeat,
                    result,
                    resumed: true,
                })
            })
            .collect();
        if let Ok(text) = std::fs::read_to_string(dir.join("result.json")) {
            if let Ok(result) = serde_json::from_str::<EpisodeResult>(&text) {
                if result.is_scored() && earlier_cuts.is_some() {
                    let earlier_cuts = earlier_cuts.unwrap_or_default();
                    let mut d = shared.done.lock().unwrap_or_else(|e| e.into_inner());
                    d.0 += 1 + earlier_cuts.len();
                    d.1 += result.success as usize;
                    d.1 += earlier_cuts.iter().filter(|f| f.result.success).count();
                    (shared.progress)(&format!(
                        "[{}/{total}] {name} (steps {budget}): finished before, skipped (score {:.2})",
                        d.0, result.score
                    ));
                    let mut all = vec![Finished {
                        budget,
                        repeat,
                        result,
                        resumed: true,
                    }];
                    all.extend(earlier_cuts);
                    handles.push(tokio::spawn(async move { Ok::<_, RunError>(Ok(all)) }));
                    continue;
                }
                (shared.progress)(&format!(
                    "      {name} (steps {budget}): the earlier result has no score ({}: {}); running it again",
                    result.status.as_str(),
                    result.cause.as_deref().unwrap_or("-")
                ));
            }
        }
        let shared = shared.clone();
        let sem = sem.clone();
        handles.push(tokio::spawn(async move {
            let _slot = sem
                .acquire_owned()
                .await
                .expect("the run's semaphore is never closed");
            let Some(result) = shared.episode(&task, budget, repeat, &dir).await? else {
                let mut not_run = vec![(budget, name.clone())];
                not_run.extend(cuts.iter().map(|(b, _)| (*b, name.clone())));
                return Ok(Err(not_run));
            };
            write_result(&dir, &result).map_err(|source| RunError::Write {
                what: "writing the result into",
                path: dir.clone(),
                source,
            })?;
            (shared.progress)(&shared.line(budget, &result));
            let mut all = vec![];
            for (b, d) in &cuts {
                let r = shared.cut(&task, &result, &dir, *b, d).await?;
                write_result(d, &r).map_err(|source| RunError::Write {
                    what: "writing the result into",
                    path: d.clone(),
                    source,
                })?;
                (shared.progress)(&shared.line(*b, &r));
                all.push(Finished {
                    budget: *b,
                    repeat,
                    result: r,
                    resumed: false,
                });
            }
            // The checkpoints are spent (each holds the machine's memory).
            let _ = std::fs::remove_dir_all(dir.join("checkpoints"));
            all.insert(
                0,
                Finished {
                    budget,
                    repeat,
                    result,
                    resumed: false,
                },
            );
            Ok(Ok(all))
        }));
    }
    let mut outcome = RunOutcome::default();
    let mut first_error = None;
    for h in handles {
        match h.await.map_err(RunError::Join) {
            Ok(Ok(Ok(f))) => outcome.finished.extend(f),
            Ok(Ok(Err(skipped))) => outcome.not_run.extend(skipped),
            Ok(Err(e)) | Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    outcome.stopped = shared.stopped();
    write_run_json(&s, &tasks, Some(&outcome))?;
    Ok(outcome)
}

/// Wilson score interval (95%) of `k` successes in `n`.
pub use stats::wilson;

/// One budget's counts: only scored episodes are in the rate.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counts {
    pub n: usize,
    pub scored: usize,
    pub success: usize,
    pub score_sum: f64,
    pub env_errors: usize,
    pub setup_errors: usize,
    pub not_run: usize,
}

impl Counts {
    pub fn of(o: &RunOutcome, budget: usize) -> Counts {
        let mut c = Counts::default();
        for f in o.finished.iter().filter(|f| f.budget == budget) {
            c.add(&f.result);
        }
        c.not_run = o.not_run.iter().filter(|(b, _)| *b == budget).count();
        c.n += c.not_run;
        c
    }

    fn add(&mut self, r: &EpisodeResult) {
        self.n += 1;
        if r.is_scored() {
            self.scored += 1;
            self.success += r.success as usize;
            self.score_sum += r.score;
        } else if r.status == Status::SetupError || r.end == super::EndReason::SetupError {
            // (An older result.json has no status: its end reason says.)
            self.setup_errors += 1;
        } else {
            self.env_errors += 1;
        }
    }

    /// Successes over scored episodes (None: nothing scored).
    pub fn rate(&self) -> Option<f64> {
        (self.scored > 0).then(|| self.success as f64 / self.scored as f64)
    }
}

/// The summary table: per budget, then per domain and category. Success
/// rates are over scored episodes; episodes without a score (environment
/// or setup errors, not run) have their own columns.
pub fn summary(o: &RunOutcome, s: &RunSettings) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "\nagent {} ({}), {} / {}, provider {}{}\n",
        s.agent,
        s.model,
        s.episode.observation.as_str(),
        s.episode.action_space.as_str(),
        s.provider.as_str(),
        if s.provider != crate::provider::Kind::Local {
            ""
        } else if s.environment["isolate_home"] == true {
            " (no VM: fresh desktops on this host; only /home/user is private, the rest of the host is shared)"
        } else {
            " (no VM: fresh desktops on this host, with no isolation from it or from each other)"
        }
    ));
    out.push_str(&format!(
        "{:<10} {:>6} {:>7} {:>8} {:>7} {:>14} {:>10} {:>10} {:>8}\n",
        "budget",
        "tasks",
        "scored",
        "success",
        "rate",
        "95% CI",
        "mean score",
        "env errors",
        "setup"
    ));
    for &b in &s.budgets {
        let c = Counts::of(o, b);
        let (lo, hi) = wilson(c.success, c.scored);
        let (rate, ci, mean) = match c.rate() {
            Some(r) => (
                format!("{:.1}%", 100.0 * r),
                format!("{:.1}–{:.1}%", 100.0 * lo, 100.0 * hi),
                format!("{:.3}", c.score_sum / c.scored as f64),
            ),
            None => ("-".into(), "-".into(), "-".into()),
        };
        out.push_str(&format!(
            "{:<10} {:>6} {:>7} {:>8} {:>7} {:>14} {:>10} {:>10} {:>8}\n",
            format!("{b} steps"),
            c.n,
            c.scored,
            c.success,
            rate,
            ci,
            mean,
            c.env_errors,
            c.setup_errors
        ));
        if c.not_run > 0 {
            out.push_str(&format!("  {} episode(s) not run\n", c.not_run));
        }
    }
    for (label, key) in [("domain", 0), ("category", 1)] {
        let mut groups: std::collections::BTreeMap<(String, usize), Counts> = Default::default();
        for f in &o.finished {
            let g = if key == 0 {
                f.result.domain.clone()
            } else {
                f.result.category.clone().unwrap_or_else(|| "-".into())
            };
            groups.entry((g, f.budget)).or_default().add(&f.result);
        }
        if groups.len() > s.budgets.len() || key == 0 {
            out.push_str(&format!("by {label}:\n"));
            for ((g, b), c) in groups {
                let unscored = c.env_errors + c.setup_errors;
                out.push_str(&format!(
                    "  {g:<24} {b:>3} steps  {}/{}{}\n",
                    c.success,
                    c.scored,
                    if unscored > 0 {
                        format!("  (+{unscored} without a score)")
                    } else {
                        String::new()
                    }
                ));
            }
        }
    }
    let unscored = o.env_errors() + o.setup_errors();
    if unscored > 0 {
        out.push_str("without a score (not in the rates):\n");
        for f in o.finished.iter().filter(|f| !f.result.is_scored()) {
            out.push_str(&format!(
                "  {} (steps {}): {}: {}\n",
                f.result.task_id,
                f.budget,
                f.result.status.as_str(),
                f.result
                    .cause
                    .as_deref()
                    .and_then(|c| c.lines().next())
                    .unwrap_or("-")
            ));
        }
    }
    if let Some(why) = &o.stopped {
        out.push_str(&format!("the run stopped early: {why}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A provider whose every start fails.
    struct NoStarts;

    impl crate::provider::Provider for NoStarts {
        fn kind(&self) -> &'static str {
            "broken"
        }
        fn start<'a>(
            &'a self,
            _name: &'a str,
        ) -> futures::future::BoxFuture<
            'a,
            Result<Box<dyn crate::provider::Machine>, crate::provider::ProviderError>,
        > {
            use futures::FutureExt;
            async {
                Err(crate::provider::ProviderError::Config(
                    "no machines here".into(),
                ))
            }
            .boxed()
        }
    }

    #[tokio::test]
    async fn a_budget_whose_checkpoint_does_not_start_or_was_not_saved_has_no_score() {
        let task = crate::task::load_file(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("../tasks/examples/editor-save-text.json"),
        )
        .unwrap();
        let out = tempfile::tempdir().unwrap();
        let s = Arc::new(RunSettings {
            out: out.path().to_path_buf(),
            model: "scripted".into(),
            agent: "scripted".into(),
            budgets: vec![2, 3, 15],
            episode: EpisodeSettings::new(Default::default(), Default::default(), 15),
            provider: crate::provider::Kind::Qemu,
            parallel: 1,
            retries: 1,
            environment: serde_json::Value::Null,
            repeats: 1,
            vary_seed: false,
            checkpoints: true,
        });
        let shared = Shared {
            pool: Arc::new(Pool::new(Arc::new(NoStarts), 1).unwrap()),
            s: s.clone(),
            make_agent: Arc::new(|| Err("unused".into())),
            progress: Arc::new(|_: &str| {}),
            starts: Default::default(),
            done: Default::default(),
            total: 3,
            t0: Instant::now(),
        };
        let src = task_dir(&s, 15, 1, &task);
        std::fs::create_dir_all(&src).unwrap();
        let mut full = EpisodeResult::new(
            crate::episode::task_info(&task),
            15,
            super::super::EndReason::Done,
        );
        full.steps_used = 5;
        full.score = 1.0;
        full.success = true;
        full.checkpoints = vec![
            super::super::CheckpointSaved {
                steps: 2,
                seconds: 1.0,
                error: None,
            },
            super::super::CheckpointSaved {
                steps: 3,
                seconds: 1.0,
                error: Some("QMP: migration failed".into()),
            },
        ];
        let r = shared
            .cut(&task, &full, &src, 2, &task_dir(&s, 2, 1, &task))
            .await
            .unwrap();
        assert_eq!(r.status, Status::EnvError, "{r:#?}");
        assert!(
            r.cause
                .as_deref()
                .unwrap()
                .contains("cannot start from checkpoints"),
            "{r:#?}"
        );
        assert_eq!(r.attempts.len(), 1, "retried once on a fresh machine");
        let r = shared
            .cut(&task, &full, &src, 3, &task_dir(&s, 3, 1, &task))
            .await
            .unwrap();
        assert_eq!(r.status, Status::EnvError);
        assert!(
            r.cause.as_deref().unwrap().contains("migration failed"),
            "{r:#?}"
        );
        assert!(!r.is_scored() && r.score == 0.0);
        // An episode that ended within the budget gives its own result.
        full.steps_used = 3;
        let r = shared
            .cut(&task, &full, &src, 3, &task_dir(&s, 3, 1, &task))
            .await
            .unwrap();
        assert!(r.success && r.max_steps == 3, "{r:#?}");
        assert_eq!(r.from_checkpoint.unwrap().kind, "ended");
    }

    #[test]
    fn failures_that_differ_only_in_numbers_have_one_shape() {
        let a = "no machine: VM pool0: QEMU (pid 1234) exited (exit code 1); last lines of /c/vms/pool0-1-0/qemu.log:\nboom";
        let b = "no machine: VM pool1: QEMU (pid 99) exited (exit code 1); last lines of /c/vms/pool1-1-1/qemu.log:\nbang";
        assert_eq!(failure_shape(a), failure_shape(b));
        assert_ne!(
            failure_shape(a),
            failure_shape("no machine: VM pool0: the boot stalled")
        );
    }

    #[test]
    fn unscored_episodes_are_out_of_the_rate_and_in_their_own_column() {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../tasks/examples/editor-save-text.json");
        let task = crate::task::load_file(&path).unwrap();
        let mut ok = EpisodeResult::new(
            crate::episode::task_info(&task),
            15,
            super::super::EndReason::Done,
        );
        ok.score = 1.0;
        ok.success = true;
        let env = EpisodeResult::env_error(
            crate::episode::task_info(&task),
            15,
            "QEMU (pid 1) was killed by signal 9".into(),
        );
        let mut setup = EpisodeResult::new(
            crate::episode::task_info(&task),
            15,
            super::super::EndReason::Budget,
        );
        setup.fault(Status::SetupError, "config[0] failed".into());
        let f = |r: &EpisodeResult| Finished {
            budget: 15,
            repeat: 1,
            result: r.clone(),
            resumed: false,
        };
        let o = RunOutcome {
            finished: vec![f(&ok), f(&env), f(&setup)],
            not_run: vec![(15, "t4".into())],
            stopped: Some("machines failed".into()),
        };
        let c = Counts::of(&o, 15);
        assert_eq!(
            (
                c.n,
                c.scored,
                c.success,
                c.env_errors,
                c.setup_errors,
                c.not_run
            ),
            (4, 1, 1, 1, 1, 1)
        );
        assert_eq!(c.rate(), Some(1.0));
        assert_eq!(env.end, super::super::EndReason::EnvError);
        assert!(!env.is_scored() && !setup.is_scored() && ok.is_scored());
        // An older result.json without `status` that ended in an
        // environment error is not a score either.
        let mut old: serde_json::Value = serde_json::to_value(&env).unwrap();
        old.as_object_mut().unwrap().remove("status");
        let old: EpisodeResult = serde_json::from_value(old).unwrap();
        assert!(!old.is_scored());
    }
}
