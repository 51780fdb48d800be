//! Counts first: whether a gang fits what is free now, answered from the free index's state
//! classes in a step per class instead of a placement that visits every node.
//!
//! The answer is exact only where the placement's success depends on the per-node task fits
//! alone: one task group placed `spread` or `strict_spread`, without a topology constraint,
//! node filters or scorers, on what every node has free now (no reservation, earmark or
//! maintenance window making a node depart from its class). Then
//! [`crate::placement::place_gang`] succeeds exactly when the fits add up to the group's
//! minimum: a spread group takes one task on each of the first `count` nodes with room and
//! fills them up to their fits, a strict-spread group one task per node; a group of one task
//! is placed on any node it fits, whatever its layout. Amounts held on some nodes (the
//! earmarks of preemptors other than the job's own) are taken from those nodes' free amounts:
//! each held node's fit is counted as its class's, less what the hold takes, so the answer is
//! the same on the view that subtracts them. A larger `pack` or `strict_pack`
//! group's placement chooses among the nodes by more than their fits, so there the count
//! decides only a group that cannot fit: no placement puts more tasks on a node than fit it,
//! so fits that add up to less than the group's minimum mean no placement. Elsewhere
//! [`fits_now_by_count`] answers `None` and the placement decides.

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use crate::model::ids::NodeId;
use crate::model::job::PlacementMode;
use crate::model::node::Node;
use crate::model::resources::NodeAmounts;
use crate::placement::fit::tasks_fitting;
use crate::placement::{FreeIndex, GangRequest};

/// Whether the counts decide a placement of `gang` outright, given a gate that leaves the fit
/// alone: one group without a topology constraint, of one task (placed on any node it fits)
/// or spread (one task on each node with room, then filled up to the fits), as the module
/// docs argue. The placement then succeeds exactly when the fits add up to the group's fewest
/// tasks, on any view of the nodes' capacity.
pub(crate) fn counts_decide(gang: &GangRequest<'_>) -> bool {
    let [shape] = gang.shapes else {
        return false;
    };
    gang.topology.is_none() && (shape.count == 1 || shape.mode == PlacementMode::Spread)
}

/// Whether `gang` fits what the nodes have free now less the amounts `held` on some of them,
/// counted by state class; `None` when a count cannot decide it (see the module docs: a
/// packed group that the count does not rule out), or when `maintenance_free` is false (some
/// node's maintenance window overlaps the job's run).
pub(crate) fn fits_now_by_count(
    nodes: &[Option<Node>],
    index: &FreeIndex,
    gang: GangRequest<'_>,
    maintenance_free: bool,
    held: &BTreeMap<NodeId, NodeAmounts>,
) -> Option<bool> {
    let [shape] = gang.shapes else {
        return None;
    };
    // Whether the count decides a fit too, and whether it takes one task per node.
    let (decides_fit, strict) = match shape.mode {
        PlacementMode::Spread => (true, false),
        PlacementMode::StrictSpread => (true, true),
        PlacementMode::Pack | PlacementMode::StrictPack => (shape.count == 1, false),
    };
    if gang.topology.is_some() || gang.gate.is_some() || !maintenance_free {
        return None;
    }
    // The tasks of the group a node with `free` could take.
    let tasks_on = |node: &Node, free: &NodeAmounts| {
        let room =
            node.partitions.contains(gang.partition) && (!gang.exclusive || *free == node.capacity);
        let fit = if room {
            tasks_fitting(node, free, shape)
        } else {
            0
        };
        u64::from(if strict { fit.min(1) } else { fit })
    };
    // What the holds take from the count: on each held node the walk offers, its fit as its
    // class's less its fit once the hold is taken.
    let taken: u64 = held
        .iter()
        .filter(|&(&id, _)| index.visits_node(shape, id))
        .filter_map(|(&id, amounts)| {
            let node = nodes.get(id.index()).and_then(Option::as_ref)?;
            let free = node.free();
            let mut left = free;
            left.sub(amounts);
            Some(tasks_on(node, &free).saturating_sub(tasks_on(node, &left)))
        })
        .fold(0, u64::saturating_add);
    // The most tasks the group can take: `count`, one per node when strict.
    let wanted = u64::from(shape.count);
    let enough = wanted.saturating_add(taken);
    let mut placed = 0u64;
    let _ = index.visit_classes(shape, false, &mut |id, alike| {
        let Some(node) = nodes.get(id.index()).and_then(Option::as_ref) else {
            return ControlFlow::Continue(());
        };
        let per_node = tasks_on(node, &node.free());
        placed = placed.saturating_add(per_node.saturating_mul(alike as u64));
        if placed >= enough {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    });
    let placed = placed.saturating_sub(taken).min(wanted);
    let fits = placed >= u64::from(shape.min_count) && placed > 0;
    (decides_fit || !fits).then_some(fits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::shape::{GpuNeed, TaskShape};
    use crate::placement::{CapacityView, ShapeMix, place_gang};
    use crate::{ClusterConfig, Event, JobSpec, Scheduler};

    /// `count` tasks of `cpus` cpus each, needing `min_count`.
    fn shape(cpus: u64, count: u32, min_count: u32, mode: PlacementMode) -> TaskShape {
        TaskShape {
            cpu_milli: cpus * 1_000,
            memory_mib: 0,
            gpu: GpuNeed::None,
            models: Default::default(),
            count,
            min_count,
            mode,
        }
    }

    struct FreeNow;

    impl CapacityView for FreeNow {
        fn free(
            &self,
            _: crate::model::ids::NodeId,
            node: &Node,
        ) -> Option<crate::model::resources::NodeAmounts> {
            node.accepts_work().then(|| node.free())
        }
    }

    /// A scheduler of `cluster` (JSON) that started `job` at time 0.
    fn running(cluster: &str, job: JobSpec) -> Scheduler {
        let cluster: ClusterConfig = serde_json::from_str(cluster).unwrap();
        let mut s = Scheduler::new(cluster).unwrap();
        s.tick(0, vec![Event::Submit { job }]).unwrap();
        s
    }

    /// What the nodes have free now, less amounts held on some of them.
    struct FreeLessHeld<'a>(&'a BTreeMap<NodeId, NodeAmounts>);

    impl CapacityView for FreeLessHeld<'_> {
        fn free(&self, id: NodeId, node: &Node) -> Option<NodeAmounts> {
            let mut free = FreeNow.free(id, node)?;
            if let Some(held) = self.0.get(&id) {
                free.sub(held);
            }
            Some(free)
        }

        fn departures(&self) -> Option<Vec<NodeId>> {
            Some(self.0.keys().copied().collect())
        }
    }

    #[test]
    fn held_amounts_are_counted_out_as_the_placement_takes_them_out() {
        // Eight nodes of 4 cpus in two alike classes (the last four hold a job of 1 cpu each);
        // holds of 1 to 4 cpus on some of them, in either class.
        let nodes: Vec<String> = (0..8)
            .map(|i| format!(r#"{{"name": "n{i}", "cpus": 4}}"#))
            .collect();
        let mut busy = JobSpec::new("busy", 1_000, 1);
        busy.groups[0].count = 4;
        busy.groups[0].placement = PlacementMode::StrictSpread;
        let s = running(&format!(r#"{{"nodes": [{}]}}"#, nodes.join(",")), busy);
        let state = s.state();
        let mix = ShapeMix::default();
        let (mut decided, mut ruled_out) = (0, 0);
        for holds in [
            vec![],
            vec![(0, 4)],
            vec![(0, 3), (5, 2)],
            vec![(1, 4), (2, 4), (6, 3)],
        ] {
            let held: BTreeMap<NodeId, NodeAmounts> = holds
                .iter()
                .map(|&(node, cpus)| {
                    let amounts = NodeAmounts {
                        cpu_milli: cpus * 1_000,
                        ..NodeAmounts::default()
                    };
                    (NodeId(node), amounts)
                })
                .collect();
            for mode in [PlacementMode::Spread, PlacementMode::Pack] {
                for cpus in 1..=4 {
                    for count in 1..=32 {
                        let shapes = [shape(cpus, count, count, mode)];
                        let gang = GangRequest {
                            shapes: &shapes,
                            exclusive: false,
                            partition: crate::model::ids::PartitionId(0),
                            mix: &mix,
                            topology: None,
                            gate: None,
                            scores: None,
                        };
                        let counted =
                            fits_now_by_count(&state.nodes, &state.index, gang, true, &held);
                        let candidates = crate::backfill::IndexCandidates {
                            index: &state.index,
                            preferred: &[],
                            reach: crate::placement::Reach::FreeGpus,
                        };
                        let view = FreeLessHeld(&held);
                        let placed = place_gang(&state.nodes, &candidates, &view, gang);
                        if mode == PlacementMode::Spread || count == 1 {
                            assert_eq!(counted, Some(placed.is_some()), "{shapes:?} {holds:?}");
                            decided += usize::from(!holds.is_empty() && placed.is_some());
                        }
                        assert!(
                            counted != Some(false) || placed.is_none(),
                            "{shapes:?} {holds:?}"
                        );
                        ruled_out += usize::from(!holds.is_empty() && counted == Some(false));
                    }
                }
            }
        }
        assert!(decided > 20, "{decided} fits decided under holds");
        assert!(ruled_out > 20, "{ruled_out} ruled out under holds");
    }

    #[test]
    fn the_count_answers_as_the_placement_does() {
        // Nodes of 4, 4, 8 and 2 cpus; a job holds 3 cpus of the first.
        let mut held = JobSpec::new("held", 1_000, 3);
        held.groups[0].placement = PlacementMode::StrictPack;
        let s = running(
            r#"{"nodes": [{"name": "a", "cpus": 4}, {"name": "b", "cpus": 4},
                          {"name": "c", "cpus": 8}, {"name": "d", "cpus": 2}]}"#,
            held,
        );
        let state = s.state();
        let mix = ShapeMix::default();
        let (mut decided, mut packed_ruled_out) = (0, 0);
        for mode in [
            PlacementMode::Spread,
            PlacementMode::StrictSpread,
            PlacementMode::Pack,
            PlacementMode::StrictPack,
        ] {
            for cpus in 1..=9 {
                for count in 1..=12 {
                    for min_count in [0, 1, count / 2, count] {
                        let shapes = [shape(cpus, count, min_count, mode)];
                        let gang = GangRequest {
                            shapes: &shapes,
                            exclusive: cpus == 2,
                            partition: crate::model::ids::PartitionId(0),
                            mix: &mix,
                            topology: None,
                            gate: None,
                            scores: None,
                        };
                        let counted = fits_now_by_count(
                            &state.nodes,
                            &state.index,
                            gang,
                            true,
                            &BTreeMap::new(),
                        );
                        let candidates = crate::backfill::IndexCandidates {
                            index: &state.index,
                            preferred: &[],
                            reach: crate::placement::Reach::FreeGpus,
                        };
                        let placed = place_gang(&state.nodes, &candidates, &FreeNow, gang);
                        match mode {
                            // One task: placed on any node it fits, whatever the layout.
                            PlacementMode::Pack | PlacementMode::StrictPack if count == 1 => {
                                assert_eq!(counted, Some(placed.is_some()), "{shapes:?}");
                            }
                            PlacementMode::Spread | PlacementMode::StrictSpread => {
                                assert_eq!(counted, Some(placed.is_some()), "{shapes:?}");
                                decided += usize::from(placed.is_some());
                            }
                            // A packed group: ruled out only where no placement exists.
                            PlacementMode::Pack | PlacementMode::StrictPack => {
                                let ruled_out = counted == Some(false);
                                assert!(counted != Some(true), "{shapes:?}");
                                assert!(!ruled_out || placed.is_none(), "{shapes:?}");
                                packed_ruled_out += usize::from(ruled_out);
                            }
                        }
                    }
                }
            }
        }
        assert!(
            decided > 50 && decided < 800,
            "{decided} fit: both answers occur"
        );
        assert!(
            packed_ruled_out > 50,
            "{packed_ruled_out} packed groups ruled out"
        );
    }

    #[test]
    fn the_count_declines_what_it_cannot_decide() {
        let nodes: Vec<Option<Node>> = Vec::new();
        let index = FreeIndex::build(&nodes, 0);
        let mix = ShapeMix::default();
        let gang = |shapes| GangRequest {
            shapes,
            exclusive: false,
            partition: crate::model::ids::PartitionId(0),
            mix: &mix,
            topology: None,
            gate: None,
            scores: None,
        };
        let spread = shape(1, 1, 1, PlacementMode::Spread);
        let pack = shape(1, 1, 1, PlacementMode::Pack);
        let (one, packed, two) = ([spread], [pack], [spread, spread]);
        let count = |shapes, maintenance_free| {
            fits_now_by_count(
                &nodes,
                &index,
                gang(shapes),
                maintenance_free,
                &BTreeMap::new(),
            )
        };
        assert_eq!(count(&one, true), Some(false), "no node: nothing fits");
        assert_eq!(count(&packed, true), Some(false), "a packed group neither");
        assert_eq!(count(&two, true), None);
        assert_eq!(count(&one, false), None);
    }
}
