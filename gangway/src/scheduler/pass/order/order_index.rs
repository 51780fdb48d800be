//! The pending order kept across passes (issue 26, step 4): under
//! `policy.priority.calc_period_ms`, and for keys that never move with time.
//!
//! Between two calculations a pending job keeps the key it got ([`super::calc_period`]), so
//! the order changes only where a job became pending, left, or had its base priority or time
//! limit set: the changes [`crate::state::ClusterState`] notes as they happen. The index keeps
//! every pending job by its key, in order, and each pass applies those changes instead of
//! keying, and then sorting, every pending job again. Without the period, keys that move with
//! time (age, decayed fair-share) are computed afresh at every pass; the index then serves only
//! a calculation, and a new one (the period ran out, a reconfiguration, a restore) builds it
//! again from the state. Keys that read only the job and the configuration (submit order, base
//! priority, partition and QoS factors, shortest-first: the scheduler's `keys_timeless`) are
//! what a fresh computation would give at any pass, so an index of them serves every pass
//! exactly until a reconfiguration or a restore.
//!
//! It also keeps what a pass must know of all pending jobs ([`PendingSummary`]): the next begin
//! time or back-off end, exactly; and the least need and whether every job has a queue, as of
//! every job indexed since the build or since the index last emptied. A job that left keeps
//! counting in those two, so they may be lower and `false` where a walk would say higher and
//! `true`: they only let a pass stop early ([`crate::scheduler::shortcuts::settled`]), which
//! it then does less often, never wrongly.
//!
//! In debug builds every pass checks the index against a walk of the pending jobs.

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::model::ids::JobId;
use crate::placement::{FreeTotals, NeedFloor};
use crate::policy::PassFigures;
use crate::scheduler::pass::order::OrderKey;
use crate::scheduler::pass::order::sorted_runs::SortedRuns;
use crate::scheduler::shortcuts::settled::PendingSummary;
use crate::state::JobView;

/// Every pending job by its key under one calculation.
#[derive(Clone, Debug)]
pub(in crate::scheduler) struct OrderIndex {
    /// The calculation whose keys these are; `None`: keys that never move with time.
    calc: Option<Arc<PassFigures>>,
    /// Every indexed job, in the pass's order (in short runs: a pass copies all of them out,
    /// and only a few come and go between passes).
    order: SortedRuns<(OrderKey, JobId)>,
    /// Each indexed job's entry, by job index.
    entries: Vec<Option<Entry>>,
    /// The begin times and back-off ends of the indexed jobs.
    begins: BTreeSet<(u64, JobId)>,
    /// At most the least need of every job indexed since the build.
    need: NeedFloor,
    /// Every job indexed since the build had a queue.
    all_queued: bool,
    /// Passes served since the build.
    passes: u64,
}

/// What the index holds for one job, to take it out again.
#[derive(Clone, Copy, Debug)]
struct Entry {
    key: OrderKey,
    begins: [Option<u64>; 2],
}

impl OrderIndex {
    /// An empty index for the calculation of `calc` (`None`: for keys that never move with
    /// time).
    pub(in crate::scheduler) fn new(calc: Option<&Arc<PassFigures>>) -> Self {
        OrderIndex {
            calc: calc.cloned(),
            order: SortedRuns::default(),
            entries: Vec::new(),
            begins: BTreeSet::new(),
            need: FreeTotals::floor(),
            all_queued: true,
            passes: 0,
        }
    }

    /// Whether the index holds the keys of the calculation of `calc` (`None`: keys that never
    /// move with time).
    pub(in crate::scheduler) fn serves(&self, calc: Option<&Arc<PassFigures>>) -> bool {
        match (&self.calc, calc) {
            (Some(mine), Some(calc)) => Arc::ptr_eq(mine, calc),
            (mine, calc) => mine.is_none() && calc.is_none(),
        }
    }

    /// Indexes pending job `job` under `key` (in place of any entry it had).
    pub(in crate::scheduler) fn insert(&mut self, job: JobView<'_>, key: OrderKey) {
        self.remove(job.id());
        let record = job.record();
        let begins = [record.spec.begin_ms, record.ready.backoff_until_ms];
        for begin in begins.into_iter().flatten() {
            self.begins.insert((begin, job.id()));
        }
        self.order.insert((key, job.id()));
        self.need.include(&record.totals.need);
        self.all_queued &= record.queue.is_some();
        let index = job.id().index();
        if self.entries.len() <= index {
            self.entries.resize(index + 1, None);
        }
        self.entries[index] = Some(Entry { key, begins });
    }

    /// Takes job `id` out, if indexed.
    pub(in crate::scheduler) fn remove(&mut self, id: JobId) {
        let Some(entry) = self.entries.get_mut(id.index()).and_then(Option::take) else {
            return;
        };
        self.order.remove(&(entry.key, id));
        for begin in entry.begins.into_iter().flatten() {
            self.begins.remove(&(begin, id));
        }
        // With no job left, what every job indexed since says starts afresh.
        if self.order.len() == 0 {
            self.need = FreeTotals::floor();
            self.all_queued = true;
        }
    }

    /// Every indexed job with its key, in order, for a pass (counted).
    pub(in crate::scheduler) fn keyed(&mut self) -> Vec<(OrderKey, JobId)> {
        self.passes += 1;
        let mut keyed = Vec::with_capacity(self.order.len());
        self.order.copy_into(&mut keyed);
        keyed
    }

    /// Whether the index served a pass before the last one: that pass took the order kept
    /// across passes, with only the changes applied.
    #[cfg(any(test, feature = "testkit"))]
    pub(in crate::scheduler) fn carried_over(&self) -> bool {
        self.passes > 1
    }

    /// What a pass at `now_ms` knows of all pending jobs (module docs).
    pub(in crate::scheduler) fn summary(&self, now_ms: u64) -> PendingSummary {
        PendingSummary {
            need: self.need,
            all_queued: self.all_queued,
            next_begin_ms: self
                .begins
                .range((now_ms.saturating_add(1), JobId(0))..)
                .map(|&(begin, _)| begin)
                .find(|&begin| begin > now_ms),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cmp::Reverse;

    use super::*;
    use crate::config::ClusterConfig;
    use crate::state::ClusterState;
    use crate::{Event, JobSpec};

    fn state_with(jobs: &[(&str, Option<u64>)]) -> ClusterState {
        let config: ClusterConfig =
            serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 4, "memory_mib": 1024}]}"#)
                .unwrap();
        let mut state = ClusterState::from_config(config).unwrap();
        for (name, begin_ms) in jobs {
            let mut job = JobSpec::new(*name, 60_000, 1);
            job.begin_ms = *begin_ms;
            state
                .apply_event(Event::Submit { job }, 0, &mut Vec::new())
                .unwrap();
        }
        state
    }

    fn key(n: i64) -> OrderKey {
        (Reverse(0), Reverse([n, 0, 0, 0]), 0, n as u64)
    }

    #[test]
    fn keeps_jobs_in_key_order_and_the_next_begin_exactly() {
        let state = state_with(&[("a", None), ("b", Some(5_000)), ("c", Some(9_000))]);
        let figures = Arc::new(PassFigures::new(&state, 0));
        let mut index = OrderIndex::new(Some(&figures));
        let ids: Vec<JobId> = state.pending.iter().copied().collect();
        for (n, &id) in ids.iter().enumerate() {
            index.insert(state.job_view(id).unwrap(), key(10 - n as i64));
        }
        // Higher keys first.
        let order: Vec<JobId> = index.keyed().into_iter().map(|(_, id)| id).collect();
        assert_eq!(order, [ids[0], ids[1], ids[2]]);
        assert_eq!(index.summary(0).next_begin_ms, Some(5_000));
        assert_eq!(index.summary(5_000).next_begin_ms, Some(9_000));
        index.remove(ids[2]);
        assert_eq!(index.summary(5_000).next_begin_ms, None);
        // A job indexed again takes its new key's place.
        index.insert(state.job_view(ids[0]).unwrap(), key(1));
        let order: Vec<JobId> = index.keyed().into_iter().map(|(_, id)| id).collect();
        assert_eq!(order, [ids[1], ids[0]]);
        assert!(index.serves(Some(&figures)));
        assert!(!index.serves(Some(&Arc::new(PassFigures::new(&state, 0)))));
        assert!(!index.serves(None));
        let timeless = OrderIndex::new(None);
        assert!(timeless.serves(None));
        assert!(!timeless.serves(Some(&figures)));
    }

    #[test]
    fn every_job_has_a_queue_until_one_without_is_indexed_whatever_leaves_since_until_none_is_left()
    {
        let config: ClusterConfig = serde_json::from_str(
            r#"{"nodes": [{"name": "n1", "cpus": 4}], "queues": [{"name": "q"}]}"#,
        )
        .unwrap();
        let mut state = ClusterState::from_config(config).unwrap();
        for (name, queue) in [("queued", Some("q")), ("plain", None)] {
            let mut job = JobSpec::new(name, 60_000, 1);
            job.queue = queue.map(String::from);
            state
                .apply_event(Event::Submit { job }, 0, &mut Vec::new())
                .unwrap();
        }
        let figures = Arc::new(PassFigures::new(&state, 0));
        let mut index = OrderIndex::new(Some(&figures));
        let view = |name: &str| state.job_view(state.job_id(name).unwrap()).unwrap();
        index.insert(view("queued"), key(1));
        assert!(index.summary(0).all_queued);
        index.insert(view("plain"), key(2));
        assert!(!index.summary(0).all_queued);
        index.remove(state.job_id("plain").unwrap());
        assert!(!index.summary(0).all_queued);
        // Emptied, it starts afresh.
        index.remove(state.job_id("queued").unwrap());
        assert!(index.summary(0).all_queued);
        assert_eq!(index.summary(0).need, FreeTotals::floor());
        index.insert(view("queued"), key(1));
        assert!(index.summary(0).all_queued);
    }

    #[test]
    fn a_job_indexed_again_or_taken_out_before_a_pass_holds_at_most_one_place() {
        let state = state_with(&[("a", None), ("b", None), ("c", None)]);
        let figures = Arc::new(PassFigures::new(&state, 0));
        let mut index = OrderIndex::new(Some(&figures));
        let ids: Vec<JobId> = state.pending.iter().copied().collect();
        let view = |i: usize| state.job_view(ids[i]).unwrap();
        index.insert(view(0), key(5));
        index.insert(view(1), key(6));
        // Indexed twice, and indexed and taken out, before a pass reads the order.
        index.insert(view(0), key(7));
        index.insert(view(2), key(1));
        index.remove(ids[2]);
        let order: Vec<JobId> = index.keyed().into_iter().map(|(_, id)| id).collect();
        assert_eq!(order, [ids[0], ids[1]]);
        // Jobs indexed again (under the same key and a new one) and taken out.
        index.insert(view(1), key(6));
        index.insert(view(0), key(2));
        index.insert(view(2), key(9));
        index.remove(ids[2]);
        index.insert(view(2), key(4));
        let keyed = index.keyed();
        assert_eq!(
            keyed,
            [(key(6), ids[1]), (key(4), ids[2]), (key(2), ids[0])]
        );
        assert_eq!(index.keyed(), keyed);
    }
}
