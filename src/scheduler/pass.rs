//! Steps 4–8 of a pass: walk the pending jobs once, start what fits, reserve for blocked jobs
//! within the backfill depth, and record each pending job's reason and estimated start.

use std::collections::BTreeMap;

use super::fit_memo::FitMemo;
use super::kept_plans::{Confirmed, KeptPlans};
use super::lazy_order::LazyOrder;
use super::pending::PendingEntry;
use super::settled::DeferredReport;
use super::{Plan, Scheduler};
use crate::backfill::{FutureView, IndexCandidates, NowView, Profile, earliest_fit_bound};
use crate::config::BackfillMode;
use crate::decision::{Decision, MigPlacement, PendingReason, PlacementEntry};
use crate::model::ids::{JobId, NodeId};
use crate::model::job::PlacementMode;
use crate::model::resources::NodeAmounts;
use crate::model::shape::{GpuNeed, TaskShape};
use crate::placement::{Assignment, GangRequest, assignments_fit, place_gang};
use crate::quota::QueueId;
use crate::state::{ClusterState, Job};

/// Per-pass bookkeeping.
pub(super) struct Pass {
    pub(super) now: u64,
    pub(super) depth: usize,
    pub(super) reservations: usize,
    /// Mode `none`: a resource-blocked job stops every later job.
    pub(super) blocked: bool,
    pub(super) profile: Option<Profile>,
    pub(super) reserved_nodes: Vec<NodeId>,
    /// Strict-FIFO queues whose head waits for quota: their later jobs wait too.
    pub(super) blocked_queues: Vec<QueueId>,
    /// Reservations made in this pass, in order (the next pass's plans).
    plans: Vec<(JobId, Plan)>,
    /// A job planned even beyond the backfill depth (a what-if question's job).
    pub(super) always_plan: Option<JobId>,
    /// Placements now (around reservations, nothing earmarked) already tried in this pass.
    fits_now: FitMemo,
    /// Placements on what is free now (reservations ignored) already tried in this pass.
    fits_free: FitMemo,
    /// Whether no queue admits the least any pending job demands; known until a job starts.
    pub(super) quota_closed: Option<bool>,
    /// The last pass's reservations made again identically.
    confirmed: Confirmed,
}

impl Scheduler {
    /// One pass at `now`. `always_plan` gets a reservation when resource-blocked even beyond
    /// the backfill depth (without using up the depth). Returns the earliest begin time of a
    /// pending job after `now` (such a job stays pending).
    pub(super) fn run_pass(
        &mut self,
        now: u64,
        always_plan: Option<JobId>,
        decisions: &mut Vec<Decision>,
    ) -> Option<u64> {
        let (keyed, pending) = self.keyed_pending(now);
        let mut order = LazyOrder::new(keyed);
        let mut pass = Pass {
            now,
            depth: self.state.backfill_depth(),
            reservations: 0,
            blocked: false,
            profile: None,
            reserved_nodes: Vec::new(),
            blocked_queues: Vec::new(),
            plans: Vec::new(),
            always_plan,
            fits_now: FitMemo::default(),
            fits_free: FitMemo::default(),
            quota_closed: None,
            confirmed: Confirmed::default(),
        };
        let none_mode = self.state.config.policy.backfill.mode == BackfillMode::None;
        let mut report = Vec::new();
        self.deferred = None;
        while !self.settled(&mut pass, &pending) {
            let Some(id) = order.next() else {
                break;
            };
            let (reason, estimated) = self.consider(id, &mut pass, none_mode, decisions);
            if let Some(reason) = reason {
                report.push(PendingEntry {
                    job: id,
                    position: order.taken(),
                    reason,
                    estimated_start_ms: estimated,
                });
            }
        }
        let (keyed, taken) = order.into_parts();
        if taken < keyed.len() {
            self.deferred = Some(DeferredReport {
                keyed,
                from: taken,
                now,
                blocked: pass.blocked,
                blocked_queues: pass.blocked_queues,
            });
        }
        self.report = report;
        let order: Vec<JobId> = pass.plans.iter().map(|(id, _)| *id).collect();
        let kept = pass.confirmed.kept;
        self.kept = Some(KeptPlans::new(self.state.release_epoch, &order, kept));
        self.plans = pass.plans.into_iter().collect();
        pending.next_begin_ms
    }

    /// Decides one pending job: started (`None`), or its reason and estimated start.
    fn consider(
        &mut self,
        id: JobId,
        pass: &mut Pass,
        none_mode: bool,
        decisions: &mut Vec<Decision>,
    ) -> (Option<PendingReason>, Option<u64>) {
        let Some(job) = self.state.job(id) else {
            return (None, None);
        };
        if let Some(reason) = waiting_reason(job, pass.now) {
            self.state.release_earmark(id);
            return (Some(reason), None);
        }
        // A preemptor's earmark is its own: a head blocked ahead of it could not use it.
        if pass.blocked && !self.state.earmarks.contains_key(&id) {
            return (
                Some(self.blocked_reason(id, pass.now, &mut pass.fits_free)),
                None,
            );
        }
        let queue = self.state.job_queue(id);
        if queue.is_some_and(|q| pass.blocked_queues.contains(&q)) {
            return (Some(PendingReason::Quota), None);
        }
        let end = pass.now.saturating_add(job.spec.time_limit_ms);
        let held = self.state.earmark_holds(Some(id));
        let placed = self.place_now(id, pass, end, &held, &BTreeMap::new());
        let quota_ok = match &placed {
            Some(assignments) => {
                let demand = self.assignments_demand(id, assignments);
                self.quota_fits(id, &[], false, &demand)
            }
            None => self.quota_fits_unplaced(id),
        };
        if let Some(assignments) = placed.filter(|_| quota_ok) {
            self.start(id, assignments, end, pass, decisions);
            return (None, None);
        }
        if self
            .state
            .earmarks
            .get(&id)
            .is_some_and(|e| !e.victims.is_empty())
        {
            return (Some(PendingReason::Preempting), None);
        }
        self.state.release_earmark(id);
        if pass.blocked {
            return (
                Some(self.blocked_reason(id, pass.now, &mut pass.fits_free)),
                None,
            );
        }
        if self.try_preempt(id, pass, end, decisions) {
            return (Some(PendingReason::Preempting), None);
        }
        if !quota_ok {
            if let Some(q) = queue
                && self.state.config.queues[q.index()].strict_fifo
            {
                pass.blocked_queues.push(q);
            }
            return (Some(PendingReason::Quota), None);
        }
        let within_depth = pass.reservations < pass.depth;
        if within_depth || pass.always_plan == Some(id) {
            if within_depth {
                pass.reservations += 1;
            }
            return match self.reserve(id, pass) {
                Some(start) => (Some(PendingReason::Reserved), Some(start)),
                None => (Some(PendingReason::Resources), None),
            };
        }
        if none_mode {
            pass.blocked = true;
            return (Some(PendingReason::Resources), None);
        }
        (
            Some(self.blocked_reason(id, pass.now, &mut pass.fits_free)),
            None,
        )
    }

    /// Places the whole gang now: on what is free and not needed by reservations nor `held`
    /// for preemptors, counting `released` (tentative victims) as free.
    pub(super) fn place_now(
        &self,
        id: JobId,
        pass: &mut Pass,
        end: u64,
        held: &BTreeMap<NodeId, NodeAmounts>,
        released: &BTreeMap<NodeId, NodeAmounts>,
    ) -> Option<Vec<Assignment>> {
        let view = NowView {
            profile: pass.profile.as_ref(),
            now: pass.now,
            end,
            held,
            released,
            maintenance: &self.state.maintenance,
        };
        let candidates = IndexCandidates {
            index: &self.state.index,
            preferred: &pass.reserved_nodes,
            all_levels: !released.is_empty(),
        };
        let licensed = self
            .state
            .job(id)
            .is_none_or(|job| match pass.profile.as_ref() {
                Some(profile) => profile.licenses.covers(&job.licenses, pass.now, end),
                None => self.state.licenses.covers(&job.licenses),
            });
        if !licensed {
            return None;
        }
        let gang = request(&self.state, id);
        if released.is_empty() && !self.state.index.could_hold(gang.shapes) {
            return None;
        }
        if let Some(plan) = self.plans.get(&id)
            && plan.start_ms <= pass.now
            && assignments_fit(&self.state.nodes, &view, gang, &plan.assignments)
        {
            return Some(plan.assignments.clone());
        }
        // The memo holds only for the one view every job without earmarks sees.
        let remembered = released.is_empty() && held.is_empty();
        if remembered && pass.fits_now.known(&gang, end) == Some(false) {
            return None;
        }
        let placed = place_gang(&self.state.nodes, &candidates, &view, gang);
        // Only failures: a gang that fits needs its own assignments.
        if remembered && placed.is_none() {
            pass.fits_now.record(&gang, end, false);
        }
        placed
    }

    /// `priority` when the job would fit on what is free now (outside maintenance windows, with
    /// its licenses free) but reservations or a blocked head hold it back; `resources`
    /// otherwise.
    pub(super) fn blocked_reason(
        &self,
        id: JobId,
        now: u64,
        fits_free: &mut FitMemo,
    ) -> PendingReason {
        if self
            .state
            .job(id)
            .is_some_and(|job| !self.state.licenses.covers(&job.licenses))
        {
            return PendingReason::Resources;
        }
        let none = BTreeMap::new();
        let limit = self.state.job(id).map_or(0, |j| j.spec.time_limit_ms);
        let view = NowView {
            profile: None,
            now,
            end: now.saturating_add(limit),
            held: &none,
            released: &none,
            maintenance: &self.state.maintenance,
        };
        let candidates = IndexCandidates {
            index: &self.state.index,
            preferred: &[],
            all_levels: false,
        };
        let gang = request(&self.state, id);
        if !self.state.index.could_hold(gang.shapes) {
            return PendingReason::Resources;
        }
        let fits = fits_free.known(&gang, view.end).unwrap_or_else(|| {
            let fits = place_gang(&self.state.nodes, &candidates, &view, gang).is_some();
            fits_free.record(&gang, view.end, fits);
            fits
        });
        if fits {
            PendingReason::Priority
        } else {
            PendingReason::Resources
        }
    }

    /// Plans the job at the earliest release time where its whole gang (at `min_count`) fits,
    /// and pins that reservation in the profile.
    fn reserve(&mut self, id: JobId, pass: &mut Pass) -> Option<u64> {
        let job = self.state.job(id)?;
        let limit = job.spec.time_limit_ms;
        let licenses = job.licenses.clone();
        let minimal: Vec<TaskShape> = job
            .shapes
            .iter()
            .map(|s| s.with_count(s.min_count))
            .collect();
        let gang = GangRequest {
            shapes: &minimal,
            exclusive: job.spec.exclusive,
            partition: job.partition,
            mix: &self.state.shape_mix,
            topology: self.state.gang_topology(&job.topology),
        };
        let profile = pass
            .profile
            .get_or_insert_with(|| Profile::build(&self.state, pass.now));
        let cpu_milli: u64 = minimal
            .iter()
            .map(|s| s.cpu_milli * u64::from(s.count))
            .sum();
        let cpus_bound_them = minimal.iter().all(|s| {
            s.gpu == GpuNeed::None && s.memory_mib == 0 && s.mode == PlacementMode::Spread
        });
        let candidates = IndexCandidates {
            index: &self.state.index,
            preferred: &[],
            all_levels: true,
        };
        // Taken: the pass replaces every plan anyway.
        let mut previous = self
            .plans
            .remove(&id)
            .filter(|plan| plan.start_ms > pass.now);
        let rank = self.kept_rank(id);
        let stands = previous.as_ref().zip(rank).is_some_and(|kept| {
            let need = (limit, &licenses);
            self.plan_stands(kept, &gang, need, profile, &mut pass.confirmed)
        });
        pass.confirmed.kept += usize::from(stands);
        let mut planned = previous
            .take_if(|_| stands)
            .map(|plan| (plan.start_ms, plan.assignments));
        // Candidate start times: the profile's release times and the previous plan's start,
        // from `cursor` on; the fit bound moves the cursor past hopeless stretches at once.
        let mut cursor = pass.now.saturating_add(1);
        while planned.is_none() {
            let release = profile.next_release(cursor);
            let start = match previous
                .as_ref()
                .map(|p| p.start_ms)
                .filter(|&t| t >= cursor)
            {
                Some(t) => release.map_or(t, |r| r.min(t)),
                None => match release {
                    Some(r) => r,
                    None => break,
                },
            };
            cursor = start.saturating_add(1);
            let end = start.saturating_add(limit);
            if !profile.licenses.covers(&licenses, start, end) {
                continue;
            }
            // Both bounds only skip hopeless starts. For cpu-only spread gangs the per-node one
            // (room for one task anywhere) is rarely the later: its sweep is not worth it.
            let bound = match profile.earliest_cpu_fit(&self.state.nodes, cpu_milli, start, limit) {
                b if b > start || cpus_bound_them => b,
                _ => earliest_fit_bound(profile, &self.state.nodes, &minimal, start, limit),
            };
            if bound > start {
                cursor = bound;
                if bound == u64::MAX {
                    break;
                }
                continue;
            }
            let view = FutureView {
                profile,
                start,
                end,
                maintenance: &self.state.maintenance,
            };
            planned = match &previous {
                Some(plan)
                    if plan.start_ms == start
                        && assignments_fit(&self.state.nodes, &view, gang, &plan.assignments) =>
                {
                    Some((start, plan.assignments.clone()))
                }
                _ => place_gang(&self.state.nodes, &candidates, &view, gang).map(|a| (start, a)),
            };
        }
        let (start, assignments) = planned?;
        if let Some(rank) = rank
            && (stands
                || previous.is_some_and(|p| p.start_ms == start && p.assignments == assignments))
        {
            pass.confirmed.made_again(rank);
        }
        let charges = crate::state::charges(&assignments, job.spec.exclusive, |n| {
            self.state
                .node(n)
                .map(|node| node.capacity)
                .unwrap_or_default()
        });
        for (node, amounts) in charges {
            profile.reserve(node, amounts, start, start.saturating_add(limit));
            if !pass.reserved_nodes.contains(&node) {
                pass.reserved_nodes.push(node);
            }
        }
        profile
            .licenses
            .reserve(&licenses, start, start.saturating_add(limit));
        pass.reserved_nodes.sort_unstable();
        pass.plans.push((
            id,
            Plan {
                start_ms: start,
                assignments,
            },
        ));
        Some(start)
    }

    fn start(
        &mut self,
        id: JobId,
        assignments: Vec<Assignment>,
        end: u64,
        pass: &mut Pass,
        decisions: &mut Vec<Decision>,
    ) {
        let placement = placement_entries(&self.state, &assignments);
        decisions.push(Decision::Start {
            job: self.state.job_name(id).to_string(),
            placement,
        });
        self.state.start_job(id, assignments, pass.now);
        pass.fits_free.forget_fits();
        pass.quota_closed = None;
        if let Some(profile) = pass.profile.as_mut() {
            for (node, amounts) in self.state.node_charges(id) {
                profile.add_running(node, amounts, end);
            }
            if let Some(job) = self.state.job(id) {
                profile.licenses.add_running(&job.licenses, end);
            }
        }
    }
}

/// Why a job waits without being considered for resources: held, before its begin time, or
/// for a dependency.
pub(super) fn waiting_reason(job: &Job, now: u64) -> Option<PendingReason> {
    if job.held {
        Some(PendingReason::Held)
    } else if job.spec.begin_ms.is_some_and(|b| b > now) {
        Some(PendingReason::Begin)
    } else if !job.waiting_on.is_empty() {
        Some(PendingReason::Dependency)
    } else {
        None
    }
}

/// The wire form of assignments.
pub(super) fn placement_entries(
    state: &ClusterState,
    assignments: &[Assignment],
) -> Vec<PlacementEntry> {
    assignments
        .iter()
        .map(|a| PlacementEntry {
            group: a.group,
            node: state.node_name(a.node).to_string(),
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

/// The gang request of a pending job.
pub(super) fn request(state: &ClusterState, id: JobId) -> GangRequest<'_> {
    match state.job(id) {
        Some(job) => GangRequest {
            shapes: &job.shapes,
            exclusive: job.spec.exclusive,
            partition: job.partition,
            mix: &state.shape_mix,
            topology: state.gang_topology(&job.topology),
        },
        None => GangRequest {
            shapes: &[],
            exclusive: false,
            partition: crate::model::ids::PartitionId(0),
            mix: &state.shape_mix,
            topology: None,
        },
    }
}
