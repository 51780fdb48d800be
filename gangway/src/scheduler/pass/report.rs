//! The last pass's report on pending jobs, kept with interned job ids: the pass writes one small
//! entry per pending job it visits (a settled pass leaves the rest to be derived on reading), and
//! names are looked up only when the report is read
//! ([`Scheduler::pending_info`], [`Scheduler::explain`]).

use serde::{Deserialize, Serialize};

use crate::decision::{PendingInfo, PendingReason};
use crate::model::ids::JobId;
use crate::scheduler::Scheduler;

/// One pending job in the last pass's report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(in crate::scheduler) struct PendingEntry {
    pub(in crate::scheduler) job: JobId,
    /// 1-based position in the pass's order among the jobs still pending after it (a job it
    /// started leaves the order; protocol.md, `explain`).
    pub(in crate::scheduler) position: usize,
    pub(in crate::scheduler) reason: PendingReason,
    pub(in crate::scheduler) estimated_start_ms: Option<u64>,
}

impl Scheduler {
    /// Why each pending job waits and when it should start, as of the last tick: the `pending`
    /// part of [`Scheduler::explain`]. The job names are copied on each call; a host that reads
    /// only the reservations after every tick can use [`Scheduler::reservations`] instead.
    ///
    /// ```
    /// use gangway::{ClusterConfig, Event, JobSpec, Scheduler};
    /// let cluster: ClusterConfig = serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 1}]}"#).unwrap();
    /// let mut s = Scheduler::new(cluster).unwrap();
    /// let submit = |id: &str| Event::Submit { job: JobSpec::new(id, 100, 1) };
    /// s.tick(0, vec![submit("a"), submit("b")]).unwrap();
    /// assert_eq!(s.pending_info()[0].job, "b");
    /// assert_eq!(s.pending_info()[0].estimated_start_ms, Some(100));
    /// ```
    pub fn pending_info(&self) -> Vec<PendingInfo> {
        self.pending_entries()
            .iter()
            .filter_map(|entry| {
                let detail = match entry.reason {
                    PendingReason::Admission => self.last.denied.get(&entry.job),
                    _ => self.last.details.get(&entry.job),
                };
                let job = self.state.job(entry.job)?;
                let backoff_until_ms = match entry.reason {
                    PendingReason::Backoff => {
                        crate::model::time::reported(job.ready.backoff_until_ms)
                    }
                    _ => None,
                };
                Some(PendingInfo {
                    job: job.spec.id.clone(),
                    position: entry.position,
                    reason: entry.reason,
                    estimated_start_ms: entry.estimated_start_ms,
                    detail: detail.cloned(),
                    backoff_until_ms,
                    user: job.spec.user.clone(),
                    account: job.spec.account.clone(),
                })
            })
            .collect()
    }

    /// The whole report of the last pass, in order: the jobs it visited, then those a settled
    /// pass left ([`crate::scheduler::shortcuts::settled`]).
    pub(in crate::scheduler) fn pending_entries(&self) -> Vec<PendingEntry> {
        let mut entries = self.last.report.clone();
        entries.extend(self.deferred_entries());
        entries
    }

    /// The pending jobs holding a backfill reservation as of the last tick, with their
    /// estimated starts, in scheduling order; borrowed, for hosts that read them after every
    /// tick.
    ///
    /// ```
    /// use gangway::{ClusterConfig, Event, JobSpec, Scheduler};
    /// let cluster: ClusterConfig = serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 1}]}"#).unwrap();
    /// let mut s = Scheduler::new(cluster).unwrap();
    /// let submit = |id: &str| Event::Submit { job: JobSpec::new(id, 100, 1) };
    /// s.tick(0, vec![submit("a"), submit("b")]).unwrap();
    /// assert_eq!(s.reservations().collect::<Vec<_>>(), [("b", 100)]);
    /// ```
    pub fn reservations(&self) -> impl Iterator<Item = (&str, u64)> {
        self.last.report.iter().filter_map(|entry| match entry {
            PendingEntry {
                reason: PendingReason::Reserved,
                estimated_start_ms: Some(start),
                ..
            } => Some((self.state.job_name(entry.job)?, *start)),
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::config::ClusterConfig;
    use crate::decision::PendingReason;
    use crate::event::Event;
    use crate::scheduler::Scheduler;
    use crate::scheduler::pass::enforce::tests::a_started_awaiting_ready;

    #[test]
    fn a_job_backing_off_reports_when_its_back_off_ends() {
        // `a` is not ready by 100 and backs off for the first back-off, 60 s.
        let mut s = a_started_awaiting_ready();
        s.tick(100, vec![]).unwrap();
        let info = s.pending_info();
        assert_eq!(info.len(), 1);
        assert_eq!(info[0].reason, PendingReason::Backoff);
        assert_eq!(info[0].backoff_until_ms, Some(60_100));
    }

    #[test]
    fn a_job_denied_admission_reports_the_denial_as_its_detail() {
        use crate::policy::{FnPlugin, Profile, Vote};
        let gate = FnPlugin::new("gate").admit(|job, _| match job.name() {
            "x" => Vote::Deny("no x today".into()),
            _ => Vote::Abstain,
        });
        let profile = Profile::builder().plugin(gate).build().unwrap();
        let cluster: ClusterConfig =
            serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 1}]}"#).unwrap();
        let mut s = Scheduler::with_profile(cluster, profile).unwrap();
        let submit = |id: &str| Event::Submit {
            job: crate::model::job::JobSpec::new(id, 100, 1),
        };
        // `y` fills the node, so `z` waits with a reservation beside the denied `x`.
        s.tick(0, vec![submit("x"), submit("y"), submit("z")])
            .unwrap();
        let info = s.pending_info();
        let of = |id: &str| info.iter().find(|i| i.job == id).unwrap();
        assert_eq!(of("x").reason, PendingReason::Admission);
        assert_eq!(of("x").detail.as_deref(), Some("gate: no x today"));
        assert_eq!(of("z").reason, PendingReason::Reserved);
        assert_ne!(of("z").detail.as_deref(), Some("gate: no x today"));
    }

    #[test]
    fn the_reservations_are_the_reserved_jobs_with_their_starts_in_order() {
        let cluster: ClusterConfig =
            serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 2}]}"#).unwrap();
        let mut s = Scheduler::new(cluster).unwrap();
        let submit = |id: &str, cpus: u32| Event::Submit {
            job: crate::model::job::JobSpec::new(id, 100, cpus),
        };
        s.tick(0, vec![submit("a", 2), submit("b", 2), submit("c", 1)])
            .unwrap();
        assert_eq!(s.reservations().collect::<Vec<_>>(), [("b", 100)]);
        // At 100 `a` reaches its limit and `b` starts: `c` is reserved from 200.
        s.tick(100, vec![]).unwrap();
        assert_eq!(s.reservations().collect::<Vec<_>>(), [("c", 200)]);
    }
}
