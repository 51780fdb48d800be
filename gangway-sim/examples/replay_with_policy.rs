//! Replays an SWF trace with a policy written in Rust: an order key (smallest area first:
//! tasks × requested time) and a node scorer (nodes with the fewest jobs first), next to the
//! default profile, both with EASY backfill.
//!
//! Run: `cargo run --release -p gangway-sim --example replay_with_policy [TRACE.swf[.gz]]`;
//! without an argument it replays the 50-job KTH excerpt of `tests/fixtures`, e.g. give
//! `../shared/traces/KTH-SP2-1996-2.1-cln.swf.gz` for the whole log.

use gangway::policy::{PassContext, Plugin, Profile};
use gangway::state::{JobView, NodeView};
use gangway_sim::metrics::Metrics;
use gangway_sim::workload::swf;
use gangway_sim::{Overrun, PolicyPreset, SimOptions, Simulator, prepare};

/// Smallest area first: the fewer task-seconds a job asks for, the earlier it goes.
#[derive(Clone)]
struct SmallestArea;

#[gangway::policy::plugin]
impl Plugin for SmallestArea {
    fn name(&self) -> &str {
        "smallest_area"
    }
    fn order_key(&self, job: JobView<'_>, _: &PassContext<'_>) -> i64 {
        let tasks: u64 = job.spec().groups.iter().map(|g| u64::from(g.count)).sum();
        let area = tasks.saturating_mul(job.spec().time_limit_ms / 1000);
        -i64::try_from(area).unwrap_or(i64::MAX)
    }
}

/// Nodes with the fewest jobs running first.
#[derive(Clone)]
struct QuietNodes;

#[gangway::policy::plugin]
impl Plugin for QuietNodes {
    fn name(&self) -> &str {
        "quiet_nodes"
    }
    fn score_node(&self, _: JobView<'_>, _: usize, node: NodeView<'_>, _: &PassContext<'_>) -> f64 {
        -f64::from(node.running_jobs())
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/KTH-SP2-1996-2.1-cln-first200.swf"
    );
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| fixture.to_string());
    let workload = swf::from_path(&path, None)?;
    let (cluster, jobs) = prepare(&workload, None, PolicyPreset::Easy, Overrun::Allow);
    let name = std::path::Path::new(&path).file_name().unwrap_or_default();
    let (count, nodes) = (jobs.len(), cluster.nodes.len());
    println!("{}: {count} jobs on {nodes} nodes", name.to_string_lossy());
    let custom = Profile::builder()
        .plugin(SmallestArea)
        .scorer(QuietNodes, 0, 1.0)
        .build()?;
    println!("profile          mean wait (s)  p95 wait (s)  bounded slowdown  utilization");
    for (name, profile) in [
        ("default", Profile::default_for_config()),
        ("smallest_area", custom),
    ] {
        let simulator = Simulator::with_profile(
            cluster.clone(),
            jobs.clone(),
            SimOptions::default(),
            profile,
        )?;
        let m = Metrics::of(&simulator.run(|_| Ok(()))?);
        println!(
            "{name:<16} {:>13.0}  {:>12.0}  {:>16.2}  {:>10.1}%",
            m.wait.mean_s,
            m.wait.p95_s,
            m.bounded_slowdown,
            m.utilization * 100.0
        );
    }
    Ok(())
}
