//! Helpers shared by the integration tests (`mod common;`): [`build`] makes schedulers and
//! events, [`decisions`] reads what a tick decided and why jobs wait, [`shim`] talks to the JSON
//! shim with the invariant oracle (feature `testkit`), [`files`] lists scenario files,
//! [`lockstep`] compares profiles tick by tick (feature `testkit`), and [`shared`] finds the
//! shared data beside the checkout.

// Each test file is its own crate and uses only some of these helpers; the others would be
// dead code there.
#![allow(dead_code)]

pub mod build;
pub mod decisions;
pub mod files;
#[cfg(feature = "testkit")]
pub mod lockstep;
pub mod shared;
#[cfg(feature = "testkit")]
pub mod shim;
