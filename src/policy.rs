//! The `Policy` trait: how pending jobs are ordered. The engine referees whatever a policy
//! proposes, so a custom policy can be wrong, never corrupting.

use serde::Serialize;

use crate::config::PriorityWeights;
use crate::model::job::JobSpec;

/// The normalised multifactor terms of one pending job, each in 0..=1 (Slurm's definitions).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
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

impl PriorityFactors {
    /// Each factor times its weight.
    ///
    /// ```
    /// use gangway::config::PriorityWeights;
    /// use gangway::policy::PriorityFactors;
    /// let weights = PriorityWeights { age: 100, fairshare: 10_000, ..Default::default() };
    /// let terms = PriorityFactors { age: 0.5, fairshare: 0.25, ..Default::default() }.weighted(&weights);
    /// assert_eq!((terms.age, terms.fairshare), (50.0, 2_500.0));
    /// assert_eq!(terms.sum(), 2_550.0);
    /// ```
    pub fn weighted(&self, w: &PriorityWeights) -> PriorityFactors {
        PriorityFactors {
            age: f64::from(w.age) * self.age,
            fairshare: f64::from(w.fairshare) * self.fairshare,
            job_size: f64::from(w.job_size) * self.job_size,
            partition: f64::from(w.partition) * self.partition,
            qos: f64::from(w.qos) * self.qos,
        }
    }

    /// The sum of the terms.
    ///
    /// ```
    /// use gangway::policy::PriorityFactors;
    /// let f = PriorityFactors { age: 1.0, qos: 0.5, ..Default::default() };
    /// assert_eq!(f.sum(), 1.5);
    /// ```
    pub fn sum(&self) -> f64 {
        self.age + self.fairshare + self.job_size + self.partition + self.qos
    }
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
        i64::from(job.priority) + f.weighted(&self.weights).sum().floor() as i64
    }
}
