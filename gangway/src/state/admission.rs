//! Admission fair sharing in the state: checking its configuration, charging each tenant's
//! running jobs and entry penalties to the [`AdmissionLedger`], and reading tenant usage.
//!
//! Charging follows the fair-share ledger's rhythm ([`super::usage`]): at the start of every
//! tick, before its events apply, each running job of a queue with `admission_fair_sharing`
//! is charged, per resource key its queue lists, what it held over
//! `[max(start, last tick), this tick)`; a job started in such a queue adds its entry penalty
//! at once. What a job holds is its quota demand in the queue (what the quota tree charges it:
//! an exclusive job its whole nodes), in units: cpus, MiB, devices, slices.

use super::ClusterState;
use crate::config::{AdmissionFairSharingConfig, ClusterConfig};
use crate::error::ConfigError;
use crate::fairshare::{AdmissionUsageRow, DEFAULT_ACCOUNT, Tenant};
use crate::model::ids::JobId;
use crate::quota::{QueueId, QuotaVec};

/// Quota amounts are in thousandths of a unit.
const PER_UNIT: f64 = 1000.0;

impl ClusterState {
    /// Whether any queue has admission fair sharing on.
    pub(crate) fn admission_fair_sharing(&self) -> bool {
        self.config.queues.iter().any(|q| q.admission_fair_sharing)
    }

    /// Whether queue `q` has admission fair sharing on.
    pub(crate) fn is_admission_queue(&self, q: QueueId) -> bool {
        self.config
            .queues
            .get(q.index())
            .is_some_and(|q| q.admission_fair_sharing)
    }

    /// The tenant of job `id` when its queue has admission fair sharing on.
    pub(crate) fn admission_tenant(&self, id: JobId) -> Option<(QueueId, Tenant<'_>)> {
        let job = self.job(id)?;
        let q = job.queue.filter(|&q| self.is_admission_queue(q))?;
        let tenant = Tenant {
            queue: &self.config.queues[q.index()].name,
            account: job.spec.account.as_deref().unwrap_or(DEFAULT_ACCOUNT),
        };
        Some((q, tenant))
    }

    /// The usage of `tenant` in queue `q` now: what orders the queue's jobs (lower first).
    pub(crate) fn admission_usage(&self, q: QueueId, tenant: Tenant<'_>) -> f64 {
        let weight = self.account_weight(q, tenant.account);
        let config = &self.config.policy.admission_fair_sharing;
        self.admission.usage(tenant, weight, self.now_ms, config)
    }

    fn account_weight(&self, q: QueueId, account: &str) -> f64 {
        self.config.queues[q.index()]
            .account_weights
            .get(account)
            .copied()
            .unwrap_or(1.0)
    }

    /// Charges every running job of an admission-fair-sharing queue what it held since the
    /// later of its start and the last tick, up to `now_ms` (see the module documentation).
    pub(crate) fn charge_admission(&mut self, now_ms: u64) {
        if !self.admission_fair_sharing() {
            return;
        }
        let mut ledger = std::mem::take(&mut self.admission);
        let config = &self.config.policy.admission_fair_sharing;
        for (&id, (q, demand)) in &self.quota.charged {
            let (Some((_, tenant)), Some(run)) = (
                self.admission_tenant(id),
                self.job(id).and_then(|j| j.running()),
            ) else {
                continue;
            };
            let span = (run.start_ms.max(self.now_ms), now_ms);
            for (key, held) in self.held_keys(*q, demand) {
                ledger.charge_held(tenant, key, held, span, config);
            }
        }
        self.admission = ledger;
    }

    /// Adds the entry penalty of job `id`, just started at `now_ms`, to its tenant's usage
    /// (nothing outside admission-fair-sharing queues).
    pub(crate) fn penalize_admission(&mut self, id: JobId, now_ms: u64) {
        let Some(&(q, demand)) = self.quota.charged.get(&id) else {
            return;
        };
        let mut ledger = std::mem::take(&mut self.admission);
        if let Some((_, tenant)) = self.admission_tenant(id) {
            let config = &self.config.policy.admission_fair_sharing;
            for (key, held) in self.held_keys(q, &demand) {
                ledger.penalize(tenant, key, held, now_ms, config);
            }
        }
        self.admission = ledger;
    }

    /// The amounts of `demand` on each key queue `q` lists, in units.
    fn held_keys<'a>(
        &'a self,
        q: QueueId,
        demand: &'a QuotaVec,
    ) -> impl Iterator<Item = (&'a str, f64)> + 'a {
        let tree = self.quota.tree.as_ref();
        tree.into_iter().flat_map(move |tree| {
            tree.keys()
                .filter(move |&key| tree.limits(q, key))
                .map(move |key| {
                    let held = demand.as_slice()[key.index()] as f64 / PER_UNIT;
                    (tree.key_name(key), held)
                })
        })
    }

    /// Every tenant's usage in every admission-fair-sharing queue now, by queue (in
    /// configuration order) then account: the accounts with history there and those with a
    /// pending or running job there.
    pub(crate) fn admission_report(&self) -> Vec<AdmissionUsageRow> {
        let config = &self.config.policy.admission_fair_sharing;
        let mut tenants: std::collections::BTreeSet<(QueueId, &str)> = self
            .pending
            .iter()
            .chain(&self.running)
            .filter_map(|&id| self.admission_tenant(id))
            .map(|(q, t)| (q, t.account))
            .collect();
        for (i, queue) in self.config.queues.iter().enumerate() {
            if queue.admission_fair_sharing {
                let q = QueueId(i as u32);
                tenants.extend(self.admission.tenants(&queue.name).map(|a| (q, a)));
            }
        }
        tenants
            .into_iter()
            .map(|(q, account)| {
                let queue = &self.config.queues[q.index()].name;
                let tenant = Tenant { queue, account };
                let usage = self.admission_usage(q, tenant);
                AdmissionUsageRow {
                    queue: queue.clone(),
                    account: account.to_owned(),
                    weight: self.account_weight(q, account),
                    consumed: self.admission.consumed(tenant, self.now_ms, config),
                    usage: usage.is_finite().then_some(usage),
                }
            })
            .collect()
    }
}

/// Checks admission fair sharing's configuration; errors name the offending field.
pub(super) fn check_admission(config: &ClusterConfig) -> Result<(), ConfigError> {
    let AdmissionFairSharingConfig {
        resource_weights, ..
    } = &config.policy.admission_fair_sharing;
    for (key, weight) in resource_weights {
        let field = format!("policy.admission_fair_sharing.resource_weights.{key}");
        if !crate::quota::keys::is_quota_key(key) {
            return Err(ConfigError::new(
                field,
                "unknown resource; use cpu, memory_mib, gpu, gpu:MODEL or mig:PROFILE",
            ));
        }
        check_weight(field, *weight)?;
    }
    for (i, queue) in config.queues.iter().enumerate() {
        if queue.admission_fair_sharing && queue.quota.is_empty() {
            return Err(ConfigError::new(
                format!("queues[{i}].admission_fair_sharing"),
                "the queue lists no quota; admission fair sharing weighs the resources it lists",
            ));
        }
        if !queue.admission_fair_sharing && !queue.account_weights.is_empty() {
            return Err(ConfigError::new(
                format!("queues[{i}].account_weights"),
                "only with admission_fair_sharing",
            ));
        }
        for (account, weight) in &queue.account_weights {
            check_weight(format!("queues[{i}].account_weights.{account}"), *weight)?;
        }
    }
    Ok(())
}

fn check_weight(field: String, weight: f64) -> Result<(), ConfigError> {
    if weight.is_finite() && weight >= 0.0 {
        return Ok(());
    }
    Err(ConfigError::new(
        field,
        format!("weight {weight} must be a finite non-negative number"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(json: &str) -> ClusterConfig {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn bad_settings_are_refused_by_field() {
        let cases = [
            (
                r#"{"nodes": [], "policy": {"admission_fair_sharing":
                    {"resource_weights": {"gpus": 1}}}}"#,
                "policy.admission_fair_sharing.resource_weights.gpus",
            ),
            (
                r#"{"nodes": [], "policy": {"admission_fair_sharing":
                    {"resource_weights": {"cpu": -1}}}}"#,
                "policy.admission_fair_sharing.resource_weights.cpu",
            ),
            (
                r#"{"nodes": [], "queues": [{"name": "q", "admission_fair_sharing": true}]}"#,
                "queues[0].admission_fair_sharing",
            ),
            (
                r#"{"nodes": [], "queues": [{"name": "q", "quota": {"gpu": {"nominal": 1}},
                    "account_weights": {"a": 2}}]}"#,
                "queues[0].account_weights",
            ),
            (
                r#"{"nodes": [], "queues": [{"name": "q", "quota": {"gpu": {"nominal": 1}},
                    "admission_fair_sharing": true, "account_weights": {"a": -2}}]}"#,
                "queues[0].account_weights.a",
            ),
        ];
        for (json, field) in cases {
            assert_eq!(check_admission(&config(json)).unwrap_err().field, field);
        }
        let good = r#"{"nodes": [], "queues": [{"name": "q", "quota": {"gpu": {"nominal": 1}},
            "admission_fair_sharing": true, "account_weights": {"a": 0}}]}"#;
        assert!(check_admission(&config(good)).is_ok());
    }
}
