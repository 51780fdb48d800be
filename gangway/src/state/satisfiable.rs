//! The gangs known to fit the cluster's nodes were they all empty and up.
//!
//! A submission is refused when its gang could never run ([`ClusterState::check_satisfiable`]):
//! that places the gang, at its minimal counts, on the empty cluster. The answer reads only what
//! the nodes are (their capacity, make, partitions and MIG layouts), so a gang that fitted once
//! fits again until the node table changes: the check is made once per distinct request (its
//! partition, exclusivity and shapes; gangs with topology constraints are always placed), not
//! once per job. Derived memory, not kept by a snapshot; cleared wherever the node table
//! changes: a node added or removed, a reconfiguration, a restore. Debug builds place every
//! gang found here afresh and check that it fits.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::ids::PartitionId;
use crate::model::shape::TaskShape;

/// Most gangs kept; later ones are placed at every submission as before.
const MAX_GANGS: usize = 4096;

/// Gangs (their minimal shapes) that fit the empty cluster, by partition and exclusivity.
#[derive(Clone, Debug, Default)]
pub(crate) struct KnownSatisfiable {
    gangs: BTreeMap<(PartitionId, bool), BTreeSet<Vec<TaskShape>>>,
    count: usize,
}

impl KnownSatisfiable {
    /// Whether the gang of `minimal` shapes in `partition` (whole nodes if `exclusive`) is
    /// known to fit the empty cluster.
    pub(crate) fn knows(
        &self,
        partition: PartitionId,
        exclusive: bool,
        minimal: &[TaskShape],
    ) -> bool {
        self.gangs
            .get(&(partition, exclusive))
            .is_some_and(|gangs| gangs.contains(minimal))
    }

    /// Remembers that the gang of `minimal` shapes fits the empty cluster.
    pub(crate) fn remember(
        &mut self,
        partition: PartitionId,
        exclusive: bool,
        minimal: Vec<TaskShape>,
    ) {
        if self.count >= MAX_GANGS {
            return;
        }
        let added = self
            .gangs
            .entry((partition, exclusive))
            .or_default()
            .insert(minimal);
        self.count += usize::from(added);
    }

    /// Forgets every gang: the node table changed.
    pub(crate) fn clear(&mut self) {
        self.gangs.clear();
        self.count = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::shape::GpuNeed;

    #[test]
    fn a_gang_is_known_by_partition_exclusivity_and_shapes_until_cleared() {
        let mut known = KnownSatisfiable::default();
        let shape = TaskShape::new(1_000, 0, GpuNeed::Whole(1));
        let p = PartitionId(0);
        assert!(!known.knows(p, false, &[shape]));
        known.remember(p, false, vec![shape]);
        assert!(known.knows(p, false, &[shape]));
        assert!(!known.knows(p, true, &[shape]));
        assert!(!known.knows(PartitionId(1), false, &[shape]));
        assert!(!known.knows(p, false, &[shape.with_count(2)]));
        assert!(!known.knows(p, false, &[shape, shape]));
        known.clear();
        assert!(!known.knows(p, false, &[shape]));
    }

    #[test]
    fn at_most_4096_distinct_gangs_are_kept_until_cleared() {
        let mut known = KnownSatisfiable::default();
        let p = PartitionId(0);
        let gang = |cpus: u64| vec![TaskShape::new(cpus, 0, GpuNeed::None)];
        // A gang remembered again counts once.
        for _ in 0..MAX_GANGS {
            known.remember(p, false, gang(1));
        }
        for cpus in 2..=MAX_GANGS as u64 {
            known.remember(p, cpus % 2 == 0, gang(cpus));
        }
        let last = MAX_GANGS as u64;
        assert!(known.knows(p, true, &gang(last)));
        known.remember(p, true, gang(last + 2));
        known.remember(p, false, gang(last + 1));
        assert!(!known.knows(p, true, &gang(last + 2)));
        assert!(!known.knows(p, false, &gang(last + 1)));
        assert!(known.knows(p, false, &gang(1)));
        known.clear();
        known.remember(p, false, gang(last + 1));
        assert!(known.knows(p, false, &gang(last + 1)));
        assert!(!known.knows(p, false, &gang(1)));
    }
}
