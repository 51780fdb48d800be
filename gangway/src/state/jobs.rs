//! Job transitions: start, release, requeue, end, dependency resolution and forgetting.

use super::{ClusterState, Job, JobState, RunningJob};
use crate::decision::{CancelReason, Decision, KillReason, RequeueReason};
use crate::model::ids::{JobId, NodeId};
use crate::model::job::Outcome;
use crate::model::resources::NodeAmounts;
use crate::placement::Assignment;

impl ClusterState {
    /// Makes room in the jobs table and the name index for `submits` new jobs at once (a
    /// tick's submissions), so that a burst grows each once instead of at every doubling.
    pub(crate) fn reserve_jobs(&mut self, submits: usize) {
        self.jobs
            .reserve(submits.saturating_sub(self.free_slots.len()));
        self.job_names.reserve(submits, &self.jobs);
    }

    /// Makes `id` pending, noting the change for the order index.
    pub(crate) fn add_pending(&mut self, id: JobId) {
        self.pending.insert(id);
        self.pending_changes.note(id, self.pending.len());
    }

    /// Makes `id` no longer pending, noting the change for the order index.
    pub(crate) fn remove_pending(&mut self, id: JobId) {
        if self.pending.remove(&id) {
            self.pending_changes.note(id, self.pending.len());
        }
    }

    /// What a job holds on each node: the sum of its assignments there, or the whole node for an
    /// exclusive job (computed when it starts); nothing for a job not running.
    pub(crate) fn node_charges(
        &self,
        id: JobId,
    ) -> impl Iterator<Item = (NodeId, NodeAmounts)> + '_ {
        let charges = self
            .job(id)
            .and_then(|job| job.running())
            .map_or(&[][..], |run| run.charges.as_slice());
        charges.iter().copied()
    }

    /// The per-node charges of `assignments` for a job that is `exclusive` or not.
    pub(crate) fn charges_of(
        &self,
        assignments: &[Assignment],
        exclusive: bool,
    ) -> Vec<(NodeId, NodeAmounts)> {
        crate::placement::charges(&self.nodes, assignments, exclusive)
    }

    /// Runs `change` on running job `id`, moving its holdings in [`ClusterState::running_ends`]
    /// when the change moves its release time (a preemption's grace deadline, a new time
    /// limit), and its place among the jobs told to stop when it moves its grace deadline.
    pub(crate) fn change_release<T>(
        &mut self,
        id: JobId,
        change: impl FnOnce(&mut Self) -> T,
    ) -> T {
        let grace = |state: &Self| state.job(id).and_then(Job::grace_deadline_ms);
        let (grace_before, before) = (grace(self), self.job(id).and_then(|job| job.release_ms()));
        let changed = change(self);
        let (grace_after, after) = (grace(self), self.job(id).and_then(|job| job.release_ms()));
        if grace_before != grace_after {
            self.running_ends.move_grace(id, grace_before, grace_after);
        }
        if before != after {
            let charges: Vec<(NodeId, NodeAmounts)> = self.node_charges(id).collect();
            if let Some(before) = before {
                self.running_ends
                    .remove(id, charges.iter().copied(), before);
            }
            if let Some(after) = after {
                self.running_ends.add(id, charges, after);
            }
        }
        changed
    }

    /// Starts a pending job on `assignments` (already validated by the caller).
    pub(crate) fn start_job(&mut self, id: JobId, assignments: Vec<Assignment>, now_ms: u64) {
        self.start_epoch += 1;
        let exclusive = self.job(id).is_some_and(|job| job.spec.exclusive);
        let charges = self.charges_of(&assignments, exclusive);
        let readiness = self.readiness_at_start(now_ms);
        let billing_rate = match (self.fairshare.as_ref(), self.job(id)) {
            (Some(_), Some(job)) => self.billing_rate(self.billing(), &job.spec, &charges),
            _ => 0.0,
        };
        let Some(job) = self.jobs.get_mut(id) else {
            return;
        };
        job.state = JobState::Running(Box::new(RunningJob {
            start_ms: now_ms,
            assignments,
            preemption: None,
            readiness,
            charges: charges.clone(),
            billing_rate,
        }));
        job.history.runs = job.history.runs.saturating_add(1);
        job.history.last_checkpoint_ms = None;
        self.licenses.take(&job.licenses);
        let release_ms = job.release_ms();
        self.remove_pending(id);
        self.running.insert(id);
        if let Some(release_ms) = release_ms {
            self.running_ends
                .add(id, charges.iter().copied(), release_ms);
        }
        for (node_id, amounts) in &charges {
            if let Some(node) = self.nodes.get_mut(node_id.index()).and_then(Option::as_mut) {
                node.used.add(amounts);
                node.running_jobs += 1;
            }
        }
        self.index
            .refresh_used(&self.nodes, charges.iter().map(|(node_id, _)| *node_id));
        self.release_earmark(id);
        self.charge_quota(id);
        self.penalize_admission(id, now_ms);
    }

    /// Frees what a running job holds (its state is left to the caller).
    /// Quota charges and earmarks follow in the same step.
    fn release(&mut self, id: JobId) {
        self.close_run(id);
        let charges: Vec<(NodeId, NodeAmounts)> = self.node_charges(id).collect();
        self.releases
            .note_release(charges.iter().map(|(node, _)| *node));
        let job = self.job(id);
        let (grace, release_ms) = (
            job.and_then(Job::grace_deadline_ms),
            job.and_then(Job::release_ms),
        );
        if let Some(release_ms) = release_ms {
            self.running_ends
                .remove(id, charges.iter().copied(), release_ms);
        }
        self.running_ends.move_grace(id, grace, None);
        for (node_id, amounts) in &charges {
            if let Some(node) = self.nodes.get_mut(node_id.index()).and_then(Option::as_mut) {
                node.used.sub(amounts);
                node.running_jobs = node.running_jobs.saturating_sub(1);
            }
        }
        self.index
            .refresh_used(&self.nodes, charges.iter().map(|(node_id, _)| *node_id));
        self.uncharge_quota(id, charges);
        if let Some(job) = self.jobs.get(id) {
            self.licenses.give_back(&job.licenses);
        }
        self.running.remove(&id);
    }

    /// A running job loses its resources and is pending again, keeping its submit time and
    /// arrival order.
    pub(crate) fn requeue_job(&mut self, id: JobId) {
        self.release(id);
        if let Some(job) = self.jobs.get_mut(id) {
            job.state = JobState::Pending;
            self.add_pending(id);
        }
    }

    /// Evicts running job `id` at `now_ms`: a `requeue` decision with the first of `reasons`,
    /// and it is pending again, when `requeueable` and its `requeue` allow; otherwise a `kill`
    /// with the second, and it ends.
    pub(crate) fn evict_job(
        &mut self,
        id: JobId,
        now_ms: u64,
        requeueable: bool,
        (requeue_reason, kill_reason): (RequeueReason, KillReason),
        decisions: &mut Vec<Decision>,
    ) {
        let Some((job, requeue)) = self.job(id).map(|j| (j.spec.id.clone(), j.spec.requeue)) else {
            return;
        };
        if requeue && requeueable {
            decisions.push(Decision::Requeue {
                job,
                reason: requeue_reason,
            });
            self.requeue_job(id);
        } else {
            decisions.push(Decision::Kill {
                job,
                reason: kill_reason,
            });
            self.end_job(id, Outcome::Killed, now_ms, decisions);
        }
    }

    /// Ends a pending or running job, then resolves the jobs that depend on it; dependents whose
    /// dependency can never be met are cancelled (decisions pushed), down the chain.
    pub(crate) fn end_job(
        &mut self,
        id: JobId,
        outcome: Outcome,
        now_ms: u64,
        decisions: &mut Vec<Decision>,
    ) {
        let mut queue = vec![(id, outcome)];
        while let Some((id, outcome)) = queue.pop() {
            if self.running.contains(&id) {
                self.release(id);
            }
            if self.earmarks.contains_key(&id) {
                self.release_earmark(id);
            }
            self.remove_pending(id);
            let Some(job) = self.jobs.get_mut(id) else {
                continue;
            };
            job.state = JobState::Ended {
                at_ms: now_ms,
                outcome,
            };
            self.ended.push_back(id);
            let mut dependents = self.dependents.take_dependents(id);
            dependents.sort_by_key(|d| self.job(*d).map_or(u64::MAX, |j| j.arrival));
            for dependent in dependents {
                if self.resolve_dependency(dependent, id, outcome)
                    && let Some(name) = self.job_name(dependent)
                {
                    decisions.push(Decision::Cancel {
                        job: name.to_string(),
                        reason: CancelReason::DependencyNeverSatisfied,
                    });
                    queue.push((dependent, Outcome::CancelledPending));
                }
            }
        }
    }

    /// Applies `target`'s outcome to `dependent`'s waiting list; true when the dependent can
    /// never run and must be cancelled.
    fn resolve_dependency(&mut self, dependent: JobId, target: JobId, outcome: Outcome) -> bool {
        let Some(job) = self.jobs.get_mut(dependent) else {
            return false;
        };
        if job.state != JobState::Pending {
            return false;
        }
        let mut never = false;
        job.waiting_on.retain(|(t, kind)| {
            if *t != target {
                return true;
            }
            never |= !outcome.satisfies(*kind);
            false
        });
        never
    }

    /// Resolves a new job's dependencies on jobs that have already ended; true when it must be
    /// cancelled at once.
    pub(crate) fn resolve_ended_dependencies(&mut self, id: JobId) -> bool {
        let Some(job) = self.job(id) else {
            return false;
        };
        let ended: Vec<(JobId, Outcome)> = job
            .waiting_on
            .iter()
            .filter_map(|(t, _)| match self.job(*t).map(|j| &j.state) {
                Some(JobState::Ended { outcome, .. }) => Some((*t, *outcome)),
                _ => None,
            })
            .collect();
        let mut never = false;
        for (target, outcome) in ended {
            self.dependents.remove_edge(id, target);
            never |= self.resolve_dependency(id, target, outcome);
        }
        never
    }

    /// Forgets ended jobs older than `min_job_age_ms`: their ids become unknown again.
    pub(crate) fn forget_old_jobs(&mut self, now_ms: u64) {
        let min_age = self.config.policy.min_job_age_ms;
        while let Some(&id) = self.ended.front() {
            let ended_at = match self.job(id).map(|j| &j.state) {
                Some(JobState::Ended { at_ms, .. }) => *at_ms,
                _ => 0,
            };
            if ended_at.saturating_add(min_age) > now_ms {
                break;
            }
            self.ended.pop_front();
            if let Some(job) = self.jobs.take(id) {
                self.job_names.remove(id, &job.spec.id);
                self.dependents.take_dependents(id);
                self.free_slots.push(id);
            }
        }
    }
}
