//! Python bindings of gangway: `import gangway`.
//!
//! Every `Scheduler` method builds the shim's request object (docs/protocol.md) from its
//! arguments and hands it to [`Shim::handle_request`], the very request handling and error
//! mapping `gangway shim` runs; a refused request becomes a `gangway.GangwayError` with the
//! shim's error kind and message. Python objects are converted to and from serde values with
//! `pythonize`; the GIL is released while the shim works, behind a mutex that serialises calls
//! from several Python threads.

use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use gangway::protocol::{Shim, WireError};
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use serde_json::{Map, Value};

mod hooks;
mod simulate;

use hooks::{Plugin, profile_maker};

pyo3::create_exception!(
    gangway,
    GangwayError,
    PyException,
    "A request the shim would refuse with `{\"ok\": false, \"error\": {...}}`.\n\n\
     `.kind` is the shim's error kind (`parse`, `not_configured`, `invalid_config`, \
     `time_went_backwards`, `invalid_state`, `internal`, or an event error kind such as \
     `duplicate_job` for `what_if`), `.message` says what was wrong and where. The scheduler's \
     state is unchanged."
);

/// A `GangwayError` of `kind` with `message` (`.kind`, `.message`, and both in `args`).
fn gangway_error(py: Python<'_>, kind: &str, message: &str) -> PyErr {
    let error = GangwayError::new_err((kind.to_string(), message.to_string()));
    let value = error.value(py);
    // Setting attributes on a fresh exception instance cannot fail; ignore it if it does.
    let _ = value.setattr("kind", kind);
    let _ = value.setattr("message", message);
    error
}

fn wire_error(py: Python<'_>, error: WireError) -> PyErr {
    gangway_error(py, &error.kind, &error.message)
}

/// A Python object that is not JSON-shaped (a set, a NaN, an object) is refused as the shim
/// refuses a line that is not JSON.
fn to_value(py: Python<'_>, object: &Bound<'_, PyAny>, what: &str) -> PyResult<Value> {
    pythonize::depythonize::<Value>(object).map_err(|e| {
        gangway_error(
            py,
            "parse",
            &format!("{what} is not JSON-shaped (dicts, lists, str, int, float, bool, None): {e}"),
        )
    })
}

fn to_python<'py>(py: Python<'py>, response: &Value) -> PyResult<Bound<'py, PyAny>> {
    pythonize::pythonize(py, response)
        .map_err(|e| gangway_error(py, "internal", &format!("cannot convert the response: {e}")))
}

/// Nanoseconds of the last call's three steps, for the benchmark script.
#[derive(Clone, Copy, Default)]
struct Timings {
    to_rust_ns: u64,
    handle_ns: u64,
    to_python_ns: u64,
}

fn nanos(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// A gangway scheduler: the shim's protocol as methods (docs/python.md).
///
/// `Scheduler(cluster, plugins=None)` configures it with a CLUSTER dict, as the shim's
/// `{"op": "configure", "cluster": CLUSTER}`; a bad cluster raises `GangwayError` of kind
/// `invalid_config`. `plugins` are `gangway.Plugin` hooks added to the configuration's profile.
/// Methods may be called from several threads: they wait for each other.
#[pyclass(module = "gangway", frozen)]
struct Scheduler {
    shim: Mutex<Shim>,
    plugins: Vec<Py<Plugin>>,
    timings: Mutex<Timings>,
}

impl Scheduler {
    fn with_plugins(py: Python<'_>, plugins: Option<Vec<Py<Plugin>>>) -> Self {
        let plugins = plugins.unwrap_or_default();
        let shim = if plugins.is_empty() {
            Shim::default()
        } else {
            Shim::with_profile_maker(profile_maker(py, &plugins))
        };
        Scheduler {
            shim: Mutex::new(shim),
            plugins,
            timings: Mutex::new(Timings::default()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Shim> {
        // A panic inside the shim never leaves its state half-changed (plug-in panics are caught
        // inside the pass), so a poisoned lock is still usable.
        self.shim.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs one request with the GIL released; the response, converted to Python.
    fn request<'py>(
        &self,
        py: Python<'py>,
        request: Value,
        started: Instant,
    ) -> PyResult<Bound<'py, PyAny>> {
        let to_rust_ns = nanos(started);
        let handling = Instant::now();
        // The response becomes a JSON value with the GIL released: its maps then have string
        // keys, exactly as in the shim's JSON line (a snapshot's maps keyed by numbers).
        let answer = py.detach(|| {
            let response = self.lock().handle_request(request)?;
            serde_json::to_value(&response).map_err(|e| WireError {
                kind: "internal".to_string(),
                message: format!("cannot serialize: {e}"),
            })
        });
        let handle_ns = nanos(handling);
        let converting = Instant::now();
        let result = match answer {
            Ok(response) => to_python(py, &response),
            Err(error) => Err(wire_error(py, error)),
        };
        *self.timings.lock().unwrap_or_else(|e| e.into_inner()) = Timings {
            to_rust_ns,
            handle_ns,
            to_python_ns: nanos(converting),
        };
        result
    }
}

fn request_object(op: &str, fields: Vec<(&str, Value)>) -> Value {
    let mut map = Map::with_capacity(fields.len() + 1);
    map.insert("op".to_string(), Value::String(op.to_string()));
    for (key, value) in fields {
        map.insert(key.to_string(), value);
    }
    Value::Object(map)
}

#[pymethods]
impl Scheduler {
    #[new]
    #[pyo3(signature = (cluster, plugins = None))]
    fn new(
        py: Python<'_>,
        cluster: &Bound<'_, PyAny>,
        plugins: Option<Vec<Py<Plugin>>>,
    ) -> PyResult<Self> {
        let started = Instant::now();
        let cluster = to_value(py, cluster, "cluster")?;
        let scheduler = Scheduler::with_plugins(py, plugins);
        scheduler.request(
            py,
            request_object("configure", vec![("cluster", cluster)]),
            started,
        )?;
        Ok(scheduler)
    }

    /// Applies `events` (a list of event dicts) at `at_ms` and runs one scheduling pass.
    ///
    /// Returns the shim's tick response object: `{"ok": True, "at_ms", "decisions",
    /// "rejected", "next_wakeup_ms"}` (and `"plugin_faults"` when a plug-in failed). A
    /// malformed or refused event is listed in `rejected`; a tick earlier than the last one
    /// raises `GangwayError` (`time_went_backwards`), one beyond 2**53 - 1 ms `GangwayError`
    /// (`parse`, naming `at_ms`), and neither changes anything.
    #[pyo3(signature = (at_ms, events = None))]
    fn tick<'py>(
        &self,
        py: Python<'py>,
        at_ms: &Bound<'py, PyAny>,
        events: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let started = Instant::now();
        let at_ms = to_value(py, at_ms, "at_ms")?;
        let events = match events {
            Some(events) => to_value(py, events, "events")?,
            None => Value::Array(Vec::new()),
        };
        let request = request_object("tick", vec![("at_ms", at_ms), ("events", events)]);
        self.request(py, request, started)
    }

    /// Why each pending job waits and where each running job runs: the shim's explain response
    /// (`{"ok": True, "pending", "running"}`; with `detail=True` also `"shares"`,
    /// `"priorities"` and, where a queue uses admission fair sharing, `"admission_usage"`).
    #[pyo3(signature = (at_ms = None, detail = false))]
    fn explain<'py>(
        &self,
        py: Python<'py>,
        at_ms: Option<&Bound<'py, PyAny>>,
        detail: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let started = Instant::now();
        let at_ms = match at_ms {
            Some(at) => to_value(py, at, "at_ms")?,
            None => Value::Null,
        };
        let request = request_object(
            "explain",
            vec![("at_ms", at_ms), ("detail", Value::Bool(detail))],
        );
        self.request(py, request, started)
    }

    /// When and where `job` (a JOB dict) would start if submitted now, changing nothing:
    /// `{"ok": True, "start_ms", "placement"}`. A job its submit would reject raises
    /// `GangwayError` with the event error's kind.
    fn what_if<'py>(
        &self,
        py: Python<'py>,
        job: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let started = Instant::now();
        let job = to_value(py, job, "job")?;
        self.request(py, request_object("what_if", vec![("job", job)]), started)
    }

    /// The whole state as a JSON-shaped dict (the shim's snapshot `"state"`), for
    /// `Scheduler.restore`. Python plug-ins are not part of it.
    fn snapshot<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let started = Instant::now();
        let response = self.request(py, request_object("snapshot", Vec::new()), started)?;
        response.get_item("state")
    }

    /// A scheduler restored from `snapshot()`'s state, continuing with exactly the decisions
    /// the original would make. `plugins` must be the hooks the original was built with (they
    /// are not in the snapshot). A bad state raises `GangwayError` (`invalid_state`).
    #[staticmethod]
    #[pyo3(signature = (state, plugins = None))]
    fn restore(
        py: Python<'_>,
        state: &Bound<'_, PyAny>,
        plugins: Option<Vec<Py<Plugin>>>,
    ) -> PyResult<Scheduler> {
        let started = Instant::now();
        let state = to_value(py, state, "state")?;
        let scheduler = Scheduler::with_plugins(py, plugins);
        scheduler.request(
            py,
            request_object("restore", vec![("state", state)]),
            started,
        )?;
        Ok(scheduler)
    }

    /// Replaces partitions, cohorts, queues, accounts, QoS and policy from a CLUSTER dict,
    /// keeping nodes and jobs; raises `GangwayError` (`invalid_config`) and changes nothing
    /// when the new configuration does not fit.
    fn reconfigure(&self, py: Python<'_>, cluster: &Bound<'_, PyAny>) -> PyResult<()> {
        let started = Instant::now();
        let cluster = to_value(py, cluster, "cluster")?;
        self.request(
            py,
            request_object("reconfigure", vec![("cluster", cluster)]),
            started,
        )?;
        Ok(())
    }

    /// The Python plug-ins this scheduler was built with.
    #[getter]
    fn plugins<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.plugins.iter().map(|p| p.clone_ref(py)))
    }

    /// Nanoseconds the last call spent converting its arguments from Python (`to_rust_ns`), in
    /// the shim with the GIL released (`handle_ns`), and converting the answer back
    /// (`to_python_ns`). For benchmarks.
    fn _last_timings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let t = *self.timings.lock().unwrap_or_else(|e| e.into_inner());
        let dict = PyDict::new(py);
        dict.set_item("to_rust_ns", t.to_rust_ns)?;
        dict.set_item("handle_ns", t.handle_ns)?;
        dict.set_item("to_python_ns", t.to_python_ns)?;
        Ok(dict)
    }
}

/// The protocol version the shim's `configure` answers with.
const PROTOCOL_VERSION: u32 = gangway::protocol::PROTOCOL_VERSION;

#[pymodule]
fn _gangway(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("GangwayError", py.get_type::<GangwayError>())?;
    m.add("PROTOCOL_VERSION", PROTOCOL_VERSION)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<Scheduler>()?;
    m.add_class::<Plugin>()?;
    m.add_function(wrap_pyfunction!(simulate::simulate, m)?)?;
    m.add_function(wrap_pyfunction!(simulate::sweep_records, m)?)?;
    m.add("POLICIES", gangway_sim::PolicyPreset::names().to_vec())?;
    Ok(())
}
