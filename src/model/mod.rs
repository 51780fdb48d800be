//! The data model: amounts, ids, resource vectors, nodes with GPU devices, jobs.

pub mod amount;
pub mod ids;
pub mod job;
pub mod node;
pub mod resources;
pub mod shape;
pub mod topology;
