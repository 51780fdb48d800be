//! The simulator's tests, one module per area, in one test binary: the simulator and its
//! metrics, fault injection, the `ssh` host model, the trace and history readers and their
//! errors, the fuzz corpus, and the job-by-job equality of EASY with count-based EASY on the
//! shared SWF traces.

#[path = "../../../gangway/tests/engine/common/files.rs"]
mod files;
#[path = "../../../gangway/tests/engine/common/shared.rs"]
mod shared;

mod bad_traces;
mod conservative_reference;
mod easy_reference;
mod fuzz_corpus;
mod pictures;
mod reference_starts;
mod rlscheduler_table;
mod sim_faults;
mod simulate;
mod snapshot_streams;
mod ssh_baseline;
mod workload_readers;
