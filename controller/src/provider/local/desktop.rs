//! The desktop of a machine: the `desktop` crate's launch sequence (Xvfb,
//! the D-Bus session bus, the AT-SPI bus, openbox and, when installed, the
//! guest image's background and panel), its parts started by the
//! machine's supervisor ([`Desktop::spawn`]: in its namespaces, under the
//! reaper), in one function, [`start_desktop`].

use super::display::{release_display, reserve_display, DISPLAYS};
use super::supervise::{lap, Desktop, INIT_PROC};
use super::tools::probe_output;
use super::LocalError;
use crate::provider::ProviderError;
use ::desktop::launch::{self, Options, Part, Spawner, XReady, GUEST_BACKGROUND};
use std::collections::BTreeSet;
use std::ffi::OsString;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The programs the machines run, by name (resolved paths).
pub(super) type Tools = std::collections::BTreeMap<&'static str, PathBuf>;

/// The launch sequence as the local provider runs it: the X socket is
/// probed every 5 ms, the rest every 10 ms; the session bus gets 10 s and
/// lives in the machine's folder; no screen saver.
fn options(tools: &Tools, d: &Desktop) -> Options {
    Options {
        numbered_xvfb_log: true,
        // No screen saver blanking long episodes.
        xvfb_extra: vec!["-s".into(), "0".into()],
        x_ready: XReady::Socket,
        x_poll: Duration::from_millis(5),
        poll: Duration::from_millis(10),
        dbus_timeout: Duration::from_secs(10),
        bus_address: Some(bus_address(&d.dir.join("run"))),
        background: tools
            .contains_key("xsetroot")
            .then(|| GUEST_BACKGROUND.into()),
        panel: tools.contains_key("xfce4-panel") && tools.contains_key("xdotool"),
        ..Options::plain(d.dir.clone())
    }
}

/// The sequence's [`Spawner`]: the machine's supervisor, its probes
/// under tokio, each step a phase.
struct Supervised<'a, C> {
    tools: &'a Tools,
    d: &'a mut Desktop,
    clients: Option<C>,
    phases: &'a mut Vec<(String, f64)>,
    mark: &'a mut Instant,
}

impl<C> Spawner for Supervised<'_, C>
where
    C: FnOnce(&Desktop) -> Result<(), ProviderError>,
{
    type Error = ProviderError;

    fn program(&self, name: &str) -> OsString {
        self.tools[name].clone().into()
    }

    fn spawn(&mut self, part: Part) -> Result<u32, ProviderError> {
        self.d
            .spawn(part.name, part.argv, part.stdout.as_deref(), &part.log)
    }

    fn set_env(&mut self, key: &'static str, value: &str) {
        // DISPLAY is the reserved display's already.
        if key == "DBUS_SESSION_BUS_ADDRESS" {
            self.d.dbus = Some(value.to_string());
        }
    }

    fn failed(&mut self, watch: &[&'static str], _what: &str) -> Option<ProviderError> {
        watch.iter().find_map(|w| self.d.exit_error(w)).or_else(|| {
            self.d
                .init
                .is_some()
                .then(|| self.d.exit_error(INIT_PROC))
                .flatten()
        })
    }

    fn timeout(&mut self, what: &str, waited: Duration, last: String, log: &str) -> ProviderError {
        self.d.timeout_error(what, waited, last, log)
    }

    fn probe(
        &self,
        argv: Vec<OsString>,
        env: Vec<(&'static str, OsString)>,
    ) -> impl Future<Output = Result<String, String>> {
        let mut c = tokio::process::Command::new(&argv[0]);
        c.args(&argv[1..]).envs(env);
        probe_output(c)
    }

    fn sleep(&self, time: Duration) -> impl Future<Output = ()> {
        tokio::time::sleep(time)
    }

    fn phase(&mut self, name: &'static str) {
        lap(self.phases, name, self.mark);
    }

    fn session_up(&mut self) -> Result<(), ProviderError> {
        match self.clients.take() {
            Some(clients) => clients(self.d),
            None => Ok(()),
        }
    }
}

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
    let o = options(tools, d);
    let mut s = Supervised {
        tools,
        d,
        clients: Some(clients),
        phases,
        mark,
    };
    let n = start_x(&mut s, &o, first_display).await?;
    launch::start_session(&mut s, &o, n).await?;
    Ok(())
}

/// Xvfb on the first free display; a display another process took in
/// the meantime ("already active") is skipped.
async fn start_x<C>(
    s: &mut Supervised<'_, C>,
    o: &Options,
    first: u32,
) -> Result<u32, ProviderError>
where
    C: FnOnce(&Desktop) -> Result<(), ProviderError>,
{
    let mut skip = BTreeSet::new();
    let none = |d: &Desktop| LocalError::NoDisplay {
        machine: d.name.clone(),
        first,
        last: first + DISPLAYS - 1,
    };
    for _attempt in 0..10 {
        let n = reserve_display(first, &skip, Path::new("/tmp")).ok_or_else(|| none(s.d))?;
        s.d.display = Some(n);
        let _ = s.d.write_record();
        match launch::start_x(s, o, n).await {
            Ok(()) => {
                s.d.x_owned = true;
                return Ok(n);
            }
            Err(e @ ProviderError::Exited { what: "Xvfb", .. }) => {
                let log = s.d.dir.join(o.xvfb_log(n));
                let text = std::fs::read_to_string(log).unwrap_or_default();
                if !(text.contains("already active") || text.contains("server already running")) {
                    return Err(e);
                }
                tracing::info!("display :{n} was taken meanwhile; trying the next");
                s.d.forget("Xvfb");
                s.d.display = None;
                release_display(n);
                skip.insert(n);
            }
            Err(e) => return Err(e),
        }
    }
    Err(none(s.d).into())
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
