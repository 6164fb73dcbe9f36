//! `deskenv tasks validate|list`, and the one way every command prints a
//! [`task::Report`].

use crate::exit::Exit;
use anyhow::bail;
use controller::task::{self, CheckOptions, Report};
use std::io::Write;
use std::path::PathBuf;

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
