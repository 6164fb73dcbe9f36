//! `ds_chart_svg`: what a matplotlib (or seaborn, pandas) SVG shows.
//!
//! matplotlib's SVG backend writes `<g id="figure_1">`, one `<g id="axes_N">`
//! per axes and, inside it, `patch_N` groups (the axes background, bars,
//! spines), `line2d_N` groups (data lines), `PathCollection_N` groups
//! (scatter points as `<use>`), `matplotlib.axis_1`/`_2` (ticks, tick labels
//! in `xtick_N`/`ytick_N`, the axis label), `text_N` groups (title) and
//! `legend_N` (the `_N` counters run across the whole figure). Text is a `<text>` element with `svg.fonttype: none`, else
//! glyph paths preceded by a comment holding the string; both are read.
//!
//! The expected artifact is JSON with optional keys, each checked when
//! given: `kind` (`bar`, `barh`, `line`, `scatter`), `title`, `xlabel`,
//! `ylabel` (case-insensitive, whitespace collapsed; the title may also be
//! the figure's suptitle), `values`, `labels` (the category axis's tick
//! labels in order: x, or y for `barh`) and `series` (bars per category slot
//! for bar charts, data lines for `line`, point collections for `scatter`).
//! The chart's axes is the first one with content of the expected kind (or
//! with any bars, lines or points).
//!
//! `values`:
//! - bars: the filled axis-aligned rectangles drawn directly in the axes
//!   (not the axes background, not legend patches), signed relative to the
//!   baseline most bars share (so negative bars read negative), ordered by
//!   category (the nearest tick, in tick order, then position: left to
//!   right, or bottom to top for `barh`; grouped bars interleave their
//!   series). Both sides are divided by their largest magnitude, so heights
//!   right up to scale pass; stacked segments read as their own lengths.
//! - line: the y-values of the first data line, both sides normalised to
//!   their range (min 0, max 1).
//! - scatter: the y-values of all points, normalised to their range.
//!
//! A normalised value matches when it is within `rel_tol` (0.02) of the
//! expected one; `ordered` (true) compares in order, false as sorted
//! multisets. Log-scale and broken axes are not understood.

use roxmltree::{Document, Node, ParsingOptions};
use serde_json::Value;

use super::{bad_expected, collapse_ws, opt_num, short};
use crate::text::{read_result_text, ResultText};
use crate::{opt_bool, result_file, Artifact, EvalError, Options, Scored};

const M: &str = "ds_chart_svg";
/// Pixel coordinates closer than this are the same edge.
const EPS: f64 = 1e-3;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Bar,
    Barh,
    Line,
    Scatter,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Bar => "bar",
            Kind::Barh => "barh",
            Kind::Line => "line",
            Kind::Scatter => "scatter",
        }
    }
}

/// The expected chart.
#[derive(Debug, Default)]
struct Want {
    kind: Option<Kind>,
    title: Option<String>,
    xlabel: Option<String>,
    ylabel: Option<String>,
    values: Option<Vec<f64>>,
    labels: Option<Vec<String>>,
    series: Option<u64>,
}

fn want_of(expected: &Artifact) -> Result<Want, EvalError> {
    let Artifact::Json(v) = expected else {
        return Err(EvalError::wrong_artifact(M, "json", expected));
    };
    let Value::Object(o) = v else {
        return Err(EvalError::wrong_artifact(M, "json object", expected));
    };
    let string = |key: &str| -> Result<Option<String>, EvalError> {
        match o.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(bad_expected(M, key, "a string")),
        }
    };
    let kind = match string("kind")?.as_deref() {
        None => None,
        Some("bar") => Some(Kind::Bar),
        Some("barh") => Some(Kind::Barh),
        Some("line") => Some(Kind::Line),
        Some("scatter") => Some(Kind::Scatter),
        Some(_) => return Err(bad_expected(M, "kind", "bar, barh, line or scatter")),
    };
    let values = match o.get("values") {
        None | Some(Value::Null) => None,
        Some(Value::Array(a)) => Some(
            a.iter()
                .map(|x| x.as_f64().filter(|f| f.is_finite()))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| bad_expected(M, "values", "a list of numbers"))?,
        ),
        Some(_) => return Err(bad_expected(M, "values", "a list of numbers")),
    };
    let labels = match o.get("labels") {
        None | Some(Value::Null) => None,
        Some(Value::Array(a)) => Some(
            a.iter()
                .map(|x| match x {
                    Value::String(s) => Some(s.clone()),
                    Value::Number(n) => Some(n.to_string()),
                    _ => None,
                })
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| bad_expected(M, "labels", "a list of strings"))?,
        ),
        Some(_) => return Err(bad_expected(M, "labels", "a list of strings")),
    };
    let series = match o.get("series") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_u64()
                .ok_or_else(|| bad_expected(M, "series", "a non-negative integer"))?,
        ),
    };
    Ok(Want {
        kind,
        title: string("title")?,
        xlabel: string("xlabel")?,
        ylabel: string("ylabel")?,
        values,
        labels,
        series,
    })
}

pub(crate) fn ds_chart_svg(
    result: &Artifact,
    expected: &Artifact,
    options: &Options,
) -> Result<Scored, EvalError> {
    let rel_tol = opt_num(M, options, "rel_tol", 0.02)?;
    let ordered = opt_bool(M, options, "ordered", true)?;
    let want = want_of(expected)?;
    let path = result_file(M, result)?;
    let text = match read_result_text(path) {
        ResultText::Ok(s) => s,
        ResultText::Fail(s) => return Ok(s),
    };
    let opts = ParsingOptions {
        allow_dtd: true,
        ..ParsingOptions::default()
    };
    let doc = match Document::parse_with_options(&text, opts) {
        Ok(d) => d,
        Err(e) => return Ok(Scored::fail(format!("not an SVG: {e}"))),
    };
    let root = doc.root_element();
    if root.tag_name().name() != "svg" {
        return Ok(Scored::fail(format!(
            "not an SVG: root element <{}>",
            root.tag_name().name()
        )));
    }
    let Some(figure) = root
        .descendants()
        .find(|n| group_id(*n) == Some("figure_1"))
    else {
        return Ok(Scored::fail("not a matplotlib SVG: no figure_1 group"));
    };
    let axes: Vec<Axes> = figure
        .descendants()
        .filter(|n| group_id(*n).is_some_and(|id| id.starts_with("axes_")))
        .map(Axes::read)
        .collect();
    if axes.is_empty() {
        return Ok(Scored::fail("no axes in the chart"));
    }
    let fig_texts: Vec<String> = child_groups(figure, "text_").filter_map(text_of).collect();
    Ok(check(&want, &axes, &fig_texts, rel_tol, ordered))
}

fn check(want: &Want, axes: &[Axes], fig_texts: &[String], rel_tol: f64, ordered: bool) -> Scored {
    let has = |a: &Axes, k: Kind| match k {
        Kind::Bar => !a.bars.is_empty() && !a.horizontal(),
        Kind::Barh => !a.bars.is_empty() && a.horizontal(),
        Kind::Line => !a.lines.is_empty(),
        Kind::Scatter => a.points.iter().any(|p| !p.is_empty()),
    };
    let chosen = match want.kind {
        Some(k) => axes.iter().find(|a| has(a, k)),
        None => axes
            .iter()
            .find(|a| !a.bars.is_empty() || !a.lines.is_empty() || !a.points.is_empty()),
    };
    let ax = match (chosen, want.kind) {
        (Some(a), _) => a,
        (None, Some(k)) => {
            let a = &axes[0];
            let found = a.describe();
            return Scored::fail(format!(
                "kind: expected a {} chart, found {found}",
                k.name()
            ));
        }
        (None, None) => &axes[0],
    };
    let kind = want.kind.or_else(|| ax.kind());

    if let Some(t) = &want.title {
        let mut cands = ax.texts.iter().chain(fig_texts);
        if !cands.any(|c| same_text(c, t)) {
            let shown = ax.texts.last().or(fig_texts.first());
            return Scored::fail(match shown {
                Some(s) => format!("title {:?} != {:?}", short(s), short(t)),
                None => format!("no title, expected {:?}", short(t)),
            });
        }
    }
    for (which, axis, wanted) in [
        ("xlabel", &ax.xaxis, &want.xlabel),
        ("ylabel", &ax.yaxis, &want.ylabel),
    ] {
        if let Some(w) = wanted {
            if !axis.labels.iter().any(|c| same_text(c, w)) {
                return Scored::fail(match axis.labels.first() {
                    Some(s) => format!("{which} {:?} != {:?}", short(s), short(w)),
                    None => format!("no {which}, expected {:?}", short(w)),
                });
            }
        }
    }
    let horizontal = kind == Some(Kind::Barh);
    if let Some(labels) = &want.labels {
        let got = if horizontal {
            &ax.yaxis.tick_labels
        } else {
            &ax.xaxis.tick_labels
        };
        let same =
            got.len() == labels.len() && got.iter().zip(labels).all(|(g, w)| same_text(g, w));
        if !same {
            return Scored::fail(format!(
                "tick labels [{}] != [{}]",
                short(&got.join(", ")),
                short(&labels.join(", "))
            ));
        }
    }
    if let Some(n) = want.series {
        let got = match kind {
            Some(Kind::Bar) | Some(Kind::Barh) => ax.bar_series(),
            Some(Kind::Line) => ax.lines.len(),
            Some(Kind::Scatter) => ax.points.len(),
            None => 0,
        } as u64;
        if got != n {
            return Scored::fail(format!("{got} series, expected {n}"));
        }
    }
    if let Some(values) = &want.values {
        let (got, noun, norm) = match kind {
            Some(Kind::Bar) | Some(Kind::Barh) => (ax.bar_values(), "bars", Norm::Max),
            Some(Kind::Line) => (
                ax.lines
                    .first()
                    .map(|l| l.iter().map(|p| -p.1).collect())
                    .unwrap_or_default(),
                "line points",
                Norm::Range,
            ),
            Some(Kind::Scatter) => (
                ax.points.iter().flatten().map(|p| -p.1).collect(),
                "points",
                Norm::Range,
            ),
            None => (Vec::new(), "values", Norm::Max),
        };
        if let Err(e) = compare_values(&got, values, rel_tol, ordered, norm, noun) {
            return Scored::fail(e);
        }
    }
    let what = match kind {
        Some(k) => format!("{} chart", k.name()),
        None => "chart".to_string(),
    };
    let checked: Vec<&str> = [
        ("kind", want.kind.is_some()),
        ("title", want.title.is_some()),
        ("xlabel", want.xlabel.is_some()),
        ("ylabel", want.ylabel.is_some()),
        ("labels", want.labels.is_some()),
        ("series", want.series.is_some()),
        ("values", want.values.is_some()),
    ]
    .iter()
    .filter(|(_, on)| *on)
    .map(|(k, _)| *k)
    .collect();
    Scored::pass(format!("{what} matches ({})", checked.join(", ")))
}

fn same_text(a: &str, b: &str) -> bool {
    collapse_ws(a).to_lowercase() == collapse_ws(b).to_lowercase()
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Norm {
    /// Divided by the largest magnitude.
    Max,
    /// Scaled to `[0, 1]` by the range.
    Range,
}

fn normalise(xs: &[f64], norm: Norm) -> Vec<f64> {
    match norm {
        Norm::Max => {
            let m = xs.iter().fold(0.0f64, |m, x| m.max(x.abs()));
            if m == 0.0 {
                xs.to_vec()
            } else {
                xs.iter().map(|x| x / m).collect()
            }
        }
        Norm::Range => {
            let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            if hi > lo {
                xs.iter().map(|x| (x - lo) / (hi - lo)).collect()
            } else {
                vec![0.0; xs.len()]
            }
        }
    }
}

fn compare_values(
    got: &[f64],
    want: &[f64],
    tol: f64,
    ordered: bool,
    norm: Norm,
    noun: &str,
) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("{} {noun}, expected {}", got.len(), want.len()));
    }
    let mut g = normalise(got, norm);
    let mut w = normalise(want, norm);
    if !ordered {
        g.sort_by(f64::total_cmp);
        w.sort_by(f64::total_cmp);
    }
    let scale = match norm {
        Norm::Max => "of the largest",
        Norm::Range => "of the range",
    };
    for (i, (a, e)) in g.iter().zip(&w).enumerate() {
        if (a - e).abs() > tol {
            let at = if ordered {
                format!("value {}", i + 1)
            } else {
                format!("sorted value {}", i + 1)
            };
            return Err(format!("{at}: {a:.3} != {e:.3} {scale} (rel_tol {tol})"));
        }
    }
    Ok(())
}

/// An axis-aligned filled rectangle, in pixels (`y` grows downwards).
#[derive(Debug, Clone, PartialEq)]
struct Rect {
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
    fill: String,
}

impl Rect {
    fn contains(&self, o: &Rect) -> bool {
        self.x0 <= o.x0 + EPS
            && o.x1 <= self.x1 + EPS
            && self.y0 <= o.y0 + EPS
            && o.y1 <= self.y1 + EPS
    }
    fn same_box(&self, b: &(f64, f64, f64, f64)) -> bool {
        let close = |a: f64, b: f64| (a - b).abs() < 0.5;
        close(self.x0, b.0) && close(self.x1, b.1) && close(self.y0, b.2) && close(self.y1, b.3)
    }
}

#[derive(Debug, Default)]
struct Axis {
    /// Tick label texts, in tick order.
    tick_labels: Vec<String>,
    /// Tick positions along the axis (pixels), in tick order.
    ticks: Vec<f64>,
    /// The axis label (and offset text).
    labels: Vec<String>,
}

#[derive(Debug, Default)]
struct Axes {
    bars: Vec<Rect>,
    lines: Vec<Vec<(f64, f64)>>,
    points: Vec<Vec<(f64, f64)>>,
    texts: Vec<String>,
    xaxis: Axis,
    yaxis: Axis,
}

impl Axes {
    fn read(node: Node) -> Axes {
        let mut rects = Vec::new();
        let mut frame: Option<(f64, f64, f64, f64)> = None;
        for g in child_groups(node, "patch_") {
            let Some(p) = g
                .children()
                .find(|c| c.is_element() && c.tag_name().name() == "path")
            else {
                continue;
            };
            let d = p.attribute("d").unwrap_or("");
            let fill = fill_of(p);
            if fill == "none" {
                let pts = path_points(d);
                if pts.len() == 2 {
                    let f = frame.get_or_insert((
                        f64::INFINITY,
                        f64::NEG_INFINITY,
                        f64::INFINITY,
                        f64::NEG_INFINITY,
                    ));
                    for (x, y) in pts {
                        f.0 = f.0.min(x);
                        f.1 = f.1.max(x);
                        f.2 = f.2.min(y);
                        f.3 = f.3.max(y);
                    }
                }
                continue;
            }
            if let Some(r) = rect_of(d, fill) {
                rects.push(r);
            }
        }
        // The axes background: the rectangle the spines frame, else a first
        // rectangle that holds all the others.
        let bg = frame
            .and_then(|f| rects.iter().position(|r| r.same_box(&f)))
            .or_else(|| {
                (rects.len() >= 2 && rects[1..].iter().all(|r| rects[0].contains(r))).then_some(0)
            });
        if let Some(i) = bg {
            rects.remove(i);
        }
        let lines = child_groups(node, "line2d_")
            .map(|g| {
                match g
                    .children()
                    .find(|c| c.is_element() && c.tag_name().name() == "path")
                {
                    Some(p) => path_points(p.attribute("d").unwrap_or("")),
                    None => use_points(g),
                }
            })
            .filter(|pts| !pts.is_empty())
            .collect();
        let points = child_groups(node, "PathCollection_")
            .map(use_points)
            .filter(|pts| !pts.is_empty())
            .collect();
        let texts = child_groups(node, "text_").filter_map(text_of).collect();
        // Axis group ids count across the figure (`matplotlib.axis_3` is the
        // second axes' x axis): the x axis is the one with `xtick_` groups,
        // else the first.
        let axis_groups: Vec<Node> = child_groups(node, "matplotlib.axis_").collect();
        let axis = |nth: usize, tick: &'static str, horizontal: bool| -> Axis {
            let found = axis_groups
                .iter()
                .find(|a| child_groups(**a, tick).next().is_some())
                .or_else(|| axis_groups.get(nth));
            let Some(&a) = found else {
                return Axis::default();
            };
            let mut out = Axis {
                labels: child_groups(a, "text_").filter_map(text_of).collect(),
                ..Axis::default()
            };
            for t in child_groups(a, tick) {
                if let Some(label) = child_groups(t, "text_").find_map(text_of) {
                    if !label.trim().is_empty() {
                        out.tick_labels.push(label);
                    }
                }
                let pos = child_groups(t, "line2d_")
                    .flat_map(use_points)
                    .next()
                    .map(|(x, y)| if horizontal { x } else { y });
                if let Some(p) = pos {
                    out.ticks.push(p);
                }
            }
            out
        };
        Axes {
            bars: rects,
            lines,
            points,
            texts,
            xaxis: axis(0, "xtick_", true),
            yaxis: axis(1, "ytick_", false),
        }
    }

    /// Whether the bars are horizontal: they share more x edges (the
    /// baseline) than y edges; ties go to vertical unless only the bar
    /// thicknesses (heights) are all equal.
    fn horizontal(&self) -> bool {
        let ys: Vec<f64> = self.bars.iter().flat_map(|r| [r.y0, r.y1]).collect();
        let xs: Vec<f64> = self.bars.iter().flat_map(|r| [r.x0, r.x1]).collect();
        let (v, h) = (mode(&ys).1, mode(&xs).1);
        if v != h {
            return h > v;
        }
        let widths: Vec<f64> = self.bars.iter().map(|r| r.x1 - r.x0).collect();
        let heights: Vec<f64> = self.bars.iter().map(|r| r.y1 - r.y0).collect();
        let all_eq = |xs: &[f64]| xs.windows(2).all(|w| (w[0] - w[1]).abs() < EPS);
        !all_eq(&widths) && all_eq(&heights)
    }

    fn kind(&self) -> Option<Kind> {
        if !self.bars.is_empty() {
            Some(if self.horizontal() {
                Kind::Barh
            } else {
                Kind::Bar
            })
        } else if !self.lines.is_empty() {
            Some(Kind::Line)
        } else if !self.points.is_empty() {
            Some(Kind::Scatter)
        } else {
            None
        }
    }

    fn describe(&self) -> String {
        let mut parts = Vec::new();
        if !self.bars.is_empty() {
            let o = if self.horizontal() {
                "horizontal"
            } else {
                "vertical"
            };
            parts.push(format!("{} {o} bars", self.bars.len()));
        }
        if !self.lines.is_empty() {
            parts.push(format!("{} lines", self.lines.len()));
        }
        let n: usize = self.points.iter().map(Vec::len).sum();
        if n > 0 {
            parts.push(format!("{n} scatter points"));
        }
        if parts.is_empty() {
            "no bars, lines or points".to_string()
        } else {
            parts.join(", ")
        }
    }

    /// The category axis's tick positions and each bar's position along it
    /// (growing in the axis's direction: right, or up for `barh`).
    fn bar_slots(&self) -> (Vec<f64>, Vec<f64>) {
        if self.horizontal() {
            let ticks = self.yaxis.ticks.iter().map(|y| -y).collect();
            (
                ticks,
                self.bars.iter().map(|r| -(r.y0 + r.y1) / 2.0).collect(),
            )
        } else {
            (
                self.xaxis.ticks.clone(),
                self.bars.iter().map(|r| (r.x0 + r.x1) / 2.0).collect(),
            )
        }
    }

    /// Each bar's nearest category tick (its index), if there are ticks.
    fn bar_ticks(&self) -> Vec<Option<usize>> {
        let (ticks, centres) = self.bar_slots();
        centres
            .iter()
            .map(|c| {
                ticks
                    .iter()
                    .enumerate()
                    .min_by(|a, b| (a.1 - c).abs().total_cmp(&(b.1 - c).abs()))
                    .map(|(i, _)| i)
            })
            .collect()
    }

    /// Bars per category slot (ticks), or distinct bar colours without ticks.
    fn bar_series(&self) -> usize {
        let slots = self.bar_ticks();
        if slots.iter().all(Option::is_some) && !slots.is_empty() {
            let mut counts = std::collections::HashMap::new();
            for s in slots.iter().flatten() {
                *counts.entry(*s).or_insert(0usize) += 1;
            }
            counts.values().copied().max().unwrap_or(0)
        } else {
            let mut fills: Vec<&str> = self.bars.iter().map(|r| r.fill.as_str()).collect();
            fills.sort_unstable();
            fills.dedup();
            fills.len()
        }
    }

    /// Signed bar lengths in category order.
    fn bar_values(&self) -> Vec<f64> {
        let horizontal = self.horizontal();
        let edges: Vec<f64> = if horizontal {
            self.bars.iter().flat_map(|r| [r.x0, r.x1]).collect()
        } else {
            self.bars.iter().flat_map(|r| [r.y1, r.y0]).collect()
        };
        let base = mode(&edges).0;
        let (_, centres) = self.bar_slots();
        let slots = self.bar_ticks();
        let mut order: Vec<usize> = (0..self.bars.len()).collect();
        order.sort_by(|&a, &b| {
            slots[a]
                .cmp(&slots[b])
                .then(centres[a].total_cmp(&centres[b]))
        });
        order
            .iter()
            .map(|&i| {
                let r = &self.bars[i];
                if horizontal {
                    let len = r.x1 - r.x0;
                    if (r.x0 + r.x1) / 2.0 >= base - EPS {
                        len
                    } else {
                        -len
                    }
                } else {
                    let len = r.y1 - r.y0;
                    if (r.y0 + r.y1) / 2.0 <= base + EPS {
                        len
                    } else {
                        -len
                    }
                }
            })
            .collect()
    }
}

/// The most frequent value (within `EPS`; the first such on ties) and its
/// count.
fn mode(xs: &[f64]) -> (f64, usize) {
    let mut best = (f64::NAN, 0usize);
    for &x in xs {
        let n = xs.iter().filter(|&&y| (x - y).abs() < EPS).count();
        if n > best.1 {
            best = (x, n);
        }
    }
    best
}

fn group_id<'a>(n: Node<'a, '_>) -> Option<&'a str> {
    if n.is_element() && n.tag_name().name() == "g" {
        n.attribute("id")
    } else {
        None
    }
}

/// The `<g>` children of `n` whose id starts with `prefix`.
fn child_groups<'a, 'i>(
    n: Node<'a, 'i>,
    prefix: &'static str,
) -> impl Iterator<Item = Node<'a, 'i>> {
    n.children()
        .filter(move |c| group_id(*c).is_some_and(|id| id.starts_with(prefix)))
}

/// The string a `text_N` group draws: its `<text>` elements' content, or the
/// comment matplotlib writes before glyph paths.
fn text_of(g: Node) -> Option<String> {
    let texts: Vec<String> = g
        .descendants()
        .filter(|n| n.is_element() && n.tag_name().name() == "text")
        .map(|t| {
            t.descendants()
                .filter(|d| d.is_text())
                .filter_map(|d| d.text())
                .collect()
        })
        .collect();
    if !texts.is_empty() {
        return Some(texts.join(" "));
    }
    g.children()
        .find(|n| n.is_comment())
        .and_then(|c| c.text())
        .map(unescape_comment)
}

/// Undo matplotlib's comment escaping (`&`, `<`, `>` as entities; `--` as
/// `- -`).
fn unescape_comment(s: &str) -> String {
    let mut t = s.trim().to_string();
    while t.contains("- -") {
        t = t.replace("- -", "--");
    }
    t.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// A path's fill: the `style`'s `fill`, else the `fill` attribute, else
/// black (SVG's default, which matplotlib leaves implicit).
fn fill_of(p: Node) -> String {
    if let Some(style) = p.attribute("style") {
        for decl in style.split(';') {
            if let Some((k, v)) = decl.split_once(':') {
                if k.trim() == "fill" {
                    return v.trim().to_string();
                }
            }
        }
    }
    p.attribute("fill").unwrap_or("#000000").trim().to_string()
}

/// The end points of a path's segments (`M`, `L`, and the ends of `Q`/`C`),
/// absolute commands only as matplotlib writes them.
fn path_points(d: &str) -> Vec<(f64, f64)> {
    let mut pts = Vec::new();
    let mut cmd = ' ';
    let mut nums: Vec<f64> = Vec::new();
    let flush = |cmd: char, nums: &mut Vec<f64>, pts: &mut Vec<(f64, f64)>| {
        let per = match cmd {
            'M' | 'L' => 2,
            'Q' => 4,
            'C' => 6,
            _ => 0,
        };
        if per > 0 {
            for chunk in nums.chunks_exact(per) {
                pts.push((chunk[per - 2], chunk[per - 1]));
            }
        }
        nums.clear();
    };
    for tok in d
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|t| !t.is_empty())
    {
        let mut chars = tok.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) if c.is_ascii_alphabetic() => {
                flush(cmd, &mut nums, &mut pts);
                cmd = c;
            }
            _ => {
                if let Ok(x) = tok.parse::<f64>() {
                    nums.push(x);
                }
            }
        }
    }
    flush(cmd, &mut nums, &mut pts);
    pts
}

/// A closed axis-aligned rectangle path (`M a L b L c L d z`).
fn rect_of(d: &str, fill: String) -> Option<Rect> {
    if !d.trim_end().ends_with(['z', 'Z']) || d.contains(['Q', 'C', 'q', 'c', 'l', 'm']) {
        return None;
    }
    let mut pts = path_points(d);
    if pts.len() == 5 && pts[0] == pts[4] {
        pts.pop();
    }
    if pts.len() != 4 {
        return None;
    }
    for i in 0..4 {
        let (a, b) = (pts[i], pts[(i + 1) % 4]);
        if (a.0 - b.0).abs() > EPS && (a.1 - b.1).abs() > EPS {
            return None;
        }
    }
    let xs = pts.iter().map(|p| p.0);
    let ys = pts.iter().map(|p| p.1);
    Some(Rect {
        x0: xs.clone().fold(f64::INFINITY, f64::min),
        x1: xs.fold(f64::NEG_INFINITY, f64::max),
        y0: ys.clone().fold(f64::INFINITY, f64::min),
        y1: ys.fold(f64::NEG_INFINITY, f64::max),
        fill,
    })
}

/// The `x`, `y` of the `<use>` elements under `g`.
fn use_points(g: Node) -> Vec<(f64, f64)> {
    g.descendants()
        .filter(|n| n.is_element() && n.tag_name().name() == "use")
        .filter_map(|u| {
            let x = u.attribute("x")?.trim().parse::<f64>().ok()?;
            let y = u.attribute("y")?.trim().parse::<f64>().ok()?;
            Some((x, y))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rectangles_are_closed_axis_aligned_four_point_paths() {
        let r = rect_of("M 1 10 \nL 3 10 \nL 3 2 \nL 1 2 \nz\n", "#1f77b4".into());
        assert_eq!(
            r,
            Some(Rect {
                x0: 1.0,
                x1: 3.0,
                y0: 2.0,
                y1: 10.0,
                fill: "#1f77b4".into()
            })
        );
        assert_eq!(rect_of("M 1 10 L 3 10 L 3 2 L 1 2", "#000".into()), None);
        assert_eq!(rect_of("M 1 10 L 3 9 L 3 2 L 1 2 z", "#000".into()), None);
        assert_eq!(rect_of("M 1 10 Q 3 10 3 2 L 1 2 z", "#000".into()), None);
    }

    #[test]
    fn comments_are_unescaped_as_matplotlib_escapes_them() {
        assert_eq!(unescape_comment(" a- -b &amp; &lt;c&gt; "), "a--b & <c>");
        assert_eq!(unescape_comment("- - -"), "---");
    }

    #[test]
    fn normalising_by_max_keeps_signs_and_by_range_maps_to_unit() {
        assert_eq!(normalise(&[2.0, -4.0], Norm::Max), vec![0.5, -1.0]);
        assert_eq!(
            normalise(&[2.0, 4.0, 3.0], Norm::Range),
            vec![0.0, 1.0, 0.5]
        );
        assert_eq!(normalise(&[2.0, 2.0], Norm::Range), vec![0.0, 0.0]);
    }
}
