//! `ds_image`: a PNG that is big enough and not blank.
//!
//! Options: `min_width` (300) and `min_height` (200) pixels; `min_colors` (3
//! distinct RGB colours); `max_background` (0.995: the most common colour's
//! share of the pixels must be below it). Transparent pixels are composited
//! over white. No expected artifact.

use std::collections::HashMap;

use super::{opt_count, opt_num};
use crate::text::missing_result;
use crate::{result_file, Artifact, EvalError, Options, Scored};

const M: &str = "ds_image";
/// The largest decoded image accepted (512 MiB).
const MAX_BYTES: usize = 512 << 20;
const SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";

pub(crate) fn ds_image(result: &Artifact, options: &Options) -> Result<Scored, EvalError> {
    let min_width = opt_count(M, options, "min_width", 300)?;
    let min_height = opt_count(M, options, "min_height", 200)?;
    let min_colors = opt_count(M, options, "min_colors", 3)?;
    let max_background = opt_num(M, options, "max_background", 0.995)?;
    if max_background > 1.0 {
        return Err(EvalError::bad_option(
            M,
            "max_background",
            "a share between 0 and 1",
        ));
    }
    let path = result_file(M, result)?;
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => return Ok(missing_result(path, &e)),
    };
    if !bytes.starts_with(SIGNATURE) {
        return Ok(Scored::fail("not a PNG"));
    }
    let (width, height, rgb) = match decode(bytes) {
        Ok(x) => x,
        Err(e) => return Ok(Scored::fail(format!("not a valid PNG: {e}"))),
    };
    if u64::from(width) < min_width || u64::from(height) < min_height {
        return Ok(Scored::fail(format!(
            "{width}x{height}, expected at least {min_width}x{min_height}"
        )));
    }
    let mut counts: HashMap<[u8; 3], u64> = HashMap::new();
    for px in rgb.chunks_exact(3) {
        *counts.entry([px[0], px[1], px[2]]).or_insert(0) += 1;
    }
    let total = u64::from(width) * u64::from(height);
    let Some((bg, n)) = counts.iter().max_by_key(|(c, n)| (**n, **c)) else {
        return Ok(Scored::fail(format!("{width}x{height}: no pixels")));
    };
    let share = *n as f64 / total as f64;
    let hex = format!("#{:02x}{:02x}{:02x}", bg[0], bg[1], bg[2]);
    if share >= max_background {
        return Ok(Scored::fail(format!(
            "blank: {} % of pixels are {hex}",
            percent(share)
        )));
    }
    let colors = counts.len() as u64;
    if colors < min_colors {
        return Ok(Scored::fail(format!(
            "only {colors} colours, expected at least {min_colors}"
        )));
    }
    Ok(Scored::pass(format!(
        "{width}x{height}, {colors} colours, {} % {hex}",
        percent(share)
    )))
}

/// A share as a percentage with one decimal, more when that would round a
/// share below 1 up to `100.0`.
fn percent(share: f64) -> String {
    let p = share * 100.0;
    let one = format!("{p:.1}");
    if share < 1.0 && one == "100.0" {
        format!("{p:.3}")
    } else {
        one
    }
}

/// Width, height and 8-bit RGB pixels (alpha composited over white).
fn decode(bytes: Vec<u8>) -> Result<(u32, u32, Vec<u8>), String> {
    let mut dec = png::Decoder::new(std::io::Cursor::new(bytes));
    dec.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = dec.read_info().map_err(|e| e.to_string())?;
    let size = reader
        .output_buffer_size()
        .filter(|&n| n <= MAX_BYTES)
        .ok_or_else(|| "image too large".to_string())?;
    let mut buf = vec![0; size];
    let info = reader.next_frame(&mut buf).map_err(|e| e.to_string())?;
    let (w, h) = (info.width, info.height);
    let n = (w as usize) * (h as usize);
    let data = &buf[..info.buffer_size().min(buf.len())];
    let over_white = |c: u8, a: u8| -> u8 {
        let (c, a) = (u32::from(c), u32::from(a));
        ((c * a + 255 * (255 - a) + 127) / 255) as u8
    };
    let rgb: Vec<u8> = match info.color_type {
        png::ColorType::Grayscale => data.iter().flat_map(|&g| [g, g, g]).collect(),
        png::ColorType::GrayscaleAlpha => data
            .chunks_exact(2)
            .flat_map(|p| {
                let g = over_white(p[0], p[1]);
                [g, g, g]
            })
            .collect(),
        png::ColorType::Rgb => data.to_vec(),
        png::ColorType::Rgba => data
            .chunks_exact(4)
            .flat_map(|p| {
                [
                    over_white(p[0], p[3]),
                    over_white(p[1], p[3]),
                    over_white(p[2], p[3]),
                ]
            })
            .collect(),
        png::ColorType::Indexed => return Err("indexed colour was not expanded".to_string()),
    };
    if rgb.len() < n * 3 {
        return Err("truncated image data".to_string());
    }
    Ok((w, h, rgb[..n * 3].to_vec()))
}
