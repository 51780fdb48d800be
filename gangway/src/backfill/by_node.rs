//! Per-node values of the availability profile, in a vector indexed by node id: the profile
//! reads a node's timeline for every node of every candidate start, so a lookup is an index.

use crate::model::ids::NodeId;

/// Values by node id; nodes without one cost a `None`.
#[derive(Clone, Debug)]
pub(super) struct ByNode<T>(Vec<Option<T>>);

/// Equal when every node has the same value or none in both, however long either vector grew.
impl<T: PartialEq> PartialEq for ByNode<T> {
    fn eq(&self, other: &Self) -> bool {
        let len = self.0.len().max(other.0.len());
        (0..len).all(|i| {
            self.0.get(i).and_then(Option::as_ref) == other.0.get(i).and_then(Option::as_ref)
        })
    }
}

impl<T: Eq> Eq for ByNode<T> {}

impl<T> Default for ByNode<T> {
    fn default() -> Self {
        ByNode(Vec::new())
    }
}

impl<T: PartialEq> ByNode<T> {
    /// Whether every node has the same value in both, or none, where a value that is not
    /// `present` counts as none.
    pub(super) fn eq_where(&self, other: &Self, present: impl Fn(&T) -> bool) -> bool {
        let value = |values: &[Option<T>], i: usize| {
            values
                .get(i)
                .and_then(Option::as_ref)
                .filter(|v| present(v))
                .is_some()
        };
        let len = self.0.len().max(other.0.len());
        (0..len).all(|i| match (value(&self.0, i), value(&other.0, i)) {
            (true, true) => self.0[i] == other.0[i],
            (mine, theirs) => mine == theirs,
        })
    }
}

impl<T> ByNode<T> {
    /// The node's value, if it has one.
    pub(super) fn get(&self, id: NodeId) -> Option<&T> {
        self.0.get(id.index())?.as_ref()
    }

    /// The node's value to change, if it has one.
    pub(super) fn get_mut(&mut self, id: NodeId) -> Option<&mut T> {
        self.0.get_mut(id.index())?.as_mut()
    }

    /// The node's value, made by `make` when it has none yet.
    pub(super) fn get_or_insert_with(&mut self, id: NodeId, make: impl FnOnce() -> T) -> &mut T {
        self.slot(id).get_or_insert_with(make)
    }

    /// How many nodes' places the vector holds (with a value or none).
    #[cfg(test)]
    pub(super) fn places(&self) -> usize {
        self.0.len()
    }

    /// The node's place, made when the vector is shorter.
    pub(super) fn slot(&mut self, id: NodeId) -> &mut Option<T> {
        if self.0.len() <= id.index() {
            self.0.resize_with(id.index() + 1, || None);
        }
        &mut self.0[id.index()]
    }
}

impl<T> FromIterator<(NodeId, T)> for ByNode<T> {
    fn from_iter<I: IntoIterator<Item = (NodeId, T)>>(values: I) -> Self {
        let mut by_node = ByNode::default();
        for (id, value) in values {
            *by_node.slot(id) = Some(value);
        }
        by_node
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_found_by_id_and_made_once() {
        let mut by_node: ByNode<u32> = [(NodeId(2), 20)].into_iter().collect();
        assert_eq!(by_node.get(NodeId(2)), Some(&20));
        assert_eq!(by_node.get(NodeId(0)), None);
        assert_eq!(by_node.get(NodeId(7)), None);
        *by_node.get_or_insert_with(NodeId(5), || 50) += 1;
        assert_eq!(*by_node.get_or_insert_with(NodeId(5), || 0), 51);
        assert_eq!(by_node.get_mut(NodeId(3)), None);
        assert_eq!(by_node.slot(NodeId(5)).take(), Some(51));
        let only_two: ByNode<u32> = [(NodeId(2), 20)].into_iter().collect();
        assert_eq!(by_node, only_two, "a dropped value equals none");
        assert_ne!(by_node, ByNode::default());
        // Values that are not present count as none.
        let zero_at_five: ByNode<u32> = [(NodeId(2), 20), (NodeId(5), 0)].into_iter().collect();
        assert!(zero_at_five.eq_where(&only_two, |&v| v != 0));
        assert!(!zero_at_five.eq_where(&only_two, |_| true));
        assert!(!zero_at_five.eq_where(&ByNode::default(), |&v| v != 0));
    }
}
