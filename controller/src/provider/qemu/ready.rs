//! Readiness, probed and never slept for: QMP, the serial console's boot
//! markers, the guest agent's health; a restore's incoming migration and
//! the guest clock.

use super::cmdline::shell_quote;
use super::{QemuError, QemuProvider, QemuVm};
use crate::provider::qemu::qmp::Qmp;
use crate::provider::qemu::serial::SerialLog;
use crate::provider::qemu::snapshot::Snapshot;
use crate::provider::{agent_err, ProviderError};
use std::time::{Duration, Instant};

impl QemuVm {
    pub(super) async fn connect_qmp(&mut self) -> Result<(), ProviderError> {
        let path = self.dir.join("qmp.sock");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(s) = self.exit_status() {
                return Err(self.exited_error(s));
            }
            match Qmp::connect(&path, Duration::from_millis(200)).await {
                Ok(q) => {
                    *self.qmp.lock().await = Some(q);
                    return Ok(());
                }
                Err(e) if Instant::now() > deadline => {
                    return Err(QemuError::Qmp {
                        vm: self.name.clone(),
                        source: e,
                    }
                    .into())
                }
                Err(_) => {}
            }
        }
    }

    /// Serial markers during the boot, then the agent's health.
    pub(super) async fn wait_booted(
        &self,
        p: &QemuProvider,
        watchdog: bool,
        t0: Instant,
        phases: &mut Vec<(String, f64)>,
    ) -> Result<(), ProviderError> {
        let markers = &p.image.manifest.guest.markers;
        let mut serial = SerialLog::new(&self.dir.join("serial.log"));
        let deadline = t0 + p.config.boot_timeout;
        let steps = [
            ("kernel", "Linux version"),
            ("systemd", "Welcome to"),
            ("multi-user", markers.multiuser.as_str()),
            ("X ready", markers.x_ready.as_str()),
            ("agent ready", markers.agent_ready.as_str()),
        ];
        let mut next = 0;
        let mut last_step = Instant::now();
        while next < steps.len() {
            serial.poll();
            while next < steps.len() && serial.marker(steps[next].1).is_some() {
                phases.push((steps[next].0.to_string(), t0.elapsed().as_secs_f64()));
                next += 1;
                last_step = Instant::now();
            }
            if next == steps.len() {
                break;
            }
            if let Some(s) = self.exit_status() {
                return Err(self.exited_error(s));
            }
            if let Some(line) = serial.failure(&markers.error) {
                return Err(QemuError::Guest {
                    vm: self.name.clone(),
                    line,
                }
                .into());
            }
            if !(watchdog && serial.is_empty()) && last_step.elapsed() > p.config.boot_stall {
                return Err(QemuError::BootStalled {
                    vm: self.name.clone(),
                    after: if next == 0 {
                        "QEMU start".into()
                    } else {
                        steps[next - 1].1.to_string()
                    },
                    waited: p.config.boot_stall,
                    serial: serial.tail(30),
                }
                .into());
            }
            if watchdog && serial.is_empty() && t0.elapsed() > p.config.kvm_watchdog {
                return Err(QemuError::KvmHang {
                    vm: self.name.clone(),
                    after: p.config.kvm_watchdog,
                }
                .into());
            }
            if Instant::now() > deadline {
                return Err(QemuError::Timeout {
                    vm: self.name.clone(),
                    what: format!("boot marker `{}`", steps[next].1),
                    after: p.config.boot_timeout,
                    serial: serial.tail(20),
                }
                .into());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self.wait_healthy(p, deadline, phases).await
    }

    /// Polls `/v1/health` until the screen has the image's size and AT-SPI
    /// is up.
    pub(super) async fn wait_healthy(
        &self,
        p: &QemuProvider,
        deadline: Instant,
        phases: &mut Vec<(String, f64)>,
    ) -> Result<(), ProviderError> {
        let t = Instant::now();
        let want = p.image.manifest.guest.screen;
        let mut last;
        loop {
            if let Some(s) = self.exit_status() {
                return Err(self.exited_error(s));
            }
            match self.agent.health(Duration::from_secs(3)).await {
                Ok(h)
                    if h.atspi
                        && h.screen.width == want.width
                        && h.screen.height == want.height =>
                {
                    break
                }
                Ok(h) => {
                    last = format!(
                        "screen {}x{}, atspi {} {}",
                        h.screen.width,
                        h.screen.height,
                        h.atspi,
                        h.atspi_error.unwrap_or_default()
                    )
                }
                Err(e) => last = e.to_string(),
            }
            if Instant::now() > deadline {
                let mut serial = SerialLog::new(&self.dir.join("serial.log"));
                serial.poll();
                return Err(QemuError::Timeout {
                    vm: self.name.clone(),
                    what: format!("a healthy guest agent ({want:?}, AT-SPI up; last: {last})"),
                    after: deadline.saturating_duration_since(t),
                    serial: serial.tail(10),
                }
                .into());
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        phases.push(("agent healthy".into(), t.elapsed().as_secs_f64()));
        Ok(())
    }

    /// `migrate-incoming` from the snapshot's state, then `cont`.
    pub(super) async fn incoming(
        &self,
        snap: &Snapshot,
        timeout: Duration,
        ignore_shared: bool,
        phases: &mut Vec<(String, f64)>,
    ) -> Result<(), ProviderError> {
        let t = Instant::now();
        let mut guard = self.qmp.lock().await;
        let q = guard.as_mut().expect("qmp connected");
        let qerr = |source| {
            ProviderError::from(QemuError::Qmp {
                vm: self.name.clone(),
                source,
            })
        };
        let uri = format!(
            "exec:zstd -d -c -q {}",
            shell_quote(&snap.state().display().to_string())
        );
        if ignore_shared {
            super::save::set_ignore_shared(q).await.map_err(qerr)?;
        }
        q.execute("migrate-incoming", Some(serde_json::json!({ "uri": uri })))
            .await
            .map_err(qerr)?;
        // A state file without the RAM loads in well under a second; QEMU
        // 10 may wait on, in `inmigrate`, when such a file is damaged (the
        // decompressor fails before writing a byte), so its wait is short.
        let small = std::fs::metadata(snap.state())
            .map(|m| m.len() < 64 << 20)
            .unwrap_or(false);
        let timeout = if small {
            timeout.min(Duration::from_secs(20))
        } else {
            timeout
        };
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(s) = self.exit_status() {
                return Err(self.exited_error(s));
            }
            let status = match q.status().await {
                Ok(s) => s,
                Err(e) => {
                    // QEMU exits when the incoming stream is bad.
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    if let Some(s) = self.exit_status() {
                        return Err(self.exited_error(s));
                    }
                    return Err(qerr(e));
                }
            };
            match status.as_str() {
                "inmigrate" => {}
                "paused" | "postmigrate" | "prelaunch" => break,
                "running" => break,
                other => {
                    return Err(QemuError::Snapshot {
                        dir: snap.dir.display().to_string(),
                        message: format!(
                            "after loading {} the VM is `{other}`",
                            snap.state().display()
                        ),
                    }
                    .into())
                }
            }
            if Instant::now() > deadline {
                return Err(QemuError::Timeout {
                    vm: self.name.clone(),
                    what: "the end of the incoming migration".into(),
                    after: timeout,
                    serial: String::new(),
                }
                .into());
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        phases.push(("load state".into(), t.elapsed().as_secs_f64()));
        let t = Instant::now();
        q.execute("cont", None).await.map_err(qerr)?;
        phases.push(("cont".into(), t.elapsed().as_secs_f64()));
        Ok(())
    }

    /// Sets the guest clock to the host's (it restarts at snapshot time).
    pub(super) async fn set_clock(
        &self,
        p: &QemuProvider,
        phases: &mut Vec<(String, f64)>,
    ) -> Result<(), ProviderError> {
        if p.image.manifest.guest.clock != "agent" {
            return Ok(());
        }
        let t = Instant::now();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        self.agent
            .set_clock(now.as_millis() as u64)
            .await
            .map_err(agent_err(&format!("VM {}", self.name)))?;
        phases.push(("set clock".into(), t.elapsed().as_secs_f64()));
        Ok(())
    }
}
