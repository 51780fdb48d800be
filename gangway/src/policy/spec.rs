//! CLUSTER's `policy.plugins`: a profile named in JSON, for shim hosts and `gangway simulate
//! --cluster` (docs/policies.md lists every name and parameter).
//!
//! ```
//! use gangway::policy::spec::{PluginSpec, profile_from_specs};
//! let specs: Vec<PluginSpec> = serde_json::from_str(r#"[
//!     {"name": "las", "min_quantum_ms": 600000},
//!     {"name": "avoid_gpu_faults", "hours": 24},
//!     {"name": "spread", "tier": 0, "weight": 2.0},
//!     {"name": "kueue_victims"}]"#).unwrap();
//! let profile = profile_from_specs(&specs).unwrap();
//! assert_eq!(profile.plugin_names().count(), 8);
//! ```

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::policy::builtin::{
    AvoidGpuFaults, BinPack, BorrowingFirst, FragmentationAware, Las, LeastFragmenting,
    LeastLostWork, LowerPriorityFirst, LowerTierFirst, MinRunTime, Multifactor, NewestFirst,
    NvlinkIslands, ShortestFirst, Spread, TierGuard, kueue_victims,
};
use crate::policy::{Placement, Plugin, Profile, ProfileError};

/// One entry of `policy.plugins`: a built-in plug-in's name, where it applies, and its
/// parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PluginSpec {
    /// The built-in's name.
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
pub struct SpecError {
    /// The entry's position: the first entry at which the list stops making a profile (a bad
    /// tier or weight, a global hook for a partition, a name already listed).
    pub index: usize,
    /// What is wrong.
    pub message: String,
}

/// The names `policy.plugins` accepts.
pub const BUILTIN_NAMES: [&str; 17] = [
    "multifactor",
    "least_fragmenting",
    "fragmentation_aware",
    "nvlink_islands",
    "shortest_first",
    "las",
    "min_run_time",
    "least_lost_work",
    "spread",
    "binpack",
    "avoid_gpu_faults",
    "tier_guard",
    "lower_tier_first",
    "borrowing_first",
    "lower_priority_first",
    "newest_first",
    "kueue_victims",
];

/// The profile `specs` name, in order.
///
/// ```
/// use gangway::policy::spec::{PluginSpec, profile_from_specs};
/// let specs: Vec<PluginSpec> = serde_json::from_str(r#"[
///     {"name": "spread", "tier": 9}, {"name": "las"}]"#).unwrap();
/// assert_eq!(profile_from_specs(&specs).unwrap_err().index, 0);
/// ```
pub fn profile_from_specs(specs: &[PluginSpec]) -> Result<Profile, SpecError> {
    let mut listed: Vec<(Box<dyn Plugin>, Placement)> = Vec::new();
    for (index, spec) in specs.iter().enumerate() {
        let error = |message: String| SpecError { index, message };
        let placement = Placement {
            partition: spec.partition.clone(),
            tier: spec.tier,
            weight: spec.weight,
        };
        for plugin in plugins_of(spec).map_err(error)? {
            listed.push((plugin, placement.clone()));
        }
        // The list so far must make a profile, so that an error names the entry that broke it
        // (a list is a few entries long: building it once per entry costs nothing).
        build(listed.clone()).map_err(|e| error(e.to_string()))?;
    }
    build(listed).map_err(|e| SpecError {
        index: specs.len().saturating_sub(1),
        message: e.to_string(),
    })
}

fn build(listed: Vec<(Box<dyn Plugin>, Placement)>) -> Result<Profile, ProfileError> {
    listed
        .into_iter()
        .fold(Profile::builder(), |builder, (plugin, placement)| {
            builder.boxed(plugin, placement)
        })
        .build()
}

/// Parameters of `multifactor`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MultifactorParams {
    /// Fixed weights instead of `policy.priority.weights`.
    #[serde(default)]
    weights: Option<crate::config::PriorityWeights>,
}

/// Parameters of `min_run_time`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MinRunTimeParams {
    min_ms: u64,
}

/// Parameters of `avoid_gpu_faults`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FaultParams {
    #[serde(default)]
    hours: Option<u64>,
    #[serde(default)]
    within_ms: Option<u64>,
}

/// No parameters.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NoParams {}

/// The entry's parameters; an error names the plug-in and the parameter's path.
fn params<T: for<'de> Deserialize<'de>>(spec: &PluginSpec) -> Result<T, String> {
    serde_path_to_error::deserialize(Value::Object(spec.params.clone())).map_err(|e| {
        let path = e.path().to_string();
        match path.as_str() {
            "." => format!("{}: {}", spec.name, e.inner()),
            _ => format!("{}: {path}: {}", spec.name, e.inner()),
        }
    })
}

/// The plug-ins one entry names (`kueue_victims` names five).
fn plugins_of(spec: &PluginSpec) -> Result<Vec<Box<dyn Plugin>>, String> {
    let one = |plugin: Box<dyn Plugin>| Ok(vec![plugin]);
    let bare = |plugin: Box<dyn Plugin>| {
        params::<NoParams>(spec)?;
        Ok(vec![plugin])
    };
    match spec.name.as_str() {
        "multifactor" => {
            let p: MultifactorParams = params(spec)?;
            one(Box::new(match p.weights {
                Some(weights) => Multifactor::with_weights(weights),
                None => Multifactor::from_config(),
            }))
        }
        "las" => {
            let las: Las = params(spec)?;
            if !las.thresholds_gpu_ms.is_sorted() {
                return Err("las: thresholds_gpu_ms must ascend".to_string());
            }
            one(Box::new(las))
        }
        "min_run_time" => {
            let p: MinRunTimeParams = params(spec)?;
            one(Box::new(MinRunTime::new(p.min_ms)))
        }
        "avoid_gpu_faults" => match params::<FaultParams>(spec)? {
            FaultParams {
                hours: Some(hours),
                within_ms: None,
            } => one(Box::new(AvoidGpuFaults::hours(hours))),
            FaultParams {
                hours: None,
                within_ms: Some(ms),
            } => one(Box::new(AvoidGpuFaults::within_ms(ms))),
            _ => Err("avoid_gpu_faults: give exactly one of hours and within_ms".to_string()),
        },
        "least_fragmenting" => bare(Box::new(LeastFragmenting)),
        "fragmentation_aware" => bare(Box::new(FragmentationAware)),
        "nvlink_islands" => bare(Box::new(NvlinkIslands)),
        "shortest_first" => bare(Box::new(ShortestFirst)),
        "least_lost_work" => bare(Box::new(LeastLostWork)),
        "spread" => bare(Box::new(Spread)),
        "binpack" => bare(Box::new(BinPack)),
        "tier_guard" => bare(Box::new(TierGuard)),
        "lower_tier_first" => bare(Box::new(LowerTierFirst)),
        "borrowing_first" => bare(Box::new(BorrowingFirst)),
        "lower_priority_first" => bare(Box::new(LowerPriorityFirst)),
        "newest_first" => bare(Box::new(NewestFirst)),
        "kueue_victims" => {
            params::<NoParams>(spec)?;
            Ok(kueue_victims())
        }
        other => Err(format!(
            "unknown plug-in {other:?}; the built-ins are {}",
            BUILTIN_NAMES.join(", ")
        )),
    }
}
