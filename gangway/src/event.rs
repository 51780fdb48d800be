//! Events: everything the host tells the scheduler (docs/protocol.md, section Events).

use serde::{Deserialize, Serialize};

use crate::config::NodeConfig;
use crate::model::job::{FinishOutcome, JobSpec};

/// One input to [`crate::Scheduler::tick`]. Events of a tick apply in order; a bad one is rejected
/// alone and changes nothing.
///
/// ```
/// use gangway::Event;
/// let e: Event = serde_json::from_str(r#"{"type": "finished", "job": "a", "outcome": "completed"}"#).unwrap();
/// assert!(matches!(e, Event::Finished { .. }));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
#[non_exhaustive]
pub enum Event {
    /// A new pending job.
    Submit {
        /// The job.
        job: JobSpec,
    },
    /// Pending: removed. Running: the host has stopped it.
    Cancel {
        /// Job id.
        job: String,
    },
    /// A running job ended.
    Finished {
        /// Job id.
        job: String,
        /// How it ended.
        outcome: FinishOutcome,
    },
    /// A job told to stop (preempted) has released its resources.
    Stopped {
        /// Job id.
        job: String,
    },
    /// A running job has written a checkpoint: recorded as its last one (for the job's
    /// `since_checkpoint_ms`, which policies such as least-lost-work victim orders read).
    /// Changes no decision by itself.
    Checkpoint {
        /// Job id.
        job: String,
    },
    /// A running job is ready: all its tasks run (Kueue's `PodsReady`). Ends the wait of
    /// `policy.wait_for_ready`; accepted and changing nothing for a job it does not watch.
    ///
    /// ```
    /// use gangway::Event;
    /// let e: Event = serde_json::from_str(r#"{"type": "ready", "job": "a"}"#).unwrap();
    /// assert_eq!(e.subject(), "a");
    /// ```
    Ready {
        /// Job id.
        job: String,
    },
    /// A ready running job lost a task: with `policy.wait_for_ready` it must be ready again
    /// within the recovery timeout.
    NotReady {
        /// Job id.
        job: String,
    },
    /// A new node.
    NodeAdd {
        /// The node.
        node: NodeConfig,
    },
    /// A node leaves at once; its running jobs are requeued (or killed).
    NodeRemove {
        /// Node name.
        node: String,
    },
    /// A node is lost; its running jobs are requeued (or killed).
    NodeDown {
        /// Node name.
        node: String,
    },
    /// A node takes work again.
    NodeUp {
        /// Node name.
        node: String,
    },
    /// A node takes no new work; running jobs go on.
    NodeDrain {
        /// Node name.
        node: String,
    },
    /// One GPU device is lost: it takes no new work, and the jobs using it are requeued (or
    /// killed).
    GpuDown {
        /// Node name.
        node: String,
        /// Device index.
        gpu: u32,
    },
    /// A GPU device that was down takes work again.
    GpuUp {
        /// Node name.
        node: String,
        /// Device index.
        gpu: u32,
    },
    /// Changes a job's base priority.
    SetPriority {
        /// Job id.
        job: String,
        /// New base priority.
        priority: i32,
    },
    /// Holds a pending job: it keeps its place but is not started.
    Hold {
        /// Job id.
        job: String,
    },
    /// Releases a held job.
    Release {
        /// Job id.
        job: String,
    },
    /// Changes a job's time limit (pending or running).
    SetTimeLimit {
        /// Job id.
        job: String,
        /// New limit.
        time_limit_ms: u64,
    },
    /// Declares a maintenance window (see [`crate::config::MaintenanceConfig`]).
    MaintenanceAdd {
        /// Unique window id.
        id: String,
        /// Node names.
        nodes: Vec<String>,
        /// Window start.
        start_ms: u64,
        /// Window end, after `start_ms`.
        end_ms: u64,
    },
    /// Removes a maintenance window.
    MaintenanceRemove {
        /// Window id.
        id: String,
    },
}

impl Event {
    /// Whether every time and duration the event carries lies in the range of
    /// times (0 to 2^53 − 1 ms); the message names the event and the first field that does not.
    ///
    /// ```
    /// use gangway::Event;
    /// let e = Event::SetTimeLimit { job: "a".into(), time_limit_ms: 1 << 53 };
    /// assert!(e.check_times().unwrap_err().starts_with("set_time_limit a: time_limit_ms: 9007199254740992"));
    /// ```
    pub fn check_times(&self) -> Result<(), String> {
        use crate::model::time::in_range;
        let checked = match self {
            Event::Submit { job } => job.check_times().map_err(|m| ("submit", m)),
            Event::SetTimeLimit { time_limit_ms, .. } => in_range("time_limit_ms", *time_limit_ms)
                .map(|_| ())
                .map_err(|m| ("set_time_limit", m)),
            Event::MaintenanceAdd {
                start_ms, end_ms, ..
            } => in_range("start_ms", *start_ms)
                .and_then(|_| in_range("end_ms", *end_ms))
                .map(|_| ())
                .map_err(|m| ("maintenance_add", m)),
            _ => Ok(()),
        };
        checked.map_err(|(event, message)| format!("{event} {}: {message}", self.subject()))
    }

    /// The job or node the event is about, for messages.
    pub fn subject(&self) -> &str {
        match self {
            Event::Submit { job } => &job.id,
            Event::NodeAdd { node } => &node.name,
            Event::Cancel { job }
            | Event::Finished { job, .. }
            | Event::Stopped { job }
            | Event::Checkpoint { job }
            | Event::Ready { job }
            | Event::NotReady { job }
            | Event::SetPriority { job, .. }
            | Event::Hold { job }
            | Event::Release { job }
            | Event::SetTimeLimit { job, .. } => job,
            Event::NodeRemove { node }
            | Event::NodeDown { node }
            | Event::NodeUp { node }
            | Event::NodeDrain { node }
            | Event::GpuDown { node, .. }
            | Event::GpuUp { node, .. } => node,
            Event::MaintenanceAdd { id, .. } | Event::MaintenanceRemove { id } => id,
        }
    }
}
