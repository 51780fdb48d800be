//! Invariants across ticks: the [`Checker`] runs [`check_tick`] and remembers who preempted
//! whom, so that a preemption loop — job A preempts B, later B preempts A, with neither's
//! priority changed in between — is caught (Kueue shipped such loops).

use std::collections::BTreeSet;

use crate::decision::{Decision, TickOutcome};
use crate::event::Event;
use crate::scheduler::Scheduler;
use crate::testkit::oracle::check_tick;

/// The oracle plus the cross-tick checks; one per scheduler, fed every tick in order.
///
/// ```
/// use gangway::{ClusterConfig, Event, JobSpec, Scheduler};
/// use gangway::testkit::Checker;
/// let cluster: ClusterConfig = serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 4}]}"#).unwrap();
/// let mut s = Scheduler::new(cluster).unwrap();
/// let mut checker = Checker::default();
/// let events = vec![Event::Submit { job: JobSpec::new("a", 1000, 2) }];
/// let out = s.tick(0, events.clone()).unwrap();
/// checker.check(&s, &events, &out).unwrap();
/// ```
#[derive(Clone, Debug, Default)]
pub struct Checker {
    /// (preemptor, victim) pairs seen so far.
    preemptions: BTreeSet<(String, String)>,
}

impl Checker {
    /// Checks the tick that applied `events` and produced `outcome`.
    pub fn check(
        &mut self,
        scheduler: &Scheduler,
        events: &[Event],
        outcome: &TickOutcome,
    ) -> Result<(), String> {
        check_tick(scheduler, outcome)?;
        for event in events {
            // A new job under an old name, or a changed priority, starts a new history.
            if let Event::Submit { job: spec } = event {
                self.forget(&spec.id);
            }
            if let Event::SetPriority { job, .. } = event {
                self.forget(job);
            }
        }
        for decision in &outcome.decisions {
            if let Decision::Preempt { job, for_job, .. } = decision {
                if self.preemptions.contains(&(job.clone(), for_job.clone())) {
                    return Err(format!(
                        "preemption loop: {for_job} preempts {job}, which earlier preempted it"
                    ));
                }
                self.preemptions.insert((for_job.clone(), job.clone()));
            }
        }
        Ok(())
    }

    fn forget(&mut self, job: &str) {
        self.preemptions.retain(|(a, b)| a != job && b != job);
    }
}
