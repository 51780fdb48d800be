//! The seed of a [`crate::testkit::harness::check_profile`] run: fixed by default, so a verdict
//! never changes from one run to the next; another one to explore new cases.
//!
//! A run takes [`crate::testkit::harness::ProfileChecks::seed`] when it is set; otherwise the
//! environment variable `GANGWAY_TESTKIT_SEED` (a number, or `random` for a fresh seed each
//! run); otherwise [`DEFAULT_SEED`]. Every failure prints its seed, so a failure found with
//! `random` is rerun with `GANGWAY_TESTKIT_SEED=<that seed>`. (proptest's own
//! `PROPTEST_RNG_SEED` is not read: the kit seeds its runner itself.)
//!
//! ```
//! use gangway::testkit::seed::{DEFAULT_SEED, parse_seed};
//! assert_eq!(parse_seed("42"), Ok(Some(42)));
//! assert_eq!(parse_seed("random"), Ok(None));
//! assert!(parse_seed("forty-two").is_err());
//! assert_ne!(DEFAULT_SEED, 0);
//! ```

use std::hash::{BuildHasher, RandomState};

use proptest::test_runner::{RngAlgorithm, TestRng};

/// The environment variable that chooses the seed when the checks do not.
pub const SEED_VARIABLE: &str = "GANGWAY_TESTKIT_SEED";

/// The seed of every run that neither the checks nor the environment choose.
pub const DEFAULT_SEED: u64 = 0x6761_6e67_7761_7938;

/// A value of `GANGWAY_TESTKIT_SEED` that is neither a number nor `random`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{SEED_VARIABLE}={0:?}: expected a number (0 to 2^64 - 1) or `random`")]
pub struct BadSeed(pub String);

/// Reads a seed as `GANGWAY_TESTKIT_SEED` writes it: `Some(number)`, or `None` for `random`.
pub fn parse_seed(value: &str) -> Result<Option<u64>, BadSeed> {
    let value = value.trim();
    if value.eq_ignore_ascii_case("random") {
        return Ok(None);
    }
    value
        .parse::<u64>()
        .map(Some)
        .map_err(|_| BadSeed(value.to_string()))
}

/// The seed of a run: `chosen`, else the environment's (a fresh one for `random`), else
/// [`DEFAULT_SEED`].
pub fn run_seed(chosen: Option<u64>) -> Result<u64, BadSeed> {
    if let Some(seed) = chosen {
        return Ok(seed);
    }
    match std::env::var(SEED_VARIABLE) {
        Ok(value) => Ok(parse_seed(&value)?.unwrap_or_else(fresh_seed)),
        Err(_) => Ok(DEFAULT_SEED),
    }
}

/// A seed that differs from run to run (the process's random hasher keys and the clock).
fn fresh_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    RandomState::new().hash_one(nanos)
}

/// The test runner's random generator for `seed`.
pub fn rng(seed: u64) -> TestRng {
    let mut bytes = [0u8; 32];
    for chunk in bytes.chunks_mut(8) {
        chunk.copy_from_slice(&seed.to_le_bytes());
    }
    TestRng::from_seed(RngAlgorithm::ChaCha, &bytes)
}
