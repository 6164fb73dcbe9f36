//! Every metric named by the OSWorld task files in the compat corpus
//! (`tests/compat/osworld/`, copied unchanged from the shared corpus) is
//! either supported or has an `unsupported_reason`.

use std::path::{Path, PathBuf};

use evaluators::{is_supported, unsupported_reason};
use serde_json::Value;

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/compat/osworld");

fn json_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            json_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
}

fn funcs(task: &Value) -> Vec<String> {
    match task.pointer("/evaluator/func") {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|v| v.as_str().map(String::from))
            .collect(),
        _ => Vec::new(),
    }
}

#[test]
fn every_corpus_metric_is_supported_or_explained() {
    let root = std::env::var("DESKENV_OSWORLD_CORPUS").unwrap_or_else(|_| CORPUS.to_string());
    let mut files = Vec::new();
    json_files(Path::new(&root), &mut files);
    assert!(!files.is_empty(), "no task files under {root}");
    let mut unexplained = Vec::new();
    let (mut supported, mut total) = (0, 0);
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let task: Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        for func in funcs(&task) {
            total += 1;
            if is_supported(&func) {
                supported += 1;
            } else if unsupported_reason(&func).is_none() {
                unexplained.push(format!("{}: {func}", f.display()));
            }
        }
    }
    eprintln!(
        "{supported}/{total} metric uses supported in {} task files",
        files.len()
    );
    assert!(
        unexplained.is_empty(),
        "metrics neither supported nor explained:\n{}",
        unexplained.join("\n")
    );
}

/// The OSWorld metric names (`desktop_env/evaluators/metrics/__init__.py`
/// plus `infeasible`) are all either supported or explained, so
/// `is_supported` is honest for any upstream task.
#[test]
fn every_upstream_metric_is_supported_or_explained() {
    const UPSTREAM: &[&str] = &[
        "check_gnome_favorite_apps",
        "is_utc_0",
        "check_text_enlarged",
        "check_moved_jpgs",
        "is_in_vm_clickboard",
        "is_expected_tabs",
        "is_expected_bookmarks",
        "compare_pdfs",
        "compare_htmls",
        "compare_archive",
        "is_cookie_deleted",
        "is_shortcut_on_desktop",
        "check_font_size",
        "check_enabled_experiments",
        "check_history_deleted",
        "is_expected_search_query",
        "is_expected_active_tab",
        "is_expected_url_pattern_match",
        "is_added_to_steam_cart",
        "is_expected_installed_extensions",
        "compare_pdf_images",
        "is_expected_active_tab_approximate",
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
        "compare_image_text",
        "compare_references",
        "compare_unique_train_records",
        "check_csv",
        "check_accessibility_tree",
        "run_sqlite3",
        "check_json",
        "check_list",
        "exact_match",
        "match_in_list",
        "is_in_list",
        "fuzzy_match",
        "check_include_exclude",
        "check_direct_json_object",
        "compare_time_in_speedtest_results",
        "is_included_all_json_objects",
        "is_gold_text_included_in_pdf",
        "check_line_number",
        "file_contains",
        "compare_terminal_and_txt",
        "fuzzy_place_math",
        "compare_python_pure_text",
        "diff_text_file",
        "literal_match",
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
        "check_libre_locale",
        "compare_epub",
        "check_mp3_meta",
        "check_pdf_pages",
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
        "compare_table",
        "compare_csv",
        "compare_conference_city_in_order",
        "check_thunderbird_prefs",
        "check_thunderbird_filter",
        "check_thunderbird_folder",
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
        "compare_text_file",
        "compare_config",
        "compare_answer",
        "compare_result_files",
        "is_extension_installed",
        "check_json_settings",
        "check_json_keybindings",
        "check_python_file_by_test_suite",
        "check_python_file_by_gold_file",
        "check_html_background_image",
        "compare_zip_files",
        "infeasible",
    ];
    let missing: Vec<_> = UPSTREAM
        .iter()
        .filter(|m| !is_supported(m) && unsupported_reason(m).is_none())
        .collect();
    assert!(missing.is_empty(), "{missing:?}");
}
