//! `deskenv doctor`: what this host will do on the next run, without
//! starting anything: QEMU's version, the accelerator decision and why
//! (the cached KVM probe), the image and the ready snapshot, free disk
//! and memory.

use crate::image::Image;
use crate::provider::qemu::{Accel, QemuConfig, QemuProvider};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The report, printed as lines or as JSON.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub cache: PathBuf,
    pub qemu: Result<String, String>,
    pub accel: Option<crate::provider::qemu::AccelDecision>,
    pub image: Result<ImageState, String>,
    pub snapshot: Option<SnapshotState>,
    pub disk_free_bytes: Option<u64>,
    pub memory_available_bytes: Option<u64>,
    /// What the next `deskenv run` will do, in order.
    pub next: Vec<String>,
    /// Problems that will stop a run.
    pub problems: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ImageState {
    pub dir: PathBuf,
    pub digest: String,
    pub built_at: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct SnapshotState {
    pub dir: PathBuf,
    pub complete: bool,
    pub state_bytes: u64,
    pub created_at: u64,
}

fn statvfs_free(path: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: a zeroed statvfs filled by the call; the path is a valid C string.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some(st.f_bavail as u64 * st.f_frsize as u64)
}

fn mem_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The nearest existing folder at or above `p` (the cache may not exist yet).
fn existing(p: &Path) -> PathBuf {
    let mut p = p.to_path_buf();
    while !p.exists() {
        if !p.pop() {
            return PathBuf::from("/");
        }
    }
    p
}

/// Looks at the host and the cache; starts nothing.
pub fn check(cache: &Path, config: QemuConfig, image_dir: Option<&Path>) -> Report {
    let mut next = Vec::new();
    let mut problems = Vec::new();
    let image = match image_dir {
        Some(d) => Image::open(d),
        None => Image::latest(cache),
    };
    let image_state = match &image {
        Ok(i) => Ok(ImageState {
            dir: i.dir.clone(),
            digest: i.digest(),
            built_at: i.manifest.built_at.clone(),
        }),
        Err(e) => {
            next.push("build the guest image: `deskenv image build` (about 5 min; scripts/run.sh does it)".into());
            Err(crate::error_chain(e))
        }
    };
    let qemu = std::process::Command::new(&config.binary)
        .arg("--version")
        .output()
        .map_err(|e| format!("cannot run {}: {e}", config.binary.display()))
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .unwrap_or("")
                .to_string()
        });
    if let Err(e) = &qemu {
        problems.push(format!("{e} (scripts/install-deps.sh installs QEMU)"));
    }
    let (mut accel, mut snapshot) = (None, None);
    if let (Ok(img), Ok(_)) = (image, &qemu) {
        let use_snapshot = config.use_snapshot;
        match QemuProvider::new(img, config, cache.to_path_buf()) {
            Ok(p) => {
                let d = p.accel_decision();
                let try_kvm = d.accel == Accel::Kvm && d.probe.is_none();
                let (snap, _) = p.snapshot_for(d.accel);
                let meta = snap.meta();
                snapshot = Some(SnapshotState {
                    dir: snap.dir.clone(),
                    complete: meta.is_some(),
                    state_bytes: meta.as_ref().map(|m| m.state_bytes).unwrap_or(0),
                    created_at: meta.as_ref().map(|m| m.created_at).unwrap_or(0),
                });
                if try_kvm {
                    next.push("try KVM with a boot watchdog (20 s); on any failure fall back to TCG and record why in accel.json".into());
                }
                let a = d.accel.as_str();
                if !use_snapshot {
                    next.push(format!("cold boot every VM under {a} (--cold)"));
                } else if meta.is_some() {
                    next.push(format!(
                        "start every VM by restoring the ready snapshot under {a} (about 1 s each)"
                    ));
                } else {
                    next.push(format!("boot once under {a} and save the ready snapshot (about 60 s under TCG), then restore it for every VM"));
                }
                accel = Some(d);
            }
            Err(e) => problems.push(crate::error_chain(&e)),
        }
    }
    let disk_free_bytes = statvfs_free(&existing(cache));
    if let Some(free) = disk_free_bytes {
        if free < 8 << 30 {
            problems.push(format!(
                "only {:.1} GiB free under {} (an image and a snapshot take about 6 GiB)",
                free as f64 / (1u64 << 30) as f64,
                existing(cache).display()
            ));
        }
    }
    let memory_available_bytes = mem_available();
    if let Some(m) = memory_available_bytes {
        if m < 4 << 30 {
            problems.push(format!(
                "only {:.1} GiB of memory available (a VM takes 3 GiB)",
                m as f64 / (1u64 << 30) as f64
            ));
        }
    }
    Report {
        cache: cache.to_path_buf(),
        qemu,
        accel,
        image: image_state,
        snapshot,
        disk_free_bytes,
        memory_available_bytes,
        next,
        problems,
    }
}

/// The report as lines for a person.
pub fn text(r: &Report) -> String {
    let gib = |b: u64| format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64);
    let mut out = String::new();
    out.push_str(&format!("cache        {}\n", r.cache.display()));
    match &r.qemu {
        Ok(v) => out.push_str(&format!("qemu         {v}\n")),
        Err(e) => out.push_str(&format!("qemu         MISSING: {e}\n")),
    }
    if let Some(a) = &r.accel {
        out.push_str(&format!(
            "accelerator  {} ({})\n",
            a.accel.as_str(),
            a.reason
        ));
        match &a.probe {
            Some(p) => out.push_str(&format!(
                "kvm probe    {} on kernel {}: {} ({})\n",
                if p.kvm_works { "worked" } else { "failed" },
                p.host_kernel,
                p.reason,
                a.probe_file.display()
            )),
            None => out.push_str(&format!(
                "kvm probe    none recorded ({})\n",
                a.probe_file.display()
            )),
        }
    }
    match &r.image {
        Ok(i) => out.push_str(&format!(
            "image        {} (digest {}, built {})\n",
            i.dir.display(),
            &i.digest[..i.digest.len().min(12)],
            i.built_at
        )),
        Err(e) => out.push_str(&format!("image        none: {e}\n")),
    }
    if let Some(s) = &r.snapshot {
        if s.complete {
            out.push_str(&format!(
                "snapshot     {} ({} of machine state)\n",
                s.dir.display(),
                gib(s.state_bytes)
            ));
        } else {
            out.push_str(&format!("snapshot     none yet ({})\n", s.dir.display()));
        }
    }
    if let Some(b) = r.disk_free_bytes {
        out.push_str(&format!("disk free    {}\n", gib(b)));
    }
    if let Some(b) = r.memory_available_bytes {
        out.push_str(&format!("memory free  {}\n", gib(b)));
    }
    out.push_str("next run:\n");
    for n in &r.next {
        out.push_str(&format!("  - {n}\n"));
    }
    for p in &r.problems {
        out.push_str(&format!("PROBLEM: {p}\n"));
    }
    out
}
