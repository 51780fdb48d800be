//! [`Registry`]: the plug-ins `policy.plugins` may name: the built-ins, and a host's own.

use std::fmt;
use std::sync::{Arc, OnceLock};

use indexmap::IndexMap;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::ClusterConfig;
use crate::error::ConfigError;
use crate::policy::builtin::{
    AvoidGpuFaults, BinPack, BorrowingFirst, FragmentationAware, Las, LeastFragmenting,
    LeastLostWork, LowerPriorityFirst, LowerTierFirst, MinRunTime, Multifactor, NewestFirst,
    NvlinkIslands, ShortestFirst, Spread, TierGuard, kueue_victims,
};
use crate::policy::spec::{PluginSpec, SpecError};
use crate::policy::{Placement, Plugin, Profile, ProfileError};

/// Makes the plug-ins of one `policy.plugins` entry from its parameters: a message (without
/// the entry's name) when they do not make any.
type Maker = Arc<dyn Fn(&Map<String, Value>) -> Result<Vec<Box<dyn Plugin>>, String> + Send + Sync>;

/// One registered name.
#[derive(Clone)]
struct Entry {
    builtin: bool,
    make: Maker,
}

/// The plug-ins `policy.plugins` may name, each with what makes it from the entry's
/// parameters: the built-ins ([`Registry::builtin`]) and those a host registers
/// ([`Registry::register`]), in the order registered. A shim made with
/// [`crate::protocol::Shim::with_registry`] lets its clients name the host's plug-ins in
/// their configuration; a name no one registered is refused with `invalid_config`, naming the
/// entry (`policy.plugins[i]`).
///
/// ```
/// use gangway::policy::{FnPlugin, Registry};
/// use gangway::ClusterConfig;
/// use serde::Deserialize;
///
/// /// `{"name": "team_nodes", "team": T}`: the team's nodes first.
/// #[derive(Deserialize)]
/// #[serde(deny_unknown_fields)]
/// struct TeamNodes { team: String }
///
/// let mut registry = Registry::builtin();
/// registry.register("team_nodes", |p: TeamNodes| {
///     Ok(FnPlugin::new("team_nodes").score_node(move |_, _, node, _| {
///         f64::from(node.labels().any(|(k, v)| k == "team" && v == p.team))
///     }))
/// }).unwrap();
/// assert!(registry.contains("team_nodes") && registry.contains("las"));
///
/// let cluster: ClusterConfig = serde_json::from_str(r#"{"nodes": [], "policy": {"plugins": [
///     {"name": "team_nodes", "team": "vision"}, {"name": "las"}]}}"#).unwrap();
/// let profile = registry.profile_for(&cluster).unwrap();
/// assert_eq!(profile.plugin_names().collect::<Vec<_>>(), ["team_nodes", "las"]);
///
/// // The built-in registry does not know it: the same typed error as any unknown name.
/// let error = Registry::builtin().profile_for(&cluster).unwrap_err();
/// assert_eq!(error.field, "policy.plugins[0]");
/// assert!(error.message.starts_with("unknown plug-in \"team_nodes\""));
/// ```
#[derive(Clone)]
pub struct Registry {
    entries: IndexMap<String, Entry>,
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

/// Why a plug-in cannot be registered.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// The name is registered already (a built-in's, or one registered before).
    #[error("a plug-in is registered as {0:?} already")]
    Taken(String),
    /// The name is empty.
    #[error("a plug-in's name cannot be empty")]
    EmptyName,
}

/// The parameters of a plug-in that takes none: an entry with any is refused.
///
/// ```
/// use gangway::policy::{FnPlugin, NoParams, PluginSpec, Registry};
/// let mut registry = Registry::empty();
/// registry.register("quiet", |_: NoParams| Ok(FnPlugin::new("quiet"))).unwrap();
/// let specs: Vec<PluginSpec> = serde_json::from_str(r#"[{"name": "quiet", "volume": 3}]"#).unwrap();
/// let error = registry.profile_from_specs(&specs).unwrap_err();
/// assert_eq!(error.message, "quiet: volume: unknown field `volume`, there are no fields");
/// ```
#[derive(Clone, Copy, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

impl Registry {
    /// A registry of no plug-in (for a host that offers only its own).
    ///
    /// ```
    /// assert_eq!(gangway::policy::Registry::empty().names().count(), 0);
    /// ```
    pub fn empty() -> Self {
        Registry {
            entries: IndexMap::new(),
        }
    }

    /// The built-in plug-ins, every name docs/policies.md lists: what `policy.plugins` accepts
    /// by default.
    ///
    /// ```
    /// let registry = gangway::policy::Registry::builtin();
    /// let names: Vec<&str> = registry.names().collect();
    /// assert_eq!(names.len(), 17);
    /// assert_eq!((names[0], names[16]), ("multifactor", "kueue_victims"));
    /// ```
    pub fn builtin() -> Self {
        builtin_registry().clone()
    }

    /// Registers `make` under `name`: an entry `{"name": name, ...}` of `policy.plugins` gets
    /// the plug-in `make` returns for its parameters (the entry less `name`, `partition`,
    /// `tier` and `weight`, deserialized as `T`; [`NoParams`] for none). Parameters that do
    /// not deserialize, an `Err` of `make`, and a plug-in not named `name` are refused with
    /// the entry's position, as for the built-ins. A taken or empty name is an error, and
    /// the registry stays as it was.
    ///
    /// ```
    /// use gangway::policy::{FnPlugin, NoParams, PluginSpec, Registry, RegistryError};
    /// let mut registry = Registry::builtin();
    /// let made = registry.register("las", |_: NoParams| Ok(FnPlugin::new("las")));
    /// assert_eq!(made.unwrap_err(), RegistryError::Taken("las".into()));
    /// // A plug-in must carry the name it is registered under.
    /// registry.register("alias", |_: NoParams| Ok(FnPlugin::new("other"))).unwrap();
    /// let specs: Vec<PluginSpec> = serde_json::from_str(r#"[{"name": "alias"}]"#).unwrap();
    /// let error = registry.profile_from_specs(&specs).unwrap_err();
    /// assert_eq!(error.message, "alias: the plug-in registered as \"alias\" is named \"other\"");
    /// ```
    pub fn register<T, P>(
        &mut self,
        name: impl Into<String>,
        make: impl Fn(T) -> Result<P, String> + Send + Sync + 'static,
    ) -> Result<&mut Self, RegistryError>
    where
        T: DeserializeOwned,
        P: Plugin,
    {
        let name = name.into();
        let registered = name.clone();
        self.insert(
            name,
            false,
            Arc::new(move |params| {
                let plugin = make(deserialize(params)?)?;
                match plugin.name() == registered {
                    true => Ok(vec![Box::new(plugin) as Box<dyn Plugin>]),
                    false => Err(format!(
                        "the plug-in registered as {registered:?} is named {:?}",
                        plugin.name()
                    )),
                }
            }),
        )
    }

    fn insert(
        &mut self,
        name: String,
        builtin: bool,
        make: Maker,
    ) -> Result<&mut Self, RegistryError> {
        if name.is_empty() {
            return Err(RegistryError::EmptyName);
        }
        if self.entries.contains_key(&name) {
            return Err(RegistryError::Taken(name));
        }
        self.entries.insert(name, Entry { builtin, make });
        Ok(self)
    }

    /// The registered names, in the order registered (the built-ins first in
    /// [`Registry::builtin`]).
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
    }

    /// Whether `name` is registered.
    pub fn contains(&self, name: &str) -> bool {
        self.entries.contains_key(name)
    }

    /// The profile `specs` name, in order; the error names the first entry at which the list
    /// stops making a profile (an unknown name or parameter, a bad tier or weight, a global
    /// hook for a partition, a name already listed).
    ///
    /// ```
    /// use gangway::policy::{PluginSpec, Registry};
    /// let specs: Vec<PluginSpec> =
    ///     serde_json::from_str(r#"[{"name": "spread", "tier": 9}, {"name": "las"}]"#).unwrap();
    /// assert_eq!(Registry::builtin().profile_from_specs(&specs).unwrap_err().index, 0);
    /// ```
    pub fn profile_from_specs(&self, specs: &[PluginSpec]) -> Result<Profile, SpecError> {
        let mut listed: Vec<(Box<dyn Plugin>, Placement)> = Vec::new();
        for (index, spec) in specs.iter().enumerate() {
            let error = |message: String| SpecError { index, message };
            let placement = Placement {
                partition: spec.partition.clone(),
                tier: spec.tier,
                weight: spec.weight,
            };
            for plugin in self.plugins_of(spec).map_err(error)? {
                listed.push((plugin, placement.clone()));
            }
            // The list so far must make a profile, so that an error names the entry that
            // broke it (a list is a few entries long: building it once per entry costs
            // nothing).
            build(listed.clone()).map_err(|e| error(e.to_string()))?;
        }
        build(listed).map_err(|e| SpecError {
            index: specs.len().saturating_sub(1),
            message: e.to_string(),
        })
    }

    /// The profile CLUSTER's `policy.plugins` names, or the default one
    /// ([`Profile::default_for_config`]) without it; an error names the field
    /// (`policy.plugins[i]`, or `policy.plugins[i].partition` for a partition the
    /// configuration does not have).
    ///
    /// ```
    /// let cluster: gangway::ClusterConfig = serde_json::from_str(r#"{"nodes": [],
    ///     "policy": {"plugins": [{"name": "las", "partition": "tpu"}]}}"#).unwrap();
    /// let err = gangway::policy::Registry::builtin().profile_for(&cluster).unwrap_err();
    /// assert_eq!(err.field, "policy.plugins[0].partition");
    /// ```
    pub fn profile_for(&self, config: &ClusterConfig) -> Result<Profile, ConfigError> {
        let Some(specs) = &config.policy.plugins else {
            return Ok(Profile::default_for_config());
        };
        let configured = |name: &str| match config.partitions.is_empty() {
            true => name == "default",
            false => config.partitions.iter().any(|p| p.name == name),
        };
        for (index, spec) in specs.iter().enumerate() {
            if let Some(partition) = spec.partition.as_deref().filter(|p| !configured(p)) {
                let message = format!("partition {partition:?} is not configured");
                return Err(ConfigError::new(
                    format!("policy.plugins[{index}].partition"),
                    message,
                ));
            }
        }
        self.profile_from_specs(specs)
            .map_err(|e| ConfigError::new(format!("policy.plugins[{}]", e.index), e.message))
    }

    /// The plug-ins one entry names (`kueue_victims` names five).
    fn plugins_of(&self, spec: &PluginSpec) -> Result<Vec<Box<dyn Plugin>>, String> {
        let Some(entry) = self.entries.get(&spec.name) else {
            return Err(self.unknown(&spec.name));
        };
        (entry.make)(&spec.params).map_err(|message| format!("{}: {message}", spec.name))
    }

    /// The refusal of a name no one registered: the names there are, built-ins first.
    fn unknown(&self, name: &str) -> String {
        let names = |builtin: bool| {
            self.entries
                .iter()
                .filter(|(_, entry)| entry.builtin == builtin)
                .map(|(name, _)| name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let (builtins, hosts) = (names(true), names(false));
        let mut message = format!("unknown plug-in {name:?}");
        if !builtins.is_empty() {
            message += &format!("; the built-ins are {builtins}");
        }
        if !hosts.is_empty() {
            message += &format!("; the host's are {hosts}");
        }
        message
    }
}

/// The built-in registry, made once.
pub(crate) fn builtin_registry() -> &'static Registry {
    static BUILTIN: OnceLock<Registry> = OnceLock::new();
    BUILTIN.get_or_init(|| {
        let mut registry = Registry::empty();
        let mut add = |name: &str, make: Maker| {
            registry
                .insert(name.to_string(), true, make)
                .map(|_| ())
                .expect("the built-ins have distinct names");
        };
        /// A built-in without parameters.
        fn bare<P: Plugin + Default>() -> Maker {
            Arc::new(|params| {
                deserialize::<NoParams>(params)?;
                Ok(vec![Box::new(P::default())])
            })
        }
        add(
            Multifactor::NAME,
            Arc::new(|params| {
                let p: MultifactorParams = deserialize(params)?;
                Ok(vec![Box::new(match p.weights {
                    Some(weights) => Multifactor::with_weights(weights),
                    None => Multifactor::from_config(),
                })])
            }),
        );
        add(LeastFragmenting::NAME, bare::<LeastFragmenting>());
        add(FragmentationAware::NAME, bare::<FragmentationAware>());
        add(NvlinkIslands::NAME, bare::<NvlinkIslands>());
        add(ShortestFirst::NAME, bare::<ShortestFirst>());
        add(
            Las::NAME,
            Arc::new(|params| {
                let las: Las = deserialize(params)?;
                if !las.thresholds_gpu_ms.is_sorted() {
                    return Err("thresholds_gpu_ms must ascend".to_string());
                }
                Ok(vec![Box::new(las)])
            }),
        );
        add(
            MinRunTime::NAME,
            Arc::new(|params| {
                let p: MinRunTimeParams = deserialize(params)?;
                Ok(vec![Box::new(MinRunTime::new(p.min_ms))])
            }),
        );
        add(LeastLostWork::NAME, bare::<LeastLostWork>());
        add(Spread::NAME, bare::<Spread>());
        add(BinPack::NAME, bare::<BinPack>());
        add(
            AvoidGpuFaults::NAME,
            Arc::new(|params| match deserialize::<FaultParams>(params)? {
                FaultParams {
                    hours: Some(hours),
                    within_ms: None,
                } => Ok(vec![Box::new(AvoidGpuFaults::hours(hours))]),
                FaultParams {
                    hours: None,
                    within_ms: Some(ms),
                } => Ok(vec![Box::new(AvoidGpuFaults::within_ms(ms))]),
                _ => Err("give exactly one of hours and within_ms".to_string()),
            }),
        );
        add(TierGuard::NAME, bare::<TierGuard>());
        add(LowerTierFirst::NAME, bare::<LowerTierFirst>());
        add(BorrowingFirst::NAME, bare::<BorrowingFirst>());
        add(LowerPriorityFirst::NAME, bare::<LowerPriorityFirst>());
        add(NewestFirst::NAME, bare::<NewestFirst>());
        add(
            KUEUE_VICTIMS,
            Arc::new(|params| {
                deserialize::<NoParams>(params)?;
                Ok(kueue_victims())
            }),
        );
        registry
    })
}

/// The name of the entry that lists Kueue's victim selection ([`kueue_victims`]).
const KUEUE_VICTIMS: &str = "kueue_victims";

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

/// An entry's parameters as `T`; an error names the parameter's path.
fn deserialize<T: DeserializeOwned>(params: &Map<String, Value>) -> Result<T, String> {
    serde_path_to_error::deserialize(Value::Object(params.clone())).map_err(|e| {
        let path = e.path().to_string();
        match path.as_str() {
            "." => e.inner().to_string(),
            _ => format!("{path}: {}", e.inner()),
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::FnPlugin;

    fn specs(json: &str) -> Vec<PluginSpec> {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn the_builtin_names_are_each_plugins_own() {
        let registry = Registry::builtin();
        for name in registry.names().filter(|n| *n != KUEUE_VICTIMS) {
            // Each makes one plug-in of its name with its parameters (or none).
            let params = match name {
                "min_run_time" => r#", "min_ms": 1"#,
                "avoid_gpu_faults" => r#", "hours": 1"#,
                _ => "",
            };
            let made = registry
                .plugins_of(&specs(&format!(r#"[{{"name": "{name}"{params}}}]"#))[0])
                .unwrap();
            let made: Vec<&str> = made.iter().map(|p| p.name()).collect();
            assert_eq!(made, [name]);
        }
        let victims = registry.plugins_of(&specs(r#"[{"name": "kueue_victims"}]"#)[0]);
        assert_eq!(victims.unwrap().len(), 5);
    }

    #[test]
    fn a_host_plugin_is_listed_after_the_builtins_and_named_in_refusals() {
        let mut registry = Registry::builtin();
        registry
            .register("mine", |_: NoParams| Ok(FnPlugin::new("mine")))
            .unwrap();
        assert_eq!(registry.names().last(), Some("mine"));
        let error = registry
            .profile_from_specs(&specs(r#"[{"name": "las"}, {"name": "nope"}]"#))
            .unwrap_err();
        assert_eq!(error.index, 1);
        assert!(
            error
                .message
                .ends_with("kueue_victims; the host's are mine"),
            "{error}"
        );
        // A refused registration changes nothing.
        let before: Vec<String> = registry.names().map(String::from).collect();
        let taken = registry.register("mine", |_: NoParams| Ok(FnPlugin::new("mine")));
        assert_eq!(taken.unwrap_err(), RegistryError::Taken("mine".into()));
        let empty = registry.register("", |_: NoParams| Ok(FnPlugin::new("")));
        assert_eq!(empty.unwrap_err(), RegistryError::EmptyName);
        assert_eq!(registry.names().collect::<Vec<_>>(), before);
        // A maker's own error is refused with the entry's position and its name.
        registry
            .register("picky", |_: NoParams| {
                Err::<FnPlugin, _>("not today".into())
            })
            .unwrap();
        let error = registry
            .profile_from_specs(&specs(r#"[{"name": "picky"}]"#))
            .unwrap_err();
        assert_eq!(
            (error.index, error.message.as_str()),
            (0, "picky: not today")
        );
    }

    #[test]
    fn an_empty_registry_knows_only_the_hosts() {
        let mut registry = Registry::empty();
        let error = registry
            .profile_from_specs(&specs(r#"[{"name": "las"}]"#))
            .unwrap_err();
        assert_eq!(error.message, "unknown plug-in \"las\"");
        registry
            .register("mine", |_: NoParams| Ok(FnPlugin::new("mine")))
            .unwrap();
        let error = registry
            .profile_from_specs(&specs(r#"[{"name": "las"}]"#))
            .unwrap_err();
        assert_eq!(
            error.message,
            "unknown plug-in \"las\"; the host's are mine"
        );
    }
}
