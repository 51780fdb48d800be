//! Benchmarks of gangway (not published): the criterion benches in `benches/` measure the
//! engine's pass on docs/design.md's standard workload (`gangway_sim::standard`), churn, bursts,
//! preemption, priorities and backfill, and the simulator on the shared traces. They live in a
//! crate of their own because the standard workload's generator belongs to the simulator, which
//! depends on the engine: the engine cannot depend on it back. Every command and figure is in
//! BENCHMARKS.md.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod soak;
