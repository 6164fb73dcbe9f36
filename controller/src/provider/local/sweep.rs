//! Ending what a dead controller left: machines found by their record
//! and their processes by the marker in their environment.

use super::display::{remove_display_files, x_answers};
use super::supervise::{record_path, Record, KILL_WAIT};
use super::MARKER_VAR;
use crate::provider::reaper;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Ends the machines whose controller is gone: their processes (found by
/// marker) are killed, their display's lock file and socket removed when
/// no server answers there, their folder and record removed. Folders
/// without a record (a start cut short) go once a minute old. Returns the
/// folders removed.
pub fn sweep(local_dir: &Path) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    let Ok(entries) = std::fs::read_dir(local_dir) else {
        return removed;
    };
    let mut records = Vec::new();
    let mut dirs = Vec::new();
    for e in entries.flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "json") {
            records.push(p);
        } else if p.is_dir() {
            dirs.push((p, e.metadata().and_then(|m| m.modified()).ok()));
        }
    }
    for rec in records {
        let Some(r) = std::fs::read_to_string(&rec)
            .ok()
            .and_then(|t| serde_json::from_str::<Record>(&t).ok())
        else {
            continue;
        };
        if r.controller_pid == std::process::id() || reaper::alive(r.controller_pid) {
            continue;
        }
        kill_marked(&r.marker, KILL_WAIT);
        if let Some(n) = r.display {
            // A killed Xvfb loses its environment (so its marker) before
            // its sockets close: give it a moment to stop answering.
            let deadline = Instant::now() + Duration::from_secs(2);
            while x_answers(Path::new("/tmp"), n) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
            if !x_answers(Path::new("/tmp"), n) {
                remove_display_files(Path::new("/tmp"), n);
            }
        }
        let dir = rec.with_extension("");
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_file(&rec);
        removed.push(dir);
    }
    for (dir, modified) in dirs {
        let old = modified
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|d| d > Duration::from_secs(60));
        if old && !record_path(&dir).exists() && !removed.contains(&dir) {
            let _ = std::fs::remove_dir_all(&dir);
            removed.push(dir);
        }
    }
    removed
}

/// Pids of live processes whose environment has `MARKER_VAR=marker`.
pub fn marked_processes(marker: &str) -> Vec<u32> {
    let want = format!("{MARKER_VAR}={marker}");
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in entries.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
            continue;
        };
        if environ_has(&environ, want.as_bytes()) && reaper::alive(pid) {
            out.push(pid);
        }
    }
    out
}

/// Whether a NUL-separated environment block holds exactly `entry`.
pub(super) fn environ_has(environ: &[u8], entry: &[u8]) -> bool {
    environ.split(|b| *b == 0).any(|e| e == entry)
}

/// SIGKILLs every process marked `marker` until none is left (or `within`
/// passed: false).
pub(super) fn kill_marked(marker: &str, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    loop {
        let pids = marked_processes(marker);
        if pids.is_empty() {
            return true;
        }
        for p in pids {
            // SAFETY: kill has no memory-safety preconditions.
            unsafe {
                libc::kill(p as i32, libc::SIGKILL);
            }
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[cfg(test)]
mod tests {
    use super::super::supervise::wait_exit;
    use super::*;
    use crate::provider::unique;
    use std::process::Command;

    #[test]
    fn markers_match_whole_environment_entries() {
        let env = b"PATH=/bin\0DESKENV_LOCAL_MACHINE=1.2.a\0HOME=/root\0";
        assert!(environ_has(env, b"DESKENV_LOCAL_MACHINE=1.2.a"));
        assert!(!environ_has(env, b"DESKENV_LOCAL_MACHINE=1.2"));
        assert!(!environ_has(env, b"DESKENV_LOCAL_MACHINE=1.2.ab"));
    }

    #[test]
    fn marked_processes_are_found_and_killed() {
        let marker = format!("unit.{}.{}", std::process::id(), unique());
        let mut cmd = Command::new("sh");
        // The shell's own child carries the marker too.
        cmd.args(["-c", "sleep 30 & sleep 30"])
            .env(MARKER_VAR, &marker);
        let mut child = cmd.spawn().unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        while marked_processes(&marker).len() < 3 {
            assert!(Instant::now() < deadline, "{:?}", marked_processes(&marker));
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(kill_marked(&marker, KILL_WAIT));
        let ended = wait_exit(&mut child, Duration::from_secs(2));
        let _ = child.kill();
        let _ = child.wait();
        assert!(ended, "the marked shell survived kill_marked");
        assert!(marked_processes(&marker).is_empty());
    }

    #[test]
    fn sweep_removes_machines_of_dead_controllers_and_their_processes() {
        let tmp = tempfile::tempdir().unwrap();
        let gone = tmp.path().join("gone");
        let mine = tmp.path().join("mine");
        std::fs::create_dir(&gone).unwrap();
        std::fs::create_dir(&mine).unwrap();
        let marker = format!("sweep.{}.{}", std::process::id(), unique());
        let mut child = Command::new("sleep")
            .arg("30")
            .env(MARKER_VAR, &marker)
            .spawn()
            .unwrap();
        let dead = Record {
            controller_pid: 4_194_305,
            marker: marker.clone(),
            display: None,
            init_pid: None,
        };
        std::fs::write(record_path(&gone), serde_json::to_string(&dead).unwrap()).unwrap();
        let me = Record {
            controller_pid: std::process::id(),
            marker: "other".into(),
            display: None,
            init_pid: None,
        };
        std::fs::write(record_path(&mine), serde_json::to_string(&me).unwrap()).unwrap();
        // Until the child has exec'd, its environment is the test's own,
        // without the marker: a sweep then would find nothing to end.
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while marked_processes(&marker).is_empty() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(sweep(tmp.path()), vec![gone.clone()]);
        assert!(mine.exists() && !gone.exists() && !record_path(&gone).exists());
        let ended = wait_exit(&mut child, Duration::from_secs(2));
        let _ = child.kill();
        let _ = child.wait();
        assert!(ended, "the marked process survived the sweep");
        assert!(marked_processes(&marker).is_empty());
    }
}
