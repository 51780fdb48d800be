//! The result of one fair-share evaluation: every node's numbers for the report, and the
//! factor table the scheduler reads once per job.

use serde::{Deserialize, Serialize};

use super::AssocId;

/// Every node's numbers at one instant, indexed by node id, and each association's factor.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Evaluation {
    /// Decayed raw usage.
    pub(crate) usage: Vec<f64>,
    /// Usage divided by the root's usage (0 when there is none).
    pub(crate) norm_usage: Vec<f64>,
    /// Classic: shares normalised down the whole tree; Fair Tree: shares normalised among
    /// siblings.
    pub(crate) norm_shares: Vec<f64>,
    /// Classic: Slurm's effective usage; Fair Tree: usage normalised among siblings.
    pub(crate) effective_usage: Vec<f64>,
    /// Fair Tree only: the level fair-share `S / U` (infinite without usage).
    pub(crate) level_fs: Option<Vec<f64>>,
    /// The fair-share factor of each association, by [`AssocId`].
    pub(crate) factors: Vec<f64>,
}

/// The fair-share factor of every association at one instant, in `0..=1` (1 is the most
/// deserving), with O(1) lookup by [`AssocId`].
///
/// Computed once per scheduling pass by [`super::FairShare::compute_factors`]; an association
/// created after that has no entry until the next computation.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct FactorTable {
    factors: Vec<f64>,
}

impl FactorTable {
    /// Wraps the factors, indexed by [`AssocId`].
    pub(crate) fn new(factors: Vec<f64>) -> Self {
        FactorTable { factors }
    }

    /// The factor of `assoc`, or `None` if it did not exist when the table was computed.
    pub(crate) fn get(&self, assoc: AssocId) -> Option<f64> {
        self.factors.get(assoc.index()).copied()
    }

    /// How many associations the table covers.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.factors.len()
    }

    /// Whether the table covers no association.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.factors.is_empty()
    }

    /// Every association with its factor, in [`AssocId`] order.
    #[cfg(test)]
    pub(crate) fn iter(&self) -> impl Iterator<Item = (AssocId, f64)> + '_ {
        self.factors
            .iter()
            .enumerate()
            .map(|(i, &f)| (AssocId::from_index(i), f))
    }
}

/// The examples of this module's documentation from when it was public, as unit tests.
#[cfg(test)]
mod examples {
    #[test]
    fn factor_table() {
        use crate::config::{AccountConfig, FairshareConfig};
        use crate::fairshare::FairShare;
        let accounts = [AccountConfig {
            name: "a".into(),
            shares: 1,
            ..Default::default()
        }];
        let mut fs = FairShare::new(&accounts, &FairshareConfig::default()).unwrap();
        let alice = fs.association(Some("a"), "alice").unwrap();
        let table = fs.compute_factors(0);
        assert_eq!(table.get(alice), Some(1.0));
        assert_eq!(table.len(), 1);
        let bob = fs.association(Some("a"), "bob").unwrap();
        assert_eq!(table.get(bob), None);
    }

    #[test]
    fn get() {
        use crate::config::{AccountConfig, FairshareConfig};
        use crate::fairshare::FairShare;
        let accounts = [AccountConfig {
            name: "a".into(),
            shares: 1,
            ..Default::default()
        }];
        let mut fs = FairShare::new(&accounts, &FairshareConfig::default()).unwrap();
        let u = fs.association(Some("a"), "u").unwrap();
        assert_eq!(fs.compute_factors(0).get(u), Some(1.0));
    }

    #[test]
    fn len() {
        use crate::config::FairshareConfig;
        use crate::fairshare::FairShare;
        let fs = FairShare::new(&[], &FairshareConfig::default()).unwrap();
        assert_eq!(fs.compute_factors(0).len(), 0);
    }

    #[test]
    fn is_empty() {
        use crate::config::FairshareConfig;
        use crate::fairshare::FairShare;
        let fs = FairShare::new(&[], &FairshareConfig::default()).unwrap();
        assert!(fs.compute_factors(0).is_empty());
    }

    #[test]
    fn iter() {
        use crate::config::{AccountConfig, FairshareConfig};
        use crate::fairshare::FairShare;
        let accounts = [AccountConfig {
            name: "a".into(),
            shares: 1,
            ..Default::default()
        }];
        let mut fs = FairShare::new(&accounts, &FairshareConfig::default()).unwrap();
        let u = fs.association(Some("a"), "u").unwrap();
        assert_eq!(
            fs.compute_factors(0).iter().collect::<Vec<_>>(),
            vec![(u, 1.0)]
        );
    }
}
