//! Step 5 of a pass: order pending jobs by partition tier, then the profile's order keys
//! (lexicographic, highest first), then submit time, then arrival; and collect the admission
//! plug-ins' denials. The keys are computed at every pass, or once a period
//! ([`calc_period`]), when the order is kept across passes ([`order_index`]).

pub(in crate::scheduler) mod admission_fair_sharing;
pub(in crate::scheduler) mod calc_period;
pub(in crate::scheduler) mod fair_sharing;
pub(in crate::scheduler) mod lazy;
pub(in crate::scheduler) mod order_index;
pub(in crate::scheduler) mod slots;
mod sorted_runs;

use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::sync::Arc;

use crate::model::ids::JobId;
use crate::placement::FreeTotals;
use crate::policy::{OrderKeys, PassContext};
use crate::scheduler::Scheduler;
use crate::scheduler::pass::order::admission_fair_sharing::FairQueues;
use crate::scheduler::pass::order::calc_period::PriorityCalc;
use crate::scheduler::pass::order::order_index::{LastPassOrder, OrderIndex};
use crate::scheduler::pass::order::slots::{PassList, PassOrder};
use crate::scheduler::shortcuts::settled::PendingSummary;
use crate::state::JobView;

/// The sort key of a pending job: partition tier and order keys (highest first), submit time,
/// arrival (unique, so the order is total).
pub(in crate::scheduler) type OrderKey = (Reverse<i32>, Reverse<OrderKeys>, u64, u64);

/// What a pass knows of the pending jobs before it visits any.
pub(in crate::scheduler) struct KeyedPending {
    /// Every pending job's place.
    pub(in crate::scheduler) order: PendingOrder,
    /// What the pass needs to know of them all.
    pub(in crate::scheduler) summary: PendingSummary,
    /// The admission plug-ins' denials.
    pub(in crate::scheduler) denied: BTreeMap<JobId, String>,
}

/// Where a pass finds every pending job with its sort key.
#[derive(Debug)]
pub(in crate::scheduler) enum PendingOrder {
    /// Keyed for this pass: `sorted`, or not (then the pass sorts only as far as it reads:
    /// [`crate::scheduler::pass::order::lazy::LazyOrder`]).
    Listed {
        keyed: Vec<(OrderKey, JobId)>,
        sorted: bool,
    },
    /// In the order index kept across passes ([`order_index`]), sorted, for the pass to read in
    /// place; with what the index says of the order next to the last pass's, for a continued
    /// pass.
    Indexed(LastPassOrder),
}

impl Scheduler {
    /// Every pending job's sort key at `now_ms`, what the pass needs to know of them all, and
    /// the admission plug-ins' denials.
    pub(in crate::scheduler) fn keyed_pending(&mut self, now_ms: u64) -> KeyedPending {
        let changes = self.state.pending_changes.take();
        // Between calculations, a job keeps the key it got against the calculation's figures;
        // keys that never move with time are kept as they are, from pass to pass.
        let mut calc = self.last.priority_calc.take();
        let kept_order = self.last.order_index.take();
        if self.indexes_order() && (calc.is_some() || self.keys_timeless()) {
            let mut index = self.updated_order_index(calc.as_mut(), kept_order, changes);
            let since = index.since_last_pass();
            index.serve();
            let summary = index.summary(now_ms);
            #[cfg(debug_assertions)]
            self.check_order_index(calc.as_ref(), &index.keyed(), &summary, now_ms);
            self.last.order_index = Some(index);
            self.last.priority_calc = calc;
            return KeyedPending {
                order: PendingOrder::Indexed(since),
                summary,
                denied: BTreeMap::new(),
            };
        }
        let calc_figures = calc.as_ref().map(|calc| Arc::clone(calc.figures()));
        let key_figures = calc_figures.as_ref().unwrap_or(&self.last.figures);
        let key_context = key_figures.context(&self.state);
        let context = self.last.figures.context(&self.state);
        let mut summary = PendingSummary {
            need: FreeTotals::floor(),
            all_queued: true,
            next_begin_ms: None,
        };
        let mut denied = BTreeMap::new();
        // Sized up front: a queue of 10,000 would otherwise be copied a dozen times as it grows.
        let mut keyed: Vec<(OrderKey, JobId)> = Vec::with_capacity(self.state.pending.len());
        keyed.extend(self.state.pending.iter().filter_map(|&id| {
            let view = self.state.job_view(id)?;
            let job = view.record();
            summary.need.include(&job.totals.need);
            summary.all_queued &= job.queue.is_some();
            let backoff = job.ready.backoff_until_ms;
            for begin in [job.spec.begin_ms, backoff].into_iter().flatten() {
                if begin > now_ms {
                    summary.next_begin_ms =
                        Some(summary.next_begin_ms.map_or(begin, |n| n.min(begin)));
                }
            }
            if let Some(reason) = self.profile.admission(view, &context) {
                denied.insert(id, reason);
            }
            let key = match calc.as_mut() {
                Some(calc) => self.calc_key(calc, view, &key_context),
                None => self.order_key(view, &key_context),
            };
            Some((key, id))
        }));
        self.last.priority_calc = calc;
        // A plug-in silenced part-way keys no job, so the keys compare alike.
        for slot in self.profile.order_silenced() {
            for ((_, Reverse(keys), ..), _) in &mut keyed {
                keys[slot] = 0;
            }
        }
        KeyedPending {
            order: PendingOrder::Listed {
                keyed,
                sorted: false,
            },
            summary,
            denied,
        }
    }

    /// Every pending job with its sort key, and whether they come sorted, as `order` places
    /// them.
    pub(in crate::scheduler) fn listed(
        &self,
        order: PendingOrder,
    ) -> (Vec<(OrderKey, JobId)>, bool) {
        match order {
            PendingOrder::Listed { keyed, sorted } => (keyed, sorted),
            PendingOrder::Indexed(_) => (self.indexed_order(), true),
        }
    }

    /// The order a full pass visits the pending jobs of `order` in: read in place from the
    /// order index where no slot rule can apply, else listed.
    pub(in crate::scheduler) fn pass_order(&self, order: PendingOrder) -> PassOrder {
        if let (PendingOrder::Indexed(_), Some(index)) = (&order, &self.last.order_index)
            && !PassOrder::reorders(&self.state)
        {
            return PassOrder::plain(PassList::Indexed {
                place: index.place_at(0),
                len: index.len(),
            });
        }
        let (keyed, sorted) = self.listed(order);
        PassOrder::fresh(keyed, sorted, &self.state)
    }

    /// Every job of the order index, in order.
    pub(in crate::scheduler) fn indexed_order(&self) -> Vec<(OrderKey, JobId)> {
        self.last
            .order_index
            .as_ref()
            .map(OrderIndex::keyed)
            .expect("the order index is kept for the pass it serves")
    }

    /// Whether the pending order is kept across passes ([`order_index`]) where its keys allow
    /// (under a calculation period, or keys that never move with time:
    /// [`Scheduler::keys_timeless`]): with keys that are fixed in a pass and never silenced (the
    /// built-in order plug-ins), and no admission votes (which see every job at every pass). The
    /// reference pass keys every job at every pass.
    fn indexes_order(&self) -> bool {
        self.shortcuts
            && self.profile.order_keys_fixed_in_pass()
            && !self.profile.votes_on_admission()
    }

    /// Whether a pending job's key stays what it was computed as while the job's base
    /// priority, its time limit and the configuration do: every order plug-in reads only the
    /// job and the configuration, never the time, the fair-share usage or the cluster's size
    /// ([`crate::policy::Profile`]'s `order_keys_fixed_across_passes`; the default profile
    /// with the default weights, submit order). Then the order index keeps the keys from pass to
    /// pass without a calculation period, exactly: a job is keyed again where it changes (a
    /// submit, a requeue, `set_priority`, `set_time_limit`) and a reconfiguration builds the
    /// index again.
    fn keys_timeless(&self) -> bool {
        self.profile
            .order_keys_fixed_across_passes(&self.state.config.policy.priority.weights)
    }

    /// The order index of calculation `calc` (`None`: of keys that never move with time):
    /// `kept` with `changes` applied when it serves the same and the changes are known, else
    /// built from every pending job.
    fn updated_order_index(
        &self,
        mut calc: Option<&mut PriorityCalc>,
        kept: Option<OrderIndex>,
        changes: Option<Vec<JobId>>,
    ) -> OrderIndex {
        let figures = calc.as_ref().map(|calc| Arc::clone(calc.figures()));
        // Timeless keys read none of the figures: the pass's own figures serve.
        let key_context = figures
            .as_ref()
            .unwrap_or(&self.last.figures)
            .context(&self.state);
        let mut key = |view: JobView<'_>| match calc.as_deref_mut() {
            Some(calc) => self.calc_key(calc, view, &key_context),
            None => self.order_key(view, &key_context),
        };
        match (kept, changes) {
            (Some(mut index), Some(changes)) if index.serves(figures.as_ref()) => {
                for id in changes {
                    match self
                        .state
                        .job_view(id)
                        .filter(|_| self.state.pending.contains(&id))
                    {
                        Some(view) => index.insert(view, key(view)),
                        None => index.remove(id),
                    }
                }
                index
            }
            _ => {
                let mut index = OrderIndex::new(figures.as_ref());
                for view in self.state.pending() {
                    index.insert(view, key(view));
                }
                index
            }
        }
    }

    /// Checks the order index's answers against a walk of every pending job (debug builds).
    #[cfg(debug_assertions)]
    fn check_order_index(
        &self,
        calc: Option<&PriorityCalc>,
        keyed: &[(OrderKey, JobId)],
        summary: &PendingSummary,
        now_ms: u64,
    ) {
        let context = self.last.figures.context(&self.state);
        let mut walked: Vec<(OrderKey, JobId)> = self
            .state
            .pending()
            .map(|view| {
                let key = match calc {
                    Some(calc) => calc.key(view).expect("every pending job is keyed"),
                    // Keyed afresh in this pass: a key that moved is caught here.
                    None => self.order_key(view, &context),
                };
                (key, view.id())
            })
            .collect();
        walked.sort_unstable();
        assert_eq!(
            keyed, walked,
            "the order index disagrees with the pending jobs"
        );
        let next_begin = self
            .state
            .pending()
            .flat_map(|view| {
                [
                    view.record().spec.begin_ms,
                    view.record().ready.backoff_until_ms,
                ]
            })
            .flatten()
            .filter(|&begin| begin > now_ms)
            .min();
        assert_eq!(
            summary.next_begin_ms, next_begin,
            "the order index's next begin"
        );
        for view in self.state.pending() {
            let mut floor = summary.need;
            floor.include(&view.record().totals.need);
            assert_eq!(
                floor, summary.need,
                "the order index's need floor is too high"
            );
            assert!(!summary.all_queued || view.record().queue.is_some());
        }
    }

    /// `job`'s key in calculation `calc`: the one it keeps, or one computed now and kept.
    fn calc_key(
        &self,
        calc: &mut PriorityCalc,
        job: JobView<'_>,
        key_context: &PassContext<'_>,
    ) -> OrderKey {
        calc.key(job).unwrap_or_else(|| {
            let key = self.order_key(job, key_context);
            calc.keep(job, key);
            key
        })
    }

    /// The job's sort key in the pass of `context`.
    pub(in crate::scheduler) fn order_key(
        &self,
        job: JobView<'_>,
        context: &PassContext<'_>,
    ) -> OrderKey {
        let record = job.record();
        let tier = self.state.partitions[record.partition.index()].priority_tier;
        let keys = self.profile.order_keys(job, context);
        (
            Reverse(tier),
            Reverse(keys),
            record.submit_ms,
            record.arrival,
        )
    }

    /// The key `job` is ordered by in a pass of `context`: the one kept from the last
    /// calculation under `policy.priority.calc_period_ms` (computed against its figures if the
    /// job has none yet), else the one of `context`.
    pub(in crate::scheduler) fn pass_key(
        &self,
        job: JobView<'_>,
        context: &PassContext<'_>,
    ) -> OrderKey {
        match &self.last.priority_calc {
            Some(calc) => calc
                .key(job)
                .unwrap_or_else(|| self.order_key(job, &calc.figures().context(&self.state))),
            None => self.order_key(job, context),
        }
    }

    /// Pending jobs in the order a pass of `context` considers them (admission-fair-sharing
    /// queues' slots in their order as of now, before any start).
    pub(in crate::scheduler) fn ordered_pending(&self, context: &PassContext<'_>) -> Vec<JobId> {
        let mut keyed: Vec<(OrderKey, JobId)> = self
            .state
            .pending()
            .map(|job| (self.pass_key(job, context), job.id()))
            .collect();
        keyed.sort_unstable_by_key(|(key, _)| *key);
        if self.state.admission_fair_sharing() {
            FairQueues::new(&keyed, &self.state).fill_slots(&mut keyed);
        }
        keyed.into_iter().map(|(_, id)| id).collect()
    }
}

#[cfg(test)]
mod tests {
    use crate::{ClusterConfig, Event, JobSpec, Scheduler};

    /// A node of one cpu in partitions `high` (tier 1) and `low` (tier 0), and pending jobs
    /// `(name, partition, priority, submit_ms)` submitted in that order at 1,000 (each may not
    /// begin before `begin_ms`, `None`: at once).
    fn pending(jobs: &[(&str, &str, i32, u64)], begin_ms: Option<u64>) -> Scheduler {
        let cluster: ClusterConfig = serde_json::from_str(
            r#"{"nodes": [{"name": "n1", "cpus": 1, "partitions": ["high", "low"]}],
                "partitions": [{"name": "high", "priority_tier": 1},
                               {"name": "low", "priority_tier": 0, "default": true}]}"#,
        )
        .unwrap();
        let mut s = Scheduler::new(cluster).unwrap();
        let events = jobs
            .iter()
            .map(|&(name, partition, priority, submit_ms)| {
                let mut job = JobSpec::new(name, 60_000, 1).with_priority(priority);
                job.partition = Some(partition.into());
                job.submit_ms = Some(submit_ms);
                job.begin_ms = begin_ms;
                Event::Submit { job }
            })
            .collect();
        s.tick(1_000, events).unwrap();
        s
    }

    /// Jobs submitted out of order: the order is tier, then priority, then submit time, then
    /// arrival.
    const JOBS: [(&str, &str, i32, u64); 5] = [
        ("low-tier-urgent", "low", 9, 0),
        ("late", "high", 0, 500),
        ("first-of-two", "high", 0, 100),
        ("second-of-two", "high", 0, 100),
        ("urgent", "high", 5, 900),
    ];

    const ORDER: [&str; 5] = [
        "urgent",
        "first-of-two",
        "second-of-two",
        "late",
        "low-tier-urgent",
    ];

    #[test]
    fn pending_jobs_go_by_tier_then_priority_then_submit_time_then_arrival() {
        let s = pending(&JOBS, Some(1_000_000));
        let context = s.last.figures.context(&s.state);
        let order: Vec<&str> = s
            .ordered_pending(&context)
            .into_iter()
            .map(|id| s.state.job_name(id).unwrap())
            .collect();
        assert_eq!(order, ORDER);
        // The keys themselves sort so.
        let key = |name: &str| {
            let job = s.state.job_view(s.state.job_id(name).unwrap()).unwrap();
            s.order_key(job, &context)
        };
        for pair in ORDER.windows(2) {
            assert!(key(pair[0]) < key(pair[1]), "{pair:?}");
        }
    }

    #[test]
    fn a_pass_visits_the_first_job_in_order_first() {
        // One cpu: the job first in order starts, the others wait.
        let s = pending(&JOBS, None);
        let running: Vec<&str> = s
            .state
            .running
            .iter()
            .map(|&id| s.state.job_name(id).unwrap())
            .collect();
        assert_eq!(running, [ORDER[0]]);
    }

    /// A node of one cpu that `run` (of queue `q`) fills from 0, and `profile` (the default one if
    /// `None`); the order keys calculated once every 10 s where `period`.
    fn one_busy_cpu(profile: Option<crate::policy::Profile>, period: bool) -> Scheduler {
        let mut cluster: ClusterConfig = serde_json::from_str(
            r#"{"nodes": [{"name": "n1", "cpus": 1}], "queues": [{"name": "q"}]}"#,
        )
        .unwrap();
        cluster.policy.priority.calc_period_ms = period.then_some(10_000);
        let mut s = match profile {
            Some(profile) => Scheduler::with_profile(cluster, profile).unwrap(),
            None => Scheduler::new(cluster).unwrap(),
        };
        let mut run = JobSpec::new("run", 3_600_000, 1);
        run.queue = Some("q".into());
        s.tick(0, vec![Event::Submit { job: run }]).unwrap();
        assert_eq!(s.state.running.len(), 1);
        s
    }

    /// Submits `(name, queued, begin_ms)` at `now`.
    fn submit(s: &mut Scheduler, now: u64, jobs: &[(&str, bool, Option<u64>)]) {
        let events = jobs
            .iter()
            .map(|&(name, queued, begin_ms)| {
                let mut job = JobSpec::new(name, 60_000, 1);
                job.queue = queued.then(|| "q".to_string());
                job.begin_ms = begin_ms;
                Event::Submit { job }
            })
            .collect();
        assert!(s.tick(now, events).unwrap().rejected.is_empty());
    }

    #[test]
    fn a_pass_keys_every_pending_job_and_knows_the_next_begin_after_now_and_who_has_no_queue() {
        // Keyed afresh (keys that grow with age), and from the order index under a calculation
        // period or with keys that never move (where debug builds check the index against a
        // walk of the pending jobs).
        for (period, age_weight) in [(false, 1_000), (false, 0), (true, 1_000)] {
            let mut s = one_busy_cpu(None, period);
            let mut config = ClusterConfig::clone(&s.state.config);
            config.policy.priority.weights.age = age_weight;
            s.reconfigure(config).unwrap();
            let indexed = period || age_weight == 0;
            // At 5,000: begins at 4,000 (past), 5,000 (now), 7,000 and 9,000.
            let jobs = [
                ("past", true, Some(4_000)),
                ("now", true, Some(5_000)),
                ("later", true, Some(9_000)),
                ("next", true, Some(7_000)),
                ("plain", true, None),
            ];
            submit(&mut s, 5_000, &jobs);
            let pending = s.keyed_pending(5_000);
            assert_eq!(pending.summary.next_begin_ms, Some(7_000));
            assert!(pending.summary.all_queued);
            let (mut keyed, sorted) = s.listed(pending.order);
            assert_eq!(sorted, indexed);
            let context = s.last.figures.context(&s.state);
            let mut expected: Vec<_> = s
                .state
                .pending()
                .map(|job| (s.pass_key(job, &context), job.id()))
                .collect();
            keyed.sort_unstable();
            expected.sort_unstable();
            assert_eq!(keyed.len(), 5);
            assert_eq!(keyed, expected);
            // A job without a queue.
            submit(&mut s, 6_000, &[("unqueued", false, None)]);
            let pending = s.keyed_pending(6_000);
            assert!(!pending.summary.all_queued);
            assert_eq!(pending.summary.next_begin_ms, Some(7_000));
        }
    }

    /// Shortest-first keys read the time limit: a `set_time_limit` on a pending job keys it
    /// again in the order kept across passes (debug builds also check every kept key against a
    /// fresh one at every pass).
    #[test]
    fn a_time_limit_set_on_a_pending_job_moves_it_in_the_kept_order() {
        let cluster: ClusterConfig = serde_json::from_str(
            r#"{"nodes": [{"name": "n1", "cpus": 1}],
                "policy": {"plugins": [{"name": "shortest_first"}]}}"#,
        )
        .unwrap();
        let mut s = Scheduler::new(cluster).unwrap();
        let run = JobSpec::new("run", 3_600_000, 1);
        s.tick(0, vec![Event::Submit { job: run }]).unwrap();
        let jobs = [("short", 60_000), ("long", 120_000)]
            .map(|(name, limit)| Event::Submit {
                job: JobSpec::new(name, limit, 1),
            })
            .to_vec();
        s.tick(1_000, jobs).unwrap();
        let order = |s: &mut Scheduler, now: u64| -> Vec<String> {
            let pending = s.keyed_pending(now);
            s.listed(pending.order)
                .0
                .iter()
                .map(|&(_, id)| s.state.job_name(id).unwrap().to_string())
                .collect()
        };
        assert_eq!(order(&mut s, 2_000), ["short", "long"]);
        let shorter = Event::SetTimeLimit {
            job: "long".into(),
            time_limit_ms: 10_000,
        };
        s.tick(3_000, vec![shorter]).unwrap();
        assert!(s.last.order_index.as_ref().unwrap().carried_over());
        assert_eq!(order(&mut s, 4_000), ["long", "short"]);
    }

    #[test]
    fn the_order_is_kept_across_passes_under_a_period_or_timeless_keys_with_built_in_keys_and_no_admission_votes()
     {
        use crate::policy::{FnPlugin, Profile, Vote};
        let kept = |s: &Scheduler| s.last.order_index.as_ref().map(|i| i.carried_over());
        // Kept from pass to pass under one calculation; built again by the next.
        let mut s = one_busy_cpu(None, true);
        assert_eq!(kept(&s), Some(false));
        submit(&mut s, 1_000, &[("a", true, None), ("b", true, None)]);
        assert_eq!(kept(&s), Some(true));
        submit(&mut s, 20_000, &[("d", true, None)]);
        assert_eq!(kept(&s), Some(false));
        s.tick(21_000, Vec::new()).unwrap();
        assert_eq!(kept(&s), Some(true));
        // Never in the reference pass.
        let mut reference = s.with_reference_pass();
        reference.tick(22_000, Vec::new()).unwrap();
        assert_eq!(kept(&reference), None);
        // Without a period, kept where the keys never move with time (the default weights:
        // submit order), until a reconfiguration.
        let mut s = one_busy_cpu(None, false);
        submit(&mut s, 1_000, &[("a", true, None)]);
        assert_eq!(kept(&s), Some(true));
        submit(&mut s, 50_000, &[("b", true, None)]);
        assert_eq!(kept(&s), Some(true));
        let mut aged = ClusterConfig::clone(&s.state.config);
        aged.policy.priority.weights.age = 1_000;
        s.reconfigure(aged).unwrap();
        s.tick(51_000, Vec::new()).unwrap();
        // Keys that grow with age are computed afresh at every pass.
        assert_eq!(kept(&s), None);
        // Nor with an order plug-in of the host's, or admission votes (with no order key).
        let host_key = FnPlugin::new("host").order_key(|job, _| i64::from(job.spec().priority));
        let votes = FnPlugin::new("votes").admit(|_, _| Vote::Abstain);
        for plugin in [host_key, votes] {
            let profile = Profile::builder().plugin(plugin).build().unwrap();
            let mut s = one_busy_cpu(Some(profile), true);
            submit(&mut s, 1_000, &[("a", true, None)]);
            s.tick(2_000, Vec::new()).unwrap();
            assert_eq!(kept(&s), None);
        }
    }
}
