//! A search's candidates kept for the pass's later searches of preemptors alike, while the
//! queues' borrowing stays as it was.
//!
//! Under the queue policies alone (a search that reads the victim pool,
//! [`Scheduler::victim_pool`]) with built-in victim plug-ins
//! (`victim_plugins_read_partition_only`), a search's candidates read of its preemptor only its
//! queue, its partition and its priority: the queue policies' bases read the two queues, the
//! two priorities (only under `within_queue`, `reclaim_within_cohort: lower_priority` or
//! `borrow_within_cohort`; else the priority is not part of the key) and whether the victim's
//! queue borrows; the vetoes and the victim keys read
//! the preemptor's partition, the victim, and (`borrowing_first`) whether the victim's queue
//! borrows. One exception reads more, and is left out: a queue whose `within_queue` is
//! `lower_or_newer_equal_priority` (its own queue's candidates read the preemptor's submit
//! time). A preemptor that was preempted itself (with `anti_thrash` its own preemptors are no
//! victims of it) takes kept candidates less its preemptors, as the engine's rules leave out
//! any job they now keep from being a victim (below), but keeps none of its own: a preemptor
//! alike may take its preemptors.
//!
//! Within one pass, what else can change between two searches is what the pass does: a job
//! starts (it is never a victim in the tick it started, but its queue's usage grows, and so
//! may the queue's borrowing) or is told to stop (then it is no victim of anyone). So a
//! search's candidates are kept with the borrowing of every queue of the preemptor's cohort
//! tree as it stood (the bases name no queue of another tree, so neither do the victim keys
//! read of the candidates), and a later search of a preemptor of the same queue, partition
//! and priority takes them where those queues borrow as they did, less the jobs the engine's
//! rules now keep from being victims; a veto's
//! end is taken from the vetoed jobs that are still candidates for it. Each search that
//! builds its candidates replaces the entry. A shortcut: the reference pass builds every
//! search's candidates, and debug builds compare each kept list with one built afresh.

use crate::model::ids::{JobId, PartitionId};
use crate::quota::QueueId;
use crate::scheduler::Scheduler;
use crate::scheduler::pass::preempt::{Basis, Vetoed, VictimCandidates};

/// What a search's candidates are kept under: the preemptor's queue, partition and, where its
/// queue's policies read it, priority.
type Key = (QueueId, PartitionId, Option<i32>);

/// The candidates of this pass's searches, by the preemptors they are valid for.
#[derive(Debug, Default)]
pub(in crate::scheduler) struct CandidateMemo {
    entries: Vec<Entry>,
}

/// One search's candidates and what they were read under.
#[derive(Debug)]
struct Entry {
    key: Key,
    /// Whether each queue of the preemptor's cohort tree borrowed when the candidates were
    /// built.
    borrowing: Vec<(QueueId, bool)>,
    /// The candidates, in victim order, with their bases.
    candidates: Vec<(JobId, Basis)>,
    /// The jobs a veto with an end after now removed, with that end.
    vetoed: Vetoed,
    /// The state's earmark changes when the candidates were read or last brought up to date:
    /// every preemption earmarks, so while the count stands no candidate was told to stop.
    earmark_changes: u64,
}

impl Scheduler {
    /// The key under which the candidates of a search for `id` may be kept ([`CandidateMemo`]),
    /// or `None`.
    pub(in crate::scheduler) fn candidate_key(&self, id: JobId) -> Option<Key> {
        use crate::config::{ReclaimWithinCohort, WithinQueue};
        if !self.shortcuts
            || !self.queue_policies_alone(id)
            || !self.profile.victim_plugins_read_partition_only()
        {
            return None;
        }
        let job = self.state.job(id)?;
        let queue = self.state.job_queue(id)?;
        self.state.quota.tree.as_ref()?;
        let policy = &self.state.config.queues[queue.index()].preemption;
        let reads_more = policy.within_queue == WithinQueue::LowerOrNewerEqualPriority;
        // The bases read the preemptor's priority only under these policies (borrowing within
        // the cohort does not apply to a fair-sharing queue).
        let reads_priority = policy.within_queue != WithinQueue::Never
            || policy.reclaim_within_cohort == ReclaimWithinCohort::LowerPriority
            || (!self.fair_preemptor(id) && !policy.borrow_within_cohort.is_never());
        let priority = reads_priority.then_some(job.spec.priority);
        (!reads_more).then_some((queue, job.partition, priority))
    }

    /// Whether the candidates of a search for `id` may be kept for others: not where, with
    /// `anti_thrash`, they leave out `id`'s own preemptors.
    pub(in crate::scheduler) fn keeps_its_candidates(&self, id: JobId) -> bool {
        !self.state.config.policy.preemption.anti_thrash
            || self
                .state
                .job(id)
                .is_some_and(|job| job.preempted_by.is_empty())
    }

    /// The candidates kept under `key` for the search of `id`, where every queue of its cohort
    /// tree borrows as it did when they were built: those the engine's rules still let be
    /// victims of `id`. Where jobs were told to stop since, the entry is brought up to date
    /// for every preemptor of the key (the engine's rules but a preemptor's own preemptors are
    /// the same for all of one queue); a preemptor that leaves out its own preemptors
    /// ([`Scheduler::keeps_its_candidates`]) gets the entry less those, and leaves it as it is.
    pub(in crate::scheduler) fn kept_candidates(
        &self,
        id: JobId,
        key: Key,
        memo: &mut CandidateMemo,
    ) -> Option<VictimCandidates> {
        let tree = self.state.quota.tree.as_ref()?;
        let entry = memo.entries.iter_mut().find(|e| e.key == key)?;
        let unchanged = entry
            .borrowing
            .iter()
            .all(|&(q, was)| tree.is_borrowing(q) == was);
        if !unchanged {
            return None;
        }
        let job = self.state.job(id)?;
        let changes = self.state.quota.earmark_changes;
        if entry.earmark_changes != changes {
            // Brought up to date for every preemptor of the key (all of one queue): jobs told
            // to stop since are no victims of any of them.
            let fair = self.fair_preemptor(id);
            let still = |v: JobId| {
                self.state
                    .job_view(v)
                    .is_some_and(|victim| !self.never_victim_in_queue(job, victim, fair))
            };
            entry.candidates.retain(|(v, _)| still(*v));
            entry.vetoed.retain(|(v, _)| still(*v));
            entry.earmark_changes = changes;
        }
        if self.keeps_its_candidates(id) {
            let veto_ends = entry.vetoed.iter().map(|&(_, end)| end).min();
            return Some((entry.candidates.clone(), veto_ends));
        }
        // Less its own preemptors.
        let own = |v: JobId| {
            self.state
                .job_view(v)
                .is_some_and(|victim| self.victim_preempted_it(job, victim))
        };
        let candidates: Vec<(JobId, Basis)> = (entry.candidates.iter())
            .filter(|(v, _)| !own(*v))
            .copied()
            .collect();
        let veto_ends = (entry.vetoed.iter())
            .filter(|(v, _)| !own(*v))
            .map(|&(_, end)| end)
            .min();
        Some((candidates, veto_ends))
    }

    /// Keeps `candidates`, just built for a search under `key`, with the jobs a veto with an
    /// end removed (`vetoed`), for the pass's later searches.
    pub(in crate::scheduler) fn keep_candidates(
        &self,
        key: Key,
        candidates: &[(JobId, Basis)],
        vetoed: Vetoed,
        memo: &mut CandidateMemo,
    ) {
        let Some(tree) = self.state.quota.tree.as_ref() else {
            return;
        };
        let borrowing = (0..tree.queue_count())
            .map(|q| QueueId(q as u32))
            .filter(|&q| tree.same_tree(key.0, q))
            .map(|q| (q, tree.is_borrowing(q)))
            .collect();
        let entry = Entry {
            key,
            borrowing,
            candidates: candidates.to_vec(),
            vetoed,
            earmark_changes: self.state.quota.earmark_changes,
        };
        match memo.entries.iter_mut().find(|e| e.key == key) {
            Some(kept) => *kept = entry,
            None => memo.entries.push(entry),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{BorrowPolicy, ReclaimWithinCohort, WithinQueue};
    use crate::policy::Profile;
    use crate::policy::builtin::ShortestFirst;
    use crate::scheduler::pass::preempt::Walk;
    use crate::scheduler::pass::preempt::test_plugins::{OldestFirst, built_ins};
    use crate::{ClusterConfig, Event, JobSpec};

    /// A 7-cpu node; cohort `c` holds queues `qa` (4 cpus nominal), `qb` (2) and `qc` (1),
    /// cohort `f` (fair sharing) queue `qf` (2). Preemption is off, so that nothing moves.
    /// One-cpu jobs run: at 0 `a1` (`qa`), `b1`, `b2` (`qb`), `c1` and `c2` (`qc`, `c2` for
    /// 41 s: `qc` borrows 1 until it ends); at 20 s `b3`, at 22 s `b4` (`qb` borrows 2). At
    /// 25 s `a2` (`qa`) and `f1` (`qf`) wait, two cpus each, of priority 7.
    fn seven_running(profile: Profile) -> Scheduler {
        let mut cluster: ClusterConfig = serde_json::from_str(
            r#"{"nodes": [{"name": "n1", "cpus": 7}],
                "cohorts": [{"name": "c"}, {"name": "f", "fair_sharing": {"enabled": true}}],
                "queues": [{"name": "qa", "cohort": "c", "quota": {"cpu": {"nominal": 4}}},
                           {"name": "qb", "cohort": "c", "quota": {"cpu": {"nominal": 2}}},
                           {"name": "qc", "cohort": "c", "quota": {"cpu": {"nominal": 1}}},
                           {"name": "qf", "cohort": "f", "quota": {"cpu": {"nominal": 2}}}]}"#,
        )
        .unwrap();
        cluster.policy.preemption.enabled = false;
        let mut s = Scheduler::with_profile(cluster, profile).unwrap();
        let job = |name: &str, queue: &str, limit_ms: u64, count: u32, priority: i32| {
            let mut job = JobSpec::new(name, limit_ms, count);
            job.queue = Some(queue.into());
            job.priority = priority;
            Event::Submit { job }
        };
        let hour = 3_600_000;
        let first = vec![
            job("a1", "qa", hour, 1, 0),
            job("b1", "qb", hour, 1, 0),
            job("b2", "qb", hour, 1, 0),
            job("c1", "qc", hour, 1, 0),
            job("c2", "qc", 41_000, 1, 0),
        ];
        s.tick(0, first).unwrap();
        s.tick(20_000, vec![job("b3", "qb", hour, 1, 0)]).unwrap();
        s.tick(22_000, vec![job("b4", "qb", hour, 1, 0)]).unwrap();
        s.tick(
            25_000,
            vec![job("a2", "qa", hour, 2, 7), job("f1", "qf", hour, 2, 7)],
        )
        .unwrap();
        assert_eq!(s.state.running.len(), 7);
        assert_eq!(s.state.pending.len(), 2);
        assert_eq!(borrowing(&s), ["qb", "qc"]);
        s
    }

    /// The queues that borrow now.
    fn borrowing(s: &Scheduler) -> Vec<&str> {
        let tree = s.state.quota.tree.as_ref().unwrap();
        (0..tree.queue_count())
            .map(|q| QueueId(q as u32))
            .filter(|&q| tree.is_borrowing(q))
            .map(|q| tree.queue_name(q))
            .collect()
    }

    /// `a2`, its key, and its candidates as a full walk finds them, kept in a new memo.
    fn a2_kept(s: &Scheduler) -> (JobId, Key, Vec<(JobId, Basis)>, CandidateMemo) {
        let a2 = id(s, "a2");
        let key = s.candidate_key(a2).unwrap();
        let (candidates, vetoed) = s.candidates_and_vetoed(a2, Walk::Every, None);
        let mut memo = CandidateMemo::default();
        s.keep_candidates(key, &candidates, vetoed, &mut memo);
        (a2, key, candidates, memo)
    }

    fn id(s: &Scheduler, name: &str) -> JobId {
        s.state.job_id(name).unwrap()
    }

    fn queue(s: &Scheduler, name: &str) -> QueueId {
        s.state.quota.tree.as_ref().unwrap().queue_id(name).unwrap()
    }

    fn policy<'a>(
        s: &'a mut Scheduler,
        name: &str,
    ) -> &'a mut crate::config::QueuePreemptionConfig {
        let q = queue(s, name);
        &mut s.state.config_mut().queues[q.index()].preemption
    }

    fn job_mut<'a>(s: &'a mut Scheduler, name: &str) -> &'a mut crate::state::Job {
        let v = id(s, name);
        s.state.jobs.get_mut(v).unwrap()
    }

    #[test]
    fn a_search_is_keyed_by_queue_partition_and_the_priority_only_where_its_policies_read_it() {
        let mut s = seven_running(built_ins());
        let (a2, f1) = (id(&s, "a2"), id(&s, "f1"));
        let (qa, qf) = (queue(&s, "qa"), queue(&s, "qf"));
        let partition = s.state.job(a2).unwrap().partition;
        assert!(!s.fair_preemptor(a2) && s.fair_preemptor(f1));
        // Kueue's defaults (never, never): no policy reads the priority.
        assert_eq!(s.candidate_key(a2), Some((qa, partition, None)));
        assert_eq!(s.candidate_key(f1), Some((qf, partition, None)));
        // Within the queue by priority, reclaiming from lower priorities, or borrowing within
        // the cohort (not for a fair-sharing queue) read it; reclaiming from any borrower not.
        policy(&mut s, "qa").within_queue = WithinQueue::LowerPriority;
        assert_eq!(s.candidate_key(a2), Some((qa, partition, Some(7))));
        *policy(&mut s, "qa") = Default::default();
        policy(&mut s, "qa").reclaim_within_cohort = ReclaimWithinCohort::LowerPriority;
        assert_eq!(s.candidate_key(a2), Some((qa, partition, Some(7))));
        policy(&mut s, "qa").reclaim_within_cohort = ReclaimWithinCohort::Any;
        assert_eq!(s.candidate_key(a2), Some((qa, partition, None)));
        policy(&mut s, "qa").borrow_within_cohort.policy = BorrowPolicy::LowerPriority;
        assert_eq!(s.candidate_key(a2), Some((qa, partition, Some(7))));
        policy(&mut s, "qf").reclaim_within_cohort = ReclaimWithinCohort::Any;
        policy(&mut s, "qf").borrow_within_cohort.policy = BorrowPolicy::LowerPriority;
        assert_eq!(s.candidate_key(f1), Some((qf, partition, None)));
        policy(&mut s, "qf").within_queue = WithinQueue::LowerPriority;
        assert_eq!(s.candidate_key(f1), Some((qf, partition, Some(7))));
        *policy(&mut s, "qa") = Default::default();
        // A queue whose own candidates read the preemptor's submit time: no key.
        policy(&mut s, "qa").within_queue = WithinQueue::LowerOrNewerEqualPriority;
        assert_eq!(s.candidate_key(a2), None);
        *policy(&mut s, "qa") = Default::default();
        // A preemptor preempted before keeps its key, but under anti-thrash keeps no
        // candidates of its own.
        s.state.config_mut().policy.preemption.anti_thrash = true;
        assert_eq!(s.candidate_key(a2), Some((qa, partition, None)));
        assert!(s.keeps_its_candidates(a2));
        let arrival = s.state.job(id(&s, "b1")).unwrap().arrival;
        job_mut(&mut s, "a2").preempted_by.push(arrival);
        assert_eq!(s.candidate_key(a2), Some((qa, partition, None)));
        assert!(!s.keeps_its_candidates(a2));
        s.state.config_mut().policy.preemption.anti_thrash = false;
        assert!(s.keeps_its_candidates(a2));
    }

    #[test]
    fn a_preemptor_preempted_before_takes_kept_candidates_less_its_own_preemptors() {
        let mut s = seven_running(built_ins());
        s.state.config_mut().policy.preemption.anti_thrash = true;
        policy(&mut s, "qa").reclaim_within_cohort = ReclaimWithinCohort::Any;
        let (a2, key, candidates, mut memo) = a2_kept(&s);
        assert!(candidates.iter().any(|&(v, _)| v == id(&s, "b1")));

        // `b1` preempted `a2` before: it is no victim of `a2`, in the kept candidates as in a
        // full walk.
        let arrival = s.state.job(id(&s, "b1")).unwrap().arrival;
        job_mut(&mut s, "a2").preempted_by.push(arrival);
        let walked = s.victim_candidates(a2, Walk::Every);
        assert!(walked.0.iter().all(|&(v, _)| v != id(&s, "b1")));
        assert_eq!(walked.0.len(), candidates.len() - 1);
        assert_eq!(s.kept_candidates(a2, key, &mut memo), Some(walked));
        // The entry still serves preemptors alike with `b1` among the candidates.
        job_mut(&mut s, "a2").preempted_by.clear();
        let full = s.victim_candidates(a2, Walk::Every);
        assert_eq!(full.0, candidates);
        assert_eq!(s.kept_candidates(a2, key, &mut memo), Some(full));
    }

    #[test]
    fn no_key_without_shortcuts_bases_outside_the_queue_policies_or_a_host_s_victim_plug_in() {
        let mut s = seven_running(built_ins());
        let (a2, f1) = (id(&s, "a2"), id(&s, "f1"));
        assert!(s.candidate_key(a2).is_some());
        assert_eq!(s.with_reference_pass().candidate_key(a2), None);
        // Order-based preemption gives bases outside the queue policies, except to a
        // fair-sharing preemptor.
        s.state.config_mut().policy.preemption.order_based = true;
        assert_eq!(s.candidate_key(a2), None);
        assert!(s.candidate_key(f1).is_some());
        let hosts = Profile::builder()
            .plugin(ShortestFirst)
            .plugin(OldestFirst)
            .build()
            .unwrap();
        let s = seven_running(hosts);
        assert_eq!(s.candidate_key(id(&s, "a2")), None);
        assert_eq!(s.candidate_key(id(&s, "f1")), None);
    }

    #[test]
    fn kept_candidates_serve_a_preemptor_alike_while_the_borrowing_holds_less_the_jobs_no_longer_victims()
     {
        let mut s = seven_running(built_ins());
        // `qa` takes its own lower priorities and reclaims from any borrower: `a1`, and `qb`'s
        // and `qc`'s jobs, `b3` and `b4` vetoed until 30 s and 32 s.
        policy(&mut s, "qa").within_queue = WithinQueue::LowerPriority;
        policy(&mut s, "qa").reclaim_within_cohort = ReclaimWithinCohort::Any;
        let a2 = id(&s, "a2");
        let key = s.candidate_key(a2).unwrap();
        let (candidates, vetoed) = s.candidates_and_vetoed(a2, Walk::Every, None);
        let mut named: Vec<JobId> = candidates.iter().map(|&(v, _)| v).collect();
        named.sort_unstable();
        let mut expected: Vec<JobId> = ["a1", "b1", "b2", "c1", "c2"]
            .iter()
            .map(|name| id(&s, name))
            .collect();
        expected.sort_unstable();
        assert_eq!(named, expected);
        assert_eq!(
            vetoed
                .iter()
                .copied()
                .collect::<std::collections::BTreeSet<_>>(),
            [(id(&s, "b3"), 30_000), (id(&s, "b4"), 32_000)].into()
        );
        let walked = s.victim_candidates(a2, Walk::Every);
        assert_eq!(walked, (candidates.clone(), Some(30_000)));

        let mut memo = CandidateMemo::default();
        assert_eq!(s.kept_candidates(a2, key, &mut memo), None);
        s.keep_candidates(key, &candidates, vetoed.clone(), &mut memo);
        assert_eq!(s.kept_candidates(a2, key, &mut memo), Some(walked.clone()));
        // Another key finds nothing; keeping under it leaves the first entry alone, and
        // keeping again under the first key replaces that entry.
        let other = (key.0, key.1, Some(8));
        assert_eq!(s.kept_candidates(a2, other, &mut memo), None);
        s.keep_candidates(other, &candidates[..1], Vec::new(), &mut memo);
        assert_eq!(
            s.kept_candidates(a2, other, &mut memo),
            Some((candidates[..1].to_vec(), None))
        );
        assert_eq!(s.kept_candidates(a2, key, &mut memo), Some(walked.clone()));
        s.keep_candidates(key, &candidates[1..], vetoed[1..].to_vec(), &mut memo);
        assert_eq!(memo.entries.len(), 2);
        assert_eq!(
            s.kept_candidates(a2, key, &mut memo),
            Some((candidates[1..].to_vec(), Some(vetoed[1].1)))
        );
        s.keep_candidates(key, &candidates, vetoed.clone(), &mut memo);

        // Jobs told to stop since (here for `f1`) are no victims any more: they are left out,
        // and so are their vetoes' ends, as a full walk finds them.
        let stopping = vec![id(&s, "b1"), id(&s, "b3")];
        let choice = crate::scheduler::pass::preempt::Choice {
            victims: stopping,
            plan: Vec::new(),
        };
        s.preempt(id(&s, "f1"), choice, &mut Vec::new());
        assert_eq!(borrowing(&s), ["qb", "qc"]);
        let kept = s.kept_candidates(a2, key, &mut memo).unwrap();
        let without_b1: Vec<(JobId, Basis)> = candidates
            .iter()
            .copied()
            .filter(|&(v, _)| v != id(&s, "b1"))
            .collect();
        assert_eq!(kept, (without_b1, Some(32_000)));
        assert_eq!(kept, s.victim_candidates(a2, Walk::Every));
        // The entry was brought up to date: the next search alike takes it as it is.
        assert_eq!(s.kept_candidates(a2, key, &mut memo), Some(kept));

        // `c2` ends: `qc` no longer borrows, and the kept candidates no longer hold.
        s.tick(42_000, vec![]).unwrap();
        assert!(
            s.state
                .job(id(&s, "c2"))
                .is_none_or(|j| j.running().is_none())
        );
        assert_eq!(borrowing(&s), ["qb"]);
        assert_eq!(s.kept_candidates(a2, key, &mut memo), None);
    }

    #[test]
    fn kept_candidates_hold_while_only_another_cohort_tree_s_borrowing_changes() {
        let mut s = seven_running(built_ins());
        policy(&mut s, "qa").reclaim_within_cohort = ReclaimWithinCohort::Any;
        let (a2, key, _, mut memo) = a2_kept(&s);
        let walked = s.victim_candidates(a2, Walk::Every);
        assert_eq!(s.kept_candidates(a2, key, &mut memo), Some(walked.clone()));

        // `qf` (cohort `f`) is charged past its nominal: `qa`'s candidates, all of cohort
        // `c`, stay as a full walk finds them, and the kept ones serve.
        let (qa, qf) = (queue(&s, "qa"), queue(&s, "qf"));
        let tree = s.state.quota.tree.as_mut().unwrap();
        let three_cpus = tree.demand(3_000, 0, &[]);
        tree.add_usage(qf, &three_cpus);
        assert_eq!(borrowing(&s), ["qb", "qc", "qf"]);
        assert_eq!(s.victim_candidates(a2, Walk::Every), walked);
        assert_eq!(s.kept_candidates(a2, key, &mut memo), Some(walked));

        // A queue of `qa`'s own tree that starts to borrow (here `qa` itself) does not.
        let tree = s.state.quota.tree.as_mut().unwrap();
        let four_cpus = tree.demand(4_000, 0, &[]);
        tree.add_usage(qa, &four_cpus);
        assert_eq!(borrowing(&s), ["qa", "qb", "qc", "qf"]);
        assert_eq!(s.kept_candidates(a2, key, &mut memo), None);
    }
}
