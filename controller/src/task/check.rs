//! [`check_all`]: load every task under some paths and check what deskenv
//! can run, once, for `deskenv run`, `deskenv serve` and `deskenv tasks
//! validate` alike.

use super::validate::{validate, Problem};
use super::{load_all, metric_supported, LoadedTask, TaskError};
use std::path::PathBuf;

/// What the caller is about to do with the tasks.
#[derive(Debug, Clone, Copy, Default)]
pub struct CheckOptions {
    /// The scripted agent replays each task's `solution`: a task without
    /// one is a problem.
    pub need_solution: bool,
}

/// One task that loaded, and every field of it deskenv cannot run.
#[derive(Debug, Clone)]
pub struct Checked {
    pub task: LoadedTask,
    pub problems: Vec<Problem>,
}

/// What [`check_all`] found.
#[derive(Debug, Default)]
pub struct Report {
    /// The files that did not load (each error names the file and field).
    pub unloadable: Vec<TaskError>,
    /// The tasks that loaded, in file order.
    pub tasks: Vec<Checked>,
}

/// One problem with the file it is in: `<file>: <field>: <what was expected>`.
#[derive(Debug, Clone, Copy)]
pub struct Located<'a> {
    pub path: &'a std::path::Path,
    pub problem: &'a Problem,
}

impl std::fmt::Display for Located<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.problem)
    }
}

impl Report {
    /// Task files looked at.
    pub fn files(&self) -> usize {
        self.unloadable.len() + self.tasks.len()
    }

    /// Task files that did not load or have problems.
    pub fn bad_files(&self) -> usize {
        self.unloadable.len() + self.tasks.iter().filter(|c| !c.problems.is_empty()).count()
    }

    /// Every problem of the tasks that loaded, with its file.
    pub fn problems(&self) -> impl Iterator<Item = Located<'_>> {
        self.tasks.iter().flat_map(|c| {
            c.problems.iter().map(|problem| Located {
                path: &c.task.path,
                problem,
            })
        })
    }

    /// The tasks without problems, and the others with theirs.
    pub fn split(self) -> (Vec<LoadedTask>, Vec<Checked>) {
        let (ok, bad): (Vec<_>, Vec<_>) =
            self.tasks.into_iter().partition(|c| c.problems.is_empty());
        (ok.into_iter().map(|c| c.task).collect(), bad)
    }
}

/// Loads every task file under `paths` and checks each one.
pub fn check_all(paths: &[PathBuf], opts: CheckOptions) -> Result<Report, TaskError> {
    let (tasks, unloadable) = load_all(paths)?;
    let tasks = tasks
        .into_iter()
        .map(|task| {
            let mut problems = validate(&task, &metric_supported);
            if opts.need_solution && task.spec.solution.is_none() {
                problems.push(Problem {
                    field: "solution".into(),
                    message: "missing (the scripted agent replays it)".into(),
                });
            }
            Checked { task, problems }
        })
        .collect();
    Ok(Report { unloadable, tasks })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_names_file_field_and_expectation() {
        let d = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| std::fs::write(d.path().join(name), text).unwrap();
        write(
            "ok.json",
            r#"{"id": "ok", "instruction": "x", "evaluator": {"func": "infeasible"}, "solution": ["DONE"]}"#,
        );
        write(
            "nosol.json",
            r#"{"id": "nosol", "instruction": "x", "evaluator": {"func": "infeasible"}}"#,
        );
        write(
            "bad.json",
            r#"{"id": "bad", "evaluator": {"func": "infeasible"}}"#,
        );
        let r = check_all(&[d.path().to_path_buf()], CheckOptions::default()).unwrap();
        assert_eq!((r.files(), r.bad_files(), r.problems().count()), (3, 1, 0));
        let r = check_all(
            &[d.path().to_path_buf()],
            CheckOptions {
                need_solution: true,
            },
        )
        .unwrap();
        assert_eq!((r.files(), r.bad_files()), (3, 2));
        let lines: Vec<String> = r.problems().map(|p| p.to_string()).collect();
        assert_eq!(lines.len(), 1);
        assert!(
            lines[0].ends_with("nosol.json: solution: missing (the scripted agent replays it)"),
            "{lines:?}"
        );
        assert!(r.unloadable[0]
            .to_string()
            .contains("bad.json: field `instruction`"));
        let (ok, bad) = r.split();
        assert_eq!((ok.len(), bad.len()), (1, 1));
    }
}
