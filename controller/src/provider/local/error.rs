//! What only the local provider can report.

use super::display::STALE_AFTER;
use crate::provider::ProviderError;
use std::path::PathBuf;
use std::time::Duration;

/// What went wrong with a local desktop.
#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    #[error("the local provider needs {programs}, which {verb} not installed: `apt-get install {packages}` (or scripts/install-deps.sh)")]
    Missing {
        programs: String,
        verb: &'static str,
        packages: String,
    },
    #[error("the guest agent binary {} does not exist: build it with `cargo build -p deskenv-agent`", path.display())]
    AgentMissing { path: PathBuf },
    #[error("local provider: {0}")]
    Setup(String),
    #[error("local machine {machine}: {what} not up within {after:?} (last: {last}); last lines of {log}:\n{tail}")]
    Timeout {
        machine: String,
        what: String,
        after: Duration,
        last: String,
        log: String,
        tail: String,
    },
    #[error("local machine {machine}: no free X display among :{first}..:{last} (each has a live server, or a lock file or socket younger than {STALE_AFTER:?})")]
    NoDisplay {
        machine: String,
        first: u32,
        last: u32,
    },
    #[error("local machine {machine}: {context}")]
    Io {
        machine: String,
        context: String,
        #[source]
        source: std::io::Error,
    },
}

impl From<LocalError> for ProviderError {
    fn from(e: LocalError) -> ProviderError {
        ProviderError::Start(Box::new(e))
    }
}
