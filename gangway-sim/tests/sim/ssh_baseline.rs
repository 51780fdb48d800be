//! The `ssh` baseline (issue 19) on small hand-checked cases: users on one 4-GPU node who look
//! for free GPUs every 15 minutes in working hours (09:00–19:00, weekdays) and once at 21:00,
//! with no queue; and the sweep's determinism.

use gangway::testkit::check_tick;
use gangway::{ClusterConfig, JobSpec, Milli};
use gangway_sim::sweep::{SweepParams, run_sweep, sweep_table};
use gangway_sim::{
    JobStatus, LookSchedule, Overrun, PolicyPreset, SimJob, SimOptions, SimResult, Simulator,
};

const MIN: u64 = 60_000;
const HOUR: u64 = 60 * MIN;

/// A job of `account` wanting `gpus` GPUs at `submit` for `run` ms.
fn job(id: &str, account: &str, gpus: u64, submit: u64, run: u64) -> SimJob {
    let mut spec = JobSpec::new(id, 2 * run, 1).with_gpus(Milli::from_units(gpus));
    spec.submit_ms = Some(submit);
    spec.account = Some(account.to_string());
    SimJob { spec, run_ms: run }
}

/// One node of 4 GPUs, configured for `preset`.
fn one_node(preset: PolicyPreset) -> ClusterConfig {
    let mut cluster: ClusterConfig = serde_json::from_str(
        r#"{"nodes": [{"name": "n1", "cpus": 32, "gpus": {"model": "a100", "count": 4}}],
            "accounts": [{"name": "a", "shares": 1}, {"name": "b", "shares": 1}]}"#,
    )
    .unwrap();
    preset.configure(&mut cluster);
    Overrun::Allow.configure(&mut cluster);
    cluster
}

fn simulate(preset: PolicyPreset, looks: Option<LookSchedule>, jobs: Vec<SimJob>) -> SimResult {
    let options = SimOptions {
        looks,
        ..SimOptions::default()
    };
    Simulator::new(one_node(preset), jobs, options)
        .unwrap()
        .run(|_| Ok(()))
        .unwrap()
}

fn ssh(jobs: Vec<SimJob>) -> SimResult {
    simulate(PolicyPreset::Ssh, Some(LookSchedule::default()), jobs)
}

fn wait(result: &SimResult, index: usize) -> u64 {
    result.jobs[index].wait_ms().unwrap()
}

#[test]
fn a_user_who_finds_the_node_busy_looks_again_every_15_minutes() {
    // Monday: a takes all 4 GPUs 10:00–11:00; b wants 2 GPUs at 10:05 and looks at 10:05,
    // 10:20, 10:35, 10:50 (busy) and 11:05: it waits an hour.
    let jobs = || {
        vec![
            job("a", "a", 4, 10 * HOUR, HOUR),
            job("b", "b", 2, 10 * HOUR + 5 * MIN, HOUR),
        ]
    };
    let result = ssh(jobs());
    assert_eq!(wait(&result, 0), 0);
    assert_eq!(result.jobs[1].first_start_ms, Some(11 * HOUR + 5 * MIN));
    assert_eq!(wait(&result, 1), HOUR);
    assert!(result.jobs.iter().all(|j| j.status == JobStatus::Completed));
    // A queue (fcfs) starts b the moment a ends: 55 minutes.
    let queued = simulate(PolicyPreset::Fcfs, None, jobs());
    assert_eq!(wait(&queued, 1), 55 * MIN);
}

#[test]
fn a_job_waiting_for_its_next_look_counts_as_pending() {
    // Issue 27, item 4: b waits 10:05–11:05 between looks, outside the scheduler's queue; the
    // samples (the plot's queue line) count it all the same.
    let result = ssh(vec![
        job("a", "a", 4, 10 * HOUR, HOUR),
        job("b", "b", 2, 10 * HOUR + 5 * MIN, HOUR),
    ]);
    let waiting: Vec<(u64, usize)> = result
        .samples
        .iter()
        .filter(|s| (10 * HOUR + 5 * MIN..11 * HOUR + 5 * MIN).contains(&s.time_ms))
        .map(|s| (s.time_ms, s.pending))
        .collect();
    // b's look at 10:05 and its withdrawal (the look failed) in the next tick; later looks
    // that cannot succeed (nothing was released) take no tick; a's end at 11:00.
    assert_eq!(
        waiting.iter().map(|&(t, _)| t).collect::<Vec<_>>(),
        [10 * HOUR + 5 * MIN, 10 * HOUR + 5 * MIN, 11 * HOUR],
        "{waiting:?}"
    );
    assert!(waiting.iter().all(|&(_, p)| p == 1), "{waiting:?}");
    let after: Vec<usize> = result
        .samples
        .iter()
        .filter(|s| s.time_ms >= 11 * HOUR + 5 * MIN)
        .map(|s| s.pending)
        .collect();
    assert!(after.iter().all(|&p| p == 0), "{after:?}");
}

#[test]
fn after_working_hours_the_next_look_is_the_evening_one() {
    // a holds the node 17:00–20:00; b wants 1 GPU at 18:50 (phase 5 minutes on the 15-minute
    // grid): 19:05 is after hours, so b's next look is 21:05: a wait of 2 h 15 min.
    let result = ssh(vec![
        job("a", "a", 4, 17 * HOUR, 3 * HOUR),
        job("b", "b", 1, 18 * HOUR + 50 * MIN, HOUR),
    ]);
    assert_eq!(wait(&result, 1), 2 * HOUR + 15 * MIN);
    // Without the evening look, b waits for Tuesday 09:05.
    let no_evening = simulate(
        PolicyPreset::Ssh,
        Some(LookSchedule {
            evening_ms: None,
            ..LookSchedule::default()
        }),
        vec![
            job("a", "a", 4, 17 * HOUR, 3 * HOUR),
            job("b", "b", 1, 18 * HOUR + 50 * MIN, HOUR),
        ],
    );
    assert_eq!(
        no_evening.jobs[1].first_start_ms,
        Some(24 * HOUR + 9 * HOUR + 5 * MIN)
    );
}

#[test]
fn whoever_looks_first_wins_with_no_reservation() {
    // a holds 2 GPUs 10:00–11:00. b wants all 4 at 10:01; a wants 2 more at 10:02 and finds
    // them free, so b waits for both: its looks at 11:01 (a's second job runs to 11:02) fail,
    // and it starts at 11:16, 75 minutes after it wanted to.
    let jobs = || {
        vec![
            job("a1", "a", 2, 10 * HOUR, HOUR),
            job("b", "b", 4, 10 * HOUR + MIN, HOUR),
            job("a2", "a", 2, 10 * HOUR + 2 * MIN, HOUR),
        ]
    };
    let result = ssh(jobs());
    assert_eq!(wait(&result, 2), 0, "a2 takes the free GPUs at once");
    assert_eq!(wait(&result, 1), 75 * MIN);
    // With a queue (fcfs), a2 waits behind b instead: b starts at 11:00, a2 when b ends.
    let queued = simulate(PolicyPreset::Fcfs, None, jobs());
    assert_eq!(wait(&queued, 1), 59 * MIN);
    assert_eq!(queued.jobs[2].first_start_ms, Some(12 * HOUR));
}

#[test]
fn a_look_that_failed_is_withdrawn_before_anything_else_at_that_instant() {
    // Issue 27: x holds the node 10:00–10:30. c looked at 10:15 (busy) and looks again at
    // 10:30; a and b want the node at 10:30 too. One look per tick: a looks first, while x
    // still runs, and fails; then b looks, and x's end is delivered in that tick. a must not
    // start there, since a user who found the node busy did not start anything: b, the first
    // to look at a free node, takes it. (The host used to withdraw a's look only in the tick
    // after b's, so the scheduler started a in b's tick, then the withdrawal cancelled a
    // running job and its end came back `unknown_job`.)
    let jobs = vec![
        job("x", "a", 4, 10 * HOUR, 30 * MIN),
        job("c", "a", 4, 10 * HOUR + 15 * MIN, HOUR),
        job("a", "a", 4, 10 * HOUR + 30 * MIN, HOUR),
        job("b", "b", 4, 10 * HOUR + 30 * MIN, HOUR),
    ];
    let options = SimOptions {
        looks: Some(LookSchedule::default()),
        ..SimOptions::default()
    };
    let result = Simulator::new(one_node(PolicyPreset::Ssh), jobs, options)
        .unwrap()
        .run(|view| check_tick(view.scheduler, view.outcome))
        .unwrap();
    assert_eq!(result.jobs[3].first_start_ms, Some(10 * HOUR + 30 * MIN));
    assert!(result.jobs[2].first_start_ms > Some(10 * HOUR + 30 * MIN));
    assert!(
        result.jobs.iter().all(|j| j.status == JobStatus::Completed),
        "{:?}",
        result.jobs
    );
    // One execution per job: no start was undone.
    assert_eq!(result.executions.len(), 4);
}

#[test]
fn nobody_enforces_time_limits_without_a_scheduler() {
    // The job asks for 2 hours (twice its run) but runs 5: ssh lets it run; prepare() allows
    // overruns for ssh whatever --overrun says.
    let mut late = job("a", "a", 1, 10 * HOUR, 5 * HOUR);
    late.spec.time_limit_ms = 2 * HOUR;
    let result = ssh(vec![late]);
    assert_eq!(result.jobs[0].end_ms, Some(15 * HOUR));
    assert_eq!(result.jobs[0].status, JobStatus::Completed);
    let workload = gangway_sim::team::TeamParams::default().generate().unwrap();
    let (cluster, _) = gangway_sim::prepare(&workload, None, PolicyPreset::Ssh, Overrun::Kill);
    assert!(!cluster.policy.time_limit.enforce);
    assert_eq!(cluster.policy.min_job_age_ms, 0);
}

#[test]
fn collisions_delay_starts_to_later_looks_and_repeat_with_their_seed() {
    // Twenty lone jobs a day apart on an idle node: each starts at its first look that does
    // not collide, so its wait is a whole number of 15-minute looks.
    let jobs: Vec<SimJob> = (0..20)
        .map(|k| {
            job(
                &format!("j{k}"),
                "a",
                1,
                (k % 5) * 24 * HOUR + (k / 5) * 7 * 24 * HOUR + 10 * HOUR,
                HOUR,
            )
        })
        .collect();
    let looks = LookSchedule {
        collision_permille: 500,
        seed: 9,
        ..LookSchedule::default()
    };
    let run = || simulate(PolicyPreset::Ssh, Some(looks.clone()), jobs.clone());
    let result = run();
    let waits: Vec<u64> = (0..20).map(|i| wait(&result, i)).collect();
    assert!(waits.iter().all(|w| w % (15 * MIN) == 0), "{waits:?}");
    let delayed = waits.iter().filter(|&&w| w > 0).count();
    assert!(
        (3..=17).contains(&delayed),
        "{delayed} of 20 collided at least once"
    );
    assert_eq!(run(), result, "same seed, same collisions");
    assert!(ssh(jobs).jobs.iter().all(|j| j.wait_ms() == Some(0)));
}

#[test]
fn the_sweep_gives_the_same_table_on_one_thread_or_several() {
    let params = SweepParams {
        gpus: vec![4, 16],
        users: vec![2, 8],
        weeks: 1,
        ..SweepParams::default()
    };
    let done = std::sync::atomic::AtomicUsize::new(0);
    let one = run_sweep(&params, 1, |_| {
        done.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    })
    .unwrap();
    assert_eq!(done.into_inner(), 4, "progress is told once per cell");
    let three = run_sweep(&params, 3, |_| {}).unwrap();
    assert_eq!(sweep_table(&one), sweep_table(&three));
    assert_eq!(one, three);
    let grid: Vec<(u32, u32)> = one.iter().map(|c| (c.gpus, c.users)).collect();
    assert_eq!(grid, [(4, 2), (16, 2), (4, 8), (16, 8)]);
    // 8 users on 4 GPUs are contended: the scheduler cuts the wait.
    assert!(one[2].baseline_metrics.wait.mean_s > one[2].policy_metrics.wait.mean_s);
}

/// Issue 27: the sweep takes any policies; the first is the baseline of every comparison.
#[test]
fn a_sweep_compares_each_policy_with_the_first() {
    use gangway_sim::PolicyPreset::{Conservative, Easy, Fcfs, Full, Ssh};
    let params = SweepParams {
        gpus: vec![4, 16],
        users: vec![8],
        weeks: 1,
        policies: vec![Fcfs, Easy, Conservative],
        ..SweepParams::default()
    };
    let told = std::sync::Mutex::new(Vec::new());
    let cells = run_sweep(&params, 1, |done| told.lock().unwrap().push(done)).unwrap();
    assert_eq!(
        told.into_inner().unwrap(),
        [2, 4],
        "told per cell of the grid, in records"
    );
    let grid: Vec<(u32, u32, PolicyPreset)> =
        cells.iter().map(|c| (c.gpus, c.users, c.policy)).collect();
    assert_eq!(
        grid,
        [
            (4, 8, Easy),
            (4, 8, Conservative),
            (16, 8, Easy),
            (16, 8, Conservative)
        ]
    );
    assert!(cells.iter().all(|c| c.baseline == Fcfs));
    // One baseline run per cell of the grid, shared by its comparisons.
    assert_eq!(cells[0].baseline_metrics, cells[1].baseline_metrics);
    assert_ne!(cells[0].baseline_metrics, cells[2].baseline_metrics);
    // The comparison is against fcfs, not ssh: the savings are easy's against fcfs's waits.
    let cell = &cells[0];
    let expected = (cell.baseline_metrics.wait.mean_s - cell.policy_metrics.wait.mean_s)
        / cell.baseline_metrics.wait.mean_s;
    assert!((cell.wait_saved() - expected).abs() < 1e-12);
    assert_eq!(
        cell.pays_off(),
        gangway_sim::sweep::pays_off(&cell.baseline_metrics, &cell.policy_metrics, 4.0)
    );
    let table = sweep_table(&cells);
    let header = table.lines().next().unwrap();
    assert!(
        header.contains("wait fcfs") && header.contains("idle fcfs"),
        "{table}"
    );
    assert!(!table.contains("ssh") && !table.contains("full"), "{table}");
    assert_eq!(
        table
            .lines()
            .skip(1)
            .map(|l| l.split_whitespace().nth(3).unwrap())
            .collect::<Vec<_>>(),
        ["easy", "conservative", "easy", "conservative"],
        "{table}"
    );
    // The same grid with the default policies compares ssh with full.
    let default = run_sweep(
        &SweepParams {
            policies: SweepParams::default().policies,
            ..params.clone()
        },
        2,
        |_| {},
    )
    .unwrap();
    assert!(
        default
            .iter()
            .all(|c| (c.baseline, c.policy) == (Ssh, Full))
    );
    // Lists with nothing to compare, or a policy twice, are refused before anything runs.
    for policies in [vec![], vec![Easy], vec![Easy, Easy], vec![Ssh, Full, Ssh]] {
        let ran = std::sync::atomic::AtomicBool::new(false);
        let error = run_sweep(
            &SweepParams {
                policies: policies.clone(),
                ..params.clone()
            },
            1,
            |_| {
                ran.store(true, std::sync::atomic::Ordering::Relaxed);
            },
        )
        .unwrap_err()
        .to_string();
        assert!(!ran.into_inner(), "{policies:?}");
        assert!(
            error.contains("nothing to compare") || error.contains("twice"),
            "{policies:?}: {error}"
        );
    }
}

#[test]
fn a_sweep_on_a_machine_of_your_own_varies_the_users_on_it() {
    // Three nodes of 4 GPUs (a size the grid's own machines, nodes of 8, never have) with
    // less memory per GPU than the team profile asks for: every cell's jobs are drawn to fit
    // it, and none is refused.
    let node = |name: &str| {
        format!(
            r#"{{"name": "{name}", "cpus": 32, "memory_mib": 128000, "gpus": {{"model": "l40", "count": 4}}}}"#
        )
    };
    let machine: ClusterConfig = serde_json::from_str(&format!(
        r#"{{"nodes": [{}, {}, {}]}}"#,
        node("a"),
        node("b"),
        node("c")
    ))
    .unwrap();
    let params = SweepParams {
        gpus: vec![64, 128],
        users: vec![2, 8],
        weeks: 1,
        machine: Some(machine),
        ..SweepParams::default()
    };
    let cells = run_sweep(&params, 2, |_| {}).unwrap();
    let grid: Vec<(u32, u32)> = cells.iter().map(|c| (c.gpus, c.users)).collect();
    assert_eq!(
        grid,
        [(12, 2), (12, 8)],
        "the machine's GPUs, not the grid's"
    );
    for cell in &cells {
        assert!(cell.jobs > 0);
        for metrics in [&cell.baseline_metrics, &cell.policy_metrics] {
            assert_eq!(metrics.jobs.rejected, 0);
            assert_eq!(metrics.jobs.completed, cell.jobs as u64);
        }
    }
    // A machine without GPUs is an error, not a panic.
    let cpus: ClusterConfig =
        serde_json::from_str(r#"{"nodes": [{"name": "c", "cpus": 8}]}"#).unwrap();
    let params = SweepParams {
        machine: Some(cpus),
        ..params
    };
    let error = run_sweep(&params, 1, |_| {}).unwrap_err().to_string();
    assert!(error.contains("no GPU"), "{error}");
}
