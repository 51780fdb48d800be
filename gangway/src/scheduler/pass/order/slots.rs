//! The order a pass visits pending jobs in: the global order ([`crate::scheduler::pass::order::lazy`], sorted only
//! as far as it is read), whose turns may go to other jobs than the ones that hold them.
//!
//! Every pending job holds a *slot*: the place its usual key (partition tier, the profile's
//! order keys, submit time, arrival) gives it. A slot held by a job of a fair-sharing cohort
//! tree goes to the winner of that tree's tournament ([`crate::scheduler::pass::order::fair_sharing`]); one held by a
//! job of a queue with admission fair sharing (outside such a tree) goes to that queue's next
//! job in its tenants' order ([`crate::scheduler::pass::order::admission_fair_sharing`]); any other slot goes to its holder.
//! Each is chosen when the slot is reached, with every start of the pass so far counted.

use crate::model::ids::JobId;
use crate::quota::QuotaTree;
use crate::scheduler::Scheduler;
use crate::scheduler::pass::order::OrderKey;
use crate::scheduler::pass::order::admission_fair_sharing::FairQueues;
use crate::scheduler::pass::order::fair_sharing::FairTurns;
use crate::scheduler::pass::order::lazy::LazyOrder;
use crate::scheduler::pass::order::order_index::IndexPlace;
use crate::scheduler::pass::quota::PromisedQuota;
use crate::state::ClusterState;

/// The global order a pass reads.
#[derive(Debug)]
pub(in crate::scheduler) enum PassList {
    /// Keyed for the pass (sorted as far as it is read).
    Listed(LazyOrder<OrderKey>),
    /// Read in place from the order index kept across passes
    /// ([`crate::scheduler::pass::order::order_index`]), which holds `len` jobs and does not
    /// change until the next pass's update.
    Indexed { place: IndexPlace, len: usize },
}

/// What a pass's order leaves for the next tick: every job it had, of which it handed out the
/// first ones (how many comes with it).
#[derive(Clone, Debug)]
pub(in crate::scheduler) enum VisitedOrder {
    /// Every job with its key: those handed out in order, then the rest in no order (see
    /// [`PassOrder::into_parts`]).
    Listed(Vec<(OrderKey, JobId)>),
    /// The order index's `len` jobs, in order, as they stand until the next pass's update.
    Indexed { len: usize },
}

impl VisitedOrder {
    /// How many jobs the order had.
    pub(in crate::scheduler) fn len(&self) -> usize {
        match self {
            VisitedOrder::Listed(keyed) => keyed.len(),
            VisitedOrder::Indexed { len } => *len,
        }
    }
}

/// The pass's order with its slot rules.
#[derive(Debug)]
pub(in crate::scheduler) struct PassOrder {
    list: PassList,
    /// Admission fair sharing's queues, by tenant.
    tenants: Option<FairQueues>,
    /// Fair sharing's trees.
    cohorts: Option<FairTurns>,
    /// The jobs handed out, in order (kept when a slot rule applies).
    visited: Vec<JobId>,
}

impl PassOrder {
    /// The order of `keyed` (`sorted` already, or not), with the slot rules `state` turns on.
    pub(in crate::scheduler) fn fresh(
        keyed: Vec<(OrderKey, JobId)>,
        sorted: bool,
        state: &ClusterState,
    ) -> Self {
        let tenants = state
            .admission_fair_sharing()
            .then(|| FairQueues::new(&keyed, state))
            .filter(|f| !f.is_empty());
        let cohorts = state.quota.tree.as_ref().and_then(|tree| {
            FairTurns::new(tree, &keyed, |id| state.job_queue(id), tenants.as_ref())
        });
        PassOrder {
            list: PassList::Listed(if sorted {
                LazyOrder::sorted(keyed)
            } else {
                LazyOrder::new(keyed)
            }),
            tenants,
            cohorts,
            visited: Vec::new(),
        }
    }

    /// The order of `list` as it is, without slot rules: an order read from the index where
    /// no slot rule can apply ([`PassOrder::reorders`]), or a continued pass's (a pass
    /// continues only without slot rules: [`crate::scheduler::shortcuts::resume`]).
    pub(in crate::scheduler) fn plain(list: PassList) -> Self {
        PassOrder {
            list,
            tenants: None,
            cohorts: None,
            visited: Vec::new(),
        }
    }

    /// Whether a slot rule may apply in `state`: admission fair sharing, or a fair-sharing
    /// tree.
    pub(in crate::scheduler) fn reorders(state: &ClusterState) -> bool {
        state.admission_fair_sharing()
            || state
                .quota
                .tree
                .as_ref()
                .is_some_and(QuotaTree::any_fair_sharing)
    }

    /// Whether a slot rule applies.
    fn reordered(&self) -> bool {
        self.tenants.is_some() || self.cohorts.is_some()
    }

    /// Every entry and how many were handed out, as [`LazyOrder::into_parts`]: the first
    /// `taken` name the jobs visited, the rest the jobs not visited, each queue's in its order
    /// (the rest's keys sort them as a pass would have reached them, but for a fair-sharing
    /// tree's, which go by their own keys: its tournament depends on starts that never came).
    pub(in crate::scheduler) fn into_parts(self, state: &ClusterState) -> (VisitedOrder, usize) {
        let reordered = self.reordered();
        let PassOrder {
            list,
            mut tenants,
            cohorts,
            visited,
        } = self;
        let (mut keyed, taken) = match list {
            PassList::Listed(lazy) => lazy.into_parts(),
            PassList::Indexed { place, len } => {
                return (VisitedOrder::Indexed { len }, place.position);
            }
        };
        if !reordered {
            return (VisitedOrder::Listed(keyed), taken);
        }
        for (entry, &id) in keyed.iter_mut().zip(&visited) {
            entry.1 = id;
        }
        let in_tree = |id: JobId| {
            cohorts
                .as_ref()
                .zip(state.job_queue(id))
                .is_some_and(|(c, q)| c.covers(q))
        };
        let mut rest: Vec<(OrderKey, JobId)> = keyed
            .split_off(taken)
            .into_iter()
            .filter(|(_, id)| !in_tree(*id))
            .collect();
        rest.sort_unstable_by_key(|(key, _)| *key);
        if let Some(tenants) = tenants.as_mut() {
            tenants.fill_slots(&mut rest);
        }
        keyed.extend(rest);
        if let Some(cohorts) = cohorts {
            if let Some(tenants) = tenants.as_mut() {
                let queues: Vec<_> = (0..state.quota.tree.as_ref().map_or(0, |t| t.queue_count()))
                    .map(|q| crate::quota::QueueId(q as u32))
                    .filter(|&q| cohorts.covers(q))
                    .collect();
                for q in queues {
                    keyed.extend(tenants.drain(q));
                }
            }
            keyed.extend(cohorts.into_rest());
        }
        (VisitedOrder::Listed(keyed), taken)
    }
}

impl Scheduler {
    /// The next job the pass visits, by the slot rules of the module docs; `promised`: the
    /// pass's memory of what the earmarks promise, whose usage after the preemptions under
    /// way fair sharing reads.
    pub(in crate::scheduler) fn next_turn(
        &self,
        order: &mut PassOrder,
        promised: &mut PromisedQuota,
    ) -> Option<JobId> {
        let token = match &mut order.list {
            PassList::Listed(lazy) => lazy.next()?,
            PassList::Indexed { place, .. } => self.last.order_index.as_ref()?.read(place)?,
        };
        if !order.reordered() {
            return Some(token);
        }
        let in_tree = order
            .cohorts
            .as_ref()
            .zip(self.state.job_queue(token))
            .is_some_and(|(c, q)| c.covers(q));
        let picked = match (&mut order.cohorts, in_tree) {
            (Some(cohorts), true) => {
                self.fair_turn(cohorts, order.tenants.as_mut(), promised, token)
            }
            _ => order
                .tenants
                .as_mut()
                .and_then(|t| t.slot(token))
                .unwrap_or(token),
        };
        order.visited.push(picked);
        Some(picked)
    }

    /// Tells the order that `id` started: its tenant's usage rose, and so may its queue's next
    /// job change.
    pub(in crate::scheduler) fn turn_started(&self, order: &mut PassOrder, id: JobId) {
        if let Some(tenants) = order.tenants.as_mut() {
            tenants.refresh(id, &self.state);
            if let (Some(cohorts), Some(q)) = (order.cohorts.as_mut(), self.state.job_queue(id)) {
                cohorts.forget_head(q);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{ClusterConfig, Event, JobSpec, Scheduler};

    /// A node of 3 cpus and a fair-sharing cohort of queues `qa` and `qb`, 2 cpus nominal
    /// each; `qa`'s three one-cpu jobs come before `qb`'s one in the usual order.
    fn one_cohort_three_jobs_before_one() -> Scheduler {
        let cluster: ClusterConfig = serde_json::from_str(
            r#"{"nodes": [{"name": "n1", "cpus": 3}],
                "cohorts": [{"name": "root", "fair_sharing": {"enabled": true}}],
                "queues": [{"name": "qa", "cohort": "root", "quota": {"cpu": {"nominal": 2}}},
                           {"name": "qb", "cohort": "root", "quota": {"cpu": {"nominal": 2}}}]}"#,
        )
        .unwrap();
        let mut s = Scheduler::new(cluster).unwrap();
        let jobs = [
            ("a1", "qa", 0),
            ("a2", "qa", 1),
            ("a3", "qa", 2),
            ("b1", "qb", 3),
        ];
        let events = jobs
            .iter()
            .map(|&(name, queue, submit_ms)| {
                let mut job = JobSpec::new(name, 60_000, 1);
                job.queue = Some(queue.into());
                job.submit_ms = Some(submit_ms);
                Event::Submit { job }
            })
            .collect();
        s.tick(10, events).unwrap();
        s
    }

    #[test]
    fn a_turn_of_a_fair_sharing_tree_goes_to_the_winner_of_its_tournament() {
        // The third turn is `a3`'s in the usual order, but `a3` would make `qa` borrow and
        // `b1` would not make `qb` borrow: `b1` wins it and takes the last cpu.
        let s = one_cohort_three_jobs_before_one();
        let name = |id| s.state.job_name(id).unwrap();
        let running: Vec<&str> = s.state.running.iter().map(|&id| name(id)).collect();
        assert_eq!(running, ["a1", "a2", "b1"]);
        let pending: Vec<&str> = s.state.pending.iter().map(|&id| name(id)).collect();
        assert_eq!(pending, ["a3"]);
    }
}
