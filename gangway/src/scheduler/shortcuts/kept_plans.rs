//! Backfill plans kept without a search. A job's plan from the last pass is still its earliest
//! start when nothing since can have moved it earlier:
//!
//! - no capacity was freed and no request changed: no event other than submits arrived and no
//!   running job lost its resources ([`crate::state::ClusterState::release_epoch`] is unchanged);
//! - every reservation the last pass made before this job's has been made again in this pass,
//!   identically, before this job's turn (an order change, a hold, a cancel or a different plan
//!   of an earlier job could otherwise leave room that was taken before);
//! - no preemption is configured and no earmark exists;
//! - the job is one task group without a topology constraint, whose placement is exact (it fits
//!   a window iff its nodes' task fits add up, see `fit_memo`), so fitting is monotone in usage;
//! - its licenses still fit over the planned window, and a fresh placement at its start, with
//!   the plan as the previous plan that breaks busy-first ties, picks exactly its pinned
//!   resources (as the search would there: `reserve` passes the same previous plan).
//!
//! Then usage now is, at every future instant, at least what it was when the plan was made (new
//! starts and new jobs' reservations only add), so no earlier start can fit now that did not fit
//! then; the plan's start still fits, and there the search would place the gang afresh, as the
//! last check did: a full search would return the plan. This rests on the search being exact:
//! it tries every instant at which usage steps down (every release, also the instant after
//! `now` when a job past its time limit is taken to end now), and a one-group gang fits a
//! window iff its placement finds room.
//!
//! The last check is the placement itself, not only a fit of the old pins: a reservation takes
//! resources busy now before idle ones ([`crate::placement::gang::BusyFirst`]), and a job started
//! since on a node idle then (a backfill job ending before the plan's start, say) makes it busy
//! now and free by the start, so a fresh search may now prefer it to a pinned idle node. Pins
//! are chosen afresh at every pass; a kept plan saves the search of the earlier start times.
//!
//! Conservative backfill re-plans every pending job at every pass; this skips the search for
//! each one whose plan provably stands. Property tests tick random streams with and without it
//! and compare every decision, plan and report.

use std::collections::BTreeMap;

use crate::backfill::{FutureView, Profile};
use crate::model::ids::JobId;
use crate::placement::GangRequest;
use crate::scheduler::{Plan, Scheduler};
use crate::state::licenses::LicenseNeed;

/// The order of the reservations one pass made, and the release epoch it ended at.
#[derive(Clone, Debug, Default)]
pub(in crate::scheduler) struct KeptPlans {
    epoch: u64,
    rank: BTreeMap<JobId, usize>,
    /// How many of these plans were kept from the pass before without a search.
    pub(in crate::scheduler) kept: usize,
}

impl KeptPlans {
    /// The plans made in `order` by a pass that ended at release epoch `epoch`, `kept` of them
    /// without a search.
    pub(in crate::scheduler) fn new(epoch: u64, order: &[JobId], kept: usize) -> Self {
        let rank = order.iter().enumerate().map(|(i, &id)| (id, i)).collect();
        KeptPlans { epoch, rank, kept }
    }
}

/// Which of the last pass's reservations this pass has made again, identically, by rank.
#[derive(Debug, Default)]
pub(in crate::scheduler) struct Confirmed {
    /// Plans kept without a search.
    pub(in crate::scheduler) kept: usize,
    made_again: Vec<bool>,
    /// How many of the last pass's reservations, from the first, are all made again.
    prefix: usize,
}

impl Confirmed {
    /// Records that the reservation of rank `rank` in the last pass was made again as before.
    pub(in crate::scheduler) fn made_again(&mut self, rank: usize) {
        if self.made_again.len() <= rank {
            self.made_again.resize(rank + 1, false);
        }
        self.made_again[rank] = true;
    }

    /// Whether every reservation the last pass made before rank `rank` was made again.
    fn covers(&mut self, rank: usize) -> bool {
        while self.made_again.get(self.prefix) == Some(&true) {
            self.prefix += 1;
        }
        self.prefix >= rank
    }
}

impl Scheduler {
    /// `id`'s rank among the last pass's reservations, when no capacity was freed since.
    pub(in crate::scheduler) fn kept_rank(&self, id: JobId) -> Option<usize> {
        let kept = self.last.kept.as_ref()?;
        if kept.epoch != self.state.release_epoch {
            return None;
        }
        kept.rank.get(&id).copied()
    }

    /// Whether `plan`, the plan of rank `rank` ([`Scheduler::kept_rank`]) from the last pass
    /// (starting after now), is provably still its job's earliest: see the module docs.
    pub(in crate::scheduler) fn plan_stands(
        &self,
        (plan, rank): (&Plan, usize),
        gang: &GangRequest<'_>,
        (limit, licenses): (u64, &LicenseNeed),
        profile: &Profile,
        confirmed: &mut Confirmed,
    ) -> bool {
        let end = plan.start_ms.saturating_add(limit);
        self.shortcuts
            && !self.state.config.policy.preemption.enabled
            && self.state.earmarks.is_empty()
            && gang.shapes.len() == 1
            && gang.topology.is_none()
            && confirmed.covers(rank)
            && profile.licenses.covers(licenses, plan.start_ms, end)
            && self.placed_afresh(plan, gang, end, profile)
    }

    /// Whether a fresh placement of `gang` over `[plan.start_ms, end)`, as the search makes it
    /// there (with `plan` as the previous plan that breaks ties), picks exactly `plan`'s
    /// resources.
    fn placed_afresh(
        &self,
        plan: &Plan,
        gang: &GangRequest<'_>,
        end: u64,
        profile: &Profile,
    ) -> bool {
        let view = FutureView {
            profile,
            running: &self.state.running_ends,
            start: plan.start_ms,
            end,
            maintenance: &self.state.maintenance,
            previous: &plan.assignments,
        };
        self.pin(&view, *gang)
            .is_some_and(|fresh| fresh == plan.assignments)
    }
}
