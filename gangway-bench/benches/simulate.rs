//! Simulation throughput: EASY backfill replaying the first 20,000 jobs of the HPC2N trace
//! (`../shared/traces`, beside the checkout) on its 240-node machine, in scheduling decisions
//! per second (criterion's elements/s). The whole trace is timed with the CLI instead:
//! `gangway simulate --trace ../shared/traces/HPC2N-2002-2.2-cln.swf.gz --policy easy`.
//! Skipped, with a note, where the trace is absent.

#[path = "../../gangway/tests/engine/common/shared.rs"]
mod shared;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use gangway_sim::workload::swf;
use gangway_sim::{Overrun, PolicyPreset, SimOptions, Simulator, prepare};

/// The prefix of the trace replayed.
const JOBS: usize = 20_000;

fn bench_replay(c: &mut Criterion) {
    let Some(trace) = shared::path("traces/HPC2N-2002-2.2-cln.swf.gz") else {
        return;
    };
    let mut workload = swf::from_path(trace, None).expect("the HPC2N trace");
    workload.jobs.truncate(JOBS);
    let (cluster, jobs) = prepare(&workload, None, PolicyPreset::Easy, Overrun::Allow);
    let replay = |count: &mut u64| {
        let simulator = Simulator::new(cluster.clone(), jobs.clone(), SimOptions::default())
            .expect("a valid simulation");
        simulator
            .run(|view| {
                *count += view.outcome.decisions.len() as u64;
                Ok(())
            })
            .expect("the replay runs to its end")
    };
    let mut decisions = 0;
    replay(&mut decisions);
    let mut group = c.benchmark_group("simulate");
    group.throughput(Throughput::Elements(decisions));
    group.bench_function(format!("HPC2N first {JOBS} jobs, easy"), |b| {
        b.iter(|| replay(&mut 0))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .measurement_time(std::time::Duration::from_secs(20));
    targets = bench_replay
}
criterion_main!(benches);
