//! Step 6's head and the backfill rule: the first job of a pass's order that is blocked by
//! resources within its quota is the pass's *head*; a later job that fits now starts only when
//! the backfill rule lets it pass the head.
//!
//! - Modes `easy` and `conservative`: the head has the first reservation, which protects it;
//!   the profile's backfill rules ([`crate::policy::Plugin::may_backfill`]) may refuse more.
//! - Modes `before_head_estimate` and `rule`: the head has no reservation. Its start is
//!   estimated once, when it becomes the head, from the running jobs' requested ends, and kept
//!   (frozen) while it stays the head, from pass to pass and through a snapshot. In
//!   `before_head_estimate` a job passes only if its requested end is strictly before that
//!   estimate (RLScheduler's rule, SC'20); in both, every backfill rule of the profile must
//!   admit it.
//! - `policy.priority.pinned_head`: the last pass's head is considered first, whatever the
//!   order says, until it starts (RLScheduler's queue discipline).
//!
//! The default profile (mode `easy`, no backfill rule, no pin) tracks no head: its passes
//! are exactly those of before.

use serde::{Deserialize, Serialize};

use crate::config::{BackfillCandidates, BackfillMode};
use crate::model::ids::JobId;
use crate::policy::HeadView;
use crate::scheduler::Scheduler;
use crate::scheduler::pass::Pass;

/// A pass's head, kept for the next pass (and by a snapshot) where a pin or a frozen estimate
/// needs it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(in crate::scheduler) struct Head {
    /// The job.
    pub(in crate::scheduler) job: JobId,
    /// Its arrival number (unique), so that a later job under a reused id is not taken for it.
    pub(in crate::scheduler) arrival: u64,
    /// Its estimated start: frozen when it became the head (modes `before_head_estimate`,
    /// `rule`), or its reservation's start in this pass (`easy`, `conservative`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(in crate::scheduler) estimated_start_ms: Option<u64>,
    /// When it became the head.
    pub(in crate::scheduler) since_ms: u64,
}

impl Scheduler {
    /// Whether a pass hands its head to the next: a pinned head, or a frozen estimate.
    pub(in crate::scheduler) fn keeps_head(&self) -> bool {
        let policy = &self.state.config.policy;
        policy.priority.pinned_head || policy.backfill.mode.head_rule()
    }

    /// Whether passes track a head at all: to keep it, or to ask the profile's backfill
    /// rules. Where they do, the shortcuts that assume the default rules (a pass stopped once
    /// settled, a pass continued by the next tick) are off.
    pub(in crate::scheduler) fn tracks_head(&self) -> bool {
        self.keeps_head() || self.profile.has_backfill_rules()
    }

    /// Whether the jobs behind a head-rule head are tried in submit order
    /// (`policy.backfill.candidates`).
    pub(in crate::scheduler) fn candidates_by_submit(&self) -> bool {
        let backfill = &self.state.config.policy.backfill;
        backfill.mode.head_rule() && backfill.candidates == BackfillCandidates::Submit
    }

    /// The last pass's head if it still pins the order: `policy.priority.pinned_head`, and it
    /// is the same job, still pending.
    pub(in crate::scheduler) fn pinned_head(&self, pass: &Pass) -> Option<JobId> {
        let head = pass.carried.as_ref()?;
        let job = self.state.job(head.job)?;
        (self.state.config.policy.priority.pinned_head
            && job.arrival == head.arrival
            && job.running().is_none()
            && self.state.pending.contains(&head.job))
        .then_some(head.job)
    }

    /// Makes `id` the pass's head when the pass tracks one and has none yet, with its
    /// `estimate` (`None` in the head-rule modes: the carried estimate when `id` was the last
    /// pass's head, else a fresh one, which is then frozen). Returns the head's estimate.
    pub(in crate::scheduler) fn note_head(
        &mut self,
        id: JobId,
        pass: &mut Pass,
        estimate: Option<u64>,
    ) -> Option<u64> {
        if pass.head.is_some() || !self.tracks_head() {
            return estimate;
        }
        let arrival = self.state.job(id)?.arrival;
        let kept = pass
            .carried
            .take()
            .filter(|kept| kept.job == id && kept.arrival == arrival);
        let since_ms = kept.as_ref().map_or(pass.now, |kept| kept.since_ms);
        let estimated_start_ms = match kept {
            _ if !self.state.config.policy.backfill.mode.head_rule() => estimate,
            Some(kept) => kept.estimated_start_ms,
            None => self.estimate_start(id, pass),
        };
        pass.head = Some(Head {
            job: id,
            arrival,
            estimated_start_ms,
            since_ms,
        });
        estimated_start_ms
    }

    /// Whether `id`, which fits now within its quota, may start now past the pass's head:
    /// always without a head, and a preemptor on what its victims freed for it; in mode
    /// `before_head_estimate` only if its requested end is strictly before the head's frozen
    /// estimate; and only if every backfill rule of the profile admits it.
    pub(in crate::scheduler) fn may_pass_head(&self, id: JobId, pass: &Pass) -> bool {
        let Some(head) = pass
            .head
            .as_ref()
            .filter(|_| !self.state.earmarks.contains_key(&id))
        else {
            return true;
        };
        let Some(candidate) = self.state.job_view(id) else {
            return true;
        };
        if self.state.config.policy.backfill.mode == BackfillMode::BeforeHeadEstimate {
            let end = pass.now.saturating_add(candidate.spec().time_limit_ms);
            // A head that no known time lets start protects nothing.
            if head.estimated_start_ms.is_some_and(|start| end >= start) {
                return false;
            }
        }
        if !self.profile.has_backfill_rules() {
            return true;
        }
        let Some(job) = self.state.job_view(head.job) else {
            return true;
        };
        let view = HeadView {
            job,
            estimated_start_ms: head.estimated_start_ms,
            head_since_ms: head.since_ms,
        };
        let context = self.last.figures.context(&self.state);
        self.profile.may_backfill(view, candidate, &context)
    }
}

#[cfg(test)]
mod tests {
    use crate::{ClusterConfig, Decision, Event, JobSpec, Scheduler};

    fn job(name: &str, queue: &str, cpus: u32, priority: i32) -> Event {
        let mut job = JobSpec::new(name, 100_000, cpus).with_priority(priority);
        job.queue = Some(queue.into());
        Event::Submit { job }
    }

    #[test]
    fn without_backfill_the_first_job_blocked_within_its_quota_is_the_pinned_head() {
        // A node of 4 cpus, no backfill, a pinned head; queues `q` and `p` of 4 cpus each. `r`
        // of `q` runs on 3 cpus until 100 s; `x` of `q` (2 cpus) comes first in the order but
        // is over its quota; `h` of `p` (4 cpus) is blocked by resources within its quota: it
        // is the head, pinned, and takes the node when `r` ends, before `x`.
        let cluster: ClusterConfig = serde_json::from_str(
            r#"{"nodes": [{"name": "n1", "cpus": 4}],
                "queues": [{"name": "q", "quota": {"cpu": {"nominal": 4}}},
                           {"name": "p", "quota": {"cpu": {"nominal": 4}}}],
                "policy": {"backfill": {"mode": "none"}, "priority": {"pinned_head": true}}}"#,
        )
        .unwrap();
        let mut s = Scheduler::new(cluster).unwrap();
        s.tick(0, vec![job("r", "q", 3, 0)]).unwrap();
        s.tick(1, vec![job("x", "q", 2, 100), job("h", "p", 4, 0)])
            .unwrap();
        let h = s.state.job_id("h").unwrap();
        assert_eq!(s.last.head.as_ref().map(|head| head.job), Some(h));
        let finished: Event = serde_json::from_value(
            serde_json::json!({"type": "finished", "job": "r", "outcome": "completed"}),
        )
        .unwrap();
        let out = s.tick(100_000, vec![finished]).unwrap();
        let started: Vec<&str> = out
            .decisions
            .iter()
            .filter_map(|d| match d {
                Decision::Start { job, .. } => Some(job.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(started, ["h"]);
    }
}
