//! Conservative backfill passes: the Slurm peer's 2,000-job mix on 4 nodes × 8 cpus × 4 GPUs,
//! and 10,000 pending jobs on 1,000 nodes × 8 GPUs. In both every blocked job is planned. The
//! Slurm mix comes from ../shared/peers beside the checkout and is skipped, with a note, where
//! that is absent.

#[path = "../../gangway/tests/engine/common/shared.rs"]
mod shared;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use gangway::{ClusterConfig, Event, JobSpec, Milli, PlacementMode, Scheduler, TaskGroup};

use rand::{RngExt, SeedableRng, rngs::Xoshiro256PlusPlus};

fn conservative(nodes: Vec<serde_json::Value>) -> ClusterConfig {
    serde_json::from_value(serde_json::json!({
        "nodes": nodes,
        "policy": {"backfill": {"mode": "conservative"}}
    }))
    .expect("valid cluster")
}

/// One job from an sbatch line: `-N n --ntasks-per-node=t [--gres=gpu:g] -t minutes
/// --priority=p` becomes one strict-spread group of n tasks of t cpus, 2000·t MiB and g GPUs.
fn sbatch_job(line: &str) -> JobSpec {
    let mut tokens = line.split_whitespace();
    let (mut id, mut nodes, mut per_node, mut gpus, mut minutes, mut priority) =
        (String::new(), 1, 1, 0, 1, 0);
    while let Some(token) = tokens.next() {
        if token == "-J" {
            id = tokens.next().unwrap_or_default().to_string();
        } else if token == "-t" {
            minutes = tokens.next().and_then(|t| t.parse().ok()).unwrap_or(1);
        } else if let Some(n) = token.strip_prefix("-N") {
            nodes = n.parse().expect("-N");
        } else if let Some(t) = token.strip_prefix("--ntasks-per-node=") {
            per_node = t.parse().expect("--ntasks-per-node");
        } else if let Some(g) = token.strip_prefix("--gres=gpu:") {
            gpus = g.parse().expect("--gres");
        } else if let Some(p) = token.strip_prefix("--priority=") {
            priority = p.parse().expect("--priority");
        }
    }
    let mut group = TaskGroup::new(nodes);
    group.cpus = Milli::from_units(per_node);
    group.memory_mib = 2_000 * per_node;
    group.gpus = Milli::from_units(gpus);
    group.placement = PlacementMode::StrictSpread;
    let mut job = JobSpec::new(id, minutes * 60_000, nodes).with_priority(priority);
    job.groups = vec![group];
    job
}

/// The Slurm peer's mix, or `None` where ../shared/peers/slurm is absent.
fn slurm_mix() -> Option<(ClusterConfig, Vec<Event>)> {
    let path = shared::path("peers/slurm/scenarios/perf_2000.jobs")?;
    let nodes = (1..=4)
        .map(|i| {
            serde_json::json!({"name": format!("n{i}"), "cpus": 8, "memory_mib": 64000,
                "gpus": {"model": "gpu", "count": 4}})
        })
        .collect();
    let text = std::fs::read_to_string(path).expect("the Slurm peer's perf_2000.jobs");
    let events = text
        .lines()
        .filter(|l| l.starts_with("sbatch"))
        .map(|l| Event::Submit { job: sbatch_job(l) })
        .collect();
    Some((conservative(nodes), events))
}

fn large() -> (ClusterConfig, Vec<Event>, Vec<Event>) {
    let nodes = (0..1_000)
        .map(|i| {
            serde_json::json!({"name": format!("n{i:05}"), "cpus": 64, "memory_mib": 512000,
                "gpus": {"model": "a100", "count": 8}})
        })
        .collect();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
    let job = |id: String, gpus: u32, limit_ms: u64| {
        if gpus <= 8 {
            JobSpec::new(id, limit_ms, 1).with_gpus(Milli::from_units(u64::from(gpus)))
        } else {
            JobSpec::new(id, limit_ms, gpus / 8)
                .with_gpus(Milli::from_units(8))
                .with_placement(PlacementMode::StrictSpread)
        }
    };
    let fill = (0..1_000)
        .map(|i| Event::Submit {
            job: job(format!("run{i}"), 8, rng.random_range(600_000..86_400_000)),
        })
        .collect();
    let sizes = [1, 1, 1, 1, 2, 2, 4, 8, 8, 16, 32, 64];
    let pending = (0..10_000)
        .map(|i| {
            let gpus = sizes[rng.random_range(0..sizes.len())];
            Event::Submit {
                job: job(format!("p{i}"), gpus, rng.random_range(600_000..86_400_000)),
            }
        })
        .collect();
    (conservative(nodes), fill, pending)
}

fn bench_slurm_mix(c: &mut Criterion) {
    let Some((cluster, events)) = slurm_mix() else {
        return;
    };
    c.bench_function("slurm mix: submit 2000 + first conservative pass", |b| {
        b.iter_batched(
            || {
                (
                    Scheduler::new(cluster.clone()).expect("cluster"),
                    events.clone(),
                )
            },
            |(mut scheduler, events)| scheduler.tick(0, events).expect("tick"),
            BatchSize::LargeInput,
        )
    });
    let mut scheduler = Scheduler::new(cluster).expect("cluster");
    scheduler.tick(0, events).expect("tick");
    let planned = scheduler
        .explain()
        .pending
        .iter()
        .filter(|p| p.estimated_start_ms.is_some())
        .count();
    assert_eq!(
        planned,
        scheduler.explain().pending.len(),
        "every job planned"
    );
    c.bench_function("slurm mix: conservative pass, 2000 jobs planned", |b| {
        b.iter(|| scheduler.tick(1, Vec::new()).expect("tick"))
    });
}

fn bench_large(c: &mut Criterion) {
    // Built on first use, so that filtering for another benchmark skips this set-up.
    let mut scheduler = None;
    c.bench_function(
        "conservative pass, 1000 nodes x 8 GPUs, 10000 pending",
        |b| {
            let scheduler = scheduler.get_or_insert_with(|| {
                let (cluster, fill, pending) = large();
                let mut scheduler = Scheduler::new(cluster).expect("cluster");
                scheduler.tick(0, fill).expect("tick");
                scheduler.tick(1_000, pending).expect("tick");
                scheduler
            });
            b.iter(|| scheduler.tick(2_000, Vec::new()).expect("tick"))
        },
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = bench_slurm_mix, bench_large
}
criterion_main!(benches);
