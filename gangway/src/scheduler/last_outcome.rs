//! What the last pass left behind: for `explain`, for the host's next call, and for the next
//! pass's shortcuts. One struct, in place of a field of the scheduler each; a snapshot keeps
//! its first part ([`crate::scheduler::Snapshot`] writes those fields as they are), and the
//! second is memory that a full pass rebuilds (a restored or cloned scheduler starts without it).

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::model::ids::JobId;
use crate::policy::PassFigures;
use crate::scheduler::Plan;
use crate::scheduler::pass::head::Head;
use crate::scheduler::pass::order::calc_period::PriorityCalc;
use crate::scheduler::pass::order::order_index::OrderIndex;
use crate::scheduler::pass::preempt::{PreemptTaken, VictimOrders};
use crate::scheduler::pass::report::PendingEntry;
use crate::scheduler::shortcuts::kept_plans::KeptPlans;
use crate::scheduler::shortcuts::resume::LastPass;
use crate::scheduler::shortcuts::settled::DeferredReport;
use crate::state::ClusterState;

/// The last pass's outcome.
#[derive(Clone)]
pub(in crate::scheduler) struct LastOutcome {
    // Kept by a snapshot.
    /// The report on the jobs the pass visited.
    pub(in crate::scheduler) report: Vec<PendingEntry>,
    /// The admission denials (the first deny's message), by job.
    pub(in crate::scheduler) denied: BTreeMap<JobId, String>,
    /// The node-filter rejections of jobs no node passed for, by job.
    pub(in crate::scheduler) details: BTreeMap<JobId, String>,
    /// The reservations, by job.
    pub(in crate::scheduler) plans: BTreeMap<JobId, Plan>,
    /// When the host must tick again.
    pub(in crate::scheduler) next_wakeup_ms: Option<u64>,
    /// The last priority calculation under `policy.priority.calc_period_ms`: its figures and
    /// the keys computed against them.
    pub(in crate::scheduler) priority_calc: Option<PriorityCalc>,
    /// The pass's head, where a pin or a frozen estimate keeps it for the next pass
    /// ([`crate::scheduler::pass::head`]).
    pub(in crate::scheduler) head: Option<Head>,

    // Not kept: derived at the next pass, or a shortcut's memory.
    /// The pass's figures (time, totals, fair-share factors), for the report.
    pub(in crate::scheduler) figures: Arc<PassFigures>,
    /// The earliest end of a victim veto ([`crate::policy::Veto::until`]) that held back a
    /// preemptor which then found no victims: the tick's wake-up retries it then.
    pub(in crate::scheduler) veto_ends_ms: Option<u64>,
    /// The pending order of the last calculation, kept across passes
    /// ([`crate::scheduler::pass::order::order_index`]).
    pub(in crate::scheduler) order_index: Option<OrderIndex>,
    /// The jobs a settled pass did not visit, reported when read.
    pub(in crate::scheduler) deferred: Option<DeferredReport>,
    /// The reservations, for keeping them without a search in the next pass.
    pub(in crate::scheduler) kept: Option<KeptPlans>,
    /// The pass's state, for the next tick to continue when it only brings new jobs.
    pub(in crate::scheduler) resume: LastPass,
    /// The profile of a pass that cannot be continued, for the next pass to rebuild its
    /// profile in ([`crate::backfill::Availability::rebuild`]): its memory, and the one
    /// reservation the next pass may take up.
    pub(in crate::scheduler) spare_profile: SpareProfile,
    /// The victim orders of order-based preemption, for the next pass to bring up to date
    /// ([`crate::scheduler::pass::preempt::VictimOrders`]).
    pub(in crate::scheduler) victim_orders: VictimOrders,
    /// How often preemption searches took their shortcuts so far.
    pub(in crate::scheduler) preempt_taken: PreemptTaken,
    /// How many unplaced jobs' quota checks a kept verdict answered so far
    /// ([`crate::scheduler::pass::quota::UnplacedFits`]).
    pub(in crate::scheduler) quota_verdicts_reused: u64,
    /// How many placements a quota verdict that no placement could change spared so far
    /// ([`crate::Scheduler::quota_rules_out_placement`]).
    pub(in crate::scheduler) placements_spared: u64,
    /// How many turns counts ended at once so far ([`crate::Scheduler::counted_turn`]).
    pub(in crate::scheduler) turns_counted_out: u64,
}

/// A spare profile, which a clone leaves behind: it is memory and a shortcut, never part of
/// what was decided, so a trial copy of the scheduler (`what_if`) does not copy it.
#[derive(Debug, Default)]
pub(in crate::scheduler) struct SpareProfile(Option<crate::backfill::Availability>);

impl Clone for SpareProfile {
    fn clone(&self) -> Self {
        SpareProfile(None)
    }
}

impl LastOutcome {
    /// Before any pass: nothing reported, planned or remembered; the figures of `state` now.
    pub(in crate::scheduler) fn none(state: &ClusterState) -> Self {
        LastOutcome {
            report: Vec::new(),
            denied: BTreeMap::new(),
            details: BTreeMap::new(),
            plans: BTreeMap::new(),
            next_wakeup_ms: None,
            priority_calc: None,
            head: None,
            figures: Arc::new(PassFigures::new(state, state.now_ms)),
            veto_ends_ms: None,
            order_index: None,
            deferred: None,
            kept: None,
            resume: LastPass::default(),
            spare_profile: SpareProfile::default(),
            victim_orders: VictimOrders::default(),
            preempt_taken: PreemptTaken::default(),
            quota_verdicts_reused: 0,
            placements_spared: 0,
            turns_counted_out: 0,
        }
    }

    /// Keeps `profile`, a pass's profile that no later tick continues, as the spare the next
    /// pass builds its profile in; without one, the spare kept so far stays.
    pub(in crate::scheduler) fn spare(&mut self, profile: Option<crate::backfill::Availability>) {
        if profile.is_some() {
            self.spare_profile = SpareProfile(profile);
        }
    }

    /// Takes the spare profile out, for a pass to rebuild its own in.
    pub(in crate::scheduler) fn take_spare(&mut self) -> Option<crate::backfill::Availability> {
        self.spare_profile.0.take()
    }

    /// Drops the shortcuts' memory, so that the next pass runs in full.
    pub(in crate::scheduler) fn forget_shortcuts(&mut self) {
        self.deferred = None;
        self.order_index = None;
        self.kept = None;
        self.resume = LastPass::default();
        self.victim_orders = VictimOrders::default();
    }
}

#[cfg(test)]
mod tests {
    use super::SpareProfile;
    use crate::backfill::Availability;

    #[test]
    fn a_clone_leaves_the_spare_profile_behind() {
        let spare = SpareProfile(Some(Availability::default()));
        assert!(spare.clone().0.is_none(), "the copy has no spare");
        assert!(spare.0.is_some(), "the original keeps its spare");
    }
}
