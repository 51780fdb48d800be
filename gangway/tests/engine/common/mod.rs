//! Helpers shared by the engine's test binaries (`behaviour` and `properties`): [`build`] makes
//! schedulers and events, [`decisions`] reads what a tick decided and why jobs wait, [`shim`]
//! talks to the JSON shim with the invariant oracle, [`files`] lists scenario files,
//! [`lockstep`] compares profiles tick by tick, and [`shared`] finds the shared data beside the
//! checkout.

use proptest::test_runner::{FailurePersistence, FileFailurePersistence};

pub mod build;
pub mod decisions;
pub mod files;
pub mod lockstep;
pub mod shared;
pub mod shim;

/// Where a property module keeps its shrunk failures: beside its source file, in
/// `MODULE.proptest-regressions` (proptest's default, with one binary of many modules, would put
/// every module's under `tests/proptest-regressions/`, beside the binary's main.rs). Every
/// property test that keeps failures uses it, so that a committed regression is replayed.
pub fn kept_beside() -> Option<Box<dyn FailurePersistence>> {
    Some(Box::new(FileFailurePersistence::WithSource(
        "proptest-regressions",
    )))
}
