//! Job specifications as the host submits them (docs/protocol.md, section Jobs).

use serde::{Deserialize, Serialize};

use crate::model::amount::Milli;

/// A job as submitted: who, where, how long, and one or more task groups placed as one gang.
///
/// Every field but `id`, `time_limit_ms` and `groups` has a default (docs/protocol.md, Jobs).
///
/// ```
/// use gangway::JobSpec;
/// let job: JobSpec = serde_json::from_str(r#"{"id": "train", "time_limit_ms": 3600000,
///     "groups": [{"count": 2, "gpus": 8, "placement": "strict_spread"}]}"#).unwrap();
/// assert_eq!(job.groups[0].cpus, gangway::Milli::from_units(1));
/// assert!(job.requeue && job.preemptible);
/// assert_eq!(job.grace_ms, 30_000);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobSpec {
    /// Unique among the jobs the scheduler tracks.
    pub id: String,
    /// The submitting user (a free label unless accounts list users).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// The account charged for the job's usage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
    /// The quota queue. None: not quota-checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<String>,
    /// The partition. None: the default partition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
    /// Base priority, higher first.
    #[serde(default)]
    pub priority: i32,
    /// The quality of service, one of the CLUSTER's `qos` by name: it adds the QoS priority
    /// term and scales the charged usage. None: no QoS (factor 0, usage factor 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qos: Option<String>,
    /// Submit time; None: the time of the tick that submits it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submit_ms: Option<u64>,
    /// Not eligible before this time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub begin_ms: Option<u64>,
    /// How long the job may run (> 0).
    pub time_limit_ms: u64,
    /// Whole nodes only: nothing else runs beside it.
    #[serde(default)]
    pub exclusive: bool,
    /// The task groups, placed all or nothing.
    pub groups: Vec<TaskGroup>,
    /// Dependencies on other jobs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<Dependency>,
    /// Cluster-wide licenses held while it runs, name → count. Default: none.
    #[serde(default, skip_serializing_if = "indexmap::IndexMap::is_empty")]
    pub licenses: indexmap::IndexMap<String, u32>,
    /// May be preempted. Default true.
    #[serde(default = "yes")]
    pub preemptible: bool,
    /// Goes back to pending when it loses its resources. Default true.
    #[serde(default = "yes")]
    pub requeue: bool,
    /// Time it gets to stop after a `preempt`. Default 30000.
    #[serde(default = "default_grace_ms")]
    pub grace_ms: u64,
}

impl JobSpec {
    /// Whether every time and duration it carries (`submit_ms`, `begin_ms`, `time_limit_ms`,
    /// `grace_ms`) lies in the range of times (0 to 2^53 − 1 ms); the message names the first
    /// field that does not.
    ///
    /// ```
    /// let mut job = gangway::JobSpec::new("a", 1_000, 1);
    /// assert!(job.check_times().is_ok());
    /// job.grace_ms = u64::MAX;
    /// assert!(job.check_times().unwrap_err().starts_with("grace_ms: 18446744073709551615 is beyond"));
    /// ```
    pub fn check_times(&self) -> Result<(), String> {
        use crate::model::time::{in_range, in_range_opt};
        in_range_opt("submit_ms", self.submit_ms)?;
        in_range_opt("begin_ms", self.begin_ms)?;
        in_range("time_limit_ms", self.time_limit_ms)?;
        in_range("grace_ms", self.grace_ms)?;
        Ok(())
    }
}

fn yes() -> bool {
    true
}

fn default_grace_ms() -> u64 {
    30_000
}

impl JobSpec {
    /// A job of one group of `count` tasks with `cpus` each and the given time limit; the other
    /// fields take their defaults. Handy in examples and tests.
    ///
    /// ```
    /// use gangway::{JobSpec, Milli};
    /// let job = JobSpec::new("a", 60_000, 2).with_gpus(Milli::from_units(1));
    /// assert_eq!(job.groups[0].count, 2);
    /// ```
    pub fn new(id: impl Into<String>, time_limit_ms: u64, count: u32) -> Self {
        JobSpec {
            id: id.into(),
            user: None,
            account: None,
            queue: None,
            partition: None,
            priority: 0,
            qos: None,
            submit_ms: None,
            begin_ms: None,
            time_limit_ms,
            exclusive: false,
            groups: vec![TaskGroup::new(count)],
            after: Vec::new(),
            licenses: indexmap::IndexMap::new(),
            preemptible: true,
            requeue: true,
            grace_ms: default_grace_ms(),
        }
    }

    /// Asks for `count` of the cluster-wide license `name`, held while the job runs.
    ///
    /// ```
    /// use gangway::JobSpec;
    /// let job = JobSpec::new("a", 60_000, 1).with_license("matlab", 2);
    /// assert_eq!(job.licenses["matlab"], 2);
    /// ```
    pub fn with_license(mut self, name: impl Into<String>, count: u32) -> Self {
        self.licenses.insert(name.into(), count);
        self
    }

    /// Sets the GPUs per task of every group.
    pub fn with_gpus(mut self, gpus: Milli) -> Self {
        for group in &mut self.groups {
            group.gpus = gpus;
        }
        self
    }

    /// Sets the placement of every group.
    pub fn with_placement(mut self, placement: PlacementMode) -> Self {
        for group in &mut self.groups {
            group.placement = placement;
        }
        self
    }

    /// Sets the base priority.
    pub fn with_priority(mut self, priority: i32) -> Self {
        self.priority = priority;
        self
    }
}

/// A group of identical tasks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskGroup {
    /// Tasks wanted (≥ 1).
    pub count: u32,
    /// Fewest tasks the job accepts (elastic gangs). Default: `count`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_count: Option<u32>,
    /// Cpus per task. Default 1.
    #[serde(default = "one_cpu")]
    pub cpus: Milli,
    /// Memory per task in MiB. Default 0.
    #[serde(default)]
    pub memory_mib: u64,
    /// GPUs per task: a whole number, or below 1 a shareable fraction of one device. Default 0.
    #[serde(default)]
    pub gpus: Milli,
    /// Acceptable GPU models. Default: any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_models: Option<Vec<String>>,
    /// One MIG slice of this profile per task (`1g.10gb`, …), held exclusively; `gpus` must
    /// then be 0. Default: none.
    ///
    /// ```
    /// let g: gangway::TaskGroup =
    ///     serde_json::from_str(r#"{"count": 2, "mig": "1g.10gb"}"#).unwrap();
    /// assert_eq!(g.mig.as_deref(), Some("1g.10gb"));
    /// ```
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mig: Option<String>,
    /// How tasks spread over nodes. Default `pack`.
    #[serde(default)]
    pub placement: PlacementMode,
    /// Keep the group's tasks inside one domain of a topology level (Kueue TAS's
    /// podset-required/preferred-topology). Default: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology: Option<TopologyRequest>,
}

/// A task group's topology constraint: exactly one of `{"required": LEVEL}` or
/// `{"preferred": LEVEL}`, LEVEL one of the cluster's `topology` levels.
///
/// ```
/// use gangway::model::TopologyRequest;
/// let r: TopologyRequest = serde_json::from_str(r#"{"required": "rack"}"#).unwrap();
/// assert_eq!(r, TopologyRequest::Required("rack".into()));
/// assert!(serde_json::from_str::<TopologyRequest>(r#"{"required": "rack", "preferred": "block"}"#).is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TopologyRequest {
    /// All tasks in one domain of this level, or the group does not fit.
    Required(String),
    /// One domain of this level if possible, else of the next broader level, …, else anywhere.
    Preferred(String),
}

impl TopologyRequest {
    /// The level named.
    pub fn level(&self) -> &str {
        match self {
            TopologyRequest::Required(l) | TopologyRequest::Preferred(l) => l,
        }
    }
}

fn one_cpu() -> Milli {
    Milli::ONE
}

impl TaskGroup {
    /// A group of `count` one-cpu tasks with defaults elsewhere.
    ///
    /// ```
    /// let g = gangway::TaskGroup::new(3);
    /// assert_eq!(g.min_tasks(), 3);
    /// ```
    pub fn new(count: u32) -> Self {
        TaskGroup {
            count,
            min_count: None,
            cpus: one_cpu(),
            memory_mib: 0,
            gpus: Milli::ZERO,
            gpu_models: None,
            mig: None,
            placement: PlacementMode::Pack,
            topology: None,
        }
    }

    /// The fewest tasks the group accepts.
    pub fn min_tasks(&self) -> u32 {
        self.min_count.unwrap_or(self.count)
    }
}

/// How a task group's tasks are laid out over nodes.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum PlacementMode {
    /// As few nodes as possible.
    #[default]
    Pack,
    /// As many nodes as possible.
    Spread,
    /// All tasks on one node.
    StrictPack,
    /// One task per node.
    StrictSpread,
}

/// A dependency on another job's outcome.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dependency {
    /// The job depended on.
    pub job: String,
    /// Which outcome satisfies it.
    pub on: DependencyKind,
}

/// Which ending satisfies a dependency (Slurm's afterok / afterany / afternotok).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DependencyKind {
    /// The job finished `completed`.
    Ok,
    /// The job ended in any way.
    Any,
    /// The job failed, was killed, or was cancelled after starting.
    NotOk,
}

/// How a job ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Outcome {
    /// Finished successfully.
    Completed,
    /// Finished with a failure.
    Failed,
    /// Killed by the scheduler (time limit, grace expiry, node loss) or preempted without requeue.
    Killed,
    /// Cancelled after it had started.
    CancelledRunning,
    /// Cancelled (by the host or for a dependency) before it started.
    CancelledPending,
}

impl Outcome {
    /// Whether this outcome satisfies a dependency of `kind`.
    ///
    /// ```
    /// use gangway::{DependencyKind, Outcome};
    /// assert!(Outcome::Completed.satisfies(DependencyKind::Ok));
    /// assert!(Outcome::Killed.satisfies(DependencyKind::NotOk));
    /// assert!(!Outcome::CancelledPending.satisfies(DependencyKind::NotOk));
    /// ```
    pub fn satisfies(self, kind: DependencyKind) -> bool {
        match kind {
            DependencyKind::Any => true,
            DependencyKind::Ok => self == Outcome::Completed,
            DependencyKind::NotOk => {
                matches!(
                    self,
                    Outcome::Failed | Outcome::Killed | Outcome::CancelledRunning
                )
            }
        }
    }
}

/// Outcome reported by the host in a `finished` event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishOutcome {
    /// Success.
    Completed,
    /// Failure.
    Failed,
}
