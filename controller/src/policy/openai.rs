//! The OpenAI-compatible agent: any endpoint that speaks the chat-completions
//! API (`POST {base_url}/chat/completions`): OpenAI itself, vLLM, SGLang,
//! llama.cpp's server, LiteLLM, …
//!
//! It plays OSWorld's prompting agent (`mm_agents/agent.py`): one system
//! prompt per observation type × action space, then the last
//! [`OpenAiConfig::history_turns`] turns, then the current observation. Past
//! turns keep their text only (the assistant's answers and a note of what
//! was observed); their screenshots and trees are dropped to save tokens.
//! The model's answer is parsed with [`super::parse_response`].
//!
//! Failures: HTTP 429, 5xx, connection errors and timeouts are retried with
//! exponential backoff (honouring `Retry-After`); any other 4xx is
//! [`PolicyError::Fatal`]; retries exhausted or an unusable completion (not
//! JSON, no choices, no action in the text) is [`PolicyError::Call`], which
//! the loop records as a failed step.
//!
//! Transport: `http://` and `https://` endpoints (rustls, with the Mozilla
//! root certificates built in); a TLS handshake that fails is a transport
//! failure, retried like a refused connection.

use super::{
    ActionSpace, EpisodeContext, Observation, ObservationType, Policy, PolicyError, Reply, Usage,
};
use crate::error_chain;
use futures::future::BoxFuture;
use futures::FutureExt;
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::fmt;
use std::time::{Duration, Instant};

/// The agent's name, in errors and trajectories.
pub const AGENT_NAME: &str = "openai";
/// The guest user's password, as OSWorld's prompts give it.
pub const CLIENT_PASSWORD: &str = "password";
/// The screen size the prompts assume when the observation carries none.
pub const DEFAULT_SCREEN: (u32, u32) = (1920, 1080);
/// Characters per token used to cap the accessibility tree.
pub const CHARS_PER_TOKEN: usize = 4;
/// How much of a response body an error message quotes.
const SNIPPET_CHARS: usize = 300;

/// The question of each step, as OSWorld asks it.
const ASK: &str = "What's the next step that you will do to help with the task?";

/// How to reach the model and how to sample it. Defaults are OSWorld's
/// (`temperature` 0.5, `top_p` 0.9, `max_tokens` 1500, 3 past turns, a
/// 10000-token tree).
#[derive(Clone, PartialEq)]
pub struct OpenAiConfig {
    /// The API root, e.g. `http://127.0.0.1:8000/v1`; the agent posts to
    /// `{base_url}/chat/completions`.
    pub base_url: String,
    /// The `model` field of each request.
    pub model: String,
    /// The name of an environment variable that holds the API key; when it
    /// is set and present, requests carry `Authorization: Bearer <key>`.
    pub api_key_env: Option<String>,
    pub temperature: f32,
    pub top_p: f32,
    pub max_tokens: u32,
    /// How many past turns (observation note + answer) each request
    /// repeats.
    pub history_turns: usize,
    /// The linearized accessibility tree is cut to about this many tokens
    /// ([`CHARS_PER_TOKEN`] characters each), then `[...]` is appended.
    pub a11y_token_cap: usize,
    /// The limit of one HTTP request, from sending to the last byte.
    pub request_timeout: Duration,
    /// Retries after the first attempt for 429, 5xx, connection errors and
    /// timeouts.
    pub max_retries: u32,
    /// The first retry waits this long, each next one twice as long.
    pub backoff_base: Duration,
    /// No wait between retries is longer than this, `Retry-After` included.
    pub max_backoff: Duration,
}

impl Default for OpenAiConfig {
    fn default() -> Self {
        OpenAiConfig {
            base_url: "http://127.0.0.1:8000/v1".into(),
            model: String::new(),
            api_key_env: None,
            temperature: 0.5,
            top_p: 0.9,
            max_tokens: 1500,
            history_turns: 3,
            a11y_token_cap: 10_000,
            request_timeout: Duration::from_secs(120),
            max_retries: 4,
            backoff_base: Duration::from_secs(1),
            max_backoff: Duration::from_secs(60),
        }
    }
}

impl OpenAiConfig {
    /// The defaults with this endpoint and model.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        OpenAiConfig {
            base_url: base_url.into(),
            model: model.into(),
            ..OpenAiConfig::default()
        }
    }
}

impl fmt::Debug for OpenAiConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiConfig")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key_env", &self.api_key_env)
            .field("temperature", &self.temperature)
            .field("top_p", &self.top_p)
            .field("max_tokens", &self.max_tokens)
            .field("history_turns", &self.history_turns)
            .field("a11y_token_cap", &self.a11y_token_cap)
            .field("request_timeout", &self.request_timeout)
            .field("max_retries", &self.max_retries)
            .field("backoff_base", &self.backoff_base)
            .field("max_backoff", &self.max_backoff)
            .finish()
    }
}

/// One past turn, text only.
#[derive(Debug, Clone)]
struct Turn {
    user: String,
    assistant: String,
}

/// The agent. See the module documentation.
pub struct OpenAiPolicy {
    config: OpenAiConfig,
    endpoint: String,
    api_key: Option<String>,
    client: reqwest::Client,
    ctx: Option<EpisodeContext>,
    history: VecDeque<Turn>,
}

impl fmt::Debug for OpenAiPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiPolicy")
            .field("config", &self.config)
            .field("endpoint", &self.endpoint)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("task", &self.ctx.as_ref().map(|c| &c.task_id))
            .field("history", &self.history.len())
            .finish()
    }
}

fn fatal(message: impl Into<String>) -> PolicyError {
    PolicyError::Fatal {
        agent: AGENT_NAME.into(),
        message: message.into(),
    }
}

fn call_error(message: impl Into<String>) -> PolicyError {
    PolicyError::Call {
        agent: AGENT_NAME.into(),
        message: message.into(),
    }
}

impl OpenAiPolicy {
    /// Checks the configuration and builds the HTTP client. The API key,
    /// when `api_key_env` names one, is read now.
    pub fn new(config: OpenAiConfig) -> Result<Self, PolicyError> {
        let base = config.base_url.trim().trim_end_matches('/').to_string();
        let host = base
            .strip_prefix("http://")
            .or_else(|| base.strip_prefix("https://"));
        if host.is_none_or(|h| h.is_empty() || h.starts_with('/')) {
            return Err(fatal(format!(
                "base_url `{}` must be an http:// or https:// URL such as http://127.0.0.1:8000/v1",
                config.base_url
            )));
        }
        if config.model.trim().is_empty() {
            return Err(fatal(
                "model must not be empty: name the model the endpoint serves",
            ));
        }
        if !config.temperature.is_finite() || config.temperature < 0.0 {
            return Err(fatal(format!(
                "temperature must be ≥ 0, got {}",
                config.temperature
            )));
        }
        if !config.top_p.is_finite() || config.top_p <= 0.0 || config.top_p > 1.0 {
            return Err(fatal(format!(
                "top_p must be in (0, 1], got {}",
                config.top_p
            )));
        }
        if config.max_tokens == 0 {
            return Err(fatal("max_tokens must be at least 1"));
        }
        if config.request_timeout.is_zero() {
            return Err(fatal("request_timeout must be longer than 0"));
        }
        let api_key = match &config.api_key_env {
            Some(var) if !var.is_empty() => match std::env::var(var) {
                Ok(key) if !key.trim().is_empty() => Some(key.trim().to_string()),
                _ => {
                    tracing::warn!(var = %var, "api_key_env names an unset or empty variable: requests go without Authorization");
                    None
                }
            },
            _ => None,
        };
        let client = reqwest::Client::builder()
            .timeout(config.request_timeout)
            .build()
            .map_err(|e| fatal(format!("cannot build the HTTP client: {}", error_chain(&e))))?;
        Ok(OpenAiPolicy {
            endpoint: format!("{base}/chat/completions"),
            config,
            api_key,
            client,
            ctx: None,
            history: VecDeque::new(),
        })
    }

    pub fn config(&self) -> &OpenAiConfig {
        &self.config
    }

    /// The URL requests go to.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// How many past turns the next request repeats.
    pub fn history_len(&self) -> usize {
        self.history.len()
    }

    /// The system prompt for an episode on a screen of this size.
    pub fn system_prompt(ctx: &EpisodeContext, screen: (u32, u32)) -> String {
        system_prompt(ctx, screen)
    }

    /// The chat-completions request body for this observation, as
    /// [`Policy::next`] would send it (after [`Policy::reset`]).
    pub fn request_body(&self, obs: &Observation) -> Result<Value, PolicyError> {
        Ok(self.build(obs)?.0)
    }

    /// The body, and the text-only note of this observation kept for the
    /// later turns.
    fn build(&self, obs: &Observation) -> Result<(Value, String), PolicyError> {
        let ctx = self
            .ctx
            .as_ref()
            .ok_or_else(|| fatal("next() was called before reset(): no episode"))?;
        let screen = if obs.screen.0 == 0 || obs.screen.1 == 0 {
            DEFAULT_SCREEN
        } else {
            obs.screen
        };
        let kind = ctx.observation;
        let mut messages = vec![json!({"role": "system", "content": system_prompt(ctx, screen)})];
        for t in &self.history {
            messages.push(json!({"role": "user", "content": t.user}));
            messages.push(json!({"role": "assistant", "content": t.assistant}));
        }

        let tree = if kind.wants_a11y() {
            Some(match obs.a11y_linear.as_deref() {
                Some(t) => cap_a11y(t, self.config.a11y_token_cap),
                None => "(the accessibility tree could not be read at this step)".to_string(),
            })
        } else {
            None
        };
        let text = match (kind, &tree) {
            (ObservationType::Screenshot, _) | (_, None) => {
                format!("Given the screenshot as below. {ASK}")
            }
            (ObservationType::A11yTree, Some(t)) => {
                format!("Given the info from accessibility tree as below:\n{t}\n{ASK}")
            }
            (ObservationType::ScreenshotA11yTree, Some(t)) => {
                format!(
                    "Given the screenshot and info from accessibility tree as below:\n{t}\n{ASK}"
                )
            }
        };
        let mut parts = vec![json!({"type": "text", "text": text})];
        if kind.wants_screenshot() {
            match obs.screenshot_png.as_deref() {
                Some(png) => parts.push(json!({
                    "type": "image_url",
                    "image_url": {"url": format!("data:image/png;base64,{}", base64(png)), "detail": "high"}
                })),
                None => {
                    tracing::warn!(step = obs.step, "the observation has no screenshot: asking without it");
                    parts.push(json!({"type": "text", "text": "(the screenshot could not be taken at this step)"}));
                }
            }
        }
        let content = if parts.len() == 1 {
            // Text only: a plain string suits text-only servers best.
            Value::String(text)
        } else {
            Value::Array(parts)
        };
        messages.push(json!({"role": "user", "content": content}));

        let omitted = match kind {
            ObservationType::Screenshot => "screenshot",
            ObservationType::A11yTree => "accessibility tree",
            ObservationType::ScreenshotA11yTree => "screenshot and accessibility tree",
        };
        let note = format!(
            "(step {}) {} [the {omitted} of this past step is omitted]",
            obs.step + 1,
            question(kind)
        );

        let body = json!({
            "model": self.config.model,
            "messages": messages,
            "temperature": self.config.temperature,
            "top_p": self.config.top_p,
            "max_tokens": self.config.max_tokens,
        });
        Ok((body, note))
    }

    fn remember(&mut self, user: String, assistant: &str) {
        if self.config.history_turns == 0 {
            return;
        }
        let assistant = match assistant.trim() {
            "" => "No valid action".to_string(),
            t => t.to_string(),
        };
        self.history.push_back(Turn { user, assistant });
        while self.history.len() > self.config.history_turns {
            self.history.pop_front();
        }
    }

    /// Posts the body, retrying what is worth retrying.
    async fn post(&self, body: &Value) -> Result<Value, PolicyError> {
        let mut retries = 0u32;
        loop {
            let failure = match self.attempt(body).await {
                Ok(v) => return Ok(v),
                Err(f) => f,
            };
            match failure {
                Failure::Fatal(m) => return Err(fatal(m)),
                Failure::Malformed(m) => return Err(call_error(m)),
                Failure::Retry {
                    message,
                    retry_after,
                } => {
                    if retries >= self.config.max_retries {
                        return Err(call_error(format!(
                            "{} gave up after {} attempt(s): {message}",
                            self.endpoint,
                            retries + 1
                        )));
                    }
                    let exp = self
                        .config
                        .backoff_base
                        .saturating_mul(1u32 << retries.min(20));
                    let wait = retry_after.unwrap_or(exp).min(self.config.max_backoff);
                    tracing::warn!(endpoint = %self.endpoint, attempt = retries + 1, wait_ms = wait.as_millis() as u64, "{message}; retrying");
                    tokio::time::sleep(wait).await;
                    retries += 1;
                }
            }
        }
    }

    async fn attempt(&self, body: &Value) -> Result<Value, Failure> {
        let mut req = self.client.post(&self.endpoint).json(body);
        if let Some(key) = &self.api_key {
            req = req.bearer_auth(key);
        }
        let resp = req.send().await.map_err(|e| self.transport_failure(&e))?;
        let status = resp.status();
        let retry_after = resp
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|s| s.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(|s| Duration::from_secs_f64(s.min(86_400.0)));
        let bytes = resp.bytes().await.map_err(|e| self.transport_failure(&e))?;
        let text = String::from_utf8_lossy(&bytes);
        if status.is_success() {
            return serde_json::from_slice(&bytes).map_err(|e| {
                Failure::Malformed(format!(
                    "{} answered HTTP {status} with a body that is not JSON ({e}): {}",
                    self.endpoint,
                    snippet(&text)
                ))
            });
        }
        let message = format!(
            "{} answered HTTP {status}: {}",
            self.endpoint,
            snippet(&text)
        );
        if status.as_u16() == 429 || status.is_server_error() {
            Err(Failure::Retry {
                message,
                retry_after,
            })
        } else {
            let hint = match status.as_u16() {
                401 | 403 => match &self.config.api_key_env {
                    Some(var) if self.api_key.is_some() => format!(" (check the key in ${var})"),
                    Some(var) => format!(" (${var} is not set)"),
                    None => " (set api_key_env to the variable that holds the API key)".into(),
                },
                404 => {
                    " (check base_url and model: requests go to {base_url}/chat/completions)".into()
                }
                _ => String::new(),
            };
            Err(Failure::Fatal(format!("{message}{hint}")))
        }
    }

    fn transport_failure(&self, e: &reqwest::Error) -> Failure {
        let chain = error_chain(e);
        if e.is_builder() {
            return Failure::Fatal(format!("cannot send to {}: {chain}", self.endpoint));
        }
        let message = if e.is_timeout() {
            format!(
                "{} did not answer within {:.1}s (request_timeout): {chain}",
                self.endpoint,
                self.config.request_timeout.as_secs_f64()
            )
        } else if e.is_connect() {
            format!("cannot connect to {}: {chain}", self.endpoint)
        } else {
            format!("request to {} failed: {chain}", self.endpoint)
        };
        Failure::Retry {
            message,
            retry_after: None,
        }
    }
}

/// Why one attempt failed.
enum Failure {
    Retry {
        message: String,
        retry_after: Option<Duration>,
    },
    Fatal(String),
    /// A 2xx whose body is unusable: not retried.
    Malformed(String),
}

impl Policy for OpenAiPolicy {
    fn name(&self) -> &str {
        AGENT_NAME
    }

    fn reset(&mut self, ctx: &EpisodeContext) -> Result<(), PolicyError> {
        self.ctx = Some(ctx.clone());
        self.history.clear();
        Ok(())
    }

    fn next<'a>(&'a mut self, obs: &'a Observation) -> BoxFuture<'a, Result<Reply, PolicyError>> {
        async move {
            let started = Instant::now();
            let (body, note) = self.build(obs)?;
            let space = self
                .ctx
                .as_ref()
                .map(|c| c.action_space)
                .unwrap_or_default();
            let response = self.post(&body).await?;
            let latency_ms = started.elapsed().as_secs_f64() * 1000.0;
            let usage = usage_of(&response);
            let spent = match usage {
                Some(u) => format!(
                    " [{} prompt + {} completion tokens, {latency_ms:.0} ms]",
                    u.prompt_tokens, u.completion_tokens
                ),
                None => format!(" [{latency_ms:.0} ms]"),
            };
            let content = match content_of(&response) {
                Ok(c) => c,
                Err(m) => {
                    return Err(call_error(format!(
                        "unusable completion from {}: {m}{spent}",
                        self.endpoint
                    )))
                }
            };
            self.remember(note, &content);
            match super::parse_response(&content, space) {
                Ok(decisions) => Ok(Reply {
                    decisions,
                    raw: content,
                    usage,
                    latency_ms,
                }),
                Err(m) => Err(call_error(format!(
                    "the model's answer holds no usable {} action: {m}; it answered: {}{spent}",
                    space.as_str(),
                    snippet(&content)
                ))),
            }
        }
        .boxed()
    }
}

/// Token counts from the response's `usage`, when it has any.
fn usage_of(v: &Value) -> Option<Usage> {
    let u = v.get("usage")?;
    let prompt = u.get("prompt_tokens").and_then(Value::as_u64);
    let completion = u.get("completion_tokens").and_then(Value::as_u64);
    if prompt.is_none() && completion.is_none() {
        return None;
    }
    Some(Usage {
        prompt_tokens: prompt.unwrap_or(0),
        completion_tokens: completion.unwrap_or(0),
    })
}

/// `choices[0].message.content` as text, or what is wrong with it.
fn content_of(v: &Value) -> Result<String, String> {
    let Some(obj) = v.as_object() else {
        return Err(format!(
            "the body is not a JSON object: {}",
            snippet(&v.to_string())
        ));
    };
    let choices = match obj.get("choices") {
        Some(Value::Array(c)) => c,
        Some(other) => {
            return Err(format!(
                "`choices` is not a list: {}",
                snippet(&other.to_string())
            ))
        }
        None => {
            return Err(match obj.get("error") {
                Some(e) => format!(
                    "the response has no `choices` but an error: {}",
                    snippet(
                        &e.get("message")
                            .and_then(Value::as_str)
                            .map(str::to_string)
                            .unwrap_or_else(|| e.to_string())
                    )
                ),
                None => format!("the response has no `choices`: {}", snippet(&v.to_string())),
            })
        }
    };
    let Some(first) = choices.first() else {
        return Err("`choices` is empty".into());
    };
    let finish = first
        .get("finish_reason")
        .and_then(Value::as_str)
        .unwrap_or("none");
    let Some(message) = first.get("message") else {
        return Err("`choices[0]` has no `message`".into());
    };
    match message.get("content") {
        Some(Value::String(s)) => Ok(s.clone()),
        // Some servers answer with content parts; keep their text.
        Some(Value::Array(parts))
            if parts
                .iter()
                .all(|p| p.get("text").and_then(Value::as_str).is_some()) =>
        {
            Ok(parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"))
        }
        Some(Value::Null) | None => {
            let refusal = message.get("refusal").and_then(Value::as_str);
            Err(match refusal {
                Some(r) => format!(
                    "`choices[0].message.content` is empty; the model refused: {}",
                    snippet(r)
                ),
                None => format!(
                    "`choices[0].message.content` is missing or null (finish_reason: {finish})"
                ),
            })
        }
        Some(other) => Err(format!(
            "`choices[0].message.content` is not a string: {}",
            snippet(&other.to_string())
        )),
    }
}

/// The step question without the tree, for past turns.
fn question(kind: ObservationType) -> String {
    match kind {
        ObservationType::Screenshot => format!("Given the screenshot as below. {ASK}"),
        ObservationType::A11yTree => {
            format!("Given the info from accessibility tree as below. {ASK}")
        }
        ObservationType::ScreenshotA11yTree => {
            format!("Given the screenshot and info from accessibility tree as below. {ASK}")
        }
    }
}

/// Cuts the linearized tree to about `token_cap` tokens, at a row boundary
/// when one is near, and marks the cut with `[...]` as OSWorld does.
pub fn cap_a11y(text: &str, token_cap: usize) -> String {
    let max_chars = token_cap.saturating_mul(CHARS_PER_TOKEN);
    let Some((cut, _)) = text.char_indices().nth(max_chars) else {
        return text.to_string();
    };
    // The guest's mark of a cut walk stays, after the cut.
    if let Some(mark) = protocol::a11y::linear_mark(text) {
        let body = &text[..text.len() - mark.len() - 1];
        return format!("{}\n{mark}", cap_a11y(body, token_cap));
    }
    let head = &text[..cut];
    // Prefer ending on a whole row when one ends in the last fifth.
    let head = match head.rfind('\n') {
        Some(nl) if nl > 0 && nl >= head.len() * 4 / 5 => &head[..nl],
        _ => head,
    };
    format!("{head}\n[...]")
}

/// Standard base64 with padding.
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        out.push(ALPHABET[(n >> 18) as usize & 63] as char);
        out.push(ALPHABET[(n >> 12) as usize & 63] as char);
        out.push(if chunk.len() > 1 {
            ALPHABET[(n >> 6) as usize & 63] as char
        } else {
            '='
        });
        out.push(if chunk.len() > 2 {
            ALPHABET[n as usize & 63] as char
        } else {
            '='
        });
    }
    out
}

/// At most [`SNIPPET_CHARS`] characters of `text`, on one line.
fn snippet(text: &str) -> String {
    let text = text.trim();
    let mut out: String = text.chars().take(SNIPPET_CHARS).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    if out.is_empty() {
        out.push_str("(empty body)");
    }
    out.replace('\n', "\\n")
}

fn system_prompt(ctx: &EpisodeContext, (w, h): (u32, u32)) -> String {
    let seeing = match ctx.observation {
        ObservationType::Screenshot => {
            "At each step you get a screenshot of the screen, and you decide what the computer should do next from it."
        }
        ObservationType::A11yTree => {
            "At each step you get the screen's accessibility tree as a table (one element per row: tag, name, text, \
             class, description, top-left position and size in pixels), and you decide what the computer should do \
             next from it."
        }
        ObservationType::ScreenshotA11yTree => {
            "At each step you get a screenshot of the screen and its accessibility tree as a table (one element per \
             row: tag, name, text, class, description, top-left position and size in pixels), and you decide what \
             the computer should do next from both."
        }
    };
    let mut p = format!(
        "You are an agent that carries out tasks on a Linux desktop computer for me. You know computers well, the \
         computer is online, and what you answer controls its mouse and keyboard.\n{seeing}\nThe screen is {w}x{h} \
         pixels: (0, 0) is the top-left corner and ({w}, {h}) the bottom-right one. Work out coordinates yourself \
         from what you observe, and check that they land on what you mean.\n\n"
    );
    match ctx.action_space {
        ActionSpace::Pyautogui => p.push_str(
            "Act with Python code that uses `pyautogui` (and `time`). Do not call `pyautogui.locateCenterOnScreen` \
             (there are no images of the elements to look for) or `pyautogui.screenshot()`. Each answer is run on its \
             own: nothing you defined in earlier answers exists any more. Be efficient: one or several lines per \
             step; put a short pause such as `time.sleep(0.5)` between actions that need the screen to catch up.\n\
             Put the code in a fenced block:\n```python\n# your code\n```\n",
        ),
        ActionSpace::Computer13 => p.push_str(&format!(
            "Act with actions written as JSON objects, each in a fenced block:\n```json\n{{\"action_type\": \"CLICK\", \
             \"x\": 960, \"y\": 540}}\n```\nThe actions (x in [0, {w}], y in [0, {h}]; a `?` marks an optional \
             parameter):\n\
             - MOVE_TO {{x, y}}: move the pointer there.\n\
             - CLICK {{button?, x?, y?, num_clicks?}}: click; button is \"left\" (default), \"right\" or \"middle\"; \
             at the pointer unless x and y are given; num_clicks 1 (default), 2 or 3.\n\
             - MOUSE_DOWN {{button?}} / MOUSE_UP {{button?}}: press / release a button.\n\
             - RIGHT_CLICK {{x?, y?}} / DOUBLE_CLICK {{x?, y?}}.\n\
             - DRAG_TO {{x, y}}: hold the left button and move there.\n\
             - SCROLL {{dx?, dy?}}: turn the wheel by whole clicks; dy > 0 scrolls up, dx > 0 right.\n\
             - TYPING {{text}}: type the text.\n\
             - PRESS {{key}} / KEY_DOWN {{key}} / KEY_UP {{key}}: a key by its pyautogui name (\"enter\", \"tab\", \
             \"ctrl\", \"a\", \"f5\", …).\n\
             - HOTKEY {{keys}}: press a combination, e.g. {{\"action_type\": \"HOTKEY\", \"keys\": [\"ctrl\", \"s\"]}}.\n\
             Use only these action types and parameters; any other is invalid. Several blocks run in order, one \
             step each.\n"
        )),
    }
    p.push_str(&format!(
        "Instead of acting you may answer with one of these words alone:\n\
         - ```WAIT``` when something needs time to finish;\n\
         - ```FAIL``` when the task cannot be done at all (try hard before saying so);\n\
         - ```DONE``` when the task is complete.\n\
         The password of the computer's user is '{CLIENT_PASSWORD}'; use it when sudo asks for it.\n\
         First reflect briefly on the current observation and on what was done so far, then give the {} or the \
         special word. Nothing else.\n\nThe task: {}",
        match ctx.action_space {
            ActionSpace::Pyautogui => "code",
            ActionSpace::Computer13 => "action(s)",
        },
        ctx.instruction.trim()
    ));
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(observation: ObservationType, action_space: ActionSpace) -> EpisodeContext {
        EpisodeContext {
            task_id: "t".into(),
            instruction: "Open the terminal.".into(),
            observation,
            action_space,
            max_steps: 15,
            solution: None,
        }
    }

    #[test]
    fn base64_matches_the_standard() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64(&[0xff, 0xfe, 0x00, 0x80]), "//4AgA==");
    }

    #[test]
    fn the_tree_is_capped_on_char_and_row_boundaries() {
        assert_eq!(cap_a11y("short", 10), "short");
        let t = "é".repeat(100);
        let c = cap_a11y(&t, 5);
        assert_eq!(c, format!("{}\n[...]", "é".repeat(20)));
        let rows = "row1\nrow2\nrow3\nrow4\n";
        assert_eq!(cap_a11y(rows, 3), "row1\nrow2\n[...]");
        // The guest's mark of a cut walk survives the cap.
        let mut marked = rows.to_string();
        protocol::a11y::mark_truncated(&mut marked, false, "timeout after 10000 ms");
        assert_eq!(
            cap_a11y(&marked, 3),
            "row1\nrow2\n[...]\n# deskenv: the accessibility tree is truncated: timeout after 10000 ms"
        );
        assert_eq!(cap_a11y(&marked, 1000), marked);
    }

    #[test]
    fn config_is_checked_with_clear_messages() {
        let e = OpenAiPolicy::new(OpenAiConfig::new("localhost:8000", "m"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("base_url"), "{e}");
        let e = OpenAiPolicy::new(OpenAiConfig::new("http://x/v1", " "))
            .unwrap_err()
            .to_string();
        assert!(e.contains("model"), "{e}");
        let a = OpenAiPolicy::new(OpenAiConfig::new("http://127.0.0.1:8000/v1/", "m")).unwrap();
        assert_eq!(a.endpoint(), "http://127.0.0.1:8000/v1/chat/completions");
    }

    #[test]
    fn prompts_follow_observation_and_action_space() {
        for obs in [
            ObservationType::Screenshot,
            ObservationType::A11yTree,
            ObservationType::ScreenshotA11yTree,
        ] {
            for space in [ActionSpace::Pyautogui, ActionSpace::Computer13] {
                let p = system_prompt(&ctx(obs, space), (1920, 1080));
                assert!(p.contains("1920x1080"), "{p}");
                assert!(p.ends_with("The task: Open the terminal."), "{p}");
                assert!(p.contains("'password'"));
                assert!(p.contains("```DONE```"));
                assert_eq!(p.contains("```python"), space == ActionSpace::Pyautogui);
                assert_eq!(p.contains("```json"), space == ActionSpace::Computer13);
                assert_eq!(
                    p.contains("screenshot of the screen"),
                    obs.wants_screenshot()
                );
                assert_eq!(p.contains("accessibility tree"), obs.wants_a11y());
            }
        }
    }

    #[test]
    fn completions_are_read_leniently_but_never_guessed() {
        let ok = json!({"choices": [{"message": {"content": "DONE"}}], "usage": {"prompt_tokens": 3, "completion_tokens": 1}});
        assert_eq!(content_of(&ok).unwrap(), "DONE");
        assert_eq!(
            usage_of(&ok),
            Some(Usage {
                prompt_tokens: 3,
                completion_tokens: 1
            })
        );
        let parts =
            json!({"choices": [{"message": {"content": [{"type": "text", "text": "WAIT"}]}}]});
        assert_eq!(content_of(&parts).unwrap(), "WAIT");
        assert!(content_of(&json!({"error": {"message": "overloaded"}}))
            .unwrap_err()
            .contains("overloaded"));
        assert!(content_of(&json!({"choices": []}))
            .unwrap_err()
            .contains("empty"));
        assert!(
            content_of(&json!({"choices": [{"message": {"content": 4}}]}))
                .unwrap_err()
                .contains("not a string")
        );
        assert!(content_of(
            &json!({"choices": [{"message": {"content": null}, "finish_reason": "length"}]})
        )
        .unwrap_err()
        .contains("length"));
        assert_eq!(usage_of(&json!({"usage": {}})), None);
    }
}
