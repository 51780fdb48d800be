//! CLUSTER's `policy.plugins`: a profile named in JSON, for shim hosts and `gangway simulate
//! --cluster` (docs/policies.md lists every name and parameter).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One entry of `policy.plugins`: a registered plug-in's name (a built-in's, or a host's:
/// [`crate::policy::Registry`]), where it applies, and its parameters. A list of them makes a
/// profile through [`Registry::profile_from_specs`](crate::policy::Registry::profile_from_specs)
/// ([`Registry::builtin`](crate::policy::Registry::builtin) for the built-in plug-ins).
///
/// ```
/// use gangway::policy::{PluginSpec, Registry};
/// let specs: Vec<PluginSpec> = serde_json::from_str(r#"[
///     {"name": "las", "min_quantum_ms": 600000},
///     {"name": "avoid_gpu_faults", "hours": 24},
///     {"name": "spread", "tier": 0, "weight": 2.0},
///     {"name": "kueue_victims"}]"#).unwrap();
/// let profile = Registry::builtin().profile_from_specs(&specs).unwrap();
/// assert_eq!(profile.plugin_names().count(), 8);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PluginSpec {
    /// The registered name.
    pub name: String,
    /// Only for jobs of this partition (placement and victim hooks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
    /// Score tier. Default 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tier: usize,
    /// Score weight. Default 1.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub weight: f64,
    /// The plug-in's own parameters.
    #[serde(flatten)]
    pub params: Map<String, Value>,
}

fn is_zero(tier: &usize) -> bool {
    *tier == 0
}

fn one() -> f64 {
    1.0
}

fn is_one(weight: &f64) -> bool {
    *weight == 1.0
}

/// Why `policy.plugins` does not make a profile: the entry's position and what is wrong.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("policy.plugins[{index}]: {message}")]
#[non_exhaustive]
pub struct SpecError {
    /// The entry's position: the first entry at which the list stops making a profile (a bad
    /// tier or weight, a global hook for a partition, a name already listed).
    pub index: usize,
    /// What is wrong.
    pub message: String,
}
