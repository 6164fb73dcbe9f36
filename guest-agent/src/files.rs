//! Files: streamed reads, atomic writes, listings.
//!
//! Paths come from clients as strings and go through [`expand`] first, as
//! OSWorld's server does with `os.path.expandvars(os.path.expanduser(p))`:
//! a leading `~` or `~user` becomes a home folder and `$NAME` / `${NAME}`
//! become environment variables (unknown ones stay as written).
//!
//! - [`open_read`] opens a file for the route to stream, with its length.
//! - [`write_atomic`] writes a byte stream to a temp file in the target's
//!   folder, fsyncs it and renames it over the target, so a reader never
//!   sees half a file and a failed upload leaves the old file alone.
//! - [`list`] lists one folder (sorted by name); [`list_tree`] builds
//!   OSWorld's `/list_directory` tree, capped at [`TREE_MAX_NODES`] nodes.
//!
//! Every error is a [`FileError`] that names the path.

use bytes::Bytes;
use futures::{Stream, StreamExt};
use protocol::api::{FileEntry, FileKind, FileList, FileWritten};
use serde_json::{json, Map, Value};
use std::collections::HashSet;
use std::ffi::{CStr, CString};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::UNIX_EPOCH;
use tokio::io::AsyncWriteExt;

/// The most nodes (files and folders, the root included) [`list_tree`]
/// puts in a tree. Past it the walk stops and the root gets
/// `"truncated": true`, so a listing of `/` answers in bounded time.
pub const TREE_MAX_NODES: usize = 20_000;

/// What went wrong with a file operation; every variant names the path.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("not found: {} (no such file or directory)", path.display())]
    NotFound { path: PathBuf },
    #[error("{} is a directory, expected a file", path.display())]
    IsADirectory { path: PathBuf },
    #[error("{} is not a directory, expected one", path.display())]
    NotADirectory { path: PathBuf },
    #[error("permission denied: cannot {op} {}", path.display())]
    PermissionDenied { op: &'static str, path: PathBuf },
    #[error("the body for {} is larger than the limit of {limit} bytes", path.display())]
    TooLarge { path: PathBuf, limit: u64 },
    #[error("reading the body for {} failed: {message}", path.display())]
    Body { path: PathBuf, message: String },
    #[error("cannot {op} {}: {source}", path.display())]
    Io {
        op: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

impl FileError {
    /// Maps an I/O error to the variant for its kind.
    fn io(op: &'static str, path: &Path, source: io::Error) -> FileError {
        let path = path.to_path_buf();
        match source.kind() {
            io::ErrorKind::NotFound => FileError::NotFound { path },
            io::ErrorKind::PermissionDenied => FileError::PermissionDenied { op, path },
            io::ErrorKind::IsADirectory => FileError::IsADirectory { path },
            io::ErrorKind::NotADirectory => FileError::NotADirectory { path },
            _ => FileError::Io { op, path, source },
        }
    }
}

/// Expands a leading `~` / `~user` and then `$NAME` / `${NAME}`, like
/// Python's `os.path.expandvars(os.path.expanduser(path))`.
pub fn expand(path: &str) -> PathBuf {
    PathBuf::from(expand_vars(&expand_user(path)))
}

/// Python's `os.path.expanduser`: a leading `~` or `~user` becomes that
/// home folder; anything else (or an unknown user) is returned unchanged.
pub fn expand_user(path: &str) -> String {
    let Some(rest) = path.strip_prefix('~') else {
        return path.to_string();
    };
    let (user, tail) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let home = if user.is_empty() {
        match std::env::var("HOME") {
            Ok(h) => Some(h),
            Err(_) => home_of(None),
        }
    } else {
        home_of(Some(user))
    };
    let Some(home) = home else {
        return path.to_string();
    };
    let home = home.trim_end_matches('/');
    let out = format!("{home}{tail}");
    if out.is_empty() {
        "/".to_string()
    } else {
        out
    }
}

/// The home folder of `user` (or of the current user) from the password
/// database.
fn home_of(user: Option<&str>) -> Option<String> {
    let name = match user {
        Some(u) => Some(CString::new(u).ok()?),
        None => None,
    };
    let mut buf = vec![0u8; 16 * 1024];
    // SAFETY: `passwd` is plain old data, zeroed is a valid value.
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut result: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the call: `pwd` and `result` are
    // locals, `buf` is writable for its length, `name` is a C string.
    let rc = unsafe {
        match &name {
            Some(n) => libc::getpwnam_r(
                n.as_ptr(),
                &mut pwd,
                buf.as_mut_ptr().cast(),
                buf.len(),
                &mut result,
            ),
            None => libc::getpwuid_r(
                libc::getuid(),
                &mut pwd,
                buf.as_mut_ptr().cast(),
                buf.len(),
                &mut result,
            ),
        }
    };
    if rc != 0 || result.is_null() || pwd.pw_dir.is_null() {
        return None;
    }
    // SAFETY: on success `pw_dir` points to a NUL-terminated string in `buf`.
    let dir = unsafe { CStr::from_ptr(pwd.pw_dir) };
    Some(dir.to_string_lossy().into_owned())
}

/// Python's `posixpath.expandvars`: `$NAME` and `${NAME}` where NAME is
/// made of ASCII letters, digits and `_`; unknown variables stay as written.
fn expand_vars(path: &str) -> String {
    if !path.contains('$') {
        return path.to_string();
    }
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::with_capacity(path.len());
    let mut rest = path;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        // (name, length of the text after `$` that the reference takes)
        let reference = if let Some(inner) = after.strip_prefix('{') {
            inner.find('}').map(|end| (&inner[..end], end + 2))
        } else {
            let len = after.find(|c: char| !is_word(c)).unwrap_or(after.len());
            (len > 0).then(|| (&after[..len], len))
        };
        match reference {
            Some((name, len)) => {
                match std::env::var(name) {
                    Ok(value) => out.push_str(&value),
                    Err(_) => out.push_str(&rest[i..i + 1 + len]),
                }
                rest = &after[len..];
            }
            None => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Opens a file for streaming and returns it with its length in bytes.
pub async fn open_read(path: &str) -> Result<(tokio::fs::File, u64), FileError> {
    let path = expand(path);
    let file = tokio::fs::File::open(&path)
        .await
        .map_err(|e| FileError::io("open", &path, e))?;
    let meta = file
        .metadata()
        .await
        .map_err(|e| FileError::io("stat", &path, e))?;
    if meta.is_dir() {
        return Err(FileError::IsADirectory { path });
    }
    Ok((file, meta.len()))
}

/// Removes the temp file unless the write completed (also when the writing
/// future is dropped half-way).
struct TempGuard {
    path: Option<PathBuf>,
}

impl Drop for TempGuard {
    fn drop(&mut self) {
        if let Some(p) = self.path.take() {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Writes `body` to `path` atomically: parent folders are created, the
/// bytes go to a temp file in the same folder, which is fsynced and renamed
/// over the target. An existing target keeps its permissions; a symlink is
/// written through. With `limit`, a body longer than `limit` bytes fails
/// with [`FileError::TooLarge`]. On any error the temp file is removed and
/// the old target is untouched.
pub async fn write_atomic<S, E>(
    path: &str,
    body: S,
    limit: Option<u64>,
) -> Result<FileWritten, FileError>
where
    S: Stream<Item = Result<Bytes, E>>,
    E: std::fmt::Display,
{
    let mut target = expand(path);
    if path.ends_with('/') {
        return Err(FileError::IsADirectory { path: target });
    }
    if let Ok(meta) = tokio::fs::symlink_metadata(&target).await {
        if meta.file_type().is_symlink() {
            if let Ok(real) = tokio::fs::canonicalize(&target).await {
                target = real;
            }
        }
    }
    let existing = tokio::fs::metadata(&target).await.ok();
    if existing.as_ref().is_some_and(|m| m.is_dir()) {
        return Err(FileError::IsADirectory { path: target });
    }
    let Some(name) = target.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return Err(FileError::IsADirectory { path: target });
    };
    let parent = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    tokio::fs::create_dir_all(&parent)
        .await
        .map_err(|e| FileError::io("create the folder", &parent, e))?;

    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let tmp = parent.join(format!(
        ".{name}.{}.{}.deskenv-tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let mut file = tokio::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .await
        .map_err(|e| FileError::io("create a temp file in", &parent, e))?;
    let mut guard = TempGuard {
        path: Some(tmp.clone()),
    };

    let mut body = std::pin::pin!(body);
    let mut bytes: u64 = 0;
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(|e| FileError::Body {
            path: target.clone(),
            message: e.to_string(),
        })?;
        bytes += chunk.len() as u64;
        if let Some(limit) = limit {
            if bytes > limit {
                return Err(FileError::TooLarge {
                    path: target,
                    limit,
                });
            }
        }
        file.write_all(&chunk)
            .await
            .map_err(|e| FileError::io("write", &tmp, e))?;
    }
    file.flush()
        .await
        .map_err(|e| FileError::io("write", &tmp, e))?;
    if let Some(meta) = &existing {
        let _ = file.set_permissions(meta.permissions()).await;
    }
    file.sync_all()
        .await
        .map_err(|e| FileError::io("fsync", &tmp, e))?;
    drop(file);
    tokio::fs::rename(&tmp, &target)
        .await
        .map_err(|e| FileError::io("rename the temp file onto", &target, e))?;
    guard.path = None;
    // Make the rename itself durable; failing here loses nothing written.
    if let Ok(dir) = tokio::fs::File::open(&parent).await {
        let _ = dir.sync_all().await;
    }
    Ok(FileWritten {
        path: target.to_string_lossy().into_owned(),
        bytes,
    })
}

fn kind_of(ft: std::fs::FileType) -> FileKind {
    if ft.is_symlink() {
        FileKind::Symlink
    } else if ft.is_dir() {
        FileKind::Dir
    } else if ft.is_file() {
        FileKind::File
    } else {
        FileKind::Other
    }
}

fn modified_secs(meta: &std::fs::Metadata) -> Option<f64> {
    let t = meta.modified().ok()?;
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => Some(d.as_secs_f64()),
        Err(e) => Some(-e.duration().as_secs_f64()),
    }
}

/// Lists one folder, sorted by name. Symlinks are reported as such (with
/// the link's own size), not followed.
pub async fn list(path: &str) -> Result<FileList, FileError> {
    let path = expand(path);
    tokio::task::spawn_blocking(move || list_blocking(&path))
        .await
        .map_err(|e| FileError::Io {
            op: "list",
            path: PathBuf::new(),
            source: io::Error::other(e.to_string()),
        })?
}

fn list_blocking(path: &Path) -> Result<FileList, FileError> {
    let meta = std::fs::metadata(path).map_err(|e| FileError::io("list", path, e))?;
    if !meta.is_dir() {
        return Err(FileError::NotADirectory {
            path: path.to_path_buf(),
        });
    }
    let rd = std::fs::read_dir(path).map_err(|e| FileError::io("list", path, e))?;
    let mut entries = Vec::new();
    for entry in rd {
        let entry = entry.map_err(|e| FileError::io("list", path, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        // An entry deleted between readdir and stat is skipped.
        let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
            continue;
        };
        entries.push(FileEntry {
            name,
            kind: kind_of(meta.file_type()),
            size: meta.len(),
            modified: modified_secs(&meta),
        });
    }
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(FileList {
        path: path.to_string_lossy().into_owned(),
        entries,
    })
}

/// OSWorld's `/list_directory` tree, `{type: "directory", name, children}`
/// with `{type: "file", name}` leaves, children sorted by name. Symlinked
/// folders are followed as OSWorld's `os.path.isdir` does, but a link back
/// to an ancestor is not entered again. A folder that cannot be read
/// becomes `{error: "[Errno N] message: 'path'"}` as in OSWorld. At most
/// [`TREE_MAX_NODES`] nodes; past it the root carries `"truncated": true`.
pub async fn list_tree(path: &str) -> Result<Value, FileError> {
    list_tree_capped(path, TREE_MAX_NODES).await
}

/// [`list_tree`] with a node cap of the caller's choosing.
pub async fn list_tree_capped(path: &str, max_nodes: usize) -> Result<Value, FileError> {
    let text = expand(path).to_string_lossy().into_owned();
    tokio::task::spawn_blocking(move || {
        let root = Path::new(&text);
        let meta = std::fs::metadata(root).map_err(|e| FileError::io("list", root, e))?;
        if !meta.is_dir() {
            return Err(FileError::NotADirectory {
                path: root.to_path_buf(),
            });
        }
        // Python's os.path.basename: the text after the last '/'.
        let name = text.rsplit('/').next().unwrap_or("").to_string();
        let mut walk = TreeWalk {
            budget: max_nodes.saturating_sub(1),
            truncated: false,
            ancestors: HashSet::new(),
        };
        let mut tree = walk.dir(root, name, &meta);
        if walk.truncated {
            if let Value::Object(map) = &mut tree {
                map.insert("truncated".into(), Value::Bool(true));
            }
        }
        Ok(tree)
    })
    .await
    .map_err(|e| FileError::Io {
        op: "list",
        path: PathBuf::new(),
        source: io::Error::other(e.to_string()),
    })?
}

struct TreeWalk {
    /// Nodes that may still be added.
    budget: usize,
    truncated: bool,
    /// (device, inode) of the folders being walked, to stop link cycles.
    ancestors: HashSet<(u64, u64)>,
}

/// Python's `str(OSError)` for a failed listing.
fn python_os_error(e: &io::Error, path: &Path) -> String {
    match e.raw_os_error() {
        Some(code) => {
            let text = io::Error::from_raw_os_error(code).to_string();
            let text = text
                .strip_suffix(&format!(" (os error {code})"))
                .unwrap_or(&text)
                .to_string();
            format!("[Errno {code}] {text}: '{}'", path.display())
        }
        None => e.to_string(),
    }
}

impl TreeWalk {
    fn dir(&mut self, path: &Path, name: String, meta: &std::fs::Metadata) -> Value {
        let key = (meta.dev(), meta.ino());
        let mut children = Vec::new();
        if self.ancestors.insert(key) {
            let names = match std::fs::read_dir(path) {
                Ok(rd) => {
                    let mut names: Vec<String> = rd
                        .filter_map(|e| e.ok())
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .collect();
                    names.sort();
                    names
                }
                Err(e) => {
                    self.ancestors.remove(&key);
                    return json!({ "error": python_os_error(&e, path) });
                }
            };
            for child in names {
                if self.budget == 0 {
                    self.truncated = true;
                    break;
                }
                self.budget -= 1;
                let full = path.join(&child);
                match std::fs::metadata(&full) {
                    Ok(m) if m.is_dir() => children.push(self.dir(&full, child, &m)),
                    _ => children.push(json!({ "type": "file", "name": child })),
                }
            }
            self.ancestors.remove(&key);
        }
        let mut map = Map::new();
        map.insert("type".into(), Value::from("directory"));
        map.insert("name".into(), Value::from(name));
        map.insert("children".into(), Value::Array(children));
        Value::Object(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::stream;

    fn chunks(parts: &[&str]) -> impl Stream<Item = Result<Bytes, String>> {
        let v: Vec<Result<Bytes, String>> = parts
            .iter()
            .map(|p| Ok(Bytes::copy_from_slice(p.as_bytes())))
            .collect();
        stream::iter(v)
    }

    fn leftovers(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".deskenv-tmp"))
            .collect()
    }

    #[test]
    fn expands_home_and_vars() {
        let home = std::env::var("HOME").unwrap();
        let home = home.trim_end_matches('/');
        assert_eq!(expand("~/a/b"), PathBuf::from(format!("{home}/a/b")));
        assert_eq!(
            expand("~"),
            PathBuf::from(if home.is_empty() { "/" } else { home })
        );
        assert_eq!(expand("/x/~/y"), PathBuf::from("/x/~/y"));
        assert_eq!(expand("$HOME/z"), PathBuf::from(format!("{home}/z")));
        assert_eq!(expand("${HOME}z"), PathBuf::from(format!("{home}z")));
        assert_eq!(
            expand("/a/$DESKENV_SURELY_UNSET_VAR/${ALSO_UNSET_X}/$"),
            PathBuf::from("/a/$DESKENV_SURELY_UNSET_VAR/${ALSO_UNSET_X}/$")
        );
        assert_eq!(
            expand("~nosuchuser_deskenv/x"),
            PathBuf::from("~nosuchuser_deskenv/x")
        );
        assert_eq!(expand("${unterminated"), PathBuf::from("${unterminated"));
    }

    #[tokio::test]
    async fn atomic_write_creates_parents_and_replaces() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a/b/c.txt");
        let written = write_atomic(target.to_str().unwrap(), chunks(&["hello ", "world"]), None)
            .await
            .unwrap();
        assert_eq!(written.bytes, 11);
        assert_eq!(written.path, target.to_str().unwrap());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "hello world");

        // Replacing keeps the old file's mode.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o751)).unwrap();
        write_atomic(target.to_str().unwrap(), chunks(&["new"]), Some(10))
            .await
            .unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        let mode = std::fs::metadata(&target).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o751);
        assert!(leftovers(target.parent().unwrap()).is_empty());
    }

    #[tokio::test]
    async fn failed_write_leaves_old_file_and_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("f.bin");
        std::fs::write(&target, "old").unwrap();

        let err = write_atomic(
            target.to_str().unwrap(),
            chunks(&["12345", "67890"]),
            Some(8),
        )
        .await
        .unwrap_err();
        assert!(matches!(err, FileError::TooLarge { limit: 8, .. }), "{err}");
        assert!(err.to_string().contains("f.bin"), "{err}");

        let broken = stream::iter(vec![
            Ok(Bytes::from_static(b"part")),
            Err("connection reset".to_string()),
        ]);
        let err = write_atomic(target.to_str().unwrap(), broken, None)
            .await
            .unwrap_err();
        assert!(matches!(err, FileError::Body { .. }), "{err}");
        assert!(err.to_string().contains("connection reset"), "{err}");

        assert_eq!(std::fs::read_to_string(&target).unwrap(), "old");
        assert!(leftovers(dir.path()).is_empty());

        let err = write_atomic(dir.path().to_str().unwrap(), chunks(&["x"]), None)
            .await
            .unwrap_err();
        assert!(matches!(err, FileError::IsADirectory { .. }), "{err}");
        let slash = format!("{}/", dir.path().join("newdir").display());
        let err = write_atomic(&slash, chunks(&["x"]), None)
            .await
            .unwrap_err();
        assert!(matches!(err, FileError::IsADirectory { .. }), "{err}");
        assert!(!dir.path().join("newdir").exists());
    }

    #[tokio::test]
    async fn open_read_errors_are_distinct() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope.txt");
        let err = open_read(missing.to_str().unwrap()).await.unwrap_err();
        assert!(matches!(err, FileError::NotFound { .. }), "{err}");
        assert!(err.to_string().contains("nope.txt"), "{err}");

        let err = open_read(dir.path().to_str().unwrap()).await.unwrap_err();
        assert!(matches!(err, FileError::IsADirectory { .. }), "{err}");

        let file = dir.path().join("x.txt");
        std::fs::write(&file, "12345").unwrap();
        let (mut f, len) = open_read(file.to_str().unwrap()).await.unwrap();
        assert_eq!(len, 5);
        let mut s = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut f, &mut s)
            .await
            .unwrap();
        assert_eq!(s, "12345");

        // Root ignores permission bits, so only check when not root.
        if unsafe { libc::geteuid() } != 0 {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o000)).unwrap();
            let err = open_read(file.to_str().unwrap()).await.unwrap_err();
            assert!(matches!(err, FileError::PermissionDenied { .. }), "{err}");
        }
    }

    #[tokio::test]
    async fn lists_sorted() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("b.txt"), "bb").unwrap();
        std::fs::write(dir.path().join("a.txt"), "a").unwrap();
        std::fs::create_dir(dir.path().join("c")).unwrap();
        std::os::unix::fs::symlink("a.txt", dir.path().join("d")).unwrap();
        let l = list(dir.path().to_str().unwrap()).await.unwrap();
        let names: Vec<_> = l.entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["a.txt", "b.txt", "c", "d"]);
        assert_eq!(l.entries[1].size, 2);
        assert_eq!(l.entries[0].kind, FileKind::File);
        assert_eq!(l.entries[2].kind, FileKind::Dir);
        assert_eq!(l.entries[3].kind, FileKind::Symlink);
        assert!(l.entries[0].modified.unwrap() > 1.0e9);

        let err = list(dir.path().join("a.txt").to_str().unwrap())
            .await
            .unwrap_err();
        assert!(matches!(err, FileError::NotADirectory { .. }), "{err}");
        let err = list(dir.path().join("zz").to_str().unwrap())
            .await
            .unwrap_err();
        assert!(matches!(err, FileError::NotFound { .. }), "{err}");
    }

    #[tokio::test]
    async fn tree_has_osworld_shape_and_cap() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("top");
        std::fs::create_dir_all(root.join("sub/inner")).unwrap();
        std::fs::write(root.join("f1"), "").unwrap();
        std::fs::write(root.join("sub/f2"), "").unwrap();
        // A link back to an ancestor must not loop.
        std::os::unix::fs::symlink(&root, root.join("sub/loop")).unwrap();

        let tree = list_tree(root.to_str().unwrap()).await.unwrap();
        assert_eq!(
            tree,
            json!({"type": "directory", "name": "top", "children": [
                {"type": "file", "name": "f1"},
                {"type": "directory", "name": "sub", "children": [
                    {"type": "file", "name": "f2"},
                    {"type": "directory", "name": "inner", "children": []},
                    {"type": "directory", "name": "loop", "children": []},
                ]},
            ]})
        );

        for i in 0..50 {
            std::fs::write(root.join(format!("many{i:02}")), "").unwrap();
        }
        let tree = list_tree_capped(root.to_str().unwrap(), 10).await.unwrap();
        assert_eq!(tree["truncated"], json!(true));
        fn count(v: &Value) -> usize {
            1 + v["children"]
                .as_array()
                .map(|c| c.iter().map(count).sum())
                .unwrap_or(0)
        }
        assert_eq!(count(&tree), 10);

        let err = list_tree(root.join("f1").to_str().unwrap())
            .await
            .unwrap_err();
        assert!(matches!(err, FileError::NotADirectory { .. }), "{err}");
    }
}
