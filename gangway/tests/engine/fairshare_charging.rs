//! How the scheduler charges usage: billing-weighted resource-seconds of every running job,
//! charged at each tick up to the tick's time, so a job ending at a tick pays up to then.

use crate::common;

use common::build::{self, finished, submit};
use gangway::ShareRow;
use gangway::testkit::checked_tick;
use gangway::{Event, JobSpec, Milli, Scheduler};
use serde_json::{Value, json};

fn scheduler(policy: Value) -> Scheduler {
    build::scheduler(json!({
        "nodes": [{"name": "n1", "cpus": 8, "memory_mib": 16384, "gpus": {"model": "a100", "count": 4}}],
        "accounts": [{"name": "ml", "users": {"alice": 2}}],
        "policy": policy
    }))
}

fn job(id: &str, gpus: u64) -> JobSpec {
    let mut job = JobSpec::new(id, 3_600_000, 1).with_gpus(Milli::from_units(gpus));
    job.account = Some("ml".into());
    job.user = Some("alice".into());
    job
}

fn row<'a>(rows: &'a [ShareRow], account: &str, user: Option<&str>) -> &'a ShareRow {
    rows.iter()
        .find(|r| r.account == account && r.user.as_deref() == user)
        .unwrap()
}

/// Usage without decay to speak of over seconds (below 1e-8 relative): a half-life of a
/// thousand years.
const NO_DECAY: u64 = 1000 * 365 * 86_400_000;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * b.abs().max(1.0)
}

#[test]
fn a_running_job_pays_gpu_seconds_up_to_the_tick_it_ends_at() {
    let mut s = scheduler(json!({"fairshare": {"half_life_ms": NO_DECAY}}));
    checked_tick(&mut s, 0, vec![submit(job("a", 2))]).unwrap();
    checked_tick(&mut s, 10_000, vec![]).unwrap();
    assert!(close(
        row(&s.share_report(), "ml", Some("alice")).raw_usage,
        20.0
    ));
    checked_tick(&mut s, 25_000, vec![finished("a")]).unwrap();
    checked_tick(&mut s, 100_000, vec![]).unwrap();
    let rows = s.share_report();
    assert!(close(row(&rows, "ml", Some("alice")).raw_usage, 50.0));
    assert!(close(row(&rows, "ml", None).raw_usage, 50.0));
}

#[test]
fn a_cancelled_running_job_pays_up_to_the_cancel() {
    let mut s = scheduler(json!({"fairshare": {"half_life_ms": NO_DECAY}}));
    checked_tick(&mut s, 0, vec![submit(job("a", 1))]).unwrap();
    checked_tick(&mut s, 7_000, vec![Event::Cancel { job: "a".into() }]).unwrap();
    checked_tick(&mut s, 9_000, vec![]).unwrap();
    assert!(close(
        row(&s.share_report(), "ml", Some("alice")).raw_usage,
        7.0
    ));
}

#[test]
fn billing_weights_price_cpus_memory_and_gpu_models() {
    let weights = json!({"cpu": 0.5, "memory_gib": 0.25, "gpu:a100": 3.0});
    let mut s =
        scheduler(json!({"fairshare": {"half_life_ms": NO_DECAY, "billing_weights": weights}}));
    let mut spec = job("a", 1);
    spec.groups[0].cpus = Milli::from_units(2);
    spec.groups[0].memory_mib = 4096;
    checked_tick(&mut s, 0, vec![submit(spec)]).unwrap();
    checked_tick(&mut s, 10_000, vec![]).unwrap();
    // (2 cpus × 0.5 + 4 GiB × 0.25 + 1 a100 × 3) per second, for 10 s.
    assert!(close(
        row(&s.share_report(), "ml", Some("alice")).raw_usage,
        50.0
    ));
}

#[test]
fn an_exclusive_job_pays_for_the_whole_node() {
    let mut s = scheduler(json!({"fairshare": {"half_life_ms": NO_DECAY}}));
    let mut spec = job("a", 1);
    spec.exclusive = true;
    checked_tick(&mut s, 0, vec![submit(spec)]).unwrap();
    checked_tick(&mut s, 10_000, vec![]).unwrap();
    assert!(close(
        row(&s.share_report(), "ml", Some("alice")).raw_usage,
        40.0
    ));
}

#[test]
fn a_job_naming_no_account_or_user_is_charged_to_default_as_the_empty_user() {
    let mut s = scheduler(json!({"fairshare": {"half_life_ms": NO_DECAY}}));
    let spec = JobSpec::new("anon", 3_600_000, 1).with_gpus(Milli::from_units(1));
    checked_tick(&mut s, 0, vec![submit(spec)]).unwrap();
    checked_tick(&mut s, 5_000, vec![]).unwrap();
    let rows = s.share_report();
    assert!(close(row(&rows, "default", Some("")).raw_usage, 5.0));
    assert!(close(row(&rows, "ml", None).raw_usage, 0.0));
}

#[test]
fn without_accounts_there_is_no_share_report_and_fairshare_is_zero() {
    let mut s = build::scheduler(json!({
        "nodes": [{"name": "n1", "cpus": 1, "memory_mib": 1000}],
        "policy": {"priority": {"weights": {"fairshare": 1000}}}
    }));
    let events = vec![
        submit(JobSpec::new("a", 60_000, 1)),
        submit(JobSpec::new("b", 60_000, 1)),
    ];
    checked_tick(&mut s, 0, events).unwrap();
    assert!(s.share_report().is_empty());
    let priorities = s.priorities();
    assert_eq!(priorities.len(), 1);
    assert_eq!(priorities[0].factors.fairshare, 0.0);
    assert_eq!(priorities[0].priority, 0);
}
