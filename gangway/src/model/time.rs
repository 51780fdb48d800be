//! The range of every time and duration: whole milliseconds from 0 to [`MAX_MS`], 2^53 − 1
//! (about 285,000 years), which a double holds exactly, so that a JavaScript or Python host
//! reads every time on the wire as it was sent. Sums of a time and a duration then stay far
//! below `u64::MAX`: nothing saturates or wraps.
//!
//! A value beyond it is refused where it comes in, naming its field, and changes nothing: a
//! tick's `at_ms` refuses the tick ([`crate::error::TickError::TimeOutOfRange`]); an event's
//! field rejects that event (`invalid`); a CLUSTER's field refuses the configuration
//! (`invalid_config`); a snapshot's refuses the restore (docs/protocol.md, "Times").
//!
//! A time the engine computes beyond it (a sum of a time and a duration, a plug-in's
//! wake-up) is one no tick can reach: it is reported as none ([`reported`]), and a start
//! beyond it is not planned.

/// The latest time and the longest duration, in milliseconds: 2^53 − 1.
pub(crate) const MAX_MS: u64 = (1 << 53) - 1;

/// `value`, the time or duration of `field` in milliseconds, when it lies in the range; the
/// message naming the field otherwise.
pub(crate) fn in_range(field: &str, value: u64) -> Result<u64, String> {
    if value <= MAX_MS {
        Ok(value)
    } else {
        Err(format!("{field}: {}", beyond(value)))
    }
}

/// What is wrong with `value`, a time beyond the range: `"… is beyond the time range (at
/// most 9007199254740991 ms, 2^53 - 1)"`.
pub(crate) fn beyond(value: impl std::fmt::Display) -> String {
    format!("{value} is beyond the time range (at most {MAX_MS} ms, 2^53 - 1)")
}

/// [`in_range`] for an optional field (`None` is in range).
pub(crate) fn in_range_opt(field: &str, value: Option<u64>) -> Result<(), String> {
    value.map_or(Ok(()), |v| in_range(field, v).map(|_| ()))
}

/// A time the engine computed itself (a sum of a time and a duration, or a plug-in's wake-up),
/// as it is reported: `None` beyond the range, where no tick can reach it (a later `at_ms` is
/// refused), so that it cannot come due.
pub(crate) fn reported(time: Option<u64>) -> Option<u64> {
    time.filter(|&t| t <= MAX_MS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_beyond_the_range_is_reported_as_none() {
        assert_eq!(reported(Some(MAX_MS)), Some(MAX_MS));
        assert_eq!(reported(Some(MAX_MS + 1)), None);
        assert_eq!(reported(Some(u64::MAX)), None);
    }

    #[test]
    fn the_range_ends_at_2_pow_53_minus_1() {
        assert_eq!(MAX_MS, 9_007_199_254_740_991);
        assert_eq!(in_range("at_ms", MAX_MS), Ok(MAX_MS));
        assert_eq!(
            in_range("at_ms", MAX_MS + 1).unwrap_err(),
            "at_ms: 9007199254740992 is beyond the time range (at most 9007199254740991 ms, 2^53 - 1)"
        );
    }
}
