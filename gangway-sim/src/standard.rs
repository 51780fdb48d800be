//! The standard workload (docs/design.md, section Performance targets), seeded so that every
//! benchmark run measures the same thing:
//! N nodes × 8 GPUs (one GPU model per rack of 32 nodes, three models), 100 queues in 10 cohorts
//! with GPU quotas, 1,000 accounts (10 users each) with fair-share; pending jobs, in a random
//! queue, account and user each, need 1 GPU (40%), 2
//! (20%), 4 (15%), 8 (15%), 16 (5%), 32 (3%) or 64 (2%) GPUs, multi-node (one 8-GPU task per
//! node) above 8, with time limits uniform between 10 minutes and 24 hours. The cluster is
//! filled with running jobs (one 8-GPU job per node) first, then M jobs are pending.
//!
//! ```
//! use gangway_sim::standard::StandardWorkload;
//! let scheduler = StandardWorkload::new(64, 42).loaded_scheduler(500);
//! assert_eq!(scheduler.state().running_count(), 64);
//! assert_eq!(scheduler.state().pending_count(), 500);
//! ```

use rand::{RngExt, SeedableRng, rngs::Xoshiro256PlusPlus};
use serde_json::json;

use gangway::policy::Profile;
use gangway::{ClusterConfig, Event, JobSpec, Milli, PlacementMode, Scheduler};

/// Queues (and cohorts of ten queues each).
pub const QUEUES: usize = 100;
/// Queues per cohort.
pub const QUEUES_PER_COHORT: usize = 10;
/// Fair-share accounts.
pub const ACCOUNTS: usize = 1_000;
/// Users per account.
pub const USERS_PER_ACCOUNT: usize = 10;
/// GPUs per node.
pub const GPUS_PER_NODE: u32 = 8;
/// Nodes per rack (one GPU model per rack).
pub const RACK: usize = 32;
/// The three GPU models, one per rack in turn.
pub const MODELS: [&str; 3] = ["a100", "h100", "h200"];
/// Job sizes in GPUs with their share in percent.
pub const SIZES: [(u32, u32); 7] = [
    (1, 40),
    (2, 20),
    (4, 15),
    (8, 15),
    (16, 5),
    (32, 3),
    (64, 2),
];
/// Shortest time limit (10 minutes).
pub const MIN_LIMIT_MS: u64 = 600_000;
/// Longest time limit (24 hours).
pub const MAX_LIMIT_MS: u64 = 86_400_000;

/// The standard workload on `nodes` nodes, from a seed.
#[derive(Debug)]
pub struct StandardWorkload {
    nodes: usize,
    rng: Xoshiro256PlusPlus,
    next_job: usize,
}

impl StandardWorkload {
    /// The workload on `nodes` nodes with its random stream seeded by `seed`.
    pub fn new(nodes: usize, seed: u64) -> Self {
        StandardWorkload {
            nodes,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            next_job: 0,
        }
    }

    /// The cluster: nodes of 64 cpus, 512,000 MiB and 8 GPUs; 100 queues in 10 cohorts under
    /// one root cohort, each queue with a nominal hundredth of the GPUs (borrowing unlimited,
    /// so a queue may use what the others leave); 1,000
    /// accounts; fair-share, age and job-size weights; EASY backfill.
    pub fn cluster(&self) -> ClusterConfig {
        let nodes: Vec<_> = (0..self.nodes)
            .map(|i| {
                json!({"name": format!("n{i:05}"), "cpus": 64, "memory_mib": 512_000,
                    "gpus": {"model": MODELS[(i / RACK) % MODELS.len()],
                             "count": GPUS_PER_NODE, "memory_mib": 81_920}})
            })
            .collect();
        let nominal = (self.nodes as u64 * u64::from(GPUS_PER_NODE)).div_ceil(QUEUES as u64);
        let mut cohorts: Vec<_> = (0..QUEUES / QUEUES_PER_COHORT)
            .map(|c| json!({"name": format!("cohort{c}"), "parent": "root"}))
            .collect();
        cohorts.insert(0, json!({"name": "root"}));
        let queues: Vec<_> = (0..QUEUES)
            .map(|q| {
                json!({"name": format!("q{q}"), "cohort": format!("cohort{}", q / QUEUES_PER_COHORT),
                    "quota": {"gpu": {"nominal": nominal}}})
            })
            .collect();
        let accounts: Vec<_> = (0..ACCOUNTS)
            .map(|a| json!({"name": format!("acct{a}"), "shares": 1 + a % 7}))
            .collect();
        serde_json::from_value(json!({
            "nodes": nodes,
            "cohorts": cohorts,
            "queues": queues,
            "accounts": accounts,
            "policy": {"backfill": {"mode": "easy"},
                       "priority": {"weights": {"age": 1000, "fairshare": 10000, "job_size": 100}}}
        }))
        .unwrap_or_else(|e| unreachable!("the standard cluster is valid: {e}"))
    }

    /// One job of `gpus` GPUs with a random time limit, in the `n`-th queue and account (cycling).
    fn job(&mut self, prefix: &str, gpus: u32, n: usize) -> JobSpec {
        let id = format!("{prefix}{}", self.next_job);
        self.next_job += 1;
        let limit = self.rng.random_range(MIN_LIMIT_MS..=MAX_LIMIT_MS);
        let mut job = if gpus <= GPUS_PER_NODE {
            JobSpec::new(id, limit, 1).with_gpus(Milli::from_units(u64::from(gpus)))
        } else {
            JobSpec::new(id, limit, gpus / GPUS_PER_NODE)
                .with_gpus(Milli::from_units(u64::from(GPUS_PER_NODE)))
                .with_placement(PlacementMode::StrictSpread)
        };
        job.account = Some(format!("acct{}", n % ACCOUNTS));
        job.user = Some(format!("u{}", (n / ACCOUNTS) % USERS_PER_ACCOUNT));
        job.queue = Some(format!("q{}", n % QUEUES));
        job
    }

    /// One 8-GPU job per node: submitted at once, they fill the cluster.
    pub fn fill(&mut self) -> Vec<Event> {
        (0..self.nodes)
            .map(|n| Event::Submit {
                job: self.job("run", GPUS_PER_NODE, n),
            })
            .collect()
    }

    /// `count` jobs of one task of one GPU each, in random queues and accounts: the burst of
    /// issue 17's benchmark (`benches/burst.rs`).
    pub fn single_gpu_jobs(&mut self, count: usize) -> Vec<Event> {
        (0..count)
            .map(|_| {
                let n = self.rng.random_range(0..ACCOUNTS * USERS_PER_ACCOUNT);
                Event::Submit {
                    job: self.job("b", 1, n),
                }
            })
            .collect()
    }

    /// `count` pending jobs of the standard size mix.
    pub fn pending(&mut self, count: usize) -> Vec<Event> {
        (0..count)
            .map(|_| {
                let n = self.rng.random_range(0..ACCOUNTS * USERS_PER_ACCOUNT);
                let roll = self.rng.random_range(0..100);
                let mut cumulative = 0;
                let gpus = SIZES
                    .iter()
                    .find(|(_, percent)| {
                        cumulative += percent;
                        roll < cumulative
                    })
                    .map_or(1, |(gpus, _)| *gpus);
                Event::Submit {
                    job: self.job("p", gpus, n),
                }
            })
            .collect()
    }

    /// A scheduler on the standard cluster, filled at time 0, with `pending` jobs submitted at
    /// 1 s (whose tick runs the first pass over them).
    pub fn loaded_scheduler(&mut self, pending: usize) -> Scheduler {
        self.loaded_scheduler_with(pending, Profile::default_for_config())
    }

    /// [`StandardWorkload::loaded_scheduler`] deciding with `profile`. The running jobs are
    /// named `run0`, `run1`, … (one per node, in node order).
    ///
    /// ```
    /// use gangway::policy::{builtin::Spread, Profile};
    /// use gangway_sim::standard::StandardWorkload;
    /// let profile = Profile::builder().scorer(Spread, 0, 1.0).build().unwrap();
    /// let scheduler = StandardWorkload::new(64, 42).loaded_scheduler_with(500, profile);
    /// assert!(scheduler.state().job_by_name("run63").is_some_and(|j| j.is_running()));
    /// ```
    pub fn loaded_scheduler_with(&mut self, pending: usize, profile: Profile) -> Scheduler {
        let scheduler = Scheduler::with_profile(self.cluster(), profile)
            .unwrap_or_else(|e| unreachable!("the standard cluster is valid: {e}"));
        self.load(scheduler, pending)
    }

    /// Fills `scheduler`, an empty scheduler on this workload's [`StandardWorkload::cluster`]
    /// (its policy may differ), at time 0 and submits `pending` jobs at 1 s, as
    /// [`StandardWorkload::loaded_scheduler`] does.
    ///
    /// ```
    /// use gangway::config::BackfillMode;
    /// use gangway_sim::standard::StandardWorkload;
    /// let mut workload = StandardWorkload::new(64, 42);
    /// let mut cluster = workload.cluster();
    /// cluster.policy.backfill.mode = BackfillMode::Conservative;
    /// let scheduler = workload.load(gangway::Scheduler::new(cluster).unwrap(), 100);
    /// assert_eq!(scheduler.state().pending_count(), 100);
    /// ```
    pub fn load(&mut self, mut scheduler: Scheduler, pending: usize) -> Scheduler {
        let fill = self.fill();
        let pending = self.pending(pending);
        for (at, events) in [(0, fill), (1_000, pending)] {
            let out = scheduler
                .tick(at, events)
                .unwrap_or_else(|e| unreachable!("the standard workload ticks: {e}"));
            debug_assert!(out.rejected.is_empty(), "{:?}", out.rejected);
        }
        scheduler
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filled_cluster_runs_one_job_per_node_and_every_pending_job_is_accepted() {
        let mut workload = StandardWorkload::new(96, 1);
        let cluster = workload.cluster();
        assert_eq!(cluster.queues.len(), QUEUES);
        assert_eq!(cluster.accounts.len(), ACCOUNTS);
        let mut scheduler = Scheduler::new(cluster).unwrap();
        let fill = scheduler.tick(0, workload.fill()).unwrap();
        assert!(fill.rejected.is_empty(), "{:?}", fill.rejected);
        assert_eq!(scheduler.state().running_count(), 96);
        let pending = scheduler.tick(1_000, workload.pending(1_000)).unwrap();
        assert!(pending.rejected.is_empty(), "{:?}", pending.rejected);
        assert_eq!(scheduler.state().pending_count(), 1_000);
    }

    #[test]
    fn the_same_seed_gives_the_same_workload() {
        let a = StandardWorkload::new(10, 5).pending(50);
        let b = StandardWorkload::new(10, 5).pending(50);
        let c = StandardWorkload::new(10, 6).pending(50);
        assert_eq!(a, b);
        assert_ne!(a, c);
    }
}
