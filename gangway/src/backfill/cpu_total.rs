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
    counted: Vec<bool>,
    memo: BTreeMap<u64, Answers>,
}

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
            let available = node.available().cpu_milli;
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
        Self::from_changes(now, base, changes, counted)
    }

    /// The sum from `base` free at `now` and the `(time, change)` of the free cpus after it
    /// (in any order), over the nodes `counted` (by node id).
    pub(super) fn from_changes(
        now: u64,
        base: u64,
        mut changes: Vec<(u64, i64)>,
        counted: Vec<bool>,
    ) -> Self {
        changes.sort_unstable_by_key(|(at, _)| *at);
        let mut steps = vec![(now, base)];
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
        }
    }

    /// Takes the cpus `held` (thousandths, by node) over `[start, end)` off the sum, for the
    /// nodes it counts (bookings always fit their node, so the per-node free amounts never go
    /// below zero).
    pub(super) fn book(&mut self, held: impl Iterator<Item = (NodeId, u64)>, start: u64, end: u64) {
        let counted = |node: NodeId| self.counted.get(node.index()).copied().unwrap_or(false);
        let cpu_milli: u64 = held
            .filter(|(node, _)| counted(*node))
            .map(|(_, cpu_milli)| cpu_milli)
            .sum();
        if end <= start || cpu_milli == 0 {
            return;
        }
        let first = self.split(start);
        let last = self.split(end);
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
        i + 1
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
