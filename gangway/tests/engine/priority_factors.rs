//! The QoS and partition priority factors, the QoS usage factor and the usage reset period,
//! through the scheduler and the shim's `explain` with `detail`.

use crate::common;

use common::build::{self, submit_all};
use gangway::ShareRow;
use gangway::protocol::Shim;
use gangway::testkit::checked_tick;
use gangway::{ErrorKind, JobSpec, Milli, Scheduler};
use serde_json::{Value, json};

/// One node of one A100, with `extra`'s keys set.
fn cluster(extra: Value) -> Value {
    let mut cluster = json!({
        "nodes": [{"name": "n1", "cpus": 1, "memory_mib": 1000, "gpus": {"model": "a100", "count": 1}}]
    });
    for (key, value) in extra.as_object().unwrap() {
        cluster[key] = value.clone();
    }
    cluster
}

fn scheduler(extra: Value) -> Scheduler {
    build::scheduler(cluster(extra))
}

fn job(id: &str) -> JobSpec {
    JobSpec::new(id, 600_000, 1)
}

fn with_qos(id: &str, qos: &str) -> JobSpec {
    let mut j = job(id);
    j.qos = Some(qos.into());
    j
}

#[test]
fn the_qos_factor_is_the_qos_priority_over_the_largest() {
    let mut s = scheduler(json!({
        "qos": [{"name": "low", "priority": 10}, {"name": "high", "priority": 40}],
        "policy": {"priority": {"weights": {"qos": 1000}}}
    }));
    checked_tick(&mut s, 0, submit_all(vec![job("blocker")])).unwrap();
    let jobs = vec![
        job("none"),
        with_qos("low", "low"),
        with_qos("high", "high"),
    ];
    checked_tick(&mut s, 0, submit_all(jobs)).unwrap();
    let rows = s.priorities();
    let order: Vec<&str> = rows.iter().map(|r| r.job.as_str()).collect();
    assert_eq!(order, ["high", "low", "none"]);
    let qos: Vec<(f64, f64, i64)> = rows
        .iter()
        .map(|r| (r.factors.qos, r.weighted.qos, r.priority))
        .collect();
    assert_eq!(
        qos,
        [(1.0, 1000.0, 1000), (0.25, 250.0, 250), (0.0, 0.0, 0)]
    );
}

#[test]
fn an_unknown_qos_is_refused_with_its_name() {
    let mut s = scheduler(json!({"qos": [{"name": "normal"}]}));
    let out = checked_tick(&mut s, 0, submit_all(vec![with_qos("a", "urgent")])).unwrap();
    assert_eq!(out.rejected.len(), 1);
    assert_eq!(out.rejected[0].error.kind, ErrorKind::Invalid);
    assert_eq!(
        out.rejected[0].error.message,
        r#"submit a: unknown qos "urgent""#
    );
}

#[test]
fn qos_lists_are_validated() {
    let bad = |qos: Value| {
        let cluster = json!({"nodes": [], "qos": qos});
        Scheduler::new(serde_json::from_value(cluster).unwrap())
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        bad(json!([{"name": "a"}, {"name": "a"}])),
        r#"qos[1].name: duplicate name "a""#
    );
    assert_eq!(
        bad(json!([{"name": "a", "usage_factor": -0.5}])),
        "qos[0].usage_factor: -0.5 must be a finite non-negative number"
    );
}

#[test]
fn the_qos_usage_factor_scales_charged_usage() {
    let mut s = scheduler(json!({
        "nodes": [{"name": "n1", "cpus": 4, "memory_mib": 1000, "gpus": {"model": "a100", "count": 4}}],
        "accounts": [{"name": "ml"}],
        "qos": [{"name": "cheap", "usage_factor": 0.5}, {"name": "dear", "usage_factor": 2.0}],
        "policy": {"fairshare": {"half_life_ms": 1_000_000_000_000u64}}
    }));
    let gpu = |id: &str, qos: Option<&str>, user: &str| {
        let mut j = job(id).with_gpus(Milli::from_units(1));
        j.qos = qos.map(Into::into);
        j.account = Some("ml".into());
        j.user = Some(user.into());
        j
    };
    let jobs = vec![
        gpu("plain", None, "p"),
        gpu("cheap", Some("cheap"), "c"),
        gpu("dear", Some("dear"), "d"),
    ];
    checked_tick(&mut s, 0, submit_all(jobs)).unwrap();
    checked_tick(&mut s, 100_000, vec![]).unwrap();
    let rows = s.share_report();
    let usage = |user: &str| -> f64 {
        let row: &ShareRow = rows
            .iter()
            .find(|r| r.user.as_deref() == Some(user))
            .unwrap();
        row.raw_usage
    };
    let close = |a: f64, b: f64| (a - b).abs() < 1e-6;
    assert!(close(usage("p"), 100.0), "{}", usage("p"));
    assert!(close(usage("c"), 50.0), "{}", usage("c"));
    assert!(close(usage("d"), 200.0), "{}", usage("d"));
}

#[test]
fn a_reconfigured_usage_factor_or_billing_weight_bills_running_jobs_from_then_on() {
    let config = |usage_factor: f64, gpu_weight: f64| {
        cluster(json!({
            "accounts": [{"name": "ml"}],
            "qos": [{"name": "dear", "usage_factor": usage_factor}],
            "policy": {"fairshare": {
                "half_life_ms": 1_000_000_000_000u64,
                "billing_weights": {"gpu": gpu_weight}
            }}
        }))
    };
    let mut s = build::scheduler(config(2.0, 1.0));
    let mut dear = with_qos("dear", "dear").with_gpus(Milli::from_units(1));
    dear.account = Some("ml".into());
    dear.user = Some("d".into());
    checked_tick(&mut s, 0, submit_all(vec![dear])).unwrap();
    checked_tick(&mut s, 100_000, vec![]).unwrap();
    let usage = |s: &Scheduler| {
        let rows = s.share_report();
        let row = rows.iter().find(|r| r.user.as_deref() == Some("d"));
        row.unwrap().raw_usage
    };
    // Within a millionth: the half-life of some 30 years still decays a little.
    let close = |a: f64, b: f64| (a - b).abs() < 1e-6 * b;
    // 100 s of one GPU at weight 1, twice over.
    assert!(close(usage(&s), 200.0), "{}", usage(&s));
    // The running job is billed at the new factor and weight from the reconfiguration on.
    s.reconfigure(serde_json::from_value(config(3.0, 1.0)).unwrap())
        .unwrap();
    checked_tick(&mut s, 200_000, vec![]).unwrap();
    assert!(close(usage(&s), 500.0), "{}", usage(&s));
    s.reconfigure(serde_json::from_value(config(3.0, 2.0)).unwrap())
        .unwrap();
    checked_tick(&mut s, 300_000, vec![]).unwrap();
    assert!(close(usage(&s), 1_100.0), "{}", usage(&s));
}

#[test]
fn the_partition_factor_is_the_job_factor_over_the_largest() {
    let mut s = scheduler(json!({
        "partitions": [
            {"name": "batch", "default": true},
            {"name": "urgent", "priority_job_factor": 4}
        ],
        "policy": {"priority": {"weights": {"partition": 100}}}
    }));
    let mut urgent = job("urgent");
    urgent.partition = Some("urgent".into());
    checked_tick(&mut s, 0, submit_all(vec![job("blocker")])).unwrap();
    checked_tick(&mut s, 0, submit_all(vec![job("batch"), urgent])).unwrap();
    let rows = s.priorities();
    let got: Vec<(&str, f64, i64)> = rows
        .iter()
        .map(|r| (r.job.as_str(), r.factors.partition, r.priority))
        .collect();
    assert_eq!(got, [("urgent", 1.0, 100), ("batch", 0.25, 25)]);
}

#[test]
fn every_partition_has_factor_one_by_default() {
    let mut s = scheduler(json!({
        "policy": {"priority": {"weights": {"partition": 7}}}
    }));
    checked_tick(&mut s, 0, submit_all(vec![job("blocker")])).unwrap();
    checked_tick(&mut s, 0, submit_all(vec![job("a")])).unwrap();
    let rows = s.priorities();
    assert_eq!((rows[0].factors.partition, rows[0].priority), (1.0, 7));
}

#[test]
fn a_daily_reset_forgets_usage_at_midnight() {
    const DAY: u64 = 86_400_000;
    let mut s = scheduler(json!({
        "accounts": [{"name": "ml"}],
        "policy": {"fairshare": {"reset": "daily"}}
    }));
    let mut a = JobSpec::new("a", 3_600_000, 1).with_gpus(Milli::from_units(1));
    a.account = Some("ml".into());
    checked_tick(&mut s, DAY - 10_000, submit_all(vec![a])).unwrap();
    checked_tick(&mut s, DAY - 1_000, vec![]).unwrap();
    let ml = |s: &Scheduler| s.share_report()[0].raw_usage;
    assert!(ml(&s) > 8.9 && ml(&s) <= 9.0, "{}", ml(&s));
    // Across midnight the old usage is forgotten: only the second after it counts.
    checked_tick(&mut s, DAY + 1_000, vec![]).unwrap();
    assert!(ml(&s) > 1.9 && ml(&s) <= 2.0, "{}", ml(&s));
}

#[test]
fn explain_detail_shows_the_qos_and_partition_factors() {
    let mut shim = Shim::default();
    let configure = json!({"op": "configure", "cluster": {
        "nodes": [{"name": "n1", "cpus": 1}],
        "partitions": [{"name": "p", "priority_job_factor": 2}],
        "qos": [{"name": "high", "priority": 5}],
        "policy": {"priority": {"weights": {"partition": 10, "qos": 100}}}
    }});
    assert!(
        shim.handle_line(&configure.to_string())
            .contains(r#""ok":true"#)
    );
    let blocker = json!({"op": "tick", "at_ms": 0, "events": [
        {"type": "submit", "job": {"id": "blocker", "time_limit_ms": 1000, "groups": [{"count": 1}]}}
    ]});
    shim.handle_line(&blocker.to_string());
    let tick = json!({"op": "tick", "at_ms": 0, "events": [
        {"type": "submit", "job": {"id": "a", "time_limit_ms": 1000, "groups": [{"count": 1}]}},
        {"type": "submit", "job": {"id": "b", "qos": "high", "time_limit_ms": 1000, "groups": [{"count": 1}]}}
    ]});
    shim.handle_line(&tick.to_string());
    let explained: Value =
        serde_json::from_str(&shim.handle_line(r#"{"op":"explain","detail":true}"#)).unwrap();
    let b = &explained["priorities"][0];
    assert_eq!(b["job"], "b");
    assert_eq!(b["factors"]["qos"], 1.0);
    assert_eq!(b["factors"]["partition"], 1.0);
    assert_eq!(b["weighted"]["qos"], 100.0);
    assert_eq!(b["weighted"]["partition"], 10.0);
    assert_eq!(b["priority"], 110);
}
