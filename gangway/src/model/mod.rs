//! The data model: amounts, ids, resource vectors, nodes with GPU devices and MIG slices, jobs,
//! and the range of times. Its items are re-exported here, flat (`gangway::model::Node`); a
//! job's parts and [`Milli`] are also at the crate root.

pub(crate) mod amount;
pub(crate) mod ids;
pub(crate) mod job;
pub(crate) mod mig;
pub(crate) mod mig_table;
pub(crate) mod node;
pub(crate) mod resources;
pub(crate) mod shape;
pub(crate) mod time;
pub(crate) mod topology;

pub use amount::{AmountError, Milli};
pub use ids::{DomainId, JobId, MigProfileId, ModelId, NodeId, PartitionId};
pub use job::{
    Dependency, DependencyKind, FinishOutcome, JobSpec, Outcome, PlacementMode, TaskGroup,
    TopologyRequest,
};
pub use mig::{GPU_COMPUTE_SLICES, MigLayout, MigSlice};
pub use node::{GPU_FAULTS_KEPT, GpuFault, Node, NodeState, PartitionSet};
pub use resources::{DEVICE_MILLI, MAX_DEVICES, MAX_NODE_CPUS, MAX_NODE_MEMORY_MIB, NodeAmounts};
pub use shape::{GpuNeed, ModelMask, TaskShape};
pub use topology::{LevelNeed, Topology};
