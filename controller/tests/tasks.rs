//! Task files: the OSWorld compatibility corpus loads unchanged, and
//! `deskenv tasks validate` names every field it cannot run; bad files get
//! errors that name the file and the field.

use controller::task::{self, validate::validate};
use std::path::{Path, PathBuf};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/compat/osworld")
}

fn deskenv(args: &[&str]) -> (i32, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_deskenv"))
        .args(args)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn every_osworld_corpus_file_loads() {
    let (tasks, errors) = task::load_all(&[corpus()]).unwrap();
    assert!(errors.is_empty(), "{errors:#?}");
    assert_eq!(tasks.len(), 12);
    for t in &tasks {
        // OSWorld names files by id; the domain is the folder.
        assert_eq!(t.path.file_stem().unwrap().to_string_lossy(), t.spec.id);
        assert!([
            "chrome",
            "libreoffice_calc",
            "libreoffice_impress",
            "multi_apps",
            "os",
            "thunderbird",
            "vs_code"
        ]
        .contains(&t.domain.as_str()));
        // Every setup step parses (to a known or an unsupported type).
        for s in t.spec.config.iter().chain(&t.spec.evaluator.postconfig) {
            s.parse()
                .unwrap_or_else(|e| panic!("{}: {} {e}", t.path.display(), s.kind));
        }
        t.spec
            .evaluator
            .metrics()
            .unwrap_or_else(|e| panic!("{}: {e}", t.path.display()));
    }
}

#[test]
fn validate_reports_what_the_corpus_needs_offline() {
    let (tasks, _) = task::load_all(&[corpus()]).unwrap();
    let calc = tasks
        .iter()
        .find(|t| t.spec.id == "0bf05a7d-b28b-44d2-955a-50b41e24012a")
        .unwrap();
    let problems = validate(calc, &task::metric_supported);
    let fields: Vec<&str> = problems.iter().map(|p| p.field.as_str()).collect();
    // The download and the gold files are on the internet, with no local copy.
    assert!(
        fields.contains(&"config[0].parameters.files[0].url"),
        "{problems:#?}"
    );
    assert!(
        fields.contains(&"evaluator.expected.path[0]"),
        "{problems:#?}"
    );
    assert!(
        fields.contains(&"evaluator.expected.path[1]"),
        "{problems:#?}"
    );
    // Chrome tasks use setup steps and getters deskenv does not run yet.
    let all: Vec<String> = tasks
        .iter()
        .flat_map(|t| {
            validate(t, &task::metric_supported)
                .into_iter()
                .map(|p| p.to_string())
        })
        .collect();
    assert!(
        all.iter()
            .any(|p| p.contains("setup step `chrome_open_tabs` is not supported")),
        "{all:#?}"
    );
}

#[test]
fn the_cli_validates_lists_and_fails_on_problems() {
    let (code, out) = deskenv(&["tasks", "validate", corpus().to_str().unwrap()]);
    // Exit status 2: task problems (`deskenv --help`).
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("12 task file(s)") && out.contains("with problems"),
        "{out}"
    );
    assert!(
        out.contains(
            "0bf05a7d-b28b-44d2-955a-50b41e24012a.json: config[0].parameters.files[0].url"
        ),
        "{out}"
    );
    let (code, out) = deskenv(&["tasks", "list", corpus().to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("libreoffice_calc") && out.contains("compare_table"),
        "{out}"
    );
}

#[test]
fn bad_task_files_get_errors_naming_file_and_field() {
    let d = tempfile::tempdir().unwrap();
    let cases = [
        ("missing.json", r#"{"id": "m", "evaluator": {"func": "exact_match"}}"#, "missing.json: field `instruction`"),
        ("type.json", r#"{"id": "t", "instruction": "x", "evaluator": {"func": ["a", 2]}}"#, "type.json: field `evaluator.func`"),
        (
            "metric.json",
            r#"{"id": "metric", "instruction": "x", "evaluator": {"func": "no_such_metric"}}"#,
            "metric.json: evaluator.func: metric `no_such_metric` is not supported",
        ),
        (
            "step.json",
            r#"{"id": "step", "instruction": "x", "config": [{"type": "teleport", "parameters": {}}], "evaluator": {"func": "infeasible"}}"#,
            "step.json: config[0].type: setup step `teleport` is not supported",
        ),
        (
            "url.json",
            r#"{"id": "url", "instruction": "x", "config": [{"type": "download", "parameters": {"files": [{"url": "https://example.com/x.csv", "path": "/tmp/x.csv"}]}}], "evaluator": {"func": "infeasible"}}"#,
            "url.json: config[0].parameters.files[0].url: https://example.com/x.csv has no local copy",
        ),
    ];
    for (name, text, want) in cases {
        std::fs::write(d.path().join(name), text).unwrap();
        let (code, out) = deskenv(&["tasks", "validate", d.path().join(name).to_str().unwrap()]);
        assert_eq!(code, 2, "{name}: {out}");
        assert!(out.contains(want), "{name}: wanted {want:?} in:\n{out}");
    }
}
