//! The NVML node adapter: the local node's GPUs as a CLUSTER node entry, and a health poll that
//! turns lost GPUs, XID errors and uncorrectable ECC errors into `gpu_down` / `gpu_up` events.
//!
//! Everything here but the driver is plain data and pure functions, compiled without any
//! feature so that it is tested against recorded fixtures ([`FixtureProbe`]) on machines without
//! GPUs. Only `NvmlProbe` and `host_facts`, which talk to the NVIDIA driver and to `/proc`,
//! need the `nvml` feature, and exist on Linux only; the driver library is loaded at run time,
//! so the feature builds on machines without one. (The design had the whole adapter behind the
//! feature; keeping only the driver part there lets CI test the rest without NVML.)
//!
//! ```
//! use gangway::Milli;
//! use gangway_nvml::{inventory_json, FixtureProbe};
//! let probe = FixtureProbe::from_json(r#"{"devices": [{"index": 0, "uuid": "GPU-1",
//!     "name": "NVIDIA H100 80GB HBM3", "memory_mib": 81559, "pci_bus_id": "00000000:18:00.0"}]}"#)
//!     .unwrap();
//! let json = inventory_json(&probe, "n1", Milli::from_units(32), 256_000).unwrap();
//! let node: gangway::config::NodeConfig = serde_json::from_str(&json).unwrap();
//! assert_eq!(node.gpus.unwrap().model, "h100");
//! ```

#![forbid(unsafe_code)]
#![deny(missing_docs)]

#[cfg(all(feature = "nvml", target_os = "linux"))]
mod driver;
mod fixture;
mod health;
#[cfg(all(feature = "nvml", target_os = "linux"))]
mod host;
mod node;
mod probe;

#[cfg(all(feature = "nvml", target_os = "linux"))]
pub use driver::NvmlProbe;
pub use fixture::FixtureProbe;
pub use health::{APPLICATION_XIDS, HealthEvent, HealthState, poll_health};
#[cfg(all(feature = "nvml", target_os = "linux"))]
pub use host::{HostFacts, host_facts};
pub use node::{node_config, nvlink_islands};
pub use probe::{
    DeviceHealth, GpuProbe, ProbeError, ProbedDevice, ProbedMigDevice, mig_profile, model_key,
};

use gangway::Milli;

/// The node entry that `gangway inventory` prints: [`node_config`] of the probe's devices, as
/// pretty-printed JSON that a CLUSTER's `nodes` list takes as it is.
///
/// ```
/// use gangway::Milli;
/// use gangway_nvml::{inventory_json, FixtureProbe};
/// let json = inventory_json(&FixtureProbe::default(), "cpu01", Milli::from_units(8), 32_000);
/// assert_eq!(json.unwrap(), "{\n  \"name\": \"cpu01\",\n  \"cpus\": 8,\n  \"memory_mib\": 32000\n}");
/// ```
pub fn inventory_json(
    probe: &dyn GpuProbe,
    hostname: &str,
    cpus: Milli,
    memory_mib: u64,
) -> Result<String, ProbeError> {
    let node = node_config(hostname, cpus, memory_mib, &probe.devices()?)?;
    // Plain structs with string keys: serialization cannot fail.
    Ok(serde_json::to_string_pretty(&node).expect("a node entry serializes"))
}
