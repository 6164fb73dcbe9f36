//! OSWorld `metrics/table.py::compare_table`: spreadsheet comparison driven by
//! a list of `rules`.
//!
//! Supported rule types: `sheet_name`, `sheet_data`, `sheet_print` and
//! `check_cell` (props `value` and `merge`). Every other OSWorld rule type
//! (`sheet_fuzzy`, `sparkline`, `chart`, `style`, `freeze`, `zoom`,
//! `data_validation`, `row_props`, `col_props`, `filter`, `pivot_table`) is an
//! [`EvalError::Unsupported`], checked before anything is scored.
//!
//! Sheet ids (`sheet_idx0`, `sheet_idx1`, `sheet_idx`): an integer `n` or
//! `"RI<n>"` is the result's n-th sheet, `"RN<name>"` the result's sheet
//! `<name>`, `"EI<n>"`/`"EN<name>"` the same in the expected book. A sheet that
//! does not exist scores 0 (as upstream).
//!
//! Workbooks are read with `calamine` (xlsx, xlsm, xls, xlsb, ods; cached
//! formula values, like openpyxl's `data_only=True`). deskenv also accepts a
//! `.csv` file as a one-sheet book named after the file stem; upstream opens
//! every book with openpyxl and so scores 0 on a CSV.

use std::cmp::Ordering;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use calamine::{Data, Reader, Sheets};
use serde_json::Value;

use crate::pyval::{float_repr, match_value_to_rule, py_repr};
use crate::text::safe_read_lines;
use crate::{Artifact, EvalError, Options, Scored};

const M: &str = "compare_table";

const SUPPORTED_RULES: &[&str] = &["sheet_name", "sheet_data", "sheet_print", "check_cell"];
const UPSTREAM_RULES: &[&str] = &[
    "sheet_fuzzy",
    "sparkline",
    "chart",
    "style",
    "freeze",
    "zoom",
    "data_validation",
    "row_props",
    "col_props",
    "filter",
    "pivot_table",
];

/// A cell as read from a book.
#[derive(Debug, Clone, PartialEq)]
enum Cell {
    Empty,
    Str(String),
    Num(f64),
    Bool(bool),
    /// Excel serial date/time.
    Date(f64),
    /// `#DIV/0!` etc.
    Error(String),
}

enum BookData {
    Sheets(Box<Sheets<BufReader<File>>>),
    /// A CSV file: one sheet of strings.
    Csv(Vec<Vec<String>>),
}

struct Book {
    path: PathBuf,
    names: Vec<String>,
    data: BookData,
}

impl Book {
    fn open(path: &Path) -> Result<Book, String> {
        let is_csv = path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
        if is_csv {
            let lines = safe_read_lines(path).map_err(|e| e.to_string())?;
            let text = lines.join("\n");
            let mut reader = csv::ReaderBuilder::new()
                .has_headers(false)
                .flexible(true)
                .from_reader(text.as_bytes());
            let mut rows = Vec::new();
            for rec in reader.records() {
                let rec = rec.map_err(|e| e.to_string())?;
                rows.push(rec.iter().map(str::to_string).collect());
            }
            let stem = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            return Ok(Book {
                path: path.to_path_buf(),
                names: vec![stem],
                data: BookData::Csv(rows),
            });
        }
        let sheets = calamine::open_workbook_auto(path).map_err(|e| e.to_string())?;
        Ok(Book {
            path: path.to_path_buf(),
            names: sheets.sheet_names(),
            data: BookData::Sheets(Box::new(sheets)),
        })
    }

    /// The sheet's cells from A1 to its last used cell; `None` if no such sheet.
    fn grid(&mut self, name: &str) -> Option<Vec<Vec<Cell>>> {
        if !self.names.iter().any(|n| n == name) {
            return None;
        }
        match &mut self.data {
            BookData::Csv(rows) => Some(
                rows.iter()
                    .map(|r| {
                        r.iter()
                            .map(|s| {
                                if s.is_empty() {
                                    Cell::Empty
                                } else {
                                    Cell::Str(s.clone())
                                }
                            })
                            .collect()
                    })
                    .collect(),
            ),
            BookData::Sheets(sheets) => {
                let range = sheets.worksheet_range(name).ok()?;
                let Some((end_r, end_c)) = range.end() else {
                    return Some(Vec::new());
                };
                let grid = (0..=end_r)
                    .map(|r| {
                        (0..=end_c)
                            .map(|c| range.get_value((r, c)).map_or(Cell::Empty, cell_of))
                            .collect()
                    })
                    .collect();
                Some(grid)
            }
        }
    }

    /// Whether the cell is covered by a merged range without being its
    /// top-left cell (openpyxl's `MergedCell`).
    fn is_merged_cell(&mut self, name: &str, row: u32, col: u32) -> Result<bool, EvalError> {
        match &mut self.data {
            BookData::Csv(_) => Ok(false),
            BookData::Sheets(sheets) => match sheets.as_mut() {
                Sheets::Xlsx(x) => {
                    let dims = match x.worksheet_merge_cells(name) {
                        Some(Ok(d)) => d,
                        Some(Err(e)) => {
                            return Err(EvalError::unreadable(&self.path, e));
                        }
                        None => Vec::new(),
                    };
                    Ok(dims.iter().any(|d| {
                        d.start.0 <= row
                            && row <= d.end.0
                            && d.start.1 <= col
                            && col <= d.end.1
                            && (row, col) != d.start
                    }))
                }
                _ => Err(EvalError::unsupported(
                    M,
                    "check_cell prop `merge` on a non-xlsx workbook",
                )),
            },
        }
    }
}

fn cell_of(d: &Data) -> Cell {
    match d {
        Data::Int(i) => Cell::Num(*i as f64),
        Data::Float(f) => Cell::Num(*f),
        Data::String(s) => Cell::Str(s.clone()),
        Data::Bool(b) => Cell::Bool(*b),
        Data::DateTime(dt) => Cell::Date(dt.as_f64()),
        Data::DateTimeIso(s) | Data::DurationIso(s) => Cell::Str(s.clone()),
        Data::Error(e) => Cell::Error(e.to_string()),
        Data::Empty => Cell::Empty,
    }
}

/// Which book a sheet id points at, and the sheet's name ("" if unresolvable).
#[derive(Clone, Copy, PartialEq)]
enum Side {
    Result,
    Expected,
}

struct Books {
    result: Book,
    expected: Option<Book>,
}

impl Books {
    fn book(&mut self, side: Side) -> Option<&mut Book> {
        match side {
            Side::Result => Some(&mut self.result),
            Side::Expected => self.expected.as_mut(),
        }
    }

    /// OSWorld's `_parse_sheet_idx`.
    fn parse_idx(
        &self,
        rule_no: usize,
        key: &str,
        v: Option<&Value>,
    ) -> Result<(Side, String), EvalError> {
        let option = format!("rules[{rule_no}].{key}");
        let bad = || {
            EvalError::bad_option(
                M,
                &option,
                "an integer or \"RI<n>\", \"RN<name>\", \"EI<n>\", \"EN<name>\"",
            )
        };
        let nth = |names: &[String], n: &str| -> Result<String, EvalError> {
            let n: usize = n.parse().map_err(|_| bad())?;
            Ok(names.get(n).cloned().unwrap_or_default())
        };
        let (side, name) = match v {
            Some(Value::Number(n)) => {
                let n = n.as_u64().ok_or_else(bad)? as usize;
                (
                    Side::Result,
                    self.result.names.get(n).cloned().unwrap_or_default(),
                )
            }
            Some(Value::String(s)) => {
                if let Some(n) = s.strip_prefix("RI") {
                    (Side::Result, nth(&self.result.names, n)?)
                } else if let Some(n) = s.strip_prefix("RN") {
                    (Side::Result, n.to_string())
                } else if let Some(n) = s.strip_prefix("EI") {
                    let names = self
                        .expected
                        .as_ref()
                        .map(|b| b.names.as_slice())
                        .unwrap_or(&[]);
                    (Side::Expected, nth(names, n)?)
                } else if let Some(n) = s.strip_prefix("EN") {
                    (Side::Expected, n.to_string())
                } else {
                    return Err(bad());
                }
            }
            _ => return Err(bad()),
        };
        if side == Side::Expected && self.expected.is_none() {
            return Err(EvalError::bad_option(
                M,
                &option,
                "a result sheet (R…): the task has no expected file",
            ));
        }
        Ok((side, name))
    }
}

/// `compare_table(result_file, expected_file?, rules=[...])`; rules are
/// checked in order and the first failing one decides (score 0).
pub(crate) fn compare_table(
    result: &Artifact,
    expected: Option<&Artifact>,
    options: &Options,
) -> Result<Scored, EvalError> {
    let rules = match options.get("rules") {
        Some(Value::Array(r)) => r,
        _ => return Err(EvalError::bad_option(M, "rules", "a list of rule objects")),
    };
    let mut types = Vec::with_capacity(rules.len());
    for (i, r) in rules.iter().enumerate() {
        let t = r
            .get("type")
            .and_then(Value::as_str)
            .ok_or_else(|| EvalError::bad_option(M, &format!("rules[{i}].type"), "a string"))?;
        if !SUPPORTED_RULES.contains(&t) {
            return Err(if UPSTREAM_RULES.contains(&t) {
                EvalError::unsupported(M, format!("rule type `{t}` (rules[{i}])"))
            } else {
                EvalError::bad_option(
                    M,
                    &format!("rules[{i}].type"),
                    format!("one of {}, got {t:?}", SUPPORTED_RULES.join(", ")),
                )
            });
        }
        types.push(t);
    }
    let result_path = crate::result_file(M, result)?;
    let expected_book = match expected {
        None => None,
        Some(a) => {
            let p = match a {
                Artifact::File(p) => p,
                Artifact::Files(ps) if ps.len() == 1 => &ps[0],
                other => return Err(EvalError::wrong_artifact(M, "file", other)),
            };
            Some(Book::open(p).map_err(|e| EvalError::unreadable(p, e))?)
        }
    };
    if !result_path.exists() {
        return Ok(Scored::fail(format!(
            "result file {} not found",
            result_path.display()
        )));
    }
    let result_book = match Book::open(result_path) {
        Ok(b) => b,
        Err(e) => {
            return Ok(Scored::fail(format!(
                "result file {} unreadable: {e}",
                result_path.display()
            )))
        }
    };
    let mut books = Books {
        result: result_book,
        expected: expected_book,
    };
    for (i, (rule, t)) in rules.iter().zip(&types).enumerate() {
        let (ok, detail) = match *t {
            "sheet_name" => sheet_name(&books),
            "sheet_data" => sheet_data(&mut books, i, rule)?,
            "sheet_print" => sheet_print(&books, i, rule)?,
            "check_cell" => check_cell(&mut books, i, rule)?,
            _ => unreachable!("rule types are checked above"),
        };
        if !ok {
            return Ok(Scored::fail(format!("rules[{i}] {t}: {detail}")));
        }
    }
    Ok(Scored::pass(format!("all {} rules passed", rules.len())))
}

fn sheet_name(books: &Books) -> (bool, String) {
    match &books.expected {
        None => (false, "no expected book to compare sheet names with".into()),
        Some(e) if e.names == books.result.names => (true, String::new()),
        Some(e) => (
            false,
            format!("sheet names {:?} != {:?}", books.result.names, e.names),
        ),
    }
}

// ---------------------------------------------------------------------------
// sheet_data: pandas `read_excel(...).round(precision).equals(...)`
// ---------------------------------------------------------------------------

/// A value of a pandas frame.
#[derive(Debug, Clone, PartialEq)]
enum Fv {
    Na,
    Int(i64),
    Float(f64),
    Bool(bool),
    Date(f64),
    Str(String),
}

impl Fv {
    fn show(&self) -> String {
        match self {
            Fv::Na => "NaN".into(),
            Fv::Int(i) => i.to_string(),
            Fv::Float(f) => float_repr(*f),
            Fv::Bool(b) => if *b { "True" } else { "False" }.into(),
            Fv::Date(d) => format!("date({})", float_repr(*d)),
            Fv::Str(s) => py_repr(&Value::String(s.clone())),
        }
    }

    fn as_f64(&self) -> Option<f64> {
        match self {
            Fv::Int(i) => Some(*i as f64),
            Fv::Float(f) => Some(*f),
            Fv::Bool(b) => Some(f64::from(u8::from(*b))),
            _ => None,
        }
    }
}

/// Python `==` between frame values, with NaN equal to NaN (`equals`).
fn fv_eq(a: &Fv, b: &Fv) -> bool {
    match (a, b) {
        (Fv::Na, Fv::Na) => true,
        (Fv::Str(x), Fv::Str(y)) => x == y,
        (Fv::Date(x), Fv::Date(y)) => x == y,
        (Fv::Float(x), Fv::Float(y)) if x.is_nan() && y.is_nan() => true,
        _ => match (a.as_f64(), b.as_f64()) {
            (Some(x), Some(y)) => x.partial_cmp(&y) == Some(Ordering::Equal),
            _ => false,
        },
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Dtype {
    Int64,
    Float64,
    Bool,
    Datetime,
    Object,
}

impl Dtype {
    fn name(self) -> &'static str {
        match self {
            Dtype::Int64 => "int64",
            Dtype::Float64 => "float64",
            Dtype::Bool => "bool",
            Dtype::Datetime => "datetime64",
            Dtype::Object => "object",
        }
    }
}

struct Frame {
    labels: Vec<Fv>,
    columns: Vec<(Dtype, Vec<Fv>)>,
    nrows: usize,
}

/// pandas' default `na_values`.
const NA_VALUES: &[&str] = &[
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
    "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
];

/// A cell as pandas' openpyxl reader converts it (`_convert_cell`): empty is
/// `""`, errors are NaN, integral numbers are ints.
fn raw_of(c: &Cell) -> Fv {
    match c {
        Cell::Empty => Fv::Str(String::new()),
        Cell::Error(_) => Fv::Na,
        Cell::Str(s) => Fv::Str(s.clone()),
        Cell::Bool(b) => Fv::Bool(*b),
        Cell::Date(d) => Fv::Date(*d),
        Cell::Num(f) => {
            if f.fract() == 0.0 && f.abs() < 9.0e15 {
                Fv::Int(*f as i64)
            } else {
                Fv::Float(*f)
            }
        }
    }
}

fn parse_numeric(s: &str) -> Option<Fv> {
    let t = s.trim();
    if t.is_empty() {
        return None;
    }
    if let Ok(i) = t.parse::<i64>() {
        return Some(Fv::Int(i));
    }
    let lower = t.to_ascii_lowercase();
    if matches!(
        lower.as_str(),
        "inf" | "+inf" | "-inf" | "infinity" | "-infinity" | "+infinity"
    ) {
        return t.parse::<f64>().ok().map(Fv::Float);
    }
    if t.chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'))
    {
        return t.parse::<f64>().ok().map(Fv::Float);
    }
    None
}

fn parse_bool(s: &str) -> Option<bool> {
    match s {
        "True" | "TRUE" | "true" => Some(true),
        "False" | "FALSE" | "false" => Some(false),
        _ => None,
    }
}

/// Type a column as pandas' Python parser does (NA values, numeric and
/// boolean conversion of object columns).
fn infer_column(values: Vec<Fv>) -> (Dtype, Vec<Fv>) {
    let values: Vec<Fv> = values
        .into_iter()
        .map(|v| match v {
            Fv::Str(s) if NA_VALUES.contains(&s.as_str()) => Fv::Na,
            other => other,
        })
        .collect();
    let non_na = || values.iter().filter(|v| **v != Fv::Na);
    let has_na = values.contains(&Fv::Na);
    if non_na().count() == 0 {
        return (Dtype::Float64, values);
    }
    // Numeric: numbers and numeric strings (no bools).
    let numeric: Option<Vec<Fv>> = values
        .iter()
        .map(|v| match v {
            Fv::Na => Some(Fv::Na),
            Fv::Int(_) | Fv::Float(_) => Some(v.clone()),
            Fv::Str(s) => parse_numeric(s),
            _ => None,
        })
        .collect();
    if let Some(nums) = numeric {
        let all_int = nums.iter().all(|v| matches!(v, Fv::Int(_)));
        if all_int && !has_na {
            return (Dtype::Int64, nums);
        }
        let floats = nums
            .into_iter()
            .map(|v| match v {
                Fv::Int(i) => Fv::Float(i as f64),
                other => other,
            })
            .collect();
        return (Dtype::Float64, floats);
    }
    if !has_na {
        let bools: Option<Vec<Fv>> = values
            .iter()
            .map(|v| match v {
                Fv::Bool(b) => Some(Fv::Bool(*b)),
                Fv::Str(s) => parse_bool(s).map(Fv::Bool),
                _ => None,
            })
            .collect();
        if let Some(b) = bools {
            return (Dtype::Bool, b);
        }
    }
    if non_na().all(|v| matches!(v, Fv::Date(_))) {
        return (Dtype::Datetime, values);
    }
    (Dtype::Object, values)
}

/// Build the frame `pd.read_excel(book, sheet)` would (header = first row).
fn frame_of(grid: &[Vec<Cell>]) -> Frame {
    let mut rows: Vec<Vec<Fv>> = grid
        .iter()
        .map(|r| {
            let mut row: Vec<Fv> = r.iter().map(raw_of).collect();
            while row.last() == Some(&Fv::Str(String::new())) {
                row.pop();
            }
            row
        })
        .collect();
    while rows.last().is_some_and(|r| r.is_empty()) {
        rows.pop();
    }
    let width = rows.iter().map(Vec::len).max().unwrap_or(0);
    for r in &mut rows {
        r.resize(width, Fv::Str(String::new()));
    }
    if width == 1 {
        // skip_blank_lines: a one-cell line that is a blank string is dropped.
        rows.retain(|r| !matches!(&r[0], Fv::Str(s) if s.trim().is_empty()));
    }
    if rows.is_empty() {
        return Frame {
            labels: Vec::new(),
            columns: Vec::new(),
            nrows: 0,
        };
    }
    let header = rows.remove(0);
    let mut labels: Vec<Fv> = Vec::with_capacity(width);
    for (i, h) in header.into_iter().enumerate() {
        let label = match h {
            Fv::Str(s) if s.is_empty() => Fv::Str(format!("Unnamed: {i}")),
            other => other,
        };
        // mangle_dupe_cols: "A", "A.1", "A.2", ...
        let base = match &label {
            Fv::Str(s) => s.clone(),
            other => other.show(),
        };
        let mut candidate = label;
        let mut n = 0;
        while labels.iter().any(|l| fv_eq(l, &candidate)) {
            n += 1;
            candidate = Fv::Str(format!("{base}.{n}"));
        }
        labels.push(candidate);
    }
    let nrows = rows.len();
    let columns = (0..width)
        .map(|c| infer_column(rows.iter().map(|r| r[c].clone()).collect()))
        .collect();
    Frame {
        labels,
        columns,
        nrows,
    }
}

/// numpy's `round(x, decimals)`: scale, round half to even, unscale.
fn np_round(x: f64, decimals: i32) -> f64 {
    if !x.is_finite() {
        return x;
    }
    let scale = 10f64.powi(decimals);
    (x * scale).round_ties_even() / scale
}

fn round_frame(f: &mut Frame, decimals: i32) {
    for (dtype, values) in &mut f.columns {
        if *dtype == Dtype::Float64 {
            for v in values.iter_mut() {
                if let Fv::Float(x) = v {
                    *x = np_round(*x, decimals);
                }
            }
        }
    }
}

fn col_letter(mut c: usize) -> String {
    let mut s = Vec::new();
    c += 1;
    while c > 0 {
        let r = (c - 1) % 26;
        s.push(b'A' + r as u8);
        c = (c - 1) / 26;
    }
    s.reverse();
    String::from_utf8(s).unwrap_or_default()
}

/// `DataFrame.equals`, with the first difference described.
fn frames_equal(a: &Frame, b: &Frame) -> Result<(), String> {
    if a.labels.len() != b.labels.len() || a.nrows != b.nrows {
        return Err(format!(
            "shape {}x{} != {}x{} (data rows x columns, header excluded)",
            a.nrows,
            a.labels.len(),
            b.nrows,
            b.labels.len()
        ));
    }
    for (i, (x, y)) in a.labels.iter().zip(&b.labels).enumerate() {
        if !fv_eq(x, y) {
            return Err(format!(
                "header {}1: {} != {}",
                col_letter(i),
                x.show(),
                y.show()
            ));
        }
    }
    for (c, ((ta, va), (tb, vb))) in a.columns.iter().zip(&b.columns).enumerate() {
        for (r, (x, y)) in va.iter().zip(vb).enumerate() {
            if !fv_eq(x, y) {
                return Err(format!(
                    "cell {}{}: {} != {}",
                    col_letter(c),
                    r + 2,
                    x.show(),
                    y.show()
                ));
            }
        }
        if ta != tb {
            return Err(format!(
                "column {}: dtype {} != {} (pandas compares dtypes)",
                col_letter(c),
                ta.name(),
                tb.name()
            ));
        }
    }
    Ok(())
}

fn sheet_data(books: &mut Books, i: usize, rule: &Value) -> Result<(bool, String), EvalError> {
    let precision = match rule.get("precision") {
        None => 4,
        Some(v) => v
            .as_i64()
            .and_then(|p| i32::try_from(p).ok())
            .ok_or_else(|| {
                EvalError::bad_option(M, &format!("rules[{i}].precision"), "an integer")
            })?,
    };
    let (s0, n0) = books.parse_idx(i, "sheet_idx0", rule.get("sheet_idx0"))?;
    let (s1, n1) = books.parse_idx(i, "sheet_idx1", rule.get("sheet_idx1"))?;
    let Some(g0) = books.book(s0).and_then(|b| b.grid(&n0)) else {
        return Ok((false, format!("sheet {n0:?} not found")));
    };
    let Some(g1) = books.book(s1).and_then(|b| b.grid(&n1)) else {
        return Ok((false, format!("sheet {n1:?} not found")));
    };
    let (mut f0, mut f1) = (frame_of(&g0), frame_of(&g1));
    round_frame(&mut f0, precision);
    round_frame(&mut f1, precision);
    Ok(match frames_equal(&f0, &f1) {
        Ok(()) => (true, String::new()),
        Err(why) => (false, format!("{n0:?} vs {n1:?}: {why}")),
    })
}

// ---------------------------------------------------------------------------
// sheet_print: compare the `<book stem>-<sheet>.csv` exports next to the books
// ---------------------------------------------------------------------------

fn print_lines(book: &Book, sheet: &str) -> std::io::Result<Vec<String>> {
    let stem = book.path.with_extension("");
    let csv = PathBuf::from(format!("{}-{sheet}.csv", stem.display()));
    let lines = safe_read_lines(&csv)?;
    // Upstream strips lines, reverses them and drops leading empties (i.e.
    // trailing empty lines of the file); both sides get the same treatment.
    Ok(lines
        .iter()
        .rev()
        .map(|l| l.trim().to_string())
        .skip_while(|l| l.is_empty())
        .collect())
}

fn sheet_print(books: &Books, i: usize, rule: &Value) -> Result<(bool, String), EvalError> {
    let ignore_case = match rule.get("ignore_case") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            return Err(EvalError::bad_option(
                M,
                &format!("rules[{i}].ignore_case"),
                "a boolean",
            ))
        }
    };
    let (s0, n0) = books.parse_idx(i, "sheet_idx0", rule.get("sheet_idx0"))?;
    let (s1, n1) = books.parse_idx(i, "sheet_idx1", rule.get("sheet_idx1"))?;
    let read = |side: Side, name: &str| -> Result<Result<Vec<String>, String>, EvalError> {
        let book = match side {
            Side::Result => &books.result,
            Side::Expected => books.expected.as_ref().expect("checked by parse_idx"),
        };
        match print_lines(book, name) {
            Ok(l) => Ok(Ok(l)),
            Err(e) if side == Side::Result => Ok(Err(format!("export of sheet {name:?}: {e}"))),
            Err(e) => Err(EvalError::unreadable(
                &PathBuf::from(format!(
                    "{}-{name}.csv",
                    book.path.with_extension("").display()
                )),
                e,
            )),
        }
    };
    let mut l0 = match read(s0, &n0)? {
        Ok(l) => l,
        Err(why) => return Ok((false, why)),
    };
    let mut l1 = match read(s1, &n1)? {
        Ok(l) => l,
        Err(why) => return Ok((false, why)),
    };
    if ignore_case {
        l0.iter_mut().for_each(|l| *l = l.to_lowercase());
        l1.iter_mut().for_each(|l| *l = l.to_lowercase());
    }
    if l0 == l1 {
        return Ok((true, String::new()));
    }
    // Lines are reversed: report the difference in file order.
    let (a, b): (Vec<_>, Vec<_>) = (l0.iter().rev().collect(), l1.iter().rev().collect());
    for (k, (x, y)) in a.iter().zip(&b).enumerate() {
        if x != y {
            return Ok((false, format!("printed line {}: {x:?} != {y:?}", k + 1)));
        }
    }
    Ok((false, format!("{} printed lines != {}", a.len(), b.len())))
}

// ---------------------------------------------------------------------------
// check_cell
// ---------------------------------------------------------------------------

/// "B12" → (row 11, col 1), zero-based.
fn parse_coordinate(s: &str) -> Option<(u32, u32)> {
    let split = s.find(|c: char| c.is_ascii_digit())?;
    let (letters, digits) = s.split_at(split);
    if letters.is_empty() || !letters.chars().all(|c| c.is_ascii_alphabetic()) {
        return None;
    }
    let mut col: u32 = 0;
    for c in letters.chars() {
        col = col
            .checked_mul(26)?
            .checked_add(u32::from(c.to_ascii_uppercase() as u8 - b'A' + 1))?;
    }
    let row: u32 = digits.parse().ok()?;
    if row == 0 {
        return None;
    }
    Some((row - 1, col - 1))
}

/// OSWorld's `read_cell_value`: numbers (and dates) as floats, strings as
/// strings, errors as their text, empty cells and booleans as `None`.
fn cell_value(book: &mut Book, sheet: &str, row: u32, col: u32) -> Value {
    let is_csv = matches!(book.data, BookData::Csv(_));
    let Some(grid) = book.grid(sheet) else {
        return Value::Null;
    };
    let cell = grid
        .get(row as usize)
        .and_then(|r| r.get(col as usize))
        .cloned()
        .unwrap_or(Cell::Empty);
    let num = |f: f64| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number);
    match cell {
        Cell::Num(f) | Cell::Date(f) => num(f),
        Cell::Str(s) => {
            if is_csv {
                if let Some(f) = parse_numeric(&s).and_then(|v| v.as_f64()) {
                    return num(f);
                }
            }
            Value::String(s)
        }
        Cell::Error(e) => Value::String(e),
        Cell::Bool(_) | Cell::Empty => Value::Null,
    }
}

fn check_cell(books: &mut Books, i: usize, rule: &Value) -> Result<(bool, String), EvalError> {
    let (side, name) = books.parse_idx(i, "sheet_idx", rule.get("sheet_idx"))?;
    let coord = rule
        .get("coordinate")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let (row, col) = parse_coordinate(coord).ok_or_else(|| {
        EvalError::bad_option(M, &format!("rules[{i}].coordinate"), "a cell like \"B2\"")
    })?;
    let props = rule
        .get("props")
        .and_then(Value::as_object)
        .ok_or_else(|| {
            EvalError::bad_option(
                M,
                &format!("rules[{i}].props"),
                "an object of {prop: {method, ref}}",
            )
        })?;
    for prop in props.keys() {
        if prop != "value" && prop != "merge" {
            return Err(EvalError::unsupported(
                M,
                format!("check_cell prop `{prop}` (rules[{i}]); only `value` and `merge` are"),
            ));
        }
    }
    let book = books.book(side).expect("checked by parse_idx");
    if !book.names.contains(&name) {
        return Ok((false, format!("sheet {name:?} not found")));
    }
    for (prop, r) in props {
        let got = if prop == "value" {
            cell_value(book, &name, row, col)
        } else {
            Value::Bool(book.is_merged_cell(&name, row, col)?)
        };
        let ok = match_value_to_rule(&got, r)
            .map_err(|e| EvalError::bad_option(M, &format!("rules[{i}].props.{prop}"), e.0))?;
        if !ok {
            return Ok((
                false,
                format!(
                    "cell {name}!{coord} {prop}: {} fails {} {}",
                    py_repr(&got),
                    r.get("method").and_then(Value::as_str).unwrap_or("?"),
                    py_repr(r.get("ref").unwrap_or(&Value::Null))
                ),
            ));
        }
    }
    Ok((true, String::new()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinates() {
        assert_eq!(parse_coordinate("A1"), Some((0, 0)));
        assert_eq!(parse_coordinate("AB12"), Some((11, 27)));
        assert_eq!(parse_coordinate("1A"), None);
        assert_eq!(parse_coordinate("A0"), None);
        assert_eq!(col_letter(27), "AB");
    }

    #[test]
    fn rounding_is_half_even_like_numpy() {
        assert_eq!(np_round(0.12345, 4), 0.1234);
        assert_eq!(np_round(2.5, 0), 2.0);
        assert_eq!(np_round(1.23456, 4), 1.2346);
    }

    #[test]
    fn column_inference() {
        let s = |x: &str| Fv::Str(x.into());
        assert_eq!(infer_column(vec![s("1"), Fv::Int(2)]).0, Dtype::Int64);
        assert_eq!(infer_column(vec![Fv::Int(1), s("NA")]).0, Dtype::Float64);
        assert_eq!(infer_column(vec![s("x"), Fv::Int(1)]).0, Dtype::Object);
        assert_eq!(
            infer_column(vec![s("TRUE"), Fv::Bool(false)]).0,
            Dtype::Bool
        );
    }
}
