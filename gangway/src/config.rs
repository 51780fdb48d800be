//! The cluster configuration (docs/protocol.md, section Cluster configuration): nodes, partitions,
//! cohorts, queues, accounts, QoS and policy, with every default listed there.
//!
//! These are plain data types that (de)serialize exactly as the wire format; unknown fields are
//! refused so that a typo never passes silently. [`crate::Scheduler::new`] validates the
//! references between them (a queue naming an unknown cohort, a node in an unknown partition, …).
//!
//! ```
//! use gangway::ClusterConfig;
//! let cluster: ClusterConfig = serde_json::from_str(r#"{
//!     "nodes": [{"name": "n1", "cpus": 8, "memory_mib": 16000,
//!                "gpus": {"model": "a100", "count": 4, "memory_mib": 81920}}]
//! }"#).unwrap();
//! assert_eq!(cluster.nodes[0].gpus.as_ref().unwrap().count, 4);
//! assert_eq!(cluster.policy.time_limit.enforce, true);
//! ```

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use crate::error::ConfigError;
use crate::model::amount::Milli;

mod fair_sharing;
pub(crate) mod ready;
pub(crate) mod reset;

pub use fair_sharing::{FairSharingConfig, NodeFairSharing, PreemptionStrategy};
pub use ready::WaitForReadyConfig;
pub use reset::ResetPeriod;

/// The whole cluster configuration.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterConfig {
    /// The nodes. Names are unique.
    pub nodes: Vec<NodeConfig>,
    /// Named node sets. Default: one implicit partition `default` holding every node, no
    /// maximum time, tier 0.
    #[serde(default)]
    pub partitions: Vec<PartitionConfig>,
    /// Cohorts: groups of queues that lend each other unused quota, forming a tree.
    #[serde(default)]
    pub cohorts: Vec<CohortConfig>,
    /// Queues with quotas. Default: none; a job with no queue is not quota-checked.
    #[serde(default)]
    pub queues: Vec<QueueConfig>,
    /// The share tree for fair-share. Default: none.
    #[serde(default)]
    pub accounts: Vec<AccountConfig>,
    /// Qualities of service a job may name in its `qos` field (Slurm's QOS): each adds a
    /// priority term and scales the job's charged usage. Default: none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub qos: Vec<QosConfig>,
    /// Cluster-wide counted licenses (Slurm's `Licenses=`), name → total. Default: none.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub licenses: IndexMap<String, u32>,
    /// Scheduling policy.
    #[serde(default)]
    pub policy: PolicyConfig,
    /// Topology level names, broadest first (Kueue TAS's `levels`, e.g. `["block", "rack"]`);
    /// nodes are the implicit last level. Every node then needs a label for each level, and
    /// gang placement keeps gangs inside the narrowest domain that holds them
    /// ([`crate::placement::GangTopology`]). Default: none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub topology: Vec<String>,
    /// Maintenance windows (Slurm's advance reservations): no job is placed on a window's nodes
    /// so that it would still run, by its time limit, inside the window. Default: none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub maintenance: Vec<MaintenanceConfig>,
}

/// A maintenance window on named nodes over `[start_ms, end_ms)`.
///
/// A job occupies `[start, start + time limit)`; it may run on the window's nodes only if that
/// interval does not overlap the window (a job ending exactly at `start_ms` may run, and so may
/// one starting at `end_ms`). Jobs already running when a window begins are left to the host.
///
/// ```
/// use gangway::config::MaintenanceConfig;
/// let w: MaintenanceConfig = serde_json::from_str(
///     r#"{"id": "fw-upgrade", "nodes": ["n1"], "start_ms": 3600000, "end_ms": 7200000}"#).unwrap();
/// assert_eq!(w.id.as_deref(), Some("fw-upgrade"));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MaintenanceConfig {
    /// Unique id, for `maintenance_remove`. Default: `maintenance[I]`, I its position.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Node names (at least one).
    pub nodes: Vec<String>,
    /// Window start.
    pub start_ms: u64,
    /// Window end, after `start_ms`.
    pub end_ms: u64,
}

impl ClusterConfig {
    /// Whether every time and duration of the configuration lies in the range of
    /// times (0 to 2^53 − 1 ms, docs/protocol.md, "Times"): the partitions' `max_time_ms`, the maintenance windows,
    /// `policy.min_job_age_ms`, `policy.priority.max_age_ms` and `calc_period_ms`,
    /// `policy.fairshare.half_life_ms`,
    /// admission fair sharing's half-life and sampling interval, `policy.wait_for_ready`'s
    /// timeouts and back-offs, and the times the built-in plug-ins of `policy.plugins` take.
    /// The error names the first field beyond it.
    ///
    /// ```
    /// let mut c: gangway::ClusterConfig = serde_json::from_str(r#"{"nodes": []}"#).unwrap();
    /// assert!(c.check_times().is_ok());
    /// c.policy.min_job_age_ms = u64::MAX;
    /// let err = c.check_times().unwrap_err();
    /// assert_eq!(err.field, "policy.min_job_age_ms");
    /// ```
    pub fn check_times(&self) -> Result<(), ConfigError> {
        use crate::model::time::{MAX_MS, beyond};
        let check = |field: String, value: Option<u64>| match value {
            Some(value) if value > MAX_MS => Err(ConfigError::new(field, beyond(value))),
            _ => Ok(()),
        };
        for (i, p) in self.partitions.iter().enumerate() {
            check(format!("partitions[{i}].max_time_ms"), p.max_time_ms)?;
        }
        for (i, w) in self.maintenance.iter().enumerate() {
            check(format!("maintenance[{i}].start_ms"), Some(w.start_ms))?;
            check(format!("maintenance[{i}].end_ms"), Some(w.end_ms))?;
        }
        let policy = &self.policy;
        check("policy.min_job_age_ms".into(), Some(policy.min_job_age_ms))?;
        check(
            "policy.priority.max_age_ms".into(),
            Some(policy.priority.max_age_ms),
        )?;
        let period = policy.priority.calc_period_ms;
        check("policy.priority.calc_period_ms".into(), period)?;
        let fairshare = policy.fairshare.half_life_ms;
        check("policy.fairshare.half_life_ms".into(), Some(fairshare))?;
        let admission = &policy.admission_fair_sharing;
        let field = "policy.admission_fair_sharing.usage_half_life_ms";
        check(field.into(), Some(admission.usage_half_life_ms))?;
        let field = "policy.admission_fair_sharing.usage_sampling_interval_ms";
        check(field.into(), Some(admission.usage_sampling_interval_ms))?;
        if let Some(ready) = &policy.wait_for_ready {
            let field = |name: &str| format!("policy.wait_for_ready.{name}");
            check(field("timeout_ms"), Some(ready.timeout_ms))?;
            check(field("recovery_timeout_ms"), ready.recovery_timeout_ms)?;
            check(field("backoff_base_ms"), Some(ready.backoff_base_ms))?;
            check(field("backoff_max_ms"), Some(ready.backoff_max_ms))?;
        }
        for (i, spec) in policy.plugins.iter().flatten().enumerate() {
            for (name, value) in &spec.params {
                let times: Vec<Option<u64>> = match (spec.name.as_str(), name.as_str()) {
                    ("min_run_time", "min_ms")
                    | ("avoid_gpu_faults", "within_ms")
                    | ("las", "min_quantum_ms") => vec![value.as_u64()],
                    ("avoid_gpu_faults", "hours") => {
                        vec![value.as_u64().map(|h| h.saturating_mul(3_600_000))]
                    }
                    ("las", "thresholds_gpu_ms") => value
                        .as_array()
                        .map(|a| a.iter().map(serde_json::Value::as_u64).collect())
                        .unwrap_or_default(),
                    _ => Vec::new(),
                };
                if times.iter().flatten().any(|&t| t > MAX_MS) {
                    let field = format!("policy.plugins[{i}].{name}");
                    return Err(ConfigError::new(field, beyond(value)));
                }
            }
        }
        Ok(())
    }

    /// The QoS named `name`, if configured (a linear search: QoS lists are short).
    ///
    /// ```
    /// use gangway::ClusterConfig;
    /// let cluster: ClusterConfig = serde_json::from_str(r#"{"nodes": [],
    ///     "qos": [{"name": "normal"}, {"name": "high", "priority": 10}]}"#).unwrap();
    /// assert_eq!(cluster.qos("high").map(|q| q.priority), Some(10));
    /// assert!(cluster.qos("low").is_none());
    /// ```
    pub fn qos(&self, name: &str) -> Option<&QosConfig> {
        self.qos.iter().find(|q| q.name == name)
    }
}

/// One node.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeConfig {
    /// Unique name.
    pub name: String,
    /// Cpus, fractions to thousandths allowed.
    #[serde(default)]
    pub cpus: Milli,
    /// Memory in MiB.
    #[serde(default)]
    pub memory_mib: u64,
    /// The node's GPUs. Default: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpus: Option<GpuConfig>,
    /// Free-form labels (rack, block, …).
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub labels: IndexMap<String, String>,
    /// The partitions this node belongs to. Default (`None`): every partition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partitions: Option<Vec<String>>,
}

/// The GPU devices of a node: `count` devices of one model, indexed 0..count.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuConfig {
    /// GPU model name, matched against jobs' `gpu_models` (e.g. `a100`).
    pub model: String,
    /// Number of devices.
    pub count: u32,
    /// Memory of one device in MiB.
    #[serde(default)]
    pub memory_mib: u64,
    /// Device UUIDs in index order (as `nvidia-smi -L` prints them). Default: none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub uuids: Vec<String>,
    /// PCI bus ids in index order, as the driver formats them (`00000000:18:00.0`).
    /// Default: none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pci_bus_ids: Vec<String>,
    /// Groups of device indices joined by NVLink, directly or through NVSwitches: each island
    /// lists two or more sorted indices, islands ordered by their first index. A device in no
    /// island has no NVLink peer. Default: none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nvlink_islands: Vec<Vec<u32>>,
    /// The MIG devices of devices in MIG mode, by device index then slice (what `gangway
    /// inventory` lists). A device with slices takes MIG tasks only, never whole or fractional
    /// GPU tasks. Default: none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mig: Vec<MigDeviceConfig>,
    /// Instead of `mig`: a mig-parted default configuration applied to every device
    /// (`all-1g.10gb`, `all-balanced`, …; docs/protocol.md lists them). Default: none.
    ///
    /// ```
    /// use gangway::config::GpuConfig;
    /// let g: GpuConfig = serde_json::from_str(
    ///     r#"{"model": "a100-80gb", "count": 8, "mig_config": "all-1g.10gb"}"#).unwrap();
    /// assert_eq!(g.mig_config.as_deref(), Some("all-1g.10gb"));
    /// ```
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mig_config: Option<String>,
}

/// A partition: a named set of nodes with a maximum time, a priority tier and a job factor.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartitionConfig {
    /// Unique name.
    pub name: String,
    /// Longest time limit a job may ask for. Default: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_time_ms: Option<u64>,
    /// Jobs of a higher tier are considered before any job of a lower tier. Default 0.
    #[serde(default)]
    pub priority_tier: i32,
    /// Jobs naming no partition go here. Default: the first partition listed.
    #[serde(default)]
    pub default: bool,
    /// Slurm's `PriorityJobFactor`: the partition factor of its jobs' priority is this over the
    /// largest `priority_job_factor` of all partitions (0 when that is 0). Unlike
    /// `priority_tier` it is one weighted term among the others. Default 1.
    ///
    /// ```
    /// use gangway::config::PartitionConfig;
    /// let p: PartitionConfig = serde_json::from_str(r#"{"name": "gpu"}"#).unwrap();
    /// assert_eq!(p.priority_job_factor, 1);
    /// ```
    #[serde(default = "one")]
    pub priority_job_factor: u32,
}

impl Default for PartitionConfig {
    fn default() -> Self {
        PartitionConfig {
            name: String::new(),
            max_time_ms: None,
            priority_tier: 0,
            default: false,
            priority_job_factor: 1,
        }
    }
}

/// A quality of service (Slurm's QOS): a priority term and a usage multiplier for the jobs that
/// name it.
///
/// ```
/// use gangway::config::QosConfig;
/// let q: QosConfig = serde_json::from_str(r#"{"name": "high", "priority": 100}"#).unwrap();
/// assert_eq!((q.priority, q.usage_factor), (100, 1.0));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QosConfig {
    /// Unique name.
    pub name: String,
    /// The QoS factor of a job is this over the largest `priority` of all QoS (0 when that is
    /// 0, and for a job naming no QoS). Default 0.
    #[serde(default)]
    pub priority: u32,
    /// Multiplies the fair-share usage charged for the job's resources (Slurm's
    /// `UsageFactor`): 0 makes it free, 2 charges double. Finite and ≥ 0. Default 1.
    #[serde(default = "unit_factor")]
    pub usage_factor: f64,
}

fn unit_factor() -> f64 {
    1.0
}

/// A cohort: queues in one cohort borrow each other's unused quota.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CohortConfig {
    /// Unique name.
    pub name: String,
    /// The parent cohort. Default: none (a root).
    #[serde(default)]
    pub parent: Option<String>,
    /// The cohort's own quota pool per resource key (Kueue's Cohort API): `nominal` is lent to
    /// the queues and cohorts below it, `borrowing_limit` and `lending_limit` bound what the
    /// whole subtree takes from and gives to the parent cohort. Default: none.
    ///
    /// ```
    /// use gangway::config::CohortConfig;
    /// let c: CohortConfig = serde_json::from_str(
    ///     r#"{"name": "org", "quota": {"gpu": {"nominal": 8}}}"#).unwrap();
    /// assert_eq!(c.quota["gpu"].nominal, gangway::Milli::from_units(8));
    /// ```
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub quota: IndexMap<String, QuotaConfig>,
    /// Its fair-sharing weight in its parent cohort and, on a root cohort, the switch for its
    /// tree (docs/protocol.md, "Fair sharing between queues"). Default: weight 1, the
    /// policy's switch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fair_sharing: Option<NodeFairSharing>,
}

/// A queue (Kueue's ClusterQueue): quota per resource, a cohort, and preemption policy.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueConfig {
    /// Unique name.
    pub name: String,
    /// The cohort it borrows from and lends to. Default: none.
    #[serde(default)]
    pub cohort: Option<String>,
    /// Quota per resource key: `cpu`, `memory_mib`, `gpu` (any model), `gpu:MODEL`,
    /// `mig:PROFILE` (MIG slices of that profile, one unit each; slices count toward no `gpu`
    /// key). A queue limits only the resources it lists.
    #[serde(default)]
    pub quota: IndexMap<String, QuotaConfig>,
    /// The most one user may hold in this queue per resource key, counting the user's running
    /// jobs (Slurm's MaxTRESPerUser). Default: no cap.
    ///
    /// ```
    /// use gangway::config::QueueConfig;
    /// let q: QueueConfig = serde_json::from_str(
    ///     r#"{"name": "team-a", "max_per_user": {"gpu": 8}}"#).unwrap();
    /// assert_eq!(q.max_per_user["gpu"], gangway::Milli::from_units(8));
    /// ```
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub max_per_user: IndexMap<String, Milli>,
    /// Which running jobs a pending job of this queue may preempt.
    #[serde(default)]
    pub preemption: QueuePreemptionConfig,
    /// When true, a job of this queue that waits for quota blocks the queue's later jobs
    /// (Kueue's StrictFIFO). Default false (BestEffortFIFO).
    #[serde(default)]
    pub strict_fifo: bool,
    /// Its fair-sharing weight in its cohort (docs/protocol.md, "Fair sharing between
    /// queues"); `enabled` is for root cohorts only. Default: weight 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fair_sharing: Option<NodeFairSharing>,
    /// Orders this queue's pending jobs by their tenant's decayed usage first (Kueue's
    /// `admissionScope.admissionMode: UsageBasedAdmissionFairSharing`); the tenants are the
    /// jobs' accounts. Default false. Parameters in `policy.admission_fair_sharing`.
    ///
    /// ```
    /// use gangway::config::QueueConfig;
    /// let q: QueueConfig = serde_json::from_str(r#"{"name": "shared",
    ///     "quota": {"gpu": {"nominal": 8}}, "admission_fair_sharing": true}"#).unwrap();
    /// assert!(q.admission_fair_sharing);
    /// ```
    #[serde(default, skip_serializing_if = "is_false")]
    pub admission_fair_sharing: bool,
    /// Each account's weight in this queue's admission fair sharing (Kueue's LocalQueue
    /// `fairSharing.weight`): its usage counts divided by it; 0 orders its jobs last. An
    /// account not listed has weight 1. Only with `admission_fair_sharing`.
    ///
    /// ```
    /// use gangway::config::QueueConfig;
    /// let q: QueueConfig = serde_json::from_str(r#"{"name": "shared",
    ///     "admission_fair_sharing": true, "account_weights": {"team-a": 2.0}}"#).unwrap();
    /// assert_eq!(q.account_weights["team-a"], 2.0);
    /// ```
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub account_weights: IndexMap<String, f64>,
}

fn is_false(value: &bool) -> bool {
    !*value
}

/// The quota of one resource in one queue.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuotaConfig {
    /// Guaranteed amount.
    pub nominal: Milli,
    /// How much more than nominal the queue may borrow from its cohort. `null`: unlimited.
    #[serde(default)]
    pub borrowing_limit: Option<Milli>,
    /// How much of its unused nominal the queue lends to its cohort. `null`: all of it.
    #[serde(default)]
    pub lending_limit: Option<Milli>,
}

/// A queue's preemption policy (Kueue's defaults: never, never).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueuePreemptionConfig {
    /// Victims in the preemptor's own queue.
    #[serde(default)]
    pub within_queue: WithinQueue,
    /// Victims in other queues of the cohort tree that use more than their nominal quota.
    #[serde(default)]
    pub reclaim_within_cohort: ReclaimWithinCohort,
    /// Victims in other queues of the cohort tree that use more than their nominal quota, taken
    /// while the preemptor borrows (ends above its own nominal quota). Default: never.
    #[serde(default, skip_serializing_if = "BorrowWithinCohort::is_never")]
    pub borrow_within_cohort: BorrowWithinCohort,
}

/// Preemption while borrowing (Kueue's `borrowWithinCohort`): a job that needs to borrow may
/// preempt borrowers' jobs of lower priority in other queues of its cohort tree, optionally only
/// those at or below `max_priority_threshold`.
///
/// ```
/// use gangway::config::{BorrowPolicy, QueuePreemptionConfig};
/// let p: QueuePreemptionConfig = serde_json::from_str(r#"{"reclaim_within_cohort": "any",
///     "borrow_within_cohort": {"policy": "lower_priority", "max_priority_threshold": 100}}"#)
///     .unwrap();
/// assert_eq!(p.borrow_within_cohort.policy, BorrowPolicy::LowerPriority);
/// assert_eq!(p.borrow_within_cohort.max_priority_threshold, Some(100));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BorrowWithinCohort {
    /// Whether to preempt while borrowing. Default never.
    #[serde(default)]
    pub policy: BorrowPolicy,
    /// Only victims whose base priority is at most this. Default: no threshold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_priority_threshold: Option<i32>,
}

impl BorrowWithinCohort {
    /// True when the policy is `never`.
    pub fn is_never(&self) -> bool {
        self.policy == BorrowPolicy::Never
    }

    /// Whether a job of base `priority` may preempt one of `victim` priority while borrowing.
    ///
    /// ```
    /// use gangway::config::{BorrowPolicy, BorrowWithinCohort};
    /// let b = BorrowWithinCohort { policy: BorrowPolicy::LowerPriority,
    ///                              max_priority_threshold: Some(5) };
    /// assert!(b.allows(10, 5));
    /// assert!(!b.allows(10, 6)); // above the threshold
    /// assert!(!b.allows(5, 5)); // not lower
    /// ```
    pub fn allows(&self, priority: i32, victim: i32) -> bool {
        self.policy == BorrowPolicy::LowerPriority
            && victim < priority
            && self.max_priority_threshold.is_none_or(|t| victim <= t)
    }
}

/// The policy of [`BorrowWithinCohort`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BorrowPolicy {
    /// Never preempt while borrowing.
    #[default]
    Never,
    /// Preempt borrowers' jobs of lower base priority.
    LowerPriority,
}

/// Preemption of jobs in the preemptor's own queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WithinQueue {
    /// Never.
    #[default]
    Never,
    /// Jobs of lower base priority.
    LowerPriority,
    /// Jobs of lower priority, or of equal priority submitted later.
    LowerOrNewerEqualPriority,
}

/// Reclaiming quota lent to other queues of the cohort.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReclaimWithinCohort {
    /// Never.
    #[default]
    Never,
    /// Borrowers' jobs of lower base priority.
    LowerPriority,
    /// Any borrower's job.
    Any,
}

/// An account in the share tree.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccountConfig {
    /// Unique name.
    pub name: String,
    /// The parent account. Default: none (a child of the root).
    #[serde(default)]
    pub parent: Option<String>,
    /// Shares relative to its siblings. Default 1.
    #[serde(default = "one")]
    pub shares: u32,
    /// Users of this account and their shares within it. A user not listed has shares 1.
    #[serde(default)]
    pub users: IndexMap<String, u32>,
}

fn one() -> u32 {
    1
}

/// Scheduling policy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyConfig {
    /// Backfill mode and depth.
    #[serde(default)]
    pub backfill: BackfillConfig,
    /// Multifactor priority weights.
    #[serde(default)]
    pub priority: PriorityConfig,
    /// Fair-share decay and algorithm.
    #[serde(default)]
    pub fairshare: FairshareConfig,
    /// Preemption switch.
    #[serde(default)]
    pub preemption: PreemptionConfig,
    /// Time-limit enforcement.
    #[serde(default)]
    pub time_limit: TimeLimitConfig,
    /// Fair sharing between the queues of cohort trees (Kueue's Fair Sharing). Default off.
    #[serde(default, skip_serializing_if = "FairSharingConfig::is_default")]
    pub fair_sharing: FairSharingConfig,
    /// How long ended jobs are remembered (ids stay taken, dependencies see their outcome).
    /// Default 300000, as Slurm's MinJobAge.
    #[serde(default = "default_min_job_age_ms")]
    pub min_job_age_ms: u64,
    /// The profile: built-in plug-ins by name, in order (docs/policies.md). Absent: the
    /// default profile (multifactor priority, Kueue's victim selection).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugins: Option<Vec<crate::policy::PluginSpec>>,
    /// Kueue's `waitForPodsReady`: started jobs must report `ready` in time, or are requeued
    /// with a back-off. Absent (the default): off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_for_ready: Option<WaitForReadyConfig>,
    /// Admission fair sharing's parameters, for the queues that turn it on.
    #[serde(
        default,
        skip_serializing_if = "AdmissionFairSharingConfig::is_default"
    )]
    pub admission_fair_sharing: AdmissionFairSharingConfig,
}

impl Default for PolicyConfig {
    fn default() -> Self {
        PolicyConfig {
            backfill: BackfillConfig::default(),
            priority: PriorityConfig::default(),
            fairshare: FairshareConfig::default(),
            preemption: PreemptionConfig::default(),
            time_limit: TimeLimitConfig::default(),
            fair_sharing: FairSharingConfig::default(),
            min_job_age_ms: default_min_job_age_ms(),
            plugins: None,
            wait_for_ready: None,
            admission_fair_sharing: AdmissionFairSharingConfig::default(),
        }
    }
}

fn default_min_job_age_ms() -> u64 {
    300_000
}

/// Backfill mode and depth.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BackfillConfig {
    /// `none`, `easy` (default), `conservative`, `before_head_estimate` or `rule`.
    #[serde(default)]
    pub mode: BackfillMode,
    /// How many resource-blocked jobs get a reservation (≥ 1). Default: 1 for `easy`, all for
    /// `conservative`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
    /// In which order the jobs behind a blocked head are tried for backfill, in modes
    /// `before_head_estimate` and `rule`: `order` (default), the pass's order, or `submit`, by
    /// submit time (ties in arrival order), as RLScheduler's simulator does whatever its
    /// heuristic. The head is still the first blocked job of the pass's order.
    ///
    /// ```
    /// let b: gangway::config::BackfillConfig = serde_json::from_str(
    ///     r#"{"mode": "before_head_estimate", "candidates": "submit"}"#).unwrap();
    /// assert_eq!(b.candidates, gangway::config::BackfillCandidates::Submit);
    /// ```
    #[serde(default, skip_serializing_if = "BackfillCandidates::is_default")]
    pub candidates: BackfillCandidates,
    /// Mode `conservative` only: the textbook's conservative backfill with compression
    /// (Mu'alem & Feitelson 2001) instead of re-planning every reservation at every pass. A
    /// job's reservation is made once, around every reservation already made, and is never
    /// moved later; at each pass the reservations are compressed in the pass's order, each to
    /// the earliest start no later than its own that fits around all the others. Only the
    /// causes docs/protocol.md lists (a lost node, a changed time limit, a running job past its
    /// limit, ...) re-plan a reservation later. Default false.
    ///
    /// ```
    /// let b: gangway::config::BackfillConfig = serde_json::from_str(
    ///     r#"{"mode": "conservative", "compress": true}"#).unwrap();
    /// assert!(b.compress);
    /// ```
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub compress: bool,
}

/// The order of backfill candidates behind a head-rule head ([`BackfillConfig::candidates`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BackfillCandidates {
    /// The pass's order.
    #[default]
    Order,
    /// Submit time, ties in arrival order.
    Submit,
}

impl BackfillCandidates {
    fn is_default(&self) -> bool {
        *self == BackfillCandidates::Order
    }
}

/// How blocked jobs are treated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BackfillMode {
    /// Strict order: the first resource-blocked job blocks everyone behind it.
    None,
    /// EASY backfill: one reservation, later jobs may start if they do not delay it.
    #[default]
    Easy,
    /// Conservative backfill: every blocked job gets a reservation.
    Conservative,
    /// RLScheduler's rule (SC'20): the first resource-blocked job is the head and gets no
    /// reservation; its start is estimated once, when it becomes the head, from the running
    /// jobs' requested ends, and never updated. A later job starts now only if it fits now and
    /// its requested end (now plus its time limit) is strictly before that estimate, and every
    /// backfill rule of the profile admits it. No extra-nodes rule: it may delay the head.
    ///
    /// ```
    /// let b: gangway::config::BackfillConfig =
    ///     serde_json::from_str(r#"{"mode": "before_head_estimate"}"#).unwrap();
    /// assert_eq!(b.mode, gangway::config::BackfillMode::BeforeHeadEstimate);
    /// ```
    BeforeHeadEstimate,
    /// The profile's backfill rules alone ([`crate::policy::Plugin::may_backfill`]): the head
    /// gets no reservation, its estimate is frozen as in `before_head_estimate`, and a later
    /// job that fits now starts when every backfill rule admits it (none listed: every job
    /// that fits).
    Rule,
}

impl BackfillMode {
    /// Whether the mode has a head with a frozen estimate and no reservation, and asks the
    /// backfill rules instead (`before_head_estimate`, `rule`).
    ///
    /// ```
    /// use gangway::config::BackfillMode;
    /// assert!(BackfillMode::Rule.head_rule() && !BackfillMode::Easy.head_rule());
    /// ```
    pub fn head_rule(self) -> bool {
        matches!(self, BackfillMode::BeforeHeadEstimate | BackfillMode::Rule)
    }
}

/// Multifactor priority.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriorityConfig {
    /// Weights of the normalised factors. All default 0.
    #[serde(default)]
    pub weights: PriorityWeights,
    /// Age at which the age factor reaches 1. Default 604800000 (7 days).
    #[serde(default = "default_max_age_ms")]
    pub max_age_ms: u64,
    /// Slurm's `PriorityCalcPeriod`: calculate the order keys (and the fair-share factors) at
    /// most once per this many milliseconds; between calculations each pending job keeps the
    /// key it got against the last calculation's figures. Must be positive. Default: none, the
    /// keys are calculated afresh at every pass (exact).
    ///
    /// ```
    /// let p: gangway::config::PriorityConfig =
    ///     serde_json::from_str(r#"{"calc_period_ms": 300000}"#).unwrap();
    /// assert_eq!(p.calc_period_ms, Some(300_000));
    /// ```
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calc_period_ms: Option<u64>,
    /// Queue discipline: a head that cannot start stays the head until it starts (as in
    /// RLScheduler's simulator), considered first at every pass whatever the order says, instead
    /// of the pending jobs being ordered afresh at every pass. The head is the first job a pass
    /// finds blocked by resources (within its quota); it loses its pin when it starts or leaves
    /// the queue, or when a pass finds it not ready to run (held, before its begin time, waiting
    /// for a dependency or its quota). Default false.
    ///
    /// ```
    /// let p: gangway::config::PriorityConfig =
    ///     serde_json::from_str(r#"{"pinned_head": true}"#).unwrap();
    /// assert!(p.pinned_head);
    /// ```
    #[serde(default, skip_serializing_if = "is_false")]
    pub pinned_head: bool,
}

impl Default for PriorityConfig {
    fn default() -> Self {
        PriorityConfig {
            weights: PriorityWeights::default(),
            max_age_ms: default_max_age_ms(),
            calc_period_ms: None,
            pinned_head: false,
        }
    }
}

fn default_max_age_ms() -> u64 {
    604_800_000
}

/// Weights of the multifactor priority terms.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriorityWeights {
    /// Age weight.
    #[serde(default)]
    pub age: u32,
    /// Fair-share weight.
    #[serde(default)]
    pub fairshare: u32,
    /// Job-size weight.
    #[serde(default)]
    pub job_size: u32,
    /// Partition weight.
    #[serde(default)]
    pub partition: u32,
    /// QoS weight.
    #[serde(default)]
    pub qos: u32,
}

/// Fair-share settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FairshareConfig {
    /// Usage half-life. Default 604800000 (7 days).
    #[serde(default = "default_half_life_ms")]
    pub half_life_ms: u64,
    /// `fair_tree` (default) or `classic`.
    #[serde(default)]
    pub algorithm: FairshareAlgorithm,
    /// What one second of a running job costs its account, per unit of each resource it holds
    /// (Slurm's `TRESBillingWeights`): `cpu` (per cpu), `memory_gib` (per GiB), `gpu` (per
    /// device, fractions pro rata) and `gpu:MODEL` (per device of that model, in place of `gpu`).
    /// A resource not listed costs nothing. Default `{"gpu": 1.0}`: usage is GPU-seconds. An
    /// exclusive job is billed for the whole nodes it holds.
    ///
    /// ```
    /// use gangway::config::FairshareConfig;
    /// let default = FairshareConfig::default();
    /// assert_eq!(default.billing_weights["gpu"], 1.0);
    /// let c: FairshareConfig = serde_json::from_str(
    ///     r#"{"billing_weights": {"cpu": 0.5, "gpu:a100": 2.0}}"#).unwrap();
    /// assert_eq!(c.billing_weights.get("gpu"), None); // listed keys only
    /// ```
    #[serde(default = "default_billing_weights")]
    pub billing_weights: IndexMap<String, f64>,
    /// When accumulated usage is forgotten outright, on top of the decay (Slurm's
    /// `PriorityUsageResetPeriod`): `none` (default), `daily`, `weekly` or `monthly`; see
    /// [`ResetPeriod`] for where the boundaries fall.
    ///
    /// ```
    /// use gangway::config::FairshareConfig;
    /// use gangway::config::ResetPeriod;
    /// let c: FairshareConfig = serde_json::from_str(r#"{"reset": "monthly"}"#).unwrap();
    /// assert_eq!(c.reset, ResetPeriod::Monthly);
    /// ```
    #[serde(default, skip_serializing_if = "is_never")]
    pub reset: ResetPeriod,
}

fn is_never(reset: &ResetPeriod) -> bool {
    *reset == ResetPeriod::None
}

impl Default for FairshareConfig {
    fn default() -> Self {
        FairshareConfig {
            half_life_ms: default_half_life_ms(),
            algorithm: FairshareAlgorithm::default(),
            billing_weights: default_billing_weights(),
            reset: ResetPeriod::None,
        }
    }
}

fn default_half_life_ms() -> u64 {
    604_800_000
}

fn default_billing_weights() -> IndexMap<String, f64> {
    IndexMap::from([("gpu".to_owned(), 1.0)])
}

/// Admission fair sharing (Kueue's `admissionFairSharing` configuration, v0.19): how tenant
/// usage decays, how the resources weigh, and the entry penalty. It applies to the queues with
/// `admission_fair_sharing` on.
///
/// ```
/// use gangway::config::AdmissionFairSharingConfig;
/// let c: AdmissionFairSharingConfig = serde_json::from_str(
///     r#"{"usage_half_life_ms": 3600000, "resource_weights": {"cpu": 2.0}}"#).unwrap();
/// assert_eq!(c.usage_half_life_ms, 3_600_000);
/// assert_eq!(c.usage_sampling_interval_ms, 300_000); // Kueue's default, 5 minutes
/// assert_eq!(c.resource_weights["cpu"], 2.0);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdmissionFairSharingConfig {
    /// Kueue's `usageHalfLifeTime`: consumed usage halves every this long; 0 keeps no history
    /// (usage reads 0 and no entry penalty is charged). Default 604800000 (168 h, Kueue's
    /// documented example; Kueue itself has no default).
    #[serde(default = "default_half_life_ms")]
    pub usage_half_life_ms: u64,
    /// Kueue's `usageSamplingInterval`, which sizes the entry penalty: a job started in an
    /// admission-fair-sharing queue adds `(1 − 2^(−interval / half_life))` × its demand to its
    /// tenant's usage at once. Default 300000 (5 minutes, Kueue's default).
    #[serde(default = "default_sampling_interval_ms")]
    pub usage_sampling_interval_ms: u64,
    /// Kueue's `resourceWeights`, by quota resource key (`cpu`, `memory_mib`, `gpu`,
    /// `gpu:MODEL`, `mig:PROFILE`): how much one unit of each counts in a tenant's usage. A key
    /// not listed weighs 1, as in Kueue. Finite, not negative.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub resource_weights: IndexMap<String, f64>,
}

impl AdmissionFairSharingConfig {
    fn is_default(&self) -> bool {
        *self == Self::default()
    }

    /// The weight of quota resource key `key` (1 when not listed).
    ///
    /// ```
    /// use gangway::config::AdmissionFairSharingConfig;
    /// let mut c = AdmissionFairSharingConfig::default();
    /// c.resource_weights.insert("memory_mib".into(), 0.0);
    /// assert_eq!((c.resource_weight("memory_mib"), c.resource_weight("gpu")), (0.0, 1.0));
    /// ```
    pub fn resource_weight(&self, key: &str) -> f64 {
        self.resource_weights.get(key).copied().unwrap_or(1.0)
    }
}

impl Default for AdmissionFairSharingConfig {
    fn default() -> Self {
        AdmissionFairSharingConfig {
            usage_half_life_ms: default_half_life_ms(),
            usage_sampling_interval_ms: default_sampling_interval_ms(),
            resource_weights: IndexMap::new(),
        }
    }
}

fn default_sampling_interval_ms() -> u64 {
    300_000
}

/// Which fair-share algorithm computes the factor.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FairshareAlgorithm {
    /// Slurm's Fair Tree.
    #[default]
    FairTree,
    /// Slurm's classic algorithm.
    Classic,
}

/// Preemption settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PreemptionConfig {
    /// Master switch. Default false.
    #[serde(default)]
    pub enabled: bool,
    /// A job of a higher partition tier may preempt jobs of lower tiers. Default false.
    #[serde(default)]
    pub partition_tiers: bool,
    /// Order-based preemption (with `enabled`): a pending job whose order keys (partition tier,
    /// then the order plug-ins' keys) are higher than a running job's may preempt it, subject
    /// to the victim vetoes, grace and earmarks; Slurm's preempt by priority. Default false.
    #[serde(default)]
    pub order_based: bool,
    /// A job never preempts the job that preempted it. Default true. A profile that turns it
    /// off must bound preemptions itself (a minimum run time, or LAS's quantum).
    #[serde(default = "yes")]
    pub anti_thrash: bool,
}

impl Default for PreemptionConfig {
    fn default() -> Self {
        PreemptionConfig {
            enabled: false,
            partition_tiers: false,
            order_based: false,
            anti_thrash: true,
        }
    }
}

/// Time-limit settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimeLimitConfig {
    /// Kill jobs at start + time limit. Default true.
    #[serde(default = "yes")]
    pub enforce: bool,
}

impl Default for TimeLimitConfig {
    fn default() -> Self {
        TimeLimitConfig { enforce: true }
    }
}

fn yes() -> bool {
    true
}

/// A MIG device: one slice of a GPU in MIG mode.
///
/// ```
/// use gangway::config::MigDeviceConfig;
/// let mig: MigDeviceConfig =
///     serde_json::from_str(r#"{"gpu": 0, "slice": 3, "profile": "1g.10gb"}"#).unwrap();
/// assert_eq!((mig.gpu, mig.slice, mig.profile.as_str()), (0, 3, "1g.10gb"));
/// assert!(mig.uuid.is_empty());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MigDeviceConfig {
    /// Index of the GPU it is carved from.
    pub gpu: u32,
    /// Its index under that GPU (`N` in `nvidia-smi -L`'s `MIG 1g.10gb Device N`).
    pub slice: u32,
    /// MIG profile name, e.g. `1g.10gb`.
    pub profile: String,
    /// UUID (`MIG-…`), the form `CUDA_VISIBLE_DEVICES` takes for a MIG device. Default: none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uuid: String,
    /// Memory in MiB. Default 0 (unknown).
    #[serde(default)]
    pub memory_mib: u64,
}
