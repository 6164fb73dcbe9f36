//! The one launch sequence of a desktop, shared by [`crate::Desktop`] and
//! the controller's local provider: which programs run with which
//! arguments, in which order, and how each is known to be up.
//!
//! [`start_x`] starts Xvfb on a display and waits for it;
//! [`start_session`] then sets the background (when asked), starts the
//! D-Bus session bus, the AT-SPI bus launcher and openbox, calls
//! [`Spawner::session_up`] (what starts there comes up alongside the window
//! manager), waits for `_NET_SUPPORTING_WM_CHECK` and `org.a11y.Bus`, and
//! starts the panel (when asked). How a part is started, how a probe runs,
//! how a wait sleeps, how errors read and where phase timings go is the
//! [`Spawner`]'s: [`crate::Desktop`] spawns plain process groups and runs
//! the sequence to completion on its own thread; the local provider spawns
//! through its supervisor in the machine's namespaces, under tokio.
//! What differs between the two users is in [`Options`].

use std::ffi::OsString;
use std::future::Future;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use crate::SCREEN;

/// The AT-SPI bus launcher Debian installs (also its name for
/// [`Spawner::program`]).
pub const ATSPI_LAUNCHER: &str = "/usr/libexec/at-spi-bus-launcher";

/// The background [`Options::background`] usually asks for: the guest
/// image's.
pub const GUEST_BACKGROUND: &str = "#2f4f6f";

/// One part of the desktop to start.
#[derive(Debug, Clone)]
pub struct Part {
    /// Its name, as waits watch it and errors name it (`Xvfb`, `dbus-daemon`).
    pub name: &'static str,
    /// The program ([`Spawner::program`]'s path) and its arguments.
    pub argv: Vec<OsString>,
    /// Its log, a file name in the desktop's folder: stderr, and stdout
    /// unless `stdout` is given.
    pub log: String,
    /// A file name in the desktop's folder for its stdout.
    pub stdout: Option<String>,
}

/// How Xvfb is known to be up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XReady {
    /// `xdpyinfo` answers.
    Xdpyinfo,
    /// Its socket (`/tmp/.X11-unix/XN`) accepts a connection.
    Socket,
}

/// What differs between the users of the sequence.
#[derive(Debug, Clone)]
pub struct Options {
    /// The desktop's folder (its `Xauthority`).
    pub dir: PathBuf,
    /// Whether Xvfb's log names its display (`xvfb-N.log`, else `xvfb.log`).
    pub numbered_xvfb_log: bool,
    /// Arguments after Xvfb's usual ones.
    pub xvfb_extra: Vec<OsString>,
    pub x_ready: XReady,
    /// How often the X wait polls.
    pub x_poll: Duration,
    /// How often the other waits poll.
    pub poll: Duration,
    pub x_timeout: Duration,
    pub dbus_timeout: Duration,
    pub wm_timeout: Duration,
    pub atspi_timeout: Duration,
    pub panel_timeout: Duration,
    /// `--address=` for the session bus; else its default.
    pub bus_address: Option<String>,
    /// `xsetroot -solid` this colour once X is up.
    pub background: Option<String>,
    /// Start `xfce4-panel` (and wait for its window with `xdotool`).
    pub panel: bool,
}

impl Options {
    /// What [`crate::Desktop`] uses: `xdpyinfo` probes every 100 ms, 20 s
    /// for each part, no background, no panel.
    pub fn plain(dir: PathBuf) -> Options {
        const READY: Duration = Duration::from_secs(20);
        Options {
            dir,
            numbered_xvfb_log: false,
            xvfb_extra: Vec::new(),
            x_ready: XReady::Xdpyinfo,
            x_poll: Duration::from_millis(100),
            poll: Duration::from_millis(100),
            x_timeout: READY,
            dbus_timeout: READY,
            wm_timeout: READY,
            atspi_timeout: READY,
            panel_timeout: READY,
            bus_address: None,
            background: None,
            panel: false,
        }
    }

    /// Xvfb's log file name on display `n`.
    pub fn xvfb_log(&self, n: u32) -> String {
        if self.numbered_xvfb_log {
            format!("xvfb-{n}.log")
        } else {
            "xvfb.log".into()
        }
    }

    fn x_env(&self, display: &str) -> Vec<(&'static str, OsString)> {
        vec![
            ("DISPLAY", display.into()),
            ("XAUTHORITY", self.dir.join("Xauthority").into()),
        ]
    }
}

/// How the sequence starts parts, probes them and reports.
pub trait Spawner {
    type Error;

    /// The path of program `name` (`Xvfb`, [`ATSPI_LAUNCHER`], ...).
    fn program(&self, name: &str) -> OsString;

    /// Starts `part`; its pid.
    fn spawn(&mut self, part: Part) -> Result<u32, Self::Error>;

    /// Parts started from now on run with `key=value` (`DISPLAY` once
    /// Xvfb is started, `DBUS_SESSION_BUS_ADDRESS` once the bus is up).
    fn set_env(&mut self, key: &'static str, value: &str);

    /// The error when one of `watch` (or something they all need) has
    /// exited while waiting for `what`.
    fn failed(&mut self, watch: &[&'static str], what: &str) -> Option<Self::Error>;

    /// The error when `what` is not up after `waited`; `last` is the last
    /// probe's answer, `log` the log file to quote.
    fn timeout(&mut self, what: &str, waited: Duration, last: String, log: &str) -> Self::Error;

    /// Runs `argv` with `env` added; its output when it succeeded, else
    /// why not.
    fn probe(
        &self,
        argv: Vec<OsString>,
        env: Vec<(&'static str, OsString)>,
    ) -> impl Future<Output = Result<String, String>>;

    fn sleep(&self, time: Duration) -> impl Future<Output = ()>;

    /// Step `name` (`xvfb`, `dbus`, `wm`, `atspi`, `panel`) is done.
    fn phase(&mut self, _name: &'static str) {}

    /// X and the session bus are up; the window manager and the AT-SPI bus
    /// are starting.
    fn session_up(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// What a wait polls.
enum Probe {
    /// The socket accepts a connection.
    Socket(PathBuf),
    /// The command succeeds and prints `want`.
    Command {
        argv: Vec<OsString>,
        env: Vec<(&'static str, OsString)>,
        want: Want,
    },
    /// The file has a first line (the session bus's address).
    FirstLine(PathBuf),
}

#[derive(Clone, Copy)]
enum Want {
    Text(&'static str),
    /// A line that is a window id (`xdotool search`).
    WindowId,
}

async fn check<S: Spawner>(s: &S, probe: &Probe) -> Result<String, String> {
    match probe {
        Probe::Socket(path) => match UnixStream::connect(path) {
            Ok(_) => Ok(String::new()),
            Err(_) => Err(format!("{} does not accept connections", path.display())),
        },
        Probe::Command { argv, env, want } => {
            let out = s.probe(argv.clone(), env.clone()).await?;
            let ok = match want {
                Want::Text(t) => out.contains(t),
                Want::WindowId => out
                    .lines()
                    .any(|l| !l.is_empty() && l.trim().chars().all(|c| c.is_ascii_digit())),
            };
            match (ok, want) {
                (true, _) => Ok(out),
                (false, Want::WindowId) => Err(format!("no window yet {}", out.trim())),
                (false, _) => Err(out.trim().to_string()),
            }
        }
        Probe::FirstLine(path) => {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            match text.split_once('\n') {
                Some((line, _)) if !line.trim().is_empty() => Ok(line.trim().to_string()),
                _ => Err("no address printed yet".into()),
            }
        }
    }
}

/// Polls `probe` every `poll` until it answers; an error when one of
/// `watch` exits first or `timeout` passes (quoting `log`).
#[allow(clippy::too_many_arguments)]
async fn wait<S: Spawner>(
    s: &mut S,
    what: &str,
    watch: &[&'static str],
    log: &str,
    timeout: Duration,
    poll: Duration,
    probe: Probe,
) -> Result<String, S::Error> {
    let deadline = Instant::now() + timeout;
    loop {
        let last = match check(s, &probe).await {
            Ok(v) => return Ok(v),
            Err(e) => e,
        };
        if let Some(e) = s.failed(watch, what) {
            return Err(e);
        }
        if Instant::now() > deadline {
            return Err(s.timeout(what, timeout, last, log));
        }
        s.sleep(poll).await;
    }
}

fn argv(program: OsString, args: &[&str]) -> Vec<OsString> {
    std::iter::once(program)
        .chain(args.iter().map(OsString::from))
        .collect()
}

/// Starts Xvfb (1920x1080x24) on display `n` and waits until it is up.
pub async fn start_x<S: Spawner>(s: &mut S, o: &Options, n: u32) -> Result<(), S::Error> {
    let display = format!(":{n}");
    let log = o.xvfb_log(n);
    // -noreset: without it the server resets when its last client (a
    // probe) leaves, and a client connecting then is refused.
    let mut xvfb = argv(
        s.program("Xvfb"),
        &[
            &display,
            "-screen",
            "0",
            SCREEN,
            "-nolisten",
            "tcp",
            "-noreset",
            "-ac",
            "+extension",
            "XTEST",
            "+extension",
            "MIT-SHM",
        ],
    );
    xvfb.extend(o.xvfb_extra.iter().cloned());
    s.spawn(Part {
        name: "Xvfb",
        argv: xvfb,
        log: log.clone(),
        stdout: None,
    })?;
    s.set_env("DISPLAY", &display);
    let probe = match o.x_ready {
        XReady::Socket => Probe::Socket(crate::socket_of(n)),
        XReady::Xdpyinfo => Probe::Command {
            argv: argv(s.program("xdpyinfo"), &[]),
            env: o.x_env(&display),
            want: Want::Text(""),
        },
    };
    wait(
        s,
        &format!("Xvfb on {display}"),
        &["Xvfb"],
        &log,
        o.x_timeout,
        o.x_poll,
        probe,
    )
    .await?;
    s.phase("xvfb");
    Ok(())
}

/// The rest of the desktop on display `n`, whose X server [`start_x`]
/// started: the background, the session bus, the AT-SPI bus, openbox,
/// [`Spawner::session_up`], then the panel. Returns the session bus's
/// address.
pub async fn start_session<S: Spawner>(s: &mut S, o: &Options, n: u32) -> Result<String, S::Error> {
    let display = format!(":{n}");
    if let Some(colour) = &o.background {
        // The guest image's background; not worth failing over.
        let _ = s
            .probe(
                argv(s.program("xsetroot"), &["-solid", colour]),
                o.x_env(&display),
            )
            .await;
    }

    // The session bus prints its address on stdout once it listens (the
    // services it activates get DISPLAY).
    let mut dbus = argv(
        s.program("dbus-daemon"),
        &["--session", "--nofork", "--nopidfile"],
    );
    if let Some(address) = &o.bus_address {
        dbus.push(format!("--address={address}").into());
    }
    dbus.push("--print-address=1".into());
    s.spawn(Part {
        name: "dbus-daemon",
        argv: dbus,
        log: "dbus.log".into(),
        stdout: Some("dbus.addr".into()),
    })?;
    let address = wait(
        s,
        "the D-Bus session bus",
        &["dbus-daemon"],
        "dbus.log",
        o.dbus_timeout,
        o.poll,
        Probe::FirstLine(o.dir.join("dbus.addr")),
    )
    .await?;
    s.phase("dbus");
    s.set_env("DBUS_SESSION_BUS_ADDRESS", &address);

    // The AT-SPI bus (GTK applications would activate it on demand, but
    // the agent's first walk should not pay for that), the window manager
    // and the clients at once.
    s.spawn(Part {
        name: "at-spi-bus-launcher",
        argv: argv(s.program(ATSPI_LAUNCHER), &["--launch-immediately"]),
        log: "atspi.log".into(),
        stdout: None,
    })?;
    s.spawn(Part {
        name: "openbox",
        argv: argv(s.program("openbox"), &["--sm-disable"]),
        log: "openbox.log".into(),
        stdout: None,
    })?;
    s.session_up()?;
    // Clients that map windows before the window manager can stay unmapped.
    wait(
        s,
        "openbox (_NET_SUPPORTING_WM_CHECK on the root window)",
        &["openbox", "Xvfb"],
        "openbox.log",
        o.wm_timeout,
        o.poll,
        Probe::Command {
            argv: argv(
                s.program("xprop"),
                &["-display", &display, "-root", "_NET_SUPPORTING_WM_CHECK"],
            ),
            env: o.x_env(&display),
            want: Want::Text("window id"),
        },
    )
    .await?;
    s.phase("wm");
    wait(
        s,
        "the AT-SPI bus (org.a11y.Bus)",
        &["at-spi-bus-launcher", "dbus-daemon"],
        "atspi.log",
        o.atspi_timeout,
        o.poll,
        Probe::Command {
            argv: argv(
                s.program("dbus-send"),
                &[
                    "--session",
                    "--print-reply",
                    "--reply-timeout=2000",
                    "--dest=org.a11y.Bus",
                    "/org/a11y/bus",
                    "org.a11y.Bus.GetAddress",
                ],
            ),
            env: vec![("DBUS_SESSION_BUS_ADDRESS", address.clone().into())],
            want: Want::Text("string \""),
        },
    )
    .await?;
    s.phase("atspi");

    // The panel, as in the guest image: after the window manager (it is a
    // dock) and the AT-SPI bus (it joins the tree).
    if o.panel {
        s.spawn(Part {
            name: "xfce4-panel",
            argv: argv(s.program("xfce4-panel"), &["--disable-wm-check"]),
            log: "panel.log".into(),
            stdout: None,
        })?;
        wait(
            s,
            "xfce4-panel (a visible window of class xfce4-panel)",
            &["xfce4-panel"],
            "panel.log",
            o.panel_timeout,
            o.poll,
            Probe::Command {
                argv: argv(
                    s.program("xdotool"),
                    &["search", "--onlyvisible", "--class", "xfce4-panel"],
                ),
                env: o.x_env(&display),
                want: Want::WindowId,
            },
        )
        .await?;
        s.phase("panel");
    }
    Ok(address)
}

/// Runs a future whose every await is ready at once (a [`Spawner`] whose
/// probes and sleeps block) to its end on this thread.
pub fn block_on<F: Future>(future: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        match future.as_mut().poll(&mut cx) {
            Poll::Ready(v) => return v,
            Poll::Pending => std::thread::park(),
        }
    }
}

/// Whether `path`'s first line is there (for tests of the address probe).
#[cfg(test)]
fn first_line(path: &std::path::Path) -> Result<String, String> {
    struct Never;
    impl Spawner for Never {
        type Error = ();
        fn program(&self, name: &str) -> OsString {
            name.into()
        }
        fn spawn(&mut self, _: Part) -> Result<u32, ()> {
            Err(())
        }
        fn set_env(&mut self, _: &'static str, _: &str) {}
        fn failed(&mut self, _: &[&'static str], _: &str) -> Option<()> {
            None
        }
        fn timeout(&mut self, _: &str, _: Duration, _: String, _: &str) {}
        async fn probe(
            &self,
            _: Vec<OsString>,
            _: Vec<(&'static str, OsString)>,
        ) -> Result<String, String> {
            Err("no".into())
        }
        async fn sleep(&self, _: Duration) {}
    }
    block_on(check(&Never, &Probe::FirstLine(path.to_path_buf())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bus_address_is_a_whole_first_line() {
        let dir = std::env::temp_dir().join(format!("deskenv-launch-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("dbus.addr");
        assert!(first_line(&file).is_err());
        std::fs::write(&file, "unix:path=/tmp/x").unwrap();
        assert!(first_line(&file).is_err());
        std::fs::write(&file, "unix:path=/tmp/x,guid=1\n").unwrap();
        assert_eq!(first_line(&file).unwrap(), "unix:path=/tmp/x,guid=1");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_plain_options_name_one_xvfb_log() {
        let o = Options::plain("/tmp/d".into());
        assert_eq!(o.xvfb_log(7), "xvfb.log");
        let o = Options {
            numbered_xvfb_log: true,
            ..o
        };
        assert_eq!(o.xvfb_log(7), "xvfb-7.log");
    }
}
