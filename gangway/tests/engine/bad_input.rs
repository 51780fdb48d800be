//! Every bad input of issue 2: each gets its typed error and changes nothing. Events are sent in a
//! tick at the same `at_ms` holding only the bad event, and the snapshot before and after must be
//! identical.

use crate::common;

use common::shim::send;
use gangway::protocol::Shim;
use serde_json::{Value, json};

const CLUSTER: &str = r#"{"nodes": [
    {"name": "n1", "cpus": 8, "memory_mib": 16000, "gpus": {"model": "a100", "count": 4, "memory_mib": 81920}},
    {"name": "n2", "cpus": 8, "memory_mib": 16000, "gpus": {"model": "a100", "count": 4, "memory_mib": 81920}},
    {"name": "n3", "cpus": 8, "memory_mib": 16000, "gpus": {"model": "a100", "count": 4, "memory_mib": 81920}},
    {"name": "n4", "cpus": 8, "memory_mib": 16000, "gpus": {"model": "a100", "count": 4, "memory_mib": 81920}}],
  "partitions": [{"name": "main", "max_time_ms": 3600000, "default": true}],
  "queues": [{"name": "team", "quota": {"gpu": {"nominal": 16}}}],
  "accounts": [{"name": "research"}]}"#;

fn snapshot(shim: &mut Shim) -> Value {
    send(shim, json!({"op": "snapshot"}))
}

/// A shim with a running job `run` (1 GPU) and a pending held job `wait`, at time 1000.
fn prepared() -> Shim {
    let mut shim = Shim::default();
    let cluster: Value = serde_json::from_str(CLUSTER).unwrap();
    assert_eq!(
        send(&mut shim, json!({"op": "configure", "cluster": cluster}))["ok"],
        true
    );
    let events = json!([
        {"type": "submit", "job": {"id": "run", "time_limit_ms": 600000, "groups": [{"count": 1, "gpus": 1}]}},
        {"type": "submit", "job": {"id": "wait", "time_limit_ms": 600000, "groups": [{"count": 1, "gpus": 4}]}},
        {"type": "hold", "job": "wait"}
    ]);
    let reply = send(
        &mut shim,
        json!({"op": "tick", "at_ms": 0, "events": events}),
    );
    assert_eq!(reply["rejected"], json!([]));
    send(
        &mut shim,
        json!({"op": "tick", "at_ms": 1000, "events": []}),
    );
    shim
}

/// Sends `event` alone at the last tick's time; asserts the error kind, the message fragment, and
/// that the state did not change.
fn assert_rejected(event: Value, kind: &str, fragment: &str) {
    let mut shim = prepared();
    let before = snapshot(&mut shim);
    let reply = send(
        &mut shim,
        json!({"op": "tick", "at_ms": 1000, "events": [event]}),
    );
    assert_eq!(reply["ok"], true, "{reply}");
    let rejected = reply["rejected"].as_array().unwrap();
    assert_eq!(rejected.len(), 1, "{reply}");
    assert_eq!(rejected[0]["index"], 0);
    assert_eq!(rejected[0]["error"]["kind"], kind, "{reply}");
    let message = rejected[0]["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(fragment),
        "message {message:?} lacks {fragment:?}"
    );
    assert_eq!(reply["decisions"], json!([]));
    assert_eq!(snapshot(&mut shim), before, "state changed");
}

fn job(extra: Value) -> Value {
    let mut job = json!({"id": "new", "time_limit_ms": 60000, "groups": [{"count": 1}]});
    for (k, v) in extra.as_object().unwrap() {
        job[k] = v.clone();
    }
    json!({"type": "submit", "job": job})
}

#[test]
fn unknown_job() {
    assert_rejected(
        json!({"type": "cancel", "job": "ghost"}),
        "unknown_job",
        "ghost",
    );
}

#[test]
fn duplicate_job_id() {
    assert_rejected(job(json!({"id": "run"})), "duplicate_job", "run");
}

#[test]
fn unknown_node() {
    assert_rejected(
        json!({"type": "node_down", "node": "n9"}),
        "unknown_node",
        "n9",
    );
}

#[test]
fn unknown_partition() {
    assert_rejected(job(json!({"partition": "gpu"})), "unknown_partition", "gpu");
}

#[test]
fn unknown_queue() {
    assert_rejected(job(json!({"queue": "other"})), "unknown_queue", "other");
}

#[test]
fn unknown_account() {
    assert_rejected(
        job(json!({"account": "nobody"})),
        "unknown_account",
        "nobody",
    );
}

#[test]
fn zero_count_group() {
    assert_rejected(job(json!({"groups": [{"count": 0}]})), "invalid", "count");
}

#[test]
fn negative_amount() {
    assert_rejected(
        job(json!({"groups": [{"count": 1, "cpus": -1}]})),
        "invalid",
        "cpus",
    );
    assert_rejected(
        job(json!({"groups": [{"count": 1, "memory_mib": -5}]})),
        "invalid",
        "memory_mib",
    );
}

#[test]
fn gpu_fraction_above_one() {
    assert_rejected(
        job(json!({"groups": [{"count": 1, "gpus": 1.5}]})),
        "invalid",
        "gpus",
    );
}

#[test]
fn amount_with_too_many_decimals() {
    assert_rejected(
        job(json!({"groups": [{"count": 1, "cpus": 0.0001}]})),
        "invalid",
        "decimals",
    );
}

#[test]
fn time_limit_above_partition_maximum() {
    assert_rejected(
        job(json!({"time_limit_ms": 3600001})),
        "invalid",
        "max_time_ms",
    );
}

#[test]
fn unknown_field_is_an_error() {
    assert_rejected(job(json!({"priorty": 5})), "invalid", "priorty");
}

#[test]
fn unsatisfiable_gang_names_the_reason() {
    let five = json!({"groups": [{"count": 5, "gpus": 1, "placement": "strict_spread"}]});
    assert_rejected(
        job(five),
        "unsatisfiable",
        "5 tasks with strict_spread but the partition main has 4 nodes",
    );
    let fat = json!({"groups": [{"count": 1, "gpus": 8}]});
    assert_rejected(job(fat), "unsatisfiable", "fits no node");
    let model = json!({"groups": [{"count": 1, "gpus": 1, "gpu_models": ["h100"]}]});
    assert_rejected(job(model), "unsatisfiable", "h100");
}

#[test]
fn elastic_gang_is_checked_at_min_count() {
    let mut shim = prepared();
    let elastic = job(
        json!({"groups": [{"count": 6, "min_count": 4, "gpus": 1, "placement": "strict_spread"}]}),
    );
    let reply = send(
        &mut shim,
        json!({"op": "tick", "at_ms": 1000, "events": [elastic]}),
    );
    assert_eq!(reply["rejected"], json!([]));
}

#[test]
fn finished_for_a_job_that_is_not_running() {
    let event = json!({"type": "finished", "job": "wait", "outcome": "completed"});
    assert_rejected(event, "invalid_state", "not running");
}

#[test]
fn stopped_for_a_job_not_asked_to_stop() {
    assert_rejected(
        json!({"type": "stopped", "job": "run"}),
        "invalid_state",
        "not asked to stop",
    );
}

#[test]
fn dependency_on_itself_or_unknown_job() {
    assert_rejected(
        job(json!({"after": [{"job": "new", "on": "ok"}]})),
        "invalid",
        "itself",
    );
    assert_rejected(
        job(json!({"after": [{"job": "ghost", "on": "ok"}]})),
        "unknown_job",
        "ghost",
    );
}

#[test]
fn bad_event_is_rejected_alone_and_the_others_apply() {
    let mut shim = prepared();
    let events = json!([
        {"type": "cancel", "job": "ghost"},
        {"type": "submit", "job": {"id": "ok", "time_limit_ms": 60000, "groups": [{"count": 1}]}}
    ]);
    let reply = send(
        &mut shim,
        json!({"op": "tick", "at_ms": 2000, "events": events}),
    );
    assert_eq!(reply["rejected"].as_array().unwrap().len(), 1);
    assert_eq!(reply["rejected"][0]["index"], 0);
    assert_eq!(reply["decisions"][0]["type"], "start");
    assert_eq!(reply["decisions"][0]["job"], "ok");
}

/// Requests refused as a whole: `ok: false`, nothing changes, the shim goes on.
fn assert_refused(shim: &mut Shim, line: &str, kind: &str, fragment: &str) {
    let before = if shim.scheduler().is_some() {
        Some(snapshot(shim))
    } else {
        None
    };
    let reply: Value = serde_json::from_str(&shim.handle_line(line)).unwrap();
    assert_eq!(reply["ok"], false, "{reply}");
    assert_eq!(reply["error"]["kind"], kind, "{reply}");
    let message = reply["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(fragment),
        "message {message:?} lacks {fragment:?}"
    );
    if let Some(before) = before {
        assert_eq!(snapshot(shim), before, "state changed");
    }
}

#[test]
fn tick_earlier_than_the_previous_one() {
    let mut shim = prepared();
    assert_refused(
        &mut shim,
        r#"{"op":"tick","at_ms":999,"events":[]}"#,
        "time_went_backwards",
        "999",
    );
}

#[test]
fn request_before_configure() {
    let mut shim = Shim::default();
    assert_refused(
        &mut shim,
        r#"{"op":"tick","at_ms":0,"events":[]}"#,
        "not_configured",
        "configure",
    );
    assert_refused(
        &mut shim,
        r#"{"op":"explain"}"#,
        "not_configured",
        "configure",
    );
}

#[test]
fn invalid_cluster_names_the_field() {
    let mut shim = prepared();
    let typo = r#"{"op":"configure","cluster":{"nodes":[{"name":"a","gpus":{"model":"a100","cuont":4}}]}}"#;
    assert_refused(&mut shim, typo, "invalid_config", "nodes[0].gpus");
    let dup = r#"{"op":"configure","cluster":{"nodes":[{"name":"a"},{"name":"a"}]}}"#;
    assert_refused(&mut shim, dup, "invalid_config", "nodes[1].name");
    let part = r#"{"op":"configure","cluster":{"nodes":[{"name":"a","partitions":["x"]}]}}"#;
    assert_refused(&mut shim, part, "invalid_config", "nodes[0].partitions[0]");
}

#[test]
fn malformed_lines_and_unknown_requests() {
    let mut shim = prepared();
    assert_refused(&mut shim, "{not json", "parse", "not JSON");
    assert_refused(
        &mut shim,
        r#"{"op":"tick","at_ms":1000,"events":[{"type":"submit","job":{"id":"x","time_limit_ms":NaN,"groups":[]}}]}"#,
        "parse",
        "not JSON",
    );
    assert_refused(&mut shim, r#"{"op":"dance"}"#, "parse", "dance");
    assert_refused(&mut shim, r#"[1,2]"#, "parse", "request");
    // The shim keeps serving.
    let reply = send(&mut shim, json!({"op": "explain"}));
    assert_eq!(reply["ok"], true);
}

#[test]
fn bad_snapshot_is_refused() {
    let mut shim = prepared();
    assert_refused(
        &mut shim,
        r#"{"op":"restore","state":{"bogus":1}}"#,
        "invalid_state",
        "state",
    );
}

#[test]
fn node_add_with_a_taken_name() {
    let node = json!({"name": "n2", "cpus": 8, "memory_mib": 16000});
    assert_rejected(
        json!({"type": "node_add", "node": node}),
        "invalid",
        "node_add n2: a node with this name exists",
    );
}

#[test]
fn zero_time_limit() {
    assert_rejected(
        json!({"type": "set_time_limit", "job": "run", "time_limit_ms": 0}),
        "invalid",
        "set_time_limit run: time_limit_ms must be positive",
    );
}

#[test]
fn gpu_index_out_of_range() {
    assert_rejected(
        json!({"type": "gpu_down", "node": "n1", "gpu": 4}),
        "invalid",
        "gpu 4 does not exist (the node has 4 GPUs)",
    );
}

#[test]
fn removing_an_unknown_maintenance_window() {
    assert_rejected(
        json!({"type": "maintenance_remove", "id": "patch"}),
        "unknown_maintenance",
        "patch",
    );
}

#[test]
fn reconfigure_with_an_invalid_cluster() {
    let mut shim = prepared();
    let empty_queue = r#"{"op":"reconfigure","cluster":{"nodes":[],"queues":[{"name":""}]}}"#;
    assert_refused(&mut shim, empty_queue, "invalid_config", "queues[0].name");
    let typo = r#"{"op":"reconfigure","cluster":{"nodes":[],"partitons":[]}}"#;
    assert_refused(&mut shim, typo, "invalid_config", "partitons");
}

#[test]
fn what_if_with_a_bad_job() {
    let mut shim = prepared();
    let duplicate =
        r#"{"op":"what_if","job":{"id":"run","time_limit_ms":10,"groups":[{"count":1}]}}"#;
    assert_refused(&mut shim, duplicate, "duplicate_job", "run");
    let fat =
        r#"{"op":"what_if","job":{"id":"x","time_limit_ms":10,"groups":[{"count":1,"gpus":8}]}}"#;
    assert_refused(&mut shim, fat, "unsatisfiable", "fits no node");
    let zero = r#"{"op":"what_if","job":{"id":"x","time_limit_ms":10,"groups":[{"count":0}]}}"#;
    assert_refused(&mut shim, zero, "invalid", "count");
}

#[test]
fn node_add_beyond_the_per_node_maximum() {
    let node = json!({"name": "big", "cpus": 2_000_000, "memory_mib": 16000});
    assert_rejected(
        json!({"type": "node_add", "node": node}),
        "invalid",
        "2000000 cpus; at most 1048576 per node",
    );
}

/// Every refusal about one field of the request names it in `error.path` (docs/protocol.md,
/// "Errors"), the message names it too, and the state is unchanged; one about the state or the
/// request as a whole has no path.
#[test]
fn refusals_name_the_field_in_their_path() {
    let mut shim = prepared();
    let cases = [
        (
            r#"{"op":"tick","at_ms":"soon","events":[]}"#,
            "parse",
            Some("at_ms"),
        ),
        (
            r#"{"op":"tick","at_ms":1e300,"events":[]}"#,
            "parse",
            Some("at_ms"),
        ),
        (
            r#"{"op":"tick","at_ms":9007199254740992,"events":[]}"#,
            "parse",
            Some("at_ms"),
        ),
        (
            r#"{"op":"tick","at_ms":999,"events":[]}"#,
            "time_went_backwards",
            Some("at_ms"),
        ),
        (
            r#"{"op":"tick","at_ms":2000,"events":{}}"#,
            "parse",
            Some("events"),
        ),
        (
            r#"{"op":"tick","at_ms":2000,"events":[],"evnts":[]}"#,
            "parse",
            Some("evnts"),
        ),
        (r#"{"op":"tick","at_ms":2000}"#, "parse", None),
        (r#"{"op":"explain","detail":1}"#, "parse", Some("detail")),
        (
            r#"{"op":"explain","at_ms":5}"#,
            "time_went_backwards",
            Some("at_ms"),
        ),
        (r#"{"op":"dance"}"#, "parse", Some("op")),
        (r#"{"op":7}"#, "parse", Some("op")),
        (r#"{"cluster":{}}"#, "parse", None),
        (r#"[1,2]"#, "parse", None),
        (
            r#"{"op":"reconfigure","cluster":{"nodes":[],"queues":[{"name":""}]}}"#,
            "invalid_config",
            Some("cluster.queues[0].name"),
        ),
        (
            r#"{"op":"configure","cluster":{"nodes":[{"name":"a","cpus":"x"}]}}"#,
            "invalid_config",
            Some("cluster.nodes[0].cpus"),
        ),
        (
            r#"{"op":"configure","cluster":{"nodes":[{"name":"a"},{"name":"a"}]}}"#,
            "invalid_config",
            Some("cluster.nodes[1].name"),
        ),
        (
            r#"{"op":"what_if","job":{"id":"x","time_limit_ms":1,"groups":[{"count":1,"gpus":-1}]}}"#,
            "invalid",
            Some("job.groups[0].gpus"),
        ),
        (
            r#"{"op":"what_if","job":{"id":"x"}}"#,
            "invalid",
            Some("job"),
        ),
        (
            r#"{"op":"what_if","job":{"id":"x","time_limit_ms":1,"groups":[{"count":1,"gpus":99}]}}"#,
            "unsatisfiable",
            None,
        ),
        (
            r#"{"op":"restore","state":{"version":9}}"#,
            "invalid_state",
            Some("state.version"),
        ),
        (
            r#"{"op":"restore","state":{"bogus":1}}"#,
            "invalid_state",
            Some("state.bogus"),
        ),
        ("{not json", "parse", None),
    ];
    for (line, kind, path) in cases {
        assert_refused(&mut shim, line, kind, "");
        let reply: Value = serde_json::from_str(&shim.handle_line(line)).unwrap();
        assert_eq!(reply["error"]["path"].as_str(), path, "{line}: {reply}");
        if let Some(path) = path {
            // The message names the field too.
            let message = reply["error"]["message"].as_str().unwrap();
            let field = path.rsplit(['.', '[']).next().unwrap();
            assert!(message.contains(field), "{line}: {reply}");
        }
    }
}

/// A number no field of its type holds (2^70 MiB, 1e300 GPUs) rejects its event alone, with
/// the path of the field, however it is written; a malformed event other than `submit` and
/// `node_add` is named by its position; an event the state refuses has no path.
#[test]
fn malformed_events_name_their_field_in_their_path() {
    let mut shim = prepared();
    let group = |field: &str, value: &str| {
        format!(
            r#"{{"type":"submit","job":{{"id":"p{field}","time_limit_ms":10,"groups":[{{"count":1,"{field}":{value}}}]}}}}"#
        )
    };
    let events = [
        group("memory_mib", "1180591620717411303424"),
        group("gpus", "1e300"),
        group("cpus", "-1e30"),
        r#"{"type":"node_add","node":{"name":"x","cpus":"many"}}"#.to_string(),
        r#"{"type":"set_priority","job":"a","priority":1e30}"#.to_string(),
        r#"{"type":"cancel","job":"nobody"}"#.to_string(),
        r#"{"type":"submit","job":{"id":"fine","time_limit_ms":10,"groups":[{"count":1}]}}"#
            .to_string(),
    ];
    let before = snapshot(&mut shim);
    let line = format!(
        r#"{{"op":"tick","at_ms":1000,"events":[{}]}}"#,
        events.join(",")
    );
    let reply: Value = serde_json::from_str(&shim.handle_line(&line)).unwrap();
    assert_eq!(reply["ok"], true, "{reply}");
    let rejected: Vec<(u64, &str, Option<&str>)> = reply["rejected"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let e = &r["error"];
            (
                r["index"].as_u64().unwrap(),
                e["kind"].as_str().unwrap(),
                e["path"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        rejected,
        [
            (0, "invalid", Some("events[0].job.groups[0].memory_mib")),
            (1, "invalid", Some("events[1].job.groups[0].gpus")),
            (2, "invalid", Some("events[2].job.groups[0].cpus")),
            (3, "invalid", Some("events[3].node.cpus")),
            (4, "invalid", Some("events[4]")),
            (5, "unknown_job", None),
        ]
    );
    assert_eq!(reply["decisions"][0]["job"], "fine", "{reply}");
    // Only the last event changed anything.
    let mut control = Shim::default();
    let restore = json!({"op": "restore", "state": before["state"]});
    assert_eq!(send(&mut control, restore)["ok"], true);
    let only = r#"{"op":"tick","at_ms":1000,"events":[{"type":"submit","job":{"id":"fine","time_limit_ms":10,"groups":[{"count":1}]}}]}"#;
    control.handle_line(only);
    assert_eq!(snapshot(&mut shim), snapshot(&mut control));
}

/// A snapshot whose node has more GPUs than a node may have, or a GPU model the state does not
/// know, is refused with `invalid_state` before anything is derived from it (found by the
/// Python fuzz test: the free index was built out of range and the shim panicked).
#[test]
fn a_snapshot_beyond_the_device_bounds_is_refused_without_a_panic() {
    let mut shim = prepared();
    let before = snapshot(&mut shim);
    for (field, value) in [
        ("gpu_count", json!(823)),
        ("gpu_count", json!(17)),
        ("gpu_model", json!(7)),
    ] {
        let mut state = before["state"].clone();
        state["state"]["nodes"][0][field] = value.clone();
        let reply = send(&mut shim, json!({"op": "restore", "state": state}));
        assert_eq!(reply["ok"], false, "{field} {value}: {reply}");
        assert_eq!(reply["error"]["kind"], "invalid_state", "{reply}");
        let message = reply["error"]["message"].as_str().unwrap();
        assert!(message.contains("node n1"), "{message}");
        assert_eq!(snapshot(&mut shim), before);
    }
    let state = before["state"].clone();
    assert_eq!(
        send(&mut shim, json!({"op": "restore", "state": state}))["ok"],
        true
    );
}
