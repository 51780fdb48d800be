//! RLScheduler's Table V (Zhang et al., SC'20), heuristic rows, through gangway's public API:
//! five order keys (FCFS, WFP3, UNICEP, SJF, F1), the pinned head, and the
//! `before_head_estimate` backfill rule with its candidates in submit order (or no backfill);
//! the simulator delivers one event per tick, submits before ends. Each cell is the mean, over
//! ten windows of 1,024 jobs, of the window's average bounded slowdown (10 s threshold),
//! printed beside the same cell from RLScheduler's event loop restated ([`reference`]).
//!
//! Run: `cargo run --release -p gangway-sim --example rlscheduler_table -- TRACES_DIR`, where
//! `TRACES_DIR` holds some of `lublin_256.swf`, `SDSC-SP2-1998-4.2-cln.swf[.gz]`,
//! `HPC2N-2002-2.2-cln.swf[.gz]` and `lublin_256_new2[.swf]`; a trace that is absent is
//! skipped with a message. `--windows N` replays only the first N windows of each trace.
//!
//! What is RLScheduler's, read in its paper and its repository (DIR-LAB/deep-batch-scheduler),
//! and restated here in this example's own code:
//!
//! - loading: a job's processors are the larger of fields 5 (allocated) and 8 (requested); a
//!   requested time of −1 becomes the run time; a negative run time becomes 10 s; jobs with a
//!   run time of 0 are dropped; jobs are ordered by job number. The machine is `MaxNodes` nodes
//!   of `MaxProcs / MaxNodes` processors and a job takes whole nodes (`⌈p / ppn⌉`; all
//!   four traces' headers give one processor per node);
//! - windows: `start = randint(1024, size − 1024 − 1)` ten times, from NumPy's legacy
//!   `RandomState` seeded as gym's `seeding.np_random(1)` does, where `size` is the number of
//!   jobs, or 10,000 for SDSC-SP2 and HPC2N (its `batch_job_slice`); a window is jobs
//!   `start .. start + 1024`, its clock starting empty at the first one's submit time;
//! - scores (lowest first, ties in arrival order), with `s` the submit time, `t` the requested
//!   time, `n` the processors and `w` RLScheduler's waiting time, which is `−1 − s` while a job
//!   is queued (its `scheduled_time` is −1 until it starts), so WFP3 and UNICEP are static:
//!   FCFS `s`; WFP3 `−(w/t)³·n`; UNICEP `−(w + 10⁻¹⁵)/(log₂(n + 10⁻¹⁵)·t)`; SJF `(t, s)`;
//!   F1 `log₁₀(t)·n + 870·log₁₀(s)` (a 0 replaced by 0.1);
//! - the metric: `max(1, (wait + run) / max(run, 10))`, averaged over the window's jobs.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use gangway::config::{BackfillCandidates, BackfillMode, ClusterConfig};
use gangway::policy::{PassContext, Plugin, Profile};
use gangway::state::JobView;
use gangway_sim::workload::{TraceJob, swf};
use gangway_sim::{Overrun, PolicyPreset, SimJob, SimOptions, Simulator};

/// Jobs per window and windows per trace.
pub const WINDOW: usize = 1024;
const WINDOWS: usize = 10;

/// The four traces of the table: column name, file stem, and RLScheduler's `batch_job_slice`
/// (0: the whole trace).
struct Trace {
    name: &'static str,
    stem: &'static str,
    slice: usize,
}

const TRACES: [Trace; 4] = [
    Trace {
        name: "Lublin-1",
        stem: "lublin_256",
        slice: 0,
    },
    Trace {
        name: "SDSC-SP2",
        stem: "SDSC-SP2-1998-4.2-cln",
        slice: 10_000,
    },
    Trace {
        name: "HPC2N",
        stem: "HPC2N-2002-2.2-cln",
        slice: 10_000,
    },
    Trace {
        name: "Lublin-2",
        stem: "lublin_256_new2",
        slice: 0,
    },
];

/// A job as RLScheduler loads it.
#[derive(Clone, Debug)]
pub struct RlJob {
    submit_s: i64,
    run_s: i64,
    request_s: i64,
    processors: i64,
}

/// A trace as RLScheduler loads it: the jobs by job number, nodes and processors per node.
pub struct Loaded {
    pub jobs: Vec<RlJob>,
    pub nodes: u64,
    pub per_node: u64,
}

pub fn load(path: &Path) -> Result<Loaded, Box<dyn std::error::Error>> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.read_to_end(&mut bytes)?;
    let text: Box<dyn BufRead> = if bytes.starts_with(&[0x1f, 0x8b]) {
        Box::new(BufReader::new(flate2::read::MultiGzDecoder::new(
            &bytes[..],
        )))
    } else {
        Box::new(&bytes[..])
    };
    let (mut nodes, mut procs) = (0u64, 0u64);
    let mut jobs = Vec::new();
    for line in text.lines() {
        let line = line?;
        if let Some(header) = line.strip_prefix(';') {
            let mut parts = header.splitn(2, ':');
            let (key, value) = (parts.next().unwrap_or("").trim(), parts.next());
            let value = value.and_then(|v| v.split_whitespace().next()?.parse().ok());
            match (key, value) {
                ("MaxNodes", Some(v)) => nodes = v,
                ("MaxProcs", Some(v)) => procs = v,
                _ => {}
            }
            continue;
        }
        let fields: Vec<i64> = line
            .split_whitespace()
            .map(|f| f.parse::<f64>().map_or(0, |v| v as i64))
            .collect();
        if fields.len() < 9 {
            continue;
        }
        let (id, submit_s, mut run_s) = (fields[0], fields[1], fields[3]);
        let processors = fields[4].max(fields[7]);
        let request_s = if fields[8] == -1 { run_s } else { fields[8] };
        if run_s < 0 {
            run_s = 10;
        }
        if run_s > 0 {
            jobs.push((
                id,
                RlJob {
                    submit_s,
                    run_s,
                    request_s,
                    processors,
                },
            ));
        }
    }
    jobs.sort_by_key(|(id, _)| *id);
    if procs == 0 {
        procs = nodes;
    }
    if nodes == 0 {
        nodes = procs;
    }
    let per_node = (procs / nodes.max(1)).max(1);
    Ok(Loaded {
        jobs: jobs.into_iter().map(|(_, j)| j).collect(),
        nodes,
        per_node,
    })
}

/// MT19937 as NumPy's legacy `RandomState` runs it, for RLScheduler's window draws.
pub struct Mt19937 {
    state: [u32; 624],
    index: usize,
}

impl Mt19937 {
    /// `RandomState().seed(key)` with an array key: `init_by_array`.
    pub fn by_array(key: &[u32]) -> Mt19937 {
        let mut mt = [0u32; 624];
        mt[0] = 19_650_218;
        for i in 1..624 {
            mt[i] = 1_812_433_253u32
                .wrapping_mul(mt[i - 1] ^ (mt[i - 1] >> 30))
                .wrapping_add(i as u32);
        }
        let (mut i, mut j) = (1usize, 0usize);
        for _ in 0..624.max(key.len()) {
            let prev = mt[i - 1] ^ (mt[i - 1] >> 30);
            mt[i] = (mt[i] ^ prev.wrapping_mul(1_664_525))
                .wrapping_add(key[j])
                .wrapping_add(j as u32);
            i += 1;
            j += 1;
            if i >= 624 {
                mt[0] = mt[623];
                i = 1;
            }
            if j >= key.len() {
                j = 0;
            }
        }
        for _ in 0..623 {
            let prev = mt[i - 1] ^ (mt[i - 1] >> 30);
            mt[i] = (mt[i] ^ prev.wrapping_mul(1_566_083_941)).wrapping_sub(i as u32);
            i += 1;
            if i >= 624 {
                mt[0] = mt[623];
                i = 1;
            }
        }
        mt[0] = 0x8000_0000;
        Mt19937 {
            state: mt,
            index: 624,
        }
    }

    pub fn next_u32(&mut self) -> u32 {
        if self.index >= 624 {
            for k in 0..624 {
                let y = (self.state[k] & 0x8000_0000) | (self.state[(k + 1) % 624] & 0x7fff_ffff);
                let mag = if y & 1 == 1 { 0x9908_b0df } else { 0 };
                self.state[k] = self.state[(k + 397) % 624] ^ (y >> 1) ^ mag;
            }
            self.index = 0;
        }
        let mut y = self.state[self.index];
        self.index += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }

    /// `randint(low, high)`, high excluded, by masked rejection (ranges below 2³²).
    fn randint(&mut self, low: usize, high: usize) -> usize {
        let range = (high - 1 - low) as u32;
        let mask = u32::MAX >> range.leading_zeros().min(31);
        loop {
            let value = self.next_u32() & mask;
            if value <= range {
                return low + value as usize;
            }
        }
    }
}

/// gym's `seeding.np_random(1)`: the seed's SHA-512, first 8 bytes as two little-endian
/// words, handed to `RandomState.seed` as an array.
const GYM_SEED_1: [u32; 2] = [0xa34e_ff4d, 0x23a8_f040];

/// The ten window starts of a trace of `size` jobs (`slice`: RLScheduler's batch_job_slice).
pub fn window_starts(size: usize, slice: usize) -> Vec<usize> {
    let mut rng = Mt19937::by_array(&GYM_SEED_1);
    let top = if slice == 0 { size } else { slice };
    (0..WINDOWS)
        .map(|_| rng.randint(WINDOW, top - WINDOW - 1))
        .collect()
}

#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Heuristic {
    Fcfs,
    Wfp3,
    Uni,
    Sjf,
    F1,
}

impl Heuristic {
    pub const ALL: [Heuristic; 5] = [
        Heuristic::Fcfs,
        Heuristic::Wfp3,
        Heuristic::Uni,
        Heuristic::Sjf,
        Heuristic::F1,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Heuristic::Fcfs => "FCFS",
            Heuristic::Wfp3 => "WFP3",
            Heuristic::Uni => "UNI",
            Heuristic::Sjf => "SJF",
            Heuristic::F1 => "F1",
        }
    }

    /// RLScheduler's score of a queued job (lower first); SJF's second part breaks its ties.
    fn score(self, job: &RlJob) -> (f64, f64) {
        let (s, t, n) = (
            job.submit_s as f64,
            job.request_s as f64,
            job.processors as f64,
        );
        let w = -1.0 - s; // scheduled_time (−1 while queued) − submit_time
        match self {
            Heuristic::Fcfs => (s, 0.0),
            Heuristic::Wfp3 => (-(w / t).powi(3) * n, 0.0),
            Heuristic::Uni => (-(w + 1e-15) / ((n + 1e-15).log2() * t), 0.0),
            Heuristic::Sjf => (t, s),
            Heuristic::F1 => {
                let t = if t > 0.0 { t } else { 0.1 };
                let s = if s > 0.0 { s } else { 0.1 };
                (t.log10() * n + 870.0 * s.log10(), 0.0)
            }
        }
    }
}

/// The order key: each job's rank in its window under the heuristic's score (ties in arrival
/// order), highest key first. The scores do not change while a job waits, so ranking them
/// once is the same order as scoring them at every pass.
#[derive(Clone)]
struct RankKey {
    name: &'static str,
    keys: HashMap<String, i64>,
}

impl RankKey {
    fn new(heuristic: Heuristic, window: &[RlJob]) -> RankKey {
        let mut order: Vec<usize> = (0..window.len()).collect();
        let scores: Vec<(f64, f64)> = window.iter().map(|j| heuristic.score(j)).collect();
        order.sort_by(|&a, &b| {
            let (x, y) = (scores[a], scores[b]);
            x.0.total_cmp(&y.0)
                .then(x.1.total_cmp(&y.1))
                .then(a.cmp(&b))
        });
        let keys = order
            .iter()
            .enumerate()
            .map(|(rank, &index)| (job_id(index), -(rank as i64)))
            .collect();
        RankKey {
            name: heuristic.name(),
            keys,
        }
    }
}

#[gangway::policy::plugin]
impl Plugin for RankKey {
    fn name(&self) -> &str {
        self.name
    }
    fn order_key(&self, job: JobView<'_>, _: &PassContext<'_>) -> i64 {
        self.keys.get(&job.spec().id).copied().unwrap_or(i64::MIN)
    }
}

/// A window job's id: its place in the window, zero-padded so that id order is arrival order.
fn job_id(index: usize) -> String {
    format!("{index:05}")
}

/// The cluster: `nodes` one-cpu nodes (a job takes one per RLScheduler node it needs).
fn cluster(nodes: u64, backfill: bool) -> Result<ClusterConfig, Box<dyn std::error::Error>> {
    let workload = swf::read(format!("; MaxNodes: {nodes}\n").as_bytes(), None)?;
    let mut cluster = workload.cluster_config();
    PolicyPreset::Rlscheduler.configure(&mut cluster);
    Overrun::Allow.configure(&mut cluster);
    if backfill {
        // RLScheduler tries the jobs behind its head in submit order, whatever the heuristic.
        cluster.policy.backfill.candidates = BackfillCandidates::Submit;
    } else {
        cluster.policy.backfill.mode = BackfillMode::None;
    }
    Ok(cluster)
}

fn sim_jobs(window: &[RlJob], per_node: u64) -> Vec<SimJob> {
    window
        .iter()
        .enumerate()
        .map(|(index, job)| {
            let trace = TraceJob::one_cpu_tasks(
                job_id(index),
                job.submit_s.max(0) as u64 * 1000,
                job.run_s as u64 * 1000,
                job.request_s.max(0) as u64 * 1000,
                (job.processors.max(1) as u64).div_ceil(per_node) as u32,
            );
            SimJob::from_trace(&trace, false)
        })
        .collect()
}

/// The window's average bounded slowdown under `heuristic`, with or without backfill.
pub fn replay(
    loaded: &Loaded,
    window: &[RlJob],
    heuristic: Heuristic,
    backfill: bool,
) -> Result<f64, Box<dyn std::error::Error>> {
    let profile = Profile::builder()
        .plugin(RankKey::new(heuristic, window))
        .build()?;
    let options = SimOptions {
        one_event_per_tick: true,
        submits_first: true,
        ..SimOptions::default()
    };
    let simulator = Simulator::with_profile(
        cluster(loaded.nodes, backfill)?,
        sim_jobs(window, loaded.per_node),
        options,
        profile,
    )?;
    let result = simulator.run(|_| Ok(()))?;
    let mut total = 0.0;
    for (record, job) in result.jobs.iter().zip(window) {
        let start = record.first_start_ms.ok_or("a job never started")?;
        let wait = (start - record.submit_ms) as f64 / 1000.0;
        let run = job.run_s as f64;
        total += ((wait + run) / run.max(10.0)).max(1.0);
    }
    Ok(total / window.len() as f64)
}

/// A check on the replay, not part of it: RLScheduler's event loop restated (the head picked
/// by score and kept until it starts; while it waits, one event at a time, submits before ends
/// at the same instant, and with backfill, after each event, queued jobs in submit order that
/// fit now and end strictly before the head's estimate, frozen when it became the head). The
/// table prints its cells beside the engine's; the two differ where gangway does.
pub fn reference(loaded: &Loaded, window: &[RlJob], heuristic: Heuristic, backfill: bool) -> f64 {
    let rank: Vec<i64> = {
        let key = RankKey::new(heuristic, window);
        (0..window.len()).map(|i| -key.keys[&job_id(i)]).collect()
    };
    let need = |i: usize| (window[i].processors.max(1) as u64).div_ceil(loaded.per_node);
    let mut free = loaded.nodes;
    let mut now = window[0].submit_s;
    let mut queue = vec![0usize];
    let mut next = 1usize;
    // (job, start, nodes), kept in RLScheduler's list order
    let mut running: Vec<(usize, i64, u64)> = Vec::new();
    let mut start = vec![0i64; window.len()];
    // One event: the next submit if it is due no later than the first end, else that end.
    let step = |now: &mut i64,
                queue: &mut Vec<usize>,
                next: &mut usize,
                running: &mut Vec<(usize, i64, u64)>,
                free: &mut u64| {
        running.sort_by_key(|&(j, s, _)| s + window[j].run_s);
        let release = running
            .first()
            .map_or(i64::MAX, |&(j, s, _)| s + window[j].run_s);
        if *next < window.len() && window[*next].submit_s <= release {
            *now = (*now).max(window[*next].submit_s);
            queue.push(*next);
            *next += 1;
        } else {
            *now = (*now).max(release);
            *free += running.remove(0).2;
        }
    };
    loop {
        queue.sort_by_key(|&j| rank[j]);
        let head = queue[0];
        if need(head) > free {
            let mut estimate = now;
            if backfill {
                running.sort_by_key(|&(j, s, _)| s + window[j].request_s);
                let mut spare = free;
                for &(j, s, nodes) in running.iter() {
                    spare += nodes;
                    estimate = s + window[j].request_s;
                    if spare >= need(head) {
                        break;
                    }
                }
            }
            while need(head) > free {
                if backfill {
                    queue.sort_by_key(|&j| window[j].submit_s);
                    for j in queue.clone() {
                        if now + window[j].request_s < estimate && need(j) <= free {
                            start[j] = now;
                            free -= need(j);
                            running.push((j, now, need(j)));
                            queue.retain(|&q| q != j);
                        }
                    }
                }
                step(&mut now, &mut queue, &mut next, &mut running, &mut free);
            }
        }
        start[head] = now;
        free -= need(head);
        running.push((head, now, need(head)));
        queue.retain(|&q| q != head);
        while queue.is_empty() && next < window.len() {
            step(&mut now, &mut queue, &mut next, &mut running, &mut free);
        }
        if queue.is_empty() {
            break;
        }
    }
    let total: f64 = window
        .iter()
        .zip(&start)
        .map(|(job, &s)| {
            let (wait, run) = ((s - job.submit_s) as f64, job.run_s as f64);
            ((wait + run) / run.max(10.0)).max(1.0)
        })
        .sum();
    total / window.len() as f64
}

fn find(dir: &Path, stem: &str) -> Option<PathBuf> {
    ["", ".swf", ".swf.gz", ".gz"]
        .iter()
        .map(|ext| dir.join(format!("{stem}{ext}")))
        .find(|p| p.is_file())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mut dir = None;
    let mut windows = WINDOWS;
    while let Some(arg) = args.next() {
        if arg == "--windows" {
            windows = args.next().ok_or("--windows takes a number")?.parse()?;
        } else {
            dir = Some(PathBuf::from(arg));
        }
    }
    let dir = dir.ok_or("usage: rlscheduler_table TRACES_DIR [--windows N]")?;
    let mut columns = Vec::new();
    for trace in &TRACES {
        let Some(path) = find(&dir, trace.stem) else {
            println!(
                "{}: no {}[.swf][.gz] in {}: skipped",
                trace.name,
                trace.stem,
                dir.display()
            );
            continue;
        };
        let loaded = load(&path)?;
        let starts = window_starts(loaded.jobs.len(), trace.slice);
        println!(
            "{}: {} jobs, {} nodes of {} processors, windows at {:?}",
            trace.name,
            loaded.jobs.len(),
            loaded.nodes,
            loaded.per_node,
            &starts[..windows]
        );
        let mut cells = Vec::new();
        for backfill in [false, true] {
            for heuristic in Heuristic::ALL {
                let (mut engine, mut model) = (0.0, 0.0);
                for &start in &starts[..windows] {
                    let window = &loaded.jobs[start..start + WINDOW];
                    engine += replay(&loaded, window, heuristic, backfill)?;
                    model += reference(&loaded, window, heuristic, backfill);
                }
                cells.push((engine / windows as f64, model / windows as f64));
            }
        }
        columns.push((trace.name, cells));
    }
    println!();
    println!("average bounded slowdown: gangway, RLScheduler's loop restated, difference");
    print!("{:<9}", "");
    for (name, _) in &columns {
        print!(" {name:>28}");
    }
    println!();
    for (row, (backfill, heuristic)) in [false, true]
        .iter()
        .flat_map(|b| Heuristic::ALL.iter().map(move |h| (*b, *h)))
        .enumerate()
    {
        let label = format!("{}{}", heuristic.name(), if backfill { " +bf" } else { "" });
        print!("{label:<9}");
        for (_, cells) in &columns {
            let (engine, model) = cells[row];
            let diff = (engine - model) / model * 100.0;
            print!(" {engine:>10.2} {model:>10.2} {diff:>+5.1}%");
        }
        println!();
    }
    Ok(())
}
