//! A real desktop comes up whole and leaves nothing behind.

use desktop::{Desktop, DesktopError};
use std::path::Path;

fn alive(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    !stat.is_empty() && !stat.contains(") Z ")
}

#[test]
#[ignore = "needs a desktop (Xvfb, AT-SPI): scripts/test.sh runs it with --include-ignored"]
fn a_desktop_comes_up_whole_and_drop_leaves_nothing() {
    let d = Desktop::start_free().unwrap();
    let pids = d.pids();
    let env: Vec<&str> = d.env().iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        env,
        [
            "DISPLAY",
            "XAUTHORITY",
            "DBUS_SESSION_BUS_ADDRESS",
            "GTK_A11Y",
            "NO_AT_BRIDGE",
            "QT_LINUX_ACCESSIBILITY_ALWAYS_ON",
            "LANG"
        ]
    );
    let out = d
        .command("xdpyinfo")
        .output()
        .expect("xdpyinfo on the desktop");
    assert!(String::from_utf8_lossy(&out.stdout).contains("1920x1080 pixels"));
    for pid in [pids.xvfb, pids.dbus, pids.atspi, pids.wm] {
        assert!(alive(pid), "{pids:?}");
    }
    // A second start on the same display is refused, naming what holds it.
    let err = Desktop::start_on(d.number()).unwrap_err();
    assert!(matches!(err, DesktopError::Taken { .. }), "{err}");

    let (dir, lock) = (d.dir().to_path_buf(), format!("/tmp/.X{}-lock", d.number()));
    drop(d);
    for pid in [pids.xvfb, pids.dbus, pids.atspi, pids.wm] {
        assert!(!alive(pid), "{pid} outlived the desktop");
    }
    assert!(!dir.exists() && !Path::new(&lock).exists());
}
