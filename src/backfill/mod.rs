//! Backfill: the availability profile and the capacity views built on it.
//!
//! Reservations are pinned to specific nodes and devices. A job planned at time `T` is placed
//! with [`FutureView`] (free over `[T, T + limit)`), visiting nodes busiest-now first so that
//! resources free now stay usable for backfill. A job placed now uses [`NowView`]: free now minus
//! whatever a reservation needs while the job would still run, so a candidate that ends by a
//! reservation's start may use its resources (and is offered them first), and one that runs past
//! it may use only what the reservation does not need — EASY's "extra" rule, per device.
//! Both views offer nothing on a node whose maintenance window the job would overlap.

mod cpu_total;
pub mod licenses;
pub mod profile;

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use crate::model::ids::NodeId;
use crate::model::job::PlacementMode;
use crate::model::node::Node;
use crate::model::resources::NodeAmounts;
use crate::model::shape::TaskShape;
use crate::placement::{Candidates, CapacityView, FreeIndex};
use crate::state::Maintenance;
pub use profile::Profile;

/// Free capacity for a job starting now and running until `end`, less what is earmarked for
/// preemptors other than the job, plus what `released` names (the resources of preemption
/// victims being tried).
pub struct NowView<'a> {
    /// The pass's profile, once a reservation exists.
    pub profile: Option<&'a Profile>,
    /// Now.
    pub now: u64,
    /// Now + the job's time limit.
    pub end: u64,
    /// Resources earmarked for other jobs, per node.
    pub held: &'a BTreeMap<NodeId, NodeAmounts>,
    /// Resources counted as free although still in use (tentative victims), per node.
    pub released: &'a BTreeMap<NodeId, NodeAmounts>,
    /// Maintenance windows: a node whose window overlaps `[now, end)` offers nothing.
    pub maintenance: &'a Maintenance,
}

impl CapacityView for NowView<'_> {
    fn free(&self, id: NodeId, node: &Node) -> Option<NodeAmounts> {
        if !node.accepts_work() || self.maintenance.blocks(id, self.now, self.end) {
            return None;
        }
        let mut free = match self.profile {
            Some(p) if p.is_reserved(id) => p.free_over(id, node, self.now, self.end, false),
            _ => node.free(),
        };
        if let Some(released) = self.released.get(&id) {
            free.add(released);
            free = node.capacity.minus(&node.capacity.minus(&free));
        }
        if let Some(held) = self.held.get(&id) {
            free.sub(held);
        }
        Some(free)
    }
}

/// Free capacity over a future window `[start, end)`.
pub struct FutureView<'a> {
    /// The pass's profile.
    pub profile: &'a Profile,
    /// Window start.
    pub start: u64,
    /// Window end.
    pub end: u64,
    /// Maintenance windows: a node whose window overlaps `[start, end)` offers nothing.
    pub maintenance: &'a Maintenance,
}

impl CapacityView for FutureView<'_> {
    fn free(&self, id: NodeId, node: &Node) -> Option<NodeAmounts> {
        (node.accepts_work() && !self.maintenance.blocks(id, self.start, self.end))
            .then(|| self.profile.free_over(id, node, self.start, self.end, true))
    }
}

/// A lower bound (at least `start`) on the start of any window of `len` milliseconds in which
/// the gang of `shapes` (at their counts) can fit: a node counts only from the earliest time
/// from which no instant of the window leaves it too little for one task, and the gang needs
/// that many nodes (its task count for one strict-spread group, else one). Trying start times
/// below the bound is wasted work; `u64::MAX`: never. Single-group gangs use the profile's
/// memo of earlier answers.
pub fn earliest_fit_bound(
    profile: &mut Profile,
    nodes: &[Option<Node>],
    shapes: &[TaskShape],
    start: u64,
    len: u64,
) -> u64 {
    let needed = match shapes {
        [only] if only.mode == PlacementMode::StrictSpread => only.count.max(1) as usize,
        _ => 1,
    };
    let need = |s: &TaskShape| (s.cpu_milli, s.memory_mib, s.whole_gpus());
    let slot = match shapes {
        [only] => Some(profile.need_slot(need(only))),
        _ => None,
    };
    let mut bounds: Vec<u64> = Vec::new();
    for (i, node) in nodes.iter().enumerate() {
        let Some(node) = node.as_ref().filter(|n| n.accepts_work()) else {
            continue;
        };
        let id = NodeId(i as u32);
        bounds.push(match slot {
            Some(slot) => profile.earliest_usable_memo(slot, id, node, start, len),
            None => profile.earliest_usable(id, node, start, len, |available, used| {
                shapes
                    .iter()
                    .any(|s| available.fits_task(used, node.gpu_count, need(s)))
            }),
        });
    }
    if bounds.len() < needed {
        return u64::MAX;
    }
    *bounds.select_nth_unstable(needed - 1).1
}

/// Candidates from the free index, with some nodes offered first.
pub struct IndexCandidates<'a> {
    /// The index.
    pub index: &'a FreeIndex,
    /// Offered before the rest (nodes with reservations, for jobs placed now).
    pub preferred: &'a [NodeId],
    /// Visit every node of an allowed model (planning ahead), not only those with room now.
    pub all_levels: bool,
}

impl Candidates for IndexCandidates<'_> {
    fn visit(&self, shape: &TaskShape, f: &mut dyn FnMut(NodeId) -> ControlFlow<()>) {
        for id in self.preferred {
            if f(*id).is_break() {
                return;
            }
        }
        let _ = self.index.visit(shape, self.all_levels, &mut |id| {
            if self.preferred.contains(&id) {
                ControlFlow::Continue(())
            } else {
                f(id)
            }
        });
    }
}
