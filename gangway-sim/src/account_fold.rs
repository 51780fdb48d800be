//! Many accounts folded into a few: the table and the plot of `gangway simulate` show the
//! [`DEFAULT_SHOWN`] accounts that used the most and one "others" for the rest, so that a
//! trace with hundreds of users (KTH has about 250) prints a table and a picture a person can
//! read. The JSON report keeps every account.
//!
//! ```
//! use gangway_sim::account_fold::AccountFold;
//! use gangway_sim::metrics::{AccountShare, Metrics};
//! use gangway_sim::SimResult;
//! let mut metrics = Metrics::of(&SimResult::default());
//! metrics.accounts = (1..=5)
//!     .map(|i| AccountShare { account: format!("u{i}"), hours: i as f64, share: i as f64 / 15.0, target: None })
//!     .collect();
//! let fold = AccountFold::of(&[&metrics], Some(2));
//! let folded = fold.apply(&metrics);
//! let names: Vec<&str> = folded.accounts.iter().map(|a| a.account.as_str()).collect();
//! assert_eq!(names, ["u5", "u4", "3 others"]);
//! assert_eq!(folded.accounts[2].hours, 6.0);
//! ```

use crate::metrics::{AccountShare, Metrics};

/// Accounts shown by name when folding, unless told otherwise (`--all-accounts` shows all).
pub const DEFAULT_SHOWN: usize = 10;

/// Which accounts are shown by name; the others are summed into one row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccountFold {
    /// The accounts shown, most used first; `None`: all, in their own order (nothing folded).
    shown: Option<Vec<String>>,
}

impl AccountFold {
    /// The fold of these runs' accounts: the `shown` accounts with the most resource-hours
    /// over all runs (ties by name), or every account when `shown` is `None` or when folding
    /// would hide fewer than two (one "others" row for a single account says nothing).
    pub fn of(runs: &[&Metrics], shown: Option<usize>) -> AccountFold {
        let Some(keep) = shown else {
            return AccountFold { shown: None };
        };
        let mut usage: Vec<(&str, f64)> = Vec::new();
        for metrics in runs {
            for account in &metrics.accounts {
                match usage.iter_mut().find(|(name, _)| *name == account.account) {
                    Some((_, hours)) => *hours += account.hours,
                    None => usage.push((&account.account, account.hours)),
                }
            }
        }
        if usage.len() < keep + 2 {
            return AccountFold { shown: None };
        }
        usage.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        AccountFold {
            shown: Some(
                usage
                    .into_iter()
                    .take(keep)
                    .map(|(name, _)| name.to_string())
                    .collect(),
            ),
        }
    }

    /// Whether some accounts are folded.
    pub fn folds(&self) -> bool {
        self.shown.is_some()
    }

    /// `metrics` with its whole-run and contended shares folded: the shown accounts, then
    /// `N others` with the sum of the rest (their hours, shares and targets; no target when
    /// none of them has one). Every other metric, Jain's index included, is unchanged.
    pub fn apply(&self, metrics: &Metrics) -> Metrics {
        Metrics {
            accounts: self.fold(&metrics.accounts),
            contended_shares: self.fold(&metrics.contended_shares),
            ..metrics.clone()
        }
    }

    fn fold(&self, accounts: &[AccountShare]) -> Vec<AccountShare> {
        let Some(shown) = &self.shown else {
            return accounts.to_vec();
        };
        let mut folded: Vec<AccountShare> = shown
            .iter()
            .map(|name| {
                accounts
                    .iter()
                    .find(|a| a.account == *name)
                    .cloned()
                    .unwrap_or_else(|| AccountShare {
                        account: name.clone(),
                        hours: 0.0,
                        share: 0.0,
                        target: None,
                    })
            })
            .collect();
        let rest: Vec<&AccountShare> = accounts
            .iter()
            .filter(|a| !shown.contains(&a.account))
            .collect();
        let targets: Vec<f64> = rest.iter().filter_map(|a| a.target).collect();
        folded.push(AccountShare {
            account: format!("{} others", rest.len()),
            hours: rest.iter().map(|a| a.hours).sum(),
            share: rest.iter().map(|a| a.share).sum(),
            target: (!targets.is_empty()).then(|| targets.iter().sum()),
        });
        folded
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SimResult;

    fn metrics(accounts: &[(&str, f64)]) -> Metrics {
        let total: f64 = accounts.iter().map(|a| a.1).sum();
        let share = |(name, hours): &(&str, f64)| AccountShare {
            account: name.to_string(),
            hours: *hours,
            share: hours / total,
            target: Some(0.1),
        };
        Metrics {
            accounts: accounts.iter().map(share).collect(),
            contended_shares: accounts.iter().rev().map(share).collect(),
            ..Metrics::of(&SimResult::default())
        }
    }

    #[test]
    fn few_accounts_are_not_folded() {
        let m = metrics(&[("a", 1.0), ("b", 2.0), ("c", 3.0)]);
        // Folding would hide one account: shown as it is, in its own order.
        let fold = AccountFold::of(&[&m], Some(2));
        assert!(!fold.folds());
        assert_eq!(fold.apply(&m), m);
        assert!(!AccountFold::of(&[&m], None).folds());
    }

    #[test]
    fn the_most_used_over_all_runs_are_shown_and_the_rest_summed() {
        let first = metrics(&[("a", 5.0), ("b", 1.0), ("c", 1.0), ("d", 1.0), ("e", 2.0)]);
        let second = metrics(&[("a", 1.0), ("b", 9.0), ("c", 1.0), ("d", 1.0), ("e", 2.0)]);
        let fold = AccountFold::of(&[&first, &second], Some(2));
        let folded = fold.apply(&first);
        let names: Vec<&str> = folded.accounts.iter().map(|a| a.account.as_str()).collect();
        assert_eq!(names, ["b", "a", "3 others"]);
        assert_eq!(folded.accounts[2].hours, 4.0);
        assert!((folded.accounts[2].share - 0.4).abs() < 1e-9);
        assert!((folded.accounts[2].target.unwrap() - 0.3).abs() < 1e-9);
        // The contended shares (in another order) fold to the same rows.
        let names: Vec<&str> = folded
            .contended_shares
            .iter()
            .map(|a| a.account.as_str())
            .collect();
        assert_eq!(names, ["b", "a", "3 others"]);
        assert_eq!(folded.jain_index, first.jain_index);
    }

    #[test]
    fn ties_go_by_name() {
        let m = metrics(&[("z", 1.0), ("y", 1.0), ("x", 1.0), ("w", 1.0)]);
        let folded = AccountFold::of(&[&m], Some(1)).apply(&m);
        assert_eq!(folded.accounts[0].account, "w");
        assert_eq!(folded.accounts[1].account, "3 others");
    }
}
