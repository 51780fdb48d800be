//! gangway-sim: a discrete-event simulator that drives [`gangway::Scheduler`] on
//! virtual time, workload readers for real traces and seeded generators, metrics, the policy
//! presets `gangway simulate` compares, and its reports and plot.
//!
//! ```
//! use gangway_sim::workload::gpu_ml::GpuMlParams;
//! use gangway_sim::{metrics::Metrics, prepare, Overrun, PolicyPreset, SimOptions, Simulator};
//! let workload = GpuMlParams { jobs: 10, ..GpuMlParams::default() }.generate().unwrap();
//! let (cluster, jobs) = prepare(&workload, None, PolicyPreset::Easy, Overrun::Allow);
//! let result = Simulator::new(cluster, jobs, SimOptions::default()).unwrap().run(|_| Ok(())).unwrap();
//! let metrics = Metrics::of(&result);
//! assert_eq!(metrics.jobs.completed, 10);
//! ```

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod account_fold;
pub mod churn;
pub mod contention;
mod convert;
mod engine;
mod faults;
mod figure;
#[cfg(feature = "testkit")]
pub mod fuzz;
pub mod heatmap;
pub mod looks;
pub mod metrics;
pub mod plot;
mod preset;
pub mod report;
mod result;
pub mod standard;
pub mod sweep;
pub mod team;
pub mod textbook;
pub mod workload;

pub use convert::SimJob;
pub use engine::{SimError, SimOptions, Simulator, TickView};
pub use faults::FaultOptions;
pub use looks::LookSchedule;
pub use preset::{Overrun, PolicyPreset, prepare};
pub use result::{
    Execution, ExecutionEnd, FaultCounts, JobRecord, JobStatus, Sample, SimResult, TickInput,
};
