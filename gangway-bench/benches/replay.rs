//! Replaying a trace with EASY: textbook count-based EASY (`gangway_sim::textbook`) beside
//! gangway's simulator with the `easy` preset, in one run, so the ratio between the two is
//! measured on the same machine at the same time. The simulation alone: the trace is read once,
//! outside the measurement. Needs ../shared/traces/KTH-SP2-1996-2.1-cln.swf.gz (skipped with a
//! note where it is absent).
//!
//!     cargo bench -p gangway-bench --bench replay

#[path = "../../gangway/tests/engine/common/shared.rs"]
mod shared;

use criterion::{Criterion, criterion_group, criterion_main};
use gangway_sim::textbook;
use gangway_sim::workload::swf;
use gangway_sim::{Overrun, PolicyPreset, SimOptions, Simulator, prepare};

fn replay(c: &mut Criterion) {
    let Some(trace) = shared::path("traces/KTH-SP2-1996-2.1-cln.swf.gz") else {
        return;
    };
    let workload = swf::from_path(trace, None).expect("the KTH trace");
    let mut group = c.benchmark_group("KTH-SP2 EASY replay");
    group.sample_size(10);
    group.bench_function("textbook count-based EASY", |b| {
        b.iter(|| {
            let (processors, jobs) = textbook::jobs_of(&workload).unwrap();
            textbook::easy(processors, &jobs)
        })
    });
    group.bench_function("gangway simulator, easy preset", |b| {
        b.iter(|| {
            let (cluster, jobs) = prepare(&workload, None, PolicyPreset::Easy, Overrun::Allow);
            Simulator::new(cluster, jobs, SimOptions::default())
                .unwrap()
                .run(|_| Ok(()))
                .unwrap()
        })
    });
    group.finish();
}

criterion_group!(benches, replay);
criterion_main!(benches);
