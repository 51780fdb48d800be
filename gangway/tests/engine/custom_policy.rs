//! Property-checks user-written plug-ins with the test kit: random clusters and adversarial
//! streams, the oracle after every tick, determinism, snapshot/restore half-way, and a failure
//! shrunk to a minimal stream of protocol lines (docs/protocol.md).

use crate::common;

use common::build::{finished, submit};
use gangway::JobSpec;
use gangway::policy::{PassContext, Plugin, Profile};
use gangway::state::JobView;
use gangway::testkit::harness::{ProfileChecks, check_profile, scale};

#[derive(Clone)]
struct ShortestJobFirst;

#[gangway::policy::plugin]
impl Plugin for ShortestJobFirst {
    fn name(&self) -> &str {
        "shortest_job_first"
    }
    fn order_key(&self, job: JobView<'_>, _: &PassContext<'_>) -> i64 {
        let minutes = i64::try_from(job.spec().time_limit_ms / 60_000).unwrap_or(i64::MAX);
        i64::from(job.spec().priority) - minutes.saturating_mul(1_000)
    }
}

fn shortest_first() -> Profile {
    Profile::builder().plugin(ShortestJobFirst).build().unwrap()
}

#[test]
fn shortest_job_first_keeps_every_invariant() {
    check_profile(shortest_first, ProfileChecks::new(300 * scale(), 60))
        .unwrap_or_else(|e| panic!("{e}"));
}

/// An order plug-in that returns extreme keys cannot corrupt the engine either.
#[derive(Clone)]
struct Extreme;

#[gangway::policy::plugin]
impl Plugin for Extreme {
    fn name(&self) -> &str {
        "extreme"
    }
    fn order_key(&self, job: JobView<'_>, _: &PassContext<'_>) -> i64 {
        if job.name().len().is_multiple_of(2) {
            i64::MAX
        } else {
            i64::MIN
        }
    }
}

#[test]
fn extreme_keys_keep_every_invariant() {
    let profile = || Profile::builder().plugin(Extreme).build().unwrap();
    check_profile(profile, ProfileChecks::new(100 * scale(), 60)).unwrap_or_else(|e| panic!("{e}"));
}

/// A snapshot restored with the same profile makes the same decisions as the original;
/// restored with the default profile it orders differently (so the profile really travels).
#[test]
fn restore_with_profile_keeps_the_custom_order() {
    use gangway::testkit::checked_tick;
    use gangway::{ClusterConfig, Scheduler};

    let cluster: ClusterConfig =
        serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 1}]}"#).unwrap();
    let mut original = Scheduler::with_profile(cluster, shortest_first()).unwrap();
    let events = vec![
        submit(JobSpec::new("blocker", 60_000, 1)),
        submit(JobSpec::new("long", 3_600_000, 1)),
        submit(JobSpec::new("short", 120_000, 1)),
    ];
    checked_tick(&mut original, 0, events).unwrap();
    let mut custom =
        Scheduler::restore_with_profile(original.snapshot(), shortest_first()).unwrap();
    let mut builtin = Scheduler::restore(original.snapshot()).unwrap();
    let end = finished("blocker");
    let want = checked_tick(&mut original, 60_000, vec![end.clone()]).unwrap();
    let got = checked_tick(&mut custom, 60_000, vec![end.clone()]).unwrap();
    let other = checked_tick(&mut builtin, 60_000, vec![end]).unwrap();
    assert_eq!(got.decisions, want.decisions);
    assert_eq!(want.decisions[0].job(), "short");
    assert_eq!(other.decisions[0].job(), "long");
}
