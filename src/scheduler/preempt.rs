//! Step 6 of a pass: pick preemption victims as Kueue does — ordered candidates, added greedily
//! until the preemptor fits (quota and placement), then a reverse pass dropping every victim
//! not needed — and earmark what they free for the preemptor.

use std::cmp::Reverse;
use std::collections::BTreeMap;

use super::Scheduler;
use super::pass::Pass;
use crate::config::{ReclaimWithinCohort, WithinQueue};
use crate::decision::Decision;
use crate::model::ids::{JobId, NodeId};
use crate::model::resources::NodeAmounts;
use crate::placement::Assignment;
use crate::quota::QueueId;
use crate::state::{Earmark, JobState, Preemption};

impl Scheduler {
    /// Tries to make room for pending job `id` by preempting; on success the `preempt`
    /// decisions are pushed, the victims marked and the earmark recorded.
    pub(super) fn try_preempt(
        &mut self,
        id: JobId,
        pass: &Pass,
        end: u64,
        decisions: &mut Vec<Decision>,
    ) -> bool {
        if !self.state.config.policy.preemption.enabled {
            return false;
        }
        let Some(q) = self.state.job_queue(id) else {
            return false;
        };
        let mut chosen: Vec<JobId> = Vec::new();
        let mut plan = None;
        for candidate in self.victim_candidates(id, q) {
            chosen.push(candidate);
            plan = self.fits_without(id, &chosen, pass, end);
            if plan.is_some() {
                break;
            }
        }
        let Some(mut plan) = plan else {
            return false;
        };
        for i in (0..chosen.len().saturating_sub(1)).rev() {
            let dropped = chosen.remove(i);
            match self.fits_without(id, &chosen, pass, end) {
                Some(smaller) => plan = smaller,
                None => chosen.insert(i, dropped),
            }
        }
        self.preempt(id, chosen, &plan, decisions);
        true
    }

    /// Running jobs the queue's policy lets `id` preempt, best victims first: jobs of queues
    /// above their nominal quota, then lower priority, then the most recently started.
    fn victim_candidates(&self, id: JobId, q: QueueId) -> Vec<JobId> {
        let (Some(job), Some(tree)) = (self.state.job(id), self.state.quota.tree.as_ref()) else {
            return Vec::new();
        };
        let policy = &self.state.config.queues[q.index()].preemption;
        let priority = job.spec.priority;
        let age = (job.submit_ms, job.arrival);
        let mut candidates: Vec<(bool, i32, Reverse<u64>, Reverse<JobId>)> = Vec::new();
        for &v in &self.state.running {
            let Some(victim) = self.state.job(v) else {
                continue;
            };
            let Some(run) = victim.running() else {
                continue;
            };
            let Some(vq) = self.state.job_queue(v) else {
                continue;
            };
            if !victim.spec.preemptible || run.preemption.is_some() {
                continue;
            }
            let lower = victim.spec.priority < priority;
            let allowed = if vq == q {
                match policy.within_queue {
                    WithinQueue::Never => false,
                    WithinQueue::LowerPriority => lower,
                    WithinQueue::LowerOrNewerEqualPriority => {
                        lower
                            || (victim.spec.priority == priority
                                && (victim.submit_ms, victim.arrival) > age)
                    }
                }
            } else if tree.same_tree(q, vq) && tree.is_borrowing(vq) {
                match policy.reclaim_within_cohort {
                    ReclaimWithinCohort::Never => false,
                    ReclaimWithinCohort::LowerPriority => lower,
                    ReclaimWithinCohort::Any => true,
                }
            } else {
                false
            };
            if allowed {
                candidates.push((
                    !tree.is_borrowing(vq),
                    victim.spec.priority,
                    Reverse(run.start_ms),
                    Reverse(v),
                ));
            }
        }
        candidates.sort_unstable();
        candidates.into_iter().map(|(.., Reverse(v))| v).collect()
    }

    /// Where `id` would run, quota allowing, once `victims` have stopped.
    fn fits_without(
        &mut self,
        id: JobId,
        victims: &[JobId],
        pass: &Pass,
        end: u64,
    ) -> Option<Vec<Assignment>> {
        let mut released: BTreeMap<NodeId, NodeAmounts> = BTreeMap::new();
        for v in victims {
            for (node, amounts) in self.state.node_charges(*v) {
                released.entry(node).or_default().add(&amounts);
            }
        }
        let held = self.state.earmark_holds(Some(id));
        let plan = self.place_now(id, pass, end, &held, &released)?;
        let demand = self.assignments_demand(id, &plan);
        self.quota_fits(id, victims, &demand).then_some(plan)
    }

    /// Emits the `preempt` decisions, marks the victims and earmarks `plan` for `id`.
    fn preempt(
        &mut self,
        id: JobId,
        victims: Vec<JobId>,
        plan: &[Assignment],
        decisions: &mut Vec<Decision>,
    ) {
        let now = self.state.now_ms;
        let preemptor = self.state.job_name(id).to_string();
        for &v in &victims {
            let Some(job) = self.state.jobs[v.index()].as_mut() else {
                continue;
            };
            let grace_ms = job.spec.grace_ms;
            let JobState::Running(run) = &mut job.state else {
                continue;
            };
            decisions.push(Decision::Preempt {
                job: job.spec.id.clone(),
                for_job: preemptor.clone(),
                grace_ms,
            });
            run.preemption = Some(Preemption {
                for_job: id,
                deadline_ms: now.saturating_add(grace_ms),
            });
        }
        let exclusive = self.state.job(id).is_some_and(|j| j.spec.exclusive);
        let planned = crate::state::charges(plan, exclusive, |n| {
            self.state
                .node(n)
                .map(|node| node.capacity)
                .unwrap_or_default()
        });
        self.state.earmarks.insert(
            id,
            Earmark {
                victims,
                planned,
                freed: Vec::new(),
            },
        );
    }
}
