//! Kueue's victim selection as plug-ins: a guard for higher partition tiers, and the victim
//! order lower tier, then borrowing queues, then lower priority, then the most recently started.
//! Together (the default profile) they choose exactly the victims of Kueue's
//! `candidatesOrdering` with Slurm's partition tiers.

use crate::policy::{PassContext, Plugin, Veto};
use crate::state::JobView;

/// Vetoes a victim of a higher partition `priority_tier` than its preemptor's.
///
/// ```
/// use gangway::policy::{builtin::TierGuard, Hook, Plugin};
/// assert_eq!((&TierGuard as &dyn Plugin).hooks(), [Hook::VictimVeto]);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct TierGuard;

fn tier(job: JobView<'_>, context: &PassContext<'_>) -> i32 {
    let state = context.state();
    state
        .partitions
        .get(job.record().partition.index())
        .map_or(0, |p| p.priority_tier)
}

impl TierGuard {
    /// Its name: in `policy.plugins`, faults, `explain` and saved state.
    pub const NAME: &'static str = "tier_guard";
}

#[gangway::policy::plugin]
impl Plugin for TierGuard {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn veto_victim(
        &self,
        preemptor: JobView<'_>,
        victim: JobView<'_>,
        context: &PassContext<'_>,
    ) -> Option<Veto> {
        (tier(victim, context) > tier(preemptor, context))
            .then(|| Veto::new("in a higher partition tier"))
    }
}

/// Victims of lower partition tiers first (with `policy.preemption.partition_tiers`; else all
/// alike).
#[derive(Clone, Copy, Debug, Default)]
pub struct LowerTierFirst;

impl LowerTierFirst {
    /// Its name: in `policy.plugins`, faults, `explain` and saved state.
    pub const NAME: &'static str = "lower_tier_first";
}

#[gangway::policy::plugin]
impl Plugin for LowerTierFirst {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn victim_key(&self, _: JobView<'_>, victim: JobView<'_>, context: &PassContext<'_>) -> i64 {
        if context.state().config().policy.preemption.partition_tiers {
            i64::from(tier(victim, context))
        } else {
            0
        }
    }
}

/// Victims of queues that borrow (use more than their nominal quota) first.
#[derive(Clone, Copy, Debug, Default)]
pub struct BorrowingFirst;

impl BorrowingFirst {
    /// Its name: in `policy.plugins`, faults, `explain` and saved state.
    pub const NAME: &'static str = "borrowing_first";
}

#[gangway::policy::plugin]
impl Plugin for BorrowingFirst {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn victim_key(&self, _: JobView<'_>, victim: JobView<'_>, context: &PassContext<'_>) -> i64 {
        let state = context.state();
        let borrowing = match (state.quota_tree(), state.job_queue(victim.id())) {
            (Some(tree), Some(queue)) => tree.is_borrowing(queue),
            _ => false,
        };
        i64::from(!borrowing)
    }
}

/// Victims of lower job priority first.
#[derive(Clone, Copy, Debug, Default)]
pub struct LowerPriorityFirst;

impl LowerPriorityFirst {
    /// Its name: in `policy.plugins`, faults, `explain` and saved state.
    pub const NAME: &'static str = "lower_priority_first";
}

#[gangway::policy::plugin]
impl Plugin for LowerPriorityFirst {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn victim_key(&self, _: JobView<'_>, victim: JobView<'_>, _: &PassContext<'_>) -> i64 {
        i64::from(victim.spec().priority)
    }
}

/// The most recently started victims first (they lose the least work).
#[derive(Clone, Copy, Debug, Default)]
pub struct NewestFirst;

impl NewestFirst {
    /// Its name: in `policy.plugins`, faults, `explain` and saved state.
    pub const NAME: &'static str = "newest_first";
}

#[gangway::policy::plugin]
impl Plugin for NewestFirst {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn victim_key(&self, _: JobView<'_>, victim: JobView<'_>, _: &PassContext<'_>) -> i64 {
        let start = victim.current_run().map_or(0, |(start, _)| start);
        i64::try_from(start).map_or(i64::MIN, |s| -s)
    }
}
