//! Topology-aware gang placement (issue 6): packing gangs into one rack, best fit among racks,
//! `required`/`preferred` levels, the placement modes inside a domain, NVLink islands, backfill
//! reservations under a constraint, bad inputs, the shim, and a
//! property that required-level gangs always land in one domain. Every tick runs the oracle.

use crate::common;

use common::build::{self, finished, submit};
use common::decisions::{placement, starts};
use common::shim::send;
use gangway::protocol::Shim;
use gangway::testkit::checked_tick;
use gangway::{ErrorKind, Event, JobSpec, PlacementEntry, Scheduler, TickOutcome};
use proptest::prelude::*;
use serde_json::{Value, json};

const MIN: u64 = 60_000;

/// A node with 4 GPUs in block `block`, rack `rack`.
fn node(name: &str, block: &str, rack: &str) -> Value {
    json!({"name": name, "cpus": 16, "memory_mib": 64000,
           "gpus": {"model": "h100", "count": 4, "memory_mib": 81920},
           "labels": {"block": block, "rack": rack}})
}

fn scheduler(nodes: Vec<Value>) -> Scheduler {
    build::scheduler(json!({
        "topology": ["block", "rack"], "nodes": nodes,
        "policy": {"backfill": {"mode": "easy"}}
    }))
}

/// n1 r1, n2 r2, n3 r1, n4 r2, all in block b1: node ids alternate between the racks.
fn interleaved() -> Scheduler {
    scheduler(vec![
        node("n1", "b1", "r1"),
        node("n2", "b1", "r2"),
        node("n3", "b1", "r1"),
        node("n4", "b1", "r2"),
    ])
}

fn job(value: Value) -> JobSpec {
    serde_json::from_value(value).unwrap()
}

/// `count` tasks of `gpus` GPUs, with an optional group `topology` and placement mode.
fn gpu_job(id: &str, count: u32, gpus: u32, limit: u64, extra: Value) -> Event {
    let mut group = json!({"count": count, "gpus": gpus});
    if let (Some(g), Some(e)) = (group.as_object_mut(), extra.as_object()) {
        g.extend(e.clone());
    }
    submit(job(
        json!({"id": id, "time_limit_ms": limit, "groups": [group]}),
    ))
}

/// The nodes each started job landed on, by job.
fn placements(out: &TickOutcome) -> Vec<(String, Vec<String>)> {
    starts(&out.decisions)
        .into_iter()
        .map(|(job, placement)| (job.to_string(), nodes(placement)))
        .collect()
}

/// The nodes `id` started on; empty if it did not start.
fn nodes_of(out: &TickOutcome, id: &str) -> Vec<String> {
    nodes(placement(&out.decisions, id).unwrap_or_default())
}

fn nodes(placement: &[PlacementEntry]) -> Vec<String> {
    placement.iter().map(|p| p.node.to_string()).collect()
}

#[test]
fn a_gang_is_packed_in_one_rack_rather_than_over_racks() {
    let mut s = interleaved();
    let out = checked_tick(&mut s, 0, vec![gpu_job("g", 2, 4, MIN, json!({}))]).unwrap();
    // By node order alone the gang would take n1 and n2, in two racks.
    assert_eq!(nodes_of(&out, "g"), ["n1", "n3"]);
}

#[test]
fn without_a_topology_placement_is_as_before() {
    let mut s = build::scheduler(json!({"nodes": [
        node("n1", "b1", "r1"), node("n2", "b1", "r2"), node("n3", "b1", "r1")]}));
    let snapshot = serde_json::to_value(s.snapshot()).unwrap();
    assert!(snapshot["state"].get("topology").is_none());
    let out = checked_tick(&mut s, 0, vec![gpu_job("g", 2, 4, MIN, json!({}))]).unwrap();
    assert_eq!(nodes_of(&out, "g"), ["n1", "n2"]);
}

#[test]
fn best_fit_picks_the_fuller_rack_that_fits() {
    let mut s = interleaved();
    let events = vec![
        gpu_job("first", 1, 4, MIN, json!({})),
        gpu_job("second", 1, 2, MIN, json!({})),
        gpu_job("wide", 2, 4, MIN, json!({"topology": {"required": "rack"}})),
    ];
    let out = checked_tick(&mut s, 0, events).unwrap();
    // first: both racks empty, the lower rack r1 (n1). second: r1 has 4 GPUs free, r2 has 8;
    // the fuller r1 still fits, so n3, keeping r2 whole for the wide gang.
    assert_eq!(nodes_of(&out, "first"), ["n1"]);
    assert_eq!(nodes_of(&out, "second"), ["n3"]);
    assert_eq!(nodes_of(&out, "wide"), ["n2", "n4"]);
}

/// `long` on n1 (r1) until 600 000, `short` on n2 (r2) until 300 000: n3 (r1) and n4 (r2) free.
fn one_free_node_per_rack() -> Scheduler {
    let mut s = interleaved();
    let events = vec![
        gpu_job("long", 1, 4, 10 * MIN, json!({"placement": "spread"})),
        gpu_job("short", 1, 4, 5 * MIN, json!({"placement": "spread"})),
    ];
    let out = checked_tick(&mut s, 0, events).unwrap();
    assert_eq!(nodes_of(&out, "long"), ["n1"]);
    assert_eq!(nodes_of(&out, "short"), ["n2"]);
    s
}

#[test]
fn a_required_level_blocks_when_no_domain_fits_although_the_cluster_has_room() {
    let mut s = one_free_node_per_rack();
    let out = checked_tick(
        &mut s,
        1,
        vec![gpu_job(
            "big",
            2,
            4,
            MIN,
            json!({"topology": {"required": "rack"}}),
        )],
    )
    .unwrap();
    assert!(placements(&out).is_empty(), "{:?}", out.decisions);
    let info = s.pending_info();
    assert_eq!(info[0].job, "big");
    // Planned when `short` ends and rack r2 is whole again.
    assert_eq!(info[0].estimated_start_ms, Some(5 * MIN));
}

#[test]
fn a_preferred_level_falls_back_to_the_block() {
    let mut s = one_free_node_per_rack();
    let out = checked_tick(
        &mut s,
        1,
        vec![gpu_job(
            "big",
            2,
            4,
            MIN,
            json!({"topology": {"preferred": "rack"}}),
        )],
    )
    .unwrap();
    assert_eq!(nodes_of(&out, "big"), ["n3", "n4"]);
}

#[test]
fn a_preferred_level_falls_back_to_anywhere() {
    let mut s = scheduler(vec![node("n1", "b1", "r1"), node("n2", "b2", "r1")]);
    let out = checked_tick(
        &mut s,
        0,
        vec![gpu_job(
            "big",
            2,
            4,
            MIN,
            json!({"topology": {"preferred": "rack"}}),
        )],
    )
    .unwrap();
    assert_eq!(nodes_of(&out, "big"), ["n1", "n2"]);
    // Same rack label under two blocks: two racks, so `required: rack` can never fit.
    let out = checked_tick(
        &mut s,
        1,
        vec![gpu_job(
            "never",
            2,
            4,
            MIN,
            json!({"topology": {"required": "rack"}}),
        )],
    )
    .unwrap();
    assert_eq!(out.rejected[0].error.kind, ErrorKind::Unsatisfiable);
    assert!(out.rejected[0].error.message.contains("topology"));
}

#[test]
fn strict_spread_spreads_inside_the_required_rack() {
    let mut s = interleaved();
    let extra = json!({"placement": "strict_spread", "topology": {"required": "rack"}});
    let out = checked_tick(&mut s, 0, vec![gpu_job("s", 2, 1, MIN, extra)]).unwrap();
    assert_eq!(nodes_of(&out, "s"), ["n1", "n3"]);
    // Three tasks on distinct nodes of one rack: no rack has three nodes.
    let extra = json!({"placement": "strict_spread", "topology": {"required": "rack"}});
    let out = checked_tick(&mut s, 1, vec![gpu_job("t", 3, 1, MIN, extra)]).unwrap();
    assert_eq!(out.rejected[0].error.kind, ErrorKind::Unsatisfiable);
}

#[test]
fn each_constrained_group_gets_its_own_domain_and_free_groups_share_the_gang_domain() {
    let mut s = interleaved();
    let spec = job(json!({"id": "mixed", "time_limit_ms": MIN, "groups": [
        {"count": 1, "gpus": 4},
        {"count": 2, "gpus": 4, "topology": {"required": "rack"}}
    ]}));
    let out = checked_tick(&mut s, 0, vec![submit(spec)]).unwrap();
    // The whole gang fits no rack; inside block b1 the free group takes n1, the required
    // group the whole rack r2.
    assert_eq!(nodes_of(&out, "mixed"), ["n1", "n2", "n4"]);
}

#[test]
fn elastic_groups_keep_their_size_by_default_and_their_locality_when_asked() {
    let mut s = interleaved();
    let elastic = |id: &str, topology: Value| {
        let mut group = json!({"count": 4, "min_count": 2, "gpus": 4});
        if !topology.is_null() {
            group["topology"] = topology;
        }
        submit(job(
            json!({"id": id, "time_limit_ms": MIN, "groups": [group]}),
        ))
    };
    // No rack holds four tasks: the default places all four cluster-wide.
    let out = checked_tick(&mut s, 0, vec![elastic("free", Value::Null)]).unwrap();
    assert_eq!(nodes_of(&out, "free").len(), 4);
    let mut s = interleaved();
    let required = json!({"required": "rack"});
    let out = checked_tick(&mut s, 0, vec![elastic("local", required)]).unwrap();
    assert_eq!(nodes_of(&out, "local"), ["n1", "n3"]);
}

#[test]
fn an_exclusive_gang_needs_whole_free_nodes_in_its_rack() {
    let mut s = interleaved();
    let out = checked_tick(&mut s, 0, vec![gpu_job("small", 1, 1, MIN, json!({}))]).unwrap();
    assert_eq!(nodes_of(&out, "small"), ["n1"]);
    let spec = job(json!({"id": "ex", "time_limit_ms": MIN, "exclusive": true,
        "groups": [{"count": 2, "gpus": 1, "placement": "strict_spread",
                    "topology": {"required": "rack"}}]}));
    let out = checked_tick(&mut s, 1, vec![submit(spec)]).unwrap();
    assert_eq!(nodes_of(&out, "ex"), ["n2", "n4"]);
}

/// The GPUs of the first placement entry of `id`'s start; panics if it did not start.
fn gpus_of(out: &TickOutcome, id: &str) -> Vec<u32> {
    placement(&out.decisions, id).unwrap()[0].gpus.clone()
}

#[test]
fn gpus_of_a_task_are_chosen_within_one_nvlink_island() {
    let mut s = build::scheduler(json!({"nodes": [
        {"name": "n1", "cpus": 16, "gpus": {"model": "h100", "count": 8,
         "nvlink_islands": [[0, 1, 2, 3], [4, 5, 6, 7]]}}]}));
    let snapshot = serde_json::to_value(s.snapshot()).unwrap();
    assert_eq!(
        snapshot["state"]["nodes"][0]["nvlink_islands"],
        json!([0x0f, 0xf0])
    );
    let out = checked_tick(&mut s, 0, vec![gpu_job("one", 1, 1, MIN, json!({}))]).unwrap();
    assert_eq!(gpus_of(&out, "one"), [0]);
    // Best fit: island 0 has 3 free devices, island 1 four; both hold two.
    let out = checked_tick(&mut s, 1, vec![gpu_job("two", 1, 2, MIN, json!({}))]).unwrap();
    assert_eq!(gpus_of(&out, "two"), [1, 2]);
    // Four devices: only island 1 holds them (lowest-index first would give 3, 4, 5, 6).
    let out = checked_tick(&mut s, 2, vec![gpu_job("four", 1, 4, MIN, json!({}))]).unwrap();
    assert_eq!(gpus_of(&out, "four"), [4, 5, 6, 7]);
}

#[test]
fn without_an_island_that_holds_the_task_any_free_devices_are_taken() {
    let mut s = build::scheduler(json!({"nodes": [
        {"name": "n1", "cpus": 16, "gpus": {"model": "h100", "count": 5,
         "nvlink_islands": [[0, 1], [2, 3]]}}]}));
    // Device 4 is in no island: an island of its own, the best fit for one GPU.
    let out = checked_tick(&mut s, 0, vec![gpu_job("one", 1, 1, MIN, json!({}))]).unwrap();
    assert_eq!(gpus_of(&out, "one"), [4]);
    let out = checked_tick(&mut s, 1, vec![gpu_job("three", 1, 3, MIN, json!({}))]).unwrap();
    assert_eq!(gpus_of(&out, "three"), [0, 1, 2]);
}

#[test]
fn an_island_naming_a_missing_device_is_refused() {
    let cluster = build::config(json!({"nodes": [
        {"name": "n1", "cpus": 16, "gpus": {"model": "h100", "count": 2,
         "nvlink_islands": [[0, 2]]}}]}));
    let err = Scheduler::new(cluster).unwrap_err();
    assert_eq!(err.field, "nodes[0].gpus.nvlink_islands[0]");
    assert!(err.message.contains("device 2"), "{err}");
}

#[test]
fn a_backfill_reservation_respects_required_and_the_filler_avoids_its_rack() {
    let mut s = one_free_node_per_rack();
    let events = vec![
        gpu_job("big", 2, 4, MIN, json!({"topology": {"required": "rack"}})),
        gpu_job("filler", 1, 4, 20 * MIN, json!({"placement": "spread"})),
    ];
    let out = checked_tick(&mut s, 1, events).unwrap();
    // big is planned in rack r2 (n2, n4) at 300 000; the filler outlives that, so it may not
    // take n4 and lands on n3 in rack r1.
    assert_eq!(nodes_of(&out, "filler"), ["n3"]);
    let out = checked_tick(&mut s, 5 * MIN, vec![finished("short")]).unwrap();
    assert_eq!(nodes_of(&out, "big"), ["n2", "n4"]);
}

#[test]
fn removed_and_added_nodes_keep_the_tree_current() {
    let mut s = interleaved();
    checked_tick(&mut s, 0, vec![Event::NodeRemove { node: "n3".into() }]).unwrap();
    // The tree is current when a rack-bound gang sees one node left in r1 (n1) and takes r2.
    let extra = json!({"topology": {"required": "rack"}});
    let out = checked_tick(&mut s, 1, vec![gpu_job("g", 2, 4, MIN, extra.clone())]).unwrap();
    assert_eq!(nodes_of(&out, "g"), ["n2", "n4"]);
    let add = Event::NodeAdd {
        node: serde_json::from_value(node("n5", "b1", "r1")).unwrap(),
    };
    let out = checked_tick(&mut s, 2, vec![add, gpu_job("h", 2, 4, MIN, extra)]).unwrap();
    assert_eq!(nodes_of(&out, "h"), ["n1", "n5"]);
}

#[test]
fn a_restored_scheduler_rebuilds_the_tree_and_keeps_constraints() {
    let mut s = one_free_node_per_rack();
    let extra = json!({"topology": {"required": "rack"}});
    checked_tick(&mut s, 1, vec![gpu_job("big", 2, 4, MIN, extra)]).unwrap();
    let snapshot = serde_json::to_string(&s.snapshot()).unwrap();
    let mut restored = Scheduler::restore(serde_json::from_str(&snapshot).unwrap()).unwrap();
    let again = serde_json::to_value(restored.snapshot()).unwrap();
    assert_eq!(
        again["state"]["topology"],
        serde_json::to_value(s.snapshot()).unwrap()["state"]["topology"]
    );
    let out = checked_tick(&mut restored, 2, vec![]).unwrap();
    assert!(placements(&out).is_empty(), "{:?}", out.decisions);
    assert_eq!(restored.pending_info()[0].estimated_start_ms, Some(5 * MIN));
}

/// Racks tie on what they have free, and the earlier domain wins the tie. Domain ids number
/// racks in the order they first appeared, and a rack stays when its last node goes, so after
/// n1 (rack r2) is removed and n3 comes back into r2, r2 still ranks before r1; a tree rebuilt
/// from the node table alone numbers r1 first. The restore (from the snapshot's JSON) must
/// number them as the original did and place the next gang identically (issue 28).
#[test]
fn a_restored_scheduler_numbers_racks_as_the_original_after_nodes_came_and_went() {
    let mut s = scheduler(vec![node("n1", "b1", "r2"), node("n2", "b1", "r1")]);
    checked_tick(&mut s, 0, vec![Event::NodeRemove { node: "n1".into() }]).unwrap();
    let add = Event::NodeAdd {
        node: serde_json::from_value(node("n3", "b1", "r2")).unwrap(),
    };
    checked_tick(&mut s, 1, vec![add]).unwrap();
    let snapshot = serde_json::to_string(&s.snapshot()).unwrap();
    let mut restored = Scheduler::restore(serde_json::from_str(&snapshot).unwrap()).unwrap();
    let extra = json!({"topology": {"required": "rack"}});
    let original = checked_tick(&mut s, 2, vec![gpu_job("g", 1, 4, MIN, extra.clone())]).unwrap();
    let again = checked_tick(&mut restored, 2, vec![gpu_job("g", 1, 4, MIN, extra)]).unwrap();
    assert_eq!(nodes_of(&original, "g"), ["n3"]);
    assert_eq!(again, original);
    // A snapshot keeps the tree as its domains' paths, in id order.
    let paths = |s: &Scheduler| {
        serde_json::to_value(s.snapshot()).unwrap()["state"]["topology"]["domains"].clone()
    };
    assert_eq!(paths(&restored), paths(&s));
}

/// A snapshot's topology numbering is checked: one that does not fit the configuration's
/// levels is refused as an inconsistent snapshot, and one without a numbering (from before
/// it was kept) numbers the domains afresh.
#[test]
fn a_snapshot_topology_numbering_is_checked() {
    let s = scheduler(vec![node("n1", "b1", "r2"), node("n2", "b1", "r1")]);
    let snapshot = serde_json::to_value(s.snapshot()).unwrap();
    let restore = |state: Value| -> Result<Scheduler, String> {
        let snapshot = serde_json::from_value(state).map_err(|e| e.to_string())?;
        Scheduler::restore(snapshot).map_err(|e| e.to_string())
    };
    let mut wrong_levels = snapshot.clone();
    wrong_levels["state"]["topology"]["levels"] = json!(["rack", "block"]);
    let err = restore(wrong_levels).err().unwrap();
    assert!(err.contains("topology: levels"), "{err}");
    let mut orphan = snapshot.clone();
    orphan["state"]["topology"]["domains"] = json!([["b1", "r1"]]);
    let err = restore(orphan).err().unwrap();
    assert!(err.contains("before its parent domain"), "{err}");
    let mut old = snapshot.clone();
    old["state"].as_object_mut().unwrap().remove("topology");
    let restored = restore(old).unwrap();
    let domains =
        serde_json::to_value(restored.snapshot()).unwrap()["state"]["topology"]["domains"].clone();
    assert_eq!(domains.as_array().map(Vec::len), Some(3));
}

#[test]
fn bad_topology_inputs_are_refused_with_state_unchanged() {
    // Configure: a node lacking a level's label.
    let cluster = build::config(json!({"topology": ["block", "rack"],
        "nodes": [node("n1", "b1", "r1"),
                  {"name": "n2", "cpus": 4, "labels": {"block": "b1"}}]}));
    let err = Scheduler::new(cluster).unwrap_err();
    assert_eq!(err.field, "nodes[1].labels");
    assert!(
        err.message.contains("n2") && err.message.contains("\"rack\""),
        "{err}"
    );
    let dup = build::config(json!({"topology": ["rack", "rack"], "nodes": []}));
    assert_eq!(Scheduler::new(dup).unwrap_err().field, "topology[1]");

    let mut s = interleaved();
    checked_tick(&mut s, 0, vec![gpu_job("run", 1, 1, MIN, json!({}))]).unwrap();
    let before = serde_json::to_value(s.snapshot()).unwrap();
    // Unknown level, and a node_add lacking a label.
    let bad_add = Event::NodeAdd {
        node: serde_json::from_value(json!({"name": "n9", "cpus": 4, "labels": {"rack": "r1"}}))
            .unwrap(),
    };
    let out = checked_tick(
        &mut s,
        0,
        vec![
            gpu_job("x", 1, 1, MIN, json!({"topology": {"required": "row"}})),
            bad_add,
        ],
    )
    .unwrap();
    assert_eq!(out.rejected.len(), 2);
    assert_eq!(out.rejected[0].error.kind, ErrorKind::Invalid);
    assert!(out.rejected[0].error.message.contains("\"row\""));
    assert_eq!(out.rejected[1].error.kind, ErrorKind::Invalid);
    assert!(out.rejected[1].error.message.contains("\"block\""));
    assert_eq!(serde_json::to_value(s.snapshot()).unwrap(), before);
    assert!(s.state().node_by_name("n9").is_none());

    // Reconfigure to a level some node lacks: refused, nothing changes.
    let mut config = s.state().config().clone();
    config.topology = vec!["block".into(), "row".into()];
    let err = s.reconfigure(config).unwrap_err();
    assert!(err.message.contains("\"row\""), "{err}");
    assert_eq!(serde_json::to_value(s.snapshot()).unwrap(), before);

    // A constraint without a topology.
    let mut s = build::scheduler(json!({"nodes": [node("n1", "b1", "r1")]}));
    let out = checked_tick(
        &mut s,
        0,
        vec![gpu_job(
            "x",
            1,
            1,
            MIN,
            json!({"topology": {"preferred": "rack"}}),
        )],
    )
    .unwrap();
    assert_eq!(out.rejected[0].error.kind, ErrorKind::Invalid);
    assert!(out.rejected[0].error.message.contains("no topology"));
    assert!(s.state().pending_count() == 0);
}

#[test]
fn reconfigure_adds_a_topology_to_a_running_cluster() {
    let mut s = build::scheduler(json!({"nodes": [
        node("n1", "b1", "r1"), node("n2", "b1", "r2"), node("n3", "b1", "r1")]}));
    let mut config = s.state().config().clone();
    config.topology = vec!["block".into(), "rack".into()];
    s.reconfigure(config).unwrap();
    let extra = json!({"topology": {"required": "rack"}});
    let out = checked_tick(&mut s, 0, vec![gpu_job("g", 2, 4, MIN, extra)]).unwrap();
    assert_eq!(nodes_of(&out, "g"), ["n1", "n3"]);
}

#[test]
fn the_shim_takes_topology_in_configure_and_submit() {
    let mut shim = Shim::default();
    let cluster = json!({"topology": ["block", "rack"], "nodes": [
        node("n1", "b1", "r1"), node("n2", "b1", "r2"), node("n3", "b1", "r1")]});
    let reply = send(&mut shim, json!({"op": "configure", "cluster": cluster}));
    assert_eq!(reply["ok"], true, "{reply}");
    let events = json!([
        {"type": "submit", "job": {"id": "g", "time_limit_ms": MIN,
         "groups": [{"count": 2, "gpus": 4, "topology": {"required": "rack"}}]}},
        {"type": "submit", "job": {"id": "bad", "time_limit_ms": MIN,
         "groups": [{"count": 1, "topology": {"required": "row"}}]}}
    ]);
    let reply = send(
        &mut shim,
        json!({"op": "tick", "at_ms": 0, "events": events}),
    );
    assert_eq!(reply["ok"], true, "{reply}");
    assert_eq!(
        reply["decisions"],
        json!([{"type": "start", "job": "g", "placement": [
            {"group": 0, "node": "n1", "tasks": 1, "gpus": [0, 1, 2, 3]},
            {"group": 0, "node": "n3", "tasks": 1, "gpus": [0, 1, 2, 3]}]}])
    );
    assert_eq!(reply["rejected"][0]["index"], 1);
    assert_eq!(reply["rejected"][0]["error"]["kind"], "invalid");
    // Both keys at once: the event is refused, naming the field.
    let events = json!([{"type": "submit", "job": {"id": "two", "time_limit_ms": MIN,
        "groups": [{"count": 1, "topology": {"required": "rack", "preferred": "block"}}]}}]);
    let reply = send(
        &mut shim,
        json!({"op": "tick", "at_ms": 1, "events": events}),
    );
    assert_eq!(reply["rejected"][0]["error"]["kind"], "invalid", "{reply}");
    let message = reply["rejected"][0]["error"]["message"].as_str().unwrap();
    assert!(message.contains("groups[0].topology"), "{message}");
    // A node missing a label in configure.
    let cluster = json!({"topology": ["rack"], "nodes": [{"name": "n1", "cpus": 1}]});
    let reply = send(&mut shim, json!({"op": "configure", "cluster": cluster}));
    assert_eq!(reply["ok"], false);
    assert!(reply.to_string().contains("n1"), "{reply}");
}

/// Each node's (block, rack) labels.
type Racks = Vec<(u8, u8)>;
/// Each job's (tasks, GPUs per task, required level is block, placement mode).
type Jobs = Vec<(u32, u32, bool, u8)>;

/// A random cluster and GPU jobs with required levels.
fn cluster_and_jobs() -> impl Strategy<Value = (Racks, Jobs)> {
    (
        prop::collection::vec((0u8..2, 0u8..3), 2..10),
        prop::collection::vec((1u32..4, 1u32..5, any::<bool>(), 0u8..3), 1..8),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, failure_persistence: crate::common::kept_beside(), ..ProptestConfig::default() })]

    #[test]
    fn required_level_gangs_always_land_in_one_domain((racks, jobs) in cluster_and_jobs()) {
        let nodes = racks
            .iter()
            .enumerate()
            .map(|(i, (b, r))| node(&format!("n{i}"), &format!("b{b}"), &format!("r{r}")))
            .collect();
        let mut s = scheduler(nodes);
        let mut events = Vec::new();
        for (i, (count, gpus, block, mode)) in jobs.iter().enumerate() {
            let level = if *block { "block" } else { "rack" };
            let placement = ["pack", "spread", "strict_spread"][*mode as usize];
            events.push(gpu_job(&format!("j{i}"), *count, *gpus, MIN * (1 + i as u64),
                json!({"placement": placement, "topology": {"required": level}})));
        }
        // The oracle checks every running required group after each tick.
        let mut at = 0;
        checked_tick(&mut s, at, events).unwrap();
        while !s.state().running_count() == 0 || !s.state().pending_count() == 0 {
            at += MIN;
            checked_tick(&mut s, at, vec![]).unwrap();
            prop_assert!(at < 100 * MIN, "jobs never finish");
        }
    }
}
