//! Step 3 of a pass: order pending jobs by partition tier, effective priority, submit time,
//! arrival. A job's fair-share factor is its association's in the factor table computed once
//! per pass (0 without configured accounts); its partition factor is the partition's
//! `priority_job_factor` over the largest one, its QoS factor its QoS's `priority` over the
//! largest one (0 without QoS), as Slurm normalises them.

use std::cmp::Reverse;

use super::Scheduler;
use super::settled::PendingSummary;
use crate::fairshare::FactorTable;
use crate::model::ids::JobId;
use crate::placement::FreeTotals;
use crate::policy::PriorityFactors;
use crate::state::{Job, JobTotals};

/// The sort key of a pending job: partition tier and priority (highest first), submit time,
/// arrival (unique, so the order is total).
pub(super) type OrderKey = (Reverse<i32>, Reverse<i64>, u64, u64);

/// A pending job with the factors and the priority that place it in the order.
pub(super) struct Scored {
    pub(super) id: JobId,
    pub(super) factors: PriorityFactors,
    pub(super) priority: i64,
}

impl Scheduler {
    /// Every pending job's sort key at `now_ms`, unsorted (the pass sorts only as far as it
    /// reads: [`super::lazy_order::LazyOrder`]), and what the pass needs to know of them all.
    pub(super) fn keyed_pending(&self, now_ms: u64) -> (Vec<(OrderKey, JobId)>, PendingSummary) {
        let scorer = Scorer::of(self, now_ms);
        let mut summary = PendingSummary {
            need: FreeTotals::floor(),
            all_queued: true,
            next_begin_ms: None,
        };
        let keyed = self
            .state
            .pending
            .iter()
            .filter_map(|&id| {
                let job = self.state.job(id)?;
                summary.need.include(&job.totals.need);
                summary.all_queued &= job.queue.is_some();
                if let Some(begin) = job.spec.begin_ms.filter(|&b| b > now_ms) {
                    summary.next_begin_ms =
                        Some(summary.next_begin_ms.map_or(begin, |n| n.min(begin)));
                }
                Some((scorer.score(self, job).0, id))
            })
            .collect();
        (keyed, summary)
    }

    /// Pending jobs in the order the pass considers them, with their factors and priority at
    /// `now_ms`. The fair-share factors are computed once for all jobs.
    pub(super) fn scored_pending(&self, now_ms: u64) -> Vec<Scored> {
        let scorer = Scorer::of(self, now_ms);
        let mut keyed: Vec<(OrderKey, Scored)> = self
            .state
            .pending
            .iter()
            .filter_map(|&id| {
                let job = self.state.job(id)?;
                let (key, factors, priority) = scorer.score(self, job);
                Some((
                    key,
                    Scored {
                        id,
                        factors,
                        priority,
                    },
                ))
            })
            .collect();
        keyed.sort_unstable_by_key(|(key, _)| *key);
        keyed.into_iter().map(|(_, scored)| scored).collect()
    }
}

/// What ordering one job at a time needs, computed once per pass.
struct Scorer {
    totals: ClusterTotals,
    normal: Normalisers,
    max_age: f64,
    now_ms: u64,
    shares: Option<FactorTable>,
}

impl Scorer {
    fn of(scheduler: &Scheduler, now_ms: u64) -> Self {
        Scorer {
            totals: ClusterTotals::of(scheduler),
            normal: Normalisers::of(scheduler),
            max_age: scheduler.state.config.policy.priority.max_age_ms.max(1) as f64,
            now_ms,
            shares: scheduler
                .state
                .fairshare
                .as_ref()
                .map(|fs| fs.compute_factors(now_ms)),
        }
    }

    /// The job's sort key, factors and priority.
    fn score(&self, scheduler: &Scheduler, job: &Job) -> (OrderKey, PriorityFactors, i64) {
        let eligible = job.submit_ms.max(job.spec.begin_ms.unwrap_or(0));
        let factors = PriorityFactors {
            age: (self.now_ms.saturating_sub(eligible) as f64 / self.max_age).min(1.0),
            fairshare: job
                .assoc
                .and_then(|a| self.shares.as_ref()?.get(a))
                .unwrap_or(0.0),
            job_size: self.totals.size_factor(job),
            partition: self.normal.partition(scheduler, job),
            qos: self.normal.qos(scheduler, job),
        };
        let tier = scheduler.state.partitions[job.partition.index()].priority_tier;
        let priority = scheduler.policy.priority(&job.spec, &factors);
        let key = (Reverse(tier), Reverse(priority), job.submit_ms, job.arrival);
        (key, factors, priority)
    }
}

/// The largest partition job factor and QoS priority, which normalise the partition and QoS
/// factors to 0..=1 as Slurm does.
struct Normalisers {
    job_factor: f64,
    qos_priority: f64,
}

impl Normalisers {
    fn of(scheduler: &Scheduler) -> Self {
        let state = &scheduler.state;
        let job_factor = state.partitions.iter().map(|p| p.priority_job_factor);
        let qos_priority = state.config.qos.iter().map(|q| q.priority);
        Normalisers {
            job_factor: f64::from(job_factor.max().unwrap_or(0)),
            qos_priority: f64::from(qos_priority.max().unwrap_or(0)),
        }
    }

    /// The partition's `priority_job_factor` over the largest one (0 when that is 0).
    fn partition(&self, scheduler: &Scheduler, job: &Job) -> f64 {
        let factor = scheduler.state.partitions[job.partition.index()].priority_job_factor;
        ratio(f64::from(factor), self.job_factor)
    }

    /// The QoS priority over the largest one (0 without QoS or when that is 0).
    fn qos(&self, scheduler: &Scheduler, job: &Job) -> f64 {
        let priority = job
            .spec
            .qos
            .as_deref()
            .and_then(|name| scheduler.state.config.qos(name))
            .map_or(0, |q| q.priority);
        ratio(f64::from(priority), self.qos_priority)
    }
}

/// `value / max`, 0 when `max` is 0.
fn ratio(value: f64, max: f64) -> f64 {
    if max > 0.0 { value / max } else { 0.0 }
}

/// Cluster-wide totals for the job-size factor.
struct ClusterTotals {
    gpu_milli: u64,
    cpu_milli: u64,
}

impl ClusterTotals {
    fn of(scheduler: &Scheduler) -> Self {
        let mut totals = ClusterTotals {
            gpu_milli: 0,
            cpu_milli: 0,
        };
        for node in scheduler.state.nodes.iter().flatten() {
            totals.gpu_milli += node.gpu_count as u64 * 1000;
            totals.cpu_milli += node.capacity.cpu_milli;
        }
        totals
    }

    /// The job's share of the cluster's GPUs (or cpus, for a job without GPUs), capped at 1.
    fn size_factor(&self, job: &Job) -> f64 {
        let JobTotals {
            gpu_milli: gpus,
            cpu_milli: cpus,
            ..
        } = job.totals;
        let share = if gpus > 0 && self.gpu_milli > 0 {
            gpus as f64 / self.gpu_milli as f64
        } else if self.cpu_milli > 0 {
            cpus as f64 / self.cpu_milli as f64
        } else {
            0.0
        };
        share.min(1.0)
    }
}
