//! Burst (issue 17): one tick submits 100,000 single-GPU one-task jobs to an empty standard
//! cluster ([`gangway_sim::standard`]) of N nodes × 8 GPUs and places the 8·N that fit, the
//! shape of kube-scheduler's density benchmark. N = 1,000, 2,000 and 4,000 are quick rows; the
//! 10,000-node row is the figure of the target. The measured routine is the tick (the
//! submits and the pass); building the empty scheduler and the events is not timed. Seeded.
//!
//!     cargo bench -p gangway-bench --bench burst -- --warm-up-time 1 --measurement-time 5

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use gangway::Scheduler;
use gangway_sim::standard::StandardWorkload;

/// Jobs submitted in the burst.
const JOBS: usize = 100_000;

fn bench_burst(c: &mut Criterion) {
    let mut group = c.benchmark_group("burst");
    group.sample_size(10);
    for nodes in [1_000, 2_000, 4_000, 10_000] {
        let mut workload = StandardWorkload::new(nodes, 42);
        let empty = Scheduler::new(workload.cluster()).expect("the standard cluster is valid");
        let jobs = workload.single_gpu_jobs(JOBS);
        group.throughput(Throughput::Elements(8 * nodes as u64));
        let name = format!("{JOBS} one-GPU jobs to {nodes} empty nodes x 8 GPUs");
        group.bench_function(&name, |b| {
            b.iter_batched(
                || (empty.clone(), jobs.clone()),
                |(mut scheduler, jobs)| {
                    let outcome = scheduler.tick(0, jobs).expect("tick");
                    assert_eq!(outcome.decisions.len(), 8 * nodes, "every GPU taken");
                    (scheduler, outcome)
                },
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, bench_burst);
criterion_main!(benches);
