//! How many tasks of a shape fit in a free amount, and which devices they take.

use crate::model::node::Node;
use crate::model::resources::{DEVICE_MILLI, NodeAmounts};
use crate::model::shape::{GpuNeed, TaskShape};
use crate::placement::frag::ShapeMix;

/// Tasks of `shape` that fit in `free` on `node` (at most `shape.count`).
pub(crate) fn tasks_fitting(node: &Node, free: &NodeAmounts, shape: &TaskShape) -> u32 {
    let mut fit = shape.count;
    if let Some(by_cpu) = free.cpu_milli.checked_div(shape.cpu_milli) {
        fit = fit.min(clamp(by_cpu));
    }
    if let Some(by_memory) = free.memory_mib.checked_div(shape.memory_mib) {
        fit = fit.min(clamp(by_memory));
    }
    match shape.gpu {
        GpuNeed::None => fit,
        need => {
            let model_ok = node.gpu_model.is_some_and(|m| shape.models.allows(m.0));
            if !model_ok {
                return 0;
            }
            let devices = &free.devices[..node.gpu_count];
            let gpu_fit = match need {
                GpuNeed::Whole(k) => {
                    devices.iter().filter(|d| **d == DEVICE_MILLI).count() as u32 / u32::from(k)
                }
                GpuNeed::Fraction(f) => devices.iter().map(|d| u32::from(*d / f)).sum(),
                GpuNeed::Mig(profile) => (free.mig & node.mig.profile_mask(profile)).count_ones(),
                GpuNeed::None => fit,
            };
            fit.min(gpu_fit)
        }
    }
}

fn clamp(value: u64) -> u32 {
    value.min(u64::from(u32::MAX)) as u32
}

/// Chooses the devices of one task on a node from what is still free there: a bitmask of
/// device indices (of MIG slice indices for a MIG task), or `None` for the engine's rule. A
/// profile's device-choice plug-ins answer through it.
pub(crate) type DeviceChooser<'a> = &'a dyn Fn(&NodeAmounts) -> Option<u128>;

/// Takes `tasks` tasks of `shape` out of `free`, returning what they use and the device indices
/// (one per whole device; one per task for fractions). Each task takes the devices `choose`
/// picks when that pick is valid (exactly the devices one task needs, all free for it), else
/// the engine's rule: the lowest entirely free devices for whole GPUs, the fullest device that
/// still has room (then the lowest index) for a fraction, the lowest free slice of its profile
/// for MIG. The caller has checked that they fit.
pub(crate) fn take_tasks(
    node: &Node,
    free: &mut NodeAmounts,
    shape: &TaskShape,
    tasks: u32,
    gpus: &mut Vec<u32>,
    choose: Option<DeviceChooser<'_>>,
) -> NodeAmounts {
    let mut used = NodeAmounts {
        cpu_milli: shape.cpu_milli * u64::from(tasks),
        memory_mib: shape.memory_mib * u64::from(tasks),
        ..NodeAmounts::default()
    };
    if shape.gpu == GpuNeed::None {
        free.sub(&used);
        return used;
    }
    let mut room = *free;
    for _ in 0..tasks {
        let picked = choose
            .and_then(|choose| choose(&room))
            .filter(|&mask| valid_pick(node, &room, shape.gpu, mask))
            .or_else(|| default_pick(node, &room, shape.gpu));
        let Some(mask) = picked else {
            break;
        };
        match shape.gpu {
            GpuNeed::Whole(_) => {
                for index in Bits(mask) {
                    room.devices[index] = 0;
                    used.devices[index] = DEVICE_MILLI;
                    gpus.push(index as u32);
                }
            }
            GpuNeed::Fraction(f) => {
                let index = mask.trailing_zeros() as usize;
                room.devices[index] -= f;
                used.devices[index] += f;
                gpus.push(index as u32);
            }
            GpuNeed::Mig(_) => {
                room.mig &= !mask;
                used.mig |= mask;
            }
            GpuNeed::None => {}
        }
    }
    free.sub(&used);
    used
}

/// Whether `mask` is exactly what one task of `need` takes, all of it free in `room`.
pub(crate) fn valid_pick(node: &Node, room: &NodeAmounts, need: GpuNeed, mask: u128) -> bool {
    let in_range = node.gpu_count >= 128 || mask >> node.gpu_count == 0;
    match need {
        GpuNeed::None => false,
        GpuNeed::Whole(k) => {
            in_range
                && mask.count_ones() == u32::from(k)
                && Bits(mask).all(|i| room.devices[i] == DEVICE_MILLI)
        }
        GpuNeed::Fraction(f) => {
            in_range && mask.count_ones() == 1 && room.devices[mask.trailing_zeros() as usize] >= f
        }
        GpuNeed::Mig(profile) => {
            mask.count_ones() == 1 && mask & room.mig & node.mig.profile_mask(profile) == mask
        }
    }
}

/// The engine's pick for one task of `need` in `room` (see [`take_tasks`]).
fn default_pick(node: &Node, room: &NodeAmounts, need: GpuNeed) -> Option<u128> {
    match need {
        GpuNeed::None => None,
        GpuNeed::Whole(k) => {
            let whole = u128::from(whole_free_mask(node, room));
            (whole.count_ones() >= u32::from(k))
                .then(|| u128::from(lowest(whole as u32, u32::from(k))))
        }
        GpuNeed::Fraction(f) => least_fragmenting_device(node, room, f, &ShapeMix::default())
            .map(|index| 1u128 << index),
        GpuNeed::Mig(profile) => {
            let slices = room.mig & node.mig.profile_mask(profile);
            (slices != 0).then(|| slices & slices.wrapping_neg())
        }
    }
}

/// A reservation's pick of devices for one task of `need` in `room` (what is free over its
/// window): devices with something `in_use` now before devices idle now, so that idle devices
/// stay free for backfill; within each of the two, the devices (slices) `planned` for the task's
/// group by the job's previous plan first, so that a plan stays put where the rule allows.
/// Whole GPUs: the lowest busy planned ones, then the lowest other busy ones, then the lowest
/// idle planned ones, then the lowest other idle ones; a fraction or a MIG slice: the engine's
/// rule among busy planned devices (slices) alone, then among busy ones, then among idle
/// planned ones. `None`: nothing busy or planned serves, the engine's rule applies.
pub(crate) fn busy_devices_first(
    node: &Node,
    room: &NodeAmounts,
    need: GpuNeed,
    in_use: &NodeAmounts,
    planned: &NodeAmounts,
) -> Option<u128> {
    let busy = used_mask(node, in_use);
    let before = used_mask(node, planned);
    if busy == 0 && in_use.mig == 0 && before == 0 && planned.mig == 0 {
        return None;
    }
    match need {
        GpuNeed::None => None,
        GpuNeed::Whole(k) => {
            let (whole, k) = (whole_free_mask(node, room), u32::from(k));
            if whole.count_ones() < k {
                return None;
            }
            let classes = [
                busy & before,
                busy & !before,
                !busy & before,
                !busy & !before,
            ];
            let taken = classes.iter().fold(0u32, |taken, class| {
                let here = whole & class;
                let more = (k - taken.count_ones()).min(here.count_ones());
                taken | lowest(here, more)
            });
            Some(u128::from(taken))
        }
        GpuNeed::Fraction(_) => [busy & before, busy, before].iter().find_map(|&only| {
            let mut within = *room;
            for (index, d) in within.devices[..node.gpu_count].iter_mut().enumerate() {
                if only & (1 << index) == 0 {
                    *d = 0;
                }
            }
            default_pick(node, &within, need)
        }),
        GpuNeed::Mig(_) => [in_use.mig & planned.mig, in_use.mig, planned.mig]
            .iter()
            .find_map(|&only| {
                let within = NodeAmounts {
                    mig: room.mig & only,
                    ..*room
                };
                default_pick(node, &within, need)
            }),
    }
}

/// The devices of `node` of which `amounts` holds some, as a bitmask.
pub(crate) fn used_mask(node: &Node, amounts: &NodeAmounts) -> u32 {
    amounts.devices[..node.gpu_count]
        .iter()
        .enumerate()
        .filter(|(_, d)| **d > 0)
        .fold(0u32, |mask, (index, _)| mask | 1 << index)
}

/// The entirely free devices of `node` in `free`, as a bitmask.
fn whole_free_mask(node: &Node, free: &NodeAmounts) -> u32 {
    free.devices[..node.gpu_count]
        .iter()
        .enumerate()
        .filter(|(_, d)| **d == DEVICE_MILLI)
        .fold(0, |mask, (index, _)| mask | 1u32 << index)
}

/// The `k` whole devices one task takes out of what is free in `room`: the lowest free ones of
/// the NVLink island with the fewest free devices that still holds `k` (a device in no island
/// is an island of its own; ties to the island with the lowest device), else the lowest free
/// devices. `None` when fewer than `k` are free.
pub(crate) fn island_devices(node: &Node, room: &NodeAmounts, k: u32) -> Option<u32> {
    let room = whole_free_mask(node, room);
    if room.count_ones() < k {
        return None;
    }
    let alone = node
        .nvlink_islands
        .iter()
        .fold(room, |m, island| m & !island);
    let singles = Bits(u128::from(alone)).map(|index| 1u32 << index);
    let islands = node.nvlink_islands.iter().copied().chain(singles);
    let best = islands
        .filter(|island| (island & room).count_ones() >= k)
        .min_by_key(|island| ((island & room).count_ones(), island.trailing_zeros()));
    Some(lowest(best.map_or(room, |island| island & room), k))
}

/// The lowest `k` bits of `mask`.
fn lowest(mut mask: u32, k: u32) -> u32 {
    let mut out = 0;
    for _ in 0..k {
        let bit = mask & mask.wrapping_neg();
        out |= bit;
        mask &= !bit;
    }
    out
}

/// The indices of the set bits of a mask, lowest first.
struct Bits(u128);

impl Iterator for Bits {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        (self.0 != 0).then(|| {
            let index = self.0.trailing_zeros() as usize;
            self.0 &= self.0 - 1;
            index
        })
    }
}

/// The device a task needing fraction `f` takes in `room`: least fragmentation of `mix` after
/// (with an empty mix, all equal), then fullest, then lowest index. Devices with the same free
/// share are alike, so each free share is scored once.
pub fn least_fragmenting_device(
    node: &Node,
    room: &NodeAmounts,
    f: u16,
    mix: &ShapeMix,
) -> Option<usize> {
    let devices = &room.devices[..node.gpu_count];
    let mut best: Option<(u64, u16, usize)> = None;
    for (index, d) in devices.iter().enumerate() {
        if *d < f || devices[..index].contains(d) {
            continue;
        }
        let lost = if mix.is_empty() {
            0
        } else {
            let mut after = *room;
            after.devices[index] -= f;
            mix.fragmentation(node, &after)
        };
        if best.is_none_or(|b| (lost, *d, index) < b) {
            best = Some((lost, *d, index));
        }
    }
    best.map(|(_, _, index)| index)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::job::PlacementMode;
    use crate::model::shape::ModelMask;

    /// `count` tasks of `cpu_milli` cpus, `memory_mib` MiB and `gpu` each.
    fn shape(cpu_milli: u64, memory_mib: u64, gpu: GpuNeed, count: u32) -> TaskShape {
        TaskShape {
            cpu_milli,
            memory_mib,
            gpu,
            models: ModelMask::ANY,
            count,
            min_count: count,
            mode: PlacementMode::Pack,
        }
    }

    /// What `take_tasks` takes is each task's cpus and memory times the tasks, out of `free`
    /// and in what it returns (issue 28, item 5: dropping the memory, or dividing it by the
    /// tasks, survived cargo-mutants); whole GPUs go lowest first.
    #[test]
    fn taking_tasks_takes_their_cpus_memory_and_devices() {
        let node = Node::new("n", NodeAmounts::full(8_000, 64_000, 4), 4, None);
        let mut free = NodeAmounts::full(8_000, 64_000, 4);
        let mut gpus = Vec::new();
        let plain = shape(1_000, 3_000, GpuNeed::None, 3);
        let used = take_tasks(&node, &mut free, &plain, 3, &mut gpus, None);
        assert_eq!((used.cpu_milli, used.memory_mib), (3_000, 9_000));
        assert_eq!((free.cpu_milli, free.memory_mib), (5_000, 55_000));
        let by_memory = shape(1, 20_000, GpuNeed::None, 10);
        assert_eq!(tasks_fitting(&node, &free, &by_memory), 2);
        let whole = shape(500, 1_000, GpuNeed::Whole(1), 2);
        let used = take_tasks(&node, &mut free, &whole, 2, &mut gpus, None);
        assert_eq!((used.cpu_milli, used.memory_mib), (1_000, 2_000));
        assert_eq!((free.cpu_milli, free.memory_mib), (4_000, 53_000));
        assert_eq!(gpus, [0, 1]);
        assert_eq!(&used.devices[..4], &[DEVICE_MILLI, DEVICE_MILLI, 0, 0]);
        assert_eq!(&free.devices[..4], &[0, 0, DEVICE_MILLI, DEVICE_MILLI]);
    }

    /// Fractions of a GPU fill the fullest device that still has room, counting what the
    /// earlier tasks of the same call took (issue 28, item 5: `-=` → `+=` on the room survived
    /// cargo-mutants).
    #[test]
    fn fractions_fill_one_device_before_the_next() {
        let node = Node::new("n", NodeAmounts::full(8_000, 64_000, 2), 2, None);
        let mut free = NodeAmounts::full(8_000, 64_000, 2);
        let mut gpus = Vec::new();
        let fraction = shape(100, 100, GpuNeed::Fraction(400), 3);
        let used = take_tasks(&node, &mut free, &fraction, 3, &mut gpus, None);
        assert_eq!(gpus, [0, 0, 1]);
        assert_eq!(&used.devices[..2], &[800, 400]);
        assert_eq!(&free.devices[..2], &[200, 600]);
    }

    /// MIG tasks take the lowest free slices of their profile, one each, counting the slices
    /// the earlier tasks of the same call took (issue 28, item 5: `&=` → `|=` on the room
    /// survived cargo-mutants).
    #[test]
    fn mig_tasks_take_distinct_slices_lowest_first() {
        use crate::model::ids::MigProfileId;
        use crate::model::mig::{MigLayout, MigSlice};
        let (small, big) = (MigProfileId(0), MigProfileId(1));
        let slice = |slice, profile, compute| MigSlice {
            gpu: 0,
            slice,
            profile,
            compute,
        };
        let mut node = Node::new("n", NodeAmounts::full(8_000, 64_000, 0), 0, None);
        node.mig = MigLayout {
            slices: vec![slice(0, small, 1), slice(1, big, 3), slice(2, small, 1)],
        };
        let mut free = NodeAmounts {
            mig: 0b111,
            ..NodeAmounts::full(8_000, 64_000, 0)
        };
        let mut gpus = Vec::new();
        let tasks = shape(100, 100, GpuNeed::Mig(small), 2);
        let used = take_tasks(&node, &mut free, &tasks, 2, &mut gpus, None);
        assert_eq!(used.mig, 0b101);
        assert_eq!(free.mig, 0b010);
    }

    /// A reservation's MIG slice goes to a slice in use now (free again over its window) before
    /// an idle one, and within each to the slice the job's previous plan named (issue 28, item
    /// 5: dropping the class from the room, so that the lowest free slice was taken, survived
    /// cargo-mutants).
    #[test]
    fn a_reserved_mig_slice_goes_to_a_busy_slice_then_to_a_planned_one() {
        use crate::model::ids::MigProfileId;
        use crate::model::mig::{MigLayout, MigSlice};
        let small = MigProfileId(0);
        let slice = |slice| MigSlice {
            gpu: 0,
            slice,
            profile: small,
            compute: 1,
        };
        let mut node = Node::new("n", NodeAmounts::full(8_000, 64_000, 0), 0, None);
        node.mig = MigLayout {
            slices: vec![slice(0), slice(1), slice(2)],
        };
        let room = NodeAmounts {
            mig: 0b111,
            ..NodeAmounts::full(8_000, 64_000, 0)
        };
        let mig = |mig| NodeAmounts {
            mig,
            ..NodeAmounts::default()
        };
        let pick = |in_use, planned| {
            busy_devices_first(
                &node,
                &room,
                GpuNeed::Mig(small),
                &mig(in_use),
                &mig(planned),
            )
        };
        // Nothing busy or planned: the engine's rule (the lowest free slice) applies.
        assert_eq!(pick(0, 0), None);
        assert_eq!(default_pick(&node, &room, GpuNeed::Mig(small)), Some(0b001));
        // Busy first; busy and planned before busy alone; busy before planned.
        assert_eq!(pick(0b100, 0), Some(0b100));
        assert_eq!(pick(0b110, 0b100), Some(0b100));
        assert_eq!(pick(0b100, 0b010), Some(0b100));
        // Idle and planned: the planned slice.
        assert_eq!(pick(0, 0b010), Some(0b010));
        // A busy slice not free over the window serves no class: the engine's rule applies.
        let busy_all_along = NodeAmounts { mig: 0b011, ..room };
        assert_eq!(
            busy_devices_first(
                &node,
                &busy_all_along,
                GpuNeed::Mig(small),
                &mig(0b100),
                &mig(0)
            ),
            None
        );
    }

    #[test]
    fn a_fraction_goes_to_the_device_it_leaves_usable() {
        use crate::model::ids::ModelId;
        use crate::model::node::PartitionSet;
        let shape = |f| TaskShape {
            cpu_milli: 1_000,
            memory_mib: 100,
            gpu: GpuNeed::Fraction(f),
            models: ModelMask::ANY,
            count: 1,
            min_count: 1,
            mode: PlacementMode::Pack,
        };
        let capacity = NodeAmounts::full(32_000, 64_000, 2);
        let node = Node {
            partitions: PartitionSet(1),
            ..Node::new("g", capacity, 2, Some(ModelId(0)))
        };
        let mut free = node.capacity;
        free.devices[0] = 700;
        free.devices[1] = 500;
        // The engine's rule (no device plug-in) is best fit: the fullest device, leaving 0.3 there;
        // so is the fragmentation-aware choice with an empty mix.
        let mut gpus = Vec::new();
        take_tasks(&node, &mut free.clone(), &shape(200), 1, &mut gpus, None);
        assert_eq!(gpus, [1]);
        assert_eq!(
            least_fragmenting_device(&node, &free, 200, &ShapeMix::default()),
            Some(1)
        );
        // With halves in the mix, 0.3 left on device 1 would be lost: device 0 keeps 0.5 usable.
        let mut mix = ShapeMix::default();
        mix.record(&shape(500), 4);
        mix.record(&shape(200), 1);
        let fgd =
            |room: &NodeAmounts| least_fragmenting_device(&node, room, 200, &mix).map(|i| 1 << i);
        let mut gpus = Vec::new();
        take_tasks(&node, &mut free, &shape(200), 1, &mut gpus, Some(&fgd));
        assert_eq!(gpus, [0]);
        assert_eq!(&free.devices[..2], [500, 500]);
    }

    /// `n` whole devices, with the devices of `shares` (index, thousandths) set to those shares.
    fn devices(n: usize, shares: &[(usize, u16)]) -> NodeAmounts {
        let mut amounts = NodeAmounts::full(8_000, 64_000, n);
        for &(index, share) in shares {
            amounts.devices[index] = share;
        }
        amounts
    }

    /// Something held on each device of `indices`, nothing else.
    fn holding(indices: &[usize]) -> NodeAmounts {
        let mut amounts = NodeAmounts::default();
        for &index in indices {
            amounts.devices[index] = 250;
        }
        amounts
    }

    /// A node of model 0 with MIG slices 0 and 2 of profile 0 and slice 1 of profile 1, on GPU 0.
    fn mig_node() -> (
        Node,
        crate::model::ids::MigProfileId,
        crate::model::ids::MigProfileId,
    ) {
        use crate::model::ids::MigProfileId;
        use crate::model::mig::{MigLayout, MigSlice};
        let (small, big) = (MigProfileId(0), MigProfileId(1));
        let slice = |slice, profile| MigSlice {
            gpu: 0,
            slice,
            profile,
            compute: 1,
        };
        let model = Some(crate::model::ids::ModelId(0));
        let mut node = Node::new("n", NodeAmounts::full(8_000, 64_000, 0), 0, model);
        node.mig = MigLayout {
            slices: vec![slice(0, small), slice(1, big), slice(2, small)],
        };
        (node, small, big)
    }

    /// Tasks fit by their cpus, memory and devices, the fewest of these and of the group's
    /// count: whole devices only where entirely free, `k` to a task; a fraction as many times
    /// as it goes into each device; a MIG task once per free slice of its profile; none on a
    /// node of a model the shape does not allow (issue 28, item 5: cargo-mutants, `fit.rs`).
    #[test]
    fn tasks_fit_by_cpus_memory_whole_devices_fractions_and_slices() {
        use crate::model::ids::ModelId;
        let node = Node::new(
            "n",
            NodeAmounts::full(8_000, 64_000, 4),
            4,
            Some(ModelId(1)),
        );
        let free = devices(4, &[]);
        assert_eq!(
            tasks_fitting(&node, &free, &shape(3_000, 1, GpuNeed::None, 9)),
            2
        );
        assert_eq!(
            tasks_fitting(&node, &free, &shape(1, 20_000, GpuNeed::None, 9)),
            3
        );
        assert_eq!(
            tasks_fitting(&node, &free, &shape(1, 1, GpuNeed::None, 7)),
            7
        );
        // Four whole devices free: two tasks of two, four of one.
        let whole = |k| shape(500, 1_000, GpuNeed::Whole(k), 10);
        assert_eq!(tasks_fitting(&node, &free, &whole(2)), 2);
        assert_eq!(tasks_fitting(&node, &free, &whole(1)), 4);
        // A device partly used is no whole device.
        let partly = devices(4, &[(1, 999)]);
        assert_eq!(tasks_fitting(&node, &partly, &whole(1)), 3);
        // Fractions of 0.3: three on a free device, two on 0.6, one on 0.3, none on 0.2.
        let shares = devices(4, &[(1, 600), (2, 300), (3, 200)]);
        let fraction = shape(100, 100, GpuNeed::Fraction(300), 20);
        assert_eq!(tasks_fitting(&node, &shares, &fraction), 6);
        // The model: allowed, or not.
        let of_model = |m: u32| TaskShape {
            models: ModelMask(1 << m),
            ..whole(1)
        };
        assert_eq!(tasks_fitting(&node, &free, &of_model(1)), 4);
        assert_eq!(tasks_fitting(&node, &free, &of_model(0)), 0);
        // MIG: slice 0 of the small profile free, slice 2 not; the big slice free.
        let (mig, small, big) = mig_node();
        let slices = NodeAmounts {
            mig: 0b011,
            ..NodeAmounts::full(8_000, 64_000, 0)
        };
        let mig_shape = |profile| shape(100, 100, GpuNeed::Mig(profile), 5);
        assert_eq!(tasks_fitting(&mig, &slices, &mig_shape(small)), 1);
        assert_eq!(tasks_fitting(&mig, &slices, &mig_shape(big)), 1);
        let all = NodeAmounts {
            mig: 0b111,
            ..slices
        };
        assert_eq!(tasks_fitting(&mig, &all, &mig_shape(small)), 2);
    }

    /// A device plug-in's pick is taken only where it is exactly what one task takes, all of
    /// it free and on the node's devices; otherwise the engine's rule applies (issue 28, item
    /// 5: cargo-mutants, `fit.rs`).
    #[test]
    fn a_device_pick_is_valid_only_when_exactly_one_task_s_free_devices() {
        let node = Node::new("n", NodeAmounts::full(8_000, 64_000, 4), 4, None);
        let room = devices(4, &[(1, 600), (3, 0)]);
        let valid = |need, mask| valid_pick(&node, &room, need, mask);
        // Whole: two entirely free devices, not one, nor three, nor a device partly used or
        // full, nor one past the node's.
        assert!(valid(GpuNeed::Whole(2), 0b0101));
        assert!(!valid(GpuNeed::Whole(2), 0b0001));
        assert!(!valid(GpuNeed::Whole(1), 0b0101));
        assert!(!valid(GpuNeed::Whole(2), 0b0011));
        assert!(!valid(GpuNeed::Whole(2), 0b1001));
        assert!(!valid(GpuNeed::Whole(2), 0b1_0001));
        assert!(!valid(GpuNeed::Whole(2), 1 << 100 | 1));
        // Fraction: one device with the room for it.
        assert!(valid(GpuNeed::Fraction(600), 0b0010));
        assert!(valid(GpuNeed::Fraction(600), 0b0100));
        assert!(!valid(GpuNeed::Fraction(700), 0b0010));
        assert!(!valid(GpuNeed::Fraction(100), 0b1000));
        assert!(!valid(GpuNeed::Fraction(100), 0b0011));
        assert!(!valid(GpuNeed::Fraction(100), 1 << 100));
        assert!(!valid(GpuNeed::None, 0b0001));
        // MIG: one free slice of the task's profile.
        let (mig, small, big) = mig_node();
        let room = NodeAmounts {
            mig: 0b111,
            ..NodeAmounts::default()
        };
        let valid =
            |room: &NodeAmounts, profile, mask| valid_pick(&mig, room, GpuNeed::Mig(profile), mask);
        assert!(valid(&room, small, 0b001));
        assert!(valid(&room, small, 0b100));
        assert!(valid(&room, big, 0b010));
        assert!(!valid(&room, small, 0b010));
        assert!(!valid(&room, small, 0b101));
        assert!(!valid(&room, small, 0));
        let taken = NodeAmounts { mig: 0b011, ..room };
        assert!(!valid(&taken, small, 0b100));
        assert!(valid(&taken, small, 0b001));
    }

    /// Without a plug-in's pick, whole devices go lowest first among the entirely free ones,
    /// and a task that needs more than are free gets none (issue 28, item 5: cargo-mutants,
    /// `fit.rs`).
    #[test]
    fn the_engine_s_rule_takes_the_lowest_entirely_free_devices() {
        let node = Node::new("n", NodeAmounts::full(8_000, 64_000, 6), 6, None);
        let room = devices(6, &[(0, 0), (2, 500)]);
        let pick = |k| default_pick(&node, &room, GpuNeed::Whole(k));
        assert_eq!(pick(1), Some(0b00_0010));
        assert_eq!(pick(3), Some(0b01_1010));
        assert_eq!(pick(4), Some(0b11_1010));
        assert_eq!(pick(5), None);
        assert_eq!(default_pick(&node, &room, GpuNeed::None), None);
        assert_eq!(
            default_pick(&node, &room, GpuNeed::Fraction(600)),
            Some(0b00_0010)
        );
        assert_eq!(
            default_pick(&node, &room, GpuNeed::Fraction(400)),
            Some(0b00_0100)
        );
    }

    /// A reservation's whole devices: busy and planned first, then busy, then planned, then
    /// the rest, lowest first within each and only entirely free ones (over the window); none
    /// where too few are free; nothing busy or planned leaves it to the engine's rule (issue
    /// 28, item 5: cargo-mutants, `fit.rs`).
    #[test]
    fn reserved_whole_devices_go_busy_and_planned_then_busy_then_planned_then_the_rest() {
        let node = Node::new("n", NodeAmounts::full(8_000, 64_000, 8), 8, None);
        // Device 5 is not entirely free over the window.
        let room = devices(8, &[(5, 500)]);
        let pick = |k, busy: &[usize], planned: &[usize]| {
            busy_devices_first(
                &node,
                &room,
                GpuNeed::Whole(k),
                &holding(busy),
                &holding(planned),
            )
        };
        // Classes: busy and planned {2}; busy {1} (5 not free); planned {4, 6}; others {0, 3, 7}.
        let (busy, planned) = ([1, 2, 5], [2, 4, 6]);
        assert_eq!(pick(1, &busy, &planned), Some(0b0000_0100));
        assert_eq!(pick(2, &busy, &planned), Some(0b0000_0110));
        assert_eq!(pick(3, &busy, &planned), Some(0b0001_0110));
        assert_eq!(pick(4, &busy, &planned), Some(0b0101_0110));
        assert_eq!(pick(5, &busy, &planned), Some(0b0101_0111));
        assert_eq!(pick(7, &busy, &planned), Some(0b1101_1111));
        assert_eq!(pick(8, &busy, &planned), None);
        // Busy alone, planned alone, neither.
        assert_eq!(pick(1, &busy, &[]), Some(0b0000_0010));
        assert_eq!(pick(1, &[], &[6, 4]), Some(0b0001_0000));
        assert_eq!(pick(1, &[], &[]), None);
    }

    /// A reservation's fraction: the engine's rule (the fullest device with room) among the
    /// busy and planned devices, then among the busy ones, then among the planned ones; none
    /// of them with room leaves it to the engine's rule (issue 28, item 5: cargo-mutants,
    /// `fit.rs`).
    #[test]
    fn a_reserved_fraction_goes_to_a_busy_and_planned_device_then_a_busy_one_then_a_planned_one() {
        let node = Node::new("n", NodeAmounts::full(8_000, 64_000, 4), 4, None);
        let room = devices(4, &[(1, 700), (3, 600)]);
        let pick = |busy: &[usize], planned: &[usize]| {
            busy_devices_first(
                &node,
                &room,
                GpuNeed::Fraction(500),
                &holding(busy),
                &holding(planned),
            )
        };
        // The engine's rule alone takes device 3 (the fullest with room).
        assert_eq!(
            default_pick(&node, &room, GpuNeed::Fraction(500)),
            Some(0b1000)
        );
        assert_eq!(pick(&[0, 2], &[2, 3]), Some(0b0100));
        assert_eq!(pick(&[0, 2], &[1]), Some(0b0001));
        assert_eq!(pick(&[2, 1], &[]), Some(0b0010));
        assert_eq!(pick(&[], &[1, 2]), Some(0b0010));
        assert_eq!(pick(&[], &[]), None);
        // A busy device without room over the window serves no class.
        let full = devices(4, &[(0, 0), (1, 700), (3, 600)]);
        let only_busy_full = busy_devices_first(
            &node,
            &full,
            GpuNeed::Fraction(500),
            &holding(&[0]),
            &holding(&[]),
        );
        assert_eq!(only_busy_full, None);
    }

    /// The devices a node's amounts hold some of, and those entirely free (issue 28, item 5:
    /// cargo-mutants, `fit.rs`).
    #[test]
    fn used_and_whole_free_masks_name_their_devices() {
        let node = Node::new("n", NodeAmounts::full(8_000, 64_000, 5), 5, None);
        let amounts = devices(5, &[(0, 0), (2, 1), (3, 999)]);
        assert_eq!(used_mask(&node, &amounts), 0b1_1110);
        assert_eq!(whole_free_mask(&node, &amounts), 0b1_0010);
        assert_eq!(used_mask(&node, &holding(&[0, 3])), 0b0_1001);
        assert_eq!(used_mask(&node, &NodeAmounts::default()), 0);
        assert_eq!(lowest(0b1011_0100, 3), 0b0011_0100);
        assert_eq!(lowest(0b1011_0100, 0), 0);
        assert_eq!(Bits(0b1000_0101).collect::<Vec<_>>(), [0, 2, 7]);
        assert_eq!(Bits(1 << 127).collect::<Vec<_>>(), [127]);
    }

    /// Whole devices in NVLink islands: the island with the fewest free devices that still
    /// holds the task, a device in no island an island of its own, ties to the island with the
    /// lowest device; else the lowest free devices; none when too few are free (issue 28,
    /// item 5: cargo-mutants, `fit.rs`; with two disjoint islands, `m & !island` → `m ^
    /// !island` sets apart the same free devices, so one case has a single island).
    #[test]
    fn whole_devices_go_to_the_fullest_island_that_holds_them() {
        let mut node = Node::new("n", NodeAmounts::full(8_000, 64_000, 6), 6, None);
        node.nvlink_islands = vec![0b00_0011, 0b00_1100];
        // Free: 1 (island A), 2 and 3 (island B), 5 (alone); 0 and 4 taken.
        let room = devices(6, &[(0, 0), (4, 300)]);
        let pick = |k| island_devices(&node, &room, k);
        // One device: A and the single 5 hold one free each; A has the lowest device.
        assert_eq!(pick(1), Some(0b00_0010));
        assert_eq!(pick(2), Some(0b00_1100));
        // No island holds three: the lowest free devices.
        assert_eq!(pick(3), Some(0b00_1110));
        assert_eq!(pick(4), Some(0b10_1110));
        assert_eq!(pick(5), None);
        // With A full, the single 5 holds one free device, B two.
        let a_full = devices(6, &[(0, 0), (1, 0), (4, 300)]);
        assert_eq!(island_devices(&node, &a_full, 1), Some(0b10_0000));
        // All free: A and B tie at two; A has the lowest device.
        let all = devices(6, &[]);
        assert_eq!(island_devices(&node, &all, 2), Some(0b00_0011));
        assert_eq!(island_devices(&node, &all, 1), Some(0b01_0000));
        // One island, {0, 1, 2}, with 1 and 2 free, and 3 free alone: one device goes to 3.
        node.nvlink_islands = vec![0b00_0111];
        let room = devices(6, &[(0, 0), (4, 0), (5, 0)]);
        assert_eq!(island_devices(&node, &room, 1), Some(0b00_1000));
        assert_eq!(island_devices(&node, &room, 2), Some(0b00_0110));
    }

    /// A fraction's device: only one with room for it (an exact fit counts), the fullest of
    /// them, then the lowest index (issue 28, item 5: cargo-mutants, `fit.rs`).
    #[test]
    fn a_fraction_takes_the_fullest_device_with_room_then_the_lowest() {
        let node = Node::new("n", NodeAmounts::full(8_000, 64_000, 6), 6, None);
        let none = ShapeMix::default();
        let room = devices(6, &[(0, 100), (1, 700), (2, 500), (3, 500), (4, 400)]);
        assert_eq!(least_fragmenting_device(&node, &room, 500, &none), Some(2));
        assert_eq!(least_fragmenting_device(&node, &room, 600, &none), Some(1));
        assert_eq!(least_fragmenting_device(&node, &room, 800, &none), Some(5));
        let room = devices(6, &[(0, 700), (1, 700), (2, 0), (3, 0), (4, 0), (5, 0)]);
        assert_eq!(least_fragmenting_device(&node, &room, 800, &none), None);
        assert_eq!(least_fragmenting_device(&node, &room, 700, &none), Some(0));
    }
}
