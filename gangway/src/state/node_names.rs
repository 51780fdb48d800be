//! Node names to ids and back, each name held once and shared: a start decision names its
//! nodes with the shared names ([`crate::decision::PlacementEntry::node`]), a count raised
//! instead of a name copied, at every start of every node.
//!
//! A snapshot carries the names as a map of names to ids; the ids' side is derived from the
//! node table ([`NodeNames::rebuild`], at a restore), and the consistency check compares both
//! sides with the node table.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::model::ids::NodeId;
use crate::model::node::Node;

/// Node names to ids, and the shared name of each node by id.
#[derive(Clone, Debug, Default)]
pub(crate) struct NodeNames {
    ids: BTreeMap<Arc<str>, NodeId>,
    /// By node index; `None` for a removed node.
    names: Vec<Option<Arc<str>>>,
}

impl NodeNames {
    /// The id of the node named `name`.
    pub(crate) fn get(&self, name: &str) -> Option<NodeId> {
        self.ids.get(name).copied()
    }

    /// Whether a node is named `name`.
    pub(crate) fn contains(&self, name: &str) -> bool {
        self.ids.contains_key(name)
    }

    /// How many nodes are named.
    pub(crate) fn len(&self) -> usize {
        self.ids.len()
    }

    /// The shared name of node `id`.
    pub(crate) fn shared(&self, id: NodeId) -> Option<&Arc<str>> {
        self.names.get(id.index())?.as_ref()
    }

    /// Names node `id` `name`.
    pub(crate) fn insert(&mut self, name: &str, id: NodeId) {
        let name: Arc<str> = Arc::from(name);
        self.ids.insert(Arc::clone(&name), id);
        if self.names.len() <= id.index() {
            self.names.resize(id.index() + 1, None);
        }
        self.names[id.index()] = Some(name);
    }

    /// Forgets the node named `name`.
    pub(crate) fn remove(&mut self, name: &str) {
        if let Some(slot) = self
            .ids
            .remove(name)
            .and_then(|id| self.names.get_mut(id.index()))
        {
            *slot = None;
        }
    }

    /// Both sides again from the node table.
    pub(crate) fn rebuild(&mut self, nodes: &[Option<Node>]) {
        *self = NodeNames::default();
        for (i, node) in nodes.iter().enumerate() {
            if let Some(node) = node {
                self.insert(&node.name, NodeId(i as u32));
            }
        }
    }

    /// Whether both sides name exactly the nodes of `nodes`, each by its id.
    pub(crate) fn indexes(&self, nodes: &[Option<Node>]) -> bool {
        self.ids.len() == nodes.iter().flatten().count()
            && self.names.len() <= nodes.len()
            && nodes.iter().enumerate().all(|(i, node)| {
                let shared = self.names.get(i).and_then(Option::as_deref);
                match node {
                    Some(node) => {
                        self.get(&node.name) == Some(NodeId(i as u32))
                            && shared == Some(node.name.as_str())
                    }
                    None => shared.is_none(),
                }
            })
    }
}

/// As the map of names to ids.
impl Serialize for NodeNames {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.ids.serialize(serializer)
    }
}

/// The map of names to ids; the ids' side waits for [`NodeNames::rebuild`].
impl<'de> Deserialize<'de> for NodeNames {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(NodeNames {
            ids: BTreeMap::deserialize(deserializer)?,
            names: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::resources::NodeAmounts;

    fn node(name: &str) -> Option<Node> {
        Some(Node::new(name, NodeAmounts::full(1_000, 1_000, 0), 0, None))
    }

    #[test]
    fn names_each_node_both_ways_with_one_shared_name() {
        let mut nodes = vec![node("a"), node("b"), node("c")];
        let mut names = NodeNames::default();
        for (i, n) in nodes.iter().flatten().enumerate() {
            names.insert(&n.name, NodeId(i as u32));
        }
        assert!(names.indexes(&nodes));
        let b = Arc::clone(names.shared(NodeId(1)).unwrap());
        assert_eq!(&*b, "b");
        // The map's key and the id's name are one allocation.
        let (key, _) = names.ids.get_key_value("b").unwrap();
        assert!(Arc::ptr_eq(key, &b));
        names.remove("b");
        nodes[1] = None;
        assert_eq!(names.get("b"), None);
        assert_eq!(names.shared(NodeId(1)), None);
        assert!(names.indexes(&nodes));
        // A name out of step with the node table is caught.
        nodes[2] = node("z");
        assert!(!names.indexes(&nodes));
        // Through a snapshot: the map, then the ids' side from the table.
        let json = serde_json::to_string(&names).unwrap();
        assert_eq!(json, r#"{"a":0,"c":2}"#);
        let mut restored: NodeNames = serde_json::from_str(&json).unwrap();
        assert_eq!(restored.get("c"), Some(NodeId(2)));
        nodes[2] = node("c");
        assert!(!restored.indexes(&nodes));
        restored.rebuild(&nodes);
        assert!(restored.indexes(&nodes));
        assert_eq!(restored.shared(NodeId(2)).map(|n| &**n), Some("c"));
    }
}
