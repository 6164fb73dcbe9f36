//! The data-science metrics (`ds_*`) through `evaluate`: each passes, each
//! failure path scores 0 with its reason, and malformed options are errors.
//! Chart fixtures are real matplotlib/pandas/seaborn SVGs
//! (`tests/data/ds/gen_charts.py`).

use std::path::{Path, PathBuf};

use evaluators::{evaluate, is_supported, supported_metrics, Artifact, EvalError, Options, Scored};
use serde_json::{json, Value};
use tempfile::TempDir;

fn opts(v: Value) -> Options {
    v.as_object().cloned().expect("options object")
}

fn none() -> Options {
    Options::new()
}

fn text(s: &str) -> Artifact {
    Artifact::Text(s.to_string())
}

fn js(v: Value) -> Artifact {
    Artifact::Json(v)
}

fn file(p: &Path) -> Artifact {
    Artifact::File(p.to_path_buf())
}

fn write(dir: &TempDir, name: &str, content: &str) -> PathBuf {
    let p = dir.path().join(name);
    std::fs::write(&p, content).expect("write fixture");
    p
}

fn data(name: &str) -> Artifact {
    Artifact::File(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/ds")
            .join(name),
    )
}

fn score(
    metric: &str,
    result: &Artifact,
    expected: Option<&Artifact>,
    options: &Options,
) -> Scored {
    evaluate(metric, result, expected, options).unwrap_or_else(|e| panic!("{metric}: {e}"))
}

#[track_caller]
fn passes(s: Scored) -> Scored {
    assert_eq!(s.score, 1.0, "expected a pass: {}", s.detail);
    s
}

#[track_caller]
fn fails_with(s: Scored, needle: &str) {
    assert_eq!(s.score, 0.0, "expected a fail: {}", s.detail);
    assert!(s.detail.contains(needle), "{:?} lacks {needle:?}", s.detail);
}

#[track_caller]
fn bad_option(r: Result<Scored, EvalError>, option: &str) {
    match r {
        Err(EvalError::BadOption { option: o, .. }) => assert_eq!(o, option),
        other => panic!("expected BadOption {option}, got {other:?}"),
    }
}

#[test]
fn every_ds_metric_is_supported_and_the_list_stays_sorted() {
    for m in [
        "ds_number",
        "ds_table",
        "ds_predictions",
        "ds_chart_svg",
        "ds_image",
        "ds_notebook",
    ] {
        assert!(is_supported(m), "{m}");
    }
    let names = supported_metrics();
    assert!(names.windows(2).all(|w| w[0] < w[1]), "{names:?}");
}

// ---------------------------------------------------------------- ds_number

#[test]
fn a_number_within_tolerance_passes() {
    let s = passes(score(
        "ds_number",
        &text(" 42.0000001\n"),
        Some(&js(json!(42))),
        &none(),
    ));
    assert_eq!(s.detail, "42.0000001 == 42 (tol 4.2e-5)");
    passes(score(
        "ds_number",
        &text("5.25"),
        Some(&js(json!({"value": 5.2531}))),
        &opts(json!({"abs_tol": 0.01})),
    ));
    passes(score(
        "ds_number",
        &text("1000"),
        Some(&js(json!("1001"))),
        &opts(json!({"rel_tol": 0.01})),
    ));
}

#[test]
fn a_number_outside_tolerance_fails_naming_both() {
    let s = score(
        "ds_number",
        &text("41.5"),
        Some(&js(json!(42))),
        &opts(json!({"abs_tol": 0.1})),
    );
    fails_with(s, "41.5 != 42 (tol 0.1)");
}

#[test]
fn a_number_file_is_read_as_text() {
    let dir = TempDir::new().unwrap();
    let p = write(&dir, "mean.txt", "12.5\n");
    passes(score(
        "ds_number",
        &file(&p),
        Some(&js(json!(12.5))),
        &none(),
    ));
    fails_with(
        score(
            "ds_number",
            &file(&dir.path().join("nope.txt")),
            Some(&js(json!(1))),
            &none(),
        ),
        "not found",
    );
}

#[test]
fn strict_parsing_rejects_prose_and_separators() {
    fails_with(
        score(
            "ds_number",
            &text("The mean is 42"),
            Some(&js(json!(42))),
            &none(),
        ),
        "not a number: \"The mean is 42\"",
    );
    fails_with(
        score("ds_number", &text("1,234"), Some(&js(json!(1234))), &none()),
        "not a number",
    );
    fails_with(
        score("ds_number", &text("12%"), Some(&js(json!(12))), &none()),
        "not a number",
    );
    fails_with(
        score("ds_number", &text("nan"), Some(&js(json!(1))), &none()),
        "not a number",
    );
}

#[test]
fn an_empty_answer_fails_as_empty() {
    fails_with(
        score("ds_number", &text("  \n"), Some(&js(json!(1))), &none()),
        "empty answer",
    );
}

#[test]
fn first_and_last_find_numbers_in_written_answers() {
    let answer = text("Between 2019 and 2020 revenue grew to 1,234.5 dollars.");
    passes(score(
        "ds_number",
        &answer,
        Some(&js(json!(2019))),
        &opts(json!({"parse": "first"})),
    ));
    passes(score(
        "ds_number",
        &answer,
        Some(&js(json!(1234.5))),
        &opts(json!({"parse": "last"})),
    ));
    fails_with(
        score(
            "ds_number",
            &text("no digits"),
            Some(&js(json!(1))),
            &opts(json!({"parse": "last"})),
        ),
        "not a number",
    );
}

#[test]
fn ds_number_options_and_expected_are_checked() {
    let e = js(json!(1));
    bad_option(
        evaluate(
            "ds_number",
            &text("1"),
            Some(&e),
            &opts(json!({"parse": "any"})),
        ),
        "parse",
    );
    bad_option(
        evaluate(
            "ds_number",
            &text("1"),
            Some(&e),
            &opts(json!({"abs_tol": "x"})),
        ),
        "abs_tol",
    );
    bad_option(
        evaluate(
            "ds_number",
            &text("1"),
            Some(&e),
            &opts(json!({"rel_tol": -1})),
        ),
        "rel_tol",
    );
    assert!(matches!(
        evaluate("ds_number", &text("1"), Some(&js(json!({"v": 1}))), &none()),
        Err(EvalError::WrongArtifact { .. })
    ));
}

#[test]
fn controller_options_and_unknown_options_are_ignored() {
    let o = opts(json!({"check": "mean", "weight": 2, "critical": false, "whatever": [1]}));
    passes(score("ds_number", &text("1"), Some(&js(json!(1))), &o));
}

#[test]
fn a_missing_result_scores_zero_with_its_reason() {
    let s = score(
        "ds_number",
        &Artifact::Missing("no file".into()),
        Some(&js(json!(1))),
        &none(),
    );
    fails_with(s, "result missing: no file");
}

// ---------------------------------------------------------------- ds_table

const SALES: &str = "region,total,count\nnorth,1210.0,3\nsouth,80,2\neast,95.25,1\n";

#[test]
fn a_table_with_rows_in_another_order_passes_by_key() {
    let dir = TempDir::new().unwrap();
    let want = write(&dir, "want.csv", SALES);
    let got = write(
        &dir,
        "got.csv",
        "Region;Total;Count;extra\neast;95.25;1;x\nnorth;1210;3;y\nsouth;80.0000001;2;z\n",
    );
    let s = passes(score(
        "ds_table",
        &file(&got),
        Some(&file(&want)),
        &opts(json!({"key": ["region"]})),
    ));
    assert_eq!(s.detail, "3 rows × 3 columns match");
}

#[test]
fn a_wrong_cell_is_named_by_key_column_and_tolerance() {
    let dir = TempDir::new().unwrap();
    let want = write(&dir, "want.csv", SALES);
    let got = write(
        &dir,
        "got.csv",
        "region,total,count\nnorth,1203.5,3\nsouth,80,2\neast,95.25,1\n",
    );
    let s = score(
        "ds_table",
        &file(&got),
        Some(&file(&want)),
        &opts(json!({"key": "region", "tolerance": {"total": 0.01}})),
    );
    fails_with(
        s,
        "row key=(north): column total: 1203.5 != 1210 (tol 0.01) (1 of 3 rows differ)",
    );
}

#[test]
fn per_column_tolerance_lets_close_values_pass() {
    let dir = TempDir::new().unwrap();
    let want = write(&dir, "want.csv", SALES);
    let got = write(
        &dir,
        "got.csv",
        "region,total,count\nnorth,1210.4,3\nsouth,80,2\neast,95.25,1\n",
    );
    passes(score(
        "ds_table",
        &file(&got),
        Some(&file(&want)),
        &opts(json!({"key": ["region"], "tolerance": {"Total": 0.5}})),
    ));
    passes(score(
        "ds_table",
        &file(&got),
        Some(&file(&want)),
        &opts(json!({"key": ["region"], "rel_tol": 0.001})),
    ));
}

#[test]
fn missing_and_unexpected_rows_fail_unless_extra_rows() {
    let dir = TempDir::new().unwrap();
    let want = write(&dir, "want.csv", SALES);
    let got = write(
        &dir,
        "got.csv",
        "region,total,count\nnorth,1210,3\neast,95.25,1\nwest,1,1\n",
    );
    let s = score(
        "ds_table",
        &file(&got),
        Some(&file(&want)),
        &opts(json!({"key": ["region"]})),
    );
    fails_with(s.clone(), "row key=(west): not expected");
    fails_with(s, "row key=(south): missing");
    let got = write(
        &dir,
        "got2.csv",
        "region,total,count\nnorth,1210,3\nsouth,80,2\neast,95.25,1\nwest,1,1\n",
    );
    passes(score(
        "ds_table",
        &file(&got),
        Some(&file(&want)),
        &opts(json!({"key": ["region"], "extra_rows": true})),
    ));
}

#[test]
fn at_most_three_differences_are_listed_with_the_count() {
    let dir = TempDir::new().unwrap();
    let want = write(&dir, "want.csv", "k,v\n1,1\n2,2\n3,3\n4,4\n5,5\n");
    let got = write(&dir, "got.csv", "k,v\n1,0\n2,0\n3,0\n4,0\n5,5\n");
    let s = score(
        "ds_table",
        &file(&got),
        Some(&file(&want)),
        &opts(json!({"key": ["k"]})),
    );
    assert_eq!(s.score, 0.0);
    assert_eq!(s.detail.matches("row key=").count(), 3, "{}", s.detail);
    assert!(
        s.detail.ends_with("… (4 differences) (4 of 5 rows differ)"),
        "{}",
        s.detail
    );
}

#[test]
fn duplicate_result_keys_fail() {
    let dir = TempDir::new().unwrap();
    let want = write(&dir, "want.csv", SALES);
    let got = write(
        &dir,
        "got.csv",
        "region,total,count\nnorth,1210,3\nnorth,1210,3\nsouth,80,2\neast,95.25,1\n",
    );
    fails_with(
        score(
            "ds_table",
            &file(&got),
            Some(&file(&want)),
            &opts(json!({"key": ["region"]})),
        ),
        "duplicate key key=(north)",
    );
}

#[test]
fn ordered_tables_must_keep_the_expected_row_order() {
    let dir = TempDir::new().unwrap();
    let want = write(&dir, "want.csv", SALES);
    let got = write(
        &dir,
        "got.csv",
        "region,total,count\nsouth,80,2\nnorth,1210,3\neast,95.25,1\n",
    );
    fails_with(
        score(
            "ds_table",
            &file(&got),
            Some(&file(&want)),
            &opts(json!({"key": ["region"], "ordered": true})),
        ),
        "row order differs",
    );
    passes(score(
        "ds_table",
        &file(&got),
        Some(&file(&want)),
        &opts(json!({"key": ["region"]})),
    ));
    fails_with(
        score(
            "ds_table",
            &file(&got),
            Some(&file(&want)),
            &opts(json!({"ordered": true})),
        ),
        "row 1: column region: \"south\" != \"north\"",
    );
}

#[test]
fn without_a_key_unordered_rows_compare_as_a_multiset() {
    let dir = TempDir::new().unwrap();
    let want = write(&dir, "want.csv", SALES);
    let got = write(
        &dir,
        "got.csv",
        "region,total,count\nsouth,80,2\neast,95.25,1\nnorth,1210,3\n",
    );
    passes(score("ds_table", &file(&got), Some(&file(&want)), &none()));
    let got = write(
        &dir,
        "short.csv",
        "region,total,count\nsouth,80,2\nnorth,1210,3\n",
    );
    fails_with(
        score("ds_table", &file(&got), Some(&file(&want)), &none()),
        "expected row 3 (east, 95.25, 1): no matching row (1 of 3 rows differ)",
    );
    let got = write(
        &dir,
        "long.csv",
        "region,total,count\nsouth,80,2\nnorth,1210,3\neast,95.25,1\nwest,0,0\n",
    );
    fails_with(
        score("ds_table", &file(&got), Some(&file(&want)), &none()),
        "1 result rows not expected",
    );
    passes(score(
        "ds_table",
        &file(&got),
        Some(&file(&want)),
        &opts(json!({"extra_rows": true})),
    ));
}

#[test]
fn missing_values_equal_each_other_and_nothing_else() {
    let dir = TempDir::new().unwrap();
    let want = write(&dir, "want.csv", "k,v\na,\nb,NaN\nc,1\n");
    let got = write(&dir, "got.csv", "k,v\na,nan\nb,null\nc,NA\n");
    fails_with(
        score(
            "ds_table",
            &file(&got),
            Some(&file(&want)),
            &opts(json!({"key": ["k"]})),
        ),
        "row key=(c): column v: missing != \"1\"",
    );
}

#[test]
fn column_names_normalise_unless_told_not_to() {
    let dir = TempDir::new().unwrap();
    let want = write(&dir, "want.csv", "total_sales,n\n1,2\n");
    let got = write(&dir, "got.tsv", "Total Sales\tN\n1\t2\n");
    passes(score("ds_table", &file(&got), Some(&file(&want)), &none()));
    fails_with(
        score(
            "ds_table",
            &file(&got),
            Some(&file(&want)),
            &opts(json!({"normalize_names": false})),
        ),
        "missing column \"total_sales\"",
    );
}

#[test]
fn only_the_chosen_columns_are_compared() {
    let dir = TempDir::new().unwrap();
    let want = write(&dir, "want.csv", SALES);
    let got = write(
        &dir,
        "got.csv",
        "region,total,count\nnorth,1210,0\nsouth,80,0\neast,95.25,0\n",
    );
    passes(score(
        "ds_table",
        &file(&got),
        Some(&file(&want)),
        &opts(json!({"key": ["region"], "columns": ["total"]})),
    ));
    bad_option(
        evaluate(
            "ds_table",
            &file(&got),
            Some(&file(&want)),
            &opts(json!({"columns": ["nope"]})),
        ),
        "columns",
    );
}

#[test]
fn a_json_expected_table_compares_like_a_csv() {
    let dir = TempDir::new().unwrap();
    let got = write(&dir, "got.csv", SALES);
    let want = js(
        json!({"columns": ["region", "total"], "rows": [["north", 1210], ["south", 80.0], ["east", 95.25]]}),
    );
    passes(score(
        "ds_table",
        &file(&got),
        Some(&want),
        &opts(json!({"key": ["region"]})),
    ));
    bad_option(
        evaluate(
            "ds_table",
            &file(&got),
            Some(&js(json!({"columns": ["a"], "rows": [[1, 2]]}))),
            &none(),
        ),
        "expected.rows",
    );
}

#[test]
fn an_xlsx_result_is_read_from_the_chosen_sheet() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("out.xlsx");
    let mut book = rust_xlsxwriter::Workbook::new();
    let s1 = book.add_worksheet();
    s1.set_name("notes").unwrap();
    s1.write_string(0, 0, "nothing here").unwrap();
    let s2 = book.add_worksheet();
    s2.set_name("summary").unwrap();
    // A blank first row: the header is the first non-blank row.
    for (c, h) in ["region", "total", "count"].iter().enumerate() {
        s2.write_string(1, c as u16, *h).unwrap();
    }
    for (r, (reg, tot, n)) in [
        ("north", 1210.0, 3.0),
        ("south", 80.0, 2.0),
        ("east", 95.25, 1.0),
    ]
    .iter()
    .enumerate()
    {
        let r = r as u32 + 2;
        s2.write_string(r, 0, *reg).unwrap();
        s2.write_number(r, 1, *tot).unwrap();
        s2.write_number(r, 2, *n).unwrap();
    }
    book.save(&path).unwrap();
    let want = js(
        json!({"columns": ["region", "total", "count"], "rows": [["north", 1210, 3], ["south", 80, 2], ["east", 95.25, 1]]}),
    );
    passes(score(
        "ds_table",
        &file(&path),
        Some(&want),
        &opts(json!({"sheet": "summary", "key": ["region"]})),
    ));
    passes(score(
        "ds_table",
        &file(&path),
        Some(&want),
        &opts(json!({"sheet": 1})),
    ));
    fails_with(
        score("ds_table", &file(&path), Some(&want), &none()),
        "missing column \"region\"",
    );
    fails_with(
        score(
            "ds_table",
            &file(&path),
            Some(&want),
            &opts(json!({"sheet": "nope"})),
        ),
        "has no sheet \"nope\"",
    );
    bad_option(
        evaluate(
            "ds_table",
            &file(&path),
            Some(&want),
            &opts(json!({"sheet": true})),
        ),
        "sheet",
    );
}

#[test]
fn an_unreadable_result_scores_zero_but_an_unreadable_expected_is_an_error() {
    let dir = TempDir::new().unwrap();
    let want = write(&dir, "want.csv", SALES);
    let absent = dir.path().join("absent.csv");
    fails_with(
        score("ds_table", &file(&absent), Some(&file(&want)), &none()),
        "not found",
    );
    let broken = write(&dir, "broken.xlsx", "not a zip");
    fails_with(
        score("ds_table", &file(&broken), Some(&file(&want)), &none()),
        "not a readable workbook",
    );
    assert!(matches!(
        evaluate("ds_table", &file(&want), Some(&file(&absent)), &none()),
        Err(EvalError::UnreadableFile { .. })
    ));
}

#[test]
fn ds_table_options_are_checked() {
    let dir = TempDir::new().unwrap();
    let want = write(&dir, "want.csv", SALES);
    for (o, name) in [
        (json!({"key": 3}), "key"),
        (json!({"key": ["nope"]}), "key"),
        (json!({"ordered": "yes"}), "ordered"),
        (json!({"tolerance": {"total": "big"}}), "tolerance"),
        (json!({"tolerance": 1}), "tolerance"),
        (json!({"extra_rows": 1}), "extra_rows"),
        (json!({"normalize_names": "no"}), "normalize_names"),
    ] {
        bad_option(
            evaluate("ds_table", &file(&want), Some(&file(&want)), &opts(o)),
            name,
        );
    }
    let dup = write(&dir, "dup.csv", "k,v\n1,1\n1,2\n");
    bad_option(
        evaluate(
            "ds_table",
            &file(&want),
            Some(&file(&dup)),
            &opts(json!({"key": ["k"]})),
        ),
        "key",
    );
}

// ---------------------------------------------------------- ds_predictions

fn truth(metric: &str, threshold: f64, labels: Value) -> Artifact {
    js(
        json!({"id": "id", "label": "label", "ids": [1, 2, 3, 4], "labels": labels, "metric": metric, "threshold": threshold}),
    )
}

#[test]
fn accuracy_at_the_threshold_passes_and_prints_value_and_threshold() {
    let dir = TempDir::new().unwrap();
    let got = write(&dir, "pred.csv", "id,prediction\n4,1\n3,1\n2.0,1\n1,0\n");
    let s = passes(score(
        "ds_predictions",
        &file(&got),
        Some(&truth("accuracy", 0.75, json!([0, 1, 1, 0]))),
        &none(),
    ));
    assert_eq!(s.detail, "accuracy 0.750 >= 0.750 on 4 rows");
    let s = score(
        "ds_predictions",
        &file(&got),
        Some(&truth("accuracy", 0.8, json!([0, 1, 1, 0]))),
        &none(),
    );
    fails_with(s, "accuracy 0.750 < 0.800 on 4 rows");
}

#[test]
fn class_labels_compare_canonically() {
    let dir = TempDir::new().unwrap();
    let got = write(
        &dir,
        "pred.csv",
        "id,prediction\n1,0.0\n2, cat\n3,1\n4,dog\n",
    );
    let t = js(
        json!({"ids": ["1", "2", "3", "4"], "labels": ["0", "cat", 1.0, "dog"], "metric": "accuracy", "threshold": 1.0}),
    );
    passes(score("ds_predictions", &file(&got), Some(&t), &none()));
}

#[test]
fn the_prediction_column_is_found_by_option_name_label_or_elimination() {
    let dir = TempDir::new().unwrap();
    let t = truth("accuracy", 1.0, json!([0, 1, 1, 0]));
    let two = write(&dir, "two.csv", "ID,yhat\n1,0\n2,1\n3,1\n4,0\n");
    passes(score("ds_predictions", &file(&two), Some(&t), &none()));
    let three = write(
        &dir,
        "three.csv",
        "id,x,guess\n1,9,0\n2,9,1\n3,9,1\n4,9,0\n",
    );
    fails_with(
        score("ds_predictions", &file(&three), Some(&t), &none()),
        "no prediction column \"prediction\"",
    );
    passes(score(
        "ds_predictions",
        &file(&three),
        Some(&t),
        &opts(json!({"prediction": "guess"})),
    ));
    let named = write(
        &dir,
        "named.csv",
        "row,x,label\n1,9,0\n2,9,1\n3,9,1\n4,9,0\n",
    );
    passes(score(
        "ds_predictions",
        &file(&named),
        Some(&t),
        &opts(json!({"id": "row"})),
    ));
    fails_with(
        score("ds_predictions", &file(&named), Some(&t), &none()),
        "no id column \"id\"",
    );
}

#[test]
fn missing_and_duplicate_ids_fail_with_a_count_and_an_example() {
    let dir = TempDir::new().unwrap();
    let t = truth("accuracy", 0.0, json!([0, 1, 1, 0]));
    let missing = write(&dir, "m.csv", "id,prediction\n1,0\n2,1\n");
    fails_with(
        score("ds_predictions", &file(&missing), Some(&t), &none()),
        "2 of 4 ids missing from the result, e.g. 3",
    );
    let dup = write(&dir, "d.csv", "id,prediction\n1,0\n2,1\n3,1\n4,0\n2,0\n");
    fails_with(
        score("ds_predictions", &file(&dup), Some(&t), &none()),
        "1 duplicate ids in the result, e.g. 2",
    );
}

#[test]
fn binary_and_macro_f1_pass_at_their_thresholds() {
    let dir = TempDir::new().unwrap();
    let got = write(&dir, "p.csv", "id,prediction\n1,1\n2,1\n3,0\n4,0\n");
    // truth 1,1,1,0: tp 2, fn 1, fp 0 -> f1 0.8; class 0: tp 1, fp 1 -> 0.667
    passes(score(
        "ds_predictions",
        &file(&got),
        Some(&truth("f1", 0.8, json!([1, 1, 1, 0]))),
        &none(),
    ));
    fails_with(
        score(
            "ds_predictions",
            &file(&got),
            Some(&truth("f1_macro", 0.8, json!([1, 1, 1, 0]))),
            &none(),
        ),
        "f1_macro 0.733 < 0.800",
    );
}

#[test]
fn auc_reads_scores_and_rejects_non_numbers() {
    let dir = TempDir::new().unwrap();
    let got = write(
        &dir,
        "p.csv",
        "id,prediction\n1,0.1\n2,0.4\n3,0.35\n4,0.8\n",
    );
    passes(score(
        "ds_predictions",
        &file(&got),
        Some(&truth("auc", 0.75, json!([0, 0, 1, 1]))),
        &none(),
    ));
    let bad = write(&dir, "b.csv", "id,prediction\n1,0.1\n2,high\n3,0.35\n4,\n");
    fails_with(
        score(
            "ds_predictions",
            &file(&bad),
            Some(&truth("auc", 0.5, json!([0, 0, 1, 1]))),
            &none(),
        ),
        "2 predictions are not numbers, e.g. id 2: \"high\"",
    );
    bad_option(
        evaluate(
            "ds_predictions",
            &file(&got),
            Some(&truth("auc", 0.5, json!([0, 2, 1, 1]))),
            &none(),
        ),
        "expected.labels",
    );
}

#[test]
fn regression_errors_pass_at_or_below_the_threshold() {
    let dir = TempDir::new().unwrap();
    let got = write(&dir, "p.csv", "id,prediction\n1,1\n2,2\n3,5\n4,4\n");
    let labels = json!([1, 2, 3, 4]);
    let s = passes(score(
        "ds_predictions",
        &file(&got),
        Some(&truth("rmse", 1.0, labels.clone())),
        &none(),
    ));
    assert_eq!(s.detail, "rmse 1.000 <= 1.000 on 4 rows");
    fails_with(
        score(
            "ds_predictions",
            &file(&got),
            Some(&truth("mae", 0.4, labels.clone())),
            &none(),
        ),
        "mae 0.500 > 0.400",
    );
    passes(score(
        "ds_predictions",
        &file(&got),
        Some(&truth("r2", 0.19, labels)),
        &none(),
    ));
}

#[test]
fn a_malformed_truth_is_a_bad_option() {
    let dir = TempDir::new().unwrap();
    let got = write(&dir, "p.csv", "id,prediction\n1,1\n");
    for (t, name) in [
        (
            json!({"ids": [1], "labels": [1], "metric": "logloss", "threshold": 1}),
            "expected.metric",
        ),
        (
            json!({"ids": [1], "labels": [1], "metric": "accuracy"}),
            "expected.threshold",
        ),
        (
            json!({"ids": [1, 2], "labels": [1], "threshold": 1}),
            "expected.labels",
        ),
        (
            json!({"ids": [], "labels": [], "threshold": 1}),
            "expected.ids",
        ),
        (
            json!({"ids": [1], "labels": ["x"], "metric": "rmse", "threshold": 1}),
            "expected.labels",
        ),
    ] {
        bad_option(
            evaluate("ds_predictions", &file(&got), Some(&js(t)), &none()),
            name,
        );
    }
    bad_option(
        evaluate(
            "ds_predictions",
            &file(&got),
            Some(&truth("accuracy", 1.0, json!([1, 1, 1, 1]))),
            &opts(json!({"id": 3})),
        ),
        "id",
    );
}

// ------------------------------------------------------------ ds_chart_svg

fn chart(name: &str, want: Value) -> Scored {
    score("ds_chart_svg", &data(name), Some(&js(want)), &none())
}

#[test]
fn a_bar_chart_matches_its_title_labels_ticks_and_heights() {
    let want = json!({
        "kind": "bar", "title": "sales by  REGION", "xlabel": "Region", "ylabel": "Sales",
        "labels": ["north", "south", "east", "west"], "values": [120.5, 80, 95.25, 60], "series": 1
    });
    let s = passes(chart("bar.svg", want.clone()));
    assert_eq!(
        s.detail,
        "bar chart matches (kind, title, xlabel, ylabel, labels, series, values)"
    );
    // Text drawn as <text> (svg.fonttype none), with an escaped `&`.
    let mut w = want;
    w["title"] = json!("Sales by region");
    w["ylabel"] = json!("Sales & returns");
    passes(chart("bar_text.svg", w));
}

#[test]
fn bar_heights_right_up_to_scale_pass() {
    passes(chart("bar.svg", json!({"values": [1205, 800, 952.5, 600]})));
}

#[test]
fn wrong_bars_are_named() {
    fails_with(
        chart("bar.svg", json!({"values": [120.5, 80, 95.25]})),
        "4 bars, expected 3",
    );
    fails_with(
        chart("bar.svg", json!({"values": [120.5, 80, 60, 95.25]})),
        "value 3: 0.790 != 0.498 of the largest (rel_tol 0.02)",
    );
    passes(score(
        "ds_chart_svg",
        &data("bar.svg"),
        Some(&js(json!({"values": [120.5, 80, 60, 95.25]}))),
        &opts(json!({"ordered": false})),
    ));
}

#[test]
fn a_wrong_title_or_axis_label_is_named() {
    fails_with(
        chart("bar.svg", json!({"title": "Total amount by region"})),
        "title \"Sales by region\" != \"Total amount by region\"",
    );
    fails_with(
        chart("bar.svg", json!({"xlabel": "Country"})),
        "xlabel \"Region\" != \"Country\"",
    );
    fails_with(
        chart("bar_negative.svg", json!({"title": "Any"})),
        "no title, expected \"Any\"",
    );
    fails_with(
        chart("bar_negative.svg", json!({"ylabel": "Any"})),
        "no ylabel",
    );
}

#[test]
fn wrong_tick_labels_are_listed() {
    fails_with(
        chart("bar.svg", json!({"labels": ["north", "south"]})),
        "tick labels [north, south, east, west] != [north, south]",
    );
}

#[test]
fn negative_bars_read_negative() {
    passes(chart(
        "bar_negative.svg",
        json!({"kind": "bar", "values": [3, -1, 2], "labels": ["a", "b", "c"]}),
    ));
    fails_with(
        chart("bar_negative.svg", json!({"values": [3, 1, 2]})),
        "value 2: -0.333 != 0.333",
    );
}

#[test]
fn a_horizontal_bar_chart_reads_bottom_to_top() {
    passes(chart(
        "barh.svg",
        json!({"kind": "barh", "values": [5, 7, 2], "labels": ["x", "y", "z"], "title": "Horizontal"}),
    ));
    fails_with(
        chart("barh.svg", json!({"kind": "bar"})),
        "kind: expected a bar chart, found 3 horizontal bars",
    );
}

#[test]
fn a_line_chart_matches_its_first_line_up_to_range() {
    passes(chart(
        "line.svg",
        json!({"kind": "line", "values": [10, 30, 20, 40], "series": 2, "title": "Monthly"}),
    ));
    passes(chart("line.svg", json!({"values": [0, 2, 1, 3]})));
    fails_with(
        chart("line.svg", json!({"values": [10, 20, 30, 40]})),
        "value 2: 0.667 != 0.333 of the range",
    );
    fails_with(
        chart("line.svg", json!({"kind": "line", "series": 1})),
        "2 series, expected 1",
    );
    fails_with(
        chart("line.svg", json!({"kind": "scatter"})),
        "kind: expected a scatter chart, found 2 lines",
    );
}

#[test]
fn a_scatter_plot_counts_its_points() {
    passes(chart(
        "scatter.svg",
        json!({"kind": "scatter", "values": [5, 4, 3, 2, 1], "xlabel": "x", "series": 1}),
    ));
    fails_with(
        chart(
            "scatter.svg",
            json!({"kind": "scatter", "values": [1, 2, 3]}),
        ),
        "5 points, expected 3",
    );
}

#[test]
fn a_pandas_grouped_bar_chart_interleaves_its_series() {
    passes(chart(
        "pandas_grouped.svg",
        json!({"kind": "bar", "title": "Quarterly", "xlabel": "region", "labels": ["n", "s", "e"], "series": 2, "values": [1, 2, 2, 3, 3, 1]}),
    ));
    fails_with(
        chart("pandas_grouped.svg", json!({"series": 1})),
        "2 series, expected 1",
    );
}

#[test]
fn a_seaborn_barplot_ignores_its_error_bars() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/ds/seaborn_bar.svg");
    if !p.exists() {
        return; // seaborn was not installed when the fixtures were made
    }
    passes(chart(
        "seaborn_bar.svg",
        json!({"kind": "bar", "title": "Seaborn means", "xlabel": "cat", "ylabel": "v", "labels": ["a", "b", "c"], "values": [2, 3, 6], "series": 1}),
    ));
}

#[test]
fn subplots_use_the_axes_of_the_expected_kind_and_the_suptitle() {
    passes(chart(
        "subplots.svg",
        json!({"kind": "bar", "values": [1, 2], "labels": ["a", "b"], "title": "Two panels"}),
    ));
    passes(chart(
        "subplots.svg",
        json!({"kind": "line", "values": [3, 4]}),
    ));
}

#[test]
fn a_non_svg_or_non_matplotlib_file_fails() {
    let dir = TempDir::new().unwrap();
    let junk = write(&dir, "c.svg", "<svg");
    fails_with(
        score("ds_chart_svg", &file(&junk), Some(&js(json!({}))), &none()),
        "not an SVG",
    );
    let plain = write(
        &dir,
        "p.svg",
        "<svg xmlns=\"http://www.w3.org/2000/svg\"><rect/></svg>",
    );
    fails_with(
        score("ds_chart_svg", &file(&plain), Some(&js(json!({}))), &none()),
        "no figure_1",
    );
    fails_with(
        score(
            "ds_chart_svg",
            &data("chart.png"),
            Some(&js(json!({}))),
            &none(),
        ),
        "not UTF-8",
    );
}

#[test]
fn ds_chart_svg_options_and_expected_are_checked() {
    let r = data("bar.svg");
    bad_option(
        evaluate(
            "ds_chart_svg",
            &r,
            Some(&js(json!({}))),
            &opts(json!({"rel_tol": "x"})),
        ),
        "rel_tol",
    );
    bad_option(
        evaluate(
            "ds_chart_svg",
            &r,
            Some(&js(json!({}))),
            &opts(json!({"ordered": 0})),
        ),
        "ordered",
    );
    bad_option(
        evaluate(
            "ds_chart_svg",
            &r,
            Some(&js(json!({"kind": "pie"}))),
            &none(),
        ),
        "expected.kind",
    );
    bad_option(
        evaluate(
            "ds_chart_svg",
            &r,
            Some(&js(json!({"values": ["a"]}))),
            &none(),
        ),
        "expected.values",
    );
    bad_option(
        evaluate(
            "ds_chart_svg",
            &r,
            Some(&js(json!({"series": -1}))),
            &none(),
        ),
        "expected.series",
    );
}

// ---------------------------------------------------------------- ds_image

fn png_file(
    dir: &TempDir,
    name: &str,
    w: u32,
    h: u32,
    pixel: impl Fn(u32, u32) -> [u8; 3],
) -> PathBuf {
    let mut rgb = Vec::with_capacity((w * h * 3) as usize);
    for y in 0..h {
        for x in 0..w {
            rgb.extend_from_slice(&pixel(x, y));
        }
    }
    let p = dir.path().join(name);
    let f = std::fs::File::create(&p).unwrap();
    let mut enc = png::Encoder::new(std::io::BufWriter::new(f), w, h);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    enc.write_header().unwrap().write_image_data(&rgb).unwrap();
    p
}

#[test]
fn a_matplotlib_png_passes() {
    let s = passes(score("ds_image", &data("chart.png"), None, &none()));
    assert!(s.detail.starts_with("400x300, "), "{}", s.detail);
}

#[test]
fn a_blank_png_fails_with_its_colour() {
    let dir = TempDir::new().unwrap();
    let p = png_file(&dir, "blank.png", 400, 300, |_, _| [255, 255, 255]);
    fails_with(
        score("ds_image", &file(&p), None, &none()),
        "blank: 100.0 % of pixels are #ffffff",
    );
}

#[test]
fn a_small_png_fails_with_its_size() {
    let dir = TempDir::new().unwrap();
    let p = png_file(&dir, "small.png", 120, 80, |x, _| [x as u8, 0, 0]);
    fails_with(
        score("ds_image", &file(&p), None, &none()),
        "120x80, expected at least 300x200",
    );
    passes(score(
        "ds_image",
        &file(&p),
        None,
        &opts(json!({"min_width": 100, "min_height": 50})),
    ));
}

#[test]
fn a_two_colour_png_fails_min_colors() {
    let dir = TempDir::new().unwrap();
    let p = png_file(&dir, "two.png", 300, 200, |x, _| {
        if x < 150 {
            [0, 0, 0]
        } else {
            [255, 0, 0]
        }
    });
    fails_with(
        score("ds_image", &file(&p), None, &none()),
        "only 2 colours, expected at least 3",
    );
    passes(score(
        "ds_image",
        &file(&p),
        None,
        &opts(json!({"min_colors": 2})),
    ));
}

#[test]
fn a_mostly_background_png_fails_max_background() {
    let dir = TempDir::new().unwrap();
    let p = png_file(&dir, "dot.png", 300, 200, |x, y| {
        if x < 3 && y < 3 {
            [x as u8, y as u8, 9]
        } else {
            [255, 255, 255]
        }
    });
    fails_with(
        score("ds_image", &file(&p), None, &none()),
        "blank: 99.985 % of pixels are #ffffff",
    );
    passes(score(
        "ds_image",
        &file(&p),
        None,
        &opts(json!({"max_background": 1.0})),
    ));
}

#[test]
fn a_file_that_is_not_a_png_fails() {
    let dir = TempDir::new().unwrap();
    let p = write(&dir, "x.png", "GIF89a");
    fails_with(score("ds_image", &file(&p), None, &none()), "not a PNG");
    let trunc = dir.path().join("t.png");
    std::fs::write(&trunc, b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR").unwrap();
    fails_with(
        score("ds_image", &file(&trunc), None, &none()),
        "not a valid PNG",
    );
    fails_with(
        score(
            "ds_image",
            &file(&dir.path().join("absent.png")),
            None,
            &none(),
        ),
        "not found",
    );
}

#[test]
fn ds_image_options_are_checked() {
    let r = data("chart.png");
    bad_option(
        evaluate("ds_image", &r, None, &opts(json!({"min_width": -3}))),
        "min_width",
    );
    bad_option(
        evaluate("ds_image", &r, None, &opts(json!({"min_colors": 2.5}))),
        "min_colors",
    );
    bad_option(
        evaluate("ds_image", &r, None, &opts(json!({"max_background": 2}))),
        "max_background",
    );
}

// ------------------------------------------------------------- ds_notebook

fn code(count: Value, source: &str, outputs: Value) -> Value {
    json!({"cell_type": "code", "execution_count": count, "metadata": {}, "source": [source], "outputs": outputs})
}

fn notebook(dir: &TempDir, cells: Vec<Value>) -> Artifact {
    let nb = json!({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells});
    Artifact::File(write(dir, "analysis.ipynb", &nb.to_string()))
}

fn ran_in_order(dir: &TempDir) -> Artifact {
    notebook(
        dir,
        vec![
            json!({"cell_type": "markdown", "metadata": {}, "source": "# Analysis"}),
            code(json!(1), "import pandas as pd", json!([])),
            code(
                json!(2),
                "print(df.mean())",
                json!([{"output_type": "stream", "name": "stdout", "text": ["mean   0.8312\n", "dtype: float64\n"]}]),
            ),
            code(
                json!(4),
                "df.shape",
                json!([{"output_type": "execute_result", "execution_count": 4, "metadata": {}, "data": {"text/plain": "(300, 4)"}}]),
            ),
            code(Value::Null, "", json!([])),
        ],
    )
}

#[test]
fn a_notebook_run_top_to_bottom_passes() {
    let dir = TempDir::new().unwrap();
    let s = passes(score("ds_notebook", &ran_in_order(&dir), None, &none()));
    assert_eq!(s.detail, "3 code cells ran in order without errors");
}

#[test]
fn expected_outputs_are_found_in_stream_and_result_text() {
    let dir = TempDir::new().unwrap();
    let nb = ran_in_order(&dir);
    let s = passes(score(
        "ds_notebook",
        &nb,
        Some(&js(json!({"contains": ["mean 0.8312", "(300, 4)"]}))),
        &none(),
    ));
    assert!(
        s.detail.ends_with("2 expected outputs found"),
        "{}",
        s.detail
    );
    fails_with(
        score(
            "ds_notebook",
            &nb,
            Some(&js(json!({"contains": ["0.9"]}))),
            &none(),
        ),
        "no output contains \"0.9\"",
    );
}

#[test]
fn an_error_output_fails_naming_the_cell() {
    let dir = TempDir::new().unwrap();
    let nb = notebook(
        &dir,
        vec![
            code(json!(1), "x = 1", json!([])),
            code(
                json!(2),
                "1/0",
                json!([{"output_type": "error", "ename": "ZeroDivisionError", "evalue": "division by zero", "traceback": []}]),
            ),
        ],
    );
    fails_with(
        score("ds_notebook", &nb, None, &none()),
        "cell 2 raised ZeroDivisionError: division by zero",
    );
}

#[test]
fn an_unexecuted_cell_fails_unless_allowed() {
    let dir = TempDir::new().unwrap();
    let nb = notebook(
        &dir,
        vec![
            code(json!(1), "x = 1", json!([])),
            code(Value::Null, "y = 2", json!([])),
        ],
    );
    fails_with(
        score("ds_notebook", &nb, None, &none()),
        "cell 2 was not executed (1 of 2 code cells not executed)",
    );
    passes(score(
        "ds_notebook",
        &nb,
        None,
        &opts(json!({"require_all_executed": false})),
    ));
    bad_option(
        evaluate(
            "ds_notebook",
            &nb,
            None,
            &opts(json!({"require_all_executed": "no"})),
        ),
        "require_all_executed",
    );
}

#[test]
fn cells_run_out_of_order_fail() {
    let dir = TempDir::new().unwrap();
    let nb = notebook(
        &dir,
        vec![
            code(json!(3), "x = 1", json!([])),
            code(json!(2), "y = x", json!([])),
        ],
    );
    fails_with(
        score("ds_notebook", &nb, None, &none()),
        "not run top to bottom: cell 1 ran as [3], cell 2 as [2]",
    );
}

#[test]
fn a_file_that_is_not_a_notebook_fails() {
    let dir = TempDir::new().unwrap();
    let p = write(&dir, "a.ipynb", "{not json");
    fails_with(
        score("ds_notebook", &file(&p), None, &none()),
        "not a notebook: invalid JSON",
    );
    let p = write(&dir, "b.ipynb", "{\"nbformat\": 3, \"worksheets\": []}");
    fails_with(
        score("ds_notebook", &file(&p), None, &none()),
        "nbformat 3, expected 4",
    );
    let p = write(&dir, "c.ipynb", "{\"nbformat\": 4, \"cells\": []}");
    fails_with(
        score("ds_notebook", &file(&p), None, &none()),
        "no code cells with source",
    );
}

#[test]
fn a_malformed_expected_for_a_notebook_is_a_bad_option() {
    let dir = TempDir::new().unwrap();
    let nb = ran_in_order(&dir);
    bad_option(
        evaluate(
            "ds_notebook",
            &nb,
            Some(&js(json!({"contains": "x"}))),
            &none(),
        ),
        "expected.contains",
    );
}
