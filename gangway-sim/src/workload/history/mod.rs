//! Readers of a team's own job history, to replay real usage instead of a generator:
//!
//! - [`sacct`]: Slurm accounting, as `sacct --parsable2 --allocations` prints it;
//! - [`job_csv`]: a simple CSV, `user,submit,duration,gpus[,nodes][,time_limit]`, that any team
//!   can export from its own logs or an ML platform's job list.
//!
//! Both give a [`Workload`](crate::workload::Workload) of GPU jobs; cpus and memory are not modelled (every task asks for
//! none, every node has none), only GPUs:
//!
//! - **times** are *local*: a stamp without a zone is taken as printed, in the zone of the
//!   export; a stamp with a zone and epoch seconds are moved into [`HistoryOptions::zone`]. Time
//!   0 of the workload is midnight starting the Monday of the first submit's week, so simulated
//!   time keeps the weekday and the hour of the day the team lived;
//! - a job of G GPUs on N nodes is a gang of N tasks of G/N GPUs each, placed `strict_spread`
//!   (one task, placed `pack`, when N is 1). Without N, N is the fewest nodes of at most
//!   [`HistoryOptions::gpus_per_node`] GPUs that split G evenly (12 GPUs on 8-GPU nodes: 2 × 6);
//!   a given N must divide G;
//! - a job without a time limit gets the partition maximum: [`HistoryOptions::max_time_ms`],
//!   by default the longest run time or time limit of the history rounded up to a whole hour,
//!   which is also the workload's [`max_time_ms`](crate::workload::Workload::max_time_ms);
//! - the machine is [`HistoryOptions::nodes`] nodes of [`HistoryOptions::gpus_per_node`] GPUs,
//!   by default the fewest that held every job running at once as recorded (Slurm: from each
//!   job's start to its end; CSV, which has no start: from its submit, as if no job waited, so
//!   give the real machine when replaying a CSV), and at least the widest gang;
//! - each account named becomes a [`crate::workload::TraceAccount`] with one share (equal
//!   targets); jobs are ordered by submit time, ties in file order.
//!
//! Rows that are valid but cannot be replayed are skipped and counted per
//! [`crate::workload::SkipReason`]: no GPU, more GPUs per node than a node has, a run time
//! of zero, and for Slurm job steps, jobs that never started and jobs still running. A
//! malformed row (a field that does not parse, a wrong number of fields, a repeated job id, GPUs
//! that do not split over the nodes) is a [`HistoryError::Row`] naming its line, or, with
//! [`HistoryOptions::skip_malformed`], skipped and counted as
//! [`SkipReason::Malformed`](crate::workload::SkipReason::Malformed).
//!
//! ```
//! use gangway_sim::workload::history::{job_csv, HistoryOptions};
//! let text = "user,submit,duration,gpus\n\
//!             ana,2024-03-04T09:00:00,3600,16\n\
//!             ben,2024-03-04T09:30:00,600,2\n";
//! let workload = job_csv::read(text.as_bytes(), &HistoryOptions::default()).unwrap();
//! let ana = &workload.jobs[0];
//! assert_eq!((ana.submit_ms, ana.tasks, ana.gpus_per_task_milli), (9 * 3_600_000, 2, 8_000));
//! assert_eq!(workload.nodes.len(), 3); // 18 GPUs at once on 8-GPU nodes
//! ```

pub mod job_csv;
pub mod sacct;

mod build;
mod table;
mod time;

use std::io;

pub use time::UtcOffset;

/// How a history becomes a workload: the zone of its local times, the machine, the partition
/// maximum, and what to do with malformed rows.
///
/// ```
/// use gangway_sim::workload::history::{HistoryOptions, UtcOffset};
/// let options = HistoryOptions::default();
/// assert_eq!((options.zone, options.gpus_per_node, options.nodes), (UtcOffset::UTC, 8, None));
/// assert!(!options.skip_malformed);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistoryOptions {
    /// The zone the history's local times were printed in: stamps without a zone are taken as
    /// printed, stamps with a zone and epoch seconds are moved into it. Default UTC.
    pub zone: UtcOffset,
    /// GPUs of each node (> 0). Default 8.
    pub gpus_per_node: u32,
    /// Number of nodes; `None` (default): the fewest that held the recorded peak.
    pub nodes: Option<u32>,
    /// The partition maximum, the time limit of jobs without one, in ms; `None` (default): the
    /// longest run time or time limit, rounded up to a whole hour.
    pub max_time_ms: Option<u64>,
    /// Skip and count malformed rows instead of failing on the first. Default false.
    pub skip_malformed: bool,
}

impl Default for HistoryOptions {
    fn default() -> Self {
        HistoryOptions {
            zone: UtcOffset::UTC,
            gpus_per_node: 8,
            nodes: None,
            max_time_ms: None,
            skip_malformed: false,
        }
    }
}

/// Why a history could not be read.
///
/// ```
/// use gangway_sim::workload::history::{job_csv, HistoryOptions};
/// let text = "user,submit,duration,gpus\nana,yesterday,60,1\n";
/// let err = job_csv::read(text.as_bytes(), &HistoryOptions::default()).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "line 2: column submit: \"yesterday\" is not an ISO 8601 time or epoch seconds"
/// );
/// ```
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// The file could not be opened.
    #[error("{path}: {source}")]
    Open {
        /// The path as given.
        path: String,
        /// The cause.
        source: io::Error,
    },
    /// Reading failed (an I/O error or text that is not UTF-8; the message gives the position).
    #[error("{0}")]
    Read(#[source] csv::Error),
    /// The input has no header row.
    #[error("no header row")]
    NoHeader,
    /// A required column is missing from the header row.
    #[error("no column {0}")]
    MissingColumn(&'static str),
    /// An option is out of range.
    #[error("invalid option: {0}")]
    Option(&'static str),
    /// A malformed row.
    #[error("line {line}: {problem}")]
    Row {
        /// The line (1-based; the header is line 1).
        line: u64,
        /// What is wrong with it.
        problem: RowProblem,
    },
}

/// What is wrong with a malformed row.
///
/// ```
/// use gangway_sim::workload::history::RowProblem;
/// let problem = RowProblem::UnevenGpus { gpus: 10, nodes: 4 };
/// assert_eq!(problem.to_string(), "10 GPUs do not split evenly over 4 nodes");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RowProblem {
    /// The row does not have as many fields as the header.
    #[error("expected {expected} fields, found {found}")]
    FieldCount {
        /// Fields of the header.
        expected: usize,
        /// Fields of the row.
        found: usize,
    },
    /// A field does not parse.
    #[error("column {column}: {value:?} is not {expected}")]
    Field {
        /// The column, as the format names it.
        column: &'static str,
        /// The text found.
        value: String,
        /// What it should be.
        expected: &'static str,
    },
    /// A job id already seen.
    #[error("job {id} already appears on line {first_line}")]
    DuplicateJob {
        /// The job id.
        id: String,
        /// The line it first appears on.
        first_line: u64,
    },
    /// A job's GPUs do not split evenly over its nodes (or it has 0 nodes).
    #[error("{gpus} GPUs do not split evenly over {nodes} nodes")]
    UnevenGpus {
        /// GPUs of the job.
        gpus: u32,
        /// Its nodes.
        nodes: u32,
    },
}

impl RowProblem {
    /// A field `value` of `column` that is not `expected`.
    pub(super) fn field(column: &'static str, value: &str, expected: &'static str) -> Self {
        RowProblem::Field {
            column,
            value: value.to_string(),
            expected,
        }
    }
}
