//! AT-SPI role and state names as pyatspi spells them.
//!
//! pyatspi's `getRoleName()` is libatspi's `atspi_accessible_get_role_name`,
//! which names the role from the `AtspiRole` enum (its nick with `-` turned
//! into a space) and asks the application only for roles past the enum's
//! end; OSWorld's state names are pyatspi's `StateType` names without
//! `STATE_`, lowercased. Both tables are libatspi 2.46's.

/// `AtspiRole` names by role number (libatspi 2.46, `ATSPI_ROLE_LAST_DEFINED` = 130).
pub const ROLE_NAMES: [&str; 131] = [
    "invalid",
    "accelerator label",
    "alert",
    "animation",
    "arrow",
    "calendar",
    "canvas",
    "check box",
    "check menu item",
    "color chooser",
    "column header",
    "combo box",
    "date editor",
    "desktop icon",
    "desktop frame",
    "dial",
    "dialog",
    "directory pane",
    "drawing area",
    "file chooser",
    "filler",
    "focus traversable",
    "font chooser",
    "frame",
    "glass pane",
    "html container",
    "icon",
    "image",
    "internal frame",
    "label",
    "layered pane",
    "list",
    "list item",
    "menu",
    "menu bar",
    "menu item",
    "option pane",
    "page tab",
    "page tab list",
    "panel",
    "password text",
    "popup menu",
    "progress bar",
    "push button",
    "radio button",
    "radio menu item",
    "root pane",
    "row header",
    "scroll bar",
    "scroll pane",
    "separator",
    "slider",
    "spin button",
    "split pane",
    "status bar",
    "table",
    "table cell",
    "table column header",
    "table row header",
    "tearoff menu item",
    "terminal",
    "text",
    "toggle button",
    "tool bar",
    "tool tip",
    "tree",
    "tree table",
    "unknown",
    "viewport",
    "window",
    "extended",
    "header",
    "footer",
    "paragraph",
    "ruler",
    "application",
    "autocomplete",
    "editbar",
    "embedded",
    "entry",
    "chart",
    "caption",
    "document frame",
    "heading",
    "page",
    "section",
    "redundant object",
    "form",
    "link",
    "input method window",
    "table row",
    "tree item",
    "document spreadsheet",
    "document presentation",
    "document text",
    "document web",
    "document email",
    "comment",
    "list box",
    "grouping",
    "image map",
    "notification",
    "info bar",
    "level bar",
    "title bar",
    "block quote",
    "audio",
    "video",
    "definition",
    "article",
    "landmark",
    "log",
    "marquee",
    "math",
    "rating",
    "timer",
    "static",
    "math fraction",
    "math root",
    "subscript",
    "superscript",
    "description list",
    "description term",
    "description value",
    "footnote",
    "content deletion",
    "content insertion",
    "mark",
    "suggestion",
    "push button menu",
    "last defined",
];

/// pyatspi state names by `AtspiStateType` bit (libatspi 2.46).
pub const STATE_NAMES: [&str; 45] = [
    "invalid",
    "active",
    "armed",
    "busy",
    "checked",
    "collapsed",
    "defunct",
    "editable",
    "enabled",
    "expandable",
    "expanded",
    "focusable",
    "focused",
    "has_tooltip",
    "horizontal",
    "iconified",
    "modal",
    "multi_line",
    "multiselectable",
    "opaque",
    "pressed",
    "resizable",
    "selectable",
    "selected",
    "sensitive",
    "showing",
    "single_line",
    "stale",
    "transient",
    "vertical",
    "visible",
    "manages_descendants",
    "indeterminate",
    "required",
    "truncated",
    "animated",
    "invalid_entry",
    "supports_autocompletion",
    "selectable_text",
    "is_default",
    "visited",
    "checkable",
    "has_popup",
    "read_only",
    "last_defined",
];

/// The role name pyatspi gives `role`, or None when the application must be
/// asked (`GetRoleName`), as libatspi does for roles it does not know.
pub fn role_name(role: u32) -> Option<&'static str> {
    ROLE_NAMES.get(role as usize).copied()
}

/// The names of the states set in AT-SPI's two-word state set, lowest bit
/// first (libatspi's `atspi_state_set_get_states` order); unknown bits are
/// skipped.
pub fn state_names(words: &[u32]) -> Vec<String> {
    let mut bits: u64 = 0;
    for (i, w) in words.iter().take(2).enumerate() {
        bits |= u64::from(*w) << (32 * i);
    }
    STATE_NAMES
        .iter()
        .enumerate()
        .filter(|(i, _)| bits & (1u64 << i) != 0)
        .map(|(_, name)| name.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_pyatspi() {
        assert_eq!(role_name(43), Some("push button"));
        assert_eq!(role_name(38), Some("page tab list"));
        assert_eq!(role_name(92), Some("document spreadsheet"));
        assert_eq!(role_name(131), None);
        let words = [(1 << 8) | (1 << 17) | (1 << 30), 1 << (41 - 32)];
        assert_eq!(
            state_names(&words),
            ["enabled", "multi_line", "visible", "checkable"]
        );
    }
}
