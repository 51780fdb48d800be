//! Preemption searches that found no room, remembered for the rest of a pass. A shortcut: the
//! reference pass searches every time.
//!
//! **Order-based searches.** Where the memo holds — order-based preemption without a quota
//! tree, the profile's order keys fixed for the pass, victim plug-ins that read of the
//! preemptor at most its partition ([`crate::policy::Profile`]'s
//! `victim_plugins_read_partition_only`), and node filters and scorers that answer by shape — a
//! preemptor's candidates are the running jobs it outranks less those the engine's rules and
//! the vetoes of its partition remove, and its search fails exactly when it cannot be placed
//! with all of them stopped (no quota to satisfy). A later preemptor of the same partition and
//! [`Attempt`] kind, needing at least as many tasks for at least as long, with an order no
//! higher (its candidates are among the failed one's), then fails too while no earmark
//! changed: during a pass capacity only shrinks otherwise. Where both gangs' placements succeed
//! exactly when the nodes' task fits add up (one task, or spread, through a gate that neither
//! filters nor ranks nodes), so does a later preemptor whose tasks each need at least as much
//! ([`Attempt::dominated_by`]): its fit on every node is no larger.
//!
//! **Fair-sharing searches.** A search of [`crate::scheduler::pass::preempt::fair_sharing`]
//! reads of its preemptor its queue, partition, priority, [`Attempt`] (shape, exclusivity,
//! tasks and window), licenses, the jobs that preempted it, and its demand. Where the demand
//! does not depend on the nodes the preemptor is placed on (not exclusive, no MIG slice, no
//! `gpu:MODEL` quota key, as many tasks as it asks at least), the candidates (the victim
//! plug-ins reading at most the partition, and the queue's `within_queue` policy other than
//! `lower_or_newer_equal_priority`, which reads the preemptor's submit time), the demand
//! charged to its queue and the targets the strategies take follow from those and the state,
//! and only the fit checks read the window: a longer one fits no better. So a later
//! preemptor equal in all of them but a window that ends no earlier — with no licenses,
//! preempted by no job, and node filters and scorers that answer by shape — fails too while
//! no job started, no earmark changed and no usage changed since the failure. No other
//! monotonicity is claimed: the greedy target walk is not monotone in its candidates.

use std::sync::Arc;

use crate::policy::PassFigures;
use crate::quota::QueueId;
use crate::scheduler::pass::preempt::running_keys::RankKey;
use crate::scheduler::shortcuts::fit_memo::Attempt;

/// A search that found no room, by what it read of its preemptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::scheduler) enum Failure {
    /// An order-based search: the preemptor's attempt and its order, and whether the task
    /// counts decide its placement.
    Ranked {
        attempt: Attempt,
        key: RankKey,
        counted: bool,
    },
    /// A fair-sharing search: the preemptor's attempt, queue and priority.
    Fair {
        attempt: Attempt,
        queue: QueueId,
        priority: i32,
    },
}

impl Failure {
    /// Whether `other` is known to fail as this one did: an order-based search that needs at
    /// least as much of the same kind (or, both counted, of a kind no task of which fits
    /// better) and ranks no higher (whom it outranks, this one did); a
    /// fair-sharing search equal to this one but for a window that ends no earlier.
    fn covers(&self, other: &Failure) -> bool {
        match (self, other) {
            (
                Failure::Ranked {
                    attempt,
                    key,
                    counted,
                },
                Failure::Ranked {
                    attempt: wanted,
                    key: wanted_key,
                    counted: wanted_counted,
                },
            ) => {
                wanted_key >= key
                    && (attempt.within(wanted)
                        || (*counted && *wanted_counted && attempt.dominated_by(wanted)))
            }
            (
                Failure::Fair {
                    attempt,
                    queue,
                    priority,
                },
                Failure::Fair {
                    attempt: wanted,
                    queue: wanted_queue,
                    priority: wanted_priority,
                },
            ) => {
                attempt.no_longer_than(wanted)
                    && (queue, priority) == (wanted_queue, wanted_priority)
            }
            _ => false,
        }
    }
}

/// The failed searches of one pass, none covered by another: the order-based ones since the
/// last earmark change, the fair-sharing ones since the last change of any kind.
#[derive(Debug, Default)]
pub(in crate::scheduler) struct NoRoom {
    /// The figures of the pass the failures belong to (compared by identity).
    figures: Option<Arc<PassFigures>>,
    /// The state's count of earmark changes when they were recorded.
    earmark_changes: u64,
    /// The quota tree's count of usage changes when the fair-sharing ones were recorded.
    usage_changes: u64,
    failed: Vec<Failure>,
}

impl NoRoom {
    /// Whether a search for `wanted` is known to fail, in the pass of `figures` with
    /// `earmark_changes` and `usage_changes` so far. Forgets what no longer holds.
    pub(in crate::scheduler) fn known_to_fail(
        &mut self,
        figures: &Arc<PassFigures>,
        (earmark_changes, usage_changes): (u64, u64),
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
                usage_changes,
                failed: Vec::new(),
            };
        }
        if self.usage_changes != usage_changes {
            self.usage_changes = usage_changes;
            self.forget_fair();
        }
        self.failed.iter().any(|f| f.covers(wanted))
    }

    /// Records that a search for `failure` found no room (after
    /// [`NoRoom::known_to_fail`] in the same state).
    pub(in crate::scheduler) fn record(&mut self, failure: Failure) {
        self.failed.retain(|f| !failure.covers(f));
        self.failed.push(failure);
    }

    /// Forgets the fair-sharing failures: a job started, so a target queue's usage, or what
    /// a placement reads, changed.
    pub(in crate::scheduler) fn forget_fair(&mut self) {
        self.failed.retain(|f| matches!(f, Failure::Ranked { .. }));
    }
}
