//! Priority computation for 100,000 pending jobs in 1,000 accounts (10 users each): one
//! scheduling tick with no events, where every pending job waits for its begin time, so the
//! pass is dominated by computing the fair-share factors once and ordering the pending jobs.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use gangway::{ClusterConfig, Event, JobSpec, Milli, Scheduler};
use serde_json::json;

const ACCOUNTS: usize = 1_000;
const USERS: usize = 10;
const PENDING: usize = 100_000;
const HOUR_MS: u64 = 3_600_000;

/// 1,000 nodes of 4 GPUs; each account runs one job of 1 to 4 GPUs (so usage differs) and
/// queues 100 jobs not eligible before a day has passed.
fn loaded_scheduler() -> Scheduler {
    let nodes: Vec<_> = (0..ACCOUNTS)
        .map(|i| {
            json!({"name": format!("n{i}"), "cpus": 32, "memory_mib": 256000,
                        "gpus": {"model": "a100", "count": 4}})
        })
        .collect();
    let accounts: Vec<_> = (0..ACCOUNTS)
        .map(|i| json!({"name": format!("acct{i}"), "shares": 1 + i % 7}))
        .collect();
    let cluster: ClusterConfig = serde_json::from_value(json!({
        "nodes": nodes,
        "accounts": accounts,
        "policy": {"priority": {"weights": {"age": 1000, "fairshare": 10000, "job_size": 100}}}
    }))
    .expect("valid cluster");
    let mut scheduler = Scheduler::new(cluster).expect("valid cluster");
    let job = |id: String, account: usize, user: usize, gpus: u64| {
        let mut job = JobSpec::new(id, 30 * 24 * HOUR_MS, 1).with_gpus(Milli::from_units(gpus));
        job.account = Some(format!("acct{account}"));
        job.user = Some(format!("u{user}"));
        job
    };
    let running = (0..ACCOUNTS)
        .map(|a| Event::Submit {
            job: job(format!("run{a}"), a, 0, 1 + (a % 4) as u64),
        })
        .collect();
    scheduler.tick(0, running).expect("tick");
    let pending = (0..PENDING)
        .map(|i| {
            let mut spec = job(format!("p{i}"), i % ACCOUNTS, i % USERS, 1);
            spec.begin_ms = Some(24 * HOUR_MS);
            Event::Submit { job: spec }
        })
        .collect();
    scheduler.tick(HOUR_MS, pending).expect("tick");
    scheduler
}

fn priority(c: &mut Criterion) {
    let mut scheduler = loaded_scheduler();
    let now = 2 * HOUR_MS;
    let mut group = c.benchmark_group("priority");
    group.sample_size(10);
    group.bench_function("order_100k_pending_1k_accounts", |b| {
        b.iter(|| black_box(scheduler.tick(now, Vec::new()).expect("tick")))
    });
    group.finish();
}

criterion_group!(benches, priority);
criterion_main!(benches);
