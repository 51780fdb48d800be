//! The engine's node choice for a task group that fits on one node, as a plug-in that can sit
//! beside other node scorers.

use crate::policy::{Dependence, MAX_SCORE_TIERS, PassContext, Plugin};
use crate::state::{JobView, NodeView};

/// The engine's node choice, as a node scorer of a tier of its own. When one node holds a whole
/// task group (`strict_pack`, and `pack` when one node holds it), the group goes:
///
/// 1. for a reservation, to a node with something in use now before a node idle now, and
///    within each class to a node of the job's previous plan first;
/// 2. where it raises the cluster's fragmentation least (FGD: Weng et al., ATC'23, measured
///    against the task shapes the cluster has seen; [`crate::placement::ShapeMix`]);
/// 3. where it leaves the least GPU share free;
/// 4. to the node the engine visits first (best fit: fewest free GPUs that hold a task).
///
/// The default profile lists it at the last tier ([`LeastFragmenting::DEFAULT_TIER`]), so a
/// scorer added to the default profile at any other tier ranks nodes first and the built-in
/// breaks its ties; a profile that lists no node scorer at all decides the same way as the
/// built-in alone. A profile with other node scorers and without it ranks nodes by those scorers alone,
/// and the group takes the first node in their order that holds it. With it, its tier compares
/// with theirs lexicographically: scorers of lower tier numbers decide first, it decides among
/// their ties, and scorers of higher tier numbers break its ties. It holds its tier alone and
/// takes no weight ([`crate::policy::ProfileError::NodeChoiceTierShared`],
/// [`crate::policy::ProfileError::NodeChoiceWeight`]). Groups placed over several nodes (and
/// `spread` groups) take the nodes in the scorers' order, as without it.
///
/// The engine computes its answer on the room the placement sees (for a reservation, what is
/// free over the reservation's window), so [`Plugin::score_node`] answers 0 and is never asked.
///
/// ```
/// use gangway::policy::builtin::{LeastFragmenting, Spread};
/// use gangway::policy::Profile;
/// use gangway::{ClusterConfig, Decision, Event, JobSpec, Milli, Scheduler};
/// let cluster: ClusterConfig = serde_json::from_str(r#"{"nodes": [
///     {"name": "n1", "cpus": 8, "gpus": {"model": "a100", "count": 4}},
///     {"name": "n2", "cpus": 8, "gpus": {"model": "a100", "count": 4}}]}"#).unwrap();
/// // Spread alone would send b to the empty n2 (see its example). At a lower tier it only
/// // breaks the built-in's ties: a and b alike go to n1, where b leaves the least free.
/// let profile = Profile::builder()
///     .scorer(LeastFragmenting, 0, 1.0)
///     .scorer(Spread, 1, 1.0)
///     .build()
///     .unwrap();
/// let mut s = Scheduler::with_profile(cluster, profile).unwrap();
/// let job = |id: &str| Event::Submit { job: JobSpec::new(id, 60_000, 1).with_gpus(Milli::from_units(1)) };
/// let out = s.tick(0, vec![job("a"), job("b")]).unwrap();
/// let nodes: Vec<&str> = out.decisions.iter().map(|d| match d {
///     Decision::Start { placement, .. } => &*placement[0].node, _ => "" }).collect();
/// assert_eq!(nodes, ["n1", "n1"]);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct LeastFragmenting;

impl LeastFragmenting {
    /// The tier the default profile lists it at: the last (3; a profile has 4 score tiers), so
    /// that every other scorer ranks before it.
    ///
    /// ```
    /// use gangway::policy::builtin::{BinPack, LeastFragmenting};
    /// use gangway::policy::Profile;
    /// assert_eq!(LeastFragmenting::DEFAULT_TIER, 3);
    /// // A scorer added to the default profile at tier 0 decides first; the built-in breaks
    /// // its ties.
    /// let profile = Profile::default_for_config().into_builder().scorer(BinPack, 0, 1.0).build();
    /// assert!(profile.is_ok());
    /// ```
    pub const DEFAULT_TIER: usize = MAX_SCORE_TIERS - 1;
}

impl LeastFragmenting {
    /// Its name: in `policy.plugins`, faults, `explain` and saved state.
    pub const NAME: &'static str = "least_fragmenting";
}

#[gangway::policy::plugin]
impl Plugin for LeastFragmenting {
    fn name(&self) -> &str {
        Self::NAME
    }

    /// 0: the engine computes this plug-in's tier itself (type docs).
    fn score_node(&self, _: JobView<'_>, _: usize, _: NodeView<'_>, _: &PassContext<'_>) -> f64 {
        0.0
    }

    fn dependence(&self) -> Dependence {
        Dependence::ShapeAndNode
    }
}
