//! The choices a trace reader makes where the trace leaves them open: the base priority of an
//! Alibaba pod's QoS class, and the time limit of an SWF job that requested none. Each
//! default keeps what the readers did before the choice existed.

use std::collections::BTreeMap;
use std::str::FromStr;

use super::ParamError;

/// How the readers treat what a trace leaves open ([`super::read_trace`],
/// [`super::swf::read_with`], [`super::alibaba::read_with`]).
///
/// ```
/// use gangway_sim::workload::{NonPositiveRequest, QosPriority, ReaderRules};
/// let rules = ReaderRules::default();
/// assert_eq!(rules.qos_priority, QosPriority::None);
/// assert_eq!(rules.non_positive_request, NonPositiveRequest::RunTime);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReaderRules {
    /// Alibaba: the base priority of a pod's `qos` class. Default: none (every pod 0).
    pub qos_priority: QosPriority,
    /// SWF: the time limit of a job whose requested time (field 9) is ≤ 0. Default: its run
    /// time.
    pub non_positive_request: NonPositiveRequest,
}

/// The base priority of an Alibaba pod's QoS class (`qos` column: `Guaranteed`, `LS`,
/// `Burstable`, `BE` in the published lists; `openb_pod_list_multigpu50.csv` has no such
/// column). Higher first, as [`gangway::JobSpec::priority`].
///
/// Parsed from `none`, `default` or `CLASS=N,...` (classes as the trace spells them, N an
/// integer); a class the mapping does not name gets 0.
///
/// ```
/// use gangway_sim::workload::QosPriority;
/// let standard: QosPriority = "default".parse().unwrap();
/// assert_eq!((standard.of("Guaranteed"), standard.of("LS"), standard.of("BE")), (3, 2, 0));
/// let own: QosPriority = "LS=10,BE=-1".parse().unwrap();
/// assert_eq!((own.of("LS"), own.of("BE"), own.of("Burstable")), (10, -1, 0));
/// assert_eq!(QosPriority::None.of("LS"), 0);
/// assert!("LS=high".parse::<QosPriority>().unwrap_err().to_string().contains("LS=high"));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum QosPriority {
    /// Every pod gets priority 0, whatever its class: the replay the golden digests pin.
    #[default]
    None,
    /// Each named class gets its priority; any other 0.
    Map(BTreeMap<String, i32>),
}

impl QosPriority {
    /// The mapping `default` names: Guaranteed 3, LS (latency-sensitive) 2, Burstable 1,
    /// BE (best effort) 0, the order of Kubernetes' and Alibaba's QoS classes.
    pub fn standard() -> QosPriority {
        QosPriority::Map(
            [("Guaranteed", 3), ("LS", 2), ("Burstable", 1), ("BE", 0)]
                .into_iter()
                .map(|(class, priority)| (class.to_string(), priority))
                .collect(),
        )
    }

    /// The base priority of class `qos`.
    pub fn of(&self, qos: &str) -> i32 {
        match self {
            QosPriority::None => 0,
            QosPriority::Map(map) => map.get(qos).copied().unwrap_or(0),
        }
    }
}

impl FromStr for QosPriority {
    type Err = ParamError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim() {
            "none" => return Ok(QosPriority::None),
            "default" => return Ok(QosPriority::standard()),
            _ => {}
        }
        let mut map = BTreeMap::new();
        for pair in text.split(',') {
            let invalid = |why: &str| {
                ParamError(format!(
                    "qos priority {pair:?}: {why} (expected none, default or CLASS=N,...)"
                ))
            };
            let (class, priority) = pair.split_once('=').ok_or_else(|| invalid("no `=`"))?;
            let class = class.trim();
            if class.is_empty() {
                return Err(invalid("no class"));
            }
            let priority: i32 = priority
                .trim()
                .parse()
                .map_err(|_| invalid("the priority is not an integer"))?;
            if map.insert(class.to_string(), priority).is_some() {
                return Err(invalid("the class is named twice"));
            }
        }
        Ok(QosPriority::Map(map))
    }
}

/// The time limit of an SWF job whose requested time (field 9) is ≤ 0 (−1: unknown; SDSC SP2
/// has such jobs).
///
/// Parsed from `run-time`, `skip` or a positive number of seconds.
///
/// ```
/// use gangway_sim::workload::NonPositiveRequest;
/// assert_eq!("run-time".parse(), Ok(NonPositiveRequest::RunTime));
/// assert_eq!("3600".parse(), Ok(NonPositiveRequest::Seconds(3600)));
/// assert_eq!("skip".parse(), Ok(NonPositiveRequest::Skip));
/// assert!("0".parse::<NonPositiveRequest>().is_err());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NonPositiveRequest {
    /// The job asks for exactly its run time (what the reader always did).
    #[default]
    RunTime,
    /// The job asks for this many seconds (> 0), like a site's default limit.
    Seconds(u64),
    /// The job is left out, counted as [`super::SkipReason::NonPositiveRequest`].
    Skip,
}

impl FromStr for NonPositiveRequest {
    type Err = ParamError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim() {
            "run-time" => Ok(NonPositiveRequest::RunTime),
            "skip" => Ok(NonPositiveRequest::Skip),
            number => match number.parse::<u64>() {
                Ok(seconds) if seconds > 0 => Ok(NonPositiveRequest::Seconds(seconds)),
                _ => Err(ParamError(format!(
                    "non-positive request {text:?}: expected run-time, skip or a positive \
                     number of seconds"
                ))),
            },
        }
    }
}
