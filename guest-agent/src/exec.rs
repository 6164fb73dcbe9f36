//! Commands: runs with timeouts, detached launches, `open` with a window
//! wait, and OSWorld's `run_python` / `run_bash_script` helpers.
//!
//! - [`run`] runs a command (argv without a shell, or a string through
//!   `/bin/sh -c`) in a new process group, feeds it stdin, collects stdout
//!   and stderr (each capped at [`OUTPUT_CAP`] bytes, decoded lossily as
//!   UTF-8) and, past its timeout, kills the whole group (grandchildren
//!   included) and answers `timed_out: true` with the output so far.
//!   Dropping the future also kills the group.
//! - [`launch`] starts a program detached (own session, stdio on
//!   `/dev/null`) and reaps it in the background; it returns the pid.
//! - [`open`] mirrors OSWorld's `/setup/open_file`: `xdg-open` an existing
//!   path or start a program found on `PATH`, then wait for a window whose
//!   title names it and activate that window.
//! - [`run_python`] and [`run_bash_script`] mirror OSWorld's routes and
//!   return a [`ScriptRun`] that renders OSWorld's reply bodies.
//!
//! As in OSWorld, argv items that start with `~/` are expanded to `$HOME`.

use crate::files;
use crate::windows::{WindowError, Windows};
use protocol::api::{
    Command, ExecRequest, ExecResponse, LaunchRequest, OpenRequest, OpenResponse, WindowMatch,
};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

/// Timeout of [`run`] when the request names none.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// The longest timeout [`run`] accepts; longer ones are cut to this.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(3600);
/// Bytes kept of each of stdout and stderr; the rest is read and dropped,
/// and a note saying so ends the text.
pub const OUTPUT_CAP: usize = 16 * 1024 * 1024;
/// How long [`open`] waits for the window when the request names no timeout
/// (OSWorld waits 1800 s).
pub const DEFAULT_OPEN_TIMEOUT: Duration = Duration::from_secs(30);
/// OSWorld's `run_python` timeout.
pub const DEFAULT_PYTHON_TIMEOUT: Duration = Duration::from_secs(30);
/// OSWorld's `run_bash_script` default timeout.
pub const DEFAULT_BASH_TIMEOUT: Duration = Duration::from_secs(100);

/// After the process exits, how long to wait for its pipes to reach end of
/// file. A background grandchild may hold them open for ever; its further
/// output is then drained and dropped.
const PIPE_GRACE: Duration = Duration::from_secs(1);
/// Poll interval of [`open`]'s window wait.
const OPEN_POLL: Duration = Duration::from_millis(50);

/// What went wrong running, launching or opening something.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error("empty command: expected a program and its arguments")]
    EmptyCommand,
    #[error("program not found: {program} (no such file, or not on PATH)")]
    NotFound { program: String },
    #[error("working directory does not exist or is not a directory: {}", path.display())]
    Cwd { path: PathBuf },
    #[error("cannot start {program}: {source}")]
    Spawn {
        program: String,
        #[source]
        source: io::Error,
    },
    #[error("waiting for {program} failed: {source}")]
    Wait {
        program: String,
        #[source]
        source: io::Error,
    },
    #[error("cannot write the script file {}: {source}", path.display())]
    Script {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error(
        "application/file not found: {path} (no such file, and no program of that name on PATH)"
    )]
    OpenNotFound { path: String },
    #[error("opening {path} failed: {program} exited with {status} before a window appeared")]
    OpenFailed {
        path: String,
        program: String,
        status: String,
    },
    #[error("no window with a title containing {wanted:?} appeared within {timeout_ms} ms after opening {path}")]
    OpenTimeout {
        path: String,
        wanted: Vec<String>,
        timeout_ms: u64,
    },
    #[error("looking for the window of {path} failed: {source}")]
    Window {
        path: String,
        #[source]
        source: WindowError,
    },
}

/// A leading `~/` becomes `$HOME/`, as OSWorld does for argv items.
fn expand_arg(arg: &str) -> String {
    if arg.starts_with("~/") {
        files::expand_user(arg)
    } else {
        arg.to_string()
    }
}

/// The program and arguments of a command.
fn argv_of(command: &Command) -> Result<Vec<String>, ExecError> {
    match command {
        Command::Argv(v) => {
            if v.is_empty() || v[0].is_empty() {
                return Err(ExecError::EmptyCommand);
            }
            Ok(v.iter().map(|a| expand_arg(a)).collect())
        }
        Command::Shell(s) => {
            if s.trim().is_empty() {
                return Err(ExecError::EmptyCommand);
            }
            Ok(vec!["/bin/sh".into(), "-c".into(), s.clone()])
        }
    }
}

/// Checks and expands a working directory.
fn check_cwd(cwd: Option<&str>) -> Result<Option<PathBuf>, ExecError> {
    let Some(cwd) = cwd else { return Ok(None) };
    let path = files::expand(cwd);
    if !path.is_dir() {
        return Err(ExecError::Cwd { path });
    }
    Ok(Some(path))
}

fn spawn_error(program: &str, e: io::Error) -> ExecError {
    if e.kind() == io::ErrorKind::NotFound {
        ExecError::NotFound {
            program: program.to_string(),
        }
    } else {
        ExecError::Spawn {
            program: program.to_string(),
            source: e,
        }
    }
}

/// The timeout of a request, defaulted and capped.
fn timeout_of(ms: Option<u64>, default: Duration) -> Duration {
    ms.map(Duration::from_millis)
        .unwrap_or(default)
        .min(MAX_TIMEOUT)
}

/// Runs a command and collects its output; see the module documentation.
pub async fn run(req: &ExecRequest) -> Result<ExecResponse, ExecError> {
    let argv = argv_of(&req.command)?;
    let cwd = check_cwd(req.cwd.as_deref())?;
    let mut cmd = tokio::process::Command::new(&argv[0]);
    cmd.args(&argv[1..]).envs(&req.env);
    if let Some(cwd) = cwd {
        cmd.current_dir(cwd);
    }
    run_command(
        cmd,
        &argv[0],
        req.stdin.as_ref().map(|s| s.as_bytes().to_vec()),
        timeout_of(req.timeout_ms, DEFAULT_TIMEOUT),
        false,
    )
    .await
}

/// Bytes read from one pipe, shared with the task that reads it.
#[derive(Default)]
struct Capture {
    buf: Vec<u8>,
    truncated: bool,
    /// Set once the result was taken: later output is dropped.
    taken: bool,
}

type Shared = Arc<Mutex<Capture>>;

fn spawn_reader<R>(mut pipe: R) -> (Shared, tokio::task::JoinHandle<()>)
where
    R: AsyncRead + Unpin + Send + 'static,
{
    let shared: Shared = Arc::default();
    let mine = shared.clone();
    let handle = tokio::spawn(async move {
        let mut chunk = vec![0u8; 64 * 1024];
        loop {
            let n = match pipe.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let mut c = mine.lock().unwrap_or_else(|e| e.into_inner());
            if c.taken {
                continue;
            }
            let room = OUTPUT_CAP.saturating_sub(c.buf.len());
            if n > room {
                c.truncated = true;
            }
            c.buf.extend_from_slice(&chunk[..n.min(room)]);
        }
    });
    (shared, handle)
}

fn take_text(shared: &Shared) -> String {
    let mut c = shared.lock().unwrap_or_else(|e| e.into_inner());
    c.taken = true;
    let mut text = String::from_utf8_lossy(&std::mem::take(&mut c.buf)).into_owned();
    if c.truncated {
        text.push_str(&format!(
            "\n[deskenv: output truncated after {OUTPUT_CAP} bytes]"
        ));
    }
    text
}

/// Kills a process group when dropped, unless disarmed.
struct GroupKill(Option<i32>);

impl GroupKill {
    fn kill(&mut self) {
        if let Some(pgid) = self.0.take() {
            // SAFETY: killpg has no memory-safety preconditions.
            unsafe {
                libc::killpg(pgid, libc::SIGKILL);
            }
        }
    }
}

impl Drop for GroupKill {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Spawns `cmd` in a new process group and collects its output. With
/// `merge`, stderr goes into the same pipe as stdout (and `stderr` is "").
async fn run_command(
    mut cmd: tokio::process::Command,
    program: &str,
    stdin: Option<Vec<u8>>,
    timeout: Duration,
    merge: bool,
) -> Result<ExecResponse, ExecError> {
    let started = Instant::now();
    cmd.process_group(0)
        .kill_on_drop(true)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
    let mut merged_rx = None;
    if merge {
        let (tx, rx) = tokio::net::unix::pipe::pipe().map_err(|e| spawn_error(program, e))?;
        let out = tx.into_blocking_fd().map_err(|e| spawn_error(program, e))?;
        let err = out.try_clone().map_err(|e| spawn_error(program, e))?;
        cmd.stdout(Stdio::from(out)).stderr(Stdio::from(err));
        merged_rx = Some(rx);
    } else {
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    }
    let spawned = cmd.spawn();
    // The command holds our copies of the pipe's write end: drop them, or
    // the reader never sees end of file.
    drop(cmd);
    let mut child = spawned.map_err(|e| spawn_error(program, e))?;
    let mut group = GroupKill(child.id().map(|p| p as i32));

    if let (Some(bytes), Some(mut pipe)) = (stdin, child.stdin.take()) {
        tokio::spawn(async move {
            // A process that does not read its input is not an error.
            let _ = pipe.write_all(&bytes).await;
            let _ = pipe.shutdown().await;
        });
    }
    let mut readers = Vec::new();
    if let Some(rx) = merged_rx {
        readers.push(spawn_reader(rx));
    } else {
        if let Some(out) = child.stdout.take() {
            readers.push(spawn_reader(out));
        }
        if let Some(err) = child.stderr.take() {
            readers.push(spawn_reader(err));
        }
    }

    let (status, timed_out) = tokio::select! {
        status = child.wait() => (status, false),
        _ = tokio::time::sleep(timeout) => {
            group.kill();
            (child.wait().await, true)
        }
    };
    let status = status.map_err(|e| ExecError::Wait {
        program: program.to_string(),
        source: e,
    })?;
    // The process is gone; its group may live on, on purpose, in the
    // background (`cmd &`): leave it alone.
    group.0 = None;

    let deadline = tokio::time::Instant::now() + PIPE_GRACE;
    for (_, handle) in readers.iter_mut() {
        let _ = tokio::time::timeout_at(deadline, handle).await;
    }
    let mut texts = readers.iter().map(|(shared, _)| take_text(shared));
    let stdout = texts.next().unwrap_or_default();
    let stderr = texts.next().unwrap_or_default();
    Ok(ExecResponse {
        stdout,
        stderr,
        exit_code: status.code(),
        signal: status.signal(),
        timed_out,
        duration_ms: started.elapsed().as_secs_f64() * 1000.0,
    })
}

/// A std command that starts in its own session with stdio on /dev/null.
fn detached(
    argv: &[String],
    cwd: Option<&Path>,
    env: &BTreeMap<String, String>,
) -> std::process::Command {
    let mut cmd = std::process::Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .envs(env)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if let Some(cwd) = cwd {
        cmd.current_dir(cwd);
    }
    // SAFETY: the closure runs between fork and exec and only calls
    // setsid, which is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() == -1 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd
}

/// Waits for a detached child on a small thread so it leaves no zombie.
fn reap(mut child: std::process::Child) {
    let spawned = std::thread::Builder::new()
        .name("deskenv-reap".into())
        .stack_size(64 * 1024)
        .spawn(move || {
            let _ = child.wait();
        });
    if let Err(e) = spawned {
        tracing::warn!("cannot start a thread to reap a launched process: {e}");
    }
}

/// Starts a command detached from the agent (own session, stdio on
/// `/dev/null`, reaped in the background) and returns its pid.
pub fn launch(req: &LaunchRequest) -> Result<u32, ExecError> {
    let argv = argv_of(&req.command)?;
    let cwd = check_cwd(req.cwd.as_deref())?;
    let child = detached(&argv, cwd.as_deref(), &req.env)
        .spawn()
        .map_err(|e| spawn_error(&argv[0], e))?;
    let pid = child.id();
    reap(child);
    Ok(pid)
}

/// Python's `shutil.which`: a name with a `/` is checked as is, others are
/// looked up on `PATH`; the file must be executable.
fn which(program: &str) -> Option<PathBuf> {
    fn executable(p: &Path) -> bool {
        use std::os::unix::fs::PermissionsExt;
        p.metadata()
            .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            .unwrap_or(false)
    }
    if program.is_empty() {
        return None;
    }
    if program.contains('/') {
        let p = PathBuf::from(program);
        return executable(&p).then_some(p);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| executable(p))
}

/// OSWorld's `/setup/open_file`: opens an existing path with `xdg-open`, or
/// starts the program of that name; then waits (default
/// [`DEFAULT_OPEN_TIMEOUT`]) for a window whose title contains the file name
/// or the name without its extension (or the program's name, or
/// `req.window`), case-insensitively, activates it and returns it.
/// An opener that exits with a failure before the window appears fails the
/// call at once with its exit status.
pub async fn open(req: &OpenRequest, display: &str) -> Result<OpenResponse, ExecError> {
    let started = Instant::now();
    let timeout = timeout_of(req.timeout_ms, DEFAULT_OPEN_TIMEOUT);
    let path = files::expand(&req.path);
    let mut env = BTreeMap::new();
    env.insert("DISPLAY".to_string(), display.to_string());
    let (argv, mut wanted) = if path.exists() {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.to_string_lossy().into_owned());
        let stem = path
            .file_stem()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| name.clone());
        let argv = vec!["xdg-open".to_string(), path.to_string_lossy().into_owned()];
        (argv, vec![name, stem])
    } else if which(&req.path).is_some() {
        let name = Path::new(&req.path)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| req.path.clone());
        (vec![req.path.clone()], vec![name])
    } else {
        return Err(ExecError::OpenNotFound {
            path: req.path.clone(),
        });
    };
    if let Some(w) = &req.window {
        wanted = vec![w.clone()];
    }
    wanted.dedup();

    let child = detached(&argv, None, &env)
        .spawn()
        .map_err(|e| spawn_error(&argv[0], e))?;
    let display = display.to_string();
    let req_path = req.path.clone();
    let program = argv[0].clone();
    let result = tokio::task::spawn_blocking(move || {
        wait_open_window(
            child, &program, &display, &req_path, wanted, timeout, started,
        )
    })
    .await
    .map_err(|e| ExecError::Wait {
        program: argv[0].clone(),
        source: io::Error::other(e.to_string()),
    })??;
    Ok(OpenResponse {
        window: result,
        waited_ms: started.elapsed().as_secs_f64() * 1000.0,
    })
}

/// The blocking half of [`open`]: polls the window list, watches the
/// opener's exit status, activates the window found.
fn wait_open_window(
    child: std::process::Child,
    program: &str,
    display: &str,
    path: &str,
    wanted: Vec<String>,
    timeout: Duration,
    started: Instant,
) -> Result<protocol::api::WindowInfo, ExecError> {
    let window_err = |source| ExecError::Window {
        path: path.to_string(),
        source,
    };
    let matches: Vec<WindowMatch> = wanted
        .iter()
        .map(|w| WindowMatch {
            title: Some(w.clone()),
            exact: false,
            class: None,
            timeout_ms: None,
        })
        .collect();
    let windows = match Windows::connect(display) {
        Ok(w) => w,
        Err(e) => {
            reap(child);
            return Err(window_err(e));
        }
    };
    let mut child = Some(child);
    let outcome = loop {
        if let Some(c) = child.as_mut() {
            match c.try_wait() {
                Ok(Some(status)) if !status.success() => {
                    break Err(ExecError::OpenFailed {
                        path: path.to_string(),
                        program: program.to_string(),
                        status: status.to_string(),
                    });
                }
                Ok(Some(_)) | Err(_) => child = None,
                Ok(None) => {}
            }
        }
        match windows.find_any(&matches) {
            Ok(found) if !found.is_empty() => break Ok(found[0].clone()),
            Ok(_) => {}
            // A window manager that is still starting: keep trying.
            Err(WindowError::NoWindowManager { .. }) => {}
            Err(e) => break Err(window_err(e)),
        }
        if started.elapsed() >= timeout {
            break Err(ExecError::OpenTimeout {
                path: path.to_string(),
                wanted: wanted.clone(),
                timeout_ms: timeout.as_millis() as u64,
            });
        }
        std::thread::sleep(OPEN_POLL);
    };
    if let Some(c) = child {
        reap(c);
    }
    let window = outcome?;
    if let Err(e) = windows.activate(window.id) {
        tracing::warn!("opened {path}, but activating its window failed: {e}");
    }
    let now = windows
        .list()
        .ok()
        .and_then(|l| l.into_iter().find(|w| w.id == window.id))
        .unwrap_or(window);
    Ok(now)
}

/// What an OSWorld script route ran, with the pieces its reply is built
/// from. The route answers HTTP 500 when `timed_out`, else 200 with
/// [`ScriptRun::python_body`] or [`ScriptRun::bash_body`].
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptRun {
    /// Standard output (for bash: stdout and stderr merged, as OSWorld).
    pub output: String,
    /// Standard error ("" for bash).
    pub error: String,
    /// Python's `returncode`: the exit code, or minus the signal number.
    pub returncode: i32,
    pub timed_out: bool,
    /// The timeout applied, in seconds (echoed in bash's timeout message).
    pub timeout_s: f64,
    pub duration_ms: f64,
}

impl ScriptRun {
    fn from_response(r: ExecResponse, timeout: Duration) -> ScriptRun {
        let returncode = match (r.exit_code, r.signal) {
            (Some(c), _) => c,
            (None, Some(s)) => -s,
            (None, None) => -1,
        };
        ScriptRun {
            output: r.stdout,
            error: r.stderr,
            returncode,
            timed_out: r.timed_out,
            timeout_s: timeout.as_secs_f64(),
            duration_ms: r.duration_ms,
        }
    }

    /// OSWorld's `/run_python` reply body: `{status, message, need_more,
    /// output, error, return_code}`, or on timeout `{status: "error",
    /// message: "Execution timeout: ...", error: "TimeoutExpired",
    /// need_more, output: null}`.
    pub fn python_body(&self) -> Value {
        if self.timed_out {
            return json!({
                "status": "error",
                "message": "Execution timeout: Code took too long to execute",
                "error": "TimeoutExpired",
                "need_more": false,
                "output": null,
            });
        }
        let mut message = self.output.clone();
        let mut error = self.error.clone();
        if !error.is_empty() {
            if !message.is_empty() {
                message.push('\n');
            }
            message.push_str(&error);
        }
        let status = if self.returncode != 0 {
            if error.is_empty() {
                error = format!("Process exited with code {}", self.returncode);
                if !message.is_empty() {
                    message.push('\n');
                }
                message.push_str(&error);
            }
            "error"
        } else {
            "success"
        };
        json!({
            "status": status,
            "message": message,
            "need_more": false,
            "output": self.output,
            "error": error,
            "return_code": self.returncode,
        })
    }

    /// OSWorld's `/run_bash_script` reply body: `{status, output, error:
    /// "", returncode}`; on timeout the output says so and returncode is -1.
    pub fn bash_body(&self) -> Value {
        if self.timed_out {
            let secs = if self.timeout_s.fract() == 0.0 {
                format!("{}", self.timeout_s as u64)
            } else {
                format!("{}", self.timeout_s)
            };
            return json!({
                "status": "error",
                "output": format!("Script execution timed out after {secs} seconds"),
                "error": "",
                "returncode": -1,
            });
        }
        json!({
            "status": if self.returncode == 0 { "success" } else { "error" },
            "output": self.output,
            "error": "",
            "returncode": self.returncode,
        })
    }
}

/// A script file in the temp folder, removed on drop.
struct ScriptFile(PathBuf);

impl ScriptFile {
    fn create(prefix: &str, suffix: &str, text: &str, mode: u32) -> Result<ScriptFile, ExecError> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let path = std::env::temp_dir().join(format!(
            "{prefix}{}_{}_{nanos:08x}{suffix}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let write = || -> io::Result<()> {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(mode)
                .open(&path)?;
            f.write_all(text.as_bytes())
        };
        match write() {
            Ok(()) => Ok(ScriptFile(path)),
            Err(source) => {
                let _ = std::fs::remove_file(&path);
                Err(ExecError::Script { path, source })
            }
        }
    }
}

impl Drop for ScriptFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// OSWorld's `/run_python`: writes `code` to a temp file and runs it with
/// `/usr/bin/python3` (or `python3` on `PATH` when that is missing),
/// timeout default [`DEFAULT_PYTHON_TIMEOUT`].
pub async fn run_python(code: &str, timeout: Option<Duration>) -> Result<ScriptRun, ExecError> {
    let timeout = timeout.unwrap_or(DEFAULT_PYTHON_TIMEOUT).min(MAX_TIMEOUT);
    let file = ScriptFile::create("python_exec_", ".py", code, 0o600)?;
    let python = if Path::new("/usr/bin/python3").exists() {
        "/usr/bin/python3"
    } else {
        "python3"
    };
    let mut cmd = tokio::process::Command::new(python);
    cmd.arg(&file.0);
    let r = run_command(cmd, python, None, timeout, false).await?;
    drop(file);
    Ok(ScriptRun::from_response(r, timeout))
}

/// OSWorld's `/run_bash_script`: prepends `#!/bin/bash` unless the script
/// has it, runs it with `/bin/bash` in `working_dir` (a leading `~`
/// expanded; a missing folder is [`ExecError::Cwd`]), stderr merged into
/// stdout, timeout default [`DEFAULT_BASH_TIMEOUT`].
pub async fn run_bash_script(
    script: &str,
    timeout: Option<Duration>,
    working_dir: Option<&str>,
) -> Result<ScriptRun, ExecError> {
    let timeout = timeout.unwrap_or(DEFAULT_BASH_TIMEOUT).min(MAX_TIMEOUT);
    let cwd = match working_dir {
        Some(d) if !d.is_empty() => {
            let p = PathBuf::from(files::expand_user(d));
            if !p.exists() {
                return Err(ExecError::Cwd { path: p });
            }
            Some(p)
        }
        _ => None,
    };
    let text = if script.contains("#!/bin/bash") {
        script.to_string()
    } else {
        format!("#!/bin/bash\n\n{script}")
    };
    let file = ScriptFile::create("deskenv_script_", ".sh", &text, 0o755)?;
    let mut cmd = tokio::process::Command::new("/bin/bash");
    cmd.arg(&file.0);
    if let Some(cwd) = cwd {
        cmd.current_dir(cwd);
    }
    let r = run_command(cmd, "/bin/bash", None, timeout, true).await?;
    drop(file);
    Ok(ScriptRun::from_response(r, timeout))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(command: Command) -> ExecRequest {
        ExecRequest {
            command,
            timeout_ms: None,
            cwd: None,
            env: BTreeMap::new(),
            stdin: None,
        }
    }

    fn argv(items: &[&str]) -> Command {
        Command::Argv(items.iter().map(|s| s.to_string()).collect())
    }

    fn alive(pid: i32) -> bool {
        // SAFETY: signal 0 only checks that the process exists.
        unsafe { libc::kill(pid, 0) == 0 }
    }

    #[tokio::test]
    async fn exit_code_and_streams() {
        let r = run(&req(Command::Shell(
            "echo out; echo err >&2; exit 3".into(),
        )))
        .await
        .unwrap();
        assert_eq!(r.stdout, "out\n");
        assert_eq!(r.stderr, "err\n");
        assert_eq!(r.exit_code, Some(3));
        assert_eq!(r.signal, None);
        assert!(!r.timed_out);

        let r = run(&req(argv(&["true"]))).await.unwrap();
        assert_eq!(r.exit_code, Some(0));
    }

    #[tokio::test]
    async fn signal_is_reported() {
        let r = run(&req(Command::Shell("kill -TERM $$".into())))
            .await
            .unwrap();
        assert_eq!(r.exit_code, None);
        assert_eq!(r.signal, Some(libc::SIGTERM));
    }

    #[tokio::test]
    async fn stdin_cwd_env_and_home() {
        let dir = tempfile::tempdir().unwrap();
        let mut r = req(Command::Shell("cat; pwd; echo $DESKENV_X".into()));
        r.stdin = Some("from stdin\n".into());
        r.cwd = Some(dir.path().to_string_lossy().into_owned());
        r.env.insert("DESKENV_X".into(), "value x".into());
        let out = run(&r).await.unwrap();
        let real = dir.path().canonicalize().unwrap();
        assert_eq!(
            out.stdout,
            format!("from stdin\n{}\nvalue x\n", real.display())
        );

        let out = run(&req(argv(&["echo", "~/x", "a~/b"]))).await.unwrap();
        let home = std::env::var("HOME").unwrap();
        assert_eq!(
            out.stdout,
            format!("{}/x a~/b\n", home.trim_end_matches('/'))
        );
    }

    #[tokio::test]
    async fn errors_name_what_failed() {
        let err = run(&req(argv(&["deskenv-no-such-program", "x"])))
            .await
            .unwrap_err();
        assert!(matches!(err, ExecError::NotFound { .. }), "{err}");
        assert!(err.to_string().contains("deskenv-no-such-program"), "{err}");

        let mut r = req(argv(&["true"]));
        r.cwd = Some("/nonexistent/deskenv-dir".into());
        let err = run(&r).await.unwrap_err();
        assert!(matches!(err, ExecError::Cwd { .. }), "{err}");
        assert!(
            err.to_string().contains("/nonexistent/deskenv-dir"),
            "{err}"
        );

        let err = run(&req(argv(&[]))).await.unwrap_err();
        assert!(matches!(err, ExecError::EmptyCommand), "{err}");
    }

    #[tokio::test]
    async fn timeout_kills_the_group() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        // The shell starts a grandchild sleep in the background, records its
        // pid, prints, and waits on a sleep of its own.
        let script = format!(
            "sleep 300 & echo $! > {}; echo started; sleep 300",
            pidfile.display()
        );
        let mut r = req(Command::Shell(script));
        r.timeout_ms = Some(500);
        let t = Instant::now();
        let out = run(&r).await.unwrap();
        assert!(out.timed_out);
        assert_eq!(out.signal, Some(libc::SIGKILL));
        assert_eq!(out.stdout, "started\n");
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
        let grandchild: i32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // The grandchild is killed; it may linger as a zombie of init for a
        // moment, so poll its state.
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let stat = std::fs::read_to_string(format!("/proc/{grandchild}/stat"));
            let gone = match stat {
                Err(_) => true,
                Ok(s) => s.split_whitespace().nth(2) == Some("Z") || !alive(grandchild),
            };
            if gone {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "grandchild {grandchild} survived"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    #[tokio::test]
    async fn background_grandchild_does_not_block() {
        // `cmd &` keeps stdout open; the call returns shortly after the
        // shell exits, without killing the background process.
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        let script = format!("sleep 30 & echo $! > {}; echo done", pidfile.display());
        let t = Instant::now();
        let out = run(&req(Command::Shell(script))).await.unwrap();
        assert!(t.elapsed() < Duration::from_secs(5));
        assert_eq!(out.stdout, "done\n");
        assert_eq!(out.exit_code, Some(0));
        let pid: i32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(alive(pid));
        // SAFETY: killing the sleep this test started.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }

    #[tokio::test]
    async fn output_is_capped() {
        let mut r = req(Command::Shell(format!(
            "head -c {} /dev/zero | tr '\\0' a",
            OUTPUT_CAP + 1000
        )));
        r.timeout_ms = Some(60_000);
        let out = run(&r).await.unwrap();
        assert!(out.stdout.starts_with("aaaa"));
        assert!(
            out.stdout.ends_with("bytes]"),
            "{}",
            &out.stdout[out.stdout.len() - 80..]
        );
        let kept = out.stdout.split("\n[deskenv").next().unwrap();
        assert_eq!(kept.len(), OUTPUT_CAP);
        assert!(kept.bytes().all(|b| b == b'a'));
        assert_eq!(out.exit_code, Some(0));
    }

    #[tokio::test]
    async fn lossy_utf8() {
        let out = run(&req(Command::Shell("printf 'a\\377b'".into())))
            .await
            .unwrap();
        assert_eq!(out.stdout, "a\u{fffd}b");
    }

    #[tokio::test]
    async fn launch_is_detached_and_reaped() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("m");
        let pid = launch(&LaunchRequest {
            command: Command::Shell(format!("echo $$ > {}", marker.display())),
            cwd: None,
            env: BTreeMap::new(),
        })
        .unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        while !marker.exists() || std::fs::read_to_string(&marker).unwrap().is_empty() {
            assert!(Instant::now() < deadline);
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(
            std::fs::read_to_string(&marker).unwrap().trim(),
            pid.to_string()
        );
        // Reaped: no zombie left behind.
        loop {
            if !Path::new(&format!("/proc/{pid}")).exists() {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "launched process {pid} not reaped"
            );
            std::thread::sleep(Duration::from_millis(20));
        }

        // Its own session: the session id is its pid.
        let pid = launch(&LaunchRequest {
            command: argv(&["sleep", "5"]),
            cwd: None,
            env: BTreeMap::new(),
        })
        .unwrap();
        // SAFETY: getsid has no preconditions.
        assert_eq!(unsafe { libc::getsid(pid as i32) }, pid as i32);
        // SAFETY: killing the sleep this test started.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };

        let err = launch(&LaunchRequest {
            command: argv(&["deskenv-no-such-program"]),
            cwd: None,
            env: BTreeMap::new(),
        })
        .unwrap_err();
        assert!(matches!(err, ExecError::NotFound { .. }), "{err}");
    }

    #[tokio::test]
    async fn open_missing_is_not_found() {
        let err = open(
            &OpenRequest {
                path: "/nonexistent/deskenv.txt".into(),
                window: None,
                timeout_ms: Some(100),
            },
            ":0",
        )
        .await
        .unwrap_err();
        assert!(matches!(err, ExecError::OpenNotFound { .. }), "{err}");
        assert!(
            err.to_string().contains("/nonexistent/deskenv.txt"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn python_helper() {
        if which("python3").is_none() && !Path::new("/usr/bin/python3").exists() {
            eprintln!("skipped: no python3");
            return;
        }
        let r = run_python("print('hi')", None).await.unwrap();
        assert_eq!(r.output, "hi\n");
        assert_eq!(r.returncode, 0);
        let body = r.python_body();
        assert_eq!(body["status"], "success");
        assert_eq!(body["message"], "hi\n");
        assert_eq!(body["return_code"], 0);

        let r = run_python("import sys; sys.exit(4)", None).await.unwrap();
        let body = r.python_body();
        assert_eq!(body["status"], "error");
        assert_eq!(body["error"], "Process exited with code 4");

        let r = run_python(
            "import time; time.sleep(30)",
            Some(Duration::from_millis(300)),
        )
        .await
        .unwrap();
        assert!(r.timed_out);
        assert_eq!(r.python_body()["error"], "TimeoutExpired");
    }

    #[tokio::test]
    async fn bash_helper() {
        let dir = tempfile::tempdir().unwrap();
        let r = run_bash_script(
            "echo out; echo err >&2; pwd; exit 2",
            None,
            Some(dir.path().to_str().unwrap()),
        )
        .await
        .unwrap();
        let real = dir.path().canonicalize().unwrap();
        assert_eq!(r.output, format!("out\nerr\n{}\n", real.display()));
        assert_eq!(r.returncode, 2);
        let body = r.bash_body();
        assert_eq!(body["status"], "error");
        assert_eq!(body["error"], "");
        assert_eq!(body["returncode"], 2);

        let r = run_bash_script("sleep 30", Some(Duration::from_secs(1)), None)
            .await
            .unwrap();
        assert!(r.timed_out);
        assert_eq!(
            r.bash_body()["output"],
            "Script execution timed out after 1 seconds"
        );

        let err = run_bash_script("true", None, Some("/nonexistent/deskenv"))
            .await
            .unwrap_err();
        assert!(matches!(err, ExecError::Cwd { .. }), "{err}");
    }
}
