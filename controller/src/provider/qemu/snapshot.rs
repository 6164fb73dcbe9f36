//! The ready snapshot: one booted, warmed-up desktop saved as a frozen disk
//! (`disk.qcow2`, the boot's overlay over the image) plus the machine's
//! state (`state.zst`, QEMU's migration stream through zstd). Every VM
//! then starts from a new overlay on that frozen disk with `-incoming`.
//!
//! A snapshot lives in `<cache>/snapshots/<key>/`. The key hashes what a
//! restore must match exactly: the image digest, the QEMU version, the
//! accelerator and the VM's device arguments (memory, CPUs, kernel command
//! line, …) — change any and a new snapshot is made. `snapshot.json` is
//! written last; a folder without it is incomplete and is ignored.

use serde::{Deserialize, Serialize};
use sha2::Digest;
use std::io::Read;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    #[error("ready snapshot {dir}: {file} is missing (remove the folder or run `deskenv snapshot clear`)")]
    Missing { dir: PathBuf, file: &'static str },
    #[error("ready snapshot {dir}: {file} is corrupt: {reason} (run `deskenv snapshot clear`)")]
    Corrupt {
        dir: PathBuf,
        file: &'static str,
        reason: String,
    },
    #[error("{context}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

/// Version of the snapshot layout; bump to invalidate all snapshots.
const LAYOUT: &str = "deskenv-snapshot-v1";

/// The inputs a restore must match.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct KeyInputs {
    pub image_digest: String,
    pub qemu_version: String,
    pub accel: String,
    /// The device arguments (identical at save and restore).
    pub args: Vec<String>,
    /// The warm-up command run before saving.
    pub warmup: Vec<String>,
}

impl KeyInputs {
    pub fn key(&self) -> String {
        let mut h = sha2::Sha256::new();
        h.update(LAYOUT.as_bytes());
        h.update(serde_json::to_vec(self).expect("serializable"));
        hex::encode(h.finalize())[..16].to_string()
    }
}

/// `snapshot.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SnapshotMeta {
    pub key: String,
    pub inputs: KeyInputs,
    pub created_at: u64,
    pub state_bytes: u64,
    pub disk_bytes: u64,
    /// The guest RAM is in `ram` (this many bytes), left out of the state
    /// stream; 0: the stream holds it (zstd mode, checkpoints).
    #[serde(default)]
    pub ram_bytes: u64,
    /// Phases of the boot that made it (seconds).
    pub phases: Vec<(String, f64)>,
}

impl SnapshotMeta {
    /// The seconds of the cold boot that made it.
    pub fn cold_boot_seconds(&self) -> Option<f64> {
        crate::provider::Phase::ColdBootTotal.find(&self.phases)
    }
}

/// A snapshot folder.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub dir: PathBuf,
}

impl Snapshot {
    pub fn for_key(cache: &Path, key: &str) -> Snapshot {
        Snapshot {
            dir: crate::paths::snapshots_dir(cache).join(key),
        }
    }

    pub fn disk(&self) -> PathBuf {
        self.dir.join("disk.qcow2")
    }

    /// The guest RAM, with `ram_file` (a ready snapshot only).
    pub fn ram(&self) -> PathBuf {
        self.dir.join("ram")
    }

    pub fn state(&self) -> PathBuf {
        self.dir.join("state.zst")
    }

    pub fn meta_path(&self) -> PathBuf {
        self.dir.join("snapshot.json")
    }

    /// The metadata if the snapshot is complete, `None` if it was never
    /// finished.
    pub fn meta(&self) -> Option<SnapshotMeta> {
        let text = std::fs::read_to_string(self.meta_path()).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Checks a complete snapshot's files before a restore: both present,
    /// the sizes recorded at save time, the zstd and qcow2 magic numbers.
    pub fn check(&self, meta: &SnapshotMeta) -> Result<(), SnapshotError> {
        let dir = self.dir.clone();
        for (file, path, magic, bytes) in [
            (
                "state.zst",
                self.state(),
                &[0x28u8, 0xb5, 0x2f, 0xfd][..],
                Some(meta.state_bytes),
            ),
            ("disk.qcow2", self.disk(), &b"QFI\xfb"[..], None),
        ] {
            let mut f = std::fs::File::open(&path).map_err(|_| SnapshotError::Missing {
                dir: dir.clone(),
                file,
            })?;
            let len = f.metadata().map(|m| m.len()).unwrap_or(0);
            if let Some(b) = bytes {
                if len != b {
                    return Err(SnapshotError::Corrupt {
                        dir,
                        file,
                        reason: format!("{len} bytes, {b} when saved"),
                    });
                }
            }
            let mut head = vec![0u8; magic.len()];
            if f.read_exact(&mut head).is_err() || head != magic {
                return Err(SnapshotError::Corrupt {
                    dir,
                    file,
                    reason: "wrong magic number".into(),
                });
            }
        }
        if meta.ram_bytes > 0 {
            let len = std::fs::metadata(self.ram())
                .map_err(|_| SnapshotError::Missing {
                    dir: dir.clone(),
                    file: "ram",
                })?
                .len();
            if len != meta.ram_bytes {
                return Err(SnapshotError::Corrupt {
                    dir,
                    file: "ram",
                    reason: format!("{len} bytes, {} when saved", meta.ram_bytes),
                });
            }
        }
        Ok(())
    }

    /// Deletes the snapshot.
    pub fn remove(&self) -> Result<(), SnapshotError> {
        make_writable(&self.dir);
        std::fs::remove_dir_all(&self.dir).map_err(|source| SnapshotError::Io {
            context: format!("removing {}", self.dir.display()),
            source,
        })
    }
}

fn make_writable(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let _ = std::fs::set_permissions(e.path(), std::fs::Permissions::from_mode(0o644));
        }
    }
}

/// All snapshot folders with their metadata (`None`: incomplete).
pub fn list(cache: &Path) -> Vec<(Snapshot, Option<SnapshotMeta>)> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(crate::paths::snapshots_dir(cache)) {
        for e in entries.flatten() {
            if e.path().is_dir() {
                let s = Snapshot { dir: e.path() };
                let m = s.meta();
                out.push((s, m));
            }
        }
    }
    out.sort_by(|a, b| a.0.dir.cmp(&b.0.dir));
    out
}

/// An exclusive lock on a file (flock), released on drop. Serializes the
/// creation of one snapshot across processes.
#[derive(Debug)]
pub struct FileLock {
    _file: std::fs::File,
}

impl FileLock {
    /// Blocks (on a blocking thread) until the lock is held.
    pub async fn acquire(path: PathBuf) -> Result<FileLock, SnapshotError> {
        tokio::task::spawn_blocking(move || {
            use std::os::fd::AsRawFd;
            if let Some(p) = path.parent() {
                std::fs::create_dir_all(p).map_err(|source| SnapshotError::Io {
                    context: format!("creating {}", p.display()),
                    source,
                })?;
            }
            let file = std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&path)
                .map_err(|source| SnapshotError::Io {
                    context: format!("opening {}", path.display()),
                    source,
                })?;
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
                return Err(SnapshotError::Io {
                    context: format!("locking {}", path.display()),
                    source: std::io::Error::last_os_error(),
                });
            }
            Ok(FileLock { _file: file })
        })
        .await
        .expect("lock task")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs() -> KeyInputs {
        KeyInputs {
            image_digest: "a:b:c".into(),
            qemu_version: "10.0.2".into(),
            accel: "tcg".into(),
            args: vec!["-m".into(), "3072".into()],
            warmup: vec![],
        }
    }

    #[test]
    fn key_changes_with_every_input() {
        let base = inputs().key();
        assert_eq!(base.len(), 16);
        let mut i = inputs();
        i.qemu_version = "7.2".into();
        assert_ne!(i.key(), base);
        let mut i = inputs();
        i.args[1] = "4096".into();
        assert_ne!(i.key(), base);
        let mut i = inputs();
        i.image_digest = "x:b:c".into();
        assert_ne!(i.key(), base);
        assert_eq!(inputs().key(), base);
    }

    #[test]
    fn check_names_missing_and_corrupt_files() {
        let d = tempfile::tempdir().unwrap();
        let s = Snapshot {
            dir: d.path().to_path_buf(),
        };
        let meta = SnapshotMeta {
            key: "k".into(),
            inputs: inputs(),
            created_at: 0,
            state_bytes: 8,
            disk_bytes: 0,
            ram_bytes: 0,
            phases: vec![],
        };
        let e = s.check(&meta).unwrap_err().to_string();
        assert!(e.contains("state.zst is missing"), "{e}");
        std::fs::write(s.state(), [0x28, 0xb5, 0x2f, 0xfd, 1, 2, 3, 4]).unwrap();
        let e = s.check(&meta).unwrap_err().to_string();
        assert!(e.contains("disk.qcow2 is missing"), "{e}");
        std::fs::write(s.disk(), b"QFI\xfbxxxx").unwrap();
        s.check(&meta).unwrap();
        // A snapshot whose RAM is a file of its own needs it, whole.
        let with_ram = SnapshotMeta {
            ram_bytes: 16,
            ..meta.clone()
        };
        let e = s.check(&with_ram).unwrap_err().to_string();
        assert!(e.contains("ram is missing"), "{e}");
        std::fs::write(s.ram(), [0u8; 8]).unwrap();
        let e = s.check(&with_ram).unwrap_err().to_string();
        assert!(e.contains("ram is corrupt: 8 bytes, 16 when saved"), "{e}");
        std::fs::write(s.ram(), [0u8; 16]).unwrap();
        s.check(&with_ram).unwrap();
        std::fs::write(s.state(), [0u8; 8]).unwrap();
        let e = s.check(&meta).unwrap_err().to_string();
        assert!(
            e.contains("state.zst is corrupt: wrong magic number"),
            "{e}"
        );
        std::fs::write(s.state(), [0x28, 0xb5, 0x2f, 0xfd]).unwrap();
        let e = s.check(&meta).unwrap_err().to_string();
        assert!(e.contains("4 bytes, 8 when saved"), "{e}");
    }
}
