//! The pass, one stage a module, in the order docs/design.md ("One pass") numbers them:
//!
//! 1. charge usage, 2. forget old jobs, 3. apply events: the state's own steps
//!    (`ClusterState`), run by [`Scheduler::tick`](crate::Scheduler::tick);
//! 4. [`enforce`]: kill what passed its time limit or its preemption grace;
//! 5. [`order`]: the admission plug-ins' votes and the pending order (tiers, the order
//!    plug-ins' keys, submit time, arrival) with its slot rules (admission fair sharing, fair
//!    sharing's tournament);
//! 6. this module: walk the order once; for each job that may run (not held, past its begin
//!    time, its dependencies met), [`quota`] (may its queue admit it), [`place`] it now (the
//!    profile's node filters and scorers: [`node_gate`]; past a blocked [`head`] only as its
//!    backfill rule allows), else [`preempt`] for it, else [`reserve`] for it within the
//!    backfill depth;
//! 7. [`report`]: each pending job's position, reason and estimated start;
//! 8. the next wake-up ([`Scheduler::tick`](crate::Scheduler::tick)).
//!
//! What a pass may skip because the last one already knew it lives in
//! [`crate::scheduler::shortcuts`], each with its argument.

mod compress;
pub(in crate::scheduler) mod enforce;
pub(in crate::scheduler) mod head;
pub(in crate::scheduler) mod node_gate;
pub(in crate::scheduler) mod order;
mod place;
pub(in crate::scheduler) mod preempt;
pub(in crate::scheduler) mod quota;
pub(in crate::scheduler) mod report;
mod reserve;

use crate::placement::score_memo::ScoreMemo;
use place::Purpose;
pub(in crate::scheduler) use place::placement_entries;
use reserve::Bookings;

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::backfill::Availability;
use crate::config::BackfillMode;
use crate::decision::{Decision, PendingReason};
use crate::event::Event;
use crate::model::ids::{JobId, NodeId};
use crate::model::resources::NodeAmounts;
use crate::policy::PassFigures;
use crate::quota::QueueId;
use crate::scheduler::Scheduler;
use crate::scheduler::pass::order::calc_period::PriorityCalc;
use crate::scheduler::pass::order::slots::PassOrder;
use crate::scheduler::pass::preempt::RunningByQueue;
use crate::scheduler::pass::report::PendingEntry;
use crate::scheduler::shortcuts::fit_memo::{EarmarkedFits, FitMemo};
use crate::scheduler::shortcuts::kept_plans::Confirmed;
use crate::scheduler::shortcuts::resume::Resumable;
use crate::scheduler::shortcuts::settled::{AfterSettling, DeferredReport};
use crate::state::Job;

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
    /// A reason was read from a placement of several task groups or with a topology
    /// constraint: such a greedy placement depends on more than what is free (the shape mix
    /// breaks ties among GPU nodes, and every GPU submit changes it), so the verdict may not
    /// stand at the next tick ([`crate::scheduler::shortcuts::resume`]).
    pub(in crate::scheduler) heuristic_fit_read: bool,
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
    pub(in crate::scheduler) profile: Option<Availability>,
    /// The reservations made in this pass.
    bookings: Bookings,
    /// Under compression, the last pass's reservations still booked, until their jobs' turns.
    kept: compress::KeptBookings,
    /// A job planned even beyond the backfill depth (a what-if question's job).
    pub(in crate::scheduler) always_plan: Option<JobId>,
    /// Whether `always_plan` has had its turn.
    pub(in crate::scheduler) always_planned: bool,
    /// Placements now (around reservations, nothing earmarked) already tried in this pass.
    pub(in crate::scheduler) fits_now: FitMemo,
    /// Placements now around every earmark already tried since the earmarks last changed.
    pub(in crate::scheduler) fits_earmarked: EarmarkedFits,
    /// Whether no queue admits the least any pending job demands; known until a job starts.
    pub(in crate::scheduler) quota_closed: Option<bool>,
    /// What the earmarks promise, kept while they and the usage stay as they are.
    pub(in crate::scheduler) promised: quota::PromisedQuota,
    /// What the earmarks hold on the nodes, kept while they stay as they are.
    pub(in crate::scheduler) holds: place::EarmarkHolds,
    /// Unplaced jobs' quota verdicts, kept while the earmarks and the usage stay as they are.
    pub(in crate::scheduler) unplaced_fits: quota::UnplacedFits,
    /// Fragmentation scores of placements now, by partition, shape and node state.
    pub(in crate::scheduler) scores: ScoreMemo,
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
    /// Turns that counts ended at once ([`Scheduler::counted_turn`]).
    counted_out: u64,
    /// Whether this pass continues the last one (which keeps its plans).
    pub(in crate::scheduler) resumed: bool,
    /// The running jobs by queue, gathered at the pass's first preemption search.
    pub(in crate::scheduler) running_by_queue: Option<RunningByQueue>,
    /// Running jobs sorted by order for order-based preemption in this pass
    /// ([`preempt::RunningKeys`]).
    pub(in crate::scheduler) running_keys: preempt::RunningKeys,
    /// Running jobs in victim order for order-based preemption, from the last pass to this
    /// one and on to the next ([`preempt::VictimOrders`]).
    pub(in crate::scheduler) victim_orders: preempt::VictimOrders,
    /// Running jobs' places in the victim order, made once per pass and partition
    /// ([`preempt::VictimRanks`]).
    pub(in crate::scheduler) victim_ranks: preempt::VictimRanks,
    /// Order-based searches of this pass that found no room ([`preempt::NoRoom`]).
    pub(in crate::scheduler) no_room: preempt::NoRoom,
    /// Searches' candidates, kept for later searches of preemptors alike
    /// ([`preempt::CandidateMemo`]).
    pub(in crate::scheduler) candidates: preempt::CandidateMemo,
    /// This pass's head, where passes track one ([`head`]).
    pub(in crate::scheduler) head: Option<head::Head>,
    /// The last pass's head, until this pass finds its own.
    pub(in crate::scheduler) carried: Option<head::Head>,
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
            kept: compress::KeptBookings::new(),
            always_plan,
            always_planned: false,
            fits_now: FitMemo::default(),
            promised: quota::PromisedQuota::default(),
            unplaced_fits: quota::UnplacedFits::default(),
            fits_earmarked: EarmarkedFits::default(),
            quota_closed: None,
            scores: ScoreMemo::default(),
            confirmed: Confirmed::default(),
            denied,
            details: BTreeMap::new(),
            verdicts_stand: true,
            waited: false,
            counted_out: 0,
            resumed: false,
            running_by_queue: None,
            running_keys: preempt::RunningKeys::default(),
            victim_orders: preempt::VictimOrders::default(),
            victim_ranks: preempt::VictimRanks::default(),
            no_room: preempt::NoRoom::default(),
            candidates: preempt::CandidateMemo::default(),
            holds: place::EarmarkHolds::default(),
            head: None,
            carried: None,
        }
    }

    /// This pass, continued at `now` with new jobs after the ones it visited
    /// ([`crate::scheduler::shortcuts::resume`]), with the admission plug-ins' `denied` and the
    /// filters' `details` of now. What it remembered of its own time and jobs goes: the
    /// placement memos (now and around the earmarks, and the waiting jobs' reasons) were made
    /// for windows that started then; the quota's closure and promise read the usage of then;
    /// the fragmentation scores were measured against a shape mix that the new jobs joined.
    pub(in crate::scheduler) fn continue_at(
        &mut self,
        now: u64,
        denied: BTreeMap<JobId, String>,
        details: BTreeMap<JobId, String>,
    ) {
        self.now = now;
        self.quota_closed = None;
        self.fits_now = FitMemo::default();
        self.promised = quota::PromisedQuota::default();
        self.fits_earmarked = EarmarkedFits::default();
        self.blocking.fits_free = FitMemo::default();
        self.scores = ScoreMemo::default();
        self.denied = denied;
        self.details = details;
        self.resumed = true;
    }

    /// Forgets what the placement memos (now, and around the earmarks) remember: they assume
    /// that capacity only shrinks during a pass, and a booking taken back or moved in the
    /// profile just gave some back.
    pub(in crate::scheduler) fn forget_placement_memos(&mut self) {
        self.fits_now = FitMemo::default();
        self.fits_earmarked = EarmarkedFits::default();
    }

    /// The memo of placements now for a view that holds `held` for preemptors: the pass's own
    /// where nothing is held, else the one kept around every earmark, as of the state's earmark
    /// `changes` ([`EarmarkedFits::at`]).
    fn memo_for(
        &mut self,
        held: &BTreeMap<NodeId, NodeAmounts>,
        changes: (u64, u64),
    ) -> &mut FitMemo {
        match held.is_empty() {
            true => &mut self.fits_now,
            false => self.fits_earmarked.at(changes),
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

    /// The figures of a pass at `now`: its own, or under `policy.priority.calc_period_ms`
    /// its own time and totals with the fair-share factors of the last calculation, which it
    /// makes when one is due ([`order::calc_period`]).
    fn pass_figures(&mut self, now: u64) -> PassFigures {
        let Some(period) = self.state.config.policy.priority.calc_period_ms else {
            self.last.priority_calc = None;
            return PassFigures::new(&self.state, now);
        };
        let calc = match self.last.priority_calc.take() {
            Some(calc) if !calc.due(now, period) => calc,
            _ => PriorityCalc::new(&self.state, now),
        };
        let figures = PassFigures::with_shares_of(&self.state, now, calc.figures());
        self.last.priority_calc = Some(calc);
        figures
    }

    /// One pass at `now`, after `events` were applied (what the profile's `prepare` hooks
    /// see). `always_plan` gets a reservation when resource-blocked even beyond the backfill
    /// depth (without using up the depth). Returns the earliest begin time of a pending job
    /// after `now` (such a job stays pending).
    pub(in crate::scheduler) fn run_pass(
        &mut self,
        now: u64,
        always_plan: Option<JobId>,
        decisions: &mut Vec<Decision>,
        events: &[Event],
    ) -> Option<u64> {
        self.last.figures = Arc::new(self.pass_figures(now));
        self.last.veto_ends_ms = None;
        let figures = Arc::clone(&self.last.figures);
        self.profile.prepare(&figures.context(&self.state), events);
        let order::KeyedPending {
            order,
            summary: pending,
            denied,
        } = self.keyed_pending(now);
        let quiet = always_plan.is_none() && decisions.is_empty();
        let (mut pass, mut order, mut report) = match self.resume(now, quiet, order, denied) {
            Ok((pass, list, report)) => (pass, PassOrder::plain(list), report),
            Err((order, denied)) => {
                let depth = self.state.backfill_depth();
                let mut pass = Box::new(Pass::new(now, depth, always_plan, denied));
                pass.blocking.unready = self.admission_blocked();
                self.book_kept(&mut pass);
                // The last report's memory, for this one's entries.
                let mut report = std::mem::take(&mut self.last.report);
                report.clear();
                (pass, self.pass_order(order), report)
            }
        };
        self.last.deferred = None;
        pass.carried = self.last.head.take();
        pass.victim_orders = std::mem::take(&mut self.last.victim_orders);
        // A pinned head has the first turn, whatever the order says.
        let pinned = self.pinned_head(&pass);
        if let Some(id) = pinned {
            self.turn(id, (&mut pass, &mut order, &mut report), decisions);
        }
        loop {
            if self.settled(&mut pass, &pending) {
                match self.what_if_job_after_settling(&pass) {
                    AfterSettling::Stop => break,
                    AfterSettling::Turn(id) => {
                        self.turn(id, (&mut pass, &mut order, &mut report), decisions);
                        break;
                    }
                    AfterSettling::Walk => {}
                }
            }
            if pass.head.is_some() && self.candidates_by_submit() {
                // Behind a head-rule head, the rest are tried in submit order.
                let mut rest = Vec::new();
                while let Some(id) = self.next_turn(&mut order, &mut pass.promised) {
                    rest.extend(Some(id).filter(|&id| Some(id) != pinned));
                }
                rest.sort_by_key(|&id| self.state.job(id).map(|job| (job.submit_ms, job.arrival)));
                for id in rest {
                    self.turn(id, (&mut pass, &mut order, &mut report), decisions);
                }
                break;
            }
            let Some(id) = self.next_turn(&mut order, &mut pass.promised) else {
                break;
            };
            if Some(id) != pinned {
                self.turn(id, (&mut pass, &mut order, &mut report), decisions);
            }
        }
        self.last.report = report;
        self.finish(pass, order);
        pending.next_begin_ms
    }

    /// `id`'s turn in the pass: its verdict, reported when it waits.
    fn turn(
        &mut self,
        id: JobId,
        (pass, order, report): (&mut Pass, &mut PassOrder, &mut Vec<PendingEntry>),
        decisions: &mut Vec<Decision>,
    ) {
        pass.always_planned |= pass.always_plan == Some(id);
        // A job missing from the state has nothing to report.
        match self.consider(id, pass, decisions) {
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
            Ok(Verdict::Started) => self.turn_started(order, id),
            Err(NoSuchJob(_)) => {}
        }
    }

    /// Hands a finished pass's results to the scheduler: its deferred report, denials,
    /// filter details and plans; and keeps its state for the next tick when that may continue
    /// it ([`crate::scheduler::shortcuts::resume`]).
    fn finish(&mut self, mut pass: Box<Pass>, order: PassOrder) {
        let (visited, taken) = order.into_parts(&self.state);
        let settled = taken < visited.len();
        let visited = if settled {
            self.last.deferred = Some(DeferredReport {
                visited,
                from: taken,
                now: pass.now,
                blocked: pass.blocking.blocked,
                blocked_queues: pass.blocking.blocked_queues.clone(),
                ready_wait: pass.blocking.ready_wait,
            });
            None
        } else {
            Some(visited)
        };
        self.last.details = std::mem::take(&mut pass.details);
        self.last.victim_orders = std::mem::take(&mut pass.victim_orders);
        self.last.quota_verdicts_reused += pass.unplaced_fits.take_reused();
        self.last.placements_spared += pass.unplaced_fits.take_spared();
        self.last.turns_counted_out += std::mem::take(&mut pass.counted_out);
        self.last.head = pass.head.take().filter(|_| self.keeps_head());
        self.last.denied = pass.denied.clone();
        let plans = std::mem::take(&mut pass.bookings.plans);
        pass.bookings.order.extend(plans.iter().map(|(id, _)| *id));
        let epoch = self.state.releases.epoch();
        let mut kept = self.last.kept.take().unwrap_or_default();
        kept.renew(epoch, &pass.bookings.order, &pass.confirmed);
        self.state.releases.forget_through(kept.oldest_epoch());
        self.last.kept = Some(kept);
        if !pass.resumed {
            self.last.plans.clear();
        }
        self.last.plans.extend(plans);
        let continuable = self.continuable(&pass);
        if !continuable {
            self.last.spare(pass.profile.take());
        }
        self.last.resume.state = continuable.then(|| Resumable {
            pass,
            visited,
            waiting: self.state.pending_count(),
            epoch,
            mix_epoch: self.state.mix_epoch,
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
        self.take_back_kept(id, pass);
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
        self.repin_for_turn(id, pass);
        let job = self.state.job(id).ok_or(NoSuchJob(id))?;
        if let Some(reason) = self.counted_turn(id, job, pass) {
            pass.counted_out += 1;
            return Ok(Verdict::waits(reason));
        }
        let end = pass.now.saturating_add(job.spec.time_limit_ms);
        let held = pass.holds.except(&self.state, id);
        let placed = self.place_now(id, pass, end, &held, &place::NOTHING, Purpose::Turn);
        let quota_ok = match &placed {
            // A verdict that is the same on every placement is the unplaced one, which the
            // placement's quota check has just asked and kept (nothing changed since).
            Some(assignments) if self.shortcuts && self.quota_verdict_placement_free(id) => {
                let earmarks = pass.promised.of(&self.state);
                let fits = self.quota_fits_unplaced_memo(&mut pass.unplaced_fits, earmarks, id);
                debug_assert_eq!(
                    fits,
                    self.quota_fits(
                        earmarks,
                        id,
                        &[],
                        false,
                        false,
                        &self.assignments_demand(id, assignments)
                    ),
                    "a quota verdict said to be the same on every placement differs on this one"
                );
                fits
            }
            Some(assignments) => {
                let demand = self.assignments_demand(id, assignments);
                let earmarks = pass.promised.of(&self.state);
                self.quota_fits(earmarks, id, &[], false, false, &demand)
            }
            None => {
                let earmarks = pass.promised.of(&self.state);
                self.quota_fits_unplaced_memo(&mut pass.unplaced_fits, earmarks, id)
            }
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
            if !self.may_pass_head(id, pass) {
                return Ok(Verdict::waits(PendingReason::Priority));
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
            let reason = self.blocked_reason(id, job, pass.now, &mut pass.blocking);
            return Ok(Verdict::waits(reason));
        }
        if self.try_preempt(id, pass, end, decisions) {
            return Ok(Verdict::waits(PendingReason::Preempting));
        }
        if quota_ok && pass.head.is_none() && self.state.config.policy.backfill.mode.head_rule() {
            // The head of a head rule: no reservation, its frozen estimate reported.
            let estimated_start_ms = self.note_head(id, pass, None);
            return Ok(Verdict::Waits {
                reason: PendingReason::Resources,
                estimated_start_ms,
            });
        }
        let within_depth = pass.reservations < pass.depth;
        if quota_ok && (within_depth || pass.always_plan == Some(id)) {
            if within_depth {
                pass.reservations += 1;
            }
            let planned = self.reserve(id, pass);
            if within_depth {
                self.note_head(id, pass, planned);
            }
            return Ok(match planned {
                Some(start) => Verdict::Waits {
                    reason: PendingReason::Reserved,
                    estimated_start_ms: Some(start),
                },
                None => Verdict::waits(PendingReason::Resources),
            });
        }
        let job = self.state.job(id).ok_or(NoSuchJob(id))?;
        let reason = self.unplanned_reason(id, job, pass.now, quota_ok, &mut pass.blocking);
        if quota_ok && self.state.config.policy.backfill.mode == BackfillMode::None {
            // The job that blocks every later one.
            self.note_head(id, pass, None);
        }
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
            return Some(self.blocked_reason(id, job, now, blocking));
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
        self.blocked_reason(id, job, now, blocking)
    }
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
