//! What earlier placement attempts of one pass already showed, so that a pass over thousands of
//! pending jobs of a few shapes does not walk every node for each of them.
//!
//! During a pass free capacity only shrinks: jobs start and reservations are pinned, nothing
//! ends. A single-group gang without topology constraints fits a view iff its nodes' task fits
//! add up to its `min_count` (`spread`, `pack`), enough nodes hold a task (`strict_spread`) or one
//! node holds `min_count` tasks (`strict_pack`) — whatever its `count`. So a gang that did not fit
//! rules out every later gang of the same kind needing at least as many tasks for at least as
//! long, for the rest of the pass; one that fitted vouches for gangs of its kind needing at most
//! as many tasks for at most as long, until capacity shrinks again ([`FitMemo::forget_fits`]).
//! The memo answers only what the placement would have answered: decisions are unchanged. Where
//! preemptors hold earmarks, every job without one of its own sees the view around all of them:
//! [`EarmarkedFits`] remembers that view's outcomes while the earmarks stay as they are.

use crate::model::ids::PartitionId;
use crate::model::shape::{GpuNeed, ModelMask, TaskShape};
use crate::placement::GangRequest;
use crate::placement::count::counts_decide;

/// The outcomes of placement attempts on one kind of capacity view within one pass.
#[derive(Debug, Default)]
pub(in crate::scheduler) struct FitMemo {
    /// Attempts that did not fit, none ruled out by another.
    failed: Vec<Attempt>,
    /// Attempts that fitted since capacity last shrank, none vouched for by another.
    fitted: Vec<Attempt>,
}

/// One attempt: the gang's kind, its fewest tasks (at least 1) and the end of its window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::scheduler) struct Attempt {
    kind: Kind,
    tasks: u32,
    end: u64,
    /// Whether the task counts decide the gang's placement
    /// ([`crate::placement::count::counts_decide`]).
    counted: bool,
}

/// What a gang's fit depends on besides its task count and window: its one group's shape with
/// the counts cleared, exclusivity and partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Kind {
    shape: TaskShape,
    exclusive: bool,
    partition: PartitionId,
}

impl Attempt {
    /// The attempt of `gang` over a window ending at `end`; `None` for gangs the memo does not
    /// cover (several groups, or topology constraints).
    pub(in crate::scheduler) fn of(gang: &GangRequest<'_>, end: u64) -> Option<Self> {
        let [shape] = gang.shapes else {
            return None;
        };
        if gang.topology.is_some() {
            return None;
        }
        Some(Attempt {
            kind: Kind {
                shape: TaskShape {
                    count: 0,
                    min_count: 0,
                    ..*shape
                },
                exclusive: gang.exclusive,
                partition: gang.partition,
            },
            tasks: shape.min_count.max(1),
            end,
            counted: counts_decide(gang),
        })
    }

    /// Whether this attempt needs no more than `other`: as many tasks or fewer, for as long or
    /// shorter, of the same kind.
    pub(in crate::scheduler) fn within(&self, other: &Attempt) -> bool {
        self.kind == other.kind && self.tasks <= other.tasks && self.end <= other.end
    }

    /// Whether every node holds no fewer tasks of this attempt's kind than of `other`'s, and
    /// `other` needs as many tasks or more, for as long or longer: the same exclusivity,
    /// partition and layout; per task, `other` asks no fewer cpus, no less memory and no
    /// smaller GPU need of the same sort (the same MIG profile), on no more models. A task's
    /// fit on a node only shrinks as its need grows, so where a placement succeeds exactly when
    /// the nodes' fits add up (`pass::preempt::counts::counts_decide`), `other` fits no better.
    pub(in crate::scheduler) fn dominated_by(&self, other: &Attempt) -> bool {
        let (mine, theirs) = (&self.kind, &other.kind);
        let (small, big) = (&mine.shape, &theirs.shape);
        let gpus = match (small.gpu, big.gpu) {
            (GpuNeed::None, GpuNeed::None) => true,
            (GpuNeed::Whole(a), GpuNeed::Whole(b))
            | (GpuNeed::Fraction(a), GpuNeed::Fraction(b)) => a <= b,
            (GpuNeed::Mig(a), GpuNeed::Mig(b)) => a == b,
            _ => false,
        };
        let models = small.models == ModelMask::ANY
            || (big.models != ModelMask::ANY && big.models.0 & !small.models.0 == 0);
        (mine.exclusive, mine.partition, small.mode)
            == (theirs.exclusive, theirs.partition, big.mode)
            && small.cpu_milli <= big.cpu_milli
            && small.memory_mib <= big.memory_mib
            && gpus
            && models
            && self.tasks <= other.tasks
            && self.end <= other.end
    }

    /// Whether this attempt is `other` over a window that ends no later: as many tasks, of
    /// the same kind.
    pub(in crate::scheduler) fn no_longer_than(&self, other: &Attempt) -> bool {
        self.within(other) && self.tasks == other.tasks
    }
}

impl FitMemo {
    /// What the memo knows of placing `gang` until `end`: `Some(false)` when it cannot fit,
    /// `Some(true)` when it fits, `None` when the placement must be tried.
    pub(in crate::scheduler) fn known(&self, gang: &GangRequest<'_>, end: u64) -> Option<bool> {
        let attempt = Attempt::of(gang, end)?;
        if self.failed.iter().any(|f| f.within(&attempt)) {
            return Some(false);
        }
        if self.fitted.iter().any(|f| attempt.within(f)) {
            return Some(true);
        }
        None
    }

    /// Whether a failure recorded for a gang the counts decide rules out `gang`, which they
    /// decide too, by dominance: its tasks each need at least as much
    /// ([`Attempt::dominated_by`]), so every node fits no more of them. Only for gangs placed
    /// through a gate that neither filters nor ranks nodes (the caller's to know: the memo
    /// serves one partition's gate per kind).
    pub(in crate::scheduler) fn dominated_failure(&self, gang: &GangRequest<'_>, end: u64) -> bool {
        Attempt::of(gang, end).is_some_and(|attempt| {
            attempt.counted
                && self
                    .failed
                    .iter()
                    .any(|failed| failed.counted && failed.dominated_by(&attempt))
        })
    }

    /// Records that placing `gang` until `end` did (`fits`) or did not fit.
    pub(in crate::scheduler) fn record(&mut self, gang: &GangRequest<'_>, end: u64, fits: bool) {
        let Some(attempt) = Attempt::of(gang, end) else {
            return;
        };
        if fits {
            self.fitted.retain(|f| !f.within(&attempt));
            self.fitted.push(attempt);
        } else {
            self.failed.retain(|f| !attempt.within(f));
            self.failed.push(attempt);
        }
    }

    /// Drops what fitted: capacity shrank (a job started, or a reservation was pinned).
    pub(in crate::scheduler) fn forget_fits(&mut self) {
        self.fitted.clear();
    }
}

/// A [`FitMemo`] of placements now around every earmark (those of jobs without an earmark of
/// their own, which all see the same view), kept while the earmarks stay as they are. Not
/// across a new earmark either: it holds more now, but its victims, told to stop, release by
/// their grace deadlines, earlier than their time limits, and a placement now whose window
/// reaches past a deadline may find room there that a reservation had taken (the reference
/// pass found such a start).
#[derive(Debug, Default)]
pub(in crate::scheduler) struct EarmarkedFits {
    /// The state's counts of earmark changes and of earmark releases the memo belongs to.
    changes: (u64, u64),
    memo: FitMemo,
}

impl EarmarkedFits {
    /// The memo for the earmarks as they stand after `changes` changes, `releases` of them
    /// drops: emptied where one was made or dropped since.
    pub(in crate::scheduler) fn at(&mut self, changes: (u64, u64)) -> &mut FitMemo {
        if self.changes != changes {
            self.memo = FitMemo::default();
        }
        self.changes = changes;
        &mut self.memo
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::job::PlacementMode;
    use crate::model::shape::{GpuNeed, ModelMask};
    use crate::placement::ShapeMix;

    fn shape(min_count: u32, cpu_milli: u64) -> TaskShape {
        TaskShape {
            cpu_milli,
            memory_mib: 0,
            gpu: GpuNeed::None,
            models: ModelMask::default(),
            count: min_count + 3,
            min_count,
            mode: PlacementMode::Spread,
        }
    }

    fn gang<'a>(shapes: &'a [TaskShape], mix: &'a ShapeMix) -> GangRequest<'a> {
        GangRequest {
            shapes,
            exclusive: false,
            partition: PartitionId(0),
            mix,
            topology: None,
            gate: None,
            scores: None,
        }
    }

    #[test]
    fn a_failure_rules_out_bigger_longer_gangs_of_its_kind() {
        let mix = ShapeMix::default();
        let mut memo = FitMemo::default();
        memo.record(&gang(&[shape(4, 1000)], &mix), 100, false);
        assert_eq!(memo.known(&gang(&[shape(4, 1000)], &mix), 100), Some(false));
        assert_eq!(memo.known(&gang(&[shape(9, 1000)], &mix), 500), Some(false));
        assert_eq!(memo.known(&gang(&[shape(3, 1000)], &mix), 500), None);
        assert_eq!(memo.known(&gang(&[shape(9, 1000)], &mix), 99), None);
        assert_eq!(memo.known(&gang(&[shape(9, 2000)], &mix), 500), None);
        let two = [shape(4, 1000), shape(4, 1000)];
        memo.record(&gang(&two, &mix), 100, false);
        assert_eq!(memo.known(&gang(&two, &mix), 100), None);
    }

    #[test]
    fn a_fit_vouches_for_smaller_shorter_gangs_until_capacity_shrinks() {
        let mix = ShapeMix::default();
        let mut memo = FitMemo::default();
        memo.record(&gang(&[shape(4, 1000)], &mix), 100, true);
        assert_eq!(memo.known(&gang(&[shape(2, 1000)], &mix), 50), Some(true));
        assert_eq!(memo.known(&gang(&[shape(5, 1000)], &mix), 50), None);
        memo.forget_fits();
        assert_eq!(memo.known(&gang(&[shape(2, 1000)], &mix), 50), None);
    }

    #[test]
    fn earmarked_outcomes_last_while_the_earmarks_stay_as_they_are() {
        let mix = ShapeMix::default();
        let big = [shape(4, 1000)];
        let small = [shape(2, 1000)];
        let mut memo = EarmarkedFits::default();
        memo.at((1, 0)).record(&gang(&big, &mix), 100, false);
        memo.at((1, 0)).record(&gang(&small, &mix), 100, true);
        // Nothing changed: both stand.
        assert_eq!(memo.at((1, 0)).known(&gang(&big, &mix), 100), Some(false));
        assert_eq!(memo.at((1, 0)).known(&gang(&small, &mix), 100), Some(true));
        // An earmark made: its victims release early, so neither stands.
        let after_new = memo.at((2, 0));
        assert_eq!(after_new.known(&gang(&big, &mix), 100), None);
        assert_eq!(after_new.known(&gang(&small, &mix), 100), None);
        after_new.record(&gang(&small, &mix), 100, true);
        // An earmark dropped: capacity may be back, nothing is known.
        let after_drop = memo.at((3, 1));
        assert_eq!(after_drop.known(&gang(&big, &mix), 100), None);
        assert_eq!(after_drop.known(&gang(&small, &mix), 100), None);
    }

    #[test]
    fn a_task_needing_at_least_as_much_of_each_is_dominated() {
        let mix = ShapeMix::default();
        let attempt = |shape: TaskShape, end| Attempt::of(&gang(&[shape], &mix), end).unwrap();
        let with = |gpu, models, memory_mib| TaskShape {
            gpu,
            models: ModelMask(models),
            memory_mib,
            ..shape(2, 1000)
        };
        let small = attempt(with(GpuNeed::Fraction(300), 0, 100), 100);
        // More cpus, memory, GPU share, tasks, time, or fewer models: no better anywhere.
        for bigger in [
            with(GpuNeed::Fraction(300), 0, 100),
            with(GpuNeed::Fraction(500), 0, 100),
            with(GpuNeed::Fraction(300), 0b10, 100),
            with(GpuNeed::Fraction(300), 0, 200),
            TaskShape {
                cpu_milli: 2000,
                ..with(GpuNeed::Fraction(300), 0, 100)
            },
        ] {
            assert!(small.dominated_by(&attempt(bigger, 100)), "{bigger:?}");
            assert!(small.dominated_by(&attempt(bigger, 500)), "{bigger:?}");
            assert!(!small.dominated_by(&attempt(bigger, 99)), "{bigger:?}");
        }
        // Less of anything, another sort of GPU need, more models, or another layout: not.
        for other in [
            with(GpuNeed::Fraction(200), 0, 100),
            with(GpuNeed::Whole(1), 0, 100),
            with(GpuNeed::None, 0, 100),
            with(GpuNeed::Fraction(300), 0, 50),
            TaskShape {
                cpu_milli: 500,
                ..with(GpuNeed::Fraction(300), 0, 100)
            },
            TaskShape {
                mode: PlacementMode::Pack,
                ..with(GpuNeed::Fraction(300), 0, 100)
            },
        ] {
            assert!(!small.dominated_by(&attempt(other, 100)), "{other:?}");
        }
        let one_model = attempt(with(GpuNeed::Whole(1), 0b01, 0), 100);
        assert!(one_model.dominated_by(&attempt(with(GpuNeed::Whole(2), 0b01, 0), 100)));
        assert!(!one_model.dominated_by(&attempt(with(GpuNeed::Whole(2), 0b11, 0), 100)));
        assert!(!one_model.dominated_by(&attempt(with(GpuNeed::Whole(2), 0, 0), 100)));
        let fewer_tasks = attempt(shape(1, 1000), 100);
        assert!(!attempt(shape(2, 1000), 100).dominated_by(&fewer_tasks));
    }

    #[test]
    fn a_failure_the_counts_decide_rules_out_gangs_needing_more_per_task() {
        let mix = ShapeMix::default();
        let one_task = |cpu_milli, mode| TaskShape {
            count: 1,
            min_count: 1,
            mode,
            ..shape(1, cpu_milli)
        };
        let mut memo = FitMemo::default();
        memo.record(
            &gang(&[one_task(1000, PlacementMode::Pack)], &mix),
            100,
            false,
        );
        let bigger = [one_task(2000, PlacementMode::Pack)];
        assert_eq!(memo.known(&gang(&bigger, &mix), 100), None, "another kind");
        assert!(memo.dominated_failure(&gang(&bigger, &mix), 100));
        assert!(!memo.dominated_failure(&gang(&[one_task(500, PlacementMode::Pack)], &mix), 100));
        // A packed group of several tasks is not decided by the counts: no dominance.
        let packed = [TaskShape {
            count: 3,
            ..one_task(2000, PlacementMode::Pack)
        }];
        assert!(!memo.dominated_failure(&gang(&packed, &mix), 100));
        let mut memo = FitMemo::default();
        memo.record(&gang(&packed, &mix), 100, false);
        assert!(!memo.dominated_failure(
            &gang(
                &[TaskShape {
                    cpu_milli: 3000,
                    ..packed[0]
                }],
                &mix
            ),
            100
        ));
    }

    #[test]
    fn only_the_frontier_is_kept() {
        let mix = ShapeMix::default();
        let mut memo = FitMemo::default();
        memo.record(&gang(&[shape(8, 1000)], &mix), 800, false);
        memo.record(&gang(&[shape(4, 1000)], &mix), 100, false);
        memo.record(&gang(&[shape(2, 1000)], &mix), 900, false);
        assert_eq!(memo.failed.len(), 2);
        assert_eq!(memo.known(&gang(&[shape(8, 1000)], &mix), 800), Some(false));
    }
}
