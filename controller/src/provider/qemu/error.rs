//! What only the QEMU provider can report.

use super::qmp::QmpError;
use crate::provider::ProviderError;
use std::time::Duration;

/// How a QEMU VM failed to start (carried by [`ProviderError::Start`]).
#[derive(Debug, thiserror::Error)]
pub enum QemuError {
    #[error("VM {vm}: the QMP monitor failed")]
    Qmp {
        vm: String,
        #[source]
        source: QmpError,
    },
    #[error("VM {vm}: {what} not reached within {after:?}; last serial console lines:\n{serial}")]
    Timeout {
        vm: String,
        what: String,
        after: Duration,
        serial: String,
    },
    #[error("VM {vm}: the guest reported a failure: {line}")]
    Guest { vm: String, line: String },
    #[error("ready snapshot {dir}: {message}")]
    Snapshot { dir: String, message: String },
    #[error("VM {vm}: KVM was chosen but the guest showed no boot progress within {after:?}")]
    KvmHang { vm: String, after: Duration },
    #[error("VM {vm}: the boot stalled: no progress for {waited:?} after `{after}`; last serial console lines:\n{serial}")]
    BootStalled {
        vm: String,
        after: String,
        waited: Duration,
        serial: String,
    },
}

impl From<QemuError> for ProviderError {
    fn from(e: QemuError) -> ProviderError {
        ProviderError::Start(Box::new(e))
    }
}
