//! Unit tests of the quota tree: Kueue's fit rules, the public scenarios' quota pictures,
//! hierarchical pools, per-user caps, keys, invariants and configuration errors.

use indexmap::IndexMap;
use proptest::prelude::*;

use super::*;
use crate::Milli;
use crate::config::{ClusterConfig, CohortConfig, QueueConfig, QuotaConfig};

fn units(n: u64) -> Milli {
    Milli::from_units(n)
}

/// A quota entry: nominal, borrowing limit, lending limit in whole units.
fn q(nominal: u64, borrowing: Option<u64>, lending: Option<u64>) -> QuotaConfig {
    QuotaConfig {
        nominal: units(nominal),
        borrowing_limit: borrowing.map(units),
        lending_limit: lending.map(units),
    }
}

fn quota(entries: &[(&str, QuotaConfig)]) -> IndexMap<String, QuotaConfig> {
    entries
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

fn queue(name: &str, cohort: Option<&str>, entries: &[(&str, QuotaConfig)]) -> QueueConfig {
    QueueConfig {
        name: name.into(),
        cohort: cohort.map(Into::into),
        quota: quota(entries),
        ..Default::default()
    }
}

fn cohort(name: &str, parent: Option<&str>, entries: &[(&str, QuotaConfig)]) -> CohortConfig {
    CohortConfig {
        name: name.into(),
        parent: parent.map(Into::into),
        quota: quota(entries),
        fair_sharing: None,
    }
}

fn cpus(tree: &QuotaTree, n: u64) -> QuotaVec {
    tree.demand(n * 1000, 0, &[])
}

fn gpus(tree: &QuotaTree, model: &str, n: u64) -> QuotaVec {
    tree.demand(0, 0, &[(model, n * 1000)])
}

fn id(tree: &QuotaTree, name: &str) -> QueueId {
    tree.queue_id(name).unwrap()
}

/// Every node's usage, to compare states.
fn usages(tree: &QuotaTree) -> Vec<QuotaVec> {
    tree.usage.clone()
}

#[test]
fn within_nominal_without_cohort() {
    let queues = [queue("a", None, &[("cpu", q(4, None, None))])];
    let mut tree = QuotaTree::new(&[], &queues, &[]).unwrap();
    let a = id(&tree, "a");
    assert_eq!(tree.fit(a, &cpus(&tree, 3)), Fit::WithinNominal);
    tree.add_usage(a, &cpus(&tree, 3));
    assert_eq!(tree.fit(a, &cpus(&tree, 1)), Fit::WithinNominal);
    assert_eq!(tree.fit(a, &cpus(&tree, 2)), Fit::NoFit);
    assert_eq!(tree.available(a, KeyId::CPU), 1000);
    assert!(!tree.is_borrowing(a));
    tree.check_invariants().unwrap();
}

#[test]
fn borrowing_up_to_borrowing_limit() {
    let cohorts = [cohort("co", None, &[])];
    let queues = [
        queue("a", Some("co"), &[("cpu", q(4, Some(2), None))]),
        queue("b", Some("co"), &[("cpu", q(10, None, None))]),
    ];
    let mut tree = QuotaTree::new(&cohorts, &queues, &[]).unwrap();
    let a = id(&tree, "a");
    assert_eq!(tree.fit(a, &cpus(&tree, 6)), Fit::Borrowing);
    assert_eq!(tree.fit(a, &cpus(&tree, 7)), Fit::NoFit);
    tree.add_usage(a, &cpus(&tree, 5));
    assert!(tree.is_borrowing(a));
    assert!(tree.above_nominal(a, KeyId::CPU));
    assert!(tree.fits(a, &cpus(&tree, 1)));
    assert!(!tree.fits(a, &cpus(&tree, 2)));
    // b's quota shrinks by what a borrowed: 10 + 4 − 5 = 9 left.
    let b = id(&tree, "b");
    assert_eq!(tree.available(b, KeyId::CPU), 9000);
    assert_eq!(tree.cohort_usage("co").unwrap()[KeyId::CPU], 5000);
    tree.check_invariants().unwrap();
}

#[test]
fn borrowing_blocked_by_lending_limit() {
    // lending_limit_blocks.json: lend-a keeps 1 of its 3 cpus, so lend-b reaches at most 4.
    let cohorts = [cohort("co", None, &[])];
    let queues = [
        queue("lend-a", Some("co"), &[("cpu", q(3, None, Some(2)))]),
        queue("lend-b", Some("co"), &[("cpu", q(2, None, Some(2)))]),
    ];
    let mut tree = QuotaTree::new(&cohorts, &queues, &[]).unwrap();
    let b = id(&tree, "lend-b");
    tree.add_usage(b, &cpus(&tree, 2)); // b1
    assert_eq!(tree.fit(b, &cpus(&tree, 3)), Fit::NoFit); // b2: 2 + 3 = 5 > 4
    assert_eq!(tree.fit(b, &cpus(&tree, 2)), Fit::Borrowing); // b3: 2 + 2 = 4
    assert!(!tree.could_ever_fit(b, &cpus(&tree, 5)));
    tree.add_usage(b, &cpus(&tree, 2));
    // lend-a's guaranteed cpu is still its own.
    let a = id(&tree, "lend-a");
    assert_eq!(tree.available(a, KeyId::CPU), 1000);
    tree.check_invariants().unwrap();
}

#[test]
fn reclaim_from_borrower_needs_the_borrower_to_give_back() {
    // reclaim_from_borrower.json: c2 runs 9 of its 6 cpus, so c1 (using 3) cannot add 3.
    let cohorts = [cohort("co", None, &[])];
    let queues = [
        queue("c1", Some("co"), &[("cpu", q(6, None, None))]),
        queue("c2", Some("co"), &[("cpu", q(6, None, None))]),
    ];
    let mut tree = QuotaTree::new(&cohorts, &queues, &[]).unwrap();
    let (c1, c2) = (id(&tree, "c1"), id(&tree, "c2"));
    let (low, mid, high) = (cpus(&tree, 3), cpus(&tree, 3), cpus(&tree, 6));
    assert_eq!(tree.fit(c1, &low), Fit::WithinNominal);
    tree.add_usage(c1, &low);
    assert_eq!(tree.fit(c2, &mid), Fit::WithinNominal);
    tree.add_usage(c2, &mid);
    assert_eq!(tree.fit(c2, &high), Fit::Borrowing);
    tree.add_usage(c2, &high);

    let incoming = cpus(&tree, 3);
    assert_eq!(tree.fit(c1, &incoming), Fit::NoFit);
    assert!(
        tree.within_nominal(c1, &incoming),
        "c1 may reclaim: it stays within nominal"
    );
    assert!(tree.is_borrowing(c2));
    assert!(tree.above_nominal_in(c2, &incoming));
    assert!(!tree.above_nominal_in(c1, &incoming));

    // Tentatively stop `mid`: the incoming job fits; undoing restores the state exactly.
    let before = usages(&tree);
    tree.remove_usage(c2, &mid);
    assert_eq!(tree.fit(c1, &incoming), Fit::WithinNominal);
    tree.add_usage(c2, &mid);
    assert_eq!(usages(&tree), before);
    tree.check_invariants().unwrap();
}

#[test]
fn hierarchical_cohort_pool_is_shared_below_it() {
    // org holds 4 GPUs of its own; q1 and q2 (2 each) sit in team cohorts below it.
    let cohorts = [
        cohort("org", None, &[("gpu", q(4, None, None))]),
        cohort("team1", Some("org"), &[]),
        cohort("team2", Some("org"), &[]),
    ];
    let queues = [
        queue("q1", Some("team1"), &[("gpu", q(2, None, None))]),
        queue("q2", Some("team2"), &[("gpu", q(2, None, None))]),
    ];
    let mut tree = QuotaTree::new(&cohorts, &queues, &[]).unwrap();
    let (q1, q2) = (id(&tree, "q1"), id(&tree, "q2"));
    assert_eq!(tree.available(q1, KeyId::GPU), 8000);
    assert_eq!(tree.fit(q1, &gpus(&tree, "a100", 8)), Fit::Borrowing);
    assert_eq!(tree.fit(q1, &gpus(&tree, "a100", 9)), Fit::NoFit);
    tree.add_usage(q1, &gpus(&tree, "a100", 6));
    assert_eq!(tree.cohort_usage("team1").unwrap()[KeyId::GPU], 6000);
    assert_eq!(tree.cohort_usage("org").unwrap()[KeyId::GPU], 6000);
    assert!(tree.cohort_usage("team2").unwrap().is_zero());
    assert_eq!(tree.available(q2, KeyId::GPU), 2000);
    tree.check_invariants().unwrap();
}

#[test]
fn cohort_lending_limit_keeps_part_of_the_subtree_pool() {
    // team2 lends at most 1 of its subtree's 2 GPUs to org.
    let cohorts = [
        cohort("org", None, &[("gpu", q(4, None, None))]),
        cohort("team1", Some("org"), &[]),
        cohort("team2", Some("org"), &[("gpu", q(0, None, Some(1)))]),
    ];
    let queues = [
        queue("q1", Some("team1"), &[("gpu", q(2, None, None))]),
        queue("q2", Some("team2"), &[("gpu", q(2, None, None))]),
    ];
    let mut tree = QuotaTree::new(&cohorts, &queues, &[]).unwrap();
    let (q1, q2) = (id(&tree, "q1"), id(&tree, "q2"));
    assert_eq!(tree.available(q1, KeyId::GPU), 7000);
    tree.add_usage(q1, &gpus(&tree, "a100", 7));
    // q2 lent all its nominal to team2, which kept 1: q2 gets 1 now and must reclaim the rest.
    assert_eq!(tree.fit(q2, &gpus(&tree, "a100", 1)), Fit::WithinNominal);
    assert_eq!(tree.fit(q2, &gpus(&tree, "a100", 2)), Fit::NoFit);
    assert!(tree.within_nominal(q2, &gpus(&tree, "a100", 2)));
    tree.check_invariants().unwrap();
}

#[test]
fn cohort_borrowing_limit_caps_the_whole_subtree() {
    let cohorts = [
        cohort("org", None, &[("gpu", q(10, None, None))]),
        cohort("team1", Some("org"), &[("gpu", q(0, Some(3), None))]),
    ];
    let queues = [queue("q1", Some("team1"), &[("gpu", q(2, None, None))])];
    let mut tree = QuotaTree::new(&cohorts, &queues, &[]).unwrap();
    let q1 = id(&tree, "q1");
    assert_eq!(tree.available(q1, KeyId::GPU), 5000);
    assert!(tree.could_ever_fit(q1, &gpus(&tree, "x", 5)));
    assert!(!tree.could_ever_fit(q1, &gpus(&tree, "x", 6)));
    tree.add_usage(q1, &gpus(&tree, "x", 5));
    assert!(!tree.fits(q1, &gpus(&tree, "x", 1)));
    tree.check_invariants().unwrap();
}

#[test]
fn guaranteed_part_stays_available_whatever_others_borrow() {
    let cohorts = [cohort("co", None, &[])];
    let queues = [
        queue("keeper", Some("co"), &[("cpu", q(5, None, Some(3)))]),
        queue("borrower", Some("co"), &[("cpu", q(1, None, None))]),
    ];
    let mut tree = QuotaTree::new(&cohorts, &queues, &[]).unwrap();
    let (keeper, borrower) = (id(&tree, "keeper"), id(&tree, "borrower"));
    assert_eq!(tree.available(borrower, KeyId::CPU), 4000);
    tree.add_usage(borrower, &cpus(&tree, 4));
    assert_eq!(tree.fit(keeper, &cpus(&tree, 2)), Fit::WithinNominal);
    assert_eq!(tree.fit(keeper, &cpus(&tree, 3)), Fit::NoFit);
    tree.check_invariants().unwrap();
}

#[test]
fn gpu_counts_every_model_and_gpu_model_one() {
    let queues = [queue(
        "a",
        None,
        &[("gpu", q(8, None, None)), ("gpu:a100", q(2, None, None))],
    )];
    let mut tree = QuotaTree::new(&[], &queues, &["a100".into(), "h100".into()]).unwrap();
    let a = id(&tree, "a");
    assert!(!tree.fits(a, &gpus(&tree, "a100", 3)));
    assert!(tree.fits(a, &gpus(&tree, "h100", 6)));
    tree.add_usage(a, &gpus(&tree, "a100", 2));
    tree.add_usage(a, &gpus(&tree, "h100", 6));
    assert!(!tree.fits(a, &gpus(&tree, "h100", 1)));
    // gpu:h100 is interned from the cluster's models: usage is reported per model.
    let h100 = tree.key("gpu:h100").unwrap();
    assert_eq!(tree.usage(a)[h100], 6000);
    assert_eq!(tree.usage(a)[KeyId::GPU], 8000);
    assert!(!tree.limits(a, h100));
    tree.check_invariants().unwrap();
}

#[test]
fn unlisted_resources_are_unlimited_and_stay_out_of_the_cohort() {
    let cohorts = [cohort("co", None, &[])];
    let queues = [
        queue("a", Some("co"), &[("gpu:a100", q(1, None, None))]),
        queue("b", Some("co"), &[("cpu", q(1, None, None))]),
    ];
    let mut tree = QuotaTree::new(&cohorts, &queues, &[]).unwrap();
    let a = id(&tree, "a");
    let big = tree.demand(1_000_000, 1_000_000, &[("h100", 64_000)]);
    assert_eq!(tree.fit(a, &big), Fit::WithinNominal);
    tree.add_usage(a, &big);
    assert!(tree.cohort_usage("co").unwrap().is_zero());
    assert_eq!(tree.available(id(&tree, "b"), KeyId::CPU), 1000);
    tree.check_invariants().unwrap();
}

#[test]
fn a_model_splits_demands_only_where_a_quota_or_cap_lists_it() {
    let models = ["a100".to_string(), "h100".to_string()];
    // Every model of the cluster has a key, but only listed keys limit.
    let plain = [queue("a", None, &[("gpu", q(8, None, None))])];
    assert!(
        !QuotaTree::new(&[], &plain, &models)
            .unwrap()
            .splits_models()
    );
    let by_model = [queue("a", None, &[("gpu:h100", q(8, None, None))])];
    assert!(
        QuotaTree::new(&[], &by_model, &models)
            .unwrap()
            .splits_models()
    );
    let mut capped = queue("a", None, &[("gpu", q(8, None, None))]);
    capped.max_per_user = [("gpu:a100".to_string(), units(4))].into_iter().collect();
    assert!(
        QuotaTree::new(&[], &[capped], &models)
            .unwrap()
            .splits_models()
    );
    let in_cohort = [cohort("co", None, &[("gpu:a100", q(8, None, None))])];
    let member = [queue("a", Some("co"), &[])];
    let tree = QuotaTree::new(&in_cohort, &member, &models).unwrap();
    assert!(tree.splits_models());
}

#[test]
fn per_user_caps_limit_what_one_user_holds() {
    let mut a = queue("a", None, &[("gpu", q(100, None, None))]);
    a.max_per_user = [
        ("gpu:a100".to_string(), units(4)),
        ("cpu".to_string(), units(8)),
    ]
    .into_iter()
    .collect();
    let b = queue("b", None, &[]);
    let tree = QuotaTree::new(&[], &[a, b], &[]).unwrap();
    let (qa, qb) = (id(&tree, "a"), id(&tree, "b"));
    assert!(tree.has_user_caps(qa));
    assert!(!tree.has_user_caps(qb));
    let mut held = QuotaVec::ZERO;
    held.add(&tree.demand(6000, 0, &[("a100", 3000)]));
    assert!(tree.fits_user(qa, &held, &tree.demand(2000, 0, &[("a100", 1000)])));
    assert!(!tree.fits_user(qa, &held, &tree.demand(3000, 0, &[])));
    assert!(!tree.fits_user(qa, &held, &tree.demand(0, 0, &[("a100", 2000)])));
    // Other models are not capped.
    assert!(tree.fits_user(qa, &held, &tree.demand(0, 0, &[("h100", 50_000)])));
    assert!(tree.fits_user(qb, &held, &tree.demand(1_000_000, 0, &[])));
}

#[test]
fn reconfigure_by_rebuilding_keeps_over_quota_usage() {
    let cohorts = [cohort("co", None, &[])];
    let before = [
        queue("a", Some("co"), &[("cpu", q(6, None, None))]),
        queue("b", Some("co"), &[("cpu", q(6, None, None))]),
    ];
    let mut tree = QuotaTree::new(&cohorts, &before, &[]).unwrap();
    let running = [("a", 4), ("a", 4), ("b", 2)];
    for (name, n) in running {
        let d = cpus(&tree, n);
        assert!(tree.fits(id(&tree, name), &d));
        tree.add_usage(id(&tree, name), &d);
    }
    let after = [
        queue("b", Some("co"), &[("cpu", q(2, None, None))]),
        queue("a", Some("co"), &[("cpu", q(3, None, None))]),
    ];
    let mut rebuilt = QuotaTree::new(&cohorts, &after, &[]).unwrap();
    for (name, n) in running {
        let d = cpus(&rebuilt, n);
        rebuilt.add_usage(id(&rebuilt, name), &d);
    }
    assert_eq!(rebuilt.usage(id(&rebuilt, "a"))[KeyId::CPU], 8000);
    rebuilt.check_totals().unwrap();
    let err = rebuilt.check_limits().unwrap_err();
    assert_eq!(
        err.message,
        r#"cohort "co": cpu usage 10 exceeds its quota 5"#
    );
    assert!(!rebuilt.fits(id(&rebuilt, "b"), &cpus(&rebuilt, 1)));
    // Jobs ending bring the tree back within its limits.
    rebuilt.remove_usage(id(&rebuilt, "a"), &cpus(&rebuilt, 4));
    rebuilt.remove_usage(id(&rebuilt, "a"), &cpus(&rebuilt, 4));
    rebuilt.check_invariants().unwrap();
    assert_eq!(
        rebuilt.fit(id(&rebuilt, "b"), &cpus(&rebuilt, 3)),
        Fit::Borrowing
    );
}

#[test]
fn invariants_report_inconsistent_cohort_totals() {
    let cohorts = [cohort("co", None, &[])];
    let queues = [queue("a", Some("co"), &[("cpu", q(2, None, None))])];
    let mut tree = QuotaTree::new(&cohorts, &queues, &[]).unwrap();
    tree.add_usage(id(&tree, "a"), &cpus(&tree, 1));
    tree.usage[1][KeyId::CPU] = 0;
    assert_eq!(
        tree.check_invariants().unwrap_err().message,
        r#"cohort "co": cpu usage 0 but its children use 1 above their guaranteed quota"#
    );
}

#[test]
fn invariants_report_usage_beyond_borrowing_limit() {
    let cohorts = [cohort("co", None, &[])];
    let queues = [
        queue("a", Some("co"), &[("cpu", q(1, Some(1), None))]),
        queue("b", Some("co"), &[("cpu", q(5, None, None))]),
    ];
    let mut tree = QuotaTree::new(&cohorts, &queues, &[]).unwrap();
    tree.add_usage(id(&tree, "a"), &cpus(&tree, 3));
    assert_eq!(
        tree.check_invariants().unwrap_err().message,
        r#"queue "a": cpu usage 3 exceeds its quota 1 + borrowing_limit 1"#
    );
}

#[test]
fn config_errors_name_the_field() {
    let err = |cohorts: &[CohortConfig], queues: &[QueueConfig]| {
        QuotaTree::new(cohorts, queues, &[])
            .unwrap_err()
            .to_string()
    };
    let co = cohort("co", None, &[]);
    assert_eq!(
        err(&[], &[queue("a", None, &[]), queue("a", None, &[])]),
        r#"queues[1].name: duplicate queue "a""#
    );
    assert_eq!(
        err(&[co.clone(), co.clone()], &[]),
        r#"cohorts[1].name: duplicate cohort "co""#
    );
    assert_eq!(
        err(
            std::slice::from_ref(&co),
            &[queue("a", Some("co"), &[]), queue("b", Some("x"), &[])]
        ),
        r#"queues[1].cohort: unknown cohort "x""#
    );
    assert_eq!(
        err(&[cohort("a", Some("nope"), &[])], &[]),
        r#"cohorts[0].parent: unknown cohort "nope""#
    );
    assert_eq!(
        err(
            &[
                co.clone(),
                cohort("a", Some("b"), &[]),
                cohort("b", Some("a"), &[])
            ],
            &[]
        ),
        r#"cohorts[1].parent: cycle of cohorts "a" -> "b" -> "a""#
    );
    assert!(
        err(&[], &[queue("a", None, &[("disk", q(1, None, None))])])
            .starts_with(r#"queues[0].quota: unknown resource key "disk""#)
    );
    assert!(
        err(&[cohort("co", None, &[("gpus", q(1, None, None))])], &[])
            .starts_with(r#"cohorts[0].quota: unknown resource key "gpus""#)
    );
    let mut capped = queue("a", None, &[]);
    capped.max_per_user.insert("gpu:".into(), units(1));
    assert!(
        err(&[], &[capped]).starts_with(r#"queues[0].max_per_user: unknown resource key "gpu:""#)
    );
    assert_eq!(
        err(&[], &[queue("a", None, &[("cpu", q(2, None, Some(3)))])]),
        "queues[0].quota.cpu.lending_limit: 3 is more than the nominal quota 2"
    );
}

#[test]
fn any_gpu_model_key_is_accepted_and_cluster_models_fill_spare_keys() {
    let queues = [queue("a", None, &[("gpu:h999", q(1, None, None))])];
    let models: Vec<String> = (0..20).map(|i| format!("m{i}")).collect();
    let tree = QuotaTree::new(&[], &queues, &models).unwrap();
    assert_eq!(tree.keys().count(), MAX_KEYS);
    assert!(tree.key("gpu:h999").is_some());
    assert!(tree.key("gpu:m11").is_some());
    assert!(tree.key("gpu:m12").is_none());
    // A model without a key still counts toward `gpu`.
    assert_eq!(tree.demand(0, 0, &[("m19", 1000)])[KeyId::GPU], 1000);
}

#[test]
fn cohort_quota_and_max_per_user_round_trip_through_json() {
    let json = r#"{"nodes": [],
        "cohorts": [{"name": "org", "quota": {"gpu": {"nominal": 8}}},
                    {"name": "team", "parent": "org"}],
        "queues": [{"name": "a", "cohort": "team", "max_per_user": {"gpu": 2},
                    "quota": {"gpu:a100": {"nominal": 4, "borrowing_limit": 2}}}]}"#;
    let cluster: ClusterConfig = serde_json::from_str(json).unwrap();
    assert_eq!(cluster.cohorts[0].quota["gpu"].nominal, units(8));
    assert_eq!(cluster.queues[0].max_per_user["gpu"], units(2));
    let text = serde_json::to_string(&cluster.cohorts[1]).unwrap();
    assert!(!text.contains("quota"), "{text}");
    let tree = QuotaTree::new(&cluster.cohorts, &cluster.queues, &[]).unwrap();
    let a = id(&tree, "a");
    // org's pool is of `gpu`, a key queue a does not list: nothing to borrow for gpu:a100.
    assert_eq!(tree.available(a, tree.key("gpu:a100").unwrap()), 4000);
    assert_eq!(tree.available(a, KeyId::GPU), u64::MAX);
}

/// The shared data beside the checkout, found or skipped as the integration tests do.
#[path = "../../tests/engine/common/shared.rs"]
#[allow(unreachable_pub)] // shared with the integration tests, where its items are public
mod shared;

/// A public scenario's cluster.
fn scenario_cluster(dir: &std::path::Path, name: &str) -> ClusterConfig {
    let path = dir.join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    serde_json::from_value(value["cluster"].clone()).unwrap()
}

#[test]
fn public_scenarios_quota_pictures() {
    let Some(dir) = shared::path("scenarios") else {
        return;
    };
    let cluster = scenario_cluster(&dir, "lending_limit_blocks");
    let mut tree = QuotaTree::new(&cluster.cohorts, &cluster.queues, &[]).unwrap();
    let b = id(&tree, "lend-b");
    tree.add_usage(b, &cpus(&tree, 2));
    assert!(!tree.fits(b, &cpus(&tree, 3)));
    assert!(tree.fits(b, &cpus(&tree, 2)));

    let cluster = scenario_cluster(&dir, "reclaim_from_borrower");
    let mut tree = QuotaTree::new(&cluster.cohorts, &cluster.queues, &[]).unwrap();
    let (c1, c2) = (id(&tree, "c1"), id(&tree, "c2"));
    tree.add_usage(c1, &cpus(&tree, 3));
    tree.add_usage(c2, &cpus(&tree, 9));
    tree.check_invariants().unwrap();
    assert!(!tree.fits(c1, &cpus(&tree, 3)));
    tree.remove_usage(c2, &cpus(&tree, 3));
    assert!(tree.fits(c1, &cpus(&tree, 3)));
}

/// A generated quota entry: nominal, borrowing limit, lending limit (whole units).
type RawEntry = (u64, Option<u64>, Option<u64>);

/// A random forest of cohorts (each parent earlier in the list) with queues in it.
fn arb_config() -> impl Strategy<Value = (Vec<CohortConfig>, Vec<QueueConfig>)> {
    let entry = (
        0u64..6,
        proptest::option::of(0u64..4),
        proptest::option::of(0u64..6),
    );
    let entries = proptest::collection::vec(
        (prop_oneof![Just("cpu"), Just("gpu"), Just("gpu:a")], entry),
        0..3,
    );
    let cohorts = proptest::collection::vec(
        (any::<prop::sample::Index>(), any::<bool>(), entries.clone()),
        0..4,
    );
    let queues =
        proptest::collection::vec((any::<prop::sample::Index>(), any::<bool>(), entries), 1..6);
    (cohorts, queues).prop_map(|(cohorts, queues)| {
        let quota = |entries: Vec<(&str, RawEntry)>| {
            entries
                .into_iter()
                .map(|(k, (n, b, l))| (k.to_string(), q(n, b, l.map(|l| l.min(n)))))
                .collect()
        };
        let cohort_configs: Vec<CohortConfig> = cohorts
            .into_iter()
            .enumerate()
            .map(|(i, (parent, has_parent, entries))| CohortConfig {
                name: format!("c{i}"),
                parent: (i > 0 && has_parent).then(|| format!("c{}", parent.index(i))),
                quota: quota(entries),
                fair_sharing: None,
            })
            .collect();
        let n = cohort_configs.len();
        let queue_configs = queues
            .into_iter()
            .enumerate()
            .map(|(i, (cohort, in_cohort, entries))| QueueConfig {
                name: format!("q{i}"),
                cohort: (n > 0 && in_cohort).then(|| format!("c{}", cohort.index(n))),
                quota: quota(entries),
                ..Default::default()
            })
            .collect();
        (cohort_configs, queue_configs)
    })
}

proptest! {
    /// `fits` agrees with the declarative limits: a demand fits exactly when adding it keeps
    /// every limit; usage stays consistent; removing everything returns to zero.
    #[test]
    fn fits_matches_limits_and_usage_stays_consistent(
        (cohorts, queues) in arb_config(),
        ops in proptest::collection::vec((any::<prop::sample::Index>(), 0u64..5, 0u64..5, any::<bool>(), any::<bool>()), 1..40),
    ) {
        let mut tree = QuotaTree::new(&cohorts, &queues, &["a".into(), "b".into()]).unwrap();
        let mut running: Vec<(QueueId, QuotaVec)> = Vec::new();
        for (pick, cpu, gpu, model_a, remove) in ops {
            if remove && !running.is_empty() {
                let (q, d) = running.remove(pick.index(running.len()));
                tree.remove_usage(q, &d);
            } else {
                let q = QueueId(u32::try_from(pick.index(queues.len())).unwrap());
                let model = if model_a { "a" } else { "b" };
                let d = tree.demand(cpu * 1000, 0, &[(model, gpu * 1000)]);
                let mut trial = tree.clone();
                trial.add_usage(q, &d);
                prop_assert_eq!(tree.fits(q, &d), trial.check_limits().is_ok());
                if tree.fits(q, &d) {
                    prop_assert!(tree.could_ever_fit(q, &d));
                    tree = trial;
                    running.push((q, d));
                }
            }
            prop_assert_eq!(tree.check_invariants(), Ok(()));
        }
        for (q, d) in running {
            tree.remove_usage(q, &d);
        }
        prop_assert!(usages(&tree).iter().all(QuotaVec::is_zero));
    }
}

/// An adjusted view (issue 28, item 5: `&&` → `||` in `QuotaTree::adjusted`, and
/// `AdjustedQuota::within_nominal` → `true` / `false`, survived cargo-mutants): with only
/// charges added, or only charges removed, the view differs from the tree; `within_nominal`
/// reads the adjusted usage; the tree itself is unchanged.
#[test]
fn an_adjusted_view_adds_and_removes_charges_on_paper() {
    let queues = [
        queue("a", Some("co"), &[("cpu", q(4, None, None))]),
        queue("b", Some("co"), &[("cpu", q(4, None, None))]),
    ];
    let mut tree = QuotaTree::new(&[cohort("co", None, &[])], &queues, &[]).unwrap();
    let (a, b) = (id(&tree, "a"), id(&tree, "b"));
    tree.add_usage(a, &cpus(&tree, 3));
    let before = usages(&tree);
    // Nothing changed: the tree's own answers.
    let same = tree.adjusted(&[], &[]);
    assert!(same.fits(a, &cpus(&tree, 5)) && !same.fits(a, &cpus(&tree, 6)));
    assert!(same.within_nominal(a, &cpus(&tree, 1)) && !same.within_nominal(a, &cpus(&tree, 2)));
    // Only removed: a's 3 cpus released.
    let removed = tree.adjusted(&[], &[(a, cpus(&tree, 3))]);
    assert!(removed.fits(a, &cpus(&tree, 8)));
    assert!(removed.within_nominal(a, &cpus(&tree, 4)));
    assert!(!removed.within_nominal(a, &cpus(&tree, 5)));
    // Only added: b's 4 cpus charged, so a may borrow nothing, and b is at its nominal.
    let added = tree.adjusted(&[(b, cpus(&tree, 4))], &[]);
    assert!(added.fits(a, &cpus(&tree, 1)) && !added.fits(a, &cpus(&tree, 2)));
    assert!(!added.within_nominal(b, &cpus(&tree, 1)));
    assert!(tree.within_nominal(b, &cpus(&tree, 1)));
    assert_eq!(usages(&tree), before);
}

/// The count of usage changes, which the pass's memos of shares and quota verdicts compare to
/// tell whether what they read is stale, moves on with every charge and every release, to a
/// count not seen before (a release that brought it back to an earlier count would make a memo
/// of that count look fresh).
#[test]
fn every_charge_and_release_moves_the_count_of_usage_changes_on() {
    let queues = [queue("a", None, &[("cpu", q(4, None, None))])];
    let mut tree = QuotaTree::new(&[], &queues, &[]).unwrap();
    let a = id(&tree, "a");
    let start = tree.changes;
    tree.add_usage(a, &cpus(&tree, 2));
    assert_eq!(tree.changes, start + 1);
    tree.remove_usage(a, &cpus(&tree, 2));
    assert_eq!(tree.changes, start + 2);
    tree.add_usage(a, &cpus(&tree, 1));
    tree.remove_usage(a, &cpus(&tree, 1));
    assert_eq!(tree.changes, start + 4);
}

/// A cycle of parents through every cohort is refused as one through some of them is: the
/// walk from a cohort follows its parents until it comes back to it, and stops only past as
/// many steps as there are cohorts (a cycle it reaches without passing through it).
#[test]
fn a_cycle_of_parents_through_every_cohort_is_refused() {
    let err = |cohorts: &[CohortConfig]| QuotaTree::new(cohorts, &[], &[]).unwrap_err().to_string();
    assert_eq!(
        err(&[cohort("a", Some("b"), &[]), cohort("b", Some("a"), &[])]),
        r#"cohorts[0].parent: cycle of cohorts "a" -> "b" -> "a""#
    );
    assert_eq!(
        err(&[
            cohort("a", Some("b"), &[]),
            cohort("b", Some("c"), &[]),
            cohort("c", Some("a"), &[])
        ]),
        r#"cohorts[0].parent: cycle of cohorts "a" -> "b" -> "c" -> "a""#
    );
    // A cohort whose parents lead into a cycle that does not pass through it: the cycle is
    // named from its own first cohort.
    assert_eq!(
        err(&[
            cohort("x", Some("a"), &[]),
            cohort("a", Some("b"), &[]),
            cohort("b", Some("a"), &[])
        ]),
        r#"cohorts[1].parent: cycle of cohorts "a" -> "b" -> "a""#
    );
}
