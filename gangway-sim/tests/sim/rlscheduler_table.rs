//! The RLScheduler Table V example (`examples/rlscheduler_table.rs`): its gangway replay (order
//! keys, the pinned head, `before_head_estimate` with candidates in submit order, one event per
//! tick with submits first) against RLScheduler's event loop as the example restates it, on the
//! committed KTH excerpt (all of it one window) and, where the shared traces are beside the
//! checkout, on the first window of Lublin-1; and the example's Mersenne Twister against the
//! reference implementation's published outputs.

use std::path::Path;

use crate::shared;

#[path = "../../examples/rlscheduler_table.rs"]
#[allow(dead_code)]
mod example;

use example::{Heuristic, Loaded, Mt19937};

/// Every heuristic, without then with backfill: (gangway, the restated loop) for `window`.
fn rows(loaded: &Loaded, window: &[example::RlJob]) -> Vec<(String, f64, f64)> {
    let mut rows = Vec::new();
    for backfill in [false, true] {
        for heuristic in Heuristic::ALL {
            let engine = example::replay(loaded, window, heuristic, backfill).unwrap();
            let model = example::reference(loaded, window, heuristic, backfill);
            let label = format!("{}{}", heuristic.name(), if backfill { " +bf" } else { "" });
            rows.push((label, engine, model));
        }
    }
    rows
}

#[test]
fn mersenne_twister_matches_the_reference_outputs() {
    // mt19937ar.c (Matsumoto & Nishimura), seeded with init_by_array({0x123, 0x234, 0x345,
    // 0x456}): its published first outputs.
    let mut rng = Mt19937::by_array(&[0x123, 0x234, 0x345, 0x456]);
    let first: Vec<u32> = (0..5).map(|_| rng.next_u32()).collect();
    assert_eq!(
        first,
        [
            1_067_595_299,
            955_945_823,
            477_289_528,
            4_107_218_783,
            4_228_976_476
        ]
    );
}

#[test]
fn windows_are_drawn_inside_the_trace() {
    for (size, slice) in [(10_000, 0), (202_871, 10_000)] {
        let starts = example::window_starts(size, slice);
        assert_eq!(starts.len(), 10);
        let top = if slice == 0 { size } else { slice };
        assert!(
            starts.iter().all(|&s| (1024..top - 1024 - 1).contains(&s)),
            "{starts:?}"
        );
    }
}

#[test]
fn kth_excerpt_replays_as_rlschedulers_loop() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/KTH-SP2-1996-2.1-cln-first200.swf");
    let loaded = example::load(&fixture).unwrap();
    let rows = rows(&loaded, &loaded.jobs);
    for (label, engine, model) in &rows {
        assert!(
            (engine - model).abs() <= 1e-9 * model,
            "{label}: gangway {engine}, loop {model}"
        );
    }
    // The excerpt queues: the heuristics and the backfill rule change the result.
    let (plain, backfilled) = rows.split_at(5);
    assert!(
        plain.iter().any(|r| (r.1 - plain[0].1).abs() > 1e-6),
        "{rows:?}"
    );
    assert!(
        plain
            .iter()
            .zip(backfilled)
            .any(|(a, b)| (a.1 - b.1).abs() > 1e-6),
        "{rows:?}"
    );
}

#[test]
fn lublin_window_replays_as_rlschedulers_loop() {
    let Some(path) = shared::path("traces/lublin_256.swf") else {
        return;
    };
    let loaded = example::load(&path).unwrap();
    let start = example::window_starts(loaded.jobs.len(), 0)[0];
    let window = &loaded.jobs[start..start + example::WINDOW];
    for (label, engine, model) in rows(&loaded, window) {
        // Within the 1%; simultaneous ends can come in another order than
        // RLScheduler's (by job id, not by start).
        assert!(
            (engine - model).abs() <= 0.01 * model,
            "{label}: gangway {engine}, loop {model}"
        );
    }
}
