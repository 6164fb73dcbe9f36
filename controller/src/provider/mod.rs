//! The provider abstraction: something that hands out fresh desktops with
//! a guest agent in them. [`crate::provider::qemu::QemuProvider`] restores VMs from
//! the ready snapshot; [`crate::provider::local::LocalProvider`] starts a fresh
//! headless desktop on the host.

pub mod local;
pub mod qemu;
pub mod reaper;

use crate::agent_client::{AgentClient, AgentError};
use crate::image::ImageError;
use crate::provider::qemu::qmp::QmpError;
use futures::future::BoxFuture;
use futures::FutureExt;
use serde::Serialize;
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    #[error(transparent)]
    Image(#[from] ImageError),
    #[error("VM {vm}: {source}")]
    Qmp { vm: String, source: QmpError },
    #[error("VM {vm}: {source}")]
    Agent { vm: String, source: Box<AgentError> },
    #[error("VM {vm}: QEMU (pid {pid}) exited ({status}); last lines of {log}:\n{tail}")]
    Exited {
        vm: String,
        pid: u32,
        status: String,
        log: String,
        tail: String,
    },
    #[error("VM {vm}: {what} not reached within {after:?}; last serial console lines:\n{serial}")]
    Timeout {
        vm: String,
        what: String,
        after: Duration,
        serial: String,
    },
    #[error("VM {vm}: the guest reported a failure: {line}")]
    Guest { vm: String, line: String },
    #[error("ready snapshot {dir}: {message}")]
    Snapshot { dir: String, message: String },
    #[error("VM {vm}: KVM was chosen but the guest showed no boot progress within {after:?}")]
    KvmHang { vm: String, after: Duration },
    #[error("VM {vm}: the boot stalled: no progress for {waited:?} after `{after}`; last serial console lines:\n{serial}")]
    BootStalled {
        vm: String,
        after: String,
        waited: Duration,
        serial: String,
    },
    #[error("{source}\n(logs kept in {logs})")]
    WithLogs {
        source: Box<ProviderError>,
        logs: String,
    },
    #[error("{0}")]
    Config(String),
    #[error(transparent)]
    Local(Box<crate::provider::local::LocalError>),
    #[error("{context}: {source}")]
    Io {
        context: String,
        source: std::io::Error,
    },
}

pub(crate) fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> ProviderError {
    let context = context.into();
    move |source| ProviderError::Io { context, source }
}

pub(crate) fn agent_err(vm: &str) -> impl FnOnce(AgentError) -> ProviderError {
    let vm = vm.to_string();
    move |source| ProviderError::Agent {
        vm,
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
}

/// A running desktop.
pub trait Machine: Send + Sync {
    fn name(&self) -> &str;
    /// The guest agent.
    fn agent(&self) -> &AgentClient;
    fn started(&self) -> &StartReport;
    /// The host process id, where there is one.
    fn pid(&self) -> Option<u32>;
    /// A PNG of the screen taken from the host side, without the guest agent.
    fn screenshot(&self) -> BoxFuture<'_, Result<Vec<u8>, ProviderError>>;
    /// Fails with a clear error when the machine is gone (QEMU exited).
    fn check(&self) -> Result<(), ProviderError>;
    /// Why the machine does not answer, checked from the outside in: the
    /// host process, then (QEMU) the monitor, then the guest agent's
    /// health. `None` when every layer answers.
    fn diagnose(&self) -> BoxFuture<'_, Option<String>> {
        async move {
            if let Err(e) = self.check() {
                return Some(e.to_string());
            }
            agent_health_problem(self.agent()).await
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
pub async fn agent_health_problem(agent: &AgentClient) -> Option<String> {
    match agent.health(HEALTH_TIMEOUT).await {
        Ok(_) => None,
        Err(AgentError::Unreachable { source, .. }) if source.is_timeout() => Some(format!(
            "the guest agent at {} does not answer /v1/health within {HEALTH_TIMEOUT:?}",
            agent.base()
        )),
        Err(e) => Some(format!("the guest agent does not answer: {e}")),
    }
}
