//! Panic capture at the hook boundary: a plug-in's panic is caught and reported in the tick's
//! `plugin_faults`, and not printed; a fault the plug-in reports itself ([`report_fault`]) is
//! taken the same way, without a panic.
//!
//! The first guarded call installs, once per process, a panic hook that wraps the hook in place
//! then (the standard one, or the host's own): a panic raised while this thread is inside a
//! guarded plug-in call is not passed on to it; every other panic is. The flag is per thread,
//! so a panic of another thread at the same moment is printed as before. A host that installs
//! its own hook after the engine's first tick replaces the wrapper, and then sees plug-in
//! panics too.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Once;

thread_local! {
    /// How many guarded plug-in calls this thread is inside (a plug-in may call code that
    /// is guarded again).
    static GUARDED: Cell<u32> = const { Cell::new(0) };

    /// One slot per guarded call this thread is inside, innermost last: the fault its plug-in
    /// reported, if any.
    static REPORTED: RefCell<Vec<Option<String>>> = const { RefCell::new(Vec::new()) };
}

static WRAP_HOOK: Once = Once::new();

/// Installs the wrapping panic hook (once per process).
fn wrap_hook() {
    WRAP_HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let guarded = GUARDED.try_with(|g| g.get() > 0).unwrap_or(false);
            if !guarded {
                previous(info);
            }
        }));
    });
}

/// Restores the depth when the guarded call ends, also by unwinding.
struct Depth;

impl Depth {
    fn enter() -> Depth {
        GUARDED.with(|g| g.set(g.get() + 1));
        REPORTED.with(|r| r.borrow_mut().push(None));
        Depth
    }

    /// Ends the guarded call: the fault its plug-in reported, if any.
    fn leave(self) -> Option<String> {
        let reported = REPORTED
            .try_with(|r| r.borrow_mut().last_mut().and_then(Option::take))
            .ok()
            .flatten();
        drop(self);
        reported
    }
}

impl Drop for Depth {
    fn drop(&mut self) {
        let _ = GUARDED.try_with(|g| g.set(g.get().saturating_sub(1)));
        let _ = REPORTED.try_with(|r| r.borrow_mut().pop());
    }
}

/// Runs `call`, catching a panic without printing it: the answer, or the panic's message, or
/// the message of the fault the call reported with [`report_fault`] (its answer is dropped).
pub(crate) fn catch_quietly<T>(call: impl FnOnce() -> T) -> Result<T, String> {
    wrap_hook();
    let depth = Depth::enter();
    let result = catch_unwind(AssertUnwindSafe(call));
    let reported = depth.leave();
    match (result, reported) {
        (Err(payload), _) => Err(panic_message(payload.as_ref())),
        (Ok(_), Some(message)) => Err(message),
        (Ok(answer), None) => Ok(answer),
    }
}

/// Reports that the plug-in hook now running failed, without panicking: the engine drops the
/// hook's answer (return any value, say the abstaining default), silences the plug-in for the
/// rest of the pass and lists the fault in the tick's `plugin_faults`, exactly as for a panic
/// (kind `panic`, with `message`), and nothing is printed. The first report of a call counts.
///
/// Returns whether a hook call was running on this thread to take it: called outside any hook
/// call (in a plug-in's constructor, say) it does nothing and returns `false`. A plug-in that
/// calls hooks of another plug-in directly shares their calls' boundary.
///
/// ```
/// use gangway::policy::{FnPlugin, Profile, report_fault};
/// use gangway::{ClusterConfig, Event, JobSpec, Scheduler};
/// let picky = FnPlugin::new("picky").order_key(|job, _| match job.spec().priority {
///     p if p < 0 => {
///         report_fault(format!("{}: negative priority {p}", job.name()));
///         0
///     }
///     p => i64::from(p),
/// });
/// let profile = Profile::builder().plugin(picky).build().unwrap();
/// let cluster: ClusterConfig = serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 1}]}"#).unwrap();
/// let mut s = Scheduler::with_profile(cluster, profile).unwrap();
/// let mut job = JobSpec::new("a", 60_000, 1);
/// job.priority = -3;
/// let out = s.tick(0, vec![Event::Submit { job }]).unwrap();
/// assert_eq!(out.plugin_faults[0].message, "a: negative priority -3");
/// assert_eq!(out.plugin_faults[0].plugin, "picky");
/// assert!(!report_fault("outside any hook"));
/// ```
pub fn report_fault(message: impl Into<String>) -> bool {
    REPORTED
        .try_with(|r| match r.borrow_mut().last_mut() {
            Some(slot) => {
                if slot.is_none() {
                    *slot = Some(message.into());
                }
                true
            }
            None => false,
        })
        .unwrap_or(false)
}

/// The text of a panic's payload (`panicked` when it is neither a `&str` nor a `String`).
fn panic_message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panicked".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_guarded_panic_is_caught_with_its_message() {
        assert_eq!(catch_quietly(|| 7), Ok(7));
        let caught = catch_quietly(|| -> u32 { panic!("bad {}", 1) });
        assert_eq!(caught, Err("bad 1".to_string()));
        assert_eq!(GUARDED.with(|g| g.get()), 0);
    }

    #[test]
    fn nested_guarded_calls_restore_the_depth() {
        wrap_hook();
        // Outside a guarded call the flag is down, so the previous hook sees a panic.
        assert!(!GUARDED.with(|g| g.get() > 0));
        // Nested guarded calls restore the depth when they unwind.
        let nested = catch_quietly(|| catch_quietly(|| -> u32 { panic!("inner") }));
        assert_eq!(nested, Ok(Err("inner".to_string())));
        assert_eq!(GUARDED.with(|g| g.get()), 0);
    }

    #[test]
    fn a_reported_fault_fails_the_call_without_a_panic() {
        let caught = catch_quietly(|| {
            assert!(report_fault("first"));
            assert!(report_fault("second"));
            5
        });
        assert_eq!(caught, Err("first".to_string()));
        // The slot is gone with the call: the next call is clean, and outside none is taken.
        assert_eq!(catch_quietly(|| 6), Ok(6));
        assert!(!report_fault("outside"));
        assert_eq!(REPORTED.with(|r| r.borrow().len()), 0);
    }

    #[test]
    fn a_report_belongs_to_the_innermost_call() {
        let outer = catch_quietly(|| {
            let inner = catch_quietly(|| report_fault("inner"));
            assert_eq!(inner, Err("inner".to_string()));
            7
        });
        assert_eq!(outer, Ok(7));
        // A report that unwinds with a panic: the panic's message wins, the slot is popped.
        let both = catch_quietly(|| -> u32 {
            report_fault("reported");
            panic!("then panicked")
        });
        assert_eq!(both, Err("then panicked".to_string()));
        assert_eq!(REPORTED.with(|r| r.borrow().len()), 0);
    }
}
