//! Job and node lifecycle through the Rust API, with the invariant oracle after every tick.

use crate::common;

use common::build::{finished, scheduler_from_str, submit};
use common::decisions::{placement, reason, started};
use gangway::testkit::checked_tick;
use gangway::{CancelReason, RequeueReason};
use gangway::{
    Decision, DependencyKind, Event, JobSpec, KillReason, Milli, PendingReason, PlacementMode,
    Scheduler, TickError,
};
use gangway::{Dependency, FinishOutcome};

fn cluster(extra: &str) -> Scheduler {
    scheduler_from_str(&format!(
        r#"{{"nodes": [
        {{"name": "n1", "cpus": 8, "memory_mib": 16000, "gpus": {{"model": "a100", "count": 4}}}},
        {{"name": "n2", "cpus": 8, "memory_mib": 16000, "gpus": {{"model": "a100", "count": 4}}}},
        {{"name": "c1", "cpus": 8, "memory_mib": 16000}}]{extra}}}"#
    ))
}

fn gpu_job(id: &str, gpus: u64, limit: u64) -> JobSpec {
    JobSpec::new(id, limit, 1).with_gpus(Milli::from_units(gpus))
}

/// The (node, tasks, GPUs) of each placement entry of `id`'s start; empty if it did not start.
fn placement_of(decisions: &[Decision], id: &str) -> Vec<(String, u32, Vec<u32>)> {
    placement(decisions, id)
        .unwrap_or_default()
        .iter()
        .map(|p| (p.node.to_string(), p.tasks, p.gpus.clone()))
        .collect()
}

#[test]
fn cpu_only_jobs_land_on_nodes_without_gpus_first() {
    let mut s = cluster("");
    let out = checked_tick(&mut s, 0, vec![submit(JobSpec::new("cpu", 60_000, 2))]).unwrap();
    assert_eq!(
        placement_of(&out.decisions, "cpu"),
        vec![("c1".into(), 2, vec![])]
    );
}

#[test]
fn best_fit_keeps_whole_nodes_free() {
    let mut s = cluster("");
    checked_tick(&mut s, 0, vec![submit(gpu_job("three", 3, 60_000))]).unwrap();
    let out = checked_tick(&mut s, 1, vec![submit(gpu_job("one", 1, 60_000))]).unwrap();
    // n1 has one GPU left: the 1-GPU job goes there, leaving n2 whole.
    assert_eq!(
        placement_of(&out.decisions, "one"),
        vec![("n1".into(), 1, vec![3])]
    );
    let out = checked_tick(&mut s, 2, vec![submit(gpu_job("four", 4, 60_000))]).unwrap();
    assert_eq!(started(&out.decisions), vec!["four"]);
}

#[test]
fn placement_modes() {
    let mut s = cluster("");
    let pack = JobSpec::new("pack", 60_000, 4).with_gpus(Milli::from_units(1));
    let out = checked_tick(&mut s, 0, vec![submit(pack)]).unwrap();
    assert_eq!(
        placement_of(&out.decisions, "pack"),
        vec![("n1".into(), 4, vec![0, 1, 2, 3])]
    );

    let mut s = cluster("");
    let spread = JobSpec::new("spread", 60_000, 2)
        .with_gpus(Milli::from_units(1))
        .with_placement(PlacementMode::Spread);
    let out = checked_tick(&mut s, 0, vec![submit(spread)]).unwrap();
    let nodes: Vec<String> = placement_of(&out.decisions, "spread")
        .into_iter()
        .map(|p| p.0)
        .collect();
    assert_eq!(nodes, vec!["n1", "n2"]);

    let mut s = cluster("");
    let strict = JobSpec::new("sp", 60_000, 5)
        .with_gpus(Milli::from_units(1))
        .with_placement(PlacementMode::StrictPack);
    let out = checked_tick(&mut s, 0, vec![submit(strict)]).unwrap();
    assert_eq!(
        out.rejected[0].error.kind,
        gangway::ErrorKind::Unsatisfiable
    );
}

#[test]
fn gang_is_all_or_nothing_across_groups() {
    let mut s = cluster("");
    checked_tick(&mut s, 0, vec![submit(gpu_job("hog", 3, 600_000))]).unwrap();
    let mut gang = JobSpec::new("gang", 60_000, 1).with_gpus(Milli::from_units(4));
    gang.groups.push(gangway::TaskGroup {
        gpus: Milli::from_units(2),
        ..gangway::TaskGroup::new(1)
    });
    let out = checked_tick(&mut s, 1, vec![submit(gang)]).unwrap();
    // The 4-GPU task fits n2, the 2-GPU task fits nowhere: nothing starts.
    assert!(started(&out.decisions).is_empty());
    let state = s.state();
    assert_eq!(state.node_by_name("n2").unwrap().used().devices, [0; 16]);
}

#[test]
fn fractional_gpus_share_a_device() {
    let mut s = cluster("");
    let half = |id: &str| JobSpec::new(id, 60_000, 1).with_gpus(Milli::from_milli(500));
    let out = checked_tick(&mut s, 0, vec![submit(half("a")), submit(half("b"))]).unwrap();
    let a = placement_of(&out.decisions, "a");
    let b = placement_of(&out.decisions, "b");
    assert_eq!(a[0].0, b[0].0);
    assert_eq!(a[0].2, b[0].2, "both halves on the same device");
}

#[test]
fn exclusive_job_takes_whole_nodes() {
    let mut s = cluster("");
    let mut excl = gpu_job("excl", 1, 60_000);
    excl.exclusive = true;
    checked_tick(&mut s, 0, vec![submit(excl)]).unwrap();
    let out = checked_tick(&mut s, 1, vec![submit(gpu_job("next", 1, 60_000))]).unwrap();
    let node = &placement_of(&out.decisions, "next")[0].0;
    let excl_node = s
        .explain()
        .running
        .iter()
        .find(|r| r.job == "excl")
        .unwrap()
        .nodes[0]
        .clone();
    assert_ne!(node, &excl_node);
}

#[test]
fn time_limit_kill_and_no_kill_when_not_enforced() {
    let mut s = cluster("");
    let out = checked_tick(&mut s, 0, vec![submit(gpu_job("a", 1, 1_000))]).unwrap();
    assert_eq!(out.next_wakeup_ms, Some(1_000));
    let out = checked_tick(&mut s, 1_000, vec![]).unwrap();
    assert_eq!(
        out.decisions,
        vec![Decision::Kill {
            job: "a".into(),
            reason: KillReason::TimeLimit
        }]
    );

    let mut s = cluster(r#", "policy": {"time_limit": {"enforce": false}}"#);
    let out = checked_tick(&mut s, 0, vec![submit(gpu_job("a", 1, 1_000))]).unwrap();
    assert_eq!(out.next_wakeup_ms, None);
    let out = checked_tick(&mut s, 5_000, vec![]).unwrap();
    assert!(out.decisions.is_empty());
}

#[test]
fn node_down_requeues_or_kills_and_up_brings_it_back() {
    let mut s = cluster("");
    let mut keep = gpu_job("keep", 4, 600_000);
    keep.requeue = false;
    let out = checked_tick(
        &mut s,
        0,
        vec![submit(gpu_job("again", 4, 600_000)), submit(keep)],
    )
    .unwrap();
    let again_node = placement_of(&out.decisions, "again")[0].0.clone();
    let keep_node = placement_of(&out.decisions, "keep")[0].0.clone();
    let out = checked_tick(
        &mut s,
        10,
        vec![Event::NodeDown {
            node: again_node.clone(),
        }],
    )
    .unwrap();
    assert!(out.decisions.contains(&Decision::Requeue {
        job: "again".into(),
        reason: RequeueReason::NodeDown
    }));
    assert!(
        started(&out.decisions).is_empty(),
        "the only other GPU node is busy"
    );
    let out = checked_tick(&mut s, 20, vec![Event::NodeDown { node: keep_node }]).unwrap();
    assert_eq!(
        out.decisions[0],
        Decision::Kill {
            job: "keep".into(),
            reason: KillReason::NodeDown
        }
    );
    let out = checked_tick(&mut s, 30, vec![Event::NodeUp { node: again_node }]).unwrap();
    assert_eq!(started(&out.decisions), vec!["again"]);
}

#[test]
fn node_remove_and_add() {
    let mut s = cluster("");
    checked_tick(
        &mut s,
        0,
        vec![
            submit(gpu_job("a", 4, 600_000)),
            submit(gpu_job("b", 4, 600_000)),
        ],
    )
    .unwrap();
    let out = checked_tick(&mut s, 1, vec![Event::NodeRemove { node: "n1".into() }]).unwrap();
    assert_eq!(out.decisions.len(), 1);
    assert!(matches!(
        &out.decisions[0],
        Decision::Requeue {
            reason: RequeueReason::NodeRemoved,
            ..
        }
    ));
    let node: gangway::config::NodeConfig =
        serde_json::from_str(r#"{"name": "n9", "cpus": 8, "gpus": {"model": "h100", "count": 4}}"#)
            .unwrap();
    let out = checked_tick(&mut s, 2, vec![Event::NodeAdd { node }]).unwrap();
    assert_eq!(
        placement_of(&out.decisions, out.decisions[0].job())[0].0,
        "n9"
    );
}

#[test]
fn a_node_that_a_reconfiguration_keeps_in_a_partition_is_used_where_its_twin_left_it() {
    // `n1` and `n2` are alike; `n1` leaves `gpu`. A job in `gpu` must find `n2`, however the
    // placement groups nodes that look alike (their partitions are part of the look).
    let partitions = r#", "partitions": [{"name": "main", "default": true}, {"name": "gpu"}]"#;
    let mut s = cluster(partitions);
    let mut config = s.state().config().clone();
    for node in config.nodes.iter_mut().filter(|n| n.name == "n1") {
        node.partitions = Some(vec!["main".into()]);
    }
    s.reconfigure(config).unwrap();
    let mut job = gpu_job("a", 4, 600_000);
    job.partition = Some("gpu".into());
    let out = checked_tick(&mut s, 0, vec![submit(job)]).unwrap();
    assert_eq!(
        placement_of(&out.decisions, "a"),
        [("n2".into(), 1, vec![0, 1, 2, 3])]
    );
}

#[test]
fn a_gang_that_fitted_is_refused_once_the_nodes_that_could_hold_it_are_gone() {
    // The same request, remembered as able to run, is checked again after the node table
    // changes: a removed node and a reconfigured partition each take the only room away.
    let four = |id: &str| gpu_job(id, 4, 600_000);
    let mut s = cluster("");
    let out = checked_tick(&mut s, 0, vec![submit(four("a")), submit(four("b"))]).unwrap();
    assert!(out.rejected.is_empty());
    let remove = |node: &str| Event::NodeRemove { node: node.into() };
    let out = checked_tick(&mut s, 1, vec![remove("n1"), submit(four("c"))]).unwrap();
    assert!(out.rejected.is_empty(), "n2 still holds four GPUs");
    let out = checked_tick(&mut s, 2, vec![remove("n2"), submit(four("d"))]).unwrap();
    assert_eq!(out.rejected.len(), 1);
    assert_eq!(
        out.rejected[0].error.kind,
        gangway::ErrorKind::Unsatisfiable
    );

    // A partition whose GPU nodes leave it by reconfiguration.
    let partitions = r#", "partitions": [{"name": "main", "default": true}, {"name": "gpu"}]"#;
    let mut s = cluster(partitions);
    let in_gpu = |id: &str| {
        let mut job = four(id);
        job.partition = Some("gpu".into());
        job
    };
    let out = checked_tick(&mut s, 0, vec![submit(in_gpu("a"))]).unwrap();
    assert!(out.rejected.is_empty());
    let out = checked_tick(&mut s, 1, vec![finished("a")]).unwrap();
    assert!(out.rejected.is_empty());
    let mut config = s.state().config().clone();
    for node in config.nodes.iter_mut().filter(|n| n.gpus.is_some()) {
        node.partitions = Some(vec!["main".into()]);
    }
    s.reconfigure(config).unwrap();
    let out = checked_tick(&mut s, 2, vec![submit(in_gpu("b"))]).unwrap();
    assert_eq!(out.rejected.len(), 1);
    assert_eq!(
        out.rejected[0].error.kind,
        gangway::ErrorKind::Unsatisfiable
    );
}

#[test]
fn drained_node_takes_no_new_work() {
    let mut s = cluster("");
    checked_tick(
        &mut s,
        0,
        vec![
            Event::NodeDrain { node: "n1".into() },
            Event::NodeDrain { node: "n2".into() },
        ],
    )
    .unwrap();
    let out = checked_tick(&mut s, 1, vec![submit(gpu_job("a", 1, 60_000))]).unwrap();
    assert!(started(&out.decisions).is_empty());
    assert_eq!(reason(&s, "a"), PendingReason::Resources);
}

#[test]
fn hold_release_begin_and_priority() {
    let mut s = cluster(r#", "policy": {"backfill": {"mode": "none"}}"#);
    checked_tick(
        &mut s,
        0,
        vec![
            submit(gpu_job("big", 4, 600_000)),
            submit(gpu_job("big2", 4, 600_000)),
        ],
    )
    .unwrap();
    let mut later = gpu_job("later", 4, 60_000);
    later.begin_ms = Some(5_000);
    let out = checked_tick(
        &mut s,
        1,
        vec![
            submit(gpu_job("low", 4, 60_000)),
            submit(gpu_job("high", 4, 60_000)),
            Event::Hold { job: "low".into() },
            Event::SetPriority {
                job: "high".into(),
                priority: 10,
            },
            submit(later),
        ],
    )
    .unwrap();
    assert_eq!(out.next_wakeup_ms, Some(5_000));
    assert_eq!(reason(&s, "low"), PendingReason::Held);
    assert_eq!(reason(&s, "later"), PendingReason::Begin);
    assert_eq!(reason(&s, "high"), PendingReason::Resources);
    let positions: Vec<String> = s.explain().pending.iter().map(|p| p.job.clone()).collect();
    assert_eq!(positions[0], "high");
    checked_tick(&mut s, 2, vec![Event::Release { job: "low".into() }]).unwrap();
    assert_eq!(reason(&s, "low"), PendingReason::Resources);
}

#[test]
fn set_time_limit_moves_the_kill() {
    let mut s = cluster("");
    checked_tick(&mut s, 0, vec![submit(gpu_job("a", 1, 10_000))]).unwrap();
    let out = checked_tick(
        &mut s,
        1,
        vec![Event::SetTimeLimit {
            job: "a".into(),
            time_limit_ms: 20_000,
        }],
    )
    .unwrap();
    assert_eq!(out.next_wakeup_ms, Some(20_000));
}

#[test]
fn dependencies_wait_then_run_or_are_cancelled_down_the_chain() {
    let mut s = cluster("");
    let mut after_ok = gpu_job("after-ok", 1, 60_000);
    after_ok.after = vec![Dependency {
        job: "first".into(),
        on: DependencyKind::Ok,
    }];
    let mut chained = gpu_job("chained", 1, 60_000);
    chained.after = vec![Dependency {
        job: "after-ok".into(),
        on: DependencyKind::Ok,
    }];
    let mut after_not_ok = gpu_job("after-fail", 1, 60_000);
    after_not_ok.after = vec![Dependency {
        job: "first".into(),
        on: DependencyKind::NotOk,
    }];
    checked_tick(
        &mut s,
        0,
        vec![
            submit(gpu_job("first", 1, 60_000)),
            submit(after_ok),
            submit(chained),
            submit(after_not_ok),
        ],
    )
    .unwrap();
    assert_eq!(reason(&s, "after-ok"), PendingReason::Dependency);
    let out = checked_tick(
        &mut s,
        10,
        vec![Event::Finished {
            job: "first".into(),
            outcome: FinishOutcome::Failed,
        }],
    )
    .unwrap();
    let cancelled: Vec<&str> = out
        .decisions
        .iter()
        .filter_map(|d| match d {
            Decision::Cancel {
                job,
                reason: CancelReason::DependencyNeverSatisfied,
            } => Some(job.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        cancelled,
        vec!["after-ok", "chained"],
        "{:?}",
        out.decisions
    );
    assert_eq!(started(&out.decisions), vec!["after-fail"]);
}

#[test]
fn ended_jobs_are_remembered_for_min_job_age() {
    let mut s = cluster(r#", "policy": {"min_job_age_ms": 1000}"#);
    checked_tick(&mut s, 0, vec![submit(gpu_job("a", 1, 60_000))]).unwrap();
    checked_tick(&mut s, 10, vec![finished("a")]).unwrap();
    let out = checked_tick(&mut s, 500, vec![submit(gpu_job("a", 1, 60_000))]).unwrap();
    assert_eq!(out.rejected[0].error.kind, gangway::ErrorKind::DuplicateJob);
    let mut dep = gpu_job("b", 1, 60_000);
    dep.after = vec![Dependency {
        job: "a".into(),
        on: DependencyKind::Ok,
    }];
    let out = checked_tick(&mut s, 600, vec![submit(dep)]).unwrap();
    assert_eq!(
        started(&out.decisions),
        vec!["b"],
        "a completed, so b may run"
    );
    let out = checked_tick(&mut s, 1_010, vec![submit(gpu_job("a", 1, 60_000))]).unwrap();
    assert!(out.rejected.is_empty());
}

#[test]
fn snapshot_restore_continues_identically() {
    let mut original = cluster(r#", "policy": {"backfill": {"mode": "conservative"}}"#);
    checked_tick(
        &mut original,
        0,
        vec![
            submit(gpu_job("a", 4, 100_000)),
            submit(gpu_job("b", 4, 50_000)),
        ],
    )
    .unwrap();
    let json = serde_json::to_string(&original.snapshot()).unwrap();
    let mut restored = Scheduler::restore(serde_json::from_str(&json).unwrap()).unwrap();
    for (t, events) in [
        (
            10,
            vec![
                submit(gpu_job("c", 2, 30_000)),
                submit(gpu_job("d", 4, 30_000)),
            ],
        ),
        (50_000, vec![]),
        (100_000, vec![submit(gpu_job("e", 1, 10_000))]),
    ] {
        let a = checked_tick(&mut original, t, events.clone()).unwrap();
        let b = checked_tick(&mut restored, t, events).unwrap();
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            serde_json::to_string(&b).unwrap()
        );
        assert_eq!(original.explain(), restored.explain());
    }
}

#[test]
fn tick_earlier_than_previous_is_refused_whole() {
    let mut s = cluster("");
    checked_tick(&mut s, 100, vec![]).unwrap();
    let err = s.tick(99, vec![submit(gpu_job("a", 1, 1))]).unwrap_err();
    assert_eq!(
        err,
        TickError::TimeWentBackwards {
            previous_ms: 100,
            requested_ms: 99
        }
    );
    assert!(err.to_string().contains("earlier"));
    assert!(s.state().jobs().next().is_none());
}

/// `explain` numbers the pending jobs 1, 2, 3 … without gaps, whether the pass visited them
/// or a settled pass left them (the jobs it started leave the order), and names each job's
/// user and account as submitted (protocol.md, `explain`).
#[test]
fn explain_counts_the_pending_jobs_only_and_names_their_owners() {
    let mut s = cluster("");
    let owned = |mut job: JobSpec| {
        job.user = Some(format!("user-{}", job.id));
        job.account = Some("lab".into());
        submit(job)
    };
    // "a" and "c" start; "b" (two nodes' GPUs) waits with a reservation, "c" backfills before
    // it, and the rest wait behind it.
    let both_nodes = JobSpec::new("b", 60_000, 2).with_gpus(Milli::from_units(4));
    let mut events = vec![
        owned(gpu_job("a", 4, 60_000)),
        owned(both_nodes),
        owned(gpu_job("c", 4, 60_000)),
    ];
    events.extend((0..30).map(|i| submit(gpu_job(&format!("w{i:02}"), 4, 60_000))));
    checked_tick(&mut s, 0, events).unwrap();
    let pending = s.explain().pending;
    let positions: Vec<usize> = pending.iter().map(|p| p.position).collect();
    assert_eq!(positions, (1..=pending.len()).collect::<Vec<_>>());
    assert_eq!((pending[0].job.as_str(), pending[0].position), ("b", 1));
    assert_eq!(pending[0].user.as_deref(), Some("user-b"));
    assert_eq!(pending[0].account.as_deref(), Some("lab"));
    assert_eq!(pending[1].user, None, "a job naming no user has none");
    assert_eq!(pending.len(), 31);
    let json = serde_json::to_value(&pending[0]).unwrap();
    assert_eq!(
        (json["user"].as_str(), json["account"].as_str()),
        (Some("user-b"), Some("lab"))
    );
    assert!(
        serde_json::to_value(&pending[1])
            .unwrap()
            .get("user")
            .is_none()
    );
}
