//! The exceptions the bindings raise: `gangway.GangwayError`, and its `TypeError` and
//! `ValueError` subclasses, with `.kind`, `.path` (a tuple), `.message` (the shim's) and a
//! plain `str()` (docs/python.md, "Errors").

use gangway::protocol::WireError;
use pyo3::exceptions::{PyException, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

pyo3::create_exception!(
    gangway,
    GangwayError,
    PyException,
    "A request the shim would refuse with `{\"ok\": false, \"error\": {...}}`.\n\n\
     `.kind` is the shim's error kind (`parse`, `invalid_config`, `time_went_backwards`, \
     `invalid_state`, `internal`, an event error kind such as `invalid` or `duplicate_job`, or \
     `simulation`), `.path` the field it is about as a tuple of dict keys and list positions \
     (`(\"cluster\", \"nodes\", 1, \"gpus\", \"count\")`; `()` when it is about no one field), \
     `.message` the shim's own message, and `str()` what was wrong, in plain words. Ill-typed \
     arguments raise `GangwayTypeError`, invalid values `GangwayValueError`. The scheduler's \
     state is unchanged."
);

/// Which Python exception an error is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// An argument of the wrong type: `GangwayTypeError`.
    Type,
    /// An argument of the right type whose value is refused: `GangwayValueError`.
    Value,
    /// Anything else (a failed simulation, an internal error): `GangwayError`.
    Other,
}

impl Class {
    /// The class of an error of `kind` whose shim message is `message`: serde's "invalid
    /// type" is a type error; every other kind about the arguments a value error.
    fn of(kind: &str, message: &str) -> Class {
        match kind {
            "internal" | "simulation" | "not_configured" | "line_too_long" => Class::Other,
            _ if message.contains("invalid type: ") => Class::Type,
            _ => Class::Value,
        }
    }
}

static TYPE_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static VALUE_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// `class name(GangwayError, base)`, made once.
fn subclass<'py>(
    py: Python<'py>,
    cell: &'static PyOnceLock<Py<PyType>>,
    name: &str,
    base: Bound<'py, PyType>,
    doc: &str,
) -> PyResult<Bound<'py, PyType>> {
    let class = cell.get_or_try_init(py, || {
        let namespace = PyDict::new(py);
        namespace.set_item("__module__", "gangway")?;
        namespace.set_item("__doc__", doc)?;
        let bases = (py.get_type::<GangwayError>(), base);
        let made = py.get_type::<PyType>().call1((name, bases, namespace))?;
        Ok::<_, PyErr>(made.cast_into::<PyType>()?.unbind())
    })?;
    Ok(class.bind(py).clone())
}

/// `gangway.GangwayTypeError(GangwayError, TypeError)`.
pub fn type_error_class(py: Python<'_>) -> PyResult<Bound<'_, PyType>> {
    subclass(
        py,
        &TYPE_ERROR,
        "GangwayTypeError",
        py.get_type::<PyTypeError>(),
        "A GangwayError about an argument of the wrong type (a str where an int goes).",
    )
}

/// `gangway.GangwayValueError(GangwayError, ValueError)`.
pub fn value_error_class(py: Python<'_>) -> PyResult<Bound<'_, PyType>> {
    subclass(
        py,
        &VALUE_ERROR,
        "GangwayValueError",
        py.get_type::<PyValueError>(),
        "A GangwayError about a value its field does not take (a negative time, a bad cluster).",
    )
}

/// A `GangwayError` of `kind` with the shim's `message` about the field at `path` (the wire
/// path, `events[0].job`), its class judged from the kind and the message.
pub fn gangway_error(py: Python<'_>, kind: &str, message: &str, path: Option<&str>) -> PyErr {
    let plain = plain_message(message, path);
    raise(py, Class::of(kind, message), kind, message, &plain, path)
}

pub fn wire_error(py: Python<'_>, error: WireError) -> PyErr {
    gangway_error(py, &error.kind, &error.message, error.path.as_deref())
}

/// The exception of `class` with `.kind`, `.message`, `.path` (a tuple) and `plain` as its
/// only argument, which `str()` shows.
pub fn raise(
    py: Python<'_>,
    class: Class,
    kind: &str,
    message: &str,
    plain: &str,
    path: Option<&str>,
) -> PyErr {
    let made = (|| {
        let class = match class {
            Class::Type => type_error_class(py)?,
            Class::Value => value_error_class(py)?,
            Class::Other => py.get_type::<GangwayError>(),
        };
        let value = class.call1((plain,))?;
        value.setattr("kind", kind)?;
        value.setattr("message", message)?;
        value.setattr("path", path_tuple(py, path)?)?;
        Ok::<_, PyErr>(PyErr::from_value(value))
    })();
    // Making an exception fails only when Python cannot allocate: raise that instead.
    made.unwrap_or_else(|e| e)
}

/// The wire path as a tuple: dict keys as str, list positions as int (`events[0].job` is
/// `("events", 0, "job")`). A key holding `.` or ending in `[n]` reads as the wire path would;
/// the wire path is the tuple's keys joined by dots, each position in brackets.
fn path_tuple<'py>(py: Python<'py>, path: Option<&str>) -> PyResult<Bound<'py, PyTuple>> {
    let mut parts: Vec<Bound<'py, PyAny>> = Vec::new();
    for (i, part) in path.into_iter().flat_map(|p| p.split('.')).enumerate() {
        let (key, indices) = split_indices(part);
        // Only a path's first part may start with a position (`[0].x`); an empty key after
        // a dot is a key.
        if !key.is_empty() || i > 0 || indices.is_empty() {
            parts.push(key.into_pyobject(py)?.into_any());
        }
        for index in indices {
            parts.push(index.into_pyobject(py)?.into_any());
        }
    }
    PyTuple::new(py, parts)
}

/// `groups[0][1]` as `("groups", [0, 1])`.
fn split_indices(part: &str) -> (&str, Vec<u64>) {
    let mut key = part;
    let mut indices = Vec::new();
    while let Some(inner) = key.strip_suffix(']')
        && let Some(open) = inner.rfind('[')
        && let Ok(index) = inner[open + 1..].parse::<u64>()
        && inner[open + 1..].bytes().all(|b| b.is_ascii_digit())
    {
        indices.push(index);
        key = &inner[..open];
    }
    indices.reverse();
    (key, indices)
}

/// The shim's message in plain words: without the request's and the field's names in front
/// (they are in the exception's type and `.path`), serde's type names said in Python's.
fn plain_message(message: &str, path: Option<&str>) -> String {
    let text = message
        .strip_prefix("not a known request: ")
        .unwrap_or(message);
    let text = path
        .and_then(|path| text.strip_prefix(path))
        .and_then(|rest| rest.strip_prefix(": "))
        .unwrap_or(text);
    for prefix in ["invalid type: ", "invalid value: "] {
        if let Some(rest) = text.strip_prefix(prefix)
            && let Some((got, expected)) = rest.split_once(", expected ")
        {
            return format!(
                "expected {}, got {}",
                expected_words(expected),
                got_words(got)
            );
        }
    }
    // Serde quotes names in backticks (``unknown field `x` ``); Python in single quotes.
    text.replace('`', "'")
}

/// What serde expected (`u64`, `struct JobSpec`), in Python's words.
fn expected_words(expected: &str) -> String {
    let words = match expected {
        "u8" | "u16" | "u32" | "u64" | "u128" | "usize" => "a non-negative integer",
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => "an integer",
        "f32" | "f64" => "a number",
        "a string" | "a borrowed string" | "a char" => "a str",
        "a boolean" => "a bool",
        "a sequence" => "a list",
        "a map" => "a dict",
        _ if expected.starts_with("internally tagged enum ") => "a dict with a \"type\"",
        _ if expected.starts_with("struct ") || expected.starts_with("struct variant ") => "a dict",
        _ if expected.starts_with("tuple struct ") || expected.starts_with("a tuple") => "a list",
        _ if expected.starts_with("enum ") || expected.starts_with("variant identifier") => {
            "one of the names this field takes"
        }
        _ => expected,
    };
    words.to_string()
}

/// What serde got (`string "0"`, ``integer `-1` ``), in Python's words.
fn got_words(got: &str) -> String {
    let quoted = |rest: &str| rest.trim_matches('`').to_string();
    if let Some(rest) = got.strip_prefix("integer ") {
        format!("the int {}", quoted(rest))
    } else if let Some(rest) = got.strip_prefix("floating point ") {
        format!("the float {}", quoted(rest))
    } else if let Some(rest) = got.strip_prefix("string ") {
        format!("the str {rest}")
    } else if let Some(rest) = got.strip_prefix("boolean ") {
        match quoted(rest).as_str() {
            "true" => "True".to_string(),
            _ => "False".to_string(),
        }
    } else {
        match got {
            "null" | "unit value" => "None",
            "map" => "a dict",
            "sequence" => "a list",
            other => other,
        }
        .to_string()
    }
}
