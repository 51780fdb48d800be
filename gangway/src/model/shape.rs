//! Compiled task groups: what one task of a group needs, in the engine's own units.

use serde::{Deserialize, Serialize};

use crate::model::ids::MigProfileId;
use crate::model::job::PlacementMode;

/// The GPUs one task needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum GpuNeed {
    /// No GPU.
    None,
    /// This many whole devices.
    Whole(u16),
    /// A shareable fraction of one device, in thousandths (1..=999).
    Fraction(u16),
    /// One MIG slice of this profile, held exclusively.
    Mig(MigProfileId),
}

impl GpuNeed {
    /// The device share one task asks for, in thousandths of a device: 1000 per whole device,
    /// the fraction itself, 0 without a GPU or for a MIG slice (slices are counted apart).
    ///
    /// ```
    /// use gangway::model::GpuNeed;
    /// assert_eq!(GpuNeed::Whole(2).device_milli(), 2_000);
    /// assert_eq!(GpuNeed::Fraction(250).device_milli(), 250);
    /// assert_eq!(GpuNeed::None.device_milli(), 0);
    /// ```
    pub fn device_milli(self) -> u64 {
        match self {
            GpuNeed::None | GpuNeed::Mig(_) => 0,
            GpuNeed::Whole(k) => u64::from(k) * 1000,
            GpuNeed::Fraction(f) => u64::from(f),
        }
    }
}

/// A set of GPU models as a bitmask over interned model ids; empty means any model.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct ModelMask(pub u64);

impl ModelMask {
    /// Any model.
    pub const ANY: ModelMask = ModelMask(0);

    /// Whether model `index` is allowed.
    pub fn allows(self, index: u32) -> bool {
        self.0 == 0 || self.0 & (1u64 << index) != 0
    }
}

/// One task group as the placement code sees it.
///
/// Built outside gangway with [`TaskShape::new`] and the `with_*` methods (it is
/// `#[non_exhaustive]`).
///
/// ```
/// use gangway::PlacementMode;
/// use gangway::model::{GpuNeed, ModelMask, TaskShape};
/// let shape = TaskShape::new(4_000, 16_384, GpuNeed::Whole(2))
///     .with_count(4)
///     .with_min_count(2)
///     .with_models(ModelMask(0b1))
///     .with_mode(PlacementMode::Spread);
/// assert_eq!((shape.count, shape.min_count, shape.whole_gpus()), (4, 2, 2));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskShape {
    /// Cpus per task, thousandths.
    pub cpu_milli: u64,
    /// Memory per task, MiB.
    pub memory_mib: u64,
    /// GPUs per task.
    pub gpu: GpuNeed,
    /// Allowed GPU models.
    pub models: ModelMask,
    /// Tasks wanted.
    pub count: u32,
    /// Fewest tasks accepted.
    pub min_count: u32,
    /// Layout over nodes.
    pub mode: PlacementMode,
}

impl TaskShape {
    /// One task of `cpu_milli` thousandths of a cpu, `memory_mib` MiB and `gpu`, on any GPU
    /// model, packed ([`PlacementMode::Pack`]).
    pub fn new(cpu_milli: u64, memory_mib: u64, gpu: GpuNeed) -> Self {
        TaskShape {
            cpu_milli,
            memory_mib,
            gpu,
            models: ModelMask::ANY,
            count: 1,
            min_count: 1,
            mode: PlacementMode::Pack,
        }
    }

    /// The same shape accepting as few as `min_count` tasks (an elastic gang; at most
    /// [`TaskShape::count`]).
    pub fn with_min_count(mut self, min_count: u32) -> Self {
        self.min_count = min_count;
        self
    }

    /// The same shape on the GPU models of `models` only.
    pub fn with_models(mut self, models: ModelMask) -> Self {
        self.models = models;
        self
    }

    /// The same shape laid out over nodes by `mode`.
    pub fn with_mode(mut self, mode: PlacementMode) -> Self {
        self.mode = mode;
        self
    }

    /// Whole devices one task needs (0 for fractions).
    pub fn whole_gpus(&self) -> u32 {
        match self.gpu {
            GpuNeed::Whole(k) => u32::from(k),
            _ => 0,
        }
    }

    /// The same shape asking for exactly `count` tasks (used to plan elastic gangs at their
    /// minimum).
    pub fn with_count(mut self, count: u32) -> Self {
        self.count = count;
        self.min_count = count;
        self
    }
}
