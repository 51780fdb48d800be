//! The policies `gangway simulate` compares, and how a replay treats jobs that overrun their
//! requested time.

use serde::{Deserialize, Serialize};

use crate::config::{BackfillMode, ClusterConfig, PriorityWeights, ReclaimWithinCohort};
use crate::sim::convert::SimJob;
use crate::sim::workload::Workload;

/// A scheduling policy preset.
///
/// ```
/// use gangway::sim::PolicyPreset;
/// assert_eq!("conservative".parse::<PolicyPreset>(), Ok(PolicyPreset::Conservative));
/// assert_eq!(PolicyPreset::ALL.len(), 4);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PolicyPreset {
    /// First come, first served: submit order, no backfill, no quotas, no preemption.
    Fcfs,
    /// EASY backfill in submit order.
    Easy,
    /// Conservative backfill in submit order.
    Conservative,
    /// EASY backfill ordered by fair-share (weight 10,000) and age (1,000), the workload's
    /// quota queues in one cohort, and preemption that reclaims lent quota.
    Full,
}

impl PolicyPreset {
    /// Every preset, in the order of the comparison table.
    pub const ALL: [PolicyPreset; 4] = [
        PolicyPreset::Fcfs,
        PolicyPreset::Easy,
        PolicyPreset::Conservative,
        PolicyPreset::Full,
    ];

    /// The preset's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            PolicyPreset::Fcfs => "fcfs",
            PolicyPreset::Easy => "easy",
            PolicyPreset::Conservative => "conservative",
            PolicyPreset::Full => "full",
        }
    }

    /// Sets `cluster`'s policy for this preset. Every preset but `full` drops the queues and
    /// cohorts (no quotas) and zeroes the priority weights (submit order); `full` keeps the
    /// queues and lets each reclaim quota it lent to its cohort.
    ///
    /// ```
    /// use gangway::sim::PolicyPreset;
    /// use gangway::config::BackfillMode;
    /// let mut cluster = gangway::ClusterConfig::default();
    /// PolicyPreset::Fcfs.configure(&mut cluster);
    /// assert_eq!(cluster.policy.backfill.mode, BackfillMode::None);
    /// ```
    pub fn configure(self, cluster: &mut ClusterConfig) {
        let policy = &mut cluster.policy;
        policy.backfill.mode = match self {
            PolicyPreset::Fcfs => BackfillMode::None,
            PolicyPreset::Easy | PolicyPreset::Full => BackfillMode::Easy,
            PolicyPreset::Conservative => BackfillMode::Conservative,
        };
        policy.backfill.depth = None;
        if self == PolicyPreset::Full {
            policy.priority.weights = PriorityWeights {
                fairshare: 10_000,
                age: 1_000,
                ..PriorityWeights::default()
            };
            policy.preemption.enabled = true;
            for queue in &mut cluster.queues {
                queue.preemption.reclaim_within_cohort = ReclaimWithinCohort::Any;
            }
        } else {
            policy.priority.weights = PriorityWeights::default();
            policy.preemption.enabled = false;
            cluster.queues.clear();
            cluster.cohorts.clear();
        }
    }
}

impl std::str::FromStr for PolicyPreset {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        PolicyPreset::ALL
            .into_iter()
            .find(|p| p.name() == text)
            .ok_or_else(|| {
                format!("unknown policy {text:?}: expected fcfs, easy, conservative or full")
            })
    }
}

/// What happens to a job that runs longer than its requested time.
///
/// ```
/// use gangway::sim::Overrun;
/// let mut cluster = gangway::ClusterConfig::default();
/// Overrun::Allow.configure(&mut cluster);
/// assert!(!cluster.policy.time_limit.enforce);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Overrun {
    /// It runs its recorded time (Slurm's OverTimeLimit=UNLIMITED).
    #[default]
    Allow,
    /// The scheduler kills it at its time limit.
    Kill,
}

impl Overrun {
    /// Sets `policy.time_limit.enforce`: false for `allow`, true for `kill`.
    pub fn configure(self, cluster: &mut ClusterConfig) {
        cluster.policy.time_limit.enforce = self == Overrun::Kill;
    }
}

/// The cluster and jobs of one simulation: `cluster` (the workload's own when `None`)
/// configured for `preset` and `overrun`, and the workload's jobs (with their quota queues
/// only when the configured cluster has queues).
///
/// ```
/// use gangway::sim::{prepare, Overrun, PolicyPreset};
/// use gangway::sim::workload::gpu_ml::GpuMlParams;
/// let workload = GpuMlParams { jobs: 5, ..GpuMlParams::default() }.generate().unwrap();
/// let (cluster, jobs) = prepare(&workload, None, PolicyPreset::Full, Overrun::Allow);
/// assert_eq!(cluster.queues.len(), 4);
/// assert!(jobs.iter().all(|j| j.spec.queue.is_some()));
/// let (cluster, jobs) = prepare(&workload, None, PolicyPreset::Easy, Overrun::Allow);
/// assert!(cluster.queues.is_empty() && jobs[0].spec.queue.is_none());
/// ```
pub fn prepare(
    workload: &Workload,
    cluster: Option<&ClusterConfig>,
    preset: PolicyPreset,
    overrun: Overrun,
) -> (ClusterConfig, Vec<SimJob>) {
    let mut cluster = cluster
        .cloned()
        .unwrap_or_else(|| workload.cluster_config());
    preset.configure(&mut cluster);
    overrun.configure(&mut cluster);
    let with_queue = !cluster.queues.is_empty();
    let jobs = workload
        .jobs
        .iter()
        .map(|job| SimJob::from_trace(job, with_queue))
        .collect();
    (cluster, jobs)
}
