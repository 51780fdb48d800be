//! Churn, steady state (issue 17): the standard workload ([`gangway_sim::standard`]) full of
//! running jobs with M pending, then ticks in which 1% of the running jobs end and as many new
//! jobs arrive as started in the tick before, so M stays put ([`gangway_sim::churn`]). The
//! pass fills the freed GPUs, places gangs and moves the reservations. Seeded.
//!
//! The cases with "priorities every 5 min" set `policy.priority.calc_period_ms` to 300,000
//! (Slurm's default `PriorityCalcPeriod`); the others calculate them at every pass (exact).
//!
//! The measured routine is one tick: the churn is built once per benchmark (loading 100,000
//! pending takes seconds) and keeps churning from sample to sample, its state statistically
//! steady; making a tick's events and reading its outcome are not timed. After each benchmark
//! the tasks placed per second of measured tick time are printed.
//!
//!     cargo bench -p gangway-bench --bench churn -- --warm-up-time 2 --measurement-time 10

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use gangway::config::BackfillMode;
use gangway_sim::churn::Churn;

fn bench_churn(c: &mut Criterion) {
    // The last three: priorities calculated once every 5 minutes (Slurm's default
    // PriorityCalcPeriod) instead of at every pass.
    let every_5_min = Some(300_000);
    let cases = [
        (10_000, 100_000, BackfillMode::Easy, None, "EASY"),
        (1_000, 10_000, BackfillMode::Easy, None, "EASY"),
        (
            1_000,
            10_000,
            BackfillMode::Conservative,
            None,
            "conservative",
        ),
        (
            10_000,
            100_000,
            BackfillMode::Easy,
            every_5_min,
            "EASY, priorities every 5 min",
        ),
        (
            1_000,
            10_000,
            BackfillMode::Easy,
            every_5_min,
            "EASY, priorities every 5 min",
        ),
        (
            1_000,
            10_000,
            BackfillMode::Conservative,
            every_5_min,
            "conservative, priorities every 5 min",
        ),
    ];
    for (nodes, pending, mode, period, label) in cases {
        let mut churn = None;
        let (mut ticks, mut tasks, mut timed) = (0u64, 0u64, Duration::ZERO);
        let name = format!("churn tick {nodes} nodes x 8 GPUs, {pending} pending, {label}");
        c.bench_function(&name, |b| {
            let churn = churn.get_or_insert_with(|| {
                Churn::configured(nodes, pending, 42, |cluster| {
                    cluster.policy.backfill.mode = mode;
                    cluster.policy.priority.calc_period_ms = period;
                })
            });
            b.iter_custom(|iterations| {
                let mut elapsed = Duration::ZERO;
                for _ in 0..iterations {
                    let (now, events) = churn.next_tick();
                    let scheduler = churn.scheduler();
                    let start = Instant::now();
                    let outcome = scheduler.tick(now, events).expect("tick");
                    elapsed += start.elapsed();
                    tasks += churn.record(&outcome);
                }
                ticks += iterations;
                timed += elapsed;
                elapsed
            })
        });
        if ticks > 0 {
            let per_second = tasks as f64 / timed.as_secs_f64();
            eprintln!(
                "{name}: {ticks} ticks, {tasks} tasks placed, {per_second:.0} tasks per second of tick time"
            );
        }
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench_churn
}
criterion_main!(benches);
