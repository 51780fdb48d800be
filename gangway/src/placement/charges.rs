//! What a set of assignments holds on each node.

use crate::model::ids::NodeId;
use crate::model::node::Node;
use crate::model::resources::NodeAmounts;
use crate::placement::Assignment;

/// Per-node charges of `assignments`: summed per node in first-seen order, or the whole node
/// (its capacity) when the job is `exclusive`. A node missing from `nodes` is charged nothing
/// for an exclusive job.
pub(crate) fn charges(
    nodes: &[Option<Node>],
    assignments: &[Assignment],
    exclusive: bool,
) -> Vec<(NodeId, NodeAmounts)> {
    let mut out: Vec<(NodeId, NodeAmounts)> = Vec::new();
    for a in assignments {
        match out.iter_mut().find(|(n, _)| *n == a.node) {
            Some((_, total)) => total.add(&a.amounts),
            None => out.push((a.node, a.amounts)),
        }
    }
    if exclusive {
        for (node, total) in &mut out {
            *total = nodes
                .get(node.index())
                .and_then(Option::as_ref)
                .map(|n| n.capacity)
                .unwrap_or_default();
        }
    }
    out
}
