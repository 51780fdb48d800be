//! Volume: random clusters and adversarial event streams through the scheduler with the oracle
//! after every tick. The default run sends over 1,000,000 stream events in all (counted and
//! asserted); `GANGWAY_PROPTEST_SCALE=N` multiplies the cases for long local runs. A failure
//! shrinks to a minimal stream printed as docs/protocol.md lines. The runs also count what the
//! hardware generators reached — clusters with a topology, MIG and NVLink islands, starts of
//! MIG and topology-constrained groups (which the oracle's topology and MIG checks then
//! inspect), and rejected submits asking for what the cluster cannot have — and the
//! many-clusters run asserts that each happened.
//!
//! Each run is seeded as the test kit seeds its own (`gangway::testkit::seed`): fixed by
//! default, so the counts asserted here are the same on every run and cannot fail by chance;
//! `GANGWAY_TESTKIT_SEED=random` explores fresh cases, and every failure names its seed.

use std::cell::{Cell, RefCell};

use gangway::model::MigProfileId;
use gangway::policy::Profile;
use gangway::state::ClusterState;
use gangway::testkit::harness::{run_stream_observed, scale};
use gangway::testkit::seed::{rng, run_seed};
use gangway::testkit::strategies::scenario;
use gangway::{ClusterConfig, Decision, Event, Scheduler, TickOutcome, TopologyRequest};
use proptest::test_runner::{Config, TestCaseError, TestRunner};

/// What generated scenarios exercised of topology and MIG.
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

impl Reach {
    fn cluster(&mut self, cluster: &ClusterConfig) {
        let gpus = || cluster.nodes.iter().filter_map(|n| n.gpus.as_ref());
        self.topology_clusters += u32::from(!cluster.topology.is_empty());
        self.mig_clusters += u32::from(gpus().any(|g| g.mig_config.is_some() || !g.mig.is_empty()));
        self.nvlink_clusters += u32::from(gpus().any(|g| !g.nvlink_islands.is_empty()));
    }

    fn tick(&mut self, scheduler: &Scheduler, events: &[Event], outcome: &TickOutcome) {
        let state = scheduler.state();
        for decision in &outcome.decisions {
            let Decision::Start { job, placement } = decision else {
                continue;
            };
            self.mig_starts += u32::from(placement.iter().any(|e| !e.mig.is_empty()));
            let Some(spec) = state.job_by_name(job).map(|j| j.spec()) else {
                continue;
            };
            let requests = || spec.groups.iter().filter_map(|g| g.topology.as_ref());
            self.required_starts +=
                u32::from(requests().any(|r| matches!(r, TopologyRequest::Required(_))));
            self.preferred_starts +=
                u32::from(requests().any(|r| matches!(r, TopologyRequest::Preferred(_))));
        }
        for rejection in &outcome.rejected {
            let Some(Event::Submit { job }) = events.get(rejection.index) else {
                continue;
            };
            let levels = &state.config().topology;
            let strange = job.groups.iter().any(|g| {
                g.topology
                    .as_ref()
                    .is_some_and(|r| !levels.iter().any(|l| l == r.level()))
                    || g.mig
                        .as_deref()
                        .is_some_and(|p| !known_mig_profile(state, p))
            });
            self.hardware_rejections += u32::from(strange);
        }
    }

    fn smallest(&self) -> u32 {
        [
            self.topology_clusters,
            self.mig_clusters,
            self.nvlink_clusters,
            self.mig_starts,
            self.required_starts,
            self.preferred_starts,
            self.hardware_rejections,
        ]
        .into_iter()
        .min()
        .unwrap_or(0)
    }
}

/// Whether a node has ever declared MIG profile `name` (its interned ids are dense from 0; an
/// unknown id names nothing).
fn known_mig_profile(state: &ClusterState, name: &str) -> bool {
    (0..)
        .map(|id| state.mig_profile_name(MigProfileId(id)))
        .take_while(|known| !known.is_empty())
        .any(|known| known == name)
}

/// What one run sent and reached, and the seed that drew it.
struct Run {
    seed: u64,
    sent: u64,
    reach: Reach,
}

/// Runs `cases` × scale random scenarios of up to `max_ticks` ticks, drawn from the run's seed
/// moved by `offset` (so that the four tests draw different cases); returns the events sent
/// and what they reached.
fn run(offset: u64, cases: u32, max_ticks: usize) -> Run {
    let seed = run_seed(None)
        .unwrap_or_else(|e| panic!("{e}"))
        .wrapping_add(offset);
    let events = Cell::new(0u64);
    let reach = RefCell::new(Reach::default());
    let config = Config {
        cases: cases * scale(),
        failure_persistence: None,
        ..Config::default()
    };
    let result = TestRunner::new_with_rng(config, rng(seed)).run(
        &scenario(max_ticks),
        |(cluster, stream)| {
            events.set(events.get() + stream.events() as u64);
            reach.borrow_mut().cluster(&cluster);
            let profile = Profile::default_for_config();
            run_stream_observed(&cluster, profile, &stream, |s, sent, outcome| {
                reach.borrow_mut().tick(s, sent, outcome);
            })
            .map_err(|f| TestCaseError::fail(f.to_string()))
        },
    );
    if let Err(e) = result {
        panic!("seed {seed}: {e}");
    }
    Run {
        seed,
        sent: events.get(),
        reach: reach.into_inner(),
    }
}

/// Asserts that a run sent at least `least` events.
fn assert_sent(run: &Run, least: u64) {
    println!("{} events (seed {})", run.sent, run.seed);
    assert!(
        run.sent >= least,
        "only {} events (seed {})",
        run.sent,
        run.seed
    );
}

// Four tests so that the test harness runs them on parallel threads.
#[test]
fn short_streams_many_clusters() {
    let run = run(0, 6_500, 40);
    assert_sent(&run, 250_000);
    println!("{:?}", run.reach);
    // 1,000 cases of this run reached each at least 16 times.
    assert!(
        run.reach.smallest() >= 20,
        "{:?} (seed {})",
        run.reach,
        run.seed
    );
}

#[test]
fn long_streams_a() {
    assert_sent(&run(1, 1_800, 150), 250_000);
}

#[test]
fn long_streams_b() {
    assert_sent(&run(2, 1_800, 150), 250_000);
}

#[test]
fn very_long_streams() {
    assert_sent(&run(3, 450, 600), 250_000);
}
