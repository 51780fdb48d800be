//! Step 6 of a pass: does a job's demand fit its queue's quota (and its user's cap), counting
//! the quota its own earmark holds and that of tentative victims as free.

use std::collections::BTreeMap;

use crate::model::ids::JobId;
use crate::model::shape::GpuNeed;
use crate::placement::Assignment;
use crate::quota::{QueueId, QuotaTree, QuotaVec};
use crate::scheduler::Scheduler;
use crate::state::ClusterState;

/// What the earmarks promise, for one state of the earmarks and the quota usage: each
/// earmarked preemptor's demand with its queue, in preemptor order, the usage with all of
/// them charged, and the usage once all of them have completed. A quota check of a job without an earmark reads both instead of charging every
/// earmark's demand again (a pass checks every pending job; the earmarks change only when a
/// preemption is made or given up, the usage when a job starts).
#[derive(Debug, Default)]
pub(in crate::scheduler) struct PromisedQuota {
    /// The state's counts of earmark and usage changes it was made for.
    changes: Option<(u64, u64)>,
    demands: Vec<(JobId, QueueId, QuotaVec)>,
    /// The usage with every earmark's demand charged; `None`: the tree's own (no earmark).
    charged: Option<Vec<QuotaVec>>,
    /// The usage once every preemption under way has completed
    /// ([`ClusterState::promised_usage`]); `None`: the tree's own (no earmark).
    after_preemptions: Option<Vec<QuotaVec>>,
}

impl PromisedQuota {
    /// Made from `state` (keeping this one's allocations), without its counts.
    fn rebuilt(mut self, state: &ClusterState) -> Self {
        let Some(tree) = state.quota.tree.as_ref() else {
            return self;
        };
        self.demands = state.earmark_demands();
        let added: Vec<(QueueId, QuotaVec)> =
            self.demands.iter().map(|(_, q, d)| (*q, *d)).collect();
        // Without earmarks both are the tree's usage, read there instead of copied.
        self.charged = (!added.is_empty()).then(|| tree.adjusted(&added, &[]).into_usage());
        self.after_preemptions = match state.promised_usage(&self.demands) {
            Some(std::borrow::Cow::Owned(usage)) => Some(usage),
            _ => None,
        };
        self
    }

    /// The usage with every earmark's demand charged, `tree` being the state's quota tree.
    pub(in crate::scheduler) fn charged<'a>(&'a self, tree: &'a QuotaTree) -> &'a [QuotaVec] {
        self.charged.as_deref().unwrap_or(&tree.usage)
    }

    /// The usage once every preemption under way has completed, `tree` being the state's
    /// quota tree.
    pub(in crate::scheduler) fn after_preemptions<'a>(
        &'a self,
        tree: &'a QuotaTree,
    ) -> &'a [QuotaVec] {
        self.after_preemptions.as_deref().unwrap_or(&tree.usage)
    }

    /// What `state`'s earmarks promise now, made again only where they or the usage changed.
    /// Debug builds check it against a rebuild.
    pub(in crate::scheduler) fn of(&mut self, state: &ClusterState) -> &Self {
        let Some(tree) = state.quota.tree.as_ref() else {
            return self;
        };
        let changes = (state.quota.earmark_changes, tree.changes);
        if self.changes != Some(changes) {
            *self = std::mem::take(self).rebuilt(state);
            self.changes = Some(changes);
        }
        #[cfg(debug_assertions)]
        {
            let fresh = PromisedQuota::default().rebuilt(state);
            debug_assert_eq!(self.demands, fresh.demands, "promised demands stale");
            debug_assert_eq!(self.charged, fresh.charged, "promised usage stale");
            debug_assert_eq!(self.after_preemptions, fresh.after_preemptions, "stale");
            debug_assert_eq!(
                self.after_preemptions(tree),
                &state
                    .promised_usage(&state.earmark_demands())
                    .unwrap_or_default()[..],
                "usage after the preemptions stale"
            );
        }
        self
    }
}

/// Verdicts of [`Scheduler::quota_fits_unplaced`] already given in a pass, for jobs alike in
/// everything the check reads: the queue, the totals the demand is made of and the GPU models
/// every group accepts. Only for jobs without an earmark or MIG slices, in queues that cap no
/// user (then the check reads nothing else of the job), and only while the state's counts of
/// earmark and usage changes stay the same (nothing else the check reads changes in a pass).
/// A shortcut: off in the reference pass.
#[derive(Debug, Default)]
pub(in crate::scheduler) struct UnplacedFits {
    /// The state's counts of earmark and usage changes the verdicts were given at.
    changes: Option<(u64, u64)>,
    known: BTreeMap<UnplacedKey, bool>,
    /// How many checks a verdict answered since [`UnplacedFits::take_reused`] last read it.
    reused: u64,
    /// How many placements an unplaced verdict spared since [`UnplacedFits::take_spared`]
    /// last read it ([`Scheduler::quota_rules_out_placement`]).
    spared: u64,
}

/// What an unplaced job's quota check reads of it: its queue, cpus, memory and GPUs in all,
/// and the models all its groups accept (a bit per model index).
type UnplacedKey = (QueueId, u64, u64, u64, u64);

impl UnplacedFits {
    /// The verdicts given at `changes`: the others are forgotten.
    fn at(&mut self, changes: (u64, u64)) -> &mut BTreeMap<UnplacedKey, bool> {
        if self.changes != Some(changes) {
            self.known.clear();
            self.changes = Some(changes);
        }
        &mut self.known
    }

    /// How many checks a kept verdict answered since the last call.
    pub(in crate::scheduler) fn take_reused(&mut self) -> u64 {
        std::mem::take(&mut self.reused)
    }

    /// How many placements a verdict spared since the last call.
    pub(in crate::scheduler) fn take_spared(&mut self) -> u64 {
        std::mem::take(&mut self.spared)
    }
}

impl Scheduler {
    /// [`Scheduler::quota_fits_unplaced`], answered from `memo` where a job alike was checked
    /// since the earmarks and the usage last changed ([`UnplacedFits`]).
    pub(in crate::scheduler) fn quota_fits_unplaced_memo(
        &self,
        memo: &mut UnplacedFits,
        earmarks: &PromisedQuota,
        id: JobId,
    ) -> bool {
        let Some(key) = self.unplaced_key(id).filter(|_| self.shortcuts) else {
            return self.quota_fits_unplaced(earmarks, id);
        };
        let changes = self.state_changes();
        if let Some(&known) = memo.at(changes).get(&key) {
            memo.reused += 1;
            debug_assert_eq!(
                known,
                self.quota_fits_unplaced(earmarks, id),
                "stale verdict"
            );
            return known;
        }
        let fits = self.quota_fits_unplaced(earmarks, id);
        memo.at(changes).insert(key, fits);
        fits
    }

    /// What quota checks and preemption searches read of the state that a pass changes: the
    /// earmarks and the quota usage, by their counts of changes ([`UnplacedFits`],
    /// [`super::preempt::NoRoom`]).
    pub(in crate::scheduler) fn state_changes(&self) -> (u64, u64) {
        let usage = self
            .state
            .quota
            .tree
            .as_ref()
            .map_or(0, |tree| tree.changes);
        (self.state.quota.earmark_changes, usage)
    }

    /// What `id`'s unplaced quota check reads of it ([`UnplacedKey`]); `None` where it reads
    /// more: the job has no queue, an earmark or MIG slices, or its queue caps users.
    fn unplaced_key(&self, id: JobId) -> Option<UnplacedKey> {
        let job = self.state.job(id)?;
        let (q, tree) = (job.queue?, self.state.quota.tree.as_ref()?);
        let mig = job.shapes.iter().any(|s| matches!(s.gpu, GpuNeed::Mig(_)));
        if mig || tree.has_user_caps(q) || self.state.earmarks.contains_key(&id) {
            return None;
        }
        let models = (0..self.state.models.len().min(64))
            .filter(|&m| job.shapes.iter().all(|s| s.models.allows(m as u32)))
            .fold(0u64, |bits, m| bits | 1 << m);
        let t = &job.totals;
        Some((q, t.cpu_milli, t.memory_mib, t.gpu_milli, models))
    }

    /// Whether `id`'s quota rules out every placement now, known without placing it: the
    /// verdict is the same on any nodes it could use
    /// ([`Scheduler::quota_verdict_placement_free`]) and says no. Asked by
    /// [`Scheduler::place_now`] in a job's turn where the fit memo did not already rule the
    /// placement out, and never where its partition filters nodes (`explain` reports what
    /// the filters rejected). Then the placement is not
    /// tried, and the pass goes on as after a placement that found no room: the quota verdict
    /// is the unplaced one, `false` either way. A shortcut: the reference pass places every
    /// job.
    pub(in crate::scheduler) fn quota_rules_out_placement(
        &self,
        id: JobId,
        pass: &mut super::Pass,
    ) -> bool {
        if !self.shortcuts || !self.quota_verdict_placement_free(id) {
            return false;
        }
        let earmarks = pass.promised.of(&self.state);
        if self.quota_fits_unplaced_memo(&mut pass.unplaced_fits, earmarks, id) {
            return false;
        }
        pass.unplaced_fits.spared += 1;
        true
    }

    /// Whether `id`'s quota verdict is the same on every placement, and so the unplaced one
    /// ([`Scheduler::quota_fits_unplaced`]): the job has a queue and is charged as it asks
    /// ([`crate::state::Job::charged_as_asked`]), and either no limit or user cap names a GPU
    /// model (the verdict then reads only what every placement charges alike: cpus, memory
    /// and GPUs in all), or its groups accept the same models and those give one demand.
    pub(in crate::scheduler) fn quota_verdict_placement_free(&self, id: JobId) -> bool {
        let (Some(job), Some(tree)) = (self.state.job(id), self.state.quota.tree.as_ref()) else {
            return false;
        };
        if job.queue.is_none() || !job.charged_as_asked() {
            return false;
        }
        if !tree.splits_models() {
            return true;
        }
        let models = job.shapes.first().map(|s| s.models);
        job.shapes.iter().all(|s| Some(s.models) == models) && self.unplaced_demands(id).len() == 1
    }

    /// The quota demand of a job placed on `assignments`.
    pub(in crate::scheduler) fn assignments_demand(
        &self,
        id: JobId,
        assignments: &[Assignment],
    ) -> QuotaVec {
        let exclusive = self.state.job(id).is_some_and(|j| j.spec.exclusive);
        let charges = self.state.charges_of(assignments, exclusive);
        self.state.charges_demand(&charges)
    }

    /// True when `demand` fits the job's queue and its user's cap once `victims` (running jobs)
    /// and the job's own earmark no longer count. Jobs without a queue always fit. When
    /// `reclaiming` (choosing victims among other queues' borrowers), the job must also stay
    /// within its nominal quota; once they are chosen the earmark is its promise.
    ///
    /// Any other job must fit with every earmarked preemptor's demand charged too (on top of
    /// its victims, which may still run): so nothing that starts while victims stop can take
    /// the quota a preemptor was promised. A preemptor whose victims have all stopped counts
    /// only what is charged now: every job that started since its earmark was made counted its
    /// demand. One starting elsewhere before they stop is any other job.
    ///
    /// A preemptor of a fair-sharing queue choosing its victims (`promised`) counts instead the
    /// quota as it will be once every preemption under way has completed: the other earmarks'
    /// victims gone and their preemptors started, as
    /// [`crate::state::ClusterState::promised_usage`] does, so that two preemptors in one
    /// pass do not each take victims for the other's promise.
    ///
    /// `earmarks`: what the earmarks promise now ([`PromisedQuota::of`]).
    pub(in crate::scheduler) fn quota_fits(
        &self,
        earmarks: &PromisedQuota,
        id: JobId,
        victims: &[JobId],
        reclaiming: bool,
        promised_view: bool,
        demand: &QuotaVec,
    ) -> bool {
        let (Some(q), Some(tree)) = (self.state.job_queue(id), self.state.quota.tree.as_ref())
        else {
            return true;
        };
        let own = self.state.earmarks.get(&id);
        let promised: Vec<(JobId, QueueId, QuotaVec)> = match own {
            None => Vec::new(),
            Some(earmark) if earmark.victims.is_empty() => Vec::new(),
            Some(_) => earmarks
                .demands
                .iter()
                .filter(|(p, ..)| *p != id)
                .copied()
                .collect(),
        };
        let mut freed = self.state.earmarked_quota(id);
        freed.extend(
            victims
                .iter()
                .filter_map(|v| self.state.quota.charged.get(v).copied()),
        );
        if promised_view {
            for (p, earmark) in self.state.earmarks.iter().filter(|(p, _)| **p != id) {
                freed.extend(self.state.earmarked_quota(*p));
                freed.extend(
                    earmark
                        .victims
                        .iter()
                        .filter_map(|v| self.state.quota.charged.get(v).copied()),
                );
            }
        }
        // Without an earmark of its own, the job counts every earmark's promise: the charged
        // usage kept for them.
        let adjusted = match own {
            None => tree.adjusted_from(earmarks.charged(tree), &freed),
            Some(_) => {
                let added: Vec<(QueueId, QuotaVec)> =
                    promised.iter().map(|(_, pq, d)| (*pq, *d)).collect();
                tree.adjusted(&added, &freed)
            }
        };
        let promised = match own {
            None => &earmarks.demands[..],
            Some(_) => &promised[..],
        };
        let held = self.user_held_for(id, q, victims, promised);
        adjusted.fits(q, demand)
            && tree.fits_user(q, &held, demand)
            && (!reclaiming || adjusted.within_nominal(q, demand))
    }

    /// What the job's user holds in queue `q` for `max_per_user`, counting the victims as gone
    /// and the other earmarked preemptors as started; zero (never read) when the queue caps no
    /// user, so the common case skips the scan of the charged jobs.
    fn user_held_for(
        &self,
        id: JobId,
        q: QueueId,
        victims: &[JobId],
        promised: &[(JobId, QueueId, QuotaVec)],
    ) -> QuotaVec {
        let capped = self
            .state
            .quota
            .tree
            .as_ref()
            .is_some_and(|t| t.has_user_caps(q));
        if !capped {
            return QuotaVec::ZERO;
        }
        let user = self.state.job(id).and_then(|j| j.spec.user.clone());
        let mut held = self.state.user_held(q, user.as_deref());
        for v in victims {
            if let Some((vq, d)) = self.state.quota.charged.get(v)
                && *vq == q
                && self.state.job(*v).and_then(|j| j.spec.user.as_deref()) == user.as_deref()
            {
                held.sub(d);
            }
        }
        for (p, pq, d) in promised {
            if *pq == q
                && self.state.job(*p).and_then(|j| j.spec.user.as_deref()) == user.as_deref()
            {
                held.add(d);
            }
        }
        held
    }

    /// Quota check for a job not placed yet: it fits when it would with all its GPUs on some
    /// model it accepts.
    pub(in crate::scheduler) fn quota_fits_unplaced(
        &self,
        earmarks: &PromisedQuota,
        id: JobId,
    ) -> bool {
        if self.state.job_queue(id).is_none() {
            return true;
        }
        self.unplaced_demands(id)
            .iter()
            .any(|demand| self.quota_fits(earmarks, id, &[], false, false, demand))
    }

    /// The possible quota demands of a job with a queue: one per GPU model it accepts, models
    /// without a quota key of their own giving the same demand once.
    pub(in crate::scheduler) fn unplaced_demands(&self, id: JobId) -> Vec<QuotaVec> {
        let mut demands: Vec<QuotaVec> = Vec::new();
        let Some(job) = self.state.job(id).filter(|job| job.queue.is_some()) else {
            return demands;
        };
        for m in 0..self.state.models.len() {
            if job.shapes.iter().all(|s| s.models.allows(m as u32)) {
                let demand = self.state.shape_demand(id, Some(m));
                if !demands.contains(&demand) {
                    demands.push(demand);
                }
            }
        }
        if demands.is_empty() {
            demands.push(self.state.shape_demand(id, None));
        }
        demands
    }
}

#[cfg(test)]
mod tests {
    use crate::{ClusterConfig, Event, JobSpec, Scheduler};

    /// A node of 8 cpus and queue `q` of 4 cpus nominal, without a cohort; `jobs` (name,
    /// exclusive), one cpu each, submitted at 0. The scheduler and the jobs started.
    fn starts(jobs: &[(&str, bool)]) -> (Scheduler, Vec<String>) {
        let cluster: ClusterConfig = serde_json::from_str(
            r#"{"nodes": [{"name": "n1", "cpus": 8}],
                "queues": [{"name": "q", "quota": {"cpu": {"nominal": 4}}}]}"#,
        )
        .unwrap();
        let mut s = Scheduler::new(cluster).unwrap();
        let events = jobs
            .iter()
            .map(|&(name, exclusive)| {
                let mut job = JobSpec::new(name, 60_000, 1);
                job.queue = Some("q".into());
                job.exclusive = exclusive;
                Event::Submit { job }
            })
            .collect();
        let out = s.tick(0, events).unwrap();
        (s, out.started())
    }

    #[test]
    fn an_exclusive_job_is_checked_against_its_queue_s_quota_with_the_whole_node_it_takes() {
        // Alone, its one cpu would fit `q`'s 4; placed, it is charged the node's 8, which
        // do not: it waits for quota, where a job of one cpu not exclusive starts.
        let (s, started) = starts(&[("x", true), ("y", false)]);
        assert_eq!(started, ["y"]);
        let pending = s.explain().pending;
        assert_eq!(pending.len(), 1);
        assert_eq!(pending[0].job, "x");
        assert_eq!(pending[0].reason, crate::PendingReason::Quota);
    }

    #[test]
    fn a_placed_job_whose_verdict_is_the_same_on_every_placement_takes_the_one_kept() {
        // The placement's quota check asked each job's verdict unplaced and kept it; the
        // check of the placed job reads it again instead of weighing the placement.
        let (s, started) = starts(&[("y", false), ("z", false)]);
        assert_eq!(started, ["y", "z"]);
        assert_eq!(s.last.quota_verdicts_reused, 2);
    }
}
