//! Carrying usage over to a new share tree when the accounts are reconfigured at run time.

use super::FairShare;
use super::tree::{DEFAULT_ACCOUNT, NodeKind};
use crate::config::{AccountConfig, FairshareConfig};
use crate::error::ConfigError;

impl FairShare {
    /// A new engine for `accounts` and `config` that remembers this engine's usage: every
    /// association's usage, decayed to `now_ms` under this engine's decay, is charged at `now_ms`
    /// to the association with the same account and user names in the new tree (created there,
    /// with shares 1 if its account does not list the user). Usage of associations whose
    /// account is gone is dropped; an account's usage is the sum of its associations', so it
    /// carries over with them wherever the account now sits. Association ids are handed out
    /// afresh: look jobs up again with [`FairShare::association`]. Errors as [`FairShare::new`].
    pub(crate) fn reconfigured(
        &self,
        accounts: &[AccountConfig],
        config: &FairshareConfig,
        now_ms: u64,
    ) -> Result<FairShare, ConfigError> {
        let mut next = FairShare::new(accounts, config)?;
        for node in &self.tree.nodes {
            let (NodeKind::User { assoc }, Some(parent)) = (&node.kind, node.parent) else {
                continue;
            };
            let account = self.tree.nodes[parent].name.as_str();
            // The implicit `default` account is re-created (or the configured one used) by
            // asking for "no account".
            let account = (account != DEFAULT_ACCOUNT).then_some(account);
            let Ok(target) = next.association(account, &node.name) else {
                continue;
            };
            let usage = self.usage(*assoc, now_ms).unwrap_or(0.0);
            // Usage read from the ledger is finite and non-negative, and `target` came from
            // `next`: the charge cannot be refused.
            if usage > 0.0 {
                let _ = next.charge(target, usage, now_ms);
            }
        }
        Ok(next)
    }
}

/// The examples of this module's documentation from when it was public, as unit tests.
#[cfg(test)]
mod examples {
    #[test]
    fn reconfigured() {
        use crate::config::{AccountConfig, FairshareConfig};
        use crate::fairshare::FairShare;
        let old_accounts = [
            AccountConfig {
                name: "a".into(),
                shares: 1,
                ..Default::default()
            },
            AccountConfig {
                name: "b".into(),
                shares: 1,
                ..Default::default()
            },
        ];
        let mut fs = FairShare::new(&old_accounts, &FairshareConfig::default()).unwrap();
        let u = fs.association(Some("a"), "u").unwrap();
        let v = fs.association(Some("b"), "v").unwrap();
        fs.charge(u, 10.0, 0).unwrap();
        fs.charge(v, 4.0, 0).unwrap();
        // "b" is dropped, "a" moves under a new parent "org".
        let new_accounts = [
            AccountConfig {
                name: "org".into(),
                shares: 1,
                ..Default::default()
            },
            AccountConfig {
                name: "a".into(),
                parent: Some("org".into()),
                shares: 2,
                ..Default::default()
            },
        ];
        let mut moved = fs
            .reconfigured(&new_accounts, &FairshareConfig::default(), 0)
            .unwrap();
        let u = moved.association(Some("a"), "u").unwrap();
        assert_eq!(moved.usage(u, 0), Some(10.0));
        assert_eq!(moved.account_usage("org", 0), Some(10.0));
        assert_eq!(moved.account_usage("b", 0), None);
    }
}
