//! `policy.wait_for_ready`: Kueue's `waitForPodsReady` with its requeuing back-off
//! (Kueue v0.20.0-devel, commit ff69552; documentation v0.19, "Setup All-or-nothing with ready
//! Pods"). The defaults are Kueue's: a 30-minute timeout, a recovery timeout equal to it,
//! back-off from 60 s doubling up to 3,600 s, unlimited requeues, admission not blocked.

use serde::{Deserialize, Serialize};

use crate::error::ConfigError;

/// How long a started job may take to report `ready`, and how a job evicted for it is
/// requeued (docs/protocol.md, "Wait for ready").
///
/// ```
/// use gangway::config::WaitForReadyConfig;
/// let c: WaitForReadyConfig = serde_json::from_str(r#"{"timeout_ms": 60000}"#).unwrap();
/// assert_eq!(c.recovery_ms(), Some(60000)); // absent: the timeout itself
/// assert_eq!(c.backoff_ms(1), 60_000);
/// assert_eq!(c.backoff_ms(3), 240_000);
/// assert_eq!(c.backoff_ms(10), 3_600_000); // capped at backoff_max_ms
/// assert!(c.check().is_ok());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WaitForReadyConfig {
    /// How long after its start a job has to report `ready` (Kueue's `timeout`). Default
    /// 1,800,000 (30 minutes); must be positive.
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
    /// How long a ready job that reported `not_ready` has to report `ready` again (Kueue's
    /// `recoveryTimeout`). Absent or null: `timeout_ms`, as in Kueue; 0: no recovery timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery_timeout_ms: Option<u64>,
    /// The first back-off after a timeout (Kueue's `backoffBaseSeconds`). Default 60,000.
    #[serde(default = "default_backoff_base_ms")]
    pub backoff_base_ms: u64,
    /// The longest back-off (Kueue's `backoffMaxSeconds`). Default 3,600,000; at least
    /// `backoff_base_ms`.
    #[serde(default = "default_backoff_max_ms")]
    pub backoff_max_ms: u64,
    /// The timeout that kills a job instead of requeuing it: at its `backoff_limit`-th timeout
    /// (≥ 1) a job is killed, so it is requeued at most `backoff_limit − 1` times; Kueue's
    /// `backoffLimitCount: N` is `backoff_limit: N + 1`. Absent or null: requeued without end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backoff_limit: Option<u32>,
    /// While a started job is not ready, no other job starts (Kueue's `blockAdmission`).
    /// Default false.
    #[serde(default)]
    pub block_admission: bool,
}

impl Default for WaitForReadyConfig {
    fn default() -> Self {
        WaitForReadyConfig {
            timeout_ms: default_timeout_ms(),
            recovery_timeout_ms: None,
            backoff_base_ms: default_backoff_base_ms(),
            backoff_max_ms: default_backoff_max_ms(),
            backoff_limit: None,
            block_admission: false,
        }
    }
}

fn default_timeout_ms() -> u64 {
    1_800_000
}

fn default_backoff_base_ms() -> u64 {
    60_000
}

fn default_backoff_max_ms() -> u64 {
    3_600_000
}

impl WaitForReadyConfig {
    /// The recovery timeout in force: `recovery_timeout_ms`, `timeout_ms` when absent, `None`
    /// when 0 (no recovery timeout).
    pub fn recovery_ms(&self) -> Option<u64> {
        match self.recovery_timeout_ms {
            None => Some(self.timeout_ms),
            Some(0) => None,
            Some(ms) => Some(ms),
        }
    }

    /// The back-off after the `n`-th requeue (n ≥ 1): `backoff_base_ms` × 2^(n−1), at most
    /// `backoff_max_ms`, without jitter (Kueue adds 0.01% of random jitter; gangway stays
    /// deterministic).
    pub fn backoff_ms(&self, n: u32) -> u64 {
        let doublings = n.saturating_sub(1);
        let grown = if doublings >= 64 {
            u64::MAX
        } else {
            self.backoff_base_ms.saturating_mul(1u64 << doublings)
        };
        grown.min(self.backoff_max_ms)
    }

    /// Whether a job that has been requeued `requeues` times is killed at its next timeout
    /// instead of requeued again: that timeout is its `backoff_limit`-th.
    ///
    /// ```
    /// use gangway::config::WaitForReadyConfig;
    /// let c = WaitForReadyConfig { backoff_limit: Some(2), ..Default::default() };
    /// assert!(!c.limit_reached(0)); // the first timeout requeues
    /// assert!(c.limit_reached(1)); // the second kills
    /// ```
    pub fn limit_reached(&self, requeues: u32) -> bool {
        self.backoff_limit
            .is_some_and(|limit| requeues.saturating_add(1) >= limit)
    }

    /// Checks the values; the error names the field under `policy.wait_for_ready`.
    pub fn check(&self) -> Result<(), ConfigError> {
        let field = |name: &str| format!("policy.wait_for_ready.{name}");
        if self.timeout_ms == 0 {
            return Err(ConfigError::new(field("timeout_ms"), "must be positive"));
        }
        if self.backoff_limit == Some(0) {
            return Err(ConfigError::new(
                field("backoff_limit"),
                "must be at least 1 (the timeout that kills: 1 kills at the first timeout)",
            ));
        }
        if self.backoff_max_ms < self.backoff_base_ms {
            return Err(ConfigError::new(
                field("backoff_max_ms"),
                format!(
                    "{} is less than backoff_base_ms {}",
                    self.backoff_max_ms, self.backoff_base_ms
                ),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn back_off_doubles_from_the_base_and_stops_at_the_cap() {
        let c = WaitForReadyConfig {
            backoff_base_ms: 1_000,
            backoff_max_ms: 5_000,
            ..WaitForReadyConfig::default()
        };
        let waits: Vec<u64> = (1..=5).map(|n| c.backoff_ms(n)).collect();
        assert_eq!(waits, [1_000, 2_000, 4_000, 5_000, 5_000]);
        assert_eq!(c.backoff_ms(200), 5_000);
    }

    #[test]
    fn the_limit_is_the_timeout_that_kills() {
        let c = WaitForReadyConfig {
            backoff_limit: Some(2),
            ..WaitForReadyConfig::default()
        };
        assert!(!c.limit_reached(0)); // the first timeout requeues
        assert!(c.limit_reached(1)); // the second kills
        assert!(c.limit_reached(2));
        assert!(!WaitForReadyConfig::default().limit_reached(u32::MAX));
    }

    #[test]
    fn recovery_defaults_to_the_timeout_and_zero_turns_it_off() {
        let mut c = WaitForReadyConfig::default();
        assert_eq!(c.recovery_ms(), Some(1_800_000));
        c.recovery_timeout_ms = Some(0);
        assert_eq!(c.recovery_ms(), None);
        c.recovery_timeout_ms = Some(5);
        assert_eq!(c.recovery_ms(), Some(5));
    }

    #[test]
    fn bad_values_name_their_field() {
        let zero = WaitForReadyConfig {
            timeout_ms: 0,
            ..WaitForReadyConfig::default()
        };
        assert_eq!(
            zero.check().unwrap_err().field,
            "policy.wait_for_ready.timeout_ms"
        );
        let inverted = WaitForReadyConfig {
            backoff_base_ms: 10,
            backoff_max_ms: 5,
            ..WaitForReadyConfig::default()
        };
        assert_eq!(
            inverted.check().unwrap_err().field,
            "policy.wait_for_ready.backoff_max_ms"
        );
    }
}
