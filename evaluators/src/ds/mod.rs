//! deskenv's data-science metrics (`ds_*`), the contract of `tasks/ds/README.md`.
//!
//! - [`ds_number`]: one number in a text or file, with tolerances.
//! - [`ds_table`]: a CSV/TSV/xlsx/ods table against an expected table, rows
//!   matched by key or position.
//! - [`ds_predictions`]: a predictions CSV scored against held-out labels
//!   (accuracy, f1, f1_macro, auc, rmse, mae, r2) with a threshold.
//! - [`ds_chart_svg`]: what a matplotlib/seaborn SVG shows (kind, title, axis
//!   labels, bar heights or line values up to scale, tick labels, series).
//! - [`ds_image`]: a PNG that is big enough and not blank.
//! - [`ds_image_text`]: the text a PNG shows (OCR) holds the expected strings.
//! - [`ds_notebook`]: an `.ipynb` that ran top to bottom without errors.
//! - [`execution_accuracy`], [`discovery_accuracy`]: CoDA-Bench's answer
//!   and discovery accuracies (module `coda`).
//! - [`pipeline_checks`]: the silent failures decidable from the agent's
//!   code (leakage before the split, the test set in a fit, no held-out
//!   data), parsed as Python.
//!
//! All are pure functions of the artifacts; they follow the crate's failure
//! policy (an unusable result scores 0 with the reason, a broken task is an
//! [`EvalError`]). Options the controller reads (`check`, `weight`,
//! `critical`) and unknown option names are ignored; a known option with a
//! malformed value is an [`EvalError::BadOption`]. Problems in an expected
//! JSON object are reported as a `BadOption` named `expected.<key>`.

mod chart;
mod coda;
mod image;
mod notebook;
mod number;
mod ocr;
mod pipeline;
mod predictions;
mod table;

use std::path::Path;

use serde_json::Value;

use crate::{EvalError, Options, Scored};

pub(crate) use chart::ds_chart_svg;
pub(crate) use coda::{discovery_accuracy, execution_accuracy};
pub(crate) use image::ds_image;
pub(crate) use notebook::ds_notebook;
pub(crate) use number::ds_number;
pub(crate) use ocr::ds_image_text;
pub(crate) use pipeline::pipeline_checks;
pub(crate) use predictions::ds_predictions;
pub(crate) use table::ds_table;

/// A non-negative finite number option, `default` when absent.
fn opt_num(metric: &str, options: &Options, name: &str, default: f64) -> Result<f64, EvalError> {
    match options.get(name) {
        None | Some(Value::Null) => Ok(default),
        Some(v) => match v.as_f64() {
            Some(x) if x.is_finite() && x >= 0.0 => Ok(x),
            _ => Err(EvalError::bad_option(metric, name, "a non-negative number")),
        },
    }
}

/// A non-negative integer option, `default` when absent.
fn opt_count(metric: &str, options: &Options, name: &str, default: u64) -> Result<u64, EvalError> {
    match options.get(name) {
        None | Some(Value::Null) => Ok(default),
        Some(v) => match v.as_u64() {
            Some(n) => Ok(n),
            None => match v.as_f64() {
                Some(x) if x >= 0.0 && x.fract() == 0.0 && x < 1e15 => Ok(x as u64),
                _ => Err(EvalError::bad_option(
                    metric,
                    name,
                    "a non-negative integer",
                )),
            },
        },
    }
}

/// A string option, `None` when absent.
fn opt_string(metric: &str, options: &Options, name: &str) -> Result<Option<String>, EvalError> {
    match options.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(EvalError::bad_option(metric, name, "a string")),
    }
}

/// A list of column names (a single string is a list of one), `None` when
/// absent.
fn opt_names(
    metric: &str,
    options: &Options,
    name: &str,
) -> Result<Option<Vec<String>>, EvalError> {
    match options.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => names_of(v)
            .map(Some)
            .ok_or_else(|| EvalError::bad_option(metric, name, "a list of column names")),
    }
}

/// A JSON string or non-empty list of strings as names.
fn names_of(v: &Value) -> Option<Vec<String>> {
    match v {
        Value::String(s) => Some(vec![s.clone()]),
        Value::Array(items) if !items.is_empty() => items
            .iter()
            .map(|i| i.as_str().map(str::to_string))
            .collect(),
        _ => None,
    }
}

/// A number written plainly: optional sign, digits, optional fraction and
/// exponent; no `inf`/`nan`, no separators. Surrounding whitespace is
/// ignored.
fn parse_plain_number(s: &str) -> Option<f64> {
    let t = s.trim();
    if t.is_empty()
        || !t.bytes().any(|b| b.is_ascii_digit())
        || !t
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'e' | b'E'))
    {
        return None;
    }
    t.parse::<f64>().ok().filter(|x| x.is_finite())
}

/// A cell that stands for a missing value (`""`, `NaN`, `NA`, `null`, `None`,
/// case-insensitively).
fn is_missing(s: &str) -> bool {
    let t = s.trim();
    t.is_empty()
        || ["nan", "na", "null", "none"]
            .iter()
            .any(|m| t.eq_ignore_ascii_case(m))
}

/// A number in its shortest round-trip form (`3`, `0.1`, `1e-7`).
fn fmt_num(x: f64) -> String {
    let a = x.abs();
    if a == 0.0 || (1e-4..1e15).contains(&a) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// An id or label as a comparable string: trimmed, and a number written
/// canonically (`"3"`, `"3.0"` and `3` are all `"3"`).
fn canonical(s: &str) -> String {
    let t = s.trim();
    match parse_plain_number(t) {
        Some(x) => fmt_num(if x == 0.0 { 0.0 } else { x }),
        None => t.to_string(),
    }
}

/// A JSON scalar as the text a CSV cell would hold.
fn json_cell(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Whitespace runs collapsed to one space, trimmed.
fn collapse_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A string shortened for a detail message.
fn short(s: &str) -> String {
    const MAX: usize = 60;
    if s.chars().count() <= MAX {
        s.to_string()
    } else {
        let head: String = s.chars().take(MAX).collect();
        format!("{head}…")
    }
}

/// A column name for matching: trimmed; with `normalize`, lower-cased and
/// with runs of spaces, `-` and `_` made one `_`.
fn norm_name(name: &str, normalize: bool) -> String {
    let t = name.trim().trim_start_matches('\u{feff}').trim();
    if !normalize {
        return t.to_string();
    }
    let mut out = String::new();
    for c in t.chars().flat_map(char::to_lowercase) {
        if matches!(c, ' ' | '-' | '_') || c.is_whitespace() {
            if !out.ends_with('_') {
                out.push('_');
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A table: header names and data rows (each as long as the header).
#[derive(Debug, Clone, PartialEq)]
struct Table {
    columns: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// From raw rows: the header is the first non-blank row; blank rows are
    /// dropped; rows are padded or cut to the header's width.
    fn from_grid(grid: Vec<Vec<String>>) -> Table {
        let blank = |r: &Vec<String>| r.iter().all(|c| c.trim().is_empty());
        let mut it = grid.into_iter().skip_while(blank);
        let columns: Vec<String> = match it.next() {
            Some(h) => h.iter().map(|c| c.trim().to_string()).collect(),
            None => Vec::new(),
        };
        let width = columns.len();
        let rows = it
            .filter(|r| !blank(r))
            .map(|mut r| {
                r.resize(width, String::new());
                r
            })
            .collect();
        Table { columns, rows }
    }

    /// The index of column `name`: an exact (trimmed) match first, then a
    /// normalised one when `normalize`.
    fn find(&self, name: &str, normalize: bool) -> Option<usize> {
        let exact = norm_name(name, false);
        if let Some(i) = self
            .columns
            .iter()
            .position(|c| norm_name(c, false) == exact)
        {
            return Some(i);
        }
        if !normalize {
            return None;
        }
        let want = norm_name(name, true);
        self.columns.iter().position(|c| norm_name(c, true) == want)
    }
}

/// Which sheet of a workbook to read.
#[derive(Debug, Clone, PartialEq)]
enum SheetSel {
    First,
    Name(String),
    Index(usize),
}

fn opt_sheet(metric: &str, options: &Options) -> Result<SheetSel, EvalError> {
    match options.get("sheet") {
        None | Some(Value::Null) => Ok(SheetSel::First),
        Some(Value::String(s)) => Ok(SheetSel::Name(s.clone())),
        Some(v) => match v.as_u64() {
            Some(n) => Ok(SheetSel::Index(n as usize)),
            None => Err(EvalError::bad_option(
                metric,
                "sheet",
                "a sheet name or a 0-based sheet index",
            )),
        },
    }
}

const WORKBOOK_EXTS: &[&str] = &["xlsx", "xlsm", "xlsb", "xls", "ods"];

/// Read a table file: a workbook by extension (`.xlsx`, `.xlsm`, `.xlsb`,
/// `.xls`, `.ods`), anything else as delimited text. The error is a short
/// reason.
fn read_table(path: &Path, sheet: &SheetSel) -> Result<Table, String> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    if WORKBOOK_EXTS.contains(&ext.as_str()) {
        return read_workbook(path, sheet);
    }
    let bytes = std::fs::read(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            format!("{} not found", path.display())
        } else {
            format!("{} unreadable: {e}", path.display())
        }
    })?;
    let text = String::from_utf8_lossy(&bytes);
    let text = text.trim_start_matches('\u{feff}');
    let delim = sniff_delimiter(text, ext == "tsv");
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(delim)
        .from_reader(text.as_bytes());
    let mut grid = Vec::new();
    for rec in reader.records() {
        let rec = rec.map_err(|e| format!("{} is not valid CSV: {e}", path.display()))?;
        grid.push(rec.iter().map(str::to_string).collect());
    }
    Ok(Table::from_grid(grid))
}

/// The delimiter of the first non-blank line: the most frequent of `,`,
/// tab and `;` outside quotes (`,` when none).
fn sniff_delimiter(text: &str, prefer_tab: bool) -> u8 {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let mut counts = [0usize; 3];
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => counts[0] += 1,
            '\t' if !quoted => counts[1] += 1,
            ';' if !quoted => counts[2] += 1,
            _ => {}
        }
    }
    if prefer_tab && counts[1] > 0 {
        return b'\t';
    }
    let delims = [b',', b'\t', b';'];
    let mut best = 0;
    for i in 1..3 {
        if counts[i] > counts[best] {
            best = i;
        }
    }
    delims[best]
}

fn read_workbook(path: &Path, sheet: &SheetSel) -> Result<Table, String> {
    use calamine::Reader;
    let mut book = calamine::open_workbook_auto(path)
        .map_err(|e| format!("{} is not a readable workbook: {e}", path.display()))?;
    let names = book.sheet_names();
    let name = match sheet {
        SheetSel::First => names.first().cloned(),
        SheetSel::Name(n) => names.iter().find(|s| *s == n).cloned(),
        SheetSel::Index(i) => names.get(*i).cloned(),
    };
    let Some(name) = name else {
        let which = match sheet {
            SheetSel::First => "any sheet".to_string(),
            SheetSel::Name(n) => format!("sheet {n:?}"),
            SheetSel::Index(i) => format!("sheet index {i}"),
        };
        return Err(format!(
            "{} has no {which} (sheets: {})",
            path.display(),
            names.join(", ")
        ));
    };
    let range = book
        .worksheet_range(&name)
        .map_err(|e| format!("{} sheet {name:?} unreadable: {e}", path.display()))?;
    let grid = range
        .rows()
        .map(|r| r.iter().map(|c| c.to_string()).collect())
        .collect();
    Ok(Table::from_grid(grid))
}

/// A result file's table, or the 0 score saying why there is none.
fn result_table(path: &Path, sheet: &SheetSel) -> Result<Table, Scored> {
    read_table(path, sheet).map_err(|e| Scored::fail(format!("result: {e}")))
}

/// The `BadOption` for a malformed key of an expected JSON object.
fn bad_expected(metric: &str, key: &str, expected: impl Into<String>) -> EvalError {
    EvalError::bad_option(metric, &format!("expected.{key}"), expected)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_numbers_are_strict() {
        assert_eq!(parse_plain_number(" 42 "), Some(42.0));
        assert_eq!(parse_plain_number("-1.5e3"), Some(-1500.0));
        assert_eq!(parse_plain_number(".5"), Some(0.5));
        assert_eq!(parse_plain_number("nan"), None);
        assert_eq!(parse_plain_number("inf"), None);
        assert_eq!(parse_plain_number("1,234"), None);
        assert_eq!(parse_plain_number("12%"), None);
        assert_eq!(parse_plain_number("e"), None);
    }

    #[test]
    fn ids_are_canonical_numbers_or_trimmed_strings() {
        assert_eq!(canonical("3.0"), "3");
        assert_eq!(canonical(" 3 "), "3");
        assert_eq!(canonical("-0"), "0");
        assert_eq!(canonical("A7"), "A7");
    }

    #[test]
    fn names_normalise_case_spaces_dashes_and_underscores() {
        assert_eq!(norm_name(" Total  Sales ", true), "total_sales");
        assert_eq!(norm_name("total-sales", true), "total_sales");
        assert_eq!(norm_name("Total_Sales", false), "Total_Sales");
    }

    #[test]
    fn the_delimiter_is_sniffed_from_the_header() {
        assert_eq!(sniff_delimiter("a;b;c\n1;2;3", false), b';');
        assert_eq!(sniff_delimiter("a\tb\n", false), b'\t');
        assert_eq!(sniff_delimiter("\"a,b\";c\n", false), b';');
        assert_eq!(sniff_delimiter("a\n", false), b',');
    }

    #[test]
    fn a_grid_becomes_a_table_below_its_first_non_blank_row() {
        let g = |rows: &[&[&str]]| -> Vec<Vec<String>> {
            rows.iter()
                .map(|r| r.iter().map(|c| c.to_string()).collect())
                .collect()
        };
        let t = Table::from_grid(g(&[
            &["", ""],
            &[" a ", "b"],
            &["1"],
            &["", ""],
            &["2", "3", "4"],
        ]));
        assert_eq!(t.columns, vec!["a", "b"]);
        assert_eq!(t.rows, g(&[&["1", ""], &["2", "3"]]));
    }
}
