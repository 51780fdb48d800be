//! The arguments the shim never sees (`simulate`'s, the sweeps', `Plugin`'s, `plugins=`,
//! `strict=`), read from Python objects: a wrong type raises `GangwayTypeError`, a refused value
//! `GangwayValueError`, each with the argument's `.path` and a message in Python's words, instead
//! of PyO3's own extraction errors (``Can't extract `str` to `Vec` ``, `OverflowError`).

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::errors::{self, Class};
use crate::hooks::Plugin;
use crate::type_name;

/// The error kind of an argument that is not part of a shim request.
pub const INVALID_ARGUMENT: &str = "invalid_argument";

/// An argument as the caller gave it, or [`Given::Absent`] when they left it out, so that its
/// default applies; a `None` given is a value like any other (refused where None is not one).
pub enum Given<'py> {
    Absent,
    Value(Bound<'py, PyAny>),
}

impl<'a, 'py> FromPyObject<'a, 'py> for Given<'py> {
    type Error = PyErr;

    fn extract(object: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        Ok(Given::Value(object.to_owned()))
    }
}

impl<'py> Given<'py> {
    /// The argument `name` read by `read`, or `default` when it was left out.
    pub fn or<T>(
        &self,
        name: &str,
        default: T,
        read: impl FnOnce(&Arg<'py>) -> PyResult<T>,
    ) -> PyResult<T> {
        match self {
            Given::Absent => Ok(default),
            Given::Value(object) => read(&Arg::new(object, name)),
        }
    }
}

/// The value given for an argument, with its path (`policies`, `gpus[1]`) and the error kind
/// its refusals have.
pub struct Arg<'py> {
    object: Bound<'py, PyAny>,
    path: String,
    kind: &'static str,
}

impl<'py> Arg<'py> {
    /// The argument `path` holding `object`, refused with kind `invalid_argument`.
    pub fn new(object: &Bound<'py, PyAny>, path: &str) -> Self {
        Arg {
            object: object.clone(),
            path: path.to_string(),
            kind: INVALID_ARGUMENT,
        }
    }

    /// The same argument, refused with `kind` instead.
    pub fn kind(self, kind: &'static str) -> Self {
        Arg { kind, ..self }
    }

    pub fn object(&self) -> &Bound<'py, PyAny> {
        &self.object
    }

    /// The error of this argument: `plain` in Python's words, the path in `.path`. Every
    /// refusal of an argument is made here.
    pub fn refuse(&self, class: Class, plain: &str) -> PyErr {
        // The simulator's messages quote names as Rust does (`=`); Python quotes them as '='.
        let plain = plain.replace('`', "'");
        let plain = plain.as_str();
        let message = format!("{}: {plain}", self.path);
        errors::raise(
            self.object.py(),
            class,
            self.kind,
            &message,
            plain,
            Some(&self.path),
        )
    }

    /// `GangwayValueError(plain)`.
    pub fn invalid(&self, plain: &str) -> PyErr {
        self.refuse(Class::Value, plain)
    }

    /// `GangwayTypeError("expected {expected}, got {what was given}")`.
    pub fn wrong_type(&self, expected: &str) -> PyErr {
        self.refuse(
            Class::Type,
            &format!("expected {expected}, got {}", got(&self.object)),
        )
    }

    /// `GangwayValueError("expected {expected}, got {what was given}")`.
    pub fn wrong_value(&self, expected: &str) -> PyErr {
        self.invalid(&format!("expected {expected}, got {}", got(&self.object)))
    }

    pub fn string(&self) -> PyResult<String> {
        let text = self
            .object
            .cast::<PyString>()
            .map_err(|_| self.wrong_type("a str"))?;
        text.to_cow()
            .map(|text| text.into_owned())
            .map_err(|_| self.invalid("a str that is not valid Unicode (a lone surrogate)"))
    }

    /// True or False: no other object stands for one.
    pub fn boolean(&self) -> PyResult<bool> {
        self.object
            .cast::<PyBool>()
            .map(|flag| flag.is_true())
            .map_err(|_| self.wrong_type("a bool"))
    }

    /// An int (never a bool or a float) from `min` to `T`'s largest.
    pub fn uint<T: TryFrom<u64>>(&self, min: u64) -> PyResult<T> {
        let words = match min {
            0 => "a non-negative integer".to_string(),
            1 => "a positive integer".to_string(),
            _ => format!("an integer of at least {min}"),
        };
        let int = self.int_object(&words)?;
        let too_large =
            || self.wrong_value(&format!("an integer from {min} to {}", largest::<T>()));
        match int.extract::<u64>() {
            Ok(v) if v < min => Err(self.wrong_value(&words)),
            Ok(v) => T::try_from(v).map_err(|_| too_large()),
            Err(_) if int.lt(0).unwrap_or(true) => Err(self.wrong_value(&words)),
            Err(_) => Err(too_large()),
        }
    }

    /// An int (never a bool or a float) that `T` holds, `range` saying which (`from -2**31 to
    /// 2**31 - 1`).
    pub fn int<T: TryFrom<i64>>(&self, range: &str) -> PyResult<T> {
        let int = self.int_object("an integer")?;
        int.extract::<i64>()
            .ok()
            .and_then(|v| T::try_from(v).ok())
            .ok_or_else(|| self.wrong_value(&format!("an integer {range}")))
    }

    fn int_object(&self, words: &str) -> PyResult<&Bound<'py, PyAny>> {
        if self.object.is_instance_of::<PyInt>() && !self.object.is_instance_of::<PyBool>() {
            Ok(&self.object)
        } else {
            Err(self.wrong_type(words))
        }
    }

    /// A float or an int (never a bool).
    pub fn number(&self) -> PyResult<f64> {
        if let Ok(float) = self.object.cast::<PyFloat>() {
            return Ok(float.value());
        }
        let int = self.int_object("a number")?;
        int.extract::<f64>()
            .map_err(|_| self.wrong_value("a number in the range of floats"))
    }

    /// A str or an `os.PathLike`.
    pub fn path(&self) -> PyResult<PathBuf> {
        let path_like = self.object.is_instance_of::<PyString>()
            || self.object.hasattr("__fspath__").unwrap_or(false);
        if !path_like {
            return Err(self.wrong_type("a str or an os.PathLike"));
        }
        self.object
            .extract::<PathBuf>()
            .map_err(|_| self.wrong_type("a str or an os.PathLike of a str"))
    }

    /// The items of a list or tuple (never a str), each an argument at `path[i]`; `expected`
    /// names the whole (`a list of str`).
    pub fn items(&self, expected: &str) -> PyResult<Vec<Arg<'py>>> {
        let items: Vec<Bound<'py, PyAny>> = if let Ok(list) = self.object.cast::<PyList>() {
            list.iter().collect()
        } else if let Ok(tuple) = self.object.cast::<PyTuple>() {
            tuple.iter().collect()
        } else {
            return Err(self.wrong_type(expected));
        };
        Ok(items
            .into_iter()
            .enumerate()
            .map(|(i, object)| Arg {
                object,
                path: format!("{}[{i}]", self.path),
                kind: self.kind,
            })
            .collect())
    }

    /// [`Arg::items`], at least one.
    pub fn non_empty_items(&self, expected: &str) -> PyResult<Vec<Arg<'py>>> {
        let items = self.items(expected)?;
        if items.is_empty() {
            return Err(self.wrong_value(&format!("a non-empty list ({expected})")));
        }
        Ok(items)
    }

    /// A list or tuple of `gangway.Plugin`.
    pub fn plugins(&self) -> PyResult<Vec<Py<Plugin>>> {
        self.items("a list of gangway.Plugin")?
            .iter()
            .map(|item| {
                item.object
                    .cast::<Plugin>()
                    .map(|plugin| plugin.clone().unbind())
                    .map_err(|_| item.wrong_type("a gangway.Plugin"))
            })
            .collect()
    }
}

/// The largest u64 that `T` holds, found bit by bit from the top (`T` holds every u64 up to
/// its largest).
fn largest<T: TryFrom<u64>>() -> u64 {
    let mut largest = 0u64;
    for bit in (0..64).rev() {
        let candidate = largest | (1 << bit);
        if T::try_from(candidate).is_ok() {
            largest = candidate;
        }
    }
    largest
}

/// What was given, in Python's words: `the int -1`, `the str "easy"`, `None`, `a dict`.
pub fn got(object: &Bound<'_, PyAny>) -> String {
    if object.is_none() {
        return "None".to_string();
    }
    if let Ok(flag) = object.cast::<PyBool>() {
        return if flag.is_true() { "True" } else { "False" }.to_string();
    }
    let repr = || {
        object
            .repr()
            .map_or_else(|_| "?".to_string(), |r| r.to_string())
    };
    if object.is_instance_of::<PyInt>() {
        return format!("the int {}", repr());
    }
    if object.is_instance_of::<PyFloat>() {
        return format!("the float {}", repr());
    }
    if let Ok(text) = object.cast::<PyString>() {
        return match text.to_cow() {
            Ok(text) => format!("the str {}", serde_json::Value::from(text.as_ref())),
            Err(_) => "a str".to_string(),
        };
    }
    let name = type_name(object);
    let article = if name.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {name}")
}

/// `gangway._gangway._wrong_type(path, expected, given)`: the `GangwayTypeError` of the
/// argument at `path` (the package's Python code's, as the native arguments').
#[pyfunction]
#[pyo3(name = "_wrong_type")]
pub fn wrong_type_error<'py>(
    given: &Bound<'py, PyAny>,
    path: &str,
    expected: &str,
) -> Bound<'py, PyAny> {
    Arg::new(given, path)
        .wrong_type(expected)
        .into_value(given.py())
        .into_bound(given.py())
        .into_any()
}

/// `gangway._gangway._uint(given, path)`: `given`, an int from 0 to 2**64 - 1, or the
/// `GangwayTypeError` or `GangwayValueError` of the argument at `path`.
#[pyfunction]
#[pyo3(name = "_uint")]
pub fn uint_argument(given: &Bound<'_, PyAny>, path: &str) -> PyResult<u64> {
    Arg::new(given, path).uint(0)
}

/// `gangway._gangway._invalid(path, plain)`: the `GangwayValueError` of the argument at
/// `path`.
#[pyfunction]
#[pyo3(name = "_invalid")]
pub fn invalid_error<'py>(py: Python<'py>, path: &str, plain: &str) -> Bound<'py, PyAny> {
    Arg::new(&py.None().into_bound(py), path)
        .invalid(plain)
        .into_value(py)
        .into_bound(py)
        .into_any()
}
