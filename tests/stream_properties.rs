//! Volume: random clusters and adversarial event streams through the scheduler with the oracle
//! after every tick. The default run sends over 1,000,000 stream events in all (counted and
//! asserted); `GANGWAY_PROPTEST_SCALE=N` multiplies the cases for long local runs. A failure
//! shrinks to a minimal stream printed as PROTOCOL.md lines.

use std::cell::Cell;

use gangway::policy::Multifactor;
use gangway::testkit::harness::{run_stream, scale};
use gangway::testkit::strategies::scenario;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

/// Runs `cases` × scale random scenarios of up to `max_ticks` ticks; returns the events sent.
fn run(cases: u32, max_ticks: usize) -> u64 {
    let events = Cell::new(0u64);
    let config = Config {
        cases: cases * scale(),
        failure_persistence: None,
        ..Config::default()
    };
    let result = TestRunner::new(config).run(&scenario(max_ticks), |(cluster, stream)| {
        events.set(events.get() + stream.events() as u64);
        let policy = Multifactor {
            weights: cluster.policy.priority.weights.clone(),
        };
        run_stream(&cluster, Box::new(policy), &stream)
            .map_err(|f| TestCaseError::fail(f.to_string()))
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    events.get()
}

// Four tests so that the test harness runs them on parallel threads.
#[test]
fn short_streams_many_clusters() {
    let sent = run(6_500, 40);
    assert!(sent >= 250_000, "only {sent} events");
}

#[test]
fn long_streams_a() {
    let sent = run(1_800, 150);
    assert!(sent >= 250_000, "only {sent} events");
}

#[test]
fn long_streams_b() {
    let sent = run(1_800, 150);
    assert!(sent >= 250_000, "only {sent} events");
}

#[test]
fn very_long_streams() {
    let sent = run(450, 600);
    assert!(sent >= 250_000, "only {sent} events");
}
