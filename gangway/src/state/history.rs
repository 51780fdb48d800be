//! A job's run history: the GPU service it has attained and how its runs ended, kept as runs
//! start, are preempted and end (see [`super::RunHistory`]).

use super::ClusterState;
use crate::model::ids::JobId;

impl ClusterState {
    /// The GPUs running job `id` holds, in thousandths: whole and fractional devices, and MIG
    /// slices as their compute share of a device; 0 for a job not running.
    pub(crate) fn held_gpu_milli(&self, id: JobId) -> u64 {
        self.node_charges(id)
            .map(|(node, mut amounts)| {
                if let Some(node) = self.node(node).filter(|_| amounts.mig != 0) {
                    node.mig.add_device_shares(&mut amounts);
                }
                amounts.devices.iter().map(|&d| u64::from(d)).sum::<u64>()
            })
            .sum()
    }

    /// GPU-milliseconds running job `id` has held in its current run up to `now_ms`.
    pub(crate) fn current_run_gpu_ms(&self, id: JobId, now_ms: u64) -> u64 {
        let Some(run) = self.job(id).and_then(|j| j.running()) else {
            return 0;
        };
        let elapsed = now_ms.saturating_sub(run.start_ms);
        self.held_gpu_milli(id).saturating_mul(elapsed) / 1000
    }

    /// Adds the run job `id` is ending now to its history (before its resources are freed).
    pub(super) fn close_run(&mut self, id: JobId) {
        let now = self.now_ms;
        let attained = self.current_run_gpu_ms(id, now);
        let Some(job) = self.jobs.get_mut(id) else {
            return;
        };
        let Some(start) = job.running().map(|r| r.start_ms) else {
            return;
        };
        let history = &mut job.history;
        history.attained_gpu_ms = history.attained_gpu_ms.saturating_add(attained);
        history.last_run = Some((start, now.max(start)));
    }
}
