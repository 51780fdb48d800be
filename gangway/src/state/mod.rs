//! `ClusterState`: the only truth. Nodes, partitions, jobs and their allocations; every change
//! goes through applying an event or a decision, and each change keeps the free-capacity index in
//! step.

mod admission;
mod build;
mod consistency;
mod dependencies;
mod history;
mod job_names;
mod job_table;
mod jobs;
pub(crate) mod licenses;
mod lifecycle;
mod maintenance;
mod mig;
mod node_names;
mod nodes;
mod pending_changes;
mod quota;
mod readiness;
mod reconfigure;
pub(crate) mod releases;
mod satisfiable;
mod submit;
mod topology;
mod totals;
mod usage;
mod view;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::backfill::RunningEnds;
use crate::config::ClusterConfig;
use crate::fairshare::{AdmissionLedger, AssocId, FairShare};
use crate::model::ids::{JobId, NodeId, PartitionId};
use crate::model::job::{DependencyKind, JobSpec, Outcome};
use crate::model::node::Node;
use crate::model::shape::TaskShape;
use crate::placement::{Assignment, FreeIndex, ShapeMix};
use crate::quota::QueueId;

pub(crate) use build::Partition;
pub(crate) use dependencies::DependencyGraph;
pub(crate) use maintenance::Maintenance;
pub(crate) use quota::Earmark;
pub(crate) use quota::QuotaBook;
pub use readiness::{Readiness, ReadyRecord};
pub(crate) use totals::JobTotals;
pub use view::{JobView, NodeView, QueueView};

/// The whole scheduler state: configuration, nodes, jobs.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ClusterState {
    /// The configuration it was built from, or last reconfigured with (nodes as given there;
    /// the node table with its run-time changes lives in `nodes`).
    pub(crate) config: Arc<ClusterConfig>,
    /// Interned GPU model names; a model's id is its position.
    pub(crate) models: Vec<String>,
    /// Partitions by id.
    pub(crate) partitions: Vec<Partition>,
    /// Where jobs naming no partition go.
    pub(crate) default_partition: PartitionId,
    /// Nodes by id; `None` once removed.
    pub(crate) nodes: Vec<Option<Node>>,
    /// Node names to ids, and the shared name of each node.
    pub(crate) node_names: node_names::NodeNames,
    /// Jobs by id; `None` for free slots.
    pub(crate) jobs: job_table::JobTable,
    /// Free job slots, reused last-freed first.
    pub(crate) free_slots: Vec<JobId>,
    /// Job names to ids (pending, running and remembered ended jobs): derived from `jobs`,
    /// not kept by a snapshot (restore builds it again).
    #[serde(skip)]
    pub(crate) job_names: job_names::JobNames,
    /// Pending jobs (changed only through [`ClusterState::add_pending`] and
    /// [`ClusterState::remove_pending`], which note the change).
    pub(crate) pending: BTreeSet<JobId>,
    /// The pending jobs whose place in the order may have changed since the scheduler last
    /// read them (derived memory, not kept by a snapshot).
    #[serde(skip)]
    pub(crate) pending_changes: pending_changes::PendingChanges,
    /// Running jobs (including those being preempted).
    pub(crate) running: BTreeSet<JobId>,
    /// Ended jobs in the order they ended, forgotten after `min_job_age_ms`.
    pub(crate) ended: VecDeque<JobId>,
    /// The pending jobs that wait for each job to end (derived from the jobs' waiting lists;
    /// rebuilt on restore).
    #[serde(skip)]
    pub(crate) dependents: DependencyGraph,
    /// Arrival counter: ties of equal priority and submit time break by it.
    pub(crate) next_arrival: u64,
    /// The time of the last tick. Every running job's usage is charged up to it.
    pub(crate) now_ms: u64,
    /// Counts the changes that may have freed capacity or changed a pending job's request since
    /// the state was built or restored: every event other than a submit or a checkpoint (a
    /// running job's end counts by its release), and every running job losing its resources.
    /// A backfill plan made when it had the same epoch is still the earliest one if it still
    /// fits (see `scheduler::kept_plans`); the recent releases are logged by node.
    #[serde(skip)]
    pub(crate) releases: releases::Releases,
    /// Counts the jobs started since the state was built or restored: with `releases`, it
    /// says that no node's usage changed (see `scheduler::kept_plans`).
    #[serde(skip)]
    pub(crate) start_epoch: u64,
    /// Counts the submissions that changed the shape mix since the state was built or
    /// restored. A reservation's placement reads the mix (fragmentation ranks nodes the
    /// busy-first rule ties, and picks a fraction's device), so a placement made at another
    /// value may not be made again (see `scheduler::kept_plans`).
    #[serde(skip)]
    pub(crate) mix_epoch: u64,
    /// Resources held for preemptors until they start, by preemptor.
    #[serde(default)]
    pub(crate) earmarks: BTreeMap<JobId, Earmark>,
    /// Running jobs that a reconfiguration left over their queues' new quota limits: their
    /// usage stays charged (admission counts it) but the limit invariant ignores it until they
    /// end. Empty unless a reconfiguration shrank quotas below running usage.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub(crate) over_quota: BTreeSet<JobId>,
    /// Maintenance windows by id.
    #[serde(default)]
    pub(crate) maintenance: Maintenance,
    /// Interned MIG profile names, indexed by [`MigProfileId`](crate::model::ids::MigProfileId).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) mig_profiles: Vec<String>,
    /// The fair-share engine with its usage ledger; `None` without configured accounts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) fairshare: Option<Arc<FairShare>>,
    /// Admission fair sharing's tenant usage per queue; empty unless a queue turns it on.
    #[serde(default, skip_serializing_if = "AdmissionLedger::is_empty")]
    pub(crate) admission: AdmissionLedger,
    /// Cluster-wide licenses: totals and what running jobs hold.
    #[serde(default)]
    pub(crate) licenses: licenses::Licenses,
    /// The task shapes submitted so far, which placement keeps fragmentation low for.
    #[serde(default)]
    pub(crate) shape_mix: ShapeMix,
    /// Free capacity index (derived; rebuilt on restore).
    #[serde(skip)]
    pub(crate) index: FreeIndex,
    /// The running jobs' holdings by release time, which a pass's availability profile reads
    /// (derived; kept by every start, release and release-time change; rebuilt on restore).
    #[serde(skip)]
    pub(crate) running_ends: RunningEnds,
    /// The billing rates the configuration's weights give per resource (derived from the
    /// configuration and the GPU models; rebuilt with the running jobs' rates).
    #[serde(skip)]
    pub(crate) billing: usage::Billing,
    /// The gangs known to fit the nodes were they empty (derived; cleared wherever the node
    /// table changes).
    #[serde(skip)]
    pub(crate) satisfiable: satisfiable::KnownSatisfiable,
    /// The topology tree when the configuration names levels. A snapshot keeps only the
    /// numbering of its domains, which depends on the order nodes came and went; a restore
    /// adds the nodes back ([`ClusterState::rebuild_restored`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) topology: Option<crate::model::topology::Topology>,
    /// Quota usage (derived; rebuilt on restore with [`ClusterState::rebuild_quota`]).
    #[serde(skip)]
    pub(crate) quota: QuotaBook,
    /// The nodes' capacity summed (derived; kept where a node is added or removed; rebuilt on
    /// restore). Read through [`ClusterState::capacity`].
    #[serde(skip)]
    capacity: totals::CapacityTotals,
}

/// A job the scheduler tracks (crate-internal: hosts and plug-ins read jobs through [`JobView`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Job {
    /// As submitted.
    pub spec: JobSpec,
    /// Arrival order.
    pub arrival: u64,
    /// Submit time (the tick's time when the spec gives none).
    pub submit_ms: u64,
    /// Its partition.
    pub partition: PartitionId,
    /// Compiled task groups.
    pub shapes: Vec<TaskShape>,
    /// What `shapes` add up to (derived: set at submit and by a restore).
    #[serde(skip)]
    pub totals: JobTotals,
    /// Held by the host.
    pub held: bool,
    /// Licenses held while it runs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub licenses: licenses::LicenseNeed,
    /// Each group's compiled topology constraint; empty when no group has one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub topology: Vec<Option<crate::model::topology::LevelNeed>>,
    /// Dependencies not yet satisfied.
    pub waiting_on: Vec<(JobId, DependencyKind)>,
    /// Pending, running or ended.
    pub state: JobState,
    /// Its quota queue, interned from `spec.queue` (derived: set at submit and by
    /// a restore); `None` without a queue or without quotas.
    #[serde(skip)]
    pub queue: Option<QueueId>,
    /// The fair-share association it is charged to; `None` without configured accounts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assoc: Option<AssocId>,
    /// The arrival numbers of the jobs that have preempted it, and of those that had preempted
    /// them when they did (and so on): it never preempts them in turn.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub preempted_by: Vec<u64>,
    /// The queues whose jobs have preempted it by fair sharing: with `anti_thrash`, no job of
    /// those queues preempts it again. Boxed: most jobs never have one, and every byte of a
    /// pending job counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preempted_by_queues: Option<Box<[String]>>,
    /// What it has run so far, across requeues.
    #[serde(default, skip_serializing_if = "RunHistory::is_empty")]
    pub history: RunHistory,
    /// Its requeues for the ready timeout and its back-off (`policy.wait_for_ready`).
    #[serde(default, skip_serializing_if = "ReadyRecord::is_empty")]
    pub ready: ReadyRecord,
}

/// What a job has run so far, across requeues: the inputs of attained-service and
/// least-lost-work policies. Read it through [`JobView`], which adds the current run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunHistory {
    /// GPU-milliseconds held in its runs that have ended: GPUs held (whole, fractional, and MIG
    /// slices as their compute share) times the run's length.
    pub attained_gpu_ms: u64,
    /// How many times it has started.
    pub runs: u32,
    /// How many times it was told to stop for a preemptor.
    pub preemptions: u32,
    /// Start and end of its last run that has ended.
    pub last_run: Option<(u64, u64)>,
    /// When its current run last wrote a checkpoint (the `checkpoint` event); cleared when a
    /// run starts.
    pub last_checkpoint_ms: Option<u64>,
}

impl RunHistory {
    /// Whether it never ran.
    pub(crate) fn is_empty(&self) -> bool {
        *self == RunHistory::default()
    }
}

/// Where a job is in its life.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum JobState {
    /// Waiting to start.
    Pending,
    /// Holding resources.
    Running(Box<RunningJob>),
    /// Ended; remembered for dependencies and duplicate ids.
    Ended {
        /// When.
        at_ms: u64,
        /// How.
        outcome: Outcome,
    },
}

/// A running job's allocation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RunningJob {
    /// Start time.
    pub start_ms: u64,
    /// Where it runs.
    pub assignments: Vec<Assignment>,
    /// Set once it has been told to stop.
    pub preemption: Option<Preemption>,
    /// Its readiness, while `policy.wait_for_ready` watches it; `None`: not watched (it
    /// counts as ready).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readiness: Option<Readiness>,
    /// What it holds on each node, derived from `assignments` when it starts and on restore
    /// ([`ClusterState::node_charges`]).
    #[serde(skip)]
    pub(crate) charges: Vec<(NodeId, crate::model::resources::NodeAmounts)>,
    /// What holding `charges` costs per second in fair-share usage: its billing rate times its
    /// QoS's usage factor (derived with `charges` when it starts, and again on restore, node
    /// changes and reconfiguration, which are all that move the rate; 0 without accounts).
    #[serde(skip)]
    pub(crate) billing_rate: f64,
}

/// A running job asked to stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Preemption {
    /// The job it makes room for.
    pub for_job: JobId,
    /// When its grace runs out.
    pub deadline_ms: u64,
}

impl Job {
    /// Whether every placement of it charges exactly its tasks as asked, so that its quota
    /// demand does not hang on where it is placed (save for the GPU models): it is not
    /// exclusive (which charges whole nodes), asks for no MIG slice (charged by the slices a
    /// placement picks), and no group accepts fewer tasks than it asks for.
    pub(crate) fn charged_as_asked(&self) -> bool {
        !self.spec.exclusive
            && self
                .shapes
                .iter()
                .all(|s| s.count == s.min_count && !matches!(s.gpu, crate::model::GpuNeed::Mig(_)))
    }

    /// Whether a job of queue `queue` has preempted it by fair sharing.
    pub(crate) fn preempted_by_fair_queue(&self, queue: &str) -> bool {
        self.preempted_by_queues
            .as_deref()
            .is_some_and(|queues| queues.iter().any(|q| q == queue))
    }

    /// The running allocation, if running.
    pub(crate) fn running(&self) -> Option<&RunningJob> {
        match &self.state {
            JobState::Running(r) => Some(r),
            _ => None,
        }
    }

    /// When a running job told to stop is killed unless it stopped: its preemption's grace
    /// deadline.
    pub(crate) fn grace_deadline_ms(&self) -> Option<u64> {
        Some(self.running()?.preemption?.deadline_ms)
    }

    /// When a running job frees its resources at the latest, as backfill plans it: its time
    /// limit, or the grace deadline of a preemption when that comes first.
    pub(crate) fn release_ms(&self) -> Option<u64> {
        let run = self.running()?;
        let end = run.start_ms.saturating_add(self.spec.time_limit_ms);
        Some(run.preemption.map_or(end, |p| end.min(p.deadline_ms)))
    }
}

impl ClusterState {
    /// The configuration, to change in a unit test (a copy where another state shares it).
    #[cfg(test)]
    pub(crate) fn config_mut(&mut self) -> &mut ClusterConfig {
        Arc::make_mut(&mut self.config)
    }

    /// The job in slot `id`.
    pub(crate) fn job(&self, id: JobId) -> Option<&Job> {
        self.jobs.get(id)
    }

    /// The node in slot `id`.
    pub(crate) fn node(&self, id: NodeId) -> Option<&Node> {
        self.nodes.get(id.index()).and_then(Option::as_ref)
    }

    /// The slot of the job with external id `name`, while it is tracked.
    pub(crate) fn job_id(&self, name: &str) -> Option<JobId> {
        self.job_names.get(name, &self.jobs)
    }

    /// A job's external id; `None` for an empty slot.
    pub fn job_name(&self, id: JobId) -> Option<&str> {
        self.job(id).map(|j| j.spec.id.as_str())
    }

    /// The running jobs' holdings by release time (the part of every pass's availability
    /// profile that lives across ticks).
    #[cfg(test)]
    pub(crate) fn running_ends(&self) -> &RunningEnds {
        &self.running_ends
    }

    /// A node's name.
    pub fn node_name(&self, id: NodeId) -> &str {
        self.node(id).map_or("", |n| n.name.as_str())
    }

    /// The nodes' capacity summed; debug builds check it against a sum over the nodes.
    pub(crate) fn capacity(&self) -> totals::CapacityTotals {
        debug_assert_eq!(
            self.capacity,
            totals::CapacityTotals::of(&self.nodes),
            "capacity totals stale"
        );
        self.capacity
    }

    /// Rebuilds derived indexes (after a restore).
    pub(crate) fn rebuild_index(&mut self) {
        self.satisfiable.clear();
        self.node_names.rebuild(&self.nodes);
        self.capacity = totals::CapacityTotals::of(&self.nodes);
        self.index = FreeIndex::build(&self.nodes, self.models.len());
        self.dependents = DependencyGraph::default();
        for (id, job) in self.jobs.iter() {
            if job.state == JobState::Pending {
                for (target, _) in &job.waiting_on {
                    self.dependents.add(id, *target);
                }
            }
        }
        self.rebuild_topology();
        self.rebuild_totals();
        self.rebuild_charges();
        self.rebuild_billing_rates();
        self.running_ends = RunningEnds::of(self);
    }

    /// After a restore: every derived structure rebuilt ([`ClusterState::rebuild_index`]),
    /// with the topology's domains numbered as in the snapshotted tree, whose ids break ties
    /// between domains and are what domain scorers see. A snapshot without a numbering (from
    /// before it was kept) numbers them afresh, in node order.
    /// A state out of [`ClusterState::check_bounds`] is refused before anything is rebuilt.
    pub(crate) fn rebuild_restored(&mut self) -> Result<(), crate::error::ConsistencyError> {
        self.check_bounds()?;
        self.job_names = job_names::JobNames::of(&self.jobs)?;
        let saved = self.topology.take();
        self.rebuild_index();
        self.restore_topology(saved)
            .map_err(crate::error::ConsistencyError::from)
    }

    /// Derives every job's totals from its shapes.
    fn rebuild_totals(&mut self) {
        for (_, job) in self.jobs.iter_mut() {
            job.totals = JobTotals::of(&job.shapes);
        }
    }

    /// Derives every running job's per-node charges from its assignments.
    fn rebuild_charges(&mut self) {
        for id in self.jobs.ids() {
            let Some((assignments, exclusive)) = self
                .jobs
                .get(id)
                .and_then(|job| Some((&job.running()?.assignments, job.spec.exclusive)))
            else {
                continue;
            };
            let charges = self.charges_of(assignments, exclusive);
            if let Some(JobState::Running(run)) = self.jobs.get_mut(id).map(|job| &mut job.state) {
                run.charges = charges;
            }
        }
    }
}
