//! Fragmentation-aware placement of shared GPUs through the scheduler: fractions share devices
//! (never beyond one), and a task goes where it strands least of what the submitted shapes need.
//! Every tick runs the invariant oracle.

use crate::common;

use common::build::{finished, scheduler_from_str};
use common::decisions;
use gangway::testkit::checked_tick;
use gangway::{Event, JobSpec, Milli, Scheduler, TickOutcome};

const HOUR: u64 = 3_600_000;

fn scheduler(nodes: &str) -> Scheduler {
    scheduler_from_str(&format!(r#"{{"nodes": [{nodes}]}}"#))
}

fn job(id: &str, cpus: u64, gpus_milli: u64) -> Event {
    let mut job = JobSpec::new(id, HOUR, 1).with_gpus(Milli::from_milli(gpus_milli));
    job.groups[0].cpus = Milli::from_units(cpus);
    Event::Submit { job }
}

/// (job, node, gpus) of each start.
fn starts(out: &TickOutcome) -> Vec<(String, String, Vec<u32>)> {
    decisions::starts(&out.decisions)
        .into_iter()
        .map(|(job, placement)| {
            let first = &placement[0];
            (job.to_string(), first.node.to_string(), first.gpus.clone())
        })
        .collect()
}

fn start(job: &str, node: &str, gpus: &[u32]) -> (String, String, Vec<u32>) {
    (job.to_string(), node.to_string(), gpus.to_vec())
}

#[test]
fn fractions_share_a_device_up_to_one_and_fill_the_fullest_first() {
    let mut s = scheduler(
        r#"{"name": "g", "cpus": 32, "memory_mib": 64000, "gpus": {"model": "t4", "count": 2}}"#,
    );
    let out = checked_tick(
        &mut s,
        0,
        vec![job("a", 1, 600), job("b", 1, 400), job("c", 1, 500)],
    )
    .unwrap();
    // a and b fill device 0 exactly; c opens device 1.
    assert_eq!(
        starts(&out),
        [
            start("a", "g", &[0]),
            start("b", "g", &[0]),
            start("c", "g", &[1])
        ]
    );
    let out = checked_tick(&mut s, 1, vec![job("d", 1, 600)]).unwrap();
    assert!(starts(&out).is_empty(), "0.5 + 0.6 would exceed one device");
}

#[test]
fn a_cpu_heavy_task_avoids_the_node_whose_gpus_it_would_strand() {
    // Both nodes hold the cpu-heavy half-GPU task; on "small" it would leave 4 cpus, too few for
    // the 8-cpu whole-GPU tasks the cluster has seen, stranding a whole GPU. Best fit alone (the
    // first node in id order with the fewest free GPUs) would pick "small".
    let mut s = scheduler(
        r#"{"name": "small", "cpus": 16, "memory_mib": 64000, "gpus": {"model": "t4", "count": 2}},
           {"name": "wide", "cpus": 64, "memory_mib": 64000, "gpus": {"model": "t4", "count": 2}}"#,
    );
    let events = vec![
        job("w1", 8, 1000),
        job("w2", 8, 1000),
        job("w3", 8, 1000),
        job("w4", 8, 1000),
    ];
    let out = checked_tick(&mut s, 0, events).unwrap();
    assert_eq!(starts(&out).len(), 4);
    for id in ["w1", "w2", "w3", "w4"] {
        checked_tick(&mut s, 1, vec![finished(id)]).unwrap();
    }
    let out = checked_tick(&mut s, 2, vec![job("heavy", 12, 500)]).unwrap();
    assert_eq!(starts(&out), [start("heavy", "wide", &[0])]);
    // Both whole-GPU tasks still fit on "small" afterwards.
    let out = checked_tick(&mut s, 3, vec![job("x", 8, 1000), job("y", 8, 1000)]).unwrap();
    assert_eq!(
        starts(&out),
        [start("x", "small", &[0]), start("y", "small", &[1])]
    );
}

// ---------------------------------------------------------------------------------------------
// One node per state class

/// A plug-in of one hook that abstains in it (a filter admits every node, a scorer gives every
/// node 0) and says it answers from the shape and node alone.
fn abstains(name: &str) -> gangway::policy::FnPlugin {
    gangway::policy::FnPlugin::new(name).dependence(gangway::policy::Dependence::ShapeAndNode)
}

/// A node filter that admits every node: a profile with it places through the plain scan of
/// every candidate (filtered candidates are never visited by state class), and otherwise
/// decides as the default profile.
fn admit_all() -> gangway::policy::FnPlugin {
    abstains("admit_all").filter_node(|_, _, _, _| Ok(()))
}

/// A node scorer answering 0 for every node.
fn zero_scorer() -> gangway::policy::FnPlugin {
    abstains("zero").score_node(|_, _, _, _| 0.0)
}

/// The default profile, and the same with [`admit_all`]: the state-class visit against the
/// plain scan.
fn class_and_scan() -> Vec<gangway::policy::Profile> {
    use gangway::policy::{Placement, Profile};
    let mut builder = Profile::builder().plugin(admit_all());
    for plugin in Profile::default_for_config().into_plugins() {
        builder = builder.boxed(plugin, Placement::default());
    }
    vec![
        Profile::default_for_config(),
        builder.build().expect("distinct names"),
    ]
}

/// On random clusters and streams (GPU models, fractions, MIG, maintenance, reservations,
/// earmarks), visiting one node per state class decides exactly as visiting every node.
#[test]
fn the_state_class_visit_decides_as_the_plain_scan_on_random_streams() {
    same_on_random_streams(class_and_scan);
}

/// Bursts on clusters of many alike nodes (where the state-class visit skips the most): a few
/// node makes in two partitions, some nodes part-used by a first wave, then a burst of one- and
/// multi-task GPU jobs (whole GPUs, fractions, pack and strict pack, some exclusive) with some
/// of the first wave ending. Both profiles place every job on the same nodes and devices.
#[test]
fn bursts_on_alike_nodes_are_placed_as_by_the_plain_scan() {
    same_on_bursts(32, class_and_scan);
}

/// The default profile, and the same with the built-in node choice beside [`zero_scorer`]: at tier 0
/// with it at tier 1, and at tier 1 with it at tier 0. A scorer that ties everywhere
/// leaves every choice to the built-in, through the gate's ranking of every candidate.
fn beside_zero() -> Vec<gangway::policy::Profile> {
    use gangway::policy::builtin::LeastFragmenting;
    use gangway::policy::{Placement, Profile};
    let with_zero = |builtin: usize, zero: usize| {
        let mut builder = Profile::builder();
        for plugin in Profile::default_for_config().into_plugins() {
            let tier = if plugin.as_any().is::<LeastFragmenting>() {
                builtin
            } else {
                0
            };
            let placement = Placement {
                tier,
                ..Placement::default()
            };
            builder = builder.boxed(plugin, placement);
        }
        builder
            .scorer(zero_scorer(), zero, 1.0)
            .build()
            .expect("distinct names and tiers")
    };
    vec![
        Profile::default_for_config(),
        with_zero(0, 1),
        with_zero(1, 0),
    ]
}

/// On random clusters and streams, the built-in node choice beside a scorer that ties
/// everywhere decides exactly as the default profile, whichever tier it holds.
#[test]
fn the_built_in_beside_a_tying_scorer_decides_as_the_default_on_random_streams() {
    same_on_random_streams(beside_zero);
}

/// Random clusters and streams of the test kit, each decided alike by every profile `profiles`
/// makes (the first is the default).
fn same_on_random_streams(profiles: fn() -> Vec<gangway::policy::Profile>) {
    use proptest::strategy::{Strategy, ValueTree};
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    for _ in 0..24 * gangway::testkit::harness::scale() {
        let (cluster, stream) = gangway::testkit::strategies::scenario(30)
            .new_tree(&mut runner)
            .unwrap()
            .current();
        common::lockstep::same_decisions(&cluster, profiles(), &stream)
            .unwrap_or_else(|e| panic!("{e}"));
    }
}

/// The bursts of [`bursts_on_alike_nodes_are_placed_as_by_the_plain_scan`]: the built-in beside
/// a scorer that ties everywhere places them as the default profile.
#[test]
fn bursts_on_alike_nodes_are_placed_by_the_built_in_beside_a_tying_scorer() {
    same_on_bursts(16, beside_zero);
}

/// `rounds` random bursts on clusters of many alike nodes, each decided alike by every profile
/// `profiles` makes (the first is the default).
fn same_on_bursts(rounds: u32, profiles: fn() -> Vec<gangway::policy::Profile>) {
    use gangway::testkit::harness::{Stream, StreamEvent, TickStep};
    use proptest::prelude::*;
    use proptest::strategy::ValueTree;
    let node = (0..3usize, 0..2usize, 1..12usize);
    let job = (
        prop_oneof![Just(0u64), 1..5u64, Just(250), Just(500), Just(750)],
        1..4u32,
        any::<bool>(),
        0..20u8,
    );
    let case = (
        prop::collection::vec(node, 1..5),
        prop::collection::vec(job.clone(), 0..40),
        prop::collection::vec(job, 1..120),
        0..6u8,
    );
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    for round in 0..rounds * gangway::testkit::harness::scale() {
        let (makes, first, burst, ends) = case.new_tree(&mut runner).unwrap().current();
        let mut nodes = Vec::new();
        for (make, partition, count) in makes {
            let (cpus, gpus, model) = [(32, 8, "a100"), (16, 4, "h100"), (64, 8, "h100")][make];
            let part = ["p0", "p1"][partition];
            for _ in 0..count {
                nodes.push(serde_json::json!({
                    "name": format!("n{}", nodes.len()), "cpus": cpus, "memory_mib": 256_000,
                    "partitions": [part],
                    "gpus": {"model": model, "count": gpus}}));
            }
        }
        let cluster = common::build::config(serde_json::json!({
            "nodes": nodes,
            "partitions": [{"name": "p0"}, {"name": "p1"}]}));
        let submit = |prefix: &str,
                      i: usize,
                      (gpus, count, strict, flags): (u64, u32, bool, u8)| {
            let gpus = match gpus {
                0 => Milli::ZERO,
                g if g < 100 => Milli::from_units(g),
                g => Milli::from_milli(g),
            };
            let mut job = JobSpec::new(format!("{prefix}{i}"), 3_600_000, count).with_gpus(gpus);
            job.groups[0].cpus = Milli::from_units(u64::from(flags % 3) + 1);
            job.partition = Some(["p0", "p1"][usize::from(flags % 2)].to_string());
            job.exclusive = flags == 7;
            if strict {
                job.groups[0].placement = gangway::PlacementMode::StrictPack;
            }
            StreamEvent::Raw(Event::Submit { job })
        };
        let mut ticks = vec![TickStep {
            at_ms: 0,
            events: first
                .into_iter()
                .enumerate()
                .map(|(i, j)| submit("w", i, j))
                .collect(),
        }];
        let mut events: Vec<StreamEvent> = (0..ends)
            .map(|pick| StreamEvent::FinishRunning {
                pick: pick * 7,
                failed: false,
            })
            .collect();
        events.extend(
            burst
                .into_iter()
                .enumerate()
                .map(|(i, j)| submit("b", i, j)),
        );
        ticks.push(TickStep {
            at_ms: 1_000,
            events,
        });
        let stream = Stream { ticks };
        // The cluster is valid and the burst starts jobs: the comparison is not vacuous.
        let mut starts = 0;
        let profile = gangway::policy::Profile::default_for_config();
        gangway::testkit::harness::run_stream_observed(&cluster, profile, &stream, |_, _, out| {
            starts += decisions::starts(&out.decisions).len();
        })
        .unwrap_or_else(|e| panic!("round {round}: {e:?}"));
        assert!(starts > 0, "round {round}: nothing started");
        common::lockstep::same_decisions(&cluster, profiles(), &stream)
            .unwrap_or_else(|e| panic!("round {round}: {e}"));
    }
}
