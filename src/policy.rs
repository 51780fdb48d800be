//! The `Policy` trait: how pending jobs are ordered. The engine referees whatever a policy
//! proposes, so a custom policy can be wrong, never corrupting.

use crate::config::PriorityWeights;
use crate::model::job::JobSpec;

/// The normalised multifactor terms of one pending job, each in 0..=1 (Slurm's definitions).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PriorityFactors {
    /// Time eligible over `max_age_ms`, capped at 1.
    pub age: f64,
    /// Fair-share factor of the job's association.
    pub fairshare: f64,
    /// Share of the cluster the job asks for (GPUs, else cpus).
    pub job_size: f64,
    /// The partition's job factor.
    pub partition: f64,
    /// The job's QoS priority, normalised.
    pub qos: f64,
}

/// Orders pending jobs. Higher effective priority first; ties break by submit time, then arrival.
///
/// ```
/// use gangway::policy::{Policy, PriorityFactors};
/// use gangway::JobSpec;
///
/// /// Shortest job first: the shorter the time limit, the higher the priority.
/// struct ShortestFirst;
/// impl Policy for ShortestFirst {
///     fn priority(&self, job: &JobSpec, _factors: &PriorityFactors) -> i64 {
///         -(job.time_limit_ms as i64)
///     }
/// }
/// let short = JobSpec::new("s", 60_000, 1);
/// let long = JobSpec::new("l", 600_000, 1);
/// let f = PriorityFactors::default();
/// assert!(ShortestFirst.priority(&short, &f) > ShortestFirst.priority(&long, &f));
/// ```
pub trait Policy: Send + Sync {
    /// The job's effective priority.
    fn priority(&self, job: &JobSpec, factors: &PriorityFactors) -> i64;
}

/// Slurm's multifactor priority: base + floor(Σ weight × factor).
///
/// ```
/// use gangway::config::PriorityWeights;
/// use gangway::policy::{Multifactor, Policy, PriorityFactors};
/// let policy = Multifactor { weights: PriorityWeights { fairshare: 10_000, ..Default::default() } };
/// let job = gangway::JobSpec::new("a", 60_000, 1).with_priority(5);
/// let factors = PriorityFactors { fairshare: 0.25, ..Default::default() };
/// assert_eq!(policy.priority(&job, &factors), 2_505);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Multifactor {
    /// The weights.
    pub weights: PriorityWeights,
}

impl Policy for Multifactor {
    fn priority(&self, job: &JobSpec, f: &PriorityFactors) -> i64 {
        let w = &self.weights;
        let sum = f64::from(w.age) * f.age
            + f64::from(w.fairshare) * f.fairshare
            + f64::from(w.job_size) * f.job_size
            + f64::from(w.partition) * f.partition
            + f64::from(w.qos) * f.qos;
        i64::from(job.priority) + sum.floor() as i64
    }
}
