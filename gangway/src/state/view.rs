//! Read-only views of the state: what a host, a test, the simulator or a policy sees of jobs,
//! nodes with their free devices, queues with their quota usage, and the rest. Nothing here
//! can change the state; every change goes through [`crate::Scheduler::tick`].
//!
//! ```
//! use gangway::{ClusterConfig, Event, JobSpec, Milli, Scheduler};
//! let cluster: ClusterConfig = serde_json::from_str(r#"{
//!     "nodes": [{"name": "n1", "cpus": 8, "gpus": {"model": "a100", "count": 4}}],
//!     "queues": [{"name": "team", "quota": {"gpu": {"nominal": 4}}}]}"#).unwrap();
//! let mut s = Scheduler::new(cluster).unwrap();
//! let mut job = JobSpec::new("train", 60_000, 1).with_gpus(Milli::from_units(3));
//! job.queue = Some("team".into());
//! s.tick(0, vec![Event::Submit { job }]).unwrap();
//!
//! let state = s.state();
//! let train = state.job_by_name("train").unwrap();
//! assert!(train.is_running());
//! assert_eq!(train.node_names().collect::<Vec<_>>(), ["n1"]);
//! assert_eq!(train.queue(), Some("team"));
//! let n1 = state.node_by_name("n1").unwrap();
//! assert_eq!(n1.free_gpus().collect::<Vec<_>>(), [3]); // devices 0-2 are taken
//! assert_eq!((n1.gpu_model(), n1.labels().count()), (Some("a100"), 0));
//! let team = state.queues().next().unwrap();
//! assert_eq!((team.name(), team.usage("gpu")), ("team", Some(Milli::from_units(3))));
//! ```

use super::{ClusterState, Job, JobState, Readiness, ReadyRecord, RunningJob};
use crate::config::ClusterConfig;
use crate::model::amount::Milli;
use crate::model::ids::{JobId, NodeId};
use crate::model::job::{DependencyKind, JobSpec};
use crate::model::node::{GpuFault, Node, NodeState};
use crate::model::resources::{DEVICE_MILLI, NodeAmounts};
use crate::model::topology::Topology;
use crate::quota::{KeyId, QueueId, QuotaTree};

/// One job the state tracks (pending, running, or ended and still remembered).
#[derive(Clone, Copy, Debug)]
pub struct JobView<'a> {
    state: &'a ClusterState,
    id: JobId,
    job: &'a Job,
}

impl<'a> JobView<'a> {
    /// Its interned id (a slot, reused once an ended job is forgotten).
    pub fn id(&self) -> JobId {
        self.id
    }

    /// Its external id, as submitted.
    pub fn name(&self) -> &'a str {
        &self.job.spec.id
    }

    /// The job as submitted.
    pub fn spec(&self) -> &'a JobSpec {
        &self.job.spec
    }

    /// The whole record: compiled shapes, arrival order, dependencies, state.
    pub(crate) fn record(&self) -> &'a Job {
        self.job
    }

    /// Its arrival order: a number that grows with every submission, so that of two jobs the
    /// one submitted first (in an earlier tick, or earlier in the same tick) has the smaller.
    pub fn arrival(&self) -> u64 {
        self.job.arrival
    }

    /// While it runs and is watched (`policy.wait_for_ready`): whether it is starting or
    /// recovering, and by when it must report ready; `None` otherwise.
    pub fn readiness(&self) -> Option<Readiness> {
        self.job.readiness()
    }

    /// Its requeues for the ready timeout and its back-off (`policy.wait_for_ready`).
    pub fn ready_record(&self) -> &'a ReadyRecord {
        &self.job.ready
    }

    /// Pending, running or ended.
    pub fn phase(&self) -> &'a JobState {
        &self.job.state
    }

    /// Whether it waits to start.
    pub fn is_pending(&self) -> bool {
        self.job.state == JobState::Pending
    }

    /// Whether it holds resources (also while being preempted).
    pub fn is_running(&self) -> bool {
        self.job.running().is_some()
    }

    /// Its allocation, when running.
    pub fn running(&self) -> Option<&'a RunningJob> {
        self.job.running()
    }

    /// When it was submitted.
    pub fn submit_ms(&self) -> u64 {
        self.job.submit_ms
    }

    /// The name of its partition.
    pub fn partition(&self) -> &'a str {
        self.state
            .partitions
            .get(self.job.partition.index())
            .map_or("", |p| p.name.as_str())
    }

    /// How long it has waited since it was submitted, as of the last tick (0 while running;
    /// a requeued job counts from its original submit time).
    pub fn wait_ms(&self) -> u64 {
        if self.is_pending() {
            self.state.now_ms.saturating_sub(self.job.submit_ms)
        } else {
            0
        }
    }

    /// GPU-milliseconds it has held so far, over all its runs including the current one up to
    /// the last tick: GPUs held (whole, fractional, and MIG slices as their compute share) times
    /// time. Tiresias-style least-attained-service orders read this.
    pub fn attained_gpu_ms(&self) -> u64 {
        let current = self.state.current_run_gpu_ms(self.id, self.state.now_ms);
        self.job.history.attained_gpu_ms.saturating_add(current)
    }

    /// How many times it has started.
    pub fn runs(&self) -> u32 {
        self.job.history.runs
    }

    /// How many times it was told to stop for a preemptor.
    pub fn preemptions(&self) -> u32 {
        self.job.history.preemptions
    }

    /// The current run's start and its length so far, when running.
    pub fn current_run(&self) -> Option<(u64, u64)> {
        let start = self.job.running()?.start_ms;
        Some((start, self.state.now_ms.saturating_sub(start)))
    }

    /// Whether its current run has written a checkpoint (a `checkpoint` event since it
    /// started); `false` when not running.
    ///
    /// ```
    /// use gangway::{ClusterConfig, Event, JobSpec, Scheduler};
    /// let cluster: ClusterConfig = serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 1}]}"#).unwrap();
    /// let mut s = Scheduler::new(cluster).unwrap();
    /// s.tick(0, vec![Event::Submit { job: JobSpec::new("a", 60_000, 1) }]).unwrap();
    /// assert!(!s.state().job_by_name("a").unwrap().checkpointed_this_run());
    /// s.tick(10, vec![Event::Checkpoint { job: "a".into() }]).unwrap();
    /// assert!(s.state().job_by_name("a").unwrap().checkpointed_this_run());
    /// ```
    pub fn checkpointed_this_run(&self) -> bool {
        self.is_running() && self.job.history.last_checkpoint_ms.is_some()
    }

    /// Its GPUs at each task group's `count` (whole, fractional; MIG slices not counted).
    ///
    /// ```
    /// use gangway::{JobSpec, Milli};
    /// # use gangway::{ClusterConfig, Event, Scheduler};
    /// # let cluster: ClusterConfig = serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 8, "memory_mib": 4096, "gpus": {"model": "a100", "count": 4}}]}"#).unwrap();
    /// # let mut s = Scheduler::new(cluster).unwrap();
    /// let job = JobSpec::new("a", 60_000, 2).with_gpus(Milli::from_milli(500));
    /// s.tick(0, vec![Event::Submit { job }]).unwrap();
    /// let a = s.state().job_by_name("a").unwrap();
    /// assert_eq!(a.gpus(), Milli::ONE); // two tasks of half a GPU
    /// assert_eq!(a.cpus(), Milli::from_units(2)); // one cpu per task by default
    /// ```
    pub fn gpus(&self) -> Milli {
        Milli::from_milli(self.job.totals.gpu_milli)
    }

    /// Its cpus at each task group's `count`.
    pub fn cpus(&self) -> Milli {
        Milli::from_milli(self.job.totals.cpu_milli)
    }

    /// Its memory at each task group's `count`, in MiB.
    pub fn memory_mib(&self) -> u64 {
        self.job.totals.memory_mib
    }

    /// Start and end of its last run that has ended.
    pub fn last_run(&self) -> Option<(u64, u64)> {
        self.job.history.last_run
    }

    /// Work a stop would lose now, in time: since the current run's last `checkpoint`, or since
    /// it started when it has reported none; `None` when not running.
    pub fn since_checkpoint_ms(&self) -> Option<u64> {
        let start = self.job.running()?.start_ms;
        let from = self.job.history.last_checkpoint_ms.unwrap_or(start);
        Some(self.state.now_ms.saturating_sub(from))
    }

    /// The name of its quota queue, if it names one.
    pub fn queue(&self) -> Option<&'a str> {
        self.job.spec.queue.as_deref()
    }

    /// The names of the nodes it runs on, each once, in the order of its assignments.
    pub fn node_names(&self) -> impl Iterator<Item = &'a str> + 'a {
        let state = self.state;
        let assignments = self.job.running().map_or(&[][..], |r| &r.assignments);
        let mut seen: Vec<NodeId> = Vec::new();
        assignments.iter().filter_map(move |a| {
            if seen.contains(&a.node) {
                return None;
            }
            seen.push(a.node);
            state.node(a.node).map(|n| n.name.as_str())
        })
    }

    /// The jobs it still waits for, with the kind of each dependency.
    pub fn waiting_on(&self) -> impl Iterator<Item = (&'a str, DependencyKind)> + 'a {
        let state = self.state;
        self.job
            .waiting_on
            .iter()
            .filter_map(move |&(target, kind)| Some((state.job_name(target)?, kind)))
    }
}

/// One node, with what is free on it.
#[derive(Clone, Copy, Debug)]
pub struct NodeView<'a> {
    state: &'a ClusterState,
    id: NodeId,
    node: &'a Node,
}

impl<'a> NodeView<'a> {
    /// Its interned id.
    pub fn id(&self) -> NodeId {
        self.id
    }

    /// Its name.
    pub fn name(&self) -> &'a str {
        &self.node.name
    }

    /// The whole record: capacity, usage, devices, labels, MIG layout.
    pub(crate) fn record(&self) -> &'a Node {
        self.node
    }

    /// What its running jobs use now (an exclusive job uses all of it); [`free`](Self::free) is
    /// what is left for new work.
    pub fn used(&self) -> NodeAmounts {
        self.node.used
    }

    /// Up, draining or down.
    pub fn node_state(&self) -> NodeState {
        self.node.state
    }

    /// Everything it has.
    pub fn capacity(&self) -> NodeAmounts {
        self.node.capacity
    }

    /// What is free now for new work: what no job uses, less down GPUs; nothing on a draining
    /// or down node.
    pub fn free(&self) -> NodeAmounts {
        match self.node.state {
            NodeState::Up => self.node.free(),
            NodeState::Draining | NodeState::Down => NodeAmounts::default(),
        }
    }

    /// How many GPU devices it has (down ones included).
    pub fn gpu_count(&self) -> usize {
        self.node.gpu_count
    }

    /// Its cpus.
    pub fn cpus(&self) -> Milli {
        Milli::from_milli(self.node.capacity.cpu_milli)
    }

    /// Its cpus free now for new work (none on a draining or down node).
    pub fn free_cpus(&self) -> Milli {
        Milli::from_milli(self.free().cpu_milli)
    }

    /// Its memory free now for new work, in MiB (none on a draining or down node).
    pub fn free_memory_mib(&self) -> u64 {
        self.free().memory_mib
    }

    /// Every GPU device with its share free now for new work, by index: [`Milli::ONE`] for an
    /// idle device, less what fractional tasks hold, nothing for a down device or on a
    /// draining or down node. (A MIG device's slices are in [`NodeView::free`].)
    ///
    /// ```
    /// use gangway::{ClusterConfig, Event, JobSpec, Milli, Scheduler};
    /// let cluster: ClusterConfig = serde_json::from_str(r#"{"nodes": [
    ///     {"name": "n1", "cpus": 8, "gpus": {"model": "a100", "count": 2}}]}"#).unwrap();
    /// let mut s = Scheduler::new(cluster).unwrap();
    /// let job = JobSpec::new("a", 60_000, 1).with_gpus(Milli::from_milli(250));
    /// s.tick(0, vec![Event::Submit { job }]).unwrap();
    /// let n1 = s.state().node_by_name("n1").unwrap();
    /// assert_eq!(n1.gpu_count(), 2);
    /// assert_eq!(n1.free_devices().collect::<Vec<_>>(),
    ///     [(0, Milli::from_milli(750)), (1, Milli::ONE)]);
    /// assert_eq!(n1.free_gpus_total(), Milli::from_milli(1_750));
    /// assert_eq!(n1.free_cpus(), Milli::from_units(7));
    /// ```
    pub fn free_devices(&self) -> impl Iterator<Item = (usize, Milli)> + 'a {
        let free = self.free();
        (0..self.node.gpu_count.min(free.devices.len()))
            .map(move |g| (g, Milli::from_milli(u64::from(free.devices[g]))))
    }

    /// The sum of [`NodeView::free_devices`]' shares.
    pub fn free_gpus_total(&self) -> Milli {
        Milli::from_milli(self.free_devices().map(|(_, free)| free.milli()).sum())
    }

    /// The GPU devices no task uses and that are not down, by index.
    pub fn free_gpus(&self) -> impl Iterator<Item = usize> + 'a {
        let node = self.node;
        (0..node.gpu_count).filter(move |&g| {
            node.used.devices[g] == 0
                && node.capacity.devices[g] == DEVICE_MILLI
                && !node.gpu_is_down(g)
        })
    }

    /// The model of its GPUs, if it has any.
    pub fn gpu_model(&self) -> Option<&'a str> {
        let model = self.node.gpu_model?;
        self.state.models.get(model.index()).map(String::as_str)
    }

    /// Its labels (topology levels among them), in configuration order.
    pub fn labels(&self) -> impl Iterator<Item = (&'a str, &'a str)> + 'a {
        self.node
            .labels
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Its most recent `gpu_down` events, oldest first (at most
    /// [`GPU_FAULTS_KEPT`](crate::model::GPU_FAULTS_KEPT)).
    pub fn gpu_faults(&self) -> &'a [GpuFault] {
        &self.node.gpu_faults
    }

    /// When its last `gpu_down` was reported, if ever.
    pub fn last_gpu_fault_ms(&self) -> Option<u64> {
        self.node.gpu_faults.last().map(|f| f.at_ms)
    }

    /// How many jobs run on it.
    pub fn running_jobs(&self) -> u32 {
        self.node.running_jobs
    }

    /// The names of the partitions it belongs to.
    pub fn partitions(&self) -> impl Iterator<Item = &'a str> + 'a {
        let node = self.node;
        self.state
            .partitions
            .iter()
            .enumerate()
            .filter(move |(p, _)| {
                node.partitions
                    .contains(crate::model::ids::PartitionId(*p as u32))
            })
            .map(|(_, p)| p.name.as_str())
    }
}

/// One quota queue, with its usage.
#[derive(Clone, Copy, Debug)]
pub struct QueueView<'a> {
    tree: &'a QuotaTree,
    id: QueueId,
}

impl<'a> QueueView<'a> {
    /// Its name.
    pub fn name(&self) -> &'a str {
        self.tree.queue_name(self.id)
    }

    /// What its running jobs (and earmarks of stopped victims) use of resource `key` (`cpu`,
    /// `memory_mib`, `gpu`, `gpu:MODEL`, `mig:PROFILE`); `None` for a key no queue lists.
    pub fn usage(&self, key: &str) -> Option<Milli> {
        let key = self.tree.key(key)?;
        Some(Milli::from_milli(self.tree.usage(self.id)[key]))
    }

    /// Its nominal quota of resource `key`; `None` for a key no queue lists.
    pub fn nominal(&self, key: &str) -> Option<Milli> {
        let key = self.tree.key(key)?;
        Some(Milli::from_milli(self.tree.nominal(self.id)[key]))
    }

    /// Whether it uses more than its nominal quota of something it lists (borrows).
    pub fn is_borrowing(&self) -> bool {
        self.tree.is_borrowing(self.id)
    }

    /// Its fair-sharing share value now ([`crate::quota::Share`]; 0 without a cohort).
    /// Plug-ins may read it; with fair sharing on, the engine orders and preempts by it.
    pub fn fair_share(&self) -> crate::quota::Share {
        self.tree.queue_share(self.id)
    }

    /// Whether fair sharing between queues is on for its cohort tree.
    pub fn fair_sharing(&self) -> bool {
        self.tree.fair_sharing(self.id)
    }

    /// Every resource key with its usage, in key order.
    pub fn usages(&self) -> impl Iterator<Item = (&'a str, Milli)> + 'a {
        let (tree, id) = (self.tree, self.id);
        tree.keys()
            .map(move |key: KeyId| (tree.key_name(key), Milli::from_milli(tree.usage(id)[key])))
    }
}

impl ClusterState {
    /// The view of job `id`, while it is tracked.
    pub fn job_view(&self, id: JobId) -> Option<JobView<'_>> {
        Some(JobView {
            state: self,
            id,
            job: self.job(id)?,
        })
    }

    /// The view of node `id`, unless removed.
    pub fn node_view(&self, id: NodeId) -> Option<NodeView<'_>> {
        Some(NodeView {
            state: self,
            id,
            node: self.node(id)?,
        })
    }

    /// The configuration in force (the last one configured or reconfigured).
    pub fn config(&self) -> &ClusterConfig {
        &self.config
    }

    /// The time of the last tick.
    pub fn now_ms(&self) -> u64 {
        self.now_ms
    }

    /// Every job tracked: pending, running, and ended ones not yet forgotten, by id.
    pub fn jobs(&self) -> impl Iterator<Item = JobView<'_>> {
        self.jobs.ids().filter_map(|id| self.job_view(id))
    }

    /// The pending jobs, by id (not in scheduling order: see [`crate::Scheduler::explain`]).
    pub fn pending(&self) -> impl Iterator<Item = JobView<'_>> {
        self.pending.iter().filter_map(|&id| self.job_view(id))
    }

    /// How many jobs are pending.
    pub fn pending_count(&self) -> usize {
        self.pending.len()
    }

    /// The running jobs (also those being preempted), by id.
    pub fn running(&self) -> impl Iterator<Item = JobView<'_>> {
        self.running.iter().filter_map(|&id| self.job_view(id))
    }

    /// How many jobs are running (also those being preempted).
    pub fn running_count(&self) -> usize {
        self.running.len()
    }

    /// The job with external id `name`, while it is tracked.
    pub fn job_by_name(&self, name: &str) -> Option<JobView<'_>> {
        self.job_view(self.job_id(name)?)
    }

    /// The nodes, by id (removed nodes left out).
    pub fn nodes(&self) -> impl Iterator<Item = NodeView<'_>> {
        (0..self.nodes.len()).filter_map(|slot| self.node_view(NodeId(slot as u32)))
    }

    /// The node named `name`.
    pub fn node_by_name(&self, name: &str) -> Option<NodeView<'_>> {
        self.node_view(self.node_names.get(name)?)
    }

    /// The quota queues in configuration order (none without queues).
    pub fn queues(&self) -> impl Iterator<Item = QueueView<'_>> {
        let tree = self.quota.tree.as_ref();
        let count = tree.map_or(0, QuotaTree::queue_count);
        (0..count).filter_map(move |q| {
            Some(QueueView {
                tree: tree?,
                id: QueueId(q as u32),
            })
        })
    }

    /// The quota tree with its usage; `None` without queues.
    pub(crate) fn quota_tree(&self) -> Option<&QuotaTree> {
        self.quota.tree.as_ref()
    }

    /// Running jobs a reconfiguration left over their queues' new quota limits, until they end.
    pub fn over_quota(&self) -> impl Iterator<Item = JobView<'_>> {
        self.over_quota.iter().filter_map(|&id| self.job_view(id))
    }

    /// The maintenance windows.
    #[cfg(any(test, feature = "testkit"))]
    pub(crate) fn maintenance(&self) -> &super::Maintenance {
        &self.maintenance
    }

    /// The topology tree, when the configuration names levels.
    pub(crate) fn topology(&self) -> Option<&Topology> {
        self.topology.as_ref()
    }

    /// Which pending jobs wait for which.
    #[cfg(test)]
    pub(crate) fn dependents(&self) -> &super::DependencyGraph {
        &self.dependents
    }

    /// Cluster-wide licenses: totals and what running jobs hold.
    #[cfg(test)]
    pub(crate) fn licenses(&self) -> &super::licenses::Licenses {
        &self.licenses
    }

    /// The MIG profile names seen so far, by id (for the test kit's checker).
    #[cfg(feature = "testkit")]
    pub(crate) fn mig_profile_names(&self) -> &[String] {
        &self.mig_profiles
    }
}
