//! The Lublin–Feitelson model of rigid parallel jobs: U. Lublin and D. G. Feitelson, "The
//! workload on parallel supercomputers: modeling the characteristics of rigid jobs", Journal of
//! Parallel and Distributed Computing 63(11), 2003.
//!
//! Jobs come in two classes, batch and interactive, each with its own arrival stream; the next
//! job is of the class whose next arrival comes first. For each job:
//!
//! - **size** (processors): serial (1) with probability `serial`; otherwise `x` is drawn from a
//!   two-stage uniform distribution on log2 sizes — uniform on `[low, med]` with probability
//!   `uprob`, else uniform on `[med, hi]` — rounded to an integer (a power-of-two size) when the
//!   same uniform draw that rejected "serial" is below `serial + pow2`, and the size is
//!   `round(2^x)`, at most the machine;
//! - **run time**: `ln(run time in s)` follows a hyper-gamma distribution, gamma(a1, b1) with
//!   probability `p = pa · size + pb` (clamped to [0, 1]) and gamma(a2, b2) otherwise, so wider
//!   jobs run longer; values above 12 (about 45 hours) are drawn again; the run time is
//!   `exp(value)` truncated to whole seconds, at least one second;
//! - **arrivals**: `ln(inter-arrival in s)` follows gamma(aarr · arar, barr) (values above 13 drawn
//!   again); the inter-arrival time is then spread over the day's 48 half-hour slots in proportion
//!   to a daily-cycle weight, so that jobs arrive more often at the day's peak. Slot `s` (from
//!   midnight) weighs the mass of gamma(anum, bnum) on `[i − 0.5, i + 0.5]` with `i = s + 1`
//!   (`s + 49` for the first ten slots: the model's day runs from slot 11 to slot 58), the weights
//!   normalised to mean 1; a wait of `t` seconds starting in a slot of weight `w` consumes `w · t`
//!   seconds' worth of the drawn inter-arrival time.
//!
//! The parameters are the published fit (the model's reference implementation, with both job
//! classes), for a machine of 128 nodes:
//!
//! | class | serial | pow2 | low | med | hi | uprob | a1 | b1 | a2 | b2 | pa | pb | aarr | barr | anum | bnum | arar |
//! |---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
//! | batch | 0.2927 | 0.6686 | 1.2 | 5 | 7 | 0.875 | 6.57 | 0.823 | 639.1 | 0.0156 | −0.003 | 0.6986 | 6.0415 | 0.8531 | 6.1271 | 5.2740 | 1.0519 |
//! | interactive | 0.1541 | 0.625 | 1 | 3 | 5.5 | 0.705 | 3.8351 | 0.6605 | 7.073 | 0.6856 | −0.0118 | 0.9156 | 6.5510 | 0.6621 | 8.9186 | 3.6680 | 0.9797 |
//!
//! For a machine of `N` nodes, `hi` and `med` move with `log2 N` (batch: `hi = log2 N`,
//! `med = log2 N − 2`; interactive: `hi = log2 N − 1.5`, `med = log2 N − 4`; each at least the
//! stage below it). The arrival rate is the published one unless [`LublinParams::interarrival_scale`]
//! changes it; since the fit describes a 128-node machine, a scale of about `128 / N` keeps the
//! load of a machine of `N` nodes near the original.
//!
//! The workload's machine is `N` one-cpu nodes; a job of `p` processors is a gang of `p` one-cpu
//! tasks placed spread (as the SWF reader makes them), its time limit is its run time (the model
//! has no requested times), and its id is its sequence number from 1.
//!
//! ```
//! use gangway_sim::workload::lublin::LublinParams;
//! let workload = LublinParams { jobs: 100, seed: 3, ..LublinParams::default() }.generate().unwrap();
//! assert_eq!(workload.jobs.len(), 100);
//! assert_eq!(workload.nodes.len(), 128);
//! assert!(workload.jobs.iter().all(|j| (1..=128).contains(&j.tasks)));
//! ```

use super::dist::{self, Rng};
use super::record::cpu_nodes;
use super::{MAX_NODES, ParamError, SkipCounts, TraceJob, Workload};

/// Seconds in one slot of the daily cycle.
const SLOT_S: f64 = 1800.0;
/// Slots in a day.
const SLOTS: usize = 48;
/// Longest `ln(run time)` kept.
const MAX_LN_RUN: f64 = 12.0;
/// Longest `ln(inter-arrival time)` kept.
const MAX_LN_INTERARRIVAL: f64 = 13.0;

/// Parameters of the Lublin–Feitelson generator. The model's own parameters are fixed (see the
/// module documentation); these choose the sample.
///
/// ```
/// use gangway_sim::workload::lublin::LublinParams;
/// let params = LublinParams::default();
/// assert_eq!((params.jobs, params.machine_nodes, params.interarrival_scale), (10_000, 128, 1.0));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct LublinParams {
    /// Seed of the random number generator. Default 1.
    pub seed: u64,
    /// Number of jobs. Default 10,000.
    pub jobs: usize,
    /// Nodes (one cpu each) of the machine, at least 1. Default 128, the size the model was fit
    /// for.
    pub machine_nodes: u32,
    /// Factor on every inter-arrival time (below 1: more load). Default 1.
    pub interarrival_scale: f64,
}

impl Default for LublinParams {
    fn default() -> Self {
        LublinParams {
            seed: 1,
            jobs: 10_000,
            machine_nodes: 128,
            interarrival_scale: 1.0,
        }
    }
}

impl LublinParams {
    /// Draws the workload; the same parameters give the same workload.
    ///
    /// ```
    /// use gangway_sim::workload::lublin::LublinParams;
    /// let params = LublinParams { jobs: 50, ..LublinParams::default() };
    /// assert_eq!(params.generate().unwrap(), params.generate().unwrap());
    /// ```
    pub fn generate(&self) -> Result<Workload, ParamError> {
        self.validate()?;
        let mut rng = dist::seeded(self.seed);
        let log2_nodes = f64::from(self.machine_nodes).log2();
        let classes = [Class::batch(log2_nodes), Class::interactive(log2_nodes)];
        let mut streams = classes.each_ref().map(Stream::new);
        for (stream, class) in streams.iter_mut().zip(&classes) {
            stream.advance(&mut rng, class, self.interarrival_scale);
        }
        let mut jobs = Vec::new();
        for index in 0..self.jobs {
            let which = usize::from(streams[0].next_s >= streams[1].next_s);
            let class = &classes[which];
            let submit_s = streams[which].next_s;
            streams[which].advance(&mut rng, class, self.interarrival_scale);
            let tasks = class.size(&mut rng, self.machine_nodes);
            let run_ms = class.run_s(&mut rng, tasks).saturating_mul(1000);
            jobs.push(TraceJob::one_cpu_tasks(
                (index + 1).to_string(),
                (submit_s * 1000.0).round() as u64,
                run_ms,
                run_ms,
                tasks,
            ));
        }
        Ok(Workload {
            nodes: cpu_nodes(u64::from(self.machine_nodes), 1),
            jobs,
            accounts: Vec::new(),
            skipped: SkipCounts::default(),
            max_time_ms: None,
        })
    }

    fn validate(&self) -> Result<(), ParamError> {
        if self.machine_nodes == 0 || u64::from(self.machine_nodes) > MAX_NODES {
            return Err(ParamError(format!(
                "machine_nodes: {} is not in 1..={MAX_NODES}",
                self.machine_nodes
            )));
        }
        if !(self.interarrival_scale.is_finite() && self.interarrival_scale > 0.0) {
            return Err(ParamError(format!(
                "interarrival_scale: {} is not a positive number",
                self.interarrival_scale
            )));
        }
        Ok(())
    }
}

/// The model's parameters for one job class.
struct Class {
    serial: f64,
    pow2: f64,
    low: f64,
    med: f64,
    hi: f64,
    uprob: f64,
    a1: f64,
    b1: f64,
    a2: f64,
    b2: f64,
    pa: f64,
    pb: f64,
    arrival_shape: f64,
    arrival_scale: f64,
    day_shape: f64,
    day_scale: f64,
}

impl Class {
    fn batch(log2_nodes: f64) -> Class {
        let (hi, med) = (log2_nodes, log2_nodes - 2.0);
        Class {
            serial: 0.2927,
            pow2: 0.6686,
            low: 1.2,
            med: med.max(1.2),
            hi: hi.max(med).max(1.2),
            uprob: 0.875,
            a1: 6.57,
            b1: 0.823,
            a2: 639.1,
            b2: 0.0156,
            pa: -0.003,
            pb: 0.6986,
            arrival_shape: 6.0415 * 1.0519,
            arrival_scale: 0.8531,
            day_shape: 6.1271,
            day_scale: 5.2740,
        }
    }

    fn interactive(log2_nodes: f64) -> Class {
        let (hi, med) = (log2_nodes - 1.5, log2_nodes - 4.0);
        Class {
            serial: 0.1541,
            pow2: 0.625,
            low: 1.0,
            med: med.max(1.0),
            hi: hi.max(med).max(1.0),
            uprob: 0.705,
            a1: 3.8351,
            b1: 0.6605,
            a2: 7.073,
            b2: 0.6856,
            pa: -0.0118,
            pb: 0.9156,
            arrival_shape: 6.5510 * 0.9797,
            arrival_scale: 0.6621,
            day_shape: 8.9186,
            day_scale: 3.6680,
        }
    }

    fn size(&self, rng: &mut Rng, machine_nodes: u32) -> u32 {
        let u = dist::uniform(rng);
        if u <= self.serial {
            return 1;
        }
        let (from, to) = if dist::uniform(rng) <= self.uprob {
            (self.low, self.med)
        } else {
            (self.med, self.hi)
        };
        let mut log2_size = from + dist::uniform(rng) * (to - from);
        if u <= self.serial + self.pow2 {
            log2_size = log2_size.round();
        }
        let size = 2f64.powf(log2_size).round();
        (size as u32).clamp(1, machine_nodes)
    }

    fn run_s(&self, rng: &mut Rng, size: u32) -> u64 {
        let p = (self.pa * f64::from(size) + self.pb).clamp(0.0, 1.0);
        let (shape, scale) = if dist::uniform(rng) <= p {
            (self.a1, self.b1)
        } else {
            (self.a2, self.b2)
        };
        let ln_run = loop {
            let value = dist::gamma(rng, shape, scale);
            if value <= MAX_LN_RUN {
                break value;
            }
        };
        (ln_run.exp() as u64).max(1)
    }
}

/// One class's arrival stream.
struct Stream {
    /// The class's next arrival, in seconds from the start.
    next_s: f64,
    /// The daily-cycle weight of each half-hour slot (mean 1).
    weights: [f64; SLOTS],
}

impl Stream {
    fn new(class: &Class) -> Stream {
        let mut weights = [0.0; SLOTS];
        for (slot, weight) in weights.iter_mut().enumerate() {
            let centre = if slot >= 10 {
                slot + 1
            } else {
                slot + 1 + SLOTS
            } as f64;
            *weight = gamma_mass(class.day_shape, class.day_scale, centre - 0.5, centre + 0.5);
        }
        let mean = weights.iter().sum::<f64>() / SLOTS as f64;
        for weight in &mut weights {
            *weight /= mean;
        }
        Stream {
            next_s: 0.0,
            weights,
        }
    }

    /// Moves `next_s` on by one drawn inter-arrival time, spread over the daily cycle.
    fn advance(&mut self, rng: &mut Rng, class: &Class, interarrival_scale: f64) {
        let ln_gap = loop {
            let value = dist::gamma(rng, class.arrival_shape, class.arrival_scale);
            if value <= MAX_LN_INTERARRIVAL {
                break value;
            }
        };
        let mut budget = ln_gap.exp() * interarrival_scale;
        loop {
            let slot_index = (self.next_s / SLOT_S).floor();
            let weight = self.weights[(slot_index as u64 % SLOTS as u64) as usize];
            let slot_end = (slot_index + 1.0) * SLOT_S;
            let cost = (slot_end - self.next_s) * weight;
            if budget < cost {
                self.next_s += budget / weight;
                return;
            }
            budget -= cost;
            self.next_s = slot_end;
        }
    }
}

/// The mass of gamma(shape, scale) on `[from, to]` up to a constant factor (the weights are
/// normalised afterwards), by Simpson's rule on the density `x^(shape-1) e^(-x/scale)`.
fn gamma_mass(shape: f64, scale: f64, from: f64, to: f64) -> f64 {
    const STEPS: usize = 32;
    let density = |x: f64| ((shape - 1.0) * x.ln() - x / scale).exp();
    let h = (to - from) / STEPS as f64;
    let inner: f64 = (1..STEPS)
        .map(|k| {
            let factor = if k % 2 == 1 { 4.0 } else { 2.0 };
            factor * density(from + h * k as f64)
        })
        .sum();
    (density(from) + inner + density(to)) * h / 3.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Workload {
        LublinParams {
            jobs: 10_000,
            seed: 11,
            ..LublinParams::default()
        }
        .generate()
        .expect("valid parameters")
    }

    #[test]
    fn same_seed_same_jobs_other_seed_other_jobs() {
        let params = LublinParams {
            jobs: 500,
            seed: 5,
            ..LublinParams::default()
        };
        let first = params.generate().expect("valid");
        assert_eq!(first, params.generate().expect("valid"));
        let other = LublinParams { seed: 6, ..params }
            .generate()
            .expect("valid");
        assert_ne!(first.jobs, other.jobs);
    }

    #[test]
    fn sizes_follow_the_serial_and_power_of_two_shares() {
        let jobs = sample().jobs;
        let n = jobs.len() as f64;
        let serial = jobs.iter().filter(|j| j.tasks == 1).count() as f64 / n;
        let pow2 = jobs
            .iter()
            .filter(|j| j.tasks > 1 && j.tasks.is_power_of_two())
            .count() as f64
            / n;
        // Mixed over both classes the serial share lies between the classes' 0.1541 and 0.2927,
        // and powers of two (drawn with 0.625..0.6686, plus non-rounded sizes that happen to be
        // one) are the majority of parallel jobs.
        assert!((0.15..0.22).contains(&serial), "serial share {serial}");
        assert!((0.63..0.75).contains(&pow2), "power-of-two share {pow2}");
        assert!(jobs.iter().all(|j| (1..=128).contains(&j.tasks)));
        assert!(jobs.iter().any(|j| j.tasks == 128));
    }

    #[test]
    fn run_times_grow_with_size_and_stay_bounded() {
        let jobs = sample().jobs;
        let mean_ln = |keep: &dyn Fn(u32) -> bool| {
            let chosen: Vec<f64> = jobs
                .iter()
                .filter(|j| keep(j.tasks))
                .map(|j| (j.run_ms as f64 / 1000.0).ln())
                .collect();
            chosen.iter().sum::<f64>() / chosen.len() as f64
        };
        let serial = mean_ln(&|tasks| tasks == 1);
        let wide = mean_ln(&|tasks| tasks >= 32);
        assert!(wide > serial, "wide {wide} serial {serial}");
        let longest = (MAX_LN_RUN.exp() as u64 + 1) * 1000;
        assert!(jobs.iter().all(|j| (1000..=longest).contains(&j.run_ms)));
        assert!(jobs.iter().all(|j| j.time_limit_ms == j.run_ms));
    }

    #[test]
    fn arrivals_are_ordered_and_follow_a_daily_cycle() {
        let jobs = sample().jobs;
        assert!(jobs.windows(2).all(|w| w[0].submit_ms <= w[1].submit_ms));
        let mut per_hour = [0u32; 24];
        for job in &jobs {
            per_hour[((job.submit_ms / 3_600_000) % 24) as usize] += 1;
        }
        let day: u32 = per_hour[10..16].iter().sum();
        let night: u32 = per_hour[1..7].iter().sum();
        assert!(day > 3 * night, "day {day} night {night}");
    }

    #[test]
    fn interarrival_scale_stretches_the_span() {
        let base = LublinParams {
            jobs: 2000,
            ..LublinParams::default()
        };
        let span = |w: Workload| w.jobs.last().map_or(0, |j| j.submit_ms) as f64;
        let normal = span(base.generate().expect("valid"));
        let slow = span(
            LublinParams {
                interarrival_scale: 2.0,
                ..base
            }
            .generate()
            .expect("valid"),
        );
        assert!((slow / normal - 2.0).abs() < 0.1, "ratio {}", slow / normal);
    }

    #[test]
    fn small_machines_clamp_sizes() {
        let workload = LublinParams {
            jobs: 2000,
            machine_nodes: 4,
            ..LublinParams::default()
        }
        .generate()
        .expect("valid");
        assert_eq!(workload.nodes.len(), 4);
        assert!(workload.jobs.iter().all(|j| (1..=4).contains(&j.tasks)));
    }

    #[test]
    fn invalid_parameters_are_errors() {
        let bad = LublinParams {
            interarrival_scale: f64::NAN,
            ..LublinParams::default()
        };
        assert!(
            bad.generate()
                .unwrap_err()
                .to_string()
                .contains("interarrival_scale")
        );
        let bad = LublinParams {
            machine_nodes: 0,
            ..LublinParams::default()
        };
        assert!(
            bad.generate()
                .unwrap_err()
                .to_string()
                .contains("machine_nodes")
        );
    }

    #[test]
    fn day_weights_have_mean_one_and_peak_in_the_afternoon() {
        let stream = Stream::new(&Class::batch(7.0));
        let mean = stream.weights.iter().sum::<f64>() / SLOTS as f64;
        assert!((mean - 1.0).abs() < 1e-9);
        let peak = stream
            .weights
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .map(|(slot, _)| slot)
            .expect("48 slots");
        assert!((20..36).contains(&peak), "peak slot {peak}");
    }
}
