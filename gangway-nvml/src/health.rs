//! The health poll: health samples in, `gpu_down` / `gpu_up` events out.
//!
//! A GPU goes down when it is lost (missing from a sample, or listed as unreachable), when the
//! driver reports a critical XID error for it that is not an application's fault, or when its
//! count of uncorrectable ECC errors rises. A lost GPU comes back up as soon as a sample shows it
//! reachable again. A GPU downed by an XID or ECC error stays down (the hardware wants a reset)
//! until one of: it drops out of a sample and comes back (it was reset or re-enumerated), its
//! volatile ECC count falls (a reset or driver reload zeroed it), or the host calls
//! [`HealthState::clear`] after an operator has dealt with it.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::probe::{DeviceHealth, GpuProbe, ProbeError};
use gangway::Event;

/// XID errors an application causes (graphics engine exception, GPU memory page fault, GPU
/// stopped processing, preemptive cleanup, video processor exception): the GPU stays healthy, as
/// NVIDIA's Kubernetes device plugin treats them.
pub const APPLICATION_XIDS: [u64; 5] = [13, 31, 43, 45, 68];

/// A device-level change for the engine, in the style of docs/protocol.md: `{"type":"gpu_down",
/// "node":NAME,"gpu":IDX,"reason":…}` and `{"type":"gpu_up","node":NAME,"gpu":IDX}`. The
/// engine's own `gpu_down` event has no `reason`; a host logs it and passes the rest on.
///
/// ```
/// use gangway_nvml::HealthEvent;
/// let down = HealthEvent::GpuDown { node: "n1".into(), gpu: 3, reason: "xid 79".into() };
/// assert_eq!(serde_json::to_string(&down).unwrap(),
///     r#"{"type":"gpu_down","node":"n1","gpu":3,"reason":"xid 79"}"#);
/// let up = HealthEvent::GpuUp { node: "n1".into(), gpu: 3 };
/// assert_eq!(serde_json::to_string(&up).unwrap(), r#"{"type":"gpu_up","node":"n1","gpu":3}"#);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum HealthEvent {
    /// The GPU must take no new work; jobs on it lose it.
    GpuDown {
        /// Node name.
        node: String,
        /// Device index.
        gpu: u32,
        /// Why: `lost`, `lost: <driver reason>`, `xid 79`, `uncorrectable ecc errors: 2`, or
        /// several of these joined by `; `.
        reason: String,
    },
    /// The GPU is healthy again.
    GpuUp {
        /// Node name.
        node: String,
        /// Device index.
        gpu: u32,
    },
}

/// The engine's event for a health change (the reason, which the engine does not take, is
/// dropped: log it first).
///
/// ```
/// use gangway::Event;
/// use gangway_nvml::HealthEvent;
/// let down = HealthEvent::GpuDown { node: "n1".into(), gpu: 3, reason: "xid 79".into() };
/// assert_eq!(Event::from(down), Event::GpuDown { node: "n1".into(), gpu: 3 });
/// ```
impl From<HealthEvent> for Event {
    fn from(event: HealthEvent) -> Event {
        match event {
            HealthEvent::GpuDown { node, gpu, .. } => Event::GpuDown { node, gpu },
            HealthEvent::GpuUp { node, gpu } => Event::GpuUp { node, gpu },
        }
    }
}

/// What the previous polls learnt: which GPUs are known, which are down and why, and each GPU's
/// last uncorrectable ECC count. Start from [`HealthState::new`] with the node's GPU count.
///
/// ```
/// use gangway_nvml::{DeviceHealth, HealthEvent, HealthState};
/// let state = HealthState::new(2);
/// let ok = |i| DeviceHealth { index: i, ..DeviceHealth::default() };
/// // GPU 1 is missing from the sample: it is lost.
/// let (events, state) = state.apply("n1", &[ok(0)]);
/// assert_eq!(events, [HealthEvent::GpuDown { node: "n1".into(), gpu: 1, reason: "lost".into() }]);
/// assert_eq!(state.down_reason(1), Some("lost"));
/// let (events, state) = state.apply("n1", &[ok(0), ok(1)]);
/// assert_eq!(events, [HealthEvent::GpuUp { node: "n1".into(), gpu: 1 }]);
/// assert!(!state.is_down(1));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HealthState {
    devices: BTreeMap<u32, DeviceStatus>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct DeviceStatus {
    /// Reachable in the last sample.
    present: bool,
    /// Down, and why.
    down: Option<String>,
    /// The host asked for an XID or ECC down to be lifted at the next poll.
    cleared: bool,
    /// Last uncorrectable ECC count seen while present; `None`: unknown, taken as 0.
    ecc: Option<u64>,
}

impl HealthState {
    /// A state that expects GPUs `0..gpu_count`, all up: one missing from the first sample is
    /// reported lost. ([`HealthState::default`] expects none; GPUs are then learnt as they
    /// appear.)
    ///
    /// ```
    /// use gangway_nvml::HealthState;
    /// let state = HealthState::new(8);
    /// assert!(!state.is_down(7));
    /// ```
    pub fn new(gpu_count: u32) -> HealthState {
        let devices = (0..gpu_count)
            .map(|gpu| {
                let status = DeviceStatus {
                    present: true,
                    ..DeviceStatus::default()
                };
                (gpu, status)
            })
            .collect();
        HealthState { devices }
    }

    /// True when the GPU is down.
    ///
    /// ```
    /// use gangway_nvml::HealthState;
    /// assert!(!HealthState::new(1).is_down(0));
    /// ```
    pub fn is_down(&self, gpu: u32) -> bool {
        self.down_reason(gpu).is_some()
    }

    /// Why the GPU is down (the reason its `gpu_down` event gave), or `None` when it is up or
    /// unknown.
    ///
    /// ```
    /// use gangway_nvml::{DeviceHealth, HealthState};
    /// let sample = [DeviceHealth { index: 0, xids: vec![48], ..DeviceHealth::default() }];
    /// let (_, state) = HealthState::new(1).apply("n1", &sample);
    /// assert_eq!(state.down_reason(0), Some("xid 48"));
    /// ```
    pub fn down_reason(&self, gpu: u32) -> Option<&str> {
        self.devices.get(&gpu).and_then(|s| s.down.as_deref())
    }

    /// Lifts an XID or ECC down at the next poll (an operator reset the GPU or judged the error
    /// harmless). The next [`HealthState::apply`] reports `gpu_up` unless that sample shows the
    /// GPU lost or with a new error. Returns false when the GPU is not down.
    ///
    /// ```
    /// use gangway_nvml::{DeviceHealth, HealthEvent, HealthState};
    /// let sample = [DeviceHealth { index: 0, xids: vec![79], ..DeviceHealth::default() }];
    /// let (_, mut state) = HealthState::new(1).apply("n1", &sample);
    /// assert!(state.clear(0));
    /// let (events, _) = state.apply("n1", &[DeviceHealth { index: 0, ..DeviceHealth::default() }]);
    /// assert_eq!(events, [HealthEvent::GpuUp { node: "n1".into(), gpu: 0 }]);
    /// ```
    pub fn clear(&mut self, gpu: u32) -> bool {
        match self.devices.get_mut(&gpu) {
            Some(status) if status.down.is_some() => {
                status.cleared = true;
                true
            }
            _ => false,
        }
    }

    /// Takes one health sample: the events it implies (in GPU index order) and the new state.
    /// A sample lists each GPU once; should an index repeat, its last entry counts.
    ///
    /// ```
    /// use gangway_nvml::{DeviceHealth, HealthEvent, HealthState};
    /// let sample = [DeviceHealth { index: 0, ecc_uncorrectable: Some(2), ..DeviceHealth::default() }];
    /// let (events, _) = HealthState::new(1).apply("n1", &sample);
    /// assert_eq!(events, [HealthEvent::GpuDown { node: "n1".into(), gpu: 0,
    ///     reason: "uncorrectable ecc errors: 2".into() }]);
    /// ```
    pub fn apply(&self, node: &str, sample: &[DeviceHealth]) -> (Vec<HealthEvent>, HealthState) {
        let sample: BTreeMap<u32, &DeviceHealth> = sample.iter().map(|h| (h.index, h)).collect();
        let gpus: BTreeSet<u32> = self.devices.keys().chain(sample.keys()).copied().collect();
        let mut events = Vec::new();
        let mut next = HealthState::default();
        for gpu in gpus {
            let before = self.devices.get(&gpu).cloned().unwrap_or_default();
            let after = step(&before, sample.get(&gpu).copied());
            match (&before.down, &after.down) {
                (None, Some(reason)) => events.push(HealthEvent::GpuDown {
                    node: node.to_string(),
                    gpu,
                    reason: reason.clone(),
                }),
                (Some(_), None) => events.push(HealthEvent::GpuUp {
                    node: node.to_string(),
                    gpu,
                }),
                _ => {}
            }
            next.devices.insert(gpu, after);
        }
        (events, next)
    }
}

/// One GPU's next status from its previous status and its sample entry (`None`: missing).
fn step(before: &DeviceStatus, entry: Option<&DeviceHealth>) -> DeviceStatus {
    let entry = match entry {
        None => return lost(before, "lost".to_string()),
        Some(DeviceHealth {
            lost: Some(why), ..
        }) => return lost(before, format!("lost: {why}")),
        Some(entry) => entry,
    };
    let mut causes = Vec::new();
    let xids: Vec<String> = entry
        .xids
        .iter()
        .filter(|x| !APPLICATION_XIDS.contains(x))
        .map(u64::to_string)
        .collect();
    if !xids.is_empty() {
        causes.push(format!("xid {}", xids.join(", ")));
    }
    let baseline = before.ecc.unwrap_or(0);
    let reset = matches!(entry.ecc_uncorrectable, Some(count) if count < baseline);
    if let Some(count) = entry.ecc_uncorrectable.filter(|&count| count > baseline) {
        causes.push(format!("uncorrectable ecc errors: {count}"));
    }
    let still_down = before.present && !before.cleared && !reset;
    let fresh = (!causes.is_empty()).then(|| causes.join("; "));
    let down = match (&before.down, fresh) {
        (Some(old), Some(_)) => Some(old.clone()),
        (Some(old), None) if still_down => Some(old.clone()),
        (_, fresh) => fresh,
    };
    DeviceStatus {
        present: true,
        down,
        cleared: false,
        ecc: entry.ecc_uncorrectable.or(before.ecc),
    }
}

/// The status of a GPU found lost: down (keeping an earlier reason), and its ECC baseline
/// forgotten so that a GPU that comes back is judged afresh.
fn lost(before: &DeviceStatus, reason: String) -> DeviceStatus {
    DeviceStatus {
        present: false,
        down: before.down.clone().or(Some(reason)),
        cleared: false,
        ecc: None,
    }
}

/// Takes a health sample from `probe` and applies it to `previous`
/// ([`HealthState::apply`]). A failed probe is returned as the error and changes nothing: a
/// driver that cannot be asked says nothing about the GPUs.
///
/// ```
/// use gangway_nvml::{poll_health, DeviceHealth, FixtureProbe, HealthEvent, HealthState};
/// let probe = FixtureProbe::new(Vec::new(), vec![vec![DeviceHealth { index: 0, ..Default::default() }]]);
/// let (events, state) = poll_health(&probe, "n1", &HealthState::new(2)).unwrap();
/// assert_eq!(events, [HealthEvent::GpuDown { node: "n1".into(), gpu: 1, reason: "lost".into() }]);
/// assert!(state.is_down(1));
/// ```
pub fn poll_health(
    probe: &dyn GpuProbe,
    node: &str,
    previous: &HealthState,
) -> Result<(Vec<HealthEvent>, HealthState), ProbeError> {
    Ok(previous.apply(node, &probe.health()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(index: u32) -> DeviceHealth {
        DeviceHealth {
            index,
            ..DeviceHealth::default()
        }
    }

    fn with_xids(index: u32, xids: &[u64]) -> DeviceHealth {
        DeviceHealth {
            xids: xids.to_vec(),
            ..ok(index)
        }
    }

    fn with_ecc(index: u32, count: u64) -> DeviceHealth {
        DeviceHealth {
            ecc_uncorrectable: Some(count),
            ..ok(index)
        }
    }

    fn down(gpu: u32, reason: &str) -> HealthEvent {
        HealthEvent::GpuDown {
            node: "n".to_string(),
            gpu,
            reason: reason.to_string(),
        }
    }

    fn up(gpu: u32) -> HealthEvent {
        HealthEvent::GpuUp {
            node: "n".to_string(),
            gpu,
        }
    }

    #[test]
    fn healthy_samples_give_no_events() {
        let (events, state) = HealthState::new(2).apply("n", &[ok(0), ok(1)]);
        assert!(events.is_empty());
        let (events, _) = state.apply("n", &[ok(0), ok(1)]);
        assert!(events.is_empty());
    }

    #[test]
    fn a_lost_device_goes_down_once_and_comes_back_up() {
        let state = HealthState::new(3);
        let (events, state) = state.apply("n", &[ok(0), ok(2)]);
        assert_eq!(events, [down(1, "lost")]);
        let (events, state) = state.apply("n", &[ok(0), ok(2)]);
        assert!(events.is_empty(), "already down: no repeat");
        let (events, state) = state.apply("n", &[ok(0), ok(1), ok(2)]);
        assert_eq!(events, [up(1)]);
        assert!(!state.is_down(1));
    }

    #[test]
    fn an_unreachable_device_is_lost_with_the_driver_reason() {
        let unreachable = DeviceHealth {
            lost: Some("GPU is lost".to_string()),
            ..ok(0)
        };
        let (events, _) = HealthState::new(1).apply("n", &[unreachable]);
        assert_eq!(events, [down(0, "lost: GPU is lost")]);
    }

    #[test]
    fn a_critical_xid_downs_the_device_until_it_is_reset() {
        let (events, state) = HealthState::new(2).apply("n", &[ok(0), with_xids(1, &[79])]);
        assert_eq!(events, [down(1, "xid 79")]);
        // A clean sample does not lift it.
        let (events, state) = state.apply("n", &[ok(0), ok(1)]);
        assert!(events.is_empty());
        assert_eq!(state.down_reason(1), Some("xid 79"));
        // The GPU drops out (reset) and comes back: up.
        let (events, state) = state.apply("n", &[ok(0)]);
        assert!(events.is_empty(), "already down");
        let (events, _) = state.apply("n", &[ok(0), ok(1)]);
        assert_eq!(events, [up(1)]);
    }

    #[test]
    fn application_xids_leave_the_device_up() {
        let (events, state) = HealthState::new(1).apply("n", &[with_xids(0, &[13, 31, 43])]);
        assert!(events.is_empty());
        assert!(!state.is_down(0));
        let (events, _) = state.apply("n", &[with_xids(0, &[13, 48])]);
        assert_eq!(events, [down(0, "xid 48")]);
    }

    #[test]
    fn several_causes_are_joined_in_the_reason() {
        let entry = DeviceHealth {
            xids: vec![48, 94],
            ecc_uncorrectable: Some(1),
            ..ok(0)
        };
        let (events, _) = HealthState::new(1).apply("n", &[entry]);
        assert_eq!(events, [down(0, "xid 48, 94; uncorrectable ecc errors: 1")]);
    }

    #[test]
    fn a_rising_ecc_count_downs_the_device_and_a_reset_count_lifts_it() {
        let (events, state) = HealthState::new(1).apply("n", &[with_ecc(0, 0)]);
        assert!(events.is_empty());
        let (events, state) = state.apply("n", &[with_ecc(0, 2)]);
        assert_eq!(events, [down(0, "uncorrectable ecc errors: 2")]);
        let (events, state) = state.apply("n", &[with_ecc(0, 2)]);
        assert!(events.is_empty(), "no new errors, still down");
        assert!(state.is_down(0));
        let (events, state) = state.apply("n", &[with_ecc(0, 0)]);
        assert_eq!(events, [up(0)]);
        // A sample without the counter keeps the last one as the baseline.
        let (events, state) = state.apply("n", &[ok(0)]);
        assert!(events.is_empty());
        let (events, _) = state.apply("n", &[with_ecc(0, 1)]);
        assert_eq!(events, [down(0, "uncorrectable ecc errors: 1")]);
    }

    #[test]
    fn clear_lifts_a_down_at_the_next_poll_unless_a_new_error_arrives() {
        let (_, mut state) = HealthState::new(2).apply("n", &[with_xids(0, &[79]), ok(1)]);
        assert!(!state.clear(1), "gpu 1 is up");
        assert!(!state.clear(7), "gpu 7 is unknown");
        assert!(state.clear(0));
        let (events, mut state) = state.clone().apply("n", &[with_xids(0, &[79]), ok(1)]);
        assert!(events.is_empty(), "a new xid keeps it down");
        assert!(state.clear(0));
        let (events, _) = state.apply("n", &[ok(0), ok(1)]);
        assert_eq!(events, [up(0)]);
    }

    #[test]
    fn unknown_devices_are_learnt_and_events_come_in_index_order() {
        let state = HealthState::default();
        let (events, state) = state.apply("n", &[with_xids(5, &[79]), with_xids(2, &[79])]);
        assert_eq!(events, [down(2, "xid 79"), down(5, "xid 79")]);
        let (events, _) = state.apply("n", &[]);
        assert!(events.is_empty(), "both already down");
    }

    #[test]
    fn a_lost_device_keeps_its_earlier_reason() {
        let (_, state) = HealthState::new(1).apply("n", &[with_xids(0, &[79])]);
        let (events, state) = state.apply("n", &[]);
        assert!(events.is_empty());
        assert_eq!(state.down_reason(0), Some("xid 79"));
    }
}
