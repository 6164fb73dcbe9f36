//! `deskenv vm up|list|screenshot|down|view|smoke`.

use super::provider;
use crate::cli::VmOpts;
use crate::exit::Exit;
use anyhow::{bail, Context};
use controller::paths;
use controller::pool::Pool;
use controller::provider::qemu::named;
use controller::provider::reaper;
use controller::provider::Provider;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub async fn up(cache: &Path, name: &str, vm: &VmOpts) -> anyhow::Result<Exit> {
    let p = provider(cache, vm)?;
    let record = named::up(&p, name).await?;
    for n in &record.started.notes {
        eprintln!("deskenv: {n}");
    }
    println!(
        "{name}: up in {:.2}s by {} (accel {}); agent {}; pid {}",
        record.started.seconds,
        record.started.path,
        record.accel.as_str(),
        record.agent_url,
        record.pid
    );
    println!(
        "  phases: {}",
        record
            .started
            .phases
            .iter()
            .map(|(k, v)| format!("{k} {v:.2}s"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok(Exit::Ok)
}

pub fn list(cache: &Path) -> anyhow::Result<Exit> {
    let all = named::list(cache);
    if all.is_empty() {
        println!("no named VMs");
    }
    for l in all {
        println!(
            "{:<16} {:<8} pid {:<8} {:<26} {} in {:.2}s",
            l.record.name,
            if l.running { "running" } else { "exited" },
            l.record.pid,
            l.record.agent_url,
            l.record.started.path,
            l.record.started.seconds
        );
    }
    Ok(Exit::Ok)
}

pub async fn screenshot(cache: &Path, name: &str, out: &Path) -> anyhow::Result<Exit> {
    let d = named::screenshot(cache, name).await?;
    std::fs::write(out, &d.png).with_context(|| format!("writing {}", out.display()))?;
    println!(
        "{}: {}x{} PNG, {} bytes (screendump {:.1} ms, encode {:.1} ms)",
        out.display(),
        d.width,
        d.height,
        d.png.len(),
        d.dump_ms,
        d.encode_ms
    );
    Ok(Exit::Ok)
}

pub async fn down(cache: &Path, name: Option<String>, all: bool) -> anyhow::Result<Exit> {
    let names: Vec<String> = if all {
        named::list(cache)
            .into_iter()
            .map(|l| l.record.name)
            .collect()
    } else {
        name.into_iter().collect()
    };
    for n in names {
        named::down(cache, &n).await?;
        println!("{n}: down");
    }
    Ok(Exit::Ok)
}

pub async fn view(
    cache: &Path,
    name: String,
    listen: std::net::SocketAddr,
) -> anyhow::Result<Exit> {
    let all = named::list(cache);
    let Some(l) = all.into_iter().find(|l| l.record.name == name) else {
        bail!("no VM named `{name}`; `deskenv vm list` shows the running ones");
    };
    let qmp = controller::provider::qemu::qmp::Qmp::connect(&l.record.qmp, Duration::from_secs(5))
        .await?;
    let dir = paths::vms_dir(cache).join(&name);
    controller::provider::qemu::view::serve(listen, qmp, dir, name.clone(), |a| {
        println!("live view of {name}: http://{a}/ (Ctrl-C to stop)")
    })
    .await?;
    Ok(Exit::Ok)
}

/// `deskenv vm smoke`: the pool end to end.
pub async fn smoke(
    cache: &Path,
    count: usize,
    parallel: usize,
    out: Option<PathBuf>,
    o: &VmOpts,
) -> anyhow::Result<Exit> {
    let p: Arc<dyn Provider> = Arc::new(provider(cache, o)?);
    let pool = Arc::new(Pool::new(p, parallel)?);
    if let Some(d) = &out {
        std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
    }
    let t = Instant::now();
    let tasks: Vec<_> = (0..count)
        .map(|i| tokio::spawn(smoke_one(pool.clone(), i, out.clone())))
        .collect();
    let mut failed = 0;
    for t in tasks {
        match t.await? {
            Ok(line) => println!("{line}"),
            Err(e) => {
                failed += 1;
                println!("error: {e:#}");
            }
        }
    }
    println!(
        "{count} VM(s), {parallel} at a time, in {:.1}s; {} QEMU process(es) left",
        t.elapsed().as_secs_f64(),
        reaper::live()
    );
    if failed > 0 {
        bail!("{failed} of {count} VM(s) failed");
    }
    Ok(Exit::Ok)
}

/// One smoke-tested VM: its line of the report.
async fn smoke_one(pool: Arc<Pool>, i: usize, out: Option<PathBuf>) -> anyhow::Result<String> {
    let lease = pool.acquire().await?;
    let started = lease.started().clone();
    for n in &started.notes {
        eprintln!("deskenv: {n}");
    }
    let h = lease.guest().health(Duration::from_secs(5)).await?;
    let text = format!("deskenv smoke test, VM {i}\n");
    lease
        .guest()
        .put_file("/tmp/smoke.txt", text.into_bytes())
        .await?;
    let opened = lease
        .guest()
        .open("/tmp/smoke.txt", None, Duration::from_secs(60))
        .await?;
    let guest_png = lease.guest().screenshot().await?;
    let host_png = lease.screenshot().await?;
    if let Some(d) = &out {
        std::fs::write(d.join(format!("vm{i}.png")), &host_png)?;
    }
    let line = format!(
        "vm {i} ({}): {} in {:.2}s; screen {}x{}, atspi {}; opened \"{}\" in {:.1}s; screenshots: guest {} KiB, host {} KiB",
        lease.name(),
        started.path,
        started.seconds,
        h.screen.width,
        h.screen.height,
        h.atspi,
        opened.window.title,
        opened.waited_ms / 1000.0,
        guest_png.len() / 1024,
        host_png.len() / 1024
    );
    lease.release().await;
    Ok(line)
}
