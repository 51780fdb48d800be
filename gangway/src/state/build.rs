//! Building a `ClusterState` from a `ClusterConfig`, validating every reference.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{ClusterState, DependencyGraph};
use crate::config::{BackfillCandidates, BackfillMode, ClusterConfig, NodeConfig};
use crate::error::ConfigError;
use crate::model::ids::{ModelId, NodeId, PartitionId};
use crate::model::node::{Node, NodeState, PartitionSet};
use crate::model::resources::{MAX_DEVICES, MAX_NODE_CPUS, MAX_NODE_MEMORY_MIB, NodeAmounts};
use crate::placement::FreeIndex;

/// Most partitions a cluster may have.
pub(crate) const MAX_PARTITIONS: usize = 64;
/// Most GPU models a cluster may have.
pub(crate) const MAX_MODELS: usize = 64;

/// A partition as the scheduler uses it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Partition {
    /// Name.
    pub name: String,
    /// Longest time limit allowed.
    pub max_time_ms: Option<u64>,
    /// Higher tiers are considered first.
    pub priority_tier: i32,
    /// Slurm's `PriorityJobFactor`, normalised by the largest one into the partition factor.
    #[serde(default = "one")]
    pub priority_job_factor: u32,
}

fn one() -> u32 {
    1
}

impl ClusterState {
    /// Builds the state, refusing an invalid configuration with the offending field named.
    pub(crate) fn from_config(config: ClusterConfig) -> Result<Self, ConfigError> {
        config.check_times()?;
        let (partitions, default_partition) = build_partitions(&config)?;
        check_names("cohorts", config.cohorts.iter().map(|c| c.name.as_str()))?;
        let cohorts: BTreeSet<&str> = config.cohorts.iter().map(|c| c.name.as_str()).collect();
        for (i, cohort) in config.cohorts.iter().enumerate() {
            if let Some(parent) = &cohort.parent
                && !cohorts.contains(parent.as_str())
            {
                return Err(ConfigError::new(
                    format!("cohorts[{i}].parent"),
                    format!("unknown cohort \"{parent}\""),
                ));
            }
        }
        check_names("queues", config.queues.iter().map(|q| q.name.as_str()))?;
        for (i, queue) in config.queues.iter().enumerate() {
            if let Some(cohort) = &queue.cohort
                && !cohorts.contains(cohort.as_str())
            {
                return Err(ConfigError::new(
                    format!("queues[{i}].cohort"),
                    format!("unknown cohort \"{cohort}\""),
                ));
            }
            for key in queue.quota.keys() {
                if !crate::quota::keys::is_quota_key(key) {
                    return Err(ConfigError::new(
                        format!("queues[{i}].quota.{key}"),
                        "unknown resource; use cpu, memory_mib, gpu, gpu:MODEL or mig:PROFILE",
                    ));
                }
            }
        }
        check_names("accounts", config.accounts.iter().map(|a| a.name.as_str()))?;
        let accounts: BTreeSet<&str> = config.accounts.iter().map(|a| a.name.as_str()).collect();
        for (i, account) in config.accounts.iter().enumerate() {
            if let Some(parent) = &account.parent
                && !accounts.contains(parent.as_str())
            {
                return Err(ConfigError::new(
                    format!("accounts[{i}].parent"),
                    format!("unknown account \"{parent}\""),
                ));
            }
        }
        check_names("qos", config.qos.iter().map(|q| q.name.as_str()))?;
        for (i, qos) in config.qos.iter().enumerate() {
            if !qos.usage_factor.is_finite() || qos.usage_factor < 0.0 {
                return Err(ConfigError::new(
                    format!("qos[{i}].usage_factor"),
                    format!("{} must be a finite non-negative number", qos.usage_factor),
                ));
            }
        }
        if config.policy.backfill.depth == Some(0) {
            return Err(ConfigError::new(
                "policy.backfill.depth",
                "must be at least 1",
            ));
        }
        if config.policy.backfill.mode.head_rule() && config.policy.backfill.depth.is_some() {
            return Err(ConfigError::new(
                "policy.backfill.depth",
                "applies to modes easy and conservative only: before_head_estimate and rule \
                 make no reservation",
            ));
        }
        if config.policy.backfill.compress
            && config.policy.backfill.mode != BackfillMode::Conservative
        {
            return Err(ConfigError::new(
                "policy.backfill.compress",
                "applies to mode conservative only",
            ));
        }
        if !config.policy.backfill.mode.head_rule()
            && config.policy.backfill.candidates != BackfillCandidates::Order
        {
            return Err(ConfigError::new(
                "policy.backfill.candidates",
                "applies to modes before_head_estimate and rule only",
            ));
        }
        if !config.policy.fair_sharing.strategies_valid() {
            return Err(ConfigError::new(
                "policy.fair_sharing.preemption_strategies",
                "must be [less_than_or_equal_to_final_share], [less_than_initial_share] or both \
                 in that order",
            ));
        }
        if config.policy.fairshare.half_life_ms == 0 {
            return Err(ConfigError::new(
                "policy.fairshare.half_life_ms",
                "must be positive",
            ));
        }
        if config.policy.priority.calc_period_ms == Some(0) {
            return Err(ConfigError::new(
                "policy.priority.calc_period_ms",
                "must be positive (leave it out to calculate at every pass)",
            ));
        }
        if let Some(ready) = &config.policy.wait_for_ready {
            ready.check()?;
        }
        let fairshare = super::usage::build_fairshare(&config)?;
        super::admission::check_admission(&config)?;
        super::topology::check_levels(&config)?;

        let mut state = ClusterState {
            config: Default::default(),
            models: Vec::new(),
            partitions,
            default_partition,
            nodes: Vec::new(),
            node_names: Default::default(),
            jobs: Default::default(),
            free_slots: Vec::new(),
            job_names: Default::default(),
            pending: BTreeSet::new(),
            pending_changes: Default::default(),
            running: BTreeSet::new(),
            ended: VecDeque::new(),
            dependents: DependencyGraph::default(),
            next_arrival: 0,
            now_ms: 0,
            earmarks: BTreeMap::new(),
            over_quota: BTreeSet::new(),
            maintenance: super::Maintenance::default(),
            mig_profiles: Vec::new(),
            fairshare: fairshare.map(Arc::new),
            admission: crate::fairshare::AdmissionLedger::default(),
            licenses: super::licenses::Licenses::new(config.licenses.clone()),
            shape_mix: crate::placement::ShapeMix::default(),
            releases: Default::default(),
            start_epoch: 0,
            mix_epoch: 0,
            index: FreeIndex::default(),
            running_ends: Default::default(),
            billing: Default::default(),
            satisfiable: Default::default(),
            topology: None,
            quota: super::QuotaBook::default(),
            capacity: Default::default(),
        };
        for (i, node) in config.nodes.iter().enumerate() {
            if state.node_names.contains(&node.name) {
                return Err(ConfigError::new(
                    format!("nodes[{i}].name"),
                    format!("duplicate node name \"{}\"", node.name),
                ));
            }
            let built = state.node_from_config(node).map_err(|(field, message)| {
                ConfigError::new(format!("nodes[{i}].{field}"), message)
            })?;
            super::topology::check_node_labels(&config.topology, &built)
                .map_err(|message| ConfigError::new(format!("nodes[{i}].labels"), message))?;
            state.insert_node(built);
        }
        state.build_maintenance(&config.maintenance)?;
        state.config = Arc::new(config);
        state.rebuild_index();
        state.rebuild_quota()?;
        Ok(state)
    }

    /// The backfill depth in effect: reservations for at most this many blocked jobs.
    pub(crate) fn backfill_depth(&self) -> usize {
        let backfill = &self.config.policy.backfill;
        match (backfill.mode, backfill.depth) {
            (BackfillMode::None | BackfillMode::BeforeHeadEstimate | BackfillMode::Rule, _) => 0,
            (_, Some(depth)) => depth as usize,
            (BackfillMode::Easy, None) => 1,
            (BackfillMode::Conservative, None) => usize::MAX,
        }
    }

    /// Interns a GPU model name.
    pub(crate) fn intern_model(&mut self, name: &str) -> Result<ModelId, String> {
        if let Some(i) = self.models.iter().position(|m| m == name) {
            return Ok(ModelId(i as u32));
        }
        if self.models.len() >= MAX_MODELS {
            return Err(format!("more than {MAX_MODELS} GPU models"));
        }
        self.models.push(name.to_string());
        Ok(ModelId(self.models.len() as u32 - 1))
    }

    /// Turns a node entry into a `Node`; errors are (field, message).
    pub(crate) fn node_from_config(&mut self, cfg: &NodeConfig) -> Result<Node, (String, String)> {
        if cfg.name.is_empty() {
            return Err(("name".into(), "must not be empty".into()));
        }
        if cfg.cpus.milli() > MAX_NODE_CPUS * 1000 {
            return Err((
                "cpus".into(),
                format!(
                    "{} cpus; at most {MAX_NODE_CPUS} per node",
                    cfg.cpus.milli() / 1000
                ),
            ));
        }
        if cfg.memory_mib > MAX_NODE_MEMORY_MIB {
            return Err((
                "memory_mib".into(),
                format!(
                    "{} MiB; at most {MAX_NODE_MEMORY_MIB} per node",
                    cfg.memory_mib
                ),
            ));
        }
        let mut partitions = PartitionSet::default();
        match &cfg.partitions {
            None => {
                for p in 0..self.partitions.len() {
                    partitions.insert(PartitionId(p as u32));
                }
            }
            Some(names) => {
                for (j, name) in names.iter().enumerate() {
                    let p = self.partition_id(name).ok_or_else(|| {
                        (
                            format!("partitions[{j}]"),
                            format!("unknown partition \"{name}\""),
                        )
                    })?;
                    partitions.insert(p);
                }
            }
        }
        let mig_plan = match &cfg.gpus {
            Some(g) => super::mig::plan(g)?,
            None => Vec::new(),
        };
        let (gpu_count, gpu_model, gpu_memory_mib, gpu_uuids) = match &cfg.gpus {
            None => (0, None, 0, Vec::new()),
            Some(g) => {
                if g.count as usize > MAX_DEVICES {
                    return Err((
                        "gpus.count".into(),
                        format!("{} devices; at most {MAX_DEVICES} per node", g.count),
                    ));
                }
                if g.model.is_empty() {
                    return Err(("gpus.model".into(), "must not be empty".into()));
                }
                if !g.uuids.is_empty() && g.uuids.len() != g.count as usize {
                    return Err((
                        "gpus.uuids".into(),
                        format!("{} uuids for {} devices", g.uuids.len(), g.count),
                    ));
                }
                let model = self
                    .intern_model(&g.model)
                    .map_err(|m| ("gpus.model".into(), m))?;
                (g.count as usize, Some(model), g.memory_mib, g.uuids.clone())
            }
        };
        let nvlink_islands = match &cfg.gpus {
            None => Vec::new(),
            Some(g) => island_masks(&g.nvlink_islands, gpu_count)?,
        };
        let mig = self.intern_mig(&mig_plan);
        let mut capacity = NodeAmounts::full(cfg.cpus.milli(), cfg.memory_mib, gpu_count);
        for slice in &mig.slices {
            capacity.devices[slice.gpu as usize] = 0;
        }
        capacity.mig = mig.all();
        Ok(Node {
            name: cfg.name.clone(),
            capacity,
            gpu_count,
            gpu_model,
            gpu_memory_mib,
            gpu_uuids,
            labels: cfg.labels.clone(),
            partitions,
            state: NodeState::Up,
            used: NodeAmounts::default(),
            running_jobs: 0,
            down_gpus: 0,
            nvlink_islands,
            mig,
            gpu_faults: Vec::new(),
        })
    }

    /// Adds a built node, returning its id.
    pub(crate) fn insert_node(&mut self, node: Node) -> NodeId {
        self.satisfiable.clear();
        let id = NodeId(self.nodes.len() as u32);
        self.capacity.add(&node);
        self.node_names.insert(&node.name, id);
        self.nodes.push(Some(node));
        id
    }

    /// A partition's id by name.
    pub(crate) fn partition_id(&self, name: &str) -> Option<PartitionId> {
        self.partitions
            .iter()
            .position(|p| p.name == name)
            .map(|i| PartitionId(i as u32))
    }
}

/// NVLink islands as device bitmasks; an index past the node's devices is refused.
fn island_masks(islands: &[Vec<u32>], gpu_count: usize) -> Result<Vec<u32>, (String, String)> {
    islands
        .iter()
        .enumerate()
        .map(|(i, island)| {
            island.iter().try_fold(0u32, |mask, device| {
                if (*device as usize) < gpu_count {
                    Ok(mask | 1u32 << device)
                } else {
                    Err((
                        format!("gpus.nvlink_islands[{i}]"),
                        format!("device {device} does not exist (the node has {gpu_count} GPUs)"),
                    ))
                }
            })
        })
        .collect()
}

fn check_names<'a>(what: &str, names: impl Iterator<Item = &'a str>) -> Result<(), ConfigError> {
    let mut seen = BTreeSet::new();
    for (i, name) in names.enumerate() {
        if name.is_empty() {
            return Err(ConfigError::new(
                format!("{what}[{i}].name"),
                "must not be empty",
            ));
        }
        if !seen.insert(name) {
            return Err(ConfigError::new(
                format!("{what}[{i}].name"),
                format!("duplicate name \"{name}\""),
            ));
        }
    }
    Ok(())
}

fn build_partitions(config: &ClusterConfig) -> Result<(Vec<Partition>, PartitionId), ConfigError> {
    if config.partitions.is_empty() {
        let implicit = Partition {
            name: "default".into(),
            max_time_ms: None,
            priority_tier: 0,
            priority_job_factor: 1,
        };
        return Ok((vec![implicit], PartitionId(0)));
    }
    check_names(
        "partitions",
        config.partitions.iter().map(|p| p.name.as_str()),
    )?;
    if config.partitions.len() > MAX_PARTITIONS {
        return Err(ConfigError::new(
            "partitions",
            format!("at most {MAX_PARTITIONS} partitions"),
        ));
    }
    let defaults: Vec<usize> = config
        .partitions
        .iter()
        .enumerate()
        .filter(|(_, p)| p.default)
        .map(|(i, _)| i)
        .collect();
    if defaults.len() > 1 {
        return Err(ConfigError::new(
            format!("partitions[{}].default", defaults[1]),
            "only one partition may be the default",
        ));
    }
    let partitions = config
        .partitions
        .iter()
        .map(|p| Partition {
            name: p.name.clone(),
            max_time_ms: p.max_time_ms,
            priority_tier: p.priority_tier,
            priority_job_factor: p.priority_job_factor,
        })
        .collect();
    Ok((
        partitions,
        PartitionId(defaults.first().copied().unwrap_or(0) as u32),
    ))
}
