//! Workloads for the simulator: readers of real traces and seeded generators, all producing one
//! neutral [`Workload`] (nodes, jobs in submit order, accounts, skipped-record counts).
//!
//! - [`swf`]: the Standard Workload Format of the Parallel Workloads Archive (`.swf`, `.swf.gz`);
//! - [`alibaba`]: the Alibaba GPU-sharing cluster trace of 2023 (node and pod CSV lists);
//! - [`history`]: a team's own job history, Slurm accounting (`sacct --parsable2`) or a simple
//!   CSV (`user,submit,duration,gpus[,nodes][,time_limit]`);
//! - [`lublin`]: the Lublin–Feitelson (2003) model of rigid parallel jobs;
//! - [`gpu_ml`]: a GPU machine-learning workload of teams with shares and quotas, with
//!   log-normal or heavy-tailed (Pareto) run times.
//!
//! The records are independent of the scheduler's job type; [`Workload::cluster_config`] turns
//! the machine and accounts into a [`crate::ClusterConfig`].
//!
//! ```
//! use gangway::sim::workload::swf;
//! let text = "; MaxNodes: 4\n1 0 -1 60 2 -1 -1 -1 120 -1 1 3 1 -1 -1 -1 -1 -1\n";
//! let workload = swf::read(text.as_bytes(), None).unwrap();
//! assert_eq!(workload.jobs[0].tasks, 2);
//! assert_eq!(workload.cluster_config().nodes.len(), 4);
//! ```

pub mod alibaba;
pub(crate) mod dist;
mod format;
pub mod gpu_ml;
pub mod history;
pub mod lublin;
mod record;
mod skip;
pub mod swf;

pub use format::TraceFormat;
pub use record::{
    MAX_NODES, PARTITION, QUOTA_COHORT, TraceAccount, TraceJob, TraceNode, TracePlacement, Workload,
};
pub use skip::{SkipCounts, SkipReason};

/// A generator's parameters are invalid; the message names the parameter and what is wrong.
///
/// ```
/// use gangway::sim::workload::lublin::LublinParams;
/// let err = LublinParams { machine_nodes: 0, ..LublinParams::default() }.generate().unwrap_err();
/// assert!(err.to_string().contains("machine_nodes"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid generator parameter: {0}")]
pub struct ParamError(pub String);
