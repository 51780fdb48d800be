//! Quota usage and preemption earmarks, kept in step with every start and release.
//!
//! A running job with a `queue` is charged in the [`QuotaTree`] for what it holds: cpus, memory
//! and GPUs per model of the devices it was placed on (an exclusive job for its whole nodes).
//! The charge is made in [`ClusterState::start_job`] and undone in the one release path every
//! stop, end and requeue goes through, so no path can forget it.
//!
//! An [`Earmark`] holds resources for a preemptor until it starts: the node resources of its
//! planned placement (other jobs see them as taken) and the quota its stopped victims freed (it
//! stays charged to the victims' queues until the preemptor starts or the earmark is
//! released). The tree itself is derived state: it is rebuilt from the running jobs and the
//! earmarks on restore.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{ClusterState, JobState, Preemption};
use crate::config::ClusterConfig;
use crate::decision::Decision;
use crate::error::ConfigError;
#[cfg(any(test, feature = "testkit"))]
use crate::error::ConsistencyError;
use crate::model::ids::{JobId, NodeId};
use crate::model::resources::NodeAmounts;
use crate::model::shape::GpuNeed;
use crate::quota::{QueueId, QuotaTree, QuotaVec};

/// The quota tree and what each running job is charged in it (derived; rebuilt on restore).
#[derive(Clone, Debug, Default)]
pub(crate) struct QuotaBook {
    /// `None` when the configuration has no queues.
    pub(crate) tree: Option<QuotaTree>,
    /// Each charged running job's queue and demand.
    pub(crate) charged: BTreeMap<JobId, (QueueId, QuotaVec)>,
    /// How many times an earmark was made or dropped (share values read from the promised
    /// usage are stale once it moves).
    pub(crate) earmark_changes: u64,
    /// How many times an earmark was dropped: the changes that can give capacity back (a new
    /// earmark only holds more).
    pub(crate) earmark_releases: u64,
}

/// Resources held for a preemptor while its victims stop.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Earmark {
    /// Victims still running.
    pub victims: Vec<JobId>,
    /// The preemptor's planned charges per node: no other job may use them.
    pub planned: Vec<(NodeId, NodeAmounts)>,
    /// Stopped victims' queues and charges: their quota stays used until the earmark goes.
    pub freed: Vec<(String, Vec<(NodeId, NodeAmounts)>)>,
}

impl ClusterState {
    /// Builds the quota tree from the configuration and charges the running jobs and the
    /// earmarks' freed quota.
    pub(crate) fn rebuild_quota(&mut self) -> Result<(), ConfigError> {
        let tree = self.quota_tree_for(&self.config)?;
        self.install_quota(tree);
        Ok(())
    }

    /// The empty quota tree of `config`'s queues and cohorts over this state's GPU models
    /// (`None` without queues), for [`ClusterState::install_quota`].
    pub(crate) fn quota_tree_for(
        &self,
        config: &ClusterConfig,
    ) -> Result<Option<QuotaTree>, ConfigError> {
        if config.queues.is_empty() {
            return Ok(None);
        }
        let mut tree = QuotaTree::new(&config.cohorts, &config.queues, &self.models)?;
        tree.resolve_fair_sharing(config.policy.fair_sharing.enabled);
        Ok(Some(tree))
    }

    /// Makes `tree` (from [`ClusterState::quota_tree_for`] under the configuration in effect)
    /// the quota tree, and charges it with the running jobs and the earmarks' freed quota.
    pub(crate) fn install_quota(&mut self, tree: Option<QuotaTree>) {
        self.quota = QuotaBook::default();
        let Some(tree) = tree else {
            for (_, job) in self.jobs.iter_mut() {
                job.queue = None;
            }
            return;
        };
        for (_, job) in self.jobs.iter_mut() {
            job.queue = job
                .spec
                .queue
                .as_deref()
                .and_then(|name| tree.queue_id(name));
        }
        self.quota.tree = Some(tree);
        let running: Vec<JobId> = self.running.iter().copied().collect();
        for id in running {
            self.charge_quota(id);
        }
        let freed: Vec<(String, Vec<(NodeId, NodeAmounts)>)> = self
            .earmarks
            .values()
            .flat_map(|e| e.freed.iter().cloned())
            .collect();
        for (queue, charges) in freed {
            if let Some((q, demand)) = self.queue_demand(&queue, &charges)
                && let Some(tree) = self.quota.tree.as_mut()
            {
                tree.add_usage(q, &demand);
            }
        }
    }

    /// The quota queue of a job, when it names one and quotas exist.
    pub(crate) fn job_queue(&self, id: JobId) -> Option<QueueId> {
        self.job(id)?.queue
    }

    /// The quota demand of per-node charges: cpus, memory and GPUs per model of the nodes.
    pub(crate) fn charges_demand(&self, charges: &[(NodeId, NodeAmounts)]) -> QuotaVec {
        let Some(tree) = self.quota.tree.as_ref() else {
            return QuotaVec::ZERO;
        };
        let mut cpu = 0u64;
        let mut memory = 0u64;
        let mut gpus: Vec<(&str, u64)> = Vec::new();
        let mut slices: Vec<&str> = Vec::new();
        for (node, amounts) in charges {
            cpu = cpu.saturating_add(amounts.cpu_milli);
            memory = memory.saturating_add(amounts.memory_mib);
            let milli: u64 = amounts.devices.iter().map(|d| u64::from(*d)).sum();
            let model = self
                .node(*node)
                .and_then(|n| n.gpu_model)
                .and_then(|m| self.models.get(m.index()));
            if let Some(model) = model.filter(|_| milli > 0) {
                gpus.push((model.as_str(), milli));
            }
            if let Some(node) = self.node(*node) {
                let held = node.mig.in_mask(amounts.mig);
                slices.extend(held.map(|s| self.mig_profile_name(s.profile)));
            }
        }
        let mut demand = tree.demand(cpu, memory, &gpus);
        for profile in slices {
            tree.add_mig_demand(&mut demand, profile, 1);
        }
        demand
    }

    /// The demand of a pending job if all its GPUs were of the model of index `model` (before
    /// it is placed).
    pub(crate) fn shape_demand(&self, id: JobId, model: Option<usize>) -> QuotaVec {
        let (Some(tree), Some(job)) = (self.quota.tree.as_ref(), self.job(id)) else {
            return QuotaVec::ZERO;
        };
        let (cpu, memory, gpu) = (
            job.totals.cpu_milli,
            job.totals.memory_mib,
            job.totals.gpu_milli,
        );
        let model = model
            .filter(|_| gpu > 0)
            .and_then(|m| Some((m, self.models.get(m)?.as_str())));
        let mut demand = tree.demand_on_model((cpu, memory, gpu), model);
        for shape in &job.shapes {
            if let GpuNeed::Mig(profile) = shape.gpu {
                let name = self.mig_profile_name(profile);
                tree.add_mig_demand(&mut demand, name, u64::from(shape.count));
            }
        }
        demand
    }

    /// What `user` holds in queue `q` now (for `max_per_user`).
    pub(crate) fn user_held(&self, q: QueueId, user: Option<&str>) -> QuotaVec {
        let mut held = QuotaVec::ZERO;
        for (id, (queue, demand)) in &self.quota.charged {
            if *queue == q && self.job(*id).and_then(|j| j.spec.user.as_deref()) == user {
                held.add(demand);
            }
        }
        held
    }

    /// Charges a job that just started (no-op for jobs without a queue).
    pub(super) fn charge_quota(&mut self, id: JobId) {
        let Some(q) = self.job_queue(id) else { return };
        let demand = self.charges_demand(&self.node_charges(id).collect::<Vec<_>>());
        if let Some(tree) = self.quota.tree.as_mut() {
            tree.add_usage(q, &demand);
            self.quota.charged.insert(id, (q, demand));
        }
    }

    /// Undoes a job's charge as it releases its resources. A victim of a preemptor that still
    /// waits hands its quota and node charges to the earmark instead.
    pub(super) fn uncharge_quota(&mut self, id: JobId, node_charges: Vec<(NodeId, NodeAmounts)>) {
        let charged = self.quota.charged.remove(&id);
        let for_job = self
            .job(id)
            .and_then(|j| j.running())
            .and_then(|r| r.preemption)
            .map(|p| p.for_job);
        if let Some(earmark) = for_job.and_then(|p| self.earmarks.get_mut(&p)) {
            earmark.victims.retain(|v| *v != id);
            if charged.is_some()
                && let Some(queue) = self.jobs.get(id).and_then(|j| j.spec.queue.clone())
            {
                earmark.freed.push((queue, node_charges));
                return;
            }
        }
        self.over_quota.remove(&id);
        if let (Some((q, demand)), Some(tree)) = (charged, self.quota.tree.as_mut()) {
            tree.remove_usage(q, &demand);
        }
    }

    /// Forgets the over-quota jobs whose charge has left the tree, once no earmark holds freed
    /// quota (a stopped over-quota victim's charge may sit in one until its preemptor starts).
    pub(crate) fn prune_over_quota(&mut self) {
        if self.earmarks.values().all(|e| e.freed.is_empty()) {
            let charged = &self.quota.charged;
            self.over_quota.retain(|id| charged.contains_key(id));
        }
    }

    /// The quota held by `preemptor`'s earmark, per victim queue.
    pub(crate) fn earmarked_quota(&self, preemptor: JobId) -> Vec<(QueueId, QuotaVec)> {
        self.earmarks.get(&preemptor).map_or_else(Vec::new, |e| {
            e.freed
                .iter()
                .filter_map(|(queue, charges)| self.queue_demand(queue, charges))
                .collect()
        })
    }

    /// What each earmarked preemptor will be charged once it starts, by preemptor, with its
    /// queue (preemptors without a queue are left out).
    pub(crate) fn earmark_demands(&self) -> Vec<(JobId, QueueId, QuotaVec)> {
        self.earmarks
            .iter()
            .filter_map(|(p, e)| Some((*p, self.job_queue(*p)?, self.charges_demand(&e.planned))))
            .collect()
    }

    /// Tells running job `victim` to stop for pending job `preemptor` within its grace: it is
    /// marked as being preempted, with its deadline, and remembers `preemptor` and the jobs
    /// that preempted `preemptor` (and those that preempted them, and so on), which it will
    /// never preempt in turn. Returns the `preempt` decision; `None` (nothing changed) when
    /// either job is unknown or `victim` is not running.
    pub(crate) fn mark_preempted(&mut self, victim: JobId, preemptor: JobId) -> Option<Decision> {
        self.change_release(victim, |state| state.set_preempted(victim, preemptor))
    }

    /// [`ClusterState::mark_preempted`] but for the running jobs' ends, which its caller moves.
    fn set_preempted(&mut self, victim: JobId, preemptor: JobId) -> Option<Decision> {
        let (for_job, arrival, inherited) = self
            .job(preemptor)
            .map(|p| (p.spec.id.clone(), p.arrival, p.preempted_by.clone()))?;
        let fair_queue = self
            .job_queue(preemptor)
            .filter(|&q| self.quota.tree.as_ref().is_some_and(|t| t.fair_sharing(q)))
            .and_then(|_| self.job(preemptor)?.spec.queue.clone());
        let deadline_from = self.now_ms;
        let job = self.jobs.get_mut(victim)?;
        let grace_ms = job.spec.grace_ms;
        let JobState::Running(run) = &mut job.state else {
            return None;
        };
        run.preemption = Some(Preemption {
            for_job: preemptor,
            deadline_ms: deadline_from.saturating_add(grace_ms),
        });
        job.history.preemptions = job.history.preemptions.saturating_add(1);
        // The victim inherits the jobs that preempted its preemptor: with `anti_thrash` it
        // never preempts any of them, so no ring of preemptions repeats (A takes B, then B
        // takes C: C holds B and A, and never takes A).
        for displacer in std::iter::once(arrival).chain(inherited) {
            if !job.preempted_by.contains(&displacer) {
                job.preempted_by.push(displacer);
            }
        }
        if let Some(queue) = fair_queue.filter(|q| !job.preempted_by_fair_queue(q)) {
            let mut queues = job
                .preempted_by_queues
                .take()
                .map_or_else(Vec::new, Vec::from);
            queues.push(queue);
            job.preempted_by_queues = Some(queues.into_boxed_slice());
        }
        Some(Decision::Preempt {
            job: job.spec.id.clone(),
            for_job,
            grace_ms,
        })
    }

    /// Holds `planned` (per-node charges) for `preemptor` until its `victims` have stopped:
    /// no other job may use it, and the victims' quota passes to the earmark as they stop.
    pub(crate) fn earmark(
        &mut self,
        preemptor: JobId,
        victims: Vec<JobId>,
        planned: Vec<(NodeId, NodeAmounts)>,
    ) {
        let earmark = Earmark {
            victims,
            planned,
            freed: Vec::new(),
        };
        self.earmarks.insert(preemptor, earmark);
        self.quota.earmark_changes += 1;
    }

    /// Whether `preemptor` holds an earmark with victims still running.
    pub(crate) fn has_victims_stopping(&self, preemptor: JobId) -> bool {
        self.earmarks
            .get(&preemptor)
            .is_some_and(|e| !e.victims.is_empty())
    }

    /// Drops `preemptor`'s earmark, returning the quota it held to the tree. Victims still
    /// running keep stopping; their release is then an ordinary one.
    pub(crate) fn release_earmark(&mut self, preemptor: JobId) {
        if !self.earmarks.contains_key(&preemptor) {
            // Nothing earmarked, nothing charged for it: asked of every job that waits.
            return;
        }
        let quota = self.earmarked_quota(preemptor);
        if let Some(tree) = self.quota.tree.as_mut() {
            for (q, demand) in &quota {
                tree.remove_usage(*q, demand);
            }
        }
        if self.earmarks.remove(&preemptor).is_some() {
            self.quota.earmark_changes += 1;
            self.quota.earmark_releases += 1;
        }
    }

    /// Usage per quota node as it will be once every preemption under way has completed:
    /// each earmark's victims released (still running or stopped) and its preemptor charged.
    /// Fair sharing reads share values from it, so that preemptors waiting for their victims
    /// count as admitted. `None` without a quota tree. `demands`: the earmarks' demands, as
    /// [`ClusterState::earmark_demands`] gives them now (the caller has them already).
    pub(crate) fn promised_usage(
        &self,
        demands: &[(JobId, QueueId, QuotaVec)],
    ) -> Option<Cow<'_, [QuotaVec]>> {
        let tree = self.quota.tree.as_ref()?;
        if self.earmarks.is_empty() {
            return Some(Cow::Borrowed(&tree.usage));
        }
        let mut usage = tree.usage.clone();
        for (preemptor, earmark) in &self.earmarks {
            for victim in &earmark.victims {
                if let Some((q, charged)) = self.quota.charged.get(victim) {
                    tree.release_in(&mut usage, *q, charged);
                }
            }
            for (q, freed) in self.earmarked_quota(*preemptor) {
                tree.release_in(&mut usage, q, &freed);
            }
        }
        for (_, q, demand) in demands {
            tree.charge_in(&mut usage, *q, demand);
        }
        Some(Cow::Owned(usage))
    }

    /// Releases every earmark that involves `node` (it went down, lost a GPU, was drained or
    /// is being removed): planned there, or counting on a victim's resources or stopped
    /// victim's quota there. Called before the node's jobs are evicted, so the quota is
    /// returned with the node still known; those preemptors plan again in the next pass and
    /// their victims still stop.
    pub(crate) fn release_earmarks_on(&mut self, node: NodeId) {
        let touched: Vec<JobId> = self
            .earmarks
            .iter()
            .filter(|(_, earmark)| {
                earmark.planned.iter().any(|(n, _)| *n == node)
                    || earmark
                        .freed
                        .iter()
                        .any(|(_, charges)| charges.iter().any(|(n, _)| *n == node))
                    || earmark
                        .victims
                        .iter()
                        .any(|v| self.node_charges(*v).any(|(n, _)| n == node))
            })
            .map(|(preemptor, _)| *preemptor)
            .collect();
        for preemptor in touched {
            self.release_earmark(preemptor);
        }
    }

    /// Node resources earmarked for preemptors other than `except`: each earmark's planned
    /// charges less what its victims still hold on the same node (that part is already used).
    pub(crate) fn earmark_holds(&self, except: Option<JobId>) -> BTreeMap<NodeId, NodeAmounts> {
        let mut holds: BTreeMap<NodeId, NodeAmounts> = BTreeMap::new();
        for (preemptor, earmark) in &self.earmarks {
            if Some(*preemptor) == except {
                continue;
            }
            for (node, planned) in &earmark.planned {
                let mut victims = NodeAmounts::default();
                for victim in &earmark.victims {
                    for (n, amounts) in self.node_charges(*victim) {
                        if n == *node {
                            victims.add(&amounts);
                        }
                    }
                }
                holds
                    .entry(*node)
                    .or_default()
                    .add(&planned.minus(&victims));
            }
        }
        holds
    }

    fn queue_demand(
        &self,
        queue: &str,
        charges: &[(NodeId, NodeAmounts)],
    ) -> Option<(QueueId, QuotaVec)> {
        let q = self.quota.tree.as_ref()?.queue_id(queue)?;
        Some((q, self.charges_demand(charges)))
    }
}

impl ClusterState {
    /// The quota and earmark invariants: the quota tree's own (its totals, and its limits
    /// for all usage but that of [`ClusterState::over_quota`] jobs),
    /// every queue's usage equal to its running jobs' and earmarks' charges recounted, every
    /// earmark naming a pending preemptor and victims being preempted for it, and every node
    /// still having free what earmarks hold on it (nobody else used it).
    #[cfg(any(test, feature = "testkit"))]
    pub(crate) fn check_quota(&self) -> Result<(), ConsistencyError> {
        self.recount_quota().map_err(ConsistencyError::from)
    }

    /// [`ClusterState::check_quota`]'s checks, each failure a message.
    #[cfg(any(test, feature = "testkit"))]
    fn recount_quota(&self) -> Result<(), String> {
        if let Some(tree) = self.quota.tree.as_ref() {
            tree.check_totals().map_err(|e| e.message)?;
            self.check_quota_limits(tree)?;
            let mut expected = vec![QuotaVec::ZERO; tree.queue_count()];
            for &id in &self.running {
                if let Some(q) = self.job_queue(id) {
                    expected[q.index()]
                        .add(&self.charges_demand(&self.node_charges(id).collect::<Vec<_>>()));
                }
            }
            for preemptor in self.earmarks.keys() {
                for (q, demand) in self.earmarked_quota(*preemptor) {
                    expected[q.index()].add(&demand);
                }
            }
            for (i, want) in expected.iter().enumerate() {
                let Some(q) = tree.queue_id(&self.config.queues[i].name) else {
                    continue;
                };
                if tree.usage(q) != want {
                    return Err(format!(
                        "queue {}: tree usage {:?}, running jobs and earmarks add up to {want:?}",
                        tree.queue_name(q),
                        tree.usage(q)
                    ));
                }
            }
        }
        for (preemptor, earmark) in &self.earmarks {
            let name = self.job_label(*preemptor);
            if !self.pending.contains(preemptor) {
                return Err(format!("earmark for {name}, which is not pending"));
            }
            for victim in &earmark.victims {
                let for_job = self
                    .job(*victim)
                    .and_then(|j| j.running())
                    .and_then(|r| r.preemption)
                    .map(|p| p.for_job);
                if for_job != Some(*preemptor) {
                    return Err(format!(
                        "earmark for {name}: victim {} is not being preempted for it",
                        self.job_label(*victim)
                    ));
                }
            }
        }
        for (node, held) in self.earmark_holds(None) {
            if let Some(n) = self.node(node)
                && !n.free().covers(&held)
            {
                return Err(format!(
                    "node {}: earmarked {held:?} but only {:?} is free",
                    n.name,
                    n.free()
                ));
            }
        }
        Ok(())
    }

    /// The limit invariant, ignoring the usage of jobs a reconfiguration left over quota. While
    /// such a job's charge sits in an earmark it cannot be told apart, and the limits are not
    /// checked.
    #[cfg(any(test, feature = "testkit"))]
    fn check_quota_limits(&self, tree: &QuotaTree) -> Result<(), String> {
        if self.over_quota.is_empty() {
            return tree.check_limits().map_err(|e| e.message);
        }
        let mut within = tree.clone();
        for id in &self.over_quota {
            match self.quota.charged.get(id) {
                Some((q, demand)) => within.remove_usage(*q, demand),
                None => return Ok(()),
            }
        }
        within.check_limits().map_err(|e| e.message)
    }
}
