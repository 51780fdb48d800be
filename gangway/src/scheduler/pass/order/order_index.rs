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
//! And it tells a continued pass ([`crate::scheduler::shortcuts::resume`]) how the order stands
//! next to the one it last served ([`OrderIndex::since_last_pass`]): whether every job that
//! pass knew still has its key, and which jobs came since, when they all rank after the others.
//! Each entry notes how many passes the index had served when it came in, and a job the last
//! pass knew that is taken out keeps its slot until the next pass, so the answer costs the jobs
//! that came, not a walk of every job against the last pass's order. It is exact where the
//! changes are applied as each job stands at the pass (one insertion or removal per change, as
//! the scheduler applies them); a job keyed anew and back between two passes counts as moved.
//!
//! In debug builds every pass checks the index against a walk of the pending jobs, and a
//! continued pass checks its answer against a comparison of the two orders.

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::model::ids::JobId;
use crate::placement::{FreeTotals, NeedFloor};
use crate::policy::PassFigures;
use crate::scheduler::pass::order::OrderKey;
use crate::scheduler::pass::order::sorted_runs::{RunsPlace, SortedRuns};
use crate::scheduler::shortcuts::settled::PendingSummary;
use crate::state::JobView;

/// Every pending job by its key under one calculation.
#[derive(Clone, Debug)]
pub(in crate::scheduler) struct OrderIndex {
    /// The calculation whose keys these are; `None`: keys that never move with time.
    calc: Option<Arc<PassFigures>>,
    /// Every indexed job, in the pass's order (in short runs: a pass reads them in place, and
    /// only a few come and go between passes).
    order: SortedRuns<(OrderKey, JobId)>,
    /// Each job's slot, by job index: indexed, or taken out since the last pass served.
    entries: Vec<Option<Entry>>,
    /// The begin times and back-off ends of the indexed jobs.
    begins: BTreeSet<(u64, JobId)>,
    /// At most the least need of every job indexed since the build.
    need: NeedFloor,
    /// Every job indexed since the build had a queue.
    all_queued: bool,
    /// Passes served since the build.
    served: u64,
    /// What changed since the last pass served.
    since: SinceServed,
}

/// What the index holds for one job: its entry, or what a pass it served knew of a job taken
/// out since.
#[derive(Clone, Copy, Debug)]
struct Entry {
    key: OrderKey,
    begins: [Option<u64>; 2],
    /// How many passes the index had served when the job came in under `key`: the last pass
    /// knew the job under `key` where this is below [`OrderIndex::served`].
    since: u64,
    /// Taken out since the last pass served, which knew it (kept until the next pass, to tell
    /// a job that comes back from a new one).
    left: bool,
}

/// The changes since the last pass served, as far as a continued pass asks
/// ([`OrderIndex::since_last_pass`]).
#[derive(Clone, Debug, Default)]
struct SinceServed {
    /// Jobs that came in: indexed now, and unknown to the last pass (or known under another
    /// key).
    came: usize,
    /// A job the last pass knew is indexed under another key.
    moved: bool,
    /// The jobs taken out that the last pass knew (their slots are kept until the next pass).
    left: Vec<JobId>,
}

/// A pass's place in the order, reading it from the index instead of a copy (valid while the
/// index does not change: between two passes' updates).
#[derive(Clone, Copy, Debug, Default)]
pub(in crate::scheduler) struct IndexPlace {
    runs: RunsPlace,
    /// How many jobs come before it.
    pub(in crate::scheduler) position: usize,
}

/// The pending order at a pass, next to the one the index last served
/// ([`OrderIndex::since_last_pass`]).
#[derive(Debug, PartialEq)]
pub(in crate::scheduler) enum LastPassOrder {
    /// The index served no pass since it was built.
    Unknown,
    /// Every job the last pass knew that is still indexed has its key, and the jobs that came
    /// since all rank after them: `kept` of the first are indexed, and `came` are the others,
    /// in order.
    NewJobsLast {
        kept: usize,
        came: Vec<(OrderKey, JobId)>,
    },
    /// A job the last pass knew has another key, or one that came ranks before one it knew.
    Reordered,
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
            served: 0,
            since: SinceServed::default(),
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
        let id = job.id();
        let record = job.record();
        let begins = [record.spec.begin_ms, record.ready.backoff_until_ms];
        self.need.include(&record.totals.need);
        self.all_queued &= record.queue.is_some();
        let held = self.entries.get(id.index()).copied().flatten();
        let since = match held {
            // In its place already: only its begin times may have moved.
            Some(held) if !held.left && held.key == key => {
                self.forget_begins(id, held.begins);
                held.since
            }
            _ => {
                if let Some(held) = held.filter(|held| !held.left) {
                    self.order.remove(&(held.key, id));
                    self.forget_begins(id, held.begins);
                    self.since.came -= usize::from(held.since == self.served);
                }
                self.order.insert((key, id));
                match held {
                    // Back under the key the last pass knew.
                    Some(held) if held.since < self.served && held.key == key => held.since,
                    known => {
                        self.since.moved |= known.is_some_and(|held| held.since < self.served);
                        self.since.came += 1;
                        self.served
                    }
                }
            }
        };
        for begin in begins.into_iter().flatten() {
            self.begins.insert((begin, id));
        }
        let index = id.index();
        if self.entries.len() <= index {
            self.entries.resize(index + 1, None);
        }
        self.entries[index] = Some(Entry {
            key,
            begins,
            since,
            left: false,
        });
    }

    /// Takes job `id` out, if indexed.
    pub(in crate::scheduler) fn remove(&mut self, id: JobId) {
        let Some(slot) = self.entries.get_mut(id.index()) else {
            return;
        };
        let Some(held) = slot.filter(|held| !held.left) else {
            return;
        };
        if held.since < self.served {
            // Known to the last pass: kept until the next, in case it comes back.
            *slot = Some(Entry { left: true, ..held });
            self.since.left.push(id);
        } else {
            *slot = None;
            self.since.came -= 1;
        }
        self.order.remove(&(held.key, id));
        self.forget_begins(id, held.begins);
        // With no job left, what every job indexed since says starts afresh.
        if self.order.len() == 0 {
            self.need = FreeTotals::floor();
            self.all_queued = true;
        }
    }

    fn forget_begins(&mut self, id: JobId, begins: [Option<u64>; 2]) {
        for begin in begins.into_iter().flatten() {
            self.begins.remove(&(begin, id));
        }
    }

    /// The order now next to the one the index last served (its changes since: they are
    /// noted as they are applied, so this costs the jobs that came, not every job).
    pub(in crate::scheduler) fn since_last_pass(&self) -> LastPassOrder {
        if self.served == 0 {
            return LastPassOrder::Unknown;
        }
        if self.since.moved {
            return LastPassOrder::Reordered;
        }
        let mut came = Vec::with_capacity(self.since.came);
        self.order.copy_last_into(self.since.came, &mut came);
        // Every one of the last `came` came since: they all rank after the jobs known.
        let came_last = came.iter().all(|&(_, id)| {
            self.entries[id.index()].is_some_and(|entry| entry.since == self.served)
        });
        if !came_last {
            return LastPassOrder::Reordered;
        }
        LastPassOrder::NewJobsLast {
            kept: self.order.len() - came.len(),
            came,
        }
    }

    /// Marks a pass served: the jobs indexed now are those it knows.
    pub(in crate::scheduler) fn serve(&mut self) {
        self.served += 1;
        for id in self.since.left.drain(..) {
            if let Some(slot) = self
                .entries
                .get_mut(id.index())
                .filter(|slot| slot.is_some_and(|entry| entry.left))
            {
                *slot = None;
            }
        }
        self.since.came = 0;
        self.since.moved = false;
    }

    /// Every indexed job with its key, in order.
    pub(in crate::scheduler) fn keyed(&self) -> Vec<(OrderKey, JobId)> {
        let mut keyed = Vec::with_capacity(self.order.len());
        self.order.copy_into(&mut keyed);
        keyed
    }

    /// The indexed jobs with their keys from the one at `position` on, in order.
    pub(in crate::scheduler) fn keyed_from(&self, position: usize) -> Vec<(OrderKey, JobId)> {
        let mut keyed = Vec::with_capacity(self.order.len().saturating_sub(position));
        self.order
            .copy_from_into(self.order.place_of(position), &mut keyed);
        keyed
    }

    /// How many jobs are indexed.
    pub(in crate::scheduler) fn len(&self) -> usize {
        self.order.len()
    }

    /// A pass's place in the order, at the job `position` jobs after the first.
    pub(in crate::scheduler) fn place_at(&self, position: usize) -> IndexPlace {
        IndexPlace {
            runs: self.order.place_of(position),
            position,
        }
    }

    /// The job at `place`, moving `place` on to the next; `None` past the last.
    pub(in crate::scheduler) fn read(&self, place: &mut IndexPlace) -> Option<JobId> {
        let (_, id) = self.order.read(&mut place.runs)?;
        place.position += 1;
        Some(id)
    }

    /// Whether the index served a pass before the last one: that pass took the order kept
    /// across passes, with only the changes applied.
    #[cfg(any(test, feature = "testkit"))]
    pub(in crate::scheduler) fn carried_over(&self) -> bool {
        self.served > 1
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

    /// Whatever comes, leaves, moves or comes back between two passes, the index's account of
    /// the order next to the last pass's is what comparing the two orders job by job says.
    #[test]
    fn the_changes_since_the_last_pass_tell_what_comparing_the_two_orders_does() {
        use crate::scheduler::shortcuts::resume::new_jobs_last_by_id;
        let names: Vec<String> = (0..12).map(|i| format!("j{i}")).collect();
        let jobs: Vec<(&str, Option<u64>)> = names.iter().map(|n| (n.as_str(), None)).collect();
        let state = state_with(&jobs);
        let ids: Vec<JobId> = state.pending.iter().copied().collect();
        let mut next = crate::backfill::tests::numbers(39);
        let mut index = OrderIndex::new(None);
        // Each job's key while pending; a lower number ranks later.
        let mut keys: Vec<Option<i64>> = vec![None; ids.len()];
        let mut last_rank = 1_000_000i64;
        let mut old: Option<Vec<(OrderKey, JobId)>> = None;
        let (mut answered, mut reordered) = (0, 0);
        for round in 0..3_000 {
            // Jobs leave, come back, move, or come with a key that ranks last; each change is
            // then applied as the job is at the pass, as the scheduler applies them.
            let mut changes = Vec::new();
            for _ in 0..next(5) {
                let job = next(ids.len() as u64) as usize;
                keys[job] = match next(8) {
                    0 | 1 => None,
                    2 | 3 => keys[job].or(Some(next(1_000_000) as i64)),
                    4 => Some(next(1_000_000) as i64),
                    _ => {
                        last_rank -= 1;
                        Some(last_rank)
                    }
                };
                changes.push(job);
            }
            for job in changes {
                match keys[job] {
                    Some(rank) => index.insert(state.job_view(ids[job]).unwrap(), key(rank)),
                    None => index.remove(ids[job]),
                }
            }
            let now = index.keyed();
            match (index.since_last_pass(), &old) {
                (LastPassOrder::Unknown, None) => {}
                (LastPassOrder::NewJobsLast { kept, came }, Some(old)) => {
                    answered += 1;
                    assert_eq!(
                        new_jobs_last_by_id(old, &now, kept),
                        Some(came),
                        "round {round}"
                    );
                    assert_eq!(new_jobs_last_by_id(old, &now, kept + 1), None);
                }
                (LastPassOrder::Reordered, Some(old)) => {
                    reordered += 1;
                    for waiting in 0..=old.len() {
                        assert_eq!(
                            new_jobs_last_by_id(old, &now, waiting),
                            None,
                            "round {round}"
                        );
                    }
                }
                (answer, _) => panic!("round {round}: {answer:?} after {old:?}"),
            }
            index.serve();
            old = Some(now);
        }
        assert!(
            answered > 500 && reordered > 500,
            "{answered} answered, {reordered} reordered"
        );
    }
}
