//! Share values for fair sharing between queues (Kueue's dominant resource share, DRS).
//!
//! A queue's or cohort's share value is, over the keys on which its usage is above its subtree
//! quota (nominal, plus what its children lend it), the largest ratio of that excess to what
//! its parent cohort could lend it with no usage anywhere (the parent's potential available,
//! respecting borrowing limits), in thousandths, divided by its weight. A node within its
//! quota on every key, or a root, has share 0. Weight 0 makes a borrowing node's share
//! infinite. This is the definition of Kueue's `pkg/cache/scheduler/fair_sharing.go` (Kueue
//! v0.20.0-devel, commit ff69552, whose documented behaviour is v0.19's), with each quota key
//! (`cpu`, `gpu`, `gpu:MODEL`, …) a resource of its own.

use std::cmp::Ordering;

use super::QueueId;
use super::tree::{QuotaTree, add_usage_in, charge_step, release_step, remove_usage_in, step_node};
use super::vector::{KeyId, KeyMask, QuotaVec};

/// A queue's or cohort's share value, with what it is borrowing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Share {
    /// The node's weight.
    weight: f64,
    /// The largest excess-to-lendable ratio, in thousandths, before weighting.
    ratio: f64,
    /// The key that ratio is on.
    dominant: Option<KeyId>,
    /// The keys on which usage is above the subtree quota.
    borrowed: KeyMask,
}

impl Share {
    /// The share value: the dominant ratio (in thousandths) divided by the weight; 0 when not
    /// borrowing; infinite for weight 0 while borrowing.
    pub fn value(&self) -> f64 {
        if self.ratio == 0.0 {
            0.0
        } else if self.weight == 0.0 {
            f64::INFINITY
        } else {
            self.ratio / self.weight
        }
    }

    /// True when usage is above the node's subtree quota on some key.
    pub fn is_borrowing(&self) -> bool {
        self.borrowed != KeyMask::EMPTY
    }

    /// The key the share value is taken on, when borrowing.
    pub(crate) fn dominant(&self) -> Option<KeyId> {
        self.dominant
    }

    /// True when the node borrows on a key `demand` asks for.
    pub(crate) fn borrows_on(&self, demand: &QuotaVec) -> bool {
        self.borrowed.iter().any(|key| demand[key] > 0)
    }

    /// A weight-0 node that borrows: its share is infinite.
    fn zero_weight_borrows(&self) -> bool {
        self.weight == 0.0 && self.ratio != 0.0
    }

    /// Kueue's `CompareDRS`: lower goes first in admission, higher is preempted first. Two
    /// infinite shares compare by their unweighted ratios.
    pub fn compare(&self, other: &Share) -> Ordering {
        match (self.zero_weight_borrows(), other.zero_weight_borrows()) {
            (true, true) => self.ratio.total_cmp(&other.ratio),
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => self.value().total_cmp(&other.value()),
        }
    }
}

impl QuotaTree {
    /// The share value of node `node` were its usage `used`; on a tie between keys, the
    /// first in key order is the dominant one.
    pub(crate) fn share_of(&self, node: usize, used: &QuotaVec) -> Share {
        let n = &self.nodes[node];
        let mut share = Share {
            weight: n.weight,
            ratio: 0.0,
            dominant: None,
            borrowed: KeyMask::EMPTY,
        };
        if n.parent.is_none() {
            return share;
        }
        for key in n.limits.iter() {
            let over = used[key].saturating_sub(n.subtree[key]);
            if over == 0 {
                continue;
            }
            share.borrowed.insert(key);
            let lendable = n.lendable[key];
            if lendable > 0 {
                let ratio = over as f64 * 1000.0 / lendable as f64;
                if ratio > share.ratio {
                    share.ratio = ratio;
                    share.dominant = Some(key);
                }
            }
        }
        share
    }

    /// The share value of node `node` with every node's usage read from `usage`.
    pub(crate) fn share_in(&self, usage: &[QuotaVec], node: usize) -> Share {
        self.share_of(node, &usage[node])
    }

    /// Queue `q`'s share value now.
    pub(crate) fn queue_share(&self, q: QueueId) -> Share {
        self.share_in(&self.usage, q.index())
    }

    /// Cohort `name`'s share value now (in its parent cohort; a root's is 0).
    #[cfg(test)]
    pub(crate) fn cohort_share(&self, name: &str) -> Option<Share> {
        let c = self.cohort_names.get_index_of(name)?;
        Some(self.share_in(&self.usage, self.queue_names.len() + c))
    }

    /// Whether fair sharing decides admission order and preemption between queue `q` and the
    /// other queues of its cohort tree: on when its root cohort (or, where the root sets
    /// nothing, `policy.fair_sharing.enabled`) turns it on; off for a queue without a cohort.
    pub(crate) fn fair_sharing(&self, q: QueueId) -> bool {
        self.queues[q.index()].fair
    }

    /// Whether any queue has fair sharing on.
    pub(crate) fn any_fair_sharing(&self) -> bool {
        self.queues.iter().any(|info| info.fair)
    }

    /// Resolves each queue's fair-sharing switch: its root cohort's own, or `default` (the
    /// scheduler passes `policy.fair_sharing.enabled`).
    pub(crate) fn resolve_fair_sharing(&mut self, default: bool) {
        for q in 0..self.queues.len() {
            let (start, end) = self.queues[q].path;
            let fair = end - start > 1 && {
                let root = self.paths[end as usize - 1] as usize;
                self.nodes[root].fair_switch.unwrap_or(default)
            };
            self.queues[q].fair = fair;
        }
    }

    /// The root node of queue `q`'s tree (the queue itself when it has no cohort).
    pub(crate) fn root_of(&self, q: QueueId) -> u32 {
        *self.path(q).last().unwrap_or(&(q.index() as u32))
    }

    /// The number of nodes (queues, then cohorts).
    pub(crate) fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Queue `q`'s node and its cohorts' nodes, bottom-up.
    pub(crate) fn path_nodes(&self, q: QueueId) -> &[u32] {
        self.path(q)
    }

    /// Charges `demand` to queue `q` in `usage` (one entry per node).
    pub(crate) fn charge_in(&self, usage: &mut [QuotaVec], q: QueueId, demand: &QuotaVec) {
        add_usage_in(&self.nodes, usage, q, demand);
    }

    /// Releases `demand` from queue `q` in `usage` (one entry per node).
    pub(crate) fn release_in(&self, usage: &mut [QuotaVec], q: QueueId, demand: &QuotaVec) {
        remove_usage_in(&self.nodes, usage, q, demand);
    }

    /// The nodes from queue `q` up to its root, each with its share value were `demand`
    /// charged to `q` (`charge`) or released from it, in `usage`; into `out`, bottom-up.
    pub(crate) fn path_shares(
        &self,
        usage: &[QuotaVec],
        q: QueueId,
        demand: &QuotaVec,
        charge: bool,
        out: &mut Vec<(u32, Share)>,
    ) {
        out.clear();
        let step = if charge { charge_step } else { release_step };
        let mut delta = *demand;
        for &n in self.path(q) {
            let node = n as usize;
            if delta.is_zero() {
                out.push((n, self.share_in(usage, node)));
                continue;
            }
            let (after, up) = step_node(&self.nodes[node], &usage[node], &delta, step);
            out.push((n, self.share_of(node, &after)));
            delta = up;
        }
    }
}

/// One queue or cohort of a fair-sharing tree in the fair-sharing report
/// ([`crate::Scheduler::fair_shares`]).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub struct FairShareRow {
    /// The queue's or cohort's name.
    pub name: String,
    /// `queue` or `cohort`.
    pub kind: &'static str,
    /// Its parent cohort (none for a root).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// Its weight.
    pub weight: f64,
    /// Its share value; `null` when infinite (weight 0 while borrowing).
    pub share: Option<f64>,
    /// Whether its usage is above its subtree quota on some key.
    pub borrowing: bool,
    /// The key its share is taken on, when borrowing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dominant: Option<String>,
}

impl QuotaTree {
    /// The share values of the queues of fair-sharing trees (in configuration order), and with
    /// `cohorts` of the cohorts of those trees too (queues first, then cohorts in
    /// configuration order). Empty when no queue has fair sharing on.
    pub(crate) fn fair_sharing_rows(&self, cohorts: bool) -> Vec<FairShareRow> {
        let queues = self.queue_names.len();
        let mut in_tree = vec![false; self.nodes.len()];
        for q in 0..queues {
            if self.queues[q].fair {
                for &n in self.path(QueueId(q as u32)) {
                    in_tree[n as usize] = true;
                }
            }
        }
        let names = self.queue_names.iter().chain(self.cohort_names.iter());
        names
            .enumerate()
            .filter(|(n, _)| in_tree[*n] && (cohorts || *n < queues))
            .map(|(n, name)| {
                let node = &self.nodes[n];
                let share = self.share_in(&self.usage, n);
                let parent = node
                    .parent
                    .and_then(|p| self.cohort_names.get_index(p as usize - queues))
                    .cloned();
                FairShareRow {
                    name: name.clone(),
                    kind: if n < queues { "queue" } else { "cohort" },
                    parent,
                    weight: node.weight,
                    share: Some(share.value()).filter(|v| v.is_finite()),
                    borrowing: share.is_borrowing(),
                    dominant: share.dominant().map(|k| self.key_name(k).to_owned()),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{CohortConfig, NodeFairSharing, QueueConfig, QuotaConfig};
    use crate::model::amount::Milli;

    fn cpu(n: u64) -> indexmap::IndexMap<String, QuotaConfig> {
        [(
            "cpu".to_string(),
            QuotaConfig {
                nominal: Milli::from_units(n),
                ..Default::default()
            },
        )]
        .into_iter()
        .collect()
    }

    fn queue(name: &str, cohort: &str, nominal: u64, weight: f64) -> QueueConfig {
        QueueConfig {
            name: name.into(),
            cohort: Some(cohort.into()),
            quota: cpu(nominal),
            fair_sharing: Some(NodeFairSharing {
                weight,
                enabled: None,
            }),
            ..Default::default()
        }
    }

    /// A queue without a cohort (nor quota).
    fn queue_alone(name: &str) -> QueueConfig {
        QueueConfig {
            name: name.into(),
            ..Default::default()
        }
    }

    /// Fair sharing switched off where it is set, at weight 1.
    fn switched_off() -> NodeFairSharing {
        NodeFairSharing {
            weight: 1.0,
            enabled: Some(false),
        }
    }

    fn cohort(name: &str, parent: Option<&str>, nominal: u64) -> CohortConfig {
        CohortConfig {
            name: name.into(),
            parent: parent.map(Into::into),
            quota: if nominal > 0 {
                cpu(nominal)
            } else {
                Default::default()
            },
            ..Default::default()
        }
    }

    fn cpus(tree: &QuotaTree, n: u64) -> QuotaVec {
        tree.demand(n * 1000, 0, &[])
    }

    /// Kueue's fairsharing integration test "Preemption is disabled": queues of 3, 1 and 4
    /// cpus; the first using 8 has share 5/8 of the cohort's 8 lendable cpus.
    #[test]
    fn share_is_the_borrowed_part_of_what_the_cohort_could_lend_in_thousandths() {
        let cohorts = [cohort("all", None, 0)];
        let queues = [
            queue("a", "all", 3, 1.0),
            queue("b", "all", 1, 1.0),
            queue("shared", "all", 4, 1.0),
        ];
        let mut tree = QuotaTree::new(&cohorts, &queues, &[]).unwrap();
        let (a, b) = (tree.queue_id("a").unwrap(), tree.queue_id("b").unwrap());
        tree.add_usage(a, &cpus(&tree, 8));
        assert_eq!(tree.queue_share(a).value(), 625.0);
        assert_eq!(tree.queue_share(b).value(), 0.0);
        tree.remove_usage(a, &cpus(&tree, 4));
        tree.add_usage(b, &cpus(&tree, 3));
        assert_eq!(tree.queue_share(a).value(), 125.0);
        assert_eq!(tree.queue_share(b).value(), 250.0);
    }

    /// Kueue's "using hierarchical cohorts: admits workloads respecting fair share": each of
    /// two queues of 2 cpus, under two cohorts under `first-left`, uses 5 of the root's 14.
    #[test]
    fn cohort_shares_count_their_subtree_usage_above_their_subtree_quota() {
        let cohorts = [
            cohort("root", None, 0),
            cohort("first-left", Some("root"), 0),
            cohort("first-right", Some("root"), 0),
            cohort("second-left", Some("first-left"), 0),
            cohort("second-right", Some("first-left"), 0),
            cohort("bank", Some("first-right"), 10),
        ];
        let queues = [
            queue("cq-left", "second-left", 2, 1.0),
            queue("cq-right", "second-right", 2, 1.0),
        ];
        let mut tree = QuotaTree::new(&cohorts, &queues, &[]).unwrap();
        for name in ["cq-left", "cq-right"] {
            let q = tree.queue_id(name).unwrap();
            tree.add_usage(q, &cpus(&tree, 5));
        }
        let share = |name: &str| tree.cohort_share(name).unwrap().value();
        assert!((share("first-left") - 6000.0 / 14.0).abs() < 1e-9);
        assert!((share("second-left") - 3000.0 / 14.0).abs() < 1e-9);
        assert!((share("second-right") - 3000.0 / 14.0).abs() < 1e-9);
        assert_eq!(share("first-right"), 0.0);
        assert_eq!(share("bank"), 0.0);
        assert_eq!(share("root"), 0.0);
    }

    #[test]
    fn weight_divides_the_share_and_zero_makes_a_borrower_infinite_and_last() {
        let cohorts = [cohort("all", None, 0)];
        let queues = [
            queue("heavy", "all", 2, 2.0),
            queue("zero", "all", 2, 0.0),
            queue("plain", "all", 4, 1.0),
        ];
        let mut tree = QuotaTree::new(&cohorts, &queues, &[]).unwrap();
        let id = |n: &str| tree.queue_id(n).unwrap();
        let (heavy, zero, plain) = (id("heavy"), id("zero"), id("plain"));
        assert_eq!(tree.queue_share(zero).value(), 0.0); // not borrowing: 0, not infinite
        tree.add_usage(heavy, &cpus(&tree, 4));
        tree.add_usage(zero, &cpus(&tree, 3));
        assert_eq!(tree.queue_share(heavy).value(), 2.0 / 8.0 * 1000.0 / 2.0);
        assert!(tree.queue_share(zero).value().is_infinite());
        let (h, z) = (tree.queue_share(heavy), tree.queue_share(zero));
        assert_eq!(z.compare(&h), Ordering::Greater);
        assert_eq!(h.compare(&z), Ordering::Less);
        assert_eq!(h.compare(&tree.queue_share(plain)), Ordering::Greater);
    }

    /// What the pass asks of a share (issue 28, item 5: these survived cargo-mutants): whether
    /// it borrows, on which key its value is taken, and whether a demand asks for a key it
    /// borrows on (a demand of 0 on that key does not).
    #[test]
    fn a_borrower_names_its_dominant_key_and_the_demands_that_ask_for_what_it_borrows() {
        let both = |n: u64| {
            let mut quota = cpu(n);
            quota.insert(
                "gpu".to_string(),
                QuotaConfig {
                    nominal: Milli::from_units(n),
                    ..Default::default()
                },
            );
            quota
        };
        let cohorts = [cohort("all", None, 0)];
        let queues = [
            QueueConfig {
                quota: both(2),
                ..queue("a", "all", 2, 1.0)
            },
            QueueConfig {
                quota: both(2),
                ..queue("b", "all", 2, 1.0)
            },
        ];
        let mut tree = QuotaTree::new(&cohorts, &queues, &["a100".to_string()]).unwrap();
        let (a, b) = (tree.queue_id("a").unwrap(), tree.queue_id("b").unwrap());
        let one_gpu = tree.demand(0, 0, &[("a100", 1000)]);
        // a: 3 cpus (one above its 2) and 1 GPU (within its 2); b: 1 cpu.
        tree.add_usage(a, &tree.demand(3000, 0, &[("a100", 1000)]));
        tree.add_usage(b, &cpus(&tree, 1));
        let share = tree.queue_share(a);
        assert!(share.is_borrowing());
        assert_eq!(share.dominant(), tree.key("cpu"));
        assert!(share.dominant().is_some());
        assert!(share.borrows_on(&cpus(&tree, 1)));
        assert!(share.borrows_on(&tree.demand(1000, 0, &[("a100", 1000)])));
        assert!(!share.borrows_on(&one_gpu), "a borrows no GPU");
        assert!(
            !share.borrows_on(&tree.demand(0, 0, &[])),
            "an empty demand asks for nothing"
        );
        let within = tree.queue_share(b);
        assert!(!within.is_borrowing());
        assert_eq!(within.dominant(), None);
        assert!(!within.borrows_on(&cpus(&tree, 1)));
        // Borrowing GPUs too: the dominant key is the one with the larger ratio.
        tree.add_usage(a, &tree.demand(0, 0, &[("a100", 3000)]));
        let share = tree.queue_share(a);
        assert_eq!(share.dominant(), tree.key("gpu"));
        assert!(share.borrows_on(&one_gpu));
    }

    /// Usage above a key that nothing above could ever lend (issue 28, item 5: `lendable > 0`
    /// → `>=` in `share_of` survived cargo-mutants): the queue borrows, but that key gives no
    /// ratio (as Kueue skips a resource with nothing lendable): share 0, no dominant key.
    #[test]
    fn borrowing_what_nothing_could_lend_gives_no_ratio() {
        let cohorts = [cohort("all", None, 0)];
        let queues = [queue("a", "all", 0, 1.0)];
        let mut tree = QuotaTree::new(&cohorts, &queues, &[]).unwrap();
        let a = tree.queue_id("a").unwrap();
        // As after a reconfiguration that took a's quota away while its job runs.
        tree.add_usage(a, &cpus(&tree, 1));
        let share = tree.queue_share(a);
        assert!(share.is_borrowing());
        assert_eq!(share.value(), 0.0);
        assert_eq!(share.dominant(), None);
    }

    /// Equal ratios on two keys (issue 28, item 5: `>` → `>=` in `share_of` survived
    /// cargo-mutants): the dominant key is the first of them in key order, `cpu` before `gpu`.
    #[test]
    fn a_tie_between_keys_names_the_first_in_key_order() {
        let mut both = cpu(2);
        both.insert(
            "gpu".to_string(),
            QuotaConfig {
                nominal: Milli::from_units(2),
                ..Default::default()
            },
        );
        let cohorts = [cohort("all", None, 0)];
        let queues = [
            QueueConfig {
                quota: both.clone(),
                ..queue("a", "all", 2, 1.0)
            },
            QueueConfig {
                quota: both,
                ..queue("b", "all", 2, 1.0)
            },
        ];
        let mut tree = QuotaTree::new(&cohorts, &queues, &["a100".to_string()]).unwrap();
        let a = tree.queue_id("a").unwrap();
        // One cpu and one GPU above a's 2 of each, out of b's 2 of each: equal ratios.
        tree.add_usage(a, &tree.demand(3000, 0, &[("a100", 3000)]));
        let share = tree.queue_share(a);
        // Each ratio: 1 over the cohort's 4, in thousandths.
        assert_eq!(share.value(), 250.0);
        let index = |name: &str| tree.key(name).map(|k| k.index());
        assert!(index("cpu") < index("gpu"));
        assert_eq!(share.dominant(), tree.key("cpu"));
    }

    /// Two borrowers of weight 0 (both infinite) compare by how much they borrow; a weight-0
    /// queue within its quota has share 0 and comes before any borrower.
    #[test]
    fn zero_weight_borrowers_compare_by_their_ratios_and_an_idle_one_comes_first() {
        let cohorts = [cohort("all", None, 0)];
        let queues = [
            queue("z1", "all", 2, 0.0),
            queue("z2", "all", 2, 0.0),
            queue("idle", "all", 2, 0.0),
            queue("plain", "all", 4, 1.0),
        ];
        let mut tree = QuotaTree::new(&cohorts, &queues, &[]).unwrap();
        let id = |n: &str| tree.queue_id(n).unwrap();
        let (z1, z2, idle, plain) = (id("z1"), id("z2"), id("idle"), id("plain"));
        tree.add_usage(z1, &cpus(&tree, 3));
        tree.add_usage(z2, &cpus(&tree, 4));
        tree.add_usage(plain, &cpus(&tree, 5));
        let share = |q| tree.queue_share(q);
        assert!(share(z1).value().is_infinite() && share(z2).value().is_infinite());
        assert_eq!(share(z1).compare(&share(z2)), Ordering::Less);
        assert_eq!(share(z2).compare(&share(z1)), Ordering::Greater);
        assert_eq!(share(z1).compare(&share(z1)), Ordering::Equal);
        assert!(share(plain).value() > 0.0);
        assert_eq!(share(idle).value(), 0.0);
        assert_eq!(share(idle).compare(&share(plain)), Ordering::Less);
        assert_eq!(share(plain).compare(&share(idle)), Ordering::Greater);
        assert_eq!(share(plain).compare(&share(z1)), Ordering::Less);
    }

    #[test]
    fn shares_along_a_path_with_a_demand_charged_or_released() {
        let cohorts = [cohort("all", None, 0)];
        let queues = [queue("a", "all", 2, 1.0), queue("b", "all", 2, 1.0)];
        let mut tree = QuotaTree::new(&cohorts, &queues, &[]).unwrap();
        let a = tree.queue_id("a").unwrap();
        tree.add_usage(a, &cpus(&tree, 3));
        let mut out = Vec::new();
        tree.path_shares(&tree.usage, a, &cpus(&tree, 1), true, &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].1.value(), 500.0); // 2 of 4 borrowed with it
        tree.path_shares(&tree.usage, a, &cpus(&tree, 1), false, &mut out);
        assert_eq!(out[0].1.value(), 0.0);
        assert!(!out[0].1.is_borrowing());
        assert_eq!(tree.queue_share(a).value(), 250.0); // the tree itself unchanged
    }

    /// Nodes are the queues, then the cohorts, in configuration order; a queue's path runs
    /// from its own node up to its root cohort, and a queue without a cohort is its own root.
    #[test]
    fn nodes_are_queues_then_cohorts_and_a_path_runs_bottom_up_to_the_root() {
        let cohorts = [cohort("root", None, 0), cohort("mid", Some("root"), 0)];
        let queues = [
            queue("a", "mid", 1, 1.0),
            queue("b", "root", 1, 1.0),
            queue_alone("alone"),
        ];
        let tree = QuotaTree::new(&cohorts, &queues, &[]).unwrap();
        let id = |n: &str| tree.queue_id(n).unwrap();
        let (a, b, alone) = (id("a"), id("b"), id("alone"));
        // Three queues (nodes 0 to 2), then root (3) and mid (4).
        assert_eq!(tree.node_count(), 5);
        assert_eq!(tree.path_nodes(a), [0, 4, 3]);
        assert_eq!(tree.path_nodes(b), [1, 3]);
        assert_eq!(tree.path_nodes(alone), [2]);
        assert_eq!((tree.root_of(a), tree.root_of(b)), (3, 3));
        assert_eq!(tree.root_of(alone), 2);
    }

    /// `charge_in` and `release_in` do to a copy of the usage what `add_usage` and
    /// `remove_usage` do to the tree's own, cohorts included; the tree is left as it was.
    #[test]
    fn charging_and_releasing_in_a_copy_of_the_usage_leaves_the_tree_alone() {
        let cohorts = [cohort("root", None, 0), cohort("mid", Some("root"), 0)];
        let queues = [queue("a", "mid", 2, 1.0), queue("b", "root", 4, 1.0)];
        let tree = QuotaTree::new(&cohorts, &queues, &[]).unwrap();
        let a = tree.queue_id("a").unwrap();
        let before = tree.usage.clone();
        let mut usage = before.clone();
        tree.charge_in(&mut usage, a, &cpus(&tree, 3));
        assert_eq!(tree.usage, before);
        assert!(tree.share_in(&usage, a.index()).is_borrowing());
        let mut charged = tree.clone();
        charged.add_usage(a, &cpus(&tree, 3));
        assert_eq!(usage, charged.usage);
        tree.release_in(&mut usage, a, &cpus(&tree, 1));
        charged.remove_usage(a, &cpus(&tree, 1));
        assert_eq!(usage, charged.usage);
        tree.release_in(&mut usage, a, &cpus(&tree, 2));
        assert_eq!(usage, before);
    }

    /// Each node of the path gets the share it would have with the demand charged (or
    /// released): the same as the tree's own shares once the demand really is charged. What a
    /// queue keeps for itself (`lending_limit`) stops there: the cohorts' shares are read as
    /// they are.
    #[test]
    fn path_shares_are_the_shares_the_demand_would_give_every_node_up_the_path() {
        let cohorts = [cohort("root", None, 0), cohort("mid", Some("root"), 0)];
        let mut a = queue("a", "mid", 4, 1.0);
        a.quota["cpu"].lending_limit = Some(Milli::from_units(2)); // 2 cpus a keeps
        let queues = [a, queue("b", "root", 4, 1.0)];
        let mut tree = QuotaTree::new(&cohorts, &queues, &[]).unwrap();
        let a = tree.queue_id("a").unwrap();
        let path: Vec<u32> = tree.path_nodes(a).to_vec();
        let shares = |tree: &QuotaTree| -> Vec<(u32, Share)> {
            path.iter()
                .map(|&n| (n, tree.share_in(&tree.usage, n as usize)))
                .collect()
        };
        let mut out = Vec::new();
        for (used, demand) in [(0, 5), (5, 2), (3, 3), (0, 1)] {
            tree.add_usage(a, &cpus(&tree, used));
            let mut charged = tree.clone();
            charged.add_usage(a, &cpus(&tree, demand));
            tree.path_shares(&tree.usage, a, &cpus(&tree, demand), true, &mut out);
            assert_eq!(out, shares(&charged), "{used} used, {demand} charged");
            tree.path_shares(&charged.usage, a, &cpus(&tree, demand), false, &mut out);
            assert_eq!(out, shares(&tree), "{used} used, {demand} released");
            tree.remove_usage(a, &cpus(&tree, used));
        }
        // 6 cpus: 2 above a's 4, and so 2 above the 2 it lends to mid.
        tree.path_shares(&tree.usage, a, &cpus(&tree, 6), true, &mut out);
        assert!(out[0].1.is_borrowing() && out[1].1.is_borrowing());
        assert_eq!(out[2].1.value(), 0.0, "a root's share is 0");
    }

    /// The report's rows: the queues of fair-sharing trees, then (with `cohorts`) their
    /// cohorts, each with its parent, weight, share (`None` when infinite), whether it borrows
    /// and the key its share is taken on.
    #[test]
    fn fair_sharing_rows_report_the_queues_then_the_cohorts_of_fair_trees() {
        let mut cohorts = [
            cohort("root", None, 0),
            cohort("mid", Some("root"), 0),
            cohort("off", None, 0),
        ];
        cohorts[2].fair_sharing = Some(switched_off());
        let queues = [
            queue("a", "mid", 2, 1.0),
            queue("zero", "root", 2, 0.0),
            queue("b", "root", 4, 2.0),
            queue("unfair", "off", 4, 1.0),
            queue_alone("alone"),
        ];
        let mut tree = QuotaTree::new(&cohorts, &queues, &[]).unwrap();
        assert!(tree.fair_sharing_rows(true).is_empty(), "fair sharing off");
        tree.resolve_fair_sharing(true);
        assert!(tree.any_fair_sharing());
        let a = tree.queue_id("a").unwrap();
        let zero = tree.queue_id("zero").unwrap();
        tree.add_usage(a, &cpus(&tree, 3));
        tree.add_usage(zero, &cpus(&tree, 3));
        tree.add_usage(tree.queue_id("unfair").unwrap(), &cpus(&tree, 5));
        let queue_rows = tree.fair_sharing_rows(false);
        let names: Vec<&str> = queue_rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["a", "zero", "b"]);
        let rows = tree.fair_sharing_rows(true);
        assert_eq!(rows[..3], queue_rows[..]);
        let names: Vec<(&str, &str)> = rows.iter().map(|r| (r.name.as_str(), r.kind)).collect();
        assert_eq!(
            names,
            [
                ("a", "queue"),
                ("zero", "queue"),
                ("b", "queue"),
                ("root", "cohort"),
                ("mid", "cohort")
            ]
        );
        let parents: Vec<Option<&str>> = rows.iter().map(|r| r.parent.as_deref()).collect();
        assert_eq!(
            parents,
            [Some("mid"), Some("root"), Some("root"), None, Some("root")]
        );
        let weights: Vec<f64> = rows.iter().map(|r| r.weight).collect();
        assert_eq!(weights, [1.0, 0.0, 2.0, 1.0, 1.0]);
        // a: 1 above its 2, of the root's 8 cpus; zero: infinite; mid borrows what a borrows.
        let a_row = &rows[0];
        assert_eq!(a_row.share, Some(125.0));
        assert!(a_row.borrowing);
        assert_eq!(a_row.dominant.as_deref(), Some("cpu"));
        assert_eq!((rows[1].share, rows[1].borrowing), (None, true));
        assert_eq!(rows[2].share, Some(0.0));
        assert!(!rows[2].borrowing);
        assert_eq!(rows[2].dominant, None);
        assert_eq!((rows[3].share, rows[3].borrowing), (Some(0.0), false));
        assert!(rows[4].borrowing);
        assert_eq!(rows[4].dominant.as_deref(), Some("cpu"));
    }

    #[test]
    fn fair_sharing_settings_errors_name_the_field() {
        let mut bad_weight = queue("a", "all", 1, -1.0);
        let cohorts = [cohort("all", None, 0), cohort("sub", Some("all"), 0)];
        let err = QuotaTree::new(&cohorts, std::slice::from_ref(&bad_weight), &[]).unwrap_err();
        assert_eq!(err.field, "queues[0].fair_sharing.weight");
        bad_weight.fair_sharing = Some(NodeFairSharing {
            weight: 1.0,
            enabled: Some(true),
        });
        let err = QuotaTree::new(&cohorts, &[bad_weight], &[]).unwrap_err();
        assert_eq!(err.field, "queues[0].fair_sharing.enabled");
        let mut nested = cohorts.clone();
        nested[1].fair_sharing = Some(switched_off());
        let err = QuotaTree::new(&nested, &[], &[]).unwrap_err();
        assert_eq!(err.field, "cohorts[1].fair_sharing.enabled");
    }

    #[test]
    fn a_root_cohort_switch_overrides_the_policy_default() {
        let mut cohorts = [cohort("on", None, 0), cohort("off", None, 0)];
        cohorts[1].fair_sharing = Some(switched_off());
        let queues = [
            queue("a", "on", 1, 1.0),
            queue("b", "off", 1, 1.0),
            queue_alone("alone"),
        ];
        let mut tree = QuotaTree::new(&cohorts, &queues, &[]).unwrap();
        tree.resolve_fair_sharing(true);
        let on = |n: &str| tree.fair_sharing(tree.queue_id(n).unwrap());
        assert!(on("a"));
        assert!(!on("b"));
        assert!(!on("alone"));
        tree.resolve_fair_sharing(false);
        assert!(!tree.any_fair_sharing());
    }
}

/// The examples of this module's documentation from when it was public, as unit tests.
#[cfg(test)]
mod examples {
    #[test]
    fn share() {
        use crate::config::{CohortConfig, NodeFairSharing, QueueConfig};
        use crate::quota::QuotaTree;

        let gpus = |n| crate::quota::nominal_quota("gpu", n);
        let cohorts = [CohortConfig {
            name: "co".into(),
            ..Default::default()
        }];
        let queue = |name: &str, weight| QueueConfig {
            name: name.into(),
            cohort: Some("co".into()),
            quota: gpus(4),
            fair_sharing: Some(NodeFairSharing {
                weight,
                enabled: None,
            }),
            ..Default::default()
        };
        let mut tree = QuotaTree::new(&cohorts, &[queue("a", 1.0), queue("b", 2.0)], &[]).unwrap();
        let (a, b) = (tree.queue_id("a").unwrap(), tree.queue_id("b").unwrap());
        // a uses 6 GPUs: 2 above its nominal 4, of the 8 the cohort could lend it.
        tree.add_usage(a, &tree.demand(0, 0, &[("h100", 6000)]));
        assert_eq!(tree.queue_share(a).value(), 250.0);
        assert!(tree.queue_share(a).is_borrowing());
        assert_eq!(tree.queue_share(b).value(), 0.0);
    }

    #[test]
    fn value() {
        let tree = crate::quota::one_plain_queue();
        assert_eq!(tree.queue_share(tree.queue_id("a").unwrap()).value(), 0.0);
    }

    #[test]
    fn is_borrowing() {
        let tree = crate::quota::one_plain_queue();
        assert!(!tree.queue_share(tree.queue_id("a").unwrap()).is_borrowing());
    }

    #[test]
    fn dominant() {
        let tree = crate::quota::one_plain_queue();
        assert_eq!(
            tree.queue_share(tree.queue_id("a").unwrap()).dominant(),
            None
        );
    }

    #[test]
    fn compare() {
        let tree = crate::quota::one_plain_queue();
        let s = tree.queue_share(tree.queue_id("a").unwrap());
        assert_eq!(s.compare(&s), std::cmp::Ordering::Equal);
    }

    #[test]
    fn queue_share() {
        let tree = crate::quota::one_plain_queue();
        assert_eq!(tree.queue_share(tree.queue_id("a").unwrap()).value(), 0.0); // no cohort
    }

    #[test]
    fn cohort_share() {
        use crate::config::CohortConfig;
        use crate::quota::QuotaTree;
        let cohorts = [CohortConfig {
            name: "co".into(),
            ..Default::default()
        }];
        let tree = QuotaTree::new(&cohorts, &[], &[]).unwrap();
        assert_eq!(tree.cohort_share("co").map(|s| s.value()), Some(0.0));
        assert!(tree.cohort_share("nope").is_none());
    }

    #[test]
    fn fair_sharing() {
        let tree = crate::quota::one_plain_queue();
        assert!(!tree.fair_sharing(tree.queue_id("a").unwrap()));
    }

    #[test]
    fn fair_sharing_rows() {
        use crate::config::{CohortConfig, NodeFairSharing, QueueConfig};
        use crate::quota::QuotaTree;
        let cpu = |n| crate::quota::nominal_quota("cpu", n);
        let cohorts = [CohortConfig {
            name: "co".into(),
            fair_sharing: Some(NodeFairSharing {
                weight: 1.0,
                enabled: Some(true),
            }),
            ..Default::default()
        }];
        let queues = [
            QueueConfig {
                name: "a".into(),
                cohort: Some("co".into()),
                quota: cpu(2),
                ..Default::default()
            },
            QueueConfig {
                name: "b".into(),
                cohort: Some("co".into()),
                quota: cpu(2),
                ..Default::default()
            },
        ];
        let mut tree = QuotaTree::new(&cohorts, &queues, &[]).unwrap();
        tree.resolve_fair_sharing(false);
        tree.add_usage(tree.queue_id("a").unwrap(), &tree.demand(3000, 0, &[]));
        let rows = tree.fair_sharing_rows(true);
        assert_eq!(rows.len(), 3);
        assert_eq!((rows[0].name.as_str(), rows[0].share), ("a", Some(250.0)));
        assert_eq!(rows[0].dominant.as_deref(), Some("cpu"));
        assert_eq!((rows[2].kind, rows[2].share), ("cohort", Some(0.0)));
    }
}
