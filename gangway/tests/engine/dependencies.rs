//! The dependency graph through the Rust API: kept in step with submits, ends and restores, and
//! checked by the consistency oracle. The invariant oracle runs after every tick.

use crate::common;

use common::build::{finished, scheduler_from_str, submit};
use gangway::model::job::Dependency;
use gangway::testkit::checked_tick;
use gangway::{DependencyKind, Event, JobSpec, Scheduler};

fn job(id: &str, after: &[&str]) -> Event {
    let mut spec = JobSpec::new(id, 60_000, 1);
    spec.after = after
        .iter()
        .map(|t| Dependency {
            job: (*t).to_owned(),
            on: DependencyKind::Ok,
        })
        .collect();
    submit(spec)
}

/// A runs; B waits for A; C waits for A and B.
fn scheduler_with_chain() -> Scheduler {
    let mut scheduler = scheduler_from_str(r#"{"nodes": [{"name": "n1", "cpus": 1}]}"#);
    let events = vec![job("A", &[]), job("B", &["A"]), job("C", &["A", "B"])];
    let out = checked_tick(&mut scheduler, 0, events).unwrap();
    assert!(out.rejected.is_empty(), "{:?}", out.rejected);
    scheduler
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

    checked_tick(&mut scheduler, 1, vec![finished("A")]).unwrap();
    // B started; C now waits for B alone.
    let state = scheduler.state();
    assert_eq!(state.dependents().len(), 1);
    assert_eq!(state.dependents().dependents(b).len(), 1);
    assert!(state.dependents().dependents(a).is_empty());
}

#[test]
fn a_cancelled_dependent_leaves_the_graph() {
    let mut scheduler = scheduler_with_chain();
    checked_tick(&mut scheduler, 1, vec![Event::Cancel { job: "C".into() }]).unwrap();
    let state = scheduler.state();
    assert_eq!(state.dependents().len(), 1);
    assert_eq!(state.dependents().job_count(), 2);
}
