//! Seeded task data: runs a task's generator on the host and uploads what
//! it wrote for the machine. The expected answers (`truth.json`, `host/`)
//! stay on the host, where the `generated`, `generated_file` and `rerun`
//! getters read them. The contract is in `tasks/ds/README.md`. Generators
//! run with the system's Python ([`python`]).

use crate::guest_client::{GuestClient, GuestError};
use crate::task::LoadedTask;
use protocol::task::Setup;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The longest a generator may run.
pub const GENERATOR_TIMEOUT: Duration = Duration::from_secs(120);

/// The seed of the counterfactual data a `rerun` getter uses: the
/// episode's seed plus this.
pub const RERUN_SEED_OFFSET: u64 = 1_000_003;

/// Which run of the generator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    /// The setup's: the data the agent works on.
    Setup,
    /// The `rerun` getter's: another seed's data.
    Rerun,
}

impl Which {
    pub fn dir_name(self) -> &'static str {
        match self {
            Which::Setup => "setup",
            Which::Rerun => "rerun",
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    #[error("generator {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("generator {}: did not finish within {}s", path.display(), GENERATOR_TIMEOUT.as_secs())]
    Timeout { path: PathBuf },
    #[error("generator {}: {status}; stderr: {stderr}", path.display())]
    Failed {
        path: PathBuf,
        status: String,
        stderr: String,
    },
    #[error("generator {}: {what}", path.display())]
    Output { path: PathBuf, what: String },
    #[error("the task has no `generate` setup step")]
    NoGenerator,
    #[error(transparent)]
    Guest(#[from] GuestError),
    #[error("generator {}: unpacking its {files} files in the machine failed (exit {code:?}): {stderr}", path.display())]
    Unpack {
        path: PathBuf,
        files: usize,
        code: Option<i32>,
        stderr: String,
    },
}

/// A `vm/` tree with more files than this goes up as one tar archive,
/// unpacked in the machine, instead of a request per file (a data lake of
/// 800 files in one request).
pub const ARCHIVE_ABOVE: usize = 16;

/// A tar archive (ustar, GNU long names) of `files` (machine path, local
/// file), their paths relative to `/`, written by the host's `tar`.
fn archive(vm: &Path, files: &[(String, PathBuf)]) -> std::io::Result<Vec<u8>> {
    let list: String = files
        .iter()
        .map(|(target, _)| format!("{}\n", target.trim_start_matches('/')))
        .collect();
    let mut child = std::process::Command::new("tar")
        .args([
            "--create",
            "--file=-",
            "--no-recursion",
            "--owner=0",
            "--group=0",
        ])
        // --directory applies to the names after it: before the list.
        .arg("--directory")
        .arg(vm)
        .arg("--files-from=-")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()?;
    let mut stdin = child.stdin.take().expect("piped");
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        stdin.write_all(list.as_bytes())
    });
    let out = child.wait_with_output()?;
    writer
        .join()
        .map_err(|_| std::io::Error::other("the file list writer panicked"))??;
    if !out.status.success() {
        return Err(std::io::Error::other(format!(
            "tar exited {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(out.stdout)
}

/// Where the generator's runs of one episode go: `<episode>/generated/`.
#[derive(Debug, Clone)]
pub struct Generated {
    pub root: PathBuf,
    pub seed: u64,
    /// Outputs kept for reuse by other episodes ([`run_cached`]); None:
    /// every run is fresh.
    pub cache: Option<PathBuf>,
}

impl Generated {
    pub fn dir(&self, which: Which) -> PathBuf {
        self.root.join(which.dir_name())
    }

    pub fn seed(&self, which: Which) -> u64 {
        match which {
            Which::Setup => self.seed,
            Which::Rerun => self.seed.wrapping_add(RERUN_SEED_OFFSET),
        }
    }

    /// The `truth.json` of a run, as JSON.
    pub fn truth(&self, which: Which) -> Result<serde_json::Value, GenerateError> {
        let path = self.dir(which).join("truth.json");
        let text = std::fs::read_to_string(&path).map_err(|source| GenerateError::Io {
            path: path.clone(),
            source,
        })?;
        serde_json::from_str(&text).map_err(|e| GenerateError::Output {
            path,
            what: format!("truth.json is not JSON: {e}"),
        })
    }
}

/// The task's `generate` step: its generator and arguments.
pub fn generator_of(task: &LoadedTask) -> Option<(String, Vec<String>)> {
    task.spec.config.iter().find_map(|s| match s.parse() {
        Ok(Setup::Generate { generator, args }) => Some((generator, args)),
        _ => None,
    })
}

/// Runs `generator` (relative to the task file) with `--seed` and `--out`
/// into a fresh `g.dir(which)`, then uploads its `vm/` tree.
/// Machine paths in `keep` are not uploaded (the agent's own files, which
/// a re-run must not replace).
pub async fn generate_and_upload(
    task: &LoadedTask,
    generator: &str,
    args: &[String],
    g: &Generated,
    which: Which,
    guest: &GuestClient,
    keep: &[String],
) -> Result<usize, GenerateError> {
    let script = task.dir().join(generator);
    let out = g.dir(which);
    run_cached(&script, args, g.seed(which), &out, g.cache.as_deref()).await?;
    upload(&script, &out.join("vm"), guest, keep).await
}

/// The system's Python (`/usr/bin/python3`, where Debian's packages are:
/// a pyenv or venv `python3` earlier on `PATH` lacks them), else `python3`.
pub fn python() -> &'static str {
    if Path::new("/usr/bin/python3").is_file() {
        "/usr/bin/python3"
    } else {
        "python3"
    }
}

/// [`run`], through `cache` when there is one: a generator is
/// deterministic in its seed (the contract), so one run per (script,
/// arguments, seed) serves every episode that shares the cache; `out` gets
/// a copy. Runs that race on one key both generate; the first to finish is
/// kept.
pub async fn run_cached(
    script: &Path,
    args: &[String],
    seed: u64,
    out: &Path,
    cache: Option<&Path>,
) -> Result<(), GenerateError> {
    let Some(cache) = cache else {
        return run(script, args, seed, out).await;
    };
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| GenerateError::Io { path, source }
    };
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (std::path::absolute(script).map_err(io(script))?, args, seed).hash(&mut h);
    let stem = script.file_stem().unwrap_or_default().to_string_lossy();
    let entry = cache.join(format!("{stem}-{seed}-{:016x}", h.finish()));
    if !entry.join("truth.json").is_file() {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp = cache.join(format!(".tmp-{}-{n}", std::process::id()));
        if let Err(e) = run(script, args, seed, &tmp).await {
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(e);
        }
        if let Err(e) = std::fs::rename(&tmp, &entry) {
            let _ = std::fs::remove_dir_all(&tmp);
            if !entry.join("truth.json").is_file() {
                return Err(GenerateError::Io {
                    path: entry,
                    source: e,
                });
            }
        }
    }
    if out.exists() {
        std::fs::remove_dir_all(out).map_err(io(out))?;
    }
    copy_tree(&entry, out).map_err(io(out))
}

fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let dest = to.join(e.file_name());
        if e.file_type()?.is_dir() {
            copy_tree(&e.path(), &dest)?;
        } else {
            std::fs::copy(e.path(), dest)?;
        }
    }
    Ok(())
}

/// Runs the generator script into a fresh `out`.
pub async fn run(
    script: &Path,
    args: &[String],
    seed: u64,
    out: &Path,
) -> Result<(), GenerateError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| GenerateError::Io { path, source }
    };
    if !script.is_file() {
        return Err(GenerateError::Output {
            path: script.to_path_buf(),
            what: "no such file".into(),
        });
    }
    // Absolute, since the generator runs in its own folder.
    let script = &std::path::absolute(script).map_err(io(script))?;
    if out.exists() {
        std::fs::remove_dir_all(out).map_err(io(out))?;
    }
    std::fs::create_dir_all(out).map_err(io(out))?;
    let mut cmd = tokio::process::Command::new(python());
    cmd.arg(script)
        .arg("--seed")
        .arg(seed.to_string())
        .arg("--out")
        .arg(std::path::absolute(out).map_err(io(out))?)
        .args(args)
        .current_dir(script.parent().unwrap_or(Path::new(".")))
        .env("PYTHONHASHSEED", "0")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let child = cmd.spawn().map_err(io(script))?;
    let done = match tokio::time::timeout(GENERATOR_TIMEOUT, child.wait_with_output()).await {
        Ok(r) => r.map_err(io(script))?,
        Err(_) => {
            return Err(GenerateError::Timeout {
                path: script.to_path_buf(),
            })
        }
    };
    if !done.status.success() {
        let stderr = String::from_utf8_lossy(&done.stderr);
        let tail: Vec<char> = stderr.trim().chars().rev().take(800).collect();
        return Err(GenerateError::Failed {
            path: script.to_path_buf(),
            status: done.status.to_string(),
            stderr: tail.into_iter().rev().collect(),
        });
    }
    if !out.join("truth.json").is_file() {
        return Err(GenerateError::Output {
            path: script.to_path_buf(),
            what: format!("wrote no {}", out.join("truth.json").display()),
        });
    }
    Ok(())
}

/// The files under `vm` with the machine path each goes to
/// (`vm/home/user/a.csv` → `/home/user/a.csv`), sorted.
pub fn vm_files(vm: &Path) -> std::io::Result<Vec<(String, PathBuf)>> {
    let mut out = Vec::new();
    if !vm.exists() {
        return Ok(out);
    }
    let mut stack = vec![vm.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d)? {
            let p = e?.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(rel) = p.strip_prefix(vm) {
                out.push((format!("/{}", rel.to_string_lossy()), p.clone()));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Numbers the archives of one controller.
static UPLOADS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

async fn upload(
    script: &Path,
    vm: &Path,
    guest: &GuestClient,
    keep: &[String],
) -> Result<usize, GenerateError> {
    let mut files = vm_files(vm).map_err(|source| GenerateError::Io {
        path: vm.to_path_buf(),
        source,
    })?;
    files.retain(|(target, _)| !keep.contains(target));
    if files.len() > ARCHIVE_ABOVE {
        let io = |source| GenerateError::Io {
            path: vm.to_path_buf(),
            source,
        };
        let tar = archive(vm, &files).map_err(io)?;
        let at = format!(
            "/tmp/deskenv-upload-{}-{}.tar",
            std::process::id(),
            UPLOADS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        guest.put_file(&at, tar).await?;
        let unpack = format!(
            "tar --extract --file={at} --directory=/ --no-same-owner --no-overwrite-dir --touch; code=$?; rm -f {at}; exit $code"
        );
        let r = guest
            .exec(
                protocol::api::Command::Shell(unpack),
                Duration::from_secs(120),
            )
            .await?;
        if r.exit_code != Some(0) {
            return Err(GenerateError::Unpack {
                path: script.to_path_buf(),
                files: files.len(),
                code: r.exit_code,
                stderr: r.stderr.trim().to_string(),
            });
        }
        return Ok(files.len());
    }
    for (target, local) in &files {
        let bytes = std::fs::read(local).map_err(|source| GenerateError::Io {
            path: local.clone(),
            source,
        })?;
        guest.put_file(target, bytes).await?;
    }
    if files.is_empty() {
        tracing::debug!(
            "generator {} wrote no files for the machine",
            script.display()
        );
    }
    Ok(files.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_generator_writes_its_tree_and_its_failures_are_named() {
        let d = tempfile::tempdir().unwrap();
        let script = d.path().join("gen.py");
        std::fs::write(
            &script,
            "import sys, os, json\n\
             a = dict(zip(sys.argv[1::2], sys.argv[2::2]))\n\
             out = a['--out']\n\
             os.makedirs(out + '/vm/home/user')\n\
             open(out + '/vm/home/user/x.txt', 'w').write(a['--seed'])\n\
             json.dump({'seed': int(a['--seed']), 'n': a.get('--n')}, open(out + '/truth.json', 'w'))\n",
        )
        .unwrap();
        let g = Generated {
            root: d.path().join("generated"),
            seed: 7,
            cache: None,
        };
        let out = g.dir(Which::Rerun);
        run(
            &script,
            &["--n".into(), "3".into()],
            g.seed(Which::Rerun),
            &out,
        )
        .await
        .unwrap();
        let t = g.truth(Which::Rerun).unwrap();
        assert_eq!(t["seed"], 7 + RERUN_SEED_OFFSET);
        assert_eq!(t["n"], "3");
        let files = vm_files(&out.join("vm")).unwrap();
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].0, "/home/user/x.txt");

        std::fs::write(&script, "import sys\nsys.exit('no data for you')\n").unwrap();
        let e = run(&script, &[], 1, &out).await.unwrap_err().to_string();
        assert!(e.contains("gen.py") && e.contains("no data for you"), "{e}");
        std::fs::write(&script, "pass\n").unwrap();
        let e = run(&script, &[], 1, &out).await.unwrap_err().to_string();
        assert!(e.contains("wrote no") && e.contains("truth.json"), "{e}");
        let e = run(&d.path().join("none.py"), &[], 1, &out)
            .await
            .unwrap_err()
            .to_string();
        assert!(e.contains("none.py: no such file"), "{e}");
    }

    #[tokio::test]
    async fn a_cached_generator_runs_once_per_arguments_and_seed() {
        let d = tempfile::tempdir().unwrap();
        let script = d.path().join("gen.py");
        let runs = d.path().join("runs.txt");
        std::fs::write(
            &script,
            format!(
                "import sys, os, json\n\
                 a = dict(zip(sys.argv[1::2], sys.argv[2::2]))\n\
                 open({runs:?}, 'a').write('x')\n\
                 os.makedirs(a['--out'] + '/vm/home/user')\n\
                 open(a['--out'] + '/vm/home/user/s.txt', 'w').write(a['--seed'])\n\
                 json.dump({{'seed': int(a['--seed'])}}, open(a['--out'] + '/truth.json', 'w'))\n"
            ),
        )
        .unwrap();
        let cache = d.path().join("cache");
        let count = || std::fs::read_to_string(&runs).unwrap().len();
        for (n, seed, args, want_runs) in [
            (0, 1, vec![], 1),
            (1, 1, vec![], 1),
            (2, 2, vec![], 2),
            (3, 1, vec!["--rows".to_string(), "5".into()], 3),
        ] {
            let out = d.path().join(format!("ep{n}"));
            run_cached(&script, &args, seed, &out, Some(&cache))
                .await
                .unwrap();
            assert_eq!(count(), want_runs, "episode {n}");
            let s = std::fs::read_to_string(out.join("vm/home/user/s.txt")).unwrap();
            assert_eq!(s, seed.to_string());
        }
        // A failure is not cached.
        std::fs::write(&script, "import sys\nsys.exit('broken')\n").unwrap();
        let out = d.path().join("bad");
        let e = run_cached(&script, &[], 9, &out, Some(&cache)).await;
        assert!(e.unwrap_err().to_string().contains("broken"));
        assert_eq!(std::fs::read_dir(&cache).unwrap().count(), 3);
    }
}
