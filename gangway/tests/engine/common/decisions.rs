//! Reading what a tick decided and what `explain` says of the pending jobs.

use gangway::PendingInfo;
use gangway::{Decision, ErrorKind, PendingReason, PlacementEntry, Scheduler, TickOutcome};

/// The jobs started, in decision order.
pub fn started(decisions: &[Decision]) -> Vec<&str> {
    starts(decisions).into_iter().map(|(job, _)| job).collect()
}

/// Each job started with its placement, in decision order.
pub fn starts(decisions: &[Decision]) -> Vec<(&str, &[PlacementEntry])> {
    decisions
        .iter()
        .filter_map(|d| match d {
            Decision::Start { job, placement } => Some((job.as_str(), placement.as_slice())),
            _ => None,
        })
        .collect()
}

/// The placement `job` starts with, if one of `decisions` starts it.
pub fn placement<'a>(decisions: &'a [Decision], job: &str) -> Option<&'a [PlacementEntry]> {
    starts(decisions)
        .into_iter()
        .find_map(|(started, placement)| (started == job).then_some(placement))
}

/// The index and the error kind of each rejected event, in order.
pub fn rejected_kinds(out: &TickOutcome) -> Vec<(usize, ErrorKind)> {
    out.rejected
        .iter()
        .map(|r| (r.index, r.error.kind))
        .collect()
}

/// What `explain` says of the pending job `job`; panics if it is not pending.
pub fn pending(s: &Scheduler, job: &str) -> PendingInfo {
    s.explain()
        .pending
        .into_iter()
        .find(|p| p.job == job)
        .unwrap_or_else(|| panic!("{job} is not pending"))
}

/// Why the pending job `job` waits; panics if it is not pending.
pub fn reason(s: &Scheduler, job: &str) -> PendingReason {
    pending(s, job).reason
}
