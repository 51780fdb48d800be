//! Quota checks against usage changed on paper: what would fit if some charges were added (the
//! earmarked preemptors') and others removed (tentative victims'), without touching the tree.

use std::borrow::Cow;

use super::tree::{add_usage_in, remove_usage_in};
use super::{QueueId, QuotaTree, QuotaVec};

/// A read-only view of a [`QuotaTree`] with some charges added and others removed; made by
/// [`QuotaTree::adjusted`].
#[derive(Clone, Debug)]
pub(crate) struct AdjustedQuota<'a> {
    tree: &'a QuotaTree,
    /// Every node's usage with the changes applied (the tree's own when there are none).
    usage: Cow<'a, [QuotaVec]>,
}

impl QuotaTree {
    /// The tree as it would be with each `added` demand charged to its queue, then each
    /// `removed` demand (one that was charged there) released, in order; the tree is not
    /// changed. Without changes nothing is copied.
    pub(crate) fn adjusted(
        &self,
        added: &[(QueueId, QuotaVec)],
        removed: &[(QueueId, QuotaVec)],
    ) -> AdjustedQuota<'_> {
        if added.is_empty() {
            return self.adjusted_from(&self.usage, removed);
        }
        let mut usage = self.usage.clone();
        for (q, demand) in added {
            add_usage_in(&self.nodes, &mut usage, *q, demand);
        }
        for (q, demand) in removed {
            remove_usage_in(&self.nodes, &mut usage, *q, demand);
        }
        AdjustedQuota {
            tree: self,
            usage: Cow::Owned(usage),
        }
    }

    /// [`QuotaTree::adjusted`] from `base`, a usage of this tree's nodes already adjusted
    /// (one [`AdjustedQuota::into_usage`] gave), with each `removed` demand released in order.
    pub(crate) fn adjusted_from<'a>(
        &'a self,
        base: &'a [QuotaVec],
        removed: &[(QueueId, QuotaVec)],
    ) -> AdjustedQuota<'a> {
        if removed.is_empty() {
            return AdjustedQuota {
                tree: self,
                usage: Cow::Borrowed(base),
            };
        }
        let mut usage = base.to_vec();
        for (q, demand) in removed {
            remove_usage_in(&self.nodes, &mut usage, *q, demand);
        }
        AdjustedQuota {
            tree: self,
            usage: Cow::Owned(usage),
        }
    }
}

impl AdjustedQuota<'_> {
    /// [`QuotaTree::fits`] on the adjusted usage.
    pub(crate) fn fits(&self, q: QueueId, demand: &QuotaVec) -> bool {
        self.tree.fits_in(&self.usage, q, demand)
    }

    /// [`QuotaTree::within_nominal`] on the adjusted usage.
    pub(crate) fn within_nominal(&self, q: QueueId, demand: &QuotaVec) -> bool {
        self.tree.within_nominal_in(&self.usage, q, demand)
    }

    /// Every node's adjusted usage, for [`QuotaTree::adjusted_from`].
    pub(crate) fn into_usage(self) -> Vec<QuotaVec> {
        self.usage.into_owned()
    }
}

/// The examples of this module's documentation from when it was public, as unit tests.
#[cfg(test)]
mod examples {
    #[test]
    fn adjusted_quota() {
        let mut tree = crate::quota::two_queues_in_a_cohort("gpu", 4, 4);
        let (a, b) = (tree.queue_id("a").unwrap(), tree.queue_id("b").unwrap());
        let six = tree.demand(0, 0, &[("h100", 6000)]);
        tree.add_usage(a, &six); // a borrows 2 of b's 4
        let four = tree.demand(0, 0, &[("h100", 4000)]);
        assert!(!tree.fits(b, &four));
        // Without a's job, b's four fit; the tree itself is unchanged.
        assert!(tree.adjusted(&[], &[(a, six)]).fits(b, &four));
        assert_eq!(tree.usage(a), &six);
    }
}
