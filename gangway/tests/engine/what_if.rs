//! What-if: the answer changes nothing, and it is what then happens when the job is submitted.

use crate::common;

use common::build::{self, submit};
use common::decisions::{pending, placement};
use gangway::testkit::checked_tick;
use gangway::{ErrorKind, Event, JobSpec, Milli, PlacementEntry, PlacementMode, Scheduler};
use rand::{RngExt, SeedableRng, rngs::Xoshiro256PlusPlus};

fn cluster(nodes: usize, mode: &str) -> Scheduler {
    let nodes: Vec<serde_json::Value> = (0..nodes)
        .map(|i| {
            serde_json::json!({"name": format!("n{i}"), "cpus": 8, "memory_mib": 64000,
                "gpus": {"model": "a100", "count": 4}})
        })
        .collect();
    build::scheduler(serde_json::json!({
        "nodes": nodes, "policy": {"backfill": {"mode": mode}}
    }))
}

fn random_job(rng: &mut Xoshiro256PlusPlus, id: String) -> JobSpec {
    let tasks = rng.random_range(1..=3u32);
    let gpus = rng.random_range(0..=4u64);
    let limit = rng.random_range(1..=20u64) * 1_000;
    let mut job = JobSpec::new(id, limit, tasks)
        .with_gpus(Milli::from_units(gpus))
        .with_priority(rng.random_range(0..100));
    if rng.random_bool(0.5) {
        job = job.with_placement(PlacementMode::StrictSpread);
    }
    job
}

fn snapshot_json(s: &Scheduler) -> serde_json::Value {
    serde_json::to_value(s.snapshot()).unwrap()
}

/// Ticks at each wake-up (jobs run to their limits) until `id` starts: (time, placement).
fn run_until_started(s: &mut Scheduler, id: &str, now: u64) -> (u64, Vec<PlacementEntry>) {
    let mut now = now;
    let mut events = vec![];
    loop {
        let out = checked_tick(s, now, std::mem::take(&mut events)).unwrap();
        if let Some(placement) = placement(&out.decisions, id) {
            return (now, placement.to_vec());
        }
        now = out.next_wakeup_ms.expect("something left to happen");
    }
}

#[test]
fn the_answer_changes_nothing_and_its_start_holds_under_conservative() {
    for seed in 0..200 {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut s = cluster(rng.random_range(1..=3), "conservative");
        let jobs: Vec<Event> = (0..rng.random_range(2..10))
            .map(|i| submit(random_job(&mut rng, format!("j{i}"))))
            .collect();
        checked_tick(&mut s, 0, jobs).unwrap();
        let now = rng.random_range(0..5u64) * 700;
        checked_tick(&mut s, now, vec![]).unwrap();
        let question = random_job(&mut rng, "q".into());
        let before = snapshot_json(&s);
        let Ok(answer) = s.what_if(question.clone()) else {
            continue; // a job that can never fit this cluster
        };
        assert_eq!(
            before,
            snapshot_json(&s),
            "seed {seed}: what_if changed the state"
        );
        let start = answer.start_ms.expect("planned");
        let (started_at, placement) = run_until_started_after_submit(&mut s, question, now);
        // The answer is the plan of that instant: pins are chosen afresh at every pass (busy
        // resources first, docs/protocol.md), so its resources may move, and a move that frees
        // room earlier may let it start sooner.
        assert!(
            started_at <= start,
            "seed {seed}: {started_at} after {start}"
        );
        assert!(!placement.is_empty(), "seed {seed}");
    }
}

fn run_until_started_after_submit(
    s: &mut Scheduler,
    job: JobSpec,
    now: u64,
) -> (u64, Vec<PlacementEntry>) {
    let out = checked_tick(s, now, vec![submit(job)]).unwrap();
    if let Some(placement) = placement(&out.decisions, "q") {
        return (now, placement.to_vec());
    }
    let next = out.next_wakeup_ms.expect("something left to happen");
    run_until_started(s, "q", next)
}

#[test]
fn under_easy_the_answer_matches_the_next_pass() {
    for seed in 0..200 {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut s = cluster(rng.random_range(1..=3), "easy");
        let jobs: Vec<Event> = (0..rng.random_range(2..10))
            .map(|i| submit(random_job(&mut rng, format!("j{i}"))))
            .collect();
        checked_tick(&mut s, 0, jobs).unwrap();
        let question = random_job(&mut rng, "q".into());
        let Ok(answer) = s.what_if(question.clone()) else {
            continue;
        };
        let out = checked_tick(&mut s, 0, vec![submit(question)]).unwrap();
        match placement(&out.decisions, "q") {
            Some(placement) => {
                assert_eq!(answer.start_ms, Some(0), "seed {seed}");
                assert_eq!(placement, answer.placement, "seed {seed}");
            }
            None => {
                assert!(answer.start_ms.is_some_and(|t| t > 0), "seed {seed}");
                let info = pending(&s, "q");
                if info.estimated_start_ms.is_some() {
                    assert_eq!(info.estimated_start_ms, answer.start_ms, "seed {seed}");
                }
            }
        }
    }
}

#[test]
fn a_job_past_the_easy_depth_still_gets_an_estimate() {
    let mut s = cluster(1, "easy");
    let whole = |id: &str, limit| JobSpec::new(id, limit, 1).with_gpus(Milli::from_units(4));
    let events = vec![submit(whole("run", 1_000)), submit(whole("head", 2_000))];
    checked_tick(&mut s, 0, events).unwrap();
    let answer = s.what_if(whole("q", 500)).unwrap();
    assert_eq!(answer.start_ms, Some(3_000), "after run and head");
    assert_eq!(answer.placement[0].gpus, vec![0, 1, 2, 3]);
}

#[test]
fn waiting_for_something_else_has_no_start_and_bad_jobs_are_errors() {
    let mut s = cluster(1, "easy");
    checked_tick(&mut s, 0, vec![submit(JobSpec::new("a", 10, 1))]).unwrap();
    let mut later = JobSpec::new("later", 10, 1);
    later.begin_ms = Some(5_000);
    assert_eq!(s.what_if(later).unwrap().start_ms, None);
    let duplicate = s.what_if(JobSpec::new("a", 10, 1)).unwrap_err();
    assert_eq!(duplicate.kind, ErrorKind::DuplicateJob);
    let huge = s.what_if(JobSpec::new("huge", 10, 100)).unwrap_err();
    assert_eq!(huge.kind, ErrorKind::Unsatisfiable);
}
