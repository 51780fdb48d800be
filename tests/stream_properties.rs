//! Volume: random clusters and adversarial event streams through the scheduler with the oracle
//! after every tick. The default run sends over 1,000,000 stream events in all (counted and
//! asserted); `GANGWAY_PROPTEST_SCALE=N` multiplies the cases for long local runs. A failure
//! shrinks to a minimal stream printed as PROTOCOL.md lines. A fifth test counts, over a fixed
//! sample, that the hardware generators reach the oracle's topology and MIG checks (starts of
//! MIG and topology-constrained groups, on clusters with a topology, MIG and NVLink islands)
//! and the checker's rejection of requests the cluster cannot have.

use std::cell::Cell;

use gangway::model::job::TopologyRequest;
use gangway::policy::Multifactor;
use gangway::testkit::harness::{run_stream, run_stream_observed, scale};
use gangway::testkit::strategies::scenario;
use gangway::{Decision, Event};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};

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

/// What a sample of generated scenarios exercised.
#[derive(Debug, Default)]
struct Reach {
    topology_clusters: u32,
    mig_clusters: u32,
    nvlink_clusters: u32,
    mig_starts: u32,
    required_starts: u32,
    preferred_starts: u32,
    hardware_rejections: u32,
}

#[test]
fn hardware_generators_reach_the_topology_and_mig_checks() {
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::deterministic_rng(RngAlgorithm::ChaCha),
    );
    let mut reach = Reach::default();
    for _ in 0..1_000 {
        let (cluster, stream) = scenario(40).new_tree(&mut runner).unwrap().current();
        let gpus = || cluster.nodes.iter().filter_map(|n| n.gpus.as_ref());
        reach.topology_clusters += u32::from(!cluster.topology.is_empty());
        reach.mig_clusters +=
            u32::from(gpus().any(|g| g.mig_config.is_some() || !g.mig.is_empty()));
        reach.nvlink_clusters += u32::from(gpus().any(|g| !g.nvlink_islands.is_empty()));
        let policy = Box::new(Multifactor::default());
        run_stream_observed(&cluster, policy, &stream, |scheduler, events, outcome| {
            let state = scheduler.state();
            for decision in &outcome.decisions {
                let Decision::Start { job, placement } = decision else {
                    continue;
                };
                reach.mig_starts += u32::from(placement.iter().any(|e| !e.mig.is_empty()));
                let spec = &state.job(state.job_names[job.as_str()]).unwrap().spec;
                let requests = || spec.groups.iter().filter_map(|g| g.topology.as_ref());
                reach.required_starts +=
                    u32::from(requests().any(|r| matches!(r, TopologyRequest::Required(_))));
                reach.preferred_starts +=
                    u32::from(requests().any(|r| matches!(r, TopologyRequest::Preferred(_))));
            }
            for rejection in &outcome.rejected {
                if let Some(Event::Submit { job }) = events.get(rejection.index) {
                    let strange = job.groups.iter().any(|g| {
                        g.topology
                            .as_ref()
                            .is_some_and(|r| !cluster.topology.iter().any(|l| l == r.level()))
                            || g.mig
                                .as_deref()
                                .is_some_and(|p| !state.mig_profiles.iter().any(|q| q == p))
                    });
                    reach.hardware_rejections += u32::from(strange);
                }
            }
        })
        .unwrap();
    }
    let r = &reach;
    let all = [
        r.topology_clusters,
        r.mig_clusters,
        r.nvlink_clusters,
        r.mig_starts,
        r.required_starts,
        r.preferred_starts,
        r.hardware_rejections,
    ];
    println!("{reach:?}");
    assert!(all.iter().all(|&n| n >= 5), "{reach:?}");
}
