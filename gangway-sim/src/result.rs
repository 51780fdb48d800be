//! What a simulation produces: one record per job, one per execution (a start until the job
//! ended, was preempted or requeued), and the cluster's load after every tick.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// How a job's simulation ended.
///
/// ```
/// use gangway_sim::JobStatus;
/// assert_eq!(serde_json::to_string(&JobStatus::NeverStarted).unwrap(), "\"never_started\"");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobStatus {
    /// It ran its whole run time.
    Completed,
    /// The scheduler killed it (time limit with `--overrun kill`, grace expired, node lost).
    Killed,
    /// The scheduler cancelled it before it started.
    Cancelled,
    /// The scheduler refused its submission (e.g. it can never fit).
    Rejected,
    /// It was still pending when nothing else could happen.
    NeverStarted,
}

/// One job of a simulation.
///
/// ```
/// use gangway_sim::{JobRecord, JobStatus};
/// let job = JobRecord { id: "a".into(), account: String::new(), submit_ms: 0,
///     first_start_ms: Some(5), last_start_ms: Some(5), end_ms: Some(15),
///     status: JobStatus::Completed, reserved_start_ms: None };
/// assert_eq!(job.wait_ms(), Some(5));
/// assert_eq!(job.completion_ms(), Some(15));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobRecord {
    /// Job id.
    pub id: String,
    /// Account charged; empty when none.
    pub account: String,
    /// When it was submitted.
    pub submit_ms: u64,
    /// When it first started; `None`: never.
    pub first_start_ms: Option<u64>,
    /// When it last started (after a preemption or requeue it starts again).
    pub last_start_ms: Option<u64>,
    /// When it ended; `None`: it never ended.
    pub end_ms: Option<u64>,
    /// How it ended.
    pub status: JobStatus,
    /// The start the scheduler first estimated for it when it got a reservation before its
    /// first start; `None`: it never had one.
    #[serde(default)]
    pub reserved_start_ms: Option<u64>,
}

impl JobRecord {
    /// Time from submission to first start.
    pub fn wait_ms(&self) -> Option<u64> {
        self.first_start_ms
            .map(|start| start.saturating_sub(self.submit_ms))
    }

    /// Time from submission to the end, for a job that started and ended (completed or
    /// killed; a job cancelled before it started has none).
    pub fn completion_ms(&self) -> Option<u64> {
        self.first_start_ms?;
        self.end_ms.map(|end| end.saturating_sub(self.submit_ms))
    }
}

/// Why an execution ended.
///
/// ```
/// use gangway_sim::ExecutionEnd;
/// assert_eq!(serde_json::to_string(&ExecutionEnd::Preempted).unwrap(), "\"preempted\"");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExecutionEnd {
    /// The job completed.
    Completed,
    /// The scheduler killed the job.
    Killed,
    /// The job was preempted and stopped after saving a checkpoint.
    Preempted,
    /// The job lost its resources and went back to pending, losing its work since its start.
    Requeued,
}

/// One stretch of a job on resources: from a `start` until it ended or was stopped.
///
/// ```
/// use gangway_sim::{Execution, ExecutionEnd};
/// let e = Execution { job: 0, start_ms: 0, end_ms: 3_600_000, tasks: 1, gpus_milli: 2_000,
///     cpus_milli: 1_000, nodes: 1, lost_ms: 0, end: ExecutionEnd::Completed };
/// assert_eq!(e.gpu_milli_ms(), 2_000 * 3_600_000);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Execution {
    /// Index of the job in [`SimResult::jobs`].
    pub job: usize,
    /// Start.
    pub start_ms: u64,
    /// End.
    pub end_ms: u64,
    /// Tasks placed.
    pub tasks: u32,
    /// GPUs held, in thousandths.
    pub gpus_milli: u64,
    /// Cpus held, in thousandths.
    pub cpus_milli: u64,
    /// Distinct nodes used.
    pub nodes: u32,
    /// Time of this execution whose work was lost: a preempted job loses the time from the
    /// `preempt` to its `stopped` (spent saving its checkpoint), a requeued one all of it.
    pub lost_ms: u64,
    /// Why it ended.
    pub end: ExecutionEnd,
}

impl Execution {
    /// GPU-time held, in GPU-thousandths × ms.
    pub fn gpu_milli_ms(&self) -> u128 {
        u128::from(self.gpus_milli) * u128::from(self.end_ms - self.start_ms)
    }

    /// Cpu-time held, in cpu-thousandths × ms.
    pub fn cpu_milli_ms(&self) -> u128 {
        u128::from(self.cpus_milli) * u128::from(self.end_ms - self.start_ms)
    }
}

/// The cluster's load after one tick.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sample {
    /// The tick's time.
    pub time_ms: u64,
    /// GPUs held by running jobs, in thousandths.
    pub busy_gpus_milli: u64,
    /// Cpus held by running jobs, in thousandths.
    pub busy_cpus_milli: u64,
    /// Pending jobs.
    pub pending: usize,
}

/// Everything a simulation produced.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SimResult {
    /// One record per job, in the order the jobs were given.
    pub jobs: Vec<JobRecord>,
    /// Every execution, in the order they ended.
    pub executions: Vec<Execution>,
    /// The load after every tick.
    pub samples: Vec<Sample>,
    /// Number of `preempt` decisions.
    pub preemptions: u64,
    /// Number of ticks.
    pub ticks: u64,
    /// The cluster's GPUs, in thousandths.
    pub capacity_gpus_milli: u64,
    /// The cluster's cpus, in thousandths.
    pub capacity_cpus_milli: u64,
    /// Why each rejected submission was refused, as `job: message`.
    pub rejections: Vec<String>,
    /// Target shares of the share tree's top-level accounts, normalised to sum to 1; empty when
    /// the cluster has no accounts.
    pub targets: Vec<(String, f64)>,
    /// The top-level account of every configured account below the top level: usage of a
    /// sub-account counts toward its top-level account's share.
    pub account_roots: BTreeMap<String, String>,
    /// The faults injected (all 0 without a fault model).
    #[serde(default)]
    pub faults: FaultCounts,
    /// Every tick the scheduler was given, in order, with [`crate::SimOptions::record_ticks`];
    /// empty without it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ticks_given: Vec<TickInput>,
}

/// One call of `Scheduler::tick` as a simulation made it: the time and the events, in the shape
/// of a scenario file's ticks and of the shim's `tick` request (`{"at_ms": T, "events": [...]}`).
///
/// ```
/// use gangway_sim::TickInput;
/// let tick = TickInput { at_ms: 5, events: vec![] };
/// assert_eq!(serde_json::to_string(&tick).unwrap(), r#"{"at_ms":5,"events":[]}"#);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TickInput {
    /// The tick's time.
    pub at_ms: u64,
    /// Its events, in the order given.
    pub events: Vec<gangway::Event>,
}

/// The faults a simulation injected, and how the scheduler answered them.
///
/// ```
/// use gangway_sim::FaultCounts;
/// assert_eq!(FaultCounts::default().node_failures, 0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FaultCounts {
    /// `node_down` events sent.
    pub node_failures: u64,
    /// `stopped` acknowledgements never sent.
    pub lost_stops: u64,
    /// Events sent a second time.
    pub duplicates: u64,
    /// Of those, the ones the scheduler refused (as it should: they are not counted as
    /// rejections of the workload).
    pub duplicates_rejected: u64,
    /// `finished` or `stopped` events refused because an earlier event of their tick (a
    /// `node_down` shuffled before them) had already taken the job off its nodes.
    pub late_events_rejected: u64,
    /// Jobs evicted (`requeue` or `kill`) for missing their ready deadline.
    pub ready_evictions: u64,
    /// GPU-milliseconds those evicted executions had held (lost work).
    pub ready_lost_gpu_ms: u64,
}

#[cfg(test)]
impl JobRecord {
    /// A record for tests: job `{account}{submit}` of `account`, submitted at `submit`,
    /// started at `start` and ended (completed) at `end`; never started without an end.
    pub(crate) fn for_test(
        account: &str,
        submit: u64,
        start: Option<u64>,
        end: Option<u64>,
    ) -> Self {
        JobRecord {
            id: format!("{account}{submit}"),
            account: account.to_string(),
            submit_ms: submit,
            first_start_ms: start,
            last_start_ms: start,
            end_ms: end,
            status: if end.is_some() {
                JobStatus::Completed
            } else {
                JobStatus::NeverStarted
            },
            reserved_start_ms: None,
        }
    }
}
