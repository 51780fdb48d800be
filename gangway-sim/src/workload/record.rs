//! The neutral workload records every reader and generator produces, and their conversion to a
//! cluster configuration.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use super::skip::SkipCounts;
use gangway::Milli;
use gangway::config::{
    AccountConfig, ClusterConfig, CohortConfig, GpuConfig, NodeConfig, PartitionConfig,
    QueueConfig, QuotaConfig,
};

/// One job of a workload: a gang of `tasks` identical tasks.
///
/// Strings that a trace does not give (`user`, `account`, `queue`) are empty.
///
/// ```
/// use gangway_sim::workload::{TraceJob, TracePlacement};
/// let job = TraceJob {
///     id: "7".into(), submit_ms: 1_000, run_ms: 60_000, time_limit_ms: 120_000,
///     tasks: 4, cpus_per_task_milli: 1_000, memory_mib_per_task: 0,
///     gpus_per_task_milli: 500, gpu_models: vec!["T4".into()],
///     user: "u1".into(), account: "g1".into(), queue: String::new(),
///     placement: TracePlacement::Spread, priority: 0,
/// };
/// assert_eq!(job.gpus_milli(), 2_000);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceJob {
    /// Unique id (the SWF job number, the Alibaba pod name, the generator's sequence number).
    pub id: String,
    /// When the job is submitted, in ms from the start of the workload.
    pub submit_ms: u64,
    /// How long the job actually runs once started, in ms (> 0).
    pub run_ms: u64,
    /// The time limit the job asks for, in ms (> 0; may be below `run_ms` when the trace's job
    /// overran its request).
    pub time_limit_ms: u64,
    /// Number of tasks of the gang (≥ 1).
    pub tasks: u32,
    /// Cpus of one task, in thousandths.
    pub cpus_per_task_milli: u64,
    /// Memory of one task in MiB.
    pub memory_mib_per_task: u64,
    /// GPUs of one task in thousandths: 1000 is one device, below 1000 a shareable fraction of
    /// one device, a multiple of 1000 whole devices.
    pub gpus_per_task_milli: u64,
    /// Allowed GPU models; empty means any.
    pub gpu_models: Vec<String>,
    /// The submitting user; empty when unknown.
    pub user: String,
    /// The account charged; empty when unknown.
    pub account: String,
    /// The quota queue; empty for none.
    pub queue: String,
    /// How the tasks are placed on nodes.
    pub placement: TracePlacement,
    /// Base priority, higher first ([`gangway::JobSpec::priority`]): an Alibaba pod's QoS
    /// class under [`super::QosPriority`]; 0 elsewhere.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub priority: i32,
}

fn is_zero(priority: &i32) -> bool {
    *priority == 0
}

impl TraceJob {
    /// A parallel-workload job as the SWF reader and the Lublin model give it: `tasks` tasks of
    /// one cpu each, spread, no memory or GPUs, no user, account or queue, priority 0.
    ///
    /// ```
    /// use gangway_sim::workload::TraceJob;
    /// let job = TraceJob::one_cpu_tasks("7".into(), 1_000, 60_000, 120_000, 4);
    /// assert_eq!((job.tasks, job.cpus_per_task_milli, job.gpus_milli()), (4, 1_000, 0));
    /// ```
    pub fn one_cpu_tasks(
        id: String,
        submit_ms: u64,
        run_ms: u64,
        time_limit_ms: u64,
        tasks: u32,
    ) -> Self {
        TraceJob {
            id,
            submit_ms,
            run_ms,
            time_limit_ms,
            tasks,
            cpus_per_task_milli: 1000,
            memory_mib_per_task: 0,
            gpus_per_task_milli: 0,
            gpu_models: Vec::new(),
            user: String::new(),
            account: String::new(),
            queue: String::new(),
            placement: TracePlacement::Spread,
            priority: 0,
        }
    }

    /// GPUs of the whole job, in thousandths.
    ///
    /// ```
    /// # use gangway_sim::workload::gpu_ml::GpuMlParams;
    /// let workload = GpuMlParams { jobs: 5, ..GpuMlParams::default() }.generate().unwrap();
    /// let job = &workload.jobs[0];
    /// assert_eq!(job.gpus_milli(), u64::from(job.tasks) * job.gpus_per_task_milli);
    /// ```
    pub fn gpus_milli(&self) -> u64 {
        u64::from(self.tasks).saturating_mul(self.gpus_per_task_milli)
    }
}

/// How a gang's tasks are spread over nodes: the engine's own [`PlacementMode`](gangway::PlacementMode), so a trace job
/// converts without a mapping.
///
/// ```
/// use gangway_sim::workload::TracePlacement;
/// assert_eq!(serde_json::to_string(&TracePlacement::StrictSpread).unwrap(), "\"strict_spread\"");
/// ```
pub use gangway::PlacementMode as TracePlacement;

/// One node of a workload's machine.
///
/// ```
/// use gangway_sim::workload::TraceNode;
/// let node = TraceNode { name: "n1".into(), cpus_milli: 64_000, memory_mib: 262_144,
///                        gpu_model: Some("P100".into()), gpus: 2, gpu_memory_mib: 0 };
/// assert_eq!(node.gpus, 2);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceNode {
    /// Unique name.
    pub name: String,
    /// Cpus in thousandths.
    pub cpus_milli: u64,
    /// Memory in MiB.
    pub memory_mib: u64,
    /// The model of the node's GPUs; `None` when it has none or the trace does not say.
    pub gpu_model: Option<String>,
    /// Number of GPU devices.
    pub gpus: u32,
    /// Memory of one GPU device in MiB; 0 when unknown.
    pub gpu_memory_mib: u64,
}

/// A team: an account of the share tree, optionally with a GPU quota.
///
/// ```
/// use gangway_sim::workload::TraceAccount;
/// let team = TraceAccount { name: "vision".into(), shares: 40, gpu_quota: Some(192) };
/// assert_eq!(team.shares, 40);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceAccount {
    /// Unique name; jobs name it in `account` (and in `queue` when it has a quota).
    pub name: String,
    /// Fair-share shares relative to the other accounts.
    pub shares: u32,
    /// Nominal GPU quota (whole GPUs) of the queue of the same name; `None`: no queue.
    pub gpu_quota: Option<u32>,
}

/// A whole workload: the machine, the jobs in submit order, the accounts, and what a reader
/// skipped.
///
/// ```
/// use gangway_sim::workload::gpu_ml::GpuMlParams;
/// let workload = GpuMlParams { jobs: 20, ..GpuMlParams::default() }.generate().unwrap();
/// assert!(workload.jobs.windows(2).all(|w| w[0].submit_ms <= w[1].submit_ms));
/// assert_eq!(workload.skipped.total(), 0);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Workload {
    /// The machine's nodes.
    pub nodes: Vec<TraceNode>,
    /// The jobs, ordered by submit time (ties in the reader's documented order).
    pub jobs: Vec<TraceJob>,
    /// Accounts (teams) with shares and quotas; empty when the workload has none.
    pub accounts: Vec<TraceAccount>,
    /// Records a reader left out, per reason.
    pub skipped: SkipCounts,
    /// The longest time limit the machine accepts: [`Workload::cluster_config`] gives the
    /// cluster one partition, [`PARTITION`], with this `max_time_ms`. `None` (every reader,
    /// and the generators but for [`TimeLimit::PartitionMax`]): no partition, no maximum.
    ///
    /// [`TimeLimit::PartitionMax`]: super::gpu_ml::TimeLimit::PartitionMax
    ///
    /// ```
    /// use gangway_sim::workload::gpu_ml::GpuMlParams;
    /// let workload = GpuMlParams { jobs: 1, ..GpuMlParams::default() }.generate().unwrap();
    /// assert_eq!(workload.max_time_ms, None);
    /// assert!(workload.cluster_config().partitions.is_empty());
    /// ```
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_time_ms: Option<u64>,
}

/// The most nodes a workload's machine may have: a guard against absurd headers and parameters
/// that would otherwise allocate without bound.
///
/// ```
/// assert_eq!(gangway_sim::workload::MAX_NODES, 1 << 20);
/// ```
pub const MAX_NODES: u64 = 1 << 20;

/// The cohort that [`Workload::cluster_config`] puts every quota queue in.
pub const QUOTA_COHORT: &str = "all";

/// The name of the one partition [`Workload::cluster_config`] makes for a workload with a
/// [`Workload::max_time_ms`]: `default`, the name the scheduler gives the implicit partition of
/// a cluster without partitions, so only the maximum time differs.
///
/// ```
/// assert_eq!(gangway_sim::workload::PARTITION, "default");
/// ```
pub const PARTITION: &str = "default";

impl Workload {
    /// The cluster configuration of this workload: one [`NodeConfig`] per node (a node with GPUs
    /// but no model gets the model `gpu`), one root-level account per [`TraceAccount`], and for
    /// each account with a GPU quota a queue of the same name with quota `gpu` (any model) in the
    /// cohort [`QUOTA_COHORT`], so that teams lend each other idle GPUs. With a
    /// [`Workload::max_time_ms`], one partition [`PARTITION`] (every node's) with that
    /// `max_time_ms`; without, no partition. Queue preemption and policy are left at their
    /// defaults for the caller to set.
    ///
    /// ```
    /// use gangway_sim::workload::gpu_ml::GpuMlParams;
    /// let workload = GpuMlParams { jobs: 1, ..GpuMlParams::default() }.generate().unwrap();
    /// let cluster = workload.cluster_config();
    /// assert_eq!(cluster.nodes.len(), 64);
    /// assert_eq!(cluster.nodes[0].gpus.as_ref().unwrap().count, 8);
    /// assert_eq!(cluster.queues.len(), workload.accounts.len());
    /// assert_eq!(cluster.cohorts[0].name, "all");
    /// ```
    pub fn cluster_config(&self) -> ClusterConfig {
        let nodes = self.nodes.iter().map(node_config).collect();
        let accounts = self
            .accounts
            .iter()
            .map(|account| AccountConfig {
                name: account.name.clone(),
                parent: None,
                shares: account.shares,
                users: IndexMap::new(),
            })
            .collect();
        let queues: Vec<QueueConfig> = self
            .accounts
            .iter()
            .filter_map(|account| {
                let quota = account.gpu_quota?;
                let mut quotas = IndexMap::new();
                quotas.insert(
                    "gpu".to_string(),
                    QuotaConfig {
                        nominal: Milli::from_units(u64::from(quota)),
                        borrowing_limit: None,
                        lending_limit: None,
                    },
                );
                Some(QueueConfig {
                    name: account.name.clone(),
                    cohort: Some(QUOTA_COHORT.to_string()),
                    quota: quotas,
                    ..QueueConfig::default()
                })
            })
            .collect();
        let cohorts = if queues.is_empty() {
            Vec::new()
        } else {
            vec![CohortConfig {
                name: QUOTA_COHORT.to_string(),
                ..CohortConfig::default()
            }]
        };
        let partitions = self
            .max_time_ms
            .map(|max| PartitionConfig {
                name: PARTITION.to_string(),
                max_time_ms: Some(max),
                ..PartitionConfig::default()
            })
            .into_iter()
            .collect();
        ClusterConfig {
            nodes,
            partitions,
            cohorts,
            queues,
            accounts,
            ..ClusterConfig::default()
        }
    }
}

impl Workload {
    /// The cluster configuration of this workload on another machine (`gangway simulate
    /// --cluster`): `machine`'s nodes, and what `machine` brings of its own (accounts, queues and
    /// cohorts, partitions, every other setting), with this workload's own configuration
    /// ([`Workload::cluster_config`]) where `machine` has none: its accounts and their shares
    /// when `machine` has no accounts; its quota queues and their cohort when `machine` has
    /// neither queues nor cohorts, each GPU quota scaled by `machine`'s GPUs over the workload's
    /// own (largest remainders, so that the quotas keep their sum in proportion); its partition
    /// (a maximum time limit) when `machine` has no partitions.
    ///
    /// ```
    /// use gangway_sim::team::TeamParams;
    /// let workload = TeamParams::default().generate().unwrap(); // 32 GPUs, quotas 13/10/6/3
    /// let machine: gangway::ClusterConfig = serde_json::from_str(r#"{"nodes": [
    ///     {"name": "a", "cpus": 32, "memory_mib": 256000, "gpus": {"model": "a100", "count": 8}},
    ///     {"name": "b", "cpus": 32, "memory_mib": 256000, "gpus": {"model": "a100", "count": 8}}]}"#).unwrap();
    /// let cluster = workload.cluster_on(&machine);
    /// assert_eq!(cluster.nodes, machine.nodes);
    /// assert_eq!(cluster.accounts.len(), 4);
    /// let quotas: Vec<u64> = cluster.queues.iter().map(|q| q.quota["gpu"].nominal.units()).collect();
    /// assert_eq!(quotas, [7, 5, 3, 1]); // 16 GPUs: half of 13, 10, 6, 3, by largest remainder
    /// ```
    pub fn cluster_on(&self, machine: &ClusterConfig) -> ClusterConfig {
        let own_gpus: u64 = self.nodes.iter().map(|n| u64::from(n.gpus)).sum();
        let machine_gpus: u64 = machine
            .nodes
            .iter()
            .filter_map(|n| n.gpus.as_ref())
            .map(|g| u64::from(g.count))
            .sum();
        let mut own = Workload {
            nodes: Vec::new(),
            jobs: Vec::new(),
            accounts: self.accounts.clone(),
            skipped: SkipCounts::default(),
            max_time_ms: self.max_time_ms,
        };
        if own_gpus > 0 && own_gpus != machine_gpus {
            let quotas: Vec<u64> = own
                .accounts
                .iter()
                .map(|a| a.gpu_quota.map_or(0, u64::from))
                .collect();
            let scaled = scale_largest_remainder(&quotas, machine_gpus, own_gpus);
            for (account, quota) in own.accounts.iter_mut().zip(scaled) {
                if account.gpu_quota.is_some() {
                    account.gpu_quota = Some(u32::try_from(quota).unwrap_or(u32::MAX));
                }
            }
        }
        let own = own.cluster_config();
        let mut cluster = machine.clone();
        if cluster.accounts.is_empty() {
            cluster.accounts = own.accounts;
        }
        if cluster.queues.is_empty() && cluster.cohorts.is_empty() {
            cluster.queues = own.queues;
            cluster.cohorts = own.cohorts;
        }
        if cluster.partitions.is_empty() {
            cluster.partitions = own.partitions;
        }
        cluster
    }
}

/// `values` × `numerator` / `denominator`, each rounded down, then the units the rounding lost
/// (of the rounded total) given one each to the largest remainders (the first on ties).
pub(crate) fn scale_largest_remainder(
    values: &[u64],
    numerator: u64,
    denominator: u64,
) -> Vec<u64> {
    let exact: Vec<u128> = values
        .iter()
        .map(|&v| u128::from(v) * u128::from(numerator))
        .collect();
    let denominator = u128::from(denominator.max(1));
    let mut scaled: Vec<u64> = exact
        .iter()
        .map(|&e| u64::try_from(e / denominator).unwrap_or(u64::MAX))
        .collect();
    let total: u128 = exact.iter().sum();
    let target = (total + denominator / 2) / denominator;
    let have: u128 = scaled.iter().map(|&s| u128::from(s)).sum();
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(exact[i] % denominator));
    for &i in order
        .iter()
        .take(usize::try_from(target.saturating_sub(have)).unwrap_or(0))
    {
        scaled[i] = scaled[i].saturating_add(1);
    }
    scaled
}

fn node_config(node: &TraceNode) -> NodeConfig {
    let gpus = (node.gpus > 0).then(|| GpuConfig {
        model: node.gpu_model.clone().unwrap_or_else(|| "gpu".to_string()),
        count: node.gpus,
        memory_mib: node.gpu_memory_mib,
        ..GpuConfig::default()
    });
    NodeConfig {
        name: node.name.clone(),
        cpus: Milli::from_milli(node.cpus_milli),
        memory_mib: node.memory_mib,
        gpus,
        labels: IndexMap::new(),
        partitions: None,
    }
}

/// `count` identical cpu-only nodes of `cpus` cpus, named `n1`, `n2`, … with the numbers
/// zero-padded to one width so that names sort in node order.
pub(crate) fn cpu_nodes(count: u64, cpus: u64) -> Vec<TraceNode> {
    let width = count.to_string().len();
    (1..=count)
        .map(|index| TraceNode {
            name: format!("n{index:0width$}"),
            cpus_milli: cpus.saturating_mul(1000),
            memory_mib: 0,
            gpu_model: None,
            gpus: 0,
            gpu_memory_mib: 0,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_nodes_are_zero_padded_and_sized() {
        let nodes = cpu_nodes(12, 2);
        assert_eq!(nodes.len(), 12);
        assert_eq!(nodes[0].name, "n01");
        assert_eq!(nodes[11].name, "n12");
        assert!(nodes.iter().all(|n| n.cpus_milli == 2000 && n.gpus == 0));
    }

    #[test]
    fn cluster_config_converts_nodes_accounts_and_quota_queues() {
        let workload = Workload {
            nodes: vec![
                TraceNode {
                    name: "g1".into(),
                    cpus_milli: 96_500,
                    memory_mib: 1024,
                    gpu_model: Some("T4".into()),
                    gpus: 2,
                    gpu_memory_mib: 15_360,
                },
                TraceNode {
                    name: "c1".into(),
                    cpus_milli: 8_000,
                    memory_mib: 64,
                    gpu_model: None,
                    gpus: 0,
                    gpu_memory_mib: 0,
                },
            ],
            jobs: Vec::new(),
            accounts: vec![
                TraceAccount {
                    name: "a".into(),
                    shares: 3,
                    gpu_quota: Some(2),
                },
                TraceAccount {
                    name: "b".into(),
                    shares: 1,
                    gpu_quota: None,
                },
            ],
            skipped: SkipCounts::default(),
            max_time_ms: None,
        };
        let cluster = workload.cluster_config();
        assert_eq!(cluster.nodes[0].cpus, Milli::from_milli(96_500));
        let gpus = cluster.nodes[0].gpus.as_ref().expect("GPU node");
        assert_eq!(
            (gpus.model.as_str(), gpus.count, gpus.memory_mib),
            ("T4", 2, 15_360)
        );
        assert!(cluster.nodes[1].gpus.is_none());
        assert_eq!(cluster.accounts.len(), 2);
        assert_eq!(cluster.accounts[0].shares, 3);
        assert_eq!(cluster.queues.len(), 1);
        assert_eq!(cluster.queues[0].name, "a");
        assert_eq!(cluster.queues[0].cohort.as_deref(), Some(QUOTA_COHORT));
        assert_eq!(cluster.queues[0].quota["gpu"].nominal, Milli::from_units(2));
        assert_eq!(cluster.cohorts.len(), 1);
    }

    #[test]
    fn cluster_config_without_quotas_has_no_cohort() {
        let workload = Workload {
            nodes: cpu_nodes(2, 1),
            ..Workload::default()
        };
        let cluster = workload.cluster_config();
        assert!(cluster.cohorts.is_empty() && cluster.queues.is_empty());
        assert!(cluster.partitions.is_empty());
        assert_eq!(cluster.nodes[1].cpus, Milli::ONE);
    }

    #[test]
    fn a_maximum_time_makes_one_partition_of_every_node() {
        let workload = Workload {
            nodes: cpu_nodes(2, 1),
            max_time_ms: Some(3_600_000),
            ..Workload::default()
        };
        let cluster = workload.cluster_config();
        assert_eq!(cluster.partitions.len(), 1);
        assert_eq!(cluster.partitions[0].name, PARTITION);
        assert_eq!(cluster.partitions[0].max_time_ms, Some(3_600_000));
        assert!(cluster.nodes.iter().all(|n| n.partitions.is_none()));
        let copy: Workload =
            serde_json::from_str(&serde_json::to_string(&workload).expect("json")).expect("json");
        assert_eq!(copy, workload);
        let without: Workload =
            serde_json::from_str(r#"{"nodes": [], "jobs": [], "accounts": [], "skipped": {}}"#)
                .expect("json");
        assert_eq!(without.max_time_ms, None);
    }
}
