//! The queue as people read it: an `squeue --start`-like table of the pending jobs of an
//! [`explain`](crate::Scheduler::explain) report, one row per job in the order the scheduler
//! considers them, with its position, owner, reason, estimated start and the jobs ahead of it.
//!
//! `gangway explain --snapshot FILE` and `gangway queue` (the shim's `explain` response on
//! stdin) print it; a host prints it with [`Scheduler::queue_table`].
//!
//! ```
//! use gangway::{ClusterConfig, Event, JobSpec, Scheduler};
//! let cluster: ClusterConfig = serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 1}]}"#).unwrap();
//! let mut s = Scheduler::new(cluster).unwrap();
//! let mut job = |id: &str, user: &str| {
//!     let mut job = JobSpec::new(id, 3_600_000, 1);
//!     job.user = Some(user.into());
//!     Event::Submit { job }
//! };
//! s.tick(0, vec![job("a", "ana"), job("b", "ben"), job("c", "ana")]).unwrap();
//! // `a` runs (it took position 1); `b` holds the reservation; `c` waits behind it.
//! assert_eq!(s.queue_table(), "\
//! POS  JOB  USER  ACCOUNT  REASON     START_MS  START_IN  AHEAD
//!   2  b    ben   -        reserved    3600000   1:00:00  0
//!   3  c    ana   -        resources         -         -  1: b
//! ");
//! ```

use crate::Scheduler;
use crate::decision::PendingInfo;

/// How many of the jobs ahead are named in the `AHEAD` column.
pub const AHEAD_NAMED: usize = 3;

/// Who a pending job belongs to, when known.
///
/// ```
/// use gangway::queue_table::Owner;
/// let owner = Owner { user: Some("ana"), account: None };
/// assert_eq!(owner.user, Some("ana"));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Owner<'a> {
    /// The submitting user.
    pub user: Option<&'a str>,
    /// The account charged.
    pub account: Option<&'a str>,
}

/// The table of `pending` (an [`Explanation`](crate::decision::Explanation)'s pending jobs)
/// with one row per job, in position order:
///
/// - `POS`: the job's position; `JOB`; `USER` and `ACCOUNT` from `owner` (`-` when unknown);
/// - `REASON`: why it waits ([`PendingReason::name`](crate::PendingReason::name));
/// - `START_MS`: its estimated start (a reservation's), `-` when it has none; `START_IN`: the
///   time from `now_ms` (the last tick) to it as `[D-]H:MM:SS`, `-` without either;
/// - `AHEAD`: how many pending jobs have a lower position, and the first [`AHEAD_NAMED`] of
///   them (`3: a, b, c`; `5: a, b, c, …` when there are more).
///
/// Columns are as wide as their widest cell; numbers are right-aligned. With no pending job,
/// the header alone.
///
/// ```
/// use gangway::decision::PendingInfo;
/// use gangway::queue_table::{render, Owner};
/// use gangway::PendingReason;
/// let job = |job: &str, position, reason, start| PendingInfo {
///     job: job.into(), position, reason, estimated_start_ms: start,
///     detail: None, backoff_until_ms: None,
/// };
/// let pending = [job("x", 1, PendingReason::Reserved, Some(90_061_000)), job("y", 2, PendingReason::Held, None)];
/// let table = render(&pending, Some(1_000), |_| Owner { user: Some("u"), account: Some("a") });
/// assert_eq!(table, "\
/// POS  JOB  USER  ACCOUNT  REASON    START_MS    START_IN  AHEAD
///   1  x    u     a        reserved  90061000  1-01:01:00  0
///   2  y    u     a        held             -           -  1: x
/// ");
/// ```
pub fn render<'a>(
    pending: &'a [PendingInfo],
    now_ms: Option<u64>,
    owner: impl Fn(&'a str) -> Owner<'a>,
) -> String {
    let mut jobs: Vec<&PendingInfo> = pending.iter().collect();
    jobs.sort_by_key(|info| info.position);
    let mut rows = vec![HEADER.map(str::to_string)];
    for (index, info) in jobs.iter().enumerate() {
        let ahead: Vec<&str> = jobs[..index]
            .iter()
            .filter(|other| other.position < info.position)
            .map(|other| other.job.as_str())
            .collect();
        let Owner { user, account } = owner(&info.job);
        rows.push([
            info.position.to_string(),
            info.job.clone(),
            user.unwrap_or("-").to_string(),
            account.unwrap_or("-").to_string(),
            info.reason.name().to_string(),
            info.estimated_start_ms
                .map_or_else(|| "-".to_string(), |start| start.to_string()),
            match (info.estimated_start_ms, now_ms) {
                (Some(start), Some(now)) => clock(start.saturating_sub(now)),
                _ => "-".to_string(),
            },
            ahead_cell(&ahead),
        ]);
    }
    layout(&rows)
}

const HEADER: [&str; 8] = [
    "POS", "JOB", "USER", "ACCOUNT", "REASON", "START_MS", "START_IN", "AHEAD",
];

/// Which columns are right-aligned.
const RIGHT: [bool; 8] = [true, false, false, false, false, true, true, false];

fn ahead_cell(ahead: &[&str]) -> String {
    if ahead.is_empty() {
        return "0".to_string();
    }
    let mut named = ahead[..ahead.len().min(AHEAD_NAMED)].join(", ");
    if ahead.len() > AHEAD_NAMED {
        named.push_str(", …");
    }
    format!("{}: {named}", ahead.len())
}

/// `ms` as Slurm prints a duration: `H:MM:SS`, or `D-HH:MM:SS` from a day on.
fn clock(ms: u64) -> String {
    let seconds = ms / 1000;
    let (days, rest) = (seconds / 86_400, seconds % 86_400);
    let (hours, minutes, seconds) = (rest / 3_600, rest % 3_600 / 60, rest % 60);
    if days > 0 {
        format!("{days}-{hours:02}:{minutes:02}:{seconds:02}")
    } else {
        format!("{hours}:{minutes:02}:{seconds:02}")
    }
}

/// The rows in columns two spaces apart, each line without trailing spaces.
fn layout(rows: &[[String; 8]]) -> String {
    let widths: Vec<usize> = (0..HEADER.len())
        .map(|column| {
            rows.iter()
                .map(|row| row[column].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut text = String::new();
    for row in rows {
        let mut line = String::new();
        for (column, cell) in row.iter().enumerate() {
            if column > 0 {
                line.push_str("  ");
            }
            let pad = " ".repeat(widths[column] - cell.chars().count());
            if RIGHT[column] {
                line.push_str(&pad);
                line.push_str(cell);
            } else {
                line.push_str(cell);
                line.push_str(&pad);
            }
        }
        text.push_str(line.trim_end());
        text.push('\n');
    }
    text
}

impl Scheduler {
    /// The queue table ([`render`]) of the pending jobs as of the last tick, with each job's
    /// user and account and the estimated starts counted from the last tick.
    ///
    /// ```
    /// use gangway::{ClusterConfig, Scheduler};
    /// let cluster: ClusterConfig = serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 1}]}"#).unwrap();
    /// let s = Scheduler::new(cluster).unwrap();
    /// assert_eq!(s.queue_table(), "POS  JOB  USER  ACCOUNT  REASON  START_MS  START_IN  AHEAD\n");
    /// ```
    pub fn queue_table(&self) -> String {
        let pending = self.pending_info();
        let state = self.state();
        render(&pending, self.last_tick(), |job| {
            state
                .job_by_name(job)
                .map_or_else(Owner::default, |view| Owner {
                    user: view.spec().user.as_deref(),
                    account: view.spec().account.as_deref(),
                })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PendingReason;

    #[test]
    fn reason_names_are_their_serialized_names() {
        use PendingReason::*;
        for reason in [
            Held,
            Begin,
            Dependency,
            Preempting,
            Quota,
            Reserved,
            Priority,
            Resources,
            Admission,
            Backoff,
            WaitingForReady,
        ] {
            assert_eq!(
                serde_json::to_value(reason).unwrap(),
                serde_json::Value::String(reason.name().to_string())
            );
        }
    }

    #[test]
    fn clocks_read_as_slurm_durations() {
        assert_eq!(clock(0), "0:00:00");
        assert_eq!(clock(59_999), "0:00:59");
        assert_eq!(clock(3_723_000), "1:02:03");
        assert_eq!(clock(86_400_000 + 61_000), "1-00:01:01");
    }

    #[test]
    fn ahead_names_the_first_three_and_counts_all() {
        assert_eq!(ahead_cell(&[]), "0");
        assert_eq!(ahead_cell(&["a", "b", "c"]), "3: a, b, c");
        assert_eq!(ahead_cell(&["a", "b", "c", "d"]), "4: a, b, c, …");
    }

    #[test]
    fn rows_follow_positions_and_count_only_lower_ones() {
        let job = |job: &str, position| PendingInfo {
            job: job.into(),
            position,
            reason: PendingReason::Priority,
            estimated_start_ms: None,
            detail: None,
            backoff_until_ms: None,
        };
        let pending = [job("late", 3), job("first", 1), job("tie", 1)];
        let table = render(&pending, None, |_| Owner::default());
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(
            lines[1],
            "  1  first  -     -        priority         -         -  0"
        );
        assert_eq!(
            lines[2],
            "  1  tie    -     -        priority         -         -  0"
        );
        assert_eq!(
            lines[3],
            "  3  late   -     -        priority         -         -  2: first, tie"
        );
    }
}
