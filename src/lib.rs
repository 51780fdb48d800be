//! gangway: an embeddable scheduling-policy library for GPU clusters.

pub mod config;
pub mod decision;
pub mod error;
pub mod event;
pub mod model;
pub mod placement;
pub mod state;

pub use config::ClusterConfig;
pub use decision::{Decision, KillReason, PendingReason, PlacementEntry, TickOutcome};
pub use error::{ConfigError, ErrorKind, EventError, TickError};
pub use event::Event;
pub use model::amount::Milli;
pub use model::job::{Dependency, DependencyKind, JobSpec, Outcome, PlacementMode, TaskGroup};
pub mod backfill;
pub mod policy;
pub mod scheduler;

pub use scheduler::{Scheduler, Snapshot};
pub mod protocol;
#[cfg(feature = "testkit")]
pub mod testkit;
