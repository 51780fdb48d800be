//! What both history formats share: a delimited table with a header row whose columns are found
//! by name, and the collection of its rows into a workload (skips, malformed rows, repeated ids).

use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::path::Path;

use csv::StringRecord;

use super::build::{self, Gang, HistoryRow};
use super::{HistoryError, HistoryOptions, RowProblem};
use crate::sim::workload::{SkipCounts, SkipReason, Workload};

/// Opens a history file.
pub(super) fn open(path: &Path) -> Result<File, HistoryError> {
    File::open(path).map_err(|source| HistoryError::Open {
        path: path.display().to_string(),
        source,
    })
}

/// A table being read.
pub(super) struct Table<R> {
    csv: csv::Reader<R>,
    headers: Vec<String>,
}

impl<R: Read> Table<R> {
    /// Reads the header row of a table separated by `delimiter`; with `comments`, lines
    /// starting with `#` are skipped. Fields are trimmed.
    pub(super) fn open(reader: R, delimiter: u8, comments: bool) -> Result<Self, HistoryError> {
        let mut csv = csv::ReaderBuilder::new()
            .delimiter(delimiter)
            .quoting(delimiter == b',')
            .comment(comments.then_some(b'#'))
            .flexible(true)
            .trim(csv::Trim::All)
            .from_reader(reader);
        let headers: Vec<String> = csv
            .headers()
            .map_err(HistoryError::Read)?
            .iter()
            .map(str::to_string)
            .collect();
        if headers.iter().all(String::is_empty) {
            return Err(HistoryError::NoHeader);
        }
        Ok(Table { csv, headers })
    }

    /// The index of the column named `name` (ASCII case ignored).
    pub(super) fn column(&self, name: &str) -> Option<usize> {
        self.headers
            .iter()
            .position(|header| header.eq_ignore_ascii_case(name))
    }

    /// The index of a column that must be present.
    pub(super) fn required(&self, name: &'static str) -> Result<usize, HistoryError> {
        self.column(name).ok_or(HistoryError::MissingColumn(name))
    }

    /// The next row and its line, or why it is malformed (a field count other than the
    /// header's); `None` at the end.
    pub(super) fn next_row(
        &mut self,
    ) -> Result<Option<(u64, Result<StringRecord, RowProblem>)>, HistoryError> {
        let mut record = StringRecord::new();
        if !self
            .csv
            .read_record(&mut record)
            .map_err(HistoryError::Read)?
        {
            return Ok(None);
        }
        let line = record.position().map_or(0, |position| position.line());
        let expected = self.headers.len();
        let row = if record.len() == expected {
            Ok(record)
        } else {
            Err(RowProblem::FieldCount {
                expected,
                found: record.len(),
            })
        };
        Ok(Some((line, row)))
    }
}

/// A row as a format reads it: the job, a reason to skip it, or what is malformed.
pub(super) type Parsed = Result<Result<HistoryRow, SkipReason>, RowProblem>;

/// The rows kept so far, the skip counts, and the line of each job id.
pub(super) struct Collector<'a> {
    options: &'a HistoryOptions,
    rows: Vec<(HistoryRow, Gang)>,
    skipped: SkipCounts,
    first_line_of: HashMap<String, u64>,
}

impl<'a> Collector<'a> {
    /// Checks the options.
    pub(super) fn new(options: &'a HistoryOptions) -> Result<Self, HistoryError> {
        if options.gpus_per_node == 0 {
            return Err(HistoryError::Option("gpus_per_node must be at least 1"));
        }
        if options.max_time_ms == Some(0) {
            return Err(HistoryError::Option("max_time_ms must be at least 1"));
        }
        Ok(Collector {
            options,
            rows: Vec::new(),
            skipped: SkipCounts::default(),
            first_line_of: HashMap::new(),
        })
    }

    /// Keeps, skips or refuses the row of `line`.
    pub(super) fn add(&mut self, line: u64, parsed: Parsed) -> Result<(), HistoryError> {
        match self.shaped(line, parsed) {
            Ok(Ok(kept)) => {
                self.first_line_of.insert(kept.0.id.clone(), line);
                self.rows.push(kept);
                Ok(())
            }
            Ok(Err(reason)) => {
                self.skipped.add(reason);
                Ok(())
            }
            Err(_) if self.options.skip_malformed => {
                self.skipped.add(SkipReason::Malformed);
                Ok(())
            }
            Err(problem) => Err(HistoryError::Row { line, problem }),
        }
    }

    fn shaped(
        &self,
        line: u64,
        parsed: Parsed,
    ) -> Result<Result<(HistoryRow, Gang), SkipReason>, RowProblem> {
        let row = match parsed? {
            Ok(row) => row,
            Err(reason) => return Ok(Err(reason)),
        };
        debug_assert_eq!(row.line, line);
        if let Some(&first_line) = self.first_line_of.get(&row.id) {
            return Err(RowProblem::DuplicateJob {
                id: row.id,
                first_line,
            });
        }
        if row.run_s == 0 {
            return Ok(Err(SkipReason::NonPositiveRunTime));
        }
        if row.gpus == 0 {
            return Ok(Err(SkipReason::NoGpus));
        }
        Ok(build::gang(row.gpus, row.nodes, self.options.gpus_per_node)?.map(|gang| (row, gang)))
    }

    /// The workload of the rows kept.
    pub(super) fn finish(self) -> Workload {
        build::workload(self.rows, self.skipped, self.options)
    }
}
