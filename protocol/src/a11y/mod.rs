//! The accessibility tree as data, and its OSWorld renderings.
//!
//! The guest agent walks AT-SPI into an [`A11yNode`] tree rooted at a
//! `desktop-frame` node with one child per application; [`xml::to_osworld_xml`]
//! renders it exactly as OSWorld's `/accessibility` route does, and
//! [`linear::linearize`] gives the tab-separated table OSWorld's agents read.

pub mod linear;
pub mod xml;

/// What the mark of a cut tree says before its reason (see [`mark_truncated`]).
pub const TRUNCATED: &str = "deskenv: the accessibility tree is truncated: ";

/// Marks a rendered tree as cut, so that whoever reads only the text (an
/// agent's prompt, OSWorld's `/accessibility` client) knows it is partial:
/// a last line after the XML's root element, `<!-- deskenv: the
/// accessibility tree is truncated: REASON -->` (a comment, so the XML still
/// parses, with `--` in the reason written `- -`), or after the linear
/// table's last row, `# deskenv: the accessibility tree is truncated:
/// REASON` (one line: tabs and line breaks in the reason become spaces).
pub fn mark_truncated(text: &mut String, xml: bool, reason: &str) {
    let mut clean: String = reason
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if xml {
        while clean.contains("--") {
            clean = clean.replace("--", "- -");
        }
        text.push_str(&format!("\n<!-- {TRUNCATED}{clean} -->"));
    } else {
        text.push_str(&format!("\n# {TRUNCATED}{clean}"));
    }
}

/// The linear table's mark line when `text` ends with one (the line, without
/// its leading line break), for cutting the table without losing it.
pub fn linear_mark(text: &str) -> Option<&str> {
    let line = &text[text.rfind('\n')? + 1..];
    line.strip_prefix("# ")
        .filter(|l| l.starts_with(TRUNCATED))
        .map(|_| line)
}

#[cfg(test)]
mod mark_tests {
    use super::*;

    #[test]
    fn marks_are_a_comment_in_xml_and_a_last_line_in_the_table() {
        let mut xml = String::from("<desktop-frame></desktop-frame>");
        mark_truncated(&mut xml, true, "timeout -- after 10000 ms\tin soffice-");
        assert_eq!(
            xml,
            "<desktop-frame></desktop-frame>\n<!-- deskenv: the accessibility tree is \
             truncated: timeout - - after 10000 ms in soffice- -->"
        );
        let body = &xml[xml.find("<!--").unwrap() + 4..xml.len() - 3];
        assert!(!body.contains("--"), "{body}");
        let mut table = String::from(linear::HEADER);
        mark_truncated(&mut table, false, "max_nodes\n(20000)");
        assert_eq!(
            linear_mark(&table),
            Some("# deskenv: the accessibility tree is truncated: max_nodes (20000)")
        );
        assert_eq!(linear_mark(linear::HEADER), None);
        assert_eq!(linear_mark("a\n# other comment"), None);
    }
}

use serde::{Deserialize, Serialize};

/// One accessible object, with the attributes OSWorld's server collects.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct A11yNode {
    /// AT-SPI role name as pyatspi's `getRoleName()` gives it ("push button").
    pub role: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// pyatspi state names without `STATE_`, lowercased ("focusable", "multi_line").
    #[serde(default)]
    pub states: Vec<String>,
    /// Object attributes (`toolkit`, `class`, …), in the order AT-SPI gave them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attributes: Vec<(String, String)>,
    /// Screen extents, present only for visible and showing nodes with a
    /// Component interface (as OSWorld).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extents: Option<Extents>,
    /// The whole Text interface content, U+FFFC and U+FFFD stripped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub image: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub selection: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<ValueInfo>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<ActionInfo>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<A11yNode>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Extents {
    pub x: i32,
    pub y: i32,
    pub width: i32,
    pub height: i32,
}

/// The Value interface.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ValueInfo {
    pub current: f64,
    pub min: f64,
    pub max: f64,
    pub step: f64,
}

/// One entry of the Action interface.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionInfo {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub key_binding: String,
}

impl A11yNode {
    /// Whether `state` (e.g. "showing") is set.
    pub fn has_state(&self, state: &str) -> bool {
        self.states.iter().any(|s| s == state)
    }

    /// The element tag OSWorld uses: the role name with spaces turned to `-`
    /// ("unknown" when empty).
    pub fn tag(&self) -> String {
        let role = self.role.trim();
        if role.is_empty() {
            "unknown".to_string()
        } else {
            role.replace(' ', "-")
        }
    }

    /// Number of nodes in this subtree, itself included.
    pub fn count(&self) -> usize {
        1 + self.children.iter().map(A11yNode::count).sum::<usize>()
    }

    /// Depth-first iterator over this subtree, itself first.
    pub fn iter(&self) -> impl Iterator<Item = &A11yNode> {
        let mut stack = vec![self];
        std::iter::from_fn(move || {
            let node = stack.pop()?;
            stack.extend(node.children.iter().rev());
            Some(node)
        })
    }
}
