//! The fault-injection suite, on real VMs (ignored unless run with
//! `--include-ignored`, after the image is built): each fault is injected at a named point and the
//! outcome asserted. An environment fault is never a score: it is retried
//! on a fresh machine, or, out of retries, reported apart (`env_error`,
//! its cause named) with exit status 3, and a rerun runs only that episode.
//!
//! Faults are injected through `DESKENV_FAULTS` (see
//! `controller::episode::faults`) and, for a KVM that does not work, a
//! wrapper passed as `--qemu`. Each test has its own cache folder whose
//! `images/` and `snapshots/` are links to the shared cache's, so the
//! accelerator probe and the VM folders are its own while the image and the
//! ready snapshot are shared.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tasks/examples")
}

fn example(id: &str) -> String {
    examples().join(format!("{id}.json")).display().to_string()
}

/// A cache of the test's own over the shared image and snapshots.
struct Cache {
    dir: tempfile::TempDir,
}

impl Cache {
    fn new() -> Cache {
        let shared = controller::paths::cache_dir(None);
        let dir = tempfile::tempdir().unwrap();
        for sub in ["images", "snapshots"] {
            std::fs::create_dir_all(shared.join(sub)).unwrap();
            std::os::unix::fs::symlink(shared.join(sub), dir.path().join(sub)).unwrap();
        }
        Cache { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn vm_dirs(&self) -> Vec<PathBuf> {
        std::fs::read_dir(self.path().join("vms"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .collect()
    }
}

fn deskenv(cache: &Cache) -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_deskenv"));
    c.arg("--cache")
        .arg(cache.path())
        .env_remove("DESKENV_FAULTS");
    c
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `deskenv run` with the scripted agent on these example tasks.
fn run(cache: &Cache, tasks: &[&str], out: &Path, faults: &str, extra: &[&str]) -> Output {
    let files: Vec<String> = tasks.iter().map(|t| example(t)).collect();
    run_files(cache, &files, out, faults, extra)
}

/// `deskenv run` with the scripted agent on these task files.
fn run_files(cache: &Cache, files: &[String], out: &Path, faults: &str, extra: &[&str]) -> Output {
    let mut c = deskenv(cache);
    c.args(["run", "--agent", "scripted", "--out"])
        .arg(out)
        .arg("--tasks")
        .args(files)
        .args(extra);
    if !faults.is_empty() {
        c.env("DESKENV_FAULTS", faults);
    }
    // Each test's cache has no KVM probe of its own: only the KVM test
    // tries KVM; the others go straight to TCG.
    if !extra.contains(&"--accel") {
        c.args(["--accel", "tcg"]);
    }
    let t = Instant::now();
    let o = c.output().unwrap();
    eprintln!(
        "--- deskenv run ({faults}) took {:.1}s, {}:\n{}",
        t.elapsed().as_secs_f64(),
        o.status,
        text(&o)
    );
    o
}

fn results(out: &Path) -> Vec<(PathBuf, serde_json::Value)> {
    let mut found: Vec<_> = files_named(out, &|n| n == "result.json")
        .into_iter()
        // A failed attempt's files are kept under attempts/: not results.
        .filter(|p| !p.components().any(|c| c.as_os_str() == "attempts"))
        .map(|p| {
            let v = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
            (p, v)
        })
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found
}

fn result_of(out: &Path, task: &str) -> serde_json::Value {
    results(out)
        .into_iter()
        .find(|(_, r)| r["task_id"] == task)
        .unwrap_or_else(|| panic!("no result for {task} under {}", out.display()))
        .1
}

fn files_named(root: &Path, pred: &dyn Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if pred(&e.file_name().to_string_lossy()) {
                found.push(p);
            }
        }
    }
    found
}

fn kvm_opens() -> bool {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/kvm")
        .is_ok()
}

/// A QEMU wrapper that makes KVM fail the way it fails on these hosts:
/// `abort` dies at start like QEMU's MSR assertion, `hang` starts a guest
/// that never runs (no serial output: the kernel-entry hang).
fn qemu_wrapper(dir: &Path, how: &str) -> PathBuf {
    let path = dir.join(format!("qemu-kvm-{how}"));
    let on_kvm = match how {
        "abort" => {
            "echo 'qemu-system-x86_64: error: failed to set MSR 0x10a to 0xc000069' >&2\n    \
             echo \"qemu-system-x86_64: target/i386/kvm/kvm.c:3849: kvm_buf_set_msrs: Assertion failed.\" >&2\n    \
             kill -ABRT $$"
        }
        _ => "set -- \"$@\" -S",
    };
    let script = format!(
        r#"#!/bin/sh
# deskenv fault suite: KVM that {how}s.
kvm=""
for a in "$@"; do
  shift
  if [ "$prev" = "-accel" ] && [ "$a" = "kvm" ]; then a=tcg; kvm=1; fi
  set -- "$@" "$a"
  prev=$a
done
if [ -n "$kvm" ]; then
    {on_kvm}
fi
exec qemu-system-x86_64 "$@"
"#
    );
    std::fs::write(&path, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// KVM unusable in both ways: the run falls back to TCG, says so once,
/// succeeds, and `doctor` tells why from the cached probe.
#[test]
#[ignore = "needs a VM image (deskenv image build): scripts/test.sh runs it with --include-ignored"]
fn kvm_that_aborts_or_hangs_falls_back_to_tcg_and_doctor_says_why() {
    if !kvm_opens() {
        eprintln!("skipped: /dev/kvm does not open here, so --accel auto never tries KVM");
        return;
    }
    for (how, says) in [
        ("abort", "failed to set MSR 0x10a"),
        ("hang", "printed nothing on its serial console"),
    ] {
        let cache = Cache::new();
        let qemu = qemu_wrapper(cache.path(), how);
        let out = cache.path().join("out");
        let t = Instant::now();
        let o = run(
            &cache,
            &["editor-save-text"],
            &out,
            "",
            &["--accel", "auto", "--qemu", qemu.to_str().unwrap()],
        );
        let all = text(&o);
        assert!(o.status.success(), "KVM {how}: {all}");
        assert_eq!(result_of(&out, "editor-save-text")["success"], true);
        assert_eq!(all.matches("falling back to TCG").count(), 1, "{all}");
        assert!(all.contains(says), "KVM {how}: {all}");
        eprintln!(
            "KVM that {how}s: fell back and solved the task in {:.1}s",
            t.elapsed().as_secs_f64()
        );
        let probe: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(cache.path().join("accel.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(probe["kvm_works"], false, "{probe}");

        let d = deskenv(&cache)
            .args(["doctor", "--qemu", qemu.to_str().unwrap()])
            .output()
            .unwrap();
        let report = text(&d);
        assert!(report.contains("accelerator  tcg"), "{report}");
        assert!(report.contains(says), "{report}");
        assert!(report.contains("restoring the ready snapshot"), "{report}");

        // The next run believes the probe: no second try of KVM. One mode
        // shows it (the probe's record is the same for both).
        if how != "abort" {
            continue;
        }
        let o = run(
            &cache,
            &["editor-save-text"],
            &cache.path().join("out2"),
            "",
            &["--accel", "auto", "--qemu", qemu.to_str().unwrap()],
        );
        assert!(o.status.success(), "{}", text(&o));
        assert!(!text(&o).contains("falling back"), "{}", text(&o));
        assert!(
            text(&o).contains("KVM failed before on this host"),
            "{}",
            text(&o)
        );
    }
}

/// QEMU SIGKILLed during setup, during a step and during the evaluation:
/// each episode is retried on a fresh VM and succeeds; the failed attempt
/// is in result.json with the signal named.
#[test]
#[ignore = "needs a VM image (deskenv image build): scripts/test.sh runs it with --include-ignored"]
fn qemu_killed_in_setup_step_or_evaluation_is_retried_on_a_fresh_vm() {
    let cache = Cache::new();
    let out = cache.path().join("out");
    let faults = "editor-save-text/setup=kill_machine;sqlite-export-csv/step=kill_machine;matplotlib-bar-chart/eval=kill_machine";
    let o = run(
        &cache,
        &[
            "editor-save-text",
            "sqlite-export-csv",
            "matplotlib-bar-chart",
        ],
        &out,
        faults,
        &[],
    );
    assert!(o.status.success(), "{}", text(&o));
    for task in [
        "editor-save-text",
        "sqlite-export-csv",
        "matplotlib-bar-chart",
    ] {
        let r = result_of(&out, task);
        assert_eq!(r["status"], "scored", "{task}: {r:#}");
        assert_eq!(r["success"], true, "{task}: {r:#}");
        let attempts = r["attempts"].as_array().unwrap();
        assert_eq!(attempts.len(), 1, "{task}: {r:#}");
        assert_eq!(attempts[0]["status"], "env_error");
        let cause = attempts[0]["cause"].as_str().unwrap();
        assert!(
            cause.contains("killed by signal 9 (SIGKILL)"),
            "{task}: {cause}"
        );
        assert!(cause.contains("QEMU (pid"), "{task}: {cause}");
        eprintln!("{task}: attempt 1: {cause}");
    }
    assert!(cache.vm_dirs().is_empty(), "{:?}", cache.vm_dirs());
}

/// Out of retries, a killed VM is an `env_error` with the signal named,
/// apart in the summary, exit status 3; a rerun runs only that episode.
#[test]
#[ignore = "needs a VM image (deskenv image build): scripts/test.sh runs it with --include-ignored"]
fn without_retries_an_environment_fault_is_reported_apart_and_rerun() {
    let cache = Cache::new();
    let out = cache.path().join("out");
    let tasks = ["editor-save-text", "sqlite-export-csv"];
    let o = run(
        &cache,
        &tasks,
        &out,
        "sqlite-export-csv/step=kill_machine",
        &["--retries", "0"],
    );
    let all = text(&o);
    assert_eq!(o.status.code(), Some(3), "{all}");
    let r = result_of(&out, "sqlite-export-csv");
    assert_eq!(r["status"], "env_error", "{r:#}");
    assert_eq!(r["end"], "env_error", "{r:#}");
    assert!(
        r["cause"]
            .as_str()
            .unwrap()
            .contains("killed by signal 9 (SIGKILL)"),
        "{r:#}"
    );
    assert_eq!(result_of(&out, "editor-save-text")["success"], true);
    // The summary: 2 tasks, 1 scored, 1 success (100 % of scored), 1
    // environment error, and the episode named under "without a score".
    let row = all
        .lines()
        .find(|l| l.starts_with("15 steps"))
        .unwrap_or_else(|| panic!("no summary row: {all}"));
    let cols: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        cols[2..6],
        ["2", "1", "1", "100.0%"],
        "tasks scored success rate: {row}"
    );
    assert_eq!(cols[cols.len() - 2], "1", "env errors: {row}");
    assert!(all.contains("without a score (not in the rates)"), "{all}");
    let run_json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(run_json["summary"][0]["env_error"], 1, "{run_json:#}");
    assert_eq!(run_json["summary"][0]["scored"], 1, "{run_json:#}");

    let finished = results(&out)
        .into_iter()
        .find(|(_, r)| r["task_id"] == "editor-save-text")
        .unwrap()
        .0;
    let mtime = std::fs::metadata(&finished).unwrap().modified().unwrap();
    let o = run(&cache, &tasks, &out, "", &["--retries", "0"]);
    let all = text(&o);
    assert!(o.status.success(), "{all}");
    assert_eq!(all.matches("finished before, skipped").count(), 1, "{all}");
    assert!(all.contains("the earlier result has no score"), "{all}");
    assert_eq!(result_of(&out, "sqlite-export-csv")["success"], true);
    assert_eq!(
        std::fs::metadata(&finished).unwrap().modified().unwrap(),
        mtime
    );
}

/// The guest agent SIGKILLed and SIGSTOPped inside the VM: the episode is
/// retried on a fresh VM, within the call timeouts, and succeeds; without
/// retries the cause names the guest agent.
#[test]
#[ignore = "needs a VM image (deskenv image build): scripts/test.sh runs it with --include-ignored"]
fn a_killed_or_stopped_guest_agent_is_an_environment_fault() {
    let cache = Cache::new();
    for (signal, limit) in [("KILL", 120), ("STOP", 240)] {
        let out = cache.path().join(format!("out-{signal}"));
        let faults = format!("step=guest:pkill -{signal} -x deskenv-agent");
        let t = Instant::now();
        let o = run(&cache, &["editor-save-text"], &out, &faults, &[]);
        let took = t.elapsed();
        assert!(o.status.success(), "{}", text(&o));
        let r = result_of(&out, "editor-save-text");
        assert_eq!(r["success"], true, "{r:#}");
        let cause = r["attempts"][0]["cause"].as_str().unwrap_or_default();
        assert!(cause.contains("guest agent"), "SIG{signal}: {r:#}");
        assert!(took < Duration::from_secs(limit), "SIG{signal}: {took:?}");
        eprintln!("guest agent SIG{signal}: recovered in {took:?}: {cause}");
    }
    let out = cache.path().join("out-stop-no-retry");
    let o = run(
        &cache,
        &["editor-save-text"],
        &out,
        "step=guest:pkill -STOP -x deskenv-agent",
        &["--retries", "0"],
    );
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let r = result_of(&out, "editor-save-text");
    assert_eq!(r["status"], "env_error");
    let cause = r["cause"].as_str().unwrap();
    assert!(
        cause.contains("does not answer /v1/health") && cause.contains("QMP answers"),
        "{cause}"
    );
}

/// A hung application (SIGSTOP) during a11y observations: the steps
/// complete with a truncated tree naming it, and the task still scores.
#[test]
#[ignore = "needs a VM image (deskenv image build): scripts/test.sh runs it with --include-ignored"]
fn a_hung_application_truncates_the_tree_and_the_episode_goes_on() {
    let cache = Cache::new();
    let out = cache.path().join("out");
    let o = run(
        &cache,
        &["editor-save-text"],
        &out,
        "step=guest:pkill -STOP -x xfce4-panel",
        &["--observation", "screenshot_a11y_tree"],
    );
    assert!(o.status.success(), "{}", text(&o));
    let (path, r) = results(&out).remove(0);
    assert_eq!(r["success"], true, "{r:#}");
    let traj = std::fs::read_to_string(path.parent().unwrap().join("traj.jsonl")).unwrap();
    let truncated: Vec<serde_json::Value> = traj
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["a11y_truncated"].is_string())
        .collect();
    assert!(!truncated.is_empty(), "no truncated tree: {traj}");
    let reason = truncated[0]["a11y_truncated"].as_str().unwrap();
    assert!(reason.contains("xfce4-panel"), "{reason}");
}

/// The controller SIGKILLed mid-run: its VMs die with it (parent-death
/// signal); the next start leaves no VM folder behind, and the rerun
/// completes the suite without rewriting a finished result.
#[test]
#[ignore = "needs a VM image (deskenv image build): scripts/test.sh runs it with --include-ignored"]
fn a_sigkilled_controller_leaves_nothing_and_the_rerun_completes() {
    let cache = Cache::new();
    let out = cache.path().join("out");
    let tasks = [
        "editor-save-text",
        "sqlite-export-csv",
        "matplotlib-bar-chart",
    ];
    let mut child = deskenv(&cache)
        .args(["run", "--agent", "scripted", "--out"])
        .arg(&out)
        .arg("--tasks")
        .args(tasks.iter().map(|t| example(t)))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(600);
    while results(&out).is_empty() || cache.vm_dirs().is_empty() {
        assert!(Instant::now() < deadline, "no result and VM in time");
        std::thread::sleep(Duration::from_millis(100));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before = results(&out);
    assert!(before.len() < 3, "{} results", before.len());
    let qemu_of_run = |dirs: &[PathBuf]| -> Vec<u32> {
        dirs.iter()
            .filter_map(|d| std::fs::read_to_string(d.join("owner.json")).ok())
            .filter_map(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .filter_map(|v| v["qemu_pid"].as_u64())
            .map(|p| p as u32)
            .filter(|&p| {
                controller::provider::reaper::alive(p) && controller::provider::reaper::is_qemu(p)
            })
            .collect()
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while !qemu_of_run(&cache.vm_dirs()).is_empty() {
        assert!(Instant::now() < deadline, "QEMU outlived its controller");
        std::thread::sleep(Duration::from_millis(100));
    }
    let mtimes: Vec<_> = before
        .iter()
        .map(|(p, _)| std::fs::metadata(p).unwrap().modified().unwrap())
        .collect();
    let o = run(&cache, &tasks, &out, "", &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(results(&out).len(), 3);
    for ((p, _), m) in before.iter().zip(mtimes) {
        assert_eq!(std::fs::metadata(p).unwrap().modified().unwrap(), m);
    }
    assert!(cache.vm_dirs().is_empty(), "{:?}", cache.vm_dirs());
    let tmp = files_named(&out, &|n| n.ends_with(".tmp"));
    assert!(tmp.is_empty(), "{tmp:?}");
}

/// The output folder's disk full: a clear error naming the path, exit
/// status 3, and no result.json (whole or truncated) and no temp file left.
#[test]
#[ignore = "needs a VM image (deskenv image build): scripts/test.sh runs it with --include-ignored"]
fn a_full_output_disk_is_a_clear_error_and_leaves_no_partial_result() {
    let cache = Cache::new();
    let out = cache.path().join("small");
    std::fs::create_dir_all(&out).unwrap();
    let mount = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=160k", "deskenv-test-full"])
        .arg(&out)
        .status()
        .unwrap();
    assert!(mount.success(), "mounting a small tmpfs (needs root)");
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg(&self.0).status();
        }
    }
    let _unmount = Unmount(out.clone());
    let o = run(&cache, &["editor-save-text"], &out, "", &["--retries", "0"]);
    let all = text(&o);
    assert_eq!(o.status.code(), Some(3), "{all}");
    assert!(all.contains("No space left on device"), "{all}");
    assert!(all.contains(out.to_str().unwrap()), "{all}");
    let partial = files_named(&out, &|n| n.ends_with(".tmp"));
    assert!(partial.is_empty(), "{partial:?}");
    // A result.json that did fit is whole, and says there is no score.
    for (p, r) in results(&out) {
        assert_eq!(r["status"], "env_error", "{}: {r:#}", p.display());
    }
    assert!(cache.vm_dirs().is_empty(), "{:?}", cache.vm_dirs());
}

/// The idle gate: a solution that starts a 10 s CPU-bound job in a
/// terminal and says DONE at once scores 1.0, because the evaluation
/// waited for the guest to be idle; result.json shows the wait.
#[test]
#[ignore = "needs a VM image (deskenv image build): scripts/test.sh runs it with --include-ignored"]
fn the_evaluation_waits_for_a_long_running_command() {
    let cache = Cache::new();
    let out = cache.path().join("out");
    let task = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tasks/busy-job-terminal.json");
    let o = run_files(&cache, &[task.display().to_string()], &out, "", &[]);
    assert!(o.status.success(), "{}", text(&o));
    let r = result_of(&out, "busy-job-terminal");
    assert_eq!(r["success"], true, "{r:#}");
    let waited = r["timings"]["idle_wait_s"].as_f64().unwrap();
    assert!(waited > 5.0, "waited {waited} s: {r:#}");
    assert_eq!(r["timings"]["idle"], true, "{r:#}");
    eprintln!("idle gate waited {waited:.1} s for the job");
}

/// Machines that fail to start the same way twice in a row stop the run
/// with that reason (exit status 3) instead of failing every task.
#[test]
#[ignore = "needs a VM image (deskenv image build): scripts/test.sh runs it with --include-ignored"]
fn starts_that_fail_the_same_way_twice_stop_the_run() {
    let cache = Cache::new();
    let out = cache.path().join("out");
    let o = run(
        &cache,
        &[
            "editor-save-text",
            "sqlite-export-csv",
            "matplotlib-bar-chart",
        ],
        &out,
        "",
        &["--accel", "tcg", "--qemu", "/bin/false"],
    );
    let all = text(&o);
    assert_eq!(o.status.code(), Some(3), "{all}");
    assert!(
        all.contains("the run stopped early: machines failed to start twice in a row the same way"),
        "{all}"
    );
    assert!(all.contains("exit code 1"), "{all}");
    assert!(all.contains("2 episode(s) not run"), "{all}");
    let rs = results(&out);
    assert_eq!(rs.len(), 1, "{all}");
    assert_eq!(rs[0].1["status"], "env_error");
    assert_eq!(rs[0].1["attempts"].as_array().unwrap().len(), 1);
    assert!(cache.vm_dirs().is_empty(), "{:?}", cache.vm_dirs());
}
