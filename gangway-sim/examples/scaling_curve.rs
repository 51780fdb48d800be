//! The scaling curve of one full pass (fair-share + quotas + EASY) on the standard workload
//! (docs/design.md, section Performance targets): 1,000 nodes × 8 GPUs full of running jobs,
//! M pending jobs from 1,000 to 100,000.
//! For each M it times `RUNS` passes and takes the median, prints a table (with time per pending
//! job, flat for O(M) and growing like log M for O(M log M)) and draws `docs/scaling.svg`.
//!
//!     cargo run --release -p gangway-sim --example scaling_curve [-- OUT.svg]

use std::time::Instant;

use gangway_sim::standard::StandardWorkload;
use plotters::prelude::*;

const NODES: usize = 1_000;
const PENDING: [usize; 7] = [1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000];
const RUNS: usize = 15;

fn median_pass_ms(pending: usize) -> f64 {
    let mut scheduler = StandardWorkload::new(NODES, 42).loaded_scheduler(pending);
    let mut times: Vec<f64> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            scheduler.tick(2_000, Vec::new()).expect("tick");
            start.elapsed().as_secs_f64() * 1_000.0
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[RUNS / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "docs/scaling.svg".to_string());
    println!("| pending | median pass | per pending job |");
    println!("|---:|---:|---:|");
    let mut points = Vec::new();
    for pending in PENDING {
        let ms = median_pass_ms(pending);
        println!(
            "| {pending} | {ms:.2} ms | {:.0} ns |",
            ms * 1e6 / pending as f64
        );
        points.push((pending as f64, ms));
    }
    let root = SVGBackend::new(&out, (800, 500)).into_drawing_area();
    root.fill(&WHITE)?;
    let max_ms = points.iter().map(|p| p.1).fold(0.0, f64::max) * 1.1;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("one pass, {NODES} nodes x 8 GPUs full, standard workload (median of {RUNS})"),
            ("sans-serif", 18),
        )
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..105_000f64, 0f64..max_ms)?;
    chart
        .configure_mesh()
        .light_line_style(TRANSPARENT)
        .x_desc("pending jobs")
        .y_desc("ms per pass")
        .draw()?;
    chart.draw_series(LineSeries::new(points.iter().copied(), &BLUE))?;
    chart.draw_series(points.iter().map(|p| Circle::new(*p, 4, BLUE.filled())))?;
    root.present()?;
    println!("wrote {out}");
    Ok(())
}
