//! gangway's EASY backfill against textbook count-based EASY (Mu'alem & Feitelson 2001,
//! `gangway_sim::textbook`, written from the paper's rules), job by job, on SWF machines of
//! one-cpu nodes.
//!
//! On one-cpu nodes with single-cpu tasks a reservation that takes the nodes busy now (and free
//! by its start) before the idle ones leaves exactly count-based EASY's "extra" idle nodes to
//! backfill, so the two start every job at the same second. The textbook is fed the job set
//! gangway's SWF reader keeps (its [`Workload`]), in whole seconds, in the reader's order (by
//! job id), which is the engine's order with the `easy` preset's zero priority weights (submit
//! time, then arrival); jobs run their recorded time, past their estimate too (the simulator's
//! `allow`).
//!
//! Every trace of the shared data replayed as it is read is a machine of one-cpu nodes (MaxNodes
//! equals MaxProcs, or one header alone); the test asserts it. A missing trace skips with a note
//! (`GANGWAY_REQUIRE_SHARED=1` makes it a failure); the committed KTH fixture always runs.

use std::path::Path;

use crate::reference_starts::{assert_same_starts, first_starts, shared_trace};
use gangway_sim::textbook;
use gangway_sim::workload::{Workload, swf};
use gangway_sim::{Overrun, PolicyPreset};

/// Asserts that gangway's EASY starts every job of `workload` (its first `window` jobs, when
/// given) when count-based EASY does.
fn assert_equal_to_reference(name: &str, mut workload: Workload, window: Option<usize>) {
    if let Some(count) = window {
        workload.jobs.truncate(count);
    }
    let (processors, jobs) = textbook::jobs_of(&workload).unwrap();
    let expected = textbook::easy(processors, &jobs);
    let got = first_starts(&workload, PolicyPreset::Easy, Overrun::Allow);
    assert_same_starts(name, "EASY", &workload, &expected, &got);
}

#[test]
fn the_kth_fixture_equals_count_based_easy() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/KTH-SP2-1996-2.1-cln-first200.swf");
    let workload = swf::from_path(path, None).unwrap();
    assert_equal_to_reference("KTH first 200", workload, None);
}

#[test]
fn the_lublin_traces_equal_count_based_easy() {
    for file in ["lublin_256.swf", "lublin_256_new2.swf"] {
        if let Some(workload) = shared_trace(file) {
            assert_equal_to_reference(file, workload, None);
        }
    }
}

#[test]
fn sdsc_sp2_equals_count_based_easy() {
    if let Some(workload) = shared_trace("SDSC-SP2-1998-4.2-cln.swf.gz") {
        assert_equal_to_reference("SDSC-SP2", workload, None);
    }
}

#[test]
fn the_first_25000_jobs_of_hpc2n_equal_count_based_easy() {
    if let Some(workload) = shared_trace("HPC2N-2002-2.2-cln.swf.gz") {
        assert_equal_to_reference("HPC2N", workload, Some(25_000));
    }
}

#[test]
fn kth_sp2_equals_count_based_easy() {
    if let Some(workload) = shared_trace("KTH-SP2-1996-2.1-cln.swf.gz") {
        assert_equal_to_reference("KTH-SP2", workload, None);
    }
}

#[test]
fn ctc_sp2_equals_count_based_easy() {
    if let Some(workload) = shared_trace("CTC-SP2-1996-3.1-cln.swf.gz") {
        assert_equal_to_reference("CTC-SP2", workload, None);
    }
}
