//! `gangway explain --snapshot FILE` and `gangway queue` through the built binary: a shim
//! session on two 8-GPU nodes leaves four jobs pending (and `eval`, which backfilled, running),
//! and both commands print the same `squeue --start`-like table of them, numbered 1 to 4, with
//! users and accounts (from the explain response itself, or from the shim's requests where a
//! response lacks them) and starts counted from
//! the last tick.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Configure two 8-GPU nodes; at 0 `pretrain` (8 GPUs) and `finetune` (4) start; at 10 minutes
/// a 2 × 8-GPU gang gets the reservation at 4 h (when `pretrain` ends), `eval` (4) backfills
/// beside `finetune`, two 2-GPU sweeps wait for resources and `notebook` is held.
const SESSION: &str = include_str!("../fixtures/queue-session.jsonl");

const TABLE: &str = "\
POS  JOB       USER   ACCOUNT  REASON     START      AHEAD
  1  big-gang  chloe  nlp      reserved   in 3h 50m  0
  2  sweep-1   ben    nlp      resources  -          1: big-gang
  3  sweep-2   ben    nlp      resources  -          2: big-gang, sweep-1
  4  notebook  chloe  nlp      held       -          3: big-gang, sweep-1, sweep-2
";

/// `lines` with the owners taken out of their explain responses, as a gangway from before
/// `explain` named them answered.
fn without_owner_fields(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .map(|line| {
            let mut value: serde_json::Value = serde_json::from_str(line).unwrap();
            if let Some(pending) = value.get_mut("pending").and_then(|p| p.as_array_mut()) {
                for job in pending.iter_mut().filter_map(|j| j.as_object_mut()) {
                    job.remove("user");
                    job.remove("account");
                }
            }
            value.to_string()
        })
        .collect()
}

fn gangway(args: &[&str], input: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gangway"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run gangway");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn succeeds(args: &[&str], input: &str) -> String {
    let output = gangway(args, input);
    assert!(
        output.status.success(),
        "gangway {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

fn fails(args: &[&str], input: &str) -> String {
    let output = gangway(args, input);
    assert_eq!(output.status.code(), Some(1), "gangway {args:?}");
    assert!(output.stdout.is_empty());
    String::from_utf8(output.stderr).unwrap()
}

fn scratch(name: &str, text: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli_queue");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// The shim's responses to the session followed by `extra` requests.
fn responses(extra: &[&str]) -> Vec<String> {
    let input: String = SESSION
        .lines()
        .chain(extra.iter().copied())
        .map(|line| format!("{line}\n"))
        .collect();
    let out = succeeds(&["shim"], &input);
    let lines: Vec<String> = out.lines().map(str::to_string).collect();
    assert!(
        lines.iter().all(|l| l.starts_with(r#"{"ok":true"#)),
        "{out}"
    );
    lines
}

#[test]
fn explain_prints_the_queue_of_a_snapshot() {
    let lines = responses(&[r#"{"op":"snapshot"}"#]);
    let response = scratch("snapshot.json", &lines[3]);
    assert_eq!(
        succeeds(&["explain", "--snapshot", response.to_str().unwrap()], ""),
        TABLE
    );
    // The state alone, as a host stores it, reads the same.
    let value: serde_json::Value = serde_json::from_str(&lines[3]).unwrap();
    let state = scratch("state.json", &value["state"].to_string());
    assert_eq!(
        succeeds(&["explain", "--snapshot", state.to_str().unwrap()], ""),
        TABLE
    );
}

#[test]
fn queue_reads_the_shims_explain_on_stdin() {
    let lines = responses(&[r#"{"op":"explain"}"#]);
    let explain = format!("{}\n", lines[3]);
    // The explain response names each job's user and account itself.
    assert_eq!(succeeds(&["queue", "--now-ms", "600000"], &explain), TABLE);
    // A whole session piped in: the last explain response counts, and its starts count from
    // the last tick before it (10 minutes).
    let whole = succeeds(&["queue"], &(lines.join("\n") + "\n"));
    assert_eq!(whole, TABLE);
    // The explain response alone, without --now-ms: the starts as they are.
    let alone = succeeds(&["queue"], &explain);
    assert_eq!(
        alone,
        "\
POS  JOB       USER   ACCOUNT  REASON     START           AHEAD
  1  big-gang  chloe  nlp      reserved   at 14400000 ms  0
  2  sweep-1   ben    nlp      resources  -               1: big-gang
  3  sweep-2   ben    nlp      resources  -               2: big-gang, sweep-1
  4  notebook  chloe  nlp      held       -               3: big-gang, sweep-1, sweep-2
"
    );
}

#[test]
fn queue_names_users_and_accounts_from_the_shims_requests() {
    // An explain response without owners (an older gangway's): the requests name them.
    let lines = without_owner_fields(&responses(&[r#"{"op":"explain"}"#]));
    let bare = succeeds(&["queue", "--now-ms", "600000"], &format!("{}\n", lines[3]));
    assert!(bare.contains("big-gang  -     -"), "{bare}");
    let requests = scratch("requests.jsonl", SESSION);
    assert_eq!(
        succeeds(
            &["queue", "--requests", requests.to_str().unwrap()],
            &(lines.join("\n") + "\n")
        ),
        TABLE
    );
    // Or requests and responses in one stream, as a host's log has them.
    let log: String = SESSION
        .lines()
        .zip(&lines)
        .flat_map(|(request, response)| [request, response.as_str()])
        .chain([r#"{"op":"explain"}"#, lines[3].as_str()])
        .map(|line| format!("{line}\n"))
        .collect();
    assert_eq!(succeeds(&["queue"], &log), TABLE);
    let missing = fails(&["queue", "--requests", "no/such/file"], &lines[3]);
    assert!(
        missing.starts_with("cannot read no/such/file: "),
        "{missing}"
    );
}

#[test]
fn an_empty_queue_is_the_header_alone() {
    let out = succeeds(&["queue"], "{\"ok\":true,\"pending\":[],\"running\":[]}\n");
    assert_eq!(out, "POS  JOB  USER  ACCOUNT  REASON  START  AHEAD\n");
}

#[test]
fn unreadable_input_fails_with_a_message() {
    assert_eq!(
        fails(&["queue"], "{\"ok\":true,\"protocol\":1}\n"),
        "no explain response (a JSON line with \"pending\") on standard input\n"
    );
    assert_eq!(
        fails(&["queue"], "{\"ok\":true,\"pending\":[{\"job\":\"a\"}]}\n"),
        "line 1: pending: [0]: missing field `position`\n"
    );
    let missing = fails(&["explain", "--snapshot", "no/such/snapshot.json"], "");
    assert!(
        missing.starts_with("cannot read no/such/snapshot.json: "),
        "{missing}"
    );
    let refused = scratch(
        "refused.json",
        r#"{"ok":false,"error":{"kind":"not_configured"}}"#,
    );
    let path = refused.to_str().unwrap();
    assert_eq!(
        fails(&["explain", "--snapshot", path], ""),
        format!("{path}: invalid snapshot: a response without \"state\"\n")
    );
    let broken = scratch("broken.json", r#"{"state":{"last_tick_ms":"soon"}}"#);
    let message = fails(&["explain", "--snapshot", broken.to_str().unwrap()], "");
    assert!(message.contains("invalid snapshot"), "{message}");
}
