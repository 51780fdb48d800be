//! The plug-in trait: one method per decision point, each with a default that abstains. A
//! plug-in's hooks are derived from the methods it defines (`#[plugin]`), or from the closures
//! it was given ([`crate::policy::FnPlugin`]): never declared by hand.

use std::any::Any;

use serde::{Deserialize, Serialize};

use crate::decision::TickOutcome;
use crate::event::Event;
use crate::model::ids::DomainId;
use crate::model::resources::NodeAmounts;
use crate::model::shape::GpuNeed;
use crate::placement::{FreeTotals, ShapeMix};
use crate::policy::context::PassContext;
use crate::state::{JobView, NodeView};

/// A decision point of the pass (docs/policies.md has the table).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Hook {
    /// [`Plugin::prepare`]: once per pass, before any other hook.
    Prepare,
    /// [`Plugin::admit`]: a vote per pending job; any deny keeps the job waiting.
    Admission,
    /// [`Plugin::order_key`]: a sort key per job; keys combine lexicographically.
    Order,
    /// [`Plugin::filter_node`]: whether a task group may use a node; ANDed.
    NodeFilter,
    /// [`Plugin::score_node`]: how good a node is for a task group; tiers, weighted sums.
    NodeScore,
    /// [`Plugin::choose_devices`]: which free devices of a node one task takes; the first
    /// valid pick wins.
    DeviceChoice,
    /// [`Plugin::score_domain`]: how good a topology domain is for a gang; tiers, weighted
    /// sums.
    DomainScore,
    /// [`Plugin::veto_victim`]: a running job this preemptor may not preempt; ANDed.
    VictimVeto,
    /// [`Plugin::victim_key`]: the order in which candidate victims are taken; lexicographic.
    VictimOrder,
    /// [`Plugin::may_backfill`]: whether a job behind the blocked head may start now; ANDed.
    Backfill,
    /// [`Plugin::wake_up`]: a time the plug-in wants the next tick by.
    WakeUp,
    /// [`Plugin::observe`]: each tick's events and decisions.
    Observe,
}

impl Hook {
    /// The hook's name as `explain` and the tick outcome's faults write it.
    ///
    /// ```
    /// assert_eq!(gangway::policy::Hook::NodeScore.name(), "node_score");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Hook::Prepare => "prepare",
            Hook::Admission => "admission",
            Hook::Order => "order",
            Hook::NodeFilter => "node_filter",
            Hook::NodeScore => "node_score",
            Hook::DeviceChoice => "device_choice",
            Hook::DomainScore => "domain_score",
            Hook::VictimVeto => "victim_veto",
            Hook::VictimOrder => "victim_order",
            Hook::Backfill => "backfill",
            Hook::WakeUp => "wake_up",
            Hook::Observe => "observe",
        }
    }

    /// Whether a plug-in with this hook cannot be listed for one partition: order, admission
    /// and backfill, since all partitions are walked in one order behind one head. Placement
    /// and victim hooks
    /// may differ per partition; the prepare, wake-up and observe hooks of a plug-in listed
    /// for a partition serve the whole pass.
    ///
    /// ```
    /// use gangway::policy::Hook;
    /// assert!(Hook::Order.global_only() && !Hook::NodeScore.global_only());
    /// ```
    pub fn global_only(self) -> bool {
        matches!(self, Hook::Order | Hook::Admission | Hook::Backfill)
    }
}

/// The blocked head a backfill rule ([`Plugin::may_backfill`]) protects: the first job of
/// the pass's order that is blocked by resources (within its quota).
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct HeadView<'a> {
    /// The head.
    pub job: JobView<'a>,
    /// Its estimated start. Modes `before_head_estimate` and `rule`: estimated once, when it
    /// became the head, from the running jobs' requested ends, and never updated. Modes `easy`
    /// and `conservative`: its reservation's start in this pass. `None`: it cannot be placed
    /// at any time the running jobs' ends give (nodes it needs are down, say).
    pub estimated_start_ms: Option<u64>,
    /// When it became the head (modes `before_head_estimate` and `rule`; otherwise now).
    pub head_since_ms: u64,
}

/// One task whose devices a device-choice plug-in picks.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct DeviceTask<'a> {
    /// The job.
    pub job: JobView<'a>,
    /// Its task group.
    pub group: usize,
    /// The node (its GPU count, NVLink islands and MIG layout are in its record).
    pub node: NodeView<'a>,
    /// What is still free on the node for this task (earlier tasks of the gang taken out).
    pub room: &'a NodeAmounts,
    /// What the task needs of the GPUs.
    pub need: GpuNeed,
    /// The cluster's task-shape mix, which fragmentation-aware choices measure against.
    pub mix: &'a ShapeMix,
}

/// One topology domain a domain scorer rates.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct DomainView<'a> {
    /// Its id. Domains are numbered in the order they first appeared (a domain stays, empty,
    /// when its last node goes), from the configuration on, until a reconfiguration or a
    /// node of a new GPU model rebuilds the tree; a snapshot keeps the numbering, so a
    /// restored scheduler shows the same ids.
    pub id: DomainId,
    /// Its level's name (`rack`, `block`, ...).
    pub level: &'a str,
    /// Its label value (the rack's name).
    pub label: &'a str,
    /// What its nodes have free for the gang.
    pub free: &'a FreeTotals,
}

/// A victim veto: why a preemptor may not preempt a running job and, when the plug-in knows
/// it, the time the veto ends.
///
/// With [`Veto::until`], a preemptor the veto held back is retried then: the engine merges the
/// earliest such time (after the pass's time) of the vetoes that held back a preemptor which
/// then found no victims into the tick's `next_wakeup_ms`, so the plug-in need not ask for
/// that tick in [`Plugin::wake_up`]. A string converts into a veto without an end.
///
/// ```
/// use gangway::policy::Veto;
/// let veto = Veto::new("has run 1 minute of its guaranteed 10").until(600_000);
/// assert_eq!((veto.reason(), veto.until_ms()), ("has run 1 minute of its guaranteed 10", Some(600_000)));
/// let plain: Veto = "never".into();
/// assert_eq!(plain.until_ms(), None);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Veto {
    reason: String,
    until_ms: Option<u64>,
}

impl Veto {
    /// A veto for `reason`, with no known end.
    pub fn new(reason: impl Into<String>) -> Self {
        Veto {
            reason: reason.into(),
            until_ms: None,
        }
    }

    /// The veto ends at `until_ms` (the plug-in lets the preemption happen from then on).
    pub fn until(mut self, until_ms: u64) -> Self {
        self.until_ms = Some(until_ms);
        self
    }

    /// Why the preemption is vetoed.
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// When the veto ends, if the plug-in said.
    pub fn until_ms(&self) -> Option<u64> {
        self.until_ms
    }
}

impl From<String> for Veto {
    fn from(reason: String) -> Self {
        Veto::new(reason)
    }
}

impl From<&str> for Veto {
    fn from(reason: &str) -> Self {
        Veto::new(reason)
    }
}

/// An admission plug-in's vote on one pending job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Vote {
    /// The job may be considered.
    Permit,
    /// The job waits (reason `admission`), and `explain` shows this message.
    Deny(String),
    /// No opinion.
    Abstain,
}

/// What a plug-in's placement answers (filter and score) depend on. The engine remembers
/// placements that failed for one gang shape and keeps last pass's reservations; both are valid
/// only when every filter and scorer of the partition answers from the task shape and the node
/// alone.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Dependence {
    /// The answer depends only on the task group's shape and on the node (its capacity, free
    /// amounts, labels, model and fault history): jobs of the same shape get the same answers.
    /// A device plug-in's pick must also read the node only through its make and free amounts:
    /// the least-fragmenting node choice scores nodes alike in those once per pass
    /// (`placement::score_memo`); a pick that reads labels, names or faults declares
    /// [`Dependence::Anything`].
    ShapeAndNode,
    /// Anything else (the job's identity, its account, the time, other jobs). The engine turns
    /// its shape memos and kept reservations off for the partitions this plug-in serves.
    #[default]
    Anything,
}

/// Clones a boxed plug-in and lends it as [`Any`]; implemented for every `Plugin + Clone`, so
/// a plug-in only derives `Clone`. A scheduler is cloned to answer `what_if` questions, plug-in
/// state included; [`crate::policy::Profile::plugin`] finds a plug-in of a known type.
pub trait PluginClone {
    /// A copy of the plug-in, with its state.
    fn clone_box(&self) -> Box<dyn Plugin>;

    /// The plug-in as [`Any`], to downcast to its own type.
    fn as_any(&self) -> &dyn Any;
}

impl<T: Plugin + Clone> PluginClone for T {
    fn clone_box(&self) -> Box<dyn Plugin> {
        Box::new(self.clone())
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The hooks a plug-in implements, derived and never written by hand: `#[plugin]` on the
/// `impl Plugin for T` block derives them from the hook methods it defines, and
/// [`crate::policy::FnPlugin`] from the closures it was given. Not part of the API; a type that
/// implements it otherwise may be refused by a later version.
#[doc(hidden)]
pub mod __private {
    use super::Hook;

    /// The hooks of a plug-in, in [`Hook`]'s order.
    #[diagnostic::on_unimplemented(
        message = "the hooks of plug-in `{Self}` are not derived",
        label = "put `#[gangway::policy::plugin]` on its `impl Plugin for {Self}` block",
        note = "a plug-in's hooks are derived from the hook methods its impl defines \
                (docs/policies.md, \"Hooks are derived\"), or use `gangway::policy::FnPlugin`"
    )]
    pub trait DerivedHooks {
        /// The hooks, in [`Hook`]'s order.
        fn derived_hooks(&self) -> &[Hook];
    }
}

/// A scheduling policy at one or more decision points.
///
/// Every hook has a default that abstains; a plug-in defines the ones it implements, and the
/// engine calls only those. Its hooks are derived from the methods its `impl` defines by the
/// [`plugin`](crate::policy::plugin) attribute, which every `impl Plugin` carries, so they
/// cannot disagree with what it does (a plug-in made of closures is an
/// [`FnPlugin`](crate::policy::FnPlugin)). Hooks see read-only views; the engine referees
/// every answer (capacity, gangs, quotas, reservations are never at a plug-in's mercy), and a
/// hook that panics or reports a fault ([`crate::policy::report_fault`]) is caught, reported in
/// the tick's outcome, and treated as abstaining for the rest of that pass.
///
/// ```
/// use gangway::policy::{Hook, PassContext, Plugin, plugin};
/// use gangway::state::JobView;
///
/// /// Shortest time limit first.
/// #[derive(Clone)]
/// struct Shortest;
/// #[plugin]
/// impl Plugin for Shortest {
///     fn name(&self) -> &str { "shortest" }
///     fn order_key(&self, job: JobView<'_>, _: &PassContext<'_>) -> i64 {
///         -(job.spec().time_limit_ms.min(i64::MAX as u64) as i64)
///     }
/// }
/// assert_eq!((&Shortest as &dyn Plugin).hooks(), [Hook::Order]);
/// let profile = gangway::policy::Profile::builder().plugin(Shortest).build().unwrap();
/// assert_eq!(profile.plugin_names().collect::<Vec<_>>(), ["shortest"]);
/// ```
///
/// Without the attribute the `impl` does not compile; an `explain_key` without its `order_key`,
/// and a `fn hooks` in it, are refused:
///
/// ```compile_fail
/// use gangway::policy::{Hook, Plugin};
/// #[derive(Clone)]
/// struct Undeclared;
/// impl Plugin for Undeclared {
///     fn name(&self) -> &str { "undeclared" }
/// }
/// ```
///
/// ```compile_fail
/// use gangway::policy::{PassContext, Plugin, plugin};
/// use gangway::state::JobView;
/// #[derive(Clone)]
/// struct Unexplained;
/// #[plugin]
/// impl Plugin for Unexplained {
///     fn name(&self) -> &str { "unexplained" }
///     // The terms of a key it does not give.
///     fn explain_key(&self, _: JobView<'_>, _: &PassContext<'_>) -> Vec<(String, f64)> { vec![] }
/// }
/// ```
///
/// ```compile_fail
/// use gangway::policy::{Hook, Plugin, plugin};
/// #[derive(Clone)]
/// struct Liar;
/// #[plugin]
/// impl Plugin for Liar {
///     fn name(&self) -> &str { "liar" }
///     fn hooks(&self) -> &[Hook] { &[Hook::Order] }
/// }
/// ```
pub trait Plugin: PluginClone + __private::DerivedHooks + Send + Sync + 'static {
    /// Its name: unique within a profile, the key of its saved state, and what faults and
    /// `explain` name it by.
    fn name(&self) -> &str;

    /// Once per pass, before any other hook: cache what the pass needs (the context holds the
    /// cluster totals, the multifactor normalisers and the fair-share factors). `events` are
    /// the tick's events that were applied (those it rejected left out), in the order the host
    /// sent them: a plug-in reads what ended, started or arrived from them instead of diffing
    /// the state (for the pass of a `what_if` question: the asked-about job's submit).
    fn prepare(&mut self, _context: &PassContext<'_>, _events: &[Event]) {}

    /// A vote on a pending job, every pass. Any deny keeps it waiting (and it blocks nobody);
    /// a permit never overrides quotas, limits, holds or dependencies.
    fn admit(&self, _job: JobView<'_>, _context: &PassContext<'_>) -> Vote {
        Vote::Abstain
    }

    /// The job's sort key: higher first. Asked of pending jobs (the order of the pass) and, for
    /// order-based preemption, of running ones.
    fn order_key(&self, _job: JobView<'_>, _context: &PassContext<'_>) -> i64 {
        0
    }

    /// The terms of the job's key, for `explain`'s priority breakdown (name, value).
    fn explain_key(&self, _job: JobView<'_>, _context: &PassContext<'_>) -> Vec<(String, f64)> {
        Vec::new()
    }

    /// Whether task group `group` of `job` may use `node`: `Err` with a reason when not.
    fn filter_node(
        &self,
        _job: JobView<'_>,
        _group: usize,
        _node: NodeView<'_>,
        _context: &PassContext<'_>,
    ) -> Result<(), String> {
        Ok(())
    }

    /// How good `node` is for task group `group` of `job`: higher is better; a non-finite score
    /// counts as the worst.
    fn score_node(
        &self,
        _job: JobView<'_>,
        _group: usize,
        _node: NodeView<'_>,
        _context: &PassContext<'_>,
    ) -> f64 {
        0.0
    }

    /// The devices one task takes on a node, as a bitmask of device indices (of MIG slice
    /// indices for a MIG task): exactly the devices one task needs, all free in `task.room`.
    /// `None` (or a pick that is not valid) leaves the choice to the next device plug-in, then
    /// to the engine (lowest free devices; the fullest device with room for a fraction).
    fn choose_devices(&self, _task: DeviceTask<'_>, _context: &PassContext<'_>) -> Option<u128> {
        None
    }

    /// How good topology domain `domain` is for `job`'s gang (or its constrained group): higher
    /// is better; a non-finite score counts as the worst. Ties keep the engine's order (the
    /// domain with the least free capacity that holds the gang first).
    fn score_domain(
        &self,
        _job: JobView<'_>,
        _domain: DomainView<'_>,
        _context: &PassContext<'_>,
    ) -> f64 {
        0.0
    }

    /// `Some(veto)` when `preemptor` may not preempt the running job `victim`; a veto that
    /// knows its end ([`Veto::until`]) gets the preemptor retried then.
    fn veto_victim(
        &self,
        _preemptor: JobView<'_>,
        _victim: JobView<'_>,
        _context: &PassContext<'_>,
    ) -> Option<Veto> {
        None
    }

    /// The order in which candidate victims are taken: lower first.
    fn victim_key(
        &self,
        _preemptor: JobView<'_>,
        _victim: JobView<'_>,
        _context: &PassContext<'_>,
    ) -> i64 {
        0
    }

    /// Whether `candidate`, a job behind the blocked `head` that fits now (within its quota),
    /// may start now. The rules' answers are ANDed; the engine asks only about jobs it has
    /// placed, so a rule that admits a job that does not fit changes nothing. Asked in every
    /// backfill mode that lets a job pass a blocked head: in `easy` and `conservative` the
    /// reservations still hold (a rule only refuses more), in `rule` the rules alone decide,
    /// in `before_head_estimate` they add to its comparison. A rule that panics abstains
    /// (admits) for the rest of the pass, and is reported in the tick's `plugin_faults`.
    ///
    /// ```
    /// use gangway::policy::{HeadView, PassContext, Plugin, plugin};
    /// use gangway::state::JobView;
    ///
    /// /// RLScheduler's rule, as a plug-in: end strictly before the head's estimate.
    /// #[derive(Clone)]
    /// struct BeforeHead;
    /// #[plugin]
    /// impl Plugin for BeforeHead {
    ///     fn name(&self) -> &str { "before_head" }
    ///     fn may_backfill(&self, head: HeadView<'_>, job: JobView<'_>, ctx: &PassContext<'_>) -> bool {
    ///         let end = ctx.now_ms().saturating_add(job.spec().time_limit_ms);
    ///         head.estimated_start_ms.is_none_or(|start| end < start)
    ///     }
    /// }
    /// let profile = gangway::policy::Profile::builder().plugin(BeforeHead).build().unwrap();
    /// assert_eq!(profile.plugin_names().collect::<Vec<_>>(), ["before_head"]);
    /// ```
    fn may_backfill(
        &self,
        _head: HeadView<'_>,
        _candidate: JobView<'_>,
        _context: &PassContext<'_>,
    ) -> bool {
        true
    }

    /// A time by which the plug-in wants the next tick (merged into `next_wakeup_ms`).
    fn wake_up(&self, _context: &PassContext<'_>) -> Option<u64> {
        None
    }

    /// A tick's events, as the host sent them, and its outcome (decisions, the events it
    /// rejected by position, the next wake-up), after its pass. Faults of this tick's hooks are
    /// not in `outcome` yet.
    fn observe(&mut self, _now_ms: u64, _events: &[Event], _outcome: &TickOutcome) {}

    /// Its state for a snapshot; `None` when it keeps none.
    fn save_state(&self) -> Option<serde_json::Value> {
        None
    }

    /// Loads what [`Plugin::save_state`] saved.
    fn load_state(&mut self, _state: serde_json::Value) -> Result<(), String> {
        Ok(())
    }

    /// What its filter and score answers depend on (default: anything, which turns the
    /// engine's shape memos off where it serves).
    fn dependence(&self) -> Dependence {
        Dependence::Anything
    }
}

impl dyn Plugin {
    /// The hooks it implements, in [`Hook`]'s order: derived from the methods its `impl`
    /// defines (or the closures of an [`FnPlugin`](crate::policy::FnPlugin)); the engine calls
    /// no other.
    ///
    /// ```
    /// use gangway::policy::{Hook, Plugin, builtin::Spread};
    /// assert_eq!((&Spread as &dyn Plugin).hooks(), [Hook::NodeScore]);
    /// ```
    pub fn hooks(&self) -> &[Hook] {
        self.derived_hooks()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::plugin;

    /// Defines every hook method (and the non-hook ones, which add no hook).
    #[derive(Clone)]
    struct Everything;

    #[plugin]
    impl Plugin for Everything {
        fn name(&self) -> &str {
            "everything"
        }
        fn observe(&mut self, _: u64, _: &[Event], _: &TickOutcome) {}
        fn prepare(&mut self, _: &PassContext<'_>, _: &[Event]) {}
        fn admit(&self, _: JobView<'_>, _: &PassContext<'_>) -> Vote {
            Vote::Abstain
        }
        fn order_key(&self, _: JobView<'_>, _: &PassContext<'_>) -> i64 {
            0
        }
        fn explain_key(&self, _: JobView<'_>, _: &PassContext<'_>) -> Vec<(String, f64)> {
            Vec::new()
        }
        fn filter_node(
            &self,
            _: JobView<'_>,
            _: usize,
            _: NodeView<'_>,
            _: &PassContext<'_>,
        ) -> Result<(), String> {
            Ok(())
        }
        fn score_node(
            &self,
            _: JobView<'_>,
            _: usize,
            _: NodeView<'_>,
            _: &PassContext<'_>,
        ) -> f64 {
            0.0
        }
        fn choose_devices(&self, _: DeviceTask<'_>, _: &PassContext<'_>) -> Option<u128> {
            None
        }
        fn score_domain(&self, _: JobView<'_>, _: DomainView<'_>, _: &PassContext<'_>) -> f64 {
            0.0
        }
        fn veto_victim(&self, _: JobView<'_>, _: JobView<'_>, _: &PassContext<'_>) -> Option<Veto> {
            None
        }
        fn victim_key(&self, _: JobView<'_>, _: JobView<'_>, _: &PassContext<'_>) -> i64 {
            0
        }
        fn may_backfill(&self, _: HeadView<'_>, _: JobView<'_>, _: &PassContext<'_>) -> bool {
            true
        }
        fn wake_up(&self, _: &PassContext<'_>) -> Option<u64> {
            None
        }
        fn save_state(&self) -> Option<serde_json::Value> {
            None
        }
        fn dependence(&self) -> Dependence {
            Dependence::Anything
        }
    }

    /// Defines no hook method.
    #[derive(Clone)]
    struct Nothing;

    #[plugin]
    impl Plugin for Nothing {
        fn name(&self) -> &str {
            "nothing"
        }
    }

    #[test]
    fn the_attribute_derives_one_hook_per_hook_method_in_hook_order() {
        let every = [
            Hook::Prepare,
            Hook::Admission,
            Hook::Order,
            Hook::NodeFilter,
            Hook::NodeScore,
            Hook::DeviceChoice,
            Hook::DomainScore,
            Hook::VictimVeto,
            Hook::VictimOrder,
            Hook::Backfill,
            Hook::WakeUp,
            Hook::Observe,
        ];
        assert!(every.is_sorted());
        assert_eq!((&Everything as &dyn Plugin).hooks(), every);
        assert!((&Nothing as &dyn Plugin).hooks().is_empty());
    }
}
