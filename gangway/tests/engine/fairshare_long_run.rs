//! Fair-share wired into the scheduler over long runs: two accounts with saturating demand get
//! GPU-time in proportion to their shares (issue 4's long-run property), and a snapshot restores
//! the usage ledger so that the factors and later decisions are unchanged.

use crate::common;

use std::collections::BTreeMap;

use common::build::{self, finished, submit};
use common::decisions::started;
use gangway::testkit::checked_tick;
use gangway::{Decision, Event, JobSpec, Milli, Scheduler};
use serde_json::json;

const HOUR_MS: u64 = 3_600_000;
const DAYS: u64 = 30;
/// Pending jobs each account always keeps queued: enough to fill the cluster alone.
const BACKLOG: usize = 16;

/// 4 nodes × 4 GPUs, two accounts with the given shares, fair-share the only priority factor.
fn scheduler(shares: [u32; 2], algorithm: &str) -> Scheduler {
    let nodes: Vec<_> = (1..=4)
        .map(|i| {
            json!({"name": format!("n{i}"), "cpus": 16, "memory_mib": 64000,
                   "gpus": {"model": "a100", "count": 4}})
        })
        .collect();
    build::scheduler(json!({
        "nodes": nodes,
        "accounts": [{"name": "a", "shares": shares[0]}, {"name": "b", "shares": shares[1]}],
        "policy": {"priority": {"weights": {"fairshare": 10000}},
                   "fairshare": {"algorithm": algorithm}}
    }))
}

/// Drives a saturated cluster: one-GPU jobs of one hour, both accounts always with a backlog;
/// every job finishes at its time limit, reported at the hourly tick.
struct Workload {
    scheduler: Scheduler,
    next_id: u64,
    pending: BTreeMap<&'static str, usize>,
    running: Vec<String>,
    gpu_hours: BTreeMap<&'static str, u64>,
}

impl Workload {
    fn new(scheduler: Scheduler) -> Self {
        Workload {
            scheduler,
            next_id: 0,
            pending: BTreeMap::from([("a", 0), ("b", 0)]),
            running: Vec::new(),
            gpu_hours: BTreeMap::from([("a", 0), ("b", 0)]),
        }
    }

    /// The events of the tick at `hour`: finish what ran for the last hour, top up backlogs.
    fn events(&mut self) -> Vec<Event> {
        let mut events: Vec<Event> = self.running.drain(..).map(|job| finished(&job)).collect();
        for (account, queued) in &mut self.pending {
            while *queued < BACKLOG {
                let mut job = JobSpec::new(format!("{account}{}", self.next_id), HOUR_MS, 1)
                    .with_gpus(Milli::from_units(1));
                job.account = Some((*account).to_owned());
                job.user = Some(format!("{account}-user"));
                events.push(submit(job));
                self.next_id += 1;
                *queued += 1;
            }
        }
        events
    }

    fn tick(&mut self, hour: u64) -> Vec<Decision> {
        let events = self.events();
        let outcome = checked_tick(&mut self.scheduler, hour * HOUR_MS, events).unwrap();
        assert!(outcome.rejected.is_empty(), "{:?}", outcome.rejected);
        for job in started(&outcome.decisions) {
            let account = if job.starts_with('a') { "a" } else { "b" };
            *self.pending.get_mut(account).unwrap() -= 1;
            *self.gpu_hours.get_mut(account).unwrap() += 1;
            self.running.push(job.to_string());
        }
        outcome.decisions
    }

    /// Account `a`'s fraction of the GPU-time used.
    fn share_of_a(&self) -> f64 {
        let (a, b) = (self.gpu_hours["a"], self.gpu_hours["b"]);
        a as f64 / (a + b) as f64
    }
}

/// Account `a`'s share of GPU-time over 30 saturated days.
fn long_run_share(shares: [u32; 2], algorithm: &str) -> f64 {
    let mut workload = Workload::new(scheduler(shares, algorithm));
    for hour in 0..DAYS * 24 {
        workload.tick(hour);
    }
    // The cluster was full all the time.
    assert_eq!(
        workload.gpu_hours.values().sum::<u64>(),
        DAYS * 24 * 16,
        "{shares:?} {algorithm}"
    );
    workload.share_of_a()
}

#[test]
fn equal_shares_split_gpu_time_evenly() {
    for algorithm in ["fair_tree", "classic"] {
        let share = long_run_share([1, 1], algorithm);
        assert!((share - 0.5).abs() <= 0.05, "{algorithm}: a got {share}");
    }
}

#[test]
fn shares_three_to_one_split_gpu_time_three_to_one() {
    for algorithm in ["fair_tree", "classic"] {
        let share = long_run_share([3, 1], algorithm);
        assert!((share - 0.75).abs() <= 0.05, "{algorithm}: a got {share}");
    }
}

#[test]
fn a_restored_snapshot_keeps_usage_factors_and_decisions() {
    let mut original = Workload::new(scheduler([3, 1], "fair_tree"));
    for hour in 0..5 * 24 {
        original.tick(hour);
    }
    let saved = serde_json::to_string(&original.scheduler.snapshot()).unwrap();
    let restored = Scheduler::restore(serde_json::from_str(&saved).unwrap()).unwrap();
    assert_eq!(restored.share_report(), original.scheduler.share_report());
    assert_eq!(restored.priorities(), original.scheduler.priorities());
    assert!(
        original.scheduler.share_report()[1].raw_usage > 0.0,
        "usage was charged"
    );

    let mut copy = Workload {
        scheduler: restored,
        next_id: original.next_id,
        pending: original.pending.clone(),
        running: original.running.clone(),
        gpu_hours: original.gpu_hours.clone(),
    };
    for hour in 5 * 24..6 * 24 {
        assert_eq!(copy.tick(hour), original.tick(hour), "hour {hour}");
    }
    assert_eq!(
        copy.scheduler.share_report(),
        original.scheduler.share_report()
    );
}
