//! Typed errors: every one says what was wrong and where.

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The kind of a rejected event (docs/protocol.md, section Rejected events).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The event names a job the scheduler does not track.
    UnknownJob,
    /// A submission reuses the id of a job the scheduler still tracks.
    DuplicateJob,
    /// The event names a node that does not exist.
    UnknownNode,
    /// The job names a partition that does not exist.
    UnknownPartition,
    /// The job names a queue that does not exist.
    UnknownQueue,
    /// The job names an account that does not exist.
    UnknownAccount,
    /// The event names a maintenance window that does not exist.
    UnknownMaintenance,
    /// A bad value; the message names it.
    Invalid,
    /// The request can never fit the cluster, even at `min_count` on empty nodes.
    Unsatisfiable,
    /// The event does not fit the job's current state (`finished` for a pending job, …).
    InvalidState,
}

impl ErrorKind {
    /// The wire name (`unknown_job`, …).
    ///
    /// ```
    /// assert_eq!(gangway::ErrorKind::DuplicateJob.as_str(), "duplicate_job");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::UnknownJob => "unknown_job",
            ErrorKind::DuplicateJob => "duplicate_job",
            ErrorKind::UnknownNode => "unknown_node",
            ErrorKind::UnknownPartition => "unknown_partition",
            ErrorKind::UnknownQueue => "unknown_queue",
            ErrorKind::UnknownAccount => "unknown_account",
            ErrorKind::UnknownMaintenance => "unknown_maintenance",
            ErrorKind::Invalid => "invalid",
            ErrorKind::Unsatisfiable => "unsatisfiable",
            ErrorKind::InvalidState => "invalid_state",
        }
    }
}

/// An event that was rejected; it changed nothing.
///
/// ```
/// use gangway::{ErrorKind, EventError};
/// let e = EventError::new(ErrorKind::UnknownJob, "cancel: no job \"x\"");
/// assert_eq!(e.to_string(), "unknown_job: cancel: no job \"x\"");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Error, Serialize, Deserialize)]
#[error("{}: {message}", kind.as_str())]
pub struct EventError {
    /// What kind of error.
    pub kind: ErrorKind,
    /// What was wrong, naming the job, node or field.
    pub message: String,
}

impl EventError {
    /// A new error.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        EventError {
            kind,
            message: message.into(),
        }
    }
}

/// An invalid cluster configuration; nothing was configured.
///
/// ```
/// use gangway::{ClusterConfig, Scheduler};
/// let bad: ClusterConfig = serde_json::from_str(r#"{"nodes": [{"name": "a"}, {"name": "a"}]}"#).unwrap();
/// let err = Scheduler::new(bad).unwrap_err();
/// assert!(err.to_string().contains("nodes[1].name"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{field}: {message}")]
pub struct ConfigError {
    /// The field, as a path (`nodes[2].gpus.count`).
    pub field: String,
    /// What is wrong with it.
    pub message: String,
}

impl ConfigError {
    /// A new error about `field`.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        ConfigError {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// A tick refused as a whole; nothing changed.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum TickError {
    /// The tick is earlier than the previous one.
    #[error("tick at {requested_ms} ms is earlier than the previous tick at {previous_ms} ms")]
    TimeWentBackwards {
        /// The previous tick's time.
        previous_ms: u64,
        /// The refused time.
        requested_ms: u64,
    },
}
