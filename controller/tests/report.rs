//! `deskenv report` rendered by a real browser (headless Chromium, from
//! scripts/install-deps.sh; ignored unless run with `--include-ignored`):
//! the index's charts and tables are in the DOM it builds, nothing is
//! fetched from the network, and an episode page shows its screenshots.

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

fn url(p: &Path) -> String {
    format!("file://{}", p.canonicalize().unwrap().display())
}

#[test]
#[ignore = "needs chromium: scripts/test.sh runs it with --include-ignored"]
fn the_report_renders_offline_in_headless_chromium() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b, out) = (
        tmp.path().join("a"),
        tmp.path().join("b"),
        tmp.path().join("report"),
    );
    fixture::run(
        &a,
        &[
            ("t1", "wrangling", 1.0),
            ("t2", "modelling", 0.0),
            ("t3", "modelling", -1.0),
        ],
    );
    fixture::run(
        &b,
        &[
            ("t1", "wrangling", 1.0),
            ("t2", "modelling", 1.0),
            ("t3", "modelling", 1.0),
        ],
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

    // The failed episode's page, as pixels: its first screenshot (grey
    // 100 + 10 for the second task) fills much of the window.
    let page = std::fs::read_dir(out.join("episodes/r1"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains("t2"))
        .unwrap()
        .join("index.html");
    let shot = tmp.path().join("page.png");
    chromium(&[
        &format!("--screenshot={}", shot.display()),
        "--window-size=1400,2400",
        &url(&page),
    ]);
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let bpp = info.line_size / info.width as usize;
    let grey = |level: u8| {
        buf[..info.buffer_size()]
            .chunks(bpp)
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
