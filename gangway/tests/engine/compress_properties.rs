//! Conservative backfill with compression on random GPU clusters and random gangs, and on
//! random clusters of nodes of one or two cpus and cpu-only gangs (where reservations are pinned
//! again at their starts, docs/design.md), submitted over time and ending early or at their
//! limit (where the scheduler kills them): no planned start ever moves later. With none of the causes docs/protocol.md lists (no node lost, no time
//! limit changed, no job running past its limit, no job held), a job once reserved keeps a
//! reservation until it starts, each estimate is no later than the one before, and it starts by
//! the last. The oracle checks every tick. Then one test per cause: each moves a plan later.
//!
//! `PROPTEST_CASES` raises the case count for long local runs.

use crate::common;

use std::collections::BTreeMap;

use common::build::{self, event, finished, submit};
use common::decisions::{pending, started};
use gangway::testkit::checked_tick;
use gangway::{Event, JobSpec, Milli, PendingReason, PlacementMode, Scheduler};
use proptest::prelude::*;
use serde_json::json;

/// One job: tasks, GPUs per task (0: a cpu-only job, one cpu a task), limit (minutes), run
/// (minutes, at most the limit), submit (minute), spread (strict with GPUs), priority, whether
/// it takes the cluster's one license.
type CaseJob = (u32, u32, u64, u64, u64, bool, i32, bool);

/// Nodes as (cpus, GPUs), and the jobs.
#[derive(Clone, Debug)]
struct Case {
    nodes: Vec<(u32, u32)>,
    jobs: Vec<CaseJob>,
}

/// Nodes of 16 cpus and 1 to 4 GPUs, and gangs of 1 to 3 tasks of 1 to 4 GPUs.
fn gpu_case() -> impl Strategy<Value = Case> {
    let nodes = prop::collection::vec((Just(16u32), 1u32..=4), 1..=4);
    case(nodes, 1u32..=3, 1u32..=4, Just(false))
}

/// Nodes of 1 or 2 cpus, and cpu-only gangs of 1 to 6 tasks, some taking the license.
fn cpu_case() -> impl Strategy<Value = Case> {
    let nodes = prop::collection::vec((1u32..=2, Just(0u32)), 1..=6);
    case(nodes, 1u32..=6, Just(0u32), any::<bool>())
}

/// A case of `nodes`, with up to 12 jobs of `tasks` tasks of `gpus` GPUs each, `licensed` or
/// not.
fn case(
    nodes: impl Strategy<Value = Vec<(u32, u32)>>,
    tasks: impl Strategy<Value = u32>,
    gpus: impl Strategy<Value = u32>,
    licensed: impl Strategy<Value = bool>,
) -> impl Strategy<Value = Case> {
    let job = (
        tasks,
        gpus,
        1u64..=8,
        1u64..=8,
        0u64..=10,
        any::<bool>(),
        0i32..4,
        licensed,
    )
        .prop_map(
            |(tasks, gpus, limit, run, submit, spread, priority, licensed)| {
                let run = run.min(limit);
                (tasks, gpus, limit, run, submit, spread, priority, licensed)
            },
        );
    let jobs = prop::collection::vec(job, 1..=12);
    (nodes, jobs).prop_map(|(nodes, jobs)| Case { nodes, jobs })
}

/// A scheduler with compression on the case's nodes (A100s where they have GPUs) and one
/// license.
fn scheduler(nodes: &[(u32, u32)]) -> Scheduler {
    let node = |i: usize, &(cpus, gpus): &(u32, u32)| match gpus {
        0 => json!({"name": format!("n{i}"), "cpus": cpus}),
        _ => {
            json!({"name": format!("n{i}"), "cpus": cpus, "gpus": {"model": "a100", "count": gpus}})
        }
    };
    let nodes: Vec<serde_json::Value> = nodes.iter().enumerate().map(|(i, n)| node(i, n)).collect();
    let backfill = json!({"mode": "conservative", "compress": true});
    let licenses = json!({"lic": 1});
    build::scheduler(
        json!({"nodes": nodes, "licenses": licenses, "policy": {"backfill": backfill}}),
    )
}

const MINUTE: u64 = 60_000;

/// Job `i` of the case as submitted.
fn spec(i: usize, &(tasks, gpus, limit, _, _, spread, priority, licensed): &CaseJob) -> JobSpec {
    let placement = match (spread, gpus) {
        (false, _) => PlacementMode::Pack,
        (true, 0) => PlacementMode::Spread,
        (true, _) => PlacementMode::StrictSpread,
    };
    let job = JobSpec::new(format!("j{i}"), limit * MINUTE, tasks);
    let job = match gpus {
        0 => job,
        _ => job.with_gpus(Milli::from_units(u64::from(gpus))),
    };
    let job = job.with_placement(placement).with_priority(priority);
    match licensed {
        true => job.with_license("lic", 1),
        false => job,
    }
}

/// Replays the case, the oracle after every tick; at each tick, every pending job's reason and
/// estimate go to `watch`, with the jobs started in that tick.
fn replay(case: &Case, mut watch: impl FnMut(u64, &Scheduler, &[&str]) -> Result<(), String>) {
    let mut s = scheduler(&case.nodes);
    // Ends due by job, for the jobs that end before their limit (the others are killed).
    let mut ends: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    let mut now = 0;
    for _ in 0..500 {
        let mut events: Vec<Event> = ends
            .remove(&now)
            .into_iter()
            .flatten()
            .map(|j| finished(&j))
            .collect();
        events.extend(
            case.jobs
                .iter()
                .enumerate()
                .filter(|(_, j)| j.4 * MINUTE == now)
                .map(|(i, j)| submit(spec(i, j))),
        );
        let out = checked_tick(&mut s, now, events).unwrap();
        let began = started(&out.decisions);
        for job in &began {
            let i: usize = job[1..].parse().unwrap();
            let (_, _, limit, run, ..) = case.jobs[i];
            if run < limit {
                ends.entry(now + run * MINUTE)
                    .or_default()
                    .push(job.to_string());
            }
        }
        if let Err(message) = watch(now, &s, &began) {
            panic!("at {now} ms: {message}");
        }
        let next_submit = case
            .jobs
            .iter()
            .map(|j| j.4 * MINUTE)
            .filter(|&t| t > now)
            .min();
        let next = [next_submit, ends.keys().next().copied(), out.next_wakeup_ms];
        match next.into_iter().flatten().min() {
            Some(t) => now = t,
            None => break,
        }
    }
}

/// What the property watches of one job: its last estimate while reserved.
#[derive(Default)]
struct Watch {
    estimates: BTreeMap<String, u64>,
}

impl Watch {
    /// Checks one tick: a reserved job starts by its estimate or stays reserved no later.
    fn tick(&mut self, now: u64, s: &Scheduler, began: &[&str]) -> Result<(), String> {
        for job in began {
            if let Some(estimate) = self.estimates.remove(*job)
                && now > estimate
            {
                return Err(format!("{job} started after its estimate {estimate}"));
            }
        }
        let pending = s.explain().pending;
        for (job, &estimate) in &self.estimates {
            let Some(p) = pending.iter().find(|p| &p.job == job) else {
                return Err(format!("{job} left the queue without starting"));
            };
            match (p.reason, p.estimated_start_ms) {
                (PendingReason::Reserved, Some(t)) if t <= estimate => {}
                other => return Err(format!("{job} was due by {estimate}, now {other:?}")),
            }
        }
        for p in pending {
            if let (PendingReason::Reserved, Some(t)) = (p.reason, p.estimated_start_ms) {
                self.estimates.insert(p.job, t);
            }
        }
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: crate::common::kept_beside(), ..ProptestConfig::default() })]

    #[test]
    fn no_planned_start_moves_later(case in gpu_case()) {
        let mut watch = Watch::default();
        replay(&case, |now, s, began| watch.tick(now, s, began));
    }

    #[test]
    fn no_planned_start_moves_later_on_cpu_nodes(case in cpu_case()) {
        let mut watch = Watch::default();
        replay(&case, |now, s, began| watch.tick(now, s, began));
    }
}

/// One node of 4 GPUs; R (4 GPUs, 10 minutes) runs from 0; W (4 GPUs) waits, reserved at 10
/// minutes. Returns the scheduler after that tick, under `policy` (merged into compression's).
fn blocked(time_limit: serde_json::Value) -> Scheduler {
    let cluster = json!({
        "nodes": [{"name": "n0", "cpus": 16, "gpus": {"model": "a100", "count": 4}},
                  {"name": "n1", "cpus": 16, "gpus": {"model": "a100", "count": 4}}],
        "policy": {"backfill": {"mode": "conservative", "compress": true},
                   "time_limit": time_limit},
    });
    let mut s = build::scheduler(cluster);
    let gang = |id: &str, tasks| {
        JobSpec::new(id, 10 * MINUTE, tasks)
            .with_gpus(Milli::from_units(4))
            .with_placement(PlacementMode::StrictSpread)
    };
    let jobs = vec![submit(gang("R", 2)), submit(gang("W", 2))];
    checked_tick(&mut s, 0, jobs).unwrap();
    assert_eq!(pending(&s, "W").estimated_start_ms, Some(10 * MINUTE));
    s
}

/// A running job past its limit (limits not enforced) holds what a reservation was made on: the
/// reservation is planned again, later.
#[test]
fn a_running_job_past_its_limit_moves_a_plan_later() {
    let mut s = blocked(json!({"enforce": false}));
    checked_tick(&mut s, 10 * MINUTE, Vec::new()).unwrap();
    let w = pending(&s, "W");
    assert!(w.estimated_start_ms > Some(10 * MINUTE), "{w:?}");
}

/// A node lost under a reservation moves it later (here: to never, no other node being free).
#[test]
fn a_lost_node_moves_a_plan_later() {
    let mut s = blocked(json!({"enforce": true}));
    let lost = event(json!({"type": "node_remove", "node": "n1"}));
    checked_tick(&mut s, MINUTE, vec![lost]).unwrap();
    let w = pending(&s, "W");
    assert_ne!(w.estimated_start_ms, Some(10 * MINUTE), "{w:?}");
}

/// A longer time limit for the running job moves the reservation behind it later.
#[test]
fn a_changed_time_limit_moves_a_plan_later() {
    let mut s = blocked(json!({"enforce": true}));
    let longer = event(json!({"type": "set_time_limit", "job": "R", "time_limit_ms": 20 * MINUTE}));
    checked_tick(&mut s, MINUTE, vec![longer]).unwrap();
    assert_eq!(pending(&s, "W").estimated_start_ms, Some(20 * MINUTE));
}

/// Compression belongs to mode `conservative`: with another it is refused, naming the field.
#[test]
fn compress_without_conservative_is_refused() {
    let cluster = json!({
        "nodes": [{"name": "n0", "cpus": 4}],
        "policy": {"backfill": {"mode": "easy", "compress": true}},
    });
    let err = Scheduler::new(build::config(cluster)).unwrap_err();
    assert_eq!(err.field, "policy.backfill.compress");
}
