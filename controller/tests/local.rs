//! The local provider on real desktops: Xvfb, D-Bus, the AT-SPI bus,
//! openbox and the real `deskenv-agent`, started and ended by the
//! controller. Checks that a machine comes up whole, that ending it (by
//! shutdown or by drop) leaves no process behind, launched applications
//! included, that a reset is real (a fresh /home/user as root, no windows
//! from before), and that the example editor task is solved by the oracle
//! and not by the noop agent.
//!
//! Ignored unless run with `--include-ignored` (scripts/test.sh does, after
//! scripts/install-deps.sh); needs `target/<profile>/deskenv-agent`
//! (`cargo build -p deskenv-agent`). The tests take turns: one desktop at
//! a time.

use controller::provider::local::{LocalConfig, LocalMachine, LocalProvider, MARKER_VAR};
use controller::provider::{Machine, Provider, StartPath};
use protocol::api::Command;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::MutexGuard;

/// One test at a time: each starts desktops, and CI has two cores. A
/// tokio mutex: the async tests hold it across awaits, and a failed test
/// does not poison it for the others.
static TURN: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

async fn turn() -> MutexGuard<'static, ()> {
    TURN.lock().await
}

fn turn_blocking() -> MutexGuard<'static, ()> {
    TURN.blocking_lock()
}

fn agent_bin() -> PathBuf {
    LocalProvider::find_agent_bin().expect(
        "no deskenv-agent binary next to the test or in target/{release,debug}: run `cargo build -p deskenv-agent`",
    )
}

fn provider(cache: &Path) -> LocalProvider {
    LocalProvider::new(LocalConfig::default_for(agent_bin()), cache).unwrap()
}

fn is_root() -> bool {
    unsafe { libc::geteuid() == 0 }
}

/// Whether tasks can use /home/user: root (a fresh one per machine) or a
/// host where it is writable (shared).
fn home_usable() -> bool {
    let writable = std::fs::metadata("/home/user").is_ok_and(|m| m.is_dir())
        && tempfile::tempfile_in("/home/user").is_ok();
    if !is_root() && !writable {
        eprintln!("skipped: not root and /home/user is not writable, so tasks cannot use it");
    }
    is_root() || writable
}

/// Live (not zombie) processes whose environment has
/// `DESKENV_LOCAL_MACHINE=<value>` with `prefix(value)`; read from /proc
/// here, independent of the provider's own bookkeeping.
fn marked(prefix: &str) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) else {
            continue;
        };
        let key = format!("{MARKER_VAR}={prefix}");
        let hit = env
            .split(|b| *b == 0)
            .any(|kv| kv.starts_with(key.as_bytes()));
        if hit && alive(pid) {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            out.push((pid, comm.trim().to_string()));
        }
    }
    out
}

/// Every machine this test process started: markers begin with our pid.
fn ours() -> Vec<(u32, String)> {
    marked(&format!("{}.", std::process::id()))
}

fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !matches!(
            stat.rsplit_once(')')
                .and_then(|(_, r)| r.split_whitespace().next()),
            Some("Z") | Some("X") | None
        ),
        Err(_) => false,
    }
}

/// Asserts that the machine's processes, folder and display files are gone.
fn assert_gone(
    dir: &Path,
    display: u32,
    marker: &str,
    pids: &[(&'static str, u32)],
    init: Option<u32>,
    stopped: std::time::SystemTime,
) {
    let left = marked(marker);
    assert!(left.is_empty(), "processes of {marker} left: {left:?}");
    for (what, pid) in pids {
        assert!(!alive(*pid), "{what} (pid {pid}) is still alive");
    }
    if let Some(init) = init {
        assert!(
            !alive(init),
            "the namespace init (pid {init}) is still alive"
        );
    }
    assert!(!dir.exists(), "{} was not removed", dir.display());
    // Another process on this host (a second test run) may take the freed
    // display at once: a lock file younger than the shutdown is not ours.
    let lock = format!("/tmp/.X{display}-lock");
    if let Ok(m) = std::fs::metadata(&lock).and_then(|m| m.modified()) {
        if m > stopped {
            return;
        }
    }
    for f in [lock, format!("/tmp/.X11-unix/X{display}")] {
        assert!(!Path::new(&f).exists(), "{f} was left behind");
    }
}

fn png_size(png: &[u8]) -> (u32, u32) {
    let decoder = png::Decoder::new(std::io::Cursor::new(png));
    let reader = decoder.read_info().unwrap();
    let info = reader.info();
    (info.width, info.height)
}

async fn wait_for_window(m: &dyn Machine, class: &str) -> protocol::api::WindowInfo {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let windows = m.guest().windows().await.unwrap();
        if let Some(w) = windows.iter().find(|w| w.class.eq_ignore_ascii_case(class)) {
            return w.clone();
        }
        assert!(
            Instant::now() < deadline,
            "no {class} window within 30 s: {windows:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a desktop (Xvfb, AT-SPI): scripts/test.sh runs it with --include-ignored"]
async fn a_machine_comes_up_whole_and_shutdown_leaves_nothing() {
    let _turn = turn().await;
    let cache = tempfile::tempdir().unwrap();
    let p = provider(cache.path());
    assert_eq!(p.kind(), "local");
    let mut starts = Vec::new();
    let mut stops = Vec::new();
    for round in 0..3 {
        let t = Instant::now();
        let m: LocalMachine = p.start_local(&format!("up{round}")).await.unwrap();
        starts.push(t.elapsed().as_secs_f64());
        let report = m.started().clone();
        assert_eq!(report.path, StartPath::Local);
        let names: Vec<&str> = report.phases.iter().map(|(n, _)| n.as_str()).collect();
        for want in ["xvfb", "dbus", "wm", "atspi", "agent healthy"] {
            assert!(names.contains(&want), "{want} missing from {report:?}");
        }
        if round == 0 {
            eprintln!("started: {report:?}");
            let h = m.guest().health(Duration::from_secs(5)).await.unwrap();
            assert!(h.atspi, "{h:?}");
            assert_eq!((h.screen.width, h.screen.height), (1920, 1080));
            assert_eq!(h.display, format!(":{}", m.display()));
            let png = m.screenshot().await.unwrap();
            assert_eq!(png_size(&png), (1920, 1080));
            // The accessibility tree is the desktop's (AT-SPI's root).
            let tree = m.guest().a11y("osworld-xml").await.unwrap();
            let xml = tree.text.unwrap_or_default();
            assert!(xml.contains("desktop-frame"), "{xml}");
            m.check().unwrap();
            // The machine's programs run with the machine's environment.
            assert!(m.pid().is_some_and(|p| p > 1));
            let programs = m.programs();
            for want in [
                "Xvfb",
                "dbus-daemon",
                "openbox",
                "at-spi-bus-launcher",
                "deskenv-agent",
            ] {
                assert!(
                    programs.iter().any(|(w, _)| *w == want),
                    "{want} missing from {programs:?}"
                );
            }
            assert!(marked(m.marker()).len() >= 5, "{:?}", marked(m.marker()));
            let d = p.describe();
            assert_eq!(d["kind"], "local");
            assert_eq!(d["agent_sha256"].as_str().unwrap().len(), 64);
            assert_eq!(d["isolate_home"], is_root());
            assert!(d["displays_used"]
                .as_array()
                .unwrap()
                .contains(&serde_json::json!(m.display())));
        }
        let (dir, display, marker) = (m.dir().to_path_buf(), m.display(), m.marker().to_string());
        let (programs, init) = (m.programs(), m.namespace_init());
        assert!(dir.is_dir());
        assert!(Path::new(&format!("/tmp/.X11-unix/X{display}")).exists());
        let t = Instant::now();
        Box::new(m).shutdown().await;
        stops.push(t.elapsed().as_secs_f64());
        let stopped = std::time::SystemTime::now();
        assert_gone(&dir, display, &marker, &programs, init, stopped);
    }
    assert!(ours().is_empty(), "{:?}", ours());

    // Two at once (a pool with --parallel 2): each its own display, bus
    // and agent.
    let (a, b) = tokio::join!(p.start_local("par0"), p.start_local("par1"));
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_ne!(a.display(), b.display());
    assert_ne!(a.guest().base(), b.guest().base());
    for m in [&a, &b] {
        let h = m.guest().health(Duration::from_secs(5)).await.unwrap();
        assert_eq!(h.display, format!(":{}", m.display()));
        assert!(h.atspi, "{h:?}");
    }
    tokio::join!(Box::new(a).shutdown(), Box::new(b).shutdown());
    assert!(ours().is_empty(), "{:?}", ours());

    eprintln!(
        "local machine: start median {:.2}s {starts:.2?}, shutdown median {:.3}s {stops:.3?}",
        median(&mut starts.clone()),
        median(&mut stops.clone())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a desktop (Xvfb, AT-SPI): scripts/test.sh runs it with --include-ignored"]
async fn a_reset_is_real_no_files_or_windows_from_before() {
    let _turn = turn().await;
    if !home_usable() {
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let p = provider(cache.path());
    let host_files = ["/home/user/x.txt", "/home/user/rel.txt"];
    let host_before: Vec<bool> = host_files.iter().map(|f| Path::new(f).exists()).collect();

    let a = p.start("before").await.unwrap();
    a.guest()
        .put_file("/home/user/x.txt", b"from the first machine\n".to_vec())
        .await
        .unwrap();
    assert_eq!(
        a.guest()
            .get_file("/home/user/x.txt")
            .await
            .unwrap()
            .as_deref(),
        Some(&b"from the first machine\n"[..])
    );
    // A relative path lands in the machine's own home too.
    let r = a
        .guest()
        .exec(
            Command::Shell("pwd && echo rel > rel.txt && cat /home/user/rel.txt".into()),
            Duration::from_secs(10),
        )
        .await
        .unwrap();
    assert_eq!(r.exit_code, Some(0), "{r:?}");
    assert_eq!(r.stdout, "/home/user\nrel\n", "{r:?}");
    a.guest()
        .launch(Command::Argv(vec!["mousepad".into()]))
        .await
        .unwrap();
    let w = wait_for_window(a.as_ref(), "mousepad").await;
    eprintln!("first machine: {w:?}");
    if is_root() {
        // Isolated: the host's /home/user did not get the files.
        let host_after: Vec<bool> = host_files.iter().map(|f| Path::new(f).exists()).collect();
        assert_eq!(host_after, host_before, "{host_files:?} on the host");
    }
    a.shutdown().await;
    assert!(ours().is_empty(), "left after shutdown: {:?}", ours());

    let b = p.start("after").await.unwrap();
    let windows = b.guest().windows().await.unwrap();
    assert!(
        windows
            .iter()
            .all(|w| !w.class.eq_ignore_ascii_case("mousepad")),
        "a window from the first machine: {windows:?}"
    );
    if is_root() {
        assert_eq!(b.guest().get_file("/home/user/x.txt").await.unwrap(), None);
        assert_eq!(
            b.guest().get_file("/home/user/rel.txt").await.unwrap(),
            None
        );
        let listing = b
            .guest()
            .exec(
                Command::Shell("ls -A /home/user".into()),
                Duration::from_secs(10),
            )
            .await
            .unwrap();
        assert!(listing.stdout.contains("Desktop"), "{listing:?}");
        assert!(!listing.stdout.contains("x.txt"), "{listing:?}");
        // Inside, only the machine's own processes are visible.
        let ps = b
            .guest()
            .exec(
                Command::Shell("ls /proc | grep -c '^[0-9]'".into()),
                Duration::from_secs(10),
            )
            .await
            .unwrap();
        let n: usize = ps.stdout.trim().parse().unwrap();
        assert!(n < 40, "{n} processes visible inside the machine");
    } else {
        eprintln!("not root: /home/user is shared with the host, so only windows are checked");
        let _ = b
            .guest()
            .exec(
                Command::Argv(vec![
                    "rm".into(),
                    "-f".into(),
                    "/home/user/x.txt".into(),
                    "/home/user/rel.txt".into(),
                ]),
                Duration::from_secs(5),
            )
            .await;
    }
    b.shutdown().await;
    assert!(ours().is_empty(), "{:?}", ours());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a desktop (Xvfb, AT-SPI): scripts/test.sh runs it with --include-ignored"]
async fn dropping_a_machine_ends_it_and_the_apps_it_launched() {
    let _turn = turn().await;
    let cache = tempfile::tempdir().unwrap();
    let p: Arc<dyn Provider> = Arc::new(provider(cache.path()));
    let pool = controller::pool::Pool::new(p, 1).unwrap();
    let lease = pool.acquire().await.unwrap();
    // An application in its own session, and a detached shell job.
    lease
        .guest()
        .launch(Command::Argv(vec!["mousepad".into()]))
        .await
        .unwrap();
    let r = lease
        .guest()
        .exec(
            Command::Shell("setsid sleep 300 >/dev/null 2>&1 < /dev/null & echo started".into()),
            Duration::from_secs(10),
        )
        .await
        .unwrap();
    assert_eq!(r.stdout.trim(), "started", "{r:?}");
    wait_for_window(lease.machine(), "mousepad").await;
    let before = ours();
    let names: Vec<&str> = before.iter().map(|(_, c)| c.as_str()).collect();
    for want in ["Xvfb", "openbox", "mousepad", "sleep", "deskenv-agent"] {
        assert!(names.contains(&want), "{want} not among {before:?}");
    }
    // The machine's folder, and its record beside it.
    let entries = std::fs::read_dir(cache.path().join("local"))
        .unwrap()
        .count();
    assert_eq!(entries, 2);
    let t = Instant::now();
    drop(lease); // kill_now, synchronously
    eprintln!("dropped in {:.3}s", t.elapsed().as_secs_f64());
    assert!(ours().is_empty(), "left after the drop: {:?}", ours());
    for (pid, comm) in &before {
        assert!(!alive(*pid), "{comm} (pid {pid}) is still alive");
    }
    assert_eq!(
        std::fs::read_dir(cache.path().join("local"))
            .unwrap()
            .count(),
        0
    );
    assert_eq!(pool.in_use(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a desktop (Xvfb, AT-SPI): scripts/test.sh runs it with --include-ignored"]
async fn the_editor_task_is_solved_by_the_oracle_and_not_by_noop() {
    use controller::episode::{runner, EpisodeSettings, SettleMode};
    let _turn = turn().await;
    if !home_usable() {
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let task_file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tasks/examples/editor-save-text.json");
    let task = controller::task::load_file(&task_file).unwrap();
    let p = Arc::new(provider(cache.path()));
    let environment = p.describe();
    let pool = Arc::new(controller::pool::Pool::new(p, 1).unwrap());
    for agent in ["scripted", "noop"] {
        let settings = Arc::new(runner::RunSettings {
            out: out.path().join(agent),
            model: agent.into(),
            agent: agent.into(),
            budgets: vec![15],
            episode: EpisodeSettings {
                time_limit: Duration::from_secs(120),
                settle: SettleMode::Adaptive,
                ..EpisodeSettings::new(Default::default(), Default::default(), 15)
            },
            provider: controller::provider::Kind::Local,
            parallel: 1,
            retries: 0,
            environment: environment.clone(),
            repeats: 1,
            vary_seed: false,
            checkpoints: false,
        });
        let make_agent: runner::PolicyFactory = if agent == "scripted" {
            Arc::new(|| Ok(Box::new(controller::policy::scripted::ScriptedPolicy::default()) as _))
        } else {
            Arc::new(|| Ok(Box::new(controller::policy::noop::NoopPolicy) as _))
        };
        let t = Instant::now();
        let finished = runner::run(
            pool.clone(),
            settings.clone(),
            vec![task.clone()],
            make_agent,
            Arc::new(|l: &str| eprintln!("{l}")),
        )
        .await
        .unwrap();
        eprintln!("{agent}: {:.1}s", t.elapsed().as_secs_f64());
        assert_eq!(finished.finished.len(), 1);
        let r = &finished.finished[0].result;
        let dir = runner::episode_dir(&settings.out, &settings.episode, agent, &task);
        if agent == "scripted" {
            assert!(
                r.score >= 0.95 && r.success,
                "the oracle failed on the local provider ({}): {r:#?}",
                dir.display()
            );
            let traj = std::fs::read_to_string(dir.join("traj.jsonl")).unwrap();
            assert_eq!(traj.lines().count(), r.steps_used, "{traj}");
        } else {
            assert_eq!(r.score, 0.0, "{r:#?}");
            assert!(!r.success);
        }
        assert!(dir.join("result.json").is_file());
        let run: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(settings.out.join("run.json")).unwrap())
                .unwrap();
        assert_eq!(run["settings"]["environment"]["kind"], "local");
        assert!(ours().is_empty(), "{:?}", ours());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a desktop (Xvfb, AT-SPI, ffmpeg): scripts/test.sh runs it with --include-ignored"]
async fn repeats_are_fresh_episodes_with_recordings_and_the_report_shows_them() {
    use controller::episode::{runner, EpisodeSettings, SettleMode};
    use controller::report::{summary::summarize, write_report, ReportOptions, Run};
    let _turn = turn().await;
    if !home_usable() {
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let task_file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tasks/examples/editor-save-text.json");
    let task = controller::task::load_file(&task_file).unwrap();
    let p = Arc::new(provider(cache.path()));
    let environment = p.describe();
    let pool = Arc::new(controller::pool::Pool::new(p, 1).unwrap());
    let settings = Arc::new(runner::RunSettings {
        out: out.path().join("run"),
        model: "scripted".into(),
        agent: "scripted".into(),
        budgets: vec![15],
        episode: EpisodeSettings {
            time_limit: Duration::from_secs(120),
            settle: SettleMode::Adaptive,
            record_fps: Some(5),
            ..EpisodeSettings::new(Default::default(), Default::default(), 15)
        },
        provider: controller::provider::Kind::Local,
        parallel: 1,
        retries: 0,
        environment,
        repeats: 2,
        vary_seed: true,
        checkpoints: false,
    });
    let finished = runner::run(
        pool,
        settings.clone(),
        vec![task.clone()],
        Arc::new(|| Ok(Box::new(controller::policy::scripted::ScriptedPolicy::default()) as _)),
        Arc::new(|l: &str| eprintln!("{l}")),
    )
    .await
    .unwrap();
    assert_eq!(finished.finished.len(), 2);
    for repeat in [1u32, 2] {
        let dir = runner::task_dir(&settings, 15, repeat, &task);
        assert!(
            dir.ends_with(format!("repeat-{repeat}")),
            "{}",
            dir.display()
        );
        let r: controller::episode::EpisodeResult =
            serde_json::from_str(&std::fs::read_to_string(dir.join("result.json")).unwrap())
                .unwrap();
        assert!(r.success, "repeat {repeat}: {r:#?}");
        assert_eq!((r.repeat, r.seed), (Some(repeat), u64::from(repeat)));
        let mp4 = std::fs::read(dir.join("recording.mp4"))
            .unwrap_or_else(|e| panic!("repeat {repeat}: no recording.mp4 ({e}): {:?}", r.errors));
        assert!(
            mp4.len() > 1000 && &mp4[4..8] == b"ftyp",
            "repeat {repeat}: not an mp4 ({} bytes)",
            mp4.len()
        );
        assert!(r.timings.recording_s > 0.0);
        assert!(r.errors.is_empty(), "{:?}", r.errors);
    }
    // The guest's copies are gone (a local machine may share /tmp).
    let prefix = format!("deskenv-recording-{}-", std::process::id());
    let left: Vec<_> = std::fs::read_dir("/tmp")
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    let run_json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(settings.out.join("run.json")).unwrap())
            .unwrap();
    assert_eq!(run_json["settings"]["repeats"], 2);
    assert_eq!(run_json["settings"]["episode"]["record_fps"], 5);

    let run = Run::load(&settings.out).unwrap();
    let s = summarize(&run, None, &stats::Bootstrap::default()).unwrap();
    assert_eq!(s.budgets[0].pass_at_k, vec![(1, 1.0), (2, 1.0)]);
    let report = out.path().join("report");
    let opts = ReportOptions {
        price_per_mtok: None,
        boot: stats::Bootstrap::default(),
    };
    let rep = write_report(&[run], &report, &opts).unwrap();
    assert_eq!(rep.pages, 2);
    let pages: Vec<_> = std::fs::read_dir(report.join("episodes/r1"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    for p in pages {
        let html = std::fs::read_to_string(p.join("index.html")).unwrap();
        assert!(html.contains("<video controls") && p.join("recording.mp4").is_file());
    }
    assert!(ours().is_empty(), "{:?}", ours());
}

/// Not a test by itself: the controller that
/// `a_killed_controller_leaves_no_processes` starts (this binary again,
/// with `DESKENV_LOCAL_TEST_CHILD=<cache>`) and kills. It starts a machine
/// with an application, prints its marker and display, and waits.
#[test]
fn child_controller() {
    let Ok(cache) = std::env::var("DESKENV_LOCAL_TEST_CHILD") else {
        return;
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        controller::provider::reaper::install_signal_handlers();
        let p = provider(Path::new(&cache));
        let m = p.start_local("child").await.unwrap();
        m.guest()
            .launch(Command::Argv(vec!["mousepad".into()]))
            .await
            .unwrap();
        wait_for_window(&m, "mousepad").await;
        println!("MARKER {}", m.marker());
        println!("DISPLAY {}", m.display());
        use std::io::Write;
        std::io::stdout().flush().unwrap();
        tokio::time::sleep(Duration::from_secs(600)).await;
        drop(m);
    });
}

/// Kills the child controller if the test fails before it does.
struct KillOnDrop(u32);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if alive(self.0) {
            unsafe {
                libc::kill(self.0 as i32, libc::SIGKILL);
            }
        }
    }
}

#[test]
#[ignore = "needs a desktop (Xvfb, AT-SPI): scripts/test.sh runs it with --include-ignored"]
fn a_killed_controller_leaves_no_processes() {
    use std::io::BufRead;
    let _turn = turn_blocking();
    for (signal, name) in [(libc::SIGTERM, "SIGTERM"), (libc::SIGKILL, "SIGKILL")] {
        let cache = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "child_controller",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("DESKENV_LOCAL_TEST_CHILD", cache.path())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let _reap = KillOnDrop(child.id());
        let (tx, rx) = std::sync::mpsc::channel();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
            {
                let _ = tx.send(line);
            }
        });
        let (mut marker, mut display) = (None, None);
        while display.is_none() {
            let line = rx
                .recv_timeout(Duration::from_secs(60))
                .expect("the child controller did not start its machine within 60 s");
            // libtest may print `test child_controller ... ` first.
            if let Some((_, m)) = line.split_once("MARKER ") {
                marker = Some(m.trim().to_string());
            }
            if let Some((_, d)) = line.split_once("DISPLAY ") {
                display = Some(d.trim().parse::<u32>().unwrap());
            }
        }
        let (marker, display) = (marker.unwrap(), display.unwrap());
        let before = marked(&marker);
        assert!(
            before.iter().any(|(_, c)| c == "mousepad") && before.len() >= 6,
            "{before:?}"
        );
        unsafe {
            libc::kill(child.id() as i32, signal);
        }
        let status = child.wait().unwrap();
        if signal == libc::SIGTERM {
            // The reaper's handler: everything ended, exit code 143.
            assert_eq!(status.code(), Some(143), "{name}: {status:?}");
        }
        if is_root() {
            // The namespace ends with its init, which dies with the
            // controller (the reaper, or parent-death signals).
            let t = Instant::now();
            let left = || {
                let mut l = marked(&marker);
                l.extend(before.iter().filter(|(p, _)| alive(*p)).cloned());
                l
            };
            while !left().is_empty() {
                assert!(
                    t.elapsed() < Duration::from_secs(5),
                    "{name}: left 5 s after the controller died: {:?}",
                    left()
                );
                std::thread::sleep(Duration::from_millis(20));
            }
            eprintln!(
                "{name}: all {} processes gone {:.2}s after the controller",
                before.len(),
                t.elapsed().as_secs_f64()
            );
        }
        // The next controller sweeps what is left: processes (without
        // root), the record, the folder, the display's lock and socket.
        let _p = provider(cache.path());
        assert!(marked(&marker).is_empty(), "{name}: {:?}", marked(&marker));
        let left: Vec<_> = std::fs::read_dir(cache.path().join("local"))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        assert!(left.is_empty(), "{name}: {left:?}");
        for f in [
            format!("/tmp/.X{display}-lock"),
            format!("/tmp/.X11-unix/X{display}"),
        ] {
            assert!(!Path::new(&f).exists(), "{name}: {f} was left behind");
        }
    }
}
