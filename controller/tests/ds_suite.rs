//! The data-science suite's shape (tasks/ds): its size, stages,
//! difficulties, applications and infeasible share, the VM tier list
//! (tasks/ds/vm-tier.txt) that `scripts/test.sh --full` runs on the real
//! VM, and the CI tier (tasks/ds/ci-tier.txt), the part of it that CI
//! runs. These
//! read the task files only; `deskenv tasks check` proves each task honest.

use controller::task::{self, LoadedTask};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const STAGES: [&str; 6] = [
    "wrangling",
    "exploration",
    "modelling",
    "visualisation",
    "reporting",
    "multiapp",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn suite() -> Vec<LoadedTask> {
    let (tasks, errors) = task::load_all(&[root().join("tasks/ds")]).unwrap();
    assert!(errors.is_empty(), "{errors:#?}");
    tasks
}

/// The task paths of a tier list (`tasks/ds/<name>`), relative to the
/// repository root.
fn tier_list(name: &str) -> Vec<String> {
    let list = root().join("tasks/ds").join(name);
    std::fs::read_to_string(&list)
        .unwrap_or_else(|e| panic!("{}: {e}", list.display()))
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect()
}

fn rel(t: &LoadedTask) -> String {
    let root = root().canonicalize().unwrap();
    let p = t.path.canonicalize().unwrap();
    p.strip_prefix(&root).unwrap().display().to_string()
}

fn stage(t: &LoadedTask) -> &str {
    t.spec.category.as_deref().unwrap_or("-")
}

#[test]
fn the_suite_has_its_size_stages_difficulties_and_applications() {
    let tasks = suite();
    assert!(
        tasks.len() >= 100,
        "{} tasks, expected at least 100",
        tasks.len()
    );
    let mut per_stage: BTreeMap<&str, usize> = BTreeMap::new();
    for t in &tasks {
        let s = stage(t);
        assert!(
            STAGES.contains(&s),
            "{}: category {s:?}, expected one of {STAGES:?}",
            t.path.display()
        );
        // The folder is the stage.
        let folder = t.path.parent().unwrap().file_name().unwrap();
        assert_eq!(folder.to_str(), Some(s), "{}: folder", t.path.display());
        *per_stage.entry(s).or_default() += 1;
        let d = t.spec.difficulty.as_deref();
        assert!(
            matches!(d, Some("easy" | "medium" | "hard")),
            "{}: difficulty {d:?}, expected easy, medium or hard",
            t.path.display()
        );
        assert!(
            t.spec.solution.as_ref().is_some_and(|s| !s.is_empty()),
            "{}: no solution (every task has an oracle)",
            t.path.display()
        );
        assert!(
            !t.spec.related_apps.is_empty(),
            "{}: no related_apps",
            t.path.display()
        );
    }
    for s in STAGES {
        let n = per_stage.get(s).copied().unwrap_or(0);
        assert!(n >= 15, "stage {s}: {n} tasks, expected at least 15");
    }
    let hard = tasks
        .iter()
        .filter(|t| t.spec.difficulty.as_deref() == Some("hard"))
        .count();
    assert!(3 * hard >= tasks.len(), "{hard} hard of {}", tasks.len());
    let infeasible = tasks
        .iter()
        .filter(|t| t.spec.evaluator.is_infeasible())
        .count();
    let share = infeasible as f64 / tasks.len() as f64;
    assert!(
        (0.12..=0.18).contains(&share),
        "{infeasible} infeasible of {} ({:.1} %), expected about 15 %",
        tasks.len(),
        100.0 * share
    );
    let apps: BTreeSet<&str> = tasks
        .iter()
        .flat_map(|t| t.spec.related_apps.iter().map(String::as_str))
        .collect();
    for app in [
        "terminal",
        "python",
        "jupyter",
        "mousepad",
        "libreoffice_calc",
        "chromium",
        "sqlite3",
    ] {
        assert!(apps.contains(app), "no task uses {app}");
    }
}

#[test]
fn the_vm_tier_is_a_representative_third() {
    let tasks = suite();
    let by_path: BTreeMap<String, &LoadedTask> = tasks.iter().map(|t| (rel(t), t)).collect();
    let tier = tier_list("vm-tier.txt");
    let mut seen = BTreeSet::new();
    for p in &tier {
        assert!(
            by_path.contains_key(p),
            "tasks/ds/vm-tier.txt: {p} is not a task file of tasks/ds"
        );
        assert!(seen.insert(p), "tasks/ds/vm-tier.txt: {p} listed twice");
    }
    assert!(
        3 * tier.len() >= tasks.len(),
        "tasks/ds/vm-tier.txt: {} tasks, expected at least a third of {}",
        tier.len(),
        tasks.len()
    );
    let chosen: Vec<&LoadedTask> = tier.iter().map(|p| by_path[p]).collect();
    for s in STAGES {
        let n = chosen.iter().filter(|t| stage(t) == s).count();
        assert!(
            n >= 2,
            "tasks/ds/vm-tier.txt: stage {s} has {n}, expected 2"
        );
    }
    let mut suite_apps: BTreeMap<&str, usize> = BTreeMap::new();
    for t in &tasks {
        for a in &t.spec.related_apps {
            *suite_apps.entry(a).or_default() += 1;
        }
    }
    for (app, n) in suite_apps {
        let want = n.min(2);
        let got = chosen
            .iter()
            .filter(|t| t.spec.related_apps.iter().any(|a| a == app))
            .count();
        assert!(
            got >= want,
            "tasks/ds/vm-tier.txt: {app} is in {got} task(s), expected {want}"
        );
    }
    assert!(
        chosen.iter().any(|t| t.spec.evaluator.is_infeasible()),
        "tasks/ds/vm-tier.txt: no infeasible task"
    );
}

#[test]
fn the_ci_tier_is_a_representative_part_of_the_vm_tier() {
    let tasks = suite();
    let by_path: BTreeMap<String, &LoadedTask> = tasks.iter().map(|t| (rel(t), t)).collect();
    let vm: BTreeSet<String> = tier_list("vm-tier.txt").into_iter().collect();
    let tier = tier_list("ci-tier.txt");
    let mut seen = BTreeSet::new();
    for p in &tier {
        assert!(
            vm.contains(p),
            "tasks/ds/ci-tier.txt: {p} is not in tasks/ds/vm-tier.txt"
        );
        assert!(seen.insert(p), "tasks/ds/ci-tier.txt: {p} listed twice");
    }
    let chosen: Vec<&LoadedTask> = tier.iter().map(|p| by_path[p]).collect();
    for s in STAGES {
        let n = chosen.iter().filter(|t| stage(t) == s).count();
        assert!(
            n >= 1,
            "tasks/ds/ci-tier.txt: stage {s} has no task, expected one"
        );
    }
    for app in [
        "terminal",
        "jupyter",
        "mousepad",
        "libreoffice_calc",
        "chromium",
        "sqlite3",
    ] {
        let got = chosen
            .iter()
            .filter(|t| t.spec.related_apps.iter().any(|a| a == app))
            .count();
        assert!(
            got >= 1,
            "tasks/ds/ci-tier.txt: no task uses {app}, expected one"
        );
    }
    assert!(
        chosen.iter().any(|t| t.spec.evaluator.is_infeasible()),
        "tasks/ds/ci-tier.txt: no infeasible task"
    );
}
