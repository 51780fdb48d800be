//! Run-time reconfiguration: nodes and jobs stay, partitions, queues, accounts, QoS and policy
//! change from the next pass, and a refused configuration changes nothing.

use crate::common;

use common::build::{config, event, finished, submit_all};
use common::decisions::started;
use gangway::protocol::Shim;
use gangway::testkit::checked_tick;
use gangway::{JobSpec, Scheduler};
use serde_json::{Value, json};

fn base() -> Value {
    json!({
        "nodes": [{"name": "n1", "cpus": 8, "memory_mib": 8000}],
        "queues": [{"name": "q", "quota": {"cpu": {"nominal": 8}}}],
        "accounts": [{"name": "ml"}, {"name": "bio"}],
        "qos": [{"name": "high", "priority": 10}]
    })
}

fn job(id: &str, cpus: u32) -> JobSpec {
    let mut j = JobSpec::new(id, 3_600_000, cpus);
    j.queue = Some("q".into());
    j.account = Some("ml".into());
    j.user = Some("alice".into());
    j
}

#[test]
fn running_jobs_keep_running_over_a_shrunk_quota_and_pending_ones_wait_for_it() {
    let mut s = Scheduler::new(config(base())).unwrap();
    checked_tick(&mut s, 0, submit_all(vec![job("a", 4), job("b", 4)])).unwrap();
    assert_eq!(s.state().running_count(), 2);

    let mut shrunk = base();
    shrunk["queues"][0]["quota"]["cpu"]["nominal"] = json!(2);
    s.reconfigure(config(shrunk)).unwrap();
    assert_eq!(s.state().running_count(), 2);
    assert_eq!(s.state().over_quota().count(), 2);
    // A snapshot remembers which jobs are over quota.
    let json = serde_json::to_string(&s.snapshot()).unwrap();
    let mut s = Scheduler::restore(serde_json::from_str(&json).unwrap()).unwrap();
    assert_eq!(s.state().over_quota().count(), 2);

    // The oracle accepts the over-quota running jobs; the new quota holds the pending one back.
    let out = checked_tick(&mut s, 1_000, submit_all(vec![job("c", 1)])).unwrap();
    assert!(started(&out.decisions).is_empty());
    let out = checked_tick(&mut s, 2_000, vec![finished("a")]).unwrap();
    assert!(
        started(&out.decisions).is_empty(),
        "b alone still holds 4 of 2 cpus"
    );
    let out = checked_tick(&mut s, 3_000, vec![finished("b")]).unwrap();
    assert_eq!(started(&out.decisions), ["c"]);
    assert!(s.state().over_quota().next().is_none());
}

#[test]
fn a_grown_quota_admits_pending_jobs_at_the_next_pass() {
    let mut small = base();
    small["queues"][0]["quota"]["cpu"]["nominal"] = json!(2);
    let mut s = Scheduler::new(config(small)).unwrap();
    let out = checked_tick(&mut s, 0, submit_all(vec![job("a", 2), job("b", 2)])).unwrap();
    assert_eq!(started(&out.decisions), ["a"]);
    s.reconfigure(config(base())).unwrap();
    assert!(s.state().over_quota().next().is_none());
    let out = checked_tick(&mut s, 1_000, vec![]).unwrap();
    assert_eq!(started(&out.decisions), ["b"]);
}

#[test]
fn a_refused_configuration_changes_nothing() {
    let mut s = Scheduler::new(config(base())).unwrap();
    checked_tick(&mut s, 0, submit_all(vec![job("a", 4), job("b", 8)])).unwrap();
    checked_tick(&mut s, 5_000, vec![]).unwrap();
    let before = serde_json::to_value(s.snapshot()).unwrap();
    let refuse = |s: &mut Scheduler, change: &dyn Fn(&mut Value)| {
        let mut bad = base();
        change(&mut bad);
        s.reconfigure(config(bad)).unwrap_err().to_string()
    };
    assert_eq!(
        refuse(&mut s, &|c| c["queues"] = json!([])),
        r#"queues: job "a" names queue "q", which the new configuration lacks"#
    );
    assert_eq!(
        refuse(&mut s, &|c| c["accounts"] = json!([{"name": "bio"}])),
        r#"accounts: job "a" names account "ml", which the new configuration lacks"#
    );
    assert_eq!(
        refuse(&mut s, &|c| c["queues"][0]["cohort"] = json!("nope")),
        r#"queues[0].cohort: unknown cohort "nope""#
    );
    assert_eq!(
        refuse(&mut s, &|c| c["partitions"] =
            json!([{"name": "p", "max_time_ms": 1000}])),
        r#"partitions[0].max_time_ms: pending job "b" has time_limit_ms 3600000 above the new maximum 1000"#
    );
    assert_eq!(serde_json::to_value(s.snapshot()).unwrap(), before);
    checked_tick(&mut s, 6_000, vec![]).unwrap();
}

#[test]
fn a_pending_job_in_a_removed_partition_is_named() {
    let mut c = base();
    c["partitions"] = json!([{"name": "a"}, {"name": "b"}]);
    let mut s = Scheduler::new(config(c.clone())).unwrap();
    let mut j = job("x", 1);
    j.partition = Some("b".into());
    checked_tick(&mut s, 0, submit_all(vec![job("blocker", 8), j])).unwrap();
    c["partitions"] = json!([{"name": "a"}]);
    assert_eq!(
        s.reconfigure(config(c)).unwrap_err().to_string(),
        r#"partitions: job "x" names partition "b", which the new configuration lacks"#
    );
}

#[test]
fn new_priority_weights_change_the_order() {
    let mut c = base();
    c["policy"] = json!({"priority": {"weights": {"age": 1000}, "max_age_ms": 100_000}});
    let mut s = Scheduler::new(config(c.clone())).unwrap();
    checked_tick(
        &mut s,
        0,
        submit_all(vec![job("blocker", 8), job("old", 8)]),
    )
    .unwrap();
    let mut young = job("young", 8);
    young.qos = Some("high".into());
    checked_tick(&mut s, 50_000, submit_all(vec![young])).unwrap();
    let order =
        |s: &Scheduler| -> Vec<String> { s.priorities().into_iter().map(|p| p.job).collect() };
    assert_eq!(order(&s), ["old", "young"]);

    c["policy"] = json!({"priority": {"weights": {"qos": 1000}}});
    s.reconfigure(config(c)).unwrap();
    checked_tick(&mut s, 60_000, vec![]).unwrap();
    assert_eq!(order(&s), ["young", "old"]);
    let out = checked_tick(&mut s, 70_000, vec![finished("blocker")]).unwrap();
    assert_eq!(started(&out.decisions), ["young"]);
}

#[test]
fn fair_share_usage_carries_over_by_account_and_user() {
    let mut c = base();
    c["policy"] = json!({"fairshare": {"billing_weights": {"cpu": 1.0}}});
    let mut s = Scheduler::new(config(c.clone())).unwrap();
    checked_tick(&mut s, 0, submit_all(vec![job("a", 2)])).unwrap();
    checked_tick(&mut s, 10_000, vec![]).unwrap();
    let usage = |s: &Scheduler, account: &str| {
        s.share_report()
            .into_iter()
            .find(|r| r.account == account && r.user.is_none())
            .map(|r| r.raw_usage)
    };
    let before = usage(&s, "ml").unwrap();
    assert!(before > 0.0);
    // "ml" moves under a new parent; "bio" is gone.
    c["accounts"] = json!([{"name": "org"}, {"name": "ml", "parent": "org", "shares": 3}]);
    s.reconfigure(config(c)).unwrap();
    assert_eq!(usage(&s, "ml"), Some(before));
    assert_eq!(usage(&s, "org"), Some(before));
    assert_eq!(usage(&s, "bio"), None);
    // The running job is charged to its account in the new tree from now on.
    checked_tick(&mut s, 20_000, vec![]).unwrap();
    let after = usage(&s, "ml").unwrap();
    assert!((after - before - 20.0).abs() < 1e-3, "{before} → {after}");
}

#[test]
fn node_entries_decide_partition_membership_and_other_nodes_keep_theirs_by_name() {
    let mut c = base();
    c["nodes"] = json!([
        {"name": "n1", "cpus": 8, "memory_mib": 8000, "partitions": ["a"]},
        {"name": "n2", "cpus": 8, "memory_mib": 8000, "partitions": ["b"]}
    ]);
    c["partitions"] = json!([{"name": "a"}, {"name": "b"}]);
    let mut s = Scheduler::new(config(c.clone())).unwrap();
    // n1 is listed again, now in "b" only; n2 has no entry and keeps "b"; capacity stays.
    c["nodes"] = json!([{"name": "n1", "cpus": 1, "partitions": ["b"]}]);
    c["partitions"] = json!([{"name": "b"}, {"name": "a"}]);
    s.reconfigure(config(c)).unwrap();
    let state = s.state();
    for name in ["n1", "n2"] {
        let partitions: Vec<_> = state.node_by_name(name).unwrap().partitions().collect();
        assert_eq!(partitions, ["b"], "{name}");
    }
    let n1 = state.node_by_name("n1").unwrap();
    assert_eq!(n1.capacity().cpu_milli, 8000);
    // Both nodes serve partition "b": a 12-cpu gang spans them.
    let mut j = job("x", 12);
    j.partition = Some("b".into());
    j.queue = None;
    let out = checked_tick(&mut s, 0, submit_all(vec![j])).unwrap();
    assert_eq!(started(&out.decisions), ["x"]);
}

#[test]
fn the_shim_reconfigures_and_refuses_with_invalid_config() {
    let mut shim = Shim::default();
    let not_yet = shim.handle_line(&json!({"op": "reconfigure", "cluster": base()}).to_string());
    assert!(not_yet.contains(r#""kind":"not_configured""#), "{not_yet}");
    let configure = json!({"op": "configure", "cluster": base()});
    assert!(
        shim.handle_line(&configure.to_string())
            .contains(r#""ok":true"#)
    );
    let ok = shim.handle_line(&json!({"op": "reconfigure", "cluster": base()}).to_string());
    assert_eq!(ok, r#"{"ok":true}"#);
    let mut bad = base();
    bad["qos"] = json!([{"name": "x", "usage_factor": -1}]);
    let refused = shim.handle_line(&json!({"op": "reconfigure", "cluster": bad}).to_string());
    assert!(
        refused.contains(r#""kind":"invalid_config","message":"cluster.qos[0].usage_factor"#),
        "{refused}"
    );
}

#[test]
fn a_waiting_preemptor_loses_its_earmark_and_competes_under_the_new_quota() {
    let cluster = |nominal: u32| {
        config(json!({
            "nodes": [{"name": "n1", "cpus": 100, "memory_mib": 100000}],
            "queues": [{"name": "q", "quota": {"cpu": {"nominal": nominal}},
                        "preemption": {"within_queue": "lower_priority"}}],
            "policy": {"preemption": {"enabled": true}}
        }))
    };
    let submit = |id: &str, priority: i32| {
        event(json!({"type": "submit", "job": {
            "id": id, "queue": "q", "priority": priority, "time_limit_ms": 3_600_000,
            "grace_ms": 10_000, "groups": [{"count": 1, "cpus": 4}]}}))
    };
    let mut s = Scheduler::new(cluster(4)).unwrap();
    checked_tick(&mut s, 0, vec![submit("old", 0)]).unwrap();
    let out = checked_tick(&mut s, 1_000, vec![submit("new", 10)]).unwrap();
    assert!(matches!(&out.decisions[..], [gangway::Decision::Preempt { job, .. }] if job == "old"));

    // The quota shrinks while "old" stops: it keeps stopping, "new" no longer fits.
    s.reconfigure(cluster(2)).unwrap();
    let snapshot = serde_json::to_value(s.snapshot()).unwrap();
    assert_eq!(snapshot["state"]["earmarks"], serde_json::json!({}));
    let stopped = event(json!({"type": "stopped", "job": "old"}));
    let out = checked_tick(&mut s, 2_000, vec![stopped]).unwrap();
    assert!(started(&out.decisions).is_empty(), "{:?}", out.decisions);
    assert_eq!(s.state().pending_count(), 2);

    // Grown back, the higher-priority job starts first.
    s.reconfigure(cluster(4)).unwrap();
    let out = checked_tick(&mut s, 3_000, vec![]).unwrap();
    assert_eq!(started(&out.decisions), ["new"]);
}
