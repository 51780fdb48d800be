//! The policies `gangway simulate` compares, and how a replay treats jobs that overrun their
//! requested time.

use serde::{Deserialize, Serialize};

use crate::convert::SimJob;
use crate::workload::Workload;
use gangway::config::{BackfillMode, ClusterConfig, PriorityWeights, ReclaimWithinCohort};
use gangway::policy::PluginSpec;

/// A scheduling policy preset.
///
/// [`PolicyPreset::ALL`] holds the five `gangway simulate` compares by default;
/// [`PolicyPreset::EVERY`] every preset, also `sjf`, `las`, `rlscheduler` and
/// `conservative-compress`.
///
/// ```
/// use gangway_sim::PolicyPreset;
/// assert_eq!("conservative".parse::<PolicyPreset>(), Ok(PolicyPreset::Conservative));
/// assert_eq!(PolicyPreset::ALL.len(), 5);
/// assert_eq!(
///     PolicyPreset::names(),
///     ["ssh", "fcfs", "easy", "conservative", "full", "sjf", "las", "rlscheduler",
///      "conservative-compress"]
/// );
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PolicyPreset {
    /// No scheduler: users look for free GPUs by hand and start a job where enough are free on
    /// one node (or on all its nodes) at that moment, with no queue, reservation or fairness,
    /// and no time limit enforced. The scheduler only places: no backfill, no quotas, no
    /// preemption, ended jobs forgotten at once. It needs the host model of
    /// [`crate::SimOptions::looks`] (see [`crate::looks`]); without it the jobs would
    /// simply queue first come, first served.
    Ssh,
    /// First come, first served: submit order, no backfill, no quotas, no preemption.
    Fcfs,
    /// EASY backfill in submit order.
    Easy,
    /// Conservative backfill in submit order.
    Conservative,
    /// EASY backfill ordered by fair-share (weight 10,000) and age (1,000), the workload's
    /// quota queues in one cohort, and preemption that reclaims lent quota.
    Full,
    /// Shortest job first: EASY backfill ordered by the `shortest_first` plug-in (the shorter
    /// the time limit, the earlier), no quotas, no preemption.
    Sjf,
    /// Tiresias-style least attained service: the `las` plug-in's order (queues by attained
    /// GPU service), no backfill, order-based preemption without the anti-thrash rule (LAS's
    /// quantum bounds preemptions), no quotas. It uses no time limit.
    Las,
    /// RLScheduler's simulator (SC'20, DIR-LAB/deep-batch-scheduler) with its FCFS heuristic:
    /// submit order with a pinned head (`policy.priority.pinned_head`), backfill mode
    /// `before_head_estimate` (a job passes the head only if it ends strictly before the head's
    /// start as estimated, once, from requested times), no quotas, no preemption.
    Rlscheduler,
    /// The textbook's conservative backfill with compression (Mu'alem & Feitelson 2001) in
    /// submit order: `policy.backfill` `{"mode": "conservative", "compress": true}`, each
    /// reservation made once and only ever moved earlier.
    #[serde(rename = "conservative-compress")]
    ConservativeCompress,
}

impl PolicyPreset {
    /// The presets `gangway simulate` compares when no `--policy` is given, in the order of
    /// its table.
    pub const ALL: [PolicyPreset; 5] = [
        PolicyPreset::Ssh,
        PolicyPreset::Fcfs,
        PolicyPreset::Easy,
        PolicyPreset::Conservative,
        PolicyPreset::Full,
    ];

    /// Every preset: [`PolicyPreset::ALL`], then `sjf`, `las`, `rlscheduler` and
    /// `conservative-compress`.
    pub const EVERY: [PolicyPreset; 9] = [
        PolicyPreset::Ssh,
        PolicyPreset::Fcfs,
        PolicyPreset::Easy,
        PolicyPreset::Conservative,
        PolicyPreset::Full,
        PolicyPreset::Sjf,
        PolicyPreset::Las,
        PolicyPreset::Rlscheduler,
        PolicyPreset::ConservativeCompress,
    ];

    /// The names of [`PolicyPreset::EVERY`], in order.
    pub fn names() -> [&'static str; 9] {
        PolicyPreset::EVERY.map(PolicyPreset::name)
    }

    /// A comma-separated list of preset names, in the given order (a single name is a list of
    /// one); an unknown, empty or repeated name is an error.
    ///
    /// ```
    /// use gangway_sim::PolicyPreset;
    /// let both = PolicyPreset::parse_list("easy,las");
    /// assert_eq!(both, Ok(vec![PolicyPreset::Easy, PolicyPreset::Las]));
    /// assert_eq!(PolicyPreset::parse_list("fcfs"), Ok(vec![PolicyPreset::Fcfs]));
    /// assert!(PolicyPreset::parse_list("easy,easy").is_err());
    /// assert!(PolicyPreset::parse_list("easy,").is_err());
    /// ```
    pub fn parse_list(text: &str) -> Result<Vec<PolicyPreset>, String> {
        let mut presets = Vec::new();
        for name in text.split(',') {
            let preset: PolicyPreset = name.trim().parse()?;
            if presets.contains(&preset) {
                return Err(format!("policy {:?} is named twice", preset.name()));
            }
            presets.push(preset);
        }
        Ok(presets)
    }

    /// The preset's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            PolicyPreset::Ssh => "ssh",
            PolicyPreset::Fcfs => "fcfs",
            PolicyPreset::Easy => "easy",
            PolicyPreset::Conservative => "conservative",
            PolicyPreset::Full => "full",
            PolicyPreset::Sjf => "sjf",
            PolicyPreset::Las => "las",
            PolicyPreset::Rlscheduler => "rlscheduler",
            PolicyPreset::ConservativeCompress => "conservative-compress",
        }
    }

    /// Sets `cluster`'s policy for this preset: its backfill mode and queue discipline (a
    /// pinned head for `rlscheduler` only). Every preset but `full` drops the queues and
    /// cohorts (no quotas) and zeroes the priority weights (submit order); `full` keeps the
    /// queues and lets each reclaim quota it lent to its cohort; `ssh` also sets
    /// `policy.min_job_age_ms` to 0, so that its host can submit a job again under its id.
    ///
    /// `sjf` and `las` name their plug-in in `policy.plugins`, exactly as a CLUSTER file can:
    /// `sjf` `[{"name": "shortest_first"}]`, `las` `[{"name": "las"}]` with
    /// `policy.preemption` `enabled` and `order_based` and without `anti_thrash`. The list holds
    /// that plug-in alone; when the cluster's list already names it, its entry (with its
    /// parameters) is kept, so a CLUSTER file can tune LAS. The other presets keep the cluster's
    /// `policy.plugins` (absent: the default profile).
    ///
    /// ```
    /// use gangway_sim::PolicyPreset;
    /// use gangway::config::BackfillMode;
    /// let mut cluster = gangway::ClusterConfig::default();
    /// PolicyPreset::Fcfs.configure(&mut cluster);
    /// assert_eq!(cluster.policy.backfill.mode, BackfillMode::None);
    /// PolicyPreset::Rlscheduler.configure(&mut cluster);
    /// assert_eq!(cluster.policy.backfill.mode, BackfillMode::BeforeHeadEstimate);
    /// assert!(cluster.policy.priority.pinned_head);
    /// PolicyPreset::Las.configure(&mut cluster);
    /// assert!(!cluster.policy.priority.pinned_head);
    /// assert_eq!(cluster.policy.plugins.as_ref().unwrap()[0].name, "las");
    /// assert!(cluster.policy.preemption.order_based && !cluster.policy.preemption.anti_thrash);
    ///
    /// // A cluster that names `las` with its own quantum keeps it.
    /// let mut tuned: gangway::ClusterConfig = serde_json::from_str(r#"{"nodes": [],
    ///     "policy": {"plugins": [{"name": "spread"},
    ///                            {"name": "las", "min_quantum_ms": 900000}]}}"#).unwrap();
    /// PolicyPreset::Las.configure(&mut tuned);
    /// let plugins = tuned.policy.plugins.unwrap();
    /// assert_eq!(plugins.len(), 1);
    /// assert_eq!(plugins[0].params["min_quantum_ms"].as_u64(), Some(900_000));
    /// ```
    pub fn configure(self, cluster: &mut ClusterConfig) {
        let policy = &mut cluster.policy;
        policy.backfill.mode = match self {
            PolicyPreset::Ssh | PolicyPreset::Fcfs | PolicyPreset::Las => BackfillMode::None,
            PolicyPreset::Easy | PolicyPreset::Full | PolicyPreset::Sjf => BackfillMode::Easy,
            PolicyPreset::Conservative | PolicyPreset::ConservativeCompress => {
                BackfillMode::Conservative
            }
            PolicyPreset::Rlscheduler => BackfillMode::BeforeHeadEstimate,
        };
        policy.backfill.compress = self == PolicyPreset::ConservativeCompress;
        policy.backfill.depth = None;
        policy.priority.pinned_head = self == PolicyPreset::Rlscheduler;
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
        let plugin = match self {
            PolicyPreset::Sjf => "shortest_first",
            PolicyPreset::Las => "las",
            PolicyPreset::Ssh => {
                // The host submits a job again under its id at each look.
                cluster.policy.min_job_age_ms = 0;
                return;
            }
            PolicyPreset::Fcfs
            | PolicyPreset::Easy
            | PolicyPreset::Conservative
            | PolicyPreset::ConservativeCompress
            | PolicyPreset::Full
            | PolicyPreset::Rlscheduler => return,
        };
        let policy = &mut cluster.policy;
        let own = policy
            .plugins
            .iter()
            .flatten()
            .find(|spec| spec.name == plugin)
            .cloned();
        policy.plugins = Some(vec![own.unwrap_or_else(|| PluginSpec {
            name: plugin.to_string(),
            partition: None,
            tier: 0,
            weight: 1.0,
            params: serde_json::Map::new(),
        })]);
        if self == PolicyPreset::Las {
            policy.preemption.enabled = true;
            policy.preemption.order_based = true;
            policy.preemption.anti_thrash = false;
        }
    }
}

impl std::str::FromStr for PolicyPreset {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        PolicyPreset::EVERY
            .into_iter()
            .find(|p| p.name() == text)
            .ok_or_else(|| {
                format!(
                    "unknown policy {text:?}: expected {}",
                    PolicyPreset::names().join(", ")
                )
            })
    }
}

/// What happens to a job that runs longer than its requested time.
///
/// ```
/// use gangway_sim::Overrun;
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

/// The cluster and jobs of one simulation: the workload on `cluster`'s machine
/// ([`Workload::cluster_on`]: its nodes, the workload's accounts and scaled quotas where the
/// file has none) or on its own ([`Workload::cluster_config`]) when `None`, configured for
/// `preset` and `overrun` (`ssh` always allows overruns), and the workload's jobs (with their quota queues
/// only when the configured cluster has queues).
///
/// ```
/// use gangway_sim::{prepare, Overrun, PolicyPreset};
/// use gangway_sim::workload::gpu_ml::GpuMlParams;
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
    let mut cluster = match cluster {
        Some(machine) => workload.cluster_on(machine),
        None => workload.cluster_config(),
    };
    preset.configure(&mut cluster);
    // Nobody enforces time limits on a machine shared by hand.
    let overrun = if preset == PolicyPreset::Ssh {
        Overrun::Allow
    } else {
        overrun
    };
    overrun.configure(&mut cluster);
    let with_queue = !cluster.queues.is_empty();
    let jobs = workload
        .jobs
        .iter()
        .map(|job| SimJob::from_trace(job, with_queue))
        .collect();
    (cluster, jobs)
}
