//! The hook boundary: every call into a plug-in is caught here. A plug-in that panics is
//! reported in the tick's outcome and treated as abstaining for the rest of the pass; a score
//! that is not a finite number, or that overflows its tier's weighted sum, is reported too
//! (once per pass per plug-in) and ranks as the worst.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};

use crate::policy::Hook;
use crate::policy::quiet::catch_quietly;

/// What a plug-in did wrong.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FaultKind {
    /// It panicked, or reported a failure ([`crate::policy::report_fault`]; a Python plug-in:
    /// raised): it abstained for the rest of the pass.
    #[default]
    Panic,
    /// It answered a score that is NaN or infinite: that node or domain ranked as the worst in
    /// the scorer's tier.
    NonFinite,
    /// Its finite score, times its weight, made its tier's weighted sum overflow to ±∞ (say
    /// two terms of `1e308`): that node or domain ranked as the worst in the tier
    /// (docs/policies.md, "Extreme scores").
    Overflow,
}

impl FaultKind {
    /// The kind's name as the tick outcome's faults write it.
    ///
    /// ```
    /// assert_eq!(gangway::policy::FaultKind::NonFinite.name(), "non_finite");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::Panic => "panic",
            FaultKind::NonFinite => "non_finite",
            FaultKind::Overflow => "overflow",
        }
    }
}

/// A plug-in that misbehaved in a tick: it panicked (and abstained for the rest of that
/// pass), or answered a score that is not finite or overflowed its tier (reported once per
/// pass per plug-in).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PluginFault {
    /// The plug-in's name.
    pub plugin: String,
    /// The hook it misbehaved in.
    pub hook: Hook,
    /// What it did (a fault written without one is a panic).
    #[serde(default)]
    pub kind: FaultKind,
    /// The panic's (or reported failure's) message, or what the score was and what it was
    /// about.
    pub message: String,
}

/// Which plug-ins panicked in this pass, and the faults to report.
#[derive(Debug, Default)]
pub(crate) struct FaultLog {
    /// By plug-in index: it panicked in this pass and abstains until the next.
    silenced: Vec<AtomicBool>,
    /// By plug-in index: a bad score of it was reported in this pass.
    scored_badly: Vec<AtomicBool>,
    faults: Mutex<Vec<PluginFault>>,
}

impl Clone for FaultLog {
    /// A fresh log for as many plug-ins (faults belong to the tick that saw them).
    fn clone(&self) -> Self {
        FaultLog::new(self.silenced.len())
    }
}

impl FaultLog {
    pub(crate) fn new(plugins: usize) -> Self {
        FaultLog {
            silenced: (0..plugins).map(|_| AtomicBool::new(false)).collect(),
            scored_badly: (0..plugins).map(|_| AtomicBool::new(false)).collect(),
            faults: Mutex::new(Vec::new()),
        }
    }

    /// Lets every plug-in answer again (a new pass).
    pub(crate) fn new_pass(&self) {
        for flag in self.silenced.iter().chain(&self.scored_badly) {
            flag.store(false, Ordering::Relaxed);
        }
    }

    /// Whether plug-in `index` panicked in this pass.
    pub(crate) fn silenced(&self, index: usize) -> bool {
        self.silenced
            .get(index)
            .is_some_and(|flag| flag.load(Ordering::Relaxed))
    }

    /// Whether any plug-in panicked in this pass.
    pub(crate) fn any_silenced(&self) -> bool {
        self.silenced
            .iter()
            .any(|flag| flag.load(Ordering::Relaxed))
    }

    /// Runs `call` for plug-in `index` (named `name`) at `hook`; `None` when the plug-in is
    /// silenced or panics (which silences it and records the fault).
    pub(crate) fn call<T>(
        &self,
        index: usize,
        name: impl FnOnce() -> String,
        hook: Hook,
        call: impl FnOnce() -> T,
    ) -> Option<T> {
        if self.silenced(index) {
            return None;
        }
        self.run(index, name, hook, call)
    }

    /// [`FaultLog::call`], also for a silenced plug-in. The panic is captured: the process's
    /// panic hook does not print it (see `quiet`).
    pub(crate) fn run<T>(
        &self,
        index: usize,
        name: impl FnOnce() -> String,
        hook: Hook,
        call: impl FnOnce() -> T,
    ) -> Option<T> {
        match catch_quietly(call) {
            Ok(answer) => Some(answer),
            Err(message) => {
                if let Some(flag) = self.silenced.get(index) {
                    flag.store(true, Ordering::Relaxed);
                }
                self.push(PluginFault {
                    plugin: name(),
                    hook,
                    kind: FaultKind::Panic,
                    message,
                });
                None
            }
        }
    }

    /// Records a bad score of plug-in `index`, unless one of its bad scores was already
    /// recorded in this pass (`message` is only built for the first).
    pub(crate) fn bad_score(
        &self,
        index: usize,
        name: impl FnOnce() -> String,
        hook: Hook,
        kind: FaultKind,
        message: impl FnOnce() -> String,
    ) {
        let Some(flag) = self.scored_badly.get(index) else {
            return;
        };
        if flag.swap(true, Ordering::Relaxed) {
            return;
        }
        self.push(PluginFault {
            plugin: name(),
            hook,
            kind,
            message: message(),
        });
    }

    fn push(&self, fault: PluginFault) {
        if let Ok(mut faults) = self.faults.lock() {
            faults.push(fault);
        }
    }

    /// The faults recorded since the last call, in the order they happened.
    pub(crate) fn take(&self) -> Vec<PluginFault> {
        self.faults
            .lock()
            .map(|mut faults| std::mem::take(&mut *faults))
            .unwrap_or_default()
    }
}
