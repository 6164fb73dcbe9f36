//! The machine's private mount and PID namespace (root) and its init.

use super::supervise::{Desktop, INIT_PROC};
use super::{HomeMode, LocalProvider};
use crate::provider::ProviderError;
use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const NAMESPACE_TIMEOUT: Duration = Duration::from_secs(10);

impl LocalProvider {
    /// `unshare` with a fresh mount and PID namespace, whose init mounts
    /// the tmpfs (with `isolate_home`), reports `ready` and reaps orphans.
    /// The init's host pid goes into `d.init`.
    pub(super) async fn start_init(&self, d: &mut Desktop) -> Result<(), ProviderError> {
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

/// Whether `/usr/bin/unshare` can make a mount and PID namespace here.
pub(super) fn probe_namespaces(unshare: &Path) -> Result<(), String> {
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

/// The children of a process (its main thread's).
pub(super) fn children(pid: u32) -> Vec<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|s| s.parse().ok())
        .collect()
}
