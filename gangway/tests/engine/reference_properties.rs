//! The fast pass against the reference pass (`gangway::testkit::reference`): random clusters
//! and event streams, with the features switched on at random, tick through a scheduler with
//! every shortcut and through its reference twin with none; after every tick both must have
//! decided the same, report the same position, reason and estimate for every pending job, hold
//! the same reservations and ask for the same wake-up. The oracle runs on both.
//!
//! Covered: fair-share (accounts, decay weights), quotas in a cohort, fair sharing between the
//! queues, admission fair sharing, wait-for-ready (with `ready` events, block admission),
//! preemption (classic, fair sharing's, order-based), topology, MIG and fractional GPUs (the
//! generated nodes and jobs), dependencies, maintenance windows, licenses, `set_priority`,
//! the backfill head rules (`before_head_estimate`, `rule`, with `candidates: "submit"`), a
//! user backfill rule, the pinned head, `reconfigure` half-way, the order keys calculated once a period (`calc_period_ms`), profiles (the default, LAS, shortest-first, adversarial plug-ins) and
//! the fast scheduler snapshotted and restored half-way, which must then go on deciding as the
//! uninterrupted reference. A second family runs busy clusters of few job shapes, where passes keep
//! many reservations from the pass before and many jobs wait behind a blocked head; a third, contended clusters with order-based preemption,
//! where long queues of preemptors outrank some running jobs and most find no room (the
//! running jobs sorted by order, the bisection, the failed searches remembered). `the_cases_reach_every_shortcut` shows that the
//! comparisons are not vacuous. `GANGWAY_PROPTEST_SCALE=N` multiplies the case count.

use gangway::config::{FairSharingConfig, WaitForReadyConfig};
use gangway::policy::builtin::{Las, MinRunTime, ShortestFirst};
use gangway::policy::{HeadView, PassContext, Plugin, Profile};
use gangway::state::JobView;
use gangway::testkit::adversarial::{Adversary, Trick};
use gangway::testkit::harness::{Stream, StreamEvent, TickStep, resolve, scale};
use gangway::testkit::reference::{ShortcutsTaken, Twins};
use gangway::testkit::strategies::{JOB_POOL, NODE_POOL, cluster, stream};
use gangway::{ClusterConfig, Event, PendingReason, Scheduler};
use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use serde_json::json;

/// The features a case switches on over a generated cluster.
#[derive(Clone, Debug)]
struct Features {
    fair_sharing: bool,
    admission_fair_sharing: bool,
    /// `(timeout, block admission)`.
    wait_for_ready: Option<(u64, bool)>,
    order_based: bool,
    /// Preemption off whatever the generated cluster says (passes settle only without it).
    no_preemption: bool,
    /// A license pool and how many every third job asks for.
    licenses: Option<(u32, u32)>,
    /// A window on a node: `(node, start, length)`.
    maintenance: Option<(u32, u64, u64)>,
    profile: Plugins,
    /// Snapshot and restore the fast scheduler after this share (in eighths) of the ticks.
    restore_at: Option<usize>,
    /// Reconfigure both (backfill mode and priority weights changed) after this share.
    reconfigure_at: Option<usize>,
    /// `policy.priority.calc_period_ms`: the order keys calculated once a period.
    calc_period: Option<u64>,
}

#[derive(Clone, Copy, Debug)]
enum Plugins {
    Config,
    Las,
    ShortestFirst,
    /// The configuration's plug-ins and a guaranteed run time of two minutes (a victim veto
    /// that ends).
    MinRunTime,
    /// The default plug-ins and an adversary playing these tricks.
    Adversarial(u64, &'static [Trick]),
    /// The configuration's plug-ins and a backfill rule ([`NoLongerThanHead`]).
    BackfillRule,
}

/// A backfill rule that refuses some jobs: a job behind the head may start only if its time
/// limit is no longer than the head's.
#[derive(Clone)]
struct NoLongerThanHead;

#[gangway::policy::plugin]
impl Plugin for NoLongerThanHead {
    fn name(&self) -> &str {
        "no_longer_than_head"
    }
    fn may_backfill(&self, head: HeadView<'_>, job: JobView<'_>, _: &PassContext<'_>) -> bool {
        job.spec().time_limit_ms <= head.job.spec().time_limit_ms
    }
}

const TRICK_SETS: [&[Trick]; 4] = [
    &[Trick::ShiftingKeys],
    &[Trick::RandomVotes, Trick::ExtremeScores],
    &[Trick::RejectSome, Trick::JunkDevices, Trick::OddWakeUps],
    &[Trick::JunkVictims, Trick::ExtremeDomainScores],
];

fn plugins() -> impl Strategy<Value = Plugins> {
    prop_oneof![
        4 => Just(Plugins::Config),
        1 => Just(Plugins::Las),
        1 => Just(Plugins::ShortestFirst),
        2 => (any::<u64>(), 0..TRICK_SETS.len())
            .prop_map(|(seed, set)| Plugins::Adversarial(seed, TRICK_SETS[set])),
        1 => Just(Plugins::BackfillRule),
    ]
}

impl Plugins {
    fn profile(self, config: &ClusterConfig) -> Option<Profile> {
        let profile = match self {
            Plugins::Config => Profile::from_config(config).ok()?,
            Plugins::Las => Profile::builder().plugin(Las::default()).build().ok()?,
            Plugins::ShortestFirst => Profile::builder().plugin(ShortestFirst).build().ok()?,
            Plugins::MinRunTime => Profile::from_config(config)
                .ok()?
                .into_builder()
                .plugin(MinRunTime::new(120_000))
                .build()
                .ok()?,
            Plugins::Adversarial(seed, tricks) => Profile::from_config(config)
                .ok()?
                .into_builder()
                .plugin(Adversary::new("adversary", seed, tricks.to_vec()).plugin())
                .build()
                .ok()?,
            Plugins::BackfillRule => Profile::from_config(config)
                .ok()?
                .into_builder()
                .plugin(NoLongerThanHead)
                .build()
                .ok()?,
        };
        Some(profile)
    }
}

fn features() -> impl Strategy<Value = Features> {
    // Each feature in about one case of four, so that plain cases, where every shortcut may
    // be taken, stay common.
    let often = || prop::bool::weighted(0.25);
    (
        (often(), often(), often(), prop::bool::weighted(0.5)),
        option::weighted(
            0.25,
            (
                prop_oneof![Just(1_000u64), Just(30_000), Just(120_000)],
                any::<bool>(),
            ),
        ),
        option::weighted(0.25, (1u32..4, 1u32..3)),
        option::weighted(0.25, (0..NODE_POOL, 0u64..600_000, 1u64..600_000)),
        plugins(),
        (
            option::weighted(0.3, 1usize..8),
            option::weighted(0.3, 1usize..8),
            option::weighted(
                0.25,
                prop_oneof![Just(1_000u64), Just(60_000), Just(600_000)],
            ),
        ),
    )
        .prop_map(
            |(
                (fair_sharing, admission_fair_sharing, order_based, no_preemption),
                wait_for_ready,
                licenses,
                maintenance,
                profile,
                (restore_at, reconfigure_at, calc_period),
            )| Features {
                fair_sharing,
                admission_fair_sharing,
                wait_for_ready,
                order_based,
                no_preemption,
                licenses,
                maintenance,
                profile,
                restore_at,
                reconfigure_at,
                calc_period,
            },
        )
}

prop_compose! {
    /// A generated cluster with the case's features, a stream, and `ready` events per tick.
    fn case()(
        mut config in cluster(),
        mut stream in stream(40),
        features in features(),
        ready in prop::collection::vec(prop::collection::vec(0..JOB_POOL, 0..3), 24),
    ) -> (ClusterConfig, Stream, Features) {
        apply(&mut config, &mut stream, &features, &ready);
        (config, stream, features)
    }
}

/// Switches the features on in `config` and in the stream's submits.
fn apply(config: &mut ClusterConfig, stream: &mut Stream, f: &Features, ready: &[Vec<u32>]) {
    let policy = &mut config.policy;
    policy.priority.calc_period_ms = f.calc_period;
    if f.no_preemption {
        policy.preemption.enabled = false;
    }
    if f.fair_sharing && !config.cohorts.is_empty() {
        policy.fair_sharing = FairSharingConfig {
            enabled: true,
            ..FairSharingConfig::default()
        };
        policy.preemption.enabled = true;
    }
    for queue in &mut config.queues {
        queue.admission_fair_sharing = f.admission_fair_sharing;
    }
    if let Some((timeout_ms, block_admission)) = f.wait_for_ready {
        policy.wait_for_ready = Some(WaitForReadyConfig {
            timeout_ms,
            block_admission,
            backoff_base_ms: 5_000,
            backoff_limit: Some(3),
            ..WaitForReadyConfig::default()
        });
    }
    policy.preemption.order_based = f.order_based && policy.preemption.enabled;
    if let Some((pool, _)) = f.licenses {
        config.licenses.insert("lic".into(), pool);
    }
    if let Some((node, start_ms, length)) = f.maintenance
        && let Some(name) = config.nodes.get(node as usize).map(|n| n.name.clone())
    {
        config.maintenance.push(gangway::config::MaintenanceConfig {
            id: None,
            nodes: vec![name],
            start_ms,
            end_ms: start_ms + length,
        });
    }
    let mut submits = 0u32;
    for (step, ready) in stream.ticks.iter_mut().zip(ready) {
        for event in &mut step.events {
            if let StreamEvent::Raw(Event::Submit { job }) = event {
                submits += 1;
                if let Some((_, asked)) = f.licenses
                    && submits.is_multiple_of(3)
                {
                    job.licenses.insert("lic".into(), asked);
                }
            }
        }
        if f.wait_for_ready.is_some() {
            step.events.extend(ready.iter().map(|&i| {
                StreamEvent::Raw(Event::Ready {
                    job: format!("j{i}"),
                })
            }));
        }
    }
}

/// The configuration a case reconfigures to: another backfill mode (into and out of the head
/// rules), the pinned head switched, and other age and fair-share weights.
fn reconfigured(config: &ClusterConfig) -> ClusterConfig {
    use gangway::config::{BackfillCandidates, BackfillMode};
    let mut next = config.clone();
    let policy = &mut next.policy;
    policy.backfill.mode = match policy.backfill.mode {
        BackfillMode::None => BackfillMode::Easy,
        BackfillMode::Easy => BackfillMode::Conservative,
        BackfillMode::Conservative => BackfillMode::None,
        BackfillMode::BeforeHeadEstimate => BackfillMode::Easy,
        BackfillMode::Rule => BackfillMode::BeforeHeadEstimate,
    };
    if !policy.backfill.mode.head_rule() {
        policy.backfill.candidates = BackfillCandidates::Order;
    }
    if policy.backfill.mode == BackfillMode::None && policy.backfill.depth.is_none() {
        // From `conservative` (every job a reservation) to a head rule, now and then.
        policy.backfill.mode = BackfillMode::Rule;
    }
    policy.priority.pinned_head = !policy.priority.pinned_head;
    policy.priority.weights.age = (policy.priority.weights.age + 500) % 1000;
    policy.priority.weights.fairshare = (policy.priority.weights.fairshare + 300) % 1000;
    next
}

/// How often the cases reached the head rules, the pinned head and the backfill rules
/// (counted by [`run`] over the ticks of accepted cases).
#[derive(Debug, Default)]
struct Reached {
    /// Ticks of cases in a head-rule mode (`before_head_estimate`, `rule`) after which a job
    /// that fits waits behind the head (`priority`).
    head_rule_held: usize,
    /// Of those, ticks of cases with `candidates: "submit"`.
    by_submit_held: usize,
    /// Ticks of cases with a user backfill rule after which a job waits `priority`.
    rule_plugin_held: usize,
    /// Ticks of cases with a pinned head after which a job waits for resources.
    pinned_waiting: usize,
}

impl Reached {
    fn count(&mut self, config: &ClusterConfig, f: &Features, reference: &Scheduler) {
        use gangway::config::BackfillCandidates;
        let pending = reference.explain().pending;
        let waits = |reason: PendingReason| pending.iter().any(|p| p.reason == reason);
        let (backfill, priority) = (&config.policy.backfill, &config.policy.priority);
        let held = waits(PendingReason::Priority);
        if backfill.mode.head_rule() && held {
            self.head_rule_held += 1;
            if backfill.candidates == BackfillCandidates::Submit {
                self.by_submit_held += 1;
            }
        }
        if matches!(f.profile, Plugins::BackfillRule) && held {
            self.rule_plugin_held += 1;
        }
        if priority.pinned_head && waits(PendingReason::Resources) {
            self.pinned_waiting += 1;
        }
    }
}

/// Ticks the case through the twins; `None` when the generated configuration is refused, else
/// the shortcuts the fast scheduler took. Counts what the case reached in `reached`.
fn run(
    config: &ClusterConfig,
    stream: &Stream,
    f: &Features,
    reached: &mut Reached,
) -> Result<Option<ShortcutsTaken>, TestCaseError> {
    let Some(profile) = f.profile.profile(config) else {
        return Ok(None);
    };
    let Ok(scheduler) = Scheduler::with_profile(config.clone(), profile) else {
        return Ok(None);
    };
    let mut twins = Twins::new(scheduler);
    let at = |eighths: Option<usize>| eighths.map(|e| stream.ticks.len() * e / 8);
    let (restore_at, reconfigure_at) = (at(f.restore_at), at(f.reconfigure_at));
    for (i, step) in stream.ticks.iter().enumerate() {
        if restore_at == Some(i) {
            let snapshot = twins.fast().snapshot();
            let profile = f.profile.profile(config).unwrap();
            let restored = Scheduler::restore_with_profile(snapshot, profile);
            prop_assert!(restored.is_ok(), "restore: {:?}", restored.err());
            twins.replace_fast(restored.unwrap());
        }
        if reconfigure_at == Some(i) {
            let next = reconfigured(config);
            let answer = twins.both(|s| s.reconfigure(next.clone()).map_err(|e| e.to_string()));
            prop_assert!(answer.is_ok(), "{}", answer.unwrap_err());
        }
        let events = resolve(twins.fast(), &step.events);
        prop_assert_eq!(&events, &resolve(twins.reference(), &step.events));
        if let Err(difference) = twins.tick(step.at_ms, events) {
            return Err(TestCaseError::fail(format!("tick {i}: {difference}")));
        }
        // What if the tick's last submission came again, as another job?
        let probe = step.events.iter().rev().find_map(|event| match event {
            StreamEvent::Raw(Event::Submit { job }) => Some(job.clone()),
            _ => None,
        });
        if let Some(mut job) = probe {
            job.id = format!("what-if-{i}");
            if let Err(difference) = twins.what_if(job) {
                return Err(TestCaseError::fail(format!("tick {i}: {difference}")));
            }
        }
        reached.count(config, f, twins.reference());
    }
    Ok(Some(twins.shortcuts_taken()))
}

/// A busy cluster: three nodes of 8 cpus and 4 GPUs, with backfill `mode` (and `depth`), the
/// backfill `candidates` and the pinned head as given.
fn busy_cluster(mode: &str, depth: Option<u32>, candidates: &str, pinned: bool) -> ClusterConfig {
    let node = |name: &str| {
        json!({"name": name, "cpus": 8, "memory_mib": 32_000,
               "gpus": {"model": "a100", "count": 4}})
    };
    serde_json::from_value(json!({
        "nodes": [node("n1"), node("n2"), node("n3")],
        "policy": {"backfill": {"mode": mode, "depth": depth, "candidates": candidates},
                   "priority": {"pinned_head": pinned}}}))
    .unwrap()
}

/// A submit of job `j{id}`: one group (sometimes two) of 1–3 tasks of 1–4 cpus and 0, 1 or
/// 2 whole GPUs or a half or a quarter of one (fractions change the shape mix that picks their
/// devices), 10 s to 10 min, priority −3..3.
fn busy_submit() -> impl Strategy<Value = StreamEvent> {
    let group = (1u32..=3, 1u64..=4, 0usize..5, 0usize..4).prop_map(|(n, c, g, p)| {
        let placement = ["pack", "spread", "strict_pack", "strict_spread"][p];
        let gpus = [0.0, 1.0, 2.0, 0.5, 0.25][g];
        json!({"count": n, "cpus": c, "memory_mib": c * 1_000, "gpus": gpus,
               "placement": placement})
    });
    (0u32..40, vec(group, 1..=2), 10_000u64..=600_000, -3i32..=3).prop_map(
        |(id, groups, limit, priority)| {
            let job = json!({"id": format!("j{id}"), "time_limit_ms": limit,
                             "priority": priority, "groups": groups});
            StreamEvent::Raw(serde_json::from_value(json!({"type": "submit", "job": job})).unwrap())
        },
    )
}

/// Eight nodes of 4 cpus and two of 8 in backfill mode `mode`: wide spread gangs wait for
/// room while narrower jobs end and backfill.
fn wide_cluster(mode: &str) -> ClusterConfig {
    let nodes: Vec<_> = (1..=10)
        .map(|i| {
            json!({"name": format!("n{i}"), "cpus": if i > 8 { 8 } else { 4 },
                        "memory_mib": 16_000, "gpus": {"model": "a100", "count": 1}})
        })
        .collect();
    serde_json::from_value(json!({"nodes": nodes, "policy": {"backfill": {"mode": mode}}})).unwrap()
}

/// A submit of job `j{id}`: one group of 1–8 tasks of 1–4 cpus, spread or strict spread (one
/// in eight packed), now and then a whole GPU a task, 10 s to 10 min.
fn wide_submit() -> impl Strategy<Value = StreamEvent> {
    let placement = prop_oneof![4 => Just("spread"), 3 => Just("strict_spread"), 1 => Just("pack")];
    let gpus = prop_oneof![7 => Just(0.0), 1 => Just(1.0)];
    (
        0u32..40,
        1u32..=8,
        1u64..=4,
        placement,
        gpus,
        10_000u64..=600_000,
    )
        .prop_map(|(id, count, cpus, placement, gpus, limit)| {
            let group = json!({"count": count, "cpus": cpus, "memory_mib": cpus * 1_000,
                               "gpus": gpus, "placement": placement});
            let job = json!({"id": format!("j{id}"), "time_limit_ms": limit, "groups": [group]});
            StreamEvent::Raw(serde_json::from_value(json!({"type": "submit", "job": job})).unwrap())
        })
}

/// The releasing arm: [`wide_cluster`] under conservative or EASY backfill, ticks of submits
/// and running jobs' ends only (every other tick submits only, at the instant before it), the
/// default profile. A release is the one change between most passes: the searches that come to
/// a plan's start take it without a placement where the nodes released or started on since
/// are out of its reach or still taken by it.
fn releasing() -> impl Strategy<Value = (ClusterConfig, Stream, Features)> {
    let mode = prop_oneof![Just("conservative"), Just("easy")];
    let finish = (any::<u8>(), prop::bool::weighted(0.1))
        .prop_map(|(pick, failed)| StreamEvent::FinishRunning { pick, failed });
    let tick = (0u64..=60_000, vec(wide_submit(), 0..=3), vec(finish, 0..=2));
    (vec(tick, 1..=40).prop_map(paired_ticks), mode)
        .prop_map(|(stream, mode)| (wide_cluster(mode), stream, no_extras(Plugins::Config)))
}

/// Ticks of mostly submits on [`busy_cluster`]; every other tick, at the same instant as the
/// one before, has submits only (its pass may keep plans). The others also finish, cancel,
/// hold or release jobs or change a time limit.
fn busy_stream() -> impl Strategy<Value = Stream> {
    let other = prop_oneof![
        (any::<u8>(), any::<bool>())
            .prop_map(|(pick, failed)| StreamEvent::FinishRunning { pick, failed }),
        (0u32..40, 0usize..4, 10_000u64..=600_000).prop_map(|(id, kind, limit)| {
            let job = format!("j{id}");
            let event = match kind {
                0 => json!({"type": "cancel", "job": job}),
                1 => json!({"type": "hold", "job": job}),
                2 => json!({"type": "release", "job": job}),
                _ => json!({"type": "set_time_limit", "job": job, "time_limit_ms": limit}),
            };
            StreamEvent::Raw(serde_json::from_value(event).unwrap())
        }),
    ];
    let tick = (0u64..=60_000, vec(busy_submit(), 0..=3), vec(other, 0..=2));
    vec(tick, 1..=40).prop_map(paired_ticks)
}

/// Nothing switched on but the profile's plug-ins (`profile`), preemption off.
fn no_extras(profile: Plugins) -> Features {
    Features {
        fair_sharing: false,
        admission_fair_sharing: false,
        wait_for_ready: None,
        order_based: false,
        no_preemption: true,
        licenses: None,
        maintenance: None,
        profile,
        restore_at: None,
        reconfigure_at: None,
        calc_period: None,
    }
}

/// The busy arm: the busy cluster (mostly conservative; else EASY with a shallow depth, no
/// backfill, or a head rule, `before_head_estimate` or `rule`, where many jobs of few shapes
/// wait behind a blocked head; sometimes with a pinned head) and stream, the default profile
/// (in mode `rule` now and then with a backfill rule), nothing else switched on.
fn busy() -> impl Strategy<Value = (ClusterConfig, Stream, Features)> {
    let mode = prop_oneof![
        8 => Just(("conservative", None, "order")),
        2 => Just(("easy", Some(1), "order")),
        2 => Just(("none", None, "order")),
        1 => Just(("before_head_estimate", None, "order")),
        1 => Just(("before_head_estimate", None, "submit")),
        1 => Just(("rule", None, "order")),
        1 => Just(("rule", None, "submit")),
    ];
    let extras = (prop::bool::weighted(0.15), prop::bool::weighted(0.5));
    (busy_stream(), mode, extras).prop_map(|(stream, (mode, depth, candidates), (pinned, rule))| {
        let profile = if mode == "rule" && rule {
            Plugins::BackfillRule
        } else {
            Plugins::Config
        };
        let cluster = busy_cluster(mode, depth, candidates, pinned);
        (cluster, stream, no_extras(profile))
    })
}

/// A submit of job `j{id}` for [`contended_stream`]: one group of 1–3 tasks of 2 or 4 cpus and
/// 0 or 1 GPU, packed or spread (few kinds, so that preemptors of one kind queue up), 1 to 20
/// min, priority 0..3, a grace period of 0 or 30 s.
fn contended_submit() -> impl Strategy<Value = StreamEvent> {
    let group =
        (1u32..=3, prop::bool::ANY, 0u64..=1, prop::bool::ANY).prop_map(|(n, big, g, spread)| {
            let c = if big { 4 } else { 2 };
            let placement = if spread { "spread" } else { "pack" };
            json!({"count": n, "cpus": c, "memory_mib": c * 1_000, "gpus": g,
                   "placement": placement})
        });
    let grace = prop_oneof![Just(0u64), Just(30_000)];
    (0u32..60, group, 60_000u64..=1_200_000, 0i32..=3, grace).prop_map(
        |(id, group, limit, priority, grace)| {
            let job = json!({"id": format!("j{id}"), "time_limit_ms": limit,
                             "priority": priority, "grace_ms": grace, "groups": [group]});
            StreamEvent::Raw(serde_json::from_value(json!({"type": "submit", "job": job})).unwrap())
        },
    )
}

/// Ticks of many submits on the busy cluster with order-based preemption: long queues of
/// preemptors that outrank some running jobs, most finding no room. Every other tick, at the
/// same instant as the one before, has submits only; the others also finish running jobs,
/// acknowledge preemptions, and now and then set a job's priority or time limit (running or
/// not: what a victim order kept across passes must notice).
fn contended_stream() -> impl Strategy<Value = Stream> {
    let other = prop_oneof![
        4 => (any::<u8>(), any::<bool>())
            .prop_map(|(pick, failed)| StreamEvent::FinishRunning { pick, failed }),
        4 => any::<u8>().prop_map(|pick| StreamEvent::AckPreempted { pick }),
        1 => (0u32..60, any::<bool>(), -1i32..=4, 60_000u64..=1_200_000).prop_map(
            |(id, priority, value, limit)| {
                let job = format!("j{id}");
                let event = if priority {
                    json!({"type": "set_priority", "job": job, "priority": value})
                } else {
                    json!({"type": "set_time_limit", "job": job, "time_limit_ms": limit})
                };
                StreamEvent::Raw(serde_json::from_value(event).unwrap())
            }
        ),
    ];
    let tick = (
        0u64..=60_000,
        vec(contended_submit(), 0..=6),
        vec(other, 0..=2),
    );
    vec(tick, 1..=30).prop_map(paired_ticks)
}

/// A stream from drawn ticks of (time step, submits, other events): time moves and the other
/// events come on every second tick, so that the ticks between are submits at the same time.
fn paired_ticks(ticks: Vec<(u64, Vec<StreamEvent>, Vec<StreamEvent>)>) -> Stream {
    let mut at_ms = 0;
    let ticks = ticks
        .into_iter()
        .enumerate()
        .map(|(i, (delta, mut events, others))| {
            if i % 2 == 0 {
                at_ms += delta;
                events.extend(others);
            }
            TickStep { at_ms, events }
        })
        .collect();
    Stream { ticks }
}

/// The contended arm: the busy cluster (conservative, EASY or no backfill) with order-based
/// preemption and, now and then, partition tiers, no quota tree, [`contended_stream`]; the
/// default profile mostly (its keys and victim plug-ins fixed across passes), else with a
/// guaranteed run time (vetoes that end), shortest-first (keys fixed across passes too) or LAS
/// (keys that change, where the searches take none of the order-based shortcuts).
fn contended() -> impl Strategy<Value = (ClusterConfig, Stream, Features)> {
    let mode = prop_oneof![
        2 => Just("conservative"),
        2 => Just("easy"),
        1 => Just("none"),
    ];
    let profile = prop_oneof![
        5 => Just(Plugins::Config),
        1 => Just(Plugins::MinRunTime),
        1 => Just(Plugins::ShortestFirst),
        1 => Just(Plugins::Las),
    ];
    let tiers = prop::bool::weighted(0.2);
    (contended_stream(), mode, profile, tiers).prop_map(|(stream, mode, profile, tiers)| {
        let mut config = busy_cluster(mode, None, "order", false);
        let preemption = &mut config.policy.preemption;
        preemption.enabled = true;
        preemption.order_based = true;
        preemption.partition_tiers = tiers;
        let plain = Features {
            order_based: true,
            no_preemption: false,
            ..no_extras(profile)
        };
        (config, stream, plain)
    })
}

/// The fair-sharing contended arm: the busy cluster (EASY or conservative) shared by three
/// queues of a cohort with fair sharing on, each guaranteed a third of the GPUs and free to
/// borrow the rest, any borrower reclaimable ([`contended_stream`]'s ticks, each job in a drawn
/// queue, of few shapes and priorities; each queue preempting by priority within itself, and
/// reclaiming from any borrower or from lower priorities only, as drawn), so that many waiting
/// jobs of one queue search for victims with the same request, most finding none.
fn fair_contended() -> impl Strategy<Value = (ClusterConfig, Stream, Features)> {
    let mode = prop_oneof![Just("conservative"), Just("easy")];
    let queues = vec(0usize..3, 64);
    let policies = (prop::bool::ANY, prop::bool::ANY);
    (contended_stream(), mode, queues, policies).prop_map(
        |(mut stream, mode, queues, (within, reclaim_any))| {
            let mut config = busy_cluster(mode, None, "order", false);
            let within = if within { "lower_priority" } else { "never" };
            let reclaim = if reclaim_any { "any" } else { "lower_priority" };
            let queue = |name: &str| {
                json!({"name": name, "cohort": "lab", "quota": {"gpu": {"nominal": 4}},
                   "preemption": {"within_queue": within, "reclaim_within_cohort": reclaim}})
            };
            config.cohorts = serde_json::from_value(json!([{"name": "lab"}])).unwrap();
            config.queues =
                serde_json::from_value(json!([queue("qa"), queue("qb"), queue("qc")])).unwrap();
            config.policy.fair_sharing.enabled = true;
            config.policy.preemption.enabled = true;
            let submits = stream.ticks.iter_mut().flat_map(|t| t.events.iter_mut());
            for (event, q) in submits.zip(queues.iter().cycle()) {
                if let StreamEvent::Raw(Event::Submit { job }) = event {
                    job.queue = Some(["qa", "qb", "qc"][*q].to_string());
                    job.priority = job.priority.min(1);
                    for group in &mut job.groups {
                        group.count = group.count.min(2);
                    }
                }
            }
            let plain = Features {
                fair_sharing: true,
                admission_fair_sharing: false,
                wait_for_ready: None,
                order_based: false,
                no_preemption: false,
                licenses: None,
                maintenance: None,
                profile: Plugins::Config,
                restore_at: None,
                reconfigure_at: None,
                calc_period: None,
            };
            (config, stream, plain)
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192 * scale(), failure_persistence: crate::common::kept_beside(), ..ProptestConfig::default() })]

    #[test]
    fn the_fast_pass_decides_and_reports_exactly_as_the_reference_pass(
        (config, stream, features) in case()
    ) {
        run(&config, &stream, &features, &mut Reached::default())?;
    }

    #[test]
    fn kept_reservations_equal_full_searches_on_busy_clusters(
        (config, stream, features) in busy()
    ) {
        run(&config, &stream, &features, &mut Reached::default())?;
    }

    #[test]
    fn searches_after_releases_equal_full_searches_on_wide_clusters(
        (config, stream, features) in releasing()
    ) {
        run(&config, &stream, &features, &mut Reached::default())?;
    }

    #[test]
    fn order_based_preemption_on_busy_clusters_decides_as_the_reference_pass(
        (config, stream, features) in contended()
    ) {
        run(&config, &stream, &features, &mut Reached::default())?;
    }

    #[test]
    fn fair_sharing_preemption_on_busy_clusters_decides_as_the_reference_pass(
        (config, stream, features) in fair_contended()
    ) {
        run(&config, &stream, &features, &mut Reached::default())?;
    }
}

/// Adds the shortcuts of one case to `total`.
fn add(total: &mut ShortcutsTaken, taken: ShortcutsTaken) {
    total.settled += taken.settled;
    total.kept += taken.kept;
    total.kept_unplaced += taken.kept_unplaced;
    total.searched_unplaced += taken.searched_unplaced;
    total.continued += taken.continued;
    total.outranked_walks += taken.outranked_walks;
    total.bisections += taken.bisections;
    total.no_room_skips += taken.no_room_skips;
    total.fair_no_room_skips += taken.fair_no_room_skips;
    total.quota_verdicts_reused += taken.quota_verdicts_reused;
    total.kept_order += taken.kept_order;
    total.victim_orders_carried += taken.victim_orders_carried;
    total.counted_fill_backs += taken.counted_fill_backs;
    total.candidates_reused += taken.candidates_reused;
    total.placements_spared += taken.placements_spared;
    total.turns_counted_out += taken.turns_counted_out;
}

/// The comparisons are not vacuous: over a fixed sample of cases of each family most
/// configurations are accepted, the fast scheduler took every shortcut many times (the
/// preemption searches' too), and the head rules, a user backfill rule and the pinned head
/// held jobs back many times.
#[test]
fn the_cases_reach_every_shortcut() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    let (mut accepted, mut total) = (0, ShortcutsTaken::default());
    let mut reached = Reached::default();
    let cases = 100;
    for i in 0..2 * cases {
        let (config, stream, features) = match i % 2 {
            0 => case().new_tree(&mut runner).unwrap().current(),
            _ => busy().new_tree(&mut runner).unwrap().current(),
        };
        if let Some(taken) = run(&config, &stream, &features, &mut reached).unwrap() {
            accepted += 1;
            add(&mut total, taken);
        }
    }
    // The contended families, each on a stream of its own, so that the others' draws stay as
    // they were.
    for (name, family, seed) in [
        ("order-based", contended().boxed(), 11),
        ("fair-sharing", fair_contended().boxed(), 13),
        ("releasing", releasing().boxed(), 17),
    ] {
        let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[seed; 32]);
        let mut runner = TestRunner::new_with_rng(Config::default(), rng);
        for _ in 0..cases / 2 {
            let (config, stream, features) = family.new_tree(&mut runner).unwrap().current();
            let taken = run(&config, &stream, &features, &mut reached).unwrap();
            assert!(taken.is_some(), "every {name} case is accepted");
            add(&mut total, taken.unwrap_or_default());
        }
    }
    eprintln!("{total:?}");
    assert!(
        accepted * 10 >= 2 * cases * 7,
        "only {accepted} of {} configurations accepted",
        2 * cases
    );
    assert!(total.settled >= 30, "{total:?}");
    assert!(total.kept >= 1_000, "{total:?}");
    // Kept without a placement (about 1,550): only where no GPU job was submitted since, as a
    // GPU submission changes the shape mix that placements rank by.
    assert!(total.kept_unplaced >= 250, "{total:?}");
    // Searches after releases that took their plan without a placement, mostly from the
    // releasing family (about 100).
    assert!(total.searched_unplaced >= 40, "{total:?}");
    assert!(total.continued >= 200, "{total:?}");
    // The order-based preemption shortcuts, mostly from the contended family (about 6,000,
    // 140 and 2,600).
    assert!(total.outranked_walks >= 2_000, "{total:?}");
    assert!(total.bisections >= 50, "{total:?}");
    assert!(total.no_room_skips >= 800, "{total:?}");
    // The fair-sharing searches' memo, from the fair contended family (about 950).
    assert!(total.fair_no_room_skips >= 400, "{total:?}");
    // Quota verdicts of jobs not placed, reused for jobs alike (about 4,900).
    assert!(total.quota_verdicts_reused >= 2_000, "{total:?}");
    // Victim orders carried from one pass to the next, from the contended family (about 610).
    assert!(total.victim_orders_carried >= 300, "{total:?}");
    // Fill-backs answered by the task counts, from the contended families (about 105).
    assert!(total.counted_fill_backs >= 50, "{total:?}");
    // Searches that took an earlier search's candidates, mostly from the fair contended
    // family (about 7,500).
    assert!(total.candidates_reused >= 3_000, "{total:?}");
    // The order kept across passes under a calculation period (about 315 passes).
    assert!(total.kept_order >= 150, "{total:?}");
    // Waiting jobs' turns ended at once by the free totals (about 1,600).
    assert!(total.turns_counted_out >= 800, "{total:?}");
    // The head rules, the submit-order candidates, a user backfill rule and the pinned head
    // are reached: jobs that fit are held behind a head (about 120, 65, 30 and 35 ticks).
    assert!(reached.head_rule_held >= 60, "{reached:?}");
    assert!(reached.by_submit_held >= 30, "{reached:?}");
    assert!(reached.rule_plugin_held >= 15, "{reached:?}");
    assert!(reached.pinned_waiting >= 15, "{reached:?}");
}

/// Found by `kept_reservations_equal_full_searches_on_busy_clusters`. A job of two GPU task
/// groups waits behind a blocked head (mode `none`), and its reason (`priority`: it would
/// fit) comes from a greedy placement on what is free. A GPU job submitted next changes the
/// shape mix, which breaks ties among GPU nodes: the first group now goes where the second
/// needed room, and the full pass reads `resources`. The continued pass must not keep the
/// old verdict.
#[test]
fn a_gpu_submit_rereads_a_waiting_multi_group_jobs_reason() {
    let node = |name: &str, cpus: u64| json!({"name": name, "cpus": cpus, "memory_mib": 32_000, "gpus": {"model": "a100", "count": 4}});
    let cluster = json!({"nodes": [node("n1", 2), node("n2", 4)],
                         "policy": {"backfill": {"mode": "none"}}});
    let mut twins = Twins::new(Scheduler::new(serde_json::from_value(cluster).unwrap()).unwrap());
    let submit = |id: &str, priority: i64, groups: serde_json::Value| -> Event {
        serde_json::from_value(
            json!({"type": "submit", "job": {"id": id, "priority": priority,
            "time_limit_ms": 60_000, "groups": groups}}),
        )
        .unwrap()
    };
    let group =
        |cpus: u64, gpus: u64| json!({"count": 1, "cpus": cpus, "memory_mib": 1_000, "gpus": gpus});
    let one_cpu_on_each = json!([{"count": 2, "cpus": 1, "memory_mib": 1_000,
                                  "placement": "strict_spread"}]);
    let steps = [
        vec![submit("filler", 5, one_cpu_on_each)],
        // `head` needs 4 cpus on one node, where n1 has 1 free and n2 3.
        vec![
            submit("head", 1, json!([group(4, 0)])),
            submit("two", 0, json!([group(1, 1), group(3, 1)])),
        ],
        vec![],
        vec![submit("gpu", 0, json!([group(1, 1)]))],
    ];
    for (i, events) in steps.into_iter().enumerate() {
        twins
            .tick(0, events)
            .unwrap_or_else(|e| panic!("tick {i}: {e}"))
            .unwrap();
    }
    // The case still turns on the mix: the full pass reads `resources` now.
    let pending = twins.reference().explain().pending;
    let two = pending.iter().find(|p| p.job == "two").unwrap();
    assert_eq!(two.reason, PendingReason::Resources);
}

/// Where a queue's quota, not the nodes, holds jobs back (the soak's standard workload), the
/// fast pass asks the quota first and spares the placement of every job whose verdict no
/// placement could change, and decides and reports exactly as the reference pass, which
/// places every job. Exclusive and elastic jobs, and jobs that accept several models under a
/// `gpu:MODEL` quota, are placed as before: their demand hangs on the nodes.
#[test]
fn a_quota_that_rules_out_every_placement_spares_it_and_decides_as_the_reference_pass() {
    let node = |name: &str, model: &str| {
        json!({"name": name, "cpus": 64, "memory_mib": 256_000,
               "gpus": {"model": model, "count": 8}})
    };
    let submit = |id: &str, queue: &str, group: serde_json::Value, exclusive: bool| -> Event {
        serde_json::from_value(json!({"type": "submit", "job": {"id": id, "queue": queue,
            "time_limit_ms": 600_000, "exclusive": exclusive, "groups": [group]}}))
        .unwrap()
    };
    let finished = |id: &str| -> Event {
        serde_json::from_value(json!({"type": "finished", "job": id, "outcome": "completed"}))
            .unwrap()
    };
    for model_quota in [false, true] {
        let mut quota = json!({"gpu": {"nominal": 2, "borrowing_limit": 0}});
        if model_quota {
            quota["gpu:h100"] = json!({"nominal": 1, "borrowing_limit": 0});
        }
        let queue = |name: &str| {
            json!({"name": name, "cohort": "lab", "quota": quota,
                   "preemption": {"within_queue": "lower_priority",
                                  "reclaim_within_cohort": "any"}})
        };
        let cluster = json!({
            "nodes": [node("a1", "a100"), node("a2", "a100"), node("h1", "h100")],
            "cohorts": [{"name": "lab"}],
            "queues": [queue("qa"), queue("qb")],
            "policy": {"fair_sharing": {"enabled": true}, "preemption": {"enabled": true}},
        });
        let config: ClusterConfig = serde_json::from_value(cluster).unwrap();
        let mut twins = Twins::new(Scheduler::new(config).unwrap());
        // Under a `gpu:h100` quota, qa's jobs that accept one model have one demand.
        let one = match model_quota {
            false => json!({"count": 1, "gpus": 1}),
            true => json!({"count": 1, "gpus": 1, "gpu_models": ["a100"]}),
        };
        let mut first: Vec<Event> = (0..8)
            .map(|i| submit(&format!("a{i}"), "qa", one.clone(), false))
            .collect();
        first.push(submit("b0", "qb", one.clone(), false));
        first.push(submit("x", "qa", json!({"count": 1, "gpus": 1}), true));
        first.push(submit(
            "e",
            "qa",
            json!({"count": 2, "min_count": 1, "gpus": 1}),
            false,
        ));
        first.push(submit("m", "qb", json!({"count": 2, "gpus": 1}), false));
        let steps = [
            first,
            vec![],
            vec![finished("a0"), finished("a1")],
            vec![finished("b0")],
            vec![],
        ];
        for (i, events) in steps.into_iter().enumerate() {
            twins
                .tick(60_000 * i as u64, events)
                .unwrap_or_else(|e| panic!("tick {i}: {e}"))
                .unwrap();
        }
        let spared = twins.shortcuts_taken().placements_spared;
        assert!(
            spared >= 20,
            "model quota {model_quota}: {spared} placements spared"
        );
        // a0 to a3 ran in qa's two GPUs in turn; the rest wait on the quota alone (and so
        // does qb's `m` where it is placed on the h100 node, beyond qb's one h100).
        let pending = twins.reference().explain().pending;
        let waiting: Vec<(&str, PendingReason)> =
            pending.iter().map(|p| (p.job.as_str(), p.reason)).collect();
        let m = model_quota.then_some("m");
        let expected: Vec<(&str, PendingReason)> = m
            .into_iter()
            .chain(["a4", "a5", "a6", "a7", "x", "e"])
            .map(|job| (job, PendingReason::Quota))
            .collect();
        assert_eq!(waiting, expected, "model quota {model_quota}");
    }
}
