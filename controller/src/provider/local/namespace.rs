//! The machine's private mount and PID namespace (root) and its init, in
//! Rust: a process forked for it does what `unshare --mount --pid --fork
//! --kill-child --mount-proc --propagation private` did, and its child,
//! pid 1 of the new namespace, mounts the machine's `/home/user`, says
//! `ready` and reaps orphans until it is killed. Neither process execs:
//! both run [`enter`] in the forked child (only raw system calls, nothing
//! that allocates or takes a lock).
//!
//! Unlike the programs of the machine, the two carry no marker in their
//! environment (`/proc/<pid>/environ` is what a process was exec'd with,
//! and they are not): they are ended by pid, and by parent-death signals
//! if the controller dies.

use super::supervise::{Desktop, INIT_PROC};
use super::{HomeMode, LocalProvider, HOME};
use crate::provider::ProviderError;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const NAMESPACE_TIMEOUT: Duration = Duration::from_secs(10);
/// The line the init prints once the namespace is set up.
const READY: &[u8] = b"ready\n";

/// What the init does once its namespace is set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Then {
    /// Print `ready` and reap orphans until killed.
    Serve,
    /// Exit 0 (the probe: can namespaces be made here?).
    Exit,
}

/// What the forked child needs, prepared before the fork.
struct Plan {
    /// A fresh tmpfs on `/home/user` (with `Desktop/` in it), and one on
    /// `/tmp` with the host's `/tmp/.X11-unix` in it ([`private_tmp`]).
    tmpfs_home: bool,
    private_tmp: bool,
    /// [`HOME`] and its `Desktop/`.
    home: CString,
    desktop: CString,
    /// The folder the init starts in (programs entered with `nsenter --wd`
    /// start there too).
    cwd: CString,
    then: Then,
}

impl LocalProvider {
    /// Starts the namespace and its init; the init's host pid goes into
    /// `d.init`.
    pub(super) async fn start_init(&self, d: &mut Desktop) -> Result<(), ProviderError> {
        if self.private_tmp {
            // The host's X socket folder, which the machine's /tmp binds.
            let x11 = std::path::Path::new("/tmp/.X11-unix");
            if !x11.is_dir() {
                use std::os::unix::fs::PermissionsExt;
                std::fs::create_dir_all(x11)
                    .and_then(|()| {
                        std::fs::set_permissions(x11, std::fs::Permissions::from_mode(0o1777))
                    })
                    .map_err(crate::provider::io("creating /tmp/.X11-unix"))?;
            }
        }
        let plan = Plan {
            tmpfs_home: self.home == HomeMode::Tmpfs,
            private_tmp: self.private_tmp,
            home: CString::new(HOME).expect("no NUL"),
            desktop: CString::new(format!("{HOME}/Desktop")).expect("no NUL"),
            cwd: CString::new(d.home.as_os_str().as_bytes()).map_err(|_| {
                ProviderError::Config(format!("home {} has a NUL byte", d.home.display()))
            })?,
            then: Then::Serve,
        };
        let creator_pid = d.spawn_with(INIT_PROC, init_command(plan), "init.log")?;
        let log = d.dir.join("init.log");
        let deadline = Instant::now() + NAMESPACE_TIMEOUT;
        loop {
            let ready = std::fs::read(&log)
                .unwrap_or_default()
                .windows(READY.len())
                .any(|w| w == READY);
            if ready {
                if let Some(init) = children(creator_pid).first() {
                    d.init = Some(*init);
                    return Ok(());
                }
            }
            if let Some(e) = d.exit_error(INIT_PROC) {
                return Err(e);
            }
            if Instant::now() > deadline {
                return Err(d.timeout_error(
                    "the namespace init",
                    NAMESPACE_TIMEOUT,
                    "no `ready` line".into(),
                    "init.log",
                ));
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

/// A command that, spawned, becomes the namespace's creator (it never
/// execs: `program` is only a name).
fn init_command(plan: Plan) -> Command {
    let mut cmd = Command::new("/proc/self/exe");
    cmd.arg0("deskenv-init");
    // SAFETY: `enter` makes only async-signal-safe system calls and never
    // returns into the forked copy of this process.
    unsafe {
        cmd.pre_exec(move || enter(&plan));
    }
    cmd
}

/// Whether a private mount and PID namespace can be made here (and
/// `/proc` mounted in it).
pub(super) fn probe_namespaces() -> Result<(), String> {
    let plan = Plan {
        tmpfs_home: false,
        private_tmp: false,
        home: CString::new(HOME).expect("no NUL"),
        desktop: CString::new(format!("{HOME}/Desktop")).expect("no NUL"),
        cwd: CString::new("/").expect("no NUL"),
        then: Then::Exit,
    };
    let out = init_command(plan)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("forking the namespace init: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

/// Runs in the forked child: sets up the namespaces, forks the init and
/// waits for it. Never returns.
fn enter(plan: &Plan) -> ! {
    // SAFETY: raw system calls on memory this process owns; no allocation.
    unsafe {
        clean_process_state();
        // The controller's death signal and a process group of its own, as
        // every guarded child has (the spawner's own pre_exec never runs:
        // this one does not return).
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
            fail(b"prctl(PR_SET_PDEATHSIG)");
        }
        let _ = libc::setpgid(0, 0);
        if libc::unshare(libc::CLONE_NEWNS | libc::CLONE_NEWPID) != 0 {
            fail(b"unshare(CLONE_NEWNS | CLONE_NEWPID)");
        }
        // Mounts made inside stay inside.
        if libc::mount(
            c"none".as_ptr(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ) != 0
        {
            fail(b"making / private in the new mount namespace");
        }
        let init = libc::fork();
        if init < 0 {
            fail(b"fork");
        }
        if init == 0 {
            run_init(plan);
        }
        // The creator: ends with the init (its exit status), and the init
        // with it (its death signal).
        let mut status = 0;
        while libc::waitpid(init, &mut status, 0) < 0 {
            if *libc::__errno_location() != libc::EINTR {
                libc::_exit(1);
            }
        }
        if libc::WIFEXITED(status) {
            libc::_exit(libc::WEXITSTATUS(status));
        }
        libc::_exit(128 + libc::WTERMSIG(status));
    }
}

/// Pid 1 of the namespace.
///
/// # Safety
/// Only in the forked child of [`enter`].
unsafe fn run_init(plan: &Plan) -> ! {
    // SAFETY: see the function's.
    unsafe {
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
            fail(b"prctl(PR_SET_PDEATHSIG) in the init");
        }
        // The name `ps` shows (the environment stays as it is).
        libc::prctl(libc::PR_SET_NAME, c"deskenv-init".as_ptr());
        // This namespace's /proc, as `unshare --mount-proc`.
        libc::mount(
            c"none".as_ptr(),
            c"/proc".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        );
        if libc::mount(
            c"proc".as_ptr(),
            c"/proc".as_ptr(),
            c"proc".as_ptr(),
            libc::MS_NOSUID | libc::MS_NOEXEC | libc::MS_NODEV,
            std::ptr::null(),
        ) != 0
        {
            fail(b"mounting /proc");
        }
        if plan.private_tmp {
            private_tmp();
        }
        if plan.tmpfs_home {
            if libc::mount(
                c"deskenv-home".as_ptr(),
                plan.home.as_ptr(),
                c"tmpfs".as_ptr(),
                0,
                c"mode=0755".as_ptr().cast(),
            ) != 0
            {
                fail(b"mounting a tmpfs on /home/user");
            }
            if libc::mkdir(plan.desktop.as_ptr(), 0o755) != 0
                && *libc::__errno_location() != libc::EEXIST
            {
                fail(b"mkdir /home/user/Desktop");
            }
        }
        if libc::chdir(plan.cwd.as_ptr()) != 0 {
            fail(b"chdir to the home folder");
        }
        if plan.then == Then::Exit {
            libc::_exit(0);
        }
        libc::write(1, READY.as_ptr().cast(), READY.len());
        // Reaps every orphan of the namespace. Without handlers, signals from
        // inside the namespace do not reach pid 1; SIGKILL from the host ends
        // it, and the kernel the whole namespace with it.
        loop {
            if libc::wait(std::ptr::null_mut()) == -1 {
                libc::sleep(1);
            }
        }
    }
}

/// A fresh `/tmp` for the machine, so that what applications keep there
/// is the machine's own: LibreOffice's single-instance pipe is named after
/// its profile's path, the same in every machine, so a second machine's
/// `soffice` would hand its document to the first machine's. The host's
/// `/tmp/.X11-unix` is bound into it: the X sockets stay where the host
/// (display numbers, `deskenv-desktop`, tests) looks for them. Runs in the
/// init, before anything else of the machine starts.
///
/// # Safety
/// Raw system calls only (the forked child's rules).
unsafe fn private_tmp() {
    // SAFETY: see the function's.
    unsafe {
        // The host's socket folder, held open across the mount that hides it.
        let x11 = libc::open(
            c"/tmp/.X11-unix".as_ptr(),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        );
        if x11 < 0 || libc::dup2(x11, X11_FD) < 0 {
            fail(b"opening /tmp/.X11-unix");
        }
        if libc::mount(
            c"deskenv-tmp".as_ptr(),
            c"/tmp".as_ptr(),
            c"tmpfs".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV,
            c"mode=1777".as_ptr().cast(),
        ) != 0
        {
            fail(b"mounting a tmpfs on /tmp");
        }
        if libc::mkdir(c"/tmp/.X11-unix".as_ptr(), 0o1777) != 0
            || libc::mount(
                X11_FD_PATH.as_ptr(),
                c"/tmp/.X11-unix".as_ptr(),
                std::ptr::null(),
                libc::MS_BIND,
                std::ptr::null(),
            ) != 0
        {
            fail(b"binding the host's /tmp/.X11-unix into the machine's /tmp");
        }
        libc::close(X11_FD);
        libc::close(x11);
    }
}

/// The descriptor [`private_tmp`] holds the host's X socket folder on, and
/// its path through this namespace's `/proc`.
const X11_FD: libc::c_int = 200;
const X11_FD_PATH: &std::ffi::CStr = c"/proc/self/fd/200";

/// Closes every descriptor but stdio (the controller's sockets and pipes
/// must not live on in a process that does not exec) and puts every
/// signal back to its default, unblocked.
///
/// # Safety
/// Only in a forked child.
unsafe fn clean_process_state() {
    // SAFETY: see the function's.
    unsafe {
        if libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32) != 0 {
            let max = match libc::sysconf(libc::_SC_OPEN_MAX) {
                n if n > 0 => n.min(1 << 20) as i32,
                _ => 65_536,
            };
            for fd in 3..max {
                libc::close(fd);
            }
        }
        for sig in 1..libc::SIGRTMAX() {
            if sig != libc::SIGKILL && sig != libc::SIGSTOP {
                libc::signal(sig, libc::SIG_DFL);
            }
        }
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
    }
}

/// Writes `deskenv-init: <what> failed: errno <n>` to stderr and exits 1.
///
/// # Safety
/// Only in a forked child.
unsafe fn fail(what: &[u8]) -> ! {
    // SAFETY: see the function's.
    unsafe {
        let errno = *libc::__errno_location();
        let mut buf = [0u8; 160];
        let mut n = 0;
        for part in [b"deskenv-init: ".as_slice(), what, b" failed: errno "] {
            for &b in part {
                if n < buf.len() {
                    buf[n] = b;
                    n += 1;
                }
            }
        }
        let mut digits = [0u8; 10];
        let mut d = 0;
        let mut e = errno.unsigned_abs();
        loop {
            digits[d] = b'0' + (e % 10) as u8;
            d += 1;
            e /= 10;
            if e == 0 || d == digits.len() {
                break;
            }
        }
        while d > 0 && n < buf.len() - 1 {
            d -= 1;
            buf[n] = digits[d];
            n += 1;
        }
        buf[n] = b'\n';
        libc::write(2, buf.as_ptr().cast(), n + 1);
        libc::_exit(1);
    }
}

/// The children of a process (its main thread's).
pub(super) fn children(pid: u32) -> Vec<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|s| s.parse().ok())
        .collect()
}
