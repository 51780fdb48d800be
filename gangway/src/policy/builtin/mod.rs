//! The built-in plug-ins: the default profile's (Slurm's multifactor priority, Kueue's victim
//! selection) and a zoo of research and operations policies, each selectable by name from
//! CLUSTER's `policy.plugins` ([`crate::policy::PluginSpec`]).

mod devices;
mod gpu_faults;
mod las;
mod least_fragmenting;
mod least_lost_work;
mod min_run_time;
mod multifactor;
mod shortest_first;
mod spread;
mod victims;

pub use devices::{FragmentationAware, NvlinkIslands};
pub use gpu_faults::AvoidGpuFaults;
pub use las::Las;
pub use least_fragmenting::LeastFragmenting;
pub use least_lost_work::LeastLostWork;
pub use min_run_time::MinRunTime;
pub use multifactor::Multifactor;
pub use shortest_first::ShortestFirst;
pub use spread::{BinPack, Spread};
pub use victims::{BorrowingFirst, LowerPriorityFirst, LowerTierFirst, NewestFirst, TierGuard};

use crate::policy::{Plugin, Profile};

/// Kueue's victim selection: the tier guard and the four victim orders, in order.
pub fn kueue_victims() -> Vec<Box<dyn Plugin>> {
    vec![
        Box::new(TierGuard),
        Box::new(LowerTierFirst),
        Box::new(BorrowingFirst),
        Box::new(LowerPriorityFirst),
        Box::new(NewestFirst),
    ]
}

impl Profile {
    /// The built-in policy: [`Multifactor`] with the configured weights, the engine's node
    /// choice ([`LeastFragmenting`], at the last score tier, so that a scorer added to this
    /// profile ranks before it), [`FragmentationAware`] and [`NvlinkIslands`] device
    /// choice, then [`kueue_victims`]; nodes and topology domains in the engine's best-fit
    /// order.
    ///
    /// ```
    /// let profile = gangway::policy::Profile::default_for_config();
    /// assert_eq!(profile.plugin_names().collect::<Vec<_>>(), ["multifactor",
    ///     "least_fragmenting", "fragmentation_aware", "nvlink_islands", "tier_guard",
    ///     "lower_tier_first", "borrowing_first", "lower_priority_first", "newest_first"]);
    /// ```
    pub fn default_for_config() -> Profile {
        let mut builder = Profile::builder()
            .plugin(Multifactor::from_config())
            .scorer(LeastFragmenting, LeastFragmenting::DEFAULT_TIER, 1.0)
            .plugin(FragmentationAware)
            .plugin(NvlinkIslands);
        for plugin in kueue_victims() {
            builder = builder.boxed(plugin, Default::default());
        }
        builder
            .build()
            .expect("the built-in plug-ins have distinct names")
    }
}
