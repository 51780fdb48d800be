//! Nodes at run time: capacity, GPU devices, state and current usage.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use crate::model::ids::{ModelId, PartitionId};
use crate::model::resources::NodeAmounts;

/// Whether a node takes work.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeState {
    /// Takes new work.
    Up,
    /// Running jobs go on, no new work lands.
    Draining,
    /// Lost: nothing runs here.
    Down,
}

/// A set of partitions as a bitmask (at most 64 partitions).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PartitionSet(pub u64);

impl PartitionSet {
    /// Whether `p` is in the set.
    pub fn contains(self, p: PartitionId) -> bool {
        self.0 & (1u64 << p.0) != 0
    }

    /// Adds `p`.
    pub fn insert(&mut self, p: PartitionId) {
        self.0 |= 1u64 << p.0;
    }
}

/// One node as the scheduler tracks it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Node {
    /// Its name.
    pub name: String,
    /// Everything it has.
    pub capacity: NodeAmounts,
    /// Number of GPU devices (indices 0..gpu_count).
    pub gpu_count: usize,
    /// The model of its GPUs, if any.
    pub gpu_model: Option<ModelId>,
    /// Memory of one GPU in MiB.
    pub gpu_memory_mib: u64,
    /// Device UUIDs in index order, when known.
    pub gpu_uuids: Vec<String>,
    /// Labels.
    pub labels: IndexMap<String, String>,
    /// The partitions it belongs to.
    pub partitions: PartitionSet,
    /// Up, draining or down.
    pub state: NodeState,
    /// What running jobs use now (an exclusive job uses all of it).
    pub used: NodeAmounts,
    /// Number of running jobs on it.
    pub running_jobs: u32,
}

impl Node {
    /// What is free now.
    pub fn free(&self) -> NodeAmounts {
        self.capacity.minus(&self.used)
    }

    /// Whether new work may land here.
    pub fn accepts_work(&self) -> bool {
        self.state == NodeState::Up
    }

    /// Whole GPUs free now.
    pub fn free_whole_gpus(&self) -> u32 {
        self.free().whole_devices(self.gpu_count)
    }
}
