//! `gangway inventory`: the local node (or a recorded fixture) as a CLUSTER node entry.

use std::path::Path;
use std::process::ExitCode;

use gangway::Milli;
use gangway_nvml::{FixtureProbe, inventory_json};

/// What the node entry says besides its GPUs.
pub struct HostOverrides {
    pub name: Option<String>,
    pub cpus: Option<u32>,
    pub memory_mib: Option<u64>,
}

/// Prints the node entry; exit status 2 when NVML is not available, 1 on any other failure.
pub fn run(fixture: Option<&Path>, host: HostOverrides) -> ExitCode {
    let result = match fixture {
        Some(path) => from_fixture(path, host),
        None => live::node_json(host),
    };
    match result {
        Ok(json) => match super::print_stdout(&format!("{json}\n")) {
            Ok(()) => ExitCode::SUCCESS,
            Err(message) => {
                eprintln!("inventory: {message}");
                ExitCode::from(1)
            }
        },
        Err(Failure::Unavailable(reason)) => {
            eprintln!("NVML not available: {reason}");
            ExitCode::from(2)
        }
        Err(Failure::Other(message)) => {
            eprintln!("inventory: {message}");
            ExitCode::from(1)
        }
    }
}

enum Failure {
    /// NVML cannot be used here; the reason.
    Unavailable(String),
    /// Anything else, as a message.
    Other(String),
}

/// A fixture records devices, not the host, so its node entry needs every host fact given.
fn from_fixture(path: &Path, host: HostOverrides) -> Result<String, Failure> {
    let (Some(name), Some(cpus), Some(memory_mib)) = (host.name, host.cpus, host.memory_mib) else {
        return Err(Failure::Other(
            "--fixture needs --name, --cpus and --memory-mib".to_string(),
        ));
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::Other(format!("cannot read {}: {e}", path.display())))?;
    let probe = FixtureProbe::from_json(&text)
        .map_err(|e| Failure::Other(format!("{}: {e}", path.display())))?;
    inventory_json(&probe, &name, Milli::from_units(cpus.into()), memory_mib)
        .map_err(|e| Failure::Other(e.to_string()))
}

#[cfg(all(feature = "nvml", target_os = "linux"))]
mod live {
    use gangway::Milli;
    use gangway_nvml::{NvmlProbe, ProbeError, host_facts, inventory_json};

    use super::{Failure, HostOverrides};

    /// The local node through the NVIDIA driver, with host facts from `/proc` unless given.
    pub fn node_json(host: HostOverrides) -> Result<String, Failure> {
        let probe = NvmlProbe::new().map_err(|e| match e {
            ProbeError::Unavailable(reason) => Failure::Unavailable(reason),
            other => Failure::Other(other.to_string()),
        })?;
        let facts = host_facts().map_err(|e| Failure::Other(e.to_string()))?;
        let name = host.name.unwrap_or(facts.hostname);
        let cpus = host.cpus.unwrap_or(facts.cpus);
        let memory_mib = host.memory_mib.unwrap_or(facts.memory_mib);
        inventory_json(&probe, &name, Milli::from_units(cpus.into()), memory_mib)
            .map_err(|e| Failure::Other(e.to_string()))
    }
}

#[cfg(not(all(feature = "nvml", target_os = "linux")))]
mod live {
    use super::{Failure, HostOverrides};

    /// Without the driver-backed probe there is nothing to ask.
    pub fn node_json(_host: HostOverrides) -> Result<String, Failure> {
        let reason = if cfg!(feature = "nvml") {
            "the NVML probe exists on Linux only"
        } else {
            "gangway was built without the nvml feature"
        };
        Err(Failure::Unavailable(reason.to_string()))
    }
}
