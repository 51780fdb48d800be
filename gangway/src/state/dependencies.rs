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
#[derive(Clone, Debug, Default)]
pub(crate) struct DependencyGraph {
    graph: DiGraphMap<JobId, ()>,
}

impl DependencyGraph {
    /// Records that `dependent` waits for `target` to end.
    pub(crate) fn add(&mut self, dependent: JobId, target: JobId) {
        self.graph.add_edge(target, dependent, ());
    }

    /// The jobs waiting for `target`, by id.
    pub(crate) fn dependents(&self, target: JobId) -> Vec<JobId> {
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
    #[cfg(test)]
    pub(crate) fn job_count(&self) -> usize {
        self.graph.node_count()
    }

    /// Number of waiting relations (edges).
    pub(crate) fn len(&self) -> usize {
        self.graph.edge_count()
    }

    /// Whether no job waits for another.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.graph.edge_count() == 0
    }
}

impl super::ClusterState {
    /// Checks the dependency books: every pending job waits only for jobs that are tracked and
    /// have not ended, each such wait is an edge of the graph and the graph has no other edges;
    /// a running job waits for nothing.
    pub(crate) fn check_dependencies(&self) -> Result<(), String> {
        let mut waits = 0;
        for (id, job) in self.jobs.iter() {
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

    use crate::model::job::Dependency;
    use crate::model::job::FinishOutcome;
    use crate::{ClusterConfig, DependencyKind, Event, JobSpec, Scheduler};

    fn job(id: &str, after: &[&str]) -> Event {
        let mut spec = JobSpec::new(id, 60_000, 1);
        spec.after = after
            .iter()
            .map(|t| Dependency {
                job: (*t).to_owned(),
                on: DependencyKind::Ok,
            })
            .collect();
        Event::Submit { job: spec }
    }

    /// Ticks and checks the state's invariants, the dependency graph's among them.
    fn checked_tick(s: &mut Scheduler, now: u64, events: Vec<Event>) {
        let out = s.tick(now, events).unwrap();
        assert!(out.rejected.is_empty(), "{:?}", out.rejected);
        assert_eq!(s.state().check_consistency(), Ok(()));
    }

    /// A runs; B waits for A; C waits for A and B.
    fn scheduler_with_chain() -> Scheduler {
        let cluster: ClusterConfig =
            serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 1}]}"#).unwrap();
        let mut s = Scheduler::new(cluster).unwrap();
        let events = vec![job("A", &[]), job("B", &["A"]), job("C", &["A", "B"])];
        checked_tick(&mut s, 0, events);
        s
    }

    #[test]
    fn the_graph_lists_each_targets_dependents() {
        let cluster: ClusterConfig =
            serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 1}]}"#).unwrap();
        let mut s = Scheduler::new(cluster).unwrap();
        let mut c = JobSpec::new("c", 100, 1);
        c.after = vec![Dependency {
            job: "a".into(),
            on: DependencyKind::Any,
        }];
        let events = vec![job("a", &[]), job("b", &["a"]), Event::Submit { job: c }];
        checked_tick(&mut s, 0, events);
        let state = s.state();
        let id = |name| state.job_by_name(name).unwrap().id();
        assert_eq!(
            state.dependents().dependents(id("a")),
            vec![id("b"), id("c")]
        );
        assert!(state.dependents().len() == 2 && state.dependents().job_count() == 3);
    }

    #[test]
    fn the_graph_follows_submits_and_ends_and_is_rebuilt_on_restore() {
        let mut scheduler = scheduler_with_chain();
        let state = scheduler.state();
        let id = |name: &str| state.job_by_name(name).unwrap().id();
        let (a, b) = (id("A"), id("B"));
        assert_eq!(state.dependents().len(), 3);
        assert_eq!(state.dependents().dependents(a).len(), 2);

        let restored = Scheduler::restore(scheduler.snapshot()).unwrap();
        assert_eq!(restored.state().dependents().len(), 3);
        assert_eq!(restored.state().dependents().dependents(a).len(), 2);

        let finished = Event::Finished {
            job: "A".into(),
            outcome: FinishOutcome::Completed,
        };
        checked_tick(&mut scheduler, 1, vec![finished]);
        // B started; C now waits for B alone.
        let state = scheduler.state();
        assert_eq!(state.dependents().len(), 1);
        assert_eq!(state.dependents().dependents(b).len(), 1);
        assert!(state.dependents().dependents(a).is_empty());
    }

    #[test]
    fn a_cancelled_dependent_leaves_the_graph() {
        let mut scheduler = scheduler_with_chain();
        checked_tick(&mut scheduler, 1, vec![Event::Cancel { job: "C".into() }]);
        let state = scheduler.state();
        assert_eq!(state.dependents().len(), 1);
        assert_eq!(state.dependents().job_count(), 2);
    }

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
