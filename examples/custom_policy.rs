//! A user-written policy: shortest job first. The policy only orders pending jobs; gang
//! placement, backfill, quotas and preemption stay the library's, via
//! `Scheduler::with_policy`. Run with `cargo run --example custom_policy`.

use gangway::policy::{Policy, PriorityFactors};
use gangway::{ClusterConfig, Decision, Event, JobSpec, Milli, Scheduler};

/// Shortest job first: the shorter the time limit, the higher the priority; among equal
/// limits, the job's own base priority decides.
#[derive(Clone, Copy, Debug, Default)]
pub struct ShortestJobFirst;

impl Policy for ShortestJobFirst {
    fn priority(&self, job: &JobSpec, _factors: &PriorityFactors) -> i64 {
        let minutes = i64::try_from(job.time_limit_ms / 60_000).unwrap_or(i64::MAX);
        i64::from(job.priority) - minutes.saturating_mul(1_000)
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let cluster: ClusterConfig = serde_json::from_str(
        r#"{"nodes": [{"name": "n1", "cpus": 8, "gpus": {"model": "a100", "count": 4}}]}"#,
    )?;
    let mut scheduler = Scheduler::with_policy(cluster, Box::new(ShortestJobFirst))?;
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
        outcome: gangway::model::job::FinishOutcome::Completed,
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
