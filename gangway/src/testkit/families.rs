//! Stream families for [`crate::testkit::harness::check_profile`]: besides the general
//! streams of [`crate::testkit::strategies::scenario`] (random clusters, every kind of event,
//! rarely a queue or a preemption), families rich in contention, where the hooks that only
//! matter under pressure are asked, and asked often:
//!
//! - **long queues**: one or two small nodes and bursts of submits from a pool of 24 jobs that
//!   run for 10 minutes to 2 hours, so a dozen jobs wait at once and the order, admission and
//!   backfill hooks decide who goes first;
//! - **preemptors**: one or two GPU nodes filled by long low-priority jobs, then jobs of a
//!   higher priority (or of partition `gpu`, the higher tier) that preempt them, on order-based
//!   preemption, partition tiers or both;
//! - **vetoes**: the same pressure spread over hours, with a preemptor every few ticks,
//!   checkpoints and priority changes, so candidate victims of every age meet preemptors and a
//!   victim veto's answer (by age, by checkpoint, by state it keeps) changes what happens.
//!
//! All are on by default ([`Families::default`]); [`Families::pick`] selects some.
//!
//! ```
//! use gangway::testkit::families::{Families, Family};
//! use proptest::strategy::{Strategy, ValueTree};
//! use proptest::test_runner::TestRunner;
//! let mut runner = TestRunner::deterministic();
//! let only_vetoes = Families::pick(&[Family::Vetoes]);
//! let (cluster, stream) = only_vetoes.strategy(30).unwrap().new_tree(&mut runner).unwrap().current();
//! assert!(cluster.policy.preemption.enabled && !stream.ticks.is_empty());
//! ```

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::strategy::Union;
use serde_json::json;

use crate::config::{BackfillMode, ClusterConfig};
use crate::event::Event;
use crate::model::amount::Milli;
use crate::model::job::JobSpec;
use crate::testkit::harness::{Stream, StreamEvent};
use crate::testkit::strategies::scenario;

/// How many job ids (`j0`…) the long-queue family draws from.
pub const QUEUE_POOL: u32 = 24;

/// One family of streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Family {
    /// [`crate::testkit::strategies::scenario`]: random clusters, every kind of event.
    General,
    /// Bursts of submits on small clusters: long queues.
    LongQueues,
    /// Low-priority jobs filling GPU nodes, then higher-priority ones preempting them.
    Preemptors,
    /// Preemptors meeting victims of every age, checkpoints and priority changes.
    Vetoes,
}

impl Family {
    /// Every family, in the order [`Families`] weighs them.
    pub const ALL: [Family; 4] = [
        Family::General,
        Family::LongQueues,
        Family::Preemptors,
        Family::Vetoes,
    ];
}

/// Which families [`crate::testkit::harness::check_profile`] draws its cases from; each case
/// comes from one of the selected families, all equally likely.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Families {
    /// [`Family::General`].
    pub general: bool,
    /// [`Family::LongQueues`].
    pub long_queues: bool,
    /// [`Family::Preemptors`].
    pub preemptors: bool,
    /// [`Family::Vetoes`].
    pub vetoes: bool,
}

impl Default for Families {
    /// Every family.
    fn default() -> Self {
        Families {
            general: true,
            long_queues: true,
            preemptors: true,
            vetoes: true,
        }
    }
}

impl Families {
    /// Only the families listed.
    ///
    /// ```
    /// use gangway::testkit::families::{Families, Family};
    /// let picked = Families::pick(&[Family::General]);
    /// assert_eq!(picked.selected(), [Family::General]);
    /// ```
    pub fn pick(families: &[Family]) -> Self {
        Families {
            general: families.contains(&Family::General),
            long_queues: families.contains(&Family::LongQueues),
            preemptors: families.contains(&Family::Preemptors),
            vetoes: families.contains(&Family::Vetoes),
        }
    }

    /// The selected families, in [`Family::ALL`]'s order.
    pub fn selected(self) -> Vec<Family> {
        Family::ALL
            .into_iter()
            .filter(|family| match family {
                Family::General => self.general,
                Family::LongQueues => self.long_queues,
                Family::Preemptors => self.preemptors,
                Family::Vetoes => self.vetoes,
            })
            .collect()
    }

    /// The clusters and streams of up to `max_ticks` ticks of the selected families; `None`
    /// when none is selected.
    pub fn strategy(self, max_ticks: usize) -> Option<BoxedStrategy<(ClusterConfig, Stream)>> {
        let arms: Vec<BoxedStrategy<(ClusterConfig, Stream)>> = self
            .selected()
            .into_iter()
            .map(|family| family_strategy(family, max_ticks))
            .collect();
        (!arms.is_empty()).then(|| Union::new(arms).boxed())
    }
}

/// One family's clusters and streams.
fn family_strategy(family: Family, max_ticks: usize) -> BoxedStrategy<(ClusterConfig, Stream)> {
    match family {
        Family::General => scenario(max_ticks).boxed(),
        Family::LongQueues => long_queues(max_ticks).boxed(),
        Family::Preemptors => preemptors(max_ticks).boxed(),
        Family::Vetoes => vetoes(max_ticks).boxed(),
    }
}

/// `count` nodes `n0`… of `cpus` cpus and `gpus` A100s (none when 0), and the general
/// scenarios' partitions (`main`, the default, and `gpu`, one tier higher), which plug-ins may
/// be listed for.
fn small_cluster(count: usize, cpus: u64, gpus: u32) -> ClusterConfig {
    let nodes: Vec<_> = (0..count)
        .map(|i| {
            let mut node = json!({"name": format!("n{i}"), "cpus": cpus});
            if gpus > 0 {
                node["gpus"] = json!({"model": "a100", "count": gpus});
            }
            node
        })
        .collect();
    let partitions = json!([
        {"name": "main", "default": true},
        {"name": "gpu", "priority_tier": 1}
    ]);
    let mut cluster: ClusterConfig =
        serde_json::from_value(json!({"nodes": nodes, "partitions": partitions}))
            .expect("a valid small cluster");
    let weights = &mut cluster.policy.priority.weights;
    (weights.age, weights.fairshare, weights.job_size) = (0, 0, 0);
    cluster
}

fn backfill_mode() -> impl Strategy<Value = BackfillMode> {
    prop_oneof![
        Just(BackfillMode::None),
        Just(BackfillMode::Easy),
        Just(BackfillMode::Conservative)
    ]
}

fn submit(job: JobSpec) -> StreamEvent {
    StreamEvent::Raw(Event::Submit { job })
}

fn finish() -> impl Strategy<Value = StreamEvent> {
    any::<u8>().prop_map(|pick| StreamEvent::FinishRunning {
        pick,
        failed: false,
    })
}

fn acknowledge() -> impl Strategy<Value = StreamEvent> {
    any::<u8>().prop_map(|pick| StreamEvent::AckPreempted { pick })
}

/// Bursts of submits on one or two nodes of 4–8 cpus (and up to 2 GPUs): jobs `j0`…`j23` of
/// 1–4 cpus (some with a GPU) for 10 minutes to 2 hours, priorities −3 to 3, a fifth of them in
/// partition `gpu`; finishes and cancels are rare and ticks 0–60 s apart, so queues grow long.
/// Any backfill mode; no preemption.
pub fn long_queues(max_ticks: usize) -> impl Strategy<Value = (ClusterConfig, Stream)> {
    let cluster = (1usize..=2, 4u64..=8, 0u32..=2, backfill_mode(), 1u32..=8).prop_map(
        |(nodes, cpus, gpus, mode, depth)| {
            let mut cluster = small_cluster(nodes, cpus, gpus);
            cluster.policy.backfill.mode = mode;
            cluster.policy.backfill.depth = Some(depth);
            cluster
        },
    );
    let job = (
        0..QUEUE_POOL,
        1u32..=4,
        proptest::bool::weighted(0.25),
        10u64..=120,
        -3i32..=3,
        proptest::bool::weighted(0.2),
    )
        .prop_map(|(id, cpus, gpu, minutes, priority, in_gpu)| {
            let mut spec =
                JobSpec::new(format!("j{id}"), minutes * 60_000, 1).with_priority(priority);
            spec.groups[0].cpus = Milli::from_units(u64::from(cpus));
            if gpu {
                spec.groups[0].gpus = Milli::from_units(1);
            }
            spec.partition = in_gpu.then(|| "gpu".to_string());
            submit(spec)
        });
    let cancel = (0..QUEUE_POOL).prop_map(|id| {
        StreamEvent::Raw(Event::Cancel {
            job: format!("j{id}"),
        })
    });
    let event = prop_oneof![8 => job, 2 => finish(), 1 => cancel];
    let delta = prop_oneof![1 => Just(0u64), 4 => 1_000u64..=60_000];
    let steps = vec((delta, vec(event, 0..=4)), 1..=max_ticks.max(1));
    (cluster, steps).prop_map(|(cluster, steps)| (cluster, Stream::from_gaps(steps)))
}

/// A GPU cluster that preempts: one or two nodes of 1–4 A100s, preemption on by order
/// (priority), by partition tier, or both, with or without the anti-thrash rule, any backfill
/// mode.
fn preempting_cluster() -> impl Strategy<Value = ClusterConfig> {
    (1usize..=2, 1u32..=4, 0u8..3, any::<bool>(), backfill_mode()).prop_map(
        |(nodes, gpus, basis, anti_thrash, mode)| {
            let mut cluster = small_cluster(nodes, 16, gpus);
            let preemption = &mut cluster.policy.preemption;
            preemption.enabled = true;
            preemption.order_based = basis != 1;
            preemption.partition_tiers = basis != 0;
            preemption.anti_thrash = anti_thrash;
            cluster.policy.backfill.mode = mode;
            cluster
        },
    )
}

/// A job `j{id}` of 1–2 GPUs for `hours`: low priority (0–1) in partition `main`, or a
/// preemptor (priority 3–6, in partition `gpu` one time in two).
fn gpu_job(id: u32, gpus: u64, hours: u64, high: bool, priority: i32, in_gpu: bool) -> JobSpec {
    let priority = if high { 3 + priority } else { priority % 2 };
    let mut spec = JobSpec::new(format!("j{id}"), hours * 3_600_000, 1)
        .with_gpus(Milli::from_units(gpus))
        .with_priority(priority);
    spec.partition = (high && in_gpu).then(|| "gpu".to_string());
    spec
}

fn gpu_submit(high: impl Strategy<Value = bool>) -> impl Strategy<Value = StreamEvent> {
    (0u32..12, 1u64..=2, 1u64..=5, high, 0i32..=3, any::<bool>()).prop_map(
        |(id, gpus, hours, high, priority, in_gpu)| {
            submit(gpu_job(id, gpus, hours, high, priority, in_gpu))
        },
    )
}

/// Preempting GPU clusters (one or two nodes of 1–4 A100s; preemption by order, by partition
/// tier or both; with or without anti-thrash; any backfill mode) under jobs `j0`…`j11` of 1–2
/// GPUs for 1–5 hours: low-priority ones and preemptors (about two in five), hosts that
/// acknowledge preemptions promptly and rarely see a job finish, 5 s to 3 minutes between
/// ticks.
pub fn preemptors(max_ticks: usize) -> impl Strategy<Value = (ClusterConfig, Stream)> {
    let event = prop_oneof![
        5 => gpu_submit(proptest::bool::weighted(0.4)),
        4 => acknowledge(),
        1 => finish(),
    ];
    let steps = vec(
        (5_000u64..=180_000, vec(event, 0..=3)),
        1..=max_ticks.max(1),
    );
    (preempting_cluster(), steps).prop_map(|(cluster, steps)| (cluster, Stream::from_gaps(steps)))
}

/// The preemptors' clusters, where candidate victims of every age meet preemptors: the first
/// ticks fill the nodes with low-priority jobs, then every tick may bring a preemptor, raise a
/// pending job's priority, checkpoint a job or acknowledge a preemption; 20 s to 5 minutes
/// between ticks, so runs cross ages of minutes to hours while preemptors keep coming.
pub fn vetoes(max_ticks: usize) -> impl Strategy<Value = (ClusterConfig, Stream)> {
    let fill = vec(gpu_submit(Just(false)), 2..=4);
    let raise = (0u32..12, 3i32..=8).prop_map(|(id, priority)| {
        StreamEvent::Raw(Event::SetPriority {
            job: format!("j{id}"),
            priority,
        })
    });
    let checkpoint = (0u32..12).prop_map(|id| {
        StreamEvent::Raw(Event::Checkpoint {
            job: format!("j{id}"),
        })
    });
    let event = prop_oneof![
        4 => gpu_submit(proptest::bool::weighted(0.5)),
        1 => raise,
        2 => checkpoint,
        4 => acknowledge(),
        1 => finish(),
    ];
    let later = vec(
        (20_000u64..=300_000, vec(event, 0..=3)),
        0..max_ticks.max(1),
    );
    (preempting_cluster(), fill, later).prop_map(|(cluster, fill, later)| {
        let mut steps = vec![(0, fill)];
        steps.extend(later);
        (cluster, Stream::from_gaps(steps))
    })
}
