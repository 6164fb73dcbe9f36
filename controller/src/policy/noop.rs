//! The negative control: answers DONE at the first step. Every task's
//! evaluator must give it a score below success.

use super::{Decision, EpisodeContext, Observation, Policy, PolicyError, Reply};
use futures::future::BoxFuture;
use futures::FutureExt;

#[derive(Debug, Default)]
pub struct NoopPolicy;

impl Policy for NoopPolicy {
    fn name(&self) -> &str {
        "noop"
    }

    fn reset(&mut self, _ctx: &EpisodeContext) -> Result<(), PolicyError> {
        Ok(())
    }

    fn next<'a>(&'a mut self, _obs: &'a Observation) -> BoxFuture<'a, Result<Reply, PolicyError>> {
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
