//! Step 6 of a pass: pick preemption victims as Kueue does — ordered candidates, added greedily
//! until the preemptor fits (quota and placement), then a reverse pass dropping every victim
//! not needed — and earmark what they free for the preemptor. The engine owns this algorithm;
//! the profile's victim plug-ins decide which candidates are vetoed and their order.
//!
//! Who may be a victim of pending job `P` — never a non-preemptible job, one already told to
//! stop, one that started in this tick (it was ahead of `P` in the order), nor, with
//! `policy.preemption.anti_thrash` (the default), a job that `P` was itself preempted by
//! earlier, or that had preempted `P`'s preemptor when it did, and so on (no two jobs preempt
//! each other in turn, and no ring of preemptions repeats), nor, when `P`'s queue has fair
//! sharing on, a job that a job of `P`'s queue preempted by fair sharing before (no job is
//! preempted twice by the same queue, which bounds preemptions between queues); then a basis:
//!
//! - with `policy.preemption.partition_tiers`, any running job of a lower partition
//!   `priority_tier`, in any queue or none (Slurm's `preempt/partition_prio`);
//! - in `P`'s own queue, as its `within_queue` policy says;
//! - in another queue of `P`'s cohort tree that uses more than its nominal quota, as the
//!   `reclaim_within_cohort` policy says, while `P` stays within its own nominal quota; or, with
//!   `borrow_within_cohort` (only beside a reclaim policy: the configuration refuses it alone,
//!   as Kueue does), jobs of lower priority (and at most its threshold) even while `P` borrows;
//! - with `policy.preemption.order_based`, any running job whose order (partition tier, then
//!   the profile's order keys) is strictly lower than `P`'s.
//!
//! The profile's victim vetoes then remove candidates (the default profile's `tier_guard`: a
//! job of a higher partition tier), and its victim order sorts the rest (the default: lower
//! tier first, then jobs of queues above their nominal quota, then lower priority, then the most
//! recently started; the later job id breaks ties). A first search uses every candidate; when
//! it fails, a second drops the reclaim-only ones so that `P` may borrow (Kueue's last attempt).
//!
//! # Worked example
//!
//! Two teams each have 16 guaranteed GPUs and may borrow 8 more. Team A borrows 8 of team
//! B's idle GPUs; when team B needs them back, the borrowed job is told to checkpoint and stop
//! within 60 s, and team B's job starts the moment it has.
//!
//! ```
//! use gangway::{ClusterConfig, Decision, Event, Scheduler};
//! use serde_json::json;
//!
//! let team = |name: &str| json!({"name": name, "cohort": "lab",
//!     "quota": {"gpu": {"nominal": 16, "borrowing_limit": 8}},
//!     "preemption": {"reclaim_within_cohort": "any"}});
//! let cluster: ClusterConfig = serde_json::from_value(json!({
//!     "nodes": (1..=4).map(|i| json!({"name": format!("n{i}"), "cpus": 64,
//!         "memory_mib": 512000, "gpus": {"model": "h100", "count": 8}})).collect::<Vec<_>>(),
//!     "cohorts": [{"name": "lab"}],
//!     "queues": [team("team-a"), team("team-b")],
//!     "policy": {"preemption": {"enabled": true}}})).unwrap();
//! // A job of `nodes` whole 8-GPU nodes.
//! let job = |id: &str, queue: &str, nodes: u32| -> Event { serde_json::from_value(json!({
//!     "type": "submit", "job": {"id": id, "queue": queue, "time_limit_ms": 86_400_000,
//!     "grace_ms": 60_000, "groups": [{"count": nodes, "gpus": 8}]}})).unwrap() };
//! let mut s = Scheduler::new(cluster).unwrap();
//!
//! // Team A fills its 16 GPUs and borrows 8 of team B's idle ones.
//! let out = s.tick(0, vec![job("a1", "team-a", 1), job("a2", "team-a", 1),
//!                          job("a3", "team-a", 1)]).unwrap();
//! assert_eq!(out.decisions.len(), 3); // all three start
//!
//! // Team B wants 16: 8 are idle, the other 8 are reclaimed from the borrower a3.
//! let out = s.tick(1_000, vec![job("b1", "team-b", 2)]).unwrap();
//! assert!(matches!(&out.decisions[..], [Decision::Preempt { job, for_job, grace_ms: 60_000 }]
//!     if job == "a3" && for_job == "b1"));
//! assert_eq!(out.next_wakeup_ms, Some(61_000)); // the grace deadline
//!
//! // a3 checkpoints and stops after 20 s: b1 starts in that very tick.
//! let stopped: Event = serde_json::from_value(json!({"type": "stopped", "job": "a3"})).unwrap();
//! let out = s.tick(21_000, vec![stopped]).unwrap();
//! assert!(matches!(&out.decisions[..], [Decision::Start { job, .. }] if job == "b1"));
//! ```

mod candidate_memo;
mod counts;
pub(in crate::scheduler) mod fair_sharing;
mod no_room;
mod pool;
mod running_keys;
mod victim_order;
mod victim_ranks;

/// Plug-ins the preemption modules' unit tests share.
#[cfg(test)]
mod test_plugins {
    use crate::policy::{PassContext, Plugin};
    use crate::state::JobView;

    /// An order plug-in that is not a built-in, so its keys are not known to be fixed for a
    /// pass: the higher base priority first.
    #[derive(Clone, Debug)]
    pub(super) struct ByPriority;

    #[gangway::policy::plugin]
    impl Plugin for ByPriority {
        fn name(&self) -> &str {
            "by_priority"
        }

        fn order_key(&self, job: JobView<'_>, _: &PassContext<'_>) -> i64 {
            i64::from(job.spec().priority)
        }
    }

    /// Shortest first, lower priority first and a minimum run time of 10 s: built-in
    /// plug-ins only.
    pub(super) fn built_ins() -> crate::policy::Profile {
        use crate::policy::builtin::{LowerPriorityFirst, MinRunTime, ShortestFirst};
        crate::policy::Profile::builder()
            .plugin(ShortestFirst)
            .plugin(LowerPriorityFirst)
            .plugin(MinRunTime::new(10_000))
            .build()
            .unwrap()
    }

    /// A victim order plug-in that is not a built-in: the lower job id first.
    #[derive(Clone, Debug)]
    pub(super) struct OldestFirst;

    #[gangway::policy::plugin]
    impl Plugin for OldestFirst {
        fn name(&self) -> &str {
            "oldest_first"
        }

        fn victim_key(&self, _: JobView<'_>, victim: JobView<'_>, _: &PassContext<'_>) -> i64 {
            i64::from(victim.id().0)
        }
    }
}

pub(in crate::scheduler) use candidate_memo::CandidateMemo;
pub(in crate::scheduler) use no_room::NoRoom;
pub(in crate::scheduler) use pool::RunningByQueue;
pub(in crate::scheduler) use running_keys::RunningKeys;
pub(in crate::scheduler) use victim_order::VictimOrders;
pub(in crate::scheduler) use victim_ranks::VictimRanks;

use counts::TaskCounts;
use no_room::Failure;
use victim_ranks::{PartitionRanks, RankOrder};

use std::cmp::Reverse;
use std::collections::BTreeMap;

use crate::config::{ReclaimWithinCohort, WithinQueue};
use crate::decision::Decision;
use crate::model::ids::{JobId, NodeId};
use crate::model::resources::NodeAmounts;
use crate::placement::Assignment;
use crate::placement::count::counts_decide;
use crate::policy::{PartitionHooks, VictimKeys};
use crate::scheduler::Scheduler;
use crate::scheduler::pass::Pass;
use crate::scheduler::pass::node_gate::JobGate;
use crate::scheduler::pass::place::Purpose;
use crate::scheduler::shortcuts::fit_memo::Attempt;
use crate::state::{Job, JobView};

/// Why a running job may be a victim: it decides what the preemptor's quota must satisfy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::scheduler) enum Basis {
    /// A lower partition tier, the preemptor's own queue, or borrowing within the cohort: the
    /// preemptor may borrow.
    Free,
    /// Reclaiming from another queue's borrower: the preemptor must stay within its nominal.
    Reclaim,
    /// Fair sharing: a borrowing queue of the preemptor's tree, taken only as the preemption
    /// strategies allow ([`crate::scheduler::pass::preempt::fair_sharing`]); the preemptor may borrow.
    Fair,
}

/// A search's candidate victims, best first, each with its basis; and the earliest end after
/// now of a veto that removed one.
pub(in crate::scheduler) type VictimCandidates = (Vec<(JobId, Basis)>, Option<u64>);

/// Running jobs a veto with an end after now removed from a search's candidates, with that end.
pub(in crate::scheduler) type Vetoed = Vec<(JobId, u64)>;

/// A candidate victim's place in the order: the profile's victim keys (lower first), then the
/// later job id.
type VictimRank = (VictimKeys, Reverse<JobId>);

/// Where a victim search reads the running jobs.
#[derive(Clone)]
pub(in crate::scheduler) enum Walk {
    /// Every running job, each one's order computed where order-based preemption asks it.
    Every,
    /// The running jobs that can have a basis under the queue policies alone, in job order
    /// ([`Scheduler::victim_pool`]).
    Pool(Vec<JobId>),
    /// Order-based preemption with the running jobs' keys kept for the pass
    /// ([`RunningKeys`]): the jobs the preemptor outranks, in job order; `alone` where they
    /// are the only ones that can have a basis (no quota tree: the queue policies give none,
    /// and a lower partition tier is a lower order), else every running job is read.
    Outranked { jobs: Vec<JobId>, alone: bool },
}

/// How often this scheduler's preemption searches took their shortcuts, for the reference
/// family's check that it reaches them.
#[derive(Clone, Copy, Debug, Default)]
pub(in crate::scheduler) struct PreemptTaken {
    /// Searches that read only the running jobs their preemptor outranks ([`Walk::Outranked`]),
    /// or those of the victim order kept for the pass ([`VictimOrders`]).
    pub(in crate::scheduler) outranked_walks: u64,
    /// Searches for the first placeable prefix by bisection
    /// ([`Scheduler::first_placeable`]).
    pub(in crate::scheduler) bisections: u64,
    /// Order-based searches skipped as known to find no room ([`NoRoom`]).
    pub(in crate::scheduler) no_room_skips: u64,
    /// Fair-sharing searches skipped as equal to one that found no room ([`NoRoom`]).
    pub(in crate::scheduler) fair_no_room_skips: u64,
    /// Victim orders an earlier pass made that a later one brought up to date instead of
    /// making afresh ([`VictimOrders`]).
    pub(in crate::scheduler) victim_orders_carried: u64,
    /// Fill-backs the task counts answered ([`Scheduler::without_unneeded`]).
    pub(in crate::scheduler) counted_fill_backs: u64,
    /// Searches that took the candidates an earlier search of the pass built
    /// ([`CandidateMemo`]).
    pub(in crate::scheduler) candidates_reused: u64,
}

/// Victims chosen for a preemptor and where it will run once they have stopped.
#[derive(Debug, PartialEq)]
pub(in crate::scheduler) struct Choice {
    pub(in crate::scheduler) victims: Vec<JobId>,
    pub(in crate::scheduler) plan: Vec<Assignment>,
}

impl Scheduler {
    /// Tries to make room for pending job `id` by preempting; on success the `preempt`
    /// decisions are pushed, the victims marked and the earmark recorded.
    pub(in crate::scheduler) fn try_preempt(
        &mut self,
        id: JobId,
        pass: &mut Pass,
        end: u64,
        decisions: &mut Vec<Decision>,
    ) -> bool {
        if !self.state.config.policy.preemption.enabled {
            return false;
        }
        // A fair-sharing queue preempts for one job at a time: checked before the candidates,
        // whose scan of every running job is the search's main cost when many jobs wait. So is
        // a search that no target can pass, known from the shares alone (a shortcut: the
        // reference pass, without shortcuts, checks that it changes no decision).
        let fair = self.fair_preemptor(id);
        if fair && self.queue_preempting(id) {
            return false;
        }
        let no_room = self.no_room_failure(id, end, fair);
        if let Some((failure, _)) = &no_room
            && pass
                .no_room
                .known_to_fail(&self.last.figures, self.state_changes(), failure)
        {
            match failure {
                Failure::Ranked { .. } => self.last.preempt_taken.no_room_skips += 1,
                Failure::Fair { .. } => self.last.preempt_taken.fair_no_room_skips += 1,
            }
            return false;
        }
        // Known also without the shortcut, so that a hopeless search asks for no retry at a
        // veto's end in the reference pass either (no victim would do then).
        let hopeless = fair && self.fair_search_hopeless(pass.promised.of(&self.state), id);
        if hopeless && self.shortcuts {
            if let Some((failure, true)) = no_room {
                pass.no_room.record(failure);
            }
            return false;
        }
        let (candidates, veto_ends) = match self.kept_victims(id, fair, &mut pass.victim_orders) {
            Some(kept) => {
                let taken = &mut self.last.preempt_taken;
                taken.outranked_walks += 1;
                taken.victim_orders_carried += pass.victim_orders.take_carried();
                kept
            }
            None => self.pooled_or_walked(id, fair, pass),
        };
        let choice = self.choose_victims(id, candidates, fair, pass, end);
        let Some(choice) = choice else {
            // A veto that ends lets the preemptor try again then.
            if !hopeless {
                self.last.veto_ends_ms = self.last.veto_ends_ms.into_iter().chain(veto_ends).min();
            }
            if let Some((failure, true)) = no_room {
                pass.no_room.record(failure);
            }
            return false;
        };
        self.preempt(id, choice, decisions);
        // The victims now release by their grace deadlines.
        if let Some(profile) = pass.profile.as_mut() {
            profile.forget_free_cpus();
        }
        true
    }

    /// The candidates of a search for `id` that no victim order kept for the pass answers:
    /// kept from an earlier search of the pass where one of a preemptor alike still holds
    /// ([`CandidateMemo`]), else read from the victim pool, or else from the running jobs.
    fn pooled_or_walked(&mut self, id: JobId, fair: bool, pass: &mut Pass) -> VictimCandidates {
        let key = self.candidate_key(id);

        if let Some(key) = key
            && let Some(kept) = self.kept_candidates(id, key, &mut pass.candidates)
        {
            self.last.preempt_taken.candidates_reused += 1;
            debug_assert_eq!(
                kept,
                self.victim_candidates(id, Walk::Every),
                "the candidates kept for the pass are those of a full walk"
            );
            return kept;
        }
        let running = pass
            .running_by_queue
            .get_or_insert_with(|| RunningByQueue::of(&self.state));
        let walk = match self.victim_pool(id, running) {
            Some(pool) => Walk::Pool(pool),
            None => self.outranked_walk(id, fair, &mut pass.running_keys),
        };
        if matches!(walk, Walk::Outranked { alone: true, .. }) {
            self.last.preempt_taken.outranked_walks += 1;
        }
        let ranks = self
            .state
            .job_view(id)
            .and_then(|preemptor| self.victim_ranks(preemptor, &mut pass.victim_ranks));
        let (candidates, vetoed) = self.candidates_and_vetoed(id, walk, ranks);
        let veto_ends = vetoed.iter().map(|&(_, end)| end).min();
        if let Some(key) = key
            && self.keeps_its_candidates(id)
        {
            self.keep_candidates(key, &candidates, vetoed, &mut pass.candidates);
        }
        (candidates, veto_ends)
    }

    /// The victims for `id` among `candidates`: those a fair-sharing queue may take, or the
    /// fewest that make room (the borrowing ones alone when reclaiming is not enough).
    fn choose_victims(
        &mut self,
        id: JobId,
        candidates: Vec<(JobId, Basis)>,
        fair: bool,
        pass: &mut Pass,
        end: u64,
    ) -> Option<Choice> {
        if fair {
            return self.fair_victims(id, &candidates, pass, end);
        }
        let mut choice = self.minimal_victims(id, &candidates, pass, end);
        if choice.is_none() && candidates.iter().any(|(_, b)| *b == Basis::Reclaim) {
            let borrowing: Vec<(JobId, Basis)> = candidates
                .into_iter()
                .filter(|(_, b)| *b == Basis::Free)
                .collect();
            choice = self.minimal_victims(id, &borrowing, pass, end);
        }
        choice
    }

    /// Greedily adds candidates until `id` fits, then walks the chosen set backwards dropping
    /// every victim not needed.
    fn minimal_victims(
        &mut self,
        id: JobId,
        candidates: &[(JobId, Basis)],
        pass: &mut Pass,
        end: u64,
    ) -> Option<Choice> {
        // Shorter prefixes than `first` cannot be placed: the greedy search starts at `first`,
        // placed as `placed` where that search placed it.
        let (first, mut placed) = match self.shortcuts && candidates.len() > 1 {
            true => self.first_placeable(id, candidates, pass, end)?,
            false => (1, None),
        };
        let mut chosen: Vec<(JobId, Basis)> = candidates[..first - 1].to_vec();
        let mut plan = None;
        for candidate in &candidates[first - 1..] {
            chosen.push(*candidate);
            plan = match placed.take() {
                Some(placed) => self.quota_allows(id, &chosen, placed, pass),
                None => self.fits_without(id, &chosen, pass, end),
            };
            if plan.is_some() {
                break;
            }
        }
        Some(self.without_unneeded(id, chosen, plan?, pass, end))
    }

    /// Walks `chosen` (with which `id` fits on `plan`) backwards from the one before last,
    /// dropping every victim `id` still fits without (Kueue's fill-back).
    pub(in crate::scheduler) fn without_unneeded(
        &mut self,
        id: JobId,
        chosen: Vec<(JobId, Basis)>,
        plan: Vec<Assignment>,
        pass: &mut Pass,
        end: u64,
    ) -> Choice {
        if let Some(kept) = self.counted_fill_back(id, &chosen, pass, end) {
            let choice = match kept.len() < chosen.len() {
                // The last victim dropped left the ones kept: the plan is theirs.
                true => self.fits_without(id, &kept, pass, end).map(|plan| Choice {
                    victims: kept.iter().map(|(v, _)| *v).collect(),
                    plan,
                }),
                false => Some(Choice {
                    victims: kept.iter().map(|(v, _)| *v).collect(),
                    plan: plan.clone(),
                }),
            };
            debug_assert!(choice.is_some(), "the counts decide the placement");
            if let Some(choice) = choice {
                self.last.preempt_taken.counted_fill_backs += 1;
                debug_assert_eq!(
                    choice,
                    self.placed_fill_back(id, chosen, plan, pass, end),
                    "the counted fill-back drops the victims the placed one drops"
                );
                return choice;
            }
        }
        self.placed_fill_back(id, chosen, plan, pass, end)
    }

    /// The fill-back of [`Scheduler::without_unneeded`] answered by the task counts, where they
    /// decide the placement ([`counts_decide`]) and no quota tree can refuse it: the
    /// victims kept, without a placement. A shortcut (`None` in the reference pass).
    fn counted_fill_back(
        &self,
        id: JobId,
        chosen: &[(JobId, Basis)],
        pass: &mut Pass,
        end: u64,
    ) -> Option<Vec<(JobId, Basis)>> {
        if !self.shortcuts || self.state.quota.tree.is_some() {
            return None;
        }
        let gate = JobGate::of(&self.profile, self.last.figures.context(&self.state), id);
        let gang = self.state.gang_request(self.state.job(id)?);
        if !gate.as_ref().is_none_or(JobGate::leaves_fit_alone) || !counts_decide(&gang) {
            return None;
        }
        let held = pass.holds.except(&self.state, id);
        let nothing = BTreeMap::new();
        let view = self.now_view(pass.profile.as_ref(), (pass.now, end), &held, &nothing);
        let mut counts =
            TaskCounts::new(&self.state, &view, &gang).with_stopped(chosen.iter().map(|(v, _)| *v));
        let mut kept = chosen.to_vec();
        for i in (0..kept.len().saturating_sub(1)).rev() {
            if counts.fits_without(kept[i].0) {
                kept.remove(i);
            }
        }
        Some(kept)
    }

    /// The fill-back of [`Scheduler::without_unneeded`], a placement for each victim tried.
    fn placed_fill_back(
        &mut self,
        id: JobId,
        mut chosen: Vec<(JobId, Basis)>,
        mut plan: Vec<Assignment>,
        pass: &mut Pass,
        end: u64,
    ) -> Choice {
        for i in (0..chosen.len().saturating_sub(1)).rev() {
            let dropped = chosen.remove(i);
            match self.fits_without(id, &chosen, pass, end) {
                Some(smaller) => plan = smaller,
                None => chosen.insert(i, dropped),
            }
        }
        Choice {
            victims: chosen.into_iter().map(|(v, _)| v).collect(),
            plan,
        }
    }

    /// Running jobs `id` may preempt and on what basis, best victims first by the profile's
    /// victim order (the later job id breaks ties). The engine's rules come first: never a
    /// non-preemptible job, one already told to stop, one started in this tick, nor (with
    /// `anti_thrash`) one that preempted `id`; then a basis (a lower partition tier, the queue
    /// policies, or order-based preemption); then the profile's vetoes. `walk`: the running
    /// jobs to read ([`Walk`]). Also returns the earliest end after now of a veto that removed
    /// a candidate.
    pub(in crate::scheduler) fn victim_candidates(
        &self,
        id: JobId,
        walk: Walk,
    ) -> VictimCandidates {
        let (candidates, vetoed) = self.candidates_and_vetoed(id, walk, None);
        (candidates, vetoed.into_iter().map(|(_, end)| end).min())
    }

    /// The candidates of [`Scheduler::victim_candidates`], and the jobs a veto with an end
    /// after now removed, with that end; ordered by `ranks` where the pass made them for the
    /// preemptor's partition ([`VictimRanks`]), else by the plug-ins' answers about each.
    fn candidates_and_vetoed(
        &self,
        id: JobId,
        walk: Walk,
        ranks: Option<&PartitionRanks>,
    ) -> (Vec<(JobId, Basis)>, Vetoed) {
        // Debug builds order the candidates by the plug-ins too, where a second walk reads
        // the same order keys (an order plug-in whose keys move within a pass would not).
        #[cfg(debug_assertions)]
        let asked = ranks
            .filter(|_| {
                !self.state.config.policy.preemption.order_based
                    || self.profile.order_keys_fixed_in_pass()
            })
            .map(|_| self.candidates_and_vetoed(id, walk.clone(), None));
        let Some(preemptor) = self.state.job_view(id) else {
            return (Vec::new(), Vec::new());
        };
        let job = preemptor.record();
        let settings = &self.state.config.policy.preemption;
        let tier = |partition: crate::model::ids::PartitionId| {
            self.state
                .partitions
                .get(partition.index())
                .map_or(0, |p| p.priority_tier)
        };
        let own_tier = tier(job.partition);
        let context = self.last.figures.context(&self.state);
        let no_hooks = PartitionHooks::default();
        let hooks_of = |partition: crate::model::ids::PartitionId| {
            self.profile
                .partition(partition.index())
                .unwrap_or(&no_hooks)
        };
        let own_hooks = hooks_of(job.partition);
        // Fair sharing decides between the queues of the tree; tiers and order do not apply.
        let fair = self.fair_preemptor(id);
        let own_key = settings
            .order_based
            .then(|| self.pass_key(preemptor, &context));
        let mut vetoed: Vetoed = Vec::new();
        // The jobs read, where not every running job; the outranked ones, where kept; whether
        // every job read is outranked.
        let (listed, outranked, all_outranked) = match walk {
            Walk::Every => (None, None, false),
            Walk::Pool(pool) => (Some(pool), None, false),
            Walk::Outranked { jobs, alone: true } => (Some(jobs), None, true),
            Walk::Outranked { jobs, alone: false } => (None, Some(jobs), false),
        };
        let read = listed.as_ref().map_or(self.state.running.len(), Vec::len);
        let (by_keys, by_rank) = match ranks {
            Some(_) => (0, read),
            None => (read, 0),
        };
        let mut candidates: Vec<(VictimRank, Basis)> = Vec::with_capacity(by_keys);
        let mut ranked: Vec<(RankOrder, JobId, Basis)> = Vec::with_capacity(by_rank);
        let running: Box<dyn Iterator<Item = JobId> + '_> = match &listed {
            Some(jobs) => Box::new(jobs.iter().copied()),
            None => Box::new(self.state.running.iter().copied()),
        };
        for v in running {
            let Some(victim) = self.state.job_view(v) else {
                continue;
            };
            if self.never_victim(job, victim, fair) {
                continue;
            }
            let record = victim.record();
            let outranked = || match &outranked {
                _ if all_outranked => true,
                Some(jobs) => jobs.binary_search(&v).is_ok(),
                None => own_key.is_some_and(|(tier, keys, ..)| {
                    let (victim_tier, victim_keys, ..) = self.pass_key(victim, &context);
                    (tier, keys) < (victim_tier, victim_keys)
                }),
            };
            let basis = if fair {
                self.queue_basis(id, v)
            } else if settings.partition_tiers && tier(record.partition) < own_tier {
                Some(Basis::Free)
            } else {
                self.queue_basis(id, v)
                    .or_else(|| outranked().then_some(Basis::Free))
            };
            let Some(basis) = basis else {
                continue;
            };
            if let Some(ranks) = ranks {
                // Only a job that started in this pass has no rank, and the engine's rules
                // above keep it from being a victim.
                let Some(rank) = ranks.of(v) else {
                    continue;
                };
                match rank.vetoed {
                    Some(end) => vetoed.extend(end.map(|end| (v, end))),
                    None => {
                        let borrowing = ranks.borrowing_slot().map_or(0, |slot| {
                            self.profile
                                .victim_key_at(own_hooks, slot, preemptor, victim, &context)
                        });
                        ranked.push((PartitionRanks::order(rank, borrowing), v, basis));
                    }
                }
                continue;
            }
            let hooks = [own_hooks, hooks_of(record.partition)];
            if let Some(veto) = self.profile.veto(hooks, preemptor, victim, &context) {
                if let Some(end) = veto.until_ms().filter(|&t| t > self.state.now_ms) {
                    vetoed.push((v, end));
                }
                continue;
            }
            let keys = self
                .profile
                .victim_keys(own_hooks, preemptor, victim, &context);
            candidates.push(((keys, Reverse(v)), basis));
        }
        let candidates: Vec<(JobId, Basis)> = if ranks.is_some() {
            // The rank orders are unique (the places are): the order is that of the keys.
            ranked.sort_unstable_by_key(|&(order, ..)| order);
            ranked.into_iter().map(|(_, v, basis)| (v, basis)).collect()
        } else {
            // Positions sorted by rank rather than the 80-byte entries moved about (the ranks
            // are unique, so the order is the same).
            let mut order: Vec<usize> = (0..candidates.len()).collect();
            order.sort_unstable_by(|&a, &b| candidates[a].0.cmp(&candidates[b].0));
            order
                .into_iter()
                .map(|i| {
                    let ((_, Reverse(v)), basis) = candidates[i];
                    (v, basis)
                })
                .collect()
        };
        #[cfg(debug_assertions)]
        if let Some(asked) = asked {
            debug_assert_eq!(
                (&candidates, &vetoed),
                (&asked.0, &asked.1),
                "the candidates ordered by the pass's ranks are those the plug-ins order"
            );
        }
        (candidates, vetoed)
    }

    /// Whether the engine's rules keep `victim` from being a victim of the pending job `job`
    /// (of a fair-sharing queue: `fair`): it is not running, not preemptible, already told to
    /// stop, started in this tick, or, with `anti_thrash`, preempted `job` before, or was
    /// preempted by fair sharing for `job`'s queue before.
    fn never_victim(&self, job: &Job, victim: JobView<'_>, fair: bool) -> bool {
        self.never_victim_in_queue(job, victim, fair) || self.victim_preempted_it(job, victim)
    }

    /// The part of [`Scheduler::never_victim`] that is the same for every pending job of
    /// `job`'s queue: all but `job`'s own preemptors.
    pub(in crate::scheduler) fn never_victim_in_queue(
        &self,
        job: &Job,
        victim: JobView<'_>,
        fair: bool,
    ) -> bool {
        let Some(run) = victim.running() else {
            return true;
        };
        let anti_thrash = self.state.config.policy.preemption.anti_thrash;
        !victim.spec().preemptible
            || run.preemption.is_some()
            || run.start_ms == self.state.now_ms
            || (fair
                && anti_thrash
                && job
                    .spec
                    .queue
                    .as_ref()
                    .is_some_and(|q| victim.record().preempted_by_fair_queue(q)))
    }

    /// Whether, with `anti_thrash`, `victim` preempted `job` before (the part of
    /// [`Scheduler::never_victim`] that is `job`'s own).
    pub(in crate::scheduler) fn victim_preempted_it(&self, job: &Job, victim: JobView<'_>) -> bool {
        self.state.config.policy.preemption.anti_thrash
            && job.preempted_by.contains(&victim.record().arrival)
    }

    /// The walk of an order-based search for `id` where the running jobs' keys are kept for
    /// the pass ([`Walk::Outranked`]); [`Walk::Every`] otherwise.
    fn outranked_walk(&self, id: JobId, fair: bool, kept: &mut RunningKeys) -> Walk {
        if !self.state.config.policy.preemption.order_based || fair {
            return Walk::Every;
        }
        let (Some(preemptor), Some(keys)) = (self.state.job_view(id), self.running_keys(kept))
        else {
            return Walk::Every;
        };
        let context = self.last.figures.context(&self.state);
        let (tier, own, ..) = self.pass_key(preemptor, &context);
        Walk::Outranked {
            jobs: keys.outranked_by(&(tier, own)),
            alone: self.state.quota.tree.is_none(),
        }
    }

    /// What a search for `id` until `end` that finds no room is remembered as ([`NoRoom`]),
    /// and whether it may be recorded: for an order-based search, `id` has no licenses to be
    /// short of, and no victim is left out for having preempted it (a later preemptor's
    /// candidates must be among its own); a fair-sharing search (`fair`) is looked up only
    /// where it may be recorded. `None` where the memo does not hold, or the pass runs without
    /// shortcuts.
    fn no_room_failure(&self, id: JobId, end: u64, fair: bool) -> Option<(Failure, bool)> {
        let settings = &self.state.config.policy.preemption;
        let ranked = settings.order_based
            && self.state.quota.tree.is_none()
            && self.profile.order_keys_fixed_in_pass();
        if !self.shortcuts
            || !(ranked || fair)
            || !self.profile.victim_plugins_read_partition_only()
        {
            return None;
        }
        let preemptor = self.state.job_view(id)?;
        let job = preemptor.record();
        let hooks = self.profile.partition(job.partition.index());
        if !hooks.is_none_or(|h| h.shape_only) {
            return None;
        }
        let gang = self.state.gang_request(job);
        let attempt = Attempt::of(&gang, end)?;
        let recordable =
            job.licenses.is_empty() && (!settings.anti_thrash || job.preempted_by.is_empty());
        if fair {
            let queue = self.state.job_queue(id)?;
            let policy = &self.state.config.queues[queue.index()].preemption;
            // The own queue's candidates under this policy read the preemptor's submit time.
            let reads_submit = policy.within_queue == WithinQueue::LowerOrNewerEqualPriority;
            let plain_demand = job.charged_as_asked()
                && !self
                    .state
                    .quota
                    .tree
                    .as_ref()
                    .is_some_and(|tree| tree.splits_models());
            if !recordable || reads_submit || !plain_demand {
                return None;
            }
            let failure = Failure::Fair {
                attempt,
                queue,
                priority: job.spec.priority,
            };
            return Some((failure, true));
        }
        let context = self.last.figures.context(&self.state);
        let (tier, keys, ..) = self.pass_key(preemptor, &context);
        let counted = counts_decide(&gang) && hooks.is_none_or(|h| !h.shapes_plans());
        let failure = Failure::Ranked {
            attempt,
            key: (tier, keys),
            counted,
        };
        Some((failure, recordable))
    }

    /// What the preemptor's queue policy lets it do to running job `v` of a queue.
    fn queue_basis(&self, id: JobId, v: JobId) -> Option<Basis> {
        let (job, victim) = (self.state.job(id)?, self.state.job(v)?);
        let (q, vq) = (self.state.job_queue(id)?, self.state.job_queue(v)?);
        let tree = self.state.quota.tree.as_ref()?;
        let policy = &self.state.config.queues[q.index()].preemption;
        let (priority, other) = (job.spec.priority, victim.spec.priority);
        if vq == q {
            let allowed = match policy.within_queue {
                WithinQueue::Never => false,
                WithinQueue::LowerPriority => other < priority,
                WithinQueue::LowerOrNewerEqualPriority => {
                    other < priority
                        || (other == priority
                            && (victim.submit_ms, victim.arrival) > (job.submit_ms, job.arrival))
                }
            };
            return allowed.then_some(Basis::Free);
        }
        if !tree.same_tree(q, vq) || !tree.is_borrowing(vq) {
            return None;
        }
        let fair = tree.fair_sharing(q);
        // Only beside a reclaim policy (the configuration refuses it alone, as Kueue does).
        if !fair && policy.borrow_within_cohort.allows(priority, other) {
            return Some(Basis::Free);
        }
        let reclaim = match policy.reclaim_within_cohort {
            ReclaimWithinCohort::Never => false,
            ReclaimWithinCohort::LowerPriority => other < priority,
            ReclaimWithinCohort::Any => true,
        };
        let basis = if fair { Basis::Fair } else { Basis::Reclaim };
        reclaim.then_some(basis)
    }

    /// The length of the shortest prefix of `candidates` that may let `id` be placed: every
    /// shorter prefix is known not to, or `None` when not even all of `candidates` do; with the
    /// placement at that length where one was made. For a gang of one group without topology,
    /// placement is monotone in what the victims release (a group that fits some free capacity
    /// fits any more of it; the view adds what victims release), so the greedy search of
    /// [`Scheduler::minimal_victims`], which places `id` once per candidate added, starts where
    /// this search ends: the shortest prefix whose task counts reach the group's
    /// ([`TaskCounts`], no placement), placed once, and where that fails a bisection of the
    /// longer ones (about log2(candidates) placements). A shortcut (the reference pass
    /// searches), answered only where a placement with victims has no side effects on the
    /// pass; 1 for other gangs.
    fn first_placeable(
        &mut self,
        id: JobId,
        candidates: &[(JobId, Basis)],
        pass: &mut Pass,
        end: u64,
    ) -> Option<(usize, Option<Vec<Assignment>>)> {
        let held = pass.holds.except(&self.state, id);
        let fewest = {
            let gang = self.state.gang_request(self.state.job(id)?);
            if gang.shapes.len() != 1 || gang.topology.is_some() {
                return Some((1, None));
            }
            let nothing = BTreeMap::new();
            let view = self.now_view(pass.profile.as_ref(), (pass.now, end), &held, &nothing);
            TaskCounts::new(&self.state, &view, &gang)
                .shortest_prefix(candidates.iter().map(|(v, _)| *v))
        };
        self.last.preempt_taken.bisections += 1;
        // `None` where the prefix of length `k` is known not to make room; else the placement
        // it makes (`None` for a prefix that releases nothing: not judged here).
        let mut place_prefix = |this: &mut Self, k: usize| {
            let victims: Vec<JobId> = candidates[..k].iter().map(|(v, _)| *v).collect();
            let released = this.released_by(&victims);
            match released.is_empty() {
                true => Some(None),
                false => this
                    .place_now(id, pass, end, &held, &released, Purpose::Trial)
                    .map(Some),
            }
        };
        let Some(fewest) = fewest else {
            debug_assert!(
                place_prefix(self, candidates.len()).is_none_or(|plan| plan.is_none()),
                "a search the counts fail places nothing"
            );
            return None;
        };
        let mut placed = place_prefix(self, fewest);
        if placed.is_some() || fewest == candidates.len() {
            return placed.map(|plan| (fewest, plan));
        }
        placed = place_prefix(self, candidates.len());
        placed.as_ref()?;
        // Every prefix shorter than `lo` is known not to make room (a known failure at `mid`
        // means one at every shorter prefix); the prefix of length `hi` may, placed as `placed`.
        let (mut lo, mut hi) = (fewest + 1, candidates.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match place_prefix(self, mid) {
                Some(plan) => (hi, placed) = (mid, Some(plan)),
                None => lo = mid + 1,
            }
        }
        Some((lo, placed.flatten()))
    }

    /// What `victims` hold, per node: what they release once stopped.
    fn released_by(&self, victims: &[JobId]) -> BTreeMap<NodeId, NodeAmounts> {
        let mut released: BTreeMap<NodeId, NodeAmounts> = BTreeMap::new();
        for v in victims {
            for (node, amounts) in self.state.node_charges(*v) {
                released.entry(node).or_default().add(&amounts);
            }
        }
        released
    }

    /// Where `id` would run, quota allowing, once `victims` have stopped.
    pub(in crate::scheduler) fn fits_without(
        &self,
        id: JobId,
        chosen: &[(JobId, Basis)],
        pass: &mut Pass,
        end: u64,
    ) -> Option<Vec<Assignment>> {
        let victims: Vec<JobId> = chosen.iter().map(|(v, _)| *v).collect();
        let released = self.released_by(&victims);
        let held = pass.holds.except(&self.state, id);
        let plan = self.place_now(id, pass, end, &held, &released, Purpose::Trial)?;
        self.quota_allows(id, chosen, plan, pass)
    }

    /// `plan`, where `id` placed so once `chosen` have stopped is within quota.
    fn quota_allows(
        &self,
        id: JobId,
        chosen: &[(JobId, Basis)],
        plan: Vec<Assignment>,
        pass: &mut Pass,
    ) -> Option<Vec<Assignment>> {
        let victims: Vec<JobId> = chosen.iter().map(|(v, _)| *v).collect();
        let reclaiming = chosen.iter().any(|(_, b)| *b == Basis::Reclaim);
        let demand = self.assignments_demand(id, &plan);
        let promised_view = self.fair_preemptor(id);
        let earmarks = pass.promised.of(&self.state);
        self.quota_fits(earmarks, id, &victims, reclaiming, promised_view, &demand)
            .then_some(plan)
    }

    /// Emits the `preempt` decisions, marks the victims and earmarks `plan` for `id`.
    fn preempt(&mut self, id: JobId, choice: Choice, decisions: &mut Vec<Decision>) {
        for &victim in &choice.victims {
            decisions.extend(self.state.mark_preempted(victim, id));
        }
        let exclusive = self.state.job(id).is_some_and(|j| j.spec.exclusive);
        let planned = self.state.charges_of(&choice.plan, exclusive);
        self.state.earmark(id, choice.victims, planned);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Profile;
    use crate::policy::builtin::{LowerPriorityFirst, ShortestFirst};
    use crate::scheduler::pass::preempt::test_plugins::{ByPriority, OldestFirst, built_ins};
    use crate::{ClusterConfig, Event, JobSpec, Milli};

    /// A one-cpu job of an hour in `queue`, of `priority`.
    fn queued(name: &str, queue: &str, priority: i32) -> Event {
        let mut job = JobSpec::new(name, 3_600_000, 1);
        job.queue = Some(queue.into());
        job.priority = priority;
        Event::Submit { job }
    }

    fn submit(name: &str, cpus: u64, count: u32, priority: i32, queue: bool) -> Event {
        let mut job = JobSpec::new(name, 3_600_000, count);
        job.groups[0].cpus = Milli::from_units(cpus);
        job.priority = priority;
        if queue {
            job.queue = Some("q".into());
        }
        Event::Submit { job }
    }

    fn job_mut<'a>(s: &'a mut Scheduler, name: &str) -> &'a mut Job {
        let v = s.state.job_id(name).unwrap();
        s.state.jobs.get_mut(v).unwrap()
    }

    /// A 4-cpu node and queue `q` (4 cpus nominal); preemption is off, so that nothing moves.
    /// One-cpu jobs of `q`: `v1`, `v2` and `v3` start at 0, `v4` and `p` (which waits) are
    /// submitted at 5.
    fn four_running() -> Scheduler {
        let mut cluster: ClusterConfig = serde_json::from_str(
            r#"{"nodes": [{"name": "n1", "cpus": 4}],
                "queues": [{"name": "q", "quota": {"cpu": {"nominal": 4}}}]}"#,
        )
        .unwrap();
        cluster.policy.preemption.enabled = false;
        let mut s = Scheduler::new(cluster).unwrap();
        let first = ["v1", "v2", "v3"].map(|name| submit(name, 1, 1, 0, true));
        s.tick(0, first.into()).unwrap();
        s.tick(
            5,
            vec![submit("v4", 1, 1, 0, true), submit("p", 1, 1, 0, true)],
        )
        .unwrap();
        assert_eq!(s.state.running.len(), 4);
        assert_eq!(s.state.pending.len(), 1);
        s
    }

    /// Whether the engine's rules keep `victim` from being a victim of `p` (`fair`: of a
    /// fair-sharing queue).
    fn never(s: &Scheduler, victim: &str, fair: bool) -> bool {
        let p = s.state.job(s.state.job_id("p").unwrap()).unwrap();
        let victim = s.state.job_view(s.state.job_id(victim).unwrap()).unwrap();
        s.never_victim(p, victim, fair)
    }

    #[test]
    fn the_engine_s_rules_keep_pending_unpreemptible_stopping_and_just_started_jobs_from_being_victims()
     {
        let mut s = four_running();
        for fair in [false, true] {
            assert!(!never(&s, "v1", fair));
            // Not running, started in this tick.
            assert!(never(&s, "p", fair));
            assert!(never(&s, "v4", fair));
        }
        job_mut(&mut s, "v1").spec.preemptible = false;
        let for_job = s.state.job_id("p").unwrap();
        match &mut job_mut(&mut s, "v2").state {
            crate::state::JobState::Running(run) => {
                run.preemption = Some(crate::state::Preemption {
                    for_job,
                    deadline_ms: 60_000,
                });
            }
            _ => panic!("v2 runs"),
        }
        for fair in [false, true] {
            assert!(never(&s, "v1", fair));
            assert!(never(&s, "v2", fair));
            assert!(!never(&s, "v3", fair));
        }
    }

    #[test]
    fn under_anti_thrash_a_job_that_preempted_the_preemptor_or_its_fair_sharing_queue_is_no_victim()
    {
        let mut s = four_running();
        s.state.config_mut().policy.preemption.anti_thrash = false;
        // `v1` preempted `p` before; `v2` was preempted by fair sharing for queue `q`.
        let arrival = s.state.job(s.state.job_id("v1").unwrap()).unwrap().arrival;
        job_mut(&mut s, "p").preempted_by.push(arrival);
        job_mut(&mut s, "v2").preempted_by_queues = Some(vec!["q".into()].into());
        for fair in [false, true] {
            assert!(!never(&s, "v1", fair));
            assert!(!never(&s, "v2", fair));
        }
        s.state.config_mut().policy.preemption.anti_thrash = true;
        for fair in [false, true] {
            assert!(never(&s, "v1", fair));
            assert!(!never(&s, "v3", fair));
        }
        // Only for a fair-sharing preemptor.
        assert!(!never(&s, "v2", false));
        assert!(never(&s, "v2", true));
    }

    /// The jobs told to stop for `p`.
    fn victims_for_p(decisions: &[Decision]) -> Vec<String> {
        decisions
            .iter()
            .filter_map(|d| match d {
                Decision::Preempt { job, for_job, .. } if for_job == "p" => Some(job.clone()),
                _ => None,
            })
            .collect()
    }

    /// A scheduler of `cluster` with order-based preemption by priority (lower priority
    /// first as victims), running the reference pass where `reference`.
    fn order_based(cluster: ClusterConfig, reference: bool) -> Scheduler {
        let profile = Profile::builder()
            .plugin(ByPriority)
            .plugin(LowerPriorityFirst)
            .build()
            .unwrap();
        let s = order_based_under(cluster, profile);
        match reference {
            true => s.with_reference_pass(),
            false => s,
        }
    }

    /// One node `n1` of `cpus` cpus, and where `queue` a queue `q` with all of them nominal.
    fn one_node(cpus: u64, queue: bool) -> ClusterConfig {
        let queues = match queue {
            true => format!(
                r#", "queues": [{{"name": "q", "quota": {{"cpu": {{"nominal": {cpus}}}}}}}]"#
            ),
            false => String::new(),
        };
        serde_json::from_str(&format!(
            r#"{{"nodes": [{{"name": "n1", "cpus": {cpus}}}]{queues}}}"#
        ))
        .unwrap()
    }

    /// A scheduler of `cluster` with order-based preemption under `profile`.
    fn order_based_under(mut cluster: ClusterConfig, profile: Profile) -> Scheduler {
        cluster.policy.preemption.enabled = true;
        cluster.policy.preemption.order_based = true;
        Scheduler::with_profile(cluster, profile).unwrap()
    }

    /// A 4-cpu node, order-based preemption, the higher priority first ([`ByPriority`]) and
    /// lower priority victims first. At 0 `x` (1 cpu, priority 0), `y` (2 cpus, 1) and `z` (1
    /// cpu, 9) start, in queue `q` (4 cpus nominal) where `queue`; at 1 `p` (priority 5) asks
    /// for 2 cpus in `count` tasks: `x` and `y` make room, `y` alone too (`x` of priority
    /// `x_priority` in place of 0). The victims decided at 1, and how many fill-backs the task
    /// counts answered and how many searches for the first placeable prefix ran in that pass.
    fn fill_back(
        count: u32,
        queue: bool,
        reference: bool,
        x_priority: i32,
    ) -> (Vec<String>, u64, u64) {
        let cluster = one_node(4, queue);
        let mut s = order_based(cluster, reference);
        let first = vec![
            submit("x", 1, 1, x_priority, queue),
            submit("y", 2, 1, 1, queue),
            submit("z", 1, 1, 9, queue),
        ];
        s.tick(0, first).unwrap();
        assert_eq!(s.state.running.len(), 3);
        let taken = |s: &Scheduler| {
            let taken = &s.last.preempt_taken;
            (taken.counted_fill_backs, taken.bisections)
        };
        let before = taken(&s);
        let out = s
            .tick(1, vec![submit("p", 2 / u64::from(count), count, 5, queue)])
            .unwrap();
        let victims = victims_for_p(&out.decisions);
        let after = taken(&s);
        (victims, after.0 - before.0, after.1 - before.1)
    }

    #[test]
    fn a_victim_the_preemptor_fits_without_is_dropped_by_the_counts_where_they_decide_alone() {
        // One task: the counts decide, without a quota tree.
        let y = || vec!["y".to_string()];
        assert_eq!(fill_back(1, false, false, 0), (y(), 1, 1));
        // Two tasks packed, a quota tree, or no shortcuts: the placements decide, alike.
        assert_eq!(fill_back(2, false, false, 0), (y(), 0, 1));
        assert_eq!(fill_back(1, true, false, 0), (y(), 0, 1));
        assert_eq!(fill_back(1, false, true, 0), (y(), 0, 0));
        // With `x` above `p`, `y` is the one candidate: no search for a placeable prefix.
        assert_eq!(fill_back(1, false, false, 7), (y(), 1, 0));
    }

    /// [`fill_back`] over GPUs: a 3-cpu node of 2 GPUs; `x` (1 cpu, priority 0) starts at 0,
    /// `y` (2 cpus, priority 1) at 1, one GPU each; at 2 `p` (priority 5) asks for 2 cpus and
    /// a GPU. The victims decided at 2, what `p`'s earmark plans on the node, and what `y`
    /// holds there.
    fn gpu_fill_back(reference: bool) -> (Vec<String>, Vec<NodeAmounts>, Vec<NodeAmounts>) {
        let cluster: ClusterConfig = serde_json::from_str(
            r#"{"nodes": [{"name": "n1", "cpus": 3, "gpus": {"model": "h100", "count": 2}}]}"#,
        )
        .unwrap();
        let mut s = order_based(cluster, reference);
        let gpu_job = |name: &str, cpus: u64, priority: i32| {
            let mut job = JobSpec::new(name, 3_600_000, 1);
            job.groups[0].cpus = Milli::from_units(cpus);
            job.groups[0].gpus = Milli::from_units(1);
            job.priority = priority;
            Event::Submit { job }
        };
        s.tick(0, vec![gpu_job("x", 1, 0)]).unwrap();
        s.tick(1, vec![gpu_job("y", 2, 1)]).unwrap();
        assert_eq!(s.state.running.len(), 2);
        let out = s.tick(2, vec![gpu_job("p", 2, 5)]).unwrap();
        let victims = victims_for_p(&out.decisions);
        let planned = s.state.earmarks[&s.state.job_id("p").unwrap()]
            .planned
            .iter()
            .map(|(_, amounts)| *amounts)
            .collect();
        let y = s.state.job(s.state.job_id("y").unwrap()).unwrap();
        let held = y
            .running()
            .unwrap()
            .charges
            .iter()
            .map(|(_, a)| *a)
            .collect();
        (victims, planned, held)
    }

    #[test]
    fn a_preemptor_is_planned_on_the_room_of_the_victims_the_fill_back_keeps() {
        // `x` and `y` make room, `y` alone too: `p` is planned on `y`'s cpus and GPU, with
        // the counts' fill-back as without it.
        let (victims, planned, held) = gpu_fill_back(false);
        assert_eq!(victims, ["y"]);
        assert_eq!(planned, held);
        assert_eq!(gpu_fill_back(true), (victims, planned, held));
    }

    /// Two 4-cpu nodes, order-based preemption by priority (lower priority victims first). At
    /// 0 `a1`, `a2`, `a3` and `a4` (one cpu each, priorities 0, 2, 4 and 6) start on `n1`; at 1
    /// `b1`, `b2`, `b3` and `b4` (priorities 1, 3, 5 and 7) on `n2`, so that the victim order
    /// takes the nodes in turn. At 2 `p` (priority 9) asks for `groups`, `tasks` one-cpu
    /// tasks placed as `mode` in the first. The victims decided at 2, and how many searches
    /// for the first placeable prefix ran in that pass.
    fn two_nodes_in_turn(
        mode: crate::PlacementMode,
        tasks: u32,
        groups: usize,
        reference: bool,
    ) -> (Vec<String>, u64) {
        let cluster: ClusterConfig = serde_json::from_str(
            r#"{"nodes": [{"name": "n1", "cpus": 4}, {"name": "n2", "cpus": 4}]}"#,
        )
        .unwrap();
        let mut s = order_based(cluster, reference);
        let on = |prefix: &str, priorities: [i32; 4]| {
            (1..=4)
                .zip(priorities)
                .map(|(i, priority)| submit(&format!("{prefix}{i}"), 1, 1, priority, false))
                .collect::<Vec<_>>()
        };
        s.tick(0, on("a", [0, 2, 4, 6])).unwrap();
        s.tick(1, on("b", [1, 3, 5, 7])).unwrap();
        for (prefix, node) in [("a", 0), ("b", 1)] {
            for i in 1..=4 {
                let charges: Vec<NodeId> = s
                    .state
                    .node_charges(id(&s, &format!("{prefix}{i}")))
                    .map(|(n, _)| n)
                    .collect();
                assert_eq!(charges, [NodeId(node)]);
            }
        }
        let mut job = JobSpec::new("p", 3_600_000, tasks);
        job.priority = 9;
        job.groups[0].placement = mode;
        for _ in 1..groups {
            job.groups.push(crate::TaskGroup::new(1));
        }
        let before = s.last.preempt_taken.bisections;
        let out = s.tick(2, vec![Event::Submit { job }]).unwrap();
        (
            victims_for_p(&out.decisions),
            s.last.preempt_taken.bisections - before,
        )
    }

    #[test]
    fn a_strictly_packed_preemptor_takes_the_first_prefix_a_bisection_places() {
        use crate::PlacementMode::StrictPack;
        // The counts reach four tasks with `a1`, `b1`, `a2` and `b2` stopped, two on each
        // node: no node holds them all. With every candidate stopped they fit; the bisection
        // finds the first prefix that places them, up to `a4`, and the fill-back keeps `n1`'s.
        let a = ["a1", "a2", "a3", "a4"].map(String::from).to_vec();
        assert_eq!(two_nodes_in_turn(StrictPack, 4, 1, false), (a.clone(), 1));
        assert_eq!(two_nodes_in_turn(StrictPack, 4, 1, true), (a.clone(), 0));
        // Three tasks: the counts' prefix ends at `a2`, and the bisection of the prefixes up
        // to `b4` finds the one that ends at `a3`.
        let three = a[..3].to_vec();
        assert_eq!(
            two_nodes_in_turn(StrictPack, 3, 1, false),
            (three.clone(), 1)
        );
        assert_eq!(two_nodes_in_turn(StrictPack, 3, 1, true), (three, 0));
    }

    #[test]
    fn a_packed_preemptor_placed_on_the_counts_shortest_prefix_takes_it_without_a_bisection() {
        use crate::PlacementMode::Pack;
        // The counts' shortest prefix, `a1` to `b2`, places the four tasks two on each node.
        let first = ["a1", "b1", "a2", "b2"].map(String::from).to_vec();
        assert_eq!(two_nodes_in_turn(Pack, 4, 1, false), (first.clone(), 1));
        assert_eq!(two_nodes_in_turn(Pack, 4, 1, true), (first, 0));
        // A gang of two groups is not searched for a placeable prefix.
        let (victims, bisections) = two_nodes_in_turn(Pack, 4, 2, false);
        assert_eq!(bisections, 0);
        assert_eq!((victims, 0), two_nodes_in_turn(Pack, 4, 2, true));
    }

    /// A 4-cpu node; cohort `c` holds `qa` (1 cpu nominal; borrowing within the cohort from
    /// priorities up to 1, reclaiming from any borrower where `reclaim`, else from lower
    /// priorities) and `qb` (3). At 0 `b1` and `b2` (priority 1) start in `qb`, at 1 `b3` and
    /// `b4` (priority 5): `qb` borrows a cpu. The victims are the newest first. At 2 `p` (`qa`,
    /// priority 5) asks for `cpus` cpus. The victims decided at 2, and how many searches for
    /// the first placeable prefix ran in that pass.
    fn borrow_or_reclaim(cpus: u64, reclaim: bool, reference: bool) -> (Vec<String>, u64) {
        let (victims, bisections, _) = borrow_or_reclaim_by(&["p"], cpus, reclaim, reference);
        (victims, bisections)
    }

    /// [`borrow_or_reclaim`] with a preemptor of each name, `p` first, all alike; also how
    /// many searches took the candidates an earlier search built.
    fn borrow_or_reclaim_by(
        names: &[&str],
        cpus: u64,
        reclaim: bool,
        reference: bool,
    ) -> (Vec<String>, u64, u64) {
        use crate::config::BorrowPolicy;
        use crate::policy::builtin::NewestFirst;
        let mut cluster: ClusterConfig = serde_json::from_str(
            r#"{"nodes": [{"name": "n1", "cpus": 4}],
                "cohorts": [{"name": "c"}],
                "queues": [{"name": "qa", "cohort": "c", "quota": {"cpu": {"nominal": 1}}},
                           {"name": "qb", "cohort": "c", "quota": {"cpu": {"nominal": 3}}}]}"#,
        )
        .unwrap();
        cluster.policy.preemption.enabled = true;
        let qa = &mut cluster.queues[0].preemption;
        qa.borrow_within_cohort.policy = BorrowPolicy::LowerPriority;
        qa.borrow_within_cohort.max_priority_threshold = Some(1);
        qa.reclaim_within_cohort = match reclaim {
            true => ReclaimWithinCohort::Any,
            false => ReclaimWithinCohort::LowerPriority,
        };
        let profile = Profile::builder().plugin(NewestFirst).build().unwrap();
        let mut s = Scheduler::with_profile(cluster, profile).unwrap();
        if reference {
            s = s.with_reference_pass();
        }
        s.tick(0, vec![queued("b1", "qb", 1), queued("b2", "qb", 1)])
            .unwrap();
        s.tick(1, vec![queued("b3", "qb", 5), queued("b4", "qb", 5)])
            .unwrap();
        assert_eq!(s.state.running.len(), 4);
        let preemptors = names
            .iter()
            .map(|name| {
                let mut job = JobSpec::new(*name, 3_600_000, 1);
                job.groups[0].cpus = Milli::from_units(cpus);
                job.queue = Some("qa".into());
                job.priority = 5;
                Event::Submit { job }
            })
            .collect();
        let taken = |s: &Scheduler| {
            let taken = &s.last.preempt_taken;
            (taken.bisections, taken.candidates_reused)
        };
        let before = taken(&s);
        let out = s.tick(2, preemptors).unwrap();
        let after = taken(&s);
        (
            victims_for_p(&out.decisions),
            after.0 - before.0,
            after.1 - before.1,
        )
    }

    #[test]
    fn a_preemptor_that_must_borrow_takes_the_borrowing_basis_victims_alone() {
        let names = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        for reference in [false, true] {
            // One cpu keeps `p` within `qa`'s nominal: it reclaims the newest, `b4`.
            assert_eq!(borrow_or_reclaim(1, true, reference).0, names(&["b4"]));
            // Two make it borrow, which reclaiming does not allow: `b4` and `b3`, reclaimed
            // only, are left out, and `b2` and `b1`, of the threshold's priority, taken.
            assert_eq!(
                borrow_or_reclaim(2, true, reference).0,
                names(&["b2", "b1"])
            );
            // Reclaiming lower priorities only, they are the only candidates: one search.
            assert_eq!(
                borrow_or_reclaim(2, false, reference).0,
                names(&["b2", "b1"])
            );
        }
        // Three cpus: `b2` and `b1` release too little, and no reclaimed candidate is left
        // out, so no second search.
        assert_eq!(borrow_or_reclaim(3, false, false), (vec![], 1));
        assert_eq!(borrow_or_reclaim(3, false, true), (vec![], 0));
    }

    #[test]
    fn a_search_alike_to_one_before_it_in_the_pass_takes_its_candidates_and_counts_it() {
        // `p`, `q` and `r` find no room; `q` and `r` take the candidates `p`'s search built.
        let none = Vec::<String>::new();
        let names = ["p", "q", "r"];
        assert_eq!(
            borrow_or_reclaim_by(&names, 3, false, false),
            (none.clone(), 3, 2)
        );
        assert_eq!(borrow_or_reclaim_by(&names, 3, false, true), (none, 0, 0));
    }

    fn id(s: &Scheduler, name: &str) -> JobId {
        s.state.job_id(name).unwrap()
    }

    /// The named jobs, each with `basis`.
    fn with_basis(s: &Scheduler, names: &[&str], basis: Basis) -> Vec<(JobId, Basis)> {
        names.iter().map(|name| (id(s, name), basis)).collect()
    }

    /// A full 9-cpu node; preemption off, so that nothing moves. Cohort `c` holds `qa` (4 cpus
    /// nominal; lower or newer equal priority within the queue, reclaiming lower priorities),
    /// `qb` (2; lower priority within) and `qc` (4; reclaiming and borrowing lower priorities
    /// within the cohort); cohort `d` holds `qd` (1) and `qe` (2). At 0 one-cpu jobs
    /// start, named by queue and priority: `a1`, `a5`, `a9`; `b1`, `b5`, `b9` (`qb` borrows
    /// 1); `c1`; `d1` and `d1x` (`qd` borrows 1 of `qe`'s). At 1 `pa`, `pb` and `pc`
    /// (priority 5) of `qa`, `qb` and `qc` wait.
    fn queue_policies() -> Scheduler {
        let mut cluster: ClusterConfig = serde_json::from_str(
            r#"{"nodes": [{"name": "n1", "cpus": 9}],
                "cohorts": [{"name": "c"}, {"name": "d"}],
                "queues": [{"name": "qa", "cohort": "c", "quota": {"cpu": {"nominal": 4}},
                            "preemption": {"within_queue": "lower_or_newer_equal_priority",
                                           "reclaim_within_cohort": "lower_priority"}},
                           {"name": "qb", "cohort": "c", "quota": {"cpu": {"nominal": 2}},
                            "preemption": {"within_queue": "lower_priority"}},
                           {"name": "qc", "cohort": "c", "quota": {"cpu": {"nominal": 4}},
                            "preemption": {"reclaim_within_cohort": "lower_priority",
                                           "borrow_within_cohort": {"policy": "lower_priority"}}},
                           {"name": "qd", "cohort": "d", "quota": {"cpu": {"nominal": 1}}},
                           {"name": "qe", "cohort": "d", "quota": {"cpu": {"nominal": 2}}}]}"#,
        )
        .unwrap();
        cluster.policy.preemption.enabled = false;
        let mut s = Scheduler::new(cluster).unwrap();
        let first = vec![
            queued("a1", "qa", 1),
            queued("a5", "qa", 5),
            queued("a9", "qa", 9),
            queued("b1", "qb", 1),
            queued("b5", "qb", 5),
            queued("b9", "qb", 9),
            queued("c1", "qc", 1),
            queued("d1", "qd", 1),
            queued("d1x", "qd", 1),
        ];
        s.tick(0, first).unwrap();
        let waiting = vec![
            queued("pa", "qa", 5),
            queued("pb", "qb", 5),
            queued("pc", "qc", 5),
        ];
        s.tick(1, waiting).unwrap();
        assert_eq!(s.state.running.len(), 9);
        assert_eq!(s.state.pending.len(), 3);
        let tree = s.state.quota.tree.as_ref().unwrap();
        let borrowing =
            ["qa", "qb", "qc", "qd"].map(|q| tree.is_borrowing(tree.queue_id(q).unwrap()));
        assert_eq!(borrowing, [false, true, false, true]);
        s
    }

    #[test]
    fn a_queue_s_policies_give_the_basis_on_which_its_job_may_take_another_s() {
        let mut s = queue_policies();
        let basis = |s: &Scheduler, p: &str, v: &str| s.queue_basis(id(s, p), id(s, v));
        let each = |s: &Scheduler, p: &str, victims: &[&str]| {
            victims.iter().map(|v| basis(s, p, v)).collect::<Vec<_>>()
        };
        let free = Some(Basis::Free);
        // Within `qa`: lower priority, or equal and submitted later (`a5` came before `pa`).
        assert_eq!(each(&s, "pa", &["a1", "a5", "a9"]), [free, None, None]);
        // Within `qb`: lower priority only.
        assert_eq!(each(&s, "pb", &["b1", "b5", "b9"]), [free, None, None]);
        // Within `qc`: never.
        assert_eq!(basis(&s, "pc", "c1"), None);
        // `qa` reclaims the lower priorities of `qb`, which borrows, and nothing of `qc`, which
        // does not, nor of `qd`, which borrows in another tree.
        assert_eq!(
            each(&s, "pa", &["b1", "b5", "b9", "c1", "d1"]),
            [Some(Basis::Reclaim), None, None, None, None]
        );
        // `qc` takes the lower priorities of a borrower on the borrowing basis (which holds
        // while it borrows too), and nothing else;
        // `qb` takes nothing of the other queues.
        assert_eq!(each(&s, "pc", &["b1", "b5", "d1"]), [free, None, None]);
        assert_eq!(each(&s, "pb", &["a1", "c1", "d1"]), [None, None, None]);
        // A job of `pa`'s priority submitted after it may be taken, one of a higher priority
        // not; at the same submit time the later arrival decides, and `pa` is not after itself.
        let pa = s.state.job(id(&s, "pa")).unwrap();
        let (submit, arrival) = (pa.submit_ms, pa.arrival);
        for name in ["a5", "a9"] {
            job_mut(&mut s, name).submit_ms = submit + 1;
        }
        assert_eq!(each(&s, "pa", &["a5", "a9"]), [free, None]);
        let a5 = job_mut(&mut s, "a5");
        (a5.submit_ms, a5.arrival) = (submit, arrival + 1);
        assert_eq!(basis(&s, "pa", "a5"), free);
        job_mut(&mut s, "a5").arrival = arrival;
        assert_eq!(basis(&s, "pa", "a5"), None);
    }

    /// [`fill_back`]'s node with `e` (1 cpu, priority 5) in place of `y`'s second cpu: `x`
    /// (0), `y` (1), `e` and `z` (9) run, and `p` (priority 5, 1 cpu) waits; preemption is
    /// then turned off, so that nothing moves.
    fn ranked_four() -> Scheduler {
        let cluster = one_node(4, false);
        let mut s = order_based(cluster, false);
        let first = vec![
            submit("x", 1, 1, 0, false),
            submit("y", 1, 1, 1, false),
            submit("e", 1, 1, 5, false),
            submit("z", 1, 1, 9, false),
        ];
        s.tick(0, first).unwrap();
        s.state.config_mut().policy.preemption.enabled = false;
        s.tick(1, vec![submit("p", 1, 1, 5, false)]).unwrap();
        assert_eq!(s.state.running.len(), 4);
        s
    }

    #[test]
    fn order_based_candidates_are_the_jobs_strictly_below_the_preemptor_lower_priority_first() {
        let s = ranked_four();
        let p = id(&s, "p");
        // Not `e`, of `p`'s priority, nor `z`, above it.
        assert_eq!(
            s.victim_candidates(p, Walk::Every),
            (with_basis(&s, &["x", "y"], Basis::Free), None)
        );
    }

    /// An order plug-in of the host's whose keys move within a pass: `p`'s key is 1 the first
    /// time it is asked after `asked` is reset, then 0, and every other job's is 0.
    #[derive(Clone, Debug)]
    struct Restless {
        asked: std::sync::Arc<std::sync::atomic::AtomicU64>,
    }

    #[gangway::policy::plugin]
    impl crate::policy::Plugin for Restless {
        fn name(&self) -> &str {
            "restless"
        }

        fn order_key(&self, job: JobView<'_>, _: &crate::policy::PassContext<'_>) -> i64 {
            use std::sync::atomic::Ordering;
            match job.spec().id == "p" && self.asked.fetch_add(1, Ordering::Relaxed) == 0 {
                true => 1,
                false => 0,
            }
        }
    }

    #[test]
    fn candidates_ordered_by_ranks_are_read_once_where_order_keys_move_within_a_pass() {
        use std::sync::atomic::Ordering;
        let asked = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let mut cluster = one_node(4, false);
        cluster.policy.preemption.order_based = true;
        let profile = Profile::builder()
            .plugin(Restless {
                asked: asked.clone(),
            })
            .plugin(LowerPriorityFirst)
            .build()
            .unwrap();
        // Preemption is off: nothing moves.
        let mut s = Scheduler::with_profile(cluster, profile).unwrap();
        let first = vec![
            submit("x", 1, 1, 0, false),
            submit("y", 2, 1, 1, false),
            submit("z", 1, 1, 9, false),
        ];
        s.tick(0, first).unwrap();
        s.tick(1, vec![submit("p", 2, 1, 5, false)]).unwrap();
        assert_eq!(s.state.running.len(), 3);
        let p = id(&s, "p");
        let preemptor = s.state.job_view(p).unwrap();
        let mut ranks = VictimRanks::default();
        assert!(s.victim_ranks(preemptor, &mut ranks).is_none());
        let ranked = s.victim_ranks(preemptor, &mut ranks);
        assert!(ranked.is_some());
        asked.store(0, Ordering::Relaxed);
        // One walk asks `p`'s key once: it outranks every running job, ordered lower priority
        // first. (A second walk, as debug builds make where the keys are fixed for the pass,
        // would read `p` outranking none.)
        assert_eq!(
            s.candidates_and_vetoed(p, Walk::Every, ranked),
            (with_basis(&s, &["x", "y", "z"], Basis::Free), vec![])
        );
        assert_eq!(asked.load(Ordering::Relaxed), 1);
    }

    /// A 2-cpu node in partitions `high` (tier 1) and `low` (tier 0, the default); `x` (low)
    /// and `h` (high) run, one cpu each, and `p` (high, 1 cpu) waits; preemption on, order-based
    /// preemption off, partition tiers as `tiers`.
    fn tiered(tiers: bool) -> Scheduler {
        let mut cluster: ClusterConfig = serde_json::from_str(
            r#"{"nodes": [{"name": "n1", "cpus": 2, "partitions": ["high", "low"]}],
                "partitions": [{"name": "high", "priority_tier": 1},
                               {"name": "low", "priority_tier": 0, "default": true}]}"#,
        )
        .unwrap();
        cluster.policy.preemption.enabled = false;
        cluster.policy.preemption.partition_tiers = tiers;
        let mut s = Scheduler::new(cluster).unwrap();
        let job = |name: &str, partition: &str| {
            let mut job = JobSpec::new(name, 3_600_000, 1);
            job.partition = Some(partition.into());
            Event::Submit { job }
        };
        s.tick(0, vec![job("x", "low"), job("h", "high")]).unwrap();
        s.tick(1, vec![job("p", "high")]).unwrap();
        s.state.config_mut().policy.preemption.enabled = true;
        assert_eq!(s.state.running.len(), 2);
        s
    }

    #[test]
    fn with_partition_tiers_a_job_of_a_lower_tier_is_a_candidate() {
        let s = tiered(true);
        let p = id(&s, "p");
        assert_eq!(
            s.victim_candidates(p, Walk::Every),
            (with_basis(&s, &["x"], Basis::Free), None)
        );
        let s = tiered(false);
        assert_eq!(
            s.victim_candidates(id(&s, "p"), Walk::Every),
            (vec![], None)
        );
    }

    #[test]
    fn an_order_based_walk_reads_the_kept_keys_of_the_jobs_the_preemptor_outranks() {
        let mut s = tiered(true);
        let p = id(&s, "p");
        let mut kept = RunningKeys::default();
        // Partition tiers alone: every running job is read.
        assert!(matches!(s.outranked_walk(p, false, &mut kept), Walk::Every));
        s.state.config_mut().policy.preemption.order_based = true;
        // `p` outranks `x`, of the lower tier, not `h`, of its own tier and submitted first;
        // without a quota tree they are the only ones with a basis.
        match s.outranked_walk(p, false, &mut kept) {
            Walk::Outranked { jobs, alone } => {
                assert_eq!(jobs, [id(&s, "x")]);
                assert!(alone);
            }
            _ => panic!("an outranked walk"),
        }
        // Fair sharing decides between queues: tiers and order do not apply.
        assert!(matches!(s.outranked_walk(p, true, &mut kept), Walk::Every));
        assert!(matches!(
            s.with_reference_pass().outranked_walk(p, false, &mut kept),
            Walk::Every
        ));
    }

    /// A 2-cpu node, order-based preemption, shortest first and lower priority first (order
    /// keys fixed for a pass) with a victim plug-in of the host's (the lower job id first: no
    /// victim order is kept). At 0 `a` and `b` (one cpu, 40 minutes) start; at 1 `p` (one
    /// cpu, 25 minutes) outranks both. The victims decided at 1, and how many searches read
    /// only the jobs their preemptor outranks.
    fn outranked_by_p(reference: bool) -> (Vec<String>, u64) {
        let cluster = one_node(2, false);
        let profile = Profile::builder()
            .plugin(ShortestFirst)
            .plugin(LowerPriorityFirst)
            .plugin(OldestFirst)
            .build()
            .unwrap();
        let mut s = order_based_under(cluster, profile);
        if reference {
            s = s.with_reference_pass();
        }
        let job = |name: &str, minutes: u64| Event::Submit {
            job: JobSpec::new(name, minutes * 60_000, 1),
        };
        s.tick(0, vec![job("a", 40), job("b", 40)]).unwrap();
        let before = s.last.preempt_taken.outranked_walks;
        let out = s.tick(1, vec![job("p", 25)]).unwrap();
        (
            victims_for_p(&out.decisions),
            s.last.preempt_taken.outranked_walks - before,
        )
    }

    #[test]
    fn a_search_that_reads_only_the_outranked_jobs_counts_it() {
        assert_eq!(outranked_by_p(false), (vec!["a".to_string()], 1));
        assert_eq!(outranked_by_p(true), (vec!["a".to_string()], 0));
    }

    /// A 2-cpu node, order-based preemption, shortest first, lower priority first and a
    /// minimum run time of 10 s (built-in plug-ins: the victim order is kept for a pass). At 0
    /// `a` and `b` (one cpu, 40 minutes) start; at 1 `p` and `q` (25 minutes, two one-cpu
    /// tasks) are submitted.
    #[test]
    fn a_search_counts_its_shortcuts_and_a_veto_s_end_wakes_the_scheduler() {
        let cluster = one_node(2, false);
        let mut s = order_based_under(cluster, built_ins());
        let job = |name: &str, minutes: u64, count: u32| Event::Submit {
            job: JobSpec::new(name, minutes * 60_000, count),
        };
        s.tick(0, vec![job("a", 40, 1), job("b", 40, 1)]).unwrap();
        // (outranked walks, no-room skips, victim orders carried) so far.
        let taken = |s: &Scheduler| {
            let t = &s.last.preempt_taken;
            (t.outranked_walks, t.no_room_skips, t.victim_orders_carried)
        };
        assert_eq!(taken(&s), (0, 0, 0));
        // Both are vetoed until 10 s: `p` finds no victim and `q`, alike, is known to find
        // none; the scheduler asks to be woken at the veto's end.
        let out = s.tick(1, vec![job("p", 25, 2), job("q", 25, 2)]).unwrap();
        assert!(victims_for_p(&out.decisions).is_empty());
        assert_eq!(out.next_wakeup_ms, Some(10_000));
        assert_eq!(taken(&s), (1, 1, 0));
        assert_eq!(
            s.victim_candidates(id(&s, "p"), Walk::Every),
            (vec![], Some(10_000))
        );
        // Once the vetoes end, `p` takes both from the order carried from the pass before;
        // `q` then finds none.
        let out = s.tick(20_000, vec![]).unwrap();
        let mut victims = victims_for_p(&out.decisions);
        victims.sort_unstable();
        assert_eq!(victims, ["a", "b"]);
        assert_eq!(taken(&s), (3, 1, 1));
    }

    #[test]
    fn a_borrowing_preemptor_outside_fair_sharing_is_not_held_back_by_the_fair_shares() {
        // Cohort `c` (not fair sharing): `qa` and `qb`, 2 cpus nominal each, of a 4-cpu node.
        // `qa`'s jobs run at priority 9, `qb`'s at 0; `p` of `qa` (priority 5) would make `qa`
        // borrow, which no fair-sharing target could allow, but order-based preemption takes a
        // job of `qb`, with or without shortcuts.
        for reference in [false, true] {
            let cluster: ClusterConfig = serde_json::from_str(
                r#"{"nodes": [{"name": "n1", "cpus": 4}],
                    "cohorts": [{"name": "c"}],
                    "queues": [{"name": "qa", "cohort": "c", "quota": {"cpu": {"nominal": 2}}},
                               {"name": "qb", "cohort": "c", "quota": {"cpu": {"nominal": 2}}}]}"#,
            )
            .unwrap();
            let mut s = order_based(cluster, reference);
            let first = vec![
                queued("a1", "qa", 9),
                queued("a2", "qa", 9),
                queued("b1", "qb", 0),
                queued("b2", "qb", 0),
            ];
            s.tick(0, first).unwrap();
            assert_eq!(s.state.running.len(), 4);
            let out = s.tick(1, vec![queued("p", "qa", 5)]).unwrap();
            let victims = victims_for_p(&out.decisions);
            assert_eq!(victims.len(), 1, "{reference}");
            assert!(victims[0].starts_with('b'), "{victims:?}");
        }
    }

    /// A victim veto plug-in of the host's: every victim vetoed until now, a veto already over.
    #[derive(Clone, Debug)]
    struct VetoEndingNow;

    #[gangway::policy::plugin]
    impl crate::policy::Plugin for VetoEndingNow {
        fn name(&self) -> &str {
            "veto_ending_now"
        }

        fn veto_victim(
            &self,
            _: JobView<'_>,
            _: JobView<'_>,
            context: &crate::policy::PassContext<'_>,
        ) -> Option<crate::policy::Veto> {
            Some(crate::policy::Veto::new("over").until(context.now_ms()))
        }
    }

    #[test]
    fn a_veto_that_ends_now_removes_the_candidate_and_asks_for_no_retry() {
        // A 1-cpu node: `x` (priority 0) runs, `p` (priority 5) would take it.
        let cluster = one_node(1, false);
        let profile = Profile::builder()
            .plugin(ByPriority)
            .plugin(LowerPriorityFirst)
            .plugin(VetoEndingNow)
            .build()
            .unwrap();
        let mut s = order_based_under(cluster, profile);
        s.tick(0, vec![submit("x", 1, 1, 0, false)]).unwrap();
        let out = s.tick(1, vec![submit("p", 1, 1, 5, false)]).unwrap();
        assert!(out.decisions.is_empty(), "{:?}", out.decisions);
        // Woken when `x` ends, not at once.
        assert_eq!(out.next_wakeup_ms, Some(3_600_000));
        assert_eq!(
            s.victim_candidates(id(&s, "p"), Walk::Every),
            (vec![], None)
        );
    }

    /// A 2-cpu node (and queue `q`, 2 cpus nominal, where `queue`), order-based preemption
    /// under `profile`. At 0 `a` and `b` (one cpu, 40 minutes) start; at 1 `p` (25 minutes,
    /// two one-cpu tasks) and `o` (25 minutes, one task) wait: with [`builtins`], every
    /// victim is vetoed until 10 s.
    fn two_vetoed(profile: Profile, queue: bool) -> Scheduler {
        let cluster = one_node(2, queue);
        let mut s = order_based_under(cluster, profile);
        let job = |name: &str, minutes: u64, count: u32| {
            let mut job = JobSpec::new(name, minutes * 60_000, count);
            if queue {
                job.queue = Some("q".into());
            }
            Event::Submit { job }
        };
        s.tick(0, vec![job("a", 40, 1), job("b", 40, 1)]).unwrap();
        s.tick(1, vec![job("p", 25, 2), job("o", 25, 1)]).unwrap();
        assert_eq!(s.state.running.len(), 2);
        assert_eq!(s.state.pending.len(), 2);
        s
    }

    #[test]
    fn an_order_based_search_is_remembered_where_the_memo_holds_and_recorded_where_it_may_be() {
        let mut s = two_vetoed(built_ins(), false);
        let failure = |s: &Scheduler, name: &str| s.no_room_failure(id(s, name), 1_500_001, false);
        // Two tasks packed: the placements decide; one task: the counts.
        assert!(matches!(
            failure(&s, "p"),
            Some((Failure::Ranked { counted: false, .. }, true))
        ));
        assert!(matches!(
            failure(&s, "o"),
            Some((Failure::Ranked { counted: true, .. }, true))
        ));
        // A preemptor preempted before is not recorded under anti-thrash (its candidates
        // leave out the job that preempted it).
        let arrival = s.state.job(id(&s, "a")).unwrap().arrival;
        job_mut(&mut s, "o").preempted_by.push(arrival);
        assert!(matches!(
            failure(&s, "o"),
            Some((Failure::Ranked { .. }, false))
        ));
        s.state.config_mut().policy.preemption.anti_thrash = false;
        assert!(matches!(
            failure(&s, "o"),
            Some((Failure::Ranked { .. }, true))
        ));
        // None in the reference pass, nor without order-based preemption, nor with a quota
        // tree, nor with a victim plug-in of the host's.
        assert_eq!(failure(&s.with_reference_pass(), "p"), None);
        s.state.config_mut().policy.preemption.order_based = false;
        assert_eq!(failure(&s, "p"), None);
        assert_eq!(failure(&two_vetoed(built_ins(), true), "p"), None);
        let hosts = Profile::builder()
            .plugin(ShortestFirst)
            .plugin(OldestFirst)
            .build()
            .unwrap();
        assert_eq!(failure(&two_vetoed(hosts, false), "p"), None);
    }

    #[test]
    fn a_fair_sharing_search_is_remembered_only_where_it_reads_nothing_else_of_its_preemptor() {
        // A full 2-cpu node; the fair-sharing root `all` holds `qa` and `qb`, 1 cpu nominal
        // each, running `a1` and `b1`; `p` of `qa` (priority 3) waits.
        let mut cluster: ClusterConfig = serde_json::from_str(
            r#"{"nodes": [{"name": "n1", "cpus": 2}],
                "cohorts": [{"name": "all", "fair_sharing": {"enabled": true}}],
                "queues": [{"name": "qa", "cohort": "all", "quota": {"cpu": {"nominal": 1}}},
                           {"name": "qb", "cohort": "all", "quota": {"cpu": {"nominal": 1}}}]}"#,
        )
        .unwrap();
        cluster.policy.preemption.enabled = false;
        let mut s = Scheduler::new(cluster).unwrap();
        s.tick(0, vec![queued("a1", "qa", 0), queued("b1", "qb", 0)])
            .unwrap();
        s.tick(1, vec![queued("p", "qa", 3)]).unwrap();
        assert_eq!(s.state.pending.len(), 1);
        let qa = s.state.job_queue(id(&s, "p")).unwrap();
        let failure = |s: &Scheduler| s.no_room_failure(id(s, "p"), 3_600_001, true);
        assert!(matches!(
            failure(&s),
            Some((Failure::Fair { queue, priority: 3, .. }, true)) if queue == qa
        ));
        // Not where its demand depends on its nodes (exclusive).
        job_mut(&mut s, "p").spec.exclusive = true;
        assert_eq!(failure(&s), None);
        job_mut(&mut s, "p").spec.exclusive = false;
        // Not where it was preempted before, under anti-thrash.
        let arrival = s.state.job(id(&s, "b1")).unwrap().arrival;
        job_mut(&mut s, "p").preempted_by.push(arrival);
        assert_eq!(failure(&s), None);
        job_mut(&mut s, "p").preempted_by.clear();
        assert!(failure(&s).is_some());
        // Not where its queue's candidates read its submit time.
        s.state.config_mut().queues[qa.index()]
            .preemption
            .within_queue = WithinQueue::LowerOrNewerEqualPriority;
        assert_eq!(failure(&s), None);
    }
}
