//! Tools for testing gangway and policies built on it (feature `testkit`): the invariant oracle
//! that every ticking test runs after every tick, the cross-tick [`Checker`], proptest
//! strategies for clusters (with topology, NVLink islands and MIG layouts), jobs (with topology
//! and MIG requests) and event streams, the stream harness that shrinks a failure
//! to a minimal replayable stream, adversarial plug-ins for property-checking the engine under
//! any profile, the reference pass that every shortcut must agree with, and the fuzz entry
//! points.

pub mod adversarial;
pub mod checker;
mod fair_oracle;
pub mod families;
pub mod fuzz;
pub mod harness;
mod mig_oracle;
pub mod oracle;
mod ready_oracle;
pub mod reference;
pub mod replay;
pub mod seed;
pub mod strategies;
pub mod strategies_hw;

pub use checker::Checker;
pub use oracle::{check_tick, checked_tick};
