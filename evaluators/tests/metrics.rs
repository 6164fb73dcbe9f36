//! Each non-table metric scores 1 and 0 on small fixtures; errors and
//! `Missing` behave as documented; `combine` follows OSWorld.

use std::path::{Path, PathBuf};

use evaluators::{
    combine, evaluate, is_supported, supported_metrics, unsupported_reason, Artifact, Conj,
    EvalError, Options, Scored,
};
use serde_json::{json, Value};

fn opts(v: Value) -> Options {
    v.as_object().cloned().expect("options object")
}

fn no_opts() -> Options {
    Options::new()
}

fn rules(v: Value) -> Artifact {
    Artifact::Json(v)
}

fn text(s: &str) -> Artifact {
    Artifact::Text(s.to_string())
}

fn write(dir: &Path, name: &str, content: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, content).expect("write fixture");
    p
}

fn score(
    metric: &str,
    result: &Artifact,
    expected: Option<&Artifact>,
    options: &Options,
) -> Scored {
    evaluate(metric, result, expected, options).unwrap_or_else(|e| panic!("{metric}: {e}"))
}

#[test]
fn exact_match_scores() {
    let r = rules(json!({"expected": "hello"}));
    assert_eq!(
        score("exact_match", &text("hello"), Some(&r), &no_opts()).score,
        1.0
    );
    let s = score("exact_match", &text("hello\n"), Some(&r), &no_opts());
    assert_eq!(s.score, 0.0);
    assert!(s.detail.contains("!="), "{}", s.detail);
    // JSON results compare with Python equality.
    let r = rules(json!({"expected": [1, 2]}));
    assert_eq!(
        score(
            "exact_match",
            &Artifact::Json(json!([1.0, 2])),
            Some(&r),
            &no_opts()
        )
        .score,
        1.0
    );
}

#[test]
fn exact_match_without_expected_key_is_bad_option() {
    let err = evaluate(
        "exact_match",
        &text("x"),
        Some(&rules(json!({"nope": 1}))),
        &no_opts(),
    )
    .unwrap_err();
    match &err {
        EvalError::BadOption { metric, option, .. } => {
            assert_eq!(metric, "exact_match");
            assert_eq!(option, "rules.expected");
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(err.to_string().contains("exact_match"));
}

#[test]
fn check_include_exclude_scores() {
    let r = rules(json!({"include": ["spotify"], "exclude": ["not found"]}));
    let m = "check_include_exclude";
    assert_eq!(
        score(m, &text("/snap/bin/spotify\n"), Some(&r), &no_opts()).score,
        1.0
    );
    let s = score(m, &text("spotify not found"), Some(&r), &no_opts());
    assert_eq!(s.score, 0.0);
    assert!(s.detail.contains("not found"), "{}", s.detail);
    let s = score(m, &text(""), Some(&r), &no_opts());
    assert_eq!(s.score, 0.0);
    assert!(s.detail.contains("missing"), "{}", s.detail);
}

#[test]
fn check_direct_json_object_scores() {
    let m = "check_direct_json_object";
    let r = rules(json!({"expected": {"name": "Bob", "n": 3}}));
    // Text results: single quotes become double quotes before parsing.
    assert_eq!(
        score(
            m,
            &text(" {'name': 'Bob', 'n': 3.0, 'x': 1} "),
            Some(&r),
            &no_opts()
        )
        .score,
        1.0
    );
    let s = score(
        m,
        &Artifact::Json(json!({"name": "Bob", "n": 4})),
        Some(&r),
        &no_opts(),
    );
    assert_eq!(s.score, 0.0);
    assert!(s.detail.contains("\"n\""), "{}", s.detail);
    assert_eq!(score(m, &text("not json"), Some(&r), &no_opts()).score, 0.0);
    // __EVALUATION_FAILED__ forces 0 even when equal.
    let r = rules(json!({"expected": {"a": "__EVALUATION_FAILED__"}}));
    assert_eq!(
        score(
            m,
            &Artifact::Json(json!({"a": "__EVALUATION_FAILED__"})),
            Some(&r),
            &no_opts()
        )
        .score,
        0.0
    );
}

#[test]
fn check_direct_json_object_expect_in_result() {
    let m = "check_direct_json_object";
    let r = rules(json!({
        "expected": {"city": ["Paris", "Lyon"], "title": "Flights"},
        "expect_in_result": true
    }));
    let ok = Artifact::Json(json!({"city": ["Nice", "Lyon"], "title": "Cheap Flights to Lyon"}));
    assert_eq!(score(m, &ok, Some(&r), &no_opts()).score, 1.0);
    let ok_str = Artifact::Json(json!({"city": "Paris", "title": "Flights"}));
    assert_eq!(score(m, &ok_str, Some(&r), &no_opts()).score, 1.0);
    let bad = Artifact::Json(json!({"city": ["Nice"], "title": "Flights"}));
    assert_eq!(score(m, &bad, Some(&r), &no_opts()).score, 0.0);
}

#[test]
fn check_direct_json_object_ignore_list_order_is_upstream_faithful() {
    let m = "check_direct_json_object";
    // Next to `expected` (where tasks put it) OSWorld ignores the flag.
    let r = rules(json!({"expected": {"l": ["a", "b"]}, "ignore_list_order": true}));
    assert_eq!(
        score(
            m,
            &Artifact::Json(json!({"l": ["a", "b"]})),
            Some(&r),
            &no_opts()
        )
        .score,
        1.0
    );
    assert_eq!(
        score(
            m,
            &Artifact::Json(json!({"l": ["b", "a"]})),
            Some(&r),
            &no_opts()
        )
        .score,
        0.0
    );
}

#[test]
fn literal_match_scores() {
    let m = "literal_match";
    let e = Artifact::Json(json!("Hello"));
    assert_eq!(
        score(
            m,
            &text("hello"),
            Some(&e),
            &opts(json!({"ignore_case": true}))
        )
        .score,
        1.0
    );
    assert_eq!(score(m, &text("hello"), Some(&e), &no_opts()).score, 0.0);
    let l = opts(json!({"type": "list"}));
    let e = Artifact::Json(json!(["a", 1]));
    assert_eq!(
        score(m, &Artifact::Json(json!(["a", "1"])), Some(&e), &l).score,
        1.0
    );
    assert_eq!(
        score(m, &Artifact::Json(json!(["a"])), Some(&e), &l).score,
        0.0
    );
    let err = evaluate(m, &text("a"), Some(&e), &opts(json!({"type": "set"}))).unwrap_err();
    assert!(
        matches!(err, EvalError::BadOption { ref option, .. } if option == "type"),
        "{err}"
    );
}

#[test]
fn match_in_list_and_is_in_list() {
    let r = rules(json!({"expected": ["a", "b"]}));
    assert_eq!(
        score("match_in_list", &text("b"), Some(&r), &no_opts()).score,
        1.0
    );
    assert_eq!(
        score("match_in_list", &text("c"), Some(&r), &no_opts()).score,
        0.0
    );
    let r = rules(json!({"expected": "needle"}));
    assert_eq!(
        score("is_in_list", &text("a needle here"), Some(&r), &no_opts()).score,
        1.0
    );
    assert_eq!(
        score(
            "is_in_list",
            &Artifact::Json(json!(["hay"])),
            Some(&r),
            &no_opts()
        )
        .score,
        0.0
    );
}

#[test]
fn infeasible_scores() {
    let m = "infeasible";
    assert_eq!(
        score(
            m,
            &Artifact::Json(json!({"last_action": "FAIL"})),
            None,
            &no_opts()
        )
        .score,
        1.0
    );
    assert_eq!(
        score(
            m,
            &Artifact::Json(json!({"last_action": {"action_type": "FAIL"}})),
            None,
            &no_opts()
        )
        .score,
        1.0
    );
    assert_eq!(score(m, &text("FAIL"), None, &no_opts()).score, 1.0);
    assert_eq!(
        score(
            m,
            &Artifact::Json(json!({"last_action": "DONE"})),
            None,
            &no_opts()
        )
        .score,
        0.0
    );
    assert_eq!(
        score(
            m,
            &Artifact::Json(json!({"last_action": null})),
            None,
            &no_opts()
        )
        .score,
        0.0
    );
}

#[test]
fn compare_text_file_scores_and_options() {
    let d = tempfile::tempdir().unwrap();
    let m = "compare_text_file";
    let want = Artifact::File(write(d.path(), "want.txt", "Hello  World\nsecond line\n"));
    let same = Artifact::File(write(
        d.path(),
        "same.txt",
        "Hello  World\r\nsecond line\r\n",
    ));
    assert_eq!(
        score(m, &same, Some(&want), &no_opts()).score,
        1.0,
        "CRLF reads as LF"
    );
    let blanks = Artifact::File(write(
        d.path(),
        "blanks.txt",
        "  hello world\tsecond   LINE",
    ));
    let s = score(m, &blanks, Some(&want), &no_opts());
    assert_eq!(s.score, 0.0);
    assert!(s.detail.contains("line 1"), "{}", s.detail);
    assert_eq!(
        score(
            m,
            &blanks,
            Some(&want),
            &opts(json!({"ignore_blanks": true}))
        )
        .score,
        0.0,
        "case still differs"
    );
    assert_eq!(
        score(
            m,
            &blanks,
            Some(&want),
            &opts(json!({"ignore_blanks": true, "ignore_case": true}))
        )
        .score,
        1.0
    );
    let err = evaluate(m, &same, Some(&want), &opts(json!({"ignore_case": "yes"}))).unwrap_err();
    match err {
        EvalError::BadOption {
            metric,
            option,
            expected,
        } => {
            assert_eq!(
                (metric.as_str(), option.as_str()),
                ("compare_text_file", "ignore_case")
            );
            assert!(expected.contains("boolean"));
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn result_file_absent_scores_zero_expected_absent_is_error() {
    let d = tempfile::tempdir().unwrap();
    let m = "compare_text_file";
    let want = Artifact::File(write(d.path(), "want.txt", "x"));
    let nowhere = Artifact::File(d.path().join("nowhere.txt"));
    let s = score(m, &nowhere, Some(&want), &no_opts());
    assert_eq!(s.score, 0.0);
    assert!(s.detail.contains("not found"), "{}", s.detail);
    let err = evaluate(m, &want, Some(&nowhere), &no_opts()).unwrap_err();
    assert!(
        matches!(err, EvalError::UnreadableFile { ref path, .. } if path.ends_with("nowhere.txt")),
        "{err}"
    );
}

#[test]
fn compare_csv_scores_and_options() {
    let d = tempfile::tempdir().unwrap();
    let m = "compare_csv";
    let want = write(d.path(), "want.csv", "a,b\n1,2\n");
    let alt = write(d.path(), "alt.csv", "A,B\n1,2\n");
    let got = Artifact::File(write(d.path(), "got.csv", "\u{feff}a,b\r\n1,2\r\n"));
    assert_eq!(
        score(m, &got, Some(&Artifact::File(want.clone())), &no_opts()).score,
        1.0
    );
    let padded = Artifact::File(write(d.path(), "padded.csv", "A,b \n1,2\n"));
    let s = score(m, &padded, Some(&Artifact::File(want.clone())), &no_opts());
    assert_eq!(s.score, 0.0);
    assert!(s.detail.contains("line 1"), "{}", s.detail);
    let loose = opts(json!({"strict": false, "ignore_case": true}));
    assert_eq!(
        score(m, &padded, Some(&Artifact::File(want.clone())), &loose).score,
        1.0
    );
    // One-of several expected files (multi: true).
    let upper = Artifact::File(write(d.path(), "upper.csv", "A,B\n1,2"));
    let files = Artifact::Files(vec![want.clone(), alt.clone()]);
    let s = score(m, &upper, Some(&files), &no_opts());
    assert_eq!(s.score, 1.0);
    assert!(s.detail.contains("expected file 2"), "{}", s.detail);
    let err = evaluate(
        m,
        &got,
        Some(&Artifact::File(want)),
        &opts(json!({"strict": 1})),
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("compare_csv") && err.to_string().contains("strict"),
        "{err}"
    );
}

#[test]
fn check_list_scores() {
    let d = tempfile::tempdir().unwrap();
    let f = Artifact::File(write(d.path(), "list.txt", "alpha 1\nbeta 2\n"));
    let r = rules(json!({"expect": ["^beta \\d$"], "unexpect": ["gamma"]}));
    assert_eq!(score("check_list", &f, Some(&r), &no_opts()).score, 1.0);
    let r = rules(json!({"expect": ["^alpha"], "unexpect": ["2$"]}));
    assert_eq!(score("check_list", &f, Some(&r), &no_opts()).score, 0.0);
    let r = rules(json!({"expect": ["("]}));
    let err = evaluate("check_list", &f, Some(&r), &no_opts()).unwrap_err();
    assert!(
        matches!(err, EvalError::BadOption { ref option, .. } if option == "rules.expect"),
        "{err}"
    );
}

#[test]
fn check_csv_scores() {
    let d = tempfile::tempdir().unwrap();
    let f = Artifact::File(write(d.path(), "t.csv", "name,age\nann,31\nbob,40\n"));
    let r =
        rules(json!({"expect": [{"name": "ann", "age": "31"}], "unexpect": [{"name": "carl"}]}));
    assert_eq!(score("check_csv", &f, Some(&r), &no_opts()).score, 1.0);
    let r = rules(json!({"expect": [{"name": "ann", "age": 31}]}));
    assert_eq!(
        score("check_csv", &f, Some(&r), &no_opts()).score,
        0.0,
        "numbers never equal CSV strings"
    );
    let r = rules(json!({"unexpect": [{"name": "bob"}]}));
    assert_eq!(score("check_csv", &f, Some(&r), &no_opts()).score, 0.0);
}

#[test]
fn check_json_settings_scores() {
    let d = tempfile::tempdir().unwrap();
    let f = Artifact::File(write(
        d.path(),
        "settings.json",
        r#"{"editor.wordWrapColumn": 50, "x": true}"#,
    ));
    let r = rules(json!({"expected": {"editor.wordWrapColumn": 50}}));
    assert_eq!(
        score("check_json_settings", &f, Some(&r), &no_opts()).score,
        1.0
    );
    let r = rules(json!({"expected": {"editor.wordWrapColumn": 80}}));
    assert_eq!(
        score("check_json_settings", &f, Some(&r), &no_opts()).score,
        0.0
    );
    let c = Artifact::File(write(
        d.path(),
        "c.json",
        "// comment\n{\"editor.wordWrapColumn\": 80}",
    ));
    assert_eq!(
        score("check_json_settings", &c, Some(&r), &no_opts()).score,
        0.0
    );
}

#[test]
fn missing_artifacts_score_zero_with_reason() {
    let missing = Artifact::Missing("vm_file: HTTP 404".into());
    for metric in supported_metrics() {
        let s = evaluate(
            metric,
            &missing,
            Some(&rules(json!({"expected": 1}))),
            &no_opts(),
        )
        .unwrap_or_else(|e| panic!("{metric}: {e}"));
        assert_eq!(s.score, 0.0, "{metric}");
        assert!(s.detail.contains("HTTP 404"), "{metric}: {}", s.detail);
    }
    let s = score("exact_match", &text("x"), Some(&missing), &no_opts());
    assert_eq!(s.score, 0.0);
    assert!(s.detail.starts_with("expected missing"), "{}", s.detail);
}

#[test]
fn unknown_and_unsupported_metrics_are_errors() {
    let err = evaluate("no_such_metric", &text("x"), None, &no_opts()).unwrap_err();
    assert!(
        matches!(err, EvalError::UnknownMetric(ref n) if n == "no_such_metric"),
        "{err}"
    );
    let err = evaluate("compare_pptx_files", &text("x"), None, &no_opts()).unwrap_err();
    assert!(
        matches!(err, EvalError::Unsupported { ref metric, .. } if metric == "compare_pptx_files"),
        "{err}"
    );
    assert!(!is_supported("compare_pptx_files"));
    assert!(unsupported_reason("compare_pptx_files").is_some());
    assert!(unsupported_reason("exact_match").is_none());
    assert!(unsupported_reason("no_such_metric").is_none());
}

#[test]
fn wrong_artifact_kind_is_error() {
    let err = evaluate(
        "compare_text_file",
        &text("not a file"),
        Some(&Artifact::File("x".into())),
        &no_opts(),
    )
    .unwrap_err();
    match err {
        EvalError::WrongArtifact {
            metric,
            expected,
            got,
        } => {
            assert_eq!(metric, "compare_text_file");
            assert_eq!(expected, "file");
            assert_eq!(got, "text");
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn supported_list_is_sorted_and_consistent() {
    let list = supported_metrics();
    assert!(list.windows(2).all(|w| w[0] < w[1]));
    assert!(list.iter().all(|m| is_supported(m)));
}

#[test]
fn combine_follows_osworld() {
    assert_eq!(combine(&[1.0, 0.5], Conj::And), 0.75);
    assert_eq!(combine(&[1.0, 0.0, 1.0], Conj::And), 0.0);
    assert_eq!(combine(&[0.0, 0.5], Conj::Or), 0.5);
    assert_eq!(combine(&[0.0, 1.0, 0.2], Conj::Or), 1.0);
    assert_eq!(combine(&[0.0, 0.0], Conj::Or), 0.0);
    assert_eq!(combine(&[], Conj::And), 0.0);
    assert_eq!("or".parse::<Conj>(), Ok(Conj::Or));
    assert_eq!(Conj::default(), Conj::And);
    assert!("xor".parse::<Conj>().is_err());
}
