//! deskenv evaluators: OSWorld-compatible metrics over collected artifacts.
//!
//! The controller runs a task's getters (`vm_file`, `vm_command_line`, `rule`,
//! …) and hands what they collected to [`evaluate`] as [`Artifact`]s, together
//! with the metric name and the task's `options`. Every metric is a pure
//! function of those inputs and returns a [`Scored`] in `[0, 1]` with a short
//! human reason.
//!
//! The semantics follow OSWorld's `desktop_env/evaluators/metrics/` (as kept in
//! the public fork `ljxpython/OSWorldUse`), including its quirks; each metric's
//! documentation says where deskenv differs.
//!
//! # Failure policy
//!
//! - A [`Artifact::Missing`] result or expected artifact is **not** an error:
//!   it scores `0` with the reason in [`Scored::detail`] (OSWorld scores 0 when
//!   a getter returns `None`).
//! - A result *file* that does not exist, cannot be read or cannot be parsed
//!   also scores `0` (the agent did not produce a usable file).
//! - An expected file that cannot be read is an [`EvalError::UnreadableFile`]:
//!   the task or the getter is broken, not the agent.
//! - Malformed task configuration (options, `rules`) is an
//!   [`EvalError::BadOption`]; OSWorld features that deskenv does not implement
//!   are an [`EvalError::Unsupported`], never a silent pass.
//!
//! The `ds_*` metrics (module `ds`) are deskenv's own, for the data-science
//! suite `tasks/ds` (see its README for the contract).
//!
//! Multi-metric evaluators (`"func": [...]`, `"conj"`) are scored metric by
//! metric and folded with [`combine`].

mod ds;
mod general;
mod pyval;
mod table;
mod text;

use std::fmt;
use std::path::PathBuf;

/// What a getter collected from the VM (or from the task): the controller
/// fills these.
#[derive(Debug, Clone, PartialEq)]
pub enum Artifact {
    /// Plain text, e.g. `vm_command_line` stdout or a rule string.
    Text(String),
    /// A JSON value, e.g. the `rule` getter's `rules` object.
    Json(serde_json::Value),
    /// A file fetched to the host (`vm_file`, `cloud_file`, `cache_file`).
    File(PathBuf),
    /// Several files (`multi: true` with several `gives`).
    Files(Vec<PathBuf>),
    /// The getter could not fetch it; the string says why.
    Missing(String),
}

impl Artifact {
    /// Short name of the artifact kind, used in error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Artifact::Text(_) => "text",
            Artifact::Json(_) => "json",
            Artifact::File(_) => "file",
            Artifact::Files(_) => "files",
            Artifact::Missing(_) => "missing",
        }
    }
}

/// A metric's options: the task's `evaluator.options` object.
pub type Options = serde_json::Map<String, serde_json::Value>;

/// A score in `[0, 1]` and a short human reason.
#[derive(Debug, Clone, PartialEq)]
pub struct Scored {
    /// The score; most metrics are binary (0 or 1).
    pub score: f64,
    /// Why, e.g. `"cell B2: 41 != 42"`.
    pub detail: String,
}

impl Scored {
    pub(crate) fn pass(detail: impl Into<String>) -> Self {
        Scored {
            score: 1.0,
            detail: detail.into(),
        }
    }

    pub(crate) fn fail(detail: impl Into<String>) -> Self {
        Scored {
            score: 0.0,
            detail: detail.into(),
        }
    }

    pub(crate) fn from_bool(ok: bool, detail: impl Into<String>) -> Self {
        if ok {
            Self::pass(detail)
        } else {
            Self::fail(detail)
        }
    }
}

/// Why a metric could not be computed (as opposed to scoring 0).
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// The metric name is not an OSWorld metric deskenv knows.
    #[error("unknown metric `{0}`")]
    UnknownMetric(String),
    /// An option (or a field of the task's `rules`) is missing or malformed.
    #[error("metric `{metric}`: bad option `{option}`: expected {expected}")]
    BadOption {
        metric: String,
        option: String,
        expected: String,
    },
    /// An expected file could not be read.
    #[error("cannot read {}: {reason}", path.display())]
    UnreadableFile { path: PathBuf, reason: String },
    /// The metric got an artifact of the wrong kind.
    #[error("metric `{metric}`: expected {expected} artifact, got {got}")]
    WrongArtifact {
        metric: String,
        expected: String,
        got: String,
    },
    /// An OSWorld metric or feature deskenv does not implement.
    #[error("metric `{metric}`: unsupported: {feature}")]
    Unsupported { metric: String, feature: String },
}

impl EvalError {
    pub(crate) fn bad_option(metric: &str, option: &str, expected: impl Into<String>) -> Self {
        EvalError::BadOption {
            metric: metric.to_string(),
            option: option.to_string(),
            expected: expected.into(),
        }
    }

    pub(crate) fn wrong_artifact(metric: &str, expected: &str, got: &Artifact) -> Self {
        EvalError::WrongArtifact {
            metric: metric.to_string(),
            expected: expected.to_string(),
            got: got.kind().to_string(),
        }
    }

    pub(crate) fn unsupported(metric: &str, feature: impl Into<String>) -> Self {
        EvalError::Unsupported {
            metric: metric.to_string(),
            feature: feature.into(),
        }
    }

    pub(crate) fn unreadable(path: &std::path::Path, reason: impl fmt::Display) -> Self {
        EvalError::UnreadableFile {
            path: path.to_path_buf(),
            reason: reason.to_string(),
        }
    }
}

/// How the scores of a multi-metric evaluator are folded (`evaluator.conj`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Conj {
    /// OSWorld's default.
    #[default]
    And,
    Or,
}

impl std::str::FromStr for Conj {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "and" => Ok(Conj::And),
            "or" => Ok(Conj::Or),
            other => Err(format!("conj must be \"and\" or \"or\", got {other:?}")),
        }
    }
}

/// OSWorld's rule for lists of metrics (`DesktopEnv.evaluate`): `And` is 0 as
/// soon as one score is 0, else the mean; `Or` is 1 as soon as one score is 1,
/// else the max. An empty list scores 0 (OSWorld would raise).
pub fn combine(scores: &[f64], conj: Conj) -> f64 {
    if scores.is_empty() {
        return 0.0;
    }
    match conj {
        Conj::And => {
            if scores.contains(&0.0) {
                0.0
            } else {
                scores.iter().sum::<f64>() / scores.len() as f64
            }
        }
        Conj::Or => {
            if scores.contains(&1.0) {
                1.0
            } else {
                scores.iter().copied().fold(f64::NEG_INFINITY, f64::max)
            }
        }
    }
}

mod checks;
pub use checks::{combine_weighted, SubCheck, CRITICAL_CAP};

/// The metrics [`evaluate`] implements.
const SUPPORTED: &[&str] = &[
    "check_csv",
    "check_direct_json_object",
    "check_include_exclude",
    "check_json_settings",
    "check_list",
    "compare_csv",
    "compare_table",
    "compare_text_file",
    "discovery_accuracy",
    "ds_chart_svg",
    "ds_image",
    "ds_image_text",
    "ds_notebook",
    "ds_number",
    "ds_predictions",
    "ds_table",
    "exact_match",
    "execution_accuracy",
    "infeasible",
    "is_in_list",
    "literal_match",
    "match_in_list",
    "pipeline_checks",
];

/// The metric names [`evaluate`] implements, sorted.
pub fn supported_metrics() -> &'static [&'static str] {
    SUPPORTED
}

/// Whether [`evaluate`] implements `metric` (for `deskenv tasks validate`).
pub fn is_supported(metric: &str) -> bool {
    SUPPORTED.contains(&metric)
}

/// For an OSWorld metric deskenv does not implement, why; `None` for a
/// supported metric and for names OSWorld does not define.
pub fn unsupported_reason(metric: &str) -> Option<&'static str> {
    if is_supported(metric) {
        return None;
    }
    UNSUPPORTED
        .iter()
        .find(|(names, _)| names.contains(&metric))
        .map(|(_, why)| *why)
}

/// OSWorld metrics not implemented here, grouped by why.
const UNSUPPORTED: &[(&[&str], &str)] = &[
    (
        &[
            "is_expected_tabs",
            "is_expected_bookmarks",
            "is_cookie_deleted",
            "is_shortcut_on_desktop",
            "check_font_size",
            "check_enabled_experiments",
            "check_history_deleted",
            "is_expected_search_query",
            "is_expected_active_tab",
            "is_expected_active_tab_approximate",
            "is_expected_url_pattern_match",
            "is_added_to_steam_cart",
            "is_expected_installed_extensions",
            "compare_htmls",
            "compare_archive",
        ],
        "Chrome metric: not implemented in deskenv yet",
    ),
    (
        &[
            "compare_pdfs",
            "compare_pdf_images",
            "is_gold_text_included_in_pdf",
            "check_pdf_pages",
        ],
        "needs a PDF text/image extractor (PyMuPDF/pdfplumber upstream)",
    ),
    (
        &[
            "compare_font_names",
            "compare_subscript_contains",
            "has_page_numbers_in_footers",
            "compare_docx_lines",
            "evaluate_colored_words_in_tables",
            "check_highlighted_words",
            "evaluate_strike_through_last_paragraph",
            "evaluate_conversion",
            "evaluate_spacing",
            "check_italic_font_size_14",
            "evaluate_alignment",
            "get_unique_train_ids",
            "check_no_duplicates",
            "compare_init_lines",
            "find_default_font",
            "contains_page_break",
            "compare_docx_files",
            "compare_docx_tables",
            "compare_line_spacing",
            "compare_insert_equation",
            "compare_highlighted_text",
            "is_first_line_centered",
            "check_file_exists",
            "check_tabstops",
            "compare_contains_image",
            "compare_docx_files_and_ignore_new_lines",
            "compare_docx_images",
            "compare_references",
            "compare_unique_train_records",
            "fuzzy_place_math",
        ],
        "Writer/docx metric (python-docx/odfpy upstream): not implemented in deskenv yet",
    ),
    (&["compare_image_text"], "needs OCR (easyocr upstream)"),
    (
        &[
            "check_presenter_console_disable",
            "check_image_stretch_and_center",
            "check_slide_numbers_color",
            "compare_pptx_files",
            "check_strikethrough",
            "check_slide_orientation_Portrait",
            "evaluate_presentation_fill_to_rgb_distance",
            "check_left_panel",
            "check_transition",
            "check_page_number_colors",
            "check_auto_saving_time",
        ],
        "Impress/pptx metric (python-pptx upstream): not implemented in deskenv yet",
    ),
    (
        &["compare_conference_city_in_order", "check_libre_locale"],
        "LibreOffice-specific metric: not implemented in deskenv yet",
    ),
    (
        &[
            "check_structure_sim_resized",
            "check_structure_sim_with_threshold",
            "check_brightness_decrease_and_structure_sim",
            "check_contrast_increase_and_structure_sim",
            "check_saturation_increase_and_structure_sim",
            "check_image_size",
            "check_image_mirror",
            "check_palette_and_structure_sim",
            "check_textbox_on_leftside",
            "check_green_background",
            "check_file_exists_and_structure_sim",
            "check_triangle_position",
            "check_structure_sim",
            "check_config_status",
            "compare_image_list",
            "increase_saturation",
            "decrease_brightness",
            "compare_triangle_positions",
            "check_sharper",
            "check_image_file_size",
        ],
        "GIMP/image metric (PIL/SSIM upstream): not implemented in deskenv yet",
    ),
    (
        &[
            "is_vlc_playing",
            "is_vlc_recordings_folder",
            "is_vlc_fullscreen",
            "compare_images",
            "compare_audios",
            "compare_videos",
            "check_qt_bgcone",
            "check_one_instance_when_started_from_file",
            "check_qt_minimal_view",
            "check_qt_max_volume",
            "check_qt_slider_colours",
            "check_global_key_play_pause",
            "check_play_and_exit",
        ],
        "VLC/media metric: not implemented in deskenv yet",
    ),
    (
        &[
            "check_thunderbird_prefs",
            "check_thunderbird_filter",
            "check_thunderbird_folder",
        ],
        "Thunderbird metric: not implemented in deskenv yet",
    ),
    (
        &[
            "compare_config",
            "compare_answer",
            "compare_result_files",
            "is_extension_installed",
            "check_json_keybindings",
            "check_python_file_by_test_suite",
            "check_python_file_by_gold_file",
            "check_html_background_image",
            "compare_zip_files",
        ],
        "VS Code metric: not implemented in deskenv yet",
    ),
    (
        &[
            "check_gnome_favorite_apps",
            "is_utc_0",
            "check_text_enlarged",
            "check_moved_jpgs",
            "is_in_vm_clickboard",
        ],
        "OS metric: not implemented in deskenv yet",
    ),
    (
        &["compare_epub", "check_mp3_meta"],
        "needs an epub/mp3 parser: not implemented in deskenv yet",
    ),
    (
        &[
            "check_accessibility_tree",
            "run_sqlite3",
            "check_json",
            "fuzzy_match",
            "compare_time_in_speedtest_results",
            "is_included_all_json_objects",
            "check_line_number",
            "file_contains",
            "compare_terminal_and_txt",
            "compare_python_pure_text",
            "diff_text_file",
        ],
        "general metric: not implemented in deskenv yet",
    ),
];

/// Score `result` (and `expected`, when the task has an expected getter) with
/// OSWorld metric `metric` and its `options`.
///
/// A [`Artifact::Missing`] result or expected artifact scores 0 with the
/// reason; see the crate documentation for the failure policy.
pub fn evaluate(
    metric: &str,
    result: &Artifact,
    expected: Option<&Artifact>,
    options: &Options,
) -> Result<Scored, EvalError> {
    if !is_supported(metric) {
        return Err(match unsupported_reason(metric) {
            Some(why) => EvalError::unsupported(metric, why),
            None => EvalError::UnknownMetric(metric.to_string()),
        });
    }
    if let Artifact::Missing(why) = result {
        return Ok(Scored::fail(format!("result missing: {why}")));
    }
    if let Some(Artifact::Missing(why)) = expected {
        return Ok(Scored::fail(format!("expected missing: {why}")));
    }
    match metric {
        "exact_match" => general::exact_match(result, need(metric, expected)?),
        "match_in_list" => general::match_in_list(result, need(metric, expected)?),
        "is_in_list" => general::is_in_list(result, need(metric, expected)?),
        "literal_match" => general::literal_match(result, need(metric, expected)?, options),
        "check_include_exclude" => general::check_include_exclude(result, need(metric, expected)?),
        "check_direct_json_object" => {
            general::check_direct_json_object(result, need(metric, expected)?)
        }
        "check_list" => general::check_list(result, need(metric, expected)?),
        "check_csv" => general::check_csv(result, need(metric, expected)?),
        "check_json_settings" => general::check_json_settings(result, need(metric, expected)?),
        "infeasible" => general::infeasible(result),
        "compare_text_file" => text::compare_text_file(result, need(metric, expected)?, options),
        "compare_csv" => text::compare_csv(result, need(metric, expected)?, options),
        "compare_table" => table::compare_table(result, expected, options),
        "ds_number" => ds::ds_number(result, need(metric, expected)?, options),
        "ds_table" => ds::ds_table(result, need(metric, expected)?, options),
        "ds_predictions" => ds::ds_predictions(result, need(metric, expected)?, options),
        "ds_chart_svg" => ds::ds_chart_svg(result, need(metric, expected)?, options),
        "ds_image" => ds::ds_image(result, options),
        "ds_image_text" => ds::ds_image_text(result, need(metric, expected)?, options),
        "ds_notebook" => ds::ds_notebook(result, expected, options),
        "execution_accuracy" => ds::execution_accuracy(result, need(metric, expected)?, options),
        "discovery_accuracy" => ds::discovery_accuracy(result, need(metric, expected)?, options),
        "pipeline_checks" => ds::pipeline_checks(result, options),
        _ => Err(EvalError::UnknownMetric(metric.to_string())),
    }
}

fn need<'a>(metric: &str, expected: Option<&'a Artifact>) -> Result<&'a Artifact, EvalError> {
    expected.ok_or_else(|| EvalError::WrongArtifact {
        metric: metric.to_string(),
        expected: "an expected".to_string(),
        got: "none".to_string(),
    })
}

/// The result as a single file path, or a 0 score when it is not usable.
pub(crate) fn result_file<'a>(
    metric: &str,
    result: &'a Artifact,
) -> Result<&'a std::path::Path, EvalError> {
    match result {
        Artifact::File(p) => Ok(p),
        Artifact::Files(ps) if ps.len() == 1 => Ok(&ps[0]),
        other => Err(EvalError::wrong_artifact(metric, "file", other)),
    }
}

/// The `rules` object an expected `rule` getter produced.
pub(crate) fn rules_json<'a>(
    metric: &str,
    expected: &'a Artifact,
) -> Result<&'a serde_json::Value, EvalError> {
    match expected {
        Artifact::Json(v) => Ok(v),
        other => Err(EvalError::wrong_artifact(metric, "json (rules)", other)),
    }
}

/// A boolean option, `default` when absent.
pub(crate) fn opt_bool(
    metric: &str,
    options: &Options,
    name: &str,
    default: bool,
) -> Result<bool, EvalError> {
    match options.get(name) {
        None | Some(serde_json::Value::Null) => Ok(default),
        Some(serde_json::Value::Bool(b)) => Ok(*b),
        Some(_) => Err(EvalError::bad_option(metric, name, "a boolean")),
    }
}
