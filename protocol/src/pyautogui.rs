//! The pyautogui-code parser: pure, total, turns agent code into actions.
//!
//! Agents in OSWorld's `pyautogui` action space answer with short Python
//! snippets. [`parse`] reads a small subset of Python into [`Action`]s
//! without running an interpreter. It does no I/O, never panics and runs in
//! time linear in the input. Code outside the subset is an error naming the
//! line (1-based). When the code calls a function outside the subset,
//! [`PyautoguiError::unsupported_call`] names that function, and a caller
//! may choose to run the code with a real `python3` instead.
//! [`PyautoguiError::is_outside_subset`] is broader: it is also true for
//! loops, variables and similar constructs, which are valid Python but
//! outside the subset.
//!
//! # Supported subset
//!
//! Statements are separated by newlines and `;`. A call may span several
//! lines inside brackets, and a line may end in a `\` continuation.
//! Indentation is not checked. Comments (`# ...`, trailing ones too) and
//! blank lines are skipped.
//!
//! Calls take pyautogui's own signatures. Arguments may be positional or
//! keyword arguments, and a trailing comma is allowed:
//!
//! | code | actions |
//! |---|---|
//! | `click(x=None, y=None, clicks=1, interval=0.0, button='left', duration, tween)` | `Click` (`clicks=0` only moves) |
//! | `leftClick(x, y, interval, duration, tween)` | `Click` with the left button |
//! | `rightClick(x, y, interval, duration, tween)` | `RightClick` |
//! | `middleClick(x, y, interval, duration, tween)` | `Click` with the middle button |
//! | `doubleClick(x, y, interval, button, duration, tween)` | `DoubleClick`, or `Click` ×2 for another button |
//! | `tripleClick(x, y, interval, button, duration, tween)` | `Click` ×3 |
//! | `moveTo(x, y, duration, tween)` | `MoveTo` (no action without coordinates) |
//! | `dragTo(x, y, duration, tween, button, mouseDownUp=True)` | `DragTo`, or `MoveTo` when `mouseDownUp=False` |
//! | `mouseDown(x, y, button, duration, tween)`, `mouseUp(...)` | `MoveTo` first when x/y are given, then `MouseDown` / `MouseUp` |
//! | `scroll(clicks, x, y)`, `vscroll(...)` | `Scroll { dy: clicks }` (positive = up) |
//! | `hscroll(clicks, x, y)` | `Scroll { dx: clicks }` (positive = right) |
//! | `write(message, interval)`, `typewrite(...)` | `Typing` for a string; for a list of key names, one `Press` per name |
//! | `press(keys, presses=1, interval)` | `Press`; for a list of keys, the list `presses` times |
//! | `hotkey(*keys, interval)`, `hotkey([keys])` | `Hotkey` (its `interval` is checked, then ignored) |
//! | `keyDown(key)`, `keyUp(key)` | `KeyDown` / `KeyUp` |
//! | `time.sleep(secs)`, `pyautogui.sleep(seconds)` | `Wait { seconds: Some(secs) }` |
//! | `WAIT`, `DONE`, `FAIL` alone as a statement | `Wait { seconds: None }`, `Done`, `Fail` |
//!
//! The functions above are reached as `pyautogui.<name>` and `time.sleep`.
//! Those two modules are always known, since OSWorld imports them before the
//! agent's code. `import pyautogui as pg` adds the alias `pg`, and
//! `from time import sleep` (or `from pyautogui import click`, or
//! `from pyautogui import *`) makes the bare names callable.
//!
//! Coordinates are `x, y`, an `(x, y)` tuple or list as the first argument,
//! or a 4-item `(left, top, width, height)` box, whose centre is used as
//! pyautogui does. Coordinates stay `f64`. `x` and `y` must be given
//! together. `duration`, `tween` (e.g. `pyautogui.easeInQuad`),
//! `logScreenshot` and `_pause` are accepted and ignored. Key names pass
//! through unchanged; the executor maps them. An `interval` is `Some` when the
//! code gives one. A list given to `write` or `press` with an interval above
//! zero becomes `Wait` actions between the presses.
//!
//! These statements make no action: `import pyautogui`, `import time`
//! (with commas and `as`), `from pyautogui|time import ...`, `pass`,
//! a bare string (a docstring), `pyautogui.FAILSAFE = ...` and
//! `pyautogui.PAUSE = ...`. PAUSE is ignored: no pause is added between
//! actions.
//!
//! Values are Python literals: ints (also `0x`/`0o`/`0b` and `1_000`), floats
//! (`1.5`, `.5`, `1e3`), unary `-`/`+`, `True`/`False`/`None`, strings in
//! single, double or triple quotes with `r`/`u`/`b`/`f` prefixes (any case;
//! f-strings only without replacement fields), the escapes `\n \t \r \\ \' \"
//! \a \b \f \v \ooo \xNN \uXXXX \UXXXXXXXX`, adjacent literals concatenated,
//! tuples, lists and `pyautogui.<NAME>` constants (`pyautogui.LEFT`, a tween).
//! Bytes literals are read as text.
//!
//! Anything else is an error: other functions (`pyautogui.moveRel`,
//! `pyautogui.locateOnScreen`, `print`, `os.system`) give
//! [`PyautoguiError::UnsupportedCall`]. Variables, loops, `if`, `def`,
//! arithmetic, `\N{...}` escapes, other imports and more than
//! [`MAX_NESTING`] nested brackets give [`PyautoguiError::Unsupported`].

use crate::action::{Action, Button};
use std::collections::HashMap;

/// Deepest bracket nesting accepted; deeper code is [`PyautoguiError::Unsupported`].
pub const MAX_NESTING: usize = 32;
/// Largest `clicks` / `presses` count.
const MAX_COUNT: f64 = 100.0;
/// Largest scroll amount either way, in wheel clicks.
const MAX_SCROLL: f64 = 10_000.0;
/// Longest shown value in an error message, in characters.
const SHOW: usize = 60;

/// The functions of the subset, by canonical (module-qualified) name.
const SUPPORTED: &[&str] = &[
    "pyautogui.click",
    "pyautogui.leftClick",
    "pyautogui.rightClick",
    "pyautogui.middleClick",
    "pyautogui.doubleClick",
    "pyautogui.tripleClick",
    "pyautogui.moveTo",
    "pyautogui.dragTo",
    "pyautogui.mouseDown",
    "pyautogui.mouseUp",
    "pyautogui.scroll",
    "pyautogui.vscroll",
    "pyautogui.hscroll",
    "pyautogui.write",
    "pyautogui.typewrite",
    "pyautogui.press",
    "pyautogui.hotkey",
    "pyautogui.keyDown",
    "pyautogui.keyUp",
    "pyautogui.sleep",
    "time.sleep",
];

/// Why code could not be turned into actions. Every message starts with
/// `line N:`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PyautoguiError {
    /// Not valid Python: an unterminated string, an unbalanced bracket, a
    /// stray token, an invalid character.
    #[error("line {line}: syntax error: {message}")]
    Syntax { line: usize, message: String },
    /// A call to a function outside the subset; `call` is its qualified
    /// name (`pyautogui.moveRel`, `os.system`, `print`).
    #[error("line {line}: `{call}` is outside the supported pyautogui subset")]
    UnsupportedCall { line: usize, call: String },
    /// Valid Python outside the subset that is not a call: variables,
    /// loops, `if`, `def`, arithmetic, other imports, `\N{...}` escapes,
    /// deep nesting.
    #[error("line {line}: unsupported: {what}")]
    Unsupported { line: usize, what: String },
    /// A supported call with a missing, repeated, ill-typed or out-of-range
    /// argument. `message` names the argument and what was expected.
    #[error("line {line}: {call}(): {message}")]
    Argument {
        line: usize,
        call: String,
        argument: String,
        message: String,
    },
    /// A keyword argument that the supported function does not take.
    #[error("line {line}: {call}() got an unexpected keyword argument `{argument}`; it takes {expected}")]
    UnknownArgument {
        line: usize,
        call: String,
        argument: String,
        expected: String,
    },
}

impl PyautoguiError {
    /// The function outside the subset, e.g. `Some("pyautogui.moveRel")`,
    /// when that call is why the code was refused. `None` for syntax,
    /// argument and other errors.
    pub fn unsupported_call(&self) -> Option<&str> {
        match self {
            PyautoguiError::UnsupportedCall { call, .. } => Some(call),
            _ => None,
        }
    }

    /// Whether the code looks like valid Python outside the subset (an
    /// unsupported call or construct), as opposed to broken code or bad
    /// arguments to a supported call.
    pub fn is_outside_subset(&self) -> bool {
        matches!(
            self,
            PyautoguiError::UnsupportedCall { .. } | PyautoguiError::Unsupported { .. }
        )
    }

    /// The 1-based line the error is on.
    pub fn line(&self) -> usize {
        match self {
            PyautoguiError::Syntax { line, .. }
            | PyautoguiError::UnsupportedCall { line, .. }
            | PyautoguiError::Unsupported { line, .. }
            | PyautoguiError::Argument { line, .. }
            | PyautoguiError::UnknownArgument { line, .. } => *line,
        }
    }
}

type Result<T> = std::result::Result<T, PyautoguiError>;

fn syntax(line: usize, message: impl Into<String>) -> PyautoguiError {
    PyautoguiError::Syntax {
        line,
        message: message.into(),
    }
}

fn unsupported(line: usize, what: impl Into<String>) -> PyautoguiError {
    PyautoguiError::Unsupported {
        line,
        what: what.into(),
    }
}

/// Parses pyautogui code into actions (see the module docs for the subset).
pub fn parse(code: &str) -> Result<Vec<Action>> {
    let toks = Lexer::run(code)?;
    Parser::new(toks).run()
}

// ---------------------------------------------------------------- lexer

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Name(String),
    Num {
        value: f64,
        int: bool,
    },
    Str(String),
    /// A valid literal outside the subset; says what it is.
    Deferred(String),
    Open(char),
    Close(char),
    Op(&'static str),
    Comma,
    Semi,
    Newline,
    Eof,
}

#[derive(Debug, Clone)]
struct Token {
    tok: Tok,
    line: usize,
}

/// Operators, longest first.
const OPS: &[&str] = &[
    "**=", "//=", ">>=", "<<=", "...", "->", ":=", "**", "//", ">>", "<<", "<=", ">=", "==", "!=",
    "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@=", "+", "-", "*", "/", "%", "@", "&", "|",
    "^", "~", "<", ">", "=", ".", ":", "!",
];

const KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

fn is_keyword(name: &str) -> bool {
    KEYWORDS.contains(&name)
}

fn is_ident_start(c: char) -> bool {
    c == '_' || c.is_alphabetic()
}

fn is_ident_continue(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

struct Lexer {
    chars: Vec<char>,
    pos: usize,
    line: usize,
    /// Open brackets and the lines they opened on.
    brackets: Vec<(char, usize)>,
    toks: Vec<Token>,
}

impl Lexer {
    fn run(code: &str) -> Result<Vec<Token>> {
        let mut lx = Lexer {
            chars: code.chars().collect(),
            pos: 0,
            line: 1,
            brackets: Vec::new(),
            toks: Vec::new(),
        };
        if lx.peek() == Some('\u{feff}') {
            lx.pos += 1;
        }
        while let Some(c) = lx.peek() {
            let line = lx.line;
            match c {
                ' ' | '\t' | '\x0c' => lx.pos += 1,
                '\n' | '\r' => {
                    lx.newline();
                    if lx.brackets.is_empty() {
                        lx.push(Tok::Newline, line);
                    }
                }
                '#' => {
                    while matches!(lx.peek(), Some(c) if c != '\n' && c != '\r') {
                        lx.pos += 1;
                    }
                }
                '\\' => {
                    lx.pos += 1;
                    match lx.peek() {
                        Some('\n' | '\r') => lx.newline(),
                        _ => {
                            return Err(syntax(
                                line,
                                "unexpected character after line continuation character",
                            ))
                        }
                    }
                }
                '0'..='9' => {
                    let t = lx.number()?;
                    lx.push(t, line);
                }
                '.' if lx.peek_at(1).is_some_and(|d| d.is_ascii_digit()) => {
                    let t = lx.number()?;
                    lx.push(t, line);
                }
                '\'' | '"' => {
                    let t = lx.string("")?;
                    lx.push(t, line);
                }
                c if is_ident_start(c) => {
                    let start = lx.pos;
                    while lx.peek().is_some_and(is_ident_continue) {
                        lx.pos += 1;
                    }
                    let name: String = lx
                        .chars
                        .get(start..lx.pos)
                        .unwrap_or_default()
                        .iter()
                        .collect();
                    let prefix = matches!(
                        name.to_ascii_lowercase().as_str(),
                        "r" | "u" | "b" | "f" | "br" | "rb" | "fr" | "rf"
                    );
                    let t = if prefix && matches!(lx.peek(), Some('\'' | '"')) {
                        lx.string(&name)?
                    } else {
                        Tok::Name(name)
                    };
                    lx.push(t, line);
                }
                '(' | '[' | '{' => {
                    lx.pos += 1;
                    lx.brackets.push((c, line));
                    if lx.brackets.len() > MAX_NESTING {
                        return Err(unsupported(
                            line,
                            format!("more than {MAX_NESTING} nested brackets"),
                        ));
                    }
                    lx.push(Tok::Open(c), line);
                }
                ')' | ']' | '}' => {
                    lx.pos += 1;
                    match lx.brackets.pop() {
                        None => return Err(syntax(line, format!("unmatched `{c}`"))),
                        Some((open, opened)) if closer(open) != c => {
                            return Err(syntax(
                                line,
                                format!(
                                    "closing `{c}` does not match `{open}` opened on line {opened}"
                                ),
                            ))
                        }
                        Some(_) => lx.push(Tok::Close(c), line),
                    }
                }
                ',' => {
                    lx.pos += 1;
                    lx.push(Tok::Comma, line);
                }
                ';' => {
                    lx.pos += 1;
                    lx.push(Tok::Semi, line);
                }
                _ => match OPS.iter().find(|op| lx.at(op)) {
                    Some(op) => {
                        lx.pos += op.chars().count();
                        lx.push(Tok::Op(op), line);
                    }
                    None => {
                        return Err(syntax(
                            line,
                            format!("invalid character {c:?} (U+{:04X})", u32::from(c)),
                        ))
                    }
                },
            }
        }
        if let Some(&(open, opened)) = lx.brackets.last() {
            return Err(syntax(opened, format!("`{open}` was never closed")));
        }
        let line = lx.line;
        lx.push(Tok::Eof, line);
        Ok(lx.toks)
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos.saturating_add(ahead)).copied()
    }

    fn at(&self, s: &str) -> bool {
        s.chars()
            .enumerate()
            .all(|(i, c)| self.peek_at(i) == Some(c))
    }

    fn push(&mut self, tok: Tok, line: usize) {
        self.toks.push(Token { tok, line });
    }

    /// Consumes one `\n`, `\r\n` or `\r`.
    fn newline(&mut self) {
        if self.peek() == Some('\r') && self.peek_at(1) == Some('\n') {
            self.pos += 1;
        }
        self.pos += 1;
        self.line += 1;
    }

    fn digits(&mut self, text: &mut String) {
        while let Some(c) = self.peek().filter(|c| c.is_ascii_digit() || *c == '_') {
            if c != '_' {
                text.push(c);
            }
            self.pos += 1;
        }
    }

    fn number(&mut self) -> Result<Tok> {
        let line = self.line;
        let radix = match (self.peek(), self.peek_at(1)) {
            (Some('0'), Some('x' | 'X')) => Some((16, "hexadecimal")),
            (Some('0'), Some('o' | 'O')) => Some((8, "octal")),
            (Some('0'), Some('b' | 'B')) => Some((2, "binary")),
            _ => None,
        };
        if let Some((radix, what)) = radix {
            self.pos += 2;
            let mut value = 0f64;
            let mut digits = 0usize;
            while let Some(c) = self.peek() {
                if c == '_' {
                    self.pos += 1;
                    continue;
                }
                let Some(d) = c.to_digit(radix) else { break };
                value = value * f64::from(radix) + f64::from(d);
                digits += 1;
                self.pos += 1;
            }
            if digits == 0 || self.peek().is_some_and(is_ident_continue) {
                return Err(syntax(line, format!("invalid {what} literal")));
            }
            return Ok(Tok::Num { value, int: true });
        }
        let mut text = String::new();
        let mut int = true;
        self.digits(&mut text);
        if self.peek() == Some('.') {
            int = false;
            text.push('.');
            self.pos += 1;
            self.digits(&mut text);
        }
        if matches!(self.peek(), Some('e' | 'E')) {
            let sign = matches!(self.peek_at(1), Some('+' | '-'));
            let digit_at = if sign { 2 } else { 1 };
            if self.peek_at(digit_at).is_some_and(|c| c.is_ascii_digit()) {
                int = false;
                text.push('e');
                if sign {
                    text.extend(self.peek_at(1));
                }
                self.pos += digit_at;
                self.digits(&mut text);
            }
        }
        if matches!(self.peek(), Some('j' | 'J')) {
            self.pos += 1;
            return Ok(Tok::Deferred("a complex number literal".into()));
        }
        if self.peek().is_some_and(is_ident_continue) {
            return Err(syntax(line, "invalid decimal literal"));
        }
        if int && text.len() > 1 && text.starts_with('0') && text.chars().any(|c| c != '0') {
            return Err(syntax(
                line,
                "leading zeros in decimal integer literals are not permitted",
            ));
        }
        match text.parse::<f64>() {
            Ok(value) => Ok(Tok::Num { value, int }),
            Err(_) => Err(syntax(line, format!("invalid number literal {text:?}"))),
        }
    }

    /// Reads `count` hex digits of an escape.
    fn hex_escape(&mut self, count: usize, line: usize, name: &str) -> Result<u32> {
        let mut v = 0u32;
        for _ in 0..count {
            let Some(d) = self.peek().and_then(|c| c.to_digit(16)) else {
                return Err(syntax(line, format!("truncated {name} escape in a string")));
            };
            v = v.wrapping_mul(16).wrapping_add(d);
            self.pos += 1;
        }
        Ok(v)
    }

    /// Reads a string literal whose prefix (`r`, `b`, `f`, ...) is read; the
    /// current character is its opening quote.
    fn string(&mut self, prefix: &str) -> Result<Tok> {
        let line = self.line;
        let lower = prefix.to_ascii_lowercase();
        let raw = lower.contains('r');
        let bytes = lower.contains('b');
        let fstring = lower.contains('f');
        let Some(quote) = self.peek() else {
            return Err(syntax(line, "expected a string"));
        };
        let triple = self.peek_at(1) == Some(quote) && self.peek_at(2) == Some(quote);
        self.pos += if triple { 3 } else { 1 };
        let unterminated = || {
            syntax(
                line,
                if triple {
                    "unterminated triple-quoted string literal"
                } else {
                    "unterminated string literal"
                },
            )
        };
        let mut s = String::new();
        let mut deferred: Option<String> = None;
        loop {
            let Some(c) = self.peek() else {
                return Err(unterminated());
            };
            match c {
                c if c == quote => {
                    if !triple {
                        self.pos += 1;
                        break;
                    }
                    if self.peek_at(1) == Some(quote) && self.peek_at(2) == Some(quote) {
                        self.pos += 3;
                        break;
                    }
                    s.push(c);
                    self.pos += 1;
                }
                '\n' | '\r' => {
                    if !triple {
                        return Err(unterminated());
                    }
                    self.newline();
                    s.push('\n');
                }
                '\\' => {
                    self.pos += 1;
                    let Some(d) = self.peek() else {
                        return Err(unterminated());
                    };
                    if d == '\n' || d == '\r' {
                        // A continuation: raw strings keep it, others drop it.
                        self.newline();
                        if raw {
                            s.push_str("\\\n");
                        }
                        continue;
                    }
                    self.pos += 1;
                    if raw {
                        s.push('\\');
                        s.push(d);
                        continue;
                    }
                    match d {
                        '\\' | '\'' | '"' => s.push(d),
                        'a' => s.push('\x07'),
                        'b' => s.push('\x08'),
                        'f' => s.push('\x0c'),
                        'n' => s.push('\n'),
                        'r' => s.push('\r'),
                        't' => s.push('\t'),
                        'v' => s.push('\x0b'),
                        '0'..='7' => {
                            let mut v = d.to_digit(8).unwrap_or(0);
                            for _ in 0..2 {
                                match self.peek().and_then(|c| c.to_digit(8)) {
                                    Some(o) => {
                                        v = v * 8 + o;
                                        self.pos += 1;
                                    }
                                    None => break,
                                }
                            }
                            s.push(char::from_u32(v).unwrap_or('\u{fffd}'));
                        }
                        'x' => {
                            let v = self.hex_escape(2, line, "\\xXX")?;
                            s.push(char::from_u32(v).unwrap_or('\u{fffd}'));
                        }
                        'u' | 'U' if !bytes => {
                            let (count, name) = if d == 'u' {
                                (4, "\\uXXXX")
                            } else {
                                (8, "\\UXXXXXXXX")
                            };
                            let v = self.hex_escape(count, line, name)?;
                            match char::from_u32(v) {
                                Some(ch) => s.push(ch),
                                None if (0xD800..=0xDFFF).contains(&v) => {
                                    deferred.get_or_insert(format!(
                                        "a surrogate escape {name} (U+{v:04X}); write the character itself"
                                    ));
                                }
                                None => {
                                    return Err(syntax(
                                        line,
                                        format!("illegal Unicode character in {name} escape"),
                                    ))
                                }
                            }
                        }
                        'N' if !bytes => {
                            if self.peek() != Some('{') {
                                return Err(syntax(line, "malformed \\N character escape"));
                            }
                            while let Some(c) = self.peek() {
                                if c == '}' || c == quote || c == '\n' || c == '\r' {
                                    break;
                                }
                                self.pos += 1;
                            }
                            if self.peek() != Some('}') {
                                return Err(syntax(line, "malformed \\N character escape"));
                            }
                            self.pos += 1;
                            deferred.get_or_insert(
                                "a \\N{...} escape in a string (write the character or \\uXXXX instead)".into(),
                            );
                        }
                        other => {
                            s.push('\\');
                            s.push(other);
                        }
                    }
                }
                c => {
                    if bytes && !c.is_ascii() {
                        return Err(syntax(
                            line,
                            "bytes can only contain ASCII literal characters",
                        ));
                    }
                    s.push(c);
                    self.pos += 1;
                }
            }
        }
        if fstring {
            let mut out = String::with_capacity(s.len());
            let mut it = s.chars().peekable();
            while let Some(c) = it.next() {
                if c == '{' || c == '}' {
                    if it.peek() == Some(&c) {
                        it.next();
                    } else {
                        deferred.get_or_insert("an f-string with replacement fields".into());
                    }
                }
                out.push(c);
            }
            s = out;
        }
        Ok(match deferred {
            Some(what) => Tok::Deferred(what),
            None => Tok::Str(s),
        })
    }
}

fn closer(open: char) -> char {
    match open {
        '(' => ')',
        '[' => ']',
        _ => '}',
    }
}

fn describe(tok: &Tok) -> String {
    match tok {
        Tok::Name(n) => format!("`{n}`"),
        Tok::Num { value, int } => format!("the number {}", Val::Num(*value, *int).repr()),
        Tok::Str(s) => format!("the string {}", Val::Str(s.clone()).repr()),
        Tok::Deferred(what) => what.clone(),
        Tok::Open(c) | Tok::Close(c) => format!("`{c}`"),
        Tok::Op(o) => format!("`{o}`"),
        Tok::Comma => "`,`".into(),
        Tok::Semi => "`;`".into(),
        Tok::Newline => "the end of the line".into(),
        Tok::Eof => "the end of the code".into(),
    }
}

// ---------------------------------------------------------------- values

#[derive(Debug, Clone, PartialEq)]
enum Val {
    Num(f64, bool),
    Str(String),
    Bool(bool),
    None,
    Tuple(Vec<Arg>),
    List(Vec<Arg>),
    /// A `pyautogui.<NAME>` constant or function used as a value.
    Name(String),
}

#[derive(Debug, Clone, PartialEq)]
struct Arg {
    val: Val,
    line: usize,
}

impl Val {
    /// A Python-like rendering for messages, cut to [`SHOW`] characters.
    fn repr(&self) -> String {
        let s = match self {
            Val::Num(v, int) => {
                if *int && v.fract() == 0.0 && v.abs() < 1e15 {
                    format!("{}", *v as i64)
                } else {
                    format!("{v}")
                }
            }
            Val::Str(s) => {
                // Cut before escaping so huge strings stay cheap.
                let cut: String = s.chars().take(SHOW + 1).collect();
                format!("{cut:?}")
            }
            Val::Bool(true) => "True".into(),
            Val::Bool(false) => "False".into(),
            Val::None => "None".into(),
            Val::Tuple(items) | Val::List(items) => {
                let (open, close) = if matches!(self, Val::Tuple(_)) {
                    ('(', ')')
                } else {
                    ('[', ']')
                };
                let mut s = String::from(open);
                for (i, a) in items.iter().enumerate() {
                    if i > 0 {
                        s.push_str(", ");
                    }
                    if s.len() > SHOW * 4 {
                        s.push_str("...");
                        break;
                    }
                    s.push_str(&a.val.repr());
                }
                s.push(close);
                s
            }
            Val::Name(n) => n.clone(),
        };
        if s.chars().count() > SHOW {
            let cut: String = s.chars().take(SHOW - 3).collect();
            format!("{cut}...")
        } else {
            s
        }
    }
}

// ---------------------------------------------------------------- parser

struct Parser {
    toks: Vec<Token>,
    pos: usize,
    eof: Token,
    /// Names bound to modules: `pyautogui`, `time` and `import ... as` aliases.
    modules: HashMap<String, &'static str>,
    /// Bare names bound by `from <module> import <name>`, to qualified names.
    funcs: HashMap<String, String>,
    out: Vec<Action>,
}

impl Parser {
    fn new(toks: Vec<Token>) -> Parser {
        let line = toks.last().map_or(1, |t| t.line);
        let modules = [
            ("pyautogui".to_string(), "pyautogui"),
            ("time".to_string(), "time"),
        ];
        Parser {
            toks,
            pos: 0,
            eof: Token {
                tok: Tok::Eof,
                line,
            },
            modules: modules.into_iter().collect(),
            funcs: HashMap::new(),
            out: Vec::new(),
        }
    }

    fn peek(&self) -> &Token {
        self.toks.get(self.pos).unwrap_or(&self.eof)
    }

    fn peek_at(&self, ahead: usize) -> &Token {
        self.toks
            .get(self.pos.saturating_add(ahead))
            .unwrap_or(&self.eof)
    }

    fn advance(&mut self) {
        if self.pos < self.toks.len() {
            self.pos += 1;
        }
    }

    fn is_name(&self, name: &str) -> bool {
        matches!(&self.peek().tok, Tok::Name(n) if n == name)
    }

    fn run(mut self) -> Result<Vec<Action>> {
        loop {
            while self.peek().tok == Tok::Newline {
                self.advance();
            }
            match self.peek().tok {
                Tok::Eof => break,
                Tok::Semi => {
                    return Err(syntax(self.peek().line, "invalid syntax: unexpected `;`"))
                }
                _ => {}
            }
            self.statement()?;
            match self.peek().tok {
                Tok::Newline | Tok::Eof => {}
                Tok::Semi => {
                    self.advance();
                    if self.peek().tok == Tok::Semi {
                        return Err(syntax(self.peek().line, "invalid syntax: unexpected `;`"));
                    }
                }
                _ => return Err(self.junk_after_statement()),
            }
        }
        Ok(self.out)
    }

    fn junk_after_statement(&self) -> PyautoguiError {
        let t = self.peek();
        match &t.tok {
            Tok::Op(op) if *op != "=" => unsupported(
                t.line,
                format!("an expression with `{op}` (only plain calls are supported)"),
            ),
            Tok::Open(c @ ('(' | '[')) => unsupported(t.line, format!("using a result with `{c}`")),
            other => syntax(
                t.line,
                format!(
                    "invalid syntax: expected the end of the statement, found {}",
                    describe(other)
                ),
            ),
        }
    }

    fn statement(&mut self) -> Result<()> {
        let t = self.peek().clone();
        let line = t.line;
        match t.tok {
            Tok::Name(n) => match n.as_str() {
                "import" => self.import(),
                "from" => self.import_from(),
                "pass" => {
                    self.advance();
                    Ok(())
                }
                "WAIT" | "DONE" | "FAIL" if matches!(self.peek_at(1).tok, Tok::Newline | Tok::Semi | Tok::Eof) => {
                    self.advance();
                    self.out.push(match n.as_str() {
                        "WAIT" => Action::Wait { seconds: None },
                        "DONE" => Action::Done,
                        _ => Action::Fail,
                    });
                    Ok(())
                }
                "True" | "False" | "None" => Err(unsupported(line, "an expression statement")),
                kw if is_keyword(kw) => Err(unsupported(line, format!("the `{kw}` statement"))),
                _ => self.name_statement(),
            },
            Tok::Str(_) => {
                // A docstring or a bare string: no effect.
                self.value(0)?;
                Ok(())
            }
            Tok::Deferred(what) => Err(unsupported(line, what)),
            Tok::Num { .. } | Tok::Open(_) | Tok::Op("-" | "+" | "~") => Err(unsupported(
                line,
                "an expression statement (only calls, imports and pyautogui settings are supported)",
            )),
            other => Err(syntax(line, format!("invalid syntax: unexpected {}", describe(&other)))),
        }
    }

    /// Reads `name(.name)*`; the current token is a name.
    fn dotted(&mut self) -> Result<Vec<String>> {
        let mut parts = Vec::new();
        loop {
            let t = self.peek();
            match &t.tok {
                Tok::Name(n) if !is_keyword(n) => {
                    parts.push(n.clone());
                    self.advance();
                }
                other => {
                    return Err(syntax(
                        t.line,
                        format!("invalid syntax: expected a name, found {}", describe(other)),
                    ))
                }
            }
            if self.peek().tok != Tok::Op(".") {
                return Ok(parts);
            }
            self.advance();
        }
    }

    /// The qualified name of a dotted name, through imports and aliases.
    fn resolve(&self, parts: &[String]) -> String {
        match parts {
            [one] => self.funcs.get(one).cloned().unwrap_or_else(|| one.clone()),
            [first, rest @ ..] => match self.modules.get(first) {
                Some(module) => format!("{module}.{}", rest.join(".")),
                None => parts.join("."),
            },
            [] => String::new(),
        }
    }

    fn name_statement(&mut self) -> Result<()> {
        let line = self.peek().line;
        let parts = self.dotted()?;
        let written = parts.join(".");
        let name = self.resolve(&parts);
        match &self.peek().tok {
            Tok::Open('(') => self.call(&name, line),
            Tok::Op("=") => {
                if name == "pyautogui.FAILSAFE" || name == "pyautogui.PAUSE" {
                    // Settings: FAILSAFE has no meaning here, PAUSE is ignored.
                    self.advance();
                    self.value(0)?;
                    Ok(())
                } else {
                    Err(unsupported(
                        line,
                        format!("assignment to `{written}` (variables are not supported)"),
                    ))
                }
            }
            Tok::Op(op) if op.ends_with('=') && !matches!(*op, "==" | "<=" | ">=" | "!=") => {
                Err(unsupported(
                    line,
                    format!("assignment to `{written}` (variables are not supported)"),
                ))
            }
            Tok::Comma => Err(unsupported(
                line,
                format!(
                    "a tuple or assignment starting with `{written}` (variables are not supported)"
                ),
            )),
            Tok::Newline | Tok::Semi | Tok::Eof => Err(unsupported(
                line,
                format!("the bare name `{written}` (only calls are supported)"),
            )),
            _ => Err(self.junk_after_statement()),
        }
    }

    fn import(&mut self) -> Result<()> {
        self.advance();
        loop {
            let line = self.peek().line;
            let parts = self.dotted()?;
            let written = parts.join(".");
            let module = known_module(&written).ok_or_else(|| {
                unsupported(
                    line,
                    format!("importing `{written}` (only pyautogui and time)"),
                )
            })?;
            let alias = if self.is_name("as") {
                self.advance();
                self.plain_name()?
            } else {
                written
            };
            self.modules.insert(alias, module);
            if self.peek().tok != Tok::Comma {
                return Ok(());
            }
            self.advance();
        }
    }

    fn import_from(&mut self) -> Result<()> {
        let line = self.peek().line;
        self.advance();
        if self.peek().tok == Tok::Op(".") || self.peek().tok == Tok::Op("...") {
            return Err(unsupported(line, "a relative import"));
        }
        let written = self.dotted()?.join(".");
        let module = known_module(&written).ok_or_else(|| {
            unsupported(
                line,
                format!("importing from `{written}` (only pyautogui and time)"),
            )
        })?;
        if !self.is_name("import") {
            let t = self.peek();
            return Err(syntax(
                t.line,
                format!(
                    "invalid syntax: expected `import`, found {}",
                    describe(&t.tok)
                ),
            ));
        }
        self.advance();
        if self.peek().tok == Tok::Op("*") {
            self.advance();
            let prefix = format!("{module}.");
            for full in SUPPORTED {
                if let Some(short) = full.strip_prefix(&prefix) {
                    self.funcs.insert(short.to_string(), full.to_string());
                }
            }
            return Ok(());
        }
        let paren = self.peek().tok == Tok::Open('(');
        if paren {
            self.advance();
        }
        loop {
            let name = self.plain_name()?;
            let alias = if self.is_name("as") {
                self.advance();
                self.plain_name()?
            } else {
                name.clone()
            };
            self.funcs.insert(alias, format!("{module}.{name}"));
            if self.peek().tok != Tok::Comma {
                break;
            }
            self.advance();
            if paren && matches!(self.peek().tok, Tok::Close(_)) {
                break;
            }
        }
        if paren {
            let t = self.peek();
            if !matches!(t.tok, Tok::Close(_)) {
                return Err(syntax(
                    t.line,
                    format!(
                        "invalid syntax: expected `,` or `)`, found {}",
                        describe(&t.tok)
                    ),
                ));
            }
            self.advance();
        }
        Ok(())
    }

    fn plain_name(&mut self) -> Result<String> {
        let t = self.peek();
        match &t.tok {
            Tok::Name(n) if !is_keyword(n) => {
                let n = n.clone();
                self.advance();
                Ok(n)
            }
            other => Err(syntax(
                t.line,
                format!("invalid syntax: expected a name, found {}", describe(other)),
            )),
        }
    }

    /// Reads one literal value.
    fn value(&mut self, depth: usize) -> Result<Arg> {
        let line = self.peek().line;
        if depth > MAX_NESTING {
            return Err(unsupported(
                line,
                format!("more than {MAX_NESTING} nested brackets"),
            ));
        }
        let mut negate = false;
        let mut signed = false;
        while let Tok::Op(op @ ("-" | "+")) = self.peek().tok {
            negate ^= op == "-";
            signed = true;
            self.advance();
        }
        let t = self.peek().clone();
        let val = match t.tok {
            Tok::Num { value, int } => {
                self.advance();
                Val::Num(value, int)
            }
            Tok::Str(mut s) => {
                self.advance();
                loop {
                    match &self.peek().tok {
                        Tok::Str(more) => {
                            s.push_str(more);
                            self.advance();
                        }
                        Tok::Deferred(what) => {
                            return Err(unsupported(self.peek().line, what.clone()))
                        }
                        _ => break,
                    }
                }
                Val::Str(s)
            }
            Tok::Deferred(what) => return Err(unsupported(t.line, what)),
            Tok::Name(n) => match n.as_str() {
                "True" | "False" | "None" => {
                    self.advance();
                    match n.as_str() {
                        "True" => Val::Bool(true),
                        "False" => Val::Bool(false),
                        _ => Val::None,
                    }
                }
                kw if is_keyword(kw) => {
                    return Err(unsupported(
                        t.line,
                        format!("a `{kw}` expression (only literal values are supported)"),
                    ))
                }
                _ => {
                    let parts = self.dotted()?;
                    let name = self.resolve(&parts);
                    if self.peek().tok == Tok::Open('(') {
                        return Err(PyautoguiError::UnsupportedCall {
                            line: t.line,
                            call: name,
                        });
                    }
                    if name.starts_with("pyautogui.") {
                        Val::Name(name)
                    } else {
                        return Err(unsupported(
                            t.line,
                            format!(
                                "the variable `{}` (only literal values are supported)",
                                parts.join(".")
                            ),
                        ));
                    }
                }
            },
            Tok::Open(c @ ('(' | '[')) => {
                self.advance();
                let (mut items, trailing_comma) = self.sequence(depth + 1)?;
                if c == '[' {
                    Val::List(items)
                } else if items.len() == 1 && !trailing_comma {
                    items.pop().map_or(Val::None, |a| a.val)
                } else {
                    Val::Tuple(items)
                }
            }
            Tok::Open(_) => {
                return Err(unsupported(
                    t.line,
                    "a dict or set (only literal values are supported)",
                ))
            }
            other => {
                return Err(syntax(
                    t.line,
                    format!(
                        "invalid syntax: expected a value, found {}",
                        describe(&other)
                    ),
                ))
            }
        };
        let val = match val {
            Val::Num(v, int) if negate => Val::Num(-v, int),
            v @ Val::Num(..) => v,
            v if signed => {
                return Err(unsupported(
                    line,
                    format!("unary `-` or `+` on {} (only on numbers)", v.repr()),
                ))
            }
            v => v,
        };
        Ok(Arg { val, line })
    }

    /// Reads the items of a tuple or list up to and past its closing bracket.
    /// Returns them and whether a comma ended the last one.
    fn sequence(&mut self, depth: usize) -> Result<(Vec<Arg>, bool)> {
        let mut items = Vec::new();
        let mut trailing_comma = false;
        loop {
            if let Tok::Close(_) = self.peek().tok {
                self.advance();
                return Ok((items, trailing_comma));
            }
            if let Tok::Op(op @ ("*" | "**")) = self.peek().tok {
                return Err(unsupported(self.peek().line, format!("`{op}` unpacking")));
            }
            items.push(self.value(depth)?);
            trailing_comma = self.after_value()?;
        }
    }

    /// After a value in brackets: consumes a `,` (true) or sees the
    /// closing bracket (false); anything else is an error.
    fn after_value(&mut self) -> Result<bool> {
        let t = self.peek();
        match &t.tok {
            Tok::Comma => {
                self.advance();
                Ok(true)
            }
            Tok::Close(_) => Ok(false),
            Tok::Op(op) if *op != "=" => Err(unsupported(
                t.line,
                format!(
                    "an expression with `{op}` in an argument (only literal values are supported)"
                ),
            )),
            Tok::Open(c @ ('(' | '[')) => Err(unsupported(
                t.line,
                format!(
                    "calling or indexing a value with `{c}` (only literal values are supported)"
                ),
            )),
            Tok::Name(kw)
                if matches!(
                    kw.as_str(),
                    "if" | "for" | "and" | "or" | "not" | "in" | "is"
                ) =>
            {
                Err(unsupported(
                    t.line,
                    format!("a `{kw}` expression (only literal values are supported)"),
                ))
            }
            other => Err(syntax(
                t.line,
                format!(
                    "invalid syntax: expected `,` or a closing bracket, found {} (missing comma?)",
                    describe(other)
                ),
            )),
        }
    }

    /// Reads a call's arguments (the current token is its `(`) and turns the
    /// call into actions.
    fn call(&mut self, name: &str, line: usize) -> Result<()> {
        if !SUPPORTED.contains(&name) {
            return Err(PyautoguiError::UnsupportedCall {
                line,
                call: name.to_string(),
            });
        }
        self.advance();
        let mut positional: Vec<Arg> = Vec::new();
        let mut keywords: Vec<(String, Arg)> = Vec::new();
        loop {
            if let Tok::Close(_) = self.peek().tok {
                self.advance();
                break;
            }
            let t = self.peek().clone();
            match (&t.tok, &self.peek_at(1).tok) {
                (Tok::Op(op @ ("*" | "**")), _) => {
                    return Err(unsupported(t.line, format!("`{op}` argument unpacking")));
                }
                (Tok::Name(k), Tok::Op("=")) if !is_keyword(k) => {
                    if keywords.iter().any(|(seen, _)| seen == k) {
                        return Err(syntax(t.line, format!("keyword argument repeated: `{k}`")));
                    }
                    self.advance();
                    self.advance();
                    let v = self.value(1)?;
                    keywords.push((k.clone(), v));
                }
                _ => {
                    let v = self.value(1)?;
                    if !keywords.is_empty() {
                        return Err(syntax(
                            v.line,
                            "positional argument follows keyword argument",
                        ));
                    }
                    positional.push(v);
                }
            }
            self.after_value()?;
        }
        let actions = build(name, line, positional, keywords)?;
        self.out.extend(actions);
        Ok(())
    }
}

fn known_module(name: &str) -> Option<&'static str> {
    match name {
        "pyautogui" => Some("pyautogui"),
        "time" => Some("time"),
        _ => None,
    }
}

// ---------------------------------------------------------------- calls

const P_CLICK: &[&str] = &[
    "x",
    "y",
    "clicks",
    "interval",
    "button",
    "duration",
    "tween",
    "logScreenshot",
    "_pause",
];
const P_ONE_BUTTON_CLICK: &[&str] = &[
    "x",
    "y",
    "interval",
    "duration",
    "tween",
    "logScreenshot",
    "_pause",
];
const P_MULTI_CLICK: &[&str] = &[
    "x",
    "y",
    "interval",
    "button",
    "duration",
    "tween",
    "logScreenshot",
    "_pause",
];
const P_MOVE: &[&str] = &["x", "y", "duration", "tween", "logScreenshot", "_pause"];
const P_DRAG: &[&str] = &[
    "x",
    "y",
    "duration",
    "tween",
    "button",
    "logScreenshot",
    "_pause",
    "mouseDownUp",
];
const P_BUTTON: &[&str] = &[
    "x",
    "y",
    "button",
    "duration",
    "tween",
    "logScreenshot",
    "_pause",
];
const P_SCROLL: &[&str] = &["clicks", "x", "y", "logScreenshot", "_pause"];
const P_WRITE: &[&str] = &["message", "interval", "logScreenshot", "_pause"];
const P_PRESS: &[&str] = &["keys", "presses", "interval", "logScreenshot", "_pause"];
const P_HOTKEY: &[&str] = &["interval", "logScreenshot", "_pause"];
const P_KEY: &[&str] = &["key", "logScreenshot", "_pause"];

/// A call's arguments bound to its parameters.
struct Args<'a> {
    call: &'a str,
    line: usize,
    params: &'static [&'static str],
    slots: Vec<Option<Arg>>,
}

impl<'a> Args<'a> {
    fn bind(
        call: &'a str,
        line: usize,
        params: &'static [&'static str],
        positional: Vec<Arg>,
        keywords: Vec<(String, Arg)>,
    ) -> Result<Args<'a>> {
        if let Some(extra) = positional.get(params.len()) {
            return Err(PyautoguiError::Argument {
                line: extra.line,
                call: call.into(),
                argument: format!("#{}", params.len() + 1),
                message: format!(
                    "takes at most {} positional arguments ({}), got {}",
                    params.len(),
                    params.join(", "),
                    positional.len()
                ),
            });
        }
        let mut slots: Vec<Option<Arg>> = vec![None; params.len()];
        for (slot, a) in slots.iter_mut().zip(positional) {
            *slot = Some(a);
        }
        for (k, a) in keywords {
            let slot = params
                .iter()
                .position(|p| *p == k)
                .and_then(|i| slots.get_mut(i));
            match slot {
                None => {
                    return Err(PyautoguiError::UnknownArgument {
                        line: a.line,
                        call: call.into(),
                        argument: k,
                        expected: params.join(", "),
                    })
                }
                Some(Some(_)) => {
                    return Err(PyautoguiError::Argument {
                        line: a.line,
                        call: call.into(),
                        message: format!("got multiple values for argument `{k}`"),
                        argument: k,
                    })
                }
                Some(slot) => *slot = Some(a),
            }
        }
        Ok(Args {
            call,
            line,
            params,
            slots,
        })
    }

    /// The argument, unless absent or `None`.
    fn get(&self, name: &str) -> Option<&Arg> {
        let i = self.params.iter().position(|p| *p == name)?;
        self.slots.get(i)?.as_ref().filter(|a| a.val != Val::None)
    }

    fn bad(&self, name: &str, arg: &Arg, expected: &str) -> PyautoguiError {
        PyautoguiError::Argument {
            line: arg.line,
            call: self.call.into(),
            argument: name.into(),
            message: format!(
                "argument `{name}` must be {expected}, got {}",
                arg.val.repr()
            ),
        }
    }

    fn missing(&self, name: &str) -> PyautoguiError {
        PyautoguiError::Argument {
            line: self.line,
            call: self.call.into(),
            argument: name.into(),
            message: format!("missing required argument `{name}`"),
        }
    }

    fn number(&self, name: &str, arg: &Arg) -> Result<f64> {
        match arg.val {
            Val::Num(v, _) if v.is_finite() => Ok(v),
            _ => Err(self.bad(name, arg, "a finite number")),
        }
    }

    /// A non-negative number of seconds, when given.
    fn seconds(&self, name: &str) -> Result<Option<f64>> {
        let Some(arg) = self.get(name) else {
            return Ok(None);
        };
        match arg.val {
            Val::Num(v, _) if v.is_finite() && v >= 0.0 => Ok(Some(v)),
            _ => Err(self.bad(name, arg, "a non-negative number of seconds")),
        }
    }

    /// A whole number in `lo..=hi`, when given.
    fn whole(&self, name: &str, lo: f64, hi: f64) -> Result<Option<f64>> {
        let Some(arg) = self.get(name) else {
            return Ok(None);
        };
        match arg.val {
            Val::Num(v, _) if v.fract() == 0.0 && (lo..=hi).contains(&v) => Ok(Some(v)),
            _ => Err(self.bad(name, arg, &format!("a whole number from {lo} to {hi}"))),
        }
    }

    fn count(&self, name: &str) -> Result<u32> {
        Ok(self.whole(name, 0.0, MAX_COUNT)?.map_or(1, |v| v as u32))
    }

    fn string(&self, name: &str) -> Result<String> {
        let arg = self.get(name).ok_or_else(|| self.missing(name))?;
        match &arg.val {
            Val::Str(s) => Ok(s.clone()),
            _ => Err(self.bad(name, arg, "a string")),
        }
    }

    /// A key name or a sequence of key names.
    fn keys(&self, name: &str) -> Result<Vec<String>> {
        let arg = self.get(name).ok_or_else(|| self.missing(name))?;
        match &arg.val {
            Val::Str(s) => Ok(vec![s.clone()]),
            Val::List(items) | Val::Tuple(items) => items
                .iter()
                .map(|item| match &item.val {
                    Val::Str(s) => Ok(s.clone()),
                    _ => Err(self.bad(name, item, "a list of key-name strings")),
                })
                .collect(),
            _ => Err(self.bad(name, arg, "a key-name string or a list of them")),
        }
    }

    fn button(&self) -> Result<Button> {
        let Some(arg) = self.get("button") else {
            return Ok(Button::Left);
        };
        let parsed = match &arg.val {
            Val::Str(s) => Button::parse(s),
            Val::Name(n) => match n.as_str() {
                "pyautogui.LEFT" | "pyautogui.PRIMARY" => Some(Button::Left),
                "pyautogui.MIDDLE" => Some(Button::Middle),
                "pyautogui.RIGHT" | "pyautogui.SECONDARY" => Some(Button::Right),
                _ => None,
            },
            _ => None,
        };
        parsed.ok_or_else(|| self.bad("button", arg, "'left', 'middle' or 'right'"))
    }

    fn flag(&self, name: &str, default: bool) -> Result<bool> {
        match self.get(name) {
            None => Ok(default),
            Some(Arg {
                val: Val::Bool(b), ..
            }) => Ok(*b),
            Some(arg) => Err(self.bad(name, arg, "True or False")),
        }
    }

    /// The point from `x` and `y`: numbers, an `(x, y)` sequence or a
    /// `(left, top, width, height)` box in `x`.
    fn point(&self) -> Result<Option<(f64, f64)>> {
        match (self.get("x"), self.get("y")) {
            (None, None) => Ok(None),
            (
                Some(
                    x @ Arg {
                        val: Val::Tuple(items) | Val::List(items),
                        ..
                    },
                ),
                y,
            ) => {
                if y.is_some() {
                    return Err(PyautoguiError::Argument {
                        line: x.line,
                        call: self.call.into(),
                        argument: "y".into(),
                        message: "argument `y` must not be given when `x` is an (x, y) sequence"
                            .into(),
                    });
                }
                let expected = "a number, an (x, y) pair or a (left, top, width, height) box";
                match items.as_slice() {
                    [a, b] => Ok(Some((self.number("x", a)?, self.number("x", b)?))),
                    [l, t, w, h] => {
                        let (l, t) = (self.number("x", l)?, self.number("x", t)?);
                        let (w, h) = (self.number("x", w)?, self.number("x", h)?);
                        Ok(Some((l + (w / 2.0).trunc(), t + (h / 2.0).trunc())))
                    }
                    _ => Err(self.bad("x", x, expected)),
                }
            }
            (
                Some(
                    x @ Arg {
                        val: Val::Str(_), ..
                    },
                ),
                _,
            ) => Err(self.bad(
                "x",
                x,
                "a number (locating images on the screen is not supported)",
            )),
            (Some(x), Some(y)) => Ok(Some((self.number("x", x)?, self.number("y", y)?))),
            (Some(a), None) | (None, Some(a)) => {
                let (given, absent) = if self.get("x").is_some() {
                    ("x", "y")
                } else {
                    ("y", "x")
                };
                // Type errors first, then the pairing.
                self.number(given, a)?;
                Err(PyautoguiError::Argument {
                    line: a.line,
                    call: self.call.into(),
                    argument: absent.into(),
                    message: format!(
                        "argument `{given}` needs `{absent}` too (moving along one axis only is not supported)"
                    ),
                })
            }
        }
    }
}

fn split(point: Option<(f64, f64)>) -> (Option<f64>, Option<f64>) {
    match point {
        Some((x, y)) => (Some(x), Some(y)),
        None => (None, None),
    }
}

fn click(button: Button, point: Option<(f64, f64)>, num_clicks: u32) -> Vec<Action> {
    if num_clicks == 0 {
        return point
            .map(|(x, y)| Action::MoveTo { x, y })
            .into_iter()
            .collect();
    }
    let (x, y) = split(point);
    vec![Action::Click {
        button,
        x,
        y,
        num_clicks,
    }]
}

/// One press per key, `rounds` times, with a wait of `interval` between
/// consecutive presses of a round sequence (pyautogui sleeps after each
/// round; the last sleep is dropped).
fn press_each(
    keys: &[String],
    rounds: u32,
    interval: Option<f64>,
    wait_per_key: bool,
) -> Vec<Action> {
    let wait = interval.filter(|i| *i > 0.0);
    let mut out = Vec::new();
    for round in 0..rounds {
        for (i, key) in keys.iter().enumerate() {
            out.push(Action::Press {
                key: key.clone(),
                presses: 1,
                interval: None,
            });
            let last_key = i + 1 == keys.len();
            let last = last_key && round + 1 == rounds;
            if let Some(seconds) = wait {
                if !last && (wait_per_key || last_key) {
                    out.push(Action::Wait {
                        seconds: Some(seconds),
                    });
                }
            }
        }
    }
    out
}

fn build(
    name: &str,
    line: usize,
    positional: Vec<Arg>,
    keywords: Vec<(String, Arg)>,
) -> Result<Vec<Action>> {
    let bind = |params| Args::bind(name, line, params, positional.clone(), keywords.clone());
    match name {
        "pyautogui.click" => {
            let a = bind(P_CLICK)?;
            let point = a.point()?;
            let clicks = a.count("clicks")?;
            a.seconds("interval")?;
            Ok(click(a.button()?, point, clicks))
        }
        "pyautogui.leftClick" | "pyautogui.rightClick" | "pyautogui.middleClick" => {
            let a = bind(P_ONE_BUTTON_CLICK)?;
            let point = a.point()?;
            a.seconds("interval")?;
            Ok(match name {
                "pyautogui.rightClick" => {
                    let (x, y) = split(point);
                    vec![Action::RightClick { x, y }]
                }
                "pyautogui.middleClick" => click(Button::Middle, point, 1),
                _ => click(Button::Left, point, 1),
            })
        }
        "pyautogui.doubleClick" | "pyautogui.tripleClick" => {
            let a = bind(P_MULTI_CLICK)?;
            let point = a.point()?;
            a.seconds("interval")?;
            let button = a.button()?;
            if name == "pyautogui.doubleClick" && button == Button::Left {
                let (x, y) = split(point);
                Ok(vec![Action::DoubleClick { x, y }])
            } else {
                let n = if name == "pyautogui.doubleClick" {
                    2
                } else {
                    3
                };
                Ok(click(button, point, n))
            }
        }
        "pyautogui.moveTo" => {
            let a = bind(P_MOVE)?;
            Ok(a.point()?
                .map(|(x, y)| Action::MoveTo { x, y })
                .into_iter()
                .collect())
        }
        "pyautogui.dragTo" => {
            let a = bind(P_DRAG)?;
            let (x, y) = a.point()?.ok_or_else(|| a.missing("x"))?;
            let button = a.button()?;
            if a.flag("mouseDownUp", true)? {
                Ok(vec![Action::DragTo { x, y, button }])
            } else {
                Ok(vec![Action::MoveTo { x, y }])
            }
        }
        "pyautogui.mouseDown" | "pyautogui.mouseUp" => {
            let a = bind(P_BUTTON)?;
            let mut out: Vec<Action> = a
                .point()?
                .map(|(x, y)| Action::MoveTo { x, y })
                .into_iter()
                .collect();
            let button = a.button()?;
            out.push(if name == "pyautogui.mouseDown" {
                Action::MouseDown { button }
            } else {
                Action::MouseUp { button }
            });
            Ok(out)
        }
        "pyautogui.scroll" | "pyautogui.vscroll" | "pyautogui.hscroll" => {
            let a = bind(P_SCROLL)?;
            let clicks = a
                .whole("clicks", -MAX_SCROLL, MAX_SCROLL)?
                .ok_or_else(|| a.missing("clicks"))? as i32;
            let (x, y) = split(a.point()?);
            let (dx, dy) = if name == "pyautogui.hscroll" {
                (clicks, 0)
            } else {
                (0, clicks)
            };
            Ok(vec![Action::Scroll { dx, dy, x, y }])
        }
        "pyautogui.write" | "pyautogui.typewrite" => {
            let a = bind(P_WRITE)?;
            let arg = a.get("message").ok_or_else(|| a.missing("message"))?;
            let interval = a.seconds("interval")?;
            match &arg.val {
                Val::Str(text) if text.is_empty() => Ok(vec![]),
                Val::Str(text) => Ok(vec![Action::Typing {
                    text: text.clone(),
                    interval,
                }]),
                Val::List(_) | Val::Tuple(_) => {
                    Ok(press_each(&a.keys("message")?, 1, interval, true))
                }
                _ => Err(a.bad("message", arg, "a string or a list of key names")),
            }
        }
        "pyautogui.press" => {
            let a = bind(P_PRESS)?;
            let keys = a.keys("keys")?;
            let presses = a.count("presses")?;
            let interval = a.seconds("interval")?;
            match keys.as_slice() {
                [key] if presses > 0 => Ok(vec![Action::Press {
                    key: key.clone(),
                    presses,
                    interval,
                }]),
                _ => Ok(press_each(&keys, presses, interval, false)),
            }
        }
        "pyautogui.hotkey" => {
            let a = Args::bind(name, line, P_HOTKEY, vec![], keywords)?;
            a.seconds("interval")?;
            let keys: Vec<String> = match positional.as_slice() {
                [Arg {
                    val: Val::List(items) | Val::Tuple(items),
                    ..
                }] => items.clone(),
                _ => positional,
            }
            .into_iter()
            .map(|k| match k.val {
                Val::Str(s) => Ok(s),
                _ => Err(a.bad("keys", &k, "a key-name string")),
            })
            .collect::<Result<_>>()?;
            if keys.is_empty() {
                return Err(a.missing("keys"));
            }
            Ok(vec![Action::Hotkey { keys }])
        }
        "pyautogui.keyDown" | "pyautogui.keyUp" => {
            let a = bind(P_KEY)?;
            let key = a.string("key")?;
            Ok(vec![if name == "pyautogui.keyDown" {
                Action::KeyDown { key }
            } else {
                Action::KeyUp { key }
            }])
        }
        "time.sleep" | "pyautogui.sleep" => {
            let param: &'static [&'static str] = if name == "time.sleep" {
                &["secs"]
            } else {
                &["seconds"]
            };
            if name == "time.sleep" {
                if let Some((k, arg)) = keywords.first() {
                    return Err(PyautoguiError::Argument {
                        line: arg.line,
                        call: name.into(),
                        argument: k.clone(),
                        message: "takes no keyword arguments".into(),
                    });
                }
            }
            let a = bind(param)?;
            let p = param.first().copied().unwrap_or("secs");
            let seconds = a.seconds(p)?.ok_or_else(|| a.missing(p))?;
            Ok(vec![Action::Wait {
                seconds: Some(seconds),
            }])
        }
        _ => Err(PyautoguiError::UnsupportedCall {
            line,
            call: name.into(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(code: &str) -> Vec<Tok> {
        Lexer::run(code)
            .unwrap()
            .into_iter()
            .map(|t| t.tok)
            .collect()
    }

    #[test]
    fn lexes_numbers() {
        let num = |code: &str| match toks(code).first() {
            Some(Tok::Num { value, .. }) => *value,
            other => panic!("{code}: {other:?}"),
        };
        assert_eq!(num("1e3"), 1000.0);
        assert_eq!(num(".5"), 0.5);
        assert_eq!(num("1."), 1.0);
        assert_eq!(num("1.e2"), 100.0);
        assert_eq!(num("1_000"), 1000.0);
        assert_eq!(num("0x1F"), 31.0);
        assert_eq!(num("0o17"), 15.0);
        assert_eq!(num("0b101"), 5.0);
        assert_eq!(num("2.5E-1"), 0.25);
        assert_eq!(num("0"), 0.0);
        assert_eq!(num("00"), 0.0);
        assert!(Lexer::run("012").is_err());
        assert!(Lexer::run("1abc").is_err());
        assert!(Lexer::run("0x").is_err());
        assert!(matches!(toks("1j").first(), Some(Tok::Deferred(_))));
    }

    #[test]
    fn lexes_strings() {
        let s = |code: &str| match toks(code).first() {
            Some(Tok::Str(s)) => s.clone(),
            other => panic!("{code}: {other:?}"),
        };
        assert_eq!(s(r#"'a\nb'"#), "a\nb");
        assert_eq!(s(r#"r'a\nb'"#), "a\\nb");
        assert_eq!(s(r#"R"a\"b""#), "a\\\"b");
        assert_eq!(s(r#"'\x41\u00e9\U0001F600\101\0'"#), "Aé😀A\0");
        assert_eq!(s(r#"b'\x41\u00e9'"#), "A\\u00e9");
        assert_eq!(s(r#"f'{{x}}'"#), "{x}");
        assert_eq!(s("'''a\n'b'\n'''"), "a\n'b'\n");
        assert_eq!(s("'a\\\nb'"), "ab");
        assert_eq!(s(r#"'\d'"#), "\\d");
        assert!(matches!(toks("f'{x}'").first(), Some(Tok::Deferred(_))));
        assert!(matches!(
            toks(r"'\N{BULLET}'").first(),
            Some(Tok::Deferred(_))
        ));
        assert!(matches!(toks(r"'\ud800'").first(), Some(Tok::Deferred(_))));
        assert!(Lexer::run(r"'\x4'").is_err());
        assert!(Lexer::run(r"'\U00110000'").is_err());
        assert!(Lexer::run("b'é'").is_err());
    }

    #[test]
    fn newlines_inside_brackets_are_not_statement_ends() {
        let t = toks("f(1,\n2)\ng()");
        let newlines = t.iter().filter(|t| **t == Tok::Newline).count();
        assert_eq!(newlines, 1);
    }

    #[test]
    fn repr_is_short() {
        let long = Val::Str("x".repeat(1000));
        assert!(long.repr().chars().count() <= SHOW);
        let list = Val::List(
            (0..1000)
                .map(|i| Arg {
                    val: Val::Num(f64::from(i), true),
                    line: 1,
                })
                .collect(),
        );
        assert!(list.repr().chars().count() <= SHOW);
        assert_eq!(Val::Num(-3.0, true).repr(), "-3");
        assert_eq!(Val::Num(0.25, false).repr(), "0.25");
    }
}
