//! The blocked head and its backfill rule (issue 29): RLScheduler's `before_head_estimate`
//! against hand-worked examples, a frozen estimate, user backfill rules (and the engine
//! refereeing them), the pinned head through a snapshot, and the preemptor exempt from the
//! rules on what its stopped victims freed for it. Every tick runs the oracle.

use crate::common;

use common::build::{config, event, finished, submit};
use common::decisions::{pending, reason, started};
use gangway::PendingReason;
use gangway::policy::builtin::Multifactor;
use gangway::policy::{HeadView, Hook, PassContext, Plugin, Profile};
use gangway::state::JobView;
use gangway::testkit::checked_tick;
use gangway::{ClusterConfig, Event, JobSpec, Scheduler};
use serde_json::json;

/// One node of 4 cpus under `policy`.
fn four_cpus(policy: serde_json::Value) -> ClusterConfig {
    config(json!({"nodes": [{"name": "n1", "cpus": 4}], "policy": policy}))
}

fn before_head() -> serde_json::Value {
    json!({"backfill": {"mode": "before_head_estimate"}})
}

/// `id` on `cpus` one-cpu tasks for `limit_ms`.
fn job(id: &str, cpus: u32, limit_ms: u64) -> JobSpec {
    JobSpec::new(id, limit_ms, cpus)
}

/// R (3 cpus, 100 s), the head H (4 cpus), A (1 cpu, ending exactly at R's requested end) and
/// B (1 cpu, ending 1 ms before it), submitted at once.
fn r_h_a_b() -> Vec<Event> {
    let jobs = [
        job("R", 3, 100_000),
        job("H", 4, 50_000),
        job("A", 1, 100_000),
        job("B", 1, 99_999),
    ];
    jobs.into_iter().map(submit).collect()
}

/// R (3 cpus, 100 s) runs; the head H (4 cpus) is estimated at 100 s, when R's requested
/// time ends. A ends exactly at the estimate: refused. B ends 1 ms before it: admitted.
#[test]
fn before_head_estimate_admits_only_an_end_strictly_before_the_estimate() {
    let mut s = Scheduler::new(four_cpus(before_head())).unwrap();
    let out = checked_tick(&mut s, 0, r_h_a_b()).unwrap();
    assert_eq!(started(&out.decisions), ["R", "B"]);
    let head = pending(&s, "H");
    assert_eq!(head.reason, PendingReason::Resources);
    assert_eq!(head.estimated_start_ms, Some(100_000));
    assert_eq!(reason(&s, "A"), PendingReason::Priority);
}

/// The same jobs under EASY: A ends exactly when H's reservation begins, which does not
/// overlap it, so A backfills and B no longer fits: the two rules really differ.
#[test]
fn easy_admits_an_end_at_the_reservation_where_before_head_estimate_does_not() {
    let mut s = Scheduler::new(four_cpus(json!({}))).unwrap();
    let out = checked_tick(&mut s, 0, r_h_a_b()).unwrap();
    assert_eq!(started(&out.decisions), ["R", "A"]);
    assert_eq!(pending(&s, "H").reason, PendingReason::Reserved);
}

/// R's time limit grows to 200 s, so H's real earliest start moves to 200 s (EASY's
/// reservation follows it); the frozen estimate stays at 100 s, and C, which would end at
/// 170 s, before the real start, is still refused.
#[test]
fn the_frozen_estimate_is_not_updated_when_the_heads_start_moves() {
    let run = |policy: serde_json::Value| {
        let mut s = Scheduler::new(four_cpus(policy)).unwrap();
        let jobs = vec![submit(job("R", 3, 100_000)), submit(job("H", 4, 50_000))];
        checked_tick(&mut s, 0, jobs).unwrap();
        let longer = event(json!({"type": "set_time_limit", "job": "R", "time_limit_ms": 200_000}));
        checked_tick(&mut s, 10_000, vec![longer]).unwrap();
        let out = checked_tick(&mut s, 20_000, vec![submit(job("C", 1, 150_000))]).unwrap();
        let estimate = pending(&s, "H").estimated_start_ms;
        (started(&out.decisions).len(), estimate, reason(&s, "H"))
    };
    assert_eq!(
        run(json!({})),
        (1, Some(200_000), PendingReason::Reserved),
        "the real start moved"
    );
    assert_eq!(
        run(before_head()),
        (0, Some(100_000), PendingReason::Resources),
        "the estimate stayed"
    );
}

/// A head that leaves (here: starts) gives way to a new head, estimated afresh when it
/// becomes the head.
#[test]
fn a_new_head_is_estimated_when_it_becomes_the_head() {
    let mut s = Scheduler::new(four_cpus(before_head())).unwrap();
    let jobs = vec![
        submit(job("R", 4, 100_000)),
        submit(job("H", 4, 50_000)),
        submit(job("G", 4, 10_000)),
    ];
    checked_tick(&mut s, 0, jobs).unwrap();
    assert_eq!(pending(&s, "H").estimated_start_ms, Some(100_000));
    assert_eq!(pending(&s, "G").estimated_start_ms, None);
    let out = checked_tick(&mut s, 30_000, vec![finished("R")]).unwrap();
    assert_eq!(started(&out.decisions), ["H"]);
    // G became the head at 30 s: H's requested time ends at 80 s.
    assert_eq!(pending(&s, "G").estimated_start_ms, Some(80_000));
}

/// Mode `rule` with a user rule: EASY's "ends by the head's estimate" without a reservation.
#[derive(Clone)]
struct EndsByHead;

#[gangway::policy::plugin]
impl Plugin for EndsByHead {
    fn name(&self) -> &str {
        "ends_by_head"
    }
    fn may_backfill(&self, head: HeadView<'_>, job: JobView<'_>, ctx: &PassContext<'_>) -> bool {
        let end = ctx.now_ms().saturating_add(job.spec().time_limit_ms);
        head.estimated_start_ms.is_none_or(|start| end <= start)
    }
}

fn with_rule(rule: impl Plugin) -> Profile {
    Profile::builder()
        .plugin(Multifactor::from_config())
        .plugin(rule)
        .build()
        .unwrap()
}

#[test]
fn a_user_rule_decides_in_mode_rule() {
    let cluster = four_cpus(json!({"backfill": {"mode": "rule"}}));
    let mut s = Scheduler::with_profile(cluster, with_rule(EndsByHead)).unwrap();
    let jobs = [
        job("R", 3, 100_000),
        job("H", 4, 50_000),
        job("L", 1, 100_001),
        job("A", 1, 100_000),
    ];
    let out = checked_tick(&mut s, 0, jobs.into_iter().map(submit).collect()).unwrap();
    assert_eq!(started(&out.decisions), ["R", "A"]);
    assert_eq!(reason(&s, "L"), PendingReason::Priority);
    assert_eq!(pending(&s, "H").estimated_start_ms, Some(100_000));
}

/// A rule that gives one answer to every job: `Fixed(false)` refuses everything, `Fixed(true)`
/// admits everything.
#[derive(Clone)]
struct Fixed(bool);

#[gangway::policy::plugin]
impl Plugin for Fixed {
    fn name(&self) -> &str {
        if self.0 { "always" } else { "never" }
    }
    fn may_backfill(&self, _: HeadView<'_>, _: JobView<'_>, _: &PassContext<'_>) -> bool {
        self.0
    }
}

/// Under EASY a rule refuses on top of the reservation: A, which EASY backfills, waits.
#[test]
fn a_user_rule_refuses_on_top_of_easy() {
    let mut s = Scheduler::with_profile(four_cpus(json!({})), with_rule(Fixed(false))).unwrap();
    let jobs = [
        job("R", 3, 100_000),
        job("H", 4, 50_000),
        job("A", 1, 1_000),
    ];
    let out = checked_tick(&mut s, 0, jobs.into_iter().map(submit).collect()).unwrap();
    assert_eq!(started(&out.decisions), ["R"]);
    assert_eq!(reason(&s, "A"), PendingReason::Priority);
    assert_eq!(pending(&s, "H").estimated_start_ms, Some(100_000));
}

/// The engine referees: a rule that admits a job that does not fit starts nothing (placement
/// decides), and the oracle finds nothing over-committed.
#[test]
fn a_rule_that_admits_a_job_that_does_not_fit_is_refused() {
    let cluster = four_cpus(json!({"backfill": {"mode": "rule"}}));
    let mut s = Scheduler::with_profile(cluster, with_rule(Fixed(true))).unwrap();
    let jobs = [
        job("R", 3, 100_000),
        job("H", 4, 50_000),
        job("X", 2, 1_000),
    ];
    let out = checked_tick(&mut s, 0, jobs.into_iter().map(submit).collect()).unwrap();
    assert_eq!(started(&out.decisions), ["R"]);
    assert_eq!(reason(&s, "X"), PendingReason::Resources);
}

/// A rule that panics.
#[derive(Clone)]
struct Panics;

#[gangway::policy::plugin]
impl Plugin for Panics {
    fn name(&self) -> &str {
        "panics"
    }
    fn may_backfill(&self, _: HeadView<'_>, _: JobView<'_>, _: &PassContext<'_>) -> bool {
        panic!("rule broke")
    }
}

/// A panicking rule is a plug-in fault: reported, abstaining (admitting) for the pass, never
/// a crash; the built-in comparison of `before_head_estimate` still holds.
#[test]
fn a_panicking_rule_is_a_plugin_fault() {
    let mut s = Scheduler::with_profile(four_cpus(before_head()), with_rule(Panics)).unwrap();
    let out = checked_tick(&mut s, 0, r_h_a_b()).unwrap();
    assert_eq!(started(&out.decisions), ["R", "B"]);
    assert_eq!(out.plugin_faults.len(), 1);
    assert_eq!(out.plugin_faults[0].hook, Hook::Backfill);
    assert_eq!(out.plugin_faults[0].message, "rule broke");
}

/// A backfill rule is global: it cannot be listed for one partition.
#[test]
fn a_backfill_rule_cannot_be_listed_for_a_partition() {
    let refused = Profile::builder().plugin_in("gpu", Fixed(false)).build();
    assert!(refused.is_err());
}

/// `depth` belongs to the reservation modes: with a head rule it is refused, naming the field.
#[test]
fn depth_with_a_head_rule_is_refused() {
    let cluster = four_cpus(json!({"backfill": {"mode": "before_head_estimate", "depth": 2}}));
    let err = Scheduler::new(cluster).unwrap_err();
    assert_eq!(err.field, "policy.backfill.depth");
}

/// R runs until 100 s; H (priority 0) is blocked; N (priority 100, 4 cpus) comes at 10 s.
/// Returns the scheduler after that tick.
fn newcomer(pinned: bool) -> Scheduler {
    let policy = json!({"priority": {"pinned_head": pinned}});
    let mut s = Scheduler::new(four_cpus(policy)).unwrap();
    let jobs = vec![submit(job("R", 3, 100_000)), submit(job("H", 4, 50_000))];
    checked_tick(&mut s, 0, jobs).unwrap();
    let better = job("N", 4, 50_000).with_priority(100);
    checked_tick(&mut s, 10_000, vec![submit(better)]).unwrap();
    s
}

/// Who starts when R ends.
fn starts_after_r(s: &mut Scheduler) -> Vec<String> {
    let out = checked_tick(s, 100_000, vec![finished("R")]).unwrap();
    started(&out.decisions)
        .into_iter()
        .map(str::to_string)
        .collect()
}

#[test]
fn a_better_newcomer_does_not_overtake_a_pinned_head() {
    let mut s = newcomer(true);
    assert_eq!(pending(&s, "H").position, 1);
    assert_eq!(pending(&s, "H").estimated_start_ms, Some(100_000));
    assert_eq!(starts_after_r(&mut s), ["H"]);
}

#[test]
fn a_better_newcomer_overtakes_the_head_without_the_pin() {
    let mut s = newcomer(false);
    assert_eq!(pending(&s, "N").position, 1);
    assert_eq!(starts_after_r(&mut s), ["N"]);
}

/// The pin travels in the snapshot: restored, H still starts first; with the snapshot's head
/// taken out, the newcomer overtakes (so the restored pin is what decides).
#[test]
fn snapshot_and_restore_keep_the_pinned_head() {
    let s = newcomer(true);
    let mut json = serde_json::to_value(s.snapshot()).unwrap();
    assert!(json.get("head").is_some());
    let mut restored = Scheduler::restore(serde_json::from_value(json.clone()).unwrap()).unwrap();
    assert_eq!(starts_after_r(&mut restored), ["H"]);
    json.as_object_mut().unwrap().remove("head");
    let mut forgotten = Scheduler::restore(serde_json::from_value(json).unwrap()).unwrap();
    assert_eq!(starts_after_r(&mut forgotten), ["N"]);
}

/// The default profile keeps no head: its snapshots are as before.
#[test]
fn the_default_profile_keeps_no_head() {
    let s = newcomer(false);
    let json = serde_json::to_value(s.snapshot()).unwrap();
    assert!(json.get("head").is_none());
}

/// A pinned head loses its pin when held: the newcomer takes the first place.
#[test]
fn a_held_head_loses_its_pin() {
    let mut s = newcomer(true);
    let hold = event(json!({"type": "hold", "job": "H"}));
    checked_tick(&mut s, 20_000, vec![hold]).unwrap();
    let release = event(json!({"type": "release", "job": "H"}));
    checked_tick(&mut s, 30_000, vec![release]).unwrap();
    assert_eq!(pending(&s, "N").position, 1);
    assert_eq!(starts_after_r(&mut s), ["N"]);
}

/// RLScheduler's simulator: a pinned head and its backfill rule together. The frozen estimate
/// of the pinned head survives a snapshot.
#[test]
fn pinned_head_with_before_head_estimate_survives_a_snapshot() {
    let policy = json!({"backfill": {"mode": "before_head_estimate"},
                        "priority": {"pinned_head": true}});
    let mut s = Scheduler::new(four_cpus(policy)).unwrap();
    let jobs = vec![submit(job("R", 3, 100_000)), submit(job("H", 4, 50_000))];
    checked_tick(&mut s, 0, jobs).unwrap();
    let longer = event(json!({"type": "set_time_limit", "job": "R", "time_limit_ms": 200_000}));
    checked_tick(&mut s, 10_000, vec![longer]).unwrap();
    let mut restored = Scheduler::restore(s.snapshot()).unwrap();
    let newcomers = vec![
        submit(job("N", 4, 1_000).with_priority(100)),
        submit(job("C", 1, 150_000)),
        submit(job("D", 1, 80_000)),
    ];
    let out = checked_tick(&mut restored, 20_000, newcomers).unwrap();
    // C would end at 170 s, not before the frozen 100 s; D ends at 100 s: not strictly before.
    assert!(started(&out.decisions).is_empty());
    assert_eq!(pending(&restored, "H").position, 1);
    assert_eq!(pending(&restored, "H").estimated_start_ms, Some(100_000));
    let out = checked_tick(&mut restored, 21_000, vec![submit(job("E", 1, 78_999))]).unwrap();
    assert_eq!(started(&out.decisions), ["E"]);
}

/// R (2 cpus, 100 s) and Q (2 cpus, 20 s) run; the pinned head H (4 cpus) is estimated at
/// 100 s; Y (2 cpus, 50 s) comes at 1 s, X (the same, priority 100) at 2 s; Q ends at 10 s.
/// Returns who starts then, with the backfill candidates tried in `candidates` order.
fn candidate_after_q(candidates: &str) -> Vec<String> {
    let policy = json!({
        "backfill": {"mode": "before_head_estimate", "candidates": candidates},
        "priority": {"pinned_head": true},
    });
    let mut s = Scheduler::new(four_cpus(policy)).unwrap();
    let first = vec![
        submit(job("R", 2, 100_000)),
        submit(job("Q", 2, 20_000)),
        submit(job("H", 4, 50_000)),
    ];
    checked_tick(&mut s, 0, first).unwrap();
    checked_tick(&mut s, 1_000, vec![submit(job("Y", 2, 50_000))]).unwrap();
    let better = job("X", 2, 50_000).with_priority(100);
    checked_tick(&mut s, 2_000, vec![submit(better)]).unwrap();
    assert_eq!(pending(&s, "H").estimated_start_ms, Some(100_000));
    let out = checked_tick(&mut s, 10_000, vec![finished("Q")]).unwrap();
    started(&out.decisions)
        .into_iter()
        .map(str::to_string)
        .collect()
}

/// Behind the head, the pass's order tries X (priority 100) first; `submit` tries Y, which
/// came first, as RLScheduler's backfill does whatever its heuristic.
#[test]
fn backfill_candidates_in_submit_order() {
    assert_eq!(candidate_after_q("order"), ["X"]);
    assert_eq!(candidate_after_q("submit"), ["Y"]);
}

/// `candidates` belongs to the head-rule modes: with `easy` it is refused, naming the field.
#[test]
fn candidates_without_a_head_rule_is_refused() {
    let cluster = four_cpus(json!({"backfill": {"mode": "easy", "candidates": "submit"}}));
    let err = Scheduler::new(cluster).unwrap_err();
    assert_eq!(err.field, "policy.backfill.candidates");
}

/// One node of 4 cpus with order-based preemption under `policy` (merged in).
fn preempting(mut policy: serde_json::Value) -> ClusterConfig {
    policy["preemption"] = json!({"enabled": true, "order_based": true});
    four_cpus(policy)
}

/// R (2 cpus, priority 100) and V (2 cpus, priority 0) run until 100 s; the head H (4 cpus,
/// priority 50) cannot preempt R, which ranks above it, so it waits, estimated at 100 s. P (2
/// cpus, 200 s, `p_priority`) comes at 2 s (after H became the head at 1 s) and preempts V,
/// whose resources are earmarked for it. At 3 s V has stopped: P fits on its earmark, though
/// its end (203 s) is not before the head's estimate. Returns who starts at 3 s, and P's
/// reason if it still waits.
fn preemptor_after_its_victims_stopped(
    s: &mut Scheduler,
    p_priority: i32,
) -> (Vec<String>, Option<PendingReason>) {
    let running = vec![
        submit(job("R", 2, 100_000).with_priority(100)),
        submit(job("V", 2, 100_000)),
    ];
    assert_eq!(
        started(&checked_tick(s, 0, running).unwrap().decisions),
        ["R", "V"]
    );
    let head = job("H", 4, 50_000).with_priority(50);
    checked_tick(s, 1_000, vec![submit(head)]).unwrap();
    assert_eq!(pending(s, "H").estimated_start_ms, Some(100_000));
    let preemptor = job("P", 2, 200_000).with_priority(p_priority);
    let out = checked_tick(s, 2_000, vec![submit(preemptor)]).unwrap();
    assert!(
        out.decisions.iter().any(|d| matches!(d,
            gangway::Decision::Preempt { job, for_job, .. } if job == "V" && for_job == "P")),
        "{:?}",
        out.decisions
    );
    assert_eq!(reason(s, "P"), PendingReason::Preempting);
    let stopped = event(json!({"type": "stopped", "job": "V"}));
    let out = checked_tick(s, 3_000, vec![stopped]).unwrap();
    let waits = s
        .explain()
        .pending
        .iter()
        .find(|p| p.job == "P")
        .map(|p| p.reason);
    let starts = started(&out.decisions)
        .into_iter()
        .map(str::to_string)
        .collect();
    (starts, waits)
}

/// The exemption from the head rules: a preemptor whose victims stopped starts on what they
/// freed for it, whatever the backfill rule says of it. Under `before_head_estimate` P's end
/// (203 s) is not before H's estimate (100 s), so the rule alone would refuse it.
#[test]
fn a_preemptor_starts_on_its_earmark_under_before_head_estimate() {
    let mut s = Scheduler::new(preempting(before_head())).unwrap();
    let (starts, waits) = preemptor_after_its_victims_stopped(&mut s, 10);
    assert_eq!(starts, ["P"]);
    assert_eq!(waits, None);
    // The head is still the head, with its frozen estimate.
    assert_eq!(reason(&s, "H"), PendingReason::Resources);
    assert_eq!(pending(&s, "H").estimated_start_ms, Some(100_000));
}

/// In mode `rule` with a rule that refuses every job, the preemptor still starts on its
/// earmark once its victims have stopped.
#[test]
fn a_preemptor_starts_on_its_earmark_under_a_refusing_rule() {
    let cluster = preempting(json!({"backfill": {"mode": "rule"}}));
    let mut s = Scheduler::with_profile(cluster, with_rule(Fixed(false))).unwrap();
    let (starts, waits) = preemptor_after_its_victims_stopped(&mut s, 10);
    assert_eq!(starts, ["P"]);
    assert_eq!(waits, None);
}

/// With a pinned head, the head keeps the first turn although P ranks above it (priority 80
/// against 50), so P comes behind the head and is held to `before_head_estimate`; its earmark
/// exempts it all the same.
#[test]
fn a_preemptor_starts_on_its_earmark_behind_a_pinned_head() {
    let policy = json!({"backfill": {"mode": "before_head_estimate"},
                        "priority": {"pinned_head": true}});
    let mut s = Scheduler::new(preempting(policy)).unwrap();
    let (starts, waits) = preemptor_after_its_victims_stopped(&mut s, 80);
    assert_eq!(starts, ["P"]);
    assert_eq!(waits, None);
    assert_eq!(pending(&s, "H").position, 1);
}

/// The other side of the exemption: a job that fits but preempted nothing is still held to
/// the rule behind the same head (so the tests above turn on the earmark, not on the rule
/// letting P pass).
#[test]
fn a_job_without_an_earmark_is_still_held_to_the_rule() {
    let mut s = Scheduler::new(preempting(before_head())).unwrap();
    let running = vec![
        submit(job("R", 2, 100_000).with_priority(100)),
        submit(job("V", 2, 100_000).with_priority(100)),
    ];
    checked_tick(&mut s, 0, running).unwrap();
    checked_tick(
        &mut s,
        1_000,
        vec![submit(job("H", 4, 50_000).with_priority(50))],
    )
    .unwrap();
    // V ends early: 2 cpus free, and P (ending at 203 s) fits but may not pass the head.
    let out = checked_tick(
        &mut s,
        3_000,
        vec![
            finished("V"),
            submit(job("P", 2, 200_000).with_priority(10)),
        ],
    )
    .unwrap();
    assert!(started(&out.decisions).is_empty(), "{:?}", out.decisions);
    assert_eq!(reason(&s, "P"), PendingReason::Priority);
}
