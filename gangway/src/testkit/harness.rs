//! The stream harness: ticks a scheduler with any [`Profile`] through an event stream, runs
//! the oracle (with the cross-tick [`Checker`]) after every tick, and reports a violation as a
//! [`Failure`] that prints the stream up to the failing tick as request lines (docs/protocol.md)
//! (`configure`, then one `tick` per step), ready to replay with `gangway shim`.
//!
//! With proptest, a failing case shrinks to a minimal stream; [`check_profile`] does the whole
//! loop, and also checks that no plug-in faults (unless allowed), that the profile decides
//! deterministically, that a snapshot restored half-way (plug-in state included) continues
//! exactly, and, if asked, a bound on preemptions per job and hour. Its runs are seeded
//! ([`crate::testkit::seed`]), and a failure prints its seed and a regression test to paste
//! ([`crate::testkit::replay`]).
//!
//! ```
//! use gangway::policy::Profile;
//! use gangway::testkit::harness::{Stream, StreamEvent, TickStep, run_stream};
//! use gangway::{ClusterConfig, Event, JobSpec};
//! let config: ClusterConfig = serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 2}]}"#).unwrap();
//! let stream = Stream { ticks: vec![
//!     TickStep { at_ms: 0, events: vec![StreamEvent::Raw(Event::Submit { job: JobSpec::new("a", 1000, 1) })] },
//!     TickStep { at_ms: 500, events: vec![StreamEvent::FinishRunning { pick: 0, failed: false }] },
//! ] };
//! run_stream(&config, Profile::default_for_config(), &stream).unwrap();
//! ```

use std::fmt;

use proptest::strategy::Strategy;
use proptest::test_runner::{Config, TestCaseError, TestError, TestRunner};
use serde::Serialize;
use serde_json::json;

use crate::config::ClusterConfig;
use crate::decision::TickOutcome;
use crate::event::Event;
use crate::model::job::FinishOutcome;
use crate::policy::{FaultKind, PluginFault, Profile};
use crate::scheduler::Scheduler;
use crate::state::JobState;
use crate::testkit::checker::Checker;
use crate::testkit::families::Families;
use crate::testkit::replay::regression_test;
use crate::testkit::seed::{BadSeed, SEED_VARIABLE, rng, run_seed};

/// A generated input: ticks in time order.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Stream {
    /// The ticks.
    pub ticks: Vec<TickStep>,
}

impl Stream {
    /// The stream of `steps`, each the time since the tick before (since 0 for the first)
    /// and the tick's events.
    ///
    /// ```
    /// use gangway::testkit::harness::Stream;
    /// let stream = Stream::from_gaps(vec![(5, vec![]), (0, vec![]), (10, vec![])]);
    /// let times: Vec<u64> = stream.ticks.iter().map(|t| t.at_ms).collect();
    /// assert_eq!(times, [5, 5, 15]);
    /// ```
    pub fn from_gaps(steps: Vec<(u64, Vec<StreamEvent>)>) -> Stream {
        let mut at_ms = 0u64;
        let ticks = steps
            .into_iter()
            .map(|(gap, events)| {
                at_ms = at_ms.saturating_add(gap);
                TickStep { at_ms, events }
            })
            .collect();
        Stream { ticks }
    }

    /// The number of stream events (each one step of the volume count).
    ///
    /// ```
    /// assert_eq!(gangway::testkit::harness::Stream::default().events(), 0);
    /// ```
    pub fn events(&self) -> usize {
        self.ticks.iter().map(|t| t.events.len()).sum()
    }
}

/// One tick of a stream.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TickStep {
    /// The tick's time; never earlier than the previous step's.
    pub at_ms: u64,
    /// Its events, in order.
    pub events: Vec<StreamEvent>,
}

/// A stream element: an event as is, or a host reaction resolved against the scheduler's state
/// when the tick is sent.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[allow(clippy::large_enum_variant)] // Mostly `Raw`: boxing would only add allocations.
pub enum StreamEvent {
    /// This event.
    Raw(Event),
    /// `finished` for the running job at index `pick` modulo the running count (none running:
    /// nothing is sent).
    FinishRunning {
        /// Which running job, in id order.
        pick: u8,
        /// Outcome `failed` instead of `completed`.
        failed: bool,
    },
    /// `stopped` for the job being preempted at index `pick` modulo their count.
    AckPreempted {
        /// Which preempted job, in id order.
        pick: u8,
    },
}

/// An invariant violated (or a refused tick) while running a stream.
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    /// The tick at which it happened.
    pub at_ms: u64,
    /// What was violated.
    pub message: String,
    /// The `configure` line and the `tick` lines sent up to and including the failing one
    /// (from [`check_stream`] and [`check_profile`]: then the stream's later ticks, empty, so
    /// that a replay restores its snapshot at the same tick).
    pub lines: Vec<String>,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "at {} ms: {}", self.at_ms, self.message)?;
        writeln!(f, "replay (docs/protocol.md request lines):")?;
        for line in &self.lines {
            writeln!(f, "{line}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Failure {}

/// Picks the `pick`-th (modulo) running job that is (or is not) being preempted.
fn pick_running(scheduler: &Scheduler, pick: u8, preempting: bool) -> Option<String> {
    let state = scheduler.state();
    let names: Vec<&str> = state
        .running
        .iter()
        .filter_map(|&id| {
            let job = state.job(id)?;
            match &job.state {
                JobState::Running(run) if run.preemption.is_some() == preempting => {
                    Some(job.spec.id.as_str())
                }
                _ => None,
            }
        })
        .collect();
    if names.is_empty() {
        return None;
    }
    Some(names[usize::from(pick) % names.len()].to_string())
}

/// Turns stream elements into the events to send now, resolving host reactions against the
/// scheduler's current state (a reaction with nothing to react to sends nothing).
///
/// ```
/// use gangway::testkit::harness::{StreamEvent, resolve};
/// use gangway::{ClusterConfig, Scheduler};
/// let config: ClusterConfig = serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 2}]}"#).unwrap();
/// let s = Scheduler::new(config).unwrap();
/// assert!(resolve(&s, &[StreamEvent::FinishRunning { pick: 3, failed: false }]).is_empty());
/// ```
pub fn resolve(scheduler: &Scheduler, events: &[StreamEvent]) -> Vec<Event> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Raw(event) => Some(event.clone()),
            StreamEvent::FinishRunning { pick, failed } => {
                let job = pick_running(scheduler, *pick, false)?;
                let outcome = if *failed {
                    FinishOutcome::Failed
                } else {
                    FinishOutcome::Completed
                };
                Some(Event::Finished { job, outcome })
            }
            StreamEvent::AckPreempted { pick } => Some(Event::Stopped {
                job: pick_running(scheduler, *pick, true)?,
            }),
        })
        .collect()
}

/// Ticks a fresh scheduler for `config` with `profile` through `stream`, running the oracle
/// and the cross-tick checks after every tick.
pub fn run_stream(
    config: &ClusterConfig,
    profile: Profile,
    stream: &Stream,
) -> Result<(), Failure> {
    run_stream_observed(config, profile, stream, |_, _, _| {})
}

/// [`run_stream`], also showing `observe` the scheduler, the events sent and the outcome after
/// every tick that passed the checks (to count what a run exercised).
///
/// ```
/// use gangway::policy::Profile;
/// use gangway::testkit::harness::{Stream, run_stream_observed};
/// let config: gangway::ClusterConfig =
///     serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 2}]}"#).unwrap();
/// let mut ticks = 0;
/// run_stream_observed(&config, Profile::default_for_config(), &Stream::default(),
///     |_, _, _| ticks += 1).unwrap();
/// assert_eq!(ticks, 0);
/// ```
pub fn run_stream_observed(
    config: &ClusterConfig,
    profile: Profile,
    stream: &Stream,
    mut observe: impl FnMut(&Scheduler, &[Event], &TickOutcome),
) -> Result<(), Failure> {
    let mut run = Run::start(config, profile)?;
    for step in &stream.ticks {
        let (events, outcome) = run.step(step)?;
        observe(&run.scheduler, &events, &outcome);
    }
    Ok(())
}

/// A stream being run: the scheduler, the checker and the request lines so far.
struct Run {
    scheduler: Scheduler,
    checker: Checker,
    lines: Vec<String>,
}

impl Run {
    fn start(config: &ClusterConfig, profile: Profile) -> Result<Run, Failure> {
        let lines = vec![json!({"op": "configure", "cluster": config}).to_string()];
        let scheduler = Scheduler::with_profile(config.clone(), profile).map_err(|e| Failure {
            at_ms: 0,
            message: format!("configuration refused: {e}"),
            lines: lines.clone(),
        })?;
        Ok(Run {
            scheduler,
            checker: Checker::default(),
            lines,
        })
    }

    fn fail(&self, at_ms: u64, message: String) -> Failure {
        Failure {
            at_ms,
            message,
            lines: self.lines.clone(),
        }
    }

    /// Sends one step, checked; the events sent and the outcome.
    fn step(&mut self, step: &TickStep) -> Result<(Vec<Event>, TickOutcome), Failure> {
        let events = resolve(&self.scheduler, &step.events);
        let line = json!({"op": "tick", "at_ms": step.at_ms, "events": events});
        self.lines.push(line.to_string());
        let outcome = self
            .scheduler
            .tick(step.at_ms, events.clone())
            .map_err(|e| self.fail(step.at_ms, format!("tick refused: {e}")))?;
        self.checker
            .check(&self.scheduler, &events, &outcome)
            .map_err(|m| self.fail(step.at_ms, m))?;
        Ok((events, outcome))
    }
}

/// A plug-in fault that [`check_profile`] lets pass: of one plug-in (or any), of one kind (or
/// any).
///
/// ```
/// use gangway::policy::{FaultKind, Hook, PluginFault};
/// use gangway::testkit::harness::AllowedFault;
/// // As a tick reports it (`TickOutcome::plugin_faults`, or the shim's JSON).
/// let fault: PluginFault = serde_json::from_str(r#"{"plugin": "roomy", "hook": "node_score",
///     "kind": "non_finite", "message": "scored NaN for job a group 0 on node n0"}"#).unwrap();
/// assert_eq!((fault.hook, fault.kind), (Hook::NodeScore, FaultKind::NonFinite));
/// assert!(AllowedFault::of("roomy").allows(&fault));
/// assert!(!AllowedFault::of("roomy").kind(FaultKind::Panic).allows(&fault));
/// assert!(AllowedFault::any().allows(&fault));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AllowedFault {
    /// The plug-in's name; `None`: any plug-in.
    pub plugin: Option<String>,
    /// The kind; `None`: any kind.
    pub kind: Option<FaultKind>,
}

impl AllowedFault {
    /// Any fault of the plug-in named `plugin`.
    pub fn of(plugin: impl Into<String>) -> Self {
        AllowedFault {
            plugin: Some(plugin.into()),
            kind: None,
        }
    }

    /// Any fault of any plug-in (for profiles that misbehave on purpose, such as
    /// [`crate::testkit::adversarial`]'s).
    pub fn any() -> Self {
        AllowedFault::default()
    }

    /// Only faults of this kind.
    pub fn kind(mut self, kind: FaultKind) -> Self {
        self.kind = Some(kind);
        self
    }

    /// Whether `fault` is allowed.
    pub fn allows(&self, fault: &PluginFault) -> bool {
        self.plugin.as_ref().is_none_or(|p| *p == fault.plugin)
            && self.kind.is_none_or(|k| k == fault.kind)
    }
}

/// What [`check_profile`] checks besides the invariants, and on what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileChecks {
    /// Random clusters and streams to run.
    pub cases: u32,
    /// The most ticks per stream.
    pub max_ticks: usize,
    /// The most times one job may be told to stop within any hour of stream time; `None`: no
    /// bound is checked.
    pub preemptions_per_hour: Option<u32>,
    /// The plug-in faults (`TickOutcome::plugin_faults`) that do not fail the check; any other
    /// fails it. Empty by default: a plug-in that panics, or scores NaN, ±∞ or so that its
    /// tier's sum overflows, fails.
    pub allowed_faults: Vec<AllowedFault>,
    /// The stream families [`check_profile`] draws from (all by default; [`check_profile_on`]
    /// takes its own strategy instead).
    pub families: Families,
    /// The seed of the random cases; `None`: `GANGWAY_TESTKIT_SEED` if set (a number, or
    /// `random`), else [`crate::testkit::seed::DEFAULT_SEED`], so a run is deterministic unless
    /// asked otherwise ([`crate::testkit::seed`]).
    pub seed: Option<u64>,
}

impl ProfileChecks {
    /// `cases` streams of up to `max_ticks` ticks from every family, no preemption bound, no
    /// fault allowed, the default seed.
    ///
    /// ```
    /// use gangway::testkit::harness::{AllowedFault, ProfileChecks};
    /// let checks = ProfileChecks::new(100, 40).allow(AllowedFault::of("my_veto")).seed(7);
    /// assert_eq!((checks.cases, checks.seed, checks.allowed_faults.len()), (100, Some(7), 1));
    /// ```
    pub fn new(cases: u32, max_ticks: usize) -> Self {
        ProfileChecks {
            cases,
            max_ticks,
            preemptions_per_hour: None,
            allowed_faults: Vec::new(),
            families: Families::default(),
            seed: None,
        }
    }

    /// Also checks that no job is told to stop more than `bound` times in any hour.
    pub fn preemptions_per_hour(mut self, bound: u32) -> Self {
        self.preemptions_per_hour = Some(bound);
        self
    }

    /// Lets faults matching `allowed` pass.
    pub fn allow(mut self, allowed: AllowedFault) -> Self {
        self.allowed_faults.push(allowed);
        self
    }

    /// Draws from these families only.
    pub fn families(mut self, families: Families) -> Self {
        self.families = families;
        self
    }

    /// Runs with this seed, whatever the environment says.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// The first fault of `faults` that no allowance lets pass.
    fn forbidden<'a>(&self, faults: &'a [PluginFault]) -> Option<&'a PluginFault> {
        faults
            .iter()
            .find(|fault| !self.allowed_faults.iter().any(|a| a.allows(fault)))
    }
}

/// Why [`check_profile`] failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CheckError {
    /// A case failed a check; `failure` is the minimal stream proptest shrank it to.
    #[error("{}", failed_text(*.seed, failure))]
    Failed {
        /// The run's seed.
        seed: u64,
        /// The minimal failing stream.
        failure: Failure,
    },
    /// proptest gave up (too many rejected cases, say).
    #[error("aborted (seed {seed}): {reason}")]
    Aborted {
        /// The run's seed.
        seed: u64,
        /// proptest's reason.
        reason: String,
    },
    /// `GANGWAY_TESTKIT_SEED` is neither a number nor `random`.
    #[error(transparent)]
    BadSeed(#[from] BadSeed),
    /// [`ProfileChecks::families`] selects no family.
    #[error("no stream family is selected")]
    NoFamily,
}

/// A failure's text: the seed and how to rerun it, what failed, and a regression test to
/// paste, whose request lines also replay with `gangway shim` (docs/protocol.md).
fn failed_text(seed: u64, failure: &Failure) -> String {
    format!(
        "check_profile failed with seed {seed} (rerun: {SEED_VARIABLE}={seed}; explore: \
         {SEED_VARIABLE}=random)\nminimal failing stream: at {} ms: {}\nregression test (write \
         make_profile; its lines replay with `gangway shim` too):\n{}",
        failure.at_ms,
        failure.message,
        regression_test(&failure.lines)
    )
}

/// Property-checks a profile on random clusters and streams, each run with fresh profiles
/// from `make`:
/// - the invariant oracle and the cross-tick checks after every tick;
/// - no plug-in fault (a panic, a non-finite score, a tier's sum overflowed) beyond those
///   [`ProfileChecks::allowed_faults`] lets pass;
/// - determinism: a second run decides exactly as the first;
/// - snapshot and restore: a scheduler restored from a snapshot half-way, with a fresh
///   profile loading the plug-ins' saved states, decides the rest exactly as the original
///   (its faults may differ: the engine's memos, which a snapshot does not keep, skip calls);
/// - with `preemptions_per_hour`, no job is told to stop more often than that in any hour.
///
/// The streams come from [`ProfileChecks::families`]: the general ones and, by default, the
/// contention-rich ones (long queues, preemptors, vetoes that matter;
/// [`crate::testkit::families`]). The run is seeded ([`crate::testkit::seed`]): the same
/// verdict every time unless `GANGWAY_TESTKIT_SEED` asks for other cases. On a violation,
/// proptest shrinks to a minimal stream; the error holds it as a [`Failure`] with the seed,
/// and prints a regression test to paste.
///
/// ```
/// use gangway::policy::Profile;
/// use gangway::testkit::harness::{ProfileChecks, check_profile};
/// check_profile(Profile::default_for_config, ProfileChecks::new(4, 10)).unwrap();
/// ```
pub fn check_profile(make: impl Fn() -> Profile, checks: ProfileChecks) -> Result<(), CheckError> {
    let scenarios = checks
        .families
        .strategy(checks.max_ticks)
        .ok_or(CheckError::NoFamily)?;
    check_profile_on(scenarios, make, checks)
}

/// [`check_profile`] on the clusters and streams `scenarios` draws instead of the families':
/// for a profile that needs a setting of the cluster, such as order-based preemption.
/// `checks.max_ticks` is then up to `scenarios`, and `checks.families` is not read.
///
/// ```
/// use gangway::policy::{builtin::Las, Profile};
/// use gangway::testkit::harness::{ProfileChecks, check_profile_on};
/// use gangway::testkit::strategies::scenario;
/// use proptest::strategy::Strategy;
/// let order_based = scenario(10).prop_map(|(mut cluster, stream)| {
///     cluster.policy.preemption.enabled = true;
///     cluster.policy.preemption.order_based = true;
///     (cluster, stream)
/// });
/// let las = || Profile::builder().plugin(Las::default()).build().unwrap();
/// check_profile_on(order_based, las, ProfileChecks::new(4, 10)).unwrap();
/// ```
pub fn check_profile_on(
    scenarios: impl Strategy<Value = (ClusterConfig, Stream)>,
    make: impl Fn() -> Profile,
    checks: ProfileChecks,
) -> Result<(), CheckError> {
    let seed = run_seed(checks.seed)?;
    let config = Config {
        cases: checks.cases,
        failure_persistence: None,
        // Four times proptest's default, for streams short enough to paste.
        max_shrink_iters: 1024,
        ..Config::default()
    };
    let mut runner = TestRunner::new_with_rng(config, rng(seed));
    let result = runner.run(&scenarios, |(cluster, stream)| {
        check_one(&cluster, &make, &stream, &checks).map_err(|f| TestCaseError::fail(f.to_string()))
    });
    match result {
        Ok(()) => Ok(()),
        Err(TestError::Fail(reason, (cluster, stream))) => {
            // The minimal case again, for its failure as a value (the checks are deterministic).
            let failure = check_one(&cluster, &make, &stream, &checks)
                .err()
                .unwrap_or_else(|| Failure {
                    at_ms: 0,
                    message: format!("failed once, then passed: {reason}"),
                    lines: Vec::new(),
                });
            Err(CheckError::Failed { seed, failure })
        }
        Err(TestError::Abort(reason)) => Err(CheckError::Aborted {
            seed,
            reason: reason.to_string(),
        }),
    }
}

/// Every check of [`check_profile`] on one cluster and stream, with fresh profiles from
/// `make`: for a property test that draws the profile, the cluster and the stream together
/// (so that its regression file replays the whole case), for a plain test of one stream, or
/// for the regression test a failure prints ([`crate::testkit::replay`]).
///
/// ```
/// use gangway::policy::Profile;
/// use gangway::testkit::harness::{ProfileChecks, Stream, StreamEvent, TickStep, check_stream};
/// use gangway::{ClusterConfig, Event, JobSpec};
/// let config: ClusterConfig = serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 2}]}"#).unwrap();
/// let submit = StreamEvent::Raw(Event::Submit { job: JobSpec::new("a", 1000, 1) });
/// let stream = Stream { ticks: vec![TickStep { at_ms: 0, events: vec![submit] },
///                                   TickStep { at_ms: 10, events: vec![] }] };
/// check_stream(&config, &Profile::default_for_config, &stream, ProfileChecks::new(1, 2)).unwrap();
/// ```
pub fn check_stream(
    config: &ClusterConfig,
    make: &impl Fn() -> Profile,
    stream: &Stream,
    checks: ProfileChecks,
) -> Result<(), Failure> {
    check_one(config, make, stream, &checks)
}

/// Every check of [`check_profile`] on one cluster and stream. A failure's lines go on with
/// the stream's later ticks, empty: a replay of them has as many ticks, so its snapshot is
/// taken and restored at the same tick as in the run that failed.
fn check_one(
    config: &ClusterConfig,
    make: &impl Fn() -> Profile,
    stream: &Stream,
    checks: &ProfileChecks,
) -> Result<(), Failure> {
    check_ticks(config, make, stream, checks).map_err(|mut failure| {
        let sent = failure.lines.len().saturating_sub(1);
        for step in stream.ticks.iter().skip(sent) {
            let events: [Event; 0] = [];
            let line = json!({"op": "tick", "at_ms": step.at_ms, "events": events});
            failure.lines.push(line.to_string());
        }
        failure
    })
}

/// [`check_one`]'s checks, tick by tick.
fn check_ticks(
    config: &ClusterConfig,
    make: &impl Fn() -> Profile,
    stream: &Stream,
    checks: &ProfileChecks,
) -> Result<(), Failure> {
    let mut first = Run::start(config, make())?;
    let mut second = Run::start(config, make())?;
    let half = stream.ticks.len() / 2;
    let mut restored: Option<Run> = None;
    let mut preempted: Vec<(String, u64)> = Vec::new();
    for (i, step) in stream.ticks.iter().enumerate() {
        if i == half {
            let snapshot = first.scheduler.snapshot();
            let scheduler = Scheduler::restore_with_profile(snapshot, make())
                .map_err(|e| first.fail(step.at_ms, format!("restore refused: {e}")))?;
            restored = Some(Run {
                scheduler,
                checker: first.checker.clone(),
                lines: first.lines.clone(),
            });
        }
        let (_, outcome) = first.step(step)?;
        if let Some(fault) = checks.forbidden(&outcome.plugin_faults) {
            return Err(first.fail(step.at_ms, fault_text(fault)));
        }
        let (_, again) = second.step(step)?;
        if again != outcome {
            let message = format!("not deterministic: {outcome:?} then {again:?}");
            return Err(first.fail(step.at_ms, message));
        }
        if let Some(run) = restored.as_mut() {
            let (_, after) = run.step(step)?;
            if let Some(fault) = checks.forbidden(&after.plugin_faults) {
                return Err(first.fail(step.at_ms, fault_text(fault)));
            }
            // Faults report the calls made, and the engine's memos and kept plans (not part
            // of a snapshot) skip some calls: the restored run must decide the same, and may
            // call, so fault, where the original did not.
            if without_faults(&after) != without_faults(&outcome) {
                let message =
                    format!("restored from a snapshot, decided {after:?} instead of {outcome:?}");
                return Err(first.fail(step.at_ms, message));
            }
        }
        if let Some(bound) = checks.preemptions_per_hour {
            for decision in &outcome.decisions {
                if let crate::decision::Decision::Preempt { job, .. } = decision {
                    preempted.push((job.clone(), step.at_ms));
                }
            }
            let (job, count) = most_in_an_hour(&preempted, step.at_ms);
            if count > bound as usize {
                let message = format!("{job} was told to stop {count} times within an hour");
                return Err(first.fail(step.at_ms, message));
            }
        }
    }
    Ok(())
}

/// A fault that failed the checks, as the failure says it.
fn fault_text(fault: &PluginFault) -> String {
    format!(
        "plug-in {:?} faulted in hook {} ({}): {} (ProfileChecks::allow lets a named fault pass)",
        fault.plugin,
        fault.hook.name(),
        fault.kind.name(),
        fault.message
    )
}

/// The outcome with its faults left out.
fn without_faults(outcome: &TickOutcome) -> TickOutcome {
    TickOutcome {
        plugin_faults: Vec::new(),
        ..outcome.clone()
    }
}

/// The job told to stop most often in the hour up to `now`, and how often.
fn most_in_an_hour(preempted: &[(String, u64)], now: u64) -> (String, usize) {
    let recent: Vec<&str> = preempted
        .iter()
        .filter(|(_, at)| now.saturating_sub(*at) < 3_600_000)
        .map(|(job, _)| job.as_str())
        .collect();
    recent
        .iter()
        .map(|job| (job.to_string(), recent.iter().filter(|j| *j == job).count()))
        .max_by_key(|(_, count)| *count)
        .unwrap_or_default()
}

/// The multiplier for property-test case counts: the `GANGWAY_PROPTEST_SCALE` environment
/// variable (a positive integer), 1 when unset or invalid.
///
/// ```
/// assert!(gangway::testkit::harness::scale() >= 1);
/// ```
pub fn scale() -> u32 {
    std::env::var("GANGWAY_PROPTEST_SCALE")
        .ok()
        .and_then(|v| v.parse::<u32>().ok())
        .filter(|&n| n > 0)
        .unwrap_or(1)
}
