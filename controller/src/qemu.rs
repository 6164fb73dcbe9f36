//! The QEMU provider: VMs on qcow2 overlays over the shared image, QMP over
//! a unix socket, the guest agent behind a host port forward on 127.0.0.1,
//! guest networking restricted to that forward.
//!
//! [`QemuProvider::start`] restores from the ready snapshot (creating it
//! first if there is none for these exact inputs: one cold boot, the
//! image's warm-up, `stop`, `migrate` into zstd, `quit`). A restore is a
//! new overlay on the snapshot's frozen disk, QEMU with the same device
//! arguments plus `-incoming defer`, `migrate-incoming`, `cont`, a health
//! probe, and the guest clock set to the host's (it stays at snapshot time
//! otherwise).
//!
//! Readiness is probed, never slept for: serial console markers during a
//! boot, then the guest agent's `/v1/health` (screen size, AT-SPI up).
//!
//! `--accel auto` tries KVM when `/dev/kvm` opens and falls back to TCG
//! when the guest shows no boot progress on its serial console within the
//! watchdog window (on some hosts /dev/kvm opens but guests hang at kernel
//! entry). The outcome is cached per host kernel and QEMU version in
//! `<cache>/accel.json`, so the watchdog costs its window once.

use crate::agent_client::AgentClient;
use crate::display;
use crate::image::Image;
use crate::provider::{agent_err, io, Machine, Provider, ProviderError, StartPath, StartReport};
use crate::qmp::Qmp;
use crate::reaper;
use crate::serial::SerialLog;
use crate::snapshot::{FileLock, KeyInputs, Snapshot, SnapshotMeta};
use futures::future::BoxFuture;
use futures::FutureExt;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The accelerator a VM runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Accel {
    Kvm,
    Tcg,
}

impl Accel {
    pub fn as_str(self) -> &'static str {
        match self {
            Accel::Kvm => "kvm",
            Accel::Tcg => "tcg",
        }
    }
}

/// `--accel auto|kvm|tcg`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AccelChoice {
    #[default]
    Auto,
    Kvm,
    Tcg,
}

impl std::str::FromStr for AccelChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(AccelChoice::Auto),
            "kvm" => Ok(AccelChoice::Kvm),
            "tcg" => Ok(AccelChoice::Tcg),
            other => Err(format!(
                "unknown accelerator `{other}`: expected auto, kvm or tcg"
            )),
        }
    }
}

/// Settings of the QEMU provider.
#[derive(Debug, Clone)]
pub struct QemuConfig {
    pub binary: PathBuf,
    pub accel: AccelChoice,
    /// Guest memory in MiB (part of the snapshot key).
    pub memory_mib: u32,
    pub smp: u32,
    pub cpu: String,
    /// Restore from the ready snapshot (false: cold boot every VM).
    pub use_snapshot: bool,
    /// Cold boot to a healthy agent.
    pub boot_timeout: Duration,
    /// Restore to a healthy agent.
    pub restore_timeout: Duration,
    /// KVM watchdog: no serial output within this long means a hang.
    pub kvm_watchdog: Duration,
    /// A cold boot with no new boot step for this long is stalled: it is
    /// killed and tried once more.
    pub boot_stall: Duration,
    /// The image's warm-up before the snapshot is saved.
    pub warmup_timeout: Duration,
}

impl Default for QemuConfig {
    fn default() -> Self {
        QemuConfig {
            binary: PathBuf::from("qemu-system-x86_64"),
            accel: AccelChoice::Auto,
            memory_mib: 3072,
            smp: 2,
            // QEMU 10 under multi-threaded TCG stalls the guest with the
            // default qemu64 CPU; "max" is the host CPU under KVM.
            cpu: "max".into(),
            use_snapshot: true,
            boot_timeout: Duration::from_secs(300),
            restore_timeout: Duration::from_secs(60),
            kvm_watchdog: Duration::from_secs(20),
            boot_stall: Duration::from_secs(90),
            warmup_timeout: Duration::from_secs(400),
        }
    }
}

/// The QEMU provider.
pub struct QemuProvider {
    pub image: Image,
    pub config: QemuConfig,
    cache: PathBuf,
    qemu_version: String,
    /// The resolved accelerator and why (once known).
    accel: tokio::sync::Mutex<Option<(Accel, String)>>,
}

impl std::fmt::Debug for QemuProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QemuProvider")
            .field("image", &self.image.dir)
            .field("config", &self.config)
            .finish()
    }
}

/// Cached outcome of the KVM probe (`<cache>/accel.json`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
struct AccelProbe {
    qemu_version: String,
    host_kernel: String,
    kvm_works: bool,
    reason: String,
}

/// Whether the VM dies with the controller (pool) or outlives it (named).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lifetime {
    Guarded,
    Detached,
}

impl QemuProvider {
    /// Checks the tools and reads QEMU's version.
    pub fn new(
        image: Image,
        config: QemuConfig,
        cache: PathBuf,
    ) -> Result<QemuProvider, ProviderError> {
        let out = std::process::Command::new(&config.binary)
            .arg("--version")
            .output()
            .map_err(|e| {
                ProviderError::Config(format!(
                    "cannot run {} ({e}): install QEMU (scripts/install-deps.sh)",
                    config.binary.display()
                ))
            })?;
        let qemu_version = String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap_or("")
            .trim()
            .to_string();
        for tool in ["qemu-img", "zstd"] {
            if std::process::Command::new(tool)
                .arg("--version")
                .output()
                .is_err()
            {
                return Err(ProviderError::Config(format!(
                    "`{tool}` is not installed (scripts/install-deps.sh)"
                )));
            }
        }
        if config.memory_mib < 512 {
            return Err(ProviderError::Config(format!(
                "memory {} MiB is too small (at least 512)",
                config.memory_mib
            )));
        }
        Ok(QemuProvider {
            image,
            config,
            cache,
            qemu_version,
            accel: tokio::sync::Mutex::new(None),
        })
    }

    pub fn cache(&self) -> &Path {
        &self.cache
    }

    pub fn qemu_version(&self) -> &str {
        &self.qemu_version
    }

    /// The device arguments: identical at save and restore.
    pub fn device_args(&self, accel: Accel) -> Vec<String> {
        let img = &self.image;
        let screen = img.manifest.guest.screen;
        let mut a: Vec<String> = vec![
            "-accel".into(),
            accel.as_str().into(),
            "-cpu".into(),
            self.config.cpu.clone(),
            "-m".into(),
            self.config.memory_mib.to_string(),
            "-smp".into(),
            self.config.smp.to_string(),
            "-kernel".into(),
            img.kernel().display().to_string(),
            "-initrd".into(),
            img.initrd().display().to_string(),
            "-append".into(),
            img.manifest.kernel_cmdline.clone(),
            "-vga".into(),
            "none".into(),
            "-device".into(),
            format!("virtio-vga,xres={},yres={}", screen.width, screen.height),
            "-display".into(),
            "none".into(),
            "-device".into(),
            "virtio-net-pci,netdev=n0".into(),
            "-monitor".into(),
            "none".into(),
            "-parallel".into(),
            "none".into(),
            "-rtc".into(),
            "base=utc".into(),
        ];
        a.shrink_to_fit();
        a
    }

    /// The per-VM arguments (paths and the port change between VMs).
    fn instance_args(&self, name: &str, dir: &Path, port: u16) -> Vec<String> {
        let agent_port = self.image.manifest.guest.agent_port;
        vec![
            "-name".into(),
            format!("deskenv-{name}"),
            "-drive".into(),
            format!(
                "file={},if=virtio,format=qcow2,cache=unsafe",
                dir.join("overlay.qcow2").display()
            ),
            "-netdev".into(),
            format!("user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:{port}-:{agent_port}"),
            "-qmp".into(),
            format!("unix:{},server=on,wait=off", dir.join("qmp.sock").display()),
            "-serial".into(),
            format!("file:{}", dir.join("serial.log").display()),
        ]
    }

    fn key_inputs(&self, accel: Accel) -> KeyInputs {
        KeyInputs {
            image_digest: self.image.digest(),
            qemu_version: self.qemu_version.clone(),
            accel: accel.as_str().into(),
            args: self.device_args(accel),
            warmup: self.image.manifest.guest.warmup.clone(),
        }
    }

    /// The snapshot for the current inputs (complete or not).
    pub async fn snapshot(&self) -> Result<(Snapshot, KeyInputs), ProviderError> {
        let accel = match *self.accel.lock().await {
            Some((a, _)) => a,
            None => self.guess_accel().0,
        };
        let inputs = self.key_inputs(accel);
        Ok((Snapshot::for_key(&self.cache, &inputs.key()), inputs))
    }

    /// The accelerator to try first, without booting: explicit, cached
    /// probe, or KVM when /dev/kvm opens.
    fn guess_accel(&self) -> (Accel, String) {
        match self.config.accel {
            AccelChoice::Kvm => (Accel::Kvm, "--accel kvm".into()),
            AccelChoice::Tcg => (Accel::Tcg, "--accel tcg".into()),
            AccelChoice::Auto => {
                if let Err(e) = std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .open("/dev/kvm")
                {
                    return (Accel::Tcg, format!("auto: /dev/kvm cannot be opened ({e})"));
                }
                if let Some(p) = self.cached_probe() {
                    return if p.kvm_works {
                        (
                            Accel::Kvm,
                            format!("auto: KVM worked before on this host ({})", p.reason),
                        )
                    } else {
                        (
                            Accel::Tcg,
                            format!("auto: KVM failed before on this host ({})", p.reason),
                        )
                    };
                }
                (
                    Accel::Kvm,
                    "auto: /dev/kvm opens; trying KVM with a boot watchdog".into(),
                )
            }
        }
    }

    fn probe_path(&self) -> PathBuf {
        self.cache.join("accel.json")
    }

    fn host_kernel() -> String {
        std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .unwrap_or_default()
            .trim()
            .to_string()
    }

    fn cached_probe(&self) -> Option<AccelProbe> {
        let p: AccelProbe =
            serde_json::from_str(&std::fs::read_to_string(self.probe_path()).ok()?).ok()?;
        (p.qemu_version == self.qemu_version && p.host_kernel == Self::host_kernel()).then_some(p)
    }

    fn record_probe(&self, kvm_works: bool, reason: &str) {
        let p = AccelProbe {
            qemu_version: self.qemu_version.clone(),
            host_kernel: Self::host_kernel(),
            kvm_works,
            reason: reason.to_string(),
        };
        let _ = std::fs::create_dir_all(&self.cache);
        let _ = std::fs::write(
            self.probe_path(),
            serde_json::to_string_pretty(&p).unwrap_or_default(),
        );
    }

    /// Starts a VM that outlives this process (`deskenv vm up`).
    pub async fn start_named(&self, name: &str) -> Result<QemuVm, ProviderError> {
        self.start_vm(name, Lifetime::Detached).await
    }

    /// Starts a VM: restore from the ready snapshot (made first if needed),
    /// or a cold boot when snapshots are off.
    pub async fn start_vm(&self, name: &str, lifetime: Lifetime) -> Result<QemuVm, ProviderError> {
        check_name(name)?;
        let t0 = Instant::now();
        reaper::sweep(&crate::paths::vms_dir(&self.cache));
        let mut notes = Vec::new();
        if !self.config.use_snapshot {
            let (vm, mut report) = self
                .cold_boot_resolving_accel(name, lifetime, &mut notes)
                .await?;
            report.notes = notes;
            report.seconds = t0.elapsed().as_secs_f64();
            let mut vm = vm;
            vm.started = report;
            return Ok(vm);
        }
        let (snap, meta) = self.ensure_snapshot(&mut notes).await?;
        let mut vm = self.restore(name, lifetime, &snap, &meta).await?;
        vm.started.notes.splice(0..0, notes);
        vm.started.seconds = t0.elapsed().as_secs_f64();
        if vm
            .started
            .notes
            .iter()
            .any(|n| n.starts_with("created the ready snapshot"))
        {
            vm.started.phases.insert(
                0,
                (
                    "create ready snapshot".into(),
                    t0.elapsed().as_secs_f64() - vm.started.phases.iter().map(|p| p.1).sum::<f64>(),
                ),
            );
        }
        Ok(vm)
    }

    /// A cold boot with `--accel auto` handling: KVM first when it may work,
    /// TCG after a watchdog timeout (recorded for next time).
    async fn cold_boot_resolving_accel(
        &self,
        name: &str,
        lifetime: Lifetime,
        notes: &mut Vec<String>,
    ) -> Result<(QemuVm, StartReport), ProviderError> {
        let mut resolved = self.accel.lock().await;
        if let Some((accel, _)) = resolved.clone() {
            // Known already: boot without holding the lock (parallel boots).
            drop(resolved);
            let vm = self.cold_boot(name, lifetime, accel, false).await?;
            let report = vm.started.clone();
            return Ok((vm, report));
        }
        // The first boot decides, while the others wait.
        let (accel, why) = self.guess_accel();
        let watchdog = self.config.accel == AccelChoice::Auto && accel == Accel::Kvm;
        match self.cold_boot(name, lifetime, accel, watchdog).await {
            Ok(vm) => {
                tracing::info!(
                    accel = accel.as_str(),
                    "accelerator: {} ({why})",
                    accel.as_str()
                );
                notes.push(format!("accelerator {} ({why})", accel.as_str()));
                if watchdog {
                    self.record_probe(true, "the guest booted under KVM");
                }
                *resolved = Some((accel, why));
                let report = vm.started.clone();
                Ok((vm, report))
            }
            Err(ProviderError::KvmHang { after, .. }) => {
                let reason = format!("/dev/kvm opens but the guest printed nothing on its serial console within {after:?} under KVM");
                tracing::warn!("accelerator: falling back to TCG: {reason}");
                eprintln!("deskenv: KVM chosen, but {reason}; falling back to TCG");
                notes.push(format!("accelerator tcg (fell back from KVM: {reason})"));
                self.record_probe(false, &reason);
                *resolved = Some((Accel::Tcg, format!("auto: fell back from KVM: {reason}")));
                drop(resolved);
                let vm = self.cold_boot(name, lifetime, Accel::Tcg, false).await?;
                let report = vm.started.clone();
                Ok((vm, report))
            }
            Err(e) => Err(e),
        }
    }

    /// Finds the complete ready snapshot for the current inputs, or makes
    /// it (one process at a time, under a file lock).
    async fn ensure_snapshot(
        &self,
        notes: &mut Vec<String>,
    ) -> Result<(Snapshot, SnapshotMeta), ProviderError> {
        let (snap, _) = self.snapshot().await?;
        if let Some(meta) = snap.meta() {
            if meta.inputs == self.snapshot().await?.1 {
                return Ok((snap, meta));
            }
        }
        let lock_path = crate::paths::snapshots_dir(&self.cache).join("create.lock");
        let _lock = FileLock::acquire(lock_path)
            .await
            .map_err(|e| ProviderError::Snapshot {
                dir: crate::paths::snapshots_dir(&self.cache)
                    .display()
                    .to_string(),
                message: e.to_string(),
            })?;
        // Another process may have made it while we waited; the accelerator
        // may also have been resolved since.
        let (snap, _) = self.snapshot().await?;
        if let Some(meta) = snap.meta() {
            return Ok((snap, meta));
        }
        let t = Instant::now();
        let name = format!("snapshot-{}", std::process::id());
        let (vm, boot) = self
            .cold_boot_resolving_accel(&name, Lifetime::Guarded, notes)
            .await?;
        // The accelerator is known now, and with it the key.
        let (snap, inputs) = self.snapshot().await?;
        let meta = self.save_snapshot(vm, &snap, inputs, boot).await?;
        notes.push(format!(
            "created the ready snapshot {} in {:.1}s (cold boot, warm-up, save)",
            snap.dir.display(),
            t.elapsed().as_secs_f64()
        ));
        Ok((snap, meta))
    }

    /// Warm-up, `stop`, `migrate` to zstd, `quit`; the overlay becomes the
    /// frozen disk.
    async fn save_snapshot(
        &self,
        vm: QemuVm,
        snap: &Snapshot,
        inputs: KeyInputs,
        boot: StartReport,
    ) -> Result<SnapshotMeta, ProviderError> {
        let mut phases = boot.phases.clone();
        phases.push(("cold boot total".into(), boot.seconds));
        let warmup = &self.image.manifest.guest.warmup;
        if !warmup.is_empty() {
            let t = Instant::now();
            let r = vm
                .agent
                .exec(
                    protocol::api::Command::Argv(warmup.clone()),
                    self.config.warmup_timeout,
                )
                .await
                .map_err(agent_err(&vm.name))?;
            if r.exit_code != Some(0) {
                return Err(ProviderError::Guest {
                    vm: vm.name.clone(),
                    line: format!(
                        "warm-up {:?} failed ({:?}): {}",
                        warmup,
                        r.exit_code,
                        r.stderr.trim()
                    ),
                });
            }
            phases.push(("warm-up".into(), t.elapsed().as_secs_f64()));
        }
        // Let the guest go idle so the saved state is a quiet desktop.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let t = Instant::now();
        let dir = snap.dir.clone();
        std::fs::create_dir_all(&dir).map_err(io(format!("creating {}", dir.display())))?;
        let tmp_state = dir.join("state.zst.tmp");
        let _ = std::fs::remove_file(&tmp_state);
        {
            let mut qmp = vm.qmp.lock().await;
            let q = qmp.as_mut().expect("qmp connected");
            let qerr = |source| ProviderError::Qmp {
                vm: vm.name.clone(),
                source,
            };
            q.execute("stop", None).await.map_err(qerr)?;
            q.execute(
                "migrate-set-parameters",
                Some(serde_json::json!({ "max-bandwidth": 64u64 << 30 })),
            )
            .await
            .map_err(qerr)?;
            let uri = format!(
                "exec:zstd -1 -T2 -q -o {}",
                shell_quote(&tmp_state.display().to_string())
            );
            q.execute("migrate", Some(serde_json::json!({ "uri": uri })))
                .await
                .map_err(qerr)?;
            let deadline = Instant::now() + Duration::from_secs(300);
            loop {
                let m = q.execute("query-migrate", None).await.map_err(qerr)?;
                match m.get("status").and_then(|s| s.as_str()).unwrap_or("") {
                    "completed" => break,
                    "failed" | "cancelled" => {
                        return Err(ProviderError::Snapshot {
                            dir: dir.display().to_string(),
                            message: format!("saving the machine state failed: {}", m),
                        })
                    }
                    _ if Instant::now() > deadline => {
                        return Err(ProviderError::Snapshot {
                            dir: dir.display().to_string(),
                            message: "saving the machine state took over 300 s".into(),
                        })
                    }
                    _ => tokio::time::sleep(Duration::from_millis(20)).await,
                }
            }
            let _ = q.execute("quit", None).await;
        }
        phases.push(("save state".into(), t.elapsed().as_secs_f64()));
        let overlay = vm.dir.join("overlay.qcow2");
        vm.wait_exit(Duration::from_secs(20)).await;
        let disk = snap.disk();
        std::fs::rename(&overlay, &disk).map_err(io(format!(
            "moving {} to {}",
            overlay.display(),
            disk.display()
        )))?;
        std::fs::rename(&tmp_state, snap.state())
            .map_err(io(format!("renaming {}", tmp_state.display())))?;
        {
            use std::os::unix::fs::PermissionsExt;
            // The frozen disk must never be booted or written again.
            let _ = std::fs::set_permissions(&disk, std::fs::Permissions::from_mode(0o444));
        }
        vm.destroy();
        let meta = SnapshotMeta {
            key: inputs.key(),
            inputs,
            created_at: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
            state_bytes: std::fs::metadata(snap.state())
                .map(|m| m.len())
                .unwrap_or(0),
            disk_bytes: std::fs::metadata(&disk).map(|m| m.len()).unwrap_or(0),
            phases,
        };
        let tmp = dir.join("snapshot.json.tmp");
        std::fs::write(
            &tmp,
            serde_json::to_string_pretty(&meta).expect("serializable"),
        )
        .map_err(io(format!("writing {}", tmp.display())))?;
        std::fs::rename(&tmp, snap.meta_path())
            .map_err(io(format!("renaming {}", tmp.display())))?;
        tracing::info!(dir = %dir.display(), state_bytes = meta.state_bytes, "ready snapshot saved");
        Ok(meta)
    }

    /// A new VM folder with an overlay over `backing`.
    async fn prepare_dir(
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
    async fn launch(
        &self,
        name: &str,
        lifetime: Lifetime,
        accel: Accel,
        backing: &Path,
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
        args.extend(extra.iter().map(|a| a.to_string()));
        match self.spawn_qemu(&dir, name, args, lifetime) {
            Ok(child) => Ok((
                QemuVm::new(name, dir, child, port, lifetime, accel),
                overlay_s,
            )),
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                reaper::unregister_dir(&dir);
                Err(e)
            }
        }
    }

    fn spawn_qemu(
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
    async fn cold_boot(
        &self,
        name: &str,
        lifetime: Lifetime,
        accel: Accel,
        watchdog: bool,
    ) -> Result<QemuVm, ProviderError> {
        let t0 = Instant::now();
        let mut phases = Vec::new();
        let mut attempt = 0;
        loop {
            attempt += 1;
            let (mut vm, overlay_s) = self
                .launch(name, lifetime, accel, &self.image.base(), &[])
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
                    if matches!(e, ProviderError::KvmHang { .. }) {
                        vm.destroy();
                        return Err(e);
                    }
                    let logs = vm.keep_logs(&self.cache);
                    vm.destroy();
                    if matches!(e, ProviderError::BootStalled { .. }) && attempt < 2 {
                        eprintln!("deskenv: {e}\ndeskenv: logs kept in {logs}; booting once more");
                        tracing::warn!("boot stalled; retrying once");
                        phases.clear();
                        continue;
                    }
                    return Err(ProviderError::WithLogs {
                        source: Box::new(e),
                        logs,
                    });
                }
            }
        }
    }

    /// A new VM restored from the ready snapshot.
    async fn restore(
        &self,
        name: &str,
        lifetime: Lifetime,
        snap: &Snapshot,
        meta: &SnapshotMeta,
    ) -> Result<QemuVm, ProviderError> {
        let t0 = Instant::now();
        snap.check(meta).map_err(|e| ProviderError::Snapshot {
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
            let (mut vm, overlay_s) = self
                .launch(name, lifetime, accel, &snap.disk(), &["-incoming", "defer"])
                .await?;
            phases.push(("overlay".to_string(), overlay_s));
            let r = async {
                vm.connect_qmp().await?;
                phases.push(("start qemu".into(), t.elapsed().as_secs_f64() - overlay_s));
                vm.incoming(snap, self.config.restore_timeout, &mut phases)
                    .await?;
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
                    };
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
                    let e = match e {
                        ProviderError::Exited { .. } | ProviderError::Qmp { .. } => ProviderError::Snapshot {
                            dir: snap.dir.display().to_string(),
                            message: format!(
                                "restoring {} failed ({e}); QEMU said: {tail} (if the file is damaged: `deskenv snapshot clear`)",
                                snap.state().display()
                            ),
                        },
                        other => other,
                    };
                    return Err(ProviderError::WithLogs {
                        source: Box::new(e),
                        logs,
                    });
                }
            }
        }
    }
}

impl Provider for QemuProvider {
    fn kind(&self) -> &'static str {
        "qemu"
    }

    fn start<'a>(
        &'a self,
        name: &'a str,
    ) -> BoxFuture<'a, Result<Box<dyn Machine>, ProviderError>> {
        async move {
            self.start_vm(name, Lifetime::Guarded)
                .await
                .map(|vm| Box::new(vm) as Box<dyn Machine>)
        }
        .boxed()
    }
}

fn check_name(name: &str) -> Result<(), ProviderError> {
    crate::provider::check_name("VM", name)
}

use crate::provider::unique;

fn write_owner(dir: &Path, owner: &reaper::Owner) -> Result<(), ProviderError> {
    let tmp = dir.join("owner.json.tmp");
    std::fs::write(&tmp, serde_json::to_string(owner).expect("serializable"))
        .map_err(io("writing owner.json"))?;
    std::fs::rename(&tmp, dir.join("owner.json")).map_err(io("writing owner.json"))
}

/// A free TCP port on 127.0.0.1 (QEMU binds it a moment later; a clash is
/// retried by the caller).
fn free_port() -> Result<u16, ProviderError> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")
        .map_err(io("finding a free port on 127.0.0.1"))?;
    Ok(l.local_addr().map_err(io("finding a free port"))?.port())
}

fn shell_quote(s: &str) -> String {
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

fn shell_join(bin: &str, args: &[String]) -> String {
    let mut s = shell_quote(bin);
    for a in args {
        s.push(' ');
        s.push_str(&shell_quote(a));
    }
    s.push('\n');
    s
}

/// A QEMU VM.
pub struct QemuVm {
    name: String,
    dir: PathBuf,
    child: Mutex<Option<Child>>,
    pid: u32,
    port: u16,
    lifetime: Lifetime,
    accel: Accel,
    qmp: tokio::sync::Mutex<Option<Qmp>>,
    agent: AgentClient,
    started: StartReport,
    destroyed: std::sync::atomic::AtomicBool,
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
    fn new(
        name: &str,
        dir: PathBuf,
        child: Child,
        port: u16,
        lifetime: Lifetime,
        accel: Accel,
    ) -> QemuVm {
        QemuVm {
            name: name.to_string(),
            dir,
            pid: child.id(),
            child: Mutex::new(Some(child)),
            port,
            lifetime,
            accel,
            qmp: tokio::sync::Mutex::new(None),
            agent: AgentClient::new(&format!("http://127.0.0.1:{port}")),
            started: StartReport {
                path: StartPath::ColdBoot,
                seconds: 0.0,
                phases: vec![],
                notes: vec![],
            },
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

    fn log_tail(&self, n: usize) -> String {
        let text = std::fs::read_to_string(self.dir.join("qemu.log")).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(n)..].join("\n")
    }

    /// Copies the VM's logs to `<cache>/failed/<name>-<time>/` (the last
    /// ten failures are kept) and returns that folder.
    fn keep_logs(&self, cache: &Path) -> String {
        let root = cache.join("failed");
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let dest = root.join(format!("{stamp}-{}", self.name));
        let _ = std::fs::create_dir_all(&dest);
        for f in ["serial.log", "qemu.log", "cmdline"] {
            let _ = std::fs::copy(self.dir.join(f), dest.join(f));
        }
        if let Ok(entries) = std::fs::read_dir(&root) {
            let mut all: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
            all.sort();
            for old in all.iter().take(all.len().saturating_sub(10)) {
                let _ = std::fs::remove_dir_all(old);
            }
        }
        dest.display().to_string()
    }

    /// `Some(status)` once the QEMU process has exited.
    fn exit_status(&self) -> Option<String> {
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

    fn exited_error(&self, status: String) -> ProviderError {
        ProviderError::Exited {
            vm: self.name.clone(),
            pid: self.pid,
            status,
            log: self.dir.join("qemu.log").display().to_string(),
            tail: self.log_tail(15),
        }
    }

    async fn connect_qmp(&mut self) -> Result<(), ProviderError> {
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
                    return Err(ProviderError::Qmp {
                        vm: self.name.clone(),
                        source: e,
                    })
                }
                Err(_) => {}
            }
        }
    }

    /// Serial markers during the boot, then the agent's health.
    async fn wait_booted(
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
                return Err(ProviderError::Guest {
                    vm: self.name.clone(),
                    line,
                });
            }
            if !(watchdog && serial.is_empty()) && last_step.elapsed() > p.config.boot_stall {
                return Err(ProviderError::BootStalled {
                    vm: self.name.clone(),
                    after: if next == 0 {
                        "QEMU start".into()
                    } else {
                        steps[next - 1].1.to_string()
                    },
                    waited: p.config.boot_stall,
                    serial: serial.tail(30),
                });
            }
            if watchdog && serial.is_empty() && t0.elapsed() > p.config.kvm_watchdog {
                return Err(ProviderError::KvmHang {
                    vm: self.name.clone(),
                    after: p.config.kvm_watchdog,
                });
            }
            if Instant::now() > deadline {
                return Err(ProviderError::Timeout {
                    vm: self.name.clone(),
                    what: format!("boot marker `{}`", steps[next].1),
                    after: p.config.boot_timeout,
                    serial: serial.tail(20),
                });
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self.wait_healthy(p, deadline, phases).await
    }

    /// Polls `/v1/health` until the screen has the image's size and AT-SPI
    /// is up.
    async fn wait_healthy(
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
                return Err(ProviderError::Timeout {
                    vm: self.name.clone(),
                    what: format!("a healthy guest agent ({want:?}, AT-SPI up; last: {last})"),
                    after: deadline.saturating_duration_since(t),
                    serial: serial.tail(10),
                });
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        phases.push(("agent healthy".into(), t.elapsed().as_secs_f64()));
        Ok(())
    }

    /// `migrate-incoming` from the snapshot's state, then `cont`.
    async fn incoming(
        &self,
        snap: &Snapshot,
        timeout: Duration,
        phases: &mut Vec<(String, f64)>,
    ) -> Result<(), ProviderError> {
        let t = Instant::now();
        let mut guard = self.qmp.lock().await;
        let q = guard.as_mut().expect("qmp connected");
        let qerr = |source| ProviderError::Qmp {
            vm: self.name.clone(),
            source,
        };
        let uri = format!(
            "exec:zstd -d -c -q {}",
            shell_quote(&snap.state().display().to_string())
        );
        q.execute("migrate-incoming", Some(serde_json::json!({ "uri": uri })))
            .await
            .map_err(qerr)?;
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
                    return Err(ProviderError::Snapshot {
                        dir: snap.dir.display().to_string(),
                        message: format!(
                            "after loading {} the VM is `{other}`",
                            snap.state().display()
                        ),
                    })
                }
            }
            if Instant::now() > deadline {
                return Err(ProviderError::Timeout {
                    vm: self.name.clone(),
                    what: "the end of the incoming migration".into(),
                    after: timeout,
                    serial: String::new(),
                });
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
    async fn set_clock(
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
            .map_err(agent_err(&self.name))?;
        phases.push(("set clock".into(), t.elapsed().as_secs_f64()));
        Ok(())
    }

    async fn wait_exit(&self, within: Duration) {
        let deadline = Instant::now() + within;
        while self.exit_status().is_none() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Kills QEMU (if running) and removes the VM folder (once).
    fn destroy(&self) {
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

fn describe_status(s: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (s.code(), s.signal()) {
        (Some(c), _) => format!("exit code {c}"),
        (None, Some(9)) => "killed by signal 9 (SIGKILL)".into(),
        (None, Some(15)) => "killed by signal 15 (SIGTERM)".into(),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        _ => "unknown status".into(),
    }
}

impl Machine for QemuVm {
    fn name(&self) -> &str {
        &self.name
    }

    fn agent(&self) -> &AgentClient {
        &self.agent
    }

    fn started(&self) -> &StartReport {
        &self.started
    }

    fn pid(&self) -> Option<u32> {
        Some(self.pid)
    }

    fn screenshot(&self) -> BoxFuture<'_, Result<Vec<u8>, ProviderError>> {
        async move {
            self.check()?;
            let mut guard = self.qmp.lock().await;
            let q = guard.as_mut().ok_or_else(|| {
                ProviderError::Config(format!("VM {}: no QMP connection", self.name))
            })?;
            display::screendump_png(q, &self.dir)
                .await
                .map(|s| s.png)
                .map_err(|e| ProviderError::Config(format!("VM {}: {e}", self.name)))
        }
        .boxed()
    }

    fn check(&self) -> Result<(), ProviderError> {
        match self.exit_status() {
            Some(s) => Err(self.exited_error(s)),
            None => Ok(()),
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_accel_choices_are_checked() {
        assert!(check_name("vm-1_a.b").is_ok());
        for bad in ["", "a/b", "../x", ".hidden", "has space"] {
            let e = check_name(bad).unwrap_err().to_string();
            assert!(e.contains("expected 1-64 characters"), "{e}");
        }
        assert_eq!("tcg".parse::<AccelChoice>(), Ok(AccelChoice::Tcg));
        assert!("xen"
            .parse::<AccelChoice>()
            .unwrap_err()
            .contains("expected auto, kvm or tcg"));
    }

    #[test]
    fn shell_quoting() {
        assert_eq!(shell_quote("/a/b.zst"), "/a/b.zst");
        assert_eq!(shell_quote("/a b/it's"), "'/a b/it'\\''s'");
    }
}
