//! One full scheduling pass (fair-share + quotas + EASY backfill) on the standard workload
//! (docs/design.md, section Performance targets; [`gangway::sim::standard`]): N ∈ {1,000,
//! 10,000} nodes × 8 GPUs full of running jobs, M ∈ {1,000, 10,000, 100,000} pending. Seeded,
//! so every run measures the same workload.
//! Each scheduler is built only when its benchmark runs, so a filter skips the others' set-up.
//! A last benchmark adds reading the whole pending report after the pass.

use criterion::{Criterion, criterion_group, criterion_main};
use gangway::sim::standard::StandardWorkload;

fn bench_pass(c: &mut Criterion) {
    for nodes in [1_000, 10_000] {
        for pending in [1_000, 10_000, 100_000] {
            let mut scheduler = None;
            let name = format!("pass {nodes} nodes x 8 GPUs, {pending} pending, standard");
            c.bench_function(&name, |b| {
                let scheduler = scheduler.get_or_insert_with(|| {
                    StandardWorkload::new(nodes, 42).loaded_scheduler(pending)
                });
                b.iter(|| scheduler.tick(2_000, Vec::new()).expect("tick"))
            });
        }
    }
}

/// A pass followed by reading the whole pending report (`pending_info`): what a host pays when
/// it asks for every job's reason after each pass, since a settled pass derives the reasons of
/// the jobs it did not visit only when they are read.
fn bench_pass_and_report(c: &mut Criterion) {
    let mut scheduler = None;
    c.bench_function(
        "pass and pending report, 1000 nodes x 8 GPUs, 10000 pending, standard",
        |b| {
            let scheduler = scheduler
                .get_or_insert_with(|| StandardWorkload::new(1_000, 42).loaded_scheduler(10_000));
            b.iter(|| {
                scheduler.tick(2_000, Vec::new()).expect("tick");
                scheduler.pending_info()
            })
        },
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench_pass, bench_pass_and_report
}
criterion_main!(benches);
