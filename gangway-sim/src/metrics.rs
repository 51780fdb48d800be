//! The metrics of a simulation, each defined by a small pure function.
//!
//! - **wait**: first start − submit, over the jobs that started: mean, 50th and 95th
//!   percentile (nearest rank), maximum;
//! - **completion time** (job completion time, JCT): end − submit, over the jobs that started
//!   and ended (completed or killed), with the same statistics;
//! - **bounded slowdown** with τ = 10 s: the mean over jobs that started and ended of
//!   max(1, (end − submit) / max(run, τ)), where run is the job's last execution
//!   (end − last start); for a job that ran once, end − submit = wait + run;
//! - **utilization**: resource-time held by jobs / (capacity × makespan), over GPUs, or over
//!   cpus when the cluster has no GPUs;
//! - **makespan**: last end − first submit;
//! - **shares**: each account's part of the resource-time (sub-accounts count toward their
//!   top-level account) next to its target (its shares over the top-level shares);
//! - **Jain's index** over accounts of share ÷ target (of raw usage when there are no targets):
//!   (Σx)² / (n·Σx²), 1 when perfectly fair, 1/n when one account has everything;
//! - **preemptions** and **GPU-hours lost** (see [`crate::Execution::lost_ms`]): GPUs ×
//!   lost time summed over executions, in all and of the executions that ended preempted
//!   (**GPU-hours lost to preemption**: from each `preempt` to the job's `stopped`, or to its
//!   kill at grace expiry; the simulated job saves a checkpoint at the `preempt`, so no work
//!   before it is lost). They differ only under faults, where a requeued job also loses its
//!   work since its start;
//! - **reservation violations**: jobs that got a reservation before their first start and
//!   started later than the start first estimated for them (out of the jobs that got one);
//! - **GPU-hours idle while some job waited**, **contended hours** and **share when
//!   contended** ([`crate::contention`]);
//! - the **faults** injected (see [`crate::FaultCounts`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::contention::Contention;
use crate::result::{ExecutionEnd, FaultCounts, JobRecord, JobStatus, SimResult};

/// τ of the bounded slowdown: 10 s.
pub const SLOWDOWN_TAU_MS: u64 = 10_000;

const MS_PER_HOUR: f64 = 3_600_000.0;

/// Summary of waiting times, in seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WaitStats {
    /// Mean.
    pub mean_s: f64,
    /// Median (nearest rank).
    pub p50_s: f64,
    /// 95th percentile (nearest rank).
    pub p95_s: f64,
    /// Maximum.
    pub max_s: f64,
}

/// Mean, median, 95th percentile and maximum of `waits_ms`, in seconds; all 0 when empty.
///
/// ```
/// use gangway_sim::metrics::wait_stats;
/// let w = wait_stats(&[0, 10_000, 20_000, 90_000]);
/// assert_eq!((w.mean_s, w.p50_s, w.p95_s, w.max_s), (30.0, 10.0, 90.0, 90.0));
/// ```
pub fn wait_stats(waits_ms: &[u64]) -> WaitStats {
    if waits_ms.is_empty() {
        return WaitStats::default();
    }
    let mut sorted = waits_ms.to_vec();
    sorted.sort_unstable();
    let sum: u128 = sorted.iter().map(|&w| u128::from(w)).sum();
    let seconds = |ms: u64| ms as f64 / 1000.0;
    WaitStats {
        mean_s: sum as f64 / sorted.len() as f64 / 1000.0,
        p50_s: seconds(percentile(&sorted, 50)),
        p95_s: seconds(percentile(&sorted, 95)),
        max_s: seconds(sorted[sorted.len() - 1]),
    }
}

/// The nearest-rank `p`-th percentile of sorted values: the value at rank ⌈p·n/100⌉ (1-based);
/// 0 when empty.
///
/// ```
/// use gangway_sim::metrics::percentile;
/// assert_eq!(percentile(&[1, 2, 3, 4], 50), 2);
/// assert_eq!(percentile(&[1, 2, 3, 4], 95), 4);
/// assert_eq!(percentile(&[7], 0), 7);
/// ```
pub fn percentile(sorted: &[u64], p: u32) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (u64::from(p) * sorted.len() as u64).div_ceil(100).max(1);
    sorted[(rank as usize).min(sorted.len()) - 1]
}

/// The bounded slowdown of one job: max(1, response / max(run, τ)).
///
/// ```
/// use gangway_sim::metrics::{bounded_slowdown, SLOWDOWN_TAU_MS};
/// assert_eq!(bounded_slowdown(30_000, 10_000, SLOWDOWN_TAU_MS), 3.0);
/// assert_eq!(bounded_slowdown(6_000, 1_000, SLOWDOWN_TAU_MS), 1.0); // short job: τ bounds it
/// ```
pub fn bounded_slowdown(response_ms: u64, run_ms: u64, tau_ms: u64) -> f64 {
    let denominator = run_ms.max(tau_ms).max(1);
    (response_ms as f64 / denominator as f64).max(1.0)
}

/// Utilization: `used` resource-time over `capacity` × `makespan_ms`; 0 when either is 0.
///
/// ```
/// use gangway_sim::metrics::utilization;
/// // 8 GPUs (8000 thousandths) for 10 s; jobs held 4 GPUs for 10 s and 8 GPUs for 5 s.
/// let used = 4_000 * 10_000 + 8_000 * 5_000;
/// assert_eq!(utilization(used, 8_000, 10_000), 1.0);
/// assert_eq!(utilization(4_000 * 10_000, 8_000, 10_000), 0.5);
/// ```
pub fn utilization(used_milli_ms: u128, capacity_milli: u64, makespan_ms: u64) -> f64 {
    let available = u128::from(capacity_milli) * u128::from(makespan_ms);
    if available == 0 {
        return 0.0;
    }
    used_milli_ms as f64 / available as f64
}

/// Jain's fairness index (Σx)² / (n·Σx²); `None` when there is nothing to compare (no values,
/// or all 0).
///
/// ```
/// use gangway_sim::metrics::jain_index;
/// assert_eq!(jain_index(&[1.0, 1.0, 1.0]), Some(1.0));
/// assert_eq!(jain_index(&[1.0, 0.0, 0.0, 0.0]), Some(0.25));
/// assert_eq!(jain_index(&[]), None);
/// ```
pub fn jain_index(values: &[f64]) -> Option<f64> {
    let sum: f64 = values.iter().sum();
    let squares: f64 = values.iter().map(|x| x * x).sum();
    (squares > 0.0).then(|| sum * sum / (values.len() as f64 * squares))
}

/// Jobs that got a reservation and started later than first estimated, out of the jobs that
/// got one: `(violations, reservations)`. A job that never started is no violation.
///
/// ```
/// use gangway_sim::metrics::reservation_violations;
/// use gangway_sim::{JobRecord, JobStatus};
/// let job = |reserved, start| JobRecord { id: "a".into(), account: String::new(), submit_ms: 0,
///     first_start_ms: start, last_start_ms: start, end_ms: None,
///     status: JobStatus::NeverStarted, reserved_start_ms: reserved };
/// let jobs = [job(Some(10), Some(12)), job(Some(10), Some(10)), job(None, Some(50))];
/// assert_eq!(reservation_violations(&jobs), (1, 2));
/// ```
pub fn reservation_violations(jobs: &[JobRecord]) -> (u64, u64) {
    let mut violations = 0;
    let mut reservations = 0;
    for job in jobs {
        let Some(estimate) = job.reserved_start_ms else {
            continue;
        };
        reservations += 1;
        violations += u64::from(job.first_start_ms.is_some_and(|start| start > estimate));
    }
    (violations, reservations)
}

/// Which resource utilization and shares are measured in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Resource {
    /// GPUs (the cluster has some).
    Gpu,
    /// Cpus (the cluster has no GPUs, e.g. an SWF trace).
    Cpu,
}

/// One account's part of the resource-time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AccountShare {
    /// The account (`-` for jobs without one).
    pub account: String,
    /// Resource-hours used (GPU-hours, or cpu-hours for cpu clusters).
    pub hours: f64,
    /// Part of all accounts' usage, 0..=1.
    pub share: f64,
    /// Target share from the share tree; `None` when it has no target.
    pub target: Option<f64>,
}

/// How many jobs ended how.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobCounts {
    /// Jobs in the workload.
    pub submitted: u64,
    /// Jobs that started at least once.
    pub started: u64,
    /// Jobs that completed.
    pub completed: u64,
    /// Jobs killed by the scheduler.
    pub killed: u64,
    /// Jobs cancelled before starting.
    pub cancelled: u64,
    /// Submissions refused.
    pub rejected: u64,
    /// Jobs still pending at the end.
    pub never_started: u64,
}

/// Every metric of one simulation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// The resource of `utilization` and `accounts`.
    pub resource: Resource,
    /// Job counts.
    pub jobs: JobCounts,
    /// Waiting times of started jobs.
    pub wait: WaitStats,
    /// Completion times (end − submit) of jobs that started and ended, in seconds (the same
    /// statistics as the waits).
    #[serde(default)]
    pub completion: WaitStats,
    /// Mean bounded slowdown (τ = 10 s) of ended jobs.
    pub bounded_slowdown: f64,
    /// Utilization of `resource`, 0..=1.
    pub utilization: f64,
    /// Last end − first submit, in seconds.
    pub makespan_s: f64,
    /// Shares per account: targets' accounts first in share-tree order, then others by name.
    pub accounts: Vec<AccountShare>,
    /// Jain's index over `accounts` (share ÷ target, or usage without targets).
    pub jain_index: Option<f64>,
    /// `preempt` decisions.
    pub preemptions: u64,
    /// GPU-hours whose work was lost to preemption and requeues.
    pub gpu_hours_lost: f64,
    /// Of those, the GPU-hours lost to preemption: GPUs × (stop − `preempt`) of every
    /// execution that ended preempted.
    #[serde(default)]
    pub gpu_hours_lost_to_preemption: f64,
    /// Jobs that got a reservation before their first start.
    pub reservations: u64,
    /// Of those, the ones that started later than first estimated.
    pub reservation_violations: u64,
    /// The faults injected.
    pub faults: FaultCounts,
    /// Scheduler ticks.
    pub ticks: u64,
    /// GPU-hours (cpu-hours without GPUs) left idle while at least one job waited
    /// ([`crate::contention`]).
    #[serde(default)]
    pub idle_hours_while_waiting: f64,
    /// Hours in which jobs of two or more top-level accounts waited.
    #[serde(default)]
    pub contended_hours: f64,
    /// Each account's part of the resource-time used during those hours, in the order of
    /// `accounts` ("share when contended").
    #[serde(default)]
    pub contended_shares: Vec<AccountShare>,
    /// The submissions the scheduler refused (jobs that can never run on this machine, or name
    /// an account or queue it lacks), grouped by reason, most jobs first.
    #[serde(default)]
    pub rejections: Vec<RejectionCount>,
}

/// Jobs refused at submit for one reason.
///
/// ```
/// use gangway_sim::metrics::RejectionCount;
/// let messages = [
///     "unsatisfiable: submit j1: groups[0]: one task (8 GPUs) fits no node of partition default",
///     "unknown_queue: submit j2: no queue \"x\"",
///     "unsatisfiable: submit j3: groups[0]: one task (8 GPUs) fits no node of partition default",
/// ];
/// let counts = RejectionCount::group(messages.iter().map(|m| m.to_string()));
/// assert_eq!(counts[0], RejectionCount {
///     reason: "unsatisfiable: one task (8 GPUs) fits no node of partition default".into(),
///     jobs: 2,
///     example: "j1".into(),
/// });
/// assert_eq!(counts[1].reason, "unknown_queue: no queue \"x\"");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RejectionCount {
    /// The scheduler's message with the job's id (and a single group's `groups[0]`) left out.
    pub reason: String,
    /// Jobs refused for it.
    pub jobs: u64,
    /// The id of the first of them (empty when the message names no job).
    #[serde(default)]
    pub example: String,
}

impl RejectionCount {
    /// Groups rejection messages (as [`SimResult::rejections`] keeps them) by reason: most
    /// jobs first, then by reason.
    pub fn group(messages: impl IntoIterator<Item = String>) -> Vec<RejectionCount> {
        let mut counts: BTreeMap<String, (u64, String)> = BTreeMap::new();
        for message in messages {
            let (job, reason) = rejection_reason(&message);
            counts.entry(reason).or_insert((0, job)).0 += 1;
        }
        let mut counts: Vec<RejectionCount> = counts
            .into_iter()
            .map(|(reason, (jobs, example))| RejectionCount {
                reason,
                jobs,
                example,
            })
            .collect();
        counts.sort_by(|a, b| b.jobs.cmp(&a.jobs).then_with(|| a.reason.cmp(&b.reason)));
        counts
    }
}

/// The job a rejection message names, and the message without it: `submit ID: ` and a first
/// group's `groups[0]: ` cut.
fn rejection_reason(message: &str) -> (String, String) {
    let Some(at) = message.find("submit ") else {
        return (String::new(), message.to_string());
    };
    let rest = &message[at + "submit ".len()..];
    let Some(end) = rest.find(": ") else {
        return (String::new(), message.to_string());
    };
    let tail = &rest[end + 2..];
    let tail = tail.strip_prefix("groups[0]: ").unwrap_or(tail);
    (rest[..end].to_string(), format!("{}{tail}", &message[..at]))
}

impl Metrics {
    /// The metrics of a simulation's result.
    ///
    /// ```
    /// use gangway_sim::{metrics::Metrics, SimResult};
    /// let m = Metrics::of(&SimResult::default());
    /// assert_eq!((m.jobs.submitted, m.utilization, m.jain_index), (0, 0.0, None));
    /// ```
    pub fn of(result: &SimResult) -> Metrics {
        let resource = if result.capacity_gpus_milli > 0 {
            Resource::Gpu
        } else {
            Resource::Cpu
        };
        let held = |e: &crate::Execution| match resource {
            Resource::Gpu => e.gpu_milli_ms(),
            Resource::Cpu => e.cpu_milli_ms(),
        };
        let capacity = match resource {
            Resource::Gpu => result.capacity_gpus_milli,
            Resource::Cpu => result.capacity_cpus_milli,
        };
        let first_submit = result.jobs.iter().map(|j| j.submit_ms).min().unwrap_or(0);
        let last_end = result.executions.iter().map(|e| e.end_ms).max();
        let makespan_ms = last_end.map_or(0, |end| end.saturating_sub(first_submit));
        let used: u128 = result.executions.iter().map(held).sum();
        let waits: Vec<u64> = result.jobs.iter().filter_map(|j| j.wait_ms()).collect();
        let completions: Vec<u64> = result
            .jobs
            .iter()
            .filter_map(|j| j.completion_ms())
            .collect();
        let slowdowns: Vec<f64> = result
            .jobs
            .iter()
            .filter_map(|j| {
                let (start, end) = (j.last_start_ms?, j.end_ms?);
                Some(bounded_slowdown(
                    end.saturating_sub(j.submit_ms),
                    end.saturating_sub(start),
                    SLOWDOWN_TAU_MS,
                ))
            })
            .collect();
        let lost_of = |e: &&crate::Execution| u128::from(e.gpus_milli) * u128::from(e.lost_ms);
        let lost: u128 = result.executions.iter().map(|e| lost_of(&e)).sum();
        let lost_to_preemption: u128 = result
            .executions
            .iter()
            .filter(|e| e.end == ExecutionEnd::Preempted)
            .map(|e| lost_of(&e))
            .sum();
        let accounts = shares(result, held);
        let contention = Contention::of(result, held);
        let (violations, reservations) = reservation_violations(&result.jobs);
        let fairness: Vec<f64> = if result.targets.is_empty() {
            accounts.iter().map(|a| a.hours).collect()
        } else {
            accounts
                .iter()
                .filter_map(|a| Some(a.share / a.target.filter(|t| *t > 0.0)?))
                .collect()
        };
        Metrics {
            resource,
            jobs: counts(result),
            wait: wait_stats(&waits),
            completion: wait_stats(&completions),
            bounded_slowdown: mean(&slowdowns),
            utilization: utilization(used, capacity, makespan_ms),
            makespan_s: makespan_ms as f64 / 1000.0,
            jain_index: jain_index(&fairness),
            accounts,
            preemptions: result.preemptions,
            gpu_hours_lost: lost as f64 / 1000.0 / MS_PER_HOUR,
            gpu_hours_lost_to_preemption: lost_to_preemption as f64 / 1000.0 / MS_PER_HOUR,
            reservations,
            reservation_violations: violations,
            faults: result.faults,
            ticks: result.ticks,
            idle_hours_while_waiting: contention.idle_milli_ms as f64 / 1000.0 / MS_PER_HOUR,
            contended_hours: contention.contended_ms as f64 / MS_PER_HOUR,
            contended_shares: contention.shares,
            rejections: RejectionCount::group(result.rejections.iter().cloned()),
        }
    }
}

fn mean(values: &[f64]) -> f64 {
    if values.is_empty() {
        0.0
    } else {
        values.iter().sum::<f64>() / values.len() as f64
    }
}

fn counts(result: &SimResult) -> JobCounts {
    let mut counts = JobCounts {
        submitted: result.jobs.len() as u64,
        ..JobCounts::default()
    };
    for job in &result.jobs {
        counts.started += u64::from(job.first_start_ms.is_some());
        match job.status {
            JobStatus::Completed => counts.completed += 1,
            JobStatus::Killed => counts.killed += 1,
            JobStatus::Cancelled => counts.cancelled += 1,
            JobStatus::Rejected => counts.rejected += 1,
            JobStatus::NeverStarted => counts.never_started += 1,
        }
    }
    counts
}

fn shares(result: &SimResult, held: impl Fn(&crate::Execution) -> u128) -> Vec<AccountShare> {
    let mut usage: BTreeMap<&str, u128> = BTreeMap::new();
    for execution in &result.executions {
        *usage
            .entry(root_account(result, execution.job))
            .or_default() += held(execution);
    }
    share_list(result, usage)
}

/// The top-level account a job's usage counts toward (`-` for a job without one).
pub(crate) fn root_account(result: &SimResult, job: usize) -> &str {
    let account = result.jobs[job].account.as_str();
    let account = result
        .account_roots
        .get(account)
        .map_or(account, String::as_str);
    if account.is_empty() { "-" } else { account }
}

/// Each account's part of `usage` (resource-ms in thousandths per top-level account): the
/// targets' accounts first in share-tree order, then the others by name.
pub(crate) fn share_list(result: &SimResult, mut usage: BTreeMap<&str, u128>) -> Vec<AccountShare> {
    let total: u128 = usage.values().sum();
    let share = |used: u128| {
        if total == 0 {
            0.0
        } else {
            used as f64 / total as f64
        }
    };
    let hours = |used: u128| used as f64 / 1000.0 / MS_PER_HOUR;
    let mut out: Vec<AccountShare> = result
        .targets
        .iter()
        .map(|(name, target)| {
            let used = usage.remove(name.as_str()).unwrap_or(0);
            AccountShare {
                account: name.clone(),
                hours: hours(used),
                share: share(used),
                target: Some(*target),
            }
        })
        .collect();
    out.extend(usage.into_iter().map(|(name, used)| AccountShare {
        account: name.to_string(),
        hours: hours(used),
        share: share(used),
        target: None,
    }));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{Execution, JobRecord};

    fn job(account: &str, submit: u64, start: Option<u64>, end: Option<u64>) -> JobRecord {
        JobRecord::for_test(account, submit, start, end)
    }

    fn execution(job: usize, start: u64, end: u64, gpus: u64, lost: u64) -> Execution {
        Execution {
            job,
            start_ms: start,
            end_ms: end,
            tasks: 1,
            gpus_milli: gpus * 1000,
            cpus_milli: 1000,
            nodes: 1,
            lost_ms: lost,
            end: ExecutionEnd::Completed,
        }
    }

    #[test]
    fn wait_percentiles_by_nearest_rank() {
        // 20 waits of 1..=20 s: p50 is the 10th value, p95 the 19th.
        let waits: Vec<u64> = (1..=20).map(|s| s * 1000).collect();
        let w = wait_stats(&waits);
        assert_eq!(w.mean_s, 10.5);
        assert_eq!(w.p50_s, 10.0);
        assert_eq!(w.p95_s, 19.0);
        assert_eq!(w.max_s, 20.0);
        assert_eq!(wait_stats(&[]), WaitStats::default());
    }

    #[test]
    fn bounded_slowdown_cases() {
        // Waited 20 s, ran 10 s: (20 + 10) / 10 = 3.
        assert_eq!(bounded_slowdown(30_000, 10_000, 10_000), 3.0);
        // Waited 5 s, ran 2 s: τ replaces the run: 7 / 10 → bounded to 1.
        assert_eq!(bounded_slowdown(7_000, 2_000, 10_000), 1.0);
        // Waited 15 s, ran 5 s: 20 / 10 = 2.
        assert_eq!(bounded_slowdown(20_000, 5_000, 10_000), 2.0);
    }

    #[test]
    fn jain_index_cases() {
        assert_eq!(jain_index(&[2.0, 2.0]), Some(1.0));
        // (1 + 3)² / (2 · (1 + 9)) = 16 / 20.
        assert_eq!(jain_index(&[1.0, 3.0]), Some(0.8));
        assert_eq!(jain_index(&[0.0, 0.0]), None);
    }

    #[test]
    fn metrics_of_a_small_result() {
        // A 4-GPU cluster. Job 0 (team a) waits 0, runs 0–10 s on 4 GPUs; job 1 (team b) is
        // submitted at 0, waits 10 s, runs 10–30 s on 2 GPUs; job 2 (team b) never starts.
        let result = SimResult {
            jobs: vec![
                job("a", 0, Some(0), Some(10_000)),
                job("b", 0, Some(10_000), Some(30_000)),
                job("b", 5_000, None, None),
            ],
            executions: vec![
                execution(0, 0, 10_000, 4, 0),
                execution(1, 10_000, 30_000, 2, 3_600_000),
            ],
            capacity_gpus_milli: 4_000,
            targets: vec![("a".into(), 0.5), ("b".into(), 0.5)],
            preemptions: 2,
            ..SimResult::default()
        };
        let m = Metrics::of(&result);
        assert_eq!(m.resource, Resource::Gpu);
        assert_eq!(m.jobs.submitted, 3);
        assert_eq!(m.jobs.started, 2);
        assert_eq!(m.jobs.completed, 2);
        assert_eq!(m.jobs.never_started, 1);
        assert_eq!(m.wait.mean_s, 5.0);
        assert_eq!(m.wait.max_s, 10.0);
        // Completion times 10 s and 30 s; job 2 never ended.
        assert_eq!(m.completion.mean_s, 20.0);
        assert_eq!(m.completion.max_s, 30.0);
        // Slowdowns: max(1, 10/10) = 1 and 30/20 = 1.5.
        assert_eq!(m.bounded_slowdown, 1.25);
        // Used: 4·10 + 2·20 = 80 GPU-s of 4 · 30 = 120.
        assert!((m.utilization - 80.0 / 120.0).abs() < 1e-12);
        assert_eq!(m.makespan_s, 30.0);
        // Both teams used 40 GPU-s: shares 0.5 each against targets 0.5.
        assert_eq!(m.accounts.len(), 2);
        assert_eq!(m.accounts[0].share, 0.5);
        assert_eq!(m.accounts[1].target, Some(0.5));
        assert_eq!(m.jain_index, Some(1.0));
        assert_eq!(m.preemptions, 2);
        // 2 GPUs × 1 hour lost.
        assert_eq!(m.gpu_hours_lost, 2.0);
    }

    #[test]
    fn lost_gpu_hours_split_preemptions_from_requeues() {
        // Job 0 on 2 GPUs is preempted at 1 h and stops 30 s later, then runs to its end; job
        // 1 on 4 GPUs is requeued after 1 h (its node failed) and starts over. Job 2 is
        // cancelled before it starts: it has no completion time.
        let mut preempted = execution(0, 0, 3_630_000, 2, 30_000);
        preempted.end = ExecutionEnd::Preempted;
        let mut requeued = execution(1, 0, 3_600_000, 4, 3_600_000);
        requeued.end = ExecutionEnd::Requeued;
        let mut cancelled = job("b", 0, None, Some(50));
        cancelled.status = JobStatus::Cancelled;
        let result = SimResult {
            jobs: vec![
                job("a", 0, Some(0), Some(7_200_000)),
                job("b", 0, Some(0), Some(10_800_000)),
                cancelled,
            ],
            executions: vec![
                preempted,
                requeued,
                execution(0, 3_630_000, 7_200_000, 2, 0),
                execution(1, 3_600_000, 10_800_000, 4, 0),
            ],
            capacity_gpus_milli: 8_000,
            preemptions: 1,
            ..SimResult::default()
        };
        let m = Metrics::of(&result);
        // 2 GPUs × 30 s = 1/60 GPU-hour to preemption; 4 GPU-hours more to the requeue.
        assert!((m.gpu_hours_lost_to_preemption - 2.0 / 120.0).abs() < 1e-12);
        assert!((m.gpu_hours_lost - (4.0 + 2.0 / 120.0)).abs() < 1e-12);
        // Completion: 2 h and 3 h, from submit to the end of the last execution.
        assert_eq!(m.completion.mean_s, 9_000.0);
        assert_eq!(m.completion.p50_s, 7_200.0);
    }

    #[test]
    fn reservation_violations_count_late_first_starts() {
        // Job 0 was promised 20 s and started at 25 s (late); job 1 was promised 30 s and
        // started at 30 s (on time); job 2 was promised 40 s and started early at 35 s; job 3
        // was promised 50 s and never started; job 4 never had a reservation.
        let mut jobs = vec![
            job("a", 0, Some(25_000), Some(30_000)),
            job("a", 0, Some(30_000), Some(40_000)),
            job("a", 0, Some(35_000), Some(45_000)),
            job("a", 0, None, None),
            job("a", 0, Some(60_000), Some(70_000)),
        ];
        for (record, estimate) in jobs.iter_mut().zip([20_000, 30_000, 40_000, 50_000]) {
            record.reserved_start_ms = Some(estimate);
        }
        let m = Metrics::of(&SimResult {
            jobs,
            ..SimResult::default()
        });
        assert_eq!((m.reservation_violations, m.reservations), (1, 4));
    }

    #[test]
    fn cpu_cluster_measures_cpus_and_uses_raw_usage_for_jain() {
        // 2 cpus; job 0 of group g1 holds 1 cpu for 10 s; job 1 of g2 1 cpu for 30 s.
        let result = SimResult {
            jobs: vec![
                job("g1", 0, Some(0), Some(10_000)),
                job("", 0, Some(0), Some(30_000)),
            ],
            executions: vec![execution(0, 0, 10_000, 0, 0), execution(1, 0, 30_000, 0, 0)],
            capacity_cpus_milli: 2_000,
            ..SimResult::default()
        };
        let m = Metrics::of(&result);
        assert_eq!(m.resource, Resource::Cpu);
        assert!((m.utilization - 40.0 / 60.0).abs() < 1e-12);
        // Accounts by name: "-" (no account) then "g1"; usage 30 and 10 cpu-seconds.
        assert_eq!(m.accounts[0].account, "-");
        assert_eq!(m.accounts[1].share, 0.25);
        // (30 + 10)² / (2 · (900 + 100)) = 0.8 (in cpu-hours, same ratio).
        assert!((m.jain_index.unwrap() - 0.8).abs() < 1e-12);
    }

    #[test]
    fn sub_accounts_count_toward_their_top_level_account() {
        let mut result = SimResult {
            jobs: vec![job("child", 0, Some(0), Some(10_000))],
            executions: vec![execution(0, 0, 10_000, 1, 0)],
            capacity_gpus_milli: 1_000,
            targets: vec![("top".into(), 1.0)],
            ..SimResult::default()
        };
        result.account_roots.insert("child".into(), "top".into());
        let m = Metrics::of(&result);
        assert_eq!(m.accounts.len(), 1);
        assert_eq!(m.accounts[0].share, 1.0);
    }
}
