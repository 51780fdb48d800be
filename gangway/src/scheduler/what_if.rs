//! What-if: when and where a job would start if submitted now, without changing anything.

use serde::{Deserialize, Serialize};

use crate::decision::PlacementEntry;
use crate::error::EventError;
use crate::event::Event;
use crate::model::job::JobSpec;
use crate::scheduler::Scheduler;
use crate::scheduler::pass::placement_entries;

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
    /// assert_eq!(answer.placement[0].node, "n1");
    /// assert_eq!(s.state().pending_count(), 0); // nothing was submitted
    /// ```
    pub fn what_if(&self, job: JobSpec) -> Result<WhatIf, EventError> {
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
        let Some(id) = trial.state.job_id(&name) else {
            return Ok(WhatIf::default());
        };
        trial.run_pass(now, Some(id), &mut decisions, &applied);
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
}
