//! Validating and compiling a submitted job. A bad submission is refused with a typed error
//! before anything changes.

use std::borrow::Cow;
use std::ops::ControlFlow;

use super::{ClusterState, Job, JobState, JobTotals, RunHistory};
use crate::error::{ErrorKind, EventError};
use crate::model::ids::{JobId, NodeId, PartitionId};
use crate::model::job::{JobSpec, PlacementMode, TaskGroup};
use crate::model::node::Node;
use crate::model::resources::{DEVICE_MILLI, NodeAmounts};
use crate::model::shape::{GpuNeed, ModelMask, TaskShape};
use crate::placement::{Candidates, CapacityView, GangRequest, ShapeMix, place_gang};

fn invalid(message: String) -> EventError {
    EventError::new(ErrorKind::Invalid, message)
}

impl ClusterState {
    /// Checks a submission and compiles it into a pending `Job` (not yet inserted).
    pub(crate) fn compile_job(&self, spec: JobSpec, now_ms: u64) -> Result<Job, EventError> {
        let id = &spec.id;
        if id.is_empty() {
            return Err(invalid("submit: job id must not be empty".into()));
        }
        if self.job_id(id).is_some() {
            return Err(EventError::new(
                ErrorKind::DuplicateJob,
                format!("submit {id}: a job with this id is still tracked"),
            ));
        }
        spec.check_times()
            .map_err(|m| invalid(format!("submit {id}: {m}")))?;
        if spec.time_limit_ms == 0 {
            return Err(invalid(format!(
                "submit {id}: time_limit_ms must be positive"
            )));
        }
        if spec.groups.is_empty() {
            return Err(invalid(format!("submit {id}: groups must not be empty")));
        }
        let partition = match &spec.partition {
            None => self.default_partition,
            Some(name) => self.partition_id(name).ok_or_else(|| {
                EventError::new(
                    ErrorKind::UnknownPartition,
                    format!("submit {id}: unknown partition \"{name}\""),
                )
            })?,
        };
        let part = &self.partitions[partition.index()];
        if let Some(max) = part.max_time_ms
            && spec.time_limit_ms > max
        {
            return Err(invalid(format!(
                "submit {id}: time_limit_ms {} exceeds partition {}'s max_time_ms {max}",
                spec.time_limit_ms, part.name
            )));
        }
        // The quota tree is built from the configured queues, and exists when there are any.
        let queue = match &spec.queue {
            None => None,
            Some(name) => Some(
                self.quota
                    .tree
                    .as_ref()
                    .and_then(|t| t.queue_id(name))
                    .ok_or_else(|| {
                        EventError::new(
                            ErrorKind::UnknownQueue,
                            format!("submit {id}: unknown queue \"{name}\""),
                        )
                    })?,
            ),
        };
        // Accounts are configured exactly when there is a fair-share tree, built from them.
        if let Some(account) = &spec.account
            && let Some(fairshare) = &self.fairshare
            && !fairshare.is_configured(account, &self.config.accounts)
        {
            return Err(EventError::new(
                ErrorKind::UnknownAccount,
                format!("submit {id}: unknown account \"{account}\""),
            ));
        }
        if let Some(qos) = &spec.qos
            && self.config.qos(qos).is_none()
        {
            return Err(invalid(format!("submit {id}: unknown qos \"{qos}\"")));
        }
        let mut shapes = Vec::with_capacity(spec.groups.len());
        for (g, group) in spec.groups.iter().enumerate() {
            shapes.push(self.compile_group(id, g, group)?);
        }
        let mut waiting_on = Vec::with_capacity(spec.after.len());
        for dep in &spec.after {
            if &dep.job == id {
                return Err(invalid(format!(
                    "submit {id}: a job cannot depend on itself"
                )));
            }
            let target = self.job_id(&dep.job).ok_or_else(|| {
                EventError::new(
                    ErrorKind::UnknownJob,
                    format!("submit {id}: dependency on unknown job \"{}\"", dep.job),
                )
            })?;
            waiting_on.push((target, dep.on));
        }
        let topology = self.compile_topology(id, &spec.groups)?;
        let licenses = self.licenses.compile(id, &spec.licenses)?;
        self.check_satisfiable(id, partition, &shapes, &topology, spec.exclusive)?;
        Ok(Job {
            licenses,
            submit_ms: spec.submit_ms.unwrap_or(now_ms),
            arrival: self.next_arrival,
            partition,
            totals: JobTotals::of(&shapes),
            shapes,
            topology,
            held: false,
            waiting_on,
            state: JobState::Pending,
            queue,
            assoc: None,
            preempted_by: Vec::new(),
            preempted_by_queues: None,
            history: RunHistory::default(),
            ready: super::ReadyRecord::default(),
            spec,
        })
    }

    fn compile_group(
        &self,
        id: &str,
        g: usize,
        group: &TaskGroup,
    ) -> Result<TaskShape, EventError> {
        let at = GroupAt { id, g };
        if group.count == 0 {
            return Err(invalid(format!("{at}.count must be at least 1")));
        }
        let min_count = group.min_tasks();
        if min_count == 0 || min_count > group.count {
            return Err(invalid(format!(
                "{at}.min_count {min_count} must be between 1 and count {}",
                group.count
            )));
        }
        let gpus = group.gpus.milli();
        let gpu = if let Some(profile) = &group.mig {
            self.mig_need(at, gpus, profile)?
        } else if gpus == 0 {
            GpuNeed::None
        } else if gpus < u64::from(DEVICE_MILLI) {
            GpuNeed::Fraction(gpus as u16)
        } else if gpus.is_multiple_of(u64::from(DEVICE_MILLI)) && gpus / 1000 <= 16 {
            GpuNeed::Whole((gpus / 1000) as u16)
        } else if gpus.is_multiple_of(u64::from(DEVICE_MILLI)) {
            return Err(EventError::new(
                ErrorKind::Unsatisfiable,
                format!(
                    "{at}: one task asks for {} GPUs; a node has at most 16 (this cluster's \
                     largest has {})",
                    group.gpus,
                    self.nodes
                        .iter()
                        .flatten()
                        .map(|n| n.gpu_count)
                        .max()
                        .unwrap_or(0)
                ),
            ));
        } else {
            return Err(invalid(format!(
                "{at}.gpus {} must be a whole number, or a fraction below 1",
                group.gpus
            )));
        };
        let mut models = ModelMask::ANY;
        if let Some(names) = &group.gpu_models {
            if names.is_empty() {
                return Err(invalid(format!(
                    "{at}.gpu_models must not be empty when given"
                )));
            }
            for name in names {
                match self.models.iter().position(|m| m == name) {
                    Some(i) => models.0 |= 1u64 << i,
                    None => {
                        return Err(EventError::new(
                            ErrorKind::Unsatisfiable,
                            format!("{at}: no node has GPU model \"{name}\""),
                        ));
                    }
                }
            }
        }
        Ok(TaskShape {
            cpu_milli: group.cpus.milli(),
            memory_mib: group.memory_mib,
            gpu,
            models,
            count: group.count,
            min_count,
            mode: group.placement,
        })
    }

    /// Refuses a gang that could not fit the partition's nodes even if they were all empty and
    /// up, checked at `min_count`.
    fn check_satisfiable(
        &self,
        id: &str,
        partition: PartitionId,
        shapes: &[TaskShape],
        topology: &[Option<crate::model::topology::LevelNeed>],
        exclusive: bool,
    ) -> Result<(), EventError> {
        let minimal = minimal_shapes(shapes);
        let plain = crate::placement::ShapeMix::default();
        let request = GangRequest {
            shapes: &minimal,
            exclusive,
            partition,
            mix: &plain,
            topology: self.gang_topology(topology),
            gate: None,
            scores: None,
        };
        let everything = EmptyCluster { nodes: &self.nodes };
        let fits = || place_gang(&self.nodes, &everything, &everything, request).is_some();
        if request.topology.is_none() && self.satisfiable.knows(partition, exclusive, &minimal) {
            debug_assert!(
                fits(),
                "a gang known to fit the empty cluster no longer does"
            );
            return Ok(());
        }
        if fits() {
            return Ok(());
        }
        let part = &self.partitions[partition.index()];
        let members: Vec<&Node> = self
            .nodes
            .iter()
            .flatten()
            .filter(|n| n.partitions.contains(partition))
            .collect();
        for (g, shape) in minimal.iter().enumerate() {
            let one = shape.with_count(1);
            let hosts = members
                .iter()
                .filter(|n| crate::placement::fit::tasks_fitting(n, &n.capacity, &one) > 0)
                .count();
            let at = GroupAt { id, g };
            let message = if hosts == 0 {
                format!(
                    "{at}: one task ({}) fits no node of partition {}",
                    describe_task(shape, &self.mig_profiles),
                    part.name
                )
            } else if shape.mode == PlacementMode::StrictSpread && (hosts as u32) < shape.count {
                format!(
                    "{at}: {} tasks with strict_spread but the partition {} has {hosts} nodes that can hold one",
                    shape.count, part.name
                )
            } else {
                continue;
            };
            return Err(EventError::new(ErrorKind::Unsatisfiable, message));
        }
        Err(EventError::new(
            ErrorKind::Unsatisfiable,
            format!(
                "submit {id}: the gang does not fit partition {} even with every node empty{}",
                part.name,
                if topology.iter().any(Option::is_some) {
                    " under its topology constraints"
                } else {
                    ""
                }
            ),
        ))
    }

    /// Remembers that `job`'s gang (compiled, so it fits the empty cluster) fits, unless it has
    /// topology constraints ([`KnownSatisfiable`](super::satisfiable::KnownSatisfiable)).
    pub(super) fn remember_satisfiable(&mut self, job: &Job) {
        let (partition, exclusive) = (job.partition, job.spec.exclusive);
        let minimal = minimal_shapes(&job.shapes);
        if job.topology.iter().all(Option::is_none)
            && !self.satisfiable.knows(partition, exclusive, &minimal)
        {
            self.satisfiable
                .remember(partition, exclusive, minimal.into_owned());
        }
    }

    /// Inserts a compiled job as pending, returning its slot.
    pub(crate) fn insert_job(&mut self, job: Job) -> JobId {
        let waiting: Vec<JobId> = job.waiting_on.iter().map(|(t, _)| *t).collect();
        for shape in &job.shapes {
            self.shape_mix.record(shape, shape.count);
        }
        if job
            .shapes
            .iter()
            .any(|s| ShapeMix::task_weight(s).is_some())
        {
            self.mix_epoch += 1;
        }
        let id = match self.free_slots.pop() {
            Some(slot) => {
                self.jobs.put(slot, job);
                slot
            }
            None => self.jobs.push(job),
        };
        self.next_arrival += 1;
        self.job_names.insert(id, &self.jobs);
        self.add_pending(id);
        for target in waiting {
            self.dependents.add(id, target);
        }
        id
    }
}

/// A gang's shapes at their minimal counts: the shapes themselves where no group is elastic.
fn minimal_shapes(shapes: &[TaskShape]) -> Cow<'_, [TaskShape]> {
    match shapes.iter().all(|s| s.count == s.min_count) {
        true => Cow::Borrowed(shapes),
        false => Cow::Owned(shapes.iter().map(|s| s.with_count(s.min_count)).collect()),
    }
}

/// Where in a submission an error is: `submit ID: groups[G]`, formatted only for an error.
#[derive(Clone, Copy)]
pub(super) struct GroupAt<'a> {
    id: &'a str,
    g: usize,
}

impl std::fmt::Display for GroupAt<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "submit {}: groups[{}]", self.id, self.g)
    }
}

fn describe_task(shape: &TaskShape, mig_profiles: &[String]) -> String {
    let gpus = match shape.gpu {
        GpuNeed::None => String::new(),
        GpuNeed::Mig(p) => format!(
            ", a {} MIG slice",
            mig_profiles.get(p.index()).map_or("", String::as_str)
        ),
        GpuNeed::Whole(k) => format!(", {k} GPUs"),
        GpuNeed::Fraction(f) => format!(", {f}/1000 of a GPU"),
    };
    format!(
        "{} cpus, {} MiB{gpus}",
        crate::Milli::from_milli(shape.cpu_milli),
        shape.memory_mib
    )
}

/// Every node of the cluster as if empty and up: for the "can this ever fit" check.
struct EmptyCluster<'a> {
    nodes: &'a [Option<Node>],
}

impl CapacityView for EmptyCluster<'_> {
    fn free(&self, _id: NodeId, node: &Node) -> Option<NodeAmounts> {
        Some(node.capacity)
    }
}

impl Candidates for EmptyCluster<'_> {
    fn visit(&self, _shape: &TaskShape, f: &mut dyn FnMut(NodeId) -> ControlFlow<()>) {
        for (i, node) in self.nodes.iter().enumerate() {
            if node.is_some() && f(NodeId(i as u32)).is_break() {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::error::ErrorKind;
    use crate::{ClusterConfig, Event, Scheduler};

    /// Two nodes of 4 cpus and 2 GPUs, in partition `main`.
    fn two_nodes() -> Scheduler {
        let node = |name: &str| {
            serde_json::json!({"name": name, "cpus": 4,
                "gpus": {"model": "a100", "count": 2}})
        };
        let cluster: ClusterConfig =
            serde_json::from_value(serde_json::json!({"nodes": [node("n1"), node("n2")]})).unwrap();
        Scheduler::new(cluster).unwrap()
    }

    /// Submits job `id` with `groups` at `now`: its error kind and message if refused.
    fn submit(
        s: &mut Scheduler,
        now: u64,
        id: &str,
        groups: serde_json::Value,
    ) -> Option<(ErrorKind, String)> {
        let event: Event = serde_json::from_value(serde_json::json!({"type": "submit",
            "job": {"id": id, "time_limit_ms": 60_000, "groups": groups}}))
        .unwrap();
        let outcome = s.tick(now, vec![event]).unwrap();
        outcome
            .rejected
            .into_iter()
            .next()
            .map(|r| (r.error.kind, r.error.message))
    }

    #[test]
    fn a_gang_that_could_never_run_is_refused_with_its_reason() {
        let mut s = two_nodes();
        let refused = |s: &mut Scheduler, id: &str, groups| {
            let (kind, message) = submit(s, 0, id, groups).expect("refused");
            assert_eq!(kind, ErrorKind::Unsatisfiable, "{message}");
            message
        };
        // One task bigger than every node.
        let fat = refused(&mut s, "fat", serde_json::json!([{"count": 1, "gpus": 3}]));
        assert!(
            fat.contains("groups[0]: one task (")
                && fat.contains("fits no node of partition default"),
            "{fat}"
        );
        // More tasks strictly spread than nodes that hold one.
        let wide = refused(
            &mut s,
            "wide",
            serde_json::json!([{"count": 3, "gpus": 1, "placement": "strict_spread"}]),
        );
        assert!(
            wide.contains(
                "groups[0]: 3 tasks with strict_spread but the partition default has 2 nodes that can hold one"
            ),
            "{wide}"
        );
        // Every task fits a node, and a strictly spread group has a node for each task; the
        // gang as a whole does not fit.
        for (id, groups) in [
            ("packed", serde_json::json!([{"count": 3, "gpus": 2}])),
            (
                "mixed",
                serde_json::json!([
                    {"count": 2, "gpus": 1, "placement": "strict_spread"},
                    {"count": 1, "gpus": 2}
                ]),
            ),
        ] {
            let message = refused(&mut s, id, groups);
            assert_eq!(
                message,
                format!(
                    "submit {id}: the gang does not fit partition default even with every node empty"
                )
            );
        }
        // What fits at its minimal counts is taken.
        let elastic = serde_json::json!([{"count": 3, "min_count": 2, "gpus": 1,
            "placement": "strict_spread"}]);
        assert_eq!(submit(&mut s, 0, "elastic", elastic), None);
    }

    #[test]
    fn a_gang_that_fits_is_remembered_until_the_node_table_changes() {
        let mut s = two_nodes();
        let four = serde_json::json!([{"count": 2, "gpus": 2}]);
        assert_eq!(submit(&mut s, 0, "a", four.clone()), None);
        let job = s.state().job(s.state().job_id("a").unwrap()).unwrap();
        let minimal: Vec<_> = job
            .shapes
            .iter()
            .map(|g| g.with_count(g.min_count))
            .collect();
        let partition = job.partition;
        assert!(s.state().satisfiable.knows(partition, false, &minimal));
        assert!(!s.state().satisfiable.knows(partition, true, &minimal));
        // Known, a gang alike is taken again.
        assert_eq!(submit(&mut s, 1, "b", four.clone()), None);
        // Without `n2`, four GPUs are more than the partition has: the gang is placed again
        // and refused.
        let remove: Event =
            serde_json::from_value(serde_json::json!({"type": "node_remove", "node": "n2"}))
                .unwrap();
        assert!(s.tick(2, vec![remove]).unwrap().rejected.is_empty());
        assert!(!s.state().satisfiable.knows(partition, false, &minimal));
        let (kind, _) = submit(&mut s, 3, "c", four).expect("refused");
        assert_eq!(kind, ErrorKind::Unsatisfiable);
    }
}
