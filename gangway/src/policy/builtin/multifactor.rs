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
/// let policy = Multifactor::with_weights(PriorityWeights { fairshare: 10_000, ..Default::default() });
/// let factors = PriorityFactors { fairshare: 0.25, ..Default::default() };
/// assert_eq!(policy.priority(5, &factors), 2_505);
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

    /// `base + floor(Σ weight × factor)`.
    pub fn priority(&self, base: i32, factors: &crate::policy::PriorityFactors) -> i64 {
        let weights = self.weights.clone().unwrap_or_default();
        i64::from(base) + factors.weighted(&weights).sum().floor() as i64
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
        let weighted = context.factors(job).weighted(self.weights(context));
        i64::from(job.spec().priority) + weighted.sum().floor() as i64
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
