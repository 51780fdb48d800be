//! The pictures read at a glance (issue 27, item 4): the plot of a plain run and the sweep's
//! heat map are rendered with a real font (a subset of DejaVu Sans, the widest common
//! sans-serif, shipped as a fixture so that a machine without fonts cannot pass by drawing no
//! text) and their text is checked: every label laid out, inside the figure, none on top of
//! another, none across a frame, counts on whole-number ticks, one legend. The PNGs are left
//! in the test's target directory (`pictures/`) to be looked at.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use gangway_sim::account_fold::AccountFold;
use gangway_sim::heatmap::write_heatmap;
use gangway_sim::metrics::Metrics;
use gangway_sim::plot::{PlotRun, write_plot};
use gangway_sim::sweep::{SweepCell, SweepParams, run_sweep};
use gangway_sim::team::{TeamFile, TeamParams};
use gangway_sim::{LookSchedule, Overrun, PolicyPreset, SimOptions, SimResult, Simulator, prepare};
use resvg::tiny_skia;
use resvg::usvg;

const FONT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/fonts/DejaVuSans-subset.ttf"
);

/// A box in the figure's pixels.
#[derive(Clone, Copy, Debug)]
struct Box2 {
    left: f32,
    top: f32,
    right: f32,
    bottom: f32,
}

impl Box2 {
    fn of(rect: usvg::Rect) -> Box2 {
        Box2 {
            left: rect.left(),
            top: rect.top(),
            right: rect.right(),
            bottom: rect.bottom(),
        }
    }

    /// Whether the two share more than a hair (antialiasing) of area.
    fn overlaps(&self, other: &Box2) -> bool {
        const HAIR: f32 = 0.5;
        self.left + HAIR < other.right
            && other.left + HAIR < self.right
            && self.top + HAIR < other.bottom
            && other.top + HAIR < self.bottom
    }

    fn inside(&self, other: &Box2) -> bool {
        self.left >= other.left
            && self.right <= other.right
            && self.top >= other.top
            && self.bottom <= other.bottom
    }

    fn shrunk(&self, by: f32) -> Box2 {
        Box2 {
            left: self.left + by,
            top: self.top + by,
            right: self.right - by,
            bottom: self.bottom - by,
        }
    }
}

/// What was laid out: each text with its box, and each stroked rectangle outline (a frame)
/// with its stroke width.
struct Layout {
    figure: Box2,
    texts: Vec<(String, Box2)>,
    frames: Vec<(Box2, f32)>,
}

/// Renders `svg` with the fixture font, writes it as `NAME.png` in the target directory, and
/// returns its layout.
fn render(svg: &Path, name: &str) -> Layout {
    let mut fonts = usvg::fontdb::Database::new();
    fonts.load_font_data(std::fs::read(FONT).expect("the font fixture"));
    fonts.set_sans_serif_family("DejaVu Sans");
    let options = usvg::Options {
        fontdb: Arc::new(fonts),
        ..usvg::Options::default()
    };
    let text = std::fs::read_to_string(svg).unwrap();
    let tree = usvg::Tree::from_str(&text, &options).unwrap();
    let size = tree.size().to_int_size();
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height()).unwrap();
    resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("pictures");
    std::fs::create_dir_all(&dir).unwrap();
    pixmap.save_png(dir.join(format!("{name}.png"))).unwrap();
    let mut layout = Layout {
        figure: Box2 {
            left: 0.0,
            top: 0.0,
            right: size.width() as f32,
            bottom: size.height() as f32,
        },
        texts: Vec::new(),
        frames: Vec::new(),
    };
    collect(tree.root(), &mut layout);
    layout
}

fn collect(group: &usvg::Group, layout: &mut Layout) {
    for node in group.children() {
        match node {
            usvg::Node::Group(group) => collect(group, layout),
            usvg::Node::Text(text) => {
                let content: String = text.chunks().iter().map(|c| c.text()).collect();
                layout
                    .texts
                    .push((content, Box2::of(text.abs_bounding_box())));
            }
            usvg::Node::Path(path) => {
                let (Some(stroke), None) = (path.stroke(), path.fill()) else {
                    continue;
                };
                let bounds = Box2::of(path.abs_bounding_box());
                let on_edge = |p: &tiny_skia::Point| {
                    let near = |a: f32, b: f32| (a - b).abs() < 0.01;
                    (near(p.x, bounds.left) || near(p.x, bounds.right))
                        || (near(p.y, bounds.top) || near(p.y, bounds.bottom))
                };
                let rectangle = bounds.right - bounds.left > 2.0
                    && bounds.bottom - bounds.top > 2.0
                    && path.data().points().len() >= 4
                    && path.data().points().iter().all(on_edge);
                if rectangle {
                    layout.frames.push((bounds, stroke.width().get()));
                }
            }
            usvg::Node::Image(_) => {}
        }
    }
}

/// Every text was laid out (a machine without the font lays out none), lies in the figure,
/// overlaps no other and crosses no frame.
fn check_text(layout: &Layout, at_least: usize) {
    let texts: Vec<&(String, Box2)> = layout
        .texts
        .iter()
        .filter(|(t, _)| !t.trim().is_empty())
        .collect();
    assert!(
        texts.len() >= at_least,
        "{} texts laid out, expected at least {at_least}: {:?}",
        texts.len(),
        layout.texts
    );
    for (text, bounds) in &texts {
        assert!(
            bounds.right - bounds.left > 1.0 && bounds.bottom - bounds.top > 1.0,
            "{text:?} has no size: {bounds:?}"
        );
        assert!(
            bounds.inside(&layout.figure),
            "{text:?} at {bounds:?} leaves the figure {:?}",
            layout.figure
        );
    }
    for (i, (a, box_a)) in texts.iter().enumerate() {
        for (b, box_b) in &texts[i + 1..] {
            assert!(
                !box_a.overlaps(box_b),
                "{a:?} at {box_a:?} overlaps {b:?} at {box_b:?}"
            );
        }
        for (frame, width) in &layout.frames {
            let inner = frame.shrunk(*width / 2.0);
            assert!(
                box_a.inside(&inner.shrunk(1.0)) || !box_a.overlaps(&frame.shrunk(-width / 2.0)),
                "{a:?} at {box_a:?} touches the frame {frame:?}"
            );
        }
    }
}

/// Texts that are numbers with a fraction, as tick labels of counts must not be.
fn fractional_numbers(layout: &Layout) -> Vec<String> {
    layout
        .texts
        .iter()
        .map(|(t, _)| t.clone())
        .filter(|t| t.contains('.') && t.parse::<f64>().is_ok())
        .collect()
}

fn count(layout: &Layout, text: &str) -> usize {
    layout.texts.iter().filter(|(t, _)| t == text).count()
}

/// The team workload of `file` under `policies`, as `gangway simulate` runs it.
fn runs(file: &TeamFile, policies: &[PolicyPreset]) -> Vec<(PolicyPreset, SimResult, Metrics)> {
    let workload = file
        .apply(TeamParams::default())
        .unwrap()
        .generate()
        .unwrap();
    policies
        .iter()
        .map(|&policy| {
            let (cluster, jobs) = prepare(&workload, None, policy, Overrun::Allow);
            let options = SimOptions {
                looks: (policy == PolicyPreset::Ssh).then(LookSchedule::default),
                ..SimOptions::default()
            };
            let result = Simulator::new(cluster, jobs, options)
                .unwrap()
                .run(|_| Ok(()))
                .unwrap();
            let metrics = Metrics::of(&result);
            (policy, result, metrics)
        })
        .collect()
}

fn plot(runs: &[(PolicyPreset, SimResult, Metrics)], shown: Option<usize>, name: &str) -> Layout {
    let all: Vec<&Metrics> = runs.iter().map(|(_, _, m)| m).collect();
    let fold = AccountFold::of(&all, shown);
    let folded: Vec<Metrics> = all.iter().map(|m| fold.apply(m)).collect();
    let plot_runs = PlotRun::of_runs(runs, &folded);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("pictures");
    std::fs::create_dir_all(&dir).unwrap();
    let svg = dir.join(format!("{name}.svg"));
    write_plot(&svg, &plot_runs).unwrap();
    render(&svg, name)
}

const DEFAULT_POLICIES: [PolicyPreset; 5] = [
    PolicyPreset::Ssh,
    PolicyPreset::Fcfs,
    PolicyPreset::Easy,
    PolicyPreset::Conservative,
    PolicyPreset::Full,
];

#[test]
fn the_default_runs_plot_has_one_legend_whole_counts_and_text_that_fits() {
    let runs = runs(&TeamFile::default(), &DEFAULT_POLICIES);
    let layout = plot(&runs, Some(10), "default");
    check_text(&layout, 30);
    // One legend for the whole figure: each policy named once.
    for policy in DEFAULT_POLICIES {
        assert_eq!(count(&layout, policy.name()), 1, "{}", policy.name());
    }
    assert_eq!(count(&layout, "target share"), 1);
    for team in ["vision", "language", "speech", "research"] {
        assert_eq!(count(&layout, team), 1, "{team}");
    }
    assert_eq!(fractional_numbers(&layout), Vec::<String>::new());
}

#[test]
fn many_accounts_fold_into_the_ten_most_used_and_others() {
    let file = TeamFile {
        users: Some(60),
        weeks: Some(1),
        load: Some(0.8),
        ..TeamFile::default()
    };
    let runs = runs(&file, &[PolicyPreset::Ssh, PolicyPreset::Full]);
    let folded = plot(&runs, Some(10), "folded");
    check_text(&folded, 20);
    assert_eq!(count(&folded, "50 others"), 1);
    // Every account, as --all-accounts draws them: a wider figure, names down the page.
    let all = plot(&runs, None, "all-accounts");
    check_text(&all, 40);
    assert!(all.figure.right > folded.figure.right);
}

/// A sweep's cells, run small, then given the widest numbers a cell can show.
fn cells() -> Vec<SweepCell> {
    let params = SweepParams {
        gpus: vec![4, 64],
        users: vec![2, 16],
        weeks: 1,
        ..SweepParams::default()
    };
    run_sweep(&params, 2, |_| {}).unwrap()
}

fn heatmap(cells: &[SweepCell], name: &str) -> Layout {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("pictures");
    std::fs::create_dir_all(&dir).unwrap();
    let svg = dir.join(format!("{name}.svg"));
    write_heatmap(&svg, cells).unwrap();
    render(&svg, name)
}

#[test]
fn the_heat_map_has_a_colour_bar_a_key_and_labels_inside_their_frames() {
    let mut cells = cells();
    assert!(cells.iter().any(SweepCell::pays_off));
    for cell in &mut cells {
        cell.baseline_metrics.idle_hours_while_waiting *= 100.0;
    }
    let layout = heatmap(&cells, "sweep");
    check_text(&layout, 20);
    assert!(
        layout.frames.len() > cells.iter().filter(|c| c.pays_off()).count(),
        "a frame per cell that pays off, and one in the key"
    );
    for tick in ["0%", "50%", "100%"] {
        assert!(count(&layout, tick) >= 1, "colour bar tick {tick}");
    }
    assert!(
        layout
            .texts
            .iter()
            .any(|(t, _)| t.starts_with("framed: the policy pays off against ssh")),
        "the frame's key"
    );
}

/// Issue 27: a sweep of several policies against a baseline of the user's choice draws a row
/// of panels per policy, each named, under a title that names the baseline.
#[test]
fn the_heat_map_of_several_policies_names_each_and_the_baseline() {
    let params = SweepParams {
        gpus: vec![4, 16],
        users: vec![2, 8],
        weeks: 1,
        policies: vec![
            PolicyPreset::Fcfs,
            PolicyPreset::Easy,
            PolicyPreset::Conservative,
        ],
        ..SweepParams::default()
    };
    let cells = run_sweep(&params, 2, |_| {}).unwrap();
    let layout = heatmap(&cells, "sweep-policies");
    check_text(&layout, 30);
    for caption in [
        "easy: mean wait cut",
        "easy: GPU-hours idle while a job waited, cut",
        "conservative: mean wait cut",
        "conservative: GPU-hours idle while a job waited, cut",
        "Does it pay off? easy, conservative against fcfs",
        "colour: the cut, against fcfs",
    ] {
        assert_eq!(count(&layout, caption), 1, "{caption}: {:?}", layout.texts);
    }
    assert!(!layout.texts.iter().any(|(t, _)| t.contains("ssh")));
    // Each panel's cells keep their numbers: 4 cells, 2 panels, 2 policies.
    let percents = layout
        .texts
        .iter()
        .filter(|(t, _)| t.ends_with('%') && !t.contains(' '))
        .count();
    assert!(percents >= 16, "{percents} percentages: {:?}", layout.texts);
}

#[test]
fn a_large_grid_shrinks_its_numbers_to_fit_their_cells() {
    let base = cells();
    let mut cells = Vec::new();
    for (u, users) in [1, 2, 3, 4, 6, 8, 12, 16, 24, 32].into_iter().enumerate() {
        for (g, gpus) in [4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048]
            .into_iter()
            .enumerate()
        {
            let mut cell = base[(u + g) % base.len()].clone();
            cell.users = users;
            cell.gpus = gpus;
            cell.baseline_metrics.idle_hours_while_waiting = 123_456.0;
            cells.push(cell);
        }
    }
    let layout = heatmap(&cells, "sweep-large");
    check_text(&layout, 20);
    // Every cell keeps its number, whole, at a smaller size where it must.
    let percents = layout
        .texts
        .iter()
        .filter(|(t, _)| t.ends_with('%'))
        .count();
    assert!(percents >= 2 * cells.len(), "{percents} percentages");
    assert!(layout.texts.iter().all(|(t, _)| !t.contains('…')));
}
