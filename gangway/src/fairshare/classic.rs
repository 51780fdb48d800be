//! Slurm's classic fair-share algorithm (`PriorityFlags=NO_FAIR_TREE`), as its "Classic
//! Fairshare Algorithm" page defines it:
//!
//! - normalised shares `S`: the product, from the node up to the root, of each level's raw
//!   shares over the raw shares of that level's siblings (users and sub-accounts of one account
//!   are siblings of each other);
//! - normalised usage `U_A`: the node's decayed usage over the root's (all usage);
//! - effective usage `U_E`: `U_A` for the accounts just below the root, and
//!   `U_A + (U_E(parent) − U_A) · S_raw / S_raw(siblings)` further down;
//! - factor `F = 2^(−U_E / S)`; with no usage at all every factor is `2^0 = 1`.

use super::factors::Evaluation;
use super::tree::{NodeKind, ROOT, ShareTree};

/// Evaluates the classic algorithm on `usage` (decayed usage by node id, the root's being the
/// total).
pub(crate) fn evaluate(tree: &ShareTree, usage: Vec<f64>) -> Evaluation {
    let n = tree.nodes.len();
    let level = tree.level_shares();
    let total = usage[ROOT];
    let norm_usage: Vec<f64> = usage
        .iter()
        .map(|&u| if total > 0.0 { u / total } else { 0.0 })
        .collect();
    let mut norm_shares = vec![1.0; n];
    let mut effective_usage = vec![0.0; n];
    effective_usage[ROOT] = norm_usage[ROOT];
    let mut factors = vec![1.0; tree.assoc_count()];
    for id in tree.preorder() {
        let node = &tree.nodes[id];
        let Some(parent) = node.parent else { continue };
        norm_shares[id] = norm_shares[parent] * level[id];
        let actual = norm_usage[id];
        effective_usage[id] = if parent == ROOT {
            actual
        } else {
            actual + (effective_usage[parent] - actual) * level[id]
        };
        if let NodeKind::User { assoc } = node.kind {
            factors[assoc.index()] = (-effective_usage[id] / norm_shares[id]).exp2();
        }
    }
    Evaluation {
        usage,
        norm_usage,
        norm_shares,
        effective_usage,
        level_fs: None,
        factors,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fairshare::AssocId;
    use crate::fairshare::tests::account_of as account;

    /// The tree of the "Example" section of Slurm's classic_fair_share.html: A (40) and D (60)
    /// under the root; B (30) and C (10) under A; E (25) and F (35) under D; user 1 in B, users 2
    /// and 3 (one share each) in C, user 4 in E, user 5 in F.
    fn example_tree() -> ShareTree {
        ShareTree::new(&[
            account("A", None, 40, &[]),
            account("D", None, 60, &[]),
            account("B", Some("A"), 30, &["user1"]),
            account("C", Some("A"), 10, &["user2", "user3"]),
            account("E", Some("D"), 25, &["user4"]),
            account("F", Some("D"), 35, &["user5"]),
        ])
        .unwrap()
    }

    fn node(tree: &ShareTree, name: &str) -> usize {
        tree.nodes.iter().position(|n| n.name == name).unwrap()
    }

    fn assoc(tree: &ShareTree, user: &str) -> AssocId {
        let account = tree.account_name(node(tree, user)).to_owned();
        tree.find_association(Some(&account), user).unwrap()
    }

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() <= tolerance
    }

    /// classic_fair_share.html, "Example": users 1, 2 and 4 have used 0.2, 0.25 and 0.25 of the
    /// machine. The page's figure normalises against the machine's whole usage (1.0), so the root's
    /// usage is 1.0 here and the accounts carry the sums of their users.
    #[test]
    fn slurm_classic_example_section() {
        let tree = example_tree();
        let mut usage = vec![0.0; tree.nodes.len()];
        for (name, u) in [
            ("user1", 0.2),
            ("B", 0.2),
            ("user2", 0.25),
            ("C", 0.25),
            ("A", 0.45),
        ] {
            usage[node(&tree, name)] = u;
        }
        for (name, u) in [("user4", 0.25), ("E", 0.25), ("D", 0.25)] {
            usage[node(&tree, name)] = u;
        }
        usage[ROOT] = 1.0;
        let eval = evaluate(&tree, usage);

        // "User 1 normalized share: 0.3" … "User 5 normalized share: 0.35".
        for (user, s) in [
            ("user1", 0.3),
            ("user2", 0.05),
            ("user3", 0.05),
            ("user4", 0.25),
            ("user5", 0.35),
        ] {
            assert!(
                close(eval.norm_shares[node(&tree, user)], s, 1e-12),
                "{user}"
            );
        }
        // "Account A's effective usage is therefore equal to .45. Account D's … .25."
        // "Account B effective usage: 0.2 + ((0.45 - 0.2) * 30 / 40) = 0.3875" etc.
        for (name, ue) in [
            ("A", 0.45),
            ("D", 0.25),
            ("B", 0.3875),
            ("C", 0.3),
            ("E", 0.25),
            ("F", 0.25 * 35.0 / 60.0),
            ("user1", 0.3875),
            ("user2", 0.275),
            ("user3", 0.15),
            ("user4", 0.25),
            ("user5", 0.25 * 35.0 / 60.0),
        ] {
            assert!(
                close(eval.effective_usage[node(&tree, name)], ue, 1e-12),
                "{name}"
            );
        }
        // "User 1 fair-share factor: 2**(-.3875 / .3) = 0.408479" etc. (six decimals printed;
        // user 5's 0.749154 is computed from the rounded 0.1458, hence the looser tolerance).
        for (user, f, tolerance) in [
            ("user1", 0.408479, 1e-6),
            ("user2", 0.022097, 1e-6),
            ("user3", 0.125, 1e-12),
            ("user4", 0.5, 1e-12),
            ("user5", 0.749154, 1e-4),
        ] {
            let got = eval.factors[assoc(&tree, user).index()];
            assert!(close(got, f, tolerance), "{user}: {got} vs {f}");
        }
        let user5 = eval.factors[assoc(&tree, "user5").index()];
        assert!(close(
            user5,
            (-(0.25 * 35.0 / 60.0) / 0.35f64).exp2(),
            1e-12
        ));
    }

    /// classic_fair_share.html, "Simplified Fair-Share Formula": with no usage, `F = 2^0 = 1`.
    #[test]
    fn no_usage_gives_every_association_factor_one() {
        let tree = example_tree();
        let eval = evaluate(&tree, vec![0.0; tree.nodes.len()]);
        assert!(eval.factors.iter().all(|&f| f == 1.0));
        assert!(eval.norm_usage.iter().all(|&u| u == 0.0));
    }

    /// classic_fair_share.html, "Simplified Fair-Share Formula": "A fair-share factor of 0.5
    /// indicates that the user's jobs have used exactly the portion of the machine that they have
    /// been allocated."
    #[test]
    fn using_exactly_ones_share_gives_one_half() {
        let tree = ShareTree::new(&[account("x", None, 1, &["u"]), account("y", None, 3, &["v"])])
            .unwrap();
        let mut usage = vec![0.0; tree.nodes.len()];
        usage[ROOT] = 100.0;
        for (name, u) in [("x", 25.0), ("u", 25.0), ("y", 75.0), ("v", 75.0)] {
            usage[node(&tree, name)] = u;
        }
        let eval = evaluate(&tree, usage);
        assert!(close(eval.factors[assoc(&tree, "u").index()], 0.5, 1e-12));
        assert!(close(eval.factors[assoc(&tree, "v").index()], 0.5, 1e-12));
    }
}
