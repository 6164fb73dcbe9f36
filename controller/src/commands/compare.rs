//! `deskenv compare A B`.

use super::write_json;
use crate::cli::CompareArgs;
use crate::exit::Exit;
use anyhow::Context;
use controller::report::{compare, Run};

pub fn command(a: CompareArgs) -> anyhow::Result<Exit> {
    let run_a = Run::load(&a.a).with_context(|| format!("run A ({})", a.a.display()))?;
    let run_b = Run::load(&a.b).with_context(|| format!("run B ({})", a.b.display()))?;
    let boot = stats::Bootstrap {
        resamples: a.resamples,
        seed: a.seed,
        level: 0.95,
    };
    let comparisons = compare(&run_a, &run_b, &boot)?;
    for c in &comparisons {
        print!("{}", c.text());
    }
    if let Some(p) = &a.json {
        write_json(p, &comparisons)?;
    }
    Ok(Exit::Ok)
}
