//! `deskenv run`: every task × every step budget, through a pool of
//! machines, into OSWorld's layout
//! `<out>/<action_space>/<observation>/<model>/<domain>/<task>/`
//! (`<model>-steps<N>` when several budgets run at once), with
//! `<out>/run.json` holding the settings. Rerunning the same command
//! resumes: a task folder with a `result.json` is done and skipped, any
//! other task folder is cleared and run again.

use super::{run_episode, EpisodeResult, EpisodeSettings};
use crate::agent::Agent;
use crate::pool::Pool;
use crate::task::LoadedTask;
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
    pub provider: String,
    pub parallel: usize,
    /// What run.json records about the environment (image digest, …).
    pub environment: serde_json::Value,
}

/// One finished (or resumed) episode.
#[derive(Debug, Clone)]
pub struct Finished {
    pub budget: usize,
    pub result: EpisodeResult,
    pub resumed: bool,
}

/// Builds a fresh agent per episode.
pub type AgentFactory = Arc<dyn Fn() -> Result<Box<dyn Agent>, String> + Send + Sync>;

fn task_dir(s: &RunSettings, budget: usize, t: &LoadedTask) -> PathBuf {
    let model = if s.budgets.len() > 1 {
        format!("{}-steps{budget}", s.model)
    } else {
        s.model.clone()
    };
    episode_dir(&s.out, &s.episode, &model, t)
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

fn write_run_json(s: &RunSettings, tasks: &[LoadedTask]) -> std::io::Result<()> {
    std::fs::create_dir_all(&s.out)?;
    let v = serde_json::json!({
        "deskenv_version": env!("CARGO_PKG_VERSION"),
        "settings": s,
        "tasks": tasks.iter().map(|t| serde_json::json!({
            "id": t.spec.id, "domain": t.domain, "file": t.path, "sha256": t.sha256,
        })).collect::<Vec<_>>(),
        "written_at": std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0),
    });
    let tmp = s.out.join("run.json.tmp");
    std::fs::write(&tmp, serde_json::to_string_pretty(&v).unwrap_or_default())?;
    std::fs::rename(tmp, s.out.join("run.json"))
}

/// Writes `result.txt`, then `result.json` through a rename (its presence
/// marks the episode finished).
pub fn write_result(dir: &Path, r: &EpisodeResult) -> std::io::Result<()> {
    std::fs::write(dir.join("result.txt"), format!("{}\n", r.score))?;
    // result.json last, through a rename: its presence means "finished".
    let tmp = dir.join("result.json.tmp");
    std::fs::write(&tmp, serde_json::to_string_pretty(r).unwrap_or_default())?;
    std::fs::rename(tmp, dir.join("result.json"))
}

/// Runs the tasks; `progress` gets a line per finished episode.
pub async fn run(
    pool: Arc<Pool>,
    s: Arc<RunSettings>,
    tasks: Vec<LoadedTask>,
    make_agent: AgentFactory,
    progress: Arc<dyn Fn(&str) + Send + Sync>,
) -> anyhow::Result<Vec<Finished>> {
    write_run_json(&s, &tasks)?;
    let mut jobs = Vec::new();
    for &budget in &s.budgets {
        for t in &tasks {
            jobs.push((budget, t.clone()));
        }
    }
    let total = jobs.len();
    let t0 = Instant::now();
    let done = Arc::new(std::sync::Mutex::new((0usize, 0usize, 0usize))); // finished, successes, run now
    let mut handles = Vec::new();
    let sem = Arc::new(tokio::sync::Semaphore::new(pool.parallel()));
    for (budget, task) in jobs {
        let dir = task_dir(&s, budget, &task);
        if let Ok(text) = std::fs::read_to_string(dir.join("result.json")) {
            if let Ok(result) = serde_json::from_str::<EpisodeResult>(&text) {
                let mut d = done.lock().unwrap_or_else(|e| e.into_inner());
                d.0 += 1;
                d.1 += result.success as usize;
                progress(&format!(
                    "[{}/{total}] {} (steps {budget}): finished before, skipped (score {:.2})",
                    d.0, task.spec.id, result.score
                ));
                handles.push(tokio::spawn(async move {
                    Ok::<_, anyhow::Error>(Finished {
                        budget,
                        result,
                        resumed: true,
                    })
                }));
                continue;
            }
        }
        let pool = pool.clone();
        let s = s.clone();
        let make_agent = make_agent.clone();
        let progress = progress.clone();
        let done = done.clone();
        let sem = sem.clone();
        handles.push(tokio::spawn(async move {
            let _slot = sem.acquire_owned().await?;
            // A half-finished folder from an earlier run is cleared.
            if dir.exists() {
                std::fs::remove_dir_all(&dir)?;
            }
            std::fs::create_dir_all(&dir)?;
            let mut agent = make_agent().map_err(|e| anyhow::anyhow!(e))?;
            let t = Instant::now();
            let result = match pool.acquire().await {
                Ok(lease) => {
                    let reset_s = t.elapsed().as_secs_f64();
                    let mut ep = s.episode.clone();
                    ep.max_steps = budget;
                    let r = run_episode(lease.machine(), &task, agent.as_mut(), &ep, &dir, reset_s).await;
                    lease.release().await;
                    r
                }
                Err(e) => {
                    let mut r = EpisodeResult::new(&task, budget, super::EndReason::EnvError);
                    r.errors.push(format!("no machine: {e}"));
                    r
                }
            };
            write_result(&dir, &result)?;
            let line = {
                let mut d = done.lock().unwrap_or_else(|e| e.into_inner());
                d.0 += 1;
                d.1 += result.success as usize;
                d.2 += 1;
                let elapsed = t0.elapsed().as_secs_f64();
                let eta = elapsed / d.2 as f64 * (total - d.0) as f64 / pool.parallel() as f64;
                format!(
                    "[{}/{total}] {} (steps {budget}): score {:.2}{} in {:.1}s, {:?} after {} step(s){}; success so far {}/{}; ETA {:.0}s",
                    d.0,
                    result.task_id,
                    result.score,
                    if result.success { " (success)" } else { "" },
                    result.timings.total_s,
                    result.end,
                    result.steps_used,
                    result.errors.first().map(|e| format!(" [{e}]")).unwrap_or_default(),
                    d.1,
                    d.0,
                    eta
                )
            };
            progress(&line);
            Ok(Finished { budget, result, resumed: false })
        }));
    }
    let mut out = Vec::new();
    for h in handles {
        out.push(h.await??);
    }
    Ok(out)
}

/// Wilson score interval (95%) of `k` successes in `n`.
pub fn wilson(k: usize, n: usize) -> (f64, f64) {
    if n == 0 {
        return (0.0, 0.0);
    }
    let z = 1.959_964f64;
    let (n, p) = (n as f64, k as f64 / n as f64);
    let denom = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / denom;
    let half = z * ((p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt()) / denom;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// The summary table: per budget, then per domain and category.
pub fn summary(finished: &[Finished], s: &RunSettings) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "\nagent {} ({}), {} / {}, provider {}{}\n",
        s.agent,
        s.model,
        s.episode.observation.as_str(),
        s.episode.action_space.as_str(),
        s.provider,
        if s.provider != "local" {
            ""
        } else if s.environment["isolate_home"] == true {
            " (no VM: fresh desktops on this host; only /home/user is private, the rest of the host is shared)"
        } else {
            " (no VM: fresh desktops on this host, with no isolation from it or from each other)"
        }
    ));
    out.push_str(&format!(
        "{:<10} {:>6} {:>8} {:>9} {:>16} {:>10} {:>8}\n",
        "budget", "tasks", "success", "rate", "95% CI", "mean score", "errors"
    ));
    for &b in &s.budgets {
        let rs: Vec<&EpisodeResult> = finished
            .iter()
            .filter(|f| f.budget == b)
            .map(|f| &f.result)
            .collect();
        let n = rs.len();
        let k = rs.iter().filter(|r| r.success).count();
        let errors = rs
            .iter()
            .filter(|r| {
                matches!(
                    r.end,
                    super::EndReason::EnvError
                        | super::EndReason::SetupError
                        | super::EndReason::AgentError
                )
            })
            .count();
        let mean = if n > 0 {
            rs.iter().map(|r| r.score).sum::<f64>() / n as f64
        } else {
            0.0
        };
        let (lo, hi) = wilson(k, n);
        out.push_str(&format!(
            "{:<10} {:>6} {:>8} {:>8.1}% {:>7.1}–{:>5.1}% {:>10.3} {:>8}\n",
            format!("{b} steps"),
            n,
            k,
            100.0 * k as f64 / n.max(1) as f64,
            100.0 * lo,
            100.0 * hi,
            mean,
            errors
        ));
    }
    for (label, key) in [("domain", 0), ("category", 1)] {
        let mut groups: std::collections::BTreeMap<(String, usize), (usize, usize)> =
            Default::default();
        for f in finished {
            let g = if key == 0 {
                f.result.domain.clone()
            } else {
                f.result.category.clone().unwrap_or_else(|| "-".into())
            };
            let e = groups.entry((g, f.budget)).or_default();
            e.0 += 1;
            e.1 += f.result.success as usize;
        }
        if groups.len() > s.budgets.len() || key == 0 {
            out.push_str(&format!("by {label}:\n"));
            for ((g, b), (n, k)) in groups {
                out.push_str(&format!("  {g:<24} {b:>3} steps  {k}/{n}\n"));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_interval() {
        let (lo, hi) = wilson(5, 10);
        assert!(
            (lo - 0.2366).abs() < 1e-3 && (hi - 0.7634).abs() < 1e-3,
            "{lo} {hi}"
        );
        assert_eq!(wilson(0, 0), (0.0, 0.0));
        let (lo, hi) = wilson(6, 6);
        assert!(lo > 0.6 && hi == 1.0);
    }
}
