//! Conservative backfill with compression (Mu'alem & Feitelson 2001;
//! [`crate::config::BackfillConfig::compress`]): every reservation the last pass left is booked
//! into the pass's profile before the first turn, so that no job, whatever its place in the
//! order, plans or starts into another's window. At its own turn a job takes its reservation
//! back out ([`Scheduler::take_back_kept`]) and is placed now or planned again around all the
//! others ([`Scheduler::reserve`]): at the earliest start, which is no later than its own
//! unless one of the causes docs/protocol.md lists took the room it was booked on.
//!
//! Reservations keep their starts, not their pins: where the cluster's free cpus, summed, hold
//! a cpu-only gang earlier than the other reservations' pins leave it nodes for
//! ([`Scheduler::repin_for_turn`]), every reservation is pinned again at its own start, in
//! start order, with the turn's job among them at that earlier start. On identical nodes that
//! is interval colouring, which succeeds whenever the counts allow: what a count-based
//! conservative backfill plans, gangway plans.

use std::collections::BTreeMap;

use crate::config::BackfillMode;
use crate::model::ids::{JobId, NodeId};
use crate::model::resources::NodeAmounts;
use crate::placement::Assignment;
use crate::scheduler::pass::Pass;
use crate::scheduler::pass::node_gate::JobGate;
use crate::scheduler::pass::reserve::{cpu_milli, cpus_bound, minimal_shapes};
use crate::scheduler::{Plan, Scheduler};
use crate::state::JobState;
use crate::state::licenses::LicenseNeed;

/// A reservation's amounts by node, as booked in the profile.
type Charges = Vec<(NodeId, NodeAmounts)>;

/// A reservation of the last pass, booked into this pass's profile until its job's turn.
#[derive(Debug)]
pub(super) struct KeptBooking {
    charges: Charges,
    start: u64,
    end: u64,
    licenses: LicenseNeed,
}

/// The last pass's reservations booked into this one's profile, by job.
pub(super) type KeptBookings = BTreeMap<JobId, KeptBooking>;

/// Where a reservation pinned again lives.
enum Held {
    /// A kept booking of the last pass ([`Pass::kept`]), its plan in the scheduler's.
    Kept,
    /// This pass's `i`th plan.
    Made(usize),
    /// The turn's job, at the earlier start sought.
    Turn,
}

/// A reservation as it is pinned again: its job, its window, its resources and their charges
/// before, and where it lives.
struct Repin {
    id: JobId,
    start: u64,
    end: u64,
    old: Vec<Assignment>,
    old_charges: Charges,
    held: Held,
}

/// The end of the window `plan` (of a job whose time limit is `limit`) was booked for.
fn window_end(plan: &Plan, limit: u64) -> u64 {
    plan.end_ms
        .unwrap_or_else(|| plan.start_ms.saturating_add(limit))
}

impl Scheduler {
    /// Whether backfill is conservative with compression.
    pub(in crate::scheduler) fn compresses(&self) -> bool {
        let backfill = &self.state.config.policy.backfill;
        backfill.mode == BackfillMode::Conservative && backfill.compress
    }

    /// Under compression, books the last pass's reservation of every pending job into the
    /// pass's profile over the window it was made for, from now at the earliest (a window due
    /// now is its job's to start in). Other modes book nothing.
    pub(super) fn book_kept(&mut self, pass: &mut Pass) {
        if !self.compresses() || self.last.plans.is_empty() {
            return;
        }
        let now = pass.now;
        let profile = self.pass_profile(&mut pass.profile, now);
        for (&id, plan) in &self.last.plans {
            let Some(job) = self.state.job(id).filter(|j| j.state == JobState::Pending) else {
                continue;
            };
            let start = plan.start_ms.max(now);
            let end = window_end(plan, job.spec.time_limit_ms);
            if end <= start {
                continue;
            }
            let charges = self.state.charges_of(&plan.assignments, job.spec.exclusive);
            profile.reserve_all(&charges, start, end);
            profile.licenses.reserve(&job.licenses, start, end);
            let booking = KeptBooking {
                charges,
                start,
                end,
                licenses: job.licenses.clone(),
            };
            pass.kept.insert(id, booking);
        }
    }

    /// Takes job `id`'s kept reservation out of the pass's profile at the start of its turn:
    /// whatever the turn comes to (a start, a plan no later than it, or a wait for another
    /// reason, which gives the reservation up) is decided around the others alone.
    pub(super) fn take_back_kept(&mut self, id: JobId, pass: &mut Pass) {
        let Some(booking) = pass.kept.remove(&id) else {
            return;
        };
        if let Some(profile) = pass.profile.as_mut() {
            profile.unreserve_all(&booking.charges, booking.start, booking.end);
            profile
                .licenses
                .unreserve(&booking.licenses, booking.start, booking.end);
        }
        pass.forget_placement_memos();
    }

    /// Under compression, at job `id`'s turn (its own booking taken back), before it is placed
    /// or planned: where its gang needs cpus only and the cluster's free cpus, summed, hold it
    /// from a time earlier than its last plan's start (any time, for a job without one), its
    /// licenses are free then, but the other reservations' pins leave it no nodes, pins every
    /// reservation of the pass again at its own start, in start order (ties by job), with
    /// `id`'s at that time among them, each on what the running jobs and the reservations
    /// pinned before it leave (busy first, its old resources first among equals). When every
    /// one fits, the new pins replace the old and `id`'s becomes its plan, which its turn
    /// then starts now, keeps or betters ([`Scheduler::reserve`]); else every pin stays as it
    /// was. No start moves.
    pub(super) fn repin_for_turn(&mut self, id: JobId, pass: &mut Pass) {
        if !self.compresses() {
            return;
        }
        let now = pass.now;
        let profile = self.pass_profile(&mut pass.profile, now);
        let Some(job) = self.state.job(id) else {
            return;
        };
        let minimal = minimal_shapes(job);
        if !cpus_bound(&minimal) {
            return;
        }
        let limit = job.spec.time_limit_ms;
        let (running, nodes) = (&self.state.running_ends, &self.state.nodes);
        let start = profile.earliest_cpu_fit(running, nodes, cpu_milli(&minimal), now, limit);
        let previous = self.last.plans.get(&id);
        if start > crate::model::time::MAX_MS || previous.is_some_and(|p| p.start_ms <= start) {
            return;
        }
        let end = start.saturating_add(limit);
        if !profile.licenses.covers(&job.licenses, start, end) {
            // Licenses are counted apart from the nodes: pins cannot give what they refuse.
            return;
        }
        let old = previous.map_or_else(Vec::new, |p| p.assignments.clone());
        let gate = JobGate::of(&self.profile, self.last.figures.context(&self.state), id);
        let wanted = self.reservation(job, &minimal, gate.as_ref());
        if self
            .pin(&self.future_view(profile, (start, end), &old), wanted.gang)
            .is_some()
        {
            // The turn finds that start around the pins as they are.
            return;
        }
        let mut repins = self.pass_reservations(pass);
        repins.push(Repin {
            id,
            start,
            end,
            old,
            old_charges: Vec::new(),
            held: Held::Turn,
        });
        repins.sort_by_key(|r| (r.start, r.id));
        let Some(pinned) = self.pin_in_start_order(&repins, pass) else {
            return;
        };
        for (repin, (assignments, charges)) in repins.into_iter().zip(pinned) {
            match repin.held {
                Held::Kept => {
                    if let Some(booking) = pass.kept.get_mut(&repin.id) {
                        booking.charges = charges;
                    }
                    if let Some(plan) = self.last.plans.get_mut(&repin.id) {
                        plan.assignments = assignments;
                    }
                }
                Held::Made(i) => pass.bookings.plans[i].1.assignments = assignments,
                Held::Turn => {
                    // Taken back out: the turn books what it comes to.
                    if let Some(profile) = pass.profile.as_mut() {
                        profile.unreserve_all(&charges, repin.start, repin.end);
                    }
                    let plan = Plan {
                        start_ms: repin.start,
                        assignments,
                        end_ms: Some(repin.end),
                    };
                    self.last.plans.insert(id, plan);
                }
            }
        }
        pass.forget_placement_memos();
    }

    /// Every reservation booked in the pass's profile: the kept bookings of the jobs whose
    /// turns are to come and the plans this pass made.
    fn pass_reservations(&self, pass: &Pass) -> Vec<Repin> {
        let kept = pass.kept.iter().filter_map(|(&id, booking)| {
            let plan = self.last.plans.get(&id)?;
            Some(Repin {
                id,
                start: booking.start,
                end: booking.end,
                old: plan.assignments.clone(),
                old_charges: booking.charges.clone(),
                held: Held::Kept,
            })
        });
        let made = pass.bookings.plans.iter().enumerate();
        let made = made.filter_map(|(i, (id, plan))| {
            let job = self.state.job(*id)?;
            Some(Repin {
                id: *id,
                start: plan.start_ms,
                end: window_end(plan, job.spec.time_limit_ms),
                old: plan.assignments.clone(),
                old_charges: self.state.charges_of(&plan.assignments, job.spec.exclusive),
                held: Held::Made(i),
            })
        });
        kept.chain(made).collect()
    }

    /// Takes `repins`' old pins out of the pass's profile and pins each again, in their order,
    /// at its own window on what the ones before it left, booking it: every one's resources
    /// and charges. `None`: one found no room; the old pins are booked back as they were.
    fn pin_in_start_order(
        &self,
        repins: &[Repin],
        pass: &mut Pass,
    ) -> Option<Vec<(Vec<Assignment>, Charges)>> {
        let profile = pass.profile.as_mut()?;
        for repin in repins.iter().filter(|r| !r.old_charges.is_empty()) {
            profile.unreserve_all(&repin.old_charges, repin.start, repin.end);
        }
        let mut pinned = Vec::with_capacity(repins.len());
        for repin in repins {
            let Some(job) = self.state.job(repin.id) else {
                break;
            };
            let minimal = minimal_shapes(job);
            let gate = JobGate::of(
                &self.profile,
                self.last.figures.context(&self.state),
                repin.id,
            );
            let wanted = self.reservation(job, &minimal, gate.as_ref());
            let view = self.future_view(profile, (repin.start, repin.end), &repin.old);
            let Some(assignments) = self.pin(&view, wanted.gang) else {
                break;
            };
            let charges = self.state.charges_of(&assignments, job.spec.exclusive);
            profile.reserve_all(&charges, repin.start, repin.end);
            pinned.push((assignments, charges));
        }
        if pinned.len() == repins.len() {
            return Some(pinned);
        }
        for (repin, (_, charges)) in repins.iter().zip(&pinned) {
            profile.unreserve_all(charges, repin.start, repin.end);
        }
        for repin in repins.iter().filter(|r| !r.old_charges.is_empty()) {
            profile.reserve_all(&repin.old_charges, repin.start, repin.end);
        }
        None
    }
}
