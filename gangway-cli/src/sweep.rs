//! `gangway simulate --sweep`: cluster size × users, a baseline (`ssh` by default) against
//! each other policy (`full` by default), as a table, a heat map and optionally the table as
//! JSON or CSV.

use std::path::Path;
use std::time::Instant;

use gangway::ClusterConfig;
use gangway_sim::heatmap::write_heatmap;
use gangway_sim::sweep::{SweepParams, SweepRow, run_sweep, sweep_table};
use gangway_sim::{LookSchedule, PolicyPreset};
use indicatif::{ProgressBar, ProgressStyle};

/// Where the heat map goes without `--plot`.
const DEFAULT_PLOT: &str = "sweep.svg";

/// What `--sweep` runs and writes.
pub struct SweepOptions<'a> {
    /// No progress and no timing on standard error.
    pub quiet: bool,
    /// Seed of every cell's workload.
    pub seed: u64,
    /// The `ssh` host's looks.
    pub looks: LookSchedule,
    /// Cluster sizes in GPUs; empty: the default grid's.
    pub gpus: Vec<u32>,
    /// Numbers of users; empty: the default grid's.
    pub users: Vec<u32>,
    /// A machine of your own (`--cluster`, with its path): every cell runs on it.
    pub machine: Option<(&'a Path, ClusterConfig)>,
    /// The baseline, then the policies compared with it
    /// ([`gangway_sim::sweep::sweep_policies`]).
    pub policies: Vec<PolicyPreset>,
    /// The heat map (default sweep.svg).
    pub plot: Option<&'a Path>,
    /// The table as JSON, or CSV for a `.csv` name.
    pub report: Option<&'a Path>,
}

/// Runs the sweep on every core, prints its table and writes the heat map (and the report).
pub fn sweep(options: SweepOptions<'_>) -> Result<(), String> {
    let defaults = SweepParams::default();
    let params = SweepParams {
        seed: options.seed,
        looks: options.looks,
        gpus: if options.gpus.is_empty() {
            defaults.gpus.clone()
        } else {
            options.gpus
        },
        users: if options.users.is_empty() {
            defaults.users.clone()
        } else {
            options.users
        },
        machine: options.machine.as_ref().map(|(_, config)| config.clone()),
        policies: options.policies,
        ..defaults
    };
    let path = options.plot.unwrap_or(Path::new(DEFAULT_PLOT));
    // Created now, so that a bad path fails before the sweep runs.
    for path in [Some(path), options.report].into_iter().flatten() {
        std::fs::File::create(path)
            .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    }
    let cells = params.grid_gpus().len() * params.users.len() * (params.policies.len() - 1);
    let on = match &options.machine {
        Some((path, _)) => format!(
            ", on {} ({} GPUs)",
            path.display(),
            params.grid_gpus().first().copied().unwrap_or(0)
        ),
        None => String::new(),
    };
    let (baseline, compared) = params
        .policies
        .split_first()
        .ok_or("the sweep has no policy")?;
    let compared: Vec<&str> = compared.iter().map(|p| p.name()).collect();
    let baseline = match baseline {
        PolicyPreset::Ssh => "ssh (no scheduler)",
        other => other.name(),
    };
    super::print_stdout(&format!(
        "sweep (seed {}): {} weeks of the team workload's user profile, each user its own \
         account{on}; {baseline} against {}\n",
        params.seed,
        params.weeks,
        compared.join(", ")
    ))?;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let progress = if options.quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(cells as u64)
    };
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
    if !options.quiet {
        eprintln!(
            "sweep: {} cells on {threads} threads in {:.1} s",
            cells.len(),
            started.elapsed().as_secs_f64()
        );
    }
    super::print_stdout(&sweep_table(&cells))?;
    write_heatmap(path, &cells)?;
    super::print_stdout(&format!("heat map: {}\n", path.display()))?;
    if let Some(report) = options.report {
        let rows: Vec<SweepRow> = cells.iter().map(SweepRow::of).collect();
        let csv = report
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
        let text = if csv {
            let mut text = format!("{}\n", SweepRow::CSV_HEADER);
            for row in &rows {
                text.push_str(&row.csv());
                text.push('\n');
            }
            text
        } else {
            serde_json::to_string_pretty(&rows).map_err(|e| e.to_string())? + "\n"
        };
        std::fs::write(report, text)
            .map_err(|e| format!("cannot write {}: {e}", report.display()))?;
        super::print_stdout(&format!("report: {}\n", report.display()))?;
    }
    Ok(())
}
