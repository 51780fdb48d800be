//! Maintenance windows: configured and added at run time, respected now and in reservations,
//! with the invariant oracle after every tick.

use crate::common;

use common::build::scheduler_from_str;
use common::decisions::{self, rejected_kinds, starts};
use gangway::testkit::checked_tick;
use gangway::{
    ClusterConfig, Decision, ErrorKind, Event, JobSpec, PendingReason, PlacementMode, Scheduler,
};

/// Nodes `n1`, `n2` of one cpu each, with `extra` fields appended to the cluster object.
fn cluster(mode: &str, extra: &str) -> Scheduler {
    scheduler_from_str(&format!(
        r#"{{"nodes": [{{"name": "n1", "cpus": 1}}, {{"name": "n2", "cpus": 1}}],
            "policy": {{"backfill": {{"mode": "{mode}"}}}}{extra}}}"#
    ))
}

fn submit(id: &str, limit: u64, priority: i32) -> Event {
    Event::Submit {
        job: JobSpec::new(id, limit, 1).with_priority(priority),
    }
}

/// Each started job with the node of its first placement entry.
fn started(decisions: &[Decision]) -> Vec<(String, String)> {
    starts(decisions)
        .into_iter()
        .map(|(job, placement)| (job.to_string(), placement[0].node.to_string()))
        .collect()
}

/// Why the pending job `id` waits, and its estimated start.
fn pending(s: &Scheduler, id: &str) -> (PendingReason, Option<u64>) {
    let info = decisions::pending(s, id);
    (info.reason, info.estimated_start_ms)
}

const BOTH: &str =
    r#", "maintenance": [{"nodes": ["n1", "n2"], "start_ms": 1000, "end_ms": 2000}]"#;

#[test]
fn a_job_that_would_overlap_waits_for_the_window_end() {
    for mode in ["easy", "conservative"] {
        let mut s = cluster(mode, BOTH);
        let out = checked_tick(&mut s, 0, vec![submit("long", 1_500, 0)]).unwrap();
        assert!(started(&out.decisions).is_empty(), "{mode}");
        assert_eq!(pending(&s, "long"), (PendingReason::Reserved, Some(2_000)));
        assert_eq!(out.next_wakeup_ms, Some(2_000), "{mode}: the window's end");
        let out = checked_tick(&mut s, 2_000, vec![]).unwrap();
        assert_eq!(started(&out.decisions)[0].0, "long");
    }
}

#[test]
fn a_job_ending_as_the_window_starts_runs_now() {
    let mut s = cluster("easy", BOTH);
    let out = checked_tick(&mut s, 0, vec![submit("short", 1_000, 0)]).unwrap();
    assert_eq!(started(&out.decisions)[0].0, "short");
    let out = checked_tick(&mut s, 1_000, vec![submit("late", 1, 0)]).unwrap();
    assert!(started(&out.decisions).is_empty(), "inside the window");
    let out = checked_tick(&mut s, 2_000, vec![]).unwrap();
    assert_eq!(started(&out.decisions)[0].0, "late", "starting at its end");
}

#[test]
fn jobs_go_to_nodes_outside_the_window() {
    let window = r#", "maintenance": [{"nodes": ["n1"], "start_ms": 500, "end_ms": 2000}]"#;
    let mut s = cluster("easy", window);
    let out = checked_tick(&mut s, 0, vec![submit("a", 1_000, 0)]).unwrap();
    assert_eq!(started(&out.decisions), vec![("a".into(), "n2".into())]);
}

#[test]
fn conservative_reservations_plan_around_a_window() {
    // n1 is under maintenance over [1000, 5000); "run" holds n2 until 3000.
    let window =
        r#", "maintenance": [{"id": "fw", "nodes": ["n1"], "start_ms": 1000, "end_ms": 5000}]"#;
    let mut s = cluster("conservative", window);
    checked_tick(&mut s, 0, vec![submit("run", 3_000, 100)]).unwrap();
    let gang = JobSpec::new("gang", 1_000, 2)
        .with_placement(PlacementMode::StrictSpread)
        .with_priority(50);
    let out = checked_tick(
        &mut s,
        0,
        vec![
            Event::Submit { job: gang },
            submit("mid", 2_000, 40),
            submit("short", 1_000, 30),
        ],
    )
    .unwrap();
    // Both nodes are free together only after the window: 5000.
    assert_eq!(pending(&s, "gang"), (PendingReason::Reserved, Some(5_000)));
    // "mid" overlaps the window on n1; on n2 it fits [3000, 5000), ending as "gang" starts.
    assert_eq!(pending(&s, "mid"), (PendingReason::Reserved, Some(3_000)));
    // "short" ends as the window starts: it runs now on n1.
    assert_eq!(started(&out.decisions), vec![("short".into(), "n1".into())]);
    let out = checked_tick(&mut s, 3_000, vec![]).unwrap();
    assert_eq!(started(&out.decisions), vec![("mid".into(), "n2".into())]);
    let out = checked_tick(&mut s, 5_000, vec![]).unwrap();
    assert_eq!(started(&out.decisions)[0].0, "gang");
}

#[test]
fn windows_are_added_and_removed_at_run_time() {
    let mut s = cluster("easy", "");
    let add = Event::MaintenanceAdd {
        id: "rack".into(),
        nodes: vec!["n1".into(), "n2".into()],
        start_ms: 100,
        end_ms: 10_000,
    };
    let out = checked_tick(&mut s, 0, vec![add, submit("a", 1_000, 0)]).unwrap();
    assert!(out.rejected.is_empty());
    assert_eq!(pending(&s, "a"), (PendingReason::Reserved, Some(10_000)));
    assert_eq!(out.next_wakeup_ms, Some(10_000));
    let remove = Event::MaintenanceRemove { id: "rack".into() };
    let out = checked_tick(&mut s, 50, vec![remove]).unwrap();
    assert_eq!(started(&out.decisions)[0].0, "a");
}

#[test]
fn bad_window_events_are_rejected_with_typed_errors() {
    let mut s = cluster(
        "easy",
        r#", "maintenance": [{"id": "fw", "nodes": ["n1"], "start_ms": 0, "end_ms": 10}]"#,
    );
    let add = |id: &str, nodes: &[&str], start_ms, end_ms| Event::MaintenanceAdd {
        id: id.into(),
        nodes: nodes.iter().map(|n| n.to_string()).collect(),
        start_ms,
        end_ms,
    };
    let events = vec![
        Event::MaintenanceRemove { id: "nope".into() },
        add("x", &["n9"], 0, 10),
        add("y", &["n1"], 10, 10),
        add("fw", &["n2"], 0, 10),
        add("z", &[], 0, 10),
    ];
    let out = checked_tick(&mut s, 0, events).unwrap();
    assert_eq!(
        rejected_kinds(&out),
        vec![
            (0, ErrorKind::UnknownMaintenance),
            (1, ErrorKind::UnknownNode),
            (2, ErrorKind::Invalid),
            (3, ErrorKind::Invalid),
            (4, ErrorKind::Invalid),
        ]
    );
    assert!(out.rejected[1].error.message.contains("nodes[0]"));
    assert!(out.rejected[2].error.message.contains("end_ms"));
    let event: Event = serde_json::from_str(
        r#"{"type": "maintenance_add", "id": "w", "nodes": ["n2"], "start_ms": 5, "end_ms": 9}"#,
    )
    .unwrap();
    assert!(
        checked_tick(&mut s, 0, vec![event])
            .unwrap()
            .rejected
            .is_empty()
    );
}

#[test]
fn bad_configured_windows_name_the_field() {
    let cases = [
        (
            r#"[{"nodes": ["n1", "n7"], "start_ms": 0, "end_ms": 9}]"#,
            "maintenance[0].nodes[1]",
        ),
        (
            r#"[{"nodes": ["n1"], "start_ms": 9, "end_ms": 9}]"#,
            "maintenance[0].end_ms",
        ),
        (
            r#"[{"nodes": [], "start_ms": 0, "end_ms": 9}]"#,
            "maintenance[0].nodes",
        ),
        (
            r#"[{"id": "a", "nodes": ["n1"], "start_ms": 0, "end_ms": 9},
                {"id": "a", "nodes": ["n2"], "start_ms": 0, "end_ms": 9}]"#,
            "maintenance[1].id",
        ),
    ];
    for (windows, field) in cases {
        let text = format!(
            r#"{{"nodes": [{{"name": "n1"}}, {{"name": "n2"}}], "maintenance": {windows}}}"#
        );
        let config: ClusterConfig = serde_json::from_str(&text).unwrap();
        let error = Scheduler::new(config).unwrap_err();
        assert_eq!(error.field, field, "{error}");
    }
}

#[test]
fn past_windows_are_dropped_and_snapshots_keep_windows() {
    let mut s = cluster("easy", BOTH);
    checked_tick(&mut s, 0, vec![]).unwrap();
    let restored = Scheduler::restore(s.snapshot()).unwrap();
    let windows = |s: &Scheduler| {
        serde_json::to_value(s.snapshot()).unwrap()["state"]["maintenance"]["windows"].clone()
    };
    assert!(windows(&restored).get("maintenance[0]").is_some());
    checked_tick(&mut s, 2_000, vec![]).unwrap();
    assert!(windows(&s).get("maintenance[0]").is_none());
    let out = checked_tick(&mut s, 2_000, vec![submit("a", 1, 0)]).unwrap();
    assert_eq!(out.next_wakeup_ms, Some(2_001));
}
