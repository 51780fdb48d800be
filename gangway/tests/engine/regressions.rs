//! Minimal event streams that once broke an invariant (found by the property tests), replayed
//! through the shim with the oracle after every tick. Each file is docs/protocol.md lines: a
//! `configure`, then `tick`s.

use crate::common;

use common::shim::tick_outcome;
use gangway::protocol::Shim;
use gangway::testkit::check_tick;
use serde_json::Value;

fn replay(lines: &str) -> Result<(), String> {
    let mut shim = Shim::default();
    for line in lines.lines().filter(|l| !l.trim().is_empty()) {
        let reply: Value =
            serde_json::from_str(&shim.handle_line(line)).map_err(|e| e.to_string())?;
        if reply["ok"] != true {
            return Err(format!("refused: {reply}"));
        }
        if reply.get("decisions").is_some() {
            let outcome = tick_outcome(&reply).map_err(|e| e.to_string())?;
            let scheduler = shim.scheduler().ok_or("not configured")?;
            check_tick(scheduler, &outcome)?;
        }
    }
    Ok(())
}

/// A preemptor's victim held quota on a node that was then removed: the earmark must be released
/// while the node is still known, or the queue's books drift from its jobs.
#[test]
fn earmark_whose_victim_runs_on_a_removed_node() {
    replay(include_str!(
        "../regressions/earmark_victim_on_removed_node.jsonl"
    ))
    .unwrap();
}
