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
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::model::ids::PartitionId;
use crate::model::shape::TaskShape;
use crate::placement::index::StateKey;

/// Most scores one pass keeps; later states are scored at every placement as before.
const MAX_SCORES: usize = 4096;

/// A score's key: the partition (its device choice), the group's shape and the node's state.
type MemoKey = (PartitionId, TaskShape, StateKey);

/// One pass's fragmentation scores by partition, the group's shape and node state:
/// (fragmentation added, GPU share left).
#[derive(Debug, Default)]
pub(crate) struct ScoreMemo {
    // Looked up by key only, never walked: the hash order is not observable.
    scores: RefCell<HashMap<MemoKey, (i64, u64), BuildHasherDefault<WordHasher>>>,
}

/// A quick multiply-and-rotate hash of the key's words: the keys are engine data, not input
/// an adversary picks, and SipHash over their 25 words cost more than the scores it spared.
#[derive(Default)]
struct WordHasher(u64);

impl Hasher for WordHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    /// A slice of integers (the state key's arrays) arrives as its bytes: hashed eight at a
    /// time, as the words they were.
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            let mut full = [0; 8];
            full.copy_from_slice(word);
            self.write_u64(u64::from_le_bytes(full));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut last = [0; 8];
            last[..rest.len()].copy_from_slice(rest);
            self.write_u64(u64::from_le_bytes(last));
        }
    }

    fn write_u64(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_u32(&mut self, word: u32) {
        self.write_u64(u64::from(word));
    }

    fn write_u16(&mut self, word: u16) {
        self.write_u64(u64::from(word));
    }

    fn write_u8(&mut self, word: u8) {
        self.write_u64(u64::from(word));
    }

    fn write_usize(&mut self, word: usize) {
        self.write_u64(word as u64);
    }
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
}
