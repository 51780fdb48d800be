//! MIG slices through the Rust API and the shim: nodes declared by slice list or mig-parted
//! configuration, one exclusive slice per MIG task, backfill reservations on slices, MIG-mode
//! GPUs kept from whole and fractional tasks, and bad inputs refused with the state unchanged
//! (`tests/scenarios/mig_*.json` run with the other scenarios). Every tick runs the invariant
//! oracle.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};

use common::build::{self, config, finished, submit};
use common::decisions::{pending, rejected_kinds, starts};
use common::shim::send;
use gangway::config::NodeConfig;
use gangway::protocol::Shim;
use gangway::testkit::checked_tick;
use gangway::{
    ClusterConfig, Decision, ErrorKind, Event, JobSpec, Milli, PlacementEntry, Scheduler,
    TaskGroup, TickOutcome,
};
use serde_json::{Value, json};

const HOUR: u64 = 3_600_000;

fn scheduler(nodes: Value) -> Scheduler {
    build::scheduler(json!({"nodes": nodes, "policy": {"backfill": {"mode": "conservative"}}}))
}

fn node(name: &str, gpus: Value) -> Value {
    json!({"name": name, "cpus": 64, "memory_mib": 512_000, "gpus": gpus})
}

fn mig_job(id: &str, limit: u64, profile: &str, count: u32) -> JobSpec {
    let mut job = JobSpec::new(id, limit, 1);
    job.groups = vec![TaskGroup {
        mig: Some(profile.into()),
        ..TaskGroup::new(count)
    }];
    job
}

/// Each started job's placement, by job.
fn placements(out: &TickOutcome) -> BTreeMap<String, Vec<PlacementEntry>> {
    starts(&out.decisions)
        .into_iter()
        .map(|(job, placement)| (job.to_string(), placement.to_vec()))
        .collect()
}

fn slices(entries: &[PlacementEntry]) -> Vec<(u32, u32, String)> {
    entries
        .iter()
        .flat_map(|e| e.mig.iter())
        .map(|m| (m.gpu, m.slice, m.profile.clone()))
        .collect()
}

fn estimate(s: &Scheduler, job: &str) -> Option<u64> {
    pending(s, job).estimated_start_ms
}

#[test]
fn seven_1g_tasks_fill_an_all_1g_a100_and_the_eighth_is_reserved_at_the_first_end() {
    let mut s = scheduler(json!([node(
        "m1",
        json!({"model": "a100-80gb", "count": 1, "mig_config": "all-1g.10gb"})
    )]));
    let jobs = (0..7)
        .map(|i| submit(mig_job(&format!("j{i}"), HOUR * (i + 1), "1g.10gb", 1)))
        .collect();
    let out = checked_tick(&mut s, 0, jobs).unwrap();
    let started = placements(&out);
    assert_eq!(started.len(), 7);
    let mut held = BTreeSet::new();
    for placement in started.values() {
        assert!(
            placement
                .iter()
                .all(|e| e.gpus.is_empty() && &*e.node == "m1")
        );
        for (gpu, slice, profile) in slices(placement) {
            assert_eq!((gpu, profile.as_str()), (0, "1g.10gb"));
            assert!(held.insert(slice), "slice {slice} given twice");
        }
    }
    assert_eq!(held, (0..7).collect());
    let out = checked_tick(
        &mut s,
        1_000,
        vec![submit(mig_job("j7", HOUR, "1g.10gb", 1))],
    )
    .unwrap();
    assert!(placements(&out).is_empty());
    assert_eq!(estimate(&s, "j7"), Some(HOUR));
    // j0 held slice 0; it ends and j7 takes that slice.
    let out = checked_tick(&mut s, 2_000, vec![finished("j0")]).unwrap();
    assert_eq!(
        slices(&placements(&out)["j7"]),
        [(0, 0, "1g.10gb".to_string())]
    );
}

#[test]
fn a_balanced_layout_serves_mixed_profiles_and_one_gang_holds_several_slices() {
    let mut s = scheduler(json!([node(
        "h1",
        json!({"model": "h100", "count": 2, "mig_config": "all-balanced"})
    )]));
    let mut mixed = mig_job("mixed", HOUR, "3g.40gb", 2);
    mixed.groups.push(TaskGroup {
        mig: Some("2g.20gb".into()),
        ..TaskGroup::new(2)
    });
    mixed.groups.push(TaskGroup {
        mig: Some("1g.10gb".into()),
        ..TaskGroup::new(3)
    });
    let events = vec![
        submit(mixed),
        submit(mig_job("small", HOUR, "1g.10gb", 1)),
        submit(mig_job("late", HOUR, "1g.10gb", 1)),
    ];
    let out = checked_tick(&mut s, 0, events).unwrap();
    let started = placements(&out);
    assert_eq!(started.keys().collect::<Vec<_>>(), ["mixed", "small"]);
    let by_group = |g: usize| -> Vec<(u32, u32)> {
        started["mixed"]
            .iter()
            .filter(|e| e.group == g)
            .flat_map(|e| e.mig.iter().map(|m| (m.gpu, m.slice)))
            .collect()
    };
    // all-balanced on an 80GB GPU: slices 0-1 are 1g.10gb, 2 is 2g.20gb, 3 is 3g.40gb.
    assert_eq!(by_group(0), [(0, 3), (1, 3)]);
    assert_eq!(by_group(1), [(0, 2), (1, 2)]);
    assert_eq!(by_group(2), [(0, 0), (0, 1), (1, 0)]);
    assert_eq!(slices(&started["small"]), [(1, 1, "1g.10gb".to_string())]);
    assert_eq!(estimate(&s, "late"), Some(HOUR));
}

#[test]
fn whole_and_fractional_gpu_tasks_never_land_on_a_mig_device() {
    let slices_on_gpu1: Vec<Value> = (0..7)
        .map(|i| json!({"gpu": 1, "slice": i, "profile": "1g.10gb"}))
        .collect();
    let mut s = scheduler(json!([node(
        "n1",
        json!({"model": "a100-80gb", "count": 2, "mig": slices_on_gpu1})
    )]));
    let whole = JobSpec::new("whole", HOUR, 1).with_gpus(Milli::from_units(1));
    let out = checked_tick(&mut s, 0, vec![submit(whole)]).unwrap();
    assert_eq!(placements(&out)["whole"][0].gpus, [0]);
    let half = JobSpec::new("half", HOUR, 1).with_gpus(Milli::from_milli(500));
    let out = checked_tick(
        &mut s,
        1,
        vec![submit(half), submit(mig_job("slice", HOUR, "1g.10gb", 1))],
    )
    .unwrap();
    let started = placements(&out);
    // GPU 0 is taken whole and GPU 1 is in MIG mode: the half waits, the slice task runs.
    assert_eq!(started.keys().collect::<Vec<_>>(), ["slice"]);
    assert_eq!(slices(&started["slice"]), [(1, 0, "1g.10gb".to_string())]);
    assert_eq!(estimate(&s, "half"), Some(HOUR));
    // Two whole GPUs exist on the node but only one is out of MIG mode.
    let two = JobSpec::new("two", HOUR, 1).with_gpus(Milli::from_units(2));
    let out = checked_tick(&mut s, 2, vec![submit(two)]).unwrap();
    assert_eq!(out.rejected[0].error.kind, ErrorKind::Unsatisfiable);
}

#[test]
fn a_mig_gpu_going_down_evicts_its_slice_holders_and_takes_its_slices_away() {
    let mut s = scheduler(json!([node(
        "m1",
        json!({"model": "a100-80gb", "count": 2, "mig_config": "all-3g.40gb"})
    )]));
    let out = checked_tick(&mut s, 0, vec![submit(mig_job("a", HOUR, "3g.40gb", 1))]).unwrap();
    assert_eq!(
        slices(&placements(&out)["a"]),
        [(0, 0, "3g.40gb".to_string())]
    );
    let down = Event::GpuDown {
        node: "m1".into(),
        gpu: 0,
    };
    let out = checked_tick(
        &mut s,
        1,
        vec![down, submit(mig_job("b", HOUR, "3g.40gb", 3))],
    )
    .unwrap();
    assert!(matches!(out.decisions[0], Decision::Requeue { ref job, .. } if job == "a"));
    // a restarts on GPU 1; b needs three 3g.40gb slices and only GPU 1's two are up.
    let started = placements(&out);
    assert_eq!(slices(&started["a"]), [(1, 0, "3g.40gb".to_string())]);
    assert!(!started.contains_key("b"));
}

#[test]
fn gpu_models_still_filter_the_device_model_of_mig_tasks() {
    let mut s = scheduler(json!([
        node(
            "a",
            json!({"model": "a100-80gb", "count": 1, "mig_config": "all-1g.10gb"})
        ),
        node(
            "h",
            json!({"model": "h100-80gb", "count": 1, "mig_config": "all-1g.10gb"})
        ),
    ]));
    let mut job = mig_job("on-h100", HOUR, "1g.10gb", 1);
    job.groups[0].gpu_models = Some(vec!["h100-80gb".into()]);
    let out = checked_tick(&mut s, 0, vec![submit(job)]).unwrap();
    assert_eq!(&*placements(&out)["on-h100"][0].node, "h");
}

#[test]
fn bad_mig_submissions_are_refused_with_the_state_unchanged() {
    let mut s = scheduler(json!([node(
        "m1",
        json!({"model": "a100-80gb", "count": 1, "mig_config": "all-balanced"})
    )]));
    checked_tick(&mut s, 0, vec![]).unwrap();
    let before = serde_json::to_value(s.state()).unwrap();
    let mut both = mig_job("both", HOUR, "1g.10gb", 1);
    both.groups[0].gpus = Milli::from_units(1);
    let events = vec![
        submit(both),
        submit(mig_job("unknown", HOUR, "1g.5gb", 1)),
        submit(mig_job("garbled", HOUR, "tiny", 1)),
        submit(mig_job("too-many", HOUR, "3g.40gb", 2)),
    ];
    let out = checked_tick(&mut s, 1, events).unwrap();
    assert_eq!(
        rejected_kinds(&out),
        [
            (0, ErrorKind::Invalid),
            (1, ErrorKind::Unsatisfiable),
            (2, ErrorKind::Invalid),
            (3, ErrorKind::Unsatisfiable),
        ]
    );
    assert!(out.rejected[0].error.message.contains("groups[0]"));
    assert!(out.rejected[1].error.message.contains("1g.5gb"));
    assert!(out.decisions.is_empty());
    let mut after = serde_json::to_value(s.state()).unwrap();
    after["now_ms"] = before["now_ms"].clone();
    assert_eq!(before, after);
}

#[test]
fn bad_mig_nodes_are_refused_naming_the_node_and_the_field() {
    let config = |gpus: Value| -> Result<Scheduler, gangway::ConfigError> {
        Scheduler::new(config(json!({"nodes": [
            node("ok", json!({"model": "a100", "count": 1})),
            node("bad", gpus)
        ]})))
    };
    let cases = [
        (
            json!({"model": "a100-80gb", "count": 1, "mig": [{"gpu": 0, "slice": 0, "profile": "9g.99gb"}]}),
            "nodes[1].gpus.mig[0]",
            "unknown MIG profile",
        ),
        (
            json!({"model": "a100-80gb", "count": 2, "mig": [{"gpu": 2, "slice": 0, "profile": "1g.10gb"}]}),
            "nodes[1].gpus.mig[0]",
            "out of range",
        ),
        (
            json!({"model": "a100-80gb", "count": 1, "mig_config": "all-1g.5gb"}),
            "nodes[1].gpus.mig_config",
            "unknown MIG configuration",
        ),
        (
            json!({"model": "v100", "count": 1, "mig_config": "all-1g.10gb"}),
            "nodes[1].gpus.mig_config",
            "no MIG table",
        ),
    ];
    for (gpus, field, words) in cases {
        let Err(err) = config(gpus) else {
            panic!("{field} accepted")
        };
        assert_eq!(err.field, field);
        assert!(err.message.contains(words), "{}", err.message);
    }
    // The same through node_add: refused, and the state is unchanged.
    let mut s = scheduler(json!([node("ok", json!({"model": "a100", "count": 1}))]));
    checked_tick(&mut s, 0, vec![]).unwrap();
    let before = serde_json::to_value(s.state()).unwrap();
    let cfg: NodeConfig = serde_json::from_value(node(
        "bad",
        json!({"model": "h200", "count": 1, "mig_config": "all-1g.10gb"}),
    ))
    .unwrap();
    let out = checked_tick(&mut s, 1, vec![Event::NodeAdd { node: cfg }]).unwrap();
    let message = &out.rejected[0].error.message;
    assert!(
        message.contains("bad") && message.contains("gpus.mig_config"),
        "{message}"
    );
    let mut after = serde_json::to_value(s.state()).unwrap();
    after["now_ms"] = before["now_ms"].clone();
    assert_eq!(before, after);
}

#[test]
fn mig_quota_keys_count_slices_of_their_profile_and_the_gpu_key_counts_none() {
    let mut s = build::scheduler(json!({
        "nodes": [node("m1", json!({"model": "a100-80gb", "count": 1, "mig_config": "all-balanced"}))],
        "queues": [{"name": "q", "quota": {"gpu": {"nominal": 0},
                                           "mig:1g.10gb": {"nominal": 1, "borrowing_limit": 0}}}]
    }));
    let in_queue = |mut job: JobSpec| {
        job.queue = Some("q".into());
        submit(job)
    };
    let events = vec![
        in_queue(mig_job("first", HOUR, "1g.10gb", 1)),
        in_queue(mig_job("second", HOUR, "1g.10gb", 1)),
        in_queue(mig_job("other", HOUR, "3g.40gb", 1)),
    ];
    let out = checked_tick(&mut s, 0, events).unwrap();
    // One 1g.10gb slice of quota: the second waits although a slice is free; the 3g.40gb task
    // is limited by no key (its profile has none, and slices are not GPUs).
    let started = placements(&out);
    assert_eq!(started.keys().collect::<Vec<_>>(), ["first", "other"]);
    assert!(s.explain().pending.iter().any(|p| p.job == "second"));
}

#[test]
fn fair_share_bills_a_slice_as_its_compute_share_of_a_device() {
    let mut s = build::scheduler(json!({
        "nodes": [node("m1", json!({"model": "a100-80gb", "count": 1, "mig_config": "all-balanced"}))],
        "accounts": [{"name": "ml"}]
    }));
    let mut job = mig_job("a", HOUR, "3g.40gb", 1);
    job.groups.push(TaskGroup {
        mig: Some("1g.10gb".into()),
        ..TaskGroup::new(2)
    });
    job.account = Some("ml".into());
    job.user = Some("alice".into());
    checked_tick(&mut s, 0, vec![submit(job)]).unwrap();
    checked_tick(&mut s, 70_000, vec![]).unwrap();
    // 3/7 + 2 × 1/7 of a GPU (in thousandths, rounded down) for 70 s.
    let row = &s.share_report()[1];
    assert!(
        (row.raw_usage - (0.428 + 0.284) * 70.0).abs() < 1e-6,
        "{}",
        row.raw_usage
    );
}

#[test]
fn a_snapshot_with_slices_held_restores_through_json_and_decides_alike() {
    let mut s = scheduler(json!([node(
        "m1",
        json!({"model": "h200", "count": 2, "mig_config": "all-1g.18gb"})
    )]));
    let jobs = (0..13)
        .map(|i| submit(mig_job(&format!("j{i}"), HOUR * (i % 3 + 1), "1g.18gb", 1)))
        .collect();
    checked_tick(&mut s, 0, jobs).unwrap();
    let text = serde_json::to_string(&s.snapshot()).unwrap();
    let mut restored = Scheduler::restore(serde_json::from_str(&text).unwrap()).unwrap();
    let events = || vec![submit(mig_job("late", HOUR, "1g.18gb", 2))];
    let a = checked_tick(&mut s, HOUR, events()).unwrap();
    let b = checked_tick(&mut restored, HOUR, events()).unwrap();
    assert_eq!(a, b);
    assert_eq!(placements(&a).len(), 1, "{a:?}");
}

#[test]
fn a_seeded_stream_of_mig_whole_and_fractional_jobs_keeps_every_invariant() {
    use rand::{RngExt, SeedableRng, rngs::Xoshiro256PlusPlus};
    let slices: Vec<Value> = (0..4)
        .map(
            |i| json!({"gpu": 3, "slice": i, "profile": if i < 2 { "1g.10gb" } else { "2g.20gb" }}),
        )
        .collect();
    let mut s = scheduler(json!([
        node(
            "bal",
            json!({"model": "a100-80gb", "count": 2, "mig_config": "all-balanced"})
        ),
        node(
            "mixed",
            json!({"model": "a100-80gb", "count": 4, "mig": slices})
        ),
        node("plain", json!({"model": "a100-80gb", "count": 2})),
    ]));
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
    let mut running: Vec<String> = Vec::new();
    let (mut started, mut on_slices) = (0, 0);
    for t in 0..300u64 {
        let mut events = Vec::new();
        for _ in 0..rng.random_range(0..3) {
            let id = format!("j{t}-{}", events.len());
            let limit = rng.random_range(1..20) * 60_000;
            let job = match rng.random_range(0..5) {
                0 => mig_job(&id, limit, "1g.10gb", rng.random_range(1..4)),
                1 => mig_job(&id, limit, "2g.20gb", 1),
                2 => mig_job(&id, limit, "3g.40gb", rng.random_range(1..3)),
                3 => {
                    JobSpec::new(id, limit, 1).with_gpus(Milli::from_units(rng.random_range(1..3)))
                }
                _ => JobSpec::new(id, limit, 2).with_gpus(Milli::from_milli(500)),
            };
            events.push(submit(job));
        }
        if !running.is_empty() && rng.random_range(0..3) == 0 {
            let job = running.swap_remove(rng.random_range(0..running.len()));
            events.push(finished(&job));
        }
        if rng.random_range(0..40) == 0 {
            let gpu = rng.random_range(0..2);
            events.push(if rng.random_range(0..2) == 0 {
                Event::GpuDown {
                    node: "bal".into(),
                    gpu,
                }
            } else {
                Event::GpuUp {
                    node: "bal".into(),
                    gpu,
                }
            });
        }
        let out = checked_tick(&mut s, t * 30_000, events).unwrap();
        for d in &out.decisions {
            match d {
                Decision::Start { job, placement } => {
                    started += 1;
                    on_slices += usize::from(placement.iter().any(|e| !e.mig.is_empty()));
                    running.push(job.clone());
                }
                other => running.retain(|j| j != other.job()),
            }
        }
    }
    assert!(
        started > 100 && on_slices > 50,
        "{started} started, {on_slices} on slices"
    );
}

#[test]
fn the_inventory_fixture_of_an_a100_in_mig_mode_works_as_a_cluster_node() {
    let text = include_str!("../../../gangway-nvml/tests/fixtures/nvml/a100_80gb_mig.node.json");
    let fixture: NodeConfig = serde_json::from_str(text).unwrap();
    let mut s = Scheduler::new(ClusterConfig {
        nodes: vec![fixture],
        ..ClusterConfig::default()
    })
    .unwrap();
    let jobs = (0..7)
        .map(|i| submit(mig_job(&format!("j{i}"), HOUR, "1g.10gb", 1)))
        .chain([submit(
            JobSpec::new("whole", HOUR, 1).with_gpus(Milli::from_units(1)),
        )])
        .collect();
    let out = checked_tick(&mut s, 0, jobs).unwrap();
    assert_eq!(placements(&out).len(), 7);
    // The node's only GPU is in MIG mode: no whole GPU exists for this job.
    assert_eq!(out.rejected[0].index, 7);
    assert_eq!(out.rejected[0].error.kind, ErrorKind::Unsatisfiable);
}

#[test]
fn the_shim_speaks_mig_on_the_wire() {
    let mut shim = Shim::default();
    let configure = json!({"op": "configure", "cluster": {"nodes": [node(
        "m1", json!({"model": "h200", "count": 1, "mig_config": "all-2g.35gb"}))]}});
    let reply = send(&mut shim, configure);
    assert_eq!(reply["ok"], true, "{reply}");
    let tick = json!({"op": "tick", "at_ms": 0, "events": [{"type": "submit", "job": {
        "id": "a", "time_limit_ms": HOUR, "groups": [{"count": 2, "mig": "2g.35gb"}]}}]});
    let reply = send(&mut shim, tick);
    let start = &reply["decisions"][0];
    assert_eq!(
        start["placement"],
        json!([{"group": 0, "node": "m1", "tasks": 2, "gpus": [],
                "mig": [{"gpu": 0, "slice": 0, "profile": "2g.35gb"},
                        {"gpu": 0, "slice": 1, "profile": "2g.35gb"}]}])
    );
    let entry: PlacementEntry = serde_json::from_value(start["placement"][0].clone()).unwrap();
    let slice = &entry.mig[1];
    assert_eq!(
        (slice.gpu, slice.slice, slice.profile.as_str()),
        (0, 1, "2g.35gb")
    );
}
