//! Textbook EASY backfill (Mu'alem & Feitelson, "Utilization, predictability, workloads, and
//! user runtime estimates in scheduling the IBM SP2 with backfilling", IEEE TPDS 12(6), 2001):
//! count-based, on a machine of identical processors, written from the paper's rules and
//! nothing else. It is the yardstick gangway is measured against: the engine's `easy` preset
//! starts every job at the same second on machines of one-cpu nodes
//! (gangway-sim/tests/sim/easy_reference.rs), and the benchmarks put the two side by side
//! (BENCHMARKS.md). Its conservative counterpart, with compression, is [`conservative`]
//! (gangway-sim/tests/sim/conservative_reference.rs holds the engine's `conservative-compress`
//! preset to it).
//!
//! The rules:
//! - the queue is in submit order, ties in input order;
//! - at each instant every end and submit due is applied, then one scheduling step: the heads
//!   start while they fit; the first job that does not is given the **shadow time**, the
//!   earliest expected end by which enough processors are free (a job past its estimate is
//!   expected to end now), and the **extra** processors, those free now plus those of every job
//!   expected to end by the shadow time, less the head's size; then one backfill scan: a later
//!   job that fits now starts if it is expected to end by the shadow time, or else if its size
//!   is at most the extra, which it then uses up;
//! - jobs run their recorded time, past their estimate too.
//!
//! ```
//! use gangway_sim::textbook::{TextbookJob, easy};
//! let job = |submit, run, estimate, size| TextbookJob { submit, run, estimate, size };
//! // 4 processors; the head (3) waits for the first job; the last one backfills.
//! let jobs = [job(0, 10, 10, 2), job(1, 5, 5, 3), job(2, 3, 5, 2)];
//! assert_eq!(easy(4, &jobs), [0, 10, 2]);
//! ```

mod conservative;

pub use conservative::conservative;

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::workload::Workload;

/// One job, in whole seconds and processors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextbookJob {
    /// Submit time.
    pub submit: u64,
    /// The time it runs.
    pub run: u64,
    /// The user's estimate (the time limit).
    pub estimate: u64,
    /// Processors.
    pub size: u64,
}

/// The machine as the textbook keeps it: free processors, running jobs with the end they
/// are expected at, and their actual ends in a heap.
struct Machine {
    free: u64,
    /// Running jobs: index, expected end, size (at most one per processor).
    running: Vec<(usize, u64, u64)>,
    /// Actual ends, earliest first, with the job's index.
    ends: BinaryHeap<Reverse<(u64, usize)>>,
}

impl Machine {
    fn start(&mut self, index: usize, job: &TextbookJob, now: u64) {
        self.free -= job.size;
        self.ends.push(Reverse((now + job.run, index)));
        self.running.push((index, now + job.estimate, job.size));
    }

    /// Ends every job whose end is `now`.
    fn end_due(&mut self, now: u64) {
        while let Some(&Reverse((end, index))) = self.ends.peek()
            && end == now
        {
            self.ends.pop();
            if let Some(at) = self.running.iter().position(|r| r.0 == index) {
                self.free += self.running.swap_remove(at).2;
            }
        }
    }
}

/// Count-based EASY on `processors` processors: every job's start time, in input order. Jobs
/// must come in submit order; a job larger than the machine never starts (`u64::MAX`).
pub fn easy(processors: u64, jobs: &[TextbookJob]) -> Vec<u64> {
    let mut starts = vec![u64::MAX; jobs.len()];
    let mut queue: Vec<usize> = Vec::new();
    let mut machine = Machine {
        free: processors,
        running: Vec::new(),
        ends: BinaryHeap::new(),
    };
    let mut expected: Vec<(u64, u64)> = Vec::new();
    let mut next = 0;
    loop {
        let next_end = machine.ends.peek().map(|Reverse((end, _))| *end);
        let next_submit = jobs.get(next).map(|j| j.submit);
        let now = match (next_end, next_submit) {
            (Some(e), Some(s)) => e.min(s),
            (Some(t), None) | (None, Some(t)) => t,
            (None, None) => break,
        };
        machine.end_due(now);
        while let Some(job) = jobs.get(next).filter(|j| j.submit == now) {
            if job.size <= processors {
                queue.push(next);
            }
            next += 1;
        }
        // The heads, while they fit.
        let mut started = 0;
        while let Some(&head) = queue.get(started)
            && jobs[head].size <= machine.free
        {
            machine.start(head, &jobs[head], now);
            starts[head] = now;
            started += 1;
        }
        queue.drain(..started);
        let Some(&head) = queue.first() else {
            continue;
        };
        // The shadow time: one sort of the expected ends.
        expected.clear();
        expected.extend(
            machine
                .running
                .iter()
                .map(|&(_, end, size)| (end.max(now), size)),
        );
        expected.sort_unstable();
        let need = jobs[head].size;
        let (mut available, mut shadow) = (machine.free, now);
        for &(end, size) in &expected {
            if available >= need {
                break;
            }
            available += size;
            shadow = end;
        }
        let freed: u64 = expected
            .iter()
            .take_while(|(end, _)| *end <= shadow)
            .map(|(_, size)| size)
            .sum();
        let mut extra = machine.free + freed - need;
        // One backfill scan.
        let mut kept = 1;
        for k in 1..queue.len() {
            let i = queue[k];
            let job = &jobs[i];
            let by_shadow = now + job.estimate <= shadow;
            if job.size <= machine.free && (by_shadow || job.size <= extra) {
                if !by_shadow {
                    extra -= job.size;
                }
                machine.start(i, job, now);
                starts[i] = now;
            } else {
                queue[kept] = i;
                kept += 1;
            }
        }
        queue.truncate(kept);
    }
    starts
}

/// The jobs of `workload` as the textbook reads them, with the number of processors: a machine
/// of one-cpu nodes whose jobs ask for one cpu per task and whole seconds (what the SWF reader
/// gives). `Err` names what does not fit that model.
///
/// ```
/// use gangway_sim::textbook;
/// use gangway_sim::workload::swf;
/// let text = "; MaxNodes: 4\n; MaxProcs: 4\n1 0 -1 60 2 -1 -1 2 120 -1 1 1 1 -1 1 -1 -1 -1\n";
/// let workload = swf::read(text.as_bytes(), None).unwrap();
/// let (processors, jobs) = textbook::jobs_of(&workload).unwrap();
/// assert_eq!((processors, jobs[0].size, jobs[0].estimate), (4, 2, 120));
/// ```
pub fn jobs_of(workload: &Workload) -> Result<(u64, Vec<TextbookJob>), String> {
    if let Some(node) = workload.nodes.iter().find(|n| n.cpus_milli != 1000) {
        return Err(format!(
            "node {:?} has {} thousandths of a cpu: the textbook counts one-cpu nodes",
            node.name, node.cpus_milli
        ));
    }
    let seconds = |ms: u64, what: &str, id: &str| match ms % 1000 {
        0 => Ok(ms / 1000),
        _ => Err(format!("job {id}: {what} {ms} ms is not whole seconds")),
    };
    let jobs = workload
        .jobs
        .iter()
        .map(|j| {
            if j.cpus_per_task_milli != 1000 {
                return Err(format!("job {}: not one cpu per task", j.id));
            }
            Ok(TextbookJob {
                submit: seconds(j.submit_ms, "submit", &j.id)?,
                run: seconds(j.run_ms, "run time", &j.id)?,
                estimate: seconds(j.time_limit_ms, "time limit", &j.id)?,
                size: u64::from(j.tasks),
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok((workload.nodes.len() as u64, jobs))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A job submitted at `submit`, running `run` seconds on an estimate of `estimate`, on
    /// `size` processors.
    pub(super) fn job(submit: u64, run: u64, estimate: u64, size: u64) -> TextbookJob {
        TextbookJob {
            submit,
            run,
            estimate,
            size,
        }
    }

    /// Four processors: P (2, 50 s) and A (2, 100 s) run from 0; H (3) arrives at 51, L (1,
    /// 1,000 s) at 52: extra = 2 idle + 2 freed − 3 = 1, so L starts at once and H at 100.
    #[test]
    fn the_extra_takes_a_long_backfill_before_the_head() {
        let jobs = [
            job(0, 50, 50, 2),
            job(0, 100, 100, 2),
            job(51, 10, 10, 3),
            job(52, 1000, 1000, 1),
        ];
        assert_eq!(easy(4, &jobs), [0, 0, 100, 52]);
    }

    #[test]
    fn a_backfill_that_would_delay_the_head_uses_only_the_extra() {
        // 4 processors, 3 busy until 10. The head needs 4 (shadow 10, extra 0 after it).
        // A 1-processor job of estimate 20 would run past the shadow time: no extra, it waits.
        let jobs = [job(0, 10, 10, 3), job(1, 5, 5, 4), job(2, 20, 20, 1)];
        assert_eq!(easy(4, &jobs), [0, 10, 15]);
    }

    #[test]
    fn a_long_backfill_fits_in_the_extra() {
        // 6 processors, 4 busy until 10; the head needs 5, so at its shadow time 6 are free and
        // one is extra: a 1-processor job of any length backfills now.
        let jobs = [job(0, 10, 10, 4), job(1, 5, 5, 5), job(2, 100, 100, 1)];
        assert_eq!(easy(6, &jobs), [0, 10, 2]);
    }

    #[test]
    fn a_job_past_its_estimate_is_expected_to_end_now() {
        // The first runs 30 s on an estimate of 10: at 20, the head's shadow time is 20 (now).
        let jobs = [job(0, 30, 10, 2), job(20, 5, 5, 2), job(20, 5, 5, 1)];
        assert_eq!(easy(2, &jobs), [0, 30, 35]);
    }

    #[test]
    fn a_job_larger_than_the_machine_never_starts_and_blocks_nothing() {
        let jobs = [job(0, 10, 10, 5), job(0, 10, 10, 2)];
        assert_eq!(easy(4, &jobs), [u64::MAX, 0]);
    }
}
