//! Hierarchical fair-share: the share tree of accounts and users, the decaying usage ledger, the
//! fair-share factor (Slurm's Fair Tree or classic algorithm) and the `sshare`-like report.
//!
//! This module is pure bookkeeping with time passed in: it never reads a clock. The scheduler
//! creates one [`FairShare`] from the CLUSTER's `accounts` and `policy.fairshare`, resolves each
//! job to an association with [`FairShare::association`], charges running jobs with
//! [`FairShare::charge`], and once per pass reads every factor from
//! [`FairShare::compute_factors`].
//!
//! - **Tree.** The configured accounts hang below an implicit root (an account naming no parent
//!   is a child of the root). An association is a (account, user) leaf; users and sub-accounts of
//!   one account are siblings. A user not listed under its account gets shares 1 there when first
//!   used; a job naming no account is charged to the account `default`, created at root level
//!   with shares 1 when first used (so it takes part in normalisation only from then on), unless
//!   the configuration lists an account of that name.
//! - **Ledger.** A charge adds to the association and to every ancestor account. Usage decays as
//!   `U ← U·2^(−Δt/half_life)`, exactly and lazily: each node stores its usage with the time of
//!   its last update and is decayed only when charged (O(depth) per charge) or read (reads do
//!   not modify it). A half-life of 0 disables decay. An optional [`ResetPeriod`]
//!   (`policy.fairshare.reset`) forgets usage outright at period boundaries.
//! - **Factors.** See [`FairShare::compute_factors`].
//!
//! Kueue's admission fair sharing keeps its own per-queue tenant usage with the same decay
//! (the `admission` module; docs/protocol.md, Admission fair sharing).

mod admission;
mod carry;
mod classic;
mod factors;
mod fair_tree;
mod ledger;
mod report;
mod tree;

use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};

pub use admission::AdmissionUsageRow;
pub(crate) use admission::{AdmissionLedger, Tenant};
pub(crate) use factors::FactorTable;
pub use report::ShareRow;
#[cfg(test)]
pub(crate) use report::format_table;

use crate::config::{AccountConfig, FairshareAlgorithm, FairshareConfig};
use crate::error::{ConfigError, FairShareError};
use factors::Evaluation;
use ledger::Decay;
use tree::ShareTree;

pub(crate) use tree::DEFAULT_ACCOUNT;

/// An association (an account and a user in it), as handed out by [`FairShare::association`].
///
/// Ids are dense, in creation order from 0, and stay valid for the life of the [`FairShare`]
/// that made them, so a host may index its own tables with [`AssocId::index`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub(crate) struct AssocId(u32);

impl AssocId {
    /// The id's position, from 0 in creation order.
    pub(crate) fn index(self) -> usize {
        self.0 as usize
    }

    /// The id at `index`. More than `u32::MAX` associations cannot be told apart; a tree that
    /// large does not fit in memory anyway.
    pub(crate) fn from_index(index: usize) -> Self {
        AssocId(u32::try_from(index).unwrap_or(u32::MAX))
    }
}

/// The fair-share engine: the share tree, its usage ledger and the configured algorithm.
///
/// The whole state (de)serializes, so a restored engine continues exactly where it was.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct FairShare {
    tree: ShareTree,
    decay: Decay,
    algorithm: FairshareAlgorithm,
    /// The factors last computed, and when for: memory, not content.
    #[serde(skip)]
    memo: FactorsMemo,
}

/// The factors of one time, computed on first ask and kept until the engine changes (every
/// change goes through `&mut`, which forgets them). Engines sharing one ledger (a scheduler and
/// its `what_if` trial) share what either computed. Memory, not content: equality ignores it.
#[derive(Clone, Debug, Default)]
struct FactorsMemo(OnceLock<(u64, Arc<FactorTable>)>);

impl PartialEq for FactorsMemo {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl FairShare {
    /// Builds the engine from the CLUSTER's `accounts` and `policy.fairshare` (half-life,
    /// algorithm and reset period), with no usage. Errors name the offending field: a duplicate or empty name, an unknown
    /// parent, a cycle of parents, or zero shares (`accounts[2].parent: unknown account "x"`).
    pub(crate) fn new(
        accounts: &[AccountConfig],
        config: &FairshareConfig,
    ) -> Result<Self, ConfigError> {
        Ok(FairShare {
            tree: ShareTree::new(accounts)?,
            decay: Decay {
                half_life_ms: config.half_life_ms,
                reset: config.reset,
            },
            algorithm: config.algorithm,
            memo: FactorsMemo::default(),
        })
    }

    /// The algorithm [`FairShare::compute_factors`] uses.
    #[cfg(test)]
    pub(crate) fn algorithm(&self) -> FairshareAlgorithm {
        self.algorithm
    }

    /// The association of `user` under `account`, created on first use: a user not listed under
    /// the account gets shares 1 there. `None` means the account `default`, created at root
    /// level with shares 1 on first use unless configured. Errors for an unknown account.
    pub(crate) fn association(
        &mut self,
        account: Option<&str>,
        user: &str,
    ) -> Result<AssocId, FairShareError> {
        self.memo = FactorsMemo::default();
        self.tree.association(account, user)
    }

    /// Whether the account `name` is configured (the implicit `default` account, created for
    /// jobs naming none, is not).
    pub(crate) fn is_configured(
        &self,
        name: &str,
        accounts: &[crate::config::AccountConfig],
    ) -> bool {
        if name == tree::DEFAULT_ACCOUNT {
            accounts.iter().any(|a| a.name == name)
        } else {
            self.tree.account(name).is_some()
        }
    }

    /// The association of `user` under `account` (`None`: the `default` account) if it exists,
    /// without creating anything.
    pub(crate) fn find_association(&self, account: Option<&str>, user: &str) -> Option<AssocId> {
        self.tree.find_association(account, user)
    }

    /// How many associations exist (the `n` of Fair Tree's `rank / n`).
    pub(crate) fn association_count(&self) -> usize {
        self.tree.assoc_count()
    }

    /// Adds `amount` (billing-weighted resource-seconds) at `now_ms` to the association and to
    /// every ancestor account, decaying each of them to `now_ms` first. A time before a node's
    /// last update counts as that update's time. Errors for an id this engine did not hand out
    /// and for an amount that is negative or not finite; nothing changes then.
    pub(crate) fn charge(
        &mut self,
        assoc: AssocId,
        amount: f64,
        now_ms: u64,
    ) -> Result<(), FairShareError> {
        if !amount.is_finite() || amount < 0.0 {
            return Err(FairShareError::InvalidCharge(amount));
        }
        self.memo = FactorsMemo::default();
        let mut at = self.tree.assoc_node(assoc);
        if at.is_none() {
            return Err(FairShareError::UnknownAssociation(assoc.index()));
        }
        while let Some(id) = at {
            let node = &mut self.tree.nodes[id];
            self.decay.add(&mut node.usage, amount, now_ms);
            at = node.parent;
        }
        Ok(())
    }

    /// The association's usage decayed to `now_ms` (nothing is modified).
    pub(crate) fn usage(&self, assoc: AssocId, now_ms: u64) -> Option<f64> {
        let id = self.tree.assoc_node(assoc)?;
        Some(self.decay.read(&self.tree.nodes[id].usage, now_ms))
    }

    /// The account's usage (its own associations' and its sub-accounts') decayed to `now_ms`.
    #[cfg(test)]
    pub(crate) fn account_usage(&self, account: &str, now_ms: u64) -> Option<f64> {
        let id = self.tree.account(account)?;
        Some(self.decay.read(&self.tree.nodes[id].usage, now_ms))
    }

    /// The fair-share factor of every association at `now_ms`, in `0..=1`, computed once in
    /// O(n log n) for n tree nodes, by the configured algorithm:
    ///
    /// - **Fair Tree** (Slurm's default): each node's level fair-share `LF = S / U` (`S` its raw
    ///   shares over its siblings', `U` its usage over its siblings', ∞ without usage); the
    ///   associations are ranked by a depth-first traversal visiting siblings in descending `LF`,
    ///   and the factor is `rank / n`: 1.0 for the first, `1/n` for the last, ties as Slurm
    ///   documents them.
    /// - **Classic**: `F = 2^(−U_E / S)`, with `S` the share of the whole machine and `U_E`
    ///   Slurm's effective usage; with no usage at all, every factor is 1.
    pub(crate) fn compute_factors(&self, now_ms: u64) -> FactorTable {
        FactorTable::new(self.evaluate(now_ms).factors)
    }

    /// [`FairShare::compute_factors`] at `now_ms`, computed once for an engine that has not
    /// changed since (debug builds compute them again and compare).
    pub(crate) fn factors_at(&self, now_ms: u64) -> Arc<FactorTable> {
        let (at, factors) = self
            .memo
            .0
            .get_or_init(|| (now_ms, Arc::new(self.compute_factors(now_ms))));
        if *at != now_ms {
            return Arc::new(self.compute_factors(now_ms));
        }
        debug_assert_eq!(
            **factors,
            self.compute_factors(now_ms),
            "factors memo stale"
        );
        Arc::clone(factors)
    }

    /// The `sshare`-like report at `now_ms`: one [`ShareRow`] per account and association, in
    /// tree order. [`format_table`] renders it as text.
    pub(crate) fn report(&self, now_ms: u64) -> Vec<ShareRow> {
        report::rows(&self.tree, &self.evaluate(now_ms))
    }

    /// Every node's numbers at `now_ms` under the configured algorithm.
    fn evaluate(&self, now_ms: u64) -> Evaluation {
        let usage = self
            .tree
            .nodes
            .iter()
            .map(|n| self.decay.read(&n.usage, now_ms))
            .collect();
        match self.algorithm {
            FairshareAlgorithm::FairTree => fair_tree::evaluate(&self.tree, usage),
            FairshareAlgorithm::Classic => classic::evaluate(&self.tree, usage),
        }
    }
}

#[cfg(test)]
mod tests;

/// The examples of this module's documentation from when it was public, as unit tests.
#[cfg(test)]
mod examples {
    #[test]
    fn assoc_id() {
        use crate::config::{AccountConfig, FairshareConfig};
        use crate::fairshare::FairShare;
        let accounts = [AccountConfig {
            name: "a".into(),
            shares: 1,
            ..Default::default()
        }];
        let mut fs = FairShare::new(&accounts, &FairshareConfig::default()).unwrap();
        let first = fs.association(Some("a"), "u1").unwrap();
        let second = fs.association(Some("a"), "u2").unwrap();
        assert_eq!((first.index(), second.index()), (0, 1));
    }

    #[test]
    fn index() {
        use crate::config::{AccountConfig, FairshareConfig};
        use crate::fairshare::FairShare;
        let accounts = [AccountConfig {
            name: "a".into(),
            shares: 1,
            ..Default::default()
        }];
        let mut fs = FairShare::new(&accounts, &FairshareConfig::default()).unwrap();
        assert_eq!(fs.association(Some("a"), "u").unwrap().index(), 0);
    }

    #[test]
    fn fair_share() {
        use crate::config::{AccountConfig, FairshareConfig};
        use crate::fairshare::FairShare;

        let accounts = [
            AccountConfig {
                name: "teama".into(),
                shares: 1,
                ..Default::default()
            },
            AccountConfig {
                name: "teamb".into(),
                shares: 1,
                ..Default::default()
            },
        ];
        let week = 604_800_000;
        let mut fs = FairShare::new(&accounts, &FairshareConfig::default()).unwrap();
        let a = fs.association(Some("teama"), "alice").unwrap();
        let b = fs.association(Some("teamb"), "bob").unwrap();

        // 16 GPUs for 70 s, charged when the job ends.
        fs.charge(a, 16.0 * 70.0, 70_000).unwrap();
        // A week later half of it is remembered.
        assert!((fs.usage(a, 70_000 + week).unwrap() - 560.0).abs() < 1e-9);

        // Fair Tree: the idle team ranks first (1.0), the busy one last (1/2).
        let factors = fs.compute_factors(71_000);
        assert_eq!(factors.get(b), Some(1.0));
        assert_eq!(factors.get(a), Some(0.5));
    }

    #[test]
    fn new() {
        use crate::config::{AccountConfig, FairshareConfig};
        use crate::fairshare::FairShare;
        let accounts = [AccountConfig {
            name: "a".into(),
            parent: Some("nope".into()),
            shares: 1,
            ..Default::default()
        }];
        let err = FairShare::new(&accounts, &FairshareConfig::default()).unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"accounts[0].parent: unknown account "nope""#
        );
    }

    #[test]
    fn algorithm() {
        use crate::config::{FairshareAlgorithm, FairshareConfig};
        use crate::fairshare::FairShare;
        let fs = FairShare::new(&[], &FairshareConfig::default()).unwrap();
        assert_eq!(fs.algorithm(), FairshareAlgorithm::FairTree);
    }

    #[test]
    fn association() {
        use crate::config::{AccountConfig, FairshareConfig};
        use crate::fairshare::FairShare;
        let accounts = [AccountConfig {
            name: "a".into(),
            shares: 1,
            ..Default::default()
        }];
        let mut fs = FairShare::new(&accounts, &FairshareConfig::default()).unwrap();
        let u = fs.association(Some("a"), "u").unwrap();
        assert_eq!(fs.association(Some("a"), "u"), Ok(u));
        assert!(fs.association(Some("b"), "u").is_err()); // FairShareError::UnknownAccount
        assert!(fs.association(None, "u").is_ok());
    }

    #[test]
    fn find_association() {
        use crate::config::{AccountConfig, FairshareConfig};
        use crate::fairshare::FairShare;
        let accounts = [AccountConfig {
            name: "a".into(),
            shares: 1,
            ..Default::default()
        }];
        let mut fs = FairShare::new(&accounts, &FairshareConfig::default()).unwrap();
        assert_eq!(fs.find_association(Some("a"), "u"), None);
        let u = fs.association(Some("a"), "u").unwrap();
        assert_eq!(fs.find_association(Some("a"), "u"), Some(u));
    }

    #[test]
    fn association_count() {
        use crate::config::{AccountConfig, FairshareConfig};
        use crate::fairshare::FairShare;
        let accounts = [AccountConfig {
            name: "a".into(),
            shares: 1,
            users: [("u".to_owned(), 2)].into_iter().collect(),
            ..Default::default()
        }];
        let fs = FairShare::new(&accounts, &FairshareConfig::default()).unwrap();
        assert_eq!(fs.association_count(), 1);
    }

    #[test]
    fn charge() {
        use crate::config::{AccountConfig, FairshareConfig};
        use crate::fairshare::FairShare;
        let accounts = [AccountConfig {
            name: "a".into(),
            shares: 1,
            ..Default::default()
        }];
        let mut fs = FairShare::new(&accounts, &FairshareConfig::default()).unwrap();
        let u = fs.association(Some("a"), "u").unwrap();
        fs.charge(u, 8.0, 0).unwrap();
        assert_eq!(fs.account_usage("a", 0), Some(8.0));
        assert!(fs.charge(u, -1.0, 0).is_err());
    }

    #[test]
    fn usage() {
        use crate::config::{AccountConfig, FairshareConfig};
        use crate::fairshare::FairShare;
        let accounts = [AccountConfig {
            name: "a".into(),
            shares: 1,
            ..Default::default()
        }];
        let config = FairshareConfig {
            half_life_ms: 1_000,
            ..Default::default()
        };
        let mut fs = FairShare::new(&accounts, &config).unwrap();
        let u = fs.association(Some("a"), "u").unwrap();
        fs.charge(u, 8.0, 0).unwrap();
        assert_eq!(fs.usage(u, 3_000), Some(1.0));
    }

    #[test]
    fn account_usage() {
        use crate::config::{AccountConfig, FairshareConfig};
        use crate::fairshare::FairShare;
        let accounts = [AccountConfig {
            name: "a".into(),
            shares: 1,
            ..Default::default()
        }];
        let fs = FairShare::new(&accounts, &FairshareConfig::default()).unwrap();
        assert_eq!(fs.account_usage("a", 0), Some(0.0));
        assert_eq!(fs.account_usage("b", 0), None);
    }

    #[test]
    fn compute_factors() {
        use crate::config::{AccountConfig, FairshareAlgorithm, FairshareConfig};
        use crate::fairshare::FairShare;
        let accounts = [
            AccountConfig {
                name: "big".into(),
                shares: 3,
                ..Default::default()
            },
            AccountConfig {
                name: "small".into(),
                shares: 1,
                ..Default::default()
            },
        ];
        let config = FairshareConfig {
            algorithm: FairshareAlgorithm::Classic,
            ..Default::default()
        };
        let mut fs = FairShare::new(&accounts, &config).unwrap();
        let big = fs.association(Some("big"), "u").unwrap();
        let small = fs.association(Some("small"), "v").unwrap();
        fs.charge(big, 75.0, 0).unwrap();
        fs.charge(small, 25.0, 0).unwrap();
        // Both used exactly their share: F = 2^(−1) for each.
        let factors = fs.compute_factors(0);
        assert!((factors.get(big).unwrap() - 0.5).abs() < 1e-12);
        assert!((factors.get(small).unwrap() - 0.5).abs() < 1e-12);
    }

    #[test]
    fn report() {
        use crate::config::{AccountConfig, FairshareConfig};
        use crate::fairshare::FairShare;
        let accounts = [AccountConfig {
            name: "a".into(),
            shares: 1,
            ..Default::default()
        }];
        let mut fs = FairShare::new(&accounts, &FairshareConfig::default()).unwrap();
        fs.association(Some("a"), "u").unwrap();
        let rows = fs.report(0);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].fairshare, Some(1.0));
    }
}
