//! From probed devices to the CLUSTER node entry.

use std::collections::BTreeMap;

use petgraph::unionfind::UnionFind;

use super::probe::{ProbeError, ProbedDevice};
use gangway::Milli;
use gangway::config::{GpuConfig, MigDeviceConfig, NodeConfig};

/// The CLUSTER node entry for a host with these GPUs.
///
/// `gpus` is omitted when there are no devices. Otherwise `model` is the devices'
/// [`super::model_key`], `count` the number of devices, `memory_mib` the smallest device
/// memory (so a job that fits one device fits any), and `uuids`, `pci_bus_ids`,
/// `nvlink_islands` ([`nvlink_islands`]) and `mig` describe each device by index.
///
/// A node holds one GPU model, and device indices are what decisions hand back as
/// `CUDA_VISIBLE_DEVICES`, so no device can be left out: GPUs of different models are an error
/// ([`ProbeError::Node`]) naming each index and model, rather than a node that claims the
/// majority model for every index. Indices must be exactly `0..N`.
///
/// ```
/// use gangway::Milli;
/// use gangway_nvml::{node_config, ProbedDevice};
/// let gpu = |i: u32| ProbedDevice { index: i, uuid: format!("GPU-{i}"),
///     name: "NVIDIA L40S".into(), memory_mib: 46068, pci_bus_id: format!("00000000:0{i}:00.0"),
///     mig_enabled: false, mig_devices: vec![], nvlink_peers: vec![] };
/// let node = node_config("n1", Milli::from_units(64), 512_000, &[gpu(0), gpu(1)]).unwrap();
/// let gpus = node.gpus.unwrap();
/// assert_eq!((gpus.model.as_str(), gpus.count), ("l40s", 2));
/// assert_eq!(gpus.uuids, ["GPU-0", "GPU-1"]);
/// assert!(gpus.nvlink_islands.is_empty());
/// ```
pub fn node_config(
    hostname: &str,
    cpus: Milli,
    memory_mib: u64,
    devices: &[ProbedDevice],
) -> Result<NodeConfig, ProbeError> {
    let mut sorted: Vec<&ProbedDevice> = devices.iter().collect();
    sorted.sort_by_key(|d| d.index);
    let gpus = if sorted.is_empty() {
        None
    } else {
        Some(gpu_config(hostname, &sorted)?)
    };
    Ok(NodeConfig {
        name: hostname.to_string(),
        cpus,
        memory_mib,
        gpus,
        ..NodeConfig::default()
    })
}

fn gpu_config(hostname: &str, sorted: &[&ProbedDevice]) -> Result<GpuConfig, ProbeError> {
    for (position, device) in sorted.iter().enumerate() {
        if u32::try_from(position).ok() != Some(device.index) {
            let indices: Vec<String> = sorted.iter().map(|d| d.index.to_string()).collect();
            return Err(ProbeError::Node(format!(
                "node {hostname:?}: GPU indices must be 0..{}, found [{}]",
                sorted.len(),
                indices.join(", ")
            )));
        }
    }
    let models: Vec<String> = sorted.iter().map(|d| d.model()).collect();
    let model = models[0].clone();
    if models.iter().any(|m| *m != model) {
        let listed: Vec<String> = models
            .iter()
            .enumerate()
            .map(|(i, m)| format!("{i}: {m}"))
            .collect();
        return Err(ProbeError::Node(format!(
            "node {hostname:?}: GPUs of different models ({}); a node entry holds one model, \
             so write this node's gpus by hand",
            listed.join(", ")
        )));
    }
    let mig = sorted
        .iter()
        .flat_map(|d| {
            d.mig_devices.iter().map(|m| MigDeviceConfig {
                gpu: d.index,
                slice: m.slice,
                profile: m.profile.clone(),
                uuid: m.uuid.clone(),
                memory_mib: m.memory_mib,
            })
        })
        .collect();
    Ok(GpuConfig {
        model,
        count: sorted.last().map_or(0, |d| d.index + 1),
        memory_mib: sorted.iter().map(|d| d.memory_mib).min().unwrap_or(0),
        uuids: sorted.iter().map(|d| d.uuid.clone()).collect(),
        pci_bus_ids: sorted.iter().map(|d| d.pci_bus_id.clone()).collect(),
        nvlink_islands: nvlink_islands(sorted.iter().copied()),
        mig,
        mig_config: None,
    })
}

/// Groups GPUs joined by NVLink into islands: the connected components of the graph whose
/// vertices are PCI endpoints (GPUs, and the NVSwitches or peers their links reach) and whose
/// edges are active links. Two GPUs on a common NVSwitch share an island.
///
/// Only islands of two or more GPUs are listed, each as sorted device indices, ordered by their
/// first index; a GPU in no island has no NVLink peer on this node. Bus ids are compared
/// without regard to case or to leading zeros of the PCI domain.
///
/// ```
/// use gangway_nvml::{nvlink_islands, ProbedDevice};
/// let gpu = |i: u32, peers: &[&str]| ProbedDevice { index: i, uuid: format!("GPU-{i}"),
///     name: "NVIDIA A100-PCIE-40GB".into(), memory_mib: 40960,
///     pci_bus_id: format!("00000000:0{i}:00.0"), mig_enabled: false, mig_devices: vec![],
///     nvlink_peers: peers.iter().map(|p| p.to_string()).collect() };
/// // Two bridged pairs (0-1, 2-3) and a GPU without NVLink.
/// let gpus = [gpu(0, &["00000000:01:00.0"]), gpu(1, &["00000000:00:00.0"]),
///     gpu(2, &["00000000:03:00.0"]), gpu(3, &["00000000:02:00.0"]), gpu(4, &[])];
/// assert_eq!(nvlink_islands(&gpus), vec![vec![0, 1], vec![2, 3]]);
/// ```
pub fn nvlink_islands<'a>(devices: impl IntoIterator<Item = &'a ProbedDevice>) -> Vec<Vec<u32>> {
    let devices: Vec<&ProbedDevice> = devices.into_iter().collect();
    let mut endpoints: BTreeMap<String, usize> = BTreeMap::new();
    let mut endpoint = |bus_id: &str| {
        let next = endpoints.len();
        *endpoints.entry(bus_key(bus_id)).or_insert(next)
    };
    let mut edges = Vec::new();
    let gpu_vertices: Vec<usize> = devices.iter().map(|d| endpoint(&d.pci_bus_id)).collect();
    for (device, &vertex) in devices.iter().zip(&gpu_vertices) {
        for peer in &device.nvlink_peers {
            edges.push((vertex, endpoint(peer)));
        }
    }
    let mut components = UnionFind::<usize>::new(endpoints.len());
    for (a, b) in edges {
        components.union(a, b);
    }
    let mut islands: BTreeMap<usize, Vec<u32>> = BTreeMap::new();
    for (device, &vertex) in devices.iter().zip(&gpu_vertices) {
        islands
            .entry(components.find(vertex))
            .or_default()
            .push(device.index);
    }
    let mut islands: Vec<Vec<u32>> = islands
        .into_values()
        .filter(|island| island.len() > 1)
        .map(|mut island| {
            island.sort_unstable();
            island.dedup();
            island
        })
        .collect();
    islands.sort();
    islands
}

/// A PCI bus id in one spelling: lowercase, the domain without leading zeros.
fn bus_key(bus_id: &str) -> String {
    let lower = bus_id.trim().to_ascii_lowercase();
    match lower.split_once(':') {
        Some((domain, rest)) if rest.contains(':') => {
            let domain = domain.trim_start_matches('0');
            format!("{}:{rest}", if domain.is_empty() { "0" } else { domain })
        }
        _ => lower,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpu(index: u32, name: &str, peers: &[&str]) -> ProbedDevice {
        ProbedDevice {
            index,
            uuid: format!("GPU-{index}"),
            name: name.to_string(),
            memory_mib: 1000 + u64::from(index),
            pci_bus_id: format!("00000000:{:02X}:00.0", 0x10 + index),
            mig_enabled: false,
            mig_devices: Vec::new(),
            nvlink_peers: peers.iter().map(|p| p.to_string()).collect(),
        }
    }

    #[test]
    fn bus_ids_compare_without_case_or_domain_zeros() {
        assert_eq!(bus_key("00000000:1B:00.0"), "0:1b:00.0");
        assert_eq!(bus_key("0000:1b:00.0"), "0:1b:00.0");
        assert_eq!(bus_key("0001:1b:00.0"), "1:1b:00.0");
        assert_eq!(bus_key("weird"), "weird");
    }

    #[test]
    fn islands_join_through_switches_and_direct_links() {
        // 0 and 1 share a switch; 1 links directly to 2 (spelled differently); 3 and 4 have
        // their own switch; 5 has none.
        let devices = [
            gpu(0, "NVIDIA H100", &["00000000:F0:00.0"]),
            gpu(1, "NVIDIA H100", &["0000:f0:00.0", "0000:12:00.0"]),
            gpu(2, "NVIDIA H100", &[]),
            gpu(3, "NVIDIA H100", &["00000000:F1:00.0"]),
            gpu(4, "NVIDIA H100", &["00000000:F1:00.0"]),
            gpu(5, "NVIDIA H100", &[]),
        ];
        assert_eq!(nvlink_islands(&devices), vec![vec![0, 1, 2], vec![3, 4]]);
    }

    #[test]
    fn node_config_sorts_devices_by_index_and_takes_the_smallest_memory() {
        let devices = [gpu(1, "NVIDIA H100", &[]), gpu(0, "NVIDIA H100", &[])];
        let node = node_config("n", Milli::from_units(2), 10, &devices).unwrap();
        let gpus = node.gpus.unwrap();
        assert_eq!(gpus.uuids, ["GPU-0", "GPU-1"]);
        assert_eq!(gpus.pci_bus_ids, ["00000000:10:00.0", "00000000:11:00.0"]);
        assert_eq!(gpus.memory_mib, 1000);
    }

    #[test]
    fn mixed_models_are_refused_with_each_index_named() {
        let devices = [
            gpu(0, "NVIDIA H100", &[]),
            gpu(1, "NVIDIA A100-SXM4-80GB", &[]),
        ];
        let err = node_config("n", Milli::ZERO, 0, &devices).unwrap_err();
        assert_eq!(
            err.to_string(),
            "node \"n\": GPUs of different models (0: h100, 1: a100); a node entry holds one \
             model, so write this node's gpus by hand"
        );
    }

    #[test]
    fn gaps_in_indices_are_refused() {
        let devices = [gpu(0, "NVIDIA H100", &[]), gpu(2, "NVIDIA H100", &[])];
        let err = node_config("n", Milli::ZERO, 0, &devices).unwrap_err();
        assert_eq!(
            err.to_string(),
            "node \"n\": GPU indices must be 0..2, found [0, 2]"
        );
    }
}
