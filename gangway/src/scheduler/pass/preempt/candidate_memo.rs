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
//! borrows. Two exceptions read more, and are left out: a preemptor that was preempted itself
//! (with `anti_thrash` its own preemptors are no victims of it), and a queue whose
//! `within_queue` is `lower_or_newer_equal_priority` (its own queue's candidates read the
//! preemptor's submit time).
//!
//! Within one pass, what else can change between two searches is what the pass does: a job
//! starts (it is never a victim in the tick it started, but its queue's usage grows, and so
//! may the queue's borrowing) or is told to stop (then it is no victim of anyone). So a
//! search's candidates are kept with every queue's borrowing as it stood, and a later search
//! of a preemptor of the same queue, partition and priority takes them where every queue
//! borrows as it did, less the jobs the engine's rules now keep from being victims; a veto's
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
    /// Whether each queue of the quota tree borrowed when the candidates were built.
    borrowing: Vec<bool>,
    /// The candidates, in victim order, with their bases.
    candidates: Vec<(JobId, Basis)>,
    /// The jobs a veto with an end after now removed, with that end.
    vetoed: Vetoed,
}

impl Scheduler {
    /// The key under which the candidates of a search for `id` may be kept ([`CandidateMemo`]),
    /// or `None`.
    pub(in crate::scheduler) fn candidate_key(&self, id: JobId) -> Option<Key> {
        use crate::config::{ReclaimWithinCohort, WithinQueue};
        let settings = &self.state.config.policy.preemption;
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
        let reads_more = policy.within_queue == WithinQueue::LowerOrNewerEqualPriority
            || (settings.anti_thrash && !job.preempted_by.is_empty());
        // The bases read the preemptor's priority only under these policies (borrowing within
        // the cohort does not apply to a fair-sharing queue).
        let reads_priority = policy.within_queue != WithinQueue::Never
            || policy.reclaim_within_cohort == ReclaimWithinCohort::LowerPriority
            || (!self.fair_preemptor(id) && !policy.borrow_within_cohort.is_never());
        let priority = reads_priority.then_some(job.spec.priority);
        (!reads_more).then_some((queue, job.partition, priority))
    }

    /// The candidates kept under `key` for the search of `id`, where every queue borrows as it
    /// did when they were built: those the engine's rules still let be victims of `id`.
    pub(in crate::scheduler) fn kept_candidates(
        &self,
        id: JobId,
        key: Key,
        memo: &CandidateMemo,
    ) -> Option<VictimCandidates> {
        let tree = self.state.quota.tree.as_ref()?;
        let entry = memo.entries.iter().find(|e| e.key == key)?;
        let unchanged = entry
            .borrowing
            .iter()
            .enumerate()
            .all(|(q, &was)| tree.is_borrowing(QueueId(q as u32)) == was);
        if !unchanged {
            return None;
        }
        let job = self.state.job(id)?;
        let fair = self.fair_preemptor(id);
        let still = |v: JobId| {
            self.state
                .job_view(v)
                .is_some_and(|victim| !self.never_victim(job, victim, fair))
        };
        let candidates = entry
            .candidates
            .iter()
            .filter(|(v, _)| still(*v))
            .copied()
            .collect();
        let veto_ends = entry
            .vetoed
            .iter()
            .filter(|(v, _)| still(*v))
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
            .map(|q| tree.is_borrowing(QueueId(q as u32)))
            .collect();
        let entry = Entry {
            key,
            borrowing,
            candidates: candidates.to_vec(),
            vetoed,
        };
        match memo.entries.iter_mut().find(|e| e.key == key) {
            Some(kept) => *kept = entry,
            None => memo.entries.push(entry),
        }
    }
}
