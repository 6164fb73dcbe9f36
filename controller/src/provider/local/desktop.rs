//! The desktop of a machine: Xvfb, the D-Bus session bus, the AT-SPI
//! bus, openbox and (when installed) the guest image's background and
//! panel, in one function, [`start_desktop`]. Readiness is probed: the X
//! socket, `_NET_SUPPORTING_WM_CHECK`, `org.a11y.Bus`, the panel's window.

use super::display::{release_display, reserve_display, x_socket, DISPLAYS};
use super::supervise::{lap, Desktop};
use super::tools::probe_output;
use super::{LocalError, SCREEN};
use crate::provider::ProviderError;
use std::collections::BTreeSet;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const X_TIMEOUT: Duration = Duration::from_secs(20);
const DBUS_TIMEOUT: Duration = Duration::from_secs(10);
const WM_TIMEOUT: Duration = Duration::from_secs(20);
const ATSPI_TIMEOUT: Duration = Duration::from_secs(20);
const PANEL_TIMEOUT: Duration = Duration::from_secs(20);

/// The programs the machines run, by name (resolved paths).
pub(super) type Tools = std::collections::BTreeMap<&'static str, PathBuf>;

/// Starts the desktop of `d`: Xvfb on the first free display from
/// `first_display`, the D-Bus session bus, the AT-SPI bus launcher,
/// openbox and, when installed, the guest image's background and panel.
/// `clients` runs once the display and the session bus are up, so what it
/// starts comes up alongside the window manager. Returns once the window
/// manager, the AT-SPI bus and the panel answer; each step is a phase.
pub(super) async fn start_desktop(
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
pub(super) async fn start_x(
    tools: &Tools,
    d: &mut Desktop,
    first: u32,
) -> Result<(), ProviderError> {
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

/// The session bus's address: a socket in the machine's runtime dir, gone
/// with the folder (a killed dbus-daemon leaves its socket behind), unless
/// that path is too long for a socket; then a random one in /tmp, removed
/// when the machine ends.
pub(super) fn bus_address(run: &Path) -> String {
    let path = run.join("bus");
    // sun_path holds 108 bytes, NUL included.
    if path.as_os_str().len() < 100 && !path.to_string_lossy().contains([',', ';', '=']) {
        format!("unix:path={}", path.display())
    } else {
        "unix:tmpdir=/tmp".into()
    }
}

/// The socket file of a `unix:path=` bus address.
pub(super) fn bus_socket(address: &str) -> Option<PathBuf> {
    address
        .strip_prefix("unix:")?
        .split(',')
        .find_map(|kv| kv.strip_prefix("path="))
        .map(PathBuf::from)
}

/// An X client run from the host against the machine's display.
pub(super) fn x_client(program: &Path, d: &Desktop, args: &[&str]) -> tokio::process::Command {
    let mut c = tokio::process::Command::new(program);
    c.args(args)
        .env("DISPLAY", format!(":{}", d.display.unwrap_or(0)))
        .env("XAUTHORITY", d.dir.join("Xauthority"));
    c
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
