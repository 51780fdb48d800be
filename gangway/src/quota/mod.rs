//! Kueue-style quotas in cohort trees: nominal quota, borrowing and lending limits, and
//! per-user caps, as pure accounting.
//!
//! Queues (Kueue's ClusterQueues) hold a quota per resource key: `cpu`, `memory_mib`, `gpu`
//! (GPUs of any model) and `gpu:MODEL` (one model, Kueue's resource flavors). A queue limits
//! only the keys it lists. Queues belong to cohorts, and cohorts to parent cohorts, forming
//! trees; a cohort may hold a nominal pool of its own (Kueue's Cohort API). Within a tree,
//! unused quota is lent: a node keeps `nominal − lending_limit` to itself (all of it lendable
//! without a lending limit), and may use at most `nominal + borrowing_limit`.
//!
//! [`QuotaTree`] interns the keys into fixed-size [`QuotaVec`]s (amounts in thousandths of a
//! unit, memory in thousandths of a MiB), answers whether a job's demand fits its queue, and
//! keeps usage as jobs start and end. Preemption victim selection is the caller's: the tree
//! offers the queries it needs ([`QuotaTree::is_borrowing`], [`QuotaTree::above_nominal_in`],
//! [`QuotaTree::within_nominal`]) and cheap tentative removal of usage.

mod adjusted;
mod build;
mod invariants;
pub(crate) mod keys;
mod share;
mod tree;
mod vector;

#[cfg(test)]
mod tests;

pub use share::{FairShareRow, Share};
#[cfg(test)]
pub(crate) use tree::Fit;
pub(crate) use tree::{QueueId, QuotaTree};
pub(crate) use vector::MAX_KEYS;
pub(crate) use vector::{KeyId, QuotaVec};

/// A queue's or cohort's quota of one `key` whose nominal amount is `units` (a test fixture).
#[cfg(test)]
pub(crate) fn nominal_quota(
    key: &str,
    units: u64,
) -> indexmap::IndexMap<String, crate::config::QuotaConfig> {
    let quota = crate::config::QuotaConfig {
        nominal: crate::Milli::from_units(units),
        ..Default::default()
    };
    [(key.to_string(), quota)].into_iter().collect()
}

/// A quota tree of one queue `a` whose `key` quota is `nominal` units (a test fixture).
#[cfg(test)]
pub(crate) fn one_queue_of(key: &str, nominal: u64) -> QuotaTree {
    let queue = crate::config::QueueConfig {
        name: "a".into(),
        quota: nominal_quota(key, nominal),
        ..Default::default()
    };
    QuotaTree::new(&[], &[queue], &[]).unwrap()
}

/// A quota tree of one queue `a` without quotas or cohort (a test fixture).
#[cfg(test)]
pub(crate) fn one_plain_queue() -> QuotaTree {
    let queue = crate::config::QueueConfig {
        name: "a".into(),
        ..Default::default()
    };
    QuotaTree::new(&[], &[queue], &[]).unwrap()
}

/// A quota tree of queues `a` and `b` in cohort `co`, with `a` and `b` units of `key` as their
/// nominal quotas (a test fixture).
#[cfg(test)]
pub(crate) fn two_queues_in_a_cohort(key: &str, a: u64, b: u64) -> QuotaTree {
    use crate::config::{CohortConfig, QueueConfig};
    let cohorts = [CohortConfig {
        name: "co".into(),
        ..Default::default()
    }];
    let queue = |name: &str, units| QueueConfig {
        name: name.into(),
        cohort: Some("co".into()),
        quota: nominal_quota(key, units),
        ..Default::default()
    };
    QuotaTree::new(&cohorts, &[queue("a", a), queue("b", b)], &[]).unwrap()
}

/// The examples of this module's documentation from when it was public, as unit tests.
#[cfg(test)]
mod examples {
    #[test]
    fn module_example() {
        use crate::Milli;
        use crate::config::{CohortConfig, QueueConfig, QuotaConfig};
        use crate::quota::{Fit, QuotaTree};

        // Two teams with 16 guaranteed GPUs each, who may borrow 8 of each other's idle ones.
        let gpus = || {
            [(
                "gpu".to_string(),
                QuotaConfig {
                    nominal: Milli::from_units(16),
                    borrowing_limit: Some(Milli::from_units(8)),
                    lending_limit: None,
                },
            )]
            .into_iter()
            .collect()
        };
        let cohorts = [CohortConfig {
            name: "shared".into(),
            ..Default::default()
        }];
        let queues = [
            QueueConfig {
                name: "team-a".into(),
                cohort: Some("shared".into()),
                quota: gpus(),
                ..Default::default()
            },
            QueueConfig {
                name: "team-b".into(),
                cohort: Some("shared".into()),
                quota: gpus(),
                ..Default::default()
            },
        ];
        let mut tree = QuotaTree::new(&cohorts, &queues, &["a100".to_string()]).unwrap();
        let a = tree.queue_id("team-a").unwrap();
        let job = tree.demand(32_000, 256_000, &[("a100", 24_000)]);
        assert_eq!(tree.fit(a, &job), Fit::Borrowing);
        tree.add_usage(a, &job);
        let more = tree.demand(0, 0, &[("a100", 1000)]);
        assert!(!tree.fits(a, &more)); // 16 + 8 is team-a's limit
        let b = tree.queue_id("team-b").unwrap();
        assert!(!tree.fits(b, &tree.demand(0, 0, &[("a100", 9000)]))); // 8 of its 16 are lent
        assert!(tree.within_nominal(b, &tree.demand(0, 0, &[("a100", 9000)]))); // so it may reclaim
        tree.check_invariants().unwrap();
    }
}
