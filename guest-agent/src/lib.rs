//! deskenv-agent: the guest agent that runs inside each desktop VM.
//!
//! It serves HTTP (axum) for the X display it was started in: screenshots,
//! accessibility trees, native input replay, commands, files and windows,
//! under a native `/v1` API and under OSWorld's routes with OSWorld's shapes.
//!
//! # Layout
//! - [`capture`]: X11 screenshots (MIT-SHM, cursor drawn in), PNG/JPEG encoding.
//! - [`settle`]: frame differencing to wait until the screen is quiet.
//! - [`idle`]: CPU use of the desktop's processes from `/proc`, to wait until it is idle.
//! - [`input`]: one persistent XTest injector that runs [`protocol::Action`]s.
//! - [`a11y`]: the AT-SPI walk with bounded concurrency and a deadline.
//! - [`exec`]: commands with timeouts, detached launches, `open` with a window wait.
//! - [`windows`]: EWMH window list, activate and close.
//! - [`clock`]: setting the system clock after a snapshot restore.
//! - [`files`]: streamed reads, atomic writes, listings.
//! - [`recording`]: ffmpeg x11grab recordings.
//! - [`watch`]: inotify record of which files were opened or read.
//! - [`server`]: state, router, auth, limits; [`routes`] holds the handlers.
//! - [`bench`]: the `deskenv-agent bench` figures.

pub mod a11y;
pub mod bench;
pub mod capture;
pub mod clock;
pub mod error;
pub mod exec;
pub mod files;
pub mod idle;
pub mod input;
pub mod recording;
pub mod routes;
pub mod server;
pub mod settle;
pub mod watch;
pub mod windows;
