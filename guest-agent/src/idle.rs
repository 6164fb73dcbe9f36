//! Waiting until the desktop is idle: the CPU use of the desktop's processes,
//! read from `/proc`, and optionally a quiet screen.
//!
//! A quiet screen is not enough: a `python3 -c "import pandas…"` writing a
//! file draws nothing while it works. So every poll reads `utime + stime` of
//! each process in scope (the agent's own uid, or those with the agent's
//! `DISPLAY`) from `/proc/<pid>/stat`, in clock ticks, and the desktop is
//! idle when, over a sliding window, they used less than a share of one core
//! and none of them was started.
//!
//! Processes that live shorter than a poll are the hard part. What is
//! counted of them:
//! - a child reaped by a parent in scope adds its time to the parent's
//!   `cutime + cstime`: that delta is counted, less what was already counted
//!   of that child while it was seen alive (else it would count twice);
//! - any pid first seen during the window makes the window busy on its own
//!   (`spawned`): a burst of `/bin/true`s uses little CPU each, and one
//!   reaped by a parent out of scope leaves no trace in the tick counts.
//!
//! Left out: the agent itself (all its threads: `/proc/<pid>/stat` sums
//! them), its screen recorder (ffmpeg records whole episodes), and kernel
//! threads (root's "processes" when the agent runs as root).

use crate::capture::{changed_pixels, CaptureError, Capturer};
use protocol::api::{BusyProcess, IdleReport, IdleRequest};
use std::collections::{HashMap, VecDeque};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Time between two samples (and frames, with the screen).
const POLL: Duration = Duration::from_millis(25);
/// The longest `max_ms` a request may ask for.
pub const MAX_IDLE_MS: u64 = 600_000;
/// Bounds of `window_ms`.
pub const WINDOW_MS: std::ops::RangeInclusive<u64> = 10..=60_000;
/// How many processes a report names.
const TOP: usize = 3;
/// The kernel's flag for kernel threads (include/linux/sched.h).
const PF_KTHREAD: u64 = 0x0020_0000;
/// Screen pixels that may change between frames and still count as quiet,
/// as [`protocol::api::Settle`]'s default.
pub const DEFAULT_THRESHOLD_PX: u64 = 2000;

#[derive(Debug, thiserror::Error)]
pub enum IdleError {
    #[error("cannot list the processes in /proc")]
    Proc(#[source] std::io::Error),
    #[error("screen capture while waiting for idle")]
    Capture(#[source] CaptureError),
}

/// Which processes count as the desktop's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdleScope {
    /// Every process of the agent's effective uid: in the VM the agent runs
    /// as the desktop user, and the local provider's desktops have their own
    /// PID namespace.
    Uid,
    /// Only processes whose environment has `DISPLAY` set to this display:
    /// for a desktop that shares its uid with unrelated work (tests, a
    /// developer's machine).
    Display(String),
}

/// What to measure and what to leave out; cheap to clone per request.
#[derive(Debug, Clone)]
pub struct Probe {
    pub scope: IdleScope,
    /// Pids never counted (the agent, its recorder).
    pub exclude: Vec<u32>,
}

/// One process's line of `/proc/<pid>/stat`, the fields used here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcStat {
    pub pid: u32,
    pub comm: String,
    pub ppid: u32,
    pub flags: u64,
    /// utime + stime, in clock ticks.
    pub ticks: u64,
    /// cutime + cstime: time of reaped children, in clock ticks.
    pub child_ticks: u64,
    /// Start time after boot, in clock ticks: tells a reused pid apart.
    pub start: u64,
}

/// Parses `/proc/<pid>/stat`. `comm` may hold spaces and parentheses, so it
/// runs from the first `(` to the last `)`.
pub fn parse_stat(text: &str) -> Option<ProcStat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    if close < open {
        return None;
    }
    let pid = text[..open].trim().parse().ok()?;
    let comm = text[open + 1..close].to_string();
    // Fields after comm, counted from 0 here: state is field 3 in proc(5).
    let rest: Vec<&str> = text[close + 1..].split_whitespace().collect();
    let field = |n: usize| -> Option<&str> { rest.get(n - 3).copied() };
    let num = |n: usize| -> Option<u64> { field(n)?.parse().ok() };
    // cutime and cstime are signed in proc(5).
    let signed = |n: usize| -> Option<u64> { Some(field(n)?.parse::<i64>().ok()?.max(0) as u64) };
    Some(ProcStat {
        pid,
        comm,
        ppid: field(4)?.parse().ok()?,
        flags: num(9)?,
        ticks: num(14)?.saturating_add(num(15)?),
        child_ticks: signed(16)?.saturating_add(signed(17)?),
        start: num(22)?,
    })
}

/// Whether an environment block (`/proc/<pid>/environ`) sets `DISPLAY` to
/// `display`.
pub fn environ_has_display(environ: &[u8], display: &str) -> bool {
    environ
        .split(|b| *b == 0)
        .any(|kv| kv.strip_prefix(b"DISPLAY=") == Some(display.as_bytes()))
}

/// CPU ticks per process over one interval between two samples, and how many
/// processes appeared.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Delta {
    /// (pid, comm, ticks) of the processes that used any.
    pub per_pid: Vec<(u32, String, u64)>,
    pub spawned: u32,
}

/// What the processes of `cur` used since `prev` (both keyed by pid).
pub fn account(prev: &HashMap<u32, ProcStat>, cur: &HashMap<u32, ProcStat>) -> Delta {
    // What was counted so far of children that have gone since: it is in
    // their parent's cutime now and must not count again.
    let mut gone_by_parent: HashMap<u32, u64> = HashMap::new();
    for (pid, p) in prev {
        if cur.get(pid).is_none_or(|c| c.start != p.start) {
            *gone_by_parent.entry(p.ppid).or_default() += p.ticks + p.child_ticks;
        }
    }
    let mut d = Delta::default();
    for (pid, c) in cur {
        let used = match prev.get(pid) {
            Some(p) if p.start == c.start => {
                let own = c.ticks.saturating_sub(p.ticks);
                let reaped = c.child_ticks.saturating_sub(p.child_ticks);
                let seen = gone_by_parent.get(pid).copied().unwrap_or(0);
                own + reaped.saturating_sub(seen)
            }
            // New since the last sample: all its life is in this interval.
            _ => {
                d.spawned += 1;
                c.ticks + c.child_ticks
            }
        };
        if used > 0 {
            d.per_pid.push((*pid, c.comm.clone(), used));
        }
    }
    d
}

/// Reads the processes in scope from `/proc`.
struct Sampler {
    probe: Probe,
    uid: u32,
    /// (pid, start) → whether it is on our display, read once per process.
    on_display: HashMap<(u32, u64), bool>,
}

impl Sampler {
    fn new(probe: Probe) -> Sampler {
        Sampler {
            probe,
            // SAFETY: geteuid has no preconditions and cannot fail.
            uid: unsafe { libc::geteuid() },
            on_display: HashMap::new(),
        }
    }

    fn sample(&mut self) -> Result<HashMap<u32, ProcStat>, IdleError> {
        let mut out = HashMap::new();
        for entry in std::fs::read_dir("/proc").map_err(IdleError::Proc)? {
            let Ok(entry) = entry else { continue };
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            if self.probe.exclude.contains(&pid) {
                continue;
            }
            // A process that exits between the listing and the read is
            // simply not in this sample.
            let dir = entry.path();
            match std::fs::metadata(&dir) {
                Ok(m) if m.uid() == self.uid => {}
                _ => continue,
            }
            let Some(stat) = std::fs::read_to_string(dir.join("stat"))
                .ok()
                .and_then(|t| parse_stat(&t))
            else {
                continue;
            };
            if stat.flags & PF_KTHREAD != 0 {
                continue;
            }
            if let IdleScope::Display(display) = &self.probe.scope {
                let key = (pid, stat.start);
                let on = *self
                    .on_display
                    .entry(key)
                    .or_insert_with(|| on_display(&dir, display));
                if !on {
                    continue;
                }
            }
            out.insert(pid, stat);
        }
        if let IdleScope::Display(_) = self.probe.scope {
            self.on_display.retain(|(pid, _), _| out.contains_key(pid));
        }
        Ok(out)
    }
}

fn on_display(dir: &Path, display: &str) -> bool {
    std::fs::read(dir.join("environ")).is_ok_and(|env| environ_has_display(&env, display))
}

/// The intervals that make up the last window.
#[derive(Debug, Default)]
pub struct Window {
    span: Duration,
    intervals: VecDeque<(Duration, Delta)>,
}

/// What the last window held.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowStats {
    pub cpu_percent: f64,
    pub spawned: u32,
    pub busy: Vec<BusyProcess>,
}

impl Window {
    pub fn new(span: Duration) -> Window {
        Window {
            span,
            intervals: VecDeque::new(),
        }
    }

    /// Adds the latest interval and drops those older than the window.
    pub fn push(&mut self, dur: Duration, delta: Delta) {
        self.intervals.push_back((dur, delta));
        let mut total: Duration = self.intervals.iter().map(|(d, _)| *d).sum();
        while let Some((front, _)) = self.intervals.front() {
            if total.saturating_sub(*front) < self.span {
                break;
            }
            total -= *front;
            self.intervals.pop_front();
        }
    }

    pub fn stats(&self, ticks_per_s: f64) -> WindowStats {
        let secs: f64 = self
            .intervals
            .iter()
            .map(|(d, _)| d.as_secs_f64())
            .sum::<f64>()
            .max(1e-3);
        let percent = |ticks: u64| ticks as f64 / ticks_per_s / secs * 100.0;
        let mut per: HashMap<u32, (String, u64)> = HashMap::new();
        let mut spawned = 0;
        for (_, d) in &self.intervals {
            spawned += d.spawned;
            for (pid, name, t) in &d.per_pid {
                per.entry(*pid).or_insert_with(|| (name.clone(), 0)).1 += t;
            }
        }
        let total: u64 = per.values().map(|(_, t)| t).sum();
        let mut busy: Vec<(u32, String, u64)> =
            per.into_iter().map(|(p, (n, t))| (p, n, t)).collect();
        busy.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
        WindowStats {
            cpu_percent: round2(percent(total)),
            spawned,
            busy: busy
                .into_iter()
                .take(TOP)
                .map(|(pid, name, t)| BusyProcess {
                    pid,
                    name,
                    cpu_percent: round2(percent(t)),
                })
                .collect(),
        }
    }
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// Clock ticks per second of `/proc`'s times.
pub fn ticks_per_second() -> f64 {
    // SAFETY: sysconf has no preconditions; it returns -1 when unknown.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}

/// The screen half of the condition.
#[derive(Debug, Clone, Copy)]
pub struct ScreenQuiet {
    pub quiet: Duration,
    pub threshold_px: u64,
}

/// What to wait for.
#[derive(Debug, Clone, Copy)]
pub struct Params {
    pub window: Duration,
    pub max: Duration,
    pub cpu_percent: f64,
    pub screen: Option<ScreenQuiet>,
}

/// Checks a request; the message names the field and what was expected.
pub fn params(req: &IdleRequest) -> Result<Params, String> {
    if !WINDOW_MS.contains(&req.window_ms) {
        return Err(format!(
            "window_ms must be between {} and {}, got {}",
            WINDOW_MS.start(),
            WINDOW_MS.end(),
            req.window_ms
        ));
    }
    if req.max_ms < req.window_ms || req.max_ms > MAX_IDLE_MS {
        return Err(format!(
            "max_ms must be between window_ms ({}) and {MAX_IDLE_MS}, got {}",
            req.window_ms, req.max_ms
        ));
    }
    if !(req.cpu_percent.is_finite() && req.cpu_percent > 0.0) {
        return Err(format!(
            "cpu_percent must be a number above 0 (percent of one core), got {}",
            req.cpu_percent
        ));
    }
    Ok(Params {
        window: Duration::from_millis(req.window_ms),
        max: Duration::from_millis(req.max_ms),
        cpu_percent: req.cpu_percent,
        screen: req.screen.then_some(ScreenQuiet {
            quiet: Duration::from_millis(req.window_ms),
            threshold_px: DEFAULT_THRESHOLD_PX,
        }),
    })
}

/// A report and the frames compared to make it.
#[derive(Debug, Clone)]
pub struct Waited {
    pub report: IdleReport,
    pub frames: u32,
}

/// Blocks until the desktop is idle or `p.max` passed. Needs `capturer` when
/// `p.screen` is set.
pub fn wait(capturer: &Mutex<Capturer>, probe: &Probe, p: &Params) -> Result<Waited, IdleError> {
    let start = Instant::now();
    let tps = ticks_per_second();
    let mut sampler = Sampler::new(probe.clone());
    let grab = || {
        capturer
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .grab()
            .map_err(IdleError::Capture)
    };
    let mut prev = sampler.sample()?;
    let mut prev_at = Instant::now();
    let mut frame = match p.screen {
        Some(_) => Some(grab()?),
        None => None,
    };
    let mut frames = u32::from(frame.is_some());
    let mut quiet_since = Instant::now();
    let mut window = Window::new(p.window);
    loop {
        std::thread::sleep(POLL);
        let cur = sampler.sample()?;
        let now = Instant::now();
        window.push(now - prev_at, account(&prev, &cur));
        (prev, prev_at) = (cur, now);
        let screen_quiet = match (p.screen, frame.as_ref()) {
            (Some(s), Some(last)) => {
                let next = grab()?;
                frames += 1;
                if changed_pixels(last, &next) > s.threshold_px {
                    quiet_since = Instant::now();
                }
                frame = Some(next);
                Some(quiet_since.elapsed() >= s.quiet)
            }
            _ => None,
        };
        let stats = window.stats(tps);
        let full = start.elapsed() >= p.window;
        let idle = full
            && stats.cpu_percent < p.cpu_percent
            && stats.spawned == 0
            && screen_quiet.unwrap_or(true);
        if idle || start.elapsed() >= p.max {
            return Ok(Waited {
                report: IdleReport {
                    idle,
                    waited_ms: start.elapsed().as_secs_f64() * 1000.0,
                    cpu_percent: stats.cpu_percent,
                    spawned: stats.spawned,
                    screen_quiet,
                    busy: stats.busy,
                },
                frames,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat_line(
        pid: u32,
        comm: &str,
        ppid: u32,
        ticks: (u64, u64, i64, i64),
        start: u64,
    ) -> String {
        format!(
            "{pid} ({comm}) S {ppid} {pid} {pid} 34816 {pid} 4194560 1200 0 3 0 {} {} {} {} 20 0 1 0 {start} 12345678 2048 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0",
            ticks.0, ticks.1, ticks.2, ticks.3
        )
    }

    #[test]
    fn parses_a_plain_stat_line() {
        let s = parse_stat(&stat_line(4242, "python3", 1, (150, 20, 7, 3), 98765)).unwrap();
        assert_eq!(
            s,
            ProcStat {
                pid: 4242,
                comm: "python3".into(),
                ppid: 1,
                flags: 4194560,
                ticks: 170,
                child_ticks: 10,
                start: 98765,
            }
        );
    }

    #[test]
    fn comm_with_spaces_and_parentheses() {
        // A program may name itself anything: "a) b (c" must not shift fields.
        for comm in ["Web Content", "a) b (c", "((x))", ") 1 2 3 (", ""] {
            let s = parse_stat(&stat_line(7, comm, 3, (5, 6, 0, 0), 11))
                .unwrap_or_else(|| panic!("{comm:?} did not parse"));
            assert_eq!(s.comm, comm);
            assert_eq!((s.ppid, s.ticks, s.start), (3, 11, 11), "{comm:?}");
        }
    }

    #[test]
    fn a_real_stat_file_parses() {
        let text = std::fs::read_to_string("/proc/self/stat").unwrap();
        let s = parse_stat(&text).unwrap();
        assert_eq!(s.pid, std::process::id());
        assert!(s.start > 0);
    }

    #[test]
    fn truncated_or_garbled_lines_are_refused() {
        assert!(parse_stat("").is_none());
        assert!(parse_stat("12 (x").is_none());
        assert!(parse_stat("12 (x) S 1 2 3").is_none());
        assert!(parse_stat("pid (x) S 1 1 1 0 1 0 0 0 0 0 1 1 0 0 20 0 1 0 5").is_none());
        assert!(parse_stat(") 12 (x").is_none());
    }

    #[test]
    fn negative_child_times_count_as_zero() {
        let s = parse_stat(&stat_line(9, "sh", 1, (1, 1, -4, -1), 2)).unwrap();
        assert_eq!(s.child_ticks, 0);
    }

    #[test]
    fn finds_display_in_an_environment_block() {
        let env = b"HOME=/root\0DISPLAY=:61\0XDG=1\0";
        assert!(environ_has_display(env, ":61"));
        assert!(!environ_has_display(env, ":6"));
        assert!(!environ_has_display(b"XDISPLAY=:61\0", ":61"));
        assert!(!environ_has_display(b"", ":61"));
    }

    fn p(pid: u32, ppid: u32, ticks: u64, child: u64, start: u64) -> (u32, ProcStat) {
        (
            pid,
            ProcStat {
                pid,
                comm: format!("p{pid}"),
                ppid,
                flags: 0,
                ticks,
                child_ticks: child,
                start,
            },
        )
    }

    #[test]
    fn accounting_counts_deltas_new_processes_and_reaped_children_once() {
        let prev: HashMap<_, _> = [p(10, 1, 100, 0, 5), p(11, 10, 40, 0, 6), p(12, 1, 7, 0, 7)]
            .into_iter()
            .collect();
        // 10 used 2 ticks, reaped 11 (40 seen + 3 more since): only the 3
        // are new. 12 is idle. 13 is new with 4 ticks.
        let cur: HashMap<_, _> = [p(10, 1, 102, 43, 5), p(12, 1, 7, 0, 7), p(13, 10, 4, 0, 9)]
            .into_iter()
            .collect();
        let mut d = account(&prev, &cur);
        d.per_pid.sort();
        assert_eq!(
            d.per_pid,
            vec![(10, "p10".into(), 5), (13, "p13".into(), 4)]
        );
        assert_eq!(d.spawned, 1);
    }

    #[test]
    fn a_reused_pid_is_a_new_process() {
        let prev: HashMap<_, _> = [p(20, 1, 500, 0, 5)].into_iter().collect();
        let cur: HashMap<_, _> = [p(20, 1, 3, 0, 99)].into_iter().collect();
        let d = account(&prev, &cur);
        assert_eq!(d.per_pid, vec![(20, "p20".into(), 3)]);
        assert_eq!(d.spawned, 1);
    }

    #[test]
    fn the_window_slides_and_names_the_busiest() {
        let mut w = Window::new(Duration::from_millis(100));
        let busy = |pid, t| Delta {
            per_pid: vec![(pid, format!("p{pid}"), t)],
            spawned: 0,
        };
        w.push(
            Duration::from_millis(50),
            Delta {
                spawned: 1,
                ..busy(1, 5)
            },
        );
        w.push(Duration::from_millis(50), busy(2, 1));
        // 6 ticks of 10 ms in 100 ms: 60 %.
        let s = w.stats(100.0);
        assert_eq!((s.cpu_percent, s.spawned), (60.0, 1));
        assert_eq!(s.busy[0].name, "p1");
        assert_eq!(s.busy[0].cpu_percent, 50.0);
        // Two quiet intervals push the busy ones out.
        w.push(Duration::from_millis(50), Delta::default());
        w.push(Duration::from_millis(50), Delta::default());
        let s = w.stats(100.0);
        assert_eq!((s.cpu_percent, s.spawned), (0.0, 0));
        assert!(s.busy.is_empty());
    }

    #[test]
    fn requests_are_checked() {
        assert!(params(&IdleRequest::default()).is_ok());
        let bad = |f: fn(&mut IdleRequest)| {
            let mut r = IdleRequest::default();
            f(&mut r);
            params(&r).unwrap_err()
        };
        assert!(bad(|r| r.window_ms = 0).contains("window_ms"));
        assert!(bad(|r| r.max_ms = 100).contains("max_ms"));
        assert!(bad(|r| r.max_ms = 700_000).contains("max_ms"));
        assert!(bad(|r| r.cpu_percent = f64::NAN).contains("cpu_percent"));
        assert!(bad(|r| r.cpu_percent = 0.0).contains("cpu_percent"));
    }
}
