//! The accelerator: `--accel auto|kvm|tcg`, the cached KVM probe
//! (`<cache>/accel.json`) and the fallback from KVM to TCG.

use super::{check_name, Lifetime, QemuError, QemuProvider, QemuVm};
use crate::error_chain;
use crate::provider::{reaper, Phase, ProviderError, StartEvent, StartPath};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Instant;

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
        | ProviderError::Guest { .. }
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
        other => {
            if let Some(QemuError::KvmHang { after, .. }) = other.start_error() {
                return format!(
                    "/dev/kvm opens but the guest printed nothing on its serial console within {after:?} under KVM"
                );
            }
            let text = error_chain(other);
            let first = text.lines().next().unwrap_or("").to_string();
            format!("the start under KVM failed: {first}")
        }
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

impl QemuProvider {
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
    pub(super) fn guess_accel(&self) -> (Accel, String) {
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

    pub(super) fn probe_path(&self) -> PathBuf {
        self.cache.join("accel.json")
    }

    pub(super) fn host_kernel() -> String {
        std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .unwrap_or_default()
            .trim()
            .to_string()
    }

    pub(super) fn cached_probe(&self) -> Option<AccelProbe> {
        if self.config.accel != AccelChoice::Auto {
            return None;
        }
        let p: AccelProbe =
            serde_json::from_str(&std::fs::read_to_string(self.probe_path()).ok()?).ok()?;
        (p.qemu_version == self.qemu_version && p.host_kernel == Self::host_kernel()).then_some(p)
    }

    pub(super) fn record_probe(&self, kvm_works: bool, reason: &str) {
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
    pub(super) fn announce(&self, accel: Accel, why: &str) {
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
}
