//! `gangway simulate --sweep`: does a scheduler pay off for a team of this size on a cluster of
//! this size? Each cell is a [`TeamParams::cell`] (every user the same demand, each user its
//! own account) run twice, with no scheduler (`ssh`, [`crate::looks`]) and with the full
//! stack (`full`); cells are independent and run on every core, and the table is the same
//! whatever the number of threads.
//!
//! A scheduler **pays off** in a cell ([`SweepCell::pays_off`]) when `full`, against `ssh`,
//! cuts the mean wait by at least 25% and by at least 30 minutes, or cuts the GPU-hours left
//! idle while a job waited by at least 10% and by at least 1% of the cluster's GPU-hours over
//! the run. (Declared before measuring; the absolute floors keep an almost idle cell, where
//! both waits are minutes, from counting as a win.)
//!
//! ```
//! use gangway_sim::sweep::{run_sweep, SweepParams};
//! let params = SweepParams { gpus: vec![8], users: vec![2], weeks: 1, ..SweepParams::default() };
//! let cells = run_sweep(&params, 1, |_| {}).unwrap();
//! assert_eq!(cells.len(), 1);
//! assert!(cells[0].ssh.wait.mean_s >= cells[0].full.wait.mean_s);
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

/// The grid of a sweep.
///
/// ```
/// use gangway_sim::sweep::SweepParams;
/// let params = SweepParams::default();
/// assert_eq!(params.gpus, [4, 8, 16, 32, 64, 128]);
/// assert_eq!(params.users, [2, 4, 8, 16]);
/// assert!(params.machine.is_none());
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
}

/// One cell: its size and both runs' metrics.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepCell {
    /// GPUs of the cluster.
    pub gpus: u32,
    /// Users.
    pub users: u32,
    /// Jobs of the cell's workload.
    pub jobs: usize,
    /// Without a scheduler.
    pub ssh: Metrics,
    /// With the full stack.
    pub full: Metrics,
}

impl SweepCell {
    /// The mean wait `full` saves, as a fraction of `ssh`'s (0 when `ssh` waited not at all).
    pub fn wait_saved(&self) -> f64 {
        saved(self.ssh.wait.mean_s, self.full.wait.mean_s)
    }

    /// The GPU-hours idle while a job waited that `full` saves, as a fraction of `ssh`'s.
    pub fn idle_saved(&self) -> f64 {
        saved(
            self.ssh.idle_hours_while_waiting,
            self.full.idle_hours_while_waiting,
        )
    }

    /// Whether the scheduler pays off here (the module documentation's definition).
    ///
    /// ```
    /// use gangway_sim::sweep::SweepCell;
    /// use gangway_sim::{metrics::Metrics, SimResult};
    /// let mut ssh = Metrics::of(&SimResult::default());
    /// let mut full = ssh.clone();
    /// ssh.wait.mean_s = 3_600.0;
    /// full.wait.mean_s = 1_800.0; // half the wait, 30 minutes less
    /// let cell = SweepCell { gpus: 8, users: 4, jobs: 0, ssh, full };
    /// assert!(cell.pays_off());
    /// ```
    pub fn pays_off(&self) -> bool {
        pays_off(&self.ssh, &self.full, f64::from(self.gpus))
    }
}

/// The sweep's rule for any two runs of one workload: whether the run `with` a scheduler pays
/// off against `ssh` (the module documentation's definition), on a machine of `capacity`
/// GPUs (cpus when the metrics' resource is cpu).
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
pub fn pays_off(ssh: &Metrics, with: &Metrics, capacity: f64) -> bool {
    let wait_cut = ssh.wait.mean_s - with.wait.mean_s;
    let idle_cut = ssh.idle_hours_while_waiting - with.idle_hours_while_waiting;
    let resource_hours = capacity * ssh.makespan_s.max(with.makespan_s) / 3_600.0;
    (saved(ssh.wait.mean_s, with.wait.mean_s) >= 0.25 && wait_cut >= 1_800.0)
        || (saved(ssh.idle_hours_while_waiting, with.idle_hours_while_waiting) >= 0.10
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
/// number of cells done after each; the cells come back in grid order (users, then GPUs).
pub fn run_sweep(
    params: &SweepParams,
    threads: usize,
    progress: impl Fn(usize) + Sync,
) -> Result<Vec<SweepCell>, SimError> {
    let sizes = params.grid_gpus();
    let grid: Vec<(u32, u32)> = params
        .users
        .iter()
        .flat_map(|&users| sizes.iter().map(move |&gpus| (gpus, users)))
        .collect();
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<Result<SweepCell, SimError>>>> =
        grid.iter().map(|_| Mutex::new(None)).collect();
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
                    progress(done.fetch_add(1, Ordering::Relaxed) + 1);
                }
            });
        }
    });
    // Every index was claimed by one thread and the scope joined them all (a panic in a cell
    // propagates out of the scope), so every slot holds its cell.
    slots
        .into_iter()
        .map(|slot| {
            slot.into_inner()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .expect("every cell of the sweep ran")
        })
        .collect()
}

/// One cell: the workload of `users` users on `gpus` GPUs (or on the machine) under `ssh` and
/// `full`.
fn run_cell(params: &SweepParams, gpus: u32, users: u32) -> Result<SweepCell, SimError> {
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
    Ok(SweepCell {
        gpus,
        users,
        jobs: workload.jobs.len(),
        ssh: run(PolicyPreset::Ssh)?,
        full: run(PolicyPreset::Full)?,
    })
}

/// One cell of the sweep as a flat record, for its JSON and CSV tables.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SweepRow {
    /// GPUs of the cluster.
    pub gpus: u32,
    /// Users.
    pub users: u32,
    /// Jobs of the cell's workload.
    pub jobs: usize,
    /// Mean wait without a scheduler, in seconds.
    pub wait_ssh_s: f64,
    /// Mean wait under `full`, in seconds.
    pub wait_full_s: f64,
    /// The part of the mean wait `full` saves.
    pub wait_saved: f64,
    /// GPU-hours idle while a job waited, without a scheduler.
    pub idle_ssh_hours: f64,
    /// GPU-hours idle while a job waited, under `full`.
    pub idle_full_hours: f64,
    /// The part of those `full` saves.
    pub idle_saved: f64,
    /// Whether the scheduler pays off ([`SweepCell::pays_off`]).
    pub pays_off: bool,
}

impl SweepRow {
    /// The header of [`SweepRow::csv`].
    pub const CSV_HEADER: &'static str = "gpus,users,jobs,wait_ssh_s,wait_full_s,wait_saved,\
        idle_ssh_hours,idle_full_hours,idle_saved,pays_off";

    /// The row of `cell`.
    ///
    /// ```
    /// use gangway_sim::sweep::{run_sweep, SweepParams, SweepRow};
    /// let params = SweepParams { gpus: vec![4], users: vec![2], weeks: 1, ..SweepParams::default() };
    /// let cells = run_sweep(&params, 1, |_| {}).unwrap();
    /// let row = SweepRow::of(&cells[0]);
    /// assert_eq!((row.gpus, row.users, row.pays_off), (4, 2, cells[0].pays_off()));
    /// assert_eq!(row.csv().split(',').count(), SweepRow::CSV_HEADER.split(',').count());
    /// ```
    pub fn of(cell: &SweepCell) -> SweepRow {
        SweepRow {
            gpus: cell.gpus,
            users: cell.users,
            jobs: cell.jobs,
            wait_ssh_s: cell.ssh.wait.mean_s,
            wait_full_s: cell.full.wait.mean_s,
            wait_saved: cell.wait_saved(),
            idle_ssh_hours: cell.ssh.idle_hours_while_waiting,
            idle_full_hours: cell.full.idle_hours_while_waiting,
            idle_saved: cell.idle_saved(),
            pays_off: cell.pays_off(),
        }
    }

    /// The row as CSV (no line end), in the order of [`SweepRow::CSV_HEADER`].
    pub fn csv(&self) -> String {
        format!(
            "{},{},{},{},{},{},{},{},{},{}",
            self.gpus,
            self.users,
            self.jobs,
            self.wait_ssh_s,
            self.wait_full_s,
            self.wait_saved,
            self.idle_ssh_hours,
            self.idle_full_hours,
            self.idle_saved,
            self.pays_off
        )
    }
}

/// The sweep's table: one row per cell with both mean waits, both GPU-hours idle while a job
/// waited, the savings, and whether the scheduler pays off.
///
/// ```
/// use gangway_sim::sweep::sweep_table;
/// assert!(sweep_table(&[]).starts_with("GPUs"));
/// ```
pub fn sweep_table(cells: &[SweepCell]) -> String {
    let mut table = format!(
        "{:>4} {:>5} {:>5} {:>10} {:>10} {:>7} {:>9} {:>9} {:>7}  {}\n",
        "GPUs",
        "users",
        "jobs",
        "wait ssh",
        "wait full",
        "saved",
        "idle ssh",
        "idle full",
        "saved",
        "pays off"
    );
    for cell in cells {
        table.push_str(&format!(
            "{:>4} {:>5} {:>5} {:>10} {:>10} {:>6.0}% {:>9.0} {:>9.0} {:>6.0}%  {}\n",
            cell.gpus,
            cell.users,
            cell.jobs,
            duration(cell.ssh.wait.mean_s),
            duration(cell.full.wait.mean_s),
            cell.wait_saved() * 100.0,
            cell.ssh.idle_hours_while_waiting,
            cell.full.idle_hours_while_waiting,
            cell.idle_saved() * 100.0,
            if cell.pays_off() { "yes" } else { "no" }
        ));
    }
    table
}
