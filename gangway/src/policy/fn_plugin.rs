//! [`FnPlugin`]: a plug-in made of closures, whose hooks are exactly the closures it was given.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::decision::TickOutcome;
use crate::event::Event;
use crate::policy::{
    __private, Dependence, DeviceTask, DomainView, HeadView, Hook, PassContext, Plugin, Veto, Vote,
};
use crate::state::{JobView, NodeView};

type JobFn<T> = Arc<dyn Fn(JobView<'_>, &PassContext<'_>) -> T + Send + Sync>;
type NodeFn<T> = Arc<dyn Fn(JobView<'_>, usize, NodeView<'_>, &PassContext<'_>) -> T + Send + Sync>;
type PairFn<T> = Arc<dyn Fn(JobView<'_>, JobView<'_>, &PassContext<'_>) -> T + Send + Sync>;
type DeviceFn = Arc<dyn Fn(DeviceTask<'_>, &PassContext<'_>) -> Option<u128> + Send + Sync>;
type DomainFn = Arc<dyn Fn(JobView<'_>, DomainView<'_>, &PassContext<'_>) -> f64 + Send + Sync>;
type BackfillFn = Arc<dyn Fn(HeadView<'_>, JobView<'_>, &PassContext<'_>) -> bool + Send + Sync>;
type WakeFn = Arc<dyn Fn(&PassContext<'_>) -> Option<u64> + Send + Sync>;
type PrepareFn = Arc<dyn Fn(&PassContext<'_>, &[Event]) + Send + Sync>;
type ObserveFn = Arc<dyn Fn(u64, &[Event], &TickOutcome) + Send + Sync>;
type SaveFn = Arc<dyn Fn() -> Option<Value> + Send + Sync>;
type LoadFn = Arc<dyn Fn(Value) -> Result<(), String> + Send + Sync>;
type MakeFn = Arc<dyn Fn() -> FnPlugin + Send + Sync>;

/// A plug-in made of closures, built hook by hook: its hooks are exactly the closures given,
/// so what it declares cannot disagree with what it does. Each closure takes the arguments of
/// the [`Plugin`] method of the same name (without `&self`); giving a hook twice keeps the
/// last closure.
///
/// The closures are shared by the plug-in's clones (a scheduler is cloned to answer
/// `what_if`). A plug-in with state of its own (say, a counter its hooks advance) builds it
/// with [`FnPlugin::stateful`]: each copy then has its own state, saved in snapshots by
/// [`FnPlugin::save_state`] and restored by [`FnPlugin::load_state`]. A closure reports a
/// failure without panicking with [`crate::policy::report_fault`].
///
/// ```
/// use gangway::policy::{FnPlugin, Hook, Profile, Vote};
/// let plugin = FnPlugin::new("small_first")
///     .order_key(|job, _| -i64::from(job.spec().groups[0].count))
///     .admit(|job, _| match job.name().starts_with("x") {
///         true => Vote::Deny("no x jobs".into()),
///         false => Vote::Abstain,
///     });
/// assert_eq!(plugin.hooks(), [Hook::Admission, Hook::Order]);
/// let profile = Profile::builder().plugin(plugin).build().unwrap();
/// assert_eq!(profile.plugin_names().collect::<Vec<_>>(), ["small_first"]);
/// ```
pub struct FnPlugin {
    name: String,
    hooks: Vec<Hook>,
    dependence: Dependence,
    prepare: Option<PrepareFn>,
    admit: Option<JobFn<Vote>>,
    order_key: Option<JobFn<i64>>,
    explain_key: Option<JobFn<Vec<(String, f64)>>>,
    filter_node: Option<NodeFn<Result<(), String>>>,
    score_node: Option<NodeFn<f64>>,
    choose_devices: Option<DeviceFn>,
    score_domain: Option<DomainFn>,
    veto_victim: Option<PairFn<Option<Veto>>>,
    victim_key: Option<PairFn<i64>>,
    may_backfill: Option<BackfillFn>,
    wake_up: Option<WakeFn>,
    observe: Option<ObserveFn>,
    save_state: Option<SaveFn>,
    load_state: Option<LoadFn>,
    remake: Option<MakeFn>,
}

impl Clone for FnPlugin {
    /// A copy sharing the closures; for a plug-in made by [`FnPlugin::stateful`], a fresh one
    /// with the saved state loaded, so that each copy keeps its own.
    ///
    /// # Panics
    ///
    /// When a stateful plug-in's fresh copy refuses the state the plug-in saved.
    fn clone(&self) -> Self {
        let Some(make) = &self.remake else {
            return FnPlugin {
                name: self.name.clone(),
                hooks: self.hooks.clone(),
                dependence: self.dependence,
                prepare: self.prepare.clone(),
                admit: self.admit.clone(),
                order_key: self.order_key.clone(),
                explain_key: self.explain_key.clone(),
                filter_node: self.filter_node.clone(),
                score_node: self.score_node.clone(),
                choose_devices: self.choose_devices.clone(),
                score_domain: self.score_domain.clone(),
                veto_victim: self.veto_victim.clone(),
                victim_key: self.victim_key.clone(),
                may_backfill: self.may_backfill.clone(),
                wake_up: self.wake_up.clone(),
                observe: self.observe.clone(),
                save_state: self.save_state.clone(),
                load_state: self.load_state.clone(),
                remake: None,
            };
        };
        let mut copy = make();
        copy.remake = Some(Arc::clone(make));
        if let Some(state) = Plugin::save_state(self)
            && let Err(e) = Plugin::load_state(&mut copy, state)
        {
            panic!("plug-in {}: a copy refuses its saved state: {e}", self.name);
        }
        copy
    }
}

impl fmt::Debug for FnPlugin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnPlugin")
            .field("name", &self.name)
            .field("hooks", &self.hooks)
            .field("dependence", &self.dependence)
            .field("stateful", &self.remake.is_some())
            .finish_non_exhaustive()
    }
}

impl FnPlugin {
    /// A plug-in named `name` with no hooks yet.
    ///
    /// ```
    /// let plugin = gangway::policy::FnPlugin::new("empty");
    /// assert!(plugin.hooks().is_empty());
    /// ```
    pub fn new(name: impl Into<String>) -> Self {
        FnPlugin {
            name: name.into(),
            hooks: Vec::new(),
            dependence: Dependence::Anything,
            prepare: None,
            admit: None,
            order_key: None,
            explain_key: None,
            filter_node: None,
            score_node: None,
            choose_devices: None,
            score_domain: None,
            veto_victim: None,
            victim_key: None,
            may_backfill: None,
            wake_up: None,
            observe: None,
            save_state: None,
            load_state: None,
            remake: None,
        }
    }

    /// A plug-in with state of its own: `make` builds it afresh, its closures sharing a state
    /// they own (behind an `Arc`, with the [`FnPlugin::save_state`] and
    /// [`FnPlugin::load_state`] hooks for snapshots). A copy (the engine copies a scheduler to
    /// answer `what_if`) is built afresh by `make` and loaded with the state the plug-in saves,
    /// so no copy changes another's state. The plug-in is `make`'s first build.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicI64, Ordering};
    /// use gangway::policy::{FnPlugin, Hook, Plugin};
    /// let counting = || {
    ///     let calls = Arc::new(AtomicI64::new(0));
    ///     let (seen, saved, loaded) = (calls.clone(), calls.clone(), calls);
    ///     FnPlugin::new("counting")
    ///         .order_key(move |_, _| seen.fetch_add(1, Ordering::Relaxed))
    ///         .save_state(move || Some(serde_json::json!(saved.load(Ordering::Relaxed))))
    ///         .load_state(move |state| {
    ///             let n = state.as_i64().ok_or("expected a number")?;
    ///             loaded.store(n, Ordering::Relaxed);
    ///             Ok(())
    ///         })
    /// };
    /// let mut plugin = FnPlugin::stateful(counting);
    /// assert_eq!(plugin.hooks(), [Hook::Order]);
    /// Plugin::load_state(&mut plugin, serde_json::json!(5)).unwrap();
    /// let mut copy = plugin.clone();
    /// Plugin::load_state(&mut copy, serde_json::json!(9)).unwrap();
    /// assert_eq!(Plugin::save_state(&plugin), Some(serde_json::json!(5))); // its own state
    /// assert_eq!(Plugin::save_state(&copy), Some(serde_json::json!(9)));
    /// ```
    pub fn stateful(make: impl Fn() -> FnPlugin + Send + Sync + 'static) -> FnPlugin {
        let make: MakeFn = Arc::new(make);
        let mut plugin = make();
        plugin.remake = Some(make);
        plugin
    }

    /// Its hooks: those it was given a closure for, in [`Hook`]'s order.
    pub fn hooks(&self) -> &[Hook] {
        &self.hooks
    }

    /// Adds `hook` to the list (once, in [`Hook`]'s order).
    fn with(mut self, hook: Hook) -> Self {
        if let Err(at) = self.hooks.binary_search(&hook) {
            self.hooks.insert(at, hook);
        }
        self
    }

    /// [`Plugin::prepare`]: once per pass, before any other hook.
    pub fn prepare(
        mut self,
        f: impl Fn(&PassContext<'_>, &[Event]) + Send + Sync + 'static,
    ) -> Self {
        self.prepare = Some(Arc::new(f));
        self.with(Hook::Prepare)
    }

    /// [`Plugin::admit`]: a vote on each pending job.
    pub fn admit(
        mut self,
        f: impl Fn(JobView<'_>, &PassContext<'_>) -> Vote + Send + Sync + 'static,
    ) -> Self {
        self.admit = Some(Arc::new(f));
        self.with(Hook::Admission)
    }

    /// [`Plugin::order_key`]: the job's sort key, higher first.
    pub fn order_key(
        mut self,
        f: impl Fn(JobView<'_>, &PassContext<'_>) -> i64 + Send + Sync + 'static,
    ) -> Self {
        self.order_key = Some(Arc::new(f));
        self.with(Hook::Order)
    }

    /// [`Plugin::explain_key`]: the terms of the job's key for `explain` (part of the order
    /// hook: asked only of a plug-in with an [`FnPlugin::order_key`]).
    pub fn explain_key(
        mut self,
        f: impl Fn(JobView<'_>, &PassContext<'_>) -> Vec<(String, f64)> + Send + Sync + 'static,
    ) -> Self {
        self.explain_key = Some(Arc::new(f));
        self
    }

    /// [`Plugin::filter_node`]: whether a task group may use a node.
    pub fn filter_node(
        mut self,
        f: impl Fn(JobView<'_>, usize, NodeView<'_>, &PassContext<'_>) -> Result<(), String>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        self.filter_node = Some(Arc::new(f));
        self.with(Hook::NodeFilter)
    }

    /// [`Plugin::score_node`]: how good a node is for a task group, higher better.
    pub fn score_node(
        mut self,
        f: impl Fn(JobView<'_>, usize, NodeView<'_>, &PassContext<'_>) -> f64 + Send + Sync + 'static,
    ) -> Self {
        self.score_node = Some(Arc::new(f));
        self.with(Hook::NodeScore)
    }

    /// [`Plugin::choose_devices`]: the devices one task takes on a node.
    pub fn choose_devices(
        mut self,
        f: impl Fn(DeviceTask<'_>, &PassContext<'_>) -> Option<u128> + Send + Sync + 'static,
    ) -> Self {
        self.choose_devices = Some(Arc::new(f));
        self.with(Hook::DeviceChoice)
    }

    /// [`Plugin::score_domain`]: how good a topology domain is for a gang, higher better.
    pub fn score_domain(
        mut self,
        f: impl Fn(JobView<'_>, DomainView<'_>, &PassContext<'_>) -> f64 + Send + Sync + 'static,
    ) -> Self {
        self.score_domain = Some(Arc::new(f));
        self.with(Hook::DomainScore)
    }

    /// [`Plugin::veto_victim`]: a veto (a reason, or a [`Veto`] that may end) when the
    /// preemptor may not preempt the victim.
    ///
    /// ```
    /// use gangway::policy::{FnPlugin, Hook, Veto};
    /// let keep_a = FnPlugin::new("keep_a").veto_victim(|_, victim, _| {
    ///     (victim.name() == "a").then(|| Veto::new("a stays").until(60_000))
    /// });
    /// let never = FnPlugin::new("never").veto_victim(|_, _, _| Some("never"));
    /// assert_eq!((keep_a.hooks(), never.hooks()), ([Hook::VictimVeto].as_slice(), [Hook::VictimVeto].as_slice()));
    /// ```
    pub fn veto_victim<V: Into<Veto>>(
        mut self,
        f: impl Fn(JobView<'_>, JobView<'_>, &PassContext<'_>) -> Option<V> + Send + Sync + 'static,
    ) -> Self {
        self.veto_victim = Some(Arc::new(move |p, v, c| f(p, v, c).map(Into::into)));
        self.with(Hook::VictimVeto)
    }

    /// [`Plugin::victim_key`]: the order in which candidate victims are taken, lower first.
    pub fn victim_key(
        mut self,
        f: impl Fn(JobView<'_>, JobView<'_>, &PassContext<'_>) -> i64 + Send + Sync + 'static,
    ) -> Self {
        self.victim_key = Some(Arc::new(f));
        self.with(Hook::VictimOrder)
    }

    /// [`Plugin::may_backfill`]: whether a job behind the blocked head may start now.
    pub fn may_backfill(
        mut self,
        f: impl Fn(HeadView<'_>, JobView<'_>, &PassContext<'_>) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.may_backfill = Some(Arc::new(f));
        self.with(Hook::Backfill)
    }

    /// [`Plugin::wake_up`]: a time by which the plug-in wants the next tick.
    pub fn wake_up(
        mut self,
        f: impl Fn(&PassContext<'_>) -> Option<u64> + Send + Sync + 'static,
    ) -> Self {
        self.wake_up = Some(Arc::new(f));
        self.with(Hook::WakeUp)
    }

    /// [`Plugin::observe`]: each tick's events and outcome.
    pub fn observe(
        mut self,
        f: impl Fn(u64, &[Event], &TickOutcome) + Send + Sync + 'static,
    ) -> Self {
        self.observe = Some(Arc::new(f));
        self.with(Hook::Observe)
    }

    /// [`Plugin::save_state`]: the state to keep in a snapshot (`None`: nothing to keep). Not a
    /// hook: it joins no [`FnPlugin::hooks`].
    pub fn save_state(mut self, f: impl Fn() -> Option<Value> + Send + Sync + 'static) -> Self {
        self.save_state = Some(Arc::new(f));
        self
    }

    /// [`Plugin::load_state`]: loads what [`FnPlugin::save_state`] saved, at restore (an
    /// `Err` refuses the snapshot). Not a hook: it joins no [`FnPlugin::hooks`].
    pub fn load_state(
        mut self,
        f: impl Fn(Value) -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        self.load_state = Some(Arc::new(f));
        self
    }

    /// [`Plugin::dependence`]: what its filter and score answers depend on (default
    /// [`Dependence::Anything`]).
    pub fn dependence(mut self, dependence: Dependence) -> Self {
        self.dependence = dependence;
        self
    }
}

impl __private::DerivedHooks for FnPlugin {
    /// The hooks given a closure: derived from the registration.
    fn derived_hooks(&self) -> &[Hook] {
        &self.hooks
    }
}

impl Plugin for FnPlugin {
    fn name(&self) -> &str {
        &self.name
    }

    fn prepare(&mut self, context: &PassContext<'_>, events: &[Event]) {
        if let Some(f) = &self.prepare {
            f(context, events);
        }
    }

    fn admit(&self, job: JobView<'_>, context: &PassContext<'_>) -> Vote {
        self.admit
            .as_ref()
            .map_or(Vote::Abstain, |f| f(job, context))
    }

    fn order_key(&self, job: JobView<'_>, context: &PassContext<'_>) -> i64 {
        self.order_key.as_ref().map_or(0, |f| f(job, context))
    }

    fn explain_key(&self, job: JobView<'_>, context: &PassContext<'_>) -> Vec<(String, f64)> {
        self.explain_key
            .as_ref()
            .map_or_else(Vec::new, |f| f(job, context))
    }

    fn filter_node(
        &self,
        job: JobView<'_>,
        group: usize,
        node: NodeView<'_>,
        context: &PassContext<'_>,
    ) -> Result<(), String> {
        self.filter_node
            .as_ref()
            .map_or(Ok(()), |f| f(job, group, node, context))
    }

    fn score_node(
        &self,
        job: JobView<'_>,
        group: usize,
        node: NodeView<'_>,
        context: &PassContext<'_>,
    ) -> f64 {
        self.score_node
            .as_ref()
            .map_or(0.0, |f| f(job, group, node, context))
    }

    fn choose_devices(&self, task: DeviceTask<'_>, context: &PassContext<'_>) -> Option<u128> {
        self.choose_devices.as_ref().and_then(|f| f(task, context))
    }

    fn score_domain(
        &self,
        job: JobView<'_>,
        domain: DomainView<'_>,
        context: &PassContext<'_>,
    ) -> f64 {
        self.score_domain
            .as_ref()
            .map_or(0.0, |f| f(job, domain, context))
    }

    fn veto_victim(
        &self,
        preemptor: JobView<'_>,
        victim: JobView<'_>,
        context: &PassContext<'_>,
    ) -> Option<Veto> {
        self.veto_victim
            .as_ref()
            .and_then(|f| f(preemptor, victim, context))
    }

    fn victim_key(
        &self,
        preemptor: JobView<'_>,
        victim: JobView<'_>,
        context: &PassContext<'_>,
    ) -> i64 {
        self.victim_key
            .as_ref()
            .map_or(0, |f| f(preemptor, victim, context))
    }

    fn may_backfill(
        &self,
        head: HeadView<'_>,
        candidate: JobView<'_>,
        context: &PassContext<'_>,
    ) -> bool {
        self.may_backfill
            .as_ref()
            .is_none_or(|f| f(head, candidate, context))
    }

    fn wake_up(&self, context: &PassContext<'_>) -> Option<u64> {
        self.wake_up.as_ref().and_then(|f| f(context))
    }

    fn observe(&mut self, now_ms: u64, events: &[Event], outcome: &TickOutcome) {
        if let Some(f) = &self.observe {
            f(now_ms, events, outcome);
        }
    }

    fn save_state(&self) -> Option<Value> {
        self.save_state.as_ref().and_then(|f| f())
    }

    fn load_state(&mut self, state: Value) -> Result<(), String> {
        self.load_state.as_ref().map_or(Ok(()), |f| f(state))
    }

    fn dependence(&self) -> Dependence {
        self.dependence
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hooks_are_the_closures_given_in_hook_order_once() {
        let plugin = FnPlugin::new("p")
            .wake_up(|_| None)
            .score_node(|_, _, _, _| 1.0)
            .admit(|_, _| Vote::Permit)
            .score_node(|_, _, _, _| 2.0)
            .explain_key(|_, _| Vec::new())
            .dependence(Dependence::ShapeAndNode);
        assert_eq!(
            plugin.hooks(),
            [Hook::Admission, Hook::NodeScore, Hook::WakeUp]
        );
        assert_eq!((&plugin as &dyn Plugin).hooks(), plugin.hooks());
        assert_eq!(Plugin::dependence(&plugin), Dependence::ShapeAndNode);
        let all = FnPlugin::new("all")
            .prepare(|_, _| {})
            .admit(|_, _| Vote::Abstain)
            .order_key(|_, _| 0)
            .filter_node(|_, _, _, _| Ok(()))
            .score_node(|_, _, _, _| 0.0)
            .choose_devices(|_, _| None)
            .score_domain(|_, _, _| 0.0)
            .veto_victim(|_, _, _| None::<Veto>)
            .victim_key(|_, _, _| 0)
            .may_backfill(|_, _, _| true)
            .wake_up(|_| None)
            .observe(|_, _, _| {});
        assert_eq!(all.hooks().len(), 12);
        assert!(all.hooks().is_sorted());
        assert!(format!("{all:?}").contains("\"all\""));
    }

    /// State hooks join no hook set; without them nothing is saved and anything loads.
    #[test]
    fn state_hooks_are_no_hooks_and_default_to_nothing() {
        let mut plain = FnPlugin::new("plain").order_key(|_, _| 0);
        assert_eq!(Plugin::save_state(&plain), None);
        assert_eq!(Plugin::load_state(&mut plain, Value::Null), Ok(()));
        let kept = FnPlugin::new("kept")
            .order_key(|_, _| 0)
            .save_state(|| Some(Value::from(3)))
            .load_state(|v| match v.as_u64() {
                Some(_) => Ok(()),
                None => Err(format!("not a count: {v}")),
            });
        assert_eq!(kept.hooks(), [Hook::Order]);
        assert_eq!(Plugin::save_state(&kept), Some(Value::from(3)));
        let mut shared = kept.clone();
        assert_eq!(Plugin::save_state(&shared), Some(Value::from(3)));
        assert!(Plugin::load_state(&mut shared, Value::Null).is_err());
    }

    /// A stateful plug-in's copies each keep their own state, starting from the original's.
    #[test]
    fn stateful_copies_keep_their_own_state() {
        use std::sync::atomic::{AtomicU64, Ordering};
        let make = || {
            let n = Arc::new(AtomicU64::new(0));
            let (save, load) = (Arc::clone(&n), n);
            FnPlugin::new("n")
                .wake_up(|_| None)
                .save_state(move || Some(Value::from(save.load(Ordering::Relaxed))))
                .load_state(move |v| {
                    load.store(v.as_u64().ok_or("a count")?, Ordering::Relaxed);
                    Ok(())
                })
        };
        let mut original = FnPlugin::stateful(make);
        assert_eq!(original.hooks(), [Hook::WakeUp]);
        Plugin::load_state(&mut original, Value::from(4)).unwrap();
        let mut copy = original.clone();
        assert_eq!(Plugin::save_state(&copy), Some(Value::from(4)));
        Plugin::load_state(&mut copy, Value::from(7)).unwrap();
        assert_eq!(Plugin::save_state(&original), Some(Value::from(4)));
        let again = copy.clone();
        assert_eq!(Plugin::save_state(&again), Some(Value::from(7)));
        assert!(format!("{again:?}").contains("stateful: true"));
    }
}
