//! The oracle's fair-sharing checks: with fair sharing between queues on for a preemptor's
//! cohort tree, every victim it takes from another queue is in the same tree and in a queue that
//! borrows (Kueue only preempts from borrowing queues), and the victim remembers the preemptor's
//! queue (so that no job of that queue preempts it again).
//!
//! The engine reads a queue's share as it will be once every preemption under way has completed:
//! the earmarked preemptors charged, their victims released
//! ([`crate::state::ClusterState::promised_usage`]). A queue may so borrow only through a
//! preemptor of its own that waits for its victims, made earlier in the same pass. The oracle
//! reads the usage after the tick with every earmarked preemptor charged and no victim released:
//! running usage only grew since the preemption (victims keep running until they stop) and so did
//! the earmarks, so a queue that does not borrow on that did not borrow when it was chosen.

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
    let mut promised = tree.usage.clone();
    for (_, queue, demand) in state.earmark_demands() {
        tree.charge_in(&mut promised, queue, &demand);
    }
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
        if !tree.share_in(&promised, vq.index()).is_borrowing() {
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
