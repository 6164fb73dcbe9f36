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
//!    `XDG_CONFIG_DIRS`; it is registered with the [`reaper`](crate::provider::reaper). A record
//!    beside it (`<folder>.json`: owner, marker, display) lets [`sweep`]
//!    end what a dead controller left;
//! 2. as root, the machine gets a private mount and PID namespace, held by
//!    a tiny init (`namespace`, in Rust, which reaps orphans) with its own
//!    `/proc` and, with `isolate_home`, a fresh tmpfs on `/home/user`
//!    (seeded like the guest's: `Desktop/`, MIME defaults, LibreOffice
//!    without first-start dialogs); every later process enters it with
//!    `nsenter`. Killing that init ends every process of the namespace at
//!    once (the kernel does it), the applications the agent launched in
//!    their own sessions included; the init dies with its creator, which dies
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
//! its environment (all but the namespace's init and its parent, forks of
//! the controller that are never exec'd: they end by pid and by their
//! parent-death signals). Ending a machine SIGKILLs the namespace's init and
//! waits for the namespace to be empty, then kills every process that
//! still carries the marker (the only mechanism without root) until none
//! is left, and removes the display's lock file and socket, the bus
//! socket, the folder and the record.
//!
//! Without root there are no namespaces: `/home/user` is the host's (a
//! warning says so, and [`LocalProvider::describe`]), and applications the
//! agent launched outlive a killed controller until the next [`sweep`].
//!
//! Layout: `start` (a start, step by step), `desktop` (Xvfb, D-Bus,
//! AT-SPI, openbox, panel; the sequence is `deskenv-desktop`'s), `namespace` (the namespaces and their init),
//! `display` (display numbers), `supervise` (a machine's processes
//! and their end), [`sweep`] (a dead controller's leftovers), `tools`
//! (program lookup), `home` (the guest's configuration), `machine`
//! (the [`Machine`] handed out).

mod desktop;
mod display;
mod error;
mod home;
mod machine;
mod namespace;
mod start;
mod supervise;
mod sweep;
mod tools;

pub use error::LocalError;
pub use machine::LocalMachine;
pub use sweep::{marked_processes, sweep};

use self::desktop::Tools;
use crate::provider::{Machine, Provider, ProviderError};
use futures::future::BoxFuture;
use futures::FutureExt;
use namespace::probe_namespaces;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use tools::{missing_error, sha256_file, which, writable_dir, NS_TOOLS, OPTIONAL_TOOLS, TOOLS};

/// The screen every machine gets (the guest image's).
pub const SCREEN: (u32, u32) = (1920, 1080);
/// The environment variable that marks a machine's processes.
pub const MARKER_VAR: &str = "DESKENV_LOCAL_MACHINE";
/// The desktop user's home, as in the guest image.
pub const HOME: &str = "/home/user";
/// The guest session's PATH.
const GUEST_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

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
    /// A fresh tmpfs on /tmp per machine (namespace.rs `private_tmp`):
    /// with a tmpfs home, when neither the cache nor the agent binary is
    /// under /tmp, which it would hide.
    private_tmp: bool,
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
            match probe_namespaces() {
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
        let under_tmp = |p: &Path| {
            p.canonicalize()
                .unwrap_or_else(|_| p.to_path_buf())
                .starts_with("/tmp")
        };
        let private_tmp =
            home == HomeMode::Tmpfs && !under_tmp(cache) && !under_tmp(&config.agent_bin);
        let p = LocalProvider {
            config,
            cache: cache.to_path_buf(),
            namespaces,
            home,
            private_tmp,
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
            "private_tmp": self.private_tmp,
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
}

impl Provider for LocalProvider {
    fn kind(&self) -> &'static str {
        "local"
    }

    fn isolates_tmp(&self) -> bool {
        self.private_tmp
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

fn check_name(name: &str) -> Result<(), ProviderError> {
    crate::provider::check_name("machine", name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked() {
        assert!(check_name("pool0").is_ok());
        for bad in ["", "a/b", "..", ".x", "a b"] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }
}
