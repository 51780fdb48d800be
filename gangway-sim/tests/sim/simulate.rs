//! The simulator on tiny workloads with exact times; the invariant oracle runs after every tick.

use gangway::Event;
use gangway::testkit::check_tick;
use gangway::{ClusterConfig, JobSpec};
use gangway_sim::metrics::Metrics;
use gangway_sim::workload::gpu_ml::GpuMlParams;
use gangway_sim::{
    ExecutionEnd, JobStatus, Overrun, PolicyPreset, SimError, SimJob, SimOptions, SimResult,
    Simulator, prepare,
};

fn one_node(cpus: u32) -> ClusterConfig {
    serde_json::from_str(&format!(
        r#"{{"nodes": [{{"name": "n1", "cpus": {cpus}}}]}}"#
    ))
    .unwrap()
}

fn job(id: &str, submit_ms: u64, tasks: u32, limit_ms: u64, run_ms: u64) -> SimJob {
    let mut spec = JobSpec::new(id, limit_ms, tasks);
    spec.submit_ms = Some(submit_ms);
    SimJob { spec, run_ms }
}

fn run(cluster: ClusterConfig, jobs: Vec<SimJob>) -> SimResult {
    let simulator = Simulator::new(cluster, jobs, SimOptions::default()).unwrap();
    simulator
        .run(|view| check_tick(view.scheduler, view.outcome))
        .unwrap()
}

fn times(result: &SimResult) -> Vec<(Option<u64>, Option<u64>)> {
    result
        .jobs
        .iter()
        .map(|j| (j.first_start_ms, j.end_ms))
        .collect()
}

#[test]
fn three_jobs_on_one_node_start_and_end_exactly() {
    // 2 cpus. a (2 cpus, runs 100) at 0; b (2 cpus, runs 50) at 10 waits for a;
    // c (1 cpu, runs 30) at 20 also waits: b is first in line and EASY keeps its reservation
    // at 100 (c would end at 50 + its limit 200 > 100, so it cannot backfill).
    let jobs = vec![
        job("a", 0, 2, 200, 100),
        job("b", 10, 2, 200, 50),
        job("c", 20, 1, 200, 30),
    ];
    let result = run(one_node(2), jobs);
    assert_eq!(
        times(&result),
        vec![
            (Some(0), Some(100)),
            (Some(100), Some(150)),
            (Some(150), Some(180))
        ]
    );
    assert!(result.jobs.iter().all(|j| j.status == JobStatus::Completed));
    assert_eq!(result.executions.len(), 3);
    // Ticks: submits at 0, 10, 20, completions at 100, 150, 180.
    assert_eq!(result.ticks, 6);
}

#[test]
fn a_short_job_backfills_into_the_hole() {
    // 3 cpus. a takes 2 until 100; b (3 cpus) reserves 100; c (1 cpu, limit 60) fits in the
    // free cpu and ends by its limit before the reservation: it backfills at 20.
    let jobs = vec![
        job("a", 0, 2, 200, 100),
        job("b", 10, 3, 200, 50),
        job("c", 20, 1, 60, 30),
    ];
    let result = run(one_node(3), jobs);
    assert_eq!(
        times(&result),
        vec![
            (Some(0), Some(100)),
            (Some(100), Some(150)),
            (Some(20), Some(50))
        ]
    );
}

#[test]
fn overrun_allow_runs_the_recorded_time_and_kill_stops_at_the_limit() {
    let jobs = || vec![job("a", 0, 1, 100, 150), job("b", 0, 1, 100, 80)];
    let mut cluster = one_node(1);
    Overrun::Allow.configure(&mut cluster);
    let allowed = run(cluster, jobs());
    assert_eq!(
        times(&allowed),
        vec![(Some(0), Some(150)), (Some(150), Some(230))]
    );
    let mut cluster = one_node(1);
    Overrun::Kill.configure(&mut cluster);
    let killed = run(cluster, jobs());
    assert_eq!(
        times(&killed),
        vec![(Some(0), Some(100)), (Some(100), Some(180))]
    );
    assert_eq!(killed.jobs[0].status, JobStatus::Killed);
    assert_eq!(killed.executions[0].end, ExecutionEnd::Killed);
    assert_eq!(killed.jobs[1].status, JobStatus::Completed);
}

#[test]
fn a_job_that_can_never_fit_is_rejected_and_the_rest_run() {
    let jobs = vec![job("big", 0, 4, 100, 10), job("ok", 5, 1, 100, 10)];
    let result = run(one_node(2), jobs);
    assert_eq!(result.jobs[0].status, JobStatus::Rejected);
    assert_eq!(result.rejections.len(), 1);
    assert_eq!(times(&result)[1], (Some(5), Some(15)));
}

#[test]
fn duplicate_job_ids_are_refused() {
    let jobs = vec![job("a", 0, 1, 100, 10), job("a", 5, 1, 100, 10)];
    let err = Simulator::new(one_node(1), jobs, SimOptions::default()).unwrap_err();
    assert!(
        matches!(&err, SimError::DuplicateJob(id) if id == "a"),
        "{err}"
    );
    assert!(err.to_string().contains("\"a\""));
}

#[test]
fn every_preset_runs_the_gpu_ml_workload_deterministically_under_the_oracle() {
    let workload = GpuMlParams {
        jobs: 150,
        ..GpuMlParams::default()
    }
    .generate()
    .unwrap();
    for preset in PolicyPreset::EVERY {
        let (cluster, jobs) = prepare(&workload, None, preset, Overrun::Allow);
        let first = run(cluster.clone(), jobs.clone());
        let second = run(cluster, jobs);
        assert_eq!(first, second, "{preset:?} is not deterministic");
        assert_eq!(
            first
                .jobs
                .iter()
                .filter(|j| j.status == JobStatus::Completed)
                .count(),
            150,
            "{preset:?}"
        );
        // Completed jobs did exactly their run time of work: every execution's time but what
        // a preemption lost (the time from its `preempt` to its stop).
        for (index, (record, job)) in first.jobs.iter().zip(&workload.jobs).enumerate() {
            let worked: u64 = first
                .executions
                .iter()
                .filter(|e| e.job == index)
                .map(|e| e.end_ms - e.start_ms - e.lost_ms)
                .sum();
            assert_eq!(worked, job.run_ms, "{preset:?} job {}", job.id);
            assert!(record.first_start_ms.unwrap() >= job.submit_ms);
        }
        let preempted = first
            .executions
            .iter()
            .filter(|e| e.end == ExecutionEnd::Preempted);
        if preset == PolicyPreset::Las {
            // LAS's quantum (5 minutes by default) guards every run before it is preempted:
            // at most 12 preemptions per job and hour.
            for execution in preempted {
                let ran = execution.end_ms - execution.lost_ms - execution.start_ms;
                assert!(ran >= 300_000, "{execution:?}");
            }
        } else if preset != PolicyPreset::Full {
            assert_eq!(preempted.count(), 0, "{preset:?} preempted");
        }
    }
}

/// The heavy-tailed workload of seed 10 (offered load 1.15 over its 3,000 jobs): every job asks
/// for the 72-hour partition maximum, so only a policy that learns from attained service can
/// favour short jobs. LAS, with no backfill and no time limit, finishes jobs on average at
/// least 20% sooner than EASY backfill (Tiresias' qualitative result); SJF, which orders by
/// time limit, is EASY.
#[test]
fn las_beats_easy_on_mean_completion_time_when_limits_say_nothing() {
    let workload = GpuMlParams {
        seed: 10,
        ..GpuMlParams::heavy_tailed()
    }
    .generate()
    .unwrap();
    let limit = workload.jobs[0].time_limit_ms;
    assert!(workload.jobs.iter().all(|j| j.time_limit_ms == limit));
    let metrics = |preset| {
        let (cluster, jobs) = prepare(&workload, None, preset, Overrun::Allow);
        let result = Simulator::new(cluster, jobs, SimOptions::default())
            .unwrap()
            .run(|_| Ok(()))
            .unwrap();
        Metrics::of(&result)
    };
    let (easy, sjf, las) = (
        metrics(PolicyPreset::Easy),
        metrics(PolicyPreset::Sjf),
        metrics(PolicyPreset::Las),
    );
    for m in [&easy, &sjf, &las] {
        assert_eq!(m.jobs.completed, 3_000);
    }
    assert_eq!(sjf.completion, easy.completion);
    assert_eq!(
        (easy.preemptions, easy.gpu_hours_lost_to_preemption),
        (0, 0.0)
    );
    assert!(las.preemptions > 0 && las.gpu_hours_lost_to_preemption > 0.0);
    let ratio = las.completion.mean_s / easy.completion.mean_s;
    assert!(
        ratio <= 0.8,
        "LAS {} s, EASY {} s: ratio {ratio}",
        las.completion.mean_s,
        easy.completion.mean_s
    );
}

#[test]
fn reservations_are_recorded_and_late_starts_counted() {
    // 2 cpus. a (2 cpus, limit 100) overruns to 150; b, submitted at 10, is reserved at a's
    // limit (100) but starts at 150: one violation. c (limit 200) at 20 gets no reservation
    // while b is first in line (EASY reserves for the first job only); when b starts at 150,
    // c is reserved at b's limit, 150 + 200 = 350, and starts early at 150 + 50 = 200.
    let mut cluster = one_node(2);
    cluster.policy.time_limit.enforce = false;
    let jobs = vec![
        job("a", 0, 2, 100, 150),
        job("b", 10, 2, 200, 50),
        job("c", 20, 2, 200, 30),
    ];
    let result = run(cluster, jobs);
    let reserved: Vec<_> = result.jobs.iter().map(|j| j.reserved_start_ms).collect();
    assert_eq!(reserved, vec![None, Some(100), Some(350)]);
    assert_eq!(times(&result)[1], (Some(150), Some(200)));
    let metrics = gangway_sim::metrics::Metrics::of(&result);
    assert_eq!(
        (metrics.reservation_violations, metrics.reservations),
        (1, 2)
    );
}

/// Issue 27, item 1: the machine of `gangway simulate --cluster`.
mod machine_override {
    use super::*;
    use gangway_sim::team::TeamParams;

    fn machine(json: &str) -> ClusterConfig {
        serde_json::from_str(json).unwrap()
    }

    /// 4 nodes of 4 A100 with 256,000 MiB: the default team's 4-GPU jobs ask 262,144 MiB.
    const SMALL: &str = r#"{"nodes": [
        {"name": "a", "cpus": 32, "memory_mib": 256000, "gpus": {"model": "a100", "count": 4}},
        {"name": "b", "cpus": 32, "memory_mib": 256000, "gpus": {"model": "a100", "count": 4}},
        {"name": "c", "cpus": 32, "memory_mib": 256000, "gpus": {"model": "a100", "count": 4}},
        {"name": "d", "cpus": 32, "memory_mib": 256000, "gpus": {"model": "a100", "count": 4}}]}"#;
    /// 2 nodes of 8 with 512,000 MiB and one of 4 with 64 cpus: 8-GPU jobs ask 524,288 MiB.
    const MIXED: &str = r#"{"nodes": [
        {"name": "a", "cpus": 64, "memory_mib": 512000, "gpus": {"model": "a100", "count": 8}},
        {"name": "b", "cpus": 64, "memory_mib": 512000, "gpus": {"model": "a100", "count": 8}},
        {"name": "c", "cpus": 64, "memory_mib": 300000, "gpus": {"model": "h100", "count": 4}},
        {"name": "cpu", "cpus": 16, "memory_mib": 64000}]}"#;

    #[test]
    fn unfitted_team_jobs_are_rejected_by_the_machine_and_grouped_by_reason() {
        // What `--cluster` did before: the default team on the small machine.
        let workload = TeamParams {
            weeks: 1,
            ..TeamParams::default()
        }
        .generate()
        .unwrap();
        let (cluster, jobs) = prepare(
            &workload,
            Some(&machine(SMALL)),
            PolicyPreset::Easy,
            Overrun::Allow,
        );
        let result = run(cluster, jobs);
        let metrics = Metrics::of(&result);
        let total: u64 = metrics.rejections.iter().map(|r| r.jobs).sum();
        assert_eq!(total, metrics.jobs.rejected);
        assert!(total > 0);
        assert!(
            metrics.rejections[0].reason.contains("fits no node"),
            "{:?}",
            metrics.rejections
        );
        assert!(
            !metrics.rejections[0]
                .reason
                .contains(&metrics.rejections[0].example)
        );
        assert!(
            metrics
                .rejections
                .windows(2)
                .all(|w| w[0].jobs >= w[1].jobs)
        );
    }

    #[test]
    fn a_team_fitted_to_a_machine_runs_every_job_under_every_policy() {
        for json in [SMALL, MIXED] {
            let machine = machine(json);
            let params = TeamParams {
                weeks: 1,
                ..TeamParams::default()
            }
            .fit_to(&machine)
            .unwrap();
            let workload = params.generate().unwrap();
            assert!(
                workload.jobs.iter().any(|j| j.tasks > 1),
                "gangs still drawn"
            );
            for preset in PolicyPreset::ALL {
                let (cluster, jobs) = prepare(&workload, Some(&machine), preset, Overrun::Allow);
                assert_eq!(cluster.nodes, machine.nodes);
                let options = SimOptions {
                    looks: (preset == PolicyPreset::Ssh).then(gangway_sim::LookSchedule::default),
                    ..SimOptions::default()
                };
                let result = Simulator::new(cluster, jobs, options)
                    .unwrap()
                    .run(|view| check_tick(view.scheduler, view.outcome))
                    .unwrap();
                assert!(
                    result.rejections.is_empty(),
                    "{}: {:?}",
                    preset.name(),
                    result.rejections
                );
                assert!(
                    result.jobs.iter().all(|j| j.status == JobStatus::Completed),
                    "{}",
                    preset.name()
                );
            }
        }
    }

    #[test]
    fn the_machine_keeps_the_workload_accounts_and_scaled_quotas_unless_it_has_its_own() {
        let workload = TeamParams::default().generate().unwrap();
        let small = machine(SMALL);
        let (cluster, jobs) = prepare(&workload, Some(&small), PolicyPreset::Full, Overrun::Allow);
        let accounts: Vec<(&str, u32)> = cluster
            .accounts
            .iter()
            .map(|a| (a.name.as_str(), a.shares))
            .collect();
        assert_eq!(
            accounts,
            [
                ("vision", 40),
                ("language", 30),
                ("speech", 20),
                ("research", 10)
            ]
        );
        let quotas: Vec<u64> = cluster
            .queues
            .iter()
            .map(|q| q.quota["gpu"].nominal.units())
            .collect();
        // 13, 10, 6 and 3 of 32 GPUs, on 16: halved, by largest remainder.
        assert_eq!(quotas, [7, 5, 3, 1]);
        assert!(jobs.iter().all(|j| j.spec.queue.is_some()));
        // The result's targets come from the kept accounts: `full` and `easy` differ in them.
        let (easy, _) = prepare(&workload, Some(&small), PolicyPreset::Easy, Overrun::Allow);
        assert_eq!(easy.accounts, cluster.accounts);
        assert!(easy.queues.is_empty());
        // A file with accounts and queues of its own keeps them.
        let own = machine(
            r#"{"nodes": [{"name": "a", "cpus": 8, "gpus": {"model": "a100", "count": 2}}],
                "accounts": [{"name": "lab", "shares": 1}],
                "cohorts": [{"name": "c"}],
                "queues": [{"name": "q", "cohort": "c", "quota": {"gpu": {"nominal": 2}}}]}"#,
        );
        let (cluster, _) = prepare(&workload, Some(&own), PolicyPreset::Full, Overrun::Allow);
        assert_eq!(cluster.accounts, own.accounts);
        // (`full` sets each queue's preemption; the queue is the file's.)
        let names = |c: &ClusterConfig| -> Vec<(String, u64)> {
            c.queues
                .iter()
                .map(|q| (q.name.clone(), q.quota["gpu"].nominal.units()))
                .collect()
        };
        assert_eq!(names(&cluster), [("q".to_string(), 2)]);
        assert_eq!(cluster.cohorts, own.cohorts);
    }
}

/// Issue 27, item 8: a task asking more GPUs than any node may have names the engine's limit
/// and the cluster's largest node.
#[test]
fn too_many_gpus_for_a_task_names_the_largest_node() {
    let cluster: ClusterConfig = serde_json::from_str(
        r#"{"nodes": [{"name": "n1", "cpus": 8, "gpus": {"model": "a100", "count": 4}}]}"#,
    )
    .unwrap();
    let mut big = job("big", 0, 1, 100, 10);
    big.spec = big.spec.with_gpus(gangway::Milli::from_units(99));
    let result = run(cluster, vec![big]);
    assert_eq!(result.rejections.len(), 1);
    assert!(
        result.rejections[0].contains("a node has at most 16 (this cluster's largest has 4)"),
        "{}",
        result.rejections[0]
    );
}

/// Issue 29, item 4: the events of one instant one tick at a time. On 2 cpus, `a` (2 cpus) ends
/// at 100, when `b` and `c` (2 cpus each, `c` of a higher priority) are submitted. In one tick
/// (the default) the pass sees both and starts `c`, the higher priority. One event per tick:
/// `a`'s end first (ends before submits), then `b` alone (by job id), which starts on the free
/// node before `c` is even submitted; `c` waits for `b`'s end.
#[test]
fn one_event_per_tick_delivers_ends_then_submits_by_id_and_changes_the_decision() {
    let mut c = job("c", 100, 2, 200, 50);
    c.spec.priority = 10;
    // `c` listed before `b`: the default sends it first, the one-at-a-time order by id.
    let jobs = vec![job("a", 0, 2, 200, 100), c, job("b", 100, 2, 200, 50)];
    let simulate = |one_event_per_tick: bool| {
        let options = SimOptions {
            record_ticks: true,
            one_event_per_tick,
            ..SimOptions::default()
        };
        Simulator::new(one_node(2), jobs.clone(), options)
            .unwrap()
            .run(|view| check_tick(view.scheduler, view.outcome))
            .unwrap()
    };
    let at_100 = |result: &SimResult| events_given_at(result, 100);

    let batched = simulate(false);
    // a, c, b: c starts at a's end, b after c.
    assert_eq!(
        times(&batched),
        vec![
            (Some(0), Some(100)),
            (Some(100), Some(150)),
            (Some(150), Some(200))
        ]
    );
    assert_eq!(
        at_100(&batched).len(),
        1,
        "one tick at 100: {:?}",
        at_100(&batched)
    );
    assert_eq!(at_100(&batched)[0].len(), 3);

    let one_by_one = simulate(true);
    assert_eq!(
        at_100(&one_by_one),
        vec![
            vec!["finished a".to_string()],
            vec!["submit b".to_string()],
            vec!["submit c".to_string()]
        ]
    );
    // b starts alone at 100; c, the higher priority, waits for it.
    assert_eq!(
        times(&one_by_one),
        vec![
            (Some(0), Some(100)),
            (Some(150), Some(200)),
            (Some(100), Some(150))
        ]
    );
}

/// Counts, from what `prepare` is shown, the passes and the submits, stops and finishes; and
/// never preempts a run younger than ten minutes, with a veto that says when it ends.
#[derive(Clone, Default)]
struct Tally {
    passes: u64,
    submits: u32,
    stops: u32,
    finishes: u32,
}

#[gangway::policy::plugin]
impl gangway::policy::Plugin for Tally {
    fn name(&self) -> &str {
        "tally"
    }
    fn prepare(&mut self, _: &gangway::policy::PassContext<'_>, events: &[gangway::Event]) {
        use gangway::Event;
        self.passes += 1;
        for event in events {
            match event {
                Event::Submit { .. } => self.submits += 1,
                Event::Stopped { .. } => self.stops += 1,
                Event::Finished { .. } => self.finishes += 1,
                _ => {}
            }
        }
    }
    fn veto_victim(
        &self,
        _: gangway::state::JobView<'_>,
        victim: gangway::state::JobView<'_>,
        _: &gangway::policy::PassContext<'_>,
    ) -> Option<gangway::policy::Veto> {
        let (start, ran) = victim.current_run()?;
        (ran < 600_000)
            .then(|| gangway::policy::Veto::new("younger than ten minutes").until(start + 600_000))
    }
}

#[test]
fn a_plugins_counters_are_read_back_from_the_profile_after_the_run() {
    let cluster: ClusterConfig = serde_json::from_value(serde_json::json!({
        "nodes": [{"name": "n1", "cpus": 1}],
        "policy": {"preemption": {"enabled": true, "order_based": true}}}))
    .unwrap();
    let mut high = job("high", 60_000, 1, 3_600_000, 100_000);
    high.spec.priority = 10;
    let jobs = vec![job("low", 0, 1, 3_600_000, 1_000_000), high];
    let profile = gangway::policy::Profile::builder()
        .plugin(gangway::policy::builtin::Multifactor::from_config())
        .plugin(Tally::default())
        .build()
        .unwrap();
    let options = SimOptions {
        checkpoint_delay_ms: 5_000,
        ..SimOptions::default()
    };
    let (result, profile) = Simulator::with_profile(cluster, jobs, options, profile)
        .unwrap()
        .run_keeping_profile(|view| check_tick(view.scheduler, view.outcome))
        .unwrap();
    // The veto held `high` back until `low` had run ten minutes, and no longer: `low` is
    // preempted then and stops 5 s later.
    assert_eq!(result.jobs[1].first_start_ms, Some(605_000));
    let tally = profile.plugin::<Tally>("tally").unwrap();
    assert_eq!(tally.passes, result.ticks);
    assert_eq!((tally.submits, tally.stops, tally.finishes), (2, 1, 2));
}

/// `submits_first`: at 100, `b` and `c` come before `a`'s end (RLScheduler's tie rule), so
/// both wait on the full node and `c`, the higher priority, takes it when `a` ends.
#[test]
fn submits_first_delivers_submits_before_ends_at_an_instant() {
    let mut c = job("c", 100, 2, 200, 50);
    c.spec.priority = 10;
    let jobs = vec![job("a", 0, 2, 200, 100), c, job("b", 100, 2, 200, 50)];
    let options = SimOptions {
        record_ticks: true,
        one_event_per_tick: true,
        submits_first: true,
        ..SimOptions::default()
    };
    let result = Simulator::new(one_node(2), jobs, options)
        .unwrap()
        .run(|view| check_tick(view.scheduler, view.outcome))
        .unwrap();
    let at_100 = events_given_at(&result, 100);
    assert_eq!(
        at_100,
        vec![
            vec!["submit b".to_string()],
            vec!["submit c".to_string()],
            vec!["finished a".to_string()]
        ]
    );
    assert_eq!(
        times(&result),
        vec![
            (Some(0), Some(100)),
            (Some(100), Some(150)),
            (Some(150), Some(200))
        ]
    );
}

/// The events of each tick the simulator gave at `at_ms`, in order, as `submit j` and
/// `finished j` (others in debug form).
fn events_given_at(result: &SimResult, at_ms: u64) -> Vec<Vec<String>> {
    result
        .ticks_given
        .iter()
        .filter(|t| t.at_ms == at_ms)
        .map(|t| {
            t.events
                .iter()
                .map(|e| match e {
                    Event::Submit { job } => format!("submit {}", job.id),
                    Event::Finished { job, .. } => format!("finished {job}"),
                    other => format!("{other:?}"),
                })
                .collect()
        })
        .collect()
}
