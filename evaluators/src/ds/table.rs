//! `ds_table`: a result table (CSV/TSV/text with a sniffed `,`/tab/`;`
//! delimiter, or an `.xlsx`/`.xlsm`/`.xlsb`/`.xls`/`.ods` workbook) against an
//! expected CSV file or JSON `{"columns": [...], "rows": [[...], ...]}`.
//!
//! The header is the first non-blank row. Options:
//! - `key`: columns that identify a row (a string or a list). Rows are
//!   matched by key; a key missing from the result, or (unless `extra_rows`)
//!   a result key that is not expected, is a difference; duplicate keys in
//!   the result fail. Without `key`, rows are compared by position when
//!   `ordered`, else as a multiset (each expected row takes the first unused
//!   result row equal to it), so row order does not matter.
//! - `columns`: the columns compared (default: every expected column). Extra
//!   result columns are always allowed.
//! - `abs_tol`, `rel_tol` (1e-6 each) and `tolerance` (`{column: abs tol}`,
//!   replacing `abs_tol` for that column): two numeric cells are equal when
//!   `|a - e| <= max(tol, rel_tol * |e|)`.
//! - `ordered` (false): with `key`, the matched result rows must come in the
//!   expected order.
//! - `normalize_names` (true): column names match case-insensitively, with
//!   runs of spaces, `-` and `_` equal.
//! - `extra_rows` (false): whether result rows beyond the expected ones are
//!   allowed.
//! - `sheet`: the result workbook's sheet, by name or 0-based index (default
//!   the first). An expected workbook is read from its first sheet.
//!
//! Cells: `""`, `NaN`, `NA`, `null` and `None` (any case) are missing and
//! equal each other; two cells that both read as plain numbers compare
//! numerically; `true`/`false` compare case-insensitively; anything else is
//! trimmed string equality. Workbook dates are compared as their serial
//! numbers.

use std::collections::HashMap;

use serde_json::Value;

use super::{
    bad_expected, canonical, fmt_num, is_missing, json_cell, norm_name, opt_names, opt_num,
    opt_sheet, parse_plain_number, read_table, result_table, short, SheetSel, Table,
};
use crate::{opt_bool, result_file, Artifact, EvalError, Options, Scored};

const M: &str = "ds_table";
/// How many differences a detail lists.
const SHOW: usize = 3;

struct Opts {
    key: Option<Vec<String>>,
    columns: Option<Vec<String>>,
    abs_tol: f64,
    rel_tol: f64,
    tolerance: HashMap<String, f64>,
    ordered: bool,
    normalize: bool,
    extra_rows: bool,
    sheet: SheetSel,
}

fn opts(options: &Options) -> Result<Opts, EvalError> {
    let normalize = opt_bool(M, options, "normalize_names", true)?;
    let mut tolerance = HashMap::new();
    match options.get("tolerance") {
        None | Some(Value::Null) => {}
        Some(Value::Object(o)) => {
            for (col, v) in o {
                match v.as_f64() {
                    Some(t) if t.is_finite() && t >= 0.0 => {
                        tolerance.insert(norm_name(col, normalize), t);
                    }
                    _ => {
                        return Err(EvalError::bad_option(
                            M,
                            "tolerance",
                            "an object of column name to non-negative number",
                        ))
                    }
                }
            }
        }
        Some(_) => {
            return Err(EvalError::bad_option(
                M,
                "tolerance",
                "an object of column name to non-negative number",
            ))
        }
    }
    Ok(Opts {
        key: opt_names(M, options, "key")?,
        columns: opt_names(M, options, "columns")?,
        abs_tol: opt_num(M, options, "abs_tol", 1e-6)?,
        rel_tol: opt_num(M, options, "rel_tol", 1e-6)?,
        tolerance,
        ordered: opt_bool(M, options, "ordered", false)?,
        normalize,
        extra_rows: opt_bool(M, options, "extra_rows", false)?,
        sheet: opt_sheet(M, options)?,
    })
}

pub(crate) fn ds_table(
    result: &Artifact,
    expected: &Artifact,
    options: &Options,
) -> Result<Scored, EvalError> {
    let o = opts(options)?;
    let want = expected_table(expected)?;
    let path = result_file(M, result)?;
    let got = match result_table(path, &o.sheet) {
        Ok(t) => t,
        Err(s) => return Ok(s),
    };
    compare(&got, &want, &o)
}

/// The expected table: a file, or JSON `{"columns": [...], "rows": [...]}`.
fn expected_table(expected: &Artifact) -> Result<Table, EvalError> {
    match expected {
        Artifact::File(p) => {
            read_table(p, &SheetSel::First).map_err(|e| EvalError::unreadable(p, e))
        }
        Artifact::Files(ps) if ps.len() == 1 => {
            read_table(&ps[0], &SheetSel::First).map_err(|e| EvalError::unreadable(&ps[0], e))
        }
        Artifact::Json(v) => {
            let columns = v
                .get("columns")
                .and_then(Value::as_array)
                .and_then(|cs| {
                    cs.iter()
                        .map(|c| c.as_str().map(str::to_string))
                        .collect::<Option<Vec<_>>>()
                })
                .ok_or_else(|| bad_expected(M, "columns", "a list of column names"))?;
            let rows = v
                .get("rows")
                .and_then(Value::as_array)
                .ok_or_else(|| bad_expected(M, "rows", "a list of rows (lists of cells)"))?;
            let mut out = Vec::new();
            for r in rows {
                let Some(cells) = r.as_array() else {
                    return Err(bad_expected(M, "rows", "a list of rows (lists of cells)"));
                };
                if cells.len() != columns.len() {
                    return Err(bad_expected(
                        M,
                        "rows",
                        format!("rows of {} cells, like `columns`", columns.len()),
                    ));
                }
                out.push(cells.iter().map(json_cell).collect());
            }
            Ok(Table { columns, rows: out })
        }
        other => Err(EvalError::wrong_artifact(M, "file or json", other)),
    }
}

/// One compared column: its name, index in each table and tolerance.
struct Col {
    name: String,
    want: usize,
    got: usize,
    abs_tol: f64,
}

fn compare(got: &Table, want: &Table, o: &Opts) -> Result<Scored, EvalError> {
    // The expected side first: a broken task is an error whatever the result.
    let names: Vec<String> = match &o.columns {
        Some(c) => c.clone(),
        None => want.columns.clone(),
    };
    let mut want_cols = Vec::new();
    for name in &names {
        match want.find(name, o.normalize) {
            Some(w) => want_cols.push(w),
            None => {
                return Err(EvalError::bad_option(
                    M,
                    "columns",
                    format!("columns of the expected table (no column {name:?})"),
                ))
            }
        }
    }
    let mut want_key = Vec::new();
    for k in o.key.iter().flatten() {
        match want.find(k, o.normalize) {
            Some(w) => want_key.push(w),
            None => {
                return Err(EvalError::bad_option(
                    M,
                    "key",
                    format!("columns of the expected table (no column {k:?})"),
                ))
            }
        }
    }
    let key_of = |row: &[String], idx: &[usize]| -> Vec<String> {
        idx.iter().map(|&i| canonical(&row[i])).collect()
    };
    let mut want_at: HashMap<Vec<String>, usize> = HashMap::new();
    if o.key.is_some() {
        for (i, r) in want.rows.iter().enumerate() {
            let k = key_of(r, &want_key);
            if want_at.insert(k.clone(), i).is_some() {
                return Err(EvalError::bad_option(
                    M,
                    "key",
                    format!(
                        "a key unique in the expected table ({} repeats)",
                        show_key(&k)
                    ),
                ));
            }
        }
    }

    let mut cols = Vec::new();
    for (name, &w) in names.iter().zip(&want_cols) {
        let Some(g) = got.find(name, o.normalize) else {
            return Ok(Scored::fail(format!(
                "missing column {name:?} (result columns: {})",
                short(&got.columns.join(", "))
            )));
        };
        let abs_tol = o
            .tolerance
            .get(&norm_name(name, o.normalize))
            .copied()
            .unwrap_or(o.abs_tol);
        cols.push(Col {
            name: name.clone(),
            want: w,
            got: g,
            abs_tol,
        });
    }
    let mut diffs: Vec<String> = Vec::new();
    let mut bad_rows = 0usize;
    let total = want.rows.len();
    if let Some(key) = &o.key {
        let mut got_key = Vec::new();
        for k in key {
            let Some(g) = got.find(k, o.normalize) else {
                return Ok(Scored::fail(format!(
                    "missing key column {k:?} (result columns: {})",
                    short(&got.columns.join(", "))
                )));
            };
            got_key.push(g);
        }
        let mut got_at: HashMap<Vec<String>, usize> = HashMap::new();
        let mut order: Vec<usize> = Vec::new();
        for (i, r) in got.rows.iter().enumerate() {
            let k = key_of(r, &got_key);
            if got_at.insert(k.clone(), i).is_some() {
                return Ok(Scored::fail(format!(
                    "duplicate key {} in the result",
                    show_key(&k)
                )));
            }
            match want_at.get(&k) {
                Some(&w) => order.push(w),
                None if !o.extra_rows => {
                    bad_rows += 1;
                    diffs.push(format!("row {}: not expected", show_key(&k)));
                }
                None => {}
            }
        }
        for wr in &want.rows {
            let k = key_of(wr, &want_key);
            let label = show_key(&k);
            match got_at.get(&k) {
                None => {
                    bad_rows += 1;
                    diffs.push(format!("row {label}: missing"));
                }
                Some(&gi) => {
                    if let Some(d) = row_diff(&got.rows[gi], wr, &cols, o.rel_tol) {
                        bad_rows += 1;
                        diffs.push(format!("row {label}: {d}"));
                    }
                }
            }
        }
        if o.ordered {
            if let Some(p) = order.windows(2).position(|w| w[0] > w[1]) {
                let k = key_of(&want.rows[order[p + 1]], &want_key);
                diffs.push(format!("row order differs at row {}", show_key(&k)));
            }
        }
    } else if o.ordered {
        for (i, wr) in want.rows.iter().enumerate() {
            match got.rows.get(i) {
                None => {
                    bad_rows += 1;
                    diffs.push(format!("row {}: missing", i + 1));
                }
                Some(gr) => {
                    if let Some(d) = row_diff(gr, wr, &cols, o.rel_tol) {
                        bad_rows += 1;
                        diffs.push(format!("row {}: {d}", i + 1));
                    }
                }
            }
        }
        if got.rows.len() > want.rows.len() && !o.extra_rows {
            let n = got.rows.len() - want.rows.len();
            bad_rows += n;
            diffs.push(format!("{n} extra rows"));
        }
    } else {
        // Rows as a multiset: each expected row takes the first unused
        // result row equal to it (exact text first, then within tolerance).
        let text_of = |r: &[String], idx: fn(&Col) -> usize| -> Vec<String> {
            cols.iter().map(|c| canonical(&r[idx(c)])).collect()
        };
        let mut by_text: HashMap<Vec<String>, Vec<usize>> = HashMap::new();
        for (i, r) in got.rows.iter().enumerate().rev() {
            by_text.entry(text_of(r, |c| c.got)).or_default().push(i);
        }
        let mut used = vec![false; got.rows.len()];
        let mut unmatched: Vec<usize> = Vec::new();
        for (wi, wr) in want.rows.iter().enumerate() {
            match by_text.get_mut(&text_of(wr, |c| c.want)).and_then(Vec::pop) {
                Some(gi) => used[gi] = true,
                None => unmatched.push(wi),
            }
        }
        for wi in unmatched {
            let wr = &want.rows[wi];
            let hit = (0..got.rows.len())
                .find(|&gi| !used[gi] && row_diff(&got.rows[gi], wr, &cols, o.rel_tol).is_none());
            match hit {
                Some(gi) => used[gi] = true,
                None => {
                    bad_rows += 1;
                    let shown: Vec<&str> = cols.iter().map(|c| wr[c.want].trim()).collect();
                    diffs.push(format!(
                        "expected row {} ({}): no matching row",
                        wi + 1,
                        short(&shown.join(", "))
                    ));
                }
            }
        }
        let extra = used.iter().filter(|u| !**u).count();
        if extra > 0 && !o.extra_rows {
            diffs.push(format!("{extra} result rows not expected"));
        }
    }
    if diffs.is_empty() {
        return Ok(Scored::pass(format!(
            "{} rows × {} columns match",
            total,
            cols.len()
        )));
    }
    let shown: Vec<&str> = diffs.iter().take(SHOW).map(String::as_str).collect();
    let more = if diffs.len() > SHOW {
        format!("; … ({} differences)", diffs.len())
    } else {
        String::new()
    };
    let counts = if bad_rows > 0 {
        format!(" ({bad_rows} of {total} rows differ)")
    } else {
        String::new()
    };
    Ok(Scored::fail(format!("{}{more}{counts}", shown.join("; "))))
}

fn show_key(k: &[String]) -> String {
    format!("key=({})", k.join(", "))
}

/// The first compared cell that differs, as `column c: got != want (tol t)`.
fn row_diff(got: &[String], want: &[String], cols: &[Col], rel_tol: f64) -> Option<String> {
    for c in cols {
        let (g, w) = (&got[c.got], &want[c.want]);
        if let Some(why) = cell_diff(g, w, c.abs_tol, rel_tol) {
            return Some(format!("column {}: {why}", c.name));
        }
    }
    None
}

/// Why two cells differ, or `None` when they are equal.
fn cell_diff(got: &str, want: &str, abs_tol: f64, rel_tol: f64) -> Option<String> {
    let (gm, wm) = (is_missing(got), is_missing(want));
    if gm && wm {
        return None;
    }
    if gm != wm {
        let show = |s: &str, m: bool| {
            if m {
                "missing".to_string()
            } else {
                format!("{:?}", short(s.trim()))
            }
        };
        return Some(format!("{} != {}", show(got, gm), show(want, wm)));
    }
    if let (Some(a), Some(e)) = (parse_plain_number(got), parse_plain_number(want)) {
        let tol = abs_tol.max(rel_tol * e.abs());
        if (a - e).abs() <= tol {
            return None;
        }
        return Some(format!(
            "{} != {} (tol {})",
            fmt_num(a),
            fmt_num(e),
            fmt_num(tol)
        ));
    }
    let (g, w) = (got.trim(), want.trim());
    let boolish = |s: &str| s.eq_ignore_ascii_case("true") || s.eq_ignore_ascii_case("false");
    if g == w || (boolish(g) && boolish(w) && g.eq_ignore_ascii_case(w)) {
        return None;
    }
    Some(format!("{:?} != {:?}", short(g), short(w)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_compare_as_numbers_missing_booleans_or_strings() {
        assert_eq!(cell_diff("1.0000001", "1", 1e-6, 0.0), None);
        assert!(cell_diff("1.1", "1", 1e-6, 0.0).is_some_and(|d| d == "1.1 != 1 (tol 1e-6)"));
        assert_eq!(cell_diff("NaN", "", 0.0, 0.0), None);
        assert_eq!(cell_diff("null", "NA", 0.0, 0.0), None);
        assert_eq!(cell_diff("True", "true", 0.0, 0.0), None);
        assert_eq!(cell_diff(" north ", "north", 0.0, 0.0), None);
        assert_eq!(
            cell_diff("", "3", 0.0, 0.0).as_deref(),
            Some("missing != \"3\"")
        );
        assert_eq!(
            cell_diff("North", "north", 0.0, 0.0).as_deref(),
            Some("\"North\" != \"north\"")
        );
    }
}
