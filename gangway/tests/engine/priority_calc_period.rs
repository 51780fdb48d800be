//! `policy.priority.calc_period_ms` (Slurm's `PriorityCalcPeriod`): between calculations a
//! pending job keeps the key it got against the last calculation's figures; a due calculation,
//! a `set_priority` and `reconfigure` re-key; a snapshot keeps the calculation.

use crate::common;

use common::build::{self, finished, submit, submit_all};
use gangway::testkit::checked_tick;
use gangway::{Decision, Event, JobSpec, Milli, Scheduler};
use serde_json::{Value, json};

/// One GPU; accounts `a` and `b` with equal shares; the order is by fair-share alone.
fn cluster(period_ms: Option<u64>) -> Value {
    let mut priority = json!({"weights": {"fairshare": 1000}});
    if let Some(period) = period_ms {
        priority["calc_period_ms"] = json!(period);
    }
    json!({
        "nodes": [{"name": "n1", "cpus": 4, "memory_mib": 1000,
                   "gpus": {"model": "a100", "count": 1}}],
        "accounts": [{"name": "a", "users": {"u": 1}}, {"name": "b", "users": {"u": 1}}],
        "policy": {"priority": priority}
    })
}

fn job(id: &str, account: &str) -> JobSpec {
    let mut job = JobSpec::new(id, 100_000, 1).with_gpus(Milli::from_units(1));
    job.account = Some(account.into());
    job.user = Some("u".into());
    job
}

fn started(decisions: &[Decision]) -> Vec<&str> {
    decisions
        .iter()
        .filter_map(|d| match d {
            Decision::Start { job, .. } => Some(job.as_str()),
            _ => None,
        })
        .collect()
}

/// `r` (account a) runs from 0 to 100 s while `x` (account a) and `y` (account b) wait, `x`
/// first by arrival while neither account has used anything. Returns the scheduler at 100 s,
/// before `r`'s end is told.
fn loaded(period_ms: Option<u64>) -> Scheduler {
    let mut s = build::scheduler(cluster(period_ms));
    checked_tick(&mut s, 0, vec![submit(job("r", "a"))]).unwrap();
    checked_tick(&mut s, 0, submit_all(vec![job("x", "a"), job("y", "b")])).unwrap();
    checked_tick(&mut s, 50_000, vec![]).unwrap();
    s
}

fn next_start(s: &mut Scheduler, now: u64, mut events: Vec<Event>) -> Vec<String> {
    events.push(finished("r"));
    let out = checked_tick(s, now, events).unwrap();
    started(&out.decisions)
        .into_iter()
        .map(str::to_string)
        .collect()
}

#[test]
fn without_a_period_the_order_follows_the_usage_at_every_pass() {
    // Account a used the GPU for 100 s: b's job goes first.
    let mut s = loaded(None);
    assert_eq!(next_start(&mut s, 100_000, vec![]), ["y"]);
}

#[test]
fn within_a_period_the_keys_of_the_last_calculation_hold() {
    // Calculated at 0, when neither account had used anything: x keeps its lead.
    let mut s = loaded(Some(300_000));
    assert_eq!(next_start(&mut s, 100_000, vec![]), ["x"]);
    // The report gives the priorities of that calculation, in that order.
    let order: Vec<String> = loaded(Some(300_000))
        .priorities()
        .into_iter()
        .map(|row| row.job)
        .collect();
    assert_eq!(order, ["x", "y"]);
}

#[test]
fn a_calculation_comes_due_once_the_period_has_passed() {
    // Calculated at 0, then at 50 s (due after 40 s): a's usage by then counts.
    let mut s = loaded(Some(40_000));
    assert_eq!(next_start(&mut s, 100_000, vec![]), ["y"]);
}

#[test]
fn set_priority_rekeys_its_job_at_once() {
    let mut s = build::scheduler(cluster(Some(300_000)));
    checked_tick(&mut s, 0, vec![submit(job("r", "a"))]).unwrap();
    checked_tick(&mut s, 0, submit_all(vec![job("x", "a"), job("y", "b")])).unwrap();
    let raise = Event::SetPriority {
        job: "y".into(),
        priority: 5_000,
    };
    assert_eq!(next_start(&mut s, 100_000, vec![raise]), ["y"]);
}

#[test]
fn reconfigure_starts_a_new_calculation() {
    let mut s = loaded(Some(300_000));
    let config = build::config(cluster(Some(300_000)));
    s.reconfigure(config).unwrap();
    assert_eq!(next_start(&mut s, 100_000, vec![]), ["y"]);
}

#[test]
fn a_restored_scheduler_keeps_the_calculation() {
    let mut original = loaded(Some(300_000));
    let text = serde_json::to_string(&original.snapshot()).unwrap();
    let mut restored = Scheduler::restore(serde_json::from_str(&text).unwrap()).unwrap();
    assert_eq!(next_start(&mut restored, 100_000, vec![]), ["x"]);
    assert_eq!(next_start(&mut original, 100_000, vec![]), ["x"]);
    // A snapshot without a period writes no calculation.
    let plain = serde_json::to_value(loaded(None).snapshot()).unwrap();
    assert!(plain.get("priority_calc").is_none());
}

#[test]
fn the_period_must_be_positive_and_in_range() {
    let refused = |period: u64| {
        let config: Result<gangway::ClusterConfig, _> =
            serde_json::from_value(cluster(Some(period)));
        let error = Scheduler::new(config.unwrap()).unwrap_err();
        (error.field, error.message)
    };
    let (field, message) = refused(0);
    assert_eq!(field, "policy.priority.calc_period_ms");
    assert!(message.contains("must be positive"), "{message}");
    let (field, _) = refused(1 << 53);
    assert_eq!(field, "policy.priority.calc_period_ms");
}
