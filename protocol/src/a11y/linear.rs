//! OSWorld's linearized accessibility table (see [`linearize`]).
//!
//! OSWorld's agents (`mm_agents/agent.py::linearize_accessibility_tree`)
//! parse the server's XML, keep the nodes `judge_node` accepts
//! (`accessibility_tree_wrap/heuristic_retrieve.py`), in document order, and
//! write one tab-separated line per node. This module gives the same table
//! straight from the tree, seeing names and text exactly as the XML carries
//! them (cleaned as in [`super::xml`]).
//!
//! **Quirk kept on purpose:** on Ubuntu OSWorld reads `class` and
//! `description` from the *windows* attribute namespace (PR #62), which the
//! Ubuntu XML never uses, so those two columns are always empty. Agents were
//! trained and scored on that table, so it is reproduced as is.

use super::xml::{clean_text, element_text, extents_strings, xml_name};
use super::A11yNode;

/// The table's header line.
pub const HEADER: &str = "tag\tname\ttext\tclass\tdescription\tposition (top-left x&y)\tsize (w&h)";

/// The TSV table OSWorld's agents read, after OSWorld's node filter: the
/// header, then one line per kept node in document order, joined by `\n`
/// (no trailing newline).
pub fn linearize(root: &A11yNode) -> String {
    let mut out = String::from(HEADER);
    let skip_root = root.role == "desktop frame";
    for (i, node) in root.iter().enumerate() {
        if i == 0 && skip_root {
            continue; // OSWorld's root element has no attributes, so never passes
        }
        if !keeps(node) {
            continue;
        }
        let e = node.extents.expect("keeps() checked the extents");
        let (position, size) = extents_strings(&e);
        let text = match element_text(node) {
            Some(t) if t.contains('"') => format!("\"{}\"", t.replace('"', "\"\"")),
            Some(t) => t.into_owned(),
            None => "\"\"".to_string(),
        };
        out.push('\n');
        out.push_str(&xml_name(&node.tag()));
        out.push('\t');
        out.push_str(&clean_text(&node.name));
        out.push('\t');
        out.push_str(&text);
        // class and description: always empty on Ubuntu (see module docs).
        out.push_str("\t\t\t");
        out.push_str(&position);
        out.push('\t');
        out.push_str(&size);
    }
    out
}

/// Tags `judge_node` keeps whatever their prefix or suffix (the Windows-only
/// ones included, as OSWorld lists them).
const KEEP_TAGS: [&str; 22] = [
    "alert",
    "canvas",
    "check-box",
    "combo-box",
    "entry",
    "icon",
    "image",
    "paragraph",
    "scroll-bar",
    "section",
    "slider",
    "static",
    "table-cell",
    "terminal",
    "text",
    "netuiribbontab",
    "start",
    "trayclockwclass",
    "traydummysearchcontrol",
    "uiimage",
    "uiproperty",
    "uiribboncommandbar",
];

const KEEP_SUFFIXES: [&str; 12] = [
    "item",
    "button",
    "heading",
    "label",
    "scrollbar",
    "searchbox",
    "textbox",
    "link",
    "tabelement",
    "textfield",
    "textarea",
    "menu",
];

/// OSWorld's `judge_node` for Ubuntu, without set-of-marks (`check_image`).
pub fn keeps(node: &A11yNode) -> bool {
    let tag = xml_name(&node.tag()).into_owned();
    let tag_ok = tag.starts_with("document")
        || KEEP_SUFFIXES.iter().any(|s| tag.ends_with(s))
        || KEEP_TAGS.contains(&tag.as_str());
    let shown = node.has_state("showing") && node.has_state("visible");
    let usable = ["enabled", "editable", "expandable", "checkable"]
        .iter()
        .any(|s| node.has_state(s));
    let named = !clean_text(&node.name).is_empty() || element_text(node).is_some();
    let placed = node
        .extents
        .is_some_and(|e| e.x >= 0 && e.y >= 0 && e.width > 0 && e.height > 0);
    tag_ok && shown && usable && named && placed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::a11y::Extents;

    fn leaf(
        role: &str,
        name: &str,
        text: Option<&str>,
        states: &[&str],
        ext: Option<(i32, i32, i32, i32)>,
    ) -> A11yNode {
        A11yNode {
            role: role.into(),
            name: name.into(),
            text: text.map(Into::into),
            states: states.iter().map(|s| s.to_string()).collect(),
            extents: ext.map(|(x, y, width, height)| Extents {
                x,
                y,
                width,
                height,
            }),
            ..Default::default()
        }
    }

    const SV: &[&str] = &["enabled", "showing", "visible"];

    #[test]
    fn empty_tree_is_just_the_header() {
        let root = leaf("desktop frame", "", None, &[], None);
        assert_eq!(linearize(&root), HEADER);
    }

    #[test]
    fn filter_and_quoting_follow_judge_node() {
        let mut frame = leaf("frame", "Window", None, SV, Some((0, 0, 100, 100)));
        let mut panel = leaf("panel", "", None, SV, Some((0, 0, 10, 10)));
        panel.children = vec![
            leaf("push button", "OK", None, SV, Some((10, 20, 30, 40))),
            // Text with a quote is CSV-quoted with doubled quotes.
            leaf(
                "text",
                "",
                Some("say \"hi\"\tnow"),
                &["editable", "showing", "visible"],
                Some((1, 2, 3, 4)),
            ),
            // Text without quotes goes in raw, newlines and all.
            leaf("label", "L", Some("a\nb"), SV, Some((5, 5, 5, 5))),
            // Not showing.
            leaf(
                "push button",
                "Hidden",
                None,
                &["enabled", "visible"],
                Some((1, 1, 1, 1)),
            ),
            // Neither enabled, editable, expandable nor checkable.
            leaf(
                "push button",
                "Dead",
                None,
                &["showing", "visible"],
                Some((1, 1, 1, 1)),
            ),
            // No name and no text.
            leaf("push button", "", Some("\u{1}"), SV, Some((1, 1, 1, 1))),
            // Negative position, zero size, no extents.
            leaf("push button", "Off", None, SV, Some((-1, 0, 5, 5))),
            leaf("push button", "Flat", None, SV, Some((0, 0, 0, 5))),
            leaf("push button", "Nowhere", None, SV, None),
            // Tag not in OSWorld's lists.
            leaf("filler", "F", None, SV, Some((1, 1, 1, 1))),
            leaf(
                "document web",
                "Doc",
                None,
                &["expandable", "showing", "visible"],
                Some((0, 0, 800, 600)),
            ),
            leaf(
                "menu item",
                "Open",
                None,
                &["checkable", "showing", "visible"],
                Some((3, 4, 5, 6)),
            ),
            leaf("table cell", "", Some("42"), SV, Some((7, 8, 9, 10))),
        ];
        frame.children = vec![panel];
        let mut root = leaf("desktop frame", "", None, &[], None);
        root.children = vec![frame];
        let want = [
            HEADER,
            "push-button\tOK\t\"\"\t\t\t(10, 20)\t(30, 40)",
            "text\t\t\"say \"\"hi\"\"\tnow\"\t\t\t(1, 2)\t(3, 4)",
            "label\tL\ta\nb\t\t\t(5, 5)\t(5, 5)",
            "document-web\tDoc\t\"\"\t\t\t(0, 0)\t(800, 600)",
            "menu-item\tOpen\t\"\"\t\t\t(3, 4)\t(5, 6)",
            "table-cell\t\t42\t\t\t(7, 8)\t(9, 10)",
        ]
        .join("\n");
        assert_eq!(linearize(&root), want);
    }

    #[test]
    fn class_and_description_stay_empty_even_when_present() {
        // OSWorld's quirk: it looks them up in the Windows namespace.
        let mut b = leaf("push button", "B", None, SV, Some((1, 1, 1, 1)));
        b.attributes = vec![
            ("class".into(), "GtkButton".into()),
            ("description".into(), "d".into()),
        ];
        b.description = "described".into();
        let line = linearize(&b).lines().nth(1).unwrap().to_string();
        assert_eq!(line, "push-button\tB\t\"\"\t\t\t(1, 1)\t(1, 1)");
    }
}
