//! What every hook of one pass sees besides its job and node: the state, the time, the cluster
//! totals, the normalisers of Slurm's multifactor priority and the fair-share factors, computed
//! once per pass.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::fairshare::FactorTable;
use crate::model::amount::Milli;
use crate::policy::PriorityFactors;
use crate::state::{ClusterState, Job, JobTotals, JobView};

/// What a pass computes once for all hooks: the time, the cluster totals, the multifactor
/// normalisers and the fair-share factors.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PassFigures {
    now_ms: u64,
    gpu_milli: u64,
    cpu_milli: u64,
    job_factor: f64,
    qos_priority: f64,
    max_age: f64,
    shares: Option<Arc<FactorTable>>,
}

impl PassFigures {
    /// The figures of a pass at `now_ms` over `state`.
    pub fn new(state: &ClusterState, now_ms: u64) -> Self {
        let shares = state.fairshare.as_ref().map(|fs| fs.factors_at(now_ms));
        Self::with_shares(state, now_ms, shares)
    }

    /// The figures of a pass at `now_ms` over `state` with the fair-share factors of an
    /// earlier calculation (`policy.priority.calc_period_ms`): what a pass between two
    /// calculations sees.
    pub(crate) fn with_shares_of(state: &ClusterState, now_ms: u64, earlier: &PassFigures) -> Self {
        Self::with_shares(state, now_ms, earlier.shares.clone())
    }

    /// The time of these figures.
    pub(crate) fn now_ms(&self) -> u64 {
        self.now_ms
    }

    fn with_shares(state: &ClusterState, now_ms: u64, shares: Option<Arc<FactorTable>>) -> Self {
        let capacity = state.capacity();
        let job_factor = state.partitions.iter().map(|p| p.priority_job_factor);
        let qos_priority = state.config.qos.iter().map(|q| q.priority);
        PassFigures {
            now_ms,
            gpu_milli: capacity.gpu_milli,
            cpu_milli: capacity.cpu_milli,
            job_factor: f64::from(job_factor.max().unwrap_or(0)),
            qos_priority: f64::from(qos_priority.max().unwrap_or(0)),
            max_age: state.config.policy.priority.max_age_ms.max(1) as f64,
            shares,
        }
    }

    /// The context every hook of the pass sees: these figures over `state`.
    pub fn context<'a>(&'a self, state: &'a ClusterState) -> PassContext<'a> {
        PassContext {
            state,
            figures: self,
        }
    }
}

/// What every hook of one pass sees besides its job and node: the state (as it is at the
/// call, so later jobs see the starts of earlier ones) and the pass's figures.
///
/// ```
/// use gangway::{ClusterConfig, Event, JobSpec, Milli, Scheduler};
/// use gangway::policy::PassFigures;
/// let cluster: ClusterConfig = serde_json::from_str(r#"{"nodes": [
///     {"name": "n1", "cpus": 8, "gpus": {"model": "a100", "count": 4}}]}"#).unwrap();
/// let mut s = Scheduler::new(cluster).unwrap();
/// let job = JobSpec::new("a", 60_000, 1).with_gpus(Milli::from_units(2));
/// s.tick(0, vec![Event::Submit { job }]).unwrap();
/// let figures = PassFigures::new(s.state(), 0);
/// let context = figures.context(s.state());
/// assert_eq!(context.total_gpus(), Milli::from_units(4));
/// let a = s.state().job_by_name("a").unwrap();
/// assert_eq!(context.factors(a).job_size, 0.5); // half the cluster's GPUs
/// ```
#[derive(Clone, Copy)]
pub struct PassContext<'a> {
    state: &'a ClusterState,
    figures: &'a PassFigures,
}

impl<'a> PassContext<'a> {
    /// The state (read-only).
    pub fn state(&self) -> &'a ClusterState {
        self.state
    }

    /// The pass's time.
    pub fn now_ms(&self) -> u64 {
        self.figures.now_ms
    }

    /// The cluster's GPUs (every device of every node).
    pub fn total_gpus(&self) -> Milli {
        Milli::from_milli(self.figures.gpu_milli)
    }

    /// The cluster's cpus.
    pub fn total_cpus(&self) -> Milli {
        Milli::from_milli(self.figures.cpu_milli)
    }

    /// The fair-share factor of the job's association (0 without accounts).
    pub fn fairshare_factor(&self, job: JobView<'_>) -> f64 {
        job.record()
            .assoc
            .and_then(|a| self.figures.shares.as_ref()?.get(a))
            .unwrap_or(0.0)
    }

    /// The job's multifactor terms, each in 0..=1, as Slurm normalises them: age over
    /// `max_age_ms`, its association's fair-share factor, its share of the cluster's GPUs (cpus
    /// for a job without GPUs), its partition's `priority_job_factor` and its QoS priority over
    /// the largest ones.
    pub fn factors(&self, job: JobView<'_>) -> PriorityFactors {
        let record = job.record();
        let eligible = record.submit_ms.max(record.spec.begin_ms.unwrap_or(0));
        PriorityFactors {
            age: (self.now_ms().saturating_sub(eligible) as f64 / self.figures.max_age).min(1.0),
            fairshare: self.fairshare_factor(job),
            job_size: self.size_factor(record),
            partition: self.partition_factor(record),
            qos: self.qos_factor(record),
        }
    }

    /// The job's share of the cluster's GPUs (or cpus, for a job without GPUs), capped at 1.
    fn size_factor(&self, job: &Job) -> f64 {
        let JobTotals {
            gpu_milli: gpus,
            cpu_milli: cpus,
            ..
        } = job.totals;
        let f = self.figures;
        let share = if gpus > 0 && f.gpu_milli > 0 {
            gpus as f64 / f.gpu_milli as f64
        } else if f.cpu_milli > 0 {
            cpus as f64 / f.cpu_milli as f64
        } else {
            0.0
        };
        share.min(1.0)
    }

    /// The partition's `priority_job_factor` over the largest one (0 when that is 0).
    fn partition_factor(&self, job: &Job) -> f64 {
        let factor = self.state.partitions[job.partition.index()].priority_job_factor;
        ratio(f64::from(factor), self.figures.job_factor)
    }

    /// The QoS priority over the largest one (0 without QoS or when that is 0).
    fn qos_factor(&self, job: &Job) -> f64 {
        let priority = job
            .spec
            .qos
            .as_deref()
            .and_then(|name| self.state.config.qos(name))
            .map_or(0, |q| q.priority);
        ratio(f64::from(priority), self.figures.qos_priority)
    }
}

/// `value / max`, 0 when `max` is 0.
fn ratio(value: f64, max: f64) -> f64 {
    if max > 0.0 { value / max } else { 0.0 }
}
