//! Actions an agent takes on the desktop: OSWorld's `computer_13` space.
//!
//! On the wire an action is OSWorld's JSON shape,
//! `{"action_type": "CLICK", "parameters": {"x": 10, "y": 20}}`. The
//! parameters may also stand beside `action_type` (OSWorld's controller
//! accepts both), and the special actions may be the bare strings `"WAIT"`,
//! `"DONE"` and `"FAIL"`. Parsing is strict: an unknown action type, an
//! unknown or ill-typed parameter gets an [`ActionError`] naming it.
//!
//! Scroll amounts follow pyautogui: `dy > 0` scrolls up, `dx > 0` scrolls
//! right, one unit is one wheel click.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;

/// A mouse button.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Button {
    #[default]
    Left,
    Middle,
    Right,
}

impl Button {
    /// Parses pyautogui's and OSWorld's button names.
    pub fn parse(name: &str) -> Option<Button> {
        match name {
            "left" | "primary" => Some(Button::Left),
            "middle" => Some(Button::Middle),
            "right" | "secondary" => Some(Button::Right),
            _ => None,
        }
    }
}

/// One action. The variant names are OSWorld's `action_type` strings.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    MoveTo {
        x: f64,
        y: f64,
    },
    Click {
        button: Button,
        x: Option<f64>,
        y: Option<f64>,
        num_clicks: u32,
    },
    RightClick {
        x: Option<f64>,
        y: Option<f64>,
    },
    DoubleClick {
        x: Option<f64>,
        y: Option<f64>,
    },
    MouseDown {
        button: Button,
    },
    MouseUp {
        button: Button,
    },
    /// Press `button` where the pointer is, move to (x, y), release.
    DragTo {
        x: f64,
        y: f64,
        button: Button,
    },
    /// Wheel clicks; `x`/`y` move the pointer first when given.
    Scroll {
        dx: i32,
        dy: i32,
        x: Option<f64>,
        y: Option<f64>,
    },
    /// Type any Unicode text; `interval` seconds between characters.
    Typing {
        text: String,
        interval: Option<f64>,
    },
    /// Press and release one key `presses` times.
    Press {
        key: String,
        presses: u32,
        interval: Option<f64>,
    },
    /// Press the keys in order, release them in reverse order.
    Hotkey {
        keys: Vec<String>,
    },
    KeyDown {
        key: String,
    },
    KeyUp {
        key: String,
    },
    /// Do nothing for `seconds` (OSWorld's WAIT carries no duration).
    Wait {
        seconds: Option<f64>,
    },
    Done,
    Fail,
}

/// Every `action_type` this crate knows, in OSWorld's order.
pub const ACTION_TYPES: [&str; 16] = [
    "MOVE_TO",
    "CLICK",
    "MOUSE_DOWN",
    "MOUSE_UP",
    "RIGHT_CLICK",
    "DOUBLE_CLICK",
    "DRAG_TO",
    "SCROLL",
    "TYPING",
    "PRESS",
    "KEY_DOWN",
    "KEY_UP",
    "HOTKEY",
    "WAIT",
    "FAIL",
    "DONE",
];

/// Why a JSON value is not an [`Action`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ActionError {
    #[error("an action must be a JSON object with \"action_type\" or one of \"WAIT\", \"DONE\", \"FAIL\"; got {0}")]
    NotAnAction(String),
    #[error("unknown action_type {0:?}; expected one of {list}", list = ACTION_TYPES.join(", "))]
    UnknownType(String),
    #[error("{action}: missing parameter {param:?}")]
    Missing {
        action: &'static str,
        param: &'static str,
    },
    #[error("{action}: parameter {param:?} must be {expected}, got {got}")]
    BadParam {
        action: &'static str,
        param: String,
        expected: &'static str,
        got: String,
    },
    #[error("{action}: unknown parameter {param:?}; expected {expected}")]
    UnknownParam {
        action: &'static str,
        param: String,
        expected: &'static str,
    },
}

impl Action {
    /// OSWorld's `action_type` string for this action.
    pub fn action_type(&self) -> &'static str {
        match self {
            Action::MoveTo { .. } => "MOVE_TO",
            Action::Click { .. } => "CLICK",
            Action::RightClick { .. } => "RIGHT_CLICK",
            Action::DoubleClick { .. } => "DOUBLE_CLICK",
            Action::MouseDown { .. } => "MOUSE_DOWN",
            Action::MouseUp { .. } => "MOUSE_UP",
            Action::DragTo { .. } => "DRAG_TO",
            Action::Scroll { .. } => "SCROLL",
            Action::Typing { .. } => "TYPING",
            Action::Press { .. } => "PRESS",
            Action::Hotkey { .. } => "HOTKEY",
            Action::KeyDown { .. } => "KEY_DOWN",
            Action::KeyUp { .. } => "KEY_UP",
            Action::Wait { .. } => "WAIT",
            Action::Done => "DONE",
            Action::Fail => "FAIL",
        }
    }

    /// Whether the action ends the episode (DONE or FAIL).
    pub fn is_terminal(&self) -> bool {
        matches!(self, Action::Done | Action::Fail)
    }

    /// The screen point the action names, if any, to check against the frame.
    pub fn point(&self) -> Option<(f64, f64)> {
        match *self {
            Action::MoveTo { x, y } | Action::DragTo { x, y, .. } => Some((x, y)),
            Action::Click {
                x: Some(x),
                y: Some(y),
                ..
            }
            | Action::RightClick {
                x: Some(x),
                y: Some(y),
            }
            | Action::DoubleClick {
                x: Some(x),
                y: Some(y),
            }
            | Action::Scroll {
                x: Some(x),
                y: Some(y),
                ..
            } => Some((x, y)),
            _ => None,
        }
    }

    /// Parses OSWorld's JSON shapes (see the module docs).
    pub fn from_json(value: &Value) -> Result<Action, ActionError> {
        let obj = match value {
            Value::String(s) => {
                return match s.as_str() {
                    "WAIT" => Ok(Action::Wait { seconds: None }),
                    "DONE" => Ok(Action::Done),
                    "FAIL" => Ok(Action::Fail),
                    other => Err(ActionError::UnknownType(other.to_string())),
                }
            }
            Value::Object(obj) => obj,
            other => return Err(ActionError::NotAnAction(short(other))),
        };
        let kind = match obj.get("action_type") {
            Some(Value::String(s)) => s.as_str(),
            Some(other) => {
                return Err(ActionError::BadParam {
                    action: "action",
                    param: "action_type".into(),
                    expected: "a string",
                    got: short(other),
                })
            }
            None => return Err(ActionError::NotAnAction(short(value))),
        };
        let params: Map<String, Value> = match obj.get("parameters") {
            Some(Value::Object(p)) => p.clone(),
            Some(Value::Null) | None => obj
                .iter()
                .filter(|(k, _)| k.as_str() != "action_type" && k.as_str() != "parameters")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            Some(other) => {
                return Err(ActionError::BadParam {
                    action: "action",
                    param: "parameters".into(),
                    expected: "an object",
                    got: short(other),
                })
            }
        };
        let p = Params {
            action: static_type(kind).ok_or_else(|| ActionError::UnknownType(kind.into()))?,
            map: params,
        };
        let action = match p.action {
            "MOVE_TO" => {
                p.only(&["x", "y"])?;
                Action::MoveTo {
                    x: p.num("x")?,
                    y: p.num("y")?,
                }
            }
            "CLICK" => {
                p.only(&["button", "x", "y", "num_clicks"])?;
                Action::Click {
                    button: p.button()?,
                    x: p.opt_num("x")?,
                    y: p.opt_num("y")?,
                    num_clicks: p.opt_count("num_clicks")?.unwrap_or(1),
                }
            }
            "RIGHT_CLICK" | "DOUBLE_CLICK" => {
                p.only(&["x", "y"])?;
                let (x, y) = (p.opt_num("x")?, p.opt_num("y")?);
                if p.action == "RIGHT_CLICK" {
                    Action::RightClick { x, y }
                } else {
                    Action::DoubleClick { x, y }
                }
            }
            "MOUSE_DOWN" | "MOUSE_UP" => {
                p.only(&["button"])?;
                let button = p.button()?;
                if p.action == "MOUSE_DOWN" {
                    Action::MouseDown { button }
                } else {
                    Action::MouseUp { button }
                }
            }
            "DRAG_TO" => {
                p.only(&["x", "y", "button"])?;
                Action::DragTo {
                    x: p.num("x")?,
                    y: p.num("y")?,
                    button: p.button()?,
                }
            }
            "SCROLL" => {
                p.only(&["dx", "dy", "x", "y"])?;
                let dx = p.opt_int("dx")?;
                let dy = p.opt_int("dy")?;
                if dx.is_none() && dy.is_none() {
                    return Err(ActionError::Missing {
                        action: p.action,
                        param: "dx or dy",
                    });
                }
                Action::Scroll {
                    dx: dx.unwrap_or(0),
                    dy: dy.unwrap_or(0),
                    x: p.opt_num("x")?,
                    y: p.opt_num("y")?,
                }
            }
            "TYPING" => {
                p.only(&["text", "interval"])?;
                Action::Typing {
                    text: p.string("text")?,
                    interval: p.opt_num("interval")?,
                }
            }
            "PRESS" => {
                p.only(&["key", "presses", "interval"])?;
                Action::Press {
                    key: p.string("key")?,
                    presses: p.opt_count("presses")?.unwrap_or(1),
                    interval: p.opt_num("interval")?,
                }
            }
            "KEY_DOWN" | "KEY_UP" => {
                p.only(&["key"])?;
                let key = p.string("key")?;
                if p.action == "KEY_DOWN" {
                    Action::KeyDown { key }
                } else {
                    Action::KeyUp { key }
                }
            }
            "HOTKEY" => {
                p.only(&["keys"])?;
                let keys = match p.map.get("keys") {
                    Some(Value::Array(items)) if !items.is_empty() => items
                        .iter()
                        .map(|k| match k {
                            Value::String(s) => Ok(s.clone()),
                            other => Err(p.bad("keys", "a list of key names", other)),
                        })
                        .collect::<Result<Vec<_>, _>>()?,
                    Some(other) => {
                        return Err(p.bad("keys", "a non-empty list of key names", other))
                    }
                    None => {
                        return Err(ActionError::Missing {
                            action: p.action,
                            param: "keys",
                        })
                    }
                };
                Action::Hotkey { keys }
            }
            "WAIT" => {
                p.only(&["seconds"])?;
                Action::Wait {
                    seconds: p.opt_num("seconds")?,
                }
            }
            "DONE" => {
                p.only(&[])?;
                Action::Done
            }
            "FAIL" => {
                p.only(&[])?;
                Action::Fail
            }
            _ => unreachable!("static_type only returns known types"),
        };
        Ok(action)
    }

    /// OSWorld's JSON shape, `{"action_type", "parameters"}`.
    pub fn to_json(&self) -> Value {
        let mut p = Map::new();
        let mut put = |k: &str, v: Value| {
            p.insert(k.to_string(), v);
        };
        match self {
            Action::MoveTo { x, y } => {
                put("x", num(*x));
                put("y", num(*y));
            }
            Action::Click {
                button,
                x,
                y,
                num_clicks,
            } => {
                put("button", serde_json::to_value(button).unwrap_or_default());
                if let (Some(x), Some(y)) = (x, y) {
                    put("x", num(*x));
                    put("y", num(*y));
                }
                put("num_clicks", Value::from(*num_clicks));
            }
            Action::RightClick { x, y } | Action::DoubleClick { x, y } => {
                if let (Some(x), Some(y)) = (x, y) {
                    put("x", num(*x));
                    put("y", num(*y));
                }
            }
            Action::MouseDown { button } | Action::MouseUp { button } => {
                put("button", serde_json::to_value(button).unwrap_or_default());
            }
            Action::DragTo { x, y, button } => {
                put("x", num(*x));
                put("y", num(*y));
                put("button", serde_json::to_value(button).unwrap_or_default());
            }
            Action::Scroll { dx, dy, x, y } => {
                put("dx", Value::from(*dx));
                put("dy", Value::from(*dy));
                if let (Some(x), Some(y)) = (x, y) {
                    put("x", num(*x));
                    put("y", num(*y));
                }
            }
            Action::Typing { text, interval } => {
                put("text", Value::from(text.clone()));
                if let Some(i) = interval {
                    put("interval", num(*i));
                }
            }
            Action::Press {
                key,
                presses,
                interval,
            } => {
                put("key", Value::from(key.clone()));
                if *presses != 1 {
                    put("presses", Value::from(*presses));
                }
                if let Some(i) = interval {
                    put("interval", num(*i));
                }
            }
            Action::Hotkey { keys } => put("keys", Value::from(keys.clone())),
            Action::KeyDown { key } | Action::KeyUp { key } => put("key", Value::from(key.clone())),
            Action::Wait { seconds } => {
                if let Some(s) = seconds {
                    put("seconds", num(*s));
                }
            }
            Action::Done | Action::Fail => {}
        }
        let mut obj = Map::new();
        obj.insert("action_type".into(), Value::from(self.action_type()));
        if !p.is_empty() {
            obj.insert("parameters".into(), Value::Object(p));
        }
        Value::Object(obj)
    }
}

impl Serialize for Action {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Action {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        Action::from_json(&v).map_err(serde::de::Error::custom)
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.to_json())
    }
}

fn num(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        Value::from(x as i64)
    } else {
        Value::from(x)
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 80 {
        let cut: String = s.chars().take(77).collect();
        format!("{cut}...")
    } else {
        s
    }
}

fn static_type(kind: &str) -> Option<&'static str> {
    ACTION_TYPES.iter().copied().find(|t| *t == kind)
}

struct Params {
    action: &'static str,
    map: Map<String, Value>,
}

impl Params {
    fn only(&self, allowed: &[&str]) -> Result<(), ActionError> {
        for k in self.map.keys() {
            if !allowed.contains(&k.as_str()) {
                return Err(ActionError::UnknownParam {
                    action: self.action,
                    param: k.clone(),
                    expected: leak_list(allowed),
                });
            }
        }
        Ok(())
    }

    fn bad(&self, param: &str, expected: &'static str, got: &Value) -> ActionError {
        ActionError::BadParam {
            action: self.action,
            param: param.into(),
            expected,
            got: short(got),
        }
    }

    fn opt_num(&self, k: &'static str) -> Result<Option<f64>, ActionError> {
        match self.map.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => match n.as_f64() {
                Some(f) if f.is_finite() => Ok(Some(f)),
                _ => Err(self.bad(k, "a finite number", &Value::Number(n.clone()))),
            },
            // Agents sometimes quote numbers; accept "12.5" but nothing looser.
            Some(Value::String(s)) => match s.trim().parse::<f64>() {
                Ok(f) if f.is_finite() => Ok(Some(f)),
                _ => Err(self.bad(k, "a number", &Value::String(s.clone()))),
            },
            Some(other) => Err(self.bad(k, "a number", other)),
        }
    }

    fn num(&self, k: &'static str) -> Result<f64, ActionError> {
        self.opt_num(k)?.ok_or(ActionError::Missing {
            action: self.action,
            param: k,
        })
    }

    fn opt_int(&self, k: &'static str) -> Result<Option<i32>, ActionError> {
        match self.opt_num(k)? {
            None => Ok(None),
            Some(f) if f.fract() == 0.0 && f.abs() <= 10_000.0 => Ok(Some(f as i32)),
            Some(f) => Err(self.bad(k, "a whole number between -10000 and 10000", &num(f))),
        }
    }

    fn opt_count(&self, k: &'static str) -> Result<Option<u32>, ActionError> {
        match self.opt_num(k)? {
            None => Ok(None),
            Some(f) if f.fract() == 0.0 && (1.0..=100.0).contains(&f) => Ok(Some(f as u32)),
            Some(f) => Err(self.bad(k, "a whole number from 1 to 100", &num(f))),
        }
    }

    fn string(&self, k: &'static str) -> Result<String, ActionError> {
        match self.map.get(k) {
            Some(Value::String(s)) => Ok(s.clone()),
            Some(other) => Err(self.bad(k, "a string", other)),
            None => Err(ActionError::Missing {
                action: self.action,
                param: k,
            }),
        }
    }

    fn button(&self) -> Result<Button, ActionError> {
        match self.map.get("button") {
            None | Some(Value::Null) => Ok(Button::Left),
            Some(Value::String(s)) => Button::parse(s).ok_or_else(|| {
                self.bad(
                    "button",
                    "\"left\", \"middle\" or \"right\"",
                    &Value::String(s.clone()),
                )
            }),
            Some(other) => Err(self.bad("button", "\"left\", \"middle\" or \"right\"", other)),
        }
    }
}

fn leak_list(items: &[&str]) -> &'static str {
    // The lists are the fixed literals above; match them instead of leaking.
    match items {
        [] => "no parameters",
        ["x", "y"] => "x, y",
        ["button", "x", "y", "num_clicks"] => "button, x, y, num_clicks",
        ["button"] => "button",
        ["x", "y", "button"] => "x, y, button",
        ["dx", "dy", "x", "y"] => "dx, dy, x, y",
        ["text", "interval"] => "text, interval",
        ["key", "presses", "interval"] => "key, presses, interval",
        ["key"] => "key",
        ["keys"] => "keys",
        ["seconds"] => "seconds",
        _ => "the documented parameters",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_osworld_shapes() {
        let a =
            Action::from_json(&json!({"action_type": "CLICK", "parameters": {"x": 10, "y": 20.5}}))
                .unwrap();
        assert_eq!(
            a,
            Action::Click {
                button: Button::Left,
                x: Some(10.0),
                y: Some(20.5),
                num_clicks: 1
            }
        );
        let flat = Action::from_json(&json!({"action_type": "TYPING", "text": "hi"})).unwrap();
        assert_eq!(
            flat,
            Action::Typing {
                text: "hi".into(),
                interval: None
            }
        );
        assert_eq!(Action::from_json(&json!("DONE")).unwrap(), Action::Done);
        assert_eq!(
            Action::from_json(&json!({"action_type": "FAIL"})).unwrap(),
            Action::Fail
        );
        let hk = Action::from_json(
            &json!({"action_type": "HOTKEY", "parameters": {"keys": ["ctrl", "a"]}}),
        )
        .unwrap();
        assert_eq!(
            hk,
            Action::Hotkey {
                keys: vec!["ctrl".into(), "a".into()]
            }
        );
    }

    #[test]
    fn round_trips_through_json() {
        let actions = vec![
            Action::MoveTo { x: 1.0, y: 2.5 },
            Action::Click {
                button: Button::Right,
                x: Some(3.0),
                y: Some(4.0),
                num_clicks: 2,
            },
            Action::Scroll {
                dx: 0,
                dy: -3,
                x: None,
                y: None,
            },
            Action::DragTo {
                x: 5.0,
                y: 6.0,
                button: Button::Left,
            },
            Action::Press {
                key: "enter".into(),
                presses: 3,
                interval: Some(0.1),
            },
            Action::Wait { seconds: Some(0.5) },
            Action::Done,
        ];
        for a in actions {
            let v = serde_json::to_value(&a).unwrap();
            let back: Action = serde_json::from_value(v).unwrap();
            assert_eq!(a, back);
        }
    }

    #[test]
    fn errors_name_the_problem() {
        let e = Action::from_json(&json!({"action_type": "JUMP"})).unwrap_err();
        assert!(e.to_string().contains("JUMP"), "{e}");
        let e = Action::from_json(&json!({"action_type": "MOVE_TO", "parameters": {"x": 1}}))
            .unwrap_err();
        assert_eq!(e.to_string(), "MOVE_TO: missing parameter \"y\"");
        let e = Action::from_json(&json!({"action_type": "CLICK", "parameters": {"button": "up"}}))
            .unwrap_err();
        assert!(e.to_string().contains("button"), "{e}");
        let e = Action::from_json(&json!({"action_type": "TYPING", "parameters": {"txt": "a"}}))
            .unwrap_err();
        assert!(e.to_string().contains("unknown parameter \"txt\""), "{e}");
        let e = Action::from_json(&json!(42)).unwrap_err();
        assert!(matches!(e, ActionError::NotAnAction(_)));
    }
}
