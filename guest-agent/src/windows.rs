//! EWMH window list, activate and close, spoken directly to the X server
//! through x11rb (no `wmctrl` or `xdotool` needed).
//!
//! The API is blocking; the server calls it through `spawn_blocking`.
//! [`Windows`] holds one connection and the interned atoms; it is `Send +
//! Sync`, so one instance may be shared.
//!
//! - [`Windows::list`] reads `_NET_CLIENT_LIST` and, per window, the title
//!   (`_NET_WM_NAME` as UTF-8, falling back to `WM_NAME`), `WM_CLASS`
//!   (instance and class), `_NET_WM_PID` and the client area in root
//!   coordinates (as `xdotool getwindowgeometry` reports it). All requests
//!   are pipelined: one round trip for any number of windows. A window that
//!   vanishes while it is being read is left out, not an error.
//! - [`Windows::find`] follows OSWorld's `wmctrl -a/-c` matching: a title
//!   substring (case-insensitive), or the whole title (case-sensitive) with
//!   `exact` (`-F`); a class (`-x`) matches `instance.class`
//!   case-insensitively as a substring, or exactly the instance, the class or
//!   `instance.class` with `exact`. With both, both must match.
//! - [`Windows::activate`] switches to the window's desktop when needed,
//!   sends `_NET_ACTIVE_WINDOW` as a pager would (source indication 2),
//!   raises it and polls until the window manager reports it active.
//! - [`Windows::close`] sends `_NET_CLOSE_WINDOW` (the application may still
//!   ask to save first).

use protocol::api::{Rect, WindowInfo, WindowMatch};
use std::time::{Duration, Instant};
use x11rb::connection::Connection;
use x11rb::errors::{ConnectError, ConnectionError, ReplyError};
use x11rb::protocol::xproto::{
    AtomEnum, ClientMessageEvent, ConfigureWindowAux, ConnectionExt as _, EventMask, StackMode,
    Window,
};
use x11rb::rust_connection::RustConnection;

/// How long [`Windows::activate`] waits for `_NET_ACTIVE_WINDOW` to follow.
const ACTIVATE_WAIT: Duration = Duration::from_secs(1);
/// Poll interval of [`wait_for`].
const WAIT_POLL: Duration = Duration::from_millis(50);
/// Longest title read, in 32-bit units (16 KiB).
const TEXT_LEN: u32 = 4096;

x11rb::atom_manager! {
    Atoms: AtomsCookie {
        _NET_CLIENT_LIST,
        _NET_ACTIVE_WINDOW,
        _NET_CLOSE_WINDOW,
        _NET_WM_NAME,
        _NET_WM_PID,
        _NET_WM_DESKTOP,
        _NET_CURRENT_DESKTOP,
        UTF8_STRING,
    }
}

/// What went wrong talking to the X server or its window manager.
#[derive(Debug, thiserror::Error)]
pub enum WindowError {
    #[error("cannot connect to X display {display}: {source}")]
    Connect {
        display: String,
        #[source]
        source: ConnectError,
    },
    #[error("X request {request} on display {display} failed: {source}")]
    Request {
        display: String,
        request: &'static str,
        #[source]
        source: ReplyError,
    },
    #[error(
        "no EWMH window manager on display {display}: the root window has no _NET_CLIENT_LIST"
    )]
    NoWindowManager { display: String },
    #[error("window {id:#x} does not exist on display {display}")]
    NoSuchWindow { display: String, id: u32 },
    #[error("window {id:#x} did not become active on display {display} within {waited_ms} ms (active window: {})", active.map(|a| format!("{a:#x}")).unwrap_or_else(|| "none".into()))]
    NotActivated {
        display: String,
        id: u32,
        active: Option<u32>,
        waited_ms: u64,
    },
    #[error("no window matching {criteria} on display {display} (waited {waited_ms} ms)")]
    NotFound {
        display: String,
        criteria: String,
        waited_ms: u64,
    },
    #[error("a window match needs a title or a class, expected at least one")]
    EmptyMatch,
}

/// A connection to one X display and its window manager.
pub struct Windows {
    conn: RustConnection,
    root: Window,
    screen: usize,
    atoms: Atoms,
    display: String,
}

impl std::fmt::Debug for Windows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Windows")
            .field("display", &self.display)
            .finish_non_exhaustive()
    }
}

/// Whether a reply error is the server's (a window that vanished) rather
/// than the connection's.
fn is_x_error(e: &ReplyError) -> bool {
    matches!(e, ReplyError::X11Error(_))
}

/// Latin-1 bytes (WM_NAME of type STRING) as text.
fn latin1(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| b as char).collect()
}

/// Describes a match for error messages.
fn describe(m: &WindowMatch) -> String {
    let mut parts = Vec::new();
    if let Some(t) = &m.title {
        parts.push(if m.exact {
            format!("title == {t:?}")
        } else {
            format!("title containing {t:?}")
        });
    }
    if let Some(c) = &m.class {
        parts.push(if m.exact {
            format!("class == {c:?}")
        } else {
            format!("class containing {c:?}")
        });
    }
    if parts.is_empty() {
        "(nothing)".into()
    } else {
        parts.join(" and ")
    }
}

/// Whether `w` matches `m` (see the module documentation).
pub fn matches(w: &WindowInfo, m: &WindowMatch) -> bool {
    if m.title.is_none() && m.class.is_none() {
        return false;
    }
    if let Some(t) = &m.title {
        let ok = if m.exact {
            w.title == *t
        } else {
            w.title.to_lowercase().contains(&t.to_lowercase())
        };
        if !ok {
            return false;
        }
    }
    if let Some(c) = &m.class {
        let full = format!("{}.{}", w.instance, w.class);
        let ok = if m.exact {
            w.instance == *c || w.class == *c || full == *c
        } else {
            full.to_lowercase().contains(&c.to_lowercase())
        };
        if !ok {
            return false;
        }
    }
    true
}

impl Windows {
    /// Connects to `display` (e.g. `:0`) and interns the EWMH atoms.
    pub fn connect(display: &str) -> Result<Windows, WindowError> {
        let (conn, screen) =
            RustConnection::connect(Some(display)).map_err(|source| WindowError::Connect {
                display: display.to_string(),
                source,
            })?;
        let root = conn.setup().roots[screen].root;
        let atoms = Atoms::new(&conn)
            .map_err(ReplyError::from)
            .and_then(|c| c.reply())
            .map_err(|source| WindowError::Request {
                display: display.to_string(),
                request: "InternAtom",
                source,
            })?;
        Ok(Windows {
            conn,
            root,
            screen,
            atoms,
            display: display.to_string(),
        })
    }

    /// The display this connection is to.
    pub fn display(&self) -> &str {
        &self.display
    }

    fn err(&self, request: &'static str) -> impl Fn(ReplyError) -> WindowError + '_ {
        move |source| WindowError::Request {
            display: self.display.clone(),
            request,
            source,
        }
    }

    fn conn_err(&self, request: &'static str) -> impl Fn(ConnectionError) -> WindowError + '_ {
        move |source| WindowError::Request {
            display: self.display.clone(),
            request,
            source: source.into(),
        }
    }

    /// The screen size in pixels.
    pub fn screen_size(&self) -> (u32, u32) {
        let s = &self.conn.setup().roots[self.screen];
        (u32::from(s.width_in_pixels), u32::from(s.height_in_pixels))
    }

    /// The pointer position on the root window.
    pub fn pointer(&self) -> Result<(i32, i32), WindowError> {
        let r = self
            .conn
            .query_pointer(self.root)
            .map_err(self.conn_err("QueryPointer"))?
            .reply()
            .map_err(self.err("QueryPointer"))?;
        Ok((i32::from(r.root_x), i32::from(r.root_y)))
    }

    /// The root window's `_NET_ACTIVE_WINDOW`, when one is set.
    pub fn active(&self) -> Result<Option<u32>, WindowError> {
        let r = self
            .conn
            .get_property(
                false,
                self.root,
                self.atoms._NET_ACTIVE_WINDOW,
                AtomEnum::WINDOW,
                0,
                1,
            )
            .map_err(self.conn_err("GetProperty(_NET_ACTIVE_WINDOW)"))?
            .reply()
            .map_err(self.err("GetProperty(_NET_ACTIVE_WINDOW)"))?;
        Ok(r.value32().and_then(|mut v| v.next()).filter(|&w| w != 0))
    }

    /// The windows of `_NET_CLIENT_LIST`, in its order (oldest first).
    pub fn list(&self) -> Result<Vec<WindowInfo>, WindowError> {
        let clients = self
            .conn
            .get_property(
                false,
                self.root,
                self.atoms._NET_CLIENT_LIST,
                AtomEnum::WINDOW,
                0,
                u32::MAX / 4,
            )
            .map_err(self.conn_err("GetProperty(_NET_CLIENT_LIST)"))?
            .reply()
            .map_err(self.err("GetProperty(_NET_CLIENT_LIST)"))?;
        if clients.type_ == u32::from(AtomEnum::NONE) {
            return Err(WindowError::NoWindowManager {
                display: self.display.clone(),
            });
        }
        let ids: Vec<Window> = clients.value32().map(|v| v.collect()).unwrap_or_default();
        let active = self.active()?;

        // Send every request first, then read the replies: one round trip.
        let ce = self.conn_err("GetProperty");
        let mut pending = Vec::with_capacity(ids.len());
        for &id in &ids {
            let c = &self.conn;
            let a = &self.atoms;
            pending.push((
                id,
                c.get_property(false, id, a._NET_WM_NAME, a.UTF8_STRING, 0, TEXT_LEN)
                    .map_err(&ce)?,
                c.get_property(false, id, AtomEnum::WM_NAME, AtomEnum::ANY, 0, TEXT_LEN)
                    .map_err(&ce)?,
                c.get_property(false, id, AtomEnum::WM_CLASS, AtomEnum::STRING, 0, 256)
                    .map_err(&ce)?,
                c.get_property(false, id, a._NET_WM_PID, AtomEnum::CARDINAL, 0, 1)
                    .map_err(&ce)?,
                c.get_geometry(id).map_err(self.conn_err("GetGeometry"))?,
                c.translate_coordinates(id, self.root, 0, 0)
                    .map_err(self.conn_err("TranslateCoordinates"))?,
            ));
        }
        let mut out = Vec::with_capacity(ids.len());
        for (id, net_name, wm_name, class, pid, geom, pos) in pending {
            // Read every reply so none is left queued, then decide.
            let replies = (
                net_name.reply(),
                wm_name.reply(),
                class.reply(),
                pid.reply(),
                geom.reply(),
                pos.reply(),
            );
            let (net_name, wm_name, class, pid, geom, pos) = match replies {
                (Ok(a), Ok(b), Ok(c), Ok(d), Ok(e), Ok(f)) => (a, b, c, d, e, f),
                (a, b, c, d, e, f) => {
                    let errors = [a.err(), b.err(), c.err(), d.err(), e.err(), f.err()];
                    // A window destroyed mid-list answers with X errors:
                    // skip it. A broken connection fails the list.
                    if let Some(e) = errors.into_iter().flatten().find(|e| !is_x_error(e)) {
                        return Err(self.err("list")(e));
                    }
                    continue;
                }
            };
            let mut title = String::from_utf8_lossy(&net_name.value).into_owned();
            if title.is_empty() {
                title = if wm_name.type_ == self.atoms.UTF8_STRING {
                    String::from_utf8_lossy(&wm_name.value).into_owned()
                } else {
                    latin1(&wm_name.value)
                };
            }
            let mut parts = class.value.split(|&b| b == 0).map(latin1);
            let instance = parts.next().unwrap_or_default();
            let class = parts.next().unwrap_or_default();
            let pid = pid.value32().and_then(|mut v| v.next()).filter(|&p| p != 0);
            out.push(WindowInfo {
                id,
                title,
                instance,
                class,
                pid,
                rect: Rect {
                    x: i32::from(pos.dst_x),
                    y: i32::from(pos.dst_y),
                    width: i32::from(geom.width),
                    height: i32::from(geom.height),
                },
                active: active == Some(id),
            });
        }
        Ok(out)
    }

    /// The windows that match `m`, in `_NET_CLIENT_LIST` order.
    pub fn find(&self, m: &WindowMatch) -> Result<Vec<WindowInfo>, WindowError> {
        self.find_any(std::slice::from_ref(m))
    }

    /// The windows that match any of `ms`, in `_NET_CLIENT_LIST` order.
    pub fn find_any(&self, ms: &[WindowMatch]) -> Result<Vec<WindowInfo>, WindowError> {
        if ms.is_empty() || ms.iter().any(|m| m.title.is_none() && m.class.is_none()) {
            return Err(WindowError::EmptyMatch);
        }
        Ok(self
            .list()?
            .into_iter()
            .filter(|w| ms.iter().any(|m| matches(w, m)))
            .collect())
    }

    /// Polls every ~50 ms until a window matches `m`; returns the first.
    pub fn wait_for(&self, m: &WindowMatch, timeout: Duration) -> Result<WindowInfo, WindowError> {
        let started = Instant::now();
        loop {
            match self.find(m) {
                Ok(found) if !found.is_empty() => return Ok(found[0].clone()),
                Ok(_) | Err(WindowError::NoWindowManager { .. }) => {}
                Err(e) => return Err(e),
            }
            if started.elapsed() >= timeout {
                return Err(WindowError::NotFound {
                    display: self.display.clone(),
                    criteria: describe(m),
                    waited_ms: started.elapsed().as_millis() as u64,
                });
            }
            std::thread::sleep(WAIT_POLL);
        }
    }

    /// Fails with [`WindowError::NoSuchWindow`] unless `id` exists.
    fn check_exists(&self, id: u32) -> Result<(), WindowError> {
        match self
            .conn
            .get_window_attributes(id)
            .map_err(self.conn_err("GetWindowAttributes"))?
            .reply()
        {
            Ok(_) => Ok(()),
            Err(e) if is_x_error(&e) => Err(WindowError::NoSuchWindow {
                display: self.display.clone(),
                id,
            }),
            Err(e) => Err(self.err("GetWindowAttributes")(e)),
        }
    }

    /// Sends an EWMH client message to the root window.
    fn client_message(&self, window: Window, kind: u32, data: [u32; 5]) -> Result<(), WindowError> {
        let event = ClientMessageEvent::new(32, window, kind, data);
        self.conn
            .send_event(
                false,
                self.root,
                EventMask::SUBSTRUCTURE_REDIRECT | EventMask::SUBSTRUCTURE_NOTIFY,
                event,
            )
            .map_err(self.conn_err("SendEvent"))?
            .check()
            .map_err(self.err("SendEvent"))
    }

    fn cardinal(&self, window: Window, atom: u32) -> Result<Option<u32>, WindowError> {
        let r = self
            .conn
            .get_property(false, window, atom, AtomEnum::CARDINAL, 0, 1)
            .map_err(self.conn_err("GetProperty"))?
            .reply()
            .map_err(self.err("GetProperty"))?;
        Ok(r.value32().and_then(|mut v| v.next()))
    }

    /// Activates window `id` (switching desktops if needed) and waits up to
    /// a second for the window manager to report it in `_NET_ACTIVE_WINDOW`.
    pub fn activate(&self, id: u32) -> Result<(), WindowError> {
        self.check_exists(id)?;
        let a = self.atoms;
        if let (Some(want), Some(current)) = (
            self.cardinal(id, a._NET_WM_DESKTOP)?,
            self.cardinal(self.root, a._NET_CURRENT_DESKTOP)?,
        ) {
            if want != current && want != u32::MAX {
                self.client_message(self.root, a._NET_CURRENT_DESKTOP, [want, 0, 0, 0, 0])?;
            }
        }
        let current = self.active()?.unwrap_or(0);
        // Source indication 2: a pager, which window managers obey without
        // focus-stealing checks; timestamp 0 is CurrentTime.
        self.client_message(id, a._NET_ACTIVE_WINDOW, [2, 0, current, 0, 0])?;
        // Raise too; with a reparenting window manager this becomes a
        // ConfigureRequest it honours. A window gone by now is not an error.
        if let Ok(cookie) = self
            .conn
            .configure_window(id, &ConfigureWindowAux::new().stack_mode(StackMode::ABOVE))
        {
            let _ = cookie.check();
        }
        let started = Instant::now();
        loop {
            let active = self.active()?;
            if active == Some(id) {
                return Ok(());
            }
            if started.elapsed() >= ACTIVATE_WAIT {
                return Err(WindowError::NotActivated {
                    display: self.display.clone(),
                    id,
                    active,
                    waited_ms: started.elapsed().as_millis() as u64,
                });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Asks the window manager to close window `id` (`_NET_CLOSE_WINDOW`).
    /// Returns once the request is sent; the window may take a moment to go,
    /// or stay if the application asks to save first.
    pub fn close(&self, id: u32) -> Result<(), WindowError> {
        self.check_exists(id)?;
        // Timestamp 0, source indication 2 (a pager).
        self.client_message(id, self.atoms._NET_CLOSE_WINDOW, [0, 2, 0, 0, 0])?;
        self.conn.flush().map_err(self.conn_err("Flush"))
    }
}

/// Connects to `display` and polls every ~50 ms until a window matches `m`
/// or `timeout` passes ([`WindowError::NotFound`]).
pub fn wait_for(
    display: &str,
    m: &WindowMatch,
    timeout: Duration,
) -> Result<WindowInfo, WindowError> {
    if m.title.is_none() && m.class.is_none() {
        return Err(WindowError::EmptyMatch);
    }
    Windows::connect(display)?.wait_for(m, timeout)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn win(title: &str, instance: &str, class: &str) -> WindowInfo {
        WindowInfo {
            id: 1,
            title: title.into(),
            instance: instance.into(),
            class: class.into(),
            pid: None,
            rect: Rect {
                x: 0,
                y: 0,
                width: 1,
                height: 1,
            },
            active: false,
        }
    }

    fn by_title(t: &str, exact: bool) -> WindowMatch {
        WindowMatch {
            title: Some(t.into()),
            exact,
            class: None,
            timeout_ms: None,
        }
    }

    fn by_class(c: &str, exact: bool) -> WindowMatch {
        WindowMatch {
            title: None,
            exact,
            class: Some(c.into()),
            timeout_ms: None,
        }
    }

    #[test]
    fn title_matching_follows_wmctrl() {
        let w = win("notes.txt - Mousepad", "mousepad", "Mousepad");
        assert!(matches(&w, &by_title("NOTES", false)));
        assert!(matches(&w, &by_title("mousepad", false)));
        assert!(!matches(&w, &by_title("gedit", false)));
        assert!(matches(&w, &by_title("notes.txt - Mousepad", true)));
        assert!(!matches(&w, &by_title("notes.txt - mousepad", true)));
        assert!(!matches(&w, &by_title("notes.txt", true)));
    }

    #[test]
    fn class_matching_follows_wmctrl_x() {
        let w = win("Untitled", "libreoffice", "libreoffice-calc");
        assert!(matches(&w, &by_class("LibreOffice-Calc", false)));
        assert!(matches(&w, &by_class("office.libre", false)));
        assert!(matches(&w, &by_class("libreoffice", true)));
        assert!(matches(&w, &by_class("libreoffice-calc", true)));
        assert!(matches(&w, &by_class("libreoffice.libreoffice-calc", true)));
        assert!(!matches(&w, &by_class("calc", true)));
        assert!(!matches(&w, &by_class("writer", false)));

        let both = WindowMatch {
            title: Some("untitled".into()),
            exact: false,
            class: Some("calc".into()),
            timeout_ms: None,
        };
        assert!(matches(&w, &both));
        let wrong = WindowMatch {
            title: Some("other".into()),
            ..both
        };
        assert!(!matches(&w, &wrong));
        let empty = WindowMatch {
            title: None,
            exact: false,
            class: None,
            timeout_ms: None,
        };
        assert!(!matches(&w, &empty));
        assert_eq!(describe(&by_title("x", true)), "title == \"x\"");
    }

    #[test]
    fn connect_to_a_missing_display_names_it() {
        let err = Windows::connect(":987").unwrap_err();
        assert!(err.to_string().contains(":987"), "{err}");
        let err = wait_for(
            ":987",
            &WindowMatch {
                title: None,
                exact: false,
                class: None,
                timeout_ms: None,
            },
            Duration::ZERO,
        )
        .unwrap_err();
        assert!(matches!(err, WindowError::EmptyMatch), "{err}");
    }
}
