//! Earlier answers of an earliest-window search ("the earliest `t ≥ start` from which a window
//! of `len` has room for a need"), kept for the rest of a pass. Usage only grows during a pass,
//! and a later start or a longer window only moves the answer later, so an answer found for a
//! start no later and a window no longer is a lower bound: a new search starts there.

/// The most window lengths remembered per need.
const LENGTHS: usize = 64;

/// Earlier answers for one need: `(window length, start, answer)`, sorted by length, one per
/// length.
#[derive(Clone, Debug, Default)]
pub(super) struct Answers(Vec<(u64, u64, u64)>);

impl Answers {
    /// A lower bound (at least `start`) on the answer for `start` and `len`: the remembered
    /// answer of the longest window no longer than `len`, when its start was no later.
    pub(super) fn bound(&self, start: u64, len: u64) -> u64 {
        let at = self.0.partition_point(|(l, _, _)| *l <= len);
        self.0[..at]
            .last()
            .filter(|(_, from, _)| *from <= start)
            .map_or(start, |(_, _, answer)| start.max(*answer))
    }

    /// Remembers `answer` for `start` and `len`, in place of an answer for the same length that
    /// it bounds more tightly (an earlier start, or the same start and a later answer).
    pub(super) fn remember(&mut self, start: u64, len: u64, answer: u64) {
        let at = self.0.partition_point(|(l, _, _)| *l <= len);
        let room = self.0.len() < LENGTHS;
        match self.0.get_mut(at.wrapping_sub(1)) {
            Some(entry) if entry.0 == len => {
                let tighter = start < entry.1 || (start == entry.1 && answer > entry.2);
                if tighter {
                    *entry = (len, start, answer);
                }
            }
            // Bounded, so that jobs of many distinct lengths do not make the memo a cost.
            _ if room => self.0.insert(at, (len, start, answer)),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_bounds_later_starts_and_longer_windows_only() {
        let mut answers = Answers::default();
        assert_eq!(answers.bound(10, 5), 10);
        answers.remember(10, 5, 40);
        assert_eq!(answers.bound(10, 5), 40);
        assert_eq!(answers.bound(20, 9), 40);
        assert_eq!(answers.bound(50, 9), 50);
        // A shorter window or an earlier start is not bounded by it.
        assert_eq!(answers.bound(10, 4), 10);
        assert_eq!(answers.bound(9, 5), 9);
        // An earlier start for the same length replaces it: it bounds more starts.
        answers.remember(5, 5, 30);
        assert_eq!(answers.bound(9, 5), 30);
        assert_eq!(answers.bound(10, 5), 30);
    }

    #[test]
    fn one_answer_is_kept_per_length_the_one_that_bounds_more_tightly() {
        let mut answers = Answers::default();
        answers.remember(5, 5, 30);
        // A later start bounds fewer starts: the answer from 5 stays.
        answers.remember(20, 5, 60);
        assert_eq!(answers.bound(9, 5), 30);
        assert_eq!(answers.bound(25, 5), 30);
        // The same start with a later answer bounds more tightly: it replaces it.
        answers.remember(5, 5, 35);
        assert_eq!(answers.bound(9, 5), 35);
        // The same start with an earlier answer bounds less: the answer 35 stays.
        answers.remember(5, 5, 30);
        assert_eq!(answers.0, [(5, 5, 35)]);
    }

    #[test]
    fn at_most_a_bounded_number_of_lengths_are_kept() {
        let mut answers = Answers::default();
        for len in 0..2 * LENGTHS as u64 {
            answers.remember(0, len + 1, 100 + len);
        }
        assert_eq!(answers.0.len(), LENGTHS);
        assert_eq!(answers.bound(0, LENGTHS as u64), 100 + LENGTHS as u64 - 1);
    }
}
