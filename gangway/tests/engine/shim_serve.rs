//! `Shim::serve` on raw bytes: every non-blank line of any byte stream gets exactly one JSON
//! response line, bad lines are refused with their kind, and the scheduler keeps its state
//! across them. In-memory readers and writers; `tests/cli_shim.rs` runs the binary.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::{self, BufReader, Cursor, Read, Write};

use gangway::RefusalKind;
use gangway::protocol::{ServeEnd, ServeError, ServeLimits, Shim};
use serde_json::Value;

const CONFIGURE: &str = r#"{"op":"configure","cluster":{"nodes":[{"name":"n1","cpus":4}]}}"#;
/// Starts job `a` at 0 (it runs until 1,000,000).
const SUBMIT: &str = r#"{"op":"tick","at_ms":0,"events":[{"type":"submit","job":{"id":"a","time_limit_ms":1000000,"groups":[{"count":2}]}}]}"#;
const TICK: &str = r#"{"op":"tick","at_ms":10,"events":[]}"#;
const EXPLAIN: &str = r#"{"op":"explain"}"#;

fn limits(max_line_bytes: u64) -> ServeLimits {
    ServeLimits::default().with_max_line_bytes(max_line_bytes)
}

/// Serves `input` to a fresh shim; the end and the parsed response lines.
fn serve(input: &[u8], limits: ServeLimits) -> (ServeEnd, Vec<Value>) {
    let mut out = Vec::new();
    let end = Shim::default().serve(input, &mut out, limits).unwrap();
    (end, responses(&out))
}

fn responses(out: &[u8]) -> Vec<Value> {
    let text = std::str::from_utf8(out).expect("responses are UTF-8");
    assert!(text.is_empty() || text.ends_with('\n'), "{text:?}");
    text.lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

fn kind(response: &Value) -> &str {
    assert_eq!(response["ok"], false, "{response}");
    response["error"]["kind"].as_str().unwrap()
}

fn message(response: &Value) -> &str {
    response["error"]["message"].as_str().unwrap()
}

/// Job `a` starts, then `bad` (one line, without its `\n`), then a tick and an explain: the
/// response to `bad` (none if blank), after checking that the tick and the explain were
/// answered and `a` still runs.
fn around(bad: &[u8], limits: ServeLimits) -> Option<Value> {
    let mut input = Vec::new();
    for line in [
        CONFIGURE.as_bytes(),
        SUBMIT.as_bytes(),
        bad,
        TICK.as_bytes(),
    ] {
        input.extend_from_slice(line);
        input.push(b'\n');
    }
    input.extend_from_slice(EXPLAIN.as_bytes());
    input.push(b'\n');
    let (end, mut out) = serve(&input, limits);
    assert_eq!(end, ServeEnd::EndOfInput);
    assert!(out.len() == 4 || out.len() == 5, "{out:?}");
    assert_eq!(out[0]["ok"], true, "{}", out[0]);
    assert_eq!(out[1]["decisions"][0]["type"], "start", "{}", out[1]);
    assert_eq!(out[1]["decisions"][0]["job"], "a", "{}", out[1]);
    let explain = out.pop().unwrap();
    let tick = out.pop().unwrap();
    assert_eq!(tick["ok"], true, "{tick}");
    assert_eq!(tick["at_ms"], 10, "{tick}");
    assert_eq!(tick["decisions"], Value::Array(vec![]), "{tick}");
    assert_eq!(explain["running"][0]["job"], "a", "{explain}");
    assert_eq!(explain["running"][0]["started_ms"], 0, "{explain}");
    out.get(2).cloned()
}

fn refused_around(bad: &[u8], limits: ServeLimits) -> Value {
    around(bad, limits).unwrap_or_else(|| panic!("no response to {bad:?}"))
}

#[test]
fn invalid_utf8_is_a_parse_error_naming_the_offset() {
    for (bad, offset, byte) in [
        (&b"\xff\xfe\x00"[..], 0, "0xff"),
        (b"{\"op\":\"explain\"}\xff", 16, "0xff"),
        // After a valid two-byte sequence (`é`), one cut short.
        (b"{\"op\":\"\xc3\xa9\xc3\"}", 9, "0xc3"),
        // A sequence cut short by the end of the line.
        (b"{\"op\":\"\xc3", 7, "0xc3"),
        // A surrogate encoded as if it were a code point.
        (b"[\"\xed\xa0\x80\"]", 2, "0xed"),
    ] {
        let response = refused_around(bad, ServeLimits::default());
        assert_eq!(kind(&response), RefusalKind::Parse.as_str(), "{bad:?}");
        let expected = format!("the line is not UTF-8: byte {byte} at offset {offset} is invalid");
        assert_eq!(message(&response), expected, "{bad:?}");
    }
    // Valid UTF-8 beyond ASCII goes on to the JSON parser.
    let response = refused_around("{\"op\":\"é".as_bytes(), ServeLimits::default());
    assert_eq!(kind(&response), RefusalKind::Parse.as_str());
    assert!(message(&response).contains("not JSON"), "{response}");
}

#[test]
fn nul_bytes_are_parse_errors() {
    for bad in [
        &b"\x00"[..],
        b"{\"op\":\"explain\"}\x00",
        b"\x00{\"op\":\"explain\"}",
    ] {
        let response = refused_around(bad, ServeLimits::default());
        assert_eq!(kind(&response), RefusalKind::Parse.as_str(), "{bad:?}");
        assert!(message(&response).contains("not JSON"), "{response}");
    }
}

#[test]
fn a_lone_carriage_return_is_a_byte_of_the_line() {
    // Inside JSON, `\r` is whitespace: the request is answered.
    let response = around(b"{\"op\":\r\"explain\"}", ServeLimits::default()).unwrap();
    assert_eq!(response["ok"], true, "{response}");
    assert_eq!(response["running"][0]["job"], "a", "{response}");
    // Elsewhere it is not JSON.
    let response = refused_around(b"\rx", ServeLimits::default());
    assert_eq!(kind(&response), RefusalKind::Parse.as_str());
    // A line of `\r` alone (before its own `\r\n`, or before `\n`) is blank.
    assert_eq!(around(b"\r", ServeLimits::default()), None);
    assert_eq!(around(b"\r\r", ServeLimits::default()), None);
}

#[test]
fn blank_lines_get_no_response() {
    for blank in [
        &b""[..],
        b" ",
        b"\t \t",
        b"\x0c",
        "\u{a0}\u{3000}".as_bytes(),
    ] {
        assert_eq!(around(blank, ServeLimits::default()), None, "{blank:?}");
    }
    let (end, out) = serve(b"\n\n  \r\n\t\n", ServeLimits::default());
    assert_eq!(end, ServeEnd::EndOfInput);
    assert!(out.is_empty(), "{out:?}");
}

#[test]
fn crlf_line_ends_answer_as_lf_ones() {
    let lines = [CONFIGURE, SUBMIT, "", TICK, EXPLAIN, "not json"];
    let lf = lines.join("\n") + "\n";
    let crlf = lines.join("\r\n") + "\r\n";
    let (_, from_lf) = serve(lf.as_bytes(), ServeLimits::default());
    let (_, from_crlf) = serve(crlf.as_bytes(), ServeLimits::default());
    assert_eq!(from_lf.len(), 5);
    assert_eq!(from_crlf, from_lf);
    // The `\r\n` is not counted against the limit: a line of exactly the limit is read.
    let max = EXPLAIN.len() as u64;
    let (_, out) = serve(format!("{EXPLAIN}\r\n").as_bytes(), limits(max));
    assert_eq!(
        kind(&out[0]),
        RefusalKind::NotConfigured.as_str(),
        "{}",
        out[0]
    );
    let (_, out) = serve(format!("{EXPLAIN}\r\n").as_bytes(), limits(max - 1));
    assert_eq!(
        kind(&out[0]),
        RefusalKind::LineTooLong.as_str(),
        "{}",
        out[0]
    );
}

#[test]
fn a_line_over_the_limit_is_line_too_long_and_the_shim_goes_on() {
    let small = limits(200);
    let long = vec![b'x'; 10_000];
    let response = refused_around(&long, small);
    assert_eq!(kind(&response), RefusalKind::LineTooLong.as_str());
    assert_eq!(
        message(&response),
        "the line has 10000 bytes, more than the limit of 200 \
         (gangway shim --max-line-bytes); it was skipped"
    );
    // A long valid request, or a long blank line, is refused too: it is never read whole.
    let padded = format!("{{\"op\":\"explain\"{}}}", " ".repeat(300));
    let response = refused_around(padded.as_bytes(), small);
    assert_eq!(kind(&response), RefusalKind::LineTooLong.as_str());
    let response = refused_around(&[b' '; 201], small);
    assert_eq!(kind(&response), RefusalKind::LineTooLong.as_str());
    // At the limit exactly it is read; one byte over it is not.
    let at_limit = format!("{{\"op\":\"explain\"{}}}", " ".repeat(200 - EXPLAIN.len()));
    assert_eq!(at_limit.len(), 200);
    let response = around(at_limit.as_bytes(), small).unwrap();
    assert_eq!(response["running"][0]["job"], "a", "{response}");
    let over = format!("{at_limit} ");
    let response = refused_around(over.as_bytes(), small);
    assert_eq!(kind(&response), RefusalKind::LineTooLong.as_str());
    // Also as the last line, without a final newline.
    let (_, out) = serve(&long, small);
    assert_eq!(out.len(), 1);
    assert_eq!(kind(&out[0]), RefusalKind::LineTooLong.as_str());
}

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

/// Counts the bytes allocated by each thread, to bound what a long line costs.
struct Counting;

fn track(delta: isize) {
    let _ = LIVE.try_with(|live| {
        live.set(live.get() + delta);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(live.get())));
    });
}

// SAFETY: every call is forwarded to `System` unchanged; the counting touches no allocation.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, forwarded.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            track(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.dealloc(ptr, layout) };
        track(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract, forwarded.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            track(new_size as isize - layout.size() as isize);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// `len` bytes of `x`, then a newline, made as they are read.
struct LongLine {
    left: u64,
}

impl Read for LongLine {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 {
            return Ok(0);
        }
        let n = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        buf[..n].fill(b'x');
        self.left -= n as u64;
        if self.left == 0 {
            buf[n - 1] = b'\n';
        }
        Ok(n)
    }
}

#[test]
fn a_huge_line_is_never_buffered_whole() {
    const LINE: u64 = 64 << 20;
    let reader = BufReader::with_capacity(64 << 10, LongLine { left: LINE + 1 });
    let mut out = Vec::new();
    let mut shim = Shim::default();
    let before = LIVE.with(Cell::get);
    PEAK.with(|peak| peak.set(before));
    let end = shim.serve(reader, &mut out, limits(1 << 20)).unwrap();
    let peak = PEAK.with(Cell::get) - before;
    assert_eq!(end, ServeEnd::EndOfInput);
    let out = responses(&out);
    assert_eq!(out.len(), 1);
    assert_eq!(kind(&out[0]), RefusalKind::LineTooLong.as_str());
    assert!(
        message(&out[0]).contains(&format!("{LINE} bytes")),
        "{}",
        out[0]
    );
    // The read buffer, at most the limit plus the line end, and the response.
    assert!(peak < 4 << 20, "a {LINE}-byte line took {peak} bytes");
}

#[test]
fn deep_nesting_is_a_parse_error() {
    for bad in ["[".repeat(100_000), "{\"a\":".repeat(100_000)] {
        let response = refused_around(bad.as_bytes(), ServeLimits::default());
        assert_eq!(kind(&response), RefusalKind::Parse.as_str());
        assert!(message(&response).contains("recursion limit"), "{response}");
    }
}

#[test]
fn empty_input_gets_no_response() {
    let (end, out) = serve(b"", ServeLimits::default());
    assert_eq!(end, ServeEnd::EndOfInput);
    assert!(out.is_empty());
}

#[test]
fn the_last_line_needs_no_newline() {
    let input = format!("{CONFIGURE}\n{SUBMIT}\n{EXPLAIN}");
    let (end, out) = serve(input.as_bytes(), ServeLimits::default());
    assert_eq!(end, ServeEnd::EndOfInput);
    assert_eq!(out.len(), 3);
    assert_eq!(out[2]["running"][0]["job"], "a", "{}", out[2]);
    // Nor a bad one.
    let (_, out) = serve(b"\n\xff", ServeLimits::default());
    assert_eq!(out.len(), 1);
    assert_eq!(kind(&out[0]), RefusalKind::Parse.as_str());
}

/// A writer that takes `lines` newlines, then fails every write with `error`.
struct Failing {
    lines: usize,
    error: io::ErrorKind,
    written: Vec<u8>,
}

impl Write for Failing {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.lines == 0 {
            return Err(io::Error::from(self.error));
        }
        self.lines -= buf.iter().filter(|&&b| b == b'\n').count().min(self.lines);
        self.written.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn five_explains() -> Cursor<Vec<u8>> {
    Cursor::new(format!("{EXPLAIN}\n").repeat(5).into_bytes())
}

#[test]
fn a_closed_output_ends_the_serve_quietly() {
    let mut input = five_explains();
    let mut writer = Failing {
        lines: 2,
        error: io::ErrorKind::BrokenPipe,
        written: Vec::new(),
    };
    let end = Shim::default()
        .serve(&mut input, &mut writer, ServeLimits::default())
        .unwrap();
    assert_eq!(end, ServeEnd::OutputClosed);
    assert_eq!(responses(&writer.written).len(), 2);
    // It stopped reading at the third line, whose response could not be written.
    assert_eq!(input.position(), 3 * (EXPLAIN.len() as u64 + 1));
}

#[test]
fn another_write_error_is_returned() {
    let mut writer = Failing {
        lines: 1,
        error: io::ErrorKind::StorageFull,
        written: Vec::new(),
    };
    let error = Shim::default()
        .serve(five_explains(), &mut writer, ServeLimits::default())
        .unwrap_err();
    assert!(matches!(&error, ServeError::Write(e) if e.kind() == io::ErrorKind::StorageFull));
    assert!(
        error.to_string().starts_with("cannot write a response: "),
        "{error}"
    );
    assert_eq!(responses(&writer.written).len(), 1);
}

/// A reader that gives `data`, failing once with `error` at `at` bytes.
struct FailingReader {
    data: Cursor<Vec<u8>>,
    at: u64,
    error: Option<io::ErrorKind>,
}

impl Read for FailingReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.data.position() == self.at
            && let Some(error) = self.error.take()
        {
            return Err(io::Error::from(error));
        }
        let room = usize::try_from(self.at.saturating_sub(self.data.position())).unwrap();
        let n = if room > 0 {
            buf.len().min(room)
        } else {
            buf.len()
        };
        self.data.read(&mut buf[..n])
    }
}

/// Serves five `explain` lines through a 4-byte buffer from a reader that fails with `error`
/// once `at` bytes have been read (the small buffer puts the failure inside a line).
fn serve_failing(at: u64, error: io::ErrorKind) -> (Result<ServeEnd, ServeError>, Vec<u8>) {
    let mut out = Vec::new();
    let reader = FailingReader {
        data: five_explains(),
        at,
        error: Some(error),
    };
    let reader = BufReader::with_capacity(4, reader);
    let end = Shim::default().serve(reader, &mut out, ServeLimits::default());
    (end, out)
}

#[test]
fn a_read_error_is_returned_after_the_lines_before_it() {
    // The failure comes in the middle of the second line.
    let (end, out) = serve_failing(EXPLAIN.len() as u64 + 4, io::ErrorKind::InvalidData);
    let error = end.unwrap_err();
    assert!(matches!(&error, ServeError::Read(e) if e.kind() == io::ErrorKind::InvalidData));
    assert_eq!(responses(&out).len(), 1);
}

#[test]
fn an_interrupted_read_is_retried() {
    let (end, out) = serve_failing(3, io::ErrorKind::Interrupted);
    assert_eq!(end.unwrap(), ServeEnd::EndOfInput);
    let out = responses(&out);
    assert_eq!(out.len(), 5);
    assert!(out.iter().all(|r| kind(r) == "not_configured"), "{out:?}");
}

/// Bad lines of every sort between good ones: one response per non-blank line, and the
/// scheduler's state afterwards is the one the good lines alone give.
#[test]
fn bad_lines_change_nothing() {
    let good = [CONFIGURE, SUBMIT, TICK, EXPLAIN];
    let bad: [&[u8]; 5] = [
        b"\xff\xfe\x00",
        b"\x00",
        &[b'['; 300],
        b"{\"op\":\"tick\",\"at_ms\":5,\"events\":[\xc3]}",
        b"\r",
    ];
    let mut mixed = Vec::new();
    for (i, line) in good.iter().enumerate() {
        mixed.extend_from_slice(bad[i % bad.len()]);
        mixed.extend_from_slice(b"\r\n");
        mixed.extend_from_slice(line.as_bytes());
        mixed.extend_from_slice(b"\n");
        mixed.extend_from_slice(bad[(i + 4) % bad.len()]);
        mixed.push(b'\n');
    }
    let mut with_bad = Shim::default();
    let mut out = Vec::new();
    with_bad.serve(&mixed[..], &mut out, limits(256)).unwrap();
    let out = responses(&out);
    let mut alone = Shim::default();
    let mut expected = Vec::new();
    alone
        .serve(
            (good.join("\n") + "\n").as_bytes(),
            &mut expected,
            limits(256),
        )
        .unwrap();
    let expected = responses(&expected);
    // The `\r` lines are blank (`\r\r\n` or `\r\n`); every other line is answered.
    let non_blank = mixed
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty() && l.iter().any(|b| !b" \t\r".contains(b)))
        .count();
    assert_eq!(out.len(), non_blank);
    let answers: Vec<&Value> = out
        .iter()
        .filter(|r| r["ok"] == true || kind(r) == "not_configured")
        .collect();
    assert_eq!(answers.len(), expected.len(), "{out:?}");
    for (got, want) in answers.iter().zip(&expected) {
        assert_eq!(*got, want);
    }
    let kinds: Vec<&str> = out.iter().filter(|r| r["ok"] == false).map(kind).collect();
    assert!(kinds.contains(&"line_too_long"), "{kinds:?}");
    assert!(kinds.contains(&"parse"), "{kinds:?}");
    let snapshot = |shim: &Shim| serde_json::to_string(&shim.scheduler().unwrap().snapshot());
    assert_eq!(snapshot(&with_bad).unwrap(), snapshot(&alone).unwrap());
}
