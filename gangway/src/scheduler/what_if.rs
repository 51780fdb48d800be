//! What-if: when and where a job would start if submitted now, without changing anything.

use serde::{Deserialize, Serialize};

use crate::decision::PlacementEntry;
use crate::error::EventError;
use crate::event::Event;
use crate::model::ids::JobId;
use crate::model::job::JobSpec;
use crate::scheduler::Scheduler;
use crate::scheduler::pass::placement_entries;
use crate::state::JobState;

/// The answer to [`Scheduler::what_if`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct WhatIf {
    /// The last tick's time when the job would start at once; else its estimated start, as if
    /// it had a reservation; `null` when it waits for something other than resources (hold,
    /// begin time, dependency, quota) or can be planned nowhere.
    pub start_ms: Option<u64>,
    /// Where: the resources it would start on, or those its reservation would pin.
    pub placement: Vec<PlacementEntry>,
}

impl Scheduler {
    /// When and where `job` would start if it were submitted at the last tick's time (0 before
    /// the first tick). Nothing changes: the question is answered on a copy of the scheduler,
    /// which takes the submission and runs one pass at that time. The copy shares the job
    /// records, the fair-share ledger and the configuration with this scheduler, and copies
    /// only those the trial changes. A job that cannot start at
    /// once is planned on the availability profile even beyond the backfill depth. A job the
    /// scheduler would reject is an error, as its `submit` event would be.
    ///
    /// ```
    /// use gangway::{ClusterConfig, Event, JobSpec, Scheduler};
    /// let cluster: ClusterConfig = serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 4}]}"#).unwrap();
    /// let mut s = Scheduler::new(cluster).unwrap();
    /// s.tick(0, vec![Event::Submit { job: JobSpec::new("a", 1_000, 4) }]).unwrap();
    /// let answer = s.what_if(JobSpec::new("b", 500, 2)).unwrap();
    /// assert_eq!(answer.start_ms, Some(1_000)); // when "a" reaches its limit
    /// assert_eq!(&*answer.placement[0].node, "n1");
    /// assert_eq!(s.state().pending_count(), 0); // nothing was submitted
    /// ```
    pub fn what_if(&self, job: JobSpec) -> Result<WhatIf, EventError> {
        let Some((trial, id)) = self.what_if_trial(job)? else {
            return Ok(WhatIf::default());
        };
        let answer = match trial.state.job(id).and_then(|j| j.running()) {
            Some(run) => WhatIf {
                start_ms: Some(run.start_ms),
                placement: placement_entries(&trial.state, &run.assignments),
            },
            None => match trial.last.plans.get(&id) {
                Some(plan) => WhatIf {
                    start_ms: Some(plan.start_ms),
                    placement: placement_entries(&trial.state, &plan.assignments),
                },
                None => WhatIf::default(),
            },
        };
        Ok(answer)
    }

    /// The copy `what_if` answers on, after it took `job`'s submission and ran its pass, with
    /// the job's id; `None` when the submission left no pending job behind (a dependency on a
    /// job that already ended another way cancels it at once).
    fn what_if_trial(&self, job: JobSpec) -> Result<Option<(Scheduler, JobId)>, EventError> {
        let now = self.last_tick_ms.unwrap_or(0);
        let name = job.id.clone();
        let mut trial = self.clone();
        let mut decisions = Vec::new();
        let submit = Event::Submit { job };
        let applied = if trial.profile.prepares() {
            vec![submit.clone()]
        } else {
            Vec::new()
        };
        trial.state.apply_event(submit, now, &mut decisions)?;
        let Some(id) = trial.state.job_id(&name).filter(|&id| {
            trial
                .state
                .job(id)
                .is_some_and(|j| j.state == JobState::Pending)
        }) else {
            return Ok(None);
        };
        trial.run_pass(now, Some(id), &mut decisions, &applied);
        Ok(Some((trial, id)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ClusterConfig;

    /// One 4-cpu node running a job, with `waiting` one-cpu jobs queued behind one that needs
    /// the whole node: the pass settles once that one's reservation uses up the depth.
    fn full_node(waiting: usize) -> Scheduler {
        let cluster: ClusterConfig =
            serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 4}]}"#).unwrap();
        let mut s = Scheduler::new(cluster).unwrap();
        let mut jobs = vec![Event::Submit {
            job: JobSpec::new("running", 60_000, 4),
        }];
        jobs.push(Event::Submit {
            job: JobSpec::new("whole", 60_000, 4),
        });
        jobs.extend((0..waiting).map(|i| Event::Submit {
            job: JobSpec::new(format!("w{i}"), 60_000, 1),
        }));
        s.tick(0, jobs).unwrap();
        s
    }

    #[test]
    fn a_settled_pass_gives_the_what_if_job_its_turn_without_visiting_the_jobs_before_it() {
        let s = full_node(40);
        let reference = s.with_reference_pass();
        let job = JobSpec::new("probe", 30_000, 2);
        let (trial, _) = s.what_if_trial(job.clone()).unwrap().unwrap();
        let (full, _) = reference.what_if_trial(job.clone()).unwrap().unwrap();
        // The settled trial visited the reserved job and the probe; the reference all 42.
        assert_eq!(trial.last.report.len(), 2);
        assert_eq!(full.last.report.len(), 42);
        let answer = s.what_if(job.clone()).unwrap();
        assert_eq!(answer, reference.what_if(job).unwrap());
        // After "whole", which the reservation holds from 60 s to 120 s.
        assert_eq!(answer.start_ms, Some(120_000));
    }

    #[test]
    fn a_what_if_job_of_a_strict_fifo_queue_waits_behind_the_queue_s_blocked_job() {
        let cluster: ClusterConfig = serde_json::from_value(serde_json::json!({
            "nodes": [{"name": "n1", "cpus": 4}],
            "queues": [{"name": "q", "strict_fifo": true, "quota": {"cpu": {"nominal": 4}}}]
        }))
        .unwrap();
        let mut s = Scheduler::new(cluster).unwrap();
        let queued = |id: &str, cpus: u32| {
            let mut job = JobSpec::new(id, 60_000, cpus);
            job.queue = Some("q".into());
            job
        };
        let jobs = [
            queued("running", 2),
            JobSpec::new("other", 60_000, 2),
            // Reserved from 60 s: the depth is used up and the pass settles behind it.
            JobSpec::new("whole", 60_000, 4),
            // Over the queue's quota (2 + 3 > 4): it holds the rest of the queue.
            queued("big", 3),
        ];
        s.tick(0, jobs.map(|job| Event::Submit { job }).to_vec())
            .unwrap();
        let reference = s.with_reference_pass();
        // Within the quota, but behind "big" in a strict-FIFO queue: no plan.
        let job = queued("probe", 1);
        let (trial, _) = s.what_if_trial(job.clone()).unwrap().unwrap();
        assert_eq!(trial.last.report.len(), 3, "the pass walks on to the probe");
        let answer = s.what_if(job.clone()).unwrap();
        assert_eq!(answer, reference.what_if(job).unwrap());
        assert_eq!(answer.start_ms, None);
    }

    #[test]
    fn a_what_if_job_cancelled_at_submission_for_its_dependency_never_starts() {
        // A queue makes the fast pass settle at once on an empty order, where it gave the
        // what-if job its turn although its submission had cancelled it (found by the
        // reference family).
        let cluster: ClusterConfig = serde_json::from_value(serde_json::json!({
            "nodes": [{"name": "n1", "cpus": 4}],
            "queues": [{"name": "q", "quota": {"cpu": {"nominal": 4}}}]
        }))
        .unwrap();
        let mut s = Scheduler::new(cluster).unwrap();
        let first = JobSpec::new("first", 1_000, 1);
        s.tick(0, vec![Event::Submit { job: first }]).unwrap();
        // "first" reaches its time limit: a job that needs it to succeed can never run.
        s.tick(1_000, Vec::new()).unwrap();
        let mut job = JobSpec::new("probe", 1_000, 1);
        job.after =
            serde_json::from_value(serde_json::json!([{"job": "first", "on": "ok"}])).unwrap();
        let answer = s.what_if(job.clone()).unwrap();
        assert_eq!(answer, s.with_reference_pass().what_if(job).unwrap());
        assert_eq!(answer, WhatIf::default());
    }

    #[test]
    fn a_what_if_job_that_had_its_turn_before_the_pass_settles_has_no_second() {
        // The probe comes first (by priority) and needs the whole node: planned from 60 s,
        // when "running" ends. Its reservation uses up the depth and the pass settles behind
        // it; a second turn would plan it again behind its own reservation.
        let s = full_node(40);
        let reference = s.with_reference_pass();
        let mut job = JobSpec::new("probe", 30_000, 4);
        job.priority = 1_000;
        let (trial, id) = s.what_if_trial(job.clone()).unwrap().unwrap();
        let turns = trial.last.report.iter().filter(|e| e.job == id).count();
        assert_eq!(turns, 1, "{:?}", trial.last.report);
        let answer = s.what_if(job.clone()).unwrap();
        assert_eq!(answer, reference.what_if(job).unwrap());
        assert_eq!(answer.start_ms, Some(60_000));
    }
}
