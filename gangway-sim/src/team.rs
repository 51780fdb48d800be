//! The `team` workload: a small ML team sharing a few GPU nodes, contended in the day and
//! idle at night, with one team that submits in bursts. It is the default of `gangway
//! simulate`, and the sweep ([`crate::sweep`]) builds its cells from its user profile.
//!
//! Every user brings the same demand ([`UserProfile`]): on each working day (Monday to
//! Friday, virtual time 0 being a Monday at 00:00) a Poisson number of jobs with mean
//! [`UserProfile::jobs_per_day`], each wanted at a uniform time of the working day
//! ([`UserProfile::day_start_ms`]..[`UserProfile::day_end_ms`]). A user of a team with
//! [`TeamSpec::burst`] instead submits the same expected number of jobs in bursts of that many
//! jobs at once (a hyper-parameter sweep), at a uniform time of a uniform working day of each
//! week. A job's size is drawn from [`UserProfile::sizes`] and capped at the cluster; a size up
//! to one node's GPUs is one task placed `pack`, a larger one whole nodes placed
//! `strict_spread` (rounded up to whole nodes). Run times are log-normal, clamped to
//! [`UserProfile::run_min_ms`]..=[`UserProfile::run_max_ms`]; time limits over-estimate them by
//! a factor uniform in 1.5..3, rounded up to a minute.
//!
//! Draws: per week, per team, per user in order; so one seed gives the same jobs whatever the
//! cluster size.
//!
//! ```
//! use gangway_sim::team::TeamParams;
//! let params = TeamParams::default();
//! assert_eq!((params.nodes, params.gpus_per_node, params.weeks), (4, 8, 3));
//! let workload = params.generate().unwrap();
//! assert_eq!(workload.accounts.len(), 4);
//! assert_eq!(workload.nodes.len(), 4);
//! assert!(workload.jobs.windows(2).all(|w| w[0].submit_ms <= w[1].submit_ms));
//! // Demand in the working day is well above the cluster: contended.
//! assert!(params.offered_day_load() > 1.0);
//! ```

use crate::looks::{DAY_MS, WEEK_MS};
use crate::workload::dist::{self, Rng};
use crate::workload::{
    MAX_NODES, ParamError, SkipCounts, TraceAccount, TraceJob, TraceNode, TracePlacement, Workload,
};

const HOUR_MS: u64 = 3_600_000;
const MINUTE_MS: u64 = 60_000;

/// What one user asks for.
///
/// ```
/// use gangway_sim::team::UserProfile;
/// let user = UserProfile::default();
/// assert_eq!(user.jobs_per_day, 3.0);
/// // 3 jobs × 3.8 GPUs × 4.95 h ≈ 56 GPU-hours per working day.
/// assert!((user.gpu_hours_per_day() - 56.4).abs() < 0.5);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct UserProfile {
    /// Mean jobs per working day (≥ 0). Default 3.
    pub jobs_per_day: f64,
    /// Start of the working day, when jobs are wanted, in ms after midnight. Default 09:00.
    pub day_start_ms: u64,
    /// End of the working day (exclusive). Default 18:00.
    pub day_end_ms: u64,
    /// Job sizes in GPUs with their weights. Default 1: 30%, 2: 25%, 4: 25%, 8: 15%, 16: 5%.
    pub sizes: Vec<(u32, f64)>,
    /// Median run time in ms. Default 3 hours.
    pub run_median_ms: u64,
    /// σ of the log of the run time. Default 1.
    pub run_sigma: f64,
    /// Shortest run time in ms. Default 5 minutes.
    pub run_min_ms: u64,
    /// Longest run time in ms. Default 48 hours.
    pub run_max_ms: u64,
}

impl Default for UserProfile {
    fn default() -> Self {
        UserProfile {
            jobs_per_day: 3.0,
            day_start_ms: 9 * HOUR_MS,
            day_end_ms: 18 * HOUR_MS,
            sizes: vec![(1, 0.30), (2, 0.25), (4, 0.25), (8, 0.15), (16, 0.05)],
            run_median_ms: 3 * HOUR_MS,
            run_sigma: 1.0,
            run_min_ms: 5 * MINUTE_MS,
            run_max_ms: 48 * HOUR_MS,
        }
    }
}

impl UserProfile {
    /// Expected GPU-hours asked per working day (ignoring the clamp of run times and the cap
    /// of sizes at the cluster).
    pub fn gpu_hours_per_day(&self) -> f64 {
        let total: f64 = self.sizes.iter().map(|(_, w)| w).sum();
        let gpus: f64 = self
            .sizes
            .iter()
            .map(|(g, w)| f64::from(*g) * w)
            .sum::<f64>()
            / total;
        let run_h =
            self.run_median_ms as f64 * (self.run_sigma * self.run_sigma / 2.0).exp() / 3.6e6;
        self.jobs_per_day * gpus * run_h
    }

    fn validate(&self) -> Result<(), ParamError> {
        let fail = |m: &str| Err(ParamError(m.to_string()));
        if !(self.jobs_per_day.is_finite() && self.jobs_per_day >= 0.0) {
            return fail("jobs_per_day must be finite and non-negative");
        }
        if self.day_start_ms >= self.day_end_ms || self.day_end_ms > DAY_MS {
            return fail("day_start_ms must be before day_end_ms, within one day");
        }
        if self.sizes.is_empty()
            || self
                .sizes
                .iter()
                .any(|(g, w)| *g == 0 || !(w.is_finite() && *w >= 0.0))
            || self.sizes.iter().map(|(_, w)| w).sum::<f64>() <= 0.0
        {
            return fail("sizes must be positive GPU counts with non-negative weights, not all 0");
        }
        if self.run_median_ms == 0 || !(self.run_sigma.is_finite() && self.run_sigma >= 0.0) {
            return fail("run_median_ms must be positive and run_sigma finite, non-negative");
        }
        if self.run_min_ms == 0 || self.run_min_ms > self.run_max_ms {
            return fail("run_min_ms must be positive and at most run_max_ms");
        }
        Ok(())
    }
}

/// A team: an account with shares and an optional GPU quota, and its users.
///
/// ```
/// use gangway_sim::team::TeamParams;
/// let teams = TeamParams::default().teams;
/// assert_eq!(teams.iter().map(|t| t.users).sum::<u32>(), 10);
/// assert_eq!(teams.iter().filter(|t| t.burst.is_some()).count(), 1);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TeamSpec {
    /// Account (and quota queue) name; unique, not empty.
    pub name: String,
    /// Fair-share shares.
    pub shares: u32,
    /// Nominal GPU quota of the team's queue; `None`: no queue.
    pub gpu_quota: Option<u32>,
    /// Users (≥ 1), named `<team>-u<k>`.
    pub users: u32,
    /// Jobs per burst when the team's users submit in bursts; `None`: spread over the day.
    pub burst: Option<u32>,
}

/// Parameters of the `team` workload.
///
/// ```
/// use gangway_sim::team::TeamParams;
/// let params = TeamParams::default();
/// let names: Vec<&str> = params.teams.iter().map(|t| t.name.as_str()).collect();
/// assert_eq!(names, ["vision", "language", "speech", "research"]);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct TeamParams {
    /// Seed. Default 1.
    pub seed: u64,
    /// Nodes, named `gpu01`, `gpu02`, … Default 4.
    pub nodes: u32,
    /// GPUs per node. Default 8.
    pub gpus_per_node: u32,
    /// Weeks of arrivals (≥ 1). Default 3.
    pub weeks: u32,
    /// The teams. Default `vision` (shares 40, quota 13 GPUs, 3 users), `language` (30, 10, 3),
    /// `speech` (20, 6, 2) and `research` (10, 3, 2 users submitting in bursts of 8): quotas
    /// adding up to the 32 GPUs, demand not in proportion to shares (research asks for twice
    /// its share).
    pub teams: Vec<TeamSpec>,
    /// Every user's demand.
    pub profile: UserProfile,
    /// Cpus a task asks for per GPU, in thousandths. Default 8,000 (the generated nodes have
    /// 12 cpus per GPU).
    pub cpus_per_gpu_milli: u64,
    /// Memory a task asks for per GPU, in MiB. Default 65,536 (the generated nodes have
    /// 131,072 MiB per GPU).
    pub memory_mib_per_gpu: u64,
    /// The model of the nodes' GPUs. Default `a100`.
    pub gpu_model: String,
}

impl Default for TeamParams {
    fn default() -> Self {
        let team = |name: &str, shares, quota, users, burst| TeamSpec {
            name: name.to_string(),
            shares,
            gpu_quota: Some(quota),
            users,
            burst,
        };
        TeamParams {
            seed: 1,
            nodes: 4,
            gpus_per_node: 8,
            weeks: 3,
            teams: vec![
                team("vision", 40, 13, 3, None),
                team("language", 30, 10, 3, None),
                team("speech", 20, 6, 2, None),
                team("research", 10, 3, 2, Some(8)),
            ],
            profile: UserProfile::default(),
            cpus_per_gpu_milli: 8_000,
            memory_mib_per_gpu: 65_536,
            gpu_model: "a100".to_string(),
        }
    }
}

impl TeamParams {
    /// `users` users, each its own team (`u01`, `u02`, …, equal shares, no quota, no bursts),
    /// on `gpus` GPUs in nodes of up to 8 (4 GPUs: one 4-GPU node): a cell of the sweep.
    ///
    /// ```
    /// use gangway_sim::team::TeamParams;
    /// let cell = TeamParams::cell(4, 2, 7);
    /// assert_eq!((cell.nodes, cell.gpus_per_node, cell.teams.len()), (1, 4, 2));
    /// let cell = TeamParams::cell(64, 16, 7);
    /// assert_eq!((cell.nodes, cell.gpus_per_node), (8, 8));
    /// ```
    pub fn cell(gpus: u32, users: u32, seed: u64) -> TeamParams {
        let per_node = gpus.clamp(1, 8);
        TeamParams {
            seed,
            nodes: gpus.div_ceil(per_node),
            gpus_per_node: per_node,
            teams: (1..=users)
                .map(|k| TeamSpec {
                    name: format!("u{k:02}"),
                    shares: 1,
                    gpu_quota: None,
                    users: 1,
                    burst: None,
                })
                .collect(),
            ..TeamParams::default()
        }
    }

    /// These parameters on another machine (`gangway simulate --cluster`), so that every job
    /// fits it: as many nodes as `machine` has GPU nodes, each with the GPUs of its smallest
    /// one; per GPU, the cpus and memory asked capped at the least any GPU node has per GPU;
    /// and the teams' quotas scaled to the GPUs so counted (largest remainders). A job's size is
    /// then capped at those GPUs, and one larger than a node is whole nodes of that size, so
    /// any job can run on `machine` alone. A machine without GPUs is an error.
    ///
    /// ```
    /// use gangway_sim::team::TeamParams;
    /// let machine: gangway::ClusterConfig = serde_json::from_str(r#"{"nodes": [
    ///     {"name": "a", "cpus": 32, "memory_mib": 256000, "gpus": {"model": "a100", "count": 4}},
    ///     {"name": "b", "cpus": 64, "memory_mib": 512000, "gpus": {"model": "a100", "count": 8}}]}"#).unwrap();
    /// let params = TeamParams::default().fit_to(&machine).unwrap();
    /// assert_eq!((params.nodes, params.gpus_per_node), (2, 4));
    /// assert_eq!((params.cpus_per_gpu_milli, params.memory_mib_per_gpu), (8_000, 64_000));
    /// let quotas: Vec<_> = params.teams.iter().map(|t| t.gpu_quota.unwrap()).collect();
    /// assert_eq!(quotas, [3, 3, 1, 1]); // 13, 10, 6, 3 of 32 GPUs, scaled to 8
    /// let cpu_only: gangway::ClusterConfig =
    ///     serde_json::from_str(r#"{"nodes": [{"name": "c", "cpus": 8}]}"#).unwrap();
    /// assert!(TeamParams::default().fit_to(&cpu_only).unwrap_err().to_string().contains("no GPU"));
    /// ```
    pub fn fit_to(&self, machine: &gangway::ClusterConfig) -> Result<TeamParams, ParamError> {
        let gpu_nodes: Vec<(&gangway::config::NodeConfig, u64)> = machine
            .nodes
            .iter()
            .filter_map(|n| Some((n, u64::from(n.gpus.as_ref()?.count))))
            .filter(|(_, gpus)| *gpus > 0)
            .collect();
        let Some(smallest) = gpu_nodes.iter().map(|(_, gpus)| *gpus).min() else {
            return Err(ParamError(
                "the team workload asks for GPUs, and the machine has no GPU node".into(),
            ));
        };
        let cpus_per_gpu = gpu_nodes
            .iter()
            .map(|(n, gpus)| n.cpus.milli() / gpus)
            .min()
            .unwrap_or(0);
        let memory_per_gpu = gpu_nodes
            .iter()
            .map(|(n, gpus)| n.memory_mib / gpus)
            .min()
            .unwrap_or(0);
        let nodes = u32::try_from(gpu_nodes.len()).unwrap_or(u32::MAX);
        let gpus_per_node = u32::try_from(smallest).unwrap_or(u32::MAX);
        let own = u64::from(self.nodes) * u64::from(self.gpus_per_node);
        let fitted = u64::from(nodes) * smallest;
        let quotas: Vec<u64> = self
            .teams
            .iter()
            .map(|t| t.gpu_quota.map_or(0, u64::from))
            .collect();
        let scaled = crate::workload::scale_largest_remainder(&quotas, fitted, own);
        let teams = self
            .teams
            .iter()
            .zip(scaled)
            .map(|(team, quota)| TeamSpec {
                gpu_quota: team
                    .gpu_quota
                    .map(|_| u32::try_from(quota).unwrap_or(u32::MAX)),
                ..team.clone()
            })
            .collect();
        Ok(TeamParams {
            nodes,
            gpus_per_node,
            teams,
            cpus_per_gpu_milli: self.cpus_per_gpu_milli.min(cpus_per_gpu),
            memory_mib_per_gpu: self.memory_mib_per_gpu.min(memory_per_gpu),
            ..self.clone()
        })
    }

    /// Offered load during working hours: the users' GPU-hours per working day over the
    /// cluster's GPU-hours in the working day.
    pub fn offered_day_load(&self) -> f64 {
        let users: u32 = self.teams.iter().map(|t| t.users).sum();
        let day_h = (self.profile.day_end_ms - self.profile.day_start_ms) as f64 / 3.6e6;
        let gpus = f64::from(self.nodes * self.gpus_per_node);
        f64::from(users) * self.profile.gpu_hours_per_day() / (gpus * day_h)
    }

    fn validate(&self) -> Result<(), ParamError> {
        let fail = |m: String| Err(ParamError(m));
        if self.nodes == 0 || u64::from(self.nodes) > MAX_NODES {
            return fail(format!("nodes must be 1 to {MAX_NODES}"));
        }
        if self.gpus_per_node == 0 {
            return fail("gpus_per_node must be positive".into());
        }
        if self.weeks == 0 {
            return fail("weeks must be positive".into());
        }
        if self.teams.is_empty() {
            return fail("teams must not be empty".into());
        }
        if self.gpu_model.is_empty() {
            return fail("gpu_model must not be empty".into());
        }
        for (i, team) in self.teams.iter().enumerate() {
            if team.name.is_empty() || self.teams[..i].iter().any(|t| t.name == team.name) {
                return fail(format!(
                    "team names must be unique and not empty: {:?}",
                    team.name
                ));
            }
            if team.users == 0 || team.burst == Some(0) {
                return fail(format!(
                    "team {}: users and burst must be positive",
                    team.name
                ));
            }
        }
        self.profile.validate()
    }

    /// Generates the workload; an invalid parameter is an error naming it.
    ///
    /// ```
    /// use gangway_sim::team::TeamParams;
    /// let err = TeamParams { weeks: 0, ..TeamParams::default() }.generate().unwrap_err();
    /// assert!(err.to_string().contains("weeks"));
    /// ```
    pub fn generate(&self) -> Result<Workload, ParamError> {
        self.validate()?;
        let mut rng = dist::seeded(self.seed);
        let mut jobs = Vec::new();
        let profile = &self.profile;
        let day_length = profile.day_end_ms - profile.day_start_ms;
        for week in 0..u64::from(self.weeks) {
            for team in &self.teams {
                for user in 1..=team.users {
                    let expected = profile.jobs_per_day * 5.0;
                    let mut wanted = Vec::new();
                    match team.burst {
                        None => {
                            for day in 0..5 {
                                for _ in 0..poisson(&mut rng, profile.jobs_per_day) {
                                    let at = (dist::uniform(&mut rng) * day_length as f64) as u64;
                                    wanted.push(
                                        week * WEEK_MS + day * DAY_MS + profile.day_start_ms + at,
                                    );
                                }
                            }
                        }
                        Some(size) => {
                            let bursts = poisson(&mut rng, expected / f64::from(size));
                            for _ in 0..bursts {
                                let day = (dist::uniform(&mut rng) * 5.0) as u64;
                                let at = (dist::uniform(&mut rng) * day_length as f64) as u64;
                                let time =
                                    week * WEEK_MS + day * DAY_MS + profile.day_start_ms + at;
                                wanted.extend(std::iter::repeat_n(time, size as usize));
                            }
                        }
                    }
                    for submit_ms in wanted {
                        jobs.push(self.job(&mut rng, team, user, submit_ms));
                    }
                }
            }
        }
        jobs.sort_by_key(|j: &TraceJob| j.submit_ms);
        for (index, job) in jobs.iter_mut().enumerate() {
            job.id = format!("j{:05}", index + 1);
        }
        let nodes = (1..=self.nodes)
            .map(|k| TraceNode {
                name: format!("gpu{k:02}"),
                cpus_milli: u64::from(self.gpus_per_node) * 12_000,
                memory_mib: u64::from(self.gpus_per_node) * 131_072,
                gpu_model: Some(self.gpu_model.clone()),
                gpus: self.gpus_per_node,
                gpu_memory_mib: 81_920,
            })
            .collect();
        let accounts = self
            .teams
            .iter()
            .map(|t| TraceAccount {
                name: t.name.clone(),
                shares: t.shares,
                gpu_quota: t.gpu_quota,
            })
            .collect();
        Ok(Workload {
            nodes,
            jobs,
            accounts,
            skipped: SkipCounts::default(),
            max_time_ms: None,
        })
    }

    /// One job of `team`'s user `user` wanted at `submit_ms` (its id is set after sorting).
    fn job(&self, rng: &mut Rng, team: &TeamSpec, user: u32, submit_ms: u64) -> TraceJob {
        let profile = &self.profile;
        let weights: Vec<f64> = profile.sizes.iter().map(|(_, w)| *w).collect();
        let capacity = self.nodes * self.gpus_per_node;
        let size = profile.sizes[dist::weighted_index(rng, &weights)]
            .0
            .min(capacity);
        let (tasks, per_task, placement) = if size <= self.gpus_per_node {
            (1, size, TracePlacement::Pack)
        } else {
            let tasks = size.div_ceil(self.gpus_per_node);
            (tasks, self.gpus_per_node, TracePlacement::StrictSpread)
        };
        let log =
            (profile.run_median_ms as f64).ln() + profile.run_sigma * dist::standard_normal(rng);
        let run_ms = (log.exp() as u64).clamp(profile.run_min_ms, profile.run_max_ms);
        let factor = 1.5 + 1.5 * dist::uniform(rng);
        let time_limit_ms = ((run_ms as f64 * factor) as u64).div_ceil(MINUTE_MS) * MINUTE_MS;
        TraceJob {
            id: String::new(),
            submit_ms,
            run_ms,
            time_limit_ms,
            tasks,
            cpus_per_task_milli: u64::from(per_task) * self.cpus_per_gpu_milli,
            memory_mib_per_task: u64::from(per_task) * self.memory_mib_per_gpu,
            gpus_per_task_milli: u64::from(per_task) * 1000,
            gpu_models: Vec::new(),
            user: format!("{}-u{user}", team.name),
            account: team.name.clone(),
            queue: if team.gpu_quota.is_some() {
                team.name.clone()
            } else {
                String::new()
            },
            placement,
            priority: 0,
        }
    }
}

/// A team described by its own numbers: a team file (`gangway simulate --team-file
/// FILE.json`, JSON) or the team options of `gangway simulate`, every field optional, applied
/// over [`TeamParams::default()`] by [`TeamFile::apply`].
///
/// ```
/// use gangway_sim::team::TeamFile;
/// let file: TeamFile = serde_json::from_str(r#"{"users": 6, "nodes": 4, "gpus_per_node": 8,
///     "load": 1.2, "weeks": 2}"#).unwrap();
/// let params = file.apply(Default::default()).unwrap();
/// assert_eq!(params.teams.len(), 6); // each user their own account, equal shares
/// assert!((params.offered_day_load() - 1.2).abs() < 1e-9);
/// let bad = serde_json::from_str::<TeamFile>(r#"{"user": 6}"#).unwrap_err();
/// assert!(bad.to_string().contains("unknown field `user`"));
/// ```
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TeamFile {
    /// Seed of the draws.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Users, each their own account with equal shares and no quota (not with `teams`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub users: Option<u32>,
    /// The teams, with their shares, users, quotas and bursts (not with `users`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub teams: Option<Vec<TeamEntry>>,
    /// Nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<u32>,
    /// GPUs per node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpus_per_node: Option<u32>,
    /// The GPU model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_model: Option<String>,
    /// Weeks of arrivals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weeks: Option<u32>,
    /// The offered load in working hours: the GPU-hours the users ask for per working day
    /// over the machine's GPU-hours in the working day ([`TeamParams::offered_day_load`]); sets
    /// each user's jobs per day (not with `jobs_per_day`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<f64>,
    /// Each user's mean jobs per working day (not with `load`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jobs_per_day: Option<f64>,
}

/// One team of a [`TeamFile`].
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TeamEntry {
    /// Account name.
    pub name: String,
    /// Fair-share shares. Default 1.
    #[serde(default = "one")]
    pub shares: u32,
    /// Users. Default 1.
    #[serde(default = "one")]
    pub users: u32,
    /// Nominal GPU quota of the team's queue. Default: none (no queue).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_quota: Option<u32>,
    /// Jobs per burst when the team's users submit in bursts. Default: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst: Option<u32>,
}

fn one() -> u32 {
    1
}

impl TeamFile {
    /// Every field of `self` set in `base`; `users` makes one account per user (`u01`, …);
    /// the default teams' quotas are scaled to a machine of another size (largest
    /// remainders); `load` then sets the jobs per day. Conflicting or invalid fields are an
    /// error naming them.
    pub fn apply(&self, base: TeamParams) -> Result<TeamParams, ParamError> {
        let fail = |m: &str| Err(ParamError(m.to_string()));
        if self.users.is_some() && self.teams.is_some() {
            return fail("give users or teams, not both");
        }
        if self.load.is_some() && self.jobs_per_day.is_some() {
            return fail("give load or jobs_per_day, not both");
        }
        let own_gpus = u64::from(base.nodes) * u64::from(base.gpus_per_node);
        let mut params = base;
        if let Some(seed) = self.seed {
            params.seed = seed;
        }
        if let Some(nodes) = self.nodes {
            params.nodes = nodes;
        }
        if let Some(gpus) = self.gpus_per_node {
            params.gpus_per_node = gpus;
        }
        if let Some(model) = &self.gpu_model {
            params.gpu_model = model.clone();
        }
        if let Some(weeks) = self.weeks {
            params.weeks = weeks;
        }
        if let Some(users) = self.users {
            if users == 0 {
                return fail("users must be positive");
            }
            params.teams = TeamParams::cell(1, users, 0).teams;
        } else if let Some(teams) = &self.teams {
            params.teams = teams
                .iter()
                .map(|t| TeamSpec {
                    name: t.name.clone(),
                    shares: t.shares,
                    gpu_quota: t.gpu_quota,
                    users: t.users,
                    burst: t.burst,
                })
                .collect();
        } else {
            let gpus = u64::from(params.nodes) * u64::from(params.gpus_per_node);
            let quotas: Vec<u64> = params
                .teams
                .iter()
                .map(|t| t.gpu_quota.map_or(0, u64::from))
                .collect();
            let scaled = crate::workload::scale_largest_remainder(&quotas, gpus, own_gpus);
            for (team, quota) in params.teams.iter_mut().zip(scaled) {
                if team.gpu_quota.is_some() {
                    team.gpu_quota = Some(u32::try_from(quota).unwrap_or(u32::MAX));
                }
            }
        }
        if let Some(jobs) = self.jobs_per_day {
            params.profile.jobs_per_day = jobs;
        }
        if let Some(load) = self.load {
            if !(load.is_finite() && load > 0.0) {
                return fail("load must be a positive number");
            }
            params.validate()?;
            let now = params.offered_day_load();
            if now > 0.0 {
                params.profile.jobs_per_day *= load / now;
            }
        }
        params.validate()?;
        Ok(params)
    }
}

/// A Poisson draw of mean `mean` (Knuth's product of uniforms; means here are small).
fn poisson(rng: &mut Rng, mean: f64) -> u32 {
    let limit = (-mean).exp();
    let mut product = dist::uniform(rng);
    let mut count = 0;
    while product > limit && count < 10_000 {
        count += 1;
        product *= dist::uniform(rng);
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_are_wanted_in_working_hours_of_weekdays() {
        let workload = TeamParams::default().generate().unwrap();
        for job in &workload.jobs {
            let day = job.submit_ms / DAY_MS % 7;
            let time = job.submit_ms % DAY_MS;
            assert!(day < 5, "{} on day {day}", job.id);
            assert!((9 * HOUR_MS..18 * HOUR_MS).contains(&time), "{}", job.id);
        }
    }

    #[test]
    fn the_bursty_team_submits_eight_at_once() {
        let workload = TeamParams::default().generate().unwrap();
        let research: Vec<u64> = workload
            .jobs
            .iter()
            .filter(|j| j.account == "research")
            .map(|j| j.submit_ms)
            .collect();
        assert!(!research.is_empty());
        for time in &research {
            assert_eq!(research.iter().filter(|t| *t == time).count() % 8, 0);
        }
    }

    #[test]
    fn sizes_are_capped_at_the_cluster_and_rounded_to_whole_nodes() {
        let small = TeamParams::cell(4, 4, 3).generate().unwrap();
        assert!(
            small
                .jobs
                .iter()
                .all(|j| j.gpus_milli() <= 4_000 && j.tasks == 1)
        );
        let big = TeamParams::cell(32, 4, 3).generate().unwrap();
        let gangs: Vec<_> = big.jobs.iter().filter(|j| j.tasks > 1).collect();
        assert!(!gangs.is_empty());
        assert!(
            gangs
                .iter()
                .all(|j| j.gpus_per_task_milli == 8_000
                    && j.placement == TracePlacement::StrictSpread)
        );
    }

    #[test]
    fn a_team_file_sets_its_fields_and_scales_the_default_quotas() {
        let file = TeamFile {
            nodes: Some(2),
            gpu_model: Some("h100".into()),
            weeks: Some(1),
            ..TeamFile::default()
        };
        let params = file.apply(TeamParams::default()).unwrap();
        let quotas: Vec<Option<u32>> = params.teams.iter().map(|t| t.gpu_quota).collect();
        assert_eq!(
            quotas,
            [Some(7), Some(5), Some(3), Some(1)],
            "half of 13, 10, 6, 3"
        );
        let workload = params.generate().unwrap();
        assert_eq!(workload.nodes.len(), 2);
        assert!(
            workload
                .nodes
                .iter()
                .all(|n| n.gpu_model.as_deref() == Some("h100"))
        );
        let teams = TeamFile {
            teams: Some(vec![TeamEntry {
                name: "lab".into(),
                shares: 1,
                users: 6,
                gpu_quota: None,
                burst: None,
            }]),
            ..TeamFile::default()
        };
        let params = teams.apply(TeamParams::default()).unwrap();
        assert_eq!(params.teams.len(), 1);
        assert_eq!(params.teams[0].users, 6);
    }

    #[test]
    fn conflicting_or_invalid_team_fields_are_errors() {
        let err = |file: TeamFile| file.apply(TeamParams::default()).unwrap_err().0;
        assert!(
            err(TeamFile {
                users: Some(2),
                teams: Some(Vec::new()),
                ..TeamFile::default()
            })
            .contains("users or teams")
        );
        assert!(
            err(TeamFile {
                load: Some(1.0),
                jobs_per_day: Some(2.0),
                ..TeamFile::default()
            })
            .contains("load or jobs_per_day")
        );
        assert!(
            err(TeamFile {
                load: Some(f64::NAN),
                ..TeamFile::default()
            })
            .contains("load")
        );
        assert!(
            err(TeamFile {
                teams: Some(Vec::new()),
                ..TeamFile::default()
            })
            .contains("teams must not be empty")
        );
        assert!(
            err(TeamFile {
                gpus_per_node: Some(0),
                ..TeamFile::default()
            })
            .contains("gpus_per_node")
        );
    }

    #[test]
    fn same_seed_same_jobs() {
        let a = TeamParams::default().generate().unwrap();
        let b = TeamParams::default().generate().unwrap();
        assert_eq!(a, b);
        let c = TeamParams {
            seed: 2,
            ..TeamParams::default()
        }
        .generate()
        .unwrap();
        assert_ne!(a.jobs, c.jobs);
    }
}
