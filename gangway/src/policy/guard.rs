//! The hook boundary: every call into a plug-in is caught here. A plug-in that panics is
//! reported in the tick's outcome and treated as abstaining for the rest of the pass.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};

use crate::policy::Hook;

/// A plug-in that panicked in a tick: it abstained for the rest of that pass.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PluginFault {
    /// The plug-in's name.
    pub plugin: String,
    /// The hook it panicked in.
    pub hook: Hook,
    /// The panic's message.
    pub message: String,
}

/// Which plug-ins panicked in this pass, and the faults to report.
#[derive(Debug, Default)]
pub(crate) struct FaultLog {
    /// By plug-in index: it panicked in this pass and abstains until the next.
    silenced: Vec<AtomicBool>,
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
            faults: Mutex::new(Vec::new()),
        }
    }

    /// Lets every plug-in answer again (a new pass).
    pub(crate) fn new_pass(&self) {
        for flag in &self.silenced {
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

    /// [`FaultLog::call`], also for a silenced plug-in.
    pub(crate) fn run<T>(
        &self,
        index: usize,
        name: impl FnOnce() -> String,
        hook: Hook,
        call: impl FnOnce() -> T,
    ) -> Option<T> {
        match catch_unwind(AssertUnwindSafe(call)) {
            Ok(answer) => Some(answer),
            Err(payload) => {
                if let Some(flag) = self.silenced.get(index) {
                    flag.store(true, Ordering::Relaxed);
                }
                let message = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "panicked".to_string());
                let fault = PluginFault {
                    plugin: name(),
                    hook,
                    message,
                };
                if let Ok(mut faults) = self.faults.lock() {
                    faults.push(fault);
                }
                None
            }
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
