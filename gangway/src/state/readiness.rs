//! Wait for ready (Kueue's `waitForPodsReady`, [`crate::config::WaitForReadyConfig`]): what a
//! running job's readiness is, when it must report `ready`, and the requeue count and back-off
//! a job keeps across the evictions for missing it.
//!
//! Readiness is watched only while `policy.wait_for_ready` is configured: a job started without
//! it has no [`Readiness`] and counts as ready, and nothing here costs anything then.

use serde::{Deserialize, Serialize};

use super::{ClusterState, Job, JobState};
use crate::config::WaitForReadyConfig;
use crate::decision::{Decision, KillReason, RequeueReason};
use crate::model::ids::JobId;

/// A watched running job's readiness.
///
/// ```
/// use gangway::state::Readiness;
/// assert_eq!(Readiness::Starting { deadline_ms: 5 }.deadline_ms(), Some(5));
/// assert!(!Readiness::Ready.waits());
/// assert!(Readiness::Recovering { deadline_ms: None }.waits());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
#[non_exhaustive]
pub enum Readiness {
    /// Started and not ready yet: it must report `ready` by `deadline_ms` (start + timeout).
    Starting {
        /// When it is evicted unless ready.
        deadline_ms: u64,
    },
    /// Ready.
    Ready,
    /// Was ready and reported `not_ready`: it must be ready again by `deadline_ms` (the
    /// `not_ready` + recovery timeout; `None` without a recovery timeout).
    Recovering {
        /// When it is evicted unless ready again.
        deadline_ms: Option<u64>,
    },
}

impl Readiness {
    /// When the job is evicted unless it reports `ready` first.
    pub fn deadline_ms(self) -> Option<u64> {
        match self {
            Readiness::Starting { deadline_ms } => Some(deadline_ms),
            Readiness::Recovering { deadline_ms } => deadline_ms,
            Readiness::Ready => None,
        }
    }

    /// Whether the job is not ready (it holds admission back under `block_admission`).
    pub fn waits(self) -> bool {
        self != Readiness::Ready
    }
}

/// What a job keeps across its evictions for the ready timeout.
///
/// ```
/// use gangway::state::ReadyRecord;
/// let mut r = ReadyRecord::default();
/// (r.requeues, r.backoff_until_ms) = (2, Some(300));
/// assert!(r.backs_off(299));
/// assert!(!r.backs_off(300));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ReadyRecord {
    /// How many times it was requeued for the ready timeout (Kueue's `requeueState.count`).
    pub requeues: u32,
    /// The end of its last back-off: it is not considered before. Kept once it has started
    /// again (in the past then).
    pub backoff_until_ms: Option<u64>,
}

impl ReadyRecord {
    /// Whether it was never evicted for the ready timeout.
    pub fn is_empty(&self) -> bool {
        *self == ReadyRecord::default()
    }

    /// Whether its back-off still runs at `now`.
    pub fn backs_off(&self, now: u64) -> bool {
        self.backoff_until_ms.is_some_and(|until| until > now)
    }
}

impl Job {
    /// A running job's readiness; `None` when it is not running or not watched.
    pub(crate) fn readiness(&self) -> Option<Readiness> {
        self.running().and_then(|run| run.readiness)
    }

    /// When a watched running job is evicted unless it reports `ready` first.
    pub(crate) fn ready_deadline_ms(&self) -> Option<u64> {
        self.readiness().and_then(Readiness::deadline_ms)
    }
}

impl ClusterState {
    /// The wait-for-ready configuration, when the feature is on.
    pub(crate) fn wait_for_ready(&self) -> Option<&WaitForReadyConfig> {
        self.config.policy.wait_for_ready.as_ref()
    }

    /// The readiness a job starting at `now` is watched with: ready by now + timeout.
    pub(super) fn readiness_at_start(&self, now: u64) -> Option<Readiness> {
        let config = self.wait_for_ready()?;
        Some(Readiness::Starting {
            deadline_ms: now.saturating_add(config.timeout_ms),
        })
    }

    /// Applies a `ready` (`ready` true) or `not_ready` event to running job `id` at `now`. An
    /// unwatched job stays unwatched; a `not_ready` only matters to a ready job, whose recovery
    /// timeout starts; a `ready` ends any wait.
    pub(super) fn report_readiness(&mut self, id: JobId, ready: bool, now: u64) {
        let recovery = self.wait_for_ready().map(WaitForReadyConfig::recovery_ms);
        let Some(JobState::Running(run)) = self.jobs.get_mut(id).map(|j| &mut j.state) else {
            return;
        };
        run.readiness = match (run.readiness, ready) {
            (None, _) => None,
            (Some(_), true) => Some(Readiness::Ready),
            (Some(Readiness::Ready), false) => Some(Readiness::Recovering {
                deadline_ms: recovery.flatten().map(|ms| now.saturating_add(ms)),
            }),
            (Some(waiting), false) => Some(waiting),
        };
    }

    /// Whether some running job is not ready yet (`block_admission` then holds every start).
    pub(crate) fn any_waiting_for_ready(&self) -> bool {
        self.running.iter().any(|&id| {
            self.job(id)
                .and_then(Job::readiness)
                .is_some_and(Readiness::waits)
        })
    }

    /// Evicts running job `id`, which missed its ready deadline at `now`: requeued with a
    /// back-off, or killed when it is not requeueable or has been requeued `backoff_limit`
    /// times already.
    pub(crate) fn evict_not_ready(&mut self, id: JobId, now: u64, decisions: &mut Vec<Decision>) {
        let Some(config) = self.wait_for_ready().cloned() else {
            return;
        };
        let Some(job) = self.jobs.get_mut(id) else {
            return;
        };
        let exhausted = config.limit_reached(job.ready.requeues);
        if job.spec.requeue && !exhausted {
            let requeues = job.ready.requeues.saturating_add(1);
            job.ready = ReadyRecord {
                requeues,
                backoff_until_ms: Some(now.saturating_add(config.backoff_ms(requeues))),
            };
        }
        self.evict_job(
            id,
            now,
            !exhausted,
            (RequeueReason::ReadyTimeout, KillReason::ReadyTimeout),
            decisions,
        );
    }

    /// Forgets every readiness, requeue count and back-off (the feature was turned off).
    pub(super) fn forget_readiness(&mut self) {
        for (_, job) in self.jobs.iter_mut() {
            job.ready = ReadyRecord::default();
            if let JobState::Running(run) = &mut job.state {
                run.readiness = None;
            }
        }
    }
}
