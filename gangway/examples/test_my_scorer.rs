//! Property-test your own node scorer: random clusters and event streams (long queues and
//! preemptions among them), the invariant oracle after every tick, no plug-in fault (a panic, a
//! NaN or overflowing score), determinism, snapshot and restore half-way; a failure shrinks to a
//! minimal stream and prints its seed and a regression test to paste. The run is the same every
//! time; `GANGWAY_TESTKIT_SEED=random` explores new cases. Run:
//! `cargo run -p gangway --example test_my_scorer --features testkit`.

use gangway::policy::{PassContext, Plugin, Profile, builtin::Multifactor};
use gangway::state::{JobView, NodeView};
use gangway::testkit::harness::{ProfileChecks, check_profile};

/// Prefers nodes with many free cpus and few jobs running.
#[derive(Clone)]
struct RoomyNodes;

#[gangway::policy::plugin]
impl Plugin for RoomyNodes {
    fn name(&self) -> &str {
        "roomy_nodes"
    }
    fn score_node(&self, _: JobView<'_>, _: usize, node: NodeView<'_>, _: &PassContext<'_>) -> f64 {
        node.free().cpu_milli as f64 / 1000.0 - f64::from(node.running_jobs())
    }
}

fn main() {
    let profile = || {
        let builder = Profile::builder().plugin(Multifactor::from_config());
        builder.scorer(RoomyNodes, 0, 1.0).build().unwrap()
    };
    match check_profile(profile, ProfileChecks::new(200, 40)) {
        Ok(()) => println!("roomy_nodes kept every invariant on 200 random streams"),
        Err(failure) => panic!("{failure}"),
    }
}
