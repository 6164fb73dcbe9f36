//! Reading finished runs and comparing them: the episode results under a
//! run's folder ([`read_results`]), the run's label from its `run.json`,
//! and [`compare`]: two runs on the same tasks, paired, with intervals and
//! tests from the `stats` crate, said in words.

pub mod compare;
pub mod failures;
pub mod html;
pub mod summary;
pub mod svg;
pub mod write;

pub use compare::{compare, Comparison};
pub use write::{write_report, Report, ReportError, ReportOptions};

use crate::episode::EpisodeResult;
use protocol::result::RunManifest;
use std::path::{Path, PathBuf};

/// The episode results under `dirs` (every `result.json`, at any depth),
/// for `deskenv bench episodes --from`. With `oracle_only`, results of
/// `tasks check`'s other variants (ids ending `.noop`, `.gaming-…`,
/// `.stale`) are left out.
pub fn read_results(
    dirs: &[PathBuf],
    oracle_only: bool,
) -> Result<Vec<EpisodeResult>, ReadResultsError> {
    Ok(read_episodes(dirs, oracle_only)?
        .into_iter()
        .map(|(_, r)| r)
        .collect())
}

/// As [`read_results`], with each result's episode folder.
pub fn read_episodes(
    dirs: &[PathBuf],
    oracle_only: bool,
) -> Result<Vec<(PathBuf, EpisodeResult)>, ReadResultsError> {
    let mut files = vec![];
    for d in dirs {
        if !d.is_dir() {
            return Err(ReadResultsError::NotADir(d.clone()));
        }
        collect_result_files(d, &mut files)?;
    }
    files.sort();
    let mut out = vec![];
    for f in files {
        let text = std::fs::read_to_string(&f).map_err(|e| ReadResultsError::Io(f.clone(), e))?;
        let r: EpisodeResult =
            serde_json::from_str(&text).map_err(|e| ReadResultsError::Parse(f.clone(), e))?;
        if oracle_only && r.task_id.contains('.') {
            continue;
        }
        let dir = f.parent().map(Path::to_path_buf).unwrap_or_default();
        out.push((dir, r));
    }
    if out.is_empty() {
        return Err(ReadResultsError::Empty(dirs.to_vec()));
    }
    Ok(out)
}

fn collect_result_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), ReadResultsError> {
    let entries = std::fs::read_dir(dir).map_err(|e| ReadResultsError::Io(dir.to_path_buf(), e))?;
    for e in entries {
        let e = e.map_err(|e| ReadResultsError::Io(dir.to_path_buf(), e))?;
        let path = e.path();
        if path.is_dir() {
            // An unscored attempt's files are kept under attempts/<n>/;
            // the episode's own result.json lists them.
            if path.file_name().is_some_and(|n| n == "attempts") {
                continue;
            }
            collect_result_files(&path, out)?;
        } else if path.file_name().is_some_and(|n| n == "result.json") {
            out.push(path);
        }
    }
    Ok(())
}

/// Why [`read_results`] failed.
#[derive(Debug, thiserror::Error)]
pub enum ReadResultsError {
    #[error("{0}: not a folder (expected a run's output folder)")]
    NotADir(PathBuf),
    #[error("{0}: {1}")]
    Io(PathBuf, std::io::Error),
    #[error("{0}: not an episode result: {1}")]
    Parse(PathBuf, serde_json::Error),
    #[error("no result.json under {0:?}")]
    Empty(Vec<PathBuf>),
}

/// A finished run: its folder, a label for tables, and its results.
#[derive(Debug, Clone)]
pub struct Run {
    pub dir: PathBuf,
    /// "agent (model), observation" from run.json, else the folder's name.
    pub label: String,
    /// Its `run.json` (a `tasks check` folder has none).
    pub manifest: Option<RunManifest>,
    pub results: Vec<EpisodeResult>,
    /// Each result's episode folder (its trajectory and screenshots), in
    /// the same order.
    pub episode_dirs: Vec<PathBuf>,
}

impl Run {
    /// Every result.json under `dir`, and the label from `dir/run.json`
    /// where there is one (a `tasks check` folder has none).
    pub fn load(dir: &Path) -> Result<Run, ReadResultsError> {
        let (episode_dirs, results) = read_episodes(&[dir.to_path_buf()], false)?
            .into_iter()
            .unzip();
        let manifest = manifest_of(dir);
        Ok(Run {
            dir: dir.to_path_buf(),
            label: label_of(dir, manifest.as_ref()),
            manifest,
            results,
            episode_dirs,
        })
    }
}

/// The run's `run.json`, where it has one that reads.
pub fn manifest_of(dir: &Path) -> Option<RunManifest> {
    let text = std::fs::read_to_string(dir.join("run.json")).ok()?;
    serde_json::from_str(&text).ok()
}

fn label_of(dir: &Path, manifest: Option<&RunManifest>) -> String {
    let folder = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| dir.display().to_string());
    let Some(m) = manifest else {
        return folder;
    };
    let s = &m.settings;
    let who = if s.agent == s.model {
        s.agent.clone()
    } else {
        format!("{} ({})", s.agent, s.model)
    };
    format!("{who}, {} [{folder}]", s.episode.observation)
}
