//! Preemption between the queues of a fair-sharing cohort tree (Kueue's fair-sharing
//! preemption; docs/protocol.md, "Fair sharing between queues").
//!
//! The candidates are the usual ones ([`crate::scheduler::pass::preempt`]): the engine's rules, then the
//! preemptor's queue by its `within_queue` policy, and jobs of the tree's other queues that
//! borrow, by its `reclaim_within_cohort` policy (`borrow_within_cohort`, partition tiers and
//! order-based preemption do not apply), then the profile's vetoes and victim order. With the
//! preemptor's demand charged to its queue, targets are then taken one at a time:
//!
//! 1. The target queue is found from the root down: at each cohort, the child with the highest
//!    share value among those that still have candidates and borrow (the preemptor's queue and
//!    the cohorts above it stay in while they have candidates); a cohort wins a tie with a
//!    queue, and of two queues with equal shares the one whose next candidate comes first in
//!    the victim order.
//! 2. A candidate of the preemptor's own queue is taken as it comes. So is any candidate while
//!    the preemptor's queue, with the preemptor, stays within its nominal quota on what the
//!    preemptor asks for (Kueue's `FairSharingPreemptWithinNominal`, on by default since
//!    v0.17).
//! 3. Otherwise the shares are compared where the two queues' paths meet: the preemptor's side
//!    (the child of their lowest common cohort above the preemptor, with the preemptor
//!    admitted) against the target's side. The first strategy is tried on the target's
//!    candidates in order: `less_than_or_equal_to_final_share` takes a candidate when the
//!    preemptor's side is no higher than the target's side without that candidate;
//!    `less_than_initial_share` when it is strictly below the target's side as it is. A taken
//!    candidate's usage is released, and step 1 runs again. A candidate that fails waits for
//!    the second strategy. When the preemptor's side is infinite (weight 0) and the target's
//!    is not, no candidate of that queue can pass and all wait.
//! 4. If the preemptor does not fit yet, the second strategy (`less_than_initial_share`) goes
//!    through the waiting candidates the same way, taking at most the first of each queue.
//!
//! A queue preempts for one job at a time: while one of its jobs waits for its victims to stop,
//! its other jobs do not preempt (Kueue considers only a queue's head, and a preempting job stays
//! its head until it is admitted). Share values are read as they will be once every preemption
//! under way has completed ([`crate::state::ClusterState::promised_usage`]).
//!
//! Each taken candidate is followed by a fit check (placement and quota, the preemptor
//! allowed to borrow); the first set that fits is made minimal by dropping, from the one
//! before last backwards, every victim not needed. No set: no preemption.

use crate::config::{PreemptionStrategy, WithinQueue};
use crate::model::ids::JobId;
use crate::placement::Assignment;
use crate::quota::{QueueId, QuotaTree, QuotaVec, Share};
use crate::scheduler::Scheduler;
use crate::scheduler::pass::Pass;
use crate::scheduler::pass::preempt::{Basis, Choice};
use crate::scheduler::pass::quota::PromisedQuota;

/// The search's state: the candidates left per queue, the pruned nodes, and the usage with the
/// preemptor charged and the targets released. Candidates are named by their place in the
/// victim order (an index into `candidates`).
struct Search<'a> {
    preemptor_queue: QueueId,
    /// The preemptor's queue and its cohorts, bottom-up.
    preemptor_path: Vec<u32>,
    /// The candidates with their bases, in the victim order.
    candidates: &'a [(JobId, Basis)],
    /// Candidates left, by queue, in the victim order.
    left: Left,
    /// Nodes that will yield no more targets in this round.
    pruned: Vec<bool>,
    /// Usage per node, with the preemptor's demand charged and every target's released.
    usage: Vec<QuotaVec>,
    /// The targets taken so far, in order.
    targets: Vec<(JobId, Basis)>,
    /// Candidates the first strategy turned down, for the second.
    retry: Vec<usize>,
    /// Whether the preemptor's queue, with the preemptor, stays within its nominal quota on
    /// what the preemptor asks for.
    within_nominal: bool,
}

/// Places in the victim order (indices into a search's candidates), grouped by queue, each
/// queue's in the order they were given, with a cursor per queue: what is left of each queue's.
#[derive(Debug, Default)]
struct Left {
    /// The places, queue after queue.
    places: Vec<usize>,
    /// By queue index: the range of `places` still left, `(next, end)`.
    ranges: Vec<(usize, usize)>,
}

impl Left {
    /// Groups `places` (each with its queue) by queue, keeping their order within a queue;
    /// `queues`: the number of queues.
    fn of(places: impl Iterator<Item = (QueueId, usize)>, queues: usize) -> Self {
        let tagged: Vec<(QueueId, usize)> = places.collect();
        let mut ranges = vec![(0, 0); queues];
        for (q, _) in &tagged {
            ranges[q.index()].1 += 1;
        }
        let mut start = 0;
        for range in &mut ranges {
            let count = range.1;
            *range = (start, start);
            start += count;
        }
        let mut grouped = vec![0; tagged.len()];
        for (q, place) in tagged {
            let range = &mut ranges[q.index()];
            grouped[range.1] = place;
            range.1 += 1;
        }
        Left {
            places: grouped,
            ranges,
        }
    }

    /// Queue `q`'s next place, if any is left.
    fn front(&self, q: QueueId) -> Option<usize> {
        let &(next, end) = self.ranges.get(q.index())?;
        (next < end).then(|| self.places[next])
    }

    /// Takes queue `q`'s next place, if any is left.
    fn pop_front(&mut self, q: QueueId) -> Option<usize> {
        let place = self.front(q)?;
        self.ranges[q.index()].0 += 1;
        Some(place)
    }

    /// Takes all of queue `q`'s places left.
    fn take_all(&mut self, q: QueueId) -> &[usize] {
        let Some(range) = self.ranges.get_mut(q.index()) else {
            return &[];
        };
        let (next, end) = *range;
        range.0 = end;
        &self.places[next..end]
    }
}

impl Search<'_> {
    fn has_candidates(&self, q: QueueId) -> bool {
        self.left.front(q).is_some()
    }
}

impl Scheduler {
    /// Whether pending job `id`'s queue has fair sharing on.
    pub(in crate::scheduler) fn fair_preemptor(&self, id: JobId) -> bool {
        match (self.state.job_queue(id), self.state.quota.tree.as_ref()) {
            (Some(q), Some(tree)) => tree.fair_sharing(q),
            _ => false,
        }
    }

    /// Whether another job of `id`'s queue waits for its victims to stop: then `id` does not
    /// preempt (Kueue considers only a queue's head, and a preempting job stays its head).
    pub(in crate::scheduler) fn queue_preempting(&self, id: JobId) -> bool {
        let q = self.state.job_queue(id);
        self.state
            .earmarks
            .iter()
            .any(|(p, e)| *p != id && !e.victims.is_empty() && self.state.job_queue(*p) == q)
    }

    /// Whether the search of [`Scheduler::fair_victims`] cannot find victims for `id`,
    /// whatever the candidates, so that they need not be built: `id`'s queue takes no victims
    /// of its own (`within_queue: never`), would borrow with `id`, and against every other
    /// borrowing queue of its tree its side's share with `id` admitted is already above the
    /// target's side (step 3 of the module docs). No target then passes either strategy: the
    /// usage stays as it is while none is taken, and a candidate's release only lowers its
    /// side's share. Cheap next to the candidates (one share per queue, no plug-in call), and
    /// the common case of a busy tree whose shares are even.
    ///
    /// `earmarks`: what the earmarks promise now ([`PromisedQuota::of`]).
    pub(in crate::scheduler) fn fair_search_hopeless(
        &self,
        earmarks: &PromisedQuota,
        id: JobId,
    ) -> bool {
        let (Some(q), Some(tree)) = (self.state.job_queue(id), self.state.quota.tree.as_ref())
        else {
            return false;
        };
        if self.state.config.queues[q.index()].preemption.within_queue != WithinQueue::Never {
            return false;
        }
        // With `id` admitted only the nodes of its queue's path change: their shares are
        // those `fair_demand` weighs it with (no copy of the usage), and every other node's
        // share is read from the usage as it is.
        let usage = earmarks.after_preemptions(tree);
        let (demand, admitted) = self.fair_demand(tree, usage, id, q);
        let share = |node: u32| {
            admitted
                .iter()
                .find(|(n, _)| *n == node)
                .map_or_else(|| tree.share_in(usage, node as usize), |(_, s)| *s)
        };
        if !share(q.0).borrows_on(&demand) {
            return false;
        }
        let own = tree.path_nodes(q);
        (0..tree.queue_count())
            .map(|i| QueueId(i as u32))
            .filter(|&v| v != q && tree.same_tree(q, v) && tree.is_borrowing(v))
            .all(|target| {
                let (preemptor_side, target_side) = sides(tree, own, target);
                share(preemptor_side).compare(&share(target_side)).is_gt()
            })
    }

    /// Victims for `id` by fair sharing (module docs), from `candidates` in the victim order.
    pub(in crate::scheduler) fn fair_victims(
        &mut self,
        id: JobId,
        candidates: &[(JobId, Basis)],
        pass: &mut Pass,
        end: u64,
    ) -> Option<Choice> {
        let q = self.state.job_queue(id)?;
        if candidates.is_empty() {
            return None;
        }
        let tree = self.state.quota.tree.as_ref()?;
        let mut usage = pass
            .promised
            .of(&self.state)
            .after_preemptions(tree)
            .to_vec();
        let (demand, _) = self.fair_demand(tree, &usage, id, q);
        tree.charge_in(&mut usage, q, &demand);
        let mut search = Search {
            preemptor_queue: q,
            preemptor_path: tree.path_nodes(q).to_vec(),
            candidates,
            left: Left::default(),
            pruned: Vec::new(),
            usage,
            targets: Vec::new(),
            retry: Vec::new(),
            within_nominal: false,
        };
        search.left = Left::of(
            candidates
                .iter()
                .enumerate()
                .filter_map(|(i, &(v, _))| Some((self.state.job_queue(v)?, i))),
            tree.queue_count(),
        );
        let strategies = self
            .state
            .config
            .policy
            .fair_sharing
            .preemption_strategies
            .clone();
        search.within_nominal = !tree.share_in(&search.usage, q.index()).borrows_on(&demand);
        let first = strategies.first().copied()?;
        let mut plan = self.first_strategy(id, tree, &mut search, first, pass, end);
        if plan.is_none() && strategies.len() > 1 {
            plan = self.second_strategy(id, tree, &mut search, pass, end);
        }
        Some(self.without_unneeded(id, search.targets, plan?, pass, end))
    }

    /// Steps 1–3 of the module docs with `strategy`; the plan once `id` fits.
    fn first_strategy(
        &self,
        id: JobId,
        tree: &QuotaTree,
        search: &mut Search,
        strategy: PreemptionStrategy,
        pass: &mut Pass,
        end: u64,
    ) -> Option<Vec<Assignment>> {
        let root = tree.root_of(search.preemptor_queue);
        search.pruned = vec![false; tree.node_count()];
        let mut progress = Progress::of(tree, search);
        while !search.pruned[root as usize] {
            progress.turn();
            let Some(target) = next_target(tree, search, root) else {
                continue;
            };
            let unconditional = target == search.preemptor_queue || search.within_nominal;
            if unconditional {
                let Some(i) = search.left.pop_front(target) else {
                    continue;
                };
                if let Some(plan) = self.take(id, search, i, pass, end) {
                    return Some(plan);
                }
                continue;
            }
            let (preemptor_side, target_side) = sides(tree, &search.preemptor_path, target);
            let before = tree.share_in(&search.usage, target_side as usize);
            let after_admission = tree.share_in(&search.usage, preemptor_side as usize);
            if after_admission.value().is_infinite() && !before.value().is_infinite() {
                search.retry.extend_from_slice(search.left.take_all(target));
                continue;
            }
            while let Some(i) = search.left.pop_front(target) {
                let passed = match strategy {
                    PreemptionStrategy::LessThanInitialShare => {
                        after_admission.compare(&before).is_lt()
                    }
                    PreemptionStrategy::LessThanOrEqualToFinalShare => {
                        let v = search.candidates[i].0;
                        let without = self.share_without(tree, search, v, target_side);
                        after_admission.compare(&without).is_le()
                    }
                };
                if !passed {
                    search.retry.push(i);
                    continue;
                }
                if let Some(plan) = self.take(id, search, i, pass, end) {
                    return Some(plan);
                }
                break;
            }
        }
        None
    }

    /// Step 4 of the module docs: `less_than_initial_share` over the candidates the first
    /// strategy turned down, at most one per queue.
    fn second_strategy(
        &self,
        id: JobId,
        tree: &QuotaTree,
        search: &mut Search,
        pass: &mut Pass,
        end: u64,
    ) -> Option<Vec<Assignment>> {
        let root = tree.root_of(search.preemptor_queue);
        let mut retry = std::mem::take(&mut search.retry);
        retry.sort_unstable();
        search.left = Left::of(
            retry
                .into_iter()
                .filter_map(|i| Some((self.state.job_queue(search.candidates[i].0)?, i))),
            tree.queue_count(),
        );
        search.pruned = vec![false; tree.node_count()];
        let mut progress = Progress::of(tree, search);
        while !search.pruned[root as usize] {
            progress.turn();
            let Some(target) = next_target(tree, search, root) else {
                continue;
            };
            let (preemptor_side, target_side) = sides(tree, &search.preemptor_path, target);
            let before = tree.share_in(&search.usage, target_side as usize);
            let after_admission = tree.share_in(&search.usage, preemptor_side as usize);
            let first = search.left.pop_front(target);
            if let Some(i) = first.filter(|_| after_admission.compare(&before).is_lt())
                && let Some(plan) = self.take(id, search, i, pass, end)
            {
                return Some(plan);
            }
            search.pruned[target.index()] = true;
        }
        None
    }

    /// Takes the candidate at place `i` as a target: releases its usage in the search and
    /// checks whether `id` fits once all targets have stopped.
    fn take(
        &self,
        id: JobId,
        search: &mut Search,
        i: usize,
        pass: &mut Pass,
        end: u64,
    ) -> Option<Vec<Assignment>> {
        let (v, basis) = search.candidates[i];
        if let (Some(tree), Some((vq, charged))) = (
            self.state.quota.tree.as_ref(),
            self.state.quota.charged.get(&v),
        ) {
            tree.release_in(&mut search.usage, *vq, charged);
        }
        search.targets.push((v, basis));
        self.fits_without(id, &search.targets, pass, end)
    }

    /// The share of node `side` (on candidate `v`'s path) with `v`'s usage released.
    fn share_without(&self, tree: &QuotaTree, search: &Search, v: JobId, side: u32) -> Share {
        let Some((vq, charged)) = self.state.quota.charged.get(&v) else {
            return tree.share_in(&search.usage, side as usize);
        };
        let mut shares = Vec::new();
        tree.path_shares(&search.usage, *vq, charged, false, &mut shares);
        shares
            .iter()
            .find(|(n, _)| *n == side)
            .map_or_else(|| tree.share_in(&search.usage, side as usize), |(_, s)| *s)
    }
}

/// The nodes where the preemptor's and `target`'s paths meet: the child of their lowest common
/// cohort on the preemptor's side, and on the target's side (Kueue's almost-LCAs).
fn sides(tree: &QuotaTree, own: &[u32], target: QueueId) -> (u32, u32) {
    let target_path = tree.path_nodes(target);
    let lca = target_path
        .iter()
        .find(|n| own.contains(n))
        .copied()
        .unwrap_or(tree.root_of(target));
    let below = |path: &[u32]| {
        path.iter()
            .position(|n| *n == lca)
            .and_then(|i| i.checked_sub(1))
            .map_or(path[0], |i| path[i])
    };
    (below(own), below(target_path))
}

/// A strategy's loop makes progress at every turn: it takes a candidate from a queue's cursor
/// or prunes a node of the tree (`next_target` names only queues with candidates left). So it
/// turns at most once per candidate and node, and more turns are a search that would never
/// end; debug builds say so instead of looping.
struct Progress {
    #[cfg(debug_assertions)]
    turns_left: usize,
}

impl Progress {
    fn of(tree: &QuotaTree, search: &Search) -> Self {
        #[cfg(not(debug_assertions))]
        let _ = (tree, search);
        Progress {
            #[cfg(debug_assertions)]
            turns_left: search.candidates.len() + tree.node_count() + 1,
        }
    }

    fn turn(&mut self) {
        #[cfg(debug_assertions)]
        {
            self.turns_left = self
                .turns_left
                .checked_sub(1)
                .expect("a fair-sharing search made no progress: a queue named as a target gave no candidate");
        }
    }
}

/// Kueue's target ordering: from `node` down, the child with the highest share among those not
/// pruned, pruning as it goes; `None` when this call only pruned.
fn next_target(tree: &QuotaTree, search: &mut Search, node: u32) -> Option<QueueId> {
    let n = node as usize;
    let queues = tree.queue_count();
    let mut best_queue: Option<(QueueId, Share)> = None;
    let mut best_cohort: Option<(u32, Share)> = None;
    for &child in &tree.children[n] {
        let c = child as usize;
        if search.pruned[c] {
            continue;
        }
        let share = tree.share_in(&search.usage, c);
        if c < queues {
            let q = QueueId(child);
            if (!share.is_borrowing() && q != search.preemptor_queue) || !search.has_candidates(q) {
                search.pruned[c] = true;
                continue;
            }
            let better = match &best_queue {
                None => true,
                Some((b, best)) => match share.compare(best) {
                    std::cmp::Ordering::Greater => true,
                    std::cmp::Ordering::Equal => first_rank(search, q) < first_rank(search, *b),
                    std::cmp::Ordering::Less => false,
                },
            };
            if better {
                best_queue = Some((q, share));
            }
        } else {
            if !share.is_borrowing() && !search.preemptor_path.contains(&child) {
                search.pruned[c] = true;
                continue;
            }
            if best_cohort
                .as_ref()
                .is_none_or(|(_, best)| share.compare(best).is_ge())
            {
                best_cohort = Some((child, share));
            }
        }
    }
    match (best_cohort, best_queue) {
        (None, None) => {
            search.pruned[n] = true;
            None
        }
        (Some((cohort, cs)), Some((_, qs))) if cs.compare(&qs).is_ge() => {
            next_target(tree, search, cohort)
        }
        (Some((cohort, _)), None) => next_target(tree, search, cohort),
        (_, Some((q, _))) => Some(q),
    }
}

/// The victim-order place of queue `q`'s next candidate.
fn first_rank(search: &Search, q: QueueId) -> usize {
    search.left.front(q).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::pass::quota::PromisedQuota;
    use crate::{ClusterConfig, Event, JobSpec};

    /// Queues `a` and `b` (2 cpus nominal each) in cohort `mid`, and `p`, `c` and `d` (2
    /// each) beside `mid` in the fair-sharing root. `mid` is listed first: the nodes are the
    /// queues `a`, `b`, `p`, `c`, `d` (0 to 4), then `mid` (5) and `root` (6), and the root's
    /// children are `p`, `c`, `d`, then `mid`.
    fn nested_tree() -> QuotaTree {
        let cluster: ClusterConfig = serde_json::from_str(
            r#"{"nodes": [{"name": "n1", "cpus": 10}],
                "cohorts": [{"name": "mid", "parent": "root"},
                            {"name": "root", "fair_sharing": {"enabled": true}}],
                "queues": [{"name": "a", "cohort": "mid", "quota": {"cpu": {"nominal": 2}}},
                           {"name": "b", "cohort": "mid", "quota": {"cpu": {"nominal": 2}}},
                           {"name": "p", "cohort": "root", "quota": {"cpu": {"nominal": 2}}},
                           {"name": "c", "cohort": "root", "quota": {"cpu": {"nominal": 2}}},
                           {"name": "d", "cohort": "root", "quota": {"cpu": {"nominal": 2}}}]}"#,
        )
        .unwrap();
        let s = Scheduler::new(cluster).unwrap();
        let tree = s.state.quota.tree.clone().unwrap();
        assert_eq!(tree.queue_count(), 5);
        assert_eq!(tree.path_nodes(q(&tree, "a")), [0, 5, 6]);
        assert_eq!(tree.children[6], [2, 3, 4, 5]);
        tree
    }

    fn q(tree: &QuotaTree, name: &str) -> QueueId {
        tree.queue_id(name).unwrap()
    }

    /// The tree's usage with `cpus` charged to each named queue.
    fn usage(tree: &QuotaTree, cpus: &[(&str, u64)]) -> Vec<QuotaVec> {
        let mut usage = tree.usage.clone();
        for &(name, n) in cpus {
            tree.charge_in(&mut usage, q(tree, name), &tree.demand(n * 1000, 0, &[]));
        }
        usage
    }

    /// The targets [`next_target`] names from the root for a preemptor of queue `preemptor`,
    /// over `usage` (left as it is) and the candidates `left` (places in the victim order, by
    /// queue), each target's next candidate taken as it is named; calls that only prune name
    /// none. At most 20 calls: a search that never prunes its root would not end.
    fn targets(
        tree: &QuotaTree,
        usage: Vec<QuotaVec>,
        preemptor: &str,
        left: &[(&str, &[usize])],
    ) -> Vec<String> {
        let preemptor = q(tree, preemptor);
        let mut search = Search {
            preemptor_queue: preemptor,
            preemptor_path: tree.path_nodes(preemptor).to_vec(),
            candidates: &[],
            left: Left::of(
                left.iter().flat_map(|&(name, places)| {
                    places.iter().map(move |&place| (q(tree, name), place))
                }),
                tree.queue_count(),
            ),
            pruned: vec![false; tree.node_count()],
            usage,
            targets: Vec::new(),
            retry: Vec::new(),
            within_nominal: false,
        };
        let root = tree.root_of(preemptor);
        let mut named = Vec::new();
        for _ in 0..20 {
            if search.pruned[root as usize] {
                break;
            }
            if let Some(target) = next_target(tree, &mut search, root) {
                named.push(tree.queue_name(target).to_string());
                search.left.pop_front(target);
            }
        }
        named
    }

    #[test]
    fn left_groups_the_places_by_queue_in_their_order_and_takes_them_from_the_front() {
        // Four queues: 0 and 1 with places interleaved, 2 with one, 3 with none.
        let given = [(1, 10), (0, 11), (1, 12), (2, 13), (0, 14), (1, 15)];
        let mut left = Left::of(given.into_iter().map(|(q, p)| (QueueId(q), p)), 4);
        let front = |left: &Left| (0..5).map(|q| left.front(QueueId(q))).collect::<Vec<_>>();
        assert_eq!(front(&left), [Some(11), Some(10), Some(13), None, None]);
        // Each queue's places come in the order given, then none (not the next queue's).
        assert_eq!(left.pop_front(QueueId(0)), Some(11));
        assert_eq!(left.front(QueueId(0)), Some(14));
        assert_eq!(left.pop_front(QueueId(0)), Some(14));
        assert_eq!(left.pop_front(QueueId(0)), None);
        assert_eq!(left.front(QueueId(0)), None);
        assert_eq!(left.pop_front(QueueId(1)), Some(10));
        assert_eq!(front(&left), [None, Some(12), Some(13), None, None]);
        // `take_all` takes what is left of one queue, leaving the others alone.
        assert_eq!(left.take_all(QueueId(1)), [12, 15]);
        assert_eq!(left.take_all(QueueId(1)), [] as [usize; 0]);
        assert_eq!(left.pop_front(QueueId(1)), None);
        assert_eq!(left.take_all(QueueId(3)), [] as [usize; 0]);
        assert_eq!(left.take_all(QueueId(7)), [] as [usize; 0]);
        assert_eq!(front(&left), [None, None, Some(13), None, None]);
        assert_eq!(left.take_all(QueueId(2)), [13]);
        assert_eq!(front(&left), [None; 5]);
        assert_eq!(left.pop_front(QueueId(2)), None);
    }

    #[test]
    fn the_sides_are_the_children_of_the_lowest_common_cohort() {
        let tree = nested_tree();
        let own = |name| tree.path_nodes(q(&tree, name));
        // `a` and `b` meet in `mid`; `a` and `c` at the root, where `a`'s side is `mid`.
        assert_eq!(sides(&tree, own("a"), q(&tree, "b")), (0, 1));
        assert_eq!(sides(&tree, own("a"), q(&tree, "c")), (5, 3));
        assert_eq!(sides(&tree, own("c"), q(&tree, "a")), (3, 5));
        assert_eq!(sides(&tree, own("p"), q(&tree, "d")), (2, 4));
    }

    #[test]
    fn targets_go_down_from_the_root_by_share_to_borrowing_queues_with_candidates() {
        let tree = nested_tree();
        // `mid` borrows 4 cpus (all `a`'s), more than `c` and `d` (1 each, an equal share);
        // `b` and the preemptor's queue `p` borrow nothing.
        let by = usage(&tree, &[("a", 6), ("b", 2), ("c", 3), ("d", 3)]);
        let share = |name| tree.share_in(&by, q(&tree, name).index());
        assert!(tree.share_in(&by, 5).compare(&share("c")).is_gt());
        assert!(share("c").is_borrowing() && share("c").compare(&share("d")).is_eq());
        assert!(!share("b").is_borrowing() && !share("p").is_borrowing());
        let left: [(&str, &[usize]); 5] = [
            ("a", &[0]),
            ("b", &[1]),
            ("c", &[2, 5]),
            ("d", &[3]),
            ("p", &[4]),
        ];
        // `mid` before the queues beside it, and in it `a` (`b` lends); then `c` and `d` in
        // turn, by whose next candidate comes first in the victim order; then the preemptor's
        // own queue, which does not borrow; `b`'s candidate is never a target.
        assert_eq!(
            targets(&tree, by.clone(), "p", &left),
            ["a", "c", "d", "c", "p"]
        );
        // Without candidates in the preemptor's queue, its jobs are no target either.
        assert_eq!(targets(&tree, by, "p", &left[..4]), ["a", "c", "d", "c"]);
    }

    #[test]
    fn a_queue_that_borrows_more_than_a_cohort_beside_it_comes_first() {
        let tree = nested_tree();
        // `c` borrows 3 cpus, `mid` 1 (`a`'s); `d` and `p` borrow nothing.
        let by = usage(&tree, &[("a", 3), ("b", 2), ("c", 5), ("d", 2)]);
        assert!(
            tree.share_in(&by, q(&tree, "c").index())
                .compare(&tree.share_in(&by, 5))
                .is_gt()
        );
        assert!(tree.share_in(&by, 5).is_borrowing());
        let left: [(&str, &[usize]); 4] = [("a", &[0]), ("c", &[1]), ("d", &[2]), ("p", &[3])];
        assert_eq!(targets(&tree, by, "p", &left), ["c", "a", "p"]);
    }

    #[test]
    fn a_cohort_that_does_not_borrow_is_passed_over_unless_the_preemptor_is_in_it() {
        let tree = nested_tree();
        // `a` borrows 1 cpu from `b` within `mid`, which borrows nothing; `c` borrows 1.
        let by = usage(&tree, &[("a", 3), ("b", 1), ("c", 3)]);
        assert!(tree.share_in(&by, q(&tree, "a").index()).is_borrowing());
        assert!(!tree.share_in(&by, 5).is_borrowing());
        let left: [(&str, &[usize]); 4] = [("a", &[0]), ("b", &[1]), ("c", &[2]), ("p", &[3])];
        assert_eq!(targets(&tree, by.clone(), "p", &left), ["c", "p"]);
        // From `b`, in `mid`: `mid` stays in, and `a` borrows from `b`.
        assert_eq!(targets(&tree, by, "b", &left), ["c", "a", "b"]);
    }

    /// A 4-cpu node; queues `qa` (`within_queue` as given) and `qb`, 2 cpus nominal each, in a
    /// fair-sharing root. `qa` runs 3 one-cpu jobs (borrowing 1), `qb` one; then `qa4` and
    /// `qb2`, one cpu each, wait.
    fn borrowing_queue_waits(within_queue: &str) -> Scheduler {
        let cluster: ClusterConfig = serde_json::from_str(&format!(
            r#"{{"nodes": [{{"name": "n1", "cpus": 4}}],
                "cohorts": [{{"name": "root", "fair_sharing": {{"enabled": true}}}}],
                "queues": [{{"name": "qa", "cohort": "root", "quota": {{"cpu": {{"nominal": 2}}}},
                             "preemption": {{"within_queue": "{within_queue}"}}}},
                           {{"name": "qb", "cohort": "root", "quota": {{"cpu": {{"nominal": 2}}}}}}]}}"#
        ))
        .unwrap();
        let mut s = Scheduler::new(cluster).unwrap();
        let ticks = [
            (0, vec![("qa1", "qa"), ("qa2", "qa"), ("qa3", "qa")]),
            (1, vec![("qb1", "qb")]),
            (2, vec![("qa4", "qa"), ("qb2", "qb")]),
        ];
        for (at, jobs) in ticks {
            let events = jobs
                .into_iter()
                .map(|(name, queue)| {
                    let mut job = JobSpec::new(name, 60_000, 1);
                    job.queue = Some(queue.into());
                    Event::Submit { job }
                })
                .collect();
            s.tick(at, events).unwrap();
        }
        assert_eq!(s.state.running.len(), 4);
        assert_eq!(s.state.pending.len(), 2);
        s
    }

    fn hopeless(s: &Scheduler, name: &str) -> bool {
        let mut promised = PromisedQuota::default();
        let id = s.state.job_id(name).unwrap();
        s.fair_search_hopeless(promised.of(&s.state), id)
    }

    #[test]
    fn a_search_is_hopeless_where_the_preemptor_would_borrow_more_than_every_borrower() {
        let s = borrowing_queue_waits("never");
        // `qa4` would make `qa` borrow 2 cpus, and no other queue borrows: no target.
        assert!(hopeless(&s, "qa4"));
        // `qb2` would not make `qb` borrow: within nominal, any borrower's job may do.
        assert!(!hopeless(&s, "qb2"));
        // Where `qa` takes victims of its own, the search is not ruled out.
        let s = borrowing_queue_waits("lower_priority");
        assert!(!hopeless(&s, "qa4"));
    }

    /// A 9-cpu node of 3000 MiB; the fair-sharing root `all` holds queues `a` (2 cpus
    /// nominal), `b` (3) and `c` (4), 1000 MiB each, each reclaiming from any borrower; the
    /// preemption strategies are `strategies`. At 0 one job a queue's `running` entry
    /// (queue, cpus, MiB) starts, named by its queue and number (`a1`, `a2`, ...); at 1
    /// `preemptor` (queue, cpus, no memory) is submitted. The scheduler, and the victims
    /// decided at 1, sorted, each for `preemptor`.
    fn preempting(
        strategies: &[PreemptionStrategy],
        running: &[(&str, u64, u64)],
        preemptor: (&str, u64),
    ) -> (Scheduler, Vec<String>) {
        weighted_preempting(&[], strategies, running, preemptor)
    }

    /// [`preempting`] with the queues `zero_weight` of fair-sharing weight 0.
    fn weighted_preempting(
        zero_weight: &[&str],
        strategies: &[PreemptionStrategy],
        running: &[(&str, u64, u64)],
        preemptor: (&str, u64),
    ) -> (Scheduler, Vec<String>) {
        let mut cluster: ClusterConfig = serde_json::from_str(
            r#"{"nodes": [{"name": "n1", "cpus": 9, "memory_mib": 3000}],
                "cohorts": [{"name": "all", "fair_sharing": {"enabled": true}}],
                "queues": [{"name": "a", "cohort": "all",
                            "quota": {"cpu": {"nominal": 2}, "memory_mib": {"nominal": 1000}},
                            "preemption": {"reclaim_within_cohort": "any"}},
                           {"name": "b", "cohort": "all",
                            "quota": {"cpu": {"nominal": 3}, "memory_mib": {"nominal": 1000}},
                            "preemption": {"reclaim_within_cohort": "any"}},
                           {"name": "c", "cohort": "all",
                            "quota": {"cpu": {"nominal": 4}, "memory_mib": {"nominal": 1000}},
                            "preemption": {"reclaim_within_cohort": "any"}}],
                "policy": {"preemption": {"enabled": true}}}"#,
        )
        .unwrap();
        cluster.policy.fair_sharing.preemption_strategies = strategies.to_vec();
        for queue in &mut cluster.queues {
            if zero_weight.contains(&queue.name.as_str()) {
                queue.fair_sharing = Some(crate::config::NodeFairSharing {
                    weight: 0.0,
                    enabled: None,
                });
            }
        }
        let mut s = Scheduler::new(cluster).unwrap();
        let job = |name: String, queue: &str, cpus: u64, mib: u64| {
            let mut job = JobSpec::new(name, 3_600_000, 1);
            job.queue = Some(queue.into());
            job.groups[0].cpus = crate::Milli::from_units(cpus);
            job.groups[0].memory_mib = mib;
            Event::Submit { job }
        };
        let mut numbers = std::collections::BTreeMap::new();
        let first = running
            .iter()
            .map(|&(queue, cpus, mib)| {
                let n: &mut u32 = numbers.entry(queue).or_default();
                *n += 1;
                job(format!("{queue}{n}"), queue, cpus, mib)
            })
            .collect();
        let out = s.tick(0, first).unwrap();
        assert_eq!(out.decisions.len(), running.len(), "all start at 0");
        let (queue, cpus) = preemptor;
        let name = format!("{queue}-p");
        let out = s.tick(1, vec![job(name.clone(), queue, cpus, 0)]).unwrap();
        let mut victims: Vec<String> = out
            .decisions
            .iter()
            .map(|d| match d {
                crate::Decision::Preempt { job, for_job, .. } => {
                    assert_eq!(*for_job, name);
                    job.clone()
                }
                other => panic!("only preemptions at 1, not {other:?}"),
            })
            .collect();
        victims.sort_unstable();
        (s, victims)
    }

    /// The queues of `victims` (their names less the number).
    fn queues_of(victims: &[String]) -> Vec<&str> {
        victims
            .iter()
            .map(|v| v.trim_end_matches(|c: char| c.is_ascii_digit()))
            .collect()
    }

    const BOTH: [PreemptionStrategy; 2] = [
        PreemptionStrategy::LessThanOrEqualToFinalShare,
        PreemptionStrategy::LessThanInitialShare,
    ];
    const FINAL: [PreemptionStrategy; 1] = [PreemptionStrategy::LessThanOrEqualToFinalShare];
    const INITIAL: [PreemptionStrategy; 1] = [PreemptionStrategy::LessThanInitialShare];

    /// One-cpu jobs, `n` of queue `queue`.
    fn ones(queue: &str, n: usize) -> Vec<(&str, u64, u64)> {
        vec![(queue, 1, 0); n]
    }

    #[test]
    fn a_preemptor_within_its_nominal_on_what_it_asks_takes_a_borrower_s_job_whatever_the_shares() {
        // `b` borrows 1000 MiB (a share of 333) and `a` 2 cpus (222): `b`'s share is above
        // `a`'s, but `b-p` asks only for a cpu, within `b`'s nominal.
        let mut running = ones("a", 4);
        running.push(("b", 1, 2000));
        running.extend(ones("c", 4));
        for strategies in [&BOTH[..], &FINAL, &INITIAL] {
            let (_, victims) = preempting(strategies, &running, ("b", 1));
            assert_eq!(queues_of(&victims), ["a"], "{strategies:?}");
        }
    }

    #[test]
    fn a_borrowing_preemptor_takes_the_jobs_that_pass_the_first_strategy_one_after_another() {
        // `a` borrows 5 cpus (556); `b-p` (2 cpus) makes `b` borrow 1 (111): `a`'s share,
        // each job of `a` released, stays above it, so two of `a`'s jobs are taken.
        let mut running = ones("a", 7);
        running.extend(ones("b", 2));
        for strategies in [&BOTH[..], &FINAL, &INITIAL] {
            let (_, victims) = preempting(strategies, &running, ("b", 2));
            assert_eq!(queues_of(&victims), ["a", "a"], "{strategies:?}");
        }
    }

    #[test]
    fn a_job_below_the_final_share_passes_the_first_strategy_alone() {
        // `a` borrows 3 cpus (333), `b-p` makes `b` borrow 1 (111): without one of its jobs
        // `a` has 222, so `b-p` passes `less_than_or_equal_to_final_share`.
        let mut running = ones("a", 5);
        running.extend(ones("b", 3));
        running.extend(ones("c", 1));
        for strategies in [&BOTH[..], &FINAL, &INITIAL] {
            let (_, victims) = preempting(strategies, &running, ("b", 1));
            assert_eq!(queues_of(&victims), ["a"], "{strategies:?}");
        }
    }

    #[test]
    fn a_job_that_fails_the_final_share_but_not_the_initial_one_is_taken_by_the_second_strategy() {
        // `a` borrows 2 cpus (222) with two 2-cpu jobs; `b-p` makes `b` borrow 1 (111):
        // below `a`'s 222 now, above its 0 without either job.
        let mut running = vec![("a", 2, 0), ("a", 2, 0)];
        running.extend(ones("b", 3));
        running.extend(ones("c", 2));
        let (_, victims) = preempting(&BOTH, &running, ("b", 1));
        assert_eq!(queues_of(&victims), ["a"]);
        let (_, victims) = preempting(&INITIAL, &running, ("b", 1));
        assert_eq!(queues_of(&victims), ["a"]);
        // Without the second strategy, no victim.
        let (s, victims) = preempting(&FINAL, &running, ("b", 1));
        assert!(victims.is_empty());
        assert!(s.state.pending.contains(&s.state.job_id("b-p").unwrap()));
    }

    #[test]
    fn a_job_that_passes_neither_strategy_is_not_taken() {
        // `a` borrows 2 cpus (222), `b` 1 (111); `b-p` would make `b` borrow 2 (222): not
        // below `a`'s 222, and above its 111 without one of its jobs.
        let mut running = ones("a", 4);
        running.extend(ones("b", 4));
        running.extend(ones("c", 1));
        for strategies in [&BOTH[..], &FINAL, &INITIAL] {
            let (s, victims) = preempting(strategies, &running, ("b", 1));
            assert!(victims.is_empty(), "{strategies:?}");
            assert!(s.state.pending.contains(&s.state.job_id("b-p").unwrap()));
            assert!(s.state.earmarks.is_empty());
        }
    }

    #[test]
    fn a_queue_preempts_for_one_job_at_a_time() {
        let mut running = ones("a", 4);
        running.push(("b", 1, 2000));
        running.extend(ones("c", 4));
        let (mut s, victims) = preempting(&BOTH, &running, ("b", 1));
        assert_eq!(queues_of(&victims), ["a"]);
        // Its victim stops within its grace period: `b-p` waits for it, and another job of
        // `b` does not preempt meanwhile; one of `c` may.
        let job = |name: &str, queue: &str| {
            let mut job = JobSpec::new(name, 3_600_000, 1);
            job.queue = Some(queue.into());
            Event::Submit { job }
        };
        let out = s.tick(2, vec![job("b-q", "b"), job("c-q", "c")]).unwrap();
        let [b_q, b_p, c_q] = ["b-q", "b-p", "c-q"].map(|name| s.state.job_id(name).unwrap());
        assert!(s.queue_preempting(b_q));
        assert!(!s.queue_preempting(b_p));
        assert!(!s.queue_preempting(c_q));
        assert!(
            out.decisions.iter().all(|d| match d {
                crate::Decision::Preempt { for_job, .. } => for_job == "c-q",
                _ => false,
            }),
            "{:?}",
            out.decisions
        );
        // An earmark with no victims left does not count.
        let earmark = s.state.earmarks.get_mut(&b_p).unwrap();
        earmark.victims.clear();
        assert!(!s.queue_preempting(b_q));
    }

    #[test]
    fn a_preemptor_of_weight_0_that_borrows_passes_only_a_target_of_weight_0_that_borrows_more() {
        // `a` borrows 4 cpus and `b-p` makes `b` borrow 1: both shares are infinite where
        // the weight is 0, and two infinite shares compare by what they borrow, so `b-p`
        // passes `less_than_or_equal_to_final_share` (1 cpu against `a`'s 3 without a job).
        let mut running = ones("a", 6);
        running.extend(ones("b", 3));
        for strategies in [&BOTH[..], &FINAL, &INITIAL] {
            let (_, victims) = weighted_preempting(&["a", "b"], strategies, &running, ("b", 1));
            assert_eq!(queues_of(&victims), ["a"], "{strategies:?}");
        }
        // Where only `b`'s weight is 0, its infinite share passes no finite one.
        for strategies in [&BOTH[..], &FINAL, &INITIAL] {
            let (_, victims) = weighted_preempting(&["b"], strategies, &running, ("b", 1));
            assert!(victims.is_empty(), "{strategies:?}");
        }
    }

    #[test]
    fn a_fair_sharing_search_alike_to_one_that_found_no_room_in_the_pass_is_skipped() {
        // As in `a_job_that_passes_neither_strategy_is_not_taken`: `b-p` finds no victim.
        let mut running = ones("a", 4);
        running.extend(ones("b", 4));
        running.extend(ones("c", 1));
        let (mut s, victims) = preempting(&BOTH, &running, ("b", 1));
        assert!(victims.is_empty());
        let skips = |s: &Scheduler| s.last.preempt_taken.fair_no_room_skips;
        assert_eq!(skips(&s), 0);
        // `b-q`, of `b-p`'s queue, priority and shape, is known to find none after it.
        let mut job = JobSpec::new("b-q", 3_600_000, 1);
        job.queue = Some("b".into());
        job.groups[0].cpus = crate::Milli::from_units(1);
        job.groups[0].memory_mib = 0;
        let out = s.tick(2, vec![Event::Submit { job }]).unwrap();
        assert!(out.decisions.is_empty(), "{:?}", out.decisions);
        assert_eq!(skips(&s), 1);
    }
}
