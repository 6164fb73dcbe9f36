//! Policies: what decides the next step of an episode (the "agent" of
//! `deskenv run --agent`; the guest agent in the VM is something else, and
//! its client is [`crate::guest_client`]). The loop gives a policy the
//! task's instruction once ([`Policy::reset`]) and then an [`Observation`]
//! per step ([`Policy::next`]); the policy answers with one or more
//! [`Decision`]s, each executed as one step.
//!
//! - [`noop`]: answers DONE at the first step (the negative control).
//! - [`scripted`]: replays the task's `solution` (the oracle).
//! - `openai`: any OpenAI-compatible chat-completions endpoint.
//! - [`http`]: an agent server of the user's own that deskenv calls.
//! - the HTTP client of `deskenv serve` ([`crate::serve`]), which drives
//!   the same loop from any language.

pub mod http;
pub mod noop;
pub mod openai;
pub mod scripted;

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};

#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// The agent cannot go on (no solution, endpoint unusable, …).
    #[error("agent {agent}: {message}")]
    Fatal { agent: String, message: String },
    /// One call failed; the loop records it and may ask again.
    #[error("agent {agent}: {message}")]
    Call { agent: String, message: String },
    /// The agent's driver ended the episode before DONE or FAIL (an HTTP
    /// client asked for the evaluation): the loop stops and the task is
    /// evaluated as it stands.
    #[error("agent {agent}: {message}")]
    Stopped { agent: String, message: String },
}

/// OSWorld's observation types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
#[value(rename_all = "snake_case")]
pub enum ObservationType {
    #[default]
    Screenshot,
    A11yTree,
    ScreenshotA11yTree,
}

impl ObservationType {
    pub fn as_str(self) -> &'static str {
        match self {
            ObservationType::Screenshot => "screenshot",
            ObservationType::A11yTree => "a11y_tree",
            ObservationType::ScreenshotA11yTree => "screenshot_a11y_tree",
        }
    }

    pub fn wants_screenshot(self) -> bool {
        self != ObservationType::A11yTree
    }

    pub fn wants_a11y(self) -> bool {
        self != ObservationType::Screenshot
    }
}

/// A name that is not one of an enum's (`--observation video`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} `{name}`: expected {expected}")]
pub struct UnknownName {
    pub what: &'static str,
    pub name: String,
    pub expected: &'static str,
}

impl std::str::FromStr for ObservationType {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        match s {
            "screenshot" => Ok(ObservationType::Screenshot),
            "a11y_tree" => Ok(ObservationType::A11yTree),
            "screenshot_a11y_tree" => Ok(ObservationType::ScreenshotA11yTree),
            o => Err(UnknownName {
                what: "observation type",
                name: o.into(),
                expected: "screenshot, a11y_tree or screenshot_a11y_tree",
            }),
        }
    }
}

/// OSWorld's action spaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum ActionSpace {
    #[default]
    Pyautogui,
    #[serde(rename = "computer_13")]
    #[value(name = "computer_13")]
    Computer13,
}

impl ActionSpace {
    pub fn as_str(self) -> &'static str {
        match self {
            ActionSpace::Pyautogui => "pyautogui",
            ActionSpace::Computer13 => "computer_13",
        }
    }
}

impl std::str::FromStr for ActionSpace {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        match s {
            "pyautogui" => Ok(ActionSpace::Pyautogui),
            "computer_13" => Ok(ActionSpace::Computer13),
            o => Err(UnknownName {
                what: "action space",
                name: o.into(),
                expected: "pyautogui or computer_13",
            }),
        }
    }
}

/// What the agent knows about the episode before the first step.
#[derive(Debug, Clone)]
pub struct EpisodeContext {
    pub task_id: String,
    pub instruction: String,
    pub observation: ObservationType,
    pub action_space: ActionSpace,
    pub max_steps: usize,
    /// The task's oracle solution, for the scripted agent.
    pub solution: Option<Vec<protocol::task::SolutionStep>>,
}

/// One observation.
#[derive(Debug, Clone, Default)]
pub struct Observation {
    /// 0-based step about to be taken.
    pub step: usize,
    pub screen: (u32, u32),
    pub screenshot_png: Option<Vec<u8>>,
    /// OSWorld's linearized a11y table.
    pub a11y_linear: Option<String>,
}

/// One step's decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum Decision {
    /// A pyautogui code block.
    Code(String),
    /// A `computer_13` action (not WAIT/DONE/FAIL, which are below).
    Action(protocol::Action),
    Wait,
    Done,
    Fail,
}

impl Decision {
    /// `WAIT`/`DONE`/`FAIL` as OSWorld writes them, the code, or the
    /// action's JSON.
    pub fn describe(&self) -> String {
        match self {
            Decision::Code(c) => c.clone(),
            Decision::Action(a) => a.to_json().to_string(),
            Decision::Wait => "WAIT".into(),
            Decision::Done => "DONE".into(),
            Decision::Fail => "FAIL".into(),
        }
    }
}

pub use protocol::result::Usage;

/// An agent's answer to one observation.
#[derive(Debug, Clone, Default)]
pub struct Reply {
    pub decisions: Vec<Decision>,
    /// The model's raw text (or the script's line), for the trajectory.
    pub raw: String,
    pub usage: Option<Usage>,
    pub latency_ms: f64,
}

/// An agent.
pub trait Policy: Send {
    fn name(&self) -> &str;
    /// A new episode begins.
    fn reset(&mut self, ctx: &EpisodeContext) -> Result<(), PolicyError>;
    /// The next decisions for this observation.
    fn next<'a>(&'a mut self, obs: &'a Observation) -> BoxFuture<'a, Result<Reply, PolicyError>>;
    /// The step loop ended (before postconfig and evaluation).
    fn finished(&mut self, _end: crate::episode::EndReason) {}
}

/// Parses a model's or a script's text into decisions the OSWorld way:
/// `WAIT`, `DONE`, `FAIL` alone, or fenced code blocks (```python …```),
/// or the whole text as one code block when it has no fence.
pub fn parse_response(text: &str, space: ActionSpace) -> Result<Vec<Decision>, String> {
    let trimmed = text.trim();
    match trimmed {
        "WAIT" => return Ok(vec![Decision::Wait]),
        "DONE" => return Ok(vec![Decision::Done]),
        "FAIL" => return Ok(vec![Decision::Fail]),
        _ => {}
    }
    let blocks = fenced_blocks(trimmed);
    if blocks.is_empty() {
        // No fence: a special word on the last line wins ("The task is
        // done.\nDONE"), as in OSWorld's parser.
        match trimmed.lines().last().map(str::trim) {
            Some("WAIT") => return Ok(vec![Decision::Wait]),
            Some("DONE") => return Ok(vec![Decision::Done]),
            Some("FAIL") => return Ok(vec![Decision::Fail]),
            _ => {}
        }
    }
    let blocks = if blocks.is_empty() {
        vec![trimmed.to_string()]
    } else {
        blocks
    };
    let mut out = Vec::new();
    for b in blocks {
        let b = b.trim();
        match b {
            "WAIT" => out.push(Decision::Wait),
            "DONE" => out.push(Decision::Done),
            "FAIL" => out.push(Decision::Fail),
            "" => {}
            code => match space {
                ActionSpace::Pyautogui => out.push(Decision::Code(code.to_string())),
                ActionSpace::Computer13 => {
                    let v: serde_json::Value = serde_json::from_str(code)
                        .map_err(|e| format!("not a computer_13 action (JSON): {e}"))?;
                    let items = match v {
                        serde_json::Value::Array(a) => a,
                        other => vec![other],
                    };
                    for item in items {
                        match item.as_str() {
                            Some("WAIT") => out.push(Decision::Wait),
                            Some("DONE") => out.push(Decision::Done),
                            Some("FAIL") => out.push(Decision::Fail),
                            _ => out.push(Decision::Action(
                                protocol::Action::from_json(&item).map_err(|e| e.to_string())?,
                            )),
                        }
                    }
                }
            },
        }
    }
    if out.is_empty() {
        return Err(
            "no action in the response (expected a ```python block, or WAIT, DONE, FAIL)".into(),
        );
    }
    Ok(out)
}

/// The decisions of an action given as JSON — pyautogui code, WAIT, DONE,
/// FAIL, a computer_13 action object, or a list of them — or else of a
/// model's raw `response` (parsed by [`parse_response`]). Code is checked
/// against the supported pyautogui subset, so a bad block is an error here,
/// before it costs a step. Used by `deskenv serve` and the `http` agent.
pub fn decisions_from(
    action: Option<&serde_json::Value>,
    response: Option<&str>,
    space: ActionSpace,
) -> Result<Vec<Decision>, String> {
    use serde_json::Value;
    let one = |v: &Value| -> Result<Decision, String> {
        match v {
            Value::String(s) => match s.trim() {
                "WAIT" => Ok(Decision::Wait),
                "DONE" => Ok(Decision::Done),
                "FAIL" => Ok(Decision::Fail),
                code => match space {
                    ActionSpace::Pyautogui => Ok(Decision::Code(code.to_string())),
                    ActionSpace::Computer13 => Err(format!(
                        "`{code}`: in the computer_13 action space an action is an object such as {{\"action_type\": \"CLICK\", \"x\": 10, \"y\": 20}}, or WAIT, DONE, FAIL"
                    )),
                },
            },
            Value::Object(_) => match space {
                ActionSpace::Computer13 => protocol::Action::from_json(v)
                    .map(Decision::Action)
                    .map_err(|e| format!("computer_13: {e}")),
                ActionSpace::Pyautogui => Err(
                    "an object: the action space is pyautogui (code as a string, or WAIT, DONE, FAIL); computer_13 takes action objects".into(),
                ),
            },
            other => Err(format!(
                "expected a string (code, WAIT, DONE, FAIL) or an action object, got {other}"
            )),
        }
    };
    let out = match (action, response) {
        (Some(Value::Array(items)), _) => items.iter().map(one).collect::<Result<Vec<_>, _>>()?,
        (Some(v), _) => vec![one(v)?],
        (None, Some(text)) => parse_response(text, space)?,
        (None, None) => return Err("no action and no response".into()),
    };
    if out.is_empty() {
        return Err("an empty list of actions".into());
    }
    for d in &out {
        if let Decision::Code(c) = d {
            protocol::pyautogui::parse(c).map_err(|e| format!("pyautogui code: {e}"))?;
        }
    }
    Ok(out)
}

fn fenced_blocks(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("```") {
        let after = &rest[start + 3..];
        // Skip the language tag line.
        let body_start = after.find('\n').map(|i| i + 1).unwrap_or(after.len());
        let body = &after[body_start..];
        let Some(end) = body.find("```") else { break };
        out.push(body[..end].to_string());
        rest = &body[end + 3..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_parse_like_osworld() {
        assert_eq!(
            parse_response(" DONE\n", ActionSpace::Pyautogui).unwrap(),
            vec![Decision::Done]
        );
        assert_eq!(
            parse_response("The file is saved.\nDONE", ActionSpace::Pyautogui).unwrap(),
            vec![Decision::Done]
        );
        let r = parse_response(
            "I will click.\n```python\npyautogui.click(10, 20)\n```\nthen\n```\nWAIT\n```",
            ActionSpace::Pyautogui,
        )
        .unwrap();
        assert_eq!(
            r,
            vec![
                Decision::Code("pyautogui.click(10, 20)\n".trim().to_string()),
                Decision::Wait
            ]
        );
        let r = parse_response(
            "```json\n{\"action_type\": \"CLICK\", \"x\": 5, \"y\": 6}\n```",
            ActionSpace::Computer13,
        )
        .unwrap();
        assert!(matches!(r[0], Decision::Action(_)));
        assert!(parse_response(
            "```json\n{\"action_type\": \"JUMP\"}\n```",
            ActionSpace::Computer13
        )
        .is_err());
        assert!(parse_response("```python\n```", ActionSpace::Pyautogui).is_err());
        assert_eq!(
            "a11y_tree".parse::<ObservationType>(),
            Ok(ObservationType::A11yTree)
        );
        assert!("video".parse::<ObservationType>().is_err());
    }
}
