//! A node filter that avoids nodes whose GPUs failed recently.

use crate::policy::{Dependence, PassContext, Plugin};
use crate::state::{JobView, NodeView};

/// Keeps jobs off nodes that reported a `gpu_down` within the last `window_ms` (the node
/// remembers its recent GPU faults even after `gpu_up`): a GPU that fell off the bus once
/// tends to again.
///
/// ```
/// use gangway::policy::builtin::AvoidGpuFaults;
/// assert_eq!(AvoidGpuFaults::hours(24).window_ms(), 86_400_000);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct AvoidGpuFaults {
    window_ms: u64,
}

impl AvoidGpuFaults {
    /// Avoids nodes with a GPU fault in the last `hours` hours.
    pub fn hours(hours: u64) -> Self {
        AvoidGpuFaults {
            window_ms: hours.saturating_mul(3_600_000),
        }
    }

    /// Avoids nodes with a GPU fault in the last `window_ms`.
    pub fn within_ms(window_ms: u64) -> Self {
        AvoidGpuFaults { window_ms }
    }

    /// The window.
    pub fn window_ms(&self) -> u64 {
        self.window_ms
    }
}

impl AvoidGpuFaults {
    /// Its name: in `policy.plugins`, faults, `explain` and saved state.
    pub const NAME: &'static str = "avoid_gpu_faults";
}

#[gangway::policy::plugin]
impl Plugin for AvoidGpuFaults {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn filter_node(
        &self,
        _: JobView<'_>,
        _: usize,
        node: NodeView<'_>,
        context: &PassContext<'_>,
    ) -> Result<(), String> {
        match node.last_gpu_fault_ms() {
            Some(at) if context.now_ms().saturating_sub(at) < self.window_ms => {
                Err(format!("a GPU failed at {at} ms"))
            }
            _ => Ok(()),
        }
    }

    /// Within a pass the answer depends on the node alone.
    fn dependence(&self) -> Dependence {
        Dependence::ShapeAndNode
    }
}
