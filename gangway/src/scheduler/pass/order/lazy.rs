//! The pass's order, sorted only as far as the pass reads it. A pass often stops early (once
//! nothing later can start: [`crate::scheduler::shortcuts::settled`]), so sorting every pending job would be wasted:
//! the order is taken in chunks, each chunk picked with a linear-time selection and then sorted,
//! the chunk growing fourfold each time. Reading all `M` jobs costs O(M log M) like one sort;
//! reading `K` costs O(M + K log K).

use crate::model::ids::JobId;

/// The first chunk sorted.
const FIRST_CHUNK: usize = 64;

/// Keyed jobs handed out in key order.
#[derive(Debug)]
pub(in crate::scheduler) struct LazyOrder<K> {
    keyed: Vec<(K, JobId)>,
    /// `keyed[..sorted]` is sorted and every later entry's key is greater.
    sorted: usize,
    /// Entries handed out.
    taken: usize,
    chunk: usize,
}

impl<K: Ord + Copy> LazyOrder<K> {
    /// The order of `keyed` (unsorted; keys unique).
    pub(in crate::scheduler) fn new(keyed: Vec<(K, JobId)>) -> Self {
        LazyOrder {
            keyed,
            sorted: 0,
            taken: 0,
            chunk: FIRST_CHUNK,
        }
    }

    /// The order of `keyed`, sorted already (as the order index hands it out).
    pub(in crate::scheduler) fn sorted(keyed: Vec<(K, JobId)>) -> Self {
        debug_assert!(keyed.is_sorted_by_key(|(key, _)| *key));
        LazyOrder {
            sorted: keyed.len(),
            keyed,
            taken: 0,
            chunk: FIRST_CHUNK,
        }
    }

    /// An order that has handed out `old[..taken]` (sorted, every later entry's key greater)
    /// and goes on with the rest of `old` and then `fresh`, whose keys are all greater than
    /// every key of `old`.
    pub(in crate::scheduler) fn resume(
        mut old: Vec<(K, JobId)>,
        taken: usize,
        fresh: Vec<(K, JobId)>,
    ) -> Self {
        old.extend(fresh);
        LazyOrder {
            keyed: old,
            sorted: taken,
            taken,
            chunk: FIRST_CHUNK,
        }
    }

    /// Every entry and how many were handed out: `keyed[taken..]` are the rest, in no order.
    pub(in crate::scheduler) fn into_parts(self) -> (Vec<(K, JobId)>, usize) {
        (self.keyed, self.taken)
    }

    /// The next entry, without handing it out.
    pub(in crate::scheduler) fn peek(&mut self) -> Option<(K, JobId)> {
        if self.taken == self.keyed.len() {
            return None;
        }
        if self.taken == self.sorted {
            self.sort_more();
        }
        Some(self.keyed[self.taken])
    }

    fn sort_more(&mut self) {
        let rest = &mut self.keyed[self.sorted..];
        if rest.len() <= 2 * self.chunk {
            rest.sort_unstable_by_key(|(key, _)| *key);
            self.sorted = self.keyed.len();
            return;
        }
        rest.select_nth_unstable_by_key(self.chunk, |(key, _)| *key);
        rest[..self.chunk].sort_unstable_by_key(|(key, _)| *key);
        self.sorted += self.chunk;
        self.chunk *= 4;
    }
}

impl<K: Ord + Copy> Iterator for LazyOrder<K> {
    type Item = JobId;

    fn next(&mut self) -> Option<JobId> {
        let (_, id) = self.peek()?;
        self.taken += 1;
        Some(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Distinct pseudo-random keys.
    fn keys(count: u32, seed: u64) -> Vec<(u64, JobId)> {
        let mut x = seed | 1;
        (0..count)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                ((x << 20) | u64::from(i), JobId(i))
            })
            .collect()
    }

    #[test]
    fn hands_out_every_job_in_key_order() {
        for count in [0, 1, 63, 64, 65, 200, 1_000, 10_000] {
            let keyed = keys(count, u64::from(count) + 7);
            let mut expected = keyed.clone();
            expected.sort_unstable();
            let order: Vec<JobId> = LazyOrder::new(keyed).collect();
            let expected: Vec<JobId> = expected.into_iter().map(|(_, id)| id).collect();
            assert_eq!(order, expected, "{count} jobs");
        }
    }

    #[test]
    fn the_rest_after_a_partial_read_is_every_job_not_handed_out() {
        let keyed = keys(5_000, 3);
        let mut order = LazyOrder::new(keyed.clone());
        let first: Vec<JobId> = order.by_ref().take(300).collect();
        let (all, taken) = order.into_parts();
        assert_eq!(taken, 300);
        let mut rest: Vec<(u64, JobId)> = all[taken..].to_vec();
        rest.sort_unstable();
        let mut expected = keyed;
        expected.sort_unstable();
        let (head, tail) = expected.split_at(300);
        assert_eq!(first, head.iter().map(|(_, id)| *id).collect::<Vec<_>>());
        assert_eq!(rest, tail);
    }
}
