//! The release epoch: a count of the changes that may have freed capacity or changed a
//! pending job's request, with a log saying, for the recent ones, which were a running job's
//! release and on which nodes. A reservation placed before is shown to be placed so again
//! from the nodes the releases since touched ([`crate::scheduler::shortcuts::kept_plans`]);
//! any other change since rules that out.

use crate::model::ids::NodeId;

/// The release epoch and its recent changes.
#[derive(Clone, Debug, Default)]
pub(crate) struct Releases {
    epoch: u64,
    /// Every change with an epoch above `logged_after`, in order, with its epoch: a node a
    /// running job's release freed, or `None` for any other change.
    log: Vec<(u64, Option<NodeId>)>,
    logged_after: u64,
}

impl Releases {
    /// The number of changes so far: equal epochs mean that nothing was freed and no request
    /// changed in between.
    pub(crate) fn epoch(&self) -> u64 {
        self.epoch
    }

    /// A change that may free capacity anywhere, or change a pending job's request.
    pub(crate) fn note_change(&mut self) {
        self.epoch += 1;
        self.log.push((self.epoch, None));
    }

    /// A running job's release of what it held on `nodes`.
    pub(crate) fn note_release(&mut self, nodes: impl Iterator<Item = NodeId>) {
        self.epoch += 1;
        let epoch = self.epoch;
        self.log.extend(nodes.map(|node| (epoch, Some(node))));
    }

    /// The nodes running jobs released since epoch `since`, in the order released (a node
    /// may come more than once), when every change since was such a release; `None` when
    /// another change came, or the log no longer reaches back to `since`.
    pub(crate) fn nodes_since(&self, since: u64) -> Option<impl Iterator<Item = NodeId> + '_> {
        if since < self.logged_after {
            return None;
        }
        let first = self.log.partition_point(|&(epoch, _)| epoch <= since);
        let changes = &self.log[first..];
        changes
            .iter()
            .all(|(_, node)| node.is_some())
            .then(|| changes.iter().filter_map(|&(_, node)| node))
    }

    /// Forgets the changes up to epoch `through`: nothing asks about them any more.
    pub(crate) fn forget_through(&mut self, through: u64) {
        let through = through.min(self.epoch).max(self.logged_after);
        let first_kept = self.log.partition_point(|&(epoch, _)| epoch <= through);
        self.log.drain(..first_kept);
        self.logged_after = through;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nodes(releases: &Releases, since: u64) -> Option<Vec<u32>> {
        Some(releases.nodes_since(since)?.map(|n| n.0).collect())
    }

    #[test]
    fn the_nodes_released_since_an_epoch_are_listed_until_another_change_comes() {
        let mut releases = Releases::default();
        releases.note_release([NodeId(3), NodeId(1)].into_iter());
        let after_first = releases.epoch();
        releases.note_release([NodeId(3)].into_iter());
        assert_eq!(releases.epoch(), 2);
        assert_eq!(nodes(&releases, 0), Some(vec![3, 1, 3]));
        assert_eq!(nodes(&releases, after_first), Some(vec![3]));
        assert_eq!(nodes(&releases, releases.epoch()), Some(vec![]));
        releases.note_change();
        let changed = releases.epoch();
        assert_eq!(nodes(&releases, after_first), None);
        releases.note_release(std::iter::empty());
        assert_eq!(nodes(&releases, changed), Some(vec![]));
    }

    #[test]
    fn a_forgotten_stretch_answers_nothing_and_the_rest_stays() {
        let mut releases = Releases::default();
        releases.note_change();
        releases.note_release([NodeId(0)].into_iter());
        releases.note_release([NodeId(5)].into_iter());
        releases.forget_through(1);
        assert_eq!(nodes(&releases, 0), None);
        assert_eq!(nodes(&releases, 1), Some(vec![0, 5]));
        assert_eq!(nodes(&releases, 2), Some(vec![5]));
        // Never beyond the epoch, never back.
        releases.forget_through(u64::MAX);
        assert_eq!(nodes(&releases, 3), Some(vec![]));
        releases.note_release([NodeId(7)].into_iter());
        releases.forget_through(0);
        assert_eq!(nodes(&releases, 2), None);
        assert_eq!(nodes(&releases, 3), Some(vec![7]));
    }
}
