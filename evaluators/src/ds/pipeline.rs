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
//!   `cross_validate`, `KFold`, `GridSearchCV`, …, or two row subsets of
//!   one frame: `df[df.year < 2023]` and `df[df.year >= 2023]`,
//!   `df.iloc[:800]` and `df.iloc[800:]`, `df.sample(frac=…)` and
//!   `df.drop(index=…)`);
//! - FM05 temporal order ignored (only with `temporal: true`): a
//!   `train_test_split` that shuffles (no `shuffle=False`);
//! - FM15 (and TF06) accuracy the only metric (only with `imbalanced:
//!   true`): a classifier is evaluated, and only by `accuracy_score`,
//!   `.score(X, y)` (not of a regressor), `(pred == y).mean()` or cross-validation without a
//!   `scoring` or with `scoring="accuracy"`; any other metric
//!   (`f1_score`, `recall_score`, `roc_auc_score`, `classification_report`,
//!   `confusion_matrix`, a `scoring="f1"`, …) clears it;
//! - TF05 a column not available at prediction time among the features: a
//!   model fitted (`fit`, `cross_val_score`, …) on a feature matrix whose
//!   columns are known statically and hold the target (the column `y` was
//!   taken from, or the option `target`) or a column of the option
//!   `unavailable`. Column sets are followed through `read_csv` (all
//!   columns), `drop(columns=…)`, `drop(…, axis=1)`, `df[[…]]`,
//!   `df.loc[:, […]]`, `pop`, `del df[…]`, `df["new"] = …`, row filters,
//!   `.values`, `get_dummies` and `train_test_split`; a matrix built any
//!   other way is not judged.
//!
//! "The data the split takes" is its first argument's names and every name
//! they were assigned from, back to the loaded data. Options: `modes` (the
//! modes checked; default all of the above that apply), `temporal`
//! (false), `imbalanced` (false), `target` and `unavailable` (column
//! names). 1 when none is found. The detail names each mode found, with
//! its file and line, then the modes checked and absent and those that do
//! not apply (`FM05` without `temporal`, `FM15` without `imbalanced`).
//! Code that does not parse scores 0.

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
/// Metrics other than accuracy: any of them clears FM15.
const OTHER_METRICS: &[&str] = &[
    "f1_score",
    "fbeta_score",
    "recall_score",
    "precision_score",
    "balanced_accuracy_score",
    "roc_auc_score",
    "average_precision_score",
    "classification_report",
    "confusion_matrix",
    "matthews_corrcoef",
    "cohen_kappa_score",
    "precision_recall_fscore_support",
    "precision_recall_curve",
    "roc_curve",
    "log_loss",
    "brier_score_loss",
    "from_predictions",
    "from_estimator",
];
/// Cross-validation and search: they score with `scoring`, or the
/// estimator's `score` (accuracy for a classifier) without it.
const SCORED_CV: &[&str] = &[
    "cross_val_score",
    "cross_validate",
    "GridSearchCV",
    "RandomizedSearchCV",
];
/// Model inputs given as (X, y) at these argument positions.
const CV_INPUTS: &[&str] = &["cross_val_score", "cross_validate", "cross_val_predict"];
/// Methods that keep a frame's columns.
const SAME_COLUMNS: &[&str] = &[
    "copy",
    "dropna",
    "fillna",
    "drop_duplicates",
    "reset_index",
    "astype",
    "sort_values",
    "sort_index",
    "head",
    "tail",
    "sample",
    "query",
    "replace",
    "interpolate",
    "clip",
    "round",
    "abs",
    "infer_objects",
    "ffill",
    "bfill",
    "to_numpy",
];
const ALL_MODES: &[&str] = &[
    "FM04", "FM05", "FM06", "FM08", "FM09", "FM13", "FM15", "TF05",
];

/// A frame's columns, as far as the code shows them.
#[derive(Clone, Debug, PartialEq)]
enum Cols {
    /// Exactly these.
    Only(BTreeSet<String>),
    /// Every column the data has but these.
    AllBut(BTreeSet<String>),
}

impl Cols {
    fn has(&self, c: &str) -> bool {
        match self {
            Cols::Only(s) => s.contains(c),
            Cols::AllBut(s) => !s.contains(c),
        }
    }

    fn without(&self, gone: &[String]) -> Cols {
        match self {
            Cols::Only(s) => Cols::Only(s.iter().filter(|c| !gone.contains(c)).cloned().collect()),
            Cols::AllBut(s) => Cols::AllBut(s.iter().chain(gone).cloned().collect()),
        }
    }

    fn with(&self, c: &str) -> Cols {
        match self {
            Cols::Only(s) => Cols::Only(s.iter().cloned().chain([c.to_string()]).collect()),
            Cols::AllBut(s) => Cols::AllBut(s.iter().filter(|x| *x != c).cloned().collect()),
        }
    }
}

/// A string constant's value.
fn str_const(e: &ast::Expr) -> Option<String> {
    match e {
        ast::Expr::Constant(c) => match &c.value {
            ast::Constant::Str(s) => Some(s.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// The strings of a list or tuple of string constants.
fn str_list(e: &ast::Expr) -> Option<Vec<String>> {
    let elts = match e {
        ast::Expr::List(l) => &l.elts,
        ast::Expr::Tuple(t) => &t.elts,
        _ => return None,
    };
    elts.iter().map(str_const).collect()
}

fn keyword<'e>(c: &'e ast::ExprCall, name: &str) -> Option<&'e ast::Expr> {
    c.keywords
        .iter()
        .find(|k| k.arg.as_deref() == Some(name))
        .map(|k| &k.value)
}

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
    /// frame → the names assigned a subset of its rows (`df[df.year <
    /// 2023]`, `df.iloc[:800]`, `df.sample(frac=…)`, `df.drop(index=…)`):
    /// two of them are a hand-made split.
    row_subsets: HashMap<String, BTreeSet<String>>,
    /// Fits: where, the estimator's class (if known), the method, the
    /// argument names.
    fits: Vec<(Pos, Option<String>, String, BTreeSet<String>)>,
    /// `fillna` with a statistic: where, on which names.
    fillna_stat: Vec<(Pos, BTreeSet<String>)>,
    /// name → its columns, where the code shows them.
    cols: HashMap<String, Cols>,
    /// name → a list of column names (`features = ["a", "b"]`).
    lists: HashMap<String, Vec<String>>,
    /// name → the column a target vector was taken from (`y = df["t"]`).
    target_of: HashMap<String, String>,
    /// Models given features: where, what, the features' columns (if
    /// known) and the target's column (if known).
    model_inputs: Vec<(Pos, String, Option<Cols>, Option<String>)>,
    /// The first evaluation by accuracy, and whether any other metric is
    /// computed.
    accuracy_at: Option<(Pos, String)>,
    other_metric: bool,
}

impl Walk {
    fn pos(&self, r: &impl Ranged) -> Pos {
        (self.source, r.start().to_usize())
    }

    /// The columns of a frame-valued expression, where the code shows them.
    fn cols_of(&self, e: &ast::Expr) -> Option<Cols> {
        match e {
            ast::Expr::Name(n) => self.cols.get(n.id.as_str()).cloned(),
            ast::Expr::Attribute(a) if a.attr.as_str() == "values" => self.cols_of(&a.value),
            ast::Expr::Subscript(sub) => {
                let on_loc =
                    matches!(&*sub.value, ast::Expr::Attribute(a) if a.attr.as_str() == "loc");
                let base = || match &*sub.value {
                    ast::Expr::Attribute(a) if a.attr.as_str() == "loc" => self.cols_of(&a.value),
                    v => self.cols_of(v),
                };
                let list = |e: &ast::Expr| {
                    str_list(e).or_else(|| match e {
                        ast::Expr::Name(n) => self.lists.get(n.id.as_str()).cloned(),
                        _ => None,
                    })
                };
                match &*sub.slice {
                    ast::Expr::Tuple(t) if on_loc && t.elts.len() == 2 => {
                        list(&t.elts[1]).map(|l| Cols::Only(l.into_iter().collect()))
                    }
                    sl => {
                        if let Some(l) = list(sl) {
                            Some(Cols::Only(l.into_iter().collect()))
                        } else if matches!(
                            sl,
                            ast::Expr::Compare(_) | ast::Expr::BoolOp(_) | ast::Expr::UnaryOp(_)
                        ) || matches!(sl, ast::Expr::BinOp(b) if matches!(b.op, ast::Operator::BitAnd | ast::Operator::BitOr))
                        {
                            // A row filter.
                            base()
                        } else {
                            None
                        }
                    }
                }
            }
            ast::Expr::Call(c) => {
                let f = callee(c)?;
                if f.starts_with("read_") {
                    return Some(Cols::AllBut(BTreeSet::new()));
                }
                if f == "get_dummies" {
                    return c.args.first().and_then(|a| self.cols_of(a));
                }
                let ast::Expr::Attribute(a) = &*c.func else {
                    return None;
                };
                if f == "drop" {
                    let by_axis = keyword(c, "axis").is_some_and(|v| {
                        matches!(v, ast::Expr::Constant(k) if matches!(&k.value, ast::Constant::Int(i) if i.to_string() == "1"))
                            || str_const(v).as_deref() == Some("columns")
                    });
                    let labels = keyword(c, "columns").or(if by_axis {
                        keyword(c, "labels").or(c.args.first())
                    } else {
                        None
                    });
                    return match labels {
                        Some(l) => {
                            let gone = str_const(l)
                                .map(|s| vec![s])
                                .or_else(|| str_list(l))
                                .or_else(|| match l {
                                    ast::Expr::Name(n) => self.lists.get(n.id.as_str()).cloned(),
                                    _ => None,
                                })?;
                            self.cols_of(&a.value).map(|c| c.without(&gone))
                        }
                        // Rows dropped.
                        None => self.cols_of(&a.value),
                    };
                }
                if SAME_COLUMNS.contains(&f.as_str()) {
                    return self.cols_of(&a.value);
                }
                None
            }
            _ => None,
        }
    }

    /// The column a target vector comes from: `df["t"]`, `df.t`,
    /// `df.pop("t")`, a name assigned so, through `.values`, `.astype(…)`,
    /// `.map(…)`.
    fn target_in(&self, e: &ast::Expr) -> Option<String> {
        match e {
            ast::Expr::Name(n) => self.target_of.get(n.id.as_str()).cloned(),
            ast::Expr::Subscript(sub) => {
                let s = str_const(&sub.slice)?;
                self.cols_of(&sub.value).map(|_| s)
            }
            ast::Expr::Attribute(a) => {
                if matches!(a.attr.as_str(), "values") {
                    self.target_in(&a.value)
                } else {
                    self.cols_of(&a.value).map(|_| a.attr.to_string())
                }
            }
            ast::Expr::Call(c) => {
                let ast::Expr::Attribute(a) = &*c.func else {
                    return None;
                };
                match a.attr.as_str() {
                    "pop" => c.args.first().and_then(str_const),
                    "astype" | "map" | "to_numpy" | "ravel" | "replace" | "copy" => {
                        self.target_in(&a.value)
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// Columns removed from `name` in place: `df.pop("c")`,
    /// `df.drop(columns=…, inplace=True)`.
    fn mutate(&mut self, c: &ast::ExprCall) {
        let ast::Expr::Attribute(a) = &*c.func else {
            return;
        };
        let ast::Expr::Name(n) = &*a.value else {
            return;
        };
        let name = n.id.to_string();
        let gone: Option<Vec<String>> = match a.attr.as_str() {
            "pop" => c.args.first().and_then(str_const).map(|s| vec![s]),
            "drop"
                if keyword(c, "inplace").is_some_and(|v| {
                    matches!(v, ast::Expr::Constant(k) if matches!(k.value, ast::Constant::Bool(true)))
                }) =>
            {
                let mut probe = c.clone();
                probe.keywords.retain(|k| k.arg.as_deref() != Some("inplace"));
                let before = self.cols.get(&name).cloned();
                let after = self.cols_of(&ast::Expr::Call(probe));
                if let (Some(_), Some(after)) = (before, after) {
                    self.cols.insert(name, after);
                }
                return;
            }
            _ => None,
        };
        if let (Some(gone), Some(c)) = (gone, self.cols.get(&name).cloned()) {
            self.cols.insert(name, c.without(&gone));
        }
    }

    /// Whether `e` is a regressor (its `score` is R², not accuracy): a
    /// name made from, or a call of, such a class.
    fn is_regressor(&self, e: &ast::Expr) -> bool {
        let class = match e {
            ast::Expr::Name(n) => self.class.get(n.id.as_str()).cloned(),
            ast::Expr::Call(c) => callee(c),
            _ => None,
        };
        class.is_some_and(|c| {
            !c.starts_with("Logistic")
                && (c.contains("Regress")
                    || matches!(
                        c.as_str(),
                        "Ridge"
                            | "RidgeCV"
                            | "Lasso"
                            | "LassoCV"
                            | "ElasticNet"
                            | "ElasticNetCV"
                            | "SVR"
                            | "LinearSVR"
                            | "NuSVR"
                            | "BayesianRidge"
                            | "KernelRidge"
                            | "Lars"
                    ))
        })
    }

    /// The frame whose rows `e` takes a subset of, if it does.
    fn row_subset_of(e: &ast::Expr) -> Option<String> {
        let name = |v: &ast::Expr| match v {
            ast::Expr::Name(n) => Some(n.id.to_string()),
            _ => None,
        };
        match e {
            ast::Expr::Subscript(sub) => {
                let (base, on_index) = match &*sub.value {
                    ast::Expr::Attribute(a) if matches!(a.attr.as_str(), "loc" | "iloc") => {
                        (name(&a.value)?, true)
                    }
                    v => (name(v)?, false),
                };
                let rows = match &*sub.slice {
                    ast::Expr::Compare(_) | ast::Expr::BoolOp(_) | ast::Expr::UnaryOp(_) => true,
                    ast::Expr::BinOp(b) => {
                        matches!(b.op, ast::Operator::BitAnd | ast::Operator::BitOr)
                    }
                    ast::Expr::Slice(_) => on_index,
                    _ => false,
                };
                rows.then_some(base)
            }
            ast::Expr::Call(c) => {
                let ast::Expr::Attribute(a) = &*c.func else {
                    return None;
                };
                match a.attr.as_str() {
                    "sample" if keyword(c, "frac").is_some() || !c.args.is_empty() => {
                        name(&a.value)
                    }
                    "drop" if keyword(c, "index").is_some() => name(&a.value),
                    _ => None,
                }
            }
            _ => None,
        }
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
        // Columns, column lists and target vectors (computed before the
        // assignment changes anything).
        let value_cols = self.cols_of(&node.value);
        let value_target = self.target_in(&node.value);
        let value_list = str_list(&node.value);
        if let ast::Expr::Call(c) = &*node.value {
            self.mutate(c);
        }
        if let (Some(base), [one]) = (Self::row_subset_of(&node.value), targets.as_slice()) {
            let subsets = self.row_subsets.entry(base).or_default();
            subsets.insert(one.clone());
            if subsets.len() >= 2 {
                self.holdout = true;
            }
        }
        for t in &node.targets {
            // df["new"] = …: the column is there now.
            if let ast::Expr::Subscript(sub) = t {
                if let (ast::Expr::Name(n), Some(col)) = (&*sub.value, str_const(&sub.slice)) {
                    if let Some(c) = self.cols.get(n.id.as_str()).cloned() {
                        self.cols.insert(n.id.to_string(), c.with(&col));
                    }
                }
            }
        }
        if let [one] = targets.as_slice() {
            if node.targets.len() == 1 && matches!(node.targets[0], ast::Expr::Name(_)) {
                match value_cols {
                    Some(c) => self.cols.insert(one.clone(), c),
                    None => self.cols.remove(one),
                };
                match value_target {
                    Some(t) => self.target_of.insert(one.clone(), t),
                    None => self.target_of.remove(one),
                };
                match value_list {
                    Some(l) => self.lists.insert(one.clone(), l),
                    None => self.lists.remove(one),
                };
            }
        }
        if let ast::Expr::Call(c) = &*node.value {
            if callee(c).as_deref() == Some("train_test_split") {
                // X_train, X_test, y_train, y_test: each pair from one input.
                for (i, t) in targets.iter().enumerate() {
                    let input = c.args.get(i / 2);
                    match input.and_then(|a| self.cols_of(a)) {
                        Some(cols) => self.cols.insert(t.clone(), cols),
                        None => self.cols.remove(t),
                    };
                    match input.and_then(|a| self.target_in(a)) {
                        Some(x) => self.target_of.insert(t.clone(), x),
                        None => self.target_of.remove(t),
                    };
                }
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

    fn visit_stmt_expr(&mut self, node: ast::StmtExpr) {
        if let ast::Expr::Call(c) = &*node.value {
            self.mutate(c);
        }
        self.generic_visit_stmt_expr(node);
    }

    fn visit_stmt_delete(&mut self, node: ast::StmtDelete) {
        for t in &node.targets {
            if let ast::Expr::Subscript(sub) = t {
                if let (ast::Expr::Name(n), Some(col)) = (&*sub.value, str_const(&sub.slice)) {
                    if let Some(c) = self.cols.get(n.id.as_str()).cloned() {
                        self.cols.insert(n.id.to_string(), c.without(&[col]));
                    }
                }
            }
        }
        self.generic_visit_stmt_delete(node);
    }

    fn visit_expr_call(&mut self, node: ast::ExprCall) {
        if let Some(f) = callee(&node) {
            if HOLDOUT.contains(&f.as_str()) {
                self.holdout = true;
            }
            // FM15: which metrics the code computes.
            let scoring = keyword(&node, "scoring");
            if OTHER_METRICS.contains(&f.as_str()) {
                self.other_metric = true;
            } else if let Some(sc) = scoring {
                let names: Vec<String> = str_const(sc)
                    .map(|s| vec![s])
                    .or_else(|| str_list(sc))
                    .or_else(|| match sc {
                        ast::Expr::Dict(d) => d.values.iter().map(str_const).collect(),
                        _ => None,
                    })
                    .unwrap_or_default();
                if names.iter().any(|n| n != "accuracy") || names.is_empty() {
                    // A scorer object (make_scorer(f1_score)) or another
                    // metric's name.
                    self.other_metric = true;
                } else if self.accuracy_at.is_none() {
                    self.accuracy_at =
                        Some((self.pos(&node), format!("{f}(scoring=\"accuracy\")")));
                }
            } else if (f == "accuracy_score"
                || (SCORED_CV.contains(&f.as_str())
                    && !node.args.first().is_some_and(|e| self.is_regressor(e)))
                || (f == "score"
                    && node.args.len() >= 2
                    && !matches!(&*node.func, ast::Expr::Attribute(a) if self.is_regressor(&a.value)))
                || (f == "mean"
                    && matches!(&*node.func, ast::Expr::Attribute(a)
                        if matches!(&*a.value, ast::Expr::Compare(cmp) if matches!(cmp.ops.as_slice(), [ast::CmpOp::Eq])))))
                && self.accuracy_at.is_none()
            {
                let what = match f.as_str() {
                    "accuracy_score" => "accuracy_score".to_string(),
                    "score" => ".score(X, y)".to_string(),
                    "mean" => "(pred == y).mean()".to_string(),
                    cv => format!("{cv} without a scoring"),
                };
                self.accuracy_at = Some((self.pos(&node), what));
            }
            // TF05: a model's features.
            if CV_INPUTS.contains(&f.as_str()) {
                if let (Some(x), y) = (node.args.get(1), node.args.get(2)) {
                    let at = self.pos(&node);
                    let cols = self.cols_of(x);
                    let target = y.and_then(|y| self.target_in(y));
                    self.model_inputs.push((at, f.clone(), cols, target));
                }
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
                    let transformer = class.as_deref().is_some_and(|c| {
                        IMPUTERS.contains(&c) || SCALERS.contains(&c) || SELECTORS.contains(&c)
                    });
                    if f == "fit" && !transformer {
                        if let Some(x) = node.args.first() {
                            let cols = self.cols_of(x);
                            let target = node.args.get(1).and_then(|y| self.target_in(y));
                            let what = format!(
                                "{}fit",
                                class.as_ref().map(|c| format!("{c}.")).unwrap_or_default()
                            );
                            self.model_inputs.push((at, what, cols, target));
                        }
                    }
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
    let imbalanced = opt_bool(M, options, "imbalanced", false)?;
    let target = match options.get("target") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(EvalError::bad_option(M, "target", "a column name")),
    };
    let unavailable: Vec<String> = match options.get("unavailable") {
        None | Some(Value::Null) => vec![],
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| i.as_str().map(str::to_string))
            .collect::<Option<_>>()
            .ok_or_else(|| EvalError::bad_option(M, "unavailable", "a list of column names"))?,
        Some(_) => {
            return Err(EvalError::bad_option(
                M,
                "unavailable",
                "a list of column names",
            ))
        }
    };
    let modes: Vec<String> = match options.get("modes") {
        None | Some(Value::Null) => ALL_MODES
            .iter()
            .filter(|m| (temporal || **m != "FM05") && (imbalanced || **m != "FM15"))
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
    if want("FM15") && imbalanced && !walk.other_metric {
        if let Some((p, what)) = &walk.accuracy_at {
            found.push(format!(
                "FM15 accuracy the only metric on imbalanced data: {what} at {}",
                at(*p)
            ));
        }
    }
    if want("TF05") {
        for (p, what, cols, y) in &walk.model_inputs {
            let Some(cols) = cols else { continue };
            let leak: Vec<&String> = unavailable
                .iter()
                .chain(target.iter())
                .chain(y.iter())
                .filter(|c| cols.has(c))
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            if !leak.is_empty() {
                found.push(format!(
                    "TF05 a column not available at prediction time among the features: {} in {what} at {}",
                    leak.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", "),
                    at(*p)
                ));
                break;
            }
        }
    }
    // Each mode checked: present (named above), absent, or not applicable.
    let present: BTreeSet<&str> = found.iter().filter_map(|f| f.get(..4)).collect();
    let mut absent = vec![];
    // Why a mode does not apply, if it does not.
    let why_not = |m: &str| match m {
        "FM05" if !temporal => Some("not marked temporal"),
        "FM15" if !imbalanced => Some("not marked imbalanced"),
        "FM15" if walk.accuracy_at.is_none() && !walk.other_metric => Some("nothing evaluated"),
        "FM04" | "FM05" | "FM08" | "FM09" | "FM13" if walk.split.is_none() => {
            Some("no train_test_split")
        }
        "TF05" if !walk.model_inputs.iter().any(|i| i.2.is_some()) => {
            Some("no model input whose columns are known")
        }
        _ => None,
    };
    let mut not_applicable = vec![];
    for m in &modes {
        match why_not(m) {
            Some(why) => not_applicable.push(format!("{m} ({why})")),
            None if !present.contains(m.as_str()) => absent.push(m.as_str()),
            None => {}
        }
    }
    let mut rest = vec![];
    if !absent.is_empty() {
        rest.push(format!("absent: {}", absent.join(", ")));
    }
    if !not_applicable.is_empty() {
        rest.push(format!("not applicable: {}", not_applicable.join(", ")));
    }
    let rest = format!("{} in {} source(s)", rest.join("; "), sources.len());
    if found.is_empty() {
        return Ok(Scored::pass(rest));
    }
    Ok(Scored::fail(format!("{} | {rest}", found.join("; "))))
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
    fn each_mode_is_present_absent_or_not_applicable() {
        let code = r#"
import pandas as pd
df = pd.read_csv("c.csv")
X = df.drop(columns=["id"])
y = df["churned"]
X_train, X_test, y_train, y_test = train_test_split(X, y)
m = RandomForestClassifier().fit(X_train, y_train)
print(accuracy_score(y_test, m.predict(X_test)))
"#;
        let s = check(code, serde_json::json!({"imbalanced": true}));
        assert_eq!(s.score, 0.0);
        assert!(
            s.detail.starts_with(
                "FM15 accuracy the only metric on imbalanced data: accuracy_score at the code line 8; \
                 TF05 a column not available at prediction time among the features: churned in RandomForestClassifier.fit at the code line 7 | \
                 absent: FM04, FM06, FM08, FM09, FM13"
            ),
            "{}",
            s.detail
        );
        let fixed = code
            .replace(r#"["id"]"#, r#"["id", "churned"]"#)
            .replace("print(accuracy_score", "print(f1_score");
        let s = check(&fixed, serde_json::json!({"imbalanced": true}));
        assert_eq!(s.score, 1.0, "{}", s.detail);
        let s = check(
            &fixed,
            serde_json::json!({"modes": ["FM05", "FM15", "TF05"]}),
        );
        assert_eq!(
            s.detail,
            "absent: TF05; not applicable: FM05 (not marked temporal), FM15 (not marked imbalanced) in 1 source(s)"
        );
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
