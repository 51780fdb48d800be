//! Applying one host event: validate first, then change; a refused event changes nothing.

use super::{ClusterState, JobState};
use crate::decision::{CancelReason, Decision};
use crate::error::{ErrorKind, EventError};
use crate::event::Event;
use crate::model::ids::JobId;
use crate::model::job::{FinishOutcome, Outcome};

impl ClusterState {
    /// Applies one event at `now_ms`. Decisions it causes at once (requeues and kills on a lost
    /// node, cancels of dependents) are pushed to `decisions`.
    pub(crate) fn apply_event(
        &mut self,
        event: Event,
        now_ms: u64,
        decisions: &mut Vec<Decision>,
    ) -> Result<(), EventError> {
        event
            .check_times()
            .map_err(|m| EventError::new(crate::error::ErrorKind::Invalid, m))?;
        // Only submits and checkpoints free nothing and change no request; readiness changes
        // nothing while wait-for-ready is off. A running job's end frees what its release
        // frees, and the release counts it, with its nodes.
        let unwatched = self.config.policy.wait_for_ready.is_none()
            && matches!(event, Event::Ready { .. } | Event::NotReady { .. });
        let frees_nothing = matches!(event, Event::Submit { .. } | Event::Checkpoint { .. });
        let counted_by_release = matches!(event, Event::Finished { .. });
        if !unwatched && !frees_nothing && !counted_by_release {
            self.releases.note_change();
        }
        match event {
            Event::Submit { job } => {
                let mut job = self.compile_job(job, now_ms)?;
                self.remember_satisfiable(&job);
                job.assoc = self.associate(&job.spec)?;
                let id = self.insert_job(job);
                if self.resolve_ended_dependencies(id) {
                    decisions.push(Decision::Cancel {
                        job: self.job_name(id).unwrap_or_default().to_string(),
                        reason: CancelReason::DependencyNeverSatisfied,
                    });
                    self.end_job(id, Outcome::CancelledPending, now_ms, decisions);
                }
                Ok(())
            }
            Event::Cancel { job } => {
                let id = self.live_job(&job, "cancel")?;
                let outcome = if self.running.contains(&id) {
                    Outcome::CancelledRunning
                } else {
                    Outcome::CancelledPending
                };
                self.end_job(id, outcome, now_ms, decisions);
                Ok(())
            }
            Event::Finished { job, outcome } => {
                let id = self.running_job(&job, "finished")?;
                let outcome = match outcome {
                    FinishOutcome::Completed => Outcome::Completed,
                    FinishOutcome::Failed => Outcome::Failed,
                };
                self.end_job(id, outcome, now_ms, decisions);
                Ok(())
            }
            Event::Stopped { job } => {
                let id = self.live_job(&job, "stopped")?;
                let preempted = self
                    .job(id)
                    .and_then(|j| j.running())
                    .is_some_and(|r| r.preemption.is_some());
                if !preempted {
                    return Err(EventError::new(
                        ErrorKind::InvalidState,
                        format!("stopped {job}: the job was not asked to stop"),
                    ));
                }
                self.stop_preempted(id, now_ms, decisions);
                Ok(())
            }
            Event::Checkpoint { job } => {
                let id = self.running_job(&job, "checkpoint")?;
                self.job_mut(id).history.last_checkpoint_ms = Some(now_ms);
                Ok(())
            }
            Event::Ready { job } => {
                let id = self.running_job(&job, "ready")?;
                self.report_readiness(id, true, now_ms);
                Ok(())
            }
            Event::NotReady { job } => {
                let id = self.running_job(&job, "not_ready")?;
                self.report_readiness(id, false, now_ms);
                Ok(())
            }
            Event::NodeAdd { node } => self.add_node(node),
            Event::NodeRemove { node } => self.remove_node(&node, now_ms, decisions),
            Event::NodeDown { node } => self.node_down(&node, now_ms, decisions),
            Event::NodeUp { node } => {
                self.set_node_state(&node, "node_up", crate::model::node::NodeState::Up)
            }
            Event::NodeDrain { node } => {
                self.set_node_state(&node, "node_drain", crate::model::node::NodeState::Draining)
            }
            Event::GpuDown { node, gpu } => self.gpu_down(&node, gpu, now_ms, decisions),
            Event::GpuUp { node, gpu } => self.gpu_up(&node, gpu),
            Event::SetPriority { job, priority } => {
                let id = self.live_job(&job, "set_priority")?;
                self.job_mut(id).spec.priority = priority;
                self.pending_changes.note(id, self.pending.len());
                Ok(())
            }
            Event::Hold { job } => self.set_held(&job, "hold", true),
            Event::Release { job } => self.set_held(&job, "release", false),
            Event::SetTimeLimit { job, time_limit_ms } => {
                let id = self.live_job(&job, "set_time_limit")?;
                if time_limit_ms == 0 {
                    return Err(EventError::new(
                        ErrorKind::Invalid,
                        format!("set_time_limit {job}: time_limit_ms must be positive"),
                    ));
                }
                let partition = self.job(id).map(|j| &self.partitions[j.partition.index()]);
                if let Some(partition) = partition
                    && let Some(max) = partition.max_time_ms
                    && time_limit_ms > max
                {
                    return Err(EventError::new(
                        ErrorKind::Invalid,
                        format!(
                            "set_time_limit {job}: {time_limit_ms} exceeds partition {}'s max_time_ms {max}",
                            partition.name
                        ),
                    ));
                }
                self.change_release(id, |state| {
                    state.job_mut(id).spec.time_limit_ms = time_limit_ms;
                });
                // A pending job's key may read its time limit (shortest-first).
                if self.pending.contains(&id) {
                    self.pending_changes.note(id, self.pending.len());
                }
                Ok(())
            }
            Event::MaintenanceAdd {
                id,
                nodes,
                start_ms,
                end_ms,
            } => self.add_maintenance(id, &nodes, start_ms, end_ms),
            Event::MaintenanceRemove { id } => self.remove_maintenance(&id),
        }
    }

    /// A preempted job has released its resources: requeued (original submit time) or ended.
    pub(crate) fn stop_preempted(&mut self, id: JobId, now_ms: u64, decisions: &mut Vec<Decision>) {
        let requeue = self.job(id).is_some_and(|j| j.spec.requeue);
        if requeue {
            self.requeue_job(id);
        } else {
            self.end_job(id, Outcome::Killed, now_ms, decisions);
        }
    }

    fn set_held(&mut self, job: &str, what: &str, held: bool) -> Result<(), EventError> {
        let id = self.live_job(job, what)?;
        if !self.pending.contains(&id) {
            return Err(EventError::new(
                ErrorKind::InvalidState,
                format!("{what} {job}: only a pending job can be held or released"),
            ));
        }
        self.job_mut(id).held = held;
        Ok(())
    }

    /// A pending or running job by name.
    fn live_job(&self, name: &str, what: &str) -> Result<JobId, EventError> {
        let id = self.job_id(name).ok_or_else(|| {
            EventError::new(ErrorKind::UnknownJob, format!("{what}: no job \"{name}\""))
        })?;
        match self.job(id).map(|j| &j.state) {
            Some(JobState::Ended { .. }) | None => Err(EventError::new(
                ErrorKind::InvalidState,
                format!("{what} {name}: the job has already ended"),
            )),
            _ => Ok(id),
        }
    }

    /// A running job by name.
    fn running_job(&self, name: &str, what: &str) -> Result<JobId, EventError> {
        let id = self.live_job(name, what)?;
        if !self.running.contains(&id) {
            return Err(EventError::new(
                ErrorKind::InvalidState,
                format!("{what} {name}: the job is not running"),
            ));
        }
        Ok(id)
    }

    fn job_mut(&mut self, id: JobId) -> &mut super::Job {
        // Only called with ids just returned by `live_job`, so the slot is occupied.
        self.jobs.get_mut(id).expect("live job slot")
    }
}
