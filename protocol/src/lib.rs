//! Wire and file types shared by every deskenv process.
//!
//! Serde only, no I/O: what crosses a process or a file boundary lives here
//! so the guest agent, the controller and the evaluators agree on it.
//!
//! # Layout
//! - [`action`]: OSWorld's `computer_13` actions ([`Action`]), strict JSON parsing.
//! - [`pyautogui`]: the pure parser from agents' pyautogui code to actions.
//! - [`a11y`]: the accessibility tree ([`A11yNode`]), OSWorld's XML and linear table.
//! - [`api`]: request and response bodies of the guest agent's `/v1` API.
//! - [`result`]: the files a run writes: `result.json`, the trajectory's lines, `run.json`.
//! - [`task`]: task files (OSWorld's JSON plus deskenv's keys), setup steps, evaluator specs.

pub mod a11y;
pub mod action;
pub mod api;
pub mod pyautogui;
pub mod result;
pub mod task;

pub use a11y::A11yNode;
pub use action::{Action, ActionError, Button};
