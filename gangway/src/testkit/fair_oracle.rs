//! The oracle's fair-sharing checks: with fair sharing between queues on for a preemptor's
//! cohort tree, every victim it takes from another queue is in the same tree and in a queue that
//! borrows (Kueue only preempts from borrowing queues), and the victim remembers the preemptor's
//! queue (so that no job of that queue preempts it again).

use crate::decision::{Decision, TickOutcome};
use crate::scheduler::Scheduler;

/// Checks the fair-sharing preemptions of `outcome`, the tick `scheduler` just made.
pub(super) fn check_fair_preemptions(
    scheduler: &Scheduler,
    outcome: &TickOutcome,
) -> Result<(), String> {
    let state = scheduler.state();
    let Some(tree) = state.quota_tree() else {
        return Ok(());
    };
    for decision in &outcome.decisions {
        let Decision::Preempt { job, for_job, .. } = decision else {
            continue;
        };
        let (Some(victim), Some(preemptor)) = (state.job_by_name(job), state.job_by_name(for_job))
        else {
            return Err(format!(
                "preemption of {job} for {for_job} names an unknown job"
            ));
        };
        let Some(pq) = preemptor.record().queue.filter(|&q| tree.fair_sharing(q)) else {
            continue;
        };
        let Some(vq) = victim.record().queue.filter(|&vq| tree.same_tree(pq, vq)) else {
            return Err(format!(
                "{for_job} of fair-sharing queue {} preempted {job} outside its cohort tree",
                tree.queue_name(pq)
            ));
        };
        if vq == pq {
            continue;
        }
        // Usage of the victim's queue only grew since the preemption (victims keep running
        // until they stop), so not borrowing now means it was not borrowing then.
        if !tree.queue_share(vq).is_borrowing() {
            return Err(format!(
                "{for_job} preempted {job} of queue {}, which does not borrow",
                tree.queue_name(vq)
            ));
        }
        if !victim.record().preempted_by_fair_queue(tree.queue_name(pq)) {
            return Err(format!(
                "{job} does not remember that queue {} preempted it",
                tree.queue_name(pq)
            ));
        }
    }
    Ok(())
}
