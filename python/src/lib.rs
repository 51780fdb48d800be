//! Python bindings of gangway: `import gangway`.
//!
//! Every `Scheduler` method builds the shim's request object (docs/protocol.md) from its
//! arguments and hands it to [`Shim::handle_request`], the very request handling and error
//! mapping `gangway shim` runs; a refused request becomes a `gangway.GangwayError` with the
//! shim's error kind, message and field path. Arguments become JSON values as a JSON parser
//! would read the `json.dumps` of them ([`json_value`]); answers go back to Python with
//! `pythonize`. The GIL is released while the shim works, behind a mutex that serialises calls
//! from several Python threads.

use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use gangway::protocol::{Shim, WireError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

mod args;
mod errors;
mod hooks;
mod simulate;

use args::{Arg, Given};
use errors::{Class, GangwayError, gangway_error, wire_error};
use hooks::{Plugin, profile_maker};

/// What a Python argument may hold: what `json.dumps` writes, except that dict keys must be
/// strings (`json.dumps` would turn other keys into strings silently).
const JSON_SHAPED: &str = "dicts with str keys, lists, tuples, str, int, float, bool, None";

/// The JSON value of `object`, the argument `name`: the value a JSON parser reads from the
/// `json.dumps` of it, so that a request is the very request `gangway shim` would get. An int
/// beyond 64 bits becomes the nearest double, as JSON parsers (the shim's included) read such
/// a number, and is then judged by the field that gets it. A value no JSON text holds (a set,
/// a NaN or infinity, an int beyond the doubles, a dict key that is not a string, a string
/// with a lone surrogate, any other object) refuses the request with `parse`, naming its path:
/// a `TypeError` for an object of another type, a `ValueError` for a value of a JSON type that
/// JSON cannot hold.
fn to_value(py: Python<'_>, object: &Bound<'_, PyAny>, name: &str) -> PyResult<Value> {
    json_value(object, name).map_err(|(path, class, what)| {
        let plain = format!("{what} is not JSON-shaped ({JSON_SHAPED})");
        let message = format!("{path}: {plain}");
        errors::raise(py, class, "parse", &message, &plain, Some(&path))
    })
}

/// [`to_value`]'s walk: the value at `path`, or the path of the first value that is not
/// JSON-shaped, its class of error and what it is.
fn json_value(object: &Bound<'_, PyAny>, path: &str) -> Result<Value, (String, Class, String)> {
    let refuse = |class: Class, what: String| Err((path.to_string(), class, what));
    if object.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(flag) = object.cast::<PyBool>() {
        return Ok(Value::Bool(flag.is_true()));
    }
    if let Ok(int) = object.cast::<PyInt>() {
        if let Ok(v) = int.extract::<u64>() {
            return Ok(Value::from(v));
        }
        if let Ok(v) = int.extract::<i64>() {
            return Ok(Value::from(v));
        }
        return match int.extract::<f64>().ok().and_then(Number::from_f64) {
            Some(n) => Ok(Value::Number(n)),
            None => refuse(
                Class::Value,
                "an int beyond the range of doubles".to_string(),
            ),
        };
    }
    if let Ok(float) = object.cast::<PyFloat>() {
        let v = float.value();
        return match Number::from_f64(v) {
            Some(n) => Ok(Value::Number(n)),
            None => refuse(Class::Value, format!("the float {v}")),
        };
    }
    if let Ok(text) = object.cast::<PyString>() {
        return match text.to_cow() {
            Ok(text) => Ok(Value::String(text.to_string())),
            Err(_) => refuse(
                Class::Value,
                "a str that is not valid Unicode (a lone surrogate)".to_string(),
            ),
        };
    }
    if let Ok(dict) = object.cast::<PyDict>() {
        let mut map = Map::new();
        for (key, item) in dict.iter() {
            let Ok(key) = key
                .cast::<PyString>()
                .map(|k| k.to_cow().map(|k| k.into_owned()))
            else {
                return refuse(Class::Type, format!("a dict with the key {}", repr(&key)));
            };
            let Ok(key) = key else {
                return refuse(
                    Class::Value,
                    "a dict key that is not valid Unicode".to_string(),
                );
            };
            let item = json_value(&item, &format!("{path}.{key}"))?;
            map.insert(key, item);
        }
        return Ok(Value::Object(map));
    }
    let items = if let Ok(list) = object.cast::<PyList>() {
        list.iter().collect::<Vec<_>>()
    } else if let Ok(tuple) = object.cast::<PyTuple>() {
        tuple.iter().collect()
    } else {
        return refuse(Class::Type, format!("a {}", type_name(object)));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| json_value(item, &format!("{path}[{i}]")))
        .collect::<Result<Vec<_>, _>>()
        .map(Value::Array)
}

fn repr(object: &Bound<'_, PyAny>) -> String {
    object
        .repr()
        .map_or_else(|_| "?".to_string(), |r| r.to_string())
}

fn type_name(object: &Bound<'_, PyAny>) -> String {
    object
        .get_type()
        .name()
        .map_or_else(|_| "?".to_string(), |n| n.to_string())
}

fn to_python<'py>(py: Python<'py>, response: &Value) -> PyResult<Bound<'py, PyAny>> {
    pythonize::pythonize(py, response).map_err(|e| {
        let message = format!("cannot convert the response: {e}");
        gangway_error(py, "internal", &message, None)
    })
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
    /// A scheduler, not yet configured, with the `plugins=` given (a list of `Plugin`).
    fn with_plugins(py: Python<'_>, plugins: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let plugins = match plugins {
            Some(object) => Arg::new(object, "plugins").plugins()?,
            None => Vec::new(),
        };
        let shim = if plugins.is_empty() {
            Shim::default()
        } else {
            Shim::with_profile_maker(profile_maker(py, &plugins))
        };
        Ok(Scheduler {
            shim: Mutex::new(shim),
            plugins,
            timings: Mutex::new(Timings::default()),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Shim> {
        // A panic inside the shim never leaves its state half-changed (plug-in panics are caught
        // inside the pass), so a poisoned lock is still usable.
        self.shim.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs one request with the GIL released; the response, converted to Python. `strict`
    /// (a tick's): a response that rejects an event is an error, and the state goes back to
    /// what it was before the request.
    fn request<'py>(
        &self,
        py: Python<'py>,
        request: Value,
        strict: bool,
        started: Instant,
    ) -> PyResult<Bound<'py, PyAny>> {
        let to_rust_ns = nanos(started);
        let handling = Instant::now();
        let answer = py.detach(|| {
            let mut shim = self.lock();
            let before = if strict {
                let mut snapshot = handle(&mut shim, request_object("snapshot", Vec::new()))?;
                let state = snapshot.get_mut("state").map(Value::take).ok_or_else(|| {
                    WireError::new("internal", "a snapshot response without a state", None)
                })?;
                Some(state)
            } else {
                None
            };
            let response = handle(&mut shim, request)?;
            if let Some(state) = before
                && let Some(rejection) = first_rejection(&response)
            {
                handle(&mut shim, request_object("restore", vec![("state", state)]))?;
                return Err(rejection);
            }
            Ok(response)
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

/// The shim's response to `request` as a JSON value: its maps have string keys, exactly as in
/// the shim's JSON line (a snapshot's maps keyed by numbers).
fn handle(shim: &mut Shim, request: Value) -> Result<Value, WireError> {
    let response = shim.handle_request(request)?;
    serde_json::to_value(&response)
        .map_err(|e| WireError::new("internal", format!("cannot serialize: {e}"), None))
}

/// The error of a tick response's first rejected event; its path is the event's
/// (`events[2]`) when the rejection names no field.
fn first_rejection(response: &Value) -> Option<WireError> {
    let first = response.get("rejected")?.get(0)?;
    let error = first.get("error")?;
    let text = |key: &str| error.get(key).and_then(Value::as_str);
    let path = match text("path") {
        Some(path) => path.to_string(),
        None => format!("events[{}]", first.get("index")?),
    };
    Some(WireError::new(text("kind")?, text("message")?, Some(path)))
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
        plugins: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let started = Instant::now();
        let cluster = to_value(py, cluster, "cluster")?;
        let scheduler = Scheduler::with_plugins(py, plugins)?;
        scheduler.request(
            py,
            request_object("configure", vec![("cluster", cluster)]),
            false,
            started,
        )?;
        Ok(scheduler)
    }

    /// Applies `events` (a list of event dicts) at `at_ms` and runs one scheduling pass.
    ///
    /// Returns the shim's tick response object: `{"ok": True, "at_ms", "decisions",
    /// "rejected", "next_wakeup_ms"}` (and `"plugin_faults"` when a plug-in failed). A
    /// malformed or refused event is listed in `rejected`; a tick earlier than the last one
    /// raises `GangwayValueError` (`time_went_backwards`), one beyond 2**53 - 1 ms
    /// `GangwayValueError` (`parse`, naming `at_ms`), and neither changes anything. With
    /// `strict=True` a rejected event raises too (the first one's kind and path; the path of
    /// the event where the rejection names no field) and the tick changes nothing.
    #[pyo3(signature = (at_ms, events = None, *, strict = Given::Absent),
           text_signature = "($self, at_ms, events=None, *, strict=False)")]
    fn tick<'py>(
        &self,
        py: Python<'py>,
        at_ms: &Bound<'py, PyAny>,
        events: Option<&Bound<'py, PyAny>>,
        strict: Given<'py>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let started = Instant::now();
        let strict = strict.or("strict", false, Arg::boolean)?;
        let at_ms = to_value(py, at_ms, "at_ms")?;
        let events = match events {
            Some(events) => to_value(py, events, "events")?,
            None => Value::Array(Vec::new()),
        };
        let request = request_object("tick", vec![("at_ms", at_ms), ("events", events)]);
        self.request(py, request, strict, started)
    }

    /// Why each pending job waits and where each running job runs: the shim's explain response
    /// (`{"ok": True, "pending", "running"}`; with `detail=True` also `"shares"`,
    /// `"priorities"` and, where a queue uses admission fair sharing, `"admission_usage"`).
    /// `detail` must be a bool (None: False), as the shim's `"detail"`.
    #[pyo3(signature = (at_ms = None, detail = None))]
    fn explain<'py>(
        &self,
        py: Python<'py>,
        at_ms: Option<&Bound<'py, PyAny>>,
        detail: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let started = Instant::now();
        let at_ms = match at_ms {
            Some(at) => to_value(py, at, "at_ms")?,
            None => Value::Null,
        };
        let mut fields = vec![("at_ms", at_ms)];
        if let Some(detail) = detail {
            fields.push(("detail", to_value(py, detail, "detail")?));
        }
        let request = request_object("explain", fields);
        self.request(py, request, false, started)
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
        self.request(
            py,
            request_object("what_if", vec![("job", job)]),
            false,
            started,
        )
    }

    /// The whole state as a JSON-shaped dict (the shim's snapshot `"state"`), for
    /// `Scheduler.restore`. Python plug-ins are not part of it.
    fn snapshot<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let started = Instant::now();
        let response = self.request(py, request_object("snapshot", Vec::new()), false, started)?;
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
        plugins: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Scheduler> {
        let started = Instant::now();
        let state = to_value(py, state, "state")?;
        let scheduler = Scheduler::with_plugins(py, plugins)?;
        scheduler.request(
            py,
            request_object("restore", vec![("state", state)]),
            false,
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
            false,
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
    m.add("GangwayTypeError", errors::type_error_class(py)?)?;
    m.add("GangwayValueError", errors::value_error_class(py)?)?;
    m.add("PROTOCOL_VERSION", PROTOCOL_VERSION)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<Scheduler>()?;
    m.add_class::<Plugin>()?;
    m.add_function(wrap_pyfunction!(simulate::simulate, m)?)?;
    m.add_function(wrap_pyfunction!(simulate::sweep_records, m)?)?;
    m.add_function(wrap_pyfunction!(simulate::sweep_grid, m)?)?;
    m.add_function(wrap_pyfunction!(simulate::sweep_cell, m)?)?;
    m.add_function(wrap_pyfunction!(args::wrong_type_error, m)?)?;
    m.add_function(wrap_pyfunction!(args::invalid_error, m)?)?;
    m.add_function(wrap_pyfunction!(args::uint_argument, m)?)?;
    m.add("POLICIES", gangway_sim::PolicyPreset::names().to_vec())?;
    Ok(())
}
