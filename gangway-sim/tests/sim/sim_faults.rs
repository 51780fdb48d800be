//! The simulator with seeded faults on a small GPU-ML workload: after every tick the invariant
//! oracle runs, and at the end no resource is leaked and no job is lost.

use std::collections::BTreeMap;

use gangway::PendingReason;
use gangway::testkit::check_tick;
use gangway_sim::workload::gpu_ml::GpuMlParams;
use gangway_sim::{
    FaultOptions, JobStatus, Overrun, PolicyPreset, SimOptions, SimResult, Simulator, prepare,
};

/// What the last tick left: whether some node still holds resources, and every pending job
/// with its reason.
#[derive(Default)]
struct End {
    leaked: Vec<String>,
    pending: BTreeMap<String, PendingReason>,
}

fn simulate(faults: FaultOptions) -> (SimResult, End) {
    let workload = GpuMlParams {
        jobs: 200,
        seed: 5,
        ..GpuMlParams::default()
    }
    .generate()
    .unwrap();
    let (cluster, mut jobs) = prepare(&workload, None, PolicyPreset::Full, Overrun::Allow);
    // Half the jobs cannot be requeued: a lost node or an expired grace kills them.
    for job in jobs.iter_mut().skip(1).step_by(2) {
        job.spec.requeue = false;
    }
    let options = SimOptions {
        faults: Some(faults),
        ..SimOptions::default()
    };
    let mut end = End::default();
    let result = Simulator::new(cluster, jobs, options)
        .unwrap()
        .run(|view| {
            check_tick(view.scheduler, view.outcome)?;
            let state = view.scheduler.state();
            end.leaked = state
                .nodes()
                .filter(|n| n.used() != Default::default())
                .map(|n| n.name().to_string())
                .collect();
            end.pending = view
                .scheduler
                .pending_info()
                .iter()
                .map(|p| (p.job.clone(), p.reason))
                .collect();
            Ok(())
        })
        .unwrap();
    (result, end)
}

/// Nothing leaked, and every job ended or is pending with a reason.
fn check_nothing_lost(result: &SimResult, end: &End) {
    assert_eq!(
        end.leaked,
        Vec::<String>::new(),
        "nodes still hold resources"
    );
    for job in &result.jobs {
        match job.status {
            JobStatus::Completed | JobStatus::Killed | JobStatus::Cancelled => {
                assert!(job.end_ms.is_some(), "{} ended without an end", job.id);
            }
            JobStatus::Rejected => {}
            JobStatus::NeverStarted => assert!(
                end.pending.contains_key(&job.id),
                "{} neither ended nor is pending",
                job.id
            ),
        }
    }
    assert!(result.rejections.is_empty(), "{:?}", result.rejections);
}

/// Node failures often enough to hit running jobs: each of the workload's nodes fails about
/// every 12 hours and stays down 30 minutes.
fn node_failures(faults: &mut FaultOptions) {
    faults.node_mtbf_ms = 12 * 3_600_000;
    faults.node_repair_ms = 1_800_000;
}

#[test]
fn node_failures_requeue_or_kill_and_leak_nothing() {
    let mut faults = FaultOptions::none(1);
    node_failures(&mut faults);
    let (result, end) = simulate(faults);
    check_nothing_lost(&result, &end);
    assert!(result.faults.node_failures > 0);
    let requeued = result
        .executions
        .iter()
        .filter(|e| e.end == gangway_sim::ExecutionEnd::Requeued)
        .count();
    assert!(requeued > 0, "no running job was hit by a node failure");
}

#[test]
fn lost_stop_acknowledgements_end_at_grace_expiry() {
    let faults = FaultOptions {
        lose_stopped_permille: 1000,
        ..FaultOptions::none(2)
    };
    let (result, end) = simulate(faults);
    check_nothing_lost(&result, &end);
    assert!(result.faults.lost_stops > 0, "no preemption happened");
    assert!(result.faults.lost_stops <= result.preemptions);
    // No stop is ever acknowledged: the preempted jobs that did not complete first were ended
    // by the scheduler at grace expiry (requeued, or killed when not requeueable).
    let stopped = result
        .executions
        .iter()
        .filter(|e| e.end == gangway_sim::ExecutionEnd::Preempted)
        .count();
    let killed = result
        .jobs
        .iter()
        .filter(|j| j.status == JobStatus::Killed)
        .count();
    assert!(stopped + killed > 0, "no grace expired");
    assert_eq!(result.faults.late_events_rejected, 0);
}

#[test]
fn duplicated_events_are_refused_and_change_nothing() {
    let faults = FaultOptions {
        duplicate_permille: 300,
        ..FaultOptions::none(3)
    };
    let (result, end) = simulate(faults);
    check_nothing_lost(&result, &end);
    assert!(result.faults.duplicates > 0);
    // Submissions, completions and stops sent twice are all refused.
    assert_eq!(result.faults.duplicates_rejected, result.faults.duplicates);
    let (plain, _) = simulate(FaultOptions::none(3));
    let summary = |r: &SimResult| {
        r.jobs
            .iter()
            .map(|j| (j.first_start_ms, j.end_ms, j.status))
            .collect::<Vec<_>>()
    };
    assert_eq!(summary(&result), summary(&plain));
}

#[test]
fn reordered_events_leak_nothing() {
    let faults = FaultOptions {
        reorder: true,
        ..FaultOptions::none(4)
    };
    let (result, end) = simulate(faults);
    check_nothing_lost(&result, &end);
}

#[test]
fn all_faults_together_leak_nothing_and_repeat_exactly() {
    let mut faults = FaultOptions {
        lose_stopped_permille: 300,
        duplicate_permille: 100,
        reorder: true,
        ..FaultOptions::none(6)
    };
    node_failures(&mut faults);
    let (result, end) = simulate(faults.clone());
    check_nothing_lost(&result, &end);
    let counts = result.faults;
    assert!(counts.node_failures > 0 && counts.duplicates > 0);
    let (again, _) = simulate(faults);
    assert_eq!(again, result);
}

#[test]
fn slow_ready_starts_are_evicted_under_wait_for_ready_and_their_gpu_hours_counted() {
    let workload = GpuMlParams {
        jobs: 120,
        seed: 5,
        ..GpuMlParams::default()
    }
    .generate()
    .unwrap();
    let (mut cluster, jobs) = prepare(&workload, None, PolicyPreset::Full, Overrun::Allow);
    cluster.policy.wait_for_ready = Some(gangway::config::WaitForReadyConfig {
        timeout_ms: 600_000,
        backoff_limit: Some(2),
        ..Default::default()
    });
    let faults = FaultOptions {
        slow_ready_permille: 200,
        never_ready_permille: 100,
        slow_ready_ms: 1_200_000,
        ..FaultOptions::none(3)
    };
    let options = SimOptions {
        faults: Some(faults),
        ..SimOptions::default()
    };
    let result = Simulator::new(cluster, jobs, options)
        .unwrap()
        .run(|view| check_tick(view.scheduler, view.outcome))
        .unwrap();
    assert!(result.faults.ready_evictions > 0);
    assert!(result.faults.ready_lost_gpu_ms > 0);
    // Every job still ends: completed, or killed after its last requeue.
    assert!(
        result
            .jobs
            .iter()
            .all(|j| j.status != JobStatus::NeverStarted)
    );
}
