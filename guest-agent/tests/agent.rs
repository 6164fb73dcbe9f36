//! The guest agent over HTTP against a real desktop: Xvfb, openbox, the
//! AT-SPI bus and real GTK applications. Each test starts its own desktop
//! and agent process, so input from one never lands in another.

mod common;

use common::nodes;

use common::{geometry, poll, poll_or, Agent, Desktop};
use reqwest::blocking::Client;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

fn client() -> Client {
    Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap()
}

fn get(agent: &Agent, path: &str) -> (u16, Value) {
    let r = client().get(agent.url(path)).send().unwrap();
    let status = r.status().as_u16();
    (status, r.json().unwrap_or(Value::Null))
}

fn post(agent: &Agent, path: &str, body: Value) -> (u16, Value) {
    let r = client().post(agent.url(path)).json(&body).send().unwrap();
    let status = r.status().as_u16();
    (status, r.json().unwrap_or(Value::Null))
}

fn act(agent: &Agent, actions: Value) -> Value {
    let (status, body) = post(agent, "/v1/actions", json!({ "actions": actions }));
    assert_eq!(status, 200, "actions failed: {body}");
    body
}

fn tree(agent: &Agent, app: &str) -> Value {
    let (status, body) = get(agent, &format!("/v1/a11y?format=json&app={app}"));
    assert_eq!(status, 200, "a11y failed: {body}");
    body["tree"].clone()
}

fn has_state(n: &Value, s: &str) -> bool {
    n["states"]
        .as_array()
        .is_some_and(|a| a.iter().any(|v| v == s))
}

fn screenshot_rgb(agent: &Agent) -> (u32, u32, Vec<u8>) {
    let r = client().get(agent.url("/v1/screenshot")).send().unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "image/png");
    let bytes = r.bytes().unwrap();
    let dec = png::Decoder::new(std::io::Cursor::new(bytes.to_vec()));
    let mut reader = dec.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    (info.width, info.height, buf)
}

fn pixel(img: &(u32, u32, Vec<u8>), x: i32, y: i32) -> [u8; 3] {
    let i = ((y as u32 * img.0 + x as u32) * 3) as usize;
    [img.2[i], img.2[i + 1], img.2[i + 2]]
}

/// A plain Tk window of one colour at a known place (no accessibility).
fn colour_window(desktop: &Desktop, title: &str, colour: &str, geometry: &str) -> u32 {
    let script = format!(
        "import tkinter as t; r=t.Tk(); r.title('{title}'); r.configure(bg='{colour}'); r.geometry('{geometry}'); r.mainloop()"
    );
    desktop.spawn(&["/usr/bin/python3", "-c", &script]);
    desktop.wait_window(title, Duration::from_secs(20))
}

#[test]
#[ignore = "needs a desktop (Xvfb, AT-SPI): scripts/test.sh runs it with --include-ignored"]
fn screenshot_shows_a_known_window_at_its_place() {
    let desktop = Desktop::start();
    let agent = Agent::start(&desktop, &[]);
    let id = colour_window(&desktop, "deskenv-magenta", "#ff00ff", "400x300+300+200");
    let (x, y, w, h) = geometry(&desktop, id);
    let img = poll("the window to be drawn", Duration::from_secs(10), || {
        let img = screenshot_rgb(&agent);
        (pixel(&img, x + w / 2, y + h / 2) == [255, 0, 255]).then_some(img)
    });
    assert_eq!((img.0, img.1), (1920, 1080));
    // Inside the window's corners: magenta; just outside: not.
    assert_eq!(pixel(&img, x + 2, y + 2), [255, 0, 255]);
    assert_eq!(pixel(&img, x + w - 3, y + h - 3), [255, 0, 255]);
    assert_ne!(pixel(&img, x + w + 3, y + h / 2), [255, 0, 255]);
    // The headers state the frame size and the timings.
    let r = client()
        .get(agent.url("/v1/screenshot?format=jpeg&quality=70"))
        .send()
        .unwrap();
    assert_eq!(r.headers()["content-type"], "image/jpeg");
    assert_eq!(r.headers()["x-frame-width"], "1920");
    assert_eq!(r.headers()["x-frame-height"], "1080");
    assert!(
        r.headers()["x-capture-ms"]
            .to_str()
            .unwrap()
            .parse::<f64>()
            .unwrap()
            >= 0.0
    );
    assert_eq!(&r.bytes().unwrap()[..2], &[0xff, 0xd8]);
    // The cursor is drawn at the pointer: move it over the magenta window.
    act(
        &agent,
        json!([{"action_type": "MOVE_TO", "parameters": {"x": x + 50, "y": y + 50}}]),
    );
    let img = screenshot_rgb(&agent);
    let p = pixel(&img, x + 51, y + 52);
    assert_ne!(p, [255, 0, 255], "no cursor drawn at the pointer");
    let (_, health) = get(&agent, "/v1/health");
    assert_eq!(health["screen"], json!({"width": 1920, "height": 1080}));
    assert_eq!(health["display"], desktop.display);
}

#[test]
#[ignore = "needs a desktop (Xvfb, AT-SPI): scripts/test.sh runs it with --include-ignored"]
fn a11y_tree_matches_the_window_and_clicks_change_state() {
    let desktop = Desktop::start();
    let agent = Agent::start(&desktop, &[]);
    desktop.spawn(&["gtk3-widget-factory"]);
    let id = desktop.wait_window("gtk3-widget-factory", Duration::from_secs(30));
    let (wx, wy, ww, wh) = geometry(&desktop, id);
    let frame = poll(
        "the widget factory's frame in the tree",
        Duration::from_secs(30),
        || {
            nodes(&tree(&agent, "gtk3-widget-factory"))
                .into_iter()
                .find(|n| n["role"] == "frame" && n["extents"].is_object())
        },
    );
    let e = &frame["extents"];
    let near = |a: &Value, b: i32| (a.as_i64().unwrap() as i32 - b).abs() <= 2;
    assert!(
        near(&e["x"], wx) && near(&e["y"], wy) && near(&e["width"], ww) && near(&e["height"], wh),
        "frame extents {e} vs window geometry {:?}",
        (wx, wy, ww, wh)
    );
    // A check box that is on screen: click its centre and see "checked" flip.
    let all = nodes(&tree(&agent, "gtk3-widget-factory"));
    let check = all
        .iter()
        .find(|n| {
            n["role"] == "check box"
                && has_state(n, "showing")
                && has_state(n, "enabled")
                && n["extents"]["width"].as_i64().unwrap_or(0) > 0
        })
        .expect("a visible check box")
        .clone();
    let name = check["name"].as_str().unwrap().to_string();
    let was = has_state(&check, "checked");
    let e = &check["extents"];
    let (cx, cy) = (
        e["x"].as_i64().unwrap() + e["width"].as_i64().unwrap() / 2,
        e["y"].as_i64().unwrap() + e["height"].as_i64().unwrap() / 2,
    );
    act(
        &agent,
        json!([{"action_type": "CLICK", "parameters": {"x": cx, "y": cy}}]),
    );
    poll("the check box to toggle", Duration::from_secs(10), || {
        nodes(&tree(&agent, "gtk3-widget-factory"))
            .into_iter()
            .find(|n| {
                n["role"] == "check box"
                    && n["name"] == name.as_str()
                    && n["extents"] == check["extents"]
            })
            .filter(|n| has_state(n, "checked") != was)
    });
    // The XML and linear renderings of the same tree.
    let (_, xml) = get(
        &agent,
        "/v1/a11y?format=osworld-xml&app=gtk3-widget-factory",
    );
    let text = xml["text"].as_str().unwrap();
    assert!(
        text.starts_with("<desktop-frame "),
        "{}",
        &text[..100.min(text.len())]
    );
    assert!(text.contains("xmlns:st=\"https://accessibility.ubuntu.example.org/ns/state\""));
    assert!(text.contains("<check-box name="));
    let (_, linear) = get(&agent, "/v1/a11y?format=linear&app=gtk3-widget-factory");
    let table = linear["text"].as_str().unwrap();
    assert!(table
        .starts_with("tag\tname\ttext\tclass\tdescription\tposition (top-left x&y)\tsize (w&h)\n"));
    assert!(table.lines().any(|l| l.starts_with("check-box\t")));
    // OSWorld's route serves the same XML.
    let (status, at) = get(&agent, "/accessibility");
    assert_eq!(status, 200);
    assert!(at["AT"].as_str().unwrap().contains("gtk3-widget-factory"));
}

/// The text of the first editable text node of mousepad.
fn editor_text(agent: &Agent) -> Option<String> {
    nodes(&tree(agent, "mousepad"))
        .into_iter()
        .find(|n| has_state(n, "editable") && has_state(n, "multi_line"))
        .map(|n| n["text"].as_str().unwrap_or("").to_string())
}

/// Opens a new file in mousepad, waits for its text view, and clicks into it.
/// Returns the window's geometry.
fn open_editor(
    desktop: &Desktop,
    agent: &Agent,
    dir: &std::path::Path,
    name: &str,
    contents: &str,
) -> (u32, (i32, i32, i32, i32)) {
    let file = dir.join(name);
    std::fs::write(&file, contents).unwrap();
    desktop.spawn(&["mousepad", file.to_str().unwrap()]);
    let id = desktop.wait_window(name, Duration::from_secs(30));
    let (x, y, w, h) = geometry(desktop, id);
    poll("mousepad's text view", Duration::from_secs(30), || {
        editor_text(agent)
    });
    act(
        agent,
        json!([{"action_type": "CLICK", "parameters": {"x": x + w / 2, "y": y + h / 2}}]),
    );
    (id, (x, y, w, h))
}

#[test]
#[ignore = "needs a desktop (Xvfb, AT-SPI): scripts/test.sh runs it with --include-ignored"]
fn typing_unicode_hotkeys_and_key_down_up_in_an_editor() {
    let desktop = Desktop::start();
    let agent = Agent::start(&desktop, &[]);
    let dir = tempfile::tempdir().unwrap();
    open_editor(&desktop, &agent, dir.path(), "typing.txt", "");
    let text = "héllo wörld ✓ 数据";
    act(
        &agent,
        json!([{"action_type": "TYPING", "parameters": {"text": text}}]),
    );
    let got = poll("the typed text", Duration::from_secs(10), || {
        editor_text(&agent).filter(|t| t == text)
    });
    assert_eq!(got, text);
    // Select all and replace.
    act(
        &agent,
        json!([
            {"action_type": "HOTKEY", "parameters": {"keys": ["ctrl", "a"]}},
            {"action_type": "TYPING", "parameters": {"text": "replaced"}}
        ]),
    );
    poll("the replaced text", Duration::from_secs(10), || {
        editor_text(&agent).filter(|t| t == "replaced")
    });
    // KEY_DOWN/KEY_UP: shift held for one key only.
    act(
        &agent,
        json!([
            {"action_type": "HOTKEY", "parameters": {"keys": ["ctrl", "a"]}},
            {"action_type": "PRESS", "parameters": {"key": "backspace"}},
            {"action_type": "KEY_DOWN", "parameters": {"key": "shift"}},
            {"action_type": "PRESS", "parameters": {"key": "a"}},
            {"action_type": "KEY_UP", "parameters": {"key": "shift"}},
            {"action_type": "PRESS", "parameters": {"key": "b"}},
            {"action_type": "PRESS", "parameters": {"key": "enter"}},
        ]),
    );
    poll("\"Ab\\n\"", Duration::from_secs(10), || {
        editor_text(&agent).filter(|t| t == "Ab\n")
    });
    // pyautogui code through the native parser, with a newline in a string.
    let (status, body) = post(
        &agent,
        "/v1/pyautogui",
        json!({"code": "import pyautogui\npyautogui.write('x\\ny', interval=0.01)\npyautogui.press('end')", "settle": {"quiet_ms": 200, "max_ms": 3000}}),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["mode"], "native");
    assert_eq!(body["executed"], 2);
    assert!(body["settle"]["outcome"] == "quiet" || body["settle"]["outcome"] == "timeout");
    let mut last = None;
    let got = poll_or(Duration::from_secs(10), || {
        last = editor_text(&agent);
        last.clone().filter(|t| t == "Ab\nx\ny")
    });
    assert!(
        got.is_some(),
        "editor text {last:?}, expected \"Ab\\nx\\ny\""
    );
}

#[test]
#[ignore = "needs a desktop (Xvfb, AT-SPI): scripts/test.sh runs it with --include-ignored"]
fn scroll_and_drag_have_visible_effects() {
    let desktop = Desktop::start();
    let agent = Agent::start(&desktop, &[]);
    let dir = tempfile::tempdir().unwrap();
    let lines: String = (1..=400).map(|i| format!("line {i}\n")).collect();
    let (id, (x, y, w, h)) = open_editor(&desktop, &agent, dir.path(), "long.txt", &lines);
    let (cx, cy) = (x + w / 2, y + h / 2);
    // SCROLL down over the text: the visible rows change.
    act(
        &agent,
        json!([{"action_type": "MOVE_TO", "parameters": {"x": cx, "y": cy}}]),
    );
    std::thread::sleep(Duration::from_millis(300));
    let before = screenshot_rgb(&agent);
    let body = act(
        &agent,
        json!([{"action_type": "SCROLL", "parameters": {"dy": -10}}]),
    );
    assert_eq!(body["executed"], 1);
    let region_differs = |a: &(u32, u32, Vec<u8>), b: &(u32, u32, Vec<u8>)| {
        (y + 60..y + h - 20).step_by(4).any(|yy| {
            (x + 10..x + w - 30)
                .step_by(4)
                .any(|xx| pixel(a, xx, yy) != pixel(b, xx, yy))
        })
    };
    poll("the text to scroll", Duration::from_secs(10), || {
        region_differs(&before, &screenshot_rgb(&agent)).then_some(())
    });
    // DRAG_TO on the title bar moves the window.
    let (status, _) = post(
        &agent,
        "/v1/actions",
        json!({"actions": [
            {"action_type": "MOVE_TO", "parameters": {"x": x + w / 3, "y": y - 10}},
            {"action_type": "DRAG_TO", "parameters": {"x": x + w / 3 + 200, "y": y + 140}}
        ], "settle": {"quiet_ms": 200}}),
    );
    assert_eq!(status, 200);
    let moved = poll("the window to move", Duration::from_secs(10), || {
        let g = geometry(&desktop, id);
        ((g.0 - x - 200).abs() <= 20 && (g.1 - y - 150).abs() <= 20).then_some(g)
    });
    assert_ne!((moved.0, moved.1), (x, y));
}

#[test]
#[ignore = "needs a desktop (Xvfb, AT-SPI): scripts/test.sh runs it with --include-ignored"]
fn bad_input_gets_clear_errors_and_the_server_keeps_serving() {
    let desktop = Desktop::start();
    let agent = Agent::start(&desktop, &[]);
    let (status, body) = post(
        &agent,
        "/v1/actions",
        json!({"actions": [{"action_type": "JUMP"}]}),
    );
    assert_eq!(status, 400);
    assert_eq!(body["code"], "bad_request");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("unknown action_type \"JUMP\""),
        "{body}"
    );
    let (status, body) = post(
        &agent,
        "/v1/actions",
        json!({"actions": [{"action_type": "CLICK", "parameters": {"x": 2500, "y": 10}}]}),
    );
    assert_eq!(status, 400);
    assert_eq!(body["code"], "off_screen");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("(2500, 10) is off the 1920x1080 screen"),
        "{body}"
    );
    let (status, body) = post(
        &agent,
        "/v1/actions",
        json!({"actions": [{"action_type": "PRESS", "parameters": {"key": "hyperspace"}}]}),
    );
    assert_eq!((status, body["code"].as_str()), (400, Some("unknown_key")));
    let (status, body) = post(
        &agent,
        "/v1/pyautogui",
        json!({"code": "pyautogui.locateOnScreen('x.png')"}),
    );
    assert_eq!(status, 400);
    assert_eq!(body["code"], "unsupported_code");
    assert!(
        body["message"].as_str().unwrap().contains("locateOnScreen"),
        "{body}"
    );
    let (status, body) = post(
        &agent,
        "/v1/pyautogui",
        json!({"code": "pyautogui.click(100, 'x'"}),
    );
    assert_eq!(
        (status, body["code"].as_str()),
        (400, Some("bad_code")),
        "{body}"
    );
    let (status, body) = get(&agent, "/v1/files?path=/nonexistent/deskenv/file.txt");
    assert_eq!(status, 404);
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("/nonexistent/deskenv/file.txt"),
        "{body}"
    );
    let (status, body) = get(&agent, "/v1/a11y?format=yaml");
    assert_eq!(
        (status, body["code"].as_str()),
        (400, Some("bad_query")),
        "{body}"
    );
    let r = client()
        .post(agent.url("/v1/actions"))
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .unwrap();
    assert_eq!(r.status(), 400);
    assert_eq!(r.json::<Value>().unwrap()["code"], "bad_json");
    let (status, body) = get(&agent, "/v1/nothing-here");
    assert_eq!((status, body["code"].as_str()), (404, Some("no_route")));
    // A body over the limit is refused, not buffered.
    let big = "x".repeat(5 * 1024 * 1024);
    let r = client()
        .post(agent.url("/v1/pyautogui"))
        .json(&json!({"code": big}))
        .send()
        .unwrap();
    assert_eq!(r.status(), 413);
    // An application that stops answering AT-SPI: the walk returns in time,
    // truncated, naming it; the server keeps serving.
    let pid = desktop.spawn(&["gtk3-widget-factory"]);
    desktop.wait_window("gtk3-widget-factory", Duration::from_secs(30));
    poll(
        "the widget factory in the tree",
        Duration::from_secs(30),
        || {
            (tree(&agent, "gtk3-widget-factory")["children"]
                .as_array()
                .map_or(0, Vec::len)
                > 0)
            .then_some(())
        },
    );
    desktop.run(&["kill", "-STOP", &pid.to_string()]);
    let t = Instant::now();
    let (status, body) = get(&agent, "/v1/a11y?format=json&timeout_ms=3000");
    let took = t.elapsed();
    desktop.run(&["kill", "-CONT", &pid.to_string()]);
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["truncated"], true, "{body}");
    assert!(took < Duration::from_secs(8), "the walk took {took:?}");
    assert!(!body["reason"].as_str().unwrap_or("").is_empty());
    // The table an agent reads says so too, naming the application.
    desktop.run(&["kill", "-STOP", &pid.to_string()]);
    let (status, body) = get(&agent, "/v1/a11y?format=linear&timeout_ms=3000");
    desktop.run(&["kill", "-CONT", &pid.to_string()]);
    assert_eq!(status, 200, "{body}");
    let table = body["text"].as_str().unwrap_or("");
    let mark = protocol::a11y::linear_mark(table).unwrap_or_else(|| panic!("no mark: {body}"));
    assert!(mark.contains(body["reason"].as_str().unwrap()), "{mark}");
    let (status, _) = get(&agent, "/v1/health");
    assert_eq!(status, 200);
    let (status, body) = get(
        &agent,
        "/v1/a11y?format=json&app=gtk3-widget-factory&timeout_ms=10000",
    );
    assert_eq!(status, 200);
    assert_eq!(body["truncated"], false, "{body}");
}

#[test]
#[ignore = "needs a desktop (Xvfb, AT-SPI): scripts/test.sh runs it with --include-ignored"]
fn exec_files_windows_watch_and_auth() {
    let desktop = Desktop::start();
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, "s3cret\n").unwrap();
    let agent = Agent::start(&desktop, &["--token-file", token_file.to_str().unwrap()]);
    // Without the token: 401 on /v1, OSWorld's routes stay open.
    let (status, body) = get(&agent, "/v1/health");
    assert_eq!((status, body["code"].as_str()), (401, Some("unauthorized")));
    assert_eq!(
        client()
            .get(agent.url("/platform"))
            .send()
            .unwrap()
            .status(),
        200
    );
    let c = client();
    let auth = |rb: reqwest::blocking::RequestBuilder| rb.bearer_auth("s3cret").send().unwrap();
    let r = auth(c.get(agent.url("/v1/health")));
    assert_eq!(r.status(), 200);
    // exec: output, exit code, timeout.
    let r: Value = auth(
        c.post(agent.url("/v1/exec"))
            .json(&json!({"command": ["sh", "-c", "echo hi; exit 4"]})),
    )
    .json()
    .unwrap();
    assert_eq!(
        (r["stdout"].as_str(), r["exit_code"].as_i64()),
        (Some("hi\n"), Some(4))
    );
    let r: Value = auth(
        c.post(agent.url("/v1/exec"))
            .json(&json!({"command": "sleep 30", "timeout_ms": 300})),
    )
    .json()
    .unwrap();
    assert_eq!(r["timed_out"], true, "{r}");
    // files: PUT creates folders, GET streams back, list names it.
    let path = dir.path().join("a/b/data.csv");
    let p = path.to_str().unwrap();
    let r = auth(
        c.put(agent.url(&format!("/v1/files?path={p}")))
            .body("x,y\n1,2\n"),
    );
    assert_eq!(r.status(), 200);
    let r = auth(c.get(agent.url(&format!("/v1/files?path={p}"))));
    assert_eq!(r.text().unwrap(), "x,y\n1,2\n");
    let r: Value = auth(c.get(agent.url(&format!(
        "/v1/files/list?path={}",
        dir.path().join("a/b").display()
    ))))
    .json()
    .unwrap();
    assert_eq!(r["entries"][0]["name"], "data.csv");
    // watch: a read of the file is reported.
    let r = auth(
        c.post(agent.url("/v1/watch"))
            .json(&json!({"paths": [dir.path().join("a").to_str().unwrap()]})),
    );
    assert_eq!(r.status(), 200);
    std::fs::read_to_string(&path).unwrap();
    let report = poll("the read to be reported", Duration::from_secs(5), || {
        let r: Value = auth(c.get(agent.url("/v1/watch"))).json().unwrap();
        r["files"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["path"] == p)
            .then_some(r)
    });
    assert_eq!(report["active"], true);
    // windows: launch, wait, activate, close.
    let r = auth(
        c.post(agent.url("/v1/launch"))
            .json(&json!({"command": ["gtk3-widget-factory"]})),
    );
    assert_eq!(r.status(), 200);
    let r = auth(
        c.post(agent.url("/v1/windows/activate"))
            .json(&json!({"title": "Widget-Factory", "timeout_ms": 30000})),
    );
    assert_eq!(r.status(), 200);
    let win: Value = r.json().unwrap();
    let r: Value = auth(c.get(agent.url("/v1/windows"))).json().unwrap();
    let listed = r["windows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["id"] == win["id"])
        .cloned()
        .unwrap();
    assert_eq!(listed["active"], true, "{listed}");
    assert_eq!(
        listed["class"].as_str().map(str::to_lowercase).as_deref(),
        Some("gtk3-widget-factory")
    );
    let r = auth(
        c.post(agent.url("/v1/windows/close"))
            .json(&json!({"class": "gtk3-widget-factory"})),
    );
    assert_eq!(r.status(), 200);
    poll("the window to close", Duration::from_secs(10), || {
        let r: Value = auth(c.get(agent.url("/v1/windows"))).json().unwrap();
        (!r["windows"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["id"] == win["id"]))
        .then_some(())
    });
    let r = auth(
        c.post(agent.url("/v1/windows/activate"))
            .json(&json!({"title": "no such window"})),
    );
    assert_eq!(r.status(), 404);
    // observe: screenshot and tree in one round trip.
    let r: Value = auth(
        c.post(agent.url("/v1/observe"))
            .json(&json!({"a11y": {"format": "linear"}})),
    )
    .json()
    .unwrap();
    assert_eq!(r["screen"], json!({"width": 1920, "height": 1080}));
    assert!(r["screenshot"].as_str().unwrap().len() > 1000);
    assert!(r["a11y"]["text"].as_str().unwrap().starts_with("tag\t"));
    assert!(r["timings"]["total_ms"].as_f64().unwrap() > 0.0);
}

#[test]
#[ignore = "needs a desktop (Xvfb, AT-SPI): scripts/test.sh runs it with --include-ignored"]
fn python_fallback_runs_code_outside_the_subset() {
    let desktop = Desktop::start();
    // scripts/install-deps.sh puts pyautogui (from PyPI) in this venv.
    let python = common::repo_root().join("target/pyautogui-venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run scripts/install-deps.sh",
        python.display()
    );
    let agent = Agent::start(
        &desktop,
        &["--python-fallback", "--python", python.to_str().unwrap()],
    );
    let dir = tempfile::tempdir().unwrap();
    open_editor(&desktop, &agent, dir.path(), "fallback.txt", "");
    // A loop is outside the native subset: python3 runs it, and says so.
    let (status, body) = post(
        &agent,
        "/v1/pyautogui",
        json!({"code": "for ch in 'abc':\n    pyautogui.press(ch)"}),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["mode"], "python", "{body}");
    assert_eq!(body["python"]["exit_code"], 0, "{body}");
    poll("the text typed by python", Duration::from_secs(10), || {
        editor_text(&agent).filter(|t| t == "abc")
    });
    // Code inside the subset still runs natively.
    let (_, body) = post(
        &agent,
        "/v1/pyautogui",
        json!({"code": "pyautogui.press('d')"}),
    );
    assert_eq!(body["mode"], "native");
}
