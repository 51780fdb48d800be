//! gangway: an embeddable scheduling-policy library for GPU clusters.

pub mod config;
pub mod fairshare;
pub mod model;

pub use config::ClusterConfig;
pub use model::amount::Milli;
