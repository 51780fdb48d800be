//! Counts first, in a victim search: how many tasks of a one-group gang the nodes could hold
//! with a prefix of the candidates stopped. No placement puts more tasks on a node than fit its
//! room, and the count reads each node's room as the placement's view does ([`NowView`]: free,
//! less reservations and other preemptors' earmarks, plus what the victims release, and only
//! nodes of the gang's partition, whole ones for an exclusive gang), before node filters,
//! scorers and the layout narrow it. So a prefix whose count is short of the group's fewest
//! tasks cannot be placed, and the shortest prefix whose count reaches them is a lower bound on
//! the first prefix a placement accepts: where the count is exact (whole GPUs, no filter), the
//! search places once instead of once per bisection step.
//!
//! Where the count decides the placement outright ([`crate::placement::count::counts_decide`]: one group of one task,
//! or spread, without a topology constraint, through a gate that leaves the fit alone, as in
//! [`crate::placement::count`]), the fill-back that drops unneeded victims asks the counts
//! whether the preemptor still fits without each one ([`TaskCounts::fits_without`]) and
//! places once, with the victims it keeps.

use std::collections::BTreeMap;

use crate::backfill::NowView;
use crate::model::ids::{JobId, NodeId};
use crate::model::resources::NodeAmounts;
use crate::placement::GangRequest;
use crate::placement::fit::tasks_fitting;
use crate::state::ClusterState;

/// The tasks of one group each node could hold, and their sum, as victims are added.
pub(super) struct TaskCounts<'a> {
    state: &'a ClusterState,
    view: &'a NowView<'a>,
    gang: &'a GangRequest<'a>,
    /// Per node (by index): the tasks its room holds with the victims added so far.
    per_node: Vec<u32>,
    /// Their sum.
    total: u64,
    /// What the victims added so far release, per node.
    released: BTreeMap<NodeId, NodeAmounts>,
}

impl<'a> TaskCounts<'a> {
    /// The counts with no victim stopped, for the first group of `gang` (a gang of one group
    /// without topology: the only one a victim search bisects).
    pub(super) fn new(
        state: &'a ClusterState,
        view: &'a NowView<'a>,
        gang: &'a GangRequest<'a>,
    ) -> Self {
        let mut counts = TaskCounts {
            state,
            view,
            gang,
            per_node: vec![0; state.nodes.len()],
            total: 0,
            released: BTreeMap::new(),
        };
        for index in 0..state.nodes.len() {
            let tasks = counts.tasks_on(NodeId(index as u32), None);
            counts.per_node[index] = tasks;
            counts.total += u64::from(tasks);
        }
        counts
    }

    /// The length of the shortest prefix of `victims` (at least 1) with which the nodes could
    /// hold the group's fewest tasks, or `None` when not even all of them release enough.
    pub(super) fn shortest_prefix(mut self, victims: impl Iterator<Item = JobId>) -> Option<usize> {
        let need = u64::from(self.gang.shapes[0].min_count);
        if self.total >= need {
            return Some(1);
        }
        for (taken, victim) in victims.enumerate() {
            self.add(victim);
            if self.total >= need {
                return Some(taken + 1);
            }
        }
        None
    }

    /// The counts with every one of `victims` stopped.
    pub(super) fn with_stopped(mut self, victims: impl Iterator<Item = JobId>) -> Self {
        for victim in victims {
            self.add(victim);
        }
        self
    }

    /// Whether the nodes could still hold the group's fewest tasks (at least one) without
    /// `victim` stopped; if so, `victim` is taken out of the counts, else they stay.
    pub(super) fn fits_without(&mut self, victim: JobId) -> bool {
        self.remove(victim);
        let need = u64::from(self.gang.shapes[0].min_count).max(1);
        let fits = self.total >= need;
        if !fits {
            self.add(victim);
        }
        fits
    }

    /// Counts what `victim` releases as free.
    fn add(&mut self, victim: JobId) {
        for (node, amounts) in self.state.node_charges(victim) {
            let released = self.released.entry(node).or_default();
            released.add(&amounts);
            let released = *released;
            let tasks = self.tasks_on(node, Some(&released));
            let before = std::mem::replace(&mut self.per_node[node.index()], tasks);
            self.total = self.total - u64::from(before) + u64::from(tasks);
        }
    }

    /// Takes what `victim` releases out of the counts again.
    fn remove(&mut self, victim: JobId) {
        for (node, amounts) in self.state.node_charges(victim) {
            let released = self.released.entry(node).or_default();
            released.sub(&amounts);
            let released = *released;
            let tasks = self.tasks_on(node, Some(&released));
            let before = std::mem::replace(&mut self.per_node[node.index()], tasks);
            self.total = self.total - u64::from(before) + u64::from(tasks);
        }
    }

    /// The tasks of the group that `node`'s room holds with `released` counted as free there.
    fn tasks_on(&self, id: NodeId, released: Option<&NodeAmounts>) -> u32 {
        let Some(Some(node)) = self.state.nodes.get(id.index()) else {
            return 0;
        };
        if !node.partitions.contains(self.gang.partition) {
            return 0;
        }
        let Some(free) = self.view.free_releasing(id, node, released) else {
            return 0;
        };
        if self.gang.exclusive && free != node.capacity {
            return 0;
        }
        tasks_fitting(node, &free, &self.gang.shapes[0])
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::{ClusterConfig, Event, JobSpec, Scheduler};

    /// Two nodes of 4 cpus: `full` (4 one-cpu tasks) fills one, and `small` (3 tasks) runs on
    /// the other, leaving one cpu free there.
    fn two_busy_nodes() -> Scheduler {
        let cluster: ClusterConfig = serde_json::from_str(
            r#"{"nodes": [{"name": "n1", "cpus": 4}, {"name": "n2", "cpus": 4}]}"#,
        )
        .unwrap();
        let mut s = Scheduler::new(cluster).unwrap();
        for (name, tasks) in [("full", 4), ("small", 3)] {
            let job = JobSpec::new(name, 100_000, tasks);
            s.tick(0, vec![Event::Submit { job }]).unwrap();
        }
        s
    }

    /// Submits a job of `tasks` one-cpu tasks that may not begin yet (so it stays pending).
    fn submit_waiting(s: &mut Scheduler, name: &str, tasks: u32, exclusive: bool) -> JobId {
        let mut job = JobSpec::new(name, 100_000, tasks);
        job.begin_ms = Some(1_000_000);
        job.exclusive = exclusive;
        s.tick(1, vec![Event::Submit { job }]).unwrap();
        s.state().job_id(name).unwrap()
    }

    /// What the counts of `id`'s only group say, with the victims `victims` in that order:
    /// the tasks counted before any victim, and the shortest prefix.
    fn counted(s: &Scheduler, id: JobId, victims: &[&str]) -> (u64, Option<usize>) {
        with_counts(s, id, |state, counts| {
            let before = counts.total;
            let victims = victims.iter().map(|name| state.job_id(name).unwrap());
            (before, counts.shortest_prefix(victims))
        })
    }

    /// `f` of the counts of `id`'s only group on what is free now, nothing held or released.
    fn with_counts<R>(
        s: &Scheduler,
        id: JobId,
        f: impl FnOnce(&ClusterState, TaskCounts<'_>) -> R,
    ) -> R {
        let state = s.state();
        let (held, released) = (BTreeMap::new(), BTreeMap::new());
        let view = NowView {
            profile: None,
            now: 1,
            end: 100_001,
            held: &held,
            released: &released,
            maintenance: &state.maintenance,
            quick_rejects: true,
        };
        let gang = state.gang_request(state.job(id).unwrap());
        f(state, TaskCounts::new(state, &view, &gang))
    }

    #[test]
    fn the_setup_leaves_one_cpu_free_on_one_node_and_none_on_the_other() {
        let s = two_busy_nodes();
        let state = s.state();
        for name in ["small", "full"] {
            let charges: Vec<_> = state.node_charges(state.job_id(name).unwrap()).collect();
            assert_eq!(charges.len(), 1, "{name} runs on one node");
        }
    }

    #[test]
    fn a_group_that_fits_without_victims_needs_a_prefix_of_one() {
        let mut s = two_busy_nodes();
        let one = submit_waiting(&mut s, "one", 1, false);
        assert_eq!(counted(&s, one, &["small", "full"]), (1, Some(1)));
    }

    #[test]
    fn the_shortest_prefix_is_the_first_whose_released_room_holds_the_group() {
        let mut s = two_busy_nodes();
        // One task fits now; stopping `small` frees its node (4 tasks in all), and stopping
        // `full` too frees both (8).
        let four = submit_waiting(&mut s, "four", 4, false);
        assert_eq!(counted(&s, four, &["small", "full"]), (1, Some(1)));
        let five = submit_waiting(&mut s, "five", 5, false);
        assert_eq!(counted(&s, five, &["small", "full"]), (1, Some(2)));
        // In the other order `full` frees its node first: 1 + 4 = 5 tasks.
        assert_eq!(counted(&s, five, &["full", "small"]), (1, Some(1)));
        let six = submit_waiting(&mut s, "six", 6, false);
        assert_eq!(counted(&s, six, &["small", "full"]), (1, Some(2)));
    }

    #[test]
    fn a_group_that_all_victims_cannot_make_room_for_has_no_prefix() {
        let mut s = two_busy_nodes();
        // Stopping `small` alone frees 4 tasks' room of the 6.
        let six = submit_waiting(&mut s, "six", 6, false);
        assert_eq!(counted(&s, six, &["small"]), (1, None));
        assert_eq!(counted(&s, six, &[]), (1, None));
    }

    #[test]
    fn an_exclusive_group_counts_only_nodes_with_nothing_in_use() {
        let mut s = two_busy_nodes();
        // The free cpu beside `small` does not count for an exclusive job.
        let one = submit_waiting(&mut s, "one", 1, true);
        assert_eq!(counted(&s, one, &["small", "full"]), (0, Some(1)));
        let five = submit_waiting(&mut s, "five", 5, true);
        assert_eq!(counted(&s, five, &["small", "full"]), (0, Some(2)));
    }

    #[test]
    fn a_victim_is_left_out_only_where_the_others_still_make_room_for_the_group() {
        // `four` (4 tasks) with both `small` and `full` stopped: 4 tasks on each node. Without
        // `small`, `full`'s node still holds them (5 counted); without `full` too, one cpu
        // would be left: `full` stays in, and the counts with it.
        let mut s = two_busy_nodes();
        let four = submit_waiting(&mut s, "four", 4, false);
        with_counts(&s, four, |state, counts| {
            let [small, full] = ["small", "full"].map(|name| state.job_id(name).unwrap());
            let mut counts = counts.with_stopped([small, full].into_iter());
            assert_eq!(counts.total, 8);
            assert!(counts.fits_without(small));
            assert_eq!(counts.total, 5);
            assert!(!counts.fits_without(full));
            assert_eq!(counts.total, 5);
        });
    }
}
