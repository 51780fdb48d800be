//! Steady churn on the standard workload (issue 17's churn benchmark, `benches/churn.rs`): a
//! full cluster with a constant number of pending jobs, in which every tick 1% of the running
//! jobs end and exactly as many new jobs arrive as started in the tick before, so the pending
//! count stays where it was. A pass then fills the freed GPUs, places gangs and moves the
//! reservations. Seeded: the same seed churns the same way.
//!
//! The events of a tick are made by [`Churn::next_tick`] and its outcome is read back by
//! [`Churn::record`], so that a benchmark can time the tick alone.
//!
//! ```
//! use gangway::config::BackfillMode;
//! use gangway_sim::churn::Churn;
//! let mut churn = Churn::new(64, 500, BackfillMode::Easy, 42);
//! for _ in 0..5 {
//!     let (now, events) = churn.next_tick();
//!     let outcome = churn.scheduler().tick(now, events).unwrap();
//!     churn.record(&outcome);
//! }
//! assert_eq!(churn.scheduler().state().running_count(), churn.running());
//! ```

use rand::{RngExt, SeedableRng, rngs::Xoshiro256PlusPlus};

use crate::standard::StandardWorkload;
use gangway::Decision;
use gangway::FinishOutcome;
use gangway::config::BackfillMode;
use gangway::{ClusterConfig, Event, Scheduler, TickOutcome};

/// Virtual time between two churn ticks: short enough that no job reaches its time limit
/// (ten minutes at least) within the first 6,000 ticks.
pub const TICK_MS: u64 = 100;

/// A loaded standard-workload scheduler being churned.
#[derive(Debug)]
pub struct Churn {
    workload: StandardWorkload,
    scheduler: Scheduler,
    /// The running jobs, by name (order: as started, with ends swapped out).
    running: Vec<String>,
    /// Jobs started by the last tick: as many arrive in the next one.
    started_last: usize,
    now: u64,
    rng: Xoshiro256PlusPlus,
}

impl Churn {
    /// The standard workload on `nodes` nodes, full of running jobs, with `pending` jobs
    /// pending, under backfill `mode`; `seed` seeds the workload and the choice of ending jobs.
    pub fn new(nodes: usize, pending: usize, mode: BackfillMode, seed: u64) -> Self {
        Self::configured(nodes, pending, seed, |cluster| {
            cluster.policy.backfill.mode = mode;
        })
    }

    /// As [`Churn::new`], with the standard cluster changed by `configure` first (a backfill
    /// mode, a priority calculation period, …).
    pub fn configured(
        nodes: usize,
        pending: usize,
        seed: u64,
        configure: impl FnOnce(&mut ClusterConfig),
    ) -> Self {
        let mut workload = StandardWorkload::new(nodes, seed);
        let mut cluster = workload.cluster();
        configure(&mut cluster);
        let scheduler = Scheduler::new(cluster)
            .unwrap_or_else(|e| unreachable!("the standard cluster is valid: {e}"));
        let scheduler = workload.load(scheduler, pending);
        Churn {
            workload,
            scheduler,
            running: (0..nodes).map(|n| format!("run{n}")).collect(),
            started_last: 0,
            now: 1_000,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x5eed),
        }
    }

    /// The next tick's time and events: 1% of the running jobs (at least one) end, chosen at
    /// random, and as many standard jobs arrive as the last tick started.
    pub fn next_tick(&mut self) -> (u64, Vec<Event>) {
        self.now += TICK_MS;
        let ending = (self.running.len() / 100).max(1).min(self.running.len());
        let mut events = Vec::with_capacity(ending + self.started_last);
        for _ in 0..ending {
            let at = self.rng.random_range(0..self.running.len());
            events.push(Event::Finished {
                job: self.running.swap_remove(at),
                outcome: FinishOutcome::Completed,
            });
        }
        events.extend(self.workload.pending(self.started_last));
        (self.now, events)
    }

    /// The scheduler, to tick with [`Churn::next_tick`]'s events.
    pub fn scheduler(&mut self) -> &mut Scheduler {
        &mut self.scheduler
    }

    /// Takes in the outcome of a tick: the jobs it started run, those it stopped do not.
    /// Returns the tasks it started.
    pub fn record(&mut self, outcome: &TickOutcome) -> u64 {
        let mut tasks = 0;
        self.started_last = 0;
        for decision in &outcome.decisions {
            match decision {
                Decision::Start { job, placement } => {
                    tasks += placement.iter().map(|p| u64::from(p.tasks)).sum::<u64>();
                    self.started_last += 1;
                    self.running.push(job.clone());
                }
                Decision::Kill { job, .. } | Decision::Requeue { job, .. } => {
                    self.running.retain(|r| r != job);
                }
                // Cancels, preemptions (whose stops end the jobs later), and kinds of decision
                // newer than this churn: nothing runs or stops now.
                _ => {}
            }
        }
        tasks
    }

    /// How many jobs run, as far as the churn knows.
    pub fn running(&self) -> usize {
        self.running.len()
    }
}
