//! The quota tree: queues under cohorts, with usage accounting and Kueue's fit rules.

use indexmap::IndexSet;

use super::keys::ResourceKeys;
use super::vector::{KeyId, KeyMask, QuotaVec};

/// "No limit" in a borrowing-limit vector.
pub(crate) const UNLIMITED: u64 = u64::MAX;

/// A queue of a [`QuotaTree`]: its index in the `queues` slice the tree was built from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct QueueId(pub(crate) u32);

impl QueueId {
    /// The queue's position in the configuration's queue list.
    pub(crate) const fn index(self) -> usize {
        self.0 as usize
    }
}

/// How a demand fits a queue's quota, as returned by [`QuotaTree::fit`].
#[cfg(test)]
#[allow(clippy::enum_variant_names)] // `NoFit` reads as the quota tree's answer
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fit {
    /// Fits, and the queue stays within its nominal quota on every resource it lists.
    WithinNominal,
    /// Fits, by borrowing unused quota from its cohort tree.
    Borrowing,
    /// Does not fit now.
    NoFit,
}

#[cfg(test)]
impl Fit {
    /// True for [`Fit::WithinNominal`] and [`Fit::Borrowing`].
    pub(crate) fn fits(self) -> bool {
        self != Fit::NoFit
    }
}

/// One queue or cohort: its limits and its usage (Kueue's resource node).
#[derive(Clone, Debug)]
pub(crate) struct Node {
    /// The parent cohort's node index.
    pub(crate) parent: Option<u32>,
    /// The keys this node limits: listed by it or by a node below it.
    pub(crate) limits: KeyMask,
    /// Its own nominal quota.
    pub(crate) nominal: QuotaVec,
    /// Its own nominal plus what its children lend it (Kueue's SubtreeQuota).
    pub(crate) subtree: QuotaVec,
    /// The part of `subtree` never lent to the parent: `subtree − lending_limit` (0 without a
    /// lending limit); for a root, all of `subtree`.
    pub(crate) guaranteed: QuotaVec,
    /// The most it may use above `subtree`; [`UNLIMITED`] where none.
    pub(crate) borrowing_limit: QuotaVec,
    /// Its fair-sharing weight in its parent cohort.
    pub(crate) weight: f64,
    /// What its parent cohort could lend it with no usage anywhere, per key it limits (Kueue's
    /// lendable capacity, the denominator of its share value); zero for a root.
    pub(crate) lendable: QuotaVec,
    /// A root cohort's own fair-sharing switch, if it sets one.
    pub(crate) fair_switch: Option<bool>,
}

impl Node {
    /// How much of `key` this node, using `usage`, can still take, given what its parent
    /// offers it.
    fn available_with(&self, usage: &QuotaVec, key: KeyId, from_parent: u64) -> u64 {
        let guaranteed = self.guaranteed[key];
        let usage = usage[key];
        let local = guaranteed.saturating_sub(usage);
        if self.parent.is_none() {
            return local;
        }
        let mut from_parent = from_parent;
        let borrowing_limit = self.borrowing_limit[key];
        if borrowing_limit != UNLIMITED {
            let lendable = self.subtree[key].saturating_sub(guaranteed);
            let used_in_parent = usage.saturating_sub(guaranteed);
            let cap = lendable
                .saturating_add(borrowing_limit)
                .saturating_sub(used_in_parent);
            from_parent = from_parent.min(cap);
        }
        local.saturating_add(from_parent)
    }

    /// How much of `key` this node could take with no usage anywhere.
    pub(super) fn potential_with(&self, key: KeyId, from_parent: u64) -> u64 {
        if self.parent.is_none() {
            return self.subtree[key];
        }
        let mut potential = self.guaranteed[key].saturating_add(from_parent);
        let borrowing_limit = self.borrowing_limit[key];
        if borrowing_limit != UNLIMITED {
            potential = potential.min(self.subtree[key].saturating_add(borrowing_limit));
        }
        potential
    }

    /// True when `usage` of `key` is above this node's own subtree quota.
    fn above_nominal(&self, usage: &QuotaVec, key: KeyId) -> bool {
        self.limits.contains(key) && usage[key] > self.subtree[key]
    }
}

/// Per-queue data that only queues have.
#[derive(Clone, Debug)]
pub(crate) struct QueueInfo {
    /// The queue's node and its ancestors, bottom-up: `paths[start..end]`.
    pub(crate) path: (u32, u32),
    /// `max_per_user` caps, for the keys in `user_capped`.
    pub(crate) user_cap: QuotaVec,
    /// The keys with a per-user cap.
    pub(crate) user_capped: KeyMask,
    /// Whether fair sharing is on for the queue's cohort tree (a queue without a cohort: off).
    pub(crate) fair: bool,
}

/// Quota accounting for queues in cohort trees, with Kueue's fit rules.
///
/// Every queue and cohort is a node with a nominal quota per resource key it lists. A node's
/// *guaranteed* part (`nominal − lending_limit`, or nothing without a lending limit) is never
/// lent; the rest goes into its parent cohort's pool. A queue's usage fills its guaranteed part
/// first; only usage above it bubbles up to the cohort, and on up the tree. A demand fits when,
/// for every resource the queue lists, the queue's unused guaranteed part plus what the cohort
/// tree can still lend it (capped by `borrowing_limit` above nominal at every level) covers it.
/// Resources a queue does not list are not limited for it.
///
/// The tree holds usage only; callers keep each running job's demand vector (from
/// [`QuotaTree::demand`]) and hand it back to [`QuotaTree::remove_usage`] when the job ends.
/// `fits`, `add_usage` and `remove_usage` cost O(tree depth × keys) and never allocate.
///
/// **Tentative checks** (preemption search, earmarked preemptors): [`QuotaTree::adjusted`]
/// weighs usage added and removed on paper, changing nothing.
///
/// **Reconfiguration**: build a new tree with [`QuotaTree::new`], recompute each running job's
/// demand with the new tree's [`QuotaTree::demand`] (key ids may change) and `add_usage` it.
/// `add_usage` never refuses, so jobs keep running even when now over quota;
/// [`QuotaTree::check_limits`] then reports the excess until they end.
#[derive(Clone, Debug)]
pub(crate) struct QuotaTree {
    pub(crate) keys: ResourceKeys,
    pub(crate) queue_names: IndexSet<String>,
    pub(crate) cohort_names: IndexSet<String>,
    /// Queues at `0..queue_names.len()`, then cohorts in configuration order.
    pub(crate) nodes: Vec<Node>,
    /// Each node's usage, by node index: for a queue, its jobs' usage; for a cohort, its
    /// children's usage above their guaranteed parts.
    pub(crate) usage: Vec<QuotaVec>,
    /// One entry per queue.
    pub(crate) queues: Vec<QueueInfo>,
    /// The queues' bottom-up paths, concatenated.
    pub(crate) paths: Vec<u32>,
    /// Each cohort's children (queues, then cohorts, in configuration order), by node index;
    /// empty for queues.
    pub(crate) children: Vec<Vec<u32>>,
    /// How many times usage changed (share values read before are stale once it moves).
    pub(crate) changes: u64,
    /// The `gpu:MODEL` key of each GPU model the tree was built with, by model index.
    pub(crate) model_keys: Vec<Option<KeyId>>,
    /// Whether a limit or user cap names a GPU model ([`QuotaTree::splits_models`]), kept from
    /// the build (passes ask it once per preemption search).
    pub(super) splits_models: bool,
}

impl QuotaTree {
    /// The queue named `name`.
    pub(crate) fn queue_id(&self, name: &str) -> Option<QueueId> {
        let index = self.queue_names.get_index_of(name)?;
        u32::try_from(index).ok().map(QueueId)
    }

    /// The name of queue `q`.
    pub(crate) fn queue_name(&self, q: QueueId) -> &str {
        self.queue_names
            .get_index(q.index())
            .map_or("", String::as_str)
    }

    /// The number of queues.
    pub(crate) fn queue_count(&self) -> usize {
        self.queue_names.len()
    }

    /// The id of resource key `name` (`cpu`, `memory_mib`, `gpu` or an interned `gpu:MODEL`).
    pub(crate) fn key(&self, name: &str) -> Option<KeyId> {
        self.keys.get(name)
    }

    /// The name of resource key `key`.
    pub(crate) fn key_name(&self, key: KeyId) -> &str {
        self.keys.name(key)
    }

    /// The interned keys, in id order.
    pub(crate) fn keys(&self) -> impl Iterator<Item = KeyId> + '_ {
        (0..self.keys.len()).filter_map(KeyId::from_index)
    }

    /// A job's demand as a vector of this tree: `cpu_milli` millicpus, `memory_mib` MiB, and
    /// GPUs per model in thousandths. GPUs count toward `gpu` and toward `gpu:MODEL` where this
    /// tree has that key.
    pub(crate) fn demand(
        &self,
        cpu_milli: u64,
        memory_mib: u64,
        gpus_by_model: &[(&str, u64)],
    ) -> QuotaVec {
        self.keys.demand(cpu_milli, memory_mib, gpus_by_model)
    }

    /// Whether a queue or cohort limits a GPU model apart (a `gpu:MODEL` quota or user cap),
    /// so that whether a demand fits depends on the models of the nodes a job is placed on.
    /// Unlisted keys limit nothing and weigh in no share.
    pub(crate) fn splits_models(&self) -> bool {
        debug_assert_eq!(
            self.splits_models,
            self.models_split(),
            "splits_models stale"
        );
        self.splits_models
    }

    /// [`QuotaTree::splits_models`] read from the limits and user caps (they are set when the
    /// tree is built, and the answer is kept then).
    pub(super) fn models_split(&self) -> bool {
        let node_limits = self.nodes.iter().map(|node| node.limits);
        let user_caps = self.queues.iter().map(|info| info.user_capped);
        node_limits
            .chain(user_caps)
            .any(|mask| mask.iter().any(|key| self.keys.is_model(key)))
    }

    /// [`QuotaTree::demand`] with all `gpu_milli` GPU thousandths on the GPU model of index
    /// `model` (`name`: a model interned after the tree was built is looked up by name).
    pub(crate) fn demand_on_model(
        &self,
        (cpu_milli, memory_mib, gpu_milli): (u64, u64, u64),
        model: Option<(usize, &str)>,
    ) -> QuotaVec {
        let key = model.and_then(|(index, name)| match self.model_keys.get(index) {
            Some(key) => *key,
            None => self.keys.model(name),
        });
        self.keys.demand_on(cpu_milli, memory_mib, gpu_milli, key)
    }

    /// Adds `slices` MIG slices of `profile` to a demand: one unit each under `mig:PROFILE`
    /// where this tree has that key (Kueue counts each MIG profile as a resource of its own).
    /// Slices count toward neither `gpu` nor `gpu:MODEL`.
    pub(crate) fn add_mig_demand(&self, demand: &mut QuotaVec, profile: &str, slices: u64) {
        self.keys.add_mig(demand, profile, slices);
    }

    /// The node and ancestors of queue `q`, bottom-up.
    pub(super) fn path(&self, q: QueueId) -> &[u32] {
        let (start, end) = self.queues[q.index()].path;
        &self.paths[start as usize..end as usize]
    }

    /// How much of `key` queue `q` can still take: its unused guaranteed part plus what the
    /// cohort tree can lend it. `u64::MAX` for a key the queue does not list.
    #[cfg(test)]
    pub(crate) fn available(&self, q: QueueId, key: KeyId) -> u64 {
        self.available_in(&self.usage, q, key)
    }

    /// [`QuotaTree::available`] with every node's usage read from `usage`.
    fn available_in(&self, usage: &[QuotaVec], q: QueueId, key: KeyId) -> u64 {
        if !self.nodes[q.index()].limits.contains(key) {
            return u64::MAX;
        }
        let mut from_parent = 0;
        for &n in self.path(q).iter().rev() {
            let n = n as usize;
            from_parent = self.nodes[n].available_with(&usage[n], key, from_parent);
        }
        from_parent
    }

    /// True when `demand` fits queue `q` now, within nominal or by borrowing.
    pub(crate) fn fits(&self, q: QueueId, demand: &QuotaVec) -> bool {
        self.fits_in(&self.usage, q, demand)
    }

    /// [`QuotaTree::fits`] with every node's usage read from `usage`.
    pub(super) fn fits_in(&self, usage: &[QuotaVec], q: QueueId, demand: &QuotaVec) -> bool {
        self.nodes[q.index()]
            .limits
            .iter()
            .all(|key| demand[key] == 0 || demand[key] <= self.available_in(usage, q, key))
    }

    /// Whether `demand` fits queue `q` now, and whether it needs to borrow for that.
    #[cfg(test)]
    pub(crate) fn fit(&self, q: QueueId, demand: &QuotaVec) -> Fit {
        if !self.fits(q, demand) {
            Fit::NoFit
        } else if self.within_nominal(q, demand) {
            Fit::WithinNominal
        } else {
            Fit::Borrowing
        }
    }

    /// True when queue `q`'s usage plus `demand` stays within its nominal quota on every
    /// resource it lists (whether or not the cohort could supply it). Preemption that reclaims
    /// quota from other queues is allowed only while this holds.
    #[cfg(test)]
    pub(crate) fn within_nominal(&self, q: QueueId, demand: &QuotaVec) -> bool {
        self.within_nominal_in(&self.usage, q, demand)
    }

    /// [`QuotaTree::within_nominal`] with every node's usage read from `usage`.
    pub(super) fn within_nominal_in(
        &self,
        usage: &[QuotaVec],
        q: QueueId,
        demand: &QuotaVec,
    ) -> bool {
        let (node, usage) = (&self.nodes[q.index()], &usage[q.index()]);
        node.limits
            .iter()
            .all(|key| usage[key].saturating_add(demand[key]) <= node.subtree[key])
    }

    /// True when `demand` would fit queue `q` if nothing at all were running anywhere (Kueue's
    /// potential available quota). A demand for which this is false can never be admitted,
    /// whatever is preempted.
    #[cfg(test)]
    pub(crate) fn could_ever_fit(&self, q: QueueId, demand: &QuotaVec) -> bool {
        self.nodes[q.index()].limits.iter().all(|key| {
            let mut from_parent = 0;
            for &n in self.path(q).iter().rev() {
                from_parent = self.nodes[n as usize].potential_with(key, from_parent);
            }
            demand[key] <= from_parent
        })
    }

    /// Charges `demand` to queue `q`: usage above the queue's guaranteed part bubbles up its
    /// cohorts. Never refuses (check [`QuotaTree::fits`] first where it matters).
    pub(crate) fn add_usage(&mut self, q: QueueId, demand: &QuotaVec) {
        self.changes += 1;
        add_usage_in(&self.nodes, &mut self.usage, q, demand);
    }

    /// Releases `demand` from queue `q`, and from its cohorts the part that had bubbled up.
    /// `demand` must be one that was added to `q` (amounts stop at zero otherwise).
    pub(crate) fn remove_usage(&mut self, q: QueueId, demand: &QuotaVec) {
        self.changes += 1;
        remove_usage_in(&self.nodes, &mut self.usage, q, demand);
    }

    /// The usage charged to queue `q`, on every key (listed or not).
    pub(crate) fn usage(&self, q: QueueId) -> &QuotaVec {
        &self.usage[q.index()]
    }

    /// Queue `q`'s nominal quota (zero on the keys it does not list).
    pub(crate) fn nominal(&self, q: QueueId) -> &QuotaVec {
        &self.nodes[q.index()].nominal
    }

    /// True when queue `q` lists (and so limits) resource `key`.
    pub(crate) fn limits(&self, q: QueueId, key: KeyId) -> bool {
        self.nodes[q.index()].limits.contains(key)
    }

    /// The usage of cohort `name` on every key: its children's usage above their guaranteed
    /// parts. `None` for an unknown cohort.
    #[cfg(test)]
    pub(crate) fn cohort_usage(&self, name: &str) -> Option<&QuotaVec> {
        let index = self.cohort_names.get_index_of(name)?;
        Some(&self.usage[self.queue_names.len() + index])
    }

    /// True when queue `q` uses more than its nominal quota of `key` (only for keys it lists).
    #[cfg(test)]
    pub(crate) fn above_nominal(&self, q: QueueId, key: KeyId) -> bool {
        self.nodes[q.index()].above_nominal(&self.usage[q.index()], key)
    }

    /// True when queue `q` uses more than its nominal quota on some resource it lists, i.e. it
    /// is borrowing from its cohort.
    pub(crate) fn is_borrowing(&self, q: QueueId) -> bool {
        let (node, usage) = (&self.nodes[q.index()], &self.usage[q.index()]);
        node.limits.iter().any(|key| node.above_nominal(usage, key))
    }

    /// True when queue `q` is above its nominal quota on some resource that `demand` asks for
    /// (Kueue's reclaim candidates: queues borrowing what the preemptor needs).
    #[cfg(test)]
    pub(crate) fn above_nominal_in(&self, q: QueueId, demand: &QuotaVec) -> bool {
        let (node, usage) = (&self.nodes[q.index()], &self.usage[q.index()]);
        node.limits
            .iter()
            .any(|key| demand[key] != 0 && node.above_nominal(usage, key))
    }

    /// True when two queues are in the same cohort tree (a queue without a cohort is alone
    /// in its own): only then may one reclaim quota from the other.
    pub(crate) fn same_tree(&self, a: QueueId, b: QueueId) -> bool {
        self.path(a).last() == self.path(b).last()
    }

    /// True when queue `q` caps what one user may hold (`max_per_user`).
    pub(crate) fn has_user_caps(&self, q: QueueId) -> bool {
        self.queues[q.index()].user_capped != KeyMask::EMPTY
    }

    /// True when a user who holds `held` in queue `q` (the sum of the demands of the user's
    /// running jobs there, kept by the caller per queue and user) may take `demand` more
    /// without passing the queue's `max_per_user` caps. Keys the demand does not ask for are
    /// not checked, so a user already over a lowered cap may still start jobs that need none
    /// of it.
    pub(crate) fn fits_user(&self, q: QueueId, held: &QuotaVec, demand: &QuotaVec) -> bool {
        let info = &self.queues[q.index()];
        info.user_capped.iter().all(|key| {
            demand[key] == 0 || held[key].saturating_add(demand[key]) <= info.user_cap[key]
        })
    }
}

/// Charges `demand` to queue `q` in `usage` (one entry per node of `nodes`): usage above a
/// node's guaranteed part bubbles up its cohorts.
pub(super) fn add_usage_in(nodes: &[Node], usage: &mut [QuotaVec], q: QueueId, demand: &QuotaVec) {
    walk_up(nodes, usage, q, demand, charge_step);
}

/// Releases `demand` from queue `q` in `usage`, and from its cohorts the part that had bubbled
/// up.
pub(super) fn remove_usage_in(
    nodes: &[Node],
    usage: &mut [QuotaVec],
    q: QueueId,
    demand: &QuotaVec,
) {
    walk_up(nodes, usage, q, demand, release_step);
}

/// A step of a walk up: how `d` more of a key changes a node's usage, and how much of it moves
/// on to the parent (what lands above the node's guaranteed part).
pub(super) fn charge_step(usage: u64, guaranteed: u64, d: u64) -> (u64, u64) {
    (
        usage.saturating_add(d),
        d.saturating_sub(guaranteed.saturating_sub(usage)),
    )
}

/// A step of a walk up: how `d` less of a key changes a node's usage, and how much of it the
/// parent gives back (what was above the node's guaranteed part).
pub(super) fn release_step(usage: u64, guaranteed: u64, d: u64) -> (u64, u64) {
    (
        usage.saturating_sub(d),
        d.min(usage.saturating_sub(guaranteed)),
    )
}

/// One node of a walk up: its usage `used` with `delta` applied by `step`, and the part of
/// `delta` that moves on to the parent (only for keys the node limits).
pub(super) fn step_node(
    node: &Node,
    used: &QuotaVec,
    delta: &QuotaVec,
    step: fn(u64, u64, u64) -> (u64, u64),
) -> (QuotaVec, QuotaVec) {
    let mut after = *used;
    let mut up = QuotaVec::ZERO;
    for (i, &d) in delta.as_slice().iter().enumerate() {
        let Some(key) = KeyId::from_index(i).filter(|_| d != 0) else {
            continue;
        };
        let (new_usage, moved) = step(used[key], node.guaranteed[key], d);
        after[key] = new_usage;
        if node.limits.contains(key) {
            up[key] = moved;
        }
    }
    (after, up)
}

/// Applies `demand` to queue `q` and walks up its cohorts with `step` ([`charge_step`] or
/// [`release_step`]); the walk stops when nothing moves on.
fn walk_up(
    nodes: &[Node],
    usage: &mut [QuotaVec],
    q: QueueId,
    demand: &QuotaVec,
    step: fn(u64, u64, u64) -> (u64, u64),
) {
    let mut delta = *demand;
    let mut n = q.index();
    loop {
        let (after, up) = step_node(&nodes[n], &usage[n], &delta, step);
        usage[n] = after;
        match nodes[n].parent {
            Some(parent) if !up.is_zero() => {
                delta = up;
                n = parent as usize;
            }
            _ => break,
        }
    }
}

/// The examples of this module's documentation from when it was public, as unit tests.
#[cfg(test)]
mod examples {
    #[test]
    fn queue_id() {
        use crate::config::QueueConfig;
        use crate::quota::QuotaTree;
        let queues = [QueueConfig {
            name: "a".into(),
            ..Default::default()
        }];
        let tree = QuotaTree::new(&[], &queues, &[]).unwrap();
        assert_eq!(tree.queue_id("a").unwrap().index(), 0);
    }

    #[test]
    fn index() {
        use crate::config::QueueConfig;
        use crate::quota::QuotaTree;
        let queues = [QueueConfig {
            name: "a".into(),
            ..Default::default()
        }];
        let tree = QuotaTree::new(&[], &queues, &[]).unwrap();
        assert_eq!(tree.queue_id("a").map(|q| q.index()), Some(0));
    }

    #[test]
    fn fit() {
        use crate::quota::Fit;
        assert!(Fit::Borrowing.fits());
        assert!(!Fit::NoFit.fits());
    }

    #[test]
    fn fits() {
        assert!(crate::quota::Fit::WithinNominal.fits());
    }

    #[test]
    fn quota_tree() {
        use crate::quota::Fit;

        let mut tree = crate::quota::two_queues_in_a_cohort("cpu", 4, 2);
        let b = tree.queue_id("b").unwrap();
        let five_cpus = tree.demand(5000, 0, &[]);
        assert_eq!(tree.fit(b, &five_cpus), Fit::Borrowing); // 2 own + 3 of a's 4 idle cpus
        tree.add_usage(b, &five_cpus);
        assert!(tree.is_borrowing(b));
        let a = tree.queue_id("a").unwrap();
        assert!(!tree.fits(a, &tree.demand(2000, 0, &[]))); // only 1 cpu left in the cohort
        tree.remove_usage(b, &five_cpus);
        assert_eq!(tree.fit(a, &tree.demand(2000, 0, &[])), Fit::WithinNominal);
        tree.check_invariants().unwrap();
    }

    #[test]
    fn queue_id_is_none_for_an_unknown_queue() {
        use crate::config::QueueConfig;
        use crate::quota::QuotaTree;
        let queues = [QueueConfig {
            name: "a".into(),
            ..Default::default()
        }];
        let tree = QuotaTree::new(&[], &queues, &[]).unwrap();
        assert!(tree.queue_id("a").is_some());
        assert!(tree.queue_id("z").is_none());
    }

    #[test]
    fn queue_name() {
        use crate::config::QueueConfig;
        use crate::quota::QuotaTree;
        let queues = [QueueConfig {
            name: "a".into(),
            ..Default::default()
        }];
        let tree = QuotaTree::new(&[], &queues, &[]).unwrap();
        let q = tree.queue_id("a").unwrap();
        assert_eq!(tree.queue_name(q), "a");
    }

    #[test]
    fn queue_count() {
        let tree = crate::quota::QuotaTree::new(&[], &[], &[]).unwrap();
        assert_eq!(tree.queue_count(), 0);
    }

    #[test]
    fn key() {
        use crate::quota::{KeyId, QuotaTree};
        let tree = QuotaTree::new(&[], &[], &["a100".to_string()]).unwrap();
        assert_eq!(tree.key("gpu"), Some(KeyId::GPU));
        assert!(tree.key("gpu:a100").is_some());
        assert_eq!(tree.key("gpu:h100"), None);
    }

    #[test]
    fn key_name() {
        use crate::quota::{KeyId, QuotaTree};
        let tree = QuotaTree::new(&[], &[], &[]).unwrap();
        assert_eq!(tree.key_name(KeyId::MEMORY_MIB), "memory_mib");
    }

    #[test]
    fn keys() {
        let tree = crate::quota::QuotaTree::new(&[], &[], &[]).unwrap();
        let names: Vec<&str> = tree.keys().map(|k| tree.key_name(k)).collect();
        assert_eq!(names, ["cpu", "memory_mib", "gpu"]);
    }

    #[test]
    fn demand() {
        use crate::quota::{KeyId, QuotaTree};
        let tree = QuotaTree::new(&[], &[], &["a100".to_string()]).unwrap();
        let d = tree.demand(2000, 512, &[("a100", 4000)]);
        assert_eq!(d[KeyId::CPU], 2000);
        assert_eq!(d[KeyId::MEMORY_MIB], 512_000);
        assert_eq!(d[KeyId::GPU], 4000);
        assert_eq!(d[tree.key("gpu:a100").unwrap()], 4000);
    }

    #[test]
    fn add_mig_demand() {
        use crate::config::{QueueConfig, QuotaConfig};
        use crate::quota::{KeyId, QuotaTree};
        let mut queue = QueueConfig {
            name: "q".into(),
            ..QueueConfig::default()
        };
        queue
            .quota
            .insert("mig:1g.10gb".into(), QuotaConfig::default());
        let tree = QuotaTree::new(&[], &[queue], &[]).unwrap();
        let mut d = tree.demand(1000, 0, &[]);
        tree.add_mig_demand(&mut d, "1g.10gb", 3);
        assert_eq!(d[tree.key("mig:1g.10gb").unwrap()], 3000);
        assert_eq!(d[KeyId::GPU], 0);
    }

    #[test]
    fn available() {
        use crate::config::QueueConfig;
        use crate::quota::{KeyId, QuotaTree};
        let queues = [QueueConfig {
            name: "a".into(),
            ..Default::default()
        }];
        let tree = QuotaTree::new(&[], &queues, &[]).unwrap();
        assert_eq!(
            tree.available(tree.queue_id("a").unwrap(), KeyId::CPU),
            u64::MAX
        );
    }

    #[test]
    fn fits_takes_gpus_up_to_the_nominal() {
        let tree = crate::quota::one_queue_of("gpu", 2);
        let a = tree.queue_id("a").unwrap();
        assert!(tree.fits(a, &tree.demand(0, 0, &[("a100", 2000)])));
        assert!(!tree.fits(a, &tree.demand(0, 0, &[("a100", 3000)])));
    }

    #[test]
    fn fit_is_within_nominal_up_to_it_and_no_fit_beyond() {
        use crate::quota::Fit;
        let tree = crate::quota::one_queue_of("cpu", 1);
        let a = tree.queue_id("a").unwrap();
        assert_eq!(tree.fit(a, &tree.demand(1000, 0, &[])), Fit::WithinNominal);
        assert_eq!(tree.fit(a, &tree.demand(1500, 0, &[])), Fit::NoFit);
    }

    #[test]
    fn within_nominal() {
        let tree = crate::quota::one_queue_of("cpu", 1);
        let a = tree.queue_id("a").unwrap();
        assert!(tree.within_nominal(a, &tree.demand(1000, 0, &[])));
        assert!(!tree.within_nominal(a, &tree.demand(1001, 0, &[])));
    }

    #[test]
    fn could_ever_fit() {
        let tree = crate::quota::two_queues_in_a_cohort("gpu", 2, 3);
        let a = tree.queue_id("a").unwrap();
        assert!(tree.could_ever_fit(a, &tree.demand(0, 0, &[("x", 5000)])));
        assert!(!tree.could_ever_fit(a, &tree.demand(0, 0, &[("x", 6000)])));
    }

    #[test]
    fn add_usage() {
        use crate::config::QueueConfig;
        use crate::quota::{KeyId, QuotaTree};
        let queues = [QueueConfig {
            name: "a".into(),
            ..Default::default()
        }];
        let mut tree = QuotaTree::new(&[], &queues, &[]).unwrap();
        let a = tree.queue_id("a").unwrap();
        tree.add_usage(a, &tree.demand(1000, 0, &[]));
        assert_eq!(tree.usage(a)[KeyId::CPU], 1000);
    }

    #[test]
    fn remove_usage() {
        use crate::config::QueueConfig;
        use crate::quota::QuotaTree;
        let queues = [QueueConfig {
            name: "a".into(),
            ..Default::default()
        }];
        let mut tree = QuotaTree::new(&[], &queues, &[]).unwrap();
        let a = tree.queue_id("a").unwrap();
        let d = tree.demand(1000, 64, &[]);
        tree.add_usage(a, &d);
        tree.remove_usage(a, &d);
        assert!(tree.usage(a).is_zero());
    }

    #[test]
    fn usage() {
        use crate::config::QueueConfig;
        use crate::quota::QuotaTree;
        let queues = [QueueConfig {
            name: "a".into(),
            ..Default::default()
        }];
        let tree = QuotaTree::new(&[], &queues, &[]).unwrap();
        assert!(tree.usage(tree.queue_id("a").unwrap()).is_zero());
    }

    #[test]
    fn nominal() {
        use crate::quota::KeyId;
        let tree = crate::quota::one_queue_of("gpu", 8);
        assert_eq!(tree.nominal(tree.queue_id("a").unwrap())[KeyId::GPU], 8000);
    }

    #[test]
    fn limits() {
        use crate::config::QueueConfig;
        use crate::quota::{KeyId, QuotaTree};
        let queues = [QueueConfig {
            name: "a".into(),
            ..Default::default()
        }];
        let tree = QuotaTree::new(&[], &queues, &[]).unwrap();
        assert!(!tree.limits(tree.queue_id("a").unwrap(), KeyId::CPU));
    }

    #[test]
    fn cohort_usage() {
        use crate::config::CohortConfig;
        use crate::quota::QuotaTree;
        let cohorts = [CohortConfig {
            name: "co".into(),
            ..Default::default()
        }];
        let tree = QuotaTree::new(&cohorts, &[], &[]).unwrap();
        assert!(tree.cohort_usage("co").unwrap().is_zero());
        assert!(tree.cohort_usage("nope").is_none());
    }

    #[test]
    fn above_nominal() {
        use crate::config::QueueConfig;
        use crate::quota::{KeyId, QuotaTree};
        let queues = [QueueConfig {
            name: "a".into(),
            ..Default::default()
        }];
        let tree = QuotaTree::new(&[], &queues, &[]).unwrap();
        assert!(!tree.above_nominal(tree.queue_id("a").unwrap(), KeyId::GPU));
    }

    #[test]
    fn is_borrowing() {
        use crate::config::QueueConfig;
        use crate::quota::QuotaTree;
        let queues = [QueueConfig {
            name: "a".into(),
            ..Default::default()
        }];
        let tree = QuotaTree::new(&[], &queues, &[]).unwrap();
        assert!(!tree.is_borrowing(tree.queue_id("a").unwrap()));
    }

    #[test]
    fn above_nominal_in() {
        use crate::config::QueueConfig;
        use crate::quota::QuotaTree;
        let queues = [QueueConfig {
            name: "a".into(),
            ..Default::default()
        }];
        let tree = QuotaTree::new(&[], &queues, &[]).unwrap();
        let a = tree.queue_id("a").unwrap();
        assert!(!tree.above_nominal_in(a, &tree.demand(1000, 0, &[])));
    }

    #[test]
    fn same_tree() {
        use crate::config::{CohortConfig, QueueConfig};
        use crate::quota::QuotaTree;
        let cohorts = [CohortConfig {
            name: "co".into(),
            ..Default::default()
        }];
        let queues = [
            QueueConfig {
                name: "a".into(),
                cohort: Some("co".into()),
                ..Default::default()
            },
            QueueConfig {
                name: "b".into(),
                cohort: Some("co".into()),
                ..Default::default()
            },
            QueueConfig {
                name: "c".into(),
                ..Default::default()
            },
        ];
        let tree = QuotaTree::new(&cohorts, &queues, &[]).unwrap();
        let id = |n| tree.queue_id(n).unwrap();
        assert!(tree.same_tree(id("a"), id("b")));
        assert!(!tree.same_tree(id("a"), id("c")));
    }

    #[test]
    fn has_user_caps() {
        use crate::config::QueueConfig;
        use crate::quota::QuotaTree;
        let queues = [QueueConfig {
            name: "a".into(),
            ..Default::default()
        }];
        let tree = QuotaTree::new(&[], &queues, &[]).unwrap();
        assert!(!tree.has_user_caps(tree.queue_id("a").unwrap()));
    }

    #[test]
    fn fits_user() {
        use crate::Milli;
        use crate::config::QueueConfig;
        use crate::quota::{QuotaTree, QuotaVec};
        let queues = [QueueConfig {
            name: "a".into(),
            max_per_user: [("gpu".to_string(), Milli::from_units(8))]
                .into_iter()
                .collect(),
            ..Default::default()
        }];
        let tree = QuotaTree::new(&[], &queues, &[]).unwrap();
        let a = tree.queue_id("a").unwrap();
        let held = tree.demand(0, 0, &[("a100", 6000)]);
        assert!(tree.fits_user(a, &held, &tree.demand(0, 0, &[("a100", 2000)])));
        assert!(!tree.fits_user(a, &held, &tree.demand(0, 0, &[("a100", 3000)])));
        assert!(tree.fits_user(a, &QuotaVec::ZERO, &tree.demand(64_000, 0, &[])));
    }
}
