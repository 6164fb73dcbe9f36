//! Setting the system clock. A VM restored from a snapshot wakes up at the
//! snapshot's time; the controller sends the host's time right after the
//! restore. Needs CAP_SYS_TIME, which the guest image grants to the agent
//! binary as a file capability (children of the agent do not get it).

use protocol::api::ClockResponse;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

#[derive(Debug, thiserror::Error)]
pub enum ClockError {
    #[error("unix_ms {0} is outside 2020-01-01..2100-01-01")]
    OutOfRange(u64),
    #[error("not permitted to set the clock: the agent lacks CAP_SYS_TIME (the image sets it with `setcap cap_sys_time+ep` on the agent binary)")]
    Permission,
    #[error("clock_settime failed: {0}")]
    Os(std::io::Error),
}

const MIN_MS: u64 = 1_577_836_800_000; // 2020-01-01
const MAX_MS: u64 = 4_102_444_800_000; // 2100-01-01

/// Sets CLOCK_REALTIME to `unix_ms`.
pub fn set(unix_ms: u64) -> Result<ClockResponse, ClockError> {
    if !(MIN_MS..MAX_MS).contains(&unix_ms) {
        return Err(ClockError::OutOfRange(unix_ms));
    }
    let previous = now_ms();
    let ts = libc::timespec {
        tv_sec: (unix_ms / 1000) as libc::time_t,
        tv_nsec: ((unix_ms % 1000) * 1_000_000) as libc::c_long,
    };
    // SAFETY: a plain syscall on a valid timespec.
    if unsafe { libc::clock_settime(libc::CLOCK_REALTIME, &ts) } != 0 {
        let e = std::io::Error::last_os_error();
        return Err(if e.raw_os_error() == Some(libc::EPERM) {
            ClockError::Permission
        } else {
            ClockError::Os(e)
        });
    }
    Ok(ClockResponse {
        previous_unix_ms: previous,
        unix_ms: now_ms(),
    })
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_millis() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_range_times_are_refused_before_any_syscall() {
        assert!(matches!(set(0), Err(ClockError::OutOfRange(0))));
        let e = set(5_000_000_000_000).unwrap_err().to_string();
        assert!(e.contains("outside 2020-01-01..2100-01-01"), "{e}");
    }
}
