//! `deskenv bench observe`: what observing a VM costs, the guest agent's
//! path against the host's in one process on the same VM, interleaved so
//! that both see the same machine:
//!
//! - screenshot observe: the guest's capture and PNG encoding against a
//!   host screendump encoded on the host (the guest adds only its cursor
//!   image);
//! - settle after a keystroke into an xterm: the guest's frame differencing
//!   against the host's, at the episode's quiet window (300 ms) and at a
//!   shorter one;
//! - a11y observe on LibreOffice Calc with a sheet: a fresh walk (the old
//!   path: every object asked) against the guest's tree cache, on the first
//!   step and on following steps, each after a value typed into a cell;
//! - restore to a ready desktop (the provider's own restore path).
//!
//! Figures are wall-clock milliseconds seen by the controller.

use crate::bench::Stat;
use crate::provider::qemu::{display, Lifetime, QemuProvider, QemuVm};
use crate::provider::Machine;
use protocol::action::Action;
use protocol::api::{
    A11yFormat, A11yQuery, A11yTree, ActionsRequest, Command, ImageFormat, ObserveRequest, Settle,
};
use serde::Serialize;
use std::time::{Duration, Instant};

/// One row: the old path against the new one.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub name: String,
    pub old_ms: Option<Stat>,
    pub new_ms: Option<Stat>,
    /// Median old over median new.
    pub speedup: Option<f64>,
    pub note: String,
}

impl Row {
    fn new(name: &str, old: &[f64], new: &[f64], note: &str) -> Row {
        let (old_ms, new_ms) = (Stat::of(old), Stat::of(new));
        let speedup = match (&old_ms, &new_ms) {
            (Some(o), Some(n)) if n.median > 0.0 => Some(o.median / n.median),
            _ => None,
        };
        Row {
            name: name.into(),
            old_ms,
            new_ms,
            speedup,
            note: note.into(),
        }
    }
}

/// The report.
#[derive(Debug, Clone, Serialize)]
pub struct ObserveBenchReport {
    pub qemu: String,
    pub accel: String,
    pub samples: usize,
    pub rows: Vec<Row>,
}

const TYPE_SETTLE: Settle = Settle {
    quiet_ms: 300,
    max_ms: 3000,
    threshold_px: 2000,
    idle: false,
};

/// Runs the benchmark on VMs of `provider`, `samples` measurements a row.
/// Restores are timed on `provider` (its RAM file) against `zstd`, the
/// same settings with the whole state in zstd.
pub async fn run(
    provider: &QemuProvider,
    zstd: &QemuProvider,
    samples: usize,
    a11y_samples: usize,
    restores: usize,
    progress: impl Fn(&str),
) -> anyhow::Result<ObserveBenchReport> {
    let samples = samples.max(1);
    let vm = provider
        .start_vm("bench-observe", Lifetime::Guarded)
        .await?;
    let mut r = ObserveBenchReport {
        qemu: provider.qemu_version().to_string(),
        accel: vm.accel().as_str().to_string(),
        samples,
        rows: vec![],
    };
    let rows = measure(&vm, samples, &progress).await;
    let rows = match rows {
        Ok(mut rows) if a11y_samples > 0 => match calc_a11y(&vm, a11y_samples, &progress).await {
            Ok(more) => {
                rows.extend(more);
                Ok(rows)
            }
            Err(e) => Err(e),
        },
        r => r,
    };
    vm.stop().await;
    r.rows = rows?;

    let (mut old, mut new) = (Vec::new(), Vec::new());
    if restores > 0 {
        // Each path's first start may make its snapshot: not counted.
        for (p, what) in [(zstd, "zstd"), (provider, "ram file")] {
            let vm = p.start_vm("bench-observe-first", Lifetime::Guarded).await?;
            progress(&format!(
                "first start ({what}): {:.1}s",
                vm.started().seconds
            ));
            vm.stop().await;
        }
    }
    for i in 0..restores {
        for (p, xs) in [(zstd, &mut old), (provider, &mut new)] {
            let vm = p
                .start_vm(&format!("bench-observe-restore{i}"), Lifetime::Guarded)
                .await?;
            progress(&format!(
                "restore {i}: {:.3}s {:?}",
                vm.started().seconds,
                vm.started().phases
            ));
            xs.push(vm.started().seconds * 1000.0);
            vm.stop().await;
        }
    }
    if restores > 0 {
        r.rows.push(Row::new(
            "restore to a ready desktop (agent healthy, clock set)",
            &old,
            &new,
            "old: the whole state from zstd; new: the RAM file mapped copy-on-write, the devices from zstd",
        ));
    }
    Ok(r)
}

async fn measure(
    vm: &QemuVm,
    samples: usize,
    progress: &impl Fn(&str),
) -> anyhow::Result<Vec<Row>> {
    let g = vm.guest();
    // A focused xterm to type into, the pointer over it.
    let pid = g
        .launch(Command::Shell("exec xterm -geometry 80x24+200+200".into()))
        .await?
        .pid;
    let deadline = Instant::now() + Duration::from_secs(60);
    let window = loop {
        if let Some(w) = g.windows().await?.into_iter().find(|w| w.pid == Some(pid)) {
            break w.id;
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "the bench's xterm did not appear"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    g.exec(
        Command::Shell(format!(
            "xdotool windowactivate --sync {window}; xdotool mousemove 400 300"
        )),
        Duration::from_secs(30),
    )
    .await?;
    vm.host_settle(&Settle {
        quiet_ms: 1000,
        max_ms: 20_000,
        ..TYPE_SETTLE
    })
    .await?;

    let mut old = Vec::new();
    let mut new = Vec::new();
    let shot = |cursor_image: bool| ObserveRequest {
        screenshot: !cursor_image,
        image_format: ImageFormat::Png,
        quality: None,
        a11y: None,
        cursor_image,
    };
    for _ in 0..samples {
        let t = Instant::now();
        let o = g.observe(&shot(false)).await?;
        anyhow::ensure!(o.screenshot.is_some(), "the guest sent no screenshot");
        old.push(ms(t));
        let t = Instant::now();
        let (_, png) = vm.host_observe(&shot(true)).await?;
        anyhow::ensure!(!png.is_empty(), "the host made no PNG");
        new.push(ms(t));
    }
    progress(&format!(
        "screenshot observe: guest {old:.0?} host {new:.0?}"
    ));
    let mut rows = vec![Row::new(
        "screenshot observe",
        &old,
        &new,
        "old: the guest captures and encodes; new: a host screendump, the guest's cursor image drawn in",
    )];
    // The new path's parts, one at a time.
    let (mut dump, mut encode, mut cursor) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..samples {
        let t = Instant::now();
        g.observe(&shot(true)).await?;
        cursor.push(ms(t));
        let mut q = vm.qmp().await;
        let q = q
            .as_mut()
            .ok_or_else(|| anyhow::anyhow!("no QMP connection"))?;
        let t = Instant::now();
        let f = display::grab(q, vm.dump_path()).await?;
        dump.push(ms(t));
        let t = Instant::now();
        display::encode_png(f.width, f.height, &f.rgb)?;
        encode.push(ms(t));
    }
    for (name, xs) in [
        ("  its guest call (cursor image)", &cursor),
        ("  its screendump (QMP, read back)", &dump),
        ("  its PNG encoding on the host", &encode),
    ] {
        rows.push(Row::new(name, &[], xs, "part of the new path"));
    }

    let key = |settle: Option<Settle>| ActionsRequest {
        actions: vec![Action::Typing {
            text: "x".into(),
            interval: None,
        }],
        settle,
    };
    let (mut old, mut new, mut short) = (Vec::new(), Vec::new(), Vec::new());
    let short_settle = Settle {
        quiet_ms: 100,
        ..TYPE_SETTLE
    };
    for _ in 0..samples {
        let a = g.actions(&key(Some(TYPE_SETTLE))).await?;
        old.push(a.settle.map(|s| s.waited_ms).unwrap_or(0.0));
        g.actions(&key(None)).await?;
        new.push(vm.host_settle(&TYPE_SETTLE).await?.waited_ms);
        g.actions(&key(None)).await?;
        short.push(vm.host_settle(&short_settle).await?.waited_ms);
    }
    progress(&format!(
        "settle: guest {old:.0?} host {new:.0?} host 100 ms {short:.0?}"
    ));
    rows.push(Row::new(
        "settle after a keystroke (quiet 300 ms)",
        &old,
        &new,
        "old: the guest differences its captures; new: the host differences screendumps",
    ));
    rows.push(Row::new(
        "settle after a keystroke, host, quiet 100 ms",
        &old,
        &short,
        "old: the guest at 300 ms; new: the host at a 100 ms quiet window",
    ));
    Ok(rows)
}

/// The a11y rows: LibreOffice Calc opened on a 200 × 8 sheet, walked
/// fresh (every object asked, as before the cache) and through the cache.
async fn calc_a11y(
    vm: &QemuVm,
    samples: usize,
    progress: &impl Fn(&str),
) -> anyhow::Result<Vec<Row>> {
    let g = vm.guest();
    g.exec(
        Command::Shell(
            "python3 -c \"import csv; w = csv.writer(open('/tmp/bench-sheet.csv', 'w')); \
             w.writerow(['id'] + ['c%d' % j for j in range(7)]); \
             [w.writerow([i] + [i * j for j in range(7)]) for i in range(200)]\""
                .into(),
        ),
        Duration::from_secs(30),
    )
    .await?;
    g.launch(Command::Shell(
        "exec libreoffice --calc --norestore --infilter=CSV:44,34,76,1 /tmp/bench-sheet.csv".into(),
    ))
    .await?;
    let walk = |fresh: bool, timeout_ms: Option<u64>| ObserveRequest {
        screenshot: false,
        image_format: ImageFormat::Png,
        quality: None,
        a11y: Some(A11yQuery {
            format: A11yFormat::Linear,
            fresh,
            timeout_ms,
            ..A11yQuery::default()
        }),
        cursor_image: false,
    };
    // Until the sheet's cells are in a fresh walk given all the time it
    // needs (the timed walks below have the episodes' 10 s).
    let deadline = Instant::now() + Duration::from_secs(240);
    loop {
        let o = g.observe(&walk(true, Some(45_000))).await?;
        if o.a11y.as_ref().is_some_and(|t| cells(t) > 20) {
            break;
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "Calc's cells did not appear in the accessibility tree within 240 s; windows: {:?}",
            g.windows()
                .await
                .map(|ws| ws.into_iter().map(|w| w.title).collect::<Vec<_>>())
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    vm.host_settle(&Settle {
        quiet_ms: 1000,
        max_ms: 30_000,
        ..TYPE_SETTLE
    })
    .await?;
    let timed = |fresh: bool| async move {
        let t = Instant::now();
        let o = g.observe(&walk(fresh, None)).await?;
        let tree = o
            .a11y
            .ok_or_else(|| anyhow::anyhow!("the guest sent no tree"))?;
        anyhow::Ok((ms(t), tree))
    };
    let facts = |t: &A11yTree| {
        format!(
            "{} nodes, {} cells, {} from the cache, {}",
            t.nodes,
            cells(t),
            t.cached,
            if t.truncated { "truncated" } else { "whole" }
        )
    };
    // The first step: the cache has not walked this Calc yet.
    let (old_first, old_tree) = timed(true).await?;
    let (new_first, new_tree) = timed(false).await?;
    let first_note = format!(
        "old: a fresh walk ({}); new: the cache's first walk ({})",
        facts(&old_tree),
        facts(&new_tree)
    );
    let (mut old, mut new) = (Vec::new(), Vec::new());
    let mut note = String::new();
    for i in 0..samples {
        g.actions(&ActionsRequest {
            actions: vec![Action::Typing {
                text: format!("{}\n", 1000 + i),
                interval: None,
            }],
            settle: None,
        })
        .await?;
        vm.host_settle(&TYPE_SETTLE).await?;
        let (o, ot) = timed(true).await?;
        let (n, nt) = timed(false).await?;
        old.push(o);
        new.push(n);
        note = format!(
            "a value typed into a cell before each; old: fresh ({}); new: the cache ({})",
            facts(&ot),
            facts(&nt)
        );
    }
    progress(&format!("a11y on Calc: fresh {old:.0?} cached {new:.0?}"));
    Ok(vec![
        Row::new(
            "a11y observe, Calc with a sheet, first step",
            &[old_first],
            &[new_first],
            &first_note,
        ),
        Row::new(
            "a11y observe, Calc with a sheet, following steps",
            &old,
            &new,
            &note,
        ),
    ])
}

/// Table cells with text in a linear table.
fn cells(t: &A11yTree) -> usize {
    t.text.as_deref().map_or(0, |text| {
        text.lines()
            .filter(|l| {
                l.starts_with("table-cell\t") && l.split('\t').nth(2).is_some_and(|x| x != "\"\"")
            })
            .count()
    })
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

/// The report as a table.
pub fn table(r: &ObserveBenchReport) -> String {
    let f = |s: &Option<Stat>| match s {
        Some(s) => format!("{:>8.1} ({:.1}–{:.1})", s.median, s.min, s.max),
        None => format!("{:>8}", "-"),
    };
    let mut out = format!(
        "deskenv bench observe — {} — accel {} — {} samples a row (ms, median (min–max))\n",
        r.qemu, r.accel, r.samples
    );
    out.push_str(&format!(
        "  {:<46} {:<24} {:<24} {:>7}\n",
        "", "old path", "new path", "old/new"
    ));
    for row in &r.rows {
        out.push_str(&format!(
            "  {:<46} {:<24} {:<24} {:>7}\n      {}\n",
            row.name,
            f(&row.old_ms),
            f(&row.new_ms),
            row.speedup
                .map(|x| format!("{x:.1}x"))
                .unwrap_or_else(|| "-".into()),
            row.note
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_give_the_ratio_of_medians_and_the_table_shows_them() {
        let row = Row::new(
            "screenshot observe",
            &[120.0, 130.0, 127.0],
            &[20.0, 18.0, 25.0],
            "n",
        );
        assert_eq!(row.speedup, Some(127.0 / 20.0));
        let none = Row::new("restore", &[900.0], &[], "only one path");
        assert_eq!(none.speedup, None);
        let t = table(&ObserveBenchReport {
            qemu: "QEMU 7.2".into(),
            accel: "tcg".into(),
            samples: 3,
            rows: vec![row, none],
        });
        assert!(t.contains("screenshot observe"), "{t}");
        assert!(t.contains("6.3x"), "{t}");
        assert!(t.contains("only one path"), "{t}");
    }
}
