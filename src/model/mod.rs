//! The data model: amounts, ids, nodes with GPU devices, jobs.

pub mod amount;
