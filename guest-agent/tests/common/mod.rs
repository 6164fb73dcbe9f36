//! Test harness: a real headless desktop per test (the `desktop` crate:
//! Xvfb, D-Bus, the AT-SPI bus and openbox) and a real `deskenv-agent`
//! process serving it.
//!
//! Desktop tests are `#[ignore]`d, so a plain `cargo test` stays quick;
//! scripts/test.sh runs them with `--include-ignored` after installing Xvfb,
//! openbox and the GTK applications.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// One desktop on a free display, stopped on drop with the programs
/// started on it.
pub struct Desktop {
    pub display: String,
    pub env: Vec<(String, String)>,
    children: Mutex<Vec<Child>>,
    // Dropped after `children`: the applications go before their display.
    inner: desktop::Desktop,
}

impl Desktop {
    /// Starts a desktop on a free display; panics with what did not come up.
    pub fn start() -> Desktop {
        let inner = desktop::Desktop::start_free()
            .unwrap_or_else(|e| panic!("test desktop: {}", error_chain(&e)));
        Desktop {
            display: inner.display(),
            env: inner.env().to_vec(),
            children: Mutex::new(Vec::new()),
            inner,
        }
    }

    pub fn command(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        c.stdin(Stdio::null());
        c
    }

    /// Starts a program on this desktop; it is killed with the desktop.
    pub fn spawn(&self, argv: &[&str]) -> u32 {
        let mut c = self.command(argv[0]);
        c.args(&argv[1..])
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let child = c.spawn().unwrap_or_else(|e| panic!("spawn {argv:?}: {e}"));
        let pid = child.id();
        self.children.lock().unwrap().push(child);
        pid
    }

    /// Runs a program on this desktop and returns its stdout.
    pub fn run(&self, argv: &[&str]) -> String {
        let out = self
            .command(argv[0])
            .args(&argv[1..])
            .output()
            .unwrap_or_else(|e| panic!("run {argv:?}: {e}"));
        assert!(
            out.status.success(),
            "{argv:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The pid of this desktop's window manager (openbox).
    pub fn wm_pid(&self) -> i32 {
        self.inner.pids().wm as i32
    }

    /// Waits until `xdotool search` finds a visible window by name; returns its id.
    pub fn wait_window(&self, name: &str, timeout: Duration) -> u32 {
        let deadline = Instant::now() + timeout;
        loop {
            let out = self
                .command("xdotool")
                .args(["search", "--onlyvisible", "--name", name])
                .output()
                .unwrap();
            if let Some(line) = String::from_utf8_lossy(&out.stdout).lines().next() {
                if let Ok(id) = line.trim().parse() {
                    return id;
                }
            }
            assert!(
                Instant::now() < deadline,
                "window {name:?} did not appear within {timeout:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Desktop {
    fn drop(&mut self) {
        for mut c in self.children.lock().unwrap().drain(..) {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// A running `deskenv-agent` on a desktop, killed on drop.
pub struct Agent {
    child: Child,
    pub base: String,
}

impl Agent {
    pub fn start(desktop: &Desktop, extra: &[&str]) -> Agent {
        let mut c = desktop.command(env!("CARGO_BIN_EXE_deskenv-agent"));
        c.args(["--listen", "127.0.0.1:0", "--display", &desktop.display])
            .args(extra)
            .env("RUST_LOG", "info")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = c.spawn().expect("spawn deskenv-agent");
        let stdout = child.stdout.take().unwrap();
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).unwrap();
        // The agent's first stdout line is "listening on ADDR".
        let addr = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line from deskenv-agent: {line:?}"))
            .to_string();
        Agent {
            child,
            base: format!("http://{addr}"),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Like [`poll`], but None on timeout so the caller can say what it saw.
pub fn poll_or<T>(limit: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(150));
    }
}

pub fn poll<T>(what: &str, limit: Duration, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(
            Instant::now() < deadline,
            "timed out after {limit:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(150));
    }
}

/// (x, y, w, h) of a window's client area on the screen, from xwininfo
/// (xdotool 3.2016 counts the frame offset twice for decorated windows).
pub fn geometry(desktop: &Desktop, id: u32) -> (i32, i32, i32, i32) {
    let out = desktop.run(&["xwininfo", "-id", &id.to_string()]);
    let val = |k: &str| -> i32 {
        out.lines()
            .find_map(|l| l.trim().strip_prefix(k))
            .unwrap_or_else(|| panic!("no {k} in {out}"))
            .trim()
            .parse()
            .unwrap()
    };
    (
        val("Absolute upper-left X:"),
        val("Absolute upper-left Y:"),
        val("Width:"),
        val("Height:"),
    )
}

/// Depth-first nodes of a JSON a11y tree.
pub fn nodes(tree: &serde_json::Value) -> Vec<serde_json::Value> {
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

/// Starts LibreOffice Calc on a four-row sheet (name, qty, price; A4 holds
/// `a "quoted" & <tag>`), with a profile of its own (no other instance to
/// hand the file to) without the tip-of-the-day dialog and the what's-new
/// bar. Keep the folder until Calc is gone.
pub fn start_calc(desktop: &Desktop) -> (tempfile::TempDir, u32) {
    let dir = tempfile::tempdir().unwrap();
    let user = dir.path().join("profile/user");
    std::fs::create_dir_all(&user).unwrap();
    std::fs::write(user.join("registrymodifications.xcu"), LO_SETTINGS).unwrap();
    let sheet = dir.path().join("fruit.fods");
    std::fs::write(&sheet, FRUIT_FODS).unwrap();
    let profile = format!(
        "-env:UserInstallation=file://{}",
        dir.path().join("profile").display()
    );
    let pid = desktop.spawn(&[
        "libreoffice",
        &profile,
        "--norestore",
        "--nologo",
        "--calc",
        sheet.to_str().unwrap(),
    ]);
    (dir, pid)
}

pub const LO_SETTINGS: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Common/Misc"><prop oor:name="ShowTipOfTheDay" oor:op="fuse"><value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Misc"><prop oor:name="FirstRun" oor:op="fuse"><value>false</value></prop></item>
<item oor:path="/org.openoffice.Setup/Product"><prop oor:name="ooSetupLastVersion" oor:op="fuse"><value>99.0</value></prop></item>
</oor:items>
"#;

pub const FRUIT_FODS: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
 xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"
 xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"
 office:version="1.2" office:mimetype="application/vnd.oasis.opendocument.spreadsheet">
<office:body><office:spreadsheet><table:table table:name="Fruit">
<table:table-row><table:table-cell office:value-type="string"><text:p>name</text:p></table:table-cell><table:table-cell office:value-type="string"><text:p>qty</text:p></table:table-cell><table:table-cell office:value-type="string"><text:p>price</text:p></table:table-cell></table:table-row>
<table:table-row><table:table-cell office:value-type="string"><text:p>apple</text:p></table:table-cell><table:table-cell office:value-type="float" office:value="3"><text:p>3</text:p></table:table-cell><table:table-cell office:value-type="float" office:value="1.5"><text:p>1.5</text:p></table:table-cell></table:table-row>
<table:table-row><table:table-cell office:value-type="string"><text:p>pear</text:p></table:table-cell><table:table-cell office:value-type="float" office:value="7"><text:p>7</text:p></table:table-cell><table:table-cell office:value-type="float" office:value="0.25"><text:p>0.25</text:p></table:table-cell></table:table-row>
<table:table-row><table:table-cell office:value-type="string"><text:p>a "quoted" &amp; &lt;tag&gt;</text:p></table:table-cell><table:table-cell office:value-type="float" office:value="1"><text:p>1</text:p></table:table-cell><table:table-cell office:value-type="float" office:value="2"><text:p>2</text:p></table:table-cell></table:table-row>
</table:table></office:spreadsheet></office:body></office:document>
"#;

/// The desktop's session bus address (`DBUS_SESSION_BUS_ADDRESS`).
pub fn session_bus(desktop: &Desktop) -> String {
    desktop
        .env
        .iter()
        .find(|(k, _)| k == "DBUS_SESSION_BUS_ADDRESS")
        .map(|(_, v)| v.clone())
        .expect("the desktop exports DBUS_SESSION_BUS_ADDRESS")
}

/// A two-thread tokio runtime for the async a11y API.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}
