//! The usage ledger's arithmetic: a decaying accumulator per tree node.
//!
//! Each node keeps its usage as it was at its last update together with that time. Reading it
//! later multiplies by `2^(−Δt/half_life)`, which is exact: decaying over `a` then `b`
//! milliseconds equals decaying over `a + b` (up to floating-point rounding), so nothing needs a
//! periodic sweep and a node is only touched when it is charged or read.

use serde::{Deserialize, Serialize};

use crate::config::ResetPeriod;

/// How usage fades: the half-life and the optional reset period.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Decay {
    /// Usage halves every `half_life_ms`; 0 disables decay (Slurm's `PriorityDecayHalfLife=0`).
    pub(crate) half_life_ms: u64,
    /// When usage is forgotten outright.
    pub(crate) reset: ResetPeriod,
}

impl Decay {
    /// The value of `usage` at `now_ms`, without changing it. A time before the last update reads
    /// as the last update (usage never grows by going back in time).
    #[inline]
    pub(crate) fn read(&self, usage: &Usage, now_ms: u64) -> f64 {
        let now_ms = now_ms.max(usage.at_ms);
        if let Some(period) = self.reset.period(now_ms)
            && self.reset.period(usage.at_ms) != Some(period)
        {
            return 0.0;
        }
        if self.half_life_ms == 0 || now_ms == usage.at_ms {
            return usage.value;
        }
        let elapsed = (now_ms - usage.at_ms) as f64;
        let exponent = -elapsed / self.half_life_ms as f64;
        if exponent >= f64::MIN_EXP as f64 {
            return usage.value * exponent.exp2();
        }
        // Past about 1,021 half-lives the factor itself is subnormal and keeps only a few
        // bits: decayed in two halves, each factor normal, the usage keeps its precision for as
        // long as the result is a normal number.
        let half = (exponent / 2.0).exp2();
        usage.value * half * half
    }

    /// Brings `usage` to `now_ms` and adds `amount` there.
    #[inline]
    pub(crate) fn add(&self, usage: &mut Usage, amount: f64, now_ms: u64) {
        let now_ms = now_ms.max(usage.at_ms);
        usage.value = self.read(usage, now_ms) + amount;
        usage.at_ms = now_ms;
    }
}

/// A decaying accumulator: the usage as of `at_ms`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Usage {
    /// The usage at `at_ms`.
    pub(crate) value: f64,
    /// When `value` was last brought up to date.
    pub(crate) at_ms: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::reset::{DAY_MS, WEEK_MS, month_index};
    use proptest::prelude::*;

    const HOUR_MS: u64 = 3_600_000;

    fn decay(half_life_ms: u64) -> Decay {
        Decay {
            half_life_ms,
            reset: ResetPeriod::None,
        }
    }

    /// Equal within 1e-9 relative, or within a few of the smallest subnormal steps where the
    /// values themselves underflow the normal range (each rounding of a subnormal result may
    /// move it by half a step, whatever its size).
    fn close(a: f64, b: f64) -> bool {
        let smallest = f64::from_bits(1);
        (a - b).abs() <= 1e-9 * a.abs().max(b.abs()) + 32.0 * smallest
    }

    #[test]
    fn usage_halves_after_each_half_life() {
        let d = decay(WEEK_MS);
        let mut u = Usage::default();
        d.add(&mut u, 1000.0, 5);
        assert!(close(d.read(&u, 5 + WEEK_MS), 500.0));
        assert!(close(d.read(&u, 5 + 2 * WEEK_MS), 250.0));
        assert!(close(d.read(&u, 5 + WEEK_MS / 2), 1000.0 / 2f64.sqrt()));
    }

    #[test]
    fn reading_does_not_change_the_accumulator() {
        let d = decay(HOUR_MS);
        let mut u = Usage::default();
        d.add(&mut u, 8.0, 0);
        let before = u;
        assert!(close(d.read(&u, 3 * HOUR_MS), 1.0));
        assert_eq!(u, before);
    }

    #[test]
    fn usage_decayed_past_a_thousand_half_lives_keeps_its_precision() {
        // Over 1,045 half-lives the factor alone (2^-1045) is subnormal, with 29 bits left;
        // the decayed usage (about 1e-306) is a normal number, exact to the last bits. Found by
        // `decay_over_any_split_matches_one_step`: decayed once, it missed a split decay by
        // 4e-9 relative.
        let d = decay(391_680);
        let mut u = Usage::default();
        d.add(&mut u, 719_211_120.205_290_2, 34_078_582);
        let once = d.read(&u, 443_548_954);
        let mut split = u;
        d.add(&mut split, 0.0, 48_997_241);
        let twice = d.read(&split, 443_548_954);
        assert!(once > f64::MIN_POSITIVE);
        assert!((once - twice).abs() <= 1e-12 * once, "{once} {twice}");
    }

    #[test]
    fn zero_half_life_never_decays() {
        let d = decay(0);
        let mut u = Usage::default();
        d.add(&mut u, 7.0, 0);
        assert_eq!(d.read(&u, 1_000 * WEEK_MS), 7.0);
    }

    #[test]
    fn going_back_in_time_neither_grows_nor_rewinds() {
        let d = decay(HOUR_MS);
        let mut u = Usage::default();
        d.add(&mut u, 4.0, 2 * HOUR_MS);
        assert_eq!(d.read(&u, HOUR_MS), 4.0);
        d.add(&mut u, 1.0, HOUR_MS);
        assert_eq!(
            u,
            Usage {
                value: 5.0,
                at_ms: 2 * HOUR_MS
            }
        );
    }

    #[test]
    fn daily_reset_forgets_usage_from_before_midnight() {
        let d = Decay {
            half_life_ms: 0,
            reset: ResetPeriod::Daily,
        };
        let mut u = Usage::default();
        d.add(&mut u, 10.0, HOUR_MS);
        assert_eq!(d.read(&u, DAY_MS - 1), 10.0);
        assert_eq!(d.read(&u, DAY_MS), 0.0);
        d.add(&mut u, 3.0, DAY_MS + HOUR_MS);
        assert_eq!(d.read(&u, 2 * DAY_MS - 1), 3.0);
    }

    #[test]
    fn weekly_reset_counts_weeks_from_time_zero() {
        let d = Decay {
            half_life_ms: 0,
            reset: ResetPeriod::Weekly,
        };
        let mut u = Usage::default();
        d.add(&mut u, 10.0, 6 * DAY_MS);
        assert_eq!(d.read(&u, WEEK_MS - 1), 10.0);
        assert_eq!(d.read(&u, WEEK_MS), 0.0);
    }

    #[test]
    fn monthly_reset_follows_calendar_months() {
        // 1970-01-31 and 1970-02-01 (day 31).
        assert_eq!(month_index(30), 1970 * 12);
        assert_eq!(month_index(31), 1970 * 12 + 1);
        // 2024-02-29 is day 19782, 2024-03-01 is day 19783, 2000-12-31 is day 11322.
        assert_eq!(month_index(19_782), 2024 * 12 + 1);
        assert_eq!(month_index(19_783), 2024 * 12 + 2);
        assert_eq!(month_index(11_322), 2000 * 12 + 11);
        assert_eq!(month_index(11_323), 2001 * 12);
        let d = Decay {
            half_life_ms: 0,
            reset: ResetPeriod::Monthly,
        };
        let mut u = Usage::default();
        d.add(&mut u, 10.0, 20 * DAY_MS);
        assert_eq!(d.read(&u, 31 * DAY_MS - 1), 10.0);
        assert_eq!(d.read(&u, 31 * DAY_MS), 0.0);
    }

    #[test]
    fn month_index_survives_the_largest_time() {
        assert!(month_index(u64::MAX / DAY_MS) > 0);
    }

    proptest! {
        /// Decay exactness (issue 4): charging then decaying over any split of the same interval
        /// gives the same usage within 1e-9 relative.
        #[test]
        fn decay_over_any_split_matches_one_step(
            half_life in 1u64..=30 * DAY_MS,
            charges in prop::collection::vec((0u64..=10 * DAY_MS, 0.0f64..1e9), 1..8),
            touches in prop::collection::vec(0u64..=10 * DAY_MS, 0..16),
            end_extra in 0u64..=10 * DAY_MS,
        ) {
            let d = decay(half_life);
            let mut charges = charges;
            charges.sort_by_key(|&(at, _)| at);
            let end = charges.last().map_or(0, |&(at, _)| at) + end_extra;

            let mut direct = Usage::default();
            for &(at, amount) in &charges {
                d.add(&mut direct, amount, at);
            }

            // The same charges, with the interval cut at arbitrary extra points.
            let mut events: Vec<(u64, f64)> = charges.clone();
            events.extend(touches.iter().map(|&at| (at.min(end), 0.0)));
            events.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)));
            let mut split = Usage::default();
            for &(at, amount) in &events {
                d.add(&mut split, amount, at);
            }

            let (a, b) = (d.read(&direct, end), d.read(&split, end));
            prop_assert!(close(a, b), "direct {} split {}", a, b);
        }
    }
}
