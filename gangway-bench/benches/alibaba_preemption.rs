//! Order-based preemption on a contended Alibaba slice (issue 29, item 7): every 16th node of
//! each GPU model of `openb_node_list_all_node.csv`, the pods of `openb_pod_list_default.csv`
//! with their submit times divided by 60 (so they contend for the smaller machine), each pod's
//! QoS class its base priority (Guaranteed 3, LS 2, Burstable 1, BE 0). The EASY preset (the
//! default profile) replays the pods (all of them by default) without preemption, and again with
//! order-based preemption (a pod of a higher QoS preempts running pods of lower ones). The
//! target is the second at most 3 times the first. Needs ../shared/traces/alibaba-gpu-2023
//! (skipped with a note where it is absent).
//!
//!     cargo bench -p gangway-bench --bench alibaba_preemption
//!
//! `GANGWAY_ALIBABA_JOBS=N` replays the first N pods instead (0: all of them), and
//! `GANGWAY_ALIBABA_ONCE=1` times one run of each outside criterion, printing the seconds and
//! the number of preemptions (for BENCHMARKS.md's figures on the whole slice);
//! `GANGWAY_ALIBABA_MODE=without` or `=order` runs only that one of the two (to count one
//! replay's instructions under callgrind).

#[path = "../../gangway/tests/engine/common/shared.rs"]
mod shared;

use std::collections::BTreeMap;
use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use gangway::ClusterConfig;
use gangway_sim::workload::{QosPriority, ReaderRules, Workload, alibaba};
use gangway_sim::{Overrun, PolicyPreset, SimJob, SimOptions, Simulator, prepare};

/// Pods replayed by default: all of them (0). The slice contends late: the first 2,000 pods
/// cause no preemption, the first 4,000 six, all 7,255 of them 1,306.
const JOBS: usize = 0;

/// The slice: every 16th node of each GPU model (cpu-only nodes are one model), submit times
/// divided by 60, QoS as base priority; the first `jobs` pods (0: all).
fn slice(jobs: usize) -> Option<Workload> {
    let dir = shared::path("traces/alibaba-gpu-2023")?;
    let rules = ReaderRules {
        qos_priority: QosPriority::standard(),
        ..ReaderRules::default()
    };
    let mut workload = alibaba::from_paths_with(
        dir.join("openb_node_list_all_node.csv"),
        dir.join("openb_pod_list_default.csv"),
        &rules,
    )
    .expect("the Alibaba trace");
    let mut seen: BTreeMap<Option<String>, usize> = BTreeMap::new();
    workload.nodes.retain(|node| {
        let count = seen.entry(node.gpu_model.clone()).or_default();
        *count += 1;
        (*count - 1).is_multiple_of(16)
    });
    for job in &mut workload.jobs {
        job.submit_ms /= 60;
    }
    if jobs > 0 {
        workload.jobs.truncate(jobs);
    }
    Some(workload)
}

/// The cluster and jobs of the EASY preset, with order-based preemption or without.
fn setup(workload: &Workload, order_based: bool) -> (ClusterConfig, Vec<SimJob>) {
    let (mut cluster, jobs) = prepare(workload, None, PolicyPreset::Easy, Overrun::Allow);
    if order_based {
        cluster.policy.preemption.enabled = true;
        cluster.policy.preemption.order_based = true;
    }
    (cluster, jobs)
}

/// One replay; the number of preemptions it decided.
fn replay((cluster, jobs): (ClusterConfig, Vec<SimJob>)) -> u64 {
    let result = Simulator::new(cluster, jobs, SimOptions::default())
        .expect("a valid slice")
        .run(|_| Ok(()))
        .expect("the replay");
    result.preemptions
}

fn jobs_wanted() -> usize {
    std::env::var("GANGWAY_ALIBABA_JOBS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(JOBS)
}

fn alibaba_preemption(c: &mut Criterion) {
    let Some(workload) = slice(jobs_wanted()) else {
        return;
    };
    if std::env::var("GANGWAY_ALIBABA_ONCE").is_ok_and(|v| v == "1") {
        let mode = std::env::var("GANGWAY_ALIBABA_MODE").unwrap_or_default();
        let modes: &[bool] = match mode.as_str() {
            "without" => &[false],
            "order" => &[true],
            _ => &[false, true],
        };
        for &order_based in modes {
            let started = Instant::now();
            let preemptions = replay(setup(&workload, order_based));
            println!(
                "{} nodes, {} pods, order_based {order_based}: {:.2} s, {preemptions} preemptions",
                workload.nodes.len(),
                workload.jobs.len(),
                started.elapsed().as_secs_f64()
            );
        }
        return;
    }
    let mut group = c.benchmark_group("Alibaba slice, QoS priorities, EASY");
    group.sample_size(10);
    group.bench_function("without preemption", |b| {
        b.iter(|| replay(setup(&workload, false)))
    });
    group.bench_function("order-based preemption", |b| {
        b.iter(|| replay(setup(&workload, true)))
    });
    group.finish();
}

criterion_group!(benches, alibaba_preemption);
criterion_main!(benches);
