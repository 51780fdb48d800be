//! Nodes at run time: capacity, GPU devices, state and current usage.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use crate::model::ids::{ModelId, PartitionId};
use crate::model::mig::MigLayout;
use crate::model::resources::{MAX_DEVICES, NodeAmounts};

/// Whether a node takes work.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
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
///
/// Built outside gangway with [`Node::new`] and the `with_*` methods (it is
/// `#[non_exhaustive]`: a later field is not a breaking change); its fields are read and, in a
/// placement study, updated in place.
///
/// ```
/// use gangway::model::{Node, NodeAmounts, NodeState, PartitionSet};
/// let node = Node::new("n1", NodeAmounts::full(8_000, 64_000, 4), 4, None)
///     .with_partitions(PartitionSet(1))
///     .with_gpu_memory_mib(81_920)
///     .with_label("rack", "r1")
///     .with_nvlink_islands(vec![0b0011, 0b1100])
///     .with_state(NodeState::Draining);
/// assert_eq!(node.labels["rack"], "r1");
/// assert!(!node.accepts_work());
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
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
    /// Devices that are down (`gpu_down`), as a bitmask by index: they take no new work.
    #[serde(default)]
    pub down_gpus: u32,
    /// NVLink islands as device bitmasks (bit `i`: device `i`); a device in none has no NVLink
    /// peer. Whole-GPU tasks take their devices within one island when they can.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nvlink_islands: Vec<u32>,
    /// The MIG slices of its GPUs in MIG mode (none: no GPU in MIG mode).
    #[serde(default, skip_serializing_if = "MigLayout::is_empty")]
    pub mig: MigLayout,
    /// Its most recent `gpu_down` events, oldest first, at most [`GPU_FAULTS_KEPT`]: what a
    /// policy that avoids recently faulty nodes reads.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpu_faults: Vec<GpuFault>,
}

/// How many `gpu_down` events a node remembers.
pub const GPU_FAULTS_KEPT: usize = 16;

/// One `gpu_down` event on a node (read from [`Node::gpu_faults`]; recorded with
/// [`Node::record_gpu_fault`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct GpuFault {
    /// When it was reported (the tick's time).
    pub at_ms: u64,
    /// The device's index.
    pub gpu: u32,
}

impl Node {
    /// An idle, up node with `capacity` and `gpu_count` whole devices of `gpu_model`, in no
    /// partition yet (the scheduler adds its nodes to their partitions), without labels, islands or MIG slices (the `with_*` methods set those).
    ///
    /// ```
    /// use gangway::model::{Node, NodeAmounts, NodeState};
    /// let node = Node::new("n1", NodeAmounts::full(8_000, 64_000, 4), 4, None);
    /// assert_eq!(node.state, NodeState::Up);
    /// assert_eq!(node.free_whole_gpus(), 4);
    /// ```
    pub fn new(
        name: impl Into<String>,
        capacity: NodeAmounts,
        gpu_count: usize,
        gpu_model: Option<ModelId>,
    ) -> Self {
        Node {
            name: name.into(),
            capacity,
            gpu_count,
            gpu_model,
            gpu_memory_mib: 0,
            gpu_uuids: Vec::new(),
            labels: IndexMap::new(),
            partitions: PartitionSet::default(),
            state: NodeState::Up,
            used: NodeAmounts::default(),
            running_jobs: 0,
            down_gpus: 0,
            nvlink_islands: Vec::new(),
            mig: MigLayout::default(),
            gpu_faults: Vec::new(),
        }
    }

    /// The same node in the partitions of `partitions`.
    pub fn with_partitions(mut self, partitions: PartitionSet) -> Self {
        self.partitions = partitions;
        self
    }

    /// The same node with label `key` set to `value`.
    pub fn with_label(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.labels.insert(key.into(), value.into());
        self
    }

    /// The same node in state `state`.
    pub fn with_state(mut self, state: NodeState) -> Self {
        self.state = state;
        self
    }

    /// The same node with `mib` MiB of memory on each GPU.
    pub fn with_gpu_memory_mib(mut self, mib: u64) -> Self {
        self.gpu_memory_mib = mib;
        self
    }

    /// The same node with its devices' UUIDs, in index order.
    pub fn with_gpu_uuids(mut self, uuids: Vec<String>) -> Self {
        self.gpu_uuids = uuids;
        self
    }

    /// The same node with NVLink islands `islands` (device bitmasks, bit `i`: device `i`).
    pub fn with_nvlink_islands(mut self, islands: Vec<u32>) -> Self {
        self.nvlink_islands = islands;
        self
    }

    /// Remembers a `gpu_down` of device `gpu` at `at_ms`, forgetting the oldest beyond
    /// [`GPU_FAULTS_KEPT`].
    ///
    /// ```
    /// use gangway::model::{GPU_FAULTS_KEPT, Node, NodeAmounts};
    /// let mut node = Node::new("n1", NodeAmounts::full(8_000, 64_000, 4), 4, None);
    /// for t in 0..20 {
    ///     node.record_gpu_fault(t, 1);
    /// }
    /// assert_eq!(node.gpu_faults.len(), GPU_FAULTS_KEPT);
    /// assert_eq!(node.gpu_faults[0].at_ms, 4); // the 16 most recent
    /// ```
    pub fn record_gpu_fault(&mut self, at_ms: u64, gpu: u32) {
        if self.gpu_faults.len() == GPU_FAULTS_KEPT {
            self.gpu_faults.remove(0);
        }
        self.gpu_faults.push(GpuFault { at_ms, gpu });
    }

    /// What new work may use at most: the capacity without the devices that are down (and
    /// without their MIG slices).
    ///
    /// ```
    /// use gangway::model::{Node, NodeAmounts};
    /// let mut node = Node::new("n1", NodeAmounts::full(8_000, 64_000, 4), 4, None);
    /// node.set_gpu_down(2, true);
    /// assert_eq!(node.available().devices[..4], [1000, 1000, 0, 1000]);
    /// assert_eq!(node.free_whole_gpus(), 3);
    /// ```
    pub fn available(&self) -> NodeAmounts {
        if self.down_gpus == 0 {
            return self.capacity;
        }
        let mut amounts = self.capacity;
        for (index, device) in amounts.devices.iter_mut().enumerate() {
            if self.gpu_is_down(index) {
                *device = 0;
            }
        }
        if self.down_gpus != 0 && amounts.mig != 0 {
            for gpu in 0..self.gpu_count {
                if self.gpu_is_down(gpu) {
                    amounts.mig &= !self.mig.gpu_mask(gpu as u32);
                }
            }
        }
        amounts
    }

    /// The cpus of [`Node::available`], without building the rest: a down GPU takes no cpu
    /// away, so they are the node's capacity.
    pub(crate) fn available_cpu_milli(&self) -> u64 {
        self.capacity.cpu_milli
    }

    /// What is free now: [`Node::available`] less what running jobs use.
    pub fn free(&self) -> NodeAmounts {
        self.available().minus(&self.used)
    }

    /// Whether device `index` is down.
    pub fn gpu_is_down(&self, index: usize) -> bool {
        index < MAX_DEVICES && self.down_gpus & (1u32 << index) != 0
    }

    /// Marks device `index` down or up (indices from [`MAX_DEVICES`] on are ignored).
    pub fn set_gpu_down(&mut self, index: usize, down: bool) {
        if index < MAX_DEVICES {
            if down {
                self.down_gpus |= 1u32 << index;
            } else {
                self.down_gpus &= !(1u32 << index);
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_available_cpus_are_those_of_the_available_amounts_whatever_gpus_are_down() {
        let mut node = Node::new("n", NodeAmounts::full(8_000, 64_000, 4), 4, None);
        for down in 0..16_u32 {
            for gpu in 0..4 {
                node.set_gpu_down(gpu, down & (1 << gpu) != 0);
            }
            assert_eq!(node.available_cpu_milli(), node.available().cpu_milli);
        }
        assert_eq!(node.available_cpu_milli(), 8_000);
    }
}
