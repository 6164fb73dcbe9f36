//! Episodes end to end on real VMs (ignored unless run with
//! `--include-ignored`, after the image is built): the example suite with the scripted agent (the oracle) all
//! succeeds, with the noop agent none does; a run killed midway resumes
//! without rerunning finished tasks or losing their results.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn suite() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tasks/examples")
}

fn deskenv() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_deskenv"))
}

fn results(out: &Path) -> Vec<(PathBuf, serde_json::Value)> {
    let mut found = Vec::new();
    let mut stack = vec![out.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == "result.json") {
                let v = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
                found.push((p, v));
            }
        }
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found
}

/// A command's stdout and stderr, for assertion messages.
fn output_text(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn run(agent: &str, out: &Path) -> String {
    let o = deskenv()
        .args([
            "run",
            "--tasks",
            suite().to_str().unwrap(),
            "--agent",
            agent,
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let text = output_text(&o);
    assert!(
        o.status.success(),
        "deskenv run --agent {agent} failed:\n{text}"
    );
    text
}

/// A noop run of the examples SIGTERMed after two results, then run
/// again into the same folder: the rerun says which it skipped, leaves
/// their files untouched and completes the rest. Returns the rerun's text.
fn killed_then_resumed(out: &Path) -> String {
    let mut child = deskenv()
        .args([
            "run",
            "--tasks",
            suite().to_str().unwrap(),
            "--agent",
            "noop",
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(600);
    while results(out).len() < 2 {
        assert!(Instant::now() < deadline, "no results in time");
        std::thread::sleep(Duration::from_millis(200));
    }
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    child.wait().unwrap();
    let before = results(out);
    assert!(
        before.len() >= 2 && before.len() < 6,
        "{} results",
        before.len()
    );
    let mtimes: Vec<_> = before
        .iter()
        .map(|(p, _)| std::fs::metadata(p).unwrap().modified().unwrap())
        .collect();
    let text = run("noop", out);
    assert_eq!(
        text.matches("finished before, skipped").count(),
        before.len(),
        "{text}"
    );
    let after = results(out);
    assert_eq!(after.len(), 6);
    for ((p, _), m) in before.iter().zip(mtimes) {
        assert_eq!(
            std::fs::metadata(p).unwrap().modified().unwrap(),
            m,
            "{} was rewritten",
            p.display()
        );
    }
    text
}

#[test]
#[ignore = "needs a VM image (deskenv image build): scripts/test.sh runs it with --include-ignored"]
fn the_oracle_solves_every_example_and_noop_solves_none() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("scripted");
    let text = run("scripted", &out);
    eprintln!("{text}");
    let rs = results(&out);
    assert_eq!(rs.len(), 6, "{text}");
    for (p, r) in &rs {
        assert_eq!(r["success"], true, "{}: {r:#}", p.display());
        assert!(r["score"].as_f64().unwrap() >= 0.95);
        let dir = p.parent().unwrap();
        // The layout: <out>/pyautogui/screenshot/scripted/<domain>/<task>/.
        assert!(
            dir.starts_with(out.join("pyautogui/screenshot/scripted/examples")),
            "{}",
            dir.display()
        );
        let traj = std::fs::read_to_string(dir.join("traj.jsonl")).unwrap();
        assert_eq!(
            traj.lines().count() as u64,
            r["steps_used"].as_u64().unwrap(),
            "{traj}"
        );
        for line in traj.lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            assert!(dir.join(v["screenshot_file"].as_str().unwrap()).is_file());
        }
        assert_eq!(
            std::fs::read_to_string(dir.join("result.txt"))
                .unwrap()
                .trim()
                .parse::<f64>()
                .unwrap(),
            r["score"].as_f64().unwrap()
        );
    }
    let run_json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(run_json["tasks"].as_array().unwrap().len(), 6);
    assert_eq!(run_json["tasks"][0]["sha256"].as_str().unwrap().len(), 64);
    assert!(run_json["settings"]["environment"]["image_digest"].is_string());

    // The noop run is killed after two results and resumed: the rerun
    // skips what finished and completes the rest.
    let out = tmp.path().join("noop");
    let text = killed_then_resumed(&out);
    let rs = results(&out);
    assert_eq!(rs.len(), 6, "{text}");
    for (p, r) in &rs {
        assert_eq!(
            r["success"],
            false,
            "{}: the noop agent must not succeed: {r:#}",
            p.display()
        );
    }

    // The two runs compared: a significant difference, said in words; a
    // run against itself: none.
    let compare = |a: &Path, b: &Path| {
        let o = deskenv()
            .args(["compare", a.to_str().unwrap(), b.to_str().unwrap()])
            .output()
            .unwrap();
        let text = output_text(&o);
        assert!(o.status.success(), "deskenv compare failed:\n{text}");
        text
    };
    let (scripted, noop) = (tmp.path().join("scripted"), tmp.path().join("noop"));
    let text = compare(&scripted, &noop);
    assert!(
        text.contains("is 100.0 points better than noop")
            && text.contains("p = 0.031")
            && text.contains("significant at 0.05")
            && !text.contains("no significant"),
        "{text}"
    );
    let text = compare(&scripted, &scripted);
    assert!(
        text.contains("same success rate") && text.contains("no significant difference at 0.05"),
        "{text}"
    );

    // The two runs as a report: a page per episode with the VM's
    // screenshots beside it, every noop episode's failure analysed.
    let report = tmp.path().join("report");
    let o = deskenv()
        .args([
            "report",
            scripted.to_str().unwrap(),
            noop.to_str().unwrap(),
            "--out",
            report.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let text = output_text(&o);
    assert!(o.status.success(), "deskenv report failed:\n{text}");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary["pages"], 12, "{text}");
    assert!(summary["screenshots"].as_u64().unwrap() >= 12, "{text}");
    let failures = summary["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 6, "{summary:#}");
    assert!(
        failures.iter().all(|f| f[0] == 1),
        "only noop fails: {summary:#}"
    );
    let detailed = std::fs::read_to_string(report.join("detailed_results.csv")).unwrap();
    assert_eq!(detailed.lines().count(), 13, "{detailed}");
    let index = std::fs::read_to_string(report.join("index.html")).unwrap();
    assert!(index.contains("R1 vs R2") && !index.contains("not compared"));
    // Each page's screenshots are the guest's 1920×1080 PNGs.
    let mut pngs = 0;
    for run in ["r1", "r2"] {
        for page in std::fs::read_dir(report.join("episodes").join(run)).unwrap() {
            for f in std::fs::read_dir(page.unwrap().path()).unwrap() {
                let f = f.unwrap().path();
                if f.extension().is_some_and(|e| e == "png") {
                    let bytes = std::fs::read(&f).unwrap();
                    assert_eq!(
                        controller::report::failures::png_size(&bytes),
                        Some((1920, 1080)),
                        "{}",
                        f.display()
                    );
                    pngs += 1;
                }
            }
        }
    }
    assert_eq!(pngs as u64, summary["screenshots"].as_u64().unwrap());
}

/// `--agent http`: deskenv calls an agent server (here, one in this test
/// that replays the task's solution); the run succeeds and the tokens it
/// reports are summed in result.json.
#[test]
#[ignore = "needs a VM image (deskenv image build): scripts/test.sh runs it with --include-ignored"]
fn an_agent_server_over_http_solves_a_task() {
    let task_file = suite().join("editor-save-text.json");
    let task: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&task_file).unwrap()).unwrap();
    let mut steps: Vec<serde_json::Value> = task["solution"].as_array().unwrap().clone();
    steps.push("DONE".into());
    let steps = std::sync::Arc::new(std::sync::Mutex::new(std::collections::VecDeque::from(
        steps,
    )));
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<serde_json::Value>::new()));
    let (tx, rx) = std::sync::mpsc::channel();
    {
        let (steps, seen) = (steps.clone(), seen.clone());
        std::thread::spawn(move || {
            let rt = tokio::runtime::Runtime::new().unwrap();
            rt.block_on(async move {
                use axum::routing::post;
                let app = axum::Router::new()
                    .route(
                        "/reset",
                        post(|axum::Json(v): axum::Json<serde_json::Value>| async move {
                            axum::Json(serde_json::json!({"ok": true, "task": v["task_id"]}))
                        }),
                    )
                    .route(
                        "/predict",
                        post(move |axum::Json(v): axum::Json<serde_json::Value>| {
                            let (steps, seen) = (steps.clone(), seen.clone());
                            async move {
                                let mut shot = v.clone();
                                shot["screenshot"] = v["screenshot"].as_str().map(str::len).into();
                                seen.lock().unwrap().push(shot);
                                let next =
                                    steps.lock().unwrap().pop_front().unwrap_or("DONE".into());
                                axum::Json(serde_json::json!({
                                    "action": next,
                                    "usage": {"prompt_tokens": 10, "completion_tokens": 2}
                                }))
                            }
                        }),
                    );
                let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                tx.send(l.local_addr().unwrap()).unwrap();
                axum::serve(l, app).await.unwrap();
            });
        });
    }
    let addr = rx.recv().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("http");
    let o = deskenv()
        .args([
            "run",
            "--tasks",
            task_file.to_str().unwrap(),
            "--agent",
            "http",
            "--agent-url",
            &format!("http://{addr}"),
            "--model",
            "my-agent",
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let text = output_text(&o);
    assert!(o.status.success(), "{text}");
    let rs = results(&out);
    assert_eq!(rs.len(), 1, "{text}");
    let (p, r) = &rs[0];
    assert!(
        p.starts_with(out.join("pyautogui/screenshot/my-agent")),
        "{}",
        p.display()
    );
    assert_eq!(r["success"], true, "{r:#}");
    let n = r["steps_used"].as_u64().unwrap();
    assert_eq!(r["tokens"]["prompt_tokens"].as_u64().unwrap(), 10 * n);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len() as u64, n);
    assert_eq!(seen[0]["instruction"], task["instruction"]);
    assert!(
        seen[0]["screenshot"].as_u64().unwrap() > 1000,
        "{:?}",
        seen[0]
    );
}

#[test]
#[ignore = "needs a VM image (deskenv image build): scripts/test.sh runs it with --include-ignored"]
fn checkpoints_score_each_budget_as_a_separate_run_does() {
    // editor-save-text saves at step 3 of 5 (so budget 2 fails and 3
    // passes) and is done before step 10 (budget 10 is the episode's own
    // result, ended early). One task keeps CI short: 4 separate episodes
    // and 1 with checkpoints.
    let tmp = tempfile::tempdir().unwrap();
    let tasks = [suite().join("editor-save-text.json")];
    let run_with = |name: &str, extra: &[&str]| {
        let out = tmp.path().join(name);
        let t = Instant::now();
        let o = deskenv()
            .args(["run", "--tasks"])
            .args(&tasks)
            .args(["--agent", "scripted", "--max-steps", "2,3,10,15", "--out"])
            .arg(&out)
            .args(extra)
            .output()
            .unwrap();
        let text = output_text(&o);
        assert!(o.status.success(), "deskenv run {extra:?} failed:\n{text}");
        let scores: std::collections::BTreeMap<(String, u64), serde_json::Value> = results(&out)
            .into_iter()
            .map(|(_, r)| {
                (
                    (
                        r["task_id"].as_str().unwrap().to_string(),
                        r["max_steps"].as_u64().unwrap(),
                    ),
                    r,
                )
            })
            .collect();
        (out, scores, t.elapsed().as_secs_f64(), text)
    };
    let (_, separate, separate_s, text) = run_with("separate", &[]);
    assert_eq!(separate.len(), 4, "{text}");
    let (out, cut, cut_s, text) = run_with("checkpoints", &["--checkpoints"]);
    assert_eq!(cut.len(), 4, "{text}");
    eprintln!(
        "separate runs {separate_s:.1} s, one episode per task with checkpoints {cut_s:.1} s ({:.2}× less time)",
        separate_s / cut_s
    );
    for (k, a) in &separate {
        let b = &cut[k];
        assert_eq!(
            (a["status"].as_str(), a["score"].as_f64()),
            (b["status"].as_str(), b["score"].as_f64()),
            "{k:?}: a separate run and the checkpoint differ:\n{a:#}\n{b:#}"
        );
        if k.1 < 15 {
            assert_eq!(b["from_checkpoint"]["episode_budget"], 15, "{b:#}");
        } else {
            assert!(b.get("from_checkpoint").is_none(), "{b:#}");
        }
    }
    let editor = |b: u64| {
        separate[&("editor-save-text".to_string(), b)]["score"]
            .as_f64()
            .unwrap()
    };
    assert!(
        editor(2) < 0.95 && editor(15) >= 0.95,
        "budget 2 must fall short: {separate:#?}"
    );
    let kind =
        |b: u64| cut[&("editor-save-text".to_string(), b)]["from_checkpoint"]["kind"].clone();
    assert_eq!(
        (kind(2), kind(3), kind(10)),
        ("checkpoint".into(), "checkpoint".into(), "ended".into()),
        "{cut:#?}"
    );
    // The episode recorded its saves, and its checkpoint folders are gone.
    let full = &cut[&("editor-save-text".to_string(), 15)];
    assert_eq!(full["checkpoints"].as_array().unwrap().len(), 2, "{full:#}");
    let leftover: Vec<_> = results(&out)
        .into_iter()
        .filter(|(p, _)| p.parent().unwrap().join("checkpoints").exists())
        .collect();
    assert!(leftover.is_empty(), "{leftover:?}");
}
