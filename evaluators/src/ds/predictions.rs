//! `ds_predictions`: a predictions table scored against held-out labels.
//!
//! The result is a CSV (or workbook) with an id column and a prediction
//! column; the expected artifact is JSON
//! `{"id": "id", "label": "label", "ids": [...], "labels": [...],
//! "metric": "accuracy", "threshold": 0.8}` (`id` defaults to `"id"`,
//! `metric` to `accuracy`; `threshold` is required). Ids and class labels
//! compare as trimmed strings, numbers canonically (`"3"` == `3.0`).
//!
//! Options: `id` (the result's id column; default the expected `id`) and
//! `prediction` (default `prediction`; when the result has no such column,
//! a column named like the expected `label`, else, in a two-column result,
//! the column that is not the id). Column names match as in `ds_table`
//! (case, spaces, `-`, `_`).
//!
//! Metrics: `accuracy`, `f1` (binary, positive label `1`), `f1_macro` (over
//! the labels of truth and predictions, as scikit-learn), `recall` (of the
//! positive label `1`), `balanced_accuracy` (the mean recall of the true
//! classes), `auc` (the
//! prediction is a score; ROC AUC by the rank statistic, ties averaged;
//! labels must be 0/1), `rmse`, `mae`, `r2` (1 for a perfect fit of a
//! constant truth, else 0 there, as scikit-learn). `rmse`/`mae` pass at or
//! below the threshold, the others at or above. Missing or duplicate ids and
//! non-numeric predictions (for `auc`, `rmse`, `mae`, `r2`) score 0. Result
//! rows whose id is not expected are ignored.

use std::collections::{BTreeSet, HashMap};

use serde_json::Value;

use super::{
    bad_expected, canonical, json_cell, opt_string, parse_plain_number, result_table, short,
    SheetSel,
};
use crate::{result_file, Artifact, EvalError, Options, Scored};

const M: &str = "ds_predictions";

#[derive(Debug, Clone, Copy, PartialEq)]
enum Metric {
    Accuracy,
    F1,
    F1Macro,
    Recall,
    BalancedAccuracy,
    Auc,
    Rmse,
    Mae,
    R2,
}

impl Metric {
    fn parse(s: &str) -> Option<Metric> {
        Some(match s {
            "accuracy" => Metric::Accuracy,
            "f1" => Metric::F1,
            "f1_macro" => Metric::F1Macro,
            "recall" => Metric::Recall,
            "balanced_accuracy" => Metric::BalancedAccuracy,
            "auc" => Metric::Auc,
            "rmse" => Metric::Rmse,
            "mae" => Metric::Mae,
            "r2" => Metric::R2,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Metric::Accuracy => "accuracy",
            Metric::F1 => "f1",
            Metric::F1Macro => "f1_macro",
            Metric::Recall => "recall",
            Metric::BalancedAccuracy => "balanced_accuracy",
            Metric::Auc => "auc",
            Metric::Rmse => "rmse",
            Metric::Mae => "mae",
            Metric::R2 => "r2",
        }
    }

    /// Whether the metric reads predictions as numbers.
    fn numeric(self) -> bool {
        matches!(self, Metric::Auc | Metric::Rmse | Metric::Mae | Metric::R2)
    }

    fn lower_is_better(self) -> bool {
        matches!(self, Metric::Rmse | Metric::Mae)
    }
}

struct Truth {
    id: String,
    label: Option<String>,
    ids: Vec<String>,
    labels: Vec<String>,
    metric: Metric,
    threshold: f64,
}

fn truth(expected: &Artifact) -> Result<Truth, EvalError> {
    let Artifact::Json(v) = expected else {
        return Err(EvalError::wrong_artifact(M, "json", expected));
    };
    let name = |key: &str| -> Result<Option<String>, EvalError> {
        match v.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(bad_expected(M, key, "a column name")),
        }
    };
    let list = |key: &str| -> Result<Vec<String>, EvalError> {
        v.get(key)
            .and_then(Value::as_array)
            .and_then(|a| {
                a.iter()
                    .map(|x| match x {
                        Value::String(_) | Value::Number(_) | Value::Bool(_) => Some(json_cell(x)),
                        _ => None,
                    })
                    .collect::<Option<Vec<_>>>()
            })
            .ok_or_else(|| bad_expected(M, key, "a list of strings or numbers"))
    };
    let ids = list("ids")?;
    let labels = list("labels")?;
    if ids.len() != labels.len() {
        return Err(bad_expected(
            M,
            "labels",
            format!(
                "as many labels as ids ({} ids, {} labels)",
                ids.len(),
                labels.len()
            ),
        ));
    }
    if ids.is_empty() {
        return Err(bad_expected(M, "ids", "at least one id"));
    }
    let metric = match v.get("metric") {
        None | Some(Value::Null) => Metric::Accuracy,
        Some(Value::String(s)) => Metric::parse(s).ok_or_else(|| {
            bad_expected(
                M,
                "metric",
                "accuracy, f1, f1_macro, recall, balanced_accuracy, auc, rmse, mae or r2",
            )
        })?,
        Some(_) => {
            return Err(bad_expected(
                M,
                "metric",
                "accuracy, f1, f1_macro, recall, balanced_accuracy, auc, rmse, mae or r2",
            ))
        }
    };
    let threshold = v
        .get("threshold")
        .and_then(Value::as_f64)
        .filter(|t| t.is_finite())
        .ok_or_else(|| bad_expected(M, "threshold", "a number"))?;
    Ok(Truth {
        id: name("id")?.unwrap_or_else(|| "id".to_string()),
        label: name("label")?,
        ids,
        labels,
        metric,
        threshold,
    })
}

pub(crate) fn ds_predictions(
    result: &Artifact,
    expected: &Artifact,
    options: &Options,
) -> Result<Scored, EvalError> {
    let t = truth(expected)?;
    let id_opt = opt_string(M, options, "id")?;
    let pred_opt = opt_string(M, options, "prediction")?;
    let path = result_file(M, result)?;
    let table = match result_table(path, &SheetSel::First) {
        Ok(t) => t,
        Err(s) => return Ok(s),
    };
    let cols = || short(&table.columns.join(", "));
    let id_name = id_opt.unwrap_or_else(|| t.id.clone());
    let Some(id_col) = table.find(&id_name, true) else {
        return Ok(Scored::fail(format!(
            "no id column {id_name:?} (columns: {})",
            cols()
        )));
    };
    let pred_col = match &pred_opt {
        Some(p) => table.find(p, true),
        None => table
            .find("prediction", true)
            .or_else(|| t.label.as_deref().and_then(|l| table.find(l, true)))
            .or_else(|| (table.columns.len() == 2).then_some(1 - id_col)),
    };
    let Some(pred_col) = pred_col.filter(|&c| c != id_col) else {
        let want = pred_opt.as_deref().unwrap_or("prediction");
        return Ok(Scored::fail(format!(
            "no prediction column {want:?} (columns: {})",
            cols()
        )));
    };

    let mut by_id: HashMap<String, &str> = HashMap::new();
    let mut dups: Vec<String> = Vec::new();
    for row in &table.rows {
        let id = canonical(&row[id_col]);
        if by_id.insert(id.clone(), &row[pred_col]).is_some() {
            dups.push(id);
        }
    }
    if let Some(first) = dups.first() {
        return Ok(Scored::fail(format!(
            "{} duplicate ids in the result, e.g. {first}",
            dups.len()
        )));
    }
    let mut preds: Vec<&str> = Vec::with_capacity(t.ids.len());
    let mut missing: Vec<&str> = Vec::new();
    for id in &t.ids {
        match by_id.get(&canonical(id)) {
            Some(p) => preds.push(p),
            None => missing.push(id),
        }
    }
    if let Some(first) = missing.first() {
        return Ok(Scored::fail(format!(
            "{} of {} ids missing from the result, e.g. {}",
            missing.len(),
            t.ids.len(),
            first.trim()
        )));
    }

    let value = if t.metric.numeric() {
        let mut xs = Vec::with_capacity(preds.len());
        let mut bad: Vec<(usize, &str)> = Vec::new();
        for (i, p) in preds.iter().enumerate() {
            match parse_plain_number(p) {
                Some(x) => xs.push(x),
                None => bad.push((i, p)),
            }
        }
        if let Some(&(i, p)) = bad.first() {
            return Ok(Scored::fail(format!(
                "{} predictions are not numbers, e.g. id {}: {:?}",
                bad.len(),
                t.ids[i].trim(),
                short(p.trim())
            )));
        }
        if t.metric == Metric::Auc {
            let mut ys = Vec::with_capacity(t.labels.len());
            for l in &t.labels {
                match canonical(l).as_str() {
                    "1" => ys.push(true),
                    "0" => ys.push(false),
                    _ => return Err(bad_expected(M, "labels", "0/1 labels for auc")),
                }
            }
            match auc(&ys, &xs) {
                Some(a) => a,
                None => return Err(bad_expected(M, "labels", "both classes for auc")),
            }
        } else {
            let mut ys = Vec::with_capacity(t.labels.len());
            for l in &t.labels {
                match parse_plain_number(l) {
                    Some(y) => ys.push(y),
                    None => {
                        return Err(bad_expected(
                            M,
                            "labels",
                            format!("numeric labels for {}", t.metric.name()),
                        ))
                    }
                }
            }
            match t.metric {
                Metric::Rmse => rmse(&ys, &xs),
                Metric::Mae => mae(&ys, &xs),
                _ => r2(&ys, &xs),
            }
        }
    } else {
        let ys: Vec<String> = t.labels.iter().map(|l| canonical(l)).collect();
        let ps: Vec<String> = preds.iter().map(|p| canonical(p)).collect();
        match t.metric {
            Metric::Accuracy => accuracy(&ys, &ps),
            Metric::F1 => f1_for(&ys, &ps, "1"),
            Metric::Recall => recall_for(&ys, &ps, "1").unwrap_or(0.0),
            Metric::BalancedAccuracy => balanced_accuracy(&ys, &ps),
            _ => f1_macro(&ys, &ps),
        }
    };
    let ok = if t.metric.lower_is_better() {
        value <= t.threshold
    } else {
        value >= t.threshold
    };
    let op = match (t.metric.lower_is_better(), ok) {
        (true, true) => "<=",
        (true, false) => ">",
        (false, true) => ">=",
        (false, false) => "<",
    };
    Ok(Scored::from_bool(
        ok,
        format!(
            "{} {value:.3} {op} {:.3} on {} rows",
            t.metric.name(),
            t.threshold,
            t.ids.len()
        ),
    ))
}

fn accuracy(ys: &[String], ps: &[String]) -> f64 {
    let right = ys.iter().zip(ps).filter(|(y, p)| y == p).count();
    right as f64 / ys.len() as f64
}

/// F1 of one class: `2 tp / (2 tp + fp + fn)`, 0 when undefined.
fn f1_for(ys: &[String], ps: &[String], positive: &str) -> f64 {
    let (mut tp, mut fp, mut fn_) = (0usize, 0usize, 0usize);
    for (y, p) in ys.iter().zip(ps) {
        match (y == positive, p == positive) {
            (true, true) => tp += 1,
            (false, true) => fp += 1,
            (true, false) => fn_ += 1,
            (false, false) => {}
        }
    }
    let d = 2 * tp + fp + fn_;
    if d == 0 {
        0.0
    } else {
        (2 * tp) as f64 / d as f64
    }
}

/// Recall of one class: `tp / (tp + fn)`; `None` when the truth has none
/// of it.
fn recall_for(ys: &[String], ps: &[String], positive: &str) -> Option<f64> {
    let of: Vec<bool> = ys
        .iter()
        .zip(ps)
        .filter(|(y, _)| *y == positive)
        .map(|(_, p)| p == positive)
        .collect();
    (!of.is_empty()).then(|| of.iter().filter(|&&hit| hit).count() as f64 / of.len() as f64)
}

/// The mean of each true class's recall (scikit-learn's
/// `balanced_accuracy_score`).
fn balanced_accuracy(ys: &[String], ps: &[String]) -> f64 {
    let labels: BTreeSet<&String> = ys.iter().collect();
    let sum: f64 = labels.iter().filter_map(|l| recall_for(ys, ps, l)).sum();
    sum / labels.len() as f64
}

fn f1_macro(ys: &[String], ps: &[String]) -> f64 {
    let labels: BTreeSet<&String> = ys.iter().chain(ps).collect();
    let sum: f64 = labels.iter().map(|l| f1_for(ys, ps, l)).sum();
    sum / labels.len() as f64
}

/// ROC AUC by the Mann-Whitney rank statistic, tied scores getting their
/// mean rank; `None` without both classes.
fn auc(ys: &[bool], scores: &[f64]) -> Option<f64> {
    let pos = ys.iter().filter(|&&y| y).count();
    let neg = ys.len() - pos;
    if pos == 0 || neg == 0 {
        return None;
    }
    let mut idx: Vec<usize> = (0..scores.len()).collect();
    idx.sort_by(|&a, &b| scores[a].total_cmp(&scores[b]));
    let mut ranks = vec![0.0; scores.len()];
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && scores[idx[j + 1]] == scores[idx[i]] {
            j += 1;
        }
        let mean_rank = (i + j) as f64 / 2.0 + 1.0;
        for &k in &idx[i..=j] {
            ranks[k] = mean_rank;
        }
        i = j + 1;
    }
    let pos_rank_sum: f64 = ys
        .iter()
        .zip(&ranks)
        .filter(|(y, _)| **y)
        .map(|(_, r)| r)
        .sum();
    let p = pos as f64;
    Some((pos_rank_sum - p * (p + 1.0) / 2.0) / (p * neg as f64))
}

fn rmse(ys: &[f64], ps: &[f64]) -> f64 {
    let se: f64 = ys.iter().zip(ps).map(|(y, p)| (y - p) * (y - p)).sum();
    (se / ys.len() as f64).sqrt()
}

fn mae(ys: &[f64], ps: &[f64]) -> f64 {
    let ae: f64 = ys.iter().zip(ps).map(|(y, p)| (y - p).abs()).sum();
    ae / ys.len() as f64
}

fn r2(ys: &[f64], ps: &[f64]) -> f64 {
    let mean = ys.iter().sum::<f64>() / ys.len() as f64;
    let ss_res: f64 = ys.iter().zip(ps).map(|(y, p)| (y - p) * (y - p)).sum();
    let ss_tot: f64 = ys.iter().map(|y| (y - mean) * (y - mean)).sum();
    if ss_tot == 0.0 {
        if ss_res == 0.0 {
            1.0
        } else {
            0.0
        }
    } else {
        1.0 - ss_res / ss_tot
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn auc_averages_tied_ranks() {
        assert_eq!(auc(&[false, true], &[0.1, 0.9]), Some(1.0));
        assert_eq!(auc(&[false, true], &[0.9, 0.1]), Some(0.0));
        assert_eq!(auc(&[false, true], &[0.5, 0.5]), Some(0.5));
        // sklearn: roc_auc_score([0,0,1,1],[0.1,0.4,0.35,0.8]) == 0.75
        assert_eq!(
            auc(&[false, false, true, true], &[0.1, 0.4, 0.35, 0.8]),
            Some(0.75)
        );
        assert_eq!(auc(&[true, true], &[0.1, 0.2]), None);
    }

    #[test]
    fn f1_scores_match_scikit_learn() {
        let y = s(&["1", "1", "0", "0", "1"]);
        let p = s(&["1", "0", "0", "1", "1"]);
        // tp 2, fp 1, fn 1
        assert!((f1_for(&y, &p, "1") - 2.0 / 3.0).abs() < 1e-12);
        // class 0: tp 1, fp 1, fn 1 -> 0.5
        assert!((f1_macro(&y, &p) - (2.0 / 3.0 + 0.5) / 2.0).abs() < 1e-12);
        assert_eq!(f1_for(&s(&["0"]), &s(&["0"]), "1"), 0.0);
        // recall_score: tp 2 of 3 positives; balanced: (2/3 + 1/2) / 2
        assert!((recall_for(&y, &p, "1").unwrap() - 2.0 / 3.0).abs() < 1e-12);
        assert!((balanced_accuracy(&y, &p) - (2.0 / 3.0 + 0.5) / 2.0).abs() < 1e-12);
        assert_eq!(recall_for(&s(&["0"]), &s(&["1"]), "1"), None);
    }

    #[test]
    fn regression_metrics_match_their_definitions() {
        let y = [1.0, 2.0, 3.0];
        let p = [1.0, 2.0, 5.0];
        assert!((rmse(&y, &p) - (4.0f64 / 3.0).sqrt()).abs() < 1e-12);
        assert!((mae(&y, &p) - 2.0 / 3.0).abs() < 1e-12);
        assert!((r2(&y, &p) - (1.0 - 4.0 / 2.0)).abs() < 1e-12);
        assert_eq!(r2(&[2.0, 2.0], &[2.0, 2.0]), 1.0);
        assert_eq!(r2(&[2.0, 2.0], &[2.0, 3.0]), 0.0);
    }
}
