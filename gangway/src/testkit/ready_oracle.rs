//! The oracle's wait-for-ready checks (`policy.wait_for_ready`), after one tick:
//!
//! - a job requeued for the ready timeout backs off exactly the configured base × 2^(n−1),
//!   capped at the maximum, after its n-th such requeue, and never at its `backoff_limit`-th
//!   requeues;
//! - a job that was evicted for the ready timeout does not start before its back-off ends;
//! - with `block_admission`, a tick starts at most one job, and only when no other running
//!   job is waiting to be ready.

use crate::decision::{Decision, RequeueReason, TickOutcome};
use crate::scheduler::Scheduler;
use crate::state::Readiness;

/// Checks the tick at `scheduler.last_tick()` that produced `outcome`.
pub(super) fn check_ready(scheduler: &Scheduler, outcome: &TickOutcome) -> Result<(), String> {
    let state = scheduler.state();
    let Some(config) = state.config().policy.wait_for_ready.as_ref() else {
        return Ok(());
    };
    let now = scheduler.last_tick().unwrap_or(0);
    let mut started = Vec::new();
    for decision in &outcome.decisions {
        let job = state.job_by_name(decision.job()).map(|v| v.record());
        match decision {
            Decision::Requeue {
                job: name,
                reason: RequeueReason::ReadyTimeout,
            } => {
                let job = job.ok_or_else(|| format!("requeued {name} is unknown"))?;
                let n = job.ready.requeues;
                if n == 0 || config.backoff_limit.is_some_and(|limit| n >= limit) {
                    return Err(format!("{name} requeued for readiness with count {n}"));
                }
                let doublings = (n - 1).min(63);
                let wait = config
                    .backoff_base_ms
                    .saturating_mul(1u64 << doublings)
                    .min(config.backoff_max_ms);
                // Requeued and started again in this tick only with a back-off of 0.
                if job.ready.backoff_until_ms != Some(now.saturating_add(wait)) {
                    return Err(format!(
                        "{name}: back-off until {:?} after requeue {n} at {now}, not {now} + {wait}",
                        job.ready.backoff_until_ms
                    ));
                }
            }
            Decision::Start { job: name, .. } => {
                let job = job.ok_or_else(|| format!("started {name} is unknown"))?;
                if let Some(until) = job.ready.backoff_until_ms.filter(|&u| u > now) {
                    return Err(format!(
                        "{name} started at {now}, in its back-off until {until}"
                    ));
                }
                started.push(name.as_str());
            }
            _ => {}
        }
    }
    if !config.block_admission || started.is_empty() {
        return Ok(());
    }
    if started.len() > 1 {
        return Err(format!("block_admission: {started:?} started together"));
    }
    for job in state.running() {
        if job
            .running()
            .and_then(|r| r.readiness)
            .is_some_and(Readiness::waits)
            && job.name() != started[0]
        {
            return Err(format!(
                "block_admission: {} started while {} is not ready",
                started[0],
                job.name()
            ));
        }
    }
    Ok(())
}
