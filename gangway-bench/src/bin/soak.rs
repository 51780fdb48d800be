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
//! `--no-preemption` (to tell their costs apart).

use std::path::PathBuf;
use std::process::ExitCode;

use gangway_bench::soak::{Driver, Host, InProcess, Mark, ShimProcess, SoakOptions};

fn parse(args: &[String]) -> Result<(SoakOptions, Option<PathBuf>), String> {
    let mut options = SoakOptions::default();
    let mut shim = None;
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
    Ok((options, shim))
}

fn ms(d: std::time::Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1e3)
}

fn print_mark(mark: &Mark) {
    println!(
        "| {} | {} | {:.1} | {} | {} | {:.1} | {} | {} | {} |",
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

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (options, shim) = match parse(&args) {
        Ok(parsed) => parsed,
        Err(e) => {
            eprintln!(
                "error: {e}\nusage: soak [--events N] [--nodes N] [--pending N] [--tick-ms MS] [--seed N] [--marks N] [--reconfigure-ms MS] [--shim GANGWAY] [--no-fair-sharing] [--no-preemption]"
            );
            return ExitCode::from(2);
        }
    };
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
    println!();
    println!(
        "| events | ticks | simulated days | pending | running | RSS MiB | p50 ms | p99 ms | max ms |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let report = host.run(driver.as_mut(), &options, print_mark);
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
    ExitCode::SUCCESS
}
