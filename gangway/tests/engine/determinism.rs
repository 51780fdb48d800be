//! Determinism: the same config and tick stream give byte-identical decision JSON across two
//! fresh schedulers, and across a snapshot → JSON → restore at random points of the stream.

use gangway::testkit::harness::{Stream, resolve, scale};
use gangway::testkit::strategies::scenario;
use gangway::{ClusterConfig, Scheduler, Snapshot};
use proptest::prelude::*;

/// Runs the stream; at the ticks in `restore_at`, the scheduler is replaced by one restored
/// from its snapshot's JSON. Returns every tick's outcome and the final explain, as JSON.
fn transcript(config: &ClusterConfig, stream: &Stream, restore_at: &[usize]) -> Vec<String> {
    let mut s = Scheduler::new(config.clone()).unwrap();
    let mut out = Vec::new();
    for (i, step) in stream.ticks.iter().enumerate() {
        if restore_at.contains(&i) {
            let json = serde_json::to_string(&s.snapshot()).unwrap();
            let snapshot: Snapshot = serde_json::from_str(&json).unwrap();
            s = Scheduler::restore(snapshot).unwrap();
        }
        let evs = resolve(&s, &step.events);
        let outcome = gangway::testkit::checked_tick(&mut s, step.at_ms, evs).unwrap();
        out.push(serde_json::to_string(&outcome).unwrap());
    }
    out.push(serde_json::to_string(&s.explain()).unwrap());
    out
}

/// Streams per property in CI; the long run below takes 20 times as many.
const CASES: u32 = 150;

proptest! {
    #![proptest_config(ProptestConfig { cases: CASES * scale(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn two_fresh_schedulers_agree((config, stream) in scenario(60)) {
        prop_assert_eq!(transcript(&config, &stream, &[]), transcript(&config, &stream, &[]));
    }

    #[test]
    fn snapshot_restore_changes_nothing(
        (config, stream) in scenario(60),
        points in proptest::collection::vec(0usize..60, 1..4),
    ) {
        prop_assert_eq!(transcript(&config, &stream, &[]), transcript(&config, &stream, &points));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 20 * CASES * scale(), failure_persistence: None, ..ProptestConfig::default() })]

    /// The long run of the restore family: 20 times the CI cases of the property above.
    #[test]
    #[ignore = "long run: cargo test -p gangway --test engine long_run -- --ignored"]
    fn long_run_snapshot_restore_changes_nothing(
        (config, stream) in scenario(60),
        points in proptest::collection::vec(0usize..60, 1..4),
    ) {
        prop_assert_eq!(transcript(&config, &stream, &[]), transcript(&config, &stream, &points));
    }
}
