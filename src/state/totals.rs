//! What a job's task groups add up to, kept on the job so that a pass reads one small record
//! per pending job instead of walking its groups.

use crate::model::shape::{GpuNeed, TaskShape};
use crate::placement::FreeTotals;

/// A job's summed amounts, derived from its task shapes.
///
/// ```
/// use gangway::model::shape::{GpuNeed, TaskShape};
/// use gangway::state::JobTotals;
/// let shape = TaskShape {
///     cpu_milli: 2_000, memory_mib: 100, gpu: GpuNeed::Whole(2),
///     models: Default::default(), count: 4, min_count: 3,
///     mode: gangway::PlacementMode::Spread,
/// };
/// let totals = JobTotals::of(&[shape]);
/// assert_eq!(totals.need.whole_gpus, 6); // at min_count
/// assert_eq!(totals.gpu_milli, 8_000); // at count
/// assert_eq!(totals.cpu_milli, 8_000);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JobTotals {
    /// What it needs free to start, at each group's `min_count` ([`FreeTotals::need`]).
    pub need: FreeTotals,
    /// Its GPUs at each group's `count`, thousandths (MIG slices not counted): the job-size
    /// priority factor's numerator.
    pub gpu_milli: u64,
    /// Its cpus at each group's `count`, thousandths.
    pub cpu_milli: u64,
}

impl JobTotals {
    /// The totals of `shapes`.
    pub fn of(shapes: &[TaskShape]) -> Self {
        let mut totals = JobTotals {
            need: FreeTotals::need(shapes),
            ..JobTotals::default()
        };
        for s in shapes {
            let per_task = match s.gpu {
                GpuNeed::None | GpuNeed::Mig(_) => 0,
                GpuNeed::Whole(k) => u64::from(k) * 1000,
                GpuNeed::Fraction(f) => u64::from(f),
            };
            totals.gpu_milli += per_task * u64::from(s.count);
            totals.cpu_milli += s.cpu_milli * u64::from(s.count);
        }
        totals
    }
}
