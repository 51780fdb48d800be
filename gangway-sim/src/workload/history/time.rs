//! The times of a history: ISO 8601 stamps, epoch seconds, Slurm durations and fixed UTC
//! offsets, all turned into *local seconds*: seconds since 1970-01-01 00:00 on the wall clock
//! of the history's zone, so that the hour of the day and the day of the week are those the
//! team lived.

/// Seconds in a day.
const DAY_S: i64 = 86_400;

/// A fixed offset from UTC, in seconds east of Greenwich: the zone a history's local times
/// were printed in.
///
/// Parsed from `Z`, `UTC`, `±HH`, `±HH:MM` or `±HHMM` (at most ±18:00).
///
/// ```
/// use gangway_sim::workload::history::UtcOffset;
/// assert_eq!("+02:00".parse::<UtcOffset>().unwrap().seconds(), 7_200);
/// assert_eq!("-0530".parse::<UtcOffset>().unwrap().seconds(), -19_800);
/// assert_eq!("Z".parse::<UtcOffset>().unwrap(), UtcOffset::UTC);
/// assert!("+25:00".parse::<UtcOffset>().is_err());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct UtcOffset(i32);

impl UtcOffset {
    /// UTC itself.
    pub const UTC: UtcOffset = UtcOffset(0);

    /// The offset of `seconds` east of UTC, `None` beyond ±18 hours.
    ///
    /// ```
    /// use gangway_sim::workload::history::UtcOffset;
    /// assert_eq!(UtcOffset::from_seconds(3_600).unwrap().to_string(), "+01:00");
    /// assert!(UtcOffset::from_seconds(19 * 3_600).is_none());
    /// ```
    pub fn from_seconds(seconds: i32) -> Option<UtcOffset> {
        (seconds.abs() <= 18 * 3_600).then_some(UtcOffset(seconds))
    }

    /// Seconds east of UTC.
    pub fn seconds(self) -> i32 {
        self.0
    }
}

impl std::fmt::Display for UtcOffset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sign = if self.0 < 0 { '-' } else { '+' };
        let minutes = self.0.unsigned_abs() / 60;
        write!(f, "{sign}{:02}:{:02}", minutes / 60, minutes % 60)
    }
}

impl std::str::FromStr for UtcOffset {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || format!("{text:?} is not a UTC offset (Z, UTC, +HH, +HH:MM or -HHMM)");
        if text == "Z" || text.eq_ignore_ascii_case("utc") {
            return Ok(UtcOffset::UTC);
        }
        offset_seconds(text)
            .and_then(UtcOffset::from_seconds)
            .ok_or_else(bad)
    }
}

/// `±HH`, `±HH:MM` or `±HHMM` in seconds (the sign is required).
fn offset_seconds(text: &str) -> Option<i32> {
    let sign = match text.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let rest = &text[1..];
    let (hours, minutes) = match (rest.len(), rest.split_once(':')) {
        (_, Some((h, m))) => (h, m),
        (2, None) => (rest, "00"),
        (4, None) => rest.split_at(2),
        _ => return None,
    };
    if hours.len() != 2 || minutes.len() != 2 {
        return None;
    }
    let hours: i32 = digits(hours)?;
    let minutes: i32 = digits(minutes)?;
    (minutes < 60).then_some(sign * (hours * 3_600 + minutes * 60))
}

/// A string of ASCII digits only (no sign, no spaces) as a number.
fn digits<T: std::str::FromStr>(text: &str) -> Option<T> {
    (!text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| text.parse().ok())
        .flatten()
}

/// An ISO 8601 stamp, `YYYY-MM-DDTHH:MM[:SS[.fraction]]` (a space may stand for the `T`) with an
/// optional zone (`Z`, `±HH:MM`, `±HHMM`, `±HH`), in local seconds of `zone`: a stamp without a
/// zone is taken as printed, one with a zone is moved into `zone`. Fractions of a second are
/// dropped. `None` when the text is not such a stamp or not a real date.
pub(super) fn iso_local_seconds(text: &str, zone: UtcOffset) -> Option<i64> {
    let (date, rest) = text.split_at_checked(10)?;
    let rest = rest.strip_prefix(['T', ' '])?;
    let civil = civil_seconds(date)?;
    let (clock, offset) = split_zone(rest)?;
    let of_day = clock_seconds(clock)?;
    let printed = civil + of_day;
    Some(match offset {
        None => printed,
        Some(offset) => printed - i64::from(offset) + i64::from(zone.seconds()),
    })
}

/// Epoch seconds (UTC) in local seconds of `zone`.
pub(super) fn epoch_local_seconds(epoch: i64, zone: UtcOffset) -> i64 {
    epoch + i64::from(zone.seconds())
}

/// `YYYY-MM-DD` as seconds from 1970-01-01.
fn civil_seconds(date: &str) -> Option<i64> {
    let mut parts = date.split('-');
    let (year, month, day) = (parts.next()?, parts.next()?, parts.next()?);
    if year.len() != 4 || month.len() != 2 || day.len() != 2 {
        return None;
    }
    let (year, month, day): (i64, u32, u32) = (digits(year)?, digits(month)?, digits(day)?);
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return None;
    }
    Some(days_from_civil(year, month, day) * DAY_S)
}

/// The time of day and the zone's offset in seconds (`None`: no zone given).
fn split_zone(text: &str) -> Option<(&str, Option<i32>)> {
    if let Some(clock) = text.strip_suffix('Z') {
        return Some((clock, Some(0)));
    }
    match text.find(['+', '-']) {
        Some(at) => Some((&text[..at], Some(offset_seconds(&text[at..])?))),
        None => Some((text, None)),
    }
}

/// `HH:MM[:SS[.fraction]]` as seconds of the day.
fn clock_seconds(clock: &str) -> Option<i64> {
    let whole = match clock.split_once(['.', ',']) {
        Some((whole, fraction)) => {
            digits::<u64>(fraction)?;
            whole
        }
        None => clock,
    };
    let mut parts = whole.split(':');
    let hours: i64 = two_digits(parts.next()?)?;
    let minutes: i64 = two_digits(parts.next()?)?;
    let seconds: i64 = parts.next().map_or(Some(0), two_digits)?;
    if parts.next().is_some() || hours > 23 || minutes > 59 || seconds > 60 {
        return None;
    }
    Some(hours * 3_600 + minutes * 60 + seconds)
}

fn two_digits(text: &str) -> Option<i64> {
    (text.len() == 2).then(|| digits(text)).flatten()
}

fn is_leap(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to the proleptic Gregorian date (H. Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month = i64::from(month);
    let shifted_month = if month > 2 { month - 3 } else { month + 9 };
    let day_of_year = (153 * shifted_month + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// Midnight starting the Monday of the week of `local` (local seconds): a history's time 0,
/// so that simulated time keeps the weekday and the hour.
pub(super) fn monday_before(local: i64) -> i64 {
    let days = local.div_euclid(DAY_S);
    // 1970-01-01 was a Thursday, three days after a Monday.
    let weekday = (days + 3).rem_euclid(7);
    (days - weekday) * DAY_S
}

/// A Slurm duration in seconds: `MM`, `MM:SS`, `HH:MM:SS`, `D-HH`, `D-HH:MM` or `D-HH:MM:SS`
/// (as `sacct` prints `Timelimit` and `sbatch --time` reads it). `None` when malformed.
pub(super) fn slurm_duration_seconds(text: &str) -> Option<u64> {
    let number = |part: &str| digits::<u64>(part);
    let (days, clock) = match text.split_once('-') {
        Some((days, clock)) => (Some(number(days)?), clock),
        None => (None, text),
    };
    let parts: Vec<u64> = clock.split(':').map(number).collect::<Option<_>>()?;
    let (hours, minutes, seconds) = match (days.is_some(), parts.as_slice()) {
        (false, [m]) => (0, *m, 0),
        (false, [m, s]) => (0, *m, *s),
        (_, [h, m, s]) => (*h, *m, *s),
        (true, [h]) => (*h, 0, 0),
        (true, [h, m]) => (*h, *m, 0),
        _ => return None,
    };
    let total = days
        .unwrap_or(0)
        .checked_mul(24)?
        .checked_add(hours)?
        .checked_mul(60)?
        .checked_add(minutes)?
        .checked_mul(60)?
        .checked_add(seconds)?;
    Some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLUS_TWO: UtcOffset = UtcOffset(7_200);

    #[test]
    fn civil_dates_count_days_from_the_epoch() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(days_from_civil(2024, 2, 29), 19_782);
        assert_eq!(days_from_civil(1969, 12, 31), -1);
        assert!(civil_seconds("2023-02-29").is_none());
        assert!(civil_seconds("2024-13-01").is_none());
        assert!(civil_seconds("24-01-01xx").is_none());
    }

    #[test]
    fn stamps_without_a_zone_are_taken_as_printed() {
        // 2024-03-04 is a Monday: 19,786 days after the epoch.
        let monday = 19_786 * DAY_S;
        assert_eq!(
            iso_local_seconds("2024-03-04T09:15:02", PLUS_TWO),
            Some(monday + 9 * 3_600 + 15 * 60 + 2)
        );
        assert_eq!(
            iso_local_seconds("2024-03-04 09:15", UtcOffset::UTC),
            Some(monday + 9 * 3_600 + 15 * 60)
        );
        assert_eq!(
            iso_local_seconds("2024-03-04T09:15:02.750", UtcOffset::UTC),
            Some(monday + 9 * 3_600 + 15 * 60 + 2)
        );
    }

    #[test]
    fn stamps_with_a_zone_move_into_the_history_zone() {
        let monday = 19_786 * DAY_S;
        assert_eq!(
            iso_local_seconds("2024-03-04T07:00:00Z", PLUS_TWO),
            Some(monday + 9 * 3_600)
        );
        assert_eq!(
            iso_local_seconds("2024-03-04T10:00:00+03:00", PLUS_TWO),
            Some(monday + 9 * 3_600)
        );
        assert_eq!(
            iso_local_seconds("2024-03-04T02:00:00-0500", PLUS_TWO),
            Some(monday + 9 * 3_600)
        );
        assert_eq!(
            epoch_local_seconds(monday + 7 * 3_600, PLUS_TWO),
            monday + 9 * 3_600
        );
    }

    #[test]
    fn malformed_stamps_are_refused() {
        for text in [
            "",
            "2024-03-04",
            "2024-03-04T25:00:00",
            "2024-03-04T09:60",
            "2024-03-04X09:00",
            "2024-03-04T09:00:00+2:00",
            "2024-03-04T9:00",
            "Unknown",
            "2024-03-04T09:00:00:00",
        ] {
            assert_eq!(iso_local_seconds(text, UtcOffset::UTC), None, "{text}");
        }
    }

    #[test]
    fn weeks_start_on_monday_midnight() {
        let monday = 19_786 * DAY_S;
        assert_eq!(monday_before(monday), monday);
        assert_eq!(monday_before(monday + 6 * DAY_S + 86_399), monday);
        assert_eq!(monday_before(monday - 1), monday - 7 * DAY_S);
        // 1970-01-01 (Thursday) belongs to the week of Monday 1969-12-29.
        assert_eq!(monday_before(0), -3 * DAY_S);
    }

    #[test]
    fn slurm_durations_in_every_form() {
        assert_eq!(slurm_duration_seconds("30"), Some(1_800));
        assert_eq!(slurm_duration_seconds("30:15"), Some(1_815));
        assert_eq!(slurm_duration_seconds("02:00:00"), Some(7_200));
        assert_eq!(slurm_duration_seconds("1-00"), Some(86_400));
        assert_eq!(slurm_duration_seconds("1-02:30"), Some(95_400));
        assert_eq!(slurm_duration_seconds("3-00:00:00"), Some(259_200));
        for bad in ["", "UNLIMITED", "1-", "1:2:3:4", "-1", "1-2-3", "x:00"] {
            assert_eq!(slurm_duration_seconds(bad), None, "{bad}");
        }
    }

    #[test]
    fn offsets_parse_and_print() {
        assert_eq!("+05:30".parse::<UtcOffset>(), Ok(UtcOffset(19_800)));
        assert_eq!("-08".parse::<UtcOffset>(), Ok(UtcOffset(-28_800)));
        assert_eq!("utc".parse::<UtcOffset>(), Ok(UtcOffset::UTC));
        for bad in ["", "2", "+2", "+02:5", "+02:60", "+19:00", "02:00"] {
            assert!(bad.parse::<UtcOffset>().is_err(), "{bad}");
        }
        assert_eq!(UtcOffset(-19_800).to_string(), "-05:30");
    }
}
