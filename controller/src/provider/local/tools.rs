//! The programs a machine needs: looked up on PATH, named with their
//! Debian package when missing.

use super::LocalError;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

/// Programs every machine needs, with their Debian package.
pub(super) const TOOLS: &[(&str, &str)] = &[
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
pub(super) const OPTIONAL_TOOLS: &[(&str, &str)] = &[
    ("xfce4-panel", "xfce4-panel"),
    ("xdotool", "xdotool"),
    ("xsetroot", "x11-xserver-utils"),
];

/// Programs the namespaces need (root).
pub(super) const NS_TOOLS: &[(&str, &str)] = &[("nsenter", "util-linux")];

pub(super) fn missing_error(missing: &[(&str, &str)]) -> LocalError {
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
pub(super) fn which(program: &str) -> Option<PathBuf> {
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

pub(super) fn writable_dir(p: &Path) -> bool {
    let Ok(c) = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()) else {
        return false;
    };
    // SAFETY: access reads a NUL-terminated path we own.
    p.is_dir() && unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) } == 0
}

pub(super) fn sha256_file(p: &Path) -> std::io::Result<String> {
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

/// Runs a probe command (2 s at most) and returns its stdout and stderr.
pub(super) async fn probe_output(mut c: tokio::process::Command) -> Result<String, String> {
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

#[cfg(test)]
mod tests {
    use super::super::{LocalConfig, LocalProvider};
    use super::*;

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
}
