//! Consistency and limit checks over a whole [`QuotaTree`] (for the oracle and for tests).

use super::tree::{QuotaTree, UNLIMITED};
use super::vector::KeyId;
#[cfg(any(test, feature = "testkit"))]
use super::vector::QuotaVec;
use crate::Milli;
use crate::error::ConsistencyError;

impl QuotaTree {
    /// Checks both [`QuotaTree::check_totals`] and [`QuotaTree::check_limits`]; the first
    /// violation found is the error.
    #[cfg(test)]
    pub(crate) fn check_invariants(&self) -> Result<(), ConsistencyError> {
        self.check_totals()?;
        self.check_limits()
    }

    /// Checks that every cohort's usage equals the sum of its children's usage above their
    /// guaranteed parts, key by key. This holds after any sequence of
    /// [`QuotaTree::add_usage`] and matching [`QuotaTree::remove_usage`] calls, including
    /// over-quota ones.
    #[cfg(any(test, feature = "testkit"))]
    pub(crate) fn check_totals(&self) -> Result<(), ConsistencyError> {
        let mut expected = vec![QuotaVec::ZERO; self.nodes.len()];
        for (node, usage) in self.nodes.iter().zip(&self.usage) {
            if let Some(parent) = node.parent {
                for key in node.limits.iter() {
                    let above = usage[key].saturating_sub(node.guaranteed[key]);
                    let sum = &mut expected[parent as usize][key];
                    *sum = sum.saturating_add(above);
                }
            }
        }
        let nq = self.queue_names.len();
        for (n, want) in expected.iter().enumerate().skip(nq) {
            let have = &self.usage[n];
            if let Some(key) = self.keys().find(|&key| have[key] != want[key]) {
                return Err(ConsistencyError::new(format!(
                    "{}: {} usage {} but its children use {} above their guaranteed quota",
                    self.node_label(n),
                    self.key_name(key),
                    Milli::from_milli(have[key]),
                    Milli::from_milli(want[key]),
                )));
            }
        }
        Ok(())
    }

    /// Checks the limits on every queue and cohort, for every key it limits:
    ///
    /// - usage ≤ nominal + `borrowing_limit` (for a cohort, its pool + `borrowing_limit`);
    /// - a root (a cohort without parent, or a queue without cohort) uses no more than its
    ///   pool: its own nominal plus what its children lend it. Children lend only
    ///   `nominal − guaranteed` = `min(nominal, lending_limit)`, so together with
    ///   [`QuotaTree::check_totals`] this is "lent ≤ lending_limit": no usage is ever served
    ///   from another node's guaranteed part.
    ///
    /// Holds whenever only demands that [`QuotaTree::fits`] were added under the current
    /// configuration; after a reconfiguration that shrank quotas, running jobs may exceed it.
    pub(crate) fn check_limits(&self) -> Result<(), ConsistencyError> {
        for (n, node) in self.nodes.iter().enumerate() {
            for key in node.limits.iter() {
                let usage = self.usage[n][key];
                let quota = node.subtree[key];
                let borrowing_limit = node.borrowing_limit[key];
                let bound = match node.parent {
                    None => quota,
                    Some(_) if borrowing_limit == UNLIMITED => continue,
                    Some(_) => quota.saturating_add(borrowing_limit),
                };
                if usage > bound {
                    return Err(ConsistencyError::new(
                        self.limit_error(n, key, usage, quota),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The message for node `n` using `usage` of `key` beyond its bound.
    fn limit_error(&self, n: usize, key: KeyId, usage: u64, quota: u64) -> String {
        let node = &self.nodes[n];
        let label = self.node_label(n);
        let name = self.key_name(key);
        let usage = Milli::from_milli(usage);
        let quota = Milli::from_milli(quota);
        if node.parent.is_none() {
            format!("{label}: {name} usage {usage} exceeds its quota {quota}")
        } else {
            let limit = Milli::from_milli(node.borrowing_limit[key]);
            format!(
                "{label}: {name} usage {usage} exceeds its quota {quota} + borrowing_limit {limit}"
            )
        }
    }

    /// `queue "a"` or `cohort "co"` for node index `n`.
    fn node_label(&self, n: usize) -> String {
        let nq = self.queue_names.len();
        match self.queue_names.get_index(n) {
            Some(name) => format!("queue \"{name}\""),
            None => format!(
                "cohort \"{}\"",
                self.cohort_names
                    .get_index(n - nq)
                    .map_or("", String::as_str)
            ),
        }
    }
}

/// The examples of this module's documentation from when it was public, as unit tests.
#[cfg(test)]
mod examples {
    #[test]
    fn check_invariants() {
        let tree = crate::quota::QuotaTree::new(&[], &[], &[]).unwrap();
        assert_eq!(tree.check_invariants(), Ok(()));
    }

    #[test]
    fn check_totals() {
        let tree = crate::quota::QuotaTree::new(&[], &[], &[]).unwrap();
        assert_eq!(tree.check_totals(), Ok(()));
    }

    #[test]
    fn check_limits() {
        let mut tree = crate::quota::one_queue_of("cpu", 1);
        tree.add_usage(tree.queue_id("a").unwrap(), &tree.demand(2000, 0, &[]));
        assert_eq!(
            tree.check_limits().unwrap_err().message,
            r#"queue "a": cpu usage 2 exceeds its quota 1"#
        );
    }
}
