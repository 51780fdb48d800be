//! The plug-in API as a plug-in written outside the crate uses it: vetoes that end (and the
//! wake-up the engine derives from them), the tick's events in `prepare`, a plug-in read back
//! from the profile after the run, and the views' amounts and checkpoint flag. Every tick goes
//! through the invariant oracle.

use crate::common;

use common::build::{config, event, finished, submit};
use common::decisions::started;
use gangway::policy::{PassContext, Plugin, Profile, Veto};
use gangway::state::JobView;
use gangway::testkit::checked_tick;
use gangway::{Decision, Event, JobSpec, Milli, Scheduler, TickOutcome};
use serde_json::{Value, json};

const TEN_MINUTES: u64 = 600_000;

/// Higher base priority first.
#[derive(Clone)]
struct ByPriority;

#[gangway::policy::plugin]
impl Plugin for ByPriority {
    fn name(&self) -> &str {
        "by_priority"
    }
    fn order_key(&self, job: JobView<'_>, _: &PassContext<'_>) -> i64 {
        i64::from(job.spec().priority)
    }
}

/// Never preempts a run younger than ten minutes; says when the guard ends only when `ends`.
/// It declares no wake-up hook: the engine derives the wake-up from the veto.
#[derive(Clone)]
struct YoungRunGuard {
    ends: bool,
}

#[gangway::policy::plugin]
impl Plugin for YoungRunGuard {
    fn name(&self) -> &str {
        "young_run_guard"
    }
    fn veto_victim(
        &self,
        _: JobView<'_>,
        victim: JobView<'_>,
        _: &PassContext<'_>,
    ) -> Option<Veto> {
        let (start, ran) = victim.current_run()?;
        (ran < TEN_MINUTES).then(|| {
            let veto = Veto::new("younger than ten minutes");
            if self.ends {
                veto.until(start + TEN_MINUTES)
            } else {
                veto
            }
        })
    }
}

/// One node of `cpus` cpus with order-based preemption.
fn cluster(cpus: u32) -> Value {
    json!({"nodes": [{"name": "n1", "cpus": cpus}],
           "policy": {"preemption": {"enabled": true, "order_based": true}}})
}

fn guarded(cpus: u32, ends: bool) -> Scheduler {
    let profile = Profile::builder()
        .plugin(ByPriority)
        .plugin(YoungRunGuard { ends })
        .build()
        .unwrap();
    Scheduler::with_profile(config(cluster(cpus)), profile).unwrap()
}

fn tick(s: &mut Scheduler, at_ms: u64, events: Vec<Event>) -> TickOutcome {
    let out = checked_tick(s, at_ms, events).unwrap();
    assert!(out.rejected.is_empty(), "{:?}", out.rejected);
    out
}

/// A one-cpu job of base priority `priority` for an hour.
fn prio(id: &str, priority: i32) -> Event {
    submit(JobSpec::new(id, 3_600_000, 1).with_priority(priority))
}

fn preempts(out: &TickOutcome) -> Vec<(&str, &str)> {
    out.decisions
        .iter()
        .filter_map(|d| match d {
            Decision::Preempt { job, for_job, .. } => Some((job.as_str(), for_job.as_str())),
            _ => None,
        })
        .collect()
}

#[test]
fn a_veto_that_ends_gets_its_blocked_preemptor_retried_at_exactly_its_end() {
    let mut s = guarded(1, true);
    tick(&mut s, 0, vec![prio("low", 0)]);
    let out = tick(&mut s, 60_000, vec![prio("high", 10)]);
    assert!(preempts(&out).is_empty(), "{:?}", out.decisions);
    assert_eq!(out.next_wakeup_ms, Some(TEN_MINUTES));
    // Still guarded a millisecond before; the wake-up stands.
    let out = tick(&mut s, TEN_MINUTES - 1, vec![]);
    assert!(preempts(&out).is_empty(), "{:?}", out.decisions);
    assert_eq!(out.next_wakeup_ms, Some(TEN_MINUTES));
    let out = tick(&mut s, TEN_MINUTES, vec![]);
    assert_eq!(preempts(&out), [("low", "high")]);
}

#[test]
fn a_veto_without_an_end_asks_for_no_wake_up() {
    let mut s = guarded(1, false);
    tick(&mut s, 0, vec![prio("low", 0)]);
    let out = tick(&mut s, 60_000, vec![prio("high", 10)]);
    assert!(preempts(&out).is_empty(), "{:?}", out.decisions);
    // Only the running job's time limit.
    assert_eq!(out.next_wakeup_ms, Some(3_600_000));
}

#[test]
fn a_veto_end_counts_only_when_the_preemptor_found_no_victims() {
    // `old` is past the guard, `young` within it: the preemptor takes `old`, and the end of
    // `young`'s guard asks for nothing, exactly as with a guard that never says its end.
    let run = |ends: bool| {
        let mut s = guarded(2, ends);
        tick(&mut s, 0, vec![prio("old", 0)]);
        tick(&mut s, 700_000, vec![prio("young", 0)]);
        let out = tick(&mut s, 800_000, vec![prio("high", 10)]);
        assert_eq!(preempts(&out), [("old", "high")]);
        out.next_wakeup_ms
    };
    assert_eq!(run(true), run(false));
    assert_ne!(run(true), Some(700_000 + TEN_MINUTES));
}

#[test]
fn a_veto_end_not_after_the_pass_asks_for_no_wake_up() {
    /// Vetoes everything, with an end at the pass's time or before.
    #[derive(Clone)]
    struct Stale;
    #[gangway::policy::plugin]
    impl Plugin for Stale {
        fn name(&self) -> &str {
            "stale"
        }
        fn veto_victim(&self, _: JobView<'_>, _: JobView<'_>, c: &PassContext<'_>) -> Option<Veto> {
            Some(Veto::new("stale").until(c.now_ms()))
        }
    }
    let profile = Profile::builder()
        .plugin(ByPriority)
        .plugin(Stale)
        .build()
        .unwrap();
    let mut s = Scheduler::with_profile(config(cluster(1)), profile).unwrap();
    tick(&mut s, 0, vec![prio("low", 0)]);
    let out = tick(&mut s, 60_000, vec![prio("high", 10)]);
    assert!(preempts(&out).is_empty(), "{:?}", out.decisions);
    assert_eq!(out.next_wakeup_ms, Some(3_600_000));
}

/// Writes down, per pass, the events `prepare` was shown.
#[derive(Clone, Default)]
struct Recorder {
    passes: Vec<(u64, Vec<String>)>,
}

#[gangway::policy::plugin]
impl Plugin for Recorder {
    fn name(&self) -> &str {
        "recorder"
    }
    fn prepare(&mut self, context: &PassContext<'_>, events: &[Event]) {
        let seen = events
            .iter()
            .map(|e| {
                let e = serde_json::to_value(e).unwrap();
                let job = e.get("job").and_then(|j| j.get("id").or(Some(j))).cloned();
                format!(
                    "{} {}",
                    e["type"].as_str().unwrap(),
                    job.unwrap_or_default()
                )
            })
            .collect();
        self.passes.push((context.now_ms(), seen));
    }
}

#[test]
fn prepare_sees_the_ticks_applied_events_and_the_plugin_is_read_back_after_the_run() {
    let profile = Profile::builder()
        .plugin(Recorder::default())
        .build()
        .unwrap();
    let mut s = Scheduler::with_profile(config(cluster(1)), profile).unwrap();
    tick(&mut s, 0, vec![prio("a", 0), prio("b", 0)]);
    // A finish of a job the state does not know is rejected, and prepare does not see it.
    let out = checked_tick(&mut s, 10, vec![finished("nobody"), finished("a")]).unwrap();
    assert_eq!(out.rejected.len(), 1);
    assert_eq!(started(&out.decisions), ["b"]);
    tick(&mut s, 20, vec![]);
    let profile = s.into_profile();
    let recorder = profile.plugin::<Recorder>("recorder").unwrap();
    let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        recorder.passes,
        [
            (0, strings(&["submit \"a\"", "submit \"b\""])),
            (10, strings(&["finished \"a\""])),
            (20, strings(&[])),
        ]
    );
    // The wrong type or name finds nothing.
    assert!(profile.plugin::<ByPriority>("recorder").is_none());
    assert!(profile.plugin::<Recorder>("by_priority").is_none());
}

#[test]
fn checkpointed_this_run_is_cleared_by_a_new_run() {
    let profile = Profile::builder().plugin(ByPriority).build().unwrap();
    let mut s = Scheduler::with_profile(config(cluster(1)), profile).unwrap();
    let checkpointed = |s: &Scheduler| {
        s.state()
            .job_by_name("low")
            .unwrap()
            .checkpointed_this_run()
    };
    tick(&mut s, 0, vec![prio("low", 0)]);
    assert!(!checkpointed(&s));
    tick(
        &mut s,
        10,
        vec![event(json!({"type": "checkpoint", "job": "low"}))],
    );
    assert!(checkpointed(&s));
    let out = tick(&mut s, 20, vec![prio("high", 10)]);
    assert_eq!(preempts(&out), [("low", "high")]);
    tick(
        &mut s,
        30,
        vec![event(json!({"type": "stopped", "job": "low"}))],
    );
    assert!(!checkpointed(&s)); // pending
    let out = tick(&mut s, 40, vec![finished("high")]);
    assert_eq!(started(&out.decisions), ["low"]);
    assert!(!checkpointed(&s)); // its second run has not checkpointed
}

#[test]
fn node_and_job_views_give_amounts_in_one_unit() {
    let cluster = json!({"nodes": [
        {"name": "n1", "cpus": 8, "memory_mib": 4096, "gpus": {"model": "a100", "count": 4}}]});
    let mut s = Scheduler::new(config(cluster)).unwrap();
    let mut job = JobSpec::new("a", 3_600_000, 2).with_gpus(Milli::from_milli(500));
    job.groups[0].memory_mib = 1024;
    tick(&mut s, 0, vec![submit(job)]);
    let a = s.state().job_by_name("a").unwrap();
    assert_eq!(
        (a.gpus(), a.cpus(), a.memory_mib()),
        (Milli::ONE, Milli::from_units(2), 2048)
    );
    let n1 = s.state().node_by_name("n1").unwrap();
    assert_eq!((n1.gpu_count(), n1.cpus()), (4, Milli::from_units(8)));
    assert_eq!(
        (n1.free_cpus(), n1.free_memory_mib()),
        (Milli::from_units(6), 2048)
    );
    // Both half-GPU tasks share device 0 (the fullest device with room).
    let free: Vec<(usize, Milli)> = n1.free_devices().collect();
    assert_eq!(
        free[1..],
        [(1, Milli::ONE), (2, Milli::ONE), (3, Milli::ONE)]
    );
    assert_eq!(n1.free_gpus_total(), Milli::from_units(3));

    tick(
        &mut s,
        10,
        vec![event(json!({"type": "gpu_down", "node": "n1", "gpu": 3}))],
    );
    let n1 = s.state().node_by_name("n1").unwrap();
    assert_eq!(n1.free_devices().nth(3), Some((3, Milli::ZERO)));
    assert_eq!(n1.free_gpus_total(), Milli::from_units(2));

    tick(
        &mut s,
        20,
        vec![event(json!({"type": "node_drain", "node": "n1"}))],
    );
    let n1 = s.state().node_by_name("n1").unwrap();
    assert!(n1.free_devices().all(|(_, free)| free == Milli::ZERO));
    assert_eq!((n1.free_cpus(), n1.gpu_count()), (Milli::ZERO, 4));
}
