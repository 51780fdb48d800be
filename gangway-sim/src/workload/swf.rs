//! Reader of the Standard Workload Format (SWF) of the Parallel Workloads Archive (Feitelson,
//! Tsafrir, Krakov, "Experience with using the Parallel Workloads Archive", JPDC 2014).
//!
//! An SWF file has one job per line, 18 whitespace-separated numeric fields (1 job id, 2 submit
//! time s, 3 wait s, 4 run time s, 5 allocated processors, 6 average cpu time, 7 used memory,
//! 8 requested processors, 9 requested time s, 10 requested memory, 11 status, 12 user id,
//! 13 group id, 14 executable, 15 queue, 16 partition, 17 preceding job, 18 think time; −1 means
//! unknown), and header lines starting with `;`. The reader turns it into a [`Workload`]:
//!
//! - the machine is `MaxNodes` nodes of `MaxProcs / MaxNodes` cpus; with only one of the two
//!   headers, that many one-cpu nodes. Header values start with an integer and may carry a
//!   comment (`; MaxNodes: 338 (batch partition; 512 total)`); a value ≤ 0 counts as absent.
//!   [`SwfMachine`] overrides the header;
//! - processors = requested (field 8) if > 0, else allocated (field 5); a job of p processors is a
//!   gang of p one-cpu tasks placed [`TracePlacement::Spread`](super::TracePlacement::Spread), without memory or GPUs;
//! - the time limit is the requested time (field 9); when that is ≤ 0 (unknown), the run time
//!   by default, or a fixed limit, or the job is skipped ([`ReaderRules::non_positive_request`],
//!   `gangway simulate --non-positive-request`);
//! - user id `12` becomes user `u12`, group id `3` account `g3` (empty when −1);
//! - jobs with a negative submit time, a run time ≤ 0, processors ≤ 0, or more processors than
//!   the machine are skipped and counted per [`SkipReason`];
//! - jobs are ordered by submit time, ties by job id.
//!
//! Gzip input (`.swf.gz`) is recognised by its magic bytes, whatever the file name. A malformed
//! line is an [`SwfError`] naming the line, never a panic.
//!
//! ```
//! use gangway_sim::workload::{swf, SkipReason, TracePlacement};
//! let text = "; MaxNodes: 2 (comment)\n; MaxProcs: 8\n\
//!             2 10 -1 100 4 -1 -1 -1 -1 -1 1 5 1 -1 -1 -1 -1 -1\n\
//!             1 10 -1 100 -1 -1 -1 2 300 -1 1 5 -1 -1 -1 -1 -1 -1\n\
//!             3 20 -1 0 4 -1 -1 -1 -1 -1 1 5 1 -1 -1 -1 -1 -1\n";
//! let workload = swf::read(text.as_bytes(), None).unwrap();
//! assert_eq!(workload.nodes.len(), 2);
//! assert_eq!(workload.nodes[0].cpus_milli, 4000);
//! let ids: Vec<&str> = workload.jobs.iter().map(|j| j.id.as_str()).collect();
//! assert_eq!(ids, ["1", "2"]);
//! assert_eq!(workload.jobs[0].time_limit_ms, 300_000);
//! assert_eq!(workload.jobs[1].time_limit_ms, 100_000);
//! assert_eq!(workload.jobs[1].account, "g1");
//! assert_eq!(workload.jobs[0].placement, TracePlacement::Spread);
//! assert_eq!(workload.skipped.get(SkipReason::NonPositiveRunTime), 1);
//! ```

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::Path;

use flate2::bufread::MultiGzDecoder;

use super::record::cpu_nodes;
use gangway::model::MAX_NODE_CPUS;

use super::{
    MAX_NODES, NonPositiveRequest, ReaderRules, SkipCounts, SkipReason, TraceJob, Workload,
};

const FIELD_NAMES: [&str; 18] = [
    "job id",
    "submit time",
    "wait time",
    "run time",
    "allocated processors",
    "average cpu time",
    "used memory",
    "requested processors",
    "requested time",
    "requested memory",
    "status",
    "user id",
    "group id",
    "executable",
    "queue",
    "partition",
    "preceding job",
    "think time",
];

/// The fields (0-based) the reader uses; they must be integers. The others must be numbers.
const INTEGER_FIELDS: [usize; 8] = [0, 1, 3, 4, 7, 8, 11, 12];

/// An explicit machine, overriding the `MaxNodes`/`MaxProcs` header.
///
/// ```
/// use gangway_sim::workload::swf::{self, SwfMachine};
/// let text = "1 0 -1 60 16 -1 -1 -1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n";
/// let machine = SwfMachine { nodes: 2, cpus_per_node: 8 };
/// let workload = swf::read(text.as_bytes(), Some(machine)).unwrap();
/// assert_eq!(workload.nodes.len(), 2);
/// assert_eq!(workload.jobs.len(), 1);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SwfMachine {
    /// Number of nodes.
    pub nodes: u32,
    /// Cpus of each node.
    pub cpus_per_node: u32,
}

/// Why an SWF input could not be read.
///
/// ```
/// use gangway_sim::workload::swf;
/// let err = swf::read("; MaxNodes: 4\n1 0 -1 x\n".as_bytes(), None).unwrap_err();
/// assert_eq!(err.to_string(), "line 2: expected 18 fields, found 4");
/// ```
#[derive(Debug, thiserror::Error)]
pub enum SwfError {
    /// The file could not be opened.
    #[error("{path}: {source}")]
    Open {
        /// The path as given.
        path: String,
        /// The cause.
        source: io::Error,
    },
    /// Reading failed (an I/O error, bad gzip data, or text that is not UTF-8).
    #[error("line {line}: {source}")]
    Io {
        /// The line being read (1-based).
        line: u64,
        /// The cause.
        source: io::Error,
    },
    /// A job line does not have 18 fields.
    #[error("line {line}: expected 18 fields, found {found}")]
    FieldCount {
        /// The line (1-based).
        line: u64,
        /// How many fields it has.
        found: usize,
    },
    /// A field is not a number, or out of range.
    #[error("line {line}: field {field} ({name}): {value:?} {problem}")]
    Field {
        /// The line (1-based).
        line: u64,
        /// The field (1-based, as SWF numbers them).
        field: usize,
        /// The field's name.
        name: &'static str,
        /// The text found.
        value: String,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// A `MaxNodes`/`MaxProcs` header whose value does not start with an integer.
    #[error("line {line}: header {key}: {value:?} does not start with an integer")]
    Header {
        /// The line (1-based).
        line: u64,
        /// The header key.
        key: String,
        /// The value found.
        value: String,
    },
    /// Two job lines carry the same job id.
    #[error("line {line}: job {id} already appears on line {first_line}")]
    DuplicateJob {
        /// The line of the second occurrence.
        line: u64,
        /// The job id.
        id: i64,
        /// The line of the first occurrence.
        first_line: u64,
    },
    /// Neither `MaxNodes` nor `MaxProcs` is given and no [`SwfMachine`] either.
    #[error("the header gives neither MaxNodes nor MaxProcs; give the machine explicitly")]
    NoMachine,
    /// `MaxProcs` is not a multiple of `MaxNodes`.
    #[error("MaxProcs {procs} is not a multiple of MaxNodes {nodes}; give the machine explicitly")]
    UnevenMachine {
        /// `MaxNodes`.
        nodes: u64,
        /// `MaxProcs`.
        procs: u64,
    },
    /// The machine has more than [`MAX_NODES`] nodes.
    #[error("the machine has {nodes} nodes, more than the {MAX_NODES} supported")]
    TooManyNodes {
        /// The number of nodes asked for.
        nodes: u64,
    },
    /// A node would have more than [`MAX_NODE_CPUS`] cpus.
    #[error("the machine has {cpus} cpus per node, more than the {MAX_NODE_CPUS} supported")]
    TooManyCpus {
        /// The cpus per node asked for.
        cpus: u64,
    },
}

/// Reads an SWF file (plain or gzip) from a path.
///
/// ```
/// use gangway_sim::workload::swf;
/// let err = swf::from_path("no/such/file.swf", None).unwrap_err();
/// assert!(err.to_string().starts_with("no/such/file.swf: "));
/// ```
pub fn from_path(
    path: impl AsRef<Path>,
    machine: Option<SwfMachine>,
) -> Result<Workload, SwfError> {
    from_path_with(path, machine, &ReaderRules::default())
}

/// [`from_path`] under `rules` (the time limit of a job that requested none).
///
/// ```
/// use gangway_sim::workload::{swf, ReaderRules};
/// let err = swf::from_path_with("no/such/file.swf", None, &ReaderRules::default()).unwrap_err();
/// assert!(err.to_string().starts_with("no/such/file.swf: "));
/// ```
pub fn from_path_with(
    path: impl AsRef<Path>,
    machine: Option<SwfMachine>,
    rules: &ReaderRules,
) -> Result<Workload, SwfError> {
    let path = path.as_ref();
    let file = File::open(path).map_err(|source| SwfError::Open {
        path: path.display().to_string(),
        source,
    })?;
    read_with(BufReader::new(file), machine, rules)
}

/// Reads SWF text, or gzip-compressed SWF text (recognised by its magic bytes), from any
/// buffered reader. `machine` overrides the header's machine when given.
///
/// ```
/// use gangway_sim::workload::swf;
/// let workload = swf::read("; MaxProcs: 3\n".as_bytes(), None).unwrap();
/// assert_eq!(workload.nodes.len(), 3);
/// assert!(workload.jobs.is_empty());
/// ```
pub fn read(reader: impl BufRead, machine: Option<SwfMachine>) -> Result<Workload, SwfError> {
    read_with(reader, machine, &ReaderRules::default())
}

/// [`read`] under `rules`: a job whose requested time (field 9) is ≤ 0 asks for its run time
/// ([`NonPositiveRequest::RunTime`], the default), a fixed limit, or is skipped.
///
/// ```
/// use gangway_sim::workload::{swf, NonPositiveRequest, ReaderRules, SkipReason};
/// let text = "; MaxProcs: 4\n1 0 -1 60 2 -1 -1 -1 -1 -1 1 3 1 -1 -1 -1 -1 -1\n";
/// let limit = |rule| {
///     let rules = ReaderRules { non_positive_request: rule, ..ReaderRules::default() };
///     swf::read_with(text.as_bytes(), None, &rules).unwrap()
/// };
/// assert_eq!(limit(NonPositiveRequest::RunTime).jobs[0].time_limit_ms, 60_000);
/// assert_eq!(limit(NonPositiveRequest::Seconds(3600)).jobs[0].time_limit_ms, 3_600_000);
/// let skipped = limit(NonPositiveRequest::Skip);
/// assert!(skipped.jobs.is_empty());
/// assert_eq!(skipped.skipped.get(SkipReason::NonPositiveRequest), 1);
/// ```
pub fn read_with(
    mut reader: impl BufRead,
    machine: Option<SwfMachine>,
    rules: &ReaderRules,
) -> Result<Workload, SwfError> {
    let start = reader
        .fill_buf()
        .map_err(|source| SwfError::Io { line: 1, source })?;
    if start.starts_with(&[0x1f, 0x8b]) {
        read_text(BufReader::new(MultiGzDecoder::new(reader)), machine, rules)
    } else {
        read_text(reader, machine, rules)
    }
}

/// One job line, as read.
struct Record {
    line: u64,
    id: i64,
    submit_s: i64,
    run_s: i64,
    processors: i64,
    requested_s: i64,
    user: i64,
    group: i64,
}

#[derive(Default)]
struct Header {
    max_nodes: Option<u64>,
    max_procs: Option<u64>,
}

fn read_text(
    mut reader: impl BufRead,
    machine: Option<SwfMachine>,
    rules: &ReaderRules,
) -> Result<Workload, SwfError> {
    let mut header = Header::default();
    let mut records = Vec::new();
    let mut first_line_of_id = BTreeMap::new();
    let mut text = String::new();
    let mut line = 0u64;
    loop {
        text.clear();
        let read = reader.read_line(&mut text).map_err(|source| SwfError::Io {
            line: line + 1,
            source,
        })?;
        if read == 0 {
            break;
        }
        line += 1;
        let trimmed = text.trim();
        if trimmed.is_empty() {
            continue;
        }
        if let Some(comment) = trimmed.strip_prefix(';') {
            header.parse(comment, line)?;
            continue;
        }
        let record = parse_record(trimmed, line)?;
        if let Some(&first_line) = first_line_of_id.get(&record.id) {
            return Err(SwfError::DuplicateJob {
                line,
                id: record.id,
                first_line,
            });
        }
        first_line_of_id.insert(record.id, line);
        records.push(record);
    }
    let (node_count, cpus_per_node) = match machine {
        Some(m) => (u64::from(m.nodes), u64::from(m.cpus_per_node)),
        None => header.machine()?,
    };
    if node_count > MAX_NODES {
        return Err(SwfError::TooManyNodes { nodes: node_count });
    }
    if cpus_per_node > MAX_NODE_CPUS {
        return Err(SwfError::TooManyCpus {
            cpus: cpus_per_node,
        });
    }
    let width = node_count.saturating_mul(cpus_per_node);
    records.sort_by_key(|r| (r.submit_s, r.id));
    let mut skipped = SkipCounts::default();
    let mut jobs = Vec::with_capacity(records.len());
    for record in &records {
        match to_job(record, width, rules)? {
            Ok(job) => jobs.push(job),
            Err(reason) => skipped.add(reason),
        }
    }
    Ok(Workload {
        nodes: cpu_nodes(node_count, cpus_per_node),
        jobs,
        accounts: Vec::new(),
        skipped,
        max_time_ms: None,
    })
}

impl Header {
    fn parse(&mut self, comment: &str, line: u64) -> Result<(), SwfError> {
        let Some((key, value)) = comment.split_once(':') else {
            return Ok(());
        };
        let key = key.trim();
        let slot = match key {
            "MaxNodes" => &mut self.max_nodes,
            "MaxProcs" => &mut self.max_procs,
            _ => return Ok(()),
        };
        let value = value.trim();
        let sign = usize::from(value.starts_with('-'));
        let digits = value[sign..].bytes().take_while(u8::is_ascii_digit).count();
        let number: i64 = value[..sign + digits]
            .parse()
            .map_err(|_| SwfError::Header {
                line,
                key: key.to_string(),
                value: value.to_string(),
            })?;
        *slot = u64::try_from(number).ok().filter(|&n| n > 0);
        Ok(())
    }

    /// (nodes, cpus per node) from the header.
    fn machine(&self) -> Result<(u64, u64), SwfError> {
        match (self.max_nodes, self.max_procs) {
            (Some(nodes), Some(procs)) if procs % nodes == 0 => Ok((nodes, procs / nodes)),
            (Some(nodes), Some(procs)) => Err(SwfError::UnevenMachine { nodes, procs }),
            (Some(count), None) | (None, Some(count)) => Ok((count, 1)),
            (None, None) => Err(SwfError::NoMachine),
        }
    }
}

fn parse_record(text: &str, line: u64) -> Result<Record, SwfError> {
    let mut fields = [""; 18];
    let mut found = 0;
    for field in text.split_ascii_whitespace() {
        if let Some(slot) = fields.get_mut(found) {
            *slot = field;
        }
        found += 1;
    }
    if found != FIELD_NAMES.len() {
        return Err(SwfError::FieldCount { line, found });
    }
    let mut integers = [0i64; 18];
    for (index, field) in fields.iter().enumerate() {
        // Most fields of every kind are integers: parsing one as a float only when it is not.
        let integer = field.parse::<i64>();
        let problem = match integer {
            Ok(value) => {
                integers[index] = value;
                None
            }
            Err(_) if INTEGER_FIELDS.contains(&index) => Some("is not an integer"),
            Err(_) => field.parse::<f64>().err().map(|_| "is not a number"),
        };
        if let Some(problem) = problem {
            return Err(SwfError::Field {
                line,
                field: index + 1,
                name: FIELD_NAMES[index],
                value: (*field).to_string(),
                problem,
            });
        }
    }
    let requested = integers[7];
    Ok(Record {
        line,
        id: integers[0],
        submit_s: integers[1],
        run_s: integers[3],
        processors: if requested > 0 {
            requested
        } else {
            integers[4]
        },
        requested_s: integers[8],
        user: integers[11],
        group: integers[12],
    })
}

/// The job of a record, `Ok(Err(reason))` when it is skipped.
fn to_job(
    record: &Record,
    width: u64,
    rules: &ReaderRules,
) -> Result<Result<TraceJob, SkipReason>, SwfError> {
    if record.submit_s < 0 {
        return Ok(Err(SkipReason::UnknownSubmitTime));
    }
    if record.run_s <= 0 {
        return Ok(Err(SkipReason::NonPositiveRunTime));
    }
    if record.processors <= 0 {
        return Ok(Err(SkipReason::NonPositiveProcessors));
    }
    let Some(tasks) = u32::try_from(record.processors)
        .ok()
        .filter(|&p| u64::from(p) <= width)
    else {
        return Ok(Err(SkipReason::WiderThanMachine));
    };
    let run_ms = seconds_to_ms(record.run_s, record.line, 4)?;
    let time_limit_ms = if record.requested_s > 0 {
        seconds_to_ms(record.requested_s, record.line, 9)?
    } else {
        match rules.non_positive_request {
            NonPositiveRequest::RunTime => run_ms,
            NonPositiveRequest::Seconds(seconds) => seconds.saturating_mul(1000),
            NonPositiveRequest::Skip => return Ok(Err(SkipReason::NonPositiveRequest)),
        }
    };
    let submit_ms = seconds_to_ms(record.submit_s, record.line, 2)?;
    let id = record.id.to_string();
    Ok(Ok(TraceJob {
        user: label('u', record.user),
        account: label('g', record.group),
        ..TraceJob::one_cpu_tasks(id, submit_ms, run_ms, time_limit_ms, tasks)
    }))
}

/// `seconds` (≥ 0) in ms; an error naming field `field` (1-based) when that overflows.
fn seconds_to_ms(seconds: i64, line: u64, field: usize) -> Result<u64, SwfError> {
    u64::try_from(seconds)
        .ok()
        .and_then(|s| s.checked_mul(1000))
        .ok_or_else(|| SwfError::Field {
            line,
            field,
            name: FIELD_NAMES[field - 1],
            value: seconds.to_string(),
            problem: "is out of range",
        })
}

/// `prefix` and the digits of `id` (`u6`, `g15`), or nothing for an unknown (negative) id: a
/// label per user and group of every job, written digit by digit (the formatting machinery
/// cost a replay of HPC2N's 202,871 jobs some 300 M instructions).
fn label(prefix: char, id: i64) -> String {
    let Ok(mut rest) = u64::try_from(id) else {
        return String::new();
    };
    let mut digits = [0u8; 20];
    let mut from = digits.len();
    loop {
        from -= 1;
        digits[from] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    let mut label = String::with_capacity(prefix.len_utf8() + digits.len() - from);
    label.push(prefix);
    label.extend(digits[from..].iter().map(|&digit| char::from(digit)));
    label
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    /// A label is the prefix and the id's decimal digits, every width of id alike; an unknown id
    /// has none.
    #[test]
    fn a_label_is_the_prefix_and_the_decimal_id() {
        let mut id: i64 = 0;
        while id < i64::MAX / 7 {
            assert_eq!(super::label('u', id), format!("u{id}"));
            assert_eq!(super::label('g', id + 9), format!("g{}", id + 9));
            id = id * 7 + 3;
        }
        assert_eq!(super::label('g', i64::MAX), format!("g{}", i64::MAX));
        assert_eq!(super::label('u', -1), "");
    }

    use flate2::Compression;
    use flate2::write::GzEncoder;

    use super::*;

    fn job_line(id: i64, submit: i64, run: i64, alloc: i64, req: i64, req_time: i64) -> String {
        format!("{id} {submit} -1 {run} {alloc} 1.5 -1 {req} {req_time} -1 1 4 2 -1 -1 -1 -1 -1\n")
    }

    #[test]
    fn header_values_may_carry_comments() {
        let text = "; Version: 2\n; MaxNodes: 338 (batch partition; 512 total)\n; MaxProcs: 676\n";
        let workload = read(text.as_bytes(), None).expect("valid header");
        assert_eq!(workload.nodes.len(), 338);
        assert!(workload.nodes.iter().all(|n| n.cpus_milli == 2000));
    }

    #[test]
    fn one_header_alone_gives_one_cpu_nodes() {
        let nodes = read("; MaxNodes: 5\n".as_bytes(), None)
            .expect("valid")
            .nodes;
        assert_eq!((nodes.len(), nodes[0].cpus_milli), (5, 1000));
        let nodes = read(";MaxProcs:7\n".as_bytes(), None).expect("valid").nodes;
        assert_eq!((nodes.len(), nodes[0].cpus_milli), (7, 1000));
    }

    #[test]
    fn unknown_header_value_counts_as_absent() {
        let text = "; MaxNodes: -1\n; MaxProcs: 4\n";
        assert_eq!(read(text.as_bytes(), None).expect("valid").nodes.len(), 4);
    }

    #[test]
    fn bad_header_value_is_an_error_with_its_line() {
        let err = read("; Note: x\n; MaxProcs: many\n".as_bytes(), None).unwrap_err();
        assert!(matches!(err, SwfError::Header { line: 2, .. }), "{err}");
        assert_eq!(
            err.to_string(),
            "line 2: header MaxProcs: \"many\" does not start with an integer"
        );
    }

    #[test]
    fn missing_or_uneven_machine_is_an_error() {
        let err = read(job_line(1, 0, 5, 1, -1, -1).as_bytes(), None).unwrap_err();
        assert!(matches!(err, SwfError::NoMachine));
        let err = read("; MaxNodes: 3\n; MaxProcs: 8\n".as_bytes(), None).unwrap_err();
        assert!(matches!(
            err,
            SwfError::UnevenMachine { nodes: 3, procs: 8 }
        ));
        let err = read("; MaxNodes: 99999999999\n".as_bytes(), None).unwrap_err();
        assert!(matches!(err, SwfError::TooManyNodes { .. }));
    }

    #[test]
    fn malformed_lines_are_errors_with_line_numbers() {
        let bad_int = format!(
            "; MaxNodes: 4\n{}\n1 0 -1 6.5 1 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n",
            ""
        );
        let err = read(bad_int.as_bytes(), None).unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 3: field 4 (run time): \"6.5\" is not an integer"
        );
        let bad_num = "; MaxNodes: 4\n1 0 -1 6 1 abc -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n";
        let err = read(bad_num.as_bytes(), None).unwrap_err();
        assert!(
            matches!(
                err,
                SwfError::Field {
                    line: 2,
                    field: 6,
                    ..
                }
            ),
            "{err}"
        );
        let short = "; MaxNodes: 4\n1 0 -1 6 1\n";
        assert!(matches!(
            read(short.as_bytes(), None),
            Err(SwfError::FieldCount { line: 2, found: 5 })
        ));
        let huge =
            "; MaxNodes: 4\n1 99999999999999999 -1 6 1 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n";
        let err = read(huge.as_bytes(), None).unwrap_err();
        assert!(matches!(
            err,
            SwfError::Field {
                line: 2,
                field: 2,
                problem: "is out of range",
                ..
            }
        ));
    }

    #[test]
    fn invalid_utf8_is_an_error_not_a_panic() {
        let err = read(&b"; MaxNodes: 4\n\xff\xfe\n"[..], None).unwrap_err();
        assert!(matches!(err, SwfError::Io { line: 2, .. }), "{err}");
    }

    #[test]
    fn duplicate_job_ids_are_an_error() {
        let text = format!(
            "; MaxNodes: 4\n{}{}",
            job_line(3, 0, 5, 1, -1, -1),
            job_line(3, 9, 5, 1, -1, -1)
        );
        let err = read(text.as_bytes(), None).unwrap_err();
        assert!(matches!(
            err,
            SwfError::DuplicateJob {
                line: 3,
                id: 3,
                first_line: 2
            }
        ));
    }

    #[test]
    fn processors_requested_first_then_allocated() {
        let text = format!(
            "; MaxNodes: 64\n{}{}",
            job_line(1, 0, 5, 16, 8, -1),
            job_line(2, 0, 5, 16, -1, -1)
        );
        let jobs = read(text.as_bytes(), None).expect("valid").jobs;
        assert_eq!((jobs[0].tasks, jobs[1].tasks), (8, 16));
    }

    #[test]
    fn skips_are_counted_per_reason() {
        let text = format!(
            "; MaxNodes: 8\n{}{}{}{}{}{}",
            job_line(1, 0, 0, 2, -1, -1),
            job_line(2, 0, 5, 0, -1, -1),
            job_line(3, 0, 5, 9, -1, -1),
            job_line(4, -1, 5, 2, -1, -1),
            job_line(5, 0, -1, -1, -1, -1),
            job_line(6, 0, 5, 8, -1, -1),
        );
        let workload = read(text.as_bytes(), None).expect("valid");
        assert_eq!(workload.jobs.len(), 1);
        assert_eq!(workload.skipped.get(SkipReason::NonPositiveRunTime), 2);
        assert_eq!(workload.skipped.get(SkipReason::NonPositiveProcessors), 1);
        assert_eq!(workload.skipped.get(SkipReason::WiderThanMachine), 1);
        assert_eq!(workload.skipped.get(SkipReason::UnknownSubmitTime), 1);
    }

    #[test]
    fn jobs_are_in_submit_order_ties_by_id_with_converted_fields() {
        let text = format!(
            "; MaxNodes: 8\n{}{}{}",
            job_line(10, 50, 5, 1, -1, 20),
            job_line(9, 50, 5, 1, -1, 0),
            job_line(11, 40, 7, 1, -1, -1),
        );
        let jobs = read(text.as_bytes(), None).expect("valid").jobs;
        let ids: Vec<&str> = jobs.iter().map(|j| j.id.as_str()).collect();
        assert_eq!(ids, ["11", "9", "10"]);
        assert_eq!(
            (jobs[0].submit_ms, jobs[0].run_ms, jobs[0].time_limit_ms),
            (40_000, 7_000, 7_000)
        );
        assert_eq!(jobs[1].time_limit_ms, 5_000);
        assert_eq!(jobs[2].time_limit_ms, 20_000);
        assert_eq!(
            (jobs[0].user.as_str(), jobs[0].account.as_str()),
            ("u4", "g2")
        );
        assert_eq!(jobs[0].cpus_per_task_milli, 1000);
    }

    #[test]
    fn gzip_is_detected_by_magic_bytes() {
        let text = format!("; MaxProcs: 16\n{}", job_line(1, 0, 5, 4, -1, -1));
        let mut encoder = GzEncoder::new(Vec::new(), Compression::fast());
        encoder.write_all(text.as_bytes()).expect("in memory");
        let compressed = encoder.finish().expect("in memory");
        assert_eq!(&compressed[..2], &[0x1f, 0x8b]);
        let workload = read(&compressed[..], None).expect("valid gzip");
        assert_eq!((workload.nodes.len(), workload.jobs.len()), (16, 1));
        let err = read(&compressed[..compressed.len() / 2], None).unwrap_err();
        assert!(matches!(err, SwfError::Io { .. }), "{err}");
    }

    /// Issue 29, item 6: a job that requested no time (SDSC SP2 has `-1`) asks for its run
    /// time by default, a fixed limit, or is left out and counted; a job that requested time
    /// keeps it under every rule.
    #[test]
    fn a_non_positive_request_follows_the_rule() {
        let text = format!(
            "; MaxProcs: 8\n{}{}{}",
            job_line(1, 0, 60, 2, 2, -1),
            job_line(2, 5, 60, 2, 2, 0),
            job_line(3, 9, 60, 2, 2, 600)
        );
        let read = |rule: NonPositiveRequest| {
            let rules = ReaderRules {
                non_positive_request: rule,
                ..ReaderRules::default()
            };
            read_with(text.as_bytes(), None, &rules).unwrap()
        };
        let limits = |workload: &Workload| -> Vec<(String, u64)> {
            workload
                .jobs
                .iter()
                .map(|j| (j.id.clone(), j.time_limit_ms))
                .collect()
        };
        let run_time = read(NonPositiveRequest::RunTime);
        assert_eq!(
            limits(&run_time),
            [
                ("1".into(), 60_000),
                ("2".into(), 60_000),
                ("3".into(), 600_000)
            ]
        );
        assert_eq!(run_time, read(NonPositiveRequest::default()));
        assert_eq!(run_time, super::read(text.as_bytes(), None).unwrap());
        let fixed = read(NonPositiveRequest::Seconds(3600));
        assert_eq!(
            limits(&fixed),
            [
                ("1".into(), 3_600_000),
                ("2".into(), 3_600_000),
                ("3".into(), 600_000)
            ]
        );
        let skip = read(NonPositiveRequest::Skip);
        assert_eq!(limits(&skip), [("3".into(), 600_000)]);
        assert_eq!(skip.skipped.get(SkipReason::NonPositiveRequest), 2);
        assert_eq!(skip.skipped.total(), 2);
        // A job skipped for an earlier reason is counted under that one only.
        let gone = format!("; MaxProcs: 8\n{}", job_line(4, 0, 0, 2, 2, -1));
        let rules = ReaderRules {
            non_positive_request: NonPositiveRequest::Skip,
            ..ReaderRules::default()
        };
        let workload = read_with(gone.as_bytes(), None, &rules).unwrap();
        assert_eq!(workload.skipped.get(SkipReason::NonPositiveRunTime), 1);
        assert_eq!(workload.skipped.get(SkipReason::NonPositiveRequest), 0);
    }
}
