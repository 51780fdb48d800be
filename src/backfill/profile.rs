//! The availability profile: what each node will have free over any future window, from running
//! jobs' ends (start + time limit, or the grace deadline of a job being preempted) and from the
//! reservations made earlier in the same pass. Maintenance windows' ends are candidate start
//! times too.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::ids::NodeId;
use crate::model::node::Node;
use crate::model::resources::NodeAmounts;
use crate::state::ClusterState;

/// Something holding resources on one node over `[start, end)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Booking {
    start: u64,
    end: u64,
    amounts: NodeAmounts,
}

/// Future free capacity per node, built once per pass when the first job needs a reservation.
#[derive(Clone, Debug, Default)]
pub struct Profile {
    now: u64,
    /// Running jobs' holdings per node, with the time each is expected to end.
    running: BTreeMap<NodeId, Vec<Booking>>,
    /// Reservations per node.
    reserved: BTreeMap<NodeId, Vec<Booking>>,
    /// Times at which something is released: the only start times worth trying.
    releases: BTreeSet<u64>,
}

impl Profile {
    /// Builds the profile of the running jobs at `now`. A job past its time limit counts as
    /// ending now; a job being preempted ends by its grace deadline.
    pub fn build(state: &ClusterState, now: u64) -> Self {
        let mut profile = Profile {
            now,
            ..Profile::default()
        };
        for &id in &state.running {
            let Some(job) = state.job(id) else { continue };
            let Some(run) = job.running() else { continue };
            let mut end = run.start_ms.saturating_add(job.spec.time_limit_ms).max(now);
            if let Some(p) = run.preemption {
                end = end.min(p.deadline_ms.max(now));
            }
            for (node, amounts) in state.node_charges(id) {
                profile.add_running(node, amounts, end);
            }
        }
        profile
            .releases
            .extend(state.maintenance.ends().filter(|&end| end > now));
        profile
    }

    /// Records a holding that started now and ends at `end`.
    pub fn add_running(&mut self, node: NodeId, amounts: NodeAmounts, end: u64) {
        let booking = Booking {
            start: self.now,
            end,
            amounts,
        };
        self.running.entry(node).or_default().push(booking);
        if end > self.now {
            self.releases.insert(end);
        }
    }

    /// Records a reservation of `amounts` on `node` over `[start, end)`.
    pub fn reserve(&mut self, node: NodeId, amounts: NodeAmounts, start: u64, end: u64) {
        self.reserved.entry(node).or_default().push(Booking {
            start,
            end,
            amounts,
        });
        self.releases.insert(end);
    }

    /// Whether any reservation touches `node`.
    pub fn is_reserved(&self, node: NodeId) -> bool {
        self.reserved.contains_key(&node)
    }

    /// Nodes with reservations, in id order.
    pub fn reserved_nodes(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.reserved.keys().copied()
    }

    /// Candidate start times after now, earliest first.
    pub fn release_times(&self) -> impl Iterator<Item = u64> + '_ {
        self.releases.range(self.now + 1..).copied()
    }

    /// What `node` has free during the whole of `[start, end)`: its available capacity (down
    /// devices have nothing free) minus the highest usage at any instant of the window, per
    /// dimension. At `start == now` running jobs count as they hold resources now, even one past
    /// its limit.
    pub fn free_over(&self, id: NodeId, node: &Node, start: u64, end: u64) -> NodeAmounts {
        let reserved = self.reserved.get(&id).map_or(&[][..], Vec::as_slice);
        let mut peak = self.usage_at(id, node, reserved, start);
        for booking in reserved {
            if booking.start > start && booking.start < end {
                peak = peak.max(&self.usage_at(id, node, reserved, booking.start));
            }
        }
        node.available().minus(&peak)
    }

    fn usage_at(&self, id: NodeId, node: &Node, reserved: &[Booking], at: u64) -> NodeAmounts {
        let mut usage = if at == self.now {
            node.used
        } else {
            let mut usage = NodeAmounts::default();
            for b in self.running.get(&id).map_or(&[][..], Vec::as_slice) {
                if b.end > at {
                    usage.add(&b.amounts);
                }
            }
            usage
        };
        for b in reserved {
            if b.start <= at && at < b.end {
                usage.add(&b.amounts);
            }
        }
        usage
    }
}
