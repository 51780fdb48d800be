//! Property test: reconfigurations that shrink and grow quotas at random points of a random
//! workload with preemption never break an invariant (the oracle runs after every tick), and
//! running jobs are never stopped by a reconfiguration itself.

use crate::common;

use common::build::{config, event, finished};
use gangway::testkit::checked_tick;
use gangway::{ClusterConfig, Decision, Event, Scheduler};
use proptest::prelude::*;
use serde_json::json;

/// Two queues in one cohort on one 16-cpu node, with the given nominal cpus and borrowing
/// limits (`None`: unlimited).
fn cluster(quotas: &[(u32, Option<u32>); 2]) -> ClusterConfig {
    let queue = |name: &str, (nominal, borrowing): (u32, Option<u32>)| {
        json!({"name": name, "cohort": "co",
               "quota": {"cpu": {"nominal": nominal, "borrowing_limit": borrowing}},
               "preemption": {"within_queue": "lower_priority", "reclaim_within_cohort": "any"}})
    };
    config(json!({
        "nodes": [{"name": "n1", "cpus": 16, "memory_mib": 16000}],
        "cohorts": [{"name": "co"}],
        "queues": [queue("a", quotas[0]), queue("b", quotas[1])],
        "policy": {"preemption": {"enabled": true}}
    }))
}

#[derive(Clone, Debug)]
enum Step {
    Submit {
        queue: bool,
        cpus: u32,
        priority: i32,
    },
    FinishOldest,
    StopPreempted,
    Reconfigure([(u32, Option<u32>); 2]),
}

fn quota() -> impl Strategy<Value = (u32, Option<u32>)> {
    (0u32..=12, prop::option::of(0u32..=8))
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (any::<bool>(), 1u32..=8, 0i32..=3)
            .prop_map(|(queue, cpus, priority)| Step::Submit { queue, cpus, priority }),
        2 => Just(Step::FinishOldest),
        2 => Just(Step::StopPreempted),
        2 => (quota(), quota()).prop_map(|(a, b)| Step::Reconfigure([a, b])),
    ]
}

fn submit(id: usize, queue: bool, cpus: u32, priority: i32) -> Event {
    event(json!({"type": "submit", "job": {
        "id": format!("j{id}"), "queue": if queue { "a" } else { "b" }, "priority": priority,
        "time_limit_ms": 3_600_000, "grace_ms": 5_000,
        "groups": [{"count": 1, "cpus": cpus}]}}))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, failure_persistence: crate::common::kept_beside(), ..ProptestConfig::default() })]
    #[test]
    fn reconfiguring_quotas_at_random_keeps_every_invariant(
        initial in (quota(), quota()),
        steps in prop::collection::vec(step(), 1..40),
    ) {
        let mut s = Scheduler::new(cluster(&[initial.0, initial.1])).unwrap();
        let mut preempted: Vec<String> = Vec::new();
        for (i, step) in steps.into_iter().enumerate() {
            let now = i as u64 * 1_000;
            let events = match step {
                Step::Submit { queue, cpus, priority } => vec![submit(i, queue, cpus, priority)],
                Step::FinishOldest => {
                    let state = s.state();
                    let oldest = state.running().next().map(|job| job.name().to_owned());
                    oldest.iter().map(|job| finished(job)).collect()
                }
                Step::StopPreempted => preempted
                    .drain(..)
                    .map(|job| event(json!({"type": "stopped", "job": job})))
                    .collect(),
                Step::Reconfigure(quotas) => {
                    let running: Vec<_> = s.state().running().map(|j| j.id()).collect();
                    s.reconfigure(cluster(&quotas)).unwrap();
                    let after: Vec<_> = s.state().running().map(|j| j.id()).collect();
                    prop_assert_eq!(after, running);
                    vec![]
                }
            };
            let out = checked_tick(&mut s, now, events).unwrap();
            for d in &out.decisions {
                if let Decision::Preempt { job, .. } = d {
                    preempted.push(job.clone());
                }
            }
            preempted.retain(|job| {
                let state = s.state();
                state.job_by_name(job).is_some_and(|j| j.is_running())
            });
        }
    }
}
