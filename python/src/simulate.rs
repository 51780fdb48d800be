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
use pyo3::exceptions::{PyImportError, PyIndexError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyInt, PyString};

use crate::args::{Arg, Given, INVALID_ARGUMENT};
use crate::errors::{gangway_error, wire_error};
use crate::to_value;

/// How often a running simulation checks for Ctrl-C (`KeyboardInterrupt`).
const SIGNAL_CHECK: Duration = Duration::from_millis(50);

/// The parameters of the built-in workload `name` other than `team`.
fn builtin(name: &str) -> Option<GpuMlParams> {
    match name {
        "gpu-ml" => Some(GpuMlParams::default()),
        "gpu-ml-heavy-tail" => Some(GpuMlParams::heavy_tailed()),
        _ => None,
    }
}

/// `workload=`: a built-in workload's name.
fn workload_name(arg: &Arg<'_>) -> PyResult<String> {
    let name = arg.string()?;
    if name != "team" && builtin(&name).is_none() {
        return Err(arg.wrong_value("one of team, gpu-ml, gpu-ml-heavy-tail"));
    }
    Ok(name)
}

/// `policies=`: a non-empty list of preset names, each once.
fn policy_list(arg: &Arg<'_>) -> PyResult<Vec<PolicyPreset>> {
    let mut presets = Vec::new();
    for item in arg.non_empty_items("a list of str")? {
        let name = item.string()?;
        let preset: PolicyPreset = name.parse().map_err(|_| {
            item.invalid(&format!(
                "unknown policy '{name}': expected one of {}",
                PolicyPreset::names().join(", ")
            ))
        })?;
        if presets.contains(&preset) {
            return Err(item.invalid(&format!("policy '{name}' is named twice")));
        }
        presets.push(preset);
    }
    Ok(presets)
}

/// The team workload of `simulate(workload="team", team={...})`: the team file's fields
/// (docs/simulate.md, "Your own team") over the built-in team, drawn for `cluster`'s machine
/// when one is given.
fn team_workload(
    py: Python<'_>,
    team: Option<&Arg<'_>>,
    cluster: Option<(&Arg<'_>, &ClusterConfig)>,
    seed: u64,
    jobs: Option<usize>,
) -> PyResult<Workload> {
    let file: TeamFile = match team {
        Some(arg) => {
            let value = to_value(py, arg.object(), "team")?;
            serde_path_to_error::deserialize(value).map_err(|e| {
                let path = match e.path().to_string() {
                    root if root == "." => "team".to_string(),
                    field => format!("team.{field}"),
                };
                let message = format!("{path}: {}", e.inner());
                gangway_error(py, INVALID_ARGUMENT, &message, Some(&path))
            })?
        }
        None => TeamFile::default(),
    };
    if let Some(team) = team
        && cluster.is_some()
        && (file.nodes.is_some() || file.gpus_per_node.is_some() || file.gpu_model.is_some())
    {
        return Err(team.invalid(
            "nodes, gpus_per_node and gpu_model conflict with cluster=, which brings its own machine",
        ));
    }
    let mut params = TeamParams {
        seed,
        ..TeamParams::default()
    };
    if let Some((arg, machine)) = cluster {
        params = params
            .fit_to(machine)
            .map_err(|e| arg.invalid(&e.to_string()))?;
    }
    let mut workload = file.apply(params).and_then(|p| p.generate()).map_err(|e| {
        let plain = format!("the team workload: {}", e.0);
        match team {
            Some(arg) => arg.invalid(&plain),
            None => gangway_error(py, INVALID_ARGUMENT, &plain, None),
        }
    })?;
    if let Some(jobs) = jobs {
        workload.jobs.truncate(jobs);
    }
    Ok(workload)
}

/// The argument read in its text form, where it is a str (`None`: it is not), as the
/// simulator's option of that name parses it.
fn parsed_text<T: std::str::FromStr<Err = ParamError>>(arg: &Arg<'_>) -> Option<PyResult<T>> {
    let text = arg.object().cast::<PyString>().ok()?;
    Some(
        text.to_cow()
            .and_then(|text| text.parse().map_err(|e: ParamError| arg.invalid(&e.0))),
    )
}

/// `qos_priority=`: `None` (the default: every pod 0), `"none"`, `"default"`, a string
/// `"CLASS=N,..."`, or a dict `{class: int}`.
fn qos_priority(object: Option<&Bound<'_, PyAny>>) -> PyResult<QosPriority> {
    let Some(object) = object else {
        return Ok(QosPriority::None);
    };
    let arg = Arg::new(object, "qos_priority");
    if let Some(parsed) = parsed_text(&arg) {
        return parsed;
    }
    let Ok(dict) = object.cast::<PyDict>() else {
        return Err(
            arg.wrong_type("\"none\", \"default\", \"CLASS=N,...\" or a dict of str to int")
        );
    };
    let mut map = BTreeMap::new();
    for (class, priority) in dict.iter() {
        let Ok(class) = class.cast::<PyString>().map(|c| c.to_string()) else {
            return Err(arg.wrong_type("a dict with str keys"));
        };
        if class.trim().is_empty() {
            return Err(arg.invalid("a class is empty"));
        }
        let priority = Arg::new(&priority, &format!("qos_priority.{class}"))
            .int::<i32>("from -2**31 to 2**31 - 1")?;
        map.insert(class, priority);
    }
    Ok(QosPriority::Map(map))
}

/// `non_positive_request=`: `"run-time"` (the default), `"skip"`, or a positive number of
/// seconds (an int, or its digits as a string).
fn non_positive_request(object: Option<&Bound<'_, PyAny>>) -> PyResult<NonPositiveRequest> {
    let Some(object) = object else {
        return Ok(NonPositiveRequest::RunTime);
    };
    let arg = Arg::new(object, "non_positive_request");
    if let Some(parsed) = parsed_text(&arg) {
        return parsed;
    }
    if !object.is_instance_of::<PyInt>() || object.is_instance_of::<PyBool>() {
        return Err(arg.wrong_type("\"run-time\", \"skip\" or a positive number of seconds"));
    }
    arg.uint::<u64>(1).map(NonPositiveRequest::Seconds)
}

/// Where `simulate`'s jobs come from: its `workload=`, `trace=`, `team=` and `cluster=`
/// arguments, each read, with the argument it came from for its refusals.
struct Source<'a, 'py> {
    workload: Option<(Arg<'py>, String)>,
    trace: Option<(Arg<'py>, PathBuf)>,
    team: Option<Arg<'py>>,
    cluster: Option<(&'a Arg<'py>, &'a ClusterConfig)>,
}

/// The workload's name and jobs; `rules` read a trace.
fn load(
    py: Python<'_>,
    source: &Source<'_, '_>,
    seed: u64,
    jobs: Option<usize>,
    rules: &ReaderRules,
) -> PyResult<(String, Workload)> {
    let cluster = source.cluster;
    match (&source.workload, &source.trace) {
        (Some((_, name)), None) if name == "team" => {
            let workload = team_workload(py, source.team.as_ref(), cluster, seed, jobs)?;
            Ok((format!("team (seed {seed})"), workload))
        }
        (Some(_), Some((arg, _))) => Err(arg.invalid("give workload= or trace=, not both")),
        (_, Some((arg, path))) => {
            if !path.is_file() {
                return Err(arg.invalid(&format!("no such file: '{}'", path.display())));
            }
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default();
            let workload = gangway_sim::workload::read_trace(
                path,
                None,
                &gangway_sim::workload::history::HistoryOptions::default(),
                rules,
            )
            .map_err(|e| {
                // The reader's message names the file, which is the argument.
                let located = format!("{}: ", path.display());
                arg.invalid(e.strip_prefix(&located).unwrap_or(&e))
            })?;
            Ok((name, workload))
        }
        (name, None) => {
            let name = name.as_ref().map_or("gpu-ml", |(_, name)| name.as_str());
            let base = builtin(name).unwrap_or_default();
            let params = GpuMlParams {
                seed,
                jobs: jobs.unwrap_or(base.jobs),
                ..base
            };
            let workload = params.generate().map_err(|e| {
                let plain = format!("the {name} workload: {e}");
                gangway_error(py, INVALID_ARGUMENT, &plain, None)
            })?;
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
#[pyo3(signature = (workload = None, trace = None, policies = None, cluster = None,
                    seed = Given::Absent, jobs = None, overrun = Given::Absent,
                    checkpoint_delay_s = Given::Absent, faults = None,
                    dataframe = Given::Absent, team = None, one_event_per_tick = Given::Absent,
                    qos_priority = None, non_positive_request = None),
       text_signature = "(workload=None, trace=None, policies=None, cluster=None, seed=1, \
                         jobs=None, overrun='allow', checkpoint_delay_s=30, faults=None, \
                         dataframe=False, team=None, one_event_per_tick=False, \
                         qos_priority=None, non_positive_request=None)")]
#[allow(clippy::too_many_arguments)]
pub fn simulate<'py>(
    py: Python<'py>,
    workload: Option<&Bound<'py, PyAny>>,
    trace: Option<&Bound<'py, PyAny>>,
    policies: Option<&Bound<'py, PyAny>>,
    cluster: Option<&Bound<'py, PyAny>>,
    seed: Given<'py>,
    jobs: Option<&Bound<'py, PyAny>>,
    overrun: Given<'py>,
    checkpoint_delay_s: Given<'py>,
    faults: Option<&Bound<'py, PyAny>>,
    dataframe: Given<'py>,
    team: Option<&Bound<'py, PyAny>>,
    one_event_per_tick: Given<'py>,
    qos_priority: Option<&Bound<'py, PyAny>>,
    non_positive_request: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let rules = ReaderRules {
        qos_priority: self::qos_priority(qos_priority)?,
        non_positive_request: self::non_positive_request(non_positive_request)?,
    };
    let presets = match policies {
        None => PolicyPreset::ALL.to_vec(),
        Some(object) => policy_list(&Arg::new(object, "policies"))?,
    };
    let seed: u64 = seed.or("seed", 1, |a| a.uint(0))?;
    let jobs: Option<usize> = jobs.map(|o| Arg::new(o, "jobs").uint(0)).transpose()?;
    let overrun = overrun.or("overrun", Overrun::Allow, |a| match a.string()?.as_str() {
        "allow" => Ok(Overrun::Allow),
        "kill" => Ok(Overrun::Kill),
        _ => Err(a.wrong_value("'allow' or 'kill'")),
    })?;
    let checkpoint_delay_s: u64 = checkpoint_delay_s.or("checkpoint_delay_s", 30, |a| a.uint(0))?;
    let faults: Option<u64> = faults.map(|o| Arg::new(o, "faults").uint(0)).transpose()?;
    let dataframe = dataframe.or("dataframe", false, Arg::boolean)?;
    let one_event_per_tick = one_event_per_tick.or("one_event_per_tick", false, Arg::boolean)?;
    let workload = workload
        .map(|o| {
            let arg = Arg::new(o, "workload");
            workload_name(&arg).map(|name| (arg, name))
        })
        .transpose()?;
    let trace = trace
        .map(|o| {
            let arg = Arg::new(o, "trace");
            arg.path().map(|path| (arg, path))
        })
        .transpose()?;
    let team = team.map(|o| Arg::new(o, "team"));
    if let Some(team) = &team
        && workload.as_ref().is_none_or(|(_, name)| name != "team")
    {
        return Err(team.invalid("team= is for workload=\"team\""));
    }
    if trace.is_none() {
        for (object, name) in [
            (qos_priority, "qos_priority"),
            (non_positive_request, "non_positive_request"),
        ] {
            if let Some(object) = object {
                return Err(Arg::new(object, name).invalid(&format!("{name}= is for trace=")));
            }
        }
    }
    let cluster: Option<(Arg<'py>, ClusterConfig)> = match cluster {
        None => None,
        Some(object) => {
            let value = to_value(py, object, "cluster")?;
            let config = gangway::protocol::parse_cluster(value).map_err(|e| wire_error(py, e))?;
            Some((Arg::new(object, "cluster"), config))
        }
    };
    let source = Source {
        workload,
        trace,
        team,
        cluster: cluster.as_ref().map(|(arg, config)| (arg, config)),
    };
    let (name, workload) = load(py, &source, seed, jobs, &rules)?;
    let cluster = cluster.map(|(_, config)| config);
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
    gpus: Option<&Bound<'_, PyAny>>,
    users: Option<&Bound<'_, PyAny>>,
    seed: &Given<'_>,
    weeks: &Given<'_>,
    policies: Option<&Bound<'_, PyAny>>,
) -> PyResult<SweepParams> {
    let defaults = SweepParams::default();
    let sizes = |object: Option<&Bound<'_, PyAny>>, name: &str, default: &Vec<u32>| {
        let Some(object) = object else {
            return Ok(default.clone());
        };
        Arg::new(object, name)
            .non_empty_items("a list of int")?
            .iter()
            .map(|item| item.uint::<u32>(1))
            .collect::<PyResult<Vec<u32>>>()
    };
    let policies = match policies {
        None => defaults.policies.clone(),
        Some(object) => {
            let arg = Arg::new(object, "policies");
            sweep_policies(&policy_list(&arg)?).map_err(|e| arg.invalid(&e.0))?
        }
    };
    Ok(SweepParams {
        gpus: sizes(gpus, "gpus", &defaults.gpus)?,
        users: sizes(users, "users", &defaults.users)?,
        seed: seed.or("seed", 1, |a| a.uint(0))?,
        weeks: weeks.or("weeks", 2, |a| a.uint(1))?,
        policies,
        ..defaults
    })
}

/// `gangway.sweep`'s native part: the sweep's cells as records (`SweepRow` fields), in grid
/// order; `gangway.sweep` wraps them in a `SweepTable`. `policies`: the baseline, then the
/// policies compared with it (one alone is compared with ssh); default ssh, full.
#[pyfunction]
#[pyo3(signature = (gpus = None, users = None, seed = Given::Absent, weeks = Given::Absent,
                    policies = None),
       text_signature = "(gpus=None, users=None, seed=1, weeks=2, policies=None)")]
pub fn sweep_records<'py>(
    py: Python<'py>,
    gpus: Option<&Bound<'py, PyAny>>,
    users: Option<&Bound<'py, PyAny>>,
    seed: Given<'py>,
    weeks: Given<'py>,
    policies: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let params = sweep_params(gpus, users, &seed, &weeks, policies)?;
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
#[pyo3(signature = (gpus = None, users = None, seed = Given::Absent, weeks = Given::Absent,
                    policies = None),
       text_signature = "(gpus=None, users=None, seed=1, weeks=2, policies=None)")]
pub fn sweep_grid<'py>(
    gpus: Option<&Bound<'py, PyAny>>,
    users: Option<&Bound<'py, PyAny>>,
    seed: Given<'py>,
    weeks: Given<'py>,
    policies: Option<&Bound<'py, PyAny>>,
) -> PyResult<Vec<(u32, u32)>> {
    Ok(sweep_params(gpus, users, &seed, &weeks, policies)?.grid())
}

/// One cell of `gangway.sweep(...)`, the one at `index` of its grid, run in this thread with
/// the GIL released: its records (one per compared policy), as `sweep_records` gives them.
#[pyfunction]
#[pyo3(signature = (index, gpus = None, users = None, seed = Given::Absent,
                    weeks = Given::Absent, policies = None),
       text_signature = "(index, gpus=None, users=None, seed=1, weeks=2, policies=None)")]
#[allow(clippy::too_many_arguments)]
pub fn sweep_cell<'py>(
    py: Python<'py>,
    index: &Bound<'py, PyAny>,
    gpus: Option<&Bound<'py, PyAny>>,
    users: Option<&Bound<'py, PyAny>>,
    seed: Given<'py>,
    weeks: Given<'py>,
    policies: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let index: usize = Arg::new(index, "index").uint(0)?;
    let params = sweep_params(gpus, users, &seed, &weeks, policies)?;
    let cells = params.grid().len();
    if index >= cells {
        return Err(PyIndexError::new_err(format!(
            "sweep: no cell {index}: the grid has {cells} (0 to {})",
            cells.saturating_sub(1)
        )));
    }
    sweep_rows(py, || run_sweep_cell(&params, index))
}
