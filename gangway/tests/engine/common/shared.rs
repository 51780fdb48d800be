//! The project's shared data beside the checkout (`../shared`: scenarios, traces, the Slurm
//! peer's files), found or skipped in one place. The engine's tests include it through their
//! `common` module; the other crates' tests, benches and examples with
//! `#[path = "…/gangway/tests/engine/common/shared.rs"] mod shared;` (every crate of the workspace sits
//! one folder below the checkout, so `../shared` is two folders above its manifest).
//!
//! Where `../shared/RELATIVE` is absent (a clone alone), [`path`] prints one note and returns
//! `None`, and the caller skips what needs it. With `GANGWAY_REQUIRE_SHARED=1` (CI) an absent
//! path fails instead, so a skip cannot hide a broken path.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The environment variable that turns a skip into a failure when set to `1`.
pub const REQUIRE: &str = "GANGWAY_REQUIRE_SHARED";

/// `../shared/RELATIVE` beside the checkout if it exists; else `None` after one note on
/// stderr, or a panic when `GANGWAY_REQUIRE_SHARED=1`.
pub fn path(relative: &str) -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared")
        .join(relative);
    if path.exists() {
        return Some(path);
    }
    if std::env::var(REQUIRE).is_ok_and(|v| v == "1") {
        panic!(
            "../shared/{relative} is missing beside the checkout ({}), and {REQUIRE}=1 requires it",
            path.display()
        );
    }
    // libtest names each test's thread after the test.
    let who = match std::thread::current().name() {
        Some(name) if name != "main" => format!("{name}: "),
        _ => String::new(),
    };
    // Written to stderr itself, past the test harness's capture of `eprintln!`, so that the
    // skip shows in a plain `cargo test`; in one write, so that the line stays whole.
    let note = format!(
        "note: {who}skipping what needs ../shared/{relative}, missing beside the checkout \
         (set {REQUIRE}=1 to fail instead)\n"
    );
    let _ = std::io::stderr().write_all(note.as_bytes());
    None
}
