//! Getters: collect what a metric scores, from the VM (through the guest
//! agent) or from the task. A getter that cannot fetch its artifact gives
//! [`Artifact::Missing`] with the reason: the metric then scores 0 and the
//! reason goes into result.json (OSWorld gets `None` and scores 0 too).

use crate::guest_client::{GuestClient, GuestError};
use crate::task::LoadedTask;
use evaluators::Artifact;
use protocol::task::GetterSpec;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn strings(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|x| x.as_str().map(str::to_string))
            .collect(),
        _ => vec![],
    }
}

/// Why a getter has no artifact (the text goes into result.json).
#[derive(Debug, thiserror::Error)]
enum GetterError {
    #[error("no `{0}`")]
    NoParameter(&'static str),
    #[error(transparent)]
    Guest(#[from] GuestError),
    #[error("`path` and `dest` must be given, as many of each ({paths} and {dests})")]
    PathsAndDests { paths: usize, dests: usize },
    #[error("`dest` {0:?} must be a plain file name")]
    Dest(String),
    #[error("{0} does not exist in the VM")]
    NotInVm(String),
    #[error("{0} has no local copy in the task's `data` manifest")]
    NoLocalCopy(String),
    #[error("{what} {}: {error}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("getter `{0}` is not supported")]
    Unsupported(String),
}

fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> GetterError {
    let path = path.to_path_buf();
    move |error| GetterError::Io { what, path, error }
}

/// Runs a getter; `cache` is the task's folder for fetched files.
pub async fn collect(
    g: &GetterSpec,
    agent: &GuestClient,
    task: &LoadedTask,
    cache: &Path,
) -> Artifact {
    match collect_inner(g, agent, task, cache).await {
        Ok(a) => a,
        Err(reason) => Artifact::Missing(format!("getter `{}`: {reason}", g.kind)),
    }
}

async fn collect_inner(
    g: &GetterSpec,
    agent: &GuestClient,
    task: &LoadedTask,
    cache: &Path,
) -> Result<Artifact, GetterError> {
    let multi = g
        .params
        .get("multi")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    match g.kind.as_str() {
        "rule" => Ok(Artifact::Json(
            g.params.get("rules").cloned().unwrap_or(Value::Null),
        )),
        "vm_command_line" => {
            let command = g
                .params
                .get("command")
                .cloned()
                .ok_or(GetterError::NoParameter("command"))?;
            let shell = g
                .params
                .get("shell")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let r = agent.osworld_execute(&command, shell).await?;
            Ok(Artifact::Text(r.output))
        }
        "accessibility_tree" => {
            let t = agent.a11y("osworld-xml").await?;
            Ok(Artifact::Text(t.text.unwrap_or_default()))
        }
        "vm_file" | "cloud_file" => {
            let paths = strings(g.params.get("path"));
            let dests = strings(g.params.get("dest"));
            if paths.is_empty() || paths.len() != dests.len() {
                return Err(GetterError::PathsAndDests {
                    paths: paths.len(),
                    dests: dests.len(),
                });
            }
            std::fs::create_dir_all(cache).map_err(io("creating", cache))?;
            let mut out: Vec<PathBuf> = Vec::new();
            for (p, d) in paths.iter().zip(&dests) {
                if d.contains('/') || d.starts_with('.') {
                    return Err(GetterError::Dest(d.clone()));
                }
                let target = cache.join(d);
                let bytes = if g.kind == "vm_file" {
                    match agent.get_file(p).await? {
                        Some(b) => b,
                        None => return Err(GetterError::NotInVm(p.clone())),
                    }
                } else {
                    let data = task
                        .spec
                        .data
                        .get(p)
                        .ok_or_else(|| GetterError::NoLocalCopy(p.clone()))?;
                    let local = task.dir().join(&data.path);
                    std::fs::read(&local).map_err(io("reading", &local))?
                };
                std::fs::write(&target, bytes).map_err(io("writing", &target))?;
                out.push(target);
            }
            if multi {
                Ok(Artifact::Files(out))
            } else {
                Ok(Artifact::File(out.remove(0)))
            }
        }
        other => Err(GetterError::Unsupported(other.into())),
    }
}
