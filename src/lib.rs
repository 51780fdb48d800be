//! gangway: an embeddable scheduling-policy library for GPU clusters.

pub mod config;
pub mod model;
#[cfg(feature = "sim")]
pub mod sim;

pub use config::ClusterConfig;
pub use model::amount::Milli;
