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
//!

//! Layout: [`accel`] (`--accel`, the KVM probe and fallback),
//! [`cmdline`] (QEMU's arguments), `start` (overlay, spawn, cold boot,
//! restore), `save` (the ready snapshot), `checkpoint` (a running VM's
//! state mid-episode, and a VM started from it), `ready` (readiness probes),
//! [`vm`] (a running VM); [`snapshot`], [`qmp`], [`serial`], [`display`]
//! are the pieces they use; [`named`] and [`view`] serve `deskenv vm`.

pub mod accel;
mod checkpoint;
pub mod cmdline;
pub mod display;
pub mod error;
pub mod named;
pub mod qmp;
mod ready;
mod save;
pub mod serial;
pub mod snapshot;
mod start;
pub mod view;
pub mod vm;

pub use accel::{Accel, AccelChoice, AccelDecision, AccelProbe};
pub use error::QemuError;
pub use vm::{NamedRecord, QemuVm};

use crate::image::Image;
use crate::provider::qemu::snapshot::{KeyInputs, Snapshot};
use crate::provider::{io, reaper, Machine, Provider, ProviderError};
use futures::future::BoxFuture;
use futures::FutureExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

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
    /// Keep the ready snapshot's guest RAM in a file of its own (`ram`,
    /// written by the VM that made the snapshot through a shared file
    /// mapping), which each restore maps privately, copy-on-write,
    /// instead of decompressing it: the migration stream (`x-ignore-shared`)
    /// then holds only the devices. false: the whole state in zstd (part
    /// of the snapshot key).
    pub ram_file: bool,
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
            ram_file: true,
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

impl std::fmt::Debug for QemuProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QemuProvider")
            .field("image", &self.image.dir)
            .field("config", &self.config)
            .finish()
    }
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

    pub fn config(&self) -> &QemuConfig {
        &self.config
    }

    pub fn qemu_version(&self) -> &str {
        &self.qemu_version
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

    /// Starts a VM that outlives this process (`deskenv vm up`).
    pub async fn start_named(&self, name: &str) -> Result<QemuVm, ProviderError> {
        self.start_vm(name, Lifetime::Detached).await
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

    fn can_checkpoint(&self) -> bool {
        self.config.use_snapshot
    }

    fn start_from_checkpoint<'a>(
        &'a self,
        name: &'a str,
        dir: &'a Path,
    ) -> BoxFuture<'a, Result<Box<dyn Machine>, ProviderError>> {
        async move {
            self.start_checkpoint(name, dir)
                .await
                .map(|vm| Box::new(vm) as Box<dyn Machine>)
        }
        .boxed()
    }
}

fn check_name(name: &str) -> Result<(), ProviderError> {
    crate::provider::check_name("VM", name)
}

fn write_owner(dir: &Path, owner: &reaper::Owner) -> Result<(), ProviderError> {
    let tmp = dir.join("owner.json.tmp");
    std::fs::write(&tmp, serde_json::to_string(owner).expect("serializable"))
        .map_err(io("writing owner.json"))?;
    std::fs::rename(&tmp, dir.join("owner.json")).map_err(io("writing owner.json"))
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
}
