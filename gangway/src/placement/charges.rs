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
    let mut out: Vec<(NodeId, NodeAmounts)> = Vec::with_capacity(assignments.len());
    // Assignments usually come by node: a node after every node seen so far is new, without a
    // search (which would make a wide gang's charges quadratic).
    let mut highest: Option<NodeId> = None;
    for a in assignments {
        let earlier = match highest {
            Some(h) if a.node <= h => out.iter_mut().find(|(n, _)| *n == a.node),
            _ => None,
        };
        match earlier {
            Some((_, total)) => total.add(&a.amounts),
            None => out.push((a.node, a.amounts)),
        }
        highest = highest.max(Some(a.node));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn assignment(group: usize, node: u32, cpu_milli: u64) -> Assignment {
        Assignment {
            group,
            node: NodeId(node),
            tasks: 1,
            gpus: Vec::new(),
            amounts: NodeAmounts {
                cpu_milli,
                ..NodeAmounts::default()
            },
        }
    }

    #[test]
    fn amounts_are_summed_per_node_in_first_seen_order() {
        // Two groups: the second comes back to nodes the first took, out of order.
        let assignments = [
            assignment(0, 2, 1),
            assignment(0, 5, 10),
            assignment(1, 7, 100),
            assignment(1, 2, 1_000),
            assignment(1, 5, 10_000),
            assignment(1, 3, 100_000),
        ];
        let cpus: Vec<(u32, u64)> = charges(&[], &assignments, false)
            .into_iter()
            .map(|(node, a)| (node.0, a.cpu_milli))
            .collect();
        assert_eq!(cpus, [(2, 1_001), (5, 10_010), (7, 100), (3, 100_000)]);
    }
}
