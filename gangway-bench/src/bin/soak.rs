//! The soak benchmark (issue 28, item 4; [`gangway_bench::soak`]): events through
//! `Scheduler::tick` in this process, or through a `gangway shim` process, on the standard
//! workload with fair sharing, quotas and preemption on; prints the resident memory and the
//! tick latency at every tenth of the run as a Markdown table (BENCHMARKS.md, "Soak"):
//!
//!     cargo run --release -p gangway-bench --bin soak -- --events 10000000
//!     cargo run --release -p gangway-bench --bin soak -- --events 1000000 --shim target/release/gangway
//!
//! Options: `--events N` (10,000,000), `--nodes N` (1,000), `--pending N` (10,000),
//! `--tick-ms MS` (26,000: a simulated month at about 100 events a tick), `--seed N` (42),
//! `--marks N` (10), `--reconfigure-ms MS` (43,200,000: twice a simulated day; 0: never),
//! `--shim GANGWAY` (the `gangway` binary; without it, in process), `--no-fair-sharing`,
//! `--no-preemption` (to tell their costs apart), `--live` (in process only: three more
//! columns, the reconfigurations so far, the bytes allocated at the mark and the most
//! allocated at any time since the mark before, and a last line with the bytes allocated
//! before and at most during each reconfiguration, counted by this binary's global allocator;
//! they tell the memory the scheduler holds from what the C allocator keeps of it).

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering};

use gangway_bench::soak::{Driver, Host, InProcess, Mark, ShimProcess, SoakOptions};

/// The system allocator, counting the bytes allocated now and the most allocated since the
/// last reset while [`COUNTING`] is on (`--live`). It forwards every call unchanged,
/// `realloc` included, so that the C allocator sees the same requests with and without it.
struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
// Signed: a block allocated before counting began may be freed after.
static LIVE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);

impl Counting {
    fn grew(by: usize) {
        if COUNTING.load(Ordering::Relaxed) {
            let by = by as isize;
            let now = LIVE.fetch_add(by, Ordering::Relaxed) + by;
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
    }

    fn shrank(by: usize) {
        if COUNTING.load(Ordering::Relaxed) {
            LIVE.fetch_sub(by as isize, Ordering::Relaxed);
        }
    }
}

// SAFETY: every call is forwarded unchanged to the system allocator; the counters only read
// the layouts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            Counting::grew(layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            Counting::grew(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        Counting::shrank(layout.size());
        // SAFETY: forwarded unchanged.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded unchanged.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            Counting::shrank(layout.size());
            Counting::grew(new_size);
        }
        new
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Bytes allocated now, and the most since the last call; resets the most to now.
fn live_and_peak() -> (isize, isize) {
    let live = LIVE.load(Ordering::Relaxed);
    let peak = PEAK.swap(live, Ordering::Relaxed).max(live);
    (live, peak)
}

/// What the command line asks for: the run, the shim (none: in process), and `--live`.
type Parsed = (SoakOptions, Option<PathBuf>, bool);

fn parse(args: &[String]) -> Result<Parsed, String> {
    let mut options = SoakOptions::default();
    let mut shim = None;
    let mut live = false;
    let mut args = args.iter();
    while let Some(flag) = args.next() {
        match flag.as_str() {
            "--no-fair-sharing" => {
                options.fair_sharing = false;
                continue;
            }
            "--no-preemption" => {
                options.preemption = false;
                continue;
            }
            "--live" => {
                live = true;
                continue;
            }
            _ => {}
        }
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let number = || {
            value
                .replace('_', "")
                .parse::<u64>()
                .map_err(|e| format!("{flag} {value}: {e}"))
        };
        match flag.as_str() {
            "--events" => options.events = number()?,
            "--nodes" => options.nodes = number()? as usize,
            "--pending" => options.pending = number()? as usize,
            "--tick-ms" => options.tick_ms = number()?,
            "--seed" => options.seed = number()?,
            "--reconfigure-ms" => options.reconfigure_ms = number()?,
            "--marks" => {
                options.marks = u32::try_from(number()?).map_err(|e| format!("--marks: {e}"))?
            }
            "--shim" => shim = Some(PathBuf::from(value)),
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    if live && shim.is_some() {
        return Err("--live counts this process's allocations: in process only".into());
    }
    Ok((options, shim, live))
}

fn ms(d: std::time::Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1e3)
}

fn mib(bytes: isize) -> String {
    format!("{:.1}", bytes as f64 / (1024.0 * 1024.0))
}

/// One row of the table; with `--live`, the reconfigurations so far and the bytes allocated
/// (now, and the most since the row before) after the other columns.
fn print_mark(mark: &Mark, live: Option<&SoakOptions>) {
    let more = match live {
        None => String::new(),
        Some(options) => {
            let (now, peak) = live_and_peak();
            let reconfigured = mark
                .simulated_ms
                .checked_div(options.reconfigure_ms)
                .unwrap_or(0);
            format!(" {reconfigured} | {} | {} |", mib(now), mib(peak))
        }
    };
    println!(
        "| {} | {} | {:.1} | {} | {} | {:.1} | {} | {} | {} |{more}",
        mark.events,
        mark.ticks,
        mark.simulated_ms as f64 / 86_400_000.0,
        mark.pending,
        mark.running,
        mark.rss_kib as f64 / 1024.0,
        ms(mark.p50),
        ms(mark.p99),
        ms(mark.max),
    );
}

/// A driver whose reconfigurations are measured (`--live`): for each, the bytes allocated
/// before it and the most allocated during it.
struct Watched<'a> {
    driver: &'a mut dyn Driver,
    reconfigurations: Vec<(isize, isize)>,
}

impl Driver for Watched<'_> {
    fn tick(
        &mut self,
        at_ms: u64,
        events: Vec<gangway::Event>,
    ) -> (Vec<gangway::Decision>, Vec<String>) {
        self.driver.tick(at_ms, events)
    }

    fn reconfigure(&mut self, cluster: &gangway::ClusterConfig) {
        let before = LIVE.load(Ordering::Relaxed);
        // The most since the mark before is put back after, for the mark's column.
        let since_mark = PEAK.swap(before, Ordering::Relaxed);
        self.driver.reconfigure(cluster);
        let during = PEAK.fetch_max(since_mark, Ordering::Relaxed);
        self.reconfigurations.push((before, during));
    }

    fn rss_kib(&self) -> u64 {
        self.driver.rss_kib()
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (options, shim, live) = match parse(&args) {
        Ok(parsed) => parsed,
        Err(e) => {
            eprintln!(
                "error: {e}\nusage: soak [--events N] [--nodes N] [--pending N] [--tick-ms MS] [--seed N] [--marks N] [--reconfigure-ms MS] [--shim GANGWAY] [--no-fair-sharing] [--no-preemption] [--live]"
            );
            return ExitCode::from(2);
        }
    };
    COUNTING.store(live, Ordering::Relaxed);
    let mut host = Host::new(&options);
    let cluster = host.cluster();
    let mut driver: Box<dyn Driver> = match &shim {
        None => Box::new(InProcess::new(cluster)),
        Some(binary) => match ShimProcess::new(binary, &cluster) {
            Ok(shim) => Box::new(shim),
            Err(e) => {
                eprintln!("error: {}: {e}", binary.display());
                return ExitCode::from(1);
            }
        },
    };
    host.load(driver.as_mut());
    println!(
        "soak: {} events through {}, {} nodes, {} pending, ticks {} ms apart, seed {}, fair sharing {}, preemption {}; loaded: {:.1} MiB",
        options.events,
        if shim.is_some() {
            "gangway shim"
        } else {
            "Scheduler::tick"
        },
        options.nodes,
        options.pending,
        options.tick_ms,
        options.seed,
        options.fair_sharing,
        options.preemption,
        driver.rss_kib() as f64 / 1024.0
    );
    if live {
        println!("live: {} MiB allocated", mib(live_and_peak().0));
    }
    println!();
    let (more, more_rule) = if live {
        live_and_peak();
        (
            " reconfigured | live MiB | peak live MiB |",
            "---:|---:|---:|",
        )
    } else {
        ("", "")
    };
    println!(
        "| events | ticks | simulated days | pending | running | RSS MiB | p50 ms | p99 ms | max ms |{more}"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|{more_rule}");
    let mut watched = Watched {
        driver: driver.as_mut(),
        reconfigurations: Vec::new(),
    };
    let report = host.run(&mut watched, &options, |mark| {
        print_mark(mark, live.then_some(&options))
    });
    println!();
    let sent: Vec<String> = report
        .sent
        .iter()
        .map(|(kind, n)| format!("{} {n}", kind.name()))
        .collect();
    println!("sent: {}", sent.join(", "));
    println!(
        "decisions: {} starts, {} preemptions, {} requeues, {} kills; {} events rejected",
        report.starts, report.preemptions, report.requeues, report.kills, report.rejected
    );
    println!(
        "preemption: {} preemptors had to choose victims again in a later tick, {} victims started again before their preemptor, at most {} preemptions of one job",
        report.preemptors_again, report.victims_back_first, report.most_preempted
    );
    for message in &report.first_rejections {
        println!("  rejected {message}");
    }
    if let Some(growth) = report.growth_second_half() {
        println!("resident memory growth from the 50% mark to the 100% mark: {growth:+.1}%");
    }
    if live && !watched.reconfigurations.is_empty() {
        let during: Vec<String> = watched
            .reconfigurations
            .iter()
            .map(|&(before, peak)| format!("{} to {}", mib(before), mib(peak)))
            .collect();
        println!(
            "allocated MiB before and at most during each reconfiguration: {}",
            during.join(", ")
        );
    }
    ExitCode::SUCCESS
}
