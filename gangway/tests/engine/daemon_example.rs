//! Drives `examples/daemon.rs` with `sleep` jobs on a two-GPU node: launches with
//! `CUDA_VISIBLE_DEVICES`, completion and failure by exit status, and a time-limit kill.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const NODE: &str = r#"{"name": "lab1", "cpus": 8, "memory_mib": 16000,
    "gpus": {"model": "rtx4090", "count": 2}}"#;

/// `a` takes both GPUs and records what it was given; `b` (which fails) and `c` (which runs
/// past its limit) start together once `a` is done.
const JOBS: &str = concat!(
    r#"{"id": "a", "time_limit_ms": 20000, "groups": [{"count": 1, "gpus": 2}], "#,
    r#""command": "sleep 0.2; echo $CUDA_VISIBLE_DEVICES > a.gpus"}"#,
    "\n",
    r#"{"id": "b", "time_limit_ms": 20000, "groups": [{"count": 1, "gpus": 1}], "#,
    r#""command": "sleep 0.2; exit 3"}"#,
    "\n",
    r#"{"id": "c", "time_limit_ms": 1500, "groups": [{"count": 1, "gpus": 1}], "#,
    r#""command": "sleep 30"}"#,
    "\n",
);

/// Builds the example with the test kit on, as the engine's tests are built, and this test's
/// profile (a no-op after `cargo test`, which builds examples too) and returns its path.
fn daemon_binary() -> PathBuf {
    // This test runs from target/<profile>/deps; examples sit in target/<profile>/examples.
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(Path::parent).unwrap();
    let mut build = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    build
        .args(["build", "--quiet", "-p", "gangway", "--example", "daemon"])
        .args(["--features", "testkit"])
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    if profile_dir.ends_with("release") {
        build.arg("--release");
    }
    assert!(
        build.status().unwrap().success(),
        "building the example failed"
    );
    profile_dir.join("examples").join("daemon")
}

#[test]
fn sleep_jobs_run_finish_and_are_killed_at_their_limit() {
    let binary = daemon_binary();
    let dir = std::env::temp_dir().join(format!("gangway-daemon-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("node.json"), NODE).unwrap();
    std::fs::write(dir.join("jobs.jsonl"), JOBS).unwrap();
    let mut child = Command::new(&binary)
        .args(["--node-json", "node.json", "--jobs", "jobs.jsonl"])
        .current_dir(&dir)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("the daemon did not finish within 20 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(child.wait().unwrap().success());
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let a_gpus = std::fs::read_to_string(dir.join("a.gpus")).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();

    // Each line without its pid, which differs from run to run.
    let lines: Vec<&str> = stdout
        .lines()
        .map(|l| l.split(" pid=").next().unwrap_or(l))
        .collect();
    assert_eq!(
        lines,
        [
            "started a gpus=0,1",
            "finished a completed",
            "started b gpus=0",
            "started c gpus=1",
            "finished b failed",
            "killed c time_limit",
        ],
        "{stdout}"
    );
    assert_eq!(a_gpus.trim(), "0,1");
}
