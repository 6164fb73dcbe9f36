//! `deskenv-agent bench`: the guest agent's figures against OSWorld's ways,
//! measured in one run on the same desktop.
//!
//! - screenshot capture + encode served over HTTP (PNG and JPEG);
//! - the full accessibility tree of gtk3-widget-factory and of LibreOffice
//!   Calc with a sheet open, against `guest-agent/bench/pyatspi_walk.py`, a
//!   pyatspi walker that collects what OSWorld's server collects;
//! - one CLICK round trip over HTTP, against a `python3 -c "import pyautogui;
//!   pyautogui.click(…)"` process per action as OSWorld runs it, and through
//!   OSWorld's own `/execute` route (which deskenv runs natively).
//!
//! Each figure is the median and p95 over `--runs` runs (default 20).

use crate::server::{self, AppState, Config};
use anyhow::{bail, Context};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// Runs per figure.
    #[arg(long, default_value_t = 20)]
    pub runs: usize,
    /// Python with pyatspi (Debian's python3-pyatspi) for the a11y baseline.
    #[arg(long, default_value = "/usr/bin/python3")]
    pub pyatspi_python: String,
    /// Python with pyautogui for the click baseline (scripts/install-deps.sh
    /// makes one under target/pyautogui-venv).
    #[arg(long)]
    pub pyautogui_python: Option<String>,
    /// Skip LibreOffice Calc (slow to start).
    #[arg(long)]
    pub skip_calc: bool,
    /// Only these parts (screenshot, a11y, click); default all.
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// Also write the figures as JSON here.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// Median and 95th percentile of a sample, in ms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stats {
    pub median: f64,
    pub p95: f64,
    pub n: usize,
}

pub fn stats(samples: &[f64]) -> Stats {
    let mut v: Vec<f64> = samples.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(|a, b| a.total_cmp(b));
    if v.is_empty() {
        return Stats {
            median: f64::NAN,
            p95: f64::NAN,
            n: 0,
        };
    }
    let median = if v.len() % 2 == 1 {
        v[v.len() / 2]
    } else {
        (v[v.len() / 2 - 1] + v[v.len() / 2]) / 2.0
    };
    // Nearest-rank percentile.
    let rank = ((0.95 * v.len() as f64).ceil() as usize).clamp(1, v.len());
    Stats {
        median,
        p95: v[rank - 1],
        n: v.len(),
    }
}

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(PathBuf::from)
        .unwrap_or_default()
}

struct Report {
    rows: Vec<(String, Stats, String)>,
    json: serde_json::Map<String, Value>,
}

impl Report {
    fn add(&mut self, name: &str, s: Stats, note: impl Into<String>) {
        let note = note.into();
        println!(
            "{name:<48} median {:>9.2} ms   p95 {:>9.2} ms   n={:<3} {note}",
            s.median, s.p95, s.n
        );
        self.json.insert(
            name.to_string(),
            json!({"median_ms": s.median, "p95_ms": s.p95, "n": s.n, "note": note}),
        );
        self.rows.push((name.to_string(), s, note));
    }

    fn ratio(&mut self, name: &str, baseline: Stats, ours: Stats) {
        let r = baseline.median / ours.median;
        println!("{name:<48} {r:.1}x faster (median baseline / median deskenv)");
        self.json.insert(name.to_string(), json!(r));
    }
}

pub async fn run(mut config: Config, args: BenchArgs) -> anyhow::Result<()> {
    anyhow::ensure!(args.runs >= 1, "--runs must be at least 1");
    config.listen = "127.0.0.1:0".parse()?;
    let display = config.display.clone();
    let want = |part: &str| args.only.is_empty() || args.only.iter().any(|p| p == part);
    let state = AppState::new(config).context("starting the agent in-process")?;
    let router = server::app(std::sync::Arc::new(state));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(120))
        .build()?;
    println!(
        "deskenv-agent bench on display {display}, {} runs per figure",
        args.runs
    );
    let mut report = Report {
        rows: vec![],
        json: serde_json::Map::new(),
    };

    // A realistic screen: two GTK applications, as in a task.
    let _factory = launch(&display, &["gtk3-widget-factory"])?;
    let notes = std::env::temp_dir().join("deskenv-bench-notes.txt");
    std::fs::write(
        &notes,
        "import pandas as pd\ndf = pd.read_csv('data.csv')\nprint(df.describe())\n",
    )?;
    let _editor = launch(&display, &["mousepad", &notes.to_string_lossy()])?;
    wait_app(
        &http,
        &base,
        "gtk3-widget-factory",
        50,
        Duration::from_secs(60),
    )
    .await?;
    wait_app(&http, &base, "mousepad", 20, Duration::from_secs(60)).await?;

    if want("screenshot") {
        bench_screenshot(&http, &base, args.runs, &mut report).await?;
    }
    if want("a11y") {
        bench_a11y(&http, &base, &args, &display, &mut report).await?;
    }
    if want("click") {
        bench_click(&http, &base, &args, &display, &mut report).await?;
    }
    if let Some(path) = &args.json {
        std::fs::write(
            path,
            serde_json::to_vec_pretty(&Value::Object(report.json))?,
        )
        .with_context(|| format!("writing {}", path.display()))?;
        println!("figures written to {}", path.display());
    }
    Ok(())
}

async fn bench_screenshot(
    http: &reqwest::Client,
    base: &str,
    runs: usize,
    report: &mut Report,
) -> anyhow::Result<()> {
    for (format, label) in [("png", "PNG"), ("jpeg", "JPEG q80")] {
        let (mut total, mut cap, mut enc, mut size) = (vec![], vec![], vec![], 0usize);
        for i in 0..=runs {
            let t = Instant::now();
            let r = http
                .get(format!("{base}/v1/screenshot?format={format}"))
                .send()
                .await?
                .error_for_status()?;
            let h = r.headers().clone();
            let body = r.bytes().await?;
            let ms = t.elapsed().as_secs_f64() * 1000.0;
            if i == 0 {
                continue; // warm-up
            }
            let num = |k: &str| {
                h.get(k)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.parse::<f64>().ok())
                    .unwrap_or(f64::NAN)
            };
            anyhow::ensure!(
                num("x-frame-width") == 1920.0 && num("x-frame-height") == 1080.0,
                "the screen is not 1920x1080"
            );
            total.push(ms);
            cap.push(num("x-capture-ms"));
            enc.push(num("x-encode-ms"));
            size = body.len();
        }
        report.add(
            &format!("screenshot {label} over HTTP"),
            stats(&total),
            format!("{} KiB", size / 1024),
        );
        report.add(
            &format!("  capture (MIT-SHM + cursor), {label}"),
            stats(&cap),
            "",
        );
        report.add(&format!("  encode {label}"), stats(&enc), "");
    }
    Ok(())
}

/// Starts a program on the desktop; killed on drop.
struct Launched(std::process::Child);

impl Drop for Launched {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn launch(display: &str, argv: &[&str]) -> anyhow::Result<Launched> {
    let child = std::process::Command::new(argv[0])
        .args(&argv[1..])
        .env("DISPLAY", display)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("starting {argv:?}"))?;
    Ok(Launched(child))
}

/// Waits until the a11y tree of `app` has stopped growing (the app is up).
async fn wait_app(
    http: &reqwest::Client,
    base: &str,
    app: &str,
    min_nodes: usize,
    limit: Duration,
) -> anyhow::Result<usize> {
    let deadline = Instant::now() + limit;
    let mut last = 0usize;
    let mut stable = 0;
    loop {
        let r: Value = http
            .get(format!("{base}/v1/a11y?format=json&app={app}"))
            .send()
            .await?
            .json()
            .await?;
        let n = r["nodes"].as_u64().unwrap_or(0) as usize;
        if n >= min_nodes && n == last {
            stable += 1;
            if stable >= 3 {
                return Ok(n);
            }
        } else {
            stable = 0;
        }
        last = n;
        if Instant::now() > deadline {
            bail!(
                "{app} did not show a stable accessibility tree within {limit:?} (last {n} nodes)"
            );
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

async fn bench_a11y(
    http: &reqwest::Client,
    base: &str,
    args: &BenchArgs,
    display: &str,
    report: &mut Report,
) -> anyhow::Result<()> {
    let script = repo_root().join("guest-agent/bench/pyatspi_walk.py");
    let sheet = std::env::temp_dir().join("deskenv-bench-sheet.csv");
    let mut csv = String::from("id,name,value,score\n");
    for i in 0..200 {
        csv.push_str(&format!(
            "{i},item {i},{},{:.3}\n",
            i * 7 % 13,
            (i as f64).sqrt()
        ));
    }
    std::fs::write(&sheet, csv)?;
    let sheet_arg = sheet.to_string_lossy().into_owned();
    // gtk3-widget-factory is already on screen (started by run()).
    let mut cases: Vec<(&str, &str, Vec<&str>)> =
        vec![("gtk3-widget-factory", "gtk3-widget-factory", vec![])];
    if !args.skip_calc {
        cases.push((
            "LibreOffice Calc (200-row sheet)",
            "soffice",
            vec![
                "localc",
                "--norestore",
                "--nologo",
                "--infilter=CSV:44,34,76",
                &sheet_arg,
            ],
        ));
    }
    for (label, app, argv) in cases {
        let _app = if argv.is_empty() {
            None
        } else {
            Some(launch(display, &argv)?)
        };
        let nodes = wait_app(http, base, app, 50, Duration::from_secs(120)).await?;
        let mut ours = vec![];
        let mut last_nodes = nodes;
        for i in 0..=args.runs {
            let t = Instant::now();
            let r: Value = http
                .get(format!("{base}/v1/a11y?format=osworld-xml&app={app}"))
                .send()
                .await?
                .json()
                .await?;
            if i > 0 {
                ours.push(t.elapsed().as_secs_f64() * 1000.0);
            }
            last_nodes = r["nodes"].as_u64().unwrap_or(0) as usize;
            if r["truncated"].as_bool() == Some(true) {
                bail!("{label}: the walk was truncated: {}", r["reason"]);
            }
        }
        let out = tokio::process::Command::new(&args.pyatspi_python)
            .arg(&script)
            .args(["--app", app, "--repeat", &args.runs.to_string()])
            .env("DISPLAY", display)
            .output()
            .await
            .with_context(|| format!("running {} {}", args.pyatspi_python, script.display()))?;
        if !out.status.success() {
            bail!(
                "the pyatspi baseline failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let base_json: Value = serde_json::from_slice(&out.stdout).with_context(|| {
            format!(
                "the pyatspi baseline printed no JSON: {}",
                String::from_utf8_lossy(&out.stdout)
            )
        })?;
        let base_ms: Vec<f64> = base_json["ms"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_f64).collect())
            .unwrap_or_default();
        let base_nodes = base_json["nodes"].as_u64().unwrap_or(0) as usize;
        let (o, b) = (stats(&ours), stats(&base_ms));
        report.add(
            &format!("a11y {label}: deskenv (HTTP, osworld-xml)"),
            o,
            format!("{last_nodes} nodes"),
        );
        report.add(
            &format!("a11y {label}: pyatspi baseline (in-process)"),
            b,
            format!("{base_nodes} nodes"),
        );
        report.ratio(&format!("a11y {label}: speed-up"), b, o);
        report.json.insert(
            format!("a11y {label}: same node count"),
            json!(last_nodes == base_nodes),
        );
        if last_nodes != base_nodes {
            println!("  note: node counts differ ({last_nodes} vs {base_nodes}); the tree may have changed between walks");
        }
    }
    Ok(())
}

/// Milliseconds of `runs` POSTs of `body` to `url`, after one warm-up.
async fn time_posts(
    http: &reqwest::Client,
    url: &str,
    body: &Value,
    runs: usize,
) -> anyhow::Result<Vec<f64>> {
    let mut ms = vec![];
    for i in 0..=runs {
        let t = Instant::now();
        http.post(url).json(body).send().await?.error_for_status()?;
        if i > 0 {
            ms.push(t.elapsed().as_secs_f64() * 1000.0);
        }
    }
    Ok(ms)
}

async fn bench_click(
    http: &reqwest::Client,
    base: &str,
    args: &BenchArgs,
    display: &str,
    report: &mut Report,
) -> anyhow::Result<()> {
    // A spot on the bare desktop: clicking it changes nothing.
    let (x, y) = (1900, 1060);
    let body = json!({"actions": [{"action_type": "CLICK", "parameters": {"x": x, "y": y}}]});
    let ours = time_posts(http, &format!("{base}/v1/actions"), &body, args.runs).await?;
    let code = format!(
        "import pyautogui; import time; pyautogui.FAILSAFE = False; pyautogui.click({x}, {y})"
    );
    let compat_body = json!({"command": ["python", "-c", code], "shell": false});
    let compat = time_posts(http, &format!("{base}/execute"), &compat_body, args.runs).await?;
    let o = stats(&ours);
    report.add("CLICK round trip: deskenv /v1/actions", o, "");
    report.add(
        "CLICK round trip: deskenv OSWorld /execute",
        stats(&compat),
        "OSWorld's request, run natively",
    );

    let python = args.pyautogui_python.clone().unwrap_or_else(|| {
        repo_root()
            .join("target/pyautogui-venv/bin/python")
            .to_string_lossy()
            .into_owned()
    });
    let mut theirs = vec![];
    for i in 0..=args.runs {
        let t = Instant::now();
        let out = tokio::process::Command::new(&python)
            .args(["-c", &code])
            .env("DISPLAY", display)
            .output()
            .await
            .with_context(|| {
                format!("running {python} (scripts/install-deps.sh installs pyautogui there)")
            })?;
        if !out.status.success() {
            bail!(
                "the pyautogui baseline failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        if i > 0 {
            theirs.push(t.elapsed().as_secs_f64() * 1000.0);
        }
    }
    let b = stats(&theirs);
    report.add(
        "CLICK: python3 -c 'import pyautogui; click' (OSWorld)",
        b,
        "",
    );
    report.ratio("CLICK speed-up", b, o);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_p95() {
        let s = stats(&[5.0, 1.0, 3.0]);
        assert_eq!((s.median, s.p95, s.n), (3.0, 5.0, 3));
        let v: Vec<f64> = (1..=20).map(f64::from).collect();
        let s = stats(&v);
        assert_eq!(s.median, 10.5);
        assert_eq!(s.p95, 19.0);
        assert!(stats(&[]).median.is_nan());
    }
}
