//! Slurm's Fair Tree algorithm (the default since Slurm 19.05), as its "Fair Tree Fairshare
//! Algorithm" page defines it:
//!
//! - every node's level fair-share `LF = S / U`, with `S` its raw shares over its own and its
//!   siblings' and `U` its usage over its own and its siblings' (`U = 0` gives `LF = ∞`);
//! - a depth-first traversal from the root visiting siblings in descending `LF`, ranking users
//!   in pre-order from `n` (the number of associations) down; a user's factor is `rank / n`, so
//!   the first gets 1.0 and the last `1/n`;
//! - ties ("Ties" section): sibling users with the same `LF` share a rank; a user with the same
//!   `LF` as a sibling account shares the rank of that account's highest ranked user (users sort
//!   before accounts of equal `LF`); sibling accounts with the same `LF` have their children
//!   merged (and sorted together by their own `LF`) before descending.
//!
//! The traversal sorts each sibling group once: O(n log n) in all. It uses an explicit stack, so
//! deep trees cannot overflow the call stack.

use super::factors::Evaluation;
use super::tree::{NodeId, NodeKind, ROOT, ShareTree};

/// One group of siblings being visited (possibly the merged children of tied accounts).
struct Group {
    /// The group, sorted.
    members: Vec<NodeId>,
    /// The next member to visit.
    next: usize,
    /// The level fair-share of the member visited last.
    previous: Option<f64>,
    /// Whether the group's first member is tied with what was ranked just before the group.
    starts_tied: bool,
}

/// Evaluates Fair Tree on `usage` (decayed usage by node id).
pub(crate) fn evaluate(tree: &ShareTree, usage: Vec<f64>) -> Evaluation {
    let n = tree.nodes.len();
    let total = usage[ROOT];
    let norm_usage: Vec<f64> = usage
        .iter()
        .map(|&u| if total > 0.0 { u / total } else { 0.0 })
        .collect();
    let level_shares = tree.level_shares();
    let mut level_usage = vec![0.0; n];
    let mut level_fs = vec![f64::INFINITY; n];
    for node in &tree.nodes {
        let sum: f64 = node.children.iter().map(|&c| usage[c]).sum();
        for &child in &node.children {
            level_usage[child] = if sum > 0.0 { usage[child] / sum } else { 0.0 };
            level_fs[child] = if level_usage[child] > 0.0 {
                level_shares[child] / level_usage[child]
            } else {
                f64::INFINITY
            };
        }
    }
    let factors = rank(tree, &level_fs);
    Evaluation {
        usage,
        norm_usage,
        norm_shares: level_shares,
        effective_usage: level_usage,
        level_fs: Some(level_fs),
        factors,
    }
}

/// Whether a node is an association (a user).
fn is_user(tree: &ShareTree, id: NodeId) -> bool {
    matches!(tree.nodes[id].kind, NodeKind::User { .. })
}

/// Each node's place in a sibling group, as one integer per node so that a sort compares
/// integers: higher level fair-share first (in `f64::total_cmp`'s order), users before accounts
/// of equal level fair-share, then creation order.
fn sibling_keys(tree: &ShareTree, level_fs: &[f64]) -> Vec<u128> {
    level_fs
        .iter()
        .enumerate()
        .map(|(id, lf)| {
            // `total_cmp`'s order as unsigned integers, then reversed: higher first.
            let bits = lf.to_bits();
            let ascending = if bits >> 63 == 1 {
                !bits
            } else {
                bits | 1 << 63
            };
            let account = u128::from(!is_user(tree, id));
            (u128::from(!ascending) << 64) | (account << 63) | id as u128
        })
        .collect()
}

/// Sorts a sibling group by [`sibling_keys`].
fn sort_group(keys: &[u128], group: &mut [NodeId]) {
    group.sort_unstable_by_key(|&id| keys[id]);
}

/// Ranks every association by the depth-first traversal and returns `rank / n` by association.
fn rank(tree: &ShareTree, level_fs: &[f64]) -> Vec<f64> {
    let count = tree.assoc_count();
    let mut factors = vec![1.0; count];
    // `rank` is the rank given to the last user; `untied` is the rank the next user gets unless
    // it ties with what came just before it.
    let mut rank = count;
    let mut untied = count;
    let keys = sibling_keys(tree, level_fs);
    let mut root = tree.nodes[ROOT].children.clone();
    sort_group(&keys, &mut root);
    let mut stack = vec![Group {
        members: root,
        next: 0,
        previous: None,
        starts_tied: false,
    }];
    while let Some(group) = stack.last_mut() {
        let Some(&id) = group.members.get(group.next) else {
            stack.pop();
            continue;
        };
        let lf = level_fs[id];
        let tied = if group.next == 0 {
            group.starts_tied
        } else {
            group.previous == Some(lf)
        };
        group.previous = Some(lf);
        if let NodeKind::User { assoc } = tree.nodes[id].kind {
            if !tied {
                rank = untied;
            }
            factors[assoc.index()] = rank as f64 / count as f64;
            untied = untied.saturating_sub(1);
            group.next += 1;
            continue;
        }
        // An account: merge the children of the sibling accounts tied with it, then descend.
        let mut end = group.next + 1;
        while let Some(&other) = group.members.get(end)
            && !is_user(tree, other)
            && level_fs[other] == lf
        {
            end += 1;
        }
        let mut merged: Vec<NodeId> = group.members[group.next..end]
            .iter()
            .flat_map(|&account| tree.nodes[account].children.iter().copied())
            .collect();
        group.next = end;
        sort_group(&keys, &mut merged);
        stack.push(Group {
            members: merged,
            next: 0,
            previous: None,
            starts_tied: tied,
        });
    }
    factors
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fairshare::tests::account_of as account;

    /// Decayed usage by node: the listed users' usage, summed into every ancestor.
    fn usage_of(tree: &ShareTree, users: &[(&str, &str, f64)]) -> Vec<f64> {
        let mut usage = vec![0.0; tree.nodes.len()];
        for &(account, user, u) in users {
            let assoc = tree.find_association(Some(account), user).unwrap();
            let mut at = tree.assoc_node(assoc);
            while let Some(id) = at {
                usage[id] += u;
                at = tree.nodes[id].parent;
            }
        }
        usage
    }

    fn factor(tree: &ShareTree, eval: &Evaluation, account: &str, user: &str) -> f64 {
        eval.factors[tree.find_association(Some(account), user).unwrap().index()]
    }

    fn node(tree: &ShareTree, name: &str) -> usize {
        tree.nodes.iter().position(|n| n.name == name).unwrap()
    }

    /// fair_tree.html, "Overview for End Users": with root => Acct1 => Acct12 => UserA and
    /// root => Acct1 => Acct16 => UserB, UserB has the higher FairShare exactly when Acct16 has
    /// the higher Level FS.
    #[test]
    fn slurm_fair_tree_end_user_overview_example() {
        let tree = ShareTree::new(&[
            account("Acct1", None, 1, &[]),
            account("Acct12", Some("Acct1"), 1, &["UserA"]),
            account("Acct16", Some("Acct1"), 1, &["UserB"]),
        ])
        .unwrap();
        for (a, b) in [(30.0, 10.0), (10.0, 30.0)] {
            let eval = evaluate(
                &tree,
                usage_of(&tree, &[("Acct12", "UserA", a), ("Acct16", "UserB", b)]),
            );
            let lf = eval.level_fs.as_ref().unwrap();
            let user_b_higher =
                factor(&tree, &eval, "Acct16", "UserB") > factor(&tree, &eval, "Acct12", "UserA");
            assert_eq!(
                user_b_higher,
                lf[node(&tree, "Acct16")] > lf[node(&tree, "Acct12")]
            );
        }
    }

    /// fair_tree.html, "Level Fairshare Calculation" and "Algorithm", on the tree of the classic
    /// page's example (A 40 {B 30 {user1}, C 10 {user2, user3}}, D 60 {E 25 {user4}, F 35
    /// {user5}}) with users 1, 2 and 4 having used 20, 25 and 25. Expected values from
    /// `LF = (Sraw_self / Sraw_self+siblings) / (Uraw_self / Uraw_self+siblings)`:
    /// A = 0.4 / (45/70) ≈ 0.622, D = 0.6 / (25/70) = 1.68, so D's users rank first;
    /// F = ∞ > E = (25/60) / 1; B = 0.75 / (20/45) = 1.6875 > C = 0.25 / (25/45) = 0.45;
    /// in C, user3 (∞) > user2 (0.5 / 1). Ranks 5..1 over 5 associations: user5 1.0, user4 0.8,
    /// user1 0.6, user3 0.4, user2 0.2.
    #[test]
    fn slurm_fair_tree_level_fairshare_and_ranking() {
        let tree = ShareTree::new(&[
            account("A", None, 40, &[]),
            account("D", None, 60, &[]),
            account("B", Some("A"), 30, &["user1"]),
            account("C", Some("A"), 10, &["user2", "user3"]),
            account("E", Some("D"), 25, &["user4"]),
            account("F", Some("D"), 35, &["user5"]),
        ])
        .unwrap();
        let eval = evaluate(
            &tree,
            usage_of(
                &tree,
                &[
                    ("B", "user1", 20.0),
                    ("C", "user2", 25.0),
                    ("E", "user4", 25.0),
                ],
            ),
        );
        let lf = eval.level_fs.as_ref().unwrap();
        for (name, expected) in [
            ("A", 0.4 / (45.0 / 70.0)),
            ("D", 0.6 / (25.0 / 70.0)),
            ("B", 0.75 / (20.0 / 45.0)),
            ("C", 0.25 / (25.0 / 45.0)),
            ("E", 25.0 / 60.0),
            ("user2", 0.5),
        ] {
            assert!((lf[node(&tree, name)] - expected).abs() < 1e-12, "{name}");
        }
        assert_eq!(lf[node(&tree, "F")], f64::INFINITY);
        assert_eq!(lf[node(&tree, "user3")], f64::INFINITY);
        for (account, user, f) in [
            ("F", "user5", 1.0),
            ("E", "user4", 0.8),
            ("B", "user1", 0.6),
            ("C", "user3", 0.4),
            ("C", "user2", 0.2),
        ] {
            assert_eq!(factor(&tree, &eval, account, user), f, "{user}");
        }
    }

    /// fair_tree.html, "Overview for End Users": "Level FS values are infinity if the
    /// association has no usage"; with no usage anywhere everything ties at the top rank.
    #[test]
    fn no_usage_ties_everyone_at_one() {
        let tree = ShareTree::new(&[
            account("a", None, 1, &["u1", "u2"]),
            account("b", None, 5, &["u3"]),
            account("c", Some("b"), 2, &["u4"]),
        ])
        .unwrap();
        let eval = evaluate(&tree, vec![0.0; tree.nodes.len()]);
        assert!(eval.factors.iter().all(|&f| f == 1.0));
        assert!(
            eval.level_fs.unwrap()[1..]
                .iter()
                .all(|lf| lf.is_infinite())
        );
    }

    /// fair_tree.html, "Ties": "Sibling users with the same Level Fairshare receive the same
    /// rank". u1 and u2 (no usage) tie at rank 3; u3 is ranked after both, at rank 1.
    #[test]
    fn tied_sibling_users_share_a_rank() {
        let tree = ShareTree::new(&[account("a", None, 1, &["u1", "u2", "u3"])]).unwrap();
        let eval = evaluate(&tree, usage_of(&tree, &[("a", "u3", 10.0)]));
        assert_eq!(factor(&tree, &eval, "a", "u1"), 1.0);
        assert_eq!(factor(&tree, &eval, "a", "u2"), 1.0);
        assert_eq!(factor(&tree, &eval, "a", "u3"), 1.0 / 3.0);
    }

    /// fair_tree.html, "Ties": "A user with the same Level Fairshare as a sibling account will
    /// receive the same rank as its highest ranked user". In P, user u and account Q have equal
    /// shares and usage (LF 1 each); Q's highest ranked user q2 (no usage) shares u's rank 3, and
    /// q1 gets rank 1.
    #[test]
    fn a_user_tied_with_a_sibling_account_shares_its_top_rank() {
        let tree = ShareTree::new(&[
            account("P", None, 1, &["u"]),
            account("Q", Some("P"), 1, &["q1", "q2"]),
        ])
        .unwrap();
        let eval = evaluate(
            &tree,
            usage_of(&tree, &[("P", "u", 10.0), ("Q", "q1", 10.0)]),
        );
        let lf = eval.level_fs.as_ref().unwrap();
        assert_eq!(lf[node(&tree, "u")], lf[node(&tree, "Q")]);
        assert_eq!(factor(&tree, &eval, "P", "u"), 1.0);
        assert_eq!(factor(&tree, &eval, "Q", "q2"), 1.0);
        assert_eq!(factor(&tree, &eval, "Q", "q1"), 1.0 / 3.0);
    }

    /// fair_tree.html, "Ties": "Sibling accounts with the same Level Fairshare have their
    /// children lists merged before descending". X and Y tie (LF 1); merged, their users sort by
    /// their own LF: x1 (2) first, y1 and y2 (1, tied) next, x2 (2/3) last. Without merging, X's
    /// users would both rank above Y's.
    #[test]
    fn tied_sibling_accounts_merge_their_children() {
        let tree = ShareTree::new(&[
            account("X", None, 1, &["x1", "x2"]),
            account("Y", None, 1, &["y1", "y2"]),
        ])
        .unwrap();
        let eval = evaluate(
            &tree,
            usage_of(
                &tree,
                &[
                    ("X", "x1", 10.0),
                    ("X", "x2", 30.0),
                    ("Y", "y1", 20.0),
                    ("Y", "y2", 20.0),
                ],
            ),
        );
        assert_eq!(factor(&tree, &eval, "X", "x1"), 1.0);
        assert_eq!(factor(&tree, &eval, "Y", "y1"), 0.75);
        assert_eq!(factor(&tree, &eval, "Y", "y2"), 0.75);
        assert_eq!(factor(&tree, &eval, "X", "x2"), 0.25);
    }

    /// fair_tree.html, "Introduction": "if accounts A and B are siblings and A has a higher
    /// fairshare factor than B, all children of A will have higher fairshare factors than all
    /// children of B" — however little a child of B has used.
    #[test]
    fn every_child_of_a_better_account_ranks_above_every_child_of_a_worse_one() {
        let tree = ShareTree::new(&[
            account("A", None, 1, &["a1", "a2"]),
            account("B", None, 1, &["b1", "b2"]),
        ])
        .unwrap();
        let eval = evaluate(
            &tree,
            usage_of(
                &tree,
                &[("A", "a1", 10.0), ("B", "b1", 100.0), ("B", "b2", 0.001)],
            ),
        );
        let worst_of_a = factor(&tree, &eval, "A", "a1").min(factor(&tree, &eval, "A", "a2"));
        let best_of_b = factor(&tree, &eval, "B", "b1").max(factor(&tree, &eval, "B", "b2"));
        assert!(worst_of_a > best_of_b);
    }

    /// The integer keys sort a sibling group exactly as the rule reads: higher level
    /// fair-share first in `total_cmp`'s order (infinity, zeros of both signs, ties), users
    /// before accounts of equal level fair-share, then creation order.
    #[test]
    fn sibling_keys_sort_as_the_rule_reads() {
        let tree = ShareTree::new(&[
            account("A", None, 1, &["a1", "a2", "a3"]),
            account("B", None, 1, &["b1"]),
            account("C", Some("A"), 1, &["c1", "c2"]),
        ])
        .unwrap();
        let n = tree.nodes.len();
        let values = [f64::INFINITY, 2.0, 1.0, 1.0, 0.5, 0.0, -0.0, 1e-300];
        let by_rule = |level_fs: &[f64], a: &NodeId, b: &NodeId| {
            level_fs[*b]
                .total_cmp(&level_fs[*a])
                .then(is_user(&tree, *b).cmp(&is_user(&tree, *a)))
                .then(a.cmp(b))
        };
        for shift in 0..values.len() {
            let level_fs: Vec<f64> = (0..n)
                .map(|i| values[(i * 3 + shift) % values.len()])
                .collect();
            let keys = sibling_keys(&tree, &level_fs);
            let mut sorted: Vec<NodeId> = (0..n).rev().collect();
            sort_group(&keys, &mut sorted);
            let mut expected: Vec<NodeId> = (0..n).collect();
            expected.sort_by(|a, b| by_rule(&level_fs, a, b));
            assert_eq!(sorted, expected, "{level_fs:?}");
        }
    }
}
