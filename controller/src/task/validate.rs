//! `deskenv tasks validate`: everything in a task file that deskenv cannot
//! run, each named by its field — setup steps it does not run, getters
//! and metrics it does not have, URLs without a local copy in the task's
//! data manifest, data files that are missing or changed, parameters of
//! the wrong shape, and oracle solutions that do not parse.

use super::LoadedTask;
use protocol::task::{GetterSpec, OneOrMany, Setup, SetupStep, SolutionStep, SUPPORTED_GETTERS};
use serde_json::Value;
use sha2::Digest;

/// One thing deskenv cannot run, at `field`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub field: String,
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

fn problem(field: impl Into<String>, message: impl Into<String>) -> Problem {
    Problem {
        field: field.into(),
        message: message.into(),
    }
}

/// Checks one loaded task; `metric_supported` says which metrics the
/// evaluators crate has.
pub fn validate(task: &LoadedTask, metric_supported: &dyn Fn(&str) -> bool) -> Vec<Problem> {
    let mut out = Vec::new();
    let spec = &task.spec;
    if spec.id.trim().is_empty() {
        out.push(problem("id", "is empty"));
    }
    if spec.instruction.trim().is_empty() {
        out.push(problem("instruction", "is empty"));
    }
    for (i, step) in spec.config.iter().enumerate() {
        check_step(task, step, &format!("config[{i}]"), &mut out);
    }
    for (i, step) in spec.evaluator.postconfig.iter().enumerate() {
        check_step(task, step, &format!("evaluator.postconfig[{i}]"), &mut out);
    }
    match spec.evaluator.metrics() {
        Err(e) => out.push(problem(e.field, e.message)),
        Ok(metrics) => {
            let many = spec.evaluator.func.is_many();
            for (k, m) in metrics.iter().enumerate() {
                let at = |f: &str| {
                    if many {
                        format!("evaluator.{f}[{k}]")
                    } else {
                        format!("evaluator.{f}")
                    }
                };
                if m.func != "infeasible" && !metric_supported(m.func) {
                    out.push(problem(
                        at("func"),
                        format!("metric `{}` is not supported", m.func),
                    ));
                }
                for (name, g) in [("result", m.result), ("expected", m.expected)] {
                    if let Some(g) = g {
                        check_getter(task, g, &at(name), &mut out);
                    }
                }
            }
        }
    }
    for (url, file) in &spec.data {
        let field = format!("data[{url:?}]");
        let path = task.dir().join(&file.path);
        match std::fs::read(&path) {
            Err(e) => out.push(problem(
                format!("{field}.path"),
                format!("{}: {e}", path.display()),
            )),
            Ok(bytes) => {
                let got = hex::encode(sha2::Sha256::digest(&bytes));
                if !got.eq_ignore_ascii_case(&file.sha256) {
                    out.push(problem(
                        format!("{field}.sha256"),
                        format!(
                            "{} has sha256 {got}, the manifest says {}",
                            path.display(),
                            file.sha256
                        ),
                    ));
                }
            }
        }
    }
    if let Some(solution) = &spec.solution {
        for (i, s) in solution.iter().enumerate() {
            if let Err(e) = check_solution_step(s) {
                out.push(problem(format!("solution[{i}]"), e.to_string()));
            }
        }
    }
    for (k, g) in spec.gaming.iter().enumerate() {
        for (i, s) in g.solution.iter().enumerate() {
            if let Err(e) = check_solution_step(s) {
                out.push(problem(format!("gaming[{k}].solution[{i}]"), e.to_string()));
            }
        }
    }
    let generates = spec.config.iter().any(|s| s.kind == "generate");
    let uses_generated = |kind: &str| {
        spec.evaluator.metrics().is_ok_and(|ms| {
            ms.iter()
                .flat_map(|m| [m.result, m.expected])
                .flatten()
                .any(|g| g.kind == kind)
        })
    };
    if !generates {
        for kind in ["generated", "generated_file", "rerun"] {
            if uses_generated(kind) {
                out.push(problem(
                    "evaluator".to_string(),
                    format!("getter `{kind}` needs a `generate` setup step"),
                ));
            }
        }
    }
    out
}

fn check_step(task: &LoadedTask, step: &SetupStep, at: &str, out: &mut Vec<Problem>) {
    match step.parse() {
        Err(e) if e.field.is_empty() => out.push(problem(format!("{at}.parameters"), e.message)),
        Err(e) => out.push(problem(format!("{at}.parameters.{}", e.field), e.message)),
        Ok(Setup::Unsupported { kind }) => out.push(problem(
            format!("{at}.type"),
            format!("setup step `{kind}` is not supported"),
        )),
        Ok(Setup::Download { files }) => {
            for (j, f) in files.iter().enumerate() {
                if !task.spec.data.contains_key(&f.url) {
                    out.push(problem(
                        format!("{at}.parameters.files[{j}].url"),
                        format!("{} has no local copy in the task's `data` manifest", f.url),
                    ));
                }
            }
        }
        Ok(Setup::UploadFile { files }) => {
            for (j, f) in files.iter().enumerate() {
                let p = task.dir().join(&f.local_path);
                if !p.is_file() {
                    out.push(problem(
                        format!("{at}.parameters.files[{j}].local_path"),
                        format!("{} not found", p.display()),
                    ));
                }
            }
        }
        Ok(Setup::Generate { generator, .. }) => {
            let p = task.dir().join(&generator);
            if !p.is_file() {
                out.push(problem(
                    format!("{at}.parameters.generator"),
                    format!("{} not found", p.display()),
                ));
            }
        }
        Ok(_) => {}
    }
}

fn check_getter(task: &LoadedTask, g: &GetterSpec, at: &str, out: &mut Vec<Problem>) {
    if !SUPPORTED_GETTERS.contains(&g.kind.as_str()) {
        out.push(problem(
            format!("{at}.type"),
            format!("getter `{}` is not supported", g.kind),
        ));
        return;
    }
    let need = |name: &str, out: &mut Vec<Problem>| {
        if !g.params.contains_key(name) {
            out.push(problem(
                format!("{at}.{name}"),
                format!("missing (getter `{}` needs it)", g.kind),
            ));
        }
    };
    match g.kind.as_str() {
        "vm_file" => {
            need("path", out);
            need("dest", out);
        }
        "vm_command_line" => need("command", out),
        "rule" => need("rules", out),
        "generated_file" => need("path", out),
        "file_access_log" => need("paths", out),
        "rerun" => {
            need("command", out);
            need("path", out);
            need("dest", out);
        }
        "cloud_file" => {
            need("path", out);
            need("dest", out);
            let urls: Vec<String> = match g.params.get("path") {
                Some(Value::String(s)) => vec![s.clone()],
                Some(v) => serde_json::from_value::<OneOrMany<String>>(v.clone())
                    .map(|o| o.as_slice().to_vec())
                    .unwrap_or_default(),
                None => vec![],
            };
            for (j, u) in urls.iter().enumerate() {
                if !task.spec.data.contains_key(u) {
                    let field = if urls.len() > 1 {
                        format!("{at}.path[{j}]")
                    } else {
                        format!("{at}.path")
                    };
                    out.push(problem(
                        field,
                        format!("{u} has no local copy in the task's `data` manifest"),
                    ));
                }
            }
        }
        _ => {}
    }
}

/// Why a solution step does not parse.
#[derive(Debug, thiserror::Error)]
enum SolutionError {
    #[error(transparent)]
    Code(#[from] protocol::pyautogui::PyautoguiError),
    #[error(transparent)]
    Action(#[from] protocol::action::ActionError),
}

fn check_solution_step(s: &SolutionStep) -> Result<(), SolutionError> {
    match s {
        SolutionStep::Code(code) => {
            let t = code.trim();
            if matches!(t, "WAIT" | "DONE" | "FAIL") {
                return Ok(());
            }
            protocol::pyautogui::parse(code)?;
            Ok(())
        }
        SolutionStep::Action(v) => {
            protocol::Action::from_json(v)?;
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::load_file;

    fn load(dir: &std::path::Path, json: serde_json::Value) -> LoadedTask {
        let p = dir.join("t.json");
        std::fs::write(&p, json.to_string()).unwrap();
        load_file(&p).unwrap()
    }

    fn fields(problems: &[Problem]) -> Vec<String> {
        problems.iter().map(|p| p.field.clone()).collect()
    }

    #[test]
    fn unknown_steps_getters_metrics_and_urls_are_named() {
        let d = tempfile::tempdir().unwrap();
        let t = load(
            d.path(),
            serde_json::json!({
                "id": "t", "instruction": "x",
                "config": [
                    {"type": "download", "parameters": {"files": [{"url": "https://example.com/a.csv", "path": "/home/user/a.csv"}]}},
                    {"type": "googledrive", "parameters": {}},
                    {"type": "open", "parameters": {}}
                ],
                "evaluator": {
                    "func": ["compare_csv", "no_such_metric"], "conj": "and",
                    "result": [{"type": "vm_file", "path": "/home/user/a.csv", "dest": "a.csv"}, {"type": "active_tab_info"}],
                    "expected": [{"type": "cloud_file", "path": "https://example.com/gold.csv", "dest": "gold.csv"}, {"type": "rule", "rules": {}}]
                },
                "solution": ["pyautogui.click(10, 10)", "os.system('rm -rf /')", "DONE"]
            }),
        );
        let ps = validate(&t, &|m| m == "compare_csv");
        let f = fields(&ps);
        assert_eq!(
            f,
            [
                "config[0].parameters.files[0].url",
                "config[1].type",
                "config[2].parameters.path",
                "evaluator.expected[0].path",
                "evaluator.func[1]",
                "evaluator.result[1].type",
                "solution[1]"
            ],
            "{ps:#?}"
        );
        assert!(ps[4]
            .message
            .contains("metric `no_such_metric` is not supported"));
        assert!(ps[1]
            .message
            .contains("setup step `googledrive` is not supported"));
    }

    #[test]
    fn data_files_are_checked_and_a_clean_task_has_no_problems() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a.csv"), "x,y\n1,2\n").unwrap();
        let sha = hex::encode(sha2::Sha256::digest(b"x,y\n1,2\n"));
        let mut json = serde_json::json!({
            "id": "t", "instruction": "x",
            "config": [{"type": "download", "parameters": {"files": [{"url": "https://e/a.csv", "path": "/tmp/a.csv"}]}}],
            "evaluator": {"func": "exact_match", "result": {"type": "vm_command_line", "command": "cat /tmp/a.csv"},
                          "expected": {"type": "rule", "rules": {"expected": "x"}}},
            "data": {"https://e/a.csv": {"path": "a.csv", "sha256": sha}}
        });
        let t = load(d.path(), json.clone());
        assert_eq!(validate(&t, &|_| true), vec![]);
        json["data"]["https://e/a.csv"]["sha256"] = "00".into();
        let t = load(d.path(), json);
        let ps = validate(&t, &|_| true);
        assert_eq!(fields(&ps), ["data[\"https://e/a.csv\"].sha256"]);
    }
}
