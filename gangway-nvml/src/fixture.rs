//! A probe that replays recorded facts, so inventory and health logic run without a driver.
//!
//! The repository's fixtures live in `tests/fixtures/nvml/` (hand-written in the shape NVML
//! reports, not recordings of real machines): `h100x8_nvlink.json` (eight H100 80GB on four
//! NVSwitches, one island), `a100_80gb_mig.json` (an A100 80GB in MIG mode with seven `1g.10gb`
//! devices) and `no_gpu.json`. Each has its expected node entry beside it (`*.node.json`).

use std::cell::Cell;

use serde::{Deserialize, Serialize};

use super::probe::{DeviceHealth, GpuProbe, ProbeError, ProbedDevice};

/// Recorded devices and a sequence of health samples.
///
/// As JSON: `{"devices": [DEVICE…], "health": [[HEALTH…]…]}`, `health` optional. Each
/// [`GpuProbe::health`] call returns the next sample and the last one repeats; with no samples
/// every device reports healthy.
///
/// ```
/// use gangway_nvml::{FixtureProbe, GpuProbe};
/// let probe = FixtureProbe::from_json(r#"{"devices": [], "health": [[{"index": 0}], []]}"#).unwrap();
/// assert_eq!(probe.health().unwrap().len(), 1);
/// assert_eq!(probe.health().unwrap().len(), 0);
/// assert_eq!(probe.health().unwrap().len(), 0);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixtureProbe {
    /// What [`GpuProbe::devices`] returns.
    pub devices: Vec<ProbedDevice>,
    /// What successive [`GpuProbe::health`] calls return.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub health: Vec<Vec<DeviceHealth>>,
    /// The next sample to return.
    #[serde(skip)]
    next: Cell<usize>,
}

impl FixtureProbe {
    /// A probe with these devices and health samples.
    ///
    /// ```
    /// use gangway_nvml::{FixtureProbe, GpuProbe};
    /// let probe = FixtureProbe::new(Vec::new(), Vec::new());
    /// assert!(probe.devices().unwrap().is_empty());
    /// ```
    pub fn new(devices: Vec<ProbedDevice>, health: Vec<Vec<DeviceHealth>>) -> FixtureProbe {
        FixtureProbe {
            devices,
            health,
            next: Cell::new(0),
        }
    }

    /// Reads a fixture from its JSON form.
    ///
    /// ```
    /// use gangway_nvml::FixtureProbe;
    /// let err = FixtureProbe::from_json(r#"{"devices": [], "extra": 1}"#).unwrap_err();
    /// assert!(err.to_string().starts_with("fixture: unknown field `extra`"), "{err}");
    /// ```
    pub fn from_json(json: &str) -> Result<FixtureProbe, ProbeError> {
        serde_json::from_str(json).map_err(|e| ProbeError::Fixture(e.to_string()))
    }

    /// The fixture's JSON form (pretty-printed), which [`FixtureProbe::from_json`] reads back.
    ///
    /// ```
    /// use gangway_nvml::FixtureProbe;
    /// let probe = FixtureProbe::new(Vec::new(), Vec::new());
    /// assert_eq!(FixtureProbe::from_json(&probe.to_json()).unwrap(), probe);
    /// ```
    pub fn to_json(&self) -> String {
        // Plain structs with string keys: serialization cannot fail.
        serde_json::to_string_pretty(self).expect("a fixture serializes")
    }

    /// Records another probe (the driver, on a real machine): its devices and one health
    /// sample, to be saved with [`FixtureProbe::to_json`].
    ///
    /// ```
    /// use gangway_nvml::{FixtureProbe, GpuProbe};
    /// let live = FixtureProbe::from_json(r#"{"devices": []}"#).unwrap();
    /// let recorded = FixtureProbe::record(&live).unwrap();
    /// assert_eq!(recorded.health, vec![vec![]]);
    /// ```
    pub fn record(probe: &dyn GpuProbe) -> Result<FixtureProbe, ProbeError> {
        Ok(FixtureProbe::new(probe.devices()?, vec![probe.health()?]))
    }
}

impl GpuProbe for FixtureProbe {
    fn devices(&self) -> Result<Vec<ProbedDevice>, ProbeError> {
        Ok(self.devices.clone())
    }

    fn health(&self) -> Result<Vec<DeviceHealth>, ProbeError> {
        let Some(last) = self.health.len().checked_sub(1) else {
            return Ok(self
                .devices
                .iter()
                .map(|d| DeviceHealth {
                    index: d.index,
                    ..DeviceHealth::default()
                })
                .collect());
        };
        let at = self.next.get().min(last);
        self.next.set(at + 1);
        Ok(self.health[at].clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{HealthEvent, HealthState, inventory_json, node_config, poll_health};
    use gangway::Milli;

    const H100: &str = include_str!("../tests/fixtures/nvml/h100x8_nvlink.json");
    const H100_NODE: &str = include_str!("../tests/fixtures/nvml/h100x8_nvlink.node.json");
    const A100_MIG: &str = include_str!("../tests/fixtures/nvml/a100_80gb_mig.json");
    const A100_MIG_NODE: &str = include_str!("../tests/fixtures/nvml/a100_80gb_mig.node.json");
    const NO_GPU: &str = include_str!("../tests/fixtures/nvml/no_gpu.json");
    const NO_GPU_NODE: &str = include_str!("../tests/fixtures/nvml/no_gpu.node.json");

    fn probe(json: &str) -> FixtureProbe {
        FixtureProbe::from_json(json).unwrap()
    }

    #[test]
    fn h100_node_has_eight_gpus_in_one_nvlink_island() {
        let devices = probe(H100).devices().unwrap();
        let node = node_config("dgx01", Milli::from_units(224), 2_063_000, &devices).unwrap();
        let gpus = node.gpus.unwrap();
        assert_eq!(gpus.model, "h100");
        assert_eq!(gpus.count, 8);
        assert_eq!(gpus.memory_mib, 81559);
        assert_eq!(gpus.uuids.len(), 8);
        assert_eq!(gpus.uuids[0], "GPU-00000000-0000-4000-8000-000000000000");
        assert_eq!(gpus.pci_bus_ids[7], "00000000:DB:00.0");
        assert_eq!(gpus.nvlink_islands, vec![(0..8).collect::<Vec<u32>>()]);
        assert!(gpus.mig.is_empty());
    }

    #[test]
    fn h100_inventory_json_matches_its_snapshot() {
        let json = inventory_json(&probe(H100), "dgx01", Milli::from_units(224), 2_063_000);
        assert_eq!(json.unwrap(), H100_NODE.trim_end());
    }

    #[test]
    fn a100_mig_node_lists_seven_1g_10gb_slices() {
        let devices = probe(A100_MIG).devices().unwrap();
        assert!(devices[0].mig_enabled);
        let node = node_config("a100-mig", Milli::from_units(32), 257_000, &devices).unwrap();
        let gpus = node.gpus.unwrap();
        assert_eq!((gpus.model.as_str(), gpus.count), ("a100", 1));
        assert_eq!(gpus.memory_mib, 81920);
        assert_eq!(gpus.mig.len(), 7);
        for (slice, mig) in gpus.mig.iter().enumerate() {
            assert_eq!(mig.gpu, 0);
            assert_eq!(mig.slice, slice as u32);
            assert_eq!(mig.profile, "1g.10gb");
            assert_eq!(mig.memory_mib, 9728);
            assert!(mig.uuid.starts_with("MIG-"), "{}", mig.uuid);
        }
        assert!(gpus.nvlink_islands.is_empty());
    }

    #[test]
    fn a100_mig_inventory_json_matches_its_snapshot() {
        let json = inventory_json(&probe(A100_MIG), "a100-mig", Milli::from_units(32), 257_000);
        assert_eq!(json.unwrap(), A100_MIG_NODE.trim_end());
    }

    #[test]
    fn a_machine_without_gpus_gives_a_node_without_gpus() {
        let json = inventory_json(&probe(NO_GPU), "cpu01", Milli::from_units(16), 64_000);
        let json = json.unwrap();
        assert_eq!(json, NO_GPU_NODE.trim_end());
        assert!(!json.contains("gpus"));
    }

    #[test]
    fn fixtures_round_trip_through_json() {
        for json in [H100, A100_MIG, NO_GPU] {
            let probe = probe(json);
            assert_eq!(FixtureProbe::from_json(&probe.to_json()).unwrap(), probe);
        }
    }

    #[test]
    fn h100_health_samples_replay_an_xid_on_gpu_5() {
        let probe = probe(H100);
        let (events, state) = poll_health(&probe, "dgx01", &HealthState::new(8)).unwrap();
        assert!(events.is_empty());
        let (events, state) = poll_health(&probe, "dgx01", &state).unwrap();
        assert_eq!(
            events,
            [HealthEvent::GpuDown {
                node: "dgx01".to_string(),
                gpu: 5,
                reason: "xid 79".to_string()
            }]
        );
        // Then gpu 5 drops off the bus: already down, no second event.
        let (events, state) = poll_health(&probe, "dgx01", &state).unwrap();
        assert!(events.is_empty());
        assert_eq!(state.down_reason(5), Some("xid 79"));
        // The last sample repeats.
        let (events, state) = poll_health(&probe, "dgx01", &state).unwrap();
        assert!(events.is_empty());
        assert!(state.is_down(5));
    }

    #[test]
    fn without_samples_every_device_is_healthy() {
        let probe = probe(A100_MIG);
        let (events, state) = poll_health(&probe, "a", &HealthState::new(1)).unwrap();
        assert!(events.is_empty());
        assert!(!state.is_down(0));
    }

    #[test]
    fn record_takes_devices_and_one_sample() {
        let recorded = FixtureProbe::record(&probe(H100)).unwrap();
        assert_eq!(recorded.devices, probe(H100).devices);
        assert_eq!(recorded.health.len(), 1);
        assert_eq!(recorded.health[0].len(), 8);
    }
}
