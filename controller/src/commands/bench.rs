//! `deskenv bench episodes|vm`.

use super::{open_image, write_json};
use crate::cli::{defaults, MachineArgs, RunArgs, VmOpts};
use crate::exit::Exit;
use controller::bench;
use controller::provider::qemu::{QemuConfig, QemuProvider};
use std::path::{Path, PathBuf};

/// `deskenv bench episodes`: `deskenv run` with the scripted agent at
/// run's defaults, into a temporary folder, then the overhead report; or,
/// with `--from`, the report on results already on disk.
pub async fn episodes(
    cache: &Path,
    tasks: Vec<PathBuf>,
    from: Vec<PathBuf>,
    model_latency: f64,
    frames: controller::episode::Frames,
    json: Option<PathBuf>,
    machines: MachineArgs,
) -> anyhow::Result<Exit> {
    if !from.is_empty() {
        let results = bench::read_results(&from, true)?;
        let report = bench::episodes_report(&results, model_latency);
        print!("{}", bench::episodes_table(&report));
        if let Some(p) = json {
            write_json(&p, &report)?;
        }
        return Ok(Exit::Ok);
    }
    let out = std::env::temp_dir().join(format!("deskenv-bench-episodes-{}", std::process::id()));
    let args = RunArgs {
        tasks,
        agent: defaults(),
        episode: crate::cli::EpisodeArgs {
            frames,
            ..defaults()
        },
        parallel: 1,
        retries: 0,
        repeats: 1,
        vary_seed: false,
        checkpoints: false,
        record: None,
        out: out.clone(),
        machines,
    };
    let outcome = super::run::run_tasks(cache, args).await?;
    let results: Vec<_> = outcome.finished.into_iter().map(|f| f.result).collect();
    let _ = std::fs::remove_dir_all(&out);
    let report = bench::episodes_report(&results, model_latency);
    print!("{}", bench::episodes_table(&report));
    if let Some(p) = json {
        write_json(&p, &report)?;
    }
    Ok(Exit::Ok)
}

/// `deskenv bench vm`.
pub async fn vm(
    cache: &Path,
    opts: bench::VmBenchOptions,
    json: Option<PathBuf>,
    vm: &VmOpts,
) -> anyhow::Result<Exit> {
    let image = open_image(cache, &vm.image)?;
    let config = QemuConfig {
        accel: vm.accel.into(),
        memory_mib: vm.memory,
        ram_file: !vm.zstd_state,
        ..QemuConfig::default()
    };
    let report = bench::run(image, config, cache.to_path_buf(), &opts, |m| {
        eprintln!("bench: {m}")
    })
    .await?;
    print!("{}", bench::table(&report));
    if let Some(p) = json {
        write_json(&p, &report)?;
    }
    Ok(Exit::Ok)
}

/// `deskenv bench observe`.
pub async fn observe(
    cache: &Path,
    samples: usize,
    a11y_samples: usize,
    restores: usize,
    json: Option<PathBuf>,
    vm: &VmOpts,
) -> anyhow::Result<Exit> {
    let provider = super::provider(cache, vm)?;
    let image = open_image(cache, &vm.image)?;
    let zstd = QemuProvider::new(
        image,
        QemuConfig {
            ram_file: false,
            ..super::qemu_config(vm)
        },
        cache.to_path_buf(),
    )?;
    let report =
        controller::bench_observe::run(&provider, &zstd, samples, a11y_samples, restores, |m| {
            eprintln!("bench: {m}")
        })
        .await?;
    print!("{}", controller::bench_observe::table(&report));
    if let Some(p) = json {
        write_json(&p, &report)?;
    }
    Ok(Exit::Ok)
}
