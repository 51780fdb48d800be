//! A GPU machine-learning workload: teams (accounts) with fair-share shares and GPU quotas
//! submit gangs of 1–64 GPUs with log-normal run times and over-estimated time limits, as a
//! Poisson process.
//!
//! Each job draws, in this order:
//!
//! - its **inter-arrival time**: exponential with mean [`GpuMlParams::mean_interarrival_ms`]
//!   (the first job arrives one draw after time 0);
//! - its **team**, with probability proportional to [`GpuMlTeam::job_weight`], and a user of the
//!   team (`<team>-u<k>`, uniform over [`GpuMlTeam::users`]);
//! - its **size** in GPUs from [`GpuMlParams::gang_sizes`]: a size up to one node's GPUs is one
//!   task of that many GPUs placed `pack`; a larger size is a gang of whole-node tasks (one node's
//!   GPUs each) placed `strict_spread`. Each task takes [`GpuMlParams::cpus_per_gpu`] cpus and
//!   [`GpuMlParams::memory_mib_per_gpu`] MiB per GPU;
//! - its **run time**: log-normal with median [`GpuMlParams::run_median_ms`] and shape
//!   [`GpuMlParams::run_sigma`] (the standard deviation of `ln(run time)`), clamped to
//!   [`GpuMlParams::run_min_ms`]..=[`GpuMlParams::run_max_ms`];
//! - its **time limit**: the run time times a factor uniform in
//!   [`GpuMlParams::overestimate_min`]..[`GpuMlParams::overestimate_max`], rounded up to a whole
//!   minute.
//!
//! The default fits the built-in cluster of `gangway simulate`, 64 nodes × 8 A100 GPUs, with
//! 3,000 jobs: a mean of 5.64 GPUs and about 2.05 hours per job (1 h median, σ 1.2) at one
//! arrival per 90 s offers about 0.9 of the cluster's 512 GPUs
//! ([`GpuMlParams::offered_load`]) for the about 3 days of arrivals, with bursts above it.
//!
//! ```
//! use gangway::sim::workload::gpu_ml::GpuMlParams;
//! let params = GpuMlParams::default();
//! assert!((params.offered_load() - 0.9).abs() < 0.05);
//! let workload = GpuMlParams { jobs: 200, ..params }.generate().unwrap();
//! assert_eq!(workload.jobs.len(), 200);
//! assert_eq!(workload.accounts.len(), 4);
//! assert!(workload.jobs.iter().all(|j| j.time_limit_ms >= j.run_ms));
//! ```

use std::collections::BTreeSet;

use super::dist::{self, Rng};
use super::{
    MAX_NODES, ParamError, SkipCounts, TraceAccount, TraceJob, TraceNode, TracePlacement, Workload,
};

/// A team: an account with shares, an optional GPU quota, and its part of the arrivals.
///
/// ```
/// use gangway::sim::workload::gpu_ml::GpuMlParams;
/// let teams = GpuMlParams::default().teams;
/// assert_eq!(teams.iter().map(|t| t.gpu_quota.unwrap()).sum::<u32>(), 512);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct GpuMlTeam {
    /// Account (and quota queue) name; unique, not empty.
    pub name: String,
    /// Fair-share shares.
    pub shares: u32,
    /// Nominal quota in whole GPUs of the team's queue; `None`: no queue.
    pub gpu_quota: Option<u32>,
    /// Relative probability that a job belongs to this team (≥ 0).
    pub job_weight: f64,
    /// Number of users in the team (≥ 1).
    pub users: u32,
}

/// Parameters of the GPU-ML generator; see the module documentation for how they are used.
///
/// ```
/// use gangway::sim::workload::gpu_ml::GpuMlParams;
/// let params = GpuMlParams::default();
/// assert_eq!((params.nodes, params.gpus_per_node, params.jobs), (64, 8, 3000));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct GpuMlParams {
    /// Seed of the random number generator. Default 1.
    pub seed: u64,
    /// Number of jobs. Default 3,000.
    pub jobs: usize,
    /// Number of nodes, named `gpu01`, `gpu02`, … Default 64.
    pub nodes: u32,
    /// GPUs per node. Default 8.
    pub gpus_per_node: u32,
    /// The GPU model. Default `a100`.
    pub gpu_model: String,
    /// Memory of one GPU in MiB. Default 81,920 (80 GiB).
    pub gpu_memory_mib: u64,
    /// Cpus per node. Default 128.
    pub node_cpus: u32,
    /// Memory per node in MiB. Default 1,048,576 (1 TiB).
    pub node_memory_mib: u64,
    /// Cpus a job takes per GPU. Default 12.
    pub cpus_per_gpu: u32,
    /// Memory a job takes per GPU, in MiB. Default 98,304 (96 GiB).
    pub memory_mib_per_gpu: u64,
    /// Job sizes in GPUs with their relative weights. Default 1: 40%, 2: 20%, 4: 15%, 8: 15%,
    /// 16: 5%, 32: 3%, 64: 2%.
    pub gang_sizes: Vec<(u32, f64)>,
    /// The teams. Default: `vision` (shares 40, quota 192, 35% of jobs, 6 users), `language`
    /// (30, 160, 35%, 8), `speech` (20, 96, 20%, 4), `research` (10, 64, 10%, 5) — quotas adding
    /// up to the cluster, arrivals not in proportion to shares.
    pub teams: Vec<GpuMlTeam>,
    /// Mean time between arrivals, in ms. Default 90,000.
    pub mean_interarrival_ms: u64,
    /// Median run time in ms. Default 3,600,000 (1 hour).
    pub run_median_ms: u64,
    /// Standard deviation of `ln(run time)`. Default 1.2.
    pub run_sigma: f64,
    /// Shortest run time in ms. Default 60,000.
    pub run_min_ms: u64,
    /// Longest run time in ms. Default 259,200,000 (72 hours).
    pub run_max_ms: u64,
    /// Smallest time-limit over-estimate factor (≥ 1). Default 1.1.
    pub overestimate_min: f64,
    /// Largest time-limit over-estimate factor. Default 3.
    pub overestimate_max: f64,
}

impl Default for GpuMlParams {
    fn default() -> Self {
        let team = |name: &str, shares, quota, job_weight, users| GpuMlTeam {
            name: name.to_string(),
            shares,
            gpu_quota: Some(quota),
            job_weight,
            users,
        };
        GpuMlParams {
            seed: 1,
            jobs: 3000,
            nodes: 64,
            gpus_per_node: 8,
            gpu_model: "a100".to_string(),
            gpu_memory_mib: 81_920,
            node_cpus: 128,
            node_memory_mib: 1_048_576,
            cpus_per_gpu: 12,
            memory_mib_per_gpu: 98_304,
            gang_sizes: vec![
                (1, 0.40),
                (2, 0.20),
                (4, 0.15),
                (8, 0.15),
                (16, 0.05),
                (32, 0.03),
                (64, 0.02),
            ],
            teams: vec![
                team("vision", 40, 192, 0.35, 6),
                team("language", 30, 160, 0.35, 8),
                team("speech", 20, 96, 0.20, 4),
                team("research", 10, 64, 0.10, 5),
            ],
            mean_interarrival_ms: 90_000,
            run_median_ms: 3_600_000,
            run_sigma: 1.2,
            run_min_ms: 60_000,
            run_max_ms: 259_200_000,
            overestimate_min: 1.1,
            overestimate_max: 3.0,
        }
    }
}

impl GpuMlParams {
    /// The expected fraction of the cluster's GPUs the arrivals ask for: mean GPUs per job ×
    /// mean run time (`median · e^(σ²/2)`, ignoring the clamp) / (mean inter-arrival × GPUs).
    ///
    /// ```
    /// use gangway::sim::workload::gpu_ml::GpuMlParams;
    /// let half = GpuMlParams { mean_interarrival_ms: 180_000, ..GpuMlParams::default() };
    /// assert!((half.offered_load() * 2.0 - GpuMlParams::default().offered_load()).abs() < 1e-9);
    /// ```
    pub fn offered_load(&self) -> f64 {
        let total_weight: f64 = self.gang_sizes.iter().map(|(_, w)| w).sum();
        let mean_gpus: f64 = self
            .gang_sizes
            .iter()
            .map(|(g, w)| f64::from(*g) * w)
            .sum::<f64>()
            / total_weight;
        let mean_run_ms = self.run_median_ms as f64 * (self.run_sigma * self.run_sigma / 2.0).exp();
        let gpus = f64::from(self.nodes) * f64::from(self.gpus_per_node);
        mean_gpus * mean_run_ms / (self.mean_interarrival_ms as f64 * gpus)
    }

    /// Draws the workload; the same parameters give the same workload.
    ///
    /// ```
    /// use gangway::sim::workload::gpu_ml::GpuMlParams;
    /// let params = GpuMlParams { jobs: 30, seed: 9, ..GpuMlParams::default() };
    /// assert_eq!(params.generate().unwrap(), params.generate().unwrap());
    /// let bad = GpuMlParams { gang_sizes: vec![(12, 1.0)], ..GpuMlParams::default() };
    /// assert!(bad.generate().unwrap_err().to_string().contains("gang_sizes"));
    /// ```
    pub fn generate(&self) -> Result<Workload, ParamError> {
        self.validate()?;
        let mut rng = dist::seeded(self.seed);
        let team_weights: Vec<f64> = self.teams.iter().map(|t| t.job_weight).collect();
        let size_weights: Vec<f64> = self.gang_sizes.iter().map(|(_, w)| *w).collect();
        let mut now_ms = 0.0;
        let mut jobs = Vec::new();
        for index in 0..self.jobs {
            now_ms += dist::exponential(&mut rng, self.mean_interarrival_ms as f64);
            let team = &self.teams[dist::weighted_index(&mut rng, &team_weights)];
            let user = 1 + (dist::uniform(&mut rng) * f64::from(team.users)) as u32;
            let gpus = self.gang_sizes[dist::weighted_index(&mut rng, &size_weights)].0;
            let run_ms = self.run_ms(&mut rng);
            let factor = self.overestimate_min
                + dist::uniform(&mut rng) * (self.overestimate_max - self.overestimate_min);
            let (tasks, gpus_per_task, placement) = if gpus <= self.gpus_per_node {
                (1, gpus, TracePlacement::Pack)
            } else {
                (
                    gpus / self.gpus_per_node,
                    self.gpus_per_node,
                    TracePlacement::StrictSpread,
                )
            };
            jobs.push(TraceJob {
                id: (index + 1).to_string(),
                submit_ms: now_ms.round() as u64,
                run_ms,
                time_limit_ms: ((run_ms as f64 * factor / 60_000.0).ceil() as u64)
                    .saturating_mul(60_000),
                tasks,
                cpus_per_task_milli: u64::from(gpus_per_task * self.cpus_per_gpu) * 1000,
                memory_mib_per_task: u64::from(gpus_per_task) * self.memory_mib_per_gpu,
                gpus_per_task_milli: u64::from(gpus_per_task) * 1000,
                gpu_models: Vec::new(),
                user: format!("{}-u{user}", team.name),
                account: team.name.clone(),
                queue: if team.gpu_quota.is_some() {
                    team.name.clone()
                } else {
                    String::new()
                },
                placement,
            });
        }
        Ok(Workload {
            nodes: self.nodes(),
            jobs,
            accounts: self
                .teams
                .iter()
                .map(|t| TraceAccount {
                    name: t.name.clone(),
                    shares: t.shares,
                    gpu_quota: t.gpu_quota,
                })
                .collect(),
            skipped: SkipCounts::default(),
        })
    }

    fn run_ms(&self, rng: &mut Rng) -> u64 {
        let ln_run = (self.run_median_ms as f64).ln() + self.run_sigma * dist::standard_normal(rng);
        (ln_run.exp().round() as u64).clamp(self.run_min_ms, self.run_max_ms)
    }

    fn nodes(&self) -> Vec<TraceNode> {
        let width = self.nodes.to_string().len().max(2);
        (1..=self.nodes)
            .map(|index| TraceNode {
                name: format!("gpu{index:0width$}"),
                cpus_milli: u64::from(self.node_cpus) * 1000,
                memory_mib: self.node_memory_mib,
                gpu_model: Some(self.gpu_model.clone()),
                gpus: self.gpus_per_node,
                gpu_memory_mib: self.gpu_memory_mib,
            })
            .collect()
    }

    fn validate(&self) -> Result<(), ParamError> {
        let fail = |message: String| Err(ParamError(message));
        if self.nodes == 0 || u64::from(self.nodes) > MAX_NODES {
            return fail(format!("nodes: {} is not in 1..={MAX_NODES}", self.nodes));
        }
        if self.gpus_per_node == 0 {
            return fail("gpus_per_node: must be at least 1".to_string());
        }
        if u64::from(self.cpus_per_gpu) * u64::from(self.gpus_per_node) > u64::from(self.node_cpus)
        {
            return fail(format!(
                "cpus_per_gpu: {} × {} GPUs exceeds node_cpus {}",
                self.cpus_per_gpu, self.gpus_per_node, self.node_cpus
            ));
        }
        if self
            .memory_mib_per_gpu
            .saturating_mul(u64::from(self.gpus_per_node))
            > self.node_memory_mib
        {
            return fail(format!(
                "memory_mib_per_gpu: {} × {} GPUs exceeds node_memory_mib {}",
                self.memory_mib_per_gpu, self.gpus_per_node, self.node_memory_mib
            ));
        }
        check_weights("gang_sizes", self.gang_sizes.iter().map(|(_, w)| *w))?;
        for (index, (gpus, _)) in self.gang_sizes.iter().enumerate() {
            let fits = *gpus >= 1
                && (*gpus <= self.gpus_per_node
                    || (gpus % self.gpus_per_node == 0 && gpus / self.gpus_per_node <= self.nodes));
            if !fits {
                return fail(format!(
                    "gang_sizes[{index}]: {gpus} GPUs is neither 1..={} nor a multiple of it \
                     within {} nodes",
                    self.gpus_per_node, self.nodes
                ));
            }
        }
        check_weights("teams", self.teams.iter().map(|t| t.job_weight))?;
        let mut names = BTreeSet::new();
        for (index, team) in self.teams.iter().enumerate() {
            if team.name.is_empty() || !names.insert(team.name.as_str()) {
                return fail(format!(
                    "teams[{index}].name: {:?} is empty or repeated",
                    team.name
                ));
            }
            if team.users == 0 {
                return fail(format!("teams[{index}].users: must be at least 1"));
            }
        }
        if self.run_median_ms == 0 || !(self.run_sigma.is_finite() && self.run_sigma >= 0.0) {
            return fail("run_median_ms, run_sigma: need a positive median and sigma ≥ 0".into());
        }
        if self.run_min_ms == 0 || self.run_min_ms > self.run_max_ms {
            return fail(format!(
                "run_min_ms, run_max_ms: need 1 ≤ {} ≤ {}",
                self.run_min_ms, self.run_max_ms
            ));
        }
        let (low, high) = (self.overestimate_min, self.overestimate_max);
        if !(low.is_finite() && high.is_finite() && 1.0 <= low && low <= high) {
            return fail(format!(
                "overestimate_min, overestimate_max: need 1 ≤ {low} ≤ {high}"
            ));
        }
        Ok(())
    }
}

/// Weights must be finite, non-negative, with a positive sum.
fn check_weights(name: &str, weights: impl Iterator<Item = f64>) -> Result<(), ParamError> {
    let mut total = 0.0;
    for (index, weight) in weights.enumerate() {
        if !(weight.is_finite() && weight >= 0.0) {
            return Err(ParamError(format!(
                "{name}[{index}]: weight {weight} is not a number ≥ 0"
            )));
        }
        total += weight;
    }
    if total > 0.0 {
        Ok(())
    } else {
        Err(ParamError(format!(
            "{name}: needs at least one entry with a positive weight"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn big_sample() -> Workload {
        GpuMlParams {
            jobs: 10_000,
            seed: 42,
            ..GpuMlParams::default()
        }
        .generate()
        .expect("valid")
    }

    #[test]
    fn same_seed_same_jobs_other_seed_other_jobs() {
        let params = GpuMlParams {
            jobs: 300,
            seed: 3,
            ..GpuMlParams::default()
        };
        let first = params.generate().expect("valid");
        assert_eq!(first, params.generate().expect("valid"));
        let other = GpuMlParams { seed: 4, ..params }.generate().expect("valid");
        assert_ne!(first.jobs, other.jobs);
    }

    #[test]
    fn gang_size_shares_match_the_weights() {
        let jobs = big_sample().jobs;
        for (gpus, weight) in GpuMlParams::default().gang_sizes {
            let count = jobs
                .iter()
                .filter(|j| j.gpus_milli() == u64::from(gpus) * 1000)
                .count();
            let share = count as f64 / jobs.len() as f64;
            assert!(
                (share - weight).abs() < 0.015,
                "{gpus} GPUs: share {share}, want {weight}"
            );
        }
    }

    #[test]
    fn multi_node_gangs_are_whole_node_tasks_strictly_spread() {
        for job in big_sample().jobs {
            if job.gpus_milli() > 8000 {
                assert_eq!(job.gpus_per_task_milli, 8000);
                assert_eq!(job.placement, TracePlacement::StrictSpread);
                assert_eq!(job.cpus_per_task_milli, 96_000);
            } else {
                assert_eq!(job.tasks, 1);
                assert_eq!(job.placement, TracePlacement::Pack);
            }
        }
    }

    #[test]
    fn team_shares_of_jobs_match_the_weights_and_users_belong_to_teams() {
        let jobs = big_sample().jobs;
        for team in GpuMlParams::default().teams {
            let mine: Vec<&TraceJob> = jobs.iter().filter(|j| j.account == team.name).collect();
            let share = mine.len() as f64 / jobs.len() as f64;
            assert!(
                (share - team.job_weight).abs() < 0.015,
                "{}: {share}",
                team.name
            );
            assert!(mine.iter().all(|j| j.queue == team.name));
            let prefix = format!("{}-u", team.name);
            assert!(mine.iter().all(|j| j.user.starts_with(&prefix)));
        }
    }

    #[test]
    fn run_times_are_log_normal_and_limits_over_estimate() {
        let params = GpuMlParams::default();
        let mut runs: Vec<u64> = big_sample().jobs.iter().map(|j| j.run_ms).collect();
        runs.sort_unstable();
        let median = runs[runs.len() / 2] as f64;
        assert!((median / 3_600_000.0 - 1.0).abs() < 0.1, "median {median}");
        for job in big_sample().jobs {
            assert!((params.run_min_ms..=params.run_max_ms).contains(&job.run_ms));
            assert_eq!(job.time_limit_ms % 60_000, 0);
            let factor = job.time_limit_ms as f64 / job.run_ms as f64;
            assert!(factor >= 1.1 - 1e-9, "factor {factor}");
            assert!(job.time_limit_ms as f64 <= job.run_ms as f64 * 3.0 + 60_000.0);
        }
    }

    #[test]
    fn default_load_keeps_the_cluster_busy_for_days() {
        let workload = GpuMlParams::default().generate().expect("valid");
        let span_ms = workload.jobs.last().expect("jobs").submit_ms as f64;
        let days = span_ms / 86_400_000.0;
        assert!((2.5..4.0).contains(&days), "arrivals span {days} days");
        let gpu_ms: f64 = workload
            .jobs
            .iter()
            .map(|j| j.gpus_milli() as f64 / 1000.0 * j.run_ms as f64)
            .sum();
        let load = gpu_ms / (span_ms * 512.0);
        assert!((0.6..1.3).contains(&load), "offered load {load}");
        let cluster = workload.cluster_config();
        assert_eq!(cluster.nodes.len(), 64);
        assert_eq!(cluster.nodes[0].name, "gpu01");
    }

    #[test]
    fn invalid_parameters_are_errors_naming_the_parameter() {
        let base = GpuMlParams::default();
        let cases = [
            (
                GpuMlParams {
                    nodes: 0,
                    ..base.clone()
                },
                "nodes",
            ),
            (
                GpuMlParams {
                    gang_sizes: vec![(128, 1.0)],
                    nodes: 8,
                    ..base.clone()
                },
                "gang_sizes[0]",
            ),
            (
                GpuMlParams {
                    gang_sizes: vec![(1, -1.0)],
                    ..base.clone()
                },
                "gang_sizes[0]",
            ),
            (
                GpuMlParams {
                    teams: Vec::new(),
                    ..base.clone()
                },
                "teams",
            ),
            (
                GpuMlParams {
                    cpus_per_gpu: 17,
                    ..base.clone()
                },
                "cpus_per_gpu",
            ),
            (
                GpuMlParams {
                    overestimate_min: 0.5,
                    ..base.clone()
                },
                "overestimate_min",
            ),
            (
                GpuMlParams {
                    run_min_ms: 0,
                    ..base.clone()
                },
                "run_min_ms",
            ),
        ];
        for (params, name) in cases {
            let message = params.generate().unwrap_err().to_string();
            assert!(message.contains(name), "{message} should name {name}");
        }
        let mut twins = base.clone();
        twins.teams[1].name = twins.teams[0].name.clone();
        assert!(
            twins
                .generate()
                .unwrap_err()
                .to_string()
                .contains("teams[1].name")
        );
    }
}
