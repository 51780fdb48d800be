//! Anti-thrash properties of preemption over random workloads: 1–3 queues in a cohort with
//! random quotas and preemption policies, random jobs (queue, size, priority, partition tier,
//! duration, grace), victims acknowledging with `stopped` after a random delay or never (then
//! they are killed at grace expiry). The host ticks at every event and at `next_wakeup`, and
//! every tick runs the invariant oracle. Properties:
//! - every preemptor starts in the tick in which its last victim stops or is killed;
//! - no two jobs preempt each other in turn (A preempts B, later B preempts A);
//! - within one queue no job is preempted by one of the same or lower priority, unless the
//!   policy is `lower_or_newer_equal_priority` and the preemptor is older (or a higher
//!   partition tier preempts).
//!
//! `PROPTEST_CASES` raises the case count for long local runs.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};

use common::build::{self, event, finished};
use common::decisions::started;
use gangway::testkit::checked_tick;
use gangway::{Decision, Event, Scheduler};
use proptest::prelude::*;
use serde_json::{Value, json};

/// One time unit of the simulation.
const UNIT: u64 = 1000;

const WITHIN: [&str; 3] = ["never", "lower_priority", "lower_or_newer_equal_priority"];
const RECLAIM: [&str; 3] = ["never", "lower_priority", "any"];

#[derive(Clone, Debug)]
struct Queue {
    nominal: u32,
    borrowing_limit: Option<u32>,
    within: usize,
    reclaim: usize,
    /// None: never; Some(None): lower_priority; Some(Some(t)): with threshold t.
    borrow: Option<Option<i32>>,
}

#[derive(Clone, Debug)]
struct Job {
    /// `None`: no queue.
    queue: Option<usize>,
    cpus: u32,
    priority: i32,
    high_tier: bool,
    submit: u64,
    duration: u64,
    grace: u64,
    /// Units after the preempt at which the victim acknowledges; `None`: never.
    stop_after: Option<u64>,
    requeue: bool,
}

#[derive(Clone, Debug)]
struct Case {
    node_cpus: Vec<u32>,
    queues: Vec<Queue>,
    tiers: bool,
    jobs: Vec<Job>,
}

fn queue() -> impl Strategy<Value = Queue> {
    (
        2u32..=8,
        prop::option::of(0u32..=4),
        0usize..3,
        0usize..3,
        prop::option::of(prop::option::of(0i32..4)),
    )
        .prop_map(
            |(nominal, borrowing_limit, within, reclaim, borrow)| Queue {
                nominal,
                borrowing_limit,
                within,
                reclaim,
                // Borrowing within the cohort needs a reclaim policy (as in Kueue).
                borrow: borrow.filter(|_| reclaim > 0),
            },
        )
}

fn job(queues: usize) -> impl Strategy<Value = Job> {
    (
        (0..=queues, 1u32..=4, 0i32..4, prop::bool::weighted(0.2)),
        (
            0u64..8,
            1u64..8,
            0u64..4,
            prop::option::of(0u64..5),
            any::<bool>(),
        ),
    )
        .prop_map(
            move |(
                (q, cpus, priority, high_tier),
                (submit, duration, grace, stop_after, requeue),
            )| {
                Job {
                    queue: (q < queues).then_some(q),
                    cpus,
                    priority,
                    high_tier,
                    submit,
                    duration,
                    grace,
                    stop_after,
                    requeue,
                }
            },
        )
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec(4u32..=8, 1..=2),
        prop::collection::vec(queue(), 1..=3),
        any::<bool>(),
    )
        .prop_flat_map(|(node_cpus, queues, tiers)| {
            let jobs = prop::collection::vec(job(queues.len()), 1..=12);
            (Just(node_cpus), Just(queues), Just(tiers), jobs)
        })
        .prop_map(|(node_cpus, queues, tiers, jobs)| Case {
            node_cpus,
            queues,
            tiers,
            jobs,
        })
}

fn scheduler(case: &Case) -> Scheduler {
    let nodes: Vec<Value> = case
        .node_cpus
        .iter()
        .enumerate()
        .map(|(i, cpus)| json!({"name": format!("n{i}"), "cpus": cpus, "memory_mib": 1000}))
        .collect();
    let queues: Vec<Value> = case
        .queues
        .iter()
        .enumerate()
        .map(|(i, q)| {
            let borrow = match q.borrow {
                None => json!({"policy": "never"}),
                Some(None) => json!({"policy": "lower_priority"}),
                Some(Some(t)) => json!({"policy": "lower_priority", "max_priority_threshold": t}),
            };
            json!({"name": format!("q{i}"), "cohort": "co",
                   "quota": {"cpu": {"nominal": q.nominal, "borrowing_limit": q.borrowing_limit}},
                   "preemption": {"within_queue": WITHIN[q.within],
                                  "reclaim_within_cohort": RECLAIM[q.reclaim],
                                  "borrow_within_cohort": borrow}})
        })
        .collect();
    build::scheduler(json!({
        "nodes": nodes,
        "partitions": [{"name": "low", "priority_tier": 0, "default": true},
                       {"name": "high", "priority_tier": 1}],
        "cohorts": [{"name": "co"}],
        "queues": queues,
        "policy": {"preemption": {"enabled": true, "partition_tiers": case.tiers}}
    }))
}

fn submit(i: usize, job: &Job) -> Event {
    let mut spec = json!({
        "id": format!("j{i}"), "priority": job.priority, "time_limit_ms": 100 * UNIT,
        "partition": if job.high_tier { "high" } else { "low" },
        "grace_ms": job.grace * UNIT, "requeue": job.requeue,
        "groups": [{"count": 1, "cpus": job.cpus}]});
    if let Some(q) = job.queue {
        spec["queue"] = json!(format!("q{q}"));
    }
    event(json!({"type": "submit", "job": spec}))
}

fn index(id: &str) -> usize {
    id[1..].parse().unwrap()
}

/// Runs the case to quiescence and checks the properties; `Err` names the violation.
fn run(case: &Case) -> Result<(), String> {
    let mut s = scheduler(case);
    // Host-side events by time.
    let mut due: BTreeMap<u64, Vec<Event>> = BTreeMap::new();
    for (i, job) in case.jobs.iter().enumerate() {
        due.entry(job.submit * UNIT)
            .or_default()
            .push(submit(i, job));
    }
    let mut started_at: BTreeMap<usize, u64> = BTreeMap::new();
    let mut stopping: BTreeSet<usize> = BTreeSet::new();
    // Preemptor -> victims not yet stopped.
    let mut outstanding: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
    let mut preempted_pairs: BTreeSet<(usize, usize)> = BTreeSet::new();
    let mut next_wakeup: Option<u64> = None;
    let mut log = String::new();
    for _ in 0..500 {
        let now = match (due.keys().next().copied(), next_wakeup) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) => a,
            (None, Some(b)) => b,
            (None, None) => return Ok(()),
        };
        let events = due.remove(&now).unwrap_or_default();
        let mut stopped_now: BTreeSet<usize> = BTreeSet::new();
        for e in &events {
            if let Event::Stopped { job } = e {
                stopped_now.insert(index(job));
            }
        }
        log.push_str(&format!(
            "\n{now}: {}",
            serde_json::to_string(&events).unwrap()
        ));
        let out = checked_tick(&mut s, now, events).unwrap();
        log.push_str(&format!(
            " -> {}",
            serde_json::to_string(&out.decisions).unwrap()
        ));
        if !out.rejected.is_empty() {
            return Err(format!("at {now}: rejected {:?}{log}", out.rejected));
        }
        next_wakeup = out.next_wakeup_ms;
        let mut started_now: BTreeSet<usize> = BTreeSet::new();
        let mut new_preemptions: Vec<(usize, usize)> = Vec::new();
        for d in &out.decisions {
            match d {
                Decision::Kill { job, .. } => {
                    stopped_now.insert(index(job));
                }
                Decision::Preempt { job, for_job, .. } => {
                    let (v, p) = (index(job), index(for_job));
                    if preempted_pairs.contains(&(p, v)) {
                        return Err(format!(
                            "at {now}: {for_job} preempts {job}, which preempted it{log}"
                        ));
                    }
                    preempted_pairs.insert((v, p));
                    check_within_queue(case, v, p)?;
                    new_preemptions.push((v, p));
                }
                _ => {}
            }
        }
        for v in &stopped_now {
            stopping.remove(v);
            started_at.remove(v);
        }
        for job in started(&out.decisions) {
            let j = index(job);
            started_now.insert(j);
            started_at.insert(j, now);
            let end = now + case.jobs[j].duration * UNIT;
            due.entry(end).or_default().push(finished(job));
        }
        let mut done = Vec::new();
        for (p, victims) in outstanding.iter_mut() {
            let had = !victims.is_empty();
            victims.retain(|v| !stopped_now.contains(v));
            if had && victims.is_empty() {
                done.push(*p);
            }
        }
        for p in done {
            outstanding.remove(&p);
            let running_already = started_at.get(&p).is_some_and(|t| *t < now);
            if !running_already && !started_now.contains(&p) {
                return Err(format!(
                    "at {now}: the last victim of j{p} stopped but j{p} did not start;\n\
                     explain: {:?}{log}",
                    s.explain().pending
                ));
            }
        }
        for (v, p) in new_preemptions {
            outstanding.entry(p).or_default().insert(v);
            stopping.insert(v);
            let victim = &case.jobs[v];
            if let Some(after) = victim.stop_after.filter(|a| *a < victim.grace) {
                due.entry(now + after * UNIT)
                    .or_default()
                    .push(event(json!({"type": "stopped", "job": format!("j{v}")})));
            }
        }
        // Only the finish of a job's current run, when it was not told to stop, is sent.
        for (at, events) in due.iter_mut() {
            events.retain(|e| match e {
                Event::Finished { job, .. } => {
                    let j = index(job);
                    !stopping.contains(&j)
                        && started_at.get(&j) == Some(&(at - case.jobs[j].duration * UNIT))
                }
                _ => true,
            });
        }
        // Preemptors that started elsewhere first keep no claim.
        outstanding.retain(|p, _| !started_now.contains(p));
    }
    // The first ticks show how the cycle begins.
    let first: String = log.chars().take(6000).collect();
    Err(format!("did not quiesce in 500 ticks{first}"))
}

/// Within one queue (and the same tier) only a higher priority, or an older equal one under
/// `lower_or_newer_equal_priority`, preempts.
fn check_within_queue(case: &Case, v: usize, p: usize) -> Result<(), String> {
    let (victim, preemptor) = (&case.jobs[v], &case.jobs[p]);
    let Some(q) = preemptor.queue.filter(|q| victim.queue == Some(*q)) else {
        return Ok(());
    };
    if case.tiers && preemptor.high_tier && !victim.high_tier {
        return Ok(());
    }
    if preemptor.priority > victim.priority {
        return Ok(());
    }
    let older = (preemptor.submit, p) < (victim.submit, v);
    let policy = WITHIN[case.queues[q].within];
    if preemptor.priority == victim.priority && older && policy == "lower_or_newer_equal_priority" {
        return Ok(());
    }
    Err(format!(
        "j{p} (priority {}) preempted j{v} (priority {}) in q{q} under {policy}",
        preemptor.priority, victim.priority
    ))
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(2000),
        failure_persistence: crate::common::kept_beside(),
        ..ProptestConfig::default()
    })]

    #[test]
    fn preemption_never_thrashes(case in case()) {
        if let Err(violation) = run(&case) {
            prop_assert!(false, "{violation}");
        }
    }
}

/// A ring of three: `j3` (q1, priority 3) borrows by preempting `j1` (q0, priority 1), `j2`
/// (q0, within its nominal quota) reclaims from the borrowing q1 by preempting `j3`, and `j1`
/// (older, equal priority) takes `j2` within q0, each step allowed by its queue's policy (as in
/// Kueue). With `anti_thrash` a victim inherits its preemptor's preemptors, so the ring turns at
/// most once more and the case quiesces.
#[test]
fn a_ring_of_three_preemptions_does_not_repeat() {
    let job = |queue, cpus, priority, submit, duration| Job {
        queue,
        cpus,
        priority,
        high_tier: false,
        submit,
        duration,
        grace: 1,
        stop_after: None,
        requeue: true,
    };
    let case = Case {
        node_cpus: vec![6],
        queues: vec![
            Queue {
                nominal: 3,
                borrowing_limit: Some(1),
                within: 2,
                reclaim: 2,
                borrow: None,
            },
            Queue {
                nominal: 2,
                borrowing_limit: Some(3),
                within: 0,
                reclaim: 1,
                borrow: Some(Some(3)),
            },
        ],
        tiers: false,
        jobs: vec![
            // Holds q1's nominal 2 cpus until 2: j1 waits for quota, the newer j2 starts.
            job(Some(1), 2, 5, 0, 2),
            job(Some(0), 4, 1, 0, 7),
            job(Some(0), 3, 1, 1, 7),
            job(Some(1), 4, 3, 2, 7),
        ],
    };
    run(&case).unwrap();
}
