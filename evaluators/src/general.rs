//! OSWorld `metrics/general.py` (and `check_json_settings` from `vscode.py`):
//! metrics over strings, JSON values and small text files.

use serde_json::Value;

use crate::pyval::{py_eq, py_repr, py_str, py_truthy};
use crate::text::{read_result_text, ResultText};
use crate::{opt_bool, result_file, rules_json, Artifact, EvalError, Options, Scored};

/// The result as the Python value a getter would have returned.
fn result_value(metric: &str, result: &Artifact) -> Result<Value, EvalError> {
    match result {
        Artifact::Text(s) => Ok(Value::String(s.clone())),
        Artifact::Json(v) => Ok(v.clone()),
        other => Err(EvalError::wrong_artifact(metric, "text or json", other)),
    }
}

/// `rules[key]`, which the task must provide.
fn rules_key<'a>(metric: &str, rules: &'a Value, key: &str) -> Result<&'a Value, EvalError> {
    rules
        .get(key)
        .ok_or_else(|| EvalError::bad_option(metric, &format!("rules.{key}"), "to be present"))
}

fn short(v: &Value) -> String {
    let s = py_repr(v);
    if s.chars().count() > 120 {
        let cut: String = s.chars().take(117).collect();
        format!("{cut}...")
    } else {
        s
    }
}

/// `exact_match(result, rules)`: `result == rules["expected"]` (Python `==`,
/// so a command's stdout must match including its trailing newline).
pub(crate) fn exact_match(result: &Artifact, expected: &Artifact) -> Result<Scored, EvalError> {
    const M: &str = "exact_match";
    let got = result_value(M, result)?;
    let want = rules_key(M, rules_json(M, expected)?, "expected")?;
    Ok(Scored::from_bool(
        py_eq(&got, want),
        format!(
            "{} {} {}",
            short(&got),
            if py_eq(&got, want) { "==" } else { "!=" },
            short(want)
        ),
    ))
}

/// `match_in_list(result, rules)`: `result in rules["expected"]`.
pub(crate) fn match_in_list(result: &Artifact, expected: &Artifact) -> Result<Scored, EvalError> {
    const M: &str = "match_in_list";
    let got = result_value(M, result)?;
    let list = rules_key(M, rules_json(M, expected)?, "expected")?;
    let ok = py_contains(list, &got)
        .ok_or_else(|| EvalError::bad_option(M, "rules.expected", "a list or a string"))?;
    Ok(Scored::from_bool(
        ok,
        format!("{} in {}: {ok}", short(&got), short(list)),
    ))
}

/// `is_in_list(result, rules)`: `rules["expected"] in result`.
pub(crate) fn is_in_list(result: &Artifact, expected: &Artifact) -> Result<Scored, EvalError> {
    const M: &str = "is_in_list";
    let got = result_value(M, result)?;
    let want = rules_key(M, rules_json(M, expected)?, "expected")?;
    let ok = py_contains(&got, want).unwrap_or(false);
    Ok(Scored::from_bool(
        ok,
        format!("{} in {}: {ok}", short(want), short(&got)),
    ))
}

/// Python `needle in haystack` for a list, dict or string haystack; `None`
/// where Python raises `TypeError`.
fn py_contains(haystack: &Value, needle: &Value) -> Option<bool> {
    match haystack {
        Value::Array(items) => Some(items.iter().any(|x| py_eq(x, needle))),
        Value::Object(map) => Some(needle.as_str().is_some_and(|k| map.contains_key(k))),
        Value::String(s) => needle.as_str().map(|n| s.contains(n)),
        _ => None,
    }
}

/// `literal_match(result, expected, type="str"|"list", ignore_case=False)`:
/// `str(result) == str(expected)`, or element-wise `str` equality of two
/// lists of the same length.
pub(crate) fn literal_match(
    result: &Artifact,
    expected: &Artifact,
    options: &Options,
) -> Result<Scored, EvalError> {
    const M: &str = "literal_match";
    let got = result_value(M, result)?;
    let want = result_value(M, expected)?;
    let ignore_case = opt_bool(M, options, "ignore_case", false)?;
    let norm = |v: &Value| {
        let s = py_str(v);
        if ignore_case {
            s.to_lowercase()
        } else {
            s
        }
    };
    match options.get("type").map(|t| t.as_str()) {
        None | Some(Some("str")) => {
            let (a, b) = (norm(&got), norm(&want));
            Ok(Scored::from_bool(a == b, format!("{a:?} vs {b:?}")))
        }
        Some(Some("list")) => {
            let (Value::Array(a), Value::Array(b)) = (&got, &want) else {
                return Ok(Scored::fail("result or expected is not a list"));
            };
            if a.len() != b.len() {
                return Ok(Scored::fail(format!(
                    "lengths differ: {} != {}",
                    a.len(),
                    b.len()
                )));
            }
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                if norm(x) != norm(y) {
                    return Ok(Scored::fail(format!(
                        "item {i}: {} != {}",
                        short(x),
                        short(y)
                    )));
                }
            }
            Ok(Scored::pass("lists equal"))
        }
        _ => Err(EvalError::bad_option(M, "type", "\"str\" or \"list\"")),
    }
}

/// `check_include_exclude(result, rules)`: every `rules.include` substring is
/// in the result and no `rules.exclude` one is. A JSON list result uses list
/// membership, as Python's `in` does.
pub(crate) fn check_include_exclude(
    result: &Artifact,
    expected: &Artifact,
) -> Result<Scored, EvalError> {
    const M: &str = "check_include_exclude";
    let got = result_value(M, result)?;
    if got.is_null() {
        return Ok(Scored::fail("result is null"));
    }
    let rules = rules_json(M, expected)?;
    let list = |key: &str| -> Result<Vec<Value>, EvalError> {
        match rules.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(a)) => Ok(a.clone()),
            Some(_) => Err(EvalError::bad_option(
                M,
                &format!("rules.{key}"),
                "a list of strings",
            )),
        }
    };
    let (include, exclude) = (list("include")?, list("exclude")?);
    let contains = |needle: &Value| {
        py_contains(&got, needle)
            .ok_or_else(|| EvalError::wrong_artifact(M, "text or json string/list", result))
    };
    for inc in &include {
        if !contains(inc)? {
            return Ok(Scored::fail(format!("missing {}", short(inc))));
        }
    }
    for exc in &exclude {
        if contains(exc)? {
            return Ok(Scored::fail(format!("contains excluded {}", short(exc))));
        }
    }
    Ok(Scored::pass(format!(
        "all {} included, none of {} excluded present",
        include.len(),
        exclude.len()
    )))
}

/// `check_direct_json_object(result, rules)`.
///
/// A text result is stripped, every `'` becomes `"`, and it is parsed as JSON
/// (OSWorld raises on a parse error; here it scores 0). Any value
/// `"__EVALUATION_FAILED__"` in `rules.expected` scores 0.
///
/// Without `rules.expect_in_result`: every key of `rules.expected` must be in
/// the result with a Python-equal value. OSWorld reads `ignore_list_order`
/// from *inside* `rules.expected` (where it then sorts every key, including the
/// flag itself, and always fails); tasks put it next to `expected`, where
/// OSWorld ignores it. Both are reproduced: lists compare in order.
///
/// With `expect_in_result`: a list expected value passes if one of its items
/// is in the result list (or equals the result string); a string expected
/// value must be a substring of (or an item of) the result value; other types
/// score 0.
///
/// `rule_relativeTime` rendering is the getter's job, not the metric's.
pub(crate) fn check_direct_json_object(
    result: &Artifact,
    expected: &Artifact,
) -> Result<Scored, EvalError> {
    const M: &str = "check_direct_json_object";
    let got = match result {
        Artifact::Text(s) => match serde_json::from_str::<Value>(&s.trim().replace('\'', "\"")) {
            Ok(v) => v,
            Err(e) => return Ok(Scored::fail(format!("result is not JSON: {e}"))),
        },
        Artifact::Json(v) => v.clone(),
        other => return Err(EvalError::wrong_artifact(M, "text or json", other)),
    };
    if got.is_null() {
        return Ok(Scored::fail("result is null"));
    }
    let rules = rules_json(M, expected)?;
    let want = match rules_key(M, rules, "expected")? {
        Value::Object(o) => o,
        _ => return Err(EvalError::bad_option(M, "rules.expected", "an object")),
    };
    if let Some((k, _)) = want
        .iter()
        .find(|(_, v)| v.as_str() == Some("__EVALUATION_FAILED__"))
    {
        return Ok(Scored::fail(format!(
            "expected value for {k:?} is __EVALUATION_FAILED__"
        )));
    }
    let Value::Object(got) = got else {
        return Ok(Scored::fail(format!(
            "result is not an object: {}",
            short(&got)
        )));
    };
    let null = Value::Null;
    let expect_in_result = rules.get("expect_in_result").is_some_and(py_truthy);
    if !expect_in_result {
        if want.get("ignore_list_order").is_some_and(py_truthy) {
            return Ok(Scored::fail(
                "`ignore_list_order` inside `expected`: OSWorld sorts every key including the flag and fails",
            ));
        }
        for (k, w) in want {
            let g = got.get(k).unwrap_or(&null);
            if !py_eq(g, w) {
                return Ok(Scored::fail(format!(
                    "key {k:?}: {} != {}",
                    short(g),
                    short(w)
                )));
            }
        }
        return Ok(Scored::pass(format!(
            "all {} expected keys equal",
            want.len()
        )));
    }
    for (k, w) in want {
        let g = got.get(k).unwrap_or(&null);
        let ok = match w {
            Value::Array(options) => options.iter().any(|e| match g {
                Value::Array(items) => items.iter().any(|x| py_eq(x, e)),
                Value::String(_) => py_eq(e, g),
                _ => false,
            }),
            Value::String(_) => py_contains(g, w).unwrap_or(false),
            _ => {
                return Ok(Scored::fail(format!(
                    "key {k:?}: expected value type not supported by expect_in_result"
                )))
            }
        };
        if !ok {
            return Ok(Scored::fail(format!(
                "key {k:?}: {} not in {}",
                short(w),
                short(g)
            )));
        }
    }
    Ok(Scored::pass(format!(
        "all {} expected keys found in result",
        want.len()
    )))
}

/// `check_list(result_file, rules)`: every `rules.expect` regex matches some
/// line and no `rules.unexpect` regex matches any line. Lines are matched
/// without their line terminator (so `$` behaves as in Python); patterns use
/// Rust `regex` syntax (no look-around or back-references).
pub(crate) fn check_list(result: &Artifact, expected: &Artifact) -> Result<Scored, EvalError> {
    const M: &str = "check_list";
    let path = result_file(M, result)?;
    let rules = rules_json(M, expected)?;
    let patterns = |key: &str| -> Result<Vec<regex::Regex>, EvalError> {
        let Some(v) = rules.get(key) else {
            return Ok(Vec::new());
        };
        let Value::Array(items) = v else {
            return Err(EvalError::bad_option(
                M,
                &format!("rules.{key}"),
                "a list of regexes",
            ));
        };
        items
            .iter()
            .map(|p| {
                p.as_str()
                    .and_then(|p| regex::Regex::new(p).ok())
                    .ok_or_else(|| {
                        EvalError::bad_option(
                            M,
                            &format!("rules.{key}"),
                            format!("valid regexes, got {}", short(p)),
                        )
                    })
            })
            .collect()
    };
    let (expect, unexpect) = (patterns("expect")?, patterns("unexpect")?);
    let text = match read_result_text(path) {
        ResultText::Ok(t) => t,
        ResultText::Fail(s) => return Ok(s),
    };
    let lines: Vec<&str> = crate::text::py_splitlines(&text);
    for re in &expect {
        if !lines.iter().any(|l| re.is_match(l)) {
            return Ok(Scored::fail(format!("no line matches {:?}", re.as_str())));
        }
    }
    for re in &unexpect {
        if let Some(l) = lines.iter().find(|l| re.is_match(l)) {
            return Ok(Scored::fail(format!(
                "line {l:?} matches unexpected {:?}",
                re.as_str()
            )));
        }
    }
    Ok(Scored::pass(format!(
        "{} expected patterns found, {} unexpected absent",
        expect.len(),
        unexpect.len()
    )))
}

/// `check_csv(result_file, rules)`: with the CSV read as header-keyed records,
/// every `rules.expect` pattern (a `{column: value}` object) matches some
/// record and no `rules.unexpect` pattern matches any. Values are strings, so
/// a number in a pattern never matches (as in OSWorld).
pub(crate) fn check_csv(result: &Artifact, expected: &Artifact) -> Result<Scored, EvalError> {
    const M: &str = "check_csv";
    let path = result_file(M, result)?;
    let rules = rules_json(M, expected)?;
    let patterns = |key: &str| -> Result<Vec<serde_json::Map<String, Value>>, EvalError> {
        match rules.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|p| {
                    p.as_object().cloned().ok_or_else(|| {
                        EvalError::bad_option(M, &format!("rules.{key}"), "a list of objects")
                    })
                })
                .collect(),
            Some(_) => Err(EvalError::bad_option(
                M,
                &format!("rules.{key}"),
                "a list of objects",
            )),
        }
    };
    let (expect, unexpect) = (patterns("expect")?, patterns("unexpect")?);
    let text = match read_result_text(path) {
        ResultText::Ok(t) => t,
        ResultText::Fail(s) => return Ok(s),
    };
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(text.as_bytes());
    let header: Vec<String> = match reader.headers() {
        Ok(h) => h.iter().map(str::to_string).collect(),
        Err(e) => return Ok(Scored::fail(format!("result is not CSV: {e}"))),
    };
    let mut found = vec![false; expect.len()];
    for (n, rec) in reader.records().enumerate() {
        let rec = match rec {
            Ok(r) => r,
            Err(e) => return Ok(Scored::fail(format!("result is not CSV: {e}"))),
        };
        let row: serde_json::Map<String, Value> = header
            .iter()
            .enumerate()
            .map(|(i, h)| {
                let v = rec
                    .get(i)
                    .map_or(Value::Null, |s| Value::String(s.to_string()));
                (h.clone(), v)
            })
            .collect();
        let matches = |p: &serde_json::Map<String, Value>| {
            p.iter()
                .all(|(k, v)| row.get(k).is_some_and(|x| py_eq(x, v)))
        };
        for (i, p) in expect.iter().enumerate() {
            found[i] = found[i] || matches(p);
        }
        if let Some(p) = unexpect.iter().find(|p| matches(p)) {
            return Ok(Scored::fail(format!(
                "record {} matches unexpected {}",
                n + 1,
                short(&Value::Object(p.clone()))
            )));
        }
    }
    if let Some(i) = found.iter().position(|f| !f) {
        return Ok(Scored::fail(format!(
            "no record matches {}",
            short(&Value::Object(expect[i].clone()))
        )));
    }
    Ok(Scored::pass(format!(
        "{} expected records found",
        expect.len()
    )))
}

/// `check_json_settings(settings_file, rules)`: the file parses as (strict)
/// JSON and every key of `rules.expected` is in it with a Python-equal value.
/// A settings file with comments does not parse and scores 0, as upstream.
pub(crate) fn check_json_settings(
    result: &Artifact,
    expected: &Artifact,
) -> Result<Scored, EvalError> {
    const M: &str = "check_json_settings";
    let path = result_file(M, result)?;
    let want = match rules_key(M, rules_json(M, expected)?, "expected")? {
        Value::Object(o) => o,
        _ => return Err(EvalError::bad_option(M, "rules.expected", "an object")),
    };
    let text = match read_result_text(path) {
        ResultText::Ok(t) => t,
        ResultText::Fail(s) => return Ok(s),
    };
    let data = match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(o)) => o,
        Ok(_) => return Ok(Scored::fail("settings file is not a JSON object")),
        Err(e) => return Ok(Scored::fail(format!("settings file is not JSON: {e}"))),
    };
    for (k, w) in want {
        match data.get(k) {
            None => return Ok(Scored::fail(format!("key {k:?} missing"))),
            Some(g) if !py_eq(g, w) => {
                return Ok(Scored::fail(format!(
                    "key {k:?}: {} != {}",
                    short(g),
                    short(w)
                )))
            }
            Some(_) => {}
        }
    }
    Ok(Scored::pass(format!(
        "all {} expected settings present",
        want.len()
    )))
}

/// `infeasible`: OSWorld scores 1 iff the agent's last action was `FAIL`
/// (the string, or a dict with `action_type: "FAIL"`). The result is the last
/// action as text, or JSON: `"FAIL"`, `{"action_type": "FAIL"}`, or
/// `{"last_action": <either>}` (`null` when there was no action).
pub(crate) fn infeasible(result: &Artifact) -> Result<Scored, EvalError> {
    const M: &str = "infeasible";
    fn is_fail(v: &Value) -> bool {
        match v {
            Value::String(s) => s.trim() == "FAIL",
            Value::Object(o) => match o.get("last_action") {
                Some(inner) => is_fail(inner),
                None => o.get("action_type").and_then(Value::as_str) == Some("FAIL"),
            },
            _ => false,
        }
    }
    let v = result_value(M, result)?;
    Ok(Scored::from_bool(
        is_fail(&v),
        format!("last action: {}", short(&v)),
    ))
}
