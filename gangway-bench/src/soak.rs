//! The soak (issue 28, item 4): millions of events through [`Scheduler::tick`] or through
//! `gangway shim`, on the standard workload ([`gangway_sim::standard`]) with fair sharing
//! between queues, quotas and preemption on, recording the resident memory and the tick
//! latency at every tenth of the run. A benchmark, not a test: the figures are in
//! BENCHMARKS.md, made by `src/bin/soak.rs`.
//!
//! A [`Host`] plays the cluster's side. It starts full (one 8-GPU job per node) with `pending`
//! jobs waiting, then every tick, [`SoakOptions::tick_ms`] of simulated time apart, sends:
//!
//! - `finished` for the running jobs whose run is over (each runs 1 to 30 minutes, at most its
//!   time limit; one in twenty fails);
//! - `stopped` for the jobs a `preempt` decision of the last tick asked to stop;
//! - `cancel` of two random pending jobs, and of one running job every fifth tick;
//! - `set_priority` of ten random pending jobs;
//! - `node_down` of a random node now and then (at most 1% are down), and `node_up` of each
//!   lost node 10 minutes to 2 hours later;
//! - `submit`s of standard jobs, as many as bring the pending count back to `pending`;
//!
//! and every [`SoakOptions::reconfigure_ms`] of simulated time (12 hours by default) it
//! reconfigures the cluster, switching between two sets of priority weights. (A reconfiguration
//! releases the earmarks of preemptors waiting for their victims, as docs/design.md says: their
//! victims stop anyway and the preemptors choose again. An earlier version reconfigured twenty
//! times per run whatever its length, every five ticks in a 10,000-event run, and that turned
//! every preemption into two or more: the soak's preemption thrash.) It follows the decisions: a `start` makes the job run, a `requeue` makes
//! it pending again, a `kill` ends it, a `preempt` makes it stop at the next tick and then go
//! back to pending (standard jobs are requeueable).
//!
//! ```
//! use gangway_bench::soak::{Host, InProcess, SoakOptions};
//! let options = SoakOptions { events: 500, nodes: 16, pending: 50, ..SoakOptions::default() };
//! let mut host = Host::new(&options);
//! let mut driver = InProcess::new(host.cluster());
//! host.load(&mut driver);
//! let report = host.run(&mut driver, &options, |_| {});
//! assert!(report.events >= 500);
//! assert_eq!(report.rejected, 0);
//! ```

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use gangway::Decision;
use gangway::FinishOutcome;
use gangway::config::ReclaimWithinCohort;
use gangway::{ClusterConfig, Event, Scheduler};
use gangway_sim::standard::StandardWorkload;
use rand::{RngExt, SeedableRng, rngs::Xoshiro256PlusPlus};
use serde_json::{Value, json};

/// What a soak run does.
#[derive(Clone, Debug)]
pub struct SoakOptions {
    /// Events to send (a reconfiguration counts as one), after the cluster is loaded.
    pub events: u64,
    /// Nodes of the standard workload (8 GPUs each).
    pub nodes: usize,
    /// Pending jobs the host keeps waiting.
    pub pending: usize,
    /// Simulated time between two ticks, in milliseconds.
    pub tick_ms: u64,
    /// The seed of the workload and of the host's choices.
    pub seed: u64,
    /// Marks (memory and latency figures) in the run: at every `1 / marks` of the events.
    pub marks: u32,
    /// Fair sharing between queues (the standard cohort tree) on.
    pub fair_sharing: bool,
    /// Preemption on: every queue reclaims what it lent (`reclaim_within_cohort: any`).
    pub preemption: bool,
    /// Simulated time between two reconfigurations, in milliseconds (the first comes after
    /// this much time too; 0: never).
    pub reconfigure_ms: u64,
}

impl Default for SoakOptions {
    /// Issue 28's run: 10 million events on 1,000 nodes with 10,000 pending, ticks 26 s apart
    /// (about 100 events each: a simulated month).
    fn default() -> Self {
        SoakOptions {
            events: 10_000_000,
            nodes: 1_000,
            pending: 10_000,
            tick_ms: 26_000,
            seed: 42,
            marks: 10,
            fair_sharing: true,
            preemption: true,
            reconfigure_ms: 12 * 3_600_000,
        }
    }
}

/// The kinds of what the host sends, for the counts of [`SoakReport::sent`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum EventKind {
    /// `submit`.
    Submit,
    /// `finished` (completed or failed).
    Finished,
    /// `stopped`, after a `preempt`.
    Stopped,
    /// `cancel` of a pending or running job.
    Cancel,
    /// `set_priority`.
    SetPriority,
    /// `node_down`.
    NodeDown,
    /// `node_up`.
    NodeUp,
    /// A reconfiguration (not an event of a tick).
    Reconfigure,
}

impl EventKind {
    /// Every kind, in order.
    pub const ALL: [EventKind; 8] = [
        EventKind::Submit,
        EventKind::Finished,
        EventKind::Stopped,
        EventKind::Cancel,
        EventKind::SetPriority,
        EventKind::NodeDown,
        EventKind::NodeUp,
        EventKind::Reconfigure,
    ];

    /// The wire name (`reconfigure` for a reconfiguration).
    pub fn name(self) -> &'static str {
        match self {
            EventKind::Submit => "submit",
            EventKind::Finished => "finished",
            EventKind::Stopped => "stopped",
            EventKind::Cancel => "cancel",
            EventKind::SetPriority => "set_priority",
            EventKind::NodeDown => "node_down",
            EventKind::NodeUp => "node_up",
            EventKind::Reconfigure => "reconfigure",
        }
    }
}

/// The figures at one mark of a run.
#[derive(Clone, Debug)]
pub struct Mark {
    /// Events sent so far.
    pub events: u64,
    /// Ticks so far.
    pub ticks: u64,
    /// Simulated time, in milliseconds since the cluster was loaded.
    pub simulated_ms: u64,
    /// Resident memory of the scheduler's process (`VmRSS`), in KiB.
    pub rss_kib: u64,
    /// The median tick latency since the last mark.
    pub p50: Duration,
    /// The 99th percentile since the last mark.
    pub p99: Duration,
    /// The slowest tick since the last mark.
    pub max: Duration,
    /// Jobs pending and running (as the host knows them).
    pub pending: usize,
    /// Jobs running.
    pub running: usize,
}

/// What a run did.
#[derive(Clone, Debug, Default)]
pub struct SoakReport {
    /// Events sent (reconfigurations included).
    pub events: u64,
    /// Ticks.
    pub ticks: u64,
    /// Events rejected by the scheduler: 0 when the host's picture of the state is right.
    pub rejected: u64,
    /// The first rejections' messages (at most ten).
    pub first_rejections: Vec<String>,
    /// Events sent by kind, in [`EventKind::ALL`]'s order.
    pub sent: Vec<(EventKind, u64)>,
    /// Decisions received: starts, preemptions, requeues, kills.
    pub starts: u64,
    /// `preempt` decisions.
    pub preemptions: u64,
    /// `requeue` decisions.
    pub requeues: u64,
    /// `kill` decisions.
    pub kills: u64,
    /// Preemption thrash, measured: preemptors that issued `preempt` decisions in more than
    /// one tick (their first victims stopped, yet they had to choose again).
    pub preemptors_again: u64,
    /// Victims started again before the job they were preempted for had started.
    pub victims_back_first: u64,
    /// The most `preempt` decisions one job received in the run.
    pub most_preempted: u64,
    /// The figures at every mark.
    pub marks: Vec<Mark>,
}

impl SoakReport {
    /// Growth of the resident memory between the mark half way and the last, in percent.
    pub fn growth_second_half(&self) -> Option<f64> {
        let last = self.marks.last()?;
        let half = self.marks.get(self.marks.len() / 2 - 1)?;
        Some((last.rss_kib as f64 / half.rss_kib as f64 - 1.0) * 100.0)
    }
}

/// Where the host's events go: a scheduler in this process, or a `gangway shim` process.
pub trait Driver {
    /// One tick: the decisions and the rejected events' messages.
    fn tick(&mut self, at_ms: u64, events: Vec<Event>) -> (Vec<Decision>, Vec<String>);
    /// Replaces the configuration (it must be valid).
    fn reconfigure(&mut self, cluster: &ClusterConfig);
    /// The resident memory of the scheduler's process, in KiB (0 where unknown).
    fn rss_kib(&self) -> u64;
}

/// `VmRSS` of `/proc/<pid>/status` (`self` for this process), in KiB; 0 where unknown.
pub fn rss_kib(pid: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("VmRSS:"))
                .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// A scheduler in this process ([`Scheduler::tick`]).
pub struct InProcess {
    scheduler: Scheduler,
}

impl InProcess {
    /// A scheduler of `cluster`.
    pub fn new(cluster: ClusterConfig) -> Self {
        let scheduler = Scheduler::new(cluster).expect("the soak's cluster is valid");
        InProcess { scheduler }
    }
}

impl Driver for InProcess {
    fn tick(&mut self, at_ms: u64, events: Vec<Event>) -> (Vec<Decision>, Vec<String>) {
        let outcome = self.scheduler.tick(at_ms, events).expect("time goes on");
        let rejected = outcome.rejected.into_iter().map(|r| r.error.to_string());
        (outcome.decisions, rejected.collect())
    }

    fn reconfigure(&mut self, cluster: &ClusterConfig) {
        self.scheduler
            .reconfigure(cluster.clone())
            .expect("the soak's configurations fit");
    }

    fn rss_kib(&self) -> u64 {
        rss_kib("self")
    }
}

/// A `gangway shim` process, spoken to in JSON lines.
pub struct ShimProcess {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    line: String,
}

impl ShimProcess {
    /// Starts `binary shim` and configures it with `cluster`.
    pub fn new(binary: &std::path::Path, cluster: &ClusterConfig) -> std::io::Result<Self> {
        let mut child = Command::new(binary)
            .arg("shim")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let input = child.stdin.take().expect("piped");
        let output = BufReader::new(child.stdout.take().expect("piped"));
        let mut shim = ShimProcess {
            child,
            input,
            output,
            line: String::new(),
        };
        let answer = shim.ask(&json!({"op": "configure", "cluster": cluster}));
        assert_eq!(answer["ok"], true, "configure: {answer}");
        Ok(shim)
    }

    fn ask(&mut self, request: &Value) -> Value {
        let line = request.to_string();
        self.send(&line)
    }

    fn send(&mut self, line: &str) -> Value {
        writeln!(self.input, "{line}").expect("the shim reads");
        self.input.flush().expect("the shim reads");
        self.line.clear();
        self.output
            .read_line(&mut self.line)
            .expect("the shim answers");
        serde_json::from_str(&self.line).expect("a JSON line")
    }
}

impl Driver for ShimProcess {
    fn tick(&mut self, at_ms: u64, events: Vec<Event>) -> (Vec<Decision>, Vec<String>) {
        let answer = self.ask(&json!({"op": "tick", "at_ms": at_ms, "events": events}));
        assert_eq!(answer["ok"], true, "tick: {answer}");
        let decisions = serde_json::from_value(answer["decisions"].clone()).expect("decisions");
        let rejected = answer["rejected"]
            .as_array()
            .map(|r| r.iter().map(|r| r["error"].to_string()).collect())
            .unwrap_or_default();
        (decisions, rejected)
    }

    fn reconfigure(&mut self, cluster: &ClusterConfig) {
        let answer = self.ask(&json!({"op": "reconfigure", "cluster": cluster}));
        assert_eq!(answer["ok"], true, "reconfigure: {answer}");
    }

    fn rss_kib(&self) -> u64 {
        rss_kib(&self.child.id().to_string())
    }
}

impl Drop for ShimProcess {
    fn drop(&mut self) {
        // Closing its input ends the shim.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A job the host knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Known {
    /// Pending, at this position of `Host::pending`.
    Pending(usize),
    /// Running, to end at this time (the generation tells a stale end from the current one).
    Running { ends_ms: u64, generation: u64 },
    /// Told to stop; `stopped` goes with the next tick.
    Stopping,
}

/// The host of a soak run: what it knows of the cluster, and what it sends next.
pub struct Host {
    workload: StandardWorkload,
    cluster: ClusterConfig,
    other: ClusterConfig,
    rng: Xoshiro256PlusPlus,
    now: u64,
    jobs: HashMap<String, (Known, u64)>,
    pending: Vec<String>,
    running: Vec<String>,
    ends: BinaryHeap<Reverse<(u64, u64, String)>>,
    stopping: Vec<String>,
    nodes: Vec<String>,
    down: BinaryHeap<Reverse<(u64, usize)>>,
    is_down: Vec<bool>,
    generation: u64,
    target_pending: usize,
    sent: [u64; EventKind::ALL.len()],
    /// Preemptors not started yet: the tick they last preempted in, and whether they had
    /// preempted in an earlier tick.
    preemptors: BTreeMap<String, (u64, bool)>,
    /// Victims not started again: their preemptor.
    victims: BTreeMap<String, String>,
    /// `preempt` decisions per job.
    preempted: HashMap<String, u64>,
}

/// The shortest and longest run of a job, in milliseconds.
const RUN_MS: (u64, u64) = (60_000, 1_800_000);

impl Host {
    /// The host of `options`' run, before loading.
    pub fn new(options: &SoakOptions) -> Self {
        let workload = StandardWorkload::new(options.nodes, options.seed);
        let mut cluster = workload.cluster();
        cluster.policy.fair_sharing.enabled = options.fair_sharing;
        cluster.policy.preemption.enabled = options.preemption;
        if options.preemption {
            for queue in &mut cluster.queues {
                queue.preemption.reclaim_within_cohort = ReclaimWithinCohort::Any;
            }
        }
        let mut other = cluster.clone();
        other.policy.priority.weights.age = 4_000;
        other.policy.priority.weights.fairshare = 2_000;
        let nodes: Vec<String> = cluster.nodes.iter().map(|n| n.name.clone()).collect();
        Host {
            workload,
            cluster,
            other,
            rng: Xoshiro256PlusPlus::seed_from_u64(options.seed ^ 0x50a4),
            now: 1_000,
            jobs: HashMap::new(),
            pending: Vec::new(),
            running: Vec::new(),
            ends: BinaryHeap::new(),
            stopping: Vec::new(),
            is_down: vec![false; nodes.len()],
            nodes,
            down: BinaryHeap::new(),
            generation: 0,
            target_pending: options.pending,
            sent: [0; EventKind::ALL.len()],
            preemptors: BTreeMap::new(),
            victims: BTreeMap::new(),
            preempted: HashMap::new(),
        }
    }

    /// The configuration the run starts with (fair sharing and preemption on).
    pub fn cluster(&self) -> ClusterConfig {
        self.cluster.clone()
    }

    /// Loads the cluster through `driver`: filled at 0, the pending jobs submitted at 1 s (as
    /// [`StandardWorkload::load`]). Not part of the measured run.
    pub fn load(&mut self, driver: &mut dyn Driver) {
        let fill = self.workload.fill();
        let pending = self.workload.pending(self.target_pending);
        let mut ignored = SoakReport::default();
        for (at, events) in [(0, fill), (1_000, pending)] {
            for event in &events {
                if let Event::Submit { job } = event {
                    self.add_pending(job.id.clone(), job.time_limit_ms);
                }
            }
            self.now = at;
            let (decisions, rejected) = driver.tick(at, events);
            assert!(rejected.is_empty(), "loading: {rejected:?}");
            self.record(&decisions, &mut ignored);
        }
    }

    fn add_pending(&mut self, job: String, limit_ms: u64) {
        self.jobs
            .insert(job.clone(), (Known::Pending(self.pending.len()), limit_ms));
        self.pending.push(job);
    }

    /// Takes `job` out of the pending list (swapping the last into its place).
    fn take_pending(&mut self, job: &str) {
        let Some((Known::Pending(at), _)) = self.jobs.get(job).copied() else {
            return;
        };
        self.pending.swap_remove(at);
        if let Some(moved) = self.pending.get(at)
            && let Some(entry) = self.jobs.get_mut(moved)
        {
            entry.0 = Known::Pending(at);
        }
    }

    /// Forgets an ended job (the preemption measures' entries too, so that the host's memory
    /// stays bounded).
    fn forget(&mut self, job: &str) {
        self.jobs.remove(job);
        self.preempted.remove(job);
        self.victims.remove(job);
        if self.preemptors.remove(job).is_some() {
            self.victims.retain(|_, p| p != job);
        }
    }

    fn take_running(&mut self, job: &str) {
        if let Some(at) = self.running.iter().position(|r| r == job) {
            self.running.swap_remove(at);
        }
    }

    fn count(&mut self, kind: EventKind, n: usize) {
        self.sent[kind as usize] += n as u64;
    }

    /// The events of the next tick, and its time.
    fn next_tick(&mut self, tick_ms: u64) -> (u64, Vec<Event>) {
        self.now += tick_ms;
        let mut events = Vec::new();
        // Runs that are over.
        while let Some(Reverse((ends, generation, _))) = self.ends.peek() {
            if *ends > self.now {
                break;
            }
            let (ends, generation, job) = (*ends, *generation, self.ends.pop().unwrap().0.2);
            if self.jobs.get(&job).map(|j| j.0)
                != Some(Known::Running {
                    ends_ms: ends,
                    generation,
                })
            {
                continue;
            }
            let outcome = if self.rng.random_range(0..20) == 0 {
                FinishOutcome::Failed
            } else {
                FinishOutcome::Completed
            };
            self.take_running(&job);
            self.forget(&job);
            events.push(Event::Finished { job, outcome });
            self.count(EventKind::Finished, 1);
        }
        // Preempted jobs have stopped: pending again.
        for job in std::mem::take(&mut self.stopping) {
            if self.jobs.get(&job).map(|j| j.0) == Some(Known::Stopping) {
                let limit = self.jobs[&job].1;
                self.add_pending(job.clone(), limit);
                events.push(Event::Stopped { job });
                self.count(EventKind::Stopped, 1);
            }
        }
        // Cancels: two pending, and a running one every fifth tick.
        for _ in 0..2 {
            if self.pending.is_empty() {
                break;
            }
            let job = self.pending[self.rng.random_range(0..self.pending.len())].clone();
            self.take_pending(&job);
            self.forget(&job);
            events.push(Event::Cancel { job });
            self.count(EventKind::Cancel, 1);
        }
        if self.rng.random_range(0..5) == 0 && !self.running.is_empty() {
            let job = self.running[self.rng.random_range(0..self.running.len())].clone();
            self.take_running(&job);
            self.forget(&job);
            events.push(Event::Cancel { job });
            self.count(EventKind::Cancel, 1);
        }
        // Priorities.
        for _ in 0..10.min(self.pending.len()) {
            let job = self.pending[self.rng.random_range(0..self.pending.len())].clone();
            let priority = self.rng.random_range(-100..=100);
            events.push(Event::SetPriority { job, priority });
            self.count(EventKind::SetPriority, 1);
        }
        // Lost nodes come back; now and then one is lost (at most 1% down).
        while let Some(Reverse((up_at, node))) = self.down.peek().copied() {
            if up_at > self.now {
                break;
            }
            self.down.pop();
            self.is_down[node] = false;
            events.push(Event::NodeUp {
                node: self.nodes[node].clone(),
            });
            self.count(EventKind::NodeUp, 1);
        }
        if self.rng.random_range(0..50) == 0 && self.down.len() < self.nodes.len().div_ceil(100) {
            let node = self.rng.random_range(0..self.nodes.len());
            if !self.is_down[node] {
                self.is_down[node] = true;
                let up_at = self.now + self.rng.random_range(600_000..=7_200_000);
                self.down.push(Reverse((up_at, node)));
                events.push(Event::NodeDown {
                    node: self.nodes[node].clone(),
                });
                self.count(EventKind::NodeDown, 1);
            }
        }
        // New jobs, as many as bring the pending count back.
        let missing = self.target_pending.saturating_sub(self.pending.len());
        let submits = self.workload.pending(missing);
        for event in &submits {
            if let Event::Submit { job } = event {
                self.add_pending(job.id.clone(), job.time_limit_ms);
            }
        }
        self.count(EventKind::Submit, submits.len());
        events.extend(submits);
        (self.now, events)
    }

    /// Takes in a tick's decisions.
    fn record(&mut self, decisions: &[Decision], report: &mut SoakReport) {
        for decision in decisions {
            match decision {
                Decision::Start { job, .. } => {
                    report.starts += 1;
                    if let Some(preemptor) = self.victims.remove(job)
                        && self.preemptors.contains_key(&preemptor)
                    {
                        report.victims_back_first += 1;
                    }
                    if let Some((_, again)) = self.preemptors.remove(job) {
                        report.preemptors_again += u64::from(again);
                        self.victims.retain(|_, p| p != job);
                    }
                    let Some(&(_, limit)) = self.jobs.get(job) else {
                        continue;
                    };
                    self.take_pending(job);
                    let run = self.rng.random_range(RUN_MS.0..=RUN_MS.1).min(limit);
                    self.generation += 1;
                    let known = Known::Running {
                        ends_ms: self.now + run,
                        generation: self.generation,
                    };
                    self.jobs.insert(job.clone(), (known, limit));
                    self.ends
                        .push(Reverse((self.now + run, self.generation, job.clone())));
                    self.running.push(job.clone());
                }
                Decision::Requeue { job, .. } => {
                    report.requeues += 1;
                    if let Some(&(_, limit)) = self.jobs.get(job) {
                        self.take_running(job);
                        self.add_pending(job.clone(), limit);
                    }
                }
                Decision::Kill { job, .. } | Decision::Cancel { job, .. } => {
                    if matches!(decision, Decision::Kill { .. }) {
                        report.kills += 1;
                    }
                    self.take_pending(job);
                    self.take_running(job);
                    self.forget(job);
                }
                Decision::Preempt { job, for_job, .. } => {
                    report.preemptions += 1;
                    let count = self.preempted.entry(job.clone()).or_insert(0);
                    *count += 1;
                    report.most_preempted = report.most_preempted.max(*count);
                    let now = self.now;
                    let entry = self
                        .preemptors
                        .entry(for_job.clone())
                        .or_insert((now, false));
                    if entry.0 != now {
                        *entry = (now, true);
                    }
                    self.victims.insert(job.clone(), for_job.clone());
                    if let Some(entry) = self.jobs.get_mut(job)
                        && matches!(entry.0, Known::Running { .. })
                    {
                        entry.0 = Known::Stopping;
                        self.take_running(job);
                        self.stopping.push(job.clone());
                    }
                }
                // A kind of decision newer than this host (`Decision` is non-exhaustive).
                other => panic!("a decision the soak host does not know: {other:?}"),
            }
        }
    }

    /// Runs the soak through `driver` (loaded with [`Host::load`]); `on_mark` sees each
    /// mark as it is taken.
    pub fn run(
        &mut self,
        driver: &mut dyn Driver,
        options: &SoakOptions,
        mut on_mark: impl FnMut(&Mark),
    ) -> SoakReport {
        let mut report = SoakReport::default();
        let marks = u64::from(options.marks.max(1));
        let mut next_reconfigure = match options.reconfigure_ms {
            0 => u64::MAX,
            every => self.now.saturating_add(every),
        };
        let mut latencies: Vec<Duration> = Vec::new();
        let mut next_mark = 1;
        let start_ms = self.now;
        let mut alternate = false;
        while report.events < options.events {
            let (at, events) = self.next_tick(options.tick_ms);
            report.events += events.len() as u64;
            let started = Instant::now();
            let (decisions, rejected) = driver.tick(at, events);
            latencies.push(started.elapsed());
            report.ticks += 1;
            report.rejected += rejected.len() as u64;
            for message in rejected {
                if report.first_rejections.len() < 10 {
                    report
                        .first_rejections
                        .push(format!("at {at} ms: {message}"));
                }
            }
            self.record(&decisions, &mut report);
            if self.now >= next_reconfigure {
                alternate = !alternate;
                driver.reconfigure(if alternate {
                    &self.other
                } else {
                    &self.cluster
                });
                report.events += 1;
                self.count(EventKind::Reconfigure, 1);
                next_reconfigure = next_reconfigure.saturating_add(options.reconfigure_ms);
            }
            while next_mark <= marks && report.events * marks >= options.events * next_mark {
                latencies.sort_unstable();
                let at = |q: f64| {
                    latencies
                        .get(((latencies.len() as f64 - 1.0) * q).round() as usize)
                        .copied()
                        .unwrap_or_default()
                };
                let mark = Mark {
                    events: report.events,
                    ticks: report.ticks,
                    simulated_ms: self.now - start_ms,
                    rss_kib: driver.rss_kib(),
                    p50: at(0.5),
                    p99: at(0.99),
                    max: latencies.last().copied().unwrap_or_default(),
                    pending: self.pending.len(),
                    running: self.running.len(),
                };
                on_mark(&mark);
                report.marks.push(mark);
                latencies.clear();
                next_mark += 1;
            }
        }
        report.sent = EventKind::ALL
            .iter()
            .map(|&k| (k, self.sent[k as usize]))
            .collect();
        report
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The host sends every kind of event issue 28 names, and its picture of the state is
    /// right: the scheduler rejects none of them, and the host's running count is the
    /// scheduler's.
    #[test]
    fn a_short_soak_sends_every_kind_and_none_is_rejected() {
        let options = SoakOptions {
            events: 4_000,
            nodes: 16,
            pending: 100,
            tick_ms: 20_000,
            reconfigure_ms: 400_000,
            ..SoakOptions::default()
        };
        let mut host = Host::new(&options);
        let mut driver = InProcess::new(host.cluster());
        host.load(&mut driver);
        let report = host.run(&mut driver, &options, |_| {});
        for (kind, count) in &report.sent {
            assert!(*count > 0, "no {} sent: {:?}", kind.name(), report.sent);
        }
        assert_eq!(report.rejected, 0, "{:?}", report.first_rejections);
        assert!(report.preemptions > 0 && report.requeues > 0, "{report:?}");
        assert_eq!(report.marks.len(), 10);
        let state = driver.scheduler.state();
        assert_eq!(
            state.running_count(),
            host.running.len() + host.stopping.len()
        );
    }

    /// Issue 28, item 4: the soak's preemption thrash came from reconfiguring every few ticks
    /// (each reconfiguration releases the waiting preemptors' earmarks, docs/design.md). Without
    /// reconfigurations no preemptor has to choose victims twice; with one every other tick,
    /// preemptors do, and victims come back before them.
    #[test]
    fn preemptors_choose_once_unless_a_reconfiguration_releases_them() {
        let run = |reconfigure_ms: u64| {
            let options = SoakOptions {
                events: 6_000,
                nodes: 16,
                pending: 100,
                tick_ms: 20_000,
                reconfigure_ms,
                ..SoakOptions::default()
            };
            let mut host = Host::new(&options);
            let mut driver = InProcess::new(host.cluster());
            host.load(&mut driver);
            host.run(&mut driver, &options, |_| {})
        };
        let calm = run(0);
        assert!(calm.preemptions > 50, "{calm:?}");
        assert_eq!(calm.preemptors_again, 0, "{calm:?}");
        let churned = run(40_000);
        assert!(churned.preemptors_again > 0, "{churned:?}");
    }
}
