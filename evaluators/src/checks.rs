//! Named, weighted sub-checks: a task whose `conj` is `"weighted"` scores
//! the weighted mean of its metrics, and a failed critical metric caps the
//! score below success.

use crate::{EvalError, Options};

/// A metric's `check`, `weight` and `critical` options.
#[derive(Debug, Clone, PartialEq)]
pub struct SubCheck {
    /// The name shown in result.json.
    pub name: Option<String>,
    /// Its weight in the mean (default 1).
    pub weight: f64,
    /// Whether the task can succeed without it (default: it cannot).
    pub critical: bool,
}

impl Default for SubCheck {
    fn default() -> Self {
        SubCheck {
            name: None,
            weight: 1.0,
            critical: true,
        }
    }
}

/// The score a task gets when a critical sub-check fails.
pub const CRITICAL_CAP: f64 = 0.5;

impl SubCheck {
    /// Reads the options; a malformed one is an error naming it.
    pub fn from_options(o: &Options) -> Result<SubCheck, EvalError> {
        let mut c = SubCheck::default();
        let bad = |name: &str, expected: &str| EvalError::bad_option("(sub-check)", name, expected);
        match o.get("check") {
            None | Some(serde_json::Value::Null) => {}
            Some(serde_json::Value::String(s)) => c.name = Some(s.clone()),
            Some(_) => return Err(bad("check", "a string")),
        }
        match o.get("weight") {
            None | Some(serde_json::Value::Null) => {}
            Some(v) => match v.as_f64() {
                Some(w) if w.is_finite() && w >= 0.0 => c.weight = w,
                _ => return Err(bad("weight", "a number ≥ 0")),
            },
        }
        match o.get("critical") {
            None | Some(serde_json::Value::Null) => {}
            Some(serde_json::Value::Bool(b)) => c.critical = *b,
            Some(_) => return Err(bad("critical", "a boolean")),
        }
        Ok(c)
    }
}

/// The weighted mean of `scores` (weights from `checks`, zipped), capped at
/// [`CRITICAL_CAP`] when a critical check scored below `threshold`. No
/// scores, or weights that sum to 0, score 0.
pub fn combine_weighted(scores: &[f64], checks: &[SubCheck], threshold: f64) -> f64 {
    let (mut sum, mut total) = (0.0, 0.0);
    let mut critical_failed = false;
    for (i, s) in scores.iter().enumerate() {
        let c = checks.get(i).cloned().unwrap_or_default();
        sum += c.weight * s;
        total += c.weight;
        critical_failed |= c.critical && *s < threshold;
    }
    if total <= 0.0 {
        return 0.0;
    }
    let mean = sum / total;
    if critical_failed {
        mean.min(CRITICAL_CAP)
    } else {
        mean
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn opts(v: serde_json::Value) -> Options {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn sub_checks_read_their_options_and_name_a_bad_one() {
        let c = SubCheck::from_options(&opts(
            json!({"check": "mean", "weight": 2, "critical": false}),
        ))
        .unwrap();
        assert_eq!(c.name.as_deref(), Some("mean"));
        assert_eq!(c.weight, 2.0);
        assert!(!c.critical);
        assert_eq!(
            SubCheck::from_options(&Options::new()).unwrap(),
            SubCheck::default()
        );
        let e = SubCheck::from_options(&opts(json!({"weight": -1}))).unwrap_err();
        assert!(
            e.to_string().contains("`weight`: expected a number ≥ 0"),
            "{e}"
        );
        let e = SubCheck::from_options(&opts(json!({"critical": "yes"}))).unwrap_err();
        assert!(e.to_string().contains("`critical`"), "{e}");
    }

    #[test]
    fn a_failed_critical_check_caps_the_weighted_mean() {
        let soft = SubCheck {
            critical: false,
            ..SubCheck::default()
        };
        let heavy = SubCheck {
            weight: 3.0,
            ..SubCheck::default()
        };
        assert_eq!(
            combine_weighted(&[1.0, 0.0], &[heavy.clone(), soft.clone()], 0.95),
            0.75
        );
        assert_eq!(combine_weighted(&[0.0, 1.0], &[heavy, soft], 0.95), 0.25);
        let all = [
            SubCheck::default(),
            SubCheck::default(),
            SubCheck::default(),
        ];
        assert_eq!(combine_weighted(&[1.0, 1.0, 0.0], &all, 0.95), CRITICAL_CAP);
        assert_eq!(combine_weighted(&[1.0, 1.0, 1.0], &all, 0.95), 1.0);
        assert_eq!(combine_weighted(&[], &[], 0.95), 0.0);
    }
}
