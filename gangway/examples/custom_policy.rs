//! A user-written policy: shortest job first as an order plug-in, and a scorer that keeps
//! small jobs off the nodes with the most free GPUs. Gang placement, backfill, quotas and
//! preemption stay the library's. Run with `cargo run -p gangway --example custom_policy`.

use gangway::policy::{PassContext, Plugin, Profile};
use gangway::state::{JobView, NodeView};
use gangway::{ClusterConfig, Decision, Event, JobSpec, Milli, Scheduler};

/// Shortest job first: the shorter the time limit, the higher the key.
#[derive(Clone, Copy, Debug, Default)]
pub struct ShortestJobFirst;

#[gangway::policy::plugin]
impl Plugin for ShortestJobFirst {
    fn name(&self) -> &str {
        "shortest_job_first"
    }
    fn order_key(&self, job: JobView<'_>, _: &PassContext<'_>) -> i64 {
        -i64::try_from(job.spec().time_limit_ms / 60_000).unwrap_or(i64::MAX)
    }
}

/// Fewest free GPUs first: small jobs fill partly used nodes.
#[derive(Clone, Copy, Debug, Default)]
pub struct FewestFreeGpus;

#[gangway::policy::plugin]
impl Plugin for FewestFreeGpus {
    fn name(&self) -> &str {
        "fewest_free_gpus"
    }
    fn score_node(&self, _: JobView<'_>, _: usize, node: NodeView<'_>, _: &PassContext<'_>) -> f64 {
        -(node.free_gpus().count() as f64)
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let cluster: ClusterConfig = serde_json::from_str(
        r#"{"nodes": [{"name": "n1", "cpus": 8, "gpus": {"model": "a100", "count": 4}}]}"#,
    )?;
    let profile = Profile::builder()
        .plugin(ShortestJobFirst)
        .scorer(FewestFreeGpus, 0, 1.0)
        .build()?;
    let mut scheduler = Scheduler::with_profile(cluster, profile)?;
    let gpus = |id: &str, minutes: u64, count: u64| {
        JobSpec::new(id, minutes * 60_000, 1).with_gpus(Milli::from_units(count))
    };
    // The cluster is full; then three jobs arrive and wait.
    scheduler.tick(
        0,
        vec![Event::Submit {
            job: gpus("full", 10, 4),
        }],
    )?;
    let waiting =
        [("long", 120), ("medium", 30), ("short", 5)].map(|(id, minutes)| Event::Submit {
            job: gpus(id, minutes, 4),
        });
    scheduler.tick(1_000, waiting.to_vec())?;
    let done = Event::Finished {
        job: "full".into(),
        outcome: gangway::FinishOutcome::Completed,
    };
    let out = scheduler.tick(60_000, vec![done])?;
    for decision in &out.decisions {
        if let Decision::Start { job, .. } = decision {
            println!("started {job}");
        }
    }
    assert!(matches!(&out.decisions[0], Decision::Start { job, .. } if job == "short"));
    Ok(())
}
