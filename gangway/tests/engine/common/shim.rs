//! Talking to the JSON shim in-process with the invariant oracle after every tick (feature
//! `testkit`).

use gangway::TickOutcome;
use gangway::protocol::Shim;
use gangway::testkit::check_tick;
use serde_json::Value;

/// The outcome a tick's reply carries (`decisions`, `rejected`, `next_wakeup_ms`, and
/// `plugin_faults` when any).
pub fn tick_outcome(reply: &Value) -> Result<TickOutcome, serde_json::Error> {
    serde_json::from_value(reply.clone())
}

/// Sends `request` as one line and returns the parsed reply; after an accepted `tick`, runs the
/// invariant oracle on its outcome and panics on a violation.
pub fn send(shim: &mut Shim, request: Value) -> Value {
    let reply: Value = serde_json::from_str(&shim.handle_line(&request.to_string())).unwrap();
    if request["op"] == "tick" && reply["ok"] == true {
        let outcome = tick_outcome(&reply).unwrap();
        check_tick(shim.scheduler().unwrap(), &outcome).unwrap();
    }
    reply
}
