//! Native input: one persistent XTest injector (enigo's x11rb backend) that
//! runs [`protocol::Action`]s, instead of a new Python process per action.
//!
//! The injector lives on its own thread (enigo's connection is not shared);
//! [`Injector::run`] sends it a batch and waits for the outcome. A batch is
//! validated whole before anything runs: an unknown key or a point off the
//! screen fails the request with nothing half-done.
//!
//! Keys sent before an application has taken the focus go to whichever
//! window had it: on a slow guest, `click(80, 169); typewrite('B3\n')` on
//! LibreOffice's Name Box lost the keys. So after every click, and between
//! the actions of a batch, the injector waits on a second X connection of
//! its own. First a round trip (`GetInputFocus`): enigo syncs its connection
//! after each XTest event, so by then the server has run them. If the focus
//! is already where it should be (after a click: on the clicked top-level
//! window, or the click was on the bare desktop; between other actions:
//! where it was) that is all.
//!
//! After a click elsewhere, it is the window manager that moves the focus,
//! and a busy one (a slow guest) takes its time: no fixed wait knows how
//! long. So the injector asks it, through the window manager itself: it
//! sends an EWMH `_NET_REQUEST_FRAME_EXTENTS` for a window of its own and
//! waits (at most [`WM_CAP`]) for the answer, the `_NET_FRAME_EXTENTS`
//! property. The window manager handles its events in order, so once it has
//! answered it has handled the click. (A window manager that does not list
//! the request in `_NET_SUPPORTED` gets no such barrier.)
//!
//! Then it polls every [`FOCUS_POLL`] (at most [`FOCUS_CAP`]) until the
//! focus and the top-level window under the pointer read the same twice,
//! after a click with the focus on the clicked window; a click that moves no
//! focus there (a menu, a panel) ends the wait once the focus has been still
//! for [`FOCUS_STILL`]. Typing, presses and hotkeys compare the focused
//! top-level window before and after and report a move to another one as a
//! warning, without failing; so does a window manager that does not answer
//! within [`WM_CAP`].
//!
//! Text goes in as the keys a person would press. enigo types a character
//! that is not on a key's first level (every upper-case letter, `"`, `(`,
//! `_`, …) by binding it to a spare keycode first, and when the spares run
//! out it unbinds them all: a busy application that reads its key events
//! after the binding has changed sees another character, or none (a formula
//! typed into LibreOffice lost its capitals). So the injector reads the
//! keyboard mapping once, at start, and types every character the keyboard
//! has (first or second level) as that key, with Shift held for the second
//! level ([`KeyTable`]); only characters that are on no key go through
//! enigo's spare keycodes.
//!
//! The X calls here have no timeout of their own: the batch they run in has
//! one (`server::blocking`).

use enigo::{Axis, Coordinate, Direction, Enigo, Keyboard, Mouse, Settings};
use protocol::{Action, Button};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use x11rb::connection::Connection;
use x11rb::errors::ReplyOrIdError;
use x11rb::protocol::xproto::{
    Atom, AtomEnum, ClientMessageEvent, ConnectionExt as _, CreateWindowAux, EventMask, Window,
    WindowClass,
};
use x11rb::protocol::Event;
use x11rb::rust_connection::RustConnection;

/// The longest wait for the focus after one action (after the window
/// manager has answered, following a click).
pub const FOCUS_CAP: Duration = Duration::from_millis(500);
/// The longest wait for the window manager to answer after a click.
pub const WM_CAP: Duration = Duration::from_secs(2);
/// Time between two reads of the focus.
pub const FOCUS_POLL: Duration = Duration::from_millis(10);
/// After a click that moved no focus to the clicked window, how long the
/// focus must stay still before the next action runs.
pub const FOCUS_STILL: Duration = Duration::from_millis(100);

#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("cannot open the XTest injector on display {display:?}: {message}")]
    Connect { display: String, message: String },
    #[error("action {index} ({action}): point ({x}, {y}) is off the {width}x{height} screen")]
    OffScreen {
        index: usize,
        action: &'static str,
        x: f64,
        y: f64,
        width: u32,
        height: u32,
    },
    #[error("action {index} ({action}): unknown key {key:?}; expected a pyautogui key name (enter, ctrl, shift, alt, tab, f1, pageup, a, …)")]
    UnknownKey {
        index: usize,
        action: &'static str,
        key: String,
    },
    #[error("action {index} ({action}): {message}")]
    Invalid {
        index: usize,
        action: &'static str,
        message: String,
    },
    #[error("action {index} ({action}) failed in XTest: {message}")]
    Inject {
        index: usize,
        action: &'static str,
        message: String,
    },
    #[error("the input thread is gone")]
    ThreadGone,
}

/// The input focus and what is under the pointer, as top-level windows
/// (children of the root: the window manager's frames).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FocusState {
    /// The focus window itself (0: none, 1: pointer root).
    pub focus: Window,
    pub focus_top: Window,
    /// 0 when the pointer is over the bare root window.
    pub pointer_top: Window,
}

impl FocusState {
    /// Whether the keyboard goes where the pointer is.
    fn follows_pointer(&self) -> bool {
        self.pointer_top == 0 || self.focus_top == self.pointer_top
    }
}

/// A second connection to the display, only for reading the focus.
struct FocusWatch {
    conn: RustConnection,
    root: Window,
    /// None when the window manager does not support the request.
    barrier: Option<WmBarrier>,
}

/// Where each character is on the keyboard, as the X server's keyboard
/// mapping had it when the injector started (before enigo bound any spare
/// keycode).
#[derive(Debug, Default)]
pub struct KeyTable {
    /// keysym -> (keycode, on the second level: needs Shift).
    keys: std::collections::HashMap<u32, (u8, bool)>,
    /// The keycode of Shift_L (or Shift_R).
    shift: Option<u8>,
}

const SHIFT_L: u32 = 0xffe1;
const SHIFT_R: u32 = 0xffe2;

impl KeyTable {
    /// Builds the table from a core keyboard mapping: `keysyms` holds
    /// `per_keycode` keysyms for each keycode from `min_keycode` on. Only the
    /// first two columns (group 1, levels 1 and 2) are used; the first key
    /// found for a keysym wins, and a key's first level wins over another's
    /// second.
    pub fn from_mapping(min_keycode: u8, per_keycode: u8, keysyms: &[u32]) -> KeyTable {
        let per = usize::from(per_keycode.max(1));
        let mut table = KeyTable::default();
        let columns: Vec<(u8, u32, u32)> = keysyms
            .chunks(per)
            .enumerate()
            .filter_map(|(i, k)| {
                let keycode = u8::try_from(usize::from(min_keycode) + i).ok()?;
                let first = k.first().copied().unwrap_or(0);
                let mut second = k.get(1).copied().unwrap_or(0);
                // The core protocol's rule: "K NoSymbol" for a letter K is
                // lower(K), upper(K).
                if second == 0 && (0x61..=0x7a).contains(&first) {
                    second = first - 0x20;
                }
                Some((keycode, first, second))
            })
            .collect();
        for &(keycode, first, _) in &columns {
            if first != 0 {
                table.keys.entry(first).or_insert((keycode, false));
            }
        }
        for &(keycode, first, second) in &columns {
            if second != 0 && second != first {
                table.keys.entry(second).or_insert((keycode, true));
            }
        }
        table.shift = [SHIFT_L, SHIFT_R]
            .iter()
            .find_map(|s| table.keys.get(s).filter(|(_, shifted)| !shifted))
            .map(|(k, _)| *k);
        table
    }

    /// Reads the server's keyboard mapping.
    fn read(conn: &RustConnection) -> Result<KeyTable, x11rb::errors::ReplyError> {
        let (min, max) = (conn.setup().min_keycode, conn.setup().max_keycode);
        let reply = conn
            .get_keyboard_mapping(min, max.saturating_sub(min).saturating_add(1))?
            .reply()?;
        Ok(KeyTable::from_mapping(
            min,
            reply.keysyms_per_keycode,
            &reply.keysyms,
        ))
    }

    /// The key for `c` and whether it needs Shift; None when the keyboard
    /// has no such key (or a second-level one and no Shift key).
    pub fn key_for(&self, c: char) -> Option<(u8, bool)> {
        let cp = u32::from(c);
        // Latin-1 keysyms are the code point; the rest are 0x01000000 + it.
        let sym = if (0x20..=0x7e).contains(&cp) || (0xa0..=0xff).contains(&cp) {
            cp
        } else {
            0x0100_0000 + cp
        };
        let key = *self.keys.get(&sym)?;
        (!key.1 || self.shift.is_some()).then_some(key)
    }
}

/// An unmapped window of the watch's own, and the atoms of the EWMH
/// request the window manager answers on it.
struct WmBarrier {
    window: Window,
    request: Atom,
    extents: Atom,
}

impl FocusWatch {
    fn connect(display: &str) -> Result<FocusWatch, String> {
        let (conn, screen) = x11rb::connect(Some(display)).map_err(|e| e.to_string())?;
        let root = conn
            .setup()
            .roots
            .get(screen)
            .map(|s| s.root)
            .ok_or_else(|| format!("display {display:?} has no screen {screen}"))?;
        let barrier = match WmBarrier::create(&conn, root) {
            Ok(b) => b,
            Err(e) => {
                tracing::warn!("no window-manager barrier for clicks: {e}");
                None
            }
        };
        if barrier.is_none() {
            tracing::info!(
                "the window manager does not support _NET_REQUEST_FRAME_EXTENTS: clicks wait for a still focus only"
            );
        }
        Ok(FocusWatch {
            conn,
            root,
            barrier,
        })
    }

    /// Asks the window manager for the frame extents of the barrier window
    /// and waits for its answer until `deadline`. True when it answered (so
    /// it has handled every event before the request), false at the
    /// deadline or without a barrier.
    fn wm_barrier(&self, deadline: Instant) -> Result<bool, ReplyOrIdError> {
        let Some(b) = &self.barrier else {
            return Ok(false);
        };
        // Answers to earlier requests that came after their deadline.
        while self.conn.poll_for_event()?.is_some() {}
        let event = ClientMessageEvent::new(32, b.window, b.request, [0u32; 5]);
        self.conn.send_event(
            false,
            self.root,
            EventMask::SUBSTRUCTURE_REDIRECT | EventMask::SUBSTRUCTURE_NOTIFY,
            event,
        )?;
        self.conn.flush()?;
        loop {
            while let Some(e) = self.conn.poll_for_event()? {
                if let Event::PropertyNotify(p) = e {
                    if p.window == b.window && p.atom == b.extents {
                        return Ok(true);
                    }
                }
            }
            if Instant::now() >= deadline {
                return Ok(false);
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// One round trip for the focus, one for the pointer, and one per level
    /// from the focus window up to its top-level window.
    fn read(&self) -> Result<FocusState, x11rb::errors::ReplyError> {
        let focus = self.conn.get_input_focus()?.reply()?.focus;
        let pointer_top = self.conn.query_pointer(self.root)?.reply()?.child;
        Ok(FocusState {
            focus,
            focus_top: self.top_of(focus)?,
            pointer_top,
        })
    }

    fn top_of(&self, mut w: Window) -> Result<Window, x11rb::errors::ReplyError> {
        if w <= 1 {
            return Ok(w);
        }
        // Deeper than any real tree: a loop guard only.
        for _ in 0..64 {
            let tree = self.conn.query_tree(w)?.reply()?;
            if tree.parent == self.root || tree.parent == 0 {
                return Ok(w);
            }
            w = tree.parent;
        }
        Ok(w)
    }

    /// Waits until the X server has run the last action and the focus is
    /// still (see the module doc). `last` is the state after the previous
    /// wait: between non-click actions that left it unchanged there is
    /// nothing to wait for.
    fn settle(
        &self,
        after_click: bool,
        last: Option<FocusState>,
        warnings: &mut Vec<String>,
    ) -> Result<FocusState, ReplyOrIdError> {
        let mut prev = self.read()?;
        // The fast path: a click into the window that has the focus (or on
        // the bare desktop), or an action that moved nothing.
        if (after_click && prev.follows_pointer()) || (!after_click && last == Some(prev)) {
            return Ok(prev);
        }
        if after_click && self.barrier.is_some() {
            let t = Instant::now();
            if !self.wm_barrier(t + WM_CAP)? {
                warnings.push(format!(
                    "the window manager did not answer within {WM_CAP:?} after a click; keys that follow may go to the window that had the focus"
                ));
            }
            // Then the same still-focus wait as below: the application may
            // still move the focus inside its window (two reads alike).
            prev = self.read()?;
        }
        let start = Instant::now();
        let mut still_since = Instant::now();
        while start.elapsed() < FOCUS_CAP {
            std::thread::sleep(FOCUS_POLL);
            let cur = self.read()?;
            if cur != prev {
                still_since = Instant::now();
            } else if !after_click || cur.follows_pointer() || still_since.elapsed() >= FOCUS_STILL
            {
                return Ok(cur);
            }
            prev = cur;
        }
        Ok(prev)
    }
}

impl WmBarrier {
    /// The barrier window, or None when the window manager's
    /// `_NET_SUPPORTED` does not list `_NET_REQUEST_FRAME_EXTENTS`.
    fn create(conn: &RustConnection, root: Window) -> Result<Option<WmBarrier>, ReplyOrIdError> {
        let atom = |name: &[u8]| -> Result<Atom, ReplyOrIdError> {
            Ok(conn.intern_atom(false, name)?.reply()?.atom)
        };
        let supported = atom(b"_NET_SUPPORTED")?;
        let request = atom(b"_NET_REQUEST_FRAME_EXTENTS")?;
        let extents = atom(b"_NET_FRAME_EXTENTS")?;
        let list = conn
            .get_property(false, root, supported, AtomEnum::ATOM, 0, 4096)?
            .reply()?;
        if !list
            .value32()
            .is_some_and(|mut atoms| atoms.any(|a| a == request))
        {
            return Ok(None);
        }
        let window = conn.generate_id()?;
        conn.create_window(
            x11rb::COPY_DEPTH_FROM_PARENT,
            window,
            root,
            -1,
            -1,
            1,
            1,
            0,
            WindowClass::INPUT_OUTPUT,
            x11rb::COPY_FROM_PARENT,
            &CreateWindowAux::new().event_mask(EventMask::PROPERTY_CHANGE),
        )?;
        conn.flush()?;
        Ok(Some(WmBarrier {
            window,
            request,
            extents,
        }))
    }
}

/// What a batch did.
#[derive(Debug, Clone)]
pub struct BatchOutcome {
    pub executed: usize,
    /// "DONE" or "FAIL" when the batch stopped at one.
    pub terminal: Option<String>,
    pub elapsed: Duration,
    /// What went oddly without failing (the focus moving while typing).
    pub warnings: Vec<String>,
    /// Time spent waiting for the X server and the focus.
    pub focus_wait: Duration,
}

type Job = (Vec<Action>, mpsc::Sender<Result<BatchOutcome, InputError>>);

/// Handle to the injector thread; cheap to clone.
#[derive(Clone, Debug)]
pub struct Injector {
    tx: mpsc::Sender<Job>,
    screen: (u32, u32),
}

/// Seconds a WAIT without a duration pauses.
pub const DEFAULT_WAIT_S: f64 = 1.0;
/// Longest pause one WAIT, sleep or interval may ask for.
pub const MAX_WAIT_S: f64 = 60.0;

impl Injector {
    /// Starts the injector thread on `display`. `delay_ms` is enigo's XTest
    /// delay per event (its default of 12 ms makes a click take ~25 ms).
    pub fn start(display: &str, screen: (u32, u32), delay_ms: u32) -> Result<Injector, InputError> {
        let (tx, rx) = mpsc::channel::<Job>();
        let (ready_tx, ready_rx) = mpsc::channel();
        let settings = Settings {
            linux_delay: delay_ms,
            x11_display: Some(display.to_string()),
            release_keys_when_dropped: true,
            ..Settings::default()
        };
        let name = display.to_string();
        let display = display.to_string();
        std::thread::Builder::new()
            .name("xtest-injector".into())
            .spawn(move || {
                let started = Enigo::new(&settings)
                    .map_err(|e| e.to_string())
                    .and_then(|e| Ok((e, FocusWatch::connect(&display)?)));
                let (mut enigo, watch) = match started {
                    Ok(s) => {
                        let _ = ready_tx.send(Ok(()));
                        s
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                let keys = KeyTable::read(&watch.conn).unwrap_or_else(|e| {
                    tracing::warn!(
                        "cannot read the keyboard mapping ({e}): every character is typed through spare keycodes"
                    );
                    KeyTable::default()
                });
                let mut watch = Some(watch);
                for (actions, reply) in rx {
                    let _ = reply.send(run_batch(&mut enigo, &keys, &mut watch, &actions));
                }
            })
            .map_err(|e| InputError::Connect {
                display: name.clone(),
                message: e.to_string(),
            })?;
        match ready_rx.recv() {
            Ok(Ok(())) => Ok(Injector { tx, screen }),
            Ok(Err(message)) => Err(InputError::Connect {
                display: name,
                message,
            }),
            Err(_) => Err(InputError::ThreadGone),
        }
    }

    pub fn screen(&self) -> (u32, u32) {
        self.screen
    }

    /// Validates then runs `actions` in order; blocks the caller (use
    /// `spawn_blocking` from async code).
    pub fn run(&self, actions: Vec<Action>) -> Result<BatchOutcome, InputError> {
        validate(&actions, self.screen)?;
        let (tx, rx) = mpsc::channel();
        self.tx
            .send((actions, tx))
            .map_err(|_| InputError::ThreadGone)?;
        rx.recv().map_err(|_| InputError::ThreadGone)?
    }
}

/// Checks every action of a batch without touching the screen.
pub fn validate(actions: &[Action], (width, height): (u32, u32)) -> Result<(), InputError> {
    for (index, a) in actions.iter().enumerate() {
        let action = a.action_type();
        if let Some((x, y)) = a.point() {
            if !(x >= 0.0 && y >= 0.0 && x < f64::from(width) && y < f64::from(height)) {
                return Err(InputError::OffScreen {
                    index,
                    action,
                    x,
                    y,
                    width,
                    height,
                });
            }
        }
        // Half-given coordinates would silently click where the pointer is.
        if let Action::Click { x, y, .. }
        | Action::RightClick { x, y }
        | Action::DoubleClick { x, y }
        | Action::Scroll { x, y, .. } = a
        {
            if x.is_some() != y.is_some() {
                return Err(InputError::Invalid {
                    index,
                    action,
                    message: "give both x and y, or neither".into(),
                });
            }
        }
        let keys: Vec<&str> = match a {
            Action::Press { key, .. } | Action::KeyDown { key } | Action::KeyUp { key } => {
                vec![key.as_str()]
            }
            Action::Hotkey { keys } => keys.iter().map(String::as_str).collect(),
            _ => vec![],
        };
        for key in keys {
            if key_of(key).is_none() {
                return Err(InputError::UnknownKey {
                    index,
                    action,
                    key: key.to_string(),
                });
            }
        }
        let secs = match a {
            Action::Wait { seconds } => *seconds,
            Action::Typing { interval, .. } | Action::Press { interval, .. } => *interval,
            _ => None,
        };
        if let Some(s) = secs {
            if !(0.0..=MAX_WAIT_S).contains(&s) {
                return Err(InputError::Invalid {
                    index,
                    action,
                    message: format!("duration {s} s is outside 0..={MAX_WAIT_S} s"),
                });
            }
        }
    }
    Ok(())
}

fn run_batch(
    enigo: &mut Enigo,
    table: &KeyTable,
    watch: &mut Option<FocusWatch>,
    actions: &[Action],
) -> Result<BatchOutcome, InputError> {
    let t = Instant::now();
    let mut warnings = Vec::new();
    let mut focus_wait = Duration::ZERO;
    let mut last: Option<FocusState> = None;
    let lost = |watch: &mut Option<FocusWatch>, warnings: &mut Vec<String>, e: String| {
        // Input still works without the second connection; only the waits go.
        tracing::warn!("focus tracking stopped: {e}");
        warnings.push(format!("focus tracking stopped: {e}"));
        *watch = None;
    };
    for (index, a) in actions.iter().enumerate() {
        if a.is_terminal() {
            return Ok(BatchOutcome {
                executed: index,
                terminal: Some(a.action_type().to_string()),
                elapsed: t.elapsed(),
                warnings,
                focus_wait,
            });
        }
        let keys = matches!(
            a,
            Action::Typing { .. } | Action::Press { .. } | Action::Hotkey { .. }
        );
        let before = match (keys, watch.as_ref()) {
            (true, Some(w)) => match w.read() {
                Ok(f) => Some(f),
                Err(e) => {
                    lost(watch, &mut warnings, e.to_string());
                    None
                }
            },
            _ => None,
        };
        run_one(enigo, table, a).map_err(|e| InputError::Inject {
            index,
            action: a.action_type(),
            message: e.to_string(),
        })?;
        let click = matches!(
            a,
            Action::Click { .. }
                | Action::RightClick { .. }
                | Action::DoubleClick { .. }
                | Action::MouseUp { .. }
        );
        let more = index + 1 < actions.len();
        if !(click || more || before.is_some()) {
            continue;
        }
        let Some(w) = watch.as_ref() else { continue };
        let waited = Instant::now();
        match w.settle(click, last, &mut warnings) {
            Ok(now) => {
                // A move inside one top-level window (an application
                // focusing a child of its own) sends no key elsewhere.
                if let Some(b) = before.filter(|b| b.focus_top != now.focus_top) {
                    warnings.push(format!(
                        "action {index} ({}): the input focus moved from window {:#x} to {:#x} while it ran; keys may have gone to either",
                        a.action_type(),
                        b.focus,
                        now.focus
                    ));
                }
                last = Some(now);
            }
            Err(e) => lost(watch, &mut warnings, e.to_string()),
        }
        focus_wait += waited.elapsed();
    }
    Ok(BatchOutcome {
        executed: actions.len(),
        terminal: None,
        elapsed: t.elapsed(),
        warnings,
        focus_wait,
    })
}

fn button(b: Button) -> enigo::Button {
    match b {
        Button::Left => enigo::Button::Left,
        Button::Middle => enigo::Button::Middle,
        Button::Right => enigo::Button::Right,
    }
}

fn move_to(enigo: &mut Enigo, x: f64, y: f64) -> enigo::InputResult<()> {
    enigo.move_mouse(x.round() as i32, y.round() as i32, Coordinate::Abs)
}

fn click(
    enigo: &mut Enigo,
    b: Button,
    x: Option<f64>,
    y: Option<f64>,
    n: u32,
) -> enigo::InputResult<()> {
    if let (Some(x), Some(y)) = (x, y) {
        move_to(enigo, x, y)?;
    }
    for _ in 0..n {
        enigo.button(button(b), Direction::Click)?;
    }
    Ok(())
}

fn sleep_s(s: Option<f64>) {
    if let Some(s) = s {
        if s > 0.0 {
            std::thread::sleep(Duration::from_secs_f64(s.min(MAX_WAIT_S)));
        }
    }
}

fn key(enigo: &mut Enigo, name: &str, dir: Direction) -> enigo::InputResult<()> {
    // validate() checked every name before the batch started.
    match key_of(name) {
        Some(k) => enigo.key(k, dir),
        None => Err(enigo::InputError::InvalidInput("unknown key")),
    }
}

fn run_one(enigo: &mut Enigo, keys: &KeyTable, a: &Action) -> enigo::InputResult<()> {
    match a {
        Action::MoveTo { x, y } => move_to(enigo, *x, *y),
        Action::Click {
            button,
            x,
            y,
            num_clicks,
        } => click(enigo, *button, *x, *y, *num_clicks),
        Action::RightClick { x, y } => click(enigo, Button::Right, *x, *y, 1),
        Action::DoubleClick { x, y } => click(enigo, Button::Left, *x, *y, 2),
        Action::MouseDown { button: b } => enigo.button(button(*b), Direction::Press),
        Action::MouseUp { button: b } => enigo.button(button(*b), Direction::Release),
        Action::DragTo { x, y, button: b } => {
            let (sx, sy) = enigo.location()?;
            enigo.button(button(*b), Direction::Press)?;
            // Intermediate motion events: toolkits start a drag only after the
            // pointer has moved a few pixels with the button held.
            const STEPS: i32 = 8;
            for i in 1..=STEPS {
                let px = f64::from(sx) + (x - f64::from(sx)) * f64::from(i) / f64::from(STEPS);
                let py = f64::from(sy) + (y - f64::from(sy)) * f64::from(i) / f64::from(STEPS);
                move_to(enigo, px, py)?;
                std::thread::sleep(Duration::from_millis(5));
            }
            enigo.button(button(*b), Direction::Release)
        }
        Action::Scroll { dx, dy, x, y } => {
            if let (Some(x), Some(y)) = (x, y) {
                move_to(enigo, *x, *y)?;
            }
            // pyautogui: dy > 0 scrolls up; enigo: positive scrolls down.
            if *dy != 0 {
                enigo.scroll(-dy, Axis::Vertical)?;
            }
            if *dx != 0 {
                enigo.scroll(*dx, Axis::Horizontal)?;
            }
            Ok(())
        }
        Action::Typing { text, interval } => match interval {
            Some(i) if *i > 0.0 => {
                let mut buf = [0u8; 4];
                for (n, c) in text.chars().enumerate() {
                    if n > 0 {
                        sleep_s(Some(*i));
                    }
                    type_text(enigo, keys, c.encode_utf8(&mut buf))?;
                }
                Ok(())
            }
            _ => type_text(enigo, keys, text),
        },
        Action::Press {
            key: k,
            presses,
            interval,
        } => {
            for n in 0..*presses {
                if n > 0 {
                    sleep_s(*interval);
                }
                press(enigo, keys, k)?;
            }
            Ok(())
        }
        Action::Hotkey { keys } => {
            for k in keys {
                key(enigo, k, Direction::Press)?;
            }
            for k in keys.iter().rev() {
                key(enigo, k, Direction::Release)?;
            }
            Ok(())
        }
        Action::KeyDown { key: k } => key(enigo, k, Direction::Press),
        Action::KeyUp { key: k } => key(enigo, k, Direction::Release),
        Action::Wait { seconds } => {
            sleep_s(Some(seconds.unwrap_or(DEFAULT_WAIT_S)));
            Ok(())
        }
        Action::Done | Action::Fail => Ok(()),
    }
}

/// One press of a pyautogui key name. A single printable character is
/// typed as pyautogui types it (`press('A')` gives "A", `press('?')` "?":
/// with Shift where the keyboard needs it); named keys are pressed as they
/// are.
fn press(enigo: &mut Enigo, keys: &KeyTable, name: &str) -> enigo::InputResult<()> {
    let mut chars = name.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) if !c.is_control() && c != ' ' => {
            let mut buf = [0u8; 4];
            type_text(enigo, keys, c.encode_utf8(&mut buf))
        }
        _ => key(enigo, name, Direction::Click),
    }
}

/// Types text: newlines and tabs as Return and Tab key presses, which every
/// toolkit understands; every character the keyboard has as its key (with
/// Shift for a second-level one); the rest through enigo's remapped spare
/// keycodes (see the module doc).
fn type_text(enigo: &mut Enigo, keys: &KeyTable, text: &str) -> enigo::InputResult<()> {
    let mut run = String::new();
    let flush = |enigo: &mut Enigo, run: &mut String| -> enigo::InputResult<()> {
        if !run.is_empty() {
            enigo.text(run)?;
            run.clear();
        }
        Ok(())
    };
    for c in text.chars() {
        let special = match c {
            '\n' | '\r' => Some(enigo::Key::Other(0xff0d)),
            '\t' => Some(enigo::Key::Other(0xff09)),
            _ => None,
        };
        if let Some(k) = special {
            flush(enigo, &mut run)?;
            enigo.key(k, Direction::Click)?;
            continue;
        }
        match (keys.key_for(c), keys.shift) {
            (Some((keycode, false)), _) => {
                flush(enigo, &mut run)?;
                enigo.raw(keycode.into(), Direction::Click)?;
            }
            (Some((keycode, true)), Some(shift)) => {
                flush(enigo, &mut run)?;
                enigo.raw(shift.into(), Direction::Press)?;
                let typed = enigo.raw(keycode.into(), Direction::Click);
                enigo.raw(shift.into(), Direction::Release)?;
                typed?;
            }
            _ => run.push(c),
        }
    }
    flush(enigo, &mut run)
}

/// Maps a pyautogui key name (case-insensitive) to an enigo key: named keys
/// to X keysyms, single characters to themselves.
pub fn key_of(name: &str) -> Option<enigo::Key> {
    let mut chars = name.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        return Some(match c {
            '\n' | '\r' => enigo::Key::Other(0xff0d),
            '\t' => enigo::Key::Other(0xff09),
            ' ' => enigo::Key::Other(0x20),
            // Letters as lowercase keysyms: "ctrl"+"A" means the A key.
            c if c.is_ascii_uppercase() => enigo::Key::Unicode(c.to_ascii_lowercase()),
            c => enigo::Key::Unicode(c),
        });
    }
    keysym(&name.to_ascii_lowercase()).map(enigo::Key::Other)
}

/// X keysyms of pyautogui's named keys (its KEYBOARD_KEYS list).
fn keysym(name: &str) -> Option<u32> {
    let sym = match name {
        "enter" | "return" => 0xff0d,
        "tab" => 0xff09,
        "space" => 0x20,
        "backspace" => 0xff08,
        "esc" | "escape" => 0xff1b,
        "del" | "delete" => 0xffff,
        "insert" => 0xff63,
        "home" => 0xff50,
        "end" => 0xff57,
        "left" => 0xff51,
        "up" => 0xff52,
        "right" => 0xff53,
        "down" => 0xff54,
        "pageup" | "pgup" | "prior" => 0xff55,
        "pagedown" | "pgdn" | "next" => 0xff56,
        "shift" | "shiftleft" => 0xffe1,
        "shiftright" => 0xffe2,
        "ctrl" | "ctrlleft" | "control" => 0xffe3,
        "ctrlright" => 0xffe4,
        "alt" | "altleft" | "option" | "optionleft" => 0xffe9,
        "altright" | "optionright" => 0xffea,
        "win" | "winleft" | "super" | "command" | "cmd" | "meta" => 0xffeb,
        "winright" => 0xffec,
        "capslock" => 0xffe5,
        "numlock" => 0xff7f,
        "scrolllock" => 0xff14,
        "pause" => 0xff13,
        "print" | "printscreen" | "prntscrn" | "prtsc" | "prtscr" => 0xff61,
        "apps" | "menu" => 0xff67,
        "help" => 0xff6a,
        "select" => 0xff60,
        "execute" => 0xff62,
        "clear" => 0xff0b,
        "modechange" => 0xff7e,
        "add" => 0xffab,
        "subtract" => 0xffad,
        "multiply" => 0xffaa,
        "divide" => 0xffaf,
        "decimal" => 0xffae,
        "separator" => 0xffac,
        // X has no Accept key; Execute is the nearest (pyautogui sends nothing).
        "accept" => 0xff62,
        "convert" => 0xff23,
        "nonconvert" => 0xff22,
        "kanji" => 0xff21,
        "kana" => 0xff2d,
        "hangul" | "hanguel" => 0xff31,
        "hanja" => 0xff34,
        "junja" => 0xff38,
        "final" => 0xff2c,
        "yen" => 0xa5,
        "volumeup" => 0x1008ff13,
        "volumedown" => 0x1008ff11,
        "volumemute" => 0x1008ff12,
        "playpause" => 0x1008ff14,
        "stop" => 0x1008ff15,
        "prevtrack" => 0x1008ff16,
        "nexttrack" => 0x1008ff17,
        "browserback" => 0x1008ff26,
        "browserforward" => 0x1008ff27,
        "browserrefresh" => 0x1008ff29,
        "browsersearch" => 0x1008ff1b,
        "browserhome" => 0x1008ff18,
        "browserfavorites" => 0x1008ff30,
        "browserstop" => 0x1008ff28,
        "launchmail" => 0x1008ff19,
        "launchmediaselect" => 0x1008ff32,
        "launchapp1" => 0x1008ff40,
        "launchapp2" => 0x1008ff41,
        "sleep" => 0x1008ff2f,
        "fn" => 0x1008ff2b,
        _ => {
            if let Some(n) = name.strip_prefix("num").and_then(|d| d.parse::<u32>().ok()) {
                return (n <= 9).then_some(0xffb0 + n);
            }
            if let Some(n) = name.strip_prefix('f').and_then(|d| d.parse::<u32>().ok()) {
                return (1..=24).contains(&n).then_some(0xffbe + n - 1);
            }
            return None;
        }
    };
    Some(sym)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_table_finds_first_and_second_levels() {
        // Four keysyms per keycode from keycode 10: "1 !", "a" (the
        // core rule makes its second level "A"), Shift_L, a keypad key, and
        // a second "1" on another key, which loses to the first.
        let syms = [
            0x31, 0x21, 0, 0, //
            0x61, 0, 0, 0, //
            0xffe1, 0, 0, 0, //
            0xffb1, 0x31, 0, 0,
        ];
        let t = KeyTable::from_mapping(10, 4, &syms);
        assert_eq!(t.shift, Some(12));
        assert_eq!(t.key_for('1'), Some((10, false)));
        assert_eq!(t.key_for('!'), Some((10, true)));
        assert_eq!(t.key_for('a'), Some((11, false)));
        assert_eq!(t.key_for('A'), Some((11, true)));
        assert_eq!(t.key_for('é'), None);
        // Without a Shift key, second-level characters are not on the
        // keyboard.
        let t = KeyTable::from_mapping(10, 4, &syms[..8]);
        assert_eq!(t.key_for('A'), None);
        assert_eq!(t.key_for('a'), Some((11, false)));
        // Non-Latin-1 characters are keysym 0x01000000 + code point.
        let t = KeyTable::from_mapping(8, 1, &[0x0100_20ac]);
        assert_eq!(t.key_for('€'), Some((8, false)));
    }

    #[test]
    fn maps_pyautogui_key_names() {
        assert!(matches!(key_of("enter"), Some(enigo::Key::Other(0xff0d))));
        assert!(matches!(key_of("Ctrl"), Some(enigo::Key::Other(0xffe3))));
        assert!(matches!(key_of("f12"), Some(enigo::Key::Other(0xffc9))));
        assert!(matches!(key_of("num7"), Some(enigo::Key::Other(0xffb7))));
        assert!(matches!(key_of("a"), Some(enigo::Key::Unicode('a'))));
        assert!(matches!(key_of("S"), Some(enigo::Key::Unicode('s'))));
        assert!(matches!(key_of("é"), Some(enigo::Key::Unicode('é'))));
        assert!(key_of("f25").is_none());
        assert!(key_of("hyperdrive").is_none());
        assert!(key_of("").is_none());
    }

    #[test]
    fn every_osworld_key_name_maps() {
        // OSWorld's KEYBOARD_KEYS, the names its computer_13 space allows.
        let names = "accept add alt altleft altright apps backspace browserback browserfavorites \
            browserforward browserhome browserrefresh browsersearch browserstop capslock clear convert \
            ctrl ctrlleft ctrlright decimal del delete divide down end enter esc escape execute f1 f10 \
            f11 f12 f13 f14 f15 f16 f17 f18 f19 f2 f20 f21 f22 f23 f24 f3 f4 f5 f6 f7 f8 f9 final fn \
            hanguel hangul hanja help home insert junja kana kanji launchapp1 launchapp2 launchmail \
            launchmediaselect left modechange multiply nexttrack nonconvert num0 num1 num2 num3 num4 \
            num5 num6 num7 num8 num9 numlock pagedown pageup pause pgdn pgup playpause prevtrack print \
            printscreen prntscrn prtsc prtscr return right scrolllock select separator shift shiftleft \
            shiftright sleep stop subtract tab up volumedown volumemute volumeup win winleft winright \
            yen command option optionleft optionright";
        for n in names.split_whitespace() {
            assert!(key_of(n).is_some(), "{n}");
        }
    }

    #[test]
    fn validation_names_index_and_reason() {
        let screen = (1920, 1080);
        let off = vec![
            Action::MoveTo { x: 1.0, y: 1.0 },
            Action::Click {
                button: Button::Left,
                x: Some(1920.0),
                y: Some(5.0),
                num_clicks: 1,
            },
        ];
        let e = validate(&off, screen).unwrap_err().to_string();
        assert!(
            e.contains("action 1 (CLICK)") && e.contains("off the 1920x1080"),
            "{e}"
        );
        let bad_key = vec![Action::Hotkey {
            keys: vec!["ctrl".into(), "hyper".into()],
        }];
        let e = validate(&bad_key, screen).unwrap_err().to_string();
        assert!(e.contains("unknown key \"hyper\""), "{e}");
        let half = vec![Action::Click {
            button: Button::Left,
            x: Some(3.0),
            y: None,
            num_clicks: 1,
        }];
        assert!(validate(&half, screen).is_err());
        let long = vec![Action::Wait {
            seconds: Some(600.0),
        }];
        assert!(validate(&long, screen).is_err());
        let nan = vec![Action::MoveTo {
            x: f64::NAN,
            y: 1.0,
        }];
        assert!(validate(&nan, screen).is_err());
    }
}
