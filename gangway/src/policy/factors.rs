//! Slurm's multifactor terms of a pending job, as [`crate::policy::PassContext::factors`]
//! computes them.

use serde::Serialize;

use crate::config::PriorityWeights;

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
