//! Fair-share bookkeeping in the state: building the engine from the configuration, resolving
//! each submitted job's association, and charging running jobs' billing-weighted
//! resource-seconds to the usage ledger.
//!
//! A job's charge is its billing rate times its QoS's `usage_factor` (Slurm's UsageFactor).
//! Charging happens at the start of every tick, before its events apply: each running job is
//! charged for `[max(start, last tick), this tick)`. So every running job has always been
//! charged up to the last tick (`ClusterState::now_ms`), a job that ends at a tick (finished,
//! cancelled, killed, requeued, stopped) is charged up to that tick's time, and a job started at
//! a tick is charged from then on. A snapshot carries the ledger and the last tick's time, so a
//! restored scheduler charges exactly as the original would.

use std::borrow::Cow;
use std::sync::Arc;

use indexmap::IndexMap;

use super::{ClusterState, JobState};
use crate::config::ClusterConfig;
use crate::error::{ConfigError, ErrorKind, EventError};
use crate::fairshare::{AssocId, FairShare};
use crate::model::ids::NodeId;
use crate::model::job::JobSpec;
use crate::model::resources::{DEVICE_MILLI, NodeAmounts};

/// The user name a job naming no user is charged as.
pub(super) const NO_USER: &str = "";

impl ClusterState {
    /// The association a submitted job is charged to, created on first use; `None` without
    /// configured accounts. A job naming no account is charged to the account `default`, and
    /// one naming no user as the user [`NO_USER`] of its account.
    pub(crate) fn associate(&mut self, spec: &JobSpec) -> Result<Option<AssocId>, EventError> {
        let Some(shared) = self.fairshare.as_mut() else {
            return Ok(None);
        };
        if let Some(fairshare) = Arc::get_mut(shared) {
            return association_in(Some(fairshare), spec);
        }
        // Shared with a copy of the state (`what_if`'s trial): an existing association is
        // found without writing, so that the copy goes on sharing the fair-share engine.
        let user = spec.user.as_deref().unwrap_or(NO_USER);
        let known = shared.find_association(spec.account.as_deref(), user);
        if known.is_some() {
            return Ok(known);
        }
        association_in(Some(Arc::make_mut(shared)), spec)
    }

    /// Charges every running job for the time from the later of its start and the last tick up
    /// to `now_ms` (see the module documentation); a MIG slice bills as its compute share of a
    /// device of the node's model. Does nothing without configured accounts.
    pub(crate) fn charge_running(&mut self, now_ms: u64) {
        let Some(mut shared) = self.fairshare.take() else {
            return;
        };
        let fairshare = Arc::make_mut(&mut shared);
        #[cfg(debug_assertions)]
        let billing = self.billing();
        for &id in &self.running {
            let Some(job) = self.job(id) else { continue };
            let (Some(assoc), Some(run)) = (job.assoc, job.running()) else {
                continue;
            };
            let from = run.start_ms.max(self.now_ms);
            let seconds = now_ms.saturating_sub(from) as f64 / 1000.0;
            if seconds == 0.0 {
                continue;
            }
            let rate = run.billing_rate;
            #[cfg(debug_assertions)]
            assert_eq!(
                rate.to_bits(),
                self.billing_rate(billing, &job.spec, &run.charges)
                    .to_bits(),
                "job {}: billing rate stale",
                job.spec.id
            );
            // Rates are finite and non-negative (weights are validated) and the association
            // came from this engine, so the charge cannot be refused.
            let _ = fairshare.charge(assoc, rate * seconds, now_ms);
        }
        self.fairshare = Some(shared);
    }

    /// The billing rates per resource the configuration's weights give, for
    /// [`ClusterState::billing_rate`]: kept since the last [`ClusterState::rebuild_billing_rates`]
    /// (debug builds compare them with a fresh derivation).
    pub(super) fn billing(&self) -> &Billing {
        debug_assert_eq!(
            self.billing,
            self.fresh_billing(),
            "billing rates stale: the weights or the GPU models changed without a rebuild"
        );
        &self.billing
    }

    fn fresh_billing(&self) -> Billing {
        Billing::new(&self.config.policy.fairshare.billing_weights, &self.models)
    }

    /// What holding `charges` costs a job of `spec` per second in fair-share usage: the
    /// `billing` rate of what it holds (a MIG slice as its compute share of a device of the
    /// node's model) times its QoS's `usage_factor`.
    pub(super) fn billing_rate(
        &self,
        billing: &Billing,
        spec: &JobSpec,
        charges: &[(NodeId, NodeAmounts)],
    ) -> f64 {
        let charges = self.billed_charges(charges);
        billing.rate(&charges, |n| {
            self.node(n).and_then(|n| n.gpu_model).map(|m| m.index())
        }) * self.usage_factor(spec)
    }

    /// Derives every running job's billing rate afresh (after a restore, a node change or a
    /// reconfiguration: what the rates read); 0 without accounts, as at a start.
    pub(super) fn rebuild_billing_rates(&mut self) {
        self.billing = self.fresh_billing();
        let billing = self.billing.clone();
        let charged = self.fairshare.is_some();
        for id in self.jobs.ids() {
            let Some(rate) = self.jobs.get(id).and_then(|job| {
                let run = job.running()?;
                Some(match charged {
                    true => self.billing_rate(&billing, &job.spec, &run.charges),
                    false => 0.0,
                })
            }) else {
                continue;
            };
            if let Some(JobState::Running(run)) = self.jobs.get_mut(id).map(|job| &mut job.state) {
                run.billing_rate = rate;
            }
        }
    }

    /// A running job's per-node charges as billed: a MIG slice counts as its compute share of
    /// a device of the node's model (a copy only where the job holds slices).
    fn billed_charges<'a>(
        &self,
        charges: &'a [(NodeId, NodeAmounts)],
    ) -> Cow<'a, [(NodeId, NodeAmounts)]> {
        if charges.iter().all(|(_, amounts)| amounts.mig == 0) {
            return Cow::Borrowed(charges);
        }
        let mut charges = charges.to_vec();
        for (node, amounts) in &mut charges {
            if let Some(node) = self.node(*node).filter(|_| amounts.mig != 0) {
                node.mig.add_device_shares(amounts);
            }
        }
        Cow::Owned(charges)
    }

    /// The QoS usage factor of a job: its QoS's `usage_factor`, 1 without QoS.
    fn usage_factor(&self, spec: &JobSpec) -> f64 {
        spec.qos
            .as_deref()
            .and_then(|name| self.config.qos(name))
            .map_or(1.0, |q| q.usage_factor)
    }

    /// Checks that every job has an association of the engine, or none without one. An ended
    /// job may have none: a reconfiguration drops those whose account is gone.
    pub(super) fn check_associations(&self) -> Result<(), String> {
        let count = self.fairshare.as_deref().map(FairShare::association_count);
        for job in self.jobs.iter().map(|(_, job)| job) {
            let ended = matches!(job.state, super::JobState::Ended { .. });
            match (job.assoc, count) {
                (None, None) => {}
                (None, Some(_)) if ended => {}
                (Some(assoc), Some(n)) if assoc.index() < n => {}
                (None, Some(_)) => {
                    return Err(format!("job {}: no fair-share association", job.spec.id));
                }
                (Some(assoc), _) => {
                    return Err(format!(
                        "job {}: unknown fair-share association {}",
                        job.spec.id,
                        assoc.index()
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Builds the fair-share engine when accounts are configured, after checking the billing
/// weights; errors name the offending field.
pub(super) fn build_fairshare(config: &ClusterConfig) -> Result<Option<FairShare>, ConfigError> {
    for (key, weight) in &config.policy.fairshare.billing_weights {
        let field = format!("policy.fairshare.billing_weights.{key}");
        let known = matches!(key.as_str(), "cpu" | "memory_gib" | "gpu")
            || key.strip_prefix("gpu:").is_some_and(|m| !m.is_empty());
        if !known {
            return Err(ConfigError::new(
                field,
                "unknown resource; use cpu, memory_gib, gpu or gpu:MODEL",
            ));
        }
        if !weight.is_finite() || *weight < 0.0 {
            return Err(ConfigError::new(
                field,
                format!("weight {weight} must be a finite non-negative number"),
            ));
        }
    }
    if config.accounts.is_empty() {
        return Ok(None);
    }
    FairShare::new(&config.accounts, &config.policy.fairshare).map(Some)
}

/// Billing rates per second: per cpu, per GiB of memory, per device of each GPU model.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Billing {
    cpu: f64,
    memory_gib: f64,
    gpu: f64,
    gpu_by_model: Vec<f64>,
}

impl Billing {
    fn new(weights: &IndexMap<String, f64>, models: &[String]) -> Self {
        let weight = |key: &str| weights.get(key).copied();
        let gpu = weight("gpu").unwrap_or(0.0);
        Billing {
            cpu: weight("cpu").unwrap_or(0.0),
            memory_gib: weight("memory_gib").unwrap_or(0.0),
            gpu,
            gpu_by_model: models
                .iter()
                .map(|m| weight(&format!("gpu:{m}")).unwrap_or(gpu))
                .collect(),
        }
    }

    /// What holding `charges` costs per second; `model_of` gives each node's GPU model id.
    fn rate(
        &self,
        charges: &[(NodeId, NodeAmounts)],
        model_of: impl Fn(NodeId) -> Option<usize>,
    ) -> f64 {
        charges
            .iter()
            .map(|(node, amounts)| {
                let device_milli: u64 = amounts.devices.iter().map(|&d| u64::from(d)).sum();
                let gpu = model_of(*node)
                    .and_then(|m| self.gpu_by_model.get(m).copied())
                    .unwrap_or(self.gpu);
                amounts.cpu_milli as f64 / 1000.0 * self.cpu
                    + amounts.memory_mib as f64 / 1024.0 * self.memory_gib
                    + device_milli as f64 / f64::from(DEVICE_MILLI) * gpu
            })
            .sum()
    }
}

/// The association `spec` is charged to in `fairshare`, created on first use (as
/// [`ClusterState::associate`]); `None` without an engine.
pub(super) fn association_in(
    fairshare: Option<&mut FairShare>,
    spec: &JobSpec,
) -> Result<Option<AssocId>, EventError> {
    let Some(fairshare) = fairshare else {
        return Ok(None);
    };
    let user = spec.user.as_deref().unwrap_or(NO_USER);
    fairshare
        .association(spec.account.as_deref(), user)
        .map(Some)
        .map_err(|m| {
            EventError::new(
                ErrorKind::UnknownAccount,
                format!("submit {}: {m}", spec.id),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_weight_replaces_the_generic_gpu_weight() {
        let weights = IndexMap::from([
            ("cpu".to_owned(), 0.5),
            ("memory_gib".to_owned(), 0.25),
            ("gpu".to_owned(), 1.0),
            ("gpu:h100".to_owned(), 3.0),
        ]);
        let billing = Billing::new(&weights, &["a100".to_owned(), "h100".to_owned()]);
        let mut held = NodeAmounts::full(4_000, 2_048, 2);
        held.devices[2] = 500;
        // 4 cpus × 0.5 + 2 GiB × 0.25 + 2.5 devices × weight of the node's model.
        let on = |model| billing.rate(&[(NodeId(0), held)], move |_| model);
        assert_eq!(on(Some(0)), 2.0 + 0.5 + 2.5);
        assert_eq!(on(Some(1)), 2.0 + 0.5 + 7.5);
        assert_eq!(on(None), 2.0 + 0.5 + 2.5);
    }

    #[test]
    fn a_copy_shares_the_ledger_until_it_makes_an_association() {
        let config: ClusterConfig = serde_json::from_str(
            r#"{"nodes": [{"name": "n1", "cpus": 1}], "accounts": [{"name": "ml"}]}"#,
        )
        .unwrap();
        let mut state = ClusterState::from_config(config).unwrap();
        let spec = |user: &str| {
            let mut job = JobSpec::new("j", 1_000, 1);
            (job.account, job.user) = (Some("ml".into()), Some(user.into()));
            job
        };
        let alice = state.associate(&spec("alice")).unwrap();
        let mut copy = state.clone();
        let ledger = |s: &ClusterState| Arc::as_ptr(s.fairshare.as_ref().unwrap());
        // A known user is found without writing: the copy still shares the ledger.
        assert_eq!(copy.associate(&spec("alice")).unwrap(), alice);
        assert_eq!(ledger(&copy), ledger(&state));
        // A new user is made in the copy's own ledger; the original never sees it.
        let bob = copy.associate(&spec("bob")).unwrap();
        assert!(bob.is_some() && bob != alice);
        assert_ne!(ledger(&copy), ledger(&state));
        let original = state.fairshare.as_deref().unwrap();
        assert_eq!(original.find_association(Some("ml"), "bob"), None);
        assert_eq!(original.find_association(Some("ml"), "alice"), alice);
    }

    #[test]
    fn bad_billing_weights_are_refused_by_field() {
        let mut config = ClusterConfig::default();
        config.policy.fairshare.billing_weights = IndexMap::from([("gpus".to_owned(), 1.0)]);
        let err = build_fairshare(&config).unwrap_err();
        assert_eq!(err.field, "policy.fairshare.billing_weights.gpus");
        config.policy.fairshare.billing_weights = IndexMap::from([("cpu".to_owned(), -1.0)]);
        let err = build_fairshare(&config).unwrap_err();
        assert!(err.message.contains("non-negative"), "{}", err.message);
    }
}
