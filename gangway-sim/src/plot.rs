//! The SVG plot of `gangway simulate --plot`: utilization and queue length over time, and the
//! share of each account, one colour per simulated policy.

use std::path::Path;

use plotters::prelude::*;

use crate::metrics::{Metrics, Resource};
use crate::result::{Sample, SimResult};

/// Points per line: the samples are read as a step function at this many evenly spaced times.
const POINTS: usize = 800;

const COLOURS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

/// One simulated policy to plot.
#[derive(Clone, Copy, Debug)]
pub struct PlotRun<'a> {
    /// Legend name.
    pub name: &'a str,
    /// The simulation.
    pub result: &'a SimResult,
    /// Its metrics.
    pub metrics: &'a Metrics,
}

/// Writes the plot to `path` as SVG; the message of an error says what failed.
///
/// ```no_run
/// use gangway_sim::plot::{write_plot, PlotRun};
/// use gangway_sim::{metrics::Metrics, SimResult};
/// let result = SimResult::default();
/// let metrics = Metrics::of(&result);
/// write_plot("sim.svg".as_ref(), &[PlotRun { name: "easy", result: &result, metrics: &metrics }]).unwrap();
/// ```
pub fn write_plot(path: &Path, runs: &[PlotRun<'_>]) -> Result<(), String> {
    draw(path, runs).map_err(|e| format!("{}: cannot draw the plot: {e}", path.display()))
}

fn draw(path: &Path, runs: &[PlotRun<'_>]) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::new(path, (1000, 1050)).into_drawing_area();
    root.fill(&WHITE)?;
    let panels = root.split_evenly((3, 1));
    let end_h = runs
        .iter()
        .filter_map(|r| r.result.samples.last())
        .map(|s| s.time_ms as f64 / 3_600_000.0)
        .fold(1e-3, f64::max);
    let unit = match runs.first().map(|r| r.metrics.resource) {
        Some(Resource::Cpu) => "cpu",
        _ => "GPU",
    };

    let mut chart = ChartBuilder::on(&panels[0])
        .caption(format!("{unit} utilization (%)"), ("sans-serif", 20))
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(50)
        .build_cartesian_2d(0.0..end_h, 0.0..100.0)?;
    chart.configure_mesh().x_desc("hours").draw()?;
    for (index, run) in runs.iter().enumerate() {
        let capacity = match run.metrics.resource {
            Resource::Gpu => run.result.capacity_gpus_milli,
            Resource::Cpu => run.result.capacity_cpus_milli,
        }
        .max(1) as f64;
        let busy = |s: &Sample| match run.metrics.resource {
            Resource::Gpu => s.busy_gpus_milli,
            Resource::Cpu => s.busy_cpus_milli,
        } as f64;
        let points = steps(&run.result.samples, end_h, |s| busy(s) / capacity * 100.0);
        let colour = COLOURS[index % COLOURS.len()];
        chart
            .draw_series(LineSeries::new(points, colour))?
            .label(run.name)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], colour));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;

    let max_pending = runs
        .iter()
        .flat_map(|r| r.result.samples.iter().map(|s| s.pending))
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let mut chart = ChartBuilder::on(&panels[1])
        .caption("pending jobs", ("sans-serif", 20))
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(50)
        .build_cartesian_2d(0.0..end_h, 0.0..max_pending * 1.05)?;
    chart.configure_mesh().x_desc("hours").draw()?;
    for (index, run) in runs.iter().enumerate() {
        let points = steps(&run.result.samples, end_h, |s| s.pending as f64);
        chart.draw_series(LineSeries::new(points, COLOURS[index % COLOURS.len()]))?;
    }

    draw_shares(&panels[2], runs, unit)?;
    root.present()?;
    Ok(())
}

fn draw_shares(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    runs: &[PlotRun<'_>],
    unit: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let accounts: Vec<&str> = runs
        .first()
        .map(|r| {
            r.metrics
                .accounts
                .iter()
                .map(|a| a.account.as_str())
                .collect()
        })
        .unwrap_or_default();
    let count = accounts.len().max(1) as f64;
    let mut chart = ChartBuilder::on(area)
        .caption(
            format!("share of {unit}-time per account (%); black: target"),
            ("sans-serif", 20),
        )
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(50)
        .build_cartesian_2d(0.0..count, 0.0..100.0)?;
    chart.configure_mesh().disable_x_mesh().x_labels(0).draw()?;
    let width = 0.8 / runs.len().max(1) as f64;
    for (index, run) in runs.iter().enumerate() {
        let colour = COLOURS[index % COLOURS.len()];
        chart.draw_series(run.metrics.accounts.iter().enumerate().map(|(a, share)| {
            let left = a as f64 + 0.1 + index as f64 * width;
            Rectangle::new(
                [(left, 0.0), (left + width, share.share * 100.0)],
                colour.filled(),
            )
        }))?;
    }
    if let Some(first) = runs.first() {
        chart.draw_series(
            first
                .metrics
                .accounts
                .iter()
                .enumerate()
                .filter_map(|(a, share)| {
                    let target = share.target? * 100.0;
                    Some(PathElement::new(
                        [(a as f64 + 0.05, target), (a as f64 + 0.95, target)],
                        BLACK.stroke_width(2),
                    ))
                }),
        )?;
    }
    chart.draw_series(accounts.iter().enumerate().map(|(a, name)| {
        Text::new(
            name.to_string(),
            (a as f64 + 0.1, 97.0),
            ("sans-serif", 14).into_font(),
        )
    }))?;
    Ok(())
}

/// `value` of the samples read as a step function at `POINTS` evenly spaced times up to
/// `end_h` hours.
fn steps(samples: &[Sample], end_h: f64, value: impl Fn(&Sample) -> f64) -> Vec<(f64, f64)> {
    (0..=POINTS)
        .map(|i| {
            let hours = end_h * i as f64 / POINTS as f64;
            let time_ms = (hours * 3_600_000.0) as u64;
            let after = samples.partition_point(|s| s.time_ms <= time_ms);
            let y = after
                .checked_sub(1)
                .and_then(|i| samples.get(i))
                .map_or(0.0, &value);
            (hours, y)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_hold_the_last_sample() {
        let sample = |time_ms, pending| Sample {
            time_ms,
            busy_gpus_milli: 0,
            busy_cpus_milli: 0,
            pending,
        };
        let samples = [sample(0, 1), sample(1_800_000, 5)];
        let points = steps(&samples, 1.0, |s| s.pending as f64);
        assert_eq!(points.len(), POINTS + 1);
        assert_eq!(points[0], (0.0, 1.0));
        assert_eq!(points[POINTS / 2 - 1].1, 1.0);
        assert_eq!(points[POINTS / 2].1, 5.0);
        assert_eq!(points[POINTS].1, 5.0);
    }
}
