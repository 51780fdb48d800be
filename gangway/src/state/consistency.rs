//! A full recount of node usage from the running jobs: the core of the invariant oracle and the
//! check a restored snapshot must pass.

use super::ClusterState;
use crate::error::ConsistencyError;
#[cfg(any(test, feature = "testkit"))]
use crate::model::ids::JobId;
use crate::model::node::Node;
use crate::model::resources::{DEVICE_MILLI, MAX_DEVICES, NodeAmounts};

impl ClusterState {
    /// The bounds a restored state must meet before anything is derived from it (the free
    /// index, the topology, the charges): every node has at most [`MAX_DEVICES`] GPUs and a
    /// GPU model the state knows. A snapshot edited or damaged beyond them is refused, not
    /// indexed out of range.
    pub(crate) fn check_bounds(&self) -> Result<(), ConsistencyError> {
        for node in self.nodes.iter().flatten() {
            if node.gpu_count > MAX_DEVICES {
                return Err(ConsistencyError::new(format!(
                    "node {}: {} GPUs, more than a node may have ({MAX_DEVICES})",
                    node.name, node.gpu_count
                )));
            }
            if let Some(model) = node.gpu_model
                && model.index() >= self.models.len()
            {
                return Err(ConsistencyError::new(format!(
                    "node {}: GPU model {} of {} known",
                    node.name,
                    model.index(),
                    self.models.len()
                )));
            }
        }
        Ok(())
    }

    /// Recounts every node's usage from the running jobs and compares it with the books; checks
    /// capacity, device and MIG slice exclusivity, that nothing runs on a down or missing node
    /// or a down GPU, that MIG-mode GPUs hold no whole or fractional task, that licenses held
    /// add up to the running jobs' and stay within their totals, that the dependency graph
    /// matches the jobs' waiting lists, that the running jobs' ends kept for the availability
    /// profile and the job-name index equal a rebuild, and that every job's fair-share
    /// association exists.
    pub(crate) fn check_consistency(&self) -> Result<(), ConsistencyError> {
        self.recount().map_err(ConsistencyError::from)
    }

    /// A job's external id for a message, or its slot when the slot is empty.
    #[cfg(any(test, feature = "testkit"))]
    pub(crate) fn job_label(&self, id: JobId) -> String {
        self.job_name(id)
            .map_or_else(|| format!("job slot {}", id.0), str::to_string)
    }

    /// [`ClusterState::check_consistency`]'s checks, each failure a message.
    fn recount(&self) -> Result<(), String> {
        let mut counted = vec![NodeAmounts::default(); self.nodes.len()];
        let mut jobs_on = vec![0u32; self.nodes.len()];
        let mut licenses = vec![0u32; self.licenses.len()];
        for &id in &self.running {
            let job = self
                .job(id)
                .ok_or_else(|| format!("running job slot {} is empty", id.0))?;
            let run = job.running().ok_or_else(|| {
                format!("job {} is in the running set but not running", job.spec.id)
            })?;
            for (g, shape) in job.shapes.iter().enumerate() {
                let placed: u32 = run
                    .assignments
                    .iter()
                    .filter(|a| a.group == g)
                    .map(|a| a.tasks)
                    .sum();
                if placed < shape.min_count || placed > shape.count {
                    return Err(format!(
                        "job {} group {g}: {placed} tasks placed, wants {}..={}",
                        job.spec.id, shape.min_count, shape.count
                    ));
                }
            }
            for (license, count) in &job.licenses {
                if let Some(held) = licenses.get_mut(*license) {
                    *held += count;
                }
            }
            for (node_id, amounts) in self.charges_of(&run.assignments, job.spec.exclusive) {
                let node = self
                    .node(node_id)
                    .ok_or_else(|| format!("job {} runs on a removed node", job.spec.id))?;
                if node.state == crate::model::node::NodeState::Down {
                    return Err(format!(
                        "job {} runs on down node {}",
                        job.spec.id, node.name
                    ));
                }
                if let Some(gpu) = (0..node.gpu_count).find(|&g| {
                    node.gpu_is_down(g) && amounts.devices.get(g).is_some_and(|d| *d > 0)
                }) {
                    return Err(format!(
                        "job {} uses down gpu {gpu} of node {}",
                        job.spec.id, node.name
                    ));
                }
                check_mig(node, &counted[node_id.index()], &amounts)
                    .map_err(|m| format!("job {} on node {}: {m}", job.spec.id, node.name))?;
                counted[node_id.index()].add(&amounts);
                jobs_on[node_id.index()] += 1;
            }
        }
        for (i, node) in self.nodes.iter().enumerate() {
            let Some(node) = node else { continue };
            if counted[i] != node.used || jobs_on[i] != node.running_jobs {
                return Err(format!(
                    "node {}: books say {:?} used by {} jobs, running jobs add up to {:?} by {}",
                    node.name, node.used, node.running_jobs, counted[i], jobs_on[i]
                ));
            }
            if !node.capacity.covers(&node.used) {
                return Err(format!(
                    "node {} is over capacity: {:?}",
                    node.name, node.used
                ));
            }
            if node.used.devices.iter().any(|d| *d > DEVICE_MILLI) {
                return Err(format!("node {}: a device is shared beyond 1", node.name));
            }
        }
        for (l, held) in licenses.iter().enumerate() {
            let name = self.licenses.name(l);
            if *held != self.licenses.used(l) {
                return Err(format!(
                    "license {name}: books say {} held, running jobs hold {held}",
                    self.licenses.used(l)
                ));
            }
            if *held > self.licenses.total(l) {
                return Err(format!(
                    "license {name}: {held} held of {}",
                    self.licenses.total(l)
                ));
            }
        }
        for &id in &self.pending {
            if !matches!(
                self.job(id).map(|j| &j.state),
                Some(super::JobState::Pending)
            ) {
                return Err(format!(
                    "job slot {} is in the pending set but not pending",
                    id.0
                ));
            }
        }
        self.check_charges()?;
        self.check_kept_indexes()?;
        self.check_dependencies()?;
        self.check_associations()
    }

    /// Every index kept across ticks equals a rebuild from scratch: the free index placements
    /// walk, the running jobs' ends the pass reads, and the job-name index. Debug builds
    /// check it after every tick ([`crate::Scheduler::tick`]), the oracle with the rest.
    pub(crate) fn check_kept_indexes(&self) -> Result<(), String> {
        if self.index != crate::placement::FreeIndex::build(&self.nodes, self.models.len()) {
            return Err("the free index kept across ticks differs from a rebuild".into());
        }
        if self.running_ends != crate::backfill::RunningEnds::of(self) {
            return Err("the running jobs' ends kept across ticks differ from a rebuild".into());
        }
        if !self.job_names.indexes(&self.jobs) {
            return Err("the job-name index differs from the jobs table".into());
        }
        if !self.node_names.indexes(&self.nodes) {
            return Err("the node names differ from the node table".into());
        }
        Ok(())
    }

    /// Every running job's remembered per-node charges are those of its assignments.
    fn check_charges(&self) -> Result<(), String> {
        for &id in &self.running {
            let Some((job, run)) = self.job(id).and_then(|j| Some((j, j.running()?))) else {
                continue;
            };
            let derived = self.charges_of(&run.assignments, job.spec.exclusive);
            if !self.node_charges(id).eq(derived) {
                return Err(format!(
                    "job {}: its remembered per-node charges differ from its assignments",
                    job.spec.id
                ));
            }
        }
        Ok(())
    }
}

/// A job's `amounts` on `node` against what other jobs hold there (`counted`): its slices exist,
/// no other job holds them, none is on a down GPU, and it holds no share of a MIG-mode GPU.
fn check_mig(node: &Node, counted: &NodeAmounts, amounts: &NodeAmounts) -> Result<(), String> {
    if amounts.mig & !node.capacity.mig != 0 {
        return Err(format!(
            "holds MIG slices {:#x} the node lacks",
            amounts.mig
        ));
    }
    if amounts.mig & counted.mig != 0 {
        return Err(format!(
            "MIG slices {:#x} are held by another job too",
            amounts.mig & counted.mig
        ));
    }
    for gpu in 0..node.gpu_count {
        let on_gpu = node.mig.gpu_mask(gpu as u32);
        if on_gpu == 0 {
            continue;
        }
        if node.gpu_is_down(gpu) && amounts.mig & on_gpu != 0 {
            return Err(format!("holds a MIG slice of down gpu {gpu}"));
        }
        if amounts.devices[gpu] > 0 && node.capacity.devices[gpu] == 0 {
            return Err(format!("holds a share of gpu {gpu}, which is in MIG mode"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::{ClusterConfig, Event, JobSpec, Scheduler};

    #[test]
    fn remembered_charges_that_no_longer_match_the_assignments_are_refused() {
        let cluster: ClusterConfig =
            serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 8}]}"#).unwrap();
        let mut s = Scheduler::new(cluster).unwrap();
        let job = JobSpec::new("a", 60_000, 2);
        s.tick(0, vec![Event::Submit { job }]).unwrap();
        let mut state = s.state().clone();
        assert_eq!(state.check_consistency(), Ok(()));
        let id = state.job_id("a").unwrap();
        let Some(super::super::JobState::Running(run)) =
            state.jobs.get_mut(id).map(|j| &mut j.state)
        else {
            panic!("a runs")
        };
        run.charges[0].1.cpu_milli = 1_000;
        let err = state.check_consistency().unwrap_err();
        assert!(err.message.contains("remembered per-node charges"), "{err}");
    }

    #[test]
    fn a_free_index_left_behind_by_a_start_is_refused() {
        let cluster: ClusterConfig =
            serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 8}]}"#).unwrap();
        let mut s = Scheduler::new(cluster).unwrap();
        let before = s.state().index.clone();
        let job = JobSpec::new("a", 60_000, 2);
        s.tick(0, vec![Event::Submit { job }]).unwrap();
        let mut state = s.state().clone();
        assert_eq!(state.check_consistency(), Ok(()));
        state.index = before;
        let err = state.check_consistency().unwrap_err();
        assert!(err.message.contains("free index"), "{err}");
    }

    /// A runs; B waits for A; C waits for A and B.
    fn chain() -> Scheduler {
        let config: ClusterConfig =
            serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 1}]}"#).unwrap();
        let mut s = Scheduler::new(config).unwrap();
        let job: serde_json::Value = serde_json::json!([
            {"type": "submit", "job": {"id": "A", "time_limit_ms": 60_000, "groups": [{"count": 1}]}},
            {"type": "submit", "job": {"id": "B", "time_limit_ms": 60_000, "groups": [{"count": 1}],
                                       "after": [{"job": "A", "on": "ok"}]}},
            {"type": "submit", "job": {"id": "C", "time_limit_ms": 60_000, "groups": [{"count": 1}],
                                       "after": [{"job": "A", "on": "ok"}, {"job": "B", "on": "ok"}]}}]);
        let events: Vec<Event> = serde_json::from_value(job).unwrap();
        let out = s.tick(0, events).unwrap();
        assert!(out.rejected.is_empty(), "{:?}", out.rejected);
        s
    }

    #[test]
    fn a_wait_missing_from_the_dependency_graph_or_an_extra_edge_is_refused() {
        let s = chain();
        let mut state = s.state().clone();
        let (a, b) = (state.job_id("A").unwrap(), state.job_id("B").unwrap());
        state.dependents.remove_edge(b, a);
        let err = state.check_consistency().unwrap_err();
        assert!(err.message.contains("B waits for A"), "{err}");

        let mut state = s.state().clone();
        state.dependents.add(a, b);
        let err = state.check_consistency().unwrap_err();
        assert!(err.message.contains("4 edges"), "{err}");
    }

    #[test]
    fn a_mig_slice_held_twice_or_a_share_of_a_mig_gpu_is_refused() {
        let slices: Vec<serde_json::Value> = (0..7)
            .map(|i| serde_json::json!({"gpu": 1, "slice": i, "profile": "1g.10gb"}))
            .collect();
        let cluster: ClusterConfig = serde_json::from_value(serde_json::json!({"nodes": [
            {"name": "n1", "cpus": 64, "memory_mib": 512_000,
             "gpus": {"model": "a100-80gb", "count": 2, "mig": slices}}]}))
        .unwrap();
        let mut s = Scheduler::new(cluster).unwrap();
        let mig_job = |id: &str| -> Event {
            serde_json::from_value(serde_json::json!({"type": "submit", "job": {"id": id,
                "time_limit_ms": 3_600_000, "groups": [{"count": 1, "mig": "1g.10gb"}]}}))
            .unwrap()
        };
        s.tick(0, vec![mig_job("a"), mig_job("b")]).unwrap();
        let tamper = |edit: &dyn Fn(&mut crate::model::resources::NodeAmounts)| {
            let mut state = s.state().clone();
            let id = state.job_id("b").unwrap();
            let Some(super::super::JobState::Running(run)) =
                state.jobs.get_mut(id).map(|j| &mut j.state)
            else {
                panic!("b runs")
            };
            let before = run.assignments[0].amounts;
            edit(&mut run.assignments[0].amounts);
            let after = run.assignments[0].amounts;
            let node = state.nodes[0].as_mut().unwrap();
            node.used.sub(&before);
            node.used.add(&after);
            state.check_consistency()
        };
        assert!(tamper(&|_| {}).is_ok());
        // b claims a's slice (bit 0) instead of its own (bit 1).
        let err = tamper(&|a| a.mig = 0b1).unwrap_err();
        assert!(err.message.contains("held by another job"), "{err}");
        // b takes a share of GPU 1, which is in MIG mode.
        let err = tamper(&|a| a.devices[1] = 500).unwrap_err();
        assert!(err.message.contains("MIG mode"), "{err}");
    }
}
