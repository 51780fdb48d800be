//! gangway's EASY backfill against a textbook count-based EASY (Mu'alem & Feitelson 2001),
//! written here from the paper's rules, job by job, on SWF machines of one-cpu nodes.
//!
//! On one-cpu nodes with single-cpu tasks a reservation that takes the nodes busy now (and free
//! by its start) before the idle ones leaves exactly count-based EASY's "extra" idle nodes to
//! backfill, so the two start every job at the same second. The reference is fed the job set
//! gangway's SWF reader keeps (its [`Workload`]), in whole seconds. Its rules:
//!
//! - the queue is in submit order, ties in the reader's order (by job id): the engine's order
//!   with the `easy` preset's zero priority weights (submit time, then arrival);
//! - at each instant every end and submit due is applied, then one scheduling step: the heads
//!   start while they fit, then the first job that does not gets the shadow time (the earliest
//!   expected end by which enough processors are free; a job past its estimate is taken to
//!   end now) and `extra` (free now plus every job ending by the shadow time, ties included,
//!   less the head's size), then one backfill scan: a job that fits now starts if it ends by
//!   the shadow time, or else if its size is at most `extra`, which it then uses up;
//! - jobs run their recorded time, past their estimate too (the simulator's `allow`).
//!
//! Every trace of the shared data replayed as it is read is a machine of one-cpu nodes (MaxNodes
//! equals MaxProcs, or one header alone); the test asserts it. A missing trace skips with a note
//! (`GANGWAY_REQUIRE_SHARED=1` makes it a failure); the committed KTH fixture always runs.

use std::collections::BTreeMap;
use std::path::Path;

use crate::shared;
use gangway::testkit::check_tick;
use gangway_sim::workload::{Workload, swf};
use gangway_sim::{Overrun, PolicyPreset, SimOptions, Simulator, prepare};

/// One job of the reference, in whole seconds.
#[derive(Clone, Copy, Debug)]
struct RefJob {
    submit: u64,
    run: u64,
    estimate: u64,
    size: u64,
}

/// A running job of the reference.
#[derive(Clone, Copy, Debug)]
struct Running {
    start: u64,
    estimate: u64,
    end: u64,
    size: u64,
}

impl Running {
    /// When the scheduler expects it to end, at `now`: past its estimate, now.
    fn expected_end(&self, now: u64) -> u64 {
        (self.start + self.estimate).max(now)
    }
}

/// Count-based EASY on `processors` one-cpu nodes: the start time of every job, in input order.
fn reference_easy(processors: u64, jobs: &[RefJob]) -> Vec<u64> {
    let mut starts = vec![u64::MAX; jobs.len()];
    let mut queue: Vec<usize> = Vec::new();
    let mut running: Vec<Running> = Vec::new();
    let mut free = processors;
    let mut next = 0;
    while next < jobs.len() || !queue.is_empty() {
        let next_end = running.iter().map(|r| r.end).min();
        let next_submit = jobs.get(next).map(|j| j.submit);
        let now = match (next_end, next_submit) {
            (Some(e), Some(s)) => e.min(s),
            (e, s) => e.or(s).expect("a queued job waits for a running one"),
        };
        running.retain(|r| {
            let ended = r.end == now;
            if ended {
                free += r.size;
            }
            !ended
        });
        while jobs.get(next).is_some_and(|j| j.submit == now) {
            queue.push(next);
            next += 1;
        }
        let mut start = |i: usize, free: &mut u64, running: &mut Vec<Running>| {
            let job = jobs[i];
            starts[i] = now;
            *free -= job.size;
            running.push(Running {
                start: now,
                estimate: job.estimate,
                end: now + job.run,
                size: job.size,
            });
        };
        // The heads, while they fit.
        let mut started = 0;
        while let Some(&head) = queue.get(started) {
            if jobs[head].size > free {
                break;
            }
            start(head, &mut free, &mut running);
            started += 1;
        }
        queue.drain(..started);
        let Some(&head) = queue.first() else {
            continue;
        };
        // The head's shadow time and the extra processors.
        let mut ends: Vec<(u64, u64)> = running
            .iter()
            .map(|r| (r.expected_end(now), r.size))
            .collect();
        ends.sort_unstable();
        let need = jobs[head].size;
        let mut available = free;
        let mut shadow = now;
        for &(end, size) in &ends {
            if available >= need {
                break;
            }
            available += size;
            shadow = end;
        }
        let freed: u64 = ends
            .iter()
            .filter(|(end, _)| *end <= shadow)
            .map(|(_, size)| size)
            .sum();
        let mut extra = free + freed - need;
        // One backfill scan.
        let mut waiting = vec![head];
        for &i in &queue[1..] {
            let job = jobs[i];
            let fits = job.size <= free;
            let by_shadow = now + job.estimate <= shadow;
            if fits && (by_shadow || job.size <= extra) {
                if !by_shadow {
                    extra -= job.size;
                }
                start(i, &mut free, &mut running);
            } else {
                waiting.push(i);
            }
        }
        queue = waiting;
    }
    starts
}

/// The workload's jobs as the reference reads them, in whole seconds.
fn reference_jobs(workload: &Workload) -> Vec<RefJob> {
    let seconds = |ms: u64| {
        assert_eq!(ms % 1000, 0, "SWF times are whole seconds");
        ms / 1000
    };
    workload
        .jobs
        .iter()
        .map(|j| {
            assert_eq!(j.cpus_per_task_milli, 1000, "one cpu per task");
            RefJob {
                submit: seconds(j.submit_ms),
                run: seconds(j.run_ms),
                estimate: seconds(j.time_limit_ms),
                size: u64::from(j.tasks),
            }
        })
        .collect()
}

/// The number of one-cpu nodes of `workload`'s machine; panics when a node has more cpus.
fn one_cpu_nodes(workload: &Workload) -> u64 {
    assert!(
        workload.nodes.iter().all(|n| n.cpus_milli == 1000),
        "the equality is claimed for machines of one-cpu nodes only"
    );
    workload.nodes.len() as u64
}

/// gangway's EASY on `workload` (the `easy` preset, overruns allowed, the oracle after every
/// tick): every job's first start, in ms, in input order.
fn gangway_easy(workload: &Workload) -> Vec<Option<u64>> {
    let (cluster, jobs) = prepare(workload, None, PolicyPreset::Easy, Overrun::Allow);
    let simulator = Simulator::new(cluster, jobs, SimOptions::default()).unwrap();
    let result = simulator
        .run(|view| check_tick(view.scheduler, view.outcome))
        .unwrap();
    let by_id: BTreeMap<&str, Option<u64>> = result
        .jobs
        .iter()
        .map(|j| (j.id.as_str(), j.first_start_ms))
        .collect();
    workload.jobs.iter().map(|j| by_id[j.id.as_str()]).collect()
}

/// Asserts that gangway's EASY starts every job of `workload` (its first `window` jobs, when
/// given) when count-based EASY does.
fn assert_equal_to_reference(name: &str, mut workload: Workload, window: Option<usize>) {
    if let Some(count) = window {
        workload.jobs.truncate(count);
    }
    let processors = one_cpu_nodes(&workload);
    let expected = reference_easy(processors, &reference_jobs(&workload));
    let got = gangway_easy(&workload);
    let differ: Vec<String> = workload
        .jobs
        .iter()
        .zip(expected.iter().zip(&got))
        .filter(|(_, (want, got))| Some(**want * 1000) != **got)
        .map(|(job, (want, got))| format!("job {}: reference {want} s, gangway {got:?} ms", job.id))
        .collect();
    assert!(
        differ.is_empty(),
        "{name}: {} of {} jobs start otherwise than under count-based EASY; first: {:?}",
        differ.len(),
        workload.jobs.len(),
        &differ[..differ.len().min(5)]
    );
}

/// Reads a shared trace, or `None` (skipped with a note) when it is not beside the checkout.
fn shared_trace(file: &str) -> Option<Workload> {
    let path = shared::path(&format!("traces/{file}"))?;
    Some(swf::from_path(path, None).unwrap())
}

#[test]
fn the_kth_fixture_equals_count_based_easy() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/KTH-SP2-1996-2.1-cln-first200.swf");
    let workload = swf::from_path(path, None).unwrap();
    assert_equal_to_reference("KTH first 200", workload, None);
}

#[test]
fn the_lublin_traces_equal_count_based_easy() {
    for file in ["lublin_256.swf", "lublin_256_new2.swf"] {
        if let Some(workload) = shared_trace(file) {
            assert_equal_to_reference(file, workload, None);
        }
    }
}

#[test]
fn sdsc_sp2_equals_count_based_easy() {
    if let Some(workload) = shared_trace("SDSC-SP2-1998-4.2-cln.swf.gz") {
        assert_equal_to_reference("SDSC-SP2", workload, None);
    }
}

#[test]
fn the_first_25000_jobs_of_hpc2n_equal_count_based_easy() {
    if let Some(workload) = shared_trace("HPC2N-2002-2.2-cln.swf.gz") {
        assert_equal_to_reference("HPC2N", workload, Some(25_000));
    }
}

#[test]
fn kth_sp2_equals_count_based_easy() {
    if let Some(workload) = shared_trace("KTH-SP2-1996-2.1-cln.swf.gz") {
        assert_equal_to_reference("KTH-SP2", workload, None);
    }
}

#[test]
fn ctc_sp2_equals_count_based_easy() {
    if let Some(workload) = shared_trace("CTC-SP2-1996-3.1-cln.swf.gz") {
        assert_equal_to_reference("CTC-SP2", workload, None);
    }
}

/// The reference itself on a hand-checked case: the issue's four one-cpu nodes. P (2, 50 s)
/// and A (2, 100 s) run from 0; H (3) arrives at 51, L (1, 1,000 s) at 52: extra = 2 idle + 2
/// freed − 3 = 1, so L starts at once and H at 100.
#[test]
fn the_reference_backfills_the_issue_case() {
    let job = |submit, run, size| RefJob {
        submit,
        run,
        estimate: run,
        size,
    };
    let jobs = [
        job(0, 50, 2),
        job(0, 100, 2),
        job(51, 10, 3),
        job(52, 1000, 1),
    ];
    assert_eq!(reference_easy(4, &jobs), [0, 0, 100, 52]);
}
