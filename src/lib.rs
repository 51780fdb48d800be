//! gangway: an embeddable scheduling-policy library for GPU clusters.

pub mod backfill;
pub mod config;
pub mod decision;
pub mod error;
pub mod event;
pub mod fairshare;
pub mod model;
pub mod nvml;
pub mod placement;
pub mod policy;
pub mod protocol;
pub mod quota;
pub mod scheduler;
#[cfg(feature = "sim")]
pub mod sim;
pub mod state;
#[cfg(feature = "testkit")]
pub mod testkit;

pub use config::ClusterConfig;
pub use decision::{
    Decision, KillReason, MigPlacement, PendingReason, PlacementEntry, TickOutcome,
};
pub use error::{ConfigError, ErrorKind, EventError, TickError};
pub use event::Event;
pub use model::amount::Milli;
pub use model::job::{Dependency, DependencyKind, JobSpec, Outcome, PlacementMode, TaskGroup};
pub use scheduler::{Scheduler, Snapshot, WhatIf};
