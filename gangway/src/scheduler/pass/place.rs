//! Step 6, placing now: a job's whole gang on what is free and not needed by an earlier
//! reservation or held for a preemptor, starting it, and the reason a job that cannot be placed
//! waits (`priority` when only reservations or a blocked head hold it back).

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::backfill::{Availability, IndexCandidates, NowView};
use crate::config::BackfillMode;
use crate::decision::{Decision, MigPlacement, PendingReason, PlacementEntry};
use crate::model::ids::{JobId, NodeId};
use crate::model::resources::NodeAmounts;
use crate::placement::count::fits_now_by_count;
use crate::placement::{Assignment, GangRequest, NodeGate, Reach, assignments_fit, place_gang};
use crate::scheduler::Scheduler;
use crate::scheduler::pass::node_gate::JobGate;
use crate::scheduler::pass::{Blocking, NoSuchJob, Pass};
use crate::state::{ClusterState, Job};

/// Nothing held on any node, nor released: the view of a placement that no earmark or
/// tentative victim touches (a shared empty map, neither built nor dropped per placement).
pub(in crate::scheduler) static NOTHING: BTreeMap<NodeId, NodeAmounts> = BTreeMap::new();

/// What the earmarks hold on the nodes for their preemptors
/// ([`ClusterState::earmark_holds`]), kept for the pass while the earmarks stay as they are: a
/// pass asks it at every turn and every victim search, and the earmarks change only when a
/// preemption is made or given up (a victim's stop, which also changes what its earmark holds,
/// comes between passes).
#[derive(Debug, Default)]
pub(in crate::scheduler) struct EarmarkHolds {
    /// The state's count of earmark changes `all` was read at.
    changes: Option<u64>,
    /// What every earmark holds.
    all: Arc<BTreeMap<NodeId, NodeAmounts>>,
}

impl EarmarkHolds {
    /// What the earmarks of preemptors other than `id` hold: every earmark's, kept, where
    /// `id` has none; else read again. Debug builds check it against a rebuild.
    pub(in crate::scheduler) fn except(
        &mut self,
        state: &ClusterState,
        id: JobId,
    ) -> Arc<BTreeMap<NodeId, NodeAmounts>> {
        if state.earmarks.contains_key(&id) {
            return Arc::new(state.earmark_holds(Some(id)));
        }
        let changes = state.quota.earmark_changes;
        if self.changes != Some(changes) {
            self.all = Arc::new(state.earmark_holds(None));
            self.changes = Some(changes);
        }
        debug_assert_eq!(
            *self.all,
            state.earmark_holds(Some(id)),
            "earmark holds stale"
        );
        Arc::clone(&self.all)
    }
}

/// What a placement now is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::scheduler) enum Purpose {
    /// The job's own turn: where no placement can change its quota verdict, the quota is
    /// asked first ([`Scheduler::quota_rules_out_placement`]).
    Turn,
    /// A victim search's trial: its quota is checked afterwards, with the victims gone.
    Trial,
}

impl Scheduler {
    /// Places the whole gang now: on what is free and not needed by reservations nor `held`
    /// for preemptors, counting `released` (tentative victims) as free.
    pub(in crate::scheduler) fn place_now(
        &self,
        id: JobId,
        pass: &mut Pass,
        end: u64,
        held: &BTreeMap<NodeId, NodeAmounts>,
        released: &BTreeMap<NodeId, NodeAmounts>,
        purpose: Purpose,
    ) -> Option<Vec<Assignment>> {
        let job = self.state.job(id)?;
        let gate = JobGate::of(&self.profile, self.last.figures.context(&self.state), id);
        let licensed = match pass.profile.as_ref() {
            Some(profile) => profile.licenses.covers(&job.licenses, pass.now, end),
            None => self.state.licenses.covers(&job.licenses),
        };
        if !licensed {
            return None;
        }
        let gang = GangRequest {
            gate: gate.as_ref().map(|g| g as &dyn NodeGate),
            ..self.state.gang_request(job)
        };
        if released.is_empty() && !self.state.index.could_hold(gang.shapes) {
            return None;
        }
        pass.verdicts_stand &= gang.shapes.len() == 1 && gang.topology.is_none();
        if let Some(plan) = self.last.plans.get(&id)
            && plan.start_ms <= pass.now
        {
            let view = self.now_view(pass.profile.as_ref(), (pass.now, end), held, released);
            if assignments_fit(&self.state.nodes, &view, gang, &plan.assignments) {
                return Some(plan.assignments.clone());
            }
        }
        // The memos hold only for the views every job without earmarks sees (nothing held), or
        // every job without an earmark of its own (every earmark held), and for filters and
        // scorers that answer by shape.
        let remembered = self.shortcuts
            && released.is_empty()
            && (held.is_empty() || !self.state.earmarks.contains_key(&id))
            && gate.as_ref().is_none_or(JobGate::shape_only);
        let changes = (
            self.state.quota.earmark_changes,
            self.state.quota.earmark_releases,
        );
        // Filters must run for `explain` to tell this job why no node passed them: a failure
        // remembered from another job of its shape does not spare it the placement.
        let filtered = gate.as_ref().is_some_and(JobGate::filters);
        let fit_alone = gate.as_ref().is_none_or(JobGate::leaves_fit_alone);
        if remembered && !filtered {
            let memo = pass.memo_for(held, changes);
            if memo.known(&gang, end) == Some(false)
                || (fit_alone && memo.dominated_failure(&gang, end))
            {
                return None;
            }
        }
        // Where the quota rules out every placement (known without one), none is tried; nor,
        // below, for a gang short of cpus in all. Both are shortcuts: the reference pass places,
        // and asks the profile's scorers (of nodes or of topology domains), which may report
        // faults; so with scorers, as with filters, the placement is made.
        let ranked = gate.as_ref().is_some_and(JobGate::asks_scorers);
        if purpose == Purpose::Turn
            && !filtered
            && !ranked
            && self.quota_rules_out_placement(id, pass)
        {
            return None;
        }
        // Counts first: without filters to report on, a gang short of cpus in all is not placed
        // (asked only where the memo did not answer: the test reads the cpus over the window).
        if !filtered && !ranked && released.is_empty() && self.short_of_cpus(id, pass, end) {
            return None;
        }
        // Counts first: the tasks that what the nodes have free now, less what other
        // preemptors' earmarks hold, could hold bound what this view offers (reservations and
        // maintenance only take away, and nothing is released), so fits that cannot add up to
        // the gang's minimum rule the placement out (the count's maintenance is left out: it is
        // a bound here, not an answer).
        let counted_out = self.shortcuts
            && released.is_empty()
            && fit_alone
            && fits_now_by_count(
                &self.state.nodes,
                &self.state.index,
                GangRequest { gate: None, ..gang },
                true,
                held,
            ) == Some(false);
        let placed = match counted_out {
            true => None,
            false => {
                let reach = match released.is_empty() {
                    false => Reach::Every,
                    true => self.reach_now(gate.as_ref()),
                };
                let profile = pass.profile.as_ref();
                let candidates = IndexCandidates {
                    index: &self.state.index,
                    preferred: profile.map_or(&[], Availability::reserved_nodes),
                    reach,
                };
                let view = self.now_view(profile, (pass.now, end), held, released);
                // The pass's scores hold for every placement now whose device choice answers by
                // shape (`placement::score_memo`).
                let kept = self.shortcuts && gate.as_ref().is_none_or(JobGate::shape_only);
                let scores = kept.then_some(&pass.scores);
                place_gang(
                    &self.state.nodes,
                    &candidates,
                    &view,
                    GangRequest { scores, ..gang },
                )
            }
        };
        // Only failures: a gang that fits needs its own assignments.
        if remembered && placed.is_none() {
            pass.memo_for(held, changes).record(&gang, end, false);
        }
        if placed.is_none()
            && released.is_empty()
            && let Some(detail) = gate.as_ref().and_then(JobGate::nothing_passed)
        {
            pass.details.insert(id, detail);
        }
        placed
    }

    /// The capacity a placement over `(now, end)` sees: what is free and not needed by the
    /// pass's reservations (its `profile`) nor `held` for preemptors, counting `released` as
    /// free.
    pub(in crate::scheduler) fn now_view<'a>(
        &'a self,
        profile: Option<&'a Availability>,
        (now, end): (u64, u64),
        held: &'a BTreeMap<NodeId, NodeAmounts>,
        released: &'a BTreeMap<NodeId, NodeAmounts>,
    ) -> NowView<'a> {
        NowView {
            profile: profile.map(|profile| (profile, &self.state.running_ends)),
            now,
            end,
            held,
            released,
            maintenance: &self.state.maintenance,
            quick_rejects: self.shortcuts,
        }
    }

    /// The nodes a placement now through `gate` visits: those that can hold one task on what
    /// they have free ([`Reach::OneTaskFree`]: no room is read on the others), unless a filter
    /// or scorer must be asked about every node with the GPUs free, as it is without the
    /// shortcuts (the reference pass).
    fn reach_now(&self, gate: Option<&JobGate<'_>>) -> Reach {
        let asks_plugins = gate.is_some_and(|gate| gate.filters() || gate.ranks());
        match self.shortcuts && !asks_plugins {
            true => Reach::OneTaskFree,
            false => Reach::FreeGpus,
        }
    }

    /// Counts first for a turn: job `id`'s reason, where counts tell that its turn can do no
    /// more than read it; `None` where the turn must run in full. A shortcut: the reference
    /// pass takes every turn in full.
    ///
    /// Where the nodes taking work do not have the gang's minimum free even summed over all of
    /// them ([`crate::placement::FreeIndex::could_hold`]), its placement now fails at that
    /// check, before anything it would record, and so does the reason's fit on what is free:
    /// `resources`. Else, for a job of one group without topology whose node gate neither
    /// filters nor scores and with no plan of its own starting now, where the pass's free cpus
    /// fall short of its minimum at some instant of its window
    /// ([`Scheduler::short_of_cpus`]), its placement now fails at that check, and every check
    /// before it either fails too or changes nothing (the pass's `verdicts_stand` holds for
    /// such a job; a plan of its own starting now, which could place it, is ruled out), so the
    /// reason is read as the full turn reads it ([`Scheduler::unplanned_reason`]).
    /// Either way nothing else the turn does applies ([`Scheduler::turn_reads_only_reason`]).
    pub(in crate::scheduler) fn counted_turn(
        &self,
        id: JobId,
        job: &Job,
        pass: &mut Pass,
    ) -> Option<PendingReason> {
        if !self.shortcuts || !self.turn_reads_only_reason(id, job, pass) {
            return None;
        }
        if !self.state.index.totals().covers(&job.totals.need) {
            return Some(PendingReason::Resources);
        }
        let plain = job.shapes.len() == 1
            && job.topology.iter().all(Option::is_none)
            && self
                .profile
                .partition(job.partition.index())
                .is_none_or(|hooks| {
                    !hooks.gates()
                        || (hooks.filters.is_empty()
                            && hooks.scorers.is_empty()
                            && hooks.domain_scorers.is_empty())
                })
            && self
                .last
                .plans
                .get(&id)
                .is_none_or(|plan| plan.start_ms > pass.now);
        let end = pass.now.saturating_add(job.spec.time_limit_ms);
        (plain && self.short_of_cpus(id, pass, end))
            .then(|| self.unplanned_reason(id, job, pass.now, true, &mut pass.blocking))
    }

    /// Whether a turn whose placement now fails can do no more than read job `id`'s reason: no
    /// reservation is left to give it (the backfill depth is used up and it is not the what-if
    /// job), EASY and conservative give no head, pin or block to a job without one, no quota
    /// queue can refuse it, no earmark of its own has victims stopping, and preemption is off.
    fn turn_reads_only_reason(&self, id: JobId, job: &Job, pass: &Pass) -> bool {
        let policy = &self.state.config.policy;
        pass.reservations >= pass.depth
            && pass.always_plan != Some(id)
            && matches!(
                policy.backfill.mode,
                BackfillMode::Easy | BackfillMode::Conservative
            )
            && !policy.preemption.enabled
            && job.queue.is_none()
            && !self.state.earmarks.contains_key(&id)
            && !self.tracks_head()
            && !self.compresses()
    }

    /// Whether job `id`'s gang, at its groups' minimal counts, needs more cpus than the nodes
    /// taking work have free in all at some instant of `[now, end)` around the pass's
    /// reservations: then no placement now can hold it (a placement's cpus on each node are
    /// free over the whole window, so their sum is too). A shortcut (the reference pass
    /// places every candidate), and only where the pass has a profile of its own time.
    fn short_of_cpus(&self, id: JobId, pass: &mut Pass, end: u64) -> bool {
        let (Some(job), Some(profile)) = (self.state.job(id), pass.profile.as_mut()) else {
            return false;
        };
        if !self.shortcuts || pass.resumed {
            return false;
        }
        let need: u64 = job
            .shapes
            .iter()
            .map(|s| s.cpu_milli.saturating_mul(u64::from(s.min_count)))
            .sum();
        let (running, nodes) = (&self.state.running_ends, &self.state.nodes);
        let len = end.saturating_sub(pass.now);
        profile.short_of_cpus(running, nodes, need, pass.now, len)
    }

    /// `priority` when the job would fit on what is free now (outside maintenance windows, with
    /// its licenses free) but reservations or a blocked head hold it back; `resources`
    /// otherwise.
    pub(in crate::scheduler) fn blocked_reason(
        &self,
        id: JobId,
        job: &Job,
        now: u64,
        blocking: &mut Blocking,
    ) -> PendingReason {
        if !self.state.licenses.covers(&job.licenses) {
            return PendingReason::Resources;
        }
        let view = NowView {
            profile: None,
            now,
            end: now.saturating_add(job.spec.time_limit_ms),
            held: &NOTHING,
            released: &NOTHING,
            maintenance: &self.state.maintenance,
            quick_rejects: self.shortcuts,
        };
        let gate = JobGate::of(&self.profile, self.last.figures.context(&self.state), id);
        let candidates = IndexCandidates {
            index: &self.state.index,
            preferred: &[],
            reach: self.reach_now(gate.as_ref()),
        };
        let gang = GangRequest {
            gate: gate.as_ref().map(|g| g as &dyn NodeGate),
            ..self.state.gang_request(job)
        };
        if !self.state.index.could_hold(gang.shapes) {
            return PendingReason::Resources;
        }
        blocking.heuristic_fit_read |= gang.shapes.len() > 1 || gang.topology.is_some();
        let fits_free = &mut blocking.fits_free;
        let remembered = self.shortcuts && gate.as_ref().is_none_or(JobGate::shape_only);
        if let Some(fits) = fits_free.known(&gang, view.end).filter(|_| remembered) {
            return blocked_or_short(fits);
        }
        // Counts next: where the free index's state classes decide the fit, no node is visited.
        let maintenance_free = || {
            self.state
                .maintenance
                .blocked(now, view.end)
                .next()
                .is_none()
        };
        let countable = self.shortcuts && gate.as_ref().is_none_or(JobGate::leaves_fit_alone);
        let counted = countable
            .then(|| {
                let (nodes, ungated) = (&self.state.nodes, GangRequest { gate: None, ..gang });
                let free = maintenance_free();
                fits_now_by_count(nodes, &self.state.index, ungated, free, &NOTHING)
            })
            .flatten();
        let fits = counted
            .unwrap_or_else(|| place_gang(&self.state.nodes, &candidates, &view, gang).is_some());
        if remembered {
            fits_free.record(&gang, view.end, fits);
        }
        blocked_or_short(fits)
    }

    /// Starts job `id` on `assignments` now, and counts it in the pass's profile until `end`.
    pub(super) fn start(
        &mut self,
        id: JobId,
        assignments: Vec<Assignment>,
        end: u64,
        pass: &mut Pass,
        decisions: &mut Vec<Decision>,
    ) -> Result<(), NoSuchJob> {
        let job = self.state.job_name(id).ok_or(NoSuchJob(id))?.to_string();
        let placement = placement_entries(&self.state, &assignments);
        decisions.push(Decision::Start { job, placement });
        self.state.start_job(id, assignments, pass.now);
        let epoch = self.state.start_epoch;
        for (node, _) in self.state.node_charges(id) {
            pass.confirmed.started_on(epoch, node);
        }
        pass.blocking.unready = self.admission_blocked();
        pass.verdicts_stand &= !pass.waited;
        pass.blocking.fits_free.forget_fits();
        pass.quota_closed = None;
        pass.no_room.forget_fair();
        if let Some(profile) = pass.profile.as_mut() {
            profile.add_running(self.state.node_charges(id), end);
            if let Some(job) = self.state.job(id) {
                profile.licenses.add_running(&job.licenses, end);
            }
        }
        Ok(())
    }
}

/// The wire form of assignments.
pub(in crate::scheduler) fn placement_entries(
    state: &ClusterState,
    assignments: &[Assignment],
) -> Vec<PlacementEntry> {
    assignments
        .iter()
        .map(|a| PlacementEntry {
            group: a.group,
            node: state
                .node_names
                .shared(a.node)
                .map_or_else(|| Arc::from(""), Arc::clone),
            tasks: a.tasks,
            gpus: a.gpus.clone(),
            mig: state
                .node(a.node)
                .map(|node| {
                    node.mig
                        .in_mask(a.amounts.mig)
                        .map(|s| MigPlacement {
                            gpu: s.gpu,
                            slice: s.slice,
                            profile: state.mig_profile_name(s.profile).to_string(),
                        })
                        .collect()
                })
                .unwrap_or_default(),
        })
        .collect()
}

/// A waiting job's reason where it would fit on what is free now (`fits`: reservations or a
/// blocked head hold it back) or would not.
fn blocked_or_short(fits: bool) -> PendingReason {
    match fits {
        true => PendingReason::Priority,
        false => PendingReason::Resources,
    }
}
