//! A headless desktop on this host for the guest agent, its tests and the
//! scripts: Xvfb at 1920x1080x24, a D-Bus session bus, the AT-SPI bus and
//! openbox (an EWMH window manager). Nothing here needs a real screen.
//!
//! Each part is waited for before the next one relies on it: the X server
//! answers (`xdpyinfo`), the session bus printed its address, openbox set
//! `_NET_SUPPORTING_WM_CHECK` on the root window (clients started before the
//! window manager can stay unmapped), and `org.a11y.Bus` answers
//! `GetAddress`. A part that exits or does not come up in time is an error
//! naming it, with the tail of its log.
//!
//! # Layout
//! - [`Desktop`]: starts on a given display ([`Desktop::start_on`]) or on a
//!   free one ([`Desktop::start_free`], the number claimed atomically so
//!   parallel tests and processes never share one); accessors for the
//!   display, the environment clients need and the pids; stops everything
//!   on drop (each part runs in its own process group, and the whole group
//!   is killed), or [`Desktop::detach`]es and leaves it running.
//! - [`stop`]: ends a detached desktop by its display number, from the pid
//!   files in its folder (`/tmp/deskenv-desktop-N/`).
//! - [`DesktopError`]: what failed.
//! - [`launch`]: the launch sequence itself (which programs, which
//!   arguments, which probes), behind a [`launch::Spawner`] that says how
//!   parts start; [`Desktop`] runs it with plain process groups, the
//!   controller's local provider with its namespaced supervisor.
//!
//! The `deskenv-desktop` binary (`start`, `stop`, `run`) is a thin shell
//! over this for `scripts/test.sh` and `scripts/run-local.sh`.

pub mod launch;

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The screen every desktop gets (`Xvfb -screen 0`).
pub const SCREEN: &str = "1920x1080x24";

/// How long one readiness probe (`xdpyinfo`, `xprop`, `dbus-send`) may take:
/// a server that accepts the connection and then hangs must not hang us.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);
/// How long the parts get to exit after SIGTERM before SIGKILL.
const STOP_GRACE: Duration = Duration::from_millis(1000);

#[derive(Debug, thiserror::Error)]
pub enum DesktopError {
    #[error("display :{display} is taken ({} exists); stop it first or pick another", path.display())]
    Taken { display: u32, path: PathBuf },
    #[error("no free X display among :{first}..:{last} (each has an X lock file or a claim)")]
    NoFreeDisplay { first: u32, last: u32 },
    #[error("{text:?} is not a display (expected :N or N)")]
    BadDisplay { text: String },
    #[error("{}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot start {program}")]
    Spawn {
        program: String,
        #[source]
        source: io::Error,
    },
    #[error("{part} exited ({status}) before {what} was ready; {} ends: {tail}", log.display())]
    Exited {
        part: &'static str,
        what: String,
        status: ExitStatus,
        log: PathBuf,
        tail: String,
    },
    #[error("timed out after {}s waiting for {what}; {} ends: {tail}", waited.as_secs(), log.display())]
    Timeout {
        what: String,
        waited: Duration,
        log: PathBuf,
        tail: String,
    },
}

impl DesktopError {
    fn io(path: &Path) -> impl FnOnce(io::Error) -> DesktopError + '_ {
        move |source| DesktopError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// The pids of a desktop's parts; each is also its process group id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pids {
    pub xvfb: u32,
    pub dbus: u32,
    pub atspi: u32,
    /// openbox.
    pub wm: u32,
}

/// One part: a child in its own process group, its pid file and its log.
struct Proc {
    name: &'static str,
    child: Child,
    log: PathBuf,
}

/// A running desktop, stopped on drop unless [`detach`](Desktop::detach)ed.
pub struct Desktop {
    number: u32,
    dir: PathBuf,
    claim: PathBuf,
    /// What the parts themselves run with: DISPLAY, then the session bus.
    part_env: Vec<(String, String)>,
    env: Vec<(String, String)>,
    parts: Vec<Proc>,
    detached: bool,
}

impl std::fmt::Debug for Desktop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Desktop")
            .field("display", &self.display())
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

/// Parses `:N` or `N`.
pub fn parse_display(text: &str) -> Result<u32, DesktopError> {
    text.strip_prefix(':')
        .unwrap_or(text)
        .parse()
        .map_err(|_| DesktopError::BadDisplay { text: text.into() })
}

/// The folder of display `number`'s desktop: pid files, logs, the env file.
pub fn dir_of(number: u32) -> PathBuf {
    PathBuf::from(format!("/tmp/deskenv-desktop-{number}"))
}

fn claim_of(number: u32) -> PathBuf {
    PathBuf::from(format!("/tmp/deskenv-desktop-{number}.claim"))
}

fn lock_of(number: u32) -> PathBuf {
    PathBuf::from(format!("/tmp/.X{number}-lock"))
}

pub(crate) fn socket_of(number: u32) -> PathBuf {
    PathBuf::from(format!("/tmp/.X11-unix/X{number}"))
}

/// Takes display `number` for this process: its claim file is created
/// atomically, so two starts racing for one number cannot both win.
fn claim(number: u32) -> Result<PathBuf, DesktopError> {
    let lock = lock_of(number);
    if lock.exists() {
        return Err(DesktopError::Taken {
            display: number,
            path: lock,
        });
    }
    let claim = claim_of(number);
    match OpenOptions::new().write(true).create_new(true).open(&claim) {
        Ok(mut f) => {
            let _ = writeln!(f, "{}", std::process::id());
            Ok(claim)
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(DesktopError::Taken {
            display: number,
            path: claim,
        }),
        Err(e) => Err(DesktopError::Io {
            path: claim,
            source: e,
        }),
    }
}

impl Desktop {
    /// Starts a desktop on display `number`; refused when its X lock file or
    /// claim exists.
    pub fn start_on(number: u32) -> Result<Desktop, DesktopError> {
        let claim = claim(number)?;
        Desktop::start_claimed(number, claim)
    }

    /// Starts a desktop on a free display from :100 up (each process starts
    /// its search elsewhere, so parallel test binaries rarely collide). A
    /// display whose X server turns out to be someone else's is skipped.
    pub fn start_free() -> Result<Desktop, DesktopError> {
        let base = 100 + (std::process::id() % 50) * 2;
        for number in (base..base + 40).chain(100..200) {
            if socket_of(number).exists() {
                continue;
            }
            let claim = match claim(number) {
                Ok(claim) => claim,
                Err(DesktopError::Taken { .. }) => continue,
                Err(e) => return Err(e),
            };
            match Desktop::start_claimed(number, claim) {
                Err(DesktopError::Exited { part: "Xvfb", .. }) => continue,
                other => return other,
            }
        }
        Err(DesktopError::NoFreeDisplay {
            first: 100,
            last: 199,
        })
    }

    fn start_claimed(number: u32, claim: PathBuf) -> Result<Desktop, DesktopError> {
        let dir = dir_of(number);
        let mut d = Desktop {
            number,
            dir: dir.clone(),
            claim,
            part_env: Vec::new(),
            env: Vec::new(),
            parts: Vec::new(),
            detached: false,
        };
        // From here on, an error drops `d`, which stops what did start.
        remove_dir_if_any(&dir)?;
        fs::create_dir_all(&dir).map_err(DesktopError::io(&dir))?;
        // Xvfb runs without access control (-ac), but Xlib clients
        // (python-xlib, hence pyautogui) insist on an authority file existing.
        let xauthority = dir.join("Xauthority");
        File::create(&xauthority).map_err(DesktopError::io(&xauthority))?;

        let display = d.display();
        let options = launch::Options::plain(dir.clone());
        let address = launch::block_on(async {
            let mut plain = Plain { d: &mut d };
            launch::start_x(&mut plain, &options, number).await?;
            launch::start_session(&mut plain, &options, number).await
        })?;

        d.env = [
            ("DISPLAY", display.as_str()),
            ("XAUTHORITY", &xauthority.to_string_lossy()),
            ("DBUS_SESSION_BUS_ADDRESS", &address),
            ("GTK_A11Y", "atspi"),
            ("NO_AT_BRIDGE", "0"),
            ("QT_LINUX_ACCESSIBILITY_ALWAYS_ON", "1"),
            ("LANG", "C.UTF-8"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let env_file = d.env_file();
        d.write_env_file(&env_file)?;
        Ok(d)
    }

    /// `:N`.
    pub fn display(&self) -> String {
        format!(":{}", self.number)
    }

    /// N.
    pub fn number(&self) -> u32 {
        self.number
    }

    /// What clients of this desktop need: DISPLAY, XAUTHORITY,
    /// DBUS_SESSION_BUS_ADDRESS, GTK_A11Y, NO_AT_BRIDGE,
    /// QT_LINUX_ACCESSIBILITY_ALWAYS_ON, LANG.
    pub fn env(&self) -> &[(String, String)] {
        &self.env
    }

    /// The folder with this desktop's pid files and logs.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The env file written at start (`export K=V` lines, to source).
    pub fn env_file(&self) -> PathBuf {
        self.dir.join("env")
    }

    /// Writes the environment as a shell file to source.
    pub fn write_env_file(&self, path: &Path) -> Result<(), DesktopError> {
        let text: String = self
            .env
            .iter()
            .map(|(k, v)| {
                if k == "DBUS_SESSION_BUS_ADDRESS" {
                    format!("export {k}='{v}'\n")
                } else {
                    format!("export {k}={v}\n")
                }
            })
            .collect();
        fs::write(path, text).map_err(DesktopError::io(path))
    }

    pub fn pids(&self) -> Pids {
        let pid = |name| {
            self.parts
                .iter()
                .find(|p| p.name == name)
                .map_or(0, |p| p.child.id())
        };
        Pids {
            xvfb: pid("Xvfb"),
            dbus: pid("dbus-daemon"),
            atspi: pid("at-spi-bus-launcher"),
            wm: pid("openbox"),
        }
    }

    /// A command that runs on this desktop (its environment set).
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new(program);
        c.envs(self.env.iter().map(|(k, v)| (k, v)));
        c
    }

    /// Leaves the desktop running past this value; [`stop`] ends it.
    pub fn detach(mut self) -> Pids {
        let pids = self.pids();
        self.detached = true;
        pids
    }
}

/// The [`launch::Spawner`] of [`Desktop`]: each part a plain child in its
/// own process group, `<file>.pid` beside its `<file>.log`; probes and
/// waits block the thread.
struct Plain<'a> {
    d: &'a mut Desktop,
}

impl launch::Spawner for Plain<'_> {
    type Error = DesktopError;

    fn program(&self, name: &str) -> OsString {
        name.into()
    }

    fn spawn(&mut self, part: launch::Part) -> Result<u32, DesktopError> {
        let dir = &self.d.dir;
        let log = dir.join(&part.log);
        let err = File::create(&log).map_err(DesktopError::io(&log))?;
        let out = match &part.stdout {
            Some(name) => {
                let path = dir.join(name);
                File::create(&path).map_err(DesktopError::io(&path))?
            }
            None => err.try_clone().map_err(DesktopError::io(&log))?,
        };
        let child = Command::new(&part.argv[0])
            .args(&part.argv[1..])
            .envs(self.d.part_env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .process_group(0)
            .spawn()
            .map_err(|source| DesktopError::Spawn {
                program: part.argv[0].to_string_lossy().into_owned(),
                source,
            })?;
        let pid = child.id();
        let pid_file = log.with_extension("pid");
        let written = fs::write(&pid_file, format!("{pid}\n"));
        self.d.parts.push(Proc {
            name: part.name,
            child,
            log,
        });
        written.map_err(DesktopError::io(&pid_file))?;
        Ok(pid)
    }

    fn set_env(&mut self, key: &'static str, value: &str) {
        self.d.part_env.push((key.into(), value.into()));
    }

    fn failed(&mut self, watch: &[&'static str], what: &str) -> Option<DesktopError> {
        for part in self.d.parts.iter_mut().filter(|p| watch.contains(&p.name)) {
            if let Ok(Some(status)) = part.child.try_wait() {
                return Some(DesktopError::Exited {
                    part: part.name,
                    what: what.into(),
                    status,
                    log: part.log.clone(),
                    tail: tail(&part.log),
                });
            }
        }
        None
    }

    fn timeout(&mut self, what: &str, waited: Duration, _last: String, log: &str) -> DesktopError {
        let log = self.d.dir.join(log);
        DesktopError::Timeout {
            what: what.into(),
            waited,
            tail: tail(&log),
            log,
        }
    }

    /// Succeeds when `argv` exits 0 within [`PROBE_TIMEOUT`], with its
    /// stdout.
    fn probe(
        &self,
        argv: Vec<OsString>,
        env: Vec<(&'static str, OsString)>,
    ) -> impl std::future::Future<Output = Result<String, String>> {
        std::future::ready(probe(&self.d.part_env, &argv, &env))
    }

    fn sleep(&self, time: Duration) -> impl std::future::Future<Output = ()> {
        std::thread::sleep(time);
        std::future::ready(())
    }
}

fn probe(
    part_env: &[(String, String)],
    argv: &[OsString],
    env: &[(&'static str, OsString)],
) -> Result<String, String> {
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .envs(part_env.iter().map(|(k, v)| (k, v)))
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    // Read as it comes: a probe printing more than a pipe holds
    // (xdpyinfo) would otherwise never exit.
    let reader = child.stdout.take().map(|mut stdout| {
        std::thread::spawn(move || {
            let mut out = String::new();
            let _ = stdout.read_to_string(&mut out);
            out
        })
    });
    let deadline = Instant::now() + PROBE_TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("no answer within {}s", PROBE_TIMEOUT.as_secs()));
            }
        }
    };
    let out = reader.and_then(|r| r.join().ok()).unwrap_or_default();
    if status.success() {
        Ok(out)
    } else {
        Err(format!("{status}: {}", out.trim()))
    }
}

impl Drop for Desktop {
    fn drop(&mut self) {
        if self.detached {
            return;
        }
        for part in self.parts.iter().rev() {
            signal_group(part.child.id(), libc::SIGTERM);
        }
        let deadline = Instant::now() + STOP_GRACE;
        while Instant::now() < deadline
            && !self
                .parts
                .iter_mut()
                .all(|p| matches!(p.child.try_wait(), Ok(Some(_))))
        {
            std::thread::sleep(Duration::from_millis(20));
        }
        // Whatever is left of each group (the AT-SPI launcher's own bus, a
        // part that ignored SIGTERM) goes now.
        for part in self.parts.iter_mut() {
            signal_group(part.child.id(), libc::SIGKILL);
            let _ = part.child.wait();
        }
        let xvfb = self.pids().xvfb;
        remove_x_files(self.number, Some(xvfb));
        let _ = fs::remove_dir_all(&self.dir);
        let _ = fs::remove_file(&self.claim);
    }
}

/// Removes `dir` and what is in it; a folder that is not there is fine.
fn remove_dir_if_any(dir: &Path) -> Result<(), DesktopError> {
    match fs::remove_dir_all(dir) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(DesktopError::Io {
            path: dir.to_path_buf(),
            source: e,
        }),
        _ => Ok(()),
    }
}

/// Ends the desktop on display `number` that a detached start left running
/// (or whatever a crashed one left): the process groups named by the pid
/// files, the folder, the claim, and the X lock and socket when the server
/// that held them is gone. Nothing to stop is not an error.
pub fn stop(number: u32) -> Result<(), DesktopError> {
    let dir = dir_of(number);
    let mut pids = Vec::new();
    let mut xvfb = None;
    if let Ok(entries) = fs::read_dir(&dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "pid") {
                let Some(pid) = fs::read_to_string(&path)
                    .ok()
                    .and_then(|t| t.trim().parse::<u32>().ok())
                else {
                    continue;
                };
                if path.file_stem().is_some_and(|s| s == "xvfb") {
                    xvfb = Some(pid);
                }
                pids.push(pid);
            }
        }
    }
    for &pid in &pids {
        signal_group(pid, libc::SIGTERM);
    }
    let deadline = Instant::now() + STOP_GRACE;
    while Instant::now() < deadline && pids.iter().any(|&pid| alive(pid)) {
        std::thread::sleep(Duration::from_millis(20));
    }
    for &pid in &pids {
        signal_group(pid, libc::SIGKILL);
    }
    remove_x_files(number, xvfb);
    remove_dir_if_any(&dir)?;
    match fs::remove_file(claim_of(number)) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(DesktopError::Io {
            path: claim_of(number),
            source: e,
        }),
        _ => Ok(()),
    }
}

/// Removes display `number`'s X lock file and socket when the server named
/// in the lock is `ours` or no longer runs: never a live foreign server's.
fn remove_x_files(number: u32, ours: Option<u32>) {
    let lock = lock_of(number);
    let holder = fs::read_to_string(&lock)
        .ok()
        .and_then(|t| t.trim().parse::<u32>().ok());
    let stale = match holder {
        Some(pid) => Some(pid) == ours || !alive(pid),
        None => true,
    };
    if stale {
        let _ = fs::remove_file(&lock);
        let _ = fs::remove_file(socket_of(number));
    }
}

/// Sends `signal` to the process group `pid` leads, or to `pid` alone when
/// it leads none (a part started by something else).
fn signal_group(pid: u32, signal: libc::c_int) {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return;
    };
    if pid <= 0 {
        return;
    }
    // SAFETY: kill(2) takes no pointers; a stale pid is at worst ESRCH.
    unsafe {
        if libc::kill(-pid, signal) != 0 {
            libc::kill(pid, signal);
        }
    }
}

fn alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks that the process exists.
    if pid <= 0 || unsafe { libc::kill(pid, 0) } != 0 {
        return false;
    }
    // A zombie has ended; in a container nobody may ever reap it.
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat
        .rsplit_once(") ")
        .and_then(|(_, rest)| rest.chars().next());
    state != Some('Z')
}

/// The last lines of a log, for an error message.
fn tail(path: &Path) -> String {
    const MAX: u64 = 2000;
    let Ok(mut f) = File::open(path) else {
        return "(no log)".into();
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = f.seek(SeekFrom::Start(len.saturating_sub(MAX)));
    let mut bytes = Vec::new();
    let _ = f.read_to_end(&mut bytes);
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.trim_end().lines().collect();
    let tail = lines[lines.len().saturating_sub(10)..].join("\n");
    if tail.trim().is_empty() {
        "(empty)".into()
    } else {
        tail
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_parse_with_or_without_the_colon() {
        assert_eq!(parse_display(":77").unwrap(), 77);
        assert_eq!(parse_display("5").unwrap(), 5);
        assert!(matches!(
            parse_display(":x"),
            Err(DesktopError::BadDisplay { .. })
        ));
    }

    #[test]
    fn the_tail_of_a_log_is_its_last_lines() {
        let dir = std::env::temp_dir().join(format!("deskenv-desktop-tail-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let log = dir.join("x.log");
        let text: String = (0..30).map(|i| format!("line {i}\n")).collect();
        fs::write(&log, text).unwrap();
        let t = tail(&log);
        assert!(t.starts_with("line 20") && t.ends_with("line 29"), "{t}");
        fs::write(&log, "").unwrap();
        assert_eq!(tail(&log), "(empty)");
        assert_eq!(tail(&dir.join("none.log")), "(no log)");
        fs::remove_dir_all(&dir).unwrap();
    }
}
