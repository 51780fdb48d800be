//! When fair-share usage is forgotten outright: the `reset` period of the fair-share
//! configuration and the arithmetic of its boundaries.

use serde::{Deserialize, Serialize};

pub(crate) const DAY_MS: u64 = 86_400_000;
pub(crate) const WEEK_MS: u64 = 7 * DAY_MS;

/// When accumulated usage is forgotten outright, on top of the half-life decay (Slurm's
/// `PriorityUsageResetPeriod`).
///
/// Periods are counted in the scheduler's own clock, milliseconds from time 0 read as UTC:
/// `daily` resets at every multiple of 24 hours, `weekly` at every multiple of 7 days from time 0
/// (so a week starts on a Thursday if time 0 is the Unix epoch), `monthly` at the start of every
/// calendar month (UTC, proleptic Gregorian calendar).
///
/// ```
/// use gangway::config::ResetPeriod;
/// let reset: ResetPeriod = serde_json::from_str(r#""weekly""#).unwrap();
/// assert_eq!(reset, ResetPeriod::Weekly);
/// assert_eq!(ResetPeriod::default(), ResetPeriod::None);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResetPeriod {
    /// Never reset; usage only decays.
    #[default]
    None,
    /// Reset at every multiple of 24 hours.
    Daily,
    /// Reset at every multiple of 7 days.
    Weekly,
    /// Reset at the start of every calendar month (UTC).
    Monthly,
}

impl ResetPeriod {
    /// The index of the period holding `at_ms`; `None` when usage is never reset.
    pub(crate) fn period(self, at_ms: u64) -> Option<u64> {
        match self {
            ResetPeriod::None => None,
            ResetPeriod::Daily => Some(at_ms / DAY_MS),
            ResetPeriod::Weekly => Some(at_ms / WEEK_MS),
            ResetPeriod::Monthly => Some(month_index(at_ms / DAY_MS)),
        }
    }
}

/// `year · 12 + month − 1` of the UTC civil date `days` days after 1970-01-01 (the usual
/// era-based conversion from a day count to the proleptic Gregorian calendar).
pub(crate) fn month_index(days: u64) -> u64 {
    // Count days from 0000-03-01, so that the leap day ends each 400-year era's years.
    let from_march_0 = days + 719_468;
    let era = from_march_0 / 146_097;
    let day_of_era = from_march_0 % 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    // Months counted from March: 0 = March … 11 = February.
    let month_from_march = (5 * day_of_year + 2) / 153;
    let year = era * 400 + year_of_era + u64::from(month_from_march >= 10);
    let month0 = (month_from_march + 2) % 12;
    year * 12 + month0
}
