//! A GPU machine-learning workload: teams (accounts) with fair-share shares and GPU quotas
//! submit gangs of 1–64 GPUs with log-normal run times and over-estimated time limits, as a
//! Poisson process; or, with [`GpuMlParams::heavy_tailed`], the same teams, sizes and arrivals
//! with Pareto run times and every time limit at the partition maximum.
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
//! - its **run time** from [`GpuMlParams::run_time`]: log-normal ([`RunTime::LogNormal`], the
//!   default) or Pareto ([`RunTime::Pareto`]), clamped to
//!   [`GpuMlParams::run_min_ms`]..=[`GpuMlParams::run_max_ms`];
//! - its **time limit** from [`GpuMlParams::time_limit`]: the run time times a factor uniform in
//!   `min..max`, rounded up to a whole minute ([`TimeLimit::Overestimate`], the default), or
//!   [`GpuMlParams::run_max_ms`] for every job ([`TimeLimit::PartitionMax`]: the workload's
//!   partition then has that as its `max_time_ms`, [`Workload::max_time_ms`]).
//!
//! Every job draws the same number of random numbers in the same order whatever the run-time
//! distribution and time-limit rule (a Pareto run time and a partition-maximum limit skip the
//! uniform they do not need), so one seed gives every variant the same arrivals, teams, users
//! and sizes; only run times and limits differ.
//!
//! The default fits the built-in cluster of `gangway simulate`, 64 nodes × 8 A100 GPUs, with
//! 3,000 jobs: a mean of 5.64 GPUs and about 2.05 hours per job (1 h median, σ 1.2) at one
//! arrival per 90 s offers about 0.9 of the cluster's 512 GPUs
//! ([`GpuMlParams::offered_load`]) for the about 3 days of arrivals, with bursts above it.
//!
//! ```
//! use gangway_sim::workload::gpu_ml::GpuMlParams;
//! let params = GpuMlParams::default();
//! assert!((params.offered_load() - 0.9).abs() < 0.05);
//! let workload = GpuMlParams { jobs: 200, ..params }.generate().unwrap();
//! assert_eq!(workload.jobs.len(), 200);
//! assert_eq!(workload.accounts.len(), 4);
//! assert!(workload.jobs.iter().all(|j| j.time_limit_ms >= j.run_ms));
//! ```
//!
//! [`GpuMlParams::heavy_tailed`] is the same workload with run times that carry the weight in
//! their tail (Pareto, shape 1.2, minimum 30 minutes, clamped to 72 hours) and time limits that
//! carry no information (every job asks for the 72-hour partition maximum), at about the same
//! offered load:
//!
//! ```
//! use gangway_sim::workload::gpu_ml::GpuMlParams;
//! let params = GpuMlParams::heavy_tailed();
//! assert!((params.offered_load() - 0.91).abs() < 0.01);
//! let workload = GpuMlParams { jobs: 200, ..params }.generate().unwrap();
//! assert_eq!(workload.max_time_ms, Some(259_200_000));
//! assert!(workload.jobs.iter().all(|j| j.time_limit_ms == 259_200_000));
//! assert_eq!(workload.cluster_config().partitions[0].max_time_ms, Some(259_200_000));
//! ```

use std::collections::BTreeSet;

use super::dist::{self, Rng};
use super::{
    MAX_NODES, ParamError, SkipCounts, TraceAccount, TraceJob, TraceNode, TracePlacement, Workload,
};

/// A team: an account with shares, an optional GPU quota, and its part of the arrivals.
///
/// ```
/// use gangway_sim::workload::gpu_ml::GpuMlParams;
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

/// How a job's run time is drawn, before the clamp to
/// [`GpuMlParams::run_min_ms`]..=[`GpuMlParams::run_max_ms`].
///
/// ```
/// use gangway_sim::workload::gpu_ml::{GpuMlParams, RunTime};
/// assert_eq!(
///     GpuMlParams::default().run_time,
///     RunTime::LogNormal { median_ms: 3_600_000, sigma: 1.2 }
/// );
/// assert_eq!(
///     GpuMlParams::heavy_tailed().run_time,
///     RunTime::Pareto { shape: 1.2, scale_ms: 1_800_000 }
/// );
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RunTime {
    /// Log-normal: `ln(run time)` is normal around `ln(median_ms)` with standard deviation
    /// `sigma`. Mean `median_ms · e^(sigma²/2)`.
    LogNormal {
        /// Median run time in ms (> 0).
        median_ms: u64,
        /// Standard deviation of `ln(run time)` (≥ 0).
        sigma: f64,
    },
    /// Pareto (type I): `P(run time > x) = (scale_ms / x)^shape` for `x ≥ scale_ms`, drawn by
    /// inverse transform. Median `scale_ms · 2^(1/shape)`; mean `shape · scale_ms / (shape − 1)`
    /// for `shape > 1`, infinite otherwise (before the clamp). The smaller the shape, the
    /// heavier the tail: at 1.2 the longest 1% of the draws hold 0.01^(1 − 1/1.2) = 46% of their
    /// total before the clamp (22% in [`GpuMlParams::heavy_tailed`], clamped at 144 times the
    /// scale).
    Pareto {
        /// The tail index α (> 0).
        shape: f64,
        /// The minimum run time in ms (> 0).
        scale_ms: u64,
    },
}

/// How a job's time limit is set.
///
/// ```
/// use gangway_sim::workload::gpu_ml::{GpuMlParams, TimeLimit};
/// assert_eq!(GpuMlParams::default().time_limit, TimeLimit::Overestimate { min: 1.1, max: 3.0 });
/// assert_eq!(GpuMlParams::heavy_tailed().time_limit, TimeLimit::PartitionMax);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TimeLimit {
    /// The run time times a factor uniform in `min..max`, rounded up to a whole minute: users
    /// who know their jobs and ask for a margin.
    Overestimate {
        /// Smallest factor (≥ 1).
        min: f64,
        /// Largest factor (≥ `min`).
        max: f64,
    },
    /// Every job asks for [`GpuMlParams::run_max_ms`], the `max_time_ms` of the workload's
    /// partition ([`Workload::max_time_ms`]): users who do not estimate, so the limit says
    /// nothing about the run time. Run times are clamped to it, so no job overruns.
    PartitionMax,
}

/// Parameters of the GPU-ML generator; see the module documentation for how they are used.
///
/// ```
/// use gangway_sim::workload::gpu_ml::GpuMlParams;
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
    /// The run-time distribution. Default log-normal with median 3,600,000 ms (1 hour) and
    /// σ 1.2.
    pub run_time: RunTime,
    /// Shortest run time in ms. Default 60,000.
    pub run_min_ms: u64,
    /// Longest run time in ms; with [`TimeLimit::PartitionMax`] also every job's time limit and
    /// the partition's `max_time_ms`. Default 259,200,000 (72 hours).
    pub run_max_ms: u64,
    /// The time-limit rule. Default over-estimates by a factor uniform in 1.1..3.
    pub time_limit: TimeLimit,
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
            run_time: RunTime::LogNormal {
                median_ms: 3_600_000,
                sigma: 1.2,
            },
            run_min_ms: 60_000,
            run_max_ms: 259_200_000,
            time_limit: TimeLimit::Overestimate { min: 1.1, max: 3.0 },
        }
    }
}

impl GpuMlParams {
    /// The default workload with heavy-tailed run times and uninformative time limits: run
    /// times Pareto with shape 1.2 and minimum (scale) 30 minutes, clamped to 1 min..=72 h, and
    /// every time limit the partition maximum of 72 hours ([`TimeLimit::PartitionMax`]); the
    /// teams, sizes and arrivals of [`GpuMlParams::default`] (with one seed, the very same).
    ///
    /// The scale makes the offered load about the default's: a Pareto of shape α and minimum
    /// `s` has mean `α·s/(α − 1)`, 6·`s` = 3 h at α = 1.2, but the clamp at `M` = 72 h cuts the
    /// tail, leaving `s + s/(α − 1)·(1 − (s/M)^(α−1))` = 4.15·`s` = 2.07 h, against the
    /// log-normal's 2.05 h; so [`GpuMlParams::offered_load`] is 0.914 (default 0.905). The
    /// median, `s·2^(1/α)` = 53 min, is close to the default's hour; 0.26% of the jobs
    /// (`(s/M)^α`) are clamped at 72 h. The tail is what differs: the longest 1% of the jobs
    /// hold 22.5% of the run time (the default's log-normal: 13%), and the realised load of a
    /// few thousand jobs varies more from seed to seed.
    ///
    /// ```
    /// use gangway_sim::workload::gpu_ml::GpuMlParams;
    /// let params = GpuMlParams::heavy_tailed();
    /// assert!((params.mean_run_ms() / 3_600_000.0 - 2.07).abs() < 0.01);
    /// let heavy = GpuMlParams { jobs: 50, ..params }.generate().unwrap();
    /// let light = GpuMlParams { jobs: 50, ..GpuMlParams::default() }.generate().unwrap();
    /// assert!(heavy.jobs.iter().zip(&light.jobs).all(|(h, l)| h.submit_ms == l.submit_ms));
    /// ```
    pub fn heavy_tailed() -> GpuMlParams {
        GpuMlParams {
            run_time: RunTime::Pareto {
                shape: 1.2,
                scale_ms: 1_800_000,
            },
            time_limit: TimeLimit::PartitionMax,
            ..GpuMlParams::default()
        }
    }

    /// The expected run time in ms. Log-normal: `median · e^(σ²/2)`, ignoring the clamp (which
    /// moves the default's mean by 0.3%). Pareto: the exact mean of the clamped draw,
    /// `lo + s^α/(α − 1)·(lo^(1−α) − M^(1−α))` with `lo = max(s, run_min_ms)` and
    /// `M = run_max_ms` (`lo + s·ln(M/lo)` at α = 1), since at small shapes the clamp decides
    /// the mean.
    ///
    /// ```
    /// use gangway_sim::workload::gpu_ml::{GpuMlParams, RunTime};
    /// let default = GpuMlParams::default().mean_run_ms();
    /// assert!((default / 3_600_000.0 - 2.054).abs() < 0.001);
    /// let light_tail = GpuMlParams {
    ///     run_time: RunTime::Pareto { shape: 3.0, scale_ms: 600_000 },
    ///     ..GpuMlParams::default()
    /// };
    /// // 3 · 10 min / (3 − 1), less 2 ms that the clamp at 72 h cuts off.
    /// assert!((light_tail.mean_run_ms() / 900_000.0 - 1.0).abs() < 1e-5);
    /// ```
    pub fn mean_run_ms(&self) -> f64 {
        match self.run_time {
            RunTime::LogNormal { median_ms, sigma } => {
                median_ms as f64 * (sigma * sigma / 2.0).exp()
            }
            RunTime::Pareto { shape, scale_ms } => {
                let (scale, max) = (scale_ms as f64, self.run_max_ms as f64);
                let low = scale.max(self.run_min_ms as f64);
                if low >= max {
                    return max;
                }
                if (shape - 1.0).abs() < 1e-12 {
                    return low + scale * (max / low).ln();
                }
                low + scale.powf(shape) / (shape - 1.0)
                    * (low.powf(1.0 - shape) - max.powf(1.0 - shape))
            }
        }
    }

    /// The expected fraction of the cluster's GPUs the arrivals ask for: mean GPUs per job ×
    /// [`GpuMlParams::mean_run_ms`] / (mean inter-arrival × GPUs).
    ///
    /// ```
    /// use gangway_sim::workload::gpu_ml::GpuMlParams;
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
        let mean_run_ms = self.mean_run_ms();
        let gpus = f64::from(self.nodes) * f64::from(self.gpus_per_node);
        mean_gpus * mean_run_ms / (self.mean_interarrival_ms as f64 * gpus)
    }

    /// Draws the workload; the same parameters give the same workload.
    ///
    /// ```
    /// use gangway_sim::workload::gpu_ml::GpuMlParams;
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
            let time_limit_ms = self.time_limit_ms(&mut rng, run_ms);
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
                time_limit_ms,
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
                priority: 0,
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
            max_time_ms: (self.time_limit == TimeLimit::PartitionMax).then_some(self.run_max_ms),
        })
    }

    /// A run time; two uniforms whatever the distribution.
    fn run_ms(&self, rng: &mut Rng) -> u64 {
        let run = match self.run_time {
            RunTime::LogNormal { median_ms, sigma } => {
                ((median_ms as f64).ln() + sigma * dist::standard_normal(rng)).exp()
            }
            RunTime::Pareto { shape, scale_ms } => {
                let run = dist::pareto(rng, shape, scale_ms as f64);
                dist::uniform(rng); // the second uniform of a normal draw
                run
            }
        };
        (run.round() as u64).clamp(self.run_min_ms, self.run_max_ms)
    }

    /// The time limit of a job of `run_ms`; one uniform whatever the rule.
    fn time_limit_ms(&self, rng: &mut Rng, run_ms: u64) -> u64 {
        let unit = dist::uniform(rng);
        match self.time_limit {
            TimeLimit::Overestimate { min, max } => {
                let factor = min + unit * (max - min);
                ((run_ms as f64 * factor / 60_000.0).ceil() as u64).saturating_mul(60_000)
            }
            TimeLimit::PartitionMax => self.run_max_ms,
        }
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
        match self.run_time {
            RunTime::LogNormal { median_ms, sigma } => {
                if median_ms == 0 || !(sigma.is_finite() && sigma >= 0.0) {
                    return fail(format!(
                        "run_time: log-normal needs median_ms > 0 and sigma ≥ 0, got {median_ms} \
                         and {sigma}"
                    ));
                }
            }
            RunTime::Pareto { shape, scale_ms } => {
                if scale_ms == 0 || !(shape.is_finite() && shape > 0.0) {
                    return fail(format!(
                        "run_time: Pareto needs shape > 0 and scale_ms > 0, got {shape} and \
                         {scale_ms}"
                    ));
                }
            }
        }
        if self.run_min_ms == 0 || self.run_min_ms > self.run_max_ms {
            return fail(format!(
                "run_min_ms, run_max_ms: need 1 ≤ {} ≤ {}",
                self.run_min_ms, self.run_max_ms
            ));
        }
        if let TimeLimit::Overestimate { min, max } = self.time_limit
            && !(min.is_finite() && max.is_finite() && 1.0 <= min && min <= max)
        {
            return fail(format!(
                "time_limit: over-estimate factors need 1 ≤ min ≤ max, got {min} and {max}"
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
        for preset in [GpuMlParams::default(), GpuMlParams::heavy_tailed()] {
            let params = GpuMlParams {
                jobs: 300,
                seed: 3,
                ..preset
            };
            let first = params.generate().expect("valid");
            assert_eq!(first, params.generate().expect("valid"));
            let other = GpuMlParams { seed: 4, ..params }.generate().expect("valid");
            assert_ne!(first.jobs, other.jobs);
        }
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

    fn heavy_sample(seed: u64) -> Workload {
        GpuMlParams {
            jobs: 10_000,
            seed,
            ..GpuMlParams::heavy_tailed()
        }
        .generate()
        .expect("valid")
    }

    /// The share of the total of `amount` held by the 1% of jobs with the most of it.
    fn top_percent_share(workload: &Workload, amount: impl Fn(&TraceJob) -> f64) -> f64 {
        let mut amounts: Vec<f64> = workload.jobs.iter().map(amount).collect();
        amounts.sort_by(|a, b| b.total_cmp(a));
        let top: f64 = amounts[..amounts.len() / 100].iter().sum();
        top / amounts.iter().sum::<f64>()
    }

    #[test]
    fn heavy_tailed_run_times_have_the_pareto_shape() {
        let params = GpuMlParams::heavy_tailed();
        let RunTime::Pareto { shape, scale_ms } = params.run_time else {
            panic!("Pareto run times");
        };
        for seed in [1, 42] {
            let jobs = heavy_sample(seed).jobs;
            assert!(jobs.iter().all(|j| j.run_ms >= scale_ms));
            // The Hill estimator over the whole sample above the known minimum, i.e. the
            // maximum-likelihood shape, with the jobs clamped at run_max_ms as censored: they
            // add their log to the sum but not to the count.
            let clamped = jobs
                .iter()
                .filter(|j| j.run_ms == params.run_max_ms)
                .count();
            let logs: f64 = jobs
                .iter()
                .map(|j| (j.run_ms as f64 / scale_ms as f64).ln())
                .sum();
            let hill = (jobs.len() - clamped) as f64 / logs;
            assert!((hill - shape).abs() < 0.05, "seed {seed}: Hill {hill}");
            // (s/M)^α = 0.26% of the jobs reach the clamp.
            assert!(
                (10..=50).contains(&clamped),
                "seed {seed}: {clamped} clamped"
            );
            let mut runs: Vec<u64> = jobs.iter().map(|j| j.run_ms).collect();
            runs.sort_unstable();
            let median = runs[runs.len() / 2] as f64 / 60_000.0;
            assert!(
                (median / 53.45 - 1.0).abs() < 0.05,
                "seed {seed}: median {median} min"
            );
        }
    }

    #[test]
    fn heavy_tailed_time_sits_in_the_top_percent_of_jobs() {
        let run = |j: &TraceJob| j.run_ms as f64;
        let gpu_time = |j: &TraceJob| j.gpus_milli() as f64 * j.run_ms as f64;
        for seed in [1, 42] {
            let heavy = heavy_sample(seed);
            let light = GpuMlParams {
                jobs: 10_000,
                seed,
                ..GpuMlParams::default()
            }
            .generate()
            .expect("valid");
            // The longest 1% of the clamped Pareto hold 22.5% of the run time (the 1% beyond
            // q = s·100^(1/α) = 23.2 h: 0.01·q + s^α/(α − 1)·(q^(1−α) − M^(1−α)) over the clamped
            // mean); of the log-normal, 1 − Φ(2.326 − σ) = 13%.
            let heavy_run = top_percent_share(&heavy, run);
            let light_run = top_percent_share(&light, run);
            assert!(
                (0.19..0.26).contains(&heavy_run),
                "seed {seed}: top 1% hold {heavy_run} of the run time"
            );
            assert!(light_run < 0.16, "seed {seed}: log-normal {light_run}");
            // Same sizes (same seed), so the heavier tail alone moves the GPU-time share.
            let (heavy_gpu, light_gpu) = (
                top_percent_share(&heavy, gpu_time),
                top_percent_share(&light, gpu_time),
            );
            assert!(
                heavy_gpu > light_gpu && heavy_gpu > 0.28,
                "seed {seed}: top 1% hold {heavy_gpu} of the GPU-time, log-normal {light_gpu}"
            );
        }
    }

    #[test]
    fn heavy_tailed_limits_are_the_partition_maximum() {
        let workload = heavy_sample(7);
        let max = GpuMlParams::heavy_tailed().run_max_ms;
        assert_eq!(workload.max_time_ms, Some(max));
        assert!(workload.jobs.iter().all(|j| j.time_limit_ms == max));
        assert!(workload.jobs.iter().all(|j| j.run_ms <= max));
        let cluster = workload.cluster_config();
        assert_eq!(cluster.partitions.len(), 1);
        assert_eq!(cluster.partitions[0].max_time_ms, Some(max));
    }

    #[test]
    fn heavy_tailed_shares_arrivals_with_the_default() {
        let first = GpuMlParams {
            jobs: 500,
            seed: 11,
            ..GpuMlParams::heavy_tailed()
        }
        .generate()
        .expect("valid");
        let light = GpuMlParams {
            jobs: 500,
            seed: 11,
            ..GpuMlParams::default()
        }
        .generate()
        .expect("valid");
        assert_eq!(first.nodes, light.nodes);
        assert_eq!(first.accounts, light.accounts);
        for (heavy, light) in first.jobs.iter().zip(&light.jobs) {
            let same = |j: &TraceJob| (j.submit_ms, j.user.clone(), j.tasks, j.gpus_milli());
            assert_eq!(same(heavy), same(light));
        }
        assert_ne!(first.jobs, light.jobs);
    }

    #[test]
    fn offered_load_counts_the_clamped_pareto_mean() {
        let heavy = GpuMlParams::heavy_tailed();
        // α·s/(α − 1) = 3 h unclamped; the clamp at 72 h leaves
        // s·(1 + 5·(1 − (1/144)^0.2)) = 2.075 h.
        let mean_h = heavy.mean_run_ms() / 3_600_000.0;
        assert!((mean_h - 2.0747).abs() < 1e-3, "mean {mean_h} h");
        assert!((heavy.offered_load() - 0.9142).abs() < 1e-3);
        // The sample agrees, within what a shape-1.2 tail allows.
        let jobs = heavy_sample(42).jobs;
        let sample_h =
            jobs.iter().map(|j| j.run_ms as f64).sum::<f64>() / jobs.len() as f64 / 3_600_000.0;
        assert!(
            (sample_h / mean_h - 1.0).abs() < 0.15,
            "sample mean {sample_h} h"
        );
        // Shape 1: lo + s·ln(M/lo); a minimum above the scale is the lower end.
        let one = GpuMlParams {
            run_time: RunTime::Pareto {
                shape: 1.0,
                scale_ms: 60_000,
            },
            run_min_ms: 120_000,
            run_max_ms: 240_000,
            ..GpuMlParams::default()
        };
        assert!((one.mean_run_ms() - (120_000.0 + 60_000.0 * 2f64.ln())).abs() < 1e-6);
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
                    time_limit: TimeLimit::Overestimate { min: 0.5, max: 3.0 },
                    ..base.clone()
                },
                "time_limit",
            ),
            (
                GpuMlParams {
                    run_time: RunTime::Pareto {
                        shape: 0.0,
                        scale_ms: 1,
                    },
                    ..base.clone()
                },
                "run_time",
            ),
            (
                GpuMlParams {
                    run_time: RunTime::LogNormal {
                        median_ms: 0,
                        sigma: 1.0,
                    },
                    ..base.clone()
                },
                "run_time",
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
