//! The profile's node filters and scorers for one job's placement, as the placer's
//! [`NodeGate`]; and what the filters rejected, for `explain` when no node passed.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use crate::model::ids::{DomainId, JobId, NodeId};
use crate::model::resources::NodeAmounts;
use crate::placement::gang::Standing;
use crate::placement::{FreeTotals, NodeGate, ShapeMix};
use crate::policy::{
    DeviceTask, DomainView, MAX_SCORE_TIERS, NodeScores, PartitionHooks, PassContext, Profile,
    better_first,
};
use crate::state::ClusterState;

/// One job's filters and scorers over one pass's context.
pub(in crate::scheduler) struct JobGate<'a> {
    profile: &'a Profile,
    hooks: &'a PartitionHooks,
    state: &'a ClusterState,
    context: PassContext<'a>,
    job: JobId,
    /// By group: how many nodes passed, and the nodes rejected by (plug-in, reason). Made
    /// only where a filter runs (most gates only choose devices).
    seen: RefCell<Vec<Seen>>,
}

/// What the filters did to one group's candidates. A placement may visit a node more than
/// once (several rules, several tasks): rejected nodes are counted once each.
#[derive(Default)]
struct Seen {
    passed: usize,
    rejected: BTreeMap<(usize, String), BTreeSet<NodeId>>,
}

impl<'a> JobGate<'a> {
    /// The gate of job `job` when its partition has filters or scorers.
    pub(in crate::scheduler) fn of(
        profile: &'a Profile,
        context: PassContext<'a>,
        job: JobId,
    ) -> Option<JobGate<'a>> {
        let state = context.state();
        let hooks = profile
            .partition(state.job(job)?.partition.index())
            .filter(|h| h.gates())?;
        Some(JobGate {
            profile,
            hooks,
            state,
            context,
            job,
            seen: RefCell::new(Vec::new()),
        })
    }

    /// Whether it has filters (which must run to say why no node passed).
    pub(in crate::scheduler) fn filters(&self) -> bool {
        !self.hooks.filters.is_empty()
    }

    /// Whether the engine's memos (by gang shape) hold for this gate's answers.
    pub(in crate::scheduler) fn shape_only(&self) -> bool {
        self.hooks.shape_only
    }

    /// Whether which nodes can hold a gang does not depend on the gate: it neither filters
    /// nor ranks nodes or domains (it only picks devices among those a task fits), and
    /// answers by shape. A count of fits then stands for the placement.
    pub(in crate::scheduler) fn leaves_fit_alone(&self) -> bool {
        !self.hooks.shapes_plans() && self.hooks.shape_only
    }

    /// Whether a placement through the gate asks the profile's scorers, of nodes or of
    /// topology domains: a placement the reference pass makes may then report their faults.
    pub(in crate::scheduler) fn asks_scorers(&self) -> bool {
        !self.hooks.scorers.is_empty() || !self.hooks.domain_scorers.is_empty()
    }

    /// Whether the gate decides which nodes or domains a placement uses.
    pub(in crate::scheduler) fn shapes_plans(&self) -> bool {
        self.hooks.shapes_plans()
    }

    /// Why no node passed the filters for some group, when none did.
    pub(in crate::scheduler) fn nothing_passed(&self) -> Option<String> {
        let seen = self.seen.borrow();
        let (group, blocked) =
            (seen.iter().enumerate()).find(|(_, s)| s.passed == 0 && !s.rejected.is_empty())?;
        let reasons: Vec<String> = blocked
            .rejected
            .iter()
            .map(|((plugin, reason), nodes)| {
                let name = self.profile.plugin_names().nth(*plugin).unwrap_or("?");
                let nodes = nodes.len();
                format!(
                    "{name}: {reason} ({nodes} node{})",
                    if nodes == 1 { "" } else { "s" }
                )
            })
            .collect();
        Some(format!(
            "no node passed the filters for group {group}: {}",
            reasons.join("; ")
        ))
    }
}

impl JobGate<'_> {
    /// `candidates` of group `group` with their scores, best first (a stable sort: ties keep
    /// the given order).
    fn scored(&self, group: usize, candidates: &[NodeId]) -> Vec<(NodeScores, NodeId)> {
        let Some(job) = self.state.job_view(self.job) else {
            return candidates
                .iter()
                .map(|&id| (NodeScores::default(), id))
                .collect();
        };
        let mut scored: Vec<(NodeScores, NodeId)> = candidates
            .iter()
            .filter_map(|&id| {
                let node = self.state.node_view(id)?;
                let scores = self
                    .profile
                    .scores(self.hooks, (job, group), node, &self.context);
                Some((scores, id))
            })
            .collect();
        scored.sort_by(|(a, _), (b, _)| better_first(a, b));
        scored
    }
}

impl NodeGate for JobGate<'_> {
    fn filters(&self) -> bool {
        !self.hooks.filters.is_empty()
    }

    fn admits(&self, group: usize, id: NodeId) -> bool {
        if self.hooks.filters.is_empty() {
            return true;
        }
        let (Some(job), Some(node)) = (self.state.job_view(self.job), self.state.node_view(id))
        else {
            return false;
        };
        let verdict = self
            .profile
            .filter(self.hooks, (job, group), node, &self.context);
        let mut seen = self.seen.borrow_mut();
        if seen.len() <= group {
            seen.resize_with(group + 1, Seen::default);
        }
        let seen = &mut seen[group];
        match verdict {
            Ok(()) => {
                seen.passed += 1;
                true
            }
            Err(rejection) => {
                seen.rejected.entry(rejection).or_default().insert(id);
                false
            }
        }
    }

    fn ranks(&self) -> bool {
        !self.hooks.scorers.is_empty()
    }

    fn rank(&self, group: usize, candidates: &mut Vec<NodeId>) {
        let scored = self.scored(group, candidates);
        candidates.clear();
        candidates.extend(scored.into_iter().map(|(_, id)| id));
    }

    fn node_choice_tier(&self) -> Option<usize> {
        self.hooks.node_choice
    }

    fn rank_standing(&self, group: usize, candidates: &mut Vec<NodeId>) -> Vec<Standing> {
        let scored = self.scored(group, candidates);
        let tier = self.hooks.node_choice.unwrap_or(MAX_SCORE_TIERS);
        let alike = |a: &[f64], b: &[f64]| a.iter().zip(b).all(|(x, y)| x.total_cmp(y).is_eq());
        let mut standings: Vec<Standing> = Vec::with_capacity(scored.len());
        for (at, (scores, _)) in scored.iter().enumerate() {
            let position = at as u32;
            let standing = match at.checked_sub(1).map(|p| (&scored[p].0, standings[p])) {
                Some((previous, last)) if alike(&previous[..tier], &scores[..tier]) => Standing {
                    before: last.before,
                    after: if alike(&previous[tier..], &scores[tier..]) {
                        last.after
                    } else {
                        position
                    },
                },
                _ => Standing {
                    before: position,
                    after: position,
                },
            };
            standings.push(standing);
        }
        candidates.clear();
        candidates.extend(scored.into_iter().map(|(_, id)| id));
        standings
    }

    fn choose_devices(
        &self,
        group: usize,
        node: NodeId,
        room: &NodeAmounts,
        mix: &ShapeMix,
    ) -> Option<u128> {
        if self.hooks.devices.is_empty() {
            return None;
        }
        let job = self.state.job_view(self.job)?;
        let shape = job.record().shapes.get(group)?;
        let task = DeviceTask {
            job,
            group,
            node: self.state.node_view(node)?,
            room,
            need: shape.gpu,
            mix,
        };
        self.profile.choose_devices(self.hooks, task, &self.context)
    }

    fn rank_domains(&self, domains: &mut Vec<DomainId>, totals: &[FreeTotals]) {
        let (Some(job), Some(tree)) = (self.state.job_view(self.job), self.state.topology()) else {
            return;
        };
        if self.hooks.domain_scorers.is_empty() {
            return;
        }
        let mut scored: Vec<(NodeScores, DomainId)> = domains
            .iter()
            .filter_map(|&id| {
                let view = DomainView {
                    id,
                    level: tree.levels().get(tree.level_of(id))?,
                    label: tree.label(id),
                    free: totals.get(id.index())?,
                };
                let scores = self
                    .profile
                    .domain_scores(self.hooks, job, view, &self.context);
                Some((scores, id))
            })
            .collect();
        scored.sort_by(|(a, _), (b, _)| better_first(a, b));
        domains.clear();
        domains.extend(scored.into_iter().map(|(_, id)| id));
    }
}
