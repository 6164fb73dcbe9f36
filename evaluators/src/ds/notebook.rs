//! `ds_notebook`: a Jupyter notebook (nbformat 4) that ran top to bottom
//! without errors.
//!
//! Checks, in order: the file parses as an nbformat-4 notebook; no output is
//! an `error`; (with `require_all_executed`, default true) every code cell
//! with source has an `execution_count`; the execution counts of code cells
//! strictly increase in document order; and, when the expected artifact is
//! JSON `{"contains": [...]}` (or a bare list), each string appears in some
//! code cell's output text (stream `text`, `data["text/plain"]`), compared
//! with whitespace runs collapsed. The expected artifact is optional. A
//! notebook without any code cell with source fails.

use serde_json::Value;

use super::{bad_expected, collapse_ws, short};
use crate::text::{read_result_text, ResultText};
use crate::{opt_bool, result_file, Artifact, EvalError, Options, Scored};

const M: &str = "ds_notebook";

pub(crate) fn ds_notebook(
    result: &Artifact,
    expected: Option<&Artifact>,
    options: &Options,
) -> Result<Scored, EvalError> {
    let require_all = opt_bool(M, options, "require_all_executed", true)?;
    let contains = match expected {
        None => Vec::new(),
        Some(Artifact::Json(v)) => {
            let list = match v {
                Value::Array(_) => Some(v),
                Value::Object(o) => o.get("contains"),
                _ => None,
            };
            list.and_then(Value::as_array)
                .and_then(|a| {
                    a.iter()
                        .map(|s| s.as_str().map(str::to_string))
                        .collect::<Option<Vec<_>>>()
                })
                .ok_or_else(|| bad_expected(M, "contains", "a list of strings"))?
        }
        Some(other) => return Err(EvalError::wrong_artifact(M, "json", other)),
    };
    let path = result_file(M, result)?;
    let text = match read_result_text(path) {
        ResultText::Ok(s) => s,
        ResultText::Fail(s) => return Ok(s),
    };
    let nb: Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => return Ok(Scored::fail(format!("not a notebook: invalid JSON: {e}"))),
    };
    match nb.get("nbformat").and_then(Value::as_u64) {
        Some(4) => {}
        Some(n) => return Ok(Scored::fail(format!("nbformat {n}, expected 4"))),
        None => return Ok(Scored::fail("not a notebook: no nbformat")),
    }
    let Some(cells) = nb.get("cells").and_then(Value::as_array) else {
        return Ok(Scored::fail("not a notebook: no cells"));
    };

    let mut code = 0usize;
    let mut unexecuted: Vec<usize> = Vec::new();
    let mut last: Option<(usize, u64)> = None;
    let mut order_error: Option<String> = None;
    let mut outputs_text: Vec<String> = Vec::new();
    for (i, cell) in cells.iter().enumerate() {
        let n = i + 1;
        if cell.get("cell_type").and_then(Value::as_str) != Some("code") {
            continue;
        }
        let outputs = cell
            .get("outputs")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        for out in outputs {
            if out.get("output_type").and_then(Value::as_str) == Some("error") {
                let ename = out
                    .get("ename")
                    .and_then(Value::as_str)
                    .unwrap_or("an error");
                let evalue = out.get("evalue").and_then(Value::as_str).unwrap_or("");
                let sep = if evalue.is_empty() { "" } else { ": " };
                return Ok(Scored::fail(format!(
                    "cell {n} raised {ename}{sep}{}",
                    short(evalue)
                )));
            }
            if let Some(t) = out.get("text") {
                outputs_text.push(joined(t));
            }
            if let Some(t) = out.get("data").and_then(|d| d.get("text/plain")) {
                outputs_text.push(joined(t));
            }
        }
        let source = cell.get("source").map(joined).unwrap_or_default();
        if source.trim().is_empty() {
            continue;
        }
        code += 1;
        match cell.get("execution_count").and_then(Value::as_u64) {
            None => unexecuted.push(n),
            Some(c) => {
                if let Some((pn, pc)) = last {
                    if c <= pc && order_error.is_none() {
                        order_error = Some(format!(
                            "not run top to bottom: cell {pn} ran as [{pc}], cell {n} as [{c}]"
                        ));
                    }
                }
                last = Some((n, c));
            }
        }
    }
    if code == 0 {
        return Ok(Scored::fail("no code cells with source"));
    }
    if require_all {
        if let Some(first) = unexecuted.first() {
            return Ok(Scored::fail(format!(
                "cell {first} was not executed ({} of {code} code cells not executed)",
                unexecuted.len()
            )));
        }
    }
    if let Some(e) = order_error {
        return Ok(Scored::fail(e));
    }
    let haystack: Vec<String> = outputs_text.iter().map(|t| collapse_ws(t)).collect();
    for want in &contains {
        let w = collapse_ws(want);
        if !haystack.iter().any(|h| h.contains(&w)) {
            return Ok(Scored::fail(format!(
                "no output contains {:?}",
                short(want)
            )));
        }
    }
    let found = if contains.is_empty() {
        String::new()
    } else {
        format!("; {} expected outputs found", contains.len())
    };
    Ok(Scored::pass(format!(
        "{code} code cells ran in order without errors{found}"
    )))
}

/// A notebook multiline string: a string or a list of strings.
fn joined(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(Value::as_str).collect(),
        _ => String::new(),
    }
}
