//! `ds_number`: one number in a text or file, compared with tolerances.
//!
//! The result is text (or a file read as text); the expected artifact is a
//! JSON number, `{"value": x}`, or a JSON string (or text) holding a plain
//! number. It passes when `|a - e| <= max(abs_tol, rel_tol * |e|)`.
//!
//! `parse`:
//! - `strict` (default): the trimmed text is exactly one plain number
//!   (`42`, `-1.5e3`; no `%`, no thousands separators, no `nan`/`inf`);
//! - `first` / `last`: the first or last number anywhere in the text, for
//!   written answers; here `1,234.5` (commas as thousands separators, in
//!   groups of three) reads as 1234.5, and a `-` right after a letter or
//!   digit (`2020-01`) is a hyphen, not a sign.

use std::sync::OnceLock;

use regex::Regex;
use serde_json::Value;

use super::{fmt_num, opt_num, opt_string, parse_plain_number, short};
use crate::text::{read_result_text, ResultText};
use crate::{Artifact, EvalError, Options, Scored};

const M: &str = "ds_number";

#[derive(Debug, Clone, Copy, PartialEq)]
enum Parse {
    Strict,
    First,
    Last,
}

pub(crate) fn ds_number(
    result: &Artifact,
    expected: &Artifact,
    options: &Options,
) -> Result<Scored, EvalError> {
    let abs_tol = opt_num(M, options, "abs_tol", 1e-6)?;
    let rel_tol = opt_num(M, options, "rel_tol", 1e-6)?;
    let parse = match opt_string(M, options, "parse")?.as_deref() {
        None | Some("strict") => Parse::Strict,
        Some("first") => Parse::First,
        Some("last") => Parse::Last,
        Some(_) => {
            return Err(EvalError::bad_option(
                M,
                "parse",
                "\"strict\", \"first\" or \"last\"",
            ))
        }
    };
    let want = expected_number(expected)?;
    let text = match result {
        Artifact::Text(s) => s.clone(),
        Artifact::File(p) => match read_result_text(p) {
            ResultText::Ok(s) => s,
            ResultText::Fail(s) => return Ok(s),
        },
        Artifact::Files(ps) if ps.len() == 1 => match read_result_text(&ps[0]) {
            ResultText::Ok(s) => s,
            ResultText::Fail(s) => return Ok(s),
        },
        other => return Err(EvalError::wrong_artifact(M, "text or file", other)),
    };
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Ok(Scored::fail("empty answer"));
    }
    let got = match parse {
        Parse::Strict => parse_plain_number(trimmed),
        Parse::First => numbers_in(trimmed).first().copied(),
        Parse::Last => numbers_in(trimmed).last().copied(),
    };
    let Some(got) = got else {
        return Ok(Scored::fail(format!("not a number: {:?}", short(trimmed))));
    };
    let tol = abs_tol.max(rel_tol * want.abs());
    let ok = (got - want).abs() <= tol;
    let op = if ok { "==" } else { "!=" };
    Ok(Scored::from_bool(
        ok,
        format!(
            "{} {op} {} (tol {})",
            fmt_num(got),
            fmt_num(want),
            fmt_num(tol)
        ),
    ))
}

/// The expected number: a JSON number, `{"value": x}`, or a string holding a
/// plain number.
fn expected_number(expected: &Artifact) -> Result<f64, EvalError> {
    let bad = |got: String| EvalError::WrongArtifact {
        metric: M.to_string(),
        expected: "a JSON number or {\"value\": number}".to_string(),
        got,
    };
    let of_value = |v: &Value| -> Option<f64> {
        match v {
            Value::Number(n) => n.as_f64(),
            Value::String(s) => parse_plain_number(s),
            _ => None,
        }
    };
    match expected {
        Artifact::Json(Value::Object(o)) => o.get("value").and_then(of_value).ok_or_else(|| {
            bad(format!(
                "json {}",
                short(&Value::Object(o.clone()).to_string())
            ))
        }),
        Artifact::Json(v) => {
            of_value(v).ok_or_else(|| bad(format!("json {}", short(&v.to_string()))))
        }
        Artifact::Text(s) => {
            parse_plain_number(s).ok_or_else(|| bad(format!("text {:?}", short(s))))
        }
        other => Err(EvalError::wrong_artifact(M, "json", other)),
    }
}

/// Every number in a written answer, in order.
fn numbers_in(text: &str) -> Vec<f64> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(r"[+-]?(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)(?:[eE][+-]?\d+)?")
            .expect("number regex")
    });
    let text = text.replace('\u{2212}', "-");
    let mut out = Vec::new();
    for m in re.find_iter(&text) {
        let mut s = m.as_str();
        if s.starts_with(['-', '+']) {
            let before = text[..m.start()].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric()) {
                s = &s[1..];
            }
        }
        if let Some(x) = parse_plain_number(&s.replace(',', "")) {
            out.push(x);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_in_prose_read_thousands_separators_and_hyphens() {
        assert_eq!(
            numbers_in("In 2020-01 the mean was 1,234.5 (n=3, sd -2)."),
            vec![2020.0, 1.0, 1234.5, 3.0, -2.0]
        );
        assert_eq!(numbers_in("ratio \u{2212}0.5 or .25e1"), vec![-0.5, 2.5]);
        assert_eq!(numbers_in("12,34"), vec![12.0, 34.0]);
        assert!(numbers_in("none here").is_empty());
    }
}
