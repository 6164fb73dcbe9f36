//! Task files: OSWorld's task JSON, accepted unchanged, plus deskenv's own
//! keys (`category`, `difficulty`, `solution`, `data`).
//!
//! Parsing is in two levels. [`TaskSpec`] is the file's shape: fields and
//! their JSON types, with setup steps and getters kept as `type` +
//! parameters. [`SetupStep::parse`] and [`GetterSpec`] then give the typed
//! view the runner uses; a step type deskenv does not run yet parses to
//! [`Setup::Unsupported`], so that a validator can report it instead of
//! the loader refusing the file.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// One task file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskSpec {
    pub id: String,
    pub instruction: String,
    /// OSWorld's snapshot name (the app family), used as the domain when the
    /// file is not in a domain folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub related_apps: Vec<String>,
    /// Setup steps, run in order after the reset.
    #[serde(default)]
    pub config: Vec<SetupStep>,
    pub evaluator: EvaluatorSpec,
    /// OSWorld's proxy flag (deskenv guests have no network: ignored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy: Option<bool>,

    // deskenv's own keys.
    /// A free-form category for per-category reports (e.g. `data-wrangling`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// `easy`, `medium`, `hard` or anything else; reported, not interpreted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub difficulty: Option<String>,
    /// The oracle: steps that solve the task, replayed by the scripted agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub solution: Option<Vec<SolutionStep>>,
    /// The data manifest: each URL the task downloads → a file in the
    /// repository (relative to the task file) and its sha256.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub data: BTreeMap<String, DataFile>,
    /// Attempts to pass without doing the work (a fixed answer, a blank
    /// chart), each of which must score below the success threshold
    /// (`deskenv tasks check`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gaming: Vec<GamingAttempt>,

    /// Every other key (OSWorld's `trajectory`, `fixed_ip`, `hint`, …),
    /// kept as is.
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}

/// One gaming attempt: a named solution that must fail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GamingAttempt {
    pub name: String,
    pub solution: Vec<SolutionStep>,
}

/// A local copy of a URL's content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DataFile {
    pub path: String,
    pub sha256: String,
}

/// One step of the oracle solution.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SolutionStep {
    /// A block of pyautogui code (one agent step), or `WAIT`/`DONE`/`FAIL`.
    Code(String),
    /// A `computer_13` action object (`{"action_type": "CLICK", …}`).
    Action(Value),
}

/// `{"type": …, "parameters": {…}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetupStep {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub parameters: Value,
}

/// The setup step types deskenv runs.
pub const SUPPORTED_SETUP: &[&str] = &[
    "download",
    "upload_file",
    "launch",
    "open",
    "execute",
    "command",
    "activate_window",
    "close_window",
    "sleep",
    "generate",
];

/// A command: an argv list or a shell string.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum TaskCommand {
    Argv(Vec<String>),
    Shell(String),
}

/// `until` of an `execute` step: poll until one of these holds.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Until {
    #[serde(default)]
    pub returncode: Option<i32>,
    #[serde(default)]
    pub stdout: Option<String>,
    #[serde(default)]
    pub stderr: Option<String>,
    /// deskenv: then wait until the guest is idle (no CPU use by the
    /// desktop's processes, a quiet screen; at most 60 s). Alone, the
    /// command must exit 0 first, as without `until`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle: Option<bool>,
}

impl Until {
    /// Whether any condition besides `idle` is set.
    pub fn polls(&self) -> bool {
        self.returncode.is_some() || self.stdout.is_some() || self.stderr.is_some()
    }

    pub fn waits_idle(&self) -> bool {
        self.idle == Some(true)
    }
}

/// A file to download (from the data manifest) into the guest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DownloadFile {
    pub url: String,
    pub path: String,
}

/// A file from the repository to upload into the guest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UploadFile {
    /// Relative to the task file.
    pub local_path: String,
    pub path: String,
}

/// A parsed setup step.
#[derive(Debug, Clone, PartialEq)]
pub enum Setup {
    Download {
        files: Vec<DownloadFile>,
    },
    UploadFile {
        files: Vec<UploadFile>,
    },
    Launch {
        command: TaskCommand,
        shell: bool,
    },
    Open {
        path: String,
    },
    /// `execute` and `command`.
    Execute {
        command: TaskCommand,
        shell: bool,
        stdout: Option<String>,
        stderr: Option<String>,
        until: Option<Until>,
    },
    ActivateWindow {
        window_name: String,
        strict: bool,
        by_class: bool,
    },
    CloseWindow {
        window_name: String,
        strict: bool,
        by_class: bool,
    },
    Sleep {
        seconds: f64,
    },
    /// deskenv: run a data generator on the host with the episode's seed
    /// and upload what it wrote for the machine (see `tasks/ds/README.md`).
    Generate {
        /// The generator script, relative to the task file.
        generator: String,
        /// Extra arguments after `--seed SEED --out OUT`.
        args: Vec<String>,
    },
    /// A step type deskenv does not run (chrome_open_tabs, googledrive, …).
    Unsupported {
        kind: String,
    },
}

/// A setup step whose parameters do not fit its type: `field` is the
/// parameter (`parameters.path`), `message` what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepError {
    /// Empty when `parameters` itself is wrong.
    pub field: String,
    pub message: String,
}

impl std::fmt::Display for StepError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.field.is_empty() {
            write!(f, "parameters: {}", self.message)
        } else {
            write!(f, "parameters.{}: {}", self.field, self.message)
        }
    }
}

impl std::error::Error for StepError {}

fn field<T: serde::de::DeserializeOwned>(
    params: &Map<String, Value>,
    name: &str,
) -> Result<T, StepError> {
    let v = params.get(name).ok_or_else(|| StepError {
        field: name.into(),
        message: "missing".into(),
    })?;
    serde_json::from_value(v.clone()).map_err(|e| StepError {
        field: name.into(),
        message: e.to_string(),
    })
}

fn opt_field<T: serde::de::DeserializeOwned>(
    params: &Map<String, Value>,
    name: &str,
) -> Result<Option<T>, StepError> {
    match params.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => serde_json::from_value(v.clone())
            .map(Some)
            .map_err(|e| StepError {
                field: name.into(),
                message: e.to_string(),
            }),
    }
}

impl SetupStep {
    /// The typed step. Unknown types are `Setup::Unsupported`, not errors.
    pub fn parse(&self) -> Result<Setup, StepError> {
        let empty = Map::new();
        let p = match &self.parameters {
            Value::Object(m) => m,
            Value::Null => &empty,
            other => {
                return Err(StepError {
                    field: String::new(),
                    message: format!("expected an object, got {other}"),
                })
            }
        };
        let window = |p: &Map<String, Value>| -> Result<(String, bool, bool), StepError> {
            Ok((
                field(p, "window_name")?,
                opt_field(p, "strict")?.unwrap_or(false),
                opt_field(p, "by_class")?.unwrap_or(false),
            ))
        };
        Ok(match self.kind.as_str() {
            "download" => Setup::Download {
                files: field(p, "files")?,
            },
            "upload_file" => Setup::UploadFile {
                files: field(p, "files")?,
            },
            "launch" => Setup::Launch {
                command: field(p, "command")?,
                shell: opt_field(p, "shell")?.unwrap_or(false),
            },
            "open" => Setup::Open {
                path: field(p, "path")?,
            },
            "execute" | "command" => Setup::Execute {
                command: field(p, "command")?,
                shell: opt_field(p, "shell")?.unwrap_or(false),
                stdout: opt_field(p, "stdout")?,
                stderr: opt_field(p, "stderr")?,
                until: opt_field(p, "until")?,
            },
            "activate_window" => {
                let (window_name, strict, by_class) = window(p)?;
                Setup::ActivateWindow {
                    window_name,
                    strict,
                    by_class,
                }
            }
            "close_window" => {
                let (window_name, strict, by_class) = window(p)?;
                Setup::CloseWindow {
                    window_name,
                    strict,
                    by_class,
                }
            }
            "sleep" => {
                let seconds: f64 = field(p, "seconds")?;
                if !(0.0..=3600.0).contains(&seconds) {
                    return Err(StepError {
                        field: "seconds".into(),
                        message: format!("{seconds} is outside 0..3600"),
                    });
                }
                Setup::Sleep { seconds }
            }
            "generate" => {
                let generator: String = field(p, "generator")?;
                if generator.is_empty() || generator.starts_with('/') {
                    return Err(StepError {
                        field: "generator".into(),
                        message: format!(
                            "{generator:?}: expected a script path relative to the task file"
                        ),
                    });
                }
                Setup::Generate {
                    generator,
                    args: opt_field(p, "args")?.unwrap_or_default(),
                }
            }
            other => Setup::Unsupported {
                kind: other.to_string(),
            },
        })
    }
}

/// A value or a list of values (OSWorld's `func`, `result`, … ).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany<T> {
    One(T),
    Many(Vec<T>),
}

impl<T> OneOrMany<T> {
    pub fn as_slice(&self) -> &[T] {
        match self {
            OneOrMany::One(t) => std::slice::from_ref(t),
            OneOrMany::Many(v) => v,
        }
    }

    pub fn is_many(&self) -> bool {
        matches!(self, OneOrMany::Many(_))
    }
}

/// How several metrics combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Conj {
    #[default]
    And,
    Or,
    /// deskenv: the weighted mean of the metrics' scores (each metric's
    /// `weight` option, default 1), capped at 0.5 when a `critical` one
    /// (the default) scored below the success threshold.
    Weighted,
}

/// The evaluator block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvaluatorSpec {
    pub func: OneOrMany<String>,
    #[serde(default)]
    pub conj: Option<Conj>,
    #[serde(default)]
    pub result: Option<OneOrMany<GetterSpec>>,
    #[serde(default)]
    pub expected: Option<OneOrMany<GetterSpec>>,
    #[serde(default)]
    pub options: Option<OneOrMany<Map<String, Value>>>,
    #[serde(default)]
    pub postconfig: Vec<SetupStep>,
}

/// A getter: `{"type": …, …its parameters}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GetterSpec {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(flatten)]
    pub params: Map<String, Value>,
}

/// The getters deskenv runs.
pub const SUPPORTED_GETTERS: &[&str] = &[
    "vm_file",
    "vm_command_line",
    "cloud_file",
    "rule",
    "accessibility_tree",
    "generated",
    "generated_file",
    "rerun",
    "file_access_log",
];

/// One metric with its getters and options (the lists zipped).
#[derive(Debug, Clone, PartialEq)]
pub struct MetricSpec<'a> {
    pub func: &'a str,
    pub result: Option<&'a GetterSpec>,
    pub expected: Option<&'a GetterSpec>,
    pub options: Option<&'a Map<String, Value>>,
}

impl EvaluatorSpec {
    /// Whether this is the `infeasible` rule (the agent must answer FAIL).
    pub fn is_infeasible(&self) -> bool {
        self.func.as_slice() == ["infeasible"]
    }

    /// The metrics with their getters and options. When `func` is a list
    /// the other fields must be lists of the same length (or absent);
    /// the error names the field.
    pub fn metrics(&self) -> Result<Vec<MetricSpec<'_>>, EvaluatorError> {
        let funcs = self.func.as_slice();
        let n = funcs.len();
        if n == 0 {
            return Err(EvaluatorError {
                field: "evaluator.func".into(),
                message: "an empty list".into(),
            });
        }
        fn pick<'a, T>(
            f: &'a Option<OneOrMany<T>>,
            name: &str,
            n: usize,
            many: bool,
        ) -> Result<Vec<Option<&'a T>>, EvaluatorError> {
            let err = |message: String| EvaluatorError {
                field: format!("evaluator.{name}"),
                message,
            };
            match f {
                None => Ok(vec![None; n]),
                Some(v) => {
                    let s = v.as_slice();
                    if many {
                        if !v.is_many() || s.len() != n {
                            return Err(err(format!(
                                "`func` is a list of {n}, so `{name}` must be a list of {n} (got {})",
                                if v.is_many() { format!("a list of {}", s.len()) } else { "one value".into() }
                            )));
                        }
                        Ok(s.iter().map(Some).collect())
                    } else {
                        if v.is_many() {
                            return Err(err(format!(
                                "`func` is one metric, so `{name}` must be one value, not a list"
                            )));
                        }
                        Ok(vec![s.first(); 1])
                    }
                }
            }
        }
        let many = self.func.is_many();
        // OSWorld allows a single `options` object to be absent per metric;
        // multi-metric files give a list.
        let results = pick(&self.result, "result", n, many)?;
        let expected = pick(&self.expected, "expected", n, many)?;
        let options = pick(&self.options, "options", n, many)?;
        Ok(funcs
            .iter()
            .enumerate()
            .map(|(i, f)| MetricSpec {
                func: f,
                result: results[i],
                expected: expected[i],
                options: options[i],
            })
            .collect())
    }
}

/// An evaluator whose fields do not fit together, at `field`
/// (`evaluator.result`, …).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct EvaluatorError {
    pub field: String,
    pub message: String,
}

/// OSWorld's placeholders in `execute`/`command` steps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placeholders {
    pub client_password: String,
    pub screen_width: u32,
    pub screen_height: u32,
}

impl Default for Placeholders {
    fn default() -> Self {
        Placeholders {
            client_password: "password".into(),
            screen_width: 1920,
            screen_height: 1080,
        }
    }
}

impl Placeholders {
    /// Replaces `{CLIENT_PASSWORD}`, `{SCREEN_WIDTH}`, `{SCREEN_HEIGHT}`,
    /// `{SCREEN_WIDTH_HALF}` and `{SCREEN_HEIGHT_HALF}`.
    pub fn apply(&self, s: &str) -> String {
        s.replace("{CLIENT_PASSWORD}", &self.client_password)
            .replace("{SCREEN_WIDTH_HALF}", &(self.screen_width / 2).to_string())
            .replace(
                "{SCREEN_HEIGHT_HALF}",
                &(self.screen_height / 2).to_string(),
            )
            .replace("{SCREEN_WIDTH}", &self.screen_width.to_string())
            .replace("{SCREEN_HEIGHT}", &self.screen_height.to_string())
    }

    pub fn apply_command(&self, c: &TaskCommand) -> TaskCommand {
        match c {
            TaskCommand::Argv(v) => TaskCommand::Argv(v.iter().map(|a| self.apply(a)).collect()),
            TaskCommand::Shell(s) => TaskCommand::Shell(self.apply(s)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn task(evaluator: Value, config: Value) -> TaskSpec {
        serde_json::from_value(json!({
            "id": "t1", "instruction": "do it", "config": config, "evaluator": evaluator,
            "trajectory": "trajectories/t1", "possibility_of_env_change": "low"
        }))
        .unwrap()
    }

    #[test]
    fn osworld_fields_are_kept_and_steps_parse() {
        let t = task(
            json!({"func": "exact_match", "result": {"type": "vm_command_line", "command": "cat /tmp/x"},
                   "expected": {"type": "rule", "rules": {"expected": "1"}}}),
            json!([
                {"type": "execute", "parameters": {"command": ["python", "-c", "print({SCREEN_WIDTH_HALF})"], "until": {"returncode": 0}}},
                {"type": "open", "parameters": {"path": "/home/user/a.csv"}},
                {"type": "chrome_open_tabs", "parameters": {"urls_to_open": ["https://x"]}},
                {"type": "sleep", "parameters": {"seconds": 0.5}}
            ]),
        );
        assert_eq!(t.extra["trajectory"], json!("trajectories/t1"));
        let steps: Vec<Setup> = t.config.iter().map(|s| s.parse().unwrap()).collect();
        match &steps[0] {
            Setup::Execute { command, until, .. } => {
                assert_eq!(
                    Placeholders::default().apply_command(command),
                    TaskCommand::Argv(vec!["python".into(), "-c".into(), "print(960)".into()])
                );
                assert_eq!(until.as_ref().unwrap().returncode, Some(0));
            }
            s => panic!("{s:?}"),
        }
        assert_eq!(
            steps[2],
            Setup::Unsupported {
                kind: "chrome_open_tabs".into()
            }
        );
        let m = t.evaluator.metrics().unwrap();
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].result.unwrap().kind, "vm_command_line");
        assert_eq!(m[0].result.unwrap().params["command"], json!("cat /tmp/x"));
    }

    #[test]
    fn step_errors_name_the_parameter() {
        let s = SetupStep {
            kind: "open".into(),
            parameters: json!({"file": "x"}),
        };
        assert_eq!(
            s.parse().unwrap_err().to_string(),
            "parameters.path: missing"
        );
        let s = SetupStep {
            kind: "sleep".into(),
            parameters: json!({"seconds": "two"}),
        };
        assert!(s
            .parse()
            .unwrap_err()
            .to_string()
            .starts_with("parameters.seconds: invalid type"));
    }

    #[test]
    fn list_evaluators_must_be_parallel() {
        let t = task(
            json!({"func": ["a", "b"], "conj": "or", "result": [{"type": "rule", "rules": 1}], "expected": [{"type": "rule"}, {"type": "rule"}]}),
            json!([]),
        );
        let e = t.evaluator.metrics().unwrap_err().to_string();
        assert!(
            e.contains("evaluator.result") && e.contains("a list of 2 (got a list of 1)"),
            "{e}"
        );
        assert_eq!(t.evaluator.conj, Some(Conj::Or));
        let t = task(json!({"func": "infeasible"}), json!([]));
        assert!(t.evaluator.is_infeasible());
    }
}
