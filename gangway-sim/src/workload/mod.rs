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
//! the machine and accounts into a [`gangway::ClusterConfig`].
//!
//! ```
//! use gangway_sim::workload::swf;
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
mod rules;
mod skip;
pub mod swf;

pub use format::TraceFormat;
pub(crate) use record::scale_largest_remainder;
pub use record::{
    MAX_NODES, PARTITION, QUOTA_COHORT, TraceAccount, TraceJob, TraceNode, TracePlacement, Workload,
};
pub use rules::{NonPositiveRequest, QosPriority, ReaderRules};
pub use skip::{SkipCounts, SkipReason};

/// A generator's parameters are invalid; the message names the parameter and what is wrong.
///
/// ```
/// use gangway_sim::workload::lublin::LublinParams;
/// let err = LublinParams { machine_nodes: 0, ..LublinParams::default() }.generate().unwrap_err();
/// assert!(err.to_string().contains("machine_nodes"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid generator parameter: {0}")]
pub struct ParamError(pub String);

/// Reads the trace at `path` in `format`, or, without one, in the format its file name and
/// first 8 KiB show ([`TraceFormat::detect`]): SWF (`.swf`, `.swf.gz`), an Alibaba 2023 pod
/// list with its node list in the same directory (`openb_node_list_all_node.csv`, else
/// `openb_node_list_gpu_node.csv`), Slurm accounting or a job-history CSV (read with
/// `history`'s options), each with `rules` where it applies (SWF's non-positive request, an
/// Alibaba pod's QoS priority). The error is a message naming the file (what `gangway simulate
/// --trace` and the Python bindings' `simulate(trace=…)` print).
///
/// ```
/// use gangway_sim::workload::{history::HistoryOptions, read_trace};
/// use gangway_sim::workload::ReaderRules;
/// let (history, rules) = (HistoryOptions::default(), ReaderRules::default());
/// let err = read_trace("jobs.txt".as_ref(), None, &history, &rules).unwrap_err();
/// assert!(err.contains("jobs.txt"), "{err}");
/// ```
pub fn read_trace(
    path: &std::path::Path,
    format: Option<TraceFormat>,
    history: &history::HistoryOptions,
    rules: &ReaderRules,
) -> Result<Workload, String> {
    let format = match format {
        Some(format) => format,
        None => detect_format(path)?,
    };
    let located = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    match format {
        TraceFormat::Swf => swf::from_path_with(path, None, rules).map_err(|e| located(&e)),
        TraceFormat::Alibaba => {
            let nodes = alibaba_node_list(path)?;
            alibaba::from_paths_with(&nodes, path, rules).map_err(|e| e.to_string())
        }
        TraceFormat::Sacct => history::sacct::from_path(path, history).map_err(|e| located(&e)),
        TraceFormat::Csv => history::job_csv::from_path(path, history).map_err(|e| located(&e)),
    }
}

/// The format of the trace at `path`, from its file name and its first 8 KiB.
fn detect_format(path: &std::path::Path) -> Result<TraceFormat, String> {
    use std::io::Read;
    let mut head = Vec::new();
    std::fs::File::open(path)
        .and_then(|file| file.take(8192).read_to_end(&mut head))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    TraceFormat::detect(&name, &head).ok_or_else(|| {
        if TraceFormat::looks_like_fixed_width_sacct(&head) {
            return format!(
                "{}: this looks like sacct's fixed-width output, which truncates fields; export \
                 it again with `sacct --parsable2 --allocations --format=JobID,User,Account,\
                 Submit,Start,End,Timelimit,AllocTRES` (fields separated by `|`)",
                path.display()
            );
        }
        format!(
            "{}: unknown trace format: expected SWF (.swf, .swf.gz), an Alibaba pod list, \
             sacct --parsable2 output or a user,submit,duration,gpus CSV; or give --trace-format",
            path.display()
        )
    })
}

/// The node list beside an Alibaba pod list: `openb_node_list_all_node.csv` (every node, as
/// the pod lists include cpu-only pods), else `openb_node_list_gpu_node.csv`.
fn alibaba_node_list(pods: &std::path::Path) -> Result<std::path::PathBuf, String> {
    let directory = pods.parent().unwrap_or(std::path::Path::new("."));
    [
        "openb_node_list_all_node.csv",
        "openb_node_list_gpu_node.csv",
    ]
    .iter()
    .map(|name| directory.join(name))
    .find(|path| path.is_file())
    .ok_or_else(|| {
        format!(
            "{}: no node list (openb_node_list_all_node.csv or openb_node_list_gpu_node.csv) in {}",
            pods.display(),
            directory.display()
        )
    })
}
