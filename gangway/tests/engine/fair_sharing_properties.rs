//! Stability of fair sharing between queues over random workloads: two or three queues in a
//! cohort (or two cohorts under a root) with random nominal quotas, weights (0 included),
//! preemption policies and strategies, random jobs arriving over a few ticks, and victims that
//! acknowledge with `stopped` one tick after they are told. Jobs run longer than the test, so
//! only preemption frees anything. Every tick runs the invariant oracle. Properties:
//! - once arrivals stop, preemptions stop within a bounded number of ticks;
//! - no job is preempted twice by jobs of the same queue;
//! - no two jobs preempt each other in turn;
//! - the fast pass decides exactly as the reference pass without shortcuts, among them the
//!   fair-sharing search skipped when the shares alone show that no target can pass.
//!
//! `GANGWAY_PROPTEST_SCALE` multiplies the case count for long local runs.

use std::collections::{BTreeMap, BTreeSet};

use gangway::testkit::checked_tick;
use gangway::testkit::harness::scale;
use gangway::testkit::reference::Twins;
use gangway::{ClusterConfig, Decision, Event, Scheduler};
use proptest::prelude::*;
use serde_json::{Value, json};

const UNIT: u64 = 1000;
const STRATEGIES: [&[&str]; 3] = [
    &[
        "less_than_or_equal_to_final_share",
        "less_than_initial_share",
    ],
    &["less_than_or_equal_to_final_share"],
    &["less_than_initial_share"],
];

#[derive(Clone, Debug)]
struct Queue {
    nominal: u32,
    weight: f64,
    reclaim_any: bool,
    within: bool,
}

#[derive(Clone, Debug)]
struct Job {
    queue: usize,
    cpus: u32,
    priority: i32,
    submit: u64,
}

#[derive(Clone, Debug)]
struct Case {
    node_cpus: u32,
    nested: bool,
    strategies: usize,
    queues: Vec<Queue>,
    jobs: Vec<Job>,
}

fn queue() -> impl Strategy<Value = Queue> {
    (
        0u32..6,
        prop_oneof![Just(0.0), Just(0.5), Just(1.0), Just(2.0)],
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(nominal, weight, reclaim_any, within)| Queue {
            nominal,
            weight,
            reclaim_any,
            within,
        })
}

fn case() -> impl Strategy<Value = Case> {
    (
        2usize..=3,
        any::<bool>(),
        0usize..STRATEGIES.len(),
        prop::collection::vec(queue(), 3),
        prop::collection::vec((0usize..3, 1u32..4, -2i32..3, 0u64..4), 1..24),
    )
        .prop_map(|(count, nested, strategies, queues, jobs)| {
            let queues: Vec<Queue> = queues.into_iter().take(count).collect();
            let node_cpus = queues.iter().map(|q| q.nominal).sum::<u32>().max(2);
            let jobs = jobs
                .into_iter()
                .map(|(q, cpus, priority, submit)| Job {
                    queue: q % count,
                    cpus: cpus.min(node_cpus),
                    priority,
                    submit,
                })
                .collect();
            Case {
                node_cpus,
                nested,
                strategies,
                queues,
                jobs,
            }
        })
}

fn cluster(case: &Case) -> ClusterConfig {
    let cohorts = if case.nested {
        json!([{"name": "root", "fair_sharing": {"enabled": true}},
               {"name": "left", "parent": "root"}, {"name": "right", "parent": "root"}])
    } else {
        json!([{"name": "root", "fair_sharing": {"enabled": true}}])
    };
    let queues: Vec<Value> = case
        .queues
        .iter()
        .enumerate()
        .map(|(i, q)| {
            let cohort = match (case.nested, i) {
                (false, _) => "root",
                (true, 0) => "left",
                (true, _) => "right",
            };
            json!({"name": format!("q{i}"), "cohort": cohort,
                   "quota": {"cpu": {"nominal": q.nominal}},
                   "fair_sharing": {"weight": q.weight},
                   "preemption": {
                       "within_queue": if q.within { "lower_priority" } else { "never" },
                       "reclaim_within_cohort": if q.reclaim_any { "any" } else { "lower_priority" }}})
        })
        .collect();
    serde_json::from_value(json!({
        "nodes": [{"name": "n1", "cpus": case.node_cpus, "memory_mib": 100000}],
        "cohorts": cohorts,
        "queues": queues,
        "policy": {"preemption": {"enabled": true},
                   "fair_sharing": {"preemption_strategies": STRATEGIES[case.strategies]}}
    }))
    .expect("a valid cluster")
}

fn submit(i: usize, job: &Job) -> Event {
    serde_json::from_value(json!({"type": "submit", "job": {
        "id": format!("j{i}"), "queue": format!("q{}", job.queue), "priority": job.priority,
        "time_limit_ms": 1_000_000_000u64, "preemptible": true, "grace_ms": 10 * UNIT,
        "groups": [{"count": 1, "cpus": job.cpus, "memory_mib": 10}]}}))
    .expect("a valid submit")
}

/// The events of tick `t`: a `stopped` for every victim `told` in the tick before (taken out of
/// it), then the case's submits at `t`.
fn events_at(case: &Case, t: u64, told: &mut Vec<String>) -> Vec<Event> {
    let mut events: Vec<Event> = told
        .drain(..)
        .map(|job| serde_json::from_value(json!({"type": "stopped", "job": job})).unwrap())
        .collect();
    events.extend(
        case.jobs
            .iter()
            .enumerate()
            .filter(|(_, j)| j.submit == t)
            .map(|(i, j)| submit(i, j)),
    );
    events
}

/// Runs `case` for its arrivals and then `settle` more ticks; the preemptions by tick, as
/// (tick, victim, preemptor).
fn run(case: &Case, settle: u64) -> Vec<(u64, String, String)> {
    let mut s = Scheduler::new(cluster(case)).expect("a valid cluster");
    let last_arrival = case.jobs.iter().map(|j| j.submit).max().unwrap_or(0);
    let mut told: Vec<String> = Vec::new();
    let mut preemptions = Vec::new();
    for t in 0..=last_arrival + settle {
        let events = events_at(case, t, &mut told);
        let out = checked_tick(&mut s, t * UNIT, events).expect("a valid tick");
        for d in out.decisions {
            if let Decision::Preempt { job, for_job, .. } = d {
                told.push(job.clone());
                preemptions.push((t, job, for_job));
            }
        }
    }
    preemptions
}

/// The tick after which no preemption may come: two ticks a job after the last arrival.
fn quiet_from(case: &Case) -> u64 {
    let last_arrival = case.jobs.iter().map(|j| j.submit).max().unwrap_or(0);
    last_arrival + 2 * case.jobs.len() as u64 + 2
}

fn queue_of(case: &Case, job: &str) -> usize {
    let i: usize = job[1..].parse().expect("job ids are j<N>");
    case.jobs[i].queue
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 96 * scale(),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Preemptions stop once arrivals do; no job is preempted twice by the same queue's
    /// jobs; no two jobs preempt each other in turn.
    #[test]
    fn fair_sharing_preemption_settles(case in case()) {
        let settle = 4 * case.jobs.len() as u64 + 4;
        let preemptions = run(&case, settle);
        let bound = quiet_from(&case);
        let late: Vec<_> = preemptions.iter().filter(|(t, ..)| *t > bound).collect();
        prop_assert!(late.is_empty(), "preemptions after tick {bound}: {late:?}");
        let mut by_queue: BTreeMap<(String, usize), u32> = BTreeMap::new();
        for (_, victim, preemptor) in &preemptions {
            let count = by_queue
                .entry((victim.clone(), queue_of(&case, preemptor)))
                .or_default();
            *count += 1;
            prop_assert!(*count < 2, "{victim} preempted twice by jobs of queue q{}: {preemptions:?}",
                queue_of(&case, preemptor));
        }
        let pairs: BTreeSet<(&str, &str)> = preemptions
            .iter()
            .map(|(_, v, p)| (v.as_str(), p.as_str()))
            .collect();
        for (v, p) in &pairs {
            prop_assert!(!pairs.contains(&(*p, *v)), "{v} and {p} preempted each other");
        }
    }

    /// The victim search skipped from the shares alone (`fair_search_hopeless`, a shortcut)
    /// changes no decision and no report: the fast pass and the reference pass agree at every
    /// tick.
    #[test]
    fn skipping_hopeless_searches_changes_no_decision(case in case()) {
        fast_and_reference_agree(&case)?;
    }
}

/// Runs `case` through the fast pass and the reference pass, with the oracle after every tick.
fn fast_and_reference_agree(case: &Case) -> Result<(), TestCaseError> {
    let mut twins = Twins::new(Scheduler::new(cluster(case)).expect("a valid cluster"));
    let mut told: Vec<String> = Vec::new();
    for t in 0..=quiet_from(case) {
        let events = events_at(case, t, &mut told);
        let out = twins.tick(t * UNIT, events);
        prop_assert!(out.is_ok(), "{}", out.err().unwrap_or_default());
        for d in out.unwrap().expect("a valid tick").decisions {
            if let Decision::Preempt { job, .. } = d {
                told.push(job);
            }
        }
    }
    Ok(())
}

/// Found by the property above: at 3 s, j3 of q2 preempts j0 and then j2 of q0 preempts j5 of
/// q2. q2 is at its nominal 3 cpus with j5 alone, and borrows only with j3, which waits for its
/// victim: the engine reads shares with earmarked preemptors charged, and so must the oracle.
#[test]
fn a_queue_borrowing_through_its_waiting_preemptor_may_lose_a_victim() {
    let q = |nominal, weight, reclaim_any, within| Queue {
        nominal,
        weight,
        reclaim_any,
        within,
    };
    let j = |queue, cpus, priority, submit| Job {
        queue,
        cpus,
        priority,
        submit,
    };
    let case = Case {
        node_cpus: 8,
        nested: false,
        strategies: 0,
        queues: vec![
            q(2, 1.0, true, true),
            q(3, 0.0, true, false),
            q(3, 2.0, true, false),
        ],
        jobs: vec![
            j(0, 3, 0, 1),
            j(2, 1, 0, 0),
            j(0, 1, 0, 1),
            j(2, 1, 0, 1),
            j(2, 2, 0, 0),
            j(2, 3, 1, 0),
            j(1, 1, 0, 2),
            j(1, 2, 1, 2),
        ],
    };
    fast_and_reference_agree(&case).unwrap();
}

/// The two-queue cycle of Kueue's "Preemption is enabled and CQs have 0 weight" test: both
/// queues of weight 0 and no quota under a cohort of 8 cpus; b's job preempts a's
/// lower-priority job once, and then nothing preempts again.
#[test]
fn zero_weight_queues_do_not_preempt_each_other_in_a_cycle() {
    let cluster: ClusterConfig = serde_json::from_value(json!({
        "nodes": [{"name": "n1", "cpus": 8, "memory_mib": 100000}],
        "cohorts": [{"name": "top", "quota": {"cpu": {"nominal": 8}}}],
        "queues": [
            {"name": "a", "cohort": "top", "quota": {"cpu": {"nominal": 0}},
             "fair_sharing": {"weight": 0}, "preemption": {"reclaim_within_cohort": "any"}},
            {"name": "b", "cohort": "top", "quota": {"cpu": {"nominal": 0}},
             "fair_sharing": {"weight": 0}, "preemption": {"reclaim_within_cohort": "any"}}],
        "policy": {"preemption": {"enabled": true}, "fair_sharing": {"enabled": true}}}))
    .unwrap();
    let job = |id: &str, queue: &str, priority: i32| -> Event {
        serde_json::from_value(json!({"type": "submit", "job": {"id": id, "queue": queue,
            "priority": priority, "time_limit_ms": 1_000_000_000u64, "preemptible": true,
            "grace_ms": 10_000, "groups": [{"count": 1, "cpus": 4, "memory_mib": 10}]}}))
        .unwrap()
    };
    let mut s = Scheduler::new(cluster).unwrap();
    let out = checked_tick(&mut s, 0, vec![job("a1", "a", 9001), job("a2", "a", 100)]).unwrap();
    assert_eq!(out.decisions.len(), 2);
    let out = checked_tick(&mut s, 1_000, vec![job("b1", "b", 100)]).unwrap();
    assert!(matches!(&out.decisions[..],
        [Decision::Preempt { job, for_job, .. }] if job == "a2" && for_job == "b1"));
    let stopped: Event = serde_json::from_value(json!({"type": "stopped", "job": "a2"})).unwrap();
    let out = checked_tick(&mut s, 2_000, vec![stopped]).unwrap();
    assert!(matches!(&out.decisions[..], [Decision::Start { job, .. }] if job == "b1"));
    for t in 3..20 {
        let out = checked_tick(&mut s, t * 1_000, vec![]).unwrap();
        assert!(out.decisions.is_empty(), "tick {t}: {:?}", out.decisions);
    }
}
