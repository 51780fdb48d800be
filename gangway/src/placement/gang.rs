//! All-or-nothing placement of a whole gang (every task group of a job) on a capacity view.
//!
//! The rule, per task group, visiting candidate nodes best fit first (fewest free GPUs that can
//! hold a task, nodes without GPUs first for jobs that need none):
//! - `strict_pack`: of the nodes that hold every task, the one where they raise the request's
//!   [`ShapeMix`] fragmentation least, ties to the first visited (with an empty mix, or a
//!   profile's scorers ranking the nodes: the first such node); for an elastic group none of which fits whole, the node holding the most tasks
//!   at or above `min_count`;
//! - `pack`: as `strict_pack` when a node holds every task; otherwise the nodes holding the most
//!   tasks, largest first, until the group is placed (fewest nodes);
//! - `strict_spread`: one task on each of the first nodes that hold one;
//! - `spread`: one task per node on as many nodes as possible, then more tasks on the same nodes
//!   in the same order.
//!
//! With a [`NodeGate`] (a profile's node filters and scorers) a group sees only the nodes its
//! filters admit, in the scorers' order (ties in the visit order), and every rule above runs
//! on that order.
//!
//! The least-fragmenting choice (`strict_pack`, and `pack` when one node holds the group) visits
//! one node per state class of the free index ([`Candidates::visit_unalike`]) when the capacity
//! view names the nodes where it departs from what is free now ([`CapacityView::departures`]):
//! those, and the nodes earlier groups of the gang took from, are visited one by one. This is
//! exact, since alike nodes get the same answer and a later one never beats an earlier one.
//! Candidates seen through a [`NodeGate`] that filters or ranks, and views that may depart on
//! any node (future windows), visit every node.
//!
//! Groups are placed in order on what the earlier groups left. If any group cannot reach its
//! `min_count` the whole gang is refused: nothing is ever partially held. With a topology the
//! same rule runs inside the domains [`crate::placement::topology`] chooses.

use std::borrow::Cow;
use std::cell::RefCell;
use std::ops::ControlFlow;

use serde::{Deserialize, Serialize};

use crate::model::ids::{DomainId, NodeId};
use crate::model::job::PlacementMode;
use crate::model::node::Node;
use crate::model::resources::NodeAmounts;
use crate::model::shape::TaskShape;
use crate::placement::FreeTotals;
use crate::placement::fit::{busy_devices_first, take_tasks, tasks_fitting, used_mask};
use crate::placement::frag::ShapeMix;
use crate::placement::index::StateKey;
use crate::placement::score_memo::ScoreMemo;
use crate::placement::topology::GangTopology;

/// Tasks of one group on one node, with the devices and amounts they use.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Assignment {
    /// Task group index.
    pub group: usize,
    /// The node.
    pub node: NodeId,
    /// Tasks placed there.
    pub tasks: u32,
    /// Device indices (one per whole device; one per task for fractions).
    pub gpus: Vec<u32>,
    /// What the tasks use on the node.
    pub amounts: NodeAmounts,
}

/// The free capacity the placement may use on each node (now, or over a future window).
pub trait CapacityView {
    /// What `node` has free for the job being placed, or `None` when it cannot take it at all.
    fn free(&self, id: NodeId, node: &Node) -> Option<NodeAmounts>;

    /// The nodes taking work on which [`CapacityView::free`] may differ from
    /// [`Node::free`], sorted by id; `None` (the default) when it may differ on any node. On
    /// every other node taking work it answers exactly `Some(node.free())`.
    fn departures(&self) -> Option<Vec<NodeId>> {
        None
    }

    /// Whether the placement pins a reservation, which takes resources busy now (and free over
    /// its window) before resources idle now: nodes busy now first, then idle ones; within
    /// each, the nodes of the job's previous plan ([`CapacityView::previous`]) first, then the
    /// engine's order. False by default (a placement now has nothing busy to prefer).
    fn busy_first(&self) -> bool {
        false
    }

    /// The job's plan from the last pass, for a reservation ([`CapacityView::busy_first`]):
    /// among resources of the same busy/idle class, those it used come first, so that a plan
    /// stays put where the busy-first rule allows. Empty by default.
    fn previous(&self) -> &[Assignment] {
        &[]
    }

    /// True only where [`CapacityView::free`] leaves `node` no room for one task of `shape`
    /// (no free amounts, or too few cpus or too little memory): a cheap test that spares the
    /// placement reading the node's room. False by default (it then reads the room).
    fn holds_no_task(&self, id: NodeId, node: &Node, shape: &TaskShape) -> bool {
        let _ = (id, node, shape);
        false
    }
}

/// The order in which candidate nodes are offered for one task of a shape.
pub trait Candidates {
    /// Calls `f` on candidate nodes in preference order until it breaks.
    fn visit(&self, shape: &TaskShape, f: &mut dyn FnMut(NodeId) -> ControlFlow<()>);

    /// As [`Candidates::visit`], but a node may be left out when it is alike (same make,
    /// partitions and free amounts now) to a node offered before it and not in `departures`
    /// (sorted by id; see [`CapacityView::departures`]). The default leaves nothing out.
    fn visit_unalike(
        &self,
        shape: &TaskShape,
        departures: &[NodeId],
        f: &mut dyn FnMut(NodeId) -> ControlFlow<()>,
    ) {
        let _ = departures;
        self.visit(shape, f);
    }

    /// Where `id` stands for a task of `shape` under a profile's node scorers around the
    /// built-in node choice ([`NodeGate::node_choice_tier`]); `None` (the default) when the
    /// candidates are not ranked so.
    fn standing(&self, shape: &TaskShape, id: NodeId) -> Option<Standing> {
        let _ = (shape, id);
        None
    }
}

/// Where a candidate node stands under a profile's node scorers around the tier of the
/// built-in node choice ([`NodeGate::node_choice_tier`]), lower first: `before` ranks it by
/// the tiers before that one, `after` by the tiers after it. Nodes the scorers score alike
/// there stand alike.
///
/// ```
/// use gangway::placement::Standing;
/// let a = Standing { before: 0, after: 3 };
/// assert!(a < Standing { before: 1, after: 0 });
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Standing {
    /// The position of the first candidate that ties with this one in the tiers before the
    /// built-in's.
    pub before: u32,
    /// The position of the first candidate that ties with this one in every tier.
    pub after: u32,
}

/// A profile's say in placement: which nodes a task group may use (its node filters), the
/// order in which to try them (its node scorers), which devices a task takes (its device
/// choice) and the order of topology domains (its domain scorers). The engine still decides
/// whether and how much fits, and ignores a device pick that is not valid.
pub trait NodeGate {
    /// Whether [`NodeGate::admits`] can refuse a node.
    fn filters(&self) -> bool;

    /// Whether group `group` may use `node`.
    fn admits(&self, group: usize, node: NodeId) -> bool;

    /// Whether [`NodeGate::rank`] reorders candidates (else the visit order stands).
    fn ranks(&self) -> bool;

    /// Sorts `candidates` of group `group`, given in the engine's visit order, best first; a
    /// stable sort keeps the visit order among equals.
    fn rank(&self, group: usize, candidates: &mut Vec<NodeId>);

    /// The devices one task of group `group` takes on `node` out of `room`, as a bitmask of
    /// device indices (MIG slice indices for a MIG task); `None`: the engine's rule.
    fn choose_devices(
        &self,
        group: usize,
        node: NodeId,
        room: &NodeAmounts,
        mix: &ShapeMix,
    ) -> Option<u128>;

    /// The tier of the built-in node choice when the profile keeps it beside scorers that rank
    /// ([`NodeGate::ranks`]); `None` (the default): the scorers' order alone decides.
    fn node_choice_tier(&self) -> Option<usize> {
        None
    }

    /// As [`NodeGate::rank`], and each candidate's [`Standing`] around the built-in node
    /// choice's tier, in the sorted order. Only asked when [`NodeGate::node_choice_tier`] is
    /// set; the default ranks and has every candidate stand alike.
    fn rank_standing(&self, group: usize, candidates: &mut Vec<NodeId>) -> Vec<Standing> {
        self.rank(group, candidates);
        vec![Standing::default(); candidates.len()]
    }

    /// Sorts the topology domains that could hold the gang (or group), given best fit first,
    /// best first by the profile's domain scorers; a stable sort keeps the given order among
    /// equals. `totals` holds each domain's free amounts, by domain id.
    fn rank_domains(&self, domains: &mut Vec<DomainId>, totals: &[FreeTotals]);
}

impl std::fmt::Debug for dyn NodeGate + '_ {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NodeGate")
    }
}

/// What a gang needs: its groups, exclusivity and partition filter.
///
/// Built outside gangway with [`GangRequest::new`] and the `with_*` methods (it is
/// `#[non_exhaustive]`).
///
/// ```
/// use gangway::model::{GpuNeed, PartitionId, TaskShape};
/// use gangway::placement::{GangRequest, ShapeMix};
/// let shapes = [TaskShape::new(1_000, 0, GpuNeed::Whole(1)).with_count(2)];
/// let mix = ShapeMix::default();
/// let request = GangRequest::new(&shapes, PartitionId(0), &mix).with_exclusive(true);
/// assert!(request.exclusive && request.topology.is_none() && request.gate.is_none());
/// ```
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct GangRequest<'a> {
    /// Task groups in order.
    pub shapes: &'a [TaskShape],
    /// Whole nodes only.
    pub exclusive: bool,
    /// Only nodes of this partition (by bit).
    pub partition: crate::model::ids::PartitionId,
    /// The task shapes fragmentation is measured against (empty: plain best fit).
    pub mix: &'a ShapeMix,
    /// The cluster's topology and the groups' constraints; `None` without a topology.
    pub topology: Option<GangTopology<'a>>,
    /// The profile's node filters and scorers for this job; `None`: every node, visit order.
    pub gate: Option<&'a dyn NodeGate>,
    /// Fragmentation scores kept across a pass's placements now, where its caller knows they
    /// hold ([`ScoreMemo`]); `None`: scored at every placement.
    pub(crate) scores: Option<&'a ScoreMemo>,
}

impl<'a> GangRequest<'a> {
    /// The gang of groups `shapes` on nodes of `partition`, fragmentation measured against
    /// `mix`: not exclusive, without topology and without a gate (every node, visit order).
    pub fn new(
        shapes: &'a [TaskShape],
        partition: crate::model::ids::PartitionId,
        mix: &'a ShapeMix,
    ) -> Self {
        GangRequest {
            shapes,
            exclusive: false,
            partition,
            mix,
            topology: None,
            gate: None,
            scores: None,
        }
    }

    /// The same request for whole nodes only (`true`) or not.
    pub fn with_exclusive(mut self, exclusive: bool) -> Self {
        self.exclusive = exclusive;
        self
    }

    /// The same request under `topology`.
    pub fn with_topology(mut self, topology: GangTopology<'a>) -> Self {
        self.topology = Some(topology);
        self
    }

    /// The same request with a profile's say through `gate`.
    pub fn with_gate(mut self, gate: &'a dyn NodeGate) -> Self {
        self.gate = Some(gate);
        self
    }
}

/// Candidates as a [`NodeGate`] lets the groups of one gang see them: filtered, and ranked
/// once per group when the gate ranks.
struct Gated<'a> {
    inner: &'a dyn Candidates,
    gate: &'a dyn NodeGate,
    shapes: &'a [TaskShape],
    ranked: RefCell<Vec<Option<Ranked>>>,
}

/// One group's candidates in the gate's order, and where each stands (by node index) when the
/// gate keeps the built-in node choice beside its scorers.
#[derive(Clone)]
struct Ranked {
    order: Vec<NodeId>,
    standings: Vec<Option<Standing>>,
}

impl Gated<'_> {
    /// The group `shape` belongs to: the gang's shapes are visited by reference.
    fn group(&self, shape: &TaskShape) -> usize {
        self.shapes
            .iter()
            .position(|s| std::ptr::eq(s, shape))
            .or_else(|| self.shapes.iter().position(|s| s == shape))
            .unwrap_or(0)
    }
}

impl Candidates for Gated<'_> {
    fn visit(&self, shape: &TaskShape, f: &mut dyn FnMut(NodeId) -> ControlFlow<()>) {
        let group = self.group(shape);
        if !self.gate.ranks() {
            self.inner.visit(shape, &mut |id| {
                if self.gate.admits(group, id) {
                    f(id)
                } else {
                    ControlFlow::Continue(())
                }
            });
            return;
        }
        self.rank(group, shape);
        let order = self.ranked.borrow()[group]
            .as_ref()
            .map(|r| r.order.clone())
            .unwrap_or_default();
        for id in order {
            if f(id).is_break() {
                return;
            }
        }
    }

    fn standing(&self, shape: &TaskShape, id: NodeId) -> Option<Standing> {
        if !self.gate.ranks() || self.gate.node_choice_tier().is_none() {
            return None;
        }
        let group = self.group(shape);
        self.rank(group, shape);
        let ranked = self.ranked.borrow();
        ranked[group].as_ref()?.standings.get(id.index()).copied()?
    }
}

impl Gated<'_> {
    /// Ranks group `group`'s admitted candidates, once per gang.
    fn rank(&self, group: usize, shape: &TaskShape) {
        if self.ranked.borrow().get(group).is_some_and(Option::is_some) {
            return;
        }
        let mut order = Vec::new();
        self.inner.visit(shape, &mut |id| {
            if self.gate.admits(group, id) {
                order.push(id);
            }
            ControlFlow::Continue(())
        });
        let mut standings = Vec::new();
        if self.gate.node_choice_tier().is_some() {
            let stand = self.gate.rank_standing(group, &mut order);
            let size = order.iter().map(|id| id.index() + 1).max().unwrap_or(0);
            standings.resize(size, None);
            for (id, standing) in order.iter().zip(stand) {
                standings[id.index()] = Some(standing);
            }
        } else {
            self.gate.rank(group, &mut order);
        }
        let mut ranked = self.ranked.borrow_mut();
        if ranked.len() <= group {
            ranked.resize(group + 1, None);
        }
        ranked[group] = Some(Ranked { order, standings });
    }
}

/// Candidates for a reservation ([`CapacityView::busy_first`]): the nodes with something in
/// use now, then the nodes wholly idle now. Only idle resources can take a backfill job at
/// once, so a reservation that takes the busy nodes first (those still busy over its window
/// offer no room and are passed over) leaves the most idle nodes to backfill. Within each
/// class the nodes of the job's previous plan ([`CapacityView::previous`]) come first, so that
/// a plan stays put where the rule allows it; then the inner (engine's) order. A profile's
/// scorers rank this order, so among nodes they score alike the busy come first, then the
/// previous plan's, then the engine's order.
pub(crate) struct BusyFirst<'a> {
    /// The engine's order.
    pub(crate) inner: &'a dyn Candidates,
    /// The nodes, by id: what each has in use now.
    pub(crate) nodes: &'a [Option<Node>],
    /// The reservation's window, which knows the job's previous plan.
    pub(crate) view: &'a dyn CapacityView,
}

/// Where node `id` (`node`, `None` when unknown) ranks for a reservation, lower first: busy
/// now before idle now; within each, the previous plan's first ([`BusyFirst`]).
fn reservation_rank(node: Option<&Node>, planned: &PlannedNodes, id: NodeId) -> (bool, bool) {
    (idle_now(node), !planned.contains(id))
}

/// Whether a node (`None` when unknown) has nothing in use now: a reservation takes it after
/// every node busy now ([`BusyFirst`]).
pub(crate) fn idle_now(node: Option<&Node>) -> bool {
    node.is_none_or(|node| node.used == NodeAmounts::default())
}

/// The nodes a plan has tasks on, a bit per node id: a reservation asks about every node it
/// visits.
#[derive(Debug, Default)]
pub(crate) struct PlannedNodes {
    words: Vec<u64>,
}

impl PlannedNodes {
    /// The nodes `plan` has tasks on.
    pub(crate) fn of(plan: &[Assignment]) -> Self {
        let mut words = Vec::new();
        for assignment in plan {
            let (word, bit) = (assignment.node.index() / 64, assignment.node.index() % 64);
            if words.len() <= word {
                words.resize(word + 1, 0);
            }
            words[word] |= 1u64 << bit;
        }
        PlannedNodes { words }
    }

    /// Whether the plan has tasks on `id`.
    pub(crate) fn contains(&self, id: NodeId) -> bool {
        let (word, bit) = (id.index() / 64, id.index() % 64);
        self.words.get(word).is_some_and(|w| w >> bit & 1 == 1)
    }

    fn is_empty(&self) -> bool {
        self.words.is_empty()
    }
}

impl Candidates for BusyFirst<'_> {
    /// The inner order's nodes, sorted (stably): busy before idle, and within each the previous
    /// plan's nodes first.
    fn visit(&self, shape: &TaskShape, f: &mut dyn FnMut(NodeId) -> ControlFlow<()>) {
        let planned = PlannedNodes::of(self.view.previous());
        // A stable sort by four ranks. The nodes of the first rank that can hold any (busy and
        // planned; busy, without a previous plan) are offered as the inner order meets them,
        // the others kept by rank and offered after: a placement that finds its nodes among
        // the first stops the walk there.
        let index = |(idle, unplanned): (bool, bool)| u8::from(idle) * 2 + u8::from(unplanned);
        let first = index((false, planned.is_empty()));
        // The others with their rank, in one vector sized once (a node is offered once).
        let mut later: Vec<(u8, NodeId)> = Vec::with_capacity(self.nodes.len());
        let mut stopped = false;
        self.inner.visit(shape, &mut |id| {
            let node = self.nodes.get(id.index()).and_then(Option::as_ref);
            let rank = index(reservation_rank(node, &planned, id));
            if rank != first {
                later.push((rank, id));
                return ControlFlow::Continue(());
            }
            let flow = f(id);
            stopped = flow.is_break();
            flow
        });
        if stopped {
            return;
        }
        for rank in 0..4 {
            for &(_, id) in later.iter().filter(|(r, _)| *r == rank) {
                if f(id).is_break() {
                    return;
                }
            }
        }
    }
}

/// Places a whole gang or nothing.
///
/// Returns the assignments, grouped by task group in order, or `None` when some group cannot
/// reach its `min_count`.
pub fn place_gang(
    nodes: &[Option<Node>],
    candidates: &dyn Candidates,
    view: &dyn CapacityView,
    request: GangRequest<'_>,
) -> Option<Vec<Assignment>> {
    let busy_first;
    let candidates = if view.busy_first() {
        busy_first = BusyFirst {
            inner: candidates,
            nodes,
            view,
        };
        &busy_first as &dyn Candidates
    } else {
        candidates
    };
    let gated;
    let candidates = match request.gate {
        Some(gate) if gate.filters() || gate.ranks() => {
            gated = Gated {
                inner: candidates,
                gate,
                shapes: request.shapes,
                ranked: RefCell::new(Vec::new()),
            };
            &gated as &dyn Candidates
        }
        _ => candidates,
    };
    if let Some(topology) = request.topology {
        return super::topology::place(nodes, candidates, view, request, topology);
    }
    let mut gang = GangBuilder::new(nodes, view, request);
    for (group, shape) in request.shapes.iter().enumerate() {
        gang.place_group(candidates, group, shape)?;
    }
    Some(gang.out)
}

/// A node chosen for some of a group's tasks: how many, and the room it has for them.
pub(super) struct Pick {
    node: NodeId,
    tasks: u32,
    room: NodeAmounts,
}

/// One gang being placed: what its groups took so far.
pub(super) struct GangBuilder<'a> {
    nodes: &'a [Option<Node>],
    view: &'a dyn CapacityView,
    request: GangRequest<'a>,
    /// What earlier groups of this gang took, per node, sorted by node: the assignments
    /// `out[..folded]` summed by node, brought up to date as each group begins (the group
    /// being placed takes each node once, so it never reads its own picks).
    taken: Vec<(NodeId, NodeAmounts)>,
    folded: usize,
    /// What the job's previous plan ([`CapacityView::previous`]) gave each group on each
    /// node, sorted by `(group, node)` and one assignment per pair: the plan itself when it
    /// is so already (a pin's plan is), else its amounts summed per pair.
    planned: Cow<'a, [Assignment]>,
    pub(super) out: Vec<Assignment>,
}

impl<'a> GangBuilder<'a> {
    pub(super) fn new(
        nodes: &'a [Option<Node>],
        view: &'a dyn CapacityView,
        request: GangRequest<'a>,
    ) -> Self {
        let previous = view.previous();
        let key = |a: &Assignment| (a.group, a.node);
        let planned = if previous.is_sorted_by(|a, b| key(a) < key(b)) {
            Cow::Borrowed(previous)
        } else {
            let mut summed: Vec<Assignment> = previous
                .iter()
                .map(|a| Assignment {
                    gpus: Vec::new(),
                    ..*a
                })
                .collect();
            summed.sort_by_key(key);
            sum_alike(&mut summed, key, |a| &mut a.amounts);
            Cow::Owned(summed)
        };
        GangBuilder {
            nodes,
            view,
            request,
            taken: Vec::new(),
            folded: 0,
            planned,
            out: Vec::new(),
        }
    }

    /// Brings [`GangBuilder::taken`] up to what every assignment made so far takes.
    fn fold_taken(&mut self) {
        if self.folded == self.out.len() {
            return;
        }
        let made = &self.out[self.folded..];
        self.taken.extend(made.iter().map(|a| (a.node, a.amounts)));
        self.folded = self.out.len();
        // Stable: the amounts of one node are summed in the order they were taken.
        self.taken.sort_by_key(|(id, _)| *id);
        sum_alike(&mut self.taken, |(id, _)| *id, |(_, amounts)| amounts);
    }

    /// What earlier groups of this gang took on `id`.
    fn taken_on(&self, id: NodeId) -> Option<NodeAmounts> {
        let at = self.taken.binary_search_by_key(&id, |(n, _)| *n).ok()?;
        Some(self.taken[at].1)
    }

    fn node(&self, id: NodeId) -> Option<&Node> {
        self.nodes.get(id.index()).and_then(Option::as_ref)
    }

    /// What the gang can still use on `id`.
    pub(super) fn room(&self, id: NodeId) -> Option<NodeAmounts> {
        let node = self.node(id)?;
        if !node.partitions.contains(self.request.partition) {
            return None;
        }
        let free = self.view.free(id, node)?;
        match self.taken_on(id) {
            Some(taken) => Some(free.minus(&taken)),
            None if self.request.exclusive && free != node.capacity => None,
            None => Some(free),
        }
    }

    /// How many tasks of `shape` fit on `id`, and the room they fit in (`None`: none fit).
    fn fit(&self, id: NodeId, shape: &TaskShape) -> Option<Pick> {
        let node = self.node(id)?;
        if self.view.holds_no_task(id, node, shape) {
            return None;
        }
        let room = self.room(id)?;
        let tasks = tasks_fitting(node, &room, shape);
        (tasks > 0).then_some(Pick {
            node: id,
            tasks,
            room,
        })
    }

    /// Places one group on `candidates`, or leaves everything as it was.
    pub(super) fn place_group(
        &mut self,
        candidates: &dyn Candidates,
        group: usize,
        shape: &TaskShape,
    ) -> Option<()> {
        self.fold_taken();
        let chosen = match shape.mode {
            PlacementMode::StrictPack => self.choose_strict_pack(candidates, group, shape)?,
            PlacementMode::Pack => self.choose_pack(candidates, group, shape)?,
            PlacementMode::StrictSpread => self.choose_spread(candidates, shape, true)?,
            PlacementMode::Spread => self.choose_spread(candidates, shape, false)?,
        };
        self.out.reserve(chosen.len());
        for pick in chosen {
            self.commit(group, shape, pick);
        }
        Some(())
    }

    fn choose_strict_pack(
        &self,
        candidates: &dyn Candidates,
        group: usize,
        shape: &TaskShape,
    ) -> Option<Vec<Pick>> {
        if let Some(whole) = self.least_fragmenting(candidates, group, shape) {
            return Some(vec![whole]);
        }
        let mut best: Option<Pick> = None;
        candidates.visit(shape, &mut |id| {
            if let Some(fit) = self.fit(id, shape)
                && fit.tasks >= shape.min_count
                && best.as_ref().is_none_or(|b| fit.tasks > b.tasks)
            {
                best = Some(fit);
            }
            ControlFlow::Continue(())
        });
        best.map(|b| vec![b])
    }

    fn choose_pack(
        &self,
        candidates: &dyn Candidates,
        group: usize,
        shape: &TaskShape,
    ) -> Option<Vec<Pick>> {
        if let Some(whole) = self.least_fragmenting(candidates, group, shape) {
            return Some(vec![whole]);
        }
        let mut fits: Vec<Pick> = Vec::with_capacity(shape.count as usize);
        candidates.visit(shape, &mut |id| {
            fits.extend(self.fit(id, shape));
            ControlFlow::Continue(())
        });
        // Largest first; the visit order breaks ties (stable sort).
        fits.sort_by_key(|fit| std::cmp::Reverse(fit.tasks));
        take_until(fits, shape)
    }

    /// The node holding every task of the group where they raise fragmentation least (ties: the
    /// first visited); nodes in the same state score alike and are scored once. A reservation
    /// ([`CapacityView::busy_first`]) takes a node with something in use now before any node
    /// idle now, whatever their scores, and within each class a node of the job's previous plan
    /// ([`CapacityView::previous`]) before any other. A group needing no GPU can only raise
    /// fragmentation, so a node where it raises none ends the search (later nodes are in no
    /// better class, [`BusyFirst`]).
    ///
    /// The answer on a node depends only on its room ([`ScoreKey`] of it, fit) and partitions,
    /// and a node alike to an earlier one can never be chosen over it (same score, visited
    /// later) nor be the first with a new score. So when the view says where it departs from
    /// what nodes have free now, the candidates are visited one per state class
    /// ([`Candidates::visit_unalike`]), nodes this gang already took from and departing nodes
    /// one by one: the same answer, and the same device choices asked for, in time independent
    /// of how many nodes are alike. Candidates filtered or ranked by a profile visit every node.
    fn least_fragmenting(
        &self,
        candidates: &dyn Candidates,
        group: usize,
        shape: &TaskShape,
    ) -> Option<Pick> {
        let mix = self.request.mix;
        let ranked = self.request.gate.is_some_and(|gate| gate.ranks());
        // The built-in choice beside the scorers: every candidate that holds the group is
        // ranked by (its standing before the built-in's tier, the built-in's score, its
        // standing after), ties to the first visited.
        let beside = ranked
            && self
                .request
                .gate
                .is_some_and(|gate| gate.node_choice_tier().is_some());
        let busy_first = self.view.busy_first();
        let planned_nodes = if busy_first {
            PlannedNodes::of(self.view.previous())
        } else {
            PlannedNodes::default()
        };
        // (standing before, busy-first rank, fragmentation added, GPU share left, standing
        // after) and the node's pick; the standings are 0 unless `beside`.
        let mut best: Option<(ChoiceRank, Pick)> = None;
        // Few states are scored per group: a list is quicker than a map.
        let mut scored: Vec<(ScoreKey, (i64, u64))> = Vec::new();
        let mut devices = Vec::new();
        let mut consider = |id: NodeId| {
            let (Some(node), Some(room)) = (self.node(id), self.room(id)) else {
                return ControlFlow::Continue(());
            };
            if tasks_fitting(node, &room, shape) < shape.count {
                return ControlFlow::Continue(());
            }
            // With a profile's scorers (without the built-in beside them), their order decides:
            // the first node that holds the group; so does the visit order with an empty mix.
            if !beside && (mix.is_empty() || ranked) {
                let pick = Pick {
                    node: id,
                    tasks: shape.count,
                    room,
                };
                best = Some(((0, false, false, 0, 0, 0), pick));
                return ControlFlow::Break(());
            }
            let standing = if beside {
                candidates.standing(shape, id).unwrap_or_default()
            } else {
                Standing::default()
            };
            let planned = self.planned_on(group, id);
            let key = ScoreKey::of(node, &room, busy_first.then_some(&planned));
            let known = scored.iter().find(|(k, _)| *k == key).map(|(_, s)| *s);
            // An empty mix scores nothing: the busy-first rank and the visit order decide.
            let known = known.or_else(|| mix.is_empty().then_some((0, 0)));
            let (delta, left) = known.unwrap_or_else(|| {
                let mut score = || {
                    let mut after = room;
                    let choose =
                        |room: &NodeAmounts| self.choose_devices(group, id, shape, room, &planned);
                    devices.clear();
                    take_tasks(
                        node,
                        &mut after,
                        shape,
                        shape.count,
                        &mut devices,
                        Some(&choose),
                    );
                    let delta = mix.fragmentation(node, &after) as i64
                        - mix.fragmentation(node, &room) as i64;
                    let left: u64 = after.devices[..node.gpu_count]
                        .iter()
                        .map(|d| u64::from(*d))
                        .sum();
                    (delta, left)
                };
                let kept = self
                    .request
                    .scores
                    .filter(|_| !busy_first && node.mig.is_empty());
                let score = match kept {
                    Some(memo) => {
                        let partition = self.request.partition;
                        memo.score((partition, shape), key.state.clone(), score)
                    }
                    None => score(),
                };
                scored.push((key, score));
                score
            });
            let (idle, elsewhere) = if busy_first {
                reservation_rank(Some(node), &planned_nodes, id)
            } else {
                (false, false)
            };
            let score = (
                standing.before,
                idle,
                elsewhere,
                delta,
                left,
                standing.after,
            );
            if best.as_ref().is_none_or(|(b, _)| score < *b) {
                let pick = Pick {
                    node: id,
                    tasks: shape.count,
                    room,
                };
                best = Some((score, pick));
            }
            if !beside && (delta, left) == (0, 0) && shape.gpu == crate::model::shape::GpuNeed::None
            {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        };
        match self.departures() {
            Some(departures) => candidates.visit_unalike(shape, &departures, &mut consider),
            None => candidates.visit(shape, &mut consider),
        }
        best.map(|(_, pick)| pick)
    }

    /// The nodes on which this gang's room may differ from what they have free now: the view's
    /// departures and the nodes earlier groups took from, sorted; `None` when it may anywhere.
    fn departures(&self) -> Option<Vec<NodeId>> {
        let mut departures = self.view.departures()?;
        departures.extend(self.taken.iter().map(|(id, _)| *id));
        departures.sort_unstable();
        departures.dedup();
        Some(departures)
    }

    fn choose_spread(
        &self,
        candidates: &dyn Candidates,
        shape: &TaskShape,
        strict: bool,
    ) -> Option<Vec<Pick>> {
        let mut fits: Vec<Pick> = Vec::with_capacity(shape.count as usize);
        candidates.visit(shape, &mut |id| {
            fits.extend(self.fit(id, shape));
            // One task on each of `count` nodes is the widest spread: no need to look further.
            if fits.len() as u32 >= shape.count {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
        // One task on each node found, then (unless strict) more on each in turn, up to its fit.
        let mut placed = fits.len() as u32;
        for pick in &mut fits {
            let fit = std::mem::replace(&mut pick.tasks, 1);
            if !strict {
                let more = (fit - 1).min(shape.count - placed);
                pick.tasks += more;
                placed += more;
            }
        }
        (placed >= shape.min_count && placed > 0).then_some(fits)
    }

    /// What the job's previous plan ([`CapacityView::previous`]) gave group `group` on `id`.
    fn planned_on(&self, group: usize, id: NodeId) -> NodeAmounts {
        self.planned
            .binary_search_by_key(&(group, id), |a| (a.group, a.node))
            .map_or_else(|_| NodeAmounts::default(), |at| self.planned[at].amounts)
    }

    /// The devices one task of `group` (of `shape`) takes on `id` out of `room`: the profile's
    /// pick if it has one; for a reservation ([`CapacityView::busy_first`]) else devices busy
    /// now before devices idle now, within each the devices `planned` for the group by its
    /// previous plan first; `None`: the engine's rule.
    fn choose_devices(
        &self,
        group: usize,
        id: NodeId,
        shape: &TaskShape,
        room: &NodeAmounts,
        planned: &NodeAmounts,
    ) -> Option<u128> {
        let picked = self
            .request
            .gate
            .and_then(|gate| gate.choose_devices(group, id, room, self.request.mix));
        match (picked, self.node(id)) {
            (None, Some(node)) if self.view.busy_first() => {
                busy_devices_first(node, room, shape.gpu, &node.used, planned)
            }
            (picked, _) => picked,
        }
    }

    /// Takes `pick.tasks` tasks of group `group` on `pick.node`, out of `pick.room` (the room
    /// [`GangBuilder::fit`] found there: nothing on that node changed since).
    fn commit(&mut self, group: usize, shape: &TaskShape, pick: Pick) {
        let Pick {
            node: id,
            tasks,
            mut room,
        } = pick;
        let Some(node) = self.node(id) else {
            return;
        };
        debug_assert_eq!(
            Some(room),
            self.room(id),
            "a pick's room is the node's room now"
        );
        let mut gpus = Vec::new();
        // Read only where tasks take devices.
        let choose = |room: &NodeAmounts| {
            let planned = self.planned_on(group, id);
            self.choose_devices(group, id, shape, room, &planned)
        };
        let amounts = take_tasks(node, &mut room, shape, tasks, &mut gpus, Some(&choose));
        self.out.push(Assignment {
            group,
            node: id,
            tasks,
            gpus,
            amounts,
        });
    }
}

/// Whether a given set of assignments (a plan made earlier) still fits `view` as it is: every
/// node in the request's partition and taking work, with room for what the assignments use there
/// (the whole node for an exclusive gang).
pub fn assignments_fit(
    nodes: &[Option<Node>],
    view: &dyn CapacityView,
    request: GangRequest<'_>,
    assignments: &[Assignment],
) -> bool {
    let node = |id: NodeId| nodes.get(id.index()).and_then(Option::as_ref);
    if let Some(gate) = request.gate
        && assignments.iter().any(|a| !gate.admits(a.group, a.node))
    {
        return false;
    }
    let per_node = crate::placement::charges(nodes, assignments, request.exclusive);
    per_node.iter().all(|(id, amounts)| {
        node(*id).is_some_and(|n| {
            n.partitions.contains(request.partition)
                && view.free(*id, n).is_some_and(|free| free.covers(amounts))
        })
    })
}

/// A node's rank in the least-fragmenting choice, lower first: its standing before the built-in
/// node choice's tier, busy-first rank (idle now, not in the previous plan), fragmentation
/// added, GPU share left, and its standing after that tier.
type ChoiceRank = (u32, bool, bool, i64, u64, u32);

/// What makes two nodes alike for a fragmentation score: their make and what is free
/// ([`StateKey`]), and for a reservation what steers its choice of devices (those in use now,
/// those its previous plan used there).
#[derive(PartialEq, Eq)]
struct ScoreKey {
    state: StateKey,
    preferred: Option<((u32, u128), (u32, u128))>,
}

impl ScoreKey {
    /// `planned`: for a reservation, what its previous plan used on the node.
    fn of(node: &Node, free: &NodeAmounts, planned: Option<&NodeAmounts>) -> Self {
        let devices = |a: &NodeAmounts| (used_mask(node, a), a.mig);
        ScoreKey {
            state: StateKey::of(node, free),
            preferred: planned.map(|planned| (devices(&node.used), devices(planned))),
        }
    }
}

/// Sums the amounts of neighbouring entries of `entries` (sorted by `key`) with equal keys
/// into the first of them, leaving one entry per key.
fn sum_alike<T, K: PartialEq>(
    entries: &mut Vec<T>,
    key: impl Fn(&T) -> K,
    mut amounts: impl FnMut(&mut T) -> &mut NodeAmounts,
) {
    entries.dedup_by(|later, first| {
        let same = key(later) == key(first);
        if same {
            let later = *amounts(later);
            amounts(first).add(&later);
        }
        same
    });
}

/// Takes nodes in order until `count` tasks are placed; `None` below `min_count`.
fn take_until(fits: Vec<Pick>, shape: &TaskShape) -> Option<Vec<Pick>> {
    let mut chosen = Vec::new();
    let mut placed = 0;
    for mut pick in fits {
        if placed >= shape.count {
            break;
        }
        pick.tasks = pick.tasks.min(shape.count - placed);
        placed += pick.tasks;
        chosen.push(pick);
    }
    (placed >= shape.min_count && placed > 0).then_some(chosen)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::ModelId;
    use crate::model::ids::PartitionId;
    use crate::model::shape::GpuNeed;

    /// Offers the nodes in index order.
    pub(crate) struct InOrder(pub(crate) usize);

    impl Candidates for InOrder {
        fn visit(&self, _: &TaskShape, f: &mut dyn FnMut(NodeId) -> ControlFlow<()>) {
            for i in 0..self.0 {
                if f(NodeId(i as u32)).is_break() {
                    return;
                }
            }
        }
    }

    /// What the nodes have free now; `busy_first` for a reservation's view of it.
    pub(crate) struct Now {
        pub(crate) busy_first: bool,
    }

    impl CapacityView for Now {
        fn free(&self, _: NodeId, node: &Node) -> Option<NodeAmounts> {
            Some(node.free())
        }

        fn busy_first(&self) -> bool {
            self.busy_first
        }
    }

    /// A node of 64 cpus and `gpus` GPUs in partition 0, the first `used` of them in use.
    pub(crate) fn node(name: &str, gpus: usize, used: usize) -> Option<Node> {
        let model = (gpus > 0).then_some(ModelId(0));
        let mut node = Node::new(name, NodeAmounts::full(64_000, 512_000, gpus), gpus, model);
        node.partitions.insert(PartitionId(0));
        node.used = NodeAmounts::full(0, 0, used);
        Some(node)
    }

    /// One-cpu tasks of one GPU (four) and of four GPUs (one): a node with fewer than four
    /// whole GPUs free loses them to the four-GPU tasks.
    pub(crate) fn mix() -> ShapeMix {
        let mut mix = ShapeMix::default();
        mix.record(&TaskShape::new(1_000, 1_000, GpuNeed::Whole(1)), 4);
        mix.record(&TaskShape::new(1_000, 1_000, GpuNeed::Whole(4)), 1);
        mix
    }

    /// One task of one cpu and `gpus` GPUs, packed.
    pub(crate) fn task(gpus: u16) -> TaskShape {
        let gpu = match gpus {
            0 => GpuNeed::None,
            k => GpuNeed::Whole(k),
        };
        TaskShape::new(1_000, 1_000, gpu)
    }

    /// The names of the nodes `shape` is placed on.
    pub(crate) fn placed_on(
        nodes: &[Option<Node>],
        shape: TaskShape,
        mix: &ShapeMix,
        gate: Option<&dyn NodeGate>,
        view: &dyn CapacityView,
        scores: Option<&ScoreMemo>,
    ) -> Vec<String> {
        let shapes = [shape];
        let request = GangRequest {
            gate,
            scores,
            ..GangRequest::new(&shapes, PartitionId(0), mix)
        };
        let placed = place_gang(nodes, &InOrder(nodes.len()), view, request).expect("placed");
        placed
            .iter()
            .map(|a| nodes[a.node.index()].as_ref().unwrap().name.clone())
            .collect()
    }

    /// Eight-GPU nodes with 8, 4, 2, 1 and 1 GPUs free: a one-GPU task adds 0, adds three
    /// GPUs lost, and takes one of those lost on the last three, leaving 1, 0 and 0.
    fn eight_gpu_nodes() -> Vec<Option<Node>> {
        vec![
            node("n8", 8, 0),
            node("n4", 8, 4),
            node("n2", 8, 6),
            node("n1", 8, 7),
            node("n1b", 8, 7),
        ]
    }

    #[test]
    fn a_group_goes_where_it_raises_fragmentation_least_then_leaves_least_ties_to_the_first() {
        let nodes = eight_gpu_nodes();
        let now = Now { busy_first: false };
        let mix = mix();
        assert_eq!(placed_on(&nodes, task(1), &mix, None, &now, None), ["n1"]);
        // Without a mix, the first node that holds the group.
        let plain = ShapeMix::default();
        assert_eq!(placed_on(&nodes, task(1), &plain, None, &now, None), ["n8"]);
        // Four GPUs: only `n8` and `n4` hold them; on `n4` nothing is left to lose.
        assert_eq!(placed_on(&nodes, task(4), &mix, None, &now, None), ["n4"]);
    }

    #[test]
    fn a_group_without_gpus_goes_where_it_leaves_no_gpu_idle() {
        // Nothing is stranded on either (64 cpus drive the mix's GPUs); `c` has no GPU to
        // leave.
        let nodes = vec![node("g", 8, 0), node("c", 0, 0), node("c2", 0, 0)];
        let now = Now { busy_first: false };
        assert_eq!(placed_on(&nodes, task(0), &mix(), None, &now, None), ["c"]);
    }

    #[test]
    fn a_group_with_gpus_passes_a_node_it_fills_for_one_whose_gpus_its_cpus_strand() {
        // Both have four GPUs free; on `few` two cpus cannot drive them at the mix's ratio
        // (stranded GPUs are fragmentation), and the group takes them all.
        let mut few = node("few", 8, 4);
        if let Some(few) = few.as_mut() {
            few.capacity.cpu_milli = 2_000;
        }
        let nodes = vec![node("n4", 8, 4), few];
        let now = Now { busy_first: false };
        assert_eq!(
            placed_on(&nodes, task(4), &mix(), None, &now, None),
            ["few"]
        );
    }

    /// A test gate's [`NodeGate`] methods that admit every node.
    macro_rules! admits_every_node {
        () => {
            fn filters(&self) -> bool {
                false
            }

            fn admits(&self, _: usize, _: NodeId) -> bool {
                true
            }
        };
    }

    /// A test gate's [`NodeGate`] methods that keep the engine's device choice and the
    /// domains' order as given.
    macro_rules! engine_devices_and_domains {
        () => {
            fn choose_devices(
                &self,
                _: usize,
                _: NodeId,
                _: &NodeAmounts,
                _: &ShapeMix,
            ) -> Option<u128> {
                None
            }

            fn rank_domains(&self, _: &mut Vec<DomainId>, _: &[FreeTotals]) {}
        };
    }

    /// Ranks the nodes by most GPUs free; the built-in node choice at tier `beside`.
    struct MostFree<'a> {
        nodes: &'a [Option<Node>],
        beside: Option<usize>,
    }

    impl NodeGate for MostFree<'_> {
        admits_every_node!();

        fn ranks(&self) -> bool {
            true
        }

        fn rank(&self, _: usize, candidates: &mut Vec<NodeId>) {
            let free = |id: &NodeId| {
                let node = self.nodes[id.index()].as_ref().unwrap();
                std::cmp::Reverse(node.free_whole_gpus())
            };
            candidates.sort_by_key(free);
        }

        engine_devices_and_domains!();

        fn node_choice_tier(&self) -> Option<usize> {
            self.beside
        }
    }

    #[test]
    fn a_profile_s_scorers_decide_alone_unless_the_built_in_choice_is_kept_beside_them() {
        let nodes = eight_gpu_nodes();
        let now = Now { busy_first: false };
        let mix = mix();
        let alone = MostFree {
            nodes: &nodes,
            beside: None,
        };
        assert_eq!(
            placed_on(&nodes, task(1), &mix, Some(&alone), &now, None),
            ["n8"]
        );
        // Beside scorers that rank every node alike, the built-in choice decides.
        let beside = MostFree {
            nodes: &nodes,
            beside: Some(0),
        };
        assert_eq!(
            placed_on(&nodes, task(1), &mix, Some(&beside), &now, None),
            ["n1"]
        );
    }

    /// A view that implements only [`CapacityView::free`]: what the nodes have free now, but
    /// none on the nodes in `none`.
    struct OnlyFree(&'static [u32]);

    impl CapacityView for OnlyFree {
        fn free(&self, id: NodeId, node: &Node) -> Option<NodeAmounts> {
            (!self.0.contains(&id.0)).then(|| node.free())
        }
    }

    #[test]
    fn a_view_that_names_no_departures_has_every_node_visited() {
        // `n1` and `n1b` are alike now (one GPU free each), but the view offers nothing on
        // `n1`: a view naming no departures may depart anywhere, so the index offers `n1b` too,
        // and the task takes its lost GPU rather than one of `n8`'s.
        let nodes = eight_gpu_nodes();
        let index = crate::placement::FreeIndex::build(&nodes, 1);
        let candidates = crate::backfill::IndexCandidates {
            index: &index,
            preferred: &[],
            reach: crate::placement::Reach::FreeGpus,
        };
        let mix = mix();
        let shapes = [task(1)];
        let request = GangRequest::new(&shapes, PartitionId(0), &mix);
        let placed = place_gang(&nodes, &candidates, &OnlyFree(&[3]), request).expect("placed");
        assert_eq!(placed.len(), 1);
        assert_eq!(placed[0].node, NodeId(4), "{placed:?}");
    }

    #[test]
    fn a_view_that_pins_no_reservation_takes_the_first_node_busy_or_not() {
        // Without a mix the visit order decides: the idle node first. A reservation's view
        // (busy first) takes the busy one.
        let nodes = vec![node("idle", 8, 0), node("busy", 8, 1)];
        let plain = ShapeMix::default();
        assert_eq!(
            placed_on(&nodes, task(1), &plain, None, &OnlyFree(&[]), None),
            ["idle"]
        );
        let reservation = Now { busy_first: true };
        assert_eq!(
            placed_on(&nodes, task(1), &plain, None, &reservation, None),
            ["busy"]
        );
    }

    /// What the nodes have free now, the view saying so: it departs on no node.
    struct Exact;

    impl CapacityView for Exact {
        fn free(&self, _: NodeId, node: &Node) -> Option<NodeAmounts> {
            Some(node.free())
        }

        fn departures(&self) -> Option<Vec<NodeId>> {
            Some(Vec::new())
        }
    }

    #[test]
    fn candidates_that_leave_no_alike_node_out_are_all_visited_where_the_view_names_departures() {
        // `InOrder` keeps the default `visit_unalike`: every node, as `visit` offers them. The
        // least-fragmenting choice visits that way, and takes `n1` (not the node the most
        // tasks fit, `n8`).
        let nodes = eight_gpu_nodes();
        assert_eq!(
            placed_on(&nodes, task(1), &mix(), None, &Exact, None),
            ["n1"]
        );
    }

    /// Ranks the nodes by most GPUs free and keeps every default of [`NodeGate`] (no built-in
    /// choice beside it).
    struct MostFreeByDefault<'a>(&'a [Option<Node>]);

    impl NodeGate for MostFreeByDefault<'_> {
        admits_every_node!();

        fn ranks(&self) -> bool {
            true
        }

        fn rank(&self, group: usize, candidates: &mut Vec<NodeId>) {
            MostFree {
                nodes: self.0,
                beside: None,
            }
            .rank(group, candidates);
        }

        engine_devices_and_domains!();
    }

    #[test]
    fn a_gate_s_defaults_keep_no_built_in_choice_and_rank_every_candidate_alike() {
        let nodes = eight_gpu_nodes();
        let now = Now { busy_first: false };
        // No built-in choice beside the scorers: their first node, not the least fragmenting.
        let gate = MostFreeByDefault(&nodes);
        assert_eq!(
            placed_on(&nodes, task(1), &mix(), Some(&gate), &now, None),
            ["n8"]
        );
        // Beside the scorers, every candidate stands alike by default (`rank_standing`): with
        // an empty mix, which scores nothing, the first node in the scorers' order, `n8`,
        // though the engine offers `n1` first.
        let nodes = vec![node("n1", 8, 7), node("n8", 8, 0)];
        let beside = MostFree {
            nodes: &nodes,
            beside: Some(0),
        };
        let plain = ShapeMix::default();
        assert_eq!(
            placed_on(&nodes, task(1), &plain, Some(&beside), &now, None),
            ["n8"]
        );
    }

    /// Ranks the nodes by most GPUs free at the tier before the built-in node choice (tier 1):
    /// nodes with as many free stand alike.
    struct MostFreeFirst<'a>(&'a [Option<Node>]);

    impl NodeGate for MostFreeFirst<'_> {
        admits_every_node!();

        fn ranks(&self) -> bool {
            true
        }

        fn rank(&self, group: usize, candidates: &mut Vec<NodeId>) {
            MostFreeByDefault(self.0).rank(group, candidates);
        }

        engine_devices_and_domains!();

        fn node_choice_tier(&self) -> Option<usize> {
            Some(1)
        }

        fn rank_standing(&self, group: usize, candidates: &mut Vec<NodeId>) -> Vec<Standing> {
            self.rank(group, candidates);
            let free = |id: NodeId| self.0[id.index()].as_ref().unwrap().free_whole_gpus();
            let mut standings: Vec<Standing> = Vec::new();
            for (at, id) in candidates.iter().enumerate() {
                let before = match at.checked_sub(1) {
                    Some(p) if free(candidates[p]) == free(*id) => standings[p].before,
                    _ => at as u32,
                };
                standings.push(Standing {
                    before,
                    after: at as u32,
                });
            }
            standings
        }
    }

    #[test]
    fn a_scorer_before_the_built_in_choice_outranks_it() {
        // The built-in choice alone takes `n1`; a scorer before it that prefers the most GPUs
        // free takes `n8`, in any order the engine offers them.
        let mut nodes = eight_gpu_nodes();
        nodes.reverse();
        let now = Now { busy_first: false };
        let gate = MostFreeFirst(&nodes);
        assert_eq!(
            placed_on(&nodes, task(1), &mix(), Some(&gate), &now, None),
            ["n8"]
        );
        // Scorers alone take their first node, whatever the engine offers first.
        let alone = MostFree {
            nodes: &nodes,
            beside: None,
        };
        assert_eq!(
            placed_on(&nodes, task(1), &mix(), Some(&alone), &now, None),
            ["n8"]
        );
    }

    /// Admits group `g` on node `g` alone.
    struct OwnNode {
        ranks: bool,
    }

    impl NodeGate for OwnNode {
        fn filters(&self) -> bool {
            true
        }

        fn admits(&self, group: usize, node: NodeId) -> bool {
            node.index() == group
        }

        fn ranks(&self) -> bool {
            self.ranks
        }

        fn rank(&self, _: usize, _: &mut Vec<NodeId>) {}

        engine_devices_and_domains!();
    }

    #[test]
    fn a_gate_filters_each_group_s_nodes_by_the_group() {
        let nodes = vec![node("a", 8, 0), node("b", 8, 0)];
        let shapes = [task(1), task(1)];
        let plain = ShapeMix::default();
        let now = Now { busy_first: false };
        for ranks in [false, true] {
            let gate = OwnNode { ranks };
            let request = GangRequest::new(&shapes, PartitionId(0), &plain).with_gate(&gate);
            let placed = place_gang(&nodes, &InOrder(2), &now, request).expect("placed");
            let on: Vec<(usize, u32)> = placed.iter().map(|a| (a.group, a.node.0)).collect();
            assert_eq!(on, [(0, 0), (1, 1)], "ranks: {ranks}");
        }
    }

    #[test]
    fn a_request_shows_its_gate() {
        let shapes = [task(1)];
        let plain = ShapeMix::default();
        let gate = OwnNode { ranks: false };
        let request = GangRequest::new(&shapes, PartitionId(0), &plain).with_gate(&gate);
        assert!(
            format!("{request:?}").contains("gate: Some(NodeGate)"),
            "{request:?}"
        );
    }

    /// A reservation's window over which every node is wholly free, with the job's previous
    /// plan `plan`.
    struct Window {
        plan: Vec<Assignment>,
    }

    impl CapacityView for Window {
        fn free(&self, _: NodeId, node: &Node) -> Option<NodeAmounts> {
            Some(node.capacity)
        }

        fn busy_first(&self) -> bool {
            true
        }

        fn previous(&self) -> &[Assignment] {
            &self.plan
        }
    }

    /// A task of group 0 on node `node` in a plan.
    fn planned(node: u32) -> Assignment {
        Assignment {
            group: 0,
            node: NodeId(node),
            tasks: 1,
            gpus: vec![0],
            amounts: NodeAmounts::full(1_000, 1_000, 1),
        }
    }

    #[test]
    fn a_plan_s_nodes_are_those_it_has_tasks_on() {
        let plan: Vec<Assignment> = [200, 63, 0, 64, 63].into_iter().map(planned).collect();
        let nodes = PlannedNodes::of(&plan);
        let held: Vec<u32> = (0..300).filter(|&i| nodes.contains(NodeId(i))).collect();
        assert_eq!(held, [0, 63, 64, 200]);
        assert!(!nodes.is_empty());
        assert!(PlannedNodes::of(&[]).is_empty());
        assert!(!PlannedNodes::of(&[]).contains(NodeId(0)));
    }

    #[test]
    fn a_reservation_visits_busy_nodes_then_idle_ones_each_its_previous_plan_s_first() {
        // Nodes 2, 3 and 5 are busy now; the previous plan used 3 and 1 (3 twice).
        let nodes: Vec<Option<Node>> = (0..6)
            .map(|i| node(&format!("n{i}"), 8, usize::from([2, 3, 5].contains(&i))))
            .collect();
        let offered = |plan: Vec<Assignment>, stop_after: usize| {
            let window = Window { plan };
            let busy_first = BusyFirst {
                inner: &InOrder(nodes.len()),
                nodes: &nodes,
                view: &window,
            };
            let mut seen = Vec::new();
            busy_first.visit(&task(1), &mut |id| {
                seen.push(id.0);
                match seen.len() < stop_after {
                    true => ControlFlow::Continue(()),
                    false => ControlFlow::Break(()),
                }
            });
            seen
        };
        let plan = vec![planned(3), planned(1), planned(3)];
        assert_eq!(offered(plan.clone(), 6), [3, 2, 5, 1, 0, 4]);
        assert_eq!(
            offered(plan, 1),
            [3],
            "the walk stops where the placement does"
        );
        assert_eq!(offered(Vec::new(), 6), [2, 3, 5, 0, 1, 4]);
        assert_eq!(offered(Vec::new(), 2), [2, 3]);
    }

    #[test]
    fn a_reservation_takes_devices_busy_now_first() {
        // One node whose devices 6 and 7 are in use now; over the window all eight are free.
        let mut busy = node("busy", 8, 0);
        if let Some(busy) = busy.as_mut() {
            busy.used.devices[6] = 1_000;
            busy.used.devices[7] = 1_000;
        }
        let nodes = vec![busy];
        let shapes = [task(2)];
        let plain = ShapeMix::default();
        let request = GangRequest::new(&shapes, PartitionId(0), &plain);
        let window = Window { plan: Vec::new() };
        let placed = place_gang(&nodes, &InOrder(1), &window, request).expect("placed");
        assert_eq!(placed[0].gpus, [6, 7]);
        // Placed now (not a reservation), the engine's rule: the lowest free.
        let now = Now { busy_first: false };
        let placed = place_gang(&nodes, &InOrder(1), &now, request).expect("placed");
        assert_eq!(placed[0].gpus, [0, 1]);
        // So too where the view frees the devices in use (a preemption stopping their job).
        let placed = place_gang(&nodes, &InOrder(1), &OnlyCapacity, request).expect("placed");
        assert_eq!(placed[0].gpus, [0, 1]);
    }

    /// What the nodes would have free now with every running job stopped.
    struct OnlyCapacity;

    impl CapacityView for OnlyCapacity {
        fn free(&self, _: NodeId, node: &Node) -> Option<NodeAmounts> {
            Some(node.capacity)
        }
    }

    #[test]
    fn a_reservation_takes_the_devices_of_its_previous_plan_first_among_idle_ones() {
        // An idle node; the previous plan gave group 0 device 5 there.
        let nodes = vec![node("idle", 8, 0)];
        let mut amounts = NodeAmounts::full(1_000, 1_000, 0);
        amounts.devices[5] = 1_000;
        let plan = vec![Assignment {
            group: 0,
            node: NodeId(0),
            tasks: 1,
            gpus: vec![5],
            amounts,
        }];
        let shapes = [task(1)];
        let plain = ShapeMix::default();
        let request = GangRequest::new(&shapes, PartitionId(0), &plain);
        let placed = place_gang(&nodes, &InOrder(1), &Window { plan }, request).expect("placed");
        assert_eq!(placed[0].gpus, [5]);
        let window = Window { plan: Vec::new() };
        let placed = place_gang(&nodes, &InOrder(1), &window, request).expect("placed");
        assert_eq!(placed[0].gpus, [0]);
    }

    #[test]
    fn a_later_group_visits_the_nodes_earlier_groups_took_from_one_by_one() {
        // Two one-GPU groups: the first takes `n1`'s last GPU. `n1b` was alike to `n1` before,
        // and is no longer: the second group, visiting one node per class of what is free now,
        // still sees it, and takes its lost GPU.
        let nodes = eight_gpu_nodes();
        let index = crate::placement::FreeIndex::build(&nodes, 1);
        let candidates = crate::backfill::IndexCandidates {
            index: &index,
            preferred: &[],
            reach: crate::placement::Reach::FreeGpus,
        };
        let mix = mix();
        let shapes = [task(1), task(1)];
        let request = GangRequest::new(&shapes, PartitionId(0), &mix);
        let placed = place_gang(&nodes, &candidates, &Exact, request).expect("placed");
        let on: Vec<(usize, u32)> = placed.iter().map(|a| (a.group, a.node.0)).collect();
        assert_eq!(on, [(0, 3), (1, 4)]);
    }

    #[test]
    fn an_exclusive_gang_takes_only_wholly_free_nodes_and_shares_them_among_its_groups() {
        let nodes = vec![node("busy", 8, 1), node("idle", 8, 0)];
        let now = Now { busy_first: false };
        let plain = ShapeMix::default();
        let shapes = [task(1), task(2)];
        let on = |exclusive: bool| {
            let request =
                GangRequest::new(&shapes, PartitionId(0), &plain).with_exclusive(exclusive);
            let placed = place_gang(&nodes, &InOrder(2), &now, request).expect("placed");
            placed
                .iter()
                .map(|a| (a.group, a.node.0, a.gpus.clone()))
                .collect::<Vec<_>>()
        };
        // Not exclusive: the first node that holds each group.
        assert_eq!(on(false), [(0, 0, vec![1]), (1, 0, vec![2, 3])]);
        // Exclusive: only the idle node, which the second group shares with the first.
        assert_eq!(on(true), [(0, 1, vec![0]), (1, 1, vec![1, 2])]);
    }

    #[test]
    fn a_plan_fits_where_its_nodes_are_in_the_partition_admitted_and_have_room() {
        // `idle` and `full` (seven GPUs of eight in use) in partition 0, `other` in 1 alone.
        let mut other = node("other", 8, 0);
        if let Some(other) = other.as_mut() {
            other.partitions = Default::default();
            other.partitions.insert(PartitionId(1));
        }
        let nodes = vec![node("idle", 8, 0), node("full", 8, 7), other];
        let now = Now { busy_first: false };
        let plain = ShapeMix::default();
        let shapes = [task(2), task(1)];
        let request = GangRequest::new(&shapes, PartitionId(0), &plain);
        // Group `group` on `node`, with devices from 7 down.
        let on = |group: usize, node: u32, gpus: u32| {
            let gpus: Vec<u32> = (8 - gpus..8).collect();
            let mut amounts = NodeAmounts::full(1_000, 1_000, 0);
            for &d in &gpus {
                amounts.devices[d as usize] = 1_000;
            }
            Assignment {
                group,
                node: NodeId(node),
                tasks: 1,
                gpus,
                amounts,
            }
        };
        let fits = |request: GangRequest<'_>, plan: &[Assignment]| {
            assignments_fit(&nodes, &now, request, plan)
        };
        assert!(fits(request, &[on(0, 0, 2), on(1, 1, 1)]));
        assert!(
            !fits(request, &[on(0, 0, 2), on(1, 2, 1)]),
            "another partition"
        );
        assert!(!fits(request, &[on(0, 1, 2), on(1, 0, 1)]), "no room");
        assert!(!fits(
            request.with_exclusive(true),
            &[on(0, 0, 2), on(1, 1, 1)]
        ));
        assert!(fits(
            request.with_exclusive(true),
            &[on(0, 0, 2), on(1, 0, 1)]
        ));
        // A gate admitting group `g` on node `g` alone.
        let gate = OwnNode { ranks: false };
        assert!(fits(request.with_gate(&gate), &[on(0, 0, 2), on(1, 1, 1)]));
        assert!(!fits(request.with_gate(&gate), &[on(0, 1, 1), on(1, 0, 1)]));
    }

    /// Where a group of `count` one-cpu tasks (at least `min_count`) laid out by `mode` goes on
    /// nodes of 64 cpus, but for the cpus given: (node, tasks), or `None`.
    fn laid_out(
        cpus: &[u64],
        count: u32,
        min_count: u32,
        mode: PlacementMode,
    ) -> Option<Vec<(u32, u32)>> {
        let nodes: Vec<Option<Node>> = cpus
            .iter()
            .enumerate()
            .map(|(i, &cpus)| {
                let mut n = node(&format!("n{i}"), 0, 0);
                if let Some(n) = n.as_mut() {
                    n.capacity.cpu_milli = cpus * 1_000;
                }
                n
            })
            .collect();
        let mut shape = task(0).with_min_count(min_count);
        shape.count = count;
        shape.mode = mode;
        let shapes = [shape];
        let plain = ShapeMix::default();
        let request = GangRequest::new(&shapes, PartitionId(0), &plain);
        let now = Now { busy_first: false };
        let placed = place_gang(&nodes, &InOrder(nodes.len()), &now, request)?;
        Some(placed.iter().map(|a| (a.node.0, a.tasks)).collect())
    }

    #[test]
    fn a_spread_group_takes_one_task_a_node_then_more_on_the_same_nodes_in_order() {
        use PlacementMode::{Spread, StrictSpread};
        // One task on each of the first `count` nodes: the rest are not visited.
        assert_eq!(
            laid_out(&[8, 8, 8], 2, 2, Spread),
            Some(vec![(0, 1), (1, 1)])
        );
        // More tasks than nodes: one each, then more on each in turn up to its room.
        assert_eq!(laid_out(&[8, 8], 3, 3, Spread), Some(vec![(0, 2), (1, 1)]));
        assert_eq!(laid_out(&[1, 8], 4, 4, Spread), Some(vec![(0, 1), (1, 3)]));
        assert_eq!(laid_out(&[2, 2], 6, 3, Spread), Some(vec![(0, 2), (1, 2)]));
        assert_eq!(laid_out(&[2, 2], 6, 5, Spread), None);
        // Strictly spread: one task a node, at least `min_count` of them.
        assert_eq!(
            laid_out(&[8, 8], 3, 2, StrictSpread),
            Some(vec![(0, 1), (1, 1)])
        );
        assert_eq!(laid_out(&[8, 8], 3, 3, StrictSpread), None);
        // No node with room: refused, even where no task is required.
        assert_eq!(laid_out(&[0, 0], 2, 0, Spread), None);
        assert_eq!(laid_out(&[0, 0], 2, 0, StrictSpread), None);
    }

    #[test]
    fn an_elastic_packed_group_none_of_which_fits_whole_takes_the_node_holding_most() {
        use PlacementMode::{Pack, StrictPack};
        // Strictly packed: the first node holding the most tasks, if at least `min_count`.
        assert_eq!(
            laid_out(&[3, 5, 5, 4], 8, 2, StrictPack),
            Some(vec![(1, 5)])
        );
        assert_eq!(
            laid_out(&[3, 5, 5, 4], 8, 5, StrictPack),
            Some(vec![(1, 5)])
        );
        assert_eq!(laid_out(&[3, 5, 5, 4], 8, 6, StrictPack), None);
        // Packed: the nodes holding most first (ties in order) until the group is placed.
        assert_eq!(
            laid_out(&[3, 5, 5, 4], 8, 8, Pack),
            Some(vec![(1, 5), (2, 3)])
        );
        assert_eq!(
            laid_out(&[3, 2, 4], 12, 6, Pack),
            Some(vec![(2, 4), (0, 3), (1, 2)])
        );
        assert_eq!(laid_out(&[3, 2, 4], 12, 10, Pack), None);
        assert_eq!(laid_out(&[0, 0], 2, 0, Pack), None);
    }
}
