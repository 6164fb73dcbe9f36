//! OSWorld's accessibility XML (see [`to_osworld_xml`]).
//!
//! OSWorld's guest server builds one lxml element per accessible object
//! (`_create_atspi_node` in `desktop_env/server/main.py`) and serves
//! `lxml.etree.tostring(root, encoding="unicode")`. This module writes the
//! same bytes from an [`A11yNode`] tree:
//!
//! - the root `<desktop-frame>` carries the eight `xmlns:` declarations of the
//!   "ubuntu" namespace map, in lxml's order (the map's insertion order), and
//!   no attributes; every other element carries its attributes in the order
//!   OSWorld's Python dict received them: `name`, `st:*`, `attr:*`,
//!   `cp:screencoord`, `cp:size`, `image`, `selection`, `val:*`, `act:*`;
//! - `attr:*` come in the iteration order of the GLib hash table libatspi
//!   stores them in (pyatspi turns that table into the dict), which
//!   [`glib_hash_order`] reproduces; a repeated key keeps its first place and
//!   its last value, as a Python dict does;
//! - libxml2's escaping: `& < > "` and tab, newline and carriage return as
//!   character references in attribute values; `& < >` and carriage return
//!   in text; anything else (non-ASCII included) verbatim; `<tag .../>` for
//!   elements without text or children.
//!
//! Where OSWorld's server fails, this module does not, and says so here:
//!
//! - **Characters XML cannot hold** (C0 controls but tab, newline and
//!   carriage return; U+FFFE, U+FFFF) make lxml raise, which loses the node
//!   and its following siblings (or the whole response for an application
//!   node). They are dropped from names, values and text instead.
//! - **Attribute and action names that are not XML names** (a space, a
//!   colon, a leading digit: lxml raises "Invalid attribute name") have each
//!   offending character replaced by `_`, and a `_` put in front when the
//!   first character cannot start a name; an empty attribute name is skipped,
//!   as OSWorld does. Role names that are not XML names get the same
//!   treatment (every AT-SPI role name already is one once spaces become `-`).

use super::{A11yNode, Extents, ValueInfo};
use std::borrow::Cow;
use std::fmt::Write as _;

/// Namespace prefix OSWorld uses on Ubuntu/Debian guests.
pub const NS_BASE: &str = "https://accessibility.ubuntu.example.org/ns/";

/// The "ubuntu" namespace map of OSWorld's server, in its insertion order:
/// (prefix, suffix after [`NS_BASE`]).
pub const NAMESPACES: [(&str, &str); 8] = [
    ("st", "state"),
    ("attr", "attributes"),
    ("cp", "component"),
    ("doc", "document"),
    ("docattr", "document/attributes"),
    ("txt", "text"),
    ("val", "value"),
    ("act", "action"),
];

/// Renders the tree as OSWorld's `/accessibility` route does.
///
/// `root` becomes the root element with the namespace declarations; a root
/// whose role is "desktop frame" (the walker's synthetic root, like
/// OSWorld's) gets no attributes of its own.
pub fn to_osworld_xml(root: &A11yNode) -> String {
    let mut out = String::with_capacity(256 + root.count() * 200);
    write_element(&mut out, root, true);
    out
}

/// The attributes of one element as OSWorld's server sets them: qualified
/// names (`st:focusable`) and values, in serialization order, already
/// cleaned of what XML cannot hold (see the module documentation).
pub fn osworld_attributes(node: &A11yNode) -> Vec<(String, String)> {
    let mut attrs = DictOrder::default();
    attrs.set("name".to_string(), clean_text(&node.name).into_owned());
    for state in &node.states {
        if !state.is_empty() {
            attrs.set(format!("st:{}", xml_name(state)), "true".to_string());
        }
    }
    let keys: Vec<&str> = node.attributes.iter().map(|(k, _)| k.as_str()).collect();
    for i in glib_hash_order(&keys) {
        let (key, value) = &node.attributes[i];
        if key.is_empty() {
            continue;
        }
        attrs.set(
            format!("attr:{}", xml_name(key)),
            clean_text(value).into_owned(),
        );
    }
    if let Some(e) = node.extents {
        let (position, size) = extents_strings(&e);
        attrs.set("cp:screencoord".to_string(), position);
        attrs.set("cp:size".to_string(), size);
    }
    if node.image {
        attrs.set("image".to_string(), "true".to_string());
    }
    if node.selection {
        attrs.set("selection".to_string(), "true".to_string());
    }
    if let Some(ValueInfo {
        current,
        min,
        max,
        step,
    }) = node.value
    {
        attrs.set("val:value".to_string(), py_float_repr(current));
        attrs.set("val:min".to_string(), py_float_repr(min));
        attrs.set("val:max".to_string(), py_float_repr(max));
        attrs.set("val:step".to_string(), py_float_repr(step));
    }
    for action in &node.actions {
        let name = action.name.replace(' ', "-");
        attrs.set(
            format!("act:{}", xml_name(&format!("{name}_desc"))),
            clean_text(&action.description).into_owned(),
        );
        attrs.set(
            format!("act:{}", xml_name(&format!("{name}_kb"))),
            clean_text(&action.key_binding).into_owned(),
        );
    }
    attrs.0
}

/// `cp:screencoord` and `cp:size` as Python's `str(tuple)`: "(x, y)", "(w, h)".
pub fn extents_strings(e: &Extents) -> (String, String) {
    (
        format!("({}, {})", e.x, e.y),
        format!("({}, {})", e.width, e.height),
    )
}

/// The element text OSWorld would set: the node's text cleaned of what XML
/// cannot hold, or None when that leaves nothing (lxml sets no text then).
pub fn element_text(node: &A11yNode) -> Option<Cow<'_, str>> {
    node.text
        .as_deref()
        .map(clean_text)
        .filter(|t| !t.is_empty())
}

/// Insertion-ordered map with Python dict semantics on repeated keys.
#[derive(Default)]
struct DictOrder(Vec<(String, String)>);

impl DictOrder {
    fn set(&mut self, key: String, value: String) {
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => self.0.push((key, value)),
        }
    }
}

fn write_element(out: &mut String, node: &A11yNode, is_root: bool) {
    let tag = xml_name(&node.tag()).into_owned();
    out.push('<');
    out.push_str(&tag);
    if is_root {
        for (prefix, suffix) in NAMESPACES {
            let _ = write!(out, " xmlns:{prefix}=\"{NS_BASE}{suffix}\"");
        }
    }
    if !(is_root && node.role == "desktop frame") {
        for (key, value) in osworld_attributes(node) {
            out.push(' ');
            out.push_str(&key);
            out.push_str("=\"");
            escape_attribute(out, &value);
            out.push('"');
        }
    }
    let text = element_text(node);
    if text.is_none() && node.children.is_empty() {
        out.push_str("/>");
        return;
    }
    out.push('>');
    if let Some(text) = text {
        escape_text(out, &text);
    }
    for child in &node.children {
        write_element(out, child, false);
    }
    out.push_str("</");
    out.push_str(&tag);
    out.push('>');
}

/// libxml2's escaping of attribute values (`xmlBufAttrSerializeTxtContent`).
fn escape_attribute(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            c => out.push(c),
        }
    }
}

/// libxml2's escaping of text content.
fn escape_text(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\r' => out.push_str("&#13;"),
            c => out.push(c),
        }
    }
}

/// Whether XML 1.0 allows `c` in a document (the `Char` production).
fn is_xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..='\u{10FFFF}')
}

/// `s` without the characters XML cannot hold (lxml refuses them).
pub fn clean_text(s: &str) -> Cow<'_, str> {
    if s.chars().all(is_xml_char) {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(s.chars().filter(|&c| is_xml_char(c)).collect())
    }
}

/// XML 1.0 (fifth edition) `NameStartChar`, without the colon (an NCName,
/// which is what lxml checks).
fn is_name_start(c: char) -> bool {
    matches!(c,
        'A'..='Z' | '_' | 'a'..='z' | '\u{C0}'..='\u{D6}' | '\u{D8}'..='\u{F6}'
        | '\u{F8}'..='\u{2FF}' | '\u{370}'..='\u{37D}' | '\u{37F}'..='\u{1FFF}'
        | '\u{200C}'..='\u{200D}' | '\u{2070}'..='\u{218F}' | '\u{2C00}'..='\u{2FEF}'
        | '\u{3001}'..='\u{D7FF}' | '\u{F900}'..='\u{FDCF}' | '\u{FDF0}'..='\u{FFFD}'
        | '\u{10000}'..='\u{EFFFF}')
}

fn is_name_char(c: char) -> bool {
    is_name_start(c)
        || matches!(c, '-' | '.' | '0'..='9' | '\u{B7}' | '\u{300}'..='\u{36F}' | '\u{203F}'..='\u{2040}')
}

/// `s` as an XML name without colon: each character that cannot appear in
/// one becomes `_`, and a `_` goes in front when the first cannot start one.
/// Empty stays empty.
pub fn xml_name(s: &str) -> Cow<'_, str> {
    let mut chars = s.chars();
    match chars.next() {
        None => return Cow::Borrowed(s),
        Some(first) if is_name_start(first) && chars.all(is_name_char) => return Cow::Borrowed(s),
        Some(_) => {}
    }
    let mut out = String::with_capacity(s.len() + 1);
    for (i, c) in s.chars().enumerate() {
        if i == 0 && !is_name_start(c) && is_name_char(c) {
            out.push('_');
        }
        out.push(if is_name_char(c) { c } else { '_' });
    }
    Cow::Owned(out)
}

/// Python's `str(float)`: the shortest digits that read back to the same
/// float, in positional notation unless the exponent is below -4 or at
/// least 16 ("0.0", "100.0", "1e-05", "1.5e+16", "inf", "nan").
pub fn py_float_repr(v: f64) -> String {
    if v.is_nan() {
        return "nan".to_string();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    // Rust's `{:e}` gives the same shortest round-trip digits as Python's repr.
    let sci = format!("{:e}", v.abs());
    let (mantissa, exp) = sci.split_once('e').expect("{:e} always has an exponent");
    let exp: i32 = exp.parse().expect("{:e} exponent is an integer");
    let digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
    let sign = if v.is_sign_negative() { "-" } else { "" };
    let decpt = exp + 1; // digits are 0.DIGITS x 10^decpt
    if !(-4 < decpt && decpt <= 16) {
        let (first, rest) = digits.split_at(1);
        let frac = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{first}{frac}e{esign}{:02}", exp.abs());
    }
    let n = digits.len() as i32;
    if decpt <= 0 {
        format!("{sign}0.{}{digits}", "0".repeat((-decpt) as usize))
    } else if decpt >= n {
        format!("{sign}{digits}{}.0", "0".repeat((decpt - n) as usize))
    } else {
        let (int, frac) = digits.split_at(decpt as usize);
        format!("{sign}{int}.{frac}")
    }
}

/// The order in which a GLib `GHashTable` (glib 2.74, `g_str_hash`,
/// filled with `g_hash_table_insert` in `keys` order and never shrunk)
/// iterates its entries: indices into `keys`, one per distinct key, pointing
/// at the key's last occurrence (whose value the table keeps).
///
/// libatspi returns an object's attributes in such a table and pyatspi turns
/// it into the dict OSWorld iterates, so this is the order of `attr:*` in
/// OSWorld's XML.
pub fn glib_hash_order(keys: &[&str]) -> Vec<usize> {
    const MIN_SHIFT: u32 = 3;
    const PRIME_MOD: [u32; 32] = [
        1, 2, 3, 7, 13, 31, 61, 127, 251, 509, 1021, 2039, 4093, 8191, 16381, 32749, 65521, 131071,
        262139, 524287, 1048573, 2097143, 4194301, 8388593, 16777213, 33554393, 67108859,
        134217689, 268435399, 536870909, 1073741789, 2147483647,
    ];
    fn str_hash(s: &str) -> u32 {
        // g_str_hash reads the bytes as `signed char`.
        let mut h: u32 = 5381;
        for &b in s.as_bytes() {
            h = (h << 5).wrapping_add(h).wrapping_add(b as i8 as i32 as u32);
        }
        if h <= 1 {
            2 // 0 and 1 mark empty buckets and tombstones
        } else {
            h
        }
    }
    struct Table {
        size: usize,
        modulo: u32,
        mask: usize,
        hashes: Vec<u32>,
        // Index into `keys` of the entry in each bucket (the key's last occurrence).
        slots: Vec<usize>,
    }
    impl Table {
        fn set_shift(&mut self, shift: u32) {
            self.size = 1 << shift;
            self.modulo = PRIME_MOD[shift as usize];
            self.mask = self.size - 1;
        }
        fn index(&self, hash: u32) -> usize {
            (hash.wrapping_mul(11) % self.modulo) as usize
        }
    }
    let mut t = Table {
        size: 0,
        modulo: 1,
        mask: 0,
        hashes: Vec::new(),
        slots: Vec::new(),
    };
    t.set_shift(MIN_SHIFT);
    t.hashes = vec![0; t.size];
    t.slots = vec![usize::MAX; t.size];
    let mut nnodes = 0usize;
    let mut noccupied = 0usize;
    for (i, key) in keys.iter().enumerate() {
        let hash = str_hash(key);
        let mut idx = t.index(hash);
        let mut step = 0;
        let mut found = false;
        while t.hashes[idx] != 0 {
            if t.hashes[idx] == hash && keys[t.slots[idx]] == *key {
                found = true;
                break;
            }
            step += 1;
            idx = (idx + step) & t.mask;
        }
        if found {
            // g_hash_table_insert keeps the old key and takes the new value.
            t.slots[idx] = i;
            continue;
        }
        t.hashes[idx] = hash;
        t.slots[idx] = i;
        nnodes += 1;
        noccupied += 1;
        // g_hash_table_maybe_resize (no removals here, so no tombstones and
        // never a shrink below the minimum).
        let size = t.size;
        if (size > nnodes * 4 && size > 1 << MIN_SHIFT) || size <= noccupied + noccupied / 16 {
            let old_size = t.size;
            let target = (nnodes as f64 * 1.333) as u32;
            let shift = (32 - target.leading_zeros()).max(MIN_SHIFT);
            t.set_shift(shift);
            if t.size > old_size {
                t.hashes.resize(t.size, 0);
                t.slots.resize(t.size, usize::MAX);
            }
            // In-place rehash, as glib's resize_map does it.
            let mut moved = vec![false; t.size.max(old_size)];
            for b in 0..old_size {
                let mut node_hash = t.hashes[b];
                if node_hash <= 1 {
                    t.hashes[b] = 0;
                    continue;
                }
                if moved[b] {
                    continue;
                }
                t.hashes[b] = 0;
                let mut slot = t.slots[b];
                loop {
                    let mut hv = t.index(node_hash);
                    let mut step = 0;
                    while moved[hv] {
                        step += 1;
                        hv = (hv + step) & t.mask;
                    }
                    moved[hv] = true;
                    let replaced = t.hashes[hv];
                    t.hashes[hv] = node_hash;
                    let replaced_slot = std::mem::replace(&mut t.slots[hv], slot);
                    if replaced <= 1 {
                        break;
                    }
                    node_hash = replaced;
                    slot = replaced_slot;
                }
            }
            if t.size < old_size {
                t.hashes.truncate(t.size);
                t.slots.truncate(t.size);
            }
            noccupied = nnodes;
        }
    }
    (0..t.size)
        .filter(|&b| t.hashes[b] > 1)
        .map(|b| t.slots[b])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::a11y::ActionInfo;

    fn node(role: &str, name: &str) -> A11yNode {
        A11yNode {
            role: role.into(),
            name: name.into(),
            ..Default::default()
        }
    }

    const DECLS: &str = concat!(
        r#" xmlns:st="https://accessibility.ubuntu.example.org/ns/state""#,
        r#" xmlns:attr="https://accessibility.ubuntu.example.org/ns/attributes""#,
        r#" xmlns:cp="https://accessibility.ubuntu.example.org/ns/component""#,
        r#" xmlns:doc="https://accessibility.ubuntu.example.org/ns/document""#,
        r#" xmlns:docattr="https://accessibility.ubuntu.example.org/ns/document/attributes""#,
        r#" xmlns:txt="https://accessibility.ubuntu.example.org/ns/text""#,
        r#" xmlns:val="https://accessibility.ubuntu.example.org/ns/value""#,
        r#" xmlns:act="https://accessibility.ubuntu.example.org/ns/action""#,
    );

    #[test]
    fn empty_desktop_is_self_closing_with_declarations() {
        let root = node("desktop frame", "main");
        assert_eq!(to_osworld_xml(&root), format!("<desktop-frame{DECLS}/>"));
    }

    /// The expected string was produced by lxml 4.9.2 (libxml2 2.9.14) from
    /// the same attributes through OSWorld's code path.
    #[test]
    fn attribute_order_and_escaping_match_lxml() {
        let mut app = node("application", "é & <x> \"q\" 'a'\n\t\r");
        app.states = vec!["enabled".into(), "showing".into(), "visible".into()];
        app.attributes = vec![("toolkit".into(), "GTK".into())];
        app.extents = Some(Extents {
            x: -5,
            y: 10,
            width: 30,
            height: 40,
        });
        app.text = Some("hé & <b> \r\n\t ]]> \"q\" 'a'".into());
        app.image = true;
        app.selection = true;
        app.value = Some(ValueInfo {
            current: 0.0,
            min: 1e-5,
            max: 100.0,
            step: 0.5,
        });
        app.actions = vec![ActionInfo {
            name: "expand or contract".into(),
            description: "d".into(),
            key_binding: "<Alt>x".into(),
        }];
        let mut button = node("push button", "");
        button.states = vec!["focusable".into()];
        app.children = vec![button, node("label", "x")];
        let mut root = node("desktop frame", "");
        root.children = vec![app];
        let expected = format!(
            "<desktop-frame{DECLS}>{}{}{}</desktop-frame>",
            concat!(
                r#"<application name="é &amp; &lt;x&gt; &quot;q&quot; 'a'&#10;&#9;&#13;" st:enabled="true""#,
                r#" st:showing="true" st:visible="true" attr:toolkit="GTK" cp:screencoord="(-5, 10)""#,
                r#" cp:size="(30, 40)" image="true" selection="true" val:value="0.0" val:min="1e-05""#,
                r#" val:max="100.0" val:step="0.5" act:expand-or-contract_desc="d""#,
                r#" act:expand-or-contract_kb="&lt;Alt&gt;x">"#,
            ),
            "hé &amp; &lt;b&gt; &#13;\n\t ]]&gt; \"q\" 'a'",
            r#"<push-button name="" st:focusable="true"/><label name="x"/></application>"#,
        );
        assert_eq!(to_osworld_xml(&root), expected);
    }

    #[test]
    fn invalid_characters_and_names_are_cleaned() {
        let mut n = node("push button", "a\u{1}b\u{FFFE}c");
        n.attributes = vec![
            ("".into(), "skipped".into()),
            ("1st".into(), "v".into()),
            ("a b:c".into(), "x\u{0}y".into()),
        ];
        n.text = Some("\u{7}".into());
        n.actions = vec![ActionInfo {
            name: "do/it".into(),
            description: String::new(),
            key_binding: String::new(),
        }];
        let xml = to_osworld_xml(&n);
        let body = xml.split_once("action\"").unwrap().1;
        assert!(body.starts_with(r#" name="abc""#), "{body}");
        assert!(
            body.contains(r#" attr:_1st="v""#) && body.contains(r#" attr:a_b_c="xy""#),
            "{body}"
        );
        assert!(
            body.contains(r#" act:do_it_desc="" act:do_it_kb=""/>"#),
            "{body}"
        );
        assert!(!body.contains("skipped"));
    }

    #[test]
    fn repeated_keys_keep_first_place_and_last_value() {
        let mut n = node("menu", "m");
        n.actions = vec![
            ActionInfo {
                name: "click".into(),
                description: "one".into(),
                key_binding: "k1".into(),
            },
            ActionInfo {
                name: "press".into(),
                description: "p".into(),
                key_binding: String::new(),
            },
            ActionInfo {
                name: "click".into(),
                description: "two".into(),
                key_binding: "k2".into(),
            },
        ];
        let keys: Vec<String> = osworld_attributes(&n)
            .into_iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        assert_eq!(
            keys,
            [
                "name=m",
                "act:click_desc=two",
                "act:click_kb=k2",
                "act:press_desc=p",
                "act:press_kb="
            ]
        );
    }

    #[test]
    fn python_float_repr() {
        let cases = [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (100.0, "100.0"),
            (0.5, "0.5"),
            (1e-5, "1e-05"),
            (1.5e-5, "1.5e-05"),
            (0.0001, "0.0001"),
            (1e16, "1e+16"),
            (1234567890123456.0, "1234567890123456.0"),
            (0.1, "0.1"),
            (-379.25, "-379.25"),
            (f64::MAX, "1.7976931348623157e+308"),
            (5e-324, "5e-324"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (f64::NAN, "nan"),
        ];
        for (v, want) in cases {
            assert_eq!(py_float_repr(v), want, "{v:?}");
        }
    }

    proptest::proptest! {
        /// Whatever strings an application hands over, the output parses,
        /// has no repeated attribute, and carries the name back unchanged
        /// (less what XML cannot hold).
        #[test]
        fn output_is_well_formed(
            name in ".*", key in ".*", value in ".*", text in ".*", action in ".*", role in "[a-z ]{0,12}",
        ) {
            let mut n = node(&role, &name);
            n.attributes = vec![(key.clone(), value.clone()), (key, value)];
            n.text = Some(text);
            n.actions = vec![ActionInfo { name: action.clone(), description: action, key_binding: String::new() }];
            n.states = vec!["showing".into()];
            let mut root = node("desktop frame", "");
            root.children = vec![n.clone(), n];
            let xml = to_osworld_xml(&root);
            let mut reader = quick_xml::Reader::from_str(&xml);
            let mut names = Vec::new();
            loop {
                match reader.read_event() {
                    Ok(quick_xml::events::Event::Eof) => break,
                    Ok(quick_xml::events::Event::Start(e) | quick_xml::events::Event::Empty(e)) => {
                        for a in e.attributes() {
                            let a = a.map_err(|e| proptest::test_runner::TestCaseError::fail(format!("{e}: {xml}")))?;
                            if a.key.as_ref() == b"name" {
                                names.push(a.unescape_value().unwrap().into_owned());
                            }
                        }
                    }
                    Ok(_) => {}
                    Err(e) => proptest::prop_assert!(false, "{e}: {xml}"),
                }
            }
            let want = clean_text(&name).into_owned();
            proptest::prop_assert_eq!(names, vec![want.clone(), want]);
        }
    }

    /// Orders read back from glib 2.74.6 (`g_hash_table_insert` with
    /// `g_str_hash`, then `g_hash_table_iter_next`) through ctypes.
    #[test]
    fn glib_hash_table_order() {
        let order = |keys: &[&str]| -> Vec<String> {
            glib_hash_order(keys)
                .into_iter()
                .map(|i| keys[i].to_string())
                .collect()
        };
        assert_eq!(order(&[]), Vec::<String>::new());
        assert_eq!(order(&["toolkit"]), ["toolkit"]);
        for (keys, want) in GLIB_ORDERS {
            assert_eq!(order(keys), *want, "{keys:?}");
        }
        // A repeated key keeps its place; the index points at its last value.
        assert_eq!(glib_hash_order(&["a", "b", "a"]).len(), 2);
        assert!(glib_hash_order(&["a", "b", "a"]).contains(&2));
    }

    // Read back from glib itself; see `glib_hash_table_order`. The last one
    // grows the table twice.
    #[rustfmt::skip]
    const GLIB_ORDERS: &[(&[&str], &[&str])] = &[
        (&["toolkit", "window-type"], &["toolkit", "window-type"]),
        (&["xml-roles", "href", "id", "name", "class", "level", "haspopup", "live", "formatting", "placeholder-text"],
         &["id", "haspopup", "placeholder-text", "live", "level", "href", "xml-roles", "class", "name", "formatting"]),
        (&["é-x", "€", "a_b", "Z"], &["a_b", "€", "é-x", "Z"]),
        (&["toolkit", "class", "id", "xml-roles", "display", "tag", "level", "placeholder-text", "window-type",
           "explicit-name", "formatting", "text-input-type", "container-live", "live", "atomic", "haspopup", "src",
           "href", "name", "valuetext", "posinset", "setsize", "checkable", "table-cell-index"],
         &["xml-roles", "href", "posinset", "tag", "explicit-name", "level", "display", "toolkit", "name", "live",
           "src", "table-cell-index", "atomic", "id", "placeholder-text", "class", "formatting", "setsize",
           "valuetext", "checkable", "container-live", "text-input-type", "haspopup", "window-type"]),
    ];
}
