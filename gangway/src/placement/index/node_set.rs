//! A set of node ids in id order, for the free index's buckets and groups of alike nodes,
//! which every start and end changes: a sorted vector while small, where an insertion or removal is a binary search and a short shift (a B-tree
//! set's two-level search and node updates cost some 220 instructions a change on a group of a
//! hundred nodes), and a B-tree set once large, where shifting thousands of ids at every start
//! and end would cost more than the tree.

use std::collections::BTreeSet;
use std::ops::ControlFlow;

use crate::model::ids::NodeId;

/// Most ids kept in the sorted vector; one more turns the set into a tree.
const MOST_IN_VECTOR: usize = 256;

/// Fewest ids kept in the tree; one fewer turns the set back into a vector (half the most a
/// vector holds, so that a set at the threshold does not change form at every change).
const FEWEST_IN_TREE: usize = MOST_IN_VECTOR / 2;

/// Node ids in id order (see the module's documentation).
#[derive(Clone, Debug)]
pub(super) enum NodeSet {
    /// At most [`MOST_IN_VECTOR`] ids, sorted.
    Few(Vec<NodeId>),
    /// At least [`FEWEST_IN_TREE`] ids.
    Many(BTreeSet<NodeId>),
}

impl Default for NodeSet {
    fn default() -> Self {
        NodeSet::Few(Vec::new())
    }
}

/// Two sets are equal when they hold the same ids, whatever their form.
impl PartialEq for NodeSet {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl NodeSet {
    /// The set of `id` alone.
    pub(super) fn of(id: NodeId) -> Self {
        NodeSet::Few(vec![id])
    }

    /// Adds `id`.
    pub(super) fn insert(&mut self, id: NodeId) {
        match self {
            NodeSet::Few(ids) => {
                let Err(at) = ids.binary_search(&id) else {
                    return;
                };
                if ids.len() < MOST_IN_VECTOR {
                    ids.insert(at, id);
                } else {
                    let mut tree: BTreeSet<NodeId> = ids.drain(..).collect();
                    tree.insert(id);
                    *self = NodeSet::Many(tree);
                }
            }
            NodeSet::Many(tree) => {
                tree.insert(id);
            }
        }
    }

    /// Takes `id` out.
    pub(super) fn remove(&mut self, id: NodeId) {
        match self {
            NodeSet::Few(ids) => {
                if let Ok(at) = ids.binary_search(&id) {
                    ids.remove(at);
                }
            }
            NodeSet::Many(tree) => {
                tree.remove(&id);
                if tree.len() < FEWEST_IN_TREE {
                    *self = NodeSet::Few(tree.iter().copied().collect());
                }
            }
        }
    }

    /// How many ids it holds.
    pub(super) fn len(&self) -> usize {
        match self {
            NodeSet::Few(ids) => ids.len(),
            NodeSet::Many(tree) => tree.len(),
        }
    }

    /// Whether it holds no id.
    pub(super) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The least id.
    pub(super) fn first(&self) -> Option<NodeId> {
        match self {
            NodeSet::Few(ids) => ids.first().copied(),
            NodeSet::Many(tree) => tree.first().copied(),
        }
    }

    /// Calls `f` with the ids in order until it breaks (a walk without
    /// [`NodeSet::iter`]'s choice of form at every id).
    pub(super) fn try_for_each(
        &self,
        mut f: impl FnMut(NodeId) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        match self {
            NodeSet::Few(ids) => ids.iter().try_for_each(|&id| f(id)),
            NodeSet::Many(tree) => tree.iter().try_for_each(|&id| f(id)),
        }
    }

    /// The ids in order.
    pub(super) fn iter(&self) -> impl Iterator<Item = NodeId> + '_ {
        let (few, many) = match self {
            NodeSet::Few(ids) => (Some(ids.iter()), None),
            NodeSet::Many(tree) => (None, Some(tree.iter())),
        };
        few.into_iter()
            .flatten()
            .chain(many.into_iter().flatten())
            .copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backfill::tests::numbers;

    #[test]
    fn a_node_set_holds_what_a_tree_would_through_growth_and_shrinking() {
        let mut next = numbers(7);
        let mut set = NodeSet::default();
        let mut tree = BTreeSet::new();
        let mut forms = (0, 0);
        // Grows past the vector's most (three adds in four draws of 600 ids), shrinks below
        // the tree's fewest (removals only), and again.
        for round in 0..4 {
            let adds = if round % 2 == 0 { 3 } else { 0 };
            for _ in 0..1_500 {
                let id = NodeId(next(600) as u32);
                match next(4) < adds {
                    true => (set.insert(id), tree.insert(id)),
                    false => (set.remove(id), tree.remove(&id)),
                };
                match &set {
                    NodeSet::Few(ids) => {
                        assert!(ids.len() <= MOST_IN_VECTOR);
                        forms.0 += 1;
                    }
                    NodeSet::Many(many) => {
                        assert!(many.len() >= FEWEST_IN_TREE);
                        forms.1 += 1;
                    }
                }
                assert_eq!(set.len(), tree.len());
                assert_eq!(set.is_empty(), tree.is_empty());
                assert_eq!(set.first(), tree.first().copied());
                assert!(set.iter().eq(tree.iter().copied()));
                let mut walked = Vec::new();
                let _ = set.try_for_each(|id| {
                    walked.push(id);
                    ControlFlow::Continue(())
                });
                assert!(walked.into_iter().eq(tree.iter().copied()));
            }
        }
        assert!(
            forms.0 > 0 && forms.1 > 0,
            "both forms were reached: {forms:?}"
        );
        // Equal whatever the form.
        let as_tree = NodeSet::Many(tree.clone());
        let as_vector = NodeSet::Few(tree.iter().copied().collect());
        assert_eq!(as_tree, as_vector);
        assert_ne!(as_tree, NodeSet::of(NodeId(0)));
    }
}
