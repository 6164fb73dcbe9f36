//! Screen recordings with ffmpeg's `x11grab`, one at a time.
//!
//! [`Recorder::start`] runs
//! `ffmpeg -f x11grab -draw_mouse 1 -video_size WxH -framerate F -i DISPLAY
//! -c:v libx264 -preset ultrafast -pix_fmt yuv420p PATH` and watches it for
//! a second: an ffmpeg that dies at once (no display, bad path, missing
//! encoder) is reported with its stderr. [`Recorder::stop`] sends `q` on
//! ffmpeg's stdin so it finalizes the mp4, waits up to 15 s, then sends
//! SIGINT and finally SIGKILL, and returns the file's path and size.
//!
//! A [`Recorder`] holds its state behind a mutex; share it with an `Arc`.
//! Dropping it kills a running ffmpeg.

use crate::files;
use protocol::api::{RecordingStart, RecordingStatus};
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::Child;
use tokio::task::JoinHandle;

/// Where the mp4 goes when the request names no path.
pub const DEFAULT_PATH: &str = "/tmp/deskenv-recording.mp4";
/// Frames per second when the request names none.
pub const DEFAULT_FPS: u32 = 30;
/// The most frames per second accepted.
pub const MAX_FPS: u32 = 60;
/// An ffmpeg that exits this soon after starting failed to start.
const STARTUP_CHECK: Duration = Duration::from_secs(1);
/// How long ffmpeg gets to finish the file after `q`.
const STOP_WAIT: Duration = Duration::from_secs(15);
/// How long ffmpeg gets after SIGINT before SIGKILL.
const INT_WAIT: Duration = Duration::from_secs(5);
/// Bytes of ffmpeg's stderr kept (the end of it).
const STDERR_KEEP: usize = 64 * 1024;

/// What went wrong starting or stopping a recording.
#[derive(Debug, thiserror::Error)]
pub enum RecordingError {
    #[error("a recording to {path} is already in progress; stop it first")]
    AlreadyRecording { path: String },
    #[error("no recording in progress to stop")]
    NotRecording,
    #[error("frame rate {fps} is out of range: expected 1 to {MAX_FPS}")]
    BadFps { fps: u32 },
    #[error("screen size {width}x{height} is too small to record: expected at least 2x2")]
    BadSize { width: u32, height: u32 },
    #[error("cannot record to {}: its folder does not exist", path.display())]
    NoFolder { path: PathBuf },
    #[error("cannot remove the old recording {}: {source}", path.display())]
    RemoveOld {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("ffmpeg is required for recording but was not found on PATH")]
    FfmpegNotFound,
    #[error("cannot start ffmpeg: {source}")]
    Spawn {
        #[source]
        source: std::io::Error,
    },
    #[error(
        "ffmpeg recording {display} to {path} exited with {status} right after starting: {stderr}"
    )]
    StartFailed {
        display: String,
        path: String,
        status: String,
        stderr: String,
    },
    #[error(
        "the recording to {path} had stopped by itself ({status}) and left no video: {stderr}"
    )]
    Died {
        path: String,
        status: String,
        stderr: String,
    },
    #[error("ffmpeg recording to {path} did not stop on 'q' or SIGINT and was killed; the file is likely unplayable: {stderr}")]
    Unresponsive { path: String, stderr: String },
    #[error("the recording {path} is missing or empty after ffmpeg exited ({status}): {stderr}")]
    EmptyOutput {
        path: String,
        status: String,
        stderr: String,
    },
    #[error("waiting for ffmpeg recording to {path} failed: {source}")]
    Wait {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// A running ffmpeg.
struct Active {
    child: Child,
    /// Kept apart from `child`: tokio's `Child::wait` closes the child's
    /// stdin, and ffmpeg stops reading `q` at end of file.
    stdin: Option<tokio::process::ChildStdin>,
    path: PathBuf,
    started: Instant,
    stderr: JoinHandle<String>,
}

#[derive(Default)]
struct State {
    active: Option<Active>,
    /// The path of the last recording, for [`Recorder::status`].
    last: Option<RecordingStatus>,
}

/// One recording at a time; see the module documentation.
#[derive(Default)]
pub struct Recorder {
    state: tokio::sync::Mutex<State>,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder").finish_non_exhaustive()
    }
}

/// Reads ffmpeg's stderr to the end, keeping the last [`STDERR_KEEP`] bytes.
fn read_stderr(mut pipe: tokio::process::ChildStderr) -> JoinHandle<String> {
    tokio::spawn(async move {
        let mut kept: Vec<u8> = Vec::new();
        let mut chunk = vec![0u8; 8192];
        loop {
            match pipe.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    kept.extend_from_slice(&chunk[..n]);
                    if kept.len() > STDERR_KEEP {
                        kept.drain(..kept.len() - STDERR_KEEP);
                    }
                }
            }
        }
        String::from_utf8_lossy(&kept).trim().to_string()
    })
}

async fn stderr_of(handle: JoinHandle<String>) -> String {
    match tokio::time::timeout(Duration::from_secs(2), handle).await {
        Ok(Ok(s)) => s,
        _ => String::new(),
    }
}

fn size_of(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

fn status_text(s: &ExitStatus) -> String {
    s.to_string()
}

impl Recorder {
    pub fn new() -> Recorder {
        Recorder::default()
    }

    /// Starts recording `display` (whose screen is `size`) to `req.path`
    /// (default [`DEFAULT_PATH`], replaced if it exists) at `req.fps`
    /// (default [`DEFAULT_FPS`]).
    pub async fn start(
        &self,
        req: &RecordingStart,
        display: &str,
        size: (u32, u32),
    ) -> Result<RecordingStatus, RecordingError> {
        let mut state = self.state.lock().await;
        if let Some(active) = state.active.as_mut() {
            match active.child.try_wait() {
                Ok(None) => {
                    return Err(RecordingError::AlreadyRecording {
                        path: active.path.to_string_lossy().into_owned(),
                    })
                }
                // It ended by itself; a new one may start.
                _ => state.active = None,
            }
        }
        let fps = req.fps.unwrap_or(DEFAULT_FPS);
        if fps == 0 || fps > MAX_FPS {
            return Err(RecordingError::BadFps { fps });
        }
        // yuv420p needs even sizes: drop an odd last row or column.
        let (width, height) = (size.0 & !1, size.1 & !1);
        if width == 0 || height == 0 {
            return Err(RecordingError::BadSize {
                width: size.0,
                height: size.1,
            });
        }
        let path = files::expand(req.path.as_deref().unwrap_or(DEFAULT_PATH));
        match path.parent() {
            Some(p) if p.as_os_str().is_empty() || p.is_dir() => {}
            _ => return Err(RecordingError::NoFolder { path }),
        }
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => return Err(RecordingError::RemoveOld { path, source }),
        }

        let mut cmd = tokio::process::Command::new("ffmpeg");
        cmd.args(["-hide_banner", "-nostats", "-loglevel", "error", "-y"])
            .args(["-f", "x11grab", "-draw_mouse", "1"])
            .arg("-video_size")
            .arg(format!("{width}x{height}"))
            .arg("-framerate")
            .arg(fps.to_string())
            .arg("-i")
            .arg(display)
            .args([
                "-c:v",
                "libx264",
                "-preset",
                "ultrafast",
                "-pix_fmt",
                "yuv420p",
            ])
            .arg(&path)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        let mut child = cmd.spawn().map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                RecordingError::FfmpegNotFound
            } else {
                RecordingError::Spawn { source: e }
            }
        })?;
        let started = Instant::now();
        let stdin = child.stdin.take();
        let stderr = read_stderr(child.stderr.take().expect("stderr is piped"));
        let path_text = path.to_string_lossy().into_owned();

        if let Ok(status) = tokio::time::timeout(STARTUP_CHECK, child.wait()).await {
            let status = status.map_err(|source| RecordingError::Wait {
                path: path_text.clone(),
                source,
            })?;
            return Err(RecordingError::StartFailed {
                display: display.to_string(),
                path: path_text,
                status: status_text(&status),
                stderr: stderr_of(stderr).await,
            });
        }
        let status = RecordingStatus {
            path: path_text,
            recording: true,
            bytes: None,
            duration_ms: Some(started.elapsed().as_secs_f64() * 1000.0),
        };
        state.active = Some(Active {
            child,
            stdin,
            path,
            started,
            stderr,
        });
        state.last = Some(status.clone());
        Ok(status)
    }

    /// Stops the recording and returns its path and size in bytes.
    pub async fn stop(&self) -> Result<RecordingStatus, RecordingError> {
        let mut state = self.state.lock().await;
        let Some(mut active) = state.active.take() else {
            return Err(RecordingError::NotRecording);
        };
        let path_text = active.path.to_string_lossy().into_owned();
        let wait_err = |source| RecordingError::Wait {
            path: path_text.clone(),
            source,
        };

        let (status, forced) = match active.child.try_wait().map_err(wait_err)? {
            // ffmpeg stopped on its own (display gone, disk full...).
            Some(status) => {
                let stderr = stderr_of(active.stderr).await;
                if size_of(&active.path) == 0 {
                    return Err(RecordingError::Died {
                        path: path_text,
                        status: status_text(&status),
                        stderr,
                    });
                }
                tracing::warn!("recording to {path_text} had stopped by itself: {stderr}");
                let done = RecordingStatus {
                    path: path_text,
                    recording: false,
                    bytes: Some(size_of(&active.path)),
                    duration_ms: Some(active.started.elapsed().as_secs_f64() * 1000.0),
                };
                state.last = Some(done.clone());
                return Ok(done);
            }
            None => {
                if let Some(mut stdin) = active.stdin.take() {
                    let _ = stdin.write_all(b"q\n").await;
                    let _ = stdin.flush().await;
                }
                match tokio::time::timeout(STOP_WAIT, active.child.wait()).await {
                    Ok(s) => (s.map_err(wait_err)?, false),
                    Err(_) => {
                        if let Some(pid) = active.child.id() {
                            // SAFETY: kill has no memory-safety preconditions.
                            unsafe {
                                libc::kill(pid as i32, libc::SIGINT);
                            }
                        }
                        match tokio::time::timeout(INT_WAIT, active.child.wait()).await {
                            Ok(s) => (s.map_err(wait_err)?, false),
                            Err(_) => {
                                let _ = active.child.kill().await;
                                (active.child.wait().await.map_err(wait_err)?, true)
                            }
                        }
                    }
                }
            }
        };
        let duration_ms = active.started.elapsed().as_secs_f64() * 1000.0;
        let stderr = stderr_of(active.stderr).await;
        if forced {
            return Err(RecordingError::Unresponsive {
                path: path_text,
                stderr,
            });
        }
        let bytes = size_of(&active.path);
        if bytes == 0 {
            return Err(RecordingError::EmptyOutput {
                path: path_text,
                status: status_text(&status),
                stderr,
            });
        }
        let done = RecordingStatus {
            path: path_text,
            recording: false,
            bytes: Some(bytes),
            duration_ms: Some(duration_ms),
        };
        state.last = Some(done.clone());
        Ok(done)
    }

    /// The running recording (with its size so far), or the last one, or
    /// None when there was none.
    pub async fn status(&self) -> Option<RecordingStatus> {
        let mut state = self.state.lock().await;
        if let Some(active) = state.active.as_mut() {
            let running = matches!(active.child.try_wait(), Ok(None));
            return Some(RecordingStatus {
                path: active.path.to_string_lossy().into_owned(),
                recording: running,
                bytes: Some(size_of(&active.path)),
                duration_ms: Some(active.started.elapsed().as_secs_f64() * 1000.0),
            });
        }
        state.last.clone()
    }

    /// The recorder's pid while it records: its CPU is the agent's own
    /// work, not the desktop's (see [`crate::idle`]).
    pub async fn pid(&self) -> Option<u32> {
        let state = self.state.lock().await;
        state.active.as_ref().and_then(|a| a.child.id())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn have_ffmpeg() -> bool {
        std::process::Command::new("ffmpeg")
            .arg("-version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    }

    #[tokio::test]
    async fn stop_without_start_is_an_error() {
        let r = Recorder::new();
        assert!(matches!(r.stop().await, Err(RecordingError::NotRecording)));
        assert!(r.status().await.is_none());
    }

    #[tokio::test]
    async fn bad_requests_are_refused() {
        let r = Recorder::new();
        let req = RecordingStart {
            path: None,
            fps: Some(0),
        };
        let err = r.start(&req, ":987", (100, 100)).await.unwrap_err();
        assert!(matches!(err, RecordingError::BadFps { fps: 0 }), "{err}");
        let req = RecordingStart {
            path: Some("/nonexistent/deskenv/x.mp4".into()),
            fps: None,
        };
        let err = r.start(&req, ":987", (100, 100)).await.unwrap_err();
        assert!(matches!(err, RecordingError::NoFolder { .. }), "{err}");
        assert!(
            err.to_string().contains("/nonexistent/deskenv/x.mp4"),
            "{err}"
        );
        let err = r
            .start(&RecordingStart::default(), ":987", (1, 1))
            .await
            .unwrap_err();
        assert!(matches!(err, RecordingError::BadSize { .. }), "{err}");
    }

    #[tokio::test]
    async fn ffmpeg_that_dies_is_reported_with_stderr() {
        if !have_ffmpeg() {
            eprintln!("skipped: no ffmpeg");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.mp4");
        let r = Recorder::new();
        let req = RecordingStart {
            path: Some(path.to_string_lossy().into_owned()),
            fps: Some(5),
        };
        let err = r.start(&req, ":987", (64, 48)).await.unwrap_err();
        assert!(matches!(err, RecordingError::StartFailed { .. }), "{err}");
        let text = err.to_string();
        assert!(text.contains(":987"), "{text}");
        assert!(text.to_lowercase().contains("display"), "{text}");
        // Nothing is left running.
        assert!(matches!(r.stop().await, Err(RecordingError::NotRecording)));
    }
}
