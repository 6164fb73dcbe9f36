//! The accessibility tree: an AT-SPI walk with bounded concurrency and a
//! deadline, giving what OSWorld's pyatspi walk gives.
//!
//! [`A11y::connect`] finds the AT-SPI bus through the session bus (or
//! `AT_SPI_BUS_ADDRESS`) and keeps one connection; [`A11y::walk`] reads every
//! application into a [`protocol::A11yNode`] tree rooted at `desktop-frame`,
//! collecting the attributes OSWorld's `_create_atspi_node` collects under
//! OSWorld's limits; [`render`] turns a walk into the API's
//! [`protocol::api::A11yTree`] in any of its formats.
//!
//! # Speed
//! A sequential walk is no faster than pyatspi: the time goes in round
//! trips. The walk keeps `concurrency` objects in flight (a handful of calls
//! each) and asks an object only about the interfaces it has. Under Xvfb on
//! two shared cores (release build, medians): gtk3-widget-factory, 261
//! nodes, 114 ms against pyatspi's 530 ms; a LibreOffice Calc sheet, 3001
//! nodes, 1.6 s against 10.2 s. Past 16 objects in flight the application,
//! answering one call at a time, is the bottleneck.
//!
//! # The cache
//! Each connection keeps what its last walk read ([`cache`]): AT-SPI events
//! say which objects changed, and the next walk asks only about those
//! (applications and their windows always, a focused object always, Calc's
//! sheet always). Under Xvfb with mousepad and the widget factory (583
//! nodes) a walk after typing takes 69 ms from the cache against 1.1 s
//! fresh, and gives the same XML byte for byte
//! (`guest-agent/tests/a11y_cache.rs`). `A11yOptions::cache = false` (the
//! API's `fresh=true`) walks everything and leaves the cache alone.
//!
//! # Never hanging
//! Each call waits at most [`CALL_TIMEOUT`] (and never past the walk's
//! `timeout`). An application that misses it is declared dead for the rest
//! of the walk: its other calls are cancelled, its tree is cut where it
//! stood, and `truncated` names it; the other applications are walked as
//! usual. Hitting `max_nodes` or `timeout` returns what was walked, with the
//! reason. Only an unreachable bus or registry is an error.
//!
//! # Known differences from OSWorld's tree
//! - Applications come in registry order (OSWorld: thread completion order,
//!   which varies from call to call).
//! - An object that answers a call with an error is left out alone; OSWorld
//!   loses it and its following siblings (a refused optional part, such as
//!   the extents, only leaves that part out here).
//! - Text is read with `GetText(0, -1)`, "to the end", instead of
//!   `CharacterCount` then `GetText(0, count)`.
//! - The Calc table scan (only showing cells) follows OSWorld's rules, but
//!   takes the row stride from the table's `NColumns` rather than from
//!   `libreoffice --version`, sends its probes in batches, stops at the first
//!   error (OSWorld loses the table there) and gives up after
//!   [`walk::MAX_CALC_PROBES`] probes (noted in `truncated`).
//! - GTK4 reports window-relative extents; they are passed on as GTK4 gives
//!   them, as pyatspi does. In practice only the frame carries extents:
//!   GTK 4.8 (Debian 12's gnome-calculator) sets no SHOWING state on its
//!   widgets, so OSWorld's visible-and-showing rule gives them none, and
//!   the frame reports (0, 0) with the window's size.
//! - What XML cannot hold is cleaned at rendering (see `protocol::a11y::xml`).

pub mod cache;
mod dbus;
pub mod names;
pub mod walk;

use protocol::api::{A11yFormat, A11yTree};
use std::time::{Duration, Instant};
use zbus::proxy::CacheProperties;

/// The longest one D-Bus call may take before its application is declared
/// dead for the rest of the walk.
pub const CALL_TIMEOUT: Duration = Duration::from_millis(1500);

#[derive(Debug, thiserror::Error)]
pub enum A11yError {
    /// The session bus or the AT-SPI bus could not be reached.
    #[error("cannot connect to the AT-SPI bus")]
    Connect(#[source] zbus::Error),
    /// The registry (the list of applications) answered with an error.
    #[error("the AT-SPI registry failed")]
    Registry(#[source] zbus::Error),
    #[error("{0}")]
    Timeout(String),
    /// The connection to the AT-SPI bus broke during a walk.
    #[error("the AT-SPI bus connection failed")]
    Bus(#[source] zbus::Error),
}

#[derive(Clone, Debug)]
pub struct A11yOptions {
    /// Stop after this many objects (applications and their descendants).
    pub max_nodes: usize,
    /// Stop walking after this long and return what was walked.
    pub timeout: Duration,
    /// Only the applications whose name contains this (case-insensitive).
    pub app: Option<String>,
    /// Objects fetched at once (each with up to five calls in flight).
    pub concurrency: usize,
    /// Take unchanged objects from the cache and keep what was read
    /// (false: a fresh walk that neither reads nor writes it).
    pub cache: bool,
}

impl Default for A11yOptions {
    fn default() -> Self {
        A11yOptions {
            max_nodes: 20_000,
            timeout: Duration::from_secs(10),
            app: None,
            concurrency: 64,
            cache: true,
        }
    }
}

/// One walk's result.
#[derive(Clone, Debug)]
pub struct Walk {
    /// `desktop-frame`, one child per application.
    pub root: protocol::A11yNode,
    /// Objects in the tree, the root not counted.
    pub nodes: usize,
    /// Applications in the tree.
    pub applications: usize,
    /// Why the tree is incomplete, when it is.
    pub truncated: Option<String>,
    pub elapsed: Duration,
    /// Objects taken from the cache instead of asked again.
    pub cached: usize,
}

/// A connection to the AT-SPI bus; cheap to clone.
#[derive(Clone, Debug)]
pub struct A11y {
    bus: dbus::Bus,
    /// Set up by the first walk that may use it (registering for events
    /// makes every application send them, so a connection that only
    /// probes, as `/v1/health` does, registers nothing); None inside when
    /// the registry would not send events: every walk is fresh.
    cache: std::sync::Arc<tokio::sync::OnceCell<Option<cache::Cache>>>,
}

impl A11y {
    /// Connects to the AT-SPI bus: `AT_SPI_BUS_ADDRESS` when set, else the
    /// address the session bus (`DBUS_SESSION_BUS_ADDRESS`) gives through
    /// `org.a11y.Bus`.
    pub async fn connect(timeout: Duration) -> Result<A11y, A11yError> {
        Self::connect_with(None, timeout).await
    }

    /// Like [`A11y::connect`], through the session bus at `session_address`
    /// (a D-Bus address such as `unix:path=/tmp/dbus-XYZ`) instead of the
    /// environment's.
    pub async fn connect_session(
        session_address: &str,
        timeout: Duration,
    ) -> Result<A11y, A11yError> {
        Self::connect_with(Some(session_address), timeout).await
    }

    async fn connect_with(
        session_address: Option<&str>,
        timeout: Duration,
    ) -> Result<A11y, A11yError> {
        tokio::time::timeout(timeout, Self::connect_now(session_address))
            .await
            .map_err(|_| {
                A11yError::Timeout(format!(
                    "connecting to the AT-SPI bus took over {} ms",
                    timeout.as_millis()
                ))
            })?
    }

    async fn connect_now(session_address: Option<&str>) -> Result<A11y, A11yError> {
        let from_env = std::env::var("AT_SPI_BUS_ADDRESS")
            .ok()
            .filter(|a| !a.is_empty() && session_address.is_none());
        let address = match from_env {
            Some(a) => a,
            None => {
                let builder = match session_address {
                    Some(a) => zbus::connection::Builder::address(a),
                    None => zbus::connection::Builder::session(),
                };
                let session = builder
                    .map_err(A11yError::Connect)?
                    .build()
                    .await
                    .map_err(A11yError::Connect)?;
                let proxy = atspi::proxy::bus::BusProxy::builder(&session)
                    .cache_properties(CacheProperties::No)
                    .build()
                    .await
                    .map_err(A11yError::Connect)?;
                proxy.get_address().await.map_err(A11yError::Connect)?
            }
        };
        let conn = zbus::connection::Builder::address(address.as_str())
            .map_err(A11yError::Connect)?
            .build()
            .await
            .map_err(A11yError::Connect)?;
        Ok(A11y {
            bus: dbus::Bus { conn },
            cache: Default::default(),
        })
    }

    /// The number of applications the registry lists.
    pub async fn probe(&self, timeout: Duration) -> Result<usize, A11yError> {
        let apps: Vec<dbus::ObjRef> = self
            .bus
            .call(
                walk::REGISTRY,
                walk::ROOT_PATH,
                dbus::IFACE_ACCESSIBLE,
                "GetChildren",
                &(),
                timeout,
            )
            .await
            .map_err(|e| match e {
                dbus::CallError::Timeout | dbus::CallError::Deadline => {
                    A11yError::Timeout(format!(
                        "the AT-SPI registry did not answer within {} ms",
                        timeout.as_millis()
                    ))
                }
                dbus::CallError::Failed(e) => A11yError::Registry(e),
            })?;
        Ok(apps.len())
    }

    /// Walks every application (or those `opts.app` names).
    pub async fn walk(&self, opts: &A11yOptions) -> Result<Walk, A11yError> {
        let start = Instant::now();
        let cache = if opts.cache && opts.app.is_none() {
            // Listening starts before the first walk reads anything, so no
            // change after it is missed.
            self.cache
                .get_or_init(|| cache::Cache::listen(&self.bus, Duration::from_secs(2)))
                .await
                .as_ref()
        } else {
            self.cache.get().and_then(Option::as_ref)
        };
        walk::Walker::new(&self.bus, opts, start)
            .with_cache(cache)
            .run(start)
            .await
    }

    /// The tree cache, once a walk has set it up and when events reach it.
    pub fn cache(&self) -> Option<&cache::Cache> {
        self.cache.get().and_then(Option::as_ref)
    }
}

/// The walk as the API returns it, in `format`; a truncated walk's text ends
/// with the mark of [`protocol::a11y::mark_truncated`].
pub fn render(walk: &Walk, format: A11yFormat) -> A11yTree {
    let (mut text, tree) = match format {
        A11yFormat::OsworldXml => (Some(protocol::a11y::xml::to_osworld_xml(&walk.root)), None),
        A11yFormat::Linear => (Some(protocol::a11y::linear::linearize(&walk.root)), None),
        A11yFormat::Json => (None, Some(walk.root.clone())),
    };
    // A cut tree says so in its text too (JSON has `truncated` and `reason`).
    if let (Some(t), Some(reason)) = (text.as_mut(), walk.truncated.as_deref()) {
        protocol::a11y::mark_truncated(t, format == A11yFormat::OsworldXml, reason);
    }
    A11yTree {
        format,
        nodes: walk.nodes,
        applications: walk.applications,
        truncated: walk.truncated.is_some(),
        reason: walk.truncated.clone(),
        elapsed_ms: walk.elapsed.as_secs_f64() * 1000.0,
        cached: walk.cached,
        text,
        tree,
    }
}
