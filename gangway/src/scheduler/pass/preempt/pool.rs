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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ClusterConfig, Event, JobSpec};

    /// A 6-cpu node; cohort `c1` (fair sharing) holds queues `qa` (2 cpus nominal), `qb` (1)
    /// and `qc` (2), cohort `c2` (no fair sharing) `qd` (1) and `qe` (2). One-cpu jobs run:
    /// `d1` and `d2` (`qd` borrows 1), `a1` (`qa` lends), `b1` and `b2` (`qb` borrows 1), `c1`
    /// (`qc` lends); then `a2` (`qa`) and `d3` (`qd`) wait. Preemption is off: nothing moves.
    fn two_cohorts() -> Scheduler {
        let cluster: ClusterConfig = serde_json::from_str(
            r#"{"nodes": [{"name": "n1", "cpus": 6}],
                "cohorts": [{"name": "c1", "fair_sharing": {"enabled": true}}, {"name": "c2"}],
                "queues": [{"name": "qa", "cohort": "c1", "quota": {"cpu": {"nominal": 2}}},
                           {"name": "qb", "cohort": "c1", "quota": {"cpu": {"nominal": 1}}},
                           {"name": "qc", "cohort": "c1", "quota": {"cpu": {"nominal": 2}}},
                           {"name": "qd", "cohort": "c2", "quota": {"cpu": {"nominal": 1}}},
                           {"name": "qe", "cohort": "c2", "quota": {"cpu": {"nominal": 2}}}]}"#,
        )
        .unwrap();
        let mut s = Scheduler::new(cluster).unwrap();
        let submit = |name: &str, queue: &str| {
            let mut job = JobSpec::new(name, 60_000, 1);
            job.queue = Some(queue.into());
            Event::Submit { job }
        };
        let first = [
            ("d1", "qd"),
            ("d2", "qd"),
            ("a1", "qa"),
            ("b1", "qb"),
            ("b2", "qb"),
            ("c1", "qc"),
        ];
        s.tick(0, first.iter().map(|&(n, q)| submit(n, q)).collect())
            .unwrap();
        s.tick(1, vec![submit("a2", "qa"), submit("d3", "qd")])
            .unwrap();
        assert_eq!(s.state.running.len(), 6);
        assert_eq!(s.state.pending.len(), 2);
        let tree = s.state.quota.tree.as_ref().unwrap();
        let borrowing = |name| tree.is_borrowing(tree.queue_id(name).unwrap());
        assert!(borrowing("qb") && borrowing("qd"));
        assert!(!borrowing("qa") && !borrowing("qc") && !borrowing("qe"));
        s
    }

    fn queue(s: &Scheduler, name: &str) -> QueueId {
        s.state.quota.tree.as_ref().unwrap().queue_id(name).unwrap()
    }

    fn ids(s: &Scheduler, names: &[&str]) -> Vec<JobId> {
        let mut ids: Vec<JobId> = names
            .iter()
            .map(|name| s.state.job_id(name).unwrap())
            .collect();
        ids.sort_unstable();
        ids
    }

    #[test]
    fn running_jobs_are_gathered_by_queue_and_read_back_in_job_order() {
        let s = two_cohorts();
        let running = RunningByQueue::of(&s.state);
        let of = |name| running.by_queue[queue(&s, name).index()].clone();
        assert_eq!(of("qa"), ids(&s, &["a1"]));
        assert_eq!(of("qb"), ids(&s, &["b1", "b2"]));
        assert_eq!(of("qc"), ids(&s, &["c1"]));
        assert_eq!(of("qd"), ids(&s, &["d1", "d2"]));
        assert!(
            running
                .by_queue
                .get(queue(&s, "qe").index())
                .is_none_or(Vec::is_empty)
        );
        // `d1` and `d2` came first: the queues' lists are merged by job id.
        let (qa, qd) = (queue(&s, "qa"), queue(&s, "qd"));
        assert_eq!(
            running.of_queues(|q| q == qa || q == qd),
            ids(&s, &["d1", "d2", "a1"])
        );
        assert_eq!(
            running.of_queues(|_| true),
            ids(&s, &["d1", "d2", "a1", "b1", "b2", "c1"])
        );
        assert!(running.of_queues(|_| false).is_empty());
    }

    #[test]
    fn only_the_queue_policies_count_without_tiers_and_order_based_preemption_or_for_a_fair_preemptor()
     {
        let mut s = two_cohorts();
        let (a2, d3) = (s.state.job_id("a2").unwrap(), s.state.job_id("d3").unwrap());
        assert!(s.fair_preemptor(a2) && !s.fair_preemptor(d3));
        for (tiers, order_based) in [(false, false), (true, false), (false, true), (true, true)] {
            let preemption = &mut s.state.config_mut().policy.preemption;
            preemption.partition_tiers = tiers;
            preemption.order_based = order_based;
            // A fair-sharing preemptor: always; another, only without tiers and order.
            assert!(s.queue_policies_alone(a2));
            assert_eq!(s.queue_policies_alone(d3), !tiers && !order_based);
        }
    }

    #[test]
    fn the_pool_holds_the_own_queue_and_the_borrowing_queues_of_the_preemptor_s_tree() {
        let mut s = two_cohorts();
        let running = RunningByQueue::of(&s.state);
        let (a2, d3) = (s.state.job_id("a2").unwrap(), s.state.job_id("d3").unwrap());
        // `a2`: its own queue's `a1` (`qa` does not borrow) and `qb`'s, which borrows; not
        // `qc`'s (it lends, in the same tree) nor `qd`'s (it borrows, in the other tree).
        assert_eq!(
            s.victim_pool(a2, &running),
            Some(ids(&s, &["a1", "b1", "b2"]))
        );
        assert_eq!(s.victim_pool(d3, &running), Some(ids(&s, &["d1", "d2"])));
        // Without shortcuts, no pool.
        assert_eq!(s.with_reference_pass().victim_pool(a2, &running), None);
        // Order-based preemption gives bases outside the queue policies, except to a
        // fair-sharing preemptor.
        s.state.config_mut().policy.preemption.order_based = true;
        assert_eq!(s.victim_pool(d3, &running), None);
        assert_eq!(
            s.victim_pool(a2, &running),
            Some(ids(&s, &["a1", "b1", "b2"]))
        );
    }
}
