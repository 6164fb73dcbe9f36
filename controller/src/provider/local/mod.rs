//! The local provider: every machine is a fresh headless desktop on the
//! host (Xvfb, a D-Bus session bus, the AT-SPI bus, openbox and, when
//! installed, the guest image's panel) served by the same guest agent as
//! the VMs (`deskenv-agent`), started and torn down by the controller. No
//! VM: for fast development and tests (a machine starts in about 0.2 s and
//! ends in a few tens of milliseconds).
//!
//! Layout of a start ([`LocalProvider::start_local`]):
//!
//! 1. a folder `<cache>/local/<name>-<pid>-<n>/` holds the logs (one per
//!    process), the empty X authority file, the runtime dir and the guest
//!    image's `/etc/xdg` (MIME defaults, the panel), first in
//!    `XDG_CONFIG_DIRS`; it is registered with the [`reaper`]. A record
//!    beside it (`<folder>.json`: owner, marker, display) lets [`sweep`]
//!    end what a dead controller left;
//! 2. as root, the machine gets a private mount and PID namespace, held by
//!    a tiny init (`unshare … perl`, which reaps orphans) with its own
//!    `/proc` and, with `isolate_home`, a fresh tmpfs on `/home/user`
//!    (seeded like the guest's: `Desktop/`, MIME defaults, LibreOffice
//!    without first-start dialogs); every later process enters it with
//!    `nsenter`. Killing that init ends every process of the namespace at
//!    once (the kernel does it), the applications the agent launched in
//!    their own sessions included; the init dies with `unshare`, which dies
//!    with the controller (parent-death signals), and the reaper kills it
//!    on SIGINT/SIGTERM, so even a killed controller leaves nothing
//!    running;
//! 3. Xvfb on the first free display from `first_display` (lock file and
//!    socket checked, stale ones of dead servers reclaimed), the session
//!    bus, the AT-SPI bus launcher, openbox, the panel, and the agent on
//!    `127.0.0.1:0` (it prints the port it got), all with the guest
//!    session's environment (its `PATH` too). Readiness is probed, never
//!    slept for: the X socket, `_NET_SUPPORTING_WM_CHECK`, `org.a11y.Bus`,
//!    the panel's window, then `/v1/health` until the screen is 1920×1080
//!    and AT-SPI answers.
//!
//! Every process of a machine carries `DESKENV_LOCAL_MACHINE=<marker>` in
//! its environment. Ending a machine SIGKILLs the namespace's init and
//! waits for the namespace to be empty, then kills every process that
//! still carries the marker (the only mechanism without root) until none
//! is left, and removes the display's lock file and socket, the bus
//! socket, the folder and the record.
//!
//! Without root there are no namespaces: `/home/user` is the host's (a
//! warning says so, and [`LocalProvider::describe`]), and applications the
//! agent launched outlive a killed controller until the next [`sweep`].

use crate::agent_client::AgentClient;
use crate::provider::process::{describe_status, keep_logs, log_tail};
use crate::provider::reaper;
use crate::provider::{agent_err, Machine, Provider, ProviderError, StartPath, StartReport};
use futures::future::BoxFuture;
use futures::FutureExt;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::ffi::OsString;
use std::future::Future;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The screen every machine gets (the guest image's).
pub const SCREEN: (u32, u32) = (1920, 1080);
/// The environment variable that marks a machine's processes.
pub const MARKER_VAR: &str = "DESKENV_LOCAL_MACHINE";
/// The desktop user's home, as in the guest image.
pub const HOME: &str = "/home/user";
/// The guest session's PATH.
const GUEST_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
/// How many display numbers from `first_display` are tried.
const DISPLAYS: u32 = 200;
/// A lock file or socket without a server is taken for a server that is
/// starting, until it is this old.
const STALE_AFTER: Duration = Duration::from_secs(30);

const NAMESPACE_TIMEOUT: Duration = Duration::from_secs(10);
const X_TIMEOUT: Duration = Duration::from_secs(20);
const DBUS_TIMEOUT: Duration = Duration::from_secs(10);
const WM_TIMEOUT: Duration = Duration::from_secs(20);
const ATSPI_TIMEOUT: Duration = Duration::from_secs(20);
const PANEL_TIMEOUT: Duration = Duration::from_secs(20);
const AGENT_TIMEOUT: Duration = Duration::from_secs(30);
/// The name of the namespace's creator (`unshare`, the init's parent).
const INIT_PROC: &str = "namespace init";
/// How long ending a machine waits for its processes to be gone.
const KILL_WAIT: Duration = Duration::from_secs(5);

/// Programs every machine needs, with their Debian package.
const TOOLS: &[(&str, &str)] = &[
    ("Xvfb", "xvfb"),
    ("dbus-daemon", "dbus"),
    ("dbus-send", "dbus"),
    ("/usr/libexec/at-spi-bus-launcher", "at-spi2-core"),
    ("openbox", "openbox"),
    ("xprop", "x11-utils"),
];
/// Programs that make the desktop look like the guest image's, used when
/// installed: its panel (28 px at the top: without it every window sits
/// higher than in a VM, and solutions that click coordinates miss) and
/// its background.
const OPTIONAL_TOOLS: &[(&str, &str)] = &[
    ("xfce4-panel", "xfce4-panel"),
    ("xdotool", "xdotool"),
    ("xsetroot", "x11-xserver-utils"),
];
/// Programs the namespaces need (root).
const NS_TOOLS: &[(&str, &str)] = &[
    ("unshare", "util-linux"),
    ("nsenter", "util-linux"),
    ("perl", "perl-base"),
];

/// Host variables that would point the machine's applications at the
/// host's session or configuration.
const SCRUB: &[&str] = &[
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

/// What went wrong with a local desktop.
#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    #[error("the local provider needs {programs}, which {verb} not installed: `apt-get install {packages}` (or scripts/install-deps.sh)")]
    Missing {
        programs: String,
        verb: &'static str,
        packages: String,
    },
    #[error("the guest agent binary {} does not exist: build it with `cargo build -p deskenv-agent`", path.display())]
    AgentMissing { path: PathBuf },
    #[error("local provider: {0}")]
    Setup(String),
    #[error("local machine {machine}: {what} not up within {after:?} (last: {last}); last lines of {log}:\n{tail}")]
    Timeout {
        machine: String,
        what: String,
        after: Duration,
        last: String,
        log: String,
        tail: String,
    },
    #[error("local machine {machine}: no free X display among :{first}..:{last} (each has a live server, or a lock file or socket younger than {STALE_AFTER:?})")]
    NoDisplay {
        machine: String,
        first: u32,
        last: u32,
    },
    #[error("local machine {machine}: {context}")]
    Io {
        machine: String,
        context: String,
        #[source]
        source: std::io::Error,
    },
}

impl From<LocalError> for ProviderError {
    fn from(e: LocalError) -> ProviderError {
        ProviderError::Start(Box::new(e))
    }
}

/// Settings of the local provider.
#[derive(Debug, Clone)]
pub struct LocalConfig {
    /// The guest agent binary.
    pub agent_bin: PathBuf,
    /// First X display number to try (e.g. 60); the next free one is used
    /// (`/tmp/.X{n}-lock` and `/tmp/.X11-unix/X{n}` checked).
    pub first_display: u32,
    /// Give each machine its own empty /home/user (tmpfs in a private
    /// mount namespace). Needs root; [`LocalConfig::default_for`] sets it
    /// when running as root.
    pub isolate_home: bool,
}

impl LocalConfig {
    /// Display 60 on, and an isolated /home/user when running as root.
    pub fn default_for(agent_bin: PathBuf) -> LocalConfig {
        LocalConfig {
            agent_bin,
            first_display: 60,
            isolate_home: is_root(),
        }
    }
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Where a machine's /home/user comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum HomeMode {
    /// A fresh tmpfs on /home/user in the machine's mount namespace.
    Tmpfs,
    /// The host's /home/user, shared by every machine and the host.
    Shared,
    /// No usable /home/user: HOME is a fresh folder in the machine's
    /// folder (absolute paths under /home/user do not work).
    PerMachineFolder,
}

/// Hands out fresh local desktops.
pub struct LocalProvider {
    config: LocalConfig,
    cache: PathBuf,
    /// Private mount and PID namespaces per machine (root).
    namespaces: bool,
    home: HomeMode,
    /// Resolved paths of the programs.
    tools: Tools,
    displays_used: Mutex<BTreeSet<u32>>,
    agent_sha256: OnceLock<String>,
    warnings: Vec<String>,
}

impl std::fmt::Debug for LocalProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalProvider")
            .field("config", &self.config)
            .field("namespaces", &self.namespaces)
            .field("home", &self.home)
            .finish()
    }
}

impl LocalProvider {
    /// Checks the agent binary and the programs a desktop needs; as root,
    /// checks that the namespaces can be made.
    pub fn new(config: LocalConfig, cache: &Path) -> Result<LocalProvider, ProviderError> {
        if !config.agent_bin.is_file() {
            return Err(LocalError::AgentMissing {
                path: config.agent_bin.clone(),
            }
            .into());
        }
        let root = is_root();
        let mut wanted: Vec<(&'static str, &'static str)> = TOOLS.to_vec();
        if root {
            wanted.extend_from_slice(NS_TOOLS);
        }
        let mut tools = std::collections::BTreeMap::new();
        let mut missing = Vec::new();
        for (program, package) in wanted {
            match which(program) {
                Some(p) => {
                    tools.insert(program, p);
                }
                None => missing.push((program, package)),
            }
        }
        if !missing.is_empty() {
            return Err(missing_error(&missing).into());
        }
        let mut warnings = Vec::new();
        for (program, package) in OPTIONAL_TOOLS {
            match which(program) {
                Some(p) => {
                    tools.insert(program, p);
                }
                None => warnings.push(format!(
                    "{program} is not installed (package {package}): the desktop differs from the guest image's ({})",
                    if *program == "xsetroot" { "black background" } else { "no panel at the top: windows sit 28 px higher" }
                )),
            }
        }
        if config.isolate_home && !root {
            return Err(LocalError::Setup(
                "isolate_home needs root (a tmpfs on /home/user in a private mount namespace); run as root or without isolation".into(),
            )
            .into());
        }
        let namespaces = if root {
            match probe_namespaces(&tools["unshare"]) {
                Ok(()) => true,
                Err(why) if config.isolate_home => {
                    return Err(LocalError::Setup(format!(
                        "cannot make a private mount and PID namespace ({why}); isolate_home needs them"
                    ))
                    .into())
                }
                Err(why) => {
                    warnings.push(format!("no private namespaces ({why}): applications the agent launches may outlive a killed controller until the next start sweeps them"));
                    false
                }
            }
        } else {
            false
        };
        let home = if config.isolate_home {
            std::fs::create_dir_all(HOME)
                .map_err(|e| LocalError::Setup(format!("creating the mount point {HOME}: {e}")))?;
            for (what, p) in [
                ("the cache folder", cache),
                ("the agent binary", &config.agent_bin),
            ] {
                let p = p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
                if p.starts_with(HOME) {
                    return Err(LocalError::Setup(format!(
                        "{what} {} is under {HOME}, which each machine's own tmpfs hides; move it or turn isolate_home off",
                        p.display()
                    ))
                    .into());
                }
            }
            HomeMode::Tmpfs
        } else if writable_dir(Path::new(HOME)) {
            warnings.push(format!(
                "{HOME} is shared with the host and between machines (not isolated: run as root for a fresh one per machine); files from earlier episodes stay"
            ));
            HomeMode::Shared
        } else {
            warnings.push(format!(
                "{HOME} is missing or not writable: each machine's HOME is a folder of its own, and tasks that use absolute paths under {HOME} fail (run as root for an isolated {HOME})"
            ));
            HomeMode::PerMachineFolder
        };
        for w in &warnings {
            tracing::warn!("local provider: {w}");
        }
        let p = LocalProvider {
            config,
            cache: cache.to_path_buf(),
            namespaces,
            home,
            tools,
            displays_used: Mutex::new(BTreeSet::new()),
            agent_sha256: OnceLock::new(),
            warnings,
        };
        sweep(&p.local_dir());
        Ok(p)
    }

    pub fn config(&self) -> &LocalConfig {
        &self.config
    }

    /// Warnings about this host's setup (also in [`LocalProvider::describe`]).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// `<cache>/local`: the machines' folders.
    pub fn local_dir(&self) -> PathBuf {
        self.cache.join("local")
    }

    /// What run.json records about the environment.
    pub fn describe(&self) -> serde_json::Value {
        let sha = self.agent_sha256.get_or_init(|| {
            sha256_file(&self.config.agent_bin).unwrap_or_else(|e| format!("unreadable: {e}"))
        });
        let home = match self.home {
            HomeMode::Tmpfs => format!("{HOME}: a fresh tmpfs per machine"),
            HomeMode::Shared => {
                format!("{HOME}: the host's, shared with the host and between machines")
            }
            HomeMode::PerMachineFolder => {
                format!("a fresh folder per machine ({HOME} is not usable on this host)")
            }
        };
        serde_json::json!({
            "provider": "local",
            "kind": "local",
            "isolate_home": self.home == HomeMode::Tmpfs,
            "home": home,
            "namespaces": self.namespaces,
            "agent_bin": self.config.agent_bin,
            "agent_sha256": sha,
            "first_display": self.config.first_display,
            "displays_used": self.displays_used.lock().unwrap_or_else(|e| e.into_inner()).iter().collect::<Vec<_>>(),
            "screen": format!("{}x{}x24", SCREEN.0, SCREEN.1),
            "tools": self.tools,
            "warnings": self.warnings,
        })
    }

    /// The agent binary: next to the current executable (or one folder up,
    /// for test binaries in `target/<profile>/deps`), else the workspace's
    /// `target/release`, else its `target/debug`.
    pub fn find_agent_bin() -> Option<PathBuf> {
        const NAME: &str = "deskenv-agent";
        let mut candidates = Vec::new();
        if let Some(dir) = std::env::current_exe()
            .ok()
            .and_then(|e| e.parent().map(Path::to_path_buf))
        {
            candidates.push(dir.join(NAME));
            if dir.ends_with("deps") {
                if let Some(up) = dir.parent() {
                    candidates.push(up.join(NAME));
                }
            }
        }
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
        candidates.push(target.join("release").join(NAME));
        candidates.push(target.join("debug").join(NAME));
        candidates
            .into_iter()
            .find(|p| p.is_file())
            .map(|p| p.canonicalize().unwrap_or(p))
    }

    /// Starts a fresh desktop called `name`.
    pub async fn start_local(&self, name: &str) -> Result<LocalMachine, ProviderError> {
        check_name(name)?;
        let t0 = Instant::now();
        sweep(&self.local_dir());
        let n = unique();
        let pid = std::process::id();
        let dir = self.local_dir().join(format!("{name}-{pid}-{n}"));
        reaper::register_dir(&dir);
        let home = match self.home {
            HomeMode::Tmpfs | HomeMode::Shared => PathBuf::from(HOME),
            HomeMode::PerMachineFolder => dir.join("home"),
        };
        let mut desk = Desktop {
            name: name.to_string(),
            marker: format!("{pid}.{n}.{name}"),
            dir,
            home,
            nsenter: self.namespaces.then(|| self.tools["nsenter"].clone()),
            init: None,
            display: None,
            x_owned: false,
            dbus: None,
            procs: Mutex::new(Vec::new()),
            destroyed: AtomicBool::new(false),
        };
        let mut phases = Vec::new();
        match self.bring_up(&mut desk, &mut phases).await {
            Ok((agent, agent_pid)) => {
                let mut notes = Vec::new();
                if let Some(n) = desk.display {
                    self.displays_used
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(n);
                    notes.push(format!("display :{n}"));
                }
                notes.extend(self.warnings.iter().cloned());
                Ok(LocalMachine {
                    agent,
                    agent_pid,
                    started: StartReport {
                        path: StartPath::Local,
                        seconds: t0.elapsed().as_secs_f64(),
                        phases,
                        notes,
                        events: vec![],
                    },
                    desk,
                })
            }
            Err(e) => {
                let logs = desk.keep_logs(&self.cache);
                drop(desk);
                Err(e.with_logs(logs))
            }
        }
    }

    async fn bring_up(
        &self,
        d: &mut Desktop,
        phases: &mut Vec<(String, f64)>,
    ) -> Result<(AgentClient, Option<u32>), ProviderError> {
        let name = d.name.clone();
        let io = move |context: String| {
            let machine = name.clone();
            move |source| LocalError::Io {
                machine,
                context,
                source,
            }
        };
        std::fs::create_dir_all(d.dir.join("run"))
            .map_err(io(format!("creating {}", d.dir.display())))?;
        {
            use std::os::unix::fs::PermissionsExt;
            let _ =
                std::fs::set_permissions(d.dir.join("run"), std::fs::Permissions::from_mode(0o700));
        }
        // Xlib clients (python-xlib, hence pyautogui) insist on an
        // authority file existing; Xvfb runs without access control.
        std::fs::write(d.dir.join("Xauthority"), b"").map_err(io("writing Xauthority".into()))?;
        write_guest_xdg(&d.dir).map_err(io("writing the guest's XDG configuration".into()))?;
        if self.home == HomeMode::PerMachineFolder {
            seed_home(&d.home).map_err(io(format!("filling {}", d.home.display())))?;
        }
        d.write_record()
            .map_err(io("writing the machine record".into()))?;
        // Each phase's seconds count from the end of the one before.
        let mut mark = Instant::now();

        // The namespaces and their init.
        if self.namespaces {
            self.start_init(d).await?;
            // On SIGINT/SIGTERM the reaper SIGKILLs the init: the kernel
            // ends the whole namespace with it.
            reaper::register_pid(&d.dir, d.init.expect("the init is up"));
            d.write_record()
                .map_err(io("writing the machine record".into()))?;
            if self.home == HomeMode::Tmpfs {
                let init = d.init.expect("the init is up");
                let home = PathBuf::from(format!("/proc/{init}/root{HOME}"));
                seed_home(&home).map_err(io(format!("filling the machine's {HOME}")))?;
            }
            lap(phases, "namespace", &mut mark);
        }

        // The desktop; the agent starts with its window manager.
        let agent_bin = self.config.agent_bin.clone();
        start_desktop(
            &self.tools,
            d,
            self.config.first_display,
            |d| {
                let display = format!(":{}", d.display.expect("X is up"));
                d.spawn(
                    "deskenv-agent",
                    vec![
                        agent_bin.clone().into(),
                        "--listen".into(),
                        "127.0.0.1:0".into(),
                        "--display".into(),
                        display.clone().into(),
                        // The host's other work runs under the same uid: only this
                        // desktop's processes count for idleness.
                        "--idle-scope".into(),
                        "display".into(),
                    ],
                    None,
                    "agent.log",
                )?;
                Ok(())
            },
            phases,
            &mut mark,
        )
        .await?;

        let agent_log = d.dir.join("agent.log");
        let listen = d
            .wait_until(
                "the guest agent's listening address",
                &["deskenv-agent"],
                "agent.log",
                AGENT_TIMEOUT,
                || {
                    let text = std::fs::read_to_string(&agent_log).unwrap_or_default();
                    let addr = text
                        .lines()
                        .find_map(|l| l.trim().strip_prefix("listening on "))
                        .map(str::to_string);
                    async move { addr.ok_or_else(|| "no `listening on` line yet".to_string()) }
                },
            )
            .await?;
        let agent = AgentClient::new(&format!("http://{listen}"));
        let client = agent.clone();
        d.wait_until(
            "a healthy guest agent (1920x1080, AT-SPI up)",
            &["deskenv-agent", "Xvfb"],
            "agent.log",
            AGENT_TIMEOUT,
            || {
                let client = client.clone();
                async move {
                    match client.health(Duration::from_secs(3)).await {
                        Ok(h) if h.atspi && (h.screen.width, h.screen.height) == SCREEN => Ok(()),
                        Ok(h) => Err(format!(
                            "screen {}x{}, atspi {}{}",
                            h.screen.width,
                            h.screen.height,
                            h.atspi,
                            h.atspi_error.map(|e| format!(" ({e})")).unwrap_or_default()
                        )),
                        Err(e) => Err(e.to_string()),
                    }
                }
            },
        )
        .await?;
        lap(phases, "agent healthy", &mut mark);
        Ok((agent, d.program_pid("deskenv-agent")))
    }

    /// `unshare` with a fresh mount and PID namespace, whose init mounts
    /// the tmpfs (with `isolate_home`), reports `ready` and reaps orphans.
    /// The init's host pid goes into `d.init`.
    async fn start_init(&self, d: &mut Desktop) -> Result<(), ProviderError> {
        const SCRIPT: &str = r#"set -e
if [ "$1" = 1 ]; then
  mount -t tmpfs -o mode=0755 deskenv-home /home/user
  mkdir -p /home/user/Desktop
fi
cd "$3"
echo ready
exec perl -e "$2"
"#;
        // pid 1 of the namespace: reaps every orphan, ignores signals from
        // inside; SIGKILL from the host ends the namespace.
        // (Setting $0 would overwrite the environment in /proc, marker and all.)
        const INIT: &str = r#"while (1) { sleep 1 if wait() == -1 }"#;
        let isolate = if self.home == HomeMode::Tmpfs {
            "1"
        } else {
            "0"
        };
        let argv: Vec<OsString> = vec![
            self.tools["unshare"].clone().into(),
            "--mount".into(),
            "--pid".into(),
            "--fork".into(),
            "--kill-child".into(),
            "--mount-proc".into(),
            "--propagation".into(),
            "private".into(),
            "--".into(),
            "/bin/sh".into(),
            "-c".into(),
            SCRIPT.into(),
            "deskenv-init".into(),
            isolate.into(),
            INIT.into(),
            d.home.clone().into(),
        ];
        let unshare_pid = d.spawn_plain(INIT_PROC, argv, "init.log")?;
        let log = d.dir.join("init.log");
        let deadline = Instant::now() + NAMESPACE_TIMEOUT;
        loop {
            let ready = std::fs::read_to_string(&log)
                .unwrap_or_default()
                .contains("ready");
            if ready {
                if let Some(init) = children(unshare_pid).first() {
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

/// The programs the machines run, by name (resolved paths).
type Tools = std::collections::BTreeMap<&'static str, PathBuf>;

/// Starts the desktop of `d`: Xvfb on the first free display from
/// `first_display`, the D-Bus session bus, the AT-SPI bus launcher,
/// openbox and, when installed, the guest image's background and panel.
/// `clients` runs once the display and the session bus are up, so what it
/// starts comes up alongside the window manager. Returns once the window
/// manager, the AT-SPI bus and the panel answer; each step is a phase.
async fn start_desktop(
    tools: &Tools,
    d: &mut Desktop,
    first_display: u32,
    clients: impl FnOnce(&Desktop) -> Result<(), ProviderError>,
    phases: &mut Vec<(String, f64)>,
    mark: &mut Instant,
) -> Result<(), ProviderError> {
    // X, then the session bus (the services it activates get DISPLAY).
    start_x(tools, d, first_display).await?;
    lap(phases, "xvfb", mark);
    if let Some(xsetroot) = tools.get("xsetroot") {
        // The guest image's background.
        let _ = probe_output(x_client(xsetroot, d, &["-solid", "#2f4f6f"])).await;
    }
    d.spawn(
        "dbus-daemon",
        vec![
            tools["dbus-daemon"].clone().into(),
            "--session".into(),
            "--nofork".into(),
            "--nopidfile".into(),
            format!("--address={}", bus_address(&d.dir.join("run"))).into(),
            "--print-address=1".into(),
        ],
        Some("dbus.addr"),
        "dbus.log",
    )?;
    let addr_file = d.dir.join("dbus.addr");
    let addr = d
        .wait_until(
            "the D-Bus session bus",
            &["dbus-daemon"],
            "dbus.log",
            DBUS_TIMEOUT,
            || {
                let text = std::fs::read_to_string(&addr_file).unwrap_or_default();
                let line = text.lines().next().unwrap_or("").trim().to_string();
                async move {
                    if line.is_empty() {
                        Err("no address printed yet".to_string())
                    } else {
                        Ok(line)
                    }
                }
            },
        )
        .await?;
    lap(phases, "dbus", mark);
    d.dbus = Some(addr.clone());

    // The AT-SPI bus, the window manager and the agent at once.
    d.spawn(
        "at-spi-bus-launcher",
        vec![
            tools["/usr/libexec/at-spi-bus-launcher"].clone().into(),
            "--launch-immediately".into(),
        ],
        None,
        "atspi.log",
    )?;
    d.spawn(
        "openbox",
        vec![tools["openbox"].clone().into(), "--sm-disable".into()],
        None,
        "openbox.log",
    )?;
    clients(d)?;
    let display = format!(":{}", d.display.expect("X is up"));
    let xprop = tools["xprop"].clone();
    let xauth = d.dir.join("Xauthority");
    d.wait_until(
        "openbox (_NET_SUPPORTING_WM_CHECK on the root window)",
        &["openbox", "Xvfb"],
        "openbox.log",
        WM_TIMEOUT,
        || {
            let mut c = tokio::process::Command::new(&xprop);
            c.args(["-display", &display, "-root", "_NET_SUPPORTING_WM_CHECK"])
                .env("XAUTHORITY", &xauth);
            async move {
                let out = probe_output(c).await?;
                if out.contains("window id") {
                    Ok(())
                } else {
                    Err(out.trim().to_string())
                }
            }
        },
    )
    .await?;
    lap(phases, "wm", mark);

    let dbus_send = tools["dbus-send"].clone();
    d.wait_until(
        "the AT-SPI bus (org.a11y.Bus)",
        &["at-spi-bus-launcher", "dbus-daemon"],
        "atspi.log",
        ATSPI_TIMEOUT,
        || {
            let mut c = tokio::process::Command::new(&dbus_send);
            c.args([
                "--session",
                "--print-reply",
                "--reply-timeout=2000",
                "--dest=org.a11y.Bus",
                "/org/a11y/bus",
                "org.a11y.Bus.GetAddress",
            ])
            .env("DBUS_SESSION_BUS_ADDRESS", &addr);
            async move {
                let out = probe_output(c).await?;
                if out.contains("string \"") {
                    Ok(())
                } else {
                    Err(out.trim().to_string())
                }
            }
        },
    )
    .await?;
    lap(phases, "atspi", mark);

    // The panel, as in the guest image: after the window manager (it
    // is a dock) and the AT-SPI bus (it joins the tree).
    if let (Some(panel), Some(xdotool)) = (tools.get("xfce4-panel"), tools.get("xdotool")) {
        d.spawn(
            "xfce4-panel",
            vec![panel.clone().into(), "--disable-wm-check".into()],
            None,
            "panel.log",
        )?;
        let d2: &Desktop = d;
        d2.wait_until(
            "xfce4-panel (a visible window of class xfce4-panel)",
            &["xfce4-panel"],
            "panel.log",
            PANEL_TIMEOUT,
            || {
                let c = x_client(
                    xdotool,
                    d2,
                    &["search", "--onlyvisible", "--class", "xfce4-panel"],
                );
                async move {
                    let out = probe_output(c).await?;
                    if out
                        .lines()
                        .any(|l| !l.is_empty() && l.trim().chars().all(|c| c.is_ascii_digit()))
                    {
                        Ok(())
                    } else {
                        Err(format!("no window yet {}", out.trim()))
                    }
                }
            },
        )
        .await?;
        lap(phases, "panel", mark);
    }
    Ok(())
}

/// Xvfb on the first free display; a display another process took in
/// the meantime ("already active") is skipped.
async fn start_x(tools: &Tools, d: &mut Desktop, first: u32) -> Result<(), ProviderError> {
    let mut skip = BTreeSet::new();
    for _attempt in 0..10 {
        let n = reserve_display(first, &skip, Path::new("/tmp")).ok_or_else(|| {
            LocalError::NoDisplay {
                machine: d.name.clone(),
                first,
                last: first + DISPLAYS - 1,
            }
        })?;
        d.display = Some(n);
        let _ = d.write_record();
        let log = format!("xvfb-{n}.log");
        d.spawn(
            "Xvfb",
            vec![
                tools["Xvfb"].clone().into(),
                format!(":{n}").into(),
                "-screen".into(),
                "0".into(),
                format!("{}x{}x24", SCREEN.0, SCREEN.1).into(),
                "-nolisten".into(),
                "tcp".into(),
                // Without it the server resets when its last client
                // leaves, and a client connecting then is refused.
                "-noreset".into(),
                "-ac".into(),
                "+extension".into(),
                "XTEST".into(),
                "+extension".into(),
                "MIT-SHM".into(),
                // No screen saver blanking long episodes.
                "-s".into(),
                "0".into(),
            ],
            None,
            &log,
        )?;
        let socket = x_socket(Path::new("/tmp"), n);
        let deadline = Instant::now() + X_TIMEOUT;
        loop {
            if UnixStream::connect(&socket).is_ok() {
                d.x_owned = true;
                return Ok(());
            }
            if let Some(e) = d.exit_error("Xvfb") {
                let text = std::fs::read_to_string(d.dir.join(&log)).unwrap_or_default();
                if text.contains("already active") || text.contains("server already running") {
                    tracing::info!("display :{n} was taken meanwhile; trying the next");
                    d.forget("Xvfb");
                    d.display = None;
                    release_display(n);
                    skip.insert(n);
                    break;
                }
                return Err(e);
            }
            if Instant::now() > deadline {
                return Err(d.timeout_error(
                    &format!("Xvfb on :{n}"),
                    X_TIMEOUT,
                    format!("{} does not accept connections", socket.display()),
                    &log,
                ));
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    Err(LocalError::NoDisplay {
        machine: d.name.clone(),
        first,
        last: first + DISPLAYS - 1,
    }
    .into())
}

impl Provider for LocalProvider {
    fn kind(&self) -> &'static str {
        "local"
    }

    fn start<'a>(
        &'a self,
        name: &'a str,
    ) -> BoxFuture<'a, Result<Box<dyn Machine>, ProviderError>> {
        async move {
            self.start_local(name)
                .await
                .map(|m| Box::new(m) as Box<dyn Machine>)
        }
        .boxed()
    }
}

/// One process of a machine.
struct Proc {
    what: &'static str,
    log: String,
    child: Child,
    /// Set once the child was reaped: its pid may belong to another
    /// process now.
    reaped: bool,
}

/// The processes, files and display of one machine; dropping it ends
/// them all.
struct Desktop {
    name: String,
    dir: PathBuf,
    marker: String,
    home: PathBuf,
    /// `nsenter`, when the machine has its own namespaces.
    nsenter: Option<PathBuf>,
    /// Host pid of the namespace's init.
    init: Option<u32>,
    /// The display our Xvfb serves (reserved in this process).
    display: Option<u32>,
    /// Whether our Xvfb came up on `display` (its lock file and socket
    /// are then ours to remove).
    x_owned: bool,
    dbus: Option<String>,
    procs: Mutex<Vec<Proc>>,
    destroyed: AtomicBool,
}

/// `<folder>.json` beside the machine's folder: what [`sweep`] needs to
/// end a machine whose controller died. It lives outside the folder, which
/// [`reaper::kill_all`] removes on SIGINT/SIGTERM.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Record {
    controller_pid: u32,
    marker: String,
    display: Option<u32>,
    init_pid: Option<u32>,
}

impl Desktop {
    fn write_record(&self) -> std::io::Result<()> {
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
    fn env(&self) -> Vec<(&'static str, OsString)> {
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

    fn command(&self, argv: &[OsString]) -> Command {
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
    fn spawn(
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
    fn spawn_plain(
        &self,
        what: &'static str,
        argv: Vec<OsString>,
        log: &str,
    ) -> Result<u32, ProviderError> {
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..]);
        for k in SCRUB {
            cmd.env_remove(k);
        }
        cmd.envs(self.env());
        self.launch(what, cmd, None, log)
    }

    fn launch(
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
    fn forget(&self, what: &str) {
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
    fn exit_error(&self, what: &str) -> Option<ProviderError> {
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

    fn timeout_error(&self, what: &str, after: Duration, last: String, log: &str) -> ProviderError {
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
    async fn wait_until<T, F, Fut>(
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
    fn program_pid(&self, what: &str) -> Option<u32> {
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
    fn keep_logs(&self, cache: &Path) -> String {
        keep_logs(cache, &format!("local-{}", self.name), &self.dir, |p| {
            p.extension()
                .is_some_and(|x| x == "log" || x == "addr" || x == "json")
        })
    }

    /// Ends every process of the machine and removes its files (once).
    fn destroy(&self) {
        if self.destroyed.swap(true, Ordering::SeqCst) {
            return;
        }
        let mut procs = self.procs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(init) = self.init {
            // The kernel ends every process of the namespace with its init.
            // SAFETY: kill has no memory-safety preconditions; the init is
            // a child of our unshare, which is not reaped yet, so the init
            // is at worst a zombie and the pid still its.
            unsafe {
                libc::kill(init as i32, libc::SIGKILL);
            }
            // unshare exits once it has reaped the init, and the init's
            // exit completes only when every other process of the namespace
            // is gone: waiting for unshare waits for all of them. The
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
fn record_path(dir: &Path) -> PathBuf {
    let mut p = dir.as_os_str().to_owned();
    p.push(".json");
    PathBuf::from(p)
}

impl Drop for Desktop {
    fn drop(&mut self) {
        self.destroy();
    }
}

/// A local desktop.
pub struct LocalMachine {
    desk: Desktop,
    agent: AgentClient,
    agent_pid: Option<u32>,
    started: StartReport,
}

impl std::fmt::Debug for LocalMachine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalMachine")
            .field("name", &self.desk.name)
            .field("display", &self.desk.display)
            .field("agent", &self.agent.base())
            .finish()
    }
}

impl LocalMachine {
    /// The machine's folder (logs, X authority file, runtime dir).
    pub fn dir(&self) -> &Path {
        &self.desk.dir
    }

    /// The X display number.
    pub fn display(&self) -> u32 {
        self.desk.display.expect("a started machine has a display")
    }

    /// The value of [`MARKER_VAR`] in every process of this machine.
    pub fn marker(&self) -> &str {
        &self.desk.marker
    }

    /// Host pid of the namespace's init, when the machine has namespaces.
    pub fn namespace_init(&self) -> Option<u32> {
        self.desk.init
    }

    /// The machine's own programs and their host pids (Xvfb, dbus-daemon,
    /// openbox, …, the agent).
    pub fn programs(&self) -> Vec<(&'static str, u32)> {
        let names: Vec<&'static str> = self
            .desk
            .procs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|p| p.what)
            .collect();
        names
            .into_iter()
            .filter_map(|w| self.desk.program_pid(w).map(|p| (w, p)))
            .collect()
    }

    /// Ends the machine now (what `kill_now` and a drop do).
    pub fn destroy(&self) {
        self.desk.destroy();
    }
}

impl Machine for LocalMachine {
    fn name(&self) -> &str {
        &self.desk.name
    }

    fn agent(&self) -> &AgentClient {
        &self.agent
    }

    fn started(&self) -> &StartReport {
        &self.started
    }

    fn pid(&self) -> Option<u32> {
        self.agent_pid.or_else(|| self.desk.program_pid("Xvfb"))
    }

    fn screenshot(&self) -> BoxFuture<'_, Result<Vec<u8>, ProviderError>> {
        async move {
            self.check()?;
            self.agent
                .screenshot()
                .await
                .map_err(agent_err(&format!("local machine {}", self.desk.name)))
        }
        .boxed()
    }

    fn check(&self) -> Result<(), ProviderError> {
        let mut watch = vec!["Xvfb", "deskenv-agent"];
        if self.desk.init.is_some() {
            watch.push(INIT_PROC);
        }
        for w in watch {
            if let Some(e) = self.desk.exit_error(w) {
                return Err(e);
            }
        }
        Ok(())
    }

    fn shutdown(self: Box<Self>) -> BoxFuture<'static, ()> {
        async move {
            let _ = tokio::task::spawn_blocking(move || self.desk.destroy()).await;
        }
        .boxed()
    }

    fn kill_now(&self) {
        self.desk.destroy();
    }
}

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
fn environ_has(environ: &[u8], entry: &[u8]) -> bool {
    environ.split(|b| *b == 0).any(|e| e == entry)
}

/// SIGKILLs every process marked `marker` until none is left (or `within`
/// passed: false).
fn kill_marked(marker: &str, within: Duration) -> bool {
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

/// The session bus's address: a socket in the machine's runtime dir, gone
/// with the folder (a killed dbus-daemon leaves its socket behind), unless
/// that path is too long for a socket; then a random one in /tmp, removed
/// when the machine ends.
fn bus_address(run: &Path) -> String {
    let path = run.join("bus");
    // sun_path holds 108 bytes, NUL included.
    if path.as_os_str().len() < 100 && !path.to_string_lossy().contains([',', ';', '=']) {
        format!("unix:path={}", path.display())
    } else {
        "unix:tmpdir=/tmp".into()
    }
}

/// The socket file of a `unix:path=` bus address.
fn bus_socket(address: &str) -> Option<PathBuf> {
    address
        .strip_prefix("unix:")?
        .split(',')
        .find_map(|kv| kv.strip_prefix("path="))
        .map(PathBuf::from)
}

/// Records the seconds since `mark` as phase `name` and restarts `mark`.
fn lap(phases: &mut Vec<(String, f64)>, name: &str, mark: &mut Instant) {
    phases.push((name.to_string(), mark.elapsed().as_secs_f64()));
    *mark = Instant::now();
}

/// Waits up to `within` for a child to exit; true if it has (reaped).
fn wait_exit(child: &mut Child, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    loop {
        match child.try_wait() {
            Ok(Some(_)) | Err(_) => return true,
            Ok(None) if Instant::now() >= deadline => return false,
            Ok(None) => std::thread::sleep(Duration::from_millis(1)),
        }
    }
}

/// The children of a process (its main thread's).
fn children(pid: u32) -> Vec<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|s| s.parse().ok())
        .collect()
}

/// Whether a display is free, served, or left behind by a dead server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DisplayState {
    Free,
    /// A server answers, or one may be starting.
    Busy,
    /// A lock file or socket whose server is gone.
    Stale,
}

fn x_lock(tmp: &Path, n: u32) -> PathBuf {
    tmp.join(format!(".X{n}-lock"))
}

fn x_socket(tmp: &Path, n: u32) -> PathBuf {
    tmp.join(".X11-unix").join(format!("X{n}"))
}

/// Whether an X server answers on display `n`: the socket under `tmp`, or
/// the abstract socket X servers on Linux also listen on.
fn x_answers(tmp: &Path, n: u32) -> bool {
    if UnixStream::connect(x_socket(tmp, n)).is_ok() {
        return true;
    }
    use std::os::linux::net::SocketAddrExt;
    std::os::unix::net::SocketAddr::from_abstract_name(format!("/tmp/.X11-unix/X{n}"))
        .and_then(|a| UnixStream::connect_addr(&a))
        .is_ok()
}

fn display_state(tmp: &Path, n: u32, stale_after: Duration) -> DisplayState {
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
fn pick_display(
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
fn reserved_displays() -> &'static Mutex<BTreeSet<u32>> {
    static R: OnceLock<Mutex<BTreeSet<u32>>> = OnceLock::new();
    R.get_or_init(|| Mutex::new(BTreeSet::new()))
}

/// Picks and reserves a display, removing a dead server's leftovers.
fn reserve_display(first: u32, skip: &BTreeSet<u32>, tmp: &Path) -> Option<u32> {
    let mut reserved = reserved_displays()
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let (n, state) = pick_display(first, DISPLAYS, &reserved, skip, |n| {
        display_state(tmp, n, STALE_AFTER)
    })?;
    if state == DisplayState::Stale {
        tracing::info!("display :{n}: removing the lock file and socket of a server that is gone");
        remove_display_files(tmp, n);
    }
    reserved.insert(n);
    Some(n)
}

fn release_display(n: u32) {
    reserved_displays()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&n);
}

fn remove_display_files(tmp: &Path, n: u32) {
    let _ = std::fs::remove_file(x_lock(tmp, n));
    let _ = std::fs::remove_file(x_socket(tmp, n));
}

/// The guest image's system-wide configuration (its `/etc/xdg`), which
/// each machine gets as the first of `XDG_CONFIG_DIRS`.
const GUEST_XDG: &[(&str, &str)] = &[
    (
        "mimeapps.list",
        include_str!("../../../../vm-images/debian-desktop/overlay/etc/xdg/mimeapps.list"),
    ),
    (
        "xfce4/xfconf/xfce-perchannel-xml/xfce4-panel.xml",
        include_str!(
            "../../../../vm-images/debian-desktop/overlay/etc/xdg/xfce4/xfconf/xfce-perchannel-xml/xfce4-panel.xml"
        ),
    ),
];

fn xdg_config_dirs(dir: &Path) -> OsString {
    let mut v = dir.join("xdg").into_os_string();
    v.push(":/etc/xdg");
    v
}

fn write_guest_xdg(dir: &Path) -> std::io::Result<()> {
    for (path, text) in GUEST_XDG {
        let p = dir.join("xdg").join(path);
        std::fs::create_dir_all(p.parent().expect("a file in a folder"))?;
        std::fs::write(p, text)?;
    }
    Ok(())
}

/// An X client run from the host against the machine's display.
fn x_client(program: &Path, d: &Desktop, args: &[&str]) -> tokio::process::Command {
    let mut c = tokio::process::Command::new(program);
    c.args(args)
        .env("DISPLAY", format!(":{}", d.display.unwrap_or(0)))
        .env("XAUTHORITY", d.dir.join("Xauthority"));
    c
}

/// What a fresh home holds, as in the guest image: text files open in
/// mousepad, LibreOffice without its first-start dialogs.
fn seed_home(home: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(home.join("Desktop"))?;
    std::fs::create_dir_all(home.join(".config"))?;
    std::fs::write(
        home.join(".config/mimeapps.list"),
        "[Default Applications]\ntext/plain=org.xfce.mousepad.desktop\n",
    )?;
    let lo = home.join(".config/libreoffice/4/user");
    std::fs::create_dir_all(&lo)?;
    std::fs::write(
        lo.join("registrymodifications.xcu"),
        include_str!(
            "../../../../vm-images/debian-desktop/overlay/etc/deskenv/libreoffice-registrymodifications.xcu"
        ),
    )
}

/// Runs a probe command (2 s at most) and returns its stdout and stderr.
async fn probe_output(mut c: tokio::process::Command) -> Result<String, String> {
    c.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    match tokio::time::timeout(Duration::from_secs(2), c.output()).await {
        Ok(Ok(o)) => Ok(format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err("no answer within 2 s".into()),
    }
}

/// Whether `/usr/bin/unshare` can make a mount and PID namespace here.
fn probe_namespaces(unshare: &Path) -> Result<(), String> {
    let out = Command::new(unshare)
        .args(["--mount", "--pid", "--fork", "--mount-proc", "true"])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("running {}: {e}", unshare.display()))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

fn missing_error(missing: &[(&str, &str)]) -> LocalError {
    let programs: Vec<String> = missing
        .iter()
        .map(|(p, pkg)| format!("{p} (package {pkg})"))
        .collect();
    let mut packages: Vec<&str> = missing.iter().map(|(_, pkg)| *pkg).collect();
    packages.dedup();
    LocalError::Missing {
        programs: programs.join(", "),
        verb: if missing.len() == 1 { "is" } else { "are" },
        packages: packages.join(" "),
    }
}

/// `program` as a path if executable, else looked up on PATH (and the
/// sbin folders, which a non-root PATH may lack).
fn which(program: &str) -> Option<PathBuf> {
    fn executable(p: &Path) -> bool {
        use std::os::unix::fs::PermissionsExt;
        p.metadata()
            .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            .unwrap_or(false)
    }
    if program.contains('/') {
        let p = PathBuf::from(program);
        return executable(&p).then_some(p);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin"].map(PathBuf::from))
        .map(|d| d.join(program))
        .find(|p| executable(p))
}

fn writable_dir(p: &Path) -> bool {
    let Ok(c) = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()) else {
        return false;
    };
    // SAFETY: access reads a NUL-terminated path we own.
    p.is_dir() && unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) } == 0
}

fn sha256_file(p: &Path) -> std::io::Result<String> {
    use sha2::Digest;
    use std::io::Read;
    let mut f = std::fs::File::open(p)?;
    let mut h = sha2::Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex::encode(h.finalize()))
}

fn check_name(name: &str) -> Result<(), ProviderError> {
    crate::provider::check_name("machine", name)
}

use crate::provider::unique;

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
    fn missing_programs_are_named_with_their_packages() {
        let e = missing_error(&[
            ("Xvfb", "xvfb"),
            ("dbus-daemon", "dbus"),
            ("dbus-send", "dbus"),
        ])
        .to_string();
        assert!(
            e.contains("Xvfb (package xvfb), dbus-daemon (package dbus)"),
            "{e}"
        );
        assert!(e.contains("`apt-get install xvfb dbus`"), "{e}");
        assert!(e.contains("are not installed"), "{e}");
        let e = LocalProvider::new(
            LocalConfig::default_for(PathBuf::from("/nonexistent/deskenv-agent")),
            Path::new("/tmp"),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("cargo build -p deskenv-agent"), "{e}");
    }

    #[test]
    fn the_session_bus_lives_in_the_machine_folder_when_the_path_fits() {
        let short = Path::new("/tmp/.tmpAbc/local/pool0-1234-0/run");
        assert_eq!(
            bus_address(short),
            "unix:path=/tmp/.tmpAbc/local/pool0-1234-0/run/bus"
        );
        let long = PathBuf::from(format!("/tmp/{}/run", "x".repeat(100)));
        assert_eq!(bus_address(&long), "unix:tmpdir=/tmp");
        assert_eq!(
            bus_socket("unix:path=/tmp/dbus-AbC,guid=0123"),
            Some(PathBuf::from("/tmp/dbus-AbC"))
        );
        assert_eq!(bus_socket("unix:abstract=/tmp/dbus-AbC,guid=0123"), None);
    }

    #[test]
    fn names_are_checked() {
        assert!(check_name("pool0").is_ok());
        for bad in ["", "a/b", "..", ".x", "a b"] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_fresh_home_opens_text_in_mousepad() {
        let tmp = tempfile::tempdir().unwrap();
        seed_home(tmp.path()).unwrap();
        assert!(tmp.path().join("Desktop").is_dir());
        let m = std::fs::read_to_string(tmp.path().join(".config/mimeapps.list")).unwrap();
        assert!(m.contains("text/plain=org.xfce.mousepad.desktop"));
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
