//! Shortest job first, by time limit.

use crate::policy::{PassContext, Plugin};
use crate::state::JobView;

/// Shortest job first: the shorter the time limit, the higher the key. On a cluster where
/// users do not estimate (every job asks for the partition maximum) it is FIFO.
///
/// ```
/// use gangway::policy::{builtin::ShortestFirst, Profile};
/// use gangway::{ClusterConfig, Event, JobSpec, Scheduler};
/// let cluster: ClusterConfig = serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 1}]}"#).unwrap();
/// let profile = Profile::builder().plugin(ShortestFirst).build().unwrap();
/// let mut s = Scheduler::with_profile(cluster, profile).unwrap();
/// let submit = |id: &str, limit| Event::Submit { job: JobSpec::new(id, limit, 1) };
/// s.tick(0, vec![submit("running", 100), submit("long", 900), submit("short", 300)]).unwrap();
/// assert_eq!(s.pending_info()[0].job, "short");
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct ShortestFirst;

impl ShortestFirst {
    /// Its name: in `policy.plugins`, faults, `explain` and saved state.
    pub const NAME: &'static str = "shortest_first";
}

#[gangway::policy::plugin]
impl Plugin for ShortestFirst {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn order_key(&self, job: JobView<'_>, _: &PassContext<'_>) -> i64 {
        i64::try_from(job.spec().time_limit_ms).map_or(i64::MIN, |limit| -limit)
    }
}
