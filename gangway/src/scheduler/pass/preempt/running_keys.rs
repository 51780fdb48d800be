//! Running jobs sorted by their order, once per pass, for order-based preemption.
//!
//! Order-based preemption lets a pending job take any running job whose order (partition tier,
//! then the profile's order keys) is strictly lower than its own. Where the profile's keys are
//! fixed for a pass ([`crate::policy::Profile`]'s `order_keys_fixed_in_pass`), the running
//! jobs' keys are computed at the pass's first such search and sorted: the jobs a preemptor
//! outranks are then a suffix of the sorted list, found by bisection, instead of every running
//! job's key compared at every search. A shortcut (the reference pass computes every key at
//! every search); debug builds check the kept keys against fresh ones.

use std::cmp::Reverse;
use std::sync::Arc;

use crate::model::ids::JobId;
use crate::policy::{OrderKeys, PassFigures};
use crate::scheduler::Scheduler;

/// A job's order as order-based preemption compares it: its partition tier, then the profile's
/// keys (lower first).
pub(in crate::scheduler) type RankKey = (Reverse<i32>, Reverse<OrderKeys>);

/// The running jobs of one pass by their [`RankKey`], computed at the pass's first order-based
/// search. A job started later in the pass is missing (it started in this tick: never a victim),
/// and one stopped later is still listed (the search skips jobs no longer running).
#[derive(Debug, Default)]
pub(in crate::scheduler) struct RunningKeys {
    /// The figures of the pass the keys belong to (compared by identity: each pass makes its
    /// own).
    figures: Option<Arc<PassFigures>>,
    /// The running jobs by key, then job id.
    sorted: Vec<(RankKey, JobId)>,
}

impl RunningKeys {
    /// The running jobs whose order is strictly lower than `key`'s, in job order.
    pub(in crate::scheduler) fn outranked_by(&self, key: &RankKey) -> Vec<JobId> {
        let first = self.sorted.partition_point(|(k, _)| k <= key);
        let mut jobs: Vec<JobId> = self.sorted[first..].iter().map(|(_, v)| *v).collect();
        jobs.sort_unstable();
        jobs
    }
}

impl Scheduler {
    /// The running jobs' keys for this pass, sorted at its first call; `None` where keys are
    /// not fixed for a pass or the pass runs without shortcuts.
    pub(in crate::scheduler) fn running_keys<'k>(
        &self,
        kept: &'k mut RunningKeys,
    ) -> Option<&'k RunningKeys> {
        if !self.shortcuts || !self.profile.order_keys_fixed_in_pass() {
            return None;
        }
        let current = kept
            .figures
            .as_ref()
            .is_some_and(|f| Arc::ptr_eq(f, &self.last.figures));
        if !current {
            let context = self.last.figures.context(&self.state);
            let mut sorted: Vec<(RankKey, JobId)> = self
                .state
                .running
                .iter()
                .filter_map(|&v| {
                    let (tier, keys, ..) = self.pass_key(self.state.job_view(v)?, &context);
                    Some(((tier, keys), v))
                })
                .collect();
            sorted.sort_unstable();
            *kept = RunningKeys {
                figures: Some(Arc::clone(&self.last.figures)),
                sorted,
            };
        }
        debug_assert!(self.keys_still_hold(kept), "a kept running key changed");
        Some(kept)
    }

    /// Whether every kept key equals the one computed now (a debug-build check).
    fn keys_still_hold(&self, kept: &RunningKeys) -> bool {
        let context = self.last.figures.context(&self.state);
        kept.sorted.iter().all(|(key, v)| {
            self.state.job_view(*v).is_none_or(|job| {
                let (tier, keys, ..) = self.pass_key(job, &context);
                (tier, keys) == *key
            })
        })
    }
}
