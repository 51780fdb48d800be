//! Step 4 of a pass: kill jobs past their time limit or preemption grace, evict jobs past their
//! ready deadline; compute wake-ups.

use crate::decision::{Decision, KillReason};
use crate::model::ids::JobId;
use crate::model::job::Outcome;
use crate::scheduler::Scheduler;
use crate::state::Job;

/// What came due for a running job.
#[derive(Clone, Copy)]
enum Due {
    /// Killed, with this reason.
    Kill(KillReason),
    /// Missed its ready deadline: requeued with a back-off, or killed.
    NotReady,
}

impl Scheduler {
    /// Kills running jobs at start + time limit (when enforced) and preempted jobs at grace
    /// expiry (those go back to pending when requeueable); evicts jobs past their ready
    /// deadline (`policy.wait_for_ready`). One job meets at most one of these, in that order.
    pub(in crate::scheduler) fn enforce_limits(
        &mut self,
        now_ms: u64,
        decisions: &mut Vec<Decision>,
    ) {
        let enforce = self.state.config.policy.time_limit.enforce;
        let due = |id: JobId| {
            let job = self.state.job(id)?;
            let due = due_at(job, now_ms, enforce)?;
            Some((id, job.spec.id.clone(), due))
        };
        let every = || -> Vec<_> {
            self.state
                .running
                .iter()
                .filter_map(|&id| due(id))
                .collect()
        };
        let expired = match self.jobs_maybe_due(now_ms, enforce) {
            Some(released) => {
                let expired: Vec<_> = released.into_iter().filter_map(due).collect();
                debug_assert!(
                    expired.iter().map(|e| e.0).eq(every().iter().map(|e| e.0)),
                    "the jobs released by now are every job that came due"
                );
                expired
            }
            None => every(),
        };
        for (id, job, due) in expired {
            match due {
                Due::Kill(reason) => {
                    decisions.push(Decision::Kill { job, reason });
                    match reason {
                        KillReason::GraceExpired => {
                            self.state.stop_preempted(id, now_ms, decisions);
                        }
                        _ => self.state.end_job(id, Outcome::Killed, now_ms, decisions),
                    }
                }
                Due::NotReady => self.state.evict_not_ready(id, now_ms, decisions),
            }
        }
    }

    /// The running jobs that may be due at `now`, in id order, where readiness is not watched:
    /// with time limits enforced, those whose release time (time limit, or grace deadline when
    /// earlier) has come (a time limit or a grace deadline reached is a release time reached);
    /// without, those whose grace deadline has come. The others need not be read. `None`:
    /// every running job must be (readiness watched, or the reference pass, which reads them
    /// all).
    fn jobs_maybe_due(&self, now: u64, enforce: bool) -> Option<Vec<JobId>> {
        if !self.shortcuts || self.state.wait_for_ready().is_some() {
            return None;
        }
        let ends = &self.state.running_ends;
        let mut due: Vec<JobId> = match enforce {
            true => ends.released_by(now).collect(),
            false => ends.grace_over_by(now).collect(),
        };
        due.sort_unstable();
        Some(due)
    }

    /// The earliest future instant at which something happens without an event: a time limit, a
    /// grace deadline, a ready deadline, `next_begin` (the pass's earliest pending begin time or
    /// back-off end), or a window's end while jobs are pending (one it blocked may start then).
    pub(in crate::scheduler) fn compute_next_wakeup(
        &self,
        now_ms: u64,
        next_begin: Option<u64>,
    ) -> Option<u64> {
        let enforce = self.state.config.policy.time_limit.enforce;
        let ahead = |times: &mut dyn Iterator<Item = u64>| times.filter(|&t| t > now_ms).min();
        let job_times = |id: JobId| {
            let job = self.state.job(id)?;
            Some(wakeups(job, now_ms, enforce))
        };
        let every = || {
            ahead(
                &mut self
                    .state
                    .running
                    .iter()
                    .filter_map(|&id| job_times(id))
                    .flatten(),
            )
        };
        // Where readiness is not watched, a job whose release time is still ahead wakes the
        // scheduler first at that time with time limits enforced (its time limit, or its grace
        // deadline when earlier), and only at its grace deadline without: the earliest of them
        // stands for them all, and only the jobs that may be due now are read one by one.
        let running = match self.jobs_maybe_due(now_ms, enforce) {
            Some(due) => {
                let read = ahead(&mut due.into_iter().filter_map(job_times).flatten());
                let ends = &self.state.running_ends;
                let first = match enforce {
                    true => ends.first_release_after(now_ms),
                    false => (ends.first_grace_deadline()).map(|t| t.max(now_ms.saturating_add(1))),
                };
                let running = read.into_iter().chain(first).min();
                debug_assert_eq!(
                    running,
                    every(),
                    "the first release ahead stands for the running jobs it is ahead of"
                );
                running
            }
            None => every(),
        };
        let mut next: Option<u64> = None;
        let mut consider = |t: u64| {
            if t > now_ms {
                next = Some(next.map_or(t, |n| n.min(t)));
            }
        };
        running.into_iter().for_each(&mut consider);
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

/// What came due for running job `job` at `now` (`enforce`: time limits are enforced), if
/// anything: its grace expired, its time limit reached, its ready deadline passed.
fn due_at(job: &Job, now: u64, enforce: bool) -> Option<Due> {
    let run = job.running()?;
    if let Some(p) = run.preemption
        && p.deadline_ms <= now
    {
        Some(Due::Kill(KillReason::GraceExpired))
    } else if enforce && run.start_ms.saturating_add(job.spec.time_limit_ms) <= now {
        Some(Due::Kill(KillReason::TimeLimit))
    } else if ready_deadline(job).is_some_and(|t| t <= now) {
        Some(Due::NotReady)
    } else {
        None
    }
}

/// The instants at which running job `job` wakes the scheduler (those not after `now` are
/// passed over by the caller): its time limit when `enforce`d, its grace deadline (a grace of 0
/// given in this tick expires at the next millisecond), its ready deadline.
fn wakeups(job: &Job, now: u64, enforce: bool) -> impl Iterator<Item = u64> {
    let run = job.running();
    let limit = run
        .filter(|_| enforce)
        .map(|run| run.start_ms.saturating_add(job.spec.time_limit_ms));
    let grace = run
        .and_then(|run| run.preemption)
        .map(|p| p.deadline_ms.max(now.saturating_add(1)));
    let ready = run.and(ready_deadline(job));
    [limit, grace, ready].into_iter().flatten()
}

/// The ready deadline that evicts a running job: none once it has been told to stop (its grace
/// decides then).
fn ready_deadline(job: &Job) -> Option<u64> {
    job.ready_deadline_ms()
        .filter(|_| job.running().is_some_and(|r| r.preemption.is_none()))
}

#[cfg(test)]
pub(super) mod tests {
    use serde_json::json;

    use crate::config::ClusterConfig;
    use crate::decision::{Decision, KillReason};
    use crate::event::Event;
    use crate::scheduler::Scheduler;

    fn submit(job: serde_json::Value) -> Event {
        serde_json::from_value(json!({"type": "submit", "job": job})).unwrap()
    }

    /// Two teams of one 8-GPU node each, time limits enforced or not; `a2` (requeueable, with
    /// `a2_limit_ms`), borrowing `b`'s node, is reclaimed at 1,000 with a grace of 60 s and
    /// never stops.
    fn a2_reclaimed(enforce: bool, a2_limit_ms: u64) -> Scheduler {
        let team = |name: &str| {
            json!({"name": name, "cohort": "lab",
                "quota": {"gpu": {"nominal": 8, "borrowing_limit": 8}},
                "preemption": {"reclaim_within_cohort": "any"}})
        };
        let cluster: ClusterConfig = serde_json::from_value(json!({
            "nodes": (1..=2).map(|i| json!({"name": format!("n{i}"), "cpus": 64,
                "memory_mib": 512000, "gpus": {"model": "h100", "count": 8}}))
                .collect::<Vec<_>>(),
            "cohorts": [{"name": "lab"}],
            "queues": [team("team-a"), team("team-b")],
            "policy": {"preemption": {"enabled": true}, "time_limit": {"enforce": enforce}}}))
        .unwrap();
        let job = |id: &str, queue: &str, requeue: bool, limit: u64| {
            submit(json!({"id": id, "queue": queue, "time_limit_ms": limit,
                "grace_ms": 60_000, "requeue": requeue, "groups": [{"count": 1, "gpus": 8}]}))
        };
        let mut s = Scheduler::new(cluster).unwrap();
        let (a1, a2) = (
            job("a1", "team-a", false, 86_400_000),
            job("a2", "team-a", true, a2_limit_ms),
        );
        s.tick(0, vec![a1, a2]).unwrap();
        let out = s
            .tick(1_000, vec![job("b", "team-b", false, 86_400_000)])
            .unwrap();
        assert!(matches!(&out.decisions[..], [Decision::Preempt { job, .. }] if job == "a2"));
        s
    }

    #[test]
    fn a_preempted_job_past_its_grace_is_killed_and_requeued_where_requeueable() {
        let mut s = a2_reclaimed(true, 86_400_000);
        // Nothing is due before the deadline.
        let out = s.tick(60_999, vec![]).unwrap();
        assert!(out.decisions.is_empty(), "{:?}", out.decisions);
        let out = s.tick(61_000, vec![]).unwrap();
        assert!(
            matches!(&out.decisions[0], Decision::Kill { job, reason: KillReason::GraceExpired }
            if job == "a2")
        );
        // Requeueable: pending again, not ended.
        assert!(s.state().job_by_name("a2").unwrap().is_pending());
    }

    /// Time limits not enforced: a job told to stop wakes the scheduler at its grace deadline,
    /// after its time limit (its release time, as backfill plans it), and is killed then, not at
    /// its time limit; limits not enforced wake nothing.
    #[test]
    fn without_time_limits_a_grace_past_the_limit_wakes_and_kills_at_its_deadline() {
        let mut s = a2_reclaimed(false, 30_000);
        let out = s.tick(2_000, vec![]).unwrap();
        assert_eq!(out.next_wakeup_ms, Some(61_000));
        let out = s.tick(30_000, vec![]).unwrap();
        assert!(out.decisions.is_empty(), "{:?}", out.decisions);
        assert_eq!(out.next_wakeup_ms, Some(61_000));
        let out = s.tick(61_000, vec![]).unwrap();
        assert!(
            matches!(&out.decisions[0], Decision::Kill { job, reason: KillReason::GraceExpired }
            if job == "a2"),
            "{:?}",
            out.decisions
        );
        // `a1` and `b` run on, their limits not enforced: nothing wakes the scheduler.
        let out = s.tick(62_000, vec![]).unwrap();
        assert_eq!(out.next_wakeup_ms, None, "{:?}", out.decisions);
    }

    /// One node whose jobs must report ready within 100 ms, and requeueable `a`, started on it
    /// at 0 and not ready.
    pub(in crate::scheduler::pass) fn a_started_awaiting_ready() -> Scheduler {
        let cluster: ClusterConfig = serde_json::from_value(json!({
            "nodes": [{"name": "n1", "cpus": 4}],
            "policy": {"wait_for_ready": {"timeout_ms": 100}}}))
        .unwrap();
        let mut s = Scheduler::new(cluster).unwrap();
        let job = json!({"id": "a", "time_limit_ms": 60_000, "requeue": true,
            "groups": [{"count": 1, "cpus": 1}]});
        s.tick(0, vec![submit(job)]).unwrap();
        assert!(s.state().job_by_name("a").unwrap().is_running());
        s
    }

    #[test]
    fn a_job_not_ready_by_its_deadline_is_evicted_then_and_not_before() {
        let mut s = a_started_awaiting_ready();
        let out = s.tick(99, vec![]).unwrap();
        assert!(out.decisions.is_empty(), "{:?}", out.decisions);
        assert!(s.state().job_by_name("a").unwrap().is_running());
        let out = s.tick(100, vec![]).unwrap();
        assert!(
            matches!(&out.decisions[0], Decision::Requeue { job, .. } if job == "a"),
            "{:?}",
            out.decisions
        );
    }

    #[test]
    fn the_next_wake_up_is_after_now_even_where_a_window_declared_now_ends_now() {
        // A maintenance window on the only node until 100; `a` then starts, `b` waits for it.
        let cluster: ClusterConfig = serde_json::from_value(json!({
            "nodes": [{"name": "n1", "cpus": 4}],
            "maintenance": [{"id": "fw", "nodes": ["n1"], "start_ms": 0, "end_ms": 100}]}))
        .unwrap();
        let mut s = Scheduler::new(cluster).unwrap();
        let job = |id: &str| json!({"id": id, "time_limit_ms": 1_000, "groups": [{"count": 1, "cpus": 4}]});
        let out = s.tick(0, vec![submit(job("a")), submit(job("b"))]).unwrap();
        assert_eq!(out.next_wakeup_ms, Some(100));
        // A window declared at 100 that ends at 100 (it blocks nothing from now on).
        let late = Event::MaintenanceAdd {
            id: "late".into(),
            nodes: vec!["n1".into()],
            start_ms: 50,
            end_ms: 100,
        };
        let out = s.tick(100, vec![late]).unwrap();
        assert!(out.rejected.is_empty());
        assert!(matches!(&out.decisions[..], [Decision::Start { job, .. }] if job == "a"));
        // `a`'s time limit, not the windows' end, now.
        assert_eq!(out.next_wakeup_ms, Some(1_100));
    }
}
