//! The queue as people read it: an `squeue --start`-like table of the pending jobs of an
//! [`explain`](crate::Scheduler::explain) report, one row per job in the order the scheduler
//! considers them, with its place in the queue, owner, reason, estimated start and the jobs
//! ahead of it. Running jobs are not in it: they have left the queue.
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
//! // `a` runs; `b` holds the reservation, first in the queue; `c` waits behind it.
//! assert_eq!(s.queue_table(), "\
//! POS  JOB  USER  ACCOUNT  REASON     START      AHEAD
//!   1  b    ben   -        reserved   in 1h 00m  0
//!   2  c    ana   -        resources  -          1: b
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
/// with one row per job, in the order of their positions:
///
/// - `POS`: the job's place among the pending jobs, 1, 2, 3 … (a report's `position` may skip
///   the numbers of jobs its pass started; the table counts the jobs still waiting);
/// - `JOB`; `USER` and `ACCOUNT` from `owner` (`-` when unknown);
/// - `REASON`: why it waits ([`PendingReason::name`](crate::PendingReason::name));
/// - `START`: its estimated start (a reservation's) from `now_ms` (the last tick), as
///   `in 3h 50m` ([`human_duration`]; `now` when it is due), or as `at T ms` without `now_ms`;
///   `-` when it has none;
/// - `AHEAD`: the jobs ahead of it in the queue, `POS − 1`, and the first [`AHEAD_NAMED`] of
///   them (`3: a, b, c`; `5: a, b, c, …` when there are more).
///
/// Columns are as wide as their widest cell; `POS` is right-aligned. With no pending job,
/// the header alone.
///
/// ```
/// use gangway::PendingInfo;
/// use gangway::queue_table::{render, Owner};
/// // As `explain` reports them (a host reads them from the shim's JSON, say): positions 1 and
/// // 3, as older versions reported them (the job at 2 started).
/// let pending: Vec<PendingInfo> = serde_json::from_str(r#"[
///     {"job": "x", "position": 1, "reason": "reserved", "estimated_start_ms": 90061000},
///     {"job": "y", "position": 3, "reason": "held", "estimated_start_ms": null}]"#).unwrap();
/// let table = render(&pending, Some(1_000), |_| Owner { user: Some("u"), account: Some("a") });
/// assert_eq!(table, "\
/// POS  JOB  USER  ACCOUNT  REASON    START      AHEAD
///   1  x    u     a        reserved  in 1d 01h  0
///   2  y    u     a        held      -          1: x
/// ");
/// ```
pub fn render<'a>(
    pending: &'a [PendingInfo],
    now_ms: Option<u64>,
    owner: impl Fn(&'a str) -> Owner<'a>,
) -> String {
    let mut jobs: Vec<&PendingInfo> = pending.iter().collect();
    // Stable: jobs of one position (a report never has two) keep their order.
    jobs.sort_by_key(|info| info.position);
    let mut rows = vec![HEADER.map(str::to_string)];
    for (index, info) in jobs.iter().enumerate() {
        let ahead: Vec<&str> = jobs[..index]
            .iter()
            .map(|other| other.job.as_str())
            .collect();
        // The report's own names first; the host's, for a report without them.
        let given = owner(&info.job);
        let user = info.user.as_deref().or(given.user);
        let account = info.account.as_deref().or(given.account);
        rows.push([
            (index + 1).to_string(),
            info.job.clone(),
            user.unwrap_or("-").to_string(),
            account.unwrap_or("-").to_string(),
            info.reason.name().to_string(),
            match (info.estimated_start_ms, now_ms) {
                (None, _) => "-".to_string(),
                (Some(start), Some(now)) if start <= now => "now".to_string(),
                (Some(start), Some(now)) => format!("in {}", human_duration(start - now)),
                (Some(start), None) => format!("at {start} ms"),
            },
            ahead_cell(&ahead),
        ]);
    }
    layout(&rows)
}

const HEADER: [&str; 7] = ["POS", "JOB", "USER", "ACCOUNT", "REASON", "START", "AHEAD"];

/// Which columns are right-aligned.
const RIGHT: [bool; 7] = [true, false, false, false, false, false, false];

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

/// A duration as people say it, in its two largest units: `45s`, `14m`, `3h 50m`, `2d 03h`
/// (rounded down).
///
/// ```
/// use gangway::queue_table::human_duration;
/// assert_eq!(human_duration(45_000), "45s");
/// assert_eq!(human_duration(14 * 60_000 + 59_000), "14m");
/// assert_eq!(human_duration(3 * 3_600_000 + 50 * 60_000), "3h 50m");
/// assert_eq!(human_duration(2 * 86_400_000 + 3 * 3_600_000), "2d 03h");
/// ```
pub fn human_duration(ms: u64) -> String {
    let seconds = ms / 1000;
    let (days, hours, minutes) = (
        seconds / 86_400,
        seconds % 86_400 / 3_600,
        seconds % 3_600 / 60,
    );
    if days > 0 {
        format!("{days}d {hours:02}h")
    } else if hours > 0 {
        format!("{hours}h {minutes:02}m")
    } else if minutes > 0 {
        format!("{minutes}m")
    } else {
        format!("{seconds}s")
    }
}

/// The rows in columns two spaces apart, each line without trailing spaces.
fn layout(rows: &[[String; 7]]) -> String {
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
    /// assert_eq!(s.queue_table(), "POS  JOB  USER  ACCOUNT  REASON  START  AHEAD\n");
    /// ```
    pub fn queue_table(&self) -> String {
        render(&self.pending_info(), self.last_tick(), |_| Owner::default())
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
    fn durations_read_in_their_two_largest_units() {
        assert_eq!(human_duration(0), "0s");
        assert_eq!(human_duration(59_999), "59s");
        assert_eq!(human_duration(60_000), "1m");
        assert_eq!(human_duration(3_723_000), "1h 02m");
        assert_eq!(human_duration(86_400_000 + 61_000), "1d 00h");
    }

    #[test]
    fn ahead_names_the_first_three_and_counts_all() {
        assert_eq!(ahead_cell(&[]), "0");
        assert_eq!(ahead_cell(&["a", "b", "c"]), "3: a, b, c");
        assert_eq!(ahead_cell(&["a", "b", "c", "d"]), "4: a, b, c, …");
    }

    #[test]
    fn positions_count_the_pending_jobs_and_ahead_agrees() {
        let job = |job: &str, position, start| PendingInfo {
            job: job.into(),
            position,
            reason: PendingReason::Priority,
            estimated_start_ms: start,
            detail: None,
            backoff_until_ms: None,
            user: None,
            account: None,
        };
        // A report with gaps, as older versions wrote them (a pass started the jobs at 2 and 4).
        let pending = [
            job("late", 5, None),
            job("first", 1, Some(500)),
            job("third", 3, Some(2_000)),
        ];
        let table = render(&pending, Some(1_000), |_| Owner::default());
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines[1], "  1  first  -     -        priority  now    0");
        assert_eq!(
            lines[2],
            "  2  third  -     -        priority  in 1s  1: first"
        );
        assert_eq!(
            lines[3],
            "  3  late   -     -        priority  -      2: first, third"
        );
        let without_now = render(&pending, None, |_| Owner::default());
        assert!(without_now.lines().nth(2).unwrap().contains("at 2000 ms"));
    }
}
