//! Turning a workload's [`TraceJob`]s into the jobs the simulator submits.

use crate::workload::TraceJob;
use gangway::Milli;
use gangway::{JobSpec, TaskGroup};

/// One job of a simulation: what the scheduler is told ([`JobSpec`]), and how long the job
/// really runs once started (which the scheduler never sees).
///
/// ```
/// use gangway_sim::SimJob;
/// let job = SimJob { spec: gangway::JobSpec::new("a", 60_000, 1), run_ms: 90_000 };
/// assert!(job.run_ms > job.spec.time_limit_ms); // it overruns its request
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct SimJob {
    /// The job as submitted; `submit_ms` is set to the job's arrival time.
    pub spec: JobSpec,
    /// Actual run time in ms (≥ 1).
    pub run_ms: u64,
}

impl SimJob {
    /// The job of a trace record: one task group of `tasks` tasks with the record's cpus,
    /// memory, GPUs, GPU models and placement; the requested time as the time limit; user,
    /// account and queue when the record gives them (`with_queue` false drops the queue, for
    /// runs without quotas). Run times and limits of 0 become 1 ms.
    ///
    /// ```
    /// use gangway_sim::SimJob;
    /// use gangway_sim::workload::gpu_ml::GpuMlParams;
    /// let workload = GpuMlParams { jobs: 3, ..GpuMlParams::default() }.generate().unwrap();
    /// let job = SimJob::from_trace(&workload.jobs[0], true);
    /// assert_eq!(job.spec.id, workload.jobs[0].id);
    /// assert_eq!(job.spec.submit_ms, Some(workload.jobs[0].submit_ms));
    /// assert!(job.spec.queue.is_some());
    /// assert!(SimJob::from_trace(&workload.jobs[0], false).spec.queue.is_none());
    /// ```
    pub fn from_trace(job: &TraceJob, with_queue: bool) -> SimJob {
        let group = TaskGroup {
            cpus: Milli::from_milli(job.cpus_per_task_milli),
            memory_mib: job.memory_mib_per_task,
            gpus: Milli::from_milli(job.gpus_per_task_milli),
            gpu_models: (!job.gpu_models.is_empty()).then(|| job.gpu_models.clone()),
            placement: job.placement,
            ..TaskGroup::new(job.tasks.max(1))
        };
        let mut spec = JobSpec::new(job.id.clone(), job.time_limit_ms.max(1), 1);
        spec.groups = vec![group];
        spec.submit_ms = Some(job.submit_ms);
        spec.priority = job.priority;
        spec.user = non_empty(&job.user);
        spec.account = non_empty(&job.account);
        spec.queue = if with_queue {
            non_empty(&job.queue)
        } else {
            None
        };
        SimJob {
            spec,
            run_ms: job.run_ms.max(1),
        }
    }
}

fn non_empty(text: &str) -> Option<String> {
    (!text.is_empty()).then(|| text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::TracePlacement;
    use gangway::PlacementMode;

    #[test]
    fn converts_every_field() {
        let trace = TraceJob {
            id: "7".into(),
            submit_ms: 1_000,
            run_ms: 0,
            time_limit_ms: 120_000,
            tasks: 4,
            cpus_per_task_milli: 1_500,
            memory_mib_per_task: 64,
            gpus_per_task_milli: 500,
            gpu_models: vec!["T4".into()],
            user: "u1".into(),
            account: String::new(),
            queue: "q".into(),
            placement: TracePlacement::Spread,
            priority: 0,
        };
        let job = SimJob::from_trace(&trace, true);
        assert_eq!(job.run_ms, 1);
        assert_eq!(job.spec.time_limit_ms, 120_000);
        let group = &job.spec.groups[0];
        assert_eq!(group.count, 4);
        assert_eq!(group.cpus, Milli::from_milli(1_500));
        assert_eq!(group.memory_mib, 64);
        assert_eq!(group.gpus, Milli::from_milli(500));
        assert_eq!(group.gpu_models.as_deref(), Some(&["T4".to_string()][..]));
        assert_eq!(group.placement, PlacementMode::Spread);
        assert_eq!(job.spec.user.as_deref(), Some("u1"));
        assert_eq!(job.spec.account, None);
        assert_eq!(job.spec.queue.as_deref(), Some("q"));
    }
}
