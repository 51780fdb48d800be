//! The probe backed by the NVIDIA driver, through nvml-wrapper (feature `nvml`, Linux).

use std::ffi::OsStr;
use std::sync::{Mutex, OnceLock, PoisonError};

use nvml_wrapper::bitmasks::event::EventTypes;
use nvml_wrapper::enum_wrappers::device::{EccCounter, MemoryError};
use nvml_wrapper::enums::event::XidError;
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::{Device, EventSet, Nvml};

use super::probe::{
    DeviceHealth, GpuProbe, ProbeError, ProbedDevice, ProbedMigDevice, mig_profile,
};

/// The NVML library's file name on Linux (its soname, which the driver always installs).
const LIBRARY: &str = "libnvidia-ml.so.1";

/// NVML's `NVML_NVLINK_MAX_LINKS`: the most NVLinks one GPU has.
const MAX_NVLINKS: u32 = 18;

/// NVML's `NVML_DEVICE_MIG_ENABLE`.
const MIG_ENABLED: u32 = 1;

/// The most XID events taken for one GPU in one health sample; more wait for the next.
const MAX_EVENTS_PER_SAMPLE: usize = 1024;

const MIB: u64 = 1024 * 1024;

/// The NVML library, initialised once per process (as NVIDIA advises) and kept for its life.
static NVML: OnceLock<Nvml> = OnceLock::new();

/// A [`GpuProbe`] that asks the NVIDIA driver through NVML (`libnvidia-ml.so.1`, loaded at run
/// time).
///
/// It listens for critical XID events from the moment it is created, on every GPU that could be
/// reached then and supports them ([`NvmlProbe::xid_gpus`]); each [`GpuProbe::health`] call
/// reports those seen since the previous call. NVML reports a GPU's latest XID when several
/// arrive between two waits, and XIDs it marks unknown are not reported.
///
/// ```no_run
/// use gangway_nvml::{GpuProbe, NvmlProbe};
/// match NvmlProbe::new() {
///     Ok(probe) => println!("{} GPUs", probe.devices().unwrap().len()),
///     Err(e) => eprintln!("NVML not available: {e}"),
/// }
/// ```
pub struct NvmlProbe {
    nvml: &'static Nvml,
    /// One critical-XID event set per listened GPU, by index.
    xid_events: Mutex<Vec<(u32, EventSet<'static>)>>,
}

impl NvmlProbe {
    /// Loads and initialises NVML and starts listening for XID errors.
    ///
    /// Without a driver this is [`ProbeError::Unavailable`] carrying the loader's own reason,
    /// e.g. `libnvidia-ml.so.1: cannot open shared object file: No such file or directory`; when
    /// the library loads but NVML does not start, the library name followed by NVML's reason
    /// (`libnvidia-ml.so.1: NVIDIA driver is not loaded`).
    ///
    /// ```no_run
    /// use gangway_nvml::NvmlProbe;
    /// if let Err(e) = NvmlProbe::new() {
    ///     eprintln!("NVML not available: {e}");
    ///     std::process::exit(2);
    /// }
    /// ```
    pub fn new() -> Result<NvmlProbe, ProbeError> {
        let nvml = shared_nvml()?;
        Ok(NvmlProbe {
            nvml,
            xid_events: Mutex::new(xid_event_sets(nvml)?),
        })
    }

    /// The GPUs whose XID errors this probe hears, in index order.
    ///
    /// ```no_run
    /// use gangway_nvml::NvmlProbe;
    /// let probe = NvmlProbe::new().unwrap();
    /// println!("listening for XID errors on GPUs {:?}", probe.xid_gpus());
    /// ```
    pub fn xid_gpus(&self) -> Vec<u32> {
        let sets = self
            .xid_events
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        sets.iter().map(|(index, _)| *index).collect()
    }

    fn device(&self, index: u32) -> Result<Device<'static>, ProbeError> {
        self.nvml
            .device_by_index(index)
            .map_err(|e| query(format!("gpu {index}"), e))
    }

    fn probe_device(&self, index: u32) -> Result<ProbedDevice, ProbeError> {
        let device = self.device(index)?;
        let at = |what: &str| format!("gpu {index}: {what}");
        let mig_enabled = match device.mig_mode() {
            Ok(mode) => mode.current == MIG_ENABLED,
            // No MIG on this GPU, or a driver too old to know MIG.
            Err(NvmlError::NotSupported | NvmlError::FailedToLoadSymbol(_)) => false,
            Err(e) => return Err(query(at("mig mode"), e)),
        };
        let mig_devices = if mig_enabled {
            mig_devices(&device).map_err(|e| query(at("mig devices"), e))?
        } else {
            Vec::new()
        };
        Ok(ProbedDevice {
            index,
            uuid: device.uuid().map_err(|e| query(at("uuid"), e))?,
            name: device.name().map_err(|e| query(at("name"), e))?,
            memory_mib: device
                .memory_info()
                .map_err(|e| query(at("memory"), e))?
                .total
                / MIB,
            pci_bus_id: device
                .pci_info()
                .map_err(|e| query(at("pci info"), e))?
                .bus_id,
            mig_enabled,
            mig_devices,
            nvlink_peers: nvlink_peers(&device).map_err(|e| query(at("nvlink"), e))?,
        })
    }

    /// The critical XIDs waiting in the event sets, as (GPU index, XID).
    fn drain_xids(&self) -> Result<Vec<(u32, u64)>, ProbeError> {
        // A poisoned lock still holds sound event sets.
        let sets = self
            .xid_events
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let mut xids = Vec::new();
        for (index, set) in sets.iter() {
            for _ in 0..MAX_EVENTS_PER_SAMPLE {
                let event = match set.wait(0) {
                    Ok(event) => event,
                    // Timeout: nothing more waiting. GpuLost: the health query will tell.
                    Err(NvmlError::Timeout | NvmlError::GpuLost) => break,
                    Err(e) => return Err(query(format!("gpu {index}: xid events"), e)),
                };
                if let Some(XidError::Value(xid)) = event.event_data {
                    xids.push((*index, xid));
                }
            }
        }
        Ok(xids)
    }
}

impl GpuProbe for NvmlProbe {
    fn devices(&self) -> Result<Vec<ProbedDevice>, ProbeError> {
        let count = self
            .nvml
            .device_count()
            .map_err(|e| query("gpu count".to_string(), e))?;
        (0..count).map(|index| self.probe_device(index)).collect()
    }

    fn health(&self) -> Result<Vec<DeviceHealth>, ProbeError> {
        let xids = self.drain_xids()?;
        let count = self
            .nvml
            .device_count()
            .map_err(|e| query("gpu count".to_string(), e))?;
        let mut sample = Vec::new();
        for index in 0..count {
            let mut entry = DeviceHealth {
                index,
                ..DeviceHealth::default()
            };
            match self.nvml.device_by_index(index) {
                Err(e) => entry.lost = Some(e.to_string()),
                Ok(device) => {
                    match device.total_ecc_errors(MemoryError::Uncorrected, EccCounter::Volatile) {
                        Ok(count) => entry.ecc_uncorrectable = Some(count),
                        Err(e @ NvmlError::GpuLost) => entry.lost = Some(e.to_string()),
                        // ECC off or unsupported on this GPU.
                        Err(_) => {}
                    }
                }
            }
            if entry.lost.is_none() {
                entry.xids = xids
                    .iter()
                    .filter(|(gpu, _)| *gpu == index)
                    .map(|&(_, xid)| xid)
                    .collect();
            }
            sample.push(entry);
        }
        Ok(sample)
    }
}

/// The process's NVML, initialised on first use; a failed initialisation is retried next time.
fn shared_nvml() -> Result<&'static Nvml, ProbeError> {
    if let Some(nvml) = NVML.get() {
        return Ok(nvml);
    }
    let nvml = Nvml::builder()
        .lib_path(OsStr::new(LIBRARY))
        .init()
        .map_err(unavailable)?;
    // Another thread may have won the race; its library is as good as ours, which drops.
    let _ = NVML.set(nvml);
    NVML.get()
        .ok_or_else(|| ProbeError::Unavailable("NVML was not kept after initialising".into()))
}

/// The loader's own reason (which names the library), or the library name and NVML's reason.
fn unavailable(error: NvmlError) -> ProbeError {
    match error {
        NvmlError::LibloadingError(e) => ProbeError::Unavailable(e.to_string()),
        e => ProbeError::Unavailable(format!("{LIBRARY}: {e}")),
    }
}

fn query(what: String, error: NvmlError) -> ProbeError {
    ProbeError::Query {
        what,
        reason: error.to_string(),
    }
}

/// One event set per GPU listening for its critical XIDs, for every GPU that can be reached
/// and supports them. A GPU whose registration fails is left out (its set is released), so
/// that one odd GPU cannot stop the others from being watched.
fn xid_event_sets(nvml: &'static Nvml) -> Result<Vec<(u32, EventSet<'static>)>, ProbeError> {
    let count = nvml
        .device_count()
        .map_err(|e| query("gpu count".to_string(), e))?;
    let mut sets = Vec::new();
    for index in 0..count {
        let Ok(device) = nvml.device_by_index(index) else {
            continue;
        };
        let supported = device
            .supported_event_types()
            .is_ok_and(|types| types.contains(EventTypes::CRITICAL_XID_ERROR));
        if !supported {
            continue;
        }
        let Ok(set) = nvml.create_event_set() else {
            continue;
        };
        if let Ok(set) = device.register_events(EventTypes::CRITICAL_XID_ERROR, set) {
            sets.push((index, set));
        }
    }
    Ok(sets)
}

/// The MIG devices that exist on a GPU in MIG mode; empty slots are skipped.
fn mig_devices(device: &Device<'static>) -> Result<Vec<ProbedMigDevice>, NvmlError> {
    let mut found = Vec::new();
    for slice in 0..device.mig_device_count()? {
        let mig = match device.mig_device_by_index(slice) {
            Ok(mig) => mig,
            Err(NvmlError::NotFound | NvmlError::InvalidArg) => continue,
            Err(e) => return Err(e),
        };
        let name = mig.name()?;
        found.push(ProbedMigDevice {
            slice,
            uuid: mig.uuid()?,
            profile: mig_profile(&name).to_string(),
            memory_mib: mig.memory_info()?.total / MIB,
        });
    }
    Ok(found)
}

/// The PCI bus ids at the far end of a GPU's active NVLinks, sorted and without repeats.
fn nvlink_peers(device: &Device<'static>) -> Result<Vec<String>, NvmlError> {
    let mut peers = Vec::new();
    for link in 0..MAX_NVLINKS {
        let link = device.link_wrapper_for(link);
        match link.is_active() {
            Ok(true) => peers.push(link.remote_pci_info()?.bus_id),
            Ok(false) => {}
            // No NVLink on this GPU, no link with this number, or a driver without NVLink calls.
            Err(
                NvmlError::NotSupported | NvmlError::InvalidArg | NvmlError::FailedToLoadSymbol(_),
            ) => break,
            Err(e) => return Err(e),
        }
    }
    peers.sort();
    peers.dedup();
    Ok(peers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_driver_new_is_an_error_naming_the_library() {
        match NvmlProbe::new() {
            Ok(_) => eprintln!("note: an NVIDIA driver is present; nothing to check"),
            Err(e) => {
                let message = e.to_string();
                eprintln!("NVML not available: {message}");
                assert!(matches!(e, ProbeError::Unavailable(_)), "{e:?}");
                assert!(message.contains("libnvidia-ml"), "{message}");
                assert!(!message.contains("libloading error"), "{message}");
            }
        }
    }
}
