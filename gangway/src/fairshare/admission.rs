//! Admission fair sharing's usage ledger (Kueue's `AfsUsageLedger`, v0.19): each tenant's
//! consumed resources in each queue, decayed with a half-life, with the entry penalty of every
//! job started there.
//!
//! A tenant is an account within one queue (Kueue's LocalQueue: one tenant of one
//! ClusterQueue), so an account has one usage per queue. Per resource key, its *consumed*
//! amount `C` follows Kueue's `CalculateDecayedConsumed` at every tick, with the resources `R`
//! its running jobs in the queue held since the last tick:
//! `C ← C·2^(−Δt/T) + R·(1 − 2^(−Δt/T))`, the exact exponential moving average of what it held
//! (usage changes only at ticks). The decay is the fair-share ledger's own lazy, exact one
//! ([`super::ledger::Decay`]): an entry is only touched when charged, and read without change.
//! The entry penalty adds `(1 − 2^(−sampling/T))·R` once, when a job starts. A half-life of 0
//! keeps no history: everything reads 0, as Kueue resets consumed usage then.
//!
//! A tenant's *usage*, which orders the queue, is Kueue's `CalculateUsage`: the consumed
//! amounts weighted by `resource_weights` (1 for a key not listed) and summed, over the
//! tenant's weight in the queue; infinite for weight 0.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::ledger::{Decay, Usage};
use crate::config::{AdmissionFairSharingConfig, ResetPeriod};

/// Every tenant's consumed resources: queue name → tenant (account) → resource key → usage.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub(crate) struct AdmissionLedger(BTreeMap<String, BTreeMap<String, BTreeMap<String, Usage>>>);

/// A (queue, tenant) pair, by name.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tenant<'a> {
    /// The queue's name.
    pub(crate) queue: &'a str,
    /// The account.
    pub(crate) account: &'a str,
}

/// One tenant's admission-fair-sharing usage in one queue, as `explain` reports it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AdmissionUsageRow {
    /// The queue.
    pub queue: String,
    /// The tenant: an account (`default` for jobs naming none).
    pub account: String,
    /// The account's weight in the queue (`account_weights`, default 1).
    pub weight: f64,
    /// Decayed consumed amount per quota resource key the queue lists (cpus, MiB, devices,
    /// slices), entry penalties included: Kueue's `consumedResources`.
    pub consumed: BTreeMap<String, f64>,
    /// The usage that orders the queue: Σ resource weight × consumed, over `weight`; `None`
    /// when the weight is 0 (infinite usage: its jobs go last).
    pub usage: Option<f64>,
}

impl AdmissionLedger {
    /// Whether no tenant has any history.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Charges `held` units of resource `key`, held by the tenant from `from_ms` to `now_ms`:
    /// one step of Kueue's moving average. Nothing with a half-life of 0 or an empty interval.
    pub(crate) fn charge_held(
        &mut self,
        tenant: Tenant<'_>,
        key: &str,
        held: f64,
        (from_ms, now_ms): (u64, u64),
        config: &AdmissionFairSharingConfig,
    ) {
        let share = alpha(now_ms.saturating_sub(from_ms), config.usage_half_life_ms);
        self.add(tenant, key, held * share, now_ms, config);
    }

    /// Adds the entry penalty of a job starting at `now_ms` that holds `held` units of `key`:
    /// `(1 − 2^(−sampling/T))` × `held` (Kueue's `CalculateEntryPenalty`).
    pub(crate) fn penalize(
        &mut self,
        tenant: Tenant<'_>,
        key: &str,
        held: f64,
        now_ms: u64,
        config: &AdmissionFairSharingConfig,
    ) {
        let share = alpha(config.usage_sampling_interval_ms, config.usage_half_life_ms);
        self.add(tenant, key, held * share, now_ms, config);
    }

    fn add(
        &mut self,
        tenant: Tenant<'_>,
        key: &str,
        amount: f64,
        now_ms: u64,
        config: &AdmissionFairSharingConfig,
    ) {
        if !amount.is_finite() || amount <= 0.0 {
            return;
        }
        let usage = self
            .0
            .entry(tenant.queue.to_owned())
            .or_default()
            .entry(tenant.account.to_owned())
            .or_default()
            .entry(key.to_owned())
            .or_default();
        decay(config).add(usage, amount, now_ms);
    }

    /// The tenant's consumed amount per resource key at `now_ms` (nothing is modified), in key
    /// order.
    pub(crate) fn consumed(
        &self,
        tenant: Tenant<'_>,
        now_ms: u64,
        config: &AdmissionFairSharingConfig,
    ) -> BTreeMap<String, f64> {
        let Some(keys) = self.0.get(tenant.queue).and_then(|q| q.get(tenant.account)) else {
            return BTreeMap::new();
        };
        let decay = decay(config);
        keys.iter()
            .map(|(key, usage)| {
                let value = match config.usage_half_life_ms {
                    0 => 0.0,
                    _ => decay.read(usage, now_ms),
                };
                (key.clone(), value)
            })
            .collect()
    }

    /// The tenant's usage at `now_ms` with weight `weight`: Kueue's `CalculateUsage`
    /// (weighted consumed amounts summed in key order, over the weight; +∞ for a weight of 0).
    pub(crate) fn usage(
        &self,
        tenant: Tenant<'_>,
        weight: f64,
        now_ms: u64,
        config: &AdmissionFairSharingConfig,
    ) -> f64 {
        let total: f64 = self
            .consumed(tenant, now_ms, config)
            .iter()
            .map(|(key, value)| config.resource_weight(key) * value)
            .sum();
        if weight <= 0.0 {
            return f64::INFINITY;
        }
        total / weight
    }

    /// The tenants with history in `queue`, by name.
    pub(crate) fn tenants<'a>(&'a self, queue: &str) -> impl Iterator<Item = &'a str> + 'a {
        self.0
            .get(queue)
            .into_iter()
            .flat_map(|tenants| tenants.keys().map(String::as_str))
    }

    /// Keeps the history of the queues `keep` accepts, by name, and forgets the others'.
    pub(crate) fn retain_queues(&mut self, keep: impl Fn(&str) -> bool) {
        self.0.retain(|queue, _| keep(queue));
    }
}

/// The fair-share ledger's decay with the admission half-life (no reset period).
fn decay(config: &AdmissionFairSharingConfig) -> Decay {
    Decay {
        half_life_ms: config.usage_half_life_ms,
        reset: ResetPeriod::None,
    }
}

/// Kueue's `calculateAlphaRate`: the weight `1 − 2^(−elapsed/half_life)` of a new sample in
/// the moving average; 0 for a half-life of 0.
fn alpha(elapsed_ms: u64, half_life_ms: u64) -> f64 {
    if half_life_ms == 0 {
        return 0.0;
    }
    1.0 - (-(elapsed_ms as f64) / half_life_ms as f64).exp2()
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR: u64 = 3_600_000;

    fn config(half_life_ms: u64) -> AdmissionFairSharingConfig {
        AdmissionFairSharingConfig {
            usage_half_life_ms: half_life_ms,
            usage_sampling_interval_ms: HOUR,
            ..Default::default()
        }
    }

    const A: Tenant<'static> = Tenant {
        queue: "q",
        account: "a",
    };

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
    }

    #[test]
    fn holding_for_one_half_life_reaches_half_of_what_is_held() {
        let c = config(HOUR);
        let mut ledger = AdmissionLedger::default();
        ledger.charge_held(A, "gpu", 8.0, (0, HOUR), &c);
        assert!(close(ledger.usage(A, 1.0, HOUR, &c), 4.0));
        // Holding on converges on what is held, as Kueue's moving average does.
        ledger.charge_held(A, "gpu", 8.0, (HOUR, 20 * HOUR), &c);
        assert!(close(
            ledger.usage(A, 1.0, 20 * HOUR, &c),
            8.0 - 4.0 / 2f64.powi(19)
        ));
        // Then it decays: one more half-life later, half.
        let at = 21 * HOUR;
        assert!(close(
            ledger.usage(A, 1.0, at, &c),
            ledger.usage(A, 1.0, 20 * HOUR, &c) / 2.0
        ));
    }

    #[test]
    fn charging_per_tick_equals_charging_once() {
        let c = config(HOUR);
        let (mut once, mut ticks) = (AdmissionLedger::default(), AdmissionLedger::default());
        once.charge_held(A, "cpu", 3.0, (0, 5 * HOUR), &c);
        for t in 0..50 {
            ticks.charge_held(A, "cpu", 3.0, (t * HOUR / 10, (t + 1) * HOUR / 10), &c);
        }
        let at = 6 * HOUR;
        assert!(close(
            once.usage(A, 1.0, at, &c),
            ticks.usage(A, 1.0, at, &c)
        ));
    }

    #[test]
    fn the_entry_penalty_is_one_sampling_interval_of_holding() {
        let c = config(HOUR);
        let mut ledger = AdmissionLedger::default();
        ledger.penalize(A, "gpu", 8.0, 0, &c);
        // Sampling interval = half-life: half of what the job holds.
        assert!(close(ledger.usage(A, 1.0, 0, &c), 4.0));
    }

    #[test]
    fn weights_divide_and_resource_weights_multiply() {
        let mut c = config(HOUR);
        c.resource_weights.insert("cpu".into(), 2.0);
        let mut ledger = AdmissionLedger::default();
        ledger.penalize(A, "cpu", 4.0, 0, &c);
        ledger.penalize(A, "gpu", 2.0, 0, &c);
        // (2 × 2 + 1 × 1) / 2.5
        assert!(close(ledger.usage(A, 2.5, 0, &c), 2.0));
        assert_eq!(ledger.usage(A, 0.0, 0, &c), f64::INFINITY);
        let consumed = ledger.consumed(A, 0, &c);
        assert_eq!(consumed.keys().collect::<Vec<_>>(), ["cpu", "gpu"]);
    }

    #[test]
    fn a_zero_half_life_keeps_no_history() {
        let c = config(0);
        let mut ledger = AdmissionLedger::default();
        ledger.charge_held(A, "gpu", 8.0, (0, HOUR), &c);
        ledger.penalize(A, "gpu", 8.0, HOUR, &c);
        assert!(ledger.is_empty());
        let mut kept = AdmissionLedger::default();
        kept.penalize(A, "gpu", 8.0, 0, &config(HOUR));
        assert_eq!(kept.usage(A, 1.0, 0, &c), 0.0);
    }

    #[test]
    fn tenants_are_per_queue() {
        let c = config(HOUR);
        let mut ledger = AdmissionLedger::default();
        ledger.penalize(A, "gpu", 8.0, 0, &c);
        let elsewhere = Tenant {
            queue: "other",
            account: "a",
        };
        assert_eq!(ledger.usage(elsewhere, 1.0, 0, &c), 0.0);
        assert_eq!(ledger.tenants("q").collect::<Vec<_>>(), ["a"]);
        ledger.retain_queues(|q| q != "q");
        assert!(ledger.is_empty());
    }
}

/// The examples of this module's documentation from when it was public, as unit tests.
#[cfg(test)]
mod examples {
    #[test]
    fn admission_usage_row() {
        use crate::fairshare::AdmissionUsageRow;
        let row = AdmissionUsageRow {
            queue: "shared".into(),
            account: "team-a".into(),
            weight: 1.0,
            consumed: [("gpu".to_string(), 4.0)].into_iter().collect(),
            usage: Some(4.0),
        };
        assert!(
            serde_json::to_string(&row)
                .unwrap()
                .contains(r#""consumed":{"gpu":4.0}"#)
        );
    }
}
