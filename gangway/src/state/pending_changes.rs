//! The pending jobs whose place in the order may have changed since the scheduler last read
//! them: a job became pending (a submit, a requeue), left (a start, an end), or had its base
//! priority or time limit set. The scheduler's order index ([`crate::scheduler`]'s `order_index`) reads and
//! clears it at every pass instead of walking every pending job.
//!
//! It is derived memory: a snapshot does not keep it (a restored scheduler rebuilds its index),
//! and it gives up (and says so) once it holds more ids than there are pending jobs, so a
//! host that ticks without passes cannot make it grow without bound.

use crate::model::ids::JobId;

/// How many ids past the pending count the list holds before it gives up.
const SLACK: usize = 1024;

/// The changed jobs since the last read, in the order they changed (a job may repeat).
#[derive(Clone, Debug, Default)]
pub(crate) struct PendingChanges {
    ids: Vec<JobId>,
    /// More changed than the list holds: whoever reads it must rebuild from the state.
    overflowed: bool,
}

impl PendingChanges {
    /// Notes that `id`'s place may have changed, with `pending` jobs pending now.
    pub(crate) fn note(&mut self, id: JobId, pending: usize) {
        if self.overflowed {
            return;
        }
        if self.ids.len() > pending.saturating_add(SLACK) {
            self.overflowed = true;
            self.ids = Vec::new();
        } else {
            self.ids.push(id);
        }
    }

    /// The changed jobs since the last read (`None` when the list gave up), and a fresh start.
    pub(crate) fn take(&mut self) -> Option<Vec<JobId>> {
        let overflowed = std::mem::take(&mut self.overflowed);
        let ids = std::mem::take(&mut self.ids);
        (!overflowed).then_some(ids)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_returns_what_changed_and_starts_afresh() {
        let mut changes = PendingChanges::default();
        changes.note(JobId(3), 10);
        changes.note(JobId(1), 10);
        changes.note(JobId(3), 10);
        assert_eq!(changes.take(), Some(vec![JobId(3), JobId(1), JobId(3)]));
        assert_eq!(changes.take(), Some(vec![]));
    }

    #[test]
    fn past_the_pending_count_it_gives_up_until_read() {
        let mut changes = PendingChanges::default();
        for i in 0..=(SLACK as u32 + 1) {
            changes.note(JobId(i), 0);
        }
        assert_eq!(changes.take(), None);
        changes.note(JobId(7), 0);
        assert_eq!(changes.take(), Some(vec![JobId(7)]));
    }
}
