//! Textbook count-based EASY (`gangway_sim::textbook`) on an SWF trace, as a whole process, to
//! time beside `gangway simulate --trace TRACE --policy easy` (BENCHMARKS.md):
//!
//!     cargo run --release -p gangway-bench --bin textbook_easy -- TRACE.swf[.gz]
//!
//! It reads the trace with gangway's own SWF reader (the same job set), replays it and prints
//! the jobs started and the mean wait, which match the `easy` column of `gangway simulate` on
//! machines of one-cpu nodes.

use std::process::ExitCode;

use gangway_sim::textbook;
use gangway_sim::workload::swf;

fn main() -> ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: textbook_easy TRACE.swf[.gz]");
        return ExitCode::from(2);
    };
    let workload = match swf::from_path(&path, None) {
        Ok(workload) => workload,
        Err(e) => {
            eprintln!("error: {path}: {e}");
            return ExitCode::from(1);
        }
    };
    let (processors, jobs) = match textbook::jobs_of(&workload) {
        Ok(read) => read,
        Err(e) => {
            eprintln!("error: {path}: {e}");
            return ExitCode::from(1);
        }
    };
    let starts = textbook::easy(processors, &jobs);
    let waits: Vec<u64> = jobs
        .iter()
        .zip(&starts)
        .filter(|(_, start)| **start != u64::MAX)
        .map(|(job, start)| start - job.submit)
        .collect();
    let mean_h = waits.iter().sum::<u64>() as f64 / waits.len().max(1) as f64 / 3600.0;
    println!(
        "textbook EASY on {processors} processors: {} of {} jobs started, wait mean {mean_h:.2}h",
        waits.len(),
        jobs.len()
    );
    ExitCode::SUCCESS
}
