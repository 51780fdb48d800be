//! Fixed-point amounts: thousandths of a unit, as Kubernetes millicores.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use thiserror::Error;

/// A number that is no [`Milli`] amount.
///
/// ```
/// use gangway::model::AmountError;
/// use gangway::Milli;
/// assert_eq!(Milli::from_f64(-1.0), Err(AmountError::Negative(-1.0)));
/// assert_eq!(AmountError::TooPrecise(0.0001).to_string(), "0.0001 has more than three decimals");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Error)]
#[non_exhaustive]
pub enum AmountError {
    /// NaN or infinite.
    #[error("{0} is not a finite number")]
    NotFinite(f64),
    /// Below zero.
    #[error("{0} is negative")]
    Negative(f64),
    /// More than three decimals.
    #[error("{0} has more than three decimals")]
    TooPrecise(f64),
    /// Too large to count in thousandths.
    #[error("{0} is too large")]
    TooLarge(f64),
}

/// A non-negative quantity in thousandths of a unit (cpus, GPUs, quota amounts).
///
/// On the wire it is a plain JSON number (`1`, `0.5`, `2.125`); inside it is an integer, so sums
/// and comparisons are exact. More than three decimals, negative values and non-finite numbers
/// are refused when parsing.
///
/// ```
/// use gangway::Milli;
/// let half: Milli = serde_json::from_str("0.5").unwrap();
/// assert_eq!(half, Milli::from_milli(500));
/// assert_eq!(serde_json::to_string(&Milli::from_units(3)).unwrap(), "3");
/// assert!(serde_json::from_str::<Milli>("-1").is_err());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Milli(u64);

impl Milli {
    /// Zero.
    pub const ZERO: Milli = Milli(0);
    /// One whole unit.
    pub const ONE: Milli = Milli(1000);

    /// An amount given in thousandths.
    pub const fn from_milli(milli: u64) -> Self {
        Milli(milli)
    }

    /// An amount of whole units.
    pub const fn from_units(units: u64) -> Self {
        Milli(units.saturating_mul(1000))
    }

    /// The amount in thousandths.
    pub const fn milli(self) -> u64 {
        self.0
    }

    /// True for a whole number of units.
    pub const fn is_whole(self) -> bool {
        self.0.is_multiple_of(1000)
    }

    /// The whole units (rounded down).
    pub const fn units(self) -> u64 {
        self.0 / 1000
    }

    /// Parses a decimal number with at most three decimals.
    ///
    /// ```
    /// use gangway::Milli;
    /// assert_eq!(Milli::from_f64(1.25), Ok(Milli::from_milli(1250)));
    /// assert!(Milli::from_f64(0.0001).is_err());
    /// ```
    pub fn from_f64(value: f64) -> Result<Self, AmountError> {
        if !value.is_finite() {
            return Err(AmountError::NotFinite(value));
        }
        if value < 0.0 {
            return Err(AmountError::Negative(value));
        }
        let scaled = value * 1000.0;
        let rounded = scaled.round();
        if (scaled - rounded).abs() > 1e-6 * rounded.max(1.0) {
            return Err(AmountError::TooPrecise(value));
        }
        if rounded >= u64::MAX as f64 / 2.0 {
            return Err(AmountError::TooLarge(value));
        }
        Ok(Milli(rounded as u64))
    }

    /// The amount as a float (for reports only).
    pub fn as_f64(self) -> f64 {
        self.0 as f64 / 1000.0
    }
}

impl fmt::Display for Milli {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_whole() {
            write!(f, "{}", self.units())
        } else {
            let text = format!("{}.{:03}", self.units(), self.0 % 1000);
            f.write_str(text.trim_end_matches('0'))
        }
    }
}

impl Serialize for Milli {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.is_whole() {
            serializer.serialize_u64(self.units())
        } else {
            serializer.serialize_f64(self.as_f64())
        }
    }
}

impl<'de> Deserialize<'de> for Milli {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = f64::deserialize(deserializer)?;
        Milli::from_f64(value).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_trims_zeros() {
        assert_eq!(Milli::from_milli(1500).to_string(), "1.5");
        assert_eq!(Milli::from_milli(2000).to_string(), "2");
        assert_eq!(Milli::from_milli(125).to_string(), "0.125");
    }

    #[test]
    fn round_trips_through_json() {
        for milli in [0, 1, 999, 1000, 1001, 123_456] {
            let m = Milli::from_milli(milli);
            let text = serde_json::to_string(&m).unwrap();
            assert_eq!(serde_json::from_str::<Milli>(&text).unwrap(), m);
        }
    }

    #[test]
    fn refuses_bad_numbers() {
        assert!(Milli::from_f64(f64::NAN).is_err());
        assert!(Milli::from_f64(-0.5).is_err());
        assert!(Milli::from_f64(1.0005).is_err());
    }
}
