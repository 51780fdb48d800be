//! Fixed-size resource vectors: the amounts a node has, uses or has free, with no heap and no
//! string keys, so the placement loops stay allocation-free.

use serde::{Deserialize, Serialize};

/// Most GPU devices one node may have.
pub const MAX_DEVICES: usize = 16;

/// Most cpus one node may have. With [`MAX_NODE_MEMORY_MIB`] it keeps the sums over a cluster
/// of millions of nodes inside `u64`.
pub const MAX_NODE_CPUS: u64 = 1 << 20;

/// Most memory one node may have, in MiB (one EiB).
pub const MAX_NODE_MEMORY_MIB: u64 = 1 << 40;

/// One device's capacity in thousandths: a whole device is 1000.
pub const DEVICE_MILLI: u16 = 1000;

/// Amounts on one node: cpus (thousandths), memory (MiB), each device's share (thousandths) and
/// a set of MIG slices (see [`crate::model::MigLayout`]).
///
/// The same type holds a capacity, a usage or a free amount. Slices are a set: adding is union,
/// subtracting is difference, and each slice is held whole or not at all.
///
/// ```
/// use gangway::model::NodeAmounts;
/// let cap = NodeAmounts::full(8_000, 16_000, 4);
/// let mut used = NodeAmounts::default();
/// used.cpu_milli = 2_000;
/// used.devices[1] = 1000;
/// let free = cap.minus(&used);
/// assert_eq!(free.cpu_milli, 6_000);
/// assert_eq!(free.whole_devices(4), 3);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct NodeAmounts {
    /// Cpus in thousandths.
    pub cpu_milli: u64,
    /// Memory in MiB.
    pub memory_mib: u64,
    /// Per device, thousandths of the device.
    pub devices: [u16; MAX_DEVICES],
    /// MIG slices, one bit per slice of the node's [`MigLayout`](crate::model::MigLayout).
    #[serde(default, skip_serializing_if = "no_slices")]
    pub mig: u128,
}

fn no_slices(mig: &u128) -> bool {
    *mig == 0
}

impl NodeAmounts {
    /// A full node: `devices` whole devices.
    pub fn full(cpu_milli: u64, memory_mib: u64, devices: usize) -> Self {
        let mut amounts = NodeAmounts {
            cpu_milli,
            memory_mib,
            devices: [0; MAX_DEVICES],
            mig: 0,
        };
        for d in amounts.devices.iter_mut().take(devices) {
            *d = DEVICE_MILLI;
        }
        amounts
    }

    /// `self − other`, saturating at zero in every dimension.
    pub fn minus(&self, other: &NodeAmounts) -> NodeAmounts {
        let mut out = *self;
        out.cpu_milli = self.cpu_milli.saturating_sub(other.cpu_milli);
        out.memory_mib = self.memory_mib.saturating_sub(other.memory_mib);
        for (o, d) in out.devices.iter_mut().zip(other.devices.iter()) {
            *o = o.saturating_sub(*d);
        }
        out.mig = self.mig & !other.mig;
        out
    }

    /// Adds `other` in place.
    pub fn add(&mut self, other: &NodeAmounts) {
        self.cpu_milli += other.cpu_milli;
        self.memory_mib += other.memory_mib;
        for (o, d) in self.devices.iter_mut().zip(other.devices.iter()) {
            *o = o.saturating_add(*d);
        }
        self.mig |= other.mig;
    }

    /// Subtracts `other` in place (saturating).
    pub fn sub(&mut self, other: &NodeAmounts) {
        *self = self.minus(other);
    }

    /// The per-dimension maximum of two amounts.
    pub fn max(&self, other: &NodeAmounts) -> NodeAmounts {
        let mut out = *self;
        out.cpu_milli = self.cpu_milli.max(other.cpu_milli);
        out.memory_mib = self.memory_mib.max(other.memory_mib);
        for (o, d) in out.devices.iter_mut().zip(other.devices.iter()) {
            *o = (*o).max(*d);
        }
        out.mig = self.mig | other.mig;
        out
    }

    /// True when every dimension of `self` is at least `other`'s.
    pub fn covers(&self, other: &NodeAmounts) -> bool {
        self.cpu_milli >= other.cpu_milli
            && self.memory_mib >= other.memory_mib
            && self
                .devices
                .iter()
                .zip(other.devices.iter())
                .all(|(a, b)| a >= b)
            && other.mig & !self.mig == 0
    }

    /// True when nothing is counted.
    pub fn is_zero(&self) -> bool {
        self.cpu_milli == 0
            && self.memory_mib == 0
            && self.mig == 0
            && self.devices.iter().all(|d| *d == 0)
    }

    /// How many of the first `count` devices are whole here (`self` is an available amount) and
    /// entirely unused in `used`: the whole devices of `self.minus(used)`, without computing it.
    ///
    /// ```
    /// use gangway::model::NodeAmounts;
    /// let available = NodeAmounts::full(8_000, 0, 4);
    /// let mut used = NodeAmounts::default();
    /// used.devices[1] = 500;
    /// assert_eq!(available.whole_devices_unused(&used, 4), 3);
    /// assert_eq!(available.minus(&used).whole_devices(4), 3);
    /// ```
    pub fn whole_devices_unused(&self, used: &NodeAmounts, count: usize) -> u32 {
        self.devices
            .iter()
            .zip(&used.devices)
            .take(count)
            .filter(|(a, u)| **a == DEVICE_MILLI && **u == 0)
            .count() as u32
    }

    /// Whether one task needing `cpu_milli`, `memory_mib` and `whole_gpus` whole devices (of
    /// the first `count`) fits in `self` (an available amount) less `used`, without computing
    /// the difference.
    ///
    /// ```
    /// use gangway::model::NodeAmounts;
    /// let available = NodeAmounts::full(8_000, 1_000, 2);
    /// let mut used = NodeAmounts::full(6_000, 0, 0);
    /// used.devices[0] = 1;
    /// assert!(available.fits_task(&used, 2, (2_000, 1_000, 1)));
    /// assert!(!available.fits_task(&used, 2, (2_000, 1_000, 2)));
    /// assert!(!available.fits_task(&used, 2, (2_001, 0, 0)));
    /// ```
    pub fn fits_task(
        &self,
        used: &NodeAmounts,
        count: usize,
        (cpu_milli, memory_mib, whole_gpus): (u64, u64, u32),
    ) -> bool {
        self.cpu_milli.saturating_sub(used.cpu_milli) >= cpu_milli
            && self.memory_mib.saturating_sub(used.memory_mib) >= memory_mib
            && (whole_gpus == 0 || self.whole_devices_unused(used, count) >= whole_gpus)
    }

    /// How many of the first `count` devices are entirely free (as a free amount: 1000).
    pub fn whole_devices(&self, count: usize) -> u32 {
        self.devices
            .iter()
            .take(count)
            .filter(|d| **d == DEVICE_MILLI)
            .count() as u32
    }
}
