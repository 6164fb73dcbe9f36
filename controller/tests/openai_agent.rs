//! The OpenAI-compatible agent against a fake model: an axum server on
//! 127.0.0.1 that answers from a scripted queue and records every request.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use controller::policy::openai::{OpenAiConfig, OpenAiPolicy};
use controller::policy::{
    ActionSpace, Decision, EpisodeContext, Observation, ObservationType, Policy, PolicyError, Usage,
};
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Synthetic "PNG" bytes and their base64.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\nnot-really-a-png";
const PNG_B64: &str = "iVBORw0KGgpub3QtcmVhbGx5LWEtcG5n";

/// One scripted answer of the fake model.
#[derive(Clone)]
enum Answer {
    /// 200 with a completion whose content is this text.
    Text(&'static str),
    /// 200 with this JSON body.
    Json(Value),
    /// Any status with this raw body and extra headers.
    Raw(u16, &'static str, Vec<(&'static str, &'static str)>),
    /// Sleeps this long, then answers DONE.
    Hang(Duration),
}

#[derive(Default)]
struct Fake {
    script: Mutex<VecDeque<Answer>>,
    /// Every request's JSON body and Authorization header.
    requests: Mutex<Vec<(Value, Option<String>)>>,
}

impl Fake {
    fn count(&self) -> usize {
        self.requests.lock().unwrap().len()
    }
    fn body(&self, i: usize) -> Value {
        self.requests.lock().unwrap()[i].0.clone()
    }
    fn last_body(&self) -> Value {
        self.requests.lock().unwrap().last().unwrap().0.clone()
    }
}

fn completion(text: &str) -> Value {
    json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "test-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1234, "completion_tokens": 56, "total_tokens": 1290}
    })
}

async fn handle(State(fake): State<Arc<Fake>>, headers: HeaderMap, body: Bytes) -> Response {
    let auth = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    fake.requests.lock().unwrap().push((body, auth));
    let next = fake.script.lock().unwrap().pop_front();
    match next {
        None => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "the fake model's script is exhausted",
        )
            .into_response(),
        Some(Answer::Text(t)) => axum::Json(completion(t)).into_response(),
        Some(Answer::Json(v)) => axum::Json(v).into_response(),
        Some(Answer::Raw(status, body, headers)) => {
            let mut r = (StatusCode::from_u16(status).unwrap(), body).into_response();
            for (k, v) in headers {
                r.headers_mut().insert(k, v.parse().unwrap());
            }
            r
        }
        Some(Answer::Hang(d)) => {
            tokio::time::sleep(d).await;
            axum::Json(completion("DONE")).into_response()
        }
    }
}

/// Starts the fake model; returns it and its `/v1` base URL.
async fn fake_model(script: Vec<Answer>) -> (Arc<Fake>, String) {
    let fake = Arc::new(Fake {
        script: Mutex::new(script.into()),
        ..Fake::default()
    });
    let app = Router::new()
        .route("/v1/chat/completions", post(handle))
        .with_state(fake.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    (fake, format!("http://{addr}/v1"))
}

fn config(base_url: &str) -> OpenAiConfig {
    OpenAiConfig {
        request_timeout: Duration::from_secs(5),
        backoff_base: Duration::from_millis(5),
        max_backoff: Duration::from_millis(200),
        ..OpenAiConfig::new(base_url, "test-model")
    }
}

fn ctx(observation: ObservationType, action_space: ActionSpace) -> EpisodeContext {
    EpisodeContext {
        task_id: "task-1".into(),
        instruction: "Make the desktop background blue.".into(),
        observation,
        action_space,
        max_steps: 15,
        solution: None,
    }
}

fn obs(step: usize) -> Observation {
    Observation {
        step,
        screen: (1920, 1080),
        screenshot_png: Some(PNG.to_vec()),
        a11y_linear: Some("tag\tname\ttext\nlabel\tHome\t\npush-button\tOK\t".into()),
    }
}

async fn agent(base_url: &str, observation: ObservationType, space: ActionSpace) -> OpenAiPolicy {
    agent_with(config(base_url), observation, space)
}

fn agent_with(
    config: OpenAiConfig,
    observation: ObservationType,
    space: ActionSpace,
) -> OpenAiPolicy {
    let mut a = OpenAiPolicy::new(config).unwrap();
    a.reset(&ctx(observation, space)).unwrap();
    a
}

fn call_message(r: Result<controller::policy::Reply, PolicyError>) -> String {
    match r {
        Err(PolicyError::Call { message, .. }) => message,
        Err(e) => panic!("expected a Call error, got: {e}"),
        Ok(r) => panic!("expected a Call error, got {:?}", r.decisions),
    }
}

/// Every image part of a message's content.
fn images(message: &Value) -> Vec<String> {
    message["content"]
        .as_array()
        .map(|parts| {
            parts
                .iter()
                .filter(|p| p["type"] == "image_url")
                .map(|p| p["image_url"]["url"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// All the text of a message's content.
fn text(message: &Value) -> String {
    match &message["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        other => panic!("content is neither text nor parts: {other}"),
    }
}

#[tokio::test]
async fn a_python_block_becomes_code_and_usage_is_counted() {
    let answer =
        "The settings are open; I click Background.\n```python\npyautogui.click(100, 200)\n```";
    let (fake, url) = fake_model(vec![Answer::Text(answer)]).await;
    let mut a = agent(&url, ObservationType::Screenshot, ActionSpace::Pyautogui).await;
    let r = a.next(&obs(0)).await.unwrap();
    assert_eq!(
        r.decisions,
        vec![Decision::Code("pyautogui.click(100, 200)".into())]
    );
    assert_eq!(r.raw, answer);
    assert_eq!(
        r.usage,
        Some(Usage {
            prompt_tokens: 1234,
            completion_tokens: 56
        })
    );
    assert!(r.latency_ms > 0.0);

    assert_eq!(fake.count(), 1);
    let body = fake.body(0);
    assert_eq!(body["model"], "test-model");
    assert_eq!(body["temperature"], 0.5);
    assert!((body["top_p"].as_f64().unwrap() - 0.9).abs() < 1e-6);
    assert_eq!(body["max_tokens"], 1500);
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[0]["role"], "system");
    let system = text(&messages[0]);
    for needle in [
        "Make the desktop background blue.",
        "1920x1080",
        "'password'",
        "```python",
        "```WAIT```",
        "```DONE```",
        "```FAIL```",
    ] {
        assert!(
            system.contains(needle),
            "the system prompt lacks {needle:?}:\n{system}"
        );
    }
    assert_eq!(messages[1]["role"], "user");
    assert!(text(&messages[1]).contains("What's the next step"));
    assert_eq!(
        images(&messages[1]),
        vec![format!("data:image/png;base64,{PNG_B64}")]
    );
}

#[tokio::test]
async fn done_alone_ends_the_episode() {
    let (_fake, url) = fake_model(vec![Answer::Text("DONE"), Answer::Text("```\nFAIL\n```")]).await;
    let mut a = agent(&url, ObservationType::Screenshot, ActionSpace::Pyautogui).await;
    assert_eq!(
        a.next(&obs(0)).await.unwrap().decisions,
        vec![Decision::Done]
    );
    assert_eq!(
        a.next(&obs(1)).await.unwrap().decisions,
        vec![Decision::Fail]
    );
}

#[tokio::test]
async fn computer_13_answers_become_actions() {
    let (fake, url) = fake_model(vec![Answer::Text(
        "```json\n{\"action_type\": \"CLICK\", \"x\": 5, \"y\": 6}\n```\n```json\n\"WAIT\"\n```",
    )])
    .await;
    let mut a = agent(&url, ObservationType::Screenshot, ActionSpace::Computer13).await;
    let r = a.next(&obs(0)).await.unwrap();
    assert_eq!(r.decisions.len(), 2);
    assert!(matches!(
        r.decisions[0],
        Decision::Action(protocol::Action::Click { .. })
    ));
    assert_eq!(r.decisions[1], Decision::Wait);
    let system = text(&fake.body(0)["messages"][0]);
    assert!(
        system.contains("```json") && system.contains("HOTKEY"),
        "{system}"
    );
}

#[tokio::test]
async fn rate_limits_are_retried() {
    let (fake, url) = fake_model(vec![
        Answer::Raw(
            429,
            r#"{"error": {"message": "slow down"}}"#,
            vec![("retry-after", "0")],
        ),
        Answer::Raw(429, "slow down", vec![]),
        Answer::Text("DONE"),
    ])
    .await;
    let mut a = agent(&url, ObservationType::Screenshot, ActionSpace::Pyautogui).await;
    let r = a.next(&obs(0)).await.unwrap();
    assert_eq!(r.decisions, vec![Decision::Done]);
    assert_eq!(fake.count(), 3);
    // The retried request is the same request.
    assert_eq!(fake.body(0), fake.body(2));
}

#[tokio::test]
async fn retry_after_is_honoured_up_to_the_cap() {
    let (fake, url) = fake_model(vec![
        Answer::Raw(429, "", vec![("retry-after", "3600")]),
        Answer::Text("DONE"),
    ])
    .await;
    let cfg = OpenAiConfig {
        backoff_base: Duration::from_millis(1),
        max_backoff: Duration::from_millis(150),
        ..config(&url)
    };
    let mut a = agent_with(cfg, ObservationType::Screenshot, ActionSpace::Pyautogui);
    let t = Instant::now();
    assert_eq!(
        a.next(&obs(0)).await.unwrap().decisions,
        vec![Decision::Done]
    );
    let took = t.elapsed();
    assert!(took >= Duration::from_millis(150), "waited only {took:?}");
    assert!(took < Duration::from_secs(3), "waited {took:?}");
    assert_eq!(fake.count(), 2);
}

#[tokio::test]
async fn server_errors_twice_then_success() {
    let (fake, url) = fake_model(vec![
        Answer::Raw(500, "boom", vec![]),
        Answer::Raw(503, "overloaded", vec![]),
        Answer::Text("```python\npyautogui.press('enter')\n```"),
    ])
    .await;
    let mut a = agent(&url, ObservationType::Screenshot, ActionSpace::Pyautogui).await;
    let r = a.next(&obs(0)).await.unwrap();
    assert_eq!(
        r.decisions,
        vec![Decision::Code("pyautogui.press('enter')".into())]
    );
    assert_eq!(fake.count(), 3);
}

#[tokio::test]
async fn server_errors_exhaust_the_retries() {
    let (fake, url) = fake_model(vec![Answer::Raw(502, "bad gateway", vec![]); 10]).await;
    let cfg = OpenAiConfig {
        max_retries: 2,
        ..config(&url)
    };
    let mut a = agent_with(cfg, ObservationType::Screenshot, ActionSpace::Pyautogui);
    let m = call_message(a.next(&obs(0)).await);
    assert!(
        m.contains("gave up after 3 attempt(s)") && m.contains("502") && m.contains("bad gateway"),
        "{m}"
    );
    assert_eq!(fake.count(), 3);
}

#[tokio::test]
async fn a_hanging_model_times_out_and_is_retried() {
    let hang = Answer::Hang(Duration::from_secs(3));
    // One hang, then an answer: the retry gets it.
    let (fake, url) = fake_model(vec![hang.clone(), Answer::Text("WAIT")]).await;
    let cfg = OpenAiConfig {
        request_timeout: Duration::from_millis(300),
        ..config(&url)
    };
    let mut a = agent_with(
        cfg.clone(),
        ObservationType::Screenshot,
        ActionSpace::Pyautogui,
    );
    assert_eq!(
        a.next(&obs(0)).await.unwrap().decisions,
        vec![Decision::Wait]
    );
    assert_eq!(fake.count(), 2);

    // Every attempt hangs: a Call error after max_retries + 1 attempts.
    let (fake, url) = fake_model(vec![hang; 5]).await;
    let cfg = OpenAiConfig {
        max_retries: 2,
        base_url: url,
        ..cfg
    };
    let mut a = agent_with(cfg, ObservationType::Screenshot, ActionSpace::Pyautogui);
    let t = Instant::now();
    let m = call_message(a.next(&obs(0)).await);
    let took = t.elapsed();
    assert!(m.contains("did not answer within 0.3s"), "{m}");
    assert!(m.contains("gave up after 3 attempt(s)"), "{m}");
    assert_eq!(fake.count(), 3);
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(3),
        "took {took:?}"
    );
}

#[tokio::test]
async fn an_unreachable_endpoint_is_a_call_error() {
    // Bind then drop a listener to get a port nobody listens on.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let cfg = OpenAiConfig {
        max_retries: 1,
        ..config(&format!("http://127.0.0.1:{port}/v1"))
    };
    let mut a = agent_with(cfg, ObservationType::Screenshot, ActionSpace::Pyautogui);
    let m = call_message(a.next(&obs(0)).await);
    assert!(
        m.contains("cannot connect") && m.contains("gave up after 2"),
        "{m}"
    );
}

#[tokio::test]
async fn malformed_completions_are_call_errors_not_panics() {
    let (fake, url) = fake_model(vec![
        Answer::Raw(200, "this is not json", vec![("content-type", "application/json")]),
        Answer::Json(json!({"id": "x", "object": "chat.completion"})),
        Answer::Json(json!({"choices": []})),
        Answer::Json(json!({"choices": [{"message": {"role": "assistant", "content": 42}}]})),
        Answer::Json(json!({"choices": [{"message": {"role": "assistant", "content": null}, "finish_reason": "length"}]})),
        Answer::Text("   "),
        Answer::Text("DONE"),
    ])
    .await;
    let mut a = agent(&url, ObservationType::Screenshot, ActionSpace::Pyautogui).await;
    let expected = [
        "not JSON",
        "no `choices`",
        "`choices` is empty",
        "not a string",
        "finish_reason: length",
        "no action in the response",
    ];
    for (i, needle) in expected.iter().enumerate() {
        let m = call_message(a.next(&obs(i)).await);
        assert!(m.contains(needle), "answer {i}: expected {needle:?} in {m}");
    }
    // None of them was retried, and the agent still works.
    assert_eq!(fake.count(), expected.len());
    assert_eq!(
        a.next(&obs(9)).await.unwrap().decisions,
        vec![Decision::Done]
    );
}

#[tokio::test]
async fn an_invalid_computer_13_action_is_a_call_error_with_usage() {
    let (_fake, url) = fake_model(vec![Answer::Text(
        "```json\n{\"action_type\": \"JUMP\"}\n```",
    )])
    .await;
    let mut a = agent(&url, ObservationType::Screenshot, ActionSpace::Computer13).await;
    let m = call_message(a.next(&obs(0)).await);
    assert!(m.contains("JUMP") && m.contains("computer_13"), "{m}");
    assert!(m.contains("1234 prompt + 56 completion tokens"), "{m}");
}

#[tokio::test]
async fn unauthorized_is_fatal_and_the_key_is_sent() {
    let var = "DESKENV_TEST_OPENAI_AGENT_KEY";
    std::env::set_var(var, "sk-test-123");
    let (fake, url) = fake_model(vec![Answer::Raw(
        401,
        r#"{"error": {"message": "Incorrect API key provided"}}"#,
        vec![],
    )])
    .await;
    let cfg = OpenAiConfig {
        api_key_env: Some(var.into()),
        ..config(&url)
    };
    let mut a = agent_with(cfg, ObservationType::Screenshot, ActionSpace::Pyautogui);
    match a.next(&obs(0)).await {
        Err(PolicyError::Fatal { message, .. }) => {
            assert!(
                message.contains("401") && message.contains("Incorrect API key"),
                "{message}"
            );
            assert!(message.contains(var), "{message}");
        }
        other => panic!("expected Fatal, got {:?}", other.map(|r| r.decisions)),
    }
    assert_eq!(fake.count(), 1, "a 401 is not retried");
    assert_eq!(
        fake.requests.lock().unwrap()[0].1.as_deref(),
        Some("Bearer sk-test-123")
    );

    // No api_key_env: no Authorization header.
    let (fake, url) = fake_model(vec![Answer::Text("DONE")]).await;
    let mut a = agent(&url, ObservationType::Screenshot, ActionSpace::Pyautogui).await;
    a.next(&obs(0)).await.unwrap();
    assert_eq!(fake.requests.lock().unwrap()[0].1, None);
}

#[tokio::test]
async fn other_client_errors_are_fatal() {
    let (fake, url) =
        fake_model(vec![Answer::Raw(400, "bad request: unknown model", vec![])]).await;
    let mut a = agent(&url, ObservationType::Screenshot, ActionSpace::Pyautogui).await;
    let e = a.next(&obs(0)).await.unwrap_err();
    assert!(matches!(e, PolicyError::Fatal { .. }), "{e}");
    assert!(
        e.to_string().contains("400") && e.to_string().contains("unknown model"),
        "{e}"
    );
    assert_eq!(fake.count(), 1);
}

#[tokio::test]
async fn the_request_carries_what_the_observation_type_asks_for() {
    // A tree far over the cap: 500 rows of 30 characters; the cap is
    // 50 tokens, about 200 characters.
    let tree: String = (0..500)
        .map(|i| format!("push-button\tbutton-{i:04}\tx\t\t\n"))
        .collect();
    for kind in [
        ObservationType::Screenshot,
        ObservationType::A11yTree,
        ObservationType::ScreenshotA11yTree,
    ] {
        let (fake, url) = fake_model(vec![Answer::Text("DONE")]).await;
        let cfg = OpenAiConfig {
            a11y_token_cap: 50,
            ..config(&url)
        };
        let mut a = agent_with(cfg, kind, ActionSpace::Pyautogui);
        let o = Observation {
            a11y_linear: Some(tree.clone()),
            ..obs(0)
        };
        a.next(&o).await.unwrap();
        let body = fake.last_body();
        let user = body["messages"].as_array().unwrap().last().unwrap().clone();
        assert_eq!(user["role"], "user");
        let imgs = images(&user);
        let t = text(&user);
        if kind.wants_screenshot() {
            assert_eq!(
                imgs,
                vec![format!("data:image/png;base64,{PNG_B64}")],
                "{kind:?}"
            );
        } else {
            assert!(imgs.is_empty(), "{kind:?}");
        }
        if kind.wants_a11y() {
            assert!(t.contains("button-0000"), "{kind:?}: {t}");
            assert!(t.contains("[...]"), "{kind:?}: {t}");
            assert!(
                !t.contains("button-0499"),
                "{kind:?}: the tree was not capped"
            );
            assert!(t.len() < 200 + 300, "{kind:?}: {} characters", t.len());
            assert!(t.contains("accessibility tree"), "{kind:?}: {t}");
        } else {
            assert!(!t.contains("button-0000"), "{kind:?}: {t}");
        }
        let system = text(&body["messages"][0]);
        assert_eq!(
            system.contains("accessibility tree"),
            kind.wants_a11y(),
            "{kind:?}: {system}"
        );
    }
}

#[tokio::test]
async fn history_keeps_at_most_history_turns_text_only() {
    let answers = [
        "```python\nstep_0()\n```",
        "```python\nstep_1()\n```",
        "```python\nstep_2()\n```",
        "```python\nstep_3()\n```",
        "DONE",
    ];
    let (fake, url) = fake_model(answers.iter().map(|a| Answer::Text(a)).collect()).await;
    let cfg = OpenAiConfig {
        history_turns: 2,
        ..config(&url)
    };
    let mut a = agent_with(
        cfg,
        ObservationType::ScreenshotA11yTree,
        ActionSpace::Pyautogui,
    );
    for step in 0..4 {
        a.next(&obs(step)).await.unwrap();
    }
    assert_eq!(a.history_len(), 2);
    let counts: Vec<usize> = (0..4)
        .map(|i| fake.body(i)["messages"].as_array().unwrap().len())
        .collect();
    // system + up to 2 × (user, assistant) + the current user message.
    assert_eq!(counts, vec![2, 4, 6, 6]);
    let last = fake.body(3);
    let messages = last["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "user", "assistant", "user"]
    );
    // The two turns before step 3: steps 1 and 2, their answers verbatim.
    assert_eq!(messages[2]["content"], answers[1]);
    assert_eq!(messages[4]["content"], answers[2]);
    // Past observations are text only: no image, no tree.
    for past in [&messages[1], &messages[3]] {
        assert!(images(past).is_empty(), "{past}");
        assert!(!text(past).contains("push-button"), "{past}");
    }
    assert!(text(&messages[1]).contains("step 2"), "{}", messages[1]);
    assert_eq!(images(&messages[5]).len(), 1);
    assert!(text(&messages[5]).contains("push-button"));

    // A new episode starts without history.
    a.reset(&ctx(
        ObservationType::ScreenshotA11yTree,
        ActionSpace::Pyautogui,
    ))
    .unwrap();
    assert_eq!(a.history_len(), 0);
    a.next(&obs(0)).await.unwrap();
    assert_eq!(fake.body(4)["messages"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn no_history_when_history_turns_is_zero() {
    let (fake, url) = fake_model(vec![Answer::Text("WAIT"), Answer::Text("DONE")]).await;
    let cfg = OpenAiConfig {
        history_turns: 0,
        ..config(&url)
    };
    let mut a = agent_with(cfg, ObservationType::Screenshot, ActionSpace::Pyautogui);
    a.next(&obs(0)).await.unwrap();
    a.next(&obs(1)).await.unwrap();
    assert_eq!(fake.body(1)["messages"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn next_before_reset_and_bad_configs_are_fatal() {
    let mut a = OpenAiPolicy::new(OpenAiConfig::new("http://127.0.0.1:9/v1", "m")).unwrap();
    let e = a.next(&obs(0)).await.unwrap_err();
    assert!(
        matches!(e, PolicyError::Fatal { .. }) && e.to_string().contains("reset"),
        "{e}"
    );
    for (cfg, needle) in [
        (OpenAiConfig::new("127.0.0.1:8000/v1", "m"), "base_url"),
        (OpenAiConfig::new("ftp://127.0.0.1/v1", "m"), "base_url"),
        (OpenAiConfig::new("http://", "m"), "base_url"),
        (OpenAiConfig::new("http://127.0.0.1:8000/v1", ""), "model"),
    ] {
        let e = OpenAiPolicy::new(cfg).unwrap_err();
        assert!(
            matches!(e, PolicyError::Fatal { .. }) && e.to_string().contains(needle),
            "{e}"
        );
    }
}

#[tokio::test]
async fn an_https_endpoint_speaks_tls() {
    // The TLS handshake with this plain-HTTP server fails: retried, then a
    // Call error that says what happened, and the server saw no request
    // it could read as one.
    let (fake, url) = fake_model(vec![]).await;
    let https = url.replace("http://", "https://");
    let cfg = OpenAiConfig {
        max_retries: 1,
        ..config(&https)
    };
    let mut a = agent_with(cfg, ObservationType::Screenshot, ActionSpace::Pyautogui);
    let m = call_message(a.next(&obs(0)).await);
    assert!(m.contains(&https), "{m}");
    assert_eq!(fake.count(), 0);
}
