//! The bodies of `deskenv`'s commands, one module per command group;
//! [`dispatch`] picks one. Each returns the [`Exit`] status it ends with.

mod bench;
mod compare;
mod image;
mod report;
mod run;
mod serve;
mod snapshot;
mod tasks;
mod vm;

use crate::cli::{BenchCmd, MachineArgs, SnapshotCmd, TasksCmd, Top, VmCmd, VmOpts};
use crate::exit::Exit;
use anyhow::bail;
use controller::image::Image;
use controller::provider::qemu::{QemuConfig, QemuProvider};
use controller::provider::Provider;
use std::path::Path;
use std::sync::Arc;

/// Runs `command` with `cache` as the cache folder.
pub async fn dispatch(cache: &Path, command: Top) -> anyhow::Result<Exit> {
    match command {
        Top::Image(c) => image::command(cache, c),
        Top::Vm(VmCmd::Up { name, vm }) => vm::up(cache, &name, &vm).await,
        Top::Vm(VmCmd::List) => vm::list(cache),
        Top::Vm(VmCmd::Screenshot { name, out }) => vm::screenshot(cache, &name, &out).await,
        Top::Vm(VmCmd::Down { name, all }) => vm::down(cache, name, all).await,
        Top::Vm(VmCmd::View { name, listen }) => vm::view(cache, name, listen).await,
        Top::Vm(VmCmd::Smoke {
            count,
            parallel,
            out,
            vm,
        }) => vm::smoke(cache, count, parallel, out, &vm).await,
        Top::Snapshot(SnapshotCmd::List) => snapshot::list(cache),
        Top::Snapshot(SnapshotCmd::Clear) => snapshot::clear(cache),
        Top::Run(args) => run::command(cache, args).await,
        Top::Serve(args) => serve::command(cache, args).await,
        Top::Compare(args) => compare::command(args),
        Top::Report(args) => report::command(args),
        Top::Doctor { json, vm } => doctor(cache, json, &vm),
        Top::Tasks(TasksCmd::Validate { paths, quiet }) => tasks::validate(&paths, quiet),
        Top::Tasks(TasksCmd::List { paths }) => tasks::list(&paths),
        Top::Tasks(TasksCmd::Check(args)) => tasks::check_honest(cache, args).await,
        Top::Bench(BenchCmd::Episodes {
            tasks,
            from,
            model_latency,
            frames,
            json,
            machines,
        }) => bench::episodes(cache, tasks, from, model_latency, frames, json, machines).await,
        Top::Bench(BenchCmd::Observe {
            samples,
            a11y_samples,
            restores,
            json,
            vm,
        }) => bench::observe(cache, samples, a11y_samples, restores, json, &vm).await,
        Top::Bench(BenchCmd::Vm {
            runs,
            skip_cold,
            recipe,
            rtt_samples,
            json,
            vm,
        }) => {
            let opts = controller::bench::VmBenchOptions {
                runs,
                skip_cold,
                recipe,
                rtt_samples,
            };
            bench::vm(cache, opts, json, &vm).await
        }
    }
}

/// `deskenv doctor`.
fn doctor(cache: &Path, json: bool, vm: &VmOpts) -> anyhow::Result<Exit> {
    let r = controller::doctor::check(cache, qemu_config(vm), vm.image.as_deref());
    if json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        print!("{}", controller::doctor::text(&r));
    }
    Ok(if r.problems.is_empty() {
        Exit::Ok
    } else {
        Exit::Usage
    })
}

fn open_image(cache: &Path, dir: &Option<std::path::PathBuf>) -> anyhow::Result<Image> {
    Ok(match dir {
        Some(d) => Image::open(d)?,
        None => Image::latest(cache)?,
    })
}

/// The QEMU settings the VM flags name.
pub(crate) fn qemu_config(o: &VmOpts) -> QemuConfig {
    QemuConfig {
        binary: o.qemu.clone(),
        accel: o.accel.into(),
        memory_mib: o.memory,
        use_snapshot: !o.cold,
        ram_file: !o.zstd_state,
        ..QemuConfig::default()
    }
}

pub(crate) fn provider(cache: &Path, o: &VmOpts) -> anyhow::Result<QemuProvider> {
    let image = open_image(cache, &o.image)?;
    Ok(QemuProvider::new(
        image,
        qemu_config(o),
        cache.to_path_buf(),
    )?)
}

/// The provider `--provider` names, and what run.json records about it.
fn make_provider(
    m: &MachineArgs,
    cache: &Path,
) -> anyhow::Result<(Arc<dyn Provider>, serde_json::Value)> {
    let o = &m.vm;
    match m.provider {
        crate::cli::ProviderKind::Qemu => {
            let p = provider(cache, o)?;
            let environment = serde_json::json!({
                "provider": "qemu", "image": p.image.dir, "image_digest": p.image.digest(),
                "qemu": p.qemu_version(), "memory_mib": o.memory, "snapshot": !o.cold,
            });
            Ok((Arc::new(p), environment))
        }
        crate::cli::ProviderKind::Local => {
            use controller::provider::local::{LocalConfig, LocalProvider};
            let Some(agent_bin) = LocalProvider::find_agent_bin() else {
                bail!("--provider local: the guest agent binary (deskenv-agent) was not found next to deskenv or in target/release or target/debug; build it with `cargo build --release -p deskenv-guest-agent`")
            };
            let p = LocalProvider::new(LocalConfig::default_for(agent_bin), cache)?;
            for w in p.warnings() {
                eprintln!("deskenv: local provider: {w}");
            }
            let environment = p.describe();
            Ok((Arc::new(p), environment))
        }
    }
}

/// Writes `report` as JSON to `path`.
fn write_json(path: &Path, report: &impl serde::Serialize) -> anyhow::Result<()> {
    use anyhow::Context;
    std::fs::write(path, serde_json::to_string_pretty(report)?)
        .with_context(|| format!("writing {}", path.display()))
}
