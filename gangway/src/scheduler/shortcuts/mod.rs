//! What a pass may skip because the pass before already knew it. None of these changes a
//! decision, a reason or an estimate: the reference pass (`testkit::reference`), which takes
//! none, must agree with every pass after every tick, and its property family
//! (gangway/tests/engine/reference_properties.rs) checks it on random streams of every feature.
//!
//! - [`settled`]: a pass stops once nothing later in the order can start, be planned or
//!   preempt; the reasons of the jobs it did not visit are derived when read.
//! - [`resume`]: a tick that only brings new jobs continues the last pass instead of starting
//!   over.
//! - [`kept_plans`]: a reservation that provably is still the earliest is kept without a search.
//! - [`fit_memo`]: within one pass, a placement already tried for a gang of the same kind
//!   answers for it.

pub(in crate::scheduler) mod fit_memo;
pub(in crate::scheduler) mod kept_plans;
pub(in crate::scheduler) mod resume;
pub(in crate::scheduler) mod settled;
