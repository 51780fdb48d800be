//! The pass, one stage a module, in the order docs/design.md ("One pass") numbers them:
//!
//! 1. charge usage, 2. forget old jobs, 3. apply events: the state's own steps
//!    (`ClusterState`), run by [`Scheduler::tick`](crate::Scheduler::tick);
//! 4. [`enforce`]: kill what passed its time limit or its preemption grace;
//! 5. [`order`]: the admission plug-ins' votes and the pending order (tiers, the order
//!    plug-ins' keys, submit time, arrival) with its slot rules (admission fair sharing, fair
//!    sharing's tournament);
//! 6. this module: walk the order once; for each job that may run (not held, past its begin
//!    time, its dependencies met), [`quota`] (may its queue admit it), place it now (the
//!    profile's node filters and scorers: [`node_gate`]), else [`preempt`] for it, else reserve
//!    for it within the backfill depth;
//! 7. [`report`]: each pending job's position, reason and estimated start;
//! 8. the next wake-up ([`Scheduler::tick`](crate::Scheduler::tick)).
//!
//! What a pass may skip because the last one already knew it lives in
//! [`crate::scheduler::shortcuts`], each with its argument.

pub(in crate::scheduler) mod enforce;
pub(in crate::scheduler) mod node_gate;
pub(in crate::scheduler) mod order;
pub(in crate::scheduler) mod preempt;
pub(in crate::scheduler) mod quota;
pub(in crate::scheduler) mod report;

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::backfill::{FutureView, IndexCandidates, NowView, Profile, earliest_fit_bound};
use crate::config::BackfillMode;
use crate::decision::{Decision, MigPlacement, PendingReason, PlacementEntry};
use crate::model::ids::{JobId, NodeId};
use crate::model::job::PlacementMode;
use crate::model::resources::NodeAmounts;
use crate::model::shape::{GpuNeed, TaskShape};
use crate::placement::{Assignment, GangRequest, NodeGate, assignments_fit, place_gang};
use crate::policy::PassFigures;
use crate::quota::QueueId;
use crate::scheduler::pass::node_gate::JobGate;
use crate::scheduler::pass::order::slots::PassOrder;
use crate::scheduler::pass::report::PendingEntry;
use crate::scheduler::shortcuts::fit_memo::FitMemo;
use crate::scheduler::shortcuts::kept_plans::{Confirmed, KeptPlans};
use crate::scheduler::shortcuts::resume::Resumable;
use crate::scheduler::shortcuts::settled::DeferredReport;
use crate::scheduler::{Plan, Scheduler};
use crate::state::licenses::LicenseNeed;
use crate::state::{ClusterState, Job};

/// What one pending job's turn in a pass came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::scheduler) enum Verdict {
    /// It started in this pass.
    Started,
    /// It waits, for `reason`; a reservation gives its planned start.
    Waits {
        /// Why it waits.
        reason: PendingReason,
        /// When its reservation starts, if it has one.
        estimated_start_ms: Option<u64>,
    },
}

impl Verdict {
    /// Waits for `reason`, without a planned start.
    fn waits(reason: PendingReason) -> Self {
        Verdict::Waits {
            reason,
            estimated_start_ms: None,
        }
    }
}

/// A job id in the pass's order that names no job (the order is built from the pending jobs,
/// and a pass removes no job, so this marks a broken state, never input).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::scheduler) struct NoSuchJob(pub(in crate::scheduler) JobId);

/// What holds later jobs back, carried from one job to the next in order: by a pass, and by the
/// derivation of a settled pass's remaining reasons.
#[derive(Debug, Default)]
pub(in crate::scheduler) struct Blocking {
    /// Mode `none`: a resource-blocked job stops every later job.
    pub(in crate::scheduler) blocked: bool,
    /// Strict-FIFO queues whose head waits for quota: their later jobs wait too.
    pub(in crate::scheduler) blocked_queues: Vec<QueueId>,
    /// Placements on what is free now (reservations ignored) already tried.
    pub(in crate::scheduler) fits_free: FitMemo,
    /// `block_admission`: a started job is not ready yet, so the first job that fits waits
    /// for readiness instead of starting.
    pub(in crate::scheduler) unready: bool,
    /// `block_admission`: the first job that fits waits for readiness, so no later job
    /// starts, preempts or is reserved for (Kueue's `waitForPodsReadyIfNeeded` holds its
    /// scheduling cycle there).
    pub(in crate::scheduler) ready_wait: bool,
}

/// Per-pass bookkeeping; kept at the pass's end for the next tick to continue
/// ([`crate::scheduler::shortcuts::resume`]).
#[derive(Debug)]
pub(in crate::scheduler) struct Pass {
    pub(in crate::scheduler) now: u64,
    pub(in crate::scheduler) depth: usize,
    pub(in crate::scheduler) reservations: usize,
    /// What holds later jobs back.
    pub(in crate::scheduler) blocking: Blocking,
    pub(in crate::scheduler) profile: Option<Profile>,
    /// The reservations made in this pass.
    bookings: Bookings,
    /// A job planned even beyond the backfill depth (a what-if question's job).
    pub(in crate::scheduler) always_plan: Option<JobId>,
    /// Placements now (around reservations, nothing earmarked) already tried in this pass.
    pub(in crate::scheduler) fits_now: FitMemo,
    /// Whether no queue admits the least any pending job demands; known until a job starts.
    pub(in crate::scheduler) quota_closed: Option<bool>,
    /// The last pass's reservations made again identically.
    confirmed: Confirmed,
    /// Jobs the admission plug-ins denied, with the first deny.
    pub(in crate::scheduler) denied: BTreeMap<JobId, String>,
    /// Why no node passed the node filters, by job.
    pub(in crate::scheduler) details: BTreeMap<JobId, String>,
    /// Whether a full pass would give every job this pass left waiting the same verdict
    /// again, with what this pass started running: no job started after one was left
    /// waiting (a start changes what a waiting job's reason and pins are read from); every
    /// job placed now (or tried) or planned was one task group without a topology
    /// constraint (a failure to fit stays a failure while usage only grows, and a search for
    /// its earliest start is exact, whatever other start times are tried); and every
    /// reservation was kept from the pass before ([`crate::scheduler::shortcuts::kept_plans`]), not searched.
    pub(in crate::scheduler) verdicts_stand: bool,
    /// Whether a job was left waiting.
    waited: bool,
    /// Whether this pass continues the last one (which keeps its plans).
    pub(in crate::scheduler) resumed: bool,
}

/// The reservations a pass has made.
#[derive(Debug, Default)]
struct Bookings {
    /// Nodes with a reservation, in id order: placement now tries them first.
    reserved_nodes: Vec<NodeId>,
    /// The reservations not yet handed to the scheduler, in the order they were made.
    plans: Vec<(JobId, Plan)>,
    /// Every reservation's job, in the order they were made (the next pass's ranks).
    order: Vec<JobId>,
}

/// What a reservation is sought for: the gang at its minimal counts, for its time limit.
struct Reservation<'a> {
    gang: GangRequest<'a>,
    limit: u64,
    licenses: &'a LicenseNeed,
}

impl Pass {
    /// A fresh pass at `now` with backfill depth `depth`, planning `always_plan` beyond it,
    /// with the admission plug-ins' denials.
    fn new(
        now: u64,
        depth: usize,
        always_plan: Option<JobId>,
        denied: BTreeMap<JobId, String>,
    ) -> Self {
        Pass {
            now,
            depth,
            reservations: 0,
            blocking: Blocking::default(),
            profile: None,
            bookings: Bookings::default(),
            always_plan,
            fits_now: FitMemo::default(),
            quota_closed: None,
            confirmed: Confirmed::default(),
            denied,
            details: BTreeMap::new(),
            verdicts_stand: true,
            waited: false,
            resumed: false,
        }
    }
}

impl Scheduler {
    /// Whether `block_admission` holds a start now: some running job is not ready.
    fn admission_blocked(&self) -> bool {
        self.state
            .wait_for_ready()
            .is_some_and(|config| config.block_admission)
            && self.state.any_waiting_for_ready()
    }

    /// One pass at `now`. `always_plan` gets a reservation when resource-blocked even beyond
    /// the backfill depth (without using up the depth). Returns the earliest begin time of a
    /// pending job after `now` (such a job stays pending).
    pub(in crate::scheduler) fn run_pass(
        &mut self,
        now: u64,
        always_plan: Option<JobId>,
        decisions: &mut Vec<Decision>,
    ) -> Option<u64> {
        self.last.figures = Arc::new(PassFigures::new(&self.state, now));
        let figures = Arc::clone(&self.last.figures);
        self.profile.prepare(&figures.context(&self.state));
        let (keyed, pending, denied) = self.keyed_pending(now);
        let quiet = always_plan.is_none() && decisions.is_empty();
        let (mut pass, mut order, mut report) = match self.resume(now, quiet, keyed, denied) {
            Ok((pass, order, report)) => (pass, PassOrder::plain(order), report),
            Err((keyed, denied)) => {
                let mut pass = Pass::new(now, self.state.backfill_depth(), always_plan, denied);
                pass.blocking.unready = self.admission_blocked();
                (pass, PassOrder::fresh(keyed, &self.state), Vec::new())
            }
        };
        self.last.deferred = None;
        while !self.settled(&mut pass, &pending) {
            let Some(id) = self.next_turn(&mut order) else {
                break;
            };
            // A job missing from the state has nothing to report.
            match self.consider(id, &mut pass, decisions) {
                Ok(Verdict::Waits {
                    reason,
                    estimated_start_ms,
                }) => {
                    pass.waited = true;
                    // Positions count the pending jobs only: those started in this pass leave.
                    report.push(PendingEntry {
                        job: id,
                        position: report.len() + 1,
                        reason,
                        estimated_start_ms,
                    });
                }
                Ok(Verdict::Started) => self.turn_started(&mut order, id),
                Err(NoSuchJob(_)) => {}
            }
        }
        self.last.report = report;
        self.finish(pass, order);
        pending.next_begin_ms
    }

    /// Hands a finished pass's results to the scheduler: its deferred report, denials,
    /// filter details and plans; and keeps its state for the next tick when that may continue
    /// it ([`crate::scheduler::shortcuts::resume`]).
    fn finish(&mut self, mut pass: Pass, order: PassOrder) {
        let (keyed, taken) = order.into_parts(&self.state);
        let settled = taken < keyed.len();
        let keyed = if settled {
            self.last.deferred = Some(DeferredReport {
                keyed,
                from: taken,
                now: pass.now,
                blocked: pass.blocking.blocked,
                blocked_queues: pass.blocking.blocked_queues.clone(),
                ready_wait: pass.blocking.ready_wait,
            });
            None
        } else {
            Some(keyed)
        };
        self.last.details = std::mem::take(&mut pass.details);
        self.last.denied = pass.denied.clone();
        let plans = std::mem::take(&mut pass.bookings.plans);
        pass.bookings.order.extend(plans.iter().map(|(id, _)| *id));
        let kept = pass.confirmed.kept;
        let epoch = self.state.release_epoch;
        self.last.kept = Some(KeptPlans::new(epoch, &pass.bookings.order, kept));
        if !pass.resumed {
            self.last.plans.clear();
        }
        self.last.plans.extend(plans);
        self.last.resume.state = self.continuable(&pass).then(|| {
            Box::new(Resumable {
                pass,
                keyed,
                waiting: self.state.pending_count(),
                epoch,
            })
        });
    }

    /// Decides one pending job: start it now, preempt for it, reserve for it, or give the
    /// reason it waits.
    fn consider(
        &mut self,
        id: JobId,
        pass: &mut Pass,
        decisions: &mut Vec<Decision>,
    ) -> Result<Verdict, NoSuchJob> {
        let job = self.state.job(id).ok_or(NoSuchJob(id))?;
        if let Some(reason) = waiting_reason(job, pass.now).or_else(|| {
            pass.denied
                .contains_key(&id)
                .then_some(PendingReason::Admission)
        }) {
            self.state.release_earmark(id);
            return Ok(Verdict::waits(reason));
        }
        if let Some(reason) = self.held_back(id, job, pass.now, &mut pass.blocking) {
            return Ok(Verdict::waits(reason));
        }
        let end = pass.now.saturating_add(job.spec.time_limit_ms);
        let held = self.state.earmark_holds(Some(id));
        let placed = self.place_now(id, pass, end, &held, &BTreeMap::new());
        let quota_ok = match &placed {
            Some(assignments) => {
                let demand = self.assignments_demand(id, assignments);
                self.quota_fits(id, &[], false, false, &demand)
            }
            None => self.quota_fits_unplaced(id),
        };
        if let Some(assignments) = placed.filter(|_| quota_ok) {
            if pass.blocking.unready {
                // Kueue's order: the first job that fits waits for readiness, and holds every
                // later one; preemptors before it have preempted.
                pass.blocking.ready_wait = true;
                // A fit read at this time may not stand at a later one (its window reaches
                // further into the reservations), so the next tick runs a full pass.
                pass.verdicts_stand = false;
                return Ok(Verdict::waits(PendingReason::WaitingForReady));
            }
            self.start(id, assignments, end, pass, decisions)?;
            return Ok(Verdict::Started);
        }
        if self.state.has_victims_stopping(id) {
            return Ok(Verdict::waits(PendingReason::Preempting));
        }
        self.state.release_earmark(id);
        let job = self.state.job(id).ok_or(NoSuchJob(id))?;
        if pass.blocking.blocked {
            let reason = self.blocked_reason(id, job, pass.now, &mut pass.blocking.fits_free);
            return Ok(Verdict::waits(reason));
        }
        if self.try_preempt(id, pass, end, decisions) {
            return Ok(Verdict::waits(PendingReason::Preempting));
        }
        let within_depth = pass.reservations < pass.depth;
        if quota_ok && (within_depth || pass.always_plan == Some(id)) {
            if within_depth {
                pass.reservations += 1;
            }
            return Ok(match self.reserve(id, pass) {
                Some(start) => Verdict::Waits {
                    reason: PendingReason::Reserved,
                    estimated_start_ms: Some(start),
                },
                None => Verdict::waits(PendingReason::Resources),
            });
        }
        let job = self.state.job(id).ok_or(NoSuchJob(id))?;
        let reason = self.unplanned_reason(id, job, pass.now, quota_ok, &mut pass.blocking);
        Ok(Verdict::waits(reason))
    }

    /// Why a job ready to run waits before anything is tried for it: an earlier job that fits
    /// waiting for a started job's readiness under `block_admission` (preemptors keep their
    /// earmarks), a blocked head ahead of
    /// it (mode `none`; a preemptor's earmark is its own, which a blocked head could not use),
    /// or its strict-FIFO queue blocked by an earlier job. `None`: it gets its turn.
    pub(in crate::scheduler) fn held_back(
        &self,
        id: JobId,
        job: &Job,
        now: u64,
        blocking: &mut Blocking,
    ) -> Option<PendingReason> {
        if blocking.ready_wait {
            return Some(PendingReason::WaitingForReady);
        }
        if blocking.blocked && !self.state.earmarks.contains_key(&id) {
            return Some(self.blocked_reason(id, job, now, &mut blocking.fits_free));
        }
        job.queue
            .is_some_and(|q| blocking.blocked_queues.contains(&q))
            .then_some(PendingReason::Quota)
    }

    /// Why a job that neither starts, preempts nor gets a reservation waits: its quota (which
    /// blocks the rest of a strict-FIFO queue); in mode `none`, resources (and every later job
    /// waits behind it); otherwise [`Scheduler::blocked_reason`].
    pub(in crate::scheduler) fn unplanned_reason(
        &self,
        id: JobId,
        job: &Job,
        now: u64,
        quota_ok: bool,
        blocking: &mut Blocking,
    ) -> PendingReason {
        if !quota_ok {
            if let Some(q) = job.queue
                && self.state.config.queues[q.index()].strict_fifo
            {
                blocking.blocked_queues.push(q);
            }
            return PendingReason::Quota;
        }
        if self.state.config.policy.backfill.mode == BackfillMode::None {
            blocking.blocked = true;
            return PendingReason::Resources;
        }
        self.blocked_reason(id, job, now, &mut blocking.fits_free)
    }

    /// Places the whole gang now: on what is free and not needed by reservations nor `held`
    /// for preemptors, counting `released` (tentative victims) as free.
    pub(in crate::scheduler) fn place_now(
        &self,
        id: JobId,
        pass: &mut Pass,
        end: u64,
        held: &BTreeMap<NodeId, NodeAmounts>,
        released: &BTreeMap<NodeId, NodeAmounts>,
    ) -> Option<Vec<Assignment>> {
        let view = NowView {
            profile: pass
                .profile
                .as_ref()
                .map(|profile| (profile, &self.state.running_ends)),
            now: pass.now,
            end,
            held,
            released,
            maintenance: &self.state.maintenance,
        };
        let candidates = IndexCandidates {
            index: &self.state.index,
            preferred: &pass.bookings.reserved_nodes,
            all_levels: !released.is_empty(),
        };
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
            && assignments_fit(&self.state.nodes, &view, gang, &plan.assignments)
        {
            return Some(plan.assignments.clone());
        }
        // The memo holds only for the one view every job without earmarks sees, and for
        // filters and scorers that answer by shape.
        let remembered = self.shortcuts
            && released.is_empty()
            && held.is_empty()
            && gate.as_ref().is_none_or(JobGate::shape_only);
        // Filters must run for `explain` to tell this job why no node passed them: a failure
        // remembered from another job of its shape does not spare it the placement.
        let filtered = gate.as_ref().is_some_and(JobGate::filters);
        if remembered && !filtered && pass.fits_now.known(&gang, end) == Some(false) {
            return None;
        }
        let placed = place_gang(&self.state.nodes, &candidates, &view, gang);
        // Only failures: a gang that fits needs its own assignments.
        if remembered && placed.is_none() {
            pass.fits_now.record(&gang, end, false);
        }
        if placed.is_none()
            && released.is_empty()
            && let Some(detail) = gate.as_ref().and_then(JobGate::nothing_passed)
        {
            pass.details.insert(id, detail);
        }
        placed
    }

    /// `priority` when the job would fit on what is free now (outside maintenance windows, with
    /// its licenses free) but reservations or a blocked head hold it back; `resources`
    /// otherwise.
    pub(in crate::scheduler) fn blocked_reason(
        &self,
        id: JobId,
        job: &Job,
        now: u64,
        fits_free: &mut FitMemo,
    ) -> PendingReason {
        if !self.state.licenses.covers(&job.licenses) {
            return PendingReason::Resources;
        }
        let none = BTreeMap::new();
        let view = NowView {
            profile: None,
            now,
            end: now.saturating_add(job.spec.time_limit_ms),
            held: &none,
            released: &none,
            maintenance: &self.state.maintenance,
        };
        let candidates = IndexCandidates {
            index: &self.state.index,
            preferred: &[],
            all_levels: false,
        };
        let gate = JobGate::of(&self.profile, self.last.figures.context(&self.state), id);
        let gang = GangRequest {
            gate: gate.as_ref().map(|g| g as &dyn NodeGate),
            ..self.state.gang_request(job)
        };
        if !self.state.index.could_hold(gang.shapes) {
            return PendingReason::Resources;
        }
        let remembered = self.shortcuts && gate.as_ref().is_none_or(JobGate::shape_only);
        let known = fits_free.known(&gang, view.end).filter(|_| remembered);
        let fits = known.unwrap_or_else(|| {
            let fits = place_gang(&self.state.nodes, &candidates, &view, gang).is_some();
            if remembered {
                fits_free.record(&gang, view.end, fits);
            }
            fits
        });
        if fits {
            PendingReason::Priority
        } else {
            PendingReason::Resources
        }
    }

    /// Plans a blocked job at the earliest time its whole gang (at `min_count`) fits and pins
    /// that reservation in the profile: the last pass's plan when it provably still is the
    /// earliest, otherwise the result of a search. `None`: it never fits, or only from a time
    /// beyond the range of [`crate::model::time`].
    fn reserve(&mut self, id: JobId, pass: &mut Pass) -> Option<u64> {
        // Taken: the pass replaces every plan anyway.
        let previous = self
            .last
            .plans
            .remove(&id)
            .filter(|plan| plan.start_ms > pass.now);
        let job = self.state.job(id)?;
        let gate = JobGate::of(&self.profile, self.last.figures.context(&self.state), id);
        let minimal: Vec<TaskShape> = job
            .shapes
            .iter()
            .map(|s| s.with_count(s.min_count))
            .collect();
        let wanted = Reservation {
            gang: GangRequest {
                shapes: &minimal,
                gate: gate.as_ref().map(|g| g as &dyn NodeGate),
                ..self.state.gang_request(job)
            },
            limit: job.spec.time_limit_ms,
            licenses: &job.licenses,
        };
        pass.verdicts_stand &= minimal.len() == 1 && wanted.gang.topology.is_none();
        let profile = pass
            .profile
            .get_or_insert_with(|| Profile::build(&self.state, pass.now));
        // Filters and scorers may change their answers between passes: plans they shaped are
        // searched again.
        let rank = self
            .kept_rank(id)
            .filter(|_| !gate.as_ref().is_some_and(JobGate::shapes_plans));
        let stands = previous.as_ref().zip(rank).is_some_and(|kept| {
            let need = (wanted.limit, wanted.licenses);
            self.plan_stands(kept, &wanted.gang, need, profile, &mut pass.confirmed)
        });
        pass.confirmed.kept += usize::from(stands);
        // A plan searched afresh need not be what the next search returns (the last plan
        // breaks ties): only kept plans are sure to be kept again.
        pass.verdicts_stand &= stands;
        let plan = match previous.as_ref().filter(|_| stands) {
            Some(kept) => kept.clone(),
            None => self.earliest_start(&wanted, profile, pass.now, previous.as_ref())?,
        };
        if plan.start_ms > crate::model::time::MAX_MS {
            // No tick reaches a start beyond the time range: it cannot be planned.
            return None;
        }
        if let Some(rank) = rank
            && (stands || previous.as_ref() == Some(&plan))
        {
            pass.confirmed.made_again(rank);
        }
        let start = plan.start_ms;
        let charges = self.state.charges_of(&plan.assignments, job.spec.exclusive);
        let limit = wanted.limit;
        pass.bookings
            .book(profile, (id, plan), charges, limit, wanted.licenses);
        Some(start)
    }

    /// Searches the earliest start of `wanted`, with its resources: the candidate times are
    /// the profile's release times and the `previous` plan's start, after `now`; the fit bounds
    /// move past hopeless stretches at once. The resources are chosen afresh, busy now first
    /// ([`FutureView`]), also at the previous plan's start: a pin follows the state of now.
    /// Within the busy and the idle class, the previous plan's resources come first, so that a
    /// plan stays put when the rule allows.
    fn earliest_start(
        &self,
        wanted: &Reservation<'_>,
        profile: &mut Profile,
        now: u64,
        previous: Option<&Plan>,
    ) -> Option<Plan> {
        let shapes = wanted.gang.shapes;
        let cpu_milli: u64 = shapes
            .iter()
            .map(|s| s.cpu_milli * u64::from(s.count))
            .sum();
        let cpus_bound_them = shapes.iter().all(|s| {
            s.gpu == GpuNeed::None && s.memory_mib == 0 && s.mode == PlacementMode::Spread
        });
        let mut cursor = now.saturating_add(1);
        loop {
            let running = &self.state.running_ends;
            let release = profile.next_release(running, cursor);
            let start = match previous.map(|p| p.start_ms).filter(|&t| t >= cursor) {
                Some(t) => release.map_or(t, |r| r.min(t)),
                None => release?,
            };
            cursor = start.saturating_add(1);
            let end = start.saturating_add(wanted.limit);
            if !profile.licenses.covers(wanted.licenses, start, end) {
                continue;
            }
            // Both bounds only skip hopeless starts. For cpu-only spread gangs the per-node one
            // (room for one task anywhere) is rarely the later: its sweep is not worth it.
            let nodes = &self.state.nodes;
            let bound =
                match profile.earliest_cpu_fit(running, nodes, cpu_milli, start, wanted.limit) {
                    b if b > start || cpus_bound_them => b,
                    _ => earliest_fit_bound((profile, running), nodes, shapes, start, wanted.limit),
                };
            if bound > start {
                if bound == u64::MAX {
                    return None;
                }
                cursor = bound;
                continue;
            }
            let view = FutureView {
                profile,
                running,
                start,
                end,
                maintenance: &self.state.maintenance,
                previous: previous.map_or(&[], |plan| &plan.assignments),
            };
            if let Some(assignments) = self.pin(&view, wanted.gang) {
                return Some(Plan {
                    start_ms: start,
                    assignments,
                });
            }
        }
    }

    /// A reservation's resources over `view`, as a fresh search places them, in a canonical
    /// order: by group and node, and on each node the tasks' devices by device. The tasks of a
    /// group are alike, so a plan reads the same whichever order the busy-first rule met its
    /// nodes and devices in (what is busy changes between passes).
    pub(in crate::scheduler) fn pin(
        &self,
        view: &FutureView<'_>,
        gang: GangRequest<'_>,
    ) -> Option<Vec<Assignment>> {
        let candidates = self.planning_candidates();
        let mut assignments = place_gang(&self.state.nodes, &candidates, view, gang)?;
        assignments.sort_by_key(|a| (a.group, a.node));
        for assignment in &mut assignments {
            sort_task_devices(assignment);
        }
        Some(assignments)
    }

    /// The candidates a reservation is placed on: every node of an allowed model, in the free
    /// index's order (a future window may use what is busy now).
    pub(in crate::scheduler) fn planning_candidates(&self) -> IndexCandidates<'_> {
        IndexCandidates {
            index: &self.state.index,
            preferred: &[],
            all_levels: true,
        }
    }

    /// Starts job `id` on `assignments` now, and counts it in the pass's profile until `end`.
    fn start(
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
        pass.blocking.unready = self.admission_blocked();
        pass.verdicts_stand &= !pass.waited;
        pass.blocking.fits_free.forget_fits();
        pass.quota_closed = None;
        if let Some(profile) = pass.profile.as_mut() {
            for (node, amounts) in self.state.node_charges(id) {
                profile.add_running(node, amounts, end);
            }
            if let Some(job) = self.state.job(id) {
                profile.licenses.add_running(&job.licenses, end);
            }
        }
        Ok(())
    }
}

/// Orders the tasks of `assignment` by their devices (each task lists the same number).
fn sort_task_devices(assignment: &mut Assignment) {
    let tasks = assignment.tasks as usize;
    if tasks < 2 || assignment.gpus.is_empty() || assignment.gpus.len() % tasks != 0 {
        return;
    }
    let per_task = assignment.gpus.len() / tasks;
    let mut chunks: Vec<&[u32]> = assignment.gpus.chunks(per_task).collect();
    chunks.sort_unstable();
    assignment.gpus = chunks.concat();
}

/// Why a job waits without being considered for resources: held, before its begin time, for
/// a dependency, or backing off after a ready timeout.
pub(in crate::scheduler) fn waiting_reason(job: &Job, now: u64) -> Option<PendingReason> {
    if job.held {
        Some(PendingReason::Held)
    } else if job.spec.begin_ms.is_some_and(|b| b > now) {
        Some(PendingReason::Begin)
    } else if !job.waiting_on.is_empty() {
        Some(PendingReason::Dependency)
    } else if job.ready.backs_off(now) {
        Some(PendingReason::Backoff)
    } else {
        None
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

impl Bookings {
    /// Books `plan` for job `id`: its per-node `charges` and its licenses are reserved in
    /// `profile` over its window, and it becomes one of the next pass's plans.
    fn book(
        &mut self,
        profile: &mut Profile,
        (id, plan): (JobId, Plan),
        charges: Vec<(NodeId, NodeAmounts)>,
        limit: u64,
        licenses: &LicenseNeed,
    ) {
        let (start, end) = (plan.start_ms, plan.start_ms.saturating_add(limit));
        for (node, amounts) in charges {
            profile.reserve(node, amounts, start, end);
            self.reserved_nodes.push(node);
        }
        profile.licenses.reserve(licenses, start, end);
        self.reserved_nodes.sort_unstable();
        self.reserved_nodes.dedup();
        self.plans.push((id, plan));
    }
}
