//! Fuzz entry points for the trace readers (feature `testkit`): plain functions over bytes,
//! called by the cargo-fuzz targets `swf` and `alibaba_csv` in `fuzz/` and by this crate's corpus
//! test. Each returns `Err` with a description when it finds a bug; a reader's typed error for
//! bad input is not a bug. The engine's own entry points (events, shim lines and bytes) are
//! [`gangway::testkit::fuzz`].
//!
//! ```
//! use gangway_sim::fuzz;
//! fuzz::swf(b"; MaxNodes: 4\n1 0 -1 60 1 -1 -1 1 120 -1 1 1 1 -1 1 -1 -1 -1\n").unwrap();
//! fuzz::alibaba_csv(b"not,a,csv\0\xff").unwrap();
//! ```

use gangway::Event;
use gangway::testkit::check_tick;

/// Arbitrary bytes into the SWF reader: it returns a workload or a typed error; when it
/// returns a workload, every job is valid for the machine it describes.
pub fn swf(data: &[u8]) -> Result<(), String> {
    let Ok(workload) = crate::workload::swf::read(data, None) else {
        return Ok(());
    };
    check_workload(&workload)
}

/// Arbitrary bytes into the Alibaba GPU trace reader: the node list before the first NUL byte,
/// the pod list after it (no NUL: all node list, empty pod list).
pub fn alibaba_csv(data: &[u8]) -> Result<(), String> {
    let (nodes, pods) = match data.iter().position(|&b| b == 0) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &[][..]),
    };
    let Ok(workload) = crate::workload::alibaba::read(nodes, pods) else {
        return Ok(());
    };
    check_workload(&workload)
}

/// A workload a reader accepted must give a valid cluster whose scheduler takes every job.
fn check_workload(workload: &crate::workload::Workload) -> Result<(), String> {
    use crate::{Overrun, PolicyPreset, prepare};
    let (cluster, jobs) = prepare(workload, None, PolicyPreset::Easy, Overrun::Allow);
    let mut scheduler = gangway::Scheduler::new(cluster)
        .map_err(|e| format!("a workload the reader accepted gives an invalid cluster: {e}"))?;
    let events: Vec<Event> = jobs
        .into_iter()
        .take(64)
        .map(|j| Event::Submit { job: j.spec })
        .collect();
    let outcome = scheduler
        .tick(0, events)
        .map_err(|e| format!("tick refused: {e}"))?;
    check_tick(&scheduler, &outcome)
}
