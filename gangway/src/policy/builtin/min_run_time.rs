//! A minimum run time before a job may be preempted (KAI's and Kueue's asked-for guard).

use crate::policy::{PassContext, Plugin, Veto};
use crate::state::JobView;

/// Vetoes preempting a job that has run less than `min_ms` in its current run, until the
/// guard ends ([`Veto::until`]: a preemptor it held back is retried then). A job runs at least
/// `min_ms` between two preemptions, so it is preempted at most `ceil(3_600_000 / min_ms)`
/// times an hour.
///
/// ```
/// use gangway::policy::builtin::MinRunTime;
/// assert_eq!(MinRunTime::new(600_000).min_ms(), 600_000);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct MinRunTime {
    min_ms: u64,
}

impl MinRunTime {
    /// Guards every job's first `min_ms` of each run.
    pub fn new(min_ms: u64) -> Self {
        MinRunTime { min_ms }
    }

    /// The guarded time.
    pub fn min_ms(&self) -> u64 {
        self.min_ms
    }
}

impl MinRunTime {
    /// Its name: in `policy.plugins`, faults, `explain` and saved state.
    pub const NAME: &'static str = "min_run_time";
}

#[gangway::policy::plugin]
impl Plugin for MinRunTime {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn veto_victim(
        &self,
        _: JobView<'_>,
        victim: JobView<'_>,
        _: &PassContext<'_>,
    ) -> Option<Veto> {
        let (start, ran) = victim.current_run()?;
        (ran < self.min_ms).then(|| {
            Veto::new(format!(
                "has run {ran} ms of its guaranteed {} ms",
                self.min_ms
            ))
            .until(start.saturating_add(self.min_ms))
        })
    }
}
