//! Property-checks a user-written policy (examples/custom_policy.rs's shortest job first) with
//! the test kit: random clusters and adversarial streams, the oracle after every tick, and a
//! failure shrunk to a minimal stream of PROTOCOL.md lines.

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
