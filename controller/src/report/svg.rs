//! Charts as inline SVG, written here so a report needs nothing at view
//! time: lines with interval bands, grouped bars with error bars, and a
//! bubble chart. Values are fractions in [0, 1] on the y axis unless
//! named.

use std::fmt::Write as _;

/// The series colours (colour-blind safe, Okabe and Ito).
pub const COLOURS: [&str; 8] = [
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000",
];

/// Escapes text for HTML and SVG.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// A point with its interval.
#[derive(Debug, Clone, Copy)]
pub struct Point {
    pub x: f64,
    pub y: f64,
    pub lo: f64,
    pub hi: f64,
}

const W: f64 = 640.0;
const H: f64 = 360.0;
const L: f64 = 60.0;
const R: f64 = 170.0;
const T: f64 = 36.0;
const B: f64 = 50.0;

struct Frame {
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
}

impl Frame {
    fn x(&self, v: f64) -> f64 {
        let span = if self.x1 > self.x0 {
            self.x1 - self.x0
        } else {
            1.0
        };
        L + (v - self.x0) / span * (W - L - R)
    }
    fn y(&self, v: f64) -> f64 {
        let span = if self.y1 > self.y0 {
            self.y1 - self.y0
        } else {
            1.0
        };
        H - B - (v - self.y0) / span * (H - T - B)
    }
}

fn open(title: &str, role: &str) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" data-chart=\"{role}\" viewBox=\"0 0 {W} {H}\" width=\"{W}\" height=\"{H}\" role=\"img\" aria-label=\"{t}\">\
<title>{t}</title><rect width=\"{W}\" height=\"{H}\" fill=\"#fff\"/>\
<text x=\"{cx}\" y=\"22\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">{t}</text>",
        t = esc(title),
        cx = (W - R + L) / 2.0,
    )
}

/// Axes with a percentage y axis (0–100 %) and the given x ticks.
fn axes(
    s: &mut String,
    f: &Frame,
    x_ticks: &[(f64, String)],
    x_label: &str,
    y_label: &str,
    pct: bool,
) {
    let _ = write!(
        s,
        "<line x1=\"{L}\" y1=\"{b}\" x2=\"{r}\" y2=\"{b}\" stroke=\"#333\"/><line x1=\"{L}\" y1=\"{T}\" x2=\"{L}\" y2=\"{b}\" stroke=\"#333\"/>",
        b = H - B,
        r = W - R
    );
    for i in 0..=4 {
        let v = f.y0 + (f.y1 - f.y0) * i as f64 / 4.0;
        let y = f.y(v);
        let label = if pct {
            format!("{:.0} %", 100.0 * v)
        } else {
            format!("{v:.2}")
        };
        let _ = write!(
            s,
            "<line x1=\"{L}\" y1=\"{y:.1}\" x2=\"{r}\" y2=\"{y:.1}\" stroke=\"#ddd\"/><text x=\"{tx}\" y=\"{ty:.1}\" text-anchor=\"end\" font-size=\"11\">{label}</text>",
            r = W - R,
            tx = L - 6.0,
            ty = y + 4.0
        );
    }
    for (v, label) in x_ticks {
        let x = f.x(*v);
        let _ = write!(
            s,
            "<text x=\"{x:.1}\" y=\"{y}\" text-anchor=\"middle\" font-size=\"11\">{}</text>",
            esc(label),
            y = H - B + 16.0
        );
    }
    let _ = write!(
        s,
        "<text x=\"{cx}\" y=\"{y}\" text-anchor=\"middle\" font-size=\"12\">{}</text>\
<text transform=\"translate(16 {cy}) rotate(-90)\" text-anchor=\"middle\" font-size=\"12\">{}</text>",
        esc(x_label),
        esc(y_label),
        cx = (W - R + L) / 2.0,
        y = H - 12.0,
        cy = (H - B + T) / 2.0
    );
}

fn legend(s: &mut String, names: &[String]) {
    for (i, n) in names.iter().enumerate() {
        let y = T + 10.0 + 18.0 * i as f64;
        let _ = write!(
            s,
            "<rect x=\"{x}\" y=\"{ry}\" width=\"12\" height=\"12\" fill=\"{c}\"/><text x=\"{tx}\" y=\"{ty}\" font-size=\"11\" class=\"legend\">{}</text>",
            esc(&shorten(n, 26)),
            x = W - R + 12.0,
            ry = y - 10.0,
            c = COLOURS[i % COLOURS.len()],
            tx = W - R + 30.0,
            ty = y
        );
    }
}

fn shorten(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        s.chars().take(n - 1).collect::<String>() + "…"
    }
}

/// Lines over x (e.g. the step budget) with a band for each point's
/// interval; y is a fraction shown as a percentage.
pub fn lines(title: &str, x_label: &str, y_label: &str, series: &[(String, Vec<Point>)]) -> String {
    let xs: Vec<f64> = series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|p| p.x))
        .collect();
    let (x0, x1) = xs
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    let (x0, x1) = if xs.is_empty() {
        (0.0, 1.0)
    } else if x0 == x1 {
        (x0 - 1.0, x1 + 1.0)
    } else {
        (x0, x1)
    };
    let f = Frame {
        x0,
        x1,
        y0: 0.0,
        y1: 1.0,
    };
    let mut ticks: Vec<f64> = xs.clone();
    ticks.sort_by(f64::total_cmp);
    ticks.dedup();
    let ticks: Vec<(f64, String)> = ticks.into_iter().map(|x| (x, format!("{x}"))).collect();
    let mut s = open(title, "lines");
    axes(&mut s, &f, &ticks, x_label, y_label, true);
    for (i, (_, pts)) in series.iter().enumerate() {
        let c = COLOURS[i % COLOURS.len()];
        if pts.len() >= 2 {
            let mut band: Vec<String> = pts
                .iter()
                .map(|p| format!("{:.1},{:.1}", f.x(p.x), f.y(p.hi)))
                .collect();
            band.extend(
                pts.iter()
                    .rev()
                    .map(|p| format!("{:.1},{:.1}", f.x(p.x), f.y(p.lo))),
            );
            let _ = write!(
                s,
                "<polygon points=\"{}\" fill=\"{c}\" fill-opacity=\"0.15\" stroke=\"none\"/>",
                band.join(" ")
            );
            let line: Vec<String> = pts
                .iter()
                .map(|p| format!("{:.1},{:.1}", f.x(p.x), f.y(p.y)))
                .collect();
            let _ = write!(
                s,
                "<polyline points=\"{}\" fill=\"none\" stroke=\"{c}\" stroke-width=\"2\"/>",
                line.join(" ")
            );
        }
        for p in pts {
            let _ = write!(
                s,
                "<line x1=\"{x:.1}\" y1=\"{lo:.1}\" x2=\"{x:.1}\" y2=\"{hi:.1}\" stroke=\"{c}\" stroke-opacity=\"0.6\"/><circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"4\" fill=\"{c}\"><title>{x0}: {v:.1} % [{l:.1}, {h:.1}]</title></circle>",
                x = f.x(p.x),
                y = f.y(p.y),
                lo = f.y(p.lo),
                hi = f.y(p.hi),
                x0 = p.x,
                v = 100.0 * p.y,
                l = 100.0 * p.lo,
                h = 100.0 * p.hi
            );
        }
    }
    legend(
        &mut s,
        &series.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>(),
    );
    s + "</svg>"
}

/// Bars grouped by `groups` (e.g. stages), one bar per series (a run),
/// each with its interval; a missing value leaves a gap.
pub fn bars(
    title: &str,
    y_label: &str,
    groups: &[String],
    series: &[(String, Vec<Option<Point>>)],
) -> String {
    let f = Frame {
        x0: 0.0,
        x1: groups.len().max(1) as f64,
        y0: 0.0,
        y1: 1.0,
    };
    let mut s = open(title, "bars");
    let ticks: Vec<(f64, String)> = groups
        .iter()
        .enumerate()
        .map(|(i, g)| (i as f64 + 0.5, shorten(g, 14)))
        .collect();
    axes(&mut s, &f, &ticks, "", y_label, true);
    let n = series.len().max(1) as f64;
    let slot = (f.x(1.0) - f.x(0.0)) * 0.8 / n;
    for (j, (_, vals)) in series.iter().enumerate() {
        let c = COLOURS[j % COLOURS.len()];
        for (i, v) in vals.iter().enumerate() {
            let Some(p) = v else { continue };
            let x = f.x(i as f64) + (f.x(1.0) - f.x(0.0)) * 0.1 + slot * j as f64;
            let y = f.y(p.y).min(H - B - 2.0);
            let _ = write!(
                s,
                "<rect class=\"bar\" x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{h:.1}\" fill=\"{c}\"><title>{g}: {v:.1} % [{l:.1}, {hi:.1}]</title></rect>\
<line x1=\"{m:.1}\" y1=\"{ylo:.1}\" x2=\"{m:.1}\" y2=\"{yhi:.1}\" stroke=\"#333\"/>",
                w = slot * 0.9,
                // A zero stays visible as a sliver.
                h = (H - B - y).max(2.0),
                g = esc(&groups[i]),
                v = 100.0 * p.y,
                l = 100.0 * p.lo,
                hi = 100.0 * p.hi,
                m = x + slot * 0.45,
                ylo = f.y(p.lo),
                yhi = f.y(p.hi)
            );
        }
    }
    legend(
        &mut s,
        &series.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>(),
    );
    s + "</svg>"
}

/// One bubble per run and budget: x a latency (seconds), y a success
/// rate, the area proportional to `size` (tokens; all equal when every
/// size is 0).
pub fn bubbles(
    title: &str,
    x_label: &str,
    y_label: &str,
    points: &[(String, f64, f64, f64)],
) -> String {
    let xmax = points.iter().map(|p| p.1).fold(0.0, f64::max);
    let f = Frame {
        x0: 0.0,
        x1: if xmax > 0.0 { xmax * 1.15 } else { 1.0 },
        y0: 0.0,
        y1: 1.0,
    };
    let ticks: Vec<(f64, String)> = (0..=4)
        .map(|i| {
            let v = f.x1 * i as f64 / 4.0;
            let label = if f.x1 >= 20.0 {
                format!("{v:.0}")
            } else {
                format!("{v:.2}")
            };
            (v, label)
        })
        .collect();
    let mut s = open(title, "bubbles");
    axes(&mut s, &f, &ticks, x_label, y_label, true);
    let smax = points.iter().map(|p| p.3).fold(0.0, f64::max);
    for (i, (name, x, y, size)) in points.iter().enumerate() {
        let r = if smax > 0.0 {
            6.0 + 24.0 * (size / smax).sqrt()
        } else {
            10.0
        };
        let _ = write!(
            s,
            "<circle class=\"bubble\" cx=\"{cx:.1}\" cy=\"{cy:.1}\" r=\"{r:.1}\" fill=\"{c}\" fill-opacity=\"0.55\" stroke=\"{c}\"><title>{n}: {y:.1} % at {x:.1} s, {size:.0} tokens</title></circle>",
            cx = f.x(*x),
            cy = f.y(*y),
            c = COLOURS[i % COLOURS.len()],
            n = esc(name),
            y = 100.0 * y,
        );
    }
    legend(
        &mut s,
        &points.iter().map(|p| p.0.clone()).collect::<Vec<_>>(),
    );
    s + "</svg>"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(x: f64, y: f64) -> Point {
        Point {
            x,
            y,
            lo: (y - 0.1).max(0.0),
            hi: (y + 0.1).min(1.0),
        }
    }

    #[test]
    fn charts_are_well_formed_svg_with_one_mark_per_value() {
        let l = lines(
            "Success by budget",
            "steps",
            "success",
            &[("a <b>".into(), vec![p(15.0, 0.2), p(30.0, 0.5)])],
        );
        let b = bars(
            "By stage",
            "success",
            &["wrangling".into(), "modelling".into()],
            &[
                ("a".into(), vec![Some(p(0.0, 0.5)), None]),
                ("b".into(), vec![Some(p(0.0, 0.25)), Some(p(0.0, 1.0))]),
            ],
        );
        let u = bubbles(
            "Quality and latency",
            "s",
            "success",
            &[("a".into(), 10.0, 0.5, 100.0), ("b".into(), 20.0, 0.7, 0.0)],
        );
        for svg in [&l, &b, &u] {
            let doc = roxmltree::Document::parse(svg).expect("well-formed");
            assert_eq!(doc.root_element().tag_name().name(), "svg");
        }
        assert!(l.contains("a &lt;b&gt;") && l.matches("<circle").count() == 2);
        assert_eq!(b.matches("class=\"bar\"").count(), 3);
        assert_eq!(u.matches("class=\"bubble\"").count(), 2);
    }
}
