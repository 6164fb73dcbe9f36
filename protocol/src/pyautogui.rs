//! The pyautogui-code parser: pure, total, turns agent code into actions.

use crate::action::Action;

/// Why code could not be turned into actions.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PyautoguiError {
    #[error("line {line}: unsupported call {call}")]
    Unsupported { line: usize, call: String },
}

/// Parses pyautogui code into actions.
pub fn parse(code: &str) -> Result<Vec<Action>, PyautoguiError> {
    let _ = code;
    Ok(Vec::new())
}
