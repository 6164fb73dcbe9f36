//! The processes, files and display of one machine ([`Desktop`]): each
//! started in the machine's namespaces with its environment, watched for
//! an early exit, and all ended at once.

use super::desktop::bus_socket;
use super::display::{release_display, remove_display_files};
use super::home::xdg_config_dirs;
use super::namespace::children;
use super::sweep::kill_marked;
use super::{LocalError, GUEST_PATH, MARKER_VAR};
use crate::provider::process::{describe_status, keep_logs, log_tail};
use crate::provider::{reaper, ProviderError};
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The name of the namespace's creator (the init's parent).
pub(super) const INIT_PROC: &str = "namespace init";

/// How long ending a machine waits for its processes to be gone.
pub(super) const KILL_WAIT: Duration = Duration::from_secs(5);

/// Host variables that would point the machine's applications at the
/// host's session or configuration.
pub(super) const SCRUB: &[&str] = &[
    "DBUS_SESSION_BUS_ADDRESS",
    "WAYLAND_DISPLAY",
    "SESSION_MANAGER",
    "DESKTOP_SESSION",
    "XDG_SESSION_ID",
    "XDG_SESSION_TYPE",
    "XDG_SESSION_DESKTOP",
    "XDG_CURRENT_DESKTOP",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
    "XDG_STATE_HOME",
    "LC_ALL",
    "LANGUAGE",
];

/// One process of a machine.
pub(super) struct Proc {
    pub(super) what: &'static str,
    pub(super) log: String,
    pub(super) child: Child,
    /// Set once the child was reaped: its pid may belong to another
    /// process now.
    pub(super) reaped: bool,
}

/// The processes, files and display of one machine; dropping it ends
/// them all.
pub(super) struct Desktop {
    pub(super) name: String,
    pub(super) dir: PathBuf,
    pub(super) marker: String,
    pub(super) home: PathBuf,
    /// `nsenter`, when the machine has its own namespaces.
    pub(super) nsenter: Option<PathBuf>,
    /// Host pid of the namespace's init.
    pub(super) init: Option<u32>,
    /// The display our Xvfb serves (reserved in this process).
    pub(super) display: Option<u32>,
    /// Whether our Xvfb came up on `display` (its lock file and socket
    /// are then ours to remove).
    pub(super) x_owned: bool,
    pub(super) dbus: Option<String>,
    pub(super) procs: Mutex<Vec<Proc>>,
    pub(super) destroyed: AtomicBool,
}

/// `<folder>.json` beside the machine's folder: what [`sweep`] needs to
/// end a machine whose controller died. It lives outside the folder, which
/// [`reaper::kill_all`] removes on SIGINT/SIGTERM.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Record {
    pub(super) controller_pid: u32,
    pub(super) marker: String,
    pub(super) display: Option<u32>,
    pub(super) init_pid: Option<u32>,
}

impl Desktop {
    pub(super) fn write_record(&self) -> std::io::Result<()> {
        let r = Record {
            controller_pid: std::process::id(),
            marker: self.marker.clone(),
            display: self.display,
            init_pid: self.init,
        };
        let path = record_path(&self.dir);
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, serde_json::to_string(&r).expect("serializable"))?;
        std::fs::rename(tmp, path)
    }

    /// The environment of the machine's processes.
    pub(super) fn env(&self) -> Vec<(&'static str, OsString)> {
        let mut env: Vec<(&'static str, OsString)> = vec![
            (MARKER_VAR, self.marker.clone().into()),
            ("HOME", self.home.clone().into()),
            ("XAUTHORITY", self.dir.join("Xauthority").into()),
            ("XDG_RUNTIME_DIR", self.dir.join("run").into()),
            ("XDG_CONFIG_DIRS", xdg_config_dirs(&self.dir)),
            // The guest's: Debian's python3 and tools, not whatever the
            // controller's PATH puts first (a pyenv shim, a venv).
            ("PATH", GUEST_PATH.into()),
            ("LANG", "C.UTF-8".into()),
            ("GTK_A11Y", "atspi".into()),
            ("NO_AT_BRIDGE", "0".into()),
            ("ACCESSIBILITY_ENABLED", "1".into()),
            ("GNOME_ACCESSIBILITY", "1".into()),
            ("QT_ACCESSIBILITY", "1".into()),
            ("QT_LINUX_ACCESSIBILITY_ALWAYS_ON", "1".into()),
        ];
        if let Some(n) = self.display {
            env.push(("DISPLAY", format!(":{n}").into()));
        }
        if let Some(a) = &self.dbus {
            env.push(("DBUS_SESSION_BUS_ADDRESS", a.clone().into()));
        }
        env
    }

    pub(super) fn command(&self, argv: &[OsString]) -> Command {
        let mut cmd = match (&self.nsenter, self.init) {
            (Some(nsenter), Some(init)) => {
                let mut c = Command::new(nsenter);
                // `--wd` without a folder: the init's, HOME inside the
                // namespace (a folder given here would be opened outside
                // it: the host's /home/user, under the tmpfs).
                c.arg("--target")
                    .arg(init.to_string())
                    .args(["--mount", "--pid", "--wd", "--"])
                    .args(argv);
                c
            }
            _ => {
                let mut c = Command::new(&argv[0]);
                c.args(&argv[1..]).current_dir(&self.home);
                c
            }
        };
        for k in SCRUB {
            cmd.env_remove(k);
        }
        cmd.envs(self.env());
        cmd
    }

    /// Starts a process of the machine (in its namespaces, if any), its
    /// stderr (and stdout, unless `stdout` names a file) into `log`.
    pub(super) fn spawn(
        &self,
        what: &'static str,
        argv: Vec<OsString>,
        stdout: Option<&str>,
        log: &str,
    ) -> Result<u32, ProviderError> {
        let cmd = self.command(&argv);
        self.launch(what, cmd, stdout, log)
    }

    /// Starts a process outside the namespaces (the namespace's creator).
    pub(super) fn spawn_with(
        &self,
        what: &'static str,
        mut cmd: Command,
        log: &str,
    ) -> Result<u32, ProviderError> {
        for k in SCRUB {
            cmd.env_remove(k);
        }
        cmd.envs(self.env());
        self.launch(what, cmd, None, log)
    }

    pub(super) fn launch(
        &self,
        what: &'static str,
        mut cmd: Command,
        stdout: Option<&str>,
        log: &str,
    ) -> Result<u32, ProviderError> {
        let io = |context: String| {
            let machine = self.name.clone();
            move |source| LocalError::Io {
                machine,
                context,
                source,
            }
        };
        let err = std::fs::File::create(self.dir.join(log))
            .map_err(io(format!("creating {}", self.dir.join(log).display())))?;
        let out = match stdout {
            Some(f) => std::fs::File::create(self.dir.join(f))
                .map_err(io(format!("creating {}", self.dir.join(f).display())))?,
            None => err.try_clone().map_err(io(format!("opening {log}")))?,
        };
        cmd.stdin(Stdio::null()).stdout(out).stderr(err);
        let child = reaper::spawn_guarded(cmd).map_err(io(format!("starting {what}")))?;
        let pid = child.id();
        self.procs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Proc {
                what,
                log: log.to_string(),
                child,
                reaped: false,
            });
        Ok(pid)
    }

    /// Ends and forgets a process that is known to have exited.
    pub(super) fn forget(&self, what: &str) {
        let mut procs = self.procs.lock().unwrap_or_else(|e| e.into_inner());
        procs.retain_mut(|p| {
            if p.what != what {
                return true;
            }
            if !p.reaped {
                let _ = p.child.kill();
                let _ = p.child.wait();
            }
            false
        });
    }

    /// The error for a process of the machine that has exited, if it has.
    pub(super) fn exit_error(&self, what: &str) -> Option<ProviderError> {
        let mut procs = self.procs.lock().unwrap_or_else(|e| e.into_inner());
        let p = procs.iter_mut().find(|p| p.what == what)?;
        let status = if p.reaped {
            "exited".to_string()
        } else {
            match p.child.try_wait() {
                Ok(Some(s)) => {
                    p.reaped = true;
                    describe_status(s)
                }
                Ok(None) => return None,
                Err(e) => format!("unknown: {e}"),
            }
        };
        let log = self.dir.join(&p.log);
        Some(ProviderError::Exited {
            machine: format!("local machine {}", self.name),
            what: p.what,
            pid: p.child.id(),
            status,
            log: log.display().to_string(),
            tail: log_tail(&log, 15),
        })
    }

    pub(super) fn timeout_error(
        &self,
        what: &str,
        after: Duration,
        last: String,
        log: &str,
    ) -> ProviderError {
        let log = self.dir.join(log);
        LocalError::Timeout {
            machine: self.name.clone(),
            what: what.to_string(),
            after,
            last,
            log: log.display().to_string(),
            tail: log_tail(&log, 15),
        }
        .into()
    }

    /// Polls `probe` until it answers, failing early when a process in
    /// `watch` exits and late with the last answer and `log`'s tail.
    pub(super) async fn wait_until<T, F, Fut>(
        &self,
        what: &str,
        watch: &[&str],
        log: &str,
        timeout: Duration,
        mut probe: F,
    ) -> Result<T, ProviderError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, String>>,
    {
        let deadline = Instant::now() + timeout;
        loop {
            let last = match probe().await {
                Ok(v) => return Ok(v),
                Err(e) => e,
            };
            for w in watch {
                if let Some(e) = self.exit_error(w) {
                    return Err(e);
                }
            }
            if self.init.is_some() {
                if let Some(e) = self.exit_error(INIT_PROC) {
                    return Err(e);
                }
            }
            if Instant::now() > deadline {
                return Err(self.timeout_error(what, timeout, last, log));
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// The host pid of a program of the machine: under `nsenter`, its
    /// child; else the process itself.
    pub(super) fn program_pid(&self, what: &str) -> Option<u32> {
        let procs = self.procs.lock().unwrap_or_else(|e| e.into_inner());
        let p = procs.iter().find(|p| p.what == what && !p.reaped)?;
        let pid = p.child.id();
        if self.nsenter.is_some() && self.init.is_some() {
            children(pid).first().copied()
        } else {
            Some(pid)
        }
    }

    /// Copies the logs to `<cache>/failed/<time>-local-<name>/` and
    /// returns that folder.
    pub(super) fn keep_logs(&self, cache: &Path) -> String {
        keep_logs(cache, &format!("local-{}", self.name), &self.dir, |p| {
            p.extension()
                .is_some_and(|x| x == "log" || x == "addr" || x == "json")
        })
    }

    /// Ends every process of the machine and removes its files (once).
    pub(super) fn destroy(&self) {
        if self.destroyed.swap(true, Ordering::SeqCst) {
            return;
        }
        let mut procs = self.procs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(init) = self.init {
            // The kernel ends every process of the namespace with its init.
            // SAFETY: kill has no memory-safety preconditions; the init is
            // a child of its creator, which is not reaped yet, so the init
            // is at worst a zombie and the pid still its.
            unsafe {
                libc::kill(init as i32, libc::SIGKILL);
            }
            // The creator exits once it has reaped the init, and the init's
            // exit completes only when every other process of the namespace
            // is gone: waiting for the creator waits for all of them. The
            // nsenter parents are left alone meanwhile: killing them first
            // orphans their children into the dying namespace, which
            // stalls its teardown for about two seconds.
            if let Some(p) = procs.iter_mut().find(|p| !p.reaped && p.what == INIT_PROC) {
                wait_exit(&mut p.child, KILL_WAIT);
            }
        }
        for p in procs.iter_mut().filter(|p| !p.reaped) {
            if self.init.is_some() && wait_exit(&mut p.child, Duration::from_millis(200)) {
                p.reaped = true;
                continue;
            }
            // Each was started as the leader of its own process group.
            // SAFETY: the child is not reaped, so its pid (and group) is
            // still ours.
            unsafe {
                libc::killpg(p.child.id() as i32, libc::SIGKILL);
            }
            let _ = p.child.kill();
        }
        if !kill_marked(&self.marker, KILL_WAIT) {
            tracing::warn!(
                machine = %self.name,
                "processes marked {MARKER_VAR}={} still alive after {KILL_WAIT:?}",
                self.marker
            );
        }
        for p in procs.iter_mut().filter(|p| !p.reaped) {
            let _ = p.child.wait();
            p.reaped = true;
        }
        drop(procs);
        if let Some(n) = self.display {
            if self.x_owned {
                remove_display_files(Path::new("/tmp"), n);
            }
            release_display(n);
        }
        if let Some(socket) = self.dbus.as_deref().and_then(bus_socket) {
            let _ = std::fs::remove_file(socket);
        }
        reaper::unregister_dir(&self.dir);
        let _ = std::fs::remove_dir_all(&self.dir);
        let _ = std::fs::remove_file(record_path(&self.dir));
    }
}

/// The record of the machine in `dir`: `dir` with `.json` appended.
pub(super) fn record_path(dir: &Path) -> PathBuf {
    let mut p = dir.as_os_str().to_owned();
    p.push(".json");
    PathBuf::from(p)
}

impl Drop for Desktop {
    fn drop(&mut self) {
        self.destroy();
    }
}

/// Records the seconds since `mark` as phase `name` and restarts `mark`.
pub(super) fn lap(phases: &mut Vec<(String, f64)>, name: &str, mark: &mut Instant) {
    phases.push((name.to_string(), mark.elapsed().as_secs_f64()));
    *mark = Instant::now();
}

/// Waits up to `within` for a child to exit; true if it has (reaped).
pub(super) fn wait_exit(child: &mut Child, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    loop {
        match child.try_wait() {
            Ok(Some(_)) | Err(_) => return true,
            Ok(None) if Instant::now() >= deadline => return false,
            Ok(None) => std::thread::sleep(Duration::from_millis(1)),
        }
    }
}
