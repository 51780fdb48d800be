//! Decisions: all the scheduler tells the host (docs/protocol.md, section Decisions), and the
//! `explain` report.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::error::EventError;

/// One placement entry of a `start`: tasks of one group on one node, with device indices.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct PlacementEntry {
    /// Task group index.
    pub group: usize,
    /// Node name: the scheduler's own, shared (a start names its nodes without copying their
    /// names; on the wire, a string as any other).
    pub node: Arc<str>,
    /// Tasks of the group on this node.
    pub tasks: u32,
    /// Device indices: whole devices once each; for fractional tasks one index per task; empty
    /// for MIG tasks.
    pub gpus: Vec<u32>,
    /// For a group asking for MIG slices: the slice each task holds, one per task, by GPU then
    /// slice. Absent on the wire when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mig: Vec<MigPlacement>,
}

/// One MIG slice held by one task: the GPU, the slice under it and its profile.
///
/// ```
/// use gangway::MigPlacement;
/// let m: MigPlacement =
///     serde_json::from_str(r#"{"gpu": 2, "slice": 5, "profile": "1g.10gb"}"#).unwrap();
/// assert_eq!((m.gpu, m.slice), (2, 5));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct MigPlacement {
    /// GPU index on the node.
    pub gpu: u32,
    /// Slice index under that GPU.
    pub slice: u32,
    /// MIG profile name.
    pub profile: String,
}

/// Why a job is killed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum KillReason {
    /// It reached start + time limit.
    TimeLimit,
    /// It was preempted and did not stop within its grace.
    GraceExpired,
    /// Its node went down and it cannot be requeued.
    NodeDown,
    /// Its node was removed and it cannot be requeued.
    NodeRemoved,
    /// A GPU it uses went down and it cannot be requeued.
    GpuDown,
    /// It did not report `ready` in time (`policy.wait_for_ready`) and cannot be requeued:
    /// its `requeue` is false, or the timeout was its `backoff_limit`-th.
    ReadyTimeout,
}

/// Why a running job is requeued.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RequeueReason {
    /// Its node went down.
    NodeDown,
    /// Its node was removed.
    NodeRemoved,
    /// A GPU it uses went down.
    GpuDown,
    /// It did not report `ready` in time (`policy.wait_for_ready`); it backs off before it is
    /// considered again.
    ReadyTimeout,
}

/// Why a pending job is cancelled by the scheduler.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CancelReason {
    /// A dependency can no longer be met.
    DependencyNeverSatisfied,
}

/// What the host must do.
///
/// ```
/// use gangway::{Decision, KillReason};
/// let d = Decision::Kill { job: "a".into(), reason: KillReason::TimeLimit };
/// assert_eq!(serde_json::to_string(&d).unwrap(), r#"{"type":"kill","job":"a","reason":"time_limit"}"#);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
#[non_exhaustive]
pub enum Decision {
    /// Stop the job now; its resources are free.
    Kill {
        /// Job id.
        job: String,
        /// Why.
        reason: KillReason,
    },
    /// A pending job ends without running.
    Cancel {
        /// Job id.
        job: String,
        /// Why.
        reason: CancelReason,
    },
    /// The job lost its resources and is pending again.
    Requeue {
        /// Job id.
        job: String,
        /// Why.
        reason: RequeueReason,
    },
    /// Ask the job to stop within `grace_ms`; its resources stay allocated until `stopped`.
    Preempt {
        /// The victim.
        job: String,
        /// The job it makes room for.
        #[serde(rename = "for")]
        for_job: String,
        /// Time it has to stop.
        grace_ms: u64,
    },
    /// Launch the job now on these resources.
    Start {
        /// Job id.
        job: String,
        /// Where: one entry per task group and node.
        placement: Vec<PlacementEntry>,
    },
}

impl Decision {
    /// The job the decision is about.
    pub fn job(&self) -> &str {
        match self {
            Decision::Kill { job, .. }
            | Decision::Cancel { job, .. }
            | Decision::Requeue { job, .. }
            | Decision::Preempt { job, .. }
            | Decision::Start { job, .. } => job,
        }
    }

    /// Rank in a response: kill, cancel, requeue, preempt, start.
    pub fn order_rank(&self) -> u8 {
        match self {
            Decision::Kill { .. } => 0,
            Decision::Cancel { .. } => 1,
            Decision::Requeue { .. } => 2,
            Decision::Preempt { .. } => 3,
            Decision::Start { .. } => 4,
        }
    }
}

/// A rejected event of a tick.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Rejection {
    /// Position of the event in the tick's list.
    pub index: usize,
    /// Why.
    pub error: EventError,
}

/// The result of one tick.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TickOutcome {
    /// Decisions in the order kill, cancel, requeue, preempt, start (docs/protocol.md).
    pub decisions: Vec<Decision>,
    /// Events refused, each alone.
    pub rejected: Vec<Rejection>,
    /// When the host must tick again even if nothing happens.
    pub next_wakeup_ms: Option<u64>,
    /// Plug-ins that panicked in this tick (each abstained for the rest of its pass).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plugin_faults: Vec<crate::policy::PluginFault>,
}

#[cfg(test)]
impl TickOutcome {
    /// The jobs this tick started, in decision order (for unit tests).
    pub(crate) fn started(&self) -> Vec<String> {
        self.decisions
            .iter()
            .filter_map(|d| match d {
                Decision::Start { job, .. } => Some(job.clone()),
                _ => None,
            })
            .collect()
    }
}

/// Why a pending job is not running: the first that applies (docs/protocol.md, Pending reasons).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum PendingReason {
    /// Held by the host.
    Held,
    /// Not eligible before its begin time.
    Begin,
    /// Waiting for a dependency.
    Dependency,
    /// Victims were told to stop for it.
    Preempting,
    /// Its queue has no quota left for it.
    Quota,
    /// Has a backfill reservation.
    Reserved,
    /// Resources are free but reserved or earmarked for others, or a higher job blocks (mode none).
    Priority,
    /// Not enough resources free, and no reservation.
    Resources,
    /// An admission plug-in denied it (the detail says which, and why).
    Admission,
    /// Requeued after missing its ready deadline, it backs off until `backoff_until_ms`
    /// (`policy.wait_for_ready`).
    Backoff,
    /// With `policy.wait_for_ready.block_admission`, a started job is not ready yet: the
    /// first job that fits waits for it, and so does every job after that one.
    WaitingForReady,
}

impl PendingReason {
    /// The reason's `snake_case` name, as it serializes.
    ///
    /// ```
    /// use gangway::PendingReason;
    /// assert_eq!(PendingReason::WaitingForReady.name(), "waiting_for_ready");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            PendingReason::Held => "held",
            PendingReason::Begin => "begin",
            PendingReason::Dependency => "dependency",
            PendingReason::Preempting => "preempting",
            PendingReason::Quota => "quota",
            PendingReason::Reserved => "reserved",
            PendingReason::Priority => "priority",
            PendingReason::Resources => "resources",
            PendingReason::Admission => "admission",
            PendingReason::Backoff => "backoff",
            PendingReason::WaitingForReady => "waiting_for_ready",
        }
    }
}

/// One pending job in `explain`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PendingInfo {
    /// Job id.
    pub job: String,
    /// 1-based position in the order the scheduler considers pending jobs, among the jobs
    /// still pending (a job the pass started leaves the order): 1, 2, 3 … without gaps.
    pub position: usize,
    /// Why it is not running.
    pub reason: PendingReason,
    /// When it is expected to start (jobs with a reservation, and the head of backfill mode
    /// `before_head_estimate` or `rule`: its frozen estimate), else null.
    pub estimated_start_ms: Option<u64>,
    /// More about the reason, from the profile's plug-ins: an admission's deny, or why no
    /// node passed the node filters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// With reason `backoff`: when its back-off ends and it may start again. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backoff_until_ms: Option<u64>,
    /// The submitting user, as the job names it. Absent when it names none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// The job's account, as it names it. Absent when it names none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
}

/// One running job in `explain`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RunningInfo {
    /// Job id.
    pub job: String,
    /// When it started.
    pub started_ms: u64,
    /// The nodes it runs on.
    pub nodes: Vec<String>,
    /// Whether it has been told to stop.
    pub preempting: bool,
    /// While `policy.wait_for_ready` waits for it to report `ready` (again): when it is
    /// evicted unless it does. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_deadline_ms: Option<u64>,
}

/// The answer to "why is my job not running, and when will it?".
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Explanation {
    /// Pending jobs in scheduling order.
    pub pending: Vec<PendingInfo>,
    /// Running jobs, by start time then id.
    pub running: Vec<RunningInfo>,
}
