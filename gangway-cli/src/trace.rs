//! `gangway simulate --trace`: which reader a trace needs, and the options of the history
//! readers.

use std::path::Path;

use gangway::ClusterConfig;
use gangway_sim::workload::history::{HistoryOptions, UtcOffset};
use gangway_sim::workload::{
    NonPositiveRequest, QosPriority, ReaderRules, TraceFormat, Workload, read_trace,
};

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
    /// Alibaba: the base priority of each pod's `qos` class: `none` (every pod 0), `default`
    /// (Guaranteed 3, LS 2, Burstable 1, BE 0) or `CLASS=N,...` (a class not named gets 0).
    #[arg(long, value_name = "none|default|CLASS=N,...", requires = "trace", default_value = "none", value_parser = parse_qos_priority)]
    qos_priority: QosPriority,
    /// SWF: the time limit of a job whose requested time is ≤ 0 (unknown): `run-time` (its
    /// run time), a number of SECONDS, or `skip` (left out, counted as
    /// `non_positive_request`).
    #[arg(long, value_name = "run-time|SECONDS|skip", requires = "trace", default_value = "run-time", value_parser = parse_non_positive_request)]
    non_positive_request: NonPositiveRequest,
}

fn parse_qos_priority(text: &str) -> Result<QosPriority, String> {
    text.parse()
        .map_err(|e: gangway_sim::workload::ParamError| e.0)
}

fn parse_non_positive_request(text: &str) -> Result<NonPositiveRequest, String> {
    text.parse()
        .map_err(|e: gangway_sim::workload::ParamError| e.0)
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
        &ReaderRules {
            qos_priority: options.qos_priority.clone(),
            non_positive_request: options.non_positive_request,
        },
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
