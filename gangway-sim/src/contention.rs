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

/// A change at one instant to what one team (top-level account) holds, or to how many of its
/// jobs wait.
struct Change {
    at: u64,
    team: usize,
    held: i128,
    waiting: i64,
}

/// Every job's executions, in start order (as recorded where they tie).
struct RunsByJob<'a> {
    /// The executions, job by job.
    runs: Vec<&'a Execution>,
    /// Where each job's executions begin in `runs`, and one more: where the last one's end.
    first: Vec<usize>,
}

/// The executions of `result` grouped by job: counted per job, placed in recorded order, each
/// job's few then put in start order.
fn runs_by_job(result: &SimResult) -> RunsByJob<'_> {
    let mut first = vec![0usize; result.jobs.len() + 1];
    for execution in &result.executions {
        first[execution.job + 1] += 1;
    }
    for job in 0..result.jobs.len() {
        first[job + 1] += first[job];
    }
    let mut next = first.clone();
    let mut runs: Vec<Option<&Execution>> = vec![None; result.executions.len()];
    for execution in &result.executions {
        runs[next[execution.job]] = Some(execution);
        next[execution.job] += 1;
    }
    let mut runs: Vec<&Execution> = runs.into_iter().flatten().collect();
    for job in 0..result.jobs.len() {
        runs[first[job]..first[job + 1]].sort_by_key(|e| e.start_ms);
    }
    RunsByJob { runs, first }
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
        // Teams numbered in order of first appearance, each job's found by name once.
        let mut names: Vec<&str> = Vec::new();
        let mut numbers: BTreeMap<&str, usize> = BTreeMap::new();
        let mut teams: Vec<Option<usize>> = vec![None; result.jobs.len()];
        let mut team_of = |job: usize| {
            *teams[job].get_or_insert_with(|| {
                let name = root_account(result, job);
                *numbers.entry(name).or_insert_with(|| {
                    names.push(name);
                    names.len() - 1
                })
            })
        };
        let horizon = result
            .executions
            .iter()
            .map(|e| e.end_ms)
            .chain(result.jobs.iter().map(|j| j.submit_ms))
            .max()
            .unwrap_or(0);
        let mut changes: Vec<Change> = Vec::with_capacity(4 * result.executions.len());
        for execution in &result.executions {
            let team = team_of(execution.job);
            let length = execution.end_ms - execution.start_ms;
            // The rate of the execution's resource-time: its amount held, in thousandths.
            let rate = held(execution).checked_div(u128::from(length)).unwrap_or(0) as i128;
            let held = |at, held| Change {
                at,
                team,
                held,
                waiting: 0,
            };
            changes.push(held(execution.start_ms, rate));
            changes.push(held(execution.end_ms, -rate));
        }
        let runs = runs_by_job(result);
        for (index, job) in result.jobs.iter().enumerate() {
            let job_runs = &runs.runs[runs.first[index]..runs.first[index + 1]];
            if job.status == JobStatus::Rejected {
                continue;
            }
            let team = team_of(index);
            let mut wait = |start: u64, end: u64| {
                if start < end {
                    let waiting = |at, waiting| Change {
                        at,
                        team,
                        held: 0,
                        waiting,
                    };
                    changes.push(waiting(start, 1));
                    changes.push(waiting(end, -1));
                }
            };
            let mut from = job.submit_ms;
            for run in job_runs {
                wait(from, run.start_ms);
                from = run.end_ms;
            }
            let until = match job.end_ms {
                // Cancelled before it started.
                Some(end) if job_runs.is_empty() => end,
                // It ended with its last execution.
                Some(_) => from,
                // Never (re)started.
                None => horizon,
            };
            wait(from, until);
        }
        // The order of the changes at one instant does not matter: each applies in full before
        // the next interval is measured. Sorted as (time, place) pairs, lighter to move.
        let mut order: Vec<(u64, u32)> = (changes.iter().enumerate())
            .map(|(place, change)| (change.at, place as u32))
            .collect();
        order.sort_unstable_by_key(|&(at, _)| at);
        let teams = names.len();
        let mut held_by = vec![0i128; teams];
        let mut waiting = vec![0i64; teams];
        let mut used = vec![0u128; teams];
        // Kept as the changes apply, so that each costs its own team, not every team: the
        // total held, how many teams wait, and per team the contended time already counted
        // into its use (a team's holding is constant between its changes).
        let (mut busy, mut teams_waiting) = (0i128, 0usize);
        let mut counted_until = vec![0u64; teams];
        let (mut idle, mut contended) = (0u128, 0u64);
        let mut previous: Option<u64> = None;
        for change in order.iter().map(|&(_, place)| &changes[place as usize]) {
            if let Some(start) = previous.filter(|&start| start < change.at) {
                let length = change.at - start;
                if teams_waiting >= 1 {
                    let free = (i128::from(capacity) - busy).max(0) as u128;
                    idle += free * u128::from(length);
                }
                if teams_waiting >= 2 {
                    contended += length;
                }
            }
            let team = change.team;
            if change.held != 0 {
                let uncounted = contended - counted_until[team];
                used[team] += held_by[team].max(0) as u128 * u128::from(uncounted);
                counted_until[team] = contended;
                held_by[team] += change.held;
                busy += change.held;
            }
            let was_waiting = waiting[team] > 0;
            waiting[team] += change.waiting;
            match (was_waiting, waiting[team] > 0) {
                (false, true) => teams_waiting += 1,
                (true, false) => teams_waiting -= 1,
                _ => {}
            }
            previous = Some(change.at);
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

    /// Contention measured instant by instant (every ms of the run, and to the last cancel), as
    /// the module docs define it: who waits, what each execution holds (its amount spread evenly over its length, in
    /// whole thousandths per ms), what is idle.
    fn by_instant(result: &SimResult) -> (u128, u64, BTreeMap<String, u128>) {
        let capacity = result.capacity_gpus_milli;
        let horizon = (result.executions.iter().map(|e| e.end_ms))
            .chain(result.jobs.iter().map(|j| j.submit_ms))
            .max()
            .unwrap_or(0);
        let rate = |e: &Execution| {
            let length = u128::from(e.end_ms - e.start_ms);
            e.gpu_milli_ms().checked_div(length).unwrap_or(0)
        };
        let (mut idle, mut contended) = (0u128, 0u64);
        let mut used: BTreeMap<String, u128> = BTreeMap::new();
        let last_end = result.jobs.iter().filter_map(|j| j.end_ms).max();
        for t in 0..horizon.max(last_end.unwrap_or(0)) {
            let runs_at = |job: usize| {
                (result.executions.iter()).any(|e| e.job == job && e.start_ms <= t && t < e.end_ms)
            };
            let mut waiting: Vec<&str> = Vec::new();
            for (index, job) in result.jobs.iter().enumerate() {
                let mut runs: Vec<&Execution> = (result.executions.iter())
                    .filter(|e| e.job == index)
                    .collect();
                runs.sort_by_key(|e| e.start_ms);
                let until = match (job.end_ms, runs.last()) {
                    (Some(end), None) => end,
                    (Some(_), Some(last)) => last.end_ms,
                    (None, _) => horizon,
                };
                let waits = job.status != JobStatus::Rejected
                    && job.submit_ms <= t
                    && t < until
                    && !runs_at(index);
                if waits {
                    waiting.push(root_account(result, index));
                }
            }
            waiting.sort_unstable();
            waiting.dedup();
            let held: u128 = (result.executions.iter())
                .filter(|e| e.start_ms <= t && t < e.end_ms)
                .map(rate)
                .sum();
            if !waiting.is_empty() {
                idle += u128::from(capacity).saturating_sub(held);
            }
            if waiting.len() >= 2 {
                contended += 1;
                for e in (result.executions.iter()).filter(|e| e.start_ms <= t && t < e.end_ms) {
                    *used
                        .entry(root_account(result, e.job).to_string())
                        .or_default() += rate(e);
                }
            }
        }
        (idle, contended, used)
    }

    /// Seeded random runs of three teams (preempted and requeued jobs run several times, some
    /// never start, some are refused) measure alike instant by instant.
    #[test]
    fn contention_equals_its_measure_instant_by_instant() {
        let mut seed = 7u64;
        let mut next = |modulo: u64| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (seed >> 33) % modulo
        };
        for round in 0..300 {
            let (mut jobs, mut executions) = (Vec::new(), Vec::new());
            for index in 0..1 + next(6) as usize {
                let account = ["x", "y", "z"][next(3) as usize];
                let submit = next(40);
                let mut record = record(account, submit, None, None);
                let mut from = submit;
                for _ in 0..next(3) {
                    let start = from + next(15);
                    let end = start + 1 + next(20);
                    executions.push(run(index, start, end, 1 + next(3)));
                    record.first_start_ms.get_or_insert(start);
                    record.end_ms = Some(end);
                    from = end;
                }
                match next(5) {
                    0 => record.status = JobStatus::Rejected,
                    1 => record.end_ms = None,
                    2 if record.first_start_ms.is_none() => record.end_ms = Some(submit + next(30)),
                    _ => {}
                }
                jobs.push(record);
            }
            let result = SimResult {
                jobs,
                executions,
                capacity_gpus_milli: 6_000,
                ..SimResult::default()
            };
            let c = Contention::of(&result, Execution::gpu_milli_ms);
            let (idle, contended, used) = by_instant(&result);
            assert_eq!(
                (c.idle_milli_ms, c.contended_ms),
                (idle, contended),
                "round {round}"
            );
            let total: u128 = used.values().sum();
            for share in &c.shares {
                let part = used.get(&share.account).copied().unwrap_or(0);
                let expected = if total == 0 {
                    0.0
                } else {
                    part as f64 / total as f64
                };
                assert!(
                    (share.share - expected).abs() < 1e-9,
                    "round {round}: {share:?}"
                );
            }
        }
    }
}
