//! Quotas and preemption through the public API: every policy value, strict FIFO, per-user
//! caps, grace expiry and earmark release. Every tick runs the invariant oracle.

use crate::common;

use common::build::{self, event};
use common::decisions::{reason, started};
use gangway::testkit::checked_tick;
use gangway::{Decision, Event, PendingReason, Scheduler};
use serde_json::{Value, json};

/// One 100-cpu node; queues as given; preemption enabled.
fn scheduler(queues: Value, cohorts: Value) -> Scheduler {
    build::scheduler(json!({
        "nodes": [{"name": "n1", "cpus": 100, "memory_mib": 100000}],
        "cohorts": cohorts,
        "queues": queues,
        "policy": {"preemption": {"enabled": true}}
    }))
}

fn queue(name: &str, cpus: u32, within: &str, reclaim: &str) -> Value {
    json!({"name": name, "cohort": "co",
           "quota": {"cpu": {"nominal": cpus, "borrowing_limit": null, "lending_limit": null}},
           "preemption": {"within_queue": within, "reclaim_within_cohort": reclaim}})
}

fn submit(id: &str, queue: &str, cpus: u32, priority: i32) -> Event {
    event(json!({"type": "submit", "job": {
        "id": id, "queue": queue, "priority": priority, "user": "u", "time_limit_ms": 3_600_000,
        "grace_ms": 10_000, "groups": [{"count": 1, "cpus": cpus}]}}))
}

fn preempted(decisions: &[Decision]) -> Vec<(&str, &str)> {
    decisions
        .iter()
        .filter_map(|d| match d {
            Decision::Preempt { job, for_job, .. } => Some((job.as_str(), for_job.as_str())),
            _ => None,
        })
        .collect()
}

/// A 4-cpu queue filled by `old` (priority 0, 4 cpus); `new` (4 cpus, `priority`) arrives.
fn within_queue(policy: &str, priority: i32) -> (Scheduler, Vec<Decision>) {
    let mut s = scheduler(
        json!([queue("q", 4, policy, "never")]),
        json!([{"name": "co"}]),
    );
    checked_tick(&mut s, 0, vec![submit("old", "q", 4, 0)]).unwrap();
    let out = checked_tick(&mut s, 1000, vec![submit("new", "q", 4, priority)]).unwrap();
    (s, out.decisions)
}

#[test]
fn within_queue_never_does_not_preempt() {
    let (s, decisions) = within_queue("never", 10);
    assert!(decisions.is_empty(), "{decisions:?}");
    assert_eq!(reason(&s, "new"), PendingReason::Quota);
}

#[test]
fn within_queue_lower_priority_preempts_only_lower() {
    let (_, decisions) = within_queue("lower_priority", 1);
    assert_eq!(preempted(&decisions), [("old", "new")]);
    let (s, decisions) = within_queue("lower_priority", 0);
    assert!(
        decisions.is_empty(),
        "equal priority is not lower: {decisions:?}"
    );
    assert_eq!(reason(&s, "new"), PendingReason::Quota);
}

#[test]
fn within_queue_lower_or_newer_equal_preempts_a_newer_equal_job() {
    for (policy, expect) in [
        ("lower_or_newer_equal_priority", vec![("run", "older")]),
        ("lower_priority", vec![]),
    ] {
        let mut s = scheduler(
            json!([queue("q", 4, policy, "never")]),
            json!([{"name": "co"}]),
        );
        checked_tick(&mut s, 1000, vec![submit("run", "q", 4, 0)]).unwrap();
        let mut older = submit("older", "q", 4, 0);
        if let Event::Submit { job } = &mut older {
            job.submit_ms = Some(500);
        }
        let out = checked_tick(&mut s, 2000, vec![older]).unwrap();
        assert_eq!(preempted(&out.decisions), expect, "{policy}");
    }
    // The running job is the older one: an equal-priority newcomer may not preempt it.
    let (_, decisions) = within_queue("lower_or_newer_equal_priority", 0);
    assert!(preempted(&decisions).is_empty(), "{decisions:?}");
}

/// q1 (4 cpus) is idle; q2 (4 cpus) borrows it all with `b` (priority 0, 8 cpus); `a` (4 cpus,
/// `priority`) arrives in q1 with `reclaim` as q1's policy.
fn reclaim(policy: &str, priority: i32) -> Vec<Decision> {
    let mut s = scheduler(
        json!([
            queue("q1", 4, "never", policy),
            queue("q2", 4, "never", "never")
        ]),
        json!([{"name": "co"}]),
    );
    let out = checked_tick(&mut s, 0, vec![submit("b", "q2", 8, 0)]).unwrap();
    assert_eq!(started(&out.decisions), ["b"]);
    checked_tick(&mut s, 1000, vec![submit("a", "q1", 4, priority)])
        .unwrap()
        .decisions
}

#[test]
fn reclaim_never_does_not_preempt() {
    assert!(reclaim("never", 10).is_empty());
}

#[test]
fn reclaim_lower_priority_needs_a_lower_borrower() {
    assert_eq!(preempted(&reclaim("lower_priority", 1)), [("b", "a")]);
    assert!(reclaim("lower_priority", 0).is_empty());
}

#[test]
fn reclaim_any_preempts_a_borrower_of_any_priority() {
    assert_eq!(preempted(&reclaim("any", -5)), [("b", "a")]);
}

#[test]
fn reclaim_only_while_the_preemptor_stays_within_nominal() {
    let mut s = scheduler(
        json!([
            queue("q1", 4, "never", "any"),
            queue("q2", 4, "never", "never")
        ]),
        json!([{"name": "co"}]),
    );
    checked_tick(&mut s, 0, vec![submit("b", "q2", 8, 0)]).unwrap();
    // 5 cpus would take q1 above its nominal 4: no reclaiming for it.
    let out = checked_tick(&mut s, 1000, vec![submit("a", "q1", 5, 0)]).unwrap();
    assert!(out.decisions.is_empty(), "{:?}", out.decisions);
    assert_eq!(reason(&s, "a"), PendingReason::Quota);
}

#[test]
fn quota_waiting_jobs_never_block_but_strict_fifo_blocks_its_queue() {
    for (strict, expect) in [(false, vec!["small"]), (true, vec![])] {
        let mut q = queue("q", 4, "never", "never");
        q["strict_fifo"] = json!(strict);
        let mut s = scheduler(json!([q]), json!([{"name": "co"}]));
        checked_tick(&mut s, 0, vec![submit("run", "q", 2, 0)]).unwrap();
        let out = checked_tick(
            &mut s,
            1000,
            vec![submit("big", "q", 4, 5), submit("small", "q", 2, 0)],
        )
        .unwrap();
        assert_eq!(started(&out.decisions), expect, "strict_fifo {strict}");
        assert_eq!(reason(&s, "big"), PendingReason::Quota);
    }
}

#[test]
fn max_per_user_caps_one_user() {
    let mut q = queue("q", 100, "never", "never");
    q["max_per_user"] = json!({"cpu": 4});
    let mut s = scheduler(json!([q]), json!([{"name": "co"}]));
    let mut other = submit("other", "q", 4, 0);
    if let Event::Submit { job } = &mut other {
        job.user = Some("v".into());
    }
    let out = checked_tick(
        &mut s,
        0,
        vec![submit("a", "q", 3, 0), submit("b", "q", 2, 0), other],
    )
    .unwrap();
    assert_eq!(started(&out.decisions), ["a", "other"]);
    assert_eq!(reason(&s, "b"), PendingReason::Quota);
}

#[test]
fn grace_expiry_kills_the_victim_and_the_preemptor_starts_in_that_tick() {
    let (mut s, decisions) = within_queue("lower_priority", 1);
    assert_eq!(preempted(&decisions), [("old", "new")]);
    assert_eq!(reason(&s, "new"), PendingReason::Preempting);
    assert!(
        s.explain()
            .running
            .iter()
            .any(|r| r.job == "old" && r.preempting)
    );
    assert_eq!(s.next_wakeup(), Some(11_000));
    let out = checked_tick(&mut s, 5000, vec![]).unwrap();
    assert!(out.decisions.is_empty(), "{:?}", out.decisions);
    let out = checked_tick(&mut s, 11_000, vec![]).unwrap();
    assert!(matches!(&out.decisions[0], Decision::Kill { job, .. } if job == "old"));
    assert_eq!(started(&out.decisions), ["new"]);
    assert_eq!(reason(&s, "old"), PendingReason::Quota); // requeued; the quota is new's now
}

#[test]
fn earmarked_quota_goes_to_the_preemptor_alone() {
    // Two victims stop in different ticks; a higher job arriving in between may not take the
    // quota the first one freed.
    let mut q = queue("q", 4, "lower_priority", "never");
    q.as_object_mut().unwrap().remove("cohort");
    let mut s = scheduler(json!([q]), json!([]));
    checked_tick(
        &mut s,
        0,
        vec![submit("v1", "q", 2, 0), submit("v2", "q", 2, 0)],
    )
    .unwrap();
    let out = checked_tick(&mut s, 1000, vec![submit("p", "q", 4, 5)]).unwrap();
    assert_eq!(preempted(&out.decisions).len(), 2);
    let stopped = |job: &str| event(json!({"type": "stopped", "job": job}));
    let out = checked_tick(&mut s, 2000, vec![stopped("v1"), submit("x", "q", 2, 9)]).unwrap();
    assert!(started(&out.decisions).is_empty(), "{:?}", out.decisions);
    assert_eq!(reason(&s, "p"), PendingReason::Preempting);
    assert_eq!(reason(&s, "x"), PendingReason::Quota);
    let out = checked_tick(&mut s, 3000, vec![stopped("v2")]).unwrap();
    assert_eq!(started(&out.decisions), ["p"]);
}

#[test]
fn earmarked_node_resources_go_to_the_preemptor_alone() {
    // A 4-cpu node: the preemptor's placement is held while its victims stop, even from a
    // job with no queue.
    let mut s = build::scheduler(json!({
        "nodes": [{"name": "n1", "cpus": 4}],
        "queues": [queue("q", 100, "lower_priority", "never")],
        "cohorts": [{"name": "co"}],
        "policy": {"preemption": {"enabled": true}, "backfill": {"mode": "none"}}
    }));
    checked_tick(
        &mut s,
        0,
        vec![submit("v1", "q", 2, 0), submit("v2", "q", 2, 0)],
    )
    .unwrap();
    let out = checked_tick(&mut s, 1000, vec![submit("p", "q", 4, 5)]).unwrap();
    assert_eq!(preempted(&out.decisions).len(), 2);
    let loose = event(json!({"type": "submit", "job": {
        "id": "loose", "priority": 100, "time_limit_ms": 1000, "groups": [{"count": 1, "cpus": 2}]}}));
    let stopped = |job: &str| event(json!({"type": "stopped", "job": job}));
    let out = checked_tick(&mut s, 2000, vec![stopped("v1"), loose]).unwrap();
    assert!(started(&out.decisions).is_empty(), "{:?}", out.decisions);
    let out = checked_tick(&mut s, 3000, vec![stopped("v2")]).unwrap();
    assert_eq!(started(&out.decisions), ["p"]);
}

#[test]
fn cancelled_preemptor_releases_its_earmark() {
    let (mut s, decisions) = within_queue("lower_priority", 1);
    assert_eq!(preempted(&decisions), [("old", "new")]);
    let out = checked_tick(
        &mut s,
        2000,
        vec![
            event(json!({"type": "cancel", "job": "new"})),
            event(json!({"type": "stopped", "job": "old"})),
            submit("later", "q", 4, -1),
        ],
    )
    .unwrap();
    // `old` was requeued with its original submit time and takes its quota back first.
    assert_eq!(started(&out.decisions), ["old"]);
    let snapshot = serde_json::to_value(s.snapshot()).unwrap();
    assert_eq!(snapshot["state"]["earmarks"], serde_json::json!({}));
}

#[test]
fn snapshot_restore_rebuilds_quota_and_keeps_earmarks() {
    let (s, _) = within_queue("lower_priority", 1);
    let text = serde_json::to_string(&s.snapshot()).unwrap();
    let mut restored = Scheduler::restore(serde_json::from_str(&text).unwrap()).unwrap();
    let out = checked_tick(
        &mut restored,
        2000,
        vec![event(json!({"type": "stopped", "job": "old"}))],
    )
    .unwrap();
    assert_eq!(started(&out.decisions), ["new"]);
}

#[test]
fn jobs_without_a_queue_neither_preempt_nor_are_preempted() {
    let mut s = scheduler(
        json!([queue("q", 100, "lower_priority", "never")]),
        json!([{"name": "co"}]),
    );
    let loose = event(json!({"type": "submit", "job": {
        "id": "loose", "time_limit_ms": 3_600_000, "groups": [{"count": 1, "cpus": 100}]}}));
    checked_tick(&mut s, 0, vec![loose]).unwrap();
    let out = checked_tick(&mut s, 1000, vec![submit("p", "q", 4, 10)]).unwrap();
    assert!(out.decisions.is_empty(), "{:?}", out.decisions);
    assert_eq!(reason(&s, "p"), PendingReason::Reserved);
}

/// One 8-cpu node in partitions `low` (tier 0) and `high` (tier 1); no queues.
fn tiers(enabled: bool) -> Scheduler {
    build::scheduler(json!({
        "nodes": [{"name": "n1", "cpus": 8, "memory_mib": 8000}],
        "partitions": [{"name": "low", "priority_tier": 0, "default": true},
                       {"name": "high", "priority_tier": 1}],
        "policy": {"preemption": {"enabled": true, "partition_tiers": enabled}}
    }))
}

fn loose(id: &str, partition: &str, cpus: u32, preemptible: bool) -> Event {
    event(json!({"type": "submit", "job": {
        "id": id, "partition": partition, "time_limit_ms": 3_600_000, "grace_ms": 5_000,
        "preemptible": preemptible, "groups": [{"count": 1, "cpus": cpus}]}}))
}

#[test]
fn partition_tiers_let_a_higher_tier_preempt_lower_tiers_without_queues() {
    for (enabled, expect) in [(true, vec![("low1", "high")]), (false, vec![])] {
        let mut s = tiers(enabled);
        checked_tick(&mut s, 0, vec![loose("low1", "low", 8, true)]).unwrap();
        let out = checked_tick(&mut s, 1000, vec![loose("high", "high", 8, true)]).unwrap();
        assert_eq!(
            preempted(&out.decisions),
            expect,
            "partition_tiers {enabled}"
        );
    }
    // The same tier never preempts, and a non-preemptible job is never a victim.
    let mut s = tiers(true);
    checked_tick(&mut s, 0, vec![loose("fixed", "low", 4, false)]).unwrap();
    checked_tick(&mut s, 0, vec![loose("low1", "low", 4, true)]).unwrap();
    let out = checked_tick(&mut s, 1000, vec![loose("low2", "low", 4, true)]).unwrap();
    assert!(out.decisions.is_empty(), "{:?}", out.decisions);
    let out = checked_tick(&mut s, 2000, vec![loose("high", "high", 8, true)]).unwrap();
    assert!(out.decisions.is_empty(), "{:?}", out.decisions);
    let out = checked_tick(&mut s, 3000, vec![loose("high4", "high", 4, true)]).unwrap();
    assert_eq!(preempted(&out.decisions), [("low1", "high4")]);
    let stopped = event(json!({"type": "stopped", "job": "low1"}));
    let out = checked_tick(&mut s, 4000, vec![stopped]).unwrap();
    assert_eq!(started(&out.decisions), ["high4"]);
}

#[test]
fn partition_tiers_reach_jobs_of_any_queue() {
    let mut s = build::scheduler(json!({
        "nodes": [{"name": "n1", "cpus": 8, "memory_mib": 8000}],
        "partitions": [{"name": "low", "priority_tier": 0, "default": true},
                       {"name": "high", "priority_tier": 1}],
        "queues": [{"name": "q", "quota": {"cpu": {"nominal": 8}}}],
        "policy": {"preemption": {"enabled": true, "partition_tiers": true}}
    }));
    checked_tick(&mut s, 0, vec![submit("queued", "q", 8, 100)]).unwrap();
    let out = checked_tick(&mut s, 1000, vec![loose("high", "high", 8, true)]).unwrap();
    assert_eq!(preempted(&out.decisions), [("queued", "high")]);
}

/// q1 and q2 (4 cpus nominal each); `b` (priority 0, 6 cpus) borrows 2 in q2; `a` (6 cpus,
/// `priority`) in q1 would borrow 2 too, so reclaiming is not allowed for it.
fn borrow(policy: Value, priority: i32) -> Vec<Decision> {
    borrow_reclaiming(policy, priority, "any")
}

/// [`borrow`] with q1's `reclaim_within_cohort` as given.
fn borrow_reclaiming(policy: Value, priority: i32, reclaim: &str) -> Vec<Decision> {
    let mut q1 = queue("q1", 4, "never", reclaim);
    q1["preemption"]["borrow_within_cohort"] = policy;
    let mut s = scheduler(
        json!([q1, queue("q2", 4, "never", "never")]),
        json!([{"name": "co"}]),
    );
    let out = checked_tick(&mut s, 0, vec![submit("b", "q2", 6, 0)]).unwrap();
    assert_eq!(started(&out.decisions), ["b"]);
    let out = checked_tick(&mut s, 1000, vec![submit("a", "q1", 6, priority)]).unwrap();
    if !out.decisions.is_empty() {
        let stopped = event(json!({"type": "stopped", "job": "b"}));
        let next = checked_tick(&mut s, 2000, vec![stopped]).unwrap();
        assert_eq!(started(&next.decisions), ["a"], "a borrows once b stopped");
    }
    out.decisions
}

#[test]
fn borrow_within_cohort_preempts_lower_priority_borrowers_while_borrowing() {
    let lower = json!({"policy": "lower_priority"});
    assert_eq!(preempted(&borrow(lower.clone(), 1)), [("b", "a")]);
    assert!(borrow(lower, 0).is_empty(), "equal priority is not lower");
    assert!(borrow(json!({"policy": "never"}), 10).is_empty());
    let threshold = |t: i32| json!({"policy": "lower_priority", "max_priority_threshold": t});
    assert_eq!(preempted(&borrow(threshold(0), 10)), [("b", "a")]);
    assert!(
        borrow(threshold(-1), 10).is_empty(),
        "b is above the threshold"
    );
}

#[test]
fn borrow_within_cohort_widens_a_reclaim_policy_and_never_replaces_it() {
    let lower = json!({"policy": "lower_priority"});
    assert_eq!(
        preempted(&borrow_reclaiming(lower.clone(), 1, "lower_priority")),
        [("b", "a")]
    );
    // As Kueue's webhook does, a queue that borrows within the cohort without a reclaim
    // policy is refused, and nothing is configured.
    let mut q1 = queue("q1", 4, "never", "never");
    q1["preemption"]["borrow_within_cohort"] = lower;
    let cluster = json!({"nodes": [{"name": "n1", "cpus": 100, "memory_mib": 100000}],
                         "cohorts": [{"name": "co"}], "queues": [q1]});
    let refused = Scheduler::new(build::config(cluster)).unwrap_err();
    assert_eq!(refused.field, "queues[0].preemption.borrow_within_cohort");
}

#[test]
fn a_job_never_preempts_the_job_that_preempted_it() {
    let mut s = scheduler(
        json!([queue("q", 4, "lower_priority", "never")]),
        json!([{"name": "co"}]),
    );
    checked_tick(&mut s, 0, vec![submit("b", "q", 4, 0)]).unwrap();
    let out = checked_tick(&mut s, 1000, vec![submit("a", "q", 4, 5)]).unwrap();
    assert_eq!(preempted(&out.decisions), [("b", "a")]);
    let stopped = event(json!({"type": "stopped", "job": "b"}));
    assert_eq!(
        started(&checked_tick(&mut s, 2000, vec![stopped]).unwrap().decisions),
        ["a"]
    );
    // b (requeued) now outranks a, yet does not preempt it in turn.
    let raise = event(json!({"type": "set_priority", "job": "b", "priority": 9}));
    let out = checked_tick(&mut s, 3000, vec![raise]).unwrap();
    assert!(out.decisions.is_empty(), "{:?}", out.decisions);
    assert_eq!(reason(&s, "b"), PendingReason::Quota);
}

#[test]
fn a_borrowing_preemptor_retries_without_reclaim_only_victims() {
    // q1 runs low1 (3); q2 borrows with b (5 of its 4); q3 lends 4. a (5, in q1) must borrow, so
    // the borrower b, first in the order, is no victim for it: its own low1 is.
    let mut s = scheduler(
        json!([
            queue("q1", 4, "lower_priority", "any"),
            queue("q2", 4, "never", "never"),
            queue("q3", 4, "never", "never")
        ]),
        json!([{"name": "co"}]),
    );
    let out = checked_tick(
        &mut s,
        0,
        vec![submit("low1", "q1", 3, 0), submit("b", "q2", 5, 0)],
    )
    .unwrap();
    assert_eq!(started(&out.decisions), ["low1", "b"]);
    let out = checked_tick(&mut s, 1000, vec![submit("a", "q1", 5, 5)]).unwrap();
    assert_eq!(preempted(&out.decisions), [("low1", "a")]);
}
