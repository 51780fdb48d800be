//! Running jobs in victim order, per partition of the preemptors, for order-based preemption
//! without a quota tree; kept from pass to pass where the plug-ins allow.
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
//! of asking the plug-ins about every job it outranks and sorting them.
//!
//! Where moreover the answers stay the same from pass to pass
//! (`order_keys_fixed_across_passes`: no age, fair-share or job-size weight;
//! `victim_plugins_fixed_across_passes`: no victim key that reads the time), the order is kept
//! for the next pass and brought up to date at its first search for the partition: a job
//! that left the running set, or whose run, base priority or time limit changed (the
//! stamp the answers were read from), is taken out; a job that started, or whose stamp
//! changed, or whose veto reached its end, is asked again and put in its place. Everything
//! else the answers read is the configuration (a reconfiguration forgets the order) or the
//! priority calculation (a new one rebuilds it). A shortcut: the reference pass asks at every
//! search; debug builds compare every search's candidates with the full walk's, and every
//! order brought up to date with one built afresh.

use std::cmp::Reverse;
use std::sync::Arc;

use crate::model::ids::{JobId, PartitionId};
use crate::policy::{PartitionHooks, PassContext, PassFigures, VictimKeys};
use crate::scheduler::Scheduler;
use crate::scheduler::pass::preempt::running_keys::RankKey;
use crate::scheduler::pass::preempt::{Basis, VictimCandidates, Walk};
use crate::state::JobView;

/// The victim orders, by the partition of the preemptors they were made for: those of this
/// pass, and, where they may be kept, those of earlier passes waiting to be brought up to date.
#[derive(Clone, Debug, Default)]
pub(in crate::scheduler) struct VictimOrders {
    by_partition: Vec<PartitionOrder>,
    /// Orders an earlier pass made, brought up to date since last asked.
    carried: u64,
}

impl VictimOrders {
    /// How many orders an earlier pass made were brought up to date (not made afresh) since
    /// the last call.
    pub(in crate::scheduler) fn take_carried(&mut self) -> u64 {
        std::mem::take(&mut self.carried)
    }
}

/// The running jobs in victim order as preemptors of one partition see them.
#[derive(Clone, Debug)]
struct PartitionOrder {
    partition: PartitionId,
    /// The figures of the pass it was last made or brought up to date in (compared by
    /// identity: each pass makes its own).
    figures: Arc<PassFigures>,
    /// The figures of the priority calculation its order keys were read under, if any.
    calc: Option<Arc<PassFigures>>,
    /// The jobs it ranks (those running when it was last made or brought up to date), by job
    /// id, with what their answers were read from.
    members: Vec<(JobId, Stamp)>,
    /// Those jobs in victim order.
    ranked: Vec<Ranked>,
}

/// What the plug-ins' answers about a running job are read from, besides the configuration:
/// the job itself (its arrival: a slot's id is reused once an ended job is forgotten), its
/// run's start, its base priority and its time limit.
type Stamp = (u64, u64, i32, u64);

/// A running job as every preemptor of one partition sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Ranked {
    victim: JobId,
    /// Its place in the victim order: the victim keys, then the later job first.
    order: (VictimKeys, Reverse<JobId>),
    /// Its order: a preemptor takes it only where it ranks higher.
    rank: RankKey,
    /// Where a veto removes it, the veto's end after now, if it has one.
    vetoed: Option<Option<u64>>,
}

/// The stamp of running job `job`.
fn stamp(job: JobView<'_>) -> Stamp {
    let start = job.current_run().map_or(0, |(start, _)| start);
    let spec = job.spec();
    (
        job.record().arrival,
        start,
        spec.priority,
        spec.time_limit_ms,
    )
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
        let kept = self.victim_order(preemptor, orders);
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

    /// The running jobs in victim order as `preemptor`'s partition sees them now: the order
    /// this pass made, or the one an earlier pass made brought up to date, or a new one.
    fn victim_order<'o>(
        &self,
        preemptor: JobView<'_>,
        orders: &'o mut VictimOrders,
    ) -> &'o [Ranked] {
        let partition = preemptor.record().partition;
        let calc = self
            .last
            .priority_calc
            .as_ref()
            .map(|calc| Arc::clone(calc.figures()));
        let at = match orders
            .by_partition
            .iter()
            .position(|order| order.partition == partition)
        {
            Some(at) => at,
            None => {
                orders.by_partition.push(self.fresh_order(preemptor, calc));
                return &orders.by_partition[orders.by_partition.len() - 1].ranked;
            }
        };
        let order = &mut orders.by_partition[at];
        if !Arc::ptr_eq(&order.figures, &self.last.figures) {
            let same_calc = match (&order.calc, &calc) {
                (Some(kept), Some(now)) => Arc::ptr_eq(kept, now),
                (kept, now) => kept.is_none() && now.is_none(),
            };
            let keep = same_calc
                && self
                    .profile
                    .order_keys_fixed_across_passes(&self.state.config.policy.priority.weights)
                && self.profile.victim_plugins_fixed_across_passes();
            if keep {
                self.bring_up_to_date(preemptor, order);
                orders.carried += 1;
            } else {
                *order = self.fresh_order(preemptor, calc);
            }
        }
        &order.ranked
    }

    /// Every running job as `preemptor`'s partition sees it now, in victim order.
    fn fresh_order(
        &self,
        preemptor: JobView<'_>,
        calc: Option<Arc<PassFigures>>,
    ) -> PartitionOrder {
        let context = self.last.figures.context(&self.state);
        let mut members = Vec::with_capacity(self.state.running.len());
        let mut ranked = Vec::with_capacity(self.state.running.len());
        for &v in &self.state.running {
            let Some(victim) = self.state.job_view(v) else {
                continue;
            };
            members.push((v, stamp(victim)));
            ranked.push(self.ranked(preemptor, victim, &context));
        }
        ranked.sort_unstable_by_key(|r| r.order);
        PartitionOrder {
            partition: preemptor.record().partition,
            figures: Arc::clone(&self.last.figures),
            calc,
            members,
            ranked,
        }
    }

    /// Brings an order an earlier pass made up to date with the running jobs now: takes out
    /// the jobs that left or whose stamp changed, and ranks those that came, changed, or whose
    /// veto ended.
    fn bring_up_to_date(&self, preemptor: JobView<'_>, order: &mut PartitionOrder) {
        let now = self.state.now_ms;
        let context = self.last.figures.context(&self.state);
        let mut gone = Vec::new();
        let mut came = Vec::new();
        let mut members = Vec::with_capacity(self.state.running.len());
        let mut kept = order.members.iter().peekable();
        for &v in &self.state.running {
            let Some(victim) = self.state.job_view(v) else {
                continue;
            };
            let now_stamp = stamp(victim);
            while let Some(&&(old, _)) = kept.peek()
                && old < v
            {
                gone.push(old);
                kept.next();
            }
            match kept.peek() {
                Some(&&(old, old_stamp)) if old == v => {
                    kept.next();
                    if old_stamp != now_stamp {
                        gone.push(v);
                        came.push(v);
                    }
                }
                _ => came.push(v),
            }
            members.push((v, now_stamp));
        }
        gone.extend(kept.map(|&(old, _)| old));
        for ranked in &order.ranked {
            let veto_ended = ranked
                .vetoed
                .is_some_and(|end| end.is_some_and(|end| end <= now));
            let running = || {
                members
                    .binary_search_by_key(&ranked.victim, |&(v, _)| v)
                    .is_ok()
            };
            if veto_ended && running() {
                gone.push(ranked.victim);
                came.push(ranked.victim);
            }
        }
        gone.sort_unstable();
        gone.dedup();
        came.sort_unstable();
        came.dedup();
        if !gone.is_empty() {
            order
                .ranked
                .retain(|ranked| gone.binary_search(&ranked.victim).is_err());
        }
        for &v in &came {
            if let Some(victim) = self.state.job_view(v) {
                order.ranked.push(self.ranked(preemptor, victim, &context));
            }
        }
        // A sorted run and a short tail: the stable sort merges them in about linear time.
        order.ranked.sort_by_key(|r| r.order);
        order.members = members;
        order.figures = Arc::clone(&self.last.figures);
        debug_assert_eq!(
            order.ranked,
            self.fresh_order(preemptor, order.calc.clone()).ranked,
            "an order brought up to date ranks as one made afresh"
        );
    }

    /// Running job `victim` as `preemptor`'s partition sees it now.
    fn ranked(
        &self,
        preemptor: JobView<'_>,
        victim: JobView<'_>,
        context: &PassContext<'_>,
    ) -> Ranked {
        let no_hooks = PartitionHooks::default();
        let hooks_of = |partition: PartitionId| {
            self.profile
                .partition(partition.index())
                .unwrap_or(&no_hooks)
        };
        let own_hooks = hooks_of(preemptor.record().partition);
        let (tier, keys, ..) = self.pass_key(victim, context);
        let hooks = [own_hooks, hooks_of(victim.record().partition)];
        let vetoed = self
            .profile
            .veto(hooks, preemptor, victim, context)
            .map(|veto| veto.until_ms().filter(|&t| t > self.state.now_ms));
        let victim_keys = self
            .profile
            .victim_keys(own_hooks, preemptor, victim, context);
        Ranked {
            victim: victim.id(),
            order: (victim_keys, Reverse(victim.id())),
            rank: (tier, keys),
            vetoed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::PriorityWeights;
    use crate::policy::builtin::{
        LeastLostWork, LowerPriorityFirst, MinRunTime, Multifactor, ShortestFirst,
    };
    use crate::policy::{Plugin, Profile};
    use crate::scheduler::pass::preempt::test_plugins::{ByPriority, OldestFirst};
    use crate::{ClusterConfig, Event, JobSpec};

    /// The order, then lower priority first and a minimum run time of 10 s.
    fn profile_with(order: impl Plugin) -> Profile {
        Profile::builder()
            .plugin(order)
            .plugin(LowerPriorityFirst)
            .plugin(MinRunTime::new(10_000))
            .build()
            .unwrap()
    }

    fn shortest_first() -> Profile {
        profile_with(ShortestFirst)
    }

    /// A 5-cpu node; order-based preemption is configured but off, so that nothing moves; ended
    /// jobs are forgotten 1 ms after they end. At 0, one-cpu jobs `t10`, `t20`, `t25`, `t30`
    /// and `t40` (time limits in minutes; `t30` of priority 5, `t40` of 1, the others 0)
    /// start; at 1, `p` (25 minutes, two tasks) waits. In queue `q` (5 cpus nominal) where
    /// `queue`.
    fn five_running(profile: Profile, queue: bool) -> Scheduler {
        let mut cluster: ClusterConfig = serde_json::from_str(if queue {
            r#"{"nodes": [{"name": "n1", "cpus": 5}],
                "queues": [{"name": "q", "quota": {"cpu": {"nominal": 5}}}]}"#
        } else {
            r#"{"nodes": [{"name": "n1", "cpus": 5}]}"#
        })
        .unwrap();
        cluster.policy.preemption.order_based = true;
        cluster.policy.min_job_age_ms = 1;
        let mut s = Scheduler::with_profile(cluster, profile).unwrap();
        let job = |name: &str, minutes: u64, count: u32, priority: i32| {
            let mut job = JobSpec::new(name, minutes * 60_000, count);
            job.priority = priority;
            if queue {
                job.queue = Some("q".into());
            }
            Event::Submit { job }
        };
        let first = vec![
            job("t10", 10, 1, 0),
            job("t20", 20, 1, 0),
            job("t25", 25, 1, 0),
            job("t30", 30, 1, 5),
            job("t40", 40, 1, 1),
        ];
        s.tick(0, first).unwrap();
        s.tick(1, vec![job("p", 25, 2, 0)]).unwrap();
        assert_eq!(s.state.running.len(), 5);
        assert_eq!(s.state.pending.len(), 1);
        s
    }

    fn id(s: &Scheduler, name: &str) -> JobId {
        s.state.job_id(name).unwrap()
    }

    fn free(s: &Scheduler, names: &[&str]) -> Vec<(JobId, Basis)> {
        names
            .iter()
            .map(|name| (id(s, name), Basis::Free))
            .collect()
    }

    /// The order kept for `p`'s partition equals one made afresh now, and so do its members.
    fn same_as_fresh(s: &Scheduler, orders: &VictimOrders) {
        assert_eq!(orders.by_partition.len(), 1);
        let kept = &orders.by_partition[0];
        let fresh = s.fresh_order(s.state.job_view(id(s, "p")).unwrap(), kept.calc.clone());
        assert_eq!(kept.ranked, fresh.ranked);
        assert_eq!(kept.members, fresh.members);
    }

    #[test]
    fn the_kept_order_gives_the_jobs_strictly_outranked_in_victim_order_and_the_vetoes_end() {
        let mut s = five_running(shortest_first(), false);
        let p = id(&s, "p");
        let mut orders = VictimOrders::default();
        // At 1 ms the minimum run time vetoes every job until 10 s.
        assert_eq!(
            s.kept_victims(p, false, &mut orders),
            Some((Vec::new(), Some(10_000)))
        );
        s.tick(20_000, vec![]).unwrap();
        // `p` (25 minutes) outranks `t30` and `t40`, not `t25`, its equal; `t40`, of the
        // lower priority, first.
        let candidates = s.kept_victims(p, false, &mut orders);
        assert_eq!(candidates, Some((free(&s, &["t40", "t30"]), None)));
        assert_eq!(candidates.unwrap(), s.victim_candidates(p, Walk::Every));
    }

    #[test]
    fn the_order_is_kept_only_where_the_plug_ins_answer_alike_for_a_partition_s_pass() {
        let s = five_running(shortest_first(), false);
        let p = id(&s, "p");
        let kept = |s: &Scheduler, fair| s.kept_victims(p, fair, &mut VictimOrders::default());
        assert!(kept(&s, false).is_some());
        // Without shortcuts, or for a fair-sharing search.
        assert_eq!(kept(&s.with_reference_pass(), false), None);
        assert_eq!(kept(&s, true), None);
        // Without order-based preemption.
        let mut no_order = five_running(shortest_first(), false);
        no_order.state.config_mut().policy.preemption.order_based = false;
        assert_eq!(kept(&no_order, false), None);
        // With a quota tree (borrowing first reads its usage).
        let queued = five_running(shortest_first(), true);
        assert_eq!(
            queued.kept_victims(id(&queued, "p"), false, &mut VictimOrders::default()),
            None
        );
        // With a victim or order plug-in of the host's.
        let hosts = Profile::builder()
            .plugin(ShortestFirst)
            .plugin(OldestFirst)
            .build()
            .unwrap();
        let s = five_running(hosts, false);
        assert_eq!(kept(&s, false), None);
        let s = five_running(profile_with(ByPriority), false);
        assert_eq!(kept(&s, false), None);
    }

    #[test]
    fn an_order_is_made_once_a_pass_per_partition_and_carried_to_the_next_pass() {
        let mut s = five_running(shortest_first(), false);
        let p = id(&s, "p");
        let mut orders = VictimOrders::default();
        s.kept_victims(p, false, &mut orders).unwrap();
        s.kept_victims(p, false, &mut orders).unwrap();
        assert_eq!(orders.by_partition.len(), 1);
        assert_eq!(orders.take_carried(), 0);
        s.tick(20_000, vec![]).unwrap();
        s.kept_victims(p, false, &mut orders).unwrap();
        s.kept_victims(p, false, &mut orders).unwrap();
        assert_eq!(orders.by_partition.len(), 1);
        assert!(Arc::ptr_eq(
            &orders.by_partition[0].figures,
            &s.last.figures
        ));
        assert_eq!(orders.take_carried(), 1);
        assert_eq!(orders.take_carried(), 0);
    }

    #[test]
    fn an_order_is_made_afresh_where_a_calculation_order_keys_or_victim_keys_may_have_moved() {
        // Made under a priority calculation that no longer holds.
        let mut s = five_running(shortest_first(), false);
        let p = id(&s, "p");
        let mut orders = VictimOrders::default();
        s.kept_victims(p, false, &mut orders).unwrap();
        orders.by_partition[0].calc = Some(Arc::clone(&s.last.figures));
        s.tick(20_000, vec![]).unwrap();
        s.kept_victims(p, false, &mut orders).unwrap();
        assert_eq!(orders.take_carried(), 0);
        assert_eq!(orders.by_partition[0].calc, None);
        // Order keys that read the age; a victim key that reads the time since a checkpoint.
        let weights = PriorityWeights {
            age: 1,
            ..PriorityWeights::default()
        };
        let least_lost_work = Profile::builder()
            .plugin(ShortestFirst)
            .plugin(LeastLostWork)
            .build()
            .unwrap();
        for profile in [
            profile_with(Multifactor::with_weights(weights)),
            least_lost_work,
        ] {
            let mut s = five_running(profile, false);
            let p = id(&s, "p");
            let mut orders = VictimOrders::default();
            s.kept_victims(p, false, &mut orders).unwrap();
            s.tick(20_000, vec![]).unwrap();
            s.kept_victims(p, false, &mut orders).unwrap();
            assert_eq!(orders.take_carried(), 0);
            assert!(Arc::ptr_eq(
                &orders.by_partition[0].figures,
                &s.last.figures
            ));
        }
    }

    #[test]
    fn an_order_brought_up_to_date_ranks_as_one_made_afresh() {
        let mut s = five_running(shortest_first(), false);
        let p = id(&s, "p");
        let mut orders = VictimOrders::default();
        s.kept_victims(p, false, &mut orders).unwrap();
        // The vetoes end; `t10`, vetoed when the order was made, ends too.
        let cancel = |name: &str| Event::Cancel { job: name.into() };
        s.tick(20_000, vec![cancel("t10")]).unwrap();
        assert!(s.state.job_view(id(&s, "t10")).is_some());
        assert_eq!(
            s.kept_victims(p, false, &mut orders),
            Some((free(&s, &["t40", "t30"]), None))
        );
        assert_eq!(orders.take_carried(), 1);
        same_as_fresh(&s, &orders);
        // `t10` is forgotten and `n` takes its slot (an id below the kept jobs'), and `t40`'s
        // priority rises above `t30`'s.
        let t10 = id(&s, "t10");
        let mut n = JobSpec::new("n", 5 * 60_000, 1);
        n.priority = 0;
        let events = vec![
            Event::Submit { job: n },
            Event::SetPriority {
                job: "t40".into(),
                priority: 9,
            },
        ];
        s.tick(25_000, events).unwrap();
        assert_eq!(id(&s, "n"), t10);
        assert!(s.state.running.contains(&t10));
        assert_eq!(
            s.kept_victims(p, false, &mut orders),
            Some((free(&s, &["t30", "t40"]), None))
        );
        assert_eq!(orders.take_carried(), 1);
        same_as_fresh(&s, &orders);
    }

    #[test]
    fn a_running_job_s_stamp_is_its_arrival_start_priority_and_time_limit() {
        let s = five_running(shortest_first(), false);
        let t30 = s.state.job_view(id(&s, "t30")).unwrap();
        assert_eq!(stamp(t30), (t30.record().arrival, 0, 5, 30 * 60_000));
        let t40 = s.state.job_view(id(&s, "t40")).unwrap();
        assert_ne!(stamp(t30), stamp(t40));
    }
}
