//! gangway's conservative backfill with compression (the `conservative-compress` preset)
//! against textbook count-based conservative backfill with compression (Mu'alem & Feitelson
//! 2001, `gangway_sim::textbook::conservative`, written from the paper's description), job by
//! job, on the SWF traces' machines of one-cpu nodes, and on those nodes gathered into one node
//! with as many cpus.
//!
//! A count is what the textbook plans with: a reservation holds so many cpus, not which ones. On
//! one node gangway's reservations are counts too. On the one-cpu nodes gangway pins every
//! reservation to nodes, and pins made at one time can leave the room a later job needs split
//! between nodes; it pins the reservations again, in start order, where they stand in the way of
//! an earlier start the count allows (docs/design.md, "Conservative backfill with compression"),
//! which on identical nodes always succeeds.
//!
//! Jobs are killed at their time limit (the simulator's `kill`), as the reference kills them at
//! their estimate: a job past its limit is one of the causes that re-plan a reservation later
//! (docs/protocol.md), which the textbook does not have. The textbook is fed the job set
//! gangway's SWF reader keeps, in whole seconds, in the reader's order, which is the engine's
//! order with the preset's zero priority weights (submit time, then arrival).
//!
//! A prefix of each shared trace keeps the suite's time down (conservative planning is the
//! slowest of the modes, and pinning again on the trace's nodes the slowest of its passes): the
//! first 1,000 jobs on the trace's nodes, 2,000 on one node; a missing trace skips with a note (`GANGWAY_REQUIRE_SHARED=1` makes
//! it a failure); the committed KTH fixture always runs.

use std::path::Path;

use crate::reference_starts::{assert_same_starts, first_starts, shared_trace};
use gangway_sim::textbook;
use gangway_sim::workload::{TraceJob, TraceNode, Workload, swf};
use gangway_sim::{Overrun, PolicyPreset};
use proptest::prelude::*;

/// `workload` with its nodes gathered into one, of their cpus and memory summed.
fn one_node(mut workload: Workload) -> Workload {
    let machine = TraceNode {
        name: "machine".to_string(),
        cpus_milli: workload.nodes.iter().map(|n| n.cpus_milli).sum(),
        memory_mib: workload.nodes.iter().map(|n| n.memory_mib).sum(),
        gpu_model: None,
        gpus: 0,
        gpu_memory_mib: 0,
    };
    workload.nodes = vec![machine];
    workload
}

/// The machine gangway runs a workload on.
#[derive(Clone, Copy, Debug)]
enum Machine {
    /// The workload's own nodes, of one cpu each.
    TraceNodes,
    /// Those nodes gathered into one ([`one_node`]).
    OneNode,
}

/// Both machines.
const MACHINES: [Machine; 2] = [Machine::TraceNodes, Machine::OneNode];

/// How many jobs of a shared trace each machine runs.
const SHARED_PREFIXES: [(Machine, usize); 2] =
    [(Machine::TraceNodes, 1_000), (Machine::OneNode, 2_000)];

/// Asserts that gangway's conservative backfill with compression, on `machine`, starts every
/// job of `workload` (its first `window` jobs, when given) when the count-based textbook does on
/// the trace's processors.
fn assert_equal_to_reference(
    name: &str,
    mut workload: Workload,
    window: Option<usize>,
    machine: Machine,
) {
    if let Some(count) = window {
        workload.jobs.truncate(count);
    }
    let (processors, jobs) = textbook::jobs_of(&workload).unwrap();
    let expected = textbook::conservative(processors, &jobs);
    let run_on = match machine {
        Machine::TraceNodes => workload.clone(),
        Machine::OneNode => one_node(workload.clone()),
    };
    let got = first_starts(&run_on, PolicyPreset::ConservativeCompress, Overrun::Kill);
    let name = format!("{name} on {machine:?}");
    assert_same_starts(&name, "conservative", &workload, &expected, &got);
}

/// A random workload on 2 to 6 one-cpu nodes: up to 30 jobs of up to every node, submitted in
/// the first 10 minutes, asking up to 5 minutes and running up to a minute more (killed at
/// their limit), in whole seconds.
fn small_workload() -> impl Strategy<Value = Workload> {
    (2u32..=6).prop_flat_map(|nodes| {
        let job = (0u64..=600, 1u64..=300, 1u64..=360, 1..=nodes);
        prop::collection::vec(job, 1..=30).prop_map(move |mut jobs| {
            jobs.sort_by_key(|j| j.0);
            let node = |i| TraceNode {
                name: format!("n{i}"),
                cpus_milli: 1000,
                memory_mib: 0,
                gpu_model: None,
                gpus: 0,
                gpu_memory_mib: 0,
            };
            let job = |(i, (submit, limit, run, tasks)): (usize, (u64, u64, u64, u32))| {
                TraceJob::one_cpu_tasks(
                    i.to_string(),
                    submit * 1000,
                    run * 1000,
                    limit * 1000,
                    tasks,
                )
            };
            Workload {
                nodes: (0..nodes).map(node).collect(),
                jobs: jobs.into_iter().enumerate().map(job).collect(),
                ..Workload::default()
            }
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    /// Small random workloads, where ties and early ends are dense: equal on one-cpu nodes and
    /// on one node.
    #[test]
    fn random_workloads_equal_count_based_conservative(workload in small_workload()) {
        for machine in MACHINES {
            assert_equal_to_reference("random workload", workload.clone(), None, machine);
        }
    }
}

#[test]
fn the_kth_fixture_equals_count_based_conservative() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/KTH-SP2-1996-2.1-cln-first200.swf");
    let workload = swf::from_path(path, None).unwrap();
    for machine in MACHINES {
        assert_equal_to_reference("KTH first 200", workload.clone(), None, machine);
    }
}

#[test]
fn the_lublin_traces_equal_count_based_conservative() {
    for file in ["lublin_256.swf", "lublin_256_new2.swf"] {
        if let Some(workload) = shared_trace(file) {
            for (machine, window) in SHARED_PREFIXES {
                assert_equal_to_reference(file, workload.clone(), Some(window), machine);
            }
        }
    }
}

#[test]
fn the_first_jobs_of_the_sp2_traces_equal_count_based_conservative() {
    for file in [
        "SDSC-SP2-1998-4.2-cln.swf.gz",
        "KTH-SP2-1996-2.1-cln.swf.gz",
        "CTC-SP2-1996-3.1-cln.swf.gz",
        "HPC2N-2002-2.2-cln.swf.gz",
    ] {
        if let Some(workload) = shared_trace(file) {
            for (machine, window) in SHARED_PREFIXES {
                assert_equal_to_reference(file, workload.clone(), Some(window), machine);
            }
        }
    }
}
