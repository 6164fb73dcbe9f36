//! Getters: collect what a metric scores, from the VM (through the guest
//! agent) or from the task. A getter that cannot fetch its artifact gives
//! [`Artifact::Missing`] with the reason: the metric then scores 0 and the
//! reason goes into result.json (OSWorld gets `None` and scores 0 too).

use super::generate::{self, GenerateError, Generated, Which};
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
    #[error("no file access log was recorded in this episode")]
    NoAccessLog,
    #[error(transparent)]
    Generate(#[from] GenerateError),
    #[error("`from` must be \"setup\" or \"rerun\", got {0:?}")]
    From(String),
    #[error("truth.json has no key {0:?}")]
    NoKey(String),
    #[error("`path` {0:?} must be relative, inside the generator's host/ folder")]
    HostPath(String),
    #[error("the re-run's command did not write {path} (exit status {code}; stderr: {stderr})")]
    RerunNoOutput {
        path: String,
        code: String,
        stderr: String,
    },
}

fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> GetterError {
    let path = path.to_path_buf();
    move |error| GetterError::Io { what, path, error }
}

/// What getters read from.
pub struct GetterContext<'a> {
    pub agent: &'a GuestClient,
    pub task: &'a LoadedTask,
    /// The task's folder for fetched files.
    pub cache: &'a Path,
    /// The generator's runs.
    pub generated: &'a Generated,
    /// The file accesses recorded from the agent's first step to the idle
    /// gate (a watch report), when the task's getters asked for them.
    pub access_log: Option<&'a protocol::api::WatchReport>,
}

/// The folders the task's `file_access_log` getters watch (their `paths`).
pub fn watched_folders(task: &LoadedTask) -> Vec<String> {
    let mut out: Vec<String> = vec![];
    for m in task.spec.evaluator.metrics().unwrap_or_default() {
        for g in [m.result, m.expected].into_iter().flatten() {
            if g.kind == "file_access_log" {
                for p in strings(g.params.get("paths")) {
                    if !out.contains(&p) {
                        out.push(p);
                    }
                }
            }
        }
    }
    out
}

/// The entries of `log` under one of `folders`.
fn under(log: &protocol::api::WatchReport, folders: &[String]) -> protocol::api::WatchReport {
    let inside = |p: &str| {
        folders.iter().any(|f| {
            p.strip_prefix(f.trim_end_matches('/'))
                .is_some_and(|r| r.is_empty() || r.starts_with('/'))
        })
    };
    protocol::api::WatchReport {
        files: log
            .files
            .iter()
            .filter(|f| inside(&f.path))
            .cloned()
            .collect(),
        ..log.clone()
    }
}

/// The longest a `rerun` getter's command may run.
pub const RERUN_TIMEOUT_S: u64 = 180;

/// Runs a getter.
pub async fn collect(g: &GetterSpec, ctx: &GetterContext<'_>) -> Artifact {
    match collect_inner(g, ctx).await {
        Ok(a) => a,
        Err(reason) => Artifact::Missing(format!("getter `{}`: {reason}", g.kind)),
    }
}

fn which(g: &GetterSpec) -> Result<Which, GetterError> {
    match g.params.get("from").and_then(Value::as_str) {
        None | Some("setup") => Ok(Which::Setup),
        Some("rerun") => Ok(Which::Rerun),
        Some(other) => Err(GetterError::From(other.into())),
    }
}

/// A plain file name for the task's cache.
fn dest_name(d: &str) -> Result<&str, GetterError> {
    if d.is_empty() || d.contains('/') || d.starts_with('.') {
        return Err(GetterError::Dest(d.to_string()));
    }
    Ok(d)
}

async fn collect_inner(g: &GetterSpec, ctx: &GetterContext<'_>) -> Result<Artifact, GetterError> {
    let (agent, task, cache) = (ctx.agent, ctx.task, ctx.cache);
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
        "generated" => {
            let truth = ctx.generated.truth(which(g)?)?;
            match g.params.get("key").and_then(Value::as_str) {
                None => Ok(Artifact::Json(truth)),
                Some(k) => truth
                    .get(k)
                    .cloned()
                    .map(Artifact::Json)
                    .ok_or_else(|| GetterError::NoKey(k.into())),
            }
        }
        "generated_file" => {
            let rel = g
                .params
                .get("path")
                .and_then(Value::as_str)
                .ok_or(GetterError::NoParameter("path"))?;
            let rel_path = Path::new(rel);
            if rel.is_empty()
                || rel_path.is_absolute()
                || rel_path
                    .components()
                    .any(|c| !matches!(c, std::path::Component::Normal(_)))
            {
                return Err(GetterError::HostPath(rel.into()));
            }
            let p = ctx.generated.dir(which(g)?).join("host").join(rel_path);
            if !p.is_file() {
                return Err(GetterError::Io {
                    what: "reading",
                    path: p,
                    error: std::io::ErrorKind::NotFound.into(),
                });
            }
            Ok(Artifact::File(p))
        }
        "rerun" => rerun(g, ctx).await,
        "file_access_log" => {
            let log = ctx.access_log.ok_or(GetterError::NoAccessLog)?;
            let v = serde_json::to_value(under(log, &strings(g.params.get("paths"))))
                .unwrap_or(Value::Null);
            Ok(Artifact::Json(v))
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
                let target = cache.join(dest_name(d)?);
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

/// The counterfactual re-run: the task's generator with another seed,
/// its inputs uploaded over the agent's (except the machine paths in
/// `keep`: the agent's own notebook or script), `path` deleted, `command`
/// run, `path` fetched.
async fn rerun(g: &GetterSpec, ctx: &GetterContext<'_>) -> Result<Artifact, GetterError> {
    let param = |name: &'static str| {
        g.params
            .get(name)
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or(GetterError::NoParameter(name))
    };
    let (command, path, dest) = (param("command")?, param("path")?, param("dest")?);
    let dest = dest_name(&dest)?;
    let keep = strings(g.params.get("keep"));
    let (generator, args) = generate::generator_of(ctx.task).ok_or(GenerateError::NoGenerator)?;
    generate::generate_and_upload(
        ctx.task,
        &generator,
        &args,
        ctx.generated,
        Which::Rerun,
        ctx.agent,
        &keep,
    )
    .await?;
    ctx.agent
        .osworld_execute(&serde_json::json!(["rm", "-f", path]), false)
        .await?;
    let r = ctx
        .agent
        .exec(
            protocol::api::Command::Shell(command),
            std::time::Duration::from_secs(RERUN_TIMEOUT_S),
        )
        .await?;
    let Some(bytes) = ctx.agent.get_file(&path).await? else {
        let code = match (r.timed_out, r.exit_code) {
            (true, _) => format!("killed after {RERUN_TIMEOUT_S} s"),
            (false, Some(c)) => c.to_string(),
            (false, None) => format!("signal {}", r.signal.unwrap_or(0)),
        };
        return Err(GetterError::RerunNoOutput {
            path,
            code,
            stderr: r.stderr.trim().chars().take(300).collect(),
        });
    };
    std::fs::create_dir_all(ctx.cache).map_err(io("creating", ctx.cache))?;
    let target = ctx.cache.join(dest);
    std::fs::write(&target, bytes).map_err(io("writing", &target))?;
    Ok(Artifact::File(target))
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::api::{FileAccess, WatchReport};

    #[test]
    fn an_access_log_getter_sees_its_folders_only() {
        let task = crate::task::load_file(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tasks/discovery-terminal.json"),
        )
        .unwrap();
        assert_eq!(watched_folders(&task), vec!["/home/user/lake".to_string()]);
        let access = |path: &str| FileAccess {
            path: path.into(),
            opened: 1,
            read: 1,
            written: 0,
            first_ms: 1.0,
        };
        let log = WatchReport {
            active: true,
            folders: vec!["/home/user".into()],
            files: vec![
                access("/home/user/lake/a.csv"),
                access("/home/user/lakehouse/b.csv"),
                access("/home/user/notes.txt"),
            ],
            overflowed: false,
        };
        let kept = under(&log, &["/home/user/lake/".into()]);
        let paths: Vec<&str> = kept.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, vec!["/home/user/lake/a.csv"]);
    }
}
