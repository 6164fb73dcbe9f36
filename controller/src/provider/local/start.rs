//! A start: the machine's folder and record, its namespace, the desktop,
//! the agent, and `/v1/health` until the screen and AT-SPI are up.

use super::desktop::start_desktop;
use super::home::{seed_home, write_guest_xdg};
use super::supervise::{lap, Desktop};
use super::sweep::sweep;
use super::{check_name, HomeMode, LocalError, LocalMachine, LocalProvider, HOME, SCREEN};
use crate::guest_client::GuestClient;
use crate::provider::{reaper, unique, ProviderError, StartPath, StartReport};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Mutex;
use std::time::{Duration, Instant};

const AGENT_TIMEOUT: Duration = Duration::from_secs(30);

impl LocalProvider {
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

    pub(super) async fn bring_up(
        &self,
        d: &mut Desktop,
        phases: &mut Vec<(String, f64)>,
    ) -> Result<(GuestClient, Option<u32>), ProviderError> {
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
        let agent = GuestClient::new(&format!("http://{listen}"));
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
}
