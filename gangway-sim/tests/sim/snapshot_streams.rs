//! The simulator's part of the engine's snapshot fixtures (gangway/tests/snapshots/README.md):
//! a week of the team workload under the `full` preset (fair-share, cohort quotas, preemption)
//! with wait-for-ready, the standard faults (node failures, lost stops, duplicated and reordered
//! events, slow and never-ready starts) and a stateful plug-in, recorded as the exact stream of
//! ticks the scheduler was given. The engine's tests replay it and restore snapshots taken in it.

use gangway::config::WaitForReadyConfig;
use gangway::policy::{FnPlugin, Profile};
use gangway::testkit::adversarial::{Adversary, Trick};
use gangway_sim::team::TeamParams;
use gangway_sim::{FaultOptions, Overrun, PolicyPreset, SimOptions, Simulator, prepare};
use serde_json::json;

const STREAM: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../gangway/tests/snapshots/streams/team_full_faults.json"
);

/// The plug-in whose state the snapshots carry: the test kit's shifting order keys (its call
/// counter is its state), as the engine's fixture test rebuilds it.
fn stateful_plugin() -> FnPlugin {
    Adversary::new("shifty", 7, vec![Trick::ShiftingKeys]).plugin()
}

/// The recorded simulation: its cluster and every tick it gave the scheduler.
fn record() -> serde_json::Value {
    let workload = TeamParams {
        weeks: 1,
        ..TeamParams::default()
    }
    .generate()
    .unwrap();
    let (mut cluster, jobs) = prepare(&workload, None, PolicyPreset::Full, Overrun::Allow);
    cluster.policy.wait_for_ready = Some(WaitForReadyConfig {
        timeout_ms: 1_800_000,
        backoff_limit: Some(3),
        ..WaitForReadyConfig::default()
    });
    let profile = Profile::from_config(&cluster)
        .unwrap()
        .into_builder()
        .plugin(stateful_plugin())
        .build()
        .unwrap();
    let options = SimOptions {
        faults: Some(FaultOptions::standard(3)),
        record_ticks: true,
        ..SimOptions::default()
    };
    let result = Simulator::with_profile(cluster.clone(), jobs, options, profile)
        .unwrap()
        .run(|view| gangway::testkit::check_tick(view.scheduler, view.outcome))
        .unwrap();
    assert!(result.preemptions > 0, "the stream should hold preemptions");
    json!({
        "name": "team_full_faults",
        "source": "gangway-sim: a week of the team workload, preset full, wait_for_ready \
                   (30 min, backoff_limit 3), FaultOptions::standard(3), plug-in shifty \
                   (testkit Adversary, seed 7, ShiftingKeys); gangway-sim/tests/sim/snapshot_streams.rs",
        "cluster": cluster,
        "ticks": result.ticks_given,
    })
}

/// The recording is deterministic: the same run twice gives the same stream.
#[test]
fn the_recorded_stream_is_deterministic() {
    assert_eq!(record(), record());
}

/// Rewrites gangway/tests/snapshots/streams/team_full_faults.json. Only for a new fixture: the
/// committed stream is what the committed snapshots were taken in, whatever the simulator does
/// today.
#[test]
#[ignore = "writes a fixture: run by hand for a new snapshot format version"]
fn write_stream() {
    let text = serde_json::to_string(&record()).unwrap();
    std::fs::write(STREAM, text + "\n").unwrap();
}
