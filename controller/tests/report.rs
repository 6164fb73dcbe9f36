//! `deskenv report` rendered by a real browser (headless Chromium, from
//! scripts/install-deps.sh; ignored unless run with `--include-ignored`):
//! the index's charts and tables are in the DOM it builds, nothing is
//! fetched from the network, an episode page shows its screenshots, and
//! its recording plays. The overview's screenshot is kept as
//! target/tmp/report-overview.png.

use controller::report::write::fixture;
use std::path::Path;
use std::process::Command;

fn chromium(args: &[&str]) -> std::process::Output {
    let o = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            // Nothing resolves: a page that needed the network would show it.
            "--host-resolver-rules=MAP * ~NOTFOUND",
        ])
        .args(args)
        .output()
        .expect("chromium (scripts/install-deps.sh installs it)");
    assert!(
        o.status.success(),
        "chromium {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// A PNG's pixels as RGB bytes, and its width.
fn decode(p: &Path) -> (Vec<u8>, u32) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(p).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let bpp = info.line_size / info.width as usize;
    let rgb = buf[..info.buffer_size()]
        .chunks(bpp)
        .flat_map(|p| p[..3].to_vec())
        .collect();
    (rgb, info.width)
}

fn url(p: &Path) -> String {
    format!("file://{}", p.canonicalize().unwrap().display())
}

#[test]
#[ignore = "needs chromium: scripts/test.sh runs it with --include-ignored"]
fn the_report_renders_offline_in_headless_chromium() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = fixture::two_runs(tmp.path());
    let out = tmp.path().join("report");
    // t2's recording, made as the guest agent makes one (libx264, yuv420p).
    let t2 = a.join("pyautogui/screenshot/scripted/ds/t2");
    let ff = Command::new("ffmpeg")
        .args([
            "-v",
            "error",
            "-f",
            "lavfi",
            "-i",
            "testsrc=size=320x180:rate=5",
            "-t",
            "2",
        ])
        .args([
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            "-pix_fmt",
            "yuv420p",
        ])
        .arg(t2.join("recording.mp4"))
        .output()
        .expect("ffmpeg (scripts/install-deps.sh installs it)");
    assert!(
        ff.status.success(),
        "{}",
        String::from_utf8_lossy(&ff.stderr)
    );
    let o = Command::new(env!("CARGO_BIN_EXE_deskenv"))
        .args([
            "report",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--resamples",
            "500",
        ])
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "deskenv report failed:\n{text}");
    assert!(
        text.contains("R1: ") && text.contains("R2: ") && text.contains("6 episode pages"),
        "{text}"
    );

    let dom =
        String::from_utf8(chromium(&["--dump-dom", &url(&out.join("index.html"))]).stdout).unwrap();
    assert_eq!(dom.matches("<svg").count(), 3, "three charts in the DOM");
    for class in [
        "overview",
        "comparisons",
        "breakdown",
        "failure-counts",
        "failures",
        "unscored",
        "tasks",
    ] {
        assert!(
            dom.contains(&format!("<table class=\"{class}\"")),
            "no {class} table in the DOM"
        );
    }
    assert_eq!(
        dom.matches("class=\"bar\"").count(),
        4,
        "bars: 2 stages × 2 runs"
    );
    assert_eq!(dom.matches("class=\"bubble\"").count(), 2);
    for attr in ["src=\"http", "href=\"http"] {
        assert!(!dom.contains(attr), "the index loads {attr}…");
    }

    // The overview as pixels, kept as a test artifact
    // (target/tmp/report-overview.png).
    let overview = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-overview.png");
    chromium(&[
        &format!("--screenshot={}", overview.display()),
        "--window-size=1400,2400",
        &url(&out.join("index.html")),
    ]);
    let (buf, _) = decode(&overview);
    let coloured = buf
        .chunks(3)
        .filter(|p| !(p[0] == p[1] && p[1] == p[2]))
        .count();
    assert!(
        coloured > 20_000,
        "the overview's charts did not render: {coloured} coloured px"
    );

    // The failed episode's page, as pixels: its first screenshot (grey
    // 100 + 10 for the second task) fills much of the window.
    let page = std::fs::read_dir(out.join("episodes/r1"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains("t2"))
        .unwrap()
        .join("index.html");
    // The page's video element plays its recording: a probe page beside it
    // loads the same file in a <video> and names what happened in its title.
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("<video controls width=\"960\" src=\"recording.mp4\">"),
        "no video element"
    );
    let probe = page.with_file_name("probe.html");
    std::fs::write(
        &probe,
        "<!DOCTYPE html><title>waiting</title><video id=\"v\" muted src=\"recording.mp4\"></video><script>\
         const v = document.getElementById('v');\
         v.addEventListener('timeupdate', () => { if (v.currentTime > 0.5) document.title = 'played ' + v.videoWidth + 'x' + v.videoHeight; });\
         v.addEventListener('error', () => { document.title = 'error ' + v.error.code; });\
         v.play().catch(e => { document.title = 'play refused: ' + e; });</script>",
    )
    .unwrap();
    let dom = String::from_utf8(
        chromium(&[
            "--autoplay-policy=no-user-gesture-required",
            "--virtual-time-budget=10000",
            "--dump-dom",
            &url(&probe),
        ])
        .stdout,
    )
    .unwrap();
    assert!(
        dom.contains("<title>played 320x180</title>"),
        "the recording did not play: {dom}"
    );

    let shot = tmp.path().join("page.png");
    chromium(&[
        &format!("--screenshot={}", shot.display()),
        "--window-size=1400,2400",
        &url(&page),
    ]);
    let (buf, _) = decode(&shot);
    let grey = |level: u8| {
        buf.chunks(3)
            .filter(|p| p[0] == level && p[1] == level && p[2] == level)
            .count()
    };
    // 640 px wide frames of 1280×720 shots: ~640×360 px each, minus marks.
    for level in [110u8, 150] {
        assert!(
            grey(level) > 100_000,
            "screenshot of grey {level} not rendered: {} px",
            grey(level)
        );
    }
}
