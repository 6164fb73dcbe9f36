//! `pipeline_checks`: the silent failures that can be decided from the
//! code the agent wrote, parsed as Python (rustpython's parser; notebook
//! cells in order, their `%magic` and `!shell` lines left out). The
//! result is the code: a `.py` file, an `.ipynb`, several of them (read in
//! order, as one program), or text. The modes, from the Silent Failures
//! taxonomy:
//!
//! - FM04 imputation before the split: an imputer (`SimpleImputer`,
//!   `KNNImputer`, `IterativeImputer`) fitted, or `fillna` with a
//!   statistic (`mean`, `median`, `mode`), on the data the split takes,
//!   before `train_test_split`;
//! - FM08 scaling before the split: a scaler (`StandardScaler`,
//!   `MinMaxScaler`, `RobustScaler`, `MaxAbsScaler`, `Normalizer`,
//!   `QuantileTransformer`, `PowerTransformer`, `PCA`) fitted so;
//! - FM09 feature selection before the split: a selector (`SelectKBest`,
//!   `SelectPercentile`, `RFE`, `RFECV`, `SelectFromModel`,
//!   `VarianceThreshold`) fitted so;
//! - FM13 the test set in a fit: any `fit`, `fit_transform` or
//!   `fit_resample` given the split's test part;
//! - FM06 no held-out data: a model fitted with no split or
//!   cross-validation anywhere (`train_test_split`, `cross_val_score`,
//!   `cross_validate`, `KFold`, `GridSearchCV`, …);
//! - FM05 temporal order ignored (only with `temporal: true`): a
//!   `train_test_split` that shuffles (no `shuffle=False`).
//!
//! "The data the split takes" is its first argument's names and every name
//! they were assigned from, back to the loaded data. Options: `modes` (the
//! modes checked; default all of the above that apply), `temporal`
//! (false). 1 when none is found; the detail names each found, with its
//! file and line. Code that does not parse scores 0.

use std::collections::{BTreeSet, HashMap};

use rustpython_ast::{self as ast, Ranged, Visitor};
use serde_json::Value;

use crate::text::{read_result_text, ResultText};
use crate::{opt_bool, Artifact, EvalError, Options, Scored};

const M: &str = "pipeline_checks";

const IMPUTERS: &[&str] = &["SimpleImputer", "KNNImputer", "IterativeImputer"];
const SCALERS: &[&str] = &[
    "StandardScaler",
    "MinMaxScaler",
    "RobustScaler",
    "MaxAbsScaler",
    "Normalizer",
    "QuantileTransformer",
    "PowerTransformer",
    "PCA",
];
const SELECTORS: &[&str] = &[
    "SelectKBest",
    "SelectPercentile",
    "RFE",
    "RFECV",
    "SelectFromModel",
    "VarianceThreshold",
];
const HOLDOUT: &[&str] = &[
    "train_test_split",
    "cross_val_score",
    "cross_validate",
    "cross_val_predict",
    "KFold",
    "StratifiedKFold",
    "GroupKFold",
    "TimeSeriesSplit",
    "ShuffleSplit",
    "StratifiedShuffleSplit",
    "GridSearchCV",
    "RandomizedSearchCV",
];
const ALL_MODES: &[&str] = &["FM04", "FM05", "FM06", "FM08", "FM09", "FM13"];

/// One source: its name and its code.
struct Source {
    name: String,
    code: String,
}

/// The code of a `.py` file, or a notebook's code cells.
fn source_of(path: &std::path::Path) -> Result<Source, Scored> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let text = match read_result_text(path) {
        ResultText::Ok(t) => t,
        ResultText::Fail(s) => return Err(s),
    };
    if !name.ends_with(".ipynb") {
        return Ok(Source { name, code: text });
    }
    let nb: Value = serde_json::from_str(&text)
        .map_err(|e| Scored::fail(format!("{name} is not a notebook: {e}")))?;
    let mut code = String::new();
    for cell in nb["cells"].as_array().into_iter().flatten() {
        if cell["cell_type"] != "code" {
            continue;
        }
        let lines: String = match &cell["source"] {
            Value::String(s) => s.clone(),
            Value::Array(parts) => parts.iter().filter_map(Value::as_str).collect(),
            _ => String::new(),
        };
        for line in lines.lines() {
            let t = line.trim_start();
            // IPython's magics and shell escapes are not Python.
            code.push_str(if t.starts_with('%') || t.starts_with('!') {
                ""
            } else {
                line
            });
            code.push('\n');
        }
    }
    Ok(Source { name, code })
}

/// The names an expression reads its data from: `df` in `df["a"]`,
/// `df.drop(columns=…)`, `X.values`, `np.log(df)`.
fn roots(e: &ast::Expr, out: &mut BTreeSet<String>) {
    match e {
        ast::Expr::Name(n) => {
            out.insert(n.id.to_string());
        }
        ast::Expr::Attribute(a) => roots(&a.value, out),
        ast::Expr::Subscript(s) => roots(&s.value, out),
        ast::Expr::Call(c) => {
            if let ast::Expr::Attribute(a) = &*c.func {
                roots(&a.value, out);
            }
            for a in &c.args {
                roots(a, out);
            }
        }
        ast::Expr::BinOp(b) => {
            roots(&b.left, out);
            roots(&b.right, out);
        }
        _ => {}
    }
}

/// The called name: `f` of `f(…)` and of `m.f(…)`.
fn callee(c: &ast::ExprCall) -> Option<String> {
    match &*c.func {
        ast::Expr::Name(n) => Some(n.id.to_string()),
        ast::Expr::Attribute(a) => Some(a.attr.to_string()),
        _ => None,
    }
}

/// Where in the program: the source's index, then the byte offset.
type Pos = (usize, usize);

#[derive(Default)]
struct Walk {
    source: usize,
    /// name → the names it was assigned from.
    from: HashMap<String, BTreeSet<String>>,
    /// name → the class it was made from (`sc = StandardScaler()`).
    class: HashMap<String, String>,
    /// The first `train_test_split`: where, the names it splits, its test
    /// parts, and whether it shuffles.
    split: Option<(Pos, BTreeSet<String>, Vec<String>, bool)>,
    holdout: bool,
    /// Fits: where, the estimator's class (if known), the method, the
    /// argument names.
    fits: Vec<(Pos, Option<String>, String, BTreeSet<String>)>,
    /// `fillna` with a statistic: where, on which names.
    fillna_stat: Vec<(Pos, BTreeSet<String>)>,
}

impl Walk {
    fn pos(&self, r: &impl Ranged) -> Pos {
        (self.source, r.start().to_usize())
    }

    /// `name` and every name it was assigned from, transitively.
    fn lineage(&self, names: &BTreeSet<String>) -> BTreeSet<String> {
        let mut out = names.clone();
        let mut todo: Vec<String> = names.iter().cloned().collect();
        while let Some(n) = todo.pop() {
            for m in self.from.get(&n).into_iter().flatten() {
                if out.insert(m.clone()) {
                    todo.push(m.clone());
                }
            }
        }
        out
    }
}

impl Visitor for Walk {
    fn visit_stmt_assign(&mut self, node: ast::StmtAssign) {
        let mut from = BTreeSet::new();
        roots(&node.value, &mut from);
        let mut targets: Vec<String> = vec![];
        for t in &node.targets {
            match t {
                ast::Expr::Name(n) => targets.push(n.id.to_string()),
                ast::Expr::Tuple(tu) => targets.extend(tu.elts.iter().filter_map(|e| match e {
                    ast::Expr::Name(n) => Some(n.id.to_string()),
                    _ => None,
                })),
                _ => {}
            }
        }
        if let ast::Expr::Call(c) = &*node.value {
            if let (Some(f), [one]) = (callee(c), targets.as_slice()) {
                if f.chars().next().is_some_and(char::is_uppercase) {
                    self.class.insert(one.clone(), f);
                }
            }
            if callee(c).as_deref() == Some("train_test_split") && self.split.is_none() {
                let mut split = BTreeSet::new();
                for a in &c.args {
                    roots(a, &mut split);
                }
                // X_train, X_test, y_train, y_test: the odd ones.
                let test: Vec<String> = targets.iter().skip(1).step_by(2).cloned().collect();
                let shuffles = !c.keywords.iter().any(|k| {
                    k.arg.as_deref() == Some("shuffle")
                        && matches!(&k.value, ast::Expr::Constant(v) if matches!(v.value, ast::Constant::Bool(false)))
                });
                self.split = Some((self.pos(&node), split, test, shuffles));
            }
        }
        for t in targets {
            // A name assigned from itself keeps its older sources.
            let entry = self.from.entry(t.clone()).or_default();
            entry.extend(from.iter().filter(|f| **f != t).cloned());
        }
        self.generic_visit_stmt_assign(node);
    }

    fn visit_expr_call(&mut self, node: ast::ExprCall) {
        if let Some(f) = callee(&node) {
            if HOLDOUT.contains(&f.as_str()) {
                self.holdout = true;
            }
            if matches!(f.as_str(), "fit" | "fit_transform" | "fit_resample") {
                if let ast::Expr::Attribute(a) = &*node.func {
                    let class = match &*a.value {
                        ast::Expr::Name(n) => self.class.get(n.id.as_str()).cloned(),
                        ast::Expr::Call(c) => callee(c),
                        _ => None,
                    };
                    let mut args = BTreeSet::new();
                    for x in &node.args {
                        roots(x, &mut args);
                    }
                    let at = self.pos(&node);
                    self.fits.push((at, class, f.clone(), args));
                }
            }
            if f == "fillna" {
                let stat = node
                    .args
                    .iter()
                    .chain(node.keywords.iter().map(|k| &k.value))
                    .any(|a| {
                        let mut found = false;
                        let mut stack = vec![a];
                        while let Some(e) = stack.pop() {
                            if let ast::Expr::Call(c) = e {
                                if matches!(callee(c).as_deref(), Some("mean" | "median" | "mode"))
                                {
                                    found = true;
                                }
                                stack.extend(c.args.iter());
                                if let ast::Expr::Attribute(at) = &*c.func {
                                    stack.push(&at.value);
                                }
                            } else if let ast::Expr::Attribute(at) = e {
                                stack.push(&at.value);
                            } else if let ast::Expr::Subscript(s) = e {
                                stack.push(&s.value);
                            }
                        }
                        found
                    });
                if let (true, ast::Expr::Attribute(a)) = (stat, &*node.func) {
                    let mut on = BTreeSet::new();
                    roots(&a.value, &mut on);
                    let at = self.pos(&node);
                    self.fillna_stat.push((at, on));
                }
            }
        }
        self.generic_visit_expr_call(node);
    }
}

/// The line of byte `offset` in `code` (1-based).
fn line_of(code: &str, offset: usize) -> usize {
    code[..offset.min(code.len())].matches('\n').count() + 1
}

pub(crate) fn pipeline_checks(result: &Artifact, options: &Options) -> Result<Scored, EvalError> {
    let temporal = opt_bool(M, options, "temporal", false)?;
    let modes: Vec<String> = match options.get("modes") {
        None | Some(Value::Null) => ALL_MODES
            .iter()
            .filter(|m| temporal || **m != "FM05")
            .map(|m| m.to_string())
            .collect(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| match i.as_str() {
                Some(s) if ALL_MODES.contains(&s) => Ok(s.to_string()),
                _ => Err(EvalError::bad_option(
                    M,
                    "modes",
                    format!("a list of {ALL_MODES:?}"),
                )),
            })
            .collect::<Result<_, _>>()?,
        Some(_) => {
            return Err(EvalError::bad_option(
                M,
                "modes",
                format!("a list of {ALL_MODES:?}"),
            ))
        }
    };
    let sources: Vec<Source> = match result {
        Artifact::Text(t) => vec![Source {
            name: "the code".into(),
            code: t.clone(),
        }],
        Artifact::File(p) => match source_of(p) {
            Ok(s) => vec![s],
            Err(s) => return Ok(s),
        },
        Artifact::Files(ps) => {
            let mut v = vec![];
            for p in ps {
                match source_of(p) {
                    Ok(s) => v.push(s),
                    Err(s) => return Ok(s),
                }
            }
            v
        }
        other => return Err(EvalError::wrong_artifact(M, "code (file or text)", other)),
    };
    let mut walk = Walk::default();
    for (i, s) in sources.iter().enumerate() {
        let module =
            match rustpython_parser::parse(&s.code, rustpython_parser::Mode::Module, &s.name) {
                Ok(m) => m,
                Err(e) => {
                    return Ok(Scored::fail(format!(
                        "{} does not parse as Python: {e}",
                        s.name
                    )))
                }
            };
        walk.source = i;
        if let ast::Mod::Module(m) = module {
            for st in m.body {
                walk.visit_stmt(st);
            }
        }
    }
    let at = |p: Pos| {
        format!(
            "{} line {}",
            sources[p.0].name,
            line_of(&sources[p.0].code, p.1)
        )
    };
    let mut found: Vec<String> = vec![];
    let want = |m: &str| modes.iter().any(|x| x == m);
    if let Some((split_at, split, test, shuffles)) = &walk.split {
        let before = walk.lineage(split);
        for (p, class, method, args) in &walk.fits {
            let class_s = class.clone().unwrap_or_default();
            if p < split_at && args.iter().any(|a| before.contains(a)) {
                let mode = if IMPUTERS.contains(&class_s.as_str()) {
                    Some(("FM04", "imputation before the split"))
                } else if SCALERS.contains(&class_s.as_str()) {
                    Some(("FM08", "scaling before the split"))
                } else if SELECTORS.contains(&class_s.as_str()) {
                    Some(("FM09", "feature selection before the split"))
                } else {
                    None
                };
                if let Some((m, what)) = mode.filter(|(m, _)| want(m)) {
                    found.push(format!("{m} {what}: {class_s}.{method} at {}", at(*p)));
                }
            }
            if want("FM13") && args.iter().any(|a| test.contains(a)) {
                let names: Vec<&String> = args.iter().filter(|a| test.contains(*a)).collect();
                found.push(format!(
                    "FM13 the test set in a fit: {}{method}({}) at {}",
                    class.as_ref().map(|c| format!("{c}.")).unwrap_or_default(),
                    names
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                    at(*p)
                ));
            }
        }
        if want("FM04") {
            for (p, on) in &walk.fillna_stat {
                if p < split_at && on.iter().any(|a| before.contains(a)) {
                    found.push(format!(
                        "FM04 imputation before the split: fillna with a statistic of the whole data at {}",
                        at(*p)
                    ));
                }
            }
        }
        if want("FM05") && temporal && *shuffles {
            found.push(format!(
                "FM05 temporal order ignored: train_test_split shuffles time-ordered data at {}",
                at(*split_at)
            ));
        }
    }
    if want("FM06") && !walk.holdout && !walk.fits.is_empty() {
        let models = walk.fits.iter().filter(|f| {
            let c = f.1.clone().unwrap_or_default();
            !IMPUTERS.contains(&c.as_str())
                && !SCALERS.contains(&c.as_str())
                && !SELECTORS.contains(&c.as_str())
        });
        if let Some(f) = models.into_iter().next() {
            found.push(format!(
                "FM06 no held-out data: a model is fitted ({} at {}) with no split or cross-validation",
                f.1.clone().unwrap_or_else(|| f.2.clone()),
                at(f.0)
            ));
        }
    }
    if found.is_empty() {
        return Ok(Scored::pass(format!(
            "none of {} found in {} source(s)",
            modes.join(", "),
            sources.len()
        )));
    }
    Ok(Scored::fail(found.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(code: &str, options: Value) -> Scored {
        let Value::Object(o) = options else { panic!() };
        pipeline_checks(&Artifact::Text(code.into()), &o).unwrap()
    }

    const CLEAN: &str = r#"
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.linear_model import LogisticRegression
df = pd.read_csv("data.csv")
X = df.drop(columns=["target"])
y = df["target"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)
sc = StandardScaler()
X_train = sc.fit_transform(X_train)
X_test = sc.transform(X_test)
model = LogisticRegression().fit(X_train, y_train)
print(model.score(X_test, y_test))
"#;

    #[test]
    fn a_clean_pipeline_passes_and_each_leak_is_named_with_its_line() {
        let s = check(CLEAN, serde_json::json!({}));
        assert_eq!(s.score, 1.0, "{}", s.detail);

        let scaled_first = r#"
import pandas as pd
from sklearn.preprocessing import StandardScaler
from sklearn.impute import SimpleImputer
df = pd.read_csv("data.csv")
df = df.fillna(df.mean())
X = df.drop(columns=["target"])
y = df["target"]
X = StandardScaler().fit_transform(X)
imp = SimpleImputer(strategy="median")
X = imp.fit_transform(X)
X_train, X_test, y_train, y_test = train_test_split(X, y)
for model in [A(), B()]:
    model.fit(X_test, y_test)
"#;
        let s = check(scaled_first, serde_json::json!({}));
        assert_eq!(s.score, 0.0);
        for want in [
            "FM08 scaling before the split: StandardScaler.fit_transform at the code line 9",
            "FM04 imputation before the split: SimpleImputer.fit_transform at the code line 11",
            "FM04 imputation before the split: fillna with a statistic of the whole data at the code line 6",
            "FM13 the test set in a fit: fit(X_test, y_test) at the code line 14",
        ] {
            assert!(s.detail.contains(want), "{want}\nin: {}", s.detail);
        }
        // Only the modes asked for.
        let s = check(scaled_first, serde_json::json!({"modes": ["FM13"]}));
        assert!(
            s.detail.starts_with("FM13") && !s.detail.contains("FM08"),
            "{}",
            s.detail
        );
    }

    #[test]
    fn no_split_time_order_and_broken_code() {
        let s = check(
            "m = RandomForestClassifier()\nm.fit(X, y)\nprint(m.score(X, y))\n",
            serde_json::json!({}),
        );
        assert!(
            s.score == 0.0
                && s.detail.starts_with(
                    "FM06 no held-out data: a model is fitted (RandomForestClassifier"
                ),
            "{}",
            s.detail
        );
        let cv =
            "m = RandomForestClassifier()\nprint(cross_val_score(m, X, y).mean())\nm.fit(X, y)\n";
        assert_eq!(check(cv, serde_json::json!({})).score, 1.0);
        let ts = "a, b = train_test_split(df, test_size=0.2)\n";
        assert_eq!(check(ts, serde_json::json!({})).score, 1.0);
        let s = check(ts, serde_json::json!({"temporal": true}));
        assert!(s.detail.starts_with("FM05"), "{}", s.detail);
        let kept = "a, b = train_test_split(df, test_size=0.2, shuffle=False)\n";
        assert_eq!(
            check(kept, serde_json::json!({"temporal": true})).score,
            1.0
        );
        let s = check("def f(:\n", serde_json::json!({}));
        assert!(
            s.score == 0.0 && s.detail.starts_with("the code does not parse as Python"),
            "{}",
            s.detail
        );
        assert!(matches!(
            pipeline_checks(
                &Artifact::Text(String::new()),
                &serde_json::from_value(serde_json::json!({"modes": ["FM99"]})).unwrap()
            ),
            Err(EvalError::BadOption { .. })
        ));
    }

    #[test]
    fn a_notebook_is_read_cell_by_cell_without_its_magics() {
        let dir = tempfile::tempdir().unwrap();
        let nb = serde_json::json!({"cells": [
            {"cell_type": "markdown", "source": ["# EDA"]},
            {"cell_type": "code", "source": ["%matplotlib inline\n", "!pip list\n", "X = StandardScaler().fit_transform(df)\n"]},
            {"cell_type": "code", "source": "X_train, X_test = train_test_split(X)\n"}
        ], "nbformat": 4, "nbformat_minor": 5, "metadata": {}});
        let p = dir.path().join("analysis.ipynb");
        std::fs::write(&p, nb.to_string()).unwrap();
        let s = pipeline_checks(&Artifact::File(p), &Options::new()).unwrap();
        assert!(s.detail.contains("FM08 scaling before the split: StandardScaler.fit_transform at analysis.ipynb line 3"), "{}", s.detail);
    }
}
