//! Why a scored episode failed, from its trajectory and its sub-checks:
//! the signals (the step after which the screen stopped changing, runs of
//! the same action, actions outside the screen, actions that failed or
//! did not parse, the sub-checks that passed) and one category for the
//! episode, with the step where it first went wrong.
//!
//! The categories, first match wins:
//! - `infeasible misjudged`: an infeasible task the agent did not answer FAIL;
//! - `gave up`: a feasible task the agent answered FAIL;
//! - `tool orchestration`: the agent's calls broke (parse failures, actions
//!   the guest refused, an agent error);
//! - `OS grounding`: clicks outside the screen, or the same action three
//!   times or more in a row;
//! - `budget exhausted`: the step budget (or the time limit) ran out;
//! - `reasoning`: the agent said DONE and the answer was wrong.

use crate::episode::{EndReason, EpisodeResult, TrajectoryStep};
use protocol::Action;
use serde::Serialize;
use std::path::Path;

/// The categories, in the order they are tried.
pub const CATEGORIES: [&str; 6] = [
    "infeasible misjudged",
    "gave up",
    "tool orchestration",
    "OS grounding",
    "budget exhausted",
    "reasoning",
];

/// What the trajectory of one episode shows.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Signals {
    pub steps: usize,
    /// The first step from which every screenshot is the same as the one
    /// before it (None: the screen changed until the end).
    pub static_from: Option<usize>,
    /// The longest run of one action repeated, and the step it began at.
    pub longest_repeat: usize,
    pub repeat_from: Option<usize>,
    /// Steps whose action points outside the screen.
    pub outside_screen: Vec<usize>,
    /// Steps whose action failed, and those that did not parse.
    pub failed_actions: Vec<usize>,
    pub parse_failures: Vec<usize>,
    /// Sub-checks that passed, of all.
    pub checks_passed: Vec<String>,
    pub checks_total: usize,
}

/// One failed episode's analysis.
#[derive(Debug, Clone, Serialize)]
pub struct Failure {
    pub episode: String,
    pub category: &'static str,
    /// The first step where the trajectory went wrong (None: not known).
    pub departed_at: Option<usize>,
    pub why: String,
    pub signals: Signals,
}

/// The trajectory lines of an episode folder (an unreadable line is
/// skipped; a missing file is an empty trajectory).
pub fn read_trajectory(dir: &Path) -> Vec<TrajectoryStep> {
    std::fs::read_to_string(dir.join("traj.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// A PNG's width and height from its header.
pub fn png_size(bytes: &[u8]) -> Option<(u32, u32)> {
    if bytes.len() < 24 || &bytes[..8] != b"\x89PNG\r\n\x1a\n" || &bytes[12..16] != b"IHDR" {
        return None;
    }
    let w = u32::from_be_bytes(bytes[16..20].try_into().ok()?);
    let h = u32::from_be_bytes(bytes[20..24].try_into().ok()?);
    Some((w, h))
}

/// The actions of one trajectory line (pyautogui code or an action's
/// JSON); Err with the parser's message when it does not parse.
pub fn actions_of(step: &TrajectoryStep) -> Result<Vec<Action>, String> {
    let a = step.action.trim();
    if a.is_empty() || matches!(a, "WAIT" | "DONE" | "FAIL") {
        return Ok(vec![]);
    }
    if a.starts_with('{') {
        let v: serde_json::Value = serde_json::from_str(a).map_err(|e| e.to_string())?;
        return Action::from_json(&v)
            .map(|x| vec![x])
            .map_err(|e| e.to_string());
    }
    protocol::pyautogui::parse(a).map_err(|e| e.to_string())
}

/// The signals of a trajectory whose screenshots are in `dir`.
pub fn signals(dir: &Path, traj: &[TrajectoryStep], r: &EpisodeResult) -> Signals {
    let mut s = Signals {
        steps: traj.len(),
        checks_total: r.metrics.len(),
        checks_passed: r
            .metrics
            .iter()
            .filter(|m| m.score >= crate::episode::SUCCESS_THRESHOLD)
            .map(|m| m.check.clone().unwrap_or_else(|| m.func.clone()))
            .collect(),
        ..Signals::default()
    };
    // The screen: hashes of each step's screenshot.
    let mut size = (1920u32, 1080u32);
    let mut hashes = vec![];
    for t in traj {
        let bytes = std::fs::read(dir.join(&t.screenshot_file)).unwrap_or_default();
        if let Some(sz) = png_size(&bytes) {
            size = sz;
        }
        hashes.push(fnv(&bytes));
    }
    if hashes.len() >= 2 {
        let mut from = hashes.len();
        while from > 1 && hashes[from - 1] == hashes[from - 2] {
            from -= 1;
        }
        if from < hashes.len() {
            s.static_from = traj.get(from - 1).map(|t| t.step_num);
        }
    }
    // Repeats of one action.
    let mut run = 0;
    for (i, t) in traj.iter().enumerate() {
        if i > 0 && !t.action.is_empty() && t.action == traj[i - 1].action {
            run += 1;
        } else {
            run = 1;
        }
        if run > s.longest_repeat {
            s.longest_repeat = run;
            s.repeat_from = traj.get(i + 1 - run).map(|t| t.step_num);
        }
        match actions_of(t) {
            Ok(actions) => {
                let outside = actions
                    .iter()
                    .filter_map(Action::point)
                    .any(|(x, y)| x < 0.0 || y < 0.0 || x >= size.0 as f64 || y >= size.1 as f64);
                if outside {
                    s.outside_screen.push(t.step_num);
                }
            }
            Err(_) => s.parse_failures.push(t.step_num),
        }
        if let Some(e) = &t.error {
            if e.contains("pars") {
                if !s.parse_failures.contains(&t.step_num) {
                    s.parse_failures.push(t.step_num);
                }
            } else {
                s.failed_actions.push(t.step_num);
            }
        }
    }
    s
}

fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325u64, |h, b| {
        (h ^ *b as u64).wrapping_mul(0x100000001b3)
    })
}

fn is_infeasible(r: &EpisodeResult) -> bool {
    r.metrics.iter().any(|m| m.func == "infeasible")
}

/// The analysis of a scored, failed episode whose files are in `dir`;
/// None for a success or an episode without a score.
pub fn analyse(dir: &Path, r: &EpisodeResult) -> Option<Failure> {
    if r.success || !r.is_scored() {
        return None;
    }
    let traj = read_trajectory(dir);
    let s = signals(dir, &traj, r);
    let last = traj.last().map(|t| t.step_num);
    let first_of = |v: &[usize]| v.iter().min().copied();
    let (category, departed_at, why) = if is_infeasible(r) {
        (
            "infeasible misjudged",
            last,
            "the task is infeasible and the agent did not answer FAIL".to_string(),
        )
    } else if r.end == EndReason::Fail {
        (
            "gave up",
            last,
            "the agent answered FAIL on a feasible task".into(),
        )
    } else if !s.parse_failures.is_empty()
        || !s.failed_actions.is_empty()
        || r.end == EndReason::AgentError
    {
        let at = first_of(&s.parse_failures)
            .into_iter()
            .chain(first_of(&s.failed_actions))
            .min();
        (
            "tool orchestration",
            at.or(last),
            format!(
                "{} action(s) did not parse, {} failed{}",
                s.parse_failures.len(),
                s.failed_actions.len(),
                if r.end == EndReason::AgentError {
                    "; the agent stopped with an error"
                } else {
                    ""
                }
            ),
        )
    } else if !s.outside_screen.is_empty() || s.longest_repeat >= 3 {
        let at = first_of(&s.outside_screen)
            .into_iter()
            .chain(if s.longest_repeat >= 3 {
                s.repeat_from
            } else {
                None
            })
            .min();
        (
            "OS grounding",
            at,
            format!(
                "{} action(s) outside the screen; the same action {} times in a row",
                s.outside_screen.len(),
                s.longest_repeat
            ),
        )
    } else if matches!(r.end, EndReason::Budget | EndReason::Timeout) {
        (
            "budget exhausted",
            s.static_from.or(last),
            format!(
                "the {} ran out with {} of {} sub-checks passed",
                if r.end == EndReason::Budget {
                    "step budget"
                } else {
                    "time limit"
                },
                s.checks_passed.len(),
                s.checks_total
            ),
        )
    } else {
        (
            "reasoning",
            s.static_from.or(last),
            format!(
                "the agent ended with a wrong answer: {} of {} sub-checks passed",
                s.checks_passed.len(),
                s.checks_total
            ),
        )
    };
    Some(Failure {
        episode: super::summary::episode_key(r),
        category,
        departed_at,
        why,
        signals: s,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::episode::{MetricResult, TaskInfo};

    fn step(n: usize, action: &str, shot: &str) -> TrajectoryStep {
        TrajectoryStep {
            step_num: n,
            action: action.into(),
            screenshot_file: shot.into(),
            ..Default::default()
        }
    }

    fn png(w: u32, h: u32, salt: u8) -> Vec<u8> {
        let mut b = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        b.extend(w.to_be_bytes());
        b.extend(h.to_be_bytes());
        b.push(salt);
        b
    }

    fn failed(end: EndReason, metric: &str) -> EpisodeResult {
        let mut r = EpisodeResult::new(TaskInfo::default(), 15, end);
        r.metrics
            .push(MetricResult::plain(metric, 0.0, String::new()));
        r
    }

    fn episode(lines: &[TrajectoryStep], shots: &[(&str, Vec<u8>)]) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        let text: String = lines
            .iter()
            .map(|l| serde_json::to_string(l).unwrap() + "\n")
            .collect();
        std::fs::write(d.path().join("traj.jsonl"), text).unwrap();
        for (name, bytes) in shots {
            std::fs::write(d.path().join(name), bytes).unwrap();
        }
        d
    }

    #[test]
    fn repeated_clicks_on_a_static_screen_are_grounding() {
        let lines = [
            step(1, "pyautogui.click(100, 100)", "a.png"),
            step(2, "pyautogui.click(500, 500)", "b.png"),
            step(3, "pyautogui.click(500, 500)", "b.png"),
            step(4, "pyautogui.click(500, 500)", "b.png"),
        ];
        let d = episode(
            &lines,
            &[("a.png", png(1920, 1080, 1)), ("b.png", png(1920, 1080, 2))],
        );
        let f = analyse(d.path(), &failed(EndReason::Budget, "compare_table")).unwrap();
        assert_eq!(f.category, "OS grounding");
        assert_eq!(f.departed_at, Some(2));
        assert_eq!(f.signals.static_from, Some(2));
        assert_eq!(f.signals.longest_repeat, 3);
    }

    #[test]
    fn a_click_outside_the_screen_is_grounding_and_a_bad_parse_is_orchestration() {
        let d = episode(
            &[step(1, "pyautogui.click(2500, 10)", "a.png")],
            &[("a.png", png(1920, 1080, 1))],
        );
        let f = analyse(d.path(), &failed(EndReason::Done, "compare_table")).unwrap();
        assert_eq!(
            (f.category, f.signals.outside_screen.clone()),
            ("OS grounding", vec![1])
        );

        let d = episode(
            &[
                step(1, "pyautogui.click(1, 1)", "a.png"),
                step(2, "import os; os.system('x')", "a.png"),
            ],
            &[("a.png", png(1920, 1080, 1))],
        );
        let f = analyse(d.path(), &failed(EndReason::Done, "compare_table")).unwrap();
        assert_eq!(f.category, "tool orchestration");
        assert_eq!(f.departed_at, Some(2));
    }

    #[test]
    fn ends_decide_the_rest() {
        let d = episode(&[step(1, "pyautogui.click(1, 1)", "a.png")], &[]);
        let cat = |end, metric| analyse(d.path(), &failed(end, metric)).unwrap().category;
        assert_eq!(cat(EndReason::Done, "infeasible"), "infeasible misjudged");
        assert_eq!(cat(EndReason::Fail, "compare_table"), "gave up");
        assert_eq!(cat(EndReason::Budget, "compare_table"), "budget exhausted");
        assert_eq!(cat(EndReason::Done, "compare_table"), "reasoning");
        let mut ok = failed(EndReason::Done, "compare_table");
        ok.success = true;
        assert!(analyse(d.path(), &ok).is_none());
    }
}
