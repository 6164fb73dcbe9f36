//! The real-VM tier for frames taken on the host (QEMU's display read
//! through QMP): they equal the guest agent's capture of the same moment,
//! follow what the guest draws, and the host's settle waits for an
//! animation but not for a blinking caret. Ignored unless run with
//! `--include-ignored` (scripts/test.sh does, after building the image);
//! run with --test-threads=1.

use controller::image::Image;
use controller::paths;
use controller::pool::Pool;
use controller::provider::qemu::{QemuConfig, QemuProvider};
use controller::provider::Machine;
use protocol::api::{Command, ImageFormat, ObserveRequest, Settle, SettleOutcome};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn pool() -> Pool {
    let cache = paths::cache_dir(None);
    let image = Image::latest(&cache).expect("an image built by `deskenv image build`");
    let p = QemuProvider::new(image, QemuConfig::default(), cache).expect("QEMU is installed");
    Pool::new(Arc::new(p), 1).unwrap()
}

fn decode(png: &[u8]) -> (u32, u32, Vec<u8>) {
    let mut r = png::Decoder::new(std::io::Cursor::new(png))
        .read_info()
        .unwrap();
    let mut buf = vec![0; r.output_buffer_size().unwrap()];
    let info = r.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgb);
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

fn differing(a: &[u8], b: &[u8]) -> usize {
    a.chunks_exact(3)
        .zip(b.chunks_exact(3))
        .filter(|(p, q)| p != q)
        .count()
}

async fn sh(m: &dyn Machine, script: &str) -> String {
    let r = m
        .guest()
        .exec(Command::Shell(script.into()), Duration::from_secs(30))
        .await
        .unwrap();
    r.stdout
}

/// Launches `script` in the guest and waits for its window: its X id.
async fn launch(m: &dyn Machine, script: &str) -> u32 {
    let pid = m
        .guest()
        .launch(Command::Shell(script.into()))
        .await
        .unwrap()
        .pid;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let ws = m.guest().windows().await.unwrap();
        if let Some(w) = ws.iter().find(|w| w.pid == Some(pid)) {
            return w.id;
        }
        assert!(Instant::now() < deadline, "no window of {script:?}: {ws:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The guest's capture (its cursor drawn in) against the host's frame with
/// the guest's cursor image drawn in: the same pixels. A moment when
/// something ticks (the panel's clock) may differ, so three tries.
async fn guest_and_host_agree(m: &dyn Machine, what: &str) -> Vec<u8> {
    let mut last = String::new();
    for _ in 0..3 {
        let req = ObserveRequest {
            screenshot: true,
            image_format: ImageFormat::Png,
            quality: None,
            a11y: None,
            cursor_image: true,
        };
        let obs = m.guest().observe(&req).await.unwrap();
        let cursor = obs.cursor_image.expect("the guest's X server has XFixes");
        let host = m.host_screenshot(Some(&cursor)).await.unwrap();
        use base64::Engine;
        let guest = base64::engine::general_purpose::STANDARD
            .decode(obs.screenshot.unwrap())
            .unwrap();
        let (gw, gh, g) = decode(&guest);
        let (hw, hh, h) = decode(&host);
        assert_eq!((gw, gh), (hw, hh), "{what}: frame sizes");
        let n = differing(&g, &h);
        if n == 0 {
            return h;
        }
        last =
            format!("{what}: {n} pixels differ between the guest's capture and the host's frame");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    panic!("{last}");
}

#[tokio::test]
#[ignore = "needs a VM image (deskenv image build): scripts/test.sh runs it with --include-ignored"]
async fn host_frames_equal_the_guest_capture_and_follow_a_moved_window() {
    let pool = pool();
    let vm = pool.acquire().await.expect("a VM");
    let m: &dyn Machine = &*vm;
    assert!(m.host_display());
    // The cursor somewhere over the desktop, so it is part of the frames.
    sh(m, "xdotool mousemove 700 500").await;
    let before = guest_and_host_agree(m, "the desktop").await;

    let xterm = launch(m, "exec xterm -geometry 60x10+100+100 -bg black -fg white").await;
    let quiet = Settle {
        quiet_ms: 500,
        max_ms: 10_000,
        threshold_px: 0,
        idle: false,
    };
    m.host_settle(&quiet).await.unwrap();
    let with_xterm = guest_and_host_agree(m, "an xterm at (100,100)").await;
    assert!(
        differing(&before, &with_xterm) > 10_000,
        "the xterm is not in the host's frame"
    );

    sh(m, &format!("xdotool windowmove {xterm} 900 600")).await;
    m.host_settle(&quiet).await.unwrap();
    let moved = guest_and_host_agree(m, "the xterm moved to (900,600)").await;
    // The xterm's black now covers that part of the screen on the host too.
    let px = |f: &[u8], x: usize, y: usize| f[(y * 1920 + x) * 3..][..3].to_vec();
    assert_eq!(
        px(&moved, 1100, 680),
        vec![0, 0, 0],
        "moved xterm on the host"
    );
    assert_ne!(px(&with_xterm, 1100, 680), vec![0, 0, 0]);
    vm.release().await;
}

#[tokio::test]
#[ignore = "needs a VM image (deskenv image build): scripts/test.sh runs it with --include-ignored"]
async fn the_host_settle_waits_for_an_animation_but_not_for_a_blinking_caret() {
    let pool = pool();
    let vm = pool.acquire().await.expect("a VM");
    let m: &dyn Machine = &*vm;
    let settle = Settle {
        quiet_ms: 300,
        max_ms: 15_000,
        threshold_px: 2000,
        idle: false,
    };
    // A blinking caret (xterm's, every 250 ms) is under the threshold.
    let caret = launch(m, "exec xterm -geometry 80x24+50+50 -bc -bcf 250 -bcn 250").await;
    sh(
        m,
        &format!("xdotool windowactivate --sync {caret} mousemove 300 200"),
    )
    .await;
    m.host_settle(&Settle {
        max_ms: 10_000,
        ..settle
    })
    .await
    .unwrap();
    let r = m.host_settle(&settle).await.unwrap();
    assert_eq!(r.outcome, SettleOutcome::Quiet, "{r:?}");
    assert!(
        r.waited_ms < 2000.0,
        "the caret kept the settle waiting: {r:?}"
    );

    // An xterm printing reverse-video bars for 4 s (each about 600x13
    // pixels, above the threshold; a few a second under TCG): the settle
    // ends only after the printing.
    sh(m, "rm -f /tmp/anim-end").await;
    launch(
        m,
        "exec xterm -geometry 100x40+400+100 -e sh -c 'end=$(( $(date +%s) + 4 )); \
         while [ $(date +%s) -lt $end ]; do printf \"\\033[7m%99s\\033[0m\\n\" x; sleep 0.02; done; \
         touch /tmp/anim-end; sleep 60'",
    )
    .await;
    let r = m.host_settle(&settle).await.unwrap();
    let ended = sh(m, "test -e /tmp/anim-end && echo ended || echo printing").await;
    assert_eq!(
        ended.trim(),
        "ended",
        "the settle returned while the xterm printed: {r:?}"
    );
    assert_eq!(r.outcome, SettleOutcome::Quiet, "{r:?}");
    assert!(r.waited_ms > 1000.0, "{r:?}");
    vm.release().await;
}

fn sha256_of(path: &std::path::Path) -> String {
    use sha2::{Digest, Sha256};
    use std::io::Read;
    let mut f = std::fs::File::open(path).unwrap();
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    hex::encode(h.finalize())
}

#[tokio::test]
#[ignore = "needs a VM image (deskenv image build): scripts/test.sh runs it with --include-ignored"]
async fn repeated_restores_from_the_ram_file_each_give_the_saved_desktop_and_never_write_it() {
    // Five in CI; scripts/test.sh --full sets DESKENV_TEST_RESTORES=20.
    let restores: usize = std::env::var("DESKENV_TEST_RESTORES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let cache = paths::cache_dir(None);
    let image = Image::latest(&cache).expect("an image built by `deskenv image build`");
    let provider = Arc::new(
        QemuProvider::new(image, QemuConfig::default(), cache).expect("QEMU is installed"),
    );
    assert!(provider.config().ram_file);
    let pool = Pool::new(provider.clone(), 1).unwrap();
    // The first start makes the snapshot if there is none.
    pool.acquire().await.expect("a VM").release().await;
    let (snap, _) = provider.snapshot().await.unwrap();
    let meta = snap.meta().expect("a complete ready snapshot");
    assert_eq!(meta.ram_bytes, std::fs::metadata(snap.ram()).unwrap().len());
    let before = sha256_of(&snap.ram());
    let mtime = std::fs::metadata(snap.ram()).unwrap().modified().unwrap();

    let mut first_windows: Option<Vec<String>> = None;
    for i in 0..restores {
        let vm = pool.acquire().await.expect("a VM");
        let m: &dyn Machine = &*vm;
        let phases = &m.started().phases;
        assert!(
            phases.iter().any(|p| p.0 == "restore path: ram file"),
            "restore {i}: {phases:?}"
        );
        let mut titles: Vec<String> = m
            .guest()
            .windows()
            .await
            .unwrap()
            .into_iter()
            .map(|w| format!("{} ({})", w.title, w.class))
            .collect();
        titles.sort();
        match &first_windows {
            None => first_windows = Some(titles),
            Some(f) => assert_eq!(&titles, f, "restore {i}: another desktop"),
        }
        // What the previous VM did after the save is gone.
        assert_eq!(
            sh(m, "test -e /tmp/after-save && echo left || echo gone")
                .await
                .trim(),
            "gone",
            "restore {i}"
        );
        sh(m, "touch /tmp/after-save").await;
        launch(m, "exec xterm -geometry 40x5+300+300").await;
        vm.release().await;
    }
    assert_eq!(
        std::fs::metadata(snap.ram()).unwrap().modified().unwrap(),
        mtime
    );
    assert_eq!(
        sha256_of(&snap.ram()),
        before,
        "a restore wrote the RAM file"
    );
}
