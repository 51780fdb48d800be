//! Invariants across ticks: the [`Checker`] runs [`check_tick`] and remembers who preempted
//! whom, so that a preemption loop — job A preempts B, later B preempts A, with neither's
//! priority changed in between — is caught (Kueue shipped such loops) while
//! `policy.preemption.anti_thrash` is on; a profile that turns the rule off bounds
//! preemptions itself, which [`crate::testkit::harness::ProfileChecks`] can check. It also
//! checks that a submit naming a topology level the cluster lacks, or a MIG profile no node has
//! ever had, was rejected.

use std::collections::BTreeSet;

use crate::decision::{Decision, TickOutcome};
use crate::event::Event;
use crate::model::job::JobSpec;
use crate::model::mig_table::is_profile_name;
use crate::scheduler::Scheduler;
use crate::state::ClusterState;
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
        for (index, event) in events.iter().enumerate() {
            if let Event::Submit { job: spec } = event
                && let Some(why) = must_reject(scheduler.state(), spec)
                && !outcome.rejected.iter().any(|r| r.index == index)
            {
                return Err(format!("submit of {} accepted: {why}", spec.id));
            }
        }
        for event in events {
            // A new job under an old name, or a changed priority, starts a new history.
            if let Event::Submit { job: spec } = event {
                self.forget(&spec.id);
            }
            if let Event::SetPriority { job, .. } = event {
                self.forget(job);
            }
        }
        let anti_thrash = scheduler.state().config().policy.preemption.anti_thrash;
        for decision in &outcome.decisions {
            if let Decision::Preempt { job, for_job, .. } = decision {
                if anti_thrash && self.preemptions.contains(&(job.clone(), for_job.clone())) {
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

/// Why `spec` cannot be accepted, when it names a topology level the cluster lacks or a MIG
/// profile that is no profile name or that no node has had (profiles are interned when a node
/// with them is configured or added, and never forgotten, so one not interned after the tick
/// was unknown when the job was submitted).
fn must_reject(state: &ClusterState, spec: &JobSpec) -> Option<String> {
    spec.groups.iter().enumerate().find_map(|(g, group)| {
        if let Some(request) = &group.topology
            && !state.config().topology.iter().any(|l| l == request.level())
        {
            return Some(format!(
                "groups[{g}] names unknown level {}",
                request.level()
            ));
        }
        let profile = group.mig.as_deref()?;
        (!is_profile_name(profile) || !state.mig_profile_names().iter().any(|p| p == profile))
            .then(|| format!("groups[{g}] asks for MIG profile {profile}, which no node has"))
    })
}
