//! What `gangway simulate` prints and writes: the side-by-side table of policies, the schedule
//! CSV and the JSON report.

use std::fmt::Write as _;
use std::io::{self, Write};

use serde::{Deserialize, Serialize};

use crate::metrics::{Metrics, Resource};
use crate::preset::{Overrun, PolicyPreset};
use crate::result::{FaultCounts, SimResult};
use gangway::Milli;

/// The header of the schedule CSV.
pub const SCHEDULE_HEADER: &str = "job,account,submit_ms,start_ms,end_ms,tasks,gpus,nodes";

/// Writes one CSV row per execution (a job preempted once has two), ordered by start then
/// job order: the job id, its account, submit, start and end times, tasks, GPUs (decimal) and
/// distinct nodes. Fields with a comma or quote are quoted.
///
/// ```
/// use gangway_sim::report::write_schedule;
/// let mut out = Vec::new();
/// write_schedule(&gangway_sim::SimResult::default(), &mut out).unwrap();
/// assert_eq!(String::from_utf8(out).unwrap(), "job,account,submit_ms,start_ms,end_ms,tasks,gpus,nodes\n");
/// ```
pub fn write_schedule(result: &SimResult, mut out: impl Write) -> io::Result<()> {
    writeln!(out, "{SCHEDULE_HEADER}")?;
    let mut executions: Vec<_> = result.executions.iter().collect();
    executions.sort_by_key(|e| (e.start_ms, e.job));
    for e in executions {
        let job = &result.jobs[e.job];
        writeln!(
            out,
            "{},{},{},{},{},{},{},{}",
            csv_field(&job.id),
            csv_field(&job.account),
            job.submit_ms,
            e.start_ms,
            e.end_ms,
            e.tasks,
            Milli::from_milli(e.gpus_milli),
            e.nodes
        )?;
    }
    out.flush()
}

fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// One simulated policy in a report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PolicyRun {
    /// The policy.
    pub policy: PolicyPreset,
    /// The overrun rule.
    pub overrun: Overrun,
    /// Its metrics.
    pub metrics: Metrics,
}

/// The JSON report: the workload's size and what the readers skipped, and every run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Where the workload came from (a path, or `gpu-ml` for the built-in workload).
    pub workload: String,
    /// Nodes of the cluster.
    pub nodes: usize,
    /// Jobs simulated.
    pub jobs: usize,
    /// Records the reader skipped, per reason.
    pub skipped: Vec<(String, u64)>,
    /// The runs.
    pub runs: Vec<PolicyRun>,
}

/// The side-by-side table of policies, one column per run.
///
/// ```
/// use gangway_sim::report::{comparison_table, PolicyRun};
/// use gangway_sim::{metrics::Metrics, Overrun, PolicyPreset, SimResult};
/// let run = PolicyRun { policy: PolicyPreset::Easy, overrun: Overrun::Allow,
///                       metrics: Metrics::of(&SimResult::default()) };
/// let table = comparison_table(&[run]);
/// assert!(table.lines().next().unwrap().ends_with("easy"));
/// ```
pub fn comparison_table(runs: &[PolicyRun]) -> String {
    let mut rows: Vec<(String, Vec<String>)> = Vec::new();
    let mut row = |label: &str, cell: &dyn Fn(&Metrics) -> String| {
        rows.push((
            label.to_string(),
            runs.iter().map(|r| cell(&r.metrics)).collect(),
        ));
    };
    row("jobs started", &|m| m.jobs.started.to_string());
    row("completed", &|m| m.jobs.completed.to_string());
    row("killed", &|m| m.jobs.killed.to_string());
    row("never started", &|m| {
        (m.jobs.never_started + m.jobs.rejected).to_string()
    });
    row("wait mean", &|m| duration(m.wait.mean_s));
    row("wait p50", &|m| duration(m.wait.p50_s));
    row("wait p95", &|m| duration(m.wait.p95_s));
    row("wait max", &|m| duration(m.wait.max_s));
    row("completion mean", &|m| duration(m.completion.mean_s));
    row("bounded slowdown", &|m| {
        format!("{:.2}", m.bounded_slowdown)
    });
    let resource = runs.first().map_or(Resource::Gpu, |r| r.metrics.resource);
    let unit = match resource {
        Resource::Gpu => "GPU",
        Resource::Cpu => "cpu",
    };
    row(&format!("{unit} utilization"), &|m| {
        format!("{:.1}%", m.utilization * 100.0)
    });
    row(&format!("{unit}-hours idle while waiting"), &|m| {
        format!("{:.0}", m.idle_hours_while_waiting)
    });
    row("makespan", &|m| duration(m.makespan_s));
    row("preemptions", &|m| m.preemptions.to_string());
    row("GPU-hours lost", &|m| format!("{:.1}", m.gpu_hours_lost));
    row("  to preemption", &|m| {
        format!("{:.1}", m.gpu_hours_lost_to_preemption)
    });
    row("reservation violations", &|m| {
        format!("{} of {}", m.reservation_violations, m.reservations)
    });
    if runs
        .iter()
        .any(|r| r.metrics.faults != FaultCounts::default())
    {
        row("node failures", &|m| m.faults.node_failures.to_string());
        row("lost stop acks", &|m| m.faults.lost_stops.to_string());
        row("ready-timeout evictions", &|m| {
            m.faults.ready_evictions.to_string()
        });
        row("  GPU-hours lost to them", &|m| {
            format!("{:.1}", m.faults.ready_lost_gpu_ms as f64 / 3_600_000.0)
        });
        row("duplicates refused", &|m| {
            format!(
                "{} of {}",
                m.faults.duplicates_rejected, m.faults.duplicates
            )
        });
    }
    row("Jain's index", &|m| {
        m.jain_index.map_or("-".to_string(), |j| format!("{j:.3}"))
    });
    if let Some(first) = runs.first() {
        for (index, account) in first.metrics.accounts.iter().enumerate() {
            let label = match account.target {
                Some(target) => format!("share {} ({:.0}%)", account.account, target * 100.0),
                None => format!("share {}", account.account),
            };
            row(&label, &|m| {
                m.accounts
                    .get(index)
                    .map_or("-".to_string(), |a| format!("{:.1}%", a.share * 100.0))
            });
        }
    }
    // Whole-run shares (and Jain's index over them) that are the same in every column measure
    // what each account asked for, not the policy: they go below the table, once.
    let workload_from = rows
        .iter()
        .position(|(label, _)| label == "Jain's index")
        .unwrap_or(rows.len());
    let workload_rows: Vec<(String, Vec<String>)> = if runs.len() > 1
        && rows[workload_from..]
            .iter()
            .all(|(_, cells)| cells.iter().all(|c| *c == cells[0]))
    {
        rows.split_off(workload_from)
    } else {
        Vec::new()
    };
    let mut row = |label: &str, cell: &dyn Fn(&Metrics) -> String| {
        rows.push((
            label.to_string(),
            runs.iter().map(|r| cell(&r.metrics)).collect(),
        ));
    };
    row("hours contended", &|m| format!("{:.1}", m.contended_hours));
    if let Some(first) = runs.first() {
        for (index, account) in first.metrics.contended_shares.iter().enumerate() {
            let label = match account.target {
                Some(target) => format!(
                    "share when contended {} ({:.0}%)",
                    account.account,
                    target * 100.0
                ),
                None => format!("share when contended {}", account.account),
            };
            row(&label, &|m| match m.contended_shares.get(index) {
                Some(a) if m.contended_hours > 0.0 => format!("{:.1}%", a.share * 100.0),
                _ => "-".to_string(),
            });
        }
    }
    let label_width = rows
        .iter()
        .chain(&workload_rows)
        .map(|(l, _)| l.chars().count())
        .max()
        .unwrap_or(0);
    let widths: Vec<usize> = runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            rows.iter()
                .map(|(_, cells)| cells[i].len())
                .chain([r.policy.name().len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut table = String::new();
    let _ = write!(table, "{:label_width$}", "");
    for (run, width) in runs.iter().zip(&widths) {
        let _ = write!(table, "  {:>width$}", run.policy.name());
    }
    table.push('\n');
    for (label, cells) in &rows {
        let pad = label_width - label.chars().count();
        let _ = write!(table, "{label}{:pad$}", "");
        for (cell, width) in cells.iter().zip(&widths) {
            let _ = write!(table, "  {cell:>width$}");
        }
        table.push('\n');
    }
    if !workload_rows.is_empty() {
        table.push_str(
            "the same under every policy (so they measure the workload, not the policy):\n",
        );
        for (label, cells) in &workload_rows {
            let pad = label_width - label.chars().count();
            let _ = writeln!(
                table,
                "{label}{:pad$}  {:>width$}",
                "",
                cells[0],
                width = widths[0]
            );
        }
    }
    table
}

/// A duration in the largest unit that keeps it readable: `42s`, `12.5m`, `3.20h`, `2.15d`.
///
/// ```
/// use gangway_sim::report::duration;
/// assert_eq!(duration(42.0), "42s");
/// assert_eq!(duration(750.0), "12.5m");
/// assert_eq!(duration(11_520.0), "3.20h");
/// assert_eq!(duration(185_760.0), "2.15d");
/// ```
pub fn duration(seconds: f64) -> String {
    if seconds < 60.0 {
        format!("{seconds:.0}s")
    } else if seconds < 3_600.0 {
        format!("{:.1}m", seconds / 60.0)
    } else if seconds < 172_800.0 {
        format!("{:.2}h", seconds / 3_600.0)
    } else {
        format!("{:.2}d", seconds / 86_400.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{Execution, ExecutionEnd, JobRecord, JobStatus};

    #[test]
    fn schedule_rows_are_ordered_by_start_and_quoted() {
        let record = |id: &str| JobRecord {
            id: id.into(),
            account: "a,b".into(),
            submit_ms: 0,
            first_start_ms: Some(0),
            last_start_ms: Some(0),
            end_ms: Some(10),
            status: JobStatus::Completed,
            reserved_start_ms: None,
        };
        let execution = |job, start| Execution {
            job,
            start_ms: start,
            end_ms: start + 10,
            tasks: 2,
            gpus_milli: 1_500,
            cpus_milli: 2_000,
            nodes: 1,
            lost_ms: 0,
            end: ExecutionEnd::Completed,
        };
        let result = SimResult {
            jobs: vec![record("x"), record("y")],
            executions: vec![execution(1, 5), execution(0, 0)],
            ..SimResult::default()
        };
        let mut out = Vec::new();
        write_schedule(&result, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], SCHEDULE_HEADER);
        assert_eq!(lines[1], "x,\"a,b\",0,0,10,2,1.5,1");
        assert_eq!(lines[2], "y,\"a,b\",0,5,15,2,1.5,1");
    }
}
