//! Device-level events: `gpu_down` takes one GPU out of service (its jobs are requeued or killed,
//! it takes no new work) and `gpu_up` brings it back. Every tick runs the invariant oracle.

use crate::common;

use common::build::{finished, scheduler_from_str, submit};
use common::decisions::{rejected_kinds, starts};
use gangway::RequeueReason;
use gangway::model::Node;
use gangway::testkit::checked_tick;
use gangway::{Decision, ErrorKind, Event, JobSpec, KillReason, Milli, Scheduler, TickOutcome};

fn scheduler() -> Scheduler {
    scheduler_from_str(
        r#"{"nodes": [
            {"name": "g1", "cpus": 16, "memory_mib": 64000, "gpus": {"model": "a100", "count": 4}},
            {"name": "cpu1", "cpus": 16, "memory_mib": 64000}]}"#,
    )
}

fn job(id: &str, gpus: u64) -> JobSpec {
    JobSpec::new(id, 3_600_000, 1).with_gpus(Milli::from_units(gpus))
}

fn gpu_down(gpu: u32) -> Event {
    Event::GpuDown {
        node: "g1".into(),
        gpu,
    }
}

fn gpu_up(gpu: u32) -> Event {
    Event::GpuUp {
        node: "g1".into(),
        gpu,
    }
}

/// The GPUs of each `start` decision, in order.
fn started_gpus(out: &TickOutcome) -> Vec<(String, Vec<u32>)> {
    starts(&out.decisions)
        .into_iter()
        .map(|(job, placement)| {
            let devices = placement.iter().flat_map(|p| p.gpus.clone()).collect();
            (job.to_string(), devices)
        })
        .collect()
}

#[test]
fn a_job_on_a_lost_gpu_is_requeued_and_restarts_on_healthy_ones() {
    let mut s = scheduler();
    let out = checked_tick(&mut s, 0, vec![submit(job("a", 2))]).unwrap();
    assert_eq!(started_gpus(&out), [("a".to_string(), vec![0, 1])]);
    let out = checked_tick(&mut s, 1_000, vec![gpu_down(1)]).unwrap();
    assert_eq!(
        out.decisions[0],
        Decision::Requeue {
            job: "a".into(),
            reason: RequeueReason::GpuDown
        }
    );
    assert_eq!(started_gpus(&out), [("a".to_string(), vec![0, 2])]);
}

#[test]
fn a_job_that_cannot_be_requeued_is_killed() {
    let mut s = scheduler();
    let mut spec = job("a", 1);
    spec.requeue = false;
    checked_tick(&mut s, 0, vec![submit(spec)]).unwrap();
    let out = checked_tick(&mut s, 1_000, vec![gpu_down(0)]).unwrap();
    assert_eq!(
        out.decisions,
        [Decision::Kill {
            job: "a".into(),
            reason: KillReason::GpuDown
        }]
    );
    assert_eq!(
        serde_json::to_value(&out.decisions[0]).unwrap(),
        serde_json::json!({"type": "kill", "job": "a", "reason": "gpu_down"})
    );
}

#[test]
fn only_jobs_using_the_lost_gpu_are_touched() {
    let mut s = scheduler();
    let out = checked_tick(&mut s, 0, vec![submit(job("a", 2)), submit(job("b", 2))]).unwrap();
    assert_eq!(
        started_gpus(&out),
        [("a".to_string(), vec![0, 1]), ("b".to_string(), vec![2, 3])]
    );
    // b loses GPU 3; only GPU 2 is left for it, so it waits.
    let out = checked_tick(&mut s, 1_000, vec![gpu_down(3)]).unwrap();
    assert_eq!(
        out.decisions,
        [Decision::Requeue {
            job: "b".into(),
            reason: RequeueReason::GpuDown
        }]
    );
    let out = checked_tick(&mut s, 2_000, vec![gpu_up(3)]).unwrap();
    assert_eq!(started_gpus(&out), [("b".to_string(), vec![2, 3])]);
}

#[test]
fn a_down_gpu_takes_no_new_work_until_it_is_up() {
    let mut s = scheduler();
    let out = checked_tick(&mut s, 0, vec![gpu_down(0), submit(job("all", 4))]).unwrap();
    assert!(out.decisions.is_empty(), "{:?}", out.decisions);
    let out = checked_tick(&mut s, 1_000, vec![submit(job("three", 3))]).unwrap();
    assert_eq!(started_gpus(&out), [("three".to_string(), vec![1, 2, 3])]);
    // A repeated gpu_down changes nothing.
    let out = checked_tick(&mut s, 2_000, vec![gpu_down(0)]).unwrap();
    assert!(out.decisions.is_empty() && out.rejected.is_empty());
    let out = checked_tick(&mut s, 3_000, vec![gpu_up(0), finished("three")]).unwrap();
    assert_eq!(started_gpus(&out), [("all".to_string(), vec![0, 1, 2, 3])]);
}

#[test]
fn shared_and_exclusive_users_of_the_gpu_are_evicted() {
    let mut s = scheduler();
    let half = JobSpec::new("half", 3_600_000, 1).with_gpus(Milli::from_milli(500));
    let out = checked_tick(&mut s, 0, vec![submit(half)]).unwrap();
    assert_eq!(started_gpus(&out), [("half".to_string(), vec![0])]);
    let out = checked_tick(&mut s, 1_000, vec![gpu_down(0)]).unwrap();
    assert_eq!(out.decisions[0].job(), "half");
    assert!(matches!(out.decisions[0], Decision::Requeue { .. }));

    let mut s = scheduler();
    let mut whole = job("whole", 1);
    whole.exclusive = true;
    checked_tick(&mut s, 0, vec![submit(whole)]).unwrap();
    // The exclusive job holds every device, so losing GPU 3 (which it does not compute on)
    // evicts it too; it cannot restart on a node with a down GPU.
    let out = checked_tick(&mut s, 1_000, vec![gpu_down(3)]).unwrap();
    assert_eq!(
        out.decisions,
        [Decision::Requeue {
            job: "whole".into(),
            reason: RequeueReason::GpuDown
        }]
    );
}

#[test]
fn bad_gpu_events_are_rejected_alone() {
    let mut s = scheduler();
    let events = vec![
        Event::GpuDown {
            node: "nope".into(),
            gpu: 0,
        },
        gpu_down(4),
        Event::GpuUp {
            node: "cpu1".into(),
            gpu: 0,
        },
        submit(job("a", 4)),
    ];
    let out = checked_tick(&mut s, 0, events).unwrap();
    assert_eq!(
        rejected_kinds(&out),
        [
            (0, ErrorKind::UnknownNode),
            (1, ErrorKind::Invalid),
            (2, ErrorKind::Invalid)
        ]
    );
    assert_eq!(
        out.rejected[1].error.message,
        "gpu_down g1: gpu 4 does not exist (the node has 4 GPUs)"
    );
    assert_eq!(started_gpus(&out), [("a".to_string(), vec![0, 1, 2, 3])]);
}

#[test]
fn gpu_events_read_as_protocol_json() {
    let e: Event = serde_json::from_str(r#"{"type":"gpu_down","node":"g1","gpu":2}"#).unwrap();
    assert_eq!(e, gpu_down(2));
    let e: Event = serde_json::from_str(r#"{"type":"gpu_up","node":"g1","gpu":2}"#).unwrap();
    assert_eq!(e, gpu_up(2));
    assert_eq!(e.subject(), "g1");
}

#[test]
fn snapshots_keep_down_gpus_and_older_ones_read_as_all_up() {
    let mut s = scheduler();
    checked_tick(&mut s, 0, vec![gpu_down(2)]).unwrap();
    let snapshot = serde_json::to_value(s.snapshot()).unwrap();
    let mut json = snapshot["state"]["nodes"][0].clone();
    let node: Node = serde_json::from_value(json.clone()).unwrap();
    assert_eq!(json["down_gpus"], 4);
    assert_eq!(serde_json::from_value::<Node>(json.clone()).unwrap(), node);
    json.as_object_mut().unwrap().remove("down_gpus");
    let old: Node = serde_json::from_value(json).unwrap();
    assert_eq!(old.free_whole_gpus(), 4);
}

#[test]
fn a_node_remembers_its_recent_gpu_faults_across_repairs_and_snapshots() {
    let mut s = scheduler();
    checked_tick(&mut s, 1_000, vec![gpu_down(2)]).unwrap();
    checked_tick(&mut s, 2_000, vec![gpu_up(2)]).unwrap();
    checked_tick(&mut s, 5_000, vec![gpu_down(0)]).unwrap();
    let faults = |s: &Scheduler| {
        let node = s.state().nodes().next().unwrap();
        let faults: Vec<(u64, u32)> = node.gpu_faults().iter().map(|f| (f.at_ms, f.gpu)).collect();
        (faults, node.last_gpu_fault_ms())
    };
    let expected = (vec![(1_000, 2), (5_000, 0)], Some(5_000));
    assert_eq!(faults(&s), expected);
    let restored = Scheduler::restore(s.snapshot()).unwrap();
    assert_eq!(faults(&restored), expected);

    // A node recorded before nodes had a fault history reads as never faulty.
    let snapshot = serde_json::to_value(s.snapshot()).unwrap();
    let mut json = snapshot["state"]["nodes"][0].clone();
    json.as_object_mut().unwrap().remove("gpu_faults");
    let old: Node = serde_json::from_value(json).unwrap();
    assert!(old.gpu_faults.is_empty());
}
