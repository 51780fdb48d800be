//! Panic capture at the hook boundary: a plug-in's panic is caught and reported in the tick's
//! `plugin_faults`, and not printed.
//!
//! The first guarded call installs, once per process, a panic hook that wraps the hook in place
//! then (the standard one, or the host's own): a panic raised while this thread is inside a
//! guarded plug-in call is not passed on to it; every other panic is. The flag is per thread,
//! so a panic of another thread at the same moment is printed as before. A host that installs
//! its own hook after the engine's first tick replaces the wrapper, and then sees plug-in
//! panics too.

use std::any::Any;
use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Once;

thread_local! {
    /// How many guarded plug-in calls this thread is inside (a plug-in may call code that
    /// is guarded again).
    static GUARDED: Cell<u32> = const { Cell::new(0) };
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
        Depth
    }
}

impl Drop for Depth {
    fn drop(&mut self) {
        let _ = GUARDED.try_with(|g| g.set(g.get().saturating_sub(1)));
    }
}

/// Runs `call`, catching a panic without printing it: the answer, or the panic's message.
pub(crate) fn catch_quietly<T>(call: impl FnOnce() -> T) -> Result<T, String> {
    wrap_hook();
    let depth = Depth::enter();
    let result = catch_unwind(AssertUnwindSafe(call));
    drop(depth);
    result.map_err(|payload| panic_message(payload.as_ref()))
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
}
