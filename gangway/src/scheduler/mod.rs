//! The `Scheduler`: `tick(now, events) -> decisions`, `next_wakeup`, `explain`, snapshots.

mod last_outcome;
mod pass;
mod reports;
mod shortcuts;
mod what_if;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::config::ClusterConfig;
use crate::decision::{Explanation, Rejection, RunningInfo, TickOutcome};
use crate::error::{ConfigError, RestoreError, TickError};
use crate::event::Event;
use crate::model::ids::JobId;
use crate::placement::Assignment;
use crate::policy::Profile;
use crate::state::ClusterState;
use last_outcome::LastOutcome;
use pass::head::Head;
use pass::order::calc_period::{PriorityCalc, SavedCalc};
use pass::report::PendingEntry;

pub use reports::JobPriority;
pub use what_if::WhatIf;

/// A deterministic, I/O-free scheduler. The host owns the clock and all I/O: it passes time and
/// events in, and acts on the decisions that come out.
///
/// ```
/// use gangway::{ClusterConfig, Decision, Event, JobSpec, Milli, Scheduler};
/// let cluster: ClusterConfig = serde_json::from_str(r#"{"nodes": [
///     {"name": "n1", "cpus": 8, "memory_mib": 16000, "gpus": {"model": "a100", "count": 4}}]}"#).unwrap();
/// let mut scheduler = Scheduler::new(cluster).unwrap();
/// let job = JobSpec::new("train", 3_600_000, 1).with_gpus(Milli::from_units(2));
/// let out = scheduler.tick(0, vec![Event::Submit { job }]).unwrap();
/// assert!(matches!(&out.decisions[0], Decision::Start { job, .. } if job == "train"));
/// assert_eq!(out.next_wakeup_ms, Some(3_600_000)); // its time limit
/// ```
#[derive(Clone)]
pub struct Scheduler {
    state: ClusterState,
    /// The plug-ins of every decision point.
    profile: Profile,
    /// Whether `profile` comes from the configuration (`policy.plugins` or the default), and
    /// is rebuilt from the new one on reconfiguration.
    profile_from_config: bool,
    last_tick_ms: Option<u64>,
    /// Whether passes take their shortcuts: stop once settled, keep plans that provably stand,
    /// continue the last pass, answer placements from a memo. Off only in the reference pass
    /// (`testkit::reference`), which proves that none changes anything.
    shortcuts: bool,
    /// What the last pass left behind.
    last: LastOutcome,
}

/// A reservation made by the last pass: when, and on exactly which resources. The next pass
/// keeps it when it still fits, so plans are realised as made and later jobs' plans stay valid.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Plan {
    /// Planned start.
    pub(crate) start_ms: u64,
    /// Planned resources.
    pub(crate) assignments: Vec<Assignment>,
    /// Under conservative backfill with compression, the end of the window the plan was
    /// booked for (its start plus the time limit then): the window every later pass keeps for
    /// it ([`crate::config::BackfillConfig::compress`]). `None` in every other mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) end_ms: Option<u64>,
}

/// The snapshot format this version of gangway writes ([`Snapshot`]'s `version`); it reads
/// every version from 1 up to it. The versions:
///
/// 1. the format before the field existed (a snapshot without it is version 1);
/// 2. the state keeps the topology tree's numbering of its domains (`state.topology`). A
///    version-1 snapshot has none and is migrated by numbering its domains afresh, as version 1
///    restored them.
/// 3. the state no longer carries the job-name index (`state.job_names`), derived data that
///    restore builds from the jobs table. Versions 1 and 2 carry it, and restore ignores it
///    (a jobs table whose names repeat is refused, whichever the version).
///
/// Any other version is refused ([`RestoreError::Version`]). The committed fixtures of
/// `gangway/tests/snapshots/` hold that promise.
pub const SNAPSHOT_VERSION: u32 = 3;

/// Everything a scheduler needs to continue exactly where it was: the state, the part of the
/// last pass's outcome that a full pass cannot derive (its report, plans, denials, filter
/// details and wake-up), and the plug-ins' saved states (the plug-ins themselves aside), with the
/// format's version ([`SNAPSHOT_VERSION`]).
///
/// ```
/// use gangway::{ClusterConfig, Scheduler};
/// let cluster: ClusterConfig = serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 1}]}"#).unwrap();
/// let json = serde_json::to_value(Scheduler::new(cluster).unwrap().snapshot()).unwrap();
/// assert_eq!(json["version"], gangway::SNAPSHOT_VERSION);
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Snapshot {
    /// The format version; absent in version 1, which had no such field.
    #[serde(default = "first_snapshot_version")]
    version: u32,
    state: ClusterState,
    last_tick_ms: Option<u64>,
    report: Vec<PendingEntry>,
    next_wakeup_ms: Option<u64>,
    plans: BTreeMap<JobId, Plan>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    denied: BTreeMap<JobId, String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    details: BTreeMap<JobId, String>,
    /// Each stateful plug-in's state, by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    plugins: Vec<(String, serde_json::Value)>,
    /// The last priority calculation under `policy.priority.calc_period_ms`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    priority_calc: Option<SavedCalc>,
    /// The last pass's head, where a pinned head or a head rule's frozen estimate keeps it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    head: Option<Head>,
}

fn first_snapshot_version() -> u32 {
    1
}

impl Snapshot {
    /// The format version of a snapshot in JSON, read before its body, whose shape depends on
    /// it: 1 where the field is absent. A version this gangway cannot read is refused.
    ///
    /// ```
    /// use gangway::RestoreError;
    /// use gangway::Snapshot;
    /// assert_eq!(Snapshot::version_of(&serde_json::json!({"state": {}})), Ok(1));
    /// let refused = Snapshot::version_of(&serde_json::json!({"version": 7})).unwrap_err();
    /// assert_eq!(refused, RestoreError::Version { found: serde_json::json!(7) });
    /// assert_eq!(
    ///     refused.to_string(),
    ///     "snapshot format version 7 is not supported: this gangway reads versions 1 to 3"
    /// );
    /// ```
    pub fn version_of(snapshot: &serde_json::Value) -> Result<u32, RestoreError> {
        let Some(found) = snapshot.get("version") else {
            return Ok(first_snapshot_version());
        };
        found
            .as_u64()
            .and_then(|v| u32::try_from(v).ok())
            .filter(|v| (first_snapshot_version()..=SNAPSHOT_VERSION).contains(v))
            .ok_or_else(|| RestoreError::Version {
                found: found.clone(),
            })
    }
}

impl Profile {
    /// The profile CLUSTER's `policy.plugins` names from the built-in plug-ins, or the
    /// default one ([`Profile::default_for_config`]) without it
    /// ([`crate::policy::Registry::profile_for`] with a host's own plug-ins).
    ///
    /// ```
    /// let cluster: gangway::ClusterConfig = serde_json::from_str(r#"{"nodes": [],
    ///     "policy": {"plugins": [{"name": "las"}, {"name": "no_such"}]}}"#).unwrap();
    /// let err = gangway::policy::Profile::from_config(&cluster).unwrap_err();
    /// assert_eq!(err.field, "policy.plugins[1]");
    /// ```
    pub fn from_config(config: &ClusterConfig) -> Result<Profile, ConfigError> {
        crate::policy::registry::builtin_registry().profile_for(config)
    }
}

impl Snapshot {
    /// The cluster configuration the snapshotted scheduler ran under (to build the profile
    /// for [`Scheduler::restore_with_profile`]).
    pub fn config(&self) -> &ClusterConfig {
        &self.state.config
    }
}

impl Scheduler {
    /// A scheduler for `config` with the profile its `policy.plugins` names (the default
    /// profile without them: [`Profile::default_for_config`]).
    pub fn new(config: ClusterConfig) -> Result<Self, ConfigError> {
        let profile = Profile::from_config(&config)?;
        let mut scheduler = Self::with_profile(config, profile)?;
        scheduler.profile_from_config = true;
        Ok(scheduler)
    }

    /// A scheduler with the plug-ins of `profile` (the configuration's `policy.plugins` is
    /// ignored).
    ///
    /// ```
    /// use gangway::policy::{builtin::ShortestFirst, Profile};
    /// use gangway::{ClusterConfig, Scheduler};
    /// let cluster: ClusterConfig = serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 1}]}"#).unwrap();
    /// let profile = Profile::builder().plugin(ShortestFirst).build().unwrap();
    /// let scheduler = Scheduler::with_profile(cluster, profile).unwrap();
    /// assert_eq!(scheduler.profile().plugin_names().collect::<Vec<_>>(), ["shortest_first"]);
    /// ```
    pub fn with_profile(config: ClusterConfig, profile: Profile) -> Result<Self, ConfigError> {
        let state = ClusterState::from_config(config)?;
        profile.check_partitions(state.partitions.iter().map(|p| p.name.as_str()))?;
        Ok(Scheduler {
            last: LastOutcome::none(&state),
            state,
            profile,
            profile_from_config: false,
            last_tick_ms: None,
            shortcuts: true,
        })
    }

    /// A copy that runs the reference pass from its next tick on: every shortcut off (no pass
    /// stops when settled, no plan is kept without a search, no pass continues the last one,
    /// no placement is answered from a memo), so each pass is the plain full pass over the
    /// state. Decisions must not differ (`testkit::reference`).
    #[cfg(any(test, feature = "testkit"))]
    pub(crate) fn with_reference_pass(&self) -> Scheduler {
        let mut reference = self.clone();
        reference.shortcuts = false;
        reference.last.forget_shortcuts();
        reference
    }

    /// Which shortcuts the last pass took: whether it stopped settled, how many plans it kept
    /// without a search (and of those, how many without a placement either), how many searches
    /// after releases took their plan without a placement; how many passes
    /// so far continued the one before; how many preemption searches so far read only the
    /// jobs their preemptor outranks, bisected for the first placeable prefix, or were skipped
    /// as known to find no room (order-based, then fair-sharing), how many unplaced jobs'
    /// quota checks a kept verdict answered, how many victim orders were carried to a later
    /// pass, how many fill-backs the task counts answered, and how many searches took the
    /// candidates of an earlier one; and whether it took the pending order kept from the pass
    /// before.
    #[cfg(any(test, feature = "testkit"))]
    pub(crate) fn shortcuts_taken(&self) -> (bool, (usize, usize, usize), u64, [u64; 10], bool) {
        let kept = self.last.kept.as_ref();
        let preempt = &self.last.preempt_taken;
        (
            self.last.deferred.is_some(),
            kept.map_or((0, 0, 0), |k| (k.kept, k.unplaced, k.searched_unplaced)),
            self.last.resume.continued,
            [
                preempt.outranked_walks,
                preempt.bisections,
                preempt.no_room_skips,
                preempt.fair_no_room_skips,
                self.last.quota_verdicts_reused,
                preempt.victim_orders_carried,
                preempt.counted_fill_backs,
                preempt.candidates_reused,
                self.last.placements_spared,
                self.last.turns_counted_out,
            ],
            self.last
                .order_index
                .as_ref()
                .is_some_and(|index| index.carried_over()),
        )
    }

    /// The last pass's reservations, by job.
    #[cfg(any(test, feature = "testkit"))]
    pub(crate) fn plans(&self) -> &BTreeMap<JobId, Plan> {
        &self.last.plans
    }

    /// The profile deciding this scheduler's passes.
    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// The profile, with its plug-ins' state, when the scheduler is done: a host reads its
    /// plug-ins' counters with [`Profile::plugin`].
    ///
    /// ```
    /// use gangway::policy::{builtin::MinRunTime, Profile};
    /// use gangway::{ClusterConfig, Scheduler};
    /// let cluster: ClusterConfig = serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 1}]}"#).unwrap();
    /// let profile = Profile::builder().plugin(MinRunTime::new(1_000)).build().unwrap();
    /// let scheduler = Scheduler::with_profile(cluster, profile).unwrap();
    /// let profile = scheduler.into_profile();
    /// assert_eq!(profile.plugin::<MinRunTime>("min_run_time").unwrap().min_ms(), 1_000);
    /// ```
    pub fn into_profile(self) -> Profile {
        self.profile
    }

    /// Applies `events` in order at `now_ms`, runs one scheduling pass, and returns the
    /// decisions (kill, cancel, requeue, preempt, start), the rejected events and the next
    /// wake-up. A tick earlier than the previous one, or later than the range of
    /// times allows (2^53 − 1 ms), is refused as a whole and changes nothing.
    ///
    /// With accounts configured, every running job is first charged its billing-weighted
    /// resource-seconds since the last tick, so a job ending at this tick pays up to `now_ms`.
    pub fn tick(&mut self, now_ms: u64, events: Vec<Event>) -> Result<TickOutcome, TickError> {
        if now_ms > crate::model::time::MAX_MS {
            return Err(TickError::TimeOutOfRange {
                field: "at_ms".to_string(),
                value: now_ms,
            });
        }
        if let Some(previous_ms) = self.last_tick_ms
            && now_ms < previous_ms
        {
            return Err(TickError::TimeWentBackwards {
                previous_ms,
                requested_ms: now_ms,
            });
        }
        self.state.charge_running(now_ms);
        self.state.charge_admission(now_ms);
        self.last_tick_ms = Some(now_ms);
        self.state.now_ms = now_ms;
        self.state.forget_old_jobs(now_ms);
        self.state.maintenance.drop_past(now_ms);
        let mut decisions = Vec::new();
        let mut rejected = Vec::new();
        let observed = if self.profile.observes() {
            events.clone()
        } else {
            Vec::new()
        };
        let prepares = self.profile.prepares();
        let mut applied = Vec::new();
        self.state.reserve_jobs(
            events
                .iter()
                .filter(|e| matches!(e, Event::Submit { .. }))
                .count(),
        );
        for (index, event) in events.into_iter().enumerate() {
            let copy = prepares.then(|| event.clone());
            match self.state.apply_event(event, now_ms, &mut decisions) {
                Ok(()) => applied.extend(copy),
                Err(error) => rejected.push(Rejection { index, error }),
            }
        }
        self.enforce_limits(now_ms, &mut decisions);
        let next_begin = self.run_pass(now_ms, None, &mut decisions, &applied);
        self.state.prune_over_quota();
        decisions.sort_by_key(|d| d.order_rank());
        let context = self.last.figures.context(&self.state);
        let wanted = self.profile.wake_up(&context);
        // A wake-up beyond the time range can never come due: there is none.
        self.last.next_wakeup_ms = crate::model::time::reported(
            [
                self.compute_next_wakeup(now_ms, next_begin),
                wanted,
                self.last.veto_ends_ms,
            ]
            .into_iter()
            .flatten()
            .min(),
        );
        let mut outcome = TickOutcome {
            decisions,
            rejected,
            next_wakeup_ms: self.last.next_wakeup_ms,
            plugin_faults: Vec::new(),
        };
        if self.profile.observes() {
            self.profile.observe(now_ms, &observed, &outcome);
        }
        outcome.plugin_faults = self.profile.take_faults();
        debug_assert_eq!(self.state.check_kept_indexes(), Ok(()));
        Ok(outcome)
    }

    /// Replaces the partitions, cohorts, queues, accounts, QoS and policy with those of `config`
    /// while keeping the nodes and every job (docs/protocol.md's `reconfigure`). The change applies
    /// from the next pass: nothing starts or stops now, running jobs keep running even if that
    /// leaves a queue over its new quota, and pending jobs are ordered and admitted under the new
    /// configuration at the next tick. A profile from the configuration is rebuilt from the new
    /// one (plug-ins of the same name keep their state; the default profile's multifactor
    /// priority takes the new weights); a profile given in Rust is kept. The reservations of
    /// the last pass are dropped.
    ///
    /// - **Nodes.** The node table is kept as it is (capacity, state, allocations, nodes added
    ///   or removed by events); the new `nodes` list only decides partition membership. A
    ///   running node with an entry of its name joins the partitions that entry lists (all
    ///   without a list); one without an entry stays in the new partitions named like one it
    ///   was in. Entries naming no running node are ignored.
    /// - **Jobs.** A configuration under which a pending or running job would lose its
    ///   partition, queue, QoS or account, or a pending job would exceed its partition's
    ///   `max_time_ms`, is refused naming the job; a refused configuration changes nothing.
    ///   Jobs naming no partition move to the new default partition.
    /// - **Quota.** The tree is rebuilt and charged with the running jobs; those left over the
    ///   new limits are listed in [`ClusterState::over_quota`] until they end. Waiting
    ///   preemptors lose their earmarks (their victims keep stopping) and compete again.
    /// - **Fair-share.** Usage carries over by account and user name, decayed to the last
    ///   tick; usage of accounts no longer configured is dropped.
    ///
    /// ```
    /// use gangway::{ClusterConfig, Event, JobSpec, Scheduler};
    /// let mut config: ClusterConfig = serde_json::from_str(r#"{
    ///     "nodes": [{"name": "n1", "cpus": 4}],
    ///     "queues": [{"name": "q", "quota": {"cpu": {"nominal": 4}}}]}"#).unwrap();
    /// let mut scheduler = Scheduler::new(config.clone()).unwrap();
    /// let mut job = JobSpec::new("a", 60_000, 2);
    /// job.queue = Some("q".into());
    /// scheduler.tick(0, vec![Event::Submit { job }]).unwrap();
    ///
    /// // Shrink the quota below what "a" holds: it keeps running.
    /// config.queues[0].quota.get_mut("cpu").unwrap().nominal = gangway::Milli::from_units(1);
    /// scheduler.reconfigure(config.clone()).unwrap();
    /// assert_eq!(scheduler.state().running_count(), 1);
    ///
    /// // A configuration without the queue "a" uses is refused, and changes nothing.
    /// config.queues.clear();
    /// let err = scheduler.reconfigure(config).unwrap_err();
    /// assert_eq!(err.to_string(),
    ///     r#"queues: job "a" names queue "q", which the new configuration lacks"#);
    /// ```
    pub fn reconfigure(&mut self, config: ClusterConfig) -> Result<(), ConfigError> {
        let profile = if self.profile_from_config {
            let mut profile = Profile::from_config(&config)?;
            let kept: Vec<(String, serde_json::Value)> = self
                .profile
                .save_states()
                .into_iter()
                .filter(|(name, _)| profile.plugin_names().any(|n| n == name))
                .collect();
            profile.load_states(kept).map_err(|(plugin, message)| {
                ConfigError::new("policy.plugins", format!("plug-in {plugin:?}: {message}"))
            })?;
            Some(profile)
        } else {
            None
        };
        // Every check first, the state unchanged; then the state changes in place (a copy of
        // it would double the memory a reconfiguration needs).
        let plan = self.state.plan_reconfiguration(config)?;
        let names = plan.partitions().iter().map(|p| p.name.as_str());
        profile
            .as_ref()
            .unwrap_or(&self.profile)
            .check_partitions(names)?;
        // The last pass's report stays as it was: derived now, under the old configuration.
        self.last.report = self.pending_entries();
        if let Some(profile) = profile {
            self.profile = profile;
        }
        self.state.apply_reconfiguration(plan);
        self.last.plans.clear();
        // The new configuration's weights and figures take effect in a new calculation.
        self.last.priority_calc = None;
        self.last.forget_shortcuts();
        Ok(())
    }

    /// When the host must tick again even if nothing happens: the next time limit, grace
    /// deadline or begin time, or a maintenance window's end while jobs are pending. `None`:
    /// only events matter.
    pub fn next_wakeup(&self) -> Option<u64> {
        self.last.next_wakeup_ms
    }

    /// Why each pending job waits and when it should start, and where running jobs run, as of
    /// the last tick. Changes nothing.
    ///
    /// A pass stops once nothing later in its order can start, be planned or preempt (a full
    /// cluster with a long queue); the reasons of the jobs it did not visit are derived here,
    /// exactly as the pass would have given them, at the cost of one sort and one quota check
    /// per such job.
    pub fn explain(&self) -> Explanation {
        let mut running: Vec<RunningInfo> = self
            .state
            .running
            .iter()
            .filter_map(|&id| {
                let job = self.state.job(id)?;
                let run = job.running()?;
                let mut nodes: Vec<String> = Vec::new();
                for a in &run.assignments {
                    let name = self.state.node_name(a.node).to_string();
                    if !nodes.contains(&name) {
                        nodes.push(name);
                    }
                }
                Some(RunningInfo {
                    job: job.spec.id.clone(),
                    started_ms: run.start_ms,
                    nodes,
                    preempting: run.preemption.is_some(),
                    ready_deadline_ms: crate::model::time::reported(job.ready_deadline_ms()),
                })
            })
            .collect();
        running.sort_by(|a, b| {
            a.started_ms
                .cmp(&b.started_ms)
                .then_with(|| a.job.cmp(&b.job))
        });
        Explanation {
            pending: self.pending_info(),
            running,
        }
    }

    /// The time of the last tick.
    pub fn last_tick(&self) -> Option<u64> {
        self.last_tick_ms
    }

    /// The cluster state (read-only).
    pub fn state(&self) -> &ClusterState {
        &self.state
    }

    /// A snapshot of the whole state.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            version: SNAPSHOT_VERSION,
            state: self.state.clone(),
            last_tick_ms: self.last_tick_ms,
            report: self.pending_entries(),
            next_wakeup_ms: self.last.next_wakeup_ms,
            plans: self.last.plans.clone(),
            denied: self.last.denied.clone(),
            details: self.last.details.clone(),
            plugins: self.profile.save_states(),
            priority_calc: self.last.priority_calc.as_ref().map(PriorityCalc::saved),
            head: self.last.head.clone(),
        }
    }

    /// Restores a snapshot with the profile its configuration names (as [`Scheduler::new`]);
    /// the scheduler continues with exactly the decisions the original would have made. A
    /// snapshot whose allocations do not add up is refused.
    pub fn restore(snapshot: Snapshot) -> Result<Self, RestoreError> {
        let profile = Profile::from_config(&snapshot.state.config)?;
        let mut scheduler = Self::restore_with_profile(snapshot, profile)?;
        scheduler.profile_from_config = true;
        Ok(scheduler)
    }

    /// Restores a snapshot with `profile` (the one the snapshotted scheduler was built with,
    /// for the same decisions): the counterpart of [`Scheduler::with_profile`]. The plug-ins
    /// load their saved states by name.
    ///
    /// ```
    /// use gangway::policy::{builtin::ShortestFirst, Profile};
    /// use gangway::{ClusterConfig, Event, JobSpec, Scheduler};
    /// let cluster: ClusterConfig = serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 1}]}"#).unwrap();
    /// let profile = || Profile::builder().plugin(ShortestFirst).build().unwrap();
    /// let mut s = Scheduler::with_profile(cluster, profile()).unwrap();
    /// s.tick(0, vec![Event::Submit { job: JobSpec::new("a", 100, 1) }]).unwrap();
    /// let restored = Scheduler::restore_with_profile(s.snapshot(), profile()).unwrap();
    /// assert_eq!(restored.state().running_count(), 1);
    /// ```
    pub fn restore_with_profile(
        snapshot: Snapshot,
        mut profile: Profile,
    ) -> Result<Self, RestoreError> {
        if !(first_snapshot_version()..=SNAPSHOT_VERSION).contains(&snapshot.version) {
            let found = serde_json::Value::from(snapshot.version);
            return Err(RestoreError::Version { found });
        }
        let mut state = snapshot.state;
        let times = [
            ("now_ms", Some(state.now_ms)),
            ("last_tick_ms", snapshot.last_tick_ms),
        ];
        for (field, time) in times {
            crate::model::time::in_range_opt(field, time)
                .map_err(crate::error::ConsistencyError::from)?;
        }
        state.rebuild_restored()?;
        state.rebuild_quota()?;
        state.check_consistency()?;
        profile.check_partitions(state.partitions.iter().map(|p| p.name.as_str()))?;
        profile
            .load_states(snapshot.plugins)
            .map_err(|(plugin, message)| RestoreError::PluginState { plugin, message })?;
        let last = LastOutcome {
            report: snapshot.report,
            denied: snapshot.denied,
            details: snapshot.details,
            plans: snapshot.plans,
            next_wakeup_ms: snapshot.next_wakeup_ms,
            priority_calc: snapshot
                .priority_calc
                .map(|saved| PriorityCalc::restored(saved, &state)),
            head: snapshot.head,
            ..LastOutcome::none(&state)
        };
        Ok(Scheduler {
            last,
            state,
            profile,
            profile_from_config: false,
            last_tick_ms: snapshot.last_tick_ms,
            shortcuts: true,
        })
    }
}

impl std::fmt::Debug for Scheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scheduler")
            .field("last_tick_ms", &self.last_tick_ms)
            .field("nodes", &self.state.node_names.len())
            .field("pending", &self.state.pending.len())
            .field("running", &self.state.running.len())
            .field("plans_kept", &self.last.kept.as_ref().map_or(0, |k| k.kept))
            .field("passes_continued", &self.last.resume.continued)
            .field("preemption_shortcuts", &self.last.preempt_taken)
            .finish_non_exhaustive()
    }
}
