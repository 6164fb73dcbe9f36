//! X display numbers: the first free one from `first_display` (lock
//! file and socket checked, a dead server's leftovers reclaimed), reserved
//! within this process until released, and claimed across processes by a
//! `flock` on `<tmp>/.deskenv-display-<n>.lock`: two controllers on one
//! host never start X servers on the same display (the kernel drops a dead
//! process's claim).

use std::collections::{BTreeMap, BTreeSet};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// How many display numbers from `first_display` are tried.
pub(super) const DISPLAYS: u32 = 200;

/// A lock file or socket without a server is taken for a server that is
/// starting, until it is this old.
pub(super) const STALE_AFTER: Duration = Duration::from_secs(30);

/// Whether a display is free, served, or left behind by a dead server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DisplayState {
    Free,
    /// A server answers, or one may be starting.
    Busy,
    /// A lock file or socket whose server is gone.
    Stale,
}

pub(super) fn x_lock(tmp: &Path, n: u32) -> PathBuf {
    tmp.join(format!(".X{n}-lock"))
}

pub(super) fn x_socket(tmp: &Path, n: u32) -> PathBuf {
    tmp.join(".X11-unix").join(format!("X{n}"))
}

/// Whether an X server answers on display `n`: the socket under `tmp`, or
/// the abstract socket X servers on Linux also listen on.
pub(super) fn x_answers(tmp: &Path, n: u32) -> bool {
    if UnixStream::connect(x_socket(tmp, n)).is_ok() {
        return true;
    }
    use std::os::linux::net::SocketAddrExt;
    std::os::unix::net::SocketAddr::from_abstract_name(format!("/tmp/.X11-unix/X{n}"))
        .and_then(|a| UnixStream::connect_addr(&a))
        .is_ok()
}

pub(super) fn display_state(tmp: &Path, n: u32, stale_after: Duration) -> DisplayState {
    if x_answers(tmp, n) {
        return DisplayState::Busy;
    }
    let ages: Vec<Option<Duration>> = [x_lock(tmp, n), x_socket(tmp, n)]
        .iter()
        .filter_map(|p| std::fs::symlink_metadata(p).ok())
        .map(|m| m.modified().ok().and_then(|t| t.elapsed().ok()))
        .collect();
    if ages.is_empty() {
        DisplayState::Free
    } else if ages.iter().all(|a| a.is_some_and(|a| a > stale_after)) {
        DisplayState::Stale
    } else {
        DisplayState::Busy
    }
}

/// The first display from `first` that is neither `reserved` nor `skip`
/// and that `state` calls free or stale.
pub(super) fn pick_display(
    first: u32,
    count: u32,
    reserved: &BTreeSet<u32>,
    skip: &BTreeSet<u32>,
    mut state: impl FnMut(u32) -> DisplayState,
) -> Option<(u32, DisplayState)> {
    (first..first.saturating_add(count))
        .filter(|n| !reserved.contains(n) && !skip.contains(n))
        .find_map(|n| match state(n) {
            DisplayState::Busy => None,
            s => Some((n, s)),
        })
}

/// Displays this process has handed out and not yet released.
pub(super) fn reserved_displays() -> &'static Mutex<BTreeSet<u32>> {
    static R: OnceLock<Mutex<BTreeSet<u32>>> = OnceLock::new();
    R.get_or_init(|| Mutex::new(BTreeSet::new()))
}

/// The claim files this process holds, by display.
fn claims() -> &'static Mutex<BTreeMap<u32, std::fs::File>> {
    static C: OnceLock<Mutex<BTreeMap<u32, std::fs::File>>> = OnceLock::new();
    C.get_or_init(|| Mutex::new(BTreeMap::new()))
}

/// The path of display `n`'s claim file under `tmp`.
pub(super) fn claim_path(tmp: &Path, n: u32) -> PathBuf {
    tmp.join(format!(".deskenv-display-{n}.lock"))
}

/// Claims display `n` for this process (a non-blocking `flock`), or None
/// when another process holds it.
pub(super) fn claim(tmp: &Path, n: u32) -> Option<std::fs::File> {
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(claim_path(tmp, n))
        .ok()?;
    // SAFETY: flock on a file descriptor this function owns.
    let rc = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    (rc == 0).then_some(f)
}

/// Picks, claims and reserves a display, removing a dead server's
/// leftovers. A display another process has claimed is passed over.
pub(super) fn reserve_display(first: u32, skip: &BTreeSet<u32>, tmp: &Path) -> Option<u32> {
    let mut reserved = reserved_displays()
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let mut skip = skip.clone();
    loop {
        let (n, state) = pick_display(first, DISPLAYS, &reserved, &skip, |n| {
            display_state(tmp, n, STALE_AFTER)
        })?;
        let Some(file) = claim(tmp, n) else {
            skip.insert(n);
            continue;
        };
        if state == DisplayState::Stale {
            tracing::info!(
                "display :{n}: removing the lock file and socket of a server that is gone"
            );
            remove_display_files(tmp, n);
        }
        reserved.insert(n);
        claims()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(n, file);
        return Some(n);
    }
}

pub(super) fn release_display(n: u32) {
    reserved_displays()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&n);
    // Closing the file drops the claim.
    claims()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&n);
}

pub(super) fn remove_display_files(tmp: &Path, n: u32) {
    let _ = std::fs::remove_file(x_lock(tmp, n));
    let _ = std::fs::remove_file(x_socket(tmp, n));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(v: &[u32]) -> BTreeSet<u32> {
        v.iter().copied().collect()
    }

    #[test]
    fn the_first_display_not_reserved_skipped_or_busy_is_picked() {
        let busy = set(&[60, 61, 63]);
        let state = |n| {
            if busy.contains(&n) {
                DisplayState::Busy
            } else if n == 64 {
                DisplayState::Stale
            } else {
                DisplayState::Free
            }
        };
        assert_eq!(
            pick_display(60, 10, &set(&[]), &set(&[]), state),
            Some((62, DisplayState::Free))
        );
        assert_eq!(
            pick_display(60, 10, &set(&[62]), &set(&[]), state),
            Some((64, DisplayState::Stale))
        );
        assert_eq!(
            pick_display(60, 10, &set(&[62]), &set(&[64]), state),
            Some((65, DisplayState::Free))
        );
        assert_eq!(pick_display(60, 2, &set(&[]), &set(&[]), state), None);
    }

    #[test]
    fn lock_files_without_a_server_are_stale_only_once_old() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir(tmp.path().join(".X11-unix")).unwrap();
        // High numbers: the abstract socket is host-wide.
        let n = 4_000_123;
        assert_eq!(
            display_state(tmp.path(), n, STALE_AFTER),
            DisplayState::Free
        );
        std::fs::write(x_lock(tmp.path(), n), "      4242\n").unwrap();
        assert_eq!(
            display_state(tmp.path(), n, STALE_AFTER),
            DisplayState::Busy
        );
        assert_eq!(
            display_state(tmp.path(), n, Duration::ZERO),
            DisplayState::Stale
        );
        // A socket that a server listens on is busy however old.
        let m = 4_000_124;
        let _listener = std::os::unix::net::UnixListener::bind(x_socket(tmp.path(), m)).unwrap();
        assert_eq!(
            display_state(tmp.path(), m, Duration::ZERO),
            DisplayState::Busy
        );
        remove_display_files(tmp.path(), n);
        assert_eq!(
            display_state(tmp.path(), n, STALE_AFTER),
            DisplayState::Free
        );
    }

    #[test]
    fn reserved_displays_are_not_handed_out_twice() {
        let tmp = tempfile::tempdir().unwrap();
        let first = 4_100_000;
        let a = reserve_display(first, &set(&[]), tmp.path()).unwrap();
        let b = reserve_display(first, &set(&[]), tmp.path()).unwrap();
        assert_eq!((a, b), (first, first + 1));
        release_display(a);
        assert_eq!(reserve_display(first, &set(&[]), tmp.path()), Some(first));
        release_display(a);
        release_display(b);
    }

    #[test]
    fn a_display_another_process_claimed_is_passed_over() {
        let tmp = tempfile::tempdir().unwrap();
        let first = 4_200_000;
        // Another controller's claim: its own open file, locked.
        let theirs = claim(tmp.path(), first).unwrap();
        let ours = reserve_display(first, &set(&[]), tmp.path()).unwrap();
        assert_eq!(ours, first + 1);
        assert!(
            claim(tmp.path(), ours).is_none(),
            "ours is claimed while reserved"
        );
        drop(theirs);
        release_display(ours);
        assert!(
            claim(tmp.path(), ours).is_some(),
            "released, the claim is gone"
        );
        assert_eq!(reserve_display(first, &set(&[]), tmp.path()), Some(first));
        release_display(first);
    }
}
