//! Admission fair sharing's order inside a queue (Kueue v0.19's `queueOrderingFunc` with
//! `UsageBasedAdmissionFairSharing`): a queue's pending jobs go by their tenant's usage (lower
//! first), then by the pass's usual order (partition tier, order keys — the priority — submit
//! time, arrival). Usage comes before priority, as in Kueue.
//!
//! The pass keeps one global order over all queues, so a queue's jobs hold *slots* in it: the
//! places its jobs take by their usual keys ([`crate::scheduler::pass::order::slots`]). With admission fair sharing
//! on, the queue's `k`-th slot goes to the job that comes first in the queue's fair-sharing
//! order among those not yet visited, chosen when the slot is reached. Between queues nothing changes. Tenant usage is
//! read once per pass and raised by a job's entry penalty as soon as it starts, so the next
//! slot of that queue sees it (Kueue re-sorts its heap after each admission for the same
//! reason). This is the engine's, not an order plug-in's: it is scoped to one queue and changes
//! within a pass, and an order key is asked once per job per pass.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::ids::JobId;
use crate::quota::QueueId;
use crate::scheduler::pass::order::OrderKey;
use crate::state::ClusterState;

/// The pending jobs of every admission-fair-sharing queue, by tenant.
#[derive(Debug)]
pub(in crate::scheduler) struct FairQueues {
    /// The queue of each job holding a slot.
    slots: BTreeMap<JobId, QueueId>,
    queues: BTreeMap<QueueId, Tenants>,
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
    pub(in crate::scheduler) fn new(keyed: &[(OrderKey, JobId)], state: &ClusterState) -> Self {
        let mut fair = FairQueues {
            slots: BTreeMap::new(),
            queues: BTreeMap::new(),
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

    /// Whether any job is in an admission-fair-sharing queue.
    pub(in crate::scheduler) fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Whether queue `q` has admission fair sharing on (and pending jobs).
    pub(in crate::scheduler) fn has_queue(&self, q: QueueId) -> bool {
        self.queues.contains_key(&q)
    }

    /// The job for the slot `id` holds: the next of its queue in fair-sharing order; `None`
    /// for a job outside admission-fair-sharing queues.
    pub(in crate::scheduler) fn slot(&mut self, id: JobId) -> Option<JobId> {
        let q = *self.slots.get(&id)?;
        self.queues.get_mut(&q)?.pop()
    }

    /// Queue `q`'s next job in fair-sharing order, with its key, without taking it.
    pub(in crate::scheduler) fn peek(&self, q: QueueId) -> Option<(OrderKey, JobId)> {
        self.queues.get(&q)?.peek()
    }

    /// Takes queue `q`'s next job in fair-sharing order.
    pub(in crate::scheduler) fn pop(&mut self, q: QueueId) -> Option<JobId> {
        self.queues.get_mut(&q)?.pop()
    }

    /// Takes every job of queue `q` not handed out yet, in fair-sharing order, each paired with
    /// the keys of those jobs in ascending order (so that sorting by key keeps that order).
    pub(in crate::scheduler) fn drain(&mut self, q: QueueId) -> Vec<(OrderKey, JobId)> {
        let Some(queue) = self.queues.get_mut(&q) else {
            return Vec::new();
        };
        let mut keys: Vec<OrderKey> = queue
            .tenants
            .iter()
            .flat_map(|(_, jobs)| jobs.iter().map(|(key, _)| *key))
            .collect();
        keys.sort_unstable();
        let ids: Vec<JobId> = std::iter::from_fn(|| queue.pop()).collect();
        keys.into_iter().zip(ids).collect()
    }

    /// Hands the slots among `entries` (sorted by key) to their queues' jobs in fair-sharing
    /// order.
    pub(in crate::scheduler) fn fill_slots(&mut self, entries: &mut [(OrderKey, JobId)]) {
        for entry in entries {
            if let Some(picked) = self.slot(entry.1) {
                entry.1 = picked;
            }
        }
    }

    /// Rereads the usage of the tenant of `id` (just started) from `state`.
    pub(in crate::scheduler) fn refresh(&mut self, id: JobId, state: &ClusterState) {
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
    /// The next job in fair-sharing order, with its key, without taking it.
    fn peek(&self) -> Option<(OrderKey, JobId)> {
        let &(_, _, t) = self.next.first()?;
        self.tenants[t].1.last().copied()
    }

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

    use crate::{ClusterConfig, Event, JobSpec, Scheduler};

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

    /// A node of 2 cpus; queue `shared` (admission fair sharing, 2 cpus nominal, tenant `big`
    /// of weight 0.5) and `plain` (none, no quota). At 0 `big` submits `b1` to `b3` and
    /// `small` `s1` and `s2` to `shared` (in that order), and `p1` goes to `plain`.
    fn two_tenants() -> Scheduler {
        let cluster: ClusterConfig = serde_json::from_str(
            r#"{"nodes": [{"name": "n1", "cpus": 2}],
                "queues": [{"name": "shared", "quota": {"cpu": {"nominal": 2}},
                            "admission_fair_sharing": true, "account_weights": {"big": 0.5}},
                           {"name": "plain"}]}"#,
        )
        .unwrap();
        let mut s = Scheduler::new(cluster).unwrap();
        let jobs = [
            ("b1", "shared", "big"),
            ("b2", "shared", "big"),
            ("b3", "shared", "big"),
            ("s1", "shared", "small"),
            ("s2", "shared", "small"),
            ("p1", "plain", "small"),
        ];
        let events = jobs
            .iter()
            .enumerate()
            .map(|(i, &(name, queue, account))| {
                let mut job = JobSpec::new(name, 3_600_000, 1);
                job.queue = Some(queue.into());
                job.account = Some(account.into());
                job.submit_ms = Some(i as u64);
                Event::Submit { job }
            })
            .collect();
        s.tick(10, events).unwrap();
        s
    }

    #[test]
    fn a_queue_s_slots_go_to_its_tenants_by_usage_raised_by_each_start() {
        let s = two_tenants();
        let name = |id: JobId| s.state.job_name(id).unwrap();
        // Both tenants start at 0: `b1` comes first; its entry penalty, doubled by `big`'s
        // weight, puts `small` ahead for the second slot.
        let running: Vec<&str> = s.state.running.iter().map(|&id| name(id)).collect();
        assert_eq!(running, ["b1", "s1"]);
        // Now `small` has used half of what `big` has: its `s2` takes the queue's first slot.
        let context = s.last.figures.context(&s.state);
        let order: Vec<&str> = s.ordered_pending(&context).into_iter().map(name).collect();
        assert_eq!(order, ["s2", "b2", "b3", "p1"]);
    }

    #[test]
    fn fair_queues_hand_out_a_queue_s_jobs_in_its_tenants_order() {
        let s = two_tenants();
        let id = |name: &str| s.state.job_id(name).unwrap();
        let context = s.last.figures.context(&s.state);
        let mut keyed: Vec<(OrderKey, JobId)> = s
            .state
            .pending()
            .map(|job| (s.order_key(job, &context), job.id()))
            .collect();
        keyed.sort_unstable();
        let key = |name: &str| keyed.iter().find(|(_, j)| *j == id(name)).unwrap().0;
        let names = |ids: &[JobId]| -> Vec<&str> {
            ids.iter().map(|&j| s.state.job_name(j).unwrap()).collect()
        };
        let (shared, plain) = (
            s.state.job_queue(id("b2")).unwrap(),
            s.state.job_queue(id("p1")).unwrap(),
        );
        let fresh = || FairQueues::new(&keyed, &s.state);
        // `plain`'s job holds no slot of a fair queue.
        let alone = FairQueues::new(&[(key("p1"), id("p1"))], &s.state);
        assert!(alone.is_empty() && !alone.has_queue(plain));
        let mut fair = fresh();
        assert!(!fair.is_empty());
        assert!(fair.has_queue(shared) && !fair.has_queue(plain));
        assert_eq!(fair.peek(shared), Some((key("s2"), id("s2"))));
        assert_eq!(fair.peek(plain), None);
        assert_eq!(fair.slot(id("p1")), None);
        // `b2`'s slot goes to `s2`, the next to `b2`.
        assert_eq!(fair.slot(id("b2")), Some(id("s2")));
        assert_eq!(fair.peek(shared), Some((key("b2"), id("b2"))));
        assert_eq!(fair.pop(shared), Some(id("b2")));
        assert_eq!(fair.pop(plain), None);
        assert_eq!(fair.drain(shared), [(key("b3"), id("b3"))]);
        assert_eq!(fair.pop(shared), None);
        // Drained at once: the jobs in the tenants' order, paired with the keys in order.
        let mut fair = fresh();
        let drained = fair.drain(shared);
        let ids: Vec<JobId> = drained.iter().map(|(_, j)| *j).collect();
        assert_eq!(names(&ids), ["s2", "b2", "b3"]);
        let keys: Vec<OrderKey> = drained.iter().map(|(k, _)| *k).collect();
        assert_eq!(keys, [key("b2"), key("b3"), key("s2")]);
        assert!(fair.drain(plain).is_empty());
        // Filled slots: `shared`'s three go in the tenants' order, `plain`'s stays.
        let mut entries = keyed.clone();
        fresh().fill_slots(&mut entries);
        let ids: Vec<JobId> = entries.iter().map(|(_, j)| *j).collect();
        assert_eq!(names(&ids), ["s2", "b2", "b3", "p1"]);
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
