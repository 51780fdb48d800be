//! gangway: an embeddable scheduling-policy library for GPU clusters.

pub mod config;
pub mod model;
pub mod nvml;

pub use config::ClusterConfig;
pub use model::amount::Milli;
