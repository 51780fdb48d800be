//! Interning of resource keys (`cpu`, `memory_mib`, `gpu`, `gpu:MODEL`, `mig:PROFILE`) into
//! [`KeyId`]s.

use super::vector::{KeyId, MAX_KEYS, QuotaVec};
use crate::error::ConfigError;

/// The resource keys of one tree, in [`KeyId`] order: `cpu`, `memory_mib`, `gpu`, then one
/// `gpu:MODEL` key per model in first-seen order, and `mig:PROFILE` keys as configured.
#[derive(Clone, Debug)]
pub(crate) struct ResourceKeys {
    names: Vec<String>,
}

impl ResourceKeys {
    /// The three keys every tree has.
    pub(crate) fn new() -> Self {
        ResourceKeys {
            names: vec!["cpu".into(), "memory_mib".into(), "gpu".into()],
        }
    }

    /// The number of interned keys.
    pub(crate) fn len(&self) -> usize {
        self.names.len()
    }

    /// The name of `key`.
    pub(crate) fn name(&self, key: KeyId) -> &str {
        self.names.get(key.index()).map_or("", String::as_str)
    }

    /// The id of an interned key name.
    pub(crate) fn get(&self, name: &str) -> Option<KeyId> {
        let index = self.names.iter().position(|n| n == name)?;
        KeyId::from_index(index)
    }

    /// The id of the `gpu:MODEL` key for `model`, without building the key string.
    pub(super) fn model(&self, model: &str) -> Option<KeyId> {
        let index = self
            .names
            .iter()
            .position(|n| n.strip_prefix("gpu:") == Some(model))?;
        KeyId::from_index(index)
    }

    /// Whether `key` is a `gpu:MODEL` key.
    pub(super) fn is_model(&self, key: KeyId) -> bool {
        self.name(key).starts_with("gpu:")
    }

    /// The id of the `mig:PROFILE` key for `profile`, without building the key string.
    fn mig(&self, profile: &str) -> Option<KeyId> {
        let index = self
            .names
            .iter()
            .position(|n| n.strip_prefix("mig:") == Some(profile))?;
        KeyId::from_index(index)
    }

    /// Adds `slices` MIG slices of `profile` to `v` under `mig:PROFILE` where that key exists,
    /// one unit (1000 thousandths) per slice. Slices count toward no GPU key.
    pub(crate) fn add_mig(&self, v: &mut QuotaVec, profile: &str, slices: u64) {
        if let Some(key) = self.mig(profile) {
            v[key] = v[key].saturating_add(slices.saturating_mul(1000));
        }
    }

    /// Interns `name` after checking it is a valid key; `field` names the configuration field
    /// in error messages.
    pub(crate) fn intern(&mut self, name: &str, field: &str) -> Result<KeyId, ConfigError> {
        if !is_quota_key(name) {
            return Err(ConfigError::new(
                field,
                format!(
                    "unknown resource key \"{name}\" (expected cpu, memory_mib, gpu, gpu:MODEL \
                     or mig:PROFILE)"
                ),
            ));
        }
        if let Some(key) = self.get(name) {
            return Ok(key);
        }
        let key = KeyId::from_index(self.names.len()).ok_or_else(|| {
            ConfigError::new(
                field,
                format!(
                    "too many resource keys at \"{name}\" (at most {MAX_KEYS}: cpu, memory_mib, \
                     gpu and {} GPU models)",
                    MAX_KEYS - 3
                ),
            )
        })?;
        self.names.push(name.to_owned());
        Ok(key)
    }

    /// A job's demand: `cpu_milli` millicpus, `memory_mib` MiB and GPUs per model in
    /// thousandths. GPUs count toward `gpu` and toward `gpu:MODEL` where that key exists.
    pub(crate) fn demand(
        &self,
        cpu_milli: u64,
        memory_mib: u64,
        gpus_by_model: &[(&str, u64)],
    ) -> QuotaVec {
        let mut v = self.demand_on(cpu_milli, memory_mib, 0, None);
        for &(model, milli) in gpus_by_model {
            add_gpus(&mut v, milli, self.model(model));
        }
        v
    }

    /// [`ResourceKeys::demand`] with all `gpu_milli` GPU thousandths on one model, whose
    /// `gpu:MODEL` key (if any) is `model_key`.
    pub(crate) fn demand_on(
        &self,
        cpu_milli: u64,
        memory_mib: u64,
        gpu_milli: u64,
        model_key: Option<KeyId>,
    ) -> QuotaVec {
        let mut v = QuotaVec::ZERO;
        v[KeyId::CPU] = cpu_milli;
        v[KeyId::MEMORY_MIB] = memory_mib.saturating_mul(1000);
        add_gpus(&mut v, gpu_milli, model_key);
        v
    }
}

/// Counts `milli` GPU thousandths toward `gpu` and toward the model's key, if any.
fn add_gpus(v: &mut QuotaVec, milli: u64, model_key: Option<KeyId>) {
    v[KeyId::GPU] = v[KeyId::GPU].saturating_add(milli);
    if let Some(key) = model_key {
        v[key] = v[key].saturating_add(milli);
    }
}

/// Whether `name` is a quota resource key: `cpu`, `memory_mib`, `gpu`, `gpu:MODEL` or
/// `mig:PROFILE`.
pub(crate) fn is_quota_key(name: &str) -> bool {
    matches!(name, "cpu" | "memory_mib" | "gpu")
        || ["gpu:", "mig:"].iter().any(|prefix| {
            name.strip_prefix(prefix)
                .is_some_and(|rest| !rest.is_empty())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intern_accepts_the_four_key_forms_and_dedups() {
        let mut keys = ResourceKeys::new();
        assert_eq!(keys.intern("cpu", "f"), Ok(KeyId::CPU));
        assert_eq!(keys.intern("gpu", "f"), Ok(KeyId::GPU));
        let a100 = keys.intern("gpu:a100", "f").unwrap();
        assert_eq!(keys.intern("gpu:a100", "f"), Ok(a100));
        assert_eq!(keys.len(), 4);
        assert_eq!(keys.name(a100), "gpu:a100");
    }

    #[test]
    fn intern_refuses_unknown_and_empty_model_keys() {
        let mut keys = ResourceKeys::new();
        let err = keys.intern("disk", "queues[0].quota").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("queues[0].quota: unknown resource key \"disk\""),
            "{err}"
        );
        assert!(keys.intern("gpu:", "f").is_err());
        assert!(keys.intern("memory", "f").is_err());
    }

    #[test]
    fn intern_refuses_more_than_max_keys() {
        let mut keys = ResourceKeys::new();
        for i in 0..MAX_KEYS - 3 {
            keys.intern(&format!("gpu:m{i}"), "f").unwrap();
        }
        let err = keys
            .intern("gpu:one-too-many", "cohorts[1].quota")
            .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("cohorts[1].quota: too many resource keys"),
            "{err}"
        );
    }

    /// MIG slices count one unit each under their own `mig:PROFILE` key and toward no other
    /// key (no GPU key, no other profile); a profile the tree has no key for adds nothing.
    #[test]
    fn mig_slices_count_under_their_profile_key_alone() {
        let mut keys = ResourceKeys::new();
        keys.intern("gpu:a100", "f").unwrap();
        let small = keys.intern("mig:1g.10gb", "f").unwrap();
        let large = keys.intern("mig:3g.40gb", "f").unwrap();
        let mut v = keys.demand(0, 0, &[]);
        keys.add_mig(&mut v, "3g.40gb", 2);
        keys.add_mig(&mut v, "3g.40gb", 1);
        keys.add_mig(&mut v, "7g.80gb", 1);
        let mut expected = QuotaVec::ZERO;
        expected[large] = 3000;
        assert_eq!(v, expected);
        keys.add_mig(&mut v, "1g.10gb", 1);
        expected[small] = 1000;
        assert_eq!(v, expected);
    }

    #[test]
    fn demand_counts_gpus_toward_gpu_and_their_model() {
        let mut keys = ResourceKeys::new();
        let a100 = keys.intern("gpu:a100", "f").unwrap();
        let d = keys.demand(1500, 2, &[("a100", 2000), ("h100", 1000)]);
        assert_eq!(d[KeyId::CPU], 1500);
        assert_eq!(d[KeyId::MEMORY_MIB], 2000);
        assert_eq!(d[KeyId::GPU], 3000);
        assert_eq!(d[a100], 2000);
    }
}
