//! The workload readers on the shared traces (`../shared/traces` beside the crate). The expected
//! counts were computed independently of gangway, with a short awk/Python pass over each file
//! applying the documented rules. A missing trace skips the test with a note.

use std::path::PathBuf;

use crate::shared;
use gangway_sim::workload::{SkipReason, TracePlacement, Workload, alibaba, swf};

fn trace(relative: &str) -> Option<PathBuf> {
    shared::path(&format!("traces/{relative}"))
}

/// Reads an SWF trace and checks its machine, job and skip counts, and the job order.
fn check_swf(
    file: &str,
    nodes: usize,
    jobs: usize,
    skipped: &[(SkipReason, u64)],
) -> Option<Workload> {
    let path = trace(file)?;
    let workload = swf::from_path(&path, None).unwrap_or_else(|err| panic!("{file}: {err}"));
    assert_eq!(workload.nodes.len(), nodes, "{file}: nodes");
    assert!(
        workload.nodes.iter().all(|n| n.cpus_milli == 1000),
        "{file}: one-cpu nodes"
    );
    assert_eq!(workload.jobs.len(), jobs, "{file}: jobs");
    let mut want: Vec<(SkipReason, u64)> = skipped.to_vec();
    want.sort();
    assert_eq!(
        workload.skipped.iter().collect::<Vec<_>>(),
        want,
        "{file}: skipped"
    );
    let key = |j: &gangway_sim::workload::TraceJob| {
        (j.submit_ms, j.id.parse::<i64>().expect("numeric id"))
    };
    assert!(
        workload.jobs.windows(2).all(|w| key(&w[0]) < key(&w[1])),
        "{file}: order"
    );
    assert!(
        workload
            .jobs
            .iter()
            .all(|j| j.run_ms > 0 && j.time_limit_ms > 0 && j.tasks >= 1)
    );
    assert!(
        workload
            .jobs
            .iter()
            .all(|j| j.placement == TracePlacement::Spread)
    );
    Some(workload)
}

#[test]
fn hpc2n_all_202871_jobs_on_240_cpus() {
    let Some(workload) = check_swf("HPC2N-2002-2.2-cln.swf.gz", 240, 202_871, &[]) else {
        return;
    };
    // Field 13 (group) is known in this log, so every job has an account.
    assert!(
        workload
            .jobs
            .iter()
            .all(|j| j.account.starts_with('g') && j.user.starts_with('u'))
    );
}

#[test]
fn ctc_skips_17_zero_run_times_and_keeps_its_commented_machine() {
    // `; MaxNodes: 338 (batch partition; 512 total)` with `; MaxProcs: 338`.
    let Some(workload) = check_swf(
        "CTC-SP2-1996-3.1-cln.swf.gz",
        338,
        77_205,
        &[(SkipReason::NonPositiveRunTime, 17)],
    ) else {
        return;
    };
    // Line `1 0 588530 937 306 142.00 -1 -1 35100 -1 1 97 -1 307 3 -1 -1 -1`: requested
    // processors unknown, so the 306 allocated ones; group unknown, so no account.
    let first = &workload.jobs[0];
    assert_eq!(first.id, "1");
    assert_eq!(
        (first.submit_ms, first.run_ms, first.time_limit_ms),
        (0, 937_000, 35_100_000)
    );
    assert_eq!(
        (first.tasks, first.user.as_str(), first.account.as_str()),
        (306, "u97", "")
    );
}

#[test]
fn kth_skips_run_times_and_processors() {
    check_swf(
        "KTH-SP2-1996-2.1-cln.swf.gz",
        100,
        28_467,
        &[
            (SkipReason::NonPositiveRunTime, 8),
            (SkipReason::NonPositiveProcessors, 1),
        ],
    );
}

#[test]
fn sdsc_skips_5681_zero_run_times() {
    check_swf(
        "SDSC-SP2-1998-4.2-cln.swf.gz",
        128,
        54_034,
        &[(SkipReason::NonPositiveRunTime, 5_681)],
    );
}

#[test]
fn lublin_files_use_run_time_as_limit_on_256_nodes() {
    for file in ["lublin_256.swf", "lublin_256_new2.swf"] {
        let Some(workload) = check_swf(file, 256, 10_000, &[]) else {
            return;
        };
        // Requested time is −1 throughout: the limit is the run time; users are unknown.
        assert!(
            workload
                .jobs
                .iter()
                .all(|j| j.time_limit_ms == j.run_ms && j.user.is_empty())
        );
    }
}

fn alibaba_dir() -> Option<PathBuf> {
    trace("alibaba-gpu-2023")
}

#[test]
fn alibaba_node_lists() {
    let Some(dir) = alibaba_dir() else {
        return;
    };
    for (file, nodes, gpu_nodes) in [
        ("openb_node_list_gpu_node.csv", 1213, 1213),
        ("openb_node_list_all_node.csv", 1523, 1213),
    ] {
        let path = dir.join(file);
        let list =
            alibaba::read_nodes(std::fs::File::open(path).expect("readable")).expect("valid");
        assert_eq!(list.len(), nodes, "{file}");
        assert_eq!(
            list.iter().filter(|n| n.gpus > 0).count(),
            gpu_nodes,
            "{file}"
        );
        assert_eq!(
            list.iter().map(|n| u64::from(n.gpus)).sum::<u64>(),
            6212,
            "{file}"
        );
        assert!(
            list.iter().all(|n| (n.gpus > 0) == n.gpu_model.is_some()),
            "{file}"
        );
    }
}

/// Expected skip counts per reason.
type Skips = &'static [(SkipReason, u64)];

#[test]
fn alibaba_pod_lists() {
    let Some(dir) = alibaba_dir() else {
        return;
    };
    let cases: [(&str, usize, Skips); 4] = [
        (
            "openb_pod_list_default.csv",
            7_255,
            &[(SkipReason::NeverScheduled, 897)],
        ),
        (
            "openb_pod_list_gpuspec33.csv",
            7_254,
            &[
                (SkipReason::NeverScheduled, 897),
                (SkipReason::FitsNoNode, 1),
            ],
        ),
        (
            "openb_pod_list_gpushare100.csv",
            6_943,
            &[(SkipReason::NeverScheduled, 1_209)],
        ),
        (
            "openb_pod_list_multigpu50.csv",
            0,
            &[(SkipReason::MissingTimes, 9_061)],
        ),
    ];
    for (file, jobs, skipped) in cases {
        let (nodes, pods) = (dir.join("openb_node_list_gpu_node.csv"), dir.join(file));
        let workload =
            alibaba::from_paths(&nodes, &pods).unwrap_or_else(|err| panic!("{file}: {err}"));
        assert_eq!(workload.nodes.len(), 1213, "{file}");
        assert_eq!(workload.jobs.len(), jobs, "{file}");
        assert_eq!(
            workload.skipped.iter().collect::<Vec<_>>(),
            skipped,
            "{file}"
        );
        assert!(
            workload
                .jobs
                .windows(2)
                .all(|w| w[0].submit_ms <= w[1].submit_ms),
            "{file}"
        );
        assert!(
            workload.jobs.iter().all(|j| j.tasks == 1 && j.run_ms > 0),
            "{file}"
        );
    }
}

#[test]
fn alibaba_default_pods_keep_fractions_and_whole_gpus() {
    let Some(dir) = alibaba_dir() else {
        return;
    };
    let (nodes, pods) = (
        dir.join("openb_node_list_gpu_node.csv"),
        dir.join("openb_pod_list_default.csv"),
    );
    let workload = alibaba::from_paths(nodes, pods).expect("valid");
    // First row: `openb-pod-0000,12000,16384,1,1000,,LS,Running,0,12537496,0`.
    let first = workload
        .jobs
        .iter()
        .find(|j| j.id == "openb-pod-0000")
        .expect("scheduled pod");
    assert_eq!(
        (first.cpus_per_task_milli, first.memory_mib_per_task),
        (12_000, 16_384)
    );
    assert_eq!(
        (first.gpus_per_task_milli, first.run_ms),
        (1000, 12_537_496_000)
    );
    let fractional = workload
        .jobs
        .iter()
        .filter(|j| (1..1000).contains(&j.gpus_per_task_milli));
    let eight = workload
        .jobs
        .iter()
        .filter(|j| j.gpus_per_task_milli == 8000)
        .count();
    assert!(fractional.count() > 2000);
    assert!(eight > 0);
    let cluster = workload.cluster_config();
    assert_eq!(cluster.nodes.len(), 1213);
}
