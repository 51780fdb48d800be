//! Slurm's multifactor priority as an order plug-in: `base + floor(Σ weight × factor)`.

use crate::config::PriorityWeights;
use crate::policy::{PassContext, Plugin};
use crate::state::JobView;

/// Slurm's multifactor priority: the job's base priority plus the floor of its weighted
/// factors ([`PassContext::factors`]). Its `explain_key` terms are the weighted factors, as
/// `sprio -l` shows them.
///
/// ```
/// use gangway::config::PriorityWeights;
/// use gangway::policy::builtin::Multifactor;
/// use gangway::policy::PriorityFactors;
/// let factors = PriorityFactors { fairshare: 0.25, ..Default::default() };
/// let configured = PriorityWeights { fairshare: 1_000, ..Default::default() };
/// // The configured weights, as the default profile's order reads them.
/// assert_eq!(Multifactor::from_config().priority(5, &factors, &configured), 255);
/// // Fixed weights, whatever the configuration says.
/// let fixed = Multifactor::with_weights(PriorityWeights { fairshare: 10_000, ..Default::default() });
/// assert_eq!(fixed.priority(5, &factors, &configured), 2_505);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Multifactor {
    /// `None`: the configuration's `policy.priority.weights`, read at every pass (so a
    /// reconfiguration's new weights apply).
    weights: Option<PriorityWeights>,
}

impl Multifactor {
    /// With the configured weights (the default profile's order).
    pub fn from_config() -> Self {
        Multifactor { weights: None }
    }

    /// With fixed weights, whatever the configuration says.
    pub fn with_weights(weights: PriorityWeights) -> Self {
        Multifactor {
            weights: Some(weights),
        }
    }

    /// `base + floor(Σ weight × factor)`, with this policy's weights: its own, or under
    /// [`Multifactor::from_config`] the `configured` ones (`policy.priority.weights`). The
    /// job's order key is exactly this.
    pub fn priority(
        &self,
        base: i32,
        factors: &crate::policy::PriorityFactors,
        configured: &PriorityWeights,
    ) -> i64 {
        let weights = self.weights.as_ref().unwrap_or(configured);
        i64::from(base) + factors.weighted(weights).sum().floor() as i64
    }

    /// Whether its key reads only the job and the configuration, never the time, the
    /// fair-share usage or the cluster's size: the age, fair-share and job-size weights it
    /// applies (its own, or the `configured` ones) are all 0. A running job's key is then the
    /// same at every pass until its base priority or the configuration changes.
    pub(crate) fn reads_only_the_job(&self, configured: &PriorityWeights) -> bool {
        let w = self.weights.as_ref().unwrap_or(configured);
        w.age == 0 && w.fairshare == 0 && w.job_size == 0
    }

    fn weights<'a>(&'a self, context: &PassContext<'a>) -> &'a PriorityWeights {
        self.weights
            .as_ref()
            .unwrap_or(&context.state().config().policy.priority.weights)
    }
}

impl Multifactor {
    /// Its name: in `policy.plugins`, faults, `explain` and saved state.
    pub const NAME: &'static str = "multifactor";
}

#[gangway::policy::plugin]
impl Plugin for Multifactor {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn order_key(&self, job: JobView<'_>, context: &PassContext<'_>) -> i64 {
        let configured = &context.state().config().policy.priority.weights;
        self.priority(job.spec().priority, &context.factors(job), configured)
    }

    fn explain_key(&self, job: JobView<'_>, context: &PassContext<'_>) -> Vec<(String, f64)> {
        let w = context.factors(job).weighted(self.weights(context));
        [
            ("base", f64::from(job.spec().priority)),
            ("age", w.age),
            ("fairshare", w.fairshare),
            ("job_size", w.job_size),
            ("partition", w.partition),
            ("qos", w.qos),
        ]
        .into_iter()
        .map(|(name, value)| (name.to_string(), value))
        .collect()
    }
}
