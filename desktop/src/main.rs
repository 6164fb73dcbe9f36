//! `deskenv-desktop`: starts, stops or runs a command on a headless desktop
//! (Xvfb 1920x1080x24, a D-Bus session bus, the AT-SPI bus, openbox).
//!
//!   deskenv-desktop start [:N] [--env-file PATH]   # prints the env file to source
//!   deskenv-desktop stop :N
//!   deskenv-desktop run [--display :N] -- CMD [ARG...]

use anyhow::Context;
use clap::{Parser, Subcommand};
use desktop::{parse_display, Desktop, DesktopError};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "deskenv-desktop",
    about = "A headless desktop for deskenv-agent and its tests"
)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Starts a desktop and leaves it running; prints the path of its env
    /// file (exports DISPLAY, DBUS_SESSION_BUS_ADDRESS, ...) on stdout.
    Start {
        /// :N or N; a free display from :100 up when absent.
        display: Option<String>,
        /// Also write the env file here.
        #[arg(long)]
        env_file: Option<PathBuf>,
    },
    /// Stops the desktop on a display (nothing running there is not an error).
    Stop {
        /// :N or N.
        display: String,
    },
    /// Starts a desktop, runs CMD on it, stops the desktop; exits as CMD did.
    Run {
        /// :N or N; a free display from :100 up when absent.
        #[arg(long)]
        display: Option<String>,
        #[arg(required = true, last = true)]
        command: Vec<String>,
    },
}

fn start(display: Option<&str>) -> Result<Desktop, DesktopError> {
    match display {
        Some(d) => Desktop::start_on(parse_display(d)?),
        None => Desktop::start_free(),
    }
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("deskenv-desktop: {e:#}");
            // A status of its own for a display held by someone else (3, as
            // the shell launcher this replaces had it).
            if matches!(e.downcast_ref(), Some(DesktopError::Taken { .. })) {
                ExitCode::from(3)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Cmd::Start { display, env_file } => {
            let desktop = start(display.as_deref())?;
            if let Some(path) = env_file {
                desktop.write_env_file(&path)?;
            }
            let file = desktop.env_file();
            eprintln!(
                "deskenv-desktop: desktop up on {}; source {}",
                desktop.display(),
                file.display()
            );
            println!("{}", file.display());
            desktop.detach();
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Stop { display } => {
            desktop::stop(parse_display(&display)?)?;
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Run { display, command } => {
            let desktop = start(display.as_deref())?;
            let status = desktop
                .command(&command[0])
                .args(&command[1..])
                .status()
                .with_context(|| format!("cannot run {:?}", command[0]))?;
            drop(desktop);
            Ok(match status.code() {
                Some(c) => ExitCode::from(u8::try_from(c).unwrap_or(1)),
                None => ExitCode::FAILURE,
            })
        }
    }
}
