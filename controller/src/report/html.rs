//! The report's pages as HTML strings: the index (an overview per run and
//! budget, charts, comparisons, breakdowns, failure analysis, the task
//! table) and one page per episode (instruction, sub-checks, timings, a
//! filmstrip of the screenshots with the actions drawn over them, the raw
//! responses). Everything is inline or a relative file beside the page:
//! a report opens from disk with no network.

use super::compare::{p_text, Comparison, Interval};
use super::failures::{actions_of, png_size, Failure, CATEGORIES};
use super::summary::{episode_key, BudgetSummary, Row, RunSummary};
use super::svg::{self, esc, Point};
use crate::episode::EpisodeResult;
use protocol::action::{Action, Button};
use protocol::result::TrajectoryStep;
use std::fmt::Write as _;

const STYLE: &str = "body{font-family:DejaVu Sans,Arial,sans-serif;margin:24px;color:#222;max-width:1400px}\
table{border-collapse:collapse;margin:8px 0 16px}th,td{border:1px solid #ccc;padding:3px 8px;text-align:left;font-size:13px}\
th{background:#f2f2f2}td.n{text-align:right;font-variant-numeric:tabular-nums}.ok{color:#05702f}.bad{color:#a40000}\
.unscored{color:#8a5a00}pre{background:#f7f7f7;padding:8px;white-space:pre-wrap;font-size:12px}\
figure.step{display:inline-block;vertical-align:top;width:640px;margin:0 12px 16px 0}figure.step svg{width:640px;height:auto;border:1px solid #999}\
figcaption{font-size:12px}.charts svg{margin:0 12px 12px 0;border:1px solid #eee}";

/// One episode as the index sees it: which run, its result, its
/// failure analysis, and its page relative to the index.
pub struct EpisodeRow<'a> {
    pub run: usize,
    pub result: &'a EpisodeResult,
    pub failure: Option<&'a Failure>,
    pub page: String,
}

fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head><body>\n{body}\n</body></html>\n",
        esc(title)
    )
}

fn pct(i: &Interval) -> String {
    format!(
        "{:.1} % <small>[{:.1}, {:.1}]</small>",
        100.0 * i.value,
        100.0 * i.lo,
        100.0 * i.hi
    )
}

fn num(i: &Interval) -> String {
    format!("{:.3} <small>[{:.3}, {:.3}]</small>", i.value, i.lo, i.hi)
}

fn point(i: &Interval, x: f64) -> Point {
    Point {
        x,
        y: i.value,
        lo: i.lo,
        hi: i.hi,
    }
}

fn run_name(i: usize, s: &RunSummary) -> String {
    format!("R{}: {}", i + 1, s.label)
}

/// The index page.
pub fn index(
    summaries: &[RunSummary],
    comparisons: &[(usize, Result<Vec<Comparison>, String>)],
    episodes: &[EpisodeRow],
    generated: &str,
) -> String {
    let mut b = String::new();
    let _ = write!(
        b,
        "<h1>deskenv report</h1><p>{} run(s), {} episode(s). {}. Intervals are 95 % bootstrap intervals over tasks ({} resamples, seed {}); episodes without a score (environment or setup errors) are counted apart and never in a rate.</p>",
        summaries.len(),
        episodes.len(),
        esc(generated),
        summaries.first().map_or(0, |s| s.bootstrap_resamples),
        summaries.first().map_or(0, |s| s.bootstrap_seed),
    );
    overview(&mut b, summaries);
    charts(&mut b, summaries);
    compared(&mut b, comparisons);
    breakdowns(&mut b, summaries);
    failures(&mut b, summaries, episodes);
    unscored(&mut b, summaries);
    tasks(&mut b, episodes);
    page("deskenv report", &b)
}

fn overview(b: &mut String, summaries: &[RunSummary]) {
    b.push_str("<h2 id=\"overview\">Overview</h2><table class=\"overview\"><tr><th>run</th><th>budget</th><th>episodes</th><th>scored</th><th>success rate</th><th>mean score</th><th>pass@k</th><th>mean steps</th><th>median episode s (agent / environment)</th><th>median step ms (agent / environment)</th><th>tokens (prompt / completion)</th><th>cost</th><th>unscored</th></tr>");
    for (i, s) in summaries.iter().enumerate() {
        for bs in &s.budgets {
            let (scored, rate, score) = match &bs.overall {
                Some(r) => (r.episodes, pct(&r.success), num(&r.score)),
                None => (0, "—".into(), "—".into()),
            };
            let pass = if bs.pass_at_k.is_empty() {
                "—".to_string()
            } else {
                bs.pass_at_k
                    .iter()
                    .map(|(k, v)| format!("@{k} {:.1} %", 100.0 * v))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let l = &bs.latency;
            let _ = write!(
                b,
                "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{scored}</td><td class=\"n\">{rate}</td><td class=\"n\">{score}</td><td>{pass}</td><td class=\"n\">{:.1}</td><td class=\"n\">{:.1} ({:.1} / {:.1})</td><td class=\"n\">{:.0} / {:.0}</td><td class=\"n\">{} / {}</td><td class=\"n\">{}</td><td class=\"n unscored\">{}</td></tr>",
                esc(&run_name(i, s)),
                bs.budget,
                bs.episodes,
                bs.steps_mean,
                l.episode_median_s,
                l.agent_median_s,
                l.env_median_s,
                l.step_agent_median_ms,
                l.step_env_median_ms,
                bs.prompt_tokens,
                bs.completion_tokens,
                bs.cost.map_or("—".into(), |c| format!("${c:.2}")),
                bs.env_errors.len() + bs.setup_errors.len(),
            );
        }
    }
    b.push_str("</table>");
}

fn charts(b: &mut String, summaries: &[RunSummary]) {
    b.push_str("<h2 id=\"charts\">Charts</h2><div class=\"charts\">");
    let by_budget: Vec<(String, Vec<Point>)> = summaries
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let pts = s
                .budgets
                .iter()
                .filter_map(|bs| {
                    bs.overall
                        .as_ref()
                        .map(|r| point(&r.success, bs.budget as f64))
                })
                .collect();
            (run_name(i, s), pts)
        })
        .collect();
    b.push_str(&svg::lines(
        "Success rate by step budget",
        "step budget",
        "success rate",
        &by_budget,
    ));
    // By stage, each run at its largest budget.
    let mut groups: Vec<String> = summaries
        .iter()
        .flat_map(|s| s.budgets.iter().flat_map(|b| b.by_category.iter()))
        .map(|r| r.key.clone())
        .collect();
    groups.sort();
    groups.dedup();
    let series: Vec<(String, Vec<Option<Point>>)> = summaries
        .iter()
        .enumerate()
        .filter_map(|(i, s)| {
            let bs = s.budgets.last()?;
            let vals = groups
                .iter()
                .map(|g| {
                    bs.by_category
                        .iter()
                        .find(|r| &r.key == g)
                        .map(|r| point(&r.rates.success, 0.0))
                })
                .collect();
            Some((format!("{} @{}", run_name(i, s), bs.budget), vals))
        })
        .collect();
    if !groups.is_empty() {
        b.push_str(&svg::bars(
            "Success rate by stage (largest budget)",
            "success rate",
            &groups,
            &series,
        ));
    }
    let bubbles: Vec<(String, f64, f64, f64)> = summaries
        .iter()
        .enumerate()
        .flat_map(|(i, s)| {
            s.budgets.iter().filter_map(move |bs| {
                let r = bs.overall.as_ref()?;
                Some((
                    format!("R{} @{}", i + 1, bs.budget),
                    bs.latency.episode_median_s,
                    r.success.value,
                    (bs.prompt_tokens + bs.completion_tokens) as f64,
                ))
            })
        })
        .collect();
    b.push_str(&svg::bubbles(
        "Success against latency (area: tokens)",
        "median episode seconds",
        "success rate",
        &bubbles,
    ));
    b.push_str("</div>");
}

fn compared(b: &mut String, comparisons: &[(usize, Result<Vec<Comparison>, String>)]) {
    if comparisons.is_empty() {
        return;
    }
    b.push_str("<h2 id=\"comparisons\">Comparisons with R1</h2><table class=\"comparisons\"><tr><th>runs</th><th>budget</th><th>paired</th><th>success A</th><th>success B</th><th>A − B</th><th>McNemar (A only / B only)</th><th>mean score A − B</th><th>permutation</th><th>smallest detectable difference</th></tr>");
    let mut texts = String::new();
    for (j, cs) in comparisons {
        let names = format!("R1 vs R{}", j + 1);
        match cs {
            Err(e) => {
                let _ = write!(
                    b,
                    "<tr><td>{names}</td><td colspan=\"9\" class=\"bad\">not compared: {}</td></tr>",
                    esc(e)
                );
            }
            Ok(cs) => {
                for c in cs {
                    let _ = write!(
                        b,
                        "<tr><td>{names}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{:+.1} pts <small>[{:+.1}, {:+.1}]</small></td><td class=\"n\">{} / {}: {}</td><td class=\"n\">{:+.3} <small>[{:+.3}, {:+.3}]</small></td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                        c.budget,
                        c.paired,
                        pct(&c.success_a),
                        pct(&c.success_b),
                        100.0 * c.success_diff.value,
                        100.0 * c.success_diff.lo,
                        100.0 * c.success_diff.hi,
                        c.mcnemar_a_only,
                        c.mcnemar_b_only,
                        p_text(c.mcnemar_p),
                        c.score_diff.value,
                        c.score_diff.lo,
                        c.score_diff.hi,
                        p_text(c.permutation_p),
                        c.mdd_success
                            .map_or("—".into(), |m| format!("{:.1} pts", 100.0 * m)),
                    );
                    texts.push_str(&c.text());
                }
            }
        }
    }
    let _ = write!(
        b,
        "</table><details><summary>In words</summary><pre>{}</pre></details>",
        esc(&texts)
    );
}

fn breakdown_table(b: &mut String, title: &str, rows: &[Row]) {
    if rows.is_empty() {
        return;
    }
    let _ = write!(
        b,
        "<h4>{}</h4><table class=\"breakdown\"><tr><th>{}</th><th>episodes</th><th>successes</th><th>success rate</th><th>mean score</th></tr>",
        esc(title),
        esc(title)
    );
    for r in rows {
        let _ = write!(
            b,
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            esc(&r.key),
            r.rates.episodes,
            r.rates.successes,
            pct(&r.rates.success),
            num(&r.rates.score)
        );
    }
    b.push_str("</table>");
}

fn breakdowns(b: &mut String, summaries: &[RunSummary]) {
    b.push_str("<h2 id=\"breakdowns\">Breakdowns</h2>");
    for (i, s) in summaries.iter().enumerate() {
        for bs in &s.budgets {
            let _ = write!(
                b,
                "<details open><summary><b>{}</b>, budget {}</summary>",
                esc(&run_name(i, s)),
                bs.budget
            );
            breakdown_table(b, "stage", &bs.by_category);
            breakdown_table(b, "difficulty", &bs.by_difficulty);
            breakdown_table(b, "application", &bs.by_app);
            breakdown_table(b, "domain", &bs.by_domain);
            breakdown_table(b, "sub-check", &bs.by_check);
            ends(b, bs);
            b.push_str("</details>");
        }
    }
    let any_first = summaries.iter().any(|s| s.budgets.len() > 1);
    if any_first {
        b.push_str("<h3>Smallest budget at which each task succeeded</h3><table class=\"first-success\"><tr><th>task</th>");
        for (i, _) in summaries.iter().enumerate() {
            let _ = write!(b, "<th>R{}</th>", i + 1);
        }
        b.push_str("</tr>");
        let mut keys: Vec<&String> = summaries
            .iter()
            .flat_map(|s| s.first_success.iter().map(|(k, _)| k))
            .collect();
        keys.sort();
        keys.dedup();
        for k in keys {
            let _ = write!(b, "<tr><td>{}</td>", esc(k));
            for s in summaries {
                let v = s
                    .first_success
                    .iter()
                    .find(|(x, _)| x == k)
                    .map(|(_, v)| *v);
                let cell = match v {
                    Some(Some(n)) => format!("{n}"),
                    Some(None) => "never".into(),
                    None => "—".into(),
                };
                let _ = write!(b, "<td class=\"n\">{cell}</td>");
            }
            b.push_str("</tr>");
        }
        b.push_str("</table>");
    }
}

fn ends(b: &mut String, bs: &BudgetSummary) {
    b.push_str("<h4>end reasons</h4><table class=\"ends\"><tr>");
    for k in bs.ends.keys() {
        let _ = write!(b, "<th>{}</th>", esc(k));
    }
    b.push_str("</tr><tr>");
    for v in bs.ends.values() {
        let _ = write!(b, "<td class=\"n\">{v}</td>");
    }
    b.push_str("</tr></table>");
}

fn failures(b: &mut String, summaries: &[RunSummary], episodes: &[EpisodeRow]) {
    b.push_str("<h2 id=\"failures\">Failure analysis</h2><p>Each scored, failed episode gets the first category whose signal its trajectory shows, in this order.</p><table class=\"failure-counts\"><tr><th>category</th>");
    for (i, _) in summaries.iter().enumerate() {
        let _ = write!(b, "<th>R{}</th>", i + 1);
    }
    b.push_str("</tr>");
    for c in CATEGORIES {
        let _ = write!(b, "<tr><td>{c}</td>");
        for (i, _) in summaries.iter().enumerate() {
            let n = episodes
                .iter()
                .filter(|e| e.run == i && e.failure.is_some_and(|f| f.category == c))
                .count();
            let _ = write!(b, "<td class=\"n\">{n}</td>");
        }
        b.push_str("</tr>");
    }
    b.push_str("</table>");
    let failed: Vec<&EpisodeRow> = episodes.iter().filter(|e| e.failure.is_some()).collect();
    if failed.is_empty() {
        return;
    }
    b.push_str("<table class=\"failures\"><tr><th>run</th><th>episode</th><th>budget</th><th>category</th><th>went wrong at step</th><th>why</th><th>sub-checks passed</th></tr>");
    for e in failed {
        let f = e.failure.expect("filtered");
        let _ = write!(
            b,
            "<tr><td>R{}</td><td><a href=\"{}\">{}</a></td><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{} / {}</td></tr>",
            e.run + 1,
            esc(&e.page),
            esc(&f.episode),
            e.result.max_steps,
            f.category,
            f.departed_at.map_or("—".into(), |s| s.to_string()),
            esc(&f.why),
            f.signals.checks_passed.len(),
            f.signals.checks_total
        );
    }
    b.push_str("</table>");
}

fn unscored(b: &mut String, summaries: &[RunSummary]) {
    let any = summaries
        .iter()
        .flat_map(|s| &s.budgets)
        .any(|bs| !bs.env_errors.is_empty() || !bs.setup_errors.is_empty());
    b.push_str("<h2 id=\"unscored\">Episodes without a score</h2>");
    if !any {
        b.push_str("<p>None: every episode was scored.</p>");
        return;
    }
    b.push_str("<table class=\"unscored\"><tr><th>run</th><th>budget</th><th>kind</th><th>episode and cause</th></tr>");
    for (i, s) in summaries.iter().enumerate() {
        for bs in &s.budgets {
            for (kind, list) in [
                ("environment error", &bs.env_errors),
                ("setup error", &bs.setup_errors),
            ] {
                for e in list {
                    let _ = write!(
                        b,
                        "<tr><td>R{}</td><td class=\"n\">{}</td><td class=\"unscored\">{kind}</td><td>{}</td></tr>",
                        i + 1,
                        bs.budget,
                        esc(e)
                    );
                }
            }
        }
    }
    b.push_str("</table>");
}

fn status_cell(r: &EpisodeResult) -> String {
    if !r.is_scored() {
        format!("<span class=\"unscored\">{}</span>", r.status.as_str())
    } else if r.success {
        "<span class=\"ok\">success</span>".into()
    } else {
        "<span class=\"bad\">failed</span>".into()
    }
}

fn tasks(b: &mut String, episodes: &[EpisodeRow]) {
    b.push_str("<h2 id=\"tasks\">Episodes</h2><table class=\"tasks\"><tr><th>run</th><th>task</th><th>stage</th><th>seed</th><th>repeat</th><th>budget</th><th>outcome</th><th>score</th><th>steps</th><th>seconds</th><th>end</th><th>failure</th></tr>");
    for e in episodes {
        let r = e.result;
        let _ = write!(
            b,
            "<tr><td>R{}</td><td><a href=\"{}\">{}</a></td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{:.3}</td><td class=\"n\">{}</td><td class=\"n\">{:.1}</td><td>{}</td><td>{}</td></tr>",
            e.run + 1,
            esc(&e.page),
            esc(&r.task_id),
            esc(r.category.as_deref().unwrap_or("")),
            r.seed,
            r.repeat.map_or("—".into(), |x| x.to_string()),
            r.max_steps,
            status_cell(r),
            r.score,
            r.steps_used,
            r.timings.total_s,
            esc(&super::summary::end_name(r.end)),
            e.failure.map_or("", |f| f.category),
        );
    }
    b.push_str("</table>");
}

/// One step of the filmstrip: the screenshot the agent saw (a file beside
/// the page, None when missing), its size, and the trajectory lines
/// decided on it.
pub struct Frame<'a> {
    pub shot: Option<String>,
    pub size: (u32, u32),
    pub lines: Vec<&'a TrajectoryStep>,
}

/// Groups consecutive trajectory lines that share a screenshot.
pub fn frames<'a>(
    traj: &'a [TrajectoryStep],
    mut shot_of: impl FnMut(&str) -> Option<(String, Vec<u8>)>,
) -> Vec<Frame<'a>> {
    let mut out: Vec<Frame> = vec![];
    let mut last_file: Option<&str> = None;
    for t in traj {
        if last_file == Some(t.screenshot_file.as_str()) && !t.screenshot_file.is_empty() {
            if let Some(f) = out.last_mut() {
                f.lines.push(t);
                continue;
            }
        }
        last_file = Some(t.screenshot_file.as_str());
        let (shot, size) = match shot_of(&t.screenshot_file) {
            Some((name, bytes)) => (Some(name), png_size(&bytes).unwrap_or((1920, 1080))),
            None => (None, (1920, 1080)),
        };
        out.push(Frame {
            shot,
            size,
            lines: vec![t],
        });
    }
    out
}

fn shorten(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        s.chars().take(n - 1).collect::<String>() + "…"
    }
}

/// The marks of a frame's actions over its screenshot: a numbered circle
/// per click (blue left, orange right, a double ring for a double click),
/// an arrow per drag from where the pointer was, a dashed line per move,
/// and a label per typed text, key and scroll. `pointer` is where the
/// pointer was before the frame, and is moved on; `marker` is the id of
/// the arrowhead marker the drags end in.
pub fn overlay(
    lines: &[&TrajectoryStep],
    size: (u32, u32),
    pointer: &mut Option<(f64, f64)>,
    marker: &str,
) -> String {
    let mut s = String::new();
    // Marks keep their size on the page whatever the screen size.
    let unit = size.0 as f64 / 960.0;
    let mut labels: Vec<String> = vec![];
    let mut n = 0;
    for t in lines {
        let Ok(actions) = actions_of(t) else { continue };
        for a in actions {
            let at = a.point().or(*pointer);
            match &a {
                Action::MoveTo { x, y } => {
                    if let Some((px, py)) = *pointer {
                        let _ = write!(s, "<line class=\"mark move\" x1=\"{px:.0}\" y1=\"{py:.0}\" x2=\"{x:.0}\" y2=\"{y:.0}\" stroke=\"#555\" stroke-width=\"{w:.1}\" stroke-dasharray=\"{d:.0}\"/>", w = 3.0 * unit, d = 12.0 * unit);
                    }
                    let _ = write!(s, "<circle class=\"mark move\" cx=\"{x:.0}\" cy=\"{y:.0}\" r=\"{r:.1}\" fill=\"none\" stroke=\"#555\" stroke-width=\"{w:.1}\"/>", r = 8.0 * unit, w = 3.0 * unit);
                }
                Action::DragTo { x, y, .. } => {
                    let (px, py) = pointer.unwrap_or((*x, *y));
                    let _ = write!(s, "<line class=\"mark drag\" x1=\"{px:.0}\" y1=\"{py:.0}\" x2=\"{x:.0}\" y2=\"{y:.0}\" stroke=\"#D55E00\" stroke-width=\"{w:.1}\" marker-end=\"url(#{marker})\"/>", w = 6.0 * unit);
                }
                Action::Click { .. } | Action::RightClick { .. } | Action::DoubleClick { .. } => {
                    let Some((x, y)) = at else { continue };
                    n += 1;
                    let (colour, double) = match &a {
                        Action::Click {
                            button: Button::Right,
                            ..
                        }
                        | Action::RightClick { .. } => ("#E69F00", false),
                        Action::Click { num_clicks, .. } => ("#0072B2", *num_clicks >= 2),
                        _ => ("#0072B2", true),
                    };
                    let r = 22.0 * unit;
                    let _ = write!(s, "<circle class=\"mark click\" cx=\"{x:.0}\" cy=\"{y:.0}\" r=\"{r:.1}\" fill=\"{colour}\" fill-opacity=\"0.35\" stroke=\"{colour}\" stroke-width=\"{w:.1}\"/>", w = 4.0 * unit);
                    if double {
                        let _ = write!(s, "<circle cx=\"{x:.0}\" cy=\"{y:.0}\" r=\"{r2:.1}\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"{w:.1}\"/>", r2 = r * 1.5, w = 3.0 * unit);
                    }
                    let _ = write!(s, "<text x=\"{x:.0}\" y=\"{ty:.0}\" text-anchor=\"middle\" font-size=\"{fs:.0}\" font-weight=\"bold\" fill=\"#fff\" stroke=\"#000\" stroke-width=\"{sw:.1}\" paint-order=\"stroke\">{n}</text>", ty = y + 8.0 * unit, fs = 24.0 * unit, sw = 3.0 * unit);
                }
                Action::Scroll { dy, dx, .. } => {
                    labels.push(format!(
                        "scroll {dy:+}{}",
                        if *dx != 0 {
                            format!(" / {dx:+} across")
                        } else {
                            String::new()
                        }
                    ));
                    if let Some((x, y)) = at {
                        let _ = write!(s, "<text class=\"mark scroll\" x=\"{x:.0}\" y=\"{y:.0}\" font-size=\"{fs:.0}\" fill=\"#009E73\" stroke=\"#fff\" stroke-width=\"{sw:.1}\" paint-order=\"stroke\">{}</text>", if *dy > 0 { "▲" } else { "▼" }, fs = 40.0 * unit, sw = 4.0 * unit);
                    }
                }
                Action::Typing { text, .. } => labels.push(format!("type “{}”", shorten(text, 60))),
                Action::Press { key, presses, .. } => labels.push(if *presses > 1 {
                    format!("press {key} ×{presses}")
                } else {
                    format!("press {key}")
                }),
                Action::Hotkey { keys } => labels.push(format!("hotkey {}", keys.join("+"))),
                Action::KeyDown { key } => labels.push(format!("key down {key}")),
                Action::KeyUp { key } => labels.push(format!("key up {key}")),
                Action::MouseDown { .. }
                | Action::MouseUp { .. }
                | Action::Wait { .. }
                | Action::Done
                | Action::Fail => {}
            }
            if let Some(p) = a.point() {
                *pointer = Some(p);
            }
        }
    }
    if !labels.is_empty() {
        let fs = 30.0 * unit;
        let h = fs * 1.4 * labels.len() as f64 + fs * 0.6;
        let y0 = size.1 as f64 - h - 10.0 * unit;
        let _ = write!(s, "<rect x=\"{x:.0}\" y=\"{y0:.0}\" width=\"{w:.0}\" height=\"{h:.0}\" fill=\"#000\" fill-opacity=\"0.7\" rx=\"{rx:.0}\"/>", x = 10.0 * unit, w = size.0 as f64 * 0.6, rx = 8.0 * unit);
        for (i, l) in labels.iter().enumerate() {
            let _ = write!(s, "<text class=\"mark type\" x=\"{x:.0}\" y=\"{y:.0}\" font-size=\"{fs:.0}\" fill=\"#fff\">{}</text>", esc(l), x = 24.0 * unit, y = y0 + fs * 1.4 * (i as f64 + 1.0));
        }
    }
    s
}

/// An episode's page. `frames` are the filmstrip (screenshots already
/// beside the page), `video` a recording's file name beside it.
pub fn episode(
    run_label: &str,
    r: &EpisodeResult,
    failure: Option<&Failure>,
    frames: &[Frame],
    video: Option<&str>,
) -> String {
    let mut b = String::new();
    let key = episode_key(r);
    let _ = write!(
        b,
        "<p><a href=\"../../index.html\">← report</a></p><h1>{}</h1><p>{}</p><p><b>{}</b> · score {:.3} · {} of {} steps · ended: {} · {:.1} s</p>",
        esc(&key),
        esc(run_label),
        status_cell(r),
        r.score,
        r.steps_used,
        r.max_steps,
        esc(&super::summary::end_name(r.end)),
        r.timings.total_s
    );
    if let Some(c) = &r.cause {
        let _ = write!(b, "<p class=\"unscored\">cause: {}</p>", esc(c));
    }
    if let Some(c) = &r.from_checkpoint {
        let how = if c.kind == "ended" {
            "the episode ended within this budget, so its result is this budget's".to_string()
        } else {
            format!(
                "evaluated on a machine started from the checkpoint saved after step {} ({:.1} s to start)",
                r.max_steps, c.restore_s
            )
        };
        let _ = write!(
            b,
            "<p class=\"checkpoint\">Cut from the {}-step episode: {}.</p>",
            c.episode_budget,
            esc(&how)
        );
    }
    if !r.instruction.is_empty() {
        let _ = write!(
            b,
            "<h2>Instruction</h2><pre class=\"instruction\">{}</pre>",
            esc(&r.instruction)
        );
    }
    let _ = write!(
        b,
        "<p>stage: {} · difficulty: {} · applications: {} · domain: {}</p>",
        esc(r.category.as_deref().unwrap_or("—")),
        esc(r.difficulty.as_deref().unwrap_or("—")),
        esc(&r.related_apps.join(", ")),
        esc(&r.domain)
    );
    if let Some(f) = failure {
        let _ = write!(
            b,
            "<h2>Failure analysis</h2><p><b>{}</b>{}: {}</p>",
            f.category,
            f.departed_at
                .map_or(String::new(), |s| format!(" (went wrong at step {s})")),
            esc(&f.why)
        );
    }
    b.push_str("<h2>Sub-checks</h2><table class=\"checks\"><tr><th>check</th><th>metric</th><th>score</th><th>weight</th><th>critical</th><th>detail</th></tr>");
    for m in &r.metrics {
        let cls = if m.score >= crate::episode::SUCCESS_THRESHOLD {
            "ok"
        } else {
            "bad"
        };
        let _ = write!(
            b,
            "<tr><td>{}</td><td>{}</td><td class=\"n {cls}\">{:.3}</td><td class=\"n\">{}</td><td>{}</td><td>{}</td></tr>",
            esc(m.check.as_deref().unwrap_or("")),
            esc(&m.func),
            m.score,
            m.weight.map_or("—".into(), |w| format!("{w}")),
            m.critical.map_or("—", |c| if c { "yes" } else { "no" }),
            esc(&m.detail)
        );
    }
    b.push_str("</table>");
    if !r.errors.is_empty() {
        let _ = write!(b, "<h2>Errors</h2><pre>{}</pre>", esc(&r.errors.join("\n")));
    }
    let t = &r.timings;
    let agent: f64 = t.steps.iter().map(|s| s.agent_ms).sum::<f64>() / 1000.0 + 0.0;
    let observe: f64 = t.steps.iter().map(|s| s.observe_ms).sum::<f64>() / 1000.0 + 0.0;
    let act: f64 = t.steps.iter().map(|s| s.act_ms + s.settle_ms).sum::<f64>() / 1000.0 + 0.0;
    let _ = write!(
        b,
        "<h2>Time</h2><table class=\"timings\"><tr><th>reset</th><th>setup</th><th>observe</th><th>agent</th><th>act and settle</th><th>idle wait</th><th>post-config</th><th>evaluation</th><th>total</th></tr><tr><td class=\"n\">{:.2}</td><td class=\"n\">{:.2}</td><td class=\"n\">{observe:.2}</td><td class=\"n\">{agent:.2}</td><td class=\"n\">{act:.2}</td><td class=\"n\">{:.2}</td><td class=\"n\">{:.2}</td><td class=\"n\">{:.2}</td><td class=\"n\">{:.2}</td></tr></table><p>seconds; tokens: {} prompt, {} completion.</p>",
        t.reset_s, t.setup_s, t.idle_wait_s, t.postconfig_s, t.eval_s, t.total_s, r.tokens.prompt_tokens, r.tokens.completion_tokens
    );
    if let Some(v) = video {
        let _ = write!(
            b,
            "<h2>Recording</h2><video controls width=\"960\" src=\"{}\"></video>",
            esc(v)
        );
    }
    b.push_str("<h2>Trajectory</h2><div class=\"filmstrip\">");
    if frames.is_empty() {
        b.push_str("<p>No trajectory was recorded.</p>");
    }
    let mut pointer = None;
    for (i, f) in frames.iter().enumerate() {
        let (w, h) = f.size;
        let steps: Vec<String> = f.lines.iter().map(|l| l.step_num.to_string()).collect();
        let _ = write!(b, "<figure class=\"step\"><svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {w} {h}\" role=\"img\" aria-label=\"step {s}\"><defs><marker id=\"arrow-{i}\" viewBox=\"0 0 10 10\" refX=\"8\" refY=\"5\" markerWidth=\"5\" markerHeight=\"5\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#D55E00\"/></marker></defs>", s = steps.join(", "));
        match &f.shot {
            Some(name) => {
                let _ = write!(
                    b,
                    "<image href=\"{}\" x=\"0\" y=\"0\" width=\"{w}\" height=\"{h}\"/>",
                    esc(name)
                );
            }
            None => {
                let _ = write!(b, "<rect width=\"{w}\" height=\"{h}\" fill=\"#ddd\"/><text x=\"{x}\" y=\"{y}\" text-anchor=\"middle\" font-size=\"48\">no screenshot</text>", x = w / 2, y = h / 2);
            }
        }
        b.push_str(&overlay(
            &f.lines,
            f.size,
            &mut pointer,
            &format!("arrow-{i}"),
        ));
        b.push_str("</svg><figcaption>");
        for l in &f.lines {
            let _ = write!(
                b,
                "<p><b>step {}</b> <small>agent {:.0} ms · observe {:.0} ms · act {:.0} ms · settle {:.0} ms</small></p>",
                l.step_num, l.timings.agent_ms, l.timings.observe_ms, l.timings.act_ms, l.timings.settle_ms
            );
            if !l.action.is_empty() {
                let _ = write!(b, "<pre class=\"action\">{}</pre>", esc(&l.action));
            }
            if let Some(e) = &l.error {
                let _ = write!(b, "<p class=\"bad\">error: {}</p>", esc(e));
            }
            if !l.response.is_empty() {
                let _ = write!(
                    b,
                    "<details><summary>raw response</summary><pre>{}</pre></details>",
                    esc(&l.response)
                );
            }
        }
        b.push_str("</figcaption></figure>");
    }
    b.push_str("</div>");
    page(&key, &b)
}
