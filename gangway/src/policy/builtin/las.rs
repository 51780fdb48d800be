//! Tiresias-style discretised two-dimensional least-attained-service (Gu et al., NSDI'19).

use serde::{Deserialize, Serialize};

use crate::policy::builtin::MinRunTime;
use crate::policy::{PassContext, Plugin, Veto};
use crate::state::JobView;

/// Discretised 2D-LAS: jobs in queues by attained GPU service (GPUs held × time, over all
/// runs), the least served queue first, FIFO within a queue (the engine's tie-break).
///
/// - **Queues**: a job with attained service below `thresholds_gpu_ms[0]` is in queue 0, below
///   `thresholds_gpu_ms[1]` in queue 1, and so on; the key is minus the queue.
/// - **Preemption**: with `policy.preemption.order_based`, a waiting job of a lower queue may
///   preempt a running job of a higher one. A running job is guarded for its first
///   `min_quantum_ms` (a veto), so it is preempted at most `ceil(3_600_000 / min_quantum_ms)`
///   times an hour.
/// - **Promotion**: a job that has waited `promote_after` times its last run's length since
///   that run ended goes back to queue 0 (Tiresias' starvation knob; 0 turns it off).
/// - **Wake-ups**: while jobs wait, at the next time a running job crosses a threshold or a
///   waiting job is promoted; the quantum's veto ends ([`Veto::until`]) when it ends, so a
///   preemptor it held back is retried then.
///
/// It uses no time limit, so it suits clusters where users do not estimate.
///
/// ```
/// use gangway::policy::builtin::Las;
/// let las = Las::default();
/// assert_eq!(las.queue_of(0, None, 0), 0);
/// assert_eq!(las.queue_of(3_600_000, None, 0), 1); // one GPU-hour served
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Las {
    /// Queue limits in GPU-milliseconds, ascending. Default one GPU-hour and ten GPU-hours.
    #[serde(default = "default_thresholds")]
    pub thresholds_gpu_ms: Vec<u64>,
    /// How long a run is guarded against preemption. Default 300,000 (5 minutes).
    #[serde(default = "default_quantum")]
    pub min_quantum_ms: u64,
    /// Promote a job to queue 0 after waiting this many times its last run. Default 4; 0: never.
    #[serde(default = "default_promote")]
    pub promote_after: f64,
}

fn default_thresholds() -> Vec<u64> {
    vec![3_600_000, 36_000_000]
}

fn default_quantum() -> u64 {
    300_000
}

fn default_promote() -> f64 {
    4.0
}

impl Default for Las {
    fn default() -> Self {
        Las {
            thresholds_gpu_ms: default_thresholds(),
            min_quantum_ms: default_quantum(),
            promote_after: default_promote(),
        }
    }
}

impl Las {
    /// The queue of a job with `attained` GPU-ms whose last run (start, end) ended, if any,
    /// as of `now_ms` (a waiting job past its promotion time is in queue 0).
    pub fn queue_of(&self, attained: u64, last_run: Option<(u64, u64)>, now_ms: u64) -> usize {
        if self
            .promotion_ms(last_run)
            .is_some_and(|promote| promote <= now_ms)
        {
            return 0;
        }
        self.thresholds_gpu_ms
            .iter()
            .take_while(|&&t| attained >= t)
            .count()
    }

    /// When a job whose last run was `last_run` is promoted, while it waits.
    fn promotion_ms(&self, last_run: Option<(u64, u64)>) -> Option<u64> {
        let (start, end) = last_run?;
        if self.promote_after <= 0.0 || !self.promote_after.is_finite() {
            return None;
        }
        let wait = (end.saturating_sub(start) as f64 * self.promote_after).min(u64::MAX as f64);
        Some(end.saturating_add(wait as u64))
    }

    /// The guard of every run's quantum.
    fn quantum(&self) -> MinRunTime {
        MinRunTime::new(self.min_quantum_ms)
    }

    fn queue(&self, job: JobView<'_>, now_ms: u64) -> usize {
        let last_run = if job.is_pending() {
            job.last_run()
        } else {
            None
        };
        self.queue_of(job.attained_gpu_ms(), last_run, now_ms)
    }

    /// When running `job` reaches its queue's threshold, at its rate of GPU service.
    fn demotion_ms(&self, job: JobView<'_>, now_ms: u64) -> Option<u64> {
        let attained = job.attained_gpu_ms();
        let next = *self.thresholds_gpu_ms.iter().find(|&&t| t > attained)?;
        let gpu_milli = job.record().totals.gpu_milli;
        if gpu_milli == 0 {
            return None;
        }
        let ms = (next - attained).saturating_mul(1_000).div_ceil(gpu_milli);
        Some(now_ms.saturating_add(ms))
    }
}

impl Las {
    /// Its name: in `policy.plugins`, faults, `explain` and saved state.
    pub const NAME: &'static str = "las";
}

#[gangway::policy::plugin]
impl Plugin for Las {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn order_key(&self, job: JobView<'_>, context: &PassContext<'_>) -> i64 {
        -(self.queue(job, context.now_ms()) as i64)
    }

    fn explain_key(&self, job: JobView<'_>, context: &PassContext<'_>) -> Vec<(String, f64)> {
        vec![
            (
                "queue".to_string(),
                self.queue(job, context.now_ms()) as f64,
            ),
            ("attained_gpu_ms".to_string(), job.attained_gpu_ms() as f64),
        ]
    }

    fn veto_victim(
        &self,
        preemptor: JobView<'_>,
        victim: JobView<'_>,
        context: &PassContext<'_>,
    ) -> Option<Veto> {
        self.quantum().veto_victim(preemptor, victim, context)
    }

    fn wake_up(&self, context: &PassContext<'_>) -> Option<u64> {
        let state = context.state();
        let now = context.now_ms();
        if state.pending_count() == 0 {
            return None;
        }
        let demotions = state.running().map(|job| self.demotion_ms(job, now));
        let promotions = state.pending().map(|job| self.promotion_ms(job.last_run()));
        demotions
            .chain(promotions)
            .flatten()
            .filter(|&t| t > now)
            .min()
    }
}
