//! Topology-aware gang placement: which domains of the cluster's topology
//! ([`crate::model::topology`]) a gang's groups are placed in. Inside a domain the gang placer
//! ([`crate::placement::gang`]) runs unchanged on the domain's nodes, so the four placement modes
//! keep their meaning (a `strict_spread` group with a constraint spreads over the nodes of its
//! one domain).
//!
//! - **Default** (Slurm's topology/tree best fit): when every group without a constraint is
//!   `pack` or `strict_pack` (and there is one), the whole gang is tried inside one domain,
//!   narrowest level first (racks before blocks); among the domains of a level, the one with the
//!   least free capacity that could still hold the gang first (fewest free whole GPUs, then GPU
//!   share, cpus, memory; ties to the lower domain id), so big free domains stay whole for big
//!   gangs; a profile's domain scorers rank the domains before that order. If no domain holds
//!   it, the gang is placed cluster-wide as without a topology.
//! - **`required: L`**: the group's tasks all go inside one domain of level `L` (tried best fit
//!   first as above, by the group's own need); if none holds it, the gang does not fit.
//! - **`preferred: L`**: as `required: L`, then one domain of the next broader level, …, then
//!   anywhere.
//!
//! Elastic groups: the default domain must hold the whole gang at its full counts (size comes
//! before locality the host did not ask for); a constrained group takes the largest count, down
//! to `min_count`, that fits inside one domain (the asked-for locality comes first).
//!
//! Several groups of one gang: each constrained group chooses its own domain; groups without a
//! constraint share the gang's default domain. When the gang is tried inside a domain `D`, a
//! constrained group whose level is `D`'s or broader is placed in `D` (which lies in one domain
//! of that level), and one with a narrower level chooses among the domains under `D`.
//!
//! Domains that cannot hold a group even summed over their nodes ([`FreeTotals`], computed once
//! per gang from the capacity view, so backfill reservations plan with the same constraints) are
//! skipped without visiting a node; the domain filter itself allocates nothing.
//!
//! ```
//! use gangway::{ClusterConfig, Decision, Event, JobSpec, Milli, Scheduler};
//! let node = |name: &str, rack: &str| serde_json::json!({"name": name, "cpus": 8,
//!     "gpus": {"model": "h100", "count": 8}, "labels": {"block": "b1", "rack": rack}});
//! let cluster: ClusterConfig = serde_json::from_value(serde_json::json!({
//!     "topology": ["block", "rack"],
//!     "nodes": [node("n1", "r1"), node("n2", "r2"), node("n3", "r1"), node("n4", "r2")]
//! })).unwrap();
//! let mut s = Scheduler::new(cluster).unwrap();
//! // Two tasks of 8 GPUs that must share a rack: best fit by id order alone would take n1
//! // and n2, which sit in different racks.
//! let mut job = JobSpec::new("train", 60_000, 2).with_gpus(Milli::from_units(8));
//! job.groups[0].topology = Some(gangway::model::TopologyRequest::Required("rack".into()));
//! let out = s.tick(0, vec![Event::Submit { job }]).unwrap();
//! let Decision::Start { placement, .. } = &out.decisions[0] else { panic!() };
//! let nodes: Vec<&str> = placement.iter().map(|p| &*p.node).collect();
//! assert_eq!(nodes, ["n1", "n3"]); // both in rack r1
//! ```

use std::ops::ControlFlow;

use crate::model::ids::{DomainId, NodeId};
use crate::model::node::Node;
use crate::model::shape::TaskShape;
use crate::model::topology::{LevelNeed, Topology};
use crate::placement::gang::{
    Assignment, Candidates, CapacityView, GangBuilder, GangRequest, Standing,
};
use crate::placement::index::FreeTotals;

use crate::model::job::PlacementMode;

/// The topology a gang is placed under: the tree and each group's constraint (empty or shorter
/// than the groups: no constraint).
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct GangTopology<'a> {
    /// The cluster's tree.
    pub tree: &'a Topology,
    /// Constraints by group.
    pub needs: &'a [Option<LevelNeed>],
}

impl<'a> GangTopology<'a> {
    /// The gang's groups under `tree`, group `i` constrained by `needs[i]`.
    pub fn new(tree: &'a Topology, needs: &'a [Option<LevelNeed>]) -> Self {
        GangTopology { tree, needs }
    }
}

/// Where a group may go: anywhere, or inside one domain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scope {
    Anywhere,
    Domain(DomainId),
}

/// The candidates of `inner` that lie in `scope`, in `inner`'s order.
struct Within<'a> {
    inner: &'a dyn Candidates,
    tree: &'a Topology,
    scope: Scope,
}

impl Candidates for Within<'_> {
    fn visit(&self, shape: &TaskShape, f: &mut dyn FnMut(NodeId) -> ControlFlow<()>) {
        match self.scope {
            Scope::Anywhere => self.inner.visit(shape, f),
            Scope::Domain(d) => self.inner.visit(shape, &mut |id| {
                if self.tree.contains(d, id) {
                    f(id)
                } else {
                    ControlFlow::Continue(())
                }
            }),
        }
    }

    fn standing(&self, shape: &TaskShape, id: NodeId) -> Option<Standing> {
        self.inner.standing(shape, id)
    }
}

struct Search<'a> {
    nodes: &'a [Option<Node>],
    candidates: &'a dyn Candidates,
    view: &'a dyn CapacityView,
    request: GangRequest<'a>,
    topology: GangTopology<'a>,
    /// What each domain has free for this gang, by domain id.
    totals: Vec<FreeTotals>,
}

/// Places a whole gang under `topology`, as the module documentation describes.
pub(super) fn place<'a>(
    nodes: &'a [Option<Node>],
    candidates: &'a dyn Candidates,
    view: &'a dyn CapacityView,
    request: GangRequest<'a>,
    topology: GangTopology<'a>,
) -> Option<Vec<Assignment>> {
    let mut search = Search {
        nodes,
        candidates,
        view,
        request,
        topology,
        totals: Vec::new(),
    };
    let default = search.default_applies();
    if !default && topology.needs.iter().all(Option::is_none) {
        // Only unconstrained spread groups: placed as without a topology.
        return search.gang(Scope::Anywhere);
    }
    search.totals = domain_totals(nodes, view, request, topology.tree);
    if default {
        let need = FreeTotals::need(request.shapes);
        for level in (0..topology.tree.levels().len()).rev() {
            for domain in search.fitting(level, Scope::Anywhere, &need) {
                if let Some(out) = search.gang(Scope::Domain(domain))
                    && whole(request.shapes, &out)
                {
                    return Some(out);
                }
            }
        }
    }
    search.gang(Scope::Anywhere)
}

/// Whether every group got its full `count` (an elastic gang placed at less does not count as a
/// default domain fit).
fn whole(shapes: &[TaskShape], out: &[Assignment]) -> bool {
    shapes.iter().enumerate().all(|(g, shape)| {
        let placed: u32 = out.iter().filter(|a| a.group == g).map(|a| a.tasks).sum();
        placed == shape.count
    })
}

/// What each domain has free for the gang under `view` (the gang's partition and exclusivity
/// counted), by domain id.
fn domain_totals(
    nodes: &[Option<Node>],
    view: &dyn CapacityView,
    request: GangRequest<'_>,
    tree: &Topology,
) -> Vec<FreeTotals> {
    let mut totals = vec![FreeTotals::default(); tree.domain_count()];
    let empty = GangBuilder::new(nodes, view, request);
    for (i, node) in nodes.iter().enumerate() {
        let id = NodeId(i as u32);
        let (Some(node), Some(room)) = (node, empty.room(id)) else {
            continue;
        };
        let free = FreeTotals::of_free(node, &room);
        for level in 0..tree.levels().len() {
            if let Some(d) = tree.domain_of(id, level) {
                totals[d.index()].add(&free);
            }
        }
    }
    totals
}

impl Search<'_> {
    fn need(&self, group: usize) -> Option<LevelNeed> {
        self.topology.needs.get(group).copied().flatten()
    }

    /// Whether the gang is first tried inside one domain: it has groups without a constraint,
    /// all packed.
    fn default_applies(&self) -> bool {
        let mut free = self
            .request
            .shapes
            .iter()
            .enumerate()
            .filter(|(g, _)| self.need(*g).is_none())
            .peekable();
        free.peek().is_some()
            && free.all(|(_, s)| matches!(s.mode, PlacementMode::Pack | PlacementMode::StrictPack))
    }

    /// The domains of `level` inside `scope` whose totals cover `need`, least free first.
    fn fitting(&self, level: usize, scope: Scope, need: &FreeTotals) -> Vec<DomainId> {
        let tree = self.topology.tree;
        let mut out: Vec<DomainId> = tree
            .domains_at(level)
            .iter()
            .copied()
            .filter(|d| match scope {
                Scope::Anywhere => true,
                Scope::Domain(s) => tree.within(s, *d),
            })
            .filter(|d| self.totals[d.index()].covers(need))
            .collect();
        out.sort_by_key(|d| {
            let t = &self.totals[d.index()];
            (t.whole_gpus, t.gpu_milli, t.cpu_milli, t.memory_mib, *d)
        });
        if let Some(gate) = self.request.gate {
            gate.rank_domains(&mut out, &self.totals);
        }
        out
    }

    fn within(&self, scope: Scope) -> Within<'_> {
        Within {
            inner: self.candidates,
            tree: self.topology.tree,
            scope,
        }
    }

    /// Every group inside `scope`, or `None`.
    fn gang(&self, scope: Scope) -> Option<Vec<Assignment>> {
        let mut builder = GangBuilder::new(self.nodes, self.view, self.request);
        for (g, shape) in self.request.shapes.iter().enumerate() {
            self.group(&mut builder, g, shape, scope)?;
        }
        Some(builder.out)
    }

    /// One group inside `scope`, by its constraint.
    fn group(
        &self,
        builder: &mut GangBuilder<'_>,
        g: usize,
        shape: &TaskShape,
        scope: Scope,
    ) -> Option<()> {
        let Some(need) = self.need(g) else {
            return builder.place_group(&self.within(scope), g, shape);
        };
        let tree = self.topology.tree;
        let group_need = FreeTotals::need(std::slice::from_ref(shape));
        let broadest = if need.required { need.level } else { 0 };
        for level in (broadest..=need.level).rev() {
            if let Scope::Domain(s) = scope
                && tree.level_of(s) >= level
            {
                // The scope lies inside one domain of this level (and of every broader one).
                return builder.place_group(&self.within(scope), g, shape);
            }
            for d in self.fitting(level, scope, &group_need) {
                if builder
                    .place_group(&self.within(Scope::Domain(d)), g, shape)
                    .is_some()
                {
                    return Some(());
                }
            }
        }
        if need.required {
            None
        } else {
            builder.place_group(&self.within(scope), g, shape)
        }
    }
}
