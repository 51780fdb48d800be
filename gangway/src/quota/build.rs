//! Building a [`QuotaTree`] from the configuration, with validation.

use indexmap::{IndexMap, IndexSet};

use super::keys::ResourceKeys;
use super::tree::{Node, QueueInfo, QuotaTree, UNLIMITED};
use super::vector::{KeyMask, QuotaVec};
use crate::config::{CohortConfig, QueueConfig, QuotaConfig, ReclaimWithinCohort};
use crate::error::ConfigError;

/// One node's quota as read from the configuration, before the tree sums it up.
struct RawQuota {
    listed: KeyMask,
    nominal: QuotaVec,
    borrowing_limit: QuotaVec,
    lending_limit: QuotaVec,
}

impl QuotaTree {
    /// Builds the tree of `cohorts` and `queues` with no usage.
    ///
    /// `gpu_models` are the cluster's GPU models: each gets a `gpu:MODEL` key (as long as fewer
    /// than 16 (`MAX_KEYS`) keys are in use) so that [`QuotaTree::usage`] reports GPUs per
    /// model even where no quota names the model. Quota keys may name any model.
    ///
    /// Errors name the offending field: duplicate queue or cohort names, a queue's unknown
    /// cohort, a cohort's unknown parent or a cycle of parents, an unknown resource key (only
    /// `cpu`, `memory_mib`, `gpu` and `gpu:MODEL` exist), too many distinct keys, a queue's
    /// `lending_limit` above its `nominal`, or a queue's `borrow_within_cohort` without a
    /// `reclaim_within_cohort` (both as Kueue refuses).
    pub(crate) fn new(
        cohorts: &[CohortConfig],
        queues: &[QueueConfig],
        gpu_models: &[String],
    ) -> Result<Self, ConfigError> {
        let mut keys = ResourceKeys::new();
        let cohort_names =
            unique_names(cohorts.iter().map(|c| c.name.as_str()), "cohorts", "cohort")?;
        let queue_names = unique_names(queues.iter().map(|q| q.name.as_str()), "queues", "queue")?;
        let parents = cohort_parents(cohorts, &cohort_names)?;

        let nq = queues.len();
        let mut raw = Vec::with_capacity(nq + cohorts.len());
        let mut user_caps = Vec::with_capacity(nq);
        let mut node_parents = Vec::with_capacity(nq + cohorts.len());
        for (i, queue) in queues.iter().enumerate() {
            let parent = match &queue.cohort {
                None => None,
                Some(name) => match cohort_names.get_index_of(name.as_str()) {
                    Some(c) => Some(node_index(nq + c)?),
                    None => {
                        return Err(ConfigError::new(
                            format!("queues[{i}].cohort"),
                            format!("unknown cohort \"{name}\""),
                        ));
                    }
                },
            };
            let field = format!("queues[{i}].quota");
            let quota = read_quota(&queue.quota, &field, &mut keys)?;
            for (key, config) in &queue.quota {
                if let Some(limit) = config.lending_limit.filter(|l| *l > config.nominal) {
                    return Err(ConfigError::new(
                        format!("{field}.{key}.lending_limit"),
                        format!("{limit} is more than the nominal quota {}", config.nominal),
                    ));
                }
            }
            let preemption = &queue.preemption;
            if preemption.reclaim_within_cohort == ReclaimWithinCohort::Never
                && !preemption.borrow_within_cohort.is_never()
            {
                // Borrowing within the cohort widens what a reclaim policy may take.
                return Err(ConfigError::new(
                    format!("queues[{i}].preemption.borrow_within_cohort"),
                    "needs a reclaim_within_cohort other than never",
                ));
            }
            raw.push(quota);
            user_caps.push(read_user_caps(&queue.max_per_user, i, &mut keys)?);
            node_parents.push(parent);
        }
        for (i, cohort) in cohorts.iter().enumerate() {
            raw.push(read_quota(
                &cohort.quota,
                &format!("cohorts[{i}].quota"),
                &mut keys,
            )?);
            node_parents.push(parents[i].map(|p| node_index(nq + p)).transpose()?);
        }
        for model in gpu_models {
            if keys.len() < super::MAX_KEYS {
                keys.intern(&format!("gpu:{model}"), "gpu_models")?;
            }
        }

        let mut nodes: Vec<Node> = node_parents
            .into_iter()
            .zip(&raw)
            .map(|(parent, quota)| Node {
                parent,
                limits: quota.listed,
                nominal: quota.nominal,
                subtree: quota.nominal,
                guaranteed: QuotaVec::ZERO,
                borrowing_limit: quota.borrowing_limit,
                weight: 1.0,
                lendable: QuotaVec::ZERO,
                fair_switch: None,
            })
            .collect();
        sum_subtrees(&mut nodes, &raw, &cohort_depths(&parents), nq);
        read_fair_sharing(&mut nodes, cohorts, queues)?;
        set_lendable(&mut nodes);

        let mut paths = Vec::new();
        let mut infos = Vec::with_capacity(nq);
        for (i, (user_cap, user_capped)) in user_caps.into_iter().enumerate() {
            let start = node_index(paths.len())?;
            let mut n = Some(node_index(i)?);
            while let Some(index) = n {
                paths.push(index);
                n = nodes[index as usize].parent;
            }
            infos.push(QueueInfo {
                path: (start, node_index(paths.len())?),
                user_cap,
                user_capped,
                fair: false,
            });
        }
        let mut children = vec![Vec::new(); nodes.len()];
        for (n, node) in nodes.iter().enumerate() {
            if let Some(parent) = node.parent {
                children[parent as usize].push(node_index(n)?);
            }
        }
        let mut tree = QuotaTree {
            usage: vec![QuotaVec::ZERO; nodes.len()],
            children,
            changes: 0,
            model_keys: gpu_models.iter().map(|m| keys.model(m)).collect(),
            keys,
            queue_names,
            cohort_names,
            nodes,
            queues: infos,
            paths,
            splits_models: false,
        };
        tree.splits_models = tree.models_split();
        Ok(tree)
    }
}

/// A node index as stored in the tree (`u32`); errors only beyond four billion entries.
fn node_index(index: usize) -> Result<u32, ConfigError> {
    u32::try_from(index)
        .map_err(|_| ConfigError::new("queues", format!("too many queues and cohorts ({index})")))
}

/// The names in order, refusing duplicates (`queues[3].name: duplicate queue "a"`).
fn unique_names<'a>(
    names: impl Iterator<Item = &'a str>,
    list: &str,
    what: &str,
) -> Result<IndexSet<String>, ConfigError> {
    let mut set = IndexSet::new();
    for (i, name) in names.enumerate() {
        if !set.insert(name.to_owned()) {
            return Err(ConfigError::new(
                format!("{list}[{i}].name"),
                format!("duplicate {what} \"{name}\""),
            ));
        }
    }
    Ok(set)
}

/// Each cohort's parent index, refusing unknown parents and cycles.
fn cohort_parents(
    cohorts: &[CohortConfig],
    names: &IndexSet<String>,
) -> Result<Vec<Option<usize>>, ConfigError> {
    let mut parents = Vec::with_capacity(cohorts.len());
    for (i, cohort) in cohorts.iter().enumerate() {
        parents.push(match &cohort.parent {
            None => None,
            Some(name) => match names.get_index_of(name.as_str()) {
                Some(p) => Some(p),
                None => {
                    return Err(ConfigError::new(
                        format!("cohorts[{i}].parent"),
                        format!("unknown cohort \"{name}\""),
                    ));
                }
            },
        });
    }
    for start in 0..cohorts.len() {
        let mut chain = vec![start];
        let mut current = parents[start];
        while let Some(c) = current {
            chain.push(c);
            if c == start {
                let names: Vec<String> = chain
                    .iter()
                    .map(|&c| format!("\"{}\"", cohorts[c].name))
                    .collect();
                return Err(ConfigError::new(
                    format!("cohorts[{start}].parent"),
                    format!("cycle of cohorts {}", names.join(" -> ")),
                ));
            }
            if chain.len() > cohorts.len() {
                break;
            }
            current = parents[c];
        }
    }
    Ok(parents)
}

/// Each cohort's distance from its root (parents must be acyclic).
fn cohort_depths(parents: &[Option<usize>]) -> Vec<usize> {
    parents
        .iter()
        .map(|&first| {
            std::iter::successors(first, |&c| parents[c])
                .take(parents.len())
                .count()
        })
        .collect()
}

/// Reads one node's quota map, interning its keys.
fn read_quota(
    quota: &IndexMap<String, QuotaConfig>,
    field: &str,
    keys: &mut ResourceKeys,
) -> Result<RawQuota, ConfigError> {
    let mut raw = RawQuota {
        listed: KeyMask::EMPTY,
        nominal: QuotaVec::ZERO,
        borrowing_limit: QuotaVec::filled(UNLIMITED),
        lending_limit: QuotaVec::filled(UNLIMITED),
    };
    for (name, config) in quota {
        let key = keys.intern(name, field)?;
        raw.listed.insert(key);
        raw.nominal[key] = config.nominal.milli();
        raw.borrowing_limit[key] = config.borrowing_limit.map_or(UNLIMITED, |l| l.milli());
        raw.lending_limit[key] = config.lending_limit.map_or(UNLIMITED, |l| l.milli());
    }
    Ok(raw)
}

/// Reads the queues' and cohorts' `fair_sharing`: weights (finite, ≥ 0) and root cohorts'
/// switches (refused on a queue or a cohort with a parent).
fn read_fair_sharing(
    nodes: &mut [Node],
    cohorts: &[CohortConfig],
    queues: &[QueueConfig],
) -> Result<(), ConfigError> {
    let settings = queues
        .iter()
        .enumerate()
        .map(|(i, q)| (format!("queues[{i}].fair_sharing"), q.fair_sharing.as_ref()))
        .chain(cohorts.iter().enumerate().map(|(i, c)| {
            (
                format!("cohorts[{i}].fair_sharing"),
                c.fair_sharing.as_ref(),
            )
        }));
    for (n, ((field, setting), node)) in settings.zip(nodes.iter_mut()).enumerate() {
        let Some(setting) = setting else {
            continue;
        };
        if !setting.weight.is_finite() || setting.weight < 0.0 {
            return Err(ConfigError::new(
                format!("{field}.weight"),
                format!("{} is not a finite number ≥ 0", setting.weight),
            ));
        }
        node.weight = setting.weight;
        let root_cohort = n >= queues.len() && node.parent.is_none();
        if setting.enabled.is_some() && !root_cohort {
            return Err(ConfigError::new(
                format!("{field}.enabled"),
                "only a root cohort turns fair sharing on or off for its tree",
            ));
        }
        node.fair_switch = setting.enabled;
    }
    Ok(())
}

/// Sets each node's `lendable`: what its parent could take with no usage anywhere (Kueue's
/// potential available), per key the node limits.
fn set_lendable(nodes: &mut [Node]) {
    for n in 0..nodes.len() {
        let Some(parent) = nodes[n].parent else {
            continue;
        };
        let mut chain = vec![parent as usize];
        while let Some(up) = nodes[*chain.last().unwrap_or(&0)].parent {
            if chain.len() > nodes.len() {
                break;
            }
            chain.push(up as usize);
        }
        let mut lendable = QuotaVec::ZERO;
        for key in nodes[n].limits.iter() {
            lendable[key] = chain.iter().rev().fold(0, |from_parent, &c| {
                nodes[c].potential_with(key, from_parent)
            });
        }
        nodes[n].lendable = lendable;
    }
}

/// Reads a queue's `max_per_user` caps, interning their keys.
fn read_user_caps(
    caps: &IndexMap<String, crate::Milli>,
    queue: usize,
    keys: &mut ResourceKeys,
) -> Result<(QuotaVec, KeyMask), ConfigError> {
    let mut cap = QuotaVec::ZERO;
    let mut capped = KeyMask::EMPTY;
    for (name, amount) in caps {
        let key = keys.intern(name, &format!("queues[{queue}].max_per_user"))?;
        cap[key] = amount.milli();
        capped.insert(key);
    }
    Ok((cap, capped))
}

/// Completes `subtree`, `guaranteed` and `limits` bottom-up: queues first, then cohorts from
/// the deepest up. Each child lends its parent `subtree − guaranteed`.
fn sum_subtrees(nodes: &mut [Node], raw: &[RawQuota], depths: &[usize], nq: usize) {
    let mut order: Vec<usize> = (0..nq).collect();
    let mut cohorts: Vec<usize> = (0..depths.len()).collect();
    cohorts.sort_by_key(|&c| std::cmp::Reverse(depths[c]));
    order.extend(cohorts.into_iter().map(|c| nq + c));
    for n in order {
        let node = &mut nodes[n];
        let has_parent = node.parent.is_some();
        for key in node.limits.iter() {
            node.guaranteed[key] = match raw[n].lending_limit[key] {
                _ if !has_parent => node.subtree[key],
                UNLIMITED => 0,
                limit => node.subtree[key].saturating_sub(limit),
            };
        }
        let (limits, subtree, guaranteed) = (node.limits, node.subtree, node.guaranteed);
        if let Some(parent) = node.parent {
            let parent = &mut nodes[parent as usize];
            parent.limits = parent.limits.union(limits);
            for key in limits.iter() {
                let lent = subtree[key].saturating_sub(guaranteed[key]);
                parent.subtree[key] = parent.subtree[key].saturating_add(lent);
            }
        }
    }
}

/// The examples of this module's documentation from when it was public, as unit tests.
#[cfg(test)]
mod examples {
    #[test]
    fn new() {
        use crate::config::{CohortConfig, QueueConfig};
        use crate::quota::QuotaTree;
        let cohorts = [CohortConfig {
            name: "co".into(),
            parent: Some("co".into()),
            ..Default::default()
        }];
        let err = QuotaTree::new(&cohorts, &[], &[]).unwrap_err();
        assert_eq!(err.field, "cohorts[0].parent");
        assert_eq!(err.message, r#"cycle of cohorts "co" -> "co""#);

        let queues = [QueueConfig {
            name: "a".into(),
            cohort: Some("x".into()),
            ..Default::default()
        }];
        let err = QuotaTree::new(&[], &queues, &[]).unwrap_err();
        assert_eq!(err.to_string(), r#"queues[0].cohort: unknown cohort "x""#);
    }
}
