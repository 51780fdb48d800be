//! Admission fair sharing inside a queue (Kueue's `UsageBasedAdmissionFairSharing`): tenants
//! (accounts) of one queue are served by their decayed usage, so a tenant with a thousand jobs
//! does not starve one with ten. Every tick runs the invariant oracle.

use crate::common;

use std::collections::BTreeSet;

use common::build::{self, finished, submit};
use gangway::testkit::checked_tick;
use gangway::{Decision, Event, JobSpec, Milli, Scheduler};
use proptest::prelude::*;
use serde_json::{Value, json};

const MINUTE: u64 = 60_000;
const HOUR: u64 = 3_600_000;

/// One node of 8 GPUs and one queue over them, with admission fair sharing as given.
fn cluster(fair: bool) -> Value {
    json!({
        "nodes": [{"name": "n1", "cpus": 64, "memory_mib": 512000,
                   "gpus": {"model": "a100", "count": 8}}],
        "queues": [{"name": "shared", "quota": {"gpu": {"nominal": 8}},
                    "admission_fair_sharing": fair}],
        "policy": {"admission_fair_sharing": {"usage_half_life_ms": HOUR}}
    })
}

fn job(id: &str, account: &str, gpus: u64, priority: i32) -> JobSpec {
    let mut job = JobSpec::new(id, HOUR, 1).with_gpus(Milli::from_units(gpus));
    job.queue = Some("shared".into());
    job.account = Some(account.into());
    job.priority = priority;
    job
}

fn started(decisions: &[Decision]) -> Vec<String> {
    common::decisions::started(decisions)
        .into_iter()
        .map(String::from)
        .collect()
}

/// Runs `big` jobs of tenant "big" submitted before `small` of tenant "small", 1 GPU and 10
/// minutes each, ticking every 10 minutes for `ticks` ticks; returns the starts per tick.
fn flood(fair: bool, big: usize, small: usize, ticks: u64) -> Vec<Vec<String>> {
    let mut s = build::scheduler(cluster(fair));
    let mut jobs: Vec<Event> = (0..big)
        .map(|i| submit(job(&format!("big{i}"), "big", 1, 0)))
        .collect();
    jobs.extend((0..small).map(|i| submit(job(&format!("small{i}"), "small", 1, 0))));
    let mut running: Vec<String> = Vec::new();
    let mut starts = Vec::new();
    for t in 0..ticks {
        let mut events: Vec<Event> = running.drain(..).map(|id| finished(&id)).collect();
        if t == 0 {
            events.append(&mut jobs);
        }
        let out = checked_tick(&mut s, t * 10 * MINUTE, events).unwrap();
        running = started(&out.decisions);
        starts.push(running.clone());
    }
    starts
}

fn count(starts: &[String], prefix: &str) -> usize {
    starts.iter().filter(|id| id.starts_with(prefix)).count()
}

#[test]
fn a_tenant_with_a_thousand_jobs_does_not_starve_one_with_ten() {
    let starts = flood(true, 1000, 10, 4);
    // Equal usage at first: the earlier job, then whoever's usage (entry penalties) is lower,
    // so the tenants alternate and each gets half of the 8 GPUs.
    assert_eq!(count(&starts[0], "small"), 4, "{:?}", starts[0]);
    assert_eq!(count(&starts[0], "big"), 4, "{:?}", starts[0]);
    let small: usize = starts.iter().map(|s| count(s, "small")).sum();
    let big: usize = starts.iter().map(|s| count(s, "big")).sum();
    assert_eq!(
        small, 10,
        "every small job ran within 40 minutes: {starts:?}"
    );
    assert!(big >= 16, "the big tenant progressed too: {big}");
}

#[test]
fn without_admission_fair_sharing_the_ten_wait_behind_the_thousand() {
    let starts = flood(false, 1000, 10, 4);
    let small: usize = starts.iter().map(|s| count(s, "small")).sum();
    assert_eq!(small, 0, "{starts:?}");
}

/// Runs a 4-GPU job of tenant "a" for an hour, then offers a high-priority job of "a" and a
/// low-priority job of "b", each needing the whole node.
fn usage_against_priority(fair: bool) -> Vec<String> {
    let mut s = build::scheduler(cluster(fair));
    checked_tick(&mut s, 0, vec![submit(job("a0", "a", 4, 0))]).unwrap();
    let events = vec![
        finished("a0"),
        submit(job("a-high", "a", 8, 100)),
        submit(job("b-low", "b", 8, 0)),
    ];
    started(&checked_tick(&mut s, HOUR, events).unwrap().decisions)
}

#[test]
fn tenant_usage_is_compared_before_priority() {
    assert_eq!(usage_against_priority(true), ["b-low"]);
    assert_eq!(usage_against_priority(false), ["a-high"]);
}

#[test]
fn equal_usage_falls_back_to_priority_then_submit_order() {
    let mut s = build::scheduler(cluster(true));
    let events = vec![
        submit(job("a-first", "a", 8, 0)),
        submit(job("b-urgent", "b", 8, 5)),
    ];
    let out = checked_tick(&mut s, 0, events).unwrap();
    assert_eq!(started(&out.decisions), ["b-urgent"]);
}

#[test]
fn an_account_weight_divides_its_usage() {
    // "a" used 4 GPUs for an hour, "b" 2; with weight 4 "a" counts as the lighter one.
    let run = |weights: Value| {
        let mut config = cluster(true);
        config["queues"][0]["account_weights"] = weights;
        let mut s = build::scheduler(config);
        let first = vec![submit(job("a0", "a", 4, 0)), submit(job("b0", "b", 2, 0))];
        checked_tick(&mut s, 0, first).unwrap();
        let events = vec![
            finished("a0"),
            finished("b0"),
            submit(job("b1", "b", 8, 0)),
            submit(job("a1", "a", 8, 0)),
        ];
        started(&checked_tick(&mut s, HOUR, events).unwrap().decisions)
    };
    assert_eq!(run(json!({})), ["b1"]);
    assert_eq!(run(json!({"a": 4.0})), ["a1"]);
    assert_eq!(run(json!({"b": 0.0})), ["a1"]);
}

#[test]
fn usage_survives_snapshot_and_reconfigure_and_goes_with_the_switch() {
    let mut s = build::scheduler(cluster(true));
    let mut a0 = job("a0", "a", 4, 0);
    a0.time_limit_ms = 2 * HOUR;
    checked_tick(&mut s, 0, vec![submit(a0)]).unwrap();
    checked_tick(&mut s, HOUR, vec![]).unwrap();
    let rows = s.admission_usage();
    assert_eq!(rows.len(), 1);
    assert!(rows[0].usage.unwrap() > 2.0);

    let restored = Scheduler::restore(s.snapshot()).unwrap();
    assert_eq!(restored.admission_usage(), rows);

    let mut kept = s.clone();
    kept.reconfigure(build::config(cluster(true))).unwrap();
    assert_eq!(kept.admission_usage(), rows);

    s.reconfigure(build::config(cluster(false))).unwrap();
    assert!(s.admission_usage().is_empty());
    s.reconfigure(build::config(cluster(true))).unwrap();
    let fresh = s.admission_usage();
    assert_eq!(fresh[0].usage, Some(0.0), "{fresh:?}");
}

#[test]
fn a_bad_setting_is_refused_and_changes_nothing() {
    let mut s = build::scheduler(cluster(true));
    checked_tick(&mut s, 0, vec![submit(job("a0", "a", 4, 0))]).unwrap();
    let before = serde_json::to_string(&s.snapshot()).unwrap();
    let mut bad = cluster(true);
    bad["queues"][0]["account_weights"] = json!({"a": -1.0});
    let err = s.reconfigure(build::config(bad)).unwrap_err();
    assert_eq!(err.field, "queues[0].account_weights.a");
    assert_eq!(serde_json::to_string(&s.snapshot()).unwrap(), before);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: crate::common::kept_beside(), ..ProptestConfig::default() })]

    /// With random tenants, weights, sizes, priorities and ends, the oracle holds at every
    /// tick, a scheduler restored half-way decides exactly as the original, and every reported
    /// usage is a number (no weight here is 0).
    #[test]
    fn random_streams_stay_sound_and_restore_exactly(
        jobs in prop::collection::vec((0u8..4, 1u64..=8, 0i32..3, 1u64..=6), 1..40),
        cut in 1usize..8,
    ) {
        let mut config = cluster(true);
        config["queues"][0]["account_weights"] = json!({"t1": 2.0, "t2": 0.5});
        let mut s = build::scheduler(config);
        let mut twin: Option<Scheduler> = None;
        let mut ends: Vec<(u64, String)> = Vec::new();
        let mut pending: Vec<Event> = jobs
            .iter()
            .enumerate()
            .map(|(i, &(tenant, gpus, priority, _))| {
                submit(job(&format!("j{i}"), &format!("t{tenant}"), gpus, priority))
            })
            .collect();
        for step in 0..10u64 {
            let now = step * 10 * MINUTE;
            if step as usize == cut {
                twin = Some(Scheduler::restore(s.snapshot()).unwrap());
            }
            let done: BTreeSet<String> =
                ends.iter().filter(|(at, _)| *at <= now).map(|(_, id)| id.clone()).collect();
            ends.retain(|(at, _)| *at > now);
            let mut events: Vec<Event> = done.iter().map(|id| finished(id)).collect();
            if step == 0 {
                events.append(&mut pending);
            }
            let out = checked_tick(&mut s, now, events.clone()).unwrap();
            if let Some(twin) = twin.as_mut() {
                let again = checked_tick(twin, now, events).unwrap();
                prop_assert_eq!(&again.decisions, &out.decisions);
            }
            for id in started(&out.decisions) {
                let i: usize = id[1..].parse().unwrap();
                ends.push((now + jobs[i].3 * 10 * MINUTE, id));
            }
            // The report's usage is what orders: non-negative, infinite only for weight 0.
            for row in s.admission_usage() {
                prop_assert!(row.usage.is_some_and(|u| u >= 0.0));
            }
        }
    }
}
