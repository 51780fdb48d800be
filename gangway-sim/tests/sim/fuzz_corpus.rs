//! The fuzz entry points (the engine's `gangway::testkit::fuzz` and the trace readers'
//! `gangway_sim::fuzz`) over their seed corpora, so CI exercises them without cargo-fuzz. It lives
//! here, in the crate that sees both, as `fuzz/` does. The seeds are generated from ../shared/scenarios and the topology
//! and MIG scenarios of tests/scenarios (`topology_*`, `mig_*`) at run time (and
//! committed under fuzz/seeds/ for `cargo fuzz`: `cargo test -p gangway-sim --test sim
//! fuzz_corpus -- --ignored` rewrites them); each seed also runs truncated and with bytes flipped. Where
//! ../shared/scenarios is absent the generated seeds come from gangway/tests/scenarios alone, after a note.

use std::fs;
use std::path::Path;

use crate::files::json_files;
use crate::shared;
use gangway::testkit::fuzz;
use gangway_sim::fuzz as trace_fuzz;
use serde_json::{Value, json};

const OWN_SCENARIOS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../gangway/tests/scenarios");
/// The own scenarios that seed the corpora: the hardware features the shared ones lack.
const OWN_PREFIXES: [&str; 2] = ["topology_", "mig_"];
const SEEDS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../fuzz/seeds");

/// The shared scenarios (none where ../shared/scenarios is absent) and the own ones that seed.
fn scenarios() -> Vec<(String, Value)> {
    let mut paths = shared::path("scenarios")
        .map(|dir| json_files(&dir))
        .unwrap_or_default();
    paths.extend(
        json_files(Path::new(OWN_SCENARIOS))
            .into_iter()
            .filter(|p| {
                let name = p.file_name().unwrap().to_string_lossy();
                OWN_PREFIXES.iter().any(|prefix| name.starts_with(prefix))
            }),
    );
    paths
        .into_iter()
        .map(|p| {
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            (
                name,
                serde_json::from_str(&fs::read_to_string(&p).unwrap()).unwrap(),
            )
        })
        .collect()
}

/// The scenario as protocol lines (docs/protocol.md): configure, its ticks, explain and snapshot.
fn protocol_lines(scenario: &Value) -> String {
    let mut lines = vec![json!({"op": "configure", "cluster": scenario["cluster"]}).to_string()];
    for tick in scenario["ticks"].as_array().unwrap() {
        lines.push(
            json!({"op": "tick", "at_ms": tick["at_ms"], "events": tick["events"]}).to_string(),
        );
    }
    lines.push(r#"{"op":"explain","detail":true}"#.into());
    lines.push(r#"{"op":"snapshot"}"#.into());
    lines.join("\n") + "\n"
}

fn submits(scenario: &Value) -> Vec<(u64, Value)> {
    let mut jobs = Vec::new();
    for tick in scenario["ticks"].as_array().unwrap() {
        for event in tick["events"].as_array().unwrap() {
            if event["type"] == "submit" {
                jobs.push((tick["at_ms"].as_u64().unwrap(), event["job"].clone()));
            }
        }
    }
    jobs
}

fn tasks_of(job: &Value) -> (u64, u64, u64) {
    let groups = job["groups"].as_array().unwrap();
    let tasks: u64 = groups
        .iter()
        .map(|g| g["count"].as_u64().unwrap_or(1))
        .sum();
    let gpus = groups
        .iter()
        .map(|g| g["gpus"].as_f64().unwrap_or(0.0))
        .fold(0.0, f64::max);
    let cpus = groups
        .iter()
        .map(|g| g["cpus"].as_f64().unwrap_or(1.0))
        .fold(0.0, f64::max);
    (tasks, (gpus * 1000.0) as u64, (cpus * 1000.0) as u64)
}

/// The scenario's machine and submits as an SWF trace (one cpu per task).
fn swf(scenario: &Value) -> String {
    let nodes = scenario["cluster"]["nodes"].as_array().unwrap();
    let cpus = nodes[0]["cpus"].as_u64().unwrap_or(1);
    let mut text = format!(
        "; MaxNodes: {}\n; MaxProcs: {}\n",
        nodes.len(),
        nodes.len() as u64 * cpus
    );
    for (i, (at, job)) in submits(scenario).iter().enumerate() {
        let (tasks, _, _) = tasks_of(job);
        let limit_s = job["time_limit_ms"].as_u64().unwrap() / 1000;
        text += &format!(
            "{} {} 0 {} {tasks} -1 -1 {tasks} {limit_s} -1 1 1 1 -1 1 1 -1 -1\n",
            i + 1,
            at / 1000,
            limit_s / 2
        );
    }
    text
}

/// The scenario's nodes and submits as an Alibaba node list, NUL, pod list.
fn alibaba(scenario: &Value) -> Vec<u8> {
    let mut nodes = String::from("sn,cpu_milli,memory_mib,gpu,model\n");
    for n in scenario["cluster"]["nodes"].as_array().unwrap() {
        let gpus = &n["gpus"];
        nodes += &format!(
            "{},{},{},{},{}\n",
            n["name"].as_str().unwrap(),
            (n["cpus"].as_f64().unwrap_or(0.0) * 1000.0) as u64,
            n["memory_mib"].as_u64().unwrap_or(0),
            gpus["count"].as_u64().unwrap_or(0),
            gpus["model"].as_str().unwrap_or(""),
        );
    }
    let mut pods = String::from(
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n",
    );
    for (at, job) in submits(scenario) {
        let (_, gpus_milli, cpus_milli) = tasks_of(&job);
        let (num, milli) = if gpus_milli >= 1000 {
            (gpus_milli / 1000, 1000)
        } else {
            (u64::from(gpus_milli > 0), gpus_milli)
        };
        let start = at / 1000;
        let end = start + job["time_limit_ms"].as_u64().unwrap() / 2000 + 1;
        pods += &format!(
            "{},{cpus_milli},1024,{num},{milli},,LS,Running,{start},{end},{start}\n",
            job["id"].as_str().unwrap()
        );
    }
    let mut bytes = nodes.into_bytes();
    bytes.push(0);
    bytes.extend(pods.into_bytes());
    bytes
}

/// The scenario's protocol lines as a host with broken framing might send them: CRLF and LF
/// line ends in turn, and after `configure` lines that are not UTF-8, hold a NUL, are blank,
/// are blank but longer than `shim_bytes`'s short limit, or are too deeply nested.
fn mangled(scenario: &Value) -> Vec<u8> {
    let junk: [&[u8]; 5] = [
        b"\xff\xfe\x00",
        b"{\"op\":\"explain\"}\x00",
        b"\r",
        &[b' '; 200],
        &[b'['; 300],
    ];
    let mut bytes = Vec::new();
    for (i, line) in protocol_lines(scenario).lines().enumerate() {
        bytes.extend_from_slice(line.as_bytes());
        bytes.extend_from_slice(if i % 2 == 0 { b"\r\n" } else { b"\n" });
        if i == 0 {
            for junk in junk {
                bytes.extend_from_slice(junk);
                bytes.push(b'\n');
            }
        }
    }
    bytes
}

/// Hand-made `shim_bytes` seeds: the bytes that once ended `gangway shim`
/// (`printf '{"op":"explain","at_ms":0}\n\xff\xfe\x00\n{"op":"explain","at_ms":0}\n'`), and
/// framing corner cases.
const SHIM_BYTES_SEEDS: [(&str, &[u8]); 4] = [
    (
        "printf_not_utf8",
        b"{\"op\":\"explain\",\"at_ms\":0}\n\xff\xfe\x00\n{\"op\":\"explain\",\"at_ms\":0}\n",
    ),
    (
        "no_final_newline",
        b"{\"op\":\"configure\",\"cluster\":{\"nodes\":[{\"name\":\"n1\",\"cpus\":2}]}}\r\n{\"op\":\"explain\"}",
    ),
    (
        "blank_and_carriage_returns",
        b"\n\r\n \t\r\n\r\r\n{\"op\":\r\"explain\"}\n\x0c\n\rx\n",
    ),
    (
        "cut_sequences",
        b"{\"op\":\"\xc3\xa9\xc3\"}\n[\"\xed\xa0\x80\"]\n{\"op\":\"\xc3",
    ),
];

/// Deterministic pseudo-random bytes for the `events` target's binary (strategy-driven) path.
fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407)
        | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

type Target = fn(&[u8]) -> Result<(), String>;

/// Every seed of every target, generated from the scenarios.
fn corpus() -> Vec<(&'static str, Target, String, Vec<u8>)> {
    let mut all: Vec<(&'static str, Target, String, Vec<u8>)> = Vec::new();
    for (name, s) in scenarios() {
        all.push((
            "events",
            fuzz::events,
            name.clone(),
            protocol_lines(&s).into_bytes(),
        ));
        all.push((
            "shim_lines",
            fuzz::shim_lines,
            name.clone(),
            protocol_lines(&s).into_bytes(),
        ));
        all.push(("shim_bytes", fuzz::shim_bytes, name.clone(), mangled(&s)));
        all.push(("swf", trace_fuzz::swf, name.clone(), swf(&s).into_bytes()));
        all.push(("alibaba_csv", trace_fuzz::alibaba_csv, name, alibaba(&s)));
    }
    for (name, bytes) in SHIM_BYTES_SEEDS {
        all.push(("shim_bytes", fuzz::shim_bytes, name.into(), bytes.to_vec()));
    }
    for seed in 0..8u64 {
        all.push((
            "events",
            fuzz::events,
            format!("noise_{seed}"),
            noise(seed, 256 << seed.min(4)),
        ));
    }
    all
}

/// Runs `target` on `input`, on prefixes of it, and with single bytes flipped.
fn exercise(what: &str, target: Target, input: &[u8]) {
    let run = |bytes: &[u8], how: &str| {
        if let Err(bug) = target(bytes) {
            panic!("{what} ({how}): {bug}");
        }
    };
    run(input, "as is");
    for cut in 1..8 {
        run(&input[..input.len() * cut / 8], "truncated");
    }
    let flips = noise(input.len() as u64, 64);
    for pair in flips.chunks(4).take(12) {
        let mut bytes = input.to_vec();
        if !bytes.is_empty() {
            let at = usize::from(u16::from_le_bytes([pair[0], pair[1]])) % bytes.len();
            bytes[at] ^= pair[2] | 1;
        }
        run(&bytes, "byte flipped");
    }
}

#[test]
fn generated_seeds_find_nothing() {
    for (target, run, name, input) in corpus() {
        exercise(&format!("{target}/{name}"), run, &input);
    }
}

#[test]
fn committed_seeds_find_nothing() {
    let targets: [(&str, Target); 5] = [
        ("events", fuzz::events),
        ("shim_lines", fuzz::shim_lines),
        ("shim_bytes", fuzz::shim_bytes),
        ("swf", trace_fuzz::swf),
        ("alibaba_csv", trace_fuzz::alibaba_csv),
    ];
    for (target, run) in targets {
        let dir = Path::new(SEEDS).join(target);
        let mut count = 0;
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            exercise(&path.display().to_string(), run, &fs::read(&path).unwrap());
            count += 1;
        }
        assert!(count > 0, "no seeds in {}", dir.display());
    }
}

/// The first 200 jobs of the KTH SP2 log (tests/fixtures/README.md).
#[test]
fn real_trace_excerpt_reads() {
    let text = fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/KTH-SP2-1996-2.1-cln-first200.swf"
    ))
    .unwrap();
    trace_fuzz::swf(&text).unwrap();
}

/// Rewrites fuzz/seeds/ from the scenarios.
#[test]
#[ignore = "writes files: run by hand after the scenarios change"]
fn write_seeds() {
    assert!(
        shared::path("scenarios").is_some(),
        "the seeds are written from ../shared/scenarios, which is missing"
    );
    for (target, _, name, input) in corpus() {
        let dir = Path::new(SEEDS).join(target);
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join(name), input).unwrap();
    }
}
