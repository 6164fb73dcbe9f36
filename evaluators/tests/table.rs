//! `compare_table` on xlsx fixtures written with rust_xlsxwriter, and on CSV.

use std::path::{Path, PathBuf};

use evaluators::{evaluate, Artifact, EvalError, Options, Scored};
use rust_xlsxwriter::{Format, Workbook};
use serde_json::{json, Value};

/// A cell to write.
enum C {
    S(&'static str),
    N(f64),
    B(bool),
}

/// A merged range: sheet, (first row, first col, last row, last col), text.
type Merge<'a> = (&'a str, (u32, u16, u32, u16), &'a str);

/// Write a workbook with the given sheets (name, rows) and merged ranges.
fn xlsx(path: &Path, sheets: &[(&str, Vec<Vec<C>>)], merges: &[Merge<'_>]) {
    let mut wb = Workbook::new();
    for (name, rows) in sheets {
        let ws = wb.add_worksheet();
        ws.set_name(*name).unwrap();
        for (r, row) in rows.iter().enumerate() {
            for (c, v) in row.iter().enumerate() {
                let (r, c) = (r as u32, c as u16);
                match v {
                    C::S("") => {}
                    C::S(s) => {
                        ws.write_string(r, c, *s).unwrap();
                    }
                    C::N(n) => {
                        ws.write_number(r, c, *n).unwrap();
                    }
                    C::B(b) => {
                        ws.write_boolean(r, c, *b).unwrap();
                    }
                }
            }
        }
        for (sheet, (r0, c0, r1, c1), text) in merges {
            if sheet == name {
                ws.merge_range(*r0, *c0, *r1, *c1, text, &Format::new())
                    .unwrap();
            }
        }
    }
    wb.save(path).unwrap();
}

fn rules(v: Value) -> Options {
    json!({ "rules": v }).as_object().cloned().unwrap()
}

fn table(result: &Path, expected: Option<&Path>, options: &Options) -> Result<Scored, EvalError> {
    let e = expected.map(|p| Artifact::File(p.to_path_buf()));
    evaluate(
        "compare_table",
        &Artifact::File(result.to_path_buf()),
        e.as_ref(),
        options,
    )
}

fn sales(a2: f64) -> Vec<Vec<C>> {
    vec![
        vec![C::S("Item"), C::S("Price"), C::S("Ok")],
        vec![C::S("apple"), C::N(a2), C::B(true)],
        vec![C::S("pear"), C::N(2.5), C::B(false)],
    ]
}

struct Fx {
    _dir: tempfile::TempDir,
    dir: PathBuf,
}

fn fx() -> Fx {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_path_buf();
    Fx { _dir: d, dir }
}

#[test]
fn sheet_data_equal_and_different() {
    let f = fx();
    let gold = f.dir.join("gold.xlsx");
    let same = f.dir.join("same.xlsx");
    let near = f.dir.join("near.xlsx");
    let off = f.dir.join("off.xlsx");
    xlsx(&gold, &[("Sheet1", sales(1.25))], &[]);
    xlsx(&same, &[("Sheet1", sales(1.25))], &[]);
    xlsx(&near, &[("Sheet1", sales(1.250_04))], &[]);
    xlsx(&off, &[("Sheet1", sales(1.26))], &[]);
    let r = rules(json!([{"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0"}]));
    assert_eq!(table(&same, Some(&gold), &r).unwrap().score, 1.0);
    assert_eq!(
        table(&near, Some(&gold), &r).unwrap().score,
        1.0,
        "rounded to 4 decimals"
    );
    let s = table(&off, Some(&gold), &r).unwrap();
    assert_eq!(s.score, 0.0);
    assert!(s.detail.contains("cell B2: 1.26 != 1.25"), "{}", s.detail);
    // precision 6 sees the difference that 4 hides.
    let r6 = rules(
        json!([{"type": "sheet_data", "sheet_idx0": "RI0", "sheet_idx1": "EI0", "precision": 6}]),
    );
    assert_eq!(table(&near, Some(&gold), &r6).unwrap().score, 0.0);
}

#[test]
fn sheet_data_by_name_and_missing_sheet() {
    let f = fx();
    let gold = f.dir.join("gold.xlsx");
    let got = f.dir.join("got.xlsx");
    xlsx(
        &gold,
        &[("Sheet1", sales(1.0)), ("Sheet2", sales(3.0))],
        &[],
    );
    xlsx(&got, &[("Sheet1", sales(9.0)), ("Sheet2", sales(3.0))], &[]);
    let r =
        rules(json!([{"type": "sheet_data", "sheet_idx0": "RNSheet2", "sheet_idx1": "ENSheet2"}]));
    assert_eq!(table(&got, Some(&gold), &r).unwrap().score, 1.0);
    let r =
        rules(json!([{"type": "sheet_data", "sheet_idx0": "RNSheet1", "sheet_idx1": "ENSheet1"}]));
    assert_eq!(table(&got, Some(&gold), &r).unwrap().score, 0.0);
    let r =
        rules(json!([{"type": "sheet_data", "sheet_idx0": "RNSheet3", "sheet_idx1": "ENSheet2"}]));
    let s = table(&got, Some(&gold), &r).unwrap();
    assert_eq!(s.score, 0.0);
    assert!(s.detail.contains("\"Sheet3\" not found"), "{}", s.detail);
    let r = rules(json!([{"type": "sheet_data", "sheet_idx0": "RI5", "sheet_idx1": "EI0"}]));
    assert_eq!(table(&got, Some(&gold), &r).unwrap().score, 0.0);
}

#[test]
fn sheet_data_dtype_matters_like_pandas() {
    // An integral column against a float column that rounds to the same
    // values: pandas' `equals` still fails on int64 vs float64.
    let f = fx();
    let ints = f.dir.join("ints.xlsx");
    let floats = f.dir.join("floats.xlsx");
    xlsx(
        &ints,
        &[("S", vec![vec![C::S("v")], vec![C::N(1.0)], vec![C::N(2.0)]])],
        &[],
    );
    xlsx(
        &floats,
        &[(
            "S",
            vec![vec![C::S("v")], vec![C::N(1.0)], vec![C::N(2.000_01)]],
        )],
        &[],
    );
    let r = rules(json!([{"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0"}]));
    let s = table(&ints, Some(&floats), &r).unwrap();
    assert_eq!(s.score, 0.0);
    assert!(s.detail.contains("dtype int64 != float64"), "{}", s.detail);
}

#[test]
fn sheet_data_on_csv_books() {
    let f = fx();
    let got = f.dir.join("got.csv");
    let gold = f.dir.join("gold.csv");
    let bad = f.dir.join("bad.csv");
    std::fs::write(&got, "Item,Price\napple,1.50\npear,2\n").unwrap();
    std::fs::write(&gold, "Item,Price\napple,1.5\npear,2.0\n").unwrap();
    std::fs::write(&bad, "Item,Price\napple,1.5\npear,3\n").unwrap();
    let r = rules(json!([{"type": "sheet_data", "sheet_idx0": "RI0", "sheet_idx1": "EI0"}]));
    assert_eq!(table(&got, Some(&gold), &r).unwrap().score, 1.0);
    assert_eq!(table(&bad, Some(&gold), &r).unwrap().score, 0.0);
    // A CSV book's only sheet is named after the file stem.
    let r = rules(json!([{"type": "sheet_data", "sheet_idx0": "RNgot", "sheet_idx1": "ENgold"}]));
    assert_eq!(table(&got, Some(&gold), &r).unwrap().score, 1.0);
    // xlsx result against csv gold.
    let x = f.dir.join("x.xlsx");
    xlsx(
        &x,
        &[(
            "Sheet1",
            vec![
                vec![C::S("Item"), C::S("Price")],
                vec![C::S("apple"), C::N(1.5)],
                vec![C::S("pear"), C::N(2.0)],
            ],
        )],
        &[],
    );
    let r = rules(json!([{"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0"}]));
    assert_eq!(table(&x, Some(&gold), &r).unwrap().score, 1.0);
}

#[test]
fn sheet_name_rule() {
    let f = fx();
    let a = f.dir.join("a.xlsx");
    let b = f.dir.join("b.xlsx");
    let c = f.dir.join("c.xlsx");
    xlsx(&a, &[("One", vec![]), ("Two", vec![])], &[]);
    xlsx(&b, &[("One", vec![]), ("Two", vec![])], &[]);
    xlsx(&c, &[("Two", vec![]), ("One", vec![])], &[]);
    let r = rules(json!([{"type": "sheet_name"}]));
    assert_eq!(table(&a, Some(&b), &r).unwrap().score, 1.0);
    assert_eq!(table(&c, Some(&b), &r).unwrap().score, 0.0);
}

#[test]
fn sheet_print_compares_sibling_csv_exports() {
    let f = fx();
    let got = f.dir.join("Customers.xlsx");
    let gold = f.dir.join("Customers_gold.xlsx");
    xlsx(&got, &[("Sheet1", sales(1.0))], &[]);
    xlsx(&gold, &[("Sheet1", sales(1.0))], &[]);
    std::fs::write(f.dir.join("Customers-Sheet1.csv"), "Id\n0000001 \n\n\n").unwrap();
    std::fs::write(f.dir.join("Customers_gold-Sheet1.csv"), "Id\n0000001\n").unwrap();
    let r = rules(json!([{"type": "sheet_print", "sheet_idx0": 0, "sheet_idx1": "EI0"}]));
    assert_eq!(table(&got, Some(&gold), &r).unwrap().score, 1.0);
    std::fs::write(f.dir.join("Customers-Sheet1.csv"), "Id\n1\n").unwrap();
    let s = table(&got, Some(&gold), &r).unwrap();
    assert_eq!(s.score, 0.0);
    assert!(s.detail.contains("printed line 2"), "{}", s.detail);
    std::fs::write(f.dir.join("Customers-Sheet1.csv"), "ID\n0000001\n").unwrap();
    let ci = rules(
        json!([{"type": "sheet_print", "sheet_idx0": 0, "sheet_idx1": "EI0", "ignore_case": true}]),
    );
    assert_eq!(table(&got, Some(&gold), &ci).unwrap().score, 1.0);
    // No export of the result sheet: 0. No export of the gold sheet: error.
    std::fs::remove_file(f.dir.join("Customers-Sheet1.csv")).unwrap();
    assert_eq!(table(&got, Some(&gold), &r).unwrap().score, 0.0);
    std::fs::write(f.dir.join("Customers-Sheet1.csv"), "Id\n").unwrap();
    std::fs::remove_file(f.dir.join("Customers_gold-Sheet1.csv")).unwrap();
    assert!(matches!(
        table(&got, Some(&gold), &r),
        Err(EvalError::UnreadableFile { .. })
    ));
}

/// The rules of OSWorld task 1d17d234 (FutureValue.xlsx), verbatim.
fn future_value_rules() -> Options {
    rules(json!([
        {"type": "check_cell", "sheet_idx": "RNSheet2", "coordinate": "A1", "props": {"value": {"method": "eq", "ref": "Investment Summary"}}},
        {"type": "check_cell", "sheet_idx": "RNSheet2", "coordinate": "B1", "props": {"merge": {"method": "eq", "ref": true}}},
        {"type": "check_cell", "sheet_idx": "RNSheet2", "coordinate": "C1", "props": {"merge": {"method": "eq", "ref": true}}},
        {"type": "check_cell", "sheet_idx": "RNSheet2", "coordinate": "D1", "props": {"merge": {"method": "eq", "ref": false}}},
        {"type": "check_cell", "sheet_idx": "RNSheet2", "coordinate": "A2", "props": {"value": {"method": "eq", "ref": "High Interest Rate"}}},
        {"type": "check_cell", "sheet_idx": "RNSheet2", "coordinate": "B2", "props": {"merge": {"method": "eq", "ref": true}}},
        {"type": "check_cell", "sheet_idx": "RNSheet2", "coordinate": "C2", "props": {"value": {"method": "eq", "ref": "Low Interest Rate"}}},
        {"type": "check_cell", "sheet_idx": "RNSheet2", "coordinate": "D2", "props": {"merge": {"method": "eq", "ref": true}}},
        {"type": "check_cell", "sheet_idx": "RNSheet2", "coordinate": "E2", "props": {"merge": {"method": "eq", "ref": false}}}
    ]))
}

#[test]
fn check_cell_value_and_merge() {
    let f = fx();
    let good = f.dir.join("good.xlsx");
    let bad = f.dir.join("bad.xlsx");
    let sheet1 = ("Sheet1", vec![vec![C::N(1.0)]]);
    let sheet2 = ("Sheet2", vec![]);
    let merges = [
        ("Sheet2", (0, 0, 0, 2), "Investment Summary"),
        ("Sheet2", (1, 0, 1, 1), "High Interest Rate"),
        ("Sheet2", (1, 2, 1, 3), "Low Interest Rate"),
    ];
    xlsx(&good, &[sheet1, sheet2], &merges);
    assert_eq!(
        table(&good, None, &future_value_rules()).unwrap().score,
        1.0
    );
    // Same texts, not merged.
    let unmerged = vec![
        vec![C::S("Investment Summary")],
        vec![
            C::S("High Interest Rate"),
            C::S(""),
            C::S("Low Interest Rate"),
        ],
    ];
    xlsx(&bad, &[("Sheet1", vec![]), ("Sheet2", unmerged)], &[]);
    let s = table(&bad, None, &future_value_rules()).unwrap();
    assert_eq!(s.score, 0.0);
    assert!(
        s.detail.contains("rules[1]") && s.detail.contains("B1 merge"),
        "{}",
        s.detail
    );
}

#[test]
fn check_cell_numbers_are_floats() {
    let f = fx();
    let p = f.dir.join("n.xlsx");
    xlsx(
        &p,
        &[("Sheet1", vec![vec![C::N(42.0), C::S("x"), C::B(true)]])],
        &[],
    );
    let ok = rules(json!([
        {"type": "check_cell", "sheet_idx": 0, "coordinate": "A1", "props": {"value": {"method": "approx:0.1", "ref": 42}}},
        {"type": "check_cell", "sheet_idx": 0, "coordinate": "B1", "props": {"value": {"method": "re", "ref": "^x$"}}},
        {"type": "check_cell", "sheet_idx": 0, "coordinate": "C1", "props": {"value": {"method": "eq", "ref": null}}}
    ]));
    assert_eq!(
        table(&p, None, &ok).unwrap().score,
        1.0,
        "booleans read as None upstream"
    );
    let bad = rules(json!([
        {"type": "check_cell", "sheet_idx": 0, "coordinate": "A1", "props": {"value": {"method": "eq", "ref": "42"}}}
    ]));
    let s = table(&p, None, &bad).unwrap();
    assert_eq!(s.score, 0.0);
    assert!(s.detail.contains("42.0 fails eq '42'"), "{}", s.detail);
}

#[test]
fn unsupported_rule_types_and_bad_rules_are_errors() {
    let f = fx();
    let p = f.dir.join("p.xlsx");
    xlsx(&p, &[("Sheet1", sales(1.0))], &[]);
    // Checked up front, even after a rule that would fail.
    let r = rules(
        json!([{"type": "sheet_name"}, {"type": "chart", "sheet_idx0": 0, "sheet_idx1": "EI0"}]),
    );
    match table(&p, Some(&p), &r).unwrap_err() {
        EvalError::Unsupported { metric, feature } => {
            assert_eq!(metric, "compare_table");
            assert!(feature.contains("chart"), "{feature}");
        }
        other => panic!("unexpected {other:?}"),
    }
    let r = rules(
        json!([{"type": "check_cell", "sheet_idx": 0, "coordinate": "A1", "props": {"font_bold": {"method": "eq", "ref": true}}}]),
    );
    assert!(
        matches!(table(&p, None, &r), Err(EvalError::Unsupported { ref feature, .. }) if feature.contains("font_bold"))
    );
    let r = rules(json!([{"type": "sheet_data", "sheet_idx0": "XX0", "sheet_idx1": "EI0"}]));
    assert!(
        matches!(table(&p, Some(&p), &r), Err(EvalError::BadOption { ref option, .. }) if option == "rules[0].sheet_idx0")
    );
    let r = rules(json!([{"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0"}]));
    assert!(
        matches!(table(&p, None, &r), Err(EvalError::BadOption { ref option, .. }) if option == "rules[0].sheet_idx1")
    );
    let none = Options::new();
    assert!(
        matches!(table(&p, Some(&p), &none), Err(EvalError::BadOption { ref option, .. }) if option == "rules")
    );
}

#[test]
fn missing_or_broken_files() {
    let f = fx();
    let p = f.dir.join("p.xlsx");
    xlsx(&p, &[("Sheet1", sales(1.0))], &[]);
    let r = rules(json!([{"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0"}]));
    let s = table(&f.dir.join("absent.xlsx"), Some(&p), &r).unwrap();
    assert_eq!(s.score, 0.0);
    assert!(s.detail.contains("not found"), "{}", s.detail);
    let junk = f.dir.join("junk.xlsx");
    std::fs::write(&junk, "not a zip").unwrap();
    assert_eq!(table(&junk, Some(&p), &r).unwrap().score, 0.0);
    assert!(matches!(
        table(&p, Some(&junk), &r),
        Err(EvalError::UnreadableFile { .. })
    ));
    let missing = Artifact::Missing("cloud_file: 404".into());
    let s = evaluate(
        "compare_table",
        &Artifact::File(p.clone()),
        Some(&missing),
        &r,
    )
    .unwrap();
    assert_eq!(s.score, 0.0);
    assert!(s.detail.contains("404"));
}
