//! Proptest strategies for clusters, job specs and event streams.
//!
//! Names come from small fixed pools (nodes `n0`…, jobs `j0`…, partitions `main`/`gpu`,
//! queues `qa`/`qb`, accounts `ml`/`cv`, users `alice`/`bob`) so that generated events keep
//! hitting jobs and nodes that exist — and sometimes ones that do not (`ghost`, `n9`), which the
//! scheduler must reject without changing anything. Clusters are valid by construction.
//! Hardware and its requests come from [`crate::testkit::strategies_hw`]: some clusters have a
//! topology (every node labelled), some GPU nodes NVLink islands or MIG layouts, and some task
//! groups a topology request or a MIG profile (a few of them ones the cluster cannot have).
//!
//! ```
//! use gangway::testkit::strategies::{cluster, stream};
//! use proptest::strategy::{Strategy, ValueTree};
//! use proptest::test_runner::TestRunner;
//! let mut runner = TestRunner::deterministic();
//! let config = cluster().new_tree(&mut runner).unwrap().current();
//! assert!(gangway::Scheduler::new(config).is_ok());
//! let s = stream(20).new_tree(&mut runner).unwrap().current();
//! assert!(s.ticks.len() <= 20);
//! ```

use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;

use crate::config::{
    AccountConfig, BackfillCandidates, BackfillMode, ClusterConfig, CohortConfig, GpuConfig,
    NodeConfig, PartitionConfig, QueueConfig, QuotaConfig, ReclaimWithinCohort, WithinQueue,
};
use crate::event::Event;
use crate::model::amount::Milli;
use crate::model::job::{
    Dependency, DependencyKind, FinishOutcome, JobSpec, PlacementMode, TaskGroup,
};
use crate::testkit::harness::{Stream, StreamEvent};
use crate::testkit::strategies_hw::{group_requests, node_extras, topology};

/// GPU models the cluster strategy draws from.
pub const GPU_MODELS: [&str; 3] = ["a100", "h100", "l4"];
/// How many job ids (`j0`…) streams draw from.
pub const JOB_POOL: u32 = 12;
/// How many node names (`n0`…) clusters and streams draw from.
pub const NODE_POOL: u32 = 5;

fn node_name(i: u32) -> String {
    format!("n{i}")
}

fn job_name(i: u32) -> String {
    format!("j{i}")
}

/// A node from the pool (`n0`…): 2–16 cpus, memory, and up to 8 GPUs of one model (sometimes
/// none, sometimes with NVLink islands or a MIG layout), in partition `main` and maybe `gpu`;
/// mostly with `block` and `rack` labels (a node without them is refused by a cluster with a
/// topology).
pub fn node() -> impl Strategy<Value = NodeConfig> {
    (
        0..NODE_POOL,
        node_shape(),
        node_extras(),
        proptest::bool::weighted(0.9),
    )
        .prop_map(|(i, node, extras, labels)| {
            let mut node = NodeConfig {
                name: node_name(i),
                ..node
            };
            extras.apply(&mut node, labels);
            node
        })
}

/// A node without a name. (No `prop_flat_map` anywhere here: the fuzz target drives these
/// strategies from its input bytes, and every flat map would halve what is left of them.)
fn node_shape() -> impl Strategy<Value = NodeConfig> {
    (
        2u64..=16,
        prop_oneof![Just(0u32), 1u32..=8],
        0..GPU_MODELS.len(),
        any::<bool>(),
    )
        .prop_map(|(cpus, gpus, model, in_gpu_partition)| NodeConfig {
            cpus: Milli::from_units(cpus),
            memory_mib: cpus * 4_000,
            gpus: (gpus > 0).then(|| GpuConfig {
                model: GPU_MODELS[model].to_string(),
                count: gpus,
                memory_mib: 40_960,
                ..GpuConfig::default()
            }),
            partitions: Some(if in_gpu_partition {
                vec!["main".to_string(), "gpu".to_string()]
            } else {
                vec!["main".to_string()]
            }),
            ..NodeConfig::default()
        })
}

fn quota(nominal: u64, borrowing: Option<u64>) -> QuotaConfig {
    QuotaConfig {
        nominal: Milli::from_units(nominal),
        borrowing_limit: borrowing.map(Milli::from_units),
        lending_limit: None,
    }
}

/// Either no queues (one time in four), or queues `qa` and `qb` in cohort `org` with GPU and
/// cpu quotas and random preemption settings.
pub fn queues() -> impl Strategy<Value = (Vec<CohortConfig>, Vec<QueueConfig>)> {
    let queue = |name: &'static str| {
        (
            0u64..=12,
            option::of(0u64..=8),
            1u64..=32,
            prop_oneof![
                Just(WithinQueue::Never),
                Just(WithinQueue::LowerPriority),
                Just(WithinQueue::LowerOrNewerEqualPriority)
            ],
            prop_oneof![
                Just(ReclaimWithinCohort::Never),
                Just(ReclaimWithinCohort::LowerPriority),
                Just(ReclaimWithinCohort::Any)
            ],
            any::<bool>(),
        )
            .prop_map(move |(gpu, borrow, cpu, within, reclaim, strict)| {
                let mut q = QueueConfig {
                    name: name.to_string(),
                    cohort: Some("org".to_string()),
                    strict_fifo: strict,
                    ..QueueConfig::default()
                };
                q.quota.insert("gpu".into(), quota(gpu, borrow));
                q.quota.insert("cpu".into(), quota(cpu, None));
                q.preemption.within_queue = within;
                q.preemption.reclaim_within_cohort = reclaim;
                q
            })
    };
    // Mostly with queues: jobs name a queue half the time, and a cluster without queues
    // refuses those, so streams on queue-less clusters lose half their submits.
    prop_oneof![
        1 => Just((Vec::new(), Vec::new())),
        3 => (queue("qa"), queue("qb")).prop_map(|(a, b)| {
            let cohort = CohortConfig {
                name: "org".to_string(),
                ..CohortConfig::default()
            };
            (vec![cohort], vec![a, b])
        })
    ]
}

/// Either no accounts (one time in four), or accounts `ml` and `cv` with users `alice` and
/// `bob`.
pub fn accounts() -> impl Strategy<Value = Vec<AccountConfig>> {
    // Mostly with accounts, for the same reason as queues.
    prop_oneof![
        1 => Just(Vec::new()),
        3 => (1u32..=4, 1u32..=4).prop_map(|(ml, cv)| {
            let account = |name: &str, shares| {
                let mut a = AccountConfig {
                    name: name.to_string(),
                    shares,
                    ..AccountConfig::default()
                };
                a.users.insert("alice".into(), 1);
                a.users.insert("bob".into(), 1);
                a
            };
            vec![account("ml", ml), account("cv", cv)]
        })
    ]
}

/// A valid cluster: 1–4 nodes (`n0`…; GPU nodes sometimes with NVLink islands or a MIG
/// layout), sometimes topology levels (every node then labelled), partitions `main` (default)
/// and `gpu` (with a maximum time), optional queues and accounts, and a random backfill mode
/// (sometimes a head rule, `before_head_estimate` or `rule`, then half the time with
/// `candidates: "submit"`), depth, pinned head (rarely), preemption switch and priority
/// weights.
pub fn cluster() -> impl Strategy<Value = ClusterConfig> {
    let nodes = (
        vec(node_shape(), 1..NODE_POOL as usize),
        vec(node_extras(), NODE_POOL as usize),
        topology(),
    )
        .prop_map(|(nodes, extras, levels)| {
            let nodes = (0..)
                .zip(nodes)
                .zip(&extras)
                .map(|((i, node), extras)| {
                    let mut node = NodeConfig {
                        name: node_name(i),
                        ..node
                    };
                    extras.apply(&mut node, !levels.is_empty());
                    node
                })
                .collect::<Vec<_>>();
            (nodes, levels)
        });
    let policy = (
        prop_oneof![
            3 => Just(BackfillMode::None),
            3 => Just(BackfillMode::Easy),
            3 => Just(BackfillMode::Conservative),
            1 => Just(BackfillMode::BeforeHeadEstimate),
            1 => Just(BackfillMode::Rule),
        ],
        option::of(1u32..=4),
        any::<bool>(),
        (0u32..=1000, 0u32..=1000, 0u32..=1000),
        // `policy.priority.pinned_head`, and `policy.backfill.candidates: "submit"` (with a
        // head rule only: elsewhere it is refused).
        (
            proptest::bool::weighted(0.15),
            proptest::bool::weighted(0.5),
        ),
    );
    (nodes, queues(), accounts(), policy).prop_map(
        |(
            (nodes, topology),
            (cohorts, queues),
            accounts,
            (mode, depth, preempt, (age, fs, size), (pinned, by_submit)),
        )| {
            let mut config = ClusterConfig {
                nodes,
                topology,
                partitions: vec![
                    PartitionConfig {
                        name: "main".into(),
                        default: true,
                        ..PartitionConfig::default()
                    },
                    PartitionConfig {
                        name: "gpu".into(),
                        max_time_ms: Some(60_000),
                        priority_tier: 1,
                        ..PartitionConfig::default()
                    },
                ],
                cohorts,
                queues,
                accounts,
                ..ClusterConfig::default()
            };
            let policy = &mut config.policy;
            policy.backfill.mode = mode;
            // A depth belongs to the reservation modes: a head rule refuses one.
            policy.backfill.depth = depth.filter(|_| !mode.head_rule());
            if mode.head_rule() && by_submit {
                policy.backfill.candidates = BackfillCandidates::Submit;
            }
            policy.priority.pinned_head = pinned;
            policy.preemption.enabled = preempt;
            policy.priority.weights.age = age;
            policy.priority.weights.fairshare = fs;
            policy.priority.weights.job_size = size;
            config
        },
    )
}

fn placement() -> impl Strategy<Value = PlacementMode> {
    prop_oneof![
        Just(PlacementMode::Pack),
        Just(PlacementMode::Spread),
        Just(PlacementMode::StrictPack),
        Just(PlacementMode::StrictSpread)
    ]
}

/// A task group: 1–4 tasks (sometimes elastic), cpus, memory, 0, ½, 1 or 2 GPUs per task,
/// sometimes a GPU model constraint, a topology request or a MIG profile
/// ([`crate::testkit::strategies_hw::group_requests`]).
pub fn task_group() -> impl Strategy<Value = TaskGroup> {
    (
        1u32..=4,
        any::<bool>(),
        0u64..=4,
        prop_oneof![Just(0u64), Just(500), Just(1000), Just(2000)],
        option::weighted(0.1, 0..GPU_MODELS.len()),
        placement(),
        group_requests(),
    )
        .prop_map(|(count, elastic, cpus, gpus, model, placement, requests)| {
            let mut g = TaskGroup::new(count);
            g.min_count = (elastic && count > 1).then_some(1);
            g.cpus = Milli::from_units(cpus);
            g.memory_mib = cpus * 1_000;
            g.gpus = Milli::from_milli(gpus);
            g.gpu_models = model.map(|m| vec![GPU_MODELS[m].to_string()]);
            g.placement = placement;
            requests.apply(&mut g);
            g
        })
}

/// A job spec with an id from the pool: one or two groups, a time limit of 1–120 s, and random
/// queue, account, user, partition, priority, exclusivity, dependencies, begin time,
/// preemptibility, requeue and grace. References are mostly valid, sometimes not: a queue or
/// partition that does not exist one time in 21, a dependency (on a job that may not have been
/// submitted) one time in 7. Invalid choices are kept rare so that most submits are accepted
/// and reach the scheduler.
pub fn job_spec() -> impl Strategy<Value = JobSpec> {
    let refs = (
        option::of(prop_oneof![10 => Just("qa"), 10 => Just("qb"), 1 => Just("qx")]),
        option::of(prop_oneof![Just("ml"), Just("cv")]),
        option::of(prop_oneof![Just("alice"), Just("bob")]),
        option::weighted(
            0.3,
            prop_oneof![10 => Just("main"), 10 => Just("gpu"), 1 => Just("nope")],
        ),
    );
    let flags = (
        -5i32..=5,
        any::<bool>(),
        option::weighted(0.15, (0..JOB_POOL, 0u8..3)),
        option::weighted(0.1, 0u64..200_000),
        any::<bool>(),
        any::<bool>(),
        prop_oneof![Just(0u64), Just(5_000), Just(30_000)],
    );
    (
        0..JOB_POOL,
        vec(task_group(), 1..=2),
        1_000u64..=120_000,
        refs,
        flags,
    )
        .prop_map(
            |(id, groups, limit, (queue, account, user, partition), flags)| {
                let (priority, exclusive, after, begin, preemptible, requeue, grace) = flags;
                let mut spec = JobSpec::new(job_name(id), limit, 1);
                spec.groups = groups;
                spec.queue = queue.map(String::from);
                spec.account = account.map(String::from);
                spec.user = user.map(String::from);
                spec.partition = partition.map(String::from);
                spec.priority = priority;
                spec.exclusive = exclusive;
                spec.begin_ms = begin;
                spec.preemptible = preemptible;
                spec.requeue = requeue;
                spec.grace_ms = grace;
                spec.after = after
                    .into_iter()
                    .map(|(job, kind)| Dependency {
                        job: job_name(job),
                        on: [
                            DependencyKind::Ok,
                            DependencyKind::Any,
                            DependencyKind::NotOk,
                        ][usize::from(kind)],
                    })
                    .collect();
                spec
            },
        )
}

/// A job or node name from the pool, or one that never exists.
fn some_job() -> impl Strategy<Value = String> {
    prop_oneof![9 => (0..JOB_POOL).prop_map(job_name), 1 => Just("ghost".to_string())]
}

fn some_node() -> impl Strategy<Value = String> {
    prop_oneof![9 => (0..NODE_POOL).prop_map(node_name), 1 => Just("n9".to_string())]
}

/// Events a host may send, valid or not: submits (also duplicates), cancels, `finished` and
/// `stopped` and `checkpoint` for any job (pending, running, unknown), node and GPU events (also for unknown
/// nodes, and `node_add` of a fresh or existing name), hold/release, priority and time-limit
/// changes.
pub fn raw_event() -> impl Strategy<Value = Event> {
    let finish = prop_oneof![Just(FinishOutcome::Completed), Just(FinishOutcome::Failed)];
    prop_oneof![
        8 => job_spec().prop_map(|job| Event::Submit { job }),
        2 => some_job().prop_map(|job| Event::Cancel { job }),
        2 => (some_job(), finish).prop_map(|(job, outcome)| Event::Finished { job, outcome }),
        1 => some_job().prop_map(|job| Event::Stopped { job }),
        1 => some_job().prop_map(|job| Event::Checkpoint { job }),
        1 => some_node().prop_map(|node| Event::NodeDown { node }),
        2 => some_node().prop_map(|node| Event::NodeUp { node }),
        1 => some_node().prop_map(|node| Event::NodeDrain { node }),
        1 => some_node().prop_map(|node| Event::NodeRemove { node }),
        1 => node().prop_map(|node| Event::NodeAdd { node }),
        1 => (some_node(), 0u32..9).prop_map(|(node, gpu)| Event::GpuDown { node, gpu }),
        1 => (some_node(), 0u32..9).prop_map(|(node, gpu)| Event::GpuUp { node, gpu }),
        1 => some_job().prop_map(|job| Event::Hold { job }),
        1 => some_job().prop_map(|job| Event::Release { job }),
        1 => (some_job(), -10i32..=10).prop_map(|(job, priority)| Event::SetPriority { job, priority }),
        1 => (some_job(), 1_000u64..=200_000).prop_map(|(job, time_limit_ms)| Event::SetTimeLimit { job, time_limit_ms }),
    ]
}

/// One stream element: mostly raw events, plus host reactions resolved against the
/// scheduler when the stream runs (finish a running job, acknowledge a preemption), so that
/// jobs keep flowing through their whole lifecycle.
pub fn stream_event() -> impl Strategy<Value = StreamEvent> {
    prop_oneof![
        6 => raw_event().prop_map(StreamEvent::Raw),
        3 => (any::<u8>(), any::<bool>()).prop_map(|(pick, failed)| StreamEvent::FinishRunning { pick, failed }),
        1 => any::<u8>().prop_map(|pick| StreamEvent::AckPreempted { pick }),
    ]
}

/// Up to `max_ticks` ticks; time goes forward by 0–90 s per tick (0: several ticks at one
/// instant), each with 0–4 events.
pub fn stream(max_ticks: usize) -> impl Strategy<Value = Stream> {
    vec(
        (
            prop_oneof![1 => Just(0u64), 4 => 1u64..=90_000],
            vec(stream_event(), 0..=4),
        ),
        0..=max_ticks,
    )
    .prop_map(Stream::from_gaps)
}

/// A cluster and a stream of up to `max_ticks` ticks.
pub fn scenario(max_ticks: usize) -> impl Strategy<Value = (ClusterConfig, Stream)> {
    (cluster(), stream(max_ticks))
}
