//! The deskenv host controller: runs OSWorld-style tasks on isolated
//! desktops and scores them from the artifacts they leave.
//!
//! # Map
//!
//! From `deskenv run` to the click in the guest, by module name:
//!
//! - `main.rs` → `cli` (clap types) → `commands::run` (the binary's
//!   command bodies) → [`task::check_all`] (load and check the task files)
//!   → [`episode::runner::run`] (the tasks × budgets, retries, resume,
//!   summary) → [`pool`] (machines from a [`provider::Provider`]) →
//!   [`episode::run_episode`] (setup, the step loop, postconfig, evaluate)
//!   → [`policy`] (what chooses the actions: scripted, noop, openai, http)
//!   → [`guest_client::GuestClient`] (HTTP to the guest agent, which
//!   injects the click with XTest).
//! - [`provider`]: the machine boundary. [`provider::qemu`] boots desktop
//!   VMs from the image ([`image`]), saves one ready desktop as the *ready
//!   snapshot* ([`provider::qemu::snapshot`]) and from then on restores it
//!   into a fresh qcow2 overlay, about a second a machine; it chooses KVM
//!   or TCG ([`provider::qemu`]'s `accel`), reads the screen from the host
//!   ([`provider::qemu::display`]) and keeps named VMs
//!   ([`provider::qemu::named`]). [`provider::local`] runs the same desktop
//!   on this host in namespaces, without a VM. [`provider::reaper`] ends
//!   every process either started, also on SIGINT/SIGTERM.
//! - [`episode`]: [`episode::setup`] (the task's `config` steps),
//!   [`episode::getters`] (OSWorld's result/expected getters),
//!   [`episode::faults`] (fault injection for the tests),
//!   [`episode::runner`] (results on disk, `run.json`, the summary).
//! - [`serve`]: the gym-like HTTP API (`deskenv serve`, `serve-openapi.yaml`).
//! - [`bench`](mod@bench), [`doctor`], [`paths`]: benchmarks, the set-up check, the
//!   cache folder.
//!
//! Scores come from the `evaluators` crate; wire and file types from
//! `protocol`. The repository's `docs/ARCHITECTURE.md` draws the same map.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use controller::{image::Image, provider::qemu::{QemuConfig, QemuProvider}, provider::Provider};
//! let image = Image::latest(&controller::paths::cache_dir(None))?;
//! let provider = QemuProvider::new(image, QemuConfig::default(), controller::paths::cache_dir(None))?;
//! let vm = provider.start("demo").await?;
//! println!("agent at {}, started by {:?} in {:.2}s", vm.guest().base(), vm.started().path, vm.started().seconds);
//! vm.shutdown().await;
//! # Ok(()) }
//! ```
pub mod bench;
pub mod bench_observe;
pub mod doctor;
pub mod episode;
pub mod guest_client;
pub mod image;
pub mod paths;
pub mod policy;
pub mod pool;
pub mod provider;
pub mod report;
pub mod serve;
pub mod task;

/// `error` and its sources on one line, `outer: inner: …`, for the places
/// that keep an error as text (a report line, a JSON field, result.json)
/// rather than pass it up to `main`, which prints the same chain. A source
/// whose text the line already holds is left out.
pub fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut next = error.source();
    while let Some(e) = next {
        let part = e.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        next = e.source();
    }
    text
}
