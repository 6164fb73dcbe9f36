//! Named VMs that outlive one command: `deskenv vm up --name N` starts one
//! (detached: its own session, no death signal) and records it in
//! `<cache>/vms/N/vm.json`; `list`, `screenshot` and `down` find it there.

use crate::provider::qemu::display::{self, DisplayError, Screendump};
use crate::provider::qemu::qmp::{Qmp, QmpError};
use crate::provider::qemu::{NamedRecord, QemuProvider};
use crate::provider::reaper;
use crate::provider::ProviderError;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum NamedError {
    #[error("no VM named `{name}` (looked in {dir}); `deskenv vm list` shows the running ones")]
    NotFound { name: String, dir: PathBuf },
    #[error("VM `{name}` is not running any more (QEMU pid {pid} is gone); `deskenv vm down --name {name}` cleans up")]
    Gone { name: String, pid: u32 },
    #[error("VM `{name}`: its QMP monitor failed")]
    Qmp {
        name: String,
        #[source]
        source: QmpError,
    },
    #[error("VM `{name}`: the host-side screendump failed")]
    Display {
        name: String,
        #[source]
        source: DisplayError,
    },
    #[error(transparent)]
    Provider(#[from] ProviderError),
    #[error("{context}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

/// A named VM as `list` sees it.
#[derive(Debug, Clone)]
pub struct Listed {
    pub record: NamedRecord,
    pub running: bool,
}

fn dir(cache: &Path, name: &str) -> PathBuf {
    crate::paths::vms_dir(cache).join(name)
}

/// Starts (restores or boots) a named VM and leaves it running.
pub async fn up(provider: &QemuProvider, name: &str) -> Result<NamedRecord, NamedError> {
    let vm = provider.start_named(name).await?;
    let record = vm.record();
    let path = vm.dir().join("vm.json");
    let write = std::fs::write(
        &path,
        serde_json::to_string_pretty(&record).expect("serializable"),
    );
    if let Err(source) = write {
        vm.stop().await;
        return Err(NamedError::Io {
            context: format!("writing {}", path.display()),
            source,
        });
    }
    vm.detach();
    Ok(record)
}

fn read(cache: &Path, name: &str) -> Result<NamedRecord, NamedError> {
    let d = dir(cache, name);
    let text = std::fs::read_to_string(d.join("vm.json")).map_err(|_| NamedError::NotFound {
        name: name.to_string(),
        dir: crate::paths::vms_dir(cache),
    })?;
    serde_json::from_str(&text).map_err(|e| NamedError::Io {
        context: format!("reading {}/vm.json", d.display()),
        source: e.into(),
    })
}

/// Every named VM, running or not.
pub fn list(cache: &Path) -> Vec<Listed> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(crate::paths::vms_dir(cache)) {
        for e in entries.flatten() {
            let Some(name) = e.file_name().to_str().map(str::to_string) else {
                continue;
            };
            if let Ok(record) = read(cache, &name) {
                let running = reaper::alive(record.pid) && reaper::is_qemu(record.pid);
                out.push(Listed { record, running });
            }
        }
    }
    out.sort_by(|a, b| a.record.name.cmp(&b.record.name));
    out
}

/// A host-side screenshot of a named VM (QMP screendump).
pub async fn screenshot(cache: &Path, name: &str) -> Result<Screendump, NamedError> {
    let record = read(cache, name)?;
    if !reaper::alive(record.pid) {
        return Err(NamedError::Gone {
            name: name.to_string(),
            pid: record.pid,
        });
    }
    let mut q = Qmp::connect(&record.qmp, Duration::from_secs(5))
        .await
        .map_err(|source| NamedError::Qmp {
            name: name.to_string(),
            source,
        })?;
    display::screendump_png(&mut q, &dir(cache, name).join("screen.ppm"), None)
        .await
        .map_err(|source| NamedError::Display {
            name: name.to_string(),
            source,
        })
}

/// Stops a named VM (QMP `quit`, SIGKILL after 5 s) and removes its files.
pub async fn down(cache: &Path, name: &str) -> Result<(), NamedError> {
    let record = read(cache, name)?;
    if reaper::alive(record.pid) && reaper::is_qemu(record.pid) {
        if let Ok(mut q) = Qmp::connect(&record.qmp, Duration::from_secs(2)).await {
            let _ = q
                .execute_with_timeout("quit", None, Duration::from_secs(2))
                .await;
        }
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while reaper::alive(record.pid) && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        if reaper::alive(record.pid) && reaper::is_qemu(record.pid) {
            unsafe {
                libc::kill(record.pid as i32, libc::SIGKILL);
            }
        }
    }
    let d = dir(cache, name);
    std::fs::remove_dir_all(&d).map_err(|source| NamedError::Io {
        context: format!("removing {}", d.display()),
        source,
    })
}
