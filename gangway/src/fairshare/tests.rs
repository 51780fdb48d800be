//! Tests of the engine as a whole: associations, the ledger along the tree, both algorithms
//! through the public API, and state round-trips.

use super::*;
use crate::config::ResetPeriod;
use crate::config::{AccountConfig, FairshareAlgorithm, FairshareConfig};

const WEEK_MS: u64 = 604_800_000;

/// An account for the fair-share tests of this module and its siblings: `users` with their
/// shares.
pub(super) fn account(
    name: &str,
    parent: Option<&str>,
    shares: u32,
    users: &[(&str, u32)],
) -> AccountConfig {
    AccountConfig {
        name: name.to_owned(),
        parent: parent.map(str::to_owned),
        shares,
        users: users.iter().map(|&(u, s)| (u.to_owned(), s)).collect(),
    }
}

/// [`account`] with one share for each user.
pub(super) fn account_of(
    name: &str,
    parent: Option<&str>,
    shares: u32,
    users: &[&str],
) -> AccountConfig {
    let users: Vec<(&str, u32)> = users.iter().map(|&u| (u, 1)).collect();
    account(name, parent, shares, &users)
}

fn engine(accounts: &[AccountConfig], algorithm: FairshareAlgorithm) -> FairShare {
    FairShare::new(
        accounts,
        &FairshareConfig {
            half_life_ms: WEEK_MS,
            algorithm,
            ..Default::default()
        },
    )
    .unwrap()
}

fn row<'a>(rows: &'a [ShareRow], account: &str, user: Option<&str>) -> &'a ShareRow {
    rows.iter()
        .find(|r| r.account == account && r.user.as_deref() == user)
        .unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn a_charge_reaches_every_ancestor_and_nothing_else() {
    let mut fs = engine(
        &[
            account("top", None, 1, &[]),
            account("mid", Some("top"), 1, &[]),
            account("other", None, 1, &[]),
        ],
        FairshareAlgorithm::FairTree,
    );
    let deep = fs.association(Some("mid"), "u").unwrap();
    let idle = fs.association(Some("other"), "v").unwrap();
    fs.charge(deep, 40.0, 1_000).unwrap();
    assert_eq!(fs.usage(deep, 1_000), Some(40.0));
    assert_eq!(fs.account_usage("mid", 1_000), Some(40.0));
    assert_eq!(fs.account_usage("top", 1_000), Some(40.0));
    assert_eq!(fs.account_usage("other", 1_000), Some(0.0));
    assert_eq!(fs.usage(idle, 1_000), Some(0.0));
    // Lazy: only the charged path was brought up to date.
    let stamp = |name: &str| {
        fs.tree
            .nodes
            .iter()
            .find(|n| n.name == name)
            .unwrap()
            .usage
            .at_ms
    };
    assert_eq!(
        (stamp("u"), stamp("mid"), stamp("top"), stamp("root")),
        (1_000, 1_000, 1_000, 1_000)
    );
    assert_eq!((stamp("other"), stamp("v")), (0, 0));
}

#[test]
fn usage_after_a_half_life_is_halved_at_every_level() {
    let mut fs = engine(&[account("a", None, 1, &[])], FairshareAlgorithm::FairTree);
    let u = fs.association(Some("a"), "u").unwrap();
    fs.charge(u, 100.0, 5_000).unwrap();
    let later = 5_000 + WEEK_MS;
    assert!(close(fs.usage(u, later).unwrap(), 50.0));
    assert!(close(fs.account_usage("a", later).unwrap(), 50.0));
    assert!(close(fs.report(later)[0].raw_usage, 50.0));
    // Reading did not decay anything for good: the value at the charge time is still there.
    assert_eq!(fs.usage(u, 5_000), Some(100.0));
    // A second charge adds to the decayed value.
    fs.charge(u, 10.0, later).unwrap();
    assert!(close(fs.usage(u, later + 2 * WEEK_MS).unwrap(), 60.0 / 4.0));
}

#[test]
fn charging_tick_by_tick_matches_one_charge_at_the_end_without_decay_between() {
    // Ticks charge at the end of each interval; splitting the waits between charges changes
    // nothing (decay exactness through the whole tree).
    let accounts = [account("a", None, 1, &[]), account("b", Some("a"), 2, &[])];
    let mut one = engine(&accounts, FairshareAlgorithm::Classic);
    let mut many = engine(&accounts, FairshareAlgorithm::Classic);
    let (u1, u2) = (
        one.association(Some("b"), "u").unwrap(),
        many.association(Some("b"), "u").unwrap(),
    );
    one.charge(u1, 3.0, 0).unwrap();
    many.charge(u2, 3.0, 0).unwrap();
    let end = 3 * WEEK_MS + 12_345;
    for k in 1..=97u64 {
        many.charge(u2, 0.0, end * k / 97).unwrap();
    }
    let (a, b) = (
        one.account_usage("a", end).unwrap(),
        many.account_usage("a", end).unwrap(),
    );
    assert!((a - b).abs() <= 1e-9 * a);
}

#[test]
fn bad_charges_are_refused_and_change_nothing() {
    let mut fs = engine(&[account("a", None, 1, &[])], FairshareAlgorithm::FairTree);
    let u = fs.association(Some("a"), "u").unwrap();
    let before = fs.clone();
    assert!(fs.charge(u, f64::NAN, 0).is_err());
    assert!(fs.charge(u, f64::INFINITY, 0).is_err());
    assert!(fs.charge(u, -0.5, 0).is_err());
    let stranger = AssocId::from_index(7);
    assert_eq!(
        fs.charge(stranger, 1.0, 0),
        Err(crate::error::FairShareError::UnknownAssociation(7))
    );
    assert_eq!(fs.usage(stranger, 0), None);
    assert_eq!(fs, before);
}

#[test]
fn the_implicit_default_account_counts_only_once_used() {
    let mut fs = engine(
        &[account("a", None, 1, &[("u", 1)])],
        FairshareAlgorithm::Classic,
    );
    let rows = fs.report(0);
    assert_eq!(rows.len(), 2);
    assert_eq!(row(&rows, "a", Some("u")).norm_shares, 1.0);

    let anon = fs.association(None, "someone").unwrap();
    assert_eq!(fs.find_association(None, "someone"), Some(anon));
    let rows = fs.report(0);
    let default = row(&rows, "default", None);
    assert_eq!(
        (default.raw_shares, default.depth, default.norm_shares),
        (1, 1, 0.5)
    );
    assert_eq!(row(&rows, "a", Some("u")).norm_shares, 0.5);
    assert_eq!(row(&rows, "default", Some("someone")).raw_shares, 1);

    fs.charge(anon, 10.0, 0).unwrap();
    assert_eq!(fs.account_usage("default", 0), Some(10.0));
}

#[test]
fn an_unlisted_user_gets_one_share_beside_the_listed_ones() {
    let mut fs = engine(
        &[account("a", None, 1, &[("listed", 3)])],
        FairshareAlgorithm::Classic,
    );
    let newcomer = fs.association(Some("a"), "newcomer").unwrap();
    let listed = fs.association(Some("a"), "listed").unwrap();
    assert_eq!((listed.index(), newcomer.index()), (0, 1));
    let rows = fs.report(0);
    assert_eq!(row(&rows, "a", Some("listed")).raw_shares, 3);
    assert_eq!(row(&rows, "a", Some("newcomer")).raw_shares, 1);
    assert_eq!(row(&rows, "a", Some("newcomer")).norm_shares, 0.25);
}

#[test]
fn configuration_errors_name_the_field() {
    let cases = [
        (
            vec![account("a", None, 1, &[]), account("a", None, 2, &[])],
            "accounts[1].name: duplicate account \"a\"",
        ),
        (
            vec![account("a", Some("ghost"), 1, &[])],
            "accounts[0].parent: unknown account \"ghost\"",
        ),
        (
            vec![
                account("a", Some("b"), 1, &[]),
                account("b", Some("a"), 1, &[]),
            ],
            "accounts[0].parent: cycle \"a\" -> \"b\" -> \"a\"",
        ),
        (
            vec![account("a", None, 0, &[])],
            "accounts[0].shares: must be at least 1",
        ),
        (
            vec![account("a", None, 1, &[("x", 0)])],
            "accounts[0].users.x: shares must be at least 1",
        ),
    ];
    for (accounts, message) in cases {
        assert_eq!(
            FairShare::new(&accounts, &FairshareConfig::default())
                .unwrap_err()
                .to_string(),
            message
        );
    }
}

/// classic_fair_share.html, "Example", through the public API: users 1, 2 and 4 charge 20, 25
/// and 25. Here all usage is these users', so normalised usage is over 70 (the page normalises
/// over a machine total of 1.0 with 0.3 unattributed; classic.rs checks the page's own numbers).
/// Expected values follow the page's definitions: U_E = U_A + (U_E(parent) − U_A)·S/S_siblings,
/// F = 2^(−U_E/S).
#[test]
fn slurm_classic_example_through_the_api() {
    let mut fs = engine(
        &[
            account("A", None, 40, &[]),
            account("D", None, 60, &[]),
            account("B", Some("A"), 30, &[("user1", 1)]),
            account("C", Some("A"), 10, &[("user2", 1), ("user3", 1)]),
            account("E", Some("D"), 25, &[("user4", 1)]),
            account("F", Some("D"), 35, &[("user5", 1)]),
        ],
        FairshareAlgorithm::Classic,
    );
    for (acct, user, amount) in [
        ("B", "user1", 20.0),
        ("C", "user2", 25.0),
        ("E", "user4", 25.0),
    ] {
        let assoc = fs.association(Some(acct), user).unwrap();
        fs.charge(assoc, amount, 0).unwrap();
    }
    let (a, d) = (45.0 / 70.0, 25.0 / 70.0);
    let (b, c) = (
        20.0 / 70.0 + (a - 20.0 / 70.0) * 0.75,
        25.0 / 70.0 + (a - 25.0 / 70.0) * 0.25,
    );
    let (e, f) = (d, d * 35.0 / 60.0);
    let expected = [
        ("user1", b, 0.3),
        ("user2", 25.0 / 70.0 + (c - 25.0 / 70.0) * 0.5, 0.05),
        ("user3", c * 0.5, 0.05),
        ("user4", e, 0.25),
        ("user5", f, 0.35),
    ];
    let rows = fs.report(0);
    let factors = fs.compute_factors(0);
    for (user, ue, s) in expected {
        let r = rows
            .iter()
            .find(|r| r.user.as_deref() == Some(user))
            .unwrap();
        assert!(
            close(r.effective_usage, ue),
            "{user}: {} vs {ue}",
            r.effective_usage
        );
        assert!(close(r.norm_shares, s), "{user}");
        let assoc = fs.find_association(Some(&r.account), user).unwrap();
        assert!(
            close(factors.get(assoc).unwrap(), (-ue / s).exp2()),
            "{user}"
        );
        assert_eq!(r.fairshare, factors.get(assoc));
    }
}

/// The shared scenario `fairshare_recent_usage_ranks_lower`: team A ran 16 GPUs for 70 s, team B
/// nothing; a second later B's job must get the higher fair-share factor, under both algorithms.
#[test]
fn recent_usage_ranks_lower_under_both_algorithms() {
    for algorithm in [FairshareAlgorithm::FairTree, FairshareAlgorithm::Classic] {
        let mut fs = engine(
            &[
                account("teama", None, 1, &[]),
                account("teamb", None, 1, &[]),
            ],
            algorithm,
        );
        let a = fs.association(Some("teama"), "").unwrap();
        fs.charge(a, 16.0 * 70.0, 70_000).unwrap();
        let b = fs.association(Some("teamb"), "").unwrap();
        let factors = fs.compute_factors(71_000);
        assert!(
            factors.get(b).unwrap() > factors.get(a).unwrap(),
            "{algorithm:?}"
        );
    }
}

#[test]
fn old_usage_weighs_less_than_recent_usage() {
    // Equal charges ten half-lives apart: the old one is worth 1/1024 of the new one.
    let mut fs = engine(
        &[account("x", None, 1, &[]), account("y", None, 1, &[])],
        FairshareAlgorithm::Classic,
    );
    let x = fs.association(Some("x"), "u").unwrap();
    let y = fs.association(Some("y"), "v").unwrap();
    fs.charge(x, 1_000.0, 0).unwrap();
    assert_eq!(fs.compute_factors(0).get(y), Some(1.0));
    fs.charge(y, 1_000.0, 10 * WEEK_MS).unwrap();
    let factors = fs.compute_factors(10 * WEEK_MS);
    let ux = 1.0 / 1025.0;
    assert!(close(factors.get(x).unwrap(), (-ux / 0.5f64).exp2()));
    assert!(close(
        factors.get(y).unwrap(),
        (-(1.0 - ux) / 0.5f64).exp2()
    ));
}

#[test]
fn the_state_round_trips_through_json() {
    let mut fs = FairShare::new(
        &[
            account("a", None, 2, &[("u", 3)]),
            account("b", Some("a"), 1, &[]),
        ],
        &FairshareConfig {
            reset: ResetPeriod::Weekly,
            ..Default::default()
        },
    )
    .unwrap();
    let u = fs.association(Some("a"), "u").unwrap();
    let v = fs.association(Some("b"), "v").unwrap();
    fs.association(None, "anon").unwrap();
    fs.charge(u, 1.0 / 3.0, 1_234).unwrap();
    fs.charge(v, 7.25, 99_999).unwrap();
    let json = serde_json::to_string(&fs).unwrap();
    let restored: FairShare = serde_json::from_str(&json).unwrap();
    assert_eq!(restored, fs);
    assert_eq!(
        restored.compute_factors(200_000),
        fs.compute_factors(200_000)
    );
    assert_eq!(restored.report(200_000), fs.report(200_000));
}

#[test]
fn many_accounts_and_users_are_ranked_without_ties_when_usage_differs() {
    let accounts: Vec<AccountConfig> = (0..50)
        .map(|i| account(&format!("acct{i}"), None, 1 + i % 3, &[]))
        .collect();
    let mut fs = engine(&accounts, FairshareAlgorithm::FairTree);
    for i in 0..50u32 {
        for j in 0..4u32 {
            let assoc = fs
                .association(Some(&format!("acct{i}")), &format!("user{j}"))
                .unwrap();
            fs.charge(assoc, f64::from(1 + i * 4 + j) * 1.5, 0).unwrap();
        }
    }
    let mut factors: Vec<f64> = fs.compute_factors(0).iter().map(|(_, f)| f).collect();
    factors.sort_by(f64::total_cmp);
    let expected: Vec<f64> = (1..=200).map(|r| f64::from(r) / 200.0).collect();
    assert_eq!(factors, expected);
}

#[test]
fn reconfiguring_carries_decayed_usage_by_name_including_the_default_account() {
    let mut fs = engine(&[account("a", None, 1, &[])], FairshareAlgorithm::FairTree);
    let u = fs.association(Some("a"), "u").unwrap();
    let anon = fs.association(None, "anon").unwrap();
    fs.charge(u, 8.0, 0).unwrap();
    fs.charge(anon, 2.0, 0).unwrap();
    let config = FairshareConfig {
        half_life_ms: WEEK_MS,
        algorithm: FairshareAlgorithm::Classic,
        ..Default::default()
    };
    // One half-life later, under a tree where "a" lists "u" with shares 5.
    let next = fs
        .reconfigured(&[account("a", None, 1, &[("u", 5)])], &config, WEEK_MS)
        .unwrap();
    assert_eq!(next.algorithm(), FairshareAlgorithm::Classic);
    let u = next.find_association(Some("a"), "u").unwrap();
    let anon = next.find_association(None, "anon").unwrap();
    assert!(close(next.usage(u, WEEK_MS).unwrap(), 4.0));
    assert!(close(next.usage(anon, WEEK_MS).unwrap(), 1.0));
    assert!(close(next.account_usage("default", WEEK_MS).unwrap(), 1.0));
    let rows = next.report(WEEK_MS);
    assert_eq!(row(&rows, "a", Some("u")).raw_shares, 5);
}

#[test]
fn factors_are_computed_once_a_time_and_forgotten_when_the_ledger_changes() {
    let accounts = [account_of("ml", None, 1, &["a", "b"])];
    let mut fs = engine(&accounts, FairshareAlgorithm::FairTree);
    let a = fs.association(Some("ml"), "a").unwrap();
    let b = fs.association(Some("ml"), "b").unwrap();
    fs.charge(a, 100.0, 0).unwrap();
    let first = fs.factors_at(1_000);
    assert_eq!(*first, fs.compute_factors(1_000));
    assert!(
        Arc::ptr_eq(&first, &fs.factors_at(1_000)),
        "kept for its time"
    );
    assert_eq!(*fs.factors_at(2_000), fs.compute_factors(2_000));
    // A copy of the engine (a what-if trial's) shares what was computed.
    assert!(Arc::ptr_eq(&first, &fs.clone().factors_at(1_000)));
    // A charge forgets them: b now used more than a.
    fs.charge(b, 500.0, 1_000).unwrap();
    let after = fs.factors_at(1_000);
    assert_eq!(*after, fs.compute_factors(1_000));
    assert_ne!(*after, *first);
    assert!(after.get(a) > after.get(b));
    // So does a new association.
    let c = fs.association(Some("ml"), "c").unwrap();
    assert_eq!(
        fs.factors_at(1_000).get(c),
        fs.compute_factors(1_000).get(c)
    );
    assert!(fs.factors_at(1_000).get(c).is_some());
}
