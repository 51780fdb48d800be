//! What a job has run so far, as the state's job view reads it: attained GPU service across
//! runs, run and preemption counts, the current and last run, and the time since the last
//! `checkpoint`. The invariant oracle runs after every tick.

use crate::common;

use common::build::{event, finished};
use gangway::testkit::checked_tick;
use gangway::{Decision, ErrorKind, Event, Scheduler};
use serde_json::json;

/// One node of 4 GPUs and a queue whose jobs preempt lower-priority ones.
fn scheduler() -> Scheduler {
    common::build::scheduler(json!({
        "nodes": [{"name": "n1", "cpus": 8, "gpus": {"model": "a100", "count": 4}}],
        "queues": [{"name": "q", "quota": {"gpu": {"nominal": 4}},
                    "preemption": {"within_queue": "lower_priority"}}],
        "policy": {"preemption": {"enabled": true}}}))
}

fn submit(id: &str, priority: i32) -> Event {
    event(
        json!({"type": "submit", "job": {"id": id, "queue": "q", "priority": priority,
        "requeue": true, "time_limit_ms": 3_600_000, "groups": [{"count": 1, "gpus": 4}]}}),
    )
}

/// `a` runs 0–15 s, is preempted by `b` at 10 s and stops at 15 s; `b` runs 15–20 s; `a` runs
/// again from 20 s and checkpoints at 23 s.
fn history() -> Scheduler {
    let mut s = scheduler();
    checked_tick(&mut s, 0, vec![submit("a", 1)]).unwrap();
    let out = checked_tick(&mut s, 10_000, vec![submit("b", 9)]).unwrap();
    assert!(matches!(&out.decisions[..], [Decision::Preempt { job, .. }] if job == "a"));
    let stopped = event(json!({"type": "stopped", "job": "a"}));
    checked_tick(&mut s, 15_000, vec![stopped]).unwrap();
    let out = checked_tick(&mut s, 20_000, vec![finished("b")]).unwrap();
    assert!(matches!(&out.decisions[..], [Decision::Start { job, .. }] if job == "a"));
    let checkpoint = event(json!({"type": "checkpoint", "job": "a"}));
    let out = checked_tick(&mut s, 23_000, vec![checkpoint]).unwrap();
    assert!(out.rejected.is_empty(), "{:?}", out.rejected);
    checked_tick(&mut s, 25_000, vec![]).unwrap();
    s
}

#[test]
fn attained_service_runs_and_preemptions_add_up_across_a_requeue() {
    let s = history();
    let a = s.state().job_by_name("a").unwrap();
    // 4 GPUs for 15 s in the first run, 4 GPUs for 5 s so far in the second.
    assert_eq!(a.attained_gpu_ms(), 4 * 15_000 + 4 * 5_000);
    assert_eq!((a.runs(), a.preemptions()), (2, 1));
    assert_eq!(a.last_run(), Some((0, 15_000)));
    assert_eq!(a.current_run(), Some((20_000, 5_000)));
    assert_eq!(a.since_checkpoint_ms(), Some(2_000));
    assert_eq!(a.wait_ms(), 0);
}

#[test]
fn a_run_without_checkpoints_loses_everything_since_its_start_and_a_pending_job_waits() {
    let mut s = scheduler();
    checked_tick(&mut s, 0, vec![submit("a", 1)]).unwrap();
    checked_tick(&mut s, 7_000, vec![submit("b", 1)]).unwrap();
    let state = s.state();
    let (a, b) = (
        state.job_by_name("a").unwrap(),
        state.job_by_name("b").unwrap(),
    );
    assert_eq!(a.since_checkpoint_ms(), Some(7_000));
    assert_eq!(a.attained_gpu_ms(), 4 * 7_000);
    assert_eq!((b.wait_ms(), b.runs(), b.attained_gpu_ms()), (0, 0, 0));
    assert_eq!(b.since_checkpoint_ms(), None);
    checked_tick(&mut s, 9_000, vec![]).unwrap();
    assert_eq!(s.state().job_by_name("b").unwrap().wait_ms(), 2_000);
}

#[test]
fn a_checkpoint_of_a_job_that_is_not_running_is_rejected_and_changes_nothing() {
    let mut s = scheduler();
    checked_tick(&mut s, 0, vec![submit("a", 1), submit("b", 1)]).unwrap();
    // The state, not the pass's report: a pass's positions count the jobs it started.
    let state = |s: &Scheduler| serde_json::to_value(s.snapshot()).unwrap()["state"].clone();
    let before = state(&s);
    let checkpoint = |job: &str| event(json!({"type": "checkpoint", "job": job}));
    let out = checked_tick(&mut s, 0, vec![checkpoint("b"), checkpoint("nobody")]).unwrap();
    let kinds = common::decisions::rejected_kinds(&out);
    assert_eq!(
        kinds,
        [(0, ErrorKind::InvalidState), (1, ErrorKind::UnknownJob)]
    );
    assert_eq!(state(&s), before);
}

#[test]
fn the_history_survives_a_snapshot_and_older_snapshots_read_as_never_run() {
    let s = history();
    let restored = Scheduler::restore(s.snapshot()).unwrap();
    let (a, b) = (
        s.state().job_by_name("a").unwrap(),
        restored.state().job_by_name("a").unwrap(),
    );
    let history = |j: gangway::state::JobView<'_>| (j.attained_gpu_ms(), j.runs(), j.preemptions());
    assert_eq!(history(a), history(b));
    assert_eq!(a.last_run(), b.last_run());

    // A snapshot written before jobs had a history restores with an empty one.
    let mut json = serde_json::to_value(s.snapshot()).unwrap();
    for job in json["state"]["jobs"].as_array_mut().unwrap() {
        if let Some(job) = job.as_object_mut() {
            job.remove("history");
        }
    }
    let old = Scheduler::restore(serde_json::from_value(json).unwrap()).unwrap();
    let a = old.state().job_by_name("a").unwrap();
    assert_eq!((a.runs(), a.preemptions(), a.last_run()), (0, 0, None));
    assert_eq!(a.attained_gpu_ms(), 4 * 5_000); // the current run only
}
