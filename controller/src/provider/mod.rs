//! The provider abstraction: something that hands out fresh desktops with
//! a guest agent in them. [`crate::provider::qemu::QemuProvider`] restores VMs from
//! the ready snapshot; [`crate::provider::local::LocalProvider`] starts a fresh
//! headless desktop on the host.

pub mod local;
pub mod process;
pub mod qemu;
pub mod reaper;

use crate::error_chain;
use crate::guest_client::{GuestClient, GuestError};
use crate::image::ImageError;
use futures::future::BoxFuture;
use futures::FutureExt;
use serde::Serialize;
use std::path::Path;
use std::time::Duration;

/// Which provider makes the machines (`deskenv run --provider`).
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A fresh VM per episode.
    Qemu,
    /// A fresh desktop on this host, no VM: only /home/user is private,
    /// and only when run as root.
    Local,
}

impl Kind {
    /// The name run.json and serve.json record.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Qemu => "qemu",
            Kind::Local => "local",
        }
    }
}

/// Why a provider could not hand out or keep a machine. The variants are
/// shared by every provider; what only one provider can report is in its
/// own enum ([`qemu::QemuError`], [`local::LocalError`]), carried by
/// [`ProviderError::Start`].
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    /// A bad setting or name, or a missing tool: fix the input or the host.
    #[error("{0}")]
    Config(String),
    #[error(transparent)]
    Image(#[from] ImageError),
    /// A host process of the machine is gone. `machine` says whose (`VM
    /// x`, `local machine x`), `what` which (`QEMU`, `Xvfb`, ...).
    #[error("{machine}: {what} (pid {pid}) exited ({status}); last lines of {log}:\n{tail}")]
    Exited {
        machine: String,
        what: &'static str,
        pid: u32,
        status: String,
        log: String,
        tail: String,
    },
    /// The guest agent of a running machine failed.
    #[error("{machine}: the guest agent failed")]
    Guest {
        machine: String,
        #[source]
        source: Box<GuestError>,
    },
    /// The machine runs but does not answer the host-side way in (QEMU's
    /// monitor, a screendump).
    #[error("{machine}: {what}")]
    Unreachable {
        machine: String,
        what: String,
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// The provider's own account of a failed start.
    #[error(transparent)]
    Start(Box<dyn std::error::Error + Send + Sync>),
    /// A failed start whose logs were kept for a post-mortem.
    #[error(transparent)]
    WithLogs(WithLogs),
    #[error("{context}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

impl ProviderError {
    /// The provider's own error of type `E` (looking through the kept logs).
    pub fn start_error<E: std::error::Error + 'static>(&self) -> Option<&E> {
        match self {
            ProviderError::Start(e) => e.downcast_ref::<E>(),
            ProviderError::WithLogs(w) => w.error.start_error(),
            _ => None,
        }
    }

    /// `self` with the note that its logs were kept in `logs`.
    pub fn with_logs(self, logs: String) -> ProviderError {
        ProviderError::WithLogs(WithLogs {
            error: Box::new(self),
            logs,
        })
    }
}

/// An error and where its logs were kept: shown as the error's message with
/// the folder after it; its cause is the error's own, so a printed chain
/// has each part once.
#[derive(Debug)]
pub struct WithLogs {
    pub error: Box<ProviderError>,
    pub logs: String,
}

impl std::fmt::Display for WithLogs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}\n(logs kept in {})", self.error, self.logs)
    }
}

impl std::error::Error for WithLogs {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.error.source()
    }
}

pub(crate) fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> ProviderError {
    let context = context.into();
    move |source| ProviderError::Io { context, source }
}

/// `machine` names the machine as its messages do (`VM x`, `local machine x`).
pub(crate) fn agent_err(machine: &str) -> impl FnOnce(GuestError) -> ProviderError {
    let machine = machine.to_string();
    move |source| ProviderError::Guest {
        machine,
        source: Box::new(source),
    }
}

/// How a machine came up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StartPath {
    /// Restored from the ready snapshot (no boot).
    Restore,
    /// Booted from the image.
    ColdBoot,
    /// An already running desktop.
    Attach,
    /// A fresh headless desktop started on the host (local provider).
    Local,
}

impl std::fmt::Display for StartPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            StartPath::Restore => "restore from the ready snapshot",
            StartPath::ColdBoot => "cold boot",
            StartPath::Attach => "attach",
            StartPath::Local => "fresh local desktop",
        })
    }
}

/// What starting a machine took.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct StartReport {
    pub path: StartPath,
    /// From the request to a responsive desktop (agent healthy, clock set).
    pub seconds: f64,
    /// Named phases and their seconds, in order.
    pub phases: Vec<(String, f64)>,
    /// Anything worth a line in the log (snapshot created, accel fallback).
    pub notes: Vec<String>,
    /// What the start did that callers act on (the notes say it in words).
    /// Not serialized: it only matters to the process that started.
    #[serde(skip)]
    pub events: Vec<StartEvent>,
}

/// Something a start did besides starting the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartEvent {
    /// It made the ready snapshot first (one cold boot, warm-up and save
    /// counted in its seconds).
    CreatedReadySnapshot,
}

/// The phases that code looks up (the others are only shown). Phases are
/// kept as `(name, seconds)` pairs because that is what `snapshot.json`
/// and `vm.json` hold: files written before keep reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Making the ready snapshot, as part of a start.
    CreateReadySnapshot,
    /// A whole cold boot, in a snapshot's own phases.
    ColdBootTotal,
}

impl Phase {
    /// The phase's name in a report.
    pub const fn name(self) -> &'static str {
        match self {
            Phase::CreateReadySnapshot => "create ready snapshot",
            Phase::ColdBootTotal => "cold boot total",
        }
    }

    /// Its seconds among `phases`.
    pub fn find(self, phases: &[(String, f64)]) -> Option<f64> {
        phases.iter().find(|p| p.0 == self.name()).map(|p| p.1)
    }
}

/// A running desktop.
pub trait Machine: Send + Sync {
    fn name(&self) -> &str;
    /// The guest agent.
    fn guest(&self) -> &GuestClient;
    fn started(&self) -> &StartReport;
    /// The host process id, where there is one.
    fn pid(&self) -> Option<u32>;
    /// A PNG of the screen taken from the host side, without the guest agent.
    fn screenshot(&self) -> BoxFuture<'_, Result<Vec<u8>, ProviderError>>;
    /// Whether [`Machine::host_screenshot`] and [`Machine::host_settle`]
    /// work: frames taken on the host (QEMU's display), which cost the
    /// guest's CPU nothing.
    fn host_display(&self) -> bool {
        false
    }
    /// A PNG of the screen from the host's display, `cursor` drawn in.
    fn host_screenshot<'a>(
        &'a self,
        cursor: Option<&'a protocol::api::CursorImage>,
    ) -> BoxFuture<'a, Result<Vec<u8>, ProviderError>> {
        let _ = cursor;
        async move { Err(self.no_host_display()) }.boxed()
    }
    /// The guest's observation (`req`, its cursor image asked for) and, at
    /// the same time, the host's frame, the cursor drawn in: the PNG.
    fn host_observe<'a>(
        &'a self,
        req: &'a protocol::api::ObserveRequest,
    ) -> BoxFuture<'a, Result<(protocol::api::ObserveResponse, Vec<u8>), ProviderError>> {
        let _ = req;
        async move { Err(self.no_host_display()) }.boxed()
    }
    /// Waits on the host's display until the screen is quiet (`s.idle` is
    /// the guest's to measure and is not looked at).
    fn host_settle<'a>(
        &'a self,
        s: &'a protocol::api::Settle,
    ) -> BoxFuture<'a, Result<protocol::api::SettleReport, ProviderError>> {
        let _ = s;
        async move { Err(self.no_host_display()) }.boxed()
    }
    #[doc(hidden)]
    fn no_host_display(&self) -> ProviderError {
        ProviderError::Config(format!(
            "machine {}: its provider has no host-side display",
            self.name()
        ))
    }
    /// Fails with a clear error when the machine is gone (QEMU exited).
    fn check(&self) -> Result<(), ProviderError>;
    /// Why the machine does not answer, checked from the outside in: the
    /// host process, then (QEMU) the monitor, then the guest agent's
    /// health. `None` when every layer answers.
    fn diagnose(&self) -> BoxFuture<'_, Option<String>> {
        async move {
            if let Err(e) = self.check() {
                return Some(error_chain(&e));
            }
            agent_health_problem(self.guest()).await
        }
        .boxed()
    }
    /// Saves the running state (memory, devices, disk) into `dir`, the
    /// machine paused for the moment of the save and running on after it;
    /// [`Provider::start_from_checkpoint`] starts a machine from it.
    fn checkpoint<'a>(&'a self, dir: &'a Path) -> BoxFuture<'a, Result<(), ProviderError>> {
        let _ = dir;
        async move {
            Err(ProviderError::Config(format!(
                "machine {}: this provider cannot save checkpoints",
                self.name()
            )))
        }
        .boxed()
    }
    /// Ends the machine and removes its files.
    fn shutdown(self: Box<Self>) -> BoxFuture<'static, ()>;
    /// Ends the machine at once, synchronously (used on drop).
    fn kill_now(&self);
}

/// Hands out fresh machines.
pub trait Provider: Send + Sync {
    /// `qemu`, `local`, …
    fn kind(&self) -> &'static str;
    /// Starts a fresh machine called `name`.
    fn start<'a>(&'a self, name: &'a str)
        -> BoxFuture<'a, Result<Box<dyn Machine>, ProviderError>>;
    /// Whether two machines at once share nothing an application keeps in
    /// `/tmp` (LibreOffice's pipe), so that any two tasks can run side by
    /// side.
    fn isolates_tmp(&self) -> bool {
        true
    }
    /// Whether its machines save checkpoints ([`Machine::checkpoint`]).
    fn can_checkpoint(&self) -> bool {
        false
    }
    /// Starts a machine called `name` from a checkpoint in `dir`.
    fn start_from_checkpoint<'a>(
        &'a self,
        name: &'a str,
        dir: &'a Path,
    ) -> BoxFuture<'a, Result<Box<dyn Machine>, ProviderError>> {
        let _ = (name, dir);
        async move {
            Err(ProviderError::Config(format!(
                "the {} provider cannot start from checkpoints",
                self.kind()
            )))
        }
        .boxed()
    }
}

/// Checks a machine name (it names a folder): 1-64 letters, digits, `-`,
/// `_` or `.`, not starting with a dot. `what` says whose (`VM`, `machine`).
pub(crate) fn check_name(what: &str, name: &str) -> Result<(), ProviderError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
        && !name.starts_with('.');
    if ok {
        Ok(())
    } else {
        Err(ProviderError::Config(format!(
            "{what} name `{name}`: expected 1-64 characters of letters, digits, '-', '_' or '.'"
        )))
    }
}

/// A number unique within this process (folder names).
pub(crate) fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// How long a diagnosis waits for the guest agent's health.
pub const HEALTH_TIMEOUT: Duration = Duration::from_secs(5);

/// `None` when the guest agent answers `/v1/health`, else what went wrong.
pub async fn agent_health_problem(agent: &GuestClient) -> Option<String> {
    match agent.health(HEALTH_TIMEOUT).await {
        Ok(_) => None,
        Err(GuestError::Unreachable { cause, .. }) if cause.is_timeout() => Some(format!(
            "the guest agent at {} does not answer /v1/health within {HEALTH_TIMEOUT:?}",
            agent.base()
        )),
        Err(e) => Some(format!("the guest agent does not answer: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chain_names_each_cause_once() {
        let io = ProviderError::Io {
            context: "writing /x/owner.json".into(),
            source: std::io::Error::other("No space left on device"),
        };
        let kept = io.with_logs("/cache/failed/1-vm".into());
        assert_eq!(
            kept.to_string(),
            "writing /x/owner.json\n(logs kept in /cache/failed/1-vm)"
        );
        assert_eq!(
            error_chain(&kept),
            "writing /x/owner.json\n(logs kept in /cache/failed/1-vm): No space left on device"
        );
        assert_eq!(
            format!("{:#}", anyhow::Error::new(kept))
                .matches("No space")
                .count(),
            1
        );
    }

    #[test]
    fn provider_errors_are_found_through_kept_logs() {
        let e = ProviderError::from(qemu::QemuError::KvmHang {
            vm: "a".into(),
            after: Duration::from_secs(20),
        })
        .with_logs("/l".into());
        assert!(matches!(
            e.start_error::<qemu::QemuError>(),
            Some(qemu::QemuError::KvmHang { .. })
        ));
        assert!(e.start_error::<local::LocalError>().is_none());
        assert_eq!(
            Phase::ColdBootTotal.find(&[("cold boot total".into(), 2.5)]),
            Some(2.5)
        );
    }
}
