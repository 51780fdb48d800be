//! Licenses over time, for backfill: what running jobs hold until their expected end and what
//! the pass's reservations hold, so a job needing licenses is planned like any other resource.

use crate::state::ClusterState;
use crate::state::licenses::LicenseNeed;

/// Licenses held over time: running jobs until their end, reservations over their window.
#[derive(Clone, Debug, Default)]
pub(crate) struct LicenseProfile {
    now: u64,
    total: Vec<u32>,
    /// Running jobs' licenses with the time each is expected to end.
    running: Vec<(u64, LicenseNeed)>,
    /// Reservations' licenses over `[start, end)`.
    reserved: Vec<(u64, u64, LicenseNeed)>,
}

impl LicenseProfile {
    /// Nothing held, at `now`, with these totals by license index.
    pub(crate) fn new(now: u64, total: Vec<u32>) -> Self {
        LicenseProfile {
            now,
            total,
            ..LicenseProfile::default()
        }
    }

    /// The totals of `state`'s licenses, none held yet (the caller adds the running jobs).
    pub(crate) fn of(state: &ClusterState, now: u64) -> Self {
        let licenses = &state.licenses;
        Self::new(
            now,
            (0..licenses.len()).map(|l| licenses.total(l)).collect(),
        )
    }

    /// A running job holds `need` until `end`.
    pub(crate) fn add_running(&mut self, need: &LicenseNeed, end: u64) {
        if !need.is_empty() {
            self.running.push((end, need.clone()));
        }
    }

    /// A reservation holds `need` over `[start, end)`.
    pub(crate) fn reserve(&mut self, need: &LicenseNeed, start: u64, end: u64) {
        if !need.is_empty() {
            self.reserved.push((start, end, need.clone()));
        }
    }

    /// Takes back a reservation of `need` over `[start, end)` made before.
    pub(crate) fn unreserve(&mut self, need: &LicenseNeed, start: u64, end: u64) {
        if let Some(at) = self
            .reserved
            .iter()
            .position(|(s, e, n)| (*s, *e) == (start, end) && n == need)
        {
            self.reserved.remove(at);
        }
    }

    /// Whether `need` is free during the whole of `[start, end)`. At `start == now` every
    /// running job holds its licenses, even one past its limit.
    pub(crate) fn covers(&self, need: &LicenseNeed, start: u64, end: u64) -> bool {
        need.iter().all(|&(license, count)| {
            let mut peak = self.usage_at(license, start);
            for (from, _, _) in &self.reserved {
                if *from > start && *from < end {
                    peak = peak.max(self.usage_at(license, *from));
                }
            }
            let total = self.total.get(license).copied().unwrap_or(0);
            total.saturating_sub(peak) >= count
        })
    }

    fn usage_at(&self, license: usize, at: u64) -> u32 {
        let held = |need: &LicenseNeed| {
            need.iter()
                .filter(|(l, _)| *l == license)
                .map(|(_, n)| *n)
                .sum::<u32>()
        };
        let running: u32 = self
            .running
            .iter()
            .filter(|(end, _)| at == self.now || *end > at)
            .map(|(_, need)| held(need))
            .sum();
        let reserved: u32 = self
            .reserved
            .iter()
            .filter(|(from, to, _)| *from <= at && at < *to)
            .map(|(_, _, need)| held(need))
            .sum();
        running + reserved
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn running_jobs_hold_until_their_end_and_reservations_over_their_window() {
        let mut profile = LicenseProfile::new(0, vec![10]);
        profile.add_running(&vec![(0, 6)], 100);
        assert!(profile.covers(&vec![(0, 4)], 0, 50));
        assert!(!profile.covers(&vec![(0, 5)], 0, 50));
        assert!(profile.covers(&vec![(0, 10)], 100, 200));
        profile.reserve(&vec![(0, 8)], 150, 300);
        assert!(!profile.covers(&vec![(0, 5)], 100, 200));
    }

    /// A window has a license free when it is free at the window's start and at every
    /// reservation's start inside it: at now every running job holds its licenses, one past its
    /// end too; later, a job holds them until its end and a reservation over its window; each
    /// license is counted apart. Taking back a reservation takes back that one alone.
    #[test]
    fn a_window_reads_its_start_and_the_reservations_starting_inside_it() {
        let (matlab, ansys) = (|n| vec![(0, n)], |n| vec![(1, n)]);
        let mut profile = LicenseProfile::new(10, vec![5, 2]);
        profile.add_running(&matlab(2), 5);
        profile.add_running(&vec![(0, 1), (1, 1)], 100);
        profile.add_running(&matlab(1), 55);
        profile.add_running(&vec![], 50);
        profile.reserve(&matlab(3), 200, 300);
        profile.reserve(&matlab(3), 50, 150);
        // Matlab in use: 4 at now, 2 until 50, 5 until 55, 4 until 100, 3 until 150, none
        // until 200, 3 until 300.
        assert!(profile.covers(&matlab(1), 10, 20));
        assert!(
            !profile.covers(&matlab(2), 10, 20),
            "the job past its end holds 2 now"
        );
        assert!(profile.covers(&matlab(3), 20, 50));
        assert!(!profile.covers(&matlab(4), 20, 50));
        assert!(
            !profile.covers(&matlab(1), 20, 60),
            "the reservation from 50 takes 3"
        );
        assert!(profile.covers(&matlab(1), 60, 70));
        assert!(!profile.covers(&matlab(2), 60, 70));
        assert!(profile.covers(&matlab(2), 100, 110));
        assert!(!profile.covers(&matlab(3), 100, 110));
        assert!(profile.covers(&matlab(5), 150, 160));
        assert!(profile.covers(&ansys(1), 20, 30));
        assert!(!profile.covers(&ansys(2), 20, 30));
        assert!(
            profile.covers(&ansys(2), 100, 110),
            "given back at the job's end"
        );
        profile.unreserve(&matlab(3), 50, 150);
        assert!(profile.covers(&matlab(3), 20, 60));
        assert!(profile.covers(&matlab(2), 200, 210));
        assert!(
            !profile.covers(&matlab(3), 200, 210),
            "the other reservation stays"
        );
    }
}
