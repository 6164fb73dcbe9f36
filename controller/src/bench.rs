//! `deskenv bench vm`: what the VM layer costs, medians over several runs —
//! image build (cold, from the build's manifest; cached, measured), qcow2
//! overlay creation, cold boot to a healthy desktop, restore from the
//! ready snapshot to a healthy desktop (and the ratio of the two), host
//! memory of an idle restored VM, and the guest agent's round trip through
//! the port forward.

use crate::image::{self, BuildOptions};
use crate::provider::qemu::{Lifetime, QemuConfig, QemuProvider};
use crate::provider::Machine;
use serde::Serialize;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Options of `deskenv bench vm`.
#[derive(Debug, Clone)]
pub struct VmBenchOptions {
    pub runs: usize,
    /// Cold boots are slow (about 40 s each under TCG): skip them.
    pub skip_cold: bool,
    /// Measure the cached image build with this recipe.
    pub recipe: Option<PathBuf>,
    pub rtt_samples: usize,
}

/// Summary statistics of one measurement (seconds unless named otherwise).
#[derive(Debug, Clone, Serialize)]
pub struct Stat {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub n: usize,
}

impl Stat {
    pub fn of(xs: &[f64]) -> Option<Stat> {
        if xs.is_empty() {
            return None;
        }
        let mut v = xs.to_vec();
        v.sort_by(|a, b| a.total_cmp(b));
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        Some(Stat {
            median,
            min: v[0],
            max: v[n - 1],
            n,
        })
    }

    pub fn percentile(xs: &[f64], p: f64) -> f64 {
        let mut v = xs.to_vec();
        v.sort_by(|a, b| a.total_cmp(b));
        v[((v.len() - 1) as f64 * p).round() as usize]
    }
}

/// The report.
#[derive(Debug, Clone, Serialize)]
pub struct VmBenchReport {
    pub qemu: String,
    pub accel: String,
    pub image: String,
    pub memory_mib: u32,
    pub image_build_cold_s: Option<f64>,
    pub image_build_cached_s: Option<Stat>,
    pub overlay_create_s: Option<Stat>,
    pub cold_boot_s: Option<Stat>,
    pub cold_boot_phases: Vec<(String, f64)>,
    pub snapshot_create_s: Option<f64>,
    pub snapshot_state_bytes: u64,
    pub restore_s: Option<Stat>,
    pub restore_phases_median: Vec<(String, f64)>,
    pub cold_over_restore: Option<f64>,
    pub idle_vm_rss_mib: Option<Stat>,
    pub idle_vm_pss_mib: Option<Stat>,
    pub agent_rtt_ms: Option<Stat>,
    pub agent_rtt_p95_ms: Option<f64>,
    pub host_screendump_ms: Option<Stat>,
}

fn proc_kib(pid: u32, file: &str, field: &str) -> Option<f64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/{file}")).ok()?;
    let line = text.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Runs the benchmark with `config` as the provider settings.
pub async fn run(
    image: image::Image,
    config: QemuConfig,
    cache: PathBuf,
    opts: &VmBenchOptions,
    progress: impl Fn(&str),
) -> anyhow::Result<VmBenchReport> {
    let runs = opts.runs.max(1);
    let mut r = VmBenchReport {
        qemu: String::new(),
        accel: String::new(),
        image: image.dir.display().to_string(),
        memory_mib: config.memory_mib,
        image_build_cold_s: image.manifest.build_seconds,
        image_build_cached_s: None,
        overlay_create_s: None,
        cold_boot_s: None,
        cold_boot_phases: vec![],
        snapshot_create_s: None,
        snapshot_state_bytes: 0,
        restore_s: None,
        restore_phases_median: vec![],
        cold_over_restore: None,
        idle_vm_rss_mib: None,
        idle_vm_pss_mib: None,
        agent_rtt_ms: None,
        agent_rtt_p95_ms: None,
        host_screendump_ms: None,
    };

    if let Some(recipe) = &opts.recipe {
        let mut xs = Vec::new();
        for i in 0..runs {
            let b = image::build(recipe, &cache, &BuildOptions::default())?;
            if !b.cached {
                progress(&format!(
                    "image build {i}: built from scratch in {:.1}s (not counted as cached)",
                    b.seconds
                ));
                r.image_build_cold_s = Some(b.seconds);
                continue;
            }
            xs.push(b.seconds);
        }
        r.image_build_cached_s = Stat::of(&xs);
        progress(&format!(
            "image build (cached): {:?}",
            r.image_build_cached_s
        ));
    }

    let tmp = tempfile_dir(&cache)?;
    let mut xs = Vec::new();
    for i in 0..runs.max(5) {
        let t = Instant::now();
        let out = std::process::Command::new("qemu-img")
            .args(["create", "-q", "-f", "qcow2", "-F", "qcow2", "-b"])
            .arg(image.base())
            .arg(tmp.join(format!("o{i}.qcow2")))
            .output()?;
        anyhow::ensure!(
            out.status.success(),
            "qemu-img create: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        xs.push(t.elapsed().as_secs_f64());
    }
    let _ = std::fs::remove_dir_all(&tmp);
    r.overlay_create_s = Stat::of(&xs);
    progress(&format!("overlay creation: {:?}", r.overlay_create_s));

    let provider = QemuProvider::new(image.clone(), config.clone(), cache.clone())?;
    r.qemu = provider.qemu_version().to_string();

    if !opts.skip_cold {
        let cold = QemuProvider::new(
            image.clone(),
            QemuConfig {
                use_snapshot: false,
                ..config.clone()
            },
            cache.clone(),
        )?;
        let mut xs = Vec::new();
        for i in 0..runs {
            let vm = cold
                .start_vm(&format!("bench-cold{i}"), Lifetime::Guarded)
                .await?;
            progress(&format!(
                "cold boot {i}: {:.1}s {:?}",
                vm.started().seconds,
                vm.started().phases
            ));
            xs.push(vm.started().seconds);
            r.cold_boot_phases = vm.started().phases.clone();
            r.accel = vm.accel().as_str().to_string();
            vm.stop().await;
        }
        r.cold_boot_s = Stat::of(&xs);
    }

    // The first start may have to create the snapshot: not counted.
    let first = provider.start_vm("bench-first", Lifetime::Guarded).await?;
    if first
        .started()
        .events
        .contains(&crate::provider::StartEvent::CreatedReadySnapshot)
    {
        r.snapshot_create_s = Some(first.started().seconds);
    }
    r.accel = first.accel().as_str().to_string();
    progress(&format!(
        "first start: {:.1}s ({})",
        first.started().seconds,
        first.started().notes.join("; ")
    ));
    first.stop().await;
    let (snap, _) = provider.snapshot().await?;
    if let Some(meta) = snap.meta() {
        r.snapshot_state_bytes = meta.state_bytes;
        if r.cold_boot_s.is_none() {
            if let Some(s) = meta.cold_boot_seconds() {
                r.cold_boot_s = Stat::of(&[s]);
                progress(&format!(
                    "cold boot: {s:.1}s (from the snapshot's own boot; --skip-cold)"
                ));
            }
        }
    }

    let mut restore = Vec::new();
    let mut phases: Vec<Vec<(String, f64)>> = Vec::new();
    let mut rss = Vec::new();
    let mut pss = Vec::new();
    let mut rtt = Vec::new();
    let mut dumps = Vec::new();
    for i in 0..runs {
        let vm = provider
            .start_vm(&format!("bench-restore{i}"), Lifetime::Guarded)
            .await?;
        progress(&format!(
            "restore {i}: {:.2}s {:?}",
            vm.started().seconds,
            vm.started().phases
        ));
        restore.push(vm.started().seconds);
        phases.push(vm.started().phases.clone());
        tokio::time::sleep(Duration::from_secs(3)).await;
        let pid = vm.pid().unwrap_or(0);
        if let Some(k) = proc_kib(pid, "status", "VmRSS:") {
            rss.push(k / 1024.0);
        }
        if let Some(k) = proc_kib(pid, "smaps_rollup", "Pss:") {
            pss.push(k / 1024.0);
        }
        for _ in 0..opts.rtt_samples.max(1) {
            let t = Instant::now();
            vm.guest().health(Duration::from_secs(5)).await?;
            rtt.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        for _ in 0..3 {
            let mut q = vm.qmp().await;
            if let Some(q) = q.as_mut() {
                let d =
                    crate::provider::qemu::display::screendump_png(q, vm.dump_path(), None).await?;
                dumps.push(d.dump_ms + d.encode_ms);
            }
        }
        vm.stop().await;
    }
    r.restore_s = Stat::of(&restore);
    if let Some(first) = phases.first() {
        r.restore_phases_median = first
            .iter()
            .enumerate()
            .map(|(k, (name, _))| {
                let xs: Vec<f64> = phases
                    .iter()
                    .filter_map(|p| p.get(k).map(|x| x.1))
                    .collect();
                (name.clone(), Stat::of(&xs).map(|s| s.median).unwrap_or(0.0))
            })
            .collect();
    }
    r.idle_vm_rss_mib = Stat::of(&rss);
    r.idle_vm_pss_mib = Stat::of(&pss);
    r.agent_rtt_p95_ms = (!rtt.is_empty()).then(|| Stat::percentile(&rtt, 0.95));
    r.agent_rtt_ms = Stat::of(&rtt);
    r.host_screendump_ms = Stat::of(&dumps);
    if let (Some(c), Some(rs)) = (&r.cold_boot_s, &r.restore_s) {
        r.cold_over_restore = Some(c.median / rs.median);
    }
    Ok(r)
}

fn tempfile_dir(cache: &std::path::Path) -> anyhow::Result<PathBuf> {
    let d = cache.join(format!("bench-{}", std::process::id()));
    std::fs::create_dir_all(&d)?;
    Ok(d)
}

/// The report as a table.
pub fn table(r: &VmBenchReport) -> String {
    let s = |x: &Option<Stat>, scale: f64, unit: &str| match x {
        Some(s) => format!(
            "{:>9.3}{unit}  (min {:.3}, max {:.3}, n={})",
            s.median * scale,
            s.min * scale,
            s.max * scale,
            s.n
        ),
        None => "        -".into(),
    };
    let mut out = String::new();
    out.push_str(&format!(
        "deskenv bench vm — {} — accel {} — {} MiB\nimage {}\n",
        r.qemu, r.accel, r.memory_mib, r.image
    ));
    out.push_str(&format!(
        "  image build, cold (manifest) {}\n",
        r.image_build_cold_s
            .map(|x| format!("{x:>9.1} s"))
            .unwrap_or_else(|| "        -".into())
    ));
    out.push_str(&format!(
        "  image build, cached          {}\n",
        s(&r.image_build_cached_s, 1.0, " s")
    ));
    out.push_str(&format!(
        "  overlay creation             {}\n",
        s(&r.overlay_create_s, 1000.0, " ms")
    ));
    out.push_str(&format!(
        "  cold boot to ready           {}\n",
        s(&r.cold_boot_s, 1.0, " s")
    ));
    out.push_str(&format!(
        "  restore to ready             {}\n",
        s(&r.restore_s, 1.0, " s")
    ));
    if let Some(x) = r.cold_over_restore {
        out.push_str(&format!("  cold boot / restore          {x:>9.1}x\n"));
    }
    out.push_str(&format!(
        "  restore phases (median)      {}\n",
        r.restore_phases_median
            .iter()
            .map(|(k, v)| format!("{k} {:.0} ms", v * 1000.0))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    out.push_str(&format!(
        "  snapshot state file          {:>9.1} MiB\n",
        r.snapshot_state_bytes as f64 / 1048576.0
    ));
    out.push_str(&format!(
        "  idle VM RSS                  {}\n",
        s(&r.idle_vm_rss_mib, 1.0, " MiB")
    ));
    out.push_str(&format!(
        "  idle VM PSS                  {}\n",
        s(&r.idle_vm_pss_mib, 1.0, " MiB")
    ));
    out.push_str(&format!(
        "  agent round trip (health)    {}",
        s(&r.agent_rtt_ms, 1.0, " ms")
    ));
    out.push_str(&format!(
        ", p95 {:.2} ms\n",
        r.agent_rtt_p95_ms.unwrap_or(0.0)
    ));
    out.push_str(&format!(
        "  host screendump → PNG        {}\n",
        s(&r.host_screendump_ms, 1.0, " ms")
    ));
    out
}

/// What the environment costs per episode (`deskenv bench episodes`),
/// from the results of a run of a suite, against OSWorld's fixed waits
/// (60 s after reset, 20 s before evaluation, a 2 s pause per step).
#[derive(Debug, Clone, Serialize)]
pub struct EpisodeBenchReport {
    pub episodes: usize,
    pub reset_s: Option<Stat>,
    pub setup_s: Option<Stat>,
    pub observe_ms: Option<Stat>,
    pub act_ms: Option<Stat>,
    pub settle_ms: Option<Stat>,
    /// The idle gate before postconfig and the evaluation.
    pub idle_wait_s: Option<Stat>,
    pub postconfig_s: Option<Stat>,
    pub eval_s: Option<Stat>,
    pub total_s: Option<Stat>,
    /// Per task category (the ds suite's stage), in name order.
    pub by_category: Vec<CategoryRow>,
    /// Sum over the episodes of deskenv's wall time.
    pub suite_s: f64,
    /// Sum over the same episodes of OSWorld's fixed waits alone.
    pub osworld_waits_s: f64,
    /// Environment seconds of a 15-step episode: median reset + setup +
    /// 15 × (observe + act + settle) + idle gate + postconfig + evaluation.
    pub env_15_steps_s: f64,
    /// OSWorld's fixed waits for 15 steps: 60 + 20 + 15 × 2.
    pub osworld_15_steps_s: f64,
    /// The share of a 15-step episode's wall time that is the environment,
    /// with `model_latency_s` per model call.
    pub model_latency_s: f64,
    pub env_share_15_steps: f64,
    pub osworld_env_share_15_steps: f64,
}

/// One category's episodes in [`EpisodeBenchReport`].
#[derive(Debug, Clone, Serialize)]
pub struct CategoryRow {
    /// The task's `category`, else its domain.
    pub category: String,
    pub episodes: usize,
    /// Median episode wall time.
    pub median_s: f64,
    /// Sum of the episodes' wall time.
    pub total_s: f64,
    /// Sum of OSWorld's fixed waits alone for the same episodes.
    pub osworld_waits_s: f64,
}

/// OSWorld's fixed waits for an episode of `steps` steps: 60 s after
/// reset, 20 s before evaluation, 2 s after each step.
fn osworld_waits(steps: usize) -> f64 {
    80.0 + 2.0 * steps as f64
}

pub use crate::report::{read_results, ReadResultsError};

/// Summarizes episode results (from `deskenv run`).
pub fn episodes_report(
    results: &[crate::episode::EpisodeResult],
    model_latency_s: f64,
) -> EpisodeBenchReport {
    let col = |f: &dyn Fn(&crate::episode::EpisodeResult) -> f64| {
        Stat::of(&results.iter().map(f).collect::<Vec<_>>())
    };
    let steps: Vec<&crate::episode::StepTimings> = results
        .iter()
        .flat_map(|r| r.timings.steps.iter())
        .collect();
    let step_col = |f: &dyn Fn(&crate::episode::StepTimings) -> f64| {
        Stat::of(&steps.iter().map(|s| f(s)).collect::<Vec<_>>())
    };
    let med = |s: &Option<Stat>| s.as_ref().map(|s| s.median).unwrap_or(0.0);
    let reset_s = col(&|r| r.timings.reset_s);
    let setup_s = col(&|r| r.timings.setup_s);
    let observe_ms = step_col(&|s| s.observe_ms);
    let act_ms = step_col(&|s| s.act_ms);
    let settle_ms = step_col(&|s| s.settle_ms);
    let idle_wait_s = col(&|r| r.timings.idle_wait_s);
    let postconfig_s = col(&|r| r.timings.postconfig_s);
    let eval_s = col(&|r| r.timings.eval_s);
    let mut groups: std::collections::BTreeMap<String, Vec<&crate::episode::EpisodeResult>> =
        Default::default();
    for r in results {
        let c = r.category.clone().unwrap_or_else(|| r.domain.clone());
        groups.entry(c).or_default().push(r);
    }
    let by_category = groups
        .into_iter()
        .map(|(category, rs)| {
            let totals: Vec<f64> = rs.iter().map(|r| r.timings.total_s).collect();
            CategoryRow {
                category,
                episodes: rs.len(),
                median_s: Stat::of(&totals).map(|s| s.median).unwrap_or(0.0),
                total_s: totals.iter().sum(),
                osworld_waits_s: rs.iter().map(|r| osworld_waits(r.steps_used)).sum(),
            }
        })
        .collect();
    let per_step = (med(&observe_ms) + med(&act_ms) + med(&settle_ms)) / 1000.0;
    let env_15 = med(&reset_s)
        + med(&setup_s)
        + 15.0 * per_step
        + med(&idle_wait_s)
        + med(&postconfig_s)
        + med(&eval_s);
    let osw_15 = 60.0 + 20.0 + 15.0 * 2.0;
    let model_15 = 15.0 * model_latency_s;
    EpisodeBenchReport {
        episodes: results.len(),
        suite_s: results.iter().map(|r| r.timings.total_s).sum(),
        osworld_waits_s: results.iter().map(|r| osworld_waits(r.steps_used)).sum(),
        total_s: col(&|r| r.timings.total_s),
        reset_s,
        setup_s,
        observe_ms,
        act_ms,
        settle_ms,
        idle_wait_s,
        postconfig_s,
        eval_s,
        by_category,
        env_15_steps_s: env_15,
        osworld_15_steps_s: osw_15,
        model_latency_s,
        env_share_15_steps: env_15 / (env_15 + model_15),
        osworld_env_share_15_steps: osw_15 / (osw_15 + model_15),
    }
}

/// The episode report as a table.
pub fn episodes_table(r: &EpisodeBenchReport) -> String {
    let s = |x: &Option<Stat>, unit: &str| match x {
        Some(s) => format!(
            "{:>9.3}{unit} (min {:.3}, max {:.3}, n={})",
            s.median, s.min, s.max, s.n
        ),
        None => "        -".into(),
    };
    let mut out = format!(
        "deskenv bench episodes — {} episode(s), medians\n",
        r.episodes
    );
    for (label, stat, unit) in [
        ("reset (restore)", &r.reset_s, " s"),
        ("setup", &r.setup_s, " s"),
        ("observe per step", &r.observe_ms, " ms"),
        ("act per step", &r.act_ms, " ms"),
        ("settle per step", &r.settle_ms, " ms"),
        ("idle gate", &r.idle_wait_s, " s"),
        ("postconfig", &r.postconfig_s, " s"),
        ("evaluation", &r.eval_s, " s"),
        ("episode total", &r.total_s, " s"),
    ] {
        out.push_str(&format!("  {label:<24} {}\n", s(stat, unit)));
    }
    if r.by_category.len() > 1 {
        out.push_str(&format!(
            "  {:<16} {:>8} {:>10} {:>10} {:>14}\n",
            "category", "episodes", "median s", "total s", "OSWorld waits s"
        ));
        for c in &r.by_category {
            out.push_str(&format!(
                "  {:<16} {:>8} {:>10.1} {:>10.1} {:>14.0}\n",
                c.category, c.episodes, c.median_s, c.total_s, c.osworld_waits_s
            ));
        }
    }
    out.push_str(&format!(
        "  the suite: {:.1} s in all; OSWorld's fixed waits alone for the same episodes: {:.0} s ({:.1}x)\n",
        r.suite_s,
        r.osworld_waits_s,
        r.osworld_waits_s / r.suite_s.max(1e-9)
    ));
    out.push_str(&format!(
        "  a 15-step episode: environment {:.1} s vs OSWorld's waits {:.0} s; with {:.1} s per model call the environment is {:.0}% of the wall time (OSWorld: {:.0}%)\n",
        r.env_15_steps_s,
        r.osworld_15_steps_s,
        r.model_latency_s,
        100.0 * r.env_share_15_steps,
        100.0 * r.osworld_env_share_15_steps
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::episode::{EndReason, EpisodeResult, EpisodeTimings, StepTimings};

    fn result(steps: usize, total: f64) -> EpisodeResult {
        let info = crate::episode::TaskInfo {
            instruction: String::new(),
            id: "t".into(),
            domain: "d".into(),
            ..Default::default()
        };
        EpisodeResult {
            score: 1.0,
            success: true,
            steps_used: steps,
            seed: 1,
            timings: EpisodeTimings {
                reset_s: 1.0,
                setup_s: 2.0,
                steps: (0..steps)
                    .map(|_| StepTimings {
                        observe_ms: 100.0,
                        agent_ms: 0.0,
                        act_ms: 50.0,
                        settle_ms: 350.0,
                    })
                    .collect(),
                postconfig_s: 0.0,
                eval_s: 0.5,
                total_s: total,
                ..Default::default()
            },
            ..EpisodeResult::new(info, 15, EndReason::Done)
        }
    }

    #[test]
    fn episode_report_compares_with_osworld_waits() {
        let r = episodes_report(&[result(2, 5.0), result(4, 7.0)], 5.0);
        assert_eq!(r.episodes, 2);
        assert_eq!(r.suite_s, 12.0);
        assert_eq!(r.osworld_waits_s, 80.0 * 2.0 + 2.0 * 6.0);
        // 1 + 2 + 15 × 0.5 + 0 + 0.5
        assert!(
            (r.env_15_steps_s - 11.0).abs() < 1e-9,
            "{}",
            r.env_15_steps_s
        );
        assert_eq!(r.osworld_15_steps_s, 110.0);
        assert!((r.env_share_15_steps - 11.0 / 86.0).abs() < 1e-9);
        assert!(episodes_table(&r).contains("(14.3x)"));
        assert_eq!(r.by_category.len(), 1);
        assert_eq!(r.by_category[0].category, "d");
        assert_eq!(Stat::of(&[3.0, 1.0, 2.0]).unwrap().median, 2.0);
        assert_eq!(Stat::of(&[4.0, 1.0, 2.0, 3.0]).unwrap().median, 2.5);
    }

    #[test]
    fn episode_report_splits_by_category_and_counts_the_idle_gate() {
        let mut a = result(2, 5.0);
        a.category = Some("wrangling".into());
        a.timings.idle_wait_s = 4.0;
        let mut b = result(4, 9.0);
        b.category = Some("modelling".into());
        b.timings.idle_wait_s = 4.0;
        let r = episodes_report(&[a.clone(), b, a], 5.0);
        let names: Vec<_> = r.by_category.iter().map(|c| c.category.as_str()).collect();
        assert_eq!(names, ["modelling", "wrangling"]);
        assert_eq!(r.by_category[1].episodes, 2);
        assert_eq!(r.by_category[1].total_s, 10.0);
        assert_eq!(r.by_category[1].osworld_waits_s, 2.0 * 84.0);
        // 1 + 2 + 15 × 0.5 + 4 + 0 + 0.5
        assert!(
            (r.env_15_steps_s - 15.0).abs() < 1e-9,
            "{}",
            r.env_15_steps_s
        );
        let t = episodes_table(&r);
        assert!(t.contains("idle gate") && t.contains("modelling"), "{t}");
    }

    #[test]
    fn read_results_takes_the_oracle_episodes_and_names_bad_files() {
        let dir = tempfile::tempdir().unwrap();
        let write = |rel: &str, r: &EpisodeResult| {
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, serde_json::to_string(r).unwrap()).unwrap();
        };
        let mut noop = result(1, 2.0);
        noop.task_id = "t.noop".into();
        write("seed-1/a/t/result.json", &result(2, 5.0));
        write("seed-1/a/t.noop/result.json", &noop);
        let rs = read_results(&[dir.path().to_path_buf()], true).unwrap();
        assert_eq!(rs.len(), 1);
        assert_eq!(
            read_results(&[dir.path().to_path_buf()], false)
                .unwrap()
                .len(),
            2
        );

        let missing = dir.path().join("nope");
        let e = read_results(&[missing], true).unwrap_err().to_string();
        assert!(e.contains("nope") && e.contains("not a folder"), "{e}");
        let empty = tempfile::tempdir().unwrap();
        let e = read_results(&[empty.path().to_path_buf()], true)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no result.json"), "{e}");
        std::fs::write(dir.path().join("seed-1/a/t/result.json"), "{").unwrap();
        let e = read_results(&[dir.path().to_path_buf()], true)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("result.json") && e.contains("not an episode result"),
            "{e}"
        );
    }
}
