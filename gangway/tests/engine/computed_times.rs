//! The times the engine computes itself stay in the range of `gangway::model::time` (issue 28,
//! item 3; docs/protocol.md, "Times"): a running job's end, a reservation's start, a ready
//! deadline or a back-off end is a sum of a time and a duration, and a plug-in may ask for any
//! wake-up. A computed time beyond 2^53 − 1 ms is one no tick can reach (a later `at_ms` is
//! refused), so it is reported as none: no wake-up, no estimated start (the job is not planned,
//! reason `resources`), no deadline or back-off end shown. Tested at the edge (a time of exactly
//! `MAX_MS` is reported) and one past it, and with random streams near the end of the range
//! whose plug-in asks for wake-ups at and beyond it: nothing else changes.

use crate::common;

use common::build::{config, finished, submit};
use common::decisions::{pending, reason, started};
use gangway::policy::{PassContext, Plugin, Profile};
use gangway::testkit::checked_tick;
use gangway::testkit::reference::Twins;
use gangway::{ClusterConfig, Event, JobSpec, PendingReason, Scheduler, TickOutcome};
use proptest::prelude::*;
use serde_json::{Value, json};

/// The latest time and the longest duration the engine accepts: 2^53 − 1 ms (docs/protocol.md,
/// "Times").
const MAX_MS: u64 = (1 << 53) - 1;

/// One one-cpu node.
fn one_node(policy: Value) -> ClusterConfig {
    config(json!({"nodes": [{"name": "n1", "cpus": 1}], "policy": policy}))
}

/// Every time `s` reports: the tick's wake-up, and `explain`'s estimated starts, back-off
/// ends and ready deadlines.
fn reported_times(s: &Scheduler, out: &TickOutcome) -> Vec<u64> {
    let explanation = s.explain();
    let pending = explanation
        .pending
        .iter()
        .flat_map(|p| [p.estimated_start_ms, p.backoff_until_ms]);
    let running = explanation.running.iter().map(|r| r.ready_deadline_ms);
    pending
        .chain(running)
        .chain([out.next_wakeup_ms])
        .flatten()
        .collect()
}

/// At `now`, job `a` starts with time limit `limit` on the only node and `b` waits behind it.
fn behind(now: u64, limit: u64) -> (Scheduler, TickOutcome) {
    let mut s = Scheduler::new(one_node(json!({}))).unwrap();
    let jobs = vec![
        submit(JobSpec::new("a", limit, 1)),
        submit(JobSpec::new("b", 1_000, 1)),
    ];
    let out = checked_tick(&mut s, now, jobs).unwrap();
    assert_eq!(started(&out.decisions), ["a"]);
    (s, out)
}

#[test]
fn a_start_at_the_end_of_the_range_is_planned_and_one_past_it_is_not() {
    let now = MAX_MS - 5_000;
    // a ends at MAX_MS: b is planned then, and that is the wake-up.
    let (mut s, out) = behind(now, MAX_MS - now);
    assert_eq!(out.next_wakeup_ms, Some(MAX_MS));
    assert_eq!(reason(&s, "b"), PendingReason::Reserved);
    assert_eq!(pending(&s, "b").estimated_start_ms, Some(MAX_MS));
    // c, ahead of b, would start then too; behind b, at MAX_MS + 1,000, it is not planned.
    let first = JobSpec::new("c", 1, 1).with_priority(10);
    assert_eq!(s.what_if(first.clone()).unwrap().start_ms, Some(MAX_MS));
    assert_eq!(s.what_if(JobSpec::new("c", 1, 1)).unwrap().start_ms, None);
    let out = checked_tick(&mut s, MAX_MS, vec![]).unwrap();
    assert_eq!(started(&out.decisions), ["b"]);

    // a ends one past it: no tick reaches b's start, so b is not planned and nothing wakes.
    let (s, out) = behind(now, MAX_MS - now + 1);
    assert_eq!(out.next_wakeup_ms, None);
    assert_eq!(reason(&s, "b"), PendingReason::Resources);
    assert_eq!(pending(&s, "b").estimated_start_ms, None);
    assert_eq!(s.what_if(first).unwrap().start_ms, None);
    assert!(s.reservations().next().is_none());
    // The wire says null, and the longest limit changes nothing either.
    let wire = serde_json::to_value(&out).unwrap();
    assert_eq!(wire["next_wakeup_ms"], Value::Null);
    let (s, out) = behind(now, MAX_MS);
    assert_eq!(out.next_wakeup_ms, None);
    assert_eq!(reason(&s, "b"), PendingReason::Resources);
    // Restored, it answers the same, and the last tick the range allows changes nothing.
    let mut restored = Scheduler::restore(s.snapshot()).unwrap();
    assert_eq!(restored.explain(), s.explain());
    let out = checked_tick(&mut restored, MAX_MS, vec![]).unwrap();
    assert!(
        out.decisions.is_empty() && out.next_wakeup_ms.is_none(),
        "{out:?}"
    );
}

#[test]
fn a_ready_deadline_and_a_back_off_end_past_the_range_are_not_shown() {
    let now = MAX_MS - 10_000;
    for (edge, shown) in [(0, true), (1, false)] {
        // a's ready deadline is now + timeout: MAX_MS, or one past it.
        let timeout = MAX_MS - now + edge;
        let wfr = json!({"timeout_ms": timeout, "backoff_base_ms": 0});
        let mut s = Scheduler::new(one_node(json!({"wait_for_ready": wfr}))).unwrap();
        let out = checked_tick(&mut s, now, vec![submit(JobSpec::new("a", MAX_MS, 1))]).unwrap();
        let deadline = s.explain().running[0].ready_deadline_ms;
        assert_eq!(deadline, shown.then_some(MAX_MS), "edge {edge}");
        assert_eq!(out.next_wakeup_ms, shown.then_some(MAX_MS), "edge {edge}");
        assert!(reported_times(&s, &out).iter().all(|&t| t <= MAX_MS));
    }
    for (edge, shown) in [(0, true), (1, false)] {
        // a misses its deadline at now + 1,000 and backs off until MAX_MS, or one past it.
        let base = MAX_MS - (now + 1_000) + edge;
        let wfr = json!({"timeout_ms": 1_000, "backoff_base_ms": base, "backoff_max_ms": base});
        let mut s = Scheduler::new(one_node(json!({"wait_for_ready": wfr}))).unwrap();
        checked_tick(&mut s, now, vec![submit(JobSpec::new("a", MAX_MS, 1))]).unwrap();
        let out = checked_tick(&mut s, now + 1_000, vec![]).unwrap();
        assert_eq!(reason(&s, "a"), PendingReason::Backoff);
        let until = pending(&s, "a").backoff_until_ms;
        assert_eq!(until, shown.then_some(MAX_MS), "edge {edge}");
        assert_eq!(out.next_wakeup_ms, shown.then_some(MAX_MS), "edge {edge}");
        // At the last tick, the back-off has ended only when it ended in the range.
        let out = checked_tick(&mut s, MAX_MS, vec![]).unwrap();
        let expected: &[&str] = if shown { &["a"] } else { &[] };
        assert_eq!(started(&out.decisions), expected, "edge {edge}");
    }
}

/// A plug-in asking for a wake-up at one fixed time.
#[derive(Clone)]
struct Alarm(u64);

#[gangway::policy::plugin]
impl Plugin for Alarm {
    fn name(&self) -> &str {
        "alarm"
    }
    fn wake_up(&self, _: &PassContext<'_>) -> Option<u64> {
        Some(self.0)
    }
}

/// A step of a stream near the end of the range.
#[derive(Clone, Debug)]
enum Step {
    /// A job of `tasks` one-cpu tasks, with time limit `limit` (an edge, see [`limit`]).
    Submit { tasks: u32, limit: usize },
    /// The `i`-th job submitted finishes.
    Finish(usize),
    /// Time passes (capped at `MAX_MS`).
    Wait(u64),
}

/// Time limits at and around the edges, from `now`: short, reaching `MAX_MS` exactly, one past
/// it, and the longest.
fn limit(pick: usize, now: u64) -> u64 {
    let to_edge = MAX_MS - now;
    match pick % 5 {
        0 => 1_000,
        1 => to_edge.max(1),
        2 => to_edge + 1,
        3 => to_edge / 2 + 1,
        _ => MAX_MS,
    }
}

/// Wake-up requests at and around the edge, from `now`.
fn alarm(pick: usize, now: u64) -> u64 {
    match pick % 5 {
        0 => now + 1,
        1 => MAX_MS,
        2 => MAX_MS + 1,
        3 => 1 << 63,
        _ => u64::MAX,
    }
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => (1u32..3, 0usize..5).prop_map(|(tasks, limit)| Step::Submit { tasks, limit }),
        1 => (0usize..8).prop_map(Step::Finish),
        2 => prop_oneof![1u64..5_000, Just(1 << 40)].prop_map(Step::Wait),
    ]
}

/// The snapshot as JSON, without its wake-up.
fn without_wake_up(s: &Scheduler) -> Value {
    let mut json = serde_json::to_value(s.snapshot()).unwrap();
    json["next_wakeup_ms"] = Value::Null;
    json
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 48,
        failure_persistence: crate::common::kept_beside(),
        ..ProptestConfig::default()
    })]

    /// Near the end of the range, with a plug-in asking for a wake-up at and beyond it: every
    /// reported time is in the range, the wake-up is the earliest of the engine's own and the
    /// plug-in's when that one is in the range, and otherwise the engine's own; the plug-in is
    /// not at fault, and the decisions, the report and the state are those of the same stream
    /// without the plug-in, which agrees with the reference pass.
    #[test]
    fn computed_times_stay_in_the_range_and_change_nothing_else(
        start_back in prop_oneof![Just(0u64), 1u64..10_000, Just(1 << 41)],
        pick in 0usize..5,
        steps in proptest::collection::vec(step(), 1..30),
    ) {
        let mut now = MAX_MS - start_back;
        let cluster = config(json!({"nodes": [{"name": "n1", "cpus": 2}, {"name": "n2", "cpus": 2}],
                                    "policy": {"backfill": {"depth": 4}}}));
        let asked = alarm(pick, now);
        let profile = Profile::from_config(&cluster).unwrap().into_builder().plugin(Alarm(asked));
        let mut with = Scheduler::with_profile(cluster.clone(), profile.build().unwrap()).unwrap();
        // Without the plug-in, ticked beside the reference pass (every shortcut off).
        let mut without = Twins::new(Scheduler::new(cluster).unwrap());
        let mut submitted = 0;
        for step in steps {
            let events: Vec<Event> = match step {
                Step::Submit { tasks, limit: pick } => {
                    let spec = JobSpec::new(format!("j{submitted}"), limit(pick, now), tasks);
                    submitted += 1;
                    vec![submit(spec)]
                }
                Step::Finish(i) => vec![finished(&format!("j{}", i % submitted.max(1)))],
                Step::Wait(ms) => {
                    now = now.saturating_add(ms).min(MAX_MS);
                    Vec::new()
                }
            };
            let a = checked_tick(&mut with, now, events.clone()).unwrap();
            let b = without.tick(now, events).map_err(TestCaseError::fail)?.unwrap();
            for t in reported_times(&with, &a) {
                prop_assert!(t <= MAX_MS, "{t} reported beyond the range");
            }
            let answer = with.what_if(JobSpec::new("probe", 1_000, 1)).unwrap();
            prop_assert!(answer.start_ms.is_none_or(|t| t <= MAX_MS));
            for p in with.explain().pending {
                prop_assert_eq!(p.reason == PendingReason::Reserved, p.estimated_start_ms.is_some());
            }
            let plugin = Some(asked).filter(|&t| t > now && t <= MAX_MS);
            let expected = match (b.next_wakeup_ms, plugin) {
                (Some(engine), Some(plugin)) => Some(engine.min(plugin)),
                (engine, plugin) => engine.or(plugin),
            };
            prop_assert_eq!(a.next_wakeup_ms, expected);
            prop_assert!(a.plugin_faults.is_empty(), "{:?}", a.plugin_faults);
            prop_assert_eq!(&a.decisions, &b.decisions);
            prop_assert_eq!(&a.rejected, &b.rejected);
            prop_assert_eq!(with.explain(), without.fast().explain());
            prop_assert_eq!(without_wake_up(&with), without_wake_up(without.fast()));
        }
    }
}
