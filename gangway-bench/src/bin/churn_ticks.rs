//! Runs the churn benchmark's ticks as a plain process, for instruction counts under callgrind
//! (`valgrind --tool=callgrind --toggle-collect=churn_ticks::measured_tick
//! target/release/churn_ticks 1000 10000 easy 30`): the churn of
//! `benches/churn.rs` ([`gangway_sim::churn`]) with NODES nodes × 8 GPUs, PENDING pending jobs and
//! backfill MODE (`easy` or `conservative`), then TICKS ticks; CALC_PERIOD_MS, when given, sets
//! `policy.priority.calc_period_ms`. Prints the tasks placed and the
//! wall time of the ticks alone.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use gangway::config::BackfillMode;
use gangway::{Event, Scheduler, TickError, TickOutcome};
use gangway_sim::churn::Churn;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let parsed = match args.as_slice() {
        [nodes, pending, mode, ticks, rest @ ..] if rest.len() <= 1 => (|| {
            let mode = match mode.as_str() {
                "easy" => BackfillMode::Easy,
                "conservative" => BackfillMode::Conservative,
                _ => return None,
            };
            let period = match rest.first() {
                Some(period) => Some(period.parse().ok()?),
                None => None,
            };
            Some((
                nodes.parse().ok()?,
                pending.parse().ok()?,
                mode,
                ticks.parse().ok()?,
                period,
            ))
        })(),
        _ => None,
    };
    let Some((nodes, pending, mode, ticks, period)) = parsed else {
        eprintln!("usage: churn_ticks NODES PENDING easy|conservative TICKS [CALC_PERIOD_MS]");
        return ExitCode::from(2);
    };
    let mut churn = Churn::configured(nodes, pending, 42, |cluster| {
        cluster.policy.backfill.mode = mode;
        cluster.policy.priority.calc_period_ms = period;
    });
    let (mut tasks, mut timed) = (0u64, Duration::ZERO);
    for _ in 0..ticks {
        let (now, events) = churn.next_tick();
        let start = Instant::now();
        let outcome = match measured_tick(churn.scheduler(), now, events) {
            Ok(outcome) => outcome,
            Err(error) => {
                eprintln!("churn_ticks: tick at {now} ms refused: {error}");
                return ExitCode::FAILURE;
            }
        };
        timed += start.elapsed();
        tasks += churn.record(&outcome);
    }
    let per_tick = timed.as_secs_f64() * 1000.0 / ticks.max(1) as f64;
    println!("{ticks} ticks, {tasks} tasks placed, {per_tick:.3} ms per tick");
    ExitCode::SUCCESS
}

/// One measured tick, never inlined: `--toggle-collect=churn_ticks::measured_tick` counts the
/// ticks alone, without building the churn.
#[inline(never)]
fn measured_tick(
    scheduler: &mut Scheduler,
    now: u64,
    events: Vec<Event>,
) -> Result<TickOutcome, TickError> {
    scheduler.tick(now, events)
}
