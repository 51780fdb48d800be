//! Gang placement on typed GPU devices: fit arithmetic, the free-capacity index and the
//! all-or-nothing gang placer.

mod charges;
pub(crate) mod count;
pub(crate) mod fit;
pub(crate) mod frag;
pub(crate) mod gang;
pub(crate) mod index;
pub(crate) mod score_memo;
pub(crate) mod topology;
mod word_hash;

pub use crate::backfill::IndexCandidates;
pub(crate) use charges::charges;
pub use fit::least_fragmenting_device;
pub use frag::ShapeMix;
pub(crate) use gang::idle_now;
pub use gang::{
    Assignment, Candidates, CapacityView, GangRequest, NodeGate, Standing, assignments_fit,
    place_gang,
};
pub use index::{FreeIndex, FreeTotals, NeedFloor, Reach};
pub use topology::GangTopology;
