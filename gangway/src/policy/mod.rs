//! The policy surface: plug-ins at every decision point of the pass, combined by a
//! [`Profile`], and the built-in ones ([`builtin`]). A plug-in is a type whose
//! `impl Plugin` carries [`macro@plugin`] (its hooks derived from the methods it defines) or an
//! [`FnPlugin`] of closures; a [`Registry`] names plug-ins for CLUSTER's `policy.plugins`.
//!
//! | hook | called | answer | combined |
//! |---|---|---|---|
//! | [`Plugin::prepare`] | once per pass, first, with the tick's applied events | caches | — |
//! | [`Plugin::admit`] | per pending job, every pass | permit / deny (reason) / abstain | any deny keeps the job waiting (`admission`) |
//! | [`Plugin::order_key`] | per pending job (and running job, for order-based preemption) | `i64`, higher first | lexicographic in listed order, after the partition tier, before submit time and arrival |
//! | [`Plugin::filter_node`] | per task group and candidate node | yes / no (reason) | AND |
//! | [`Plugin::score_node`] | per task group and candidate node that passed the filters | `f64`, higher better | tiers lexicographic, weighted sum within a tier; non-finite is the worst; ties keep the engine's visit order; [`builtin::LeastFragmenting`] (the engine's node choice) holds a tier alone |
//! | [`Plugin::choose_devices`] | per task and chosen node | the devices it takes | the first valid pick; else the engine's (lowest free devices; the fullest device with room for a fraction) |
//! | [`Plugin::score_domain`] | per topology domain that could hold a gang | `f64`, higher better | as node scores; ties keep the engine's best fit (least free capacity) |
//! | [`Plugin::veto_victim`] | per preemptor and candidate victim | veto (reason, optional end) or none | AND over every plug-in; the earliest end of a veto that held back a still-waiting preemptor joins `next_wakeup_ms` |
//! | [`Plugin::victim_key`] | per preemptor and candidate victim | `i64`, lower first | lexicographic, then the later job id |
//! | [`Plugin::may_backfill`] | per job behind a blocked head that fits now | admit / refuse | AND (a silenced rule admits) |
//! | [`Plugin::wake_up`] | after each pass | a time | the earliest joins `next_wakeup_ms` |
//! | [`Plugin::observe`] | after each tick | — | — |
//! | [`Plugin::save_state`] / [`Plugin::load_state`] | snapshot / restore | JSON | by plug-in name |
//!
//! The engine referees: no plug-in can over-commit a device, split a gang, breach a quota or
//! delay a reservation. Its rules (capacity, gangs, quotas, reservations, decision order,
//! time intervals) always hold; a profile replaces only the rules its plug-ins implement.
//! docs/policies.md has the worked examples.

pub mod builtin;
mod context;
mod factors;
mod fn_plugin;
mod guard;
mod hooks;
mod profile;
mod quiet;
pub(crate) mod registry;
pub(crate) mod spec;

pub use context::{PassContext, PassFigures};
pub use factors::PriorityFactors;
pub use fn_plugin::FnPlugin;
pub use gangway_macros::plugin;
pub use guard::{FaultKind, PluginFault};
#[doc(hidden)]
pub use hooks::__private;
pub use hooks::{
    Dependence, DeviceTask, DomainView, HeadView, Hook, Plugin, PluginClone, Veto, Vote,
};
pub use profile::{KeyTerms, Placement, Profile, ProfileBuilder, ProfileError};
pub(crate) use profile::{
    MAX_SCORE_TIERS, NodeScores, OrderKeys, PartitionHooks, VictimKeys, better_first,
};
pub use quiet::report_fault;
pub use registry::{NoParams, Registry, RegistryError};
pub use spec::{PluginSpec, SpecError};
