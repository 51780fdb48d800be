//! Helpers shared by the engine's test binaries (`behaviour` and `properties`): [`build`] makes
//! schedulers and events, [`decisions`] reads what a tick decided and why jobs wait, [`shim`]
//! talks to the JSON shim with the invariant oracle, [`files`] lists scenario files,
//! [`lockstep`] compares profiles tick by tick, and [`shared`] finds the shared data beside the
//! checkout.

pub mod build;
pub mod decisions;
pub mod files;
pub mod lockstep;
pub mod shared;
pub mod shim;
