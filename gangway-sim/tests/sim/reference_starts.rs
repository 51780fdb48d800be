//! What the job-by-job comparisons with the textbooks share (`easy_reference`,
//! `conservative_reference`): gangway's first starts on a workload, the comparison with the
//! textbook's, and the shared traces.

use std::collections::BTreeMap;

use crate::shared;
use gangway::testkit::check_tick;
use gangway_sim::workload::{Workload, swf};
use gangway_sim::{Overrun, PolicyPreset, SimOptions, Simulator, prepare};

/// gangway's `preset` on `workload` (overruns handled by `overrun`, the oracle after every
/// tick): every job's first start, in ms, in input order.
pub fn first_starts(
    workload: &Workload,
    preset: PolicyPreset,
    overrun: Overrun,
) -> Vec<Option<u64>> {
    let (cluster, jobs) = prepare(workload, None, preset, overrun);
    let simulator = Simulator::new(cluster, jobs, SimOptions::default()).unwrap();
    let result = simulator
        .run(|view| check_tick(view.scheduler, view.outcome))
        .unwrap();
    let by_id: BTreeMap<&str, Option<u64>> = result
        .jobs
        .iter()
        .map(|j| (j.id.as_str(), j.first_start_ms))
        .collect();
    workload.jobs.iter().map(|j| by_id[j.id.as_str()]).collect()
}

/// Asserts that gangway started every job of `workload` (`got`, in ms) at the second the
/// textbook `rule` did (`expected`; `u64::MAX`: never).
pub fn assert_same_starts(
    name: &str,
    rule: &str,
    workload: &Workload,
    expected: &[u64],
    got: &[Option<u64>],
) {
    let differ: Vec<String> = workload
        .jobs
        .iter()
        .zip(expected.iter().zip(got))
        .filter(|(_, (want, got))| want.checked_mul(1000) != **got)
        .map(|(job, (want, got))| format!("job {}: reference {want} s, gangway {got:?} ms", job.id))
        .collect();
    assert!(
        differ.is_empty(),
        "{name}: {} of {} jobs start otherwise than under count-based {rule}; first: {:?}",
        differ.len(),
        workload.jobs.len(),
        &differ[..differ.len().min(5)]
    );
}

/// Reads a shared trace, or `None` (skipped with a note) when it is not beside the checkout.
pub fn shared_trace(file: &str) -> Option<Workload> {
    let path = shared::path(&format!("traces/{file}"))?;
    Some(swf::from_path(path, None).unwrap())
}
