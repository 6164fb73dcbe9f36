//! `deskenv serve` end to end: the server on a real provider, driven by
//! the example Python client (tests/python/test_serve_client.py, which
//! uses examples/python/deskenv_client.py): errors, the oracle through the
//! API, computer_13 with the a11y tree, a second reset, the example
//! program. Then SIGTERM ends the server and nothing of it is left.
//!
//! - `serve_on_qemu`: real VMs (after the image is built; scripts/test.sh
//!   runs it in the VM tier, by name).
//! - `serve_on_local`: the local provider (a desktop on this host), in the
//!   desktop tier.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

fn serve_and_drive(provider: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let mut server = Command::new(env!("CARGO_BIN_EXE_deskenv"))
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--tasks",
            root().join("tasks/examples").to_str().unwrap(),
            "--provider",
            provider,
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(server.stdout.take().unwrap()).lines();
    let first = lines
        .next()
        .expect("deskenv serve printed nothing")
        .unwrap();
    let url = first
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no address in {first:?}"))
        .to_string();
    // Keep draining the server's stdout.
    std::thread::spawn(move || for _ in lines {});

    let t = Instant::now();
    let py = Command::new("/usr/bin/python3")
        .args(["-m", "unittest", "-v", "tests/python/test_serve_client.py"])
        .current_dir(root())
        .env("DESKENV_SERVE_URL", &url)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&py.stdout),
        String::from_utf8_lossy(&py.stderr)
    );
    eprintln!("{text}\n(python client: {:.1}s)", t.elapsed().as_secs_f64());
    let pid = server.id() as i32;
    unsafe { libc::kill(pid, libc::SIGTERM) };
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(s) = server.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = server.kill();
            panic!("deskenv serve did not end within 20 s of SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        py.status.success(),
        "the Python client's tests failed:\n{text}"
    );
    use std::os::unix::process::ExitStatusExt;
    assert!(
        status.code() == Some(143) || status.signal() == Some(libc::SIGTERM),
        "serve ended with {status:?}"
    );
    let serve_json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("serve.json")).unwrap()).unwrap();
    assert_eq!(serve_json["provider"], provider);
    assert!(out
        .join("pyautogui/screenshot/py-oracle/examples/editor-save-text/result.json")
        .exists());
}

#[test]
#[ignore = "needs a VM image (deskenv image build): scripts/test.sh runs it with --include-ignored"]
fn serve_on_qemu() {
    serve_and_drive("qemu");
}

#[test]
#[ignore = "needs a desktop (Xvfb, AT-SPI): scripts/test.sh runs it with --include-ignored"]
fn serve_on_local() {
    serve_and_drive("local");
}

/// `--token-file`: every route but `/v1/health` needs the bearer token;
/// `--allow-remote` without a token is refused before anything starts.
#[test]
#[ignore = "needs a desktop (Xvfb, AT-SPI): scripts/test.sh runs it with --include-ignored"]
fn a_token_guards_every_route_but_health() {
    let tmp = tempfile::tempdir().unwrap();
    let token_file = tmp.path().join("token");
    std::fs::write(&token_file, "s3cret-token\n").unwrap();
    let serve = |extra: &[&str]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_deskenv"));
        c.args(["serve", "--provider", "local", "--tasks"])
            .arg(root().join("tasks/examples"))
            .arg("--out")
            .arg(tmp.path().join("out"))
            .args(extra);
        c
    };
    let refused = serve(&["--listen", "0.0.0.0:0", "--allow-remote"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{text}");
    assert!(text.contains("--allow-remote needs --token-file"), "{text}");

    let mut server = serve(&[
        "--listen",
        "127.0.0.1:0",
        "--token-file",
        token_file.to_str().unwrap(),
    ])
    .stdout(Stdio::piped())
    .stderr(Stdio::inherit())
    .spawn()
    .unwrap();
    let first = BufReader::new(server.stdout.take().unwrap())
        .lines()
        .next()
        .expect("deskenv serve printed nothing")
        .unwrap();
    let url = first
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no address in {first:?}"))
        .to_string();
    let status = |path: &str, token: Option<&str>| -> String {
        let mut c = Command::new("curl");
        c.args(["-s", "-o", "/dev/null", "-w", "%{http_code}"]);
        if let Some(t) = token {
            c.args(["-H", &format!("Authorization: Bearer {t}")]);
        }
        let o = c.arg(format!("{url}{path}")).output().unwrap();
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    assert_eq!(status("/v1/health", None), "200");
    assert_eq!(status("/v1/tasks", None), "401");
    assert_eq!(status("/v1/tasks", Some("wrong-token!")), "401");
    assert_eq!(status("/v1/envs", Some("s3cret-token")), "200");
    assert_eq!(status("/v1/tasks", Some("s3cret-token")), "200");
    let _ = server.kill();
    let _ = server.wait();
}
