//! Cluster-wide licenses: held while a job runs, refused when unknown or more than the cluster
//! has, and planned by backfill like any resource. Every tick runs the invariant oracle.

use crate::common;

use common::build::{finished, scheduler_from_str, submit};
use common::decisions::started;
use gangway::testkit::checked_tick;
use gangway::{ErrorKind, JobSpec, PendingReason, Scheduler};

const HOUR: u64 = 3_600_000;

fn scheduler() -> Scheduler {
    scheduler_from_str(
        r#"{"nodes": [{"name": "n1", "cpus": 64, "memory_mib": 64000}],
            "licenses": {"matlab": 3, "ansys": 1},
            "policy": {"backfill": {"mode": "easy"}}}"#,
    )
}

#[test]
fn licenses_are_held_while_jobs_run_and_given_back_when_they_end() {
    let mut s = scheduler();
    let events = vec![
        submit(JobSpec::new("a", HOUR, 1).with_license("matlab", 2)),
        submit(JobSpec::new("b", HOUR, 1).with_license("matlab", 2)),
        submit(JobSpec::new("c", HOUR, 1).with_license("ansys", 1)),
    ];
    let out = checked_tick(&mut s, 0, events).unwrap();
    assert_eq!(started(&out.decisions), ["a", "c"]);
    let snapshot = serde_json::to_value(s.snapshot()).unwrap();
    assert_eq!(snapshot["state"]["licenses"]["used"][0], 2);
    let out = checked_tick(&mut s, 1_000, vec![finished("a")]).unwrap();
    assert_eq!(started(&out.decisions), ["b"]);
}

#[test]
fn a_job_waiting_for_licenses_gets_a_reservation_at_their_release() {
    let mut s = scheduler();
    checked_tick(
        &mut s,
        0,
        vec![submit(
            JobSpec::new("long", 2 * HOUR, 1).with_license("matlab", 3),
        )],
    )
    .unwrap();
    let events = vec![
        submit(
            JobSpec::new("waits", HOUR, 1)
                .with_license("matlab", 1)
                .with_priority(10),
        ),
        // Needs no license and ends before the reservation: backfills.
        submit(JobSpec::new("free", HOUR, 1)),
    ];
    let out = checked_tick(&mut s, 1_000, events).unwrap();
    assert_eq!(started(&out.decisions), ["free"]);
    let explain = s.explain();
    let waits = &explain.pending[0];
    assert_eq!(waits.job, "waits");
    assert_eq!(waits.reason, PendingReason::Reserved);
    assert_eq!(waits.estimated_start_ms, Some(2 * HOUR));
}

#[test]
fn a_reservation_keeps_its_licenses_from_a_longer_backfill_candidate() {
    let mut s = scheduler();
    checked_tick(
        &mut s,
        0,
        vec![submit(
            JobSpec::new("holder", HOUR, 1).with_license("matlab", 2),
        )],
    )
    .unwrap();
    let events = vec![
        submit(
            JobSpec::new("head", HOUR, 1)
                .with_license("matlab", 3)
                .with_priority(10),
        ),
        // One matlab is free now, but it would hold it past the head's start.
        submit(JobSpec::new("long", 3 * HOUR, 1).with_license("matlab", 1)),
        // One matlab for a job that ends before the head starts: backfills.
        submit(JobSpec::new("short", HOUR / 2, 1).with_license("matlab", 1)),
    ];
    let out = checked_tick(&mut s, 0, events).unwrap();
    assert_eq!(started(&out.decisions), ["short"]);
    let explain = s.explain();
    let reasons: Vec<(&str, PendingReason)> = explain
        .pending
        .iter()
        .map(|p| (p.job.as_str(), p.reason))
        .collect();
    assert_eq!(
        reasons,
        [
            ("head", PendingReason::Reserved),
            // Free when it was considered (before "short"), but reserved for "head".
            ("long", PendingReason::Priority)
        ]
    );
}

#[test]
fn unknown_licenses_are_invalid_and_too_many_unsatisfiable() {
    let mut s = scheduler();
    let events = vec![
        submit(JobSpec::new("a", HOUR, 1).with_license("stata", 1)),
        submit(JobSpec::new("b", HOUR, 1).with_license("matlab", 4)),
        submit(JobSpec::new("c", HOUR, 1).with_license("matlab", 0)),
    ];
    let out = checked_tick(&mut s, 0, events).unwrap();
    let errors: Vec<(usize, ErrorKind, &str)> = out
        .rejected
        .iter()
        .map(|r| (r.index, r.error.kind, r.error.message.as_str()))
        .collect();
    assert_eq!(
        errors,
        [
            (
                0,
                ErrorKind::Invalid,
                "submit a: licenses: unknown license \"stata\""
            ),
            (
                1,
                ErrorKind::Unsatisfiable,
                "submit b: licenses.matlab: 4 asked, the cluster has 3"
            ),
            (
                2,
                ErrorKind::Invalid,
                "submit c: licenses.matlab must be at least 1"
            ),
        ]
    );
}

#[test]
fn licenses_travel_through_the_shim() {
    let mut shim = gangway::protocol::Shim::default();
    let cluster = r#"{"op":"configure","cluster":{"nodes":[{"name":"n1","cpus":8,"memory_mib":8000}],"licenses":{"matlab":1}}}"#;
    assert!(shim.handle_line(cluster).contains("\"ok\":true"));
    let tick = r#"{"op":"tick","at_ms":0,"events":[{"type":"submit","job":{"id":"a","time_limit_ms":1000,"groups":[{"count":1}],"licenses":{"matlab":1}}},{"type":"submit","job":{"id":"b","time_limit_ms":1000,"groups":[{"count":1}],"licenses":{"matlab":1}}}]}"#;
    let reply = shim.handle_line(tick);
    assert!(reply.contains(r#""job":"a""#), "{reply}");
    assert!(!reply.contains(r#""type":"start","job":"b""#), "{reply}");
}
