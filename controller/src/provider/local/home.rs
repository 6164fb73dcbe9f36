//! What a machine's session sees of the guest image: its `/etc/xdg`
//! (first in `XDG_CONFIG_DIRS`) and a fresh home's contents.

use std::ffi::OsString;
use std::path::Path;

/// The guest image's system-wide configuration (its `/etc/xdg`), which
/// each machine gets as the first of `XDG_CONFIG_DIRS`.
pub(super) const GUEST_XDG: &[(&str, &str)] = &[
    (
        "mimeapps.list",
        include_str!("../../../../vm-images/debian-desktop/overlay/etc/xdg/mimeapps.list"),
    ),
    (
        "xfce4/xfconf/xfce-perchannel-xml/xfce4-panel.xml",
        include_str!(
            "../../../../vm-images/debian-desktop/overlay/etc/xdg/xfce4/xfconf/xfce-perchannel-xml/xfce4-panel.xml"
        ),
    ),
];

pub(super) fn xdg_config_dirs(dir: &Path) -> OsString {
    let mut v = dir.join("xdg").into_os_string();
    v.push(":/etc/xdg");
    v
}

pub(super) fn write_guest_xdg(dir: &Path) -> std::io::Result<()> {
    for (path, text) in GUEST_XDG {
        let p = dir.join("xdg").join(path);
        std::fs::create_dir_all(p.parent().expect("a file in a folder"))?;
        std::fs::write(p, text)?;
    }
    Ok(())
}

/// What a fresh home holds, as in the guest image: text files open in
/// mousepad, LibreOffice without its first-start dialogs.
pub(super) fn seed_home(home: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(home.join("Desktop"))?;
    std::fs::create_dir_all(home.join(".config"))?;
    std::fs::write(
        home.join(".config/mimeapps.list"),
        "[Default Applications]\ntext/plain=org.xfce.mousepad.desktop\n",
    )?;
    let lo = home.join(".config/libreoffice/4/user");
    std::fs::create_dir_all(&lo)?;
    std::fs::write(
        lo.join("registrymodifications.xcu"),
        include_str!(
            "../../../../vm-images/debian-desktop/overlay/etc/deskenv/libreoffice-registrymodifications.xcu"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fresh_home_opens_text_in_mousepad() {
        let tmp = tempfile::tempdir().unwrap();
        seed_home(tmp.path()).unwrap();
        assert!(tmp.path().join("Desktop").is_dir());
        let m = std::fs::read_to_string(tmp.path().join(".config/mimeapps.list")).unwrap();
        assert!(m.contains("text/plain=org.xfce.mousepad.desktop"));
    }
}
