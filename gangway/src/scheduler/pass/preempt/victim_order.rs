//! Running jobs in victim order, once per pass and partition, for order-based preemption
//! without a quota tree.
//!
//! An order-based search's candidates are the running jobs its preemptor outranks, less those
//! the engine's rules and the profile's vetoes remove, in the profile's victim order. Where
//! every victim plug-in is a built-in that reads of the preemptor at most its partition
//! ([`crate::policy::Profile`]'s `victim_plugins_read_partition_only`), the order keys are fixed
//! for the pass (`order_keys_fixed_in_pass`) and there is no quota tree (the one built-in victim
//! key that moves within a pass, `borrowing_first`, reads the queues' usage), a running job's
//! order, veto and victim keys are the same for every preemptor of one partition for the whole
//! pass. They are then asked at the partition's first search and the jobs sorted in victim
//! order once; each search filters that list by its own order and the engine's rules, instead
//! of asking the plug-ins about every job it outranks and sorting them. A shortcut (the
//! reference pass asks at every search); debug builds compare every search's candidates with
//! the full walk's.

use std::cmp::Reverse;
use std::sync::Arc;

use crate::model::ids::{JobId, PartitionId};
use crate::policy::{PartitionHooks, PassFigures};
use crate::scheduler::Scheduler;
use crate::scheduler::pass::preempt::running_keys::RankKey;
use crate::scheduler::pass::preempt::{Basis, VictimCandidates, Walk};

/// The victim orders of one pass, by the partition of the preemptors they were made for.
#[derive(Debug, Default)]
pub(in crate::scheduler) struct VictimOrders {
    /// The figures of the pass the orders belong to (compared by identity: each pass makes its
    /// own).
    figures: Option<Arc<PassFigures>>,
    /// Per preemptor partition met in this pass, the running jobs in victim order.
    by_partition: Vec<(PartitionId, Vec<Ranked>)>,
}

/// A running job as every preemptor of one partition sees it in one pass.
#[derive(Clone, Copy, Debug)]
struct Ranked {
    victim: JobId,
    /// Its order: a preemptor takes it only where it ranks higher.
    rank: RankKey,
    /// Where a veto removes it, the veto's end after now, if it has one.
    vetoed: Option<Option<u64>>,
}

impl Scheduler {
    /// The candidates of the order-based search for `id` (not a fair-sharing one: `fair`
    /// false), read from the victim order kept for its partition in this pass, with the
    /// earliest end after now of a veto that removed one: what
    /// [`Scheduler::victim_candidates`] answers. `None` where the order may not be kept.
    pub(in crate::scheduler) fn kept_victims(
        &self,
        id: JobId,
        fair: bool,
        orders: &mut VictimOrders,
    ) -> Option<VictimCandidates> {
        let settings = &self.state.config.policy.preemption;
        if !self.shortcuts
            || !settings.order_based
            || fair
            || self.state.quota.tree.is_some()
            || !self.profile.victim_plugins_read_partition_only()
            || !self.profile.order_keys_fixed_in_pass()
        {
            return None;
        }
        let preemptor = self.state.job_view(id)?;
        let partition = preemptor.record().partition;
        let current = orders
            .figures
            .as_ref()
            .is_some_and(|f| Arc::ptr_eq(f, &self.last.figures));
        if !current {
            *orders = VictimOrders {
                figures: Some(Arc::clone(&self.last.figures)),
                by_partition: Vec::new(),
            };
        }
        let kept = match orders
            .by_partition
            .iter()
            .position(|(p, _)| *p == partition)
        {
            Some(at) => &orders.by_partition[at].1,
            None => {
                let ranked = self.victim_order(id)?;
                orders.by_partition.push((partition, ranked));
                &orders.by_partition.last()?.1
            }
        };
        let context = self.last.figures.context(&self.state);
        let (tier, keys, ..) = self.pass_key(preemptor, &context);
        let own = (tier, keys);
        let job = preemptor.record();
        let mut candidates = Vec::new();
        let mut veto_ends: Option<u64> = None;
        for ranked in kept.iter().filter(|ranked| ranked.rank > own) {
            let Some(victim) = self.state.job_view(ranked.victim) else {
                continue;
            };
            if self.never_victim(job, victim, false) {
                continue;
            }
            match ranked.vetoed {
                Some(ends) => veto_ends = veto_ends.into_iter().chain(ends).min(),
                None => candidates.push((ranked.victim, Basis::Free)),
            }
        }
        let kept = (candidates, veto_ends);
        debug_assert_eq!(
            kept,
            self.victim_candidates(id, Walk::Every),
            "the kept victim order answers as the full walk"
        );
        Some(kept)
    }

    /// Every running job as preemptor `id`'s partition sees it now, in the profile's victim
    /// order (the later job id breaks ties).
    fn victim_order(&self, id: JobId) -> Option<Vec<Ranked>> {
        let preemptor = self.state.job_view(id)?;
        let context = self.last.figures.context(&self.state);
        let no_hooks = PartitionHooks::default();
        let hooks_of = |partition: PartitionId| {
            self.profile
                .partition(partition.index())
                .unwrap_or(&no_hooks)
        };
        let own_hooks = hooks_of(preemptor.record().partition);
        let mut ranked: Vec<_> = self
            .state
            .running
            .iter()
            .filter_map(|&v| {
                let victim = self.state.job_view(v)?;
                let (tier, keys, ..) = self.pass_key(victim, &context);
                let hooks = [own_hooks, hooks_of(victim.record().partition)];
                let vetoed = self
                    .profile
                    .veto(hooks, preemptor, victim, &context)
                    .map(|veto| veto.until_ms().filter(|&t| t > self.state.now_ms));
                let order = self
                    .profile
                    .victim_keys(own_hooks, preemptor, victim, &context);
                let rank = (tier, keys);
                Some((
                    (order, Reverse(v)),
                    Ranked {
                        victim: v,
                        rank,
                        vetoed,
                    },
                ))
            })
            .collect();
        ranked.sort_unstable_by_key(|(order, _)| *order);
        Some(ranked.into_iter().map(|(_, ranked)| ranked).collect())
    }
}
