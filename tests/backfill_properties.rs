//! Backfill guarantees on random GPU clusters and random gangs. Every job runs exactly its time
//! limit (the scheduler kills it then) and every job arrives at time 0, so the plans are exact:
//! - conservative: every job starts no later than its first estimated start, and estimates never
//!   move later (no backfilled job pushes a reservation);
//! - EASY: the first job to get a reservation starts no later than its first shadow time.
//!
//! `PROPTEST_CASES` raises the case count for long local runs.

mod common;

use std::collections::BTreeMap;

use common::build::{self, submit};
use common::decisions::started;
use gangway::testkit::checked_tick;
use gangway::{Event, JobSpec, Milli, PendingReason, PlacementMode, Scheduler};
use proptest::prelude::*;

#[derive(Clone, Debug)]
struct Case {
    nodes: Vec<u32>,
    jobs: Vec<(u32, u32, u64, bool, i32)>,
}

fn case() -> impl Strategy<Value = Case> {
    let nodes = prop::collection::vec(1u32..=4, 1..=4);
    let jobs = prop::collection::vec(
        (1u32..=3, 1u32..=4, 1u64..=6, any::<bool>(), 0i32..4),
        1..=10,
    );
    (nodes, jobs).prop_map(|(nodes, jobs)| Case { nodes, jobs })
}

fn scheduler(case: &Case, mode: &str) -> Scheduler {
    let nodes: Vec<serde_json::Value> = case
        .nodes
        .iter()
        .enumerate()
        .map(|(i, gpus)| serde_json::json!({"name": format!("n{i}"), "cpus": 16, "gpus": {"model": "a100", "count": gpus}}))
        .collect();
    build::scheduler(serde_json::json!({"nodes": nodes, "policy": {"backfill": {"mode": mode}}}))
}

/// What happened in one run: each job's start, its estimates over time, and the order in which
/// jobs first got a reservation.
struct Run {
    starts: BTreeMap<String, u64>,
    estimates: BTreeMap<String, Vec<u64>>,
    reserved_order: Vec<String>,
}

/// Runs the case to completion.
fn run(case: &Case, mode: &str) -> Run {
    let mut s = scheduler(case, mode);
    let events: Vec<Event> = case
        .jobs
        .iter()
        .enumerate()
        .map(|(i, (tasks, gpus, minutes, spread, priority))| {
            let placement = if *spread {
                PlacementMode::StrictSpread
            } else {
                PlacementMode::Pack
            };
            let job = JobSpec::new(format!("j{i}"), minutes * 60_000, *tasks)
                .with_gpus(Milli::from_units(u64::from(*gpus)))
                .with_placement(placement)
                .with_priority(*priority);
            submit(job)
        })
        .collect();
    let mut starts = BTreeMap::new();
    let mut estimates: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let mut reserved_order = Vec::new();
    let mut now = 0;
    let mut out = checked_tick(&mut s, now, events).unwrap();
    for _ in 0..200 {
        for job in started(&out.decisions) {
            starts.insert(job.to_string(), now);
        }
        for p in s.explain().pending {
            if p.reason == PendingReason::Reserved {
                if !reserved_order.contains(&p.job) {
                    reserved_order.push(p.job.clone());
                }
                estimates
                    .entry(p.job)
                    .or_default()
                    .push(p.estimated_start_ms.unwrap());
            }
        }
        match out.next_wakeup_ms {
            Some(t) => now = t,
            None => break,
        }
        out = checked_tick(&mut s, now, Vec::new()).unwrap();
    }
    Run {
        starts,
        estimates,
        reserved_order,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 5000, ..ProptestConfig::default() })]

    #[test]
    fn conservative_starts_no_later_than_first_estimate(case in case()) {
        let Run { starts, estimates, .. } = run(&case, "conservative");
        for (job, seen) in &estimates {
            let start = starts.get(job).copied();
            prop_assert!(start.is_some(), "{job} never started");
            prop_assert!(start.unwrap() <= seen[0], "{job} started at {start:?}, first estimate {}", seen[0]);
            prop_assert!(seen.windows(2).all(|w| w[1] <= w[0]), "{job}'s estimate moved later: {seen:?}");
        }
    }

    #[test]
    fn easy_first_reserved_job_starts_by_its_first_shadow_time(case in case()) {
        let Run { starts, estimates, reserved_order: order } = run(&case, "easy");
        if let Some(first) = order.first() {
            let start = starts.get(first).copied();
            prop_assert!(start.is_some(), "{first} never started");
            prop_assert!(start.unwrap() <= estimates[first][0]);
        }
    }
}
