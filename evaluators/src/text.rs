//! Text-file metrics (`compare_text_file` from OSWorld's `vscode.py`,
//! `compare_csv` from `table.py`) and the file-reading helpers that mirror
//! Python's text mode.

use std::path::{Path, PathBuf};

use crate::{opt_bool, result_file, Artifact, EvalError, Options, Scored};

/// Python's `str.splitlines()`: splits on `\n`, `\r\n`, `\r`, `\v`, `\f`,
/// `\x1c`–`\x1e`, `\x85`, U+2028, U+2029; no trailing empty line.
pub(crate) fn py_splitlines(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut it = s.char_indices().peekable();
    while let Some((i, c)) = it.next() {
        let brk = matches!(
            c,
            '\n' | '\r'
                | '\x0b'
                | '\x0c'
                | '\x1c'
                | '\x1d'
                | '\x1e'
                | '\u{85}'
                | '\u{2028}'
                | '\u{2029}'
        );
        if brk {
            out.push(&s[start..i]);
            let mut end = i + c.len_utf8();
            if c == '\r' {
                if let Some((j, '\n')) = it.peek().copied() {
                    it.next();
                    end = j + 1;
                }
            }
            start = end;
        }
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

/// Python text mode's universal newlines: `\r\n` and `\r` read as `\n`.
fn universal_newlines(s: String) -> String {
    if s.contains('\r') {
        s.replace("\r\n", "\n").replace('\r', "\n")
    } else {
        s
    }
}

/// A result file's text, or the 0 score explaining why there is none.
pub(crate) enum ResultText {
    Ok(String),
    Fail(Scored),
}

/// Read a result file as Python's `open(path).read()` would (UTF-8, universal
/// newlines). Absent, unreadable or non-UTF-8 files score 0.
pub(crate) fn read_result_text(path: &Path) -> ResultText {
    match std::fs::read(path) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(s) => ResultText::Ok(universal_newlines(s)),
            Err(_) => ResultText::Fail(Scored::fail(format!(
                "result file {} is not UTF-8",
                path.display()
            ))),
        },
        Err(e) => ResultText::Fail(missing_result(path, &e)),
    }
}

pub(crate) fn missing_result(path: &Path, e: &std::io::Error) -> Scored {
    if e.kind() == std::io::ErrorKind::NotFound {
        Scored::fail(format!("result file {} not found", path.display()))
    } else {
        Scored::fail(format!("result file {} unreadable: {e}", path.display()))
    }
}

/// Read an expected file as Python's `open(path).read()`; failures are errors.
fn read_expected_text(path: &Path) -> Result<String, EvalError> {
    let bytes = std::fs::read(path).map_err(|e| EvalError::unreadable(path, e))?;
    String::from_utf8(bytes)
        .map(universal_newlines)
        .map_err(|_| EvalError::unreadable(path, "not UTF-8"))
}

/// OSWorld's `table.py::_safe_read_file`: lines of a file decoded as
/// UTF-8 (BOM stripped), else Latin-1 (which always succeeds).
pub(crate) fn safe_read_lines(path: &Path) -> std::io::Result<Vec<String>> {
    let bytes = std::fs::read(path)?;
    let text = match std::str::from_utf8(&bytes) {
        Ok(s) => s.strip_prefix('\u{feff}').unwrap_or(s).to_string(),
        Err(_) => bytes.iter().map(|&b| char::from(b)).collect(),
    };
    let text = universal_newlines(text);
    Ok(py_splitlines(&text)
        .into_iter()
        .map(str::to_string)
        .collect())
}

/// `compare_text_file(result_file, expected_file, ignore_blanks=False,
/// ignore_case=False)`: whole-text equality (newlines normalized as Python's
/// text mode does). `ignore_blanks` turns tabs and newlines into spaces,
/// strips, and collapses whitespace runs to one space; `ignore_case`
/// lowercases both.
pub(crate) fn compare_text_file(
    result: &Artifact,
    expected: &Artifact,
    options: &Options,
) -> Result<Scored, EvalError> {
    const M: &str = "compare_text_file";
    let ignore_blanks = opt_bool(M, options, "ignore_blanks", false)?;
    let ignore_case = opt_bool(M, options, "ignore_case", false)?;
    let path = result_file(M, result)?;
    let want_path = match expected {
        Artifact::File(p) => p,
        Artifact::Files(ps) if ps.len() == 1 => &ps[0],
        other => return Err(EvalError::wrong_artifact(M, "file", other)),
    };
    let mut want = read_expected_text(want_path)?;
    let mut got = match read_result_text(path) {
        ResultText::Ok(t) => t,
        ResultText::Fail(s) => return Ok(s),
    };
    if ignore_blanks {
        let ws = regex::Regex::new(r"\s+").expect("static regex");
        let squash = |s: &str| {
            let s = s.replace(['\t', '\n'], " ");
            ws.replace_all(s.trim(), " ").into_owned()
        };
        got = squash(&got);
        want = squash(&want);
    }
    if ignore_case {
        got = got.to_lowercase();
        want = want.to_lowercase();
    }
    if got == want {
        return Ok(Scored::pass("texts equal"));
    }
    Ok(Scored::fail(first_difference(&got, &want)))
}

/// A short description of where two texts first differ.
fn first_difference(got: &str, want: &str) -> String {
    let (g, w) = (py_splitlines(got), py_splitlines(want));
    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
        if a != b {
            return format!("line {}: {:?} != {:?}", i + 1, clip(a), clip(b));
        }
    }
    if g.len() != w.len() {
        return format!("{} lines != {} lines", g.len(), w.len());
    }
    "texts differ (line terminators or trailing newline)".to_string()
}

fn clip(s: &str) -> String {
    if s.chars().count() > 60 {
        let c: String = s.chars().take(57).collect();
        format!("{c}...")
    } else {
        s.to_string()
    }
}

/// `compare_csv(result_file, expected_file(s), strict=True,
/// ignore_case=False)`: the result's lines equal those of the expected file,
/// or of any of the expected files (`multi`). Files are decoded as
/// `_safe_read_file` does; `strict: false` strips each line; `ignore_case`
/// lowercases. Lines are compared as text, not parsed as CSV. Unreadable
/// expected candidates are skipped; if none is readable that is an error.
pub(crate) fn compare_csv(
    result: &Artifact,
    expected: &Artifact,
    options: &Options,
) -> Result<Scored, EvalError> {
    const M: &str = "compare_csv";
    let strict = opt_bool(M, options, "strict", true)?;
    let ignore_case = opt_bool(M, options, "ignore_case", false)?;
    let path = result_file(M, result)?;
    let candidates: Vec<PathBuf> = match expected {
        Artifact::File(p) => vec![p.clone()],
        Artifact::Files(ps) if !ps.is_empty() => ps.clone(),
        other => return Err(EvalError::wrong_artifact(M, "file or files", other)),
    };
    let norm = |lines: Vec<String>| -> Vec<String> {
        lines
            .into_iter()
            .map(|l| {
                let l = if strict { l } else { l.trim().to_string() };
                if ignore_case {
                    l.to_lowercase()
                } else {
                    l
                }
            })
            .collect()
    };
    let got = match safe_read_lines(path) {
        Ok(l) => norm(l),
        Err(e) => return Ok(missing_result(path, &e)),
    };
    let mut reasons = Vec::new();
    let mut last_err = None;
    for (n, cand) in candidates.iter().enumerate() {
        let want = match safe_read_lines(cand) {
            Ok(l) => norm(l),
            Err(e) => {
                last_err = Some(EvalError::unreadable(cand, e));
                continue;
            }
        };
        if got == want {
            return Ok(Scored::pass(if candidates.len() > 1 {
                format!("matches expected file {}", n + 1)
            } else {
                "lines equal".to_string()
            }));
        }
        reasons.push(line_difference(&got, &want));
    }
    if reasons.is_empty() {
        if let Some(e) = last_err {
            return Err(e);
        }
    }
    Ok(Scored::fail(reasons.join("; ")))
}

fn line_difference(got: &[String], want: &[String]) -> String {
    for (i, (a, b)) in got.iter().zip(want).enumerate() {
        if a != b {
            return format!("line {}: {:?} != {:?}", i + 1, clip(a), clip(b));
        }
    }
    format!("{} lines != {} lines", got.len(), want.len())
}

#[cfg(test)]
mod tests {
    use super::py_splitlines;

    #[test]
    fn splitlines_like_python() {
        assert_eq!(py_splitlines("a\nb\r\nc\rd\n"), vec!["a", "b", "c", "d"]);
        assert_eq!(py_splitlines("a\n\nb"), vec!["a", "", "b"]);
        assert!(py_splitlines("").is_empty());
        assert_eq!(py_splitlines("x\u{2028}y"), vec!["x", "y"]);
    }
}
