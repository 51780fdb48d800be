//! Fragmentation-aware placement of GPU tasks (FGD, Weng et al., USENIX ATC 2023): the
//! measure is [`ShapeMix::fragmentation`].

use serde::{Deserialize, Serialize};

use crate::model::node::Node;
use crate::model::resources::{DEVICE_MILLI, NodeAmounts};
use crate::model::shape::{GpuNeed, ModelMask, TaskShape};

/// Most distinct shapes the mix tracks; later new shapes are not added (their tasks still count
/// once a tracked shape matches).
pub(crate) const MAX_MIX_SHAPES: usize = 256;

/// Total weight above which every weight is halved, so old shapes fade and sums stay small.
const MAX_MIX_WEIGHT: u64 = 1 << 32;

/// One tracked shape and the GPU thousandths its tasks asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct MixShape {
    gpu: GpuNeed,
    cpu_milli: u64,
    memory_mib: u64,
    models: ModelMask,
    weight: u64,
}

impl MixShape {
    fn key(&self) -> (u8, u32, u64, u64, u64) {
        let (kind, amount) = match self.gpu {
            GpuNeed::None => (0, 0),
            GpuNeed::Fraction(f) => (1, u32::from(f)),
            GpuNeed::Whole(k) => (2, u32::from(k)),
            GpuNeed::Mig(profile) => (3, profile.0),
        };
        (kind, amount, self.cpu_milli, self.memory_mib, self.models.0)
    }
}

/// The task shapes seen so far, weighted by task count: the workload fragmentation is measured
/// against.
///
/// Fragmentation-aware placement of GPU tasks, after Weng et al., "Beware of Fragmentation:
/// Scheduling GPU-Sharing Workloads with Fragmentation Gradient Descent" (USENIX ATC 2023).
/// The scheduler keeps a mix of the GPU tasks it has seen submitted, by shape (cpus,
/// memory, GPU need, models), each weighted by the GPU share its tasks asked for. A node's
/// *fragmentation* is the free GPU share the mix could not use there:
/// - per shape (FGD's measure), every free GPU thousandth of the node when a task of the shape
///   does not fit at all (cpus, memory or model lacking), else the free share of the devices too
///   small for it (devices with less than its fraction free; for whole GPUs, partly used devices,
///   or every device when too few are whole), times the shape's weight;
/// - plus, with the weight of the whole mix, the free GPU share beyond what the node's free cpus
///   (or memory) could drive at the mix's own ratio of GPU to cpus (or memory): GPUs stranded by
///   a node's cpus or memory running out first.
///
/// A task goes where it raises fragmentation the least, and on the device that does.
///
/// ```
/// use gangway::model::{GpuNeed, ModelId, Node, NodeAmounts, TaskShape};
/// use gangway::placement::ShapeMix;
/// let shape = |gpu| TaskShape::new(1_000, 1_000, gpu);
/// let mut mix = ShapeMix::default();
/// mix.record(&shape(GpuNeed::Fraction(500)), 1);
/// let node = Node::new("n", NodeAmounts::full(8_000, 64_000, 2), 2, Some(ModelId(0)));
/// let mut free = node.capacity;
/// free.devices[1] = 300; // 0.3 of device 1 is free: too little for a half
/// // 300 thousandths lost, times the half's weight (500); 8 free cpus drive 4 GPUs: none stranded.
/// assert_eq!(mix.fragmentation(&node, &free), 300 * 500);
/// ```
///
/// ```
/// use gangway::model::{GpuNeed, TaskShape};
/// use gangway::placement::ShapeMix;
/// let shape = TaskShape::new(1_000, 10, GpuNeed::Whole(1)).with_count(4);
/// let mut mix = ShapeMix::default();
/// assert!(mix.is_empty());
/// mix.record(&shape, 4);
/// assert!(!mix.is_empty());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShapeMix {
    /// Sorted by key, so shapes of one GPU need are adjacent.
    shapes: Vec<MixShape>,
    total: u64,
    /// Cpu thousandths and memory MiB the recorded tasks ask for, halved with the weights.
    cpu: u64,
    memory: u64,
}

impl ShapeMix {
    /// The weight one task of `shape` adds to the mix, the GPU share it asks for; `None` for
    /// a shape the mix does not track ([`ShapeMix::record`]).
    pub(crate) fn task_weight(shape: &TaskShape) -> Option<u64> {
        match shape.gpu {
            GpuNeed::Fraction(f) => Some(u64::from(f)),
            GpuNeed::Whole(k) => Some(u64::from(k) * u64::from(DEVICE_MILLI)),
            GpuNeed::None | GpuNeed::Mig(_) => None,
        }
    }

    /// Whether nothing was recorded (placement is then plain best fit).
    pub fn is_empty(&self) -> bool {
        self.shapes.is_empty()
    }

    /// Counts `tasks` tasks of `shape`, weighted by the GPU share they ask for (a shape needing
    /// no GPU is not tracked: leaving it no room strands no GPU; nor is one needing a MIG slice:
    /// slices are fixed partitions that no placement fragments).
    pub fn record(&mut self, shape: &TaskShape, tasks: u32) {
        let Some(per_task) = Self::task_weight(shape) else {
            return;
        };
        let entry = MixShape {
            gpu: shape.gpu,
            cpu_milli: shape.cpu_milli,
            memory_mib: shape.memory_mib,
            models: shape.models,
            weight: u64::from(tasks) * per_task,
        };
        match self
            .shapes
            .binary_search_by_key(&entry.key(), MixShape::key)
        {
            Ok(at) => self.shapes[at].weight += entry.weight,
            Err(_) if self.shapes.len() >= MAX_MIX_SHAPES => return,
            Err(at) => self.shapes.insert(at, entry),
        }
        self.total += entry.weight;
        self.cpu = self
            .cpu
            .saturating_add(u64::from(tasks).saturating_mul(shape.cpu_milli));
        self.memory = self
            .memory
            .saturating_add(u64::from(tasks).saturating_mul(shape.memory_mib));
        if self.total > MAX_MIX_WEIGHT {
            self.cpu = self.cpu.div_ceil(2);
            self.memory = self.memory.div_ceil(2);
            self.total = 0;
            for s in &mut self.shapes {
                s.weight = s.weight.div_ceil(2);
                self.total += s.weight;
            }
        }
    }

    /// The weighted free GPU share (thousandths × weight) that the mix cannot use on `node`
    /// when `free` is free there.
    pub fn fragmentation(&self, node: &Node, free: &NodeAmounts) -> u64 {
        let devices = &free.devices[..node.gpu_count];
        let total: u64 = devices.iter().map(|d| u64::from(*d)).sum();
        if total == 0 {
            return 0;
        }
        let mut sum = 0;
        let mut last: Option<(GpuNeed, u64)> = None;
        for shape in &self.shapes {
            let fits = free.cpu_milli >= shape.cpu_milli
                && free.memory_mib >= shape.memory_mib
                && node.gpu_model.is_some_and(|m| shape.models.allows(m.0));
            let lost = if !fits {
                total
            } else {
                match last {
                    Some((gpu, lost)) if gpu == shape.gpu => lost,
                    _ => {
                        let lost = gpu_lost(devices, total, shape.gpu);
                        last = Some((shape.gpu, lost));
                        lost
                    }
                }
            };
            sum += lost * shape.weight;
        }
        sum + self.stranded(free, total) * self.total
    }

    /// Free GPU thousandths beyond what the free cpus or memory can drive at the mix's ratio of
    /// GPU to cpus and to memory.
    fn stranded(&self, free: &NodeAmounts, total: u64) -> u64 {
        let driven = |amount: u64, asked: u64| {
            let driven = u128::from(amount) * u128::from(self.total) / u128::from(asked.max(1));
            u64::try_from(driven).unwrap_or(u64::MAX)
        };
        total
            .saturating_sub(driven(free.cpu_milli, self.cpu))
            .max(total.saturating_sub(driven(free.memory_mib, self.memory)))
    }
}

/// Free GPU thousandths among `devices` too small for a task needing `gpu`: devices with less
/// than its fraction free; for whole GPUs, partly used devices, or all when too few are whole.
fn gpu_lost(devices: &[u16], total: u64, gpu: GpuNeed) -> u64 {
    let whole = || devices.iter().filter(|d| **d == DEVICE_MILLI).count() as u64;
    match gpu {
        GpuNeed::None | GpuNeed::Mig(_) => 0,
        GpuNeed::Fraction(f) => devices
            .iter()
            .filter(|d| **d < f)
            .map(|d| u64::from(*d))
            .sum(),
        GpuNeed::Whole(k) if whole() < u64::from(k) => total,
        GpuNeed::Whole(_) => total - whole() * u64::from(DEVICE_MILLI),
    }
}
