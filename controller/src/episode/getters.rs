//! Getters: collect what a metric scores, from the VM (through the guest
//! agent) or from the task. A getter that cannot fetch its artifact gives
//! [`Artifact::Missing`] with the reason: the metric then scores 0 and the
//! reason goes into result.json (OSWorld gets `None` and scores 0 too).

use crate::agent_client::AgentClient;
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

/// Runs a getter; `cache` is the task's folder for fetched files.
pub async fn collect(
    g: &GetterSpec,
    agent: &AgentClient,
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
    agent: &AgentClient,
    task: &LoadedTask,
    cache: &Path,
) -> Result<Artifact, String> {
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
            let command = g.params.get("command").cloned().ok_or("no `command`")?;
            let shell = g
                .params
                .get("shell")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let r = agent
                .osworld_execute(&command, shell)
                .await
                .map_err(|e| e.to_string())?;
            Ok(Artifact::Text(r.output))
        }
        "accessibility_tree" => {
            let t = agent.a11y("osworld-xml").await.map_err(|e| e.to_string())?;
            Ok(Artifact::Text(t.text.unwrap_or_default()))
        }
        "vm_file" | "cloud_file" => {
            let paths = strings(g.params.get("path"));
            let dests = strings(g.params.get("dest"));
            if paths.is_empty() || paths.len() != dests.len() {
                return Err(format!(
                    "`path` and `dest` must be given, as many of each ({} and {})",
                    paths.len(),
                    dests.len()
                ));
            }
            std::fs::create_dir_all(cache)
                .map_err(|e| format!("creating {}: {e}", cache.display()))?;
            let mut out: Vec<PathBuf> = Vec::new();
            for (p, d) in paths.iter().zip(&dests) {
                if d.contains('/') || d.starts_with('.') {
                    return Err(format!("`dest` {d:?} must be a plain file name"));
                }
                let target = cache.join(d);
                let bytes = if g.kind == "vm_file" {
                    match agent.get_file(p).await.map_err(|e| e.to_string())? {
                        Some(b) => b,
                        None => return Err(format!("{p} does not exist in the VM")),
                    }
                } else {
                    let data = task.spec.data.get(p).ok_or_else(|| {
                        format!("{p} has no local copy in the task's `data` manifest")
                    })?;
                    let local = task.dir().join(&data.path);
                    std::fs::read(&local)
                        .map_err(|e| format!("reading {}: {e}", local.display()))?
                };
                std::fs::write(&target, bytes)
                    .map_err(|e| format!("writing {}: {e}", target.display()))?;
                out.push(target);
            }
            if multi {
                Ok(Artifact::Files(out))
            } else {
                Ok(Artifact::File(out.remove(0)))
            }
        }
        other => Err(format!("getter `{other}` is not supported")),
    }
}
