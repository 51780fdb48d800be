//! Building what the tests feed the scheduler: clusters and schedulers from JSON (as in
//! docs/protocol.md), and events.

use gangway::FinishOutcome;
use gangway::{ClusterConfig, Event, JobSpec, Scheduler};
use serde_json::Value;

/// The cluster configuration that `cluster` describes; panics if it does not parse.
pub fn config(cluster: Value) -> ClusterConfig {
    serde_json::from_value(cluster).unwrap()
}

/// A scheduler for the cluster that `cluster` describes; panics if it does not parse or is
/// refused.
pub fn scheduler(cluster: Value) -> Scheduler {
    Scheduler::new(config(cluster)).unwrap()
}

/// [`scheduler`] for a cluster given as JSON text.
pub fn scheduler_from_str(cluster: &str) -> Scheduler {
    Scheduler::new(serde_json::from_str(cluster).unwrap()).unwrap()
}

/// The event that `event` describes; panics if it does not parse.
pub fn event(event: Value) -> Event {
    serde_json::from_value(event).unwrap()
}

/// A `submit` of `job`.
pub fn submit(job: JobSpec) -> Event {
    Event::Submit { job }
}

/// A `submit` of each job, in order.
pub fn submit_all(jobs: Vec<JobSpec>) -> Vec<Event> {
    jobs.into_iter().map(submit).collect()
}

/// A `finished` of `job` that completed.
pub fn finished(job: &str) -> Event {
    Event::Finished {
        job: job.into(),
        outcome: FinishOutcome::Completed,
    }
}
