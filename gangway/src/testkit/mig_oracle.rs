//! The oracle's MIG checks on one placement entry of a `start`: a group asking for MIG slices
//! gets exactly one slice of its profile per task and no GPU index; any other group gets no
//! slice; the slices listed are those the books hold.

use crate::decision::PlacementEntry;
use crate::model::node::Node;
use crate::model::shape::{GpuNeed, TaskShape};
use crate::placement::Assignment;
use crate::state::ClusterState;

/// Checks `entry` (booked as `a`, of a group of `shape`, on `node`) for job `name`.
pub(super) fn check_entry(
    state: &ClusterState,
    name: &str,
    node: &Node,
    shape: &TaskShape,
    entry: &PlacementEntry,
    a: &Assignment,
) -> Result<(), String> {
    let booked: Vec<(u32, u32)> = node
        .mig
        .in_mask(a.amounts.mig)
        .map(|s| (s.gpu, s.slice))
        .collect();
    let listed: Vec<(u32, u32)> = entry.mig.iter().map(|m| (m.gpu, m.slice)).collect();
    if booked != listed {
        return Err(format!(
            "start of {name} on {}: MIG slices {listed:?} listed, {booked:?} booked",
            node.name
        ));
    }
    match shape.gpu {
        GpuNeed::Mig(profile) => {
            let wanted = state.mig_profile_name(profile);
            if entry.mig.len() != a.tasks as usize || !entry.gpus.is_empty() {
                return Err(format!(
                    "start of {name} on {}: {} tasks got {} MIG slices and GPUs {:?}",
                    node.name,
                    a.tasks,
                    entry.mig.len(),
                    entry.gpus
                ));
            }
            if let Some(other) = entry.mig.iter().find(|m| m.profile != wanted) {
                return Err(format!(
                    "start of {name} on {}: a {wanted} task got a {} slice",
                    node.name, other.profile
                ));
            }
        }
        _ if !entry.mig.is_empty() => {
            return Err(format!(
                "start of {name} on {}: a non-MIG group got MIG slices",
                node.name
            ));
        }
        _ => {}
    }
    if let Some(gpu) = entry.gpus.iter().find(|g| node.mig.has_gpu(**g)) {
        return Err(format!(
            "start of {name} on {}: GPU {gpu} is in MIG mode but given whole or in part",
            node.name
        ));
    }
    Ok(())
}
