//! `gangway simulate --trace` on a team's own history: the committed Slurm and CSV samples
//! (gangway-sim/tests/fixtures/README.md) replay through the built binary, and bad rows fail with their line
//! or are skipped and counted under `--skip-malformed`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SACCT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../gangway-sim/tests/fixtures/history-sacct.txt"
);
const JOBS_CSV: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../gangway-sim/tests/fixtures/history-jobs.csv"
);
const CLUSTER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../gangway-sim/tests/fixtures/history-cluster.json"
);

fn gangway(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gangway"))
        .args(args)
        .output()
        .expect("run gangway")
}

fn succeeds(args: &[&str]) -> String {
    let output = gangway(args);
    assert!(
        output.status.success(),
        "gangway {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// The message of a run that must fail with status 1.
fn fails(args: &[&str]) -> String {
    let output = gangway(args);
    assert_eq!(output.status.code(), Some(1), "gangway {args:?}");
    String::from_utf8(output.stderr).unwrap()
}

fn scratch(name: &str, text: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli_history");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// The cells of the row starting with `label`.
fn row<'a>(text: &'a str, label: &str) -> Vec<&'a str> {
    let line = text
        .lines()
        .find(|line| line.starts_with(label))
        .unwrap_or_else(|| panic!("no row {label:?} in\n{text}"));
    line[label.len()..].split_whitespace().collect()
}

#[test]
fn the_slurm_sample_replays_with_its_skips_counted() {
    let text = succeeds(&["simulate", "--trace", SACCT, "--utc-offset", "+01:00"]);
    // 86 rows: 82 GPU jobs (three arrays of three tasks among them), two jobs that never
    // started (one cancelled while pending, one still pending), one still running, one
    // cpu-only. The recorded peak is 16 GPUs: two 8-GPU nodes.
    assert_eq!(
        text.lines().next(),
        Some(
            "workload history-sacct.txt: 82 jobs on 2 nodes (16 GPUs); \
             skipped 4: 2 never_started, 1 still_running, 1 no_gpus"
        )
    );
    assert_eq!(row(&text, "completed"), ["82"; 5]); // ssh, fcfs, easy, conservative, full
    assert_eq!(row(&text, "never started"), ["0"; 5]);
    // One account per Slurm account, equal targets.
    assert!(text.contains("share vision (33%)"), "{text}");
}

#[test]
fn array_tasks_are_jobs_of_their_own() {
    let schedule = scratch("sacct-schedule.csv", "");
    succeeds(&[
        "simulate",
        "--trace",
        SACCT,
        "--policy",
        "fcfs",
        "--schedule-out",
        schedule.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(&schedule).unwrap();
    let ids: Vec<&str> = text
        .lines()
        .skip(1)
        .map(|line| line.split(',').next().unwrap())
        .collect();
    for task in ["4105_0", "4105_1", "4105_2"] {
        assert_eq!(ids.iter().filter(|id| **id == task).count(), 1, "{task}");
    }
    assert!(!ids.contains(&"4105"));
    assert!(!ids.contains(&"4090"), "the cpu-only job is skipped");
}

#[test]
fn the_csv_sample_replays_on_a_given_cluster() {
    let text = succeeds(&[
        "simulate",
        "--trace",
        JOBS_CSV,
        "--utc-offset",
        "+01:00",
        "--cluster",
        CLUSTER,
    ]);
    assert_eq!(
        text.lines().next(),
        Some("workload history-jobs.csv: 52 jobs on 2 nodes (16 GPUs)")
    );
    assert_eq!(row(&text, "completed"), ["52"; 5]);
    // Without starts, its own machine holds every job at once: nobody waits.
    let alone = succeeds(&["simulate", "--trace", JOBS_CSV, "--policy", "fcfs"]);
    assert_eq!(
        alone.lines().next(),
        Some("workload history-jobs.csv: 52 jobs on 5 nodes (40 GPUs)")
    );
    assert_eq!(row(&alone, "wait max"), ["0s"]);
}

#[test]
fn the_format_is_detected_by_content_or_given() {
    let csv = std::fs::read_to_string(JOBS_CSV).unwrap();
    let renamed = scratch("jobs.log", &csv);
    let path = renamed.to_str().unwrap();
    let text = succeeds(&["simulate", "--trace", path, "--policy", "fcfs"]);
    assert!(text.starts_with("workload jobs.log: 52 jobs"), "{text}");
    let text = succeeds(&[
        "simulate",
        "--trace",
        path,
        "--trace-format",
        "csv",
        "--policy",
        "fcfs",
    ]);
    assert!(text.starts_with("workload jobs.log: 52 jobs"), "{text}");
    let message = fails(&["simulate", "--trace", path, "--trace-format", "sacct"]);
    assert_eq!(message, format!("{path}: no column JobID\n"));
    let unknown = scratch("notes.txt", "hello\n");
    let message = fails(&["simulate", "--trace", unknown.to_str().unwrap()]);
    assert!(message.contains("unknown trace format"), "{message}");
    let output = gangway(&["simulate", "--trace-format", "tsv"]);
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn malformed_csv_rows_fail_with_their_line_or_are_skipped_and_counted() {
    let path = scratch(
        "bad.csv",
        "user,submit,duration,gpus\n\
         ana,2024-03-04T09:00:00,600,1\n\
         ben,2024-03-04T09:10:00,ten minutes,1\n\
         chloe,2024-03-04T09:20:00,600\n\
         dev,2024-03-04T09:30:00,600,0\n",
    );
    let path = path.to_str().unwrap();
    assert_eq!(
        fails(&["simulate", "--trace", path]),
        format!("{path}: line 3: column duration: \"ten minutes\" is not a number of seconds\n")
    );
    let text = succeeds(&[
        "simulate",
        "--trace",
        path,
        "--skip-malformed",
        "--policy",
        "fcfs",
    ]);
    assert_eq!(
        text.lines().next(),
        Some("workload bad.csv: 1 jobs on 1 nodes (8 GPUs); skipped 3: 1 no_gpus, 2 malformed")
    );
}

#[test]
fn malformed_slurm_rows_fail_with_their_line_or_are_skipped_and_counted() {
    let path = scratch(
        "bad.sacct",
        "JobID|User|Account|Submit|Start|End|Timelimit|AllocTRES\n\
         1|u1|a|2024-03-04T09:00:00|2024-03-04T09:00:00|2024-03-04T10:00:00|02:00:00|gres/gpu=2,node=1\n\
         2|u1|a|2024-03-04T09:00:00|2024-03-04T09:00:00|2024-03-04T10:00:00|two hours|gres/gpu=2,node=1\n\
         1|u2|a|2024-03-04T09:00:00|2024-03-04T09:00:00|2024-03-04T10:00:00|02:00:00|gres/gpu=2,node=1\n",
    );
    let path = path.to_str().unwrap();
    assert_eq!(
        fails(&["simulate", "--trace", path]),
        format!("{path}: line 3: column Timelimit: \"two hours\" is not a Slurm time limit\n")
    );
    let text = succeeds(&[
        "simulate",
        "--trace",
        path,
        "--skip-malformed",
        "--policy",
        "fcfs",
    ]);
    assert_eq!(
        text.lines().next(),
        Some("workload bad.sacct: 1 jobs on 1 nodes (8 GPUs); skipped 2: 2 malformed")
    );
}

#[test]
fn history_options_need_a_trace() {
    let output = gangway(&["simulate", "--skip-malformed"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--trace"));
}
