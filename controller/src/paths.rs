//! Where deskenv keeps its files on the host: one cache folder (images,
//! ready snapshots, running VMs), outside the repository.

use std::path::{Path, PathBuf};

/// The cache folder: `explicit` if given, else `$DESKENV_CACHE`, else
/// `$XDG_CACHE_HOME/deskenv`, else `~/.cache/deskenv`.
pub fn cache_dir(explicit: Option<&Path>) -> PathBuf {
    if let Some(p) = explicit {
        return p.to_path_buf();
    }
    if let Some(p) = std::env::var_os("DESKENV_CACHE").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    if let Some(p) = std::env::var_os("XDG_CACHE_HOME").filter(|p| !p.is_empty()) {
        return PathBuf::from(p).join("deskenv");
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/root"));
    home.join(".cache").join("deskenv")
}

/// Images built by `deskenv image build`.
pub fn images_dir(cache: &Path) -> PathBuf {
    cache.join("images")
}

/// Ready snapshots, one folder per snapshot key.
pub fn snapshots_dir(cache: &Path) -> PathBuf {
    cache.join("snapshots")
}

/// Per-VM working folders (overlay, QMP socket, serial log) of running VMs.
pub fn vms_dir(cache: &Path) -> PathBuf {
    cache.join("vms")
}
