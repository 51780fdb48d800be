//! Simulation support (feature `sim`): workload readers for real traces and seeded workload
//! generators.
//!
//! ```
//! use gangway::sim::workload::gpu_ml::GpuMlParams;
//! let workload = GpuMlParams { jobs: 10, ..GpuMlParams::default() }.generate().unwrap();
//! assert_eq!(workload.jobs.len(), 10);
//! ```

pub mod workload;
