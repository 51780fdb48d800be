//! `gangway.simulate`: the simulator of `gangway simulate` from Python.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use gangway::ClusterConfig;
use gangway_sim::SimError;
use gangway_sim::metrics::Metrics;
use gangway_sim::sweep::{
    SweepCell, SweepParams, SweepRow, run_sweep, run_sweep_cell, sweep_policies,
};
use gangway_sim::team::{TeamFile, TeamParams};
use gangway_sim::workload::gpu_ml::GpuMlParams;
use gangway_sim::workload::{NonPositiveRequest, ParamError, QosPriority, ReaderRules, Workload};
use gangway_sim::{
    FaultOptions, LookSchedule, Overrun, PolicyPreset, SimOptions, SimResult, Simulator, prepare,
};
use pyo3::exceptions::{PyImportError, PyIndexError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict};

use crate::errors::{gangway_error, wire_error};
use crate::to_value;

/// How often a running simulation checks for Ctrl-C (`KeyboardInterrupt`).
const SIGNAL_CHECK: Duration = Duration::from_millis(50);

fn builtin(name: &str) -> PyResult<GpuMlParams> {
    match name {
        "gpu-ml" => Ok(GpuMlParams::default()),
        "gpu-ml-heavy-tail" => Ok(GpuMlParams::heavy_tailed()),
        _ => Err(PyValueError::new_err(format!(
            "unknown workload {name:?}: expected team, gpu-ml or gpu-ml-heavy-tail"
        ))),
    }
}

/// The team workload of `simulate(workload="team", team={...})`: the team file's fields
/// (docs/simulate.md, "Your own team") over the built-in team, drawn for `cluster`'s machine
/// when one is given.
fn team_workload(
    py: Python<'_>,
    team: Option<&Bound<'_, PyAny>>,
    cluster: Option<&ClusterConfig>,
    seed: u64,
    jobs: Option<usize>,
) -> PyResult<Workload> {
    let file: TeamFile = match team {
        Some(object) if !object.is_none() => {
            let value = to_value(py, object, "team")?;
            serde_json::from_value(value)
                .map_err(|e| PyValueError::new_err(format!("team: {e}")))?
        }
        _ => TeamFile::default(),
    };
    if cluster.is_some()
        && (file.nodes.is_some() || file.gpus_per_node.is_some() || file.gpu_model.is_some())
    {
        return Err(PyValueError::new_err(
            "team: nodes, gpus_per_node and gpu_model conflict with cluster=, which brings its own machine",
        ));
    }
    let mut params = TeamParams {
        seed,
        ..TeamParams::default()
    };
    if let Some(machine) = cluster {
        params = params
            .fit_to(machine)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
    }
    let mut workload = file
        .apply(params)
        .and_then(|p| p.generate())
        .map_err(|e| PyValueError::new_err(format!("team: {}", e.0)))?;
    if let Some(jobs) = jobs {
        workload.jobs.truncate(jobs);
    }
    Ok(workload)
}

/// `qos_priority=`: `None` (the default: every pod 0), `"none"`, `"default"`, a string
/// `"CLASS=N,..."`, or a dict `{class: int}`.
fn qos_priority(object: Option<&Bound<'_, PyAny>>) -> PyResult<QosPriority> {
    let Some(object) = object.filter(|o| !o.is_none()) else {
        return Ok(QosPriority::None);
    };
    let invalid = |why: String| PyValueError::new_err(format!("qos_priority: {why}"));
    if let Ok(text) = object.extract::<String>() {
        return text.parse().map_err(|e: ParamError| invalid(e.0));
    }
    let Ok(dict) = object.cast::<PyDict>() else {
        return Err(invalid(format!(
            "expected \"none\", \"default\", \"CLASS=N,...\" or a dict of class to int, got {}",
            object.get_type().name()?
        )));
    };
    let mut map = BTreeMap::new();
    for (class, priority) in dict.iter() {
        let class: String = class
            .extract()
            .map_err(|_| invalid(format!("class {class}: not a string")))?;
        if class.trim().is_empty() {
            return Err(invalid("a class is empty".to_string()));
        }
        // `bool` is an `int` in Python: refused, as a priority of True is a mistake.
        if priority.is_instance_of::<PyBool>() {
            return Err(invalid(format!(
                "class {class:?}: the priority is not an integer"
            )));
        }
        let priority: i32 = priority.extract().map_err(|_| {
            invalid(format!(
                "class {class:?}: the priority {priority} is not an integer in the 32-bit range"
            ))
        })?;
        map.insert(class, priority);
    }
    Ok(QosPriority::Map(map))
}

/// `non_positive_request=`: `"run-time"` (the default), `"skip"`, or a positive number of
/// seconds (an int, or its digits as a string).
fn non_positive_request(object: Option<&Bound<'_, PyAny>>) -> PyResult<NonPositiveRequest> {
    let Some(object) = object.filter(|o| !o.is_none()) else {
        return Ok(NonPositiveRequest::RunTime);
    };
    let invalid = |why: String| PyValueError::new_err(format!("non_positive_request: {why}"));
    if let Ok(text) = object.extract::<String>() {
        return text.parse().map_err(|e: ParamError| invalid(e.0));
    }
    if !object.is_instance_of::<PyBool>()
        && let Ok(seconds) = object.extract::<i64>()
    {
        return u64::try_from(seconds)
            .ok()
            .filter(|&s| s > 0)
            .map(NonPositiveRequest::Seconds)
            .ok_or_else(|| invalid(format!("{seconds} seconds: expected a positive number")));
    }
    Err(invalid(format!(
        "expected \"run-time\", \"skip\" or a positive number of seconds, got {}",
        object.get_type().name()?
    )))
}

#[allow(clippy::too_many_arguments)]
fn load(
    py: Python<'_>,
    workload: Option<&str>,
    trace: Option<PathBuf>,
    seed: u64,
    jobs: Option<usize>,
    team: Option<&Bound<'_, PyAny>>,
    cluster: Option<&ClusterConfig>,
    rules: &ReaderRules,
) -> PyResult<(String, Workload)> {
    if workload != Some("team") && team.is_some_and(|t| !t.is_none()) {
        return Err(PyValueError::new_err("team= is for workload=\"team\""));
    }
    if trace.is_none() && *rules != ReaderRules::default() {
        return Err(PyValueError::new_err(
            "qos_priority= and non_positive_request= are for trace=",
        ));
    }
    match (workload, trace) {
        (Some("team"), None) => {
            let workload = team_workload(py, team, cluster, seed, jobs)?;
            Ok((format!("team (seed {seed})"), workload))
        }
        (Some(_), Some(_)) => Err(PyValueError::new_err("give workload= or trace=, not both")),
        (_, Some(path)) => {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default();
            let workload = gangway_sim::workload::read_trace(
                &path,
                None,
                &gangway_sim::workload::history::HistoryOptions::default(),
                rules,
            )
            .map_err(PyValueError::new_err)?;
            Ok((name, workload))
        }
        (name, None) => {
            let name = name.unwrap_or("gpu-ml");
            let base = builtin(name)?;
            let params = GpuMlParams {
                seed,
                jobs: jobs.unwrap_or(base.jobs),
                ..base
            };
            let workload = params
                .generate()
                .map_err(|e| PyValueError::new_err(e.to_string()))?;
            Ok((format!("{name} (seed {seed})"), workload))
        }
    }
}

/// Runs one policy with the GIL released, checking for Ctrl-C between ticks.
fn run_one(
    py: Python<'_>,
    workload: &Workload,
    cluster: Option<&ClusterConfig>,
    policy: PolicyPreset,
    overrun: Overrun,
    options: &SimOptions,
) -> PyResult<SimResult> {
    let mut interrupt: Option<PyErr> = None;
    let result = py.detach(|| {
        let (cluster, jobs) = prepare(workload, cluster, policy, overrun);
        let simulator = Simulator::new(cluster, jobs, options.clone())?;
        let mut checked = Instant::now();
        simulator.run(|_| {
            if checked.elapsed() < SIGNAL_CHECK {
                return Ok(());
            }
            checked = Instant::now();
            match Python::attach(|py| py.check_signals()) {
                Ok(()) => Ok(()),
                Err(e) => {
                    interrupt = Some(e);
                    Err("interrupted".to_string())
                }
            }
        })
    });
    if let Some(error) = interrupt {
        return Err(error);
    }
    result.map_err(|e| gangway_error(py, "simulation", &e.to_string(), None))
}

/// Simulates a workload under one or several policies (docs/python.md, "Simulation").
#[pyfunction]
#[pyo3(signature = (workload = None, trace = None, policies = None, cluster = None, seed = 1,
                    jobs = None, overrun = "allow", checkpoint_delay_s = 30, faults = None,
                    dataframe = false, team = None, one_event_per_tick = false,
                    qos_priority = None, non_positive_request = None))]
#[allow(clippy::too_many_arguments)]
pub fn simulate<'py>(
    py: Python<'py>,
    workload: Option<&str>,
    trace: Option<PathBuf>,
    policies: Option<Vec<String>>,
    cluster: Option<&Bound<'py, PyAny>>,
    seed: u64,
    jobs: Option<usize>,
    overrun: &str,
    checkpoint_delay_s: u64,
    faults: Option<u64>,
    dataframe: bool,
    team: Option<&Bound<'py, PyAny>>,
    one_event_per_tick: bool,
    qos_priority: Option<&Bound<'py, PyAny>>,
    non_positive_request: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let rules = ReaderRules {
        qos_priority: self::qos_priority(qos_priority)?,
        non_positive_request: self::non_positive_request(non_positive_request)?,
    };
    let presets = match policies {
        None => PolicyPreset::ALL.to_vec(),
        Some(names) => PolicyPreset::parse_list(&names.join(",")).map_err(PyValueError::new_err)?,
    };
    let overrun = match overrun {
        "allow" => Overrun::Allow,
        "kill" => Overrun::Kill,
        other => {
            return Err(PyValueError::new_err(format!(
                "overrun: expected allow or kill, got {other:?}"
            )));
        }
    };
    let cluster: Option<ClusterConfig> = match cluster {
        None => None,
        Some(object) if object.is_none() => None,
        Some(object) => {
            let value = to_value(py, object, "cluster")?;
            Some(gangway::protocol::parse_cluster(value).map_err(|e| wire_error(py, e))?)
        }
    };
    let (name, workload) = load(
        py,
        workload,
        trace,
        seed,
        jobs,
        team,
        cluster.as_ref(),
        &rules,
    )?;
    let options = SimOptions {
        checkpoint_delay_ms: checkpoint_delay_s.saturating_mul(1000),
        faults: faults.map(FaultOptions::standard),
        one_event_per_tick,
        ..SimOptions::default()
    };
    let pandas = if dataframe {
        Some(py.import("pandas").map_err(|e| {
            PyImportError::new_err(format!("simulate(dataframe=True) needs pandas: {e}"))
        })?)
    } else {
        None
    };
    let out = PyDict::new(py);
    out.set_item("workload", &name)?;
    out.set_item(
        "nodes",
        cluster
            .as_ref()
            .map_or(workload.nodes.len(), |c| c.nodes.len()),
    )?;
    out.set_item("jobs", workload.jobs.len())?;
    out.set_item(
        "policies",
        presets.iter().map(|p| p.name()).collect::<Vec<_>>(),
    )?;
    let metrics = PyDict::new(py);
    let schedules = PyDict::new(py);
    for &policy in &presets {
        // The `ssh` baseline is host behaviour: users looking for free GPUs (default looks).
        let options = SimOptions {
            looks: (policy == PolicyPreset::Ssh).then(LookSchedule::default),
            ..options.clone()
        };
        let result = run_one(py, &workload, cluster.as_ref(), policy, overrun, &options)?;
        let figures = Metrics::of(&result);
        metrics.set_item(policy.name(), pythonize::pythonize(py, &figures)?)?;
        let records = pythonize::pythonize(py, &result.jobs)?;
        let schedule = match &pandas {
            Some(pandas) => pandas.getattr("DataFrame")?.call1((records,))?,
            None => records,
        };
        schedules.set_item(policy.name(), schedule)?;
    }
    out.set_item("metrics", metrics)?;
    out.set_item("schedules", schedules)?;
    Ok(out)
}

/// The sweep of `gangway.sweep(gpus, users, seed, weeks, policies)`, its arguments checked:
/// `policies` the baseline, then the policies compared with it (`sweep_policies`); `None`
/// takes the default grid or policies.
fn sweep_params(
    gpus: Option<Vec<u32>>,
    users: Option<Vec<u32>>,
    seed: u64,
    weeks: u32,
    policies: Option<Vec<String>>,
) -> PyResult<SweepParams> {
    let defaults = SweepParams::default();
    let policies = match policies {
        None => defaults.policies.clone(),
        Some(names) => {
            let given =
                PolicyPreset::parse_list(&names.join(",")).map_err(PyValueError::new_err)?;
            sweep_policies(&given)
                .map_err(|e| PyValueError::new_err(format!("sweep: policies: {}", e.0)))?
        }
    };
    let params = SweepParams {
        gpus: gpus.unwrap_or_else(|| defaults.gpus.clone()),
        users: users.unwrap_or_else(|| defaults.users.clone()),
        seed,
        weeks,
        policies,
        ..defaults
    };
    if params.gpus.is_empty() || params.users.is_empty() || params.gpus.contains(&0) {
        return Err(PyValueError::new_err(
            "sweep: gpus and users must be non-empty lists of positive numbers",
        ));
    }
    Ok(params)
}

/// `gangway.sweep`'s native part: the sweep's cells as records (`SweepRow` fields), in grid
/// order; `gangway.sweep` wraps them in a `SweepTable`. `policies`: the baseline, then the
/// policies compared with it (one alone is compared with ssh); default ssh, full.
#[pyfunction]
#[pyo3(signature = (gpus = None, users = None, seed = 1, weeks = 2, policies = None))]
pub fn sweep_records<'py>(
    py: Python<'py>,
    gpus: Option<Vec<u32>>,
    users: Option<Vec<u32>>,
    seed: u64,
    weeks: u32,
    policies: Option<Vec<String>>,
) -> PyResult<Bound<'py, PyAny>> {
    let params = sweep_params(gpus, users, seed, weeks, policies)?;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    sweep_rows(py, || run_sweep(&params, threads, |_| {}))
}

/// The records of the sweep cells `run` gives, run with the GIL released.
fn sweep_rows<'py>(
    py: Python<'py>,
    run: impl FnOnce() -> Result<Vec<SweepCell>, SimError> + Send,
) -> PyResult<Bound<'py, PyAny>> {
    let cells = py
        .detach(run)
        .map_err(|e| gangway_error(py, "simulation", &e.to_string(), None))?;
    let rows: Vec<SweepRow> = cells.iter().map(SweepRow::of).collect();
    Ok(pythonize::pythonize(py, &rows)?)
}

/// The grid of `gangway.sweep(...)` with these arguments, checked: its cells' `(gpus, users)`
/// in grid order, the cells `sweep_cell` runs by index.
#[pyfunction]
#[pyo3(signature = (gpus = None, users = None, seed = 1, weeks = 2, policies = None))]
pub fn sweep_grid(
    gpus: Option<Vec<u32>>,
    users: Option<Vec<u32>>,
    seed: u64,
    weeks: u32,
    policies: Option<Vec<String>>,
) -> PyResult<Vec<(u32, u32)>> {
    Ok(sweep_params(gpus, users, seed, weeks, policies)?.grid())
}

/// One cell of `gangway.sweep(...)`, the one at `index` of its grid, run in this thread with
/// the GIL released: its records (one per compared policy), as `sweep_records` gives them.
#[pyfunction]
#[pyo3(signature = (index, gpus = None, users = None, seed = 1, weeks = 2, policies = None))]
pub fn sweep_cell<'py>(
    py: Python<'py>,
    index: usize,
    gpus: Option<Vec<u32>>,
    users: Option<Vec<u32>>,
    seed: u64,
    weeks: u32,
    policies: Option<Vec<String>>,
) -> PyResult<Bound<'py, PyAny>> {
    let params = sweep_params(gpus, users, seed, weeks, policies)?;
    let cells = params.grid().len();
    if index >= cells {
        return Err(PyIndexError::new_err(format!(
            "sweep: no cell {index}: the grid has {cells} (0 to {})",
            cells.saturating_sub(1)
        )));
    }
    sweep_rows(py, || run_sweep_cell(&params, index))
}
