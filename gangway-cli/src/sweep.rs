//! `gangway simulate --sweep`: cluster size × users, `ssh` against `full`, as a table and a
//! heat map.

use std::path::Path;
use std::time::Instant;

use gangway_sim::LookSchedule;
use gangway_sim::heatmap::write_heatmap;
use gangway_sim::sweep::{SweepParams, run_sweep, sweep_table};
use indicatif::{ProgressBar, ProgressStyle};

/// Where the heat map goes without `--plot`.
const DEFAULT_PLOT: &str = "sweep.svg";

/// Runs the sweep on every core, prints its table and writes the heat map.
pub fn sweep(seed: u64, looks: LookSchedule, plot: Option<&Path>) -> Result<(), String> {
    let params = SweepParams {
        seed,
        looks,
        ..SweepParams::default()
    };
    let path = plot.unwrap_or(Path::new(DEFAULT_PLOT));
    // Created now, so that a bad path fails before the sweep runs.
    std::fs::File::create(path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    let cells = params.gpus.len() * params.users.len();
    super::print_stdout(&format!(
        "sweep (seed {seed}): {} weeks of the team workload's user profile, each user its own \
         account; ssh (no scheduler) against full\n",
        params.weeks
    ))?;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let progress = ProgressBar::new(cells as u64);
    if let Ok(style) =
        ProgressStyle::with_template("{prefix:>12} [{bar:40}] {pos}/{len} cells, {eta} left")
    {
        progress.set_style(style.progress_chars("=> "));
    }
    progress.set_prefix("sweep");
    let started = Instant::now();
    let result = run_sweep(&params, threads, |done| progress.set_position(done as u64));
    progress.finish_and_clear();
    let cells = result.map_err(|e| e.to_string())?;
    eprintln!(
        "sweep: {} cells on {threads} threads in {:.1} s",
        cells.len(),
        started.elapsed().as_secs_f64()
    );
    super::print_stdout(&sweep_table(&cells))?;
    write_heatmap(path, &cells)?;
    super::print_stdout(&format!("heat map: {}\n", path.display()))
}
