//! An index of free capacity: per GPU model, nodes bucketed by how many whole GPUs they have
//! free, so a fit check visits only nodes that could hold the task, best fit first. Within a
//! bucket the nodes are also grouped by state class (make, partitions and free
//! amounts), so that a placement whose answer on a node depends only on its class can be
//! offered one node per class ([`FreeIndex::visit_unalike`]) instead of every node.

mod alike;
mod node_set;

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use serde::{Deserialize, Serialize};

use crate::model::ids::NodeId;
use crate::model::node::Node;
use crate::model::resources::{MAX_DEVICES, NodeAmounts};
use crate::model::shape::{GpuNeed, TaskShape};

pub(crate) use alike::StateKey;
use alike::{AlikeGroups, GroupId, Joined, NodeClass};
use node_set::NodeSet;

/// Nodes that accept work, bucketed by GPU model ("class") and free whole GPUs ("level").
///
/// The class after the last model holds nodes without GPUs. Visiting a shape walks levels from
/// the fewest free GPUs that can hold one task upwards (best fit: whole free nodes stay free for
/// big gangs), across the allowed models level by level, nodes in id order within a bucket.
#[derive(Clone, Debug, Default)]
pub struct FreeIndex {
    classes: Vec<Vec<NodeSet>>,
    /// The same buckets' nodes grouped by state class: per bucket, its groups in class order.
    alike: Vec<Vec<BTreeMap<NodeClass, GroupId>>>,
    /// The groups' members.
    groups: AlikeGroups,
    /// By level, a bit per class whose bucket at that level holds a node: a visit walks only
    /// those buckets, not every model at every level.
    occupied: Vec<u128>,
    slots: Vec<Option<Slot>>,
    /// What each indexed node has free now (zero for nodes not taking work).
    counted: Vec<FreeTotals>,
    /// The sum of `counted`.
    totals: FreeTotals,
    /// Scratch for [`FreeIndex::refresh_used`]: the nodes making one move together (empty
    /// between calls).
    moving: Vec<NodeId>,
    /// Per node, its cpus (thousandths) where it takes work; `None` where it does not or is
    /// gone.
    working: Vec<Option<u64>>,
    /// The sum of `working`'s cpus.
    working_cpu_milli: u64,
    /// How many of `working`'s nodes take no work.
    not_working: usize,
}

/// Which of the index's nodes a visit offers ([`FreeIndex::visit`]).
///
/// ```
/// use std::ops::ControlFlow;
/// use gangway::model::{GpuNeed, Node, NodeAmounts, NodeId, TaskShape};
/// use gangway::placement::{FreeIndex, Reach};
///
/// // Two cpu-only nodes of 4 cpus; the first has every cpu in use.
/// let mut busy = Node::new("busy", NodeAmounts::full(4_000, 0, 0), 0, None);
/// busy.used.cpu_milli = 4_000;
/// let idle = Node::new("idle", NodeAmounts::full(4_000, 0, 0), 0, None);
/// let nodes = vec![Some(busy), Some(idle)];
/// let index = FreeIndex::build(&nodes, 0);
/// let task = TaskShape::new(1_000, 0, GpuNeed::None);
/// let offered = |reach| {
///     let mut seen = Vec::new();
///     let _ = index.visit(&task, reach, &mut |id: NodeId| {
///         seen.push(id.index());
///         ControlFlow::Continue(())
///     });
///     seen
/// };
/// assert_eq!(offered(Reach::FreeGpus), [0, 1]);
/// assert_eq!(offered(Reach::OneTaskFree), [1]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reach {
    /// Every node of an allowed model, busiest first: planning ahead, when what is busy now
    /// may be free by then.
    Every,
    /// The nodes with enough whole GPUs free now for one task.
    FreeGpus,
    /// Of those, only the nodes whose free cpus and memory now hold one task too. For a
    /// placement now whose view never offers more than a node has free, and whose nodes no
    /// plug-in filters or ranks (a skipped node is a node they are not asked about): the
    /// nodes skipped are those on which the placement would find no room.
    OneTaskFree,
}

/// Where an indexed node is: its bucket (GPU model class, free whole GPUs) and group of alike
/// nodes.
#[derive(Clone, Copy, Debug)]
struct Slot {
    class: usize,
    level: usize,
    group: GroupId,
}

/// Free amounts summed over nodes that take work: a quick necessary condition for a fit now.
///
/// Read from [`FreeIndex::totals`] and [`NodeGate::rank_domains`](crate::placement::NodeGate);
/// built by [`FreeTotals::need`], [`FreeTotals::of_free`] or from [`Default`] (it is
/// `#[non_exhaustive]`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FreeTotals {
    /// Cpus, thousandths.
    pub cpu_milli: u64,
    /// Memory, MiB.
    pub memory_mib: u64,
    /// Entirely free devices.
    pub whole_gpus: u64,
    /// Free device shares, thousandths.
    pub gpu_milli: u64,
    /// Free MIG slices of any profile.
    pub mig_slices: u64,
}

impl FreeTotals {
    /// The totals of `free` on `node`.
    pub fn of_free(node: &Node, free: &NodeAmounts) -> Self {
        let devices = &free.devices[..node.gpu_count];
        FreeTotals {
            cpu_milli: free.cpu_milli,
            memory_mib: free.memory_mib,
            whole_gpus: u64::from(free.whole_devices(node.gpu_count)),
            gpu_milli: devices.iter().map(|d| u64::from(*d)).sum(),
            mig_slices: u64::from(free.mig.count_ones()),
        }
    }

    /// What `shapes` need at their `min_count`: whole GPUs counted in `whole_gpus`, fractions
    /// in `gpu_milli`, MIG slices in `mig_slices`.
    pub fn need(shapes: &[TaskShape]) -> Self {
        let mut need = FreeTotals::default();
        for shape in shapes {
            let tasks = u64::from(shape.min_count);
            need.cpu_milli += shape.cpu_milli * tasks;
            need.memory_mib += shape.memory_mib * tasks;
            match shape.gpu {
                GpuNeed::None => {}
                GpuNeed::Whole(k) => need.whole_gpus += u64::from(k) * tasks,
                GpuNeed::Fraction(f) => need.gpu_milli += u64::from(f) * tasks,
                GpuNeed::Mig(_) => need.mig_slices += tasks,
            }
        }
        need
    }

    /// Whether these free cpus and memory hold one task of `shape` (a necessary condition for
    /// a node's fit, not a fit).
    fn holds_one(&self, shape: &TaskShape) -> bool {
        self.cpu_milli >= shape.cpu_milli && self.memory_mib >= shape.memory_mib
    }

    /// Whether these free totals could hold `need` (a necessary condition, not a fit).
    pub fn covers(&self, need: &FreeTotals) -> bool {
        need.cpu_milli <= self.cpu_milli
            && need.memory_mib <= self.memory_mib
            && need.whole_gpus <= self.whole_gpus
            && need.gpu_milli + need.whole_gpus * 1000 <= self.gpu_milli
            && need.mig_slices <= self.mig_slices
    }

    /// The least of each amount [`FreeTotals::covers`] compares, over every need `include`d:
    /// free totals that fall short of this floor in any amount hold none of those needs.
    ///
    /// ```
    /// use gangway::model::{GpuNeed, TaskShape};
    /// use gangway::placement::FreeTotals;
    /// let one_gpu = FreeTotals::need(&[TaskShape::new(1000, 0, GpuNeed::Whole(1))]);
    /// let two_gpus = FreeTotals::need(&[TaskShape::new(500, 0, GpuNeed::Whole(2))]);
    /// let mut floor = FreeTotals::floor();
    /// floor.include(&one_gpu);
    /// floor.include(&two_gpus);
    /// let mut free = FreeTotals::default();
    /// (free.cpu_milli, free.memory_mib) = (64_000, 1 << 20);
    /// assert!(!free.covers_any(&floor)); // every need wants a GPU
    /// (free.whole_gpus, free.gpu_milli) = (1, 1000);
    /// assert!(free.covers_any(&floor));
    /// ```
    pub fn floor() -> NeedFloor {
        NeedFloor {
            cpu_milli: u64::MAX,
            memory_mib: u64::MAX,
            whole_gpus: u64::MAX,
            device_milli: u64::MAX,
            mig_slices: u64::MAX,
        }
    }

    /// False when these free totals fall short of `floor` in some amount: then they cover none
    /// of the needs the floor was built from (a necessary condition, like [`FreeTotals::covers`]).
    pub fn covers_any(&self, floor: &NeedFloor) -> bool {
        floor.cpu_milli <= self.cpu_milli
            && floor.memory_mib <= self.memory_mib
            && floor.whole_gpus <= self.whole_gpus
            && floor.device_milli <= self.gpu_milli
            && floor.mig_slices <= self.mig_slices
    }

    /// Adds `other`.
    pub fn add(&mut self, other: &FreeTotals) {
        self.cpu_milli += other.cpu_milli;
        self.memory_mib += other.memory_mib;
        self.whole_gpus += other.whole_gpus;
        self.gpu_milli += other.gpu_milli;
        self.mig_slices += other.mig_slices;
    }

    fn sub(&mut self, other: &FreeTotals) {
        self.cpu_milli -= other.cpu_milli;
        self.memory_mib -= other.memory_mib;
        self.whole_gpus -= other.whole_gpus;
        self.gpu_milli -= other.gpu_milli;
        self.mig_slices -= other.mig_slices;
    }
}

/// The least amounts over a set of needs, as [`FreeTotals::covers`] compares them (built by
/// [`FreeTotals::floor`] and [`NeedFloor::include`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct NeedFloor {
    /// Cpus, thousandths.
    pub cpu_milli: u64,
    /// Memory, MiB.
    pub memory_mib: u64,
    /// Whole GPUs.
    pub whole_gpus: u64,
    /// Device shares, thousandths, counting whole GPUs as 1000 each.
    pub device_milli: u64,
    /// MIG slices.
    pub mig_slices: u64,
}

impl NeedFloor {
    /// Lowers the floor to `need` where it asks for less.
    pub fn include(&mut self, need: &FreeTotals) {
        self.cpu_milli = self.cpu_milli.min(need.cpu_milli);
        self.memory_mib = self.memory_mib.min(need.memory_mib);
        self.whole_gpus = self.whole_gpus.min(need.whole_gpus);
        let device_milli = need.gpu_milli + need.whole_gpus * 1000;
        self.device_milli = self.device_milli.min(device_milli);
        self.mig_slices = self.mig_slices.min(need.mig_slices);
    }
}

/// Two indexes are equal when they hold the same nodes in the same buckets and groups of alike
/// nodes, with the same free amounts: the groups' numbers, which depend on the order nodes
/// came and went in, are not compared.
impl PartialEq for FreeIndex {
    fn eq(&self, other: &Self) -> bool {
        self.classes == other.classes
            && self.occupied == other.occupied
            && self.counted == other.counted
            && self.totals == other.totals
            && self.working == other.working
            && (self.working_cpu_milli, self.not_working)
                == (other.working_cpu_milli, other.not_working)
            && self.slots_by_class() == other.slots_by_class()
            && self.groups_by_bucket() == other.groups_by_bucket()
            && self.groups.by_class() == other.groups.by_class()
    }
}

impl FreeIndex {
    /// Builds the index over `nodes` with `model_count` GPU models.
    pub fn build(nodes: &[Option<Node>], model_count: usize) -> Self {
        let mut index = FreeIndex {
            classes: vec![vec![NodeSet::default(); MAX_DEVICES + 1]; model_count + 1],
            alike: vec![vec![BTreeMap::new(); MAX_DEVICES + 1]; model_count + 1],
            groups: AlikeGroups::default(),
            occupied: vec![0; MAX_DEVICES + 1],
            slots: Vec::new(),
            counted: Vec::new(),
            totals: FreeTotals::default(),
            moving: Vec::new(),
            working: Vec::new(),
            working_cpu_milli: 0,
            not_working: 0,
        };
        for i in 0..nodes.len() {
            index.refresh(nodes, NodeId(i as u32));
        }
        index
    }

    /// Puts node `id` in the bucket matching its current state and free GPUs. The index must have
    /// been built with the node's GPU model known (a new model means a rebuild).
    pub fn refresh(&mut self, nodes: &[Option<Node>], id: NodeId) {
        if self.slots.len() < nodes.len() {
            self.slots.resize(nodes.len(), None);
            self.counted.resize(nodes.len(), FreeTotals::default());
            self.not_working += nodes.len() - self.working.len();
            self.working.resize(nodes.len(), None);
        }
        let node = nodes
            .get(id.index())
            .and_then(Option::as_ref)
            .filter(|node| node.accepts_work());
        self.work(id, node.map(|node| node.available_cpu_milli()));
        // What the node has free, computed once for its bucket, class and totals.
        let node = node.map(|node| (node, node.free()));
        let place = node.as_ref().and_then(|(node, free)| {
            Some((self.bucket_of(node, free)?, NodeClass::of(id, node, free)))
        });
        let old = self.slots[id.index()];
        let unchanged = match (&old, &place) {
            (Some(old), Some((bucket, class))) => {
                (old.class, old.level) == *bucket && self.groups.class(old.group) == class
            }
            (old, place) => old.is_none() && place.is_none(),
        };
        if !unchanged {
            // A start or an end usually keeps a node in its bucket and moves it between groups
            // of alike nodes only: a bucket is touched only where the node leaves or joins it.
            let moved =
                old.map(|s| (s.class, s.level)) != place.as_ref().map(|(bucket, _)| *bucket);
            if let Some(old) = old {
                self.vacate(&[id], old, moved);
            }
            self.slots[id.index()] = place.map(|((class, level), alike)| {
                if moved {
                    self.enter_bucket(&[id], (class, level));
                }
                let group = match self.groups.join(alike, id) {
                    Joined::Existing(group) => group,
                    Joined::New(group) => {
                        let alike = self.groups.class(group).clone();
                        self.alike[class][level].insert(alike, group);
                        group
                    }
                };
                Slot {
                    class,
                    level,
                    group,
                }
            });
        }
        let counted = match (node, self.slots[id.index()].is_some()) {
            (Some((node, free)), true) => FreeTotals::of_free(node, &free),
            _ => FreeTotals::default(),
        };
        self.count(id, counted);
    }

    /// Takes nodes `ids` (in id order) out of slot `old`'s group, and out of its bucket where
    /// they `moved` to another (the emptied group's and bucket's listings kept).
    fn vacate(&mut self, ids: &[NodeId], old: Slot, moved: bool) {
        if moved {
            let bucket = &mut self.classes[old.class][old.level];
            bucket.remove_sorted(ids);
            if bucket.is_empty() {
                self.occupied[old.level] &= !(1 << old.class);
            }
        }
        if let Some(emptied) = self.groups.leave(old.group, ids) {
            self.alike[old.class][old.level].remove(&emptied);
        }
    }

    /// Puts nodes `ids` (in id order) in bucket `(class, level)`.
    fn enter_bucket(&mut self, ids: &[NodeId], (class, level): (usize, usize)) {
        self.classes[class][level].insert_sorted(ids);
        self.occupied[level] |= 1 << class;
    }

    /// Records that node `id` takes work with `cpu_milli` cpus, or takes none, in its entry and
    /// the sums.
    fn work(&mut self, id: NodeId, cpu_milli: Option<u64>) {
        let Some(entry) = self.working.get_mut(id.index()) else {
            return;
        };
        match std::mem::replace(entry, cpu_milli) {
            Some(old) => self.working_cpu_milli -= old,
            None => self.not_working -= 1,
        }
        match cpu_milli {
            Some(new) => self.working_cpu_milli += new,
            None => self.not_working += 1,
        }
    }

    /// The cpus (thousandths) of the nodes taking work, summed, where every node the index
    /// holds takes work; `None` where some node is drained, down or gone.
    pub(crate) fn working_cpus(&self) -> Option<u64> {
        (self.not_working == 0).then_some(self.working_cpu_milli)
    }

    /// Records that node `id` has `counted` free, in its entry and the totals.
    fn count(&mut self, id: NodeId, counted: FreeTotals) {
        let old = std::mem::replace(&mut self.counted[id.index()], counted);
        self.totals.sub(&old);
        self.totals.add(&counted);
    }

    /// [`FreeIndex::refresh`] for nodes `ids` (each at most once) whose only change since
    /// their last refresh is what they use: the nodes of a job that starts or ends.
    ///
    /// A gang's nodes mostly move alike: from one group of alike nodes to the same free
    /// amounts. Two such nodes were of one class before (same make and partitions, and
    /// neither has MIG slices: those are alike only to themselves), and with what they use
    /// the only change, they are of one class again after; so a node that leaves the group the
    /// node before it left, with the same free amounts, joins the group that node joined,
    /// without its class being built, compared or looked up; and the nodes that make one
    /// move together leave and join their groups (and buckets) at once, in one pass over each
    /// (a gang's nodes are many, a group's members more).
    pub(crate) fn refresh_used(
        &mut self,
        nodes: &[Option<Node>],
        ids: impl IntoIterator<Item = NodeId>,
    ) {
        // The last node's move: the slot it left, its free amounts, where it went and what it
        // counts. Made by a full refresh; the nodes making the same move wait in `moving`
        // until the run ends, so the group left keeps its members (and its number) meanwhile,
        // and the one joined keeps the node that made the move first.
        let mut last: Option<(Slot, NodeAmounts, Slot, FreeTotals)> = None;
        let mut moving = std::mem::take(&mut self.moving);
        for id in ids {
            let node = nodes
                .get(id.index())
                .and_then(Option::as_ref)
                .filter(|node| node.accepts_work());
            let old = self.slots.get(id.index()).copied().flatten();
            if let (Some(node), Some(old), Some((from, free, to, counted))) = (node, old, last)
                && old.group == from.group
                && node.free() == free
            {
                debug_assert_eq!(
                    self.groups.class(to.group),
                    &NodeClass::of(id, node, &free),
                    "a node moving as the one before it is of its class"
                );
                // A node whose class did not change (nothing used) stays where it is.
                if from.group != to.group {
                    moving.push(id);
                }
                self.count(id, counted);
                continue;
            }
            if let Some((from, _, to, _)) = last {
                self.settle(&mut moving, from, to);
            }
            self.refresh(nodes, id);
            last = node
                .zip(old)
                .zip(self.slots[id.index()])
                .map(|((node, old), to)| (old, node.free(), to, self.counted[id.index()]));
        }
        if let Some((from, _, to, _)) = last {
            self.settle(&mut moving, from, to);
        }
        self.moving = moving;
    }

    /// Moves the nodes `moving` (emptied) from slot `from` to slot `to`, a group with members
    /// that their class is known to be (buckets, groups and the emptied group's listing
    /// kept).
    fn settle(&mut self, moving: &mut Vec<NodeId>, from: Slot, to: Slot) {
        if moving.is_empty() {
            return;
        }
        moving.sort_unstable();
        let moved = (from.class, from.level) != (to.class, to.level);
        self.vacate(moving, from, moved);
        if moved {
            self.enter_bucket(moving, (to.class, to.level));
        }
        self.groups.join_group(to.group, moving);
        for id in moving.drain(..) {
            self.slots[id.index()] = Some(to);
        }
    }

    /// Each node's bucket and class (for [`PartialEq`]).
    fn slots_by_class(&self) -> Vec<Option<(usize, usize, &NodeClass)>> {
        let slot = |s: &Slot| (s.class, s.level, self.groups.class(s.group));
        self.slots.iter().map(|s| s.as_ref().map(slot)).collect()
    }

    /// Each bucket's groups in order, with their classes and members (for [`PartialEq`]).
    fn groups_by_bucket(&self) -> Vec<Vec<(&NodeClass, &NodeSet)>> {
        let members = |(class, &group)| (class, self.groups.members(group));
        let buckets = self.alike.iter().flatten();
        buckets
            .map(|groups| groups.iter().map(members).collect())
            .collect()
    }

    /// The bucket (GPU model class, free whole GPUs) of `node` (taking work): `None` where it
    /// does not exist (a node with more devices than the index has levels for).
    fn bucket_of(&self, node: &Node, free: &NodeAmounts) -> Option<(usize, usize)> {
        let class = match node.gpu_model {
            Some(model) if node.gpu_count > 0 => model.index(),
            _ => self.classes.len() - 1,
        };
        let level = free.whole_devices(node.gpu_count) as usize;
        self.classes.get(class)?.get(level)?;
        Some((class, level))
    }

    /// False when the gang's minimum cannot fit what is free now even summed over every node
    /// that takes work: the placement can then be skipped without visiting a node.
    ///
    /// ```
    /// use gangway::placement::FreeIndex;
    /// let index = FreeIndex::default(); // no nodes
    /// let shape = gangway::model::TaskShape::new(1000, 0, gangway::model::GpuNeed::None);
    /// assert!(!index.could_hold(&[shape]));
    /// ```
    pub fn could_hold(&self, shapes: &[TaskShape]) -> bool {
        self.totals.covers(&FreeTotals::need(shapes))
    }

    /// What is free now, summed over the nodes that take work.
    pub fn totals(&self) -> &FreeTotals {
        &self.totals
    }

    /// Visits candidate nodes for one task of `shape`, best fit first, until `f` breaks: the
    /// nodes `reach` names ([`Reach`]).
    pub fn visit(
        &self,
        shape: &TaskShape,
        reach: Reach,
        f: &mut dyn FnMut(NodeId) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        for (class, level) in self.buckets(shape, reach == Reach::Every) {
            self.classes[class][level].try_for_each(|id| {
                if reach == Reach::OneTaskFree && !self.counted[id.index()].holds_one(shape) {
                    return ControlFlow::Continue(());
                }
                f(id)
            })?;
        }
        ControlFlow::Continue(())
    }

    /// The nodes [`FreeIndex::visit`] offers, in its order, less every node that is alike (same
    /// state class, same bucket) to an earlier node offered, unless it is in `departures`;
    /// nodes in `skipped` are never offered. Both lists are sorted by id.
    ///
    /// A placement may use it when its answer on a node depends only on the node's state class
    /// and its place in the visit order, for nodes outside `departures`: the nodes whose free
    /// capacity, for this placement, may differ from what they have free now (the index's view).
    /// Per bucket it costs a step per state class and per departing node, not per node.
    pub fn visit_unalike(
        &self,
        shape: &TaskShape,
        all_levels: bool,
        (departures, skipped): (&[NodeId], &[NodeId]),
        f: &mut dyn FnMut(NodeId) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let listed = |list: &[NodeId], id: &NodeId| list.binary_search(id).is_ok();
        // The departing nodes by bucket, then id.
        let mut departing: Vec<((usize, usize), NodeId)> = departures
            .iter()
            .filter(|id| !listed(skipped, id))
            .filter_map(|id| {
                let slot = self.slots.get(id.index())?.as_ref()?;
                Some(((slot.class, slot.level), *id))
            })
            .collect();
        departing.sort_unstable();
        let mut offers = Vec::new();
        for bucket in self.buckets(shape, all_levels) {
            let from = departing.partition_point(|(b, _)| *b < bucket);
            let to = departing.partition_point(|(b, _)| *b <= bucket);
            offers.clear();
            offers.extend(departing[from..to].iter().map(|(_, id)| *id));
            let (class, level) = bucket;
            for &group in self.alike[class][level].values() {
                let first = self
                    .groups
                    .members(group)
                    .iter()
                    .find(|id| !listed(departures, id) && !listed(skipped, id));
                offers.extend(first);
            }
            offers.sort_unstable();
            for id in &offers {
                f(*id)?;
            }
        }
        ControlFlow::Continue(())
    }

    /// The nodes [`FreeIndex::visit`] offers at every level ([`Reach::Every`]), in its order,
    /// less those that hold no task of `shape` at a later time: a node whose free cpus and
    /// memory now hold none is offered only where it `releases` (some running job there
    /// releases its holdings by then). The others hold then what they hold now, so a
    /// placement whose room on a node is at most what the running jobs leave free there finds
    /// none on them. A bucket whose nodes all hold a task now is walked as by the visit.
    pub(crate) fn visit_later(
        &self,
        shape: &TaskShape,
        releases: &dyn Fn(NodeId) -> bool,
        f: &mut dyn FnMut(NodeId) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let holds_one = |id: NodeId| self.counted[id.index()].holds_one(shape);
        // The members of a group have the same free amounts: its first stands for all.
        let group_holds_one =
            |group: &GroupId| self.groups.members(*group).first().is_some_and(holds_one);
        for (class, level) in self.buckets(shape, true) {
            let bucket = &self.classes[class][level];
            if self.alike[class][level].values().all(group_holds_one) {
                bucket.try_for_each(&mut *f)?;
            } else {
                bucket.try_for_each(|id| match holds_one(id) || releases(id) {
                    true => f(id),
                    false => ControlFlow::Continue(()),
                })?;
            }
        }
        ControlFlow::Continue(())
    }

    /// The state classes of the nodes [`FreeIndex::visit`] offers for `shape`: per bucket it
    /// walks, one node of each class and how many nodes the class holds. Nodes of a class
    /// have the same make, partitions and free amounts, so a fit that reads only those is
    /// the same on each of them.
    pub fn visit_classes(
        &self,
        shape: &TaskShape,
        all_levels: bool,
        f: &mut dyn FnMut(NodeId, usize) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        for (class, level) in self.buckets(shape, all_levels) {
            for &group in self.alike[class][level].values() {
                let members = self.groups.members(group);
                if let Some(first) = members.first() {
                    f(first, members.len())?;
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// Whether [`FreeIndex::visit_classes`] for `shape` (not at all levels) offers node `id`'s
    /// class: the node takes work and its bucket is one the visit walks.
    pub(crate) fn visits_node(&self, shape: &TaskShape, id: NodeId) -> bool {
        let Some(Some(slot)) = self.slots.get(id.index()) else {
            return false;
        };
        self.buckets(shape, false)
            .any(|bucket| bucket == (slot.class, slot.level))
    }

    /// The buckets a visit for `shape` walks, in order: nodes without GPUs first for a shape
    /// needing none, then by free whole GPUs from the fewest that can hold a task (every level
    /// with `all_levels`), across the allowed models level by level.
    fn buckets(&self, shape: &TaskShape, all_levels: bool) -> impl Iterator<Item = (usize, usize)> {
        let gpu_classes = self.classes.len() - 1;
        let (first_level, cpu_only_first) = match shape.gpu {
            GpuNeed::None => (0, true),
            GpuNeed::Whole(k) if !all_levels => (usize::from(k), false),
            GpuNeed::Whole(_) => (0, false),
            GpuNeed::Fraction(_) | GpuNeed::Mig(_) => (0, false),
        };
        // The GPU classes the shape allows, as bits: every one without a GPU need or a model
        // list.
        let every = (1u128 << gpu_classes) - 1;
        let allowed = match (shape.gpu, shape.models.0) {
            (GpuNeed::None, _) | (_, 0) => every,
            (_, models) => u128::from(models) & every,
        };
        let cpu_only = cpu_only_first.then_some((gpu_classes, 0));
        let occupied = &self.occupied;
        let with_gpus = (first_level..=MAX_DEVICES).flat_map(move |level| {
            let mut classes = occupied[level] & allowed;
            std::iter::from_fn(move || {
                (classes != 0).then(|| {
                    let class = classes.trailing_zeros() as usize;
                    classes &= classes - 1;
                    (class, level)
                })
            })
        });
        cpu_only.into_iter().chain(with_gpus)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Eight cpu-only nodes of 4 cpus.
    fn nodes() -> Vec<Option<Node>> {
        let node = |i| {
            Some(Node::new(
                format!("n{i}"),
                NodeAmounts::full(4_000, 0, 0),
                0,
                None,
            ))
        };
        (0..8).map(node).collect()
    }

    /// The nodes of starts and ends refreshed together, moving as the node before them where
    /// it left the same group for the same free amounts, make the index a rebuild makes: over
    /// nodes alike in all but their make or partitions (same free amounts, other classes),
    /// GPU nodes of two models, gangs whose nodes move alike, apart, or back.
    #[test]
    fn nodes_refreshed_together_after_starts_and_ends_index_as_a_rebuild() {
        use crate::model::ids::ModelId;
        use crate::model::node::PartitionSet;
        let cpus = |n: u64| NodeAmounts::full(n * 1_000, 16_000, 0);
        let mut nodes: Vec<Option<Node>> = (0..14)
            .map(|i| {
                let node = match i {
                    0..4 => Node::new("c4", cpus(4), 0, None),
                    4..6 => Node::new("c4", cpus(4), 0, None).with_partitions(PartitionSet(2)),
                    6..8 => Node::new("c8", cpus(8), 0, None),
                    8..11 => Node::new(
                        "g",
                        NodeAmounts::full(8_000, 16_000, 4),
                        4,
                        Some(ModelId(0)),
                    ),
                    _ => Node::new(
                        "h",
                        NodeAmounts::full(8_000, 16_000, 4),
                        4,
                        Some(ModelId(1)),
                    ),
                };
                Some(node)
            })
            .collect();
        let mut index = FreeIndex::build(&nodes, 2);
        let mut next = crate::backfill::tests::numbers(36);
        let mut jobs: Vec<Vec<(NodeId, NodeAmounts)>> = Vec::new();
        for round in 0..2_000 {
            let ends = !jobs.is_empty() && next(2) == 0;
            let charges = if ends {
                let job = jobs.swap_remove(next(jobs.len() as u64) as usize);
                for (id, amounts) in &job {
                    nodes[id.index()].as_mut().unwrap().used.sub(amounts);
                }
                job
            } else {
                // A gang on some nodes, from a random first node on, one cpu each, or a whole
                // GPU where the node has one free.
                let (first, width) = (next(14) as usize, 1 + next(6) as usize);
                let mut job = Vec::new();
                for i in (first..first + width).map(|i| i % 14) {
                    let node = nodes[i].as_mut().unwrap();
                    let free = node.free();
                    let mut amounts = NodeAmounts::full(1_000, 0, 0);
                    if let Some(d) = (0..node.gpu_count).find(|&d| free.devices[d] == 1_000) {
                        amounts.devices[d] = 1_000;
                    }
                    if free.covers(&amounts) {
                        node.used.add(&amounts);
                        job.push((NodeId(i as u32), amounts));
                    }
                }
                jobs.push(job.clone());
                job
            };
            index.refresh_used(&nodes, charges.iter().map(|(id, _)| *id));
            assert_eq!(index, FreeIndex::build(&nodes, 2), "round {round}");
        }
    }

    /// A later visit offers the nodes of a visit at every level, in its order, less exactly
    /// those whose free cpus now hold no task and that do not release: over random usage,
    /// shapes of one and of three cpus, and random releasing nodes.
    #[test]
    fn a_later_visit_offers_the_visit_s_nodes_less_those_short_now_that_release_nothing() {
        let mut nodes = nodes();
        let mut next = crate::backfill::tests::numbers(38);
        let (mut passed_over, mut walked_whole) = (0, 0);
        for round in 0..300 {
            for node in nodes.iter_mut().flatten() {
                node.used.cpu_milli = 1_000 * next(5);
            }
            let index = FreeIndex::build(&nodes, 0);
            let releasing: Vec<bool> = (0..nodes.len()).map(|_| next(3) == 0).collect();
            let releases = |id: NodeId| releasing[id.index()];
            for cpus in [1, 3] {
                let shape = TaskShape::new(cpus * 1_000, 0, GpuNeed::None);
                let (mut later, mut every) = (Vec::new(), Vec::new());
                let _ = index.visit_later(&shape, &releases, &mut |id| {
                    later.push(id);
                    ControlFlow::Continue(())
                });
                let _ = index.visit(&shape, Reach::Every, &mut |id| {
                    every.push(id);
                    ControlFlow::Continue(())
                });
                let holds_one = |id: &NodeId| {
                    let free = nodes[id.index()].as_ref().unwrap().free();
                    free.cpu_milli >= shape.cpu_milli
                };
                let expected: Vec<NodeId> = (every.iter().copied())
                    .filter(|id| holds_one(id) || releases(*id))
                    .collect();
                assert_eq!(later, expected, "round {round}, {cpus} cpus");
                passed_over += every.len() - later.len();
                walked_whole += usize::from(every.iter().all(holds_one));
            }
        }
        assert!(
            passed_over > 300 && walked_whole > 30,
            "{passed_over} {walked_whole}"
        );
    }

    #[test]
    fn an_index_kept_through_changes_equals_one_built_afresh_whatever_its_group_numbers() {
        let mut nodes = nodes();
        let mut kept = FreeIndex::build(&nodes, 0);
        // Nodes fill and empty in an order that empties groups and numbers them again.
        for (i, used) in [(3, 4), (5, 2), (3, 0), (1, 2), (5, 4), (0, 4), (1, 0)] {
            nodes[i].as_mut().unwrap().used.cpu_milli = used * 1_000;
            kept.refresh(&nodes, NodeId(i as u32));
            assert_eq!(kept, FreeIndex::build(&nodes, 0));
        }
        // A node in another group than its class's is told apart, though every bucket holds
        // the same nodes and the same number of groups.
        let fresh = FreeIndex::build(&nodes, 0);
        let mut wrong = fresh.clone();
        let (full, idle) = (wrong.slots[0].unwrap().group, wrong.slots[2].unwrap().group);
        assert!(wrong.groups.leave(full, &[NodeId(5)]).is_none());
        assert!(matches!(
            wrong
                .groups
                .join(wrong.groups.class(idle).clone(), NodeId(5)),
            Joined::Existing(_)
        ));
        assert_ne!(wrong, fresh);
    }

    #[test]
    fn the_working_cpus_are_summed_while_every_node_takes_work() {
        use crate::model::node::NodeState;
        let mut nodes = nodes();
        let all: u64 = nodes.iter().flatten().map(|n| n.capacity.cpu_milli).sum();
        let mut index = FreeIndex::build(&nodes, 0);
        assert_eq!(index.working_cpus(), Some(all));
        // A drained node, then a node gone: no sum until every node takes work again.
        nodes[2].as_mut().unwrap().state = NodeState::Draining;
        index.refresh(&nodes, NodeId(2));
        assert_eq!(index.working_cpus(), None);
        nodes[2].as_mut().unwrap().state = NodeState::Up;
        index.refresh(&nodes, NodeId(2));
        assert_eq!(index.working_cpus(), Some(all));
        let gone = nodes[4].take().unwrap().capacity.cpu_milli;
        index.refresh(&nodes, NodeId(4));
        assert_eq!(index.working_cpus(), None);
        assert_eq!(index, FreeIndex::build(&nodes, 0));
        // A node added where the gone one was, and one after the last.
        nodes[4] = Some(Node::new(
            "new",
            NodeAmounts::full(3_000, 1_000, 0),
            0,
            None,
        ));
        index.refresh(&nodes, NodeId(4));
        nodes.push(Some(Node::new(
            "last",
            NodeAmounts::full(5_000, 1_000, 0),
            0,
            None,
        )));
        index.refresh(&nodes, NodeId(nodes.len() as u32 - 1));
        assert_eq!(index.working_cpus(), Some(all - gone + 3_000 + 5_000));
        assert_eq!(index, FreeIndex::build(&nodes, 0));
    }
}
