//! Guest images: the manifest a recipe writes beside `base.qcow2`, checks
//! that an image folder is whole, and `deskenv image build`, which runs a
//! recipe's `build.sh`.
//!
//! A recipe (such as `vm-images/debian-desktop/`) writes into
//! `<cache>/images/<name>-<recipehash12>/`: `base.qcow2`, `vmlinuz`,
//! `initrd.img` and, last, `manifest.json` with `"complete": true`. A build
//! whose inputs did not change finds that folder and reuses it.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;

#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    #[error("image folder {0}: no manifest.json (build an image with `deskenv image build`)")]
    NoManifest(PathBuf),
    #[error("{path}: {message}")]
    BadManifest { path: PathBuf, message: String },
    #[error("image {dir}: {file} is missing (rebuild with `deskenv image build --force`)")]
    MissingFile { dir: PathBuf, file: String },
    #[error(
        "image {dir}: {file} is corrupt: {reason} (rebuild with `deskenv image build --force`)"
    )]
    Corrupt {
        dir: PathBuf,
        file: String,
        reason: String,
    },
    #[error("no complete image under {0}: build one with `deskenv image build`")]
    NoImage(PathBuf),
    #[error("recipe {0}: no executable build.sh there")]
    NoRecipe(PathBuf),
    #[error("image build with {recipe} failed ({status}); last output:\n{tail}")]
    BuildFailed {
        recipe: PathBuf,
        status: String,
        tail: String,
    },
    #[error("{context}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> ImageError {
    let context = context.into();
    move |source| ImageError::Io { context, source }
}

/// `manifest.json`, as written by a recipe's build.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Manifest {
    pub name: String,
    pub complete: bool,
    pub recipe_hash: String,
    #[serde(default)]
    pub built_at: String,
    #[serde(default)]
    pub suite: String,
    #[serde(default)]
    pub mirror: String,
    pub kernel_version: String,
    pub kernel_cmdline: String,
    #[serde(default)]
    pub guest: GuestInfo,
    pub files: ImageFiles,
    #[serde(default)]
    pub build_seconds: Option<f64>,
    #[serde(default)]
    pub packages: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ImageFiles {
    pub image: ImageFile,
    pub kernel: ImageFile,
    pub initrd: ImageFile,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ImageFile {
    pub path: String,
    pub sha256: String,
    #[serde(default)]
    pub bytes: Option<u64>,
}

/// What the controller needs to know about the guest.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct GuestInfo {
    /// The guest agent's TCP port inside the guest.
    pub agent_port: u16,
    pub user: String,
    pub password: String,
    pub screen: Screen,
    pub markers: Markers,
    /// Run through the agent before the ready snapshot is saved.
    pub warmup: Vec<String>,
    /// How the controller sets the guest clock after a restore: `agent`
    /// (`POST /v1/clock`) or empty (not at all).
    pub clock: String,
}

impl Default for GuestInfo {
    fn default() -> Self {
        GuestInfo {
            agent_port: 5000,
            user: "user".into(),
            password: "password".into(),
            screen: Screen::default(),
            markers: Markers::default(),
            warmup: Vec::new(),
            clock: String::new(),
        }
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct Screen {
    pub width: u32,
    pub height: u32,
}

impl Default for Screen {
    fn default() -> Self {
        Screen {
            width: 1920,
            height: 1080,
        }
    }
}

/// Lines the guest writes to its serial console as it boots.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct Markers {
    pub multiuser: String,
    pub x_ready: String,
    pub agent_ready: String,
    pub error: String,
}

impl Default for Markers {
    fn default() -> Self {
        Markers {
            multiuser: "DESKENV-MULTIUSER".into(),
            x_ready: "DESKENV-X-READY".into(),
            agent_ready: "DESKENV-AGENT-READY".into(),
            error: "DESKENV-ERROR".into(),
        }
    }
}

/// A complete image folder.
#[derive(Debug, Clone)]
pub struct Image {
    pub dir: PathBuf,
    pub manifest: Manifest,
}

impl Image {
    /// Opens an image folder and checks that it is whole: the manifest says
    /// complete, every file is there, `base.qcow2` has the recorded size and
    /// a qcow2 header. (The full sha256 is `verify`'s job: it reads
    /// gigabytes.)
    pub fn open(dir: &Path) -> Result<Image, ImageError> {
        // The real path: the snapshot key holds the kernel's path, and a
        // cache reached through a link must not make a new snapshot.
        let real = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        let dir = real.as_path();
        let path = dir.join("manifest.json");
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ImageError::NoManifest(dir.to_path_buf()))
            }
            Err(e) => return Err(io(format!("reading {}", path.display()))(e)),
        };
        let manifest: Manifest =
            serde_json::from_str(&text).map_err(|e| ImageError::BadManifest {
                path: path.clone(),
                message: e.to_string(),
            })?;
        if !matches!(manifest.guest.clock.as_str(), "" | "agent") {
            return Err(ImageError::BadManifest {
                path,
                message: format!(
                    "field `guest.clock` is {:?}: expected \"agent\" or \"\"",
                    manifest.guest.clock
                ),
            });
        }
        if !manifest.complete {
            return Err(ImageError::BadManifest {
                path,
                message: "field `complete` is false: the build did not finish".into(),
            });
        }
        let image = Image {
            dir: dir.to_path_buf(),
            manifest,
        };
        for f in [
            &image.manifest.files.image,
            &image.manifest.files.kernel,
            &image.manifest.files.initrd,
        ] {
            let p = dir.join(&f.path);
            let meta = std::fs::metadata(&p).map_err(|_| ImageError::MissingFile {
                dir: dir.to_path_buf(),
                file: f.path.clone(),
            })?;
            if let Some(bytes) = f.bytes {
                if meta.len() != bytes {
                    return Err(ImageError::Corrupt {
                        dir: dir.to_path_buf(),
                        file: f.path.clone(),
                        reason: format!("{} bytes, the manifest says {bytes}", meta.len()),
                    });
                }
            }
        }
        let mut magic = [0u8; 4];
        std::fs::File::open(image.base())
            .and_then(|mut f| f.read_exact(&mut magic))
            .map_err(io(format!("reading {}", image.base().display())))?;
        if &magic != b"QFI\xfb" {
            return Err(ImageError::Corrupt {
                dir: dir.to_path_buf(),
                file: image.manifest.files.image.path.clone(),
                reason: "no qcow2 header".into(),
            });
        }
        Ok(image)
    }

    /// The newest complete image under `<cache>/images/`.
    pub fn latest(cache: &Path) -> Result<Image, ImageError> {
        let root = crate::paths::images_dir(cache);
        let mut found: Vec<Image> = Vec::new();
        if let Ok(entries) = std::fs::read_dir(&root) {
            for e in entries.flatten() {
                if let Ok(img) = Image::open(&e.path()) {
                    found.push(img);
                }
            }
        }
        found.sort_by(|a, b| a.manifest.built_at.cmp(&b.manifest.built_at));
        found.pop().ok_or(ImageError::NoImage(root))
    }

    pub fn base(&self) -> PathBuf {
        self.dir.join(&self.manifest.files.image.path)
    }

    pub fn kernel(&self) -> PathBuf {
        self.dir.join(&self.manifest.files.kernel.path)
    }

    pub fn initrd(&self) -> PathBuf {
        self.dir.join(&self.manifest.files.initrd.path)
    }

    /// The image's identity: the sha256 of `base.qcow2`, kernel and initrd.
    pub fn digest(&self) -> String {
        let f = &self.manifest.files;
        format!("{}:{}:{}", f.image.sha256, f.kernel.sha256, f.initrd.sha256)
    }

    /// Recomputes the sha256 of every file and compares with the manifest.
    pub fn verify(&self) -> Result<(), ImageError> {
        use sha2::Digest;
        for f in [
            &self.manifest.files.image,
            &self.manifest.files.kernel,
            &self.manifest.files.initrd,
        ] {
            let p = self.dir.join(&f.path);
            let mut file =
                std::fs::File::open(&p).map_err(io(format!("opening {}", p.display())))?;
            let mut h = sha2::Sha256::new();
            std::io::copy(&mut file, &mut h).map_err(io(format!("reading {}", p.display())))?;
            let got = hex::encode(h.finalize());
            if got != f.sha256 {
                return Err(ImageError::Corrupt {
                    dir: self.dir.clone(),
                    file: f.path.clone(),
                    reason: format!("sha256 {got}, the manifest says {}", f.sha256),
                });
            }
        }
        Ok(())
    }
}

/// Options for [`build`].
#[derive(Debug, Clone, Default)]
pub struct BuildOptions {
    pub mirror: Option<String>,
    pub suite: Option<String>,
    pub agent: Option<PathBuf>,
    pub out: Option<PathBuf>,
    pub force: bool,
}

/// What [`build`] did.
#[derive(Debug, Clone)]
pub struct Built {
    pub image: Image,
    /// True when the inputs had not changed and the cached image was reused.
    pub cached: bool,
    pub seconds: f64,
}

/// Runs `<recipe>/build.sh` (through sudo when not root), with its progress
/// on our stderr; the recipe prints the image folder as its last line.
pub fn build(recipe: &Path, cache: &Path, opts: &BuildOptions) -> Result<Built, ImageError> {
    let script = recipe.join("build.sh");
    if !script.is_file() {
        return Err(ImageError::NoRecipe(recipe.to_path_buf()));
    }
    let name = recipe
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "image".into());
    let root = unsafe { libc::geteuid() } == 0;
    let mut cmd = if root {
        std::process::Command::new(&script)
    } else {
        let mut c = std::process::Command::new("sudo");
        c.arg("--preserve-env=DESKENV_IMAGES").arg(&script);
        c
    };
    // Without --out the recipe picks $DESKENV_IMAGES/<name>-<hash12>.
    if let Some(out) = &opts.out {
        cmd.arg("--out").arg(out);
    } else {
        cmd.env("DESKENV_IMAGES", crate::paths::images_dir(cache));
    }
    if let Some(m) = &opts.mirror {
        cmd.arg("--mirror").arg(m);
    }
    if let Some(s) = &opts.suite {
        cmd.arg("--suite").arg(s);
    }
    if let Some(a) = &opts.agent {
        cmd.arg("--agent").arg(a);
    }
    if opts.force {
        cmd.arg("--force");
    }
    tracing::info!(recipe = %recipe.display(), name, "building image");
    let t = std::time::Instant::now();
    let out = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(io(format!("starting {}", script.display())))?;
    let out = tee_stderr(out).map_err(io(format!("running {}", script.display())))?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        let tail: Vec<&str> = out.stderr_tail.lines().rev().take(25).collect();
        return Err(ImageError::BuildFailed {
            recipe: recipe.to_path_buf(),
            status: out.status.to_string(),
            tail: tail.into_iter().rev().collect::<Vec<_>>().join("\n"),
        });
    }
    let cached = stdout.lines().any(|l| l.trim() == "cached");
    let dir = stdout
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map(|l| PathBuf::from(l.trim()))
        .ok_or_else(|| ImageError::BuildFailed {
            recipe: recipe.to_path_buf(),
            status: "no image folder printed".into(),
            tail: stdout.clone(),
        })?;
    let image = Image::open(&dir)?;
    Ok(Built {
        image,
        cached,
        seconds: t.elapsed().as_secs_f64(),
    })
}

struct TeeOutput {
    status: std::process::ExitStatus,
    stdout: Vec<u8>,
    stderr_tail: String,
}

/// Waits for the child while copying its stderr to ours (the build's
/// progress) and keeping the last part for an error message.
fn tee_stderr(mut child: std::process::Child) -> std::io::Result<TeeOutput> {
    use std::io::{BufRead, Write};
    let stderr = child.stderr.take().expect("stderr piped");
    let mut stdout = child.stdout.take().expect("stdout piped");
    let reader = std::thread::spawn(move || {
        let mut tail = std::collections::VecDeque::new();
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            let _ = writeln!(std::io::stderr(), "{line}");
            tail.push_back(line);
            if tail.len() > 60 {
                tail.pop_front();
            }
        }
        tail.into_iter().collect::<Vec<_>>().join("\n")
    });
    let mut out = Vec::new();
    stdout.read_to_end(&mut out)?;
    let status = child.wait()?;
    let stderr_tail = reader.join().unwrap_or_default();
    Ok(TeeOutput {
        status,
        stdout: out,
        stderr_tail,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_image(dir: &Path, base: &[u8]) {
        std::fs::write(dir.join("base.qcow2"), base).unwrap();
        std::fs::write(dir.join("vmlinuz"), b"k").unwrap();
        std::fs::write(dir.join("initrd.img"), b"i").unwrap();
        let m = serde_json::json!({
            "name": "t", "complete": true, "recipe_hash": "abc", "built_at": "2026-01-01T00:00:00Z",
            "kernel_version": "6.1", "kernel_cmdline": "root=/dev/vda",
            "files": {
                "image": {"path": "base.qcow2", "sha256": "x", "bytes": base.len()},
                "kernel": {"path": "vmlinuz", "sha256": "y"},
                "initrd": {"path": "initrd.img", "sha256": "z"}
            }
        });
        std::fs::write(dir.join("manifest.json"), m.to_string()).unwrap();
    }

    #[test]
    fn opens_a_whole_image_and_defaults_guest_info() {
        let d = tempfile::tempdir().unwrap();
        write_image(d.path(), b"QFI\xfb rest");
        let img = Image::open(d.path()).unwrap();
        assert_eq!(img.manifest.guest.agent_port, 5000);
        assert_eq!(
            img.manifest.guest.markers.agent_ready,
            "DESKENV-AGENT-READY"
        );
    }

    #[test]
    fn missing_and_corrupt_files_are_named() {
        let d = tempfile::tempdir().unwrap();
        assert!(matches!(
            Image::open(d.path()),
            Err(ImageError::NoManifest(_))
        ));
        write_image(d.path(), b"QFI\xfb rest");
        std::fs::remove_file(d.path().join("vmlinuz")).unwrap();
        let e = Image::open(d.path()).unwrap_err().to_string();
        assert!(e.contains("vmlinuz is missing"), "{e}");
        write_image(d.path(), b"NOTQCOW2!");
        let e = Image::open(d.path()).unwrap_err().to_string();
        assert!(e.contains("base.qcow2 is corrupt: no qcow2 header"), "{e}");
        write_image(d.path(), b"QFI\xfb rest");
        std::fs::write(d.path().join("base.qcow2"), b"QFI\xfb").unwrap();
        let e = Image::open(d.path()).unwrap_err().to_string();
        assert!(e.contains("bytes, the manifest says"), "{e}");
        std::fs::write(d.path().join("manifest.json"), "{\"name\": 1}").unwrap();
        let e = Image::open(d.path()).unwrap_err().to_string();
        assert!(
            e.contains("manifest.json") && e.contains("invalid type"),
            "{e}"
        );
    }
}
