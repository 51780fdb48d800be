//! The running jobs' holdings over time, kept across ticks by the state's own changes: a start
//! adds a job's per-node charges until its release time, an end, kill or requeue removes them,
//! and a preemption's grace deadline or a new time limit moves them. A pass reads the profile
//! of the running jobs from here ([`crate::backfill::Availability`]) and never rebuilds it from the
//! jobs; its reservations are an overlay on top, made and dropped by the pass.
//!
//! Once a job runs, nothing it holds grows: from any `now` on, each node's usage by running
//! jobs is a step function that only steps down, at its holdings' release times. A holding past
//! its release time (a time limit not enforced) is held at `now` only, and released at the
//! next instant, as the pass has always planned it.

use std::collections::{BTreeMap, BTreeSet};

use super::by_node::ByNode;
use crate::model::ids::{JobId, NodeId};
use crate::model::resources::NodeAmounts;
use crate::state::ClusterState;

/// Every running job's per-node holdings by release time, and the release times themselves.
///
/// Derived data: [`RunningEnds::of`] builds it from the running jobs, and the state's
/// consistency check compares the kept one against that rebuild.
#[derive(Clone, Debug, Default)]
pub(crate) struct RunningEnds {
    /// Per node, its holdings by release time. A node whose last holding went keeps its
    /// (empty) vectors for the next start there: a one-job node would otherwise allocate at
    /// every start and free at every end. Empty is the same as none ([`RunningEnds::ends`]).
    nodes: ByNode<NodeEnds>,
    /// How many running jobs release at each time, and the cpus they release then.
    releases: BTreeMap<u64, Release>,
    /// The running jobs by release time: those whose time has come, for the tick's time-limit
    /// and grace checks ([`RunningEnds::released_by`]).
    by_release: BTreeSet<(u64, JobId)>,
    /// The running jobs told to stop, by grace deadline (which, after a time limit not
    /// enforced, may be later than their release time).
    stopping: BTreeSet<(u64, JobId)>,
    /// The cpus (thousandths) every holding holds, summed over the nodes.
    cpu_milli: u64,
}

/// The running jobs releasing at one time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Release {
    jobs: u32,
    /// The cpus (thousandths) they hold, summed over the nodes.
    cpu_milli: u64,
}

/// One node's holdings, ordered by release time then job, with what stays held after each
/// release time.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct NodeEnds {
    holdings: Vec<Holding>,
    /// `after[i]`: the sum of the holdings released later than `holdings[i]`'s time.
    after: Vec<NodeAmounts>,
    /// The sum of every holding.
    total: NodeAmounts,
}

/// What one running job holds on one node, until when.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Holding {
    release_ms: u64,
    job: JobId,
    amounts: NodeAmounts,
}

/// Equal when they hold the same on every node, a node with no holdings left being the same as
/// one that never had any.
impl PartialEq for RunningEnds {
    fn eq(&self, other: &Self) -> bool {
        self.releases == other.releases
            && self.by_release == other.by_release
            && self.stopping == other.stopping
            && self.cpu_milli == other.cpu_milli
            && self.nodes.eq_where(&other.nodes, NodeEnds::holds)
    }
}

impl Eq for RunningEnds {}

impl RunningEnds {
    /// The holdings of every running job of `state`, from scratch.
    pub(crate) fn of(state: &ClusterState) -> Self {
        let mut ends = RunningEnds::default();
        for &id in &state.running {
            let Some(job) = state.job(id) else {
                continue;
            };
            if let Some(release_ms) = job.release_ms() {
                ends.add(id, state.node_charges(id), release_ms);
            }
            ends.move_grace(id, None, job.grace_deadline_ms());
        }
        ends
    }

    /// Job `job` holds `charges` until `release_ms`.
    pub(crate) fn add(
        &mut self,
        job: JobId,
        charges: impl IntoIterator<Item = (NodeId, NodeAmounts)>,
        release_ms: u64,
    ) {
        let release = self.releases.entry(release_ms).or_default();
        release.jobs += 1;
        self.by_release.insert((release_ms, job));
        for (node, amounts) in charges {
            let ends = self.nodes.get_or_insert_with(node, NodeEnds::default);
            let holding = Holding {
                release_ms,
                job,
                amounts,
            };
            let at = ends.holdings.partition_point(|h| h.key() < holding.key());
            ends.holdings.insert(at, holding);
            ends.sum();
            release.cpu_milli += amounts.cpu_milli;
            self.cpu_milli += amounts.cpu_milli;
        }
    }

    /// Job `job`, holding `charges` until `release_ms`, holds nothing any more.
    pub(crate) fn remove(
        &mut self,
        job: JobId,
        charges: impl IntoIterator<Item = (NodeId, NodeAmounts)>,
        release_ms: u64,
    ) {
        let mut released = 0;
        self.by_release.remove(&(release_ms, job));
        for (node, _) in charges {
            let Some(ends) = self.nodes.get_mut(node) else {
                continue;
            };
            let key = (release_ms, job);
            if let Ok(at) = ends.holdings.binary_search_by(|h| h.key().cmp(&key)) {
                released += ends.holdings.remove(at).amounts.cpu_milli;
                ends.sum();
            }
        }
        self.cpu_milli -= released;
        if let Some(release) = self.releases.get_mut(&release_ms) {
            release.jobs -= 1;
            release.cpu_milli -= released;
            if release.jobs == 0 {
                self.releases.remove(&release_ms);
            }
        }
    }

    /// The cpus (thousandths) the running jobs hold at `now`, summed over the nodes, and the
    /// `(time, cpus)` they release later, in time order: a holding past its release time
    /// releases at `now + 1`, as in [`RunningEnds::steps`].
    pub(super) fn cpu_releases(&self, now: u64) -> (u64, impl Iterator<Item = (u64, u64)> + '_) {
        let first_free = now.saturating_add(1);
        let releases = self
            .releases
            .iter()
            .map(move |(&at, release)| (at.max(first_free), release.cpu_milli));
        (self.cpu_milli, releases)
    }

    /// The running jobs whose release time is at or before `at`, by release time.
    pub(crate) fn released_by(&self, at: u64) -> impl Iterator<Item = JobId> + '_ {
        (self.by_release.range(..=(at, JobId(u32::MAX)))).map(|&(_, job)| job)
    }

    /// Running job `job`'s grace deadline moves from `before` to `after` (`None`: not told to
    /// stop).
    pub(crate) fn move_grace(&mut self, job: JobId, before: Option<u64>, after: Option<u64>) {
        if let Some(deadline) = before {
            self.stopping.remove(&(deadline, job));
        }
        if let Some(deadline) = after {
            self.stopping.insert((deadline, job));
        }
    }

    /// The running jobs told to stop whose grace deadline is at or before `at`.
    pub(crate) fn grace_over_by(&self, at: u64) -> impl Iterator<Item = JobId> + '_ {
        (self.stopping.range(..=(at, JobId(u32::MAX)))).map(|&(_, job)| job)
    }

    /// The earliest grace deadline of a running job told to stop.
    pub(crate) fn first_grace_deadline(&self) -> Option<u64> {
        self.stopping.first().map(|&(deadline, _)| deadline)
    }

    /// The first release time after `at`.
    pub(crate) fn first_release_after(&self, at: u64) -> Option<u64> {
        let after = at.checked_add(1)?;
        self.releases
            .range(after..)
            .next()
            .map(|(&release, _)| release)
    }

    /// How many distinct release times the running jobs have.
    pub(crate) fn release_count(&self) -> usize {
        self.releases.len()
    }

    /// The first release time at or after `from`, where `from` is after `now`: a holding
    /// past its release time releases at `now + 1`.
    pub(crate) fn next_release(&self, now: u64, from: u64) -> Option<u64> {
        let first_free = now.saturating_add(1);
        if from <= first_free {
            return self.releases.keys().next().map(|&at| at.max(first_free));
        }
        self.releases.range(from..).next().map(|(&at, _)| at)
    }

    /// Whether `node` has holdings.
    pub(crate) fn holds_on(&self, node: NodeId) -> bool {
        self.ends(node).is_some()
    }

    /// `node`'s holdings, when it has any.
    fn ends(&self, node: NodeId) -> Option<&NodeEnds> {
        self.nodes.get(node).filter(|ends| ends.holds())
    }

    /// `node`'s usage by the running jobs from `now` on, as `(from, usage)` steps: the first
    /// at `now` (everything held), then one at each later release time (`now + 1` for the
    /// holdings past theirs), with what stays held from then on. Empty without holdings.
    #[cfg(test)]
    pub(crate) fn steps(&self, node: NodeId, now: u64) -> NodeSteps<'_> {
        NodeSteps {
            ends: self.ends(node),
            now,
            next: 0,
            started: false,
        }
    }

    /// What the running jobs hold on `node` at `at` (at or after `now`), and the steps of
    /// [`RunningEnds::steps`] after `at`: a binary search, not a walk of the earlier steps.
    pub(crate) fn steps_after(
        &self,
        node: NodeId,
        now: u64,
        at: u64,
    ) -> (NodeAmounts, NodeSteps<'_>) {
        let ends = self.ends(node);
        let (next, held) = ends.map_or((0, NodeAmounts::default()), |e| e.in_force(now, at));
        let steps = NodeSteps {
            ends,
            now,
            next,
            started: true,
        };
        (held, steps)
    }

    /// Whether some running job releases holdings on `node` at or before `at`.
    pub(crate) fn releases_on_by(&self, node: NodeId, at: u64) -> bool {
        self.ends(node)
            .is_some_and(|ends| ends.first_release() <= at)
    }

    /// What the running jobs hold on `node` in all, when all of it is still held at `at` (at or
    /// after `now`: no holding is released by then); `None` when some is released by `at`.
    pub(crate) fn all_held_at(&self, node: NodeId, now: u64, at: u64) -> Option<NodeAmounts> {
        let Some(ends) = self.ends(node) else {
            return Some(NodeAmounts::default());
        };
        (at <= now || ends.first_release() > at).then_some(ends.total)
    }

    /// The earliest time at or after `at` (at or after `now`) from which the running jobs'
    /// usage on `node` no longer `blocks`; `u64::MAX`: never. `blocks` must be monotone (less
    /// in use never blocks where more did not): the usage only steps down, so from that time
    /// on nothing blocks any more, whatever the window's length.
    pub(crate) fn earliest_unblocked(
        &self,
        node: NodeId,
        (now, at): (u64, u64),
        blocks: impl Fn(&NodeAmounts) -> bool,
    ) -> u64 {
        let (held, mut later) = self.steps_after(node, now, at);
        if !blocks(&held) {
            return at;
        }
        later
            .find(|(_, usage)| !blocks(usage))
            .map_or(u64::MAX, |(t, _)| t)
    }
}

impl Holding {
    fn key(&self) -> (u64, JobId) {
        (self.release_ms, self.job)
    }
}

impl NodeEnds {
    /// Whether any running job holds something on the node.
    fn holds(&self) -> bool {
        !self.holdings.is_empty()
    }

    /// The first time a holding is released (`u64::MAX` without holdings).
    fn first_release(&self) -> u64 {
        self.holdings.first().map_or(u64::MAX, |h| h.release_ms)
    }

    /// The index of the first holding still held after `at` (at or after `now`), and what is
    /// held at `at`.
    fn in_force(&self, now: u64, at: u64) -> (usize, NodeAmounts) {
        if at <= now {
            return (0, self.total);
        }
        // Every holding released by `at` is gone (`at` is `now + 1` or later).
        match self.holdings.partition_point(|h| h.release_ms <= at) {
            0 => (0, self.total),
            i => (i, self.after[i - 1]),
        }
    }

    /// Recomputes `after` and `total` from the holdings.
    fn sum(&mut self) {
        self.after.clear();
        self.after
            .resize(self.holdings.len(), NodeAmounts::default());
        let mut held = NodeAmounts::default();
        let mut i = self.holdings.len();
        while i > 0 {
            let at = self.holdings[i - 1].release_ms;
            let first = self.holdings[..i].partition_point(|h| h.release_ms < at);
            for slot in &mut self.after[first..i] {
                *slot = held;
            }
            for holding in &self.holdings[first..i] {
                held.add(&holding.amounts);
            }
            i = first;
        }
        self.total = held;
    }
}

/// The steps of [`RunningEnds::steps`].
#[derive(Clone, Debug)]
pub(crate) struct NodeSteps<'a> {
    ends: Option<&'a NodeEnds>,
    now: u64,
    /// The next holding whose release time is still to come.
    next: usize,
    /// Whether the step at `now` was given.
    started: bool,
}

impl Iterator for NodeSteps<'_> {
    type Item = (u64, NodeAmounts);

    fn next(&mut self) -> Option<(u64, NodeAmounts)> {
        let ends = self.ends?;
        if !self.started {
            self.started = true;
            return Some((self.now, ends.total));
        }
        let first_free = self.now.saturating_add(1);
        let holdings = &ends.holdings;
        let mut i = self.next;
        if i >= holdings.len() {
            return None;
        }
        let at = holdings[i].release_ms.max(first_free);
        // Every holding released at `at` (all those at or before `now + 1` release there).
        while i + 1 < holdings.len() && holdings[i + 1].release_ms.max(first_free) == at {
            i += 1;
        }
        self.next = i + 1;
        Some((at, ends.after[i]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpus(milli: u64) -> NodeAmounts {
        NodeAmounts {
            cpu_milli: milli,
            ..NodeAmounts::default()
        }
    }

    fn steps(ends: &RunningEnds, node: u32, now: u64) -> Vec<(u64, u64)> {
        ends.steps(NodeId(node), now)
            .map(|(at, used)| (at, used.cpu_milli))
            .collect()
    }

    #[test]
    fn usage_steps_down_at_each_release_and_past_ones_release_at_the_next_instant() {
        let mut ends = RunningEnds::default();
        ends.add(JobId(1), [(NodeId(0), cpus(1_000))], 300);
        ends.add(JobId(2), [(NodeId(0), cpus(2_000))], 100);
        ends.add(JobId(3), [(NodeId(0), cpus(4_000))], 50);
        ends.add(JobId(4), [(NodeId(0), cpus(8_000))], 300);
        assert_eq!(
            steps(&ends, 0, 0),
            [(0, 15_000), (50, 11_000), (100, 9_000), (300, 0)]
        );
        // At 100, the holdings released at 50 and 100 are held now, released at 101.
        assert_eq!(
            steps(&ends, 0, 100),
            [(100, 15_000), (101, 9_000), (300, 0)]
        );
        assert_eq!(steps(&ends, 1, 0), []);
        let after = |at| {
            let (held, later) = ends.steps_after(NodeId(0), 0, at);
            let later: Vec<_> = later.map(|(t, used)| (t, used.cpu_milli)).collect();
            (held.cpu_milli, later)
        };
        assert_eq!(
            after(0),
            (15_000, vec![(50, 11_000), (100, 9_000), (300, 0)])
        );
        assert_eq!(after(50), (11_000, vec![(100, 9_000), (300, 0)]));
        assert_eq!(after(299), (9_000, vec![(300, 0)]));
        assert_eq!(after(300), (0, vec![]));
        let unblocked =
            |at, most| ends.earliest_unblocked(NodeId(0), (0, at), |u| u.cpu_milli > most);
        assert_eq!(unblocked(0, 15_000), 0);
        assert_eq!(unblocked(0, 10_000), 100);
        assert_eq!(unblocked(120, 10_000), 120);
        assert_eq!(unblocked(0, 0), 300);
        assert_eq!(
            ends.earliest_unblocked(NodeId(0), (0, 0), |_| true),
            u64::MAX
        );
        assert_eq!(ends.next_release(100, 0), Some(101));
        assert_eq!(ends.next_release(100, 102), Some(300));
        assert_eq!(ends.next_release(0, 60), Some(100));
        assert_eq!(ends.next_release(0, 301), None);

        ends.remove(JobId(4), [(NodeId(0), cpus(8_000))], 300);
        ends.remove(JobId(3), [(NodeId(0), cpus(4_000))], 50);
        assert_eq!(steps(&ends, 0, 0), [(0, 3_000), (100, 1_000), (300, 0)]);
        assert_eq!(ends.next_release(0, 1), Some(100));
        ends.remove(JobId(1), [(NodeId(0), cpus(1_000))], 300);
        ends.remove(JobId(2), [(NodeId(0), cpus(2_000))], 100);
        assert_eq!(ends, RunningEnds::default());
        assert!(!ends.holds_on(NodeId(0)));
        assert_eq!(steps(&ends, 0, 0), []);
        assert_eq!(ends.all_held_at(NodeId(0), 0, 10), Some(cpus(0)));
        // The emptied node keeps its vectors for the next start, and holds as a new one would.
        ends.add(JobId(5), [(NodeId(0), cpus(1_000))], 200);
        let mut fresh = RunningEnds::default();
        fresh.add(JobId(5), [(NodeId(0), cpus(1_000))], 200);
        assert_eq!(ends, fresh);
        assert_eq!(steps(&ends, 0, 0), [(0, 1_000), (200, 0)]);
        assert_ne!(ends, RunningEnds::default());
    }
}
