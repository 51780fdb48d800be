//! One scheduling pass with N nodes × 8 GPUs full of running jobs and M pending jobs (single-task
//! and multi-node gangs), EASY backfill: N = 1,000 with M = 10,000, and N = 10,000 with
//! M = 100,000 (DESIGN.md §5). Seeded, so every run measures the same
//! workload.

use criterion::{Criterion, criterion_group, criterion_main};
use gangway::{ClusterConfig, Event, JobSpec, Milli, PlacementMode, Scheduler};
use rand::{RngExt, SeedableRng, rngs::Xoshiro256PlusPlus};

fn cluster(nodes: usize) -> ClusterConfig {
    let models = ["a100", "h100", "h200"];
    let nodes: Vec<serde_json::Value> = (0..nodes)
        .map(|i| {
            serde_json::json!({"name": format!("n{i:05}"), "cpus": 64, "memory_mib": 512000,
                "gpus": {"model": models[(i / 32) % 3], "count": 8, "memory_mib": 81920}})
        })
        .collect();
    serde_json::from_value(serde_json::json!({"nodes": nodes})).expect("valid cluster")
}

/// A job of `gpus` GPUs: one task up to 8, else gangs of 8-GPU tasks one per node.
fn job(id: String, gpus: u32, limit_ms: u64) -> JobSpec {
    if gpus <= 8 {
        JobSpec::new(id, limit_ms, 1).with_gpus(Milli::from_units(u64::from(gpus)))
    } else {
        JobSpec::new(id, limit_ms, gpus / 8)
            .with_gpus(Milli::from_units(8))
            .with_placement(PlacementMode::StrictSpread)
    }
}

fn loaded_scheduler(nodes: usize, pending: usize) -> Scheduler {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(42);
    let mut scheduler = Scheduler::new(cluster(nodes)).expect("valid cluster");
    let fill: Vec<Event> = (0..nodes)
        .map(|i| Event::Submit {
            job: job(format!("run{i}"), 8, rng.random_range(600_000..86_400_000)),
        })
        .collect();
    scheduler.tick(0, fill).expect("tick");
    let sizes = [
        (1, 40),
        (2, 20),
        (4, 15),
        (8, 15),
        (16, 5),
        (32, 3),
        (64, 2),
    ];
    let waiting: Vec<Event> = (0..pending)
        .map(|i| {
            let roll: u32 = rng.random_range(0..100);
            let mut cumulative = 0;
            let gpus = sizes
                .iter()
                .find(|(_, percent)| {
                    cumulative += percent;
                    roll < cumulative
                })
                .map_or(1, |(gpus, _)| *gpus);
            Event::Submit {
                job: job(format!("p{i}"), gpus, rng.random_range(600_000..86_400_000)),
            }
        })
        .collect();
    scheduler.tick(1_000, waiting).expect("tick");
    scheduler
}

fn bench_pass(c: &mut Criterion) {
    let mut scheduler = loaded_scheduler(1_000, 10_000);
    c.bench_function("pass 1000 nodes x 8 GPUs, 10000 pending, easy", |b| {
        b.iter(|| scheduler.tick(2_000, Vec::new()).expect("tick"))
    });
    let mut scheduler = loaded_scheduler(10_000, 100_000);
    c.bench_function("pass 10000 nodes x 8 GPUs, 100000 pending, easy", |b| {
        b.iter(|| scheduler.tick(2_000, Vec::new()).expect("tick"))
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench_pass
}
criterion_main!(benches);
