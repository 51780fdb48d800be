//! The shim's read loop: raw bytes in, one response line out per non-blank line
//! ([`Shim::serve`]). `gangway shim` is this loop on stdin and stdout.
//!
//! Framing, for any byte stream:
//!
//! - A line ends at `\n` or at the end of the input; a `\r` right before the `\n` belongs to the
//!   line end (CRLF works). Any other byte, `\r` and NUL included, is part of the line.
//! - A line longer than [`ServeLimits::max_line_bytes`] (not counting its line end) is answered
//!   with a [`RefusalKind::LineTooLong`] refusal. It is read past without being stored beyond the
//!   limit, so a huge line costs at most the limit in memory.
//! - A line that is not UTF-8 is answered with a [`RefusalKind::Parse`] refusal naming the byte
//!   offset of its first invalid byte.
//! - A blank line (UTF-8 and only whitespace, [`str::trim`]'s sense) gets no response.
//! - Every other line is answered by [`Shim::handle_line`].
//!
//! None of these refusals changes the scheduler's state.

use std::io::{self, BufRead, Write};

use thiserror::Error;

use super::{Shim, refusal, refused};
use crate::error::RefusalKind;

/// The default of [`ServeLimits::max_line_bytes`]: 4 GiB.
///
/// The longest line a host sends in practice is the `restore` of a snapshot, which grows with
/// the pending jobs. Measured on snapshots of 10,000 pending jobs: about 570 bytes per job with
/// a 10-character id, an account, a user and one task group with cpus, memory and GPUs; about
/// 850 bytes per job with a second group, a partition, a license and a dependency. A
/// 1,000,000-pending-job snapshot is thus about 0.6 to 0.9 GB; the default leaves about five
/// times that, so only a runaway line (a host that lost its framing) reaches it. A lower limit
/// guards a host with less memory: parsing a line takes several times its size.
///
/// ```
/// assert_eq!(gangway::protocol::DEFAULT_MAX_LINE_BYTES, 4 << 30);
/// ```
pub const DEFAULT_MAX_LINE_BYTES: u64 = 4 << 30;

/// Capacity of the line buffer kept between lines: after a longer line it is given back.
const KEPT_BUFFER_BYTES: usize = 1 << 20;

/// The limits of [`Shim::serve`].
///
/// ```
/// use gangway::protocol::{ServeLimits, DEFAULT_MAX_LINE_BYTES};
/// assert_eq!(ServeLimits::default().max_line_bytes, DEFAULT_MAX_LINE_BYTES);
/// let small = ServeLimits::default().with_max_line_bytes(4096);
/// assert_eq!(small.max_line_bytes, 4096);
/// ```
///
/// It is `#[non_exhaustive]`: a later limit is not a breaking change, so build it from
/// [`ServeLimits::default`] and the `with_*` methods.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServeLimits {
    /// The longest line, in bytes without its line end (`\n` or `\r\n`), that is parsed; a
    /// longer one gets a `line_too_long` refusal (`gangway shim --max-line-bytes`).
    pub max_line_bytes: u64,
}

impl ServeLimits {
    /// The same limits with [`ServeLimits::max_line_bytes`] set to `bytes`.
    pub fn with_max_line_bytes(mut self, bytes: u64) -> Self {
        self.max_line_bytes = bytes;
        self
    }
}

impl Default for ServeLimits {
    fn default() -> Self {
        ServeLimits {
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
        }
    }
}

/// Why [`Shim::serve`] stopped without an error.
///
/// ```
/// use gangway::protocol::{ServeEnd, ServeLimits, Shim};
/// let mut out = Vec::new();
/// let end = Shim::default().serve(&b""[..], &mut out, ServeLimits::default()).unwrap();
/// assert_eq!(end, ServeEnd::EndOfInput);
/// assert!(out.is_empty());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServeEnd {
    /// The input ended; every non-blank line was answered.
    EndOfInput,
    /// The reader of the responses went away (the writer failed with
    /// [`io::ErrorKind::BrokenPipe`]); the rest of the input was not read.
    OutputClosed,
}

/// An I/O failure that stopped [`Shim::serve`] (other than the output being closed, which is
/// [`ServeEnd::OutputClosed`]). Every line before it was answered.
///
/// ```
/// use std::io;
/// use gangway::protocol::ServeError;
/// let e = ServeError::Read(io::Error::other("disk gone"));
/// assert_eq!(e.to_string(), "cannot read a request: disk gone");
/// assert_eq!(e.io_error().to_string(), "disk gone");
/// ```
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ServeError {
    /// Reading the requests failed.
    #[error("cannot read a request: {0}")]
    Read(#[source] io::Error),
    /// Writing or flushing a response failed.
    #[error("cannot write a response: {0}")]
    Write(#[source] io::Error),
}

impl ServeError {
    /// The underlying I/O error.
    ///
    /// ```
    /// use std::io;
    /// use gangway::protocol::ServeError;
    /// let e = ServeError::Write(io::Error::from(io::ErrorKind::StorageFull));
    /// assert_eq!(e.io_error().kind(), io::ErrorKind::StorageFull);
    /// ```
    pub fn io_error(&self) -> &io::Error {
        match self {
            ServeError::Read(e) | ServeError::Write(e) => e,
        }
    }
}

impl Shim {
    /// Serves the protocol: reads request lines from `reader` until it ends and writes one
    /// response line per non-blank line to `writer`, flushed after each. Any bytes are
    /// answered: a line that is not UTF-8 gets a `parse` refusal naming the offset of its
    /// first invalid byte, a line over [`ServeLimits::max_line_bytes`] a `line_too_long`
    /// refusal, and neither changes the scheduler (the module documentation has the framing
    /// rules).
    ///
    /// Returns [`ServeEnd::EndOfInput`] at the end of the input, [`ServeEnd::OutputClosed`]
    /// when writing fails with [`io::ErrorKind::BrokenPipe`], and [`ServeError`] on any
    /// other read or write failure (`gangway shim` exits 0, 0 and 1 on them).
    ///
    /// ```
    /// use gangway::protocol::{ServeEnd, ServeLimits, Shim};
    /// let input = b"{\"op\":\"configure\",\"cluster\":{\"nodes\":[]}}\r\n\xff\n\n{\"op\":\"explain\"}";
    /// let mut out = Vec::new();
    /// let end = Shim::default().serve(&input[..], &mut out, ServeLimits::default()).unwrap();
    /// assert_eq!(end, ServeEnd::EndOfInput);
    /// let out = String::from_utf8(out).unwrap();
    /// let lines: Vec<&str> = out.lines().collect();
    /// assert_eq!(lines.len(), 3);
    /// assert_eq!(lines[0], r#"{"ok":true,"protocol":1}"#);
    /// assert!(lines[1].starts_with(r#"{"ok":false,"error":{"kind":"parse","message":"the line is not UTF-8: byte 0xff at offset 0"#));
    /// assert_eq!(lines[2], r#"{"ok":true,"pending":[],"running":[]}"#);
    /// ```
    pub fn serve<R: BufRead, W: Write>(
        &mut self,
        mut reader: R,
        mut writer: W,
        limits: ServeLimits,
    ) -> Result<ServeEnd, ServeError> {
        let mut buffer = Vec::new();
        loop {
            let line = match read_line(&mut reader, &mut buffer, limits.max_line_bytes) {
                Ok(Some(line)) => line,
                Ok(None) => return Ok(ServeEnd::EndOfInput),
                Err(e) => return Err(ServeError::Read(e)),
            };
            let response = match line {
                Line::TooLong { bytes } => Some(refusal(refused(
                    RefusalKind::LineTooLong,
                    format!(
                        "the line has {bytes} bytes, more than the limit of {} \
                         (gangway shim --max-line-bytes); it was skipped",
                        limits.max_line_bytes
                    ),
                ))),
                Line::Complete => self.answer(&buffer),
            };
            if buffer.capacity() > KEPT_BUFFER_BYTES {
                buffer = Vec::new();
            }
            let Some(response) = response else { continue };
            match write_line(&mut writer, &response) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                    return Ok(ServeEnd::OutputClosed);
                }
                Err(e) => return Err(ServeError::Write(e)),
            }
        }
    }

    /// The response to one line within the limit, or none for a blank line.
    fn answer(&mut self, bytes: &[u8]) -> Option<String> {
        match std::str::from_utf8(bytes) {
            Ok(line) if line.trim().is_empty() => None,
            Ok(line) => Some(self.handle_line(line)),
            Err(e) => {
                let at = e.valid_up_to();
                Some(refusal(refused(
                    RefusalKind::Parse,
                    format!(
                        "the line is not UTF-8: byte 0x{:02x} at offset {at} is invalid",
                        bytes[at]
                    ),
                )))
            }
        }
    }
}

fn write_line<W: Write>(writer: &mut W, response: &str) -> io::Result<()> {
    writer.write_all(response.as_bytes())?;
    writer.write_all(b"\n")?;
    writer.flush()
}

/// What [`read_line`] read.
enum Line {
    /// The whole line, without its line end, is in the buffer.
    Complete,
    /// The line was longer than the limit; the buffer holds at most its start.
    TooLong {
        /// The line's length without its line end.
        bytes: u64,
    },
}

/// Reads one line into `buffer` (cleared first), storing at most `max + 2` bytes of it and
/// consuming the rest up to and including its `\n`; a complete line is left without its line
/// end. `None` at the end of the input.
fn read_line<R: BufRead>(
    reader: &mut R,
    buffer: &mut Vec<u8>,
    max: u64,
) -> io::Result<Option<Line>> {
    // `max` bytes, then room for the line end: a line that fits is stored whole with its end.
    let keep = max.saturating_add(2);
    buffer.clear();
    let mut total: u64 = 0;
    let mut ended = false;
    // The last byte before the `\n`, to tell a CRLF end when the line was not stored whole.
    let mut last = None;
    while !ended {
        let available = match reader.fill_buf() {
            Ok(available) => available,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            break;
        }
        let content = match available.iter().position(|&b| b == b'\n') {
            Some(at) => {
                ended = true;
                at
            }
            None => available.len(),
        };
        last = available[..content].last().copied().or(last);
        let taken = content + usize::from(ended);
        let room = keep.saturating_sub(buffer.len() as u64);
        buffer.extend_from_slice(
            &available[..taken.min(usize::try_from(room).unwrap_or(usize::MAX))],
        );
        total += taken as u64;
        reader.consume(taken);
    }
    if total == 0 {
        return Ok(None);
    }
    let end = if ended {
        1 + usize::from(last == Some(b'\r'))
    } else {
        0
    };
    let length = total - end as u64;
    if length > max {
        return Ok(Some(Line::TooLong { bytes: length }));
    }
    // `length <= max`, so the line and its end fitted in `keep` bytes.
    buffer.truncate(buffer.len() - end);
    Ok(Some(Line::Complete))
}
