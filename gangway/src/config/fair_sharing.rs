//! Fair sharing between the queues of a cohort tree (Kueue's Fair Sharing): the policy's
//! switch and preemption strategies, and the weights of queues and cohorts.
//!
//! The rules are in docs/protocol.md, section "Fair sharing between queues".

use serde::{Deserialize, Serialize};

/// `policy.fair_sharing`: on or off for every cohort tree whose root cohort does not say, and
/// the preemption strategies tried in order.
///
/// ```
/// use gangway::config::{FairSharingConfig, PreemptionStrategy};
/// let fs: FairSharingConfig = serde_json::from_str(r#"{"enabled": true}"#).unwrap();
/// assert!(fs.enabled);
/// assert_eq!(fs.preemption_strategies, [PreemptionStrategy::LessThanOrEqualToFinalShare,
///                                       PreemptionStrategy::LessThanInitialShare]);
/// assert!(FairSharingConfig::default().is_default());
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FairSharingConfig {
    /// On for every cohort tree whose root cohort sets no `fair_sharing.enabled` of its own.
    /// Default false.
    #[serde(default)]
    pub enabled: bool,
    /// Kueue's `preemptionStrategies`: `[less_than_or_equal_to_final_share]`,
    /// `[less_than_initial_share]` or both in that order (the default), as Kueue accepts.
    #[serde(default = "default_strategies")]
    pub preemption_strategies: Vec<PreemptionStrategy>,
}

impl Default for FairSharingConfig {
    fn default() -> Self {
        FairSharingConfig {
            enabled: false,
            preemption_strategies: default_strategies(),
        }
    }
}

impl FairSharingConfig {
    /// True when nothing differs from the defaults (then it is left out when serialized).
    ///
    /// ```
    /// use gangway::config::FairSharingConfig;
    /// assert!(!FairSharingConfig { enabled: true, ..Default::default() }.is_default());
    /// ```
    pub fn is_default(&self) -> bool {
        *self == FairSharingConfig::default()
    }

    /// Whether the strategy list is one Kueue accepts: `[le_final]`, `[lt_initial]` or
    /// `[le_final, lt_initial]`.
    ///
    /// ```
    /// use gangway::config::{FairSharingConfig, PreemptionStrategy::*};
    /// let mut fs = FairSharingConfig::default();
    /// assert!(fs.strategies_valid());
    /// fs.preemption_strategies = vec![LessThanInitialShare, LessThanOrEqualToFinalShare];
    /// assert!(!fs.strategies_valid());
    /// ```
    pub fn strategies_valid(&self) -> bool {
        use PreemptionStrategy::{LessThanInitialShare, LessThanOrEqualToFinalShare};
        matches!(
            self.preemption_strategies.as_slice(),
            [LessThanOrEqualToFinalShare]
                | [LessThanInitialShare]
                | [LessThanOrEqualToFinalShare, LessThanInitialShare]
        )
    }
}

fn default_strategies() -> Vec<PreemptionStrategy> {
    vec![
        PreemptionStrategy::LessThanOrEqualToFinalShare,
        PreemptionStrategy::LessThanInitialShare,
    ]
}

/// When a fair-sharing preemption may take a job from another queue. Kueue's names are
/// accepted as aliases.
///
/// ```
/// use gangway::config::PreemptionStrategy;
/// let s: PreemptionStrategy = serde_json::from_str(r#""LessThanInitialShare""#).unwrap();
/// assert_eq!(s, PreemptionStrategy::LessThanInitialShare);
/// assert_eq!(serde_json::to_string(&s).unwrap(), r#""less_than_initial_share""#);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PreemptionStrategy {
    /// The preemptor's queue, with the preemptor admitted, has a share no higher than the
    /// target's queue without the victim.
    #[serde(alias = "LessThanOrEqualToFinalShare")]
    LessThanOrEqualToFinalShare,
    /// The preemptor's queue, with the preemptor admitted, has a share strictly below the
    /// target's queue as it is.
    #[serde(alias = "LessThanInitialShare")]
    LessThanInitialShare,
}

/// A queue's or cohort's `fair_sharing`: its weight in its parent cohort and, on a root
/// cohort only, the switch for its tree.
///
/// ```
/// use gangway::config::NodeFairSharing;
/// let fs: NodeFairSharing = serde_json::from_str(r#"{"weight": 2}"#).unwrap();
/// assert_eq!(fs.weight, 2.0);
/// assert_eq!(fs.enabled, None);
/// let default: NodeFairSharing = serde_json::from_str("{}").unwrap();
/// assert_eq!(default.weight, 1.0);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeFairSharing {
    /// The weight (≥ 0): a share value is divided by it; 0 makes the share infinite while the
    /// node borrows. Default 1.
    #[serde(default = "unit_weight")]
    pub weight: f64,
    /// Root cohorts only: fair sharing on or off for this tree, overriding
    /// `policy.fair_sharing.enabled`. Default: the policy's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
}

impl Default for NodeFairSharing {
    fn default() -> Self {
        NodeFairSharing {
            weight: unit_weight(),
            enabled: None,
        }
    }
}

fn unit_weight() -> f64 {
    1.0
}
