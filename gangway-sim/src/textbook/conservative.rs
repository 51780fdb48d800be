//! Textbook conservative backfill with compression (Mu'alem & Feitelson 2001), count-based,
//! written from the paper's description: a profile of free processors over time; each job,
//! when it arrives, is given the earliest reservation where it fits for the whole of its
//! estimate around every reservation already made, and no reservation is ever moved later;
//! when room frees, the reservations are compressed in queue order, each taken out and put
//! back at the earliest start around all the others (never later than its own).
//!
//! The rules, as this reference applies them:
//! - the queue is in submit order, ties in input order; a job larger than the machine never
//!   starts (`u64::MAX`);
//! - a job runs its recorded time, but is killed at its estimate: it never runs past it (so
//!   every reservation stays valid);
//! - the instants are the ends, the submits and the reservations' starts; at each, every end
//!   and submit due is applied, then the queue is compressed once, in order (a newly arrived
//!   job gets its first reservation in its turn), and a job whose reservation is now starts.
//!   The paper compresses when a job ends early; this reference, like gangway's passes,
//!   compresses at every instant, which moves nothing that no early end made room for.
//!
//! ```
//! use gangway_sim::textbook::{TextbookJob, conservative};
//! let job = |submit, run, estimate, size| TextbookJob { submit, run, estimate, size };
//! // 4 processors. The first job ends at 10 instead of 100: the second (4 processors),
//! // reserved at 100, moves up to 10; the third (1 processor, 200 s) could have started at
//! // 1 beside the first, but would have delayed the second's reservation, so it waits.
//! let jobs = [job(0, 10, 100, 3), job(1, 5, 5, 4), job(2, 200, 200, 1)];
//! assert_eq!(conservative(4, &jobs), [0, 10, 15]);
//! ```

use super::TextbookJob;

/// Free processors over time: `(from, free)` steps, the first at the profile's time, the last
/// lasting for ever.
struct FreeProfile {
    steps: Vec<(u64, u64)>,
}

impl FreeProfile {
    /// `processors` free from `now` on.
    fn new(now: u64, processors: u64) -> Self {
        FreeProfile {
            steps: vec![(now, processors)],
        }
    }

    /// Makes `at` a step's time (at or after the first) and returns its index.
    fn split(&mut self, at: u64) -> usize {
        let i = self.steps.partition_point(|s| s.0 <= at) - 1;
        if self.steps[i].0 == at {
            return i;
        }
        let free = self.steps[i].1;
        self.steps.insert(i + 1, (at, free));
        i + 1
    }

    /// Takes `size` processors over `[start, end)` (`give` false) or gives them back (true).
    fn book(&mut self, start: u64, end: u64, size: u64, give: bool) {
        if end <= start {
            return;
        }
        let (first, last) = (self.split(start), self.split(end));
        for step in &mut self.steps[first..last] {
            step.1 = if give { step.1 + size } else { step.1 - size };
        }
    }

    /// The earliest step time from which `size` processors are free for `length` seconds.
    fn earliest(&self, size: u64, length: u64) -> u64 {
        let mut i = 0;
        'candidates: while let Some(&(start, _)) = self.steps.get(i) {
            let end = start.saturating_add(length.max(1));
            let mut k = i;
            while let Some(&(at, free)) = self.steps.get(k)
                && at < end
            {
                if free < size {
                    i = k + 1;
                    continue 'candidates;
                }
                k += 1;
            }
            return start;
        }
        unreachable!("the last step has every processor free")
    }
}

/// A running job: when it ends, when it is expected to (its estimate), its size.
struct Running {
    end: u64,
    expected: u64,
    size: u64,
}

/// Count-based conservative backfill with compression on `processors` processors: every
/// job's start time, in input order. Jobs must come in submit order.
pub fn conservative(processors: u64, jobs: &[TextbookJob]) -> Vec<u64> {
    let mut starts = vec![u64::MAX; jobs.len()];
    // Queued jobs in order, with their reservations' starts once made.
    let mut queue: Vec<(usize, Option<u64>)> = Vec::new();
    let mut running: Vec<Running> = Vec::new();
    let mut next = 0;
    loop {
        let instants = [
            running.iter().map(|r| r.end).min(),
            jobs.get(next).map(|j| j.submit),
            queue.iter().filter_map(|q| q.1).min(),
        ];
        let Some(now) = instants.into_iter().flatten().min() else {
            break;
        };
        running.retain(|r| r.end != now);
        while let Some(job) = jobs.get(next).filter(|j| j.submit == now) {
            if job.size <= processors {
                queue.push((next, None));
            }
            next += 1;
        }
        let mut profile = FreeProfile::new(now, processors);
        for r in &running {
            profile.book(now, r.expected, r.size, false);
        }
        for &(i, planned) in &queue {
            if let Some(start) = planned {
                profile.book(start, start + jobs[i].estimate, jobs[i].size, false);
            }
        }
        // One compression, in queue order.
        for (i, planned) in &mut queue {
            let job = &jobs[*i];
            if let Some(start) = *planned {
                profile.book(start, start + job.estimate, job.size, true);
            }
            let start = profile.earliest(job.size, job.estimate);
            debug_assert!(planned.is_none_or(|p| start <= p));
            profile.book(start, start + job.estimate, job.size, false);
            *planned = Some(start);
            if start == now {
                starts[*i] = now;
                running.push(Running {
                    end: now + job.run.min(job.estimate),
                    expected: now + job.estimate,
                    size: job.size,
                });
            }
        }
        queue.retain(|&(i, _)| starts[i] == u64::MAX);
    }
    starts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::textbook::tests::job;

    #[test]
    fn a_reservation_is_never_delayed_by_a_later_arrival() {
        // 2 processors, one busy until 10. A (2) is reserved at 10; B (1, 5 s) fits before it;
        // C (1, 20 s) would overlap A's reservation, so it goes after A.
        let jobs = [
            job(0, 10, 10, 1),
            job(1, 5, 5, 2),
            job(2, 5, 5, 1),
            job(3, 20, 20, 1),
        ];
        assert_eq!(conservative(2, &jobs), [0, 10, 2, 15]);
    }

    #[test]
    fn an_early_end_moves_the_reservations_up_in_order() {
        // 2 processors, both busy; the first ends at 5 instead of 50. A (2) moves from 50 to
        // 5, B (1) from 60 to 15.
        let jobs = [job(0, 5, 50, 2), job(1, 10, 10, 2), job(2, 10, 10, 1)];
        assert_eq!(conservative(2, &jobs), [0, 5, 15]);
    }

    #[test]
    fn a_job_is_killed_at_its_estimate() {
        let jobs = [job(0, 100, 10, 1), job(1, 5, 5, 1)];
        assert_eq!(conservative(1, &jobs), [0, 10]);
    }

    #[test]
    fn a_job_larger_than_the_machine_never_starts() {
        let jobs = [job(0, 10, 10, 5), job(0, 10, 10, 2)];
        assert_eq!(conservative(4, &jobs), [u64::MAX, 0]);
    }
}
