//! Smaller budgets cut from one longer episode (`deskenv run
//! --checkpoints`): the episode saves the machine's state after step b
//! for each smaller budget b and runs on; afterwards each budget's result
//! is made here, from a machine started from that checkpoint (the idle
//! gate, postconfig and the evaluator, as if the budget had ended there),
//! or, when the episode had ended by step b anyway, from the episode's own
//! result. Its folder gets the trajectory's first b steps and their
//! screenshots.

use super::{
    generate, setup, task_info, EndReason, Episode, EpisodeResult, EpisodeSettings, FromCheckpoint,
    Status, TrajectoryStep,
};
use crate::provider::Machine;
use crate::task::LoadedTask;
use protocol::result::Usage;
use protocol::task::Placeholders;
use std::path::Path;
use std::time::Instant;

/// Writes the trajectory lines of `src` up to step `steps` into `dir`,
/// with their screenshots (hard links, else copies); their token counts.
fn copy_prefix(src: &Path, dir: &Path, steps: usize) -> std::io::Result<Usage> {
    std::fs::create_dir_all(dir)?;
    let text = std::fs::read_to_string(src.join("traj.jsonl")).unwrap_or_default();
    let mut out = String::new();
    let mut tokens = Usage::default();
    for line in text.lines() {
        let Ok(t) = serde_json::from_str::<TrajectoryStep>(line) else {
            continue;
        };
        if t.step_num > steps {
            break;
        }
        if let Some(u) = t.tokens {
            tokens.prompt_tokens += u.prompt_tokens;
            tokens.completion_tokens += u.completion_tokens;
        }
        let shot = &t.screenshot_file;
        if !shot.is_empty() && !shot.contains('/') && !dir.join(shot).exists() {
            let from = src.join(shot);
            if from.is_file() && std::fs::hard_link(&from, dir.join(shot)).is_err() {
                std::fs::copy(&from, dir.join(shot))?;
            }
        }
        out.push_str(line);
        out.push('\n');
    }
    std::fs::write(dir.join("traj.jsonl"), out)?;
    Ok(tokens)
}

/// The errors of `full` up to step `steps` ("step N: …").
fn errors_until(full: &EpisodeResult, steps: usize) -> Vec<String> {
    full.errors
        .iter()
        .filter(|e| {
            e.strip_prefix("step ")
                .and_then(|rest| rest.split(':').next())
                .and_then(|n| n.parse::<usize>().ok())
                .is_some_and(|n| n <= steps)
        })
        .cloned()
        .collect()
}

/// The result at budget `budget` of an episode that ended by then (DONE,
/// FAIL, the time limit): the episode's own, with its files up to there.
pub fn ended_within(
    full: &EpisodeResult,
    budget: usize,
    src: &Path,
    dir: &Path,
) -> std::io::Result<EpisodeResult> {
    copy_prefix(src, dir, budget)?;
    // The same episode: its recording too.
    let video = src.join("recording.mp4");
    if video.is_file() && std::fs::hard_link(&video, dir.join("recording.mp4")).is_err() {
        std::fs::copy(&video, dir.join("recording.mp4"))?;
    }
    let mut r = full.clone();
    r.max_steps = budget;
    r.checkpoints.clear();
    r.timings.checkpoint_s = 0.0;
    r.timings.total_s -= full.timings.checkpoint_s;
    r.from_checkpoint = Some(FromCheckpoint {
        episode_budget: full.max_steps,
        kind: "ended".into(),
        restore_s: 0.0,
    });
    Ok(r)
}

/// An unscored result at `budget` for `cause` (no checkpoint, or the
/// episode itself had no score).
pub fn unscored(
    task: &LoadedTask,
    full: &EpisodeResult,
    budget: usize,
    cause: String,
) -> EpisodeResult {
    let mut r = EpisodeResult::env_error(task_info(task), budget, cause);
    r.seed = full.seed;
    r.repeat = full.repeat;
    r.from_checkpoint = Some(FromCheckpoint {
        episode_budget: full.max_steps,
        kind: "checkpoint".into(),
        restore_s: 0.0,
    });
    r
}

/// Evaluates the budget `s.max_steps` on `machine`, started from the
/// checkpoint `full`'s episode (in `src`) saved after that step, into
/// `dir`.
pub async fn evaluate_checkpoint(
    machine: &dyn Machine,
    task: &LoadedTask,
    s: &EpisodeSettings,
    full: &EpisodeResult,
    src: &Path,
    dir: &Path,
    restore_s: f64,
) -> EpisodeResult {
    let budget = s.max_steps;
    let mut r = EpisodeResult::new(task_info(task), budget, EndReason::Budget);
    r.seed = full.seed;
    r.repeat = full.repeat;
    r.steps_used = budget;
    r.errors = errors_until(full, budget);
    r.timings.reset_s = restore_s;
    r.timings.setup_s = full.timings.setup_s;
    r.timings.steps = full.timings.steps.iter().take(budget).cloned().collect();
    r.from_checkpoint = Some(FromCheckpoint {
        episode_budget: full.max_steps,
        kind: "checkpoint".into(),
        restore_s,
    });
    match copy_prefix(src, dir, budget) {
        Ok(tokens) => r.tokens = tokens,
        Err(e) => r.fault(
            Status::EnvError,
            format!(
                "host: copying the first {budget} steps into {}: {e}",
                dir.display()
            ),
        ),
    }
    let mut ep = Episode {
        machine,
        task,
        s,
        dir,
        r,
        t0: Instant::now(),
        access_log: None,
    };
    // The episode's generated data and downloads serve its evaluation.
    let placeholders = Placeholders::default();
    let cache = src.join("cache");
    let generated = generate::Generated {
        root: src.join("generated"),
        seed: full.seed,
        cache: s.generate_cache.clone(),
    };
    let ctx = setup::StepContext {
        guest: machine.guest(),
        task,
        placeholders: &placeholders,
        cache: &cache,
        generated: &generated,
    };
    if ep.r.status == Status::Scored {
        ep.idle_gate().await;
        // The restored guest's watch holds the accesses up to the checkpoint.
        ep.keep_access_log().await;
    }
    if ep.r.status == Status::Scored {
        ep.postconfig(&ctx).await;
    }
    if ep.r.status == Status::Scored {
        ep.evaluate(None, &cache, &generated).await;
    }
    let mut r = ep.r;
    let t = &r.timings;
    let steps_s: f64 = t
        .steps
        .iter()
        .map(|s| s.observe_ms + s.agent_ms + s.act_ms + s.settle_ms)
        .sum::<f64>()
        / 1000.0;
    r.timings.total_s = t.reset_s + t.setup_s + steps_s + t.idle_wait_s + t.postconfig_s + t.eval_s;
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prefix_keeps_the_steps_up_to_the_budget_and_their_screenshots() {
        let src = tempfile::tempdir().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut text = String::new();
        for n in 1..=4 {
            let shot = format!("step_{n}.png");
            std::fs::write(src.path().join(&shot), [n as u8]).unwrap();
            let t = TrajectoryStep {
                step_num: n,
                action: format!("pyautogui.press('{n}')"),
                screenshot_file: shot,
                tokens: Some(Usage {
                    prompt_tokens: 10,
                    completion_tokens: 1,
                }),
                ..Default::default()
            };
            text.push_str(&(serde_json::to_string(&t).unwrap() + "\n"));
        }
        std::fs::write(src.path().join("traj.jsonl"), text).unwrap();
        let tokens = copy_prefix(src.path(), dir.path(), 2).unwrap();
        assert_eq!((tokens.prompt_tokens, tokens.completion_tokens), (20, 2));
        let kept = std::fs::read_to_string(dir.path().join("traj.jsonl")).unwrap();
        assert_eq!(kept.lines().count(), 2);
        assert!(dir.path().join("step_2.png").is_file() && !dir.path().join("step_3.png").exists());

        let mut full = EpisodeResult::new(TaskInfo::default(), 50, EndReason::Done);
        full.errors = vec!["step 1: a".into(), "step 3: b".into(), "setup: c".into()];
        assert_eq!(errors_until(&full, 2), vec!["step 1: a".to_string()]);
        full.steps_used = 2;
        full.timings.checkpoint_s = 1.5;
        full.timings.total_s = 10.0;
        let r = ended_within(&full, 15, src.path(), dir.path()).unwrap();
        assert_eq!((r.max_steps, r.timings.total_s), (15, 8.5));
        assert_eq!(r.from_checkpoint.unwrap().kind, "ended");
    }

    use super::super::TaskInfo;
}
