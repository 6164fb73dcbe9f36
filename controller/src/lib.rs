//! The deskenv host controller.
//!
//! It builds the guest image from a recipe ([`image`]), boots desktop VMs
//! from it under QEMU ([`provider::qemu`]), saves one booted, ready desktop as the
//! *ready snapshot* ([`provider::qemu::snapshot`]) and from then on starts every VM by
//! restoring that state into a fresh qcow2 overlay: an isolated desktop in
//! about a second, with no boot. [`pool`] hands out up to N VMs at a time
//! and ends every QEMU process it started ([`provider::reaper`]), also on SIGINT and
//! SIGTERM. [`provider::qemu::display`] reads the screen from the host side (QMP
//! `screendump`), independent of the guest agent. [`provider::qemu::named`] keeps VMs that
//! outlive one command (`deskenv vm up/list/screenshot/down`).
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
pub mod doctor;
pub mod episode;
pub mod guest_client;
pub mod image;
pub mod paths;
pub mod policy;
pub mod pool;
pub mod provider;
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
