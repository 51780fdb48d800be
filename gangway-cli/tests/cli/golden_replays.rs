//! The golden replays of committed fixtures: every line of tests/golden/replays.sha256 whose
//! trace is a committed fixture (not under ../shared) runs through the built `gangway simulate`
//! from the repository root, and the SHA-256 of its schedule CSV must be the recorded one, so a
//! clone alone checks schedules against the reference. `tests/golden/check_replays.sh` checks
//! every line, the shared traces' too, on the release build.

use std::fs;
use std::path::Path;
use std::process::Command;

use sha2::{Digest, Sha256};

const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/replays.sha256");

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn fixture_replays_match_their_golden_digests() {
    let golden = fs::read_to_string(GOLDEN).unwrap();
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR")).join("golden_replays");
    fs::create_dir_all(&scratch).unwrap();
    let mut checked = Vec::new();
    let mut differ = Vec::new();
    for line in golden.lines() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let mut fields = line.split_whitespace();
        let (want, name) = (fields.next().unwrap(), fields.next().unwrap());
        let args: Vec<&str> = fields.collect();
        if !args.iter().any(|a| a.contains("/tests/fixtures/")) {
            continue;
        }
        let csv = scratch.join(format!("{name}.csv"));
        let output = Command::new(env!("CARGO_BIN_EXE_gangway"))
            .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
            .arg("simulate")
            .args(&args)
            .arg("--schedule-out")
            .arg(&csv)
            .output()
            .expect("run gangway");
        assert!(
            output.status.success(),
            "{name}: gangway simulate {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr)
        );
        let got = sha256_hex(&fs::read(&csv).unwrap());
        if got != want {
            differ.push(format!(
                "{name} (gangway simulate {}): recorded {want}, now {got}",
                args.join(" ")
            ));
        }
        checked.push(name.to_string());
    }
    assert!(
        !checked.is_empty(),
        "no replay of a committed fixture in {GOLDEN}"
    );
    assert!(
        differ.is_empty(),
        "schedules differ from tests/golden/replays.sha256:\n{}",
        differ.join("\n")
    );
}

/// The digest is of the file's bytes, as `sha256sum` gives it.
#[test]
fn digest_is_sha256() {
    assert_eq!(
        sha256_hex(b"abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
}

/// Every shared trace and committed sample under every policy, ssh included, runs to its end
/// (tests/golden/check_all_traces.sh, through this test's `gangway`). Ignored: it takes far
/// longer than the rest of the suite (docs/simulate.md, "Every trace to the end"). Run it with
/// `cargo test --release -p gangway-cli --test cli -- --ignored every_trace`.
#[test]
#[ignore = "slow: replays every shared trace under every policy"]
fn every_trace_runs_to_its_end_under_every_policy() {
    let status = Command::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/golden/check_all_traces.sh"
    ))
    .env("GANGWAY_BIN", env!("CARGO_BIN_EXE_gangway"))
    .status()
    .expect("run check_all_traces.sh");
    assert!(status.success(), "check_all_traces.sh failed: {status}");
}
