//! How many tasks of a shape fit in a free amount, and which devices they take.

use crate::model::mig::lowest_bits;
use crate::model::node::Node;
use crate::model::resources::{DEVICE_MILLI, NodeAmounts};
use crate::model::shape::{GpuNeed, TaskShape};
use crate::placement::frag::ShapeMix;

/// Tasks of `shape` that fit in `free` on `node` (at most `shape.count`).
pub fn tasks_fitting(node: &Node, free: &NodeAmounts, shape: &TaskShape) -> u32 {
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

/// Takes `tasks` tasks of `shape` out of `free`, returning what they use and the device indices
/// (whole devices lowest index first; fractions, one index per task, on the device whose use
/// raises the `mix`'s fragmentation least, ties to the fullest device that still has room, then
/// the lowest index; MIG slices, lowest GPU and slice first, only in the returned `mig` bits).
/// The caller has checked that they fit.
pub fn take_tasks(
    node: &Node,
    free: &mut NodeAmounts,
    shape: &TaskShape,
    tasks: u32,
    gpus: &mut Vec<u32>,
    mix: &ShapeMix,
) -> NodeAmounts {
    let mut used = NodeAmounts {
        cpu_milli: shape.cpu_milli * u64::from(tasks),
        memory_mib: shape.memory_mib * u64::from(tasks),
        ..NodeAmounts::default()
    };
    match shape.gpu {
        GpuNeed::None => {}
        GpuNeed::Whole(k) if !node.nvlink_islands.is_empty() => {
            let mut room = whole_free_mask(node, free);
            for _ in 0..tasks {
                let taken = island_devices(node, room, u32::from(k));
                room &= !taken;
                for index in Bits(taken) {
                    used.devices[index] = DEVICE_MILLI;
                    gpus.push(index as u32);
                }
            }
        }
        GpuNeed::Whole(k) => {
            let mut wanted = tasks as usize * usize::from(k);
            for (index, d) in free.devices[..node.gpu_count].iter().enumerate() {
                if wanted == 0 {
                    break;
                }
                if *d == DEVICE_MILLI {
                    used.devices[index] = DEVICE_MILLI;
                    gpus.push(index as u32);
                    wanted -= 1;
                }
            }
        }
        GpuNeed::Fraction(f) => {
            let mut room = *free;
            for _ in 0..tasks {
                if let Some(index) = fraction_device(node, &room, f, mix) {
                    room.devices[index] -= f;
                    used.devices[index] += f;
                    gpus.push(index as u32);
                }
            }
        }
        GpuNeed::Mig(profile) => {
            used.mig = lowest_bits(free.mig & node.mig.profile_mask(profile), tasks);
        }
    }
    free.sub(&used);
    used
}

/// The entirely free devices of `node` in `free`, as a bitmask.
fn whole_free_mask(node: &Node, free: &NodeAmounts) -> u32 {
    free.devices[..node.gpu_count]
        .iter()
        .enumerate()
        .filter(|(_, d)| **d == DEVICE_MILLI)
        .fold(0, |mask, (index, _)| mask | 1u32 << index)
}

/// The `k` devices one task takes out of the free devices `room`: the lowest free ones of the
/// NVLink island with the fewest free devices that still holds `k` (a device in no island is an
/// island of its own; ties to the island with the lowest device), else the lowest free devices.
fn island_devices(node: &Node, room: u32, k: u32) -> u32 {
    let alone = node
        .nvlink_islands
        .iter()
        .fold(room, |m, island| m & !island);
    let singles = Bits(alone).map(|index| 1u32 << index);
    let islands = node.nvlink_islands.iter().copied().chain(singles);
    let best = islands
        .filter(|island| (island & room).count_ones() >= k)
        .min_by_key(|island| ((island & room).count_ones(), island.trailing_zeros()));
    lowest(best.map_or(room, |island| island & room), k)
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
struct Bits(u32);

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

/// The device a task needing fraction `f` takes in `room`: least fragmentation after (with an
/// empty mix, all equal), then fullest, then lowest index. Devices with the same free share are
/// alike, so each free share is scored once.
fn fraction_device(node: &Node, room: &NodeAmounts, f: u16, mix: &ShapeMix) -> Option<usize> {
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
