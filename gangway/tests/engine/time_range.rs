//! The range of times and durations (issue 28, item 3; `gangway::model::time`): every time and
//! duration is at most 2^53 − 1 ms. Through the shim, values at and beyond that edge go into
//! every event and CLUSTER field that carries a time or a duration, and some that carry an
//! amount, at random points of random streams. A value beyond the range is refused with a
//! typed error naming its field; every refusal changes nothing (the snapshot after it equals
//! the one before, or, for one event rejected in an accepted tick, the one a tick without it
//! gives); an accepted value passes the oracle and the stream goes on.

use crate::common;

use common::shim::send;
use gangway::protocol::Shim;
use gangway::testkit::harness::{resolve, scale};
use gangway::testkit::strategies::scenario;
use proptest::collection::vec;
use proptest::prelude::*;
use serde_json::{Value, json};

/// The latest time and the longest duration the engine accepts: 2^53 − 1 ms (docs/protocol.md,
/// "Times").
const MAX_MS: u64 = (1 << 53) - 1;

/// Values at and around the edges: in range up to `MAX_MS`, beyond it from `MAX_MS + 1`; the
/// last is 2^64, which no u64 holds (a JSON number that only a double reads).
fn edge(pick: usize) -> Value {
    const EDGES: [u64; 8] = [
        0,
        1,
        1 << 20,
        MAX_MS - 1,
        MAX_MS,
        MAX_MS + 1,
        1 << 63,
        u64::MAX,
    ];
    match EDGES.get(pick) {
        Some(&v) => json!(v),
        None => json!(18_446_744_073_709_551_616.0),
    }
}

const EDGE_COUNT: usize = 9;

/// Whether `value` lies beyond the range (or is no u64 at all).
fn beyond(value: &Value) -> bool {
    value.as_u64().is_none_or(|v| v > MAX_MS)
}

/// What a probe sends.
enum Probe {
    /// One event, in a tick at the current time: a field beyond the range rejects it alone.
    Event(Value),
    /// A whole request: a field beyond the range refuses it with this kind.
    Request(Value, &'static str),
}

/// Sets `path` (object keys) in `value` to `to`, creating objects on the way.
fn set(value: &mut Value, path: &[&str], to: Value) {
    let mut at = value;
    for key in path {
        if !at[*key].is_object() && !at[*key].is_array() {
            at[*key] = json!({});
        }
        at = &mut at[*key];
    }
    *at = to;
}

/// Probe `which` with value `v`, and the field its error must name (`None`: an amount, whose
/// refusal need not mention the time range). `cluster` is the configured CLUSTER; `job` a job
/// the scheduler tracks, if any.
fn probe(which: usize, v: Value, cluster: &Value, job: &str) -> (Probe, Option<&'static str>) {
    let submit = |field: &str, v: Value| {
        let mut spec = json!({"id": "probe", "time_limit_ms": 60_000, "groups": [{"count": 1}]});
        set(&mut spec, &[field], v);
        Probe::Event(json!({"type": "submit", "job": spec}))
    };
    let group = |field: &str, v: Value| {
        let mut spec = json!({"id": "probe", "time_limit_ms": 60_000, "groups": [{"count": 1}]});
        spec["groups"][0][field] = v;
        Probe::Event(json!({"type": "submit", "job": spec}))
    };
    let reconfigure = |path: &[&str], v: Value| {
        let mut cluster = cluster.clone();
        set(&mut cluster, path, v);
        Probe::Request(
            json!({"op": "reconfigure", "cluster": cluster}),
            "invalid_config",
        )
    };
    let partition_max = |v: Value| {
        let mut cluster = cluster.clone();
        let partitions = cluster["partitions"].as_array().map_or(0, Vec::len);
        if partitions == 0 {
            cluster["partitions"] = json!([{"name": "default", "default": true}]);
        }
        cluster["partitions"][0]["max_time_ms"] = v;
        Probe::Request(
            json!({"op": "reconfigure", "cluster": cluster}),
            "invalid_config",
        )
    };
    let window = |start: Value, end: Value| {
        let mut cluster = cluster.clone();
        let node = cluster["nodes"][0]["name"].clone();
        cluster["maintenance"] = json!([{"nodes": [node], "start_ms": start, "end_ms": end}]);
        Probe::Request(
            json!({"op": "reconfigure", "cluster": cluster}),
            "invalid_config",
        )
    };
    let plugin = |spec: Value| reconfigure(&["policy", "plugins"], json!([spec]));
    let node_add = |field: &str, v: Value| {
        let mut node = json!({"name": "probe-node", "cpus": 4});
        set(&mut node, &[field], v);
        Probe::Event(json!({"type": "node_add", "node": node}))
    };
    let node = cluster["nodes"][0]["name"].clone();
    match which {
        0 => (submit("submit_ms", v), Some("submit_ms")),
        1 => (submit("begin_ms", v), Some("begin_ms")),
        2 => (submit("time_limit_ms", v), Some("time_limit_ms")),
        3 => (submit("grace_ms", v), Some("grace_ms")),
        4 => (
            Probe::Event(json!({"type": "set_time_limit", "job": job, "time_limit_ms": v})),
            Some("time_limit_ms"),
        ),
        5 => (
            Probe::Event(json!({"type": "maintenance_add", "id": "probe-window",
                "nodes": [node], "start_ms": v, "end_ms": MAX_MS})),
            Some("start_ms"),
        ),
        6 => (
            Probe::Event(json!({"type": "maintenance_add", "id": "probe-window",
                "nodes": [node], "start_ms": 0, "end_ms": v})),
            Some("end_ms"),
        ),
        7 => (
            Probe::Request(json!({"op": "explain", "at_ms": v}), "parse"),
            Some("at_ms"),
        ),
        8 => (partition_max(v), Some("max_time_ms")),
        9 => (window(v, json!(MAX_MS)), Some("maintenance[0].start_ms")),
        10 => (window(json!(0), v), Some("maintenance[0].end_ms")),
        11 => (
            reconfigure(&["policy", "min_job_age_ms"], v),
            Some("policy.min_job_age_ms"),
        ),
        12 => (
            reconfigure(&["policy", "priority", "max_age_ms"], v),
            Some("policy.priority.max_age_ms"),
        ),
        13 => (
            reconfigure(&["policy", "fairshare", "half_life_ms"], v),
            Some("policy.fairshare.half_life_ms"),
        ),
        14 => (
            reconfigure(
                &["policy", "admission_fair_sharing", "usage_half_life_ms"],
                v,
            ),
            Some("usage_half_life_ms"),
        ),
        15 => (
            reconfigure(
                &[
                    "policy",
                    "admission_fair_sharing",
                    "usage_sampling_interval_ms",
                ],
                v,
            ),
            Some("usage_sampling_interval_ms"),
        ),
        16 => (
            reconfigure(&["policy", "wait_for_ready", "timeout_ms"], v),
            Some("policy.wait_for_ready.timeout_ms"),
        ),
        17 => (
            reconfigure(&["policy", "wait_for_ready", "recovery_timeout_ms"], v),
            Some("policy.wait_for_ready.recovery_timeout_ms"),
        ),
        18 => (
            reconfigure(&["policy", "wait_for_ready", "backoff_base_ms"], v),
            Some("policy.wait_for_ready.backoff_base_ms"),
        ),
        19 => (
            reconfigure(&["policy", "wait_for_ready", "backoff_max_ms"], v),
            Some("policy.wait_for_ready.backoff_max_ms"),
        ),
        20 => (
            plugin(json!({"name": "min_run_time", "min_ms": v})),
            Some("min_ms"),
        ),
        21 => (
            plugin(json!({"name": "las", "min_quantum_ms": v})),
            Some("min_quantum_ms"),
        ),
        22 => (
            plugin(json!({"name": "las", "thresholds_gpu_ms": [v]})),
            Some("thresholds_gpu_ms"),
        ),
        23 => (
            plugin(json!({"name": "avoid_gpu_faults", "within_ms": v})),
            Some("within_ms"),
        ),
        // Amounts: refused or accepted by their own rules.
        24 => (group("cpus", v), None),
        25 => (group("memory_mib", v), None),
        26 => (group("gpus", v), None),
        27 => (group("count", v), None),
        28 => (node_add("cpus", v), None),
        29 => (node_add("memory_mib", v), None),
        30 => (
            Probe::Event(json!({"type": "set_priority", "job": job, "priority": v})),
            None,
        ),
        _ => (
            reconfigure(
                &["queues"],
                json!([{"name": "probe-queue",
                "quota": {"cpu": {"nominal": v}}}]),
            ),
            None,
        ),
    }
}

const PROBES: usize = 32;

fn snapshot(shim: &mut Shim) -> Value {
    send(shim, json!({"op": "snapshot"}))
}

/// A shim restored from `state` (a snapshot reply).
fn restored(state: &Value) -> Shim {
    let mut shim = Shim::default();
    let reply = send(&mut shim, json!({"op": "restore", "state": state["state"]}));
    assert_eq!(reply["ok"], true, "{reply}");
    shim
}

/// Sends one probe at `at_ms` and checks it; the shim goes on from whatever it accepted.
fn run_probe(shim: &mut Shim, at_ms: u64, which: usize, v: Value, cluster: &Value) {
    let explained = shim.scheduler().map(|s| s.explain());
    let job = explained
        .as_ref()
        .and_then(|e| {
            let running = e.running.iter().map(|r| r.job.clone());
            e.pending
                .iter()
                .map(|p| p.job.clone())
                .chain(running)
                .next()
        })
        .unwrap_or_else(|| "ghost".to_string());
    let (probe, field) = probe(which, v.clone(), cluster, &job);
    let before = snapshot(shim);
    let out_of_range = beyond(&v) && field.is_some();
    match probe {
        Probe::Event(event) => {
            let reply = send(
                shim,
                json!({"op": "tick", "at_ms": at_ms, "events": [event]}),
            );
            assert_eq!(reply["ok"], true, "{reply}");
            let rejected = reply["rejected"].as_array().unwrap();
            let message = rejected
                .first()
                .map(|r| r["error"]["message"].as_str().unwrap().to_string());
            if out_of_range {
                let message = message
                    .as_deref()
                    .unwrap_or_else(|| panic!("{v} accepted: {reply}"));
                assert_eq!(rejected[0]["error"]["kind"], "invalid", "{reply}");
                // A number no u64 holds fails to parse; inside a tagged event other than
                // `submit` and `node_add`, serde's message does not name its field.
                if v.is_u64() {
                    assert!(message.contains(field.unwrap()), "{message}");
                    assert!(message.contains("beyond the time range"), "{message}");
                }
            }
            if let Some(message) = &message {
                assert!(
                    out_of_range || !message.contains("beyond the time range"),
                    "{v} is in range: {message}"
                );
                // Rejected: the state is the one a tick without the event gives.
                let mut control = restored(&before);
                let expected = send(
                    &mut control,
                    json!({"op": "tick", "at_ms": at_ms, "events": []}),
                );
                assert_eq!(reply["decisions"], expected["decisions"]);
                assert_eq!(snapshot(shim), snapshot(&mut control), "{message}");
            }
        }
        Probe::Request(request, kind) => {
            let reply = send(shim, request);
            if out_of_range {
                assert_eq!(reply["ok"], false, "{v} accepted: {reply}");
                assert_eq!(reply["error"]["kind"], kind, "{reply}");
                let message = reply["error"]["message"].as_str().unwrap();
                // As for events: a number no u64 holds, in a request's own field, fails to
                // parse without the field's name; a CLUSTER's errors always name it.
                if v.is_u64() || kind != "parse" {
                    assert!(message.contains(field.unwrap()), "{message}");
                }
                if v.is_u64() {
                    assert!(message.contains("beyond the time range"), "{message}");
                }
            }
            if reply["ok"] == false {
                let message = reply["error"]["message"].as_str().unwrap();
                assert!(
                    out_of_range || !message.contains("beyond the time range"),
                    "{v} is in range: {message}"
                );
                assert_eq!(snapshot(shim), before, "{reply}");
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 48 * scale(),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Probes at random points of random streams, each followed by a tick whose `at_ms` is
    /// beyond the range; at the end, a tick at the last time in the range is accepted, and
    /// one after it refused.
    #[test]
    fn values_beyond_the_range_are_refused_naming_the_field_and_change_nothing(
        (cluster, stream) in scenario(12),
        probes in vec((0usize..12, 0..PROBES, 0..EDGE_COUNT, 0..EDGE_COUNT), 1..8),
    ) {
        let cluster = serde_json::to_value(&cluster).unwrap();
        let mut shim = Shim::default();
        let reply = send(&mut shim, json!({"op": "configure", "cluster": cluster}));
        prop_assume!(reply["ok"] == true);
        let mut last = 0;
        for (i, step) in stream.ticks.iter().enumerate() {
            for &(at, which, pick, tick_pick) in probes.iter().filter(|p| p.0 == i) {
                run_probe(&mut shim, last, which, edge(pick), &cluster);
                let tick_at = edge(tick_pick);
                if beyond(&tick_at) {
                    let before = snapshot(&mut shim);
                    let reply = send(&mut shim, json!({"op": "tick", "at_ms": tick_at, "events": []}));
                    prop_assert_eq!(&reply["error"]["kind"], "parse", "{} {}", at, reply);
                    prop_assert_eq!(snapshot(&mut shim), before);
                }
            }
            let sent = resolve(shim.scheduler().unwrap(), &step.events);
            let reply = send(&mut shim, json!({"op": "tick", "at_ms": step.at_ms, "events": sent}));
            prop_assert_eq!(&reply["ok"], true, "{}", reply);
            last = step.at_ms;
        }
        let reply = send(&mut shim, json!({"op": "tick", "at_ms": MAX_MS, "events": []}));
        prop_assert_eq!(&reply["ok"], true, "{}", reply);
        let before = snapshot(&mut shim);
        let reply = send(&mut shim, json!({"op": "tick", "at_ms": MAX_MS + 1, "events": []}));
        prop_assert_eq!(&reply["error"]["kind"], "parse");
        prop_assert_eq!(snapshot(&mut shim), before);
    }
}

/// Issue 28's report: `at_ms` 2^63 and 2^64 − 1 were accepted, and every later tick was then
/// refused as going backwards. Both are refused now, as `parse`, naming `at_ms`, and the next
/// tick in the range is accepted.
#[test]
fn a_tick_beyond_the_range_is_refused_and_the_next_one_accepted() {
    let mut shim = Shim::default();
    let cluster = json!({"nodes": [{"name": "n1", "cpus": 2}]});
    send(&mut shim, json!({"op": "configure", "cluster": cluster}));
    send(
        &mut shim,
        json!({"op": "tick", "at_ms": 1000, "events": []}),
    );
    let before = snapshot(&mut shim);
    for at in [9_223_372_036_854_775_808u64, 18_446_744_073_709_551_615] {
        let reply = send(&mut shim, json!({"op": "tick", "at_ms": at, "events": []}));
        assert_eq!(reply["error"]["kind"], "parse", "{reply}");
        let message = reply["error"]["message"].as_str().unwrap();
        assert_eq!(
            message,
            format!("at_ms: {at} is beyond the time range (at most 9007199254740991 ms, 2^53 - 1)")
        );
        assert_eq!(snapshot(&mut shim), before);
    }
    let reply = send(
        &mut shim,
        json!({"op": "tick", "at_ms": 2000, "events": []}),
    );
    assert_eq!(reply["ok"], true, "{reply}");
}

/// In Rust: `Scheduler::tick` refuses the time with a typed error and changes nothing; an
/// event beyond the range is rejected alone, naming its field.
#[test]
fn the_rust_api_refuses_times_beyond_the_range() {
    use gangway::{Event, JobSpec, Scheduler, TickError};
    let cluster = serde_json::from_value(json!({"nodes": [{"name": "n1", "cpus": 2}]})).unwrap();
    let mut s = Scheduler::new(cluster).unwrap();
    gangway::testkit::checked_tick(&mut s, 5, vec![]).unwrap();
    let err = s.tick(MAX_MS + 1, vec![]).unwrap_err();
    assert_eq!(
        err,
        TickError::TimeOutOfRange {
            field: "at_ms".into(),
            value: MAX_MS + 1
        }
    );
    assert_eq!(s.last_tick(), Some(5));
    let mut job = JobSpec::new("a", 1_000, 1);
    job.begin_ms = Some(u64::MAX);
    let out = gangway::testkit::checked_tick(&mut s, 6, vec![Event::Submit { job }]).unwrap();
    assert_eq!(
        out.rejected[0].error.message,
        "submit a: begin_ms: 18446744073709551615 is beyond the time range \
         (at most 9007199254740991 ms, 2^53 - 1)"
    );
    assert_eq!(s.state().pending_count(), 0);
}
