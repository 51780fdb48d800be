//! The random variates the generators draw, on a seeded portable generator.

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};

/// The generators' random number generator: xoshiro256++, a fixed algorithm, seeded from a
/// `u64`, so that a seed gives the same workload on every run.
pub(crate) type Rng = Xoshiro256PlusPlus;

/// A generator seeded with `seed`.
pub(crate) fn seeded(seed: u64) -> Rng {
    Rng::seed_from_u64(seed)
}

/// Uniform in [0, 1).
pub(crate) fn uniform(rng: &mut Rng) -> f64 {
    rng.random::<f64>()
}

/// Uniform in (0, 1], safe to take the logarithm of.
fn open_uniform(rng: &mut Rng) -> f64 {
    1.0 - uniform(rng)
}

/// Standard normal, by the Box–Muller transform (one value of each pair).
pub(crate) fn standard_normal(rng: &mut Rng) -> f64 {
    let radius = (-2.0 * open_uniform(rng).ln()).sqrt();
    radius * (std::f64::consts::TAU * uniform(rng)).cos()
}

/// Exponential with the given mean.
pub(crate) fn exponential(rng: &mut Rng, mean: f64) -> f64 {
    -mean * open_uniform(rng).ln()
}

/// Pareto (type I) with the given shape α (> 0) and scale (the minimum, > 0), by inverse
/// transform: `P(X > x) = (scale / x)^α` for `x ≥ scale`, so `X = scale · U^(−1/α)` for `U`
/// uniform in (0, 1]. One uniform per draw.
pub(crate) fn pareto(rng: &mut Rng, shape: f64, scale: f64) -> f64 {
    scale * open_uniform(rng).powf(-1.0 / shape)
}

/// Gamma with the given shape (> 0) and scale, by Marsaglia and Tsang's method ("A simple method
/// for generating gamma variables", ACM TOMS 2000); shapes below 1 are boosted by a uniform
/// power.
pub(crate) fn gamma(rng: &mut Rng, shape: f64, scale: f64) -> f64 {
    if shape < 1.0 {
        let boost = open_uniform(rng).powf(1.0 / shape);
        return gamma(rng, shape + 1.0, scale) * boost;
    }
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = standard_normal(rng);
        let v = (1.0 + c * x).powi(3);
        if v <= 0.0 {
            continue;
        }
        let u = open_uniform(rng);
        if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
            return d * v * scale;
        }
    }
}

/// An index drawn with probability proportional to `weights` (non-negative, positive sum).
pub(crate) fn weighted_index(rng: &mut Rng, weights: &[f64]) -> usize {
    let total: f64 = weights.iter().sum();
    let mut target = uniform(rng) * total;
    for (index, weight) in weights.iter().enumerate() {
        if target < *weight {
            return index;
        }
        target -= weight;
    }
    weights.iter().rposition(|w| *w > 0.0).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mean_and_variance(samples: &[f64]) -> (f64, f64) {
        let n = samples.len() as f64;
        let mean = samples.iter().sum::<f64>() / n;
        let variance = samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
        (mean, variance)
    }

    #[test]
    fn same_seed_same_sequence() {
        let (mut a, mut b) = (seeded(7), seeded(7));
        let first: Vec<f64> = (0..5).map(|_| uniform(&mut a)).collect();
        let second: Vec<f64> = (0..5).map(|_| uniform(&mut b)).collect();
        assert_eq!(first, second);
        assert_ne!(
            first,
            (0..5).map(|_| uniform(&mut seeded(8))).collect::<Vec<_>>()
        );
    }

    #[test]
    fn normal_has_mean_zero_variance_one() {
        let mut rng = seeded(1);
        let samples: Vec<f64> = (0..50_000).map(|_| standard_normal(&mut rng)).collect();
        let (mean, variance) = mean_and_variance(&samples);
        assert!(mean.abs() < 0.02, "mean {mean}");
        assert!((variance - 1.0).abs() < 0.03, "variance {variance}");
    }

    #[test]
    fn gamma_has_mean_shape_scale_and_variance_shape_scale_squared() {
        let mut rng = seeded(2);
        for (shape, scale) in [(0.5, 2.0), (6.57, 0.823), (639.1, 0.0156)] {
            let samples: Vec<f64> = (0..50_000).map(|_| gamma(&mut rng, shape, scale)).collect();
            let (mean, variance) = mean_and_variance(&samples);
            let (want_mean, want_variance) = (shape * scale, shape * scale * scale);
            assert!(
                (mean / want_mean - 1.0).abs() < 0.02,
                "{shape}: mean {mean}"
            );
            assert!(
                (variance / want_variance - 1.0).abs() < 0.05,
                "{shape}: var {variance}"
            );
        }
    }

    #[test]
    fn exponential_has_its_mean() {
        let mut rng = seeded(3);
        let samples: Vec<f64> = (0..50_000).map(|_| exponential(&mut rng, 90.0)).collect();
        let (mean, _) = mean_and_variance(&samples);
        assert!((mean / 90.0 - 1.0).abs() < 0.02, "mean {mean}");
    }

    #[test]
    fn pareto_has_the_closed_form_median_and_tail() {
        let mut rng = seeded(5);
        let (shape, scale) = (1.2, 30.0);
        let mut samples: Vec<f64> = (0..100_000)
            .map(|_| pareto(&mut rng, shape, scale))
            .collect();
        assert!(samples.iter().all(|x| *x >= scale));
        samples.sort_by(f64::total_cmp);
        // Median: scale · 2^(1/α) = 53.45.
        let median = samples[samples.len() / 2];
        let want = scale * 2f64.powf(1.0 / shape);
        assert!(
            (median / want - 1.0).abs() < 0.02,
            "median {median}, want {want}"
        );
        // Tail: P(X > k · scale) = k^(−α): 6.31% beyond 10 · scale, 0.40% beyond 100 · scale.
        for k in [10.0, 100.0] {
            let beyond = samples.iter().filter(|x| **x > k * scale).count();
            let share = beyond as f64 / samples.len() as f64;
            let want = f64::powf(k, -shape);
            assert!(
                (share / want - 1.0).abs() < 0.1,
                "beyond {k}: {share}, want {want}"
            );
        }
    }

    #[test]
    fn weighted_index_follows_weights() {
        let mut rng = seeded(4);
        let mut counts = [0u32; 3];
        for _ in 0..30_000 {
            counts[weighted_index(&mut rng, &[1.0, 0.0, 3.0])] += 1;
        }
        assert_eq!(counts[1], 0);
        let share = f64::from(counts[0]) / 30_000.0;
        assert!((share - 0.25).abs() < 0.015, "share {share}");
    }
}
