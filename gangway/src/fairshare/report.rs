//! The `sshare`-like report: one row per account and per association.

#[cfg(test)]
use std::fmt::Write as _;

use serde::{Serialize, Serializer};

use super::factors::Evaluation;
use super::tree::{NodeKind, ShareTree};

/// One line of the share report, as `sshare -l` prints it: an account (`user` is `None`) or an
/// association (a user under `account`).
///
/// Rows come in tree order: each account, then its sub-accounts and users in creation order.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ShareRow {
    /// The account (for an association, the account the user sits under).
    pub account: String,
    /// The user of an association; `None` on an account row.
    pub user: Option<String>,
    /// Depth in the tree: 1 for the accounts just below the root.
    pub depth: u32,
    /// The configured shares (1 for users not listed and for the implicit `default` account).
    pub raw_shares: u32,
    /// Classic: the share of the whole machine (the product of the levels' normalised shares);
    /// Fair Tree: the share among siblings, as Slurm's `sshare` shows under each algorithm.
    pub norm_shares: f64,
    /// Decayed usage (billing-weighted resource-seconds).
    pub raw_usage: f64,
    /// Usage over all usage (0 with none).
    pub norm_usage: f64,
    /// Classic: Slurm's effective usage; Fair Tree: usage over the siblings' usage.
    pub effective_usage: f64,
    /// Fair Tree's level fair-share `S / U`; `None` under classic. Infinite without usage, which
    /// serializes as the string `"inf"`.
    #[serde(serialize_with = "serialize_level_fs")]
    pub level_fs: Option<f64>,
    /// The fair-share factor of an association; `None` on an account row.
    pub fairshare: Option<f64>,
}

/// Writes a level fair-share as a number, or `"inf"` when infinite (JSON has no infinity).
fn serialize_level_fs<S: Serializer>(
    value: &Option<f64>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match value {
        Some(v) if v.is_infinite() => serializer.serialize_some("inf"),
        Some(v) => serializer.serialize_some(v),
        None => serializer.serialize_none(),
    }
}

/// Builds the rows from an evaluation, in tree order, without the root.
pub(crate) fn rows(tree: &ShareTree, eval: &Evaluation) -> Vec<ShareRow> {
    tree.preorder()
        .into_iter()
        .filter_map(|id| {
            let node = &tree.nodes[id];
            let (user, fairshare) = match node.kind {
                NodeKind::Root => return None,
                NodeKind::Account { .. } => (None, None),
                NodeKind::User { assoc } => (
                    Some(node.name.clone()),
                    eval.factors.get(assoc.index()).copied(),
                ),
            };
            Some(ShareRow {
                account: tree.account_name(id).to_owned(),
                user,
                depth: node.depth,
                raw_shares: node.shares,
                norm_shares: eval.norm_shares[id],
                raw_usage: eval.usage[id],
                norm_usage: eval.norm_usage[id],
                effective_usage: eval.effective_usage[id],
                level_fs: eval.level_fs.as_ref().map(|lf| lf[id]),
                fairshare,
            })
        })
        .collect()
}

/// Renders rows as a plain-text table in the manner of `sshare -l`: accounts indented one space
/// per level below the first, raw usage rounded to whole units, `inf` for an infinite level
/// fair-share, and empty cells where a value does not apply.
#[cfg(test)]
pub(crate) fn format_table(rows: &[ShareRow]) -> String {
    let header = [
        "Account",
        "User",
        "RawShares",
        "NormShares",
        "RawUsage",
        "NormUsage",
        "EffectvUsage",
        "LevelFS",
        "FairShare",
    ];
    let cells: Vec<[String; 9]> = rows
        .iter()
        .map(|row| {
            let indent = " ".repeat(row.depth.saturating_sub(1) as usize);
            [
                format!("{indent}{}", row.account),
                row.user.clone().unwrap_or_default(),
                row.raw_shares.to_string(),
                format!("{:.6}", row.norm_shares),
                format!("{:.0}", row.raw_usage),
                format!("{:.6}", row.norm_usage),
                format!("{:.6}", row.effective_usage),
                row.level_fs.map_or_else(String::new, |lf| {
                    if lf.is_infinite() {
                        "inf".to_owned()
                    } else {
                        format!("{lf:.6}")
                    }
                }),
                row.fairshare
                    .map_or_else(String::new, |f| format!("{f:.6}")),
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for line in &cells {
        for (width, cell) in widths.iter_mut().zip(line) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let mut write_line = |line: &[&str]| {
        let mut text = String::new();
        for (i, (cell, &width)) in line.iter().zip(&widths).enumerate() {
            // Names are left-aligned, numbers right-aligned.
            let _ = if i < 2 {
                write!(text, "{cell:<width$} ")
            } else {
                write!(text, "{cell:>width$} ")
            };
        }
        out.push_str(text.trim_end());
        out.push('\n');
    };
    write_line(&header);
    let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
    write_line(&rule.iter().map(String::as_str).collect::<Vec<_>>());
    for line in &cells {
        write_line(&line.iter().map(String::as_str).collect::<Vec<_>>());
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::config::{AccountConfig, FairshareAlgorithm, FairshareConfig};
    use crate::fairshare::FairShare;

    use super::*;

    fn sample(algorithm: FairshareAlgorithm) -> FairShare {
        let accounts = [
            AccountConfig {
                name: "a".into(),
                shares: 3,
                ..Default::default()
            },
            AccountConfig {
                name: "sub".into(),
                parent: Some("a".into()),
                shares: 1,
                users: [("carol".to_owned(), 2)].into_iter().collect(),
            },
            AccountConfig {
                name: "b".into(),
                shares: 1,
                ..Default::default()
            },
        ];
        let config = FairshareConfig {
            half_life_ms: 0,
            algorithm,
            ..Default::default()
        };
        let mut fs = FairShare::new(&accounts, &config).unwrap();
        let carol = fs.association(Some("sub"), "carol").unwrap();
        let bob = fs.association(Some("b"), "bob").unwrap();
        fs.charge(carol, 30.0, 0).unwrap();
        fs.charge(bob, 10.0, 0).unwrap();
        fs
    }

    #[test]
    fn rows_follow_the_tree_and_carry_each_nodes_numbers() {
        let rows = sample(FairshareAlgorithm::FairTree).report(0);
        let names: Vec<(&str, Option<&str>, u32)> = rows
            .iter()
            .map(|r| (r.account.as_str(), r.user.as_deref(), r.depth))
            .collect();
        assert_eq!(
            names,
            vec![
                ("a", None, 1),
                ("sub", None, 2),
                ("sub", Some("carol"), 3),
                ("b", None, 1),
                ("b", Some("bob"), 2)
            ]
        );
        let carol = &rows[2];
        assert_eq!(
            (carol.raw_shares, carol.raw_usage, carol.norm_usage),
            (2, 30.0, 0.75)
        );
        assert_eq!(carol.norm_shares, 1.0);
        assert_eq!(carol.effective_usage, 1.0);
        assert_eq!(carol.level_fs, Some(1.0));
        assert_eq!(rows[0].level_fs, Some(0.75 / 0.75));
        assert_eq!(rows[0].fairshare, None);
        assert!(
            rows.iter()
                .filter(|r| r.user.is_some())
                .all(|r| r.fairshare.is_some())
        );
    }

    #[test]
    fn classic_rows_have_machine_shares_and_no_level_fs() {
        let rows = sample(FairshareAlgorithm::Classic).report(0);
        assert!(rows.iter().all(|r| r.level_fs.is_none()));
        let carol = &rows[2];
        assert_eq!(carol.norm_shares, 0.75);
        assert_eq!(
            carol.fairshare,
            Some((-carol.effective_usage / 0.75f64).exp2())
        );
    }

    #[test]
    fn infinite_level_fs_serializes_as_inf() {
        let mut fs = sample(FairshareAlgorithm::FairTree);
        fs.association(Some("b"), "idle").unwrap();
        let rows = fs.report(0);
        let idle = rows
            .iter()
            .find(|r| r.user.as_deref() == Some("idle"))
            .unwrap();
        assert_eq!(idle.level_fs, Some(f64::INFINITY));
        let json = serde_json::to_value(idle).unwrap();
        assert_eq!(json["level_fs"], "inf");
        let classic =
            serde_json::to_value(&sample(FairshareAlgorithm::Classic).report(0)[0]).unwrap();
        assert!(classic["level_fs"].is_null());
    }

    #[test]
    fn the_table_aligns_columns_and_indents_sub_accounts() {
        let table = format_table(&sample(FairshareAlgorithm::FairTree).report(0));
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 2 + 5);
        assert!(lines[0].starts_with("Account "));
        assert!(lines[1].starts_with("-------"));
        assert!(lines[3].starts_with(" sub"));
        assert!(lines[4].starts_with("  sub") && lines[4].contains("carol"));
        let fairshare_column = lines[0].find("FairShare").unwrap() + "FairShare".len();
        assert!(
            lines
                .iter()
                .skip(2)
                .filter(|l| l.contains("carol") || l.contains("bob"))
                .all(|l| l.len() == fairshare_column)
        );
    }
}

/// The examples of this module's documentation from when it was public, as unit tests.
#[cfg(test)]
mod examples {
    #[test]
    fn share_row() {
        use crate::config::{AccountConfig, FairshareConfig};
        use crate::fairshare::FairShare;
        let accounts = [AccountConfig {
            name: "ml".into(),
            shares: 2,
            ..Default::default()
        }];
        let mut fs = FairShare::new(&accounts, &FairshareConfig::default()).unwrap();
        let alice = fs.association(Some("ml"), "alice").unwrap();
        fs.charge(alice, 60.0, 0).unwrap();
        let rows = fs.report(0);
        assert_eq!(rows[0].account, "ml");
        assert_eq!(rows[0].user, None);
        assert_eq!(rows[1].user.as_deref(), Some("alice"));
        assert_eq!(rows[1].raw_usage, 60.0);
        assert_eq!(rows[1].fairshare, Some(1.0));
        assert!(
            serde_json::to_string(&rows[1])
                .unwrap()
                .contains(r#""level_fs":1.0"#)
        );
    }

    #[test]
    fn format_table() {
        use crate::config::{AccountConfig, FairshareConfig};
        use crate::fairshare::{FairShare, format_table};
        let accounts = [AccountConfig {
            name: "ml".into(),
            shares: 2,
            ..Default::default()
        }];
        let mut fs = FairShare::new(&accounts, &FairshareConfig::default()).unwrap();
        fs.association(Some("ml"), "alice").unwrap();
        let table = format_table(&fs.report(0));
        let lines: Vec<&str> = table.lines().collect();
        assert!(lines[0].starts_with("Account"));
        assert!(lines[2].starts_with("ml "));
        assert!(
            lines[3].starts_with(" ml") && lines[3].contains("alice") && lines[3].contains("inf")
        );
    }
}
