//! Waiting until the screen is quiet after actions, by frame differencing.
//!
//! A blinking caret or a spinner changes a few hundred pixels between frames,
//! so "unchanged" means fewer than `threshold_px` pixels differ, not strict
//! equality.
//!
//! With `idle`, the wait is [`crate::idle::wait`]'s instead: the screen
//! quiet for `quiet_ms` and the desktop's processes idle, in one loop, so
//! neither is judged on stale data.

use crate::capture::{changed_pixels, CaptureError, Capturer};
use crate::idle::{self, IdleError, Probe};
use protocol::api::{Settle, SettleOutcome, SettleReport};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Time between two frames while settling.
const POLL: Duration = Duration::from_millis(25);
/// The longest settle a request may ask for.
pub const MAX_SETTLE_MS: u64 = 60_000;

/// Blocks until the screen has been quiet for `quiet_ms` (and with
/// `settle.idle`, the processes `probe` names are idle) or `max_ms` passed.
pub fn wait(
    capturer: &Mutex<Capturer>,
    settle: &Settle,
    probe: &Probe,
) -> Result<SettleReport, IdleError> {
    if !settle.idle {
        return wait_quiet(capturer, settle).map_err(IdleError::Capture);
    }
    let max = Duration::from_millis(settle.max_ms.min(MAX_SETTLE_MS));
    let params = idle::Params {
        window: Duration::from_millis(500).min(max),
        max,
        cpu_percent: protocol::api::default_idle_cpu(),
        screen: Some(idle::ScreenQuiet {
            quiet: Duration::from_millis(settle.quiet_ms),
            threshold_px: settle.threshold_px,
        }),
    };
    let w = idle::wait(capturer, probe, &params)?;
    // When it gave up, `idle` still says whether the processes were idle:
    // the screen alone may be what kept it waiting.
    let processes_idle = w.report.cpu_percent < params.cpu_percent && w.report.spawned == 0;
    Ok(SettleReport {
        outcome: if w.report.idle {
            SettleOutcome::Quiet
        } else {
            SettleOutcome::Timeout
        },
        waited_ms: w.report.waited_ms,
        frames: w.frames,
        idle: Some(processes_idle),
    })
}

/// Blocks until the screen has been quiet for `quiet_ms` or `max_ms` passed.
pub fn wait_quiet(
    capturer: &Mutex<Capturer>,
    settle: &Settle,
) -> Result<SettleReport, CaptureError> {
    let start = Instant::now();
    let max = Duration::from_millis(settle.max_ms.min(MAX_SETTLE_MS));
    let quiet = Duration::from_millis(settle.quiet_ms);
    let grab = || capturer.lock().unwrap_or_else(|e| e.into_inner()).grab();
    let mut prev = grab()?;
    let mut frames = 1u32;
    let mut quiet_since = Instant::now();
    loop {
        let now = Instant::now();
        if now.duration_since(quiet_since) >= quiet {
            return Ok(report(SettleOutcome::Quiet, start, frames));
        }
        if now.duration_since(start) >= max {
            return Ok(report(SettleOutcome::Timeout, start, frames));
        }
        std::thread::sleep(POLL);
        let frame = grab()?;
        frames += 1;
        if changed_pixels(&prev, &frame) > settle.threshold_px {
            quiet_since = Instant::now();
        }
        prev = frame;
    }
}

fn report(outcome: SettleOutcome, start: Instant, frames: u32) -> SettleReport {
    SettleReport {
        outcome,
        waited_ms: start.elapsed().as_secs_f64() * 1000.0,
        frames,
        idle: None,
    }
}
