//! The guest's serial console, which QEMU writes to a file: boot progress
//! for the KVM watchdog and the readiness markers the image prints
//! (`DESKENV-X-READY 12.34`, the number being the guest's uptime).

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// Reads a growing serial log incrementally.
#[derive(Debug)]
pub struct SerialLog {
    path: PathBuf,
    offset: u64,
    text: String,
}

impl SerialLog {
    pub fn new(path: &Path) -> SerialLog {
        SerialLog {
            path: path.to_path_buf(),
            offset: 0,
            text: String::new(),
        }
    }

    /// Reads what was appended since the last call.
    pub fn poll(&mut self) {
        let Ok(mut f) = std::fs::File::open(&self.path) else {
            return;
        };
        if f.seek(SeekFrom::Start(self.offset)).is_err() {
            return;
        }
        let mut buf = Vec::new();
        if let Ok(n) = f.read_to_end(&mut buf) {
            self.offset += n as u64;
            self.text.push_str(&String::from_utf8_lossy(&buf));
        }
    }

    /// Everything read so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Bytes read so far (boot progress for the KVM watchdog).
    pub fn len(&self) -> u64 {
        self.offset
    }

    pub fn is_empty(&self) -> bool {
        self.offset == 0
    }

    /// The line holding `marker` at a line's start (after any console
    /// noise), if seen.
    pub fn marker(&self, marker: &str) -> Option<&str> {
        self.text
            .lines()
            .find(|l| l.contains(marker))
            .map(str::trim)
    }

    /// The guest uptime printed after `marker`, if seen.
    pub fn marker_uptime(&self, marker: &str) -> Option<f64> {
        let line = self.marker(marker)?;
        let rest = &line[line.find(marker)? + marker.len()..];
        rest.split_whitespace().next()?.parse().ok()
    }

    /// The last `n` lines, for error messages.
    pub fn tail(&self, n: usize) -> String {
        let lines: Vec<&str> = self.text.lines().collect();
        lines[lines.len().saturating_sub(n)..].join("\n")
    }

    /// A kernel panic or an error marker from the image.
    pub fn failure(&self, error_marker: &str) -> Option<String> {
        if let Some(l) = self.marker(error_marker) {
            return Some(l.to_string());
        }
        self.text
            .lines()
            .find(|l| l.contains("Kernel panic"))
            .map(|l| l.trim().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn reads_incrementally_and_finds_markers() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("serial.log");
        let mut s = SerialLog::new(&p);
        s.poll();
        assert!(s.is_empty());
        let mut f = std::fs::File::create(&p).unwrap();
        f.write_all(b"[    0.000000] Linux version 6.1\r\nDESKENV-X-READY 21.5")
            .unwrap();
        s.poll();
        assert_eq!(s.marker_uptime("DESKENV-X-READY"), Some(21.5));
        assert_eq!(s.marker("DESKENV-AGENT-READY"), None);
        f.write_all(b"0\r\nDESKENV-ERROR wm-timeout 30.1\r\n")
            .unwrap();
        s.poll();
        assert_eq!(s.marker_uptime("DESKENV-X-READY"), Some(21.5));
        assert_eq!(
            s.failure("DESKENV-ERROR").as_deref(),
            Some("DESKENV-ERROR wm-timeout 30.1")
        );
        assert!(s.tail(1).contains("wm-timeout"));
    }
}
