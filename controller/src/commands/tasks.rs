//! `deskenv tasks validate|list`, and the one way every command prints a
//! [`task::Report`].

use crate::cli::{CheckArgs, CheckVariant};
use crate::exit::Exit;
use anyhow::bail;
use controller::episode::EpisodeSettings;
use controller::pool::Pool;
use controller::task::{self, CheckOptions, LoadedTask, Report};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Prints `report`: a line per file that did not load, a `FAIL` line per
/// task with problems followed by one `<file>: <field>: <what was
/// expected>` line per problem, an `ok` line per good task unless `quiet`,
/// and a count.
pub fn print_report(report: &Report, quiet: bool, to: &mut dyn Write) -> std::io::Result<()> {
    for e in &report.unloadable {
        writeln!(to, "error {}", controller::error_chain(e))?;
    }
    for c in &report.tasks {
        let (id, path) = (&c.task.spec.id, c.task.path.display());
        if c.problems.is_empty() {
            if !quiet {
                writeln!(to, "ok    {id} ({path})")?;
            }
            continue;
        }
        writeln!(to, "FAIL  {id} ({path}): {} problem(s)", c.problems.len())?;
        for p in &c.problems {
            writeln!(to, "      {path}: {p}")?;
        }
    }
    let (files, bad) = (report.files(), report.bad_files());
    writeln!(
        to,
        "{files} task file(s): {} ok, {bad} with problems",
        files - bad
    )
}

/// [`task::check_all`], printing the report to stderr when anything is
/// wrong; a file that did not load stops the command.
pub fn check(paths: &[PathBuf], opts: CheckOptions) -> anyhow::Result<Report> {
    let report = task::check_all(paths, opts)?;
    if report.bad_files() > 0 {
        print_report(&report, true, &mut std::io::stderr())?;
    }
    if !report.unloadable.is_empty() {
        bail!("{} task file(s) did not load", report.unloadable.len());
    }
    Ok(report)
}

/// `deskenv tasks validate`.
pub fn validate(paths: &[PathBuf], quiet: bool) -> anyhow::Result<Exit> {
    let report = task::check_all(paths, CheckOptions::default())?;
    print_report(&report, quiet, &mut std::io::stdout())?;
    Ok(if report.bad_files() > 0 {
        Exit::Task
    } else {
        Exit::Ok
    })
}

/// `deskenv tasks list`.
pub fn list(paths: &[PathBuf]) -> anyhow::Result<Exit> {
    let (tasks, errors) = task::load_all(paths)?;
    println!(
        "{:<38} {:<18} {:<16} {:>5}  metrics",
        "id", "domain", "category", "setup"
    );
    for t in &tasks {
        println!(
            "{:<38} {:<18} {:<16} {:>5}  {}",
            t.spec.id,
            t.domain,
            t.spec.category.as_deref().unwrap_or("-"),
            t.spec.config.len(),
            t.spec.evaluator.func.as_slice().join(",")
        );
    }
    for e in &errors {
        eprintln!("deskenv: error {e}");
    }
    if !errors.is_empty() {
        bail!("{} task file(s) did not load", errors.len());
    }
    Ok(Exit::Ok)
}

/// `deskenv tasks check`: oracle on two seeds, noop, gaming attempts and
/// the stale answer, as one table; exit 2 unless every task is honest, 3
/// when an episode had no score.
pub async fn check_honest(cache: &Path, a: CheckArgs) -> anyhow::Result<Exit> {
    use controller::episode::runner::{self, episode_dir, RunSettings};
    use controller::task::honest::{self, Outcome, TaskVerdict, Variant};
    use std::collections::BTreeMap;
    use std::sync::Arc;

    let report = check(
        &a.paths,
        CheckOptions {
            need_solution: true,
        },
    )?;
    let problems = report.problems().count();
    if problems > 0 {
        bail!("{problems} problem(s) in the task files (see above; `deskenv tasks validate`)");
    }
    let tasks: Vec<_> = report.tasks.into_iter().map(|c| c.task).collect();
    // One seed: the oracle once, no stale answer (the VM tier's quick look).
    if a.seeds.is_empty() || a.seeds.len() > 2 {
        bail!(
            "--seeds: expected one or two seeds, e.g. 1,2; got {:?}",
            a.seeds
        );
    }
    let two = a.seeds.len() == 2;
    let seeds = [a.seeds[0], *a.seeds.last().expect("clap gives one or two")];
    if two && seeds[0] == seeds[1] {
        bail!(
            "--seeds: expected two different seeds, got {} twice",
            seeds[0]
        );
    }
    if a.out.exists() {
        std::fs::remove_dir_all(&a.out)
            .map_err(|e| anyhow::anyhow!("clearing {}: {e}", a.out.display()))?;
    }
    let (provider, environment) = super::make_provider(&a.machines, cache)?;
    let pool = Arc::new(Pool::new(provider, a.parallel)?);
    let e: crate::cli::EpisodeArgs = crate::cli::defaults();
    // One generator run per (task, seed) serves all its episodes.
    let generate_cache = a.out.join("generated-cache");
    type Plants = BTreeMap<String, Vec<(String, Vec<u8>)>>;
    let settings = |out: PathBuf, seed: u64, plant: Plants| {
        Arc::new(RunSettings {
            out,
            model: "scripted".into(),
            agent: "scripted".into(),
            budgets: e.max_steps.clone(),
            episode: EpisodeSettings {
                time_limit: Duration::from_secs_f64(e.time_limit),
                settle: e.settle,
                frames: e.frames,
                idle_cap: Duration::from_secs_f64(e.idle_cap),
                seed,
                plant,
                generate_cache: Some(generate_cache.clone()),
                ..EpisodeSettings::new(e.observation, e.action_space, e.max_steps[0])
            },
            provider: a.machines.provider,
            parallel: a.parallel,
            retries: a.retries,
            environment: environment.clone(),
            repeats: 1,
            vary_seed: false,
            checkpoints: false,
        })
    };
    let scripted: runner::PolicyFactory =
        Arc::new(|| Ok(Box::new(controller::policy::scripted::ScriptedPolicy::default()) as _));
    let progress: Arc<dyn Fn(&str) + Send + Sync> = Arc::new(|l: &str| println!("{l}"));
    let mut verdicts: BTreeMap<String, TaskVerdict> = BTreeMap::new();
    fn record(
        verdicts: &mut BTreeMap<String, TaskVerdict>,
        base: &str,
        v: Variant,
        r: &controller::episode::EpisodeResult,
    ) {
        verdicts
            .entry(base.to_string())
            .or_default()
            .outcomes
            .push(Outcome::from_result(v, r));
    }
    // Which variant each run's task ids stand for.
    let mut names: BTreeMap<String, (String, Variant)> = BTreeMap::new();
    let mut plan = |seed_tasks: &mut Vec<LoadedTask>, t: &LoadedTask, v: Variant| {
        let vt = honest::variant(t, &v);
        names.insert(vt.spec.id.clone(), (t.spec.id.clone(), v));
        seed_tasks.push(vt);
    };
    let wants = |v: CheckVariant| a.variants.contains(&v);
    if two && wants(CheckVariant::Stale) && !wants(CheckVariant::Oracle) {
        bail!("--variants: stale plants the oracle's answers, so it needs oracle too");
    }
    let (mut first, mut second) = (Vec::new(), Vec::new());
    for t in &tasks {
        if wants(CheckVariant::Oracle) {
            plan(&mut first, t, Variant::Oracle);
            if two && !a.oracle_once {
                plan(&mut second, t, Variant::Oracle);
            }
        }
        if wants(CheckVariant::Noop) {
            plan(&mut first, t, Variant::Noop);
        }
        if wants(CheckVariant::Gaming) {
            for g in honest::gaming(t) {
                plan(&mut second, t, g);
            }
        }
    }
    let mut plan_line = format!(
        "checking {} task(s): {} episode(s) on seed {}",
        tasks.len(),
        first.len(),
        seeds[0]
    );
    if two {
        plan_line += &format!(", {} on seed {}", second.len(), seeds[1]);
        if wants(CheckVariant::Stale) {
            plan_line += ", then stale answers";
        }
    }
    println!("{plan_line}");
    // On a local provider without a private /tmp per machine (not root,
    // or a cache under /tmp), tasks with an application that keeps state
    // in the host's /tmp or network (LibreOffice's pipe, Chromium's
    // profile, Jupyter's port) run one at a time, beside the others on
    // --parallel − 1 machines: the two groups run at once, so the long
    // one-at-a-time chain no longer waits for the rest.
    let one_pool = Arc::new(Pool::new(pool.provider().clone(), 1)?);
    let shared_tmp = a.machines.provider == crate::cli::ProviderKind::Local
        && a.parallel > 1
        && !pool.provider().isolates_tmp();
    let beside_pool = if shared_tmp {
        Arc::new(Pool::new(pool.provider().clone(), a.parallel - 1)?)
    } else {
        pool.clone()
    };
    let alone = |t: &LoadedTask| shared_tmp && honest::uses_host_global_app(t);
    let mut env_errors = 0;
    // Runs the one-at-a-time group and the rest together.
    let run_groups = |one: Vec<LoadedTask>,
                      many: Vec<LoadedTask>,
                      out: &dyn Fn(&str) -> PathBuf,
                      seed: u64,
                      plants: Plants| {
        let many_pool = if one.is_empty() { &pool } else { &beside_pool };
        let mut runs = Vec::new();
        for (group, pool, suffix) in [(one, &one_pool, "-one-at-a-time"), (many, many_pool, "")] {
            if group.is_empty() {
                continue;
            }
            let s = settings(out(suffix), seed, plants.clone());
            runs.push(runner::run(
                pool.clone(),
                s,
                group,
                scripted.clone(),
                progress.clone(),
            ));
        }
        futures::future::try_join_all(runs)
    };
    for (seed, batch) in [(seeds[0], first), (seeds[1], second)] {
        let (one, many): (Vec<_>, Vec<_>) = batch.into_iter().partition(|t| alone(t));
        let out = |suffix: &str| a.out.join(format!("seed-{seed}{suffix}"));
        for o in run_groups(one, many, &out, seed, Plants::new()).await? {
            for f in &o.finished {
                if let Some((base, v)) = names.get(&f.result.task_id) {
                    record(&mut verdicts, base, v.clone(), &f.result);
                }
            }
            env_errors += o.env_errors() + o.not_run.len();
        }
    }
    // The stale answer: the oracle's result files from the first seed,
    // planted on the second.
    let mut plants = Plants::new();
    let (mut stale_many, mut stale_one) = (Vec::new(), Vec::new());
    for t in tasks.iter().filter(|_| two && wants(CheckVariant::Stale)) {
        let files = honest::result_files(t);
        let why = if t.spec.evaluator.is_infeasible() {
            Some("infeasible task")
        } else if controller::episode::generate::generator_of(t).is_none() {
            Some("fixed data")
        } else if files.is_empty() {
            Some("no vm_file result")
        } else {
            None
        };
        if let Some(why) = why {
            verdicts.entry(t.spec.id.clone()).or_default().no_stale = Some(why.into());
            continue;
        }
        let suffix = if alone(t) { "-one-at-a-time" } else { "" };
        let first_out = a.out.join(format!("seed-{}{suffix}", seeds[0]));
        let dir = episode_dir(
            &first_out,
            &settings(first_out.clone(), seeds[0], Plants::new()).episode,
            "scripted",
            t,
        )
        .join("cache");
        let mut plant = Vec::new();
        for (vm_path, dest) in files {
            if let Ok(bytes) = std::fs::read(dir.join(&dest)) {
                plant.push((vm_path, bytes));
            }
        }
        if plant.is_empty() {
            verdicts.entry(t.spec.id.clone()).or_default().no_stale =
                Some("the oracle left no result file".into());
            continue;
        }
        let vt = honest::variant(t, &Variant::Stale);
        names.insert(vt.spec.id.clone(), (t.spec.id.clone(), Variant::Stale));
        plants.insert(vt.spec.id.clone(), plant);
        if alone(t) {
            stale_one.push(vt);
        } else {
            stale_many.push(vt);
        }
    }
    let out = |suffix: &str| a.out.join(format!("stale{suffix}"));
    for o in run_groups(stale_one, stale_many, &out, seeds[1], plants).await? {
        for f in &o.finished {
            if let Some((base, v)) = names.get(&f.result.task_id) {
                record(&mut verdicts, base, v.clone(), &f.result);
            }
        }
        env_errors += o.env_errors() + o.not_run.len();
    }
    print!("{}", honest::table(&verdicts, seeds));
    print!("{}", honest::causes(&verdicts));
    let category = tasks
        .iter()
        .map(|t| {
            let c = t.spec.category.clone().unwrap_or_else(|| t.domain.clone());
            (t.spec.id.clone(), c)
        })
        .collect();
    print!("{}", honest::by_stage(&verdicts, &category));
    let bad = verdicts.values().filter(|v| !v.ok()).count();
    println!(
        "{} task(s): {} honest, {bad} not; results in {}",
        verdicts.len(),
        verdicts.len() - bad,
        a.out.display()
    );
    Ok(if env_errors > 0 {
        Exit::Env
    } else if bad > 0 {
        Exit::Task
    } else {
        Exit::Ok
    })
}
