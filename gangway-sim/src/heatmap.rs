//! The SVG heat map of `gangway simulate --sweep`: users × cluster size, one panel for the mean
//! wait a scheduler saves and one for the GPU-hours left idle while a job waited, the cells
//! where the scheduler pays off framed in black.

use std::path::Path;

use plotters::prelude::*;

use crate::sweep::SweepCell;

/// Writes the heat map of `cells` (a full grid, as [`crate::sweep::run_sweep`] returns it)
/// to `path` as SVG; the message of an error says what failed.
///
/// ```no_run
/// use gangway_sim::heatmap::write_heatmap;
/// use gangway_sim::sweep::{run_sweep, SweepParams};
/// let cells = run_sweep(&SweepParams::default(), 2, |_| {}).unwrap();
/// write_heatmap("sweep.svg".as_ref(), &cells).unwrap();
/// ```
pub fn write_heatmap(path: &Path, cells: &[SweepCell]) -> Result<(), String> {
    draw(path, cells).map_err(|e| format!("{}: cannot draw the heat map: {e}", path.display()))
}

/// The sorted distinct values of one axis.
fn axis(cells: &[SweepCell], of: impl Fn(&SweepCell) -> u32) -> Vec<u32> {
    let mut values: Vec<u32> = cells.iter().map(of).collect();
    values.sort_unstable();
    values.dedup();
    values
}

/// White at 0 (or below), deep green at 1.
fn colour(fraction: f64) -> RGBColor {
    let f = fraction.clamp(0.0, 1.0);
    let mix = |from: f64, to: f64| (from + (to - from) * f).round() as u8;
    RGBColor(mix(255.0, 26.0), mix(255.0, 133.0), mix(255.0, 60.0))
}

type Panel<'a> = (&'a str, fn(&SweepCell) -> (f64, String));

fn draw(path: &Path, cells: &[SweepCell]) -> Result<(), Box<dyn std::error::Error>> {
    let gpus = axis(cells, |c| c.gpus);
    let users = axis(cells, |c| c.users);
    let root = SVGBackend::new(path, (1100, 460)).into_drawing_area();
    root.fill(&WHITE)?;
    let panels: [Panel<'_>; 2] = [
        ("mean wait saved by a scheduler (full vs ssh)", |c| {
            (c.wait_saved(), format!("{:.0}%", c.wait_saved() * 100.0))
        }),
        ("GPU-hours idle while a job waited: ssh (saved)", |c| {
            (
                c.idle_saved(),
                format!(
                    "{:.0} ({:.0}%)",
                    c.ssh.idle_hours_while_waiting,
                    c.idle_saved() * 100.0
                ),
            )
        }),
    ];
    let areas = root.split_evenly((1, 2));
    let x_max = gpus.len() as f64 - 0.5;
    let y_max = users.len() as f64 - 0.5;
    for (area, (caption, value)) in areas.iter().zip(panels) {
        let mut chart = ChartBuilder::on(area)
            .caption(caption, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d(-0.5..x_max, -0.5..y_max)?;
        let label = |values: &[u32], x: f64| {
            let index = x.round();
            if (x - index).abs() < 1e-6 && index >= 0.0 {
                values
                    .get(index as usize)
                    .map_or(String::new(), u32::to_string)
            } else {
                String::new()
            }
        };
        chart
            .configure_mesh()
            .disable_mesh()
            .x_labels(gpus.len())
            .y_labels(users.len())
            .x_label_formatter(&|x| label(&gpus, *x))
            .y_label_formatter(&|y| label(&users, *y))
            .x_desc("GPUs")
            .y_desc("users")
            .draw()?;
        for cell in cells {
            let (Some(x), Some(y)) = (
                gpus.iter().position(|&g| g == cell.gpus),
                users.iter().position(|&u| u == cell.users),
            ) else {
                continue;
            };
            let (x, y) = (x as f64, y as f64);
            let (fraction, text) = value(cell);
            chart.draw_series(std::iter::once(Rectangle::new(
                [(x - 0.5, y - 0.5), (x + 0.5, y + 0.5)],
                colour(fraction).filled(),
            )))?;
            if cell.pays_off() {
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(x - 0.46, y - 0.46), (x + 0.46, y + 0.46)],
                    BLACK.stroke_width(2),
                )))?;
            }
            let style = ("sans-serif", 14).into_font().color(&BLACK).pos(
                plotters::style::text_anchor::Pos::new(
                    plotters::style::text_anchor::HPos::Center,
                    plotters::style::text_anchor::VPos::Center,
                ),
            );
            chart.draw_series(std::iter::once(Text::new(text, (x, y), style)))?;
        }
    }
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_run_from_white_to_green_and_clamp() {
        assert_eq!(colour(0.0), RGBColor(255, 255, 255));
        assert_eq!(colour(-3.0), colour(0.0));
        assert_eq!(colour(1.0), RGBColor(26, 133, 60));
        assert_eq!(colour(2.0), colour(1.0));
    }
}
