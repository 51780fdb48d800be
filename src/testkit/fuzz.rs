//! Fuzz entry points: plain functions over bytes, called by the cargo-fuzz targets in `fuzz/`
//! and by the corpus test, so CI exercises them without cargo-fuzz. Each returns `Err` with a
//! description when it finds a bug (a violated invariant, a malformed response); a panic
//! inside the library is a bug too. Rejected input is not a bug.
//!
//! ```
//! use gangway::testkit::fuzz;
//! fuzz::events(b"\x01\x02\x03").unwrap();
//! fuzz::shim_lines(b"{\"op\":\"explain\"}\nnot json\n").unwrap();
//! ```

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::Value;

use crate::config::ClusterConfig;
use crate::decision::TickOutcome;
use crate::event::Event;
use crate::policy::Multifactor;
use crate::protocol::Shim;
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
    if crate::Scheduler::new(config.clone()).is_err() {
        return Ok(());
    }
    let policy = Multifactor {
        weights: config.policy.priority.weights.clone(),
    };
    run_stream(&config, Box::new(policy), &stream).map_err(|f| f.to_string())
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
        let value: Value = serde_json::from_str(&reply)
            .map_err(|e| format!("response is not JSON ({e}): {reply}"))?;
        match value.get("ok").and_then(Value::as_bool) {
            Some(true) => {}
            Some(false) => {
                let error = &value["error"];
                if !error["kind"].is_string() || !error["message"].is_string() {
                    return Err(format!("refusal without kind and message: {reply}"));
                }
                continue;
            }
            None => return Err(format!("response without a boolean ok: {reply}")),
        }
        if value.get("decisions").is_some() {
            let outcome = TickOutcome {
                decisions: serde_json::from_value(value["decisions"].clone())
                    .map_err(|e| format!("decisions do not parse back ({e}): {reply}"))?,
                rejected: serde_json::from_value(value["rejected"].clone())
                    .map_err(|e| format!("rejections do not parse back ({e}): {reply}"))?,
                next_wakeup_ms: value["next_wakeup_ms"].as_u64(),
            };
            let scheduler = shim
                .scheduler()
                .ok_or_else(|| format!("a tick answered without a scheduler: {reply}"))?;
            check_tick(scheduler, &outcome).map_err(|m| format!("after {line}: {m}"))?;
        }
    }
    Ok(())
}

/// Arbitrary bytes into the SWF reader: it returns a workload or a typed error; when it
/// returns a workload, every job is valid for the machine it describes.
#[cfg(feature = "sim")]
pub fn swf(data: &[u8]) -> Result<(), String> {
    let Ok(workload) = crate::sim::workload::swf::read(data, None) else {
        return Ok(());
    };
    check_workload(&workload)
}

/// Arbitrary bytes into the Alibaba GPU trace reader: the node list before the first NUL byte,
/// the pod list after it (no NUL: all node list, empty pod list).
#[cfg(feature = "sim")]
pub fn alibaba_csv(data: &[u8]) -> Result<(), String> {
    let (nodes, pods) = match data.iter().position(|&b| b == 0) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &[][..]),
    };
    let Ok(workload) = crate::sim::workload::alibaba::read(nodes, pods) else {
        return Ok(());
    };
    check_workload(&workload)
}

/// A workload a reader accepted must give a valid cluster whose scheduler takes every job.
#[cfg(feature = "sim")]
fn check_workload(workload: &crate::sim::workload::Workload) -> Result<(), String> {
    use crate::sim::{Overrun, PolicyPreset, prepare};
    let (cluster, jobs) = prepare(workload, None, PolicyPreset::Easy, Overrun::Allow);
    let mut scheduler = crate::Scheduler::new(cluster)
        .map_err(|e| format!("a workload the reader accepted gives an invalid cluster: {e}"))?;
    let events: Vec<Event> = jobs
        .into_iter()
        .take(64)
        .map(|j| Event::Submit { job: j.spec })
        .collect();
    let outcome = scheduler
        .tick(0, events)
        .map_err(|e| format!("tick refused: {e}"))?;
    check_tick(&scheduler, &outcome)
}
