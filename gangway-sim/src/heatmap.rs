//! The SVG heat map of `gangway simulate --sweep`: users × cluster size, for each policy
//! compared with the baseline a row of two panels, one for the mean wait it cuts and one for
//! the GPU-hours left idle while a job waited that it cuts, coloured by the cut on one scale
//! (the colour bar under them); the cells where the policy pays off are framed in black, as
//! the key under the panels says.

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::PolicyPreset;
use crate::figure::{svg_px, text_width};
use crate::sweep::SweepCell;

const WIDTH: u32 = 1300;
/// The height of one row of panels (one compared policy).
const ROW_HEIGHT: u32 = 480;
/// The title's strip at the top and the key's at the bottom.
const TITLE_HEIGHT: u32 = 50;
const KEY_HEIGHT: u32 = 110;
/// Font sizes (plotters' sizes).
const TITLE: f64 = 22.0;
const CAPTION: f64 = 18.0;
const LABEL: f64 = 15.0;
const CELL: f64 = 16.0;
const CELL_DETAIL: f64 = 12.0;
const CELL_SMALLEST: f64 = 11.0;
/// The frame of a cell that pays off: its inset from the cell's edge and its width, in pixels.
const FRAME_INSET: f64 = 4.0;
const FRAME_WIDTH: u32 = 3;
/// The least room, in pixels, between a cell's text and its frame.
const TEXT_PAD: f64 = 4.0;

/// Writes the heat map of `cells` (a full grid, as [`crate::sweep::run_sweep`] returns it)
/// to `path` as SVG, a row of panels per compared policy in the order of the cells; the
/// message of an error says what failed.
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
fn axis(cells: &[&SweepCell], of: impl Fn(&SweepCell) -> u32) -> Vec<u32> {
    let mut values: Vec<u32> = cells.iter().map(|&c| of(c)).collect();
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

/// Text that reads on `colour(fraction)`: white on the darker greens.
fn ink(fraction: f64) -> RGBColor {
    if fraction > 0.6 {
        RGBColor(255, 255, 255)
    } else {
        RGBColor(0, 0, 0)
    }
}

/// A cut as a percentage, `-` sign for a scheduler that made it worse.
fn percent(fraction: f64) -> String {
    format!("{:.0}%", fraction * 100.0)
}

/// One panel: its caption (after the policy's name) and, per cell, the fraction that colours
/// it and its text lines (the second smaller, shown when there is room).
struct Panel {
    caption: &'static str,
    value: fn(&SweepCell) -> (f64, String, Option<String>),
}

const PANELS: [Panel; 2] = [
    Panel {
        caption: "mean wait cut",
        value: |c| (c.wait_saved(), percent(c.wait_saved()), None),
    },
    Panel {
        caption: "GPU-hours idle while a job waited, cut",
        value: |c| {
            (
                c.idle_saved(),
                percent(c.idle_saved()),
                Some(format!(
                    "of {:.0} h",
                    c.baseline_metrics.idle_hours_while_waiting
                )),
            )
        },
    },
];

/// The compared policies, in the order of the cells.
fn policies(cells: &[SweepCell]) -> Vec<PolicyPreset> {
    let mut policies = Vec::new();
    for cell in cells {
        if !policies.contains(&cell.policy) {
            policies.push(cell.policy);
        }
    }
    policies
}

/// A baseline's name, and what it is when it is no scheduler.
fn described(baseline: PolicyPreset) -> String {
    match baseline {
        PolicyPreset::Ssh => "ssh (no scheduler)".to_string(),
        other => other.name().to_string(),
    }
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
type Drawn = Result<(), Box<dyn std::error::Error>>;

fn draw(path: &Path, cells: &[SweepCell]) -> Drawn {
    let policies = policies(cells);
    let rows = policies.len().max(1);
    let height = TITLE_HEIGHT + ROW_HEIGHT * rows as u32 + KEY_HEIGHT;
    let root = SVGBackend::new(path, (WIDTH, height)).into_drawing_area();
    root.fill(&WHITE)?;
    let (title, rest) = root.split_vertically(TITLE_HEIGHT);
    let (body, key) = rest.split_vertically(height - TITLE_HEIGHT - KEY_HEIGHT);
    let baseline = cells.first().map_or(PolicyPreset::Ssh, |c| c.baseline);
    let names: Vec<&str> = policies.iter().map(|p| p.name()).collect();
    let question = if baseline == PolicyPreset::Ssh {
        "Does a scheduler pay off?"
    } else {
        "Does it pay off?"
    };
    title.draw(&Text::new(
        format!(
            "{question} {} against {}",
            names.join(", "),
            described(baseline)
        ),
        (WIDTH as i32 / 2, TITLE_HEIGHT as i32 / 2),
        ("sans-serif", TITLE)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, VPos::Center)),
    ))?;
    let areas = body.split_evenly((rows, 2));
    for (row, policy) in areas.chunks(2).zip(&policies) {
        let of_policy: Vec<&SweepCell> = cells.iter().filter(|c| c.policy == *policy).collect();
        for (area, panel) in row.iter().zip(&PANELS) {
            draw_panel(area, &of_policy, *policy, panel)?;
        }
    }
    draw_key(&key, baseline)
}

fn draw_panel(area: &Area<'_>, cells: &[&SweepCell], policy: PolicyPreset, panel: &Panel) -> Drawn {
    let gpus = axis(cells, |c| c.gpus);
    let users = axis(cells, |c| c.users);
    let x_max = gpus.len() as f64 - 0.5;
    let y_max = users.len() as f64 - 0.5;
    let caption = format!("{}: {}", policy.name(), panel.caption);
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", CAPTION))
        .margin(14)
        .x_label_area_size(50)
        .y_label_area_size(60)
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
        .label_style(("sans-serif", LABEL))
        .axis_desc_style(("sans-serif", LABEL))
        .x_label_formatter(&|x| label(&gpus, *x))
        .y_label_formatter(&|y| label(&users, *y))
        .x_desc("GPUs in the cluster")
        .y_desc("users")
        .draw()?;
    let (area_left, area_top) = area.get_base_pixel();
    for &cell in cells {
        let (Some(x), Some(y)) = (
            gpus.iter().position(|&g| g == cell.gpus),
            users.iter().position(|&u| u == cell.users),
        ) else {
            continue;
        };
        let (x, y) = (x as f64, y as f64);
        let (fraction, text, detail) = (panel.value)(cell);
        chart.draw_series(std::iter::once(Rectangle::new(
            [(x - 0.5, y - 0.5), (x + 0.5, y + 0.5)],
            colour(fraction).filled(),
        )))?;
        // The cell in the area's pixels.
        let (left, top) = chart.backend_coord(&(x - 0.5, y + 0.5));
        let (right, bottom) = chart.backend_coord(&(x + 0.5, y - 0.5));
        let (left, top) = (left - area_left, top - area_top);
        let (right, bottom) = (right - area_left, bottom - area_top);
        let inset = FRAME_INSET as i32;
        if cell.pays_off() {
            area.draw(&Rectangle::new(
                [(left + inset, top + inset), (right - inset, bottom - inset)],
                BLACK.stroke_width(FRAME_WIDTH),
            ))?;
        }
        // The room inside the frame, less the padding.
        let room_x =
            f64::from(right - left) - 2.0 * (FRAME_INSET + f64::from(FRAME_WIDTH) + TEXT_PAD);
        let room_y =
            f64::from(bottom - top) - 2.0 * (FRAME_INSET + f64::from(FRAME_WIDTH) + TEXT_PAD);
        let (cx, cy) = ((left + right) / 2, (top + bottom) / 2);
        // The number whole at the largest size that fits (never cut short), and the detail
        // under it when both fit at their usual sizes.
        let size = [CELL, CELL_DETAIL, CELL_SMALLEST]
            .into_iter()
            .find(|&size| text_width(&text, size) <= room_x && line_height(size) <= room_y);
        let lines: Vec<(String, f64)> = match (size, detail) {
            (None, _) => Vec::new(),
            (Some(CELL), Some(detail))
                if text_width(&detail, CELL_DETAIL) <= room_x
                    && line_height(CELL) + line_height(CELL_DETAIL) <= room_y =>
            {
                vec![(text, CELL), (detail, CELL_DETAIL)]
            }
            (Some(size), _) => vec![(text, size)],
        };
        let total: f64 = lines.iter().map(|(_, size)| line_height(*size)).sum();
        let mut line_top = f64::from(cy) - total / 2.0;
        for (text, size) in lines {
            let centre = line_top + line_height(size) / 2.0;
            area.draw(&Text::new(
                text,
                (cx, centre.round() as i32),
                ("sans-serif", size)
                    .into_font()
                    .color(&ink(fraction))
                    .pos(Pos::new(HPos::Center, VPos::Center)),
            ))?;
            line_top += line_height(size);
        }
    }
    Ok(())
}

/// The height a line of text takes, with room between lines.
fn line_height(size: f64) -> f64 {
    1.3 * svg_px(size)
}

/// The colour bar, 0% to 100% cut against `baseline`, and what a frame means.
fn draw_key(area: &Area<'_>, baseline: PolicyPreset) -> Drawn {
    const BAR_LEFT: i32 = 330;
    const BAR_WIDTH: i32 = 400;
    const BAR_TOP: i32 = 12;
    const BAR_HEIGHT: i32 = 18;
    const STEPS: i32 = 100;
    let font = |size: f64, h: HPos| {
        ("sans-serif", size)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(h, VPos::Center))
    };
    area.draw(&Text::new(
        format!("colour: the cut, against {}", baseline.name()),
        (BAR_LEFT - 16, BAR_TOP + BAR_HEIGHT / 2),
        font(LABEL, HPos::Right),
    ))?;
    for step in 0..STEPS {
        let x = BAR_LEFT + step * BAR_WIDTH / STEPS;
        let next = BAR_LEFT + (step + 1) * BAR_WIDTH / STEPS;
        area.draw(&Rectangle::new(
            [(x, BAR_TOP), (next, BAR_TOP + BAR_HEIGHT)],
            colour(f64::from(step) / f64::from(STEPS - 1)).filled(),
        ))?;
    }
    area.draw(&Rectangle::new(
        [
            (BAR_LEFT, BAR_TOP),
            (BAR_LEFT + BAR_WIDTH, BAR_TOP + BAR_HEIGHT),
        ],
        BLACK.stroke_width(1),
    ))?;
    for tick in 0..=4 {
        let x = BAR_LEFT + tick * BAR_WIDTH / 4;
        area.draw(&PathElement::new(
            [(x, BAR_TOP + BAR_HEIGHT), (x, BAR_TOP + BAR_HEIGHT + 5)],
            BLACK.stroke_width(1),
        ))?;
        area.draw(&Text::new(
            format!("{}%", tick * 25),
            (x, BAR_TOP + BAR_HEIGHT + 16),
            font(LABEL, HPos::Center),
        ))?;
    }
    let (row, square) = (80, 30);
    area.draw(&Rectangle::new(
        [(40, row - square / 2), (40 + square, row + square / 2)],
        BLACK.stroke_width(FRAME_WIDTH),
    ))?;
    let lines = [
        format!(
            "framed: the policy pays off against {}, by the sweep's rule: it cuts the mean wait \
             by 25% and",
            baseline.name()
        ),
        "30 minutes or more, or the idle GPU-hours by 10% and 1% of the cluster's or more".into(),
    ];
    for (line, dy) in lines.iter().zip([-9, 9]) {
        area.draw(&Text::new(
            line.as_str(),
            (40 + square + 12, row + dy),
            font(LABEL, HPos::Left),
        ))?;
    }
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
