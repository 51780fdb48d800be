//! Wait for ready with back-off (Kueue's `waitForPodsReady`, `policy.wait_for_ready`): every
//! rule of docs/protocol.md's "Wait for ready", with the invariant oracle after every tick.

use crate::common;

use common::build::{config, finished, submit};
use common::decisions::{pending, reason, rejected_kinds, started};
use gangway::RequeueReason;
use gangway::testkit::checked_tick;
use gangway::{
    ClusterConfig, Decision, ErrorKind, Event, JobSpec, KillReason, PendingReason, Scheduler,
};
use serde_json::{Value, json};

/// Two one-cpu nodes with `policy.wait_for_ready` set to `ready` (absent when null).
fn cluster(ready: Value) -> ClusterConfig {
    let mut policy = json!({});
    if !ready.is_null() {
        policy["wait_for_ready"] = ready;
    }
    config(
        json!({"nodes": [{"name": "n1", "cpus": 1}, {"name": "n2", "cpus": 1}],
                  "policy": policy}),
    )
}

fn scheduler(ready: Value) -> Scheduler {
    Scheduler::new(cluster(ready)).unwrap()
}

/// A one-task one-cpu job running for up to a day.
fn job(id: &str) -> JobSpec {
    JobSpec::new(id, 86_400_000, 1)
}

fn ready(job: &str) -> Event {
    Event::Ready { job: job.into() }
}

fn not_ready(job: &str) -> Event {
    Event::NotReady { job: job.into() }
}

fn requeued(decisions: &[Decision]) -> Vec<(&str, RequeueReason)> {
    decisions
        .iter()
        .filter_map(|d| match d {
            Decision::Requeue { job, reason } => Some((job.as_str(), *reason)),
            _ => None,
        })
        .collect()
}

fn killed(decisions: &[Decision]) -> Vec<(&str, KillReason)> {
    decisions
        .iter()
        .filter_map(|d| match d {
            Decision::Kill { job, reason } => Some((job.as_str(), *reason)),
            _ => None,
        })
        .collect()
}

/// Kueue's documented timings scaled to seconds: timeout 10 s, back-off 1 s doubling to 5 s.
fn timings() -> Value {
    json!({"timeout_ms": 10_000, "backoff_base_ms": 1_000, "backoff_max_ms": 5_000})
}

#[test]
fn a_job_not_ready_by_its_deadline_is_requeued_and_its_deadline_is_the_wake_up() {
    let mut s = scheduler(timings());
    let out = checked_tick(&mut s, 0, vec![submit(job("a"))]).unwrap();
    assert_eq!(started(&out.decisions), ["a"]);
    assert_eq!(out.next_wakeup_ms, Some(10_000));
    let out = checked_tick(&mut s, 9_999, vec![]).unwrap();
    assert!(out.decisions.is_empty());
    let out = checked_tick(&mut s, 10_000, vec![]).unwrap();
    assert_eq!(
        requeued(&out.decisions),
        [("a", RequeueReason::ReadyTimeout)]
    );
    assert_eq!(reason(&s, "a"), PendingReason::Backoff);
    assert_eq!(pending(&s, "a").backoff_until_ms, Some(11_000));
    assert_eq!(out.next_wakeup_ms, Some(11_000));
}

#[test]
fn a_ready_job_is_not_evicted_and_leaves_no_wake_up() {
    let mut s = scheduler(timings());
    checked_tick(&mut s, 0, vec![submit(job("a"))]).unwrap();
    let out = checked_tick(&mut s, 5_000, vec![ready("a")]).unwrap();
    // Only its time limit is left.
    assert_eq!(out.next_wakeup_ms, Some(86_400_000));
    let out = checked_tick(&mut s, 20_000, vec![]).unwrap();
    assert!(out.decisions.is_empty());
    assert_eq!(s.explain().running[0].ready_deadline_ms, None);
}

#[test]
fn back_off_doubles_and_is_capped() {
    let mut s = scheduler(timings());
    checked_tick(&mut s, 0, vec![submit(job("a"))]).unwrap();
    // Timeout at start + 10 s; back-offs 1, 2, 4, 5, 5 s.
    let mut now = 10_000;
    let mut waits = Vec::new();
    for _ in 0..5 {
        let out = checked_tick(&mut s, now, vec![]).unwrap();
        assert_eq!(
            requeued(&out.decisions),
            [("a", RequeueReason::ReadyTimeout)]
        );
        let until = pending(&s, "a").backoff_until_ms.unwrap();
        waits.push(until - now);
        // Not started a millisecond early; started at the end.
        let out = checked_tick(&mut s, until - 1, vec![]).unwrap();
        assert!(started(&out.decisions).is_empty());
        assert_eq!(reason(&s, "a"), PendingReason::Backoff);
        let out = checked_tick(&mut s, until, vec![]).unwrap();
        assert_eq!(started(&out.decisions), ["a"]);
        now = until + 10_000;
    }
    assert_eq!(waits, [1_000, 2_000, 4_000, 5_000, 5_000]);
}

#[test]
fn the_backoff_limit_th_timeout_kills() {
    let mut wfr = timings();
    wfr["backoff_limit"] = json!(3);
    let mut s = scheduler(wfr);
    checked_tick(&mut s, 0, vec![submit(job("a"))]).unwrap();
    // Requeued at the first and second timeouts...
    let out = checked_tick(&mut s, 10_000, vec![]).unwrap();
    assert_eq!(requeued(&out.decisions).len(), 1);
    checked_tick(&mut s, 11_000, vec![]).unwrap();
    let out = checked_tick(&mut s, 21_000, vec![]).unwrap();
    assert_eq!(requeued(&out.decisions).len(), 1);
    checked_tick(&mut s, 23_000, vec![]).unwrap();
    // ...and the third timeout kills it.
    let out = checked_tick(&mut s, 33_000, vec![]).unwrap();
    assert_eq!(killed(&out.decisions), [("a", KillReason::ReadyTimeout)]);
    assert!(requeued(&out.decisions).is_empty());
    assert_eq!(s.state().pending_count() + s.state().running_count(), 0);
}

#[test]
fn a_backoff_limit_of_zero_is_refused_naming_the_field() {
    let mut wfr = timings();
    wfr["backoff_limit"] = json!(0);
    let err = Scheduler::new(cluster(wfr)).unwrap_err();
    assert!(
        err.to_string()
            .contains("policy.wait_for_ready.backoff_limit"),
        "{err}"
    );
}

#[test]
fn a_backoff_limit_of_one_kills_at_the_first_timeout() {
    let mut wfr = timings();
    wfr["backoff_limit"] = json!(1);
    let mut s = scheduler(wfr);
    checked_tick(&mut s, 0, vec![submit(job("a"))]).unwrap();
    let out = checked_tick(&mut s, 10_000, vec![]).unwrap();
    assert_eq!(killed(&out.decisions), [("a", KillReason::ReadyTimeout)]);
}

#[test]
fn a_backoff_limit_of_two_requeues_once_and_kills_at_the_second_timeout() {
    let mut wfr = timings();
    wfr["backoff_limit"] = json!(2);
    let mut s = scheduler(wfr);
    checked_tick(&mut s, 0, vec![submit(job("a"))]).unwrap();
    let out = checked_tick(&mut s, 10_000, vec![]).unwrap();
    assert_eq!(requeued(&out.decisions).len(), 1);
    checked_tick(&mut s, 11_000, vec![]).unwrap();
    let out = checked_tick(&mut s, 21_000, vec![]).unwrap();
    assert_eq!(killed(&out.decisions), [("a", KillReason::ReadyTimeout)]);
    assert!(requeued(&out.decisions).is_empty());
}

#[test]
fn a_job_that_may_not_be_requeued_is_killed() {
    let mut s = scheduler(timings());
    let mut spec = job("a");
    spec.requeue = false;
    checked_tick(&mut s, 0, vec![submit(spec)]).unwrap();
    let out = checked_tick(&mut s, 10_000, vec![]).unwrap();
    assert_eq!(killed(&out.decisions), [("a", KillReason::ReadyTimeout)]);
    assert_eq!(s.state().pending_count(), 0);
}

#[test]
fn not_ready_starts_the_recovery_timeout() {
    let mut wfr = timings();
    wfr["recovery_timeout_ms"] = json!(3_000);
    let mut s = scheduler(wfr);
    checked_tick(&mut s, 0, vec![submit(job("a")), submit(job("b"))]).unwrap();
    checked_tick(&mut s, 1_000, vec![ready("a"), ready("b")]).unwrap();
    let out = checked_tick(&mut s, 50_000, vec![not_ready("a"), not_ready("b")]).unwrap();
    assert_eq!(out.next_wakeup_ms, Some(53_000));
    assert_eq!(s.explain().running[0].ready_deadline_ms, Some(53_000));
    // A second not_ready does not restart the clock; b recovers in time.
    checked_tick(&mut s, 52_000, vec![not_ready("a"), ready("b")]).unwrap();
    let out = checked_tick(&mut s, 53_000, vec![]).unwrap();
    assert_eq!(
        requeued(&out.decisions),
        [("a", RequeueReason::ReadyTimeout)]
    );
    assert_eq!(pending(&s, "a").backoff_until_ms, Some(54_000));
}

#[test]
fn recovery_defaults_to_the_timeout_and_zero_turns_it_off() {
    let mut s = scheduler(timings());
    checked_tick(&mut s, 0, vec![submit(job("a"))]).unwrap();
    checked_tick(&mut s, 1_000, vec![ready("a")]).unwrap();
    let out = checked_tick(&mut s, 2_000, vec![not_ready("a")]).unwrap();
    assert_eq!(out.next_wakeup_ms, Some(12_000));

    let mut off = timings();
    off["recovery_timeout_ms"] = json!(0);
    let mut s = scheduler(off);
    checked_tick(&mut s, 0, vec![submit(job("a"))]).unwrap();
    checked_tick(&mut s, 1_000, vec![ready("a")]).unwrap();
    let out = checked_tick(&mut s, 2_000, vec![not_ready("a")]).unwrap();
    assert_eq!(out.next_wakeup_ms, Some(86_400_000));
    let out = checked_tick(&mut s, 1_000_000, vec![]).unwrap();
    assert!(out.decisions.is_empty());
}

#[test]
fn not_ready_before_the_first_ready_keeps_the_start_deadline() {
    let mut s = scheduler(timings());
    checked_tick(&mut s, 0, vec![submit(job("a"))]).unwrap();
    checked_tick(&mut s, 9_000, vec![not_ready("a")]).unwrap();
    assert_eq!(s.explain().running[0].ready_deadline_ms, Some(10_000));
}

#[test]
fn block_admission_starts_one_job_at_a_time() {
    let mut wfr = timings();
    wfr["block_admission"] = json!(true);
    let mut s = scheduler(wfr);
    let out = checked_tick(&mut s, 0, vec![submit(job("a")), submit(job("b"))]).unwrap();
    assert_eq!(started(&out.decisions), ["a"]);
    assert_eq!(reason(&s, "b"), PendingReason::WaitingForReady);
    assert_eq!(pending(&s, "b").estimated_start_ms, None);
    let out = checked_tick(&mut s, 2_000, vec![ready("a")]).unwrap();
    assert_eq!(started(&out.decisions), ["b"]);
    // A recovering job blocks admission too (Kueue: every admitted workload not PodsReady).
    checked_tick(&mut s, 3_000, vec![ready("b"), submit(job("c"))]).unwrap();
    checked_tick(&mut s, 4_000, vec![finished("b"), not_ready("a")]).unwrap();
    assert_eq!(reason(&s, "c"), PendingReason::WaitingForReady);
    let out = checked_tick(&mut s, 5_000, vec![ready("a")]).unwrap();
    assert_eq!(started(&out.decisions), ["c"]);
}

#[test]
fn block_admission_ends_when_the_waiting_job_is_evicted() {
    let mut wfr = timings();
    wfr["block_admission"] = json!(true);
    let mut s = scheduler(wfr);
    checked_tick(&mut s, 0, vec![submit(job("a")), submit(job("b"))]).unwrap();
    // a misses its deadline: requeued with a back-off, and b starts in the same tick.
    let out = checked_tick(&mut s, 10_000, vec![]).unwrap();
    assert_eq!(
        requeued(&out.decisions),
        [("a", RequeueReason::ReadyTimeout)]
    );
    assert_eq!(started(&out.decisions), ["b"]);
    assert_eq!(reason(&s, "a"), PendingReason::Backoff);
}

/// Kueue's order under block admission (`Scheduler.processEntry`: a preempting workload's
/// preemptions are issued before `waitForPodsReadyIfNeeded`): on one 12-cpu node, queues
/// `prod` and `dev` (5 cpus each) and `batch` (2 cpus), each lending nothing and preempting
/// lower priorities within itself. While `d` is not ready, the preemptor `p` ahead of the first job
/// that fits (`s`) preempts; `s` waits for readiness, and the preemptor `p2` after it does not
/// preempt. The host's `stopped l` is accepted at once.
#[test]
fn block_admission_lets_preemptors_ahead_of_the_first_fitting_job_preempt() {
    let queue = |name: &str, cpus: u32| {
        json!({"name": name, "cohort": "all",
               "quota": {"cpu": {"nominal": cpus, "lending_limit": 0}},
               "preemption": {"within_queue": "lower_priority"}})
    };
    let mut wfr = timings();
    wfr["timeout_ms"] = json!(600_000);
    wfr["block_admission"] = json!(true);
    let mut s = Scheduler::new(config(json!({
        "nodes": [{"name": "n1", "cpus": 12}],
        "cohorts": [{"name": "all"}],
        "queues": [queue("prod", 5), queue("dev", 5), queue("batch", 2)],
        "policy": {"preemption": {"enabled": true}, "wait_for_ready": wfr}})))
    .unwrap();
    let spec = |id: &str, queue: &str, priority: i32, cpus: u32| {
        let mut spec = JobSpec::new(id, 86_400_000, 1).with_priority(priority);
        spec.groups[0].cpus = gangway::Milli::from_units(cpus.into());
        spec.queue = Some(queue.into());
        spec.grace_ms = 30_000;
        spec
    };
    let preempted = |decisions: &[Decision]| -> Vec<String> {
        decisions
            .iter()
            .filter_map(|d| match d {
                Decision::Preempt { job, .. } => Some(job.clone()),
                _ => None,
            })
            .collect()
    };
    let out = checked_tick(&mut s, 0, vec![submit(spec("l", "prod", 0, 5))]).unwrap();
    assert_eq!(started(&out.decisions), ["l"]);
    let out = checked_tick(
        &mut s,
        1_000,
        vec![ready("l"), submit(spec("d", "dev", 0, 5))],
    );
    assert_eq!(started(&out.unwrap().decisions), ["d"]);
    // d is not ready. p (first in order) preempts l; s would fit, so it waits for d and
    // nothing after it proceeds: p2 would preempt d, but waits.
    let jobs = vec![
        submit(spec("p", "prod", 10, 5)),
        submit(spec("s", "batch", 5, 1)),
        submit(spec("p2", "dev", 3, 5)),
    ];
    let out = checked_tick(&mut s, 2_000, jobs).unwrap();
    assert_eq!(preempted(&out.decisions), ["l"]);
    assert!(started(&out.decisions).is_empty());
    assert_eq!(reason(&s, "p"), PendingReason::Preempting);
    assert_eq!(reason(&s, "s"), PendingReason::WaitingForReady);
    assert_eq!(reason(&s, "p2"), PendingReason::WaitingForReady);
    // The victim's stop is accepted; p now fits, and is the first fitting job: it waits for d.
    let stopped = Event::Stopped { job: "l".into() };
    let out = checked_tick(&mut s, 3_000, vec![stopped]).unwrap();
    assert!(out.rejected.is_empty(), "{:?}", out.rejected);
    assert!(out.decisions.is_empty(), "{:?}", out.decisions);
    assert_eq!(reason(&s, "p"), PendingReason::WaitingForReady);
    assert_eq!(reason(&s, "s"), PendingReason::WaitingForReady);
    // d ready: p starts, and s, which fits, waits for p.
    let out = checked_tick(&mut s, 4_000, vec![ready("d")]).unwrap();
    assert_eq!(started(&out.decisions), ["p"]);
    assert!(preempted(&out.decisions).is_empty());
    assert_eq!(reason(&s, "s"), PendingReason::WaitingForReady);
    assert_eq!(reason(&s, "p2"), PendingReason::WaitingForReady);
    // p ready: s starts; s is not ready, yet p2, which does not fit, preempts d.
    let out = checked_tick(&mut s, 5_000, vec![ready("p")]).unwrap();
    assert_eq!(started(&out.decisions), ["s"]);
    assert_eq!(preempted(&out.decisions), ["d"]);
    // d stops: p2 fits, and waits for s.
    let out = checked_tick(&mut s, 6_000, vec![Event::Stopped { job: "d".into() }]).unwrap();
    assert!(
        out.decisions.is_empty() && out.rejected.is_empty(),
        "{out:?}"
    );
    assert_eq!(reason(&s, "p2"), PendingReason::WaitingForReady);
    let out = checked_tick(&mut s, 7_000, vec![ready("s")]).unwrap();
    assert_eq!(started(&out.decisions), ["p2"]);
}

#[test]
fn without_block_admission_jobs_start_together() {
    let mut s = scheduler(timings());
    let out = checked_tick(&mut s, 0, vec![submit(job("a")), submit(job("b"))]).unwrap();
    assert_eq!(started(&out.decisions), ["a", "b"]);
}

#[test]
fn a_held_job_in_back_off_reports_held() {
    let mut s = scheduler(timings());
    checked_tick(&mut s, 0, vec![submit(job("a"))]).unwrap();
    checked_tick(&mut s, 10_000, vec![]).unwrap();
    checked_tick(&mut s, 10_500, vec![Event::Hold { job: "a".into() }]).unwrap();
    assert_eq!(reason(&s, "a"), PendingReason::Held);
    assert_eq!(pending(&s, "a").backoff_until_ms, None);
}

#[test]
fn explain_shows_a_starting_jobs_deadline() {
    let mut s = scheduler(timings());
    checked_tick(&mut s, 500, vec![submit(job("a"))]).unwrap();
    let running = &s.explain().running[0];
    assert_eq!(running.ready_deadline_ms, Some(10_500));
    let wire = serde_json::to_value(running).unwrap();
    assert_eq!(wire["ready_deadline_ms"], json!(10_500));
}

#[test]
fn readiness_events_for_jobs_that_do_not_run_are_rejected() {
    let mut s = scheduler(timings());
    let mut later = job("p");
    later.begin_ms = Some(1_000_000);
    checked_tick(&mut s, 0, vec![submit(later), submit(job("a"))]).unwrap();
    let out = checked_tick(
        &mut s,
        0,
        vec![ready("nobody"), not_ready("p"), finished("a"), ready("a")],
    )
    .unwrap();
    assert_eq!(
        rejected_kinds(&out),
        [
            (0, ErrorKind::UnknownJob),
            (1, ErrorKind::InvalidState),
            (3, ErrorKind::InvalidState)
        ]
    );
    assert_eq!(reason(&s, "p"), PendingReason::Begin);
}

#[test]
fn without_the_feature_readiness_events_are_accepted_and_change_nothing() {
    let mut s = scheduler(Value::Null);
    let out = checked_tick(&mut s, 0, vec![submit(job("a"))]).unwrap();
    assert_eq!(out.next_wakeup_ms, Some(86_400_000));
    let out = checked_tick(&mut s, 1, vec![not_ready("a"), ready("a")]).unwrap();
    assert!(out.rejected.is_empty() && out.decisions.is_empty());
    assert_eq!(s.explain().running[0].ready_deadline_ms, None);
    let wire = serde_json::to_value(s.explain()).unwrap();
    assert!(wire["running"][0].get("ready_deadline_ms").is_none());
    assert!(s.state().job_by_name("a").unwrap().readiness().is_none());
}

#[test]
fn bad_configurations_are_refused_naming_the_field() {
    for (ready, field) in [
        (json!({"timeout_ms": 0}), "policy.wait_for_ready.timeout_ms"),
        (
            json!({"backoff_base_ms": 10, "backoff_max_ms": 5}),
            "policy.wait_for_ready.backoff_max_ms",
        ),
    ] {
        let err = Scheduler::new(cluster(ready)).unwrap_err();
        assert_eq!(err.field, field);
    }
    let unknown = json!({"nodes": [], "policy": {"wait_for_ready": {"timeout": 5}}});
    assert!(serde_json::from_value::<ClusterConfig>(unknown).is_err());
    // A refused reconfiguration changes nothing.
    let mut s = scheduler(timings());
    checked_tick(&mut s, 0, vec![submit(job("a"))]).unwrap();
    let before = serde_json::to_string(&s.snapshot()).unwrap();
    assert!(s.reconfigure(cluster(json!({"timeout_ms": 0}))).is_err());
    assert_eq!(serde_json::to_string(&s.snapshot()).unwrap(), before);
}

#[test]
fn reconfigure_carries_the_feature_and_turning_it_off_forgets_every_wait() {
    let mut s = scheduler(Value::Null);
    checked_tick(&mut s, 0, vec![submit(job("old"))]).unwrap();
    s.reconfigure(cluster(timings())).unwrap();
    // A job started before the feature was on is not watched; a new one is.
    checked_tick(&mut s, 1_000, vec![submit(job("new"))]).unwrap();
    let out = checked_tick(&mut s, 11_000, vec![]).unwrap();
    assert_eq!(
        requeued(&out.decisions),
        [("new", RequeueReason::ReadyTimeout)]
    );
    assert_eq!(reason(&s, "new"), PendingReason::Backoff);
    s.reconfigure(cluster(Value::Null)).unwrap();
    let out = checked_tick(&mut s, 11_001, vec![]).unwrap();
    assert_eq!(started(&out.decisions), ["new"]);
    let out = checked_tick(&mut s, 100_000, vec![]).unwrap();
    assert!(out.decisions.is_empty());
}

#[test]
fn snapshot_and_restore_keep_deadlines_counts_and_back_offs() {
    let mut wfr = timings();
    wfr["block_admission"] = json!(true);
    wfr["backoff_limit"] = json!(3);
    let mut s = scheduler(wfr);
    checked_tick(&mut s, 0, vec![submit(job("a")), submit(job("b"))]).unwrap();
    checked_tick(&mut s, 10_000, vec![]).unwrap(); // a requeued, b started
    checked_tick(&mut s, 12_000, vec![not_ready("b")]).unwrap();
    let json = serde_json::to_string(&s.snapshot()).unwrap();
    let mut restored = Scheduler::restore(serde_json::from_str(&json).unwrap()).unwrap();
    assert_eq!(restored.explain(), s.explain());
    assert_eq!(restored.next_wakeup(), s.next_wakeup());
    let a = restored.state().job_by_name("a").unwrap().ready_record();
    assert_eq!((a.requeues, a.backoff_until_ms), (1, Some(11_000)));
    for (at, events) in [
        (15_000, vec![]),
        (20_000, vec![]),
        (20_500, vec![ready("a")]),
        (40_000, vec![]),
    ] {
        let x = checked_tick(&mut s, at, events.clone()).unwrap();
        let y = checked_tick(&mut restored, at, events).unwrap();
        assert_eq!(x, y);
        assert_eq!(s.explain(), restored.explain());
    }
}

#[test]
fn a_submit_only_tick_after_a_back_off_end_runs_a_full_pass() {
    // The continued pass must not carry "backoff" past its end: the back-off end is the
    // wake-up, so a tick at or after it is never a continuation.
    let mut s = scheduler(timings());
    checked_tick(&mut s, 0, vec![submit(job("a"))]).unwrap();
    checked_tick(&mut s, 10_000, vec![]).unwrap();
    checked_tick(&mut s, 10_100, vec![submit(job("x"))]).unwrap();
    let mut b = job("y");
    b.submit_ms = Some(20_000);
    let out = checked_tick(&mut s, 11_000, vec![submit(b)]).unwrap();
    assert!(started(&out.decisions).contains(&"a"));
}

#[test]
fn a_job_told_to_stop_is_not_evicted_for_readiness() {
    let cluster = config(json!({
        "nodes": [{"name": "n1", "cpus": 1}],
        "queues": [{"name": "q", "quota": {"cpu": {"nominal": 1}},
                    "preemption": {"within_queue": "lower_priority"}}],
        "policy": {"preemption": {"enabled": true}, "wait_for_ready": timings()}}));
    let mut s = Scheduler::new(cluster).unwrap();
    let mut low = job("low");
    low.queue = Some("q".into());
    low.grace_ms = 60_000;
    let mut high = job("high").with_priority(10);
    high.queue = Some("q".into());
    checked_tick(&mut s, 0, vec![submit(low)]).unwrap();
    let out = checked_tick(&mut s, 1_000, vec![submit(high)]).unwrap();
    assert!(matches!(&out.decisions[..], [Decision::Preempt { job, .. }] if job == "low"));
    // Its ready deadline (10 s) passes during its grace: only the grace decides.
    let out = checked_tick(&mut s, 10_000, vec![]).unwrap();
    assert!(out.decisions.is_empty());
    assert_eq!(out.next_wakeup_ms, Some(61_000));
}

mod streams {
    use super::*;
    use proptest::prelude::*;

    /// One step of a random stream: submit a job, report one ready or not ready, finish one,
    /// or let time pass.
    #[derive(Clone, Debug)]
    enum Step {
        Submit { tasks: u32, requeue: bool },
        Ready(usize),
        NotReady(usize),
        Finish(usize),
        Wait(u64),
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            3 => (1u32..3, proptest::bool::weighted(0.8))
                .prop_map(|(tasks, requeue)| Step::Submit { tasks, requeue }),
            3 => (0usize..12).prop_map(Step::Ready),
            2 => (0usize..12).prop_map(Step::NotReady),
            1 => (0usize..12).prop_map(Step::Finish),
            4 => (1u64..8_000).prop_map(Step::Wait),
        ]
    }

    fn settings() -> impl Strategy<Value = Value> {
        (
            1u64..6_000,
            0u64..2_000,
            0u64..5_000,
            proptest::option::of(1u32..5),
            proptest::option::of(0u64..4_000),
            any::<bool>(),
        )
            .prop_map(|(timeout, base, extra, limit, recovery, block)| {
                json!({"timeout_ms": timeout, "backoff_base_ms": base,
                       "backoff_max_ms": base + extra, "backoff_limit": limit,
                       "recovery_timeout_ms": recovery, "block_admission": block})
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, failure_persistence: crate::common::kept_beside(), ..ProptestConfig::default() })]

        /// The oracle (back-offs as configured and respected, block admission starting nothing
        /// beside a job not ready) holds after every tick of random streams with readiness
        /// events, and a scheduler restored from a snapshot at every tick decides the same.
        #[test]
        fn the_oracle_holds_and_restores_decide_the_same(
            wfr in settings(),
            steps in proptest::collection::vec(step(), 1..60),
        ) {
            let mut s = scheduler(wfr);
            let mut now = 0;
            let mut submitted = 0;
            for step in steps {
                let name = |i: usize| format!("j{}", i % submitted.max(1));
                let event = match step {
                    Step::Submit { tasks, requeue } => {
                        let mut spec = JobSpec::new(format!("j{submitted}"), 60_000, tasks);
                        spec.requeue = requeue;
                        submitted += 1;
                        Some(submit(spec))
                    }
                    Step::Ready(i) => Some(ready(&name(i))),
                    Step::NotReady(i) => Some(not_ready(&name(i))),
                    Step::Finish(i) => Some(finished(&name(i))),
                    Step::Wait(ms) => {
                        now += ms;
                        None
                    }
                };
                let json = serde_json::to_string(&s.snapshot()).unwrap();
                let mut restored = Scheduler::restore(serde_json::from_str(&json).unwrap()).unwrap();
                let events: Vec<Event> = event.into_iter().collect();
                let a = checked_tick(&mut s, now, events.clone()).unwrap();
                let b = checked_tick(&mut restored, now, events).unwrap();
                prop_assert_eq!(a, b);
                prop_assert_eq!(s.explain(), restored.explain());
            }
        }
    }
}
