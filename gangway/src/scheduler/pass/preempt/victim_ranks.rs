//! The running jobs' places in the victim order, made once per pass and partition of the
//! preemptors, so that a search orders its candidates without asking the plug-ins about each.
//!
//! Where every victim plug-in is a built-in (`victim_plugins_read_partition_only`), a running
//! job's vetoes and victim keys read of the preemptor only its partition, and of the state
//! nothing that a pass changes but one key: `borrowing_first`'s, whether the victim's queue
//! borrows, which a start in the pass can change. So at the second search of a pass for a
//! partition (the first asks the plug-ins about its own candidates alone: a pass with one
//! search reads no more than it did) every running job is asked once, with that key left out
//! (read as 0), and the jobs
//! are sorted by their keys and then the later job first. Each job keeps its place in that
//! order, its group (the jobs whose keys before the borrowing one are equal share one; groups
//! are numbered in order) and its veto.
//!
//! A search then sorts its candidates by group, then their borrowing key as it stands now,
//! then place. That is the order of their full keys: two jobs of different groups compare by
//! the keys before the borrowing one, as groups do; two of one group compare by the borrowing
//! key first and then by the keys after it and the job, as places within a group do. Without
//! a borrowing key every job is of one group and places alone decide.
//!
//! A job that starts in the pass has no place: it is no victim in the tick it started. A
//! shortcut: the reference pass asks the plug-ins at every search, and debug builds compare
//! every search's candidates with those of a search that asks them.

use std::cmp::Reverse;

use crate::model::ids::{JobId, PartitionId};
use crate::policy::{PartitionHooks, VictimKeys};
use crate::scheduler::Scheduler;
use crate::state::JobView;

/// The running jobs' places in the victim order of this pass, by the partition of the
/// preemptors they were made for.
#[derive(Debug, Default)]
pub(in crate::scheduler) struct VictimRanks {
    by_partition: Vec<PartitionRanks>,
    /// The partitions whose first search of the pass asked the plug-ins.
    asked: Vec<PartitionId>,
}

/// The running jobs' places in the victim order as preemptors of one partition see it.
#[derive(Debug)]
pub(in crate::scheduler) struct PartitionRanks {
    partition: PartitionId,
    /// Where the partition's victim order reads whether the victim's queue borrows.
    borrowing_slot: Option<usize>,
    /// By job slot: the place of each job that was running when the ranks were made.
    by_job: Vec<Option<Rank>>,
}

/// A running job's place in the victim order with its borrowing key left out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::scheduler) struct Rank {
    /// The jobs whose keys before the borrowing one are equal, numbered in order.
    group: u32,
    /// Its place in the order of the keys, the borrowing one left out, then the later job.
    place: u32,
    /// Where a veto removes it: the veto's end after now, if it has one.
    pub(in crate::scheduler) vetoed: Option<Option<u64>>,
}

/// What a search sorts its candidates by: the group, the borrowing key now, the place.
pub(in crate::scheduler) type RankOrder = (u32, i64, u32);

impl PartitionRanks {
    /// Running job `v`'s rank; `None` for a job that was not running when the ranks were made.
    pub(in crate::scheduler) fn of(&self, v: JobId) -> Option<Rank> {
        self.by_job.get(v.index()).copied().flatten()
    }

    /// Where the partition's victim order reads whether the victim's queue borrows.
    pub(in crate::scheduler) fn borrowing_slot(&self) -> Option<usize> {
        self.borrowing_slot
    }

    /// What a candidate of rank `rank` whose borrowing key is now `borrowing_key` is sorted
    /// by.
    pub(in crate::scheduler) fn order(rank: Rank, borrowing_key: i64) -> RankOrder {
        (rank.group, borrowing_key, rank.place)
    }
}

impl Scheduler {
    /// The ranks of the running jobs as `preemptor`'s partition sees them in this pass, made
    /// at its second search; `None` where a search asks the plug-ins: the partition's first of
    /// the pass, and every search with a host's victim plug-in or in the reference pass.
    pub(in crate::scheduler) fn victim_ranks<'r>(
        &self,
        preemptor: JobView<'_>,
        ranks: &'r mut VictimRanks,
    ) -> Option<&'r PartitionRanks> {
        if !self.shortcuts || !self.profile.victim_plugins_read_partition_only() {
            return None;
        }
        let partition = preemptor.record().partition;
        let at = match ranks
            .by_partition
            .iter()
            .position(|r| r.partition == partition)
        {
            Some(at) => at,
            None if !ranks.asked.contains(&partition) => {
                ranks.asked.push(partition);
                return None;
            }
            None => {
                ranks.by_partition.push(self.fresh_ranks(preemptor));
                ranks.by_partition.len() - 1
            }
        };
        Some(&ranks.by_partition[at])
    }

    /// Every running job's rank as `preemptor`'s partition sees it now.
    fn fresh_ranks(&self, preemptor: JobView<'_>) -> PartitionRanks {
        let no_hooks = PartitionHooks::default();
        let hooks_of = |partition: PartitionId| {
            self.profile
                .partition(partition.index())
                .unwrap_or(&no_hooks)
        };
        let partition = preemptor.record().partition;
        let own_hooks = hooks_of(partition);
        let borrowing_slot = self.profile.borrowing_key_slot(own_hooks);
        let context = self.last.figures.context(&self.state);
        type Entry = ((VictimKeys, Reverse<JobId>), Option<Option<u64>>);
        let mut entries: Vec<Entry> = Vec::with_capacity(self.state.running.len());
        for &v in &self.state.running {
            let Some(victim) = self.state.job_view(v) else {
                continue;
            };
            let hooks = [own_hooks, hooks_of(victim.record().partition)];
            let vetoed = self
                .profile
                .veto(hooks, preemptor, victim, &context)
                .map(|veto| veto.until_ms().filter(|&t| t > self.state.now_ms));
            let mut keys = self
                .profile
                .victim_keys(own_hooks, preemptor, victim, &context);
            if let Some(slot) = borrowing_slot.filter(|&slot| slot < keys.len()) {
                keys[slot] = 0;
            }
            entries.push(((keys, Reverse(v)), vetoed));
        }
        entries.sort_unstable_by_key(|(order, _)| *order);
        let before = borrowing_slot.unwrap_or(0);
        let mut by_job = vec![None; self.state.jobs.len()];
        let mut group = 0;
        for (place, ((keys, Reverse(v)), vetoed)) in entries.iter().enumerate() {
            if place > 0 && entries[place - 1].0.0[..before] != keys[..before] {
                group += 1;
            }
            if let Some(slot) = by_job.get_mut(v.index()) {
                *slot = Some(Rank {
                    group,
                    place: place as u32,
                    vetoed: *vetoed,
                });
            }
        }
        PartitionRanks {
            partition,
            borrowing_slot,
            by_job,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ReclaimWithinCohort, WithinQueue};
    use crate::policy::Profile;
    use crate::policy::builtin::{BorrowingFirst, LowerPriorityFirst, NewestFirst};
    use crate::scheduler::pass::preempt::Walk;
    use crate::{ClusterConfig, Event, JobSpec};

    /// A 6-cpu node; cohort `c` holds queues `qa` (3 cpus nominal, takes its own lower
    /// priorities and reclaims from any borrower), `qb` (1) and `qc` (2). One-cpu jobs run: at
    /// 0 `b1` (`qb`, priority 5) and `c1` (`qc`, priority 5); at 10 s `b2` (`qb`, priority 5)
    /// and `c2` (`qc`, priority 1); at 20 s `b3` (`qb`, priority 1); at 25 s `a0` (`qa`,
    /// priority 1). `qb` borrows 2, `qa` and `qc` nothing. Then `a1` (`qa`, 3 cpus, priority
    /// 9) waits. Preemption is off, so that nothing moves.
    fn borrowers(profile: Profile) -> Scheduler {
        let mut cluster: ClusterConfig = serde_json::from_str(
            r#"{"nodes": [{"name": "n1", "cpus": 6}],
                "cohorts": [{"name": "c"}],
                "queues": [{"name": "qa", "cohort": "c", "quota": {"cpu": {"nominal": 3}}},
                           {"name": "qb", "cohort": "c", "quota": {"cpu": {"nominal": 1}}},
                           {"name": "qc", "cohort": "c", "quota": {"cpu": {"nominal": 2}}}]}"#,
        )
        .unwrap();
        cluster.policy.preemption.enabled = false;
        cluster.queues[0].preemption.reclaim_within_cohort = ReclaimWithinCohort::Any;
        cluster.queues[0].preemption.within_queue = WithinQueue::LowerPriority;
        let mut s = Scheduler::with_profile(cluster, profile).unwrap();
        let job = |name: &str, queue: &str, count: u32, priority: i32| {
            let mut job = JobSpec::new(name, 3_600_000, count);
            job.queue = Some(queue.into());
            job.priority = priority;
            Event::Submit { job }
        };
        s.tick(0, vec![job("b1", "qb", 1, 5), job("c1", "qc", 1, 5)])
            .unwrap();
        s.tick(10_000, vec![job("b2", "qb", 1, 5), job("c2", "qc", 1, 1)])
            .unwrap();
        s.tick(20_000, vec![job("b3", "qb", 1, 1)]).unwrap();
        s.tick(25_000, vec![job("a0", "qa", 1, 1)]).unwrap();
        s.tick(30_000, vec![job("a1", "qa", 3, 9)]).unwrap();
        assert_eq!(s.state.running.len(), 6);
        s
    }

    fn id(s: &Scheduler, name: &str) -> JobId {
        s.state.job_id(name).unwrap()
    }

    fn names(
        s: &Scheduler,
        jobs: &[(JobId, crate::scheduler::pass::preempt::Basis)],
    ) -> Vec<String> {
        jobs.iter()
            .map(|&(v, _)| s.state.job(v).unwrap().spec.id.clone())
            .collect()
    }

    /// Lower priority first, then borrowing queues first, then the newest first.
    fn borrowing_second() -> Profile {
        Profile::builder()
            .plugin(LowerPriorityFirst)
            .plugin(BorrowingFirst)
            .plugin(NewestFirst)
            .build()
            .unwrap()
    }

    #[test]
    fn ranks_group_the_jobs_by_the_keys_before_the_borrowing_one_and_leave_it_out() {
        let s = borrowers(borrowing_second());
        let a1 = s.state.job_view(id(&s, "a1")).unwrap();
        let mut ranks = VictimRanks::default();
        // The partition's first search asks the plug-ins; the second makes the ranks.
        assert!(s.victim_ranks(a1, &mut ranks).is_none());
        let ranked = s.victim_ranks(a1, &mut ranks).unwrap();
        assert_eq!(ranked.borrowing_slot(), Some(1));
        let rank = |name: &str| ranked.of(id(&s, name)).unwrap();
        // Priority 1 (`a0`, `b3`, `c2`) is a group before priority 5 (`b1`, `c1`, `b2`);
        // within a group the newest first, the borrowing key left out (`a0` before the
        // borrower `b3`); between `c1` and `b1`, started together, the later job.
        assert_eq!(
            ["a0", "b3", "c2", "b2", "c1", "b1"].map(|n| (rank(n).group, rank(n).place)),
            [(0, 0), (0, 1), (0, 2), (1, 3), (1, 4), (1, 5)]
        );
        assert_eq!(ranked.of(a1.id()), None);
        let b1 = rank("b1");
        // The same ranks serve the pass's later searches of the partition.
        let again = s.victim_ranks(a1, &mut ranks).unwrap();
        assert_eq!(again.of(id(&s, "b1")), Some(b1));
        assert_eq!(ranks.by_partition.len(), 1);
    }

    #[test]
    fn candidates_sorted_by_rank_are_those_of_the_full_keys() {
        let s = borrowers(borrowing_second());
        let a1 = id(&s, "a1");
        let mut ranks = VictimRanks::default();
        let preemptor = s.state.job_view(a1).unwrap();
        assert!(s.victim_ranks(preemptor, &mut ranks).is_none());
        let ranked = s.victim_ranks(preemptor, &mut ranks);
        let asked = s.candidates_and_vetoed(a1, Walk::Every, None);
        let by_rank = s.candidates_and_vetoed(a1, Walk::Every, ranked);
        assert_eq!(by_rank, asked);
        // `qa` takes its own `a0` and reclaims from the borrower `qb`: lower priority first,
        // then the borrowers (`b3` before `a0`, although its place comes after `a0`'s), then
        // the newest.
        assert_eq!(names(&s, &asked.0), ["b3", "a0", "b2", "b1"]);
    }

    #[test]
    fn a_vetoed_job_s_rank_keeps_the_veto_s_end_and_the_search_leaves_it_out() {
        use crate::policy::builtin::MinRunTime;
        // A minimum run time of 15 s: at 30 s `b3` (started at 20 s) is vetoed until 35 s and
        // `a0` (25 s) until 40 s; the others have run 20 s or more.
        let profile = Profile::builder()
            .plugin(LowerPriorityFirst)
            .plugin(BorrowingFirst)
            .plugin(NewestFirst)
            .plugin(MinRunTime::new(15_000))
            .build()
            .unwrap();
        let s = borrowers(profile);
        let a1 = id(&s, "a1");
        let preemptor = s.state.job_view(a1).unwrap();
        let mut ranks = VictimRanks::default();
        assert!(s.victim_ranks(preemptor, &mut ranks).is_none());
        let ranked = s.victim_ranks(preemptor, &mut ranks).unwrap();
        let vetoed = |name: &str| ranked.of(id(&s, name)).unwrap().vetoed;
        assert_eq!(vetoed("b3"), Some(Some(35_000)));
        assert_eq!(vetoed("a0"), Some(Some(40_000)));
        assert!(["b1", "b2", "c1", "c2"].iter().all(|n| vetoed(n).is_none()));
        let by_rank = s.candidates_and_vetoed(a1, Walk::Every, Some(ranked));
        assert_eq!(by_rank, s.candidates_and_vetoed(a1, Walk::Every, None));
        assert_eq!(names(&s, &by_rank.0), ["b2", "b1"]);
        assert_eq!(by_rank.1, [(id(&s, "b3"), 35_000), (id(&s, "a0"), 40_000)]);
    }

    #[test]
    fn without_a_borrowing_key_or_shortcuts_ranks_are_one_group_or_none() {
        let profile = Profile::builder()
            .plugin(LowerPriorityFirst)
            .plugin(NewestFirst)
            .build()
            .unwrap();
        let s = borrowers(profile);
        let a1 = s.state.job_view(id(&s, "a1")).unwrap();
        let mut ranks = VictimRanks::default();
        assert!(s.victim_ranks(a1, &mut ranks).is_none());
        let ranked = s.victim_ranks(a1, &mut ranks).unwrap();
        assert_eq!(ranked.borrowing_slot(), None);
        assert!(
            ["a0", "b1", "b2", "b3", "c1", "c2"].iter().all(|n| ranked
                .of(id(&s, n))
                .unwrap()
                .group
                == 0)
        );
        let reference = borrowers(borrowing_second()).with_reference_pass();
        let a1 = reference.state.job_view(id(&reference, "a1")).unwrap();
        let mut ranks = VictimRanks::default();
        assert!(reference.victim_ranks(a1, &mut ranks).is_none());
        assert!(reference.victim_ranks(a1, &mut ranks).is_none());
    }
}
