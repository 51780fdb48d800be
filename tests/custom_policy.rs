//! Property-checks a user-written policy (examples/custom_policy.rs's shortest job first) with
//! the test kit: random clusters and adversarial streams, the oracle after every tick, and a
//! failure shrunk to a minimal stream of protocol lines (docs/protocol.md).

mod common;

use common::build::{finished, submit};
use gangway::JobSpec;
use gangway::policy::{Policy, PriorityFactors};
use gangway::testkit::harness::{check_policy, scale};

struct ShortestJobFirst;

impl Policy for ShortestJobFirst {
    fn priority(&self, job: &JobSpec, _factors: &PriorityFactors) -> i64 {
        let minutes = i64::try_from(job.time_limit_ms / 60_000).unwrap_or(i64::MAX);
        i64::from(job.priority) - minutes.saturating_mul(1_000)
    }
}

#[test]
fn shortest_job_first_keeps_every_invariant() {
    check_policy(|| Box::new(ShortestJobFirst), 300 * scale(), 60)
        .unwrap_or_else(|e| panic!("{e}"));
}

/// A policy that returns extreme priorities cannot corrupt the engine either.
struct Extreme;

impl Policy for Extreme {
    fn priority(&self, job: &JobSpec, _factors: &PriorityFactors) -> i64 {
        if job.id.len() % 2 == 0 {
            i64::MAX
        } else {
            i64::MIN
        }
    }
}

#[test]
fn extreme_priorities_keep_every_invariant() {
    check_policy(|| Box::new(Extreme), 100 * scale(), 60).unwrap_or_else(|e| panic!("{e}"));
}

/// A snapshot restored with the same custom policy makes the same decisions as the original;
/// restored with the built-in policy it orders differently (so the policy really travels).
#[test]
fn restore_with_policy_keeps_the_custom_order() {
    use gangway::testkit::checked_tick;
    use gangway::{ClusterConfig, Scheduler};

    let cluster: ClusterConfig =
        serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 1}]}"#).unwrap();
    let mut original = Scheduler::with_policy(cluster, Box::new(ShortestJobFirst)).unwrap();
    let events = vec![
        submit(JobSpec::new("blocker", 60_000, 1)),
        submit(JobSpec::new("long", 3_600_000, 1)),
        submit(JobSpec::new("short", 120_000, 1)),
    ];
    checked_tick(&mut original, 0, events).unwrap();
    let mut custom =
        Scheduler::restore_with_policy(original.snapshot(), Box::new(ShortestJobFirst)).unwrap();
    let mut builtin = Scheduler::restore(original.snapshot()).unwrap();
    let end = finished("blocker");
    let want = checked_tick(&mut original, 60_000, vec![end.clone()]).unwrap();
    let got = checked_tick(&mut custom, 60_000, vec![end.clone()]).unwrap();
    let other = checked_tick(&mut builtin, 60_000, vec![end]).unwrap();
    assert_eq!(got.decisions, want.decisions);
    assert_eq!(want.decisions[0].job(), "short");
    assert_eq!(other.decisions[0].job(), "long");
}
