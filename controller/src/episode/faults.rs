//! Faults injected at named points of an episode, for the fault-injection
//! tests: `DESKENV_FAULTS` holds `;`-separated entries
//! `[TASK/]POINT=FAULT[#ATTEMPT]`:
//!
//! - POINT: `setup` (before the first setup step), `step` or `stepN` (after
//!   the Nth step's action; `step` is the first), `eval` (after the loop,
//!   before the idle gate, postconfig and the evaluator);
//! - FAULT: `kill_machine` (SIGKILL to the machine's host process: QEMU,
//!   or the local desktop's agent) or `guest:SHELL` (a shell command
//!   launched in the guest as the desktop user, e.g.
//!   `guest:pkill -STOP -x deskenv-agent`);
//! - ATTEMPT: the attempt it hits (default 1: a retry on a fresh machine
//!   runs clean).
//!
//! A value that does not parse stops `deskenv run` before any machine
//! starts. Unset, nothing is injected and nothing is checked.

use crate::provider::Machine;
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
#[error("DESKENV_FAULTS entry `{entry}`: {message}")]
pub struct FaultsError {
    pub entry: String,
    pub message: String,
}

/// Where in the episode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Point {
    Setup,
    /// After the action of this step (1-based).
    Step(usize),
    Eval,
}

/// What happens there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    KillMachine,
    Guest(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Injection {
    pub task: Option<String>,
    pub point: Point,
    pub fault: Fault,
    pub attempt: u32,
}

/// The parsed `DESKENV_FAULTS`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Faults(pub Vec<Injection>);

impl Faults {
    /// From the environment (empty when unset).
    pub fn from_env() -> Result<Faults, FaultsError> {
        match std::env::var("DESKENV_FAULTS") {
            Ok(v) if !v.trim().is_empty() => Faults::parse(&v),
            _ => Ok(Faults::default()),
        }
    }

    pub fn parse(text: &str) -> Result<Faults, FaultsError> {
        let mut out = Vec::new();
        for entry in text.split(';').map(str::trim).filter(|e| !e.is_empty()) {
            let bad = |message: &str| FaultsError {
                entry: entry.to_string(),
                message: message.to_string(),
            };
            let (lhs, rhs) = entry
                .split_once('=')
                .ok_or_else(|| bad("expected [TASK/]POINT=FAULT[#ATTEMPT]"))?;
            let (task, point) = match lhs.rsplit_once('/') {
                Some((t, p)) => (Some(t.to_string()), p),
                None => (None, lhs),
            };
            let point = match point {
                "setup" => Point::Setup,
                "eval" => Point::Eval,
                "step" => Point::Step(1),
                p => match p.strip_prefix("step").and_then(|n| n.parse::<usize>().ok()) {
                    Some(n) if n >= 1 => Point::Step(n),
                    _ => return Err(bad("POINT: expected setup, step, stepN (N ≥ 1) or eval")),
                },
            };
            let (fault, attempt) = match rhs.rsplit_once('#') {
                Some((f, a)) => match a.parse::<u32>() {
                    Ok(n) if n >= 1 => (f, n),
                    _ => return Err(bad("ATTEMPT after `#`: expected a number from 1")),
                },
                None => (rhs, 1),
            };
            let fault = match fault {
                "kill_machine" => Fault::KillMachine,
                f => match f.strip_prefix("guest:") {
                    Some(cmd) if !cmd.trim().is_empty() => Fault::Guest(cmd.to_string()),
                    _ => return Err(bad("FAULT: expected kill_machine or guest:SHELL")),
                },
            };
            out.push(Injection {
                task,
                point,
                fault,
                attempt,
            });
        }
        Ok(Faults(out))
    }

    /// Injects what is due at `point` of `task`'s `attempt`; returns what
    /// was done, for the log.
    pub async fn inject(
        &self,
        point: Point,
        task: &str,
        attempt: u32,
        machine: &dyn Machine,
    ) -> Vec<String> {
        let mut done = Vec::new();
        for i in &self.0 {
            if i.point != point || i.attempt != attempt {
                continue;
            }
            if i.task.as_deref().is_some_and(|t| t != task) {
                continue;
            }
            match &i.fault {
                Fault::KillMachine => {
                    if let Some(pid) = machine.pid() {
                        // SAFETY: a plain signal to a process id we started.
                        unsafe {
                            libc::kill(pid as i32, libc::SIGKILL);
                        }
                        // Let the kernel reap it so the next check sees it.
                        tokio::time::sleep(Duration::from_millis(200)).await;
                        done.push(format!("fault: SIGKILL to pid {pid} at {point:?}"));
                    }
                }
                Fault::Guest(cmd) => {
                    let r = machine
                        .guest()
                        .launch(protocol::api::Command::Shell(cmd.clone()))
                        .await;
                    // Give a delayed command (`sleep 0.2; kill …`) its time.
                    tokio::time::sleep(Duration::from_millis(500)).await;
                    done.push(format!("fault: `{cmd}` in the guest at {point:?}: {r:?}"));
                }
            }
        }
        for d in &done {
            tracing::warn!("{d}");
            eprintln!("deskenv: {d}");
        }
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_parse_and_bad_ones_name_the_entry() {
        let f = Faults::parse("editor-save-text/setup=kill_machine; step2=guest:pkill -STOP -x deskenv-agent#2;eval=kill_machine").unwrap();
        assert_eq!(
            f.0[0],
            Injection {
                task: Some("editor-save-text".into()),
                point: Point::Setup,
                fault: Fault::KillMachine,
                attempt: 1
            }
        );
        assert_eq!(f.0[1].point, Point::Step(2));
        assert_eq!(
            f.0[1].fault,
            Fault::Guest("pkill -STOP -x deskenv-agent".into())
        );
        assert_eq!(f.0[1].attempt, 2);
        assert_eq!(f.0[2].point, Point::Eval);
        for (bad, says) in [
            ("setup", "expected [TASK/]POINT=FAULT"),
            ("boot=kill_machine", "POINT"),
            ("step0=kill_machine", "POINT"),
            ("setup=explode", "FAULT"),
            ("setup=guest:", "FAULT"),
            ("setup=kill_machine#0", "ATTEMPT"),
        ] {
            let e = Faults::parse(bad).unwrap_err().to_string();
            assert!(e.contains(bad) && e.contains(says), "{bad}: {e}");
        }
        assert_eq!(Faults::parse("  ").unwrap(), Faults::default());
    }
}
