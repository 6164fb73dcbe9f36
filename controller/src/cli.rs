//! The command line: clap's derive structs, one per command, and the
//! typed values (`--provider`, `--agent`, `--accel`, …) the commands match
//! on. Argument groups that several commands take are flattened structs.

use clap::{Args, Parser, Subcommand, ValueEnum};
use controller::episode::SettleMode;
use controller::policy::{ActionSpace, ObservationType};
use controller::provider::qemu::AccelChoice;
use std::path::PathBuf;

/// Where `deskenv run` writes when no `--out` is given: under `target/`,
/// so a run in a checkout never leaves files to commit. The same folder
/// for the same command, so rerunning it resumes.
pub const RUN_OUT: &str = "target/deskenv-runs/run";
/// `deskenv tasks check`'s default output folder.
pub const CHECK_OUT: &str = "target/deskenv-runs/check";
/// Where `deskenv serve` writes its episodes and serve.json by default.
pub const SERVE_OUT: &str = "target/deskenv-runs/serve";

#[derive(Parser, Debug)]
#[command(
    name = "deskenv",
    version,
    about = "deskenv: desktop VMs for evaluating GUI agents",
    after_help = crate::exit::HELP
)]
pub struct Cli {
    /// The cache folder (images, snapshots, running VMs). Default:
    /// $DESKENV_CACHE, else ~/.cache/deskenv.
    #[arg(long, global = true)]
    pub cache: Option<PathBuf>,
    /// More log output (-v info, -vv debug).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    #[command(subcommand)]
    pub command: Top,
}

#[derive(Subcommand, Debug)]
pub enum Top {
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
    /// Compare two finished runs on the same tasks (paired by task id and
    /// seed, per step budget): success rate and mean score with bootstrap
    /// intervals, the paired difference, an exact McNemar test on
    /// success, a paired permutation test on scores, and the smallest
    /// difference this many tasks can detect, said in words.
    Compare(CompareArgs),
    /// Write a report of finished runs to a folder that opens from disk:
    /// index.html (an overview per run and budget with intervals, charts,
    /// each run compared with the first, breakdowns by stage, difficulty,
    /// application and domain, failure analysis, the unscored episodes
    /// apart), a page per episode (instruction, sub-checks, timings, a
    /// filmstrip with the actions drawn over the screenshots, the raw
    /// responses), detailed_results.csv, metrics_summary.csv and
    /// summary.json. Prints each run's figures.
    Report(ReportArgs),
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

/// `deskenv compare`.
#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Run A's output folder (`deskenv run --out` or `tasks check --out`).
    pub a: PathBuf,
    /// Run B's output folder.
    pub b: PathBuf,
    /// Bootstrap resamples (also the permutation test's random sign
    /// assignments when it cannot enumerate them all).
    #[arg(long, default_value_t = 10_000)]
    pub resamples: usize,
    /// The bootstrap's RNG seed (printed with the intervals).
    #[arg(long, default_value_t = stats::DEFAULT_SEED)]
    pub seed: u64,
    /// Write the comparison as JSON here.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// `deskenv report`.
#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Run output folders (`deskenv run --out` or `tasks check --out`);
    /// the first is the one the others are compared with.
    #[arg(required = true)]
    pub runs: Vec<PathBuf>,
    /// The report's folder (made if missing; files in it are replaced).
    #[arg(long)]
    pub out: PathBuf,
    /// Dollars per million tokens, for the cost column.
    #[arg(long)]
    pub price_per_mtok: Option<f64>,
    /// Bootstrap resamples.
    #[arg(long, default_value_t = 10_000)]
    pub resamples: usize,
    /// The bootstrap's RNG seed (printed with the intervals).
    #[arg(long, default_value_t = stats::DEFAULT_SEED)]
    pub seed: u64,
    /// Print summary.json's figures as JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `--provider`: [`controller::provider::Kind`].
pub use controller::provider::Kind as ProviderKind;

/// `--agent`.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentKind {
    /// The task's solution.
    Scripted,
    /// DONE at once.
    Noop,
    /// An OpenAI-compatible endpoint.
    Openai,
    /// Your agent server at --agent-url.
    Http,
}

impl AgentKind {
    /// The name results record.
    pub fn as_str(self) -> &'static str {
        match self {
            AgentKind::Scripted => "scripted",
            AgentKind::Noop => "noop",
            AgentKind::Openai => "openai",
            AgentKind::Http => "http",
        }
    }
}

/// `--accel`.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accel {
    Auto,
    Kvm,
    Tcg,
}

impl From<Accel> for AccelChoice {
    fn from(a: Accel) -> AccelChoice {
        match a {
            Accel::Auto => AccelChoice::Auto,
            Accel::Kvm => AccelChoice::Kvm,
            Accel::Tcg => AccelChoice::Tcg,
        }
    }
}

/// Which machines: the provider and, for qemu, the VM settings.
#[derive(Args, Debug, Clone)]
pub struct MachineArgs {
    /// qemu (a fresh VM per episode) or local (a fresh desktop on this
    /// host, no VM: only /home/user is private, and only when run as root).
    #[arg(long, value_enum, default_value = "qemu")]
    pub provider: ProviderKind,
    #[command(flatten)]
    pub vm: VmOpts,
}

#[derive(Args, Debug, Clone)]
pub struct VmOpts {
    /// Image folder (default: the newest built image).
    #[arg(long)]
    pub image: Option<PathBuf>,
    /// auto: KVM when it works (boot watchdog), else TCG.
    #[arg(long, value_enum, default_value = "auto")]
    pub accel: Accel,
    /// Guest memory in MiB.
    #[arg(long, default_value_t = 3072)]
    pub memory: u32,
    /// Cold boot instead of restoring the ready snapshot.
    #[arg(long)]
    pub cold: bool,
    /// The QEMU binary.
    #[arg(long, default_value = "qemu-system-x86_64")]
    pub qemu: PathBuf,
    /// Keep the whole ready state in zstd, guest RAM included, instead of
    /// a RAM file each restore maps (slower restores, less disk; a
    /// snapshot of its own).
    #[arg(long)]
    pub zstd_state: bool,
}

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Address to listen on (port 0: any free port; the first line printed
    /// names it).
    #[arg(long, default_value = "127.0.0.1:8020")]
    pub listen: std::net::SocketAddr,
    /// Serve on a non-loopback address (anyone who reaches it controls the
    /// desktops); needs --token-file.
    #[arg(long)]
    pub allow_remote: bool,
    /// A file holding a bearer token: every route but /v1/health then
    /// needs `Authorization: Bearer <token>`.
    #[arg(long)]
    pub token_file: Option<PathBuf>,
    /// Task files or folders.
    #[arg(long, required = true, num_args = 1..)]
    pub tasks: Vec<PathBuf>,
    /// Envs (machines) at once.
    #[arg(long, default_value_t = 1)]
    pub parallel: usize,
    /// Output folder: serve.json and the episodes in OSWorld's layout.
    #[arg(long, default_value = SERVE_OUT)]
    pub out: PathBuf,
    /// Seconds per episode for the step loop.
    #[arg(long, default_value_t = 600.0)]
    pub time_limit: f64,
    /// An episode whose client sends no step for this many seconds ends
    /// and its machine is freed.
    #[arg(long, default_value_t = 600.0)]
    pub idle_timeout: f64,
    /// adaptive, or fixed:SECONDS (fixed:2.0 is OSWorld's pause).
    #[arg(long, default_value = "adaptive")]
    pub settle: SettleMode,
    #[command(flatten)]
    pub machines: MachineArgs,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Task files or folders.
    #[arg(long, required = true, num_args = 1..)]
    pub tasks: Vec<PathBuf>,
    #[command(flatten)]
    pub agent: AgentArgs,
    #[command(flatten)]
    pub episode: EpisodeArgs,
    #[arg(long, default_value_t = 1)]
    pub parallel: usize,
    /// Attempts after the first, each on a fresh machine, for an episode
    /// that ended without a score (the machine died, the guest stopped
    /// answering, a setup step failed on a healthy machine).
    #[arg(long, default_value_t = 2)]
    pub retries: u32,
    /// Run every task K times per budget, each on a fresh machine; the
    /// results record their repeat (in `repeat-<r>/` folders) and the
    /// report gives pass@k.
    #[arg(long, default_value_t = 1)]
    pub repeats: u32,
    /// With --repeats: repeat r uses seed + r − 1 (other generated data)
    /// instead of the same seed.
    #[arg(long)]
    pub vary_seed: bool,
    /// With several budgets (--max-steps 15,30,50): run each task once, at
    /// the largest budget, save the machine's state after each smaller
    /// budget's last step, and evaluate each smaller budget on a machine
    /// started from its checkpoint (needs the qemu provider).
    #[arg(long)]
    pub checkpoints: bool,
    /// Record each episode's steps to recording.mp4 in its folder (the
    /// guest's ffmpeg), at FPS frames per second (5 if no value is given).
    #[arg(long, num_args = 0..=1, default_missing_value = "5", value_name = "FPS")]
    pub record: Option<u32>,
    /// Output folder (OSWorld's layout); rerunning the same command into
    /// the same folder resumes.
    #[arg(long, default_value = RUN_OUT)]
    pub out: PathBuf,
    #[command(flatten)]
    pub machines: MachineArgs,
}

/// Which agent, and its settings.
#[derive(Args, Debug, Clone)]
pub struct AgentArgs {
    /// scripted (the task's solution), noop (DONE at once), openai (an
    /// OpenAI-compatible endpoint), http (your agent server at --agent-url;
    /// to drive deskenv from your program instead, see `deskenv serve`).
    #[arg(long, value_enum, default_value = "scripted")]
    pub agent: AgentKind,
    /// The http agent's server: deskenv POSTs to URL/reset and URL/predict.
    #[arg(long)]
    pub agent_url: Option<String>,
    /// Seconds one call to the http agent's server may take.
    #[arg(long, default_value_t = 300.0)]
    pub agent_timeout: f64,
    /// The model name (openai agent; also names the result folder).
    #[arg(long)]
    pub model: Option<String>,
    /// OpenAI-compatible endpoint (openai agent), e.g. http://127.0.0.1:8000/v1.
    #[arg(long, default_value = "http://127.0.0.1:8000/v1")]
    pub base_url: String,
    /// Environment variable holding the API key (openai agent).
    #[arg(long, default_value = "OPENAI_API_KEY")]
    pub api_key_env: String,
    #[arg(long)]
    pub temperature: Option<f32>,
    #[arg(long)]
    pub top_p: Option<f32>,
    #[arg(long)]
    pub max_tokens: Option<u32>,
}

/// The episode loop's settings.
#[derive(Args, Debug, Clone)]
pub struct EpisodeArgs {
    /// screenshot, a11y_tree or screenshot_a11y_tree.
    #[arg(long, value_enum, default_value = "screenshot")]
    pub observation: ObservationType,
    /// pyautogui or computer_13.
    #[arg(long, value_enum, default_value = "pyautogui")]
    pub action_space: ActionSpace,
    /// Step budget; a list (15,30,50) runs an ablation side by side.
    #[arg(long, default_value = "15", value_delimiter = ',')]
    pub max_steps: Vec<usize>,
    /// Seconds per task for the step loop.
    #[arg(long, default_value_t = 600.0)]
    pub time_limit: f64,
    /// adaptive, or fixed:SECONDS (fixed:2.0 is OSWorld's pause).
    #[arg(long, default_value = "adaptive")]
    pub settle: SettleMode,
    /// Where screenshots and the settle after each action come from: host
    /// (QEMU's display read on the host, the guest's CPU not involved;
    /// the guest agent where the provider has no host display) or guest
    /// (always the guest agent's capture).
    #[arg(long, value_enum, default_value = "host")]
    pub frames: controller::episode::Frames,
    /// The longest wait, in seconds, for an idle guest (no CPU use by the
    /// desktop's processes, a quiet screen) before the evaluation, and in
    /// an agent's `WAIT` (adaptive settle).
    #[arg(long, default_value_t = 30.0)]
    pub idle_cap: f64,
    /// The seed of the tasks' generated data (tasks with a `generate`
    /// setup step); recorded in run.json and every result.json.
    #[arg(long, default_value_t = controller::episode::DEFAULT_SEED)]
    pub seed: u64,
}

/// An argument group with every field at clap's default, as the command
/// line would give it with none of its flags: for commands that reuse a
/// group without offering its flags (`bench episodes`).
pub fn defaults<T: Args + clap::FromArgMatches>() -> T {
    let cmd = T::augment_args(clap::Command::new("defaults"));
    T::from_arg_matches(&cmd.get_matches_from(["defaults"]))
        .expect("every field of the group has a default")
}

#[derive(Subcommand, Debug)]
pub enum TasksCmd {
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
    /// Prove tasks honest: run each task's oracle on two seeds, the noop,
    /// every `gaming` attempt, and the oracle's answer from the first seed
    /// planted on the second (stale answer); print a table and exit 2
    /// unless every oracle scores ≥ 0.95 and nothing else does.
    Check(CheckArgs),
}

/// What `deskenv tasks check` runs.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckVariant {
    Oracle,
    Noop,
    Gaming,
    Stale,
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Task files or folders.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// The two seeds (one seed: the oracle, noop and gaming attempts on it,
    /// no stale answer).
    #[arg(long, default_value = "1,2", value_delimiter = ',', num_args = 1..=2)]
    pub seeds: Vec<u64>,
    #[arg(long, default_value_t = 1)]
    pub parallel: usize,
    /// Output folder (cleared first).
    #[arg(long, default_value = CHECK_OUT)]
    pub out: PathBuf,
    /// Attempts after the first for an episode without a score.
    #[arg(long, default_value_t = 2)]
    pub retries: u32,
    /// Which attempts to run: oracle (on both seeds), noop, gaming, stale.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "oracle,noop,gaming,stale"
    )]
    pub variants: Vec<CheckVariant>,
    /// The oracle on the first seed only; the second seed still hosts the
    /// gaming attempts and the stale answers (CI's time: the oracle on the
    /// second seed runs in `scripts/test.sh --full`).
    #[arg(long)]
    pub oracle_once: bool,
    #[command(flatten)]
    pub machines: MachineArgs,
}

#[derive(Subcommand, Debug)]
pub enum ImageCmd {
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
        /// --release --locked --workspace --bin deskenv-agent`).
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

#[derive(Subcommand, Debug)]
pub enum VmCmd {
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
pub enum SnapshotCmd {
    /// List ready snapshots.
    List,
    /// Delete every ready snapshot (the next VM start makes a new one).
    Clear,
}

#[derive(Subcommand, Debug)]
pub enum BenchCmd {
    /// Per-episode overhead on a suite with the scripted agent (reset,
    /// setup, per-step observe/act/settle, evaluation) against OSWorld's
    /// fixed waits.
    Episodes {
        #[arg(long, default_value = "tasks/examples", num_args = 1..)]
        tasks: Vec<PathBuf>,
        /// Report on the results already under these folders (a `deskenv
        /// run --out` or `deskenv tasks check --out` folder) instead of
        /// running the tasks; of a `tasks check` only the oracle episodes
        /// count (ids ending `.noop`, `.gaming-…` or `.stale` are left
        /// out).
        #[arg(long, num_args = 1.., conflicts_with = "tasks")]
        from: Vec<PathBuf>,
        /// Seconds per model call assumed for the share of wall time.
        #[arg(long, default_value_t = 5.0)]
        model_latency: f64,
        /// Where screenshots and settles come from (as `run --frames`).
        #[arg(long, value_enum, default_value = "host")]
        frames: controller::episode::Frames,
        /// Write the report as JSON here.
        #[arg(long)]
        json: Option<PathBuf>,
        #[command(flatten)]
        machines: MachineArgs,
    },
    /// Observing a VM, the guest agent's path against the host's on the
    /// same VM: screenshot observe, settle, a11y on Calc, restore.
    Observe {
        /// Measurements per row.
        #[arg(long, default_value_t = 20)]
        samples: usize,
        /// a11y measurements on Calc (fresh against cached walks; 0: none).
        #[arg(long, default_value_t = 5)]
        a11y_samples: usize,
        /// Restores to time.
        #[arg(long, default_value_t = 5)]
        restores: usize,
        /// Write the report as JSON here.
        #[arg(long)]
        json: Option<PathBuf>,
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn groups_reused_without_their_flags_get_clap_defaults() {
        let a: AgentArgs = defaults();
        assert_eq!(a.agent, AgentKind::Scripted);
        assert_eq!(a.agent_timeout, 300.0);
        let e: EpisodeArgs = defaults();
        assert_eq!(e.max_steps, [15]);
        assert_eq!(e.observation, ObservationType::Screenshot);
        assert_eq!(e.idle_cap, 30.0);
    }

    #[test]
    fn out_defaults_to_a_folder_under_target() {
        let c = Cli::parse_from(["deskenv", "run", "--tasks", "t"]);
        let Top::Run(r) = c.command else { panic!() };
        assert_eq!(r.out, PathBuf::from(RUN_OUT));
        assert!(r.out.starts_with("target"));
    }
}
