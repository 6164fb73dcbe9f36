//! Host processes and their logs, shared by the providers.

use std::path::{Path, PathBuf};
use std::process::ExitStatus;

/// How a process ended, in words (`exit code 1`, `killed by signal 9
/// (SIGKILL)`): the two signals a controller sends are named.
pub fn describe_status(s: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (s.code(), s.signal()) {
        (Some(c), _) => format!("exit code {c}"),
        (None, Some(9)) => "killed by signal 9 (SIGKILL)".into(),
        (None, Some(15)) => "killed by signal 15 (SIGTERM)".into(),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        _ => "unknown status".into(),
    }
}

/// The last `n` lines of a log file (empty when it cannot be read).
pub fn log_tail(path: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// How many failed starts' logs `<cache>/failed` keeps.
const KEPT_FAILURES: usize = 10;

/// Copies the files of `dir` that `wanted` picks to
/// `<cache>/failed/<time>-<label>/` (the last ten failures are kept) and
/// returns that folder.
pub fn keep_logs(cache: &Path, label: &str, dir: &Path, wanted: impl Fn(&Path) -> bool) -> String {
    let root = cache.join("failed");
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let dest = root.join(format!("{stamp}-{label}"));
    let _ = std::fs::create_dir_all(&dest);
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_file() && wanted(&p) {
            let _ = std::fs::copy(&p, dest.join(e.file_name()));
        }
    }
    if let Ok(entries) = std::fs::read_dir(&root) {
        let mut all: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        all.sort();
        for old in all.iter().take(all.len().saturating_sub(KEPT_FAILURES)) {
            let _ = std::fs::remove_dir_all(old);
        }
    }
    dest.display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_logs_are_the_wanted_files_and_only_the_last_ten() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("vm");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("a.log"), "one\ntwo\nthree\n").unwrap();
        std::fs::write(dir.join("disk.qcow2"), "x").unwrap();
        let cache = tmp.path().join("cache");
        for i in 0..12 {
            std::fs::create_dir_all(cache.join("failed").join(format!("0-old{i:02}"))).unwrap();
        }
        let kept = keep_logs(&cache, "vm", &dir, |p| {
            p.extension().is_some_and(|x| x == "log")
        });
        let kept = Path::new(&kept);
        assert!(kept.join("a.log").is_file() && !kept.join("disk.qcow2").exists());
        assert_eq!(std::fs::read_dir(cache.join("failed")).unwrap().count(), 10);
        assert_eq!(log_tail(&kept.join("a.log"), 2), "two\nthree");
    }
}
