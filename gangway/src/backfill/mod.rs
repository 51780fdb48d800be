//! Backfill: the availability profile and the capacity views built on it.
//!
//! Reservations are pinned to specific nodes and devices. A job planned at time `T` is placed
//! with [`FutureView`] (free over `[T, T + limit)`), taking resources busy now (and free by `T`)
//! before resources idle now, nodes and devices alike ([`crate::placement::gang::BusyFirst`]),
//! so that resources free now stay usable for backfill. A job placed now uses [`NowView`]: free now minus
//! whatever a reservation needs while the job would still run, so a candidate that ends by a
//! reservation's start may use its resources (and is offered them first), and one that runs past
//! it may use only what the reservation does not need — EASY's "extra" rule, per device.
//! Both views offer nothing on a node whose maintenance window the job would overlap.

mod answers;
mod booked;
mod by_node;
mod cpu_total;
pub(crate) mod licenses;
pub(crate) mod profile;
pub(crate) mod running;

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use crate::model::ids::NodeId;
use crate::model::job::PlacementMode;
use crate::model::node::Node;
use crate::model::resources::NodeAmounts;
use crate::model::shape::TaskShape;
use crate::placement::{Assignment, Candidates, CapacityView, FreeIndex, Reach};
use crate::state::Maintenance;
pub(crate) use profile::Availability;
pub(crate) use running::RunningEnds;

/// Free capacity for a job starting now and running until `end`, less what is earmarked for
/// preemptors other than the job, plus what `released` names (the resources of preemption
/// victims being tried).
pub(crate) struct NowView<'a> {
    /// The pass's profile, once a reservation exists, over the running jobs' part.
    pub profile: Option<(&'a Availability, &'a RunningEnds)>,
    /// Now.
    pub now: u64,
    /// Now + the job's time limit.
    pub end: u64,
    /// Resources earmarked for other jobs, per node.
    pub held: &'a BTreeMap<NodeId, NodeAmounts>,
    /// Resources counted as free although still in use (tentative victims), per node.
    pub released: &'a BTreeMap<NodeId, NodeAmounts>,
    /// Maintenance windows: a node whose window overlaps `[now, end)` offers nothing.
    pub maintenance: &'a Maintenance,
    /// Whether [`CapacityView::holds_no_task`] may answer from what the node has free now
    /// (a shortcut; without it every node's room is read).
    pub quick_rejects: bool,
}

impl NowView<'_> {
    /// What `node` has free for the job, counting `released` (in place of what the view's
    /// own `released` names for it) as free: [`CapacityView::free`] for one node, for a caller
    /// that keeps its own tally of tentative victims ([`CapacityView::free`] passes the view's).
    pub(crate) fn free_releasing(
        &self,
        id: NodeId,
        node: &Node,
        released: Option<&NodeAmounts>,
    ) -> Option<NodeAmounts> {
        if !node.accepts_work() || self.maintenance.blocks(id, self.now, self.end) {
            return None;
        }
        let mut free = match self.profile {
            Some((p, running)) if p.is_reserved(id) => {
                p.free_over(running, (id, node), (self.now, self.end), false)
            }
            _ => node.free(),
        };
        if let Some(released) = released {
            free.add(released);
            free = node.capacity.minus(&node.capacity.minus(&free));
        }
        if let Some(held) = self.held.get(&id) {
            free.sub(held);
        }
        Some(free)
    }
}

impl CapacityView for NowView<'_> {
    fn free(&self, id: NodeId, node: &Node) -> Option<NodeAmounts> {
        self.free_releasing(id, node, self.released.get(&id))
    }

    /// Where nothing on the node is released, the room over `[now, end)` is at most what the
    /// node has free now (reservations, earmarks and maintenance only take more away): too
    /// few cpus or too little memory free now for one task is no room, without reading a
    /// reservation's timeline.
    fn holds_no_task(&self, id: NodeId, node: &Node, shape: &TaskShape) -> bool {
        if !self.quick_rejects || self.released.contains_key(&id) {
            return false;
        }
        let short = short_of_one_task(&node.capacity, &node.used, shape);
        debug_assert!(
            !short
                || (self.free(id, node)).is_none_or(|free| short_of_one_task(
                    &free,
                    &NodeAmounts::default(),
                    shape
                )),
            "a node short of room now has room over the window"
        );
        short
    }

    /// Nodes with a reservation, with resources held or released, and those a maintenance
    /// window blocks.
    fn departures(&self) -> Option<Vec<NodeId>> {
        let mut departures: Vec<NodeId> = self
            .held
            .keys()
            .chain(self.released.keys())
            .copied()
            .collect();
        let profile = self.profile.map(|(profile, _)| profile);
        departures.extend(profile.into_iter().flat_map(|p| p.reserved_nodes()));
        departures.extend(self.maintenance.blocked(self.now, self.end));
        departures.sort_unstable();
        departures.dedup();
        Some(departures)
    }
}

/// Free capacity over a future window `[start, end)`.
pub(crate) struct FutureView<'a> {
    /// The pass's profile.
    pub profile: &'a Availability,
    /// The running jobs' part of it.
    pub running: &'a RunningEnds,
    /// Window start.
    pub start: u64,
    /// Window end.
    pub end: u64,
    /// Maintenance windows: a node whose window overlaps `[start, end)` offers nothing.
    pub maintenance: &'a Maintenance,
    /// The job's plan from the last pass (empty: none): it breaks ties within the busy-first
    /// classes, see [`CapacityView::previous`].
    pub previous: &'a [Assignment],
    /// Whether [`CapacityView::holds_no_task`] may answer from the running jobs' holdings
    /// alone (a shortcut; without it every node's room is read).
    pub quick_rejects: bool,
}

impl FutureView<'_> {
    /// The window's first instant the profile reads: its start, or the profile's now.
    pub(crate) fn first_instant(&self) -> u64 {
        self.start.max(self.profile.now())
    }
}

impl CapacityView for FutureView<'_> {
    fn free(&self, id: NodeId, node: &Node) -> Option<NodeAmounts> {
        (node.accepts_work() && !self.maintenance.blocks(id, self.start, self.end)).then(|| {
            let window = (self.start, self.end);
            self.profile
                .free_over(self.running, (id, node), window, true)
        })
    }

    /// A future window pins a reservation: busy resources first.
    fn busy_first(&self) -> bool {
        true
    }

    fn previous(&self) -> &[Assignment] {
        self.previous
    }

    /// Where every running job on the node still holds what it holds at the window's start,
    /// the room over the window is at most the node's capacity less all they hold (reservations
    /// and earmarks only take more away): too few cpus or too little memory there for one task
    /// is no room, without reading the window.
    fn holds_no_task(&self, id: NodeId, node: &Node, shape: &TaskShape) -> bool {
        if !self.quick_rejects {
            return false;
        }
        self.running
            .all_held_at(id, self.profile.now(), self.first_instant())
            .is_some_and(|held| short_of_one_task(&node.capacity, &held, shape))
    }
}

/// Whether `amounts` less what is `held` of them leave too few cpus or too little memory for
/// one task of `shape`: the two views' quick reject.
fn short_of_one_task(amounts: &NodeAmounts, held: &NodeAmounts, shape: &TaskShape) -> bool {
    amounts.cpu_milli.saturating_sub(held.cpu_milli) < shape.cpu_milli
        || amounts.memory_mib.saturating_sub(held.memory_mib) < shape.memory_mib
}

/// A lower bound (at least `start`) on the start of any window of `len` milliseconds in which
/// the gang of `shapes` (at their counts) can fit: a node counts only from the earliest time
/// from which no instant of the window leaves it too little for one task, and the gang needs
/// that many nodes (its task count for one strict-spread group, else one). Trying start times
/// below the bound is wasted work; `u64::MAX`: never. Single-group gangs use the profile's
/// memo of earlier answers. Only the `needed` earliest nodes matter: a node's search gives up
/// once it is later than the `needed`-th earliest found so far, and none is searched once
/// `needed` nodes can take the window at `start` itself.
pub(crate) fn earliest_fit_bound(
    (profile, running): (&mut Availability, &RunningEnds),
    nodes: &[Option<Node>],
    shapes: &[TaskShape],
    start: u64,
    len: u64,
) -> u64 {
    let needed = match shapes {
        [only] if only.mode == PlacementMode::StrictSpread => only.count.max(1) as usize,
        _ => 1,
    };
    let need = |s: &TaskShape| (s.cpu_milli, s.memory_mib, s.whole_gpus());
    let slot = match shapes {
        [only] => Some(profile.need_slot(need(only))),
        _ => None,
    };
    // The `needed` earliest answers so far, in order.
    let mut earliest: Vec<u64> = Vec::with_capacity(needed + 1);
    let mut usable = 0;
    for (i, node) in nodes.iter().enumerate() {
        let Some(node) = node.as_ref().filter(|n| n.accepts_work()) else {
            continue;
        };
        usable += 1;
        if earliest.len() == needed && earliest[needed - 1] == start {
            continue;
        }
        let past = match earliest.get(needed - 1) {
            Some(&last) => last,
            None => u64::MAX,
        };
        let id = NodeId(i as u32);
        let answer = match slot {
            Some(slot) => profile.earliest_usable_memo(running, slot, id, node, (start, len), past),
            None => {
                let fits = |available: &NodeAmounts, used: &NodeAmounts| {
                    let fits = |s: &TaskShape| available.fits_task(used, node.gpu_count, need(s));
                    shapes.iter().any(fits)
                };
                profile.earliest_usable(running, (id, node), (start, len), past, fits)
            }
        };
        if answer <= past {
            let at = earliest.partition_point(|&t| t <= answer);
            earliest.insert(at, answer);
            earliest.truncate(needed);
        }
    }
    if usable < needed {
        return u64::MAX;
    }
    earliest.get(needed - 1).copied().unwrap_or(u64::MAX)
}

/// Candidates from the free index, with some nodes offered first.
///
/// Built outside gangway with [`IndexCandidates::new`] and
/// [`IndexCandidates::with_preferred`] (it is `#[non_exhaustive]`).
#[non_exhaustive]
pub struct IndexCandidates<'a> {
    /// The index.
    pub index: &'a FreeIndex,
    /// Offered before the rest (nodes with reservations, for jobs placed now), sorted by id.
    pub preferred: &'a [NodeId],
    /// Which nodes the index offers after them.
    pub reach: Reach,
}

impl<'a> IndexCandidates<'a> {
    /// The nodes `index` offers under `reach`, none offered first.
    pub fn new(index: &'a FreeIndex, reach: Reach) -> Self {
        IndexCandidates {
            index,
            preferred: &[],
            reach,
        }
    }

    /// The same candidates with `preferred` (sorted by id) offered before the rest.
    pub fn with_preferred(mut self, preferred: &'a [NodeId]) -> Self {
        self.preferred = preferred;
        self
    }
}

impl Candidates for IndexCandidates<'_> {
    fn visit(&self, shape: &TaskShape, f: &mut dyn FnMut(NodeId) -> ControlFlow<()>) {
        for id in self.preferred {
            if f(*id).is_break() {
                return;
            }
        }
        let _ = self.index.visit(shape, self.reach, &mut |id| {
            if self.preferred.binary_search(&id).is_ok() {
                ControlFlow::Continue(())
            } else {
                f(id)
            }
        });
    }

    fn visit_unalike(
        &self,
        shape: &TaskShape,
        departures: &[NodeId],
        f: &mut dyn FnMut(NodeId) -> ControlFlow<()>,
    ) {
        for id in self.preferred {
            if f(*id).is_break() {
                return;
            }
        }
        let lists = (departures, self.preferred);
        let all_levels = self.reach == Reach::Every;
        let _ = self.index.visit_unalike(shape, all_levels, lists, f);
    }
}

/// A reservation's candidates from a later time on: the free index's nodes at every level,
/// less those that hold no task now and where no running job releases anything by then
/// ([`FreeIndex::visit_later`]).
pub(crate) struct LaterCandidates<'a> {
    /// The index.
    pub index: &'a FreeIndex,
    /// The running jobs' holdings.
    pub running: &'a RunningEnds,
    /// The window's first instant: a node releasing by then is offered.
    pub at: u64,
}

impl Candidates for LaterCandidates<'_> {
    fn visit(&self, shape: &TaskShape, f: &mut dyn FnMut(NodeId) -> ControlFlow<()>) {
        let releases = |id| self.running.releases_on_by(id, self.at);
        let _ = self.index.visit_later(shape, &releases, f);
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::ids::JobId;
    use crate::model::shape::{GpuNeed, ModelMask};

    /// A seeded stream of numbers below a modulus (a linear congruential generator).
    pub(crate) fn numbers(mut seed: u64) -> impl FnMut(u64) -> u64 {
        move |modulo| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (seed >> 33) % modulo
        }
    }

    fn shape(cpus: u64, gpus: u16, count: u32, mode: PlacementMode) -> TaskShape {
        TaskShape {
            cpu_milli: cpus * 1_000,
            memory_mib: cpus * 2_000,
            gpu: if gpus == 0 {
                GpuNeed::None
            } else {
                GpuNeed::Whole(gpus)
            },
            models: ModelMask::default(),
            count,
            min_count: count,
            mode,
        }
    }

    /// The bound as defined: every usable node's earliest window, searched to the end, and the
    /// `needed`-th earliest of them.
    fn plain_bound(
        (profile, running): (&Availability, &RunningEnds),
        nodes: &[Option<Node>],
        shapes: &[TaskShape],
        (start, len): (u64, u64),
    ) -> u64 {
        let needed = match shapes {
            [only] if only.mode == PlacementMode::StrictSpread => only.count.max(1) as usize,
            _ => 1,
        };
        let mut answers: Vec<u64> = nodes
            .iter()
            .enumerate()
            .filter_map(|(i, n)| Some((NodeId(i as u32), n.as_ref()?)))
            .filter(|(_, n)| n.accepts_work())
            .map(|(id, n)| {
                let fits = |a: &NodeAmounts, u: &NodeAmounts| {
                    shapes.iter().any(|s| {
                        a.fits_task(u, n.gpu_count, (s.cpu_milli, s.memory_mib, s.whole_gpus()))
                    })
                };
                profile.earliest_usable(running, (id, n), (start, len), u64::MAX, fits)
            })
            .collect();
        answers.sort_unstable();
        answers.get(needed - 1).copied().unwrap_or(u64::MAX)
    }

    /// Giving up on nodes later than the gang's `needed`-th earliest, and skipping nodes once
    /// enough can start at once, never changes the bound: interleaving reservations with
    /// queries of single- and multi-group gangs, it equals the plain definition every time.
    #[test]
    fn the_fit_bound_equals_the_plain_definition() {
        let node = |gpus| {
            Some(Node::new(
                "n",
                NodeAmounts::full(8_000, 64_000, gpus),
                gpus,
                None,
            ))
        };
        let nodes = vec![node(4), None, node(4), node(2), node(4), node(4)];
        let mut profile = Availability::default();
        let running = RunningEnds::default();
        let mut next = numbers(5);
        for round in 0..3_000 {
            let id = NodeId([0, 2, 3, 4, 5][next(5) as usize]);
            let start = next(400) * 10;
            let mut used = NodeAmounts::full(next(5) * 1_000, next(3) * 8_000, 0);
            used.devices[next(2) as usize] = 1_000;
            profile.reserve(id, used, start, start + 1 + next(200) * 10);
            let mode = match next(3) {
                0 => PlacementMode::Spread,
                _ => PlacementMode::StrictSpread,
            };
            let first = shape(1 + next(6), next(3) as u16, 1 + next(5) as u32, mode);
            let shapes = match next(4) {
                0 => vec![first, shape(1 + next(4), next(2) as u16, 1, mode)],
                _ => vec![first],
            };
            let (from, len) = (next(300) * 10, 1 + next(40) * 20);
            let expected = plain_bound((&profile, &running), &nodes, &shapes, (from, len));
            assert_eq!(
                earliest_fit_bound((&mut profile, &running), &nodes, &shapes, from, len),
                expected,
                "round {round}: {shapes:?} from {from} len {len}"
            );
        }
    }

    fn cpus(units: u64) -> NodeAmounts {
        NodeAmounts::full(units * 1_000, 0, 0)
    }

    /// Four nodes of 8 cpus: a reservation of 6 cpus on node 0 over `[50, 150)`, a job holding
    /// 4 cpus of node 1 until 1,000, a maintenance window on node 2 over `[80, 90)`, node 3
    /// draining. The scheduler holds the maintenance window.
    fn views_fixture() -> (Vec<Node>, RunningEnds, Availability, crate::Scheduler) {
        use crate::model::node::NodeState;
        let mut nodes: Vec<Node> = (0..4)
            .map(|_| Node::new("n", NodeAmounts::full(8_000, 64_000, 0), 0, None))
            .collect();
        nodes[3].state = NodeState::Draining;
        nodes[1].used = cpus(4);
        let mut running = RunningEnds::default();
        running.add(JobId(0), [(NodeId(1), cpus(4))], 1_000);
        let mut profile = Availability::default();
        profile.reserve(NodeId(0), cpus(6), 50, 150);
        let cluster: crate::ClusterConfig = serde_json::from_str(
            r#"{"nodes": [{"name": "n0", "cpus": 8}, {"name": "n1", "cpus": 8},
                          {"name": "n2", "cpus": 8}, {"name": "n3", "cpus": 8}],
                "maintenance": [{"nodes": ["n2"], "start_ms": 80, "end_ms": 90}]}"#,
        )
        .unwrap();
        let s = crate::Scheduler::new(cluster).unwrap();
        (nodes, running, profile, s)
    }

    /// A view now offers each node what is free now, less what a reservation needs while the
    /// job would still run (EASY's extra rule), with the resources released counted free and
    /// those held for other preemptors taken off; a draining node and one in maintenance
    /// during the job offer nothing. Its departures are the nodes with reservations, with
    /// resources held or released, and those a maintenance window blocks.
    #[test]
    fn a_view_now_offers_what_reservations_earmarks_and_maintenance_leave() {
        let (nodes, running, profile, s) = views_fixture();
        let maintenance = &s.state().maintenance;
        let held = BTreeMap::from([(NodeId(1), cpus(1))]);
        let released = BTreeMap::from([(NodeId(1), cpus(2))]);
        let view = |end, profile| NowView {
            profile,
            now: 0,
            end,
            held: &held,
            released: &released,
            maintenance,
            quick_rejects: true,
        };
        let free = |view: &NowView, id: usize| {
            view.free(NodeId(id as u32), &nodes[id])
                .map(|free| free.cpu_milli / 1_000)
        };
        let with_profile = Some((&profile, &running));
        let until_40 = view(40, with_profile);
        let until_100 = view(100, with_profile);
        assert_eq!(
            free(&until_40, 0),
            Some(8),
            "ends before the reservation starts"
        );
        assert_eq!(
            free(&until_100, 0),
            Some(2),
            "runs into the reservation of 6"
        );
        assert_eq!(free(&view(100, None), 0), Some(8), "no reservation yet");
        for view in [&until_40, &until_100] {
            assert_eq!(free(view, 1), Some(5), "4 free, 2 released, 1 held");
            assert_eq!(free(view, 3), None, "draining");
        }
        assert_eq!(free(&until_40, 2), Some(8));
        assert_eq!(free(&until_100, 2), None, "in maintenance from 80");
        let ids = |ids: &[u32]| Some(ids.iter().map(|&i| NodeId(i)).collect::<Vec<_>>());
        assert_eq!(until_40.departures(), ids(&[0, 1]));
        assert_eq!(until_100.departures(), ids(&[0, 1, 2]));
        assert_eq!(view(40, None).departures(), ids(&[1]));
    }

    /// A future window offers each node what is free over the whole window, reservations
    /// and running jobs' holdings alike, and nothing on a draining node or one in maintenance
    /// during the window; it takes busy resources first and breaks ties by the job's last plan.
    #[test]
    fn a_future_window_offers_its_room_busy_first_save_on_nodes_draining_or_in_maintenance() {
        let (nodes, running, profile, s) = views_fixture();
        let previous = [Assignment {
            group: 0,
            node: NodeId(1),
            tasks: 1,
            gpus: Vec::new(),
            amounts: cpus(1),
        }];
        let view = |start, end| FutureView {
            profile: &profile,
            running: &running,
            start,
            end,
            maintenance: &s.state().maintenance,
            previous: &previous,
            quick_rejects: true,
        };
        let free = |view: &FutureView, id: usize| {
            view.free(NodeId(id as u32), &nodes[id])
                .map(|free| free.cpu_milli / 1_000)
        };
        let (late, early) = (view(100, 200), view(60, 120));
        for view in [&late, &early] {
            assert_eq!(free(view, 0), Some(2), "the reservation of 6 until 150");
            assert_eq!(free(view, 1), Some(4), "the job holds 4 until 1,000");
            assert_eq!(free(view, 3), None, "draining");
            assert!(view.busy_first());
            assert_eq!(view.previous(), previous);
        }
        assert_eq!(free(&late, 2), Some(8));
        assert_eq!(free(&early, 2), None, "in maintenance over [80, 90)");
        assert_eq!(free(&view(1_000, 1_100), 1), Some(8));
    }

    /// Candidates from the index come preferred nodes first; visited one per state class,
    /// the departing nodes come one by one. Planning ahead (`Reach::Every`) walks the nodes
    /// with too few GPUs free now too, a placement now only those with enough.
    #[test]
    fn index_candidates_offer_the_preferred_first_then_one_node_per_class_and_the_departing() {
        use crate::model::ids::ModelId;
        let mut nodes: Vec<Option<Node>> = (0..6)
            .map(|_| {
                let capacity = NodeAmounts::full(8_000, 64_000, 4);
                Some(Node::new("n", capacity, 4, Some(ModelId(0))))
            })
            .collect();
        // Node 5 has 2 of its 4 GPUs in use: too few for a task of 3.
        if let Some(node) = nodes[5].as_mut() {
            node.used.devices[0] = 1_000;
            node.used.devices[1] = 1_000;
        }
        let index = FreeIndex::build(&nodes, 1);
        let task = shape(1, 3, 1, PlacementMode::Spread);
        let offered = |reach, departures: &[NodeId], unalike: bool| {
            let candidates = IndexCandidates::new(&index, reach).with_preferred(&[NodeId(3)]);
            let mut ids = Vec::new();
            let mut visit = |id: NodeId| {
                ids.push(id.0);
                ControlFlow::Continue(())
            };
            match unalike {
                true => candidates.visit_unalike(&task, departures, &mut visit),
                false => candidates.visit(&task, &mut visit),
            }
            ids
        };
        let departing = [NodeId(1)];
        assert_eq!(offered(Reach::Every, &departing, false), [3, 5, 0, 1, 2, 4]);
        assert_eq!(offered(Reach::FreeGpus, &departing, false), [3, 0, 1, 2, 4]);
        assert_eq!(offered(Reach::Every, &departing, true), [3, 5, 0, 1]);
        assert_eq!(offered(Reach::FreeGpus, &departing, true), [3, 0, 1]);
        assert_eq!(offered(Reach::FreeGpus, &[], true), [3, 0]);
    }

    /// The quick reject reads the running jobs' holdings in force at the window's start from
    /// the profile's now: a holding past its release time is held at now only.
    #[test]
    fn a_quick_reject_reads_the_holdings_from_the_profile_s_now() {
        let node = Node::new("n", NodeAmounts::full(4_000, 32_000, 0), 0, None);
        let maintenance = Maintenance::default();
        let task = shape(1, 0, 1, PlacementMode::Spread);
        let rejects = |profile: &Availability, running: &RunningEnds, start: u64| {
            let view = FutureView {
                profile,
                running,
                start,
                end: start + 10,
                maintenance: &maintenance,
                previous: &[],
                quick_rejects: true,
            };
            view.holds_no_task(NodeId(0), &node, &task)
        };
        // Built at 0: a job holds every cpu until 1.
        let mut running = RunningEnds::default();
        running.add(JobId(0), [(NodeId(0), cpus(4))], 1);
        let at_zero = Availability::default();
        assert!(rejects(&at_zero, &running, 0));
        assert!(!rejects(&at_zero, &running, 1), "released at 1");
        // Built at 1,000: a job holds every cpu until 500, past: held at 1,000 only.
        let cluster: crate::ClusterConfig =
            serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 4}]}"#).unwrap();
        let s = crate::Scheduler::new(cluster).unwrap();
        let at_1000 = Availability::build(s.state(), 1_000);
        let mut running = RunningEnds::default();
        running.add(JobId(0), [(NodeId(0), cpus(4))], 500);
        assert!(rejects(&at_1000, &running, 1_000));
        assert!(
            !rejects(&at_1000, &running, 1_001),
            "released at the next instant"
        );
    }

    /// The quick reject of a future window is exact where it answers: on a node with running
    /// jobs' holdings and no reservation, whenever it says no task fits, the room read over the
    /// window holds none; and it does answer for windows before the first release.
    #[test]
    fn a_quick_reject_never_rejects_a_node_with_room() {
        let nodes = [Node::new("n", NodeAmounts::full(4_000, 32_000, 0), 0, None)];
        let maintenance = Maintenance::default();
        let profile = Availability::default();
        let mut next = numbers(11);
        let (mut rejected, mut room_read_empty) = (0, 0);
        for round in 0..2_000 {
            let mut running = RunningEnds::default();
            for job in 0..next(4) {
                let held = NodeAmounts {
                    cpu_milli: next(3) * 1_000,
                    memory_mib: next(3) * 10_000,
                    ..NodeAmounts::default()
                };
                running.add(JobId(job as u32), [(NodeId(0), held)], 1 + next(100) * 10);
            }
            let start = next(120) * 10;
            let view = FutureView {
                profile: &profile,
                running: &running,
                start,
                end: start + 1 + next(50) * 10,
                maintenance: &maintenance,
                previous: &[],
                quick_rejects: true,
            };
            let mut task = shape(1 + next(4), 0, 1, PlacementMode::Spread);
            task.memory_mib = next(4) * 10_000;
            let node = &nodes[0];
            let room = view
                .free(NodeId(0), node)
                .expect("an up node without maintenance");
            let fits = crate::placement::fit::tasks_fitting(node, &room, &task);
            room_read_empty += usize::from(fits == 0);
            if view.holds_no_task(NodeId(0), node, &task) {
                rejected += 1;
                assert_eq!(
                    fits, 0,
                    "round {round}: rejected, but {room:?} holds {task:?}"
                );
            }
        }
        assert!(
            rejected > 200 && rejected < room_read_empty,
            "{rejected} quick rejects of {room_read_empty} empty rooms"
        );
    }

    /// The quick reject of a window now is exact where it answers: whenever it says no task
    /// fits a node (by what the node has free now), the room read over the window, through its
    /// reservations and less what is held, holds none; it never answers for a node with
    /// resources released, nor without the shortcut.
    #[test]
    fn a_quick_reject_now_never_rejects_a_node_with_room() {
        let maintenance = Maintenance::default();
        let mut next = numbers(17);
        let (mut rejected, mut room_read_empty) = (0, 0);
        for round in 0..2_000 {
            let mut node = Node::new("n", NodeAmounts::full(4_000, 32_000, 0), 0, None);
            let mut running = RunningEnds::default();
            for job in 0..next(4) {
                let held = NodeAmounts {
                    cpu_milli: next(2) * 1_000,
                    memory_mib: next(2) * 8_000,
                    ..NodeAmounts::default()
                };
                node.used.add(&held);
                running.add(JobId(job as u32), [(NodeId(0), held)], 1 + next(100) * 10);
            }
            let mut profile = Availability::default();
            if next(4) > 0 {
                let start = next(60) * 10;
                let booked = NodeAmounts::full(next(3) * 1_000, next(3) * 8_000, 0);
                profile.reserve(NodeId(0), booked, start, start + 1 + next(50) * 10);
            }
            let held = BTreeMap::from([(NodeId(0), cpus(next(2)))]);
            let view = NowView {
                profile: Some((&profile, &running)),
                now: 0,
                end: 1 + next(80) * 10,
                held: &held,
                released: &NOTHING_RELEASED,
                maintenance: &maintenance,
                quick_rejects: true,
            };
            let mut task = shape(1 + next(3), 0, 1, PlacementMode::Spread);
            task.memory_mib = next(3) * 8_000;
            let room = view.free(NodeId(0), &node).expect("an up node");
            let fits = crate::placement::fit::tasks_fitting(&node, &room, &task);
            room_read_empty += usize::from(fits == 0);
            if view.holds_no_task(NodeId(0), &node, &task) {
                rejected += 1;
                assert_eq!(
                    fits, 0,
                    "round {round}: rejected, but {room:?} holds {task:?}"
                );
                let released = BTreeMap::from([(NodeId(0), node.used)]);
                let releasing = NowView {
                    released: &released,
                    ..view
                };
                assert!(!releasing.holds_no_task(NodeId(0), &node, &task));
                let reference = NowView {
                    quick_rejects: false,
                    ..view
                };
                assert!(!reference.holds_no_task(NodeId(0), &node, &task));
            }
        }
        assert!(
            rejected > 100 && rejected < room_read_empty,
            "{rejected} quick rejects of {room_read_empty} empty rooms"
        );
    }

    static NOTHING_RELEASED: BTreeMap<NodeId, NodeAmounts> = BTreeMap::new();
}
