//! What a job's task groups add up to, kept on the job so that a pass reads one small record
//! per pending job instead of walking its groups; and what the nodes add up to, kept on the
//! state so that a pass does not walk every node for the cluster's size.

use crate::model::node::Node;
use crate::model::shape::TaskShape;
use crate::placement::FreeTotals;

/// The nodes' capacity summed: what the priority factors and shares divide by. Derived, kept
/// wherever a node is added or removed (nothing else changes a node's capacity or GPU count),
/// rebuilt on restore; [`crate::state::ClusterState::capacity`] checks it against a sum over
/// the nodes in debug builds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CapacityTotals {
    /// Every node's GPUs, thousandths (down devices included).
    pub gpu_milli: u64,
    /// Every node's cpus, thousandths.
    pub cpu_milli: u64,
}

impl CapacityTotals {
    /// The sum over `nodes`.
    pub(crate) fn of(nodes: &[Option<Node>]) -> Self {
        let mut totals = CapacityTotals::default();
        for node in nodes.iter().flatten() {
            totals.add(node);
        }
        totals
    }

    /// Counts `node` in.
    pub(crate) fn add(&mut self, node: &Node) {
        self.gpu_milli += gpu_milli(node);
        self.cpu_milli += node.capacity.cpu_milli;
    }

    /// Counts `node`, counted in before, out again.
    pub(crate) fn remove(&mut self, node: &Node) {
        self.gpu_milli -= gpu_milli(node);
        self.cpu_milli -= node.capacity.cpu_milli;
    }
}

/// `node`'s GPUs in thousandths (down devices included).
fn gpu_milli(node: &Node) -> u64 {
    node.gpu_count as u64 * 1000
}

/// A job's summed amounts, derived from its task shapes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct JobTotals {
    /// What it needs free to start, at each group's `min_count` ([`FreeTotals::need`]).
    pub need: FreeTotals,
    /// Its GPUs at each group's `count`, thousandths (MIG slices not counted): the job-size
    /// priority factor's numerator and its GPU quota demand.
    pub gpu_milli: u64,
    /// Its cpus at each group's `count`, thousandths.
    pub cpu_milli: u64,
    /// Its memory at each group's `count`, MiB.
    pub memory_mib: u64,
}

impl JobTotals {
    /// The totals of `shapes` (saturating: a sum too large to count is as large as can be).
    pub(crate) fn of(shapes: &[TaskShape]) -> Self {
        let mut totals = JobTotals {
            need: FreeTotals::need(shapes),
            ..JobTotals::default()
        };
        for s in shapes {
            let count = u64::from(s.count);
            let add = |sum: u64, per_task: u64| sum.saturating_add(per_task.saturating_mul(count));
            totals.gpu_milli = add(totals.gpu_milli, s.gpu.device_milli());
            totals.cpu_milli = add(totals.cpu_milli, s.cpu_milli);
            totals.memory_mib = add(totals.memory_mib, s.memory_mib);
        }
        totals
    }
}

/// The examples of this module's documentation from when it was public, as unit tests.
#[cfg(test)]
mod examples {
    #[test]
    fn job_totals() {
        use crate::model::shape::{GpuNeed, TaskShape};
        use crate::state::JobTotals;
        let shape = TaskShape {
            cpu_milli: 2_000,
            memory_mib: 100,
            gpu: GpuNeed::Whole(2),
            models: Default::default(),
            count: 4,
            min_count: 3,
            mode: crate::PlacementMode::Spread,
        };
        let totals = JobTotals::of(&[shape]);
        assert_eq!(totals.need.whole_gpus, 6); // at min_count
        assert_eq!(totals.gpu_milli, 8_000); // at count
        assert_eq!(totals.cpu_milli, 8_000);
        assert_eq!(totals.memory_mib, 400);
    }
}
