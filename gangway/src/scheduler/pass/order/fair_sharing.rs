//! Admission order between the queues of a fair-sharing cohort tree (Kueue's fair-sharing
//! tournament; docs/protocol.md, "Fair sharing between queues").
//!
//! The pass keeps its order, but the turns that fall to jobs of a fair-sharing tree are given
//! out by a tournament among the tree's queues. Each queue puts forward its next job in the
//! pass's order (its head). At every cohort, from the bottom up, the child (queue or cohort)
//! whose nominee wins is the one that, with its nominee admitted:
//!
//! 1. does not borrow at that level on a resource the nominee asks for (Kueue's
//!    `FairSharingPrioritizeNonBorrowing`, on by default since v0.17), then
//! 2. has the lowest share value ([`crate::quota::Share::compare`]), then
//! 3. has the nominee that comes first in the pass's order (partition tier, the profile's
//!    order keys, submit time, arrival: Kueue's priority, then FIFO).
//!
//! The root's winner takes the turn and its queue puts forward its next job. Share values are
//! read with every start of the pass so far, so each start moves its queue back. A nominee's
//! demand is the one, among the GPU models it accepts, that leaves its queue's share lowest.
//! Turns of jobs outside fair-sharing trees are unchanged.

use crate::model::ids::JobId;
use crate::quota::{QueueId, QuotaTree, QuotaVec, Share};
use crate::scheduler::Scheduler;
use crate::scheduler::pass::order::OrderKey;
use crate::scheduler::pass::order::admission_fair_sharing::FairQueues;
use crate::scheduler::pass::order::lazy::LazyOrder;
use crate::scheduler::pass::quota::PromisedQuota;

/// The fair-sharing queues' jobs of one pass, in each queue's order, and their heads.
#[derive(Debug)]
pub(in crate::scheduler) struct FairTurns {
    /// By queue index: whether the queue is in a fair-sharing tree.
    in_tree: Vec<bool>,
    /// By queue index: the pending jobs of a fair-sharing queue, in the pass's order; `None`
    /// for a queue with admission fair sharing, whose order is its own ([`FairQueues`]).
    queues: Vec<Option<LazyOrder<OrderKey>>>,
    /// By queue index: the queue's next job, once read.
    heads: Vec<Option<Head>>,
    /// The tree's usage and earmark changes when the heads' shares were read.
    changes: (u64, u64),
    /// The usage shares are read from ([`crate::state::ClusterState::promised_usage`]).
    usage: Vec<QuotaVec>,
    /// By tree node: the queue whose head wins below it, once found (`Some(None)`: no queue
    /// below has a job). Forgotten along a queue's path whenever its head changes, so a turn
    /// compares only the children on the winner's path again.
    winners: Vec<Option<Option<usize>>>,
    /// By queue index: the queue and its cohorts, bottom-up.
    paths: Vec<Vec<u32>>,
}

/// A queue's nominee and what the tournament compares.
#[derive(Debug)]
struct Head {
    key: OrderKey,
    id: JobId,
    /// The demand it is weighed with.
    demand: QuotaVec,
    /// The queue and its cohorts, bottom-up, each with its share with the job admitted.
    shares: Vec<(u32, Share)>,
    /// Whether `shares` were read before the last change of the usage of its queue's path.
    stale: bool,
}

impl Head {
    /// How the nominee stands at the level of node `child` (a child of the cohort where it
    /// competes): whether `child` borrows on what the job asks for, and its share.
    fn standing(&self, child: u32) -> (bool, Option<Share>) {
        let share = self
            .shares
            .iter()
            .find(|(n, _)| *n == child)
            .map(|(_, s)| *s);
        (share.is_some_and(|s| s.borrows_on(&self.demand)), share)
    }
}

impl FairTurns {
    /// The turns of the fair-sharing queues' jobs among `keyed` (this pass's keys), or `None`
    /// when no pending job is in a fair-sharing tree. Queues that `tenants` orders (admission
    /// fair sharing) put their jobs forward in its order.
    pub(in crate::scheduler) fn new(
        tree: &QuotaTree,
        keyed: &[(OrderKey, JobId)],
        queue_of: impl Fn(JobId) -> Option<QueueId>,
        tenants: Option<&FairQueues>,
    ) -> Option<Self> {
        if !tree.any_fair_sharing() {
            return None;
        }
        let count = tree.queue_count();
        let mut lists: Vec<Vec<(OrderKey, JobId)>> = vec![Vec::new(); count];
        let mut any = false;
        for &(key, id) in keyed {
            if let Some(q) = queue_of(id).filter(|&q| tree.fair_sharing(q)) {
                any = true;
                if !tenants.is_some_and(|t| t.has_queue(q)) {
                    lists[q.index()].push((key, id));
                }
            }
        }
        if !any {
            return None;
        }
        Some(FairTurns {
            in_tree: (0..count)
                .map(|q| tree.fair_sharing(QueueId(q as u32)))
                .collect(),
            queues: lists
                .into_iter()
                .map(|l| (!l.is_empty()).then(|| LazyOrder::new(l)))
                .collect(),
            heads: (0..count).map(|_| None).collect(),
            changes: (u64::MAX, u64::MAX),
            usage: Vec::new(),
            winners: vec![None; tree.children.len()],
            paths: (0..count)
                .map(|q| tree.path_nodes(QueueId(q as u32)).to_vec())
                .collect(),
        })
    }

    /// Whether queue `q` is in a fair-sharing tree.
    pub(in crate::scheduler) fn covers(&self, q: QueueId) -> bool {
        self.in_tree.get(q.index()).copied().unwrap_or(false)
    }

    /// Forgets queue `q`'s head (its order changed: admission fair sharing after a start).
    pub(in crate::scheduler) fn forget_head(&mut self, q: QueueId) {
        if let Some(head) = self.heads.get_mut(q.index()) {
            *head = None;
            self.forget_winners(q.index());
        }
    }

    /// Forgets the winners on queue `q`'s path: its head changed.
    fn forget_winners(&mut self, q: usize) {
        for &n in &self.paths[q] {
            self.winners[n as usize] = None;
        }
    }

    /// The entries of the queues it orders that were not handed out.
    pub(in crate::scheduler) fn into_rest(self) -> Vec<(OrderKey, JobId)> {
        let mut rest = Vec::new();
        for order in self.queues.into_iter().flatten() {
            let (entries, taken) = order.into_parts();
            rest.extend_from_slice(&entries[taken..]);
        }
        rest
    }
}

impl Scheduler {
    /// The demand `id` is weighed with in fair sharing: among the GPU models it accepts, the
    /// one that leaves its queue `q`'s share lowest (the first such model); with the share of
    /// `q` and of each cohort above it, bottom-up, were it charged in `usage`.
    pub(in crate::scheduler) fn fair_demand(
        &self,
        tree: &QuotaTree,
        usage: &[QuotaVec],
        id: JobId,
        q: QueueId,
    ) -> (QuotaVec, Vec<(u32, Share)>) {
        let mut best: Option<(QuotaVec, Vec<(u32, Share)>)> = None;
        let mut shares = Vec::new();
        for demand in self.unplaced_demands(id) {
            tree.path_shares(usage, q, &demand, true, &mut shares);
            let lower = best
                .as_ref()
                .is_none_or(|(_, b)| shares[0].1.compare(&b[0].1).is_lt());
            if lower {
                best = Some((demand, std::mem::take(&mut shares)));
            }
            // Where no limit names a model, shares read no `gpu:MODEL` key: every model gives
            // the first one's shares, which no later one beats.
            if !tree.splits_models() {
                break;
            }
        }
        best.unwrap_or_else(|| {
            tree.path_shares(usage, q, &QuotaVec::ZERO, true, &mut shares);
            (QuotaVec::ZERO, shares)
        })
    }

    /// The job that takes the turn the pass's order gave `token`: `token` itself outside
    /// fair-sharing trees, else the winner of the tournament of `token`'s tree, its shares
    /// read from the usage after the preemptions under way (`promised`, the pass's memory of
    /// it, which the quota checks share).
    pub(in crate::scheduler) fn fair_turn(
        &self,
        turns: &mut FairTurns,
        tenants: Option<&mut FairQueues>,
        promised: &mut PromisedQuota,
        token: JobId,
    ) -> JobId {
        let Some(tree) = self.state.quota.tree.as_ref() else {
            return token;
        };
        let Some(q) = self.state.job_queue(token).filter(|&q| turns.covers(q)) else {
            return token;
        };
        let changes = (tree.changes, self.state.quota.earmark_changes);
        if turns.changes != changes {
            turns.changes = changes;
            let usage = promised.of(&self.state).after_preemptions(tree).to_vec();
            // A head's shares read the usage of its queue's path alone, less its root (whose
            // share is always nothing: it has no parent to borrow from, and passes nothing
            // up): only the heads of queues whose path below the root holds a node whose
            // usage changed are read again. A start changes its queue's path up to the root,
            // so this spares the heads of the root's other children.
            let changed: Vec<bool> = (0..usage.len())
                .map(|n| turns.usage.get(n) != usage.get(n))
                .collect();
            for q in 0..turns.heads.len() {
                let Some(head) = turns.heads[q].as_mut() else {
                    continue;
                };
                let path = &turns.paths[q];
                let below_root = &path[..path.len().saturating_sub(1)];
                if !head.stale && below_root.iter().any(|&n| changed[n as usize]) {
                    head.stale = true;
                    turns.forget_winners(q);
                }
            }
            turns.usage = usage;
        }
        let root = tree.root_of(q);
        let Some(winner) = self.nominee(turns, tenants.as_deref(), tree, root) else {
            return token;
        };
        debug_assert!(
            self.nominee_unkept(turns, tenants.as_deref(), tree, root) == Some(winner),
            "the kept tournament winners disagree with a full tournament"
        );
        turns.heads[winner] = None;
        turns.forget_winners(winner);
        let taken = match turns.queues[winner].as_mut() {
            Some(order) => order.next(),
            None => tenants.and_then(|t| t.pop(QueueId(winner as u32))),
        };
        taken.unwrap_or(token)
    }

    /// The queue (by index) whose head wins at `node`, if any queue below it has one.
    fn nominee(
        &self,
        turns: &mut FairTurns,
        tenants: Option<&FairQueues>,
        tree: &QuotaTree,
        node: u32,
    ) -> Option<usize> {
        let n = node as usize;
        if let Some(known) = turns.winners[n] {
            return known;
        }
        let winner = self.find_nominee(turns, tenants, tree, n);
        turns.winners[n] = Some(winner);
        winner
    }

    /// [`Scheduler::nominee`] with every winner found again (debug builds' check of the kept
    /// winners; the heads are read as the tournament reads them).
    fn nominee_unkept(
        &self,
        turns: &mut FairTurns,
        tenants: Option<&FairQueues>,
        tree: &QuotaTree,
        node: u32,
    ) -> Option<usize> {
        turns.winners.iter_mut().for_each(|w| *w = None);
        self.nominee(turns, tenants, tree, node)
    }

    /// [`Scheduler::nominee`] found again: the children's nominees compared.
    fn find_nominee(
        &self,
        turns: &mut FairTurns,
        tenants: Option<&FairQueues>,
        tree: &QuotaTree,
        n: usize,
    ) -> Option<usize> {
        if n < tree.queue_count() {
            return self.load_head(turns, tenants, tree, n).then_some(n);
        }
        let mut best: Option<(usize, (bool, Option<Share>))> = None;
        for &child in &tree.children[n] {
            let Some(q) = self.nominee(turns, tenants, tree, child) else {
                continue;
            };
            let head = turns.heads[q].as_ref()?;
            let standing = head.standing(child);
            let better = match &best {
                None => true,
                Some((b, best_standing)) => {
                    let other = turns.heads[*b].as_ref()?;
                    wins(standing, head.key, *best_standing, other.key)
                }
            };
            if better {
                best = Some((q, standing));
            }
        }
        best.map(|(q, _)| q)
    }

    /// Makes sure queue `q`'s head is read and its shares fresh; false when it has no job left.
    fn load_head(
        &self,
        turns: &mut FairTurns,
        tenants: Option<&FairQueues>,
        tree: &QuotaTree,
        q: usize,
    ) -> bool {
        let queue = QueueId(q as u32);
        if let Some(head) = turns.heads[q].as_ref().filter(|h| !h.stale) {
            debug_assert!(
                self.head_is_fresh(head, tree, &turns.usage, queue),
                "a fair-sharing head's shares kept stale"
            );
            return true;
        }
        let (key, id) = match turns.heads[q].take() {
            Some(head) => (head.key, head.id),
            None => {
                let next = match turns.queues[q].as_mut() {
                    Some(order) => order.peek(),
                    None => tenants.and_then(|t| t.peek(queue)),
                };
                match next {
                    Some(entry) => entry,
                    None => return false,
                }
            }
        };
        let (demand, shares) = self.fair_demand(tree, &turns.usage, id, queue);
        turns.heads[q] = Some(Head {
            key,
            id,
            demand,
            shares,
            stale: false,
        });
        true
    }
}

impl Scheduler {
    /// Whether `head` of queue `q` has the demand and shares it would be read with from
    /// `usage` (debug builds' check of the heads kept across changes of other paths).
    fn head_is_fresh(&self, head: &Head, tree: &QuotaTree, usage: &[QuotaVec], q: QueueId) -> bool {
        let (demand, shares) = self.fair_demand(tree, usage, head.id, q);
        head.demand == demand && head.shares == shares
    }
}

/// Whether a nominee standing `a` with key `a_key` beats one standing `b` with `b_key`: not
/// borrowing first, then the lower share, then the earlier key.
fn wins(
    a: (bool, Option<Share>),
    a_key: OrderKey,
    b: (bool, Option<Share>),
    b_key: OrderKey,
) -> bool {
    if a.0 != b.0 {
        return !a.0;
    }
    let by_share = match (a.1, b.1) {
        (Some(x), Some(y)) => x.compare(&y),
        _ => std::cmp::Ordering::Equal,
    };
    by_share.then(a_key.cmp(&b_key)) == std::cmp::Ordering::Less
}

#[cfg(test)]
mod tests {
    use super::wins;
    use crate::{ClusterConfig, Decision, Event, JobSpec, Scheduler};

    /// A node of 6 cpus; a fair-sharing root over cohort `mid` (queues `a` and `b`, 1 cpu
    /// nominal each) and queue `c` (2), and queue `d` (2) in a cohort without fair sharing.
    /// Waiting one-cpu jobs `jobs` (name, queue), in that order by submit time; the pass's
    /// starts, in order.
    fn starts(jobs: &[(&str, &str)]) -> (Scheduler, Vec<String>) {
        let cluster: ClusterConfig = serde_json::from_str(
            r#"{"nodes": [{"name": "n1", "cpus": 6}],
                "cohorts": [{"name": "mid", "parent": "root"},
                            {"name": "root", "fair_sharing": {"enabled": true}},
                            {"name": "plain"}],
                "queues": [{"name": "a", "cohort": "mid", "quota": {"cpu": {"nominal": 1}}},
                           {"name": "b", "cohort": "mid", "quota": {"cpu": {"nominal": 1}}},
                           {"name": "c", "cohort": "root", "quota": {"cpu": {"nominal": 2}}},
                           {"name": "d", "cohort": "plain", "quota": {"cpu": {"nominal": 2}}}]}"#,
        )
        .unwrap();
        let mut s = Scheduler::new(cluster).unwrap();
        let events = jobs
            .iter()
            .enumerate()
            .map(|(i, &(name, queue))| {
                let mut job = JobSpec::new(name, 60_000, 1);
                job.queue = Some(queue.into());
                job.submit_ms = Some(i as u64);
                Event::Submit { job }
            })
            .collect();
        let outcome = s.tick(10, events).unwrap();
        (s, outcome.started())
    }

    #[test]
    fn a_tree_s_turns_go_to_the_queue_that_would_not_borrow_read_with_every_start_so_far() {
        // `a2` would make `a` borrow within `mid`: `b1` wins the second turn. Then `a2` would
        // make `mid` borrow within the root: `c1` and `c2` win theirs; no room is left for it.
        let jobs = [
            ("a1", "a"),
            ("a2", "a"),
            ("a3", "a"),
            ("a4", "a"),
            ("b1", "b"),
            ("c1", "c"),
            ("c2", "c"),
            ("d1", "d"),
        ];
        let (_, started) = starts(&jobs);
        assert_eq!(started, ["a1", "b1", "c1", "c2", "d1"]);
    }

    #[test]
    fn a_job_that_takes_either_model_is_weighed_with_the_one_that_leaves_its_queue_s_share_lowest()
    {
        // Queues `q` and `o` of a fair-sharing root, each one GPU of each model nominal; `q`'s
        // `r` runs on an A100; `p` (held) takes either model.
        let cluster: ClusterConfig = serde_json::from_value(serde_json::json!({
            "nodes": [{"name": "n1", "cpus": 8, "gpus": {"model": "a100", "count": 2}},
                      {"name": "n2", "cpus": 8, "gpus": {"model": "h100", "count": 2}}],
            "cohorts": [{"name": "root", "fair_sharing": {"enabled": true}}],
            "queues": [
                {"name": "q", "cohort": "root",
                 "quota": {"gpu:a100": {"nominal": 1}, "gpu:h100": {"nominal": 1}}},
                {"name": "o", "cohort": "root",
                 "quota": {"gpu:a100": {"nominal": 1}, "gpu:h100": {"nominal": 1}}}]
        }))
        .unwrap();
        let mut s = Scheduler::new(cluster).unwrap();
        let job = |id: &str, models: serde_json::Value| -> Event {
            serde_json::from_value(serde_json::json!({"type": "submit", "job": {"id": id,
                "time_limit_ms": 60_000, "queue": "q",
                "groups": [{"count": 1, "gpus": 1, "gpu_models": models}]}}))
            .unwrap()
        };
        let r = job("r", serde_json::json!(["a100"]));
        let p = job("p", serde_json::json!(["a100", "h100"]));
        let hold: Event =
            serde_json::from_value(serde_json::json!({"type": "hold", "job": "p"})).unwrap();
        assert!(s.tick(0, vec![r, p, hold]).unwrap().rejected.is_empty());
        let tree = s.state.quota.tree.as_ref().unwrap();
        let q = tree.queue_id("q").unwrap();
        let p = s.state.job_id("p").unwrap();
        let (demand, shares) = s.fair_demand(tree, &tree.usage, p, q);
        let amount = |key: &str| demand.as_slice()[tree.key(key).unwrap().index()];
        // On an A100 (the first model) `q` would borrow; on an H100 it does not.
        assert_eq!((amount("gpu:a100"), amount("gpu:h100")), (0, 1_000));
        assert!(!shares[0].1.is_borrowing());
    }

    #[test]
    fn a_nominee_wins_by_not_borrowing_then_by_the_lower_share_then_by_the_earlier_key() {
        use std::cmp::Reverse;
        // A fair-sharing root over `x` and `y` (1 cpu nominal each) and `z` (4): `x` runs
        // three one-cpu jobs (borrowing 2), `y` two (borrowing 1).
        let cluster: ClusterConfig = serde_json::from_str(
            r#"{"nodes": [{"name": "n1", "cpus": 6}],
                "cohorts": [{"name": "root", "fair_sharing": {"enabled": true}}],
                "queues": [{"name": "x", "cohort": "root", "quota": {"cpu": {"nominal": 1}}},
                           {"name": "y", "cohort": "root", "quota": {"cpu": {"nominal": 1}}},
                           {"name": "z", "cohort": "root", "quota": {"cpu": {"nominal": 4}}}]}"#,
        )
        .unwrap();
        let mut s = Scheduler::new(cluster).unwrap();
        let events = [
            ("x1", "x"),
            ("x2", "x"),
            ("x3", "x"),
            ("y1", "y"),
            ("y2", "y"),
        ]
        .map(|(name, queue)| {
            let mut job = JobSpec::new(name, 60_000, 1);
            job.queue = Some(queue.into());
            Event::Submit { job }
        })
        .to_vec();
        s.tick(0, events).unwrap();
        assert_eq!(s.state.running.len(), 5);
        let tree = s.state.quota.tree.as_ref().unwrap();
        let share = |q: &str| Some(tree.share_in(&tree.usage, tree.queue_id(q).unwrap().index()));
        let (x, y, z) = (share("x"), share("y"), share("z"));
        assert!(x.unwrap().value() > y.unwrap().value() && y.unwrap().value() > 0.0);
        let key = |n: u64| (Reverse(0), Reverse([0; 4]), n, n);
        let (early, late) = (key(1), key(2));
        // Not borrowing first, whatever the share and key.
        assert!(wins((false, x), late, (true, y), early));
        assert!(!wins((true, y), early, (false, x), late));
        // Both borrowing (or neither): the lower share, whatever the key.
        assert!(wins((true, y), late, (true, x), early));
        assert!(!wins((true, x), early, (true, y), late));
        // Equal shares, or a share unknown: the earlier key.
        assert!(wins((false, z), early, (false, z), late));
        assert!(!wins((false, z), late, (false, z), early));
        assert!(wins((true, None), early, (true, x), late));
        assert!(!wins((true, x), late, (true, None), early));
    }

    #[test]
    fn a_head_read_before_a_preemption_of_its_queue_s_job_is_read_again_after_it() {
        // A 9-cpu node; the fair-sharing root `all` holds `a` (2 cpus nominal), `b` (3) and
        // `c` (4), each reclaiming from any borrower. At 0 `a` runs five one-cpu jobs
        // (borrowing 3), `b` three, `c` one: the node is full.
        let cluster: ClusterConfig = serde_json::from_str(
            r#"{"nodes": [{"name": "n1", "cpus": 9}],
                "cohorts": [{"name": "all", "fair_sharing": {"enabled": true}}],
                "queues": [{"name": "a", "cohort": "all", "quota": {"cpu": {"nominal": 2}},
                            "preemption": {"reclaim_within_cohort": "any"}},
                           {"name": "b", "cohort": "all", "quota": {"cpu": {"nominal": 3}},
                            "preemption": {"reclaim_within_cohort": "any"}},
                           {"name": "c", "cohort": "all", "quota": {"cpu": {"nominal": 4}},
                            "preemption": {"reclaim_within_cohort": "any"}}],
                "policy": {"preemption": {"enabled": true}}}"#,
        )
        .unwrap();
        let mut s = Scheduler::new(cluster).unwrap();
        let job = |name: String, queue: &str, submit_ms: u64| {
            let mut job = JobSpec::new(name, 3_600_000, 1);
            job.queue = Some(queue.into());
            job.submit_ms = Some(submit_ms);
            Event::Submit { job }
        };
        let running = [("a", 5), ("b", 3), ("c", 1)]
            .iter()
            .flat_map(|&(queue, n)| (1..=n).map(move |i| (queue, i)))
            .map(|(queue, i)| job(format!("{queue}{i}"), queue, 0))
            .collect();
        assert_eq!(s.tick(0, running).unwrap().decisions.len(), 9);
        // At 1 `a-x` comes first in the pass's order, but the first turn's tournament reads
        // both heads and `b-p` wins it: `a` would borrow 4, `b` 1. `b-p` finds no room and
        // preempts one of `a`'s jobs, which lowers `a`'s usage after the preemptions: the
        // next turn reads `a-x`'s shares again (debug builds check a kept head against one
        // read afresh), and `a-x`, which would still borrow, waits.
        let out = s
            .tick(
                1,
                vec![job("a-x".into(), "a", 1), job("b-p".into(), "b", 2)],
            )
            .unwrap();
        let preempted: Vec<(&str, &str)> = out
            .decisions
            .iter()
            .map(|d| match d {
                Decision::Preempt { job, for_job, .. } => (job.as_str(), for_job.as_str()),
                other => panic!("only a preemption at 1, not {other:?}"),
            })
            .collect();
        assert_eq!(preempted.len(), 1);
        assert!(preempted[0].0.starts_with('a') && preempted[0].1 == "b-p");
        let a_x = s.state.job_id("a-x").unwrap();
        assert!(s.state.pending.contains(&a_x));
    }

    #[test]
    fn a_pass_that_stops_early_reports_the_jobs_of_the_tree_it_did_not_hand_out() {
        // `d1` and `d2` take two cpus, the tree's first four turns the other four: the pass
        // stops there, before `a2`, `a3` and `a4`, and `d3`, outside the tree.
        let jobs = [
            ("d1", "d"),
            ("d2", "d"),
            ("a1", "a"),
            ("a2", "a"),
            ("a3", "a"),
            ("a4", "a"),
            ("b1", "b"),
            ("c1", "c"),
            ("c2", "c"),
            ("d3", "d"),
        ];
        let (s, started) = starts(&jobs);
        assert_eq!(started, ["d1", "d2", "a1", "b1", "c1", "c2"]);
        assert!(s.last.deferred.is_some());
        let mut pending: Vec<String> = s.explain().pending.into_iter().map(|p| p.job).collect();
        pending.sort();
        assert_eq!(pending, ["a2", "a3", "a4", "d3"]);
    }
}
