//! gangway: an embeddable scheduling-policy library for GPU clusters.
//!
//! The host owns every clock, socket and process; gangway owns the decisions. The core is a
//! pure, I/O-free, deterministic state machine: the host calls [`Scheduler::tick`] with the time
//! and the events since the last call (submissions, ends, node changes) and gets back
//! [`Decision`]s (start with a placement, preempt, kill, cancel, requeue) and the time it wants
//! to be called again at the latest. The same inputs always give the same decisions; nothing
//! observable depends on hash order.
//!
//! ```
//! use gangway::{ClusterConfig, Decision, Event, JobSpec, Milli, PlacementMode, Scheduler};
//!
//! let cluster: ClusterConfig = serde_json::from_str(r#"{"nodes": [
//!     {"name": "n1", "cpus": 32, "gpus": {"model": "a100", "count": 4}},
//!     {"name": "n2", "cpus": 32, "gpus": {"model": "a100", "count": 4}}]}"#).unwrap();
//! let mut scheduler = Scheduler::new(cluster).unwrap();
//! let gang = JobSpec::new("train", 3_600_000, 2)
//!     .with_gpus(Milli::from_units(4))
//!     .with_placement(PlacementMode::StrictSpread);
//! let outcome = scheduler.tick(0, vec![Event::Submit { job: gang }]).unwrap();
//! assert!(matches!(&outcome.decisions[0], Decision::Start { placement, .. } if placement.len() == 2));
//! assert_eq!(outcome.next_wakeup_ms, Some(3_600_000)); // the time limit
//! ```
//!
//! # Run loop
//!
//! The host owns the clock and every side effect; the scheduler only answers. A host's loop:
//!
//! 1. **Collect events** since the last call: submissions and cancellations from users, ends
//!    reported by the nodes (`finished` with an outcome), `stopped` acknowledgements of
//!    preempted jobs, node and GPU changes.
//! 2. **Tick**: `scheduler.tick(now_ms, events)`. Times never go backwards (an earlier tick is
//!    refused as a whole and changes nothing); an event that is wrong on its own is rejected in
//!    [`TickOutcome::rejected`] with a typed [`EventError`] while the rest apply.
//! 3. **Act on the decisions**, in the order given: `kill`, `cancel`, `requeue`, `preempt`
//!    (ask the job to checkpoint within `grace_ms`, then report `stopped`), `start` (launch
//!    on exactly the nodes and GPU indices of the placement).
//! 4. **Sleep until** the next event or [`TickOutcome::next_wakeup_ms`], whichever comes
//!    first: the next time limit, grace deadline, begin time or maintenance end. `None`: only
//!    events matter. Ticking earlier is harmless; ticking later only delays what was due.
//! 5. **Report ends honestly**: a job the scheduler started holds its resources until the host
//!    reports `finished` (or `stopped` after a preemption), or until the scheduler itself kills
//!    it at its time limit. Nothing is ever assumed to have ended.
//!
//! ```
//! use gangway::{ClusterConfig, Decision, Event, FinishOutcome, JobSpec, Scheduler};
//!
//! let cluster: ClusterConfig =
//!     serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 4}]}"#).unwrap();
//! let mut scheduler = Scheduler::new(cluster).unwrap();
//! let mut inbox = vec![
//!     Event::Submit { job: JobSpec::new("a", 60_000, 4) },
//!     Event::Submit { job: JobSpec::new("b", 60_000, 4) },
//! ];
//! let mut now = 0;
//! let mut running = Vec::new(); // what this host launched
//! loop {
//!     let outcome = scheduler.tick(now, std::mem::take(&mut inbox)).unwrap();
//!     for decision in outcome.decisions {
//!         if let Decision::Start { job, .. } = decision {
//!             running.push(job); // launch it
//!         }
//!     }
//!     // The host's own clock: here, every job ends 10 s after it starts.
//!     let Some(job) = running.pop() else { break };
//!     now += 10_000;
//!     assert!(outcome.next_wakeup_ms.is_some_and(|wake| now <= wake));
//!     inbox.push(Event::Finished { job, outcome: FinishOutcome::Completed });
//! }
//! assert_eq!(now, 20_000); // a ran 0-10 s, b 10-20 s
//! ```
//!
//! A daemon wraps the same loop around its own sockets and timers (`examples/daemon.rs`);
//! another language drives it over JSON lines with `gangway shim` (docs/protocol.md).
//!
//! # Map
//!
//! - **At the root**, what a host uses: [`Scheduler`] with its [`Snapshot`] and reports
//!   ([`Explanation`], [`WhatIf`], [`JobPriority`], [`ShareRow`], [`FairShareRow`],
//!   [`AdmissionUsageRow`]); the wire types: [`Event`], [`JobSpec`] and its parts, [`Decision`]
//!   and its reasons, [`TickOutcome`], and the errors ([`ConfigError`], [`EventError`],
//!   [`TickError`], [`RestoreError`], [`ErrorKind`]).
//! - [`config`]: the CLUSTER document and its defaults (docs/protocol.md). [`protocol`]: the
//!   JSON-lines shim (`gangway shim`). [`queue_table`]: the `squeue --start`-like table of the
//!   pending jobs.
//! - [`policy`]: the [`policy::Plugin`] trait (a policy at every decision point), profiles and
//!   the built-in plug-ins (docs/policies.md); plug-ins read the cluster through [`state`]'s
//!   views ([`state::ClusterState`], [`state::JobView`], [`state::NodeView`],
//!   [`state::QueueView`]) and [`model`]'s ids, amounts, shapes and nodes.
//! - [`placement`]: gang placement over the free-capacity index, as the scheduler places a job
//!   starting now, for studies of placement rules (`gangway-sim`'s fragmentation example).
//! - Everything else is internal: the pass, backfill (the availability profile and
//!   reservations), fair-share and Kueue-style quota trees, the state's bookkeeping.
//! - `testkit` (feature `testkit`): proptest strategies, the invariant oracle, a harness that
//!   property-checks any policy, adversarial plug-ins and the fuzz entry points.
//!
//! Around the engine, in the same workspace (docs/design.md, "Layers"): `gangway-sim` (the
//! discrete-event simulator, trace and history readers, workload generators, docs/design.md's
//! standard workload), `gangway-cli` (the `gangway` command: `simulate`, `shim`, `queue`,
//! `explain`, `inventory`, `validate`), `gangway-nvml` (the NVML node adapter) and the Python
//! package. None of them reaches into the engine: they use this public API, as a host would.
//!
//! # Choices (written down in docs/protocol.md and docs/design.md)
//!
//! - **Limits**: at most 16 GPUs per node, 64 GPU models, 64 partitions, 128 MIG slices per
//!   node. A GPU request of 1 or more must be whole; below 1 it is a shareable fraction.
//! - **Ended jobs** are forgotten at exactly their end + `min_job_age_ms`, before that tick's
//!   events. Dependents are resolved (and cancelled down the chain) in submit order; a dependency
//!   on the job itself is `invalid`, on an unknown job `unknown_job`, as `sbatch` refuses them.
//! - **Elastic gangs** start with the largest count between `min_count` and `count` that fits now;
//!   a reservation plans them at `min_count`.
//! - **Backfill** reservations are pinned to nodes and devices and kept as plans across passes;
//!   a job placed now may use reserved resources only if it ends before the reservation starts
//!   (EASY's rule, per device). Conservative mode plans every blocked job; `depth` caps how many.
//! - **Fractional GPUs** go where they raise the cluster's fragmentation least (FGD-style, see
//!   [`placement::ShapeMix`]); whole-GPU tasks take their devices within one NVLink island when
//!   one holds them.
//! - **Topology**: a node missing a label of a configured level is refused; an unconstrained
//!   `pack` gang is packed into the narrowest domain that holds it, best fit (Slurm's
//!   topology/tree); `required`/`preferred` follow Kueue TAS. See [`placement::GangTopology`].
//! - **MIG**: a GPU in MIG mode takes no whole or fractional task; a MIG task holds one slice of
//!   its profile (the lowest free one); quota keys `mig:PROFILE` count slices and `gpu` keys do
//!   not; fair-share bills a slice as its compute share of its GPU (a `1g` slice is 1/7).
//! - **Passes stop when settled**: once nothing later in the order can start, be planned or
//!   preempt (backfill depth used up or no quota left for anyone, preemption off, and too little
//!   free for any pending job), the pass stops; `explain` derives the remaining reasons when
//!   asked, identical to a full pass's. A reservation that provably still is the earliest
//!   (nothing released since, earlier reservations unchanged) is kept without a search.
//!   Decisions never depend on either.
//! - **Quotas**: exclusive jobs are charged whole nodes; queues admit best-effort FIFO unless
//!   `strict_fifo`. Preempted resources are earmarked for the preemptor until its victims stop.
//! - **Extensions of the protocol** (new event types, ops and reasons, which its contract allows):
//!   events `gpu_down` / `gpu_up` and `maintenance_add` / `maintenance_remove`; requests
//!   `what_if`, `reconfigure`, `explain` with `"detail": true`; kill and requeue reason
//!   `gpu_down`; error kinds `unknown_maintenance` and `line_too_long`. The repository's
//!   `docs/protocol.md` documents every field with its JSON.
//! - **The shim's framing** ([`protocol::Shim::serve`], `gangway shim`): every non-blank line of
//!   any byte stream gets exactly one response line and no refusal changes the state. A line ends
//!   at `\n` (a `\r` before it belongs to the line end) or at the end of the input; a blank line
//!   (only whitespace) gets no response; a line that is not UTF-8 is refused with `parse`, naming
//!   the offset of its first invalid byte; a line longer than `--max-line-bytes` (default 4 GiB,
//!   about five times the `restore` of a million pending jobs) is skipped unread and refused with
//!   `line_too_long`. `gangway shim` exits 0 at the end of the input, 0 quietly when the reader
//!   of its standard output closes it, 1 with a message on standard error on any other I/O
//!   error, and 2 when its `--config` file is unusable.

#![forbid(unsafe_code)]
#![deny(missing_docs)]
// The curated surface (docs/stability.md): an item of a private module is `pub(crate)` unless
// re-exported, and every type a public signature names can be named.
#![warn(unnameable_types)]
#![warn(unreachable_pub)]

// `#[gangway::policy::plugin]` names the crate `::gangway`, also inside it.
extern crate self as gangway;

mod backfill;
pub mod config;
mod decision;
mod error;
mod event;
mod fairshare;
pub mod model;
pub mod placement;
pub mod policy;
pub mod protocol;
pub mod queue_table;
mod quota;
mod scheduler;
pub mod state;
#[cfg(feature = "testkit")]
pub mod testkit;

pub use config::ClusterConfig;
pub use decision::{
    CancelReason, Decision, Explanation, KillReason, MigPlacement, PendingInfo, PendingReason,
    PlacementEntry, Rejection, RequeueReason, RunningInfo, TickOutcome,
};
pub use error::{
    ConfigError, ConsistencyError, ErrorKind, EventError, RefusalKind, RestoreError, TickError,
};
pub use event::Event;
pub use fairshare::{AdmissionUsageRow, ShareRow};
pub use model::{
    Dependency, DependencyKind, FinishOutcome, JobSpec, Milli, Outcome, PlacementMode, TaskGroup,
    TopologyRequest,
};
pub use quota::{FairShareRow, Share};
pub use scheduler::{JobPriority, SNAPSHOT_VERSION, Scheduler, Snapshot, WhatIf};
