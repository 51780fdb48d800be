//! The invariant oracle: after any tick, no device is double-booked, no node exceeds capacity,
//! every running gang is fully placed, nothing runs on a down node, every decision refers to a
//! known job and every `start` matches the books; quota usage adds up and stays within limits,
//! earmarked resources are used only by their preemptor, no job starts where it would run
//! into a maintenance window by its time limit, every running group with a `required` topology
//! level lies within one domain of that level, and MIG slices are exclusive, exist, go only to
//! MIG tasks (one slice of the asked profile per task) while MIG-mode GPUs go to no other task;
//! with `policy.wait_for_ready`, back-offs are as configured and respected, and block
//! admission starts nothing beside a job that is not ready (`ready_oracle`); with fair sharing
//! between queues, a preemptor takes victims of other queues only in its tree and only from
//! queues that borrow (`fair_oracle`).

use crate::decision::{Decision, TickOutcome};
use crate::error::TickError;
use crate::event::Event;
use crate::scheduler::Scheduler;
use crate::state::{ClusterState, Job, JobState};

/// Checks every invariant after a tick that produced `outcome`.
///
/// ```
/// use gangway::{ClusterConfig, Event, JobSpec, Scheduler};
/// use gangway::testkit::check_tick;
/// let cluster: ClusterConfig = serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 4}]}"#).unwrap();
/// let mut s = Scheduler::new(cluster).unwrap();
/// let out = s.tick(0, vec![Event::Submit { job: JobSpec::new("a", 1000, 2) }]).unwrap();
/// check_tick(&s, &out).unwrap();
/// ```
pub fn check_tick(scheduler: &Scheduler, outcome: &TickOutcome) -> Result<(), String> {
    let state = scheduler.state();
    state.check_consistency().map_err(|e| e.message)?;
    state.check_quota().map_err(|e| e.message)?;
    check_topology(state)?;
    super::ready_oracle::check_ready(scheduler, outcome)?;
    super::fair_oracle::check_fair_preemptions(scheduler, outcome)?;
    let ranks: Vec<u8> = outcome.decisions.iter().map(Decision::order_rank).collect();
    if ranks.windows(2).any(|w| w[0] > w[1]) {
        return Err(format!("decisions out of order: {:?}", outcome.decisions));
    }
    for decision in &outcome.decisions {
        let name = decision.job();
        let job = state
            .job_by_name(name)
            .ok_or_else(|| format!("decision {decision:?} names unknown job {name}"))?
            .record();
        if let Decision::Start { placement, .. } = decision {
            let run = match &job.state {
                JobState::Running(run) => run,
                // A job started and ended (e.g. killed) in one tick cannot happen; a start must
                // leave the job running.
                other => return Err(format!("started job {name} is {other:?}")),
            };
            check_dependencies_met(state, job)?;
            if run.assignments.len() != placement.len() {
                return Err(format!("start of {name}: placement differs from the books"));
            }
            for (entry, a) in placement.iter().zip(&run.assignments) {
                let node = state
                    .node(a.node)
                    .ok_or_else(|| format!("{name} on a missing node"))?;
                if *entry.node != *node.name || entry.tasks != a.tasks || entry.gpus != a.gpus {
                    return Err(format!(
                        "start of {name}: entry {entry:?} differs from the books"
                    ));
                }
                if let Some(bad) = entry.gpus.iter().find(|g| **g as usize >= node.gpu_count) {
                    return Err(format!(
                        "start of {name}: GPU {bad} does not exist on {}",
                        node.name
                    ));
                }
                if let Some(shape) = job.shapes.get(a.group) {
                    super::mig_oracle::check_entry(state, name, node, shape, entry, a)?;
                }
                if !node.accepts_work() {
                    return Err(format!("start of {name} on {} which is not up", node.name));
                }
                let end = run.start_ms.saturating_add(job.spec.time_limit_ms);
                if state.maintenance().blocks(a.node, run.start_ms, end) {
                    return Err(format!(
                        "start of {name} on {}: runs into a maintenance window",
                        node.name
                    ));
                }
            }
        }
    }
    Ok(())
}

/// A started job's dependencies must all be met: every `after` target that is still tracked has
/// ended with an outcome its kind accepts. (A tracked job submitted after the dependent is a
/// later job reusing a forgotten id, not the one depended on.)
fn check_dependencies_met(state: &ClusterState, job: &Job) -> Result<(), String> {
    for dep in &job.spec.after {
        let Some(target) = state
            .job_by_name(&dep.job)
            .map(|t| t.record())
            .filter(|t| t.arrival < job.arrival)
        else {
            continue;
        };
        match target.state {
            JobState::Ended { outcome, .. } if outcome.satisfies(dep.on) => {}
            ref other => {
                return Err(format!(
                    "start of {}: its dependency on {} ({:?}) is not met: {other:?}",
                    job.spec.id, dep.job, dep.on
                ));
            }
        }
    }
    Ok(())
}

/// Every running group with `required: L` on nodes of one domain of level `L`.
fn check_topology(state: &crate::state::ClusterState) -> Result<(), String> {
    let Some(tree) = state.topology() else {
        return Ok(());
    };
    for view in state.running() {
        let (job, Some(run)) = (view.record(), view.running()) else {
            continue;
        };
        for (g, need) in job.topology.iter().enumerate() {
            let Some(need) = need.filter(|n| n.required) else {
                continue;
            };
            let mut domains = run
                .assignments
                .iter()
                .filter(|a| a.group == g)
                .map(|a| tree.domain_of(a.node, need.level));
            let first = domains.next().flatten();
            if first.is_none() || domains.any(|d| d != first) {
                return Err(format!(
                    "job {} group {g}: not within one {} domain: {:?}",
                    job.spec.id,
                    tree.levels()[need.level],
                    run.assignments
                ));
            }
        }
    }
    Ok(())
}

/// Ticks and runs the oracle; panics with the violated invariant (for tests).
pub fn checked_tick(
    scheduler: &mut Scheduler,
    now_ms: u64,
    events: Vec<Event>,
) -> Result<TickOutcome, TickError> {
    let outcome = scheduler.tick(now_ms, events)?;
    if let Err(violation) = check_tick(scheduler, &outcome) {
        panic!("invariant violated after tick at {now_ms} ms: {violation}");
    }
    Ok(outcome)
}
