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

/// Whether `ids` ids are few among `members` members: a search and a move per id (some 60
/// instructions) then cost less than a step per member (some 5).
fn few_among(ids: usize, members: usize) -> bool {
    ids * 16 < members
}

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
                self.shrink();
            }
        }
    }

    /// Adds `ids`, in id order, none of them a member, where an insertion each would shift the
    /// vector's tail once per id: a few ids into many members, each stretch of members moves
    /// once, by as many places as ids go before it; more, one merge from the back.
    pub(super) fn insert_sorted(&mut self, ids: &[NodeId]) {
        debug_assert!(ids.is_sorted() && ids.iter().all(|&id| !self.contains(id)));
        match self {
            NodeSet::Few(members) if members.len() + ids.len() <= MOST_IN_VECTOR => {
                let few = few_among(ids.len(), members.len());
                let mut end = members.len();
                members.extend_from_slice(ids);
                if few {
                    // From the last id back: the members after its place, up to the next id's
                    // place, move past the ids still to come.
                    for (before, id) in ids.iter().enumerate().rev() {
                        let at = members[..end].partition_point(|member| member < id);
                        members.copy_within(at..end, at + before + 1);
                        members[at + before] = *id;
                        end = at;
                    }
                    return;
                }
                // Fills the vector from its end with the greater of the two runs' last ids.
                let mut new = ids.len();
                for at in (0..members.len()).rev() {
                    if new == 0 {
                        break;
                    }
                    if end > 0 && members[end - 1] > ids[new - 1] {
                        members[at] = members[end - 1];
                        end -= 1;
                    } else {
                        members[at] = ids[new - 1];
                        new -= 1;
                    }
                }
            }
            _ => ids.iter().for_each(|&id| self.insert(id)),
        }
    }

    /// Takes out `ids`, in id order, every one a member, where a removal each would shift the
    /// vector's tail once per id: a few ids out of many members, each stretch of members
    /// between two of them moves once; more, one pass keeps the others.
    pub(super) fn remove_sorted(&mut self, ids: &[NodeId]) {
        debug_assert!(ids.is_sorted() && ids.iter().all(|&id| self.contains(id)));
        if let [id] = ids {
            return self.remove(*id);
        }
        match self {
            NodeSet::Few(members) if few_among(ids.len(), members.len()) => {
                // `kept` members are in place; the stretch from `next` up to the next id moves
                // down to them.
                let first = ids
                    .first()
                    .map_or(0, |id| members.partition_point(|m| m < id));
                let (mut kept, mut next) = (first, first);
                for id in ids {
                    let at = next + members[next..].partition_point(|member| member < id);
                    members.copy_within(next..at, kept);
                    kept += at - next;
                    next = at + 1;
                }
                let len = members.len();
                members.copy_within(next..len, kept);
                members.truncate(kept + len - next);
            }
            NodeSet::Few(members) => {
                let mut leaving = ids.iter().peekable();
                members.retain(|id| leaving.next_if(|&leaves| leaves == id).is_none());
            }
            NodeSet::Many(tree) => {
                ids.iter().for_each(|id| {
                    tree.remove(id);
                });
                self.shrink();
            }
        }
    }

    /// A tree fallen below [`FEWEST_IN_TREE`] ids turns back into a vector.
    fn shrink(&mut self) {
        if let NodeSet::Many(tree) = self
            && tree.len() < FEWEST_IN_TREE
        {
            *self = NodeSet::Few(tree.iter().copied().collect());
        }
    }

    /// Whether `id` is a member.
    fn contains(&self, id: NodeId) -> bool {
        match self {
            NodeSet::Few(ids) => ids.binary_search(&id).is_ok(),
            NodeSet::Many(tree) => tree.contains(&id),
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

    /// Checks `set`'s form against its bounds, and counts it in `forms` (vectors, trees).
    fn count_form(set: &NodeSet, forms: &mut (usize, usize)) {
        match set {
            NodeSet::Few(ids) => {
                assert!(ids.len() <= MOST_IN_VECTOR && ids.is_sorted());
                forms.0 += 1;
            }
            NodeSet::Many(many) => {
                assert!(many.len() >= FEWEST_IN_TREE);
                forms.1 += 1;
            }
        }
    }

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
                count_form(&set, &mut forms);
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

    #[test]
    fn runs_of_ids_added_and_taken_out_at_once_leave_what_a_tree_would() {
        let mut next = numbers(11);
        let mut set = NodeSet::default();
        let mut tree = BTreeSet::new();
        let mut forms = (0, 0);
        for round in 0..400 {
            // Runs of 1 to 40 ids: absent ones to add, members to take out (more adds in the
            // first half, so the set grows past the vector's most and shrinks back).
            let len = 1 + next(40) as usize;
            let adding = next(10) < if round < 200 { 7 } else { 3 };
            let mut run: Vec<NodeId> = (0..len)
                .map(|_| NodeId(next(600) as u32))
                .filter(|id| tree.contains(id) != adding)
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            if run.is_empty() {
                continue;
            }
            if adding {
                set.insert_sorted(&run);
                tree.extend(run.drain(..));
            } else {
                set.remove_sorted(&run);
                run.iter().for_each(|id| {
                    tree.remove(id);
                });
            }
            count_form(&set, &mut forms);
            assert!(set.iter().eq(tree.iter().copied()), "round {round}");
        }
        assert!(
            forms.0 > 0 && forms.1 > 0,
            "both forms were reached: {forms:?}"
        );
    }
}
