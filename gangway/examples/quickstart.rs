//! A 4-node, 16-GPU cluster, a few jobs, and the decisions gangway makes for them.
//!
//! Run: `cargo run -p gangway --example quickstart`

use gangway::{ClusterConfig, Event, JobSpec, Milli, PlacementMode, Scheduler};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let cluster: ClusterConfig = serde_json::from_str(
        r#"{"nodes": [
            {"name": "n1", "cpus": 32, "memory_mib": 256000, "gpus": {"model": "a100", "count": 4}},
            {"name": "n2", "cpus": 32, "memory_mib": 256000, "gpus": {"model": "a100", "count": 4}},
            {"name": "n3", "cpus": 32, "memory_mib": 256000, "gpus": {"model": "a100", "count": 4}},
            {"name": "n4", "cpus": 32, "memory_mib": 256000, "gpus": {"model": "a100", "count": 4}}],
          "policy": {"backfill": {"mode": "easy"}}}"#,
    )?;
    let mut scheduler = Scheduler::new(cluster)?;
    let hour = 3_600_000;
    let one_gpu = Milli::from_units(1);
    // A 3-node training gang: 3 tasks × 4 GPUs, one task per node.
    let pretrain = JobSpec::new("pretrain", 2 * hour, 3)
        .with_gpus(Milli::from_units(4))
        .with_placement(PlacementMode::StrictSpread);
    print_tick(&mut scheduler, 0, vec![Event::Submit { job: pretrain }])?;
    let submissions = vec![
        // The whole cluster, urgent: it must wait for `pretrain`, and gets a reservation.
        JobSpec::new("full-sweep", hour, 4)
            .with_gpus(Milli::from_units(4))
            .with_placement(PlacementMode::StrictSpread)
            .with_priority(100),
        // Short jobs that backfill into the free node without delaying the reservation.
        JobSpec::new("notebook", hour, 1).with_gpus(one_gpu),
        JobSpec::new("eval", hour / 2, 2).with_gpus(one_gpu),
        // Too long to backfill: it would still run when `full-sweep` starts.
        JobSpec::new("long-finetune", 8 * hour, 1).with_gpus(one_gpu),
    ];
    let events = submissions
        .into_iter()
        .map(|job| Event::Submit { job })
        .collect();
    print_tick(&mut scheduler, 60_000, events)?;
    println!("\nwhy are the others waiting?");
    for p in scheduler.explain().pending {
        println!(
            "  #{} {:<14} {:?}, estimated start {:?} ms",
            p.position, p.job, p.reason, p.estimated_start_ms
        );
    }
    let done = gangway::FinishOutcome::Completed;
    let finished = vec![Event::Finished {
        job: "pretrain".into(),
        outcome: done,
    }];
    print_tick(&mut scheduler, 90 * 60_000, finished)?;
    Ok(())
}

fn print_tick(
    scheduler: &mut Scheduler,
    now: u64,
    events: Vec<Event>,
) -> Result<(), Box<dyn std::error::Error>> {
    let outcome = scheduler.tick(now, events)?;
    println!("t = {now} ms:");
    for decision in &outcome.decisions {
        println!("  {}", serde_json::to_string(decision)?);
    }
    for rejection in &outcome.rejected {
        println!("  rejected event #{}: {}", rejection.index, rejection.error);
    }
    println!("  next wake-up: {:?}", outcome.next_wakeup_ms);
    Ok(())
}
