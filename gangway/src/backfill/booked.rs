//! The reservations' part of an availability profile: a timeline per reserved node, kept in
//! place across passes. A pass's rebuild hides every timeline at once (each carries the pass,
//! its generation, that booked it), and a booking reuses a hidden timeline's memory. Where a
//! pass made one reservation only, the next pass's first reservation on the same resources
//! over the same window shows that one's timelines again instead of writing them anew: under
//! EASY the head is planned the same at pass after pass, on the same nodes.
//!
//! A shown timeline is exactly what booking the same charges again would write, but for its
//! first step's time, the older pass's now: every read starts at or after the profile's now,
//! where both timelines agree.

use super::by_node::ByNode;
use super::profile::Timeline;
use crate::model::ids::{JobId, NodeId};
use crate::model::resources::NodeAmounts;

/// Timelines of reservations by node, each shown only to the pass that booked it or that
/// took its booking up again.
#[derive(Clone, Debug, Default)]
pub(super) struct BookedTimelines {
    /// Each node's last timeline, with the generation that wrote it.
    by_node: ByNode<(u64, Timeline)>,
    /// Which generations this pass shows.
    shown: Shown,
    /// Nodes with a shown timeline, sorted.
    nodes: Vec<NodeId>,
    /// The bookings this generation made.
    made: Made,
    /// The last generation's one booking, while this one may still take it up.
    carried: Option<Carried>,
}

/// The generations a pass shows: its own, and the last one where it took up its booking.
#[derive(Clone, Copy, Debug, Default)]
struct Shown {
    generation: u64,
    revived: Option<u64>,
}

impl Shown {
    fn shows(self, written: u64) -> bool {
        written == self.generation || Some(written) == self.revived
    }
}

/// What a generation booked, while that can be taken up again by the next.
#[derive(Clone, Debug, Default)]
enum Made {
    /// Nothing yet.
    #[default]
    Nothing,
    /// One booking from after the profile's now, nothing taken back.
    One(Booking),
    /// More than one booking, one taken back, or one starting by the profile's now.
    Other,
}

/// A job's plan's charges by node over a window.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Booking {
    owner: JobId,
    charges: Vec<(NodeId, NodeAmounts)>,
    window: (u64, u64),
}

/// The last generation's one booking, with the nodes it shows.
#[derive(Clone, Debug)]
struct Carried {
    generation: u64,
    booking: Booking,
    nodes: Vec<NodeId>,
}

impl BookedTimelines {
    /// Hides every timeline: what the next pass books is new, except that its first booking
    /// may take up this pass's, where this pass made one only.
    pub(super) fn next_pass(&mut self) {
        self.carried = match std::mem::take(&mut self.made) {
            Made::One(booking) => Some(Carried {
                // A booking taken up keeps the generation that wrote its timelines.
                generation: self.shown.revived.unwrap_or(self.shown.generation),
                booking,
                nodes: std::mem::take(&mut self.nodes),
            }),
            Made::Nothing | Made::Other => None,
        };
        self.nodes.clear();
        self.shown = Shown {
            generation: self.shown.generation + 1,
            revived: None,
        };
    }

    /// The node's timeline, if this pass shows one.
    pub(super) fn get(&self, node: NodeId) -> Option<&Timeline> {
        let (written, timeline) = self.by_node.get(node)?;
        self.shown.shows(*written).then_some(timeline)
    }

    /// The node's timeline to change, if this pass shows one.
    pub(super) fn get_mut(&mut self, node: NodeId) -> Option<&mut Timeline> {
        let shown = self.shown;
        let (written, timeline) = self.by_node.get_mut(node)?;
        shown.shows(*written).then_some(timeline)
    }

    /// The nodes with a timeline shown, in id order.
    pub(super) fn nodes(&self) -> &[NodeId] {
        &self.nodes
    }

    /// Takes up the last pass's one booking, where it was `charges` over `window` (from
    /// after `now`) and this pass has booked nothing yet: its timelines show again, unwritten,
    /// and it is recorded as this pass's, job `owner`'s. `false`: nothing taken up (nothing
    /// recorded).
    pub(super) fn take_up(
        &mut self,
        owner: JobId,
        charges: &[(NodeId, NodeAmounts)],
        window: (u64, u64),
        now: u64,
    ) -> bool {
        let Some(booking) = self.revive(window, now, |b| b.charges == charges) else {
            return false;
        };
        self.made = Made::One(Booking { owner, ..booking });
        true
    }

    /// Takes up the last pass's one booking, where it was job `owner`'s over `window` (from
    /// after `now`) and this pass has booked nothing yet, without comparing charges: the
    /// caller knows that the owner's plan, and so its charges, are unchanged since. Its
    /// timelines show again, unwritten; its charges come back for the caller to book into the
    /// sums and [`BookedTimelines::record`]. `None`: nothing taken up.
    pub(super) fn take_up_unchanged(
        &mut self,
        owner: JobId,
        window: (u64, u64),
        now: u64,
    ) -> Option<Vec<(NodeId, NodeAmounts)>> {
        let booking = self.revive(window, now, |b| b.owner == owner)?;
        Some(booking.charges)
    }

    /// Shows the last pass's one booking again, where it was over `window` (from after
    /// `now`), `matches`, and this pass has booked nothing yet; hands it back.
    fn revive(
        &mut self,
        window: (u64, u64),
        now: u64,
        matches: impl Fn(&Booking) -> bool,
    ) -> Option<Booking> {
        let takes =
            |carried: &Carried| carried.booking.window == window && matches(&carried.booking);
        if !matches!(self.made, Made::Nothing)
            || window.0 <= now
            || !self.carried.as_ref().is_some_and(takes)
        {
            return None;
        }
        let carried = self.carried.take()?;
        self.shown.revived = Some(carried.generation);
        self.nodes = carried.nodes;
        if cfg!(debug_assertions) {
            self.check_taken_up(&carried.booking, now);
        }
        Some(carried.booking)
    }

    /// Debug builds: the timelines taken up read as a fresh booking of the same charges would
    /// (booked by [`BookedTimelines::book`] on an empty set).
    fn check_taken_up(&self, booking: &Booking, now: u64) {
        let mut fresh = BookedTimelines::default();
        fresh.book(&booking.charges, now, booking.window);
        assert_eq!(
            fresh.nodes, self.nodes,
            "the nodes taken up are the booking's"
        );
        for &node in &self.nodes {
            let (Some(shown), Some(fresh)) = (self.get(node), fresh.get(node)) else {
                panic!("node {node:?} taken up without its timeline");
            };
            assert!(
                shown.agrees_from(fresh, now),
                "a timeline taken up differs from a fresh booking on node {node:?}"
            );
        }
    }

    /// Books `charges` (amounts by node) over `window`, in a hidden timeline's memory where a
    /// node has no timeline shown.
    pub(super) fn book(&mut self, charges: &[(NodeId, NodeAmounts)], now: u64, window: (u64, u64)) {
        let shown = self.shown;
        for &(node, ref amounts) in charges {
            match self.by_node.slot(node) {
                Some((written, timeline)) if shown.shows(*written) => {
                    timeline.add(window.0, window.1, amounts);
                }
                // Most nodes of a pass's first reservation: the booking's steps written at once.
                slot => {
                    let memory = slot.take().map_or_else(|| Timeline::new(now), |(_, t)| t);
                    let timeline = memory.with_one_booking(now, window, amounts);
                    *slot = Some((shown.generation, timeline));
                }
            }
            // Charges come by node, mostly after every node reserved so far.
            match self.nodes.last() {
                Some(&last) if last >= node => {
                    if let Err(at) = self.nodes.binary_search(&node) {
                        self.nodes.insert(at, node);
                    }
                }
                _ => self.nodes.push(node),
            }
        }
    }

    /// Records that this pass booked job `owner`'s `charges` over `window` (from after `now`
    /// or not).
    pub(super) fn record(
        &mut self,
        owner: JobId,
        charges: Vec<(NodeId, NodeAmounts)>,
        window: (u64, u64),
        now: u64,
    ) {
        self.made = match self.made {
            Made::Nothing if now < window.0 => Made::One(Booking {
                owner,
                charges,
                window,
            }),
            _ => Made::Other,
        };
    }

    /// Records that this pass booked or took back something else than one plan.
    pub(super) fn record_other(&mut self) {
        self.made = Made::Other;
    }

    /// Whether this pass took up the last one's booking.
    #[cfg(test)]
    pub(super) fn took_up(&self) -> bool {
        self.shown.revived.is_some()
    }

    /// How many nodes' places the vector holds (with a timeline or none).
    #[cfg(test)]
    pub(super) fn places(&self) -> usize {
        self.by_node.places()
    }
}
