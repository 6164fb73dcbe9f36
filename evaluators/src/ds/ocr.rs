//! `ds_image_text`: the text a PNG shows, read with OCR (Tesseract, the
//! `tesseract` command from Debian's `tesseract-ocr`), must contain each
//! expected string. For a chart: its title, axis label and tick labels
//! (horizontal text; rotated labels are not read).
//!
//! Expected: JSON `{"contains": [...]}` or a list of strings. Options:
//! `similarity` (0.8): the least share of an expected string's characters
//! that must match, as 1 − edit distance / length against the best
//! matching stretch of the OCR text (OCR misreads a letter now and then).
//! Text is compared in lower case, with every run of characters other than
//! letters and digits as one space.

use super::opt_num;
use crate::text::missing_result;
use crate::{result_file, Artifact, EvalError, Options, Scored};
use serde_json::Value;
use std::process::Command;

const M: &str = "ds_image_text";

pub(crate) fn ds_image_text(
    result: &Artifact,
    expected: &Artifact,
    options: &Options,
) -> Result<Scored, EvalError> {
    let similarity = opt_num(M, options, "similarity", 0.8)?;
    if similarity > 1.0 {
        return Err(EvalError::bad_option(
            M,
            "similarity",
            "a share between 0 and 1",
        ));
    }
    let wanted = wanted(expected)?;
    let path = result_file(M, result)?;
    if let Err(e) = std::fs::metadata(path) {
        return Ok(missing_result(path, &e));
    }
    let out = Command::new("tesseract")
        .arg(path)
        .arg("stdout")
        .args(["--psm", "11"])
        .output()
        .map_err(|e| {
            EvalError::unsupported(
                M,
                format!("cannot run tesseract ({e}): install Debian's tesseract-ocr"),
            )
        })?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Ok(Scored::fail(format!(
            "OCR could not read the image: {}",
            err.trim().chars().take(200).collect::<String>()
        )));
    }
    let text = normalize(&String::from_utf8_lossy(&out.stdout));
    score(&text, &wanted, similarity)
}

/// The expected strings.
fn wanted(expected: &Artifact) -> Result<Vec<String>, EvalError> {
    let list = match expected {
        Artifact::Json(Value::Object(m)) => m.get("contains").cloned(),
        Artifact::Json(v @ Value::Array(_)) => Some(v.clone()),
        other => return Err(EvalError::wrong_artifact(M, "json", other)),
    };
    let Some(Value::Array(items)) = list else {
        return Err(EvalError::bad_option(
            M,
            "expected.contains",
            "a list of strings",
        ));
    };
    items
        .iter()
        .map(|v| {
            v.as_str()
                .map(str::to_string)
                .ok_or_else(|| EvalError::bad_option(M, "expected.contains", "a list of strings"))
        })
        .collect()
}

/// Lower case, every run of non-alphanumerics one space, trimmed.
fn normalize(s: &str) -> String {
    let mut out = String::new();
    let mut space = false;
    for c in s.chars() {
        if c.is_alphanumeric() {
            if space && !out.is_empty() {
                out.push(' ');
            }
            space = false;
            out.extend(c.to_lowercase());
        } else {
            space = true;
        }
    }
    out
}

fn score(text: &str, wanted: &[String], similarity: f64) -> Result<Scored, EvalError> {
    let mut found = Vec::new();
    for w in wanted {
        let w_norm = normalize(w);
        if w_norm.is_empty() {
            continue;
        }
        let d = best_distance(&w_norm, text);
        let sim = 1.0 - d as f64 / w_norm.chars().count() as f64;
        if sim < similarity {
            let shown: String = text.chars().take(120).collect();
            return Ok(Scored::fail(format!(
                "{w:?} is not in the image's text (best match {:.0} %, need {:.0} %); OCR read: {shown:?}",
                sim * 100.0,
                similarity * 100.0
            )));
        }
        found.push(format!("{w:?} ({:.0} %)", sim * 100.0));
    }
    Ok(Scored::pass(format!("found {}", found.join(", "))))
}

/// The least edit distance between `pattern` and any stretch of `text`
/// (Sellers' algorithm).
fn best_distance(pattern: &str, text: &str) -> usize {
    let p: Vec<char> = pattern.chars().collect();
    let mut prev: Vec<usize> = (0..=p.len()).collect();
    let mut best = prev[p.len()];
    for tc in text.chars() {
        let mut cur = vec![0; p.len() + 1];
        for (i, pc) in p.iter().enumerate() {
            let cost = usize::from(*pc != tc);
            cur[i + 1] = (prev[i] + cost).min(prev[i + 1] + 1).min(cur[i] + 1);
        }
        best = best.min(cur[p.len()]);
        prev = cur;
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn approximate_matches_allow_a_misread_letter_but_not_a_missing_title() {
        let text = normalize("Tota1 amount by region\n\nCentral East\nNorth");
        assert_eq!(text, "tota1 amount by region central east north");
        let want = vec!["Total amount by region".to_string(), "East".to_string()];
        let s = score(&text, &want, 0.8).unwrap();
        assert_eq!(s.score, 1.0, "{}", s.detail);
        let s = score(&text, &["Revenue per month".to_string()], 0.8).unwrap();
        assert_eq!(s.score, 0.0);
        assert!(
            s.detail
                .contains("\"Revenue per month\" is not in the image's text"),
            "{}",
            s.detail
        );
        assert_eq!(best_distance("abc", "xxabcxx"), 0);
        assert_eq!(best_distance("abc", "xxabxx"), 1);
    }

    #[test]
    fn expected_strings_come_as_a_list_or_contains() {
        assert_eq!(
            wanted(&Artifact::Json(json!(["a", "b"]))).unwrap(),
            vec!["a", "b"]
        );
        assert_eq!(
            wanted(&Artifact::Json(json!({"contains": ["a"]}))).unwrap(),
            vec!["a"]
        );
        let e = wanted(&Artifact::Json(json!({"contains": [1]}))).unwrap_err();
        assert!(e.to_string().contains("expected.contains"), "{e}");
    }

    /// A real matplotlib PNG read by the real tesseract (skipped where either is missing).
    #[test]
    fn a_matplotlib_title_is_read_from_the_png() {
        let dir = tempfile::tempdir().unwrap();
        let png = dir.path().join("c.png");
        let made = Command::new("/usr/bin/python3")
            .args(["-c", &format!(
                "import matplotlib; matplotlib.use('Agg'); import matplotlib.pyplot as plt; plt.bar(['North','South'],[3,5]); plt.title('Total amount by region'); plt.savefig({:?})",
                png.display().to_string()
            )])
            .status()
            .is_ok_and(|s| s.success());
        if !made || Command::new("tesseract").arg("--version").output().is_err() {
            // scripts/test.sh installs both: there, a skip would hide a gap.
            assert!(
                std::env::var_os("CI").is_none(),
                "needs /usr/bin/python3 with matplotlib and tesseract (scripts/install-deps.sh)"
            );
            eprintln!("skipped: needs /usr/bin/python3 with matplotlib and tesseract");
            return;
        }
        let r = Artifact::File(png);
        let ok = ds_image_text(
            &r,
            &Artifact::Json(json!(["Total amount by region", "North"])),
            &Options::new(),
        )
        .unwrap();
        assert_eq!(ok.score, 1.0, "{}", ok.detail);
        let bad = ds_image_text(
            &r,
            &Artifact::Json(json!(["Mean price per week"])),
            &Options::new(),
        )
        .unwrap();
        assert_eq!(bad.score, 0.0, "{}", bad.detail);
    }
}
