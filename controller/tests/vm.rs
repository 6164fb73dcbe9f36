//! The real-VM tier: QEMU VMs from the image `deskenv image build` made,
//! driven through the controller's own API. Ignored unless run with
//! `--include-ignored` (scripts/test.sh does, after building the image);
//! run with --test-threads=1 (each VM wants both cores).
//!
//! The first test to start a VM makes the ready snapshot if the cache has
//! none (one cold boot); every other VM is a restore.

use controller::image::{Image, ImageError};
use controller::paths;
use controller::pool::Pool;
use controller::provider::qemu::display::png_size;
use controller::provider::qemu::{QemuConfig, QemuProvider};
use controller::provider::reaper;
use controller::provider::{Provider, ProviderError, StartPath};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

fn cache() -> PathBuf {
    paths::cache_dir(None)
}

fn image() -> Image {
    Image::latest(&cache()).expect("an image built by `deskenv image build`")
}

/// One provider for the whole binary, with the defaults `deskenv vm up`
/// uses, so the snapshot is shared with the README's commands.
fn provider() -> Arc<QemuProvider> {
    static P: OnceLock<Arc<QemuProvider>> = OnceLock::new();
    P.get_or_init(|| {
        Arc::new(
            QemuProvider::new(image(), QemuConfig::default(), cache()).expect("QEMU is installed"),
        )
    })
    .clone()
}

fn pool() -> Pool {
    Pool::new(provider(), 1).unwrap()
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

fn qemu_pids() -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() {
            if reaper::is_qemu(pid) && reaper::alive(pid) {
                out.push(pid);
            }
        }
    }
    out
}

async fn wait_until(what: &str, within: Duration, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
#[ignore = "needs a VM image (deskenv image build): scripts/test.sh runs it with --include-ignored"]
async fn restored_vm_has_a_desktop_a_screen_an_a11y_tree_and_the_right_time() {
    let pool = pool();
    let vm = pool.acquire().await.expect("a VM");
    assert_eq!(vm.started().path, StartPath::Restore, "{:?}", vm.started());
    let h = vm.guest().health(Duration::from_secs(5)).await.unwrap();
    assert_eq!((h.screen.width, h.screen.height), (1920, 1080));
    assert!(h.atspi, "AT-SPI is down: {:?}", h.atspi_error);

    let guest = vm.guest().screenshot().await.unwrap();
    assert_eq!(png_size(&guest), Some((1920, 1080)));
    let host = vm.screenshot().await.unwrap();
    assert_eq!(png_size(&host), Some((1920, 1080)));

    // The desktop's own applications are in the tree: the panel, with its
    // application menu.
    let tree = vm.guest().a11y("osworld-xml").await.unwrap();
    let xml = tree.text.unwrap_or_default();
    assert!(tree.applications >= 1, "{xml}");
    assert!(xml.contains("name=\"xfce4-panel\""), "{xml}");
    assert!(xml.contains("name=\"Applications\""), "{xml}");

    // The clock was set to the host's after the restore.
    let r = vm
        .guest()
        .exec(
            protocol::api::Command::Shell("date +%s%3N".into()),
            Duration::from_secs(20),
        )
        .await
        .unwrap();
    let guest_ms: u64 = r.stdout.trim().parse().unwrap();
    let host_ms = now_ms();
    assert!(
        host_ms.abs_diff(guest_ms) < 5_000,
        "guest clock {guest_ms}, host {host_ms}"
    );
    vm.release().await;
}

#[tokio::test]
#[ignore = "needs a VM image (deskenv image build): scripts/test.sh runs it with --include-ignored"]
async fn reset_discards_files_and_windows_and_takes_the_restore_path() {
    let pool = pool();
    let vm = pool.acquire().await.unwrap();
    vm.guest()
        .put_file(
            "/home/user/reset-marker.txt",
            b"written before the reset\n".to_vec(),
        )
        .await
        .unwrap();
    let opened = vm
        .guest()
        .open("/home/user/reset-marker.txt", None, Duration::from_secs(60))
        .await
        .unwrap();
    assert!(
        opened.window.title.contains("reset-marker"),
        "{:?}",
        opened.window
    );
    let windows = vm.guest().windows().await.unwrap();
    assert!(
        windows.iter().any(|w| w.title.contains("reset-marker")),
        "{windows:?}"
    );
    vm.release().await;

    let t = Instant::now();
    let vm = pool.acquire().await.unwrap();
    let reset_s = t.elapsed().as_secs_f64();
    let started = vm.started().clone();
    assert_eq!(started.path, StartPath::Restore);
    // No boot happened: a boot has kernel and marker phases.
    assert!(
        !started
            .phases
            .iter()
            .any(|(k, _)| k == "kernel" || k == "X ready"),
        "{started:?}"
    );
    assert!(
        started.phases.iter().any(|(k, _)| k == "load state"),
        "{started:?}"
    );
    assert_eq!(
        vm.guest()
            .get_file("/home/user/reset-marker.txt")
            .await
            .unwrap(),
        None
    );
    let windows = vm.guest().windows().await.unwrap();
    assert!(
        !windows.iter().any(|w| w.title.contains("reset-marker")),
        "{windows:?}"
    );
    eprintln!(
        "reset by restore: {reset_s:.2}s, phases {:?}",
        started.phases
    );
    vm.release().await;
}

#[tokio::test]
#[ignore = "needs a VM image (deskenv image build): scripts/test.sh runs it with --include-ignored"]
async fn a_killed_qemu_is_reported_and_a_new_vm_can_be_acquired_with_nothing_left_running() {
    let pool = pool();
    let vm = pool.acquire().await.unwrap();
    let pid = vm.pid().unwrap();
    let dir = vm_dir_of(pid);
    unsafe {
        libc::kill(pid as i32, libc::SIGKILL);
    }
    // The controller reports it: check() and the agent both fail clearly.
    let mut err = None;
    for _ in 0..100 {
        if let Err(e) = vm.check() {
            err = Some(e);
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let err = err.expect("check() reports the dead QEMU");
    let msg = err.to_string();
    assert!(matches!(err, ProviderError::Exited { .. }), "{msg}");
    assert!(
        msg.contains("exited") && msg.contains("SIGKILL") && msg.contains(&pid.to_string()),
        "{msg}"
    );
    assert!(vm.guest().health(Duration::from_secs(2)).await.is_err());
    assert!(vm
        .screenshot()
        .await
        .unwrap_err()
        .to_string()
        .contains("exited"));
    vm.release().await;
    assert!(!dir.exists(), "{} was left behind", dir.display());

    let vm = pool.acquire().await.unwrap();
    assert!(
        vm.guest()
            .health(Duration::from_secs(5))
            .await
            .unwrap()
            .atspi
    );
    let pid2 = vm.pid().unwrap();
    vm.release().await;
    assert!(!reaper::alive(pid2));
    assert_eq!(reaper::live(), 0);
    assert!(!qemu_pids().contains(&pid2));
}

fn vm_dir_of(pid: u32) -> PathBuf {
    for e in std::fs::read_dir(paths::vms_dir(&cache()))
        .unwrap()
        .flatten()
    {
        let owner = std::fs::read_to_string(e.path().join("owner.json")).unwrap_or_default();
        if owner.contains(&format!("\"qemu_pid\":{pid}")) {
            return e.path();
        }
    }
    panic!("no VM folder for pid {pid}");
}

#[tokio::test]
#[ignore = "needs a VM image (deskenv image build): scripts/test.sh runs it with --include-ignored"]
async fn missing_or_corrupt_images_and_state_files_are_clear_errors() {
    // Make sure the real snapshot exists, then work on a copy of it.
    let p = provider();
    let vm = p.start("ensure-snapshot").await.unwrap();
    vm.shutdown().await;
    let (snap, _) = p.snapshot().await.unwrap();
    let meta = snap.meta().expect("complete snapshot");

    let tmp = tempfile::tempdir().unwrap();
    let tcache = tmp.path();
    let tsnap = paths::snapshots_dir(tcache).join(snap.dir.file_name().unwrap());
    std::fs::create_dir_all(&tsnap).unwrap();
    std::os::unix::fs::symlink(snap.disk(), tsnap.join("disk.qcow2")).unwrap();
    std::fs::copy(snap.meta_path(), tsnap.join("snapshot.json")).unwrap();
    if meta.ram_bytes > 0 {
        std::os::unix::fs::symlink(snap.ram(), tsnap.join("ram")).unwrap();
    }
    // Same size and magic number, damaged content.
    let mut state = std::fs::read(snap.state()).unwrap();
    let mid = state.len() / 3;
    for b in &mut state[mid..mid + 4096] {
        *b ^= 0x5a;
    }
    std::fs::write(tsnap.join("state.zst"), &state).unwrap();
    drop(state);
    let config = QemuConfig {
        accel: accel_of(&meta.inputs.accel),
        ..QemuConfig::default()
    };
    let tp = QemuProvider::new(image(), config.clone(), tcache.to_path_buf()).unwrap();
    let e = tp
        .start("corrupt")
        .await
        .err()
        .expect("a damaged state file fails")
        .to_string();
    assert!(e.contains("state.zst") && e.contains("restoring"), "{e}");
    assert_eq!(
        std::fs::read_dir(paths::vms_dir(tcache)).unwrap().count(),
        0,
        "VM folder left behind"
    );

    std::fs::remove_file(tsnap.join("state.zst")).unwrap();
    let e = tp
        .start("missing")
        .await
        .err()
        .expect("a missing state file fails")
        .to_string();
    assert!(e.contains("state.zst is missing"), "{e}");

    // A snapshot whose RAM is a file of its own, without the file.
    if meta.ram_bytes > 0 {
        std::os::unix::fs::symlink(snap.state(), tsnap.join("state.zst")).unwrap();
        std::fs::remove_file(tsnap.join("ram")).unwrap();
        let e = tp
            .start("no-ram")
            .await
            .err()
            .expect("a missing RAM file fails")
            .to_string();
        assert!(e.contains("ram is missing"), "{e}");
    }

    // Images: a folder without files, a base that is not qcow2.
    let idir = tmp.path().join("img");
    std::fs::create_dir_all(&idir).unwrap();
    assert!(matches!(Image::open(&idir), Err(ImageError::NoManifest(_))));
    let real = image();
    std::fs::copy(real.dir.join("manifest.json"), idir.join("manifest.json")).unwrap();
    let e = Image::open(&idir).unwrap_err().to_string();
    assert!(e.contains("is missing"), "{e}");
    for f in ["vmlinuz", "initrd.img"] {
        std::fs::copy(real.dir.join(f), idir.join(f)).unwrap();
    }
    let f = std::fs::File::create(idir.join("base.qcow2")).unwrap();
    f.set_len(real.manifest.files.image.bytes.unwrap()).unwrap();
    let e = Image::open(&idir).unwrap_err().to_string();
    assert!(e.contains("base.qcow2 is corrupt: no qcow2 header"), "{e}");
}

fn accel_of(s: &str) -> controller::provider::qemu::AccelChoice {
    s.parse().unwrap()
}

fn deskenv() -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_deskenv"));
    c.env_remove("RUST_LOG");
    c
}

fn run_ok(args: &[&str]) -> String {
    let out = deskenv().args(args).output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "deskenv {args:?} failed:\n{text}");
    text
}

#[tokio::test]
#[ignore = "needs a VM image (deskenv image build): scripts/test.sh runs it with --include-ignored"]
async fn named_vm_up_list_screenshot_down() {
    let _ = deskenv()
        .args(["vm", "down", "--name", "tier-test"])
        .output();
    let up = run_ok(&["vm", "up", "--name", "tier-test"]);
    assert!(
        up.contains("tier-test: up in") && up.contains("restore from the ready snapshot"),
        "{up}"
    );
    let list = run_ok(&["vm", "list"]);
    assert!(
        list.lines()
            .any(|l| l.starts_with("tier-test") && l.contains("running")),
        "{list}"
    );
    let tmp = tempfile::tempdir().unwrap();
    let png = tmp.path().join("s.png");
    run_ok(&[
        "vm",
        "screenshot",
        "--name",
        "tier-test",
        "--out",
        png.to_str().unwrap(),
    ]);
    assert_eq!(png_size(&std::fs::read(&png).unwrap()), Some((1920, 1080)));
    let pid: u32 = {
        let rec =
            std::fs::read_to_string(paths::vms_dir(&cache()).join("tier-test/vm.json")).unwrap();
        serde_json::from_str::<serde_json::Value>(&rec).unwrap()["pid"]
            .as_u64()
            .unwrap() as u32
    };
    assert!(reaper::alive(pid));
    // The live view serves the screen on loopback only.
    let out = deskenv()
        .args(["vm", "view", "--name", "tier-test", "--listen", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("only loopback addresses"),
        "{out:?}"
    );
    let mut view = deskenv()
        .args(["vm", "view", "--name", "tier-test"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(view.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://127.0.0.1:"))
        .expect(&line)
        .to_string();
    let page = reqwest::get(&url).await.unwrap().text().await.unwrap();
    assert!(page.contains("deskenv live view"), "{page}");
    let frame = reqwest::get(format!("{url}screen.png"))
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert_eq!(png_size(&frame), Some((1920, 1080)));
    view.kill().unwrap();
    view.wait().unwrap();

    // A second VM with the same name is refused.
    let out = deskenv()
        .args(["vm", "up", "--name", "tier-test"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("exists already"));
    run_ok(&["vm", "down", "--name", "tier-test"]);
    assert!(!reaper::alive(pid));
    let list = run_ok(&["vm", "list"]);
    assert!(!list.contains("tier-test"), "{list}");
    let out = deskenv()
        .args(["vm", "screenshot", "--name", "nope", "--out", "/tmp/x.png"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("no VM named `nope`"));
}

/// The QEMU processes whose parent is `parent`.
fn qemu_children(parent: u32) -> Vec<u32> {
    qemu_pids()
        .into_iter()
        .filter(|&p| {
            let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
            let ppid = stat
                .rsplit_once(')')
                .and_then(|(_, r)| r.split_whitespace().nth(1))
                .and_then(|x| x.parse().ok());
            ppid == Some(parent)
        })
        .collect()
}

async fn kill_controller_mid_use(signal: i32) -> (u32, Option<std::process::ExitStatus>) {
    let mut child = deskenv()
        .args(["vm", "smoke", "--count", "5"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let cpid = child.id();
    let mut qemu = Vec::new();
    wait_until("the controller's QEMU", Duration::from_secs(120), || {
        qemu = qemu_children(cpid);
        !qemu.is_empty()
    })
    .await;
    unsafe {
        libc::kill(cpid as i32, signal);
    }
    let status = child.wait().ok();
    let q = qemu[0];
    wait_until(
        "QEMU to end with its controller",
        Duration::from_secs(10),
        || !reaper::alive(q),
    )
    .await;
    (q, status)
}

#[tokio::test]
#[ignore = "needs a VM image (deskenv image build): scripts/test.sh runs it with --include-ignored"]
async fn sigterm_and_sigkill_of_the_controller_leave_no_qemu_and_no_overlay() {
    // Make sure the snapshot exists so the child restores at once.
    let vm = provider().start("warm").await.unwrap();
    vm.shutdown().await;

    let (q, status) = kill_controller_mid_use(libc::SIGTERM).await;
    assert_eq!(status.and_then(|s| s.code()), Some(143));
    assert!(!reaper::alive(q));
    let leftover = dirs_of_dead_controllers();
    assert!(leftover.is_empty(), "SIGTERM left {leftover:?}");

    // SIGKILL: the kernel ends QEMU (death signal); the folder is swept by
    // the next start.
    let (q, _) = kill_controller_mid_use(libc::SIGKILL).await;
    assert!(!reaper::alive(q));
    let vm = provider().start("after-kill").await.unwrap();
    vm.shutdown().await;
    let leftover = dirs_of_dead_controllers();
    assert!(leftover.is_empty(), "the sweep left {leftover:?}");
}

fn dirs_of_dead_controllers() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(paths::vms_dir(&cache()))
        .into_iter()
        .flatten()
        .flatten()
    {
        let owner = std::fs::read_to_string(e.path().join("owner.json")).unwrap_or_default();
        let v: serde_json::Value = serde_json::from_str(&owner).unwrap_or_default();
        if let Some(c) = v["controller_pid"].as_u64() {
            if !reaper::alive(c as u32) {
                out.push(e.path());
            }
        }
    }
    out
}
