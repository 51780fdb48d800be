//! The incremental pass: a tick that only brings new jobs continues the last pass instead of
//! running a new one.
//!
//! A pass visits the pending jobs in order and leaves its state behind: the availability
//! profile with its reservations, the count of reservations made, what holds later jobs back,
//! the report on every job it visited and the position it reached. When the next tick only
//! adds jobs, and each of them ranks after every job already pending, a full pass would visit
//! the earlier jobs exactly as the last pass did and reach the same verdicts (the same
//! reasons, plans and estimated starts) before it reaches the new ones. So the pass is
//! resumed: the new jobs are appended to its order and the loop goes on from where it
//! stopped, with the last pass's state, at the new time.
//!
//! # Triggers: when the last pass is continued
//!
//! Every one of these must hold; otherwise the tick runs a full pass (which is also what the
//! property tests compare against, with every shortcut off).
//!
//! - **Nothing but submits.** No event other than submits and checkpoints was applied and no
//!   running job lost its resources ([`crate::state::ClusterState::releases`] is
//!   unchanged), and the tick had made no decision before its pass (no kill at a time limit,
//!   no cancel). Where the last pass made reservations, none of the submits asked for GPUs:
//!   a GPU job changes the shape mix, and with it the fragmentation scores that rank the
//!   nodes a reservation's busy-first rule ties and pick a fraction's device, so a full pass
//!   might pin differently ([`crate::state::ClusterState::mix_epoch`] is unchanged).
//! - **Nothing came due.** The time is before the last tick's wake-up (begin times, grace
//!   deadlines, maintenance ends, plug-in wake-ups, and with `policy.wait_for_ready` ready
//!   deadlines and back-off ends: a job whose back-off ended, or whose readiness changed, needs
//!   a full pass, and `ready` and `not_ready` events count as releases), before every running job's end by its
//!   time limit (a job past its limit counts as ending now, which moves with the time) and
//!   before every plan's start. Running usage is then the same at the new time as at the
//!   last pass's, and every reservation still lies ahead.
//! - **The same order.** Every job pending at the last pass has exactly the order key it had
//!   then (time-dependent keys such as age or decayed fair-share change, and then the pass
//!   runs in full), the admission plug-ins vote on it as they did, and every new job's key
//!   is greater than every earlier job's. No queue has admission fair sharing on: its tenants'
//!   usage decays with time and orders its jobs ([`crate::scheduler::pass::order::admission_fair_sharing`]).
//! - **Answers that only the state changes.** No preemption is configured and no earmark is
//!   held; no maintenance window is scheduled and no license is configured (their checks
//!   depend on the window a job would run in); every node filter and scorer answers from
//!   the task shape and the node alone ([`crate::policy::Dependence::ShapeAndNode`]); no
//!   plug-in panicked in the last pass or in this tick's ordering.
//! - **The default head.** No pass tracks a head ([`crate::scheduler::pass::head`]): no
//!   pinned head, no head-rule backfill mode, no backfill-rule plug-in (a continued pass would
//!   hand new jobs a head, a pin or an estimate it never checked).
//! - **Verdicts that stand.** No job started in the last pass after one was left waiting:
//!   a full pass would visit every waiting job with all of the last pass's starts already
//!   running, and a start after a job's turn can change its reason (`priority` becomes
//!   `resources`; a quota check reads what is free) and the resources a reservation pins.
//!   And every job the last pass tried to place now or planned, or whose reason it read from
//!   a placement on what is free, was one task group without a topology constraint (a
//!   greedy placement of several groups also reads the shape mix, which breaks ties among
//!   GPU nodes and changes with every GPU job submitted). Its placement fits a window iff its nodes' task fits add up
//!   ([`crate::scheduler::shortcuts::kept_plans`]), and each node's room over the later window is at most what it
//!   was (running usage is unchanged, reservations only grow into a later window), so a job
//!   that did not fit then does not fit now, and its reason (read on what is free now) is
//!   unchanged. Its earliest start is found exactly, so new candidate start times cannot move
//!   it; a heuristic placement of several groups might fit at one, so their passes run in
//!   full. Every reservation the last pass made was a plan kept from the pass before it
//!   ([`crate::scheduler::shortcuts::kept_plans`]: it still fits, nothing can start it earlier, and a fresh
//!   placement at its start picks exactly its resources): a full pass would keep it again.
//!   A plan searched afresh is not continued, since the next search, with that plan breaking
//!   ties, may pin differently; the pass after it keeps it, and the tick after that continues.
//!   And no job that fits waited for readiness (`block_admission`): a fit on what is free now
//!   around the reservations may fail at a later time, whose window reaches further into them.
//!
//! The last pass's state is not part of a snapshot, and a cloned scheduler starts with a
//! full pass: continuing is a shortcut, never a difference.

use std::collections::BTreeMap;

use crate::model::ids::JobId;
use crate::quota::QuotaTree;
use crate::scheduler::Scheduler;
use crate::scheduler::pass::Pass;
use crate::scheduler::pass::order::lazy::LazyOrder;
use crate::scheduler::pass::order::order_index::LastPassOrder;
use crate::scheduler::pass::order::slots::{PassList, VisitedOrder};
use crate::scheduler::pass::order::{OrderKey, PendingOrder};
use crate::scheduler::pass::report::PendingEntry;

/// What a finished pass leaves for the next tick to continue.
#[derive(Debug)]
pub(in crate::scheduler) struct Resumable {
    /// The pass's state at its end.
    pub(in crate::scheduler) pass: Box<Pass>,
    /// The pass's order, when it visited every job of it (a settled pass's is in its deferred
    /// report).
    pub(in crate::scheduler) visited: Option<VisitedOrder>,
    /// How many jobs were still pending when the pass ended.
    pub(in crate::scheduler) waiting: usize,
    /// The release epoch the pass ended at.
    pub(in crate::scheduler) epoch: u64,
    /// The shape-mix epoch the pass ended at.
    pub(in crate::scheduler) mix_epoch: u64,
}

/// The last pass's state, kept for the next tick only, and how many passes were continued.
#[derive(Debug, Default)]
pub(in crate::scheduler) struct LastPass {
    pub(in crate::scheduler) state: Option<Resumable>,
    pub(in crate::scheduler) continued: u64,
}

impl Clone for LastPass {
    /// A clone of the scheduler starts without the last pass's state (and runs a full pass,
    /// which decides the same).
    fn clone(&self) -> Self {
        LastPass {
            state: None,
            continued: self.continued,
        }
    }
}

/// A continued pass: its state, its order with the new jobs appended, and its report so far.
pub(in crate::scheduler) type Continued = (Box<Pass>, PassList, Vec<PendingEntry>);

/// The order and denials a full pass needs, given back when the last pass cannot continue.
pub(in crate::scheduler) type Refused = (PendingOrder, BTreeMap<JobId, String>);

impl Scheduler {
    /// Continues the last pass at `now` when every trigger of the module docs holds: `order`
    /// and `denied` are this tick's order and denials of every pending job, and `quiet` says
    /// that the tick made no decision before its pass and plans no what-if job.
    pub(in crate::scheduler) fn resume(
        &mut self,
        now: u64,
        quiet: bool,
        mut order: PendingOrder,
        denied: BTreeMap<JobId, String>,
    ) -> Result<Continued, Refused> {
        let Some(last) = self.last.resume.state.take() else {
            return Err((order, denied));
        };
        if !(quiet && self.nothing_came_due(now, last.epoch) && self.pins_stand(last.mix_epoch)) {
            return self.refuse(last.pass, (order, denied));
        }
        let (old, taken) = match (last.visited, self.last.deferred.take()) {
            (Some(old), _) => {
                let taken = old.len();
                (old, taken)
            }
            (None, Some(deferred)) => (deferred.visited, deferred.from),
            (None, None) => return self.refuse(last.pass, (order, denied)),
        };
        let Some(fresh) = self.new_jobs_last(&old, &mut order, last.waiting) else {
            return self.refuse(last.pass, (order, denied));
        };
        if !self.same_votes(&denied, &fresh) {
            return self.refuse(last.pass, (order, denied));
        }
        let list = match old {
            VisitedOrder::Listed(old) => {
                // The jobs the last pass started leave its order.
                let (old, taken) = self.without_started(old, taken);
                PassList::Listed(LazyOrder::resume(old, taken, fresh))
            }
            VisitedOrder::Indexed { len } => {
                // Every job the last pass knew is pending with its key, ahead of the jobs that
                // came: those it visited and left waiting lead the index, as in its order.
                let (Some(index), Some(visited)) = (
                    self.last.order_index.as_ref(),
                    last.waiting.checked_sub(len - taken),
                ) else {
                    return self.refuse(last.pass, (order, denied));
                };
                debug_assert!(
                    index
                        .keyed()
                        .iter()
                        .map(|&(_, id)| id)
                        .take(visited)
                        .eq(self.last.report.iter().map(|entry| entry.job)),
                    "the index leads with the jobs the last pass left waiting"
                );
                PassList::Indexed {
                    place: index.place_at(visited),
                    len: index.len(),
                }
            }
        };
        // The positions close up over the jobs the last pass started.
        let mut report = std::mem::take(&mut self.last.report);
        for (i, entry) in report.iter_mut().enumerate() {
            entry.position = i + 1;
        }
        let mut pass = last.pass;
        pass.continue_at(now, denied, std::mem::take(&mut self.last.details));
        self.last.resume.continued += 1;
        Ok((pass, list, report))
    }

    /// The jobs of `order` (this tick's) that the last pass did not know, in order, when every
    /// job it knew (`old`, of which `waiting` are still pending) has the same key and ranks
    /// before every new one; `None` otherwise. The order index answers from its changes
    /// ([`crate::scheduler::pass::order::order_index::OrderIndex::since_last_pass`]), since it
    /// served the last pass; a list keyed afresh is compared with the last pass's.
    fn new_jobs_last(
        &self,
        old: &VisitedOrder,
        order: &mut PendingOrder,
        waiting: usize,
    ) -> Option<Vec<(OrderKey, JobId)>> {
        let since = match order {
            PendingOrder::Listed { keyed, .. } => {
                let VisitedOrder::Listed(old) = old else {
                    return None;
                };
                return new_jobs_last(old, keyed, waiting);
            }
            PendingOrder::Indexed(since) => std::mem::replace(since, LastPassOrder::Reordered),
        };
        let fresh = match (since, old) {
            (LastPassOrder::NewJobsLast { kept, came }, _) => (kept == waiting).then_some(came),
            (LastPassOrder::Reordered, _)
            | (LastPassOrder::Unknown, VisitedOrder::Indexed { .. }) => None,
            (LastPassOrder::Unknown, VisitedOrder::Listed(old)) => {
                return new_jobs_last(old, &self.indexed_order(), waiting);
            }
        };
        if let VisitedOrder::Listed(old) = old {
            debug_assert_eq!(
                fresh,
                new_jobs_last_by_id(old, &self.indexed_order(), waiting),
                "the order index's changes tell what comparing the orders does"
            );
        }
        fresh
    }

    /// Does not continue the last `pass`: its profile's memory serves the next pass's.
    fn refuse(&mut self, pass: Box<Pass>, refused: Refused) -> Result<Continued, Refused> {
        self.last.spare(pass.profile);
        Err(refused)
    }

    /// `keyed` without the jobs of its first `taken` (those a pass visited) that are not
    /// pending any more, and how many of the first `taken` are left.
    fn without_started(
        &self,
        mut keyed: Vec<(OrderKey, JobId)>,
        taken: usize,
    ) -> (Vec<(OrderKey, JobId)>, usize) {
        let mut kept = 0;
        for i in 0..taken {
            let entry = keyed[i];
            if self
                .state
                .job(entry.1)
                .is_some_and(|job| job.running().is_none())
            {
                keyed[kept] = entry;
                kept += 1;
            }
        }
        keyed.drain(kept..taken);
        (keyed, kept)
    }

    /// Whether nothing but submits happened since the pass that ended at release epoch
    /// `epoch`, and nothing came due by `now` (module docs).
    fn nothing_came_due(&self, now: u64, epoch: u64) -> bool {
        self.shortcuts
            && epoch == self.state.releases.epoch()
            && self.last.next_wakeup_ms.is_none_or(|t| t > now)
            && !self.profile.any_silenced()
            && self.last.plans.values().all(|plan| plan.start_ms > now)
            && self.state.running_ends.released_by(now).next().is_none()
    }

    /// Whether the last pass's reservations, made at shape-mix epoch `mix_epoch`, would be
    /// placed as they were: it made none, or no GPU job was submitted since (module docs).
    fn pins_stand(&self, mix_epoch: u64) -> bool {
        self.last.plans.is_empty() || mix_epoch == self.state.mix_epoch
    }

    /// Whether the admission plug-ins deny every earlier job as they did in the last pass
    /// (`denied` covers every pending job; `fresh` are the new ones).
    fn same_votes(&self, denied: &BTreeMap<JobId, String>, fresh: &[(OrderKey, JobId)]) -> bool {
        let fresh_denied = fresh.iter().filter(|(_, id)| denied.contains_key(id));
        denied.len() == self.last.denied.len() + fresh_denied.count()
            && self
                .last
                .denied
                .iter()
                .all(|(id, message)| denied.get(id) == Some(message))
    }

    /// Whether a finished pass may be continued by the next tick: the triggers of the module
    /// docs that the pass itself decides.
    pub(in crate::scheduler) fn continuable(&self, pass: &Pass) -> bool {
        self.shortcuts
            && !self.tracks_head()
            && !self.compresses()
            && pass.verdicts_stand
            && !pass.blocking.heuristic_fit_read
            && pass.always_plan.is_none()
            && !self.state.config.policy.preemption.enabled
            && self.state.earmarks.is_empty()
            && self.state.maintenance.ends().next().is_none()
            && self.state.licenses.is_empty()
            && !self
                .state
                .quota
                .tree
                .as_ref()
                .is_some_and(QuotaTree::any_fair_sharing)
            && !self.state.admission_fair_sharing()
            && !self.profile.any_silenced()
            && (0..self.state.partitions.len()).all(|p| {
                self.profile
                    .partition(p)
                    .is_none_or(|hooks| hooks.shape_only)
            })
    }
}

/// The jobs of `keyed` (this tick's keys) that the last pass did not know, by key, when every
/// job it knew (`old`, of which `waiting` are still pending) has the same key and ranks before
/// every new one; `None` otherwise.
///
/// Ticks key the pending jobs in the same order, so the jobs still pending usually come in
/// `keyed` as in `old`, the new ones after them: one walk of both answers then
/// ([`old_jobs_first`]). Where it does not, the jobs are matched by id.
fn new_jobs_last(
    old: &[(OrderKey, JobId)],
    keyed: &[(OrderKey, JobId)],
    waiting: usize,
) -> Option<Vec<(OrderKey, JobId)>> {
    if let Some(fresh) = old_jobs_first(old, keyed, waiting) {
        debug_assert_eq!(
            Some(&fresh),
            new_jobs_last_by_id(old, keyed, waiting).as_ref(),
            "a walk in order finds what matching by id does"
        );
        return Some(fresh);
    }
    new_jobs_last_by_id(old, keyed, waiting)
}

/// [`new_jobs_last`] where `keyed` starts with every job of `old` still pending, in `old`'s
/// order and with its key, and holds only new jobs after them: `None` where it does not (or
/// where the new jobs do not rank after the old). Exact where it answers: the `waiting` jobs
/// matched are distinct jobs of `old` found in `keyed`, so they are all of `old` still
/// pending, and every job after them is one the last pass did not know.
fn old_jobs_first(
    old: &[(OrderKey, JobId)],
    keyed: &[(OrderKey, JobId)],
    waiting: usize,
) -> Option<Vec<(OrderKey, JobId)>> {
    let mut rest = old.iter();
    let mut last_known: Option<OrderKey> = None;
    let mut matched = 0;
    for &(key, id) in keyed {
        // The old jobs before this one left the queue, or this one is new.
        match rest.find(|(_, old_id)| *old_id == id) {
            Some(&(old_key, _)) if old_key == key => {
                matched += 1;
                last_known = last_known.max(Some(key));
            }
            Some(_) => return None,
            None => break,
        }
    }
    if matched != waiting {
        return None;
    }
    let fresh = &keyed[matched..];
    let after = |key: &OrderKey| last_known.is_none_or(|last| *key > last);
    fresh
        .iter()
        .all(|(key, _)| after(key))
        .then(|| fresh.to_vec())
}

/// [`new_jobs_last`] by matching the jobs by id, in any order.
pub(in crate::scheduler) fn new_jobs_last_by_id(
    old: &[(OrderKey, JobId)],
    keyed: &[(OrderKey, JobId)],
    waiting: usize,
) -> Option<Vec<(OrderKey, JobId)>> {
    let mut known: Vec<(JobId, OrderKey)> = old.iter().map(|&(key, id)| (id, key)).collect();
    known.sort_unstable_by_key(|&(id, _)| id);
    let mut fresh = Vec::new();
    let mut matched = 0;
    let mut last_known: Option<OrderKey> = None;
    for &(key, id) in keyed {
        match known.binary_search_by_key(&id, |&(known_id, _)| known_id) {
            Ok(i) if known[i].1 == key => {
                matched += 1;
                last_known = last_known.max(Some(key));
            }
            Ok(_) => return None,
            Err(_) => fresh.push((key, id)),
        }
    }
    let after = |key: &OrderKey| last_known.is_none_or(|last| *key > last);
    (matched == waiting && fresh.iter().all(|(key, _)| after(key))).then_some(fresh)
}

#[cfg(test)]
mod tests {
    use std::cmp::Reverse;

    use super::*;

    /// A key ranking by `rank` alone.
    fn key(rank: u64) -> OrderKey {
        (Reverse(0), Reverse(Default::default()), rank, 0)
    }

    /// Whichever way the jobs come (the old ones in their order or not, some gone, some with a
    /// new key, new ones after them or among them), the walk in order answers only where
    /// matching by id answers the same; and it answers wherever the jobs still pending come
    /// first in their order, with their keys, and the new ones after them rank after them.
    #[test]
    fn the_walk_in_order_answers_as_matching_by_id_where_it_answers() {
        let mut next = crate::backfill::tests::numbers(26);
        let (mut walked, mut both_some) = (0, 0);
        for round in 0..3_000 {
            let old: Vec<(OrderKey, JobId)> = (0..next(12))
                .map(|i| (key(i * 10), JobId(i as u32)))
                .collect();
            let mut keyed: Vec<(OrderKey, JobId)> =
                old.iter().copied().filter(|_| next(5) > 0).collect();
            let waiting = keyed.len();
            if next(6) == 0 && !keyed.is_empty() {
                let at = next(keyed.len() as u64) as usize;
                keyed[at].0 = key(next(200));
            }
            if next(6) == 0 && keyed.len() > 1 {
                let last = keyed.len() - 1;
                keyed.swap(0, last);
            }
            let last = old.len() as u64 * 10;
            for j in 0..next(4) {
                let rank = match next(5) {
                    0 => next(last + 1),
                    _ => last + 1 + next(50),
                };
                let at = match next(5) {
                    0 => next(keyed.len() as u64 + 1) as usize,
                    _ => keyed.len(),
                };
                keyed.insert(at, (key(rank), JobId(100 + j as u32)));
            }
            let by_id = new_jobs_last_by_id(&old, &keyed, waiting);
            let in_order = old_jobs_first(&old, &keyed, waiting);
            if let Some(fresh) = &in_order {
                walked += 1;
                assert_eq!(by_id.as_ref(), Some(fresh), "round {round}: {keyed:?}");
            }
            both_some += usize::from(by_id.is_some());
            assert_eq!(new_jobs_last(&old, &keyed, waiting), by_id, "round {round}");
            // The old jobs still pending first, in order, with their keys, the new ones after
            // and ranking after them: the walk answers.
            let first = keyed.iter().take_while(|(_, id)| id.0 < 100).count();
            let in_place = keyed[..first].iter().all(|entry| old.contains(entry))
                && keyed[..first].is_sorted_by_key(|(_, id)| *id)
                && keyed[first..].iter().all(|(_, id)| id.0 >= 100);
            if in_place && first == waiting && by_id.is_some() {
                assert!(in_order.is_some(), "round {round}: {keyed:?}");
            }
        }
        assert!(
            walked > 500 && both_some > walked,
            "{walked} walked of {both_some}"
        );
    }
}
