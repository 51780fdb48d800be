//! A sorted set kept as a list of short sorted runs, for the order index
//! ([`super::order_index`]): a pass reads the pending jobs out of it in order, from a place
//! ([`RunsPlace`]), and between passes only a few jobs come and go.
//!
//! A B-tree set answers the few insertions and removals in O(log n), but walking its `n`
//! entries costs some fifty instructions each (the tree's navigation); a plain sorted vector
//! reads as a plain slice, but each insertion moves half of it. Runs of at most [`MAX_RUN`]
//! entries do both: an insertion or removal finds its run by binary search and moves at most a
//! run, and a read steps through a run's slice.

/// The most entries a run holds: a run that grows past it is split in two.
const MAX_RUN: usize = 128;

/// A run thinner than this, by removals, is merged into a neighbour it fits with.
const MIN_RUN: usize = MAX_RUN / 4;

/// An empty run with room for the most a run holds before it splits: a run never grows its
/// allocation, so its memory stays within twice what its values need.
fn new_run<T>() -> Vec<T> {
    Vec::with_capacity(MAX_RUN + 1)
}

/// A place among the values of [`SortedRuns`]: a run and an offset in it (past the last run:
/// the end). It stays valid while the runs do not change.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(in crate::scheduler) struct RunsPlace {
    run: usize,
    at: usize,
}

/// Distinct values in ascending order, as consecutive non-empty sorted runs.
#[derive(Clone, Debug)]
pub(in crate::scheduler) struct SortedRuns<T> {
    /// Each run sorted and non-empty; every value of a run below every value of the next.
    runs: Vec<Vec<T>>,
    /// How many values in all.
    len: usize,
}

impl<T> Default for SortedRuns<T> {
    fn default() -> Self {
        SortedRuns {
            runs: Vec::new(),
            len: 0,
        }
    }
}

impl<T: Ord + Copy> SortedRuns<T> {
    /// How many values it holds.
    pub(in crate::scheduler) fn len(&self) -> usize {
        self.len
    }

    /// Adds `value`; `false` when it was there already.
    pub(in crate::scheduler) fn insert(&mut self, value: T) -> bool {
        let Some(run) = self.run_for(&value) else {
            let mut first = new_run();
            first.push(value);
            self.runs.push(first);
            self.len += 1;
            return true;
        };
        let entries = &mut self.runs[run];
        let Err(at) = entries.binary_search(&value) else {
            return false;
        };
        entries.insert(at, value);
        self.len += 1;
        if entries.len() > MAX_RUN {
            let mut upper = new_run();
            upper.extend(entries.drain(entries.len() / 2..));
            self.runs.insert(run + 1, upper);
        }
        true
    }

    /// Takes `value` out; `false` when it was not there.
    pub(in crate::scheduler) fn remove(&mut self, value: &T) -> bool {
        let Some(run) = self.run_for(value) else {
            return false;
        };
        let entries = &mut self.runs[run];
        let Ok(at) = entries.binary_search(value) else {
            return false;
        };
        entries.remove(at);
        self.len -= 1;
        if entries.is_empty() {
            self.runs.remove(run);
        } else if entries.len() < MIN_RUN {
            self.merge_thin(run);
        }
        true
    }

    /// Merges run `run`, thinned below [`MIN_RUN`] by removals, into a neighbour where both
    /// fit in one run, the next first: removals cannot leave long stretches of nearly empty
    /// runs, each holding a whole run's allocation.
    fn merge_thin(&mut self, run: usize) {
        let len = self.runs[run].len();
        if self
            .runs
            .get(run + 1)
            .is_some_and(|next| len + next.len() <= MAX_RUN)
        {
            let next = self.runs.remove(run + 1);
            self.runs[run].extend(next);
        } else if run > 0 && self.runs[run - 1].len() + len <= MAX_RUN {
            let thin = self.runs.remove(run);
            self.runs[run - 1].extend(thin);
        }
    }

    /// Every value, in order, appended to `out`.
    pub(in crate::scheduler) fn copy_into(&self, out: &mut Vec<T>) {
        out.reserve(self.len);
        for run in &self.runs {
            out.extend_from_slice(run);
        }
    }

    /// The last `count` values (all of them where it holds fewer), in order, appended to
    /// `out`.
    pub(in crate::scheduler) fn copy_last_into(&self, count: usize, out: &mut Vec<T>) {
        let count = count.min(self.len);
        out.reserve(count);
        let (mut first, mut held) = (self.runs.len(), 0);
        while held < count {
            first -= 1;
            held += self.runs[first].len();
        }
        if let Some((run, later)) = self.runs[first..].split_first() {
            out.extend_from_slice(&run[held - count..]);
            for run in later {
                out.extend_from_slice(run);
            }
        }
    }

    /// The place of the value `position` values after the first (the end past the last).
    pub(in crate::scheduler) fn place_of(&self, position: usize) -> RunsPlace {
        let mut rest = position;
        for (run, values) in self.runs.iter().enumerate() {
            if rest < values.len() {
                return RunsPlace { run, at: rest };
            }
            rest -= values.len();
        }
        RunsPlace {
            run: self.runs.len(),
            at: 0,
        }
    }

    /// The value at `place`, moving `place` on to the next; `None` at the end.
    pub(in crate::scheduler) fn read(&self, place: &mut RunsPlace) -> Option<T> {
        let values = self.runs.get(place.run)?;
        let value = *values.get(place.at)?;
        place.at += 1;
        if place.at == values.len() {
            *place = RunsPlace {
                run: place.run + 1,
                at: 0,
            };
        }
        Some(value)
    }

    /// The values from `place` on, in order, appended to `out`.
    pub(in crate::scheduler) fn copy_from_into(&self, place: RunsPlace, out: &mut Vec<T>) {
        if let Some((run, later)) = self.runs.get(place.run..).and_then(<[_]>::split_first) {
            out.extend_from_slice(run.get(place.at..).unwrap_or_default());
            for run in later {
                out.extend_from_slice(run);
            }
        }
    }

    /// The run `value` belongs in: the first whose last value is not below it, else the last
    /// run; `None` when there is none.
    fn run_for(&self, value: &T) -> Option<usize> {
        let first_not_below = self
            .runs
            .partition_point(|run| run.last().is_some_and(|last| last < value));
        match first_not_below {
            n if n < self.runs.len() => Some(n),
            _ => self.runs.len().checked_sub(1),
        }
    }

    /// Whether the runs keep their invariants: non-empty, at most [`MAX_RUN`] long in an
    /// allocation of their own size, sorted without repeats within and across runs, and `len`
    /// their total.
    #[cfg(test)]
    fn well_formed(&self) -> bool {
        let mut all = Vec::new();
        self.copy_into(&mut all);
        self.runs
            .iter()
            .all(|run| !run.is_empty() && run.len() <= MAX_RUN && run.capacity() == MAX_RUN + 1)
            && all.windows(2).all(|pair| pair[0] < pair[1])
            && all.len() == self.len
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use proptest::prelude::*;

    use super::*;

    fn values(runs: &SortedRuns<u32>) -> Vec<u32> {
        let mut out = Vec::new();
        runs.copy_into(&mut out);
        out
    }

    /// Runs of the given lengths, holding consecutive values from 0.
    fn with_lengths(lengths: &[usize]) -> SortedRuns<u32> {
        let mut runs = SortedRuns::default();
        let mut next = 0u32;
        for &n in lengths {
            let mut run = new_run();
            run.extend(next..next + n as u32);
            next += n as u32;
            runs.runs.push(run);
            runs.len += n;
        }
        assert!(runs.well_formed());
        runs
    }

    fn lengths(runs: &SortedRuns<u32>) -> Vec<usize> {
        runs.runs.iter().map(Vec::len).collect()
    }

    #[test]
    fn a_run_holds_the_most_it_may_and_splits_in_halves_one_past_it() {
        let mut runs = SortedRuns::default();
        for v in 0..MAX_RUN as u32 {
            assert!(runs.insert(v));
        }
        assert_eq!(lengths(&runs), [MAX_RUN], "a full run is not split");
        assert!(runs.insert(MAX_RUN as u32));
        assert_eq!(
            lengths(&runs),
            [MAX_RUN / 2, MAX_RUN / 2 + 1],
            "split in halves"
        );
        assert!(runs.well_formed());
        assert_eq!(values(&runs), (0..=MAX_RUN as u32).collect::<Vec<_>>());
    }

    #[test]
    fn a_run_thinned_below_the_least_merges_into_the_next_where_both_fit() {
        let mut runs = with_lengths(&[40, MIN_RUN + 1, 40]);
        assert!(runs.remove(&40));
        assert_eq!(
            lengths(&runs),
            [40, MIN_RUN, 40],
            "a run of the least is not thin"
        );
        assert!(runs.remove(&41));
        assert_eq!(lengths(&runs), [40, MIN_RUN - 1 + 40], "the next first");
        assert!(runs.well_formed());
        assert_eq!(
            values(&runs),
            (0..113).filter(|&v| v != 40 && v != 41).collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_thin_run_merges_into_the_previous_where_only_it_fits_and_else_stays() {
        // The next too full: into the previous.
        let mut runs = with_lengths(&[40, MIN_RUN, 120]);
        assert!(runs.remove(&40));
        assert_eq!(lengths(&runs), [40 + MIN_RUN - 1, 120]);
        assert!(runs.well_formed());
        // The last run: into the previous.
        let mut runs = with_lengths(&[40, MIN_RUN]);
        assert!(runs.remove(&40));
        assert_eq!(lengths(&runs), [40 + MIN_RUN - 1]);
        assert!(runs.well_formed());
        // Neither neighbour has room: it stays thin.
        let mut runs = with_lengths(&[100, MIN_RUN, 100]);
        assert!(runs.remove(&100));
        assert_eq!(lengths(&runs), [100, MIN_RUN - 1, 100]);
        assert!(runs.well_formed());
        // The first run, the next too full: it stays thin.
        let mut runs = with_lengths(&[MIN_RUN, 120]);
        assert!(runs.remove(&0));
        assert_eq!(lengths(&runs), [MIN_RUN - 1, 120]);
        assert!(runs.well_formed());
    }

    #[test]
    fn keeps_values_sorted_and_splits_long_runs() {
        let mut runs = SortedRuns::default();
        // Descending, so that every insertion lands at the front of the first run.
        for v in (0..1_000u32).rev() {
            assert!(runs.insert(v * 2));
        }
        assert!(!runs.insert(500), "a value held already");
        assert!(runs.well_formed());
        assert!(runs.runs.len() > 1_000 / MAX_RUN, "long runs were split");
        assert_eq!(values(&runs), (0..1_000).map(|v| v * 2).collect::<Vec<_>>());
        assert!(runs.insert(7));
        assert!(runs.remove(&7));
        assert!(!runs.remove(&7), "a value no longer held");
        assert!(!runs.remove(&1), "a value never held");
        assert_eq!(runs.len(), 1_000);
    }

    #[test]
    fn a_run_emptied_is_dropped() {
        let mut runs = SortedRuns::default();
        for v in 0..300u32 {
            runs.insert(v);
        }
        for v in 0..300u32 {
            assert!(runs.remove(&v));
            assert!(runs.well_formed(), "after removing {v}");
        }
        assert!(runs.runs.is_empty());
        assert_eq!(values(&runs), Vec::<u32>::new());
    }

    #[test]
    fn runs_thinned_by_removals_merge() {
        let mut runs = SortedRuns::default();
        for v in 0..1_000u32 {
            runs.insert(v);
        }
        let before = runs.runs.len();
        // Keep one value in sixteen: the runs thin out and merge.
        for v in (0..1_000u32).filter(|v| v % 16 != 0) {
            assert!(runs.remove(&v));
        }
        assert!(runs.well_formed());
        assert!(
            runs.runs.len() < before / 4,
            "{} runs of {before}",
            runs.runs.len()
        );
        assert_eq!(values(&runs), (0..1_000).step_by(16).collect::<Vec<u32>>());
    }

    proptest! {
        /// Any sequence of insertions and removals leaves the runs holding what a B-tree set
        /// holds, in the same order; the last of them are the set's last, and a read or a copy from
        /// a place goes on in the set's order.
        #[test]
        fn matches_a_btree_set(ops in prop::collection::vec((any::<bool>(), 0u32..400), 0..2_000)) {
            let mut runs = SortedRuns::default();
            let mut set = BTreeSet::new();
            for (insert, v) in ops {
                if insert {
                    prop_assert_eq!(runs.insert(v), set.insert(v));
                } else {
                    prop_assert_eq!(runs.remove(&v), set.remove(&v));
                }
            }
            prop_assert!(runs.well_formed());
            prop_assert_eq!(runs.len(), set.len());
            let all: Vec<u32> = set.into_iter().collect();
            for count in [0, 1, all.len() / 3, all.len().saturating_sub(1), all.len(), all.len() + 5] {
                let mut last = Vec::new();
                runs.copy_last_into(count, &mut last);
                prop_assert_eq!(&last[..], &all[all.len().saturating_sub(count)..]);
                // Read from the place `count` values in, and copied from there.
                let mut place = runs.place_of(count);
                let mut read = Vec::new();
                while let Some(value) = runs.read(&mut place) {
                    read.push(value);
                }
                prop_assert_eq!(&read[..], all.get(count..).unwrap_or_default());
                let mut copied = Vec::new();
                runs.copy_from_into(runs.place_of(count), &mut copied);
                prop_assert_eq!(copied, read);
            }
            prop_assert_eq!(values(&runs), all);
        }
    }
}
