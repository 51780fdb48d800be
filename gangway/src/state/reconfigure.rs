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

use std::collections::BTreeMap;

use super::ClusterState;
use crate::config::{ClusterConfig, NodeConfig};
use crate::error::ConfigError;
use crate::model::ids::PartitionId;
use crate::model::node::PartitionSet;
use crate::state::JobState;

impl ClusterState {
    /// This state under `config`, as the module documentation describes; `self` is unchanged.
    /// Errors name the offending field, or the job that would lose its partition, queue, QoS or
    /// account.
    pub(crate) fn reconfigured(&self, config: ClusterConfig) -> Result<Self, ConfigError> {
        // Validates every section; its nodes and models are discarded.
        let fresh = ClusterState::from_config(config.clone())?;
        let mut next = self.clone();
        next.partitions = fresh.partitions;
        next.default_partition = fresh.default_partition;
        next.remap_memberships(self, &config);
        next.remap_jobs(&config)?;
        next.fairshare = match &self.fairshare {
            Some(old) if fresh.fairshare.is_some() => {
                Some(old.reconfigured(&config.accounts, &config.policy.fairshare, self.now_ms)?)
            }
            _ => fresh.fairshare,
        };
        next.reassociate_jobs()?;
        if config.policy.wait_for_ready.is_none() {
            next.forget_readiness();
        }
        next.admission.retain_queues(|name| {
            config
                .queues
                .iter()
                .any(|q| q.name == name && q.admission_fair_sharing)
        });
        next.config = config;
        next.retopologize()?;
        next.earmarks.clear();
        next.rebuild_quota()?;
        next.over_quota.clear();
        if next
            .quota
            .tree
            .as_ref()
            .is_some_and(|t| t.check_limits().is_err())
        {
            next.over_quota = next.quota.charged.keys().copied().collect();
        }
        Ok(next)
    }

    /// Sets each node's partitions under the new partition list.
    fn remap_memberships(&mut self, old: &ClusterState, config: &ClusterConfig) {
        let entries: BTreeMap<&str, &NodeConfig> =
            config.nodes.iter().map(|n| (n.name.as_str(), n)).collect();
        for node in self.nodes.iter_mut().flatten() {
            let entry = entries.get(node.name.as_str());
            let mut set = PartitionSet::default();
            for (p, partition) in self.partitions.iter().enumerate() {
                let member = match entry {
                    Some(entry) => entry
                        .partitions
                        .as_ref()
                        .is_none_or(|names| names.contains(&partition.name)),
                    None => old
                        .partition_id(&partition.name)
                        .is_some_and(|was| node.partitions.contains(was)),
                };
                if member {
                    set.insert(PartitionId(p as u32));
                }
            }
            node.partitions = set;
        }
    }

    /// Moves every job to its partition under the new list and checks that live jobs still
    /// find their partition, queue and QoS.
    fn remap_jobs(&mut self, config: &ClusterConfig) -> Result<(), ConfigError> {
        let default_partition = self.default_partition;
        let partitions = self.partitions.clone();
        for job in self.jobs.iter_mut().flatten() {
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
            job.partition = match (found, live) {
                (Some(p), _) => p,
                (None, false) => default_partition,
                (None, true) => {
                    return Err(missing(id, "partitions", "partition", name.unwrap_or("")));
                }
            };
            if !live {
                continue;
            }
            let partition = &partitions[job.partition.index()];
            if let Some(max) = partition.max_time_ms
                && job.state == JobState::Pending
                && job.spec.time_limit_ms > max
            {
                return Err(ConfigError::new(
                    format!("partitions[{}].max_time_ms", job.partition.index()),
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
        Ok(())
    }

    /// Associates every job with the new fair-share engine; an ended job whose account is gone
    /// keeps none.
    fn reassociate_jobs(&mut self) -> Result<(), ConfigError> {
        for slot in 0..self.jobs.len() {
            let Some(job) = self.jobs[slot].as_ref() else {
                continue;
            };
            let ended = matches!(job.state, JobState::Ended { .. });
            let assoc = match self.associate(&job.spec.clone()) {
                Ok(assoc) => assoc,
                Err(_) if ended => None,
                Err(e) => return Err(ConfigError::new("accounts", e.message)),
            };
            if let Some(job) = self.jobs[slot].as_mut() {
                job.assoc = assoc;
            }
        }
        Ok(())
    }
}

/// The error for a live job whose `what` named `name` is gone from `section`.
fn missing(job: &str, section: &str, what: &str, name: &str) -> ConfigError {
    ConfigError::new(
        section,
        format!("job \"{job}\" names {what} \"{name}\", which the new configuration lacks"),
    )
}
