//! `gangway simulate --trace`: which reader a trace needs, and the options of the history
//! readers.

use std::path::Path;

use gangway::ClusterConfig;
use gangway_sim::workload::history::{HistoryOptions, UtcOffset};
use gangway_sim::workload::{TraceFormat, Workload, read_trace};

/// The options of `--trace` besides the path.
#[derive(clap::Args)]
pub struct TraceOptions {
    /// The trace's format: swf, alibaba, sacct (Slurm `sacct --parsable2 --allocations`) or csv
    /// (`user,submit,duration,gpus[,nodes][,time_limit]`). Default: from the file name and its
    /// first line.
    #[arg(long, value_name = "FORMAT", requires = "trace", value_parser = parse_format)]
    trace_format: Option<TraceFormat>,
    /// The zone of a history's local times, as a fixed offset from UTC (`+02:00`, `-0500`,
    /// `Z`): times without a zone are taken as printed, epoch seconds and times with a zone
    /// are moved into it. Default: UTC.
    #[arg(long, value_name = "OFFSET", requires = "trace", default_value = "Z", value_parser = parse_offset)]
    utc_offset: UtcOffset,
    /// Skip a history's malformed rows and count them (as `malformed`) instead of stopping at
    /// the first with its line number.
    #[arg(long, requires = "trace")]
    skip_malformed: bool,
}

fn parse_format(text: &str) -> Result<TraceFormat, String> {
    text.parse()
}

fn parse_offset(text: &str) -> Result<UtcOffset, String> {
    text.parse()
}

/// Reads the trace at `path`. A history's machine takes its GPUs per node and partition
/// maximum from `cluster` when given (the largest GPU count of a node, the longest
/// `max_time_ms` of a partition).
pub fn load(
    path: &Path,
    options: &TraceOptions,
    cluster: Option<&ClusterConfig>,
) -> Result<Workload, String> {
    read_trace(
        path,
        options.trace_format,
        &history_options(options, cluster),
    )
}

fn history_options(options: &TraceOptions, cluster: Option<&ClusterConfig>) -> HistoryOptions {
    let defaults = HistoryOptions::default();
    let gpus_per_node = cluster
        .and_then(|c| {
            c.nodes
                .iter()
                .filter_map(|n| n.gpus.as_ref())
                .map(|g| g.count)
                .max()
        })
        .unwrap_or(defaults.gpus_per_node);
    let max_time_ms = cluster.and_then(|c| c.partitions.iter().filter_map(|p| p.max_time_ms).max());
    HistoryOptions {
        zone: options.utc_offset,
        gpus_per_node,
        max_time_ms,
        skip_malformed: options.skip_malformed,
        ..defaults
    }
}
