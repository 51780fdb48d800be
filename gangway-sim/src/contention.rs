//! The metrics of contention: what happens while jobs wait.
//!
//! A job **waits** from its submit time to its first start, between two of its executions
//! (after a preemption or requeue), and from its submit time or last execution to the end of
//! the run when it never (re)started; a job refused at submission never waits. From that:
//!
//! - **GPU-hours idle while some job waited**: the integral of the idle GPUs (capacity − held)
//!   over the time in which at least one job waited: capacity that a better placement or
//!   order could have used (cpu-hours on a cluster without GPUs);
//! - **contended time**: the time in which jobs of two or more top-level accounts (teams)
//!   waited;
//! - **share when contended**: each team's part of the GPU-time used during contended time,
//!   next to its target. Over a whole run every job completes under any policy, so the plain
//!   share cannot move; this one shows who gets the GPUs while teams compete, which is what
//!   fair-share changes.
//!
//! ```
//! use gangway_sim::contention::Contention;
//! use gangway_sim::{Execution, ExecutionEnd, JobRecord, JobStatus, SimResult};
//! let job = |account: &str, submit, start, end| JobRecord { id: format!("{account}{submit}"),
//!     account: account.into(), submit_ms: submit, first_start_ms: Some(start),
//!     last_start_ms: Some(start), end_ms: Some(end), status: JobStatus::Completed,
//!     reserved_start_ms: None };
//! let run = |job, start, end| Execution { job, start_ms: start, end_ms: end, tasks: 1,
//!     gpus_milli: 2_000, cpus_milli: 1_000, nodes: 1, lost_ms: 0, end: ExecutionEnd::Completed };
//! // Two GPUs; `a` runs 0..10 while `b` waits 0..10 and `c` 5..10.
//! let result = SimResult {
//!     jobs: vec![job("x", 0, 0, 10), job("y", 0, 10, 20), job("x", 5, 20, 30)],
//!     executions: vec![run(0, 0, 10), run(1, 10, 20), run(2, 20, 30)],
//!     capacity_gpus_milli: 2_000,
//!     ..SimResult::default()
//! };
//! let c = Contention::of(&result, |e| e.gpu_milli_ms());
//! assert_eq!(c.contended_ms, 5); // x and y both wait in 5..10
//! assert_eq!(c.idle_milli_ms, 0); // the GPUs were never idle while someone waited
//! assert_eq!(c.shares[0].account, "x");
//! assert_eq!(c.shares[0].share, 1.0); // x held the GPUs in 5..10
//! ```

use std::collections::BTreeMap;

use crate::metrics::{AccountShare, root_account, share_list};
use crate::result::{Execution, JobStatus, SimResult};

/// The contention of one simulation (see the module documentation).
#[derive(Clone, Debug, PartialEq)]
pub struct Contention {
    /// Idle capacity × time while at least one job waited, in thousandths × ms.
    pub idle_milli_ms: u128,
    /// Time in which jobs of two or more top-level accounts waited, in ms.
    pub contended_ms: u64,
    /// Each account's part of the resource-time used during contended time, in the order of
    /// [`crate::metrics::Metrics::accounts`].
    pub shares: Vec<AccountShare>,
}

/// A change at one instant: of the resource one account holds, or of its waiting jobs.
#[derive(Default)]
struct Change {
    held: BTreeMap<usize, i128>,
    waiting: BTreeMap<usize, i64>,
}

impl Contention {
    /// The contention of `result`, measuring executions with `held` (resource-time in
    /// thousandths × ms; capacity is the GPUs, or the cpus when the cluster has none).
    pub fn of(result: &SimResult, held: impl Fn(&Execution) -> u128) -> Contention {
        let capacity = if result.capacity_gpus_milli > 0 {
            result.capacity_gpus_milli
        } else {
            result.capacity_cpus_milli
        };
        // Teams numbered in order of first appearance, found by name.
        let mut names: Vec<&str> = Vec::new();
        let mut numbers: BTreeMap<&str, usize> = BTreeMap::new();
        let mut team_of = |job: usize| {
            let name = root_account(result, job);
            *numbers.entry(name).or_insert_with(|| {
                names.push(name);
                names.len() - 1
            })
        };
        let horizon = result
            .executions
            .iter()
            .map(|e| e.end_ms)
            .chain(result.jobs.iter().map(|j| j.submit_ms))
            .max()
            .unwrap_or(0);
        let mut changes: BTreeMap<u64, Change> = BTreeMap::new();
        let mut runs: Vec<Vec<&Execution>> = vec![Vec::new(); result.jobs.len()];
        for execution in &result.executions {
            let team = team_of(execution.job);
            let length = execution.end_ms - execution.start_ms;
            // The rate of the execution's resource-time: its amount held, in thousandths.
            let rate = held(execution).checked_div(u128::from(length)).unwrap_or(0) as i128;
            *changes
                .entry(execution.start_ms)
                .or_default()
                .held
                .entry(team)
                .or_default() += rate;
            *changes
                .entry(execution.end_ms)
                .or_default()
                .held
                .entry(team)
                .or_default() -= rate;
            runs[execution.job].push(execution);
        }
        for (index, job) in result.jobs.iter().enumerate() {
            if job.status == JobStatus::Rejected {
                continue;
            }
            let team = team_of(index);
            let mut runs = std::mem::take(&mut runs[index]);
            runs.sort_by_key(|e| e.start_ms);
            let mut from = job.submit_ms;
            let mut add = |start: u64, end: u64| {
                if start < end {
                    *changes
                        .entry(start)
                        .or_default()
                        .waiting
                        .entry(team)
                        .or_default() += 1;
                    *changes
                        .entry(end)
                        .or_default()
                        .waiting
                        .entry(team)
                        .or_default() -= 1;
                }
            };
            for run in &runs {
                add(from, run.start_ms);
                from = run.end_ms;
            }
            let until = match job.end_ms {
                // Cancelled before it started.
                Some(end) if runs.is_empty() => end,
                // It ended with its last execution.
                Some(_) => from,
                // Never (re)started.
                None => horizon,
            };
            add(from, until);
        }
        let teams = names.len();
        let mut held_by = vec![0i128; teams];
        let mut waiting = vec![0i64; teams];
        let mut used = vec![0u128; teams];
        // Kept as the changes apply, so that each costs its own teams, not every team: the
        // total held, how many teams wait, and per team the contended time already counted
        // into its use (a team's holding is constant between its changes).
        let (mut busy, mut teams_waiting) = (0i128, 0usize);
        let mut counted_until = vec![0u64; teams];
        let (mut idle, mut contended) = (0u128, 0u64);
        let mut previous: Option<u64> = None;
        for (&time, change) in &changes {
            if let Some(start) = previous {
                let length = time - start;
                if teams_waiting >= 1 {
                    let free = (i128::from(capacity) - busy).max(0) as u128;
                    idle += free * u128::from(length);
                }
                if teams_waiting >= 2 {
                    contended += length;
                }
            }
            for (&team, &delta) in &change.held {
                let uncounted = contended - counted_until[team];
                used[team] += held_by[team].max(0) as u128 * u128::from(uncounted);
                counted_until[team] = contended;
                held_by[team] += delta;
                busy += delta;
            }
            for (&team, &delta) in &change.waiting {
                let was_waiting = waiting[team] > 0;
                waiting[team] += delta;
                match (was_waiting, waiting[team] > 0) {
                    (false, true) => teams_waiting += 1,
                    (true, false) => teams_waiting -= 1,
                    _ => {}
                }
            }
            previous = Some(time);
        }
        for (team, used) in used.iter_mut().enumerate() {
            let uncounted = contended - counted_until[team];
            *used += held_by[team].max(0) as u128 * u128::from(uncounted);
        }
        let usage: BTreeMap<&str, u128> = names.iter().copied().zip(used).collect();
        Contention {
            idle_milli_ms: idle,
            contended_ms: contended,
            shares: share_list(result, usage),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{ExecutionEnd, JobRecord};

    fn record(account: &str, submit: u64, start: Option<u64>, end: Option<u64>) -> JobRecord {
        JobRecord::for_test(account, submit, start, end)
    }

    fn run(job: usize, start: u64, end: u64, gpus: u64) -> Execution {
        Execution {
            job,
            start_ms: start,
            end_ms: end,
            tasks: 1,
            gpus_milli: gpus * 1000,
            cpus_milli: 1000,
            nodes: 1,
            lost_ms: 0,
            end: ExecutionEnd::Completed,
        }
    }

    #[test]
    fn idle_gpus_count_only_while_someone_waits() {
        // 4 GPUs: A holds 1 GPU 0..100; B asks for 4, waits 0..100 and runs 100..150.
        let result = SimResult {
            jobs: vec![
                record("x", 0, Some(0), Some(100)),
                record("x", 0, Some(100), Some(150)),
            ],
            executions: vec![run(0, 0, 100, 1), run(1, 100, 150, 4)],
            capacity_gpus_milli: 4_000,
            ..SimResult::default()
        };
        let c = Contention::of(&result, Execution::gpu_milli_ms);
        // 3 idle GPUs for 100 ms while B waited.
        assert_eq!(c.idle_milli_ms, 3_000 * 100);
        assert_eq!(c.contended_ms, 0, "one team only");
    }

    #[test]
    fn a_job_that_never_starts_waits_until_the_end_of_the_run() {
        let result = SimResult {
            jobs: vec![
                record("x", 0, Some(0), Some(50)),
                record("y", 10, None, None),
                record("z", 20, None, None),
            ],
            executions: vec![run(0, 0, 50, 2)],
            capacity_gpus_milli: 2_000,
            ..SimResult::default()
        };
        let c = Contention::of(&result, Execution::gpu_milli_ms);
        assert_eq!(c.contended_ms, 30, "y and z wait together from 20 to 50");
        // Idle: nothing idle while x runs 10..50; the run ends at 50.
        assert_eq!(c.idle_milli_ms, 0);
        let x = c.shares.iter().find(|s| s.account == "x").unwrap();
        assert_eq!(x.share, 1.0);
    }

    #[test]
    fn rejected_jobs_never_wait() {
        let mut rejected = record("y", 0, None, Some(0));
        rejected.status = JobStatus::Rejected;
        let result = SimResult {
            jobs: vec![record("x", 0, Some(5), Some(10)), rejected],
            executions: vec![run(0, 5, 10, 1)],
            capacity_gpus_milli: 1_000,
            ..SimResult::default()
        };
        let c = Contention::of(&result, Execution::gpu_milli_ms);
        assert_eq!(c.contended_ms, 0);
        assert_eq!(
            c.idle_milli_ms,
            1_000 * 5,
            "x waited 0..5 with the GPU idle"
        );
    }
}
