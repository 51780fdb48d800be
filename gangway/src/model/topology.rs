//! The network topology: a tree cluster → configured levels (broadest first, e.g. block → rack)
//! → nodes, built from node labels as Kueue TAS's `levels`.
//!
//! The tree lives in a petgraph graph behind the crate's own ids: [`DomainId`] for a domain (one
//! label value at one level, identified by its whole label path, so rack `r3` under block `b1` is
//! another domain than `r3` under `b2`) and [`NodeId`] for nodes. It is derived from the node
//! table and kept current as nodes come and go; for placement it keeps each node's domain per
//! level and the sorted nodes under each domain.
//!
//! ```
//! use gangway::model::{NodeId, Topology};
//! let levels = vec!["block".to_string(), "rack".to_string()];
//! let mut topo = Topology::new(levels);
//! let label = |b: &str, r: &str| -> indexmap::IndexMap<String, String> {
//!     [("block".to_string(), b.to_string()), ("rack".to_string(), r.to_string())].into()
//! };
//! topo.add_node(NodeId(0), &label("b1", "r1")).unwrap();
//! topo.add_node(NodeId(1), &label("b1", "r1")).unwrap();
//! topo.add_node(NodeId(2), &label("b2", "r1")).unwrap();
//! let rack = topo.domain_of(NodeId(0), 1).unwrap();
//! assert_eq!(topo.nodes_under(rack), &[NodeId(0), NodeId(1)]);
//! // Same rack label, other block: another domain.
//! assert_ne!(topo.domain_of(NodeId(2), 1), Some(rack));
//! assert_eq!(topo.domains_at(0).len(), 2);
//! let block = topo.parent(rack).unwrap();
//! assert_eq!((topo.label(block), topo.label(rack), topo.level_of(rack)), ("b1", "r1", 1));
//! assert_eq!(topo.children(block), [rack]);
//! assert!(topo.within(block, rack) && topo.contains(block, NodeId(1)));
//! topo.remove_node(NodeId(1));
//! assert_eq!(topo.nodes_under(rack), &[NodeId(0)]);
//! assert!(topo.add_node(NodeId(3), &Default::default()).is_err());
//! ```

use std::collections::BTreeMap;

use indexmap::IndexMap;
use petgraph::Direction;
use petgraph::stable_graph::{NodeIndex, StableDiGraph};
use petgraph::visit::Dfs;
use serde::{Deserialize, Serialize};

use crate::model::ids::{DomainId, NodeId};
use crate::model::node::Node;

/// A task group's topology constraint, compiled: a level index into [`Topology::levels`].
///
/// ```
/// use gangway::model::LevelNeed;
/// let rack = LevelNeed::new(1, true);
/// assert!(rack.required && rack.level == 1);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LevelNeed {
    /// The level (0 is the broadest).
    pub level: usize,
    /// `true`: all tasks in one domain of the level or not at all; `false`: preferred, with
    /// fallback to broader levels and then anywhere.
    pub required: bool,
}

impl LevelNeed {
    /// All tasks in one domain of `level` (`required`), or preferably so.
    pub fn new(level: usize, required: bool) -> Self {
        LevelNeed { level, required }
    }
}

/// What a vertex of the tree is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Vertex {
    Cluster,
    Domain(DomainId),
    Node(NodeId),
}

#[derive(Clone, Debug)]
struct Domain {
    level: usize,
    label: String,
    parent: Option<DomainId>,
    vertex: NodeIndex,
    /// Nodes under it, in id order.
    nodes: Vec<NodeId>,
}

/// What a snapshot keeps of a [`Topology`]: its levels and its domains' numbering
/// ([`Topology::domain_paths`]); the nodes come back from the node table.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Numbering {
    levels: Vec<String>,
    domains: Vec<Vec<String>>,
}

/// The topology tree; see the module documentation. It serializes as its levels and the label
/// paths of its domains in id order, without nodes: a restore adds the nodes back
/// ([`Topology::with_nodes`]), so that every domain keeps its id.
#[derive(Clone, Debug)]
pub struct Topology {
    levels: Vec<String>,
    graph: StableDiGraph<Vertex, ()>,
    root: NodeIndex,
    domains: Vec<Domain>,
    /// (parent domain, label) → domain.
    by_label: BTreeMap<(Option<DomainId>, String), DomainId>,
    /// Domains of each level, in id order.
    by_level: Vec<Vec<DomainId>>,
    /// Each node's domain per level (empty for absent nodes) and its vertex.
    paths: Vec<Vec<DomainId>>,
    leaves: Vec<Option<NodeIndex>>,
}

impl Topology {
    /// An empty tree over `levels` (broadest first).
    pub fn new(levels: Vec<String>) -> Self {
        let mut graph = StableDiGraph::new();
        let root = graph.add_node(Vertex::Cluster);
        Topology {
            by_level: vec![Vec::new(); levels.len()],
            levels,
            graph,
            root,
            domains: Vec::new(),
            by_label: BTreeMap::new(),
            paths: Vec::new(),
            leaves: Vec::new(),
        }
    }

    /// The first of `levels` that `labels` lacks, if any.
    pub fn missing_level<'a>(
        levels: &'a [String],
        labels: &IndexMap<String, String>,
    ) -> Option<&'a str> {
        levels
            .iter()
            .find(|l| !labels.contains_key(l.as_str()))
            .map(String::as_str)
    }

    /// The level names, broadest first.
    pub fn levels(&self) -> &[String] {
        &self.levels
    }

    /// The index of level `name`.
    pub fn level_index(&self, name: &str) -> Option<usize> {
        self.levels.iter().position(|l| l == name)
    }

    /// Number of domains ever created (ids are `0..domain_count()`).
    pub fn domain_count(&self) -> usize {
        self.domains.len()
    }

    /// The domains of `level`, in id order.
    pub fn domains_at(&self, level: usize) -> &[DomainId] {
        self.by_level.get(level).map_or(&[], Vec::as_slice)
    }

    /// The level of `domain`.
    pub fn level_of(&self, domain: DomainId) -> usize {
        self.domains.get(domain.index()).map_or(0, |d| d.level)
    }

    /// The label value of `domain` at its level.
    pub fn label(&self, domain: DomainId) -> &str {
        self.domains
            .get(domain.index())
            .map_or("", |d| d.label.as_str())
    }

    /// The domain one level broader that holds `domain`.
    pub fn parent(&self, domain: DomainId) -> Option<DomainId> {
        self.domains.get(domain.index()).and_then(|d| d.parent)
    }

    /// The domains one level narrower under `domain`, in id order (from the graph).
    pub fn children(&self, domain: DomainId) -> Vec<DomainId> {
        let Some(d) = self.domains.get(domain.index()) else {
            return Vec::new();
        };
        let mut out: Vec<DomainId> = self
            .graph
            .neighbors_directed(d.vertex, Direction::Outgoing)
            .filter_map(|v| match self.graph[v] {
                Vertex::Domain(id) => Some(id),
                _ => None,
            })
            .collect();
        out.sort_unstable();
        out
    }

    /// The domain of `node` at `level`.
    pub fn domain_of(&self, node: NodeId, level: usize) -> Option<DomainId> {
        self.paths.get(node.index())?.get(level).copied()
    }

    /// Whether `node` lies in `domain`.
    pub fn contains(&self, domain: DomainId, node: NodeId) -> bool {
        self.domain_of(node, self.level_of(domain)) == Some(domain)
    }

    /// Whether `inner` lies in `outer` (or is it).
    pub fn within(&self, outer: DomainId, inner: DomainId) -> bool {
        let level = self.level_of(outer);
        let mut at = Some(inner);
        while let Some(d) = at {
            if self.level_of(d) <= level {
                return d == outer;
            }
            at = self.parent(d);
        }
        false
    }

    /// The nodes under `domain`, in id order.
    pub fn nodes_under(&self, domain: DomainId) -> &[NodeId] {
        self.domains
            .get(domain.index())
            .map_or(&[], |d| d.nodes.as_slice())
    }

    /// The tree over `levels` holding every node of `nodes` (by position); a node lacking a
    /// label of some level is refused as (node, level).
    pub fn build(levels: Vec<String>, nodes: &[Option<Node>]) -> Result<Self, (NodeId, String)> {
        Topology::new(levels).with_nodes(nodes)
    }

    /// This tree (its domains and their ids kept) with every node of `nodes` (by position)
    /// added, creating the domains they name that it lacks; a node lacking a label of some
    /// level is refused as (node, level).
    ///
    /// ```
    /// use gangway::model::Topology;
    /// let skeleton = Topology::numbered(vec!["rack".into()], &[vec!["r9".into()]]).unwrap();
    /// let tree = skeleton.with_nodes(&[]).unwrap();
    /// assert_eq!((tree.domain_count(), tree.domain_paths()), (1, vec![vec!["r9".to_string()]]));
    /// ```
    pub fn with_nodes(mut self, nodes: &[Option<Node>]) -> Result<Self, (NodeId, String)> {
        for (i, node) in nodes.iter().enumerate() {
            if let Some(node) = node {
                let id = NodeId(i as u32);
                self.insert(id, &node.labels).map_err(|level| (id, level))?;
            }
        }
        for d in 0..self.domains.len() {
            self.refresh_members(DomainId(d as u32));
        }
        Ok(self)
    }

    /// Every domain in id order, as its label path from the broadest level down to its own
    /// (a rack under a block: `["b1", "r3"]`). Domain ids number domains in the order they
    /// first appeared, and a domain stays when its last node goes; so the numbering depends
    /// on the history of the node table, not only on the nodes now in it, and a snapshot
    /// keeps it ([`Topology::numbered`] gives it back).
    ///
    /// ```
    /// use gangway::model::{NodeId, Topology};
    /// let mut topo = Topology::new(vec!["block".to_string(), "rack".to_string()]);
    /// let labels: indexmap::IndexMap<String, String> =
    ///     [("block".to_string(), "b1".to_string()), ("rack".to_string(), "r3".to_string())].into();
    /// topo.add_node(NodeId(0), &labels).unwrap();
    /// assert_eq!(topo.domain_paths(), [vec!["b1".to_string()], vec!["b1".to_string(), "r3".to_string()]]);
    /// ```
    pub fn domain_paths(&self) -> Vec<Vec<String>> {
        (0..self.domains.len())
            .map(|d| {
                let mut path = Vec::new();
                let mut at = Some(DomainId(d as u32));
                while let Some(id) = at {
                    let Some(domain) = self.domains.get(id.index()) else {
                        break;
                    };
                    path.push(domain.label.clone());
                    at = domain.parent;
                }
                path.reverse();
                path
            })
            .collect()
    }

    /// A tree over `levels` without nodes whose domains are `paths` ([`Topology::domain_paths`]),
    /// numbered in that order. Refused, naming the entry, when a path is empty, longer than
    /// the levels, listed twice, or listed before the path of its parent domain.
    ///
    /// ```
    /// use gangway::model::Topology;
    /// let levels = || vec!["block".to_string(), "rack".to_string()];
    /// let path = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    /// let tree = Topology::numbered(levels(), &[path(&["b2"]), path(&["b1"]), path(&["b1", "r1"])]).unwrap();
    /// assert_eq!(tree.label(tree.domains_at(0)[0]), "b2");
    /// let err = Topology::numbered(levels(), &[path(&["b1", "r1"])]).unwrap_err();
    /// assert_eq!(err, "domains[0]: listed twice or before its parent domain");
    /// ```
    pub fn numbered(levels: Vec<String>, paths: &[Vec<String>]) -> Result<Self, String> {
        let mut topo = Topology::new(levels);
        for (i, path) in paths.iter().enumerate() {
            if path.is_empty() || path.len() > topo.levels.len() {
                return Err(format!(
                    "domains[{i}]: a path of {} labels under {} levels",
                    path.len(),
                    topo.levels.len()
                ));
            }
            let mut parent = None;
            for (level, label) in path.iter().enumerate() {
                parent = Some(topo.domain(level, parent, label));
            }
            if parent != Some(DomainId(i as u32)) || topo.domains.len() != i + 1 {
                return Err(format!(
                    "domains[{i}]: listed twice or before its parent domain"
                ));
            }
        }
        Ok(topo)
    }

    /// Adds node `id` under the domains its `labels` name, creating them as needed. Refuses a
    /// node lacking a label of some level, naming that level.
    pub fn add_node(
        &mut self,
        id: NodeId,
        labels: &IndexMap<String, String>,
    ) -> Result<(), String> {
        self.insert(id, labels)?;
        for level in 0..self.levels.len() {
            if let Some(d) = self.domain_of(id, level) {
                self.refresh_members(d);
            }
        }
        Ok(())
    }

    /// Puts node `id` in the graph and its path, without refreshing domain members.
    fn insert(&mut self, id: NodeId, labels: &IndexMap<String, String>) -> Result<(), String> {
        if let Some(level) = Self::missing_level(&self.levels, labels) {
            return Err(level.to_string());
        }
        self.remove_node(id);
        let mut path = Vec::with_capacity(self.levels.len());
        let mut parent: Option<DomainId> = None;
        for level in 0..self.levels.len() {
            let value = labels
                .get(self.levels[level].as_str())
                .map_or("", String::as_str);
            let domain = self.domain(level, parent, value);
            path.push(domain);
            parent = Some(domain);
        }
        let leaf = self.graph.add_node(Vertex::Node(id));
        let above = parent.map_or(self.root, |d| self.domains[d.index()].vertex);
        self.graph.add_edge(above, leaf, ());
        if self.paths.len() <= id.index() {
            self.paths.resize(id.index() + 1, Vec::new());
            self.leaves.resize(id.index() + 1, None);
        }
        self.leaves[id.index()] = Some(leaf);
        self.paths[id.index()] = path;
        Ok(())
    }

    /// Removes node `id` (nothing when absent). Its domains stay, possibly empty.
    pub fn remove_node(&mut self, id: NodeId) {
        let Some(leaf) = self.leaves.get_mut(id.index()).and_then(Option::take) else {
            return;
        };
        self.graph.remove_node(leaf);
        let path = std::mem::take(&mut self.paths[id.index()]);
        for d in path {
            self.domains[d.index()].nodes.retain(|n| *n != id);
        }
    }

    /// The domain labelled `value` at `level` under `parent`, created when new.
    fn domain(&mut self, level: usize, parent: Option<DomainId>, value: &str) -> DomainId {
        if let Some(d) = self.by_label.get(&(parent, value.to_string())) {
            return *d;
        }
        let id = DomainId(self.domains.len() as u32);
        let vertex = self.graph.add_node(Vertex::Domain(id));
        let above = parent.map_or(self.root, |p| self.domains[p.index()].vertex);
        self.graph.add_edge(above, vertex, ());
        self.domains.push(Domain {
            level,
            label: value.to_string(),
            parent,
            vertex,
            nodes: Vec::new(),
        });
        self.by_label.insert((parent, value.to_string()), id);
        self.by_level[level].push(id);
        id
    }

    /// Recomputes the nodes under `domain` by walking its subtree.
    fn refresh_members(&mut self, domain: DomainId) {
        let start = self.domains[domain.index()].vertex;
        let mut nodes = std::mem::take(&mut self.domains[domain.index()].nodes);
        nodes.clear();
        let mut dfs = Dfs::new(&self.graph, start);
        while let Some(v) = dfs.next(&self.graph) {
            if let Vertex::Node(n) = self.graph[v] {
                nodes.push(n);
            }
        }
        nodes.sort_unstable();
        self.domains[domain.index()].nodes = nodes;
    }
}

impl Serialize for Topology {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Numbering {
            levels: self.levels.clone(),
            domains: self.domain_paths(),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Topology {
    /// A tree without nodes, numbered as the serialized one ([`Topology::numbered`]).
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let numbering = Numbering::deserialize(deserializer)?;
        Topology::numbered(numbering.levels, &numbering.domains).map_err(serde::de::Error::custom)
    }
}
