//! A profile: the ordered plug-ins of every hook, and the rules that combine their answers.
//!
//! - **Admission**: any deny keeps the job waiting (the first deny's message is shown).
//! - **Order**: keys compare lexicographically in the listed order, higher first (at most
//!   [`MAX_ORDER_KEYS`] order plug-ins); the engine puts the partition tier before them and the
//!   submit time and arrival after them.
//! - **Node filter**: ANDed; a partition's filters add to the global ones.
//! - **Node score**: tiers compared lexicographically (lower tier number first, at most
//!   [`MAX_SCORE_TIERS`]), a weighted sum within a tier (terms added in listed order), higher
//!   better. A non-finite answer, or a sum that overflows to ±∞, makes the tier the worst and is
//!   a fault of the plug-in (kind `non_finite` or `overflow`, once per pass per plug-in). Ties
//!   keep the engine's visit order. A partition with scorers of its own uses only those. The
//!   built-in node choice ([`crate::policy::builtin::LeastFragmenting`]) holds a tier alone,
//!   which the engine computes; a profile with other scorers and without it takes, for a group
//!   one node holds, the first node of their order that holds it.
//! - **Victim veto**: ANDed over the global vetoes and those of both jobs' partitions, so
//!   no rule can silence a guard.
//! - **Victim order**: keys compare lexicographically in the listed order, lower first; the
//!   engine's tie-break is the later job id. A partition with victim orders of its own (the
//!   preemptor's) uses only those.
//! - **Backfill**: ANDed; a rule that panicked admits for the rest of the pass.
//! - **Wake-up**: the earliest of all requests joins `next_wakeup_ms`, and so does the earliest
//!   end ([`Veto::until`]) of a victim veto that held back a preemptor still waiting after the
//!   pass.

use std::cmp::Ordering;

use crate::config::PriorityWeights;
use crate::decision::TickOutcome;
use crate::event::Event;
use crate::placement::fit::valid_pick;
use crate::policy::guard::{FaultKind, FaultLog, PluginFault};
use crate::policy::quiet::catch_quietly;
use crate::policy::{
    Dependence, DeviceTask, DomainView, HeadView, Hook, PassContext, Plugin, Veto, Vote,
};
use crate::state::{ClusterState, JobView, NodeView};

/// The most order plug-ins a profile may list.
pub(crate) const MAX_ORDER_KEYS: usize = 4;

/// The most node-score tiers a profile may use.
pub(crate) const MAX_SCORE_TIERS: usize = 4;

/// The most victim-order plug-ins a profile may list (globally, and for one partition).
pub(crate) const MAX_VICTIM_KEYS: usize = 8;

/// A candidate victim's keys, one per victim-order plug-in (unused slots 0).
pub(crate) type VictimKeys = [i64; MAX_VICTIM_KEYS];

/// A job's order keys, one per order plug-in (unused slots 0).
pub(crate) type OrderKeys = [i64; MAX_ORDER_KEYS];

/// A node's scores, one weighted sum per tier (unused tiers 0).
pub(crate) type NodeScores = [f64; MAX_SCORE_TIERS];

/// Why a profile cannot be built.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ProfileError {
    /// Two plug-ins share a name (names key their saved state).
    #[error("two plug-ins are named {0:?}")]
    DuplicateName(String),
    /// More order plug-ins than 4 (`MAX_ORDER_KEYS`).
    #[error("{0} order plug-ins; at most {MAX_ORDER_KEYS}")]
    TooManyOrderKeys(usize),
    /// More victim-order plug-ins than 8 (`MAX_VICTIM_KEYS`) (globally or for one partition).
    #[error("{0} victim-order plug-ins; at most {MAX_VICTIM_KEYS}")]
    TooManyVictimKeys(usize),
    /// A score tier at or beyond 4 (`MAX_SCORE_TIERS`).
    #[error("plug-in {plugin:?}: score tier {tier}; tiers are 0 to {}", MAX_SCORE_TIERS - 1)]
    TierOutOfRange {
        /// The plug-in.
        plugin: String,
        /// Its tier.
        tier: usize,
    },
    /// A score weight that is not finite.
    #[error("plug-in {plugin:?}: score weight {weight} is not a finite number")]
    BadWeight {
        /// The plug-in.
        plugin: String,
        /// Its weight.
        weight: f64,
    },
    /// A tier or weight given to a plug-in that scores neither nodes nor domains.
    #[error("plug-in {0:?} scores neither nodes nor domains: it takes no tier or weight")]
    NotAScorer(String),
    /// Another node scorer shares the tier of the built-in node choice
    /// ([`crate::policy::builtin::LeastFragmenting`]), which holds a tier alone.
    #[error(
        "plug-in {plugin:?} scores nodes at tier {tier}, which least_fragmenting holds alone; \
         give one of them another tier"
    )]
    NodeChoiceTierShared {
        /// The other scorer.
        plugin: String,
        /// The tier.
        tier: usize,
    },
    /// A weight other than 1 given to the built-in node choice
    /// ([`crate::policy::builtin::LeastFragmenting`]), which is not a weighted sum.
    #[error("least_fragmenting takes no weight (it holds its tier alone); got {weight}")]
    NodeChoiceWeight {
        /// The weight given.
        weight: f64,
    },
    /// A plug-in listed for one partition implements a hook that is global.
    #[error(
        "plug-in {plugin:?} is listed for partition {partition:?} but implements the global hook {}",
        hook.name()
    )]
    GlobalHookInPartition {
        /// The plug-in.
        plugin: String,
        /// Its partition.
        partition: String,
        /// The global hook.
        hook: Hook,
    },
}

/// Where a plug-in's placement and victim hooks apply, and its scores' tier and weight.
#[derive(Clone, Debug, PartialEq)]
pub struct Placement {
    /// Only jobs of this partition (every hook of the plug-in must allow it); `None`: all.
    pub partition: Option<String>,
    /// Score tier (0 first).
    pub tier: usize,
    /// Score weight within the tier.
    pub weight: f64,
}

impl Default for Placement {
    fn default() -> Self {
        Placement {
            partition: None,
            tier: 0,
            weight: 1.0,
        }
    }
}

impl Clone for Box<dyn Plugin> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// Builds a [`Profile`]: plug-ins in order; each is registered for every hook it implements.
///
/// ```
/// use gangway::policy::builtin::{MinRunTime, Multifactor, Spread};
/// use gangway::policy::Profile;
/// let profile = Profile::builder()
///     .plugin(Multifactor::from_config())
///     .plugin(MinRunTime::new(600_000))
///     .scorer(Spread, 0, 1.0)
///     .build()
///     .unwrap();
/// assert_eq!(profile.plugin_names().collect::<Vec<_>>(),
///     ["multifactor", "min_run_time", "spread"]);
/// ```
#[derive(Default)]
pub struct ProfileBuilder {
    plugins: Vec<(Box<dyn Plugin>, Placement)>,
}

impl ProfileBuilder {
    /// Adds a plug-in for every partition (scores at tier 0, weight 1).
    pub fn plugin(self, plugin: impl Plugin) -> Self {
        self.boxed(Box::new(plugin), Placement::default())
    }

    /// Adds a scorer (and its other hooks) at `tier` with `weight`.
    pub fn scorer(self, plugin: impl Plugin, tier: usize, weight: f64) -> Self {
        let placement = Placement {
            tier,
            weight,
            ..Placement::default()
        };
        self.boxed(Box::new(plugin), placement)
    }

    /// Adds a plug-in whose placement and victim hooks apply to the jobs of `partition` only.
    pub fn plugin_in(self, partition: &str, plugin: impl Plugin) -> Self {
        let placement = Placement {
            partition: Some(partition.to_string()),
            ..Placement::default()
        };
        self.boxed(Box::new(plugin), placement)
    }

    /// Adds a boxed plug-in with its placement.
    pub fn boxed(mut self, plugin: Box<dyn Plugin>, placement: Placement) -> Self {
        self.plugins.push((plugin, placement));
        self
    }

    /// The profile, or why the list is inconsistent.
    pub fn build(self) -> Result<Profile, ProfileError> {
        let mut names: Vec<&str> = Vec::new();
        let mut order = 0;
        for (plugin, placement) in &self.plugins {
            let name = plugin.name();
            if names.contains(&name) {
                return Err(ProfileError::DuplicateName(name.to_string()));
            }
            names.push(name);
            let hooks = plugin.hooks();
            order += usize::from(hooks.contains(&Hook::Order));
            if hooks.contains(&Hook::NodeScore) || hooks.contains(&Hook::DomainScore) {
                if placement.tier >= MAX_SCORE_TIERS {
                    return Err(ProfileError::TierOutOfRange {
                        plugin: name.to_string(),
                        tier: placement.tier,
                    });
                }
                if !placement.weight.is_finite() {
                    return Err(ProfileError::BadWeight {
                        plugin: name.to_string(),
                        weight: placement.weight,
                    });
                }
            }
            let scores = hooks.contains(&Hook::NodeScore) || hooks.contains(&Hook::DomainScore);
            if !scores && (placement.tier != 0 || placement.weight != 1.0) {
                return Err(ProfileError::NotAScorer(name.to_string()));
            }
            if let Some(partition) = &placement.partition
                && let Some(hook) = hooks.iter().find(|h| h.global_only())
            {
                return Err(ProfileError::GlobalHookInPartition {
                    plugin: name.to_string(),
                    partition: partition.clone(),
                    hook: *hook,
                });
            }
        }
        if order > MAX_ORDER_KEYS {
            return Err(ProfileError::TooManyOrderKeys(order));
        }
        let node_choice = self
            .plugins
            .iter()
            .position(|(plugin, _)| is_node_choice(&**plugin));
        if let Some(at) = node_choice {
            let tier = self.plugins[at].1.tier;
            if self.plugins[at].1.weight != 1.0 {
                return Err(ProfileError::NodeChoiceWeight {
                    weight: self.plugins[at].1.weight,
                });
            }
            let shared = self
                .plugins
                .iter()
                .enumerate()
                .find(|(i, (plugin, placement))| {
                    *i != at && placement.tier == tier && plugin.hooks().contains(&Hook::NodeScore)
                });
            if let Some((_, (plugin, _))) = shared {
                return Err(ProfileError::NodeChoiceTierShared {
                    plugin: plugin.name().to_string(),
                    tier,
                });
            }
        }
        let mut victim_orders: Vec<(Option<&str>, usize)> = Vec::new();
        for (plugin, placement) in &self.plugins {
            if plugin.hooks().contains(&Hook::VictimOrder) {
                let scope = placement.partition.as_deref();
                match victim_orders.iter_mut().find(|(s, _)| *s == scope) {
                    Some((_, count)) => *count += 1,
                    None => victim_orders.push((scope, 1)),
                }
            }
        }
        if let Some((_, count)) = victim_orders.iter().find(|(_, c)| *c > MAX_VICTIM_KEYS) {
            return Err(ProfileError::TooManyVictimKeys(*count));
        }
        let listed = |hook: Hook| -> Vec<usize> {
            (0..self.plugins.len())
                .filter(|&i| self.plugins[i].0.hooks().contains(&hook))
                .collect()
        };
        let global = GlobalHooks {
            prepare: listed(Hook::Prepare),
            admission: listed(Hook::Admission),
            order: listed(Hook::Order),
            wake_up: listed(Hook::WakeUp),
            observe: listed(Hook::Observe),
            backfill: listed(Hook::Backfill),
            order_built_in: false,
            victims_built_in: false,
            victims_time_free: false,
        };
        let global = GlobalHooks {
            order_built_in: global.order.iter().all(|&i| {
                let plugin = self.plugins[i].0.as_any();
                plugin.is::<crate::policy::builtin::Multifactor>()
                    || plugin.is::<crate::policy::builtin::ShortestFirst>()
            }),
            victims_built_in: self
                .plugins
                .iter()
                .filter(|(p, _)| {
                    p.hooks()
                        .iter()
                        .any(|h| matches!(h, Hook::VictimVeto | Hook::VictimOrder))
                })
                .all(|(p, _)| is_built_in_victim_plugin(p.as_any())),
            victims_time_free: self
                .plugins
                .iter()
                .all(|(p, _)| !p.as_any().is::<crate::policy::builtin::LeastLostWork>()),
            ..global
        };
        let faults = FaultLog::new(self.plugins.len());
        let (plugins, placements) = self.plugins.into_iter().unzip();
        Ok(Profile {
            plugins,
            placements,
            node_choice,
            global,
            partitions: Vec::new(),
            resolved_for: Vec::new(),
            faults,
        })
    }
}

/// The global hooks' plug-ins, by index, in listed order.
#[derive(Clone, Debug, Default)]
struct GlobalHooks {
    prepare: Vec<usize>,
    admission: Vec<usize>,
    order: Vec<usize>,
    wake_up: Vec<usize>,
    observe: Vec<usize>,
    backfill: Vec<usize>,
    /// Every order plug-in is the built-in multifactor or shortest-first: their keys read
    /// only the job, the pass's time and figures and the configuration, and they cannot
    /// panic (bounded weights and factors, saturating casts), so they are called unguarded.
    order_built_in: bool,
    /// Every victim veto and victim order plug-in is a built-in
    /// ([`is_built_in_victim_plugin`]): they read of the preemptor at most its partition, keep
    /// no state and cannot panic (lookups by `get`, saturating arithmetic), so they are called
    /// unguarded.
    victims_built_in: bool,
    /// No plug-in is the built-in least-lost-work, the one victim key that reads the time.
    victims_time_free: bool,
}

/// Whether `plugin` is a built-in victim plug-in that reads of the preemptor at most its
/// partition, keeps no state and never faults.
fn is_built_in_victim_plugin(plugin: &dyn std::any::Any) -> bool {
    use crate::policy::builtin::{
        BorrowingFirst, LeastLostWork, LowerPriorityFirst, LowerTierFirst, MinRunTime, NewestFirst,
        TierGuard,
    };
    plugin.is::<TierGuard>()
        || plugin.is::<MinRunTime>()
        || plugin.is::<LowerTierFirst>()
        || plugin.is::<BorrowingFirst>()
        || plugin.is::<LowerPriorityFirst>()
        || plugin.is::<NewestFirst>()
        || plugin.is::<LeastLostWork>()
}

/// The placement and victim hooks that serve one partition, by plug-in index.
#[derive(Clone, Debug, Default)]
pub(crate) struct PartitionHooks {
    pub(crate) filters: Vec<usize>,
    /// (tier, plug-in, weight), in listed order.
    pub(crate) scorers: Vec<(usize, usize, f64)>,
    pub(crate) devices: Vec<usize>,
    /// (tier, plug-in, weight), in listed order.
    pub(crate) domain_scorers: Vec<(usize, usize, f64)>,
    pub(crate) vetoes: Vec<usize>,
    pub(crate) victim_order: Vec<usize>,
    /// The tier of the built-in node choice ([`crate::policy::builtin::LeastFragmenting`])
    /// when it serves the partition (it is not among `scorers`: the engine computes it).
    pub(crate) node_choice: Option<usize>,
    /// Every filter and scorer answers from the task shape and the node alone.
    pub(crate) shape_only: bool,
}

impl PartitionHooks {
    /// Whether placement needs the profile at all here.
    pub(crate) fn gates(&self) -> bool {
        self.shapes_plans() || !self.devices.is_empty()
    }

    /// Whether the profile decides which nodes or domains a placement uses (then plans kept
    /// from an earlier pass are searched again).
    pub(crate) fn shapes_plans(&self) -> bool {
        !self.filters.is_empty() || !self.scorers.is_empty() || !self.domain_scorers.is_empty()
    }
}

/// The plug-ins of every decision point, and the rules that combine them (module docs).
///
/// [`Profile::default_for_config`] is the built-in policy: Slurm's multifactor priority and
/// Kueue's victim selection, with the engine's best fit; every scenario of the project is
/// decided by it.
#[derive(Clone)]
pub struct Profile {
    plugins: Vec<Box<dyn Plugin>>,
    placements: Vec<Placement>,
    /// The built-in node choice's index among the plug-ins, when listed.
    node_choice: Option<usize>,
    global: GlobalHooks,
    /// The placement hooks by partition index, resolved for the partitions named in
    /// `resolved_for` (again when those change).
    partitions: Vec<PartitionHooks>,
    resolved_for: Vec<String>,
    faults: FaultLog,
}

impl std::fmt::Debug for Profile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Profile")
            .field("plugins", &self.plugin_names().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl Profile {
    /// An empty builder.
    pub fn builder() -> ProfileBuilder {
        ProfileBuilder::default()
    }

    /// The plug-ins, in listed order (with their state), to build another profile from.
    pub fn into_plugins(self) -> Vec<Box<dyn Plugin>> {
        self.plugins
    }

    /// A builder holding the plug-ins (with their state) and their placements, to add more:
    /// the configuration's profile extended with a host's own plug-ins.
    ///
    /// ```
    /// use gangway::policy::{builtin::ShortestFirst, Profile};
    /// let base = Profile::builder().plugin(ShortestFirst).build().unwrap();
    /// let more = base.into_builder().plugin(gangway::policy::builtin::Spread).build().unwrap();
    /// assert_eq!(more.plugin_names().collect::<Vec<_>>(), ["shortest_first", "spread"]);
    /// ```
    pub fn into_builder(self) -> ProfileBuilder {
        ProfileBuilder {
            plugins: self.plugins.into_iter().zip(self.placements).collect(),
        }
    }

    /// Checks that every partition a plug-in is listed for exists among `partitions` (a
    /// `ConfigError` on field `profile` naming the plug-in otherwise).
    pub fn check_partitions<'a>(
        &self,
        partitions: impl Iterator<Item = &'a str> + Clone,
    ) -> Result<(), crate::error::ConfigError> {
        for (index, placement) in self.placements.iter().enumerate() {
            if let Some(partition) = &placement.partition
                && !partitions.clone().any(|p| p == partition)
            {
                return Err(crate::error::ConfigError::new(
                    "profile",
                    format!(
                        "plug-in {:?} is listed for partition {partition:?}, which is not configured",
                        self.plugins[index].name()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The plug-ins' names, in listed order.
    pub fn plugin_names(&self) -> impl Iterator<Item = &str> {
        self.plugins.iter().map(|p| p.name())
    }

    /// The plug-in named `name`, when it is one of type `T`: a host reads its own plug-in's
    /// state (counters, learned estimates) after a run, without sharing it through atomics.
    ///
    /// ```
    /// use gangway::policy::builtin::{MinRunTime, Spread};
    /// use gangway::policy::Profile;
    /// let profile = Profile::builder().plugin(MinRunTime::new(60_000)).build().unwrap();
    /// let guard = profile.plugin::<MinRunTime>("min_run_time").unwrap();
    /// assert_eq!(guard.min_ms(), 60_000);
    /// assert!(profile.plugin::<Spread>("min_run_time").is_none()); // another type
    /// assert!(profile.plugin::<MinRunTime>("spread").is_none()); // no such name
    /// ```
    pub fn plugin<T: Plugin>(&self, name: &str) -> Option<&T> {
        self.plugins
            .iter()
            .find(|p| p.name() == name)?
            .as_any()
            .downcast_ref::<T>()
    }

    /// Whether any plug-in observes ticks (the engine copies a tick's events only then).
    pub(crate) fn observes(&self) -> bool {
        !self.global.observe.is_empty()
    }

    /// Whether any plug-in prepares passes (the engine copies a tick's applied events only
    /// then).
    pub(crate) fn prepares(&self) -> bool {
        !self.global.prepare.is_empty()
    }

    fn name_of(&self, index: usize) -> String {
        self.plugins[index].name().to_string()
    }

    /// Starts a pass: every plug-in answers again, the partition hooks are resolved for the
    /// state's partitions, and the `prepare` hooks run. Faults recorded since the last tick
    /// came from hooks that reports asked between ticks (`explain`, `priorities`): they are
    /// dropped, so that reading a scheduler never changes what its next tick reports.
    pub(crate) fn prepare(&mut self, context: &PassContext<'_>, events: &[Event]) {
        self.faults.take();
        self.faults.new_pass();
        let names = context.state().partitions.iter().map(|p| &p.name);
        if !names.eq(self.resolved_for.iter()) {
            self.partitions = self.resolve(context.state());
            self.resolved_for = context
                .state()
                .partitions
                .iter()
                .map(|p| p.name.clone())
                .collect();
        }
        for i in self.global.prepare.clone() {
            let name = self.plugins[i].name().to_string();
            let plugin = &mut self.plugins[i];
            self.faults.call(
                i,
                || name,
                Hook::Prepare,
                || plugin.prepare(context, events),
            );
        }
    }

    fn resolve(&self, state: &ClusterState) -> Vec<PartitionHooks> {
        state
            .partitions
            .iter()
            .map(|p| self.hooks_of_partition(&p.name))
            .collect()
    }

    fn hooks_of_partition(&self, partition: &str) -> PartitionHooks {
        let applies = |i: usize, own: bool| match &self.placements[i].partition {
            Some(p) => own && p == partition,
            None => !own,
        };
        let listed = |hook: Hook, own: bool| -> Vec<usize> {
            (0..self.plugins.len())
                .filter(|&i| self.plugins[i].hooks().contains(&hook) && applies(i, own))
                .collect()
        };
        let either = |hook: Hook| {
            let own = listed(hook, true);
            if own.is_empty() {
                listed(hook, false)
            } else {
                own
            }
        };
        let mut filters = listed(Hook::NodeFilter, false);
        filters.extend(listed(Hook::NodeFilter, true));
        let mut vetoes = listed(Hook::VictimVeto, false);
        vetoes.extend(listed(Hook::VictimVeto, true));
        let tiered = |hook: Hook| -> Vec<(usize, usize, f64)> {
            either(hook)
                .into_iter()
                .map(|i| (self.placements[i].tier, i, self.placements[i].weight))
                .collect()
        };
        let mut scorers = tiered(Hook::NodeScore);
        let node_choice = scorers
            .iter()
            .find(|(_, i, _)| Some(*i) == self.node_choice)
            .map(|(tier, _, _)| *tier);
        scorers.retain(|(_, i, _)| Some(*i) != self.node_choice);
        let devices = either(Hook::DeviceChoice);
        let domain_scorers = tiered(Hook::DomainScore);
        let shape_only = filters
            .iter()
            .chain(&devices)
            .chain(scorers.iter().chain(&domain_scorers).map(|(_, i, _)| i))
            .all(|&i| self.plugins[i].dependence() == Dependence::ShapeAndNode);
        PartitionHooks {
            filters,
            scorers,
            devices,
            domain_scorers,
            vetoes,
            victim_order: either(Hook::VictimOrder),
            node_choice,
            shape_only,
        }
    }

    /// The hooks serving partition `index` in this pass.
    pub(crate) fn partition(&self, index: usize) -> Option<&PartitionHooks> {
        self.partitions.get(index)
    }

    /// Whether any plug-in votes on admission.
    pub(crate) fn votes_on_admission(&self) -> bool {
        !self.global.admission.is_empty()
    }

    /// The first deny among the admission votes on `job`.
    pub(crate) fn admission(&self, job: JobView<'_>, context: &PassContext<'_>) -> Option<String> {
        self.global.admission.iter().find_map(|&i| {
            let vote = self.faults.call(
                i,
                || self.name_of(i),
                Hook::Admission,
                || self.plugins[i].admit(job, context),
            );
            match vote {
                Some(Vote::Deny(reason)) => Some(format!("{}: {reason}", self.name_of(i))),
                _ => None,
            }
        })
    }

    /// The job's order keys (a silenced plug-in's slot is 0).
    pub(crate) fn order_keys(&self, job: JobView<'_>, context: &PassContext<'_>) -> OrderKeys {
        let mut keys = [0; MAX_ORDER_KEYS];
        for (slot, &i) in keys.iter_mut().zip(&self.global.order) {
            let key = || self.plugins[i].order_key(job, context);
            *slot = if self.global.order_built_in {
                // The built-ins never fault: the guard (a panic catcher per job and pass) is
                // spared.
                key()
            } else {
                self.faults
                    .call(i, || self.name_of(i), Hook::Order, key)
                    .unwrap_or(0)
            };
        }
        keys
    }

    /// Whether every order plug-in's key is fixed for the length of a pass: each is the
    /// built-in multifactor or shortest-first, whose keys read only the job, the pass's time
    /// and figures and the configuration (none of which a start or a preemption changes) and
    /// never fault. Then a key computed once in a pass may be kept for the rest of it.
    pub(crate) fn order_keys_fixed_in_pass(&self) -> bool {
        self.global.order_built_in
    }

    /// Whether every victim veto and victim order plug-in is a built-in that reads of the
    /// preemptor at most its partition (which also chooses the hooks asked), keeps no state
    /// and never faults: then two preemptors of one partition meet the same vetoes, with the
    /// same ends, on every victim.
    pub(crate) fn victim_plugins_read_partition_only(&self) -> bool {
        self.global.victims_built_in
    }

    /// Where the victim order of `hooks` reads whether the victim's queue borrows (the slot
    /// of the built-in `borrowing_first`), the one built-in victim key that can change within
    /// a pass; `None` where it does not.
    pub(crate) fn borrowing_key_slot(&self, hooks: &PartitionHooks) -> Option<usize> {
        use crate::policy::builtin::BorrowingFirst;
        hooks
            .victim_order
            .iter()
            .position(|&i| self.plugins[i].as_any().is::<BorrowingFirst>())
    }

    /// Whether a running job's order keys stay the same from pass to pass while its base
    /// priority, its time limit and the configuration do: every order plug-in is the built-in
    /// shortest-first (the time limit) or a multifactor that reads only the job
    /// ([`crate::policy::builtin::Multifactor`]: no age, fair-share or job-size weight under
    /// the `configured` weights).
    pub(crate) fn order_keys_fixed_across_passes(&self, configured: &PriorityWeights) -> bool {
        use crate::policy::builtin::{Multifactor, ShortestFirst};
        self.global.order_built_in
            && self.global.order.iter().all(|&i| {
                let plugin = self.plugins[i].as_any();
                plugin.is::<ShortestFirst>()
                    || plugin
                        .downcast_ref::<Multifactor>()
                        .is_some_and(|m| m.reads_only_the_job(configured))
            })
    }

    /// Whether every victim plug-in answers about a running job the same at every pass while
    /// its run, base priority and the configuration stay, except for a veto with an end, which
    /// holds until that end: the victim plug-ins are built-ins
    /// ([`Profile::victim_plugins_read_partition_only`]) other than least-lost-work (its key
    /// grows with the time since a checkpoint). Borrowing-first reads the queues' usage, so a
    /// caller also needs the cluster to have no quota tree (then it keys every job alike). Of
    /// the others, the tier guard and lower-tier-first read the
    /// configuration's tiers, lower-priority-first the base priority, newest-first the run's
    /// start, and min-run-time vetoes a run until its guaranteed time is over.
    pub(crate) fn victim_plugins_fixed_across_passes(&self) -> bool {
        self.global.victims_built_in && self.global.victims_time_free
    }

    /// Whether a plug-in that keyed this pass's order was silenced since: its slot must then
    /// be 0 for every job, so the keys compare alike.
    pub(crate) fn order_silenced(&self) -> Vec<usize> {
        self.global
            .order
            .iter()
            .enumerate()
            .filter(|(_, i)| self.faults.silenced(**i))
            .map(|(slot, _)| slot)
            .collect()
    }

    /// The order plug-ins' explanations of the job's keys: (plug-in, key, terms).
    pub(crate) fn explain_keys(
        &self,
        job: JobView<'_>,
        context: &PassContext<'_>,
    ) -> Vec<KeyTerms> {
        self.global
            .order
            .iter()
            .filter_map(|&i| {
                let plugin = &self.plugins[i];
                let name = || self.name_of(i);
                let key = self
                    .faults
                    .call(i, name, Hook::Order, || plugin.order_key(job, context))?;
                let terms = self
                    .faults
                    .call(i, name, Hook::Order, || plugin.explain_key(job, context))?;
                Some(KeyTerms {
                    plugin: self.name_of(i),
                    key,
                    terms,
                })
            })
            .collect()
    }

    /// `Err((plug-in, reason))` from the first filter of `hooks` that rejects the node.
    pub(crate) fn filter(
        &self,
        hooks: &PartitionHooks,
        (job, group): (JobView<'_>, usize),
        node: NodeView<'_>,
        context: &PassContext<'_>,
    ) -> Result<(), (usize, String)> {
        for &i in &hooks.filters {
            let answer = self.faults.call(
                i,
                || self.name_of(i),
                Hook::NodeFilter,
                || self.plugins[i].filter_node(job, group, node, context),
            );
            if let Some(Err(reason)) = answer {
                return Err((i, reason));
            }
        }
        Ok(())
    }

    /// The node's scores by tier (a non-finite sum is the worst; see `tiered`).
    pub(crate) fn scores(
        &self,
        hooks: &PartitionHooks,
        (job, group): (JobView<'_>, usize),
        node: NodeView<'_>,
        context: &PassContext<'_>,
    ) -> NodeScores {
        let about = || format!("job {} group {group} on node {}", job.name(), node.name());
        self.tiered(&hooks.scorers, Hook::NodeScore, about, |plugin| {
            plugin.score_node(job, group, node, context)
        })
    }

    /// The domain's scores by tier (a non-finite sum is the worst; see `tiered`).
    pub(crate) fn domain_scores(
        &self,
        hooks: &PartitionHooks,
        job: JobView<'_>,
        domain: DomainView<'_>,
        context: &PassContext<'_>,
    ) -> NodeScores {
        let about = || format!("job {} in {} {}", job.name(), domain.level, domain.label);
        self.tiered(&hooks.domain_scorers, Hook::DomainScore, about, |plugin| {
            plugin.score_domain(job, domain, context)
        })
    }

    /// Weighted sums by tier of `score` over `scorers` (tier, plug-in, weight), each tier's
    /// terms added in listed order. A tier is the worst (`-∞`) when one of its answers is not
    /// finite (a [`FaultKind::NonFinite`] of that plug-in) or when adding a term makes its sum
    /// overflow (a [`FaultKind::Overflow`] of the plug-in whose term it was); each plug-in's
    /// first such fault of the pass is reported. `about` says what was scored.
    fn tiered(
        &self,
        scorers: &[(usize, usize, f64)],
        hook: Hook,
        about: impl Fn() -> String,
        score: impl Fn(&dyn Plugin) -> f64,
    ) -> NodeScores {
        let mut scores = [0.0; MAX_SCORE_TIERS];
        for &(tier, i, weight) in scorers {
            let answer = self
                .faults
                .call(i, || self.name_of(i), hook, || score(&*self.plugins[i]));
            let Some(answer) = answer else { continue };
            if !answer.is_finite() {
                self.faults.bad_score(
                    i,
                    || self.name_of(i),
                    hook,
                    FaultKind::NonFinite,
                    || format!("scored {answer} for {}", about()),
                );
                scores[tier] = f64::NEG_INFINITY;
                continue;
            }
            let before = scores[tier];
            scores[tier] += weight * answer;
            if before.is_finite() && !scores[tier].is_finite() {
                self.faults.bad_score(
                    i,
                    || self.name_of(i),
                    hook,
                    FaultKind::Overflow,
                    || {
                        format!(
                            "scored {answer:e} (weight {weight}) for {}: tier {tier}'s sum \
                             overflowed",
                            about()
                        )
                    },
                );
            }
        }
        scores.map(finite_or_worst)
    }

    /// The first valid device pick of the device plug-ins of `hooks` for `task`.
    pub(crate) fn choose_devices(
        &self,
        hooks: &PartitionHooks,
        task: DeviceTask<'_>,
        context: &PassContext<'_>,
    ) -> Option<u128> {
        let node = task.node.record();
        hooks.devices.iter().find_map(|&i| {
            self.faults
                .call(
                    i,
                    || self.name_of(i),
                    Hook::DeviceChoice,
                    || self.plugins[i].choose_devices(task, context),
                )
                .flatten()
                .filter(|&mask| valid_pick(node, task.room, task.need, mask))
        })
    }

    /// The first veto of `hooks` (the preemptor's partition's, then the victim's) that protects
    /// `victim` from `preemptor`.
    pub(crate) fn veto(
        &self,
        hooks: [&PartitionHooks; 2],
        preemptor: JobView<'_>,
        victim: JobView<'_>,
        context: &PassContext<'_>,
    ) -> Option<Veto> {
        // Each plug-in asked once, at its first place in the two lists.
        let listed = |i: usize, list: usize, at: usize| {
            hooks[..list].iter().any(|h| h.vetoes.contains(&i))
                || hooks[list].vetoes[..at].contains(&i)
        };
        let asked = hooks.iter().enumerate().flat_map(|(list, h)| {
            h.vetoes
                .iter()
                .enumerate()
                .map(move |(at, &i)| (list, at, i))
        });
        for (list, at, i) in asked {
            if listed(i, list, at) {
                continue;
            }
            let veto = || self.plugins[i].veto_victim(preemptor, victim, context);
            let answer = if self.global.victims_built_in {
                // The built-ins never fault: the guard (a panic catcher per call) is spared.
                veto()
            } else {
                self.faults
                    .call(i, || self.name_of(i), Hook::VictimVeto, veto)
                    .flatten()
            };
            if let Some(veto) = answer {
                return Some(veto);
            }
        }
        None
    }

    /// The victim's keys under the victim orders of `hooks` (a silenced plug-in's key is 0).
    pub(crate) fn victim_keys(
        &self,
        hooks: &PartitionHooks,
        preemptor: JobView<'_>,
        victim: JobView<'_>,
        context: &PassContext<'_>,
    ) -> VictimKeys {
        let mut keys = [0; MAX_VICTIM_KEYS];
        for (slot, &i) in keys.iter_mut().zip(&hooks.victim_order) {
            *slot = self.victim_key_of(i, preemptor, victim, context);
        }
        keys
    }

    /// The victim's key in slot `slot` of the victim order of `hooks` (0 past its end, or
    /// where the plug-in is silenced).
    pub(crate) fn victim_key_at(
        &self,
        hooks: &PartitionHooks,
        slot: usize,
        preemptor: JobView<'_>,
        victim: JobView<'_>,
        context: &PassContext<'_>,
    ) -> i64 {
        hooks
            .victim_order
            .get(slot)
            .map_or(0, |&i| self.victim_key_of(i, preemptor, victim, context))
    }

    /// Plug-in `i`'s victim key (0 where it is silenced).
    fn victim_key_of(
        &self,
        i: usize,
        preemptor: JobView<'_>,
        victim: JobView<'_>,
        context: &PassContext<'_>,
    ) -> i64 {
        let key = || self.plugins[i].victim_key(preemptor, victim, context);
        if self.global.victims_built_in {
            // The built-ins never fault: the guard is spared.
            key()
        } else {
            self.faults
                .call(i, || self.name_of(i), Hook::VictimOrder, key)
                .unwrap_or(0)
        }
    }

    /// Whether the profile lists a backfill rule.
    pub(crate) fn has_backfill_rules(&self) -> bool {
        !self.global.backfill.is_empty()
    }

    /// Whether every backfill rule lets `candidate` pass the blocked `head` now (a silenced
    /// rule abstains, which admits).
    pub(crate) fn may_backfill(
        &self,
        head: HeadView<'_>,
        candidate: JobView<'_>,
        context: &PassContext<'_>,
    ) -> bool {
        self.global.backfill.iter().all(|&i| {
            self.faults
                .call(
                    i,
                    || self.name_of(i),
                    Hook::Backfill,
                    || self.plugins[i].may_backfill(head, candidate, context),
                )
                .unwrap_or(true)
        })
    }

    /// The earliest wake-up any plug-in asks for after `now`.
    pub(crate) fn wake_up(&self, context: &PassContext<'_>) -> Option<u64> {
        let now = context.now_ms();
        self.global
            .wake_up
            .iter()
            .filter_map(|&i| {
                self.faults
                    .call(
                        i,
                        || self.name_of(i),
                        Hook::WakeUp,
                        || self.plugins[i].wake_up(context),
                    )
                    .flatten()
            })
            .filter(|&t| t > now)
            .min()
    }

    /// Shows the tick to the observers.
    /// Every observer sees the tick, also one that panicked earlier in it (a stateful
    /// plug-in must not miss a tick).
    pub(crate) fn observe(&mut self, now_ms: u64, events: &[Event], outcome: &TickOutcome) {
        for i in self.global.observe.clone() {
            let name = self.plugins[i].name().to_string();
            let plugin = &mut self.plugins[i];
            self.faults.run(
                i,
                || name,
                Hook::Observe,
                || plugin.observe(now_ms, events, outcome),
            );
        }
    }

    /// Whether a plug-in panicked in this pass (and abstains until the next).
    pub(crate) fn any_silenced(&self) -> bool {
        self.faults.any_silenced()
    }

    /// The faults since the last call.
    pub(crate) fn take_faults(&self) -> Vec<PluginFault> {
        self.faults.take()
    }

    /// Every stateful plug-in's saved state, by name. A plug-in that panicked in the last
    /// pass is asked too (its state is what the next pass starts from); one whose
    /// `save_state` panics saves nothing.
    pub fn save_states(&self) -> Vec<(String, serde_json::Value)> {
        self.plugins
            .iter()
            .filter_map(|plugin| {
                let saved = catch_quietly(|| plugin.save_state());
                Some((plugin.name().to_string(), saved.ok().flatten()?))
            })
            .collect()
    }

    /// Loads saved states into the plug-ins of the same names; a state naming no plug-in of
    /// this profile, or one its plug-in refuses, is an error naming it.
    pub fn load_states(
        &mut self,
        states: Vec<(String, serde_json::Value)>,
    ) -> Result<(), (String, String)> {
        for (name, state) in states {
            let Some(plugin) = self.plugins.iter_mut().find(|p| p.name() == name) else {
                return Err((name, "no plug-in of this name in the profile".to_string()));
            };
            let loaded = catch_quietly(|| plugin.load_state(state));
            match loaded {
                Ok(Ok(())) => {}
                Ok(Err(message)) => return Err((name, message)),
                Err(message) => {
                    return Err((name, format!("failed while loading its state: {message}")));
                }
            }
        }
        Ok(())
    }
}

/// One order plug-in's key for one job, with the terms it explains it by (the `priorities`
/// report's breakdown).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub struct KeyTerms {
    /// The plug-in.
    pub plugin: String,
    /// Its key.
    pub key: i64,
    /// Its terms (name, value), e.g. multifactor's weighted factors.
    pub terms: Vec<(String, f64)>,
}

/// Whether `plugin` is the built-in node choice, which the engine computes itself.
fn is_node_choice(plugin: &dyn Plugin) -> bool {
    plugin
        .as_any()
        .is::<crate::policy::builtin::LeastFragmenting>()
}

/// A score as the engine ranks it: a non-finite one is the worst.
fn finite_or_worst(score: f64) -> f64 {
    if score.is_finite() {
        score
    } else {
        f64::NEG_INFINITY
    }
}

/// Compares two nodes' scores: the better first.
pub(crate) fn better_first(a: &NodeScores, b: &NodeScores) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        match y.total_cmp(x) {
            Ordering::Equal => continue,
            other => return other,
        }
    }
    Ordering::Equal
}
