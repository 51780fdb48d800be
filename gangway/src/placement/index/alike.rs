//! What makes nodes alike for a placement (their [`NodeClass`]), and the free index's groups
//! of alike nodes, interned: a node that changes class leaves its group by number and joins
//! the new class's group through one hash lookup, instead of two searches of a bucket's
//! ordered map by 17-word keys at every start and end. A bucket's ordered map of its groups
//! changes only when a group is made or emptied.

use std::hash::{Hash, Hasher};

use crate::model::ids::NodeId;
use crate::model::node::Node;
use crate::model::resources::{MAX_DEVICES, NodeAmounts};
use crate::placement::word_hash::WordHashMap;

use super::node_set::NodeSet;

/// What makes two nodes alike for a fragmentation score: their make and what is free.
///
/// Ordered by capacity (cpus, memory, devices in device order), GPU model, GPU count, then free
/// amounts the same way. The devices' thousandths are packed four to a word, first device in
/// the highest bits ([`packed_devices`]), which orders them exactly as the devices one by one
/// while comparing four at a time: the index compares these keys at every start and end.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct StateKey {
    capacity: (u64, u64, PackedDevices),
    model: Option<u32>,
    gpu_count: usize,
    free: (u64, u64, PackedDevices),
}

/// Per-device thousandths, four to a word, the first device of each four in the highest bits.
type PackedDevices = [u64; MAX_DEVICES / 4];

/// `devices` packed so that comparing the words in order compares the devices in order.
fn packed_devices(devices: &[u16; MAX_DEVICES]) -> PackedDevices {
    let mut packed = [0; MAX_DEVICES / 4];
    for (word, four) in packed.iter_mut().zip(devices.chunks_exact(4)) {
        *word = four.iter().fold(0, |word, &d| (word << 16) | u64::from(d));
    }
    packed
}

/// Every field as whole words, one write each (a derived hash writes the arrays as bytes).
impl Hash for StateKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        let (capacity, free) = (&self.capacity, &self.free);
        for (cpu_milli, memory_mib, devices) in [capacity, free] {
            state.write_u64(*cpu_milli);
            state.write_u64(*memory_mib);
            devices.iter().for_each(|word| state.write_u64(*word));
        }
        state.write_u64(self.model.map_or(u64::MAX, u64::from));
        state.write_usize(self.gpu_count);
    }
}

impl StateKey {
    /// The key of `node` with `free` free.
    pub(crate) fn of(node: &Node, free: &NodeAmounts) -> Self {
        let c = node.capacity;
        StateKey {
            capacity: (c.cpu_milli, c.memory_mib, packed_devices(&c.devices)),
            model: node.gpu_model.map(|m| m.0),
            gpu_count: node.gpu_count,
            free: (
                free.cpu_milli,
                free.memory_mib,
                packed_devices(&free.devices),
            ),
        }
    }
}

/// What makes two nodes taking work alike for a placement on what they have free now: the
/// [`StateKey`] of their free amounts and their partitions. Nodes with MIG slices are alike only
/// to themselves (their slice layouts, which decide what fits, may differ).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct NodeClass {
    state: StateKey,
    partitions: u64,
    mig_node: Option<NodeId>,
}

impl Hash for NodeClass {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.state.hash(state);
        state.write_u64(self.partitions);
        state.write_u64(self.mig_node.map_or(u64::MAX, |id| u64::from(id.0)));
    }
}

impl NodeClass {
    /// The class of node `id`, which has `free` free.
    pub(super) fn of(id: NodeId, node: &Node, free: &NodeAmounts) -> Self {
        NodeClass {
            state: StateKey::of(node, free),
            partitions: node.partitions.0,
            mig_node: (!node.mig.is_empty()).then_some(id),
        }
    }
}

/// A group of alike nodes' number, while it has members (numbers of emptied groups are used
/// again).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct GroupId(u32);

/// The nodes of each class that has any, by group number, and the group of each such class.
#[derive(Clone, Debug, Default)]
pub(super) struct AlikeGroups {
    /// The group of each class with members.
    of_class: WordHashMap<NodeClass, GroupId>,
    /// By group number: its class and members (none for a number free to use again).
    groups: Vec<(NodeClass, NodeSet)>,
    /// Numbers of emptied groups.
    vacant: Vec<GroupId>,
    /// The group last joined, while it has members: the nodes of a gang that starts or ends
    /// move to one class after another, which this finds without a hash lookup.
    last_joined: Option<GroupId>,
}

/// Where [`AlikeGroups::join`] put a node.
pub(super) enum Joined {
    /// The group its class already had.
    Existing(GroupId),
    /// A group made for its class, which had no member: the caller lists it in its bucket.
    New(GroupId),
}

impl AlikeGroups {
    /// The class of `group`, which has members.
    pub(super) fn class(&self, group: GroupId) -> &NodeClass {
        &self.groups[group.0 as usize].0
    }

    /// The members of `group`, in id order.
    pub(super) fn members(&self, group: GroupId) -> &NodeSet {
        &self.groups[group.0 as usize].1
    }

    /// Adds `id` to the group of `class`, making the group where the class has none.
    pub(super) fn join(&mut self, class: NodeClass, id: NodeId) -> Joined {
        let last = self.last_joined.filter(|&last| *self.class(last) == class);
        if let Some(group) = last.or_else(|| self.of_class.get(&class).copied()) {
            self.join_group(group, &[id]);
            return Joined::Existing(group);
        }
        let members = NodeSet::of(id);
        let group = match self.vacant.pop() {
            Some(group) => {
                self.groups[group.0 as usize] = (class.clone(), members);
                group
            }
            None => {
                self.groups.push((class.clone(), members));
                GroupId((self.groups.len() - 1) as u32)
            }
        };
        self.of_class.insert(class, group);
        self.last_joined = Some(group);
        Joined::New(group)
    }

    /// Adds `ids` (in id order, none a member) to `group`, which has members: nodes known to
    /// be of its class.
    pub(super) fn join_group(&mut self, group: GroupId, ids: &[NodeId]) {
        self.last_joined = Some(group);
        self.groups[group.0 as usize].1.insert_sorted(ids);
    }

    /// Takes `ids` (in id order, every one a member) out of `group`; where that empties the
    /// group, gives back its class (the caller takes it off its bucket's list) and frees its
    /// number.
    pub(super) fn leave(&mut self, group: GroupId, ids: &[NodeId]) -> Option<NodeClass> {
        let (class, members) = &mut self.groups[group.0 as usize];
        members.remove_sorted(ids);
        if !members.is_empty() {
            return None;
        }
        self.vacant.push(group);
        if self.last_joined == Some(group) {
            self.last_joined = None;
        }
        self.of_class.remove_entry(class).map(|(class, _)| class)
    }

    /// Each class with members and its members, in class order: what two sets of groups that
    /// hold the same nodes alike have in common, whatever their numbering.
    pub(super) fn by_class(&self) -> Vec<(&NodeClass, &NodeSet)> {
        let mut classes: Vec<_> = self
            .of_class
            .iter()
            .map(|(class, &group)| (class, self.members(group)))
            .collect();
        classes.sort_unstable_by(|a, b| a.0.cmp(b.0));
        classes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const _: () = assert!(MAX_DEVICES.is_multiple_of(4), "devices pack four to a word");

    /// Packed device amounts compare as the devices do one by one, first device first.
    #[test]
    fn packed_devices_order_as_the_devices_in_order() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut draw = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let mut devices = [0u16; MAX_DEVICES];
            for d in &mut devices {
                // Few distinct values, so that long equal prefixes occur.
                *d = [0, 1, 500, 999, 1000, u16::MAX][(x % 6) as usize];
                x = x.rotate_left(5);
            }
            devices
        };
        for i in 0..2_000 {
            let a = draw();
            // Every other pair differs in one device only, anywhere.
            let b = match i % 2 {
                0 => draw(),
                _ => {
                    let mut b = a;
                    let at = (i / 2) % MAX_DEVICES;
                    b[at] = draw()[at];
                    b
                }
            };
            assert_eq!(
                packed_devices(&a).cmp(&packed_devices(&b)),
                a.cmp(&b),
                "{a:?} {b:?}"
            );
            assert_eq!(packed_devices(&a) == packed_devices(&b), a == b);
            assert_eq!(
                packed_devices(&a).cmp(&packed_devices(&a)),
                std::cmp::Ordering::Equal
            );
        }
    }

    /// The class of a cpu-only node of 8 cpus with `used` of them in use.
    fn class_with(used: u64) -> NodeClass {
        let mut node = Node::new("n", NodeAmounts::full(8_000, 0, 0), 0, None);
        node.used.cpu_milli = used * 1_000;
        NodeClass::of(NodeId(0), &node, &node.free())
    }

    #[test]
    fn a_class_has_one_group_while_it_has_members_and_emptied_numbers_are_used_again() {
        let mut groups = AlikeGroups::default();
        let (idle, busy) = (class_with(0), class_with(8));
        let Joined::New(first) = groups.join(idle.clone(), NodeId(3)) else {
            panic!("a class without members gets a new group");
        };
        assert!(matches!(groups.join(idle.clone(), NodeId(1)), Joined::Existing(g) if g == first));
        let Joined::New(second) = groups.join(busy.clone(), NodeId(2)) else {
            panic!("another class gets its own group");
        };
        assert_ne!(first, second);
        // Found again by hash after another class was joined last.
        assert!(matches!(groups.join(idle.clone(), NodeId(5)), Joined::Existing(g) if g == first));
        let ids = |list: &[u32]| NodeSet::Few(list.iter().map(|&i| NodeId(i)).collect());
        assert_eq!(groups.members(first), &ids(&[1, 3, 5]));
        // In class order: less free first.
        assert_eq!(
            groups.by_class(),
            [(&busy, &ids(&[2])), (&idle, &ids(&[1, 3, 5]))]
        );
        // Leaving gives the class back only when the group empties.
        assert_eq!(groups.leave(first, &[NodeId(3)]), None);
        assert_eq!(groups.leave(second, &[NodeId(2)]), Some(busy.clone()));
        assert_eq!(groups.by_class(), [(&idle, &ids(&[1, 5]))]);
        // The emptied number serves the next new class, and the emptied class is new again.
        let half = class_with(4);
        assert!(matches!(groups.join(half.clone(), NodeId(7)), Joined::New(g) if g == second));
        assert_eq!(groups.class(second), &half);
        assert!(
            matches!(groups.join(busy, NodeId(2)), Joined::New(g) if g != first && g != second)
        );
    }
}
