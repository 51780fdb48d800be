//! The cluster's free cpus over time, summed over the nodes taking work: a cheap necessary
//! condition for a reservation's start (a gang needing more cpus in all than are free cannot
//! fit, whatever the nodes). Built once per pass, from the running jobs' sums kept across
//! ticks ([`crate::backfill::RunningEnds`]) and the pass's reservations, and kept current by
//! every booking, so planning many jobs in one pass does not rebuild it.

use std::collections::BTreeMap;

use super::answers::Answers;
use crate::model::ids::NodeId;
use crate::model::node::Node;
use crate::model::resources::NodeAmounts;

/// Free cpus (thousandths) as `(from, free)` steps, the first at the profile's `now`, which
/// nodes count, and earlier answers by cpus needed.
#[derive(Clone, Debug, Default)]
pub(super) struct FreeCpus {
    steps: Vec<(u64, u64)>,
    /// Which nodes count, by node id; `None`: every node.
    counted: Option<Vec<bool>>,
    memo: BTreeMap<u64, Answers>,
    /// The least free cpus of each run of [`BLOCK`] steps, built when a window is first asked
    /// about and dropped by any change to the steps.
    block_least: Vec<u64>,
    /// The least free cpus of each prefix of the steps, for windows from the profile's `now`
    /// (every candidate placed now asks of one), kept as `block_least` is.
    prefix_least: Vec<u64>,
}

/// Steps per block of [`FreeCpus::block_least`].
const BLOCK: usize = 32;

impl FreeCpus {
    /// Sums `available − used` over the nodes taking work, with each node's usage steps from
    /// `usage` (`None`: nothing in use there).
    pub(super) fn build<S: Iterator<Item = (u64, NodeAmounts)>>(
        nodes: &[Option<Node>],
        now: u64,
        mut usage: impl FnMut(NodeId) -> Option<S>,
    ) -> Self {
        let mut base = 0u64;
        let mut changes: Vec<(u64, i64)> = Vec::new();
        let mut counted = vec![false; nodes.len()];
        for (i, node) in nodes.iter().enumerate() {
            let Some(node) = node.as_ref().filter(|n| n.accepts_work()) else {
                continue;
            };
            counted[i] = true;
            let available = node.available_cpu_milli();
            let Some(steps) = usage(NodeId(i as u32)) else {
                base += available;
                continue;
            };
            let mut before = 0i64;
            for (at, used) in steps {
                let free = available.saturating_sub(used.cpu_milli) as i64;
                changes.push((at, free - before));
                before = free;
            }
        }
        Self::from_changes(now, base, changes, Some(counted))
    }

    /// The sum from `base` free at `now` and the `(time, change)` of the free cpus after it
    /// (in any order), over the nodes `counted` (by node id; `None`: every node).
    pub(super) fn from_changes(
        now: u64,
        base: u64,
        mut changes: Vec<(u64, i64)>,
        counted: Option<Vec<bool>>,
    ) -> Self {
        changes.sort_unstable_by_key(|(at, _)| *at);
        let mut steps = Vec::with_capacity(changes.len() + 1);
        steps.push((now, base));
        let mut free = base as i64;
        for (at, change) in changes {
            free += change;
            match steps.last_mut() {
                Some(last) if last.0 == at => last.1 = free.max(0) as u64,
                _ => steps.push((at, free.max(0) as u64)),
            }
        }
        FreeCpus {
            steps,
            counted,
            memo: BTreeMap::new(),
            block_least: Vec::new(),
            prefix_least: Vec::new(),
        }
    }

    /// Takes the cpus `held` (thousandths, by node) over `[start, end)` off the sum, for the
    /// nodes it counts (bookings always fit their node, so the per-node free amounts never go
    /// below zero).
    pub(super) fn book(&mut self, held: impl Iterator<Item = (NodeId, u64)>, start: u64, end: u64) {
        let counted = |node: NodeId| {
            (self.counted.as_ref()).is_none_or(|counted| counted.get(node.index()) == Some(&true))
        };
        let cpu_milli: u64 = held
            .filter(|(node, _)| counted(*node))
            .map(|(_, cpu_milli)| cpu_milli)
            .sum();
        if end <= start || cpu_milli == 0 {
            return;
        }
        let first = self.split(start);
        let last = self.split(end);
        self.forget_leasts();
        for (_, free) in &mut self.steps[first..last] {
            *free = free.saturating_sub(cpu_milli);
        }
    }

    /// Makes `at` a breakpoint and returns its index.
    fn split(&mut self, at: u64) -> usize {
        let i = self
            .steps
            .partition_point(|(t, _)| *t <= at)
            .saturating_sub(1);
        if self.steps[i].0 >= at {
            return i;
        }
        let free = self.steps[i].1;
        self.steps.insert(i + 1, (at, free));
        self.forget_leasts();
        i + 1
    }

    /// Drops the least values read from the steps, after a change to them.
    fn forget_leasts(&mut self) {
        self.block_least.clear();
        self.prefix_least.clear();
    }

    /// [`FreeCpus::earliest`], remembering its answers for the rest of the pass: the sweep
    /// starts at an earlier answer's bound ([`Answers`]) for the same cpus.
    pub(super) fn earliest_memo(&mut self, cpu_milli: u64, start: u64, len: u64) -> u64 {
        let answers = self.memo.entry(cpu_milli).or_default();
        let known = answers.bound(start, len);
        if known == u64::MAX {
            return known;
        }
        let answer = self.earliest(cpu_milli, known, len);
        if let Some(answers) = self.memo.get_mut(&cpu_milli) {
            answers.remember(start, len, answer);
        }
        answer
    }

    /// Whether fewer than `cpu_milli` cpus are free at some instant of the window of `len`
    /// milliseconds (at least 1) from `start`: exactly when [`FreeCpus::earliest`] would answer
    /// later than `start`, found by a walk of the window alone, which stops at the first
    /// shortfall (an earlier answer for the same cpus may already say so), whole blocks of
    /// steps read by their least value.
    pub(super) fn short_within(&mut self, cpu_milli: u64, start: u64, len: u64) -> bool {
        if self
            .memo
            .get(&cpu_milli)
            .is_some_and(|answers| answers.bound(start, len) > start)
        {
            return true;
        }
        let end = start.saturating_add(len.max(1));
        let first = self
            .steps
            .partition_point(|(at, _)| *at <= start)
            .saturating_sub(1);
        let last = self.steps.partition_point(|(at, _)| *at < end).max(first);
        self.least_free(first, last) < cpu_milli
    }

    /// The least free cpus over `steps[from..to]` (`u64::MAX` when empty).
    fn least_free(&mut self, from: usize, to: usize) -> u64 {
        let scan = |steps: &[(u64, u64)]| steps.iter().map(|&(_, free)| free).min();
        if to - from < 2 * BLOCK {
            return scan(&self.steps[from..to]).unwrap_or(u64::MAX);
        }
        if from == 0 {
            if self.prefix_least.is_empty() {
                self.prefix_least = self
                    .steps
                    .iter()
                    .scan(u64::MAX, |least, &(_, free)| {
                        *least = (*least).min(free);
                        Some(*least)
                    })
                    .collect();
            }
            return self.prefix_least[to - 1];
        }
        if self.block_least.is_empty() {
            self.block_least = self
                .steps
                .chunks(BLOCK)
                .map(|block| scan(block).unwrap_or(u64::MAX))
                .collect();
        }
        // Whole blocks in between, and the partial ones at both ends step by step.
        let (first_block, last_block) = (from.div_ceil(BLOCK), to / BLOCK);
        let head = scan(&self.steps[from..first_block * BLOCK]);
        let blocks = self.block_least[first_block..last_block]
            .iter()
            .copied()
            .min();
        let tail = scan(&self.steps[last_block * BLOCK..to]);
        [head, blocks, tail]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(u64::MAX)
    }

    /// The earliest `t ≥ start` from which at least `cpu_milli` cpus stay free in all over a
    /// window of `len` milliseconds; `u64::MAX`: never.
    pub(super) fn earliest(&self, cpu_milli: u64, start: u64, len: u64) -> u64 {
        let len = len.max(1);
        let (mut t, mut end) = (start, start.saturating_add(len));
        let first = self
            .steps
            .partition_point(|(at, _)| *at <= start)
            .saturating_sub(1);
        for (i, (at, free)) in self.steps.iter().enumerate().skip(first) {
            if *at >= end {
                break;
            }
            if *free < cpu_milli {
                match self.steps.get(i + 1) {
                    Some(next) => (t, end) = (next.0, next.0.saturating_add(len)),
                    None => return u64::MAX,
                }
            }
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Free cpus of 4 from 0, 1 over `[100, 200)`, 4 again, 1 over `[300, 350)`, then 4.
    fn two_dips() -> FreeCpus {
        let changes = vec![(100, -3_000), (200, 3_000), (300, -3_000), (350, 3_000)];
        FreeCpus::from_changes(0, 4_000, changes, Some(vec![true]))
    }

    #[test]
    fn a_long_window_from_the_first_step_reads_no_step_past_its_end() {
        // 4 cpus free over 70 steps of 10 ms, none from 700 on.
        let mut changes: Vec<(u64, i64)> = (1..70).map(|t| (t * 10, 0)).collect();
        changes.push((700, -4_000));
        let mut free = FreeCpus::from_changes(0, 4_000, changes, Some(vec![true]));
        assert_eq!(free.steps.len(), 71);
        assert!(!free.short_within(4_000, 0, 700));
        assert!(free.short_within(4_000, 0, 701));
    }

    #[test]
    fn a_long_window_read_by_blocks_reads_no_step_before_its_start() {
        // 4 cpus free over 140 steps of 10 ms, but none over [360, 400).
        let mut changes: Vec<(u64, i64)> = (1..140).map(|t| (t * 10, 0)).collect();
        changes[35].1 = -4_000;
        changes[39].1 = 4_000;
        let mut free = FreeCpus::from_changes(0, 4_000, changes, Some(vec![true]));
        assert!(!free.short_within(4_000, 400, 900));
        assert!(free.short_within(4_000, 390, 900));
    }

    #[test]
    fn changes_at_one_instant_make_one_step() {
        // At 100 one node's cpus are booked as another's are released: 1 cpu free throughout.
        let changes = vec![(100, -1_000), (100, 1_000)];
        let mut free = FreeCpus::from_changes(0, 1_000, changes, Some(vec![true, true]));
        assert_eq!(free.steps, [(0, 1_000), (100, 1_000)]);
        assert!(!free.short_within(1_000, 50, 100));
        assert_eq!(free.earliest(1_000, 50, 100), 50);
    }

    #[test]
    fn the_earliest_window_starts_after_every_dip_it_would_overlap() {
        let free = two_dips();
        // Windows that end by the first dip, or need no more than it leaves, start at once.
        assert_eq!(free.earliest(2_000, 0, 100), 0);
        assert_eq!(free.earliest(1_000, 0, 1_000), 0);
        // All 4 cpus are enough where 4 are free.
        assert_eq!(free.earliest(4_000, 0, 100), 0);
        // One more millisecond overlaps the first dip; from its end the window overlaps the
        // second, and from the second's end it is clear.
        assert_eq!(free.earliest(2_000, 0, 101), 350);
        assert_eq!(free.earliest(2_000, 0, 200), 350);
        // A window that fits between the dips starts at the first one's end.
        assert_eq!(free.earliest(2_000, 50, 100), 200);
        assert_eq!(free.earliest(2_000, 50, 101), 350);
        // A start inside a dip, and one after both.
        assert_eq!(free.earliest(2_000, 150, 10), 200);
        assert_eq!(free.earliest(2_000, 320, 10), 350);
        assert_eq!(free.earliest(2_000, 400, 10), 400);
        // More than the cluster has: never.
        assert_eq!(free.earliest(5_000, 0, 1), u64::MAX);
        assert_eq!(free.earliest(5_000, 400, 1), u64::MAX);
    }

    #[test]
    fn a_window_is_short_where_a_dip_inside_it_leaves_too_few() {
        let mut free = two_dips();
        assert!(!free.short_within(2_000, 0, 100));
        assert!(free.short_within(2_000, 0, 101));
        assert!(!free.short_within(4_000, 0, 100));
        assert!(free.short_within(4_000, 99, 2));
        assert!(!free.short_within(1_000, 0, 1_000));
        assert!(free.short_within(2_000, 150, 10));
        assert!(!free.short_within(2_000, 200, 100));
        assert!(free.short_within(2_000, 200, 101));
        assert!(!free.short_within(2_000, 350, 1_000));
        // An earlier answer for the same cpus: a window it shows to be short, and one it
        // does not decide (a start at or after the answer).
        assert_eq!(free.earliest_memo(2_000, 0, 101), 350);
        assert!(free.short_within(2_000, 0, 101));
        assert!(free.short_within(2_000, 10, 150));
        assert!(!free.short_within(2_000, 350, 101));
        assert!(!free.short_within(2_000, 400, 101));
    }

    /// A long timeline of free cpus, booked into at random: the window test by blocks
    /// answers as the sweep for the earliest start, whatever the window.
    #[test]
    fn a_window_is_short_exactly_when_the_earliest_start_is_later() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let changes: Vec<(u64, i64)> = (0..600)
            .map(|_| (1 + next(10_000), next(4_000) as i64 - 1_500))
            .collect();
        let mut free = FreeCpus::from_changes(0, 64_000, changes, Some(vec![true; 4]));
        let mut windows = 0;
        for round in 0..3_000 {
            if round % 50 == 0 {
                let start = next(10_000);
                let held = [(NodeId(next(4) as u32), next(3_000))];
                free.book(held.into_iter(), start, start + 1 + next(2_000));
            }
            // Every other window from the profile's `now`, as a candidate placed now asks.
            let start = if round % 2 == 0 { 0 } else { next(11_000) };
            let (need, len) = (next(80_000), 1 + next(9_000));
            let short = free.short_within(need, start, len);
            assert_eq!(
                short,
                free.earliest(need, start, len) > start,
                "round {round}"
            );
            let first = free.steps.partition_point(|(at, _)| *at <= start);
            let last = free.steps.partition_point(|(at, _)| *at < start + len);
            windows += usize::from(last.saturating_sub(first) > 2 * BLOCK);
        }
        assert!(windows > 500, "the blocks were read in {windows} rounds");
    }
}
