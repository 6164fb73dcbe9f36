//! The window, open and recording modules against a real desktop (Xvfb,
//! openbox and real GTK applications), checked with xdotool and ffprobe.
//! Each test starts its own desktop; they are ignored unless run with
//! `--include-ignored`.

mod common;

use common::{poll, Desktop};
use guest_agent::exec;
use guest_agent::recording::{Recorder, RecordingError};
use guest_agent::windows::{self, WindowError, Windows};
use protocol::api::{OpenRequest, RecordingStart, WindowMatch};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Starts a desktop, one test at a time (displays are claimed atomically;
/// this only keeps two starts from competing for the CPU).
fn start_desktop() -> Desktop {
    static START: Mutex<()> = Mutex::new(());
    let _one = START.lock().unwrap_or_else(|e| e.into_inner());
    Desktop::start()
}

fn by_class(class: &str) -> WindowMatch {
    WindowMatch {
        title: None,
        exact: false,
        class: Some(class.into()),
        timeout_ms: None,
    }
}

fn by_title(title: &str) -> WindowMatch {
    WindowMatch {
        title: Some(title.into()),
        exact: false,
        class: None,
        timeout_ms: None,
    }
}

/// `xdotool getwindowgeometry` as (x, y, width, height).
fn xdotool_geometry(desktop: &Desktop, id: u32) -> (i32, i32, i32, i32) {
    let out = desktop.run(&["xdotool", "getwindowgeometry", &id.to_string()]);
    let field = |label: &str, sep: char| -> (i32, i32) {
        let line = out
            .lines()
            .find_map(|l| l.trim().strip_prefix(label))
            .unwrap_or_else(|| panic!("no {label} in {out:?}"));
        let first = line.split_whitespace().next().unwrap();
        let (a, b) = first.split_once(sep).unwrap();
        (a.parse().unwrap(), b.parse().unwrap())
    };
    let (x, y) = field("Position:", ',');
    let (w, h) = field("Geometry:", 'x');
    (x, y, w, h)
}

fn xdotool_active(desktop: &Desktop) -> u32 {
    desktop
        .run(&["xdotool", "getactivewindow"])
        .trim()
        .parse()
        .unwrap()
}

/// `xwininfo`'s absolute position and the window's offset in its parent
/// (the window manager's frame).
fn xwininfo_position(desktop: &Desktop, id: u32) -> ((i32, i32), (i32, i32)) {
    let out = desktop.run(&["xwininfo", "-id", &id.to_string()]);
    let get = |label: &str| -> i32 {
        out.lines()
            .find_map(|l| l.trim().strip_prefix(label))
            .unwrap_or_else(|| panic!("no {label} in {out:?}"))
            .trim()
            .parse()
            .unwrap()
    };
    (
        (get("Absolute upper-left X:"), get("Absolute upper-left Y:")),
        (get("Relative upper-left X:"), get("Relative upper-left Y:")),
    )
}

/// Checks a window's rectangle against `xwininfo` and `xdotool
/// getwindowgeometry`. xdotool 3.20160805 adds the window's offset inside
/// its frame twice for decorated (reparented) windows, so its position is
/// accepted either as ours or as ours plus that offset. A window that was
/// just mapped may still be moved by the window manager, so this re-reads
/// for a few seconds.
fn check_geometry(desktop: &Desktop, wins: &Windows, id: u32) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let w = wins
            .list()
            .unwrap()
            .into_iter()
            .find(|w| w.id == id)
            .unwrap();
        let ours = (w.rect.x, w.rect.y, w.rect.width, w.rect.height);
        let (x, y, width, height) = xdotool_geometry(desktop, id);
        let (absolute, offset) = xwininfo_position(desktop, id);
        let xdotool_ok =
            (x, y) == (ours.0, ours.1) || (x, y) == (ours.0 + offset.0, ours.1 + offset.1);
        if absolute == (ours.0, ours.1) && (width, height) == (ours.2, ours.3) && xdotool_ok {
            assert!(w.rect.width > 50 && w.rect.height > 50, "{w:?}");
            return;
        }
        assert!(
            Instant::now() < deadline,
            "geometry of {:?}: ours {ours:?}, xwininfo's position {absolute:?} (offset in frame {offset:?}), xdotool's {:?}",
            w.title,
            (x, y, width, height)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
#[ignore = "needs a desktop (Xvfb, AT-SPI): scripts/test.sh runs it with --include-ignored"]
fn windows_list_activate_close_and_open() {
    let desktop = start_desktop();
    let display = desktop.display.clone();
    // `open` starts xdg-open with the agent's environment: give this process
    // the desktop's session bus, and a private XDG config whose default
    // text/plain application is mousepad.
    let config = tempfile::tempdir().unwrap();
    for (k, v) in &desktop.env {
        std::env::set_var(k, v);
    }
    std::env::set_var("XDG_CONFIG_HOME", config.path());
    desktop.run(&[
        "xdg-mime",
        "default",
        "org.xfce.mousepad.desktop",
        "text/plain",
    ]);
    assert_eq!(
        desktop
            .run(&["xdg-mime", "query", "default", "text/plain"])
            .trim(),
        "org.xfce.mousepad.desktop"
    );

    let wins = Windows::connect(&display).unwrap();
    assert_eq!(wins.screen_size(), (1920, 1080));
    desktop.run(&["xdotool", "mousemove", "123", "456"]);
    assert_eq!(wins.pointer().unwrap(), (123, 456));

    desktop.spawn(&["gtk3-widget-factory"]);
    desktop.spawn(&["mousepad"]);
    let factory = windows::wait_for(
        &display,
        &by_class("widget-factory"),
        Duration::from_secs(30),
    )
    .expect("gtk3-widget-factory window");
    let pad = windows::wait_for(&display, &by_class("mousepad"), Duration::from_secs(30))
        .expect("mousepad window");
    // Both are mapped by now (xdotool sees them), and titles settle.
    desktop.wait_window("Mousepad", Duration::from_secs(20));
    desktop.wait_window("gtk3-widget-factory", Duration::from_secs(20));

    let list = wins.list().unwrap();
    eprintln!("windows: {list:#?}");
    let factory = list.iter().find(|w| w.id == factory.id).unwrap().clone();
    let pad = list.iter().find(|w| w.id == pad.id).unwrap().clone();
    assert_eq!(factory.title, "gtk3-widget-factory");
    assert_eq!(factory.instance, "gtk3-widget-factory");
    assert!(pad.title.contains("Mousepad"), "{pad:?}");
    assert_eq!(pad.class, "Mousepad");
    assert!(pad.pid.is_some() && factory.pid.is_some());
    assert_eq!(list.len(), 2, "{list:?}");
    assert!(list.iter().filter(|w| w.active).count() <= 1);
    check_geometry(&desktop, &wins, factory.id);
    check_geometry(&desktop, &wins, pad.id);

    // Title and class lookups (wmctrl -a / -xa semantics).
    let found = wins.find(&by_title("WIDGET-factory")).unwrap();
    assert_eq!(
        found.iter().map(|w| w.id).collect::<Vec<_>>(),
        vec![factory.id]
    );
    let exact = WindowMatch {
        title: Some(factory.title.clone()),
        exact: true,
        class: None,
        timeout_ms: None,
    };
    assert_eq!(wins.find(&exact).unwrap().len(), 1);
    assert!(wins
        .find(&by_title("no such window anywhere"))
        .unwrap()
        .is_empty());
    let err = windows::wait_for(
        &display,
        &by_title("no such window anywhere"),
        Duration::from_millis(200),
    )
    .unwrap_err();
    assert!(matches!(err, WindowError::NotFound { .. }), "{err}");
    assert!(err.to_string().contains("no such window anywhere"), "{err}");

    // Activate each in turn, twice round.
    for w in [&factory, &pad, &factory, &pad] {
        wins.activate(w.id)
            .unwrap_or_else(|e| panic!("activate {}: {e}", w.title));
        assert_eq!(
            xdotool_active(&desktop),
            w.id,
            "after activating {:?}",
            w.title
        );
        let now = wins.list().unwrap();
        assert!(now.iter().find(|x| x.id == w.id).unwrap().active);
    }
    let err = wins.activate(0x3ff_fff0).unwrap_err();
    assert!(matches!(err, WindowError::NoSuchWindow { .. }), "{err}");

    // Close mousepad (an unmodified document closes without asking).
    wins.close(pad.id).unwrap();
    poll("mousepad to close", Duration::from_secs(10), || {
        let l = wins.list().unwrap();
        (!l.iter().any(|w| w.id == pad.id)).then_some(())
    });
    assert!(wins.list().unwrap().iter().any(|w| w.id == factory.id));

    // Open a text file: xdg-open starts mousepad, whose window is titled
    // with the file name; it is found and activated.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("deskenv-notes.txt");
    std::fs::write(&file, "hello from deskenv\n").unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let opened = rt
        .block_on(exec::open(
            &OpenRequest {
                path: file.to_string_lossy().into_owned(),
                window: None,
                timeout_ms: Some(30_000),
            },
            &display,
        ))
        .expect("open the text file");
    eprintln!("opened: {opened:?}");
    assert!(
        opened.window.title.contains("deskenv-notes"),
        "{:?}",
        opened.window
    );
    assert_eq!(opened.window.class, "Mousepad");
    assert!(opened.window.active, "{:?}", opened.window);
    assert_eq!(xdotool_active(&desktop), opened.window.id);

    // A window name that never shows up times out, naming what it waited for.
    let err = rt
        .block_on(exec::open(
            &OpenRequest {
                path: file.to_string_lossy().into_owned(),
                window: Some("never-a-title-xyz".into()),
                timeout_ms: Some(500),
            },
            &display,
        ))
        .unwrap_err();
    assert!(matches!(err, exec::ExecError::OpenTimeout { .. }), "{err}");
    assert!(err.to_string().contains("never-a-title-xyz"), "{err}");
}

#[test]
#[ignore = "needs a desktop (Xvfb, AT-SPI): scripts/test.sh runs it with --include-ignored"]
fn recording_makes_a_playable_mp4() {
    let desktop = start_desktop();
    let display = desktop.display.clone();
    desktop.spawn(&["gtk3-widget-factory"]);
    desktop.wait_window("gtk3-widget-factory", Duration::from_secs(30));

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rec.mp4");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let recorder = Recorder::new();
    let req = RecordingStart {
        path: Some(path.to_string_lossy().into_owned()),
        fps: Some(10),
    };
    let size = Windows::connect(&display).unwrap().screen_size();
    let started = rt.block_on(recorder.start(&req, &display, size)).unwrap();
    assert!(started.recording);
    assert_eq!(started.path, path.to_string_lossy());
    let err = rt
        .block_on(recorder.start(&req, &display, size))
        .unwrap_err();
    assert!(
        matches!(err, RecordingError::AlreadyRecording { .. }),
        "{err}"
    );

    for (x, y) in [(100, 100), (800, 500), (1500, 900)] {
        desktop.run(&["xdotool", "mousemove", &x.to_string(), &y.to_string()]);
        std::thread::sleep(Duration::from_millis(600));
    }
    let done = rt.block_on(recorder.stop()).unwrap();
    eprintln!("recording: {done:?}");
    assert!(!done.recording);
    // ffmpeg stopped on `q`, not after the 15 s fallback to SIGINT.
    assert!(done.duration_ms.unwrap() < 10_000.0, "{done:?}");
    let bytes = done.bytes.unwrap();
    assert!(bytes > 0);
    assert_eq!(bytes, std::fs::metadata(&path).unwrap().len());
    assert!(matches!(
        rt.block_on(recorder.stop()),
        Err(RecordingError::NotRecording)
    ));

    let probe = desktop.run(&[
        "ffprobe",
        "-v",
        "error",
        "-select_streams",
        "v:0",
        "-show_entries",
        "stream=codec_name,width,height:format=duration",
        "-of",
        "default=noprint_wrappers=1",
        path.to_str().unwrap(),
    ]);
    eprintln!("ffprobe: {probe}");
    assert!(probe.contains("codec_name=h264"), "{probe}");
    assert!(
        probe.contains("width=1920") && probe.contains("height=1080"),
        "{probe}"
    );
    let duration: f64 = probe
        .lines()
        .find_map(|l| l.strip_prefix("duration="))
        .unwrap()
        .parse()
        .unwrap();
    assert!(duration > 1.0, "duration {duration} s");
}
