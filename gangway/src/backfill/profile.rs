//! The availability profile: what each node will have in use over any future window. The
//! running jobs' part lives across ticks in the state ([`RunningEnds`]: their ends, at start +
//! time limit or the grace deadline of a job being preempted); a pass's profile is the overlay
//! on it: the reservations made earlier in the same pass, and the earmarks of preemptors (which
//! will hold their planned resources once their victims stop; they count only for future
//! windows). Maintenance windows' ends are candidate start times too; licenses are planned
//! alongside.
//!
//! Each node's usage is the sum of step functions kept as sorted breakpoints, so "free during
//! `[start, end)`" is a merge of the few steps inside the window.

use std::collections::{BTreeMap, BTreeSet};

use super::answers::Answers;
use super::booked::BookedTimelines;
use super::by_node::ByNode;
use super::cpu_total::FreeCpus;
use super::licenses::LicenseProfile;
use super::running::{NodeSteps, RunningEnds};
use crate::model::ids::{JobId, NodeId};
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
    pub(super) fn new(now: u64) -> Self {
        // Room for one booking's two breakpoints without growing.
        let mut steps = Vec::with_capacity(3);
        steps.push((now, NodeAmounts::default()));
        Timeline { steps }
    }

    /// `amounts` in use over `[start, end)` and nothing else from `now` on, in this timeline's
    /// memory: [`Timeline::new`] and one [`Timeline::add`], without its searches.
    pub(super) fn with_one_booking(
        mut self,
        now: u64,
        (start, end): (u64, u64),
        amounts: &NodeAmounts,
    ) -> Self {
        self.steps.clear();
        if start < now {
            self.steps.push((now, NodeAmounts::default()));
            self.add(start, end, amounts);
        } else if start < end {
            if now < start {
                self.steps.push((now, NodeAmounts::default()));
            }
            self.steps
                .extend([(start, *amounts), (end, NodeAmounts::default())]);
        } else {
            self.steps.push((now, NodeAmounts::default()));
        }
        self
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

    /// The highest usage at any instant of `[start, end)` (`start` at or after now) of this
    /// timeline over the running jobs' usage of `node`. The running jobs' usage only steps
    /// down, so the sum peaks at the window's start or where this timeline steps up from
    /// nothing booked: it is read there alone, by a binary search each (a step to nothing
    /// booked holds no more than the running jobs' usage at the window's start).
    fn peak_over(
        &self,
        running: &RunningEnds,
        (node, now): (NodeId, u64),
        (start, end): (u64, u64),
    ) -> NodeAmounts {
        let first = self.step_at(start);
        let mut peak = NodeAmounts::default();
        let steps = self.steps[first..].iter().take_while(|s| s.0 < end);
        let nothing = NodeAmounts::default();
        for (i, &(at, booked)) in steps.enumerate() {
            if i > 0 && booked == nothing {
                continue;
            }
            let at = at.max(start);
            let mut usage = running.steps_after(node, now, at).0;
            usage.add(&booked);
            peak = peak.max(&usage);
        }
        peak
    }

    /// Whether this timeline and `other` read the same from `now` on (`now` at or after
    /// both first steps).
    pub(super) fn agrees_from(&self, other: &Timeline, now: u64) -> bool {
        let (mine, theirs) = (self.step_at(now), other.step_at(now));
        self.steps[mine].1 == other.steps[theirs].1
            && self.steps[mine + 1..] == other.steps[theirs + 1..]
    }

    /// Adds `amounts` over `[start, end)`.
    pub(super) fn add(&mut self, start: u64, end: u64, amounts: &NodeAmounts) {
        if end <= start {
            return;
        }
        // Nothing booked yet (most nodes of a pass's first reservation): two steps, no search.
        if let [(from, usage)] = self.steps[..]
            && usage == NodeAmounts::default()
            && from <= start
        {
            if from == start {
                self.steps[0].1 = *amounts;
            } else {
                self.steps.push((start, *amounts));
            }
            self.steps.push((end, NodeAmounts::default()));
            return;
        }
        let first = self.split(start);
        let last = self.split(end);
        for (_, usage) in &mut self.steps[first..last] {
            usage.add(amounts);
        }
    }

    /// Takes back `amounts` over `[start, end)`, added there before.
    fn remove(&mut self, start: u64, end: u64, amounts: &NodeAmounts) {
        if end <= start {
            return;
        }
        let first = self.split(start);
        let last = self.split(end);
        for (_, usage) in &mut self.steps[first..last] {
            usage.sub(amounts);
        }
    }
}

/// One node's usage as `(from, usage)` steps from a time on (the first step): the running
/// jobs' steps plus up to two overlays (the pass's reservations; for a future window, the
/// earmarks).
#[derive(Clone, Debug)]
pub(super) struct UsageSteps<'a> {
    /// The time of the first step, still to be given.
    first: Option<u64>,
    running: std::iter::Peekable<NodeSteps<'a>>,
    running_now: NodeAmounts,
    overlays: [&'a [(u64, NodeAmounts)]; 2],
    next: [usize; 2],
    overlays_now: [NodeAmounts; 2],
}

impl<'a> UsageSteps<'a> {
    /// The steps from `at` on (at or after `now`) of the running jobs' usage on `node` and of
    /// the `overlays` (each starting at `now`).
    fn from(
        (running, node, now): (&'a RunningEnds, NodeId, u64),
        overlays: [&'a [(u64, NodeAmounts)]; 2],
        at: u64,
    ) -> Self {
        let (running_now, running) = running.steps_after(node, now, at);
        let mut next = [0; 2];
        let mut overlays_now = [NodeAmounts::default(); 2];
        for k in 0..2 {
            let steps = overlays[k];
            next[k] = steps.partition_point(|(t, _)| *t <= at);
            if let Some(in_force) = next[k].checked_sub(1) {
                overlays_now[k] = steps[in_force].1;
            }
        }
        UsageSteps {
            first: Some(at),
            running: running.peekable(),
            running_now,
            overlays,
            next,
            overlays_now,
        }
    }

    fn usage(&self) -> NodeAmounts {
        let mut usage = self.running_now;
        usage.add(&self.overlays_now[0]);
        usage.add(&self.overlays_now[1]);
        usage
    }
}

impl Iterator for UsageSteps<'_> {
    type Item = (u64, NodeAmounts);

    fn next(&mut self) -> Option<(u64, NodeAmounts)> {
        if let Some(first) = self.first.take() {
            return Some((first, self.usage()));
        }
        let overlay_at = |k: usize| self.overlays[k].get(self.next[k]).map(|s| s.0);
        let at = [
            self.running.peek().map(|s| s.0),
            overlay_at(0),
            overlay_at(1),
        ]
        .into_iter()
        .flatten()
        .min()?;
        if let Some((_, usage)) = self.running.next_if(|s| s.0 == at) {
            self.running_now = usage;
        }
        for k in 0..2 {
            if let Some(&(step_at, usage)) = self.overlays[k].get(self.next[k])
                && step_at == at
            {
                self.overlays_now[k] = usage;
                self.next[k] += 1;
            }
        }
        Some((at, self.usage()))
    }
}

/// The highest usage at any instant of `[start, end)` (`start` at or after the first step),
/// per dimension.
fn peak(steps: impl Iterator<Item = (u64, NodeAmounts)>, start: u64, end: u64) -> NodeAmounts {
    let mut peak = NodeAmounts::default();
    for (at, usage) in steps {
        if at <= start {
            peak = usage;
            continue;
        }
        if at >= end {
            break;
        }
        peak = peak.max(&usage);
    }
    peak
}

/// The earliest `t ≥ start` such that no step overlapping `[t, t + len)` (`len` ≥ 1) has a
/// usage that `blocks`; `u64::MAX` when a blocking step lasts forever. One sweep forward:
/// each blocking step moves the candidate window to the step's end. The sweep stops once the
/// candidate is later than `past`, returning it: a time later than `past` and no later than
/// the answer. Steps start at or before `start`.
fn earliest_clear(
    steps: impl Iterator<Item = (u64, NodeAmounts)>,
    (start, len): (u64, u64),
    past: u64,
    blocks: impl Fn(&NodeAmounts) -> bool,
) -> u64 {
    let mut steps = steps.peekable();
    let Some(mut current) = steps.next() else {
        return start;
    };
    while let Some(step) = steps.next_if(|s| s.0 <= start) {
        current = step;
    }
    let (mut t, mut end) = (start, start.saturating_add(len));
    loop {
        let (at, usage) = current;
        if at >= end || t > past {
            break;
        }
        if blocks(&usage) {
            match steps.peek() {
                Some(next) => (t, end) = (next.0, next.0.saturating_add(len)),
                None => return u64::MAX,
            }
        }
        match steps.next() {
            Some(step) => current = step,
            None => break,
        }
    }
    t
}

/// Future usage per node over the running jobs', built once per pass when the first job needs
/// a reservation. Every query reads the running jobs' part from the state's [`RunningEnds`],
/// which the caller passes; it must be the one the profile was built over (the state's, as the
/// pass starts jobs).
#[derive(Clone, Debug, Default)]
pub(crate) struct Availability {
    now: u64,
    /// The reservations on each node with some (and the nodes with some).
    booked: BookedTimelines,
    /// For nodes with earmarks: the earmarked preemptors' future holdings (what is free now
    /// from now on, what their victims hold from the victims' grace deadline on, until the
    /// preemptor's time limit), over the running jobs' usage and the reservations. Future
    /// windows read it.
    earmarked: ByNode<Timeline>,
    /// The reservations' cpus (thousandths), each summed over its nodes, as `(time, change)`
    /// of the free cpus: taken at its start, given back at its end (and the reverse for one
    /// taken back). The bookings' part of [`Availability::sum_free_cpus`], without a walk of
    /// every reserved node's timeline.
    reserved_cpus: Vec<(u64, i64)>,
    /// Times at which something other than a running job is released (reservations' and
    /// earmarks' ends, maintenance ends): with the running jobs' ends, the only start times
    /// worth trying.
    releases: BTreeSet<u64>,
    /// Cluster-wide licenses over time (released at the same times as the jobs' nodes).
    pub licenses: LicenseProfile,
    /// Earlier answers of [`Availability::earliest_usable_memo`], by need slot: usage only grows
    /// during a pass, so an earlier answer stays a lower bound for the same need and any longer
    /// window.
    memo: Vec<NeedMemo>,
    /// Need slots by need.
    need_slots: BTreeMap<TaskNeed, usize>,
    /// Free cpus summed over the nodes taking work: built by [`Availability::earliest_cpu_fit`],
    /// then kept current by every booking and start.
    free_cpus: Option<FreeCpus>,
    /// The cpus of the nodes taking work, summed, as the free index keeps them, where every
    /// node takes work ([`crate::placement::FreeIndex::working_cpus`]); `None` otherwise, or
    /// not known: the sum of free cpus walks the nodes then.
    working_cpus: Option<u64>,
}

/// What one task needs: cpus (thousandths), memory (MiB), whole GPUs.
pub(crate) type TaskNeed = (u64, u64, u32);

/// The memo of one need: earlier answers per node.
#[derive(Clone, Debug, Default)]
struct NeedMemo {
    need: TaskNeed,
    by_node: Vec<Answers>,
}

impl Availability {
    /// The profile at `now` over the running jobs of `state` (read from
    /// `state`'s [`RunningEnds`] by each query), with no reservation yet: the earmarks, the
    /// licenses and the maintenance windows' ends. A job past its time limit counts as ending
    /// now (it holds its resources at `now` only); a job being preempted ends by its grace
    /// deadline.
    #[cfg(test)]
    pub(crate) fn build(state: &ClusterState, now: u64) -> Self {
        Availability::default().rebuild(state, now)
    }

    /// [`Availability::build`] in this profile's memory: a pass reuses the last one's, so that
    /// booking a wide reservation allocates nothing, and may take up the last one's
    /// reservation where it made one only ([`BookedTimelines`]).
    pub(crate) fn rebuild(self, state: &ClusterState, now: u64) -> Self {
        let Availability { mut booked, .. } = self;
        booked.next_pass();
        let mut profile = Availability {
            now,
            licenses: LicenseProfile::of(state, now),
            booked,
            working_cpus: state.index.working_cpus(),
            ..Availability::default()
        };
        if !state.licenses.is_empty() {
            for job in state.running.iter().filter_map(|&id| state.job(id)) {
                if let Some(end) = job.release_ms() {
                    profile.licenses.add_running(&job.licenses, end.max(now));
                }
            }
        }
        profile.add_earmarks(state);
        profile
            .releases
            .extend(state.maintenance.ends().filter(|&end| end > now));
        profile
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
                let future = self
                    .earmarked
                    .get_or_insert_with(*node, || Timeline::new(now));
                future.add(now, end, &planned.minus(&held));
                future.add(stop, end, &planned.minus(&planned.minus(&held)));
            }
            self.releases.insert(end);
        }
    }

    /// Drops the free cpus summed so far ([`Availability::earliest_cpu_fit`]): a running job's
    /// release moved earlier (it was told to stop by its grace deadline), which no booking
    /// records, so the next query sums them again.
    pub(crate) fn forget_free_cpus(&mut self) {
        self.free_cpus = None;
    }

    /// Records, for the sums kept from the running jobs' part, that a job started now holds
    /// `charges` (amounts by node) until `end` (the running jobs' part itself already has it).
    pub(crate) fn add_running(
        &mut self,
        charges: impl Iterator<Item = (NodeId, NodeAmounts)>,
        end: u64,
    ) {
        let end = end.max(self.now.saturating_add(1));
        if let Some(free_cpus) = self.free_cpus.as_mut() {
            free_cpus.book(charges.map(|(node, a)| (node, a.cpu_milli)), self.now, end);
        }
    }

    /// Records a reservation of `amounts` on `node` over `[start, end)`.
    #[cfg(test)]
    pub(crate) fn reserve(&mut self, node: NodeId, amounts: NodeAmounts, start: u64, end: u64) {
        self.reserve_all(&[(node, amounts)], start, end);
    }

    /// Records job `owner`'s plan's reservation of `charges()` (amounts by node) over
    /// `[start, end)`, as [`Availability::reserve_all`] does: where it is the last pass's one
    /// reservation again, that one's timelines are taken up instead of written anew. With
    /// `unchanged` (the owner's plan, and so its charges, are those of the last pass) the
    /// last pass's is taken up where it was the owner's over the window, without `charges`.
    pub(crate) fn reserve_plan(
        &mut self,
        owner: JobId,
        (charges, unchanged): (impl FnOnce() -> Vec<(NodeId, NodeAmounts)>, bool),
        start: u64,
        end: u64,
    ) {
        let (window, now) = ((start, end), self.now);
        let taken_up = match unchanged {
            true => self.booked.take_up_unchanged(owner, window, now),
            false => None,
        };
        if let Some(taken_up) = taken_up {
            debug_assert!(
                taken_up == charges(),
                "an unchanged plan's charges are the same"
            );
            self.book_sums(&taken_up, start, end);
            self.booked.record(owner, taken_up, window, now);
            return;
        }
        let charges = charges();
        self.book_sums(&charges, start, end);
        if !self.booked.take_up(owner, &charges, window, now) {
            self.booked.book(&charges, now, window);
            self.booked.record(owner, charges, window, now);
        }
    }

    /// Records a reservation of `charges` (amounts by node) over `[start, end)`: one booking
    /// of their summed cpus in the cluster's free cpus, one release time.
    pub(crate) fn reserve_all(&mut self, charges: &[(NodeId, NodeAmounts)], start: u64, end: u64) {
        self.booked.book(charges, self.now, (start, end));
        self.book_sums(charges, start, end);
        self.booked.record_other();
    }

    /// Books `charges` over `[start, end)` into what is kept beside the timelines: the summed
    /// free cpus, the reservations' cpus, the release times.
    fn book_sums(&mut self, charges: &[(NodeId, NodeAmounts)], start: u64, end: u64) {
        if let Some(free_cpus) = self.free_cpus.as_mut() {
            free_cpus.book(
                charges.iter().map(|(node, a)| (*node, a.cpu_milli)),
                start,
                end,
            );
        }
        self.reserved_cpus_change(charges, (start, end), 1);
        self.releases.insert(end);
    }

    /// Takes back a reservation [`Availability::reserve_all`] made with the same `charges` over
    /// `[start, end)` (conservative backfill with compression moves a reservation within a
    /// pass). The usage so falls: the memos, which assume it only grows, are forgotten, and the
    /// free cpus are summed again when next read. The release time stays, a candidate start
    /// that never makes a search's answer earlier than the truth.
    pub(crate) fn unreserve_all(
        &mut self,
        charges: &[(NodeId, NodeAmounts)],
        start: u64,
        end: u64,
    ) {
        for &(node, ref amounts) in charges {
            if let Some(timeline) = self.booked.get_mut(node) {
                timeline.remove(start, end, amounts);
            }
        }
        self.reserved_cpus_change(charges, (start, end), -1);
        self.booked.record_other();
        for memo in &mut self.memo {
            memo.by_node.clear();
        }
        self.free_cpus = None;
    }

    /// Records in [`Availability::reserved_cpus`] that `charges` are booked (`sign` 1) or
    /// taken back (-1) over `[start, end)`.
    fn reserved_cpus_change(
        &mut self,
        charges: &[(NodeId, NodeAmounts)],
        (start, end): (u64, u64),
        sign: i64,
    ) {
        let cpu_milli: u64 = charges.iter().map(|(_, a)| a.cpu_milli).sum();
        if start < end && cpu_milli > 0 {
            let cpu_milli = sign * cpu_milli as i64;
            self.reserved_cpus.push((start, -cpu_milli));
            self.reserved_cpus.push((end, cpu_milli));
        }
    }

    /// The usage steps a window on `node` from `at` on reads (`at` at or after now): the
    /// running jobs', the reservations, and for a future window the earmarks. `None`: nothing
    /// is in use there, now or later.
    pub(super) fn usage_steps<'a>(
        &'a self,
        running: &'a RunningEnds,
        (id, future): (NodeId, bool),
        at: u64,
    ) -> Option<UsageSteps<'a>> {
        let steps = |timeline: Option<&'a Timeline>| timeline.map_or(&[][..], |t| &t.steps[..]);
        let booked = steps(self.booked.get(id));
        let earmarked = steps(self.earmarked.get(id).filter(|_| future));
        if booked.is_empty() && earmarked.is_empty() && !running.holds_on(id) {
            return None;
        }
        let at = at.max(self.now);
        Some(UsageSteps::from(
            (running, id, self.now),
            [booked, earmarked],
            at,
        ))
    }

    /// The time the profile was built at.
    pub(super) fn now(&self) -> u64 {
        self.now
    }

    /// Whether a window on `node` reads more than the running jobs' usage: reservations, or
    /// for a future window earmarks.
    pub(super) fn has_overlay(&self, id: NodeId, future: bool) -> bool {
        self.booked.get(id).is_some() || (future && self.earmarked.get(id).is_some())
    }

    /// The nodes any reservation touches, in id order.
    pub(crate) fn reserved_nodes(&self) -> &[NodeId] {
        self.booked.nodes()
    }

    /// Whether any reservation touches `node`.
    pub(crate) fn is_reserved(&self, node: NodeId) -> bool {
        // Every reservation books its nodes' timelines: a lookup by index, not a tree search.
        self.booked.get(node).is_some()
    }

    /// The first candidate start time at or after `from` (and after now).
    pub(crate) fn next_release(&self, running: &RunningEnds, from: u64) -> Option<u64> {
        let from = from.max(self.now.saturating_add(1));
        let own = self.releases.range(from..).next().copied();
        match (own, running.next_release(self.now, from)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// What `node` has free during the whole of `[start, end)` (`start` ≥ now): its available
    /// capacity (down devices have nothing free) minus the highest usage at any instant of the
    /// window, per dimension. Earmarks count only for a future window (`future`); a job placed
    /// now sees them as the pass's `held` resources instead.
    pub(crate) fn free_over(
        &self,
        running: &RunningEnds,
        (id, node): (NodeId, &Node),
        (start, end): (u64, u64),
        future: bool,
    ) -> NodeAmounts {
        if !self.has_overlay(id, future) {
            // The running jobs' usage only steps down: its peak is at the window's start.
            let (held, _) = running.steps_after(id, self.now, start.max(self.now));
            return node.available().minus(&held);
        }
        let end = end.max(start + 1);
        let earmarked = self.earmarked.get(id).filter(|_| future);
        if let (Some(booked), None) = (self.booked.get(id), earmarked) {
            return node.available().minus(&booked.peak_over(
                running,
                (id, self.now),
                (start, end),
            ));
        }
        match self.usage_steps(running, (id, future), start) {
            Some(steps) => node.available().minus(&peak(steps, start, end)),
            None => node.available(),
        }
    }
}

impl Availability {
    /// [`Availability::earliest_usable`] for one task of the need in `slot` ([`Availability::need_slot`]),
    /// remembering its answers for the rest of the pass. An earlier answer for the
    /// same need, a window no longer than `len` and a start no later than `start` is a lower
    /// bound (the profile only gains usage during a pass, and longer windows and later starts
    /// only move the answer later), so the sweep starts there instead of at `start`. Like
    /// [`Availability::earliest_usable`], it gives up once the answer is later than `past`.
    pub(crate) fn earliest_usable_memo(
        &mut self,
        running: &RunningEnds,
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
        let fits = |available: &NodeAmounts, used: &NodeAmounts| {
            available.fits_task(used, node.gpu_count, need)
        };
        let answer = self.earliest_usable(running, (id, node), (known, len), past, fits);
        // A sweep given up past `past` found a lower bound, which is all the memo keeps.
        self.memo[slot].by_node[id.index()].remember(start, len, answer);
        answer
    }

    /// A lower bound (at least `start`) on the start of a window of `len` milliseconds
    /// (`len` ≥ 1) in which gangs needing `cpu_milli` cpus in all could fit: the earliest from
    /// which the cluster's free cpus, summed over the nodes taking work, stay at least that
    /// high for the whole window; `u64::MAX`: never. Per node a window offers at most what is
    /// free at each of its instants, so starts below the bound cannot fit.
    pub(crate) fn earliest_cpu_fit(
        &mut self,
        running: &RunningEnds,
        nodes: &[Option<Node>],
        cpu_milli: u64,
        start: u64,
        len: u64,
    ) -> u64 {
        if cpu_milli == 0 {
            return start;
        }
        self.with_free_cpus(running, nodes, |free| {
            free.earliest_memo(cpu_milli, start, len)
        })
    }

    /// Whether gangs needing `cpu_milli` cpus in all are short of them, summed over the nodes
    /// taking work, at some instant of the window of `len` milliseconds from `start`: exactly
    /// when [`Availability::earliest_cpu_fit`] answers later than `start`, without searching for
    /// that later start.
    pub(crate) fn short_of_cpus(
        &mut self,
        running: &RunningEnds,
        nodes: &[Option<Node>],
        cpu_milli: u64,
        start: u64,
        len: u64,
    ) -> bool {
        if cpu_milli == 0 {
            return false;
        }
        self.with_free_cpus(running, nodes, |free| {
            free.short_within(cpu_milli, start, len)
        })
    }

    /// `ask` of the cluster's free cpus, summed when first needed in the pass
    /// ([`Availability::sum_free_cpus`]) and kept current by the bookings after.
    fn with_free_cpus<T>(
        &mut self,
        running: &RunningEnds,
        nodes: &[Option<Node>],
        ask: impl FnOnce(&mut FreeCpus) -> T,
    ) -> T {
        let mut free_cpus = self
            .free_cpus
            .take()
            .unwrap_or_else(|| self.sum_free_cpus(running, nodes));
        let answer = ask(&mut free_cpus);
        self.free_cpus = Some(free_cpus);
        answer
    }

    /// The cluster's free cpus over time: the nodes taking work, less what the running jobs
    /// hold (their sums kept across ticks, [`RunningEnds::cpu_releases`]) and what this pass
    /// has reserved ([`Availability::reserved_cpus`]). Where every node takes work, the free
    /// index's sum of their cpus ([`Availability::working_cpus`]); else a walk of the nodes,
    /// not of every node's steps, and where a node taking no work still runs jobs (draining),
    /// the running sums count it, and the sum is built node by node ([`FreeCpus::build`]).
    fn sum_free_cpus(&self, running: &RunningEnds, nodes: &[Option<Node>]) -> FreeCpus {
        let now = self.now;
        let (available, counted) = match self.working_cpus {
            Some(cpu_milli) => (cpu_milli, None),
            None => {
                let mut available = 0;
                let mut counted = vec![false; nodes.len()];
                for (i, node) in nodes.iter().enumerate() {
                    match node.as_ref().filter(|n| n.accepts_work()) {
                        Some(node) => {
                            counted[i] = true;
                            available += node.available_cpu_milli();
                        }
                        None if running.holds_on(NodeId(i as u32)) => {
                            return FreeCpus::build(nodes, now, |id| {
                                self.usage_steps(running, (id, false), now)
                            });
                        }
                        None => {}
                    }
                }
                (available, Some(counted))
            }
        };
        let (held, releases) = running.cpu_releases(now);
        let mut changes: Vec<(u64, i64)> =
            Vec::with_capacity(running.release_count() + self.reserved_cpus.len());
        changes.extend(releases.map(|(at, cpu_milli)| (at, cpu_milli as i64)));
        changes.extend_from_slice(&self.reserved_cpus);
        // A plan kept from an earlier pass may hold a node that takes no work now (lost or
        // drained since): its bookings come off the sum again.
        // (None where every node takes work.)
        let uncounted = |id: &&NodeId| {
            counted
                .as_ref()
                .is_some_and(|counted| counted.get(id.index()) != Some(&true))
        };
        for &id in self.booked.nodes().iter().filter(uncounted) {
            let Some(booked) = self.booked.get(id) else {
                continue;
            };
            let mut before = 0i64;
            for (at, usage) in &booked.steps {
                let used = usage.cpu_milli as i64;
                // A timeline taken up from the last pass starts at that pass's now.
                changes.push(((*at).max(now), used - before));
                before = used;
            }
        }
        FreeCpus::from_changes(now, available.saturating_sub(held), changes, counted)
    }

    /// The memo slot of a need, for [`Availability::earliest_usable_memo`].
    pub(crate) fn need_slot(&mut self, need: TaskNeed) -> usize {
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
    /// a time later than `past` and no later than the answer. `enough` must be monotone: less
    /// in use never gives `false` where more gave `true`.
    pub(crate) fn earliest_usable(
        &self,
        running: &RunningEnds,
        (id, node): (NodeId, &Node),
        (start, len): (u64, u64),
        past: u64,
        enough: impl Fn(&NodeAmounts, &NodeAmounts) -> bool,
    ) -> u64 {
        let available = node.available();
        let blocks = |usage: &NodeAmounts| !enough(&available, usage);
        if !self.has_overlay(id, true) {
            let from = start.max(self.now);
            return running.earliest_unblocked(id, (self.now, from), blocks);
        }
        match self.usage_steps(running, (id, true), start) {
            Some(steps) => earliest_clear(steps, (start, len.max(1)), past, blocks),
            None if blocks(&NodeAmounts::default()) => u64::MAX,
            None => start,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backfill::tests::numbers;

    /// A job of 3 of 4 cpus running until 100: one cpu is free before, all four from 100 on.
    fn one_running_job() -> crate::Scheduler {
        let cluster: crate::ClusterConfig =
            serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 4}]}"#).unwrap();
        let mut s = crate::Scheduler::new(cluster).unwrap();
        let job = crate::JobSpec::new("a", 100, 3);
        s.tick(0, vec![crate::Event::Submit { job }]).unwrap();
        s
    }

    #[test]
    fn earliest_cpu_fit_is_the_first_start_with_enough_free_cpus() {
        let s = one_running_job();
        let mut profile = Availability::build(s.state(), 0);
        let running = s.state().running_ends();
        let nodes: Vec<_> = s
            .state()
            .nodes()
            .map(|n| Some(n.record().clone()))
            .collect();
        assert_eq!(profile.earliest_cpu_fit(running, &nodes, 1_000, 0, 50), 0);
        assert_eq!(profile.earliest_cpu_fit(running, &nodes, 2_000, 0, 50), 100);
        assert_eq!(
            profile.earliest_cpu_fit(running, &nodes, 5_000, 0, 50),
            u64::MAX
        );
    }

    #[test]
    fn short_of_cpus_within_the_window_only() {
        let s = one_running_job();
        let mut profile = Availability::build(s.state(), 0);
        let running = s.state().running_ends();
        let nodes: Vec<_> = s
            .state()
            .nodes()
            .map(|n| Some(n.record().clone()))
            .collect();
        assert!(!profile.short_of_cpus(running, &nodes, 1_000, 0, 50));
        assert!(profile.short_of_cpus(running, &nodes, 2_000, 0, 50));
        assert!(!profile.short_of_cpus(running, &nodes, 2_000, 100, 50));
    }

    /// An up node of 8 cpus, 64,000 MiB and `gpus` devices.
    fn test_node(gpus: usize) -> Node {
        Node::new("n", NodeAmounts::full(8_000, 64_000, gpus), gpus, None)
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
        let steps = || t.steps.iter().copied();
        assert_eq!(peak(steps(), 0, 50).cpu_milli, 1);
        assert_eq!(peak(steps(), 0, 51).cpu_milli, 3);
        assert_eq!(peak(steps(), 100, 300).cpu_milli, 2);
        assert_eq!(peak(steps(), 200, 300).cpu_milli, 0);
        assert_eq!(peak(steps(), 250, 301).cpu_milli, 4);
        assert_eq!(peak(steps(), 400, 401).cpu_milli, 0);
        let heavy = |u: &NodeAmounts| u.cpu_milli >= 2;
        let clear = |start, len, past| earliest_clear(steps(), (start, len), past, heavy);
        // Blocking steps: [50, 100), [100, 200), [300, 400).
        assert_eq!(clear(0, 50, MAX), 0);
        assert_eq!(clear(0, 60, MAX), 200);
        assert_eq!(clear(0, 100, MAX), 200);
        assert_eq!(clear(0, 101, MAX), 400);
        assert_eq!(clear(120, 10, MAX), 200);
        assert_eq!(clear(250, 50, MAX), 250);
        assert_eq!(earliest_clear(steps(), (500, 600), MAX, |_| true), u64::MAX);
        // Giving up past a time: a candidate later than it, no later than the answer.
        assert_eq!(clear(0, 101, 0), 100);
        assert_eq!(clear(0, 101, 199), 200);
        assert_eq!(clear(0, 101, 200), 400);
        assert_eq!(clear(0, 50, 0), 0);
    }

    #[test]
    fn a_first_booking_is_two_steps_and_later_ones_split_the_steps_they_cross() {
        let none = NodeAmounts::default();
        let mut at_now = Timeline::new(10);
        at_now.add(10, 20, &cpus(1));
        assert_eq!(at_now.steps, [(10, cpus(1)), (20, none)]);
        let mut t = Timeline::new(10);
        t.add(15, 20, &cpus(1));
        assert_eq!(t.steps, [(10, none), (15, cpus(1)), (20, none)]);
        t.add(12, 18, &cpus(2));
        let expected = [
            (10, none),
            (12, cpus(2)),
            (15, cpus(3)),
            (18, cpus(1)),
            (20, none),
        ];
        assert_eq!(t.steps, expected);
        // Taken back, the steps stay: the next booking splits them.
        t.remove(12, 18, &cpus(2));
        t.remove(15, 20, &cpus(1));
        t.add(11, 13, &cpus(4));
        let expected = [(10, none), (11, cpus(4)), (12, cpus(4)), (13, none)];
        assert_eq!(t.steps[..4], expected);
        assert_eq!(t.steps.len(), 7);
    }

    /// A booking written at once into a used timeline's memory reads as a new timeline with
    /// that one booking added.
    #[test]
    fn one_booking_written_at_once_equals_one_added_to_a_new_timeline() {
        let used = || {
            let mut t = Timeline::new(0);
            t.add(1, 5, &cpus(3));
            t.add(2, 9, &cpus(1));
            t
        };
        for window in [(10, 20), (15, 20), (15, 15), (20, 15), (10, 11)] {
            let mut added = Timeline::new(10);
            added.add(window.0, window.1, &cpus(2));
            let written = used().with_one_booking(10, window, &cpus(2));
            assert_eq!(written, added, "{window:?}");
        }
    }

    #[test]
    fn a_node_s_peak_over_a_window_leaves_out_what_is_booked_from_its_end_on() {
        let mut t = Timeline::new(0);
        t.add(100, 200, &cpus(2));
        t.add(300, 400, &cpus(4));
        let running = RunningEnds::default();
        let peak = |start, end| {
            t.peak_over(&running, (NodeId(0), 0), (start, end))
                .cpu_milli
        };
        assert_eq!(peak(0, 100), 0);
        assert_eq!(peak(0, 101), 2);
        assert_eq!(peak(150, 160), 2);
        assert_eq!(peak(200, 300), 0);
        assert_eq!(peak(100, 301), 4);
        assert_eq!(peak(400, 500), 0);
    }

    /// The peak read at the window's start and the timeline's steps up is the highest usage
    /// at any instant of the window, with running jobs ending within it.
    #[test]
    fn a_node_s_peak_over_a_window_is_the_highest_usage_at_any_instant() {
        use crate::backfill::tests::numbers;
        use crate::model::ids::JobId;
        let mut next = numbers(5);
        for _ in 0..500 {
            let mut running = RunningEnds::default();
            for job in 0..next(4) {
                running.add(
                    JobId(job as u32),
                    [(NodeId(0), cpus(1 + next(3)))],
                    next(60),
                );
            }
            let mut t = Timeline::new(0);
            for _ in 0..next(4) {
                let start = next(50);
                t.add(start, start + 1 + next(20), &cpus(next(3)));
            }
            let start = next(60);
            let end = start + 1 + next(30);
            let at_instant = |at: u64| {
                let mut usage = running.steps_after(NodeId(0), 0, at).0;
                usage.add(&t.steps[t.step_at(at)].1);
                usage.cpu_milli
            };
            let highest = (start..end).map(at_instant).max().unwrap();
            let peak = t.peak_over(&running, (NodeId(0), 0), (start, end));
            assert_eq!(peak.cpu_milli, highest, "[{start}, {end})");
        }
    }

    /// A rebuilt profile carries the licenses the running jobs hold: the totals of the
    /// state's licenses, each running job's held until its end.
    #[test]
    fn a_rebuilt_profile_holds_the_running_jobs_licenses_until_their_end() {
        let cluster: crate::ClusterConfig = serde_json::from_str(
            r#"{"nodes": [{"name": "n1", "cpus": 4}], "licenses": {"matlab": 3}}"#,
        )
        .unwrap();
        let mut s = crate::Scheduler::new(cluster).unwrap();
        let job = crate::JobSpec::new("a", 100, 1).with_license("matlab", 2);
        s.tick(0, vec![crate::Event::Submit { job }]).unwrap();
        let mut profile = Availability::build(s.state(), 0);
        profile.reserve(NodeId(0), cpus(1_000), 10, 20);
        for profile in [profile.clone(), profile.rebuild(s.state(), 50)] {
            let matlab = |count| vec![(0, count)];
            assert!(profile.licenses.covers(&matlab(1), 50, 150));
            assert!(
                !profile.licenses.covers(&matlab(2), 50, 150),
                "a holds 2 until 100"
            );
            assert!(profile.licenses.covers(&matlab(3), 100, 200));
            assert!(
                !profile.licenses.covers(&matlab(4), 100, 200),
                "the cluster has 3"
            );
        }
    }

    /// A preemptor's earmark holds its planned resources in future windows from its victims'
    /// grace deadline until the deadline plus its time limit, which is a candidate start; a
    /// maintenance window's end after now is one too. A window starting now reads no earmark.
    #[test]
    fn a_rebuilt_profile_books_the_earmarks_and_releases_at_their_ends_and_maintenance_ends() {
        let cluster: crate::ClusterConfig = serde_json::from_str(
            r#"{"nodes": [{"name": "n1", "cpus": 4}],
                "queues": [{"name": "q", "quota": {"cpu": {"nominal": 4}},
                            "preemption": {"within_queue": "lower_priority"}}],
                "maintenance": [{"nodes": ["n1"], "start_ms": 5000, "end_ms": 6000},
                                {"nodes": ["n1"], "start_ms": 1, "end_ms": 10}],
                "policy": {"preemption": {"enabled": true}}}"#,
        )
        .unwrap();
        let mut s = crate::Scheduler::new(cluster).unwrap();
        let job = |id: &str, limit, cpus, priority| {
            let mut job = crate::JobSpec::new(id, limit, 1).with_priority(priority);
            job.queue = Some("q".into());
            job.grace_ms = 100;
            job.groups[0].cpus = crate::Milli::from_units(cpus);
            crate::Event::Submit { job }
        };
        s.tick(10, vec![job("old", 1_000, 3, 0)]).unwrap();
        let out = s.tick(20, vec![job("new", 500, 2, 1)]).unwrap();
        assert!(
            matches!(&out.decisions[..], [crate::Decision::Preempt { job, .. }] if job == "old"),
            "{:?}",
            out.decisions
        );
        let state = s.state();
        assert_eq!(state.earmarks.len(), 1);
        let profile = Availability::build(state, 20);
        let running = state.running_ends();
        let node = state.nodes().next().unwrap().record().clone();
        let free = |window, future| {
            profile
                .free_over(running, (NodeId(0), &node), window, future)
                .cpu_milli
        };
        // "old" holds 3 cpus until its grace deadline at 120; "new" holds 2 from 120 to 620.
        assert_eq!(free((20, 30), false), 1_000);
        assert_eq!(free((20, 30), true), 1_000);
        assert_eq!(
            free((200, 300), false),
            4_000,
            "a window placed now reads no earmark"
        );
        assert_eq!(free((200, 300), true), 2_000);
        assert_eq!(free((620, 700), true), 4_000);
        let fits =
            |need: u64| move |a: &NodeAmounts, u: &NodeAmounts| a.cpu_milli >= u.cpu_milli + need;
        let usable =
            |need| profile.earliest_usable(running, (NodeId(0), &node), (20, 100), MAX, fits(need));
        assert_eq!(usable(2_000), 120);
        assert_eq!(usable(3_000), 620);
        // The candidate starts: the deadline (a running job's release), the earmark's end,
        // the maintenance window's end after now (not the one before).
        assert_eq!(profile.next_release(running, 21), Some(120));
        assert_eq!(profile.next_release(running, 121), Some(620));
        assert_eq!(profile.next_release(running, 621), Some(6_000));
        assert_eq!(profile.next_release(running, 6_001), None);
    }

    /// The free cpus summed for the pass follow the jobs started in it, and a running job's
    /// release moved earlier once they are forgotten.
    #[test]
    fn summed_free_cpus_follow_a_start_and_are_summed_again_once_forgotten() {
        use crate::model::ids::JobId;
        let nodes = vec![Some(test_node(0))];
        let mut running = RunningEnds::default();
        let mut profile = Availability::default();
        assert_eq!(profile.earliest_cpu_fit(&running, &nodes, 8_000, 0, 10), 0);
        let charges = [(NodeId(0), cpus(6_000))];
        running.add(JobId(0), charges, 100);
        profile.add_running(charges.into_iter(), 100);
        assert_eq!(profile.earliest_cpu_fit(&running, &nodes, 2_000, 0, 10), 0);
        assert_eq!(
            profile.earliest_cpu_fit(&running, &nodes, 3_000, 0, 10),
            100
        );
        // Told to stop by 50: the state moves its release; the profile forgets its sums.
        running.remove(JobId(0), charges, 100);
        running.add(JobId(0), charges, 50);
        profile.forget_free_cpus();
        assert_eq!(profile.earliest_cpu_fit(&running, &nodes, 3_000, 0, 10), 50);
    }

    /// A rebuilt profile holds none of the last pass's reservations, in the last pass's memory:
    /// the reserved nodes' timelines stay in their places, hidden, for the next bookings.
    #[test]
    fn a_rebuilt_profile_forgets_the_reservations_and_keeps_their_memory() {
        let s = one_running_job();
        let mut profile = Availability::build(s.state(), 0);
        // The profile reads no node table: node 2 is a place like any other.
        profile.reserve(NodeId(0), cpus(1_000), 10, 20);
        profile.reserve(NodeId(2), cpus(1_000), 30, 40);
        assert_eq!(profile.reserved_nodes(), [NodeId(0), NodeId(2)]);
        let rebuilt = profile.rebuild(s.state(), 50);
        assert_eq!(rebuilt.reserved_nodes(), []);
        assert!(!rebuilt.is_reserved(NodeId(0)) && !rebuilt.is_reserved(NodeId(2)));
        assert_eq!(
            rebuilt.next_release(s.state().running_ends(), 51),
            Some(100)
        );
        assert_eq!(rebuilt.booked.places(), 3, "places for nodes 0 to 2 kept");
        let mut again = rebuilt;
        again.reserve(NodeId(2), cpus(2_000), 60, 70);
        again.reserve(NodeId(0), cpus(2_000), 60, 70);
        assert_eq!(again.reserved_nodes(), [NodeId(0), NodeId(2)]);
        let node = test_node(0);
        let running = s.state().running_ends();
        let free = again.free_over(running, (NodeId(2), &node), (60, 70), false);
        assert_eq!(
            free.cpu_milli, 6_000,
            "the booking of 2 cpus alone, from 50 on"
        );
        let free = again.free_over(running, (NodeId(2), &node), (30, 40), false);
        assert_eq!(free.cpu_milli, 8_000, "the last pass's booking is gone");
    }

    /// Asserts that `kept` and `fresh`, profiles at the same now with the same reservations
    /// made, read the same on nodes 0 to 2 (node 0 running a job until 100), over windows
    /// from now on.
    fn read_alike(kept: &mut Availability, fresh: &mut Availability, s: &crate::Scheduler) {
        let running = s.state().running_ends();
        let node = test_node(0);
        let nodes = vec![Some(test_node(0)); 3];
        assert_eq!(kept.reserved_nodes(), fresh.reserved_nodes());
        for id in (0..3).map(NodeId) {
            assert_eq!(kept.is_reserved(id), fresh.is_reserved(id));
            for window in [
                (60, 70),
                (90, 160),
                (150, 250),
                (200, 300),
                (240, 400),
                (300, 301),
            ] {
                let now = kept.now();
                let window = (window.0.max(now), window.1.max(now + 1));
                for future in [false, true] {
                    let free = |p: &Availability| p.free_over(running, (id, &node), window, future);
                    assert_eq!(free(kept), free(fresh), "{id:?} over {window:?}");
                }
                let steps = |p: &Availability| {
                    let steps = p.usage_steps(running, (id, true), window.0);
                    steps.map(|s| s.collect::<Vec<_>>())
                };
                assert_eq!(steps(kept), steps(fresh), "{id:?} from {}", window.0);
            }
        }
        for from in [61, 150, 251, 300] {
            assert_eq!(
                kept.next_release(running, from),
                fresh.next_release(running, from)
            );
        }
        for (cpu_milli, len) in [(6_000, 100), (14_000, 50), (20_000, 10), (24_000, 1)] {
            assert_eq!(
                kept.earliest_cpu_fit(running, &nodes, cpu_milli, kept.now() + 1, len),
                fresh.earliest_cpu_fit(running, &nodes, cpu_milli, kept.now() + 1, len),
                "{cpu_milli} cpus for {len}"
            );
        }
    }

    /// A pass whose first reservation is the last pass's one reservation, on the same charges
    /// over the same window, takes up that one's timelines; every other reservation is written
    /// anew. Either way the profile reads as one built afresh with the same reservations.
    #[test]
    fn a_pass_takes_up_the_last_pass_s_one_reservation_and_reads_as_if_booked_anew() {
        let s = one_running_job();
        let plan = || vec![(NodeId(0), cpus(1_000)), (NodeId(2), cpus(2_000))];
        let other = || vec![(NodeId(1), cpus(3_000)), (NodeId(2), cpus(500))];
        // Each pass: its reservations (window, and whether on the plan's charges), and
        // whether the first is taken up.
        type Pass = (Vec<(u64, u64, bool)>, bool);
        let passes: [Pass; 7] = [
            (vec![(150, 250, true)], false),
            (vec![(150, 250, true)], true),
            // Taken up, then another booked over the same nodes.
            (vec![(150, 250, true), (200, 260, false)], true),
            // The last pass made two: nothing to take up.
            (vec![(150, 250, true)], false),
            // Another window: written anew.
            (vec![(150, 240, true)], false),
            // Another reservation first: the last pass's is not taken up after it.
            (vec![(100, 140, false), (150, 240, true)], false),
            (vec![(150, 240, true)], false),
        ];
        let mut kept = Availability::build(s.state(), 0);
        for (pass, (reservations, taken_up)) in passes.into_iter().enumerate() {
            let now = 60 + pass as u64;
            kept = kept.rebuild(s.state(), now);
            let mut fresh = Availability::build(s.state(), now);
            for (i, &(start, end, first)) in reservations.iter().enumerate() {
                let (owner, charges) = if first {
                    (JobId(1), plan())
                } else {
                    (JobId(2), other())
                };
                // The plan, booked again, is known unchanged in every other pass.
                let unchanged = first && pass % 2 == 1;
                kept.reserve_plan(owner, (|| charges.clone(), unchanged), start, end);
                fresh.reserve_plan(owner, (|| charges.clone(), unchanged), start, end);
                if i == 0 {
                    assert_eq!(kept.booked.took_up(), taken_up, "pass {pass}");
                }
            }
            read_alike(&mut kept, &mut fresh, &s);
        }
    }

    /// Passes of reservations drawn from a few, so that a pass often makes the last one's
    /// again, some taken back (as compression does): a pass takes up the last one's
    /// reservation exactly where that pass made one only, took none back, and this pass makes
    /// it again first; and reads as a profile built afresh with its reservations.
    #[test]
    fn passes_take_up_the_last_pass_s_one_reservation_where_they_make_it_again_first() {
        let s = one_running_job();
        let mut next = numbers(35);
        // Reservations: charges by node, and a window.
        type Booking = (Vec<(NodeId, NodeAmounts)>, (u64, u64));
        let pool: Vec<Booking> = (0..5)
            .map(|_| {
                let mut charges = Vec::new();
                for node in (0..3).map(NodeId) {
                    if next(3) > 0 {
                        charges.push((node, cpus(500 * (1 + next(4)))));
                    }
                }
                let start = 200 + 10 * next(8);
                (charges, (start, start + 10 * (1 + next(10))))
            })
            .collect();
        let mut kept = Availability::build(s.state(), 0);
        let mut last: Option<Vec<usize>> = None;
        let mut taken_in_all = 0;
        for pass in 0..600 {
            // Every reservation from after now.
            let now = 60 + pass / 6;
            kept = kept.rebuild(s.state(), now);
            let mut fresh = Availability::build(s.state(), now);
            // Mostly the last pass's again, to a point, and then others.
            let mut made: Vec<usize> = match &last {
                Some(last) if next(4) > 0 => last[..next(last.len() as u64 + 1) as usize].to_vec(),
                _ => Vec::new(),
            };
            made.extend((0..next(3)).map(|_| next(pool.len() as u64) as usize));
            for &i in &made {
                // Each drawn reservation is one job's plan: half of them known unchanged.
                let (charges, (start, end)) = &pool[i];
                let (owner, unchanged) = (JobId(i as u32), next(2) == 0);
                kept.reserve_plan(owner, (|| charges.clone(), unchanged), *start, *end);
                fresh.reserve_plan(owner, (|| charges.clone(), unchanged), *start, *end);
            }
            let taken_back = next(8) == 0 && !made.is_empty();
            if taken_back {
                let (charges, (start, end)) = &pool[made[0]];
                kept.unreserve_all(charges, *start, *end);
                fresh.unreserve_all(charges, *start, *end);
            }
            let again = last
                .as_ref()
                .is_some_and(|last| last.len() == 1 && made.first() == last.first());
            assert_eq!(kept.booked.took_up(), again, "pass {pass}");
            taken_in_all += usize::from(again);
            read_alike(&mut kept, &mut fresh, &s);
            last = (!taken_back).then_some(made);
        }
        assert!(taken_in_all > 50, "{taken_in_all} reservations taken up");
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
        let profile = Availability::build(s.state(), 500);
        let running = s.state().running_ends();
        assert_eq!(
            profile.next_release(running, 501),
            Some(501),
            "\"over\" is past its limit"
        );
        assert_eq!(profile.next_release(running, 502), Some(1_000));
    }

    /// The running jobs' steps kept across ticks, with the pass's reservations and the
    /// earmarks over them, read as one usage: the same function as one timeline that booked
    /// every holding (a running job from now until its end, the next instant at the earliest),
    /// whatever was added and removed before, at every instant that matters.
    #[test]
    fn running_steps_and_overlays_sum_to_one_timeline() {
        let mut next = numbers(11);
        for round in 0..300 {
            let now = 1_000;
            let mut running = RunningEnds::default();
            let mut held = Vec::new();
            for job in 0..next(12) {
                let mut amounts = cpus(next(4) * 500);
                amounts.devices[next(4) as usize] = 1_000;
                let charges = vec![(NodeId(next(3) as u32), amounts)];
                let end = now - 1 + next(5) * 10;
                let id = crate::model::ids::JobId(job as u32);
                running.add(id, charges.clone(), end);
                // Every third job has ended again.
                match next(3) {
                    0 => running.remove(id, charges, end),
                    _ => held.extend(charges.into_iter().map(|(n, a)| (n, end, a))),
                }
            }
            let mut profile = Availability {
                now,
                ..Availability::default()
            };
            let mut earmarks = Timeline::new(now);
            let mut one = [Timeline::new(now), Timeline::new(now), Timeline::new(now)];
            for (node, end, amounts) in &held {
                one[node.index()].add(now, (*end).max(now + 1), amounts);
            }
            for _ in 0..next(4) {
                let (node, start) = (NodeId(next(3) as u32), now + next(8) * 5);
                let end = start + 1 + next(6) * 5;
                profile.reserve(node, cpus(250), start, end);
                one[node.index()].add(start, end, &cpus(250));
            }
            let (start, end) = (now + next(4) * 10, now + 50 + next(4) * 10);
            earmarks.add(start, end, &cpus(125));
            *profile
                .earmarked
                .get_or_insert_with(NodeId(0), || Timeline::new(now)) = earmarks.clone();
            for (node, alone) in one.iter().enumerate() {
                let id = NodeId(node as u32);
                let mut expected = alone.clone();
                let now_usage = |t: &Timeline, at: u64| t.steps[t.step_at(at)].1;
                for future in [false, true] {
                    if future && node == 0 {
                        expected.add(start, end, &cpus(125));
                    }
                    // Read from now, and from a later time on (a window's start).
                    for from in [now, now + next(12) * 5] {
                        let summed: Vec<_> = profile
                            .usage_steps(&running, (id, future), from)
                            .map(Iterator::collect)
                            .unwrap_or_else(|| vec![(from, NodeAmounts::default())]);
                        assert_eq!(summed[0].0, from);
                        let at_times = (from..now + 120).step_by(5).chain([u64::MAX - 1]);
                        let of_summed = |at: u64| {
                            let i = summed.partition_point(|(t, _)| *t <= at) - 1;
                            summed[i].1
                        };
                        for at in at_times.chain(summed.iter().map(|s| s.0)) {
                            let context =
                                format!("round {round} node {node} future {future} at {at}");
                            assert_eq!(of_summed(at), now_usage(&expected, at), "{context}");
                        }
                        // The shortcuts of the queries (the running jobs alone, reservations
                        // alone over them) answer as the plain sweeps over the summed steps.
                        let big = Node::new("n", NodeAmounts::full(20_000, 0, 4), 4, None);
                        let window = (from, from + 1 + next(40) * 5);
                        let peak_of_sum = peak(summed.iter().copied(), window.0, window.1);
                        assert_eq!(
                            profile.free_over(&running, (id, &big), window, future),
                            big.available().minus(&peak_of_sum),
                            "round {round} node {node} future {future} window {window:?}"
                        );
                        if future {
                            let most = next(5) * 1_000;
                            let blocks = |u: &NodeAmounts| u.cpu_milli > most;
                            let len = 1 + next(30) * 5;
                            let plain =
                                earliest_clear(summed.iter().copied(), (from, len), MAX, blocks);
                            let enough = |_: &NodeAmounts, u: &NodeAmounts| u.cpu_milli <= most;
                            assert_eq!(
                                profile.earliest_usable(
                                    &running,
                                    (id, &big),
                                    (from, len),
                                    MAX,
                                    enough
                                ),
                                plain,
                                "round {round} node {node} from {from} len {len} most {most}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// The memo never changes an answer: interleaving reservations with queries of several
    /// needs, lengths and starts, the remembered answer equals a fresh sweep every time (and
    /// a search given up past a time returns a bound between it and the answer).
    #[test]
    fn remembered_answers_equal_fresh_sweeps() {
        let node = test_node(4);
        let mut profile = Availability::default();
        let running = RunningEnds::default();
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
            let fits = |a: &NodeAmounts, u: &NodeAmounts| a.fits_task(u, 4, need);
            let fresh =
                profile.earliest_usable(&running, (NodeId(0), &node), (from, len), MAX, fits);
            let remembered =
                profile.earliest_usable_memo(&running, slot, NodeId(0), &node, (from, len), past);
            let context = format!("round {round}: need {need:?} from {from} len {len}");
            if fresh <= past {
                assert_eq!(remembered, fresh, "{context}");
            } else {
                assert!(past < remembered && remembered <= fresh, "{context}");
            }
        }
    }

    /// Reserves `amount` cpus on `id` over `window` when they are free there (bookings fit
    /// their node, as the pass's do).
    fn book_if_free(
        profile: &mut Availability,
        (running, nodes): (&RunningEnds, &[Option<Node>]),
        id: NodeId,
        amount: u64,
        (start, end): (u64, u64),
    ) {
        let Some(node) = nodes.get(id.index()).and_then(Option::as_ref) else {
            return;
        };
        if profile
            .free_over(running, (id, node), (start, end), false)
            .cpu_milli
            >= amount
        {
            profile.reserve(id, cpus(amount), start, end);
        }
    }

    /// The free cpus summed from the running jobs' kept sums and the reservations answer as a
    /// build node by node: random holdings (some released, some past their release time),
    /// bookings that fit, now and then a draining node that still runs jobs, and now and then a
    /// node gone; where every node takes work, from the free index's sum of their cpus.
    #[test]
    fn free_cpus_from_the_kept_sums_equal_a_build_node_by_node() {
        use crate::model::ids::JobId;
        use crate::model::node::NodeState;
        let mut next = numbers(29);
        for case in 0..200 {
            let mut nodes: Vec<Option<Node>> = (0..4).map(|_| Some(test_node(0))).collect();
            if next(4) == 0
                && let Some(node) = nodes[next(4) as usize].as_mut()
            {
                node.state = NodeState::Draining;
            }
            if next(2) == 0 {
                nodes[3] = None;
            }
            let mut running = RunningEnds::default();
            let mut held = [0u64; 3];
            let mut started = Vec::new();
            for job in 0..next(8) as u32 {
                let node = next(3) as usize;
                let amount = next(3) * 1_000 + 500;
                if held[node] + amount > 8_000 {
                    continue;
                }
                held[node] += amount;
                let charge = [(NodeId(node as u32), cpus(amount))];
                let release = next(40) * 10;
                running.add(JobId(job), charge, release);
                started.push((job, charge, release));
            }
            if let Some(&(job, charge, release)) = started.first().filter(|_| next(2) == 0) {
                running.remove(JobId(job), charge, release);
            }
            let mut profile = Availability {
                working_cpus: crate::placement::FreeIndex::build(&nodes, 0).working_cpus(),
                ..Availability::default()
            };
            for _ in 0..next(6) {
                let id = NodeId(next(3) as u32);
                let (amount, start) = (next(3) * 1_000, 1 + next(40) * 10);
                let end = start + 1 + next(30) * 10;
                book_if_free(&mut profile, (&running, &nodes), id, amount, (start, end));
            }
            let summed = profile.sum_free_cpus(&running, &nodes);
            let steps = |id| profile.usage_steps(&running, (id, false), 0);
            let built = FreeCpus::build(&nodes, 0, steps);
            for need in (0..=24).map(|c| c * 1_000) {
                for from in (0..50).map(|t| t * 10) {
                    for len in [1, 10, 45, 200] {
                        assert_eq!(
                            summed.earliest(need, from, len),
                            built.earliest(need, from, len),
                            "case {case}: {need} cpus from {from} for {len}"
                        );
                    }
                }
            }
        }
    }

    /// Taking back a reservation (compression moves one within a pass) frees its window, and
    /// the answers remembered while it held count no more: the memo's and the summed free
    /// cpus'.
    #[test]
    fn a_reservation_taken_back_frees_its_window_and_its_remembered_answers() {
        let nodes = vec![Some(test_node(0))];
        let node = test_node(0);
        let running = RunningEnds::default();
        let mut profile = Availability::default();
        profile.reserve(NodeId(0), cpus(6_000), 100, 200);
        profile.reserve(NodeId(0), cpus(1_000), 150, 300);
        let slot = profile.need_slot((4_000, 0, 0));
        let free =
            |p: &Availability, window| p.free_over(&running, (NodeId(0), &node), window, false);
        assert_eq!(free(&profile, (100, 200)).cpu_milli, 1_000);
        let usable = |p: &mut Availability| {
            p.earliest_usable_memo(&running, slot, NodeId(0), &node, (0, 150), MAX)
        };
        assert_eq!(usable(&mut profile), 200);
        assert_eq!(
            profile.earliest_cpu_fit(&running, &nodes, 4_000, 0, 150),
            200
        );
        profile.unreserve_all(&[(NodeId(0), cpus(6_000))], 100, 200);
        assert_eq!(free(&profile, (100, 200)).cpu_milli, 7_000);
        assert_eq!(free(&profile, (0, 100)).cpu_milli, 8_000);
        assert_eq!(usable(&mut profile), 0);
        assert_eq!(profile.earliest_cpu_fit(&running, &nodes, 4_000, 0, 150), 0);
        assert_eq!(
            profile.earliest_cpu_fit(&running, &nodes, 7_500, 0, 200),
            300
        );
    }

    /// The summed free cpus kept current booking by booking answer as a fresh build would.
    #[test]
    fn free_cpus_kept_current_equal_a_fresh_build() {
        let nodes = vec![Some(test_node(0)), Some(test_node(0)), Some(test_node(0))];
        let mut profile = Availability::default();
        let mut running = RunningEnds::default();
        running.add(crate::model::ids::JobId(0), [(NodeId(2), cpus(2_000))], 250);
        profile.reserve(NodeId(1), cpus(3_000), 100, 400);
        assert_eq!(profile.earliest_cpu_fit(&running, &nodes, 1_000, 0, 10), 0);
        let mut next = numbers(11);
        for round in 0..300 {
            let (id, amount, start) = (NodeId(next(3) as u32), next(3) * 500, next(100) * 10);
            let end = start + 1 + next(50) * 10;
            book_if_free(&mut profile, (&running, &nodes), id, amount, (start, end));
            let steps = |id| profile.usage_steps(&running, (id, false), 0);
            let fresh = FreeCpus::build(&nodes, 0, steps);
            let (need, from, len) = (next(24) * 1_000, next(100) * 10, 1 + next(30) * 10);
            let short = profile.short_of_cpus(&running, &nodes, need, from, len);
            assert_eq!(
                profile.earliest_cpu_fit(&running, &nodes, need, from, len),
                fresh.earliest(need, from, len),
                "round {round}"
            );
            assert_eq!(
                short,
                fresh.earliest(need, from, len) > from,
                "round {round}"
            );
            // Asked again, now with the answer remembered.
            let again = profile.short_of_cpus(&running, &nodes, need, from, len);
            assert_eq!(again, short, "round {round}");
        }
    }
}
