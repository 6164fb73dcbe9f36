//! A running QEMU VM: its process, QMP connection and guest agent, and
//! how it ends.

use super::{Accel, Lifetime};
use crate::error_chain;
use crate::guest_client::GuestClient;
use crate::provider::process::{describe_status, keep_logs, log_tail};
use crate::provider::qemu::display;
use crate::provider::qemu::qmp::Qmp;
use crate::provider::{reaper, Machine, ProviderError, StartPath, StartReport};
use futures::future::BoxFuture;
use futures::FutureExt;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A QEMU VM.
pub struct QemuVm {
    pub(super) name: String,
    pub(super) dir: PathBuf,
    /// Its screendumps (in RAM where there is a /dev/shm).
    pub(super) dump_path: PathBuf,
    pub(super) child: Mutex<Option<Child>>,
    pub(super) pid: u32,
    pub(super) port: u16,
    pub(super) lifetime: Lifetime,
    pub(super) accel: Accel,
    pub(super) qmp: tokio::sync::Mutex<Option<Qmp>>,
    pub(super) agent: GuestClient,
    pub(super) started: StartReport,
    /// The snapshot (or checkpoint) it was restored from; None: cold-booted.
    pub(super) restored_from: Option<super::snapshot::SnapshotMeta>,
    /// Its migrations leave shared RAM files out (`QemuConfig::ram_file`).
    pub(super) ram_file: bool,
    pub(super) destroyed: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for QemuVm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QemuVm")
            .field("name", &self.name)
            .field("pid", &self.pid)
            .field("port", &self.port)
            .finish()
    }
}

impl QemuVm {
    pub(super) fn new(
        name: &str,
        dir: PathBuf,
        child: Child,
        port: u16,
        lifetime: Lifetime,
        accel: Accel,
    ) -> QemuVm {
        QemuVm {
            name: name.to_string(),
            dump_path: display::dump_path(&dir, name),
            dir,
            pid: child.id(),
            child: Mutex::new(Some(child)),
            port,
            lifetime,
            accel,
            qmp: tokio::sync::Mutex::new(None),
            agent: GuestClient::new(&format!("http://127.0.0.1:{port}")),
            started: StartReport {
                path: StartPath::ColdBoot,
                seconds: 0.0,
                phases: vec![],
                notes: vec![],
                events: vec![],
            },
            restored_from: None,
            ram_file: false,
            destroyed: std::sync::atomic::AtomicBool::new(false),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn accel(&self) -> Accel {
        self.accel
    }

    pub(super) fn log_tail(&self, n: usize) -> String {
        log_tail(&self.dir.join("qemu.log"), n)
    }

    /// Copies the VM's logs to `<cache>/failed/<time>-<name>/` and
    /// returns that folder.
    pub(super) fn keep_logs(&self, cache: &Path) -> String {
        keep_logs(cache, &self.name, &self.dir, |p| {
            p.file_name().is_some_and(|f| {
                ["serial.log", "qemu.log", "cmdline"]
                    .iter()
                    .any(|k| f == *k)
            })
        })
    }

    /// `Some(status)` once the QEMU process has exited.
    pub(super) fn exit_status(&self) -> Option<String> {
        let mut guard = self.child.lock().unwrap_or_else(|e| e.into_inner());
        match guard.as_mut() {
            Some(c) => match c.try_wait() {
                Ok(Some(s)) => Some(describe_status(s)),
                Ok(None) => None,
                Err(e) => Some(format!("unknown: {e}")),
            },
            // Not our child (a named VM seen from another process).
            None => (!reaper::alive(self.pid)).then(|| "gone".to_string()),
        }
    }

    pub(super) fn exited_error(&self, status: String) -> ProviderError {
        ProviderError::Exited {
            machine: format!("VM {}", self.name),
            what: "QEMU",
            pid: self.pid,
            status,
            log: self.dir.join("qemu.log").display().to_string(),
            tail: self.log_tail(15),
        }
    }

    pub(super) async fn wait_exit(&self, within: Duration) {
        let deadline = Instant::now() + within;
        while self.exit_status().is_none() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Kills QEMU (if running) and removes the VM folder (once).
    pub(super) fn destroy(&self) {
        if self
            .destroyed
            .swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            return;
        }
        let child = self.child.lock().unwrap_or_else(|e| e.into_inner()).take();
        match child {
            Some(mut c) => {
                let _ = c.kill();
                let _ = c.wait();
            }
            None => {
                if reaper::alive(self.pid) && reaper::is_qemu(self.pid) {
                    unsafe {
                        libc::kill(self.pid as i32, libc::SIGKILL);
                    }
                }
            }
        }
        reaper::unregister_dir(&self.dir);
        let _ = std::fs::remove_dir_all(&self.dir);
        let _ = std::fs::remove_file(&self.dump_path);
    }

    /// Quits QEMU through QMP (kill after 5 s) and removes the folder.
    pub async fn stop(&self) {
        if self.exit_status().is_none() {
            let mut guard = self.qmp.lock().await;
            if let Some(q) = guard.as_mut() {
                let _ = q
                    .execute_with_timeout("quit", None, Duration::from_secs(2))
                    .await;
            }
            drop(guard);
            self.wait_exit(Duration::from_secs(5)).await;
        }
        self.destroy();
    }

    /// The record `deskenv vm list` reads (named VMs).
    pub fn record(&self) -> NamedRecord {
        NamedRecord {
            name: self.name.clone(),
            pid: self.pid,
            port: self.port,
            agent_url: self.agent.base().to_string(),
            qmp: self.dir.join("qmp.sock"),
            accel: self.accel,
            started: self.started.clone(),
            started_at: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
        }
    }

    /// Lets go of a detached VM: it keeps running after this process ends.
    pub fn detach(self) {
        let _ = self.child.lock().unwrap_or_else(|e| e.into_inner()).take();
        self.destroyed
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    fn no_qmp(&self) -> ProviderError {
        ProviderError::Unreachable {
            machine: format!("VM {}", self.name),
            what: "no QMP connection".into(),
            source: None,
        }
    }

    fn display_failed(&self, what: &str, e: display::DisplayError) -> ProviderError {
        ProviderError::Unreachable {
            machine: format!("VM {}", self.name),
            what: what.into(),
            source: Some(Box::new(e)),
        }
    }

    /// Where its screendumps go.
    pub fn dump_path(&self) -> &Path {
        &self.dump_path
    }

    /// The QMP connection, for host-side operations.
    pub async fn qmp(&self) -> tokio::sync::MutexGuard<'_, Option<Qmp>> {
        self.qmp.lock().await
    }
}

/// `vm.json` of a named VM.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NamedRecord {
    pub name: String,
    pub pid: u32,
    pub port: u16,
    pub agent_url: String,
    pub qmp: PathBuf,
    pub accel: Accel,
    pub started: StartReport,
    pub started_at: u64,
}

impl Machine for QemuVm {
    fn name(&self) -> &str {
        &self.name
    }

    fn guest(&self) -> &GuestClient {
        &self.agent
    }

    fn started(&self) -> &StartReport {
        &self.started
    }

    fn pid(&self) -> Option<u32> {
        Some(self.pid)
    }

    fn screenshot(&self) -> BoxFuture<'_, Result<Vec<u8>, ProviderError>> {
        self.host_screenshot(None)
    }

    fn host_display(&self) -> bool {
        true
    }

    fn host_screenshot<'a>(
        &'a self,
        cursor: Option<&'a protocol::api::CursorImage>,
    ) -> BoxFuture<'a, Result<Vec<u8>, ProviderError>> {
        async move {
            self.check()?;
            let mut guard = self.qmp.lock().await;
            let q = guard.as_mut().ok_or_else(|| self.no_qmp())?;
            display::screendump_png(q, &self.dump_path, cursor)
                .await
                .map(|s| s.png)
                .map_err(|e| self.display_failed("the host-side screendump failed", e))
        }
        .boxed()
    }

    fn host_observe<'a>(
        &'a self,
        req: &'a protocol::api::ObserveRequest,
    ) -> BoxFuture<'a, Result<(protocol::api::ObserveResponse, Vec<u8>), ProviderError>> {
        async move {
            self.check()?;
            let req = protocol::api::ObserveRequest {
                screenshot: false,
                cursor_image: true,
                ..req.clone()
            };
            let mut guard = self.qmp.lock().await;
            let q = guard.as_mut().ok_or_else(|| self.no_qmp())?;
            let (obs, frame) =
                tokio::join!(self.agent.observe(&req), display::grab(q, &self.dump_path));
            let obs = obs.map_err(|e| ProviderError::Unreachable {
                machine: format!("VM {}", self.name),
                what: "the guest agent's observe failed".into(),
                source: Some(Box::new(e)),
            })?;
            let mut f =
                frame.map_err(|e| self.display_failed("the host-side screendump failed", e))?;
            drop(guard);
            if let Some(c) = &obs.cursor_image {
                c.blend(&mut f.rgb, f.width, f.height, 3, [0, 1, 2]);
            }
            let png =
                tokio::task::spawn_blocking(move || display::encode_png(f.width, f.height, &f.rgb))
                    .await
                    .map_err(|e| {
                        self.display_failed(
                            "encoding the host's frame",
                            display::DisplayError::Png(e.to_string()),
                        )
                    })?
                    .map_err(|e| self.display_failed("encoding the host's frame", e))?;
            Ok((obs, png))
        }
        .boxed()
    }

    fn host_settle<'a>(
        &'a self,
        s: &'a protocol::api::Settle,
    ) -> BoxFuture<'a, Result<protocol::api::SettleReport, ProviderError>> {
        async move {
            self.check()?;
            let mut guard = self.qmp.lock().await;
            let q = guard.as_mut().ok_or_else(|| self.no_qmp())?;
            display::settle(q, &self.dump_path, s)
                .await
                .map_err(|e| self.display_failed("settling on the host's display failed", e))
        }
        .boxed()
    }

    fn checkpoint<'a>(&'a self, dir: &'a Path) -> BoxFuture<'a, Result<(), ProviderError>> {
        self.save_checkpoint(dir).boxed()
    }

    fn check(&self) -> Result<(), ProviderError> {
        match self.exit_status() {
            Some(s) => Err(self.exited_error(s)),
            None => Ok(()),
        }
    }

    fn diagnose(&self) -> BoxFuture<'_, Option<String>> {
        async move {
            if let Some(status) = self.exit_status() {
                return Some(format!(
                    "QEMU (pid {}) of VM {} {}",
                    self.pid,
                    self.name,
                    match status.as_str() {
                        s if s.starts_with("killed") => format!("was {s}"),
                        s => format!("exited ({s})"),
                    }
                ));
            }
            let qmp = match tokio::time::timeout(Duration::from_secs(5), self.qmp.lock()).await {
                Ok(mut guard) => match guard.as_mut() {
                    Some(q) => Some(
                        q.execute_with_timeout("query-status", None, Duration::from_secs(5))
                            .await,
                    ),
                    None => None,
                },
                Err(_) => {
                    return Some(format!(
                        "QEMU (pid {}) of VM {} is alive, but its QMP monitor has been busy for over 5 s",
                        self.pid, self.name
                    ))
                }
            };
            match qmp {
                Some(Err(e)) => {
                    return Some(format!(
                        "QEMU (pid {}) of VM {} is alive, but its QMP monitor does not answer: {}",
                        self.pid,
                        self.name,
                        error_chain(&e)
                    ))
                }
                Some(Ok(v)) => {
                    let status = v.get("status").and_then(|s| s.as_str()).unwrap_or("");
                    if status != "running" {
                        return Some(format!(
                            "VM {} (QEMU pid {}) is `{status}`, not running",
                            self.name, self.pid
                        ));
                    }
                }
                None => {}
            }
            crate::provider::agent_health_problem(&self.agent)
                .await
                .map(|p| format!("{p} (QEMU pid {} running, QMP answers)", self.pid))
        }
        .boxed()
    }

    fn shutdown(self: Box<Self>) -> BoxFuture<'static, ()> {
        async move { self.stop().await }.boxed()
    }

    fn kill_now(&self) {
        self.destroy();
    }
}

impl Drop for QemuVm {
    fn drop(&mut self) {
        if self.lifetime == Lifetime::Guarded {
            self.destroy();
        }
    }
}
