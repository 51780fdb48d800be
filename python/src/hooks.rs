//! Python callables as gangway plug-ins: an order key, a node scorer and a victim veto.
//!
//! A [`Plugin`] becomes a `gangway::policy::FnPlugin` whose closures call Python with the GIL
//! taken for the call. A callable that raises (or answers with the wrong type) reports the
//! exception and its traceback as the plug-in's fault (`gangway::policy::report_fault`) and
//! abstains: the plug-in is silenced for the rest of that pass and the tick lists the fault in
//! `plugin_faults` (docs/policies.md, "The engine referees"). Nothing panics and nothing is
//! printed.

use gangway::ClusterConfig;
use gangway::ConfigError;
use gangway::policy::{FnPlugin, Placement, Profile, Veto, report_fault};
use gangway::protocol::ProfileMaker;
use gangway::state::{JobView, NodeView};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::args::{Arg, Given};
use crate::errors::Class;
use crate::type_name;

/// A plug-in whose hooks are Python callables (docs/python.md, "Python hooks").
///
/// `Plugin(name, *, order_key=None, score_node=None, veto_victim=None, tier=0, weight=1.0,
/// partition=None)`:
///
/// - `order_key(job) -> int`: higher first, after the partition tier and before submit time;
/// - `score_node(job, group, node) -> float`: higher is better, at `tier` with `weight`;
/// - `veto_victim(preemptor, victim) -> str | (str, int) | None`: a reason forbids preempting
///   `victim`; with a time (ms) the veto ends then, and a preemptor it held back is retried
///   at that time.
///
/// `job` is the JOB dict as submitted plus `"submit_ms"`; `node` is `{"name", "gpu_model",
/// "gpu_count", "free_gpus", "free_cpus", "free_memory_mib", "labels"}`. A callable that raises is a
/// misbehaving plug-in: the tick completes and reports it in `plugin_faults`. A hook that is not
/// callable raises `GangwayTypeError`, a weight that is not finite `GangwayValueError`, here.
#[pyclass(module = "gangway", frozen)]
pub struct Plugin {
    #[pyo3(get)]
    name: String,
    order_key: Option<Py<PyAny>>,
    score_node: Option<Py<PyAny>>,
    veto_victim: Option<Py<PyAny>>,
    #[pyo3(get)]
    tier: usize,
    #[pyo3(get)]
    weight: f64,
    #[pyo3(get)]
    partition: Option<String>,
}

#[pymethods]
impl Plugin {
    #[new]
    #[pyo3(signature = (name, *, order_key = None, score_node = None, veto_victim = None,
                        tier = Given::Absent, weight = Given::Absent, partition = None),
           text_signature = "(name, *, order_key=None, score_node=None, veto_victim=None, \
                             tier=0, weight=1.0, partition=None)")]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        order_key: Option<Py<PyAny>>,
        score_node: Option<Py<PyAny>>,
        veto_victim: Option<Py<PyAny>>,
        tier: Given<'_>,
        weight: Given<'_>,
        partition: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        fn arg<'py>(object: &Bound<'py, PyAny>, field: &str) -> Arg<'py> {
            Arg::new(object, field).kind("invalid_config")
        }
        let name = arg(name, "name").string()?;
        for (field, hook) in [
            ("order_key", &order_key),
            ("score_node", &score_node),
            ("veto_victim", &veto_victim),
        ] {
            if let Some(hook) = hook
                && !hook.bind(py).is_callable()
            {
                let plain = format!(
                    "{field} must be callable or None, not {}",
                    type_name(hook.bind(py))
                );
                return Err(arg(hook.bind(py), field).refuse(Class::Type, &plain));
            }
        }
        let tier = match &tier {
            Given::Absent => 0,
            Given::Value(object) => arg(object, "tier").uint(0)?,
        };
        let weight = match &weight {
            Given::Absent => 1.0,
            Given::Value(object) => {
                let weight = arg(object, "weight").number()?;
                if !weight.is_finite() {
                    let plain = format!("weight must be a finite number, not {weight}");
                    return Err(arg(object, "weight").refuse(Class::Value, &plain));
                }
                weight
            }
        };
        let partition = partition
            .map(|object| arg(object, "partition").string())
            .transpose()?;
        Ok(Plugin {
            name,
            order_key,
            score_node,
            veto_victim,
            tier,
            weight,
            partition,
        })
    }

    /// The hooks it implements (`order`, `node_score`, `victim_veto`): those given a callable.
    #[getter]
    fn hooks(&self, py: Python<'_>) -> Vec<&'static str> {
        let plugin = self.engine_plugin(py);
        plugin.hooks().iter().map(|h| h.name()).collect()
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!("Plugin({:?}, hooks={:?})", self.name, self.hooks(py))
    }
}

impl Plugin {
    /// The engine's side of the plug-in: an [`FnPlugin`] whose closures call the Python
    /// callables (its hooks are those callables).
    fn engine_plugin(&self, py: Python<'_>) -> FnPlugin {
        let mut plugin = FnPlugin::new(self.name.clone());
        if let Some(f) = self.order_key.as_ref().map(|f| f.clone_ref(py)) {
            plugin = plugin.order_key(move |job, _| {
                Python::attach(|py| {
                    let result = job_dict(py, job)
                        .and_then(|job| f.call1(py, (job,)))
                        .and_then(|key| key.extract::<i64>(py));
                    answer(py, "order_key", result, 0)
                })
            });
        }
        if let Some(f) = self.score_node.as_ref().map(|f| f.clone_ref(py)) {
            plugin = plugin.score_node(move |job, group, node, _| {
                Python::attach(|py| {
                    let result = job_dict(py, job)
                        .and_then(|job| Ok((job, node_dict(py, node)?)))
                        .and_then(|(job, node)| f.call1(py, (job, group, node)))
                        .and_then(|score| score.extract::<f64>(py));
                    answer(py, "score_node", result, 0.0)
                })
            });
        }
        if let Some(f) = self.veto_victim.as_ref().map(|f| f.clone_ref(py)) {
            plugin = plugin.veto_victim(move |preemptor, victim, _| {
                Python::attach(|py| {
                    let result = job_dict(py, preemptor)
                        .and_then(|p| Ok((p, job_dict(py, victim)?)))
                        .and_then(|(p, v)| f.call1(py, (p, v)))
                        .and_then(|answer| answer.extract::<Option<PyVeto>>(py));
                    answer(py, "veto_victim", result, None).map(|veto| match veto {
                        PyVeto::Reason(reason) => Veto::new(reason),
                        PyVeto::Until(reason, until_ms) => Veto::new(reason).until(until_ms),
                    })
                })
            });
        }
        plugin
    }
}

/// The job as the hooks see it: its JOB dict plus `submit_ms`.
fn job_dict<'py>(py: Python<'py>, job: JobView<'_>) -> PyResult<Bound<'py, PyAny>> {
    let dict = pythonize::pythonize(py, job.spec())?;
    dict.set_item("submit_ms", job.submit_ms())?;
    Ok(dict)
}

fn node_dict<'py>(py: Python<'py>, node: NodeView<'_>) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("name", node.name())?;
    dict.set_item("gpu_model", node.gpu_model())?;
    dict.set_item("gpu_count", node.gpu_count())?;
    dict.set_item("free_gpus", node.free_gpus().collect::<Vec<_>>())?;
    dict.set_item("free_cpus", node.free_cpus().as_f64())?;
    dict.set_item("free_memory_mib", node.free_memory_mib())?;
    let labels = PyDict::new(py);
    for (key, value) in node.labels() {
        labels.set_item(key, value)?;
    }
    dict.set_item("labels", labels)?;
    Ok(dict)
}

/// What a Python veto answers: a reason, or a reason and the time the veto ends.
#[derive(FromPyObject)]
enum PyVeto {
    Reason(String),
    Until(String, u64),
}

/// The answer of a hook call; when it raised (or answered the wrong type), `abstain`, with
/// the exception and its traceback reported as the plug-in's fault (the engine silences the
/// plug-in for the rest of the pass and lists the fault in the tick's `plugin_faults`). Nothing
/// panics and nothing is printed.
fn answer<T>(py: Python<'_>, hook: &str, result: PyResult<T>, abstain: T) -> T {
    match result {
        Ok(value) => value,
        Err(error) => {
            report_fault(format!(
                "Python {hook} raised {}",
                traceback_text(py, &error)
            ));
            abstain
        }
    }
}

/// The exception as Python prints it: its traceback (when it has one) and its last line,
/// `Type: message`; the exception's repr when the traceback module fails.
fn traceback_text(py: Python<'_>, error: &PyErr) -> String {
    let formatted = py.import("traceback").and_then(|module| {
        let lines = module.call_method1(
            "format_exception",
            (error.get_type(py), error.value(py), error.traceback(py)),
        )?;
        lines.extract::<Vec<String>>()
    });
    match formatted {
        Ok(lines) => lines.concat().trim_end().to_string(),
        Err(_) => error
            .value(py)
            .repr()
            .map(|r| r.to_string())
            .unwrap_or_else(|_| error.to_string()),
    }
}

/// The profile maker of a scheduler with Python plug-ins: the configuration's profile (its
/// `policy.plugins`, else the built-in one) followed by the Python plug-ins, in order.
pub fn profile_maker(py: Python<'_>, plugins: &[Py<Plugin>]) -> ProfileMaker {
    let listed: Vec<(FnPlugin, Placement)> = plugins
        .iter()
        .map(|plugin| {
            let p = plugin.get();
            let placement = Placement {
                partition: p.partition.clone(),
                tier: p.tier,
                weight: p.weight,
            };
            (p.engine_plugin(py), placement)
        })
        .collect();
    Box::new(move |config: &ClusterConfig| {
        let mut builder = Profile::from_config(config)?.into_builder();
        for (plugin, placement) in &listed {
            builder = builder.boxed(Box::new(plugin.clone()), placement.clone());
        }
        builder
            .build()
            .map_err(|e| ConfigError::new("plugins", e.to_string()))
    })
}
