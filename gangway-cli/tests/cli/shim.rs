//! `gangway shim` through the built binary: any bytes on stdin are answered line by line, and
//! the exit status follows the end of the session (0 at the end of the input or when stdout is
//! closed, 1 on another I/O error).

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn shim(args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gangway"))
        .arg("shim")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run gangway shim");
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

fn responses(output: &Output) -> Vec<Value> {
    String::from_utf8(output.stdout.clone())
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

/// The bytes of `printf '{"op":"explain","at_ms":0}\n\xff\xfe\x00\n{"op":"explain","at_ms":0}\n'`,
/// which used to end the shim after the first line.
#[test]
fn a_non_utf8_line_is_answered_and_the_shim_goes_on() {
    let output = shim(
        &[],
        b"{\"op\":\"explain\",\"at_ms\":0}\n\xff\xfe\x00\n{\"op\":\"explain\",\"at_ms\":0}\n",
    );
    assert_eq!(output.status.code(), Some(0));
    assert!(output.stderr.is_empty(), "{:?}", output.stderr);
    let out = responses(&output);
    let kinds: Vec<&str> = out
        .iter()
        .map(|r| r["error"]["kind"].as_str().unwrap())
        .collect();
    // One response per line, the undecodable one included.
    assert_eq!(kinds, ["not_configured", "parse", "not_configured"]);
}

#[test]
fn max_line_bytes_bounds_a_line() {
    let configure = r#"{"op":"configure","cluster":{"nodes":[{"name":"n1","cpus":1}]}}"#;
    let input = format!(
        "{configure}\n{}\n{{\"op\":\"explain\"}}\n",
        "x".repeat(1000)
    );
    let output = shim(&["--max-line-bytes", "100"], input.as_bytes());
    assert_eq!(output.status.code(), Some(0));
    let out = responses(&output);
    assert_eq!(out.len(), 3, "{out:?}");
    assert_eq!(out[0]["ok"], true);
    assert_eq!(out[1]["error"]["kind"], "line_too_long");
    assert_eq!(out[2]["ok"], true);
    // The default reads that line.
    let out = responses(&shim(&[], input.as_bytes()));
    assert_eq!(out[1]["error"]["kind"], "parse");
}

/// A host that stops reading: the shim exits 0 without a word.
#[test]
fn a_closed_stdout_ends_the_shim_quietly() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gangway"))
        .arg("shim")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run gangway shim");
    drop(child.stdout.take());
    // The shim may be gone before all of it is written.
    let _ = child
        .stdin
        .take()
        .unwrap()
        .write_all(&b"{\"op\":\"explain\"}\n".repeat(1000));
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert!(
        output.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A full disk under stdout: exit 1 with the reason on stderr.
#[cfg(target_os = "linux")]
#[test]
fn another_write_error_exits_1() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gangway"))
        .arg("shim")
        .stdin(Stdio::piped())
        .stdout(std::fs::File::create("/dev/full").unwrap())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run gangway shim");
    let _ = child
        .stdin
        .take()
        .unwrap()
        .write_all(b"{\"op\":\"explain\"}\n");
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("gangway shim: cannot write a response: "),
        "{stderr}"
    );
}

/// Standard input that cannot be read (a directory): exit 1 with the reason on stderr.
#[cfg(unix)]
#[test]
fn a_read_error_exits_1() {
    let output = Command::new(env!("CARGO_BIN_EXE_gangway"))
        .arg("shim")
        .stdin(std::fs::File::open(env!("CARGO_MANIFEST_DIR")).unwrap())
        .output()
        .expect("run gangway shim");
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("gangway shim: cannot read a request: "),
        "{stderr}"
    );
}
