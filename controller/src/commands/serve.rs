//! `deskenv serve`: check the tasks, start the pool, serve the HTTP API.

use super::make_provider;
use crate::cli::{ProviderKind, ServeArgs};
use crate::exit::Exit;
use anyhow::{bail, Context};
use controller::pool::Pool;
use controller::serve::{self, ServeConfig};
use controller::task::{CheckOptions, LoadedTask};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

pub async fn command(cache: &Path, a: ServeArgs) -> anyhow::Result<Exit> {
    let report = super::tasks::check(&a.tasks, CheckOptions::default())?;
    unique_ids(report.tasks.iter().map(|c| &c.task))?;
    // Tasks that cannot run are left out, each with its reason.
    let (served, bad) = report.split();
    let mut excluded = serve::Excluded::new();
    for c in &bad {
        let reasons: Vec<String> = c.problems.iter().map(|p| p.to_string()).collect();
        excluded.insert(c.task.spec.id.clone(), reasons.join("; "));
    }
    if !bad.is_empty() {
        eprintln!(
            "deskenv: {} task(s) with problems are not served",
            bad.len()
        );
    }
    if served.is_empty() {
        bail!("no task can be served (see above; `deskenv tasks validate`)");
    }
    if a.parallel == 0 {
        bail!("--parallel: expected at least 1");
    }
    if a.idle_timeout <= 0.0 || a.time_limit <= 0.0 {
        bail!("--idle-timeout and --time-limit: expected positive seconds");
    }
    let token = a.token_file.as_deref().map(read_token).transpose()?;
    if a.allow_remote && token.is_none() {
        bail!("--allow-remote needs --token-file: a server that other hosts reach must ask for a bearer token");
    }
    let (provider, environment) = make_provider(&a.machines, cache)?;
    let pool = Arc::new(Pool::new(provider, a.parallel)?);
    let kind = a.machines.provider;
    let cfg = ServeConfig {
        token,
        out: a.out.clone(),
        time_limit: Duration::from_secs_f64(a.time_limit),
        settle: a.settle,
        idle_timeout: Duration::from_secs_f64(a.idle_timeout),
        provider: kind,
        environment,
    };
    let n = served.len();
    let (parallel, out) = (a.parallel, a.out.clone());
    serve::serve(a.listen, a.allow_remote, pool, served, excluded, cfg, move |addr| {
        use std::io::Write;
        println!(
            "deskenv serve: listening on http://{addr} (provider {}{}, {n} task(s), up to {parallel} env(s), episodes into {})",
            kind.as_str(),
            if kind == ProviderKind::Local { ": desktops on this host, no VM" } else { "" },
            out.display()
        );
        let _ = std::io::stdout().flush();
    })
    .await?;
    Ok(Exit::Ok)
}

/// Clients pick tasks by id: two files with one id cannot be served.
fn unique_ids<'a>(tasks: impl Iterator<Item = &'a LoadedTask>) -> anyhow::Result<()> {
    let mut seen = std::collections::BTreeMap::new();
    for t in tasks {
        if let Some(first) = seen.get(&t.spec.id) {
            bail!(
                "{}: id `{}` is also the id of {} (task ids must be unique to be served)",
                t.path.display(),
                t.spec.id,
                first
            );
        }
        seen.insert(t.spec.id.clone(), t.path.display().to_string());
    }
    Ok(())
}

fn read_token(path: &Path) -> anyhow::Result<String> {
    let token = std::fs::read_to_string(path)
        .with_context(|| format!("reading --token-file {}", path.display()))?
        .trim()
        .to_string();
    if token.is_empty() {
        bail!("--token-file {}: the file is empty", path.display());
    }
    Ok(token)
}
