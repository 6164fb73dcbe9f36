//! Checkpoints of a running VM (`deskenv run --checkpoints`): the VM is
//! stopped, its state migrated into zstd and its overlay copied (the disk
//! as it is at that moment, backed by the ready snapshot's frozen disk),
//! then it runs on. A checkpoint folder has the layout of a ready
//! snapshot (disk.qcow2, state.zst, snapshot.json with the same key
//! inputs), so a VM starts from it the way it starts from the ready
//! snapshot: a new overlay on its disk, `-incoming defer`, the state
//! loaded, `cont`, a health probe and the guest clock set.

use super::save::migrate_to;
use super::snapshot::{Snapshot, SnapshotMeta};
use super::{check_name, Accel, Lifetime, QemuError, QemuProvider, QemuVm};
use crate::provider::{io, ProviderError};
use std::path::Path;
use std::time::Instant;

impl QemuVm {
    /// Saves the running state into `dir` (made if missing); the VM is
    /// paused for the moment of the save and runs on after it, whatever
    /// the outcome.
    pub(super) async fn save_checkpoint(&self, dir: &Path) -> Result<(), ProviderError> {
        let base = self.restored_from.clone().ok_or_else(|| {
            ProviderError::Config(format!(
                "VM {}: cold-booted (no ready snapshot), so it cannot be checkpointed",
                self.name
            ))
        })?;
        let t = Instant::now();
        std::fs::create_dir_all(dir).map_err(io(format!("creating {}", dir.display())))?;
        let snap = Snapshot {
            dir: dir.to_path_buf(),
        };
        let tmp_state = dir.join("state.zst.tmp");
        let _ = std::fs::remove_file(&tmp_state);
        {
            let mut guard = self.qmp.lock().await;
            let q = guard.as_mut().ok_or_else(|| ProviderError::Unreachable {
                machine: format!("VM {}", self.name),
                what: "no QMP connection".into(),
                source: None,
            })?;
            let qerr = |source| {
                ProviderError::from(QemuError::Qmp {
                    vm: self.name.clone(),
                    source,
                })
            };
            q.execute("stop", None).await.map_err(qerr)?;
            let saved = async {
                migrate_to(q, &self.name, &tmp_state, dir, self.ram_file).await?;
                // The migration flushed the disk; the overlay is whole.
                let overlay = self.dir.join("overlay.qcow2");
                std::fs::copy(&overlay, snap.disk()).map_err(io(format!(
                    "copying {} to {}",
                    overlay.display(),
                    snap.disk().display()
                )))?;
                Ok::<_, ProviderError>(())
            }
            .await;
            // `cont` after a completed migration takes the disk back.
            let resumed = q.execute("cont", None).await.map_err(qerr);
            saved?;
            resumed?;
        }
        std::fs::rename(&tmp_state, snap.state())
            .map_err(io(format!("renaming {}", tmp_state.display())))?;
        let meta = SnapshotMeta {
            created_at: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
            state_bytes: std::fs::metadata(snap.state())
                .map(|m| m.len())
                .unwrap_or(0),
            disk_bytes: std::fs::metadata(snap.disk()).map(|m| m.len()).unwrap_or(0),
            // The stream holds the RAM (a private mapping is not shared).
            ram_bytes: 0,
            phases: vec![("save checkpoint".into(), t.elapsed().as_secs_f64())],
            ..base
        };
        let json = serde_json::to_string_pretty(&meta).expect("serializable");
        std::fs::write(snap.meta_path(), json)
            .map_err(io(format!("writing {}", snap.meta_path().display())))?;
        // The guest's clock stood still while it was paused.
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        let _ = self.agent.set_clock(now).await;
        Ok(())
    }
}

impl QemuProvider {
    /// A VM called `name` started from the checkpoint in `dir`.
    pub(super) async fn start_checkpoint(
        &self,
        name: &str,
        dir: &Path,
    ) -> Result<QemuVm, ProviderError> {
        check_name(name)?;
        let snap = Snapshot {
            dir: dir.to_path_buf(),
        };
        let meta = snap.meta().ok_or_else(|| QemuError::Snapshot {
            dir: dir.display().to_string(),
            message: "no readable snapshot.json: not a checkpoint".into(),
        })?;
        let accel = if meta.inputs.accel == "kvm" {
            Accel::Kvm
        } else {
            Accel::Tcg
        };
        let (_, inputs) = self.snapshot_for(accel);
        if meta.inputs != inputs {
            return Err(QemuError::Snapshot {
                dir: dir.display().to_string(),
                message: "the checkpoint was saved with other image, QEMU or device settings than this provider's".into(),
            }
            .into());
        }
        let mut vm = self.restore(name, Lifetime::Guarded, &snap, &meta).await?;
        vm.started
            .notes
            .push(format!("started from the checkpoint {}", dir.display()));
        Ok(vm)
    }
}
