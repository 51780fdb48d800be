//! gangway's conservative backfill with compression (the `conservative-compress` preset)
//! against textbook count-based conservative backfill with compression (Mu'alem & Feitelson
//! 2001, `gangway_sim::textbook::conservative`, written from the paper's description), job by
//! job, on the SWF traces' machines of one-cpu nodes gathered into one node with as many cpus.
//!
//! One node, because a count is what the textbook plans with: a reservation there holds so many
//! cpus, not which ones. On the trace's one-cpu nodes gangway pins every reservation to nodes and
//! keeps the pins, and pins made at one time can leave the room a later job needs split between
//! nodes (docs/design.md, "Conservative backfill with compression"): the two then part.
//!
//! Jobs are killed at their time limit (the simulator's `kill`), as the reference kills them at
//! their estimate: a job past its limit is one of the causes that re-plan a reservation later
//! (docs/protocol.md), which the textbook does not have. The textbook is fed the job set
//! gangway's SWF reader keeps, in whole seconds, in the reader's order, which is the engine's
//! order with the preset's zero priority weights (submit time, then arrival).
//!
//! A prefix of each shared trace keeps the suite's time down (conservative planning is the
//! slowest of the modes); a missing trace skips with a note (`GANGWAY_REQUIRE_SHARED=1` makes
//! it a failure); the committed KTH fixture always runs.

use std::path::Path;

use crate::reference_starts::{assert_same_starts, first_starts, shared_trace};
use gangway_sim::textbook;
use gangway_sim::workload::{TraceNode, Workload, swf};
use gangway_sim::{Overrun, PolicyPreset};

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

/// Asserts that gangway's conservative backfill with compression starts every job of
/// `workload` (its first `window` jobs, when given) on one node when the count-based textbook
/// does on the trace's processors.
fn assert_equal_to_reference(name: &str, mut workload: Workload, window: Option<usize>) {
    if let Some(count) = window {
        workload.jobs.truncate(count);
    }
    let (processors, jobs) = textbook::jobs_of(&workload).unwrap();
    let expected = textbook::conservative(processors, &jobs);
    let got = first_starts(
        &one_node(workload.clone()),
        PolicyPreset::ConservativeCompress,
        Overrun::Kill,
    );
    assert_same_starts(name, "conservative", &workload, &expected, &got);
}

#[test]
fn the_kth_fixture_equals_count_based_conservative() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/KTH-SP2-1996-2.1-cln-first200.swf");
    let workload = swf::from_path(path, None).unwrap();
    assert_equal_to_reference("KTH first 200", workload, None);
}

#[test]
fn the_lublin_traces_equal_count_based_conservative() {
    for file in ["lublin_256.swf", "lublin_256_new2.swf"] {
        if let Some(workload) = shared_trace(file) {
            assert_equal_to_reference(file, workload, Some(2_000));
        }
    }
}

#[test]
fn the_first_2000_jobs_of_the_sp2_traces_equal_count_based_conservative() {
    for file in [
        "SDSC-SP2-1998-4.2-cln.swf.gz",
        "KTH-SP2-1996-2.1-cln.swf.gz",
        "CTC-SP2-1996-3.1-cln.swf.gz",
        "HPC2N-2002-2.2-cln.swf.gz",
    ] {
        if let Some(workload) = shared_trace(file) {
            assert_equal_to_reference(file, workload, Some(2_000));
        }
    }
}
