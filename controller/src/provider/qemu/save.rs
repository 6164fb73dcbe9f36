//! Saving the ready snapshot: warm-up, `stop`, `migrate` into zstd, `quit`;
//! the overlay becomes the frozen disk.

use super::cmdline::shell_quote;
use super::qmp::Qmp;
use super::{QemuError, QemuProvider, QemuVm};
use crate::provider::qemu::snapshot::{KeyInputs, Snapshot, SnapshotMeta};
use crate::provider::{agent_err, io, Phase, ProviderError, StartReport};
use std::path::Path;
use std::time::{Duration, Instant};

impl QemuProvider {
    /// Warm-up, `stop`, `migrate` to zstd, `quit`; the overlay becomes the
    /// frozen disk.
    pub(super) async fn save_snapshot(
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
            migrate_to(q, &vm.name, &tmp_state, &dir, self.config.ram_file).await?;
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
        let ram = vm.dir.join("ram");
        if self.config.ram_file {
            std::fs::rename(&ram, snap.ram()).map_err(io(format!(
                "moving {} to {}",
                ram.display(),
                snap.ram().display()
            )))?;
        }
        {
            use std::os::unix::fs::PermissionsExt;
            // The frozen disk and RAM must never be booted or written again.
            for f in [disk.clone(), snap.ram()] {
                let _ = std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o444));
            }
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
            ram_bytes: if self.config.ram_file {
                std::fs::metadata(snap.ram()).map(|m| m.len()).unwrap_or(0)
            } else {
                0
            },
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
}

/// Migrates a stopped VM's state into `file` through `zstd -1` and waits
/// for the migration to complete (at most 300 s); `dir` names the
/// snapshot or checkpoint in errors.
pub(super) async fn migrate_to(
    q: &mut Qmp,
    vm: &str,
    file: &Path,
    dir: &Path,
    ignore_shared: bool,
) -> Result<(), ProviderError> {
    let qerr = |source| {
        ProviderError::from(QemuError::Qmp {
            vm: vm.to_string(),
            source,
        })
    };
    q.execute(
        "migrate-set-parameters",
        Some(serde_json::json!({ "max-bandwidth": 64u64 << 30 })),
    )
    .await
    .map_err(qerr)?;
    if ignore_shared {
        set_ignore_shared(q).await.map_err(qerr)?;
    }
    let uri = format!(
        "exec:zstd -1 -T2 -q -o {}",
        shell_quote(&file.display().to_string())
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
    Ok(())
}

/// Leaves RAM blocks that live in a shared file out of the migration
/// stream (`x-ignore-shared`); set on both ends with `ram_file`, so that a
/// ready snapshot's stream holds the devices only and a checkpoint's (of a
/// VM whose RAM is a private mapping, not shared) still holds its RAM.
pub(super) async fn set_ignore_shared(q: &mut Qmp) -> Result<(), super::qmp::QmpError> {
    q.execute(
        "migrate-set-capabilities",
        Some(serde_json::json!({
            "capabilities": [{ "capability": "x-ignore-shared", "state": true }]
        })),
    )
    .await
    .map(|_| ())
}
