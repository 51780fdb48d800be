//! The discrete-event loop: drives [`Scheduler::tick`] on virtual time.
//!
//! Events are job arrivals (at their submit times), completions (a `start` plus the job's
//! actual run time) and acknowledgements of preemptions (a `preempt` plus the checkpoint delay,
//! never past the grace). The simulator ticks only when one of them is due or at the
//! scheduler's `next_wakeup`, and applies every event due at one instant in one tick. A
//! preempted job keeps the work done up to the `preempt` (it saved a checkpoint) and runs only
//! the rest when it starts again; a requeued job (its node was lost) starts over from its last
//! checkpoint. No wall clock is read: the same input gives the same result.
//!
//! With a fault model ([`FaultOptions`]) nodes also fail and come back, some `stopped`
//! acknowledgements never come (the scheduler kills the job at grace expiry), some events are
//! sent twice and each tick's events may come in any order. Node failures stop once nothing of
//! the workload is due and nothing runs, so a run always ends.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap};

use crate::convert::SimJob;
use crate::faults::{FaultOptions, Faults};
use crate::looks::{LookError, LookSchedule};
use crate::result::{Execution, ExecutionEnd, JobRecord, JobStatus, Sample, SimResult, TickInput};
use crate::workload::dist::{self, Rng};
use gangway::Event;
use gangway::FinishOutcome;
use gangway::Scheduler;
use gangway::config::ClusterConfig;
use gangway::policy::Profile;
use gangway::{ConfigError, TickError};
use gangway::{Decision, KillReason, PlacementEntry, RequeueReason, TickOutcome};

/// Settings of the simulated hosts.
///
/// ```
/// let options = gangway_sim::SimOptions::default();
/// assert_eq!(options.checkpoint_delay_ms, 30_000);
/// assert_eq!(options.faults, None);
/// assert_eq!(options.looks, None);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimOptions {
    /// How long a preempted job takes to save its checkpoint and stop; capped at the job's
    /// grace. Default 30,000 (the default grace).
    pub checkpoint_delay_ms: u64,
    /// The faults to inject; `None`: none.
    pub faults: Option<FaultOptions>,
    /// Play a team without a scheduler (the `ssh` baseline, [`crate::looks`]): each job
    /// is submitted only at its user's looks and cancelled at once when it does not start;
    /// `None`: every job is submitted once, at its submit time, and waits in the queue. Use it
    /// with a cluster that forgets ended jobs at once (`policy.min_job_age_ms` 0, as
    /// [`crate::PolicyPreset::Ssh`] configures), since a job is submitted again under its id.
    pub looks: Option<LookSchedule>,
    /// Keep every tick's time and events in [`SimResult::ticks_given`]: the exact stream the
    /// scheduler was given, to replay through a host, the shim or a test. Default off.
    pub record_ticks: bool,
    /// Deliver the events of one simulated instant one tick at a time, as simulators that
    /// handle one event per step do (RLScheduler), instead of all in one tick. Each tick at
    /// an instant takes the first event due then, in this order:
    ///
    /// 1. the `ssh` host's withdrawals (with [`SimOptions::looks`]), all in one tick;
    /// 2. ends: completions and preemption acknowledgements, by job id;
    /// 3. readiness (`policy.wait_for_ready`), by job id;
    /// 4. node failures, then 5. node repairs, by node name (with [`SimOptions::faults`]);
    /// 6. submits, by job id.
    ///
    /// Ties (one job's completion and acknowledgement) go in the order they were scheduled.
    /// What a tick causes at its own instant (a start with nothing left to run, a zero
    /// checkpoint delay) joins the events still waiting and is ordered with them. Every
    /// event still comes at its own time; only the scheduler's passes between them are new,
    /// so decisions differ where a pass sees part of an instant (a job submitted alone starts
    /// before one submitted after it at the same time with a higher priority). Default off:
    /// everything due at an instant in one tick.
    pub one_event_per_tick: bool,
    /// With [`SimOptions::one_event_per_tick`], submits come before ends at an instant (after
    /// the `ssh` host's withdrawals, the rest in the order above), as in RLScheduler's
    /// simulator, which takes a job due no later than the next end before that end. Default
    /// off: ends first. Without `one_event_per_tick` it changes nothing.
    pub submits_first: bool,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            checkpoint_delay_ms: 30_000,
            faults: None,
            looks: None,
            record_ticks: false,
            one_event_per_tick: false,
            submits_first: false,
        }
    }
}

/// Why a simulation could not run to its end.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The cluster configuration is invalid.
    #[error("invalid cluster: {0}")]
    Config(#[from] ConfigError),
    /// Two jobs share an id.
    #[error("job id {0:?} appears twice in the workload")]
    DuplicateJob(String),
    /// The look schedule of the `ssh` host is invalid.
    #[error(transparent)]
    Looks(#[from] LookError),
    /// A generated workload's parameters are invalid.
    #[error(transparent)]
    Workload(#[from] crate::workload::ParamError),
    /// The scheduler refused a tick or an event the simulator sent (a bug in either).
    #[error("at {time_ms} ms: {message}")]
    Tick {
        /// Virtual time.
        time_ms: u64,
        /// What went wrong.
        message: String,
    },
    /// The per-tick observer stopped the run.
    #[error("at {time_ms} ms: observer: {message}")]
    Observer {
        /// Virtual time.
        time_ms: u64,
        /// The observer's message.
        message: String,
    },
}

/// What an observer sees after every tick.
#[derive(Debug)]
pub struct TickView<'a> {
    /// The tick's time.
    pub now_ms: u64,
    /// The scheduler after the tick.
    pub scheduler: &'a Scheduler,
    /// The tick's outcome.
    pub outcome: &'a TickOutcome,
    /// Jobs that have ended (or were refused) so far.
    pub ended: usize,
    /// Jobs of the workload.
    pub total: usize,
}

/// Something due at an instant; ordered by time, then by when it was scheduled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Due {
    Submit(usize),
    /// Completion of the job's execution of this generation.
    Finish(usize, u32),
    /// Acknowledgement of the preemption of the job's execution of this generation.
    Stop(usize, u32),
    /// Failure of the node of this index.
    NodeDown(usize),
    /// Repair of the node of this index.
    NodeUp(usize),
    /// The job's execution of this generation becomes ready (`policy.wait_for_ready`).
    Ready(usize, u32),
    /// The `ssh` host takes back a job that did not start at its look (or collided).
    Withdraw(usize),
}

impl Due {
    /// Whether it belongs to the workload (not to the fault model).
    fn is_workload(self) -> bool {
        matches!(
            self,
            Due::Submit(_) | Due::Finish(..) | Due::Stop(..) | Due::Withdraw(_)
        )
    }
}

/// An event sent in a tick: what it came from, and whether it is a fault's second copy.
#[derive(Clone, Copy, Debug)]
struct Sent {
    due: Due,
    duplicate: bool,
}

#[derive(Default)]
struct Live {
    /// Bumped at every start and end of an execution; stale completions are ignored.
    generation: u32,
    /// The open execution: start, tasks, GPUs, cpus, nodes.
    open: Option<Execution>,
    /// Work saved so far, in ms.
    done_ms: u64,
    /// When the open execution was told to stop.
    preempted_at: Option<u64>,
    /// `ssh` host: the value of [`Simulator::releases`] at the job's last look that failed.
    failed_look: Option<u64>,
    /// `ssh` host: the job waits for its next look (counted in [`Simulator::between_looks`]).
    between_looks: bool,
    /// The number of the last take of due events ([`Simulator::takes`]) that took an end of
    /// the job's execution (0: none): one end per execution and take.
    claimed_in: u64,
}

/// A discrete-event simulation of one workload on one cluster.
///
/// ```
/// use gangway_sim::{SimJob, SimOptions, Simulator};
/// use gangway::{ClusterConfig, JobSpec};
/// let cluster: ClusterConfig = serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 1}]}"#).unwrap();
/// let job = |id: &str, submit| {
///     let mut spec = JobSpec::new(id, 100, 1);
///     spec.submit_ms = Some(submit);
///     SimJob { spec, run_ms: 60 }
/// };
/// let sim = Simulator::new(cluster, vec![job("a", 0), job("b", 10)], SimOptions::default()).unwrap();
/// let result = sim.run(|_| Ok(())).unwrap();
/// assert_eq!(result.jobs[1].first_start_ms, Some(60));
/// assert_eq!(result.jobs[1].end_ms, Some(120));
/// ```
pub struct Simulator {
    scheduler: Scheduler,
    jobs: Vec<SimJob>,
    options: SimOptions,
    names: HashMap<String, usize>,
    due: BinaryHeap<Reverse<(u64, u64, Due)>>,
    /// Entries of `due` that belong to the workload.
    workload_due: usize,
    sequence: u64,
    faults: Option<Faults>,
    node_names: Vec<String>,
    live: Vec<Live>,
    result: SimResult,
    busy_gpus_milli: u64,
    busy_cpus_milli: u64,
    ended: usize,
    /// The `ssh` host's collision draws.
    collisions: Option<Rng>,
    /// Executions closed and nodes brought up so far: a failed look is repeated only after
    /// something was released, since nothing else can make a job fit.
    releases: u64,
    /// `ssh` host: the jobs whose look failed in the last tick, to be withdrawn first thing in
    /// the next tick, at the same instant, before any other event: a job left pending past
    /// its look could be started by a pass it never looked in.
    withdrawals: Vec<usize>,
    /// The memory of each tick's batch of due events, kept for the next tick's (empty between
    /// ticks): a replay takes tens of thousands of batches.
    batch: Vec<(Event, Due)>,
    /// The memory of each tick's list of what was sent, kept for the next tick's (empty between
    /// ticks).
    sent: Vec<Sent>,
    /// How many times due events were taken ([`Simulator::take_due`]).
    takes: u64,
    /// `ssh` host: jobs waiting for their next look, not in the scheduler's queue, but waiting
    /// all the same: the samples' `pending` counts them.
    between_looks: usize,
}

impl std::fmt::Debug for Simulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulator")
            .field("jobs", &self.jobs.len())
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl Simulator {
    /// A simulation of `jobs` (each submitted at its `spec.submit_ms`, 0 when unset) on
    /// `cluster`, with the profile its `policy.plugins` names (the default one without).
    pub fn new(
        cluster: ClusterConfig,
        jobs: Vec<SimJob>,
        options: SimOptions,
    ) -> Result<Self, SimError> {
        let profile = Profile::from_config(&cluster)?;
        Self::with_profile(cluster, jobs, options, profile)
    }

    /// [`Simulator::new`] with the plug-ins of `profile`: replays a trace with a policy written
    /// in Rust.
    ///
    /// ```
    /// use gangway::policy::{builtin::ShortestFirst, Profile};
    /// use gangway_sim::{SimJob, SimOptions, Simulator};
    /// use gangway::{ClusterConfig, JobSpec};
    /// let cluster: ClusterConfig = serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 1}]}"#).unwrap();
    /// let job = |id: &str, limit, run_ms| SimJob { spec: JobSpec::new(id, limit, 1), run_ms };
    /// let jobs = vec![job("first", 100, 100), job("long", 900, 900), job("short", 300, 300)];
    /// let profile = Profile::builder().plugin(ShortestFirst).build().unwrap();
    /// let result = Simulator::with_profile(cluster, jobs, SimOptions::default(), profile)
    ///     .unwrap().run(|_| Ok(())).unwrap();
    /// let start = |i: usize| result.jobs[i].first_start_ms.unwrap();
    /// assert!(start(2) < start(1)); // short before long
    /// ```
    pub fn with_profile(
        cluster: ClusterConfig,
        jobs: Vec<SimJob>,
        options: SimOptions,
        profile: Profile,
    ) -> Result<Self, SimError> {
        let mut result = SimResult {
            capacity_gpus_milli: cluster
                .nodes
                .iter()
                .filter_map(|n| n.gpus.as_ref())
                .map(|g| u64::from(g.count) * 1000)
                .sum(),
            capacity_cpus_milli: cluster.nodes.iter().map(|n| n.cpus.milli()).sum(),
            targets: targets(&cluster),
            account_roots: account_roots(&cluster),
            ..SimResult::default()
        };
        if let Some(looks) = &options.looks {
            looks.validate()?;
        }
        let scheduler = Scheduler::with_profile(cluster, profile)?;
        let mut names = HashMap::with_capacity(jobs.len());
        let mut due = BinaryHeap::with_capacity(jobs.len());
        for (index, job) in jobs.iter().enumerate() {
            if names.insert(job.spec.id.clone(), index).is_some() {
                return Err(SimError::DuplicateJob(job.spec.id.clone()));
            }
            let submit_ms = job.spec.submit_ms.unwrap_or(0);
            due.push(Reverse((submit_ms, index as u64, Due::Submit(index))));
            result.jobs.push(JobRecord {
                id: job.spec.id.clone(),
                account: job.spec.account.clone().unwrap_or_default(),
                submit_ms,
                first_start_ms: None,
                last_start_ms: None,
                end_ms: None,
                status: JobStatus::NeverStarted,
                reserved_start_ms: None,
            });
        }
        let live = jobs.iter().map(|_| Live::default()).collect();
        let node_names = cluster_node_names(&scheduler);
        let mut simulator = Simulator {
            scheduler,
            workload_due: due.len(),
            sequence: jobs.len() as u64,
            faults: options.faults.clone().map(Faults::new),
            node_names,
            jobs,
            options,
            names,
            due,
            live,
            result,
            busy_gpus_milli: 0,
            busy_cpus_milli: 0,
            ended: 0,
            collisions: None,
            releases: 0,
            withdrawals: Vec::new(),
            batch: Vec::new(),
            sent: Vec::new(),
            takes: 0,
            between_looks: 0,
        };
        simulator.collisions = simulator
            .options
            .looks
            .as_ref()
            .filter(|l| l.collision_permille > 0)
            .map(|l| dist::seeded(l.seed));
        for node in 0..simulator.node_names.len() {
            simulator.schedule_failure(0, node);
        }
        Ok(simulator)
    }

    /// Runs until nothing is due and the scheduler asks for no wake-up, calling `observer`
    /// after every tick (an error from it stops the run: pass
    /// `|v| gangway::testkit::check_tick(v.scheduler, v.outcome)` to check every invariant).
    pub fn run(
        self,
        observer: impl FnMut(&TickView<'_>) -> Result<(), String>,
    ) -> Result<SimResult, SimError> {
        self.run_keeping_profile(observer).map(|(result, _)| result)
    }

    /// [`Simulator::run`], handing back the profile with its plug-ins' state as the run left
    /// it: read a plug-in's counters with [`Profile::plugin`].
    ///
    /// ```
    /// use gangway::policy::{Hook, PassContext, Plugin, Profile};
    /// use gangway::{ClusterConfig, Event, JobSpec};
    /// use gangway_sim::{SimJob, SimOptions, Simulator};
    ///
    /// /// Counts the passes.
    /// #[derive(Clone, Default)]
    /// struct Passes(u32);
    /// #[gangway::policy::plugin]
    /// impl Plugin for Passes {
    ///     fn name(&self) -> &str { "passes" }
    ///     fn prepare(&mut self, _: &PassContext<'_>, _: &[Event]) { self.0 += 1; }
    /// }
    /// let cluster: ClusterConfig = serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 1}]}"#).unwrap();
    /// let jobs = vec![SimJob { spec: JobSpec::new("a", 100, 1), run_ms: 100 }];
    /// let profile = Profile::builder().plugin(Passes::default()).build().unwrap();
    /// let (result, profile) = Simulator::with_profile(cluster, jobs, SimOptions::default(), profile)
    ///     .unwrap().run_keeping_profile(|_| Ok(())).unwrap();
    /// assert_eq!(u64::from(profile.plugin::<Passes>("passes").unwrap().0), result.ticks);
    /// ```
    pub fn run_keeping_profile(
        mut self,
        mut observer: impl FnMut(&TickView<'_>) -> Result<(), String>,
    ) -> Result<(SimResult, Profile), SimError> {
        let mut last_tick: Option<u64> = None;
        loop {
            // Withdrawals are due at once, at the instant of the tick that left them.
            let next_due = match last_tick {
                Some(last) if !self.withdrawals.is_empty() => Some(last),
                _ => self.due.peek().map(|Reverse((time, _, _))| *time),
            };
            let wakeup = self
                .scheduler
                .next_wakeup()
                .filter(|&w| last_tick.is_none_or(|last| w > last));
            let now_ms = match (next_due, wakeup) {
                (None, None) => break,
                (Some(a), Some(b)) => a.min(b),
                (Some(a), None) | (None, Some(a)) => a,
            };
            let (events, sent) = self.take_due(now_ms);
            if events.is_empty() && wakeup != Some(now_ms) {
                self.keep_sent_memory(sent);
                continue;
            }
            if self.options.record_ticks {
                self.result.ticks_given.push(TickInput {
                    at_ms: now_ms,
                    events: events.clone(),
                });
            }
            let outcome = self
                .scheduler
                .tick(now_ms, events)
                .map_err(|e: TickError| SimError::Tick {
                    time_ms: now_ms,
                    message: e.to_string(),
                })?;
            last_tick = Some(now_ms);
            self.result.ticks += 1;
            let refused: BTreeSet<usize> = outcome.rejected.iter().map(|r| r.index).collect();
            for (index, sent) in sent.iter().enumerate() {
                if !sent.duplicate && !refused.contains(&index) {
                    self.accepted(now_ms, sent.due);
                }
            }
            for rejection in &outcome.rejected {
                self.reject(now_ms, sent[rejection.index], &rejection.error.to_string())?;
            }
            let mut collided = BTreeSet::new();
            for decision in &outcome.decisions {
                if let Decision::Start { job, .. } = decision
                    && self.collides()
                {
                    collided.insert(job.as_str());
                    continue;
                }
                self.apply(now_ms, decision);
            }
            if self.options.looks.is_some() {
                self.withdraw_unstarted(&sent, &refused, &collided);
            }
            self.keep_sent_memory(sent);
            self.note_reservations();
            self.result.samples.push(Sample {
                time_ms: now_ms,
                busy_gpus_milli: self.busy_gpus_milli,
                busy_cpus_milli: self.busy_cpus_milli,
                pending: self.scheduler.state().pending_count() + self.between_looks,
            });
            let view = TickView {
                now_ms,
                scheduler: &self.scheduler,
                outcome: &outcome,
                ended: self.ended,
                total: self.jobs.len(),
            };
            observer(&view).map_err(|message| SimError::Observer {
                time_ms: now_ms,
                message,
            })?;
        }
        Ok((self.result, self.scheduler.into_profile()))
    }

    /// Pops everything due at `now_ms` and turns it into events (with the faults' copies, in
    /// the faults' order); stale completions, lost acknowledgements and failures after the
    /// workload's end are dropped.
    /// Keeps the memory of a tick's list of what it sent, emptied, for the next tick's.
    fn keep_sent_memory(&mut self, mut sent: Vec<Sent>) {
        sent.clear();
        self.sent = sent;
    }

    fn take_due(&mut self, now_ms: u64) -> (Vec<Event>, Vec<Sent>) {
        let mut batch = std::mem::take(&mut self.batch);
        self.takes += 1;
        // The `ssh` host's withdrawals come first, neither reordered nor sent twice by the
        // faults: they are the host's own follow-up of the last tick.
        let mut events = Vec::new();
        let mut sent = std::mem::take(&mut self.sent);
        for index in std::mem::take(&mut self.withdrawals) {
            self.workload_due -= 1;
            events.push(Event::Cancel {
                job: self.jobs[index].spec.id.clone(),
            });
            sent.push(Sent {
                due: Due::Withdraw(index),
                duplicate: false,
            });
        }
        if self.options.one_event_per_tick {
            if events.is_empty() {
                batch.extend(self.take_first_due(now_ms));
            }
        } else {
            while let Some(Reverse((time, _, due))) = self.due.peek().copied()
                && time == now_ms
            {
                // The `ssh` host: one look per tick, so that each user sees the GPUs as they
                // are.
                if self.options.looks.is_some()
                    && matches!(due, Due::Submit(_))
                    && batch.iter().any(|(_, d)| matches!(d, Due::Submit(_)))
                {
                    break;
                }
                self.due.pop();
                if let Some(event) = self.event_of(due, now_ms) {
                    batch.push((event, due));
                }
            }
        }
        let Some(faults) = self.faults.as_mut() else {
            events.reserve_exact(batch.len());
            sent.reserve_exact(batch.len());
            for (event, due) in batch.drain(..) {
                events.push(event);
                sent.push(Sent {
                    due,
                    duplicate: false,
                });
            }
            self.batch = batch;
            return (events, sent);
        };
        for index in faults.order(batch.len()) {
            let (event, due) = &batch[index];
            events.push(event.clone());
            sent.push(Sent {
                due: *due,
                duplicate: false,
            });
            if faults.duplicate() {
                self.result.faults.duplicates += 1;
                events.push(event.clone());
                sent.push(Sent {
                    due: *due,
                    duplicate: true,
                });
            }
        }
        batch.clear();
        self.batch = batch;
        (events, sent)
    }

    /// The event of `due`, taken off the queue at `now_ms`; `None` when it is dropped (a stale
    /// completion, a second end of one execution in this take, a lost acknowledgement, a
    /// failure after the workload's end, a look that would fail again).
    fn event_of(&mut self, due: Due, now_ms: u64) -> Option<Event> {
        if due.is_workload() {
            self.workload_due -= 1;
        }
        let event = match due {
            Due::Submit(index) => {
                if std::mem::take(&mut self.live[index].between_looks) {
                    self.between_looks -= 1;
                }
                if self.options.looks.is_some()
                    && self.live[index].failed_look == Some(self.releases)
                {
                    // Nothing was released since its last look failed: it fails again.
                    self.look_again(index, now_ms);
                    return None;
                }
                Event::Submit {
                    job: self.jobs[index].spec.clone(),
                }
            }
            Due::Withdraw(index) => Event::Cancel {
                job: self.jobs[index].spec.id.clone(),
            },
            Due::Finish(index, generation) | Due::Stop(index, generation) => {
                // One end per execution: a completion and a stop can fall on one instant.
                let live = &mut self.live[index];
                if live.generation != generation || live.claimed_in == self.takes {
                    return None;
                }
                live.claimed_in = self.takes;
                let job = self.jobs[index].spec.id.clone();
                if matches!(due, Due::Finish(..)) {
                    Event::Finished {
                        job,
                        outcome: FinishOutcome::Completed,
                    }
                } else if self.faults.as_mut().is_some_and(Faults::lose_stopped) {
                    self.result.faults.lost_stops += 1;
                    return None;
                } else {
                    Event::Stopped { job }
                }
            }
            Due::NodeDown(node) => {
                if self.workload_due == 0 && self.scheduler.state().running_count() == 0 {
                    return None;
                }
                self.result.faults.node_failures += 1;
                let repair = self.faults.as_ref().map_or(1, Faults::repair_ms);
                self.schedule(now_ms + repair, Due::NodeUp(node));
                Event::NodeDown {
                    node: self.node_names[node].clone(),
                }
            }
            Due::Ready(index, generation) => {
                if self.live[index].generation != generation {
                    return None;
                }
                Event::Ready {
                    job: self.jobs[index].spec.id.clone(),
                }
            }
            Due::NodeUp(node) => {
                self.releases += 1;
                self.schedule_failure(now_ms, node);
                Event::NodeUp {
                    node: self.node_names[node].clone(),
                }
            }
        };
        Some(event)
    }

    /// [`SimOptions::one_event_per_tick`]: takes the first event due at `now_ms` in the
    /// documented order, dropping what comes before it and has no event, and leaves the rest
    /// due at `now_ms`.
    fn take_first_due(&mut self, now_ms: u64) -> Option<(Event, Due)> {
        let submit_rank = if self.options.submits_first { 5 } else { 50 };
        let mut now: Vec<(u8, &str, u64, Due)> = Vec::new();
        while let Some(Reverse((time, sequence, due))) = self.due.peek().copied()
            && time == now_ms
        {
            self.due.pop();
            let (rank, name) = match due {
                Due::Withdraw(index) => (0, &self.jobs[index].spec.id),
                Due::Finish(index, _) | Due::Stop(index, _) => (10, &self.jobs[index].spec.id),
                Due::Ready(index, _) => (20, &self.jobs[index].spec.id),
                Due::NodeDown(node) => (30, &self.node_names[node]),
                Due::NodeUp(node) => (40, &self.node_names[node]),
                Due::Submit(index) => (submit_rank, &self.jobs[index].spec.id),
            };
            now.push((rank, name.as_str(), sequence, due));
        }
        now.sort_unstable();
        let order: Vec<(u64, Due)> = now.into_iter().map(|(_, _, seq, due)| (seq, due)).collect();
        let mut first = None;
        for (sequence, due) in order {
            if first.is_some() {
                self.due.push(Reverse((now_ms, sequence, due)));
            } else if let Some(event) = self.event_of(due, now_ms) {
                first = Some((event, due));
            }
        }
        first
    }

    /// Books an event the scheduler accepted: the end of an execution.
    fn accepted(&mut self, now_ms: u64, due: Due) {
        match due {
            Due::Finish(index, _) => {
                self.close(index, now_ms, ExecutionEnd::Completed);
                self.end(index, now_ms, JobStatus::Completed);
            }
            Due::Stop(index, _) => {
                self.close(index, now_ms, ExecutionEnd::Preempted);
                if !self.jobs[index].spec.requeue {
                    self.end(index, now_ms, JobStatus::Killed);
                }
            }
            Due::Withdraw(index) => self.look_again(index, now_ms),
            Due::Submit(_) | Due::NodeDown(_) | Due::NodeUp(_) | Due::Ready(..) => {}
        }
    }

    /// `ssh` host: whether a start collides with someone who took the GPUs by hand.
    fn collides(&mut self) -> bool {
        let (Some(rng), Some(looks)) = (self.collisions.as_mut(), self.options.looks.as_ref())
        else {
            return false;
        };
        dist::uniform(rng) * 1000.0 < f64::from(looks.collision_permille)
    }

    /// `ssh` host: after a look's tick, takes back every job it submitted that did not start
    /// or collided: cancels them at the same instant, first thing in the next tick.
    fn withdraw_unstarted(
        &mut self,
        sent: &[Sent],
        refused: &BTreeSet<usize>,
        collided: &BTreeSet<&str>,
    ) {
        for (position, sent) in sent.iter().enumerate() {
            let Due::Submit(index) = sent.due else {
                continue;
            };
            if sent.duplicate || refused.contains(&position) || self.live[index].open.is_some() {
                continue;
            }
            if !collided.contains(self.jobs[index].spec.id.as_str()) {
                self.live[index].failed_look = Some(self.releases);
            }
            self.workload_due += 1;
            self.withdrawals.push(index);
        }
    }

    /// `ssh` host: schedules the job's next look.
    fn look_again(&mut self, index: usize, now_ms: u64) {
        if let Some(looks) = &self.options.looks {
            let at = looks.next_look(self.jobs[index].spec.submit_ms.unwrap_or(0), now_ms);
            self.live[index].between_looks = true;
            self.between_looks += 1;
            self.schedule(at, Due::Submit(index));
        }
    }

    fn reject(&mut self, now_ms: u64, sent: Sent, message: &str) -> Result<(), SimError> {
        if sent.duplicate {
            self.result.faults.duplicates_rejected += 1;
            return Ok(());
        }
        match sent.due {
            Due::Submit(index) => {
                self.result.jobs[index].status = JobStatus::Rejected;
                self.result.rejections.push(message.to_string());
                self.ended += 1;
                Ok(())
            }
            // A `node_down` earlier in the tick took the job off its nodes.
            // The job ended earlier in the tick.
            Due::Ready(..) => Ok(()),
            Due::Finish(..) | Due::Stop(..) if self.faults.is_some() => {
                self.result.faults.late_events_rejected += 1;
                Ok(())
            }
            Due::Finish(..)
            | Due::Stop(..)
            | Due::NodeDown(_)
            | Due::NodeUp(_)
            | Due::Withdraw(_) => Err(SimError::Tick {
                time_ms: now_ms,
                message: message.to_string(),
            }),
        }
    }

    /// Records the first estimated start of each job that got a reservation before it first
    /// started.
    fn note_reservations(&mut self) {
        for (job, estimate) in self.scheduler.reservations() {
            let Some(&index) = self.names.get(job) else {
                continue;
            };
            let record = &mut self.result.jobs[index];
            if record.first_start_ms.is_none() {
                record.reserved_start_ms.get_or_insert(estimate);
            }
        }
    }

    fn apply(&mut self, now_ms: u64, decision: &Decision) {
        let Some(&index) = self.names.get(decision.job()) else {
            return;
        };
        if let Decision::Requeue {
            reason: RequeueReason::ReadyTimeout,
            ..
        }
        | Decision::Kill {
            reason: KillReason::ReadyTimeout,
            ..
        } = decision
            && let Some(open) = &self.live[index].open
        {
            let held_ms = now_ms.saturating_sub(open.start_ms);
            self.result.faults.ready_evictions += 1;
            self.result.faults.ready_lost_gpu_ms += open.gpus_milli.saturating_mul(held_ms) / 1000;
        }
        match decision {
            Decision::Start { placement, .. } => self.start(index, now_ms, placement),
            // A requeueable job whose grace expired goes back to pending, like a stopped one.
            Decision::Kill {
                reason: KillReason::GraceExpired,
                ..
            } if self.jobs[index].spec.requeue => {
                self.close(index, now_ms, ExecutionEnd::Preempted);
            }
            Decision::Kill { .. } => {
                self.close(index, now_ms, ExecutionEnd::Killed);
                self.end(index, now_ms, JobStatus::Killed);
            }
            Decision::Cancel { .. } => self.end(index, now_ms, JobStatus::Cancelled),
            Decision::Requeue { .. } => self.close(index, now_ms, ExecutionEnd::Requeued),
            Decision::Preempt { grace_ms, .. } => {
                self.result.preemptions += 1;
                let live = &mut self.live[index];
                live.preempted_at = Some(now_ms);
                let at = now_ms + self.options.checkpoint_delay_ms.min(*grace_ms);
                let due = Due::Stop(index, live.generation);
                self.schedule(at, due);
            }
            // A kind of decision newer than this simulator (`Decision` is non-exhaustive).
            other => debug_assert!(false, "a decision the simulator does not know: {other:?}"),
        }
    }

    fn start(&mut self, index: usize, now_ms: u64, placement: &[PlacementEntry]) {
        let group = &self.jobs[index].spec.groups;
        let mut tasks = 0;
        let (mut gpus_milli, mut cpus_milli) = (0u64, 0u64);
        // The distinct nodes, counted after a sort: a list searched at every entry was
        // quadratic in the job's width.
        let mut nodes: Vec<&str> = Vec::with_capacity(placement.len());
        for entry in placement {
            tasks += entry.tasks;
            if let Some(g) = group.get(entry.group) {
                gpus_milli += u64::from(entry.tasks) * g.gpus.milli();
                cpus_milli += u64::from(entry.tasks) * g.cpus.milli();
            }
            nodes.push(&entry.node);
        }
        nodes.sort_unstable();
        nodes.dedup();
        self.busy_gpus_milli += gpus_milli;
        self.busy_cpus_milli += cpus_milli;
        let live = &mut self.live[index];
        live.generation += 1;
        live.preempted_at = None;
        live.open = Some(Execution {
            job: index,
            start_ms: now_ms,
            end_ms: now_ms,
            tasks,
            gpus_milli,
            cpus_milli,
            nodes: nodes.len() as u32,
            lost_ms: 0,
            end: ExecutionEnd::Completed,
        });
        let remaining = self.jobs[index].run_ms.saturating_sub(live.done_ms).max(1);
        let generation = live.generation;
        let due = Due::Finish(index, generation);
        let record = &mut self.result.jobs[index];
        record.first_start_ms.get_or_insert(now_ms);
        record.last_start_ms = Some(now_ms);
        self.schedule(now_ms + remaining, due);
        if self
            .scheduler
            .state()
            .config()
            .policy
            .wait_for_ready
            .is_some()
        {
            let delay = self.faults.as_mut().map_or(Some(1), Faults::ready_delay);
            if let Some(delay) = delay {
                self.schedule(now_ms + delay, Due::Ready(index, generation));
            }
        }
    }

    /// Ends the open execution, if any, at `now_ms`.
    fn close(&mut self, index: usize, now_ms: u64, end: ExecutionEnd) {
        let live = &mut self.live[index];
        let Some(mut execution) = live.open.take() else {
            return;
        };
        live.generation += 1;
        execution.end_ms = now_ms;
        execution.end = end;
        match end {
            ExecutionEnd::Preempted => {
                let saved_at = live.preempted_at.unwrap_or(now_ms);
                live.done_ms += saved_at - execution.start_ms;
                execution.lost_ms = now_ms - saved_at;
            }
            ExecutionEnd::Requeued => execution.lost_ms = now_ms - execution.start_ms,
            ExecutionEnd::Completed | ExecutionEnd::Killed => {}
        }
        live.preempted_at = None;
        self.releases += 1;
        self.busy_gpus_milli -= execution.gpus_milli;
        self.busy_cpus_milli -= execution.cpus_milli;
        self.result.executions.push(execution);
    }

    fn end(&mut self, index: usize, now_ms: u64, status: JobStatus) {
        let record = &mut self.result.jobs[index];
        record.end_ms = Some(now_ms);
        record.status = status;
        self.ended += 1;
    }

    fn schedule(&mut self, at_ms: u64, due: Due) {
        if due.is_workload() {
            self.workload_due += 1;
        }
        self.due.push(Reverse((at_ms, self.sequence, due)));
        self.sequence += 1;
    }

    /// Schedules the next failure of a node that is up at `now_ms`, if nodes fail.
    fn schedule_failure(&mut self, now_ms: u64, node: usize) {
        if let Some(after) = self.faults.as_mut().and_then(Faults::time_to_failure) {
            self.schedule(now_ms.saturating_add(after), Due::NodeDown(node));
        }
    }
}

/// The names of the cluster's nodes, in configuration order.
fn cluster_node_names(scheduler: &Scheduler) -> Vec<String> {
    scheduler
        .state()
        .nodes()
        .map(|node| node.name().to_string())
        .collect()
}

fn targets(cluster: &ClusterConfig) -> Vec<(String, f64)> {
    let top: Vec<_> = cluster
        .accounts
        .iter()
        .filter(|a| a.parent.is_none())
        .collect();
    let total: f64 = top.iter().map(|a| f64::from(a.shares)).sum();
    if total <= 0.0 {
        return Vec::new();
    }
    top.iter()
        .map(|a| (a.name.clone(), f64::from(a.shares) / total))
        .collect()
}

fn account_roots(cluster: &ClusterConfig) -> BTreeMap<String, String> {
    let parents: BTreeMap<&str, &str> = cluster
        .accounts
        .iter()
        .filter_map(|a| Some((a.name.as_str(), a.parent.as_deref()?)))
        .collect();
    parents
        .keys()
        .map(|&name| {
            let mut root = name;
            // A valid share tree has no cycles; the bound guards a broken one.
            for _ in 0..parents.len() {
                match parents.get(root) {
                    Some(parent) => root = parent,
                    None => break,
                }
            }
            (name.to_string(), root.to_string())
        })
        .collect()
}
