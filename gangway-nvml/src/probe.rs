//! The probe trait and the plain data it reports: what a node's GPUs are, and how they are.

use serde::{Deserialize, Serialize};

/// A source of facts about the local GPUs: the NVIDIA driver (`NvmlProbe`, feature
/// `nvml`) or recorded fixtures ([`super::FixtureProbe`]).
///
/// Both methods report physical GPUs by their driver index (`0..N`, the order of
/// `nvidia-smi -L`, which is PCI bus order and ignores `CUDA_VISIBLE_DEVICES`).
///
/// ```
/// use gangway_nvml::{FixtureProbe, GpuProbe};
/// let probe = FixtureProbe::new(Vec::new(), Vec::new());
/// assert!(probe.devices().unwrap().is_empty());
/// assert!(probe.health().unwrap().is_empty());
/// ```
pub trait GpuProbe {
    /// The GPUs in index order, with their MIG devices and NVLink peers.
    fn devices(&self) -> Result<Vec<ProbedDevice>, ProbeError>;

    /// One health sample: an entry per GPU the driver still enumerates. A GPU missing from the
    /// sample has been lost. Each call reports the XID errors seen since the previous call.
    fn health(&self) -> Result<Vec<DeviceHealth>, ProbeError>;
}

/// One physical GPU as the driver describes it.
///
/// ```
/// use gangway_nvml::ProbedDevice;
/// let gpu: ProbedDevice = serde_json::from_str(r#"{
///     "index": 0, "uuid": "GPU-1", "name": "NVIDIA H100 80GB HBM3",
///     "memory_mib": 81559, "pci_bus_id": "00000000:18:00.0"
/// }"#).unwrap();
/// assert_eq!(gpu.model(), "h100");
/// assert!(!gpu.mig_enabled);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProbedDevice {
    /// Driver index.
    pub index: u32,
    /// UUID (`GPU-…`), as `nvidia-smi -L` prints it.
    pub uuid: String,
    /// Full product name, e.g. `NVIDIA H100 80GB HBM3`; [`ProbedDevice::model`] shortens it.
    pub name: String,
    /// Total device memory in MiB.
    pub memory_mib: u64,
    /// PCI bus id as the driver formats it, e.g. `00000000:18:00.0`.
    pub pci_bus_id: String,
    /// Whether MIG mode is currently enabled (not merely pending until the next reset).
    #[serde(default)]
    pub mig_enabled: bool,
    /// The MIG devices that exist on this GPU, by slice. A GPU in MIG mode without any runs no
    /// CUDA work at all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mig_devices: Vec<ProbedMigDevice>,
    /// PCI bus ids at the far end of this GPU's active NVLinks: peer GPUs, or NVSwitches on
    /// switched systems. Sorted, without repeats.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nvlink_peers: Vec<String>,
}

impl ProbedDevice {
    /// The short model key of [`model_key`] for this device's name.
    ///
    /// ```
    /// use gangway_nvml::ProbedDevice;
    /// let gpu = ProbedDevice { index: 0, uuid: "GPU-1".into(), name: "NVIDIA A100-SXM4-80GB".into(),
    ///     memory_mib: 81920, pci_bus_id: "00000000:07:00.0".into(), mig_enabled: false,
    ///     mig_devices: vec![], nvlink_peers: vec![] };
    /// assert_eq!(gpu.model(), "a100");
    /// ```
    pub fn model(&self) -> String {
        model_key(&self.name)
    }
}

/// A MIG device (a compute instance in a GPU instance) on a GPU in MIG mode.
///
/// ```
/// use gangway_nvml::ProbedMigDevice;
/// let mig: ProbedMigDevice = serde_json::from_str(
///     r#"{"slice": 0, "uuid": "MIG-1", "profile": "1g.10gb", "memory_mib": 9728}"#).unwrap();
/// assert_eq!(mig.profile, "1g.10gb");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProbedMigDevice {
    /// The MIG device's index under its GPU (`N` in `nvidia-smi -L`'s `MIG 1g.10gb Device N`).
    pub slice: u32,
    /// UUID (`MIG-…`), the form `CUDA_VISIBLE_DEVICES` takes for a MIG device.
    pub uuid: String,
    /// Profile name, e.g. `1g.10gb` (compute slices `g`, memory in GB); `1c.3g.20gb` for a
    /// compute instance that takes part of its GPU instance.
    pub profile: String,
    /// Memory of the MIG device in MiB.
    pub memory_mib: u64,
}

/// One GPU's entry in a health sample.
///
/// ```
/// use gangway_nvml::DeviceHealth;
/// let h: DeviceHealth = serde_json::from_str(r#"{"index": 2, "xids": [79]}"#).unwrap();
/// assert_eq!(h.xids, [79]);
/// assert_eq!(h.lost, None);
/// assert_eq!(h.ecc_uncorrectable, None);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceHealth {
    /// Driver index.
    pub index: u32,
    /// `Some(reason)` when the driver still lists the GPU but cannot reach it (NVML's
    /// `GpuLost`); the other fields are then empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost: Option<String>,
    /// Critical XID errors the driver reported for this GPU since the previous sample, oldest
    /// first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub xids: Vec<u64>,
    /// Uncorrectable ECC errors since the driver loaded (NVML's volatile counter; a GPU reset or
    /// a driver reload zeroes it). `None` when ECC is off or unsupported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecc_uncorrectable: Option<u64>,
}

/// Why the GPUs could not be probed or described.
///
/// ```
/// use gangway_nvml::ProbeError;
/// let e = ProbeError::Unavailable(
///     "libnvidia-ml.so.1: cannot open shared object file: No such file or directory".into());
/// assert_eq!(format!("NVML not available: {e}"),
///     "NVML not available: libnvidia-ml.so.1: cannot open shared object file: No such file or directory");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProbeError {
    /// The NVIDIA management library could not be loaded or initialised. The message is the
    /// loader's or the driver's own reason, without any prefix.
    #[error("{0}")]
    Unavailable(String),
    /// A query for one fact failed: which fact (`gpu 3: uuid`, `/proc/meminfo`), and why.
    #[error("{what}: {reason}")]
    Query {
        /// The fact asked for.
        what: String,
        /// The failure.
        reason: String,
    },
    /// The devices cannot be written as one CLUSTER node entry (mixed models, gaps in the
    /// indices).
    #[error("{0}")]
    Node(String),
    /// A fixture could not be read.
    #[error("fixture: {0}")]
    Fixture(String),
}

/// Words dropped from the front of a product name before the model key is taken.
const BRAND_WORDS: [&str; 4] = ["nvidia", "tesla", "geforce", "quadro"];

/// Series words whose following word is part of the model (`rtx 4090`, `titan v`).
const SERIES_WORDS: [&str; 3] = ["rtx", "gtx", "titan"];

/// The short model key that jobs' `gpu_models` name, derived from a product name.
///
/// The rule: lowercase the name and split it into words; drop the brand words `nvidia`, `tesla`,
/// `geforce` and `quadro`; take the first remaining word up to its first `-`; when that word is
/// `rtx`, `gtx` or `titan`, append the next word (also up to its first `-`); keep only ASCII
/// letters and digits. A name that leaves nothing gives `gpu`.
///
/// Memory size and form factor are dropped (`A100-SXM4-40GB` and `A100 80GB PCIe` are both
/// `a100`); the node's `memory_mib` carries the size.
///
/// ```
/// use gangway_nvml::model_key;
/// assert_eq!(model_key("NVIDIA H100 80GB HBM3"), "h100");
/// assert_eq!(model_key("NVIDIA A100-SXM4-80GB"), "a100");
/// assert_eq!(model_key("Tesla V100-SXM2-32GB"), "v100");
/// assert_eq!(model_key("NVIDIA GeForce RTX 4090"), "rtx4090");
/// assert_eq!(model_key("NVIDIA RTX A6000"), "rtxa6000");
/// assert_eq!(model_key("NVIDIA L40S"), "l40s");
/// assert_eq!(model_key("NVIDIA"), "gpu");
/// ```
pub fn model_key(name: &str) -> String {
    let lower = name.to_lowercase();
    let mut words = lower
        .split_whitespace()
        .skip_while(|w| BRAND_WORDS.contains(w))
        .map(|w| w.split('-').next().unwrap_or(w));
    let mut key = String::new();
    if let Some(first) = words.next() {
        key.push_str(first);
        if SERIES_WORDS.contains(&first) {
            key.push_str(words.next().unwrap_or(""));
        }
    }
    key.retain(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    if key.is_empty() {
        key.push_str("gpu");
    }
    key
}

/// The MIG profile in a MIG device's product name: NVML names a MIG device after its GPU
/// followed by `MIG` and the profile (`NVIDIA A100-SXM4-80GB MIG 1g.10gb` → `1g.10gb`). A name
/// without the `MIG` word is returned whole.
///
/// ```
/// use gangway_nvml::mig_profile;
/// assert_eq!(mig_profile("NVIDIA A100-SXM4-80GB MIG 1g.10gb"), "1g.10gb");
/// assert_eq!(mig_profile("NVIDIA H100 80GB HBM3 MIG 1c.3g.40gb"), "1c.3g.40gb");
/// assert_eq!(mig_profile("odd"), "odd");
/// ```
pub fn mig_profile(name: &str) -> &str {
    match name.rsplit_once(" MIG ") {
        Some((_, profile)) if !profile.trim().is_empty() => profile.trim(),
        _ => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_keys_of_common_products() {
        for (name, key) in [
            ("NVIDIA H100 80GB HBM3", "h100"),
            ("NVIDIA H100 PCIe", "h100"),
            ("NVIDIA H200", "h200"),
            ("NVIDIA GH200 480GB", "gh200"),
            ("NVIDIA B200", "b200"),
            ("NVIDIA A100-SXM4-40GB", "a100"),
            ("NVIDIA A100 80GB PCIe", "a100"),
            ("Tesla T4", "t4"),
            ("Quadro RTX 8000", "rtx8000"),
            ("NVIDIA TITAN V", "titanv"),
            ("NVIDIA GeForce GTX 1080 Ti", "gtx1080"),
            ("  nvidia   l4  ", "l4"),
            ("", "gpu"),
        ] {
            assert_eq!(model_key(name), key, "{name:?}");
        }
    }

    #[test]
    fn mig_profile_needs_a_profile_after_the_mig_word() {
        assert_eq!(mig_profile("NVIDIA A100-SXM4-40GB MIG 1g.5gb"), "1g.5gb");
        assert_eq!(mig_profile("NVIDIA A100 MIG "), "NVIDIA A100 MIG ");
    }
}
