//! The default profile's device choices: fragmentation-aware fractions (FGD) and NVLink
//! islands for whole GPUs.

use crate::model::shape::GpuNeed;
use crate::placement::fit::{island_devices, least_fragmenting_device};
use crate::policy::{Dependence, DeviceTask, PassContext, Plugin};

/// A fractional-GPU task takes the device where it raises the cluster's fragmentation least
/// (Weng et al., ATC'23; [`crate::placement::ShapeMix`]), then the fullest device with room, then
/// the lowest index. Other tasks are left to the next device plug-in.
///
/// ```
/// use gangway::policy::{builtin::FragmentationAware, Hook, Plugin};
/// assert_eq!((&FragmentationAware as &dyn Plugin).hooks(), [Hook::DeviceChoice]);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct FragmentationAware;

impl FragmentationAware {
    /// Its name: in `policy.plugins`, faults, `explain` and saved state.
    pub const NAME: &'static str = "fragmentation_aware";
}

#[gangway::policy::plugin]
impl Plugin for FragmentationAware {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn choose_devices(&self, task: DeviceTask<'_>, _: &PassContext<'_>) -> Option<u128> {
        let GpuNeed::Fraction(f) = task.need else {
            return None;
        };
        let index = least_fragmenting_device(task.node.record(), task.room, f, task.mix)?;
        Some(1 << index)
    }

    fn dependence(&self) -> Dependence {
        Dependence::ShapeAndNode
    }
}

/// A whole-GPU task takes its devices inside one NVLink island when one holds them: the
/// island with the fewest free devices that still does (a device in no island is an island of
/// its own), lowest devices first. Nodes without islands are left to the next device plug-in.
///
/// ```
/// use gangway::policy::{builtin::NvlinkIslands, Hook, Plugin};
/// assert_eq!((&NvlinkIslands as &dyn Plugin).hooks(), [Hook::DeviceChoice]);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct NvlinkIslands;

impl NvlinkIslands {
    /// Its name: in `policy.plugins`, faults, `explain` and saved state.
    pub const NAME: &'static str = "nvlink_islands";
}

#[gangway::policy::plugin]
impl Plugin for NvlinkIslands {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn choose_devices(&self, task: DeviceTask<'_>, _: &PassContext<'_>) -> Option<u128> {
        let GpuNeed::Whole(k) = task.need else {
            return None;
        };
        let node = task.node.record();
        if node.nvlink_islands.is_empty() {
            return None;
        }
        island_devices(node, task.room, u32::from(k)).map(u128::from)
    }

    fn dependence(&self) -> Dependence {
        Dependence::ShapeAndNode
    }
}
