//! Why a reader left a trace record out, and how many it left out for each reason.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// Why a trace record did not become a job. Each skipped record is counted under the first
/// reason, in this order, that applies to it.
///
/// ```
/// use gangway_sim::workload::SkipReason;
/// assert_eq!(SkipReason::WiderThanMachine.to_string(), "wider_than_machine");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// SWF: the submit time is negative (unknown).
    UnknownSubmitTime,
    /// Alibaba: the pod has no creation or deletion time (or the file has no time columns).
    MissingTimes,
    /// Alibaba: the pod was never scheduled (no scheduled time, e.g. still `Pending`).
    NeverScheduled,
    /// Slurm history: a job step (`123.batch`, `123.0`) rather than a job allocation (export
    /// with `sacct --allocations` to leave them out).
    JobStep,
    /// Slurm history: the job never started (`Start` is `Unknown` or `None`: still pending, or
    /// cancelled before it started).
    NeverStarted,
    /// Slurm history: the job is still running (`End` is `Unknown`).
    StillRunning,
    /// The run time is zero or negative (SWF field 4 ≤ 0; Alibaba deletion ≤ scheduled; a
    /// history's end ≤ start or duration 0).
    NonPositiveRunTime,
    /// SWF: neither the requested (field 8) nor the allocated (field 5) processors are > 0.
    NonPositiveProcessors,
    /// SWF: the job asks for more processors than the machine has.
    WiderThanMachine,
    /// SWF, with [`super::NonPositiveRequest::Skip`]: the requested time (field 9) is ≤ 0.
    NonPositiveRequest,
    /// Alibaba: a GPU request that is neither a fraction of one GPU nor whole GPUs
    /// (`num_gpu` 0 with `gpu_milli` > 0, `gpu_milli` outside 1..=1000, or several GPUs with
    /// `gpu_milli` other than 1000).
    InvalidGpuRequest,
    /// History (Slurm or CSV): the job used no GPU.
    NoGpus,
    /// Alibaba: no node of the node list can hold the pod (cpus, memory, GPU count or model);
    /// history: the job asks more GPUs per node than a node has.
    FitsNoNode,
    /// History (Slurm or CSV), with `skip_malformed`: the row is malformed (the error it would
    /// otherwise be names the line).
    Malformed,
}

impl SkipReason {
    /// The reason's `snake_case` name, as it serializes.
    ///
    /// ```
    /// use gangway_sim::workload::SkipReason;
    /// assert_eq!(SkipReason::NonPositiveRunTime.name(), "non_positive_run_time");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            SkipReason::UnknownSubmitTime => "unknown_submit_time",
            SkipReason::MissingTimes => "missing_times",
            SkipReason::NeverScheduled => "never_scheduled",
            SkipReason::JobStep => "job_step",
            SkipReason::NeverStarted => "never_started",
            SkipReason::StillRunning => "still_running",
            SkipReason::NonPositiveRunTime => "non_positive_run_time",
            SkipReason::NonPositiveProcessors => "non_positive_processors",
            SkipReason::WiderThanMachine => "wider_than_machine",
            SkipReason::NonPositiveRequest => "non_positive_request",
            SkipReason::InvalidGpuRequest => "invalid_gpu_request",
            SkipReason::NoGpus => "no_gpus",
            SkipReason::FitsNoNode => "fits_no_node",
            SkipReason::Malformed => "malformed",
        }
    }
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How many records were skipped, per reason (reasons with no skipped record are absent).
/// Serializes as a JSON object such as `{"non_positive_run_time": 17}`.
///
/// ```
/// use gangway_sim::workload::{SkipCounts, SkipReason};
/// let mut skipped = SkipCounts::default();
/// skipped.add(SkipReason::NonPositiveRunTime);
/// skipped.add(SkipReason::NonPositiveRunTime);
/// assert_eq!(skipped.get(SkipReason::NonPositiveRunTime), 2);
/// assert_eq!(skipped.get(SkipReason::WiderThanMachine), 0);
/// assert_eq!(skipped.total(), 2);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SkipCounts(BTreeMap<SkipReason, u64>);

impl SkipCounts {
    /// Counts one more record skipped for `reason`.
    ///
    /// ```
    /// use gangway_sim::workload::{SkipCounts, SkipReason};
    /// let mut skipped = SkipCounts::default();
    /// skipped.add(SkipReason::FitsNoNode);
    /// assert_eq!(skipped.get(SkipReason::FitsNoNode), 1);
    /// ```
    pub fn add(&mut self, reason: SkipReason) {
        *self.0.entry(reason).or_insert(0) += 1;
    }

    /// How many records were skipped for `reason`.
    ///
    /// ```
    /// use gangway_sim::workload::{SkipCounts, SkipReason};
    /// assert_eq!(SkipCounts::default().get(SkipReason::FitsNoNode), 0);
    /// ```
    pub fn get(&self, reason: SkipReason) -> u64 {
        self.0.get(&reason).copied().unwrap_or(0)
    }

    /// How many records were skipped in all.
    ///
    /// ```
    /// use gangway_sim::workload::SkipCounts;
    /// assert_eq!(SkipCounts::default().total(), 0);
    /// ```
    pub fn total(&self) -> u64 {
        self.0.values().sum()
    }

    /// The reasons with at least one skipped record and their counts, in the order of
    /// [`SkipReason`]'s declaration.
    ///
    /// ```
    /// use gangway_sim::workload::{SkipCounts, SkipReason};
    /// let mut skipped = SkipCounts::default();
    /// skipped.add(SkipReason::WiderThanMachine);
    /// skipped.add(SkipReason::NonPositiveRunTime);
    /// let listed: Vec<_> = skipped.iter().collect();
    /// assert_eq!(listed, [(SkipReason::NonPositiveRunTime, 1), (SkipReason::WiderThanMachine, 1)]);
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = (SkipReason, u64)> + '_ {
        self.0.iter().map(|(reason, count)| (*reason, *count))
    }
}
