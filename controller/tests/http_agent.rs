//! The `http` agent against a fake agent server: an axum server on
//! 127.0.0.1 with `/reset` and `/predict` that answers from a scripted
//! queue and records every request.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use controller::policy::http::{HttpPolicy, HttpPolicyConfig};
use controller::policy::{
    ActionSpace, Decision, EpisodeContext, Observation, ObservationType, Policy, PolicyError, Usage,
};
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const PNG: &[u8] = b"\x89PNG\r\n\x1a\nnot-really-a-png";
const PNG_B64: &str = "iVBORw0KGgpub3QtcmVhbGx5LWEtcG5n";

#[derive(Clone)]
enum Answer {
    Json(Value),
    Raw(u16, &'static str),
    Hang(Duration),
}

#[derive(Default)]
struct Fake {
    script: Mutex<VecDeque<Answer>>,
    /// (route, body) of every request.
    requests: Mutex<Vec<(String, Value)>>,
}

async fn handle(State(fake): State<Arc<Fake>>, Path(route): Path<String>, body: Bytes) -> Response {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    fake.requests.lock().unwrap().push((route.clone(), body));
    if route == "reset"
        && fake
            .script
            .lock()
            .unwrap()
            .front()
            .is_none_or(|a| !matches!(a, Answer::Raw(404, _)))
    {
        return StatusCode::NO_CONTENT.into_response();
    }
    let next = fake.script.lock().unwrap().pop_front();
    match next {
        None => (StatusCode::INTERNAL_SERVER_ERROR, "script exhausted").into_response(),
        Some(Answer::Json(v)) => axum::Json(v).into_response(),
        Some(Answer::Raw(status, body)) => {
            (StatusCode::from_u16(status).unwrap(), body).into_response()
        }
        Some(Answer::Hang(d)) => {
            tokio::time::sleep(d).await;
            axum::Json(json!({"action": "DONE"})).into_response()
        }
    }
}

async fn fake_agent(script: Vec<Answer>) -> (Arc<Fake>, String) {
    let fake = Arc::new(Fake {
        script: Mutex::new(script.into()),
        ..Fake::default()
    });
    let app = Router::new()
        .route("/{route}", post(handle))
        .with_state(fake.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    (fake, format!("http://{addr}"))
}

fn agent(url: &str, observation: ObservationType, space: ActionSpace) -> HttpPolicy {
    let mut a = HttpPolicy::new(HttpPolicyConfig {
        url: url.into(),
        timeout: Duration::from_secs(2),
    })
    .unwrap();
    a.reset(&EpisodeContext {
        task_id: "task-1".into(),
        instruction: "Save the file.".into(),
        observation,
        action_space: space,
        max_steps: 15,
        solution: None,
    })
    .unwrap();
    a
}

fn obs(step: usize) -> Observation {
    Observation {
        step,
        screen: (1920, 1080),
        screenshot_png: Some(PNG.to_vec()),
        a11y_linear: Some("tag\tname\nlabel\tHome".into()),
    }
}

fn call_message(r: Result<controller::policy::Reply, PolicyError>) -> String {
    match r {
        Err(PolicyError::Call { message, .. }) => message,
        Err(e) => panic!("expected a Call error, got: {e}"),
        Ok(r) => panic!("expected a Call error, got {:?}", r.decisions),
    }
}

#[tokio::test]
async fn reset_then_predictions_become_decisions() {
    let (fake, url) = fake_agent(vec![
        Answer::Json(
            json!({"action": "pyautogui.click(10, 20)", "usage": {"prompt_tokens": 100, "completion_tokens": 7}}),
        ),
        Answer::Json(json!({"response": "I save.\n```python\npyautogui.hotkey('ctrl', 's')\n```"})),
        Answer::Json(json!({"action": ["WAIT", "DONE"]})),
    ])
    .await;
    let mut a = agent(&url, ObservationType::Screenshot, ActionSpace::Pyautogui);
    let r = a.next(&obs(0)).await.unwrap();
    assert_eq!(
        r.decisions,
        vec![Decision::Code("pyautogui.click(10, 20)".into())]
    );
    assert_eq!(
        r.usage,
        Some(Usage {
            prompt_tokens: 100,
            completion_tokens: 7
        })
    );
    let r = a.next(&obs(1)).await.unwrap();
    assert!(matches!(&r.decisions[..], [Decision::Code(c)] if c.contains("hotkey")));
    assert!(r.raw.starts_with("I save."));
    let r = a.next(&obs(2)).await.unwrap();
    assert_eq!(r.decisions, vec![Decision::Wait, Decision::Done]);

    let reqs = fake.requests.lock().unwrap().clone();
    let routes: Vec<&str> = reqs.iter().map(|(r, _)| r.as_str()).collect();
    assert_eq!(routes, ["reset", "predict", "predict", "predict"]);
    assert_eq!(reqs[0].1["task_id"], "task-1");
    assert_eq!(reqs[0].1["instruction"], "Save the file.");
    assert_eq!(reqs[0].1["action_space"], "pyautogui");
    assert_eq!(reqs[1].1["screenshot"], PNG_B64);
    assert_eq!(reqs[1].1["screen"]["width"], 1920);
    assert_eq!(reqs[3].1["step"], 2);
}

#[tokio::test]
async fn computer_13_objects_and_a11y_only_observations() {
    let (fake, url) = fake_agent(vec![Answer::Json(
        json!({"action": {"action_type": "CLICK", "x": 5, "y": 6}}),
    )])
    .await;
    let mut a = agent(&url, ObservationType::A11yTree, ActionSpace::Computer13);
    let r = a.next(&obs(0)).await.unwrap();
    assert!(matches!(r.decisions[..], [Decision::Action(_)]));
    let body = fake.requests.lock().unwrap()[1].1.clone();
    assert_eq!(body["screenshot"], Value::Null);
    assert!(body["accessibility_tree"]
        .as_str()
        .unwrap()
        .contains("Home"));
}

#[tokio::test]
async fn bad_answers_are_call_errors_that_name_the_problem() {
    let (_fake, url) = fake_agent(vec![
        Answer::Raw(500, "boom"),
        Answer::Raw(200, "not json"),
        Answer::Json(json!({"thought": "hmm"})),
        Answer::Json(json!({"action": "import os; os.system('rm -rf /')"})),
        Answer::Json(json!({"action": {"action_type": "CLICK", "x": 1, "y": 1}})),
        Answer::Hang(Duration::from_secs(4)),
    ])
    .await;
    let mut a = agent(&url, ObservationType::Screenshot, ActionSpace::Pyautogui);
    let m = call_message(a.next(&obs(0)).await);
    assert!(m.contains("HTTP 500") && m.contains("boom"), "{m}");
    let m = call_message(a.next(&obs(1)).await);
    assert!(m.contains("not JSON"), "{m}");
    let m = call_message(a.next(&obs(2)).await);
    assert!(m.contains("expected {\"action\""), "{m}");
    let m = call_message(a.next(&obs(3)).await);
    assert!(m.contains("pyautogui code"), "{m}");
    let m = call_message(a.next(&obs(4)).await);
    assert!(m.contains("action space is pyautogui"), "{m}");
    let m = call_message(a.next(&obs(5)).await);
    assert!(m.contains("no answer within 2s"), "{m}");
}

#[tokio::test]
async fn client_errors_and_a_refused_reset_are_fatal() {
    let (_fake, url) = fake_agent(vec![Answer::Raw(404, "no such route")]).await;
    let mut a = agent(&url, ObservationType::Screenshot, ActionSpace::Pyautogui);
    match a.next(&obs(0)).await {
        Err(PolicyError::Fatal { message, .. }) => {
            assert!(message.contains("refused the episode"), "{message}")
        }
        other => panic!("expected Fatal, got {:?}", other.map(|r| r.decisions)),
    }
    let (_fake, url) = fake_agent(vec![Answer::Raw(422, "bad observation")]).await;
    let mut a = agent(&url, ObservationType::Screenshot, ActionSpace::Pyautogui);
    match a.next(&obs(0)).await {
        Err(PolicyError::Fatal { message, .. }) => {
            assert!(message.contains("HTTP 422"), "{message}")
        }
        other => panic!("expected Fatal, got {:?}", other.map(|r| r.decisions)),
    }
}

#[tokio::test]
async fn an_unreachable_server_is_a_call_error_and_a_bad_url_is_refused() {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    drop(l);
    let mut a = agent(&url, ObservationType::Screenshot, ActionSpace::Pyautogui);
    // The reset call fails first: that is fatal (the episode cannot begin).
    assert!(matches!(
        a.next(&obs(0)).await,
        Err(PolicyError::Fatal { .. })
    ));
    // Later steps: a transport failure is one failed step.
    let m = call_message(a.next(&obs(3)).await);
    assert!(m.contains(&url), "{m}");
    let e = HttpPolicy::new(HttpPolicyConfig {
        url: "localhost:9000".into(),
        timeout: Duration::from_secs(1),
    })
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("--agent-url `localhost:9000`"), "{e}");
}
