//! Run-time reconfiguration: a new CLUSTER replaces partitions, cohorts, queues, accounts, QoS
//! and policy, while the node table and every job stay.
//!
//! - **Nodes.** The running node table is kept as it is (capacity, GPUs, state, allocations,
//!   nodes added or removed by events). The new `nodes` list only decides partition membership:
//!   a running node with an entry of its name joins the partitions that entry lists (every
//!   partition when it lists none); a running node without an entry stays in the new partitions
//!   that have the name of one it was in. Entries naming no running node are ignored.
//! - **Jobs.** Every pending and running job must still name an existing partition, queue, QoS
//!   and account (when accounts are configured), and a pending job must fit its partition's
//!   `max_time_ms`; otherwise the reconfiguration is refused with the job and the missing name,
//!   and nothing changes. A job naming no partition moves to the new default partition. Ended
//!   jobs follow where they can; one whose account is gone keeps no association.
//! - **Quota.** The quota tree is rebuilt from the new queues and cohorts and charged with the
//!   running jobs. Running jobs keep running even if that leaves queues over their new limits;
//!   those jobs are remembered in [`ClusterState::over_quota`] and the limit invariant ignores
//!   their usage until they end (admission still counts it). Earmarks of waiting preemptors are
//!   released: their victims keep stopping, and the preemptors compete again under the new
//!   configuration.
//! - **Fair-share.** The usage ledger carries over by account and user name
//!   ([`crate::fairshare::FairShare::reconfigured`]); each job is associated again by its
//!   account and user.
//!
//! The state changes in place, in two steps: [`ClusterState::plan_reconfiguration`] reads the
//! state and makes every check that can refuse, keeping what is new per node and per job (a
//! partition set, a partition, an association, topology needs) beside the state; then
//! [`ClusterState::apply_reconfiguration`], which cannot fail, writes it in. An earlier version
//! worked on a clone of the whole state, so a reconfiguration held two states at once: about
//! 20 MiB more at the soak's 1,000 nodes and 12,700 live jobs, which the C allocator kept as
//! resident memory after it was freed (BENCHMARKS.md, "Soak").

use std::collections::BTreeMap;
use std::sync::Arc;

use super::usage::association_in;
use super::{ClusterState, Partition};
use crate::config::{ClusterConfig, NodeConfig};
use crate::error::ConfigError;
use crate::fairshare::{AssocId, FairShare};
use crate::model::ids::PartitionId;
use crate::model::node::PartitionSet;
use crate::model::topology::LevelNeed;
use crate::placement::FreeIndex;
use crate::quota::QuotaTree;
use crate::state::JobState;

/// A checked reconfiguration of a state, from [`ClusterState::plan_reconfiguration`]: what
/// [`ClusterState::apply_reconfiguration`] writes in. The per-node and per-job vectors are
/// indexed by slot (empty slots hold a default).
pub(crate) struct Reconfiguration {
    config: ClusterConfig,
    partitions: Vec<Partition>,
    default_partition: PartitionId,
    /// Each node's partitions under the new list.
    node_partitions: Vec<PartitionSet>,
    /// Each job's partition.
    job_partitions: Vec<PartitionId>,
    fairshare: Option<FairShare>,
    /// Each job's association with the new fair-share engine.
    assocs: Vec<Option<AssocId>>,
    /// Each job's compiled topology constraints.
    topology: Vec<Vec<Option<LevelNeed>>>,
    quota_tree: Option<QuotaTree>,
}

impl Reconfiguration {
    /// The new partitions (for the profile's check before the state changes).
    pub(crate) fn partitions(&self) -> &[Partition] {
        &self.partitions
    }
}

impl ClusterState {
    /// Checks `config` against this state, as the module documentation describes, and returns
    /// what [`ClusterState::apply_reconfiguration`] needs; the state is unchanged. Errors name
    /// the offending field, or the job that would lose its partition, queue, QoS or account.
    pub(crate) fn plan_reconfiguration(
        &self,
        config: ClusterConfig,
    ) -> Result<Reconfiguration, ConfigError> {
        // Validates every section; its nodes and models are discarded.
        let fresh = ClusterState::from_config(config.clone())?;
        let node_partitions = self.new_memberships(&fresh.partitions, &config);
        let job_partitions = self.new_job_partitions(&fresh, &config)?;
        let mut fairshare = match &self.fairshare {
            Some(old) if fresh.fairshare.is_some() => {
                Some(old.reconfigured(&config.accounts, &config.policy.fairshare, self.now_ms)?)
            }
            _ => fresh.fairshare.map(Arc::unwrap_or_clone),
        };
        let assocs = self.new_associations(fairshare.as_mut())?;
        let topology = self.new_topology(&config)?;
        let quota_tree = self.quota_tree_for(&config)?;
        Ok(Reconfiguration {
            config,
            partitions: fresh.partitions,
            default_partition: fresh.default_partition,
            node_partitions,
            job_partitions,
            fairshare,
            assocs,
            topology,
            quota_tree,
        })
    }

    /// Writes in a reconfiguration planned on this state (with nothing changed since).
    pub(crate) fn apply_reconfiguration(&mut self, plan: Reconfiguration) {
        let Reconfiguration {
            config,
            partitions,
            default_partition,
            node_partitions,
            job_partitions,
            fairshare,
            assocs,
            mut topology,
            quota_tree,
        } = plan;
        debug_assert_eq!(job_partitions.len(), self.jobs.len());
        debug_assert_eq!(node_partitions.len(), self.nodes.len());
        self.partitions = partitions;
        self.default_partition = default_partition;
        self.satisfiable.clear();
        for (node, set) in self.nodes.iter_mut().zip(node_partitions) {
            if let Some(node) = node {
                node.partitions = set;
            }
        }
        // The free index groups nodes alike by their partitions too.
        self.index = FreeIndex::build(&self.nodes, self.models.len());
        self.fairshare = fairshare.map(Arc::new);
        for (id, job) in self.jobs.iter_mut() {
            let slot = id.index();
            job.partition = job_partitions[slot];
            job.assoc = assocs[slot];
            job.topology = std::mem::take(&mut topology[slot]);
        }
        if config.policy.wait_for_ready.is_none() {
            self.forget_readiness();
        }
        self.admission.retain_queues(|name| {
            config
                .queues
                .iter()
                .any(|q| q.name == name && q.admission_fair_sharing)
        });
        self.config = Arc::new(config);
        self.rebuild_billing_rates();
        self.rebuild_topology();
        self.earmarks.clear();
        self.install_quota(quota_tree);
        self.over_quota.clear();
        if self
            .quota
            .tree
            .as_ref()
            .is_some_and(|t| t.check_limits().is_err())
        {
            self.over_quota = self.quota.charged.keys().copied().collect();
        }
    }

    /// Each node's partitions under `partitions` (indexed by node slot).
    fn new_memberships(
        &self,
        partitions: &[Partition],
        config: &ClusterConfig,
    ) -> Vec<PartitionSet> {
        let entries: BTreeMap<&str, &NodeConfig> =
            config.nodes.iter().map(|n| (n.name.as_str(), n)).collect();
        let mut sets = vec![PartitionSet::default(); self.nodes.len()];
        for (node, set) in self.nodes.iter().zip(&mut sets) {
            let Some(node) = node else { continue };
            let entry = entries.get(node.name.as_str());
            for (p, partition) in partitions.iter().enumerate() {
                let member = match entry {
                    Some(entry) => entry
                        .partitions
                        .as_ref()
                        .is_none_or(|names| names.contains(&partition.name)),
                    None => self
                        .partition_id(&partition.name)
                        .is_some_and(|was| node.partitions.contains(was)),
                };
                if member {
                    set.insert(PartitionId(p as u32));
                }
            }
        }
        sets
    }

    /// Each job's partition under `fresh`'s list (indexed by job slot), checking that live
    /// jobs still find their partition, queue and QoS.
    fn new_job_partitions(
        &self,
        fresh: &ClusterState,
        config: &ClusterConfig,
    ) -> Result<Vec<PartitionId>, ConfigError> {
        let default_partition = fresh.default_partition;
        let partitions = &fresh.partitions;
        let mut found_partitions = vec![default_partition; self.jobs.len()];
        for (id, job) in self.jobs.iter() {
            let found_partition = &mut found_partitions[id.index()];
            let live = !matches!(job.state, JobState::Ended { .. });
            let id = &job.spec.id;
            let name = job.spec.partition.as_deref();
            let found = match name {
                None => Some(default_partition),
                Some(name) => partitions
                    .iter()
                    .position(|p| p.name == name)
                    .map(|i| PartitionId(i as u32)),
            };
            *found_partition = match (found, live) {
                (Some(p), _) => p,
                (None, false) => default_partition,
                (None, true) => {
                    return Err(missing(id, "partitions", "partition", name.unwrap_or("")));
                }
            };
            if !live {
                continue;
            }
            let partition = &partitions[found_partition.index()];
            if let Some(max) = partition.max_time_ms
                && job.state == JobState::Pending
                && job.spec.time_limit_ms > max
            {
                return Err(ConfigError::new(
                    format!("partitions[{}].max_time_ms", found_partition.index()),
                    format!(
                        "pending job \"{id}\" has time_limit_ms {} above the new maximum {max}",
                        job.spec.time_limit_ms
                    ),
                ));
            }
            if let Some(queue) = &job.spec.queue
                && !config.queues.iter().any(|q| &q.name == queue)
            {
                return Err(missing(id, "queues", "queue", queue));
            }
            if let Some(qos) = &job.spec.qos
                && config.qos(qos).is_none()
            {
                return Err(missing(id, "qos", "qos", qos));
            }
            if let Some(account) = &job.spec.account
                && !config.accounts.is_empty()
                && !config.accounts.iter().any(|a| &a.name == account)
            {
                return Err(missing(id, "accounts", "account", account));
            }
        }
        Ok(found_partitions)
    }

    /// Each job's association with the new fair-share engine (indexed by job slot, in slot
    /// order, as the engine hands out ids); an ended job whose account is gone keeps none.
    fn new_associations(
        &self,
        mut fairshare: Option<&mut FairShare>,
    ) -> Result<Vec<Option<AssocId>>, ConfigError> {
        let mut assocs = vec![None; self.jobs.len()];
        for (id, job) in self.jobs.iter() {
            let assoc = &mut assocs[id.index()];
            let ended = matches!(job.state, JobState::Ended { .. });
            *assoc = match association_in(fairshare.as_deref_mut(), &job.spec) {
                Ok(assoc) => assoc,
                Err(_) if ended => None,
                Err(e) => return Err(ConfigError::new("accounts", e.message)),
            };
        }
        Ok(assocs)
    }
}

/// The error for a live job whose `what` named `name` is gone from `section`.
fn missing(job: &str, section: &str, what: &str, name: &str) -> ConfigError {
    ConfigError::new(
        section,
        format!("job \"{job}\" names {what} \"{name}\", which the new configuration lacks"),
    )
}
