//! The tree cache on a real desktop (Xvfb, the AT-SPI bus, mousepad and the
//! GTK 3 widget factory): after each edit (typing, a menu opened and
//! closed, another window activated, a window moved, an application
//! closed, then the same in LibreOffice Calc with a value typed into a
//! cell) the tree from the cache renders the same OSWorld XML, byte for
//! byte, as a fresh walk, and Calc's visible cells are in the linear table
//! with their values; the cache serves the objects nothing touched; a
//! stopped application is still cut off and named.
//!
//! Ignored unless run with `--include-ignored` (scripts/test.sh does).

mod common;

use common::Desktop;
use guest_agent::a11y::{render, A11y, A11yOptions, Walk};
use protocol::a11y::xml::to_osworld_xml;
use protocol::api::A11yFormat;
use std::time::{Duration, Instant};

const FACTORY: &str = "gtk3-widget-factory";

#[test]
#[ignore = "needs a desktop (Xvfb, AT-SPI): scripts/test.sh runs it with --include-ignored"]
fn the_cached_tree_equals_a_fresh_walk_after_edits() {
    let desktop = Desktop::start();
    let session = common::session_bus(&desktop);
    let factory_pid = desktop.spawn(&[FACTORY]);
    let factory = desktop.wait_window(FACTORY, Duration::from_secs(30));
    let mousepad_pid = desktop.spawn(&["mousepad", "--disable-server"]);
    let mousepad = desktop.wait_window("Mousepad", Duration::from_secs(30));

    let rt = common::runtime();
    rt.block_on(async {
        let a11y = A11y::connect_session(&session, Duration::from_secs(10))
            .await
            .expect("connect to AT-SPI");
        assert!(a11y.cache().is_none(), "no walk yet, yet events registered");
        // Both applications with their windows in the tree.
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let w = a11y.walk(&fresh()).await.unwrap();
            let ready = w.root.children.len() >= 2
                && w.root.children.iter().all(|a| !a.children.is_empty());
            if ready {
                break;
            }
            assert!(Instant::now() < deadline, "apps not ready: {:?}", w.root);
            tokio::time::sleep(Duration::from_millis(200)).await;
        }

        assert!(a11y.cache().is_none(), "fresh walks registered events");
        // The first walk sets the cache up and fills it; the second takes
        // from it.
        let first = a11y
            .walk(&A11yOptions {
                timeout: Duration::from_secs(60),
                ..A11yOptions::default()
            })
            .await
            .unwrap();
        assert!(a11y.cache().is_some(), "the registry took no events");
        assert_eq!(first.cached, 0);
        same(&a11y, "after the first walk").await;
        let second = same(&a11y, "nothing changed").await;
        assert!(
            second.cached * 10 >= second.nodes * 8,
            "nothing changed, yet only {} of {} nodes came from the cache",
            second.cached,
            second.nodes
        );

        let key = |keys: &str| desktop.run(&["xdotool", "key", "--delay", "60", keys]);
        desktop.run(&["xdotool", "windowactivate", "--sync", &mousepad.to_string()]);
        same(&a11y, "mousepad activated").await;
        desktop.run(&[
            "xdotool",
            "type",
            "--delay",
            "40",
            "cached trees, fresh walks",
        ]);
        let typed = same(&a11y, "typing in mousepad").await;
        assert!(
            to_osworld_xml(&typed.root).contains("cached trees, fresh walks"),
            "the typed text is not in the tree"
        );
        assert!(typed.cached > 0, "typing: nothing came from the cache");
        key("alt+f");
        same(&a11y, "mousepad's File menu open").await;
        key("Escape");
        same(&a11y, "the menu closed").await;
        key("ctrl+a");
        key("BackSpace");
        same(&a11y, "the text deleted").await;

        desktop.run(&["xdotool", "windowactivate", "--sync", &factory.to_string()]);
        same(&a11y, "the widget factory activated").await;
        key("Tab");
        key("Tab");
        same(&a11y, "focus moved in the widget factory").await;
        desktop.run(&[
            "xdotool",
            "windowmove",
            "--sync",
            &factory.to_string(),
            "200",
            "150",
        ]);
        same(&a11y, "the widget factory moved").await;

        // A stopped application: cut off and named, never served from the
        // cache.
        signal(factory_pid, "STOP");
        let stopped = a11y
            .walk(&A11yOptions {
                timeout: Duration::from_secs(20),
                ..A11yOptions::default()
            })
            .await;
        signal(factory_pid, "CONT");
        let stopped = stopped.unwrap();
        let reason = stopped.truncated.clone().expect("a stopped app truncates");
        assert!(
            reason.contains(&factory_pid.to_string()),
            "the reason does not name the stopped application: {reason}"
        );
        let factory_nodes = stopped
            .root
            .children
            .iter()
            .find(|a| a.name == FACTORY)
            .map_or(0, |a| a.count());
        assert!(
            factory_nodes <= 1,
            "the stopped application's tree came from the cache ({factory_nodes} nodes)"
        );
        same(&a11y, "the widget factory resumed").await;

        // An application closed: the list of applications changed.
        signal(mousepad_pid, "KILL");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let w = a11y.walk(&fresh()).await.unwrap();
            if w.applications == 1 {
                break;
            }
            assert!(Instant::now() < deadline, "mousepad stays on the bus");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        same(&a11y, "mousepad closed").await;

        // LibreOffice Calc (its own toolkit bridge): its visible cells in
        // the table with their values, a typed value among them.
        let (_dir, calc_pid) = common::start_calc(&desktop);
        let deadline = Instant::now() + Duration::from_secs(90);
        loop {
            let w = a11y.walk(&fresh()).await.unwrap();
            if w.root
                .iter()
                .any(|n| n.role == "table cell" && n.name == "A4")
            {
                break;
            }
            assert!(Instant::now() < deadline, "Calc's sheet did not show up");
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        let calc = desktop.wait_window("LibreOffice Calc", Duration::from_secs(30));
        desktop.run(&["xdotool", "windowactivate", "--sync", &calc.to_string()]);
        same(&a11y, "Calc open").await;
        same(&a11y, "Calc, nothing changed").await;
        key("ctrl+Home");
        key("Down");
        key("Down");
        key("Down");
        key("Down");
        desktop.run(&["xdotool", "type", "--delay", "40", "4242"]);
        key("Return");
        let typed = same(&a11y, "a value typed into Calc's A5").await;
        assert!(typed.cached > 0, "Calc: nothing came from the cache");
        let table = render(&typed, A11yFormat::Linear).text.unwrap();
        for value in ["apple", "pear", "4242"] {
            let lines: Vec<&str> = table.lines().filter(|l| l.contains(value)).collect();
            assert!(
                lines.iter().any(|l| l.starts_with("table-cell\t")),
                "{value} is not in the linear table's cells; its lines: {lines:#?}"
            );
        }
        key("alt+o");
        same(&a11y, "Calc's Format menu open").await;
        key("Escape");
        same(&a11y, "Calc's menu closed").await;
        signal(calc_pid, "TERM");
        let events = a11y.cache().unwrap().events();
        eprintln!("a11y cache test: {events} events read");
        assert!(events > 0, "no AT-SPI event reached the cache");
    });
}

fn fresh() -> A11yOptions {
    A11yOptions {
        cache: false,
        timeout: Duration::from_secs(60),
        ..A11yOptions::default()
    }
}

/// Waits for the events to stop, then walks from the cache and afresh and
/// checks that both give the same XML; returns the cached walk.
///
/// An application may still change between the two walks (Calc lays out
/// its sheet for a while after it opens): a difference is checked again,
/// up to three times. A cache entry that missed a change stays wrong (no
/// event comes to fix it), so it fails all three.
async fn same(a11y: &A11y, what: &str) -> Walk {
    let before = a11y.cache().unwrap().events();
    let mut attempt = 0;
    let (cached, a, b, fresh) = loop {
        attempt += 1;
        quiet(a11y).await;
        let cached = a11y
            .walk(&A11yOptions {
                timeout: Duration::from_secs(60),
                ..A11yOptions::default()
            })
            .await
            .unwrap();
        let fresh = a11y.walk(&fresh()).await.unwrap();
        assert_eq!(cached.truncated, None, "{what}");
        assert_eq!(fresh.truncated, None, "{what}");
        let (a, b) = (to_osworld_xml(&cached.root), to_osworld_xml(&fresh.root));
        if a == b || attempt == 3 {
            break (cached, a, b, fresh);
        }
        eprintln!("a11y cache: {what}: attempt {attempt} differs, checking again");
    };
    let events = a11y.cache().unwrap().events() - before;
    if a != b {
        let (la, lb): (Vec<&str>, Vec<&str>) = (a.split('>').collect(), b.split('>').collect());
        let i = la.iter().zip(&lb).position(|(x, y)| x != y).unwrap_or(0);
        panic!(
            "{what}: the cached tree differs from a fresh walk at element {i}:\ncached: {}\nfresh:  {}",
            la.get(i).unwrap_or(&""),
            lb.get(i).unwrap_or(&"")
        );
    }
    eprintln!(
        "a11y cache: {what}: {events} events, {} nodes, {} from the cache, {:?} (fresh {:?})",
        cached.nodes, cached.cached, cached.elapsed, fresh.elapsed
    );
    cached
}

/// Until no event came for 500 ms, at most 3 s (the widget factory's
/// spinner and progress bar send events all the time).
async fn quiet(a11y: &A11y) {
    let cache = a11y.cache().unwrap();
    let deadline = Instant::now() + Duration::from_secs(3);
    let mut last = cache.events();
    let mut since = Instant::now();
    while Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let now = cache.events();
        if now != last {
            last = now;
            since = Instant::now();
        } else if since.elapsed() >= Duration::from_millis(500) {
            return;
        }
    }
}

fn signal(pid: u32, sig: &str) {
    let ok = std::process::Command::new("kill")
        .args([&format!("-{sig}"), &pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill -{sig} {pid}");
}
