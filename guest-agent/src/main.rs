//! `deskenv-agent`: serve the desktop over HTTP, or measure it (`bench`).

use anyhow::Context;
use clap::{Parser, Subcommand};
use guest_agent::server::{self, AppState, Config};
use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "deskenv-agent",
    version,
    about = "deskenv's guest agent: screenshots, accessibility trees and input for GUI agents"
)]
struct Cli {
    /// Address to serve on.
    #[arg(long, default_value = "0.0.0.0:5000")]
    listen: SocketAddr,
    /// X display to serve (default: $DISPLAY, else :0).
    #[arg(long)]
    display: Option<String>,
    /// File holding a bearer token that /v1 routes then require.
    #[arg(long)]
    token_file: Option<PathBuf>,
    /// Run pyautogui code outside the native subset with python3.
    #[arg(long)]
    python_fallback: bool,
    /// Python interpreter for the fallback and /run_python.
    #[arg(long, default_value = "python3")]
    python: String,
    /// XTest delay per input event in ms (enigo's default is 12).
    #[arg(long, default_value_t = 1)]
    input_delay_ms: u32,
    /// Processes /v1/idle watches: `uid` (all of the agent's uid) or
    /// `display` (only those whose DISPLAY is the agent's display, for a
    /// desktop sharing its uid with other work).
    #[arg(long, default_value = "uid", value_parser = ["uid", "display"])]
    idle_scope: String,
    #[command(subcommand)]
    command: Option<Cmd>,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Measure capture, accessibility and action round trips against baselines.
    Bench(guest_agent::bench::BenchArgs),
}

fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let mut config = Config {
        listen: cli.listen,
        python_fallback: cli.python_fallback,
        python: cli.python,
        input_delay_ms: cli.input_delay_ms,
        ..Config::default()
    };
    if let Some(d) = cli.display {
        config.display = d;
    }
    if cli.idle_scope == "display" {
        config.idle_scope = guest_agent::idle::IdleScope::Display(config.display.clone());
    }
    if let Some(path) = &cli.token_file {
        let token = std::fs::read_to_string(path)
            .with_context(|| format!("reading --token-file {}", path.display()))?
            .trim()
            .to_string();
        anyhow::ensure!(
            !token.is_empty(),
            "--token-file {} is empty",
            path.display()
        );
        config.token = Some(token);
    }
    let rt = tokio::runtime::Runtime::new().context("starting the tokio runtime")?;
    match cli.command {
        Some(Cmd::Bench(args)) => rt.block_on(guest_agent::bench::run(config, args)),
        None => rt.block_on(async {
            let state = AppState::new(config)?;
            server::serve(state, shutdown_signal()).await?;
            Ok(())
        }),
    }
}

async fn shutdown_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = match signal(SignalKind::terminate()) {
        Ok(s) => s,
        Err(_) => return std::future::pending().await,
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {},
        _ = term.recv() => {},
    }
    tracing::info!("shutting down");
}
