//! The `gangway` binary's tests, one module per command, in one test binary: each runs the built
//! binary (`CARGO_BIN_EXE_gangway`) as a user would, and `golden_replays` checks the schedules of
//! the committed fixtures against tests/golden/replays.sha256.

#[path = "../../../gangway/tests/engine/common/shared.rs"]
mod shared;

mod golden_replays;
mod history;
mod inventory;
mod queue;
mod shim;
mod simulate;
