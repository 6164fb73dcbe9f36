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

pub mod display;
pub mod named;
pub mod qmp;
pub mod serial;
pub mod snapshot;
pub mod view;

use crate::agent_client::AgentClient;
use crate::image::Image;
pub mod error;

pub use error::QemuError;

use crate::provider::process::{describe_status, keep_logs, log_tail};
use crate::provider::qemu::qmp::Qmp;
use crate::provider::qemu::serial::SerialLog;
use crate::provider::qemu::snapshot::{FileLock, KeyInputs, Snapshot, SnapshotMeta};
use crate::provider::reaper;
use crate::provider::{
    agent_err, error_chain, io, Machine, Phase, Provider, ProviderError, StartEvent, StartPath,
    StartReport,
};
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
    /// The decision was printed.
    announced: std::sync::atomic::AtomicBool,
}

/// What `--accel` resolves to before anything starts (`deskenv doctor`).
#[derive(Debug, Clone, Serialize)]
pub struct AccelDecision {
    pub accel: Accel,
    pub reason: String,
    /// The cached outcome of an earlier KVM try on this host, if any.
    pub probe: Option<AccelProbe>,
    pub probe_file: PathBuf,
}

/// Whether a failed start under KVM is a reason to fall back to TCG: every
/// failure of QEMU or of the guest is; a bad configuration, a missing image
/// or a host I/O error is not (TCG would fail the same way).
fn is_accel_failure(e: &ProviderError) -> bool {
    match e {
        ProviderError::WithLogs(w) => is_accel_failure(&w.error),
        ProviderError::Config(_) | ProviderError::Image(_) | ProviderError::Io { .. } => false,
        ProviderError::Start(_) => e.start_error::<QemuError>().is_some(),
        ProviderError::Exited { .. }
        | ProviderError::Agent { .. }
        | ProviderError::Unreachable { .. } => true,
    }
}

/// One line saying how KVM failed, with QEMU's own last words.
fn kvm_failure_reason(e: &ProviderError) -> String {
    match e {
        ProviderError::WithLogs(w) => kvm_failure_reason(&w.error),
        ProviderError::Exited { status, tail, .. } => {
            let last: Vec<&str> = tail.lines().filter(|l| !l.trim().is_empty()).collect();
            let last = last[last.len().saturating_sub(2)..].join(" / ");
            format!("QEMU exited at start under KVM ({status}): {last}")
        }
        ProviderError::Start(s) if matches!(s.downcast_ref(), Some(QemuError::KvmHang { .. })) => {
            let Some(QemuError::KvmHang { after, .. }) = s.downcast_ref() else {
                unreachable!("matched above")
            };
            format!(
                "/dev/kvm opens but the guest printed nothing on its serial console within {after:?} under KVM"
            )
        }
        other => {
            let text = error_chain(other);
            let first = text.lines().next().unwrap_or("").to_string();
            format!("the start under KVM failed: {first}")
        }
    }
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
pub struct AccelProbe {
    pub qemu_version: String,
    pub host_kernel: String,
    pub kvm_works: bool,
    pub reason: String,
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
            announced: std::sync::atomic::AtomicBool::new(false),
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
        Ok(self.snapshot_for(accel))
    }

    /// The snapshot for `accel` (complete or not).
    pub fn snapshot_for(&self, accel: Accel) -> (Snapshot, KeyInputs) {
        let inputs = self.key_inputs(accel);
        (Snapshot::for_key(&self.cache, &inputs.key()), inputs)
    }

    /// What `--accel` resolves to without starting anything: the explicit
    /// choice, the cached probe, or KVM to try when /dev/kvm opens.
    pub fn accel_decision(&self) -> AccelDecision {
        let (accel, reason) = self.guess_accel();
        AccelDecision {
            accel,
            reason,
            probe: self.cached_probe(),
            probe_file: self.probe_path(),
        }
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
                            format!("auto: KVM failed before on this host: {}", p.reason),
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
        if self.config.accel != AccelChoice::Auto {
            return None;
        }
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
        let tmp = self.probe_path().with_extension("json.tmp");
        if std::fs::write(&tmp, serde_json::to_string_pretty(&p).unwrap_or_default()).is_ok() {
            let _ = std::fs::rename(&tmp, self.probe_path());
        }
    }

    /// Starts a VM that outlives this process (`deskenv vm up`).
    pub async fn start_named(&self, name: &str) -> Result<QemuVm, ProviderError> {
        self.start_vm(name, Lifetime::Detached).await
    }

    /// Starts a VM: restore from the ready snapshot (made first if needed),
    /// or a cold boot when snapshots are off.
    ///
    /// With `--accel auto`, any failure of a start under KVM (QEMU exiting
    /// at start, a guest silent past the watchdog, a stalled boot, a
    /// restore that fails) makes the controller fall back to TCG for the
    /// rest of this process and record why in `<cache>/accel.json`.
    pub async fn start_vm(&self, name: &str, lifetime: Lifetime) -> Result<QemuVm, ProviderError> {
        check_name(name)?;
        let t0 = Instant::now();
        reaper::sweep(&crate::paths::vms_dir(&self.cache));
        let mut notes = Vec::new();
        let mut events = Vec::new();
        loop {
            let resolved = self.accel.lock().await;
            let (accel, why, guard) = match resolved.clone() {
                // Known already: start without holding the lock (parallel
                // starts).
                Some((a, why)) => {
                    drop(resolved);
                    (a, why, None)
                }
                // The first start decides while the others wait.
                None => {
                    let (a, why) = self.guess_accel();
                    (a, why, Some(resolved))
                }
            };
            let watchdog = self.config.accel == AccelChoice::Auto && accel == Accel::Kvm;
            match self
                .start_with(name, lifetime, accel, watchdog, &mut notes, &mut events)
                .await
            {
                Ok(mut vm) => {
                    if let Some(mut resolved) = guard {
                        self.announce(accel, &why);
                        notes.insert(0, format!("accelerator {} ({why})", accel.as_str()));
                        if watchdog && self.cached_probe().is_none() {
                            self.record_probe(true, "the guest booted under KVM");
                        }
                        *resolved = Some((accel, why));
                    }
                    vm.started.notes.splice(0..0, notes);
                    vm.started.events.extend(events);
                    let before: f64 = vm.started.phases.iter().map(|p| p.1).sum();
                    vm.started.seconds = t0.elapsed().as_secs_f64();
                    if vm.started.path == StartPath::Restore
                        && vm
                            .started
                            .events
                            .contains(&StartEvent::CreatedReadySnapshot)
                    {
                        vm.started.phases.insert(
                            0,
                            (
                                Phase::CreateReadySnapshot.name().into(),
                                vm.started.seconds - before,
                            ),
                        );
                    }
                    return Ok(vm);
                }
                Err(e) if watchdog && is_accel_failure(&e) => {
                    let reason = kvm_failure_reason(&e);
                    tracing::info!("accelerator: KVM failed, TCG from now on: {reason}");
                    let why = format!("auto: fell back from KVM: {reason}");
                    self.record_probe(false, &reason);
                    notes.push(format!("accelerator tcg (fell back from KVM: {reason})"));
                    let mut resolved = match guard {
                        Some(g) => g,
                        None => self.accel.lock().await,
                    };
                    if resolved.as_ref().map(|r| r.0) != Some(Accel::Tcg) {
                        eprintln!(
                            "deskenv: KVM was tried, but {reason}; falling back to TCG (recorded in {}; `deskenv doctor` shows it)",
                            self.probe_path().display()
                        );
                        self.announced
                            .store(true, std::sync::atomic::Ordering::SeqCst);
                    }
                    *resolved = Some((Accel::Tcg, why));
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Prints the accelerator decision once per process.
    fn announce(&self, accel: Accel, why: &str) {
        if !self
            .announced
            .swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            tracing::info!(
                accel = accel.as_str(),
                "accelerator: {} ({why})",
                accel.as_str()
            );
            if self.config.accel == AccelChoice::Auto {
                eprintln!("deskenv: accelerator {} ({why})", accel.as_str());
            }
        }
    }

    /// One start under `accel`: restore (the snapshot made first if there
    /// is none for these inputs), or a cold boot without snapshots.
    async fn start_with(
        &self,
        name: &str,
        lifetime: Lifetime,
        accel: Accel,
        watchdog: bool,
        notes: &mut Vec<String>,
        events: &mut Vec<StartEvent>,
    ) -> Result<QemuVm, ProviderError> {
        if !self.config.use_snapshot {
            return self.cold_boot(name, lifetime, accel, watchdog).await;
        }
        let (snap, meta) = self.ensure_snapshot(accel, watchdog, notes, events).await?;
        self.restore(name, lifetime, &snap, &meta).await
    }

    /// Finds the complete ready snapshot for `accel`, or makes it (one
    /// process at a time, under a file lock).
    async fn ensure_snapshot(
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
            .cold_boot(&name, Lifetime::Guarded, accel, watchdog)
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
        phases.push((Phase::ColdBootTotal.name().into(), boot.seconds));
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
                .map_err(agent_err(&format!("VM {}", vm.name)))?;
            if r.exit_code != Some(0) {
                return Err(QemuError::Guest {
                    vm: vm.name.clone(),
                    line: format!(
                        "warm-up {:?} failed ({:?}): {}",
                        warmup,
                        r.exit_code,
                        r.stderr.trim()
                    ),
                }
                .into());
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
            let qerr = |source| {
                ProviderError::from(QemuError::Qmp {
                    vm: vm.name.clone(),
                    source,
                })
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
                        return Err(QemuError::Snapshot {
                            dir: dir.display().to_string(),
                            message: format!("saving the machine state failed: {}", m),
                        }
                        .into())
                    }
                    _ if Instant::now() > deadline => {
                        return Err(QemuError::Snapshot {
                            dir: dir.display().to_string(),
                            message: "saving the machine state took over 300 s".into(),
                        }
                        .into())
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
    async fn restore(
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
                        events: vec![],
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
                    let restoring = matches!(e, ProviderError::Exited { .. })
                        || matches!(e.start_error(), Some(QemuError::Qmp { .. }));
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
                events: vec![],
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
        log_tail(&self.dir.join("qemu.log"), n)
    }

    /// Copies the VM's logs to `<cache>/failed/<time>-<name>/` and
    /// returns that folder.
    fn keep_logs(&self, cache: &Path) -> String {
        keep_logs(cache, &self.name, &self.dir, |p| {
            p.file_name().is_some_and(|f| {
                ["serial.log", "qemu.log", "cmdline"]
                    .iter()
                    .any(|k| f == *k)
            })
        })
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
            machine: format!("VM {}", self.name),
            what: "QEMU",
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
    async fn incoming(
        &self,
        snap: &Snapshot,
        timeout: Duration,
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
            .map_err(agent_err(&format!("VM {}", self.name)))?;
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
            let q = guard.as_mut().ok_or_else(|| ProviderError::Unreachable {
                machine: format!("VM {}", self.name),
                what: "no QMP connection".into(),
                source: None,
            })?;
            display::screendump_png(q, &self.dir)
                .await
                .map(|s| s.png)
                .map_err(|e| ProviderError::Unreachable {
                    machine: format!("VM {}", self.name),
                    what: "the host-side screendump failed".into(),
                    source: Some(Box::new(e)),
                })
        }
        .boxed()
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
