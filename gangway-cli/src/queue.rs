//! `gangway explain --snapshot FILE` and `gangway queue`: the pending jobs as an
//! `squeue --start`-like table ([`gangway::queue_table`]), from a saved scheduler state or from
//! the shim's `explain` response.

use std::io::Read;
use std::path::Path;

use gangway::decision::PendingInfo;
use gangway::queue_table::{Owner, render};
use gangway::{Scheduler, Snapshot};
use serde_json::Value;

/// The table of the scheduler saved in `path`: the `state` of the shim's `snapshot` response,
/// or the whole response line.
pub fn from_snapshot(path: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let invalid = |e: &dyn std::fmt::Display| format!("{}: invalid snapshot: {e}", path.display());
    let mut value: Value = serde_json::from_str(&text).map_err(|e| invalid(&e))?;
    if value.get("ok").is_some() {
        value = match value.get_mut("state") {
            Some(state) => state.take(),
            None => return Err(invalid(&"a response without \"state\"")),
        };
    }
    let snapshot: Snapshot = serde_path_to_error::deserialize(value)
        .map_err(|e| invalid(&format_args!("{}: {}", e.path(), e.inner())))?;
    let scheduler = Scheduler::restore(snapshot).map_err(|e| invalid(&e))?;
    Ok(scheduler.queue_table())
}

/// The table of the last `explain` response in `input` (a shim's output: other responses are
/// passed over), its start times counted from `now_ms` when given.
pub fn from_explain(mut input: impl Read, now_ms: Option<u64>) -> Result<String, String> {
    let mut text = String::new();
    input
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read standard input: {e}"))?;
    let (line, response) = text
        .lines()
        .enumerate()
        .filter_map(|(index, line)| {
            let value: Value = serde_json::from_str(line).ok()?;
            value.get("pending").is_some().then_some((index + 1, value))
        })
        .last()
        .ok_or("no explain response (a JSON line with \"pending\") on standard input")?;
    let pending: Vec<PendingInfo> = serde_path_to_error::deserialize(&response["pending"])
        .map_err(|e| format!("line {line}: pending: {}: {}", e.path(), e.inner()))?;
    Ok(render(&pending, now_ms, |_| Owner::default()))
}
