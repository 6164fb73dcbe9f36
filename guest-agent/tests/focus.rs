//! Input that lands: keys typed right after a click must reach the clicked
//! window even when it has only just mapped and the window manager has not
//! focused it yet. Each test starts its own desktop; without
//! `DESKENV_TEST_DESKTOP=1` they are skipped.

mod common;

use common::{geometry, Agent, Desktop};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

fn client() -> reqwest::blocking::Client {
    reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap()
}

fn nodes(tree: &Value) -> Vec<Value> {
    let mut out = vec![];
    let mut stack = vec![tree.clone()];
    while let Some(n) = stack.pop() {
        if let Some(children) = n["children"].as_array() {
            stack.extend(children.iter().rev().cloned());
        }
        out.push(n);
    }
    out
}

fn editor_text(agent: &Agent) -> Option<String> {
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
    nodes(&v["tree"])
        .into_iter()
        .find(|n| has(n, "editable") && has(n, "multi_line"))
        .map(|n| n["text"].as_str().unwrap_or("").to_string())
}

/// The bug: under a slow VM, `pyautogui.click(80, 169);
/// pyautogui.typewrite('B3\n')` lost the keys, sent before the clicked
/// application had the focus.
#[test]
fn keys_typed_right_after_a_click_into_a_just_mapped_window_are_not_lost() {
    let Some(desktop) = Desktop::start() else {
        return;
    };
    let agent = Agent::start(&desktop, &[]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("focus-race.txt");
    std::fs::write(&file, "").unwrap();
    desktop.spawn(&["mousepad", file.to_str().unwrap()]);
    // As soon as the window maps: no wait for the focus or the a11y tree.
    let id = desktop.wait_window("focus-race", Duration::from_secs(30));
    let (x, y, w, h) = geometry(&desktop, id);
    let text = "B3 typed at once\nsecond line";
    let t = Instant::now();
    let r = client()
        .post(agent.url("/v1/pyautogui"))
        .json(&json!({"code": format!(
            "pyautogui.click({}, {}); pyautogui.typewrite({text:?})",
            x + w / 2,
            y + h / 2
        )}))
        .send()
        .unwrap();
    let took = t.elapsed();
    eprintln!("click + typewrite right after the map: {took:?}");
    assert_eq!(r.status().as_u16(), 200);
    let body: Value = r.json().unwrap();
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
fn the_focus_wait_is_cheap_when_nothing_moves() {
    let Some(desktop) = Desktop::start() else {
        return;
    };
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
