//! `deskenv`: the host controller's command line. This file parses and
//! dispatches; [`cli`] holds the arguments, [`commands`] the bodies,
//! [`exit`] the exit statuses.

mod cli;
mod commands;
mod exit;

use clap::Parser;
use controller::paths;
use controller::provider::reaper;
use exit::Exit;

fn main() -> std::process::ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version print and succeed; bad arguments are
            // usage errors (exit status 1, as `deskenv --help` says).
            let _ = e.print();
            return if e.use_stderr() {
                Exit::Usage
            } else {
                Exit::Ok
            }
            .into();
        }
    };
    let filter = match cli.verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| filter.into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let code = rt.block_on(async {
        reaper::install_signal_handlers();
        let cache = paths::cache_dir(cli.cache.as_deref());
        match commands::dispatch(&cache, cli.command).await {
            Ok(code) => code,
            Err(e) => {
                eprintln!("deskenv: error: {e:#}");
                Exit::Usage
            }
        }
    });
    reaper::kill_all();
    // Tasks still blocked (a read of stdin, a hung child) must not hold
    // the exit.
    rt.shutdown_background();
    code.into()
}
