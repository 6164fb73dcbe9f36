//! `deskenv report RUN… --out DIR`.

use crate::cli::ReportArgs;
use crate::exit::Exit;
use anyhow::Context;
use controller::report::{write_report, ReportOptions, Run};

pub fn command(a: ReportArgs) -> anyhow::Result<Exit> {
    if a.price_per_mtok.is_some_and(|p| !p.is_finite() || p < 0.0) {
        anyhow::bail!("--price-per-mtok: expected dollars per million tokens, 0 or more");
    }
    if a.resamples == 0 {
        anyhow::bail!("--resamples: expected 1 or more bootstrap resamples");
    }
    let mut runs = vec![];
    for (i, d) in a.runs.iter().enumerate() {
        runs.push(Run::load(d).with_context(|| format!("run R{} ({})", i + 1, d.display()))?);
    }
    let opts = ReportOptions {
        price_per_mtok: a.price_per_mtok,
        boot: stats::Bootstrap {
            resamples: a.resamples,
            seed: a.seed,
            level: 0.95,
        },
    };
    let report = write_report(&runs, &a.out, &opts)
        .with_context(|| format!("writing the report to {}", a.out.display()))?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        for (i, s) in report.summaries.iter().enumerate() {
            println!("R{}: {}", i + 1, s.text());
        }
        for (j, c) in &report.comparisons {
            match c {
                Ok(cs) => cs.iter().for_each(|c| print!("{}", c.text())),
                Err(e) => println!("R1 vs R{}: not compared: {e}", j + 1),
            }
        }
    }
    eprintln!(
        "report: {} ({} episode pages, {} screenshots, {} failures analysed)",
        report.index.display(),
        report.pages,
        report.screenshots,
        report.failures.len()
    );
    Ok(Exit::Ok)
}
