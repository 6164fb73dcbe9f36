//! Setup and postconfig steps, run through the guest agent. A step that
//! fails fails the reset (or the evaluation), naming the step and what the
//! guest said — OSWorld logs and goes on.

use crate::agent_client::AgentClient;
use crate::task::LoadedTask;
use protocol::task::{Placeholders, Setup, SetupStep, TaskCommand, Until};
use std::path::Path;
use std::time::{Duration, Instant};

#[derive(Debug, thiserror::Error)]
#[error("{field} ({kind}): {message}")]
pub struct SetupError {
    /// `config[2]` or `evaluator.postconfig[0]`.
    pub field: String,
    pub kind: String,
    pub message: String,
}

/// What a step took.
#[derive(Debug, Clone, serde::Serialize)]
pub struct StepTiming {
    pub field: String,
    pub kind: String,
    pub seconds: f64,
}

/// Everything a step needs.
pub struct StepContext<'a> {
    pub agent: &'a AgentClient,
    pub task: &'a LoadedTask,
    pub placeholders: &'a Placeholders,
    /// Where `execute` steps with `stdout` save their output (the task's
    /// cache, read by `cache_file` getters).
    pub cache: &'a Path,
}

fn command_json(c: &TaskCommand) -> serde_json::Value {
    match c {
        TaskCommand::Argv(v) => serde_json::json!(v),
        TaskCommand::Shell(s) => serde_json::json!(s),
    }
}

/// Runs `steps` in order; `prefix` names them in errors (`config`,
/// `evaluator.postconfig`).
pub async fn run_steps(
    steps: &[SetupStep],
    prefix: &str,
    ctx: &StepContext<'_>,
) -> Result<Vec<StepTiming>, SetupError> {
    let mut timings = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        let field = format!("{prefix}[{i}]");
        let err = |message: String| SetupError {
            field: field.clone(),
            kind: step.kind.clone(),
            message,
        };
        let t = Instant::now();
        let parsed = step.parse().map_err(|e| err(e.to_string()))?;
        run_one(&parsed, ctx).await.map_err(err)?;
        timings.push(StepTiming {
            field: field.clone(),
            kind: step.kind.clone(),
            seconds: t.elapsed().as_secs_f64(),
        });
    }
    Ok(timings)
}

async fn run_one(step: &Setup, ctx: &StepContext<'_>) -> Result<(), String> {
    let a = ctx.agent;
    match step {
        Setup::Download { files } => {
            for f in files {
                let data = ctx.task.spec.data.get(&f.url).ok_or_else(|| {
                    format!("{} has no local copy in the task's `data` manifest (machines here have no internet)", f.url)
                })?;
                let local = ctx.task.dir().join(&data.path);
                let bytes = std::fs::read(&local)
                    .map_err(|e| format!("reading {}: {e}", local.display()))?;
                a.put_file(&f.path, bytes)
                    .await
                    .map_err(|e| e.to_string())?;
            }
        }
        Setup::UploadFile { files } => {
            for f in files {
                let local = ctx.task.dir().join(&f.local_path);
                let bytes = std::fs::read(&local)
                    .map_err(|e| format!("reading {}: {e}", local.display()))?;
                a.put_file(&f.path, bytes)
                    .await
                    .map_err(|e| e.to_string())?;
            }
        }
        Setup::Launch { command, shell } => {
            let command = ctx.placeholders.apply_command(command);
            let c = match (command, shell) {
                (TaskCommand::Argv(v), true) => protocol::api::Command::Shell(v.join(" ")),
                (TaskCommand::Argv(v), false) => protocol::api::Command::Argv(v),
                (TaskCommand::Shell(s), _) => protocol::api::Command::Shell(s),
            };
            a.launch(c).await.map_err(|e| e.to_string())?;
        }
        Setup::Open { path } => {
            a.open(path, None, Duration::from_secs(90))
                .await
                .map_err(|e| e.to_string())?;
        }
        Setup::Execute {
            command,
            shell,
            stdout,
            stderr,
            until,
        } => {
            let command = command_json(&ctx.placeholders.apply_command(command));
            let deadline = Instant::now() + Duration::from_secs(120);
            let mut tries = 0;
            loop {
                tries += 1;
                let r = a
                    .osworld_execute(&command, *shell)
                    .await
                    .map_err(|e| e.to_string())?;
                if let Some(name) = stdout {
                    write_cache(ctx.cache, name, &r.output)?;
                }
                if let Some(name) = stderr {
                    write_cache(ctx.cache, name, &r.error)?;
                }
                match until {
                    None if r.returncode == 0 => break,
                    None => {
                        return Err(format!(
                            "exit status {}; stderr: {}",
                            r.returncode,
                            r.error.trim().chars().take(500).collect::<String>()
                        ))
                    }
                    Some(u) if holds(u, &r) => break,
                    Some(_) => {
                        if Instant::now() > deadline {
                            return Err(format!(
                                "`until` did not hold within 120 s ({tries} tries; last exit status {}, stderr: {})",
                                r.returncode,
                                r.error.trim().chars().take(200).collect::<String>()
                            ));
                        }
                        tokio::time::sleep(Duration::from_millis(300)).await;
                    }
                }
            }
        }
        Setup::ActivateWindow {
            window_name,
            strict,
            by_class,
        } => {
            a.osworld_window(false, window_name, *strict, *by_class)
                .await
                .map_err(|e| e.to_string())?;
        }
        Setup::CloseWindow {
            window_name,
            strict,
            by_class,
        } => {
            a.osworld_window(true, window_name, *strict, *by_class)
                .await
                .map_err(|e| e.to_string())?;
        }
        Setup::Sleep { seconds } => tokio::time::sleep(Duration::from_secs_f64(*seconds)).await,
        Setup::Unsupported { kind } => {
            return Err(format!(
                "setup step `{kind}` is not supported (see `deskenv tasks validate`)"
            ))
        }
    }
    Ok(())
}

fn holds(u: &Until, r: &crate::agent_client::OsExec) -> bool {
    if let Some(code) = u.returncode {
        if r.returncode == code as i64 {
            return true;
        }
    }
    if let Some(s) = &u.stdout {
        if r.output.contains(s.as_str()) {
            return true;
        }
    }
    if let Some(s) = &u.stderr {
        if r.error.contains(s.as_str()) {
            return true;
        }
    }
    false
}

fn write_cache(cache: &Path, name: &str, text: &str) -> Result<(), String> {
    if name.contains('/') || name.starts_with('.') {
        return Err(format!(
            "`stdout`/`stderr` file name {name:?} must be a plain file name"
        ));
    }
    std::fs::create_dir_all(cache).map_err(|e| format!("creating {}: {e}", cache.display()))?;
    std::fs::write(cache.join(name), text)
        .map_err(|e| format!("writing {}: {e}", cache.join(name).display()))
}
