//! Reader of the simple job-history CSV: one job per row, with a header row naming the columns
//! (in any order, case ignored; lines starting with `#` are comments):
//!
//! | column | required | meaning |
//! |---|---|---|
//! | `user` | yes | who submitted the job (non-empty) |
//! | `submit` | yes | when: ISO 8601 (`2024-03-04T09:15:00`, `2024-03-04 09:15`, with an optional zone `Z` or `+02:00`) or epoch seconds |
//! | `duration` | yes | how long it ran, in whole seconds |
//! | `gpus` | yes | GPUs of the whole job |
//! | `nodes` | no | nodes it ran on; empty or absent: the fewest nodes that hold the GPUs |
//! | `time_limit` | no | the time it asked for, in whole seconds (> 0); empty or absent: the partition maximum |
//! | `account` | no | the team charged; empty or absent: the user |
//! | `id` | no | the job's id (unique); absent: the row's line number |
//!
//! Other columns are ignored. See [the module above](super) for how times, gangs, the machine
//! and malformed rows are treated.
//!
//! ```
//! use gangway_sim::workload::history::{job_csv, HistoryOptions, UtcOffset};
//! use gangway_sim::workload::SkipReason;
//! let text = "user,submit,duration,gpus,nodes,time_limit\n\
//!             ## epoch 1709542800 is 2024-03-04T09:00:00Z, a Monday\n\
//!             ana,1709542800,3600,16,4,7200\n\
//!             ben,2024-03-04T11:30:00,600,0,,\n";
//! let options = HistoryOptions { zone: "+01:00".parse().unwrap(), ..HistoryOptions::default() };
//! let workload = job_csv::read(text.as_bytes(), &options).unwrap();
//! let ana = &workload.jobs[0];
//! assert_eq!(ana.id, "3");
//! assert_eq!(ana.submit_ms, 10 * 3_600_000); // 10:00 at +01:00
//! assert_eq!((ana.tasks, ana.gpus_per_task_milli, ana.time_limit_ms), (4, 4_000, 7_200_000));
//! assert_eq!(ana.account, "ana");
//! assert_eq!(workload.skipped.get(SkipReason::NoGpus), 1);
//! ```

use std::io::{BufReader, Read};
use std::path::Path;

use csv::StringRecord;

use super::build::HistoryRow;
use super::table::{Collector, Table, open, read_all};
use super::time::{epoch_local_seconds, iso_local_seconds};
use super::{HistoryError, HistoryOptions, RowProblem, UtcOffset};
use crate::workload::Workload;

/// Reads a job-history CSV file.
///
/// ```
/// use gangway_sim::workload::history::{job_csv, HistoryOptions};
/// let err = job_csv::from_path("no/such.csv", &HistoryOptions::default()).unwrap_err();
/// assert!(err.to_string().starts_with("no/such.csv: "));
/// ```
pub fn from_path(
    path: impl AsRef<Path>,
    options: &HistoryOptions,
) -> Result<Workload, HistoryError> {
    read(BufReader::new(open(path.as_ref())?), options)
}

/// Reads a job-history CSV.
///
/// ```
/// use gangway_sim::workload::history::{job_csv, HistoryOptions};
/// let err = job_csv::read("user,submit,gpus\n".as_bytes(), &HistoryOptions::default()).unwrap_err();
/// assert_eq!(err.to_string(), "no column duration");
/// ```
pub fn read(reader: impl Read, options: &HistoryOptions) -> Result<Workload, HistoryError> {
    let text = read_all(reader)?;
    let mut table = Table::open(&text, b',', true)?;
    let columns = Columns {
        user: table.required("user")?,
        submit: table.required("submit")?,
        duration: table.required("duration")?,
        gpus: table.required("gpus")?,
        nodes: table.column("nodes"),
        time_limit: table.column("time_limit"),
        account: table.column("account"),
        id: table.column("id"),
    };
    let mut collector = Collector::new(options)?;
    while let Some((line, record)) = table.next_row()? {
        let parsed = record.and_then(|record| columns.row(line, &record, options.zone).map(Ok));
        collector.add(line, parsed)?;
    }
    Ok(collector.finish())
}

/// Where each column is.
struct Columns {
    user: usize,
    submit: usize,
    duration: usize,
    gpus: usize,
    nodes: Option<usize>,
    time_limit: Option<usize>,
    account: Option<usize>,
    id: Option<usize>,
}

impl Columns {
    fn row(
        &self,
        line: u64,
        record: &StringRecord,
        zone: UtcOffset,
    ) -> Result<HistoryRow, RowProblem> {
        let field = |index: usize| record.get(index).unwrap_or("");
        let optional = |index: Option<usize>| index.map(field).filter(|text| !text.is_empty());
        let user = field(self.user);
        if user.is_empty() {
            return Err(RowProblem::field("user", user, "a user name"));
        }
        let submit = field(self.submit);
        let submit_s = submit_seconds(submit, zone).ok_or_else(|| {
            RowProblem::field("submit", submit, "an ISO 8601 time or epoch seconds")
        })?;
        let time_limit_s = optional(self.time_limit)
            .map(|text| {
                number::<u64>(text).filter(|&s| s > 0).ok_or_else(|| {
                    RowProblem::field("time_limit", text, "a positive number of seconds")
                })
            })
            .transpose()?;
        let nodes = optional(self.nodes)
            .map(|text| {
                number::<u32>(text)
                    .filter(|&n| n > 0)
                    .ok_or_else(|| RowProblem::field("nodes", text, "a positive number of nodes"))
            })
            .transpose()?;
        Ok(HistoryRow {
            line,
            id: optional(self.id).map_or_else(|| line.to_string(), str::to_string),
            user: user.to_string(),
            account: optional(self.account).unwrap_or(user).to_string(),
            submit_s,
            start_s: None,
            run_s: whole(record, self.duration, "duration", "a number of seconds")?,
            time_limit_s,
            gpus: whole(record, self.gpus, "gpus", "a number of GPUs")?,
            nodes,
        })
    }
}

/// The field of `index` as a non-negative integer.
fn whole<T: std::str::FromStr>(
    record: &StringRecord,
    index: usize,
    column: &'static str,
    expected: &'static str,
) -> Result<T, RowProblem> {
    let text = record.get(index).unwrap_or("");
    number(text).ok_or_else(|| RowProblem::field(column, text, expected))
}

/// Digits only, as a number.
fn number<T: std::str::FromStr>(text: &str) -> Option<T> {
    (!text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| text.parse().ok())
        .flatten()
}

/// `submit` in local seconds: epoch seconds (digits only) or an ISO 8601 stamp.
fn submit_seconds(text: &str, zone: UtcOffset) -> Option<i64> {
    match number::<i64>(text) {
        Some(epoch) => Some(epoch_local_seconds(epoch, zone)),
        None => iso_local_seconds(text, zone),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::SkipReason;

    const HEADER: &str = "user,submit,duration,gpus,nodes,time_limit\n";

    fn read_rows(rows: &str, skip_malformed: bool) -> Result<Workload, HistoryError> {
        let options = HistoryOptions {
            skip_malformed,
            ..HistoryOptions::default()
        };
        read(format!("{HEADER}{rows}").as_bytes(), &options)
    }

    #[test]
    fn malformed_rows_name_their_line_and_column() {
        let cases = [
            (
                "ana,2024-03-04T09:00,60,1,,\nben,2024-03-04T09:00,1h,1,,\n",
                "line 3: column duration: \"1h\" is not a number of seconds",
            ),
            (
                "ana,2024-03-04T09:00,60,-1,,\n",
                "line 2: column gpus: \"-1\" is not a number of GPUs",
            ),
            (
                "ana,2024-03-04T09:00,60,1,0,\n",
                "line 2: column nodes: \"0\" is not a positive number of nodes",
            ),
            (
                "ana,2024-03-04T09:00,60,1,,0\n",
                "line 2: column time_limit: \"0\" is not a positive number of seconds",
            ),
            (
                ",2024-03-04T09:00,60,1,,\n",
                "line 2: column user: \"\" is not a user name",
            ),
            (
                "ana,2024-02-30T09:00,60,1,,\n",
                "line 2: column submit: \"2024-02-30T09:00\" is not an ISO 8601 time or epoch seconds",
            ),
            (
                "ana,2024-03-04T09:00,60,1\n",
                "line 2: expected 6 fields, found 4",
            ),
            (
                "ana,2024-03-04T09:00,60,10,4,\n",
                "line 2: 10 GPUs do not split evenly over 4 nodes",
            ),
        ];
        for (rows, message) in cases {
            let err = read_rows(rows, false).unwrap_err();
            assert_eq!(err.to_string(), message);
            let workload = read_rows(rows, true).expect("skipped");
            assert_eq!(workload.skipped.get(SkipReason::Malformed), 1, "{rows}");
        }
    }

    #[test]
    fn repeated_ids_are_malformed() {
        let text = "id,user,submit,duration,gpus\n7,ana,0,60,1\n7,ben,0,60,1\n";
        let err = read(text.as_bytes(), &HistoryOptions::default()).unwrap_err();
        assert_eq!(err.to_string(), "line 3: job 7 already appears on line 2");
    }

    #[test]
    fn optional_columns_default() {
        let text = "gpus,duration,submit,user,account\n12,100,0,ana,\n3,100,60,ben,vision\n";
        let workload = read(text.as_bytes(), &HistoryOptions::default()).expect("valid");
        let ana = &workload.jobs[0];
        assert_eq!((ana.tasks, ana.gpus_per_task_milli), (2, 6_000));
        assert_eq!(
            (ana.account.as_str(), ana.time_limit_ms),
            ("ana", 3_600_000)
        );
        assert_eq!(workload.jobs[1].account, "vision");
        let names: Vec<&str> = workload.accounts.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["ana", "vision"]);
        // 1970-01-01 is a Thursday: time 0 is the Monday before.
        assert_eq!(ana.submit_ms, 3 * 86_400_000);
    }

    #[test]
    fn zero_durations_and_oversized_gangs_are_skipped_and_counted() {
        let workload =
            read_rows("ana,0,0,1,,\nana,0,60,16,1,\nana,0,60,1,,\n", false).expect("valid");
        assert_eq!(workload.jobs.len(), 1);
        assert_eq!(workload.skipped.get(SkipReason::NonPositiveRunTime), 1);
        assert_eq!(workload.skipped.get(SkipReason::FitsNoNode), 1);
    }
}
