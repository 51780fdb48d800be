//! Reader of the Alibaba GPU-sharing cluster trace of 2023 (alibaba/clusterdata
//! `cluster-trace-gpu-v2023`; Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing
//! Workloads with Fragmentation Gradient Descent", USENIX ATC 2023).
//!
//! The trace is two CSV files with a header row:
//!
//! - a **node list** `sn,cpu_milli,memory_mib,gpu,model`: each row is a node with `cpu_milli`
//!   thousandths of a cpu, `memory_mib` MiB and `gpu` GPUs of model `model` (empty when it has
//!   none). The trace gives no GPU memory, so [`TraceNode::gpu_memory_mib`] is 0;
//! - a **pod list** `name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec,qos,pod_phase,
//!   creation_time,deletion_time,scheduled_time]`: each pod becomes a one-task job named after
//!   the pod. The GPU request is either a fraction of one shared GPU (`num_gpu` 1 and `gpu_milli`
//!   in 1..1000: [`TraceJob::gpus_per_task_milli`] = `gpu_milli`) or whole GPUs (`gpu_milli` 1000:
//!   `num_gpu` × 1000), or none (both 0); every pod of the published lists is one of these.
//!   `gpu_spec` lists the allowed GPU models separated by `|` (empty: any; duplicates dropped,
//!   sorted). Times are in seconds: the job is submitted at `creation_time` and runs
//!   `deletion_time − scheduled_time`, which is also its time limit (the trace has no requested
//!   time). The trace names no users or accounts, so those stay empty. The `qos` column
//!   (`Guaranteed`, `LS`, `Burstable`, `BE`) becomes the job's base priority under
//!   [`ReaderRules::qos_priority`]: none by default (every pod 0, the replay the golden digests
//!   pin), or a mapping (`gangway simulate --qos-priority default|CLASS=N,...`).
//!
//! Pods are skipped, and counted per [`SkipReason`], when the file has no time columns or the
//! pod lacks a creation or deletion time ([`SkipReason::MissingTimes`]: all of
//! `openb_pod_list_multigpu50.csv`, which carries no times), when it was never scheduled
//! (`Pending` pods), when it ran for no time, when its GPU request is none of the three forms
//! above, or when no node can hold it. Jobs are ordered by submit time, ties in file order.
//! Columns are found by name; a missing required column, a field that is not a non-negative
//! integer, a repeated name or a malformed CSV row is an [`AlibabaError`] naming the file and line.
//!
//! ```
//! use gangway_sim::workload::{alibaba, SkipReason};
//! let nodes = "sn,cpu_milli,memory_mib,gpu,model\nn1,32000,65536,2,T4\n";
//! let pods = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,\
//!             creation_time,deletion_time,scheduled_time\n\
//!             p1,4000,8192,1,250,T4|T4,BE,Running,10,100,12\n\
//!             p2,4000,8192,2,1000,,LS,Running,5,100,5\n\
//!             p3,4000,8192,1,1000,,LS,Pending,5,9,\n";
//! let workload = alibaba::read(nodes.as_bytes(), pods.as_bytes()).unwrap();
//! assert_eq!(workload.nodes[0].gpu_model.as_deref(), Some("T4"));
//! let p2 = &workload.jobs[0];
//! assert_eq!((p2.id.as_str(), p2.gpus_per_task_milli, p2.run_ms), ("p2", 2000, 95_000));
//! let p1 = &workload.jobs[1];
//! assert_eq!((p1.submit_ms, p1.gpus_per_task_milli, p1.gpu_models.clone()), (10_000, 250, vec!["T4".to_string()]));
//! assert_eq!(workload.skipped.get(SkipReason::NeverScheduled), 1);
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;
use std::str::FromStr;

use csv::StringRecord;

use gangway::model::{MAX_DEVICES, MAX_NODE_CPUS, MAX_NODE_MEMORY_MIB};

use super::{ReaderRules, SkipCounts, SkipReason, TraceJob, TraceNode, TracePlacement, Workload};

const NODE_LIST: &str = "node list";
const POD_LIST: &str = "pod list";

/// Why an Alibaba trace could not be read.
///
/// ```
/// use gangway_sim::workload::alibaba;
/// let err = alibaba::read_nodes("sn,cpu_milli,memory_mib,gpu\n".as_bytes()).unwrap_err();
/// assert_eq!(err.to_string(), "node list: no column \"model\"");
/// ```
#[derive(Debug, thiserror::Error)]
pub enum AlibabaError {
    /// A file could not be opened.
    #[error("{path}: {source}")]
    Open {
        /// The path as given.
        path: String,
        /// The cause.
        source: io::Error,
    },
    /// The CSV is malformed or could not be read (the message gives the position).
    #[error("{file}: {source}")]
    Csv {
        /// `node list` or `pod list`.
        file: &'static str,
        /// The cause.
        source: csv::Error,
    },
    /// A required column is missing from the header row.
    #[error("{file}: no column {column:?}")]
    MissingColumn {
        /// `node list` or `pod list`.
        file: &'static str,
        /// The column.
        column: &'static str,
    },
    /// A field is not a non-negative integer (or too large).
    #[error("{file} line {line}: column {column}: {value:?} is not a non-negative integer")]
    Field {
        /// `node list` or `pod list`.
        file: &'static str,
        /// The line (1-based).
        line: u64,
        /// The column.
        column: &'static str,
        /// The text found.
        value: String,
    },
    /// A node field is above what a node may have.
    #[error("{file} line {line}: column {column}: {value} is more than the {max} a node may have")]
    TooLarge {
        /// `node list`.
        file: &'static str,
        /// The line (1-based).
        line: u64,
        /// The column.
        column: &'static str,
        /// The value found.
        value: u64,
        /// The most allowed.
        max: u64,
    },
    /// A node row has an empty name.
    #[error("{file} line {line}: column sn: empty node name")]
    EmptyName {
        /// `node list`.
        file: &'static str,
        /// The line (1-based).
        line: u64,
    },
    /// Two rows carry the same node or pod name.
    #[error("{file} line {line}: {name:?} already appears on line {first_line}")]
    DuplicateName {
        /// `node list` or `pod list`.
        file: &'static str,
        /// The line of the second occurrence.
        line: u64,
        /// The name.
        name: String,
        /// The line of the first occurrence.
        first_line: u64,
    },
}

/// Reads a node list and a pod list from files.
///
/// ```
/// use gangway_sim::workload::alibaba;
/// let err = alibaba::from_paths("no/nodes.csv", "no/pods.csv").unwrap_err();
/// assert!(err.to_string().starts_with("no/nodes.csv: "));
/// ```
pub fn from_paths(
    node_list: impl AsRef<Path>,
    pod_list: impl AsRef<Path>,
) -> Result<Workload, AlibabaError> {
    from_paths_with(node_list, pod_list, &ReaderRules::default())
}

/// [`from_paths`] under `rules` (the base priority of each QoS class).
///
/// ```
/// use gangway_sim::workload::{alibaba, ReaderRules};
/// let err = alibaba::from_paths_with("no/nodes.csv", "no/pods.csv", &ReaderRules::default());
/// assert!(err.unwrap_err().to_string().starts_with("no/nodes.csv: "));
/// ```
pub fn from_paths_with(
    node_list: impl AsRef<Path>,
    pod_list: impl AsRef<Path>,
    rules: &ReaderRules,
) -> Result<Workload, AlibabaError> {
    read_with(open(node_list.as_ref())?, open(pod_list.as_ref())?, rules)
}

fn open(path: &Path) -> Result<File, AlibabaError> {
    File::open(path).map_err(|source| AlibabaError::Open {
        path: path.display().to_string(),
        source,
    })
}

/// Reads a node list and a pod list into a workload.
///
/// ```
/// use gangway_sim::workload::{alibaba, SkipReason};
/// let nodes = "sn,cpu_milli,memory_mib,gpu,model\nn1,8000,1024,0,\n";
/// let pods = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np1,1000,10,1,1000\n";
/// let workload = alibaba::read(nodes.as_bytes(), pods.as_bytes()).unwrap();
/// assert!(workload.jobs.is_empty());
/// assert_eq!(workload.skipped.get(SkipReason::MissingTimes), 1);
/// ```
pub fn read(node_list: impl Read, pod_list: impl Read) -> Result<Workload, AlibabaError> {
    read_with(node_list, pod_list, &ReaderRules::default())
}

/// [`read`] under `rules`: each pod's base priority is its `qos` class's under
/// [`ReaderRules::qos_priority`] (0 for a pod without the column or a class the mapping does
/// not name).
///
/// ```
/// use gangway_sim::workload::{alibaba, QosPriority, ReaderRules};
/// let nodes = "sn,cpu_milli,memory_mib,gpu,model\nn1,8000,1024,1,T4\n";
/// let pods = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,qos,creation_time,deletion_time,\
///             scheduled_time\np1,1000,10,1,1000,LS,0,60,0\np2,1000,10,1,1000,BE,1,60,1\n";
/// let rules = ReaderRules { qos_priority: QosPriority::standard(), ..ReaderRules::default() };
/// let workload = alibaba::read_with(nodes.as_bytes(), pods.as_bytes(), &rules).unwrap();
/// assert_eq!((workload.jobs[0].priority, workload.jobs[1].priority), (2, 0));
/// let plain = alibaba::read(nodes.as_bytes(), pods.as_bytes()).unwrap();
/// assert_eq!(plain.jobs[0].priority, 0);
/// ```
pub fn read_with(
    node_list: impl Read,
    pod_list: impl Read,
    rules: &ReaderRules,
) -> Result<Workload, AlibabaError> {
    let nodes = read_nodes(node_list)?;
    let (jobs, skipped) = read_pods(pod_list, &nodes, rules)?;
    Ok(Workload {
        nodes,
        jobs,
        accounts: Vec::new(),
        skipped,
        max_time_ms: None,
    })
}

/// Reads a node list alone.
///
/// ```
/// use gangway_sim::workload::alibaba;
/// let nodes = alibaba::read_nodes("sn,cpu_milli,memory_mib,gpu,model\nn1,96000,393216,8,G2\n".as_bytes()).unwrap();
/// assert_eq!((nodes[0].cpus_milli, nodes[0].gpus), (96_000, 8));
/// ```
pub fn read_nodes(node_list: impl Read) -> Result<Vec<TraceNode>, AlibabaError> {
    let mut table = Table::open(
        node_list,
        NODE_LIST,
        &["sn", "cpu_milli", "memory_mib", "gpu", "model"],
    )?;
    let mut nodes = Vec::new();
    while let Some(row) = table.next_row()? {
        let model = row.text("model").unwrap_or("");
        let name = row.text("sn").unwrap_or("");
        if name.is_empty() {
            return Err(AlibabaError::EmptyName {
                file: NODE_LIST,
                line: row.line,
            });
        }
        nodes.push(TraceNode {
            name: name.to_string(),
            cpus_milli: row.bounded("cpu_milli", MAX_NODE_CPUS * 1000)?,
            memory_mib: row.bounded("memory_mib", MAX_NODE_MEMORY_MIB)?,
            gpu_model: (!model.is_empty()).then(|| model.to_string()),
            gpus: row.bounded("gpu", MAX_DEVICES as u64)? as u32,
            gpu_memory_mib: 0,
        });
    }
    Ok(nodes)
}

fn read_pods(
    pod_list: impl Read,
    nodes: &[TraceNode],
    rules: &ReaderRules,
) -> Result<(Vec<TraceJob>, SkipCounts), AlibabaError> {
    let shapes: Vec<Shape> = nodes
        .iter()
        .map(|n| Shape {
            cpus_milli: n.cpus_milli,
            memory_mib: n.memory_mib,
            gpus: n.gpus,
            model: n.gpu_model.as_deref(),
        })
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let required = ["name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"];
    let mut table = Table::open(pod_list, POD_LIST, &required)?;
    let mut jobs = Vec::new();
    let mut skipped = SkipCounts::default();
    while let Some(row) = table.next_row()? {
        match pod_job(&row, &shapes, rules)? {
            Ok(job) => jobs.push(job),
            Err(reason) => skipped.add(reason),
        }
    }
    jobs.sort_by_key(|job| job.submit_ms);
    Ok((jobs, skipped))
}

/// The job of a pod row, `Ok(Err(reason))` when it is skipped.
fn pod_job(
    row: &Row<'_>,
    shapes: &[Shape<'_>],
    rules: &ReaderRules,
) -> Result<Result<TraceJob, SkipReason>, AlibabaError> {
    let cpus_milli: u64 = row.number("cpu_milli")?;
    let memory_mib: u64 = row.number("memory_mib")?;
    let num_gpu: u32 = row.number("num_gpu")?;
    let gpu_milli: u64 = row.number("gpu_milli")?;
    let created = row.optional_seconds("creation_time")?;
    let deleted = row.optional_seconds("deletion_time")?;
    let scheduled = row.optional_seconds("scheduled_time")?;
    let (Some(submit_ms), Some(deleted_ms)) = (created, deleted) else {
        return Ok(Err(SkipReason::MissingTimes));
    };
    let Some(scheduled_ms) = scheduled else {
        return Ok(Err(SkipReason::NeverScheduled));
    };
    if deleted_ms <= scheduled_ms {
        return Ok(Err(SkipReason::NonPositiveRunTime));
    }
    let Some(gpus_milli) = gpu_request(num_gpu, gpu_milli) else {
        return Ok(Err(SkipReason::InvalidGpuRequest));
    };
    let gpu_models: Vec<String> = row
        .text("gpu_spec")
        .unwrap_or("")
        .split('|')
        .map(str::trim)
        .filter(|model| !model.is_empty())
        .map(str::to_string)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let job = TraceJob {
        id: row.text("name").unwrap_or("").to_string(),
        submit_ms,
        run_ms: deleted_ms - scheduled_ms,
        time_limit_ms: deleted_ms - scheduled_ms,
        tasks: 1,
        cpus_per_task_milli: cpus_milli,
        memory_mib_per_task: memory_mib,
        gpus_per_task_milli: gpus_milli,
        gpu_models,
        user: String::new(),
        account: String::new(),
        queue: String::new(),
        placement: TracePlacement::Pack,
        priority: rules.qos_priority.of(row.text("qos").unwrap_or("").trim()),
    };
    if !shapes.iter().any(|shape| shape.holds(&job)) {
        return Ok(Err(SkipReason::FitsNoNode));
    }
    Ok(Ok(job))
}

/// A pod's GPUs in thousandths, `None` when the request has none of the trace's forms.
fn gpu_request(num_gpu: u32, gpu_milli: u64) -> Option<u64> {
    match num_gpu {
        0 => (gpu_milli == 0).then_some(0),
        1 => (1..=1000).contains(&gpu_milli).then_some(gpu_milli),
        whole => (gpu_milli == 1000).then_some(u64::from(whole) * 1000),
    }
}

/// The capacity of a kind of node (nodes are grouped by shape to test pods quickly).
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Shape<'a> {
    cpus_milli: u64,
    memory_mib: u64,
    gpus: u32,
    model: Option<&'a str>,
}

impl Shape<'_> {
    fn holds(&self, job: &TraceJob) -> bool {
        let devices = job.gpus_per_task_milli.div_ceil(1000);
        let model_allowed = job.gpus_per_task_milli == 0
            || job.gpu_models.is_empty()
            || self
                .model
                .is_some_and(|m| job.gpu_models.iter().any(|allowed| allowed == m));
        self.cpus_milli >= job.cpus_per_task_milli
            && self.memory_mib >= job.memory_mib_per_task
            && u64::from(self.gpus) >= devices
            && model_allowed
    }
}

/// A CSV file being read: its columns found by name, each row checked for a unique first column.
struct Table<R> {
    csv: csv::Reader<R>,
    file: &'static str,
    columns: Vec<(String, usize)>,
    key: usize,
    first_line_of: BTreeMap<String, u64>,
}

impl<R: Read> Table<R> {
    /// Opens the CSV and checks that the `required` columns are present; the first is the key.
    fn open(
        reader: R,
        file: &'static str,
        required: &[&'static str],
    ) -> Result<Self, AlibabaError> {
        let mut csv = csv::ReaderBuilder::new()
            .trim(csv::Trim::All)
            .from_reader(reader);
        let headers = csv
            .headers()
            .map_err(|source| AlibabaError::Csv { file, source })?;
        let columns: Vec<(String, usize)> = headers
            .iter()
            .enumerate()
            .map(|(index, name)| (name.to_string(), index))
            .collect();
        let find = |column: &'static str| {
            columns
                .iter()
                .find(|(name, _)| name == column)
                .map(|(_, index)| *index)
                .ok_or(AlibabaError::MissingColumn { file, column })
        };
        for column in required {
            find(column)?;
        }
        let key = find(required[0])?;
        Ok(Table {
            csv,
            file,
            columns,
            key,
            first_line_of: BTreeMap::new(),
        })
    }

    fn next_row(&mut self) -> Result<Option<Row<'_>>, AlibabaError> {
        let file = self.file;
        let mut record = StringRecord::new();
        let more = self
            .csv
            .read_record(&mut record)
            .map_err(|source| AlibabaError::Csv { file, source })?;
        if !more {
            return Ok(None);
        }
        let line = record.position().map_or(0, |position| position.line());
        let name = record.get(self.key).unwrap_or("").to_string();
        if let Some(&first_line) = self.first_line_of.get(&name) {
            return Err(AlibabaError::DuplicateName {
                file,
                line,
                name,
                first_line,
            });
        }
        self.first_line_of.insert(name, line);
        Ok(Some(Row {
            record,
            line,
            table_file: file,
            columns: &self.columns,
        }))
    }
}

/// One row, with access to its fields by column name.
struct Row<'a> {
    record: StringRecord,
    line: u64,
    table_file: &'static str,
    columns: &'a [(String, usize)],
}

impl Row<'_> {
    /// The field of `column`, `None` when the file has no such column.
    fn text(&self, column: &str) -> Option<&str> {
        let (_, index) = self.columns.iter().find(|(name, _)| name == column)?;
        self.record.get(*index)
    }

    fn error(&self, column: &'static str, value: &str) -> AlibabaError {
        AlibabaError::Field {
            file: self.table_file,
            line: self.line,
            column,
            value: value.to_string(),
        }
    }

    /// The field of a required column as a non-negative integer of at most `max`.
    fn bounded(&self, column: &'static str, max: u64) -> Result<u64, AlibabaError> {
        let value: u64 = self.number(column)?;
        if value > max {
            return Err(AlibabaError::TooLarge {
                file: self.table_file,
                line: self.line,
                column,
                value,
                max,
            });
        }
        Ok(value)
    }

    /// The field of a required column as a non-negative integer.
    fn number<T: FromStr>(&self, column: &'static str) -> Result<T, AlibabaError> {
        let value = self.text(column).unwrap_or("");
        value.parse().map_err(|_| self.error(column, value))
    }

    /// A time in seconds as ms; `None` when the column is absent or the field empty.
    fn optional_seconds(&self, column: &'static str) -> Result<Option<u64>, AlibabaError> {
        match self.text(column) {
            None | Some("") => Ok(None),
            Some(value) => value
                .parse::<u64>()
                .ok()
                .and_then(|seconds| seconds.checked_mul(1000))
                .map(Some)
                .ok_or_else(|| self.error(column, value)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::QosPriority;

    const NODES: &str = "sn,cpu_milli,memory_mib,gpu,model\n\
                         a,32000,65536,2,T4\n\
                         b,96000,393216,8,G2\n\
                         c,8000,1024,0,\n";
    const HEADER: &str = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,\
                          creation_time,deletion_time,scheduled_time\n";

    fn pods(rows: &str) -> Result<Workload, AlibabaError> {
        read(NODES.as_bytes(), format!("{HEADER}{rows}").as_bytes())
    }

    #[test]
    fn nodes_keep_models_and_gpu_counts() {
        let nodes = read_nodes(NODES.as_bytes()).expect("valid");
        assert_eq!(nodes.len(), 3);
        assert_eq!(
            (
                nodes[1].name.as_str(),
                nodes[1].gpus,
                nodes[1].gpu_model.as_deref()
            ),
            ("b", 8, Some("G2"))
        );
        assert_eq!((nodes[2].gpus, nodes[2].gpu_model.as_deref()), (0, None));
    }

    #[test]
    fn gpu_requests_are_fractions_or_whole_devices() {
        assert_eq!(gpu_request(0, 0), Some(0));
        assert_eq!(gpu_request(1, 460), Some(460));
        assert_eq!(gpu_request(1, 1000), Some(1000));
        assert_eq!(gpu_request(8, 1000), Some(8000));
        assert_eq!(gpu_request(0, 500), None);
        assert_eq!(gpu_request(1, 0), None);
        assert_eq!(gpu_request(1, 1500), None);
        assert_eq!(gpu_request(2, 500), None);
    }

    #[test]
    fn skips_are_counted_per_reason() {
        let workload = pods(
            "p1,1000,10,1,1000,,LS,Running,0,100,0\n\
             p2,1000,10,1,1000,,LS,Pending,0,100,\n\
             p3,1000,10,1,1000,,LS,Running,,100,0\n\
             p4,1000,10,1,1000,,LS,Failed,0,100,100\n\
             p5,1000,10,2,500,,LS,Running,0,100,0\n\
             p6,1000,10,16,1000,,LS,Running,0,100,0\n\
             p7,1000,10,1,300,V100M32,LS,Running,0,100,0\n\
             p8,128000,10,0,0,,LS,Running,0,100,0\n\
             p9,1000,10,1,300,G2|T4,LS,Running,0,100,0\n",
        )
        .expect("valid");
        let ids: Vec<&str> = workload.jobs.iter().map(|j| j.id.as_str()).collect();
        assert_eq!(ids, ["p1", "p9"]);
        let skipped = &workload.skipped;
        assert_eq!(skipped.get(SkipReason::NeverScheduled), 1);
        assert_eq!(skipped.get(SkipReason::MissingTimes), 1);
        assert_eq!(skipped.get(SkipReason::NonPositiveRunTime), 1);
        assert_eq!(skipped.get(SkipReason::InvalidGpuRequest), 1);
        assert_eq!(skipped.get(SkipReason::FitsNoNode), 3);
        assert_eq!(workload.jobs[1].gpu_models, ["G2", "T4"]);
    }

    #[test]
    fn jobs_are_in_submit_order_ties_in_file_order() {
        let workload = pods(
            "late,1000,10,0,0,,LS,Running,50,100,60\n\
             tie1,1000,10,0,0,,LS,Running,5,100,5\n\
             tie2,1000,10,0,0,,LS,Running,5,100,7\n",
        )
        .expect("valid");
        let ids: Vec<&str> = workload.jobs.iter().map(|j| j.id.as_str()).collect();
        assert_eq!(ids, ["tie1", "tie2", "late"]);
        assert_eq!(
            (workload.jobs[2].submit_ms, workload.jobs[2].run_ms),
            (50_000, 40_000)
        );
        assert_eq!(workload.jobs[2].time_limit_ms, 40_000);
    }

    #[test]
    fn bad_fields_name_file_line_and_column() {
        let err =
            pods("p1,1000,10,1,1000,,LS,Running,0,100,0\np2,x,10,1,1000,,LS,Running,0,100,0\n")
                .unwrap_err();
        assert_eq!(
            err.to_string(),
            "pod list line 3: column cpu_milli: \"x\" is not a non-negative integer"
        );
        let err = pods("p1,1000,10,1,1000,,LS,Running,-4,100,0\n").unwrap_err();
        assert!(
            matches!(
                err,
                AlibabaError::Field {
                    line: 2,
                    column: "creation_time",
                    ..
                }
            ),
            "{err}"
        );
        let err = pods("p1,1000,10\n").unwrap_err();
        assert!(
            matches!(err, AlibabaError::Csv { file: POD_LIST, .. }),
            "{err}"
        );
        let err = read(
            NODES.as_bytes(),
            "name,cpu_milli,memory_mib,num_gpu\n".as_bytes(),
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "pod list: no column \"gpu_milli\"");
    }

    #[test]
    fn repeated_names_are_an_error() {
        let err = pods("p1,1000,10,0,0,,LS,Running,0,100,0\np1,1000,10,0,0,,LS,Running,0,100,0\n")
            .unwrap_err();
        assert!(
            matches!(
                err,
                AlibabaError::DuplicateName {
                    line: 3,
                    first_line: 2,
                    ..
                }
            ),
            "{err}"
        );
    }

    /// Issue 29, item 6: each pod's `qos` class becomes its base priority under the chosen
    /// mapping; without one (the default) every pod has priority 0, as before.
    #[test]
    fn qos_classes_map_to_the_chosen_priorities() {
        let rows = "g,1000,10,1,1000,,Guaranteed,Running,0,60,0\n\
                    l,1000,10,1,1000,,LS,Running,1,60,1\n\
                    u,1000,10,1,1000,,Burstable,Running,2,60,2\n\
                    b,1000,10,1,1000,,BE,Running,3,60,3\n\
                    x,1000,10,1,1000,,Other,Running,4,60,4\n";
        let jobs = |rules: &ReaderRules| {
            let pods = format!("{HEADER}{rows}");
            read_with(NODES.as_bytes(), pods.as_bytes(), rules)
                .unwrap()
                .jobs
        };
        let priorities = |qos_priority: QosPriority| -> Vec<(String, i32)> {
            let rules = ReaderRules {
                qos_priority,
                ..ReaderRules::default()
            };
            jobs(&rules)
                .into_iter()
                .map(|j| (j.id, j.priority))
                .collect()
        };
        let of = |pairs: [(&str, i32); 5]| -> Vec<(String, i32)> {
            pairs.iter().map(|(id, p)| (id.to_string(), *p)).collect()
        };
        assert_eq!(
            priorities(QosPriority::None),
            of([("g", 0), ("l", 0), ("u", 0), ("b", 0), ("x", 0)])
        );
        assert_eq!(pods(rows).unwrap().jobs, jobs(&ReaderRules::default()));
        assert_eq!(
            priorities(QosPriority::standard()),
            of([("g", 3), ("l", 2), ("u", 1), ("b", 0), ("x", 0)])
        );
        assert_eq!(
            priorities("BE=5,Other=-2".parse().unwrap()),
            of([("g", 0), ("l", 0), ("u", 0), ("b", 5), ("x", -2)])
        );
        // A pod list without the column: every pod 0, whatever the mapping.
        let plain = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,deletion_time,\
                     scheduled_time\np,1000,10,1,1000,0,60,0\n";
        let rules = ReaderRules {
            qos_priority: QosPriority::standard(),
            ..ReaderRules::default()
        };
        let workload = read_with(NODES.as_bytes(), plain.as_bytes(), &rules).unwrap();
        assert_eq!(workload.jobs[0].priority, 0);
    }

    #[test]
    fn a_bad_qos_mapping_is_a_typed_error_naming_it() {
        for (text, why) in [
            ("LS", "no `=`"),
            ("=3", "no class"),
            ("LS=high", "not an integer"),
            ("LS=1,LS=2", "named twice"),
        ] {
            let err = text.parse::<QosPriority>().unwrap_err();
            assert!(err.0.contains(why), "{text}: {err}");
        }
    }
}
