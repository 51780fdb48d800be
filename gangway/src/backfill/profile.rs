//! The availability profile: what each node will have in use over any future window, from
//! running jobs' ends (start + time limit, or the grace deadline of a job being preempted), from
//! the earmarks of preemptors (which will hold their planned resources once their victims stop;
//! they count only for future windows) and from the reservations made earlier in the same pass.
//! Maintenance windows' ends are candidate start times too; licenses are planned alongside.
//!
//! Each node's usage is a step function kept as sorted breakpoints, so "free during
//! `[start, end)`" is a binary search and a scan of the steps inside the window.

use std::collections::{BTreeMap, BTreeSet};

use super::answers::Answers;
use super::by_node::ByNode;
use super::cpu_total::FreeCpus;
use super::licenses::LicenseProfile;
use crate::model::ids::NodeId;
use crate::model::node::Node;
use crate::model::resources::NodeAmounts;
use crate::state::ClusterState;

/// One node's usage over time: `steps[i].1` is in use from `steps[i].0` until the next step's
/// time (the last one forever). The first step is at the profile's `now`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Timeline {
    steps: Vec<(u64, NodeAmounts)>,
}

impl Timeline {
    /// The steps: usage from each time on.
    pub(super) fn steps(&self) -> &[(u64, NodeAmounts)] {
        &self.steps
    }

    fn new(now: u64) -> Self {
        Timeline {
            steps: vec![(now, NodeAmounts::default())],
        }
    }

    /// The index of the step in force at `at` (`at` ≥ the first step's time).
    fn step_at(&self, at: u64) -> usize {
        self.steps
            .partition_point(|(t, _)| *t <= at)
            .saturating_sub(1)
    }

    /// Makes `at` a breakpoint and returns its index.
    fn split(&mut self, at: u64) -> usize {
        let i = self.step_at(at);
        if self.steps[i].0 == at {
            return i;
        }
        let usage = self.steps[i].1;
        self.steps.insert(i + 1, (at, usage));
        i + 1
    }

    /// Adds `amounts` over `[start, end)`.
    fn add(&mut self, start: u64, end: u64, amounts: &NodeAmounts) {
        if end <= start {
            return;
        }
        let first = self.split(start);
        let last = self.split(end);
        for (_, usage) in &mut self.steps[first..last] {
            usage.add(amounts);
        }
    }

    /// The earliest `t ≥ start` such that no step overlapping `[t, t + len)` (`len` ≥ 1) has a
    /// usage that `blocks`; `u64::MAX` when a blocking step lasts forever. One sweep forward:
    /// each blocking step moves the candidate window to the step's end. The sweep stops once
    /// the candidate is later than `past`, returning it: a time later than `past` and no later
    /// than the answer.
    fn earliest_clear(
        &self,
        start: u64,
        len: u64,
        past: u64,
        blocks: impl Fn(&NodeAmounts) -> bool,
    ) -> u64 {
        let (mut t, mut end) = (start, start.saturating_add(len));
        for (i, (at, usage)) in self.steps.iter().enumerate().skip(self.step_at(start)) {
            if *at >= end || t > past {
                break;
            }
            if blocks(usage) {
                match self.steps.get(i + 1) {
                    Some(next) => (t, end) = (next.0, next.0.saturating_add(len)),
                    None => return u64::MAX,
                }
            }
        }
        t
    }

    /// The highest usage at any instant of `[start, end)`, per dimension.
    fn peak(&self, start: u64, end: u64) -> NodeAmounts {
        let first = self.step_at(start);
        let mut peak = self.steps[first].1;
        for (t, usage) in &self.steps[first + 1..] {
            if *t >= end {
                break;
            }
            peak = peak.max(usage);
        }
        peak
    }
}

/// Future usage per node, built once per pass when the first job needs a reservation.
#[derive(Clone, Debug, Default)]
pub struct Profile {
    now: u64,
    /// Usage per node with running jobs or reservations.
    usage: ByNode<Timeline>,
    /// For nodes with earmarks: `usage` plus the earmarked preemptors' future holdings (what is
    /// free now from now on, what their victims hold from the victims' grace deadline on, until
    /// the preemptor's time limit). Future windows read this one.
    future: ByNode<Timeline>,
    /// Nodes with reservations.
    reserved: BTreeSet<NodeId>,
    /// Times at which something is released: the only start times worth trying.
    releases: BTreeSet<u64>,
    /// Cluster-wide licenses over time (released at the same times as the jobs' nodes).
    pub licenses: LicenseProfile,
    /// Earlier answers of [`Profile::earliest_usable_memo`], by need slot: usage only grows
    /// during a pass, so an earlier answer stays a lower bound for the same need and any longer
    /// window.
    memo: Vec<NeedMemo>,
    /// Need slots by need.
    need_slots: BTreeMap<TaskNeed, usize>,
    /// Free cpus summed over the nodes taking work: built by [`Profile::earliest_cpu_fit`],
    /// then kept current by every booking.
    free_cpus: Option<FreeCpus>,
}

/// What one task needs: cpus (thousandths), memory (MiB), whole GPUs.
pub type TaskNeed = (u64, u64, u32);

/// The memo of one need: earlier answers per node.
#[derive(Clone, Debug, Default)]
struct NeedMemo {
    need: TaskNeed,
    by_node: Vec<Answers>,
}

impl Profile {
    /// Builds the profile of the running jobs at `now`. A job past its time limit counts as
    /// ending now (it holds its resources at `now` only); a job being preempted ends by its
    /// grace deadline.
    pub fn build(state: &ClusterState, now: u64) -> Self {
        let mut profile = Profile {
            now,
            licenses: LicenseProfile::of(state, now),
            ..Profile::default()
        };
        let mut holdings = Vec::new();
        for &id in &state.running {
            let Some(job) = state.job(id) else { continue };
            let Some(end) = job.release_ms().map(|end| end.max(now)) else {
                continue;
            };
            for (node, amounts) in state.node_charges(id) {
                holdings.push((node, end, amounts));
            }
            profile.licenses.add_running(&job.licenses, end);
        }
        profile.add_all_running(holdings);
        profile.add_earmarks(state);
        profile
            .releases
            .extend(state.maintenance.ends().filter(|&end| end > now));
        profile
    }

    /// [`Profile::add_running`] of every `(node, end, amounts)` holding into an empty profile,
    /// at once: each node's timeline is built from its holdings sorted by end, instead of
    /// splitting steps one holding at a time.
    fn add_all_running(&mut self, mut holdings: Vec<(NodeId, u64, NodeAmounts)>) {
        let now = self.now;
        let first_free = now.saturating_add(1);
        holdings.sort_unstable_by_key(|(node, end, _)| (*node, (*end).max(first_free)));
        // Every step down is a release, also `now + 1` for jobs past their time limit (held
        // at `now` only): a reservation may start there.
        let mut releases: Vec<u64> = holdings
            .iter()
            .map(|(_, end, _)| (*end).max(first_free))
            .collect();
        releases.sort_unstable();
        releases.dedup();
        self.releases = releases.into_iter().collect();
        let mut usage = Vec::new();
        for node_holdings in holdings.chunk_by(|a, b| a.0 == b.0) {
            // Steps from the last end backwards: each is what the holdings ending later use.
            let mut held = NodeAmounts::default();
            let mut steps = Vec::new();
            for same_end in node_holdings
                .chunk_by(|a, b| a.1.max(first_free) == b.1.max(first_free))
                .rev()
            {
                steps.push((same_end[0].1.max(first_free), held));
                for (_, _, amounts) in same_end {
                    held.add(amounts);
                }
            }
            steps.push((now, held));
            steps.reverse();
            usage.push((node_holdings[0].0, Timeline { steps }));
        }
        self.usage = usage.into_iter().collect();
    }

    /// Books every earmarked preemptor's planned resources for future windows.
    fn add_earmarks(&mut self, state: &ClusterState) {
        let now = self.now;
        for (&preemptor, earmark) in &state.earmarks {
            let Some(limit) = state.job(preemptor).map(|j| j.spec.time_limit_ms) else {
                continue;
            };
            let mut stop = now;
            let mut victims: BTreeMap<NodeId, NodeAmounts> = BTreeMap::new();
            for &victim in &earmark.victims {
                if let Some(p) = state.job(victim).and_then(|j| j.running()?.preemption) {
                    stop = stop.max(p.deadline_ms);
                }
                for (node, amounts) in state.node_charges(victim) {
                    victims.entry(node).or_default().add(&amounts);
                }
            }
            let end = stop.saturating_add(limit);
            for (node, planned) in &earmark.planned {
                let held = victims.get(node).copied().unwrap_or_default();
                let base = self.usage.get(*node).cloned();
                let future = self
                    .future
                    .get_or_insert_with(*node, || base.unwrap_or_else(|| Timeline::new(now)));
                future.add(now, end, &planned.minus(&held));
                future.add(stop, end, &planned.minus(&planned.minus(&held)));
            }
            self.releases.insert(end);
        }
    }

    /// Records a holding that started now and ends at `end` (held at `now` even when `end` is
    /// `now`).
    pub fn add_running(&mut self, node: NodeId, amounts: NodeAmounts, end: u64) {
        let end = end.max(self.now.saturating_add(1));
        self.book(node, self.now, end, &amounts);
        self.releases.insert(end);
    }

    /// Records a reservation of `amounts` on `node` over `[start, end)`.
    pub fn reserve(&mut self, node: NodeId, amounts: NodeAmounts, start: u64, end: u64) {
        self.book(node, start, end, &amounts);
        self.reserved.insert(node);
        self.releases.insert(end);
    }

    /// Adds a holding to the node's usage (and to its future usage, when it has earmarks).
    fn book(&mut self, node: NodeId, start: u64, end: u64, amounts: &NodeAmounts) {
        let now = self.now;
        if let Some(free_cpus) = self.free_cpus.as_mut() {
            free_cpus.book(node, start, end, amounts.cpu_milli);
        }
        self.usage
            .get_or_insert_with(node, || Timeline::new(now))
            .add(start, end, amounts);
        if let Some(future) = self.future.get_mut(node) {
            future.add(start, end, amounts);
        }
    }

    /// The usage timeline a window reads: with earmarks for a future window.
    fn timeline(&self, node: NodeId, future: bool) -> Option<&Timeline> {
        match self.future.get(node) {
            Some(timeline) if future => Some(timeline),
            _ => self.usage.get(node),
        }
    }

    /// The nodes any reservation touches, in id order.
    pub fn reserved_nodes(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.reserved.iter().copied()
    }

    /// Whether any reservation touches `node`.
    pub fn is_reserved(&self, node: NodeId) -> bool {
        self.reserved.contains(&node)
    }

    /// The first candidate start time at or after `from` (and after now).
    pub fn next_release(&self, from: u64) -> Option<u64> {
        self.releases
            .range(from.max(self.now.saturating_add(1))..)
            .next()
            .copied()
    }

    /// What `node` has free during the whole of `[start, end)` (`start` ≥ now): its available
    /// capacity (down devices have nothing free) minus the highest usage at any instant of the
    /// window, per dimension. Earmarks count only for a future window (`future`); a job placed
    /// now sees them as the pass's `held` resources instead.
    pub fn free_over(
        &self,
        id: NodeId,
        node: &Node,
        start: u64,
        end: u64,
        future: bool,
    ) -> NodeAmounts {
        match self.timeline(id, future) {
            Some(timeline) => node
                .available()
                .minus(&timeline.peak(start, end.max(start + 1))),
            None => node.available(),
        }
    }
}

impl Profile {
    /// [`Profile::earliest_usable`] for one task of the need in `slot` ([`Profile::need_slot`]),
    /// remembering its answers for the rest of the pass. An earlier answer for the
    /// same need, a window no longer than `len` and a start no later than `start` is a lower
    /// bound (the profile only gains usage during a pass, and longer windows and later starts
    /// only move the answer later), so the sweep starts there instead of at `start`. Like
    /// [`Profile::earliest_usable`], it gives up once the answer is later than `past`.
    pub fn earliest_usable_memo(
        &mut self,
        slot: usize,
        id: NodeId,
        node: &Node,
        (start, len): (u64, u64),
        past: u64,
    ) -> u64 {
        let Some(memo) = self.memo.get_mut(slot) else {
            return start;
        };
        let need = memo.need;
        if memo.by_node.len() <= id.index() {
            memo.by_node.resize_with(id.index() + 1, Answers::default);
        }
        let known = memo.by_node[id.index()].bound(start, len);
        if known > past {
            return known;
        }
        let answer = self.earliest_usable(id, node, (known, len), past, |available, used| {
            available.fits_task(used, node.gpu_count, need)
        });
        // A sweep given up past `past` found a lower bound, which is all the memo keeps.
        self.memo[slot].by_node[id.index()].remember(start, len, answer);
        answer
    }

    /// A lower bound (at least `start`) on the start of a window of `len` milliseconds
    /// (`len` ≥ 1) in which gangs needing `cpu_milli` cpus in all could fit: the earliest from
    /// which the cluster's free cpus, summed over the nodes taking work, stay at least that
    /// high for the whole window; `u64::MAX`: never. Per node a window offers at most what is
    /// free at each of its instants, so starts below the bound cannot fit.
    ///
    /// ```
    /// use gangway::backfill::Profile;
    /// use gangway::{ClusterConfig, Event, JobSpec, Scheduler};
    /// let cluster: ClusterConfig = serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 4}]}"#).unwrap();
    /// let mut s = Scheduler::new(cluster).unwrap();
    /// s.tick(0, vec![Event::Submit { job: JobSpec::new("a", 100, 3) }]).unwrap();
    /// let mut profile = Profile::build(s.state(), 0);
    /// let nodes: Vec<_> = s.state().nodes().map(|n| Some(n.record().clone())).collect();
    /// assert_eq!(profile.earliest_cpu_fit(&nodes, 1_000, 0, 50), 0);
    /// assert_eq!(profile.earliest_cpu_fit(&nodes, 2_000, 0, 50), 100);
    /// assert_eq!(profile.earliest_cpu_fit(&nodes, 5_000, 0, 50), u64::MAX);
    /// ```
    pub fn earliest_cpu_fit(
        &mut self,
        nodes: &[Option<Node>],
        cpu_milli: u64,
        start: u64,
        len: u64,
    ) -> u64 {
        if cpu_milli == 0 {
            return start;
        }
        let (usage, now) = (&self.usage, self.now);
        self.free_cpus
            .get_or_insert_with(|| FreeCpus::build(usage, nodes, now))
            .earliest_memo(cpu_milli, start, len)
    }

    /// The memo slot of a need, for [`Profile::earliest_usable_memo`].
    pub fn need_slot(&mut self, need: TaskNeed) -> usize {
        let next = self.memo.len();
        let slot = *self.need_slots.entry(need).or_insert(next);
        if slot == next {
            self.memo.push(NeedMemo {
                need,
                by_node: Vec::new(),
            });
        }
        slot
    }

    /// The earliest time `t ≥ start` from which `node` offers `enough` at every instant of a
    /// window of `len` milliseconds `[t, t + len)` (future usage, earmarks included):
    /// `u64::MAX` when never. `enough` sees the node's available amounts and the usage of one
    /// step at a time (so it computes only the free amounts it needs). The search gives up once
    /// the answer is known to be later than `past` (`u64::MAX`: never gives up), returning then
    /// a time later than `past` and no later than the answer.
    pub fn earliest_usable(
        &self,
        id: NodeId,
        node: &Node,
        (start, len): (u64, u64),
        past: u64,
        enough: impl Fn(&NodeAmounts, &NodeAmounts) -> bool,
    ) -> u64 {
        let available = node.available();
        let blocks = |usage: &NodeAmounts| !enough(&available, usage);
        match self.timeline(id, true) {
            Some(timeline) => timeline.earliest_clear(start, len.max(1), past, blocks),
            None if blocks(&NodeAmounts::default()) => u64::MAX,
            None => start,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An up node of 8 cpus, 64,000 MiB and `gpus` devices.
    fn test_node(gpus: usize) -> Node {
        Node::new("n", NodeAmounts::full(8_000, 64_000, gpus), gpus, None)
    }

    /// A seeded stream of numbers below a modulus (a linear congruential generator).
    fn numbers(mut seed: u64) -> impl FnMut(u64) -> u64 {
        move |modulo| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (seed >> 33) % modulo
        }
    }

    fn cpus(milli: u64) -> NodeAmounts {
        NodeAmounts {
            cpu_milli: milli,
            ..NodeAmounts::default()
        }
    }

    const MAX: u64 = u64::MAX;

    #[test]
    fn the_peak_covers_every_step_inside_the_window_and_no_other() {
        let mut t = Timeline::new(0);
        t.add(0, 100, &cpus(1));
        t.add(50, 200, &cpus(2));
        t.add(300, 400, &cpus(4));
        assert_eq!(t.peak(0, 50).cpu_milli, 1);
        assert_eq!(t.peak(0, 51).cpu_milli, 3);
        assert_eq!(t.peak(100, 300).cpu_milli, 2);
        assert_eq!(t.peak(200, 300).cpu_milli, 0);
        assert_eq!(t.peak(250, 301).cpu_milli, 4);
        assert_eq!(t.peak(400, 401).cpu_milli, 0);
        let heavy = |u: &NodeAmounts| u.cpu_milli >= 2;
        // Blocking steps: [50, 100), [100, 200), [300, 400).
        assert_eq!(t.earliest_clear(0, 50, MAX, heavy), 0);
        assert_eq!(t.earliest_clear(0, 60, MAX, heavy), 200);
        assert_eq!(t.earliest_clear(0, 100, MAX, heavy), 200);
        assert_eq!(t.earliest_clear(0, 101, MAX, heavy), 400);
        assert_eq!(t.earliest_clear(120, 10, MAX, heavy), 200);
        assert_eq!(t.earliest_clear(250, 50, MAX, heavy), 250);
        assert_eq!(t.earliest_clear(500, 600, MAX, |_| true), u64::MAX);
        // Giving up past a time: a candidate later than it, no later than the answer.
        assert_eq!(t.earliest_clear(0, 101, 0, heavy), 100);
        assert_eq!(t.earliest_clear(0, 101, 199, heavy), 200);
        assert_eq!(t.earliest_clear(0, 101, 200, heavy), 400);
        assert_eq!(t.earliest_clear(0, 50, 0, heavy), 0);
    }

    /// A job past its time limit (limits not enforced) is taken to end now: the next instant
    /// is a release, so a reservation can be planned there and not only at the next end.
    #[cfg(feature = "testkit")]
    #[test]
    fn a_job_past_its_limit_releases_at_the_next_instant() {
        use crate::testkit::oracle::checked_tick;
        use crate::{ClusterConfig, Event, JobSpec, Scheduler};
        let cluster: ClusterConfig = serde_json::from_str(
            r#"{"nodes": [{"name": "n1", "cpus": 4}],
                "policy": {"time_limit": {"enforce": false}}}"#,
        )
        .unwrap();
        let mut s = Scheduler::new(cluster).unwrap();
        let jobs = vec![
            Event::Submit {
                job: JobSpec::new("over", 100, 2),
            },
            Event::Submit {
                job: JobSpec::new("later", 1_000, 2),
            },
        ];
        checked_tick(&mut s, 0, jobs).unwrap();
        let profile = Profile::build(s.state(), 500);
        assert_eq!(
            profile.next_release(501),
            Some(501),
            "\"over\" is past its limit"
        );
        assert_eq!(profile.next_release(502), Some(1_000));
    }

    /// Building every node's timeline at once gives what booking holdings one by one gives.
    #[test]
    fn bulk_holdings_equal_one_by_one() {
        let mut next = numbers(11);
        for round in 0..200 {
            let now = 1_000;
            let holdings: Vec<(NodeId, u64, NodeAmounts)> = (0..next(12))
                .map(|_| {
                    let mut amounts = cpus(next(4) * 500);
                    amounts.devices[next(4) as usize] = 1_000;
                    amounts.mig = 1 << next(8);
                    (NodeId(next(4) as u32), now - 1 + next(5) * 10, amounts)
                })
                .collect();
            let mut one_by_one = Profile {
                now,
                ..Profile::default()
            };
            for (node, end, amounts) in &holdings {
                one_by_one.add_running(*node, *amounts, *end);
            }
            let mut bulk = Profile {
                now,
                ..Profile::default()
            };
            bulk.add_all_running(holdings);
            assert_eq!(bulk.usage, one_by_one.usage, "round {round}");
            assert_eq!(bulk.releases, one_by_one.releases, "round {round}");
        }
    }

    /// The memo never changes an answer: interleaving reservations with queries of several
    /// needs, lengths and starts, the remembered answer equals a fresh sweep every time (and
    /// a search given up past a time returns a bound between it and the answer).
    #[test]
    fn remembered_answers_equal_fresh_sweeps() {
        let node = test_node(4);
        let mut profile = Profile::default();
        let mut next = numbers(7);
        for round in 0..2_000 {
            let start = next(500) * 10;
            let mut used = NodeAmounts::full(next(4) * 1_000, next(3) * 8_000, 0);
            used.devices[next(4) as usize] = 1_000;
            profile.reserve(NodeId(0), used, start, start + 1 + next(300) * 10);
            let need = (next(8) * 1_000, next(4) * 8_000, next(3) as u32);
            let slot = profile.need_slot(need);
            let (from, len) = (next(3) * 100, 1 + next(40) * 25);
            // Every other query gives up past some time, leaving a bound in the memo.
            let past = if round % 2 == 0 {
                MAX
            } else {
                from + next(40) * 50
            };
            let fresh = profile.earliest_usable(NodeId(0), &node, (from, len), MAX, |a, u| {
                a.fits_task(u, 4, need)
            });
            let remembered =
                profile.earliest_usable_memo(slot, NodeId(0), &node, (from, len), past);
            let context = format!("round {round}: need {need:?} from {from} len {len}");
            if fresh <= past {
                assert_eq!(remembered, fresh, "{context}");
            } else {
                assert!(past < remembered && remembered <= fresh, "{context}");
            }
        }
    }

    /// The summed free cpus kept current booking by booking answer as a fresh build would.
    #[test]
    fn free_cpus_kept_current_equal_a_fresh_build() {
        let nodes = vec![Some(test_node(0)), Some(test_node(0)), Some(test_node(0))];
        let mut profile = Profile::default();
        profile.reserve(NodeId(1), cpus(3_000), 100, 400);
        assert_eq!(profile.earliest_cpu_fit(&nodes, 1_000, 0, 10), 0);
        let mut next = numbers(11);
        for round in 0..300 {
            // Bookings fit their node, as the pass's do.
            let (id, amount, start) = (NodeId(next(3) as u32), next(3) * 500, next(100) * 10);
            let end = start + 1 + next(50) * 10;
            let Some(n) = nodes[id.index()].as_ref() else {
                continue;
            };
            if profile.free_over(id, n, start, end, false).cpu_milli >= amount {
                profile.reserve(id, cpus(amount), start, end);
            }
            let fresh = FreeCpus::build(&profile.usage, &nodes, 0);
            let (need, from, len) = (next(24) * 1_000, next(100) * 10, 1 + next(30) * 10);
            assert_eq!(
                profile.earliest_cpu_fit(&nodes, need, from, len),
                fresh.earliest(need, from, len),
                "round {round}"
            );
        }
    }
}
