//! The SVG plot of `gangway simulate --plot`: one legend for the whole figure, then GPU
//! utilization and the jobs waiting over time, and each account's share of the GPU-time in the
//! contended hours against its target, one colour per simulated policy.
//!
//! The shares are those of the contended hours (two or more teams waiting), the ones a policy
//! changes: over the whole run every job completes under every policy, so whole-run shares
//! measure the workload. The jobs waiting under `ssh` are the jobs waiting for their user's
//! next look (the host model keeps them outside the scheduler's queue).

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::PolicyPreset;
use crate::figure::{colour_of, fitted, text_width};
use crate::metrics::{AccountShare, Metrics, Resource};
use crate::result::{Sample, SimResult};

/// Points per line: the samples are read as a step function at this many evenly spaced times.
const POINTS: usize = 800;
/// Utilization is drawn as its mean over this many equal spans of the run: every policy's
/// line changes at every start and end, and five of them drawn sample by sample are a tangle.
const BINS: usize = 120;

/// The figure's size without many accounts; it widens so that each account gets
/// [`MIN_GROUP_PX`].
const WIDTH: u32 = 1000;
const HEIGHT: u32 = 1150;
/// The legend's strip at the top.
const LEGEND_HEIGHT: u32 = 50;
/// The narrowest an account's group of bars is drawn.
const MIN_GROUP_PX: f64 = 22.0;
/// Space left of the plotting area for the y labels, and the charts' margin.
const Y_LABELS: u32 = 60;
const MARGIN: u32 = 12;
/// Font sizes (plotters' sizes): captions, tick and account labels, the legend.
const CAPTION: f64 = 20.0;
const LABEL: f64 = 15.0;
/// The size of account names across their groups when they do not fit at `LABEL`.
const SMALL_LABEL: f64 = 13.0;
const LEGEND: f64 = 17.0;
/// The longest account label, in characters, when labels are drawn vertically.
const VERTICAL_LABEL_CHARS: usize = 14;

/// One simulated policy to plot.
#[derive(Clone, Copy, Debug)]
pub struct PlotRun<'a> {
    /// Legend name.
    pub name: &'a str,
    /// The simulation.
    pub result: &'a SimResult,
    /// Its metrics. Every account in them gets its bars: fold many accounts first
    /// ([`crate::account_fold`]).
    pub metrics: &'a Metrics,
}

impl<'a> PlotRun<'a> {
    /// One run per simulated policy: each policy's simulation with `folded[i]` as the metrics
    /// of `runs[i]` (its accounts folded, [`crate::account_fold`]).
    pub fn of_runs(
        runs: &'a [(PolicyPreset, SimResult, Metrics)],
        folded: &'a [Metrics],
    ) -> Vec<PlotRun<'a>> {
        runs.iter()
            .zip(folded)
            .map(|((policy, result, _), metrics)| PlotRun {
                name: policy.name(),
                result,
                metrics,
            })
            .collect()
    }
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

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
type Drawn = Result<(), Box<dyn std::error::Error>>;

/// The time axis: hours, or days for runs longer than three days.
#[derive(Clone, Copy)]
struct TimeAxis {
    end: f64,
    ms_per_unit: f64,
    name: &'static str,
}

impl TimeAxis {
    fn of(runs: &[PlotRun<'_>]) -> TimeAxis {
        let end_ms = runs
            .iter()
            .filter_map(|r| r.result.samples.last())
            .map(|s| s.time_ms as f64)
            .fold(0.0, f64::max);
        let (ms_per_unit, name) = if end_ms > 72.0 * 3_600_000.0 {
            (86_400_000.0, "days")
        } else {
            (3_600_000.0, "hours")
        };
        TimeAxis {
            end: (end_ms / ms_per_unit).max(1e-3),
            ms_per_unit,
            name,
        }
    }
}

fn draw(path: &Path, runs: &[PlotRun<'_>]) -> Drawn {
    let groups = runs.first().map_or(0, |r| r.metrics.contended_shares.len());
    let width = WIDTH.max(Y_LABELS + 3 * MARGIN + (groups as f64 * MIN_GROUP_PX).ceil() as u32);
    let root = SVGBackend::new(path, (width, HEIGHT)).into_drawing_area();
    root.fill(&WHITE)?;
    let (legend, body) = root.split_vertically(LEGEND_HEIGHT);
    draw_legend(&legend, runs)?;
    let panels = body.split_evenly((3, 1));
    let time = TimeAxis::of(runs);
    let unit = match runs.first().map(|r| r.metrics.resource) {
        Some(Resource::Cpu) => "cpu",
        _ => "GPU",
    };
    draw_utilization(&panels[0], runs, time, unit)?;
    draw_pending(&panels[1], runs, time)?;
    draw_shares(&panels[2], runs, unit)?;
    root.present()?;
    Ok(())
}

/// The policies' colours and the target's black line, in one row across the top.
fn draw_legend(area: &Area<'_>, runs: &[PlotRun<'_>]) -> Drawn {
    const SWATCH: i32 = 28;
    const GAP: i32 = 30;
    let mut entries: Vec<(String, RGBColor)> = runs
        .iter()
        .enumerate()
        .map(|(index, run)| (run.name.to_string(), colour_of(index)))
        .collect();
    let targets = runs.first().is_some_and(|r| {
        r.metrics
            .contended_shares
            .iter()
            .any(|a| a.target.is_some())
    });
    if targets {
        entries.push(("target share".to_string(), BLACK));
    }
    let widths: Vec<i32> = entries
        .iter()
        .map(|(name, _)| SWATCH + 8 + text_width(name, LEGEND).ceil() as i32)
        .collect();
    let total: i32 = widths.iter().sum::<i32>() + GAP * (widths.len() as i32 - 1);
    let (area_width, area_height) = area.dim_in_pixel();
    let mut x = (area_width as i32 - total).max(0) / 2;
    let y = area_height as i32 / 2;
    let font = ("sans-serif", LEGEND)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    for ((name, colour), width) in entries.iter().zip(widths) {
        area.draw(&PathElement::new(
            [(x, y), (x + SWATCH, y)],
            colour.stroke_width(3),
        ))?;
        area.draw(&Text::new(name.clone(), (x + SWATCH + 8, y), font.clone()))?;
        x += width + GAP;
    }
    Ok(())
}

fn draw_utilization(area: &Area<'_>, runs: &[PlotRun<'_>], time: TimeAxis, unit: &str) -> Drawn {
    let bin_h = time.end * time.ms_per_unit / BINS as f64 / 3_600_000.0;
    let bin = if bin_h >= 24.0 {
        format!("{:.1} days", bin_h / 24.0)
    } else {
        format!("{bin_h:.1} hours")
    };
    let mut chart = ChartBuilder::on(area)
        .caption(
            format!("{unit} utilization (%), mean of every {bin}"),
            ("sans-serif", CAPTION),
        )
        .margin(MARGIN)
        .x_label_area_size(40)
        .y_label_area_size(Y_LABELS)
        .build_cartesian_2d(0.0..time.end, 0.0..100.0)?;
    chart
        .configure_mesh()
        .label_style(("sans-serif", LABEL))
        .x_desc(time.name)
        .x_label_formatter(&|x| tick(*x))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .draw()?;
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
        let points = bin_means(&run.result.samples, time, BINS, |s| {
            busy(s) / capacity * 100.0
        });
        chart.draw_series(LineSeries::new(points, colour_of(index)))?;
    }
    Ok(())
}

/// The jobs waiting, on a whole-number axis.
fn draw_pending(area: &Area<'_>, runs: &[PlotRun<'_>], time: TimeAxis) -> Drawn {
    let max_pending = runs
        .iter()
        .flat_map(|r| r.result.samples.iter().map(|s| s.pending as u64))
        .max()
        .unwrap_or(0)
        .max(1);
    // Under ssh the jobs waiting are outside the scheduler: say what they wait for.
    let ssh = crate::PolicyPreset::Ssh.name();
    let caption = if runs.iter().any(|r| r.name == ssh) {
        "jobs waiting (ssh: for their user's next look)"
    } else {
        "jobs waiting"
    };
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", CAPTION))
        .margin(MARGIN)
        .x_label_area_size(40)
        .y_label_area_size(Y_LABELS)
        .build_cartesian_2d(0.0..time.end, 0u64..max_pending + max_pending / 20 + 1)?;
    chart
        .configure_mesh()
        .label_style(("sans-serif", LABEL))
        .x_desc(time.name)
        .x_label_formatter(&|x| tick(*x))
        .draw()?;
    for (index, run) in runs.iter().enumerate() {
        let points = steps(&run.result.samples, time, |s| s.pending as f64)
            .into_iter()
            .map(|(x, y)| (x, y as u64));
        chart.draw_series(LineSeries::new(points, colour_of(index)))?;
    }
    Ok(())
}

/// Each account's share of the resource-time in the contended hours, one bar per policy, and
/// its target as a black line; the account's name under its bars, across when every name
/// fits its group, else down the page.
fn draw_shares(area: &Area<'_>, runs: &[PlotRun<'_>], unit: &str) -> Drawn {
    let caption =
        format!("share of {unit}-time per account (%) in the hours two or more teams waited");
    let contended: Vec<(usize, &[AccountShare])> = runs
        .iter()
        .enumerate()
        .filter(|(_, r)| r.metrics.contended_hours > 0.0)
        .map(|(index, r)| (index, r.metrics.contended_shares.as_slice()))
        .collect();
    let accounts: Vec<&AccountShare> = runs
        .first()
        .map(|r| r.metrics.contended_shares.iter().collect())
        .unwrap_or_default();
    if contended.is_empty() || accounts.is_empty() {
        let (w, h) = area.dim_in_pixel();
        area.draw(&Text::new(
            caption,
            (w as i32 / 2, 20),
            ("sans-serif", CAPTION)
                .into_font()
                .color(&BLACK)
                .pos(Pos::new(HPos::Center, VPos::Top)),
        ))?;
        area.draw(&Text::new(
            "no hour was contended: no two teams waited at once",
            (w as i32 / 2, h as i32 / 2),
            ("sans-serif", LABEL)
                .into_font()
                .color(&BLACK)
                .pos(Pos::new(HPos::Center, VPos::Center)),
        ))?;
        return Ok(());
    }
    let count = accounts.len();
    let (area_width, _) = area.dim_in_pixel();
    let group_px = f64::from(area_width.saturating_sub(Y_LABELS + 2 * MARGIN)) / count as f64;
    // Across at the usual size, or a smaller one, when every name fits its group.
    let across = [LABEL, SMALL_LABEL].into_iter().find(|&size| {
        accounts
            .iter()
            .all(|a| text_width(&a.account, size) <= group_px - 6.0)
    });
    let label_area = if across.is_some() {
        36
    } else {
        16 + text_width(&"m".repeat(VERTICAL_LABEL_CHARS), LABEL).ceil() as u32
    };
    let top = contended
        .iter()
        .flat_map(|(_, shares)| shares.iter().map(|a| a.share))
        .chain(accounts.iter().filter_map(|a| a.target))
        .fold(0.0, f64::max);
    let y_top = ((top * 115.0 / 10.0).ceil() * 10.0).clamp(10.0, 100.0);
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", CAPTION))
        .margin(MARGIN)
        .x_label_area_size(label_area)
        .y_label_area_size(Y_LABELS)
        .build_cartesian_2d(0.0..count as f64, 0.0..y_top)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        // Only the labelled lines: a light line every half percent hides the target lines.
        .light_line_style(TRANSPARENT)
        .x_labels(0)
        .label_style(("sans-serif", LABEL))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .draw()?;
    let width = 0.8 / runs.len() as f64;
    for (index, shares) in &contended {
        chart.draw_series(shares.iter().enumerate().map(|(a, share)| {
            let left = a as f64 + 0.1 + *index as f64 * width;
            Rectangle::new(
                [(left, 0.0), (left + width, share.share * 100.0)],
                colour_of(*index).filled(),
            )
        }))?;
    }
    chart.draw_series(accounts.iter().enumerate().filter_map(|(a, share)| {
        let target = share.target? * 100.0;
        Some(PathElement::new(
            [(a as f64 + 0.05, target), (a as f64 + 0.95, target)],
            BLACK.stroke_width(2),
        ))
    }))?;
    // The names, in the area's pixels below the plotting area.
    let (_, bottom) = chart.backend_coord(&(0.0, 0.0));
    let (area_left, area_top) = area.get_base_pixel();
    for (a, share) in accounts.iter().enumerate() {
        let (x, _) = chart.backend_coord(&(a as f64 + 0.5, 0.0));
        let at = (x - area_left, bottom - area_top + 8);
        let text = if across.is_some() {
            Some(share.account.clone())
        } else {
            let chars: String = share.account.chars().take(VERTICAL_LABEL_CHARS).collect();
            let limit = text_width(&"m".repeat(VERTICAL_LABEL_CHARS), LABEL);
            fitted(&chars, LABEL, limit)
        };
        let Some(text) = text else { continue };
        let font = match across {
            Some(size) => ("sans-serif", size)
                .into_font()
                .color(&BLACK)
                .pos(Pos::new(HPos::Center, VPos::Top)),
            None => ("sans-serif", LABEL)
                .into_font()
                .transform(FontTransform::Rotate90)
                .color(&BLACK)
                .pos(Pos::new(HPos::Left, VPos::Center)),
        };
        area.draw(&Text::new(text, at, font))?;
    }
    Ok(())
}

/// `value` of the samples read as a step function at `POINTS` evenly spaced times of the
/// time axis.
fn steps(samples: &[Sample], time: TimeAxis, value: impl Fn(&Sample) -> f64) -> Vec<(f64, f64)> {
    (0..=POINTS)
        .map(|i| {
            let at = time.end * i as f64 / POINTS as f64;
            let time_ms = (at * time.ms_per_unit) as u64;
            let after = samples.partition_point(|s| s.time_ms <= time_ms);
            let y = after
                .checked_sub(1)
                .and_then(|i| samples.get(i))
                .map_or(0.0, &value);
            (at, y)
        })
        .collect()
}

/// The mean of `value` of the samples, read as a step function (0 before the first), over
/// each of `bins` equal spans of the time axis, as the two ends of a flat line per span.
fn bin_means(
    samples: &[Sample],
    time: TimeAxis,
    bins: usize,
    value: impl Fn(&Sample) -> f64,
) -> Vec<(f64, f64)> {
    let width = time.end * time.ms_per_unit / bins as f64;
    let mut points = Vec::with_capacity(2 * bins);
    let (mut next, mut current) = (0, 0.0);
    for bin in 0..bins {
        let (start, end) = (bin as f64 * width, (bin + 1) as f64 * width);
        let (mut at, mut area) = (start, 0.0);
        while let Some(sample) = samples.get(next).filter(|s| s.time_ms as f64 <= end) {
            let t = (sample.time_ms as f64).max(at);
            area += current * (t - at);
            at = t;
            current = value(sample);
            next += 1;
        }
        area += current * (end - at);
        let mean = area / width;
        points.push((start / time.ms_per_unit, mean));
        points.push((end / time.ms_per_unit, mean));
    }
    points
}

/// A tick of the time axis: whole numbers without a fraction (`2`, not `2.0`).
fn tick(x: f64) -> String {
    if (x - x.round()).abs() < 1e-9 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}").trim_end_matches('0').to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_hold_the_time_weighted_mean() {
        let sample = |time_ms, pending| Sample {
            time_ms,
            busy_gpus_milli: 0,
            busy_cpus_milli: 0,
            pending,
        };
        let hour = TimeAxis {
            end: 1.0,
            ms_per_unit: 3_600_000.0,
            name: "hours",
        };
        // 0 until 15 min, 4 until 45 min, 8 after.
        let samples = [sample(900_000, 4), sample(2_700_000, 8)];
        let points = bin_means(&samples, hour, 2, |s| s.pending as f64);
        assert_eq!(points, [(0.0, 2.0), (0.5, 2.0), (0.5, 6.0), (1.0, 6.0)]);
    }

    #[test]
    fn ticks_drop_a_zero_fraction() {
        assert_eq!(tick(2.0), "2");
        assert_eq!(tick(0.0), "0");
        assert_eq!(tick(2.5), "2.5");
        assert_eq!(tick(10.0), "10");
    }

    #[test]
    fn steps_hold_the_last_sample() {
        let sample = |time_ms, pending| Sample {
            time_ms,
            busy_gpus_milli: 0,
            busy_cpus_milli: 0,
            pending,
        };
        let samples = [sample(0, 1), sample(1_800_000, 5)];
        let hour = TimeAxis {
            end: 1.0,
            ms_per_unit: 3_600_000.0,
            name: "hours",
        };
        let points = steps(&samples, hour, |s| s.pending as f64);
        assert_eq!(points.len(), POINTS + 1);
        assert_eq!(points[0], (0.0, 1.0));
        assert_eq!(points[POINTS / 2 - 1].1, 1.0);
        assert_eq!(points[POINTS / 2].1, 5.0);
        assert_eq!(points[POINTS].1, 5.0);
    }
}
