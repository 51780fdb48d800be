//! Conservative backfill with compression (Mu'alem & Feitelson 2001;
//! [`crate::config::BackfillConfig::compress`]): every reservation the last pass left is booked
//! into the pass's profile before the first turn, so that no job, whatever its place in the
//! order, plans or starts into another's window. At its own turn a job takes its reservation
//! back out ([`Scheduler::take_back_kept`]) and is placed now or planned again around all the
//! others ([`Scheduler::reserve`]): at the earliest start, which is no later than its own
//! unless one of the causes docs/protocol.md lists took the room it was booked on.

use std::collections::BTreeMap;

use crate::config::BackfillMode;
use crate::model::ids::{JobId, NodeId};
use crate::model::resources::NodeAmounts;
use crate::scheduler::Scheduler;
use crate::scheduler::pass::Pass;
use crate::state::JobState;
use crate::state::licenses::LicenseNeed;

/// A reservation of the last pass, booked into this pass's profile until its job's turn.
#[derive(Debug)]
pub(super) struct KeptBooking {
    charges: Vec<(NodeId, NodeAmounts)>,
    start: u64,
    end: u64,
    licenses: LicenseNeed,
}

/// The last pass's reservations booked into this one's profile, by job.
pub(super) type KeptBookings = BTreeMap<JobId, KeptBooking>;

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
            let end = plan
                .end_ms
                .unwrap_or_else(|| plan.start_ms.saturating_add(job.spec.time_limit_ms));
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
        // Failures to fit remembered this pass assumed the usage only grows.
        pass.fits_now = Default::default();
    }
}
