//! The engine's tests in one binary, one module per area (a binary per file linked the whole
//! crate forty-four times over). `cargo test -p gangway --test engine AREA` runs one area, e.g.
//! `preemption` or `_properties` for the property families. Every test that ticks runs the
//! invariant oracle after every tick (`gangway::testkit::checked_tick`, `common::shim`).
//! `GANGWAY_PROPTEST_SCALE=N` multiplies the property families' case counts; their shrunk
//! failures are kept in the `*.proptest-regressions` files beside each module. The long runs
//! of the adversarial-profile and snapshot-restore families, at 20 times their CI cases, are
//! ignored tests: `cargo test -p gangway --test engine long_run -- --ignored`.

mod common;

mod admission_fair_sharing;
mod backfill_properties;
mod bad_input;
mod busy_first;
mod compress_properties;
mod computed_times;
mod custom_policy;
mod daemon_example;
mod determinism;
mod fair_sharing_properties;
mod fairshare_charging;
mod fairshare_long_run;
mod fragmentation;
mod gpu_events;
mod head_rules;
mod licenses;
mod lifecycle;
mod maintenance;
mod mig;
mod plugin_views;
mod preemption;
mod preemption_properties;
mod priority_calc_period;
mod priority_factors;
mod profile_properties;
mod profiles;
mod public_surface;
mod reconfigure;
mod reconfigure_properties;
mod reference_properties;
mod regressions;
mod run_history;
mod scenarios;
mod shim_serve;
mod snapshot_fixtures;
mod stream_properties;
mod testkit_checks;
mod time_range;
mod topology;
mod wait_for_ready;
mod what_if;
