//! `deskenv run`: check the tasks, start the pool, run every episode.

use super::make_provider;
use crate::cli::{AgentArgs, AgentKind, RunArgs};
use crate::exit::Exit;
use anyhow::bail;
use controller::episode::runner::{self, RunError, RunOutcome};
use controller::episode::EpisodeSettings;
use controller::pool::Pool;
use controller::task::CheckOptions;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// `deskenv run`: the exit status says whether every episode was scored.
pub async fn command(cache: &Path, args: RunArgs) -> anyhow::Result<Exit> {
    let o = match run_tasks(cache, args).await {
        Ok(o) => o,
        // The host failed under the run (a full disk): an environment
        // error, named.
        Err(e) if e.is::<RunError>() => {
            eprintln!("deskenv: error: {e:#}");
            return Ok(Exit::Env);
        }
        Err(e) => return Err(e),
    };
    if o.stopped.is_some() || o.env_errors() > 0 {
        eprintln!(
            "deskenv: {} episode(s) ended in an environment error{}: exit status {}",
            o.env_errors(),
            if o.stopped.is_some() {
                " and the run stopped early"
            } else {
                ""
            },
            Exit::Env
        );
        return Ok(Exit::Env);
    }
    if o.setup_errors() > 0 {
        eprintln!(
            "deskenv: {} episode(s) could not be set up: exit status {}",
            o.setup_errors(),
            Exit::Task
        );
        return Ok(Exit::Task);
    }
    Ok(Exit::Ok)
}

/// Runs every task of `a`, refusing tasks that cannot run, naming every
/// problem, before any machine starts.
pub async fn run_tasks(cache: &Path, a: RunArgs) -> anyhow::Result<RunOutcome> {
    let opts = CheckOptions {
        need_solution: a.agent.agent == AgentKind::Scripted,
    };
    let report = super::tasks::check(&a.tasks, opts)?;
    let problems = report.problems().count();
    if problems > 0 {
        bail!("{problems} problem(s) in the task files (see above; `deskenv tasks validate`)");
    }
    let tasks: Vec<_> = report.tasks.into_iter().map(|c| c.task).collect();
    let e = &a.episode;
    if e.max_steps.is_empty() || e.max_steps.contains(&0) {
        bail!("--max-steps: expected positive step budgets, e.g. 15 or 15,30,50");
    }
    if a.repeats == 0 {
        bail!("--repeats: expected 1 or more");
    }
    if a.checkpoints && e.max_steps.len() < 2 {
        bail!("--checkpoints: expected several budgets to cut from one episode, e.g. --max-steps 15,30,50");
    }
    if a.record.is_some_and(|f| f == 0 || f > 30) {
        bail!("--record: expected 1 to 30 frames per second");
    }
    if !(0.0..=600.0).contains(&e.idle_cap) {
        bail!("--idle-cap: expected seconds from 0 to 600");
    }
    let faults = controller::episode::faults::Faults::from_env()?;
    let make_agent = agent_factory(&a.agent)?;
    let (provider, environment) = make_provider(&a.machines, cache)?;
    if a.checkpoints && !provider.can_checkpoint() {
        bail!(
            "--checkpoints: the {} provider cannot save a machine's state; use --provider qemu (with its ready snapshot)",
            provider.kind()
        );
    }
    let pool = Arc::new(Pool::new(provider, a.parallel)?);
    let agent = a.agent.agent.as_str().to_string();
    let settings = Arc::new(runner::RunSettings {
        out: a.out.clone(),
        model: a.agent.model.clone().unwrap_or_else(|| agent.clone()),
        agent,
        budgets: e.max_steps.clone(),
        episode: EpisodeSettings {
            time_limit: Duration::from_secs_f64(e.time_limit),
            settle: e.settle,
            frames: e.frames,
            idle_cap: Duration::from_secs_f64(e.idle_cap),
            faults,
            seed: e.seed,
            record_fps: a.record,
            ..EpisodeSettings::new(e.observation, e.action_space, e.max_steps[0])
        },
        provider: a.machines.provider,
        parallel: a.parallel,
        retries: a.retries,
        environment,
        repeats: a.repeats,
        vary_seed: a.vary_seed,
        checkpoints: a.checkpoints,
    });
    println!(
        "{} task(s) × {} budget(s){}{}, {} at a time, into {}",
        tasks.len(),
        e.max_steps.len(),
        if a.checkpoints {
            " (one episode per task at the largest budget; the smaller ones from its checkpoints)"
        } else {
            ""
        },
        if a.repeats > 1 {
            format!(" × {} repeats", a.repeats)
        } else {
            String::new()
        },
        a.parallel,
        a.out.display()
    );
    let outcome = runner::run(
        pool,
        settings.clone(),
        tasks,
        make_agent,
        Arc::new(|l: &str| println!("{l}")),
    )
    .await?;
    print!("{}", runner::summary(&outcome, &settings));
    Ok(outcome)
}

/// The agent `--agent` names, checked once here rather than per task.
fn agent_factory(a: &AgentArgs) -> anyhow::Result<runner::PolicyFactory> {
    Ok(match a.agent {
        AgentKind::Scripted => {
            Arc::new(|| Ok(Box::new(controller::policy::scripted::ScriptedPolicy::default()) as _))
        }
        AgentKind::Noop => Arc::new(|| Ok(Box::new(controller::policy::noop::NoopPolicy) as _)),
        AgentKind::Openai => {
            use controller::policy::openai::{OpenAiConfig, OpenAiPolicy};
            let Some(model) = a.model.clone() else {
                bail!("--agent openai needs --model")
            };
            let mut c = OpenAiConfig::new(a.base_url.clone(), model);
            c.api_key_env = Some(a.api_key_env.clone());
            if let Some(t) = a.temperature {
                c.temperature = t;
            }
            if let Some(t) = a.top_p {
                c.top_p = t;
            }
            if let Some(t) = a.max_tokens {
                c.max_tokens = t;
            }
            OpenAiPolicy::new(c.clone())?;
            Arc::new(move || {
                OpenAiPolicy::new(c.clone())
                    .map(|a| Box::new(a) as _)
                    .map_err(|e| e.to_string())
            })
        }
        AgentKind::Http => {
            use controller::policy::http::{HttpPolicy, HttpPolicyConfig};
            let Some(url) = a.agent_url.clone() else {
                bail!("--agent http needs --agent-url (your agent server; deskenv POSTs to URL/reset and URL/predict)")
            };
            if a.agent_timeout <= 0.0 {
                bail!("--agent-timeout: expected positive seconds");
            }
            let c = HttpPolicyConfig {
                url,
                timeout: Duration::from_secs_f64(a.agent_timeout),
            };
            HttpPolicy::new(c.clone())?;
            Arc::new(move || {
                HttpPolicy::new(c.clone())
                    .map(|a| Box::new(a) as _)
                    .map_err(|e| e.to_string())
            })
        }
    })
}
