//! One start: a VM folder with an overlay, QEMU spawned in it, then a
//! cold boot to a healthy agent or a restore from the ready snapshot.

use super::cmdline::{free_port, shell_join, Ram};
use super::{write_owner, Accel, Lifetime, QemuError, QemuProvider, QemuVm};
use crate::error_chain;
use crate::provider::qemu::snapshot::{FileLock, Snapshot, SnapshotMeta};
use crate::provider::{io, reaper, unique, ProviderError, StartEvent, StartPath, StartReport};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Instant;

impl QemuProvider {
    /// One start under `accel`: restore (the snapshot made first if there
    /// is none for these inputs), or a cold boot without snapshots.
    pub(super) async fn start_with(
        &self,
        name: &str,
        lifetime: Lifetime,
        accel: Accel,
        watchdog: bool,
        notes: &mut Vec<String>,
        events: &mut Vec<StartEvent>,
    ) -> Result<QemuVm, ProviderError> {
        if !self.config.use_snapshot {
            return self.cold_boot(name, lifetime, accel, watchdog, false).await;
        }
        let (snap, meta) = self.ensure_snapshot(accel, watchdog, notes, events).await?;
        self.restore(name, lifetime, &snap, &meta).await
    }

    /// Finds the complete ready snapshot for `accel`, or makes it (one
    /// process at a time, under a file lock).
    pub(super) async fn ensure_snapshot(
        &self,
        accel: Accel,
        watchdog: bool,
        notes: &mut Vec<String>,
        events: &mut Vec<StartEvent>,
    ) -> Result<(Snapshot, SnapshotMeta), ProviderError> {
        let (snap, inputs) = self.snapshot_for(accel);
        if let Some(meta) = snap.meta() {
            if meta.inputs == inputs {
                return Ok((snap, meta));
            }
        }
        let lock_path = crate::paths::snapshots_dir(&self.cache).join("create.lock");
        let _lock = FileLock::acquire(lock_path)
            .await
            .map_err(|e| QemuError::Snapshot {
                dir: crate::paths::snapshots_dir(&self.cache)
                    .display()
                    .to_string(),
                message: error_chain(&e),
            })?;
        // Another process may have made it while we waited.
        if let Some(meta) = snap.meta() {
            return Ok((snap, meta));
        }
        let t = Instant::now();
        let name = format!("snapshot-{}", std::process::id());
        let vm = self
            .cold_boot(&name, Lifetime::Guarded, accel, watchdog, true)
            .await?;
        let boot = vm.started.clone();
        let meta = self.save_snapshot(vm, &snap, inputs, boot).await?;
        notes.push(format!(
            "created the ready snapshot {} in {:.1}s (cold boot, warm-up, save)",
            snap.dir.display(),
            t.elapsed().as_secs_f64()
        ));
        events.push(StartEvent::CreatedReadySnapshot);
        Ok((snap, meta))
    }

    /// A new VM folder with an overlay over `backing`.
    pub(super) async fn prepare_dir(
        &self,
        name: &str,
        lifetime: Lifetime,
        backing: &Path,
    ) -> Result<(PathBuf, f64), ProviderError> {
        let vms = crate::paths::vms_dir(&self.cache);
        let dir = match lifetime {
            Lifetime::Detached => vms.join(name),
            Lifetime::Guarded => vms.join(format!("{name}-{}-{}", std::process::id(), unique())),
        };
        if lifetime == Lifetime::Detached && dir.exists() {
            return Err(ProviderError::Config(format!(
                "a VM named `{name}` exists already ({}); `deskenv vm down --name {name}` first",
                dir.display()
            )));
        }
        if lifetime == Lifetime::Guarded {
            reaper::register_dir(&dir);
        }
        let made = async {
            std::fs::create_dir_all(&dir).map_err(io(format!("creating {}", dir.display())))?;
            let owner = reaper::Owner {
                controller_pid: (lifetime == Lifetime::Guarded).then(std::process::id),
                qemu_pid: None,
            };
            write_owner(&dir, &owner)?;
            let t = Instant::now();
            let out = tokio::process::Command::new("qemu-img")
                .args(["create", "-q", "-f", "qcow2", "-F", "qcow2", "-b"])
                .arg(backing)
                .arg(dir.join("overlay.qcow2"))
                .output()
                .await
                .map_err(io("running qemu-img create"))?;
            if !out.status.success() {
                return Err(ProviderError::Config(format!(
                    "qemu-img create over {} failed: {}",
                    backing.display(),
                    String::from_utf8_lossy(&out.stderr).trim()
                )));
            }
            Ok(t.elapsed().as_secs_f64())
        }
        .await;
        match made {
            Ok(seconds) => Ok((dir, seconds)),
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                reaper::unregister_dir(&dir);
                Err(e)
            }
        }
    }

    /// A VM folder with an overlay over `backing` and QEMU started in it
    /// (device and instance arguments, then `extra`); the overlay's
    /// creation time is returned too.
    pub(super) async fn launch(
        &self,
        name: &str,
        lifetime: Lifetime,
        accel: Accel,
        backing: &Path,
        ram: Ram<'_>,
        extra: &[&str],
    ) -> Result<(QemuVm, f64), ProviderError> {
        let (dir, overlay_s) = self.prepare_dir(name, lifetime, backing).await?;
        let port = match free_port() {
            Ok(p) => p,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                reaper::unregister_dir(&dir);
                return Err(e);
            }
        };
        let mut args = self.device_args(accel);
        args.extend(self.instance_args(name, &dir, port));
        // A shared RAM file lives in the VM's folder until the snapshot
        // takes it.
        let shared = dir.join("ram");
        args.extend(self.ram_args(match ram {
            Ram::Shared(_) => Ram::Shared(&shared),
            r => r,
        }));
        args.extend(extra.iter().map(|a| a.to_string()));
        match self.spawn_qemu(&dir, name, args, lifetime) {
            Ok(child) => {
                let mut vm = QemuVm::new(name, dir, child, port, lifetime, accel);
                vm.ram_file = self.config.ram_file;
                Ok((vm, overlay_s))
            }
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                reaper::unregister_dir(&dir);
                Err(e)
            }
        }
    }

    pub(super) fn spawn_qemu(
        &self,
        dir: &Path,
        name: &str,
        args: Vec<String>,
        lifetime: Lifetime,
    ) -> Result<Child, ProviderError> {
        let log = std::fs::File::create(dir.join("qemu.log"))
            .map_err(io(format!("creating {}/qemu.log", dir.display())))?;
        let log2 = log.try_clone().map_err(io("qemu.log"))?;
        let mut cmd = std::process::Command::new(&self.config.binary);
        cmd.args(&args)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log2);
        std::fs::write(
            dir.join("cmdline"),
            shell_join(&self.config.binary.display().to_string(), &args),
        )
        .map_err(io("writing cmdline"))?;
        let child = match lifetime {
            Lifetime::Guarded => reaper::spawn_guarded(cmd),
            Lifetime::Detached => reaper::spawn_detached(cmd),
        }
        .map_err(io(format!(
            "starting {} for VM {name}",
            self.config.binary.display()
        )))?;
        if lifetime == Lifetime::Guarded {
            reaper::register_pid(dir, child.id());
        }
        let owner = reaper::Owner {
            controller_pid: (lifetime == Lifetime::Guarded).then(std::process::id),
            qemu_pid: Some(child.id()),
        };
        write_owner(dir, &owner)?;
        Ok(child)
    }

    /// Boots a new overlay over the image until the agent is healthy.
    pub(super) async fn cold_boot(
        &self,
        name: &str,
        lifetime: Lifetime,
        accel: Accel,
        watchdog: bool,
        for_snapshot: bool,
    ) -> Result<QemuVm, ProviderError> {
        let t0 = Instant::now();
        let mut phases = Vec::new();
        // The folder's own `ram` (the path is fixed by `launch`).
        let ram = if for_snapshot {
            Ram::Shared(Path::new("ram"))
        } else {
            Ram::Anonymous
        };
        let mut attempt = 0;
        loop {
            attempt += 1;
            let (mut vm, overlay_s) = self
                .launch(name, lifetime, accel, &self.image.base(), ram, &[])
                .await?;
            phases.push(("overlay".to_string(), overlay_s));
            let port = vm.port;
            let r = async {
                vm.connect_qmp().await?;
                vm.wait_booted(self, watchdog, t0, &mut phases).await
            }
            .await;
            match r {
                Ok(()) => {
                    vm.started = StartReport {
                        path: StartPath::ColdBoot,
                        seconds: t0.elapsed().as_secs_f64(),
                        phases,
                        notes: vec![format!("accelerator {}", accel.as_str())],
                        events: vec![],
                    };
                    return Ok(vm);
                }
                Err(e) => {
                    let port_clash = vm.log_tail(5).contains("host forwarding rule");
                    if port_clash && attempt < 4 {
                        vm.destroy();
                        tracing::warn!(
                            "port {port} was taken before QEMU bound it; retrying with another"
                        );
                        continue;
                    }
                    if matches!(e.start_error(), Some(QemuError::KvmHang { .. })) {
                        vm.destroy();
                        return Err(e);
                    }
                    let logs = vm.keep_logs(&self.cache);
                    vm.destroy();
                    if matches!(e.start_error(), Some(QemuError::BootStalled { .. })) && attempt < 2
                    {
                        eprintln!("deskenv: {e}\ndeskenv: logs kept in {logs}; booting once more");
                        tracing::warn!("boot stalled; retrying once");
                        phases.clear();
                        continue;
                    }
                    return Err(e.with_logs(logs));
                }
            }
        }
    }

    /// A new VM restored from the ready snapshot.
    pub(super) async fn restore(
        &self,
        name: &str,
        lifetime: Lifetime,
        snap: &Snapshot,
        meta: &SnapshotMeta,
    ) -> Result<QemuVm, ProviderError> {
        let t0 = Instant::now();
        snap.check(meta).map_err(|e| QemuError::Snapshot {
            dir: snap.dir.display().to_string(),
            message: e.to_string(),
        })?;
        let accel = if meta.inputs.accel == "kvm" {
            Accel::Kvm
        } else {
            Accel::Tcg
        };
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut phases = Vec::new();
            let t = Instant::now();
            // A ready snapshot's RAM file, mapped; a checkpoint has none
            // (its stream holds the RAM).
            let ram_file = snap.ram();
            let ram = if meta.ram_bytes > 0 {
                Ram::Private(&ram_file)
            } else {
                Ram::Anonymous
            };
            let (mut vm, overlay_s) = self
                .launch(
                    name,
                    lifetime,
                    accel,
                    &snap.disk(),
                    ram,
                    &["-incoming", "defer"],
                )
                .await?;
            phases.push(("overlay".to_string(), overlay_s));
            let r = async {
                vm.connect_qmp().await?;
                phases.push(("start qemu".into(), t.elapsed().as_secs_f64() - overlay_s));
                vm.incoming(
                    snap,
                    self.config.restore_timeout,
                    self.config.ram_file,
                    &mut phases,
                )
                .await?;
                phases.push((restore_path_phase(&ram).into(), 0.0));
                vm.wait_healthy(
                    self,
                    Instant::now() + self.config.restore_timeout,
                    &mut phases,
                )
                .await?;
                vm.set_clock(self, &mut phases).await
            }
            .await;
            match r {
                Ok(()) => {
                    vm.started = StartReport {
                        path: StartPath::Restore,
                        seconds: t0.elapsed().as_secs_f64(),
                        phases,
                        notes: vec![],
                        events: vec![],
                    };
                    vm.restored_from = Some(meta.clone());
                    return Ok(vm);
                }
                Err(e) => {
                    let port_clash = vm.log_tail(5).contains("host forwarding rule");
                    let tail = vm.log_tail(10);
                    if port_clash && attempt < 4 {
                        vm.destroy();
                        continue;
                    }
                    let logs = vm.keep_logs(&self.cache);
                    vm.destroy();
                    let restoring = matches!(e, ProviderError::Exited { .. })
                        || matches!(e.start_error(), Some(QemuError::Qmp { .. }))
                        || matches!(
                            e.start_error(),
                            Some(QemuError::Timeout { what, .. }) if what.contains("incoming migration")
                        );
                    let e = if restoring {
                        QemuError::Snapshot {
                            dir: snap.dir.display().to_string(),
                            message: format!(
                                "restoring {} failed ({}); QEMU said: {tail} (if the file is damaged: `deskenv snapshot clear`)",
                                snap.state().display(),
                                error_chain(&e)
                            ),
                        }
                        .into()
                    } else {
                        e
                    };
                    return Err(e.with_logs(logs));
                }
            }
        }
    }
}

/// The restore's path, as a zero-length phase in the start report (and so
/// in run.json's start figures): `restore path: ram file` or `… zstd`.
fn restore_path_phase(ram: &Ram<'_>) -> &'static str {
    match ram {
        Ram::Private(_) => "restore path: ram file",
        _ => "restore path: zstd",
    }
}
