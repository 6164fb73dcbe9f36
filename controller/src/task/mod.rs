//! Task files on disk: finding them, loading them with errors that name the
//! file and the field, and checking what deskenv can run ([`validate`]).
//!
//! A path given on the command line is a task file or a folder; folders
//! are searched recursively for `*.json`, except below folders named
//! `data` (where suites keep their datasets). A task's domain is the name
//! of the folder holding it (OSWorld's `examples/<domain>/<id>.json`), or
//! its `snapshot` for a file given directly. [`check_all`] loads and
//! checks every task under some paths in one report.

pub mod check;
pub mod honest;
pub mod validate;

pub use check::{check_all, CheckOptions, Report};

use protocol::task::TaskSpec;
use sha2::Digest;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    #[error("{path}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: field `{field}`: {message}")]
    Field {
        path: PathBuf,
        field: String,
        message: String,
    },
    #[error("{path}: not JSON: {message}")]
    Syntax { path: PathBuf, message: String },
    #[error("{0}: no task files (*.json) there")]
    Empty(PathBuf),
}

/// Whether the evaluators crate has the metric `name`.
pub fn metric_supported(name: &str) -> bool {
    evaluators::is_supported(name)
}

/// A loaded task file.
#[derive(Debug, Clone)]
pub struct LoadedTask {
    pub path: PathBuf,
    pub spec: TaskSpec,
    /// sha256 of the file's bytes (recorded in run.json).
    pub sha256: String,
    pub domain: String,
}

impl LoadedTask {
    /// The folder the task file is in (data paths are relative to it).
    pub fn dir(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new("."))
    }
}

/// Parses one task file.
pub fn load_file(path: &Path) -> Result<LoadedTask, TaskError> {
    let bytes = std::fs::read(path).map_err(|source| TaskError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut de = serde_json::Deserializer::from_slice(&bytes);
    let spec: TaskSpec = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let field = e.path().to_string();
        let inner = e.into_inner();
        if inner.is_syntax() || inner.is_eof() {
            TaskError::Syntax {
                path: path.to_path_buf(),
                message: inner.to_string(),
            }
        } else {
            let field = if field == "." {
                missing_field(&inner.to_string()).unwrap_or(field)
            } else {
                field
            };
            TaskError::Field {
                path: path.to_path_buf(),
                field,
                message: strip_position(&inner.to_string()),
            }
        }
    })?;
    de.end().map_err(|e| TaskError::Syntax {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let domain = path
        .parent()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| !n.is_empty() && n != ".")
        .or_else(|| spec.snapshot.clone())
        .unwrap_or_else(|| "default".into());
    Ok(LoadedTask {
        path: path.to_path_buf(),
        spec,
        sha256: hex::encode(sha2::Sha256::digest(&bytes)),
        domain,
    })
}

/// serde says "missing field `x`" at the parent's path; name the field.
fn missing_field(msg: &str) -> Option<String> {
    let rest = msg.strip_prefix("missing field `")?;
    Some(rest[..rest.find('`')?].to_string())
}

/// serde_json appends " at line L column C"; the field path says more.
fn strip_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

/// The task files under `paths` (files as given, folders recursively),
/// sorted, without duplicates.
pub fn find(paths: &[PathBuf]) -> Result<Vec<PathBuf>, TaskError> {
    let mut out = Vec::new();
    for p in paths {
        let meta = std::fs::metadata(p).map_err(|source| TaskError::Io {
            path: p.clone(),
            source,
        })?;
        if meta.is_dir() {
            let before = out.len();
            walk(p, &mut out)?;
            if out.len() == before {
                return Err(TaskError::Empty(p.clone()));
            }
        } else {
            out.push(p.clone());
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), TaskError> {
    let entries = std::fs::read_dir(dir).map_err(|source| TaskError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n == "data") {
                continue;
            }
            walk(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
    Ok(())
}

/// Loads every task under `paths`: the tasks that loaded, and an error per
/// file that did not.
pub fn load_all(paths: &[PathBuf]) -> Result<(Vec<LoadedTask>, Vec<TaskError>), TaskError> {
    let files = find(paths)?;
    let mut tasks = Vec::new();
    let mut errors = Vec::new();
    for f in files {
        match load_file(&f) {
            Ok(t) => tasks.push(t),
            Err(e) => errors.push(e),
        }
    }
    Ok((tasks, errors))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn errors_name_the_file_and_the_field() {
        let d = tempfile::tempdir().unwrap();
        let p = write(
            d.path(),
            "a.json",
            r#"{"id": "a", "evaluator": {"func": "exact_match"}}"#,
        );
        let e = load_file(&p).unwrap_err().to_string();
        assert!(
            e.contains("a.json: field `instruction`: missing field `instruction`"),
            "{e}"
        );
        let p = write(
            d.path(),
            "b.json",
            r#"{"id": "b", "instruction": "x", "evaluator": {"func": 3}}"#,
        );
        let e = load_file(&p).unwrap_err().to_string();
        assert!(e.contains("b.json: field `evaluator.func`"), "{e}");
        let p = write(
            d.path(),
            "c.json",
            r#"{"id": "c", "instruction": "x", "config": [{"type": 1}], "evaluator": {"func": "x"}}"#,
        );
        let e = load_file(&p).unwrap_err().to_string();
        assert!(e.contains("c.json: field `config[0].type`"), "{e}");
        let p = write(d.path(), "d.json", "{\"id\": ");
        assert!(load_file(&p)
            .unwrap_err()
            .to_string()
            .contains("d.json: not JSON"));
    }

    #[test]
    fn folders_are_searched_except_data_and_domains_come_from_folders() {
        let d = tempfile::tempdir().unwrap();
        let t = r#"{"id": "t", "instruction": "x", "evaluator": {"func": "infeasible"}}"#;
        write(d.path(), "calc/t.json", t);
        write(d.path(), "calc/data/table.json", "[1, 2]");
        let (tasks, errors) = load_all(&[d.path().to_path_buf()]).unwrap();
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(tasks.len(), 1);
        assert_eq!(tasks[0].domain, "calc");
        assert_eq!(tasks[0].sha256.len(), 64);
        let empty = tempfile::tempdir().unwrap();
        assert!(find(&[empty.path().to_path_buf()])
            .unwrap_err()
            .to_string()
            .contains("no task files"));
    }
}
