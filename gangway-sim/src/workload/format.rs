//! Which reader a trace file needs, from its name and its first bytes.

use std::fmt;
use std::str::FromStr;

/// The formats `gangway simulate --trace` reads.
///
/// ```
/// use gangway_sim::workload::TraceFormat;
/// assert_eq!("sacct".parse::<TraceFormat>(), Ok(TraceFormat::Sacct));
/// assert_eq!(TraceFormat::Csv.to_string(), "csv");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TraceFormat {
    /// The Standard Workload Format ([`super::swf`]).
    Swf,
    /// An Alibaba GPU 2023 pod list ([`super::alibaba`]).
    Alibaba,
    /// Slurm accounting, `sacct --parsable2` ([`super::history::sacct`]).
    Sacct,
    /// The simple job-history CSV ([`super::history::job_csv`]).
    Csv,
}

impl TraceFormat {
    /// Every format, in the order of the names [`TraceFormat::name`] gives.
    pub const ALL: [TraceFormat; 4] = [
        TraceFormat::Swf,
        TraceFormat::Alibaba,
        TraceFormat::Sacct,
        TraceFormat::Csv,
    ];

    /// The format's name: `swf`, `alibaba`, `sacct` or `csv`.
    ///
    /// ```
    /// use gangway_sim::workload::TraceFormat;
    /// assert_eq!(TraceFormat::Alibaba.name(), "alibaba");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Swf => "swf",
            TraceFormat::Alibaba => "alibaba",
            TraceFormat::Sacct => "sacct",
            TraceFormat::Csv => "csv",
        }
    }

    /// The format of a trace from its file name and its first bytes (a few KiB are plenty), or
    /// `None` when neither tells:
    ///
    /// - a name ending in `.swf` or `.swf.gz`, or gzip data: SWF;
    /// - a first line (past blank lines and `#` comments) of `|`-separated fields with one
    ///   named `JobID`: Slurm accounting;
    /// - a first line of comma-separated names with `user`, `submit`, `duration` and `gpus`:
    ///   the job-history CSV; with `name` and `cpu_milli`: an Alibaba pod list;
    /// - a first line starting with `;` (an SWF header) or a number: SWF.
    ///
    /// Names are compared with ASCII case ignored.
    ///
    /// ```
    /// use gangway_sim::workload::TraceFormat;
    /// let detect = |name, head: &str| TraceFormat::detect(name, head.as_bytes());
    /// assert_eq!(detect("x.txt", "JobID|User|Submit\n"), Some(TraceFormat::Sacct));
    /// assert_eq!(detect("jobs.csv", "user,submit,duration,gpus\n"), Some(TraceFormat::Csv));
    /// assert_eq!(detect("pods.csv", "name,cpu_milli,memory_mib\n"), Some(TraceFormat::Alibaba));
    /// assert_eq!(detect("log", "; Version: 2.2\n"), Some(TraceFormat::Swf));
    /// assert_eq!(detect("notes.md", "# Notes\nhello\n"), None);
    /// ```
    pub fn detect(file_name: &str, head: &[u8]) -> Option<TraceFormat> {
        Self::detect_text(file_name, head)
    }

    /// Whether `head` starts like `sacct` output without `--parsable2`: a header line of
    /// space-separated names, one of them `JobID`, and no `|`.
    ///
    /// ```
    /// use gangway_sim::workload::TraceFormat;
    /// let fixed = b"JobID           User    Account     Submit\n------------ --------- ---------- ---\n";
    /// assert!(TraceFormat::looks_like_fixed_width_sacct(fixed));
    /// assert!(!TraceFormat::looks_like_fixed_width_sacct(b"JobID|User|Account\n"));
    /// ```
    pub fn looks_like_fixed_width_sacct(head: &[u8]) -> bool {
        let text = String::from_utf8_lossy(head);
        text.lines()
            .map(str::trim)
            .find(|line| !line.is_empty())
            .is_some_and(|first| {
                !first.contains('|')
                    && first
                        .split_whitespace()
                        .any(|field| field.eq_ignore_ascii_case("JobID"))
            })
    }

    fn detect_text(file_name: &str, head: &[u8]) -> Option<TraceFormat> {
        let lower = file_name.to_ascii_lowercase();
        if lower.ends_with(".swf") || lower.ends_with(".swf.gz") || head.starts_with(&[0x1f, 0x8b])
        {
            return Some(TraceFormat::Swf);
        }
        let text = String::from_utf8_lossy(head);
        let first = text
            .lines()
            .map(str::trim)
            .find(|line| !line.is_empty() && !line.starts_with('#'))?;
        let has = |separator: char, names: &[&str]| {
            let fields: Vec<&str> = first.split(separator).map(str::trim).collect();
            names
                .iter()
                .all(|name| fields.iter().any(|field| field.eq_ignore_ascii_case(name)))
        };
        if has('|', &["JobID"]) {
            Some(TraceFormat::Sacct)
        } else if has(',', &["user", "submit", "duration", "gpus"]) {
            Some(TraceFormat::Csv)
        } else if has(',', &["name", "cpu_milli"]) {
            Some(TraceFormat::Alibaba)
        } else if first.starts_with(';') || first.starts_with(|c: char| c.is_ascii_digit()) {
            Some(TraceFormat::Swf)
        } else {
            None
        }
    }
}

impl fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TraceFormat {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        TraceFormat::ALL
            .into_iter()
            .find(|format| format.name() == text)
            .ok_or_else(|| format!("expected swf, alibaba, sacct or csv, got {text:?}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for format in TraceFormat::ALL {
            assert_eq!(format.name().parse::<TraceFormat>(), Ok(format));
        }
        assert!("SWF".parse::<TraceFormat>().is_err());
    }

    #[test]
    fn content_decides_over_a_csv_extension() {
        let detect = |name, head: &[u8]| TraceFormat::detect(name, head);
        assert_eq!(detect("a.SWF", b""), Some(TraceFormat::Swf));
        assert_eq!(detect("a.bin", &[0x1f, 0x8b, 8]), Some(TraceFormat::Swf));
        assert_eq!(
            detect("a.csv", b"\n# exported\nUser,Submit,Duration,GPUs,Nodes\n"),
            Some(TraceFormat::Csv)
        );
        assert_eq!(
            detect("a.csv", b"JobID|JobName|User\n"),
            Some(TraceFormat::Sacct)
        );
        assert_eq!(detect("a.csv", b"1 0 -1 60 2\n"), Some(TraceFormat::Swf));
        assert_eq!(detect("a.csv", b""), None);
        assert_eq!(detect("a.csv", b"user,submit\n"), None);
    }
}
