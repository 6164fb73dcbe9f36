//! The exit statuses of `deskenv` (also in `deskenv --help` and the README).

/// What a command ends with; `main` turns it into the process status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Everything ran; every episode has a score.
    Ok = 0,
    /// Bad arguments or input, or an error that stopped the command.
    Usage = 1,
    /// Task problems: a task file does not validate, or an episode could
    /// not be set up on a healthy machine.
    Task = 2,
    /// Environment errors: an episode ended without a score after its
    /// retries (the machine died, the guest agent stopped answering), or
    /// the run stopped because machines kept failing to start, or the
    /// output disk filled.
    Env = 3,
}

impl Exit {
    pub fn code(self) -> u8 {
        self as u8
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(e: Exit) -> std::process::ExitCode {
        std::process::ExitCode::from(e.code())
    }
}

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.code())
    }
}

/// `deskenv --help`'s account of [`Exit`].
pub const HELP: &str = "Exit status: 0 success (every episode scored); 1 bad arguments or input, or an error that stopped the command; 2 task problems (a task file that does not validate, an episode that could not be set up on a healthy machine); 3 environment errors (an episode without a score after its retries, a run stopped because machines kept failing to start, or a full output disk).";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_help_names_every_status() {
        for e in [Exit::Ok, Exit::Usage, Exit::Task, Exit::Env] {
            assert!(HELP.contains(&format!(" {} ", e.code())), "{e:?}");
        }
    }
}
