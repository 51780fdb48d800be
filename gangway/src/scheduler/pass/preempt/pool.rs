//! Where a preemptor's victims can come from. Under the queue policies alone (no partition
//! tiers, no order-based preemption, or a fair-sharing preemptor), a running job can be a
//! victim of pending job `P` only in `P`'s own queue or in a queue of `P`'s cohort tree that
//! is borrowing: the search reads those queues' running jobs instead of every running job. The
//! running jobs are gathered by queue once per pass, at its first preemption search.
//!
//! The pool is exact: it leaves out only running jobs on which
//! [`Scheduler::victim_candidates`]'s rules give no basis, and it keeps the running set's order
//! (by job id), so the profile's vetoes and keys are asked of the same jobs in the same order.
//! It is a shortcut all the same (off in the reference pass), so that the reference family
//! checks it.

use crate::model::ids::JobId;
use crate::quota::QueueId;
use crate::scheduler::Scheduler;
use crate::state::ClusterState;

/// The running jobs of each quota queue, in job order, as they stood at the pass's first
/// preemption search. A job started later in the pass is missing, and one stopped later is
/// still listed: neither can be a victim (a job started in this tick never is, and a stopped
/// one is no longer running), so the searches that read the list do not see the difference.
#[derive(Debug, Default)]
pub(in crate::scheduler) struct RunningByQueue {
    by_queue: Vec<Vec<JobId>>,
}

impl RunningByQueue {
    /// Gathers `state`'s running jobs by queue (jobs without a quota queue are left out: no
    /// queue policy makes them victims).
    pub(in crate::scheduler) fn of(state: &ClusterState) -> Self {
        let mut by_queue: Vec<Vec<JobId>> = Vec::new();
        for &v in &state.running {
            let Some(q) = state.job_queue(v) else {
                continue;
            };
            if by_queue.len() <= q.index() {
                by_queue.resize_with(q.index() + 1, Vec::new);
            }
            by_queue[q.index()].push(v);
        }
        RunningByQueue { by_queue }
    }

    /// The running jobs of the queues `wanted` picks, in job order.
    fn of_queues(&self, mut wanted: impl FnMut(QueueId) -> bool) -> Vec<JobId> {
        let mut jobs: Vec<JobId> = Vec::new();
        for (q, running) in self.by_queue.iter().enumerate() {
            if !running.is_empty() && wanted(QueueId(q as u32)) {
                jobs.extend_from_slice(running);
            }
        }
        jobs.sort_unstable();
        jobs
    }
}

impl Scheduler {
    /// Whether only the queue policies give running jobs a basis as victims of pending job
    /// `id`: no partition tiers and no order-based preemption, or `id` preempts by fair
    /// sharing (where neither applies).
    pub(in crate::scheduler) fn queue_policies_alone(&self, id: JobId) -> bool {
        let settings = &self.state.config.policy.preemption;
        self.fair_preemptor(id) || !(settings.partition_tiers || settings.order_based)
    }

    /// The running jobs that can be victims of pending job `id` under the queue policies
    /// alone: those of its own queue and of the borrowing queues of its cohort tree, in job
    /// order. `None`: any running job can be (partition tiers or order-based preemption give
    /// bases outside the queue policies, unless `id` preempts by fair sharing), or the pass
    /// runs without shortcuts.
    pub(in crate::scheduler) fn victim_pool(
        &self,
        id: JobId,
        running: &RunningByQueue,
    ) -> Option<Vec<JobId>> {
        if !self.shortcuts || !self.queue_policies_alone(id) {
            return None;
        }
        let (Some(q), Some(tree)) = (self.state.job_queue(id), self.state.quota.tree.as_ref())
        else {
            return Some(Vec::new());
        };
        Some(running.of_queues(|vq| vq == q || (tree.same_tree(q, vq) && tree.is_borrowing(vq))))
    }
}
