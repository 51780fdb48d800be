//! Fuzz entry points: plain functions over bytes, called by the cargo-fuzz targets in `fuzz/`
//! and by the corpus test, so CI exercises them without cargo-fuzz. Each returns `Err` with a
//! description when it finds a bug (a violated invariant, a malformed response); a panic
//! inside the library is a bug too. Rejected input is not a bug.
//!
//! ```
//! use gangway::testkit::fuzz;
//! fuzz::events(b"\x01\x02\x03").unwrap();
//! fuzz::shim_lines(b"{\"op\":\"explain\"}\nnot json\n").unwrap();
//! fuzz::shim_bytes(b"{\"op\":\"explain\"}\r\n\xff\xfe\x00\n\n").unwrap();
//! ```

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::Value;

use crate::config::ClusterConfig;
use crate::decision::TickOutcome;
use crate::event::Event;
use crate::policy::Profile;
use crate::protocol::{DEFAULT_MAX_LINE_BYTES, ServeEnd, ServeLimits, Shim};
use crate::testkit::check_tick;
use crate::testkit::harness::{Stream, StreamEvent, TickStep, run_stream};
use crate::testkit::strategies::scenario;

/// The most ticks the `events` target generates from binary input.
const MAX_TICKS: usize = 30;

/// A 32-byte generator seed digested from the input (four FNV-1a lanes). Proptest's
/// pass-through generator would map bytes to choices more directly, but it halves the bytes
/// left at every nested generator and then yields zeros, on which range sampling loops.
fn seed_of(data: &[u8]) -> [u8; 32] {
    let mut seed = [0u8; 32];
    for (lane, chunk) in seed.chunks_mut(8).enumerate() {
        let start = 0xcbf2_9ce4_8422_2325u64 ^ (lane as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let h = data.iter().fold(start, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
        chunk.copy_from_slice(&h.to_le_bytes());
    }
    seed
}

/// Arbitrary config and tick stream into the scheduler, with the oracle after each tick.
///
/// Input starting with `{` is read as docs/protocol.md lines: the first `configure` line gives the
/// cluster, each `tick` line a tick (unparseable lines and events are skipped, times are made
/// non-decreasing). Any other input seeds the proptest strategies, so every input is a
/// valid-shaped cluster and stream, topology levels, NVLink islands, MIG layouts and the jobs'
/// topology and MIG requests included ([`crate::testkit::strategies_hw`]).
pub fn events(data: &[u8]) -> Result<(), String> {
    let Some((config, stream)) = decode(data) else {
        return Ok(());
    };
    let Ok(profile) = Profile::from_config(&config) else {
        return Ok(());
    };
    if crate::Scheduler::new(config.clone()).is_err() {
        return Ok(());
    }
    run_stream(&config, profile, &stream).map_err(|f| f.to_string())
}

fn decode(data: &[u8]) -> Option<(ClusterConfig, Stream)> {
    if data.first() == Some(&b'{') {
        return from_lines(&String::from_utf8_lossy(data));
    }
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &seed_of(data));
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    let tree = scenario(MAX_TICKS).new_tree(&mut runner).ok()?;
    Some(tree.current())
}

fn from_lines(text: &str) -> Option<(ClusterConfig, Stream)> {
    let mut config = None;
    let mut ticks: Vec<TickStep> = Vec::new();
    for line in text.lines() {
        let Ok(request) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        match request.get("op").and_then(Value::as_str) {
            Some("configure") => {
                config = request
                    .get("cluster")
                    .and_then(|c| serde_json::from_value(c.clone()).ok());
            }
            Some("tick") => {
                let previous = ticks.last().map_or(0, |t| t.at_ms);
                let at_ms = request.get("at_ms").and_then(Value::as_u64).unwrap_or(0);
                let events = request
                    .get("events")
                    .and_then(Value::as_array)
                    .map(|events| {
                        events
                            .iter()
                            .filter_map(|e| serde_json::from_value::<Event>(e.clone()).ok())
                            .map(StreamEvent::Raw)
                            .collect()
                    })
                    .unwrap_or_default();
                ticks.push(TickStep {
                    at_ms: at_ms.max(previous),
                    events,
                });
            }
            _ => {}
        }
    }
    Some((config?, Stream { ticks }))
}

/// Arbitrary bytes into the shim, one line at a time: every response must be one JSON object
/// with a boolean `ok` (and an error `kind` and `message` when false), and after every accepted
/// tick the oracle must hold.
pub fn shim_lines(data: &[u8]) -> Result<(), String> {
    let mut shim = Shim::default();
    for line in String::from_utf8_lossy(data).lines() {
        let reply = shim.handle_line(line);
        let value = check_reply(&reply)?;
        if value["ok"] == false {
            continue;
        }
        if value.get("decisions").is_some() {
            let outcome: TickOutcome = serde_json::from_value(value.clone())
                .map_err(|e| format!("the tick outcome does not parse back ({e}): {reply}"))?;
            let scheduler = shim
                .scheduler()
                .ok_or_else(|| format!("a tick answered without a scheduler: {reply}"))?;
            check_tick(scheduler, &outcome).map_err(|m| format!("after {line}: {m}"))?;
        }
    }
    Ok(())
}

/// A response must be one JSON object with a boolean `ok`, and an error `kind` and `message`
/// when `ok` is false.
fn check_reply(reply: &str) -> Result<Value, String> {
    let value: Value =
        serde_json::from_str(reply).map_err(|e| format!("response is not JSON ({e}): {reply}"))?;
    match value.get("ok").and_then(Value::as_bool) {
        Some(true) => {}
        Some(false) => {
            let error = &value["error"];
            if !error["kind"].is_string() || !error["message"].is_string() {
                return Err(format!("refusal without kind and message: {reply}"));
            }
        }
        None => return Err(format!("response without a boolean ok: {reply}")),
    }
    Ok(value)
}

/// The line limit of `shim_bytes`'s second pass: short enough for fuzz inputs to cross it.
const SHORT_LINE_LIMIT: u64 = 128;

/// Arbitrary bytes into [`Shim::serve`], once with the default limits and once with lines of
/// at most 128 bytes. The input is cut into lines here independently of the serve loop: at
/// each `\n`, dropping a `\r` right before it; a final piece without `\n` is a line unless
/// empty. A line is blank when it is within the limit, UTF-8, and only whitespace
/// ([`str::trim`]). There must be exactly one response line per non-blank line, each passing
/// [`shim_lines`]'s response check, and in order: `line_too_long` naming the length for a line
/// over the limit, `parse` naming the offset of the first invalid byte for one that is not
/// UTF-8, and for every other line exactly what [`Shim::handle_line`] of a second shim answers
/// when given the other lines alone. After the input both shims' snapshots must be equal: the
/// refused lines changed nothing.
pub fn shim_bytes(data: &[u8]) -> Result<(), String> {
    for max_line_bytes in [DEFAULT_MAX_LINE_BYTES, SHORT_LINE_LIMIT] {
        serve_checked(data, ServeLimits { max_line_bytes })?;
    }
    Ok(())
}

fn serve_checked(data: &[u8], limits: ServeLimits) -> Result<(), String> {
    let max = limits.max_line_bytes;
    let mut served = Shim::default();
    let mut out = Vec::new();
    let end = served
        .serve(data, &mut out, limits)
        .map_err(|e| format!("serve into memory failed: {e}"))?;
    if end != ServeEnd::EndOfInput {
        return Err(format!("serve into memory ended with {end:?}"));
    }
    let out = String::from_utf8(out).map_err(|e| format!("responses are not UTF-8: {e}"))?;
    let mut replies = match out.strip_suffix('\n') {
        Some(body) => body.split('\n').collect::<Vec<_>>(),
        None if out.is_empty() => Vec::new(),
        None => return Err(format!("responses do not end with a newline: {out:?}")),
    }
    .into_iter();
    let mut reference = Shim::default();
    let mut pieces: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    // The piece after the last `\n` is a line only when not empty.
    let last = pieces.pop().filter(|piece| !piece.is_empty());
    let lines = pieces
        .into_iter()
        .map(|piece| piece.strip_suffix(b"\r").unwrap_or(piece))
        .chain(last);
    for (number, line) in lines.enumerate() {
        let what = format!("line {} (limit {max})", number + 1);
        let text = std::str::from_utf8(line);
        if line.len() as u64 <= max && text.is_ok_and(|t| t.trim().is_empty()) {
            continue;
        }
        let reply = replies
            .next()
            .ok_or_else(|| format!("no response to non-blank {what}"))?;
        let value = check_reply(reply)?;
        let (kind, message) = (&value["error"]["kind"], &value["error"]["message"]);
        let message = message.as_str().unwrap_or_default();
        if line.len() as u64 > max {
            let length = format!("has {} bytes", line.len());
            if kind != "line_too_long" || !message.contains(&length) {
                return Err(format!("{what} is too long, got {reply}"));
            }
            continue;
        }
        match text {
            Err(e) => {
                let offset = format!("at offset {} is invalid", e.valid_up_to());
                if kind != "parse" || !message.contains(&offset) {
                    return Err(format!("{what} is not UTF-8 ({e}), got {reply}"));
                }
            }
            Ok(text) => {
                let expected = reference.handle_line(text);
                if reply != expected {
                    return Err(format!("{what}: served {reply}, handle_line {expected}"));
                }
            }
        }
    }
    if let Some(extra) = replies.next() {
        return Err(format!("a response beyond the non-blank lines: {extra}"));
    }
    let snapshot = |shim: &Shim| {
        shim.scheduler()
            .map(|s| serde_json::to_string(&s.snapshot()).map_err(|e| e.to_string()))
            .transpose()
    };
    if snapshot(&served)? != snapshot(&reference)? {
        return Err(format!(
            "limit {max}: the state differs from the good lines' alone"
        ));
    }
    Ok(())
}
