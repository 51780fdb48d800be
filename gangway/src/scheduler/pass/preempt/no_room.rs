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

use std::collections::BTreeMap;
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
    /// The order-based failures.
    ranked: Vec<Failure>,
    /// The fair-sharing failures, by queue and priority (a fair-sharing failure covers only
    /// searches of its own queue and priority).
    fair: BTreeMap<(QueueId, i32), Vec<Failure>>,
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
                ranked: Vec::new(),
                fair: BTreeMap::new(),
            };
        }
        if self.usage_changes != usage_changes {
            self.usage_changes = usage_changes;
            self.forget_fair();
        }
        let failed = match wanted {
            Failure::Ranked { .. } => Some(&self.ranked),
            Failure::Fair {
                queue, priority, ..
            } => self.fair.get(&(*queue, *priority)),
        };
        failed.is_some_and(|failed| failed.iter().any(|f| f.covers(wanted)))
    }

    /// Records that a search for `failure` found no room (after
    /// [`NoRoom::known_to_fail`] in the same state).
    pub(in crate::scheduler) fn record(&mut self, failure: Failure) {
        let failed = match failure {
            Failure::Ranked { .. } => &mut self.ranked,
            Failure::Fair {
                queue, priority, ..
            } => self.fair.entry((queue, priority)).or_default(),
        };
        failed.retain(|f| !failure.covers(f));
        failed.push(failure);
    }

    /// Forgets the fair-sharing failures: a job started, so a target queue's usage, or what
    /// a placement reads, changed.
    pub(in crate::scheduler) fn forget_fair(&mut self) {
        self.fair.clear();
    }
}

#[cfg(test)]
mod tests {
    use std::cmp::Reverse;

    use super::*;
    use crate::config::ClusterConfig;
    use crate::model::ids::PartitionId;
    use crate::model::job::PlacementMode;
    use crate::model::shape::{GpuNeed, ModelMask, TaskShape};
    use crate::placement::{GangRequest, ShapeMix};
    use crate::state::ClusterState;

    /// The attempt of a one-task gang of `cpu_milli` over a window ending at `end`.
    fn attempt(cpu_milli: u64, end: u64) -> Attempt {
        let shapes = [TaskShape {
            cpu_milli,
            memory_mib: 0,
            gpu: GpuNeed::None,
            models: ModelMask::default(),
            count: 1,
            min_count: 1,
            mode: PlacementMode::Pack,
        }];
        let mix = ShapeMix::default();
        let gang = GangRequest {
            shapes: &shapes,
            exclusive: false,
            partition: PartitionId(0),
            mix: &mix,
            topology: None,
            gate: None,
            scores: None,
        };
        Attempt::of(&gang, end).unwrap()
    }

    /// An order-based failure of `attempt` whose preemptor's first order key is `rank` (a larger
    /// one goes first: its `RankKey` is smaller).
    fn ranked(attempt: Attempt, rank: i64, counted: bool) -> Failure {
        Failure::Ranked {
            attempt,
            key: (Reverse(0), Reverse([rank, 0, 0, 0])),
            counted,
        }
    }

    fn fair(attempt: Attempt, queue: u32, priority: i32) -> Failure {
        Failure::Fair {
            attempt,
            queue: QueueId(queue),
            priority,
        }
    }

    #[test]
    fn an_order_based_failure_covers_searches_that_need_as_much_and_rank_no_higher() {
        let (small, big) = (attempt(1000, 100), attempt(2000, 100));
        let (short, long) = (attempt(1000, 100), attempt(1000, 200));
        assert!(small.dominated_by(&big) && !small.within(&big));
        // The same attempt, or a longer one, at the same order or lower: covered, counted or not.
        for counted in [false, true] {
            let failed = ranked(short, 5, counted);
            assert!(failed.covers(&ranked(short, 5, counted)));
            assert!(failed.covers(&ranked(long, 5, counted)));
            assert!(failed.covers(&ranked(long, 4, counted)));
            // Ranked higher: it may outrank jobs the failed search could not take.
            assert!(!failed.covers(&ranked(short, 6, counted)));
            // A shorter window may fit where the longer one did not.
            assert!(!ranked(long, 5, counted).covers(&ranked(short, 5, counted)));
        }
        // A bigger task of another kind: covered only where the counts decide both searches.
        assert!(ranked(small, 5, true).covers(&ranked(big, 5, true)));
        assert!(ranked(small, 5, true).covers(&ranked(big, 4, true)));
        assert!(!ranked(small, 5, true).covers(&ranked(big, 6, true)));
        assert!(!ranked(small, 5, true).covers(&ranked(big, 5, false)));
        assert!(!ranked(small, 5, false).covers(&ranked(big, 5, true)));
        assert!(!ranked(small, 5, false).covers(&ranked(big, 5, false)));
        // A smaller task than the failed one's may fit.
        assert!(!ranked(big, 5, true).covers(&ranked(small, 5, true)));
    }

    #[test]
    fn a_fair_sharing_failure_covers_only_the_same_search_over_a_window_no_shorter() {
        let (short, long) = (attempt(1000, 100), attempt(1000, 200));
        assert!(fair(short, 1, 3).covers(&fair(short, 1, 3)));
        assert!(fair(short, 1, 3).covers(&fair(long, 1, 3)));
        assert!(!fair(long, 1, 3).covers(&fair(short, 1, 3)));
        assert!(!fair(short, 1, 3).covers(&fair(short, 2, 3)));
        assert!(!fair(short, 1, 3).covers(&fair(short, 1, 4)));
        assert!(!fair(short, 1, 3).covers(&fair(long, 1, 2)));
        // A bigger task: the demand differs.
        assert!(!fair(short, 1, 3).covers(&fair(attempt(2000, 100), 1, 3)));
        // The two kinds of search never cover each other.
        assert!(!fair(short, 1, 3).covers(&ranked(short, 5, true)));
        assert!(!ranked(short, 5, true).covers(&fair(short, 1, 3)));
    }

    #[test]
    fn the_failures_of_a_pass_hold_until_an_earmark_or_the_usage_changes() {
        let config: ClusterConfig =
            serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 4}]}"#).unwrap();
        let state = ClusterState::from_config(config).unwrap();
        let figures = Arc::new(PassFigures::new(&state, 0));
        let (one, other) = (attempt(1000, 100), attempt(2000, 100));
        let (order, sharing) = (ranked(one, 5, false), fair(one, 1, 3));
        let mut no_room = NoRoom::default();
        assert!(!no_room.known_to_fail(&figures, (0, 0), &order));
        no_room.record(order);
        assert!(!no_room.known_to_fail(&figures, (0, 0), &sharing));
        // A second failure that the first does not cover (nor it the first): both are kept.
        no_room.record(sharing);
        assert!(no_room.known_to_fail(&figures, (0, 0), &order));
        assert!(no_room.known_to_fail(&figures, (0, 0), &sharing));
        assert!(no_room.known_to_fail(&figures, (0, 0), &ranked(one, 4, false)));
        assert!(!no_room.known_to_fail(&figures, (0, 0), &ranked(other, 5, false)));
        assert!(!no_room.known_to_fail(&figures, (0, 0), &fair(one, 2, 3)));
        // A failure that covers a recorded one replaces it.
        no_room.record(ranked(one, 6, false));
        assert_eq!(no_room.ranked, [ranked(one, 6, false)]);
        assert_eq!(no_room.fair[&(QueueId(1), 3)], [sharing]);
        // The usage changed (a job started): the fair-sharing failures are forgotten.
        assert!(!no_room.known_to_fail(&figures, (0, 1), &sharing));
        assert!(no_room.known_to_fail(&figures, (0, 1), &order));
        // An earmark changed: all are forgotten.
        no_room.record(sharing);
        assert!(!no_room.known_to_fail(&figures, (1, 1), &order));
        assert!(!no_room.known_to_fail(&figures, (1, 1), &sharing));
        // Another pass: all are forgotten.
        no_room.record(order);
        no_room.record(sharing);
        assert!(no_room.known_to_fail(&figures, (1, 1), &order));
        let next = Arc::new(PassFigures::new(&state, 0));
        assert!(!no_room.known_to_fail(&next, (1, 1), &order));
        assert!(!no_room.known_to_fail(&next, (1, 1), &sharing));
    }
}
