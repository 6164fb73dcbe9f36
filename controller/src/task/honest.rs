//! `deskenv tasks check`: is a task honest? Its oracle must pass on two
//! seeds; the noop, every `gaming` attempt and a stale answer (the
//! oracle's result files from the first seed, planted on the second) must
//! fail. This module builds the variant tasks and judges their results;
//! the command runs them.

use super::LoadedTask;
use crate::episode::{EpisodeResult, SUCCESS_THRESHOLD};
use protocol::task::SolutionStep;
use std::collections::BTreeMap;

/// One way of attempting a task.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Variant {
    Oracle,
    Noop,
    Gaming(String),
    /// The first seed's answer files planted on the second seed.
    Stale,
}

impl Variant {
    /// The suffix of the variant task's id (`""` for the oracle).
    pub fn suffix(&self) -> String {
        match self {
            Variant::Oracle => String::new(),
            Variant::Noop => ".noop".into(),
            Variant::Gaming(n) => format!(".gaming-{}", slug(n)),
            Variant::Stale => ".stale".into(),
        }
    }

    /// Whether this variant must reach the success threshold.
    pub fn must_pass(&self) -> bool {
        matches!(self, Variant::Oracle)
    }
}

fn slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

/// `task` with `v`'s solution and id.
pub fn variant(task: &LoadedTask, v: &Variant) -> LoadedTask {
    let mut t = task.clone();
    t.spec.id = format!("{}{}", task.spec.id, v.suffix());
    match v {
        Variant::Oracle => {}
        Variant::Noop | Variant::Stale => {
            t.spec.solution = Some(vec![SolutionStep::Code("DONE".into())]);
        }
        Variant::Gaming(name) => {
            t.spec.solution = task
                .spec
                .gaming
                .iter()
                .find(|g| &g.name == name)
                .map(|g| g.solution.clone());
        }
    }
    t
}

/// Whether the task uses an application that keeps state outside the
/// machine on the local provider (LibreOffice's single-instance pipe in
/// /tmp, a Chromium profile in /tmp, Jupyter's port): such tasks cannot run
/// beside each other there. Judged from the task file's text.
pub fn uses_host_global_app(task: &LoadedTask) -> bool {
    let text = serde_json::to_string(&task.spec)
        .unwrap_or_default()
        .to_lowercase();
    [
        "libreoffice",
        "soffice",
        ".xlsx",
        ".ods",
        "chromium",
        "jupyter",
    ]
    .iter()
    .any(|w| text.contains(w))
}

/// The gaming variants of `task`.
pub fn gaming(task: &LoadedTask) -> Vec<Variant> {
    task.spec
        .gaming
        .iter()
        .map(|g| Variant::Gaming(g.name.clone()))
        .collect()
}

/// The `vm_file` results of the task's evaluator: (path in the machine,
/// `dest` in the episode's cache). A stale answer plants these.
pub fn result_files(task: &LoadedTask) -> Vec<(String, String)> {
    let Ok(metrics) = task.spec.evaluator.metrics() else {
        return vec![];
    };
    let strings = |v: Option<&serde_json::Value>| -> Vec<String> {
        match v {
            Some(serde_json::Value::String(s)) => vec![s.clone()],
            Some(serde_json::Value::Array(a)) => a
                .iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect(),
            _ => vec![],
        }
    };
    let mut out = Vec::new();
    for m in metrics {
        if let Some(g) = m.result.filter(|g| g.kind == "vm_file") {
            let (paths, dests) = (strings(g.params.get("path")), strings(g.params.get("dest")));
            if paths.len() == dests.len() {
                out.extend(paths.into_iter().zip(dests));
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// What one variant of one task scored on one seed.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub variant: Variant,
    pub seed: u64,
    /// `None`: no score (environment or setup error), with the cause.
    pub score: Option<f64>,
    pub cause: Option<String>,
    pub wall_s: f64,
}

impl Outcome {
    /// `gaming "fixed answer" s2 scored 1.00 ≥ 0.95`, `oracle s1 no score`.
    pub fn short(&self) -> String {
        let what = match &self.variant {
            Variant::Oracle => "oracle".to_string(),
            Variant::Noop => "noop".to_string(),
            Variant::Gaming(n) => format!("gaming {n:?}"),
            Variant::Stale => "stale".to_string(),
        };
        match self.score {
            None => format!("{what} s{} no score", self.seed),
            Some(x) if self.variant.must_pass() => {
                format!("{what} s{} scored {x:.2} < {SUCCESS_THRESHOLD}", self.seed)
            }
            Some(x) => format!("{what} s{} scored {x:.2} ≥ {SUCCESS_THRESHOLD}", self.seed),
        }
    }

    pub fn from_result(variant: Variant, r: &EpisodeResult) -> Outcome {
        Outcome {
            variant,
            seed: r.seed,
            score: r.is_scored().then_some(r.score),
            cause: r.cause.clone(),
            wall_s: r.timings.total_s,
        }
    }

    /// Whether the outcome is what the variant must do.
    pub fn ok(&self) -> bool {
        match self.score {
            None => false,
            Some(s) if self.variant.must_pass() => s >= SUCCESS_THRESHOLD,
            Some(s) => s < SUCCESS_THRESHOLD,
        }
    }
}

/// Every outcome of one task.
#[derive(Debug, Clone, Default)]
pub struct TaskVerdict {
    pub outcomes: Vec<Outcome>,
    /// Why there is no stale check (no `vm_file` result, infeasible).
    pub no_stale: Option<String>,
}

impl TaskVerdict {
    pub fn ok(&self) -> bool {
        !self.outcomes.is_empty() && self.outcomes.iter().all(Outcome::ok)
    }

    /// Outcomes that had no score (environment or setup errors).
    pub fn unscored(&self) -> usize {
        self.outcomes.iter().filter(|o| o.score.is_none()).count()
    }
}

/// The table `deskenv tasks check` prints: a row per task.
pub fn table(verdicts: &BTreeMap<String, TaskVerdict>, seeds: [u64; 2]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    // One seed (`--seeds N`, or the same seed twice): the second column is
    // empty rather than the first repeated.
    let second = (seeds[1] != seeds[0]).then_some(seeds[1]);
    let _ = writeln!(
        s,
        "{:<40} {:>9} {:>9} {:>6} {:>14} {:>6} {:>7}  verdict",
        "task",
        format!("oracle s{}", seeds[0]),
        second.map_or("oracle -".to_string(), |x| format!("oracle s{x}")),
        "noop",
        "gaming (max)",
        "stale",
        "wall s"
    );
    let score = |o: Option<&Outcome>| match o {
        None => "-".to_string(),
        Some(o) => match o.score {
            Some(x) => format!("{x:.2}"),
            None => "ERR".to_string(),
        },
    };
    for (id, v) in verdicts {
        let find = |var: &Variant, seed: u64| {
            v.outcomes
                .iter()
                .find(|o| &o.variant == var && o.seed == seed)
        };
        let gaming: Vec<&Outcome> = v
            .outcomes
            .iter()
            .filter(|o| matches!(o.variant, Variant::Gaming(_)))
            .collect();
        let gaming_col = if gaming.is_empty() {
            "-".to_string()
        } else if gaming.iter().any(|o| o.score.is_none()) {
            format!("ERR ({})", gaming.len())
        } else {
            let max = gaming
                .iter()
                .filter_map(|o| o.score)
                .fold(0.0_f64, f64::max);
            format!("{max:.2} ({})", gaming.len())
        };
        let wall: f64 = v.outcomes.iter().map(|o| o.wall_s).sum();
        let verdict = if v.ok() {
            "ok".to_string()
        } else {
            let bad: Vec<String> = v
                .outcomes
                .iter()
                .filter(|o| !o.ok())
                .map(Outcome::short)
                .collect();
            format!("FAIL: {}", bad.join("; "))
        };
        let stale = match (&v.no_stale, find(&Variant::Stale, seeds[1])) {
            (Some(_), _) => "n/a".to_string(),
            (None, o) => score(o),
        };
        let _ = writeln!(
            s,
            "{:<40} {:>9} {:>9} {:>6} {:>14} {:>6} {:>7.1}  {verdict}",
            id,
            score(find(&Variant::Oracle, seeds[0])),
            score(second.and_then(|x| find(&Variant::Oracle, x))),
            score(find(&Variant::Noop, seeds[0])),
            gaming_col,
            stale,
            wall
        );
    }
    s
}

/// A line per outcome without a score, with its cause (printed under the
/// table).
pub fn causes(verdicts: &BTreeMap<String, TaskVerdict>) -> String {
    let mut s = String::new();
    for (id, v) in verdicts {
        for o in v.outcomes.iter().filter(|o| o.score.is_none()) {
            s.push_str(&format!(
                "{id}: {}: {}\n",
                o.short(),
                o.cause.as_deref().unwrap_or("?")
            ));
        }
    }
    s
}

/// A line per stage (the tasks' `category`): tasks, honest ones, the
/// median and total wall time of the oracle's episodes, and the total of
/// all episodes.
pub fn by_stage(
    verdicts: &BTreeMap<String, TaskVerdict>,
    category: &BTreeMap<String, String>,
) -> String {
    use std::fmt::Write;
    let mut stages: BTreeMap<&str, Vec<&TaskVerdict>> = BTreeMap::new();
    for (id, v) in verdicts {
        let c = category.get(id).map(String::as_str).unwrap_or("-");
        stages.entry(c).or_default().push(v);
    }
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<22} {:>5} {:>6} {:>16} {:>14} {:>12}",
        "stage", "tasks", "honest", "oracle median s", "oracle total s", "all total s"
    );
    for (stage, vs) in stages {
        let mut oracle: Vec<f64> = vs
            .iter()
            .flat_map(|v| v.outcomes.iter())
            .filter(|o| o.variant == Variant::Oracle)
            .map(|o| o.wall_s)
            .collect();
        oracle.sort_by(f64::total_cmp);
        let median = if oracle.is_empty() {
            0.0
        } else if oracle.len() % 2 == 1 {
            oracle[oracle.len() / 2]
        } else {
            (oracle[oracle.len() / 2 - 1] + oracle[oracle.len() / 2]) / 2.0
        };
        let all: f64 = vs
            .iter()
            .flat_map(|v| v.outcomes.iter())
            .map(|o| o.wall_s)
            .sum();
        let _ = writeln!(
            s,
            "{:<22} {:>5} {:>6} {:>16.1} {:>14.1} {:>12.1}",
            stage,
            vs.len(),
            vs.iter().filter(|v| v.ok()).count(),
            median,
            oracle.iter().sum::<f64>(),
            all
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::episode::{EndReason, Status};

    fn task() -> LoadedTask {
        let spec = serde_json::from_value(serde_json::json!({
            "id": "t", "instruction": "x",
            "evaluator": {"func": ["ds_number", "ds_image"],
                "result": [{"type": "vm_file", "path": "/home/user/a.txt", "dest": "a.txt"},
                           {"type": "vm_file", "path": "/home/user/c.png", "dest": "c.png"}],
                "expected": [{"type": "generated", "key": "a"}, {"type": "rule", "rules": {}}]},
            "solution": ["pyautogui.press('enter')"],
            "gaming": [{"name": "fixed answer", "solution": ["pyautogui.press('a')"]}]
        }))
        .unwrap();
        LoadedTask {
            path: "t.json".into(),
            spec,
            sha256: String::new(),
            domain: "d".into(),
        }
    }

    #[test]
    fn variants_swap_the_solution_and_name_the_task() {
        let t = task();
        assert!(!uses_host_global_app(&t));
        let mut calc = t.clone();
        calc.spec.instruction = "Open /home/user/a.xlsx in LibreOffice Calc".into();
        assert!(uses_host_global_app(&calc));
        let g = gaming(&t);
        assert_eq!(g, vec![Variant::Gaming("fixed answer".into())]);
        let v = variant(&t, &g[0]);
        assert_eq!(v.spec.id, "t.gaming-fixed-answer");
        assert_eq!(
            v.spec.solution,
            Some(vec![SolutionStep::Code("pyautogui.press('a')".into())])
        );
        assert_eq!(
            variant(&t, &Variant::Noop).spec.solution,
            Some(vec![SolutionStep::Code("DONE".into())])
        );
        assert_eq!(
            result_files(&t),
            vec![
                ("/home/user/a.txt".to_string(), "a.txt".to_string()),
                ("/home/user/c.png".to_string(), "c.png".to_string())
            ]
        );
    }

    #[test]
    fn only_the_oracle_may_pass_and_an_unscored_episode_is_never_ok() {
        let mut r = EpisodeResult::new(crate::episode::task_info(&task()), 15, EndReason::Done);
        r.seed = 2;
        r.score = 1.0;
        assert!(Outcome::from_result(Variant::Oracle, &r).ok());
        assert!(!Outcome::from_result(Variant::Stale, &r).ok());
        r.score = 0.5;
        assert!(!Outcome::from_result(Variant::Oracle, &r).ok());
        assert!(Outcome::from_result(Variant::Noop, &r).ok());
        r.status = Status::EnvError;
        assert!(!Outcome::from_result(Variant::Noop, &r).ok());
        let mut verdicts = BTreeMap::new();
        verdicts.insert(
            "t".to_string(),
            TaskVerdict {
                outcomes: vec![Outcome::from_result(Variant::Noop, &r)],
                no_stale: None,
            },
        );
        let text = table(&verdicts, [1, 2]);
        assert!(text.contains("FAIL: noop s2 no score"), "{text}");
        assert!(text.contains("oracle s1 oracle s2"), "{text}");

        let mut one = BTreeMap::new();
        r.status = Status::Scored;
        r.score = 1.0;
        one.insert(
            "t".to_string(),
            TaskVerdict {
                outcomes: vec![Outcome::from_result(Variant::Oracle, &r)],
                no_stale: None,
            },
        );
        let text = table(&one, [2, 2]);
        assert!(text.contains("oracle s2  oracle -"), "{text}");
        let row = text.lines().nth(1).unwrap();
        let cols: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cols[1..3], ["1.00", "-"], "{text}");
        assert!(
            causes(&verdicts).contains("noop s2 no score: "),
            "{}",
            causes(&verdicts)
        );
    }
}
