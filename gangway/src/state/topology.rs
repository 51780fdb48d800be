//! The cluster's topology tree as the state keeps it: checked against node labels when nodes
//! are configured, added or reconfigured, and the compiled topology constraints of jobs.

use super::{ClusterState, Job};
use crate::config::ClusterConfig;
use crate::error::{ConfigError, ErrorKind, EventError};
use crate::model::ids::NodeId;
use crate::model::job::{TaskGroup, TopologyRequest};
use crate::model::node::Node;
use crate::model::topology::{LevelNeed, Topology};
use crate::placement::GangRequest;
use crate::placement::topology::GangTopology;

impl ClusterState {
    /// Rebuilds the topology tree from the node table (`None` without configured levels). The
    /// labels were checked when the nodes came in, so only a bug leaves a node out.
    pub(crate) fn rebuild_topology(&mut self) {
        self.topology = (!self.config.topology.is_empty())
            .then(|| Topology::build(self.config.topology.clone(), &self.nodes).ok())
            .flatten();
    }

    /// The tree of a restored state: the node table under the domains of `saved` (the
    /// snapshot's numbering), numbered as there; `None` (a snapshot without a numbering)
    /// keeps the tree built afresh. A numbering whose levels are not the configuration's is
    /// refused.
    pub(crate) fn restore_topology(&mut self, saved: Option<Topology>) -> Result<(), String> {
        let Some(saved) = saved else {
            return Ok(());
        };
        if saved.levels() != self.config.topology.as_slice() {
            return Err(format!(
                "topology: levels {:?} differ from the configuration's {:?}",
                saved.levels(),
                self.config.topology
            ));
        }
        self.topology = saved.with_nodes(&self.nodes).ok();
        Ok(())
    }

    /// Puts a just-inserted node in the topology tree.
    pub(crate) fn add_to_topology(&mut self, id: NodeId) {
        if let (Some(topology), Some(Some(node))) =
            (self.topology.as_mut(), self.nodes.get(id.index()))
        {
            // Checked by `check_node_labels` before the node was inserted.
            let _ = topology.add_node(id, &node.labels);
        }
    }

    /// For a reconfiguration to `config`: checks every node's labels against its levels and
    /// compiles live jobs' constraints again (ended jobs whose levels are gone keep none),
    /// indexed by job slot. The tree is rebuilt once the configuration is in effect
    /// ([`ClusterState::rebuild_topology`]).
    pub(crate) fn new_topology(
        &self,
        config: &ClusterConfig,
    ) -> Result<Vec<Vec<Option<LevelNeed>>>, ConfigError> {
        let levels = &config.topology;
        for node in self.nodes.iter().flatten() {
            check_node_labels(levels, node).map_err(|m| ConfigError::new("topology", m))?;
        }
        let mut needs = vec![Vec::new(); self.jobs.len()];
        for (id, job) in self.jobs.iter() {
            let need = &mut needs[id.index()];
            *need = match compile_needs(levels, &job.spec.groups) {
                Ok(compiled) => compiled,
                Err(_) if matches!(job.state, super::JobState::Ended { .. }) => Vec::new(),
                Err((g, request)) => {
                    return Err(ConfigError::new(
                        "topology",
                        format!(
                            "job \"{}\" groups[{g}] names level \"{}\", which the new topology lacks",
                            job.spec.id,
                            request.level()
                        ),
                    ));
                }
            };
        }
        Ok(needs)
    }

    /// The topology a gang with constraints `needs` is placed under (`None` without one).
    pub(crate) fn gang_topology<'a>(
        &'a self,
        needs: &'a [Option<LevelNeed>],
    ) -> Option<GangTopology<'a>> {
        self.topology
            .as_ref()
            .map(|tree| GangTopology { tree, needs })
    }

    /// The gang request of `job` as submitted: its task groups, exclusivity, partition and
    /// topology constraints, measured against the cluster's shape mix.
    pub(crate) fn gang_request<'a>(&'a self, job: &'a Job) -> GangRequest<'a> {
        GangRequest {
            shapes: &job.shapes,
            exclusive: job.spec.exclusive,
            partition: job.partition,
            mix: &self.shape_mix,
            topology: self.gang_topology(&job.topology),
            gate: None,
            scores: None,
        }
    }

    /// Compiles the groups' topology constraints; empty when no group has one.
    pub(crate) fn compile_topology(
        &self,
        id: &str,
        groups: &[TaskGroup],
    ) -> Result<Vec<Option<LevelNeed>>, EventError> {
        compile_needs(&self.config.topology, groups).map_err(|(g, request)| {
            let message = if self.config.topology.is_empty() {
                "the cluster has no topology".to_string()
            } else {
                format!("levels are {}", self.config.topology.join(", "))
            };
            EventError::new(
                ErrorKind::Invalid,
                format!(
                    "submit {id}: groups[{g}].topology: unknown level \"{}\" ({message})",
                    request.level()
                ),
            )
        })
    }
}

/// The groups' constraints against `levels`; the first group naming an unknown level is
/// returned with its request.
pub(crate) fn compile_needs<'a>(
    levels: &[String],
    groups: &'a [TaskGroup],
) -> Result<Vec<Option<LevelNeed>>, (usize, &'a TopologyRequest)> {
    if groups.iter().all(|g| g.topology.is_none()) {
        return Ok(Vec::new());
    }
    groups
        .iter()
        .enumerate()
        .map(|(g, group)| {
            let Some(request) = &group.topology else {
                return Ok(None);
            };
            let level = levels
                .iter()
                .position(|l| l == request.level())
                .ok_or((g, request))?;
            Ok(Some(LevelNeed {
                level,
                required: matches!(request, TopologyRequest::Required(_)),
            }))
        })
        .collect()
}

/// Refuses empty or duplicate level names.
pub(crate) fn check_levels(config: &ClusterConfig) -> Result<(), ConfigError> {
    for (i, level) in config.topology.iter().enumerate() {
        if level.is_empty() {
            return Err(ConfigError::new(
                format!("topology[{i}]"),
                "must not be empty",
            ));
        }
        if config.topology[..i].contains(level) {
            return Err(ConfigError::new(
                format!("topology[{i}]"),
                format!("duplicate level \"{level}\""),
            ));
        }
    }
    Ok(())
}

/// The message for a node lacking a label of a topology level, if it does.
pub(crate) fn check_node_labels(levels: &[String], node: &Node) -> Result<(), String> {
    match Topology::missing_level(levels, &node.labels) {
        Some(level) => Err(format!(
            "node {} has no label for topology level \"{level}\"",
            node.name
        )),
        None => Ok(()),
    }
}
