//! The dependency DAG: an edge `target → dependent` for every `after` entry of a pending job
//! whose target has not ended yet, so an ending job finds its dependents without a scan.
//!
//! The graph is derived state: it is rebuilt from the jobs' waiting lists on restore and never
//! serialized. It is a `petgraph` graph keyed by the crate's own [`JobId`]s; petgraph's indices
//! never leave this module. Cycles cannot arise: a job may only depend on jobs that already
//! exist when it is submitted, and never on itself.

use petgraph::Direction;
use petgraph::graphmap::DiGraphMap;

use crate::model::ids::JobId;

/// Jobs waiting for other jobs to end.
///
/// ```
/// use gangway::{ClusterConfig, Event, Scheduler};
/// let cluster: ClusterConfig = serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 1}]}"#).unwrap();
/// let mut s = Scheduler::new(cluster).unwrap();
/// let events: Vec<Event> = serde_json::from_str(r#"[
///     {"type": "submit", "job": {"id": "a", "time_limit_ms": 100, "groups": [{"count": 1}]}},
///     {"type": "submit", "job": {"id": "b", "time_limit_ms": 100, "groups": [{"count": 1}],
///                                "after": [{"job": "a", "on": "ok"}]}},
///     {"type": "submit", "job": {"id": "c", "time_limit_ms": 100, "groups": [{"count": 1}],
///                                "after": [{"job": "a", "on": "any"}]}}]"#).unwrap();
/// s.tick(0, events).unwrap();
/// let state = s.state();
/// let id = |name| state.job_by_name(name).unwrap().id();
/// assert_eq!(state.dependents().dependents(id("a")), vec![id("b"), id("c")]);
/// assert!(state.dependents().len() == 2 && state.dependents().job_count() == 3);
/// ```
#[derive(Clone, Debug, Default)]
pub struct DependencyGraph {
    graph: DiGraphMap<JobId, ()>,
}

impl DependencyGraph {
    /// Records that `dependent` waits for `target` to end.
    pub(crate) fn add(&mut self, dependent: JobId, target: JobId) {
        self.graph.add_edge(target, dependent, ());
    }

    /// The jobs waiting for `target`, by id.
    pub fn dependents(&self, target: JobId) -> Vec<JobId> {
        if !self.graph.contains_node(target) {
            return Vec::new();
        }
        let mut dependents: Vec<JobId> = self
            .graph
            .neighbors_directed(target, Direction::Outgoing)
            .collect();
        dependents.sort_unstable();
        dependents
    }

    /// Removes a job that ended (or was forgotten) from the graph, returning the jobs that
    /// waited for it; the edges into it (what it waited for) go too.
    pub(crate) fn take_dependents(&mut self, target: JobId) -> Vec<JobId> {
        let dependents = self.dependents(target);
        self.graph.remove_node(target);
        dependents
    }

    /// Forgets that `dependent` waits for `target` (its outcome is already known); a job left
    /// without any relation leaves the graph.
    pub(crate) fn remove_edge(&mut self, dependent: JobId, target: JobId) {
        self.graph.remove_edge(target, dependent);
        for job in [target, dependent] {
            let isolated = [Direction::Outgoing, Direction::Incoming]
                .into_iter()
                .all(|dir| self.graph.neighbors_directed(job, dir).next().is_none());
            if isolated && self.graph.contains_node(job) {
                self.graph.remove_node(job);
            }
        }
    }

    /// Jobs in the graph (each with at least one relation, or a dependent just added).
    pub fn job_count(&self) -> usize {
        self.graph.node_count()
    }

    /// Number of waiting relations (edges).
    pub fn len(&self) -> usize {
        self.graph.edge_count()
    }

    /// Whether no job waits for another.
    pub fn is_empty(&self) -> bool {
        self.graph.edge_count() == 0
    }
}

impl super::ClusterState {
    /// Checks the dependency books: every pending job waits only for jobs that are tracked and
    /// have not ended, each such wait is an edge of the graph and the graph has no other edges;
    /// a running job waits for nothing.
    pub(crate) fn check_dependencies(&self) -> Result<(), String> {
        let mut waits = 0;
        for (slot, job) in self.jobs.iter().enumerate() {
            let Some(job) = job else { continue };
            let id = JobId(slot as u32);
            match job.state {
                super::JobState::Pending => {}
                super::JobState::Running(_) if !job.waiting_on.is_empty() => {
                    return Err(format!(
                        "job {} runs while waiting for {} job(s)",
                        job.spec.id,
                        job.waiting_on.len()
                    ));
                }
                _ => continue,
            }
            for (target, _) in &job.waiting_on {
                let name = match self.job(*target) {
                    Some(t) if !matches!(t.state, super::JobState::Ended { .. }) => &t.spec.id,
                    _ => {
                        return Err(format!(
                            "job {} waits for job slot {}, which is gone or ended",
                            job.spec.id, target.0
                        ));
                    }
                };
                if !self.dependents.dependents(*target).contains(&id) {
                    return Err(format!(
                        "job {} waits for {name}, but the dependency graph has no such edge",
                        job.spec.id
                    ));
                }
                waits += 1;
            }
        }
        if waits != self.dependents.len() {
            return Err(format!(
                "the dependency graph has {} edges, pending jobs wait {waits} times",
                self.dependents.len()
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removing_the_last_edge_of_a_job_drops_it_from_the_graph() {
        let mut graph = DependencyGraph::default();
        graph.add(JobId(1), JobId(0));
        graph.add(JobId(2), JobId(0));
        graph.remove_edge(JobId(1), JobId(0));
        assert_eq!(graph.dependents(JobId(0)), vec![JobId(2)]);
        assert_eq!(graph.job_count(), 2);
        graph.remove_edge(JobId(2), JobId(0));
        assert!(graph.is_empty());
        assert_eq!(graph.job_count(), 0);
    }

    #[test]
    fn taking_dependents_drops_the_job_and_what_it_waited_for() {
        let mut graph = DependencyGraph::default();
        graph.add(JobId(1), JobId(0));
        graph.add(JobId(2), JobId(1));
        assert_eq!(graph.take_dependents(JobId(1)), vec![JobId(2)]);
        assert!(graph.is_empty());
        assert!(graph.dependents(JobId(0)).is_empty());
    }
}
