//! Input that lands: keys typed right after a click must reach the clicked
//! window even when it has only just mapped and the window manager has not
//! focused it yet. Each test starts its own desktop; they are ignored
//! unless run with `--include-ignored`.

mod common;

use common::nodes;

use common::{geometry, Agent, Desktop};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

fn client() -> reqwest::blocking::Client {
    reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap()
}

fn editor_text(agent: &Agent) -> Option<String> {
    window_text(agent, "")
}

/// The text of the editor in the mousepad window whose title holds `title`
/// (any window for "").
fn window_text(agent: &Agent, title: &str) -> Option<String> {
    let r = client()
        .get(agent.url("/v1/a11y?format=json&app=mousepad"))
        .send()
        .ok()?;
    let v: Value = r.json().ok()?;
    let has = |n: &Value, s: &str| {
        n["states"]
            .as_array()
            .is_some_and(|a| a.iter().any(|v| v == s))
    };
    let frame = nodes(&v["tree"])
        .into_iter()
        .find(|n| n["role"] == "frame" && n["name"].as_str().is_some_and(|s| s.contains(title)))?;
    nodes(&frame)
        .into_iter()
        .find(|n| has(n, "editable") && has(n, "multi_line"))
        .map(|n| n["text"].as_str().unwrap_or("").to_string())
}

/// `pyautogui.click(x, y); pyautogui.typewrite(text)` in one request: the
/// reply (status 200 checked) and how long it took.
fn click_and_type(agent: &Agent, (x, y): (i32, i32), text: &str) -> (Value, Duration) {
    let t = Instant::now();
    let r = client()
        .post(agent.url("/v1/pyautogui"))
        .json(&json!({
            "code": format!("pyautogui.click({x}, {y}); pyautogui.typewrite({text:?})")
        }))
        .send()
        .unwrap();
    let took = t.elapsed();
    assert_eq!(r.status().as_u16(), 200);
    (r.json().unwrap(), took)
}

/// Continues a stopped process when dropped, so a failing test does not
/// leave the window manager frozen.
struct Stopped(i32);

impl Stopped {
    fn stop(pid: i32) -> Stopped {
        // SAFETY: kill(2) with a pid and a signal number has no memory effects.
        assert_eq!(
            unsafe { libc::kill(pid, libc::SIGSTOP) },
            0,
            "SIGSTOP {pid}"
        );
        Stopped(pid)
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        // SAFETY: as above.
        unsafe { libc::kill(self.0, libc::SIGCONT) };
    }
}

/// The bug: under a slow VM, `pyautogui.click(80, 169);
/// pyautogui.typewrite('B3\n')` lost the keys, sent before the clicked
/// application had the focus.
#[test]
#[ignore = "needs a desktop (Xvfb, AT-SPI): scripts/test.sh runs it with --include-ignored"]
fn keys_typed_right_after_a_click_into_a_just_mapped_window_are_not_lost() {
    let desktop = Desktop::start();
    let agent = Agent::start(&desktop, &[]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("focus-race.txt");
    std::fs::write(&file, "").unwrap();
    desktop.spawn(&["mousepad", file.to_str().unwrap()]);
    // As soon as the window maps: no wait for the focus or the a11y tree.
    let id = desktop.wait_window("focus-race", Duration::from_secs(30));
    let (x, y, w, h) = geometry(&desktop, id);
    let text = "B3 typed at once\nsecond line";
    let (body, took) = click_and_type(&agent, (x + w / 2, y + h / 2), text);
    eprintln!("click + typewrite right after the map: {took:?}");
    assert_eq!(body["mode"], "native", "{body}");
    // Wait for all of it to be drawn; on failure say what did land.
    let got = common::poll_or(Duration::from_secs(15), || {
        editor_text(&agent).filter(|t| t == text)
    })
    .or_else(|| editor_text(&agent))
    .unwrap_or_default();
    assert_eq!(
        got, text,
        "keys were lost after the click ({took:?}): {body}"
    );
    assert!(body.get("warnings").is_none(), "{body}");
}

/// On a focused window the waits cost next to nothing: a batch of clicks and
/// keys on an idle desktop stays fast.
#[test]
#[ignore = "needs a desktop (Xvfb, AT-SPI): scripts/test.sh runs it with --include-ignored"]
fn the_focus_wait_is_cheap_when_nothing_moves() {
    let desktop = Desktop::start();
    let agent = Agent::start(&desktop, &[]);
    let actions: Vec<Value> = (0..20)
        .flat_map(|_| {
            [
                json!({"action_type": "CLICK", "parameters": {"x": 1900, "y": 1060}}),
                json!({"action_type": "PRESS", "parameters": {"key": "shift"}}),
            ]
        })
        .collect();
    let r = client()
        .post(agent.url("/v1/actions"))
        .json(&json!({ "actions": actions }))
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let body: Value = r.json().unwrap();
    let ms = body["elapsed_ms"].as_f64().unwrap();
    // 40 actions; each waited a full poll or more would be 400 ms and up.
    assert!(ms < 400.0, "40 actions took {ms} ms: {body}");
}

/// The same race made certain: the window manager is stopped when the click
/// lands, so the focus stays on another window until it runs again 150 ms
/// later and focuses the clicked one. Keys sent at once (as before the
/// focus wait) go to the other window; this fails on that.
#[test]
#[ignore = "needs a desktop (Xvfb, AT-SPI): scripts/test.sh runs it with --include-ignored"]
fn keys_after_a_click_wait_for_a_slow_window_manager_to_move_the_focus() {
    let desktop = Desktop::start();
    let agent = Agent::start(&desktop, &[]);
    let dir = tempfile::tempdir().unwrap();
    let mut ids = vec![];
    for (name, x) in [("focus-a", 0), ("focus-b", 960)] {
        let file = dir.path().join(format!("{name}.txt"));
        std::fs::write(&file, "").unwrap();
        desktop.spawn(&["mousepad", "--opening-mode=window", file.to_str().unwrap()]);
        let id = desktop.wait_window(name, Duration::from_secs(30));
        let id_s = id.to_string();
        desktop.run(&["xdotool", "windowsize", "--sync", &id_s, "900", "800"]);
        desktop.run(&[
            "xdotool",
            "windowmove",
            "--sync",
            &id_s,
            &x.to_string(),
            "40",
        ]);
        ids.push(id);
    }
    let (a, b) = (ids[0], ids[1]);
    // Both editors are in the tree before anything is typed.
    common::poll(
        "both editors in the a11y tree",
        Duration::from_secs(30),
        || {
            (window_text(&agent, "focus-a").is_some() && window_text(&agent, "focus-b").is_some())
                .then_some(())
        },
    );
    // The focus on A, without raising it.
    desktop.run(&["xdotool", "windowfocus", "--sync", &a.to_string()]);
    let focus = desktop.run(&["xdotool", "getwindowfocus"]);
    assert_eq!(
        focus.trim(),
        a.to_string(),
        "the focus did not move to window A"
    );
    let (x, y, w, h) = geometry(&desktop, b);
    let text = "typed into b";
    let stopped = Stopped::stop(desktop.wm_pid());
    let resume = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(150));
        drop(stopped);
    });
    let (body, took) = click_and_type(&agent, (x + w / 2, y + h / 2), text);
    resume.join().unwrap();
    eprintln!("click + typewrite with the window manager stopped for 150 ms: {took:?}: {body}");
    let got_b = common::poll_or(Duration::from_secs(15), || {
        window_text(&agent, "focus-b").filter(|t| t == text)
    })
    .or_else(|| window_text(&agent, "focus-b"))
    .unwrap_or_default();
    let got_a = window_text(&agent, "focus-a").unwrap_or_default();
    assert_eq!(
        (got_a.as_str(), got_b.as_str()),
        ("", text),
        "(window A, window B): the keys went to the window that had the focus before the click ({took:?}): {body}"
    );
}

/// Upper-case letters and shifted symbols land in an application that reads
/// its keys late. The bug: enigo typed every character off a key's first
/// level through one of the ~19 spare keycodes, rebinding them all when they
/// ran out; an application busy while the keys arrived read them with the
/// later binding and typed other characters (capitals lost in a formula
/// typed into LibreOffice). Here the editor is stopped for the whole
/// typewrite, so it reads every key after the last rebinding: with spare
/// keycodes the text comes out wrong every time; as the keyboard's own keys
/// with Shift it is right.
#[test]
#[ignore = "needs a desktop (Xvfb, AT-SPI): scripts/test.sh runs it with --include-ignored"]
fn shifted_characters_typed_into_a_busy_application_arrive_intact() {
    let desktop = Desktop::start();
    let agent = Agent::start(&desktop, &[]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("shifted.txt");
    std::fs::write(&file, "").unwrap();
    let pid = desktop.spawn(&["mousepad", file.to_str().unwrap()]);
    let id = desktop.wait_window("shifted", Duration::from_secs(30));
    common::poll(
        "the editor in the a11y tree",
        Duration::from_secs(30),
        || editor_text(&agent),
    );
    let (x, y, w, h) = geometry(&desktop, id);
    // Focus the editor first, then stop it and type.
    let (body, _) = click_and_type(&agent, (x + w / 2, y + h / 2), "");
    assert!(body.get("warnings").is_none(), "{body}");
    // 26 capitals and 21 shifted symbols: more than the spare keycodes.
    let text = "ABCDEFGHIJKLMNOPQRSTUVWXYZ ~!@#$%^&*()_+{}|:\"<>? Revenue (EUR) = Units * Price;";
    let stopped = Stopped::stop(pid as i32);
    let r = client()
        .post(agent.url("/v1/pyautogui"))
        .json(&json!({ "code": format!("pyautogui.typewrite({text:?})") }))
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let body: Value = r.json().unwrap();
    drop(stopped);
    let got = common::poll_or(Duration::from_secs(15), || {
        editor_text(&agent).filter(|t| t == text)
    })
    .or_else(|| editor_text(&agent))
    .unwrap_or_default();
    assert_eq!(
        got, text,
        "the characters the stopped editor read later were not the ones typed: {body}"
    );
}
