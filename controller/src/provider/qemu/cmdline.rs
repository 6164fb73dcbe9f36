//! QEMU's command line: the device arguments (identical at save and
//! restore, part of the snapshot key) and the per-VM ones.

use super::{Accel, QemuProvider};
use crate::provider::qemu::snapshot::KeyInputs;
use crate::provider::{io, ProviderError};
use std::path::Path;

impl QemuProvider {
    /// The device arguments: identical at save and restore.
    pub fn device_args(&self, accel: Accel) -> Vec<String> {
        let img = &self.image;
        let screen = img.manifest.guest.screen;
        let mut a: Vec<String> = vec![
            "-accel".into(),
            accel.as_str().into(),
            "-cpu".into(),
            self.config.cpu.clone(),
            "-m".into(),
            self.config.memory_mib.to_string(),
            "-smp".into(),
            self.config.smp.to_string(),
            "-kernel".into(),
            img.kernel().display().to_string(),
            "-initrd".into(),
            img.initrd().display().to_string(),
            "-append".into(),
            img.manifest.kernel_cmdline.clone(),
            "-vga".into(),
            "none".into(),
            "-device".into(),
            format!("virtio-vga,xres={},yres={}", screen.width, screen.height),
            "-display".into(),
            "none".into(),
            "-device".into(),
            "virtio-net-pci,netdev=n0".into(),
            "-monitor".into(),
            "none".into(),
            "-parallel".into(),
            "none".into(),
            "-rtc".into(),
            "base=utc".into(),
        ];
        if self.config.ram_file {
            a.extend(["-machine".into(), format!("memory-backend={RAM_ID}")]);
        }
        a.shrink_to_fit();
        a
    }

    /// The per-VM arguments (paths and the port change between VMs).
    pub(super) fn instance_args(&self, name: &str, dir: &Path, port: u16) -> Vec<String> {
        let agent_port = self.image.manifest.guest.agent_port;
        vec![
            "-name".into(),
            format!("deskenv-{name}"),
            "-drive".into(),
            format!(
                "file={},if=virtio,format=qcow2,cache=unsafe",
                dir.join("overlay.qcow2").display()
            ),
            "-netdev".into(),
            format!("user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:{port}-:{agent_port}"),
            "-qmp".into(),
            format!("unix:{},server=on,wait=off", dir.join("qmp.sock").display()),
            "-serial".into(),
            format!("file:{}", dir.join("serial.log").display()),
        ]
    }

    /// The guest RAM's backend (with [`super::QemuConfig::ram_file`]; none
    /// without it, QEMU's default).
    pub(super) fn ram_args(&self, ram: Ram<'_>) -> Vec<String> {
        if !self.config.ram_file {
            return vec![];
        }
        let size = format!("size={}M", self.config.memory_mib);
        let object = match ram {
            Ram::Anonymous => format!("memory-backend-ram,id={RAM_ID},{size}"),
            Ram::Shared(p) => format!(
                "memory-backend-file,id={RAM_ID},{size},mem-path={},share=on",
                p.display()
            ),
            // Opened read-only and mapped private, writable: the file is
            // never written.
            Ram::Private(p) => format!(
                "memory-backend-file,id={RAM_ID},{size},mem-path={},share=off,readonly=on,rom=off",
                p.display()
            ),
        };
        vec!["-object".into(), object]
    }

    pub(super) fn key_inputs(&self, accel: Accel) -> KeyInputs {
        KeyInputs {
            image_digest: self.image.digest(),
            qemu_version: self.qemu_version.clone(),
            accel: accel.as_str().into(),
            args: self.device_args(accel),
            warmup: self.image.manifest.guest.warmup.clone(),
        }
    }
}

/// The id of the guest RAM's memory backend (its RAM block's name in the
/// migration stream).
pub(super) const RAM_ID: &str = "pc.ram";

/// Where a VM's guest RAM lives.
#[derive(Debug, Clone, Copy)]
pub(super) enum Ram<'a> {
    /// Anonymous memory (a cold boot without snapshots; a start from a
    /// checkpoint, whose stream holds all of it).
    Anonymous,
    /// This file, written through (the VM that makes the ready snapshot).
    Shared(&'a Path),
    /// This file, mapped copy-on-write (a restore).
    Private(&'a Path),
}

/// A free TCP port on 127.0.0.1 (QEMU binds it a moment later; a clash is
/// retried by the caller).
pub(super) fn free_port() -> Result<u16, ProviderError> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")
        .map_err(io("finding a free port on 127.0.0.1"))?;
    Ok(l.local_addr().map_err(io("finding a free port"))?.port())
}

pub(super) fn shell_quote(s: &str) -> String {
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

pub(super) fn shell_join(bin: &str, args: &[String]) -> String {
    let mut s = shell_quote(bin);
    for a in args {
        s.push(' ');
        s.push_str(&shell_quote(a));
    }
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_quoting() {
        assert_eq!(shell_quote("/a/b.zst"), "/a/b.zst");
        assert_eq!(shell_quote("/a b/it's"), "'/a b/it'\\''s'");
    }
}
