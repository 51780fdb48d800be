//! Fragmentation scores kept across the placements of one pass.
//!
//! The least-fragmenting choice ([`crate::placement::gang`]) scores a node by what placing a
//! group there does to its fragmentation: the fragmentation added and the GPU share left. The
//! score reads the node's make and free amounts (its [`StateKey`]), the group's shape, the
//! partition's device choice and the [`ShapeMix`](crate::placement::ShapeMix), which changes
//! only when a job is submitted, never during a pass. So within a pass two placements now of
//! the same shape in the same partition score a node state alike, and the score is computed
//! once per (partition, shape, state) instead of once per placement: a burst of one-GPU jobs
//! on thousands of alike nodes scores a handful of states.
//!
//! Only for placements now (a reservation's score also reads what its previous plan used),
//! on nodes without MIG slices (whose free slices the state key leaves out), and where the
//! device choice answers by shape (no profile gate, or one whose plug-ins read only the
//! shape): the caller offers the memo only then. Debug builds score every hit afresh and
//! compare.

use std::cell::RefCell;

use crate::model::ids::PartitionId;
use crate::model::shape::TaskShape;
use crate::placement::index::StateKey;
use crate::placement::word_hash::WordHashMap;

/// Most scores one pass keeps; later states are scored at every placement as before.
const MAX_SCORES: usize = 4096;

/// A score's key: the partition (its device choice), the group's shape and the node's state.
type MemoKey = (PartitionId, TaskShape, StateKey);

/// One pass's fragmentation scores by partition, the group's shape and node state:
/// (fragmentation added, GPU share left).
#[derive(Debug, Default)]
pub(crate) struct ScoreMemo {
    // Looked up by key only, never walked: the hash order is not observable.
    scores: RefCell<WordHashMap<MemoKey, (i64, u64)>>,
}

impl ScoreMemo {
    /// The score of `shape` in `partition` on a node in `state`, computed by `score` unless
    /// known.
    pub(crate) fn score(
        &self,
        (partition, shape): (PartitionId, &TaskShape),
        state: StateKey,
        score: impl FnOnce() -> (i64, u64),
    ) -> (i64, u64) {
        let key = (partition, *shape, state);
        let known = self.scores.borrow().get(&key).copied();
        match known {
            Some(known) => {
                debug_assert_eq!(known, score(), "a kept fragmentation score is stale");
                known
            }
            None => {
                let fresh = score();
                let mut scores = self.scores.borrow_mut();
                if scores.len() < MAX_SCORES {
                    scores.insert(key, fresh);
                }
                fresh
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::node::Node;
    use crate::model::resources::NodeAmounts;
    use crate::model::shape::GpuNeed;

    #[test]
    fn a_score_is_computed_once_per_partition_shape_and_state() {
        let memo = ScoreMemo::default();
        let node = Node::new("n", NodeAmounts::full(8_000, 64_000, 8), 8, None);
        let state = |free: &NodeAmounts| StateKey::of(&node, free);
        let one_gpu = TaskShape::new(1_000, 1_000, GpuNeed::Whole(1));
        let computed = std::cell::Cell::new(0);
        let score = |partition: u32, shape: &TaskShape, free: &NodeAmounts, value| {
            memo.score((PartitionId(partition), shape), state(free), || {
                computed.set(computed.get() + 1);
                value
            })
        };
        let full = node.capacity;
        assert_eq!(score(0, &one_gpu, &full, (5, 7)), (5, 7));
        // Known: debug builds compute it again to compare, release builds do not.
        assert_eq!(score(0, &one_gpu, &full, (5, 7)), (5, 7));
        let again = computed.get();
        assert!(again == 1 || (cfg!(debug_assertions) && again == 2));
        // Another partition, shape or state is another score.
        assert_eq!(score(1, &one_gpu, &full, (1, 1)), (1, 1));
        let two = one_gpu.with_count(2);
        assert_eq!(score(0, &two, &full, (2, 2)), (2, 2));
        let mut less = full;
        less.devices[0] = 0;
        assert_eq!(score(0, &one_gpu, &less, (3, 3)), (3, 3));
        assert_eq!(computed.get(), again + 3);
    }

    /// The score of `cpus` thousandths free on an 8-cpu node, for one one-cpu task.
    fn ask(memo: &ScoreMemo, cpus: u64, value: (i64, u64)) -> (i64, u64) {
        let node = Node::new("n", NodeAmounts::full(8_000, 64_000, 0), 0, None);
        let mut free = node.capacity;
        free.cpu_milli = cpus;
        let one = TaskShape::new(1_000, 1_000, GpuNeed::None);
        memo.score((PartitionId(0), &one), StateKey::of(&node, &free), || value)
    }

    /// Asks again for a score kept as `kept`, computing `other` now: release builds give the
    /// kept score, debug builds compare it with the fresh one and panic.
    fn asked_again_is_the_kept_one(memo: &ScoreMemo, cpus: u64, kept: (i64, u64)) -> bool {
        let other = (kept.0 + 1, kept.1 + 1);
        let again =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| ask(memo, cpus, other)));
        match again {
            Ok(score) if score == other => false,
            Ok(score) => !cfg!(debug_assertions) && score == kept,
            Err(_) => cfg!(debug_assertions),
        }
    }

    #[test]
    fn a_kept_score_is_given_again_and_a_pass_keeps_at_most_4096() {
        let memo = ScoreMemo::default();
        assert_eq!(ask(&memo, 1_000, (4, 2)), (4, 2));
        assert!(asked_again_is_the_kept_one(&memo, 1_000, (4, 2)));
        for cpus in 1_001..1_000 + MAX_SCORES as u64 {
            ask(&memo, cpus, (0, cpus));
        }
        // The 4096th state is kept, the 4097th is scored again at every ask.
        let last = 1_000 + MAX_SCORES as u64 - 1;
        assert!(asked_again_is_the_kept_one(&memo, last, (0, last)));
        assert_eq!(ask(&memo, 7_999, (1, 1)), (1, 1));
        assert_eq!(ask(&memo, 7_999, (2, 2)), (2, 2));
        assert!(!asked_again_is_the_kept_one(&memo, 7_999, (2, 2)));
    }

    /// Whether `memo` keeps a score of `shape` on `node` in the state it has free now: release
    /// builds give a kept score instead of the one computed now, debug builds compare the two
    /// and panic.
    fn keeps(memo: &ScoreMemo, shape: &TaskShape, node: &Node) -> bool {
        let now = (i64::MIN, u64::MAX);
        let state = StateKey::of(node, &node.free());
        let asked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            memo.score((PartitionId(0), shape), state, || now)
        }));
        asked.map_or(cfg!(debug_assertions), |score| score != now)
    }

    #[test]
    fn a_placement_now_keeps_the_scores_of_the_states_it_scored_a_reservation_none() {
        use crate::placement::gang::tests::{Now, mix, node, placed_on, task};
        let nodes = vec![node("n8", 8, 0), node("n1", 8, 7)];
        let (n8, n1) = (nodes[0].as_ref().unwrap(), nodes[1].as_ref().unwrap());
        let mix = mix();
        for busy_first in [false, true] {
            let memo = ScoreMemo::default();
            let view = Now { busy_first };
            let placed = placed_on(&nodes, task(1), &mix, None, &view, Some(&memo));
            assert_eq!(placed, ["n1"]);
            // A reservation's score reads its previous plan: never kept.
            assert_eq!(keeps(&memo, &task(1), n8), !busy_first);
            assert_eq!(keeps(&memo, &task(1), n1), !busy_first);
            assert!(!keeps(&memo, &task(2), n1));
        }
    }

    #[test]
    fn keys_that_differ_in_one_field_hash_apart() {
        use std::collections::HashSet;
        use std::hash::BuildHasher;
        // Keys that differ in one field hash apart.
        let node = Node::new("n", NodeAmounts::full(8_000, 64_000, 8), 8, None);
        let one = TaskShape::new(1_000, 1_000, GpuNeed::Whole(1));
        let mut less = node.capacity;
        less.devices[3] = 0;
        let keys: Vec<MemoKey> = vec![
            (PartitionId(0), one, StateKey::of(&node, &node.capacity)),
            (PartitionId(1), one, StateKey::of(&node, &node.capacity)),
            (
                PartitionId(0),
                one.with_count(2),
                StateKey::of(&node, &node.capacity),
            ),
            (PartitionId(0), one, StateKey::of(&node, &less)),
        ];
        let hashes: HashSet<u64> = keys
            .iter()
            .map(|key| WordHashMap::<MemoKey, ()>::default().hasher().hash_one(key))
            .collect();
        assert_eq!(hashes.len(), keys.len());
    }
}
