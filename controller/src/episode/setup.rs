//! Setup and postconfig steps, run through the guest agent. A step that
//! fails fails the reset (or the evaluation), naming the step and what the
//! guest said — OSWorld logs and goes on.

use crate::guest_client::{GuestClient, GuestError};
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
    /// The guest agent did not answer (an environment fault, not the
    /// task's).
    pub guest_unreachable: bool,
}

/// Why one step failed.
#[derive(Debug)]
enum StepFail {
    /// The step itself failed (a command's exit status, a missing file).
    Task(String),
    /// A call to the guest agent failed.
    Guest(GuestError),
}

impl From<String> for StepFail {
    fn from(m: String) -> StepFail {
        StepFail::Task(m)
    }
}

impl From<GuestError> for StepFail {
    fn from(e: GuestError) -> StepFail {
        StepFail::Guest(e)
    }
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
    pub guest: &'a GuestClient,
    pub task: &'a LoadedTask,
    pub placeholders: &'a Placeholders,
    /// Where `execute` steps with `stdout` save their output (the task's
    /// cache, read by `cache_file` getters).
    pub cache: &'a Path,
    /// Where `generate` steps write, and the episode's seed.
    pub generated: &'a super::generate::Generated,
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
        let err = |f: StepFail| {
            let (message, guest_unreachable) = match f {
                StepFail::Task(m) => (m, false),
                StepFail::Guest(e) => {
                    let unreachable = matches!(e, GuestError::Unreachable { .. });
                    (e.to_string(), unreachable)
                }
            };
            SetupError {
                field: field.clone(),
                kind: step.kind.clone(),
                message,
                guest_unreachable,
            }
        };
        let t = Instant::now();
        let parsed = step
            .parse()
            .map_err(|e| err(StepFail::Task(e.to_string())))?;
        run_one(&parsed, ctx).await.map_err(err)?;
        timings.push(StepTiming {
            field: field.clone(),
            kind: step.kind.clone(),
            seconds: t.elapsed().as_secs_f64(),
        });
    }
    Ok(timings)
}

async fn run_one(step: &Setup, ctx: &StepContext<'_>) -> Result<(), StepFail> {
    let a = ctx.guest;
    match step {
        Setup::Download { files } => {
            for f in files {
                let data = ctx.task.spec.data.get(&f.url).ok_or_else(|| {
                    format!("{} has no local copy in the task's `data` manifest (machines here have no internet)", f.url)
                })?;
                let local = ctx.task.dir().join(&data.path);
                let bytes = std::fs::read(&local)
                    .map_err(|e| format!("reading {}: {e}", local.display()))?;
                a.put_file(&f.path, bytes).await?;
            }
        }
        Setup::UploadFile { files } => {
            for f in files {
                let local = ctx.task.dir().join(&f.local_path);
                let bytes = std::fs::read(&local)
                    .map_err(|e| format!("reading {}: {e}", local.display()))?;
                a.put_file(&f.path, bytes).await?;
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
            a.open(path, None, Duration::from_secs(90)).await?;
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
                let r = a.osworld_execute(&command, *shell).await?;
                if let Some(name) = stdout {
                    write_cache(ctx.cache, name, &r.output)?;
                }
                if let Some(name) = stderr {
                    write_cache(ctx.cache, name, &r.error)?;
                }
                match until.as_ref().filter(|u| u.polls()) {
                    None if r.returncode == 0 => break,
                    None => {
                        return Err(format!(
                            "exit status {}; stderr: {}",
                            r.returncode,
                            r.error.trim().chars().take(500).collect::<String>()
                        )
                        .into())
                    }
                    Some(u) if holds(u, &r) => break,
                    Some(_) => {
                        if Instant::now() > deadline {
                            return Err(format!(
                                "`until` did not hold within 120 s ({tries} tries; last exit status {}, stderr: {})",
                                r.returncode,
                                r.error.trim().chars().take(200).collect::<String>()
                            )
                            .into());
                        }
                        tokio::time::sleep(until_pause(tries)).await;
                    }
                }
            }
            if until.as_ref().is_some_and(|u| u.waits_idle()) {
                wait_idle(a, SETUP_IDLE_CAP).await?;
            }
        }
        Setup::ActivateWindow {
            window_name,
            strict,
            by_class,
        } => {
            a.osworld_window(false, window_name, *strict, *by_class)
                .await?;
        }
        Setup::CloseWindow {
            window_name,
            strict,
            by_class,
        } => {
            a.osworld_window(true, window_name, *strict, *by_class)
                .await?;
        }
        Setup::Sleep { seconds } => tokio::time::sleep(Duration::from_secs_f64(*seconds)).await,
        Setup::Generate { generator, args } => {
            use super::generate::{generate_and_upload, GenerateError, Which};
            generate_and_upload(
                ctx.task,
                generator,
                args,
                ctx.generated,
                Which::Setup,
                a,
                &[],
            )
            .await
            .map_err(|e| match e {
                GenerateError::Guest(g) => StepFail::Guest(g),
                other => StepFail::Task(other.to_string()),
            })?;
        }
        Setup::Unsupported { kind } => {
            return Err(format!(
                "setup step `{kind}` is not supported (see `deskenv tasks validate`)"
            )
            .into())
        }
    }
    Ok(())
}

/// The pause after the `tries`-th try of an `until` that did not hold:
/// 0.3 s, growing by half each time, at most 3 s: each try is a process
/// in the guest, which costs CPU under TCG while the application waited
/// for starts. (Chromium's first page never loading was not the rate: it
/// was what the poll ran, `xdotool search`; the tasks poll `wmctrl -l`.)
fn until_pause(tries: u32) -> Duration {
    let ms = 300.0 * 1.5f64.powi(tries.saturating_sub(1).min(10) as i32);
    Duration::from_millis(ms.min(3000.0) as u64)
}

/// The longest an `"until": {"idle": true}` waits.
pub const SETUP_IDLE_CAP: Duration = Duration::from_secs(60);

/// Waits until the guest is idle; not idle within `cap` fails the step,
/// naming what kept it busy.
async fn wait_idle(a: &GuestClient, cap: Duration) -> Result<(), StepFail> {
    let req = protocol::api::IdleRequest {
        window_ms: 500,
        max_ms: cap.as_millis() as u64,
        cpu_percent: protocol::api::default_idle_cpu(),
        screen: true,
    };
    let rep = a.idle(&req).await?;
    if rep.idle {
        return Ok(());
    }
    let busy: Vec<String> = rep
        .busy
        .iter()
        .map(|b| format!("{} (pid {}, {:.0} %)", b.name, b.pid, b.cpu_percent))
        .collect();
    Err(StepFail::Task(format!(
        "`until` idle: the guest was still busy after {:.0} s: {}",
        rep.waited_ms / 1000.0,
        busy.join(", ")
    )))
}

fn holds(u: &Until, r: &crate::guest_client::OsExec) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn until_pauses_grow_from_0_3_s_to_at_most_3_s() {
        let ms: Vec<u128> = (1..=9).map(|t| until_pause(t).as_millis()).collect();
        assert_eq!(ms, [300, 450, 675, 1012, 1518, 2278, 3000, 3000, 3000]);
        assert_eq!(until_pause(u32::MAX), Duration::from_secs(3));
    }
}
