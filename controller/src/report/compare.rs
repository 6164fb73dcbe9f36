//! Two runs on the same tasks: per budget, the episodes scored in both are
//! paired by (task id, seed); the difference in success rate and in mean
//! score gets a paired bootstrap interval, success an exact McNemar test,
//! scores a paired permutation test, and the run size a minimum
//! detectable difference at 80 % power. [`Comparison::text`] says it in
//! words.

use super::Run;
use crate::episode::EpisodeResult;
use serde::Serialize;
use stats::{Bootstrap, StatsError};
use std::collections::{BTreeMap, BTreeSet};

/// The significance level of every test here.
pub const ALPHA: f64 = 0.05;
/// The power the minimum detectable difference is computed for.
pub const POWER: f64 = 0.8;

/// Why two runs could not be compared.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    #[error("the runs share no step budget: {a} has {a_budgets:?}, {b} has {b_budgets:?}")]
    NoBudgetInCommon {
        a: String,
        b: String,
        a_budgets: Vec<usize>,
        b_budgets: Vec<usize>,
    },
    #[error("budget {budget}: no task was scored in both runs (a task pairs by id and seed; {a} has e.g. {a_example}, {b} has e.g. {b_example})")]
    NothingPaired {
        budget: usize,
        a: String,
        b: String,
        a_example: String,
        b_example: String,
    },
    #[error("budget {budget}: {source}")]
    Stats {
        budget: usize,
        #[source]
        source: StatsError,
    },
}

/// A value with its 95 % interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    pub value: f64,
    pub lo: f64,
    pub hi: f64,
}

impl From<stats::Estimate> for Interval {
    fn from(e: stats::Estimate) -> Self {
        Interval {
            value: e.value,
            lo: e.lo,
            hi: e.hi,
        }
    }
}

/// One budget's comparison of run A with run B.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub a: String,
    pub b: String,
    pub budget: usize,
    /// Episodes scored in both runs (the pairs).
    pub paired: usize,
    /// "task (seed N)" scored in one run and missing from the other.
    pub only_in_a: Vec<String>,
    pub only_in_b: Vec<String>,
    /// In both runs, but without a score in one of them (an environment
    /// or setup error): left out of every figure.
    pub unscored: Vec<String>,
    pub success_a: Interval,
    pub success_b: Interval,
    pub score_a: Interval,
    pub score_b: Interval,
    /// A − B over the pairs, with a paired bootstrap interval.
    pub success_diff: Interval,
    pub score_diff: Interval,
    /// Exact McNemar on success: tasks solved only by A, only by B.
    pub mcnemar_a_only: usize,
    pub mcnemar_b_only: usize,
    pub mcnemar_p: f64,
    /// The paired permutation test on scores.
    pub permutation_p: f64,
    pub permutation_exact: bool,
    pub permutation_assignments: usize,
    /// Standard deviation of the paired success differences (0/±1).
    pub success_diff_sd: f64,
    /// The smallest difference in success rate a two-sided test at
    /// [`ALPHA`] detects with [`POWER`] over this many pairs, at the
    /// observed spread (at the largest possible spread, sd 1, when the
    /// paired differences do not vary).
    pub mdd_success: Option<f64>,
    pub mdd_assumed_worst_case: bool,
    pub alpha: f64,
    pub bootstrap_resamples: usize,
    pub bootstrap_seed: u64,
}

/// An episode's pairing key: task id, seed and repeat (0 without).
type Key = (String, u64, u32);

fn key_of(r: &EpisodeResult) -> Key {
    (r.task_id.clone(), r.seed, r.repeat.unwrap_or(0))
}

fn name_of(k: &Key) -> String {
    if k.2 == 0 {
        format!("{} (seed {})", k.0, k.1)
    } else {
        format!("{} (seed {}, repeat {})", k.0, k.1, k.2)
    }
}

fn budgets(run: &Run) -> BTreeSet<usize> {
    run.results.iter().map(|r| r.max_steps).collect()
}

/// Compares `a` with `b` at every budget both have.
pub fn compare(a: &Run, b: &Run, boot: &Bootstrap) -> Result<Vec<Comparison>, CompareError> {
    let (ba, bb) = (budgets(a), budgets(b));
    let common: Vec<usize> = ba.intersection(&bb).copied().collect();
    if common.is_empty() {
        return Err(CompareError::NoBudgetInCommon {
            a: a.label.clone(),
            b: b.label.clone(),
            a_budgets: ba.into_iter().collect(),
            b_budgets: bb.into_iter().collect(),
        });
    }
    common
        .into_iter()
        .map(|budget| compare_budget(a, b, budget, boot))
        .collect()
}

fn at_budget(run: &Run, budget: usize) -> BTreeMap<Key, &EpisodeResult> {
    run.results
        .iter()
        .filter(|r| r.max_steps == budget)
        .map(|r| (key_of(r), r))
        .collect()
}

fn compare_budget(
    a: &Run,
    b: &Run,
    budget: usize,
    boot: &Bootstrap,
) -> Result<Comparison, CompareError> {
    let (ma, mb) = (at_budget(a, budget), at_budget(b, budget));
    let mut pairs = vec![];
    let mut unscored = vec![];
    for (k, ra) in &ma {
        if let Some(rb) = mb.get(k) {
            if ra.is_scored() && rb.is_scored() {
                pairs.push((*ra, *rb));
            } else {
                unscored.push(name_of(k));
            }
        }
    }
    let only = |x: &BTreeMap<Key, &EpisodeResult>, y: &BTreeMap<Key, &EpisodeResult>| {
        x.keys()
            .filter(|k| !y.contains_key(*k))
            .map(name_of)
            .collect::<Vec<_>>()
    };
    let (only_in_a, only_in_b) = (only(&ma, &mb), only(&mb, &ma));
    if pairs.is_empty() {
        let example = |m: &BTreeMap<Key, &EpisodeResult>| {
            m.keys()
                .next()
                .map(name_of)
                .unwrap_or_else(|| "nothing".into())
        };
        return Err(CompareError::NothingPaired {
            budget,
            a: a.label.clone(),
            b: b.label.clone(),
            a_example: example(&ma),
            b_example: example(&mb),
        });
    }
    let stat = |source| CompareError::Stats { budget, source };
    let sa: Vec<f64> = pairs.iter().map(|p| p.0.success as u8 as f64).collect();
    let sb: Vec<f64> = pairs.iter().map(|p| p.1.success as u8 as f64).collect();
    let xa: Vec<f64> = pairs.iter().map(|p| p.0.score).collect();
    let xb: Vec<f64> = pairs.iter().map(|p| p.1.score).collect();
    let oka: Vec<bool> = pairs.iter().map(|p| p.0.success).collect();
    let okb: Vec<bool> = pairs.iter().map(|p| p.1.success).collect();
    let mc = stats::mcnemar_exact(&oka, &okb).map_err(stat)?;
    let perm = stats::permutation_test(&xa, &xb, boot).map_err(stat)?;
    let sd = stats::difference_sd(&sa, &sb).map_err(stat)?;
    let worst = sd == 0.0;
    let mdd = stats::minimum_detectable_difference(
        if worst { 1.0 } else { sd },
        pairs.len(),
        ALPHA,
        POWER,
    );
    Ok(Comparison {
        a: a.label.clone(),
        b: b.label.clone(),
        budget,
        paired: pairs.len(),
        only_in_a,
        only_in_b,
        unscored,
        success_a: stats::bootstrap_mean(&sa, boot).map_err(stat)?.into(),
        success_b: stats::bootstrap_mean(&sb, boot).map_err(stat)?.into(),
        score_a: stats::bootstrap_mean(&xa, boot).map_err(stat)?.into(),
        score_b: stats::bootstrap_mean(&xb, boot).map_err(stat)?.into(),
        success_diff: stats::paired_difference(&sa, &sb, boot)
            .map_err(stat)?
            .into(),
        score_diff: stats::paired_difference(&xa, &xb, boot)
            .map_err(stat)?
            .into(),
        mcnemar_a_only: mc.a_only,
        mcnemar_b_only: mc.b_only,
        mcnemar_p: mc.p_value,
        permutation_p: perm.p_value,
        permutation_exact: perm.exact,
        permutation_assignments: perm.resamples,
        success_diff_sd: sd,
        mdd_success: mdd,
        mdd_assumed_worst_case: worst,
        alpha: ALPHA,
        bootstrap_resamples: boot.resamples,
        bootstrap_seed: boot.seed,
    })
}

/// "p = 0.031", "p < 0.001".
pub fn p_text(p: f64) -> String {
    if p < 0.001 {
        "p < 0.001".into()
    } else {
        format!("p = {p:.3}")
    }
}

fn pct(i: &Interval) -> String {
    format!(
        "{:.1}% [{:.1}, {:.1}]",
        100.0 * i.value,
        100.0 * i.lo,
        100.0 * i.hi
    )
}

fn num(i: &Interval) -> String {
    format!("{:.3} [{:.3}, {:.3}]", i.value, i.lo, i.hi)
}

fn points(i: &Interval) -> String {
    format!(
        "{:+.1} points [{:+.1}, {:+.1}]",
        100.0 * i.value,
        100.0 * i.lo,
        100.0 * i.hi
    )
}

impl Comparison {
    /// True when the exact McNemar test finds the success rates differ at
    /// [`ALPHA`].
    pub fn success_differs(&self) -> bool {
        self.mcnemar_p < self.alpha
    }

    pub fn scores_differ(&self) -> bool {
        self.permutation_p < self.alpha
    }

    /// The verdict on success rate in one sentence.
    pub fn success_sentence(&self) -> String {
        let d = &self.success_diff;
        let how = format!(
            "95 % CI [{:+.1}, {:+.1}], {} (exact McNemar, {} task(s) solved only by A, {} only by B)",
            100.0 * d.lo,
            100.0 * d.hi,
            p_text(self.mcnemar_p),
            self.mcnemar_a_only,
            self.mcnemar_b_only
        );
        let verdict = if self.success_differs() {
            format!("significant at {}", self.alpha)
        } else {
            format!("no significant difference at {}", self.alpha)
        };
        if d.value == 0.0 {
            format!(
                "{} and {} have the same success rate ({:.1} points, {how}): {verdict}.",
                self.a,
                self.b,
                100.0 * d.value
            )
        } else {
            format!(
                "{} is {:.1} points {} than {} in success rate, {how}: {verdict}.",
                self.a,
                100.0 * d.value.abs(),
                if d.value > 0.0 { "better" } else { "worse" },
                self.b
            )
        }
    }

    /// The comparison as a table and sentences.
    pub fn text(&self) -> String {
        let mut s = format!(
            "budget {} steps: {} task(s) scored in both runs\n  A = {}\n  B = {}\n",
            self.budget, self.paired, self.a, self.b
        );
        s.push_str(&format!(
            "  {:<14} {:>24} {:>24} {:>32}\n",
            "", "A", "B", "A − B (paired)"
        ));
        s.push_str(&format!(
            "  {:<14} {:>24} {:>24} {:>32}\n",
            "success rate",
            pct(&self.success_a),
            pct(&self.success_b),
            points(&self.success_diff)
        ));
        s.push_str(&format!(
            "  {:<14} {:>24} {:>24} {:>32}\n",
            "mean score",
            num(&self.score_a),
            num(&self.score_b),
            num(&self.score_diff)
        ));
        s.push_str(&format!("  {}\n", self.success_sentence()));
        s.push_str(&format!(
            "  Mean score: A − B = {:+.3}, 95 % CI [{:+.3}, {:+.3}], {} (paired permutation test, {}): {}.\n",
            self.score_diff.value,
            self.score_diff.lo,
            self.score_diff.hi,
            p_text(self.permutation_p),
            if self.permutation_exact {
                format!("all {} sign assignments", self.permutation_assignments)
            } else {
                format!("{} random sign assignments", self.permutation_assignments)
            },
            if self.scores_differ() {
                format!("significant at {}", self.alpha)
            } else {
                format!("no significant difference at {}", self.alpha)
            }
        ));
        if let Some(mdd) = self.mdd_success {
            s.push_str(&format!(
                "  With {} paired task(s), the smallest difference in success rate detectable at {:.0} % power is {:.1} points ({}).\n",
                self.paired,
                100.0 * POWER,
                100.0 * mdd,
                if self.mdd_assumed_worst_case {
                    "the paired differences do not vary, so at their largest possible spread, sd 1".to_string()
                } else {
                    format!("sd of the paired differences {:.2}", self.success_diff_sd)
                }
            ));
        }
        for (what, list) in [
            ("only in A", &self.only_in_a),
            ("only in B", &self.only_in_b),
            (
                "without a score in one run (environment or setup error)",
                &self.unscored,
            ),
        ] {
            if !list.is_empty() {
                s.push_str(&format!(
                    "  left out, {what}: {} ({})\n",
                    list.len(),
                    shorten(list)
                ));
            }
        }
        s.push_str(&format!(
            "  Intervals: bootstrap over tasks, {} resamples, seed {}.\n",
            self.bootstrap_resamples, self.bootstrap_seed
        ));
        s
    }
}

fn shorten(list: &[String]) -> String {
    if list.len() <= 5 {
        list.join(", ")
    } else {
        format!("{}, … and {} more", list[..5].join(", "), list.len() - 5)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::episode::{EndReason, Status};
    use std::path::PathBuf;

    fn result(task: &str, seed: u64, score: f64) -> EpisodeResult {
        let info = crate::episode::TaskInfo {
            instruction: String::new(),
            id: task.into(),
            domain: "d".into(),
            ..Default::default()
        };
        let mut r = EpisodeResult::new(info, 15, EndReason::Done);
        r.score = score;
        r.success = score >= crate::episode::SUCCESS_THRESHOLD;
        r.steps_used = 3;
        r.seed = seed;
        r
    }

    fn run(label: &str, results: Vec<EpisodeResult>) -> Run {
        Run {
            dir: label.into(),
            label: label.into(),
            manifest: None,
            episode_dirs: vec![PathBuf::new(); results.len()],
            results,
        }
    }

    #[test]
    fn a_run_against_itself_shows_no_difference() {
        let rs: Vec<_> = (0..8)
            .map(|i| result(&format!("t{i}"), 1, (i % 2) as f64))
            .collect();
        let a = run("scripted", rs.clone());
        let c = &compare(&a, &run("again", rs), &Bootstrap::default()).unwrap()[0];
        assert_eq!(c.paired, 8);
        assert_eq!(c.mcnemar_p, 1.0);
        assert_eq!(c.permutation_p, 1.0);
        assert!(!c.success_differs() && !c.scores_differ());
        assert!(c.mdd_assumed_worst_case);
        let t = c.text();
        assert!(
            t.contains("same success rate") && t.contains("no significant difference"),
            "{t}"
        );
    }

    #[test]
    fn six_solved_against_none_is_significant_and_said_in_words() {
        let a = run(
            "scripted",
            (0..6).map(|i| result(&format!("t{i}"), 1, 1.0)).collect(),
        );
        let mut bs: Vec<_> = (0..6).map(|i| result(&format!("t{i}"), 1, 0.0)).collect();
        bs.push(result("extra", 1, 0.0));
        let c = &compare(&a, &run("noop", bs), &Bootstrap::default()).unwrap()[0];
        assert_eq!((c.mcnemar_a_only, c.mcnemar_b_only), (6, 0));
        assert!((c.mcnemar_p - 0.03125).abs() < 1e-12);
        assert!(c.success_differs() && c.scores_differ());
        assert_eq!(c.only_in_b, vec!["extra (seed 1)".to_string()]);
        let t = c.text();
        assert!(
            t.contains("scripted is 100.0 points better than noop in success rate")
                && t.contains("p = 0.031")
                && t.contains("significant at 0.05"),
            "{t}"
        );
    }

    #[test]
    fn unscored_episodes_are_left_out_and_named() {
        let a = run(
            "a",
            (0..3).map(|i| result(&format!("t{i}"), 1, 1.0)).collect(),
        );
        let mut bs: Vec<_> = (0..3).map(|i| result(&format!("t{i}"), 1, 1.0)).collect();
        bs[0].status = Status::EnvError;
        bs[0].end = EndReason::EnvError;
        let c = &compare(&a, &run("b", bs), &Bootstrap::default()).unwrap()[0];
        assert_eq!(c.paired, 2);
        assert_eq!(c.unscored, vec!["t0 (seed 1)".to_string()]);
        assert!(c.text().contains("without a score in one run"));
    }

    #[test]
    fn runs_that_share_nothing_are_a_clear_error() {
        let a = run("a", vec![result("t0", 1, 1.0)]);
        let b = run("b", vec![result("t0", 2, 1.0)]);
        let e = compare(&a, &b, &Bootstrap::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no task was scored in both")
                && e.contains("t0 (seed 1)")
                && e.contains("t0 (seed 2)"),
            "{e}"
        );
        let mut other = result("t0", 1, 1.0);
        other.max_steps = 30;
        let e = compare(&a, &run("c", vec![other]), &Bootstrap::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no step budget") && e.contains("[15]") && e.contains("[30]"),
            "{e}"
        );
    }
}
