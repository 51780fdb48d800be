//! MIG slices of a node: which MIG devices (NVIDIA Multi-Instance GPU) its GPUs are carved into.
//!
//! A node's slices are numbered by *bit*: their position in the node's [`MigLayout`], sorted by
//! GPU index then slice index. A set of slices is a `u128` mask over those bits, kept in
//! [`NodeAmounts::mig`](crate::model::NodeAmounts::mig) beside cpus, memory and
//! devices, so capacity, usage, backfill timelines and reservations treat slices like any other
//! resource. A GPU with slices is in MIG mode: it has no whole-device capacity, so whole and
//! fractional GPU tasks never land on it.
//!
//! ```
//! use gangway::model::{MigLayout, MigProfileId, MigSlice};
//! let small = MigProfileId(0);
//! let big = MigProfileId(1);
//! let layout = MigLayout::new(vec![
//!     MigSlice::new(1, 0, big, 3),
//!     MigSlice::new(0, 0, small, 1),
//!     MigSlice::new(0, 1, small, 1),
//!     MigSlice::new(0, 2, big, 3),
//! ]);
//! assert_eq!(layout.slices[0], MigSlice::new(0, 0, small, 1)); // sorted
//! assert_eq!(layout.all(), 0b1111);
//! assert_eq!(layout.profile_mask(small), 0b0011);
//! assert_eq!(layout.gpu_mask(1), 0b1000);
//! assert!(layout.has_gpu(0) && !layout.has_gpu(2));
//! // Slices 0 and 3 billed as device shares: 1/7 of GPU 0 and 3/7 of GPU 1.
//! let mut held = gangway::model::NodeAmounts::default();
//! held.mig = 0b1001;
//! layout.add_device_shares(&mut held);
//! assert_eq!(held.devices[..2], [142, 428]);
//! ```

use serde::{Deserialize, Serialize};

use crate::model::ids::MigProfileId;
use crate::model::resources::{DEVICE_MILLI, NodeAmounts};

/// Compute slices of one GPU (the `7` of `7g.80gb`).
pub const GPU_COMPUTE_SLICES: u32 = 7;

/// Most MIG slices one node may have: one bit each in a `u128` (7 slices × 16 GPUs fit).
pub(crate) const MAX_MIG_SLICES: usize = 128;

/// One MIG device: the GPU it is carved from, its index under that GPU and its profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[non_exhaustive]
pub struct MigSlice {
    /// Index of the GPU.
    pub gpu: u32,
    /// Index of the slice under that GPU.
    pub slice: u32,
    /// Its profile.
    pub profile: MigProfileId,
    /// Its compute slices, of the GPU's seven (the `3` of `3g.40gb`).
    #[serde(default)]
    pub compute: u32,
}

/// A node's MIG slices, sorted by GPU then slice; at most 128 (`MAX_MIG_SLICES`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
#[non_exhaustive]
pub struct MigLayout {
    /// The slices, bit `i` being `slices[i]`.
    pub slices: Vec<MigSlice>,
}

impl MigSlice {
    /// Slice `slice` of GPU `gpu`, of `profile`, with `compute` of the GPU's seven compute
    /// slices.
    pub fn new(gpu: u32, slice: u32, profile: MigProfileId, compute: u32) -> Self {
        MigSlice {
            gpu,
            slice,
            profile,
            compute,
        }
    }
}

impl MigLayout {
    /// The layout of `slices`, sorted by GPU then slice (bit `i` is the `i`-th of them).
    pub fn new(mut slices: Vec<MigSlice>) -> Self {
        slices.sort();
        MigLayout { slices }
    }

    /// True when no GPU of the node is in MIG mode.
    pub fn is_empty(&self) -> bool {
        self.slices.is_empty()
    }

    /// Every slice.
    pub fn all(&self) -> u128 {
        self.mask(|_| true)
    }

    /// The slices of `profile`.
    pub fn profile_mask(&self, profile: MigProfileId) -> u128 {
        self.mask(|s| s.profile == profile)
    }

    /// The slices carved from GPU `gpu`.
    pub fn gpu_mask(&self, gpu: u32) -> u128 {
        self.mask(|s| s.gpu == gpu)
    }

    /// Whether GPU `gpu` is in MIG mode (has slices).
    pub fn has_gpu(&self, gpu: u32) -> bool {
        self.slices.iter().any(|s| s.gpu == gpu)
    }

    /// The slices in `mask`, lowest bit first.
    pub fn in_mask(&self, mask: u128) -> impl Iterator<Item = &MigSlice> {
        self.slices
            .iter()
            .take(MAX_MIG_SLICES)
            .enumerate()
            .filter(move |(bit, _)| mask & (1u128 << bit) != 0)
            .map(|(_, s)| s)
    }

    /// Adds to `amounts.devices` the device share its slices stand for: a slice's compute
    /// slices over the GPU's seven, in thousandths (for billing; placement never does this).
    pub fn add_device_shares(&self, amounts: &mut NodeAmounts) {
        let held = amounts.mig;
        for s in self.in_mask(held) {
            if let Some(device) = amounts.devices.get_mut(s.gpu as usize) {
                let share = s.compute.min(GPU_COMPUTE_SLICES) * u32::from(DEVICE_MILLI)
                    / GPU_COMPUTE_SLICES;
                *device = device.saturating_add(share as u16);
            }
        }
    }

    fn mask(&self, keep: impl Fn(&MigSlice) -> bool) -> u128 {
        self.slices
            .iter()
            .take(MAX_MIG_SLICES)
            .enumerate()
            .filter(|(_, s)| keep(s))
            .fold(0, |mask, (bit, _)| mask | (1u128 << bit))
    }
}
