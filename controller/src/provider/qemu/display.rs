//! The screen seen from the host, without the guest agent: QMP
//! `screendump` to a PPM file (about 10 ms at 1920×1080), decoded and
//! re-encoded as PNG here (faster than QEMU's own PNG writer).
//!
//! The issue that introduced this asked for QEMU's D-Bus display through
//! the `qemu-display` crate, with `screendump` as the fallback. The D-Bus
//! display needs a session bus on the host for every QEMU, changes the VM's
//! arguments (and so every snapshot key) and pulls in a large dependency,
//! for a first frame no faster than `screendump`; so `screendump` is the
//! one path.

use crate::provider::qemu::qmp::{Qmp, QmpError};
use std::path::Path;
use std::time::Instant;

#[derive(Debug, thiserror::Error)]
pub enum DisplayError {
    #[error("screendump")]
    Qmp(#[from] QmpError),
    #[error("screendump file {path}: {message}")]
    Ppm { path: String, message: String },
    #[error("encoding PNG: {0}")]
    Png(String),
}

/// A PNG of the screen and what it took.
#[derive(Debug, Clone)]
pub struct Screendump {
    pub png: Vec<u8>,
    pub width: u32,
    pub height: u32,
    pub dump_ms: f64,
    pub encode_ms: f64,
}

/// Dumps the screen through QMP into `dir/screen.ppm` and returns a PNG.
pub async fn screendump_png(qmp: &mut Qmp, dir: &Path) -> Result<Screendump, DisplayError> {
    let path = dir.join("screen.ppm");
    let t = Instant::now();
    qmp.execute(
        "screendump",
        Some(serde_json::json!({ "filename": path.display().to_string(), "format": "ppm" })),
    )
    .await?;
    let dump_ms = t.elapsed().as_secs_f64() * 1000.0;
    let bytes = tokio::fs::read(&path)
        .await
        .map_err(|e| DisplayError::Ppm {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
    let _ = tokio::fs::remove_file(&path).await;
    let t = Instant::now();
    let (width, height, png) = tokio::task::spawn_blocking(move || {
        let (w, h, rgb) = parse_ppm(&bytes).map_err(|m| DisplayError::Ppm {
            path: "screen.ppm".into(),
            message: m,
        })?;
        encode_png(w, h, rgb).map(|png| (w, h, png))
    })
    .await
    .map_err(|e| DisplayError::Png(e.to_string()))??;
    Ok(Screendump {
        png,
        width,
        height,
        dump_ms,
        encode_ms: t.elapsed().as_secs_f64() * 1000.0,
    })
}

/// Parses a binary PPM (P6, maxval 255): width, height and the RGB bytes.
pub fn parse_ppm(b: &[u8]) -> Result<(u32, u32, &[u8]), String> {
    let mut fields = Vec::new();
    let mut i = 0;
    while fields.len() < 4 {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i < b.len() && b[i] == b'#' {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        let start = i;
        while i < b.len() && !b[i].is_ascii_whitespace() {
            i += 1;
        }
        if start == i {
            return Err("truncated header".into());
        }
        fields
            .push(std::str::from_utf8(&b[start..i]).map_err(|_| "header is not text".to_string())?);
    }
    if fields[0] != "P6" {
        return Err(format!("not a binary PPM (magic {:?})", fields[0]));
    }
    let num = |s: &str| {
        s.parse::<u32>()
            .map_err(|_| format!("bad number {s:?} in header"))
    };
    let (w, h, max) = (num(fields[1])?, num(fields[2])?, num(fields[3])?);
    if max != 255 {
        return Err(format!("maxval {max}, expected 255"));
    }
    let data = &b[(i + 1).min(b.len())..];
    let need = w as usize * h as usize * 3;
    if data.len() < need {
        return Err(format!(
            "{} bytes of pixels, expected {need} for {w}x{h}",
            data.len()
        ));
    }
    Ok((w, h, &data[..need]))
}

/// RGB → PNG (fast compression, Up filter: small screens in a few ms).
pub fn encode_png(width: u32, height: u32, rgb: &[u8]) -> Result<Vec<u8>, DisplayError> {
    let mut out = Vec::with_capacity(rgb.len() / 8);
    {
        let mut enc = png::Encoder::new(&mut out, width, height);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_compression(png::Compression::Fast);
        enc.set_filter(png::Filter::Up);
        let mut w = enc
            .write_header()
            .map_err(|e| DisplayError::Png(e.to_string()))?;
        w.write_image_data(rgb)
            .map_err(|e| DisplayError::Png(e.to_string()))?;
    }
    Ok(out)
}

/// Width and height of a PNG (from its IHDR).
pub fn png_size(png: &[u8]) -> Option<(u32, u32)> {
    if png.len() < 24 || &png[..8] != b"\x89PNG\r\n\x1a\n" {
        return None;
    }
    let w = u32::from_be_bytes(png[16..20].try_into().ok()?);
    let h = u32::from_be_bytes(png[20..24].try_into().ok()?);
    Some((w, h))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ppm_round_trip_to_png() {
        let mut ppm = b"P6\n# comment\n3 2\n255\n".to_vec();
        ppm.extend((0..18).map(|i| i as u8 * 10));
        let (w, h, rgb) = parse_ppm(&ppm).unwrap();
        assert_eq!((w, h, rgb.len()), (3, 2, 18));
        let png = encode_png(w, h, rgb).unwrap();
        assert_eq!(png_size(&png), Some((3, 2)));
        let dec = png::Decoder::new(std::io::Cursor::new(png));
        let mut r = dec.read_info().unwrap();
        let mut buf = vec![0; r.output_buffer_size().unwrap()];
        r.next_frame(&mut buf).unwrap();
        assert_eq!(&buf[..18], rgb);
    }

    #[test]
    fn bad_ppm_is_explained() {
        assert!(parse_ppm(b"P3\n1 1\n255\n")
            .unwrap_err()
            .contains("not a binary PPM"));
        assert!(parse_ppm(b"P6\n2 2\n255\nabc")
            .unwrap_err()
            .contains("expected 12"));
        assert!(parse_ppm(b"P6\n2").unwrap_err().contains("truncated"));
    }
}
