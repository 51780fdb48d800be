//! Typed errors: every one says what was wrong and where.

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The kind of a rejected event (docs/protocol.md, section Rejected events).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
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

/// The kind of a request the shim refused as a whole (docs/protocol.md, section Errors, plus
/// the framing kinds of section Shim process): the `kind` of `{"ok":false,"error":{…}}`. A refused
/// `what_if` carries an event [`ErrorKind`] instead.
///
/// ```
/// use gangway::RefusalKind;
/// assert_eq!(RefusalKind::LineTooLong.as_str(), "line_too_long");
/// assert_eq!(RefusalKind::Parse.to_string(), "parse");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RefusalKind {
    /// The line is not UTF-8, not JSON, or not a known request.
    Parse,
    /// A request that needs a scheduler came before `configure` (or `restore`).
    NotConfigured,
    /// The CLUSTER of a `configure` or `reconfigure` is invalid; the message names the field.
    InvalidConfig,
    /// A `tick` or `explain` is earlier than the last tick.
    TimeWentBackwards,
    /// The state of a `restore` is not a valid snapshot.
    InvalidState,
    /// The line is longer than the shim's line limit (`gangway shim --max-line-bytes`,
    /// [`crate::protocol::ServeLimits`]); it was read past and dropped, not parsed.
    LineTooLong,
    /// A response could not be serialized (a bug in gangway).
    Internal,
}

impl RefusalKind {
    /// The wire name (`parse`, `line_too_long`, …).
    ///
    /// ```
    /// assert_eq!(gangway::RefusalKind::NotConfigured.as_str(), "not_configured");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            RefusalKind::Parse => "parse",
            RefusalKind::NotConfigured => "not_configured",
            RefusalKind::InvalidConfig => "invalid_config",
            RefusalKind::TimeWentBackwards => "time_went_backwards",
            RefusalKind::InvalidState => "invalid_state",
            RefusalKind::LineTooLong => "line_too_long",
            RefusalKind::Internal => "internal",
        }
    }
}

impl std::fmt::Display for RefusalKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
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
#[non_exhaustive]
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
#[non_exhaustive]
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
#[non_exhaustive]
pub enum TickError {
    /// The tick is earlier than the previous one.
    #[error("tick at {requested_ms} ms is earlier than the previous tick at {previous_ms} ms")]
    TimeWentBackwards {
        /// The previous tick's time.
        previous_ms: u64,
        /// The refused time.
        requested_ms: u64,
    },
    /// A time beyond the range of times (later than 2^53 − 1 ms).
    ///
    /// ```
    /// let mut s = gangway::Scheduler::new(serde_json::from_str(r#"{"nodes": []}"#).unwrap()).unwrap();
    /// let err = s.tick(u64::MAX, vec![]).unwrap_err();
    /// assert_eq!(err.to_string(), "at_ms: 18446744073709551615 is beyond the time range \
    ///     (at most 9007199254740991 ms, 2^53 - 1)");
    /// assert_eq!(s.last_tick(), None);
    /// ```
    #[error("{field}: {}", crate::model::time::beyond(value))]
    TimeOutOfRange {
        /// The field (`at_ms`).
        field: String,
        /// The refused value.
        value: u64,
    },
}

/// A state that breaks one of its invariants: usage that does not add up, a device held twice,
/// a job on a node that is down, quota usage that differs from its running jobs' charges, …
/// Found by the engine's own consistency and quota checks; a snapshot with one is refused on
/// restore.
///
/// ```
/// let error = gangway::ConsistencyError::new("node n1: used 5 cpus of 4");
/// assert_eq!(error.to_string(), "node n1: used 5 cpus of 4");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{message}")]
#[non_exhaustive]
pub struct ConsistencyError {
    /// What does not hold, naming the node, job or queue.
    pub message: String,
}

impl ConsistencyError {
    /// An error saying `message`.
    pub fn new(message: impl Into<String>) -> Self {
        ConsistencyError {
            message: message.into(),
        }
    }
}

impl From<String> for ConsistencyError {
    fn from(message: String) -> Self {
        ConsistencyError { message }
    }
}

/// A snapshot refused by [`Scheduler::restore`](crate::Scheduler::restore); nothing was
/// restored.
///
/// ```
/// use gangway::{ConsistencyError, RestoreError};
/// let error = RestoreError::from(ConsistencyError::new("running job slot 3 is empty"));
/// assert_eq!(error.to_string(), "inconsistent snapshot: running job slot 3 is empty");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum RestoreError {
    /// Its configuration is invalid (a quota tree that cannot be built).
    #[error("invalid configuration in snapshot: {0}")]
    Config(#[from] ConfigError),
    /// Its allocations, quota usage or dependencies do not add up.
    #[error("inconsistent snapshot: {0}")]
    Inconsistent(#[from] ConsistencyError),
    /// Its format version is one this gangway cannot read (`scheduler::SNAPSHOT_VERSION`).
    #[error(
        "snapshot format version {found} is not supported: this gangway reads versions 1 to {}",
        crate::scheduler::SNAPSHOT_VERSION
    )]
    Version {
        /// The `version` the snapshot gives.
        found: serde_json::Value,
    },
    /// A plug-in's saved state names no plug-in of the profile, or its plug-in refused it.
    #[error("plug-in {plugin:?}: {message}")]
    PluginState {
        /// The plug-in's name.
        plugin: String,
        /// Why.
        message: String,
    },
}

/// A fair-share operation refused; nothing changed.
#[derive(Clone, Debug, PartialEq, Error)]
#[non_exhaustive]
pub(crate) enum FairShareError {
    /// The account is not in the share tree.
    #[error("unknown account \"{0}\"")]
    UnknownAccount(String),
    /// A usage charge that is negative or not finite.
    #[error("usage charge {0}: must be a finite non-negative number")]
    InvalidCharge(f64),
    /// An association id this engine did not hand out.
    #[error("unknown association {0}")]
    UnknownAssociation(usize),
}

#[cfg(test)]
mod fair_share_error {
    #[test]
    fn unknown_accounts_and_bad_charges_are_refused() {
        use crate::config::{AccountConfig, FairshareConfig};
        use crate::error::FairShareError;
        use crate::fairshare::FairShare;
        let accounts = [AccountConfig {
            name: "a".into(),
            shares: 1,
            ..Default::default()
        }];
        let mut fs = FairShare::new(&accounts, &FairshareConfig::default()).unwrap();
        assert_eq!(
            fs.association(Some("b"), "u"),
            Err(FairShareError::UnknownAccount("b".into()))
        );
        let u = fs.association(Some("a"), "u").unwrap();
        assert_eq!(
            fs.charge(u, f64::NAN, 0).unwrap_err().to_string(),
            "usage charge NaN: must be a finite non-negative number"
        );
    }
}
