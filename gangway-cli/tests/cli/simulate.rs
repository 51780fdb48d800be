//! `gangway simulate` as a newcomer runs it: the built binary on the built-in workload (shrunk
//! with the hidden `--jobs` to keep debug runs fast), on the committed KTH excerpt and on every
//! trace of ../shared/traces (skipped with a note where it is absent).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::shared;

/// The first 200 jobs of the KTH SP2 log (gangway-sim/tests/fixtures/README.md).
const KTH_200: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../gangway-sim/tests/fixtures/KTH-SP2-1996-2.1-cln-first200.swf"
);

fn gangway(args: &[&str]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_gangway"))
        .args(args)
        .output()
        .expect("run gangway");
    assert!(
        output.status.success(),
        "gangway {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli_simulate");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn gpu_ml_run_prints_the_policy_table() {
    let text = stdout(&gangway(&[
        "simulate",
        "--workload",
        "gpu-ml",
        "--jobs",
        "200",
    ]));
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "workload gpu-ml (seed 1): 200 jobs on 64 nodes (512 GPUs)"
    );
    let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["ssh", "fcfs", "easy", "conservative", "full"]);
    for label in [
        "jobs started",
        "wait p95",
        "completion mean",
        "bounded slowdown",
        "GPU utilization",
        "GPU-hours idle while waiting",
        "makespan",
        "preemptions",
        "GPU-hours lost",
        "  to preemption",
        "hours contended",
        "share when contended vision (40%)",
    ] {
        let row = text
            .lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("no row {label:?} in\n{text}"));
        assert_eq!(row[label.len()..].split_whitespace().count(), 5, "{row}");
    }
    // Every job ran under every policy: the whole-run shares are the workload's, given once
    // below the table.
    let (table, below) = text
        .split_once("the same under every policy (so they measure the workload, not the policy):\n")
        .unwrap_or_else(|| panic!("no workload rows in\n{text}"));
    assert!(!table.contains("share vision (40%)"), "{text}");
    for label in ["Jain's index", "share vision (40%)"] {
        assert_eq!(row(below, label).len(), 1, "{label}: {text}");
    }
    let started = text
        .lines()
        .find(|l| l.starts_with("jobs started"))
        .unwrap();
    assert!(started.split_whitespace().skip(2).all(|n| n == "200"));
}

/// Hours in a duration cell of the table (`42s`, `12.5m`, `3.20h`, `2.15d`).
fn hours(cell: &str) -> f64 {
    let (number, unit) = cell.split_at(cell.len() - 1);
    let value: f64 = number.parse().unwrap();
    value
        * match unit {
            "s" => 1.0 / 3600.0,
            "m" => 1.0 / 60.0,
            "h" => 1.0,
            "d" => 24.0,
            _ => panic!("unit of {cell:?}"),
        }
}

/// Issue 19's "done when": with no arguments, five columns on the contended team workload;
/// `ssh` waits at least twice as long on average as `full`, and `full`'s shares when contended
/// are closer to the targets than `fcfs`'s.
#[test]
fn default_run_compares_no_scheduler_with_four_policies_on_the_team_workload() {
    let text = stdout(&gangway(&["simulate"]));
    let mut lines = text.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("workload team (seed 1): "),
        "{text}"
    );
    let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["ssh", "fcfs", "easy", "conservative", "full"]);
    let waits: Vec<f64> = row(&text, "wait mean").into_iter().map(hours).collect();
    assert!(
        waits[0] >= 2.0 * waits[4],
        "ssh {} h, full {} h",
        waits[0],
        waits[4]
    );
    let mut distance = [0.0f64; 5];
    let mut teams = 0;
    for line in text
        .lines()
        .filter(|l| l.starts_with("share when contended "))
    {
        let open = line.find('(').unwrap();
        let close = line.find("%)").unwrap();
        let target: f64 = line[open + 1..close].parse().unwrap();
        let cells: Vec<f64> = line[close + 2..]
            .split_whitespace()
            .map(|c| c.trim_end_matches('%').parse().unwrap())
            .collect();
        for (d, share) in distance.iter_mut().zip(&cells) {
            *d += (share - target).abs();
        }
        teams += 1;
    }
    assert_eq!(teams, 4, "{text}");
    assert!(
        distance[4] < distance[1],
        "full {} points from the targets, fcfs {}",
        distance[4],
        distance[1]
    );
}

#[test]
fn sweep_refuses_a_workload_and_ssh_options_are_checked() {
    for (args, message) in [
        (&["simulate", "--sweep", "--trace", KTH_200][..], "--trace"),
        (&["simulate", "--collision-rate", "1"][..], "below 1"),
        (&["simulate", "--work-hours", "19-9"][..], "end before"),
        (&["simulate", "--evening", "25"][..], "0 to 23"),
        (
            &["simulate", "--check-interval", "0"][..],
            "--check-interval",
        ),
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_gangway"))
            .args(args)
            .output()
            .unwrap();
        assert!(!output.status.success(), "{args:?} succeeded");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
}

/// The row of `label` split into its values, one per policy.
fn row<'a>(text: &'a str, label: &str) -> Vec<&'a str> {
    let line = text
        .lines()
        .find(|l| l.starts_with(label))
        .unwrap_or_else(|| panic!("no row {label:?} in\n{text}"));
    line[label.len()..].split_whitespace().collect()
}

#[test]
fn heavy_tailed_workload_prints_the_policy_table() {
    let text = stdout(&gangway(&[
        "simulate",
        "--workload",
        "gpu-ml-heavy-tail",
        "--jobs",
        "200",
    ]));
    assert_eq!(
        text.lines().next().unwrap(),
        "workload gpu-ml-heavy-tail (seed 1): 200 jobs on 64 nodes (512 GPUs)"
    );
    let header: Vec<&str> = text.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(header, ["ssh", "fcfs", "easy", "conservative", "full"]);
    for label in ["jobs started", "completed"] {
        assert_eq!(row(&text, label), ["200"; 5], "{label}\n{text}");
    }
    assert_eq!(row(&text, "killed"), ["0"; 5]);
    assert_eq!(row(&text, "wait p95").len(), 5);
    // Every limit is the partition maximum, at or above every run time: killing overruns
    // kills nothing, and the seed alone decides the schedule.
    let kill = [
        "simulate",
        "--workload",
        "gpu-ml-heavy-tail",
        "--jobs",
        "200",
        "--seed",
        "5",
        "--policy",
        "easy",
        "--overrun",
        "kill",
    ];
    let first = stdout(&gangway(&kill));
    assert!(first.starts_with("workload gpu-ml-heavy-tail (seed 5): 200 jobs"));
    assert_eq!(row(&first, "killed"), ["0"]);
    assert_eq!(first, stdout(&gangway(&kill)));
}

#[test]
fn a_policy_list_compares_its_policies_in_order() {
    let list = [
        "simulate",
        "--workload",
        "gpu-ml-heavy-tail",
        "--jobs",
        "200",
        "--seed",
        "10",
        "--policy",
        "fcfs,easy,sjf,las",
    ];
    let text = stdout(&gangway(&list));
    let header: Vec<&str> = text.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(header, ["fcfs", "easy", "sjf", "las"]);
    for label in [
        "completed",
        "wait p95",
        "completion mean",
        "preemptions",
        "GPU-hours lost",
        "  to preemption",
    ] {
        assert_eq!(row(&text, label).len(), 4, "{label}\n{text}");
    }
    assert_eq!(row(&text, "completed"), ["200"; 4], "{text}");
    // Only LAS preempts (order-based, when a job of a less served queue waits), and each
    // preemption costs the GPUs held until the victim has stopped.
    let preemptions = row(&text, "preemptions");
    assert_eq!(preemptions[..3], ["0"; 3], "{text}");
    assert_ne!(preemptions[3], "0", "{text}");
    let lost = row(&text, "  to preemption");
    assert_eq!(lost[..3], ["0.0"; 3], "{text}");
    assert!(lost[3].parse::<f64>().unwrap() > 0.0, "{text}");
    // Every time limit is the same, so shortest-first is FIFO: the same as EASY.
    for label in ["wait p95", "completion mean", "makespan"] {
        let cells = row(&text, label);
        assert_eq!(cells[1], cells[2], "{label}\n{text}");
    }
    // A single name still works, and gives the list's column.
    let mut single = list;
    single[8] = "las";
    let alone = stdout(&gangway(&single));
    assert_eq!(alone.lines().nth(1).unwrap().trim(), "las");
    for label in ["completion mean", "preemptions", "  to preemption"] {
        assert_eq!(row(&alone, label), row(&text, label)[3..], "{label}");
    }
    for (policies, message) in [
        ("easy,nope", "fcfs, easy, conservative, full, sjf, las"),
        ("easy,easy", "twice"),
        ("easy,", "\"\""),
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_gangway"))
            .args(["simulate", "--jobs", "10", "--policy", policies])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{policies}");
        assert!(stderr.contains(message), "{policies}: {stderr}");
    }
}

#[test]
fn workload_team_is_the_default_and_conflicts_with_a_trace() {
    let plain = stdout(&gangway(&["simulate", "--jobs", "100", "--policy", "easy"]));
    let named = stdout(&gangway(&[
        "simulate",
        "--workload",
        "team",
        "--jobs",
        "100",
        "--policy",
        "easy",
    ]));
    assert_eq!(plain, named);
    for args in [
        &["simulate", "--workload", "gpu-ml", "--trace", KTH_200][..],
        &["simulate", "--workload", "heavy"][..],
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_gangway"))
            .args(args)
            .output()
            .unwrap();
        assert!(!output.status.success(), "{args:?} succeeded");
        assert!(
            String::from_utf8_lossy(&output.stderr).contains("--workload"),
            "{args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

#[test]
fn faults_add_their_rows_and_repeat_with_their_seed() {
    let args = [
        "simulate", "--jobs", "200", "--policy", "easy", "--faults", "3",
    ];
    let text = stdout(&gangway(&args));
    for label in [
        "reservation violations",
        "node failures",
        "lost stop acks",
        "duplicates refused",
    ] {
        assert!(
            text.lines().any(|l| l.starts_with(label)),
            "no row {label:?} in\n{text}"
        );
    }
    let failures = text
        .lines()
        .find(|l| l.starts_with("node failures"))
        .unwrap();
    assert_ne!(failures.split_whitespace().last(), Some("0"), "{failures}");
    assert_eq!(stdout(&gangway(&args)), text);
    let plain = stdout(&gangway(&["simulate", "--jobs", "200", "--policy", "easy"]));
    assert!(!plain.contains("node failures"), "{plain}");
    assert!(plain.contains("reservation violations"), "{plain}");
}

#[test]
fn one_policy_writes_schedule_report_and_plot() {
    let (csv, json, svg) = (
        scratch("easy.csv"),
        scratch("easy.json"),
        scratch("easy.svg"),
    );
    let args = [
        "simulate",
        "--jobs",
        "100",
        "--policy",
        "easy",
        "--seed",
        "7",
        "--schedule-out",
        csv.to_str().unwrap(),
        "--report",
        json.to_str().unwrap(),
        "--plot",
        svg.to_str().unwrap(),
    ];
    let text = stdout(&gangway(&args));
    assert_eq!(text.lines().nth(1).unwrap().trim(), "easy");
    let schedule = std::fs::read_to_string(&csv).unwrap();
    let mut rows = schedule.lines();
    assert_eq!(
        rows.next().unwrap(),
        "job,account,submit_ms,start_ms,end_ms,tasks,gpus,nodes"
    );
    assert_eq!(rows.count(), 100);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["jobs"], 100);
    assert_eq!(report["runs"][0]["policy"], "easy");
    assert_eq!(report["runs"][0]["metrics"]["jobs"]["completed"], 100);
    let plot = std::fs::read_to_string(&svg).unwrap();
    assert!(plot.starts_with("<svg") && plot.contains("jobs waiting"));
    // Same seed, same schedule.
    gangway(&args);
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), schedule);
}

#[test]
fn window_takes_count_jobs_from_start() {
    let csv = scratch("window.csv");
    let text = stdout(&gangway(&[
        "simulate",
        "--trace",
        KTH_200,
        "--window",
        "100:50",
        "--policy",
        "fcfs",
        "--schedule-out",
        csv.to_str().unwrap(),
    ]));
    assert!(
        text.starts_with("workload KTH-SP2-1996-2.1-cln-first200.swf: 50 jobs on 100 nodes"),
        "{text}"
    );
    let schedule = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(schedule.lines().count(), 51);
    // The excerpt's job numbers run from 15 in submit order: jobs 115..=164.
    let mut ids: Vec<u64> = schedule
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap().parse().unwrap())
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, (115..=164).collect::<Vec<_>>());
}

#[test]
fn every_shared_trace_replays() {
    let Some(dir) = shared::path("traces") else {
        return;
    };
    let mut traces: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains(".swf"))
        .collect();
    let alibaba = dir.join("alibaba-gpu-2023");
    traces.extend(
        std::fs::read_dir(&alibaba)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().contains("pod_list")),
    );
    traces.sort();
    assert_eq!(traces.len(), 10, "{traces:?}");
    // Each run reads its whole trace (HPC2N: 202,871 jobs), so they run side by side.
    std::thread::scope(|scope| {
        for trace in &traces {
            scope.spawn(move || replays(trace));
        }
    });
}

fn replays(trace: &Path) {
    let text = stdout(&gangway(&[
        "simulate",
        "--trace",
        trace.to_str().unwrap(),
        "--window",
        "0:500",
        "--policy",
        "easy",
    ]));
    if text.contains(": 0 jobs on") {
        // A pod list without times (multigpu50) has nothing to replay: every pod is reported
        // as skipped.
        assert!(
            text.contains("missing_times"),
            "{}: {text}",
            trace.display()
        );
        return;
    }
    let started = text
        .lines()
        .find(|l| l.starts_with("jobs started"))
        .unwrap_or_else(|| panic!("{}: {text}", trace.display()));
    let started: u64 = started.split_whitespace().last().unwrap().parse().unwrap();
    assert!(
        started > 400,
        "{}: only {started} started\n{text}",
        trace.display()
    );
}

#[test]
fn bad_options_fail_with_a_message() {
    let output = Command::new(env!("CARGO_BIN_EXE_gangway"))
        .args(["simulate", "--trace", "no/such.swf"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("no/such.swf"));
    let output = Command::new(env!("CARGO_BIN_EXE_gangway"))
        .args(["simulate", "--window", "5"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&output.stderr).contains("START:COUNT"));
}

/// A reader that stops early (`gangway simulate | head -1`) ends the run quietly: no panic, a
/// successful exit.
#[test]
fn a_closed_standard_output_is_not_a_crash() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gangway"))
        .args([
            "simulate", "--trace", KTH_200, "--window", "0:50", "--policy", "fcfs",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run gangway");
    drop(child.stdout.take());
    let output = child.wait_with_output().expect("wait for gangway");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(output.status.success(), "{:?}: {stderr}", output.status);
}

/// Writes a machine file of `nodes` nodes of `gpus` A100s, `cpus` cpus and `memory` MiB.
fn machine_file(name: &str, nodes: u32, gpus: u32, cpus: u32, memory: u64) -> PathBuf {
    let list: Vec<String> = (1..=nodes)
        .map(|k| {
            format!(
                r#"{{"name": "n{k}", "cpus": {cpus}, "memory_mib": {memory},
                    "gpus": {{"model": "a100", "count": {gpus}}}}}"#
            )
        })
        .collect();
    let path = scratch(name);
    std::fs::write(&path, format!(r#"{{"nodes": [{}]}}"#, list.join(","))).unwrap();
    path
}

/// Issue 27, item 1: a lab's own machine (4 × 8 A100 with 512,000 MiB, 4 × 4 with 256,000)
/// runs every job of the team workload, with its teams' shares and quotas.
#[test]
fn a_machine_file_runs_every_team_job_with_the_team_shares() {
    for (name, gpus, cpus, memory) in [("lab8.json", 8, 64, 512_000), ("lab4.json", 4, 32, 256_000)]
    {
        let file = machine_file(name, 4, gpus, cpus, memory);
        let report = scratch(&format!("{name}.report.json"));
        let text = stdout(&gangway(&[
            "simulate",
            "--cluster",
            file.to_str().unwrap(),
            "--jobs",
            "150",
            "--report",
            report.to_str().unwrap(),
        ]));
        assert!(!text.contains("warning"), "{name}: {text}");
        assert_eq!(row(&text, "never started"), ["0"; 5], "{name}: {text}");
        assert_eq!(row(&text, "completed"), ["150"; 5], "{name}: {text}");
        assert!(text.contains("share vision (40%)"), "{name}: {text}");
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
        for run in json["runs"].as_array().unwrap() {
            assert_eq!(
                run["metrics"]["rejections"],
                serde_json::json!([]),
                "{name}"
            );
        }
    }
}

/// Issue 27, item 1: jobs the machine can never run are counted by reason and printed before
/// the table, with one job's request and the machine's largest node.
#[test]
fn rejections_are_counted_by_reason_before_the_table() {
    let tiny = scratch("tiny.json");
    std::fs::write(
        &tiny,
        r#"{"nodes": [{"name": "x", "cpus": 8, "memory_mib": 1000}]}"#,
    )
    .unwrap();
    let report = scratch("tiny.report.json");
    let text = stdout(&gangway(&[
        "simulate",
        "--trace",
        KTH_200,
        "--cluster",
        tiny.to_str().unwrap(),
        "--policy",
        "easy,fcfs",
        "--report",
        report.to_str().unwrap(),
    ]));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[1],
        "warning: 81 of 200 jobs can never run here (under every policy): refused at submit, \
         counted as never started",
        "{text}"
    );
    assert!(
        lines[2].trim_start().starts_with("81  unsatisfiable: "),
        "{text}"
    );
    assert!(lines[2].contains("(e.g. job "), "{text}");
    assert!(lines[2].contains("tasks of 1 cpu)"), "{text}");
    assert_eq!(lines[3], "  the machine: 1 node, with 8 cpus, 1000 MiB");
    assert_eq!(
        lines[4].split_whitespace().collect::<Vec<_>>(),
        ["easy", "fcfs"]
    );
    assert_eq!(row(&text, "never started"), ["81", "81"]);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(json["runs"][0]["metrics"]["rejections"][0]["jobs"], 81);
}

/// Issue 27, item 1: with `--strict` any job refused at submit, or left out by a history
/// reader because no node holds it, is an error, and no table is printed.
#[test]
fn strict_makes_any_rejection_an_error() {
    let tiny = scratch("tiny-strict.json");
    std::fs::write(&tiny, r#"{"nodes": [{"name": "x", "cpus": 8}]}"#).unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_gangway"))
            .args(args)
            .output()
            .unwrap()
    };
    let output = run(&[
        "simulate",
        "--trace",
        KTH_200,
        "--cluster",
        tiny.to_str().unwrap(),
        "--strict",
    ]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--strict: warning: 81 of 200 jobs"),
        "{stderr}"
    );
    assert!(!stdout(&output).contains("jobs started"));
    // The sacct sample on 4-GPU nodes: 16 jobs ask for more GPUs than a node has.
    let small = machine_file("small-strict.json", 4, 4, 32, 256_000);
    let sacct = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../gangway-sim/tests/fixtures/history-sacct.txt"
    );
    let args = [
        "simulate",
        "--trace",
        sacct,
        "--cluster",
        small.to_str().unwrap(),
    ];
    let lenient = stdout(&gangway(&args));
    assert!(
        lenient.contains("warning: 16 jobs of the trace can never run here"),
        "{lenient}"
    );
    let output = run(&[&args[..], &["--strict"]].concat());
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--strict: 16 jobs"));
    // Without --strict the team workload on a machine without GPUs is an error all the same.
    let output = run(&["simulate", "--cluster", tiny.to_str().unwrap()]);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("no GPU node"));
}

/// Issue 27, item 3: the plain run ends with a verdict by the sweep's rule, with the numbers
/// that decide it.
#[test]
fn the_plain_run_ends_with_a_verdict_by_the_sweep_rule() {
    let text = stdout(&gangway(&["simulate"]));
    let verdict = text
        .lines()
        .find(|l| l.starts_with("verdict: "))
        .unwrap_or_else(|| panic!("no verdict in\n{text}"));
    let waits = row(&text, "wait mean");
    assert!(
        verdict.starts_with(&format!(
            "verdict: a scheduler pays off here: with full against ssh, mean wait {} → {} (-",
            waits[0], waits[4]
        )),
        "{verdict}"
    );
    assert!(
        text.contains("The sweep's rule: a scheduler pays off when it cuts the mean wait by 25%")
    );
    // The CSV sample on its own machine (room for every job at once): nobody waits, so not yet.
    let csv = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../gangway-sim/tests/fixtures/history-jobs.csv"
    );
    let text = stdout(&gangway(&[
        "simulate", "--trace", csv, "--policy", "ssh,easy",
    ]));
    assert!(
        text.contains("verdict: not yet: no scheduler is needed here: with easy against ssh, mean wait 0s → 0s (0%)"),
        "{text}"
    );
    // Without ssh there is nothing to judge against.
    let text = stdout(&gangway(&[
        "simulate",
        "--trace",
        csv,
        "--policy",
        "fcfs,easy",
    ]));
    assert!(!text.contains("verdict"), "{text}");
}

/// Issue 27, item 3: rows that differ between policies stay in the table. Killing jobs at
/// their limits under some policies (`ssh` never kills) changes the whole-run shares.
#[test]
fn shares_that_differ_between_policies_stay_in_the_table() {
    let text = stdout(&gangway(&[
        "simulate",
        "--trace",
        KTH_200,
        "--policy",
        "ssh,easy",
        "--overrun",
        "kill",
    ]));
    assert!(!text.contains("the same under every policy"), "{text}");
    let jain = row(&text, "Jain's index");
    assert_eq!(jain.len(), 2, "{text}");
    assert_ne!(jain[0], jain[1], "{text}");
}

/// Issue 27, item 8: the help names the default workload the binary really runs.
#[test]
fn the_help_names_the_real_default_workload() {
    let ran = stdout(&gangway(&["simulate", "--jobs", "5", "--policy", "easy"]));
    let first = ran.lines().next().unwrap();
    let default = first
        .strip_prefix("workload ")
        .and_then(|rest| rest.split(' ').next())
        .unwrap_or_else(|| panic!("{first}"));
    assert_eq!(default, "team");
    let top = stdout(&gangway(&["--help"]));
    assert!(
        top.contains(&format!(
            "Replay a workload (the built-in {default} one, or a trace)"
        )),
        "{top}"
    );
    let help = stdout(&gangway(&["simulate", "--help"]));
    assert!(
        help.contains(&format!(
            "Default: the built-in {default} workload (`--workload`)"
        )),
        "{help}"
    );
    assert!(help.contains(&format!("Default: {default} (")), "{help}");
    for text in [&top, &help] {
        assert!(!text.to_lowercase().contains("built-in gpu-ml"), "{text}");
    }
}

/// Issue 27, item 8: each file written is named on stdout, and a path that cannot be written
/// fails before the simulation runs.
#[test]
fn written_files_are_named_and_bad_paths_fail_first() {
    let (plot, report) = (scratch("named.svg"), scratch("named.json"));
    let schedule = scratch("named.csv");
    let text = stdout(&gangway(&[
        "simulate",
        "--jobs",
        "20",
        "--policy",
        "easy,fcfs",
        "--plot",
        plot.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
        "--schedule-out",
        schedule.to_str().unwrap(),
    ]));
    for line in [
        format!("schedule: {}", scratch("named.easy.csv").display()),
        format!("schedule: {}", scratch("named.fcfs.csv").display()),
        format!("report: {}", report.display()),
        format!("plot: {}", plot.display()),
    ] {
        assert!(text.lines().any(|l| l == line), "{line:?} in\n{text}");
    }
    let missing = scratch("no-such-dir").join("x.svg");
    let output = Command::new(env!("CARGO_BIN_EXE_gangway"))
        .args([
            "simulate",
            "--jobs",
            "20",
            "--plot",
            missing.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("cannot create"));
    // Before the run: nothing simulated, no table.
    assert!(!String::from_utf8_lossy(&output.stderr).contains("simulated"));
    assert!(!stdout(&output).contains("jobs started"));
}

/// Issue 27, item 8: an sacct export with only its header, and sacct's fixed-width output,
/// are errors that say what is wrong.
#[test]
fn an_empty_history_and_fixed_width_sacct_are_clear_errors() {
    let fails = |path: &Path| {
        let output = Command::new(env!("CARGO_BIN_EXE_gangway"))
            .args(["simulate", "--trace", path.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1));
        String::from_utf8_lossy(&output.stderr).to_string()
    };
    let header = scratch("header-only.txt");
    std::fs::write(
        &header,
        "JobID|User|Account|Submit|Start|End|Timelimit|AllocTRES\n",
    )
    .unwrap();
    assert!(fails(&header).contains("no job to replay"));
    let fixed = scratch("fixed-width.txt");
    std::fs::write(
        &fixed,
        "JobID           User    Account     Submit\n\
         ------------ --------- ---------- -------------------\n\
         4101          ana     vision 2024-03-04T09:12:00\n",
    )
    .unwrap();
    let message = fails(&fixed);
    assert!(message.contains("fixed-width"), "{message}");
    assert!(message.contains("--parsable2"), "{message}");
}

/// Issue 27, item 2: a lab lead's own team from the command line and from a JSON team file.
#[test]
fn your_own_team_from_options_and_a_team_file() {
    let report = scratch("own-team.json");
    let text = stdout(&gangway(&[
        "simulate",
        "--users",
        "6",
        "--nodes",
        "4",
        "--gpus-per-node",
        "4",
        "--gpu-model",
        "h100",
        "--weeks",
        "1",
        "--load",
        "1.0",
        "--policy",
        "ssh,full",
        "--report",
        report.to_str().unwrap(),
    ]));
    assert!(text.starts_with("workload team (seed 1): "), "{text}");
    assert!(
        text.lines()
            .next()
            .unwrap()
            .ends_with("jobs on 4 nodes (16 GPUs)"),
        "{text}"
    );
    assert!(text.contains("verdict: "), "{text}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let accounts: Vec<&str> = json["runs"][0]["metrics"]["accounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["account"].as_str().unwrap())
        .collect();
    assert_eq!(accounts, ["u01", "u02", "u03", "u04", "u05", "u06"]);
    // More load, more jobs.
    let jobs = |load: &str| -> u64 {
        let text = stdout(&gangway(&[
            "simulate", "--users", "6", "--weeks", "1", "--load", load, "--policy", "easy",
        ]));
        let first = text.lines().next().unwrap();
        first
            .split(": ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    assert!(jobs("2.0") > 3 * jobs("0.5"));
    // Teams with shares, users and quotas.
    let text = stdout(&gangway(&[
        "simulate",
        "--teams",
        "vision:3:2:6,speech:1:1",
        "--weeks",
        "1",
        "--policy",
        "full",
    ]));
    assert!(text.contains("share vision (75%)"), "{text}");
    // A team file, with an option over it.
    let file = scratch("team-file.json");
    std::fs::write(
        &file,
        r#"{"users": 3, "nodes": 2, "gpus_per_node": 8, "weeks": 1}"#,
    )
    .unwrap();
    let text = stdout(&gangway(&[
        "simulate",
        "--team-file",
        file.to_str().unwrap(),
        "--nodes",
        "1",
        "--policy",
        "easy",
    ]));
    assert!(
        text.lines()
            .next()
            .unwrap()
            .ends_with("jobs on 1 nodes (8 GPUs)"),
        "{text}"
    );
    assert!(text.contains("share u03"), "{text}");
}

/// Issue 27, item 2: bad team options are clear errors.
#[test]
fn bad_team_options_are_clear_errors() {
    let fails = |args: &[&str], message: &str| {
        let output = Command::new(env!("CARGO_BIN_EXE_gangway"))
            .args(args)
            .output()
            .unwrap();
        assert!(!output.status.success(), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    };
    fails(
        &["simulate", "--teams", "vision"],
        "expected NAME:SHARES[:USERS[:QUOTA]]",
    );
    fails(
        &["simulate", "--teams", "vision:x"],
        "shares \"x\" is not a whole number",
    );
    fails(
        &["simulate", "--users", "2", "--teams", "a:1"],
        "cannot be used with",
    );
    fails(&["simulate", "--load", "0"], "expected a positive number");
    fails(
        &["simulate", "--workload", "gpu-ml", "--users", "3"],
        "not --workload gpu-ml",
    );
    fails(&["simulate", "--nodes", "0"], "nodes must be 1 to");
    fails(
        &["simulate", "--sweep", "--users", "3"],
        "--sweep draws its own teams",
    );
    let bad = scratch("bad-team.json");
    std::fs::write(&bad, r#"{"user": 6}"#).unwrap();
    fails(
        &["simulate", "--team-file", bad.to_str().unwrap()],
        "unknown field `user`",
    );
}

/// Issue 27, item 2: the sweep takes its grid and writes its table as CSV or JSON.
#[test]
fn the_sweep_takes_its_grid_and_writes_csv_and_json() {
    let (csv, json, plot) = (
        scratch("grid.csv"),
        scratch("grid.json"),
        scratch("grid.svg"),
    );
    for report in [&csv, &json] {
        let text = stdout(&gangway(&[
            "simulate",
            "--sweep",
            "--sweep-gpus",
            "8,16",
            "--sweep-users",
            "2,6",
            "--plot",
            plot.to_str().unwrap(),
            "--report",
            report.to_str().unwrap(),
        ]));
        assert_eq!(
            text.lines()
                .filter(|l| l.starts_with("   8 ") || l.starts_with("  16 "))
                .count(),
            4,
            "{text}"
        );
        assert!(
            text.contains(&format!("report: {}", report.display())),
            "{text}"
        );
    }
    let table = std::fs::read_to_string(&csv).unwrap();
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 5, "{table}");
    assert!(lines[0].starts_with("gpus,users,jobs,baseline,policy,wait_baseline_s,"));
    assert!(lines[3].starts_with("8,6,"), "{table}");
    assert!(
        lines[1..].iter().all(|l| l.contains(",ssh,full,")),
        "{table}"
    );
    let rows: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(rows.as_array().unwrap().len(), 4);
    assert_eq!(rows[3]["users"], 6);
    assert_eq!(rows[3]["gpus"], 16);
    assert_eq!(
        (&rows[3]["baseline"], &rows[3]["policy"]),
        (&"ssh".into(), &"full".into())
    );
    assert!(rows[3]["wait_baseline_s"].as_f64().unwrap() >= 0.0);
    assert!(rows[3]["idle_policy_hours"].as_f64().unwrap() >= 0.0);
}

/// Issue 27: the sweep takes any policies the plain run does; the first is the baseline, one
/// alone is compared with ssh, and the table, CSV and JSON name them.
#[test]
fn the_sweep_compares_any_policies_with_the_first() {
    let (csv, json, plot) = (
        scratch("policies.csv"),
        scratch("policies.json"),
        scratch("policies.svg"),
    );
    let run = |policy: &str, report: &Path| {
        stdout(&gangway(&[
            "simulate",
            "--sweep",
            "--sweep-gpus",
            "8",
            "--sweep-users",
            "2,6",
            "--policy",
            policy,
            "--plot",
            plot.to_str().unwrap(),
            "--report",
            report.to_str().unwrap(),
            "-q",
        ]))
    };
    let text = run("fcfs,easy,conservative", &csv);
    assert!(
        text.lines()
            .next()
            .unwrap()
            .ends_with("; fcfs against easy, conservative"),
        "{text}"
    );
    let header = text.lines().nth(1).unwrap();
    assert!(
        header.contains("policy") && header.contains("wait fcfs") && header.contains("idle fcfs"),
        "{text}"
    );
    let rows = sweep_rows(&text);
    let cells: Vec<(&str, &str, &str)> = rows.iter().map(|r| (r[0], r[1], r[3])).collect();
    assert_eq!(
        cells,
        [
            ("8", "2", "easy"),
            ("8", "2", "conservative"),
            ("8", "6", "easy"),
            ("8", "6", "conservative")
        ],
        "{text}"
    );
    let table = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(table.lines().count(), 5, "{table}");
    assert!(
        table
            .lines()
            .skip(1)
            .all(|l| l.contains(",fcfs,easy,") || l.contains(",fcfs,conservative,")),
        "{table}"
    );
    let svg = std::fs::read_to_string(&plot).unwrap();
    assert!(
        svg.contains("easy, conservative against fcfs"),
        "the heat map's title names them"
    );
    // One policy alone is compared with ssh, the default baseline.
    let text = run("easy", &json);
    assert!(
        text.lines()
            .next()
            .unwrap()
            .ends_with("; ssh (no scheduler) against easy"),
        "{text}"
    );
    let rows: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(rows.as_array().unwrap().len(), 2);
    assert_eq!(
        (&rows[0]["baseline"], &rows[0]["policy"]),
        (&"ssh".into(), &"easy".into())
    );
}

/// Issue 27, item 5: `--quiet` leaves standard error empty (no progress, no timings).
#[test]
fn quiet_prints_nothing_on_standard_error() {
    let output = Command::new(env!("CARGO_BIN_EXE_gangway"))
        .args(["simulate", "--jobs", "30", "--quiet"])
        .output()
        .unwrap();
    assert!(output.status.success());
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");
    assert!(stdout(&output).contains("jobs started"));
    let loud = Command::new(env!("CARGO_BIN_EXE_gangway"))
        .args(["simulate", "--jobs", "30"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&loud.stderr).contains("ssh: simulated 30 jobs in"));
}

#[test]
fn many_accounts_fold_into_the_ten_most_used_unless_all_are_asked_for() {
    let args = [
        "simulate", "--users", "14", "--weeks", "1", "--policy", "ssh,full", "-q",
    ];
    let shares = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.starts_with("share when contended "))
            .map(|l| l.split_whitespace().nth(3).unwrap().to_string())
            .collect()
    };
    let folded = stdout(&gangway(&args));
    let names = shares(&folded);
    assert_eq!(names.len(), 11, "{folded}");
    assert_eq!(names[10], "4", "{folded}");
    assert!(folded.contains("share when contended 4 others"), "{folded}");
    assert!(
        folded.contains("accounts: the 10 that used the most"),
        "{folded}"
    );
    // The ten shown are distinct users, and none of them is among the others.
    let mut shown = names[..10].to_vec();
    shown.sort();
    shown.dedup();
    assert_eq!(shown.len(), 10);
    let all = stdout(&gangway(&[&args[..], &["--all-accounts"]].concat()));
    let mut every = shares(&all);
    assert_eq!(every.len(), 14, "{all}");
    assert!(!all.contains("others"), "{all}");
    every.sort();
    assert!(shown.iter().all(|name| every.contains(name)));
    // The report keeps every account either way.
    let report = scratch("folded.json");
    gangway(&[&args[..], &["--report", report.to_str().unwrap()]].concat());
    let value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(
        value["runs"][0]["metrics"]["accounts"]
            .as_array()
            .unwrap()
            .len(),
        14
    );
}

#[test]
fn the_sweep_runs_on_your_machine_and_says_why_it_refuses_the_rest() {
    let machine = machine_file("sweep-machine.json", 2, 4, 32, 128_000);
    let (report, plot) = (scratch("own-sweep.csv"), scratch("own-sweep.svg"));
    let text = stdout(&gangway(&[
        "simulate",
        "--sweep",
        "--cluster",
        machine.to_str().unwrap(),
        "--sweep-users",
        "2,4",
        "--workload",
        "team",
        "--policy",
        "ssh,full",
        "--report",
        report.to_str().unwrap(),
        "--plot",
        plot.to_str().unwrap(),
        "-q",
    ]));
    assert!(
        text.lines()
            .next()
            .unwrap()
            .contains(&format!("account, on {} (8 GPUs);", machine.display())),
        "{text}"
    );
    let rows = sweep_rows(&text);
    assert_eq!(rows.len(), 2, "{text}");
    assert_eq!((rows[0][0], rows[0][1]), ("8", "2"));
    assert_eq!((rows[1][0], rows[1][1]), ("8", "4"));
    let csv = std::fs::read_to_string(&report).unwrap();
    assert_eq!(csv.lines().count(), 3, "{csv}");
    assert!(csv.lines().nth(1).unwrap().starts_with("8,2,"));
    let refused = |extra: &[&str], why: &str| {
        let output = Command::new(env!("CARGO_BIN_EXE_gangway"))
            .args([&["simulate", "--sweep"][..], extra].concat())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1), "{extra:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(why), "{extra:?}: {stderr}");
    };
    refused(&["--workload", "gpu-ml"], "no users to vary");
    refused(&["--policy", "ssh"], "[ssh] leaves nothing to compare");
    refused(&["--trace", KTH_200], "brings its own jobs and machine");
    refused(
        &["--cluster", machine.to_str().unwrap(), "--sweep-gpus", "8"],
        "give one or the other",
    );
    let cpus = machine_file("sweep-cpus.json", 1, 0, 8, 64_000);
    refused(
        &["--cluster", cpus.to_str().unwrap(), "--sweep-users", "2"],
        "no GPU",
    );
}

/// The sweep table's rows, split into their columns (after the title and the header, before
/// the heat map's line).
fn sweep_rows(text: &str) -> Vec<Vec<&str>> {
    text.lines()
        .skip(2)
        .take_while(|l| !l.starts_with("heat map"))
        .map(|l| l.split_whitespace().collect())
        .collect()
}

/// The start of each job in a `--schedule-out` CSV, by job id.
fn starts(schedule: &Path) -> std::collections::BTreeMap<String, u64> {
    std::fs::read_to_string(schedule)
        .unwrap()
        .lines()
        .skip(1)
        .map(|line| {
            let fields: Vec<&str> = line.split(',').collect();
            (fields[0].to_string(), fields[3].parse().unwrap())
        })
        .collect()
}

/// Issue 29, item 6: `--qos-priority` turns an Alibaba pod's `qos` class into its base
/// priority. One GPU, held by `r` until 100 s; `be` (BE) arrives at 10 s, `ls` (LS) at 20 s.
/// Without a mapping (the default) first come goes first; with `default` (LS 2, BE 0) the
/// latency-sensitive pod goes first; a mapping of one's own can turn that round again.
#[test]
fn qos_priority_orders_alibaba_pods_by_their_class() {
    let dir = scratch("qos");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("openb_node_list_gpu_node.csv"),
        "sn,cpu_milli,memory_mib,gpu,model\nn1,8000,4096,1,T4\n",
    )
    .unwrap();
    let pods = dir.join("pods.csv");
    std::fs::write(
        &pods,
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,\
         deletion_time,scheduled_time\n\
         r,1000,10,1,1000,,BE,Running,0,100,0\n\
         be,1000,10,1,1000,,BE,Running,10,110,10\n\
         ls,1000,10,1,1000,,LS,Running,20,120,20\n",
    )
    .unwrap();
    let run = |extra: &[&str]| {
        let schedule = dir.join("schedule.csv");
        let mut args = vec![
            "simulate",
            "--trace",
            pods.to_str().unwrap(),
            "--trace-format",
            "alibaba",
            "--policy",
            "fcfs",
            "--schedule-out",
            schedule.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        gangway(&args);
        let starts = starts(&schedule);
        (starts["be"], starts["ls"])
    };
    assert_eq!(run(&[]), (100_000, 200_000));
    assert_eq!(run(&["--qos-priority", "none"]), (100_000, 200_000));
    assert_eq!(run(&["--qos-priority", "default"]), (200_000, 100_000));
    assert_eq!(run(&["--qos-priority", "BE=5,LS=1"]), (100_000, 200_000));
    let output = Command::new(env!("CARGO_BIN_EXE_gangway"))
        .args(["simulate", "--trace", pods.to_str().unwrap()])
        .args(["--qos-priority", "LS=high"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("LS=high") && stderr.contains("not an integer"),
        "{stderr}"
    );
}

/// Issue 29, item 6: `--non-positive-request` sets the time limit of an SWF job that
/// requested none: its run time (the default), a fixed number of seconds, or skipped and
/// counted. On 4 cpus `a` (2 cpus, 100 s) runs, `b` (4 cpus) waits for it with a reservation
/// at 100 s, and `c` (2 cpus, runs 60 s, requested -1) backfills at once when its limit is its
/// run time, but not with a limit of an hour, which would pass `b`'s reservation.
#[test]
fn non_positive_request_gives_a_limit_or_skips_and_counts() {
    let trace = scratch("no-request.swf");
    std::fs::write(
        &trace,
        "; MaxNodes: 1\n; MaxProcs: 4\n\
         1 0 -1 100 2 -1 -1 2 100 -1 1 1 1 -1 -1 -1 -1 -1\n\
         2 1 -1 60 4 -1 -1 4 600 -1 1 1 1 -1 -1 -1 -1 -1\n\
         3 2 -1 60 2 -1 -1 2 -1 -1 1 1 1 -1 -1 -1 -1 -1\n",
    )
    .unwrap();
    let schedule = scratch("no-request.csv");
    let run = |extra: &[&str]| {
        let mut args = vec!["simulate", "--trace", trace.to_str().unwrap()];
        args.extend_from_slice(&["--policy", "easy", "--schedule-out"]);
        args.push(schedule.to_str().unwrap());
        args.extend_from_slice(extra);
        let first = stdout(&gangway(&args)).lines().next().unwrap().to_string();
        (first, starts(&schedule).get("3").copied())
    };
    let whole = "workload no-request.swf: 3 jobs on 1 nodes".to_string();
    assert_eq!(run(&[]), (whole.clone(), Some(2_000)));
    assert_eq!(
        run(&["--non-positive-request", "run-time"]),
        (whole.clone(), Some(2_000))
    );
    assert_eq!(
        run(&["--non-positive-request", "3600"]),
        (whole, Some(160_000))
    );
    assert_eq!(
        run(&["--non-positive-request", "skip"]),
        (
            "workload no-request.swf: 2 jobs on 1 nodes; skipped 1: 1 non_positive_request"
                .to_string(),
            None
        )
    );
    for bad in ["0", "-5", "soon"] {
        let output = Command::new(env!("CARGO_BIN_EXE_gangway"))
            .args(["simulate", "--trace", trace.to_str().unwrap()])
            .arg(format!("--non-positive-request={bad}"))
            .output()
            .unwrap();
        assert!(!output.status.success(), "{bad}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("positive number of seconds"),
            "{bad}: {stderr}"
        );
    }
}
