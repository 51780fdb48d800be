//! Step 2 of a pass: kill jobs past their time limit or preemption grace; compute wake-ups.

use super::Scheduler;
use crate::decision::{Decision, KillReason};
use crate::model::ids::JobId;
use crate::model::job::Outcome;

impl Scheduler {
    /// Kills running jobs at start + time limit (when enforced) and preempted jobs at grace
    /// expiry (those go back to pending when requeueable).
    pub(super) fn enforce_limits(&mut self, now_ms: u64, decisions: &mut Vec<Decision>) {
        let enforce = self.state.config.policy.time_limit.enforce;
        let mut expired: Vec<(JobId, String, KillReason)> = Vec::new();
        for &id in &self.state.running {
            let Some(job) = self.state.job(id) else {
                continue;
            };
            let Some(run) = job.running() else { continue };
            if let Some(p) = run.preemption
                && p.deadline_ms <= now_ms
            {
                expired.push((id, job.spec.id.clone(), KillReason::GraceExpired));
            } else if enforce && run.start_ms.saturating_add(job.spec.time_limit_ms) <= now_ms {
                expired.push((id, job.spec.id.clone(), KillReason::TimeLimit));
            }
        }
        for (id, job, reason) in expired {
            decisions.push(Decision::Kill { job, reason });
            match reason {
                KillReason::GraceExpired => self.state.stop_preempted(id, now_ms, decisions),
                _ => self.state.end_job(id, Outcome::Killed, now_ms, decisions),
            }
        }
    }

    /// The earliest future instant at which something happens without an event: a time limit, a
    /// grace deadline, `next_begin` (the pass's earliest pending begin time), or a window's end
    /// while jobs are pending (one it blocked may start then).
    pub(super) fn compute_next_wakeup(&self, now_ms: u64, next_begin: Option<u64>) -> Option<u64> {
        let enforce = self.state.config.policy.time_limit.enforce;
        let mut next: Option<u64> = None;
        let mut consider = |t: u64| {
            if t > now_ms {
                next = Some(next.map_or(t, |n| n.min(t)));
            }
        };
        for &id in &self.state.running {
            let Some(job) = self.state.job(id) else {
                continue;
            };
            let Some(run) = job.running() else { continue };
            if enforce {
                consider(run.start_ms.saturating_add(job.spec.time_limit_ms));
            }
            if let Some(p) = run.preemption {
                // A grace of 0 given in this tick expires at the next millisecond.
                consider(p.deadline_ms.max(now_ms.saturating_add(1)));
            }
        }
        if let Some(begin) = next_begin {
            consider(begin);
        }
        if !self.state.pending.is_empty() {
            for end in self.state.maintenance.ends() {
                consider(end);
            }
        }
        next
    }
}
