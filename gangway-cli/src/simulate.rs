//! `gangway simulate`: replay a workload under one or several policies and compare them.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use gangway::ClusterConfig;
use gangway_sim::account_fold::{self, AccountFold};
use gangway_sim::metrics::Metrics;
use gangway_sim::plot::{PlotRun, write_plot};
use gangway_sim::report::{PolicyRun, Report, comparison_table, duration, write_schedule};
use gangway_sim::team::{TeamEntry, TeamFile, TeamParams};
use gangway_sim::workload::gpu_ml::GpuMlParams;
use gangway_sim::workload::{SkipReason, Workload};
use gangway_sim::{
    FaultOptions, LookSchedule, Overrun, PolicyPreset, SimOptions, SimResult, Simulator, prepare,
};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// The options of `gangway simulate`.
#[derive(clap::Args)]
pub struct SimulateArgs {
    /// A trace to replay: SWF (`.swf`, `.swf.gz`), an Alibaba 2023 pod list (`.csv`) with
    /// its node list in the same directory, Slurm accounting (`sacct --parsable2
    /// --allocations`) or a job-history CSV (`user,submit,duration,gpus[,nodes][,time_limit]`).
    /// Default: the built-in team workload (`--workload`).
    #[arg(long)]
    trace: Option<PathBuf>,
    #[command(flatten)]
    trace_options: super::trace::TraceOptions,
    /// The built-in workload, drawn from `--seed`. Default: team (a 10-person team on 4 nodes
    /// × 8 GPUs, contended in the day, one team submitting in bursts).
    #[arg(long, value_enum, conflicts_with = "trace")]
    workload: Option<Builtin>,
    /// A CLUSTER JSON file replacing the workload's own machine: its nodes, and its accounts,
    /// queues and partitions if it has any; the workload's own are kept where it has none,
    /// GPU quotas scaled to its GPUs. The team workload draws job sizes that fit it. With
    /// --sweep, every cell runs on it.
    #[arg(long)]
    cluster: Option<PathBuf>,
    /// Make any job the scheduler refuses at submit (one that can never run on this machine,
    /// or names an account or queue it lacks) an error, instead of a count printed before the
    /// table.
    #[arg(long)]
    strict: bool,
    /// The policy, or a comma-separated list of policies to compare (e.g. `fcfs,easy,sjf,las`),
    /// among ssh, fcfs, easy, conservative, full, sjf, las, rlscheduler and
    /// conservative-compress. Default: compare
    /// ssh (no scheduler), fcfs, easy, conservative and full.
    #[arg(long, value_name = "POLICY[,POLICY...]", value_parser = parse_policies)]
    policy: Option<Policies>,
    /// Only jobs START .. START+COUNT-1 of the workload (in submit order), on an empty cluster.
    /// A START past the last job is an error (unless the workload has no jobs at all).
    #[arg(long, value_name = "START:COUNT", value_parser = parse_window)]
    window: Option<(usize, usize)>,
    /// Seed of the built-in workload.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Jobs that run past their time limit: `allow` (run their recorded time) or `kill`.
    #[arg(long, default_value = "allow", value_parser = parse_overrun)]
    overrun: Overrun,
    /// Seconds a preempted job takes to checkpoint and stop (at most its grace).
    #[arg(long, default_value_t = 30)]
    checkpoint_delay: u64,
    /// Inject faults drawn from this seed: nodes fail (once a week each on average, repaired in
    /// an hour), 10% of stop acknowledgements are lost, 1% of events are sent twice, and each
    /// tick's events come in a random order.
    #[arg(long, value_name = "SEED")]
    faults: Option<u64>,
    /// Deliver the events of one simulated instant one tick at a time (ends, readiness, node
    /// failures, node repairs, then submits; each by job id or node name), as simulators that
    /// handle one event per step do (RLScheduler), instead of all in one tick.
    #[arg(long)]
    one_event_per_tick: bool,
    /// Write the schedule as CSV (one file per policy, `NAME.POLICY.csv`, when comparing).
    #[arg(long, value_name = "FILE.csv")]
    schedule_out: Option<PathBuf>,
    /// Write every metric as JSON.
    #[arg(long, value_name = "FILE.json")]
    report: Option<PathBuf>,
    /// Plot utilization and the jobs waiting over time, and each account's share in the
    /// contended hours against its target, as SVG (one legend for the whole figure).
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// Number of jobs of the built-in workload (for quick runs and tests).
    #[arg(long, hide = true)]
    jobs: Option<usize>,
    /// ssh (no scheduler): minutes between two looks for free GPUs during working hours.
    #[arg(long, value_name = "MINUTES", default_value_t = 15, value_parser = clap::value_parser!(u64).range(1..))]
    check_interval: u64,
    /// ssh: working hours in which users look, `START-END` in whole hours (weekdays).
    #[arg(long, value_name = "START-END", default_value = "9-19", value_parser = parse_hours)]
    work_hours: (u64, u64),
    /// ssh: the hour of the one evening look of each working day, or `none`.
    #[arg(long, value_name = "HOUR|none", default_value = "21", value_parser = parse_evening)]
    evening: Evening,
    /// ssh: chance (0 to below 1) that a start collides with someone who took the same GPUs by hand
    /// and must be retried at the next look.
    #[arg(long, value_name = "RATE", default_value_t = 0.0, value_parser = parse_rate)]
    collision_rate: f64,
    /// Sweep cluster size (4–128 GPUs) × users (2–16) on the team workload's user profile,
    /// comparing a baseline with each other policy (default ssh against full; with --policy,
    /// its first policy is the baseline, and one policy alone is compared with ssh): prints a
    /// table and writes a heat map to `--plot` (default sweep.svg), and the table to
    /// `--report` (JSON, or CSV for a `.csv` name). With --cluster, the users on that machine
    /// alone; --workload may name only team.
    #[arg(long, conflicts_with_all = ["window", "faults", "schedule_out", "one_event_per_tick"])]
    sweep: bool,
    /// The sweep's cluster sizes in GPUs (nodes of up to 8). Default 4,8,16,32,64,128.
    #[arg(long, value_name = "GPUS[,GPUS...]", requires = "sweep", value_delimiter = ',', value_parser = clap::value_parser!(u32).range(1..))]
    sweep_gpus: Vec<u32>,
    /// The sweep's numbers of users. Default 2,4,8,16.
    #[arg(long, value_name = "USERS[,USERS...]", requires = "sweep", value_delimiter = ',', value_parser = clap::value_parser!(u32).range(1..))]
    sweep_users: Vec<u32>,
    /// Show every account in the table and the plot; without it, more than eleven fold into
    /// the ten that used the most and one row of the others (the JSON report has all).
    #[arg(long)]
    all_accounts: bool,
    /// Print no progress and no timings on standard error (the table and files as usual).
    #[arg(long, short)]
    quiet: bool,
    #[command(flatten)]
    team: TeamOptions,
}

/// Your own team, for the team workload (docs/simulate.md, "Your own team"): a JSON team file
/// and options over it, over the built-in team.
#[derive(clap::Args)]
#[command(next_help_heading = "Your own team (the team workload)")]
pub struct TeamOptions {
    /// A JSON team file (`gangway_sim::team::TeamFile`: users or teams, nodes, gpus_per_node,
    /// gpu_model, weeks, load or jobs_per_day, seed); the options below override it.
    #[arg(long, value_name = "FILE.json", conflicts_with = "trace")]
    team_file: Option<PathBuf>,
    /// Users, each their own account with equal shares (instead of the built-in four teams).
    #[arg(long, conflicts_with_all = ["trace", "teams"], value_parser = clap::value_parser!(u32).range(1..))]
    users: Option<u32>,
    /// Teams as NAME:SHARES[:USERS[:QUOTA]], comma-separated (`vision:40:3:13,speech:20:2`):
    /// shares, users (default 1) and the GPU quota of the team's queue (default none).
    #[arg(long, value_name = "TEAMS", conflicts_with = "trace", value_parser = parse_teams)]
    teams: Option<TeamList>,
    /// Nodes (not with --cluster, which brings its own).
    #[arg(long, conflicts_with_all = ["trace", "cluster"])]
    nodes: Option<u32>,
    /// GPUs per node (not with --cluster).
    #[arg(long, conflicts_with_all = ["trace", "cluster"])]
    gpus_per_node: Option<u32>,
    /// The GPU model of the nodes (not with --cluster).
    #[arg(long, conflicts_with_all = ["trace", "cluster"])]
    gpu_model: Option<String>,
    /// Offered load in working hours: the GPU-hours the users ask for per working day over
    /// the machine's (1.0: exactly the machine; the built-in team asks about 1.8).
    #[arg(long, conflicts_with = "trace", value_parser = parse_load)]
    load: Option<f64>,
    /// Weeks of arrivals (default 3).
    #[arg(long, conflicts_with = "trace")]
    weeks: Option<u32>,
}

impl TeamOptions {
    fn given(&self) -> bool {
        self.team_file.is_some()
            || self.users.is_some()
            || self.teams.is_some()
            || self.nodes.is_some()
            || self.gpus_per_node.is_some()
            || self.gpu_model.is_some()
            || self.load.is_some()
            || self.weeks.is_some()
    }

    /// The team file (if any) with the options over it.
    fn file(&self) -> Result<TeamFile, String> {
        let mut file = match &self.team_file {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
                let mut de = serde_json::Deserializer::from_str(&text);
                serde_path_to_error::deserialize(&mut de)
                    .map_err(|e| format!("{}: {}: {}", path.display(), e.path(), e.inner()))?
            }
            None => TeamFile::default(),
        };
        if let Some(users) = self.users {
            file.users = Some(users);
            file.teams = None;
        }
        if let Some(TeamList(teams)) = &self.teams {
            file.teams = Some(teams.clone());
            file.users = None;
        }
        if let Some(load) = self.load {
            file.load = Some(load);
            file.jobs_per_day = None;
        }
        file.nodes = self.nodes.or(file.nodes);
        file.gpus_per_node = self.gpus_per_node.or(file.gpus_per_node);
        file.gpu_model = self.gpu_model.clone().or(file.gpu_model);
        file.weeks = self.weeks.or(file.weeks);
        Ok(file)
    }
}

/// The teams of `--teams`.
#[derive(Clone, Debug)]
struct TeamList(Vec<TeamEntry>);

fn parse_teams(text: &str) -> Result<TeamList, String> {
    text.split(',')
        .map(|team| {
            let parts: Vec<&str> = team.split(':').collect();
            let number = |index: usize, what: &str| -> Result<Option<u32>, String> {
                parts
                    .get(index)
                    .map(|p| {
                        p.parse::<u32>().map_err(|_| {
                            format!("team {team:?}: {what} {p:?} is not a whole number")
                        })
                    })
                    .transpose()
            };
            if parts.len() < 2 || parts.len() > 4 || parts[0].is_empty() {
                return Err(format!(
                    "team {team:?}: expected NAME:SHARES[:USERS[:QUOTA]]"
                ));
            }
            Ok(TeamEntry {
                name: parts[0].to_string(),
                shares: number(1, "shares")?.unwrap_or(1),
                users: number(2, "users")?.unwrap_or(1),
                gpu_quota: number(3, "quota")?,
                burst: None,
            })
        })
        .collect::<Result<Vec<_>, _>>()
        .map(TeamList)
}

fn parse_load(text: &str) -> Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|l| l.is_finite() && *l > 0.0)
        .ok_or_else(|| format!("expected a positive number, got {text:?}"))
}

/// The built-in workloads of `--workload`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Builtin {
    /// Ten users in four teams on 4 nodes × 8 GPUs over three weeks, contended in working
    /// hours; `research` submits in bursts (`TeamParams::default()`).
    Team,
    /// 3,000 jobs of 1–64 GPUs from four teams on 64 nodes × 8 GPUs.
    /// Log-normal run times (median 1 h), time limits 1.1–3 times the run time
    /// (`GpuMlParams::default()`).
    GpuMl,
    /// Pareto run times (shape 1.2, minimum 30 min, at most 72 h), every time limit the 72-hour
    /// partition maximum (`GpuMlParams::heavy_tailed()`).
    GpuMlHeavyTail,
}

impl Builtin {
    fn name(self) -> &'static str {
        match self {
            Builtin::Team => "team",
            Builtin::GpuMl => "gpu-ml",
            Builtin::GpuMlHeavyTail => "gpu-ml-heavy-tail",
        }
    }

    /// The GPU-ML parameters; `None` for the team workload.
    fn params(self) -> Option<GpuMlParams> {
        match self {
            Builtin::Team => None,
            Builtin::GpuMl => Some(GpuMlParams::default()),
            Builtin::GpuMlHeavyTail => Some(GpuMlParams::heavy_tailed()),
        }
    }
}

/// The presets of `--policy`, in the order given.
#[derive(Clone, Debug)]
struct Policies(Vec<PolicyPreset>);

fn parse_policies(text: &str) -> Result<Policies, String> {
    PolicyPreset::parse_list(text).map(Policies)
}

fn parse_overrun(text: &str) -> Result<Overrun, String> {
    match text {
        "allow" => Ok(Overrun::Allow),
        "kill" => Ok(Overrun::Kill),
        _ => Err(format!("expected allow or kill, got {text:?}")),
    }
}

fn parse_hours(text: &str) -> Result<(u64, u64), String> {
    let (start, end) = text
        .split_once('-')
        .ok_or_else(|| format!("expected START-END in hours, got {text:?}"))?;
    let hour = |part: &str| {
        part.parse::<u64>()
            .ok()
            .filter(|h| *h <= 24)
            .ok_or_else(|| format!("{part:?} is not an hour from 0 to 24"))
    };
    let (start, end) = (hour(start)?, hour(end)?);
    if start >= end {
        return Err(format!("working hours {text:?} end before they start"));
    }
    Ok((start, end))
}

/// The hour of the evening look, if any.
#[derive(Clone, Copy, Debug)]
struct Evening(Option<u64>);

fn parse_evening(text: &str) -> Result<Evening, String> {
    if text == "none" {
        return Ok(Evening(None));
    }
    text.parse::<u64>()
        .ok()
        .filter(|h| *h < 24)
        .map(|h| Evening(Some(h)))
        .ok_or_else(|| format!("expected an hour from 0 to 23 or none, got {text:?}"))
}

fn parse_rate(text: &str) -> Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|r| (0.0..1.0).contains(r))
        .ok_or_else(|| format!("expected a rate from 0 to below 1, got {text:?}"))
}

/// The `ssh` host's looks from the options.
fn looks(args: &SimulateArgs) -> LookSchedule {
    const HOUR_MS: u64 = 3_600_000;
    LookSchedule {
        check_interval_ms: args.check_interval.saturating_mul(60_000),
        day_start_ms: args.work_hours.0 * HOUR_MS,
        day_end_ms: args.work_hours.1 * HOUR_MS,
        evening_ms: args.evening.0.map(|h| h * HOUR_MS),
        collision_permille: (args.collision_rate * 1000.0).round() as u32,
        seed: args.seed,
        ..LookSchedule::default()
    }
}

fn parse_window(text: &str) -> Result<(usize, usize), String> {
    let (start, count) = text
        .split_once(':')
        .ok_or_else(|| format!("expected START:COUNT, got {text:?}"))?;
    let number = |part: &str, what: &str| {
        part.parse::<usize>()
            .map_err(|_| format!("{what} {part:?} is not a non-negative integer"))
    };
    Ok((number(start, "START")?, number(count, "COUNT")?))
}

/// What `--sweep` refuses of the plain run's options, and why: the sweep draws the team
/// workload's users on the machines of its grid.
fn sweep_combinations(args: &SimulateArgs) -> Result<(), String> {
    if args.trace.is_some() {
        return Err(
            "--sweep draws the team workload's users on the clusters of its grid; a --trace \
             brings its own jobs and machine: replay it without --sweep"
                .into(),
        );
    }
    if let Some(builtin) = args.workload.filter(|&w| w != Builtin::Team) {
        return Err(format!(
            "--sweep varies the team workload's users and GPUs; --workload {} is a fixed set of \
             jobs with no users to vary: run it without --sweep",
            builtin.name()
        ));
    }
    if args.cluster.is_some() && !args.sweep_gpus.is_empty() {
        return Err(
            "--sweep-gpus sets the machines of the grid and --cluster brings one: give one or \
             the other (with --cluster the sweep varies the users on its machine)"
                .into(),
        );
    }
    Ok(())
}

/// Runs the command; the error is the message to print.
pub fn simulate(args: &SimulateArgs) -> Result<(), String> {
    if args.sweep {
        if args.team.given() {
            return Err("--sweep draws its own teams: the team options are for a plain run".into());
        }
        sweep_combinations(args)?;
        let policies = match &args.policy {
            Some(Policies(list)) => gangway_sim::sweep::sweep_policies(list)
                .map_err(|e| format!("--policy with --sweep: {}", e.0))?,
            None => gangway_sim::sweep::SweepParams::default().policies,
        };
        let machine = args
            .cluster
            .as_deref()
            .map(|path| super::read_config(path).map(|config| (path, config)))
            .transpose()?;
        return super::sweep::sweep(super::sweep::SweepOptions {
            quiet: args.quiet,
            seed: args.seed,
            looks: looks(args),
            gpus: args.sweep_gpus.clone(),
            users: args.sweep_users.clone(),
            machine,
            policies,
            plot: args.plot.as_deref(),
            report: args.report.as_deref(),
        });
    }
    let cluster = args
        .cluster
        .as_deref()
        .map(super::read_config)
        .transpose()?;
    let (name, mut workload) = load_workload(args, cluster.as_ref())?;
    if let Some((start, count)) = args.window {
        let total = workload.jobs.len();
        if start >= total && total > 0 {
            return Err(format!(
                "--window {start}:{count}: the workload has only {total} jobs"
            ));
        }
        workload.jobs = workload.jobs.split_off(start.min(total));
        workload.jobs.truncate(count);
    }
    if args.trace.is_some() && workload.jobs.is_empty() && workload.skipped.total() == 0 {
        return Err(format!("{name}: no job to replay (is it only a header?)"));
    }
    let policies = match &args.policy {
        Some(Policies(list)) => list.clone(),
        None => PolicyPreset::ALL.to_vec(),
    };
    // Every file it will write is created now, so that a bad path fails before the run.
    let schedule_paths: Vec<(PolicyPreset, PathBuf)> = match &args.schedule_out {
        Some(path) => policies
            .iter()
            .map(|&policy| {
                let path = if policies.len() > 1 {
                    with_policy(path, policy.name())
                } else {
                    path.clone()
                };
                (policy, path)
            })
            .collect(),
        None => Vec::new(),
    };
    for path in schedule_paths
        .iter()
        .map(|(_, p)| p)
        .chain(args.report.as_ref())
        .chain(args.plot.as_ref())
    {
        std::fs::File::create(path)
            .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    }
    let nodes = cluster
        .as_ref()
        .map_or(workload.nodes.len(), |c| c.nodes.len());
    let gpus: u64 = match &cluster {
        Some(c) => c
            .nodes
            .iter()
            .filter_map(|n| n.gpus.as_ref())
            .map(|g| u64::from(g.count))
            .sum(),
        None => workload.nodes.iter().map(|n| u64::from(n.gpus)).sum(),
    };
    super::print_stdout(&format!("{}\n", describe(&name, &workload, nodes, gpus)))?;
    let unfit: u64 = [SkipReason::FitsNoNode, SkipReason::WiderThanMachine]
        .iter()
        .map(|&r| workload.skipped.get(r))
        .sum();
    if unfit > 0 {
        let note = format!(
            "{unfit} jobs of the trace can never run here: the reader left them out ({}, {})",
            SkipReason::FitsNoNode.name(),
            SkipReason::WiderThanMachine.name()
        );
        if args.strict {
            return Err(format!("--strict: {note}"));
        }
        super::print_stdout(&format!("warning: {note}\n"))?;
    }
    let options = SimOptions {
        checkpoint_delay_ms: args.checkpoint_delay.saturating_mul(1000),
        faults: args.faults.map(FaultOptions::standard),
        one_event_per_tick: args.one_event_per_tick,
        ..SimOptions::default()
    };
    let mut runs = Vec::new();
    for &policy in &policies {
        let started = Instant::now();
        let options = SimOptions {
            looks: (policy == PolicyPreset::Ssh).then(|| looks(args)),
            ..options.clone()
        };
        let result = run_one(
            &workload,
            cluster.as_ref(),
            policy,
            args.overrun,
            &options,
            args.quiet,
        )?;
        if !args.quiet {
            eprintln!(
                "{}: simulated {} jobs in {:.2} s",
                policy.name(),
                result.jobs.len(),
                started.elapsed().as_secs_f64()
            );
        }
        let metrics = Metrics::of(&result);
        if args.strict && !metrics.rejections.is_empty() {
            return Err(format!(
                "--strict: {}",
                rejection_note(&[(policy, &metrics)], &workload, cluster.as_ref())
            ));
        }
        runs.push((policy, result, metrics));
    }
    let rejected: Vec<(PolicyPreset, &Metrics)> =
        runs.iter().map(|(policy, _, m)| (*policy, m)).collect();
    if rejected.iter().any(|(_, m)| !m.rejections.is_empty()) {
        super::print_stdout(&format!(
            "{}\n",
            rejection_note(&rejected, &workload, cluster.as_ref())
        ))?;
    }
    let fold = AccountFold::of(
        &runs.iter().map(|(_, _, m)| m).collect::<Vec<_>>(),
        (!args.all_accounts).then_some(account_fold::DEFAULT_SHOWN),
    );
    let folded: Vec<Metrics> = runs.iter().map(|(_, _, m)| fold.apply(m)).collect();
    let table_runs: Vec<PolicyRun> = runs
        .iter()
        .zip(&folded)
        .map(|((policy, _, _), metrics)| PolicyRun {
            policy: *policy,
            overrun: args.overrun,
            metrics: metrics.clone(),
        })
        .collect();
    super::print_stdout(&comparison_table(&table_runs))?;
    if fold.folds() {
        super::print_stdout(&format!(
            "accounts: the {} that used the most, the others summed in one row \
             (--all-accounts shows every one; the report has all)\n",
            account_fold::DEFAULT_SHOWN
        ))?;
    }
    if let Some(text) = verdict_of(&runs) {
        super::print_stdout(&format!("{text}\n"))?;
    }
    for ((_, result, _), (_, path)) in runs.iter().zip(&schedule_paths) {
        write_file(path, |file| write_schedule(result, file))?;
        super::print_stdout(&format!("schedule: {}\n", path.display()))?;
    }
    if let Some(path) = &args.report {
        let report = Report {
            workload: name.clone(),
            nodes,
            jobs: workload.jobs.len(),
            skipped: workload
                .skipped
                .iter()
                .map(|(reason, count)| (reason.name().to_string(), count))
                .collect(),
            runs: runs
                .iter()
                .map(|(policy, _, metrics)| PolicyRun {
                    policy: *policy,
                    overrun: args.overrun,
                    metrics: metrics.clone(),
                })
                .collect(),
        };
        write_file(path, |file| {
            serde_json::to_writer_pretty(&mut *file, &report).map_err(std::io::Error::other)?;
            std::io::Write::write_all(file, b"\n")
        })?;
        super::print_stdout(&format!("report: {}\n", path.display()))?;
    }
    if let Some(path) = &args.plot {
        let plot_runs = PlotRun::of_runs(&runs, &folded);
        write_plot(path, &plot_runs)?;
        super::print_stdout(&format!("plot: {}\n", path.display()))?;
    }
    Ok(())
}

fn load_workload(
    args: &SimulateArgs,
    cluster: Option<&ClusterConfig>,
) -> Result<(String, Workload), String> {
    let Some(path) = &args.trace else {
        let builtin = args.workload.unwrap_or(Builtin::Team);
        if builtin != Builtin::Team && args.team.given() {
            return Err(format!(
                "the team options are for the team workload, not --workload {}",
                builtin.name()
            ));
        }
        let Some(base) = builtin.params() else {
            let mut params = TeamParams {
                seed: args.seed,
                ..TeamParams::default()
            };
            if let Some(machine) = cluster {
                params = params.fit_to(machine).map_err(|e| e.to_string())?;
            }
            let file = args.team.file()?;
            if cluster.is_some()
                && (file.nodes.is_some()
                    || file.gpus_per_node.is_some()
                    || file.gpu_model.is_some())
            {
                return Err(
                    "the team file's nodes, gpus_per_node and gpu_model conflict with --cluster, \
                     which brings its own machine"
                        .into(),
                );
            }
            let params = file.apply(params).map_err(|e| format!("team: {}", e.0))?;
            let mut workload = params.generate().map_err(|e| e.to_string())?;
            if let Some(jobs) = args.jobs {
                workload.jobs.truncate(jobs);
            }
            return Ok((format!("{} (seed {})", builtin.name(), args.seed), workload));
        };
        let params = GpuMlParams {
            seed: args.seed,
            jobs: args.jobs.unwrap_or(base.jobs),
            ..base
        };
        let workload = params.generate().map_err(|e| e.to_string())?;
        return Ok((format!("{} (seed {})", builtin.name(), args.seed), workload));
    };
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let workload = super::trace::load(path, &args.trace_options, cluster)?;
    Ok((file_name, workload))
}

fn describe(name: &str, workload: &Workload, nodes: usize, gpus: u64) -> String {
    let mut text = format!(
        "workload {name}: {} jobs on {nodes} nodes",
        workload.jobs.len()
    );
    if gpus > 0 {
        text.push_str(&format!(" ({gpus} GPUs)"));
    }
    let skipped = workload.skipped.total();
    if skipped > 0 {
        let reasons: Vec<String> = workload
            .skipped
            .iter()
            .map(|(reason, count)| format!("{count} {}", reason.name()))
            .collect();
        text.push_str(&format!("; skipped {skipped}: {}", reasons.join(", ")));
    }
    text
}

/// The verdict by the sweep's rule when the run has `ssh` and a scheduler: against `full` when
/// it ran (the sweep's comparison), else against the scheduler with the lowest mean wait.
fn verdict_of(runs: &[(PolicyPreset, SimResult, Metrics)]) -> Option<String> {
    let (_, result, ssh) = runs.iter().find(|(p, _, _)| *p == PolicyPreset::Ssh)?;
    let schedulers = runs.iter().filter(|(p, _, _)| *p != PolicyPreset::Ssh);
    let (policy, _, with) = runs
        .iter()
        .find(|(p, _, _)| *p == PolicyPreset::Full)
        .or_else(|| schedulers.min_by(|a, b| a.2.wait.mean_s.total_cmp(&b.2.wait.mean_s)))?;
    let capacity = if result.capacity_gpus_milli > 0 {
        result.capacity_gpus_milli
    } else {
        result.capacity_cpus_milli
    } as f64
        / 1000.0;
    Some(gangway_sim::sweep::verdict(
        ssh,
        policy.name(),
        with,
        capacity,
    ))
}

/// What the scheduler refused at submit, by reason: once when every policy refused the same
/// jobs, else per policy.
fn rejection_note(
    runs: &[(PolicyPreset, &Metrics)],
    workload: &Workload,
    machine: Option<&ClusterConfig>,
) -> String {
    let jobs = workload.jobs.len();
    let same = runs
        .windows(2)
        .all(|w| w[0].1.rejections == w[1].1.rejections);
    let groups: Vec<(String, &Metrics)> = if same {
        let scope = if runs.len() > 1 {
            "under every policy".to_string()
        } else {
            format!("under {}", runs[0].0.name())
        };
        vec![(scope, runs[0].1)]
    } else {
        runs.iter()
            .map(|(policy, m)| (format!("under {}", policy.name()), *m))
            .collect()
    };
    let mut text = String::new();
    for (scope, metrics) in groups {
        let total: u64 = metrics.rejections.iter().map(|r| r.jobs).sum();
        if total == 0 {
            text.push_str(&format!("{scope}: no job refused\n"));
            continue;
        }
        text.push_str(&format!(
            "warning: {total} of {jobs} jobs can never run here ({scope}): refused at submit, counted as never started\n"
        ));
        for reason in &metrics.rejections {
            text.push_str(&format!("  {:>6}  {}", reason.jobs, reason.reason));
            // The example job's own request, which the engine's message may not give.
            if let Some(job) = workload.jobs.iter().find(|j| j.id == reason.example) {
                text.push_str(&format!(
                    " (e.g. job {}: {})",
                    job.id,
                    describe_request(job)
                ));
            }
            text.push('\n');
        }
    }
    text.push_str(&format!(
        "  the machine: {}",
        describe_machine(workload, machine)
    ));
    text
}

/// A job's request: `N tasks of G GPUs, C cpus, M MiB`.
fn describe_request(job: &gangway_sim::workload::TraceJob) -> String {
    let tasks = plural(u64::from(job.tasks), "task");
    let mut parts = Vec::new();
    if job.gpus_per_task_milli > 0 {
        parts.push(amount(job.gpus_per_task_milli, "GPU"));
    }
    parts.push(amount(job.cpus_per_task_milli, "cpu"));
    if job.memory_mib_per_task > 0 {
        parts.push(format!("{} MiB", job.memory_mib_per_task));
    }
    format!("{tasks} of {}", parts.join(", "))
}

/// The machine in one line: nodes, and the most GPUs, cpus and memory of any one node.
fn describe_machine(workload: &Workload, machine: Option<&ClusterConfig>) -> String {
    let nodes: Vec<(u64, u64, u64)> = match machine {
        Some(c) => c
            .nodes
            .iter()
            .map(|n| {
                let gpus = n.gpus.as_ref().map_or(0, |g| u64::from(g.count));
                (gpus, n.cpus.milli(), n.memory_mib)
            })
            .collect(),
        None => workload
            .nodes
            .iter()
            .map(|n| (u64::from(n.gpus), n.cpus_milli, n.memory_mib))
            .collect(),
    };
    let most = |f: fn(&(u64, u64, u64)) -> u64| nodes.iter().map(f).max().unwrap_or(0);
    let mut parts = Vec::new();
    if most(|n| n.0) > 0 {
        parts.push(plural(most(|n| n.0), "GPU"));
    }
    parts.push(amount(most(|n| n.1), "cpu"));
    parts.push(format!("{} MiB", most(|n| n.2)));
    let largest = if nodes.len() == 1 {
        "with"
    } else {
        "the largest with"
    };
    format!(
        "{}, {largest} {}",
        plural(nodes.len() as u64, "node"),
        parts.join(", ")
    )
}

/// `1 task`, `2 tasks`.
fn plural(count: u64, what: &str) -> String {
    if count == 1 {
        format!("1 {what}")
    } else {
        format!("{count} {what}s")
    }
}

/// An amount in thousandths with its unit: `1 cpu`, `0.5 GPUs`, `8 GPUs`.
fn amount(milli: u64, what: &str) -> String {
    let value = gangway::Milli::from_milli(milli);
    if milli == 1000 {
        format!("1 {what}")
    } else {
        format!("{value} {what}s")
    }
}

fn run_one(
    workload: &Workload,
    cluster: Option<&ClusterConfig>,
    policy: PolicyPreset,
    overrun: Overrun,
    options: &SimOptions,
    quiet: bool,
) -> Result<SimResult, String> {
    let (cluster, jobs) = prepare(workload, cluster, policy, overrun);
    let first_ms = jobs
        .iter()
        .map(|j| j.spec.submit_ms.unwrap_or(0))
        .min()
        .unwrap_or(0);
    let horizon_ms = jobs
        .iter()
        .map(|j| j.spec.submit_ms.unwrap_or(0).saturating_add(j.run_ms))
        .max()
        .unwrap_or(0);
    let simulator = Simulator::new(cluster, jobs, options.clone()).map_err(|e| e.to_string())?;
    let (_, len) = progress_point(first_ms, first_ms, horizon_ms);
    let progress = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::hidden());
    if let Ok(style) =
        ProgressStyle::with_template("{prefix:>12} [{bar:40}] simulated {msg}, {eta} left")
    {
        progress.set_style(style.progress_chars("=> "));
    }
    progress.set_prefix(policy.name());
    progress.set_message(format!("0s of at least {}", duration((len * 60) as f64)));
    let started = Instant::now();
    let mut shown = false;
    let result = simulator.run(|view| {
        if !quiet && !shown && started.elapsed() > Duration::from_secs(1) {
            // Drawn only where standard error is a terminal (indicatif hides it elsewhere).
            progress.set_draw_target(ProgressDrawTarget::stderr());
            shown = true;
        }
        if shown {
            let (position, len) = progress_point(view.now_ms, first_ms, horizon_ms);
            progress.set_length(len);
            progress.set_position(position);
            let covered = duration((position * 60) as f64);
            progress.set_message(if position >= len {
                format!("{covered}, draining the queue")
            } else {
                format!("{covered} of at least {}", duration((len * 60) as f64))
            });
        }
        Ok(())
    });
    progress.finish_and_clear();
    result.map_err(|e| e.to_string())
}

/// Progress as simulated minutes: `(covered, length)`, the time from the first submit to
/// `now_ms` against the time to the last job's end were no job to wait (`horizon_ms`), which
/// a run can only pass: past it, the length follows the position (the bar stays full while
/// the queue drains). Simulated time, not jobs ended, so that the ETA follows the work: jobs
/// end in bursts and most of a run can pass with few ending.
fn progress_point(now_ms: u64, first_ms: u64, horizon_ms: u64) -> (u64, u64) {
    let position = now_ms.saturating_sub(first_ms) / 60_000;
    let len = (horizon_ms.saturating_sub(first_ms) / 60_000).max(1);
    (position, len.max(position))
}

fn with_policy(path: &Path, policy: &str) -> PathBuf {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    let name = match path.extension() {
        Some(ext) => format!("{stem}.{policy}.{}", ext.to_string_lossy()),
        None => format!("{stem}.{policy}"),
    };
    path.with_file_name(name)
}

fn write_file(
    path: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> Result<(), String> {
    let file = std::fs::File::create(path)
        .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    let mut out = std::io::BufWriter::new(file);
    write(&mut out)
        .and_then(|()| std::io::Write::flush(&mut out))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::progress_point;

    const MIN: u64 = 60_000;

    #[test]
    fn progress_follows_simulated_time_and_never_runs_past_its_length() {
        // Jobs from minute 10; the last would end at minute 110 were no job to wait.
        assert_eq!(progress_point(10 * MIN, 10 * MIN, 110 * MIN), (0, 100));
        assert_eq!(progress_point(60 * MIN, 10 * MIN, 110 * MIN), (50, 100));
        // The queue drains past the horizon: the bar stays full.
        assert_eq!(progress_point(250 * MIN, 10 * MIN, 110 * MIN), (240, 240));
        // An empty or instant workload still has a length.
        assert_eq!(progress_point(0, 0, 0), (0, 1));
    }
}
