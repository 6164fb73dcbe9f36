//! `deskenv report`: one or more finished runs written as a report folder
//! that opens from disk: `index.html`, a page per episode under
//! `episodes/` with its screenshots beside it (hard links where the file
//! system allows, else copies), `detailed_results.csv` (one row per
//! episode), `metrics_summary.csv` (one row per run, budget and group)
//! and `summary.json` (the figures, comparisons and failure analyses).

use super::compare::{compare, Comparison};
use super::failures::{analyse, read_trajectory, Failure};
use super::html::{self, EpisodeRow};
use super::summary::{episode_key, summarize, Rates, RunSummary};
use super::Run;
use serde::Serialize;
use stats::{Bootstrap, StatsError};
use std::path::{Path, PathBuf};

/// Why a report could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("no run given (expected one or more run output folders)")]
    NoRuns,
    #[error("{0}: {1}")]
    Io(PathBuf, std::io::Error),
    #[error("run {run}: {source}")]
    Stats {
        run: String,
        #[source]
        source: StatsError,
    },
    #[error("summary.json: {0}")]
    Json(serde_json::Error),
}

/// The report's options.
#[derive(Debug, Clone)]
pub struct ReportOptions {
    /// Dollars per million tokens (prompt and completion alike).
    pub price_per_mtok: Option<f64>,
    pub boot: Bootstrap,
}

/// What was written.
#[derive(Debug, Serialize)]
pub struct Report {
    pub summaries: Vec<RunSummary>,
    /// Each later run against the first: its index and the comparisons
    /// per budget, or why it could not be compared.
    pub comparisons: Vec<(usize, Result<Vec<Comparison>, String>)>,
    /// The failure analyses: (run index, failure).
    pub failures: Vec<(usize, Failure)>,
    /// Episode pages written, and screenshots linked or copied.
    pub pages: usize,
    pub screenshots: usize,
    #[serde(skip)]
    pub index: PathBuf,
}

fn io(p: &Path) -> impl FnOnce(std::io::Error) -> ReportError + '_ {
    move |e| ReportError::Io(p.to_path_buf(), e)
}

/// A file name made of letters, digits, `.`, `-` and `_` only.
fn slug(s: &str) -> String {
    let mut o: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    while o.contains("--") {
        o = o.replace("--", "-");
    }
    o.trim_matches('-').chars().take(80).collect()
}

/// Links `from` to `to`, or copies it where a link cannot be made.
fn place(from: &Path, to: &Path) -> Result<(), ReportError> {
    let _ = std::fs::remove_file(to);
    if std::fs::hard_link(from, to).is_err() {
        std::fs::copy(from, to).map_err(io(to))?;
    }
    Ok(())
}

/// A CSV field, quoted where it must be.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn csv_line(fields: &[String]) -> String {
    let mut s = fields
        .iter()
        .map(|f| field(f))
        .collect::<Vec<_>>()
        .join(",");
    s.push('\n');
    s
}

/// Writes the report of `runs` under `out`.
pub fn write_report(runs: &[Run], out: &Path, opts: &ReportOptions) -> Result<Report, ReportError> {
    if runs.is_empty() {
        return Err(ReportError::NoRuns);
    }
    std::fs::create_dir_all(out.join("episodes")).map_err(io(out))?;
    let mut summaries = vec![];
    for run in runs {
        summaries.push(
            summarize(run, opts.price_per_mtok, &opts.boot).map_err(|source| {
                ReportError::Stats {
                    run: run.label.clone(),
                    source,
                }
            })?,
        );
    }
    let comparisons: Vec<(usize, Result<Vec<Comparison>, String>)> = runs
        .iter()
        .enumerate()
        .skip(1)
        .map(|(j, b)| {
            (
                j,
                compare(&runs[0], b, &opts.boot).map_err(|e| e.to_string()),
            )
        })
        .collect();

    // The episode pages, in run order, then budget, task and seed.
    let mut order: Vec<(usize, usize)> = runs
        .iter()
        .enumerate()
        .flat_map(|(i, r)| (0..r.results.len()).map(move |k| (i, k)))
        .collect();
    order.sort_by(|&(i, k), &(j, l)| {
        let (a, b) = (&runs[i].results[k], &runs[j].results[l]);
        (i, a.max_steps, &a.task_id, a.seed, a.repeat).cmp(&(
            j,
            b.max_steps,
            &b.task_id,
            b.seed,
            b.repeat,
        ))
    });
    let mut failures: Vec<(usize, Failure)> = vec![];
    let mut pages: Vec<(usize, usize, String, Option<usize>)> = vec![];
    let mut screenshots = 0;
    for (n, &(i, k)) in order.iter().enumerate() {
        let run = &runs[i];
        let r = &run.results[k];
        let src = &run.episode_dirs[k];
        let name = format!("{:04}-{}-b{}", n + 1, slug(&episode_key(r)), r.max_steps);
        let dir = out.join("episodes").join(format!("r{}", i + 1)).join(&name);
        std::fs::create_dir_all(&dir).map_err(io(&dir))?;
        let failure = analyse(src, r);
        let traj = read_trajectory(src);
        let mut placed: Vec<String> = vec![];
        let mut err = None;
        let frames = html::frames(&traj, |file| {
            if file.is_empty() || file.contains('/') || file.contains("..") {
                return None;
            }
            let from = src.join(file);
            let bytes = std::fs::read(&from).ok()?;
            if !placed.iter().any(|p| p == file) {
                if let Err(e) = place(&from, &dir.join(file)) {
                    err.get_or_insert(e);
                    return None;
                }
                placed.push(file.to_string());
            }
            Some((file.to_string(), bytes))
        });
        if let Some(e) = err {
            return Err(e);
        }
        screenshots += placed.len();
        let video = if src.join("recording.mp4").is_file() {
            place(&src.join("recording.mp4"), &dir.join("recording.mp4"))?;
            Some("recording.mp4")
        } else {
            None
        };
        let text = html::episode(&run.label, r, failure.as_ref(), &frames, video);
        let file = dir.join("index.html");
        std::fs::write(&file, text).map_err(io(&file))?;
        let fi = failure.map(|f| {
            failures.push((i, f));
            failures.len() - 1
        });
        pages.push((i, k, format!("episodes/r{}/{name}/index.html", i + 1), fi));
    }

    let rows: Vec<EpisodeRow> = pages
        .iter()
        .map(|(i, k, page, fi)| EpisodeRow {
            run: *i,
            result: &runs[*i].results[*k],
            failure: fi.map(|f| &failures[f].1),
            page: page.clone(),
        })
        .collect();
    let generated = format!("Written by deskenv {}", env!("CARGO_PKG_VERSION"));
    let index = out.join("index.html");
    std::fs::write(
        &index,
        html::index(&summaries, &comparisons, &rows, &generated),
    )
    .map_err(io(&index))?;

    // detailed_results.csv
    let mut csv = csv_line(
        &[
            "run",
            "run_label",
            "task_id",
            "domain",
            "category",
            "difficulty",
            "related_apps",
            "seed",
            "repeat",
            "max_steps",
            "status",
            "end",
            "score",
            "success",
            "steps_used",
            "total_s",
            "agent_s",
            "env_s",
            "prompt_tokens",
            "completion_tokens",
            "failure",
            "failure_step",
            "cause",
            "page",
        ]
        .map(String::from),
    );
    for e in &rows {
        let r = e.result;
        let agent_s = r.timings.steps.iter().map(|s| s.agent_ms).sum::<f64>() / 1000.0 + 0.0;
        csv.push_str(&csv_line(&[
            format!("R{}", e.run + 1),
            runs[e.run].label.clone(),
            r.task_id.clone(),
            r.domain.clone(),
            r.category.clone().unwrap_or_default(),
            r.difficulty.clone().unwrap_or_default(),
            r.related_apps.join(";"),
            r.seed.to_string(),
            r.repeat.map_or(String::new(), |x| x.to_string()),
            r.max_steps.to_string(),
            r.status.as_str().to_string(),
            super::summary::end_name(r.end),
            format!("{:.4}", r.score),
            r.success.to_string(),
            r.steps_used.to_string(),
            format!("{:.3}", r.timings.total_s),
            format!("{agent_s:.3}"),
            format!("{:.3}", (r.timings.total_s - agent_s).max(0.0)),
            r.tokens.prompt_tokens.to_string(),
            r.tokens.completion_tokens.to_string(),
            e.failure.map_or(String::new(), |f| f.category.to_string()),
            e.failure
                .and_then(|f| f.departed_at)
                .map_or(String::new(), |s| s.to_string()),
            r.cause.clone().unwrap_or_default(),
            e.page.clone(),
        ]));
    }
    let p = out.join("detailed_results.csv");
    std::fs::write(&p, csv).map_err(io(&p))?;

    // metrics_summary.csv
    let mut csv = csv_line(
        &[
            "run",
            "run_label",
            "budget",
            "group_by",
            "group",
            "episodes",
            "successes",
            "success_rate",
            "success_lo",
            "success_hi",
            "mean_score",
            "score_lo",
            "score_hi",
        ]
        .map(String::from),
    );
    for (i, s) in summaries.iter().enumerate() {
        for b in &s.budgets {
            let mut groups: Vec<(&str, &str, &Rates)> = vec![];
            if let Some(r) = &b.overall {
                groups.push(("overall", "all", r));
            }
            for (by, rows) in [
                ("category", &b.by_category),
                ("difficulty", &b.by_difficulty),
                ("app", &b.by_app),
                ("domain", &b.by_domain),
                ("check", &b.by_check),
            ] {
                groups.extend(rows.iter().map(|r| (by, r.key.as_str(), &r.rates)));
            }
            for (by, g, r) in groups {
                csv.push_str(&csv_line(&[
                    format!("R{}", i + 1),
                    s.label.clone(),
                    b.budget.to_string(),
                    by.to_string(),
                    g.to_string(),
                    r.episodes.to_string(),
                    r.successes.to_string(),
                    format!("{:.4}", r.success.value),
                    format!("{:.4}", r.success.lo),
                    format!("{:.4}", r.success.hi),
                    format!("{:.4}", r.score.value),
                    format!("{:.4}", r.score.lo),
                    format!("{:.4}", r.score.hi),
                ]));
            }
        }
    }
    let p = out.join("metrics_summary.csv");
    std::fs::write(&p, csv).map_err(io(&p))?;

    let report = Report {
        summaries,
        comparisons,
        failures,
        pages: pages.len(),
        screenshots,
        index,
    };
    let p = out.join("summary.json");
    let json = serde_json::to_string_pretty(&report).map_err(ReportError::Json)?;
    std::fs::write(&p, json).map_err(io(&p))?;
    Ok(report)
}

/// A run folder on disk with real PNG screenshots, for the report's
/// tests (here and in `tests/`).
#[doc(hidden)]
pub mod fixture {
    use crate::episode::{EndReason, EpisodeResult, MetricResult, Status, TaskInfo};
    use protocol::result::TrajectoryStep;
    use std::path::Path;

    /// A `w`×`h` PNG of one grey level.
    pub fn png(w: u32, h: u32, level: u8) -> Vec<u8> {
        let mut out = vec![];
        {
            let mut e = png::Encoder::new(&mut out, w, h);
            e.set_color(png::ColorType::Rgb);
            let mut wr = e.write_header().expect("png header");
            wr.write_image_data(&vec![level; (w * h * 3) as usize])
                .expect("png data");
        }
        out
    }

    /// Two runs under `dir` (in `a/` and `b/`): A solves t1, fails t2 and
    /// has no score on t3 (an environment error); B solves all three.
    pub fn two_runs(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
        let (a, b) = (dir.join("a"), dir.join("b"));
        run(
            &a,
            &[
                ("t1", "wrangling", 1.0),
                ("t2", "modelling", 0.0),
                ("t3", "modelling", -1.0),
            ],
        );
        run(
            &b,
            &[
                ("t1", "wrangling", 1.0),
                ("t2", "modelling", 1.0),
                ("t3", "modelling", 1.0),
            ],
        );
        (a, b)
    }

    /// Writes a run of the tasks `(id, stage, score)` at budget 15 under
    /// `dir`: each episode clicks, drags, types and ends, with a
    /// screenshot per step; a score below 0 is an environment error.
    pub fn run(dir: &Path, tasks: &[(&str, &str, f64)]) {
        for (i, (id, stage, score)) in tasks.iter().enumerate() {
            let ep = dir.join("pyautogui/screenshot/scripted/ds").join(id);
            std::fs::create_dir_all(&ep).unwrap();
            let info = TaskInfo {
                id: id.to_string(),
                instruction: format!("Do <{id}> & save it."),
                domain: "ds".into(),
                category: Some(stage.to_string()),
                difficulty: Some("easy".into()),
                related_apps: vec!["terminal".into()],
            };
            let mut r = EpisodeResult::new(info, 15, EndReason::Done);
            r.seed = 7;
            r.steps_used = 3;
            if *score < 0.0 {
                r.fault(Status::EnvError, "the guest stopped answering".into());
            } else {
                r.score = *score;
                r.success = *score >= 0.95;
                let mut m = MetricResult::plain("compare_table", *score, "rows differ".into());
                m.check = Some("table".into());
                r.metrics.push(m);
            }
            let actions = [
                "pyautogui.click(100, 200)",
                "pyautogui.moveTo(300, 300)\npyautogui.dragTo(900, 700, duration=0.5)",
                "pyautogui.write('df.mean()')\npyautogui.hotkey('ctrl', 's')",
            ];
            let mut traj = String::new();
            for (n, a) in actions.iter().enumerate() {
                let shot = format!("step_{}.png", n + 1);
                std::fs::write(
                    ep.join(&shot),
                    png(1280, 720, (100 + 40 * n + 10 * i) as u8),
                )
                .unwrap();
                let line = TrajectoryStep {
                    step_num: n + 1,
                    action: a.to_string(),
                    response: format!("```python\n{a}\n```"),
                    screenshot_file: shot,
                    ..Default::default()
                };
                traj.push_str(&(serde_json::to_string(&line).unwrap() + "\n"));
            }
            std::fs::write(ep.join("traj.jsonl"), traj).unwrap();
            std::fs::write(
                ep.join("result.json"),
                serde_json::to_string_pretty(&r).unwrap(),
            )
            .unwrap();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn svgs(html: &str) -> Vec<&str> {
        let mut out = vec![];
        let mut rest = html;
        while let Some(i) = rest.find("<svg") {
            let j = rest[i..].find("</svg>").expect("closed svg") + i + 6;
            out.push(&rest[i..j]);
            rest = &rest[j..];
        }
        out
    }

    #[test]
    fn a_report_of_two_runs_has_pages_charts_and_csvs_that_open_offline() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = fixture::two_runs(tmp.path());
        let out = tmp.path().join("report");
        let runs = [Run::load(&a).unwrap(), Run::load(&b).unwrap()];
        let opts = ReportOptions {
            price_per_mtok: Some(3.0),
            boot: Bootstrap {
                resamples: 500,
                ..Bootstrap::default()
            },
        };
        let rep = write_report(&runs, &out, &opts).unwrap();
        assert_eq!((rep.pages, rep.screenshots), (6, 18));
        // t2 failed in A (a wrong answer); the environment error is no failure.
        assert_eq!(rep.failures.len(), 1);
        assert_eq!(rep.failures[0].1.category, "reasoning");
        assert!(rep.comparisons[0].1.is_ok(), "{:?}", rep.comparisons[0].1);

        let index = std::fs::read_to_string(out.join("index.html")).unwrap();
        let charts = svgs(&index);
        assert_eq!(charts.len(), 3);
        for c in &charts {
            roxmltree::Document::parse(c).expect("each chart is well-formed SVG");
        }
        assert!(
            index.contains("environment error") && index.contains("the guest stopped answering")
        );
        assert!(index.contains("R1 vs R2"));
        assert_eq!(index.matches("<a href=\"episodes/").count(), 6 + 1);
        for attr in ["src=\"http", "href=\"http", "url(http"] {
            assert!(!index.contains(attr), "the index loads {attr}…");
        }

        let page = &rep.failures[0];
        let dir = std::fs::read_dir(out.join("episodes/r1")).unwrap().count();
        assert_eq!(dir, 3);
        let t2 = std::fs::read_dir(out.join("episodes/r1"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.to_string_lossy().contains("t2"))
            .unwrap();
        let html = std::fs::read_to_string(t2.join("index.html")).unwrap();
        assert!(html.contains("Do &lt;t2&gt; &amp; save it."));
        let frames = svgs(&html);
        assert_eq!(frames.len(), 3);
        for f in &frames {
            let doc = roxmltree::Document::parse(f).expect("each frame is well-formed SVG");
            let image = doc.descendants().find(|n| n.has_tag_name("image")).unwrap();
            assert!(t2.join(image.attribute("href").unwrap()).is_file());
        }
        assert!(frames[0].contains("class=\"mark click\""));
        assert!(frames[1].contains("class=\"mark drag\"") && frames[1].contains("x1=\"300\""));
        assert!(frames[2].contains("type “df.mean()”") && frames[2].contains("hotkey ctrl+s"));
        assert!(html.contains("raw response"));
        assert_eq!(page.1.signals.checks_total, 1);

        let detailed = std::fs::read_to_string(out.join("detailed_results.csv")).unwrap();
        assert_eq!(detailed.lines().count(), 1 + 6);
        assert!(detailed.contains(",env_error,"));
        let metrics = std::fs::read_to_string(out.join("metrics_summary.csv")).unwrap();
        let overall: Vec<&str> = metrics
            .lines()
            .filter(|l| l.contains(",overall,"))
            .collect();
        assert_eq!(overall.len(), 2);
        // A: 1 of 2 scored; B: 3 of 3.
        assert!(overall[0].contains(",2,1,0.5000,"), "{}", overall[0]);
        assert!(overall[1].contains(",3,3,1.0000,"), "{}", overall[1]);
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap())
                .unwrap();
        assert_eq!(json["summaries"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn csv_fields_are_quoted_where_they_must_be_and_names_are_slugs() {
        assert_eq!(
            csv_line(&["a".into(), "b,c".into(), "say \"x\"".into()]),
            "a,b,c,\"say \"\"x\"\"\"\n".replacen("b,c", "\"b,c\"", 1)
        );
        assert_eq!(slug("t1 (seed 7, repeat 2)"), "t1-seed-7-repeat-2");
        assert!(matches!(
            write_report(
                &[],
                Path::new("/nonexistent"),
                &ReportOptions {
                    price_per_mtok: None,
                    boot: Bootstrap::default()
                }
            ),
            Err(ReportError::NoRuns)
        ));
    }
}
