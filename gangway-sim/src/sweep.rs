//! `gangway simulate --sweep`: does a scheduler pay off for a team of this size on a cluster of
//! this size? Each cell of the grid is a [`TeamParams::cell`] (every user the same demand, each
//! user its own account) run under the sweep's **baseline**, the first of
//! [`SweepParams::policies`] (`ssh`, no scheduler, [`crate::looks`], by default), and under
//! every other policy it names (`full` by default); cells are independent and run on every
//! core, and the table is the same whatever the number of threads.
//!
//! A policy **pays off** in a cell ([`SweepCell::pays_off`]) when it, against the baseline,
//! cuts the mean wait by at least 25% and by at least 30 minutes, or cuts the GPU-hours left
//! idle while a job waited by at least 10% and by at least 1% of the cluster's GPU-hours over
//! the run. (Declared before measuring; the absolute floors keep an almost idle cell, where
//! both waits are minutes, from counting as a win.)
//!
//! ```
//! use gangway_sim::sweep::{run_sweep, SweepParams};
//! use gangway_sim::PolicyPreset;
//! let params = SweepParams { gpus: vec![8], users: vec![2], weeks: 1, ..SweepParams::default() };
//! let cells = run_sweep(&params, 1, |_| {}).unwrap();
//! assert_eq!(cells.len(), 1);
//! assert_eq!((cells[0].baseline, cells[0].policy), (PolicyPreset::Ssh, PolicyPreset::Full));
//! assert!(cells[0].baseline_metrics.wait.mean_s >= cells[0].policy_metrics.wait.mean_s);
//! ```

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use gangway::ClusterConfig;

use crate::engine::{SimError, SimOptions, Simulator};
use crate::looks::LookSchedule;
use crate::metrics::Metrics;
use crate::preset::{Overrun, PolicyPreset, prepare};
use crate::report::duration;
use crate::team::TeamParams;
use crate::workload::ParamError;

/// The grid of a sweep.
///
/// ```
/// use gangway_sim::sweep::SweepParams;
/// use gangway_sim::PolicyPreset;
/// let params = SweepParams::default();
/// assert_eq!(params.gpus, [4, 8, 16, 32, 64, 128]);
/// assert_eq!(params.users, [2, 4, 8, 16]);
/// assert!(params.machine.is_none());
/// assert_eq!(params.policies, [PolicyPreset::Ssh, PolicyPreset::Full]);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct SweepParams {
    /// Cluster sizes in GPUs, on nodes of up to 8 GPUs. Default 4, 8, 16, 32, 64, 128.
    pub gpus: Vec<u32>,
    /// Numbers of users. Default 2, 4, 8, 16.
    pub users: Vec<u32>,
    /// Seed of every cell's workload (the same for all cells). Default 1.
    pub seed: u64,
    /// Weeks of arrivals per cell. Default 2.
    pub weeks: u32,
    /// The `ssh` host's looks.
    pub looks: LookSchedule,
    /// A machine of your own (`gangway simulate --sweep --cluster`): every cell runs on its
    /// nodes, so the grid's only cluster size is its GPUs (`gpus` is not read), and each
    /// cell's jobs are drawn to fit it ([`TeamParams::fit_to`]). Default none.
    pub machine: Option<ClusterConfig>,
    /// The baseline, then the policies compared with it, at least one, each named once
    /// ([`sweep_policies`] makes such a list from what a user gives). Default `ssh`, `full`.
    pub policies: Vec<PolicyPreset>,
}

impl Default for SweepParams {
    fn default() -> Self {
        SweepParams {
            gpus: vec![4, 8, 16, 32, 64, 128],
            users: vec![2, 4, 8, 16],
            seed: 1,
            weeks: 2,
            looks: LookSchedule::default(),
            machine: None,
            policies: vec![PolicyPreset::Ssh, PolicyPreset::Full],
        }
    }
}

impl SweepParams {
    /// The cluster sizes of the grid: the machine's GPUs when it has one, else `gpus`.
    pub fn grid_gpus(&self) -> Vec<u32> {
        match &self.machine {
            Some(machine) => {
                let gpus: u64 = machine
                    .nodes
                    .iter()
                    .filter_map(|n| n.gpus.as_ref())
                    .map(|g| u64::from(g.count))
                    .sum();
                vec![u32::try_from(gpus).unwrap_or(u32::MAX)]
            }
            None => self.gpus.clone(),
        }
    }

    /// The cells of the grid in grid order (users, then GPUs), each as its `(gpus, users)`:
    /// [`run_sweep_cell`] runs the one at an index of this list.
    ///
    /// ```
    /// use gangway_sim::sweep::SweepParams;
    /// let params = SweepParams { gpus: vec![4, 8], users: vec![2, 6], ..SweepParams::default() };
    /// assert_eq!(params.grid(), [(4, 2), (8, 2), (4, 6), (8, 6)]);
    /// ```
    pub fn grid(&self) -> Vec<(u32, u32)> {
        let sizes = self.grid_gpus();
        self.users
            .iter()
            .flat_map(|&users| sizes.iter().map(move |&gpus| (gpus, users)))
            .collect()
    }
}

/// One cell of the grid and one policy compared in it: its size, and the baseline's and the
/// policy's metrics on the cell's workload.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepCell {
    /// GPUs of the cluster.
    pub gpus: u32,
    /// Users.
    pub users: u32,
    /// Jobs of the cell's workload.
    pub jobs: usize,
    /// The sweep's baseline, its first policy (`ssh` by default).
    pub baseline: PolicyPreset,
    /// The baseline's run.
    pub baseline_metrics: Metrics,
    /// The policy compared with the baseline.
    pub policy: PolicyPreset,
    /// The policy's run.
    pub policy_metrics: Metrics,
}

impl SweepCell {
    /// The mean wait the policy saves, as a fraction of the baseline's (0 when the baseline
    /// waited not at all).
    pub fn wait_saved(&self) -> f64 {
        saved(
            self.baseline_metrics.wait.mean_s,
            self.policy_metrics.wait.mean_s,
        )
    }

    /// The GPU-hours idle while a job waited that the policy saves, as a fraction of the
    /// baseline's.
    pub fn idle_saved(&self) -> f64 {
        saved(
            self.baseline_metrics.idle_hours_while_waiting,
            self.policy_metrics.idle_hours_while_waiting,
        )
    }

    /// Whether the policy pays off against the baseline here (the module documentation's
    /// definition).
    ///
    /// ```
    /// use gangway_sim::sweep::SweepCell;
    /// use gangway_sim::{metrics::Metrics, PolicyPreset, SimResult};
    /// let mut ssh = Metrics::of(&SimResult::default());
    /// let mut easy = ssh.clone();
    /// ssh.wait.mean_s = 3_600.0;
    /// easy.wait.mean_s = 1_800.0; // half the wait, 30 minutes less
    /// let cell = SweepCell {
    ///     gpus: 8, users: 4, jobs: 0,
    ///     baseline: PolicyPreset::Ssh, baseline_metrics: ssh,
    ///     policy: PolicyPreset::Easy, policy_metrics: easy,
    /// };
    /// assert!(cell.pays_off());
    /// ```
    pub fn pays_off(&self) -> bool {
        pays_off(
            &self.baseline_metrics,
            &self.policy_metrics,
            f64::from(self.gpus),
        )
    }
}

/// The sweep's policies from the ones a user names (`--policy`, or Python's `policies`): the
/// first is the baseline and every other one is compared with it; one policy alone is
/// compared with `ssh`, the default baseline. Nothing to compare (`ssh` alone, or no policy)
/// is an error.
///
/// ```
/// use gangway_sim::sweep::sweep_policies;
/// use gangway_sim::PolicyPreset::{Conservative, Easy, Fcfs, Ssh};
/// assert_eq!(sweep_policies(&[Easy]).unwrap(), [Ssh, Easy]);
/// assert_eq!(sweep_policies(&[Fcfs, Easy, Conservative]).unwrap(), [Fcfs, Easy, Conservative]);
/// assert!(sweep_policies(&[Ssh]).unwrap_err().to_string().contains("nothing to compare"));
/// assert!(sweep_policies(&[Easy, Easy]).unwrap_err().to_string().contains("twice"));
/// ```
pub fn sweep_policies(given: &[PolicyPreset]) -> Result<Vec<PolicyPreset>, ParamError> {
    let policies = match given {
        [one] if *one != PolicyPreset::Ssh => vec![PolicyPreset::Ssh, *one],
        _ => given.to_vec(),
    };
    check_policies(&policies)?;
    Ok(policies)
}

/// That `policies` holds a baseline and at least one other policy, each once.
fn check_policies(policies: &[PolicyPreset]) -> Result<(), ParamError> {
    for (index, policy) in policies.iter().enumerate() {
        if policies[..index].contains(policy) {
            return Err(ParamError(format!(
                "the sweep's policies name {:?} twice",
                policy.name()
            )));
        }
    }
    if policies.len() < 2 {
        let names: Vec<&str> = policies.iter().map(|p| p.name()).collect();
        return Err(ParamError(format!(
            "the sweep compares a baseline (its first policy) with at least one other; \
             [{}] leaves nothing to compare",
            names.join(", ")
        )));
    }
    Ok(())
}

/// The sweep's rule for any two runs of one workload: whether the run `with` a policy pays
/// off against the `baseline` run (`ssh`, usually; the module documentation's definition), on
/// a machine of `capacity` GPUs (cpus when the metrics' resource is cpu).
///
/// ```
/// use gangway_sim::sweep::pays_off;
/// use gangway_sim::{metrics::Metrics, SimResult};
/// let mut ssh = Metrics::of(&SimResult::default());
/// let mut with = ssh.clone();
/// ssh.wait.mean_s = 3_000.0;
/// with.wait.mean_s = 1_500.0; // half the wait, but only 25 minutes less
/// assert!(!pays_off(&ssh, &with, 8.0));
/// ssh.wait.mean_s = 3_600.0;
/// assert!(pays_off(&ssh, &with, 8.0));
/// ```
pub fn pays_off(baseline: &Metrics, with: &Metrics, capacity: f64) -> bool {
    let wait_cut = baseline.wait.mean_s - with.wait.mean_s;
    let idle_cut = baseline.idle_hours_while_waiting - with.idle_hours_while_waiting;
    let resource_hours = capacity * baseline.makespan_s.max(with.makespan_s) / 3_600.0;
    (saved(baseline.wait.mean_s, with.wait.mean_s) >= 0.25 && wait_cut >= 1_800.0)
        || (saved(
            baseline.idle_hours_while_waiting,
            with.idle_hours_while_waiting,
        ) >= 0.10
            && idle_cut >= 0.01 * resource_hours)
}

/// The verdict of a plain run by the sweep's rule ([`pays_off`]): `ssh` against the run named
/// `name`, on a machine of `capacity` GPUs (or cpus), in one sentence with the two numbers the
/// rule looks at, then the rule.
///
/// ```
/// use gangway_sim::sweep::verdict;
/// use gangway_sim::{metrics::Metrics, SimResult};
/// let mut ssh = Metrics::of(&SimResult::default());
/// let mut full = ssh.clone();
/// ssh.wait.mean_s = 13.6 * 3600.0;
/// full.wait.mean_s = 1.5 * 3600.0;
/// let text = verdict(&ssh, "full", &full, 32.0);
/// assert!(text.starts_with("verdict: a scheduler pays off here: with full against ssh, mean wait 13.60h → 1.50h (-89%)"), "{text}");
/// let text = verdict(&ssh, "full", &ssh, 32.0);
/// assert!(text.starts_with("verdict: not yet"), "{text}");
/// ```
pub fn verdict(ssh: &Metrics, name: &str, with: &Metrics, capacity: f64) -> String {
    let unit = match ssh.resource {
        crate::metrics::Resource::Gpu => "GPU",
        crate::metrics::Resource::Cpu => "cpu",
    };
    let percent = |without: f64, with: f64| -> String {
        let cut = saved(without, with) * 100.0;
        if cut.abs() < 0.5 {
            "0%".to_string()
        } else if cut > 0.0 {
            format!("-{cut:.0}%")
        } else {
            format!("+{:.0}%", -cut)
        }
    };
    let numbers = format!(
        "with {name} against ssh, mean wait {} → {} ({}); {unit}-hours idle while a job waited \
         {:.0} → {:.0} ({})",
        duration(ssh.wait.mean_s),
        duration(with.wait.mean_s),
        percent(ssh.wait.mean_s, with.wait.mean_s),
        ssh.idle_hours_while_waiting,
        with.idle_hours_while_waiting,
        percent(ssh.idle_hours_while_waiting, with.idle_hours_while_waiting),
    );
    let head = if pays_off(ssh, with, capacity) {
        "a scheduler pays off here"
    } else {
        "not yet: no scheduler is needed here"
    };
    format!(
        "verdict: {head}: {numbers}.\n  \
         (The sweep's rule: a scheduler pays off when it cuts the mean wait by 25% and 30 minutes\n  \
         or more, or the {unit}-hours idle while a job waited by 10% and 1% of the machine's \
         {unit}-hours or more.)"
    )
}

fn saved(without: f64, with: f64) -> f64 {
    if without > 0.0 {
        (without - with) / without
    } else {
        0.0
    }
}

/// Runs every cell of `params` on `threads` threads (at least 1), calling `progress` with the
/// number of [`SweepCell`]s done after each cell of the grid; they come back in grid order
/// (users, then GPUs, then the compared policies in the order given). Policies that name no
/// baseline and another policy, or one twice, are an error ([`SweepParams::policies`]), and
/// nothing runs.
///
/// The cells run on threads of this process (`std::thread::scope`); the Rust sweep takes a
/// thread count, not an executor. A host that runs work on an executor of its own (a pool, an
/// async runtime, a cluster's tasks) gives it the cells instead: [`run_sweep_cell`] runs cell
/// `i` of [`SweepParams::grid`] alone, and the cells' results concatenated in index order are
/// this function's table. (Python's `gangway.sweep` takes any `concurrent.futures` executor, or
/// Ray, the same way: docs/simulate.md.)
///
/// ```
/// use std::sync::Arc;
/// use gangway_sim::sweep::{run_sweep, run_sweep_cell, SweepParams};
/// let params = Arc::new(SweepParams { gpus: vec![4, 8], users: vec![2], weeks: 1, ..SweepParams::default() });
/// // The host's executor; here, a thread of its own per cell.
/// let tasks: Vec<_> = (0..params.grid().len())
///     .map(|index| {
///         let params = Arc::clone(&params);
///         std::thread::spawn(move || run_sweep_cell(&params, index))
///     })
///     .collect();
/// let mut cells = Vec::new();
/// for task in tasks {
///     cells.extend(task.join().unwrap().unwrap()); // in index order
/// }
/// assert_eq!(cells, run_sweep(&params, 2, |_| {}).unwrap());
/// ```
///
/// ```
/// use gangway_sim::sweep::{run_sweep, SweepParams};
/// use gangway_sim::PolicyPreset::{Easy, Fcfs};
/// let params = SweepParams { policies: vec![Easy], ..SweepParams::default() };
/// assert!(run_sweep(&params, 1, |_| {}).is_err());
/// let params = SweepParams { gpus: vec![4], users: vec![2], weeks: 1, policies: vec![Fcfs, Easy], ..SweepParams::default() };
/// let cells = run_sweep(&params, 1, |_| {}).unwrap();
/// assert_eq!((cells[0].baseline, cells[0].policy), (Fcfs, Easy));
/// ```
pub fn run_sweep(
    params: &SweepParams,
    threads: usize,
    progress: impl Fn(usize) + Sync,
) -> Result<Vec<SweepCell>, SimError> {
    check_policies(&params.policies)?;
    let compared = params.policies.len() - 1;
    let grid = params.grid();
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<CellResult>>> = grid.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..threads.clamp(1, grid.len().max(1)) {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&(gpus, users)) = grid.get(index) else {
                        break;
                    };
                    let cell = run_cell(params, gpus, users);
                    if let Ok(mut slot) = slots[index].lock() {
                        *slot = Some(cell);
                    }
                    progress(done.fetch_add(compared, Ordering::Relaxed) + compared);
                }
            });
        }
    });
    // Every index was claimed by one thread and the scope joined them all (a panic in a cell
    // propagates out of the scope), so every slot holds its cell.
    let mut cells = Vec::with_capacity(grid.len() * compared);
    for slot in slots {
        cells.extend(
            slot.into_inner()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .expect("every cell of the sweep ran")?,
        );
    }
    Ok(cells)
}

/// Runs the cell at `index` of the grid ([`SweepParams::grid`]) alone, in this thread: the
/// [`SweepCell`]s that [`run_sweep`] gives for it, one per compared policy. A sweep split over
/// processes or machines, one cell per task, is [`run_sweep`]'s table when its cells are
/// concatenated in index order. An index beyond the grid, or policies that [`run_sweep`]
/// refuses, is an error.
///
/// ```
/// use gangway_sim::sweep::{run_sweep, run_sweep_cell, SweepParams};
/// let params = SweepParams { gpus: vec![4, 8], users: vec![2], weeks: 1, ..SweepParams::default() };
/// let mut cells = run_sweep_cell(&params, 1).unwrap();
/// cells.splice(0..0, run_sweep_cell(&params, 0).unwrap());
/// assert_eq!(cells, run_sweep(&params, 2, |_| {}).unwrap());
/// assert!(run_sweep_cell(&params, 2).unwrap_err().to_string().contains("no cell 2"));
/// ```
pub fn run_sweep_cell(params: &SweepParams, index: usize) -> Result<Vec<SweepCell>, SimError> {
    check_policies(&params.policies)?;
    let grid = params.grid();
    let &(gpus, users) = grid.get(index).ok_or_else(|| {
        ParamError(format!(
            "the sweep's grid has no cell {index}: it has {} (0 to {})",
            grid.len(),
            grid.len().saturating_sub(1)
        ))
    })?;
    run_cell(params, gpus, users)
}

/// What one cell of the grid gives: a [`SweepCell`] per compared policy.
type CellResult = Result<Vec<SweepCell>, SimError>;

/// One cell: the workload of `users` users on `gpus` GPUs (or on the machine) under the
/// baseline and under each other policy.
fn run_cell(params: &SweepParams, gpus: u32, users: u32) -> CellResult {
    let mut team = TeamParams {
        weeks: params.weeks,
        ..TeamParams::cell(gpus, users, params.seed)
    };
    if let Some(machine) = &params.machine {
        team = team.fit_to(machine)?;
    }
    let workload = team.generate()?;
    let run = |policy: PolicyPreset| -> Result<Metrics, SimError> {
        let (cluster, jobs) = prepare(&workload, params.machine.as_ref(), policy, Overrun::Allow);
        let options = SimOptions {
            looks: (policy == PolicyPreset::Ssh).then(|| params.looks.clone()),
            ..SimOptions::default()
        };
        let result = Simulator::new(cluster, jobs, options)?.run(|_| Ok(()))?;
        Ok(Metrics::of(&result))
    };
    let (&baseline, others) = params
        .policies
        .split_first()
        .ok_or_else(|| ParamError("the sweep has no policy".into()))?;
    let baseline_metrics = run(baseline)?;
    others
        .iter()
        .map(|&policy| {
            Ok(SweepCell {
                gpus,
                users,
                jobs: workload.jobs.len(),
                baseline,
                baseline_metrics: baseline_metrics.clone(),
                policy,
                policy_metrics: run(policy)?,
            })
        })
        .collect()
}

/// One cell of the sweep as a flat record, for its JSON and CSV tables: the fields name the
/// baseline and the policy, so that a record reads alone whatever the sweep compared.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SweepRow {
    /// GPUs of the cluster.
    pub gpus: u32,
    /// Users.
    pub users: u32,
    /// Jobs of the cell's workload.
    pub jobs: usize,
    /// The baseline policy (`ssh`: no scheduler).
    pub baseline: PolicyPreset,
    /// The policy compared with it.
    pub policy: PolicyPreset,
    /// Mean wait under the baseline, in seconds.
    pub wait_baseline_s: f64,
    /// Mean wait under the policy, in seconds.
    pub wait_policy_s: f64,
    /// The part of the baseline's mean wait the policy saves.
    pub wait_saved: f64,
    /// GPU-hours idle while a job waited, under the baseline.
    pub idle_baseline_hours: f64,
    /// GPU-hours idle while a job waited, under the policy.
    pub idle_policy_hours: f64,
    /// The part of the baseline's the policy saves.
    pub idle_saved: f64,
    /// Whether the policy pays off against the baseline ([`SweepCell::pays_off`]).
    pub pays_off: bool,
}

impl SweepRow {
    /// The header of [`SweepRow::csv`].
    pub const CSV_HEADER: &'static str = "gpus,users,jobs,baseline,policy,wait_baseline_s,\
        wait_policy_s,wait_saved,idle_baseline_hours,idle_policy_hours,idle_saved,pays_off";

    /// The row of `cell`.
    ///
    /// ```
    /// use gangway_sim::sweep::{run_sweep, SweepParams, SweepRow};
    /// let params = SweepParams { gpus: vec![4], users: vec![2], weeks: 1, ..SweepParams::default() };
    /// let cells = run_sweep(&params, 1, |_| {}).unwrap();
    /// let row = SweepRow::of(&cells[0]);
    /// assert_eq!((row.gpus, row.users, row.pays_off), (4, 2, cells[0].pays_off()));
    /// assert!(row.csv().starts_with("4,2,") && row.csv().contains(",ssh,full,"));
    /// assert_eq!(row.csv().split(',').count(), SweepRow::CSV_HEADER.split(',').count());
    /// ```
    pub fn of(cell: &SweepCell) -> SweepRow {
        SweepRow {
            gpus: cell.gpus,
            users: cell.users,
            jobs: cell.jobs,
            baseline: cell.baseline,
            policy: cell.policy,
            wait_baseline_s: cell.baseline_metrics.wait.mean_s,
            wait_policy_s: cell.policy_metrics.wait.mean_s,
            wait_saved: cell.wait_saved(),
            idle_baseline_hours: cell.baseline_metrics.idle_hours_while_waiting,
            idle_policy_hours: cell.policy_metrics.idle_hours_while_waiting,
            idle_saved: cell.idle_saved(),
            pays_off: cell.pays_off(),
        }
    }

    /// The row as CSV (no line end), in the order of [`SweepRow::CSV_HEADER`].
    pub fn csv(&self) -> String {
        format!(
            "{},{},{},{},{},{},{},{},{},{},{},{}",
            self.gpus,
            self.users,
            self.jobs,
            self.baseline.name(),
            self.policy.name(),
            self.wait_baseline_s,
            self.wait_policy_s,
            self.wait_saved,
            self.idle_baseline_hours,
            self.idle_policy_hours,
            self.idle_saved,
            self.pays_off
        )
    }
}

/// The sweep's table: one row per cell and compared policy, with the baseline's and the
/// policy's mean waits and GPU-hours idle while a job waited, the savings, and whether the
/// policy pays off. The header names the baseline (`wait ssh`); each row names its policy.
///
/// ```
/// use gangway_sim::sweep::sweep_table;
/// let header = sweep_table(&[]);
/// assert!(header.starts_with("GPUs"));
/// assert!(header.contains("wait baseline"));
/// ```
pub fn sweep_table(cells: &[SweepCell]) -> String {
    let baseline = cells.first().map_or("baseline", |c| c.baseline.name());
    let (wait_baseline, idle_baseline) = (format!("wait {baseline}"), format!("idle {baseline}"));
    let wait_width = wait_baseline.len().max(10);
    let idle_width = idle_baseline.len().max(9);
    let policy_width = cells
        .iter()
        .map(|c| c.policy.name().len())
        .chain(["policy".len()])
        .max()
        .unwrap_or(0);
    let mut table = format!(
        "{:>4} {:>5} {:>5} {:<policy_width$} {:>wait_width$} {:>10} {:>7} {:>idle_width$} {:>9} \
         {:>7}  {}\n",
        "GPUs",
        "users",
        "jobs",
        "policy",
        wait_baseline,
        "wait",
        "saved",
        idle_baseline,
        "idle",
        "saved",
        "pays off"
    );
    for cell in cells {
        table.push_str(&format!(
            "{:>4} {:>5} {:>5} {:<policy_width$} {:>wait_width$} {:>10} {:>6.0}% \
             {:>idle_width$.0} {:>9.0} {:>6.0}%  {}\n",
            cell.gpus,
            cell.users,
            cell.jobs,
            cell.policy.name(),
            duration(cell.baseline_metrics.wait.mean_s),
            duration(cell.policy_metrics.wait.mean_s),
            cell.wait_saved() * 100.0,
            cell.baseline_metrics.idle_hours_while_waiting,
            cell.policy_metrics.idle_hours_while_waiting,
            cell.idle_saved() * 100.0,
            if cell.pays_off() { "yes" } else { "no" }
        ));
    }
    table
}
