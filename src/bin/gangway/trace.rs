//! `gangway simulate --trace`: which reader a trace needs, and the options of the history
//! readers.

use std::io::Read;
use std::path::{Path, PathBuf};

use gangway::ClusterConfig;
use gangway::sim::workload::history::{HistoryOptions, UtcOffset, job_csv, sacct};
use gangway::sim::workload::{TraceFormat, Workload, alibaba, swf};

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
    let format = match options.trace_format {
        Some(format) => format,
        None => detect(path)?,
    };
    let located = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    match format {
        TraceFormat::Swf => swf::from_path(path, None).map_err(|e| located(&e)),
        TraceFormat::Alibaba => {
            let nodes = alibaba_node_list(path)?;
            alibaba::from_paths(&nodes, path).map_err(|e| e.to_string())
        }
        TraceFormat::Sacct => {
            sacct::from_path(path, &history_options(options, cluster)).map_err(|e| located(&e))
        }
        TraceFormat::Csv => {
            job_csv::from_path(path, &history_options(options, cluster)).map_err(|e| located(&e))
        }
    }
}

/// The format from the file name and its first 8 KiB.
fn detect(path: &Path) -> Result<TraceFormat, String> {
    let mut head = Vec::new();
    std::fs::File::open(path)
        .and_then(|file| file.take(8192).read_to_end(&mut head))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    TraceFormat::detect(&name, &head).ok_or_else(|| {
        format!(
            "{}: unknown trace format: expected SWF (.swf, .swf.gz), an Alibaba pod list, \
             sacct --parsable2 output or a user,submit,duration,gpus CSV; or give --trace-format",
            path.display()
        )
    })
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

/// The node list beside an Alibaba pod list: `openb_node_list_all_node.csv` (every node, as
/// the pod lists include cpu-only pods), else `openb_node_list_gpu_node.csv`.
fn alibaba_node_list(pods: &Path) -> Result<PathBuf, String> {
    let directory = pods.parent().unwrap_or(Path::new("."));
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
