//! `deskenv snapshot list|clear`.

use crate::exit::Exit;
use controller::provider::qemu::snapshot;
use std::path::Path;

pub fn list(cache: &Path) -> anyhow::Result<Exit> {
    let all = snapshot::list(cache);
    if all.is_empty() {
        println!("no ready snapshots");
    }
    for (s, m) in all {
        match m {
            Some(m) => println!(
                "{}  accel {}  state {} MiB  disk {} MiB  made from a {:.1}s boot",
                s.dir.display(),
                m.inputs.accel,
                m.state_bytes / 1_048_576,
                m.disk_bytes / 1_048_576,
                m.cold_boot_seconds().unwrap_or(0.0)
            ),
            None => println!("{}  incomplete", s.dir.display()),
        }
    }
    Ok(Exit::Ok)
}

pub fn clear(cache: &Path) -> anyhow::Result<Exit> {
    for (s, _) in snapshot::list(cache) {
        s.remove()?;
        println!("removed {}", s.dir.display());
    }
    Ok(Exit::Ok)
}
