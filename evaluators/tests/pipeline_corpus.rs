//! `pipeline_checks` against a labelled corpus of agent-style pipelines:
//! precision and recall per silent-failure mode.
//!
//! Each file in `tests/data/pipelines/` (`NNN_short_name.py`, read in name
//! order) is a short pandas + scikit-learn program, valid Python 3, that
//! starts with three header comment lines:
//!
//! ```text
//! # expect: FM08, FM13
//! # options: {"temporal": false, "imbalanced": false}
//! # why: the scaler is fitted on all of X before the split, then on X_test
//! ```
//!
//! `expect` lists every mode truly present in the file under its options
//! (or is `none`); `options` is the JSON object passed to the metric
//! (`temporal`, `imbalanced`, `target`, `unavailable`; `{}` for none);
//! `why` says what is planted, or which correct code the file resembles.
//! Each mode is checked on its own (`"modes": [MODE]` added to the file's
//! options): a score of 0 is "present", 1 "absent". A mode that does not
//! apply under the options (FM05 without `temporal`, FM15 without
//! `imbalanced`) is labelled absent and the metric must say so.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use evaluators::{evaluate, Artifact, Options};
use serde_json::Value;

const MODES: &[&str] = &[
    "FM04", "FM05", "FM06", "FM08", "FM09", "FM13", "FM15", "TF05",
];

/// One corpus file: its name, code, labelled modes and options.
struct Case {
    name: String,
    code: String,
    expect: BTreeSet<String>,
    options: Options,
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/pipelines")
}

/// The header line `# key: …` of `name`, or a panic saying what was wanted.
fn header<'a>(name: &str, line: Option<&'a str>, key: &str) -> &'a str {
    let prefix = format!("# {key}:");
    match line {
        Some(l) => match l.strip_prefix(prefix.as_str()) {
            Some(rest) => rest.trim(),
            None => panic!("{name}: expected a `{prefix} …` header line, found {l:?}"),
        },
        None => panic!("{name}: expected a `{prefix} …` header line, found the end of the file"),
    }
}

fn read_case(path: &Path) -> Case {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let code = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut lines = code.lines();
    let expect_s = header(&name, lines.next(), "expect");
    let expect: BTreeSet<String> = if expect_s == "none" {
        BTreeSet::new()
    } else {
        expect_s
            .split(',')
            .map(|m| {
                let m = m.trim();
                assert!(
                    MODES.contains(&m),
                    "{name}: `# expect:` wants `none` or a comma-separated list of {MODES:?}, found {m:?}"
                );
                m.to_string()
            })
            .collect()
    };
    let options_s = header(&name, lines.next(), "options");
    let options = match serde_json::from_str::<Value>(options_s) {
        Ok(Value::Object(o)) => o,
        other => {
            panic!("{name}: `# options:` wants a JSON object, found {options_s:?} ({other:?})")
        }
    };
    let why = header(&name, lines.next(), "why");
    assert!(
        !why.is_empty(),
        "{name}: `# why:` wants a reason, found nothing"
    );
    Case {
        name,
        code,
        expect,
        options,
    }
}

fn corpus() -> Vec<Case> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .expect("tests/data/pipelines")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "py"))
        .collect();
    paths.sort();
    paths.iter().map(PathBuf::as_path).map(read_case).collect()
}

/// Counts for one mode.
#[derive(Default)]
struct Tally {
    tp: usize,
    fp: usize,
    fn_: usize,
    tn: usize,
}

impl Tally {
    fn precision(&self) -> f64 {
        if self.tp + self.fp == 0 {
            1.0
        } else {
            self.tp as f64 / (self.tp + self.fp) as f64
        }
    }

    fn recall(&self) -> f64 {
        if self.tp + self.fn_ == 0 {
            1.0
        } else {
            self.tp as f64 / (self.tp + self.fn_) as f64
        }
    }
}

#[test]
fn pipeline_checks_finds_each_mode_of_the_labelled_corpus() {
    let cases = corpus();
    assert!(
        cases.len() >= 60,
        "the corpus has {} files, wants at least 60",
        cases.len()
    );
    let mut misses: Vec<String> = vec![];
    let mut table: Vec<(&str, Tally)> = vec![];
    for mode in MODES {
        let mut t = Tally::default();
        for case in &cases {
            let mut o = case.options.clone();
            o.insert("modes".into(), Value::from(vec![*mode]));
            let s = evaluate(
                "pipeline_checks",
                &Artifact::Text(case.code.clone()),
                None,
                &o,
            )
            .unwrap_or_else(|e| panic!("{} {mode}: {e}", case.name));
            let predicted = s.score == 0.0;
            let labelled = case.expect.contains(*mode);
            match (labelled, predicted) {
                (true, true) => t.tp += 1,
                (false, true) => t.fp += 1,
                (true, false) => t.fn_ += 1,
                (false, false) => t.tn += 1,
            }
            if labelled != predicted {
                misses.push(format!(
                    "{mode} {} in {}: {}",
                    if labelled {
                        "missed (FN)"
                    } else {
                        "false alarm (FP)"
                    },
                    case.name,
                    s.detail
                ));
            }
        }
        table.push((*mode, t));
    }
    eprintln!("mode   pos  neg   TP   FP   FN   prec recall");
    for (mode, t) in &table {
        eprintln!(
            "{:<5} {:>4} {:>4} {:>4} {:>4} {:>4} {:>6.3} {:>6.3}",
            mode,
            t.tp + t.fn_,
            t.fp + t.tn,
            t.tp,
            t.fp,
            t.fn_,
            t.precision(),
            t.recall()
        );
    }
    for m in &misses {
        eprintln!("{m}");
    }
    for (mode, t) in &table {
        assert!(
            t.tp + t.fn_ >= 5 && t.fp + t.tn >= 5,
            "{mode}: {} positives and {} negatives labelled, wants at least 5 of each",
            t.tp + t.fn_,
            t.fp + t.tn
        );
        assert!(
            t.precision() >= 0.9 && t.recall() >= 0.9,
            "{mode}: precision {:.3}, recall {:.3}, wants both >= 0.9 (misclassified files above)",
            t.precision(),
            t.recall()
        );
    }
}
