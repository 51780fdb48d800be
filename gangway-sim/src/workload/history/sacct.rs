//! Reader of Slurm accounting as `sacct --parsable2 --allocations` prints it: `|`-separated
//! fields, a header row, one job allocation per row. For example:
//!
//! ```text
//! sacct --allocations --parsable2 --starttime 2024-03-01 --endtime 2024-04-01 --allusers \
//!   --format JobID,User,Account,Submit,Start,End,Timelimit,AllocTRES,ReqTRES > history.sacct
//! ```
//!
//! Columns are found by name (case ignored, in any order, others ignored): `JobID`, `User`,
//! `Account`, `Submit`, `Start`, `End`, `Timelimit`, and `AllocTRES` or `ReqTRES` (both may be
//! given: `AllocTRES` is used when it is not empty).
//!
//! - `JobID` is the job's id: an array task `123_4` and a heterogeneous component `123+1` are
//!   jobs of their own; a job step (`123.batch`, `123.0`, any id with a `.`) is skipped and
//!   counted ([`SkipReason::JobStep`]);
//! - `Submit`, `Start` and `End` are ISO 8601 stamps as `sacct` prints them, in the local time
//!   of the export (`2024-03-04T09:15:02`); see [`HistoryOptions::zone`]. A `Start` of `Unknown`
//!   or `None` skips the job as never started ([`SkipReason::NeverStarted`]); an `End` of
//!   `Unknown` (still running) as [`SkipReason::StillRunning`]. The run time is `End − Start`;
//! - `Timelimit` is `[D-]HH:MM:SS` (or any form `sbatch --time` reads: `MM`, `MM:SS`, `D-HH`,
//!   `D-HH:MM`); `UNLIMITED`, `Partition_Limit` or empty: the partition maximum;
//! - the TRES list (`billing=16,cpu=16,gres/gpu=4,mem=64G,node=2`) gives the GPUs, `gres/gpu`
//!   (or, without it, the sum of the typed counts `gres/gpu:a100=4`), and the nodes, `node`.
//!   Without a GPU count the job used none ([`SkipReason::NoGpus`]). cpus and memory are
//!   ignored.
//!
//! See [the module above](super) for how times, gangs, the machine and malformed rows are
//! treated.
//!
//! ```
//! use gangway_sim::workload::history::{sacct, HistoryOptions};
//! use gangway_sim::workload::SkipReason;
//! let text = "JobID|User|Account|Submit|Start|End|Timelimit|AllocTRES\n\
//!             101|u01|vision|2024-03-04T09:00:00|2024-03-04T09:05:00|2024-03-04T11:05:00|04:00:00|cpu=16,gres/gpu=16,node=2\n\
//!             101.batch|||2024-03-04T09:05:00|2024-03-04T09:05:00|2024-03-04T11:05:00||cpu=8,gres/gpu=8,node=1\n\
//!             102_3|u02|nlp|2024-03-04T10:00:00|2024-03-04T10:00:00|Unknown|1-00:00:00|gres/gpu:a100=2,node=1\n";
//! let workload = sacct::read(text.as_bytes(), &HistoryOptions::default()).unwrap();
//! let job = &workload.jobs[0];
//! assert_eq!((job.id.as_str(), job.user.as_str(), job.account.as_str()), ("101", "u01", "vision"));
//! assert_eq!((job.submit_ms, job.run_ms, job.time_limit_ms), (9 * 3_600_000, 7_200_000, 14_400_000));
//! assert_eq!((job.tasks, job.gpus_per_task_milli), (2, 8_000));
//! assert_eq!(workload.skipped.get(SkipReason::JobStep), 1);
//! assert_eq!(workload.skipped.get(SkipReason::StillRunning), 1);
//! ```
//!
//! [`SkipReason::JobStep`]: crate::workload::SkipReason::JobStep
//! [`SkipReason::NeverStarted`]: crate::workload::SkipReason::NeverStarted
//! [`SkipReason::StillRunning`]: crate::workload::SkipReason::StillRunning
//! [`SkipReason::NoGpus`]: crate::workload::SkipReason::NoGpus

use std::io::{BufReader, Read};
use std::path::Path;

use csv::StringRecord;

use super::build::HistoryRow;
use super::table::{Collector, Parsed, Table, open, read_all};
use super::time::{iso_local_seconds, slurm_duration_seconds};
use super::{HistoryError, HistoryOptions, RowProblem, UtcOffset};
use crate::workload::{SkipReason, Workload};

/// Reads a `sacct --parsable2` file.
///
/// ```
/// use gangway_sim::workload::history::{sacct, HistoryOptions};
/// let err = sacct::from_path("no/such.sacct", &HistoryOptions::default()).unwrap_err();
/// assert!(err.to_string().starts_with("no/such.sacct: "));
/// ```
pub fn from_path(
    path: impl AsRef<Path>,
    options: &HistoryOptions,
) -> Result<Workload, HistoryError> {
    read(BufReader::new(open(path.as_ref())?), options)
}

/// Reads `sacct --parsable2` output.
///
/// ```
/// use gangway_sim::workload::history::{sacct, HistoryOptions};
/// let text = "JobID|User|Account|Submit|Start|End|Timelimit\n";
/// let err = sacct::read(text.as_bytes(), &HistoryOptions::default()).unwrap_err();
/// assert_eq!(err.to_string(), "no column AllocTRES or ReqTRES");
/// ```
pub fn read(reader: impl Read, options: &HistoryOptions) -> Result<Workload, HistoryError> {
    let text = read_all(reader)?;
    let mut table = Table::open(&text, b'|', false)?;
    let columns = Columns {
        job_id: table.required("JobID")?,
        user: table.required("User")?,
        account: table.required("Account")?,
        submit: table.required("Submit")?,
        start: table.required("Start")?,
        end: table.required("End")?,
        time_limit: table.required("Timelimit")?,
        alloc_tres: table.column("AllocTRES"),
        req_tres: table.column("ReqTRES"),
    };
    if columns.alloc_tres.is_none() && columns.req_tres.is_none() {
        return Err(HistoryError::MissingColumn("AllocTRES or ReqTRES"));
    }
    let mut collector = Collector::new(options)?;
    while let Some((line, record)) = table.next_row()? {
        let parsed = record.and_then(|record| columns.row(line, &record, options.zone));
        collector.add(line, parsed)?;
    }
    Ok(collector.finish())
}

/// Where each column is.
struct Columns {
    job_id: usize,
    user: usize,
    account: usize,
    submit: usize,
    start: usize,
    end: usize,
    time_limit: usize,
    alloc_tres: Option<usize>,
    req_tres: Option<usize>,
}

/// `sacct`'s words for a time it does not know.
fn unknown(text: &str) -> bool {
    matches!(text, "Unknown" | "None" | "")
}

impl Columns {
    fn row(&self, line: u64, record: &StringRecord, zone: UtcOffset) -> Parsed {
        let field = |index: usize| record.get(index).unwrap_or("");
        let time = |column: &'static str, index: usize| {
            let text = field(index);
            iso_local_seconds(text, zone)
                .ok_or_else(|| RowProblem::field(column, text, "an ISO 8601 time"))
        };
        let id = field(self.job_id);
        if id.is_empty() {
            return Err(RowProblem::field("JobID", id, "a job id"));
        }
        if id.contains('.') {
            return Ok(Err(SkipReason::JobStep));
        }
        let submit_s = time("Submit", self.submit)?;
        if unknown(field(self.start)) {
            return Ok(Err(SkipReason::NeverStarted));
        }
        let start_s = time("Start", self.start)?;
        if field(self.end) == "Unknown" {
            return Ok(Err(SkipReason::StillRunning));
        }
        let end_s = time("End", self.end)?;
        let limit = field(self.time_limit);
        let time_limit_s = match limit {
            "UNLIMITED" | "Partition_Limit" | "" => None,
            _ => Some(
                slurm_duration_seconds(limit)
                    .filter(|&s| s > 0)
                    .ok_or_else(|| RowProblem::field("Timelimit", limit, "a Slurm time limit"))?,
            ),
        };
        let (column, tres) = [("AllocTRES", self.alloc_tres), ("ReqTRES", self.req_tres)]
            .into_iter()
            .filter_map(|(column, index)| Some((column, field(index?))))
            .find(|(_, text)| !text.is_empty())
            .unwrap_or(("AllocTRES", ""));
        let tres = Tres::parse(tres)
            .ok_or_else(|| RowProblem::field(column, tres, "a TRES list (key=count,…)"))?;
        Ok(Ok(HistoryRow {
            line,
            id: id.to_string(),
            user: field(self.user).to_string(),
            account: field(self.account).to_string(),
            submit_s,
            start_s: Some(start_s),
            run_s: u64::try_from(end_s - start_s).unwrap_or(0),
            time_limit_s,
            gpus: tres.gpus,
            nodes: tres.nodes,
        }))
    }
}

/// What a TRES list says of GPUs and nodes.
#[derive(Debug, PartialEq, Eq)]
struct Tres {
    gpus: u32,
    nodes: Option<u32>,
}

impl Tres {
    /// `key=value,…`; `None` when an entry has no `=` or a GPU or node count is not a number.
    /// Other keys' values (`mem=64G`) are not read.
    fn parse(text: &str) -> Option<Tres> {
        let mut total = None;
        let mut typed = 0u32;
        let mut nodes = None;
        for entry in text.split(',').filter(|entry| !entry.is_empty()) {
            let (key, value) = entry.split_once('=')?;
            let count = || value.parse::<u32>().ok();
            if key == "gres/gpu" {
                total = Some(count()?);
            } else if key.starts_with("gres/gpu:") {
                typed = typed.checked_add(count()?)?;
            } else if key == "node" {
                nodes = Some(count()?).filter(|&n| n > 0);
            }
        }
        Some(Tres {
            gpus: total.unwrap_or(typed),
            nodes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "JobID|User|Account|Submit|Start|End|Timelimit|ReqTRES|AllocTRES\n";

    fn read_rows(rows: &str, skip_malformed: bool) -> Result<Workload, HistoryError> {
        let options = HistoryOptions {
            skip_malformed,
            ..HistoryOptions::default()
        };
        read(format!("{HEADER}{rows}").as_bytes(), &options)
    }

    #[test]
    fn tres_lists_give_gpus_and_nodes() {
        let parse = |text| Tres::parse(text);
        assert_eq!(
            parse("billing=16,cpu=16,gres/gpu=4,mem=64G,node=2"),
            Some(Tres {
                gpus: 4,
                nodes: Some(2)
            })
        );
        assert_eq!(
            parse("gres/gpu:a100=2,gres/gpu:v100=1,node=1"),
            Some(Tres {
                gpus: 3,
                nodes: Some(1)
            })
        );
        assert_eq!(
            parse("gres/gpu=4,gres/gpu:a100=4"),
            Some(Tres {
                gpus: 4,
                nodes: None
            })
        );
        assert_eq!(
            parse(""),
            Some(Tres {
                gpus: 0,
                nodes: None
            })
        );
        assert_eq!(parse("cpu=4,gres/gpu=x"), None);
        assert_eq!(parse("cpu"), None);
    }

    #[test]
    fn unstarted_running_and_cpu_only_jobs_are_skipped_and_counted() {
        let workload = read_rows(
            "1|a|x|2024-03-04T09:00:00|Unknown|Unknown|01:00:00|gres/gpu=1|\n\
             2|a|x|2024-03-04T09:00:00|None|2024-03-04T09:10:00|01:00:00|gres/gpu=1|\n\
             3|a|x|2024-03-04T09:00:00|2024-03-04T09:00:00|Unknown|01:00:00|gres/gpu=1|gres/gpu=1\n\
             4|a|x|2024-03-04T09:00:00|2024-03-04T09:00:00|2024-03-04T09:30:00|01:00:00|cpu=4|cpu=4,node=1\n\
             5|a|x|2024-03-04T09:00:00|2024-03-04T09:00:00|2024-03-04T09:00:00|01:00:00|gres/gpu=1|gres/gpu=1\n\
             6_1|a|x|2024-03-04T09:00:00|2024-03-04T09:00:00|2024-03-04T09:30:00|UNLIMITED|gres/gpu=2|\n\
             6_2|a|x|2024-03-04T09:00:00|2024-03-04T09:10:00|2024-03-04T09:30:00|Partition_Limit|gres/gpu=2|gres/gpu=2,node=1\n\
             6.0|a|x|2024-03-04T09:00:00|2024-03-04T09:10:00|2024-03-04T09:30:00||gres/gpu=2|\n",
            false,
        )
        .expect("valid");
        let skipped = &workload.skipped;
        assert_eq!(skipped.get(SkipReason::NeverStarted), 2);
        assert_eq!(skipped.get(SkipReason::StillRunning), 1);
        assert_eq!(skipped.get(SkipReason::NoGpus), 1);
        assert_eq!(skipped.get(SkipReason::NonPositiveRunTime), 1);
        assert_eq!(skipped.get(SkipReason::JobStep), 1);
        let ids: Vec<&str> = workload.jobs.iter().map(|j| j.id.as_str()).collect();
        assert_eq!(ids, ["6_1", "6_2"]);
        // Without a limit: the partition maximum, the longest run rounded up to an hour.
        assert!(workload.jobs.iter().all(|j| j.time_limit_ms == 3_600_000));
        assert_eq!(workload.jobs[1].run_ms, 20 * 60_000);
        // 6_1 and 6_2 overlap: 4 GPUs on one 8-GPU node.
        assert_eq!(workload.nodes.len(), 1);
    }

    #[test]
    fn malformed_rows_name_their_line_and_column() {
        let ok = "2024-03-04T09:00:00";
        let cases = [
            (
                format!("1|a|x|{ok}|{ok}|{ok}|01:00:00|gres/gpu=1\n"),
                "line 2: expected 9 fields, found 8",
            ),
            (
                format!("1|a|x|yesterday|{ok}|{ok}|01:00:00||gres/gpu=1\n"),
                "line 2: column Submit: \"yesterday\" is not an ISO 8601 time",
            ),
            (
                format!("1|a|x|{ok}|{ok}|later|01:00:00||gres/gpu=1\n"),
                "line 2: column End: \"later\" is not an ISO 8601 time",
            ),
            (
                format!("1|a|x|{ok}|{ok}|{ok}|soon||gres/gpu=1\n"),
                "line 2: column Timelimit: \"soon\" is not a Slurm time limit",
            ),
            (
                format!("1|a|x|{ok}|{ok}|{ok}|01:00:00||gres/gpu=two\n"),
                "line 2: column AllocTRES: \"gres/gpu=two\" is not a TRES list (key=count,…)",
            ),
            (
                format!("1|a|x|{ok}|{ok}|{ok}|01:00:00|gres/gpu=x|\n"),
                "line 2: column ReqTRES: \"gres/gpu=x\" is not a TRES list (key=count,…)",
            ),
            (
                format!("|a|x|{ok}|{ok}|{ok}|01:00:00||gres/gpu=1\n"),
                "line 2: column JobID: \"\" is not a job id",
            ),
            (
                format!("1|a|x|{ok}|{ok}|2024-03-04T10:00:00|01:00:00||gres/gpu=3,node=2\n"),
                "line 2: 3 GPUs do not split evenly over 2 nodes",
            ),
        ];
        for (rows, message) in cases {
            let err = read_rows(&rows, false).unwrap_err();
            assert_eq!(err.to_string(), message);
            let workload = read_rows(&rows, true).expect("skipped");
            assert_eq!(workload.skipped.get(SkipReason::Malformed), 1, "{rows}");
        }
    }

    #[test]
    fn times_are_local_to_the_export() {
        let text = format!(
            "{HEADER}1|a|x|2024-03-05T23:30:00|2024-03-06T00:30:00|2024-03-06T02:30:00|02:00:00||gres/gpu=1\n"
        );
        let options = HistoryOptions {
            zone: "-05:00".parse().expect("offset"),
            ..HistoryOptions::default()
        };
        let workload = read(text.as_bytes(), &options).expect("valid");
        // Tuesday 23:30 as printed, whatever the zone: time 0 is the Monday before, 00:00.
        assert_eq!(
            workload.jobs[0].submit_ms,
            (86_400 + 23 * 3_600 + 1_800) * 1000
        );
        assert_eq!(workload.jobs[0].run_ms, 7_200_000);
    }
}
