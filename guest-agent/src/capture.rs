//! X11 screenshots: the root window through MIT-SHM (core `GetImage` as the
//! fallback), the cursor drawn in at the pointer from XFixes, and PNG/JPEG
//! encoding.
//!
//! A [`Capturer`] owns one X connection and one shared-memory segment; it is
//! blocking and not thread-safe, so the server keeps it behind a mutex and
//! calls it from `spawn_blocking`.

use protocol::api::CursorImage;
use std::time::Instant;
use x11rb::connection::Connection;
use x11rb::protocol::shm::{self, ConnectionExt as _};
use x11rb::protocol::xfixes::{self, ConnectionExt as _};
use x11rb::protocol::xproto::{ConnectionExt as _, ImageFormat, Window};
use x11rb::rust_connection::RustConnection;

#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error("cannot connect to X display {display:?}")]
    Connect {
        display: String,
        #[source]
        source: x11rb::errors::ConnectError,
    },
    #[error("X request {request} failed: {message}")]
    X {
        request: &'static str,
        message: String,
    },
    #[error("the root window has depth {0}; only 24- and 32-bit visuals are supported")]
    Depth(u8),
    #[error("encoding the frame as {format} failed: {message}")]
    Encode {
        format: &'static str,
        message: String,
    },
}

fn xerr(request: &'static str) -> impl Fn(Box<dyn std::fmt::Display>) -> CaptureError {
    move |e| CaptureError::X {
        request,
        message: e.to_string(),
    }
}

macro_rules! x {
    ($req:literal, $e:expr) => {
        $e.map_err(|e| xerr($req)(Box::new(e)))
    };
}

/// One captured frame: BGRX pixels, 4 bytes each, rows without padding.
#[derive(Clone)]
pub struct Frame {
    pub width: u32,
    pub height: u32,
    pub bgrx: Vec<u8>,
    pub cursor: (i32, i32),
    pub capture_ms: f64,
}

impl std::fmt::Debug for Frame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Frame")
            .field("width", &self.width)
            .field("height", &self.height)
            .field("cursor", &self.cursor)
            .finish()
    }
}

struct Shm {
    seg: shm::Seg,
    addr: *mut u8,
    size: usize,
}

// The segment is only touched by the thread holding the Capturer's mutex.
unsafe impl Send for Shm {}

impl Drop for Shm {
    fn drop(&mut self) {
        // SAFETY: addr came from shmat and is detached exactly once.
        unsafe {
            libc::shmdt(self.addr as *const libc::c_void);
        }
    }
}

pub struct Capturer {
    conn: RustConnection,
    root: Window,
    width: u16,
    height: u16,
    shm: Option<Shm>,
    xfixes: bool,
    /// Why MIT-SHM is not used, when it is not.
    pub shm_error: Option<String>,
}

impl std::fmt::Debug for Capturer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Capturer")
            .field("width", &self.width)
            .field("height", &self.height)
            .field("shm", &self.shm.is_some())
            .finish()
    }
}

impl Capturer {
    pub fn connect(display: &str) -> Result<Capturer, CaptureError> {
        let (conn, screen_num) =
            RustConnection::connect(Some(display)).map_err(|source| CaptureError::Connect {
                display: display.to_string(),
                source,
            })?;
        let screen = &conn.setup().roots[screen_num];
        if screen.root_depth != 24 && screen.root_depth != 32 {
            return Err(CaptureError::Depth(screen.root_depth));
        }
        let (root, width, height) = (screen.root, screen.width_in_pixels, screen.height_in_pixels);
        let xfixes = conn
            .xfixes_query_version(4, 0)
            .ok()
            .and_then(|c| c.reply().ok())
            .is_some();
        let mut cap = Capturer {
            conn,
            root,
            width,
            height,
            shm: None,
            xfixes,
            shm_error: None,
        };
        match cap.attach_shm() {
            Ok(shm) => cap.shm = Some(shm),
            Err(e) => {
                tracing::warn!("MIT-SHM unavailable, using core GetImage: {e}");
                cap.shm_error = Some(e);
            }
        }
        Ok(cap)
    }

    pub fn size(&self) -> (u32, u32) {
        (u32::from(self.width), u32::from(self.height))
    }

    fn attach_shm(&self) -> Result<Shm, String> {
        let reply = self
            .conn
            .shm_query_version()
            .map_err(|e| e.to_string())?
            .reply()
            .map_err(|e| e.to_string())?;
        let _ = reply;
        let size = usize::from(self.width) * usize::from(self.height) * 4;
        // SAFETY: plain System V shared memory calls; every failure is checked.
        unsafe {
            let id = libc::shmget(libc::IPC_PRIVATE, size, libc::IPC_CREAT | 0o600);
            if id < 0 {
                return Err(format!("shmget: {}", std::io::Error::last_os_error()));
            }
            let addr = libc::shmat(id, std::ptr::null(), 0);
            if addr as isize == -1 {
                libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut());
                return Err(format!("shmat: {}", std::io::Error::last_os_error()));
            }
            let seg = self.conn.generate_id().map_err(|e| e.to_string())?;
            let attached = self
                .conn
                .shm_attach(seg, id as u32, false)
                .map_err(|e| e.to_string())
                .and_then(|c| c.check().map_err(|e| e.to_string()));
            // Marked for removal now: freed once both sides detach, even on a crash.
            libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut());
            if let Err(e) = attached {
                libc::shmdt(addr);
                return Err(format!("ShmAttach: {e}"));
            }
            Ok(Shm {
                seg,
                addr: addr as *mut u8,
                size,
            })
        }
    }

    /// Captures the whole screen with the cursor drawn in.
    pub fn capture(&mut self) -> Result<Frame, CaptureError> {
        let t = Instant::now();
        let mut bgrx = self.grab()?;
        let cursor = self.draw_cursor(&mut bgrx)?;
        Ok(Frame {
            width: u32::from(self.width),
            height: u32::from(self.height),
            bgrx,
            cursor,
            capture_ms: ms(t),
        })
    }

    /// Captures the screen without the cursor (for frame differencing).
    pub fn grab(&mut self) -> Result<Vec<u8>, CaptureError> {
        let (w, h) = (self.width, self.height);
        if let Some(shm) = &self.shm {
            let r = self
                .conn
                .shm_get_image(
                    self.root,
                    0,
                    0,
                    w,
                    h,
                    !0,
                    ImageFormat::Z_PIXMAP.into(),
                    shm.seg,
                    0,
                )
                .map_err(|e| e.to_string())
                .and_then(|c| c.reply().map_err(|e| e.to_string()));
            match r {
                Ok(_) => {
                    // SAFETY: the server wrote size bytes into the attached segment
                    // and has replied, so the write is complete.
                    let data = unsafe { std::slice::from_raw_parts(shm.addr, shm.size) };
                    return Ok(data.to_vec());
                }
                Err(e) => {
                    tracing::warn!("ShmGetImage failed, falling back to GetImage: {e}");
                    self.shm_error = Some(e);
                    self.shm = None;
                }
            }
        }
        let reply = x!(
            "GetImage",
            x!(
                "GetImage",
                self.conn
                    .get_image(ImageFormat::Z_PIXMAP, self.root, 0, 0, w, h, !0)
            )?
            .reply()
        )?;
        Ok(reply.data)
    }

    /// The pointer position on the root window.
    pub fn pointer(&self) -> Result<(i32, i32), CaptureError> {
        let r = x!(
            "QueryPointer",
            x!("QueryPointer", self.conn.query_pointer(self.root))?.reply()
        )?;
        Ok((i32::from(r.root_x), i32::from(r.root_y)))
    }

    fn draw_cursor(&self, bgrx: &mut [u8]) -> Result<(i32, i32), CaptureError> {
        match self.cursor_image()? {
            Some(img) => {
                img.blend(
                    bgrx,
                    u32::from(self.width),
                    u32::from(self.height),
                    4,
                    [2, 1, 0],
                );
                Ok((img.x, img.y))
            }
            None => self.pointer(),
        }
    }

    /// The cursor's image at the pointer, from XFixes (`None` without it).
    pub fn cursor_image(&self) -> Result<Option<CursorImage>, CaptureError> {
        if !self.xfixes {
            return Ok(None);
        }
        let img = x!(
            "XFixesGetCursorImage",
            x!("XFixesGetCursorImage", self.conn.xfixes_get_cursor_image())?.reply()
        )?;
        Ok(Some(cursor_of(img)))
    }
}

fn cursor_of(img: xfixes::GetCursorImageReply) -> CursorImage {
    CursorImage {
        x: i32::from(img.x),
        y: i32::from(img.y),
        width: img.width,
        height: img.height,
        xhot: img.xhot,
        yhot: img.yhot,
        argb: img.cursor_image,
    }
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

/// BGRX → packed RGB.
pub fn to_rgb(frame: &Frame) -> Vec<u8> {
    let mut rgb = Vec::with_capacity(frame.bgrx.len() / 4 * 3);
    for px in frame.bgrx.chunks_exact(4) {
        rgb.extend_from_slice(&[px[2], px[1], px[0]]);
    }
    rgb
}

/// PNG on the fast settings (fdeflate + Up filter): a few ms for a UI frame.
pub fn encode_png(frame: &Frame) -> Result<Vec<u8>, CaptureError> {
    let rgb = to_rgb(frame);
    let mut out = Vec::with_capacity(rgb.len() / 8);
    let err = |e: png::EncodingError| CaptureError::Encode {
        format: "png",
        message: e.to_string(),
    };
    {
        let mut enc = png::Encoder::new(&mut out, frame.width, frame.height);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_compression(png::Compression::Fast);
        enc.set_filter(png::Filter::Up);
        let mut w = enc.write_header().map_err(err)?;
        w.write_image_data(&rgb).map_err(err)?;
        w.finish().map_err(err)?;
    }
    Ok(out)
}

/// Baseline JPEG at `quality` (1–100).
pub fn encode_jpeg(frame: &Frame, quality: u8) -> Result<Vec<u8>, CaptureError> {
    let mut out = Vec::with_capacity(frame.bgrx.len() / 16);
    let (Ok(w), Ok(h)) = (u16::try_from(frame.width), u16::try_from(frame.height)) else {
        return Err(CaptureError::Encode {
            format: "jpeg",
            message: format!(
                "{}x{} is larger than JPEG allows",
                frame.width, frame.height
            ),
        });
    };
    let enc = jpeg_encoder::Encoder::new(&mut out, quality.clamp(1, 100));
    enc.encode(&frame.bgrx, w, h, jpeg_encoder::ColorType::Bgra)
        .map_err(|e| CaptureError::Encode {
            format: "jpeg",
            message: e.to_string(),
        })?;
    Ok(out)
}

/// Encodes `frame` as `format`, returning the bytes and the time taken.
pub fn encode(
    frame: &Frame,
    format: protocol::api::ImageFormat,
    quality: Option<u8>,
) -> Result<(Vec<u8>, f64), CaptureError> {
    let t = Instant::now();
    let bytes = match format {
        protocol::api::ImageFormat::Png => encode_png(frame)?,
        protocol::api::ImageFormat::Jpeg => encode_jpeg(frame, quality.unwrap_or(80))?,
    };
    Ok((bytes, ms(t)))
}

/// Pixels that differ between two frames of the same size.
pub fn changed_pixels(a: &[u8], b: &[u8]) -> u64 {
    if a.len() != b.len() {
        return (a.len().max(b.len()) / 4) as u64;
    }
    const ROW: usize = 4 * 256;
    let mut changed = 0u64;
    for (ca, cb) in a.chunks(ROW).zip(b.chunks(ROW)) {
        // Whole equal chunks are the common case and compare at memcmp speed.
        if ca == cb {
            continue;
        }
        for (pa, pb) in ca.chunks_exact(4).zip(cb.chunks_exact(4)) {
            // The X byte is padding and may hold garbage.
            if pa[..3] != pb[..3] {
                changed += 1;
            }
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(w: u32, h: u32, fill: [u8; 4]) -> Frame {
        Frame {
            width: w,
            height: h,
            bgrx: fill.repeat((w * h) as usize),
            cursor: (0, 0),
            capture_ms: 0.0,
        }
    }

    #[test]
    fn png_round_trips_colours() {
        let f = frame(8, 4, [10, 20, 30, 0]);
        let png_bytes = encode_png(&f).unwrap();
        let dec = png::Decoder::new(std::io::Cursor::new(png_bytes));
        let mut reader = dec.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!((info.width, info.height), (8, 4));
        assert_eq!(&buf[..3], &[30, 20, 10]);
    }

    #[test]
    fn jpeg_has_markers() {
        let f = frame(16, 16, [0, 0, 255, 0]);
        let j = encode_jpeg(&f, 80).unwrap();
        assert_eq!(&j[..2], &[0xff, 0xd8]);
    }

    #[test]
    fn counts_changed_pixels_ignoring_padding() {
        let a = frame(64, 64, [1, 2, 3, 0]).bgrx;
        let mut b = a.clone();
        b[3] = 99; // padding byte only
        assert_eq!(changed_pixels(&a, &b), 0);
        b[4] = 7;
        b[4 * 100 + 1] = 7;
        assert_eq!(changed_pixels(&a, &b), 2);
    }

    #[test]
    fn cursor_blend_respects_hotspot_and_edges() {
        let mut f = frame(4, 4, [0, 0, 0, 0]);
        let img = xfixes::GetCursorImageReply {
            sequence: 0,
            length: 0,
            x: 0,
            y: 0,
            width: 2,
            height: 2,
            xhot: 1,
            yhot: 1,
            cursor_serial: 0,
            cursor_image: vec![0xffffffff; 4],
        };
        cursor_of(img).blend(&mut f.bgrx, 4, 4, 4, [2, 1, 0]);
        // Only the pixel at (0,0) is on screen: the cursor's bottom-right.
        assert_eq!(&f.bgrx[..3], &[255, 255, 255]);
        assert_eq!(&f.bgrx[4..7], &[0, 0, 0]);
        // Red with half alpha (premultiplied) over a grey RGB frame: red
        // lands in the first byte of each pixel, blue in the third.
        let mut rgb = vec![100u8; 3 * 4];
        let red = CursorImage {
            x: 1,
            y: 0,
            width: 1,
            height: 1,
            xhot: 0,
            yhot: 0,
            argb: vec![0x80_80_00_00],
        };
        red.blend(&mut rgb, 2, 2, 3, [0, 1, 2]);
        assert_eq!(&rgb[3..6], &[128 + 49, 49, 49]);
        assert_eq!(&rgb[..3], &[100, 100, 100]);
    }
}
