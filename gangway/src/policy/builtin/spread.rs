//! Spread and bin-packing node scorers.

use crate::model::resources::DEVICE_MILLI;
use crate::policy::{Dependence, PassContext, Plugin};
use crate::state::{JobView, NodeView};

/// What is free on a node, as a fraction of its capacity: GPUs for a node with GPUs, else cpus.
fn free_fraction(node: NodeView<'_>) -> f64 {
    let (capacity, free) = (node.capacity(), node.free());
    let gpus = node.record().gpu_count;
    if gpus > 0 {
        let free: u64 = free.devices[..gpus].iter().map(|&d| u64::from(d)).sum();
        free as f64 / (gpus as u64 * u64::from(DEVICE_MILLI)) as f64
    } else if capacity.cpu_milli > 0 {
        free.cpu_milli as f64 / capacity.cpu_milli as f64
    } else {
        0.0
    }
}

/// Prefers the emptiest nodes (Kubernetes' LeastAllocated): the score is the free fraction of
/// the node's GPUs (cpus on nodes without GPUs), so load spreads out and a node's failure
/// hits few jobs.
///
/// ```
/// use gangway::policy::{builtin::Spread, Profile};
/// use gangway::{ClusterConfig, Decision, Event, JobSpec, Milli, Scheduler};
/// let cluster: ClusterConfig = serde_json::from_str(r#"{"nodes": [
///     {"name": "n1", "cpus": 8, "gpus": {"model": "a100", "count": 4}},
///     {"name": "n2", "cpus": 8, "gpus": {"model": "a100", "count": 4}}]}"#).unwrap();
/// let profile = Profile::builder().scorer(Spread, 0, 1.0).build().unwrap();
/// let mut s = Scheduler::with_profile(cluster, profile).unwrap();
/// let job = |id: &str| Event::Submit { job: JobSpec::new(id, 60_000, 1).with_gpus(Milli::from_units(1)) };
/// let out = s.tick(0, vec![job("a"), job("b")]).unwrap();
/// let nodes: Vec<&str> = out.decisions.iter().map(|d| match d {
///     Decision::Start { placement, .. } => &*placement[0].node, _ => "" }).collect();
/// assert_eq!(nodes, ["n1", "n2"]); // best fit would have put both on n1
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Spread;

impl Spread {
    /// Its name: in `policy.plugins`, faults, `explain` and saved state.
    pub const NAME: &'static str = "spread";
}

#[gangway::policy::plugin]
impl Plugin for Spread {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn score_node(&self, _: JobView<'_>, _: usize, node: NodeView<'_>, _: &PassContext<'_>) -> f64 {
        free_fraction(node)
    }

    fn dependence(&self) -> Dependence {
        Dependence::ShapeAndNode
    }
}

/// Prefers the fullest nodes (Kubernetes' MostAllocated): the score is the used fraction of
/// the node's GPUs (cpus on nodes without GPUs), so whole nodes stay free for large gangs.
///
/// ```
/// use gangway::policy::{builtin::BinPack, Hook, Plugin};
/// assert_eq!((&BinPack as &dyn Plugin).hooks(), [Hook::NodeScore]);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct BinPack;

impl BinPack {
    /// Its name: in `policy.plugins`, faults, `explain` and saved state.
    pub const NAME: &'static str = "binpack";
}

#[gangway::policy::plugin]
impl Plugin for BinPack {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn score_node(&self, _: JobView<'_>, _: usize, node: NodeView<'_>, _: &PassContext<'_>) -> f64 {
        1.0 - free_fraction(node)
    }

    fn dependence(&self) -> Dependence {
        Dependence::ShapeAndNode
    }
}
