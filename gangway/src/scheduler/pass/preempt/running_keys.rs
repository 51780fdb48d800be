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

#[cfg(test)]
mod tests {
    use super::*;

    /// The key of a job of partition tier `tier` whose first order key is `first`.
    fn rank(tier: i32, first: i64) -> RankKey {
        (Reverse(tier), Reverse([first, 0, 0, 0]))
    }

    /// Kept keys of running jobs 0 to 4, sorted as [`Scheduler::running_keys`] sorts them.
    fn kept() -> RunningKeys {
        let mut sorted = vec![
            (rank(1, 0), JobId(4)),
            (rank(0, 9), JobId(3)),
            (rank(0, 5), JobId(0)),
            (rank(0, 5), JobId(2)),
            (rank(0, 1), JobId(1)),
        ];
        sorted.sort_unstable();
        RunningKeys {
            figures: None,
            sorted,
        }
    }

    #[test]
    fn a_key_outranks_the_jobs_strictly_below_it_listed_by_job_id() {
        let kept = kept();
        // Below a job of the higher tier: every job of the lower one.
        assert_eq!(
            kept.outranked_by(&rank(1, 0)),
            [JobId(0), JobId(1), JobId(2), JobId(3)]
        );
        // An equal order is not outranked.
        assert_eq!(kept.outranked_by(&rank(0, 5)), [JobId(1)]);
        assert_eq!(
            kept.outranked_by(&rank(0, 6)),
            [JobId(0), JobId(1), JobId(2)]
        );
        // The lowest key outranks nobody; one above every key outranks all.
        assert!(kept.outranked_by(&rank(0, 1)).is_empty());
        assert!(kept.outranked_by(&rank(0, -1)).is_empty());
        assert_eq!(
            kept.outranked_by(&rank(2, 0)),
            [JobId(0), JobId(1), JobId(2), JobId(3), JobId(4)]
        );
    }
}
