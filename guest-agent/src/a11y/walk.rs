//! The concurrent walk: many objects fetched at once, each call bounded.
//!
//! Objects are fetched breadth first, up to `concurrency` at a time. Each
//! fetch is two rounds of concurrent calls: first what every object answers
//! (properties, role, state, attributes, interfaces), then only what its
//! interfaces and states call for (extents, text, value, actions, children),
//! so GTK never sees a call on an interface the object lacks; objects with
//! actions take a third round for the action names. The results
//! land in an arena in child order; the tree is assembled at the end from
//! whatever arrived, so a cut walk still gives a consistent tree.
//!
//! An application that stops answering costs one call timeout: its first
//! unanswered call marks it dead, which cancels its other calls in flight
//! and drops its queued objects; the reason names it.

use super::cache::{Cache, Entry, Key, Taken};
use super::dbus::{
    self, Bus, CallError, ObjRef, OrderedDict, IFACE_ACCESSIBLE, IFACE_ACTION, IFACE_COMPONENT,
    IFACE_IMAGE, IFACE_PROPERTIES, IFACE_SELECTION, IFACE_TABLE, IFACE_TEXT, IFACE_VALUE,
    NULL_PATH,
};
use super::{names, A11yError, A11yOptions, Walk, CALL_TIMEOUT};
use futures::future::{join_all, BoxFuture};
use futures::stream::{FuturesUnordered, StreamExt};
use protocol::a11y::{A11yNode, ActionInfo, Extents, ValueInfo};
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use zbus::zvariant::{OwnedObjectPath, OwnedValue};

/// OSWorld's limits: an object at depth 50 (applications are at depth 1) is
/// not expanded, and at most 1024 children are read per object.
pub const MAX_DEPTH: u32 = 50;
pub const MAX_WIDTH: usize = 1024;

/// The Calc table scan (`Walker::calc_cells`) gives up after this many
/// cell probes; OSWorld's loop can make 250 000 when no cell is showing.
pub const MAX_CALC_PROBES: usize = 20_000;

pub const REGISTRY: &str = "org.a11y.atspi.Registry";
pub const ROOT_PATH: &str = "/org/a11y/atspi/accessible/root";

const STATE_SHOWING: u32 = 25;

/// OSWorld's `flag`: set by the first "document spreadsheet" (or the
/// application "Thunderbird") on the way down, inherited below.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Flag {
    None,
    Calc,
    Thunderbird,
}

struct Job {
    slot: usize,
    dest: String,
    path: OwnedObjectPath,
    depth: u32,
    flag: Flag,
    /// Walk this object and everything below it again, whatever the cache
    /// holds.
    fresh: bool,
}

enum Outcome {
    Node {
        node: A11yNode,
        children: Vec<ObjRef>,
        flag: Flag,
        notes: Vec<String>,
    },
    /// An application left out by the `app` filter.
    Filtered,
    /// The object answered with an error (gone, or broken): left out.
    Failed,
    /// The application did not answer in time.
    Timeout,
    /// The walk's deadline came first.
    Deadline,
    /// The bus connection itself failed.
    Bus(zbus::Error),
}

#[derive(Default)]
struct Slot {
    node: Option<A11yNode>,
    children: Vec<usize>,
}

pub(super) struct Walker<'a> {
    bus: &'a Bus,
    opts: &'a A11yOptions,
    deadline: Instant,
    /// One token per application (bus name); cancelled when it stops answering.
    tokens: Mutex<HashMap<String, CancellationToken>>,
    /// The cache to read and write, when the walk uses one.
    cache: Option<&'a Cache>,
}

impl<'a> Walker<'a> {
    pub(super) fn new(bus: &'a Bus, opts: &'a A11yOptions, start: Instant) -> Walker<'a> {
        Walker {
            bus,
            opts,
            deadline: start + opts.timeout,
            tokens: Mutex::new(HashMap::new()),
            cache: None,
        }
    }

    /// Reads and keeps entries in `cache` (unless the walk is filtered to
    /// some applications or asked to be fresh).
    pub(super) fn with_cache(mut self, cache: Option<&'a Cache>) -> Walker<'a> {
        if self.opts.cache && self.opts.app.is_none() {
            self.cache = cache;
        }
        self
    }

    fn token(&self, dest: &str) -> CancellationToken {
        let mut tokens = self.tokens.lock().unwrap_or_else(|e| e.into_inner());
        tokens.entry(dest.to_string()).or_default().clone()
    }

    /// One call to an application: bounded by the call timeout and the walk's
    /// deadline, and cut short when the application is declared dead.
    async fn call<B, R>(
        &self,
        dest: &str,
        path: &str,
        iface: &str,
        method: &str,
        body: &B,
    ) -> Result<R, CallError>
    where
        B: serde::Serialize + zbus::zvariant::DynamicType,
        R: for<'d> serde::Deserialize<'d> + zbus::zvariant::Type,
    {
        let token = self.token(dest);
        if token.is_cancelled() {
            return Err(CallError::Timeout);
        }
        // Near the deadline the wait is shorter; running out of it then is
        // the walk's timeout, not the application's fault.
        let left = self.deadline.saturating_duration_since(Instant::now());
        let by_deadline = left < CALL_TIMEOUT;
        let r = tokio::select! {
            r = self.bus.call(dest, path, iface, method, body, CALL_TIMEOUT.min(left)) => r,
            _ = token.cancelled() => Err(CallError::Timeout),
        };
        match r {
            Err(CallError::Timeout) if by_deadline && !token.is_cancelled() => {
                Err(CallError::Deadline)
            }
            r => r,
        }
    }

    async fn get_all(
        &self,
        dest: &str,
        path: &str,
        iface: &str,
    ) -> Result<HashMap<String, OwnedValue>, CallError> {
        self.call(dest, path, IFACE_PROPERTIES, "GetAll", &(iface,))
            .await
    }

    async fn get<R>(&self, dest: &str, path: &str, iface: &str, name: &str) -> Result<R, CallError>
    where
        R: TryFrom<OwnedValue>,
    {
        let v: OwnedValue = self
            .call(dest, path, IFACE_PROPERTIES, "Get", &(iface, name))
            .await?;
        R::try_from(v).map_err(|_| {
            CallError::Failed(zbus::Error::Failure(format!("property {name}: wrong type")))
        })
    }

    /// Walks the registry's applications into a `desktop-frame` tree.
    pub(super) async fn run(&self, start: Instant) -> Result<Walk, A11yError> {
        let apps: Vec<ObjRef> = match self
            .call(REGISTRY, ROOT_PATH, IFACE_ACCESSIBLE, "GetChildren", &())
            .await
        {
            Ok(apps) => apps,
            Err(CallError::Timeout | CallError::Deadline) => {
                return Err(A11yError::Timeout(format!(
                    "the AT-SPI registry did not list the applications within {} ms",
                    CALL_TIMEOUT.min(self.opts.timeout).as_millis()
                )))
            }
            Err(CallError::Failed(e)) => return Err(A11yError::Registry(e)),
        };

        // The cache's entries when they can serve (see `cache`): same
        // applications, recent enough.
        let taken: Option<Taken> = self.cache.and_then(Cache::take).filter(|t| t.apps == apps);
        let mut entries: HashMap<Key, Entry> = HashMap::new();
        let mut cached = 0usize;
        let app_list = apps.clone();

        let mut arena: Vec<Slot> = vec![Slot::default()];
        let mut queue: VecDeque<Job> = VecDeque::new();
        for (dest, path) in apps {
            if path.as_str() == NULL_PATH {
                continue;
            }
            let slot = arena.len();
            arena.push(Slot::default());
            arena[0].children.push(slot);
            queue.push_back(Job {
                slot,
                dest,
                path,
                depth: 1,
                flag: Flag::None,
                fresh: false,
            });
        }

        let mut reasons: Vec<String> = Vec::new();
        let mut dead: HashSet<String> = HashSet::new();
        let mut app_names: HashMap<String, String> = HashMap::new();
        let mut kept = 0usize;
        let mut in_flight: FuturesUnordered<BoxFuture<'_, (Job, Outcome)>> =
            FuturesUnordered::new();
        let deadline = tokio::time::Instant::from_std(self.deadline);
        let concurrency = self.opts.concurrency.max(1);

        loop {
            while in_flight.len() < concurrency {
                let Some(job) = queue.front() else { break };
                if dead.contains(&job.dest) {
                    queue.pop_front();
                    continue;
                }
                if kept + in_flight.len() >= self.opts.max_nodes {
                    break;
                }
                let mut job = queue.pop_front().expect("front was Some");
                if let Some(t) = &taken {
                    let key = (job.dest.clone(), job.path.to_string());
                    if t.dirty_below.contains(&key) {
                        job.fresh = true;
                    }
                    let entry = t.entries.get(&key).filter(|e| {
                        !job.fresh
                            && job.depth > 2
                            && e.flag != Flag::Calc
                            && !t.dirty.contains(&key)
                            && !e.node.states.iter().any(|s| s == "focused")
                    });
                    if let Some(e) = entry {
                        let outcome = Outcome::Node {
                            node: e.node.clone(),
                            children: e.children.clone(),
                            flag: e.flag,
                            notes: e.notes.clone(),
                        };
                        cached += 1;
                        in_flight.push(Box::pin(async move { (job, outcome) }));
                        continue;
                    }
                }
                in_flight.push(Box::pin(async move {
                    let outcome = self.fetch(&job).await;
                    (job, outcome)
                }));
            }
            if in_flight.is_empty() {
                if !queue.is_empty() {
                    reasons.push(format!(
                        "max_nodes: stopped at {} nodes",
                        self.opts.max_nodes
                    ));
                }
                break;
            }
            let next = tokio::select! {
                next = in_flight.next() => next,
                _ = tokio::time::sleep_until(deadline) => None,
            };
            let Some((job, outcome)) = next.filter(|(_, o)| !matches!(o, Outcome::Deadline)) else {
                reasons.push(format!(
                    "timeout: stopped after {} ms",
                    self.opts.timeout.as_millis()
                ));
                break;
            };
            match outcome {
                Outcome::Node {
                    node,
                    children,
                    flag,
                    notes,
                } => {
                    if job.depth == 1 {
                        app_names.insert(job.dest.clone(), node.name.clone());
                    }
                    let key = (job.dest.clone(), job.path.to_string());
                    // Descendants' screen extents move with a moved object.
                    let moved = taken
                        .as_ref()
                        .and_then(|t| t.entries.get(&key))
                        .is_some_and(|e| e.node.extents != node.extents);
                    let fresh = job.fresh || moved;
                    if self.cache.is_some() {
                        entries.insert(
                            key,
                            Entry {
                                node: node.clone(),
                                children: children.clone(),
                                flag,
                                notes: notes.clone(),
                            },
                        );
                    }
                    reasons.extend(notes);
                    for (dest, path) in children {
                        let slot = arena.len();
                        arena.push(Slot::default());
                        arena[job.slot].children.push(slot);
                        queue.push_back(Job {
                            slot,
                            dest,
                            path,
                            depth: job.depth + 1,
                            flag,
                            fresh,
                        });
                    }
                    arena[job.slot].node = Some(node);
                    kept += 1;
                }
                Outcome::Filtered | Outcome::Failed => {}
                Outcome::Timeout => {
                    if dead.insert(job.dest.clone()) {
                        self.token(&job.dest).cancel();
                        let who = self.describe_app(&job.dest, app_names.get(&job.dest)).await;
                        if self.wanted(&who) {
                            reasons.push(format!(
                                "application {who} did not answer within {} ms; its tree is incomplete",
                                CALL_TIMEOUT.min(self.opts.timeout).as_millis()
                            ));
                        }
                    }
                }
                Outcome::Bus(e) => return Err(A11yError::Bus(e)),
                Outcome::Deadline => unreachable!("filtered out above"),
            }
        }
        drop(in_flight);
        if let Some(c) = self.cache {
            c.store(entries, app_list, taken.is_none());
        }

        let mut root = assemble(&mut arena, 0).unwrap_or_default();
        root.role = "desktop frame".to_string();
        let nodes = root.count() - 1;
        let applications = root.children.len();
        Ok(Walk {
            root,
            nodes,
            applications,
            truncated: if reasons.is_empty() {
                None
            } else {
                Some(reasons.join("; "))
            },
            elapsed: start.elapsed(),
            cached,
        })
    }

    /// Whether an application described as `who` passes the `app` filter
    /// (an application that never answered is known only by its process).
    fn wanted(&self, who: &str) -> bool {
        match &self.opts.app {
            None => true,
            Some(f) => who.to_lowercase().contains(&f.to_lowercase()),
        }
    }

    /// "\"gtk3-demo\" (:1.23, pid 4242)": the name the application gave, or
    /// its process name when it never answered.
    async fn describe_app(&self, dest: &str, name: Option<&String>) -> String {
        // The bus daemon answers this, not the application.
        let pid: Option<u32> = tokio::time::timeout(
            Duration::from_millis(500),
            self.bus.conn.call_method(
                Some("org.freedesktop.DBus"),
                "/org/freedesktop/DBus",
                Some("org.freedesktop.DBus"),
                "GetConnectionUnixProcessID",
                &(dest,),
            ),
        )
        .await
        .ok()
        .and_then(Result::ok)
        .and_then(|m| m.body().deserialize::<u32>().ok());
        let comm = pid.and_then(|p| std::fs::read_to_string(format!("/proc/{p}/comm")).ok());
        let label = match (name, comm) {
            (Some(n), _) if !n.is_empty() => n.clone(),
            (_, Some(c)) => c.trim().to_string(),
            _ => "?".to_string(),
        };
        match pid {
            Some(p) => format!("{label:?} ({dest}, pid {p})"),
            None => format!("{label:?} ({dest})"),
        }
    }

    /// Everything OSWorld's `_create_atspi_node` reads about one object.
    async fn fetch(&self, job: &Job) -> Outcome {
        let (d, p) = (job.dest.as_str(), job.path.as_str());
        let (props, role, state, attrs, ifaces) = futures::join!(
            self.get_all(d, p, IFACE_ACCESSIBLE),
            self.call::<_, u32>(d, p, IFACE_ACCESSIBLE, "GetRole", &()),
            self.call::<_, Vec<u32>>(d, p, IFACE_ACCESSIBLE, "GetState", &()),
            self.call::<_, OrderedDict>(d, p, IFACE_ACCESSIBLE, "GetAttributes", &()),
            self.call::<_, Vec<String>>(d, p, IFACE_ACCESSIBLE, "GetInterfaces", &()),
        );
        let (name, description, child_count) = match props {
            Ok(props) => (
                prop_string(&props, "Name"),
                prop_string(&props, "Description"),
                props
                    .get("ChildCount")
                    .and_then(|v| i32::try_from(v).ok())
                    .unwrap_or(0),
            ),
            Err(CallError::Failed(e)) if is_object_error(&e) => {
                // Toolkits without Properties.GetAll: one property at a time.
                let (name, count) = futures::join!(
                    self.get::<String>(d, p, IFACE_ACCESSIBLE, "Name"),
                    self.get::<i32>(d, p, IFACE_ACCESSIBLE, "ChildCount")
                );
                match (name, count) {
                    (Ok(n), Ok(c)) => (n, String::new(), c),
                    (Err(e), _) | (_, Err(e)) => return failure(e),
                }
            }
            Err(e) => return failure(e),
        };
        let role = match role {
            Ok(r) => match names::role_name(r) {
                Some(n) => n.to_string(),
                None => match self
                    .call::<_, String>(d, p, IFACE_ACCESSIBLE, "GetRoleName", &())
                    .await
                {
                    Ok(n) => n,
                    Err(e) => return failure(e),
                },
            },
            Err(e) => return failure(e),
        };
        let states = match state {
            Ok(words) => names::state_names(&words),
            Err(e) => return failure(e),
        };
        // Some toolkits lack these two; treat a refusal as "none".
        let attributes = match attrs {
            Ok(a) => a.0,
            Err(CallError::Failed(e)) if is_object_error(&e) => Vec::new(),
            Err(e) => return failure(e),
        };
        let ifaces = match ifaces {
            Ok(i) => i,
            Err(CallError::Failed(e)) if is_object_error(&e) => Vec::new(),
            Err(e) => return failure(e),
        };
        if job.depth == 1 {
            if let Some(filter) = &self.opts.app {
                if !name.to_lowercase().contains(&filter.to_lowercase()) {
                    return Outcome::Filtered;
                }
            }
        }

        let raw_role = role.trim();
        let mut flag = job.flag;
        if flag == Flag::None {
            if raw_role == "document spreadsheet" {
                flag = Flag::Calc;
            }
            if raw_role == "application" && name == "Thunderbird" {
                flag = Flag::Thunderbird;
            }
        }
        let has = |i: &str| ifaces.iter().any(|x| x == i);
        let shown = states.iter().any(|s| s == "visible") && states.iter().any(|s| s == "showing");
        let calc_table = flag == Flag::Calc && raw_role == "table";

        let extents = async {
            if shown && has(IFACE_COMPONENT) {
                self.call::<_, (i32, i32, i32, i32)>(d, p, IFACE_COMPONENT, "GetExtents", &(0u32,))
                    .await
                    .map(Some)
            } else {
                Ok(None)
            }
        };
        let text = async {
            if has(IFACE_TEXT) {
                // The whole text: -1 is "to the end" (OSWorld asks for
                // CharacterCount first; one call less, same string).
                self.call::<_, String>(d, p, IFACE_TEXT, "GetText", &(0i32, -1i32))
                    .await
                    .map(Some)
            } else {
                Ok(None)
            }
        };
        let value = async {
            if has(IFACE_VALUE) {
                self.get_all(d, p, IFACE_VALUE).await.map(Some)
            } else {
                Ok(None)
            }
        };
        let actions = async {
            if has(IFACE_ACTION) {
                self.actions(d, p).await.map(Some)
            } else {
                Ok(None)
            }
        };
        let children = async {
            if job.depth >= MAX_DEPTH {
                Ok(None)
            } else if calc_table {
                self.calc_cells(d, p, has(IFACE_TABLE)).await.map(Some)
            } else {
                self.children(d, p, child_count)
                    .await
                    .map(|c| Some((c, None)))
            }
        };
        let (extents, text, value, actions, children) =
            futures::join!(extents, text, value, actions, children);

        // A refused optional call leaves its part out (OSWorld would lose
        // the node); a timeout or a broken bus ends the fetch.
        let extents = match optional(extents) {
            Ok(e) => e.map(|(x, y, width, height)| Extents {
                x,
                y,
                width,
                height,
            }),
            Err(e) => return failure(e),
        };
        let text = match optional(text) {
            Ok(t) => t.map(|t| t.replace(['\u{FFFC}', '\u{FFFD}'], "")),
            Err(e) => return failure(e),
        };
        let value = match optional(value) {
            Ok(v) => v.and_then(|props| {
                Some(ValueInfo {
                    current: dbus::number(&props, "CurrentValue")?,
                    min: dbus::number(&props, "MinimumValue")?,
                    max: dbus::number(&props, "MaximumValue")?,
                    step: dbus::number(&props, "MinimumIncrement")?,
                })
            }),
            Err(e) => return failure(e),
        };
        let actions = match optional(actions) {
            Ok(a) => a.unwrap_or_default(),
            Err(e) => return failure(e),
        };
        let (children, note) = match optional(children) {
            Ok(c) => c.unwrap_or_default(),
            Err(e) => return failure(e),
        };

        let node = A11yNode {
            role,
            name,
            description,
            states,
            attributes,
            extents,
            text,
            image: has(IFACE_IMAGE),
            selection: has(IFACE_SELECTION),
            value,
            actions,
            children: Vec::new(),
        };
        Outcome::Node {
            node,
            children,
            flag,
            notes: note.into_iter().collect(),
        }
    }

    /// The actions as pyatspi reads them. `GetActions` gives the
    /// descriptions and key bindings but, since at-spi2-core 2.46, the
    /// *localized* names ("Click"); OSWorld's `getName(i)` is `GetName`
    /// ("click"), asked once per action.
    async fn actions(&self, d: &str, p: &str) -> Result<Vec<ActionInfo>, CallError> {
        let listed: Vec<(String, String, String)> =
            self.call(d, p, IFACE_ACTION, "GetActions", &()).await?;
        let names = join_all((0..listed.len() as i32).map(|i| async move {
            self.call::<_, String>(d, p, IFACE_ACTION, "GetName", &(i,))
                .await
        }))
        .await;
        listed
            .into_iter()
            .zip(names)
            .map(|((_, description, key_binding), name)| {
                Ok(ActionInfo {
                    name: name?,
                    description,
                    key_binding,
                })
            })
            .collect()
    }

    /// The children OSWorld iterates: at most [`MAX_WIDTH`], up to the first
    /// null reference (pyatspi stops there, on an exception).
    async fn children(&self, d: &str, p: &str, count: i32) -> Result<Vec<ObjRef>, CallError> {
        if count <= 0 {
            return Ok(Vec::new());
        }
        let mut refs: Vec<ObjRef> = Vec::new();
        let mut by_index = count as usize > MAX_WIDTH;
        if !by_index {
            match self
                .call::<_, Vec<ObjRef>>(d, p, IFACE_ACCESSIBLE, "GetChildren", &())
                .await
            {
                Ok(r) => refs = r,
                Err(CallError::Failed(e)) if is_object_error(&e) => by_index = true,
                Err(e) => return Err(e),
            }
        }
        if by_index {
            // Huge containers (a 17-billion-cell sheet): never ask for all.
            let n = (count as usize).min(MAX_WIDTH) as i32;
            let calls = (0..n).map(|i| async move {
                self.call::<_, ObjRef>(d, p, IFACE_ACCESSIBLE, "GetChildAtIndex", &(i,))
                    .await
            });
            for r in join_all(calls).await {
                match r {
                    Ok(r) => refs.push(r),
                    Err(CallError::Failed(e)) if is_object_error(&e) => break,
                    Err(e) => return Err(e),
                }
            }
        }
        if let Some(i) = refs.iter().position(|(_, path)| path.as_str() == NULL_PATH) {
            refs.truncate(i);
        }
        refs.truncate(MAX_WIDTH);
        Ok(refs)
    }

    /// OSWorld's LibreOffice Calc table scan: only showing cells, found by
    /// walking cell indices row by row from the first showing cell, giving
    /// up on rows or columns after 500 without one. Same rules, but the
    /// probes (child at index, then its state) go out in batches, and the
    /// scan stops after [`MAX_CALC_PROBES`] probes or at the first error
    /// (OSWorld would lose the whole table there).
    ///
    /// The row stride is the table's column count (Table.NColumns), which is
    /// what OSWorld derives from the LibreOffice version (1024 before 7.4,
    /// 16384 since).
    async fn calc_cells(
        &self,
        d: &str,
        p: &str,
        has_table: bool,
    ) -> Result<(Vec<ObjRef>, Option<String>), CallError> {
        const MAX_ROW: i64 = 1_048_576;
        let mut max_col: i64 = 16384;
        if has_table {
            match self.get::<i32>(d, p, IFACE_TABLE, "NColumns").await {
                Ok(n) if n > 0 => max_col = i64::from(n),
                Ok(_) => {}
                Err(CallError::Failed(e)) if is_object_error(&e) => {}
                Err(e) => return Err(e),
            }
        }
        let mut probes: HashMap<i64, Option<(ObjRef, bool)>> = HashMap::new();
        let mut probed = 0usize;
        let mut batch: i64 = 32;
        let mut cells = Vec::new();
        let mut index_base: i64 = 0;
        let mut first_showing = false;
        let mut column_base: Option<i64> = None;
        'rows: for r in 0..MAX_ROW {
            let start = column_base.unwrap_or(0);
            let mut clm = start;
            let mut row_len = 0;
            for c in start..max_col {
                clm = c;
                let idx = index_base + c;
                if !probes.contains_key(&idx) {
                    if probed >= MAX_CALC_PROBES {
                        let note = format!(
                            "calc table {d}{p}: scan stopped after {MAX_CALC_PROBES} cell probes"
                        );
                        return Ok((cells, Some(note)));
                    }
                    let end = (index_base + max_col).min(idx + batch);
                    probed += (end - idx) as usize;
                    let results = join_all((idx..end).map(|i| self.probe_cell(d, p, i))).await;
                    for (i, r) in (idx..end).zip(results) {
                        probes.insert(i, r?);
                    }
                }
                let Some((cell, showing)) = probes.remove(&idx).flatten() else {
                    break 'rows; // no such cell: where OSWorld raises
                };
                if showing {
                    cells.push(cell);
                    row_len += 1;
                    if !first_showing {
                        column_base = Some(c);
                        first_showing = true;
                    }
                } else if (first_showing && column_base.is_some()) || c >= 500 {
                    break;
                }
            }
            if (first_showing && Some(clm) == column_base) || (!first_showing && r >= 500) {
                break;
            }
            if row_len > 0 {
                batch = (row_len + 1).clamp(8, 64);
            }
            probes.retain(|&i, _| i >= index_base + max_col);
            index_base += max_col;
        }
        Ok((cells, None))
    }

    /// One cell: its reference and whether it is showing; None when the
    /// index has no cell (or is past what GetChildAtIndex can take).
    async fn probe_cell(
        &self,
        d: &str,
        p: &str,
        index: i64,
    ) -> Result<Option<(ObjRef, bool)>, CallError> {
        let Ok(i) = i32::try_from(index) else {
            return Ok(None);
        };
        let cell: ObjRef = match self
            .call(d, p, IFACE_ACCESSIBLE, "GetChildAtIndex", &(i,))
            .await
        {
            Ok(c) => c,
            Err(CallError::Failed(e)) if is_object_error(&e) => return Ok(None),
            Err(e) => return Err(e),
        };
        if cell.1.as_str() == NULL_PATH {
            return Ok(None);
        }
        match self
            .call::<_, Vec<u32>>(&cell.0, cell.1.as_str(), IFACE_ACCESSIBLE, "GetState", &())
            .await
        {
            Ok(words) => {
                let showing = words.first().is_some_and(|w| w & (1 << STATE_SHOWING) != 0);
                Ok(Some((cell, showing)))
            }
            Err(CallError::Failed(e)) if is_object_error(&e) => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// Builds the subtree at `slot` from the arena (children whose fetch never
/// finished are left out).
fn assemble(arena: &mut [Slot], slot: usize) -> Option<A11yNode> {
    let mut node = if slot == 0 {
        Some(A11yNode::default())
    } else {
        arena[slot].node.take()
    }?;
    let kids = std::mem::take(&mut arena[slot].children);
    node.children = kids
        .into_iter()
        .filter_map(|k| assemble(arena, k))
        .collect();
    Some(node)
}

fn prop_string(props: &HashMap<String, OwnedValue>, key: &str) -> String {
    props
        .get(key)
        .and_then(|v| v.downcast_ref::<&str>().ok())
        .map(str::to_string)
        .unwrap_or_default()
}

/// An error the object (or the bus daemon on its behalf) answered with, as
/// opposed to a failure of our connection.
fn is_object_error(e: &zbus::Error) -> bool {
    matches!(
        e,
        zbus::Error::MethodError(..)
            | zbus::Error::FDO(_)
            | zbus::Error::Variant(_)
            | zbus::Error::Failure(_)
            | zbus::Error::InterfaceNotFound
            | zbus::Error::Unsupported
    )
}

fn failure(e: CallError) -> Outcome {
    match e {
        CallError::Timeout => Outcome::Timeout,
        CallError::Deadline => Outcome::Deadline,
        CallError::Failed(e) if is_object_error(&e) => Outcome::Failed,
        CallError::Failed(e) => Outcome::Bus(e),
    }
}

/// An optional part: a refusal is "absent", a timeout or bus failure ends
/// the fetch.
fn optional<T>(r: Result<Option<T>, CallError>) -> Result<Option<T>, CallError> {
    match r {
        Err(CallError::Failed(e)) if is_object_error(&e) => Ok(None),
        r => r,
    }
}
