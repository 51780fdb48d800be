//! Order-based searches that found no room, remembered for the rest of a pass.
//!
//! Where the memo holds — order-based preemption without a quota tree, the profile's order
//! keys fixed for the pass, victim plug-ins that read of the preemptor at most its partition
//! ([`crate::policy::Profile`]'s `victim_plugins_read_partition_only`), and node filters and
//! scorers that answer by shape — a preemptor's candidates are the running jobs it outranks
//! less those the engine's rules and the vetoes of its partition remove, and its search fails
//! exactly when it cannot be placed with all of them stopped (no quota to satisfy). A later
//! preemptor of the same partition and [`Attempt`] kind, needing at least as many tasks for at
//! least as long, with an order no higher (its candidates are among the failed one's), then
//! fails too while no earmark changed: during a pass capacity only shrinks otherwise. It is
//! skipped as one that found no room. A shortcut (the reference pass searches every time).

use std::sync::Arc;

use crate::policy::PassFigures;
use crate::scheduler::pass::preempt::running_keys::RankKey;
use crate::scheduler::shortcuts::fit_memo::Attempt;

/// A search that found no room: the preemptor's attempt and its order.
#[derive(Clone, Copy, Debug)]
pub(in crate::scheduler) struct Failure {
    pub(in crate::scheduler) attempt: Attempt,
    pub(in crate::scheduler) key: RankKey,
}

impl Failure {
    /// Whether `other` is known to fail as this one did: it needs at least as much of the same
    /// kind, and ranks no higher (whom it outranks, this one did).
    fn covers(&self, other: &Failure) -> bool {
        self.attempt.within(&other.attempt) && other.key >= self.key
    }
}

/// The failed searches of one pass since the last earmark change, none covered by another.
#[derive(Debug, Default)]
pub(in crate::scheduler) struct NoRoom {
    /// The figures of the pass the failures belong to (compared by identity).
    figures: Option<Arc<PassFigures>>,
    /// The state's count of earmark changes when they were recorded.
    earmark_changes: u64,
    failed: Vec<Failure>,
}

impl NoRoom {
    /// Whether a search for `wanted` is known to fail, in the pass of `figures` with
    /// `earmark_changes` so far. Forgets what no longer holds.
    pub(in crate::scheduler) fn known_to_fail(
        &mut self,
        figures: &Arc<PassFigures>,
        earmark_changes: u64,
        wanted: &Failure,
    ) -> bool {
        let current = self
            .figures
            .as_ref()
            .is_some_and(|f| Arc::ptr_eq(f, figures));
        if !current || self.earmark_changes != earmark_changes {
            *self = NoRoom {
                figures: Some(Arc::clone(figures)),
                earmark_changes,
                failed: Vec::new(),
            };
        }
        self.failed.iter().any(|f| f.covers(wanted))
    }

    /// Records that a search for `failure` found no room (after
    /// [`NoRoom::known_to_fail`] in the same state).
    pub(in crate::scheduler) fn record(&mut self, failure: Failure) {
        self.failed.retain(|f| !failure.covers(f));
        self.failed.push(failure);
    }
}
