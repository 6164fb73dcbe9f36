//! The oracle: replays the task's `solution`, one step per entry, then
//! DONE. A task without a solution cannot be run with this agent.

use super::{Decision, EpisodeContext, Observation, Policy, PolicyError, Reply};
use futures::future::BoxFuture;
use futures::FutureExt;
use protocol::task::SolutionStep;

#[derive(Debug, Default)]
pub struct ScriptedPolicy {
    steps: Vec<Decision>,
    next: usize,
}

impl ScriptedPolicy {
    /// The decisions a solution replays.
    pub fn decisions(
        task_id: &str,
        solution: &[SolutionStep],
    ) -> Result<Vec<Decision>, PolicyError> {
        let fatal = |i: usize, m: String| PolicyError::Fatal {
            agent: "scripted".into(),
            message: format!("task {task_id}: solution[{i}]: {m}"),
        };
        let mut out = Vec::new();
        for (i, s) in solution.iter().enumerate() {
            match s {
                SolutionStep::Code(c) => match c.trim() {
                    "WAIT" => out.push(Decision::Wait),
                    "DONE" => out.push(Decision::Done),
                    "FAIL" => out.push(Decision::Fail),
                    code => {
                        protocol::pyautogui::parse(code).map_err(|e| fatal(i, e.to_string()))?;
                        out.push(Decision::Code(code.to_string()));
                    }
                },
                SolutionStep::Action(v) => match v.as_str() {
                    Some("WAIT") => out.push(Decision::Wait),
                    Some("DONE") => out.push(Decision::Done),
                    Some("FAIL") => out.push(Decision::Fail),
                    _ => out.push(Decision::Action(
                        protocol::Action::from_json(v).map_err(|e| fatal(i, e.to_string()))?,
                    )),
                },
            }
        }
        if !matches!(out.last(), Some(Decision::Done | Decision::Fail)) {
            out.push(Decision::Done);
        }
        Ok(out)
    }
}

impl Policy for ScriptedPolicy {
    fn name(&self) -> &str {
        "scripted"
    }

    fn reset(&mut self, ctx: &EpisodeContext) -> Result<(), PolicyError> {
        let solution = ctx.solution.as_ref().ok_or_else(|| PolicyError::Fatal {
            agent: "scripted".into(),
            message: format!("task {} has no `solution` to replay", ctx.task_id),
        })?;
        self.steps = Self::decisions(&ctx.task_id, solution)?;
        self.next = 0;
        Ok(())
    }

    fn next<'a>(&'a mut self, _obs: &'a Observation) -> BoxFuture<'a, Result<Reply, PolicyError>> {
        async move {
            let d = self.steps.get(self.next).cloned().unwrap_or(Decision::Done);
            self.next += 1;
            Ok(Reply {
                raw: d.describe(),
                decisions: vec![d],
                usage: None,
                latency_ms: 0.0,
            })
        }
        .boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn solutions_replay_and_end_with_done() {
        let sol = vec![
            SolutionStep::Code("pyautogui.click(1, 2)".into()),
            SolutionStep::Action(json!({"action_type": "TYPING", "text": "hi"})),
            SolutionStep::Code("WAIT".into()),
        ];
        let d = ScriptedPolicy::decisions("t", &sol).unwrap();
        assert_eq!(d.len(), 4);
        assert_eq!(d[3], Decision::Done);
        let bad = vec![SolutionStep::Code("import os; os.system('x')".into())];
        let e = ScriptedPolicy::decisions("t", &bad)
            .unwrap_err()
            .to_string();
        assert!(e.contains("task t: solution[0]"), "{e}");
    }
}
