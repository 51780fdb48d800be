//! Adversarial plug-ins, and proptest strategies that draw them and whole profiles of them:
//! plug-ins that vote at random, score nodes NaN, infinite or extreme, give order keys that
//! change at every call, reject every node, veto with junk, ask for odd wake-ups, misstate
//! what their answers depend on, and panic in some hook. The engine must keep every invariant
//! whatever they answer; [`crate::testkit::harness::check_profile`] checks that it does.
//!
//! Every answer is a function of the plug-in's seed, what it is asked about and a call
//! counter that it saves as its state, so a profile of adversaries still decides
//! deterministically and continues exactly after a snapshot and restore: those checks of
//! `check_profile` hold for them as for any well-behaved plug-in.
//!
//! ```
//! use gangway::testkit::adversarial::adversarial_profile;
//! use gangway::testkit::harness::{AllowedFault, ProfileChecks, check_profile};
//! use proptest::strategy::{Strategy, ValueTree};
//! use proptest::test_runner::TestRunner;
//! let mut runner = TestRunner::deterministic();
//! let recipe = adversarial_profile().new_tree(&mut runner).unwrap().current();
//! // Adversaries panic and score NaN on purpose: their faults are allowed.
//! let checks = ProfileChecks::new(2, 10).allow(AllowedFault::any());
//! check_profile(|| recipe.profile(), checks).unwrap();
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use proptest::collection::vec;
use proptest::prelude::*;
use serde_json::json;

use crate::policy::builtin::{Multifactor, kueue_victims};
use crate::policy::{
    Dependence, DeviceTask, DomainView, FnPlugin, Hook, MAX_SCORE_TIERS, PassContext, Placement,
    Profile, Veto, Vote,
};
use crate::state::{JobView, NodeView};

/// One way an [`Adversary`] misbehaves; an adversary plays one to three of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trick {
    /// Admission: denies about a third of the jobs it is asked about, permits or abstains
    /// for the others.
    RandomVotes,
    /// Node score: NaN, ±∞, ±`f64::MAX`, the tiniest positive number, ±0 or ±1, by job, group
    /// and node.
    ExtremeScores,
    /// Order: a key from a counter advanced at every call, so that a job's key changes between
    /// two calls of one pass (`i64::MIN` and `i64::MAX` among the keys). The counter is the
    /// plug-in's saved state.
    ShiftingKeys,
    /// Node filter: rejects every node.
    RejectAll,
    /// Node filter: rejects about half the nodes, by job and node.
    RejectSome,
    /// Victims: vetoes about a third of the candidates with junk reasons (empty, control
    /// characters, very long), and keys them `i64::MIN`, `i64::MAX` or at random.
    JunkVictims,
    /// Wake-up: in the past, now, a millisecond ahead, at `u64::MAX`, or none.
    OddWakeUps,
    /// Device choice: every device, none, one at random, a device beyond the node's, or no
    /// pick, by job, node and what is free.
    JunkDevices,
    /// Domain score: as [`Trick::ExtremeScores`], for topology domains.
    ExtremeDomainScores,
    /// Declares that its placement answers depend only on the task shape and the node
    /// ([`Dependence::ShapeAndNode`]) while they depend on the job too.
    MisstatesDependence,
    /// Panics in this hook, at about half of its calls.
    PanicIn(Hook),
}

impl Trick {
    /// The hooks the trick needs.
    ///
    /// ```
    /// use gangway::policy::Hook;
    /// use gangway::testkit::adversarial::Trick;
    /// assert_eq!(Trick::JunkVictims.hooks(), [Hook::VictimVeto, Hook::VictimOrder]);
    /// assert!(Trick::MisstatesDependence.hooks().is_empty());
    /// ```
    pub fn hooks(self) -> Vec<Hook> {
        match self {
            Trick::RandomVotes => vec![Hook::Admission],
            Trick::ExtremeScores => vec![Hook::NodeScore],
            Trick::ShiftingKeys => vec![Hook::Order],
            Trick::RejectAll | Trick::RejectSome => vec![Hook::NodeFilter],
            Trick::JunkVictims => vec![Hook::VictimVeto, Hook::VictimOrder],
            Trick::OddWakeUps => vec![Hook::WakeUp],
            Trick::JunkDevices => vec![Hook::DeviceChoice],
            Trick::ExtremeDomainScores => vec![Hook::DomainScore],
            Trick::MisstatesDependence => Vec::new(),
            Trick::PanicIn(hook) => vec![hook],
        }
    }
}

/// A plug-in that plays [`Trick`]s, as a recipe: [`Adversary::plugin`] builds it, an
/// [`FnPlugin`] with a closure for every hook its tricks need (abstaining where no trick says
/// otherwise). It answers deterministically: from its seed, what it is asked about and its call
/// counter, which it saves as its state (`{"calls": n}`) when it shifts keys; each copy of the
/// plug-in keeps its own counter ([`FnPlugin::stateful`]).
///
/// ```
/// use gangway::policy::{Hook, Profile};
/// use gangway::testkit::adversarial::{Adversary, Trick};
/// let chaos = Adversary::new("chaos", 7, vec![Trick::PanicIn(Hook::NodeScore), Trick::ShiftingKeys]);
/// assert_eq!(chaos.hooks(), [Hook::Order, Hook::NodeScore]);
/// let profile = Profile::builder().plugin(chaos.plugin()).build().unwrap();
/// assert_eq!(profile.save_states(), [("chaos".to_string(), serde_json::json!({"calls": 0}))]);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Adversary {
    name: String,
    seed: u64,
    tricks: Vec<Trick>,
    hooks: Vec<Hook>,
}

/// Junk a [`Trick::JunkVictims`] veto gives as its reason.
const JUNK: [&str; 4] = ["", "\0", "\u{202e}\u{1f4a5}\n\t\"}]", "no"];

/// Scores a [`Trick::ExtremeScores`] scorer gives.
const SCORES: [f64; 11] = [
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::MAX,
    f64::MIN,
    f64::MIN_POSITIVE,
    0.0,
    -0.0,
    1.0,
    -1.0,
    1e-300,
];

/// The finalizer of SplitMix64: a well-mixed 64-bit hash of `x`.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Adversary {
    /// An adversary named `name` (its name in the profile and the key of its state) playing
    /// `tricks` with `seed`.
    pub fn new(name: impl Into<String>, seed: u64, tricks: Vec<Trick>) -> Self {
        let mut hooks: Vec<Hook> = tricks.iter().flat_map(|t| t.hooks()).collect();
        hooks.sort();
        hooks.dedup();
        Adversary {
            name: name.into(),
            seed,
            tricks,
            hooks,
        }
    }

    /// The hooks its tricks need, in [`Hook`]'s order: those of its plug-in.
    pub fn hooks(&self) -> &[Hook] {
        &self.hooks
    }

    /// Its tricks.
    pub fn tricks(&self) -> &[Trick] {
        &self.tricks
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The plug-in, its counter at zero.
    pub fn plugin(&self) -> FnPlugin {
        let recipe = self.clone();
        FnPlugin::stateful(move || recipe.fresh())
    }

    /// One build of the plug-in: its closures share one [`Play`], and so one counter.
    fn fresh(&self) -> FnPlugin {
        let play = Arc::new(Play {
            adversary: self.clone(),
            calls: AtomicU64::new(0),
        });
        let mut plugin = FnPlugin::new(self.name.clone());
        for &hook in &self.hooks {
            let p = Arc::clone(&play);
            plugin = match hook {
                Hook::Prepare => plugin.prepare(move |context, _| {
                    p.maybe_panic(Hook::Prepare, &[], context.now_ms());
                }),
                Hook::Admission => plugin.admit(move |job, context| p.admit(job, context)),
                Hook::Order => {
                    let q = Arc::clone(&play);
                    plugin
                        .order_key(move |job, context| p.order_key(job, context))
                        .explain_key(move |job, context| q.explain_key(job, context))
                }
                Hook::NodeFilter => plugin.filter_node(move |job, group, node, context| {
                    p.filter_node(job, group, node, context)
                }),
                Hook::NodeScore => plugin.score_node(move |job, group, node, context| {
                    p.score_node(job, group, node, context)
                }),
                Hook::DeviceChoice => {
                    plugin.choose_devices(move |task, context| p.choose_devices(task, context))
                }
                Hook::DomainScore => plugin
                    .score_domain(move |job, domain, context| p.score_domain(job, domain, context)),
                Hook::VictimVeto => plugin.veto_victim(move |preemptor, victim, context| {
                    p.veto_victim(preemptor, victim, context)
                }),
                Hook::VictimOrder => plugin.victim_key(move |preemptor, victim, context| {
                    p.victim_key(preemptor, victim, context)
                }),
                // No trick plays here: the plug-in admits every job, as the trait's default.
                Hook::Backfill => plugin.may_backfill(|_, _, _| true),
                Hook::WakeUp => plugin.wake_up(move |context| p.wake_up(context)),
                Hook::Observe => plugin.observe(move |now_ms, events, outcome| {
                    let size = (events.len() + outcome.decisions.len()) as u64;
                    p.maybe_panic(Hook::Observe, &[], now_ms ^ size);
                }),
            };
        }
        let (saved, loaded) = (Arc::clone(&play), play);
        plugin = plugin
            .save_state(move || {
                let calls = saved.calls.load(Ordering::Relaxed);
                saved
                    .plays(Trick::ShiftingKeys)
                    .then(|| json!({"calls": calls}))
            })
            .load_state(move |state| {
                let calls = state["calls"]
                    .as_u64()
                    .ok_or_else(|| format!("expected {{\"calls\": n}}, got {state}"))?;
                loaded.calls.store(calls, Ordering::Relaxed);
                Ok(())
            });
        if self.tricks.contains(&Trick::MisstatesDependence) {
            plugin = plugin.dependence(Dependence::ShapeAndNode);
        }
        plugin
    }
}

/// One build of an adversary's plug-in: the recipe and the call counter its closures share.
struct Play {
    adversary: Adversary,
    calls: AtomicU64,
}

impl Play {
    fn plays(&self, trick: Trick) -> bool {
        self.adversary.tricks.contains(&trick)
    }

    fn name(&self) -> &str {
        &self.adversary.name
    }

    /// A hash of the seed, the hook and what the hook is asked about.
    fn roll(&self, hook: Hook, words: &[&str], number: u64) -> u64 {
        let mut h = mix(self.adversary.seed ^ (hook as u64).wrapping_mul(0x100_0000_01b3));
        for word in words {
            for byte in word.bytes() {
                h = mix(h ^ u64::from(byte));
            }
            h = mix(h ^ 0xff);
        }
        mix(h ^ number)
    }

    /// Panics at about half the calls of `hook` when the adversary panics there.
    fn maybe_panic(&self, hook: Hook, words: &[&str], number: u64) {
        if self.plays(Trick::PanicIn(hook)) && self.roll(hook, words, number).is_multiple_of(2) {
            panic!("adversary {} panics in {}", self.name(), hook.name());
        }
    }

    fn admit(&self, job: JobView<'_>, context: &PassContext<'_>) -> Vote {
        let now = context.now_ms();
        self.maybe_panic(Hook::Admission, &[job.name()], now);
        if !self.plays(Trick::RandomVotes) {
            return Vote::Abstain;
        }
        match self.roll(Hook::Admission, &[job.name()], now) % 3 {
            0 => Vote::Deny(format!("{} says no", self.name())),
            1 => Vote::Permit,
            _ => Vote::Abstain,
        }
    }

    fn order_key(&self, job: JobView<'_>, context: &PassContext<'_>) -> i64 {
        self.maybe_panic(Hook::Order, &[job.name()], context.now_ms());
        if !self.plays(Trick::ShiftingKeys) {
            return 0;
        }
        let call = self.calls.fetch_add(1, Ordering::Relaxed);
        match self.roll(Hook::Order, &[job.name()], call) {
            r if r % 5 == 0 => i64::MAX,
            r if r % 5 == 1 => i64::MIN,
            r => r as i64,
        }
    }

    fn explain_key(&self, job: JobView<'_>, context: &PassContext<'_>) -> Vec<(String, f64)> {
        self.maybe_panic(Hook::Order, &[job.name(), "explain"], context.now_ms());
        let calls = self.calls.load(Ordering::Relaxed);
        vec![("calls".to_string(), calls as f64)]
    }

    fn filter_node(
        &self,
        job: JobView<'_>,
        group: usize,
        node: NodeView<'_>,
        context: &PassContext<'_>,
    ) -> Result<(), String> {
        let words = [job.name(), node.name()];
        self.maybe_panic(Hook::NodeFilter, &words, context.now_ms());
        if self.plays(Trick::RejectAll) {
            return Err(format!("{} rejects every node", self.name()));
        }
        if self.plays(Trick::RejectSome)
            && self
                .roll(Hook::NodeFilter, &words, group as u64)
                .is_multiple_of(2)
        {
            return Err(format!("{} rejects {}", self.name(), node.name()));
        }
        Ok(())
    }

    fn score_node(
        &self,
        job: JobView<'_>,
        group: usize,
        node: NodeView<'_>,
        context: &PassContext<'_>,
    ) -> f64 {
        let words = [job.name(), node.name()];
        self.maybe_panic(Hook::NodeScore, &words, context.now_ms());
        if !self.plays(Trick::ExtremeScores) {
            return 0.0;
        }
        let pick = self.roll(Hook::NodeScore, &words, group as u64) % SCORES.len() as u64;
        SCORES[pick as usize]
    }

    fn choose_devices(&self, task: DeviceTask<'_>, context: &PassContext<'_>) -> Option<u128> {
        let words = [task.job.name(), task.node.name()];
        self.maybe_panic(Hook::DeviceChoice, &words, context.now_ms());
        if !self.plays(Trick::JunkDevices) {
            return None;
        }
        let free = task.room.devices.iter().map(|&d| u64::from(d)).sum::<u64>();
        match self.roll(Hook::DeviceChoice, &words, free ^ task.room.mig as u64) % 5 {
            0 => Some(u128::MAX),
            1 => Some(0),
            2 => Some(1 << (free % 16)),
            3 => Some(1 << 127),
            _ => None,
        }
    }

    fn score_domain(
        &self,
        job: JobView<'_>,
        domain: DomainView<'_>,
        context: &PassContext<'_>,
    ) -> f64 {
        let words = [job.name(), domain.label];
        self.maybe_panic(Hook::DomainScore, &words, context.now_ms());
        if !self.plays(Trick::ExtremeDomainScores) {
            return 0.0;
        }
        let pick = self.roll(Hook::DomainScore, &words, domain.id.index() as u64);
        SCORES[(pick % SCORES.len() as u64) as usize]
    }

    fn veto_victim(
        &self,
        preemptor: JobView<'_>,
        victim: JobView<'_>,
        context: &PassContext<'_>,
    ) -> Option<Veto> {
        let now = context.now_ms();
        let words = [preemptor.name(), victim.name()];
        self.maybe_panic(Hook::VictimVeto, &words, now);
        if !self.plays(Trick::JunkVictims) {
            return None;
        }
        let roll = self.roll(Hook::VictimVeto, &words, 0);
        if !roll.is_multiple_of(3) {
            return None;
        }
        let veto = Veto::new(
            JUNK[(roll / 3 % JUNK.len() as u64) as usize].repeat(1 + (roll % 7) as usize),
        );
        // Ends in the past, now, just after, never, or none at all.
        let ends = [
            0,
            now,
            now.saturating_sub(1),
            now.saturating_add(1),
            u64::MAX,
        ];
        Some(match ends.get((roll / 7 % 6) as usize) {
            Some(&end) => veto.until(end),
            None => veto,
        })
    }

    fn victim_key(
        &self,
        preemptor: JobView<'_>,
        victim: JobView<'_>,
        context: &PassContext<'_>,
    ) -> i64 {
        let words = [preemptor.name(), victim.name()];
        self.maybe_panic(Hook::VictimOrder, &words, context.now_ms());
        if !self.plays(Trick::JunkVictims) {
            return 0;
        }
        match self.roll(Hook::VictimOrder, &words, 0) {
            r if r % 3 == 0 => i64::MIN,
            r if r % 3 == 1 => i64::MAX,
            r => r as i64,
        }
    }

    fn wake_up(&self, context: &PassContext<'_>) -> Option<u64> {
        let now = context.now_ms();
        self.maybe_panic(Hook::WakeUp, &[], now);
        if !self.plays(Trick::OddWakeUps) {
            return None;
        }
        match self.roll(Hook::WakeUp, &[], now) % 6 {
            0 => Some(0),
            1 => Some(now),
            2 => Some(now.saturating_sub(1)),
            3 => Some(now.saturating_add(1)),
            4 => Some(u64::MAX),
            _ => None,
        }
    }
}

/// A profile of adversaries, to build afresh for every run ([`AdversarialProfile::profile`]).
#[derive(Clone, Debug, PartialEq)]
pub struct AdversarialProfile {
    /// Whether the default profile's plug-ins come too: multifactor priority first, Kueue's
    /// victim selection last.
    pub with_defaults: bool,
    /// The adversaries in order, each with its partition (only for an adversary whose hooks
    /// may be set per partition), score tier and weight.
    pub adversaries: Vec<(Adversary, Placement)>,
}

impl AdversarialProfile {
    /// A fresh profile of these plug-ins (counters at zero).
    ///
    /// ```
    /// use gangway::policy::Placement;
    /// use gangway::testkit::adversarial::{AdversarialProfile, Adversary, Trick};
    /// let recipe = AdversarialProfile {
    ///     with_defaults: true,
    ///     adversaries: vec![(Adversary::new("a0", 1, vec![Trick::RejectAll]), Placement::default())],
    /// };
    /// assert_eq!(recipe.profile().plugin_names().count(), 7);
    /// ```
    pub fn profile(&self) -> Profile {
        let mut builder = Profile::builder();
        if self.with_defaults {
            builder = builder.plugin(Multifactor::from_config());
        }
        for (adversary, placement) in &self.adversaries {
            builder = builder.boxed(Box::new(adversary.plugin()), placement.clone());
        }
        if self.with_defaults {
            for plugin in kueue_victims() {
                builder = builder.boxed(plugin, Placement::default());
            }
        }
        builder
            .build()
            .expect("adversarial profiles are consistent by construction")
    }
}

/// Any [`Trick`], panics in any of the eleven decision hooks among them.
pub fn trick() -> impl Strategy<Value = Trick> {
    let hooks = [
        Hook::Prepare,
        Hook::Admission,
        Hook::Order,
        Hook::NodeFilter,
        Hook::NodeScore,
        Hook::DeviceChoice,
        Hook::DomainScore,
        Hook::VictimVeto,
        Hook::VictimOrder,
        Hook::WakeUp,
        Hook::Observe,
    ];
    prop_oneof![
        Just(Trick::RandomVotes),
        Just(Trick::ExtremeScores),
        Just(Trick::ShiftingKeys),
        Just(Trick::RejectAll),
        Just(Trick::RejectSome),
        Just(Trick::JunkVictims),
        Just(Trick::OddWakeUps),
        Just(Trick::JunkDevices),
        Just(Trick::ExtremeDomainScores),
        Just(Trick::MisstatesDependence),
        proptest::sample::select(hooks.to_vec()).prop_map(Trick::PanicIn),
    ]
}

/// An adversary named `name` with a random seed and one to three tricks.
///
/// ```
/// use gangway::testkit::adversarial::adversary;
/// use proptest::strategy::{Strategy, ValueTree};
/// let mut runner = proptest::test_runner::TestRunner::deterministic();
/// let a = adversary("a").new_tree(&mut runner).unwrap().current();
/// assert!((1..=3).contains(&a.tricks().len()));
/// ```
pub fn adversary(name: &str) -> impl Strategy<Value = Adversary> + use<> {
    let name = name.to_string();
    (any::<u64>(), vec(trick(), 1..=3))
        .prop_map(move |(seed, tricks)| Adversary::new(name.clone(), seed, tricks))
}

/// Score weights drawn: ordinary, negative, zero, huge and tiny.
const WEIGHTS: [f64; 6] = [1.0, 2.5, -1.0, 0.0, 1e300, 1e-300];

/// A profile of one to three adversaries (`adversary0`, …), with the default profile's
/// plug-ins three times in four; each adversary at a random score tier and weight, and, when
/// all its hooks may be set per partition, sometimes for partition `main` or `gpu` only (the
/// partitions of [`crate::testkit::strategies::cluster`]).
pub fn adversarial_profile() -> impl Strategy<Value = AdversarialProfile> {
    let member = (
        any::<u64>(),
        vec(trick(), 1..=3),
        0..MAX_SCORE_TIERS,
        0..WEIGHTS.len(),
        proptest::option::of(prop_oneof![Just("main"), Just("gpu")]),
    );
    (proptest::bool::weighted(0.75), vec(member, 1..=3)).prop_map(|(with_defaults, members)| {
        let adversaries = members
            .into_iter()
            .enumerate()
            .map(|(i, (seed, tricks, tier, weight, partition))| {
                let adversary = Adversary::new(format!("adversary{i}"), seed, tricks);
                let hooks = &adversary.hooks;
                let local = !hooks.iter().any(|h| h.global_only());
                let scores = hooks.contains(&Hook::NodeScore) || hooks.contains(&Hook::DomainScore);
                let placement = Placement {
                    partition: partition.filter(|_| local).map(String::from),
                    tier: if scores { tier } else { 0 },
                    weight: if scores { WEIGHTS[weight] } else { 1.0 },
                };
                (adversary, placement)
            })
            .collect();
        AdversarialProfile {
            with_defaults,
            adversaries,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Event;
    use crate::policy::Plugin;
    use crate::testkit::checked_tick;
    use crate::{ClusterConfig, JobSpec, Scheduler};

    fn cluster() -> ClusterConfig {
        serde_json::from_value(
            json!({"nodes": [{"name": "n1", "cpus": 2}, {"name": "n2", "cpus": 2}]}),
        )
        .unwrap()
    }

    fn submit(id: &str) -> Event {
        Event::Submit {
            job: JobSpec::new(id, 60_000, 2),
        }
    }

    /// A scheduler whose one plug-in shifts its keys, after a first tick of three jobs.
    fn shifting_keys_after_a_tick() -> Scheduler {
        let profile = Profile::builder()
            .plugin(Adversary::new("keys", 3, vec![Trick::ShiftingKeys]).plugin())
            .build()
            .unwrap();
        let mut s = Scheduler::with_profile(cluster(), profile).unwrap();
        checked_tick(&mut s, 0, vec![submit("a"), submit("b"), submit("c")]).unwrap();
        s
    }

    #[test]
    fn shifting_keys_change_between_calls_and_are_saved() {
        let mut s = shifting_keys_after_a_tick();
        let saved = s.profile().save_states();
        let calls = saved[0].1["calls"].as_u64().unwrap();
        assert!(calls >= 3, "{saved:?}");
        checked_tick(&mut s, 1_000, vec![]).unwrap();
        let later = s.profile().save_states()[0].1["calls"].as_u64().unwrap();
        assert!(later > calls);
    }

    /// `what_if` answers on a copy of the scheduler, whose order keys advance the copy's own
    /// counter ([`FnPlugin::stateful`]): asking changes nothing the scheduler saves or decides.
    #[test]
    fn what_if_leaves_the_counter_alone() {
        let mut s = shifting_keys_after_a_tick();
        let before = s.profile().save_states();
        let mut twin = s.clone();
        s.what_if(JobSpec::new("d", 60_000, 2)).unwrap();
        assert_eq!(s.profile().save_states(), before);
        let next = checked_tick(&mut s, 1_000, vec![submit("e")]).unwrap();
        let twin_next = checked_tick(&mut twin, 1_000, vec![submit("e")]).unwrap();
        assert_eq!(next, twin_next);
        assert_eq!(s.profile().save_states(), twin.profile().save_states());
    }

    #[test]
    fn reject_all_keeps_every_job_waiting() {
        let profile = Profile::builder()
            .plugin(Adversary::new("wall", 0, vec![Trick::RejectAll]).plugin())
            .build()
            .unwrap();
        let mut s = Scheduler::with_profile(cluster(), profile).unwrap();
        let job = Event::Submit {
            job: JobSpec::new("a", 60_000, 1),
        };
        let out = checked_tick(&mut s, 0, vec![job]).unwrap();
        assert!(out.decisions.is_empty());
        let detail = s.pending_info()[0].detail.clone().unwrap();
        assert!(
            detail.contains("wall rejects every node (2 nodes)"),
            "{detail}"
        );
    }

    #[test]
    fn answers_are_deterministic_and_copies_keep_their_own_counter() {
        let recipe = Adversary::new("a", 42, vec![Trick::ShiftingKeys]);
        let mut a = recipe.plugin();
        Plugin::load_state(&mut a, json!({"calls": 9})).unwrap();
        let mut b = a.clone();
        assert_eq!(Plugin::save_state(&b), Some(json!({"calls": 9})));
        Plugin::load_state(&mut b, json!({"calls": 11})).unwrap();
        assert_eq!(Plugin::save_state(&a), Some(json!({"calls": 9})));
        assert!(Plugin::load_state(&mut a, json!({"count": 1})).is_err());
        let play = |seed| Play {
            adversary: Adversary::new("a", seed, vec![Trick::ShiftingKeys]),
            calls: AtomicU64::new(0),
        };
        assert_eq!(
            play(42).roll(Hook::Order, &["j1"], 3),
            play(42).roll(Hook::Order, &["j1"], 3)
        );
        assert_ne!(
            play(42).roll(Hook::Order, &["j1"], 3),
            play(42).roll(Hook::Order, &["j2"], 3)
        );
    }

    /// Its plug-in's hooks are the tricks' hooks, in hook order; no state without shifting
    /// keys; the misstated dependence is stated.
    #[test]
    fn the_plugin_has_the_tricks_hooks_and_state() {
        let recipe = Adversary::new(
            "a",
            1,
            vec![
                Trick::PanicIn(Hook::Observe),
                Trick::JunkVictims,
                Trick::MisstatesDependence,
            ],
        );
        let plugin = recipe.plugin();
        assert_eq!(
            plugin.hooks(),
            [Hook::VictimVeto, Hook::VictimOrder, Hook::Observe]
        );
        assert_eq!(plugin.hooks(), recipe.hooks());
        assert_eq!(plugin.name(), "a");
        assert_eq!(Plugin::save_state(&plugin), None);
        assert_eq!(Plugin::dependence(&plugin), Dependence::ShapeAndNode);
    }
}
