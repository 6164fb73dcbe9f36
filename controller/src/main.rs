//! `deskenv`: the host controller's command line.

use anyhow::{bail, Context};
use clap::{Args, Parser, Subcommand};
use controller::image::{self, BuildOptions, Image};
use controller::pool::Pool;
use controller::provider::qemu::{named, snapshot};
use controller::provider::qemu::{AccelChoice, QemuConfig, QemuProvider};
use controller::provider::reaper;
use controller::provider::Provider;
use controller::{bench, paths, task};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Parser, Debug)]
#[command(
    name = "deskenv",
    version,
    about = "deskenv: desktop VMs for evaluating GUI agents",
    after_help = "Exit status: 0 success (every episode scored); 1 bad arguments or input, or an error that stopped the command; 2 task problems (a task file that does not validate, an episode that could not be set up on a healthy machine); 3 environment errors (an episode without a score after its retries, or a run stopped because machines kept failing to start)."
)]
struct Cli {
    /// The cache folder (images, snapshots, running VMs). Default:
    /// $DESKENV_CACHE, else ~/.cache/deskenv.
    #[arg(long, global = true)]
    cache: Option<PathBuf>,
    /// More log output (-v info, -vv debug).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,
    #[command(subcommand)]
    command: Top,
}

#[derive(Subcommand, Debug)]
enum Top {
    /// Guest images.
    #[command(subcommand)]
    Image(ImageCmd),
    /// Virtual machines.
    #[command(subcommand)]
    Vm(VmCmd),
    /// Ready snapshots.
    #[command(subcommand)]
    Snapshot(SnapshotCmd),
    /// Benchmarks.
    #[command(subcommand)]
    Bench(BenchCmd),
    /// Task files.
    #[command(subcommand)]
    Tasks(TasksCmd),
    /// Run an agent on tasks, each in a fresh VM, and score them.
    Run(RunArgs),
    /// Serve a gym-like HTTP API (create env, reset, step, evaluate) so an
    /// agent in any language drives the episode loop. API:
    /// controller/serve-openapi.yaml.
    Serve(ServeArgs),
    /// What the next run will do on this host, starting nothing: QEMU, the
    /// accelerator decision and why, the image, the ready snapshot, free
    /// disk and memory.
    Doctor {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        vm: VmOpts,
    },
}

#[derive(Args, Debug)]
struct ServeArgs {
    /// Address to listen on (port 0: any free port; the first line printed
    /// names it).
    #[arg(long, default_value = "127.0.0.1:8020")]
    listen: std::net::SocketAddr,
    /// Serve on a non-loopback address (anyone who reaches it controls the
    /// desktops); needs --token-file.
    #[arg(long)]
    allow_remote: bool,
    /// A file holding a bearer token: every route but /v1/health then
    /// needs `Authorization: Bearer <token>`.
    #[arg(long)]
    token_file: Option<PathBuf>,
    /// Task files or folders.
    #[arg(long, required = true, num_args = 1..)]
    tasks: Vec<PathBuf>,
    /// qemu (a fresh VM per reset) or local (a fresh desktop on this host,
    /// no VM: only /home/user is private, and only when run as root).
    #[arg(long, default_value = "qemu")]
    provider: String,
    /// Envs (machines) at once.
    #[arg(long, default_value_t = 1)]
    parallel: usize,
    #[arg(long, default_value = "results")]
    out: PathBuf,
    /// Seconds per episode for the step loop.
    #[arg(long, default_value_t = 600.0)]
    time_limit: f64,
    /// An episode whose client sends no step for this many seconds ends
    /// and its machine is freed.
    #[arg(long, default_value_t = 600.0)]
    idle_timeout: f64,
    /// adaptive, or fixed:SECONDS (fixed:2.0 is OSWorld's pause).
    #[arg(long, default_value = "adaptive")]
    settle: controller::episode::SettleMode,
    #[command(flatten)]
    vm: VmOpts,
}

#[derive(Args, Debug)]
struct RunArgs {
    /// Task files or folders.
    #[arg(long, required = true, num_args = 1..)]
    tasks: Vec<PathBuf>,
    /// scripted (the task's solution), noop (DONE at once), openai (an
    /// OpenAI-compatible endpoint), http (your agent server at --agent-url;
    /// to drive deskenv from your program instead, see `deskenv serve`).
    #[arg(long, default_value = "scripted")]
    agent: String,
    /// The http agent's server: deskenv POSTs to URL/reset and URL/predict.
    #[arg(long)]
    agent_url: Option<String>,
    /// Seconds one call to the http agent's server may take.
    #[arg(long, default_value_t = 300.0)]
    agent_timeout: f64,
    /// qemu (a fresh VM per task) or local (a fresh desktop on this host,
    /// no VM: only /home/user is private, and only when run as root).
    #[arg(long, default_value = "qemu")]
    provider: String,
    /// screenshot, a11y_tree or screenshot_a11y_tree.
    #[arg(long, default_value = "screenshot")]
    observation: controller::agent::ObservationType,
    /// pyautogui or computer_13.
    #[arg(long, default_value = "pyautogui")]
    action_space: controller::agent::ActionSpace,
    /// Step budget; a list (15,30,50) runs an ablation side by side.
    #[arg(long, default_value = "15", value_delimiter = ',')]
    max_steps: Vec<usize>,
    /// Seconds per task for the step loop.
    #[arg(long, default_value_t = 600.0)]
    time_limit: f64,
    /// adaptive, or fixed:SECONDS (fixed:2.0 is OSWorld's pause).
    #[arg(long, default_value = "adaptive")]
    settle: controller::episode::SettleMode,
    #[arg(long, default_value_t = 1)]
    parallel: usize,
    /// Attempts after the first, each on a fresh machine, for an episode
    /// that ended without a score (the machine died, the guest stopped
    /// answering, a setup step failed on a healthy machine).
    #[arg(long, default_value_t = 2)]
    retries: u32,
    /// The longest wait, in seconds, for an idle guest (no CPU use by the
    /// desktop's processes, a quiet screen) before the evaluation.
    #[arg(long, default_value_t = 30.0)]
    idle_cap: f64,
    #[arg(long, default_value = "results")]
    out: PathBuf,
    /// The model name (openai agent; also names the result folder).
    #[arg(long)]
    model: Option<String>,
    /// OpenAI-compatible endpoint (openai agent), e.g. http://127.0.0.1:8000/v1.
    #[arg(long, default_value = "http://127.0.0.1:8000/v1")]
    base_url: String,
    /// Environment variable holding the API key (openai agent).
    #[arg(long, default_value = "OPENAI_API_KEY")]
    api_key_env: String,
    #[arg(long)]
    temperature: Option<f32>,
    #[arg(long)]
    top_p: Option<f32>,
    #[arg(long)]
    max_tokens: Option<u32>,
    #[command(flatten)]
    vm: VmOpts,
}

#[derive(Subcommand, Debug)]
enum TasksCmd {
    /// Check task files: print, per task, every field deskenv cannot run
    /// (unsupported setup steps, getters, metrics; URLs without a local
    /// copy; bad parameters). Exit status 2 if anything was found.
    Validate {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Only print tasks with problems.
        #[arg(long, short)]
        quiet: bool,
    },
    /// List tasks: id, domain, category, setup steps, metrics.
    List {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
}

#[derive(Subcommand, Debug)]
enum ImageCmd {
    /// Build the guest image from a recipe (reuses the cached image when
    /// nothing changed). Needs root (sudo is used otherwise).
    Build {
        #[arg(long, default_value = "vm-images/debian-desktop")]
        recipe: PathBuf,
        /// Debian (or Ubuntu) mirror.
        #[arg(long)]
        mirror: Option<String>,
        #[arg(long)]
        suite: Option<String>,
        /// The guest agent binary (default: the recipe builds it, `cargo build
        /// --release --locked -p deskenv-guest-agent` into target/guest-agent).
        #[arg(long)]
        agent: Option<PathBuf>,
        #[arg(long)]
        force: bool,
    },
    /// List built images.
    List,
    /// Recompute the image's checksums.
    Verify {
        #[arg(long)]
        image: Option<PathBuf>,
    },
}

#[derive(Args, Debug, Clone)]
struct VmOpts {
    /// Image folder (default: the newest built image).
    #[arg(long)]
    image: Option<PathBuf>,
    /// auto: KVM when it works (boot watchdog), else TCG.
    #[arg(long, default_value = "auto")]
    accel: AccelChoice,
    /// Guest memory in MiB.
    #[arg(long, default_value_t = 3072)]
    memory: u32,
    /// Cold boot instead of restoring the ready snapshot.
    #[arg(long)]
    cold: bool,
    /// The QEMU binary.
    #[arg(long, default_value = "qemu-system-x86_64")]
    qemu: PathBuf,
}

#[derive(Subcommand, Debug)]
enum VmCmd {
    /// Start a named VM (restore, or boot) and leave it running.
    Up {
        #[arg(long)]
        name: String,
        #[command(flatten)]
        vm: VmOpts,
    },
    /// List named VMs.
    List,
    /// Screenshot a named VM from the host (QMP screendump), as PNG.
    Screenshot {
        #[arg(long)]
        name: String,
        #[arg(long)]
        out: PathBuf,
    },
    /// Stop a named VM and remove its files.
    Down {
        #[arg(long, required_unless_present = "all")]
        name: Option<String>,
        #[arg(long)]
        all: bool,
    },
    /// Serve a live view of a named VM's screen on a loopback address.
    View {
        #[arg(long)]
        name: String,
        #[arg(long, default_value = "127.0.0.1:0")]
        listen: std::net::SocketAddr,
    },
    /// Start COUNT VMs through the pool, PARALLEL at a time; check each
    /// (agent health, a window, host and guest screenshots) and release it.
    Smoke {
        #[arg(long, default_value_t = 2)]
        count: usize,
        #[arg(long, default_value_t = 1)]
        parallel: usize,
        /// Write each VM's host screenshot here.
        #[arg(long)]
        out: Option<PathBuf>,
        #[command(flatten)]
        vm: VmOpts,
    },
}

#[derive(Subcommand, Debug)]
enum SnapshotCmd {
    /// List ready snapshots.
    List,
    /// Delete every ready snapshot (the next VM start makes a new one).
    Clear,
}

#[derive(Subcommand, Debug)]
enum BenchCmd {
    /// Per-episode overhead on a suite with the scripted agent (reset,
    /// setup, per-step observe/act/settle, evaluation) against OSWorld's
    /// fixed waits.
    Episodes {
        #[arg(long, default_value = "tasks/examples", num_args = 1..)]
        tasks: Vec<PathBuf>,
        /// Seconds per model call assumed for the share of wall time.
        #[arg(long, default_value_t = 5.0)]
        model_latency: f64,
        /// Write the report as JSON here.
        #[arg(long)]
        json: Option<PathBuf>,
        /// qemu or local.
        #[arg(long, default_value = "qemu")]
        provider: String,
        #[command(flatten)]
        vm: VmOpts,
    },
    /// Image build, overlay, cold boot, restore, memory, agent round trip.
    Vm {
        #[arg(long, default_value_t = 5)]
        runs: usize,
        /// Take the cold boot time from the snapshot's own boot.
        #[arg(long)]
        skip_cold: bool,
        /// Also time the cached image build with this recipe.
        #[arg(long)]
        recipe: Option<PathBuf>,
        #[arg(long, default_value_t = 50)]
        rtt_samples: usize,
        /// Write the report as JSON here.
        #[arg(long)]
        json: Option<PathBuf>,
        #[command(flatten)]
        vm: VmOpts,
    },
}

fn main() {
    let cli = Cli::parse();
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
        match run(cli).await {
            Ok(code) => code,
            Err(e) => {
                eprintln!("deskenv: error: {e:#}");
                exit::USAGE
            }
        }
    });
    reaper::kill_all();
    std::process::exit(code);
}

fn open_image(cache: &std::path::Path, dir: &Option<PathBuf>) -> anyhow::Result<Image> {
    Ok(match dir {
        Some(d) => Image::open(d)?,
        None => Image::latest(cache)?,
    })
}

fn provider(cache: &std::path::Path, o: &VmOpts) -> anyhow::Result<QemuProvider> {
    let image = open_image(cache, &o.image)?;
    let config = QemuConfig {
        binary: o.qemu.clone(),
        accel: o.accel,
        memory_mib: o.memory,
        use_snapshot: !o.cold,
        ..QemuConfig::default()
    };
    Ok(QemuProvider::new(image, config, cache.to_path_buf())?)
}

/// The provider `--provider` names, and what run.json records about it.
fn make_provider(
    kind: &str,
    cache: &std::path::Path,
    o: &VmOpts,
) -> anyhow::Result<(Arc<dyn Provider>, serde_json::Value)> {
    match kind {
        "qemu" => {
            let p = provider(cache, o)?;
            let environment = serde_json::json!({
                "provider": "qemu", "image": p.image.dir, "image_digest": p.image.digest(),
                "qemu": p.qemu_version(), "memory_mib": o.memory, "snapshot": !o.cold,
            });
            Ok((Arc::new(p), environment))
        }
        "local" => {
            use controller::provider::local::{LocalConfig, LocalProvider};
            let Some(agent_bin) = LocalProvider::find_agent_bin() else {
                bail!("--provider local: the guest agent binary (deskenv-agent) was not found next to deskenv or in target/release or target/debug; build it with `cargo build --release -p deskenv-guest-agent`")
            };
            let p = LocalProvider::new(LocalConfig::default_for(agent_bin), cache)?;
            for w in p.warnings() {
                eprintln!("deskenv: local provider: {w}");
            }
            let environment = p.describe();
            Ok((Arc::new(p), environment))
        }
        other => bail!("--provider {other}: expected qemu or local"),
    }
}

/// Loads tasks, printing every file that did not load.
fn load_tasks(paths: &[PathBuf]) -> anyhow::Result<Vec<task::LoadedTask>> {
    let (tasks, errors) = task::load_all(paths)?;
    if !errors.is_empty() {
        for e in &errors {
            eprintln!("deskenv: error {e}");
        }
        bail!("{} task file(s) did not load", errors.len());
    }
    Ok(tasks)
}

async fn serve(cache: &std::path::Path, a: ServeArgs) -> anyhow::Result<()> {
    use controller::serve::{self, ServeConfig};
    let tasks = load_tasks(&a.tasks)?;
    // Tasks that cannot run are left out, each with its reason.
    let mut served = Vec::new();
    let mut excluded = serve::Excluded::new();
    let mut seen = std::collections::BTreeMap::new();
    for t in tasks {
        if let Some(first) = seen.get(&t.spec.id) {
            bail!(
                "{}: id `{}` is also the id of {} (task ids must be unique to be served)",
                t.path.display(),
                t.spec.id,
                first
            );
        }
        seen.insert(t.spec.id.clone(), t.path.display().to_string());
        let problems = task::validate::validate(&t, &task::metric_supported);
        if problems.is_empty() {
            served.push(t);
        } else {
            for p in &problems {
                eprintln!("deskenv: {}: {p} (not served)", t.path.display());
            }
            excluded.insert(
                t.spec.id.clone(),
                problems
                    .iter()
                    .map(|p| p.to_string())
                    .collect::<Vec<_>>()
                    .join("; "),
            );
        }
    }
    if served.is_empty() {
        bail!("no task can be served (see above; `deskenv tasks validate`)");
    }
    if a.parallel == 0 {
        bail!("--parallel: expected at least 1");
    }
    if a.idle_timeout <= 0.0 || a.time_limit <= 0.0 {
        bail!("--idle-timeout and --time-limit: expected positive seconds");
    }
    let token = match &a.token_file {
        Some(path) => {
            let token = std::fs::read_to_string(path)
                .with_context(|| format!("reading --token-file {}", path.display()))?
                .trim()
                .to_string();
            if token.is_empty() {
                bail!("--token-file {}: the file is empty", path.display());
            }
            Some(token)
        }
        None => None,
    };
    if a.allow_remote && token.is_none() {
        bail!("--allow-remote needs --token-file: a server that other hosts reach must ask for a bearer token");
    }
    let (provider, environment) = make_provider(&a.provider, cache, &a.vm)?;
    let pool = Arc::new(Pool::new(provider, a.parallel)?);
    let cfg = ServeConfig {
        token,
        out: a.out.clone(),
        time_limit: Duration::from_secs_f64(a.time_limit),
        settle: a.settle,
        idle_timeout: Duration::from_secs_f64(a.idle_timeout),
        provider: a.provider.clone(),
        environment,
    };
    let n = served.len();
    let (provider_kind, parallel, out) = (a.provider.clone(), a.parallel, a.out.clone());
    serve::serve(a.listen, a.allow_remote, pool, served, excluded, cfg, move |addr| {
        use std::io::Write;
        println!(
            "deskenv serve: listening on http://{addr} (provider {provider_kind}{}, {n} task(s), up to {parallel} env(s), episodes into {})",
            if provider_kind == "local" { ": desktops on this host, no VM" } else { "" },
            out.display()
        );
        let _ = std::io::stdout().flush();
    })
    .await?;
    Ok(())
}

/// The exit statuses (also in `deskenv --help`).
mod exit {
    /// Everything ran; every episode has a score.
    pub const OK: i32 = 0;
    /// Bad arguments or input, or an error that stopped the command.
    pub const USAGE: i32 = 1;
    /// Task problems: a task file does not validate, or an episode could
    /// not be set up on a healthy machine.
    pub const TASK: i32 = 2;
    /// Environment errors: an episode ended without a score after its
    /// retries (the machine died, the guest agent stopped answering), or
    /// the run stopped because machines kept failing to start.
    pub const ENV: i32 = 3;
}

async fn run(cli: Cli) -> anyhow::Result<i32> {
    let cache = paths::cache_dir(cli.cache.as_deref());
    match cli.command {
        Top::Image(ImageCmd::Build {
            recipe,
            mirror,
            suite,
            agent,
            force,
        }) => {
            let built = image::build(
                &recipe,
                &cache,
                &BuildOptions {
                    mirror,
                    suite,
                    agent,
                    out: None,
                    force,
                },
            )?;
            println!(
                "{} {} in {:.1}s ({} MiB)",
                if built.cached { "cached" } else { "built" },
                built.image.dir.display(),
                built.seconds,
                built.image.manifest.files.image.bytes.unwrap_or(0) / 1_048_576
            );
        }
        Top::Image(ImageCmd::List) => {
            let root = paths::images_dir(&cache);
            let mut any = false;
            for e in std::fs::read_dir(&root).into_iter().flatten().flatten() {
                any = true;
                match Image::open(&e.path()) {
                    Ok(i) => println!(
                        "{}  built {}  kernel {}  {} packages  {} MiB",
                        i.dir.display(),
                        i.manifest.built_at,
                        i.manifest.kernel_version,
                        i.manifest.packages.len(),
                        i.manifest.files.image.bytes.unwrap_or(0) / 1_048_576
                    ),
                    Err(err) => println!("{}  unusable: {err}", e.path().display()),
                }
            }
            if !any {
                println!("no images under {} (deskenv image build)", root.display());
            }
        }
        Top::Image(ImageCmd::Verify { image }) => {
            let img = open_image(&cache, &image)?;
            img.verify()?;
            println!("{}: checksums match the manifest", img.dir.display());
        }
        Top::Vm(VmCmd::Up { name, vm }) => {
            let p = provider(&cache, &vm)?;
            let record = named::up(&p, &name).await?;
            for n in &record.started.notes {
                eprintln!("deskenv: {n}");
            }
            println!(
                "{name}: up in {:.2}s by {} (accel {}); agent {}; pid {}",
                record.started.seconds,
                record.started.path,
                record.accel.as_str(),
                record.agent_url,
                record.pid
            );
            println!(
                "  phases: {}",
                record
                    .started
                    .phases
                    .iter()
                    .map(|(k, v)| format!("{k} {v:.2}s"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        Top::Vm(VmCmd::List) => {
            let all = named::list(&cache);
            if all.is_empty() {
                println!("no named VMs");
            }
            for l in all {
                println!(
                    "{:<16} {:<8} pid {:<8} {:<26} {} in {:.2}s",
                    l.record.name,
                    if l.running { "running" } else { "exited" },
                    l.record.pid,
                    l.record.agent_url,
                    l.record.started.path,
                    l.record.started.seconds
                );
            }
        }
        Top::Vm(VmCmd::Screenshot { name, out }) => {
            let d = named::screenshot(&cache, &name).await?;
            std::fs::write(&out, &d.png).with_context(|| format!("writing {}", out.display()))?;
            println!(
                "{}: {}x{} PNG, {} bytes (screendump {:.1} ms, encode {:.1} ms)",
                out.display(),
                d.width,
                d.height,
                d.png.len(),
                d.dump_ms,
                d.encode_ms
            );
        }
        Top::Vm(VmCmd::Down { name, all }) => {
            let names: Vec<String> = if all {
                named::list(&cache)
                    .into_iter()
                    .map(|l| l.record.name)
                    .collect()
            } else {
                name.into_iter().collect()
            };
            for n in names {
                named::down(&cache, &n).await?;
                println!("{n}: down");
            }
        }
        Top::Vm(VmCmd::View { name, listen }) => {
            let all = named::list(&cache);
            let Some(l) = all.into_iter().find(|l| l.record.name == name) else {
                bail!("no VM named `{name}`; `deskenv vm list` shows the running ones");
            };
            let qmp = controller::provider::qemu::qmp::Qmp::connect(
                &l.record.qmp,
                Duration::from_secs(5),
            )
            .await?;
            let dir = paths::vms_dir(&cache).join(&name);
            controller::provider::qemu::view::serve(listen, qmp, dir, name.clone(), |a| {
                println!("live view of {name}: http://{a}/ (Ctrl-C to stop)")
            })
            .await?;
        }
        Top::Vm(VmCmd::Smoke {
            count,
            parallel,
            out,
            vm,
        }) => smoke(&cache, count, parallel, out, &vm).await?,
        Top::Snapshot(SnapshotCmd::List) => {
            let all = snapshot::list(&cache);
            if all.is_empty() {
                println!("no ready snapshots");
            }
            for (s, m) in all {
                match m {
                    Some(m) => println!(
                        "{}  accel {}  state {} MiB  disk {} MiB  made from a {:.1}s boot",
                        s.dir.display(),
                        m.inputs.accel,
                        m.state_bytes / 1_048_576,
                        m.disk_bytes / 1_048_576,
                        m.cold_boot_seconds().unwrap_or(0.0)
                    ),
                    None => println!("{}  incomplete", s.dir.display()),
                }
            }
        }
        Top::Snapshot(SnapshotCmd::Clear) => {
            for (s, _) in snapshot::list(&cache) {
                s.remove()?;
                println!("removed {}", s.dir.display());
            }
        }
        Top::Run(args) => {
            let o = match run_tasks(&cache, args).await {
                Ok(o) => o,
                // The host failed under the run (a full disk): an
                // environment error, named.
                Err(e) if e.is::<controller::episode::runner::RunError>() => {
                    eprintln!("deskenv: error: {e:#}");
                    return Ok(exit::ENV);
                }
                Err(e) => return Err(e),
            };
            if o.stopped.is_some() || o.env_errors() > 0 {
                eprintln!(
                    "deskenv: {} episode(s) ended in an environment error{}: exit status {}",
                    o.env_errors(),
                    if o.stopped.is_some() {
                        " and the run stopped early"
                    } else {
                        ""
                    },
                    exit::ENV
                );
                return Ok(exit::ENV);
            }
            if o.setup_errors() > 0 {
                eprintln!(
                    "deskenv: {} episode(s) could not be set up: exit status {}",
                    o.setup_errors(),
                    exit::TASK
                );
                return Ok(exit::TASK);
            }
        }
        Top::Serve(args) => serve(&cache, args).await?,
        Top::Doctor { json, vm } => {
            let config = QemuConfig {
                binary: vm.qemu.clone(),
                accel: vm.accel,
                memory_mib: vm.memory,
                use_snapshot: !vm.cold,
                ..QemuConfig::default()
            };
            let r = controller::doctor::check(&cache, config, vm.image.as_deref());
            if json {
                println!("{}", serde_json::to_string_pretty(&r)?);
            } else {
                print!("{}", controller::doctor::text(&r));
            }
            if !r.problems.is_empty() {
                return Ok(exit::USAGE);
            }
        }
        Top::Tasks(TasksCmd::Validate { paths, quiet }) => {
            let (tasks, errors) = task::load_all(&paths)?;
            let mut bad = errors.len();
            for e in &errors {
                println!("error {e}");
            }
            for t in &tasks {
                let problems = task::validate::validate(t, &task::metric_supported);
                if problems.is_empty() {
                    if !quiet {
                        println!("ok    {} ({})", t.spec.id, t.path.display());
                    }
                    continue;
                }
                bad += 1;
                println!(
                    "FAIL  {} ({}): {} problem(s)",
                    t.spec.id,
                    t.path.display(),
                    problems.len()
                );
                for p in problems {
                    println!("      {}: {p}", t.path.display());
                }
            }
            println!(
                "{} task file(s): {} ok, {bad} with problems",
                tasks.len() + errors.len(),
                tasks.len() + errors.len() - bad
            );
            if bad > 0 {
                return Ok(exit::TASK);
            }
        }
        Top::Tasks(TasksCmd::List { paths }) => {
            let (tasks, errors) = task::load_all(&paths)?;
            println!(
                "{:<38} {:<18} {:<16} {:>5}  metrics",
                "id", "domain", "category", "setup"
            );
            for t in &tasks {
                println!(
                    "{:<38} {:<18} {:<16} {:>5}  {}",
                    t.spec.id,
                    t.domain,
                    t.spec.category.as_deref().unwrap_or("-"),
                    t.spec.config.len(),
                    t.spec.evaluator.func.as_slice().join(",")
                );
            }
            for e in &errors {
                eprintln!("deskenv: error {e}");
            }
            if !errors.is_empty() {
                bail!("{} task file(s) did not load", errors.len());
            }
        }
        Top::Bench(BenchCmd::Episodes {
            tasks,
            model_latency,
            json,
            provider,
            vm,
        }) => {
            let out =
                std::env::temp_dir().join(format!("deskenv-bench-episodes-{}", std::process::id()));
            let args = RunArgs {
                tasks,
                agent: "scripted".into(),
                agent_url: None,
                agent_timeout: 300.0,
                provider,
                observation: controller::agent::ObservationType::Screenshot,
                action_space: controller::agent::ActionSpace::Pyautogui,
                max_steps: vec![15],
                time_limit: 600.0,
                settle: controller::episode::SettleMode::Adaptive,
                parallel: 1,
                retries: 0,
                idle_cap: 30.0,
                out: out.clone(),
                model: None,
                base_url: String::new(),
                api_key_env: String::new(),
                temperature: None,
                top_p: None,
                max_tokens: None,
                vm,
            };
            let outcome = run_tasks(&cache, args).await?;
            let results: Vec<_> = outcome.finished.into_iter().map(|f| f.result).collect();
            let _ = std::fs::remove_dir_all(&out);
            let report = bench::episodes_report(&results, model_latency);
            print!("{}", bench::episodes_table(&report));
            if let Some(p) = json {
                std::fs::write(&p, serde_json::to_string_pretty(&report)?)
                    .with_context(|| format!("writing {}", p.display()))?;
            }
        }
        Top::Bench(BenchCmd::Vm {
            runs,
            skip_cold,
            recipe,
            rtt_samples,
            json,
            vm,
        }) => {
            let image = open_image(&cache, &vm.image)?;
            let config = QemuConfig {
                accel: vm.accel,
                memory_mib: vm.memory,
                ..QemuConfig::default()
            };
            let opts = bench::VmBenchOptions {
                runs,
                skip_cold,
                recipe,
                rtt_samples,
            };
            let report = bench::run(image, config, cache.clone(), &opts, |m| {
                eprintln!("bench: {m}")
            })
            .await?;
            print!("{}", bench::table(&report));
            if let Some(p) = json {
                std::fs::write(&p, serde_json::to_string_pretty(&report)?)
                    .with_context(|| format!("writing {}", p.display()))?;
            }
        }
    }
    Ok(exit::OK)
}

/// `deskenv vm smoke`: the pool end to end.
async fn smoke(
    cache: &std::path::Path,
    count: usize,
    parallel: usize,
    out: Option<PathBuf>,
    o: &VmOpts,
) -> anyhow::Result<()> {
    let p: Arc<dyn Provider> = Arc::new(provider(cache, o)?);
    let pool = Arc::new(Pool::new(p, parallel)?);
    if let Some(d) = &out {
        std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
    }
    let t = Instant::now();
    let mut tasks = Vec::new();
    for i in 0..count {
        let pool = pool.clone();
        let out = out.clone();
        tasks.push(tokio::spawn(async move {
            let lease = pool.acquire().await?;
            let started = lease.started().clone();
            for n in &started.notes {
                eprintln!("deskenv: {n}");
            }
            let h = lease.agent().health(Duration::from_secs(5)).await?;
            let text = format!("deskenv smoke test, VM {i}\n");
            lease.agent().put_file("/tmp/smoke.txt", text.into_bytes()).await?;
            let opened = lease.agent().open("/tmp/smoke.txt", None, Duration::from_secs(60)).await?;
            let guest_png = lease.agent().screenshot().await?;
            let host_png = lease.screenshot().await?;
            if let Some(d) = &out {
                std::fs::write(d.join(format!("vm{i}.png")), &host_png)?;
            }
            let line = format!(
                "vm {i} ({}): {} in {:.2}s; screen {}x{}, atspi {}; opened \"{}\" in {:.1}s; screenshots: guest {} KiB, host {} KiB",
                lease.name(),
                started.path,
                started.seconds,
                h.screen.width,
                h.screen.height,
                h.atspi,
                opened.window.title,
                opened.waited_ms / 1000.0,
                guest_png.len() / 1024,
                host_png.len() / 1024
            );
            lease.release().await;
            anyhow::Ok(line)
        }));
    }
    let mut failed = 0;
    for t in tasks {
        match t.await? {
            Ok(line) => println!("{line}"),
            Err(e) => {
                failed += 1;
                println!("error: {e:#}");
            }
        }
    }
    println!(
        "{count} VM(s), {parallel} at a time, in {:.1}s; {} QEMU process(es) left",
        t.elapsed().as_secs_f64(),
        reaper::live()
    );
    if failed > 0 {
        bail!("{failed} of {count} VM(s) failed");
    }
    Ok(())
}

/// `deskenv run`.
async fn run_tasks(
    cache: &std::path::Path,
    a: RunArgs,
) -> anyhow::Result<controller::episode::runner::RunOutcome> {
    use controller::episode::{runner, EpisodeSettings};
    let tasks = load_tasks(&a.tasks)?;
    // Refuse tasks that cannot run, naming every problem, before any VM starts.
    let mut problems = 0;
    for t in &tasks {
        for p in task::validate::validate(t, &task::metric_supported) {
            eprintln!("deskenv: {}: {p}", t.path.display());
            problems += 1;
        }
        if a.agent == "scripted" && t.spec.solution.is_none() {
            eprintln!(
                "deskenv: {}: solution: missing (the scripted agent replays it)",
                t.path.display()
            );
            problems += 1;
        }
    }
    if problems > 0 {
        bail!("{problems} problem(s) in the task files (see above; `deskenv tasks validate`)");
    }
    if a.max_steps.is_empty() || a.max_steps.contains(&0) {
        bail!("--max-steps: expected positive step budgets, e.g. 15 or 15,30,50");
    }
    if !(0.0..=600.0).contains(&a.idle_cap) {
        bail!("--idle-cap: expected seconds from 0 to 600");
    }
    let faults = controller::episode::faults::Faults::from_env()?;
    let make_agent: runner::AgentFactory = match a.agent.as_str() {
        "scripted" => {
            Arc::new(|| Ok(Box::new(controller::agent::scripted::ScriptedAgent::default()) as _))
        }
        "noop" => Arc::new(|| Ok(Box::new(controller::agent::noop::NoopAgent) as _)),
        "openai" => {
            use controller::agent::openai::{OpenAiAgent, OpenAiConfig};
            let Some(model) = a.model.clone() else {
                bail!("--agent openai needs --model")
            };
            let mut c = OpenAiConfig::new(a.base_url.clone(), model);
            c.api_key_env = Some(a.api_key_env.clone());
            if let Some(t) = a.temperature {
                c.temperature = t;
            }
            if let Some(t) = a.top_p {
                c.top_p = t;
            }
            if let Some(t) = a.max_tokens {
                c.max_tokens = t;
            }
            // Fail on a bad configuration now, not per task.
            OpenAiAgent::new(c.clone())?;
            Arc::new(move || {
                OpenAiAgent::new(c.clone())
                    .map(|a| Box::new(a) as _)
                    .map_err(|e| e.to_string())
            })
        }
        "http" => {
            use controller::agent::http::{HttpAgent, HttpAgentConfig};
            let Some(url) = a.agent_url.clone() else {
                bail!("--agent http needs --agent-url (your agent server; deskenv POSTs to URL/reset and URL/predict)")
            };
            if a.agent_timeout <= 0.0 {
                bail!("--agent-timeout: expected positive seconds");
            }
            let c = HttpAgentConfig {
                url,
                timeout: Duration::from_secs_f64(a.agent_timeout),
            };
            HttpAgent::new(c.clone())?;
            Arc::new(move || {
                HttpAgent::new(c.clone())
                    .map(|a| Box::new(a) as _)
                    .map_err(|e| e.to_string())
            })
        }
        other => bail!("--agent {other}: expected scripted, noop, openai or http"),
    };
    let (provider, environment) = make_provider(&a.provider, cache, &a.vm)?;
    let pool = Arc::new(Pool::new(provider, a.parallel)?);
    let settings = Arc::new(runner::RunSettings {
        out: a.out.clone(),
        model: a.model.clone().unwrap_or_else(|| a.agent.clone()),
        agent: a.agent.clone(),
        budgets: a.max_steps.clone(),
        episode: EpisodeSettings {
            time_limit: Duration::from_secs_f64(a.time_limit),
            settle: a.settle,
            idle_cap: Duration::from_secs_f64(a.idle_cap),
            faults,
            ..EpisodeSettings::new(a.observation, a.action_space, a.max_steps[0])
        },
        provider: a.provider.clone(),
        parallel: a.parallel,
        retries: a.retries,
        environment,
    });
    println!(
        "{} task(s) × {} budget(s), {} at a time, into {}",
        tasks.len(),
        a.max_steps.len(),
        a.parallel,
        a.out.display()
    );
    let outcome = runner::run(
        pool,
        settings.clone(),
        tasks,
        make_agent,
        Arc::new(|l: &str| println!("{l}")),
    )
    .await?;
    print!("{}", runner::summary(&outcome, &settings));
    Ok(outcome)
}
