//! Victims that lose the least work first.

use crate::policy::{PassContext, Plugin};
use crate::state::JobView;

/// Victims that would lose the least work first: the time since their last `checkpoint`
/// event, or since they started when they reported none.
///
/// ```
/// use gangway::policy::{builtin::LeastLostWork, Hook, Plugin};
/// assert_eq!((&LeastLostWork as &dyn Plugin).hooks(), [Hook::VictimOrder]);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct LeastLostWork;

impl LeastLostWork {
    /// Its name: in `policy.plugins`, faults, `explain` and saved state.
    pub const NAME: &'static str = "least_lost_work";
}

#[gangway::policy::plugin]
impl Plugin for LeastLostWork {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn victim_key(&self, _: JobView<'_>, victim: JobView<'_>, _: &PassContext<'_>) -> i64 {
        victim
            .since_checkpoint_ms()
            .map_or(i64::MAX, |lost| i64::try_from(lost).unwrap_or(i64::MAX))
    }
}
