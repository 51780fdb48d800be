//! Gang placement on typed GPU devices: fit arithmetic, the free-capacity index and the
//! all-or-nothing gang placer.

mod charges;
pub(crate) mod count;
#[doc(hidden)]
pub mod fit;
pub mod frag;
pub mod gang;
#[doc(hidden)]
pub mod index;
pub mod topology;

pub(crate) use charges::charges;
pub use frag::ShapeMix;
pub use gang::{
    Assignment, Candidates, CapacityView, GangRequest, NodeGate, assignments_fit, place_gang,
};
pub use index::{FreeIndex, FreeTotals, NeedFloor, Reach};
