//! `POST /v1/idle` against a real desktop: an idle one is idle at once, a
//! CPU-bound command or a burst of short processes keeps it busy.
//!
//! The agent runs with `--idle-scope display`: the test machine runs other
//! builds under the same uid, which `uid` scope would rightly count as busy.
//! Each test starts its own desktop; they are ignored unless run with
//! `--include-ignored`.

mod common;

use common::{Agent, Desktop};
use protocol::api::IdleReport;
use serde_json::{json, Value};
use std::sync::Mutex;
use std::time::{Duration, Instant};

fn start() -> (Desktop, Agent) {
    static START: Mutex<()> = Mutex::new(());
    let desktop = {
        let _one = START.lock().unwrap_or_else(|e| e.into_inner());
        Desktop::start()
    };
    let agent = Agent::start(&desktop, &["--idle-scope", "display"]);
    (desktop, agent)
}

fn http() -> reqwest::blocking::Client {
    reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap()
}

fn post(agent: &Agent, path: &str, body: Value) -> Value {
    let r = http().post(agent.url(path)).json(&body).send().unwrap();
    let status = r.status();
    let v: Value = r.json().unwrap();
    assert!(status.is_success(), "{path} {body}: {status} {v}");
    v
}

fn idle(agent: &Agent, body: Value) -> IdleReport {
    serde_json::from_value(post(agent, "/v1/idle", body)).unwrap()
}

/// Starts `sh -c script` through the agent, detached, as the desktop's user.
fn launch(agent: &Agent, script: &str) {
    post(
        agent,
        "/v1/launch",
        json!({"command": ["sh", "-c", script]}),
    );
}

const BUSY_3S: &str = "exec python3 -c 'import time
t = time.time()
while time.time() - t < 3: pass'";

#[test]
#[ignore = "needs a desktop (Xvfb, AT-SPI): scripts/test.sh runs it with --include-ignored"]
fn an_idle_desktop_is_idle_within_a_window() {
    let (_d, agent) = start();
    // The first call may still see the agent's own start-up children go.
    idle(&agent, json!({"max_ms": 5000}));
    let r = idle(&agent, json!({}));
    assert!(r.idle, "{r:?}");
    assert!(r.waited_ms < 1500.0, "an idle desktop took {r:?}");
    assert!(r.cpu_percent < 5.0 && r.spawned == 0, "{r:?}");
    assert_eq!(r.screen_quiet, Some(true));
    let r = idle(
        &agent,
        json!({"screen": false, "window_ms": 200, "max_ms": 200}),
    );
    assert!(r.idle && r.screen_quiet.is_none(), "{r:?}");
}

#[test]
#[ignore = "needs a desktop (Xvfb, AT-SPI): scripts/test.sh runs it with --include-ignored"]
fn a_running_command_keeps_the_desktop_busy_until_it_ends() {
    let (_d, agent) = start();
    let t = Instant::now();
    launch(&agent, BUSY_3S);
    let r = idle(&agent, json!({}));
    let since_launch = t.elapsed();
    assert!(r.idle, "{r:?}");
    assert!(
        r.waited_ms >= 2500.0 && since_launch >= Duration::from_millis(2900),
        "idle after {since_launch:?} while a 3 s command ran: {r:?}"
    );

    launch(&agent, BUSY_3S);
    let r = idle(&agent, json!({"max_ms": 1000}));
    assert!(!r.idle, "{r:?}");
    assert!(r.waited_ms >= 1000.0 && r.waited_ms < 3000.0, "{r:?}");
    assert!(r.cpu_percent >= 5.0, "{r:?}");
    assert!(
        r.busy
            .iter()
            .any(|b| b.name == "python3" && b.cpu_percent > 5.0),
        "python3 is not named busy: {r:?}"
    );
}

#[test]
#[ignore = "needs a desktop (Xvfb, AT-SPI): scripts/test.sh runs it with --include-ignored"]
fn a_burst_of_short_processes_is_not_idle() {
    let (_d, agent) = start();
    // Each /bin/true lives well under a poll; together they last ~1.5 s.
    launch(
        &agent,
        "end=$(($(date +%s%N) + 1500000000)); while [ $(date +%s%N) -lt $end ]; do /bin/true; done",
    );
    let t = Instant::now();
    let r = idle(&agent, json!({"max_ms": 1000, "screen": false}));
    assert!(!r.idle, "a burst of processes looked idle: {r:?}");
    assert!(r.spawned > 0 || r.cpu_percent >= 5.0, "{r:?}");
    let r = idle(&agent, json!({"screen": false}));
    assert!(r.idle, "{r:?}");
    assert!(t.elapsed() >= Duration::from_millis(1400), "{r:?}");
}

#[test]
#[ignore = "needs a desktop (Xvfb, AT-SPI): scripts/test.sh runs it with --include-ignored"]
fn bad_requests_name_the_field() {
    let (_d, agent) = start();
    for (body, field) in [
        (json!({"window_ms": 0}), "window_ms"),
        (json!({"window_ms": 1000, "max_ms": 500}), "max_ms"),
        (json!({"cpu_percent": -1}), "cpu_percent"),
        (json!({"cpu": 5}), "cpu"),
    ] {
        let r = http()
            .post(agent.url("/v1/idle"))
            .json(&body)
            .send()
            .unwrap();
        assert_eq!(r.status().as_u16(), 400, "{body}");
        let v: Value = r.json().unwrap();
        let msg = v["message"].as_str().unwrap_or_default();
        assert!(v["code"].is_string() && msg.contains(field), "{body}: {v}");
    }
}

#[test]
#[ignore = "needs a desktop (Xvfb, AT-SPI): scripts/test.sh runs it with --include-ignored"]
fn a_settle_with_idle_waits_for_the_command_too() {
    let (_d, agent) = start();
    let t = Instant::now();
    launch(&agent, BUSY_3S);
    let settle = |body: Value| {
        post(
            &agent,
            "/v1/actions",
            json!({"actions": [], "settle": body}),
        )
    };
    let r = settle(json!({"idle": true, "max_ms": 1000}));
    assert_eq!(r["settle"]["outcome"], "timeout", "{r}");
    assert_eq!(r["settle"]["idle"], false, "{r}");
    let r = settle(json!({"idle": true, "max_ms": 20000}));
    assert_eq!(r["settle"]["outcome"], "quiet", "{r}");
    assert_eq!(r["settle"]["idle"], true, "{r}");
    assert!(t.elapsed() >= Duration::from_millis(2900), "{r}");
    // Without idle the quiet screen alone is enough, and no idle is reported.
    launch(&agent, BUSY_3S);
    let r = settle(json!({"max_ms": 2000}));
    assert_eq!(r["settle"]["outcome"], "quiet", "{r}");
    assert!(r["settle"].get("idle").is_none(), "{r}");
}
