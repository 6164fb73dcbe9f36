//! The negative control: answers DONE at the first step. Every task's
//! evaluator must give it a score below success.

use super::{Agent, AgentError, Decision, EpisodeContext, Observation, Reply};
use futures::future::BoxFuture;
use futures::FutureExt;

#[derive(Debug, Default)]
pub struct NoopAgent;

impl Agent for NoopAgent {
    fn name(&self) -> &str {
        "noop"
    }

    fn reset(&mut self, _ctx: &EpisodeContext) -> Result<(), AgentError> {
        Ok(())
    }

    fn next<'a>(&'a mut self, _obs: &'a Observation) -> BoxFuture<'a, Result<Reply, AgentError>> {
        async {
            Ok(Reply {
                decisions: vec![Decision::Done],
                raw: "DONE".into(),
                usage: None,
                latency_ms: 0.0,
            })
        }
        .boxed()
    }
}
