//! The stream harness: ticks a scheduler with any [`Policy`] through an event stream, runs the
//! oracle (with the cross-tick [`Checker`]) after every tick, and reports a violation as a
//! [`Failure`] that prints the stream up to the failing tick as request lines (docs/protocol.md)
//! (`configure`, then one `tick` per step), ready to replay with `gangway shim`.
//!
//! With proptest, a failing case shrinks to a minimal stream; [`check_policy`] does the whole
//! loop.
//!
//! ```
//! use gangway::policy::Multifactor;
//! use gangway::testkit::harness::{Stream, StreamEvent, TickStep, run_stream};
//! use gangway::{ClusterConfig, Event, JobSpec};
//! let config: ClusterConfig = serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 2}]}"#).unwrap();
//! let stream = Stream { ticks: vec![
//!     TickStep { at_ms: 0, events: vec![StreamEvent::Raw(Event::Submit { job: JobSpec::new("a", 1000, 1) })] },
//!     TickStep { at_ms: 500, events: vec![StreamEvent::FinishRunning { pick: 0, failed: false }] },
//! ] };
//! run_stream(&config, Box::new(Multifactor::default()), &stream).unwrap();
//! ```

use std::fmt;

use proptest::test_runner::{Config, TestCaseError, TestError, TestRunner};
use serde::Serialize;
use serde_json::json;

use crate::config::ClusterConfig;
use crate::decision::TickOutcome;
use crate::event::Event;
use crate::model::job::FinishOutcome;
use crate::policy::Policy;
use crate::scheduler::Scheduler;
use crate::state::JobState;
use crate::testkit::checker::Checker;
use crate::testkit::strategies::scenario;

/// A generated input: ticks in time order.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Stream {
    /// The ticks.
    pub ticks: Vec<TickStep>,
}

impl Stream {
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
    /// The `configure` line and the `tick` lines sent up to and including the failing one.
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

/// Ticks a fresh scheduler for `config` with `policy` through `stream`, running the oracle and
/// the cross-tick checks after every tick.
pub fn run_stream(
    config: &ClusterConfig,
    policy: Box<dyn Policy>,
    stream: &Stream,
) -> Result<(), Failure> {
    run_stream_observed(config, policy, stream, |_, _, _| {})
}

/// [`run_stream`], also showing `observe` the scheduler, the events sent and the outcome after
/// every tick that passed the checks (to count what a run exercised).
///
/// ```
/// use gangway::policy::Multifactor;
/// use gangway::testkit::harness::{Stream, run_stream_observed};
/// let config: gangway::ClusterConfig =
///     serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 2}]}"#).unwrap();
/// let mut ticks = 0;
/// run_stream_observed(&config, Box::new(Multifactor::default()), &Stream::default(),
///     |_, _, _| ticks += 1).unwrap();
/// assert_eq!(ticks, 0);
/// ```
pub fn run_stream_observed(
    config: &ClusterConfig,
    policy: Box<dyn Policy>,
    stream: &Stream,
    mut observe: impl FnMut(&Scheduler, &[Event], &TickOutcome),
) -> Result<(), Failure> {
    let mut lines = vec![json!({"op": "configure", "cluster": config}).to_string()];
    let mut scheduler = Scheduler::with_policy(config.clone(), policy).map_err(|e| Failure {
        at_ms: 0,
        message: format!("configuration refused: {e}"),
        lines: lines.clone(),
    })?;
    let mut checker = Checker::default();
    for step in &stream.ticks {
        let events = resolve(&scheduler, &step.events);
        lines.push(json!({"op": "tick", "at_ms": step.at_ms, "events": events}).to_string());
        let fail = |message: String, lines: &[String]| Failure {
            at_ms: step.at_ms,
            message,
            lines: lines.to_vec(),
        };
        let outcome = scheduler
            .tick(step.at_ms, events.clone())
            .map_err(|e| fail(format!("tick refused: {e}"), &lines))?;
        checker
            .check(&scheduler, &events, &outcome)
            .map_err(|m| fail(m, &lines))?;
        observe(&scheduler, &events, &outcome);
    }
    Ok(())
}

/// Property-checks a policy: `cases` random clusters and streams of up to `max_ticks` ticks,
/// each run with a fresh policy from `make`. On a violation, proptest shrinks to a minimal
/// stream and the error holds its [`Failure`] text.
///
/// ```
/// use gangway::policy::Multifactor;
/// gangway::testkit::harness::check_policy(|| Box::new(Multifactor::default()), 4, 10).unwrap();
/// ```
pub fn check_policy(
    make: impl Fn() -> Box<dyn Policy>,
    cases: u32,
    max_ticks: usize,
) -> Result<(), String> {
    let config = Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let result = runner.run(&scenario(max_ticks), |(cluster, stream)| {
        run_stream(&cluster, make(), &stream).map_err(|f| TestCaseError::fail(f.to_string()))
    });
    match result {
        Ok(()) => Ok(()),
        Err(TestError::Fail(reason, _)) => Err(format!("minimal failing stream: {reason}")),
        Err(TestError::Abort(reason)) => Err(format!("aborted: {reason}")),
    }
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
