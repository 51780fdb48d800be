//! Runs every `../shared/scenarios/*.json` (the shared contract) and every `tests/scenarios/*.json`
//! (gangway's own scenarios, one or more per feature) through the shim's request handling
//! in-process and checks every expectation as docs/protocol.md (section Scenario files) defines
//! them, plus the invariant oracle after every tick and the physical sanity of every `start`. The
//! shared scenarios are skipped, with a note, where ../shared is absent.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use common::files::json_files;
use common::shared;
use common::shim::tick_outcome;
use gangway::protocol::Shim;
use gangway::testkit::check_tick;
use serde_json::{Value, json};

/// Scenarios whose behaviour belongs to an open issue, each naming it. Nothing else is skipped.
const SKIP: &[(&str, &str)] = &[];

fn own_scenario_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios")
}

fn ids(values: &Value) -> BTreeSet<String> {
    values.as_array().map_or_else(BTreeSet::new, |a| {
        a.iter()
            .filter_map(|v| v.as_str().map(String::from))
            .collect()
    })
}

/// Runs one scenario; returns the first mismatch.
fn run(path: &Path) -> Result<(), String> {
    let scenario: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut shim = Shim::default();
    let configure = json!({"op": "configure", "cluster": scenario["cluster"]}).to_string();
    let reply: Value = serde_json::from_str(&shim.handle_line(&configure)).unwrap();
    if reply["ok"] != true {
        return Err(format!("configure refused: {reply}"));
    }
    let mut ever_started = BTreeSet::new();
    let expectations = scenario["expect"].as_array().cloned().unwrap_or_default();
    for tick in scenario["ticks"].as_array().unwrap() {
        let at = tick["at_ms"].as_u64().unwrap();
        let events = tick.get("events").cloned().unwrap_or(json!([]));
        let line = json!({"op": "tick", "at_ms": at, "events": events}).to_string();
        let reply: Value = serde_json::from_str(&shim.handle_line(&line)).unwrap();
        if reply["ok"] != true {
            return Err(format!("tick {at} refused: {reply}"));
        }
        let scheduler = shim.scheduler().unwrap();
        let outcome = tick_outcome(&reply).unwrap();
        check_tick(scheduler, &outcome).map_err(|v| format!("tick {at}: oracle: {v}"))?;
        let mut got: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
        for key in ["started", "preempted", "killed", "requeued", "cancelled"] {
            got.insert(key, BTreeSet::new());
        }
        for d in reply["decisions"].as_array().unwrap() {
            let key = match d["type"].as_str().unwrap() {
                "start" => "started",
                "preempt" => "preempted",
                "kill" => "killed",
                "requeue" => "requeued",
                "cancel" => "cancelled",
                other => return Err(format!("unknown decision type {other}")),
            };
            let job = d["job"].as_str().unwrap().to_string();
            if key == "started" {
                ever_started.insert(job.clone());
            }
            got.get_mut(key).unwrap().insert(job);
        }
        let rejected: BTreeSet<usize> = reply["rejected"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["index"].as_u64().unwrap() as usize)
            .collect();
        let mut expected_rejections = BTreeSet::new();
        let mut estimates = BTreeMap::new();
        for e in expectations.iter().filter(|e| e["at_ms"] == at) {
            for (key, set) in &got {
                if let Some(want) = e.get(*key)
                    && ids(want) != *set
                {
                    return Err(format!(
                        "tick {at}: {key} {set:?}, expected {:?}",
                        ids(want)
                    ));
                }
            }
            if let Some(list) = e.get("not_started") {
                for job in ids(list) {
                    if ever_started.contains(&job) {
                        return Err(format!("tick {at}: {job} was started, expected not"));
                    }
                }
            }
            if let Some(list) = e.get("rejected") {
                for job in ids(list) {
                    let index = events
                        .as_array()
                        .unwrap()
                        .iter()
                        .position(|ev| ev["type"] == "submit" && ev["job"]["id"] == job.as_str())
                        .ok_or_else(|| format!("no submit of {job} at {at}"))?;
                    if !rejected.contains(&index) {
                        return Err(format!("tick {at}: submission of {job} was not rejected"));
                    }
                    expected_rejections.insert(index);
                }
            }
            if let Some(map) = e.get("estimated_start_ms").and_then(Value::as_object) {
                estimates.extend(map.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
        }
        if let Some(extra) = rejected.difference(&expected_rejections).next() {
            return Err(format!(
                "tick {at}: unexpected rejection of event #{extra}: {reply}"
            ));
        }
        if !estimates.is_empty() {
            let line = json!({"op": "explain", "at_ms": at}).to_string();
            let explain: Value = serde_json::from_str(&shim.handle_line(&line)).unwrap();
            for (job, want) in estimates {
                let entry = explain["pending"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|p| p["job"] == job.as_str())
                    .ok_or_else(|| format!("explain at {at}: {job} is not pending"))?;
                if entry["estimated_start_ms"] != want {
                    return Err(format!(
                        "explain at {at}: {job} estimated {}, expected {want}",
                        entry["estimated_start_ms"]
                    ));
                }
            }
        }
    }
    Ok(())
}

#[test]
fn every_shared_scenario_not_in_the_skip_list_passes() {
    let Some(dir) = shared::path("scenarios") else {
        return;
    };
    let files = json_files(&dir);
    assert!(!files.is_empty(), "no scenarios found");
    let mut failures = Vec::new();
    let mut ran = 0;
    for file in &files {
        let name = file.file_stem().unwrap().to_string_lossy().to_string();
        if SKIP.iter().any(|(skip, _)| *skip == name) {
            continue;
        }
        ran += 1;
        if let Err(e) = run(file) {
            failures.push(format!("{name}: {e}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {ran} scenarios failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_own_scenario_passes() {
    let files = json_files(&own_scenario_dir());
    assert!(!files.is_empty(), "no scenarios in tests/scenarios");
    let failures: Vec<String> = files
        .iter()
        .filter_map(|file| {
            let name = file.file_stem().unwrap().to_string_lossy().to_string();
            run(file).err().map(|e| format!("{name}: {e}"))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} own scenarios failed:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

#[test]
fn skip_list_names_only_existing_scenarios_that_still_fail() {
    let Some(dir) = shared::path("scenarios") else {
        return;
    };
    let names: BTreeSet<String> = json_files(&dir)
        .iter()
        .map(|f| f.file_stem().unwrap().to_string_lossy().to_string())
        .collect();
    for (skip, issue) in SKIP {
        assert!(
            names.contains(*skip),
            "skip list names missing scenario {skip}"
        );
        let path = dir.join(format!("{skip}.json"));
        assert!(
            run(&path).is_err(),
            "{skip} passes now: remove it from the skip list ({issue})"
        );
    }
}

#[test]
fn the_two_core_scenarios_are_not_skipped() {
    for core in ["time_limit_kill", "unsatisfiable_gang_rejected"] {
        assert!(!SKIP.iter().any(|(s, _)| *s == core));
    }
}
