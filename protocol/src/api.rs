//! Request and response bodies of the guest agent's native `/v1` API.
//!
//! The same structs serve the HTTP body, the controller's client and the
//! OpenAPI file (`guest-agent/openapi.yaml`). Requests reject unknown fields
//! so a misspelt option is an error, not a silent default.

use crate::a11y::A11yNode;
use crate::action::Action;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Every error body: a stable machine-readable `code` and a message that
/// names what failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorBody {
    pub code: String,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Size {
    pub width: u32,
    pub height: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rect {
    pub x: i32,
    pub y: i32,
    pub width: i32,
    pub height: i32,
}

/// `GET /v1/health`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Health {
    pub version: String,
    pub display: String,
    pub screen: Size,
    /// Whether the AT-SPI registry answered within the probe's timeout.
    pub atspi: bool,
    /// Why AT-SPI is down, when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub atspi_error: Option<String>,
    pub python_fallback: bool,
    pub uptime_ms: u64,
}

/// Image encodings for screenshots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ImageFormat {
    #[default]
    Png,
    Jpeg,
}

impl ImageFormat {
    pub fn mime(self) -> &'static str {
        match self {
            ImageFormat::Png => "image/png",
            ImageFormat::Jpeg => "image/jpeg",
        }
    }
}

/// Accessibility tree output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum A11yFormat {
    /// OSWorld's XML, byte-compatible with its `/accessibility` route.
    #[default]
    #[serde(rename = "osworld-xml")]
    OsworldXml,
    #[serde(rename = "json")]
    Json,
    /// OSWorld's linearized TSV table after its node filter.
    #[serde(rename = "linear")]
    Linear,
}

/// Query of `GET /v1/a11y`, also the `a11y` part of an observe request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct A11yQuery {
    #[serde(default)]
    pub format: A11yFormat,
    /// Stop after this many nodes (default 20000).
    #[serde(default)]
    pub max_nodes: Option<usize>,
    /// Stop walking after this long and return what was walked (default 10000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// Only the applications whose name contains this (case-insensitive).
    #[serde(default)]
    pub app: Option<String>,
    /// Ask every object again: neither read nor write the guest's tree
    /// cache (default false: unchanged objects come from the cache).
    #[serde(default)]
    pub fresh: bool,
}

/// An accessibility tree, as one of the three formats.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct A11yTree {
    pub format: A11yFormat,
    /// Nodes walked (before the linear filter).
    pub nodes: usize,
    /// Applications on the bus that were walked.
    pub applications: usize,
    /// True when a cap or the timeout cut the walk; `reason` says which.
    pub truncated: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub elapsed_ms: f64,
    /// Nodes taken from the guest's tree cache (unchanged since the last
    /// walk, by AT-SPI's events) instead of asked again; 0 for a fresh walk.
    #[serde(default)]
    pub cached: usize,
    /// The XML or the TSV table, for `osworld-xml` and `linear`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The tree, for `json`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree: Option<A11yNode>,
}

/// `POST /v1/observe`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ObserveRequest {
    #[serde(default = "yes")]
    pub screenshot: bool,
    #[serde(default)]
    pub image_format: ImageFormat,
    /// JPEG quality 1–100 (default 80).
    #[serde(default)]
    pub quality: Option<u8>,
    /// Include the accessibility tree, in this form.
    #[serde(default)]
    pub a11y: Option<A11yQuery>,
    /// Include the cursor's image and hotspot (for a screenshot taken
    /// elsewhere, e.g. QEMU's display on the host, which has no cursor).
    #[serde(default)]
    pub cursor_image: bool,
}

fn yes() -> bool {
    true
}

/// Milliseconds spent in each part of a request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Timings {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capture_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encode_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub a11y_ms: Option<f64>,
    pub total_ms: f64,
}

/// Reply of `POST /v1/observe`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ObserveResponse {
    /// The frame size; coordinates in actions are pixels of this frame.
    pub screen: Size,
    pub cursor: (i32, i32),
    /// Base64 of the encoded image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screenshot: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_format: Option<ImageFormat>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub a11y: Option<A11yTree>,
    /// With `cursor_image`: the cursor as XFixes has it (absent when the X
    /// server has no XFixes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor_image: Option<CursorImage>,
    pub timings: Timings,
}

/// The cursor's image: premultiplied ARGB pixels, row by row, drawn with
/// the hotspot at the pointer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CursorImage {
    /// The pointer (where the hotspot goes).
    pub x: i32,
    pub y: i32,
    pub width: u16,
    pub height: u16,
    pub xhot: u16,
    pub yhot: u16,
    pub argb: Vec<u32>,
}

impl CursorImage {
    /// Alpha-blends the cursor into a frame of `width`×`height` pixels of
    /// `bpp` bytes each, whose red, green and blue bytes are at offsets
    /// `rgb` within a pixel (BGRX: `4, [2, 1, 0]`; RGB: `3, [0, 1, 2]`).
    pub fn blend(&self, pixels: &mut [u8], width: u32, height: u32, bpp: usize, rgb: [usize; 3]) {
        let (cw, ch) = (i64::from(self.width), i64::from(self.height));
        let ox = i64::from(self.x) - i64::from(self.xhot);
        let oy = i64::from(self.y) - i64::from(self.yhot);
        for cy in 0..ch {
            let y = oy + cy;
            if y < 0 || y >= i64::from(height) {
                continue;
            }
            for cx in 0..cw {
                let x = ox + cx;
                if x < 0 || x >= i64::from(width) {
                    continue;
                }
                let Some(&argb) = self.argb.get((cy * cw + cx) as usize) else {
                    continue;
                };
                let a = (argb >> 24) & 0xff;
                if a == 0 {
                    continue;
                }
                let i = (y * i64::from(width) + x) as usize * bpp;
                let Some(px) = pixels.get_mut(i..i + bpp) else {
                    continue;
                };
                let src = [(argb >> 16) & 0xff, (argb >> 8) & 0xff, argb & 0xff];
                for k in 0..3 {
                    // premultiplied: out = src + dst * (1 - a)
                    let dst = u32::from(px[rgb[k]]);
                    px[rgb[k]] = (src[k] + dst * (255 - a) / 255).min(255) as u8;
                }
            }
        }
    }
}

/// Wait after actions until the screen is quiet.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settle {
    /// The screen must stay unchanged this long (default 300).
    #[serde(default = "default_quiet")]
    pub quiet_ms: u64,
    /// Give up waiting after this long (default 3000).
    #[serde(default = "default_max")]
    pub max_ms: u64,
    /// Pixels that may change between frames and still count as quiet
    /// (a blinking caret or a spinner; default 2000).
    #[serde(default = "default_threshold")]
    pub threshold_px: u64,
    /// Also wait, within the same `max_ms`, until the desktop's processes
    /// are idle as `POST /v1/idle` means it (its default CPU threshold, a
    /// window of 500 ms or `max_ms` if shorter; default false).
    #[serde(default)]
    pub idle: bool,
}

fn default_quiet() -> u64 {
    300
}
fn default_max() -> u64 {
    3000
}
fn default_threshold() -> u64 {
    2000
}

impl Default for Settle {
    fn default() -> Self {
        Settle {
            quiet_ms: default_quiet(),
            max_ms: default_max(),
            threshold_px: default_threshold(),
            idle: false,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SettleOutcome {
    /// The screen stayed unchanged for `quiet_ms`.
    Quiet,
    /// `max_ms` passed first.
    Timeout,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SettleReport {
    /// `quiet` only when the screen was quiet and, with `idle`, the
    /// processes were idle too.
    pub outcome: SettleOutcome,
    pub waited_ms: f64,
    pub frames: u32,
    /// With `idle`: whether the processes were idle at the end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle: Option<bool>,
}

/// `POST /v1/idle`: waits until the desktop is idle: the desktop user's
/// processes together use less than `cpu_percent` of one core over a
/// `window_ms` window, no process of theirs was started in that window, and
/// (with `screen`) the screen was quiet for that window too, or `max_ms`
/// passes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IdleRequest {
    /// The window over which CPU use is measured (default 500, 10..=60000).
    #[serde(default = "default_idle_window")]
    pub window_ms: u64,
    /// Give up after this long (default 30000, at least `window_ms`, at most
    /// 600000).
    #[serde(default = "default_idle_max")]
    pub max_ms: u64,
    /// CPU use, in percent of one core, below which the desktop is idle
    /// (default 5.0; more than 100 means more than one core).
    #[serde(default = "default_idle_cpu")]
    pub cpu_percent: f64,
    /// Also require the screen to stay quiet over the window (default true).
    #[serde(default = "default_true")]
    pub screen: bool,
}

fn default_idle_window() -> u64 {
    500
}
fn default_idle_max() -> u64 {
    30_000
}
/// The idle desktop's own background (panel clock, AT-SPI, D-Bus) stays
/// well under 1 % of a core; a command doing real work uses tens of percent.
pub fn default_idle_cpu() -> f64 {
    5.0
}
fn default_true() -> bool {
    true
}

impl Default for IdleRequest {
    fn default() -> Self {
        IdleRequest {
            window_ms: default_idle_window(),
            max_ms: default_idle_max(),
            cpu_percent: default_idle_cpu(),
            screen: true,
        }
    }
}

/// Reply of `POST /v1/idle`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IdleReport {
    /// False when `max_ms` passed before the desktop was idle.
    pub idle: bool,
    pub waited_ms: f64,
    /// CPU use of the desktop user's processes over the last window, in
    /// percent of one core.
    pub cpu_percent: f64,
    /// Processes started in the last window.
    #[serde(default)]
    pub spawned: u32,
    /// With `screen`, whether the screen was quiet over the last window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screen_quiet: Option<bool>,
    /// The busiest processes of the last window (at most 3, busiest first;
    /// those that used no measurable CPU are left out).
    #[serde(default)]
    pub busy: Vec<BusyProcess>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BusyProcess {
    pub pid: u32,
    /// The kernel's name of the process (`comm`: at most 15 bytes).
    pub name: String,
    pub cpu_percent: f64,
}

/// `POST /v1/actions`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActionsRequest {
    pub actions: Vec<Action>,
    #[serde(default)]
    pub settle: Option<Settle>,
}

/// Reply of `POST /v1/actions` and `POST /v1/pyautogui`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionsResponse {
    /// How the actions ran: `native` (XTest in this process) or `python`
    /// (the code was handed to python3 because it is outside the subset).
    pub mode: String,
    /// The actions, as parsed (empty in `python` mode).
    pub actions: Vec<Action>,
    pub executed: usize,
    /// `DONE` or `FAIL` when the list held one; execution stops there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminal: Option<String>,
    pub elapsed_ms: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settle: Option<SettleReport>,
    /// In `python` mode, what the interpreter printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub python: Option<ExecResponse>,
    /// What went oddly without failing, one line each (the input focus
    /// moving while keys were typed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// `POST /v1/pyautogui`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PyautoguiRequest {
    pub code: String,
    #[serde(default)]
    pub settle: Option<Settle>,
}

/// A command: an argv list, or a string run by `/bin/sh -c`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Command {
    Argv(Vec<String>),
    Shell(String),
}

/// `POST /v1/exec`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecRequest {
    pub command: Command,
    /// Kill the process after this long (default 120000, the most 3600000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Bytes for the process's standard input.
    #[serde(default)]
    pub stdin: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecResponse {
    pub stdout: String,
    pub stderr: String,
    /// None when a signal ended the process (see `signal`).
    pub exit_code: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub duration_ms: f64,
}

/// `POST /v1/launch`: start a process detached from the agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LaunchRequest {
    pub command: Command,
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaunchResponse {
    pub pid: u32,
}

/// `POST /v1/open`: open a file with its default application (xdg-open) or
/// start a program, then wait for its window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenRequest {
    pub path: String,
    /// The window title to wait for (default: the file name, with or without
    /// its extension).
    #[serde(default)]
    pub window: Option<String>,
    /// Wait this long for the window (default 30000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpenResponse {
    pub window: WindowInfo,
    pub waited_ms: f64,
}

/// A top-level window managed by the window manager.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WindowInfo {
    /// The X11 window id.
    pub id: u32,
    pub title: String,
    /// WM_CLASS instance and class.
    pub instance: String,
    pub class: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// Frame geometry on the screen (client area, without decorations).
    pub rect: Rect,
    pub active: bool,
}

/// Which windows `activate` and `close` act on, as OSWorld's
/// `{window_name, strict, by_class}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WindowMatch {
    /// A title substring (case-insensitive), or the exact title when `exact`.
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub exact: bool,
    /// A WM_CLASS instance or class (case-insensitive).
    #[serde(default)]
    pub class: Option<String>,
    /// Wait up to this long for a matching window (default 0: no wait).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WindowsResponse {
    pub windows: Vec<WindowInfo>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileKind {
    File,
    Dir,
    Symlink,
    Other,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileEntry {
    pub name: String,
    pub kind: FileKind,
    pub size: u64,
    /// Seconds since the Unix epoch.
    pub modified: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileList {
    pub path: String,
    pub entries: Vec<FileEntry>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileWritten {
    pub path: String,
    pub bytes: u64,
}

/// `POST /v1/recording/start`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RecordingStart {
    /// Where the mp4 goes (default /tmp/deskenv-recording.mp4).
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub fps: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordingStatus {
    pub path: String,
    pub recording: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<f64>,
}

/// `POST /v1/watch`: start recording file accesses under these folders.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WatchRequest {
    pub paths: Vec<String>,
    #[serde(default = "yes")]
    pub recursive: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WatchStarted {
    /// Folders now watched (subfolders included).
    pub folders: usize,
}

/// One file that was opened or read since the watch started.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileAccess {
    pub path: String,
    pub opened: u32,
    pub read: u32,
    pub written: u32,
    /// Milliseconds after the watch started, of the first access.
    pub first_ms: f64,
}

/// `GET /v1/watch`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WatchReport {
    pub active: bool,
    pub folders: Vec<String>,
    pub files: Vec<FileAccess>,
    /// True when the kernel queue overflowed and accesses may be missing.
    pub overflowed: bool,
}

/// `POST /v1/clock`: set the guest's system clock. The controller calls it
/// after restoring a snapshot (the clock restarts at snapshot time). The
/// agent needs CAP_SYS_TIME; the guest image gives its binary that file
/// capability (`setcap cap_sys_time+ep`), which child processes do not
/// inherit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClockRequest {
    /// Milliseconds since 1970-01-01 UTC.
    pub unix_ms: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClockResponse {
    /// The clock just before it was set.
    pub previous_unix_ms: u64,
    pub unix_ms: u64,
}

/// Whether a bearer token given in a request is `expected`, compared in
/// constant time (the comparison does not tell how much matched). Used by
/// the guest agent's and `deskenv serve`'s `--token-file`.
pub fn token_matches(given: &str, expected: &str) -> bool {
    given.len() == expected.len()
        && given
            .bytes()
            .zip(expected.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}
