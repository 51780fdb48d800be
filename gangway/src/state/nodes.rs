//! Node events: add, remove, down, up, drain, and a single GPU going down or up. Jobs on a lost
//! node or GPU (or one of its MIG slices) are requeued, or killed when they cannot be.

use super::ClusterState;
use crate::config::NodeConfig;
use crate::decision::{Decision, KillReason, RequeueReason};
use crate::error::{ErrorKind, EventError};
use crate::model::ids::{JobId, NodeId};
use crate::model::node::NodeState;

impl ClusterState {
    pub(crate) fn add_node(&mut self, cfg: NodeConfig) -> Result<(), EventError> {
        if self.node_names.contains(&cfg.name) {
            return Err(EventError::new(
                ErrorKind::Invalid,
                format!("node_add {}: a node with this name exists", cfg.name),
            ));
        }
        let models_before = self.models.len();
        let node = self.node_from_config(&cfg).map_err(|(field, message)| {
            self.models.truncate(models_before);
            let kind = if field.starts_with("partitions") {
                ErrorKind::UnknownPartition
            } else {
                ErrorKind::Invalid
            };
            EventError::new(kind, format!("node_add {}: {field}: {message}", cfg.name))
        })?;
        if let Err(message) = super::topology::check_node_labels(&self.config.topology, &node) {
            self.models.truncate(models_before);
            return Err(EventError::new(
                ErrorKind::Invalid,
                format!("node_add {}: labels: {message}", cfg.name),
            ));
        }
        let id = self.insert_node(node);
        if self.models.len() != models_before {
            self.rebuild_index();
        } else {
            self.index.refresh(&self.nodes, id);
            self.add_to_topology(id);
        }
        Ok(())
    }

    pub(crate) fn remove_node(
        &mut self,
        name: &str,
        now_ms: u64,
        decisions: &mut Vec<Decision>,
    ) -> Result<(), EventError> {
        let id = self.node_id(name, "node_remove")?;
        self.evict_jobs(
            id,
            None,
            now_ms,
            decisions,
            RequeueReason::NodeRemoved,
            KillReason::NodeRemoved,
        );
        if let Some(node) = self.nodes[id.index()].take() {
            self.capacity.remove(&node);
        }
        self.satisfiable.clear();
        self.node_names.remove(name);
        self.index.refresh(&self.nodes, id);
        if let Some(topology) = self.topology.as_mut() {
            topology.remove_node(id);
        }
        Ok(())
    }

    pub(crate) fn node_down(
        &mut self,
        name: &str,
        now_ms: u64,
        decisions: &mut Vec<Decision>,
    ) -> Result<(), EventError> {
        let id = self.node_id(name, "node_down")?;
        self.evict_jobs(
            id,
            None,
            now_ms,
            decisions,
            RequeueReason::NodeDown,
            KillReason::NodeDown,
        );
        if let Some(node) = self.nodes[id.index()].as_mut() {
            node.state = NodeState::Down;
        }
        self.index.refresh(&self.nodes, id);
        Ok(())
    }

    pub(crate) fn set_node_state(
        &mut self,
        name: &str,
        what: &str,
        state: NodeState,
    ) -> Result<(), EventError> {
        let id = self.node_id(name, what)?;
        if state != NodeState::Up {
            self.release_earmarks_on(id);
        }
        if let Some(node) = self.nodes[id.index()].as_mut() {
            node.state = state;
        }
        self.index.refresh(&self.nodes, id);
        Ok(())
    }

    pub(crate) fn gpu_down(
        &mut self,
        name: &str,
        gpu: u32,
        now_ms: u64,
        decisions: &mut Vec<Decision>,
    ) -> Result<(), EventError> {
        let (id, index) = self.gpu_id(name, gpu, "gpu_down")?;
        self.evict_jobs(
            id,
            Some(index),
            now_ms,
            decisions,
            RequeueReason::GpuDown,
            KillReason::GpuDown,
        );
        if let Some(node) = self.nodes[id.index()].as_mut() {
            node.set_gpu_down(index, true);
            node.record_gpu_fault(now_ms, gpu);
        }
        self.index.refresh(&self.nodes, id);
        Ok(())
    }

    pub(crate) fn gpu_up(&mut self, name: &str, gpu: u32) -> Result<(), EventError> {
        let (id, index) = self.gpu_id(name, gpu, "gpu_up")?;
        if let Some(node) = self.nodes[id.index()].as_mut() {
            node.set_gpu_down(index, false);
        }
        self.index.refresh(&self.nodes, id);
        Ok(())
    }

    /// The node and device index a GPU event names, checked.
    fn gpu_id(&self, name: &str, gpu: u32, what: &str) -> Result<(NodeId, usize), EventError> {
        let id = self.node_id(name, what)?;
        let count = self.node(id).map_or(0, |n| n.gpu_count);
        match usize::try_from(gpu) {
            Ok(index) if index < count => Ok((id, index)),
            _ => Err(EventError::new(
                ErrorKind::Invalid,
                format!("{what} {name}: gpu {gpu} does not exist (the node has {count} GPUs)"),
            )),
        }
    }

    fn node_id(&self, name: &str, what: &str) -> Result<NodeId, EventError> {
        self.node_names.get(name).ok_or_else(|| {
            EventError::new(
                ErrorKind::UnknownNode,
                format!("{what}: no node \"{name}\""),
            )
        })
    }

    /// Requeues (or kills) every running job with a task on `node` (with `gpu`: every job that
    /// uses that device of `node`, an exclusive job on the node included).
    fn evict_jobs(
        &mut self,
        node: NodeId,
        gpu: Option<usize>,
        now_ms: u64,
        decisions: &mut Vec<Decision>,
        requeue_reason: RequeueReason,
        kill_reason: KillReason,
    ) {
        self.release_earmarks_on(node);
        let slices = match (gpu, self.node(node)) {
            (Some(g), Some(n)) => n.mig.gpu_mask(g as u32),
            _ => 0,
        };
        let uses = |amounts: &crate::model::resources::NodeAmounts, g: usize| {
            amounts.devices.get(g).is_some_and(|d| *d > 0) || amounts.mig & slices != 0
        };
        let victims: Vec<JobId> = self
            .running
            .iter()
            .copied()
            .filter(|j| {
                self.node_charges(*j)
                    .any(|(n, amounts)| n == node && gpu.is_none_or(|g| uses(&amounts, g)))
            })
            .collect();
        for id in victims {
            self.evict_job(id, now_ms, true, (requeue_reason, kill_reason), decisions);
        }
    }
}
