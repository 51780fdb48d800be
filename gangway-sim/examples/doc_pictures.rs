//! The pictures of docs/simulate.md: the default run's plot (`gangway simulate --plot`) and the
//! default sweep's heat map (`gangway simulate --sweep --plot`), each written as SVG and
//! rendered to PNG with resvg and the DejaVu Sans subset that the picture tests use (shipped in
//! `tests/fixtures/fonts`, so the PNGs are the same on a machine without fonts).
//!
//!     cargo run --release -p gangway-sim --example doc_pictures [-- OUT_DIR]
//!
//! OUT_DIR defaults to `docs/img`; it writes `simulate.svg`, `simulate.png`, `sweep.svg` and
//! `sweep.png` there.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use gangway_sim::account_fold::{self, AccountFold};
use gangway_sim::heatmap::write_heatmap;
use gangway_sim::metrics::Metrics;
use gangway_sim::plot::{PlotRun, write_plot};
use gangway_sim::sweep::{SweepParams, run_sweep};
use gangway_sim::team::TeamParams;
use gangway_sim::{LookSchedule, Overrun, PolicyPreset, SimOptions, Simulator, prepare};
use resvg::{tiny_skia, usvg};

const FONT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/fonts/DejaVuSans-subset.ttf"
);

type Failed = Box<dyn std::error::Error>;
/// Draws one picture as SVG at the path.
type Draw = fn(&Path) -> Result<(), Failed>;

/// The default run, as `gangway simulate --plot` draws it: the team workload (seed 1), every
/// policy, `ssh` with its default looks, accounts folded as in the table.
fn default_run(svg: &Path) -> Result<(), Failed> {
    let workload = TeamParams::default().generate()?;
    let mut runs = Vec::new();
    for policy in PolicyPreset::ALL {
        let (cluster, jobs) = prepare(&workload, None, policy, Overrun::Allow);
        let options = SimOptions {
            looks: (policy == PolicyPreset::Ssh).then(LookSchedule::default),
            ..SimOptions::default()
        };
        let result = Simulator::new(cluster, jobs, options)?.run(|_| Ok(()))?;
        let metrics = Metrics::of(&result);
        runs.push((policy, result, metrics));
    }
    let all: Vec<&Metrics> = runs.iter().map(|(_, _, m)| m).collect();
    let fold = AccountFold::of(&all, Some(account_fold::DEFAULT_SHOWN));
    let folded: Vec<Metrics> = all.iter().map(|m| fold.apply(m)).collect();
    let plot_runs = PlotRun::of_runs(&runs, &folded);
    write_plot(svg, &plot_runs)?;
    Ok(())
}

/// The default sweep, as `gangway simulate --sweep --plot` draws it.
fn default_sweep(svg: &Path) -> Result<(), Failed> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cells = run_sweep(&SweepParams::default(), threads, |_| {})?;
    write_heatmap(svg, &cells)?;
    Ok(())
}

/// Renders `svg` to `png` with the fixture font.
fn render(svg: &Path, png: &Path) -> Result<(), Failed> {
    let mut fonts = usvg::fontdb::Database::new();
    fonts.load_font_data(std::fs::read(FONT)?);
    fonts.set_sans_serif_family("DejaVu Sans");
    let options = usvg::Options {
        fontdb: Arc::new(fonts),
        ..usvg::Options::default()
    };
    let tree = usvg::Tree::from_str(&std::fs::read_to_string(svg)?, &options)?;
    let size = tree.size().to_int_size();
    let mut pixmap =
        tiny_skia::Pixmap::new(size.width(), size.height()).ok_or("the picture has no size")?;
    // An opaque background: a transparent PNG reads badly on a dark page.
    pixmap.fill(tiny_skia::Color::WHITE);
    resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
    pixmap.save_png(png)?;
    Ok(())
}

fn main() -> Result<(), Failed> {
    let dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "docs/img".to_string()),
    );
    std::fs::create_dir_all(&dir)?;
    let pictures: [(&str, Draw); 2] = [("simulate", default_run), ("sweep", default_sweep)];
    for (name, draw) in pictures {
        let svg = dir.join(format!("{name}.svg"));
        let png = dir.join(format!("{name}.png"));
        draw(&svg)?;
        render(&svg, &png)?;
        println!("{} and {}", svg.display(), png.display());
    }
    Ok(())
}
