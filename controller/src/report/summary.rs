//! One run's figures per step budget: success rate and mean score with
//! bootstrap intervals (tasks resampled, the RNG seed recorded), the same
//! per stage (category), difficulty, application and domain, pass@k over
//! repeats, latency (the agent's share against the environment's), tokens
//! and cost, steps used, end reasons, and the episodes without a score
//! (environment and setup errors), kept apart from every rate.

use super::compare::Interval;
use super::Run;
use crate::episode::{EndReason, EpisodeResult};
use serde::Serialize;
use stats::{Bootstrap, StatsError};
use std::collections::BTreeMap;

/// A group of scored episodes: how many, and their success rate and mean
/// score with intervals.
#[derive(Debug, Clone, Serialize)]
pub struct Rates {
    pub episodes: usize,
    pub successes: usize,
    pub success: Interval,
    pub score: Interval,
}

impl Rates {
    /// Of (passed, score) pairs; None for an empty group.
    fn of_values(values: &[(bool, f64)], boot: &Bootstrap) -> Result<Option<Rates>, StatsError> {
        if values.is_empty() {
            return Ok(None);
        }
        let success: Vec<f64> = values.iter().map(|v| f64::from(u8::from(v.0))).collect();
        let score: Vec<f64> = values.iter().map(|v| v.1).collect();
        Ok(Some(Rates {
            episodes: values.len(),
            successes: values.iter().filter(|v| v.0).count(),
            success: stats::bootstrap_mean(&success, boot)?.into(),
            score: stats::bootstrap_mean(&score, boot)?.into(),
        }))
    }

    /// None for an empty group.
    pub fn of(results: &[&EpisodeResult], boot: &Bootstrap) -> Result<Option<Rates>, StatsError> {
        if results.is_empty() {
            return Ok(None);
        }
        let success: Vec<f64> = results
            .iter()
            .map(|r| if r.success { 1.0 } else { 0.0 })
            .collect();
        let score: Vec<f64> = results.iter().map(|r| r.score).collect();
        Ok(Some(Rates {
            episodes: results.len(),
            successes: results.iter().filter(|r| r.success).count(),
            success: stats::bootstrap_mean(&success, boot)?.into(),
            score: stats::bootstrap_mean(&score, boot)?.into(),
        }))
    }
}

/// One row of a breakdown: a stage, a difficulty, an application or a
/// domain.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub key: String,
    pub rates: Rates,
}

/// Where the time of a budget's episodes went (seconds unless named).
#[derive(Debug, Clone, Serialize, Default)]
pub struct Latency {
    /// Per episode: median wall time, its agent share (model or script
    /// calls) and the environment's (reset, setup, observe, act, settle,
    /// idle wait, evaluation).
    pub episode_median_s: f64,
    pub agent_median_s: f64,
    pub env_median_s: f64,
    /// Per step, medians over every step of the budget (ms).
    pub step_agent_median_ms: f64,
    pub step_env_median_ms: f64,
}

/// One budget of one run.
#[derive(Debug, Clone, Serialize)]
pub struct BudgetSummary {
    pub budget: usize,
    /// Episodes found, scored or not.
    pub episodes: usize,
    /// Over scored episodes only; None when nothing was scored.
    pub overall: Option<Rates>,
    pub by_category: Vec<Row>,
    pub by_difficulty: Vec<Row>,
    pub by_app: Vec<Row>,
    pub by_domain: Vec<Row>,
    /// Per sub-check (its `check` name, else its metric), over the scored
    /// episodes that have it: how often it passed (score ≥ 0.95) and its
    /// mean score; with CoDA's two accuracies, their joint rate as
    /// "execution_accuracy ∧ discovery_accuracy".
    pub by_check: Vec<Row>,
    /// pass@k for k = 1..=repeats (the unbiased estimator, averaged over
    /// tasks), when tasks ran more than once.
    pub pass_at_k: Vec<(usize, f64)>,
    pub latency: Latency,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// From `--price-per-mtok` (dollars per million tokens, both kinds).
    pub cost: Option<f64>,
    pub steps_mean: f64,
    /// End reasons of every episode (done, fail, budget, …) with counts.
    pub ends: BTreeMap<String, usize>,
    /// Episodes without a score: "task (seed N): cause".
    pub env_errors: Vec<String>,
    pub setup_errors: Vec<String>,
}

/// A run's figures.
#[derive(Debug, Clone, Serialize)]
pub struct RunSummary {
    pub label: String,
    pub dir: String,
    pub bootstrap_resamples: usize,
    pub bootstrap_seed: u64,
    pub budgets: Vec<BudgetSummary>,
    /// Per task (and seed), the smallest budget at which it succeeded;
    /// None: at no budget.
    pub first_success: Vec<(String, Option<usize>)>,
}

fn median(mut xs: Vec<f64>) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    xs.sort_by(f64::total_cmp);
    stats::quantile(&xs, 0.5)
}

pub(super) fn end_name(e: EndReason) -> String {
    serde_json::to_value(e)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// "task (seed N)" or "task (seed N, repeat R)".
pub fn episode_key(r: &EpisodeResult) -> String {
    match r.repeat {
        Some(k) => format!("{} (seed {}, repeat {k})", r.task_id, r.seed),
        None => format!("{} (seed {})", r.task_id, r.seed),
    }
}

/// The sub-check breakdown of [`BudgetSummary::by_check`].
fn by_check(scored: &[&EpisodeResult], boot: &Bootstrap) -> Result<Vec<Row>, StatsError> {
    const JOINT: &str = "execution_accuracy ∧ discovery_accuracy";
    let pass = |s: f64| s >= crate::episode::SUCCESS_THRESHOLD;
    let mut groups: BTreeMap<String, Vec<(bool, f64)>> = BTreeMap::new();
    for r in scored {
        for m in &r.metrics {
            let key = m.check.clone().unwrap_or_else(|| m.func.clone());
            groups
                .entry(key)
                .or_default()
                .push((pass(m.score), m.score));
        }
        let of = |f: &str| r.metrics.iter().find(|m| m.func == f).map(|m| m.score);
        if let (Some(e), Some(d)) = (of("execution_accuracy"), of("discovery_accuracy")) {
            let both = pass(e) && pass(d);
            groups
                .entry(JOINT.into())
                .or_default()
                .push((both, f64::from(u8::from(both))));
        }
    }
    let mut out = vec![];
    for (key, values) in groups {
        if let Some(rates) = Rates::of_values(&values, boot)? {
            out.push(Row { key, rates });
        }
    }
    Ok(out)
}

fn rows(
    scored: &[&EpisodeResult],
    keys: impl Fn(&EpisodeResult) -> Vec<String>,
    boot: &Bootstrap,
) -> Result<Vec<Row>, StatsError> {
    let mut groups: BTreeMap<String, Vec<&EpisodeResult>> = BTreeMap::new();
    for r in scored {
        for k in keys(r) {
            groups.entry(k).or_default().push(r);
        }
    }
    let mut out = vec![];
    for (key, rs) in groups {
        if let Some(rates) = Rates::of(&rs, boot)? {
            out.push(Row { key, rates });
        }
    }
    Ok(out)
}

/// pass@k for k = 1..=max repeats, over tasks that ran that many times
/// or more (by task id: the repeats of `--vary-seed` have other seeds).
fn pass_at_k(scored: &[&EpisodeResult]) -> Result<Vec<(usize, f64)>, StatsError> {
    let mut per_task: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for r in scored {
        if r.repeat.is_none() {
            continue;
        }
        let e = per_task.entry(r.task_id.clone()).or_default();
        e.0 += 1;
        e.1 += usize::from(r.success);
    }
    let Some(max) = per_task.values().map(|(n, _)| *n).max() else {
        return Ok(vec![]);
    };
    if max < 2 {
        return Ok(vec![]);
    }
    let mut out = vec![];
    for k in 1..=max {
        let vals: Vec<f64> = per_task
            .values()
            .filter(|(n, _)| *n >= k)
            .map(|&(n, c)| stats::pass_at_k(n, c, k))
            .collect::<Result<_, _>>()?;
        if !vals.is_empty() {
            out.push((k, stats::mean(&vals)));
        }
    }
    Ok(out)
}

impl BudgetSummary {
    fn of(
        budget: usize,
        all: &[&EpisodeResult],
        price_per_mtok: Option<f64>,
        boot: &Bootstrap,
    ) -> Result<BudgetSummary, StatsError> {
        let scored: Vec<&EpisodeResult> = all.iter().copied().filter(|r| r.is_scored()).collect();
        let mut ends = BTreeMap::new();
        for r in all {
            *ends.entry(end_name(r.end)).or_insert(0) += 1;
        }
        let unscored = |status: crate::episode::Status| -> Vec<String> {
            all.iter()
                .filter(|r| !r.is_scored() && r.status == status)
                .map(|r| {
                    format!(
                        "{}: {}",
                        episode_key(r),
                        r.cause
                            .clone()
                            .unwrap_or_else(|| "no cause recorded".into())
                    )
                })
                .collect()
        };
        let mut env_errors = unscored(crate::episode::Status::EnvError);
        // An old result.json without `status` that ended in an environment
        // error counts there too.
        env_errors.extend(
            all.iter()
                .filter(|r| {
                    r.status == crate::episode::Status::Scored && r.end == EndReason::EnvError
                })
                .map(|r| format!("{}: environment error", episode_key(r))),
        );
        let agent_s = |r: &EpisodeResult| {
            r.timings.steps.iter().map(|s| s.agent_ms).sum::<f64>() / 1000.0 + 0.0
        };
        let latency = Latency {
            episode_median_s: median(scored.iter().map(|r| r.timings.total_s).collect()),
            agent_median_s: median(scored.iter().map(|r| agent_s(r)).collect()),
            env_median_s: median(
                scored
                    .iter()
                    .map(|r| (r.timings.total_s - agent_s(r)).max(0.0))
                    .collect(),
            ),
            step_agent_median_ms: median(
                scored
                    .iter()
                    .flat_map(|r| r.timings.steps.iter().map(|s| s.agent_ms))
                    .collect(),
            ),
            step_env_median_ms: median(
                scored
                    .iter()
                    .flat_map(|r| {
                        r.timings
                            .steps
                            .iter()
                            .map(|s| s.observe_ms + s.act_ms + s.settle_ms)
                    })
                    .collect(),
            ),
        };
        let prompt_tokens = all.iter().map(|r| r.tokens.prompt_tokens).sum::<u64>();
        let completion_tokens = all.iter().map(|r| r.tokens.completion_tokens).sum::<u64>();
        Ok(BudgetSummary {
            budget,
            episodes: all.len(),
            overall: Rates::of(&scored, boot)?,
            by_category: rows(
                &scored,
                |r| vec![r.category.clone().unwrap_or_else(|| "(none)".into())],
                boot,
            )?,
            by_difficulty: rows(
                &scored,
                |r| vec![r.difficulty.clone().unwrap_or_else(|| "(none)".into())],
                boot,
            )?,
            by_app: rows(&scored, |r| r.related_apps.clone(), boot)?,
            by_domain: rows(&scored, |r| vec![r.domain.clone()], boot)?,
            by_check: by_check(&scored, boot)?,
            pass_at_k: pass_at_k(&scored)?,
            latency,
            prompt_tokens,
            completion_tokens,
            cost: price_per_mtok.map(|p| (prompt_tokens + completion_tokens) as f64 / 1e6 * p),
            steps_mean: if scored.is_empty() {
                0.0
            } else {
                scored.iter().map(|r| r.steps_used as f64).sum::<f64>() / scored.len() as f64
            },
            ends,
            env_errors,
            setup_errors: unscored(crate::episode::Status::SetupError),
        })
    }
}

/// The figures of `run`, per budget (its results' `max_steps`).
pub fn summarize(
    run: &Run,
    price_per_mtok: Option<f64>,
    boot: &Bootstrap,
) -> Result<RunSummary, StatsError> {
    let mut by_budget: BTreeMap<usize, Vec<&EpisodeResult>> = BTreeMap::new();
    for r in &run.results {
        by_budget.entry(r.max_steps).or_default().push(r);
    }
    let mut budgets = vec![];
    for (b, rs) in &by_budget {
        budgets.push(BudgetSummary::of(*b, rs, price_per_mtok, boot)?);
    }
    let mut first: BTreeMap<String, Option<usize>> = BTreeMap::new();
    for (b, rs) in &by_budget {
        for r in rs.iter().filter(|r| r.is_scored()) {
            let e = first
                .entry(format!("{} (seed {})", r.task_id, r.seed))
                .or_insert(None);
            if r.success && e.is_none() {
                *e = Some(*b);
            }
        }
    }
    Ok(RunSummary {
        label: run.label.clone(),
        dir: run.dir.display().to_string(),
        bootstrap_resamples: boot.resamples,
        bootstrap_seed: boot.seed,
        budgets,
        first_success: first.into_iter().collect(),
    })
}

fn pct(i: &Interval) -> String {
    format!(
        "{:5.1} % [{:.1}, {:.1}]",
        100.0 * i.value,
        100.0 * i.lo,
        100.0 * i.hi
    )
}

impl RunSummary {
    /// The figures as plain text, one block per budget.
    pub fn text(&self) -> String {
        let mut s = format!(
            "{}\n  bootstrap 95 % intervals: {} resamples, seed {}\n",
            self.label, self.bootstrap_resamples, self.bootstrap_seed
        );
        for b in &self.budgets {
            s += &format!("  budget {} steps: {} episodes\n", b.budget, b.episodes);
            match &b.overall {
                Some(r) => {
                    s += &format!(
                        "    success {} ({}/{}), mean score {}\n",
                        pct(&r.success),
                        r.successes,
                        r.episodes,
                        pct(&r.score)
                    );
                }
                None => s += "    nothing scored\n",
            }
            for (name, rows) in [
                ("stage", &b.by_category),
                ("difficulty", &b.by_difficulty),
                ("application", &b.by_app),
            ] {
                if rows.len() < 2 {
                    continue;
                }
                s += &format!("    by {name}:\n");
                for r in rows {
                    s += &format!(
                        "      {:<28} {:>3}  success {}\n",
                        r.key,
                        r.rates.episodes,
                        pct(&r.rates.success)
                    );
                }
            }
            for (k, p) in &b.pass_at_k {
                s += &format!("    pass@{k} {:.1} %\n", 100.0 * p);
            }
            let l = &b.latency;
            s += &format!(
                "    per episode (median): {:.1} s, agent {:.1} s, environment {:.1} s; per step: agent {:.0} ms, environment {:.0} ms\n",
                l.episode_median_s, l.agent_median_s, l.env_median_s, l.step_agent_median_ms, l.step_env_median_ms
            );
            s += &format!(
                "    steps used (mean) {:.1}; tokens {} in, {} out",
                b.steps_mean, b.prompt_tokens, b.completion_tokens
            );
            if let Some(c) = b.cost {
                s += &format!("; cost ${c:.2}");
            }
            s += "\n    ends: ";
            s += &b
                .ends
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect::<Vec<_>>()
                .join(", ");
            s += "\n";
            for (what, list) in [
                ("environment errors (no score)", &b.env_errors),
                ("setup errors (no score)", &b.setup_errors),
            ] {
                if !list.is_empty() {
                    s += &format!("    {what}: {}\n", list.len());
                    for e in list {
                        s += &format!("      {e}\n");
                    }
                }
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::episode::{EndReason, Status, TaskInfo};
    use std::path::PathBuf;

    pub(crate) fn result(task: &str, budget: usize, score: f64, apps: &[&str]) -> EpisodeResult {
        let info = TaskInfo {
            instruction: String::new(),
            id: task.into(),
            domain: "ds".into(),
            category: Some(
                if task.starts_with('w') {
                    "wrangling"
                } else {
                    "modelling"
                }
                .into(),
            ),
            difficulty: Some("hard".into()),
            related_apps: apps.iter().map(|a| a.to_string()).collect(),
        };
        let mut r = EpisodeResult::new(info, budget, EndReason::Done);
        r.score = score;
        r.success = score >= 0.95;
        r.seed = 1;
        r.steps_used = 4;
        r
    }

    fn run(results: Vec<EpisodeResult>) -> Run {
        Run {
            dir: "r".into(),
            label: "r".into(),
            manifest: None,
            episode_dirs: vec![PathBuf::new(); results.len()],
            results,
        }
    }

    #[test]
    fn sub_checks_have_their_own_rates_and_coda_gets_the_joint_one() {
        use crate::episode::MetricResult;
        let with = |ea: f64, da: f64| {
            let mut r = result("w1", 15, ea.min(da), &[]);
            r.metrics = vec![
                MetricResult::plain("execution_accuracy", ea, String::new()),
                MetricResult::plain("discovery_accuracy", da, String::new()),
            ];
            r
        };
        let s = summarize(
            &run(vec![
                with(1.0, 0.0),
                with(1.0, 1.0),
                with(0.0, 1.0),
                with(1.0, 1.0),
            ]),
            None,
            &Bootstrap::default(),
        )
        .unwrap();
        let rate = |k: &str| {
            let r = s.budgets[0].by_check.iter().find(|r| r.key == k).unwrap();
            (r.rates.episodes, r.rates.successes)
        };
        assert_eq!(rate("execution_accuracy"), (4, 3));
        assert_eq!(rate("discovery_accuracy"), (4, 3));
        assert_eq!(rate("execution_accuracy ∧ discovery_accuracy"), (4, 2));
    }

    #[test]
    fn rates_per_budget_group_and_keep_unscored_episodes_apart() {
        let mut rs = vec![
            result("w1", 15, 1.0, &["calc", "terminal"]),
            result("w2", 15, 0.0, &["calc"]),
            result("m1", 15, 1.0, &["jupyter"]),
            result("w1", 30, 1.0, &["calc", "terminal"]),
            result("w2", 30, 1.0, &["calc"]),
        ];
        let mut broken = result("m1", 30, 0.0, &["jupyter"]);
        broken.fault(Status::EnvError, "QEMU died".into());
        rs.push(broken);
        let s = summarize(&run(rs), Some(2.0), &Bootstrap::default()).unwrap();
        assert_eq!(s.budgets.len(), 2);
        let b15 = &s.budgets[0];
        let o = b15.overall.as_ref().unwrap();
        assert_eq!((o.episodes, o.successes), (3, 2));
        assert!((o.success.value - 2.0 / 3.0).abs() < 1e-12);
        assert!(o.success.lo <= o.success.value && o.success.value <= o.success.hi);
        let calc = b15.by_app.iter().find(|r| r.key == "calc").unwrap();
        assert_eq!((calc.rates.episodes, calc.rates.successes), (2, 1));
        assert_eq!(b15.by_category.len(), 2);
        let b30 = &s.budgets[1];
        // The environment error is no score: 2 of 2 scored, and it is listed.
        assert_eq!(b30.overall.as_ref().unwrap().episodes, 2);
        assert_eq!(b30.env_errors.len(), 1);
        assert!(
            b30.env_errors[0].contains("QEMU died"),
            "{:?}",
            b30.env_errors
        );
        // w2 first succeeded at 30, m1 at 15, w1 at 15.
        let first: BTreeMap<_, _> = s.first_success.iter().cloned().collect();
        assert_eq!(first["w2 (seed 1)"], Some(30));
        assert_eq!(first["m1 (seed 1)"], Some(15));
        let t = s.text();
        assert!(t.contains("environment errors (no score): 1"), "{t}");
        assert!(t.contains("by application:"), "{t}");
    }

    #[test]
    fn pass_at_k_over_repeats_uses_the_unbiased_estimator() {
        // Task a: 1 of 3 repeats succeed; task b: 3 of 3.
        let mut rs = vec![];
        for (task, wins) in [("a", 1), ("b", 3)] {
            for k in 0..3u32 {
                let mut r = result(task, 15, if (k as usize) < wins { 1.0 } else { 0.0 }, &[]);
                r.repeat = Some(k);
                rs.push(r);
            }
        }
        let s = summarize(&run(rs), None, &Bootstrap::default()).unwrap();
        let p = &s.budgets[0].pass_at_k;
        assert_eq!(p.len(), 3);
        // pass@1 = mean(1/3, 1); pass@2 for a = 1 − C(2,2)/C(3,2) = 2/3.
        assert!((p[0].1 - (1.0 / 3.0 + 1.0) / 2.0).abs() < 1e-12);
        assert!((p[1].1 - (2.0 / 3.0 + 1.0) / 2.0).abs() < 1e-12);
        assert!((p[2].1 - 1.0).abs() < 1e-12);
    }
}
