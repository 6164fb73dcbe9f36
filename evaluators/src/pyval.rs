//! Python-like semantics over JSON values: OSWorld's metrics compare values
//! with Python's `==`, `<`, `str()`, so `1 == 1.0` and `True == 1` hold.
//! Also OSWorld's shared value matcher `_match_value_to_rule`.

use std::cmp::Ordering;

use serde_json::{Number, Value};

/// A number as Python sees it (bools are ints).
fn num(v: &Value) -> Option<Num> {
    match v {
        Value::Bool(b) => Some(Num::Int(i128::from(*b))),
        Value::Number(n) => Some(num_of(n)),
        _ => None,
    }
}

#[derive(Clone, Copy)]
enum Num {
    Int(i128),
    Float(f64),
}

fn num_of(n: &Number) -> Num {
    if let Some(i) = n.as_i64() {
        Num::Int(i128::from(i))
    } else if let Some(u) = n.as_u64() {
        Num::Int(i128::from(u))
    } else {
        Num::Float(n.as_f64().unwrap_or(f64::NAN))
    }
}

fn num_cmp(a: Num, b: Num) -> Option<Ordering> {
    match (a, b) {
        (Num::Int(x), Num::Int(y)) => Some(x.cmp(&y)),
        (Num::Int(x), Num::Float(y)) => (x as f64).partial_cmp(&y),
        (Num::Float(x), Num::Int(y)) => x.partial_cmp(&(y as f64)),
        (Num::Float(x), Num::Float(y)) => x.partial_cmp(&y),
    }
}

/// Python `a == b`.
pub(crate) fn py_eq(a: &Value, b: &Value) -> bool {
    if let (Some(x), Some(y)) = (num(a), num(b)) {
        return num_cmp(x, y) == Some(Ordering::Equal);
    }
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| py_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| py_eq(v, w)))
        }
        _ => false,
    }
}

/// Python ordering; `None` where Python raises `TypeError`.
pub(crate) fn py_cmp(a: &Value, b: &Value) -> Option<Ordering> {
    if let (Some(x), Some(y)) = (num(a), num(b)) {
        return num_cmp(x, y);
    }
    match (a, b) {
        (Value::String(x), Value::String(y)) => Some(x.cmp(y)),
        (Value::Array(x), Value::Array(y)) => {
            for (p, q) in x.iter().zip(y) {
                if !py_eq(p, q) {
                    return py_cmp(p, q);
                }
            }
            Some(x.len().cmp(&y.len()))
        }
        _ => None,
    }
}

/// Python truthiness.
pub(crate) fn py_truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// Python `str(v)` for a value parsed from JSON.
pub(crate) fn py_str(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => py_repr(other),
    }
}

/// Python `repr(v)` (close enough for messages and `literal_match`).
pub(crate) fn py_repr(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) => match num_of(n) {
            Num::Int(i) => i.to_string(),
            Num::Float(f) => float_repr(f),
        },
        Value::String(s) => {
            if s.contains('\'') && !s.contains('"') {
                format!("\"{s}\"")
            } else {
                format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
            }
        }
        Value::Array(a) => {
            let items: Vec<String> = a.iter().map(py_repr).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(o) => {
            let items: Vec<String> = o
                .iter()
                .map(|(k, v)| format!("{}: {}", py_repr(&Value::String(k.clone())), py_repr(v)))
                .collect();
            format!("{{{}}}", items.join(", "))
        }
    }
}

/// Python's `repr(float)`: shortest round-trip, always with a `.0` or exponent.
pub(crate) fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let s = format!("{f}");
    if s.contains('.') || s.contains('e') {
        s
    } else {
        format!("{s}.0")
    }
}

/// A rule that cannot be applied at all (a task bug): the message says what.
#[derive(Debug)]
pub(crate) struct BadRule(pub String);

/// OSWorld's `metrics/utils.py::_match_value_to_rule`: `{"method": M, "ref": R}`.
///
/// Where Python would raise `TypeError` (e.g. `re` on a non-string, `lt`
/// between a string and a number) this returns `Ok(false)`: every caller in
/// OSWorld turns that exception into a 0 score. `spreadsheet_range` is not
/// supported.
pub(crate) fn match_value_to_rule(value: &Value, rule: &Value) -> Result<bool, BadRule> {
    let method = rule
        .get("method")
        .and_then(Value::as_str)
        .ok_or_else(|| BadRule("a rule with a string `method`".into()))?;
    let reference = rule.get("ref").unwrap_or(&Value::Null);
    if let Some(flags) = method.strip_prefix("re") {
        if flags.is_empty() || flags.starts_with('.') {
            return match_regex(value, reference, flags);
        }
    }
    match method {
        "eq" => return Ok(py_eq(value, reference)),
        "ne" => return Ok(!py_eq(value, reference)),
        "lt" => return Ok(py_cmp(value, reference) == Some(Ordering::Less)),
        "le" => {
            return Ok(matches!(
                py_cmp(value, reference),
                Some(Ordering::Less | Ordering::Equal)
            ))
        }
        "gt" => return Ok(py_cmp(value, reference) == Some(Ordering::Greater)),
        "ge" => {
            return Ok(matches!(
                py_cmp(value, reference),
                Some(Ordering::Greater | Ordering::Equal)
            ))
        }
        "str_list_eq" | "str_set_eq" => {
            let Value::String(s) = value else {
                return Ok(false);
            };
            let Value::Array(refs) = reference else {
                return Err(BadRule(format!("`{method}` with a list `ref`")));
            };
            let got: Vec<&str> = s
                .trim_matches(|c| c == '"' || c == '\'')
                .split(',')
                .collect();
            let refs: Vec<String> = refs.iter().map(py_str).collect();
            if method == "str_list_eq" {
                return Ok(got.len() == refs.len() && got.iter().zip(&refs).all(|(a, b)| a == b));
            }
            let got: std::collections::BTreeSet<&str> = got.into_iter().collect();
            let refs: std::collections::BTreeSet<&str> = refs.iter().map(String::as_str).collect();
            return Ok(got == refs);
        }
        "spreadsheet_range" => {
            return Err(BadRule(
                "a method other than `spreadsheet_range` (not supported by deskenv)".into(),
            ))
        }
        _ => {}
    }
    if let Some(th) = method.strip_prefix("approx:") {
        let th: f64 = th
            .parse()
            .map_err(|_| BadRule(format!("a number after `approx:`, got {method:?}")))?;
        let Some(r) = reference.as_f64() else {
            return Err(BadRule("`approx` with a numeric `ref`".into()));
        };
        let v = match value {
            Value::Number(n) => n.as_f64(),
            Value::Bool(b) => Some(f64::from(u8::from(*b))),
            Value::String(s) => s.trim().parse::<f64>().ok(),
            _ => None,
        };
        return Ok(v.is_some_and(|v| (v - r).abs() <= th));
    }
    if let Some(ends) = method.strip_prefix("range.") {
        let b = ends.as_bytes();
        if b.len() != 2 || !b.iter().all(|c| *c == b't' || *c == b'e') {
            return Err(BadRule(format!(
                "`range.XY` with X, Y in t/e, got {method:?}"
            )));
        }
        let (Some(lo), Some(hi)) = (reference.get(0), reference.get(1)) else {
            return Err(BadRule("`range.*` with a two-element `ref`".into()));
        };
        let lower = match (b[0], py_cmp(lo, value)) {
            (_, None) => false,
            (b't', Some(o)) => o == Ordering::Less,
            (_, Some(o)) => o != Ordering::Greater,
        };
        let upper = match (b[1], py_cmp(value, hi)) {
            (_, None) => false,
            (b't', Some(o)) => o == Ordering::Less,
            (_, Some(o)) => o != Ordering::Greater,
        };
        return Ok(lower && upper);
    }
    Err(BadRule(format!(
        "a method among re[.FLAGS], eq, ne, lt, le, gt, ge, approx:T, range.XY, str_list_eq, str_set_eq; got {method:?}"
    )))
}

fn match_regex(value: &Value, pattern: &Value, flags: &str) -> Result<bool, BadRule> {
    let Some(pattern) = pattern.as_str() else {
        return Err(BadRule("`re` with a string `ref`".into()));
    };
    let mut builder = regex::RegexBuilder::new(pattern);
    for flag in flags.split('.').filter(|f| !f.is_empty()) {
        match flag {
            "I" | "IGNORECASE" => builder.case_insensitive(true),
            "M" | "MULTILINE" => builder.multi_line(true),
            "S" | "DOTALL" => builder.dot_matches_new_line(true),
            "X" | "VERBOSE" => builder.ignore_whitespace(true),
            "U" | "UNICODE" | "A" | "ASCII" => &mut builder,
            other => return Err(BadRule(format!("a Python `re` flag, got {other:?}"))),
        };
    }
    let re = builder
        .build()
        .map_err(|e| BadRule(format!("a valid regex (Rust `regex` syntax): {e}")))?;
    Ok(match value {
        Value::String(s) => re.is_match(s),
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn python_equality() {
        assert!(py_eq(&json!(1), &json!(1.0)));
        assert!(py_eq(&json!(true), &json!(1)));
        assert!(!py_eq(&json!("1"), &json!(1)));
        assert!(py_eq(&json!({"a": [1, 2.0]}), &json!({"a": [1.0, 2]})));
        assert_eq!(py_repr(&json!(["a", 1, 2.5, null])), "['a', 1, 2.5, None]");
        assert_eq!(py_str(&json!(3.0)), "3.0");
    }

    #[test]
    fn rules() {
        let m = |v: Value, r: Value| match_value_to_rule(&v, &r).unwrap();
        assert!(m(
            json!("Hello"),
            json!({"method": "re.I", "ref": "^hello"})
        ));
        assert!(!m(json!("Hello"), json!({"method": "re", "ref": "^hello"})));
        assert!(!m(json!(3), json!({"method": "re", "ref": "3"})));
        assert!(m(json!(3.0), json!({"method": "eq", "ref": 3})));
        assert!(m(json!(2), json!({"method": "lt", "ref": 3})));
        assert!(!m(json!("2"), json!({"method": "lt", "ref": 3})));
        assert!(m(json!(3.05), json!({"method": "approx:0.1", "ref": 3})));
        assert!(m(json!(2), json!({"method": "range.te", "ref": [0, 2]})));
        assert!(!m(json!(0), json!({"method": "range.te", "ref": [0, 2]})));
        assert!(m(
            json!("'a,b'"),
            json!({"method": "str_set_eq", "ref": ["b", "a"]})
        ));
        assert!(!m(
            json!("a,b"),
            json!({"method": "str_list_eq", "ref": ["b", "a"]})
        ));
        assert!(match_value_to_rule(&json!(1), &json!({"method": "nope", "ref": 1})).is_err());
    }
}
