//! CoDA-Bench's two accuracies, kept apart so a report can show each and
//! their joint rate.
//!
//! - `execution_accuracy`: the answer (text, or a file read as text)
//!   against the expected answer (a JSON string, number or list, or text).
//!   Values match when both read as numbers within `rel_tol` (default
//!   1e-6) relative to the expected one (absolute near 0), or else as
//!   normalised strings: case folded, whitespace collapsed, surrounding
//!   quotes and a final period dropped. A list answer (a JSON array, or
//!   one value per line, or comma-separated on one line) matches a list
//!   element by element, in order unless `ordered: false`.
//! - `discovery_accuracy`: the file access log (the guest agent's watch
//!   report: `{"files": [{"path", "opened", "read", …}]}`, or the list of
//!   its entries) against the gold files (a JSON list of paths, or
//!   `{"gold": [...], "distractors": [...]}`). 1 when every gold file was
//!   opened or read; the detail gives recall, precision over the files
//!   read under `root` (when given; else over all), and how many
//!   distractors were read (the named ones, or every other file read).
//!   Reading extra files is not penalised, as in CoDA.

use std::collections::BTreeSet;

use serde_json::Value;

use super::{fmt_num, opt_num, opt_string, parse_plain_number, short};
use crate::text::{read_result_text, ResultText};
use crate::{opt_bool, Artifact, EvalError, Options, Scored};

const EA: &str = "execution_accuracy";
const DA: &str = "discovery_accuracy";

/// The result as text (a file read as text); Err(score) for an unusable one.
fn text_of(metric: &str, a: &Artifact) -> Result<Result<String, Scored>, EvalError> {
    Ok(match a {
        Artifact::Text(s) => Ok(s.clone()),
        Artifact::Json(Value::String(s)) => Ok(s.clone()),
        Artifact::Json(v) => Ok(v.to_string()),
        Artifact::File(p) => match read_result_text(p) {
            ResultText::Ok(s) => Ok(s),
            ResultText::Fail(s) => Err(s),
        },
        Artifact::Files(ps) if ps.len() == 1 => match read_result_text(&ps[0]) {
            ResultText::Ok(s) => Ok(s),
            ResultText::Fail(s) => Err(s),
        },
        other => return Err(EvalError::wrong_artifact(metric, "text or file", other)),
    })
}

/// A value normalised for comparison as a string.
fn normalise(s: &str) -> String {
    let mut t = s.trim();
    // `"New York".` and `"New York."` both lose the quotes and the period.
    for _ in 0..2 {
        t = t.strip_suffix('.').unwrap_or(t).trim();
        for q in ['"', '\'', '`'] {
            if t.len() >= 2 && t.starts_with(q) && t.ends_with(q) {
                t = t[1..t.len() - 1].trim();
            }
        }
    }
    t.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// A number in an answer: plain, or with thousands separators in groups
/// of three (`1,234.5`).
fn number(s: &str) -> Option<f64> {
    let t = s.trim();
    if let Some(x) = parse_plain_number(t) {
        return Some(x);
    }
    let (int, frac) = t.split_once('.').unwrap_or((t, ""));
    let digits = int.trim_start_matches(['-', '+']);
    let groups: Vec<&str> = digits.split(',').collect();
    let grouped = groups.len() > 1
        && (1..=3).contains(&groups[0].len())
        && groups[1..].iter().all(|g| g.len() == 3)
        && groups.iter().all(|g| g.bytes().all(|b| b.is_ascii_digit()));
    if !grouped {
        return None;
    }
    let plain = format!(
        "{}{}.{frac}",
        &int[..int.len() - digits.len()],
        groups.concat()
    );
    parse_plain_number(plain.trim_end_matches('.'))
}

/// Whether one answer value matches the expected one; the reason.
fn value_matches(got: &str, want: &str, rel_tol: f64) -> (bool, String) {
    if let (Some(a), Some(e)) = (number(got), number(want)) {
        let tol = if e == 0.0 { rel_tol } else { rel_tol * e.abs() };
        let ok = (a - e).abs() <= tol;
        return (
            ok,
            format!(
                "{} {} {}",
                fmt_num(a),
                if ok { "==" } else { "!=" },
                fmt_num(e)
            ),
        );
    }
    let (a, e) = (normalise(got), normalise(want));
    let ok = a == e;
    (
        ok,
        format!(
            "{:?} {} {:?}",
            short(&a),
            if ok { "==" } else { "!=" },
            short(&e)
        ),
    )
}

/// The expected answer as a list of values (one for a scalar).
fn expected_values(expected: &Artifact) -> Result<Vec<String>, EvalError> {
    let scalar = |v: &Value| -> Option<String> {
        match v {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    };
    let bad = || {
        EvalError::bad_option(
            EA,
            "expected",
            "a JSON string, number or list of them, {\"value\": …}, or text",
        )
    };
    match expected {
        Artifact::Json(Value::Array(items)) => {
            items.iter().map(|v| scalar(v).ok_or_else(bad)).collect()
        }
        Artifact::Json(Value::Object(o)) => match o.get("value") {
            Some(Value::Array(items)) => items.iter().map(|v| scalar(v).ok_or_else(bad)).collect(),
            Some(v) => scalar(v).map(|s| vec![s]).ok_or_else(bad),
            None => Err(bad()),
        },
        Artifact::Json(v) => scalar(v).map(|s| vec![s]).ok_or_else(bad),
        Artifact::Text(s) => Ok(vec![s.clone()]),
        other => Err(EvalError::wrong_artifact(EA, "json or text", other)),
    }
}

/// An answer split into values: a JSON array, else one per non-empty
/// line, else comma-separated when a single line has `want` > 1 values.
fn answer_values(text: &str, want: usize) -> Vec<String> {
    let t = text.trim();
    if t.starts_with('[') {
        if let Ok(Value::Array(items)) = serde_json::from_str::<Value>(t) {
            return items
                .iter()
                .map(|v| match v {
                    Value::String(s) => s.clone(),
                    v => v.to_string(),
                })
                .collect();
        }
    }
    let lines: Vec<String> = t
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect();
    if want > 1 && lines.len() == 1 {
        return lines[0].split(',').map(|s| s.trim().to_string()).collect();
    }
    if want == 1 {
        return vec![t.to_string()];
    }
    lines
}

pub(crate) fn execution_accuracy(
    result: &Artifact,
    expected: &Artifact,
    options: &Options,
) -> Result<Scored, EvalError> {
    let rel_tol = opt_num(EA, options, "rel_tol", 1e-6)?;
    let ordered = opt_bool(EA, options, "ordered", true)?;
    let want = expected_values(expected)?;
    let text = match text_of(EA, result)? {
        Ok(t) => t,
        Err(s) => return Ok(s),
    };
    if text.trim().is_empty() {
        return Ok(Scored::fail("empty answer"));
    }
    let got = answer_values(&text, want.len());
    if got.len() != want.len() {
        return Ok(Scored::fail(format!(
            "{} value(s) in the answer, {} expected",
            got.len(),
            want.len()
        )));
    }
    if want.len() == 1 {
        let (ok, why) = value_matches(&got[0], &want[0], rel_tol);
        return Ok(Scored::from_bool(ok, why));
    }
    let mut unmatched: Vec<&String> = got.iter().collect();
    for (i, w) in want.iter().enumerate() {
        let hit = if ordered {
            value_matches(&got[i], w, rel_tol).0.then_some(i)
        } else {
            unmatched
                .iter()
                .position(|g| value_matches(g, w, rel_tol).0)
        };
        match hit {
            Some(j) if !ordered => {
                unmatched.remove(j);
            }
            Some(_) => {}
            None => {
                let why = if ordered {
                    value_matches(&got[i], w, rel_tol).1
                } else {
                    format!("no answer value matches {:?}", short(w))
                };
                return Ok(Scored::fail(format!("value {}: {why}", i + 1)));
            }
        }
    }
    Ok(Scored::pass(format!("all {} values match", want.len())))
}

/// The paths the log says were opened or read.
fn read_paths(result: &Artifact) -> Result<Result<BTreeSet<String>, Scored>, EvalError> {
    let v = match result {
        Artifact::Json(v) => v.clone(),
        Artifact::File(_) | Artifact::Files(_) | Artifact::Text(_) => {
            let text = match text_of(DA, result)? {
                Ok(t) => t,
                Err(s) => return Ok(Err(s)),
            };
            match serde_json::from_str(&text) {
                Ok(v) => v,
                Err(e) => {
                    return Ok(Err(Scored::fail(format!(
                        "the access log is not JSON: {e}"
                    ))))
                }
            }
        }
        other => return Err(EvalError::wrong_artifact(DA, "json (an access log)", other)),
    };
    let entries = match &v {
        Value::Object(o) => o.get("files").cloned().unwrap_or(Value::Null),
        v => v.clone(),
    };
    let Value::Array(entries) = entries else {
        return Ok(Err(Scored::fail(
            "the access log has no `files` list".to_string(),
        )));
    };
    let count = |e: &Value, k: &str| e.get(k).and_then(Value::as_u64).unwrap_or(0);
    Ok(Ok(entries
        .iter()
        .filter(|e| count(e, "opened") + count(e, "read") > 0)
        .filter_map(|e| e.get("path").and_then(Value::as_str).map(str::to_string))
        .collect()))
}

fn path_list(v: Option<&Value>, what: &str) -> Result<Vec<String>, EvalError> {
    match v {
        None | Some(Value::Null) => Ok(vec![]),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| {
                i.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| EvalError::bad_option(DA, what, "a list of paths"))
            })
            .collect(),
        Some(_) => Err(EvalError::bad_option(DA, what, "a list of paths")),
    }
}

pub(crate) fn discovery_accuracy(
    result: &Artifact,
    expected: &Artifact,
    options: &Options,
) -> Result<Scored, EvalError> {
    let root = opt_string(DA, options, "root")?;
    let (gold, distractors) = match expected {
        Artifact::Json(v @ Value::Array(_)) => (path_list(Some(v), "expected")?, None),
        Artifact::Json(Value::Object(o)) => (
            path_list(o.get("gold"), "expected.gold")?,
            o.get("distractors")
                .map(|d| path_list(Some(d), "expected.distractors"))
                .transpose()?,
        ),
        other => {
            return Err(EvalError::wrong_artifact(
                DA,
                "json (the gold paths)",
                other,
            ))
        }
    };
    if gold.is_empty() {
        return Err(EvalError::bad_option(
            DA,
            "expected.gold",
            "at least one gold path",
        ));
    }
    let read = match read_paths(result)? {
        Ok(r) => r,
        Err(s) => return Ok(s),
    };
    let in_scope: BTreeSet<&String> = read
        .iter()
        .filter(|p| root.as_deref().is_none_or(|r| p.starts_with(r)))
        .collect();
    let gold_read = gold.iter().filter(|g| read.contains(*g)).count();
    let missing: Vec<&String> = gold.iter().filter(|g| !read.contains(*g)).collect();
    let distractors_read = match &distractors {
        Some(d) => d.iter().filter(|p| read.contains(*p)).count(),
        None => in_scope.iter().filter(|p| !gold.contains(p)).count(),
    };
    let recall = gold_read as f64 / gold.len() as f64;
    let precision = if in_scope.is_empty() {
        0.0
    } else {
        in_scope.iter().filter(|p| gold.contains(p)).count() as f64 / in_scope.len() as f64
    };
    let mut detail = format!(
        "gold {gold_read}/{} read (recall {recall:.2}), precision {precision:.2} over {} file(s) read, {distractors_read} distractor(s) read",
        gold.len(),
        in_scope.len()
    );
    if !missing.is_empty() {
        let names: Vec<String> = missing.iter().take(3).map(|p| short(p)).collect();
        detail.push_str(&format!("; not read: {}", names.join(", ")));
        if missing.len() > 3 {
            detail.push_str(&format!(" and {} more", missing.len() - 3));
        }
    }
    Ok(Scored::from_bool(missing.is_empty(), detail))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ea(result: &str, expected: Value, options: Value) -> Scored {
        let Value::Object(o) = options else { panic!() };
        execution_accuracy(
            &Artifact::Text(result.into()),
            &Artifact::Json(expected),
            &o,
        )
        .unwrap()
    }

    #[test]
    fn execution_accuracy_matches_numbers_within_1e6_and_normalised_strings() {
        let none = serde_json::json!({});
        assert_eq!(
            ea("125.0000001\n", serde_json::json!(125), none.clone()).score,
            1.0
        );
        assert_eq!(
            ea("125.001", serde_json::json!(125), none.clone()).score,
            0.0
        );
        assert_eq!(
            ea("1,284,550", serde_json::json!(1284550), none.clone()).score,
            1.0
        );
        assert_eq!(
            ea(
                "  \"New  York\". ",
                serde_json::json!("new york"),
                none.clone()
            )
            .score,
            1.0
        );
        assert_eq!(
            ea("Boston", serde_json::json!("new york"), none.clone()).score,
            0.0
        );
        assert_eq!(
            ea("0.0000005", serde_json::json!(0), none.clone()).score,
            1.0
        );
        assert_eq!(
            ea("", serde_json::json!(0), none.clone()).detail,
            "empty answer"
        );
        // Lists: in order unless told otherwise.
        assert_eq!(
            ea("a\nb\n", serde_json::json!(["A", "B"]), none.clone()).score,
            1.0
        );
        assert_eq!(
            ea("b, a", serde_json::json!(["a", "b"]), none.clone()).score,
            0.0
        );
        assert_eq!(
            ea(
                "b, a",
                serde_json::json!(["a", "b"]),
                serde_json::json!({"ordered": false})
            )
            .score,
            1.0
        );
        assert_eq!(
            ea("[1, 2.0000000001]", serde_json::json!([1, 2]), none.clone()).score,
            1.0
        );
        let s = ea("1\n2\n3", serde_json::json!([1, 2]), none);
        assert_eq!(
            (s.score, s.detail.as_str()),
            (0.0, "3 value(s) in the answer, 2 expected")
        );
        assert!(matches!(
            execution_accuracy(
                &Artifact::Text("1".into()),
                &Artifact::Json(serde_json::json!({"x": 1})),
                &Options::new()
            ),
            Err(EvalError::BadOption { .. })
        ));
    }

    #[test]
    fn discovery_accuracy_needs_every_gold_file_read_and_counts_distractors() {
        let log = serde_json::json!({"files": [
            {"path": "/lake/sales/2024.csv", "opened": 1, "read": 3, "written": 0, "first_ms": 10.0},
            {"path": "/lake/sales/2024_old.csv", "opened": 1, "read": 1, "written": 0, "first_ms": 5.0},
            {"path": "/lake/README.md", "opened": 0, "read": 0, "written": 1, "first_ms": 1.0},
            {"path": "/usr/lib/python3/dist-packages/pandas/__init__.py", "opened": 1, "read": 1, "written": 0, "first_ms": 2.0}
        ]});
        let opts = |v: Value| match v {
            Value::Object(o) => o,
            _ => panic!(),
        };
        let gold = Artifact::Json(serde_json::json!(["/lake/sales/2024.csv"]));
        let s = discovery_accuracy(
            &Artifact::Json(log.clone()),
            &gold,
            &opts(serde_json::json!({"root": "/lake/"})),
        )
        .unwrap();
        assert_eq!(s.score, 1.0, "{}", s.detail);
        assert_eq!(
            s.detail,
            "gold 1/1 read (recall 1.00), precision 0.50 over 2 file(s) read, 1 distractor(s) read"
        );
        let two = Artifact::Json(serde_json::json!({
            "gold": ["/lake/sales/2024.csv", "/lake/regions.csv"],
            "distractors": ["/lake/sales/2024_old.csv", "/lake/sales/sample.csv"]
        }));
        let s = discovery_accuracy(&Artifact::Json(log), &two, &Options::new()).unwrap();
        assert_eq!(s.score, 0.0);
        assert!(
            s.detail.contains("gold 1/2 read (recall 0.50)")
                && s.detail.contains("1 distractor(s) read")
                && s.detail.ends_with("not read: /lake/regions.csv"),
            "{}",
            s.detail
        );
        let s =
            discovery_accuracy(&Artifact::Text("not json".into()), &gold, &Options::new()).unwrap();
        assert!(s.score == 0.0 && s.detail.starts_with("the access log is not JSON"));
        assert!(matches!(
            discovery_accuracy(
                &Artifact::Json(serde_json::json!([])),
                &Artifact::Json(serde_json::json!([])),
                &Options::new()
            ),
            Err(EvalError::BadOption { .. })
        ));
    }
}
