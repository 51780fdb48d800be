//! Proptest strategies for the hardware side of generated clusters and jobs: topology levels and
//! node labels, NVLink islands, MIG layouts (a mig-parted configuration on every device, or
//! explicit slices on the first devices only, so that MIG and whole GPUs share a node), and the
//! topology and MIG requests of task groups — mostly valid, sometimes naming a level the
//! cluster lacks, a MIG profile no node has (`1g.5gb`, a 40GB profile never generated) or no
//! profile name at all (`bogus`), which the scheduler must reject cleanly.
//!
//! [`crate::testkit::strategies`] draws from these; they are public for tests that build their
//! own clusters.
//!
//! ```
//! use gangway::config::NodeConfig;
//! use gangway::testkit::strategies_hw::{node_extras, topology};
//! use proptest::strategy::{Strategy, ValueTree};
//! use proptest::test_runner::TestRunner;
//! let mut runner = TestRunner::deterministic();
//! let levels = topology().new_tree(&mut runner).unwrap().current();
//! assert!(levels.len() <= 2);
//! let mut node = NodeConfig { name: "n0".into(), ..NodeConfig::default() };
//! node_extras().new_tree(&mut runner).unwrap().current().apply(&mut node, true);
//! assert_eq!(node.labels.len(), 2); // block and rack
//! ```

use proptest::option;
use proptest::prelude::*;
use proptest::sample::select;

use crate::config::{GpuConfig, MigDeviceConfig, NodeConfig};
use crate::model::job::{TaskGroup, TopologyRequest};
use crate::model::mig_table::{MigFamily, config_slices};

/// Topology levels clusters draw from, broadest first: a cluster has none, `rack`, or both.
pub const TOPOLOGY_LEVELS: [&str; 2] = ["block", "rack"];

/// Models given to MIG nodes, with their device memory (MiB) and MIG table.
pub(crate) const MIG_MODELS: [(&str, u64, MigFamily); 3] = [
    ("a100-80gb", 81_920, MigFamily::Gb80),
    ("h100", 81_920, MigFamily::Gb80),
    ("h200", 144_384, MigFamily::H200Gb141),
];

/// How many block and rack label values nodes draw from (`b0`…, `r0`…; a rack is identified by
/// its whole path, so `r0` under `b0` and under `b1` are two racks).
const LABEL_POOL: u8 = 2;

/// The configuration index that stands for `all-balanced`, whatever the table's order.
const BALANCED: usize = usize::MAX;

/// The profiles of the `all-balanced` configurations of the generated models, which MIG
/// groups ask for most.
const BALANCED_PROFILES: [&str; 6] = [
    "1g.10gb", "2g.20gb", "3g.40gb", "1g.18gb", "2g.35gb", "3g.71gb",
];

/// The topology levels of a cluster: none (most often), `["rack"]` or `["block", "rack"]`.
pub fn topology() -> impl Strategy<Value = Vec<String>> {
    let levels = |n: usize| {
        TOPOLOGY_LEVELS[2 - n..]
            .iter()
            .map(|l| l.to_string())
            .collect()
    };
    prop_oneof![3 => Just(Vec::new()), 1 => Just(levels(1)), 1 => Just(levels(2))]
}

/// How a node's GPUs are joined by NVLink.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Islands {
    None,
    /// Every device in one island.
    All,
    /// Two islands of half the devices each (4 devices or more).
    Halves,
    /// Islands of two neighbours.
    Pairs,
}

/// A node's MIG layout: a configuration of a model's table, on every device (`mig_config`) or
/// listed as slices of the first `devices` devices only.
#[derive(Clone, Debug, PartialEq, Eq)]
struct MigDraw {
    model: usize,
    config: usize,
    devices: Option<u32>,
}

/// Hardware details drawn for one node, applied to a node drawn elsewhere.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeExtras {
    block: u8,
    rack: u8,
    islands: Islands,
    mig: Option<MigDraw>,
}

impl NodeExtras {
    /// Puts these details on `node`: `block` and `rack` labels when `labels`, and on a GPU node
    /// its NVLink islands and MIG layout (which switch the GPUs to a MIG model).
    ///
    /// ```
    /// # use gangway::testkit::strategies_hw::node_extras;
    /// # use proptest::strategy::{Strategy, ValueTree};
    /// # let mut runner = proptest::test_runner::TestRunner::deterministic();
    /// let extras = node_extras().new_tree(&mut runner).unwrap().current();
    /// let mut node = gangway::config::NodeConfig::default();
    /// extras.apply(&mut node, false);
    /// assert!(node.labels.is_empty() && node.gpus.is_none());
    /// ```
    pub fn apply(&self, node: &mut NodeConfig, labels: bool) {
        if labels {
            node.labels
                .insert("block".into(), format!("b{}", self.block));
            node.labels.insert("rack".into(), format!("r{}", self.rack));
        }
        if let Some(gpus) = node.gpus.as_mut() {
            gpus.nvlink_islands = islands(self.islands, gpus.count);
            if let Some(mig) = &self.mig {
                mig.apply(gpus);
            }
        }
    }
}

impl MigDraw {
    fn apply(&self, gpus: &mut GpuConfig) {
        let (model, memory_mib, family) = MIG_MODELS[self.model % MIG_MODELS.len()];
        let names: Vec<&str> = family.config_names().collect();
        let config = match self.config {
            BALANCED => "all-balanced",
            i => names[i % names.len()],
        };
        gpus.model = model.to_string();
        gpus.memory_mib = memory_mib;
        let Some(devices) = self.devices else {
            gpus.mig_config = Some(config.to_string());
            return;
        };
        let slices = config_slices(family, config).unwrap_or_default();
        gpus.mig = (0..devices.min(gpus.count))
            .flat_map(|gpu| {
                slices
                    .iter()
                    .zip(0..)
                    .map(move |(profile, slice)| MigDeviceConfig {
                        gpu,
                        slice,
                        profile: (*profile).to_string(),
                        ..MigDeviceConfig::default()
                    })
            })
            .collect();
    }
}

fn islands(shape: Islands, count: u32) -> Vec<Vec<u32>> {
    let chunk = match shape {
        Islands::None => return Vec::new(),
        Islands::All => count,
        Islands::Halves if count >= 4 => count / 2,
        Islands::Halves => count,
        Islands::Pairs => 2,
    };
    let devices: Vec<u32> = (0..count).collect();
    devices
        .chunks(chunk.max(1) as usize)
        .filter(|island| island.len() >= 2)
        .map(<[u32]>::to_vec)
        .collect()
}

/// Labels, NVLink islands (on 3 nodes in 5) and a MIG layout (on 2 in 5; half of them
/// `all-balanced`, the others any configuration of the table) for one node.
pub fn node_extras() -> impl Strategy<Value = NodeExtras> {
    let islands = prop_oneof![
        2 => Just(Islands::None),
        1 => Just(Islands::All),
        1 => Just(Islands::Halves),
        1 => Just(Islands::Pairs)
    ];
    let config = prop_oneof![Just(BALANCED), 0usize..16];
    let mig = option::weighted(
        0.4,
        (0..MIG_MODELS.len(), config, option::weighted(0.3, 1u32..=4)).prop_map(
            |(model, config, devices)| MigDraw {
                model,
                config,
                devices,
            },
        ),
    );
    (0..LABEL_POOL, 0..LABEL_POOL, islands, mig).prop_map(|(block, rack, islands, mig)| {
        NodeExtras {
            block,
            rack,
            islands,
            mig,
        }
    })
}

/// Every MIG profile of the generated models' tables, sorted, then two no node has: `1g.5gb`
/// (a valid name of the A100-40GB table) and `bogus` (not a profile name).
pub fn mig_profiles() -> Vec<String> {
    let mut profiles: Vec<String> = MIG_MODELS
        .iter()
        .flat_map(|(_, _, family)| {
            family
                .config_names()
                .flat_map(move |c| config_slices(*family, c).unwrap_or_default())
        })
        .map(String::from)
        .collect();
    profiles.sort();
    profiles.dedup();
    profiles.extend(["1g.5gb".to_string(), "bogus".to_string()]);
    profiles
}

/// A task group's extra requests, applied to a group drawn elsewhere.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupRequests {
    topology: Option<TopologyRequest>,
    mig: Option<(String, bool)>,
}

impl GroupRequests {
    /// Puts these requests on `group`; a MIG request clears the group's GPUs unless drawn to
    /// keep them (an invalid mix the scheduler must reject).
    ///
    /// ```
    /// # use gangway::testkit::strategies_hw::group_requests;
    /// # use proptest::strategy::{Strategy, ValueTree};
    /// # let mut runner = proptest::test_runner::TestRunner::deterministic();
    /// let mut group = gangway::TaskGroup::new(2);
    /// group_requests().new_tree(&mut runner).unwrap().current().apply(&mut group);
    /// assert_eq!(group.count, 2);
    /// ```
    pub fn apply(&self, group: &mut TaskGroup) {
        group.topology = self.topology.clone();
        if let Some((profile, keep_gpus)) = &self.mig {
            group.mig = Some(profile.clone());
            if !keep_gpus {
                group.gpus = crate::model::amount::Milli::ZERO;
            }
        }
    }
}

/// Sometimes a topology request (`required` or `preferred`, on `rack`, `block`, or the
/// never-configured `row`), sometimes a MIG profile: mostly one of an `all-balanced`
/// configuration, else any of [`mig_profiles`].
pub fn group_requests() -> impl Strategy<Value = GroupRequests> {
    let level = prop_oneof![5 => Just("rack"), 3 => Just("block"), 1 => Just("row")];
    let topology = option::weighted(
        0.15,
        (any::<bool>(), level).prop_map(|(required, level)| {
            if required {
                TopologyRequest::Required(level.to_string())
            } else {
                TopologyRequest::Preferred(level.to_string())
            }
        }),
    );
    let mig = option::weighted(
        0.1,
        (
            prop_oneof![
                3 => select(BALANCED_PROFILES.map(String::from).to_vec()),
                1 => select(mig_profiles()),
            ],
            proptest::bool::weighted(0.05),
        ),
    );
    (topology, mig).prop_map(|(topology, mig)| GroupRequests { topology, mig })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn islands_are_disjoint_sorted_and_at_least_two_wide() {
        assert_eq!(islands(Islands::All, 1), Vec::<Vec<u32>>::new());
        assert_eq!(islands(Islands::All, 3), vec![vec![0, 1, 2]]);
        assert_eq!(islands(Islands::Halves, 3), vec![vec![0, 1, 2]]);
        assert_eq!(islands(Islands::Halves, 5), vec![vec![0, 1], vec![2, 3]]);
        assert_eq!(islands(Islands::Pairs, 5), vec![vec![0, 1], vec![2, 3]]);
        assert!(islands(Islands::None, 8).is_empty());
    }

    #[test]
    fn profile_pool_has_both_tables_and_the_two_strangers() {
        let pool = mig_profiles();
        for p in ["1g.10gb", "3g.71gb", "7g.141gb", "1g.5gb", "bogus"] {
            assert!(pool.iter().any(|q| q == p), "{p} in {pool:?}");
        }
    }
}
