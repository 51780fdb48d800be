//! `gangway inventory` through the built binary: a node entry from a fixture, and the one-line
//! refusal (exit status 2) where NVML cannot be used.

use std::path::Path;
use std::process::{Command, Output};

const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../gangway-nvml/tests/fixtures/nvml"
);

fn inventory(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gangway"))
        .arg("inventory")
        .args(args)
        .output()
        .unwrap()
}

fn fixture(name: &str) -> String {
    Path::new(FIXTURES).join(name).display().to_string()
}

#[test]
fn a_fixture_prints_its_node_entry() {
    let out = inventory(&[
        "--fixture",
        &fixture("h100x8_nvlink.json"),
        "--name",
        "dgx01",
        "--cpus",
        "224",
        "--memory-mib",
        "2063000",
    ]);
    assert!(out.status.success(), "{out:?}");
    let expected = std::fs::read_to_string(fixture("h100x8_nvlink.node.json")).unwrap();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap().trim_end(),
        expected.trim_end()
    );
}

#[test]
fn a_fixture_without_host_facts_is_refused() {
    let out = inventory(&["--fixture", &fixture("no_gpu.json")]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "inventory: --fixture needs --name, --cpus and --memory-mib\n"
    );
}

#[test]
fn a_broken_fixture_is_named() {
    let dir = std::env::temp_dir().join(format!("gangway-inventory-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.json");
    std::fs::write(&path, r#"{"devices": 3}"#).unwrap();
    let path = path.display().to_string();
    let out = inventory(&[
        "--fixture",
        &path,
        "--name",
        "n",
        "--cpus",
        "1",
        "--memory-mib",
        "1",
    ]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with(&format!("inventory: {path}: fixture: invalid type")),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1);
}

/// Whether an NVIDIA driver library is installed (then the refusal cannot be tested here).
fn driver_present() -> bool {
    Path::new("/proc/driver/nvidia").exists()
        || [
            "/usr/lib/x86_64-linux-gnu",
            "/usr/lib64",
            "/usr/lib",
            "/usr/lib/aarch64-linux-gnu",
        ]
        .iter()
        .any(|dir| Path::new(dir).join("libnvidia-ml.so.1").exists())
}

#[test]
fn without_nvml_it_exits_2_with_one_line() {
    if cfg!(feature = "nvml") && driver_present() {
        eprintln!("skipped: an NVIDIA driver library is installed");
        return;
    }
    let out = inventory(&[]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let reason = stderr
        .strip_prefix("NVML not available: ")
        .unwrap_or_else(|| panic!("{stderr}"))
        .trim_end();
    if cfg!(not(feature = "nvml")) {
        assert_eq!(reason, "gangway was built without the nvml feature");
    } else if cfg!(target_os = "linux") {
        // The loader's own reason names the library it could not load.
        assert!(reason.contains("libnvidia-ml.so.1"), "{reason}");
    }
}
