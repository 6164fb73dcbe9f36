//! The `http` agent: the decisions come from an agent server of the user's
//! own, in any language, that deskenv calls (`deskenv run --agent http
//! --agent-url URL`). The reverse direction — the user's program calling
//! deskenv — is `deskenv serve` ([`crate::serve`]).
//!
//! Protocol (JSON over HTTP; the agent server answers 2xx):
//! - `POST {url}/reset` `{task_id, instruction, observation, action_space,
//!   max_steps}` when an episode begins (the answer's body is ignored);
//! - `POST {url}/predict` `{task_id, instruction, step, screen: {width,
//!   height}, screenshot: base64 PNG | null, accessibility_tree: text |
//!   null}` per step, answered with `{"action": …}` (pyautogui code, WAIT,
//!   DONE, FAIL, a computer_13 object, or a list) or `{"response": "…"}` (a
//!   model's raw text, parsed the OSWorld way), optionally with `"usage":
//!   {"prompt_tokens", "completion_tokens"}`.
//!
//! Failures: a refused connection, a timeout, a 5xx or an answer that is
//! not a valid action is a [`PolicyError::Call`] (the loop records the step
//! as failed and asks again); a 4xx, or a failed `reset`, is
//! [`PolicyError::Fatal`].

use super::{
    decisions_from, EpisodeContext, Observation, ObservationType, Policy, PolicyError, Reply, Usage,
};
use base64::Engine as _;
use futures::future::BoxFuture;
use futures::FutureExt;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// Where the agent server is and how long a call may take.
#[derive(Debug, Clone)]
pub struct HttpPolicyConfig {
    /// e.g. `http://127.0.0.1:9000` (the routes are `/reset`, `/predict`).
    pub url: String,
    pub timeout: Duration,
}

pub struct HttpPolicy {
    config: HttpPolicyConfig,
    client: reqwest::Client,
    ctx: Option<EpisodeContext>,
}

impl HttpPolicy {
    pub fn new(config: HttpPolicyConfig) -> Result<HttpPolicy, PolicyError> {
        let fatal = |m: String| PolicyError::Fatal {
            agent: "http".into(),
            message: m,
        };
        let url = config.url.trim_end_matches('/').to_string();
        if !(url.starts_with("http://") || url.starts_with("https://")) || url.len() < 9 {
            return Err(fatal(format!(
                "--agent-url `{}`: expected an http:// or https:// URL such as http://127.0.0.1:9000",
                config.url
            )));
        }
        let client = reqwest::Client::builder()
            .timeout(config.timeout)
            .build()
            .map_err(|e| fatal(format!("HTTP client: {e}")))?;
        Ok(HttpPolicy {
            config: HttpPolicyConfig { url, ..config },
            client,
            ctx: None,
        })
    }

    async fn post(&self, route: &str, body: &Value) -> Result<Value, (bool, String)> {
        let url = format!("{}/{route}", self.config.url);
        let r = self
            .client
            .post(&url)
            .json(body)
            .send()
            .await
            .map_err(|e| {
                let what = if e.is_timeout() {
                    format!("no answer within {:.0}s", self.config.timeout.as_secs_f64())
                } else {
                    let mut chain = e.to_string();
                    let mut src = std::error::Error::source(&e);
                    while let Some(s) = src {
                        chain.push_str(&format!(": {s}"));
                        src = s.source();
                    }
                    chain
                };
                (false, format!("POST {url}: {what}"))
            })?;
        let status = r.status();
        let text = r.text().await.unwrap_or_default();
        if !status.is_success() {
            let short: String = text.chars().take(300).collect();
            return Err((
                status.is_client_error(),
                format!("POST {url}: HTTP {status}: {short}"),
            ));
        }
        if text.trim().is_empty() {
            return Ok(Value::Null);
        }
        serde_json::from_str(&text).map_err(|e| {
            let short: String = text.chars().take(200).collect();
            (
                false,
                format!("POST {url}: the answer is not JSON ({e}): {short}"),
            )
        })
    }
}

impl Policy for HttpPolicy {
    fn name(&self) -> &str {
        "http"
    }

    fn reset(&mut self, ctx: &EpisodeContext) -> Result<(), PolicyError> {
        // `reset` is synchronous in the trait; the call itself happens at
        // the first `next`, before the first prediction.
        self.ctx = Some(ctx.clone());
        Ok(())
    }

    fn next<'a>(&'a mut self, obs: &'a Observation) -> BoxFuture<'a, Result<Reply, PolicyError>> {
        async move {
            let ctx = self.ctx.clone().ok_or_else(|| PolicyError::Fatal {
                agent: "http".into(),
                message: "next() before reset()".into(),
            })?;
            if obs.step == 0 {
                self.post(
                    "reset",
                    &json!({
                        "task_id": ctx.task_id, "instruction": ctx.instruction,
                        "observation": ctx.observation.as_str(),
                        "action_space": ctx.action_space.as_str(), "max_steps": ctx.max_steps,
                    }),
                )
                .await
                .map_err(|(_, m)| PolicyError::Fatal {
                    agent: "http".into(),
                    message: format!("the agent server refused the episode: {m}"),
                })?;
            }
            let body = json!({
                "task_id": ctx.task_id,
                "instruction": ctx.instruction,
                "step": obs.step,
                "screen": {"width": obs.screen.0, "height": obs.screen.1},
                "screenshot": match ctx.observation {
                    ObservationType::A11yTree => None,
                    _ => obs.screenshot_png.as_ref().map(|p| base64::engine::general_purpose::STANDARD.encode(p)),
                },
                "accessibility_tree": obs.a11y_linear,
            });
            let t = Instant::now();
            let answer = self.post("predict", &body).await;
            let latency_ms = t.elapsed().as_secs_f64() * 1000.0;
            let v = answer.map_err(|(fatal, message)| {
                if fatal {
                    PolicyError::Fatal {
                        agent: "http".into(),
                        message,
                    }
                } else {
                    PolicyError::Call {
                        agent: "http".into(),
                        message,
                    }
                }
            })?;
            let call = |m: String| PolicyError::Call {
                agent: "http".into(),
                message: format!("{}/predict: {m}", self.config.url),
            };
            let response = v.get("response").and_then(Value::as_str);
            let action = v.get("action");
            if action.is_none() && response.is_none() {
                return Err(call(format!(
                    "expected {{\"action\": …}} or {{\"response\": \"…\"}}, got {}",
                    v.to_string().chars().take(200).collect::<String>()
                )));
            }
            let decisions = decisions_from(action, response, ctx.action_space).map_err(call)?;
            let usage = v.get("usage").map(|u| Usage {
                prompt_tokens: u.get("prompt_tokens").and_then(Value::as_u64).unwrap_or(0),
                completion_tokens: u
                    .get("completion_tokens")
                    .and_then(Value::as_u64)
                    .unwrap_or(0),
            });
            Ok(Reply {
                raw: response.map(str::to_string).unwrap_or_else(|| {
                    decisions
                        .iter()
                        .map(|d| d.describe())
                        .collect::<Vec<_>>()
                        .join("\n")
                }),
                decisions,
                usage,
                latency_ms,
            })
        }
        .boxed()
    }
}
