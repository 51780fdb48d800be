//! Admission fair sharing's order inside a queue (Kueue v0.19's `queueOrderingFunc` with
//! `UsageBasedAdmissionFairSharing`): a queue's pending jobs go by their tenant's usage (lower
//! first), then by the pass's usual order (partition tier, order keys — the priority — submit
//! time, arrival). Usage comes before priority, as in Kueue.
//!
//! The pass keeps one global order over all queues, so a queue's jobs hold *slots* in it: the
//! places its jobs take by their usual keys. With admission fair sharing on, the queue's `k`-th
//! slot goes to the job that comes first in the queue's fair-sharing order among those not yet
//! visited, chosen when the slot is reached. Between queues nothing changes. Tenant usage is
//! read once per pass and raised by a job's entry penalty as soon as it starts, so the next
//! slot of that queue sees it (Kueue re-sorts its heap after each admission for the same
//! reason). This is the engine's, not an order plug-in's: it is scoped to one queue and changes
//! within a pass, and an order key is asked once per job per pass.

use std::collections::{BTreeMap, BTreeSet};

use super::lazy_order::LazyOrder;
use super::order::OrderKey;
use crate::model::ids::JobId;
use crate::quota::QueueId;
use crate::state::ClusterState;

/// The pass's order: the lazily sorted global order, with the slots of admission-fair-sharing
/// queues handed to their fair-sharing pick.
#[derive(Debug)]
pub(super) struct PassOrder {
    lazy: LazyOrder<OrderKey>,
    fair: Option<FairQueues>,
}

impl PassOrder {
    /// The order of `keyed` (unsorted), with admission fair sharing where `state` turns it on.
    pub(super) fn fresh(keyed: Vec<(OrderKey, JobId)>, state: &ClusterState) -> Self {
        let fair = state
            .admission_fair_sharing()
            .then(|| FairQueues::new(&keyed, state))
            .filter(|f| !f.slots.is_empty());
        PassOrder {
            lazy: LazyOrder::new(keyed),
            fair,
        }
    }

    /// A continued pass's order, as it is: a pass continues only without admission fair
    /// sharing ([`super::resume`]).
    pub(super) fn plain(lazy: LazyOrder<OrderKey>) -> Self {
        PassOrder { lazy, fair: None }
    }

    /// How many jobs were handed out.
    pub(super) fn taken(&self) -> usize {
        self.lazy.taken()
    }

    /// Raises the usage of the tenant of `id`, which just started, to what `state` now says.
    pub(super) fn started(&mut self, id: JobId, state: &ClusterState) {
        if let Some(fair) = &mut self.fair {
            fair.refresh(id, state);
        }
    }

    /// Every entry and how many were handed out, as [`LazyOrder::into_parts`]; the entries not
    /// handed out hold the jobs not visited, in slot order by key when admission fair sharing
    /// applies.
    pub(super) fn into_parts(self) -> (Vec<(OrderKey, JobId)>, usize) {
        let (mut keyed, taken) = self.lazy.into_parts();
        if let Some(mut fair) = self.fair {
            for (entry, &id) in keyed.iter_mut().zip(&fair.visited) {
                entry.1 = id;
            }
            let rest = &mut keyed[taken..];
            rest.sort_unstable_by_key(|(key, _)| *key);
            fair.fill_slots(rest);
        }
        (keyed, taken)
    }
}

impl Iterator for PassOrder {
    type Item = JobId;

    fn next(&mut self) -> Option<JobId> {
        let id = self.lazy.next()?;
        let Some(fair) = &mut self.fair else {
            return Some(id);
        };
        let picked = fair.slot(id).unwrap_or(id);
        fair.visited.push(picked);
        Some(picked)
    }
}

/// The pending jobs of every admission-fair-sharing queue, by tenant.
#[derive(Debug)]
pub(super) struct FairQueues {
    /// The queue of each job holding a slot.
    slots: BTreeMap<JobId, QueueId>,
    queues: BTreeMap<QueueId, Tenants>,
    /// The jobs handed out, in order.
    visited: Vec<JobId>,
}

/// One queue's tenants.
#[derive(Debug, Default)]
struct Tenants {
    /// By account.
    by_name: BTreeMap<String, usize>,
    /// Usage and the jobs not yet visited, last first (the next is at the end).
    tenants: Vec<(f64, Vec<(OrderKey, JobId)>)>,
    /// Each tenant with jobs left: (usage, its next job's key, tenant).
    next: BTreeSet<(u64, OrderKey, usize)>,
}

impl FairQueues {
    /// The jobs of `keyed` in admission-fair-sharing queues, with their tenants' usage now.
    pub(super) fn new(keyed: &[(OrderKey, JobId)], state: &ClusterState) -> Self {
        let mut fair = FairQueues {
            slots: BTreeMap::new(),
            queues: BTreeMap::new(),
            visited: Vec::new(),
        };
        for &(key, id) in keyed {
            let Some((q, tenant)) = state.admission_tenant(id) else {
                continue;
            };
            fair.slots.insert(id, q);
            let queue = fair.queues.entry(q).or_default();
            let t = match queue.by_name.get(tenant.account) {
                Some(&t) => t,
                None => {
                    let usage = state.admission_usage(q, tenant);
                    queue
                        .by_name
                        .insert(tenant.account.to_owned(), queue.tenants.len());
                    queue.tenants.push((usage, Vec::new()));
                    queue.tenants.len() - 1
                }
            };
            queue.tenants[t].1.push((key, id));
        }
        for queue in fair.queues.values_mut() {
            for (t, (usage, jobs)) in queue.tenants.iter_mut().enumerate() {
                jobs.sort_unstable_by_key(|&(key, _)| std::cmp::Reverse(key));
                if let Some(&(key, _)) = jobs.last() {
                    queue.next.insert((usage_rank(*usage), key, t));
                }
            }
        }
        fair
    }

    /// The job for the slot `id` holds: the next of its queue in fair-sharing order; `None`
    /// for a job outside admission-fair-sharing queues.
    fn slot(&mut self, id: JobId) -> Option<JobId> {
        let q = *self.slots.get(&id)?;
        self.queues.get_mut(&q)?.pop()
    }

    /// Hands the slots among `entries` (sorted by key) to their queues' jobs in fair-sharing
    /// order.
    pub(super) fn fill_slots(&mut self, entries: &mut [(OrderKey, JobId)]) {
        for entry in entries {
            if let Some(picked) = self.slot(entry.1) {
                entry.1 = picked;
            }
        }
    }

    /// Rereads the usage of the tenant of `id` (just started) from `state`.
    fn refresh(&mut self, id: JobId, state: &ClusterState) {
        let Some((q, tenant)) = state.admission_tenant(id) else {
            return;
        };
        let Some(queue) = self.queues.get_mut(&q) else {
            return;
        };
        let Some(&t) = queue.by_name.get(tenant.account) else {
            return;
        };
        let usage = state.admission_usage(q, tenant);
        let (old, jobs) = &mut queue.tenants[t];
        if let Some(&(key, _)) = jobs.last() {
            queue.next.remove(&(usage_rank(*old), key, t));
            queue.next.insert((usage_rank(usage), key, t));
        }
        *old = usage;
    }
}

impl Tenants {
    /// The next job in fair-sharing order: the least usage, then the usual order.
    fn pop(&mut self) -> Option<JobId> {
        let (rank, _, t) = self.next.pop_first()?;
        let jobs = &mut self.tenants[t].1;
        let (_, id) = jobs.pop()?;
        if let Some(&(key, _)) = jobs.last() {
            self.next.insert((rank, key, t));
        }
        Some(id)
    }
}

/// A usage as a sortable integer: for non-negative numbers and +∞ the bit pattern grows with
/// the value; anything not positive ranks as 0 and NaN last.
fn usage_rank(usage: f64) -> u64 {
    if usage.is_nan() {
        u64::MAX
    } else if usage > 0.0 {
        usage.to_bits()
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::cmp::Reverse;

    /// A key of `priority` (the first order key) and `arrival`.
    fn key(priority: i64, arrival: u64) -> OrderKey {
        (Reverse(0), Reverse([priority, 0, 0, 0]), 0, arrival)
    }

    /// Tenants with usage and jobs `(priority, arrival)`; job ids are the arrivals.
    fn tenants(list: &[(f64, &[(i64, u64)])]) -> Tenants {
        let mut queue = Tenants::default();
        for (t, &(usage, jobs)) in list.iter().enumerate() {
            let mut jobs: Vec<(OrderKey, JobId)> = jobs
                .iter()
                .map(|&(p, a)| (key(p, a), JobId(a as u32)))
                .collect();
            jobs.sort_unstable_by_key(|&(key, _)| Reverse(key));
            queue
                .next
                .insert((usage_rank(usage), jobs.last().unwrap().0, t));
            queue.by_name.insert(format!("t{t}"), t);
            queue.tenants.push((usage, jobs));
        }
        queue
    }

    fn drain(mut queue: Tenants) -> Vec<u32> {
        std::iter::from_fn(|| queue.pop()).map(|id| id.0).collect()
    }

    #[test]
    fn the_tenant_with_less_usage_goes_first_whatever_the_priority() {
        let queue = tenants(&[(1.0, &[(9, 0), (9, 1)]), (0.5, &[(0, 2), (0, 3)])]);
        assert_eq!(drain(queue), [2, 3, 0, 1]);
    }

    #[test]
    fn equal_usage_goes_by_priority_then_arrival() {
        let queue = tenants(&[(0.5, &[(0, 0), (3, 4)]), (0.5, &[(3, 1), (0, 2)])]);
        assert_eq!(drain(queue), [1, 4, 0, 2]);
    }

    #[test]
    fn infinite_usage_goes_last() {
        let queue = tenants(&[(f64::INFINITY, &[(9, 0)]), (1e300, &[(0, 1)])]);
        assert_eq!(drain(queue), [1, 0]);
    }

    #[test]
    fn usage_ranks_follow_the_numbers() {
        let values = [0.0, 1e-300, 0.5, 1.0, 2.0, 1e300, f64::INFINITY];
        let ranks: Vec<u64> = values.iter().map(|&v| usage_rank(v)).collect();
        assert!(ranks.windows(2).all(|w| w[0] < w[1]), "{ranks:?}");
        assert_eq!(usage_rank(-0.0), 0);
        assert_eq!(usage_rank(f64::NAN), u64::MAX);
    }
}
