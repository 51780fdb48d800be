//! `gangway explain --snapshot FILE` and `gangway queue`: the pending jobs as an
//! `squeue --start`-like table ([`gangway::queue_table`]), from a saved scheduler state or from
//! the shim's `explain` response.

use std::io::Read;
use std::path::Path;

use gangway::PendingInfo;
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
/// passed over). Its start times count from `now_ms`, by default from the last tick response
/// before it (`at_ms`). Users and accounts come from the submits of the shim's requests: those
/// in `requests` (the shim's input) and any request lines in `input` itself.
pub fn from_explain(
    mut input: impl Read,
    now_ms: Option<u64>,
    requests: Option<&Path>,
) -> Result<String, String> {
    let mut text = String::new();
    input
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read standard input: {e}"))?;
    let values: Vec<(usize, Value)> = text
        .lines()
        .enumerate()
        .filter_map(|(index, line)| Some((index + 1, serde_json::from_str(line).ok()?)))
        .collect();
    let at = values
        .iter()
        .rposition(|(_, value)| value.get("pending").is_some())
        .ok_or("no explain response (a JSON line with \"pending\") on standard input")?;
    let (line, response) = &values[at];
    let pending: Vec<PendingInfo> = serde_path_to_error::deserialize(&response["pending"])
        .map_err(|e| format!("line {line}: pending: {}: {}", e.path(), e.inner()))?;
    let now_ms = now_ms.or_else(|| {
        values[..at]
            .iter()
            .rev()
            .find(|(_, v)| v.get("ok").is_some() && v.get("decisions").is_some())
            .and_then(|(_, v)| v.get("at_ms")?.as_u64())
    });
    let mut owners = Owners::default();
    if let Some(path) = requests {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        for line in text.lines() {
            if let Ok(value) = serde_json::from_str::<Value>(line) {
                owners.read(&value);
            }
        }
    }
    for (_, value) in &values[..at] {
        owners.read(value);
    }
    Ok(render(&pending, now_ms, |job| owners.of(job)))
}

/// Each job's user and account, from the `submit` events of tick requests (the last submit of
/// a job id counts, as the shim's would after a resubmission).
#[derive(Default)]
struct Owners {
    jobs: Vec<(String, Option<String>, Option<String>)>,
}

impl Owners {
    /// Takes the submits of `request`, when it is a tick request.
    fn read(&mut self, request: &Value) {
        if request.get("op").and_then(Value::as_str) != Some("tick") {
            return;
        }
        let events = request.get("events").and_then(Value::as_array);
        for event in events.into_iter().flatten() {
            if event.get("type").and_then(Value::as_str) != Some("submit") {
                continue;
            }
            let job = &event["job"];
            let Some(id) = job.get("id").and_then(Value::as_str) else {
                continue;
            };
            let text = |field: &str| job.get(field).and_then(Value::as_str).map(str::to_string);
            self.jobs.retain(|(known, _, _)| known != id);
            self.jobs
                .push((id.to_string(), text("user"), text("account")));
        }
    }

    fn of(&self, job: &str) -> Owner<'_> {
        self.jobs.iter().find(|(id, _, _)| id == job).map_or_else(
            Owner::default,
            |(_, user, account)| Owner {
                user: user.as_deref(),
                account: account.as_deref(),
            },
        )
    }
}
