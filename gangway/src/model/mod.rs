//! The data model: amounts, ids, resource vectors, nodes with GPU devices and MIG slices, jobs,
//! and the range of times.

pub mod amount;
pub mod ids;
pub mod job;
pub mod mig;
pub(crate) mod mig_table;
pub mod node;
pub mod resources;
pub mod shape;
pub(crate) mod time;
pub mod topology;
