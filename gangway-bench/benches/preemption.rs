//! Victim search: 125 nodes × 8 GPUs full of 1,000 one-GPU jobs in 100 queues of 10 cohorts
//! (10 GPUs nominal each; half the queues borrow 5 from the other half). One tick in which a
//! high-priority 4-GPU job of a lending queue finds no quota and reclaims it: the candidates
//! are its cohort's borrowers, and the victims must free 4 GPUs on one node.

use std::hint::black_box;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use gangway::{ClusterConfig, Event, JobSpec, Milli, Scheduler};
use serde_json::json;

const NODES: usize = 125;
const COHORTS: usize = 10;
const QUEUES: usize = 100;
const DAY_MS: u64 = 86_400_000;

fn loaded_scheduler() -> Scheduler {
    let nodes: Vec<_> = (0..NODES)
        .map(|i| {
            json!({"name": format!("n{i}"), "cpus": 64, "memory_mib": 512000,
                   "gpus": {"model": "h100", "count": 8}})
        })
        .collect();
    let cohorts: Vec<_> = (0..COHORTS)
        .map(|c| json!({"name": format!("c{c}")}))
        .collect();
    let queues: Vec<_> = (0..QUEUES)
        .map(|q| {
            json!({"name": format!("q{q}"), "cohort": format!("c{}", q % COHORTS),
                   "quota": {"gpu": {"nominal": 10}},
                   "preemption": {"within_queue": "lower_priority", "reclaim_within_cohort": "any"}})
        })
        .collect();
    let cluster: ClusterConfig = serde_json::from_value(json!({
        "nodes": nodes, "cohorts": cohorts, "queues": queues,
        "policy": {"preemption": {"enabled": true}}
    }))
    .expect("valid cluster");
    let mut scheduler = Scheduler::new(cluster).expect("valid cluster");
    // Queues 0..50 run 15 jobs (borrowing 5), queues 50..100 run 5; submitted round-robin so
    // every node holds jobs of many queues, with priorities and start times that differ.
    let mut running = Vec::new();
    for round in 0..15 {
        for q in 0..QUEUES {
            if q >= QUEUES / 2 && round >= 5 {
                continue;
            }
            let mut job =
                JobSpec::new(format!("r{q}-{round}"), DAY_MS, 1).with_gpus(Milli::from_units(1));
            job.queue = Some(format!("q{q}"));
            job.priority = ((q + round) % 5) as i32;
            running.push(Event::Submit { job });
        }
    }
    let out = scheduler.tick(0, running).expect("tick");
    assert_eq!(out.decisions.len(), NODES * 8, "the cluster is full");
    scheduler
}

fn preemption(c: &mut Criterion) {
    let snapshot = loaded_scheduler().snapshot();
    let mut group = c.benchmark_group("preemption");
    group.sample_size(20);
    group.bench_function("victims_among_1000_running_100_queues_10_cohorts", |b| {
        b.iter_batched(
            || Scheduler::restore(snapshot.clone()).expect("restore"),
            |mut scheduler| {
                let mut job = JobSpec::new("urgent", DAY_MS, 1).with_gpus(Milli::from_units(4));
                job.queue = Some("q57".into());
                job.priority = 100;
                let out = scheduler
                    .tick(60_000, vec![Event::Submit { job }])
                    .expect("tick");
                assert!(!out.decisions.is_empty(), "victims found");
                black_box(out)
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

criterion_group!(benches, preemption);
criterion_main!(benches);
