//! What both history formats share: a delimited table with a header row whose columns are found
//! by name, and the collection of its rows into a workload (skips, malformed rows, repeated ids).

use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::path::Path;

use csv::StringRecord;

use super::build::{self, Gang, HistoryRow};
use super::{HistoryError, HistoryOptions, RowProblem};
use crate::workload::{SkipCounts, SkipReason, Workload};

/// Opens a history file.
pub(super) fn open(path: &Path) -> Result<File, HistoryError> {
    File::open(path).map_err(|source| HistoryError::Open {
        path: path.display().to_string(),
        source,
    })
}

/// A table being read.
pub(super) struct Table<'t> {
    csv: csv::Reader<&'t [u8]>,
    text: &'t [u8],
    headers: Vec<String>,
    comments: bool,
    /// A byte offset into `text` and the line it is on, moved forward row by row.
    cursor: (usize, u64),
}

/// Reads the whole input: histories are small, and line numbers are counted on the text (the
/// `csv` crate's own count misses blank lines).
pub(super) fn read_all(mut reader: impl Read) -> Result<Vec<u8>, HistoryError> {
    let mut text = Vec::new();
    reader
        .read_to_end(&mut text)
        .map_err(|e| HistoryError::Read(e.into()))?;
    Ok(text)
}

impl<'t> Table<'t> {
    /// Reads the header row of a table separated by `delimiter`; with `comments`, rows
    /// starting with `#` after the header are skipped (by hand rather than by the `csv`
    /// crate's comments, which would not count their lines). Fields are trimmed; blank lines
    /// are skipped.
    pub(super) fn open(
        text: &'t [u8],
        delimiter: u8,
        comments: bool,
    ) -> Result<Self, HistoryError> {
        let mut csv = csv::ReaderBuilder::new()
            .delimiter(delimiter)
            .quoting(delimiter == b',')
            .flexible(true)
            .trim(csv::Trim::All)
            .from_reader(text);
        let headers: Vec<String> = csv
            .headers()
            .map_err(HistoryError::Read)?
            .iter()
            .map(str::to_string)
            .collect();
        if headers.iter().all(String::is_empty) {
            return Err(HistoryError::NoHeader);
        }
        Ok(Table {
            csv,
            text,
            headers,
            comments,
            cursor: (0, 1),
        })
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

    /// The line of a record the `csv` crate places at `offset`, at or after the cursor: the
    /// end of the record before it, so the empty lines it skipped come first.
    fn line_of(&mut self, offset: usize) -> u64 {
        let (at, line) = self.cursor;
        let mut offset = offset.clamp(at, self.text.len());
        while matches!(self.text.get(offset), Some(b'\n' | b'\r')) {
            offset += 1;
        }
        let newlines = self.text[at..offset]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        self.cursor = (offset, line + newlines as u64);
        self.cursor.1
    }

    /// The next row and its line, or why it is malformed (a field count other than the
    /// header's); `None` at the end.
    pub(super) fn next_row(&mut self) -> Result<Option<(u64, RawRow)>, HistoryError> {
        let mut record = StringRecord::new();
        loop {
            if !self
                .csv
                .read_record(&mut record)
                .map_err(HistoryError::Read)?
            {
                return Ok(None);
            }
            let comment = self.comments && record.get(0).is_some_and(|f| f.starts_with('#'));
            let blank = record.iter().all(str::is_empty);
            if !comment && !blank {
                break;
            }
        }
        let line = self.line_of(record.position().map_or(0, |p| p.byte() as usize));
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

/// A row's fields, or why it is malformed.
pub(super) type RawRow = Result<StringRecord, RowProblem>;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_count_blank_and_comment_lines() {
        let text = "a,b\n\n# note, with a comma\n1,2\r\n\r\n  \n3\n";
        let mut table = Table::open(text.as_bytes(), b',', true).expect("header");
        assert_eq!(table.cursor, (0, 1));
        let (line, row) = table.next_row().expect("read").expect("row");
        assert_eq!((line, row.expect("two fields").len()), (4, 2));
        let (line, row) = table.next_row().expect("read").expect("row");
        assert_eq!(
            (line, row),
            (
                7,
                Err(RowProblem::FieldCount {
                    expected: 2,
                    found: 1
                })
            )
        );
        assert!(table.next_row().expect("read").is_none());
    }
}
