//! Tools for testing gangway and policies built on it (feature `testkit`): the invariant oracle
//! that every ticking test runs after every tick.

pub mod oracle;

pub use oracle::{check_tick, checked_tick};
