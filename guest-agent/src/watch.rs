//! A record of which files were opened, read or written under some folders
//! (inotify), so a checker can tell whether an agent looked at a file.
//!
//! [`Watcher::start`] watches the folders (and, when recursive, their
//! subfolders, up to [`MAX_FOLDERS`]; symlinked folders are not entered)
//! for `IN_OPEN | IN_ACCESS | IN_MODIFY | IN_CLOSE_WRITE | IN_CREATE |
//! IN_MOVED_TO`; folders created or moved in later are watched too. A
//! background thread reads the events. Starting again replaces the previous
//! watch and its record. [`Watcher::report`] lists, per file, how many open,
//! read (`IN_ACCESS`) and write (`IN_MODIFY`) events arrived and when the
//! first did, sorted by that time; `overflowed` says the kernel queue
//! overflowed (`IN_Q_OVERFLOW`) and accesses may be missing.
//!
//! Counts are of events, not calls: the kernel merges identical events that
//! follow each other unread, so a file read in many chunks may count as
//! fewer reads. Events on the folders themselves (listing a folder) are not
//! recorded. At most [`MAX_FILES`] files are recorded.

use inotify::{EventMask, Inotify, WatchMask};
use protocol::api::{FileAccess, WatchReport, WatchRequest, WatchStarted};
use std::collections::HashMap;
use std::io;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The most folders one watch covers; subfolders past it are not watched.
pub const MAX_FOLDERS: usize = 8192;
/// The most files one record holds; later files are not recorded.
pub const MAX_FILES: usize = 100_000;
/// How often the reader thread checks whether it should stop.
const POLL_MS: i32 = 100;

/// What went wrong starting a watch.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    #[error("no folders to watch: expected at least one path")]
    NoPaths,
    #[error("cannot watch {}: no such folder", path.display())]
    NotFound { path: PathBuf },
    #[error("cannot watch {}: not a folder", path.display())]
    NotADirectory { path: PathBuf },
    #[error("cannot set up inotify: {source}")]
    Init {
        #[source]
        source: io::Error,
    },
    #[error("cannot watch {}: {source}", path.display())]
    Add {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot start the thread that reads file events: {source}")]
    Thread {
        #[source]
        source: io::Error,
    },
}

fn mask() -> WatchMask {
    WatchMask::OPEN
        | WatchMask::ACCESS
        | WatchMask::MODIFY
        | WatchMask::CLOSE_WRITE
        | WatchMask::CREATE
        | WatchMask::MOVED_TO
        | WatchMask::EXCL_UNLINK
}

#[derive(Debug, Clone, Default)]
struct Counts {
    opened: u32,
    read: u32,
    written: u32,
    first_ms: f64,
}

/// The record shared by the reader thread and [`Watcher::report`].
#[derive(Debug)]
struct Record {
    started: Instant,
    active: bool,
    roots: Vec<String>,
    files: HashMap<PathBuf, Counts>,
    overflowed: bool,
}

impl Record {
    fn report(&self) -> WatchReport {
        let mut files: Vec<FileAccess> = self
            .files
            .iter()
            .map(|(p, c)| FileAccess {
                path: p.to_string_lossy().into_owned(),
                opened: c.opened,
                read: c.read,
                written: c.written,
                first_ms: c.first_ms,
            })
            .collect();
        files.sort_by(|a, b| {
            a.first_ms
                .total_cmp(&b.first_ms)
                .then_with(|| a.path.cmp(&b.path))
        });
        WatchReport {
            active: self.active,
            folders: self.roots.clone(),
            files,
            overflowed: self.overflowed,
        }
    }
}

/// The inotify instance and its folder map, owned by the reader thread.
struct Tree {
    inotify: Inotify,
    folders: HashMap<i32, PathBuf>,
    recursive: bool,
}

impl Tree {
    /// Watches `dir` and, when recursive, the folders under it (not through
    /// symlinks), up to [`MAX_FOLDERS`] in all. Errors on subfolders (gone,
    /// no permission) are skipped; an error on `dir` is returned.
    fn add_tree(&mut self, dir: &Path) -> io::Result<()> {
        let mut queue = vec![dir.to_path_buf()];
        let mut first = true;
        while let Some(d) = queue.pop() {
            if self.folders.len() >= MAX_FOLDERS {
                tracing::warn!(
                    "watch: more than {MAX_FOLDERS} folders; {} and others not watched",
                    d.display()
                );
                break;
            }
            match self.inotify.watches().add(&d, mask()) {
                Ok(wd) => {
                    self.folders.insert(wd.get_watch_descriptor_id(), d.clone());
                }
                Err(e) if first => return Err(e),
                Err(e) => {
                    tracing::debug!("watch: skipping {}: {e}", d.display());
                    continue;
                }
            }
            first = false;
            if !self.recursive {
                continue;
            }
            if let Ok(rd) = std::fs::read_dir(&d) {
                for entry in rd.flatten() {
                    if entry.file_type().map(|t| t.is_dir()).unwrap_or(false) {
                        queue.push(entry.path());
                    }
                }
            }
        }
        Ok(())
    }
}

struct Running {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Running {
    fn end(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Records file accesses under folders; share it with an `Arc`.
pub struct Watcher {
    running: Mutex<Option<Running>>,
    record: Arc<Mutex<Record>>,
}

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watcher").finish_non_exhaustive()
    }
}

impl Default for Watcher {
    fn default() -> Self {
        Watcher::new()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Watcher {
    pub fn new() -> Watcher {
        Watcher {
            running: Mutex::new(None),
            record: Arc::new(Mutex::new(Record {
                started: Instant::now(),
                active: false,
                roots: Vec::new(),
                files: HashMap::new(),
                overflowed: false,
            })),
        }
    }

    /// Starts watching `req.paths` (a leading `~` and `$VARS` expanded),
    /// replacing any previous watch and its record.
    pub fn start(&self, req: &WatchRequest) -> Result<WatchStarted, WatchError> {
        if req.paths.is_empty() {
            return Err(WatchError::NoPaths);
        }
        let mut roots = Vec::new();
        for p in &req.paths {
            let path = crate::files::expand(p);
            match std::fs::metadata(&path) {
                Ok(m) if m.is_dir() => roots.push(path),
                Ok(_) => return Err(WatchError::NotADirectory { path }),
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    return Err(WatchError::NotFound { path })
                }
                Err(source) => return Err(WatchError::Add { path, source }),
            }
        }

        let mut running = lock(&self.running);
        if let Some(mut old) = running.take() {
            old.end();
        }
        lock(&self.record).active = false;

        let inotify = Inotify::init().map_err(|source| WatchError::Init { source })?;
        let mut tree = Tree {
            inotify,
            folders: HashMap::new(),
            recursive: req.recursive,
        };
        for root in &roots {
            tree.add_tree(root).map_err(|source| WatchError::Add {
                path: root.clone(),
                source,
            })?;
        }
        let folders = tree.folders.len();
        {
            let mut r = lock(&self.record);
            r.started = Instant::now();
            r.active = true;
            r.roots = roots
                .iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect();
            r.files.clear();
            r.overflowed = false;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let stop = stop.clone();
            let record = self.record.clone();
            std::thread::Builder::new()
                .name("deskenv-watch".into())
                .spawn(move || read_events(tree, record, stop))
                .map_err(|source| WatchError::Thread { source })?
        };
        *running = Some(Running {
            stop,
            thread: Some(thread),
        });
        Ok(WatchStarted { folders })
    }

    /// What was accessed since the watch started.
    pub fn report(&self) -> WatchReport {
        lock(&self.record).report()
    }

    /// Stops watching and returns the final record (which [`report`] keeps
    /// returning, with `active: false`, until the next start).
    ///
    /// [`report`]: Watcher::report
    pub fn stop(&self) -> WatchReport {
        if let Some(mut old) = lock(&self.running).take() {
            old.end();
        }
        let mut r = lock(&self.record);
        r.active = false;
        r.report()
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        if let Some(mut old) = lock(&self.running).take() {
            old.end();
        }
    }
}

/// The reader thread: waits for events (checking `stop` every
/// [`POLL_MS`]) and folds them into the record.
fn read_events(mut tree: Tree, record: Arc<Mutex<Record>>, stop: Arc<AtomicBool>) {
    let mut buf = vec![0u8; 64 * 1024];
    let fd = tree.inotify.as_raw_fd();
    while !stop.load(Ordering::Relaxed) {
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: `pfd` is a valid pollfd for the duration of the call.
        let n = unsafe { libc::poll(&mut pfd, 1, POLL_MS) };
        if n <= 0 {
            continue;
        }
        // Collect first: handling may add watches, which needs the
        // inotify instance the events borrow.
        let mut batch: Vec<(i32, EventMask, Option<std::ffi::OsString>)> = Vec::new();
        match tree.inotify.read_events(&mut buf) {
            Ok(events) => {
                for e in events {
                    batch.push((
                        e.wd.get_watch_descriptor_id(),
                        e.mask,
                        e.name.map(|n| n.to_os_string()),
                    ));
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(e) => {
                tracing::warn!("watch: reading inotify events failed: {e}");
                std::thread::sleep(Duration::from_millis(POLL_MS as u64));
                continue;
            }
        }
        let mut new_dirs = Vec::new();
        {
            let mut r = lock(&record);
            let now_ms = r.started.elapsed().as_secs_f64() * 1000.0;
            for (wd, mask, name) in batch {
                if mask.contains(EventMask::Q_OVERFLOW) {
                    r.overflowed = true;
                    continue;
                }
                if mask.contains(EventMask::IGNORED) {
                    tree.folders.remove(&wd);
                    continue;
                }
                let (Some(dir), Some(name)) = (tree.folders.get(&wd), name) else {
                    continue;
                };
                let path = dir.join(name);
                if mask.contains(EventMask::ISDIR) {
                    if tree.recursive
                        && (mask.contains(EventMask::CREATE) || mask.contains(EventMask::MOVED_TO))
                    {
                        new_dirs.push(path);
                    }
                    continue;
                }
                let opened = mask.contains(EventMask::OPEN);
                let read = mask.contains(EventMask::ACCESS);
                let written = mask.contains(EventMask::MODIFY);
                if !(opened || read || written) {
                    continue;
                }
                if !r.files.contains_key(&path) && r.files.len() >= MAX_FILES {
                    continue;
                }
                let c = r.files.entry(path).or_insert_with(|| Counts {
                    first_ms: now_ms,
                    ..Counts::default()
                });
                c.opened += u32::from(opened);
                c.read += u32::from(read);
                c.written += u32::from(written);
            }
        }
        for d in new_dirs {
            if let Err(e) = tree.add_tree(&d) {
                tracing::debug!("watch: cannot watch new folder {}: {e}", d.display());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn wait_for<F: Fn(&WatchReport) -> bool>(w: &Watcher, f: F) -> WatchReport {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let r = w.report();
            if f(&r) {
                return r;
            }
            assert!(
                Instant::now() < deadline,
                "condition not met; last report: {r:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn find<'a>(r: &'a WatchReport, path: &Path) -> Option<&'a FileAccess> {
        r.files.iter().find(|f| Path::new(&f.path) == path)
    }

    #[test]
    fn records_open_read_and_write() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.txt");
        let b = dir.path().join("b.txt");
        std::fs::write(&a, "hello").unwrap();
        std::fs::write(&b, "world").unwrap();
        let w = Watcher::new();
        let started = w
            .start(&WatchRequest {
                paths: vec![dir.path().to_string_lossy().into_owned()],
                recursive: true,
            })
            .unwrap();
        assert_eq!(started.folders, 1);
        assert!(w.report().active);
        assert!(w.report().files.is_empty());

        let mut s = String::new();
        std::fs::File::open(&a)
            .unwrap()
            .read_to_string(&mut s)
            .unwrap();
        std::thread::sleep(Duration::from_millis(30));
        std::fs::write(&b, "changed").unwrap();

        let r = wait_for(&w, |r| {
            find(r, &a).is_some_and(|f| f.opened >= 1 && f.read >= 1)
                && find(r, &b).is_some_and(|f| f.written >= 1)
        });
        assert!(!r.overflowed);
        assert_eq!(r.folders, vec![dir.path().to_string_lossy().into_owned()]);
        // Sorted by first access: a was read before b was written.
        assert_eq!(Path::new(&r.files[0].path), a);
        assert!(r.files[0].first_ms <= r.files[1].first_ms);
        assert_eq!(find(&r, &a).unwrap().written, 0);

        let end = w.stop();
        assert!(!end.active);
        assert_eq!(end.files.len(), 2);
    }

    #[test]
    fn follows_new_subfolders_and_restarts_clean() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("x/y")).unwrap();
        let w = Watcher::new();
        let started = w
            .start(&WatchRequest {
                paths: vec![dir.path().to_string_lossy().into_owned()],
                recursive: true,
            })
            .unwrap();
        assert_eq!(started.folders, 3);

        let deep = dir.path().join("x/y/deep.txt");
        std::fs::write(&deep, "d").unwrap();
        // A folder made after the start is watched too; give the reader a
        // moment to add it before writing into it.
        let fresh = dir.path().join("new");
        std::fs::create_dir(&fresh).unwrap();
        let file = fresh.join("f.txt");
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            std::fs::write(&file, "f").unwrap();
            std::thread::sleep(Duration::from_millis(50));
            if find(&w.report(), &file).is_some() {
                break;
            }
            assert!(Instant::now() < deadline, "new subfolder not watched");
        }
        let r = wait_for(&w, |r| find(r, &deep).is_some());
        assert!(!r.overflowed);

        // Restart on a different folder: the old record is gone.
        let other = tempfile::tempdir().unwrap();
        let started = w
            .start(&WatchRequest {
                paths: vec![other.path().to_string_lossy().into_owned()],
                recursive: false,
            })
            .unwrap();
        assert_eq!(started.folders, 1);
        assert!(w.report().files.is_empty());
        std::fs::read(&deep).unwrap();
        std::fs::write(other.path().join("o"), "o").unwrap();
        let r = wait_for(&w, |r| !r.files.is_empty());
        assert!(find(&r, &deep).is_none());
    }

    #[test]
    fn missing_folder_is_named() {
        let w = Watcher::new();
        let err = w
            .start(&WatchRequest {
                paths: vec!["/nonexistent/deskenv-watch".into()],
                recursive: true,
            })
            .unwrap_err();
        assert!(matches!(err, WatchError::NotFound { .. }), "{err}");
        assert!(
            err.to_string().contains("/nonexistent/deskenv-watch"),
            "{err}"
        );

        let f = tempfile::NamedTempFile::new().unwrap();
        let err = w
            .start(&WatchRequest {
                paths: vec![f.path().to_string_lossy().into_owned()],
                recursive: true,
            })
            .unwrap_err();
        assert!(matches!(err, WatchError::NotADirectory { .. }), "{err}");
        assert!(!w.report().active);
    }
}
