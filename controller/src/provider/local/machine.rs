//! A started local desktop, as the [`Machine`] the rest of the controller
//! uses.

use super::supervise::{Desktop, INIT_PROC};
use crate::guest_client::GuestClient;
use crate::provider::{agent_err, Machine, ProviderError, StartReport};
use futures::future::BoxFuture;
use futures::FutureExt;
use std::path::Path;

/// A local desktop.
pub struct LocalMachine {
    pub(super) desk: Desktop,
    pub(super) agent: GuestClient,
    pub(super) agent_pid: Option<u32>,
    pub(super) started: StartReport,
}

impl std::fmt::Debug for LocalMachine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalMachine")
            .field("name", &self.desk.name)
            .field("display", &self.desk.display)
            .field("agent", &self.agent.base())
            .finish()
    }
}

impl LocalMachine {
    /// The machine's folder (logs, X authority file, runtime dir).
    pub fn dir(&self) -> &Path {
        &self.desk.dir
    }

    /// The X display number.
    pub fn display(&self) -> u32 {
        self.desk.display.expect("a started machine has a display")
    }

    /// The value of `DESKENV_LOCAL_MACHINE` in every process of this machine.
    pub fn marker(&self) -> &str {
        &self.desk.marker
    }

    /// Host pid of the namespace's init, when the machine has namespaces.
    pub fn namespace_init(&self) -> Option<u32> {
        self.desk.init
    }

    /// The machine's own programs and their host pids (Xvfb, dbus-daemon,
    /// openbox, …, the agent).
    pub fn programs(&self) -> Vec<(&'static str, u32)> {
        let names: Vec<&'static str> = self
            .desk
            .procs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|p| p.what)
            .collect();
        names
            .into_iter()
            .filter_map(|w| self.desk.program_pid(w).map(|p| (w, p)))
            .collect()
    }

    /// Ends the machine now (what `kill_now` and a drop do).
    pub fn destroy(&self) {
        self.desk.destroy();
    }
}

impl Machine for LocalMachine {
    fn name(&self) -> &str {
        &self.desk.name
    }

    fn guest(&self) -> &GuestClient {
        &self.agent
    }

    fn started(&self) -> &StartReport {
        &self.started
    }

    fn pid(&self) -> Option<u32> {
        self.agent_pid.or_else(|| self.desk.program_pid("Xvfb"))
    }

    fn screenshot(&self) -> BoxFuture<'_, Result<Vec<u8>, ProviderError>> {
        async move {
            self.check()?;
            self.agent
                .screenshot()
                .await
                .map_err(agent_err(&format!("local machine {}", self.desk.name)))
        }
        .boxed()
    }

    fn check(&self) -> Result<(), ProviderError> {
        let mut watch = vec!["Xvfb", "deskenv-agent"];
        if self.desk.init.is_some() {
            watch.push(INIT_PROC);
        }
        for w in watch {
            if let Some(e) = self.desk.exit_error(w) {
                return Err(e);
            }
        }
        Ok(())
    }

    fn shutdown(self: Box<Self>) -> BoxFuture<'static, ()> {
        async move {
            let _ = tokio::task::spawn_blocking(move || self.desk.destroy()).await;
        }
        .boxed()
    }

    fn kill_now(&self) {
        self.desk.destroy();
    }
}
