//! The share tree: an implicit root, the configured accounts below it, and the associations
//! (account, user) as leaves, each node with its raw shares and its decaying usage.
//!
//! Nodes are stored in a `Vec` in creation order and never removed, so a [`NodeId`] stays valid
//! for the life of the tree. The root is node 0; the configured accounts follow in configuration
//! order, then the configured users (account by account, in configuration order); users met later
//! and the implicit `default` account are appended when first used. Children are kept in the same
//! creation order, which makes every traversal deterministic.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use super::AssocId;
use super::ledger::Usage;
use crate::config::AccountConfig;
use crate::error::{ConfigError, FairShareError};

/// The name of the account charged for jobs that name none.
pub(crate) const DEFAULT_ACCOUNT: &str = "default";

/// A node of the share tree, by position.
pub(crate) type NodeId = usize;

/// The root's id.
pub(crate) const ROOT: NodeId = 0;

/// What a node is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) enum NodeKind {
    /// The implicit root of the tree.
    Root,
    /// An account, with its users by name.
    Account { users: IndexMap<String, NodeId> },
    /// An association: a user under its parent account.
    User { assoc: AssocId },
}

/// One node of the share tree.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Node {
    /// The account's or the user's name.
    pub(crate) name: String,
    /// The parent; `None` only for the root.
    pub(crate) parent: Option<NodeId>,
    /// Raw shares relative to the siblings (at least 1; the root's are unused).
    pub(crate) shares: u32,
    /// Sub-accounts and users, in creation order.
    pub(crate) children: Vec<NodeId>,
    /// Distance from the root (the root is 0).
    pub(crate) depth: u32,
    /// What the node is.
    pub(crate) kind: NodeKind,
    /// The decaying usage charged to this node and its descendants.
    pub(crate) usage: Usage,
}

/// Where an account stands in the cycle check.
#[derive(Clone, Copy, PartialEq)]
enum Walk {
    Unseen,
    OnPath,
    Done,
}

/// The share tree.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct ShareTree {
    /// Every node; the root first.
    pub(crate) nodes: Vec<Node>,
    /// Account nodes by name.
    accounts: IndexMap<String, NodeId>,
    /// The user node of each association, by [`AssocId`].
    assocs: Vec<NodeId>,
}

impl ShareTree {
    /// Builds the tree from the configured accounts, refusing duplicate names, unknown parents,
    /// cycles and zero shares with an error naming the offending field.
    pub(crate) fn new(accounts: &[AccountConfig]) -> Result<Self, ConfigError> {
        let mut index: IndexMap<&str, usize> = IndexMap::new();
        for (i, account) in accounts.iter().enumerate() {
            if account.name.is_empty() {
                return Err(ConfigError::new(
                    format!("accounts[{i}].name"),
                    "must not be empty",
                ));
            }
            if index.insert(&account.name, i).is_some() {
                return Err(ConfigError::new(
                    format!("accounts[{i}].name"),
                    format!("duplicate account \"{}\"", account.name),
                ));
            }
        }
        for (i, account) in accounts.iter().enumerate() {
            if account.shares == 0 {
                return Err(ConfigError::new(
                    format!("accounts[{i}].shares"),
                    "must be at least 1",
                ));
            }
            if let Some((user, _)) = account.users.iter().find(|&(_, &shares)| shares == 0) {
                return Err(ConfigError::new(
                    format!("accounts[{i}].users.{user}"),
                    "shares must be at least 1",
                ));
            }
            if let Some(parent) = &account.parent
                && !index.contains_key(parent.as_str())
            {
                return Err(ConfigError::new(
                    format!("accounts[{i}].parent"),
                    format!("unknown account \"{parent}\""),
                ));
            }
        }
        let parent_of = |i: usize| {
            accounts[i]
                .parent
                .as_deref()
                .and_then(|p| index.get(p).copied())
        };
        // Walk up from every account, marking accounts on the current walk; meeting one of them
        // again closes a cycle. Each account is walked over once in all.
        let mut state = vec![Walk::Unseen; accounts.len()];
        for start in 0..accounts.len() {
            let mut path = Vec::new();
            let mut at = Some(start);
            while let Some(i) = at {
                match state[i] {
                    Walk::Done => break,
                    Walk::OnPath => {
                        let from = path.iter().position(|&j| j == i).unwrap_or(0);
                        let names: Vec<String> = path[from..]
                            .iter()
                            .chain([&i])
                            .map(|&j| format!("\"{}\"", accounts[j].name))
                            .collect();
                        return Err(ConfigError::new(
                            format!("accounts[{i}].parent"),
                            format!("cycle {}", names.join(" -> ")),
                        ));
                    }
                    Walk::Unseen => {
                        state[i] = Walk::OnPath;
                        path.push(i);
                        at = parent_of(i);
                    }
                }
            }
            for i in path {
                state[i] = Walk::Done;
            }
        }

        let mut tree = ShareTree {
            nodes: vec![Node {
                name: "root".to_owned(),
                parent: None,
                shares: 1,
                children: Vec::new(),
                depth: 0,
                kind: NodeKind::Root,
                usage: Usage::default(),
            }],
            accounts: IndexMap::new(),
            assocs: Vec::new(),
        };
        for account in accounts {
            let id = tree.nodes.len();
            tree.nodes.push(Node {
                name: account.name.clone(),
                parent: None,
                shares: account.shares,
                children: Vec::new(),
                depth: 0,
                kind: NodeKind::Account {
                    users: IndexMap::new(),
                },
                usage: Usage::default(),
            });
            tree.accounts.insert(account.name.clone(), id);
        }
        for i in 0..accounts.len() {
            let parent = parent_of(i).map_or(ROOT, |p| p + 1);
            tree.nodes[i + 1].parent = Some(parent);
            tree.nodes[parent].children.push(i + 1);
        }
        tree.set_depths();
        for (i, account) in accounts.iter().enumerate() {
            for (user, &shares) in &account.users {
                tree.add_user(i + 1, user, shares);
            }
        }
        Ok(tree)
    }

    /// Sets every account's depth, parents before children.
    fn set_depths(&mut self) {
        for id in self.preorder() {
            if let Some(parent) = self.nodes[id].parent {
                self.nodes[id].depth = self.nodes[parent].depth + 1;
            }
        }
    }

    /// Every node, each parent before its children, siblings in creation order.
    pub(crate) fn preorder(&self) -> Vec<NodeId> {
        let mut order = Vec::with_capacity(self.nodes.len());
        let mut stack = vec![ROOT];
        while let Some(id) = stack.pop() {
            order.push(id);
            stack.extend(self.nodes[id].children.iter().rev());
        }
        order
    }

    /// The association of `user` under the account `account` (`None`: the `default` account),
    /// created with shares 1 if the user is not listed there, and the `default` account created
    /// at root level with shares 1 if needed. Errors for an unknown account.
    pub(crate) fn association(
        &mut self,
        account: Option<&str>,
        user: &str,
    ) -> Result<AssocId, FairShareError> {
        let account_id = match account {
            Some(name) => self
                .account(name)
                .ok_or_else(|| FairShareError::UnknownAccount(name.to_string()))?,
            None => match self.account(DEFAULT_ACCOUNT) {
                Some(id) => id,
                None => self.add_default_account(),
            },
        };
        if let Some(assoc) = self.user(account_id, user) {
            return Ok(assoc);
        }
        Ok(self.add_user(account_id, user, 1))
    }

    /// The existing association of `user` under `account` (`None`: the `default` account).
    pub(crate) fn find_association(&self, account: Option<&str>, user: &str) -> Option<AssocId> {
        self.user(self.account(account.unwrap_or(DEFAULT_ACCOUNT))?, user)
    }

    /// The account node named `name`.
    pub(crate) fn account(&self, name: &str) -> Option<NodeId> {
        self.accounts.get(name).copied()
    }

    /// The association of `user` directly under the account node `account`.
    fn user(&self, account: NodeId, user: &str) -> Option<AssocId> {
        let NodeKind::Account { users } = &self.nodes[account].kind else {
            return None;
        };
        match self.nodes[*users.get(user)?].kind {
            NodeKind::User { assoc } => Some(assoc),
            _ => None,
        }
    }

    /// Appends the implicit `default` account under the root.
    fn add_default_account(&mut self) -> NodeId {
        let id = self.nodes.len();
        self.nodes.push(Node {
            name: DEFAULT_ACCOUNT.to_owned(),
            parent: Some(ROOT),
            shares: 1,
            children: Vec::new(),
            depth: 1,
            kind: NodeKind::Account {
                users: IndexMap::new(),
            },
            usage: Usage::default(),
        });
        self.nodes[ROOT].children.push(id);
        self.accounts.insert(DEFAULT_ACCOUNT.to_owned(), id);
        id
    }

    /// Appends the association of `user` under the account node `account`.
    fn add_user(&mut self, account: NodeId, user: &str, shares: u32) -> AssocId {
        let id = self.nodes.len();
        let assoc = AssocId::from_index(self.assocs.len());
        self.nodes.push(Node {
            name: user.to_owned(),
            parent: Some(account),
            shares,
            children: Vec::new(),
            depth: self.nodes[account].depth + 1,
            kind: NodeKind::User { assoc },
            usage: Usage::default(),
        });
        self.assocs.push(id);
        let parent = &mut self.nodes[account];
        parent.children.push(id);
        if let NodeKind::Account { users } = &mut parent.kind {
            users.insert(user.to_owned(), id);
        }
        assoc
    }

    /// The user node of an association.
    pub(crate) fn assoc_node(&self, assoc: AssocId) -> Option<NodeId> {
        self.assocs.get(assoc.index()).copied()
    }

    /// How many associations exist.
    pub(crate) fn assoc_count(&self) -> usize {
        self.assocs.len()
    }

    /// Every node's raw shares divided by the sum of its own and its siblings' raw shares (the
    /// root's is 1).
    pub(crate) fn level_shares(&self) -> Vec<f64> {
        let mut level = vec![1.0; self.nodes.len()];
        for node in &self.nodes {
            let sum: u64 = node
                .children
                .iter()
                .map(|&c| u64::from(self.nodes[c].shares))
                .sum();
            for &child in &node.children {
                level[child] = f64::from(self.nodes[child].shares) / sum as f64;
            }
        }
        level
    }

    /// The account a node belongs to: its parent's name for a user, its own name for an account.
    pub(crate) fn account_name(&self, id: NodeId) -> &str {
        match (&self.nodes[id].kind, self.nodes[id].parent) {
            (NodeKind::User { .. }, Some(parent)) => &self.nodes[parent].name,
            _ => &self.nodes[id].name,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::fairshare::tests::account;

    #[test]
    fn accounts_may_name_a_parent_listed_later() {
        let tree = ShareTree::new(&[
            account("child", Some("top"), 1, &[("u", 2)]),
            account("top", None, 3, &[]),
        ])
        .unwrap();
        let child = tree.account("child").unwrap();
        let top = tree.account("top").unwrap();
        assert_eq!(tree.nodes[child].parent, Some(top));
        assert_eq!(tree.nodes[child].depth, 2);
        assert_eq!(tree.nodes[ROOT].children, vec![top]);
        let assoc = tree.find_association(Some("child"), "u").unwrap();
        let node = tree.assoc_node(assoc).unwrap();
        assert_eq!((tree.nodes[node].shares, tree.nodes[node].depth), (2, 3));
    }

    #[test]
    fn duplicate_names_are_refused() {
        let err =
            ShareTree::new(&[account("a", None, 1, &[]), account("a", None, 1, &[])]).unwrap_err();
        assert_eq!(err.to_string(), "accounts[1].name: duplicate account \"a\"");
    }

    #[test]
    fn empty_names_are_refused() {
        let err = ShareTree::new(&[account("", None, 1, &[])]).unwrap_err();
        assert_eq!(err.to_string(), "accounts[0].name: must not be empty");
    }

    #[test]
    fn unknown_parents_are_refused() {
        let err = ShareTree::new(&[account("a", None, 1, &[]), account("b", Some("x"), 1, &[])])
            .unwrap_err();
        assert_eq!(err.to_string(), "accounts[1].parent: unknown account \"x\"");
    }

    #[test]
    fn cycles_are_refused() {
        let err = ShareTree::new(&[
            account("ok", None, 1, &[]),
            account("a", Some("b"), 1, &[]),
            account("b", Some("a"), 1, &[]),
        ])
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "accounts[1].parent: cycle \"a\" -> \"b\" -> \"a\""
        );
        let err = ShareTree::new(&[account("self", Some("self"), 1, &[])]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "accounts[0].parent: cycle \"self\" -> \"self\""
        );
    }

    #[test]
    fn an_account_below_a_cycle_is_refused_at_the_cycle() {
        let err = ShareTree::new(&[
            account("leaf", Some("a"), 1, &[]),
            account("a", Some("b"), 1, &[]),
            account("b", Some("a"), 1, &[]),
        ])
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "accounts[1].parent: cycle \"a\" -> \"b\" -> \"a\""
        );
    }

    #[test]
    fn zero_shares_are_refused() {
        let err = ShareTree::new(&[account("a", None, 0, &[])]).unwrap_err();
        assert_eq!(err.to_string(), "accounts[0].shares: must be at least 1");
        let err = ShareTree::new(&[account("a", None, 1, &[("bob", 0)])]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "accounts[0].users.bob: shares must be at least 1"
        );
    }

    #[test]
    fn unlisted_users_get_one_share_and_keep_their_association() {
        let mut tree = ShareTree::new(&[account("a", None, 5, &[("listed", 4)])]).unwrap();
        let first = tree.association(Some("a"), "newcomer").unwrap();
        assert_eq!(tree.association(Some("a"), "newcomer").unwrap(), first);
        let node = tree.assoc_node(first).unwrap();
        assert_eq!(tree.nodes[node].shares, 1);
        assert_eq!(tree.level_shares()[node], 1.0 / 5.0);
        assert_eq!(tree.assoc_count(), 2);
    }

    #[test]
    fn unknown_accounts_are_refused() {
        let mut tree = ShareTree::new(&[account("a", None, 1, &[])]).unwrap();
        assert_eq!(
            tree.association(Some("b"), "u"),
            Err(FairShareError::UnknownAccount("b".into()))
        );
        assert_eq!(tree.assoc_count(), 0);
    }

    #[test]
    fn the_default_account_appears_on_first_use() {
        let mut tree = ShareTree::new(&[account("a", None, 1, &[])]).unwrap();
        assert_eq!(tree.account(DEFAULT_ACCOUNT), None);
        assert_eq!(tree.find_association(None, "u"), None);
        let assoc = tree.association(None, "u").unwrap();
        let default = tree.account(DEFAULT_ACCOUNT).unwrap();
        assert_eq!(tree.nodes[default].parent, Some(ROOT));
        assert_eq!(tree.nodes[default].shares, 1);
        assert_eq!(tree.find_association(None, "u"), Some(assoc));
        assert_eq!(
            tree.account_name(tree.assoc_node(assoc).unwrap()),
            DEFAULT_ACCOUNT
        );
    }

    #[test]
    fn a_configured_default_account_is_used_as_is() {
        let mut tree = ShareTree::new(&[account("default", None, 7, &[])]).unwrap();
        tree.association(None, "u").unwrap();
        assert_eq!(tree.nodes[ROOT].children.len(), 1);
        assert_eq!(tree.nodes[tree.account("default").unwrap()].shares, 7);
    }
}
