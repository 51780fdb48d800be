//! The `sshare`- and `sprio`-like reports: fair-share by account and user, and each pending
//! job's priority broken down by factor; admission fair sharing's tenant usage per queue; and
//! fair sharing's share values per queue and cohort.
//! All describe the state after the last tick.

use serde::Serialize;

use crate::fairshare::{AdmissionUsageRow, ShareRow};
use crate::policy::{KeyTerms, PassFigures, PriorityFactors};
use crate::quota::FairShareRow;
use crate::scheduler::Scheduler;

/// One pending job's priority, term by term, as `sprio -l` shows it.
///
/// `weighted` holds each factor times its configured weight (`policy.priority.weights`);
/// `priority` is the first order plug-in's key: `base + floor(Σ weighted)` for the default
/// profile's multifactor priority. `keys` has every order plug-in's key with its terms.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct JobPriority {
    /// Job id.
    pub job: String,
    /// The job's base priority.
    pub base: i32,
    /// The normalised factors, each in 0..=1.
    pub factors: PriorityFactors,
    /// Each factor times its weight.
    pub weighted: PriorityFactors,
    /// The first order plug-in's key (0 without one).
    pub priority: i64,
    /// Every order plug-in's key and its explanation, in the profile's order.
    pub keys: Vec<KeyTerms>,
}

impl Scheduler {
    /// The `sshare`-like fair-share report as of the last tick: one row per account and
    /// association in tree order; empty without configured accounts.
    ///
    /// ```
    /// use gangway::{ClusterConfig, Event, JobSpec, Milli, Scheduler};
    /// let cluster: ClusterConfig = serde_json::from_str(r#"{
    ///     "nodes": [{"name": "n1", "cpus": 8, "memory_mib": 16000, "gpus": {"model": "a100", "count": 4}}],
    ///     "accounts": [{"name": "ml", "shares": 1}]}"#).unwrap();
    /// let mut scheduler = Scheduler::new(cluster).unwrap();
    /// let mut job = JobSpec::new("a", 3_600_000, 1).with_gpus(Milli::from_units(2));
    /// job.account = Some("ml".into());
    /// job.user = Some("alice".into());
    /// scheduler.tick(0, vec![Event::Submit { job }]).unwrap();
    /// scheduler.tick(10_000, vec![]).unwrap();
    /// let rows = scheduler.share_report();
    /// assert_eq!(rows[1].user.as_deref(), Some("alice"));
    /// assert_eq!(rows[1].raw_usage, 20.0); // 2 GPUs for 10 s
    /// ```
    pub fn share_report(&self) -> Vec<ShareRow> {
        self.state
            .fairshare
            .as_ref()
            .map(|fs| fs.report(self.state.now_ms))
            .unwrap_or_default()
    }

    /// Admission fair sharing's tenants as of the last tick: one row per queue with
    /// `admission_fair_sharing` on (in configuration order) and account (by name) that has
    /// usage there or a pending or running job, with its consumed resources, weight and usage.
    /// Empty when no queue turns it on.
    ///
    /// ```
    /// use gangway::{ClusterConfig, Event, JobSpec, Milli, Scheduler};
    /// let cluster: ClusterConfig = serde_json::from_str(r#"{
    ///     "nodes": [{"name": "n1", "cpus": 8, "gpus": {"model": "a100", "count": 4}}],
    ///     "queues": [{"name": "shared", "quota": {"gpu": {"nominal": 4}},
    ///                 "admission_fair_sharing": true}],
    ///     "policy": {"admission_fair_sharing": {"usage_half_life_ms": 3600000,
    ///                                           "usage_sampling_interval_ms": 3600000}}}"#).unwrap();
    /// let mut scheduler = Scheduler::new(cluster).unwrap();
    /// let mut job = JobSpec::new("a", 7_200_000, 1).with_gpus(Milli::from_units(2));
    /// job.queue = Some("shared".into());
    /// job.account = Some("ml".into());
    /// scheduler.tick(0, vec![Event::Submit { job }]).unwrap();
    /// // The entry penalty: 2 GPUs × (1 − 2^(−1)).
    /// assert_eq!(scheduler.admission_usage()[0].usage, Some(1.0));
    /// scheduler.tick(3_600_000, vec![]).unwrap();
    /// // One half-life later: 1 × 1/2 + 2 GPUs held × (1 − 1/2).
    /// let row = &scheduler.admission_usage()[0];
    /// assert_eq!((row.queue.as_str(), row.account.as_str()), ("shared", "ml"));
    /// assert!((row.consumed["gpu"] - 1.5).abs() < 1e-12);
    /// ```
    pub fn admission_usage(&self) -> Vec<AdmissionUsageRow> {
        self.state.admission_report()
    }

    /// Fair sharing between queues as of the last tick: each queue of a fair-sharing cohort
    /// tree with its share value, and with `cohorts` each cohort of those trees too. Empty
    /// when fair sharing is off everywhere.
    ///
    /// ```
    /// use gangway::{ClusterConfig, Event, JobSpec, Scheduler};
    /// let cluster: ClusterConfig = serde_json::from_str(r#"{
    ///     "nodes": [{"name": "n1", "cpus": 8}],
    ///     "cohorts": [{"name": "all"}],
    ///     "queues": [{"name": "a", "cohort": "all", "quota": {"cpu": {"nominal": 4}}},
    ///                {"name": "b", "cohort": "all", "quota": {"cpu": {"nominal": 4}}}],
    ///     "policy": {"fair_sharing": {"enabled": true}}}"#).unwrap();
    /// let mut scheduler = Scheduler::new(cluster).unwrap();
    /// let mut job = JobSpec::new("big", 3_600_000, 6);
    /// job.queue = Some("a".into());
    /// scheduler.tick(0, vec![Event::Submit { job }]).unwrap();
    /// let rows = scheduler.fair_shares(false);
    /// assert_eq!((rows[0].name.as_str(), rows[0].share), ("a", Some(250.0))); // 2 of 8 borrowed
    /// assert_eq!(scheduler.fair_shares(true).len(), 3); // and the cohort
    /// ```
    pub fn fair_shares(&self, cohorts: bool) -> Vec<FairShareRow> {
        self.state
            .quota
            .tree
            .as_ref()
            .map(|tree| tree.fair_sharing_rows(cohorts))
            .unwrap_or_default()
    }

    /// The `sprio`-like breakdown of every pending job's priority as of the last tick, in the
    /// order the pass considers them.
    ///
    /// ```
    /// use gangway::{ClusterConfig, Event, JobSpec, Scheduler};
    /// let cluster: ClusterConfig = serde_json::from_str(r#"{
    ///     "nodes": [{"name": "n1", "cpus": 1, "memory_mib": 1000}],
    ///     "policy": {"priority": {"weights": {"age": 1000}, "max_age_ms": 100000}}}"#).unwrap();
    /// let mut scheduler = Scheduler::new(cluster).unwrap();
    /// let blocker = JobSpec::new("blocker", 600_000, 1);
    /// scheduler.tick(0, vec![Event::Submit { job: blocker }]).unwrap();
    /// let b = JobSpec::new("b", 600_000, 1).with_priority(7);
    /// scheduler.tick(0, vec![Event::Submit { job: b }]).unwrap();
    /// scheduler.tick(25_000, vec![]).unwrap();
    /// let rows = scheduler.priorities();
    /// assert_eq!(rows[0].job, "b");
    /// assert_eq!(rows[0].factors.age, 0.25);
    /// assert_eq!(rows[0].weighted.age, 250.0);
    /// assert_eq!(rows[0].priority, 257);
    /// ```
    pub fn priorities(&self) -> Vec<JobPriority> {
        let w = &self.state.config.policy.priority.weights;
        // Under a calculation period, the priorities of the last calculation.
        let figures = match &self.last.priority_calc {
            Some(calc) => PassFigures::clone(calc.figures()),
            None => PassFigures::new(&self.state, self.state.now_ms),
        };
        let context = figures.context(&self.state);
        self.ordered_pending(&context)
            .into_iter()
            .filter_map(|id| {
                let job = self.state.job_view(id)?;
                let factors = context.factors(job);
                let keys = self.profile.explain_keys(job, &context);
                Some(JobPriority {
                    job: job.name().to_string(),
                    base: job.spec().priority,
                    factors,
                    weighted: factors.weighted(w),
                    priority: keys.first().map_or(0, |k| k.key),
                    keys,
                })
            })
            .collect()
    }
}
