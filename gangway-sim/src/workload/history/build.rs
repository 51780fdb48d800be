//! From the rows of a history to a [`Workload`]: each job's gang shape, the time origin, the
//! partition maximum and the machine.

use std::collections::BTreeSet;

use super::time::monday_before;
use super::{HistoryOptions, RowProblem};
use crate::workload::{
    MAX_NODES, SkipCounts, SkipReason, TraceAccount, TraceJob, TraceNode, TracePlacement, Workload,
};

/// One job of a history, as read, before it is shaped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct HistoryRow {
    /// The line it was read from (1-based).
    pub line: u64,
    pub id: String,
    pub user: String,
    pub account: String,
    /// Submit time in local seconds.
    pub submit_s: i64,
    /// Start time in local seconds, when the history records it (Slurm does, the CSV does not).
    pub start_s: Option<i64>,
    /// Run time in seconds (> 0).
    pub run_s: u64,
    /// The requested time limit in seconds; `None`: the partition maximum.
    pub time_limit_s: Option<u64>,
    /// GPUs of the whole job (> 0).
    pub gpus: u32,
    /// Nodes, when the history gives them.
    pub nodes: Option<u32>,
}

/// A job's gang: `tasks` tasks of `gpus_per_task` GPUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Gang {
    pub tasks: u32,
    pub gpus_per_task: u32,
}

/// The gang of `gpus` GPUs on `nodes` nodes (given), or on the fewest nodes of at most
/// `gpus_per_node` GPUs that split them evenly. `Ok(Err(_))`: the job fits no node.
pub(super) fn gang(
    gpus: u32,
    nodes: Option<u32>,
    gpus_per_node: u32,
) -> Result<Result<Gang, SkipReason>, RowProblem> {
    let tasks = match nodes {
        Some(nodes) => {
            if nodes == 0 || !gpus.is_multiple_of(nodes) {
                return Err(RowProblem::UnevenGpus { gpus, nodes });
            }
            nodes
        }
        None => (gpus.div_ceil(gpus_per_node)..=gpus)
            .find(|n| gpus.is_multiple_of(*n))
            .unwrap_or(gpus),
    };
    let gpus_per_task = gpus / tasks;
    if gpus_per_task > gpus_per_node {
        return Ok(Err(SkipReason::FitsNoNode));
    }
    Ok(Ok(Gang {
        tasks,
        gpus_per_task,
    }))
}

/// The workload of the kept rows (with their gangs) and the skip counts.
pub(super) fn workload(
    rows: Vec<(HistoryRow, Gang)>,
    skipped: SkipCounts,
    options: &HistoryOptions,
) -> Workload {
    let origin = rows
        .iter()
        .map(|(row, _)| row.submit_s)
        .min()
        .map_or(0, monday_before);
    let max_time_ms = options.max_time_ms.unwrap_or_else(|| longest_ms(&rows));
    let nodes = options
        .nodes
        .map_or_else(|| peak_nodes(&rows, options.gpus_per_node), u64::from);
    let accounts: BTreeSet<&str> = rows.iter().map(|(row, _)| row.account.as_str()).collect();
    let accounts = accounts
        .into_iter()
        .filter(|name| !name.is_empty())
        .map(|name| TraceAccount {
            name: name.to_string(),
            shares: 1,
            gpu_quota: None,
        })
        .collect();
    let mut jobs: Vec<TraceJob> = rows
        .into_iter()
        .map(|(row, gang)| TraceJob {
            submit_ms: ((row.submit_s - origin).max(0) as u64).saturating_mul(1000),
            run_ms: row.run_s.saturating_mul(1000),
            time_limit_ms: row
                .time_limit_s
                .map_or(max_time_ms, |s| s.saturating_mul(1000)),
            tasks: gang.tasks,
            cpus_per_task_milli: 0,
            memory_mib_per_task: 0,
            gpus_per_task_milli: u64::from(gang.gpus_per_task) * 1000,
            gpu_models: Vec::new(),
            user: row.user,
            account: row.account,
            queue: String::new(),
            placement: if gang.tasks == 1 {
                TracePlacement::Pack
            } else {
                TracePlacement::StrictSpread
            },
            id: row.id,
            priority: 0,
        })
        .collect();
    jobs.sort_by_key(|job| job.submit_ms);
    Workload {
        nodes: gpu_nodes(nodes, options.gpus_per_node),
        jobs,
        accounts,
        skipped,
        max_time_ms: Some(max_time_ms),
    }
}

/// The partition maximum by default: the longest run time or time limit of the history,
/// rounded up to a whole hour (at least one hour).
fn longest_ms(rows: &[(HistoryRow, Gang)]) -> u64 {
    let longest_s = rows
        .iter()
        .map(|(row, _)| row.run_s.max(row.time_limit_s.unwrap_or(0)))
        .max()
        .unwrap_or(0);
    longest_s.div_ceil(3_600).max(1).saturating_mul(3_600_000)
}

/// The fewest nodes of `gpus_per_node` GPUs that held every job running at once, as recorded
/// (from its start, or from its submit when the history has no start), and the widest gang.
fn peak_nodes(rows: &[(HistoryRow, Gang)], gpus_per_node: u32) -> u64 {
    let mut changes: Vec<(i64, i64)> = Vec::with_capacity(rows.len() * 2);
    for (row, _) in rows {
        let start = row.start_s.unwrap_or(row.submit_s);
        let end = start.saturating_add(i64::try_from(row.run_s).unwrap_or(i64::MAX));
        changes.push((start, i64::from(row.gpus)));
        changes.push((end, -i64::from(row.gpus)));
    }
    // Ends before starts at the same second: a job starting as another ends reuses its GPUs.
    changes.sort_unstable();
    let mut busy = 0i64;
    let mut peak = 0i64;
    for (_, change) in changes {
        busy += change;
        peak = peak.max(busy);
    }
    let widest = rows
        .iter()
        .map(|(_, gang)| u64::from(gang.tasks))
        .max()
        .unwrap_or(0);
    (peak as u64)
        .div_ceil(u64::from(gpus_per_node))
        .max(widest)
        .min(MAX_NODES)
}

/// `count` nodes of `gpus` GPUs each, named `g1`, `g2`, … zero-padded to one width.
fn gpu_nodes(count: u64, gpus: u32) -> Vec<TraceNode> {
    let width = count.to_string().len();
    (1..=count)
        .map(|index| TraceNode {
            name: format!("g{index:0width$}"),
            cpus_milli: 0,
            memory_mib: 0,
            gpu_model: None,
            gpus,
            gpu_memory_mib: 0,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(line: u64, submit_s: i64, start_s: Option<i64>, run_s: u64, gpus: u32) -> HistoryRow {
        HistoryRow {
            line,
            id: line.to_string(),
            user: "u".into(),
            account: "a".into(),
            submit_s,
            start_s,
            run_s,
            time_limit_s: None,
            gpus,
            nodes: None,
        }
    }

    #[test]
    fn gangs_take_the_fewest_nodes_that_split_the_gpus_evenly() {
        let shape = |gpus, nodes| gang(gpus, nodes, 8).unwrap().unwrap();
        assert_eq!(
            shape(3, None),
            Gang {
                tasks: 1,
                gpus_per_task: 3
            }
        );
        assert_eq!(
            shape(8, None),
            Gang {
                tasks: 1,
                gpus_per_task: 8
            }
        );
        assert_eq!(
            shape(16, None),
            Gang {
                tasks: 2,
                gpus_per_task: 8
            }
        );
        assert_eq!(
            shape(12, None),
            Gang {
                tasks: 2,
                gpus_per_task: 6
            }
        );
        assert_eq!(
            shape(9, None),
            Gang {
                tasks: 3,
                gpus_per_task: 3
            }
        );
        assert_eq!(
            shape(17, None),
            Gang {
                tasks: 17,
                gpus_per_task: 1
            }
        );
        assert_eq!(
            shape(8, Some(4)),
            Gang {
                tasks: 4,
                gpus_per_task: 2
            }
        );
        assert_eq!(gang(16, Some(1), 8), Ok(Err(SkipReason::FitsNoNode)));
        assert_eq!(
            gang(10, Some(4), 8),
            Err(RowProblem::UnevenGpus { gpus: 10, nodes: 4 })
        );
        assert_eq!(
            gang(10, Some(0), 8),
            Err(RowProblem::UnevenGpus { gpus: 10, nodes: 0 })
        );
    }

    #[test]
    fn the_machine_holds_the_recorded_peak() {
        let gang1 = |gpus| gang(gpus, None, 4).unwrap().unwrap();
        // Two jobs of 3 GPUs overlap (6 GPUs: two 4-GPU nodes); the third starts as the first
        // ends and adds nothing.
        let rows = vec![
            (row(2, 0, Some(0), 100, 3), gang1(3)),
            (row(3, 0, Some(50), 100, 3), gang1(3)),
            (row(4, 0, Some(100), 10, 3), gang1(3)),
        ];
        assert_eq!(peak_nodes(&rows, 4), 2);
        // Without starts, every job runs from its submit.
        let rows = vec![
            (row(2, 0, None, 100, 3), gang1(3)),
            (row(3, 0, None, 100, 3), gang1(3)),
            (row(4, 0, None, 10, 3), gang1(3)),
        ];
        assert_eq!(peak_nodes(&rows, 4), 3);
    }

    #[test]
    fn time_zero_is_the_monday_before_the_first_submit() {
        // 2024-03-06 (a Wednesday) 10:00, local seconds.
        let wednesday = 19_788 * 86_400 + 36_000;
        let rows = vec![(
            row(2, wednesday, None, 7_200, 1),
            gang(1, None, 8).unwrap().unwrap(),
        )];
        let options = HistoryOptions::default();
        let workload = workload(rows, SkipCounts::default(), &options);
        let job = &workload.jobs[0];
        assert_eq!(job.submit_ms, (2 * 86_400 + 36_000) * 1000);
        assert_eq!(job.time_limit_ms, 7_200_000);
        assert_eq!(workload.max_time_ms, Some(7_200_000));
        assert_eq!(workload.nodes.len(), 1);
        assert_eq!(workload.accounts[0].name, "a");
    }
}
