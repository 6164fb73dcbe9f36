//! The tree cache: what the last walk read about each object, kept up to
//! date by AT-SPI events, so that a walk asks again only about the objects
//! that changed.
//!
//! # What is kept
//! One [`Entry`] per object the last walk fetched, keyed by (bus name,
//! object path): the node without its children, the child references in
//! order, OSWorld's flag and any note. The next walk takes an entry instead
//! of calling the application when nothing says the object changed.
//!
//! # What says an object changed
//! [`Cache::listen`] registers with the AT-SPI registry for the events
//! below (applications emit only what someone registered for) and reads
//! them from the bus:
//!
//! - `object:children-changed`, `state-changed`, `property-change`,
//!   `text-changed`, `attributes-changed`, `bounds-changed`: that object is
//!   fetched again (its own data and its child list; children still listed
//!   keep their entries);
//! - `object:state-changed:showing|visible` and every `window:` event
//!   (create, destroy, activate, deactivate, move, resize, …): the object
//!   and everything below it are fetched again (GTK's `focused` needs an
//!   active window, and nothing tells the focused widget when its window
//!   is deactivated, by a menu for instance);
//! - these rules hold for GTK's own widgets (attribute `toolkit: gtk`);
//!   an event from any other object (LibreOffice's document, cells,
//!   paragraphs) marks its whole window (see `Taken::widen`).
//!
//! And, without an event:
//! - applications (depth 1) and their windows (depth 2) are fetched on
//!   every walk: a hung application is found and cut off as in a fresh
//!   walk (its cached subtree is never served), and a window whose extents
//!   moved is walked again below;
//! - an object that was focused is fetched on every walk (GTK takes the
//!   focus away, when a menu opens for instance, without an event for the
//!   widget that loses it);
//! - any fetched object whose extents differ from its entry's is walked
//!   again below (screen coordinates of descendants move with it);
//! - LibreOffice Calc's spreadsheet (OSWorld's Calc flag: the document and
//!   its table cells) is always fetched, its showing cells scanned afresh;
//! - the whole tree is walked again when the list of applications changed,
//!   when the cache is older than [`MAX_AGE`], when more than
//!   [`MAX_PENDING`] events arrived since the last walk, or when the event
//!   stream failed.
//!
//! The first walk that may use the cache sets it up (`A11y::walk`), so an
//! agent that is never asked for a tree (screenshot-only episodes, health
//! probes) registers for nothing and applications send no events.
//!
//! A walk takes the events that arrived before it started; one arriving
//! during the walk marks its object for the next one.

use super::dbus::{Bus, ObjRef};
use super::walk::Flag;
use futures::StreamExt;
use protocol::a11y::A11yNode;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// A cache older than this is thrown away and the tree walked again.
pub const MAX_AGE: Duration = Duration::from_secs(60);

/// More events than this between two walks: the tree is walked again.
pub const MAX_PENDING: usize = 20_000;

/// The events registered with the registry (`RegisterEvent`).
const REGISTERED: [&str; 7] = [
    "object:children-changed",
    "object:state-changed",
    "object:property-change",
    "object:text-changed",
    "object:attributes-changed",
    "object:bounds-changed",
    "window:",
];

pub type Key = (String, String);

/// What one walk read about one object.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The node, without children.
    pub node: A11yNode,
    pub children: Vec<ObjRef>,
    pub flag: Flag,
    pub notes: Vec<String>,
}

/// What a walk may take from the cache: the entries, and the events since
/// they were read.
#[derive(Default)]
pub struct Taken {
    pub entries: HashMap<Key, Entry>,
    /// Objects to fetch again.
    pub dirty: HashSet<Key>,
    /// Objects to walk again with everything below them.
    pub dirty_below: HashSet<Key>,
    /// The applications the cached walk listed, in order.
    pub apps: Vec<ObjRef>,
}

impl Taken {
    /// Widens what events from objects outside GTK mark: GTK's own widgets
    /// (attribute `toolkit: gtk`) report their changes, LibreOffice's
    /// objects do not always (a paragraph's width changes with no event of
    /// its own), so an event from any other object marks its whole window
    /// (the object under the application) to be walked again.
    fn widen(&mut self) {
        let gtk = |e: &Entry| {
            e.node
                .attributes
                .iter()
                .any(|(k, v)| k == "toolkit" && v == "gtk")
        };
        let apps: HashMap<&str, Key> = self
            .apps
            .iter()
            .map(|(d, p)| (d.as_str(), (d.clone(), p.to_string())))
            .collect();
        let app_keys: HashSet<&Key> = apps.values().collect();
        let mut parent: HashMap<Key, Key> = HashMap::new();
        for (k, e) in &self.entries {
            for (d, p) in &e.children {
                parent.insert((d.clone(), p.to_string()), k.clone());
            }
        }
        let window_of = |k: &Key| -> Option<Key> {
            let mut k = k.clone();
            for _ in 0..super::walk::MAX_DEPTH {
                let up = parent.get(&k)?;
                if app_keys.contains(up) {
                    return Some(k);
                }
                k = up.clone();
            }
            None
        };
        let mut widened: Vec<Key> = Vec::new();
        let mut keep: HashSet<Key> = HashSet::new();
        // An object the cache does not hold shows up through its parent's
        // children-changed; its own events change nothing cached.
        for k in self.dirty.drain() {
            match self.entries.get(&k) {
                Some(e) if gtk(e) => {
                    keep.insert(k);
                }
                Some(_) => widened.push(k),
                None => {}
            }
        }
        self.dirty = keep;
        for k in &self.dirty_below {
            if self.entries.get(k).is_some_and(|e| !gtk(e)) {
                widened.push(k.clone());
            }
        }
        for k in widened {
            let w = if app_keys.contains(&k) {
                k
            } else {
                window_of(&k).unwrap_or(k)
            };
            self.dirty_below.insert(w);
        }
    }
}

#[derive(Default)]
struct State {
    entries: HashMap<Key, Entry>,
    apps: Vec<ObjRef>,
    made: Option<Instant>,
    dirty: HashSet<Key>,
    dirty_below: HashSet<Key>,
    pending: usize,
    /// The event stream broke: walk everything until it works again.
    broken: bool,
    /// Events seen since the start (for the tests and the bench).
    events: u64,
}

/// The cache of one AT-SPI connection; cheap to clone.
#[derive(Clone, Debug)]
pub struct Cache {
    inner: Arc<Inner>,
}

struct Inner {
    state: Mutex<State>,
    /// Stops the listener when the last clone goes.
    _stop: tokio_util::sync::DropGuard,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Cache")
    }
}

impl Cache {
    /// Registers for the events and starts reading them. None when the
    /// registry refuses (the walks are then always fresh).
    pub async fn listen(bus: &Bus, timeout: Duration) -> Option<Cache> {
        let stop = CancellationToken::new();
        let cache = Cache {
            inner: Arc::new(Inner {
                state: Mutex::new(State::default()),
                _stop: stop.clone().drop_guard(),
            }),
        };
        let mut streams = Vec::new();
        for iface in ["org.a11y.atspi.Event.Object", "org.a11y.atspi.Event.Window"] {
            let rule = zbus::MatchRule::builder()
                .msg_type(zbus::message::Type::Signal)
                .interface(iface)
                .ok()?
                .build();
            let stream = tokio::time::timeout(
                timeout,
                zbus::MessageStream::for_match_rule(rule, &bus.conn, Some(MAX_PENDING * 2)),
            )
            .await
            .ok()?;
            match stream {
                Ok(s) => streams.push(s),
                Err(e) => {
                    tracing::warn!("a11y cache off: cannot match AT-SPI events: {e}");
                    return None;
                }
            }
        }
        for event in REGISTERED {
            let r: Result<(), _> = bus
                .call(
                    "org.a11y.atspi.Registry",
                    "/org/a11y/atspi/registry",
                    "org.a11y.atspi.Registry",
                    "RegisterEvent",
                    &(event,),
                    timeout,
                )
                .await;
            if let Err(e) = r {
                tracing::warn!("a11y cache off: the registry refused RegisterEvent({event}): {e}");
                return None;
            }
        }
        let events = futures::stream::select_all(streams);
        let weak = Arc::downgrade(&cache.inner);
        tokio::spawn(async move {
            let mut events = events;
            loop {
                let next = tokio::select! {
                    _ = stop.cancelled() => return,
                    n = events.next() => n,
                };
                let Some(inner) = weak.upgrade() else { return };
                let mut st = inner.state.lock().unwrap_or_else(|e| e.into_inner());
                match next {
                    Some(Ok(msg)) => st.note(&msg),
                    Some(Err(e)) => {
                        tracing::warn!("a11y cache: event stream error: {e}");
                        st.broken = true;
                    }
                    None => {
                        tracing::warn!("a11y cache: the event stream ended");
                        st.broken = true;
                        return;
                    }
                }
            }
        });
        Some(cache)
    }

    /// What the next walk may use, with the events so far; None when it
    /// must walk everything (no cache yet, too old, too many events, a
    /// broken stream).
    pub fn take(&self) -> Option<Taken> {
        let mut st = self.lock();
        let usable = st.made.is_some_and(|t| t.elapsed() < MAX_AGE)
            && st.pending <= MAX_PENDING
            && !st.broken;
        let dirty = std::mem::take(&mut st.dirty);
        let dirty_below = std::mem::take(&mut st.dirty_below);
        st.pending = 0;
        if !usable {
            return None;
        }
        let mut taken = Taken {
            entries: std::mem::take(&mut st.entries),
            dirty,
            dirty_below,
            apps: st.apps.clone(),
        };
        taken.widen();
        Some(taken)
    }

    /// Keeps what a walk read. `full`: the walk read everything (no entry
    /// was taken from the cache), which starts the cache's age again.
    pub fn store(&self, entries: HashMap<Key, Entry>, apps: Vec<ObjRef>, full: bool) {
        let mut st = self.lock();
        st.entries = entries;
        st.apps = apps;
        if full || st.made.is_none() {
            st.made = Some(Instant::now());
        }
    }

    /// Forgets everything: the next walk is a whole one.
    pub fn clear(&self) {
        let mut st = self.lock();
        st.entries.clear();
        st.made = None;
    }

    /// Events read since the start.
    pub fn events(&self) -> u64 {
        self.lock().events
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.inner.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl State {
    fn note(&mut self, msg: &zbus::Message) {
        self.events += 1;
        self.pending += 1;
        let h = msg.header();
        let (Some(sender), Some(path)) = (h.sender(), h.path()) else {
            return;
        };
        let key = (sender.to_string(), path.to_string());
        let iface = h.interface().map(|i| i.to_string()).unwrap_or_default();
        let member = h.member().map(|m| m.to_string()).unwrap_or_default();
        let below = if iface.ends_with(".Window") {
            // Activation too: GTK's `focused` is the widget's focus *and*
            // an active window, and no event tells the focused widget.
            true
        } else if member == "StateChanged" {
            // The first argument is the state's name.
            // (siiva{sv}) since at-spi2-core 2.50, (siiv) before.
            let body = msg.body();
            let kind: Option<String> = body
                .deserialize::<(
                    String,
                    i32,
                    i32,
                    zbus::zvariant::OwnedValue,
                    HashMap<String, zbus::zvariant::OwnedValue>,
                )>()
                .map(|b| b.0)
                .or_else(|_| {
                    body.deserialize::<(String, i32, i32, zbus::zvariant::OwnedValue)>()
                        .map(|b| b.0)
                })
                .ok();
            kind.is_none_or(|k| k == "showing" || k == "visible")
        } else {
            false
        };
        if below {
            self.dirty_below.insert(key);
        } else {
            self.dirty.insert(key);
        }
    }
}
