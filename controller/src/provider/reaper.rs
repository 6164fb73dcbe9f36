//! No orphan QEMU processes and no leaked overlays.
//!
//! Every QEMU process a pool starts is spawned by [`spawn_guarded`]: in its
//! own process group (a Ctrl-C in the terminal reaches only the
//! controller) and with `PR_SET_PDEATHSIG` = SIGKILL, so the kernel kills it
//! even when the controller itself is killed with SIGKILL. The death signal
//! fires when the *thread* that forked exits, so all forks happen on one
//! thread that lives as long as the process. Live processes and their
//! working folders are registered here; [`kill_all`] ends them and removes
//! the folders, and [`install_signal_handlers`] calls it on SIGINT and
//! SIGTERM. [`sweep`] removes what an earlier controller that died left
//! behind.

use std::collections::HashMap;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::{mpsc, Mutex, OnceLock};

type SpawnJob = (Command, bool, mpsc::Sender<std::io::Result<Child>>);

fn spawner() -> &'static Mutex<mpsc::Sender<SpawnJob>> {
    static SPAWNER: OnceLock<Mutex<mpsc::Sender<SpawnJob>>> = OnceLock::new();
    SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<SpawnJob>();
        std::thread::Builder::new()
            .name("deskenv-spawner".into())
            .spawn(move || {
                for (mut cmd, guard, reply) in rx {
                    if guard {
                        // SAFETY: prctl and setpgid are async-signal-safe and
                        // touch no memory of the parent.
                        unsafe {
                            cmd.pre_exec(|| {
                                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                                    return Err(std::io::Error::last_os_error());
                                }
                                if libc::setpgid(0, 0) != 0 {
                                    return Err(std::io::Error::last_os_error());
                                }
                                Ok(())
                            });
                        }
                    } else {
                        // A detached process: its own session, no death signal.
                        unsafe {
                            cmd.pre_exec(|| {
                                if libc::setsid() < 0 {
                                    return Err(std::io::Error::last_os_error());
                                }
                                Ok(())
                            });
                        }
                    }
                    let _ = reply.send(cmd.spawn());
                }
            })
            .expect("spawn the deskenv-spawner thread");
        Mutex::new(tx)
    })
}

fn spawn_on_spawner(cmd: Command, guard: bool) -> std::io::Result<Child> {
    let (tx, rx) = mpsc::channel();
    spawner()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .send((cmd, guard, tx))
        .map_err(|_| std::io::Error::other("the spawner thread is gone"))?;
    rx.recv()
        .map_err(|_| std::io::Error::other("the spawner thread is gone"))?
}

/// Spawns a process that dies with the controller (see the module docs).
pub fn spawn_guarded(cmd: Command) -> std::io::Result<Child> {
    spawn_on_spawner(cmd, true)
}

/// Spawns a process that outlives the controller (named VMs).
pub fn spawn_detached(cmd: Command) -> std::io::Result<Child> {
    spawn_on_spawner(cmd, false)
}

/// Working folders of live VMs and their QEMU pid once spawned. A folder is
/// registered before its QEMU starts, so a signal that arrives in between
/// still removes it (the QEMU itself then dies with us: death signal).
fn registry() -> &'static Mutex<HashMap<PathBuf, Option<u32>>> {
    static REG: OnceLock<Mutex<HashMap<PathBuf, Option<u32>>>> = OnceLock::new();
    REG.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Records a VM folder to remove on [`kill_all`].
pub fn register_dir(dir: &Path) {
    registry()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(dir.to_path_buf(), None);
}

/// Records the QEMU process that runs in a registered folder.
pub fn register_pid(dir: &Path, pid: u32) {
    registry()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(dir.to_path_buf(), Some(pid));
}

/// Forgets a folder (its VM was ended and the folder removed normally).
pub fn unregister_dir(dir: &Path) {
    registry()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(dir);
}

/// Number of registered VM folders (starting or running).
pub fn live() -> usize {
    registry().lock().unwrap_or_else(|e| e.into_inner()).len()
}

/// SIGKILLs every registered process and removes every registered folder.
pub fn kill_all() {
    let all: Vec<(PathBuf, Option<u32>)> = registry()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .drain()
        .collect();
    for (dir, pid) in all {
        if let Some(pid) = pid {
            unsafe {
                libc::kill(pid as i32, libc::SIGKILL);
            }
            let mut status = 0;
            unsafe {
                libc::waitpid(pid as i32, &mut status, 0);
            }
        }
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// On SIGINT or SIGTERM: end every registered process, remove their
/// folders, and exit with 130 or 143.
pub fn install_signal_handlers() {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut int), Ok(mut term)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        tracing::warn!("could not install SIGINT/SIGTERM handlers");
        return;
    };
    tokio::spawn(async move {
        let code = tokio::select! {
            _ = int.recv() => 130,
            _ = term.recv() => 143,
        };
        let n = live();
        eprintln!("deskenv: signal received; stopping {n} VM(s)");
        kill_all();
        std::process::exit(code);
    });
}

/// Whether `pid` is a live process (not a zombie).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            // "pid (comm) S ...": the state follows the last ')'.
            let state = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().next());
            !matches!(state, Some("Z") | Some("X") | None)
        }
        Err(_) => false,
    }
}

/// The owner record each VM folder holds (`owner.json`).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Owner {
    /// The controller process that started it; `None` for named VMs, which
    /// outlive their controller on purpose.
    pub controller_pid: Option<u32>,
    pub qemu_pid: Option<u32>,
}

/// Removes VM folders (and kills their QEMU) whose controller is gone, and
/// folders of named VMs whose QEMU is gone. Returns what was removed.
pub fn sweep(vms_dir: &Path) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    let Ok(entries) = std::fs::read_dir(vms_dir) else {
        return removed;
    };
    for e in entries.flatten() {
        let dir = e.path();
        let owner: Option<Owner> = std::fs::read_to_string(dir.join("owner.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok());
        let Some(owner) = owner else {
            // A folder being created right now has no owner file yet; only
            // remove ownerless folders older than a minute.
            let old = e
                .metadata()
                .and_then(|m| m.modified())
                .map(|t| t.elapsed().map(|d| d.as_secs() > 60).unwrap_or(false))
                .unwrap_or(false);
            if old {
                let _ = std::fs::remove_dir_all(&dir);
                removed.push(dir);
            }
            continue;
        };
        let qemu_alive = owner.qemu_pid.is_some_and(alive);
        let stale = match owner.controller_pid {
            Some(c) => !alive(c),
            None => !qemu_alive,
        };
        if stale {
            if let (Some(q), true) = (owner.qemu_pid, qemu_alive) {
                if is_qemu(q) {
                    unsafe {
                        libc::kill(q as i32, libc::SIGKILL);
                    }
                }
            }
            let _ = std::fs::remove_dir_all(&dir);
            removed.push(dir);
        }
    }
    removed
}

/// Whether `pid` runs a QEMU binary (guards against a reused pid).
pub fn is_qemu(pid: u32) -> bool {
    std::fs::read_link(format!("/proc/{pid}/exe"))
        .map(|p| p.to_string_lossy().contains("qemu"))
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guarded_children_are_killed_by_kill_all_and_folders_removed() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("vm");
        std::fs::create_dir(&dir).unwrap();
        let mut cmd = Command::new("sleep");
        cmd.arg("30");
        register_dir(&dir);
        let mut child = spawn_guarded(cmd).unwrap();
        let pid = child.id();
        register_pid(&dir, pid);
        assert!(alive(pid));
        kill_all();
        // kill_all reaped it already.
        let _ = child.wait();
        assert!(!alive(pid));
        assert!(!dir.exists());
    }

    #[test]
    fn sweep_removes_folders_of_dead_controllers() {
        let d = tempfile::tempdir().unwrap();
        let gone = d.path().join("gone");
        let mine = d.path().join("mine");
        std::fs::create_dir(&gone).unwrap();
        std::fs::create_dir(&mine).unwrap();
        // A pid that does not exist (beyond pid_max on Linux).
        let dead = Owner {
            controller_pid: Some(4_194_305),
            qemu_pid: None,
        };
        std::fs::write(
            gone.join("owner.json"),
            serde_json::to_string(&dead).unwrap(),
        )
        .unwrap();
        let me = Owner {
            controller_pid: Some(std::process::id()),
            qemu_pid: None,
        };
        std::fs::write(mine.join("owner.json"), serde_json::to_string(&me).unwrap()).unwrap();
        let removed = sweep(d.path());
        assert_eq!(removed, vec![gone.clone()]);
        assert!(mine.exists() && !gone.exists());
    }
}
