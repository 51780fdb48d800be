//! A settled pass: once nothing later in the order can start, be planned or preempt, the pass
//! stops, and the reasons of the jobs it did not visit are derived when the report is read.
//!
//! The pass is settled before a job when all of these hold: the backfill depth is used up, or
//! every pending job has a queue and no queue admits the least any of them demands (so no later
//! job is planned); preemption is off and no preemptor holds an earmark (so no later
//! job preempts or starts on capacity held for it), no pass tracks a head
//! ([`crate::scheduler::pass::head`]: the derived reasons are the default rules'), and what is
//! free now, summed over every node, falls short of the least any pending job
//! needs ([`crate::placement::NeedFloor`]) — so no later job can start either. Nothing a
//! later job would do changes the state then, and each one's reason follows from the state as
//! the pass left it: held, begin time or dependency; quota (a strict-FIFO queue blocked by an
//! earlier job, or the job's own demand); or resources. A full cluster with a long queue is
//! the common case: the pass reads the order's head and stops, instead of visiting every job.
//!
//! # A what-if job after settling
//!
//! [`crate::Scheduler::what_if`]'s pass plans its job even beyond the backfill depth, so that
//! job must have its turn. Once the pass is settled before it, the jobs between can neither
//! start, be planned nor preempt: the only pass state their turns change is what holds later
//! jobs back ([`Blocking`]), and the what-if job's verdict reads that state only in mode `none`
//! (the first job blocked for resources holds every later one) or when its queue is
//! strict-FIFO (a job of the queue that fails its quota holds the rest); readiness holds
//! nothing new, since no later job fits now. Outside those two cases the what-if job takes its
//! turn at once, on the profile and the reservations the pass has made, and the pass stops;
//! inside them the pass walks on to it. The reference pass walks every job, and the property
//! family compares the two answers.

use crate::config::BackfillMode;
use crate::decision::PendingReason;
use crate::model::ids::JobId;
use crate::placement::NeedFloor;
use crate::quota::QueueId;
use crate::scheduler::Scheduler;
use crate::scheduler::pass::order::slots::VisitedOrder;
use crate::scheduler::pass::quota::PromisedQuota;
use crate::scheduler::pass::report::PendingEntry;
use crate::scheduler::pass::{Blocking, Pass, waiting_reason};
use crate::scheduler::shortcuts::fit_memo::FitMemo;

/// What a pass knows of all pending jobs before it visits any: the least any of them needs,
/// for the settled test, and the next begin time, for the wake-up.
#[derive(Clone, Copy, Debug)]
pub(in crate::scheduler) struct PendingSummary {
    /// The least free amounts any pending job needs to start now.
    pub(in crate::scheduler) need: NeedFloor,
    /// Whether every pending job has a quota queue.
    pub(in crate::scheduler) all_queued: bool,
    /// The earliest begin time or back-off end after the pass's time.
    pub(in crate::scheduler) next_begin_ms: Option<u64>,
}

/// The jobs a settled pass did not visit, with what their reasons depend on.
#[derive(Clone, Debug)]
pub(in crate::scheduler) struct DeferredReport {
    /// The pass's order: its jobs from `from` on are the ones not visited.
    pub(in crate::scheduler) visited: VisitedOrder,
    /// How many jobs the pass visited (the last visited one's position).
    pub(in crate::scheduler) from: usize,
    /// The pass's time.
    pub(in crate::scheduler) now: u64,
    /// Mode `none`: an earlier job was blocked for resources.
    pub(in crate::scheduler) blocked: bool,
    /// Strict-FIFO queues blocked by an earlier job.
    pub(in crate::scheduler) blocked_queues: Vec<QueueId>,
    /// `block_admission`: an earlier job that fits waits for readiness, holding every later
    /// one.
    pub(in crate::scheduler) ready_wait: bool,
}

/// What a settled pass does about its what-if job
/// ([`Scheduler::what_if_job_after_settling`]).
pub(in crate::scheduler) enum AfterSettling {
    /// Stop: there is none, or it has had its turn.
    Stop,
    /// Give it its turn now, then stop.
    Turn(JobId),
    /// Go on visiting the jobs before it.
    Walk,
}

impl Scheduler {
    /// Whether nothing the pass has not visited yet can start, be planned or preempt.
    pub(in crate::scheduler) fn settled(&self, pass: &mut Pass, pending: &PendingSummary) -> bool {
        let settled = self.shortcuts
            && !self.tracks_head()
            && !self.compresses()
            && !self.state.config.policy.preemption.enabled
            && self.state.earmarks.is_empty()
            && !self.state.index.totals().covers_any(&pending.need);
        settled
            && (pass.reservations >= pass.depth
                || *pass
                    .quota_closed
                    .get_or_insert_with(|| self.quota_closed(pending)))
    }

    /// What a settled pass does about its what-if job (module docs): nothing once it has had its
    /// turn (or without one); its turn at once where nothing the jobs before it do can reach
    /// its verdict; otherwise walk on to it.
    pub(in crate::scheduler) fn what_if_job_after_settling(&self, pass: &Pass) -> AfterSettling {
        let Some(id) = pass.always_plan.filter(|_| !pass.always_planned) else {
            return AfterSettling::Stop;
        };
        let strict_fifo = |q: QueueId| self.state.config.queues[q.index()].strict_fifo;
        let held_by_earlier = self.state.config.policy.backfill.mode == BackfillMode::None
            || self
                .state
                .job(id)
                .and_then(|job| job.queue)
                .is_some_and(strict_fifo);
        match held_by_earlier {
            true => AfterSettling::Walk,
            false => AfterSettling::Turn(id),
        }
    }

    /// Whether every pending job has a queue and no queue admits the least any of them
    /// demands: then no pending job passes its quota check (a larger demand fits less).
    fn quota_closed(&self, pending: &PendingSummary) -> bool {
        let Some(tree) = self
            .state
            .quota
            .tree
            .as_ref()
            .filter(|_| pending.all_queued)
        else {
            return false;
        };
        let need = &pending.need;
        let least = tree.demand(need.cpu_milli, need.memory_mib, &[("", need.device_milli)]);
        (0..tree.queue_count()).all(|q| !tree.fits(QueueId(q as u32), &least))
    }

    /// The report entries of the jobs the last pass did not visit, in order.
    pub(in crate::scheduler) fn deferred_entries(&self) -> Vec<PendingEntry> {
        let Some(deferred) = &self.last.deferred else {
            return Vec::new();
        };
        let rest = match &deferred.visited {
            VisitedOrder::Listed(keyed) => {
                let mut rest = keyed[deferred.from..].to_vec();
                rest.sort_unstable_by_key(|(key, _)| *key);
                rest
            }
            // The index stands as the pass read it until the next pass's update, and is
            // forgotten with the deferred report.
            VisitedOrder::Indexed { .. } => self
                .last
                .order_index
                .as_ref()
                .map(|index| index.keyed_from(deferred.from))
                .unwrap_or_default(),
        };
        let mut blocking = Blocking {
            blocked: deferred.blocked,
            blocked_queues: deferred.blocked_queues.clone(),
            fits_free: FitMemo::default(),
            // No job the pass left unvisited fits now, so none meets a job not ready.
            unready: false,
            ready_wait: deferred.ready_wait,
            heuristic_fit_read: false,
        };
        // After the jobs the pass visited and left waiting (the started ones left the order).
        let visited = self.last.report.len();
        let mut earmarks = PromisedQuota::default();
        let earmarks = earmarks.of(&self.state);
        rest.iter()
            .filter_map(|&(_, id)| {
                Some((
                    id,
                    self.settled_reason(id, deferred.now, earmarks, &mut blocking)?,
                ))
            })
            .enumerate()
            .map(|(i, (id, reason))| PendingEntry {
                job: id,
                position: visited + i + 1,
                reason,
                estimated_start_ms: None,
            })
            .collect()
    }

    /// The reason the pass would have given `id` (`None`: no such job). A settled pass's
    /// remaining jobs can neither start, be planned nor preempt, so the pass's own steps for
    /// a job that does none of these decide it: waiting, held back, or unplanned.
    /// `earmarks`: what the earmarks promise (the state does not change while the report is
    /// derived).
    fn settled_reason(
        &self,
        id: JobId,
        now: u64,
        earmarks: &PromisedQuota,
        blocking: &mut Blocking,
    ) -> Option<PendingReason> {
        let job = self.state.job(id)?;
        let reason = waiting_reason(job, now)
            .or_else(|| {
                self.last
                    .denied
                    .contains_key(&id)
                    .then_some(PendingReason::Admission)
            })
            .or_else(|| self.held_back(id, job, now, blocking))
            .unwrap_or_else(|| {
                let quota_ok = self.quota_fits_unplaced(earmarks, id);
                self.unplanned_reason(id, job, now, quota_ok, blocking)
            });
        Some(reason)
    }
}

#[cfg(all(test, feature = "testkit"))]
mod tests {
    use serde_json::json;

    use super::*;

    use crate::testkit::oracle::checked_tick;
    use crate::{ClusterConfig, Event};

    /// The same scheduler twice: one with the pass's shortcuts, one running the reference
    /// pass (`testkit::reference`, whose property family compares the two on random streams).
    fn pair(config: &ClusterConfig) -> Option<(Scheduler, Scheduler)> {
        let settling = Scheduler::new(config.clone()).ok()?;
        let visiting = settling.with_reference_pass();
        Some((settling, visiting))
    }

    /// A job of `gpus` GPUs on one node for an hour, in queue `queue`.
    fn job(id: &str, queue: &str, gpus: u32, extra: serde_json::Value) -> Event {
        let mut job = json!({"id": id, "queue": queue, "time_limit_ms": 3_600_000,
            "groups": [{"count": 1, "gpus": gpus}]});
        if let (Some(job), Some(extra)) = (job.as_object_mut(), extra.as_object()) {
            job.extend(extra.clone());
        }
        serde_json::from_value(json!({"type": "submit", "job": job})).unwrap()
    }

    /// Two 4-GPU nodes filled by two jobs, then jobs waiting for every reason a settled pass
    /// reports: a reservation, resources, quota (its own demand over a queue that may not
    /// borrow, and behind it in a strict-FIFO queue), hold, begin time and dependency.
    fn full_cluster(mode: &str) -> (ClusterConfig, Vec<Event>, Vec<Event>) {
        full_cluster_with_quota(mode, 12, 2)
    }

    /// [`full_cluster`] with queue `big`'s and queue `fifo`'s nominal GPUs.
    fn full_cluster_with_quota(
        mode: &str,
        big: u32,
        fifo: u32,
    ) -> (ClusterConfig, Vec<Event>, Vec<Event>) {
        let config: ClusterConfig = serde_json::from_value(json!({
            "nodes": [{"name": "n1", "cpus": 16, "memory_mib": 64000,
                       "gpus": {"model": "a100", "count": 4}},
                      {"name": "n2", "cpus": 16, "memory_mib": 64000,
                       "gpus": {"model": "a100", "count": 4}}],
            "cohorts": [{"name": "org"}],
            "queues": [{"name": "big", "cohort": "org", "quota": {"gpu": {"nominal": big}}},
                       {"name": "fifo", "cohort": "org", "strict_fifo": true,
                        "quota": {"gpu": {"nominal": fifo, "borrowing_limit": 0}}}],
            "policy": {"backfill": {"mode": mode}}}))
        .unwrap();
        let fill = vec![
            job("r1", "big", 4, json!({})),
            job("r2", "big", 4, json!({})),
        ];
        let waiting = vec![
            job("head", "big", 4, json!({"priority": 9})),
            job("second", "big", 2, json!({"priority": 8})),
            job("too-big", "fifo", 4, json!({"priority": 7})),
            job("behind", "fifo", 1, json!({"priority": 6})),
            job("held", "big", 1, json!({"priority": 5})),
            serde_json::from_value(json!({"type": "hold", "job": "held"})).unwrap(),
            job(
                "later",
                "big",
                1,
                json!({"priority": 4, "begin_ms": 7_200_000}),
            ),
            job(
                "after",
                "big",
                1,
                json!({"priority": 3,
                "after": [{"job": "head", "on": "ok"}]}),
            ),
            job("last", "big", 1, json!({"priority": 2})),
        ];
        (config, fill, waiting)
    }

    #[test]
    fn a_full_cluster_settles_after_the_reservation_and_reports_every_reason() {
        for mode in ["easy", "none"] {
            let (config, fill, waiting) = full_cluster(mode);
            let (mut settling, mut visiting) = pair(&config).unwrap();
            for s in [&mut settling, &mut visiting] {
                checked_tick(s, 0, fill.clone()).unwrap();
                let out = checked_tick(s, 1_000, waiting.clone()).unwrap();
                assert!(out.rejected.is_empty(), "{:?}", out.rejected);
            }
            let deferred = settling.last.deferred.as_ref().expect("the pass settled");
            // EASY visits the head to plan it; without backfill nothing needs visiting at all.
            assert_eq!(deferred.from, usize::from(mode == "easy"), "{mode}");
            // Keys that never move with time: the pass read the order index in place, and the
            // report of the jobs it did not visit reads them from it.
            assert!(
                matches!(deferred.visited, VisitedOrder::Indexed { len: 8 }),
                "{mode}: {:?}",
                deferred.visited
            );
            let reasons: Vec<(String, PendingReason)> = settling
                .explain()
                .pending
                .into_iter()
                .map(|p| (p.job, p.reason))
                .collect();
            // Without backfill the blocked head blocks every later job, whatever its quota.
            let (head, quota) = match mode {
                "easy" => (PendingReason::Reserved, PendingReason::Quota),
                _ => (PendingReason::Resources, PendingReason::Resources),
            };
            let expected = [
                ("head", head),
                ("second", PendingReason::Resources),
                ("too-big", quota),
                ("behind", quota),
                ("held", PendingReason::Held),
                ("later", PendingReason::Begin),
                ("after", PendingReason::Dependency),
                ("last", PendingReason::Resources),
            ]
            .map(|(j, r)| (j.to_string(), r));
            assert_eq!(reasons, expected, "{mode}");
            assert_eq!(settling.explain(), visiting.explain(), "{mode}");
        }
    }

    #[test]
    fn a_pass_settles_at_once_when_no_queue_has_quota_left() {
        // `big` uses its 8 GPUs, `fifo` has none: no job passes its quota check, so none is
        // planned and the pass visits nobody.
        let (config, fill, waiting) = full_cluster_with_quota("easy", 8, 0);
        let (mut settling, mut visiting) = pair(&config).unwrap();
        for s in [&mut settling, &mut visiting] {
            checked_tick(s, 0, fill.clone()).unwrap();
            checked_tick(s, 1_000, waiting.clone()).unwrap();
        }
        assert_eq!(settling.last.deferred.as_ref().map(|d| d.from), Some(0));
        let pending = settling.explain().pending;
        let quota_blocked = pending.iter().filter(|p| p.reason == PendingReason::Quota);
        assert_eq!(quota_blocked.count(), 5);
        assert_eq!(settling.explain(), visiting.explain());

        // With one GPU of quota left in `fifo`, the least demand fits it: the head is visited.
        let (config, fill, waiting) = full_cluster_with_quota("easy", 8, 1);
        let mut s = Scheduler::new(config).unwrap();
        checked_tick(&mut s, 0, fill).unwrap();
        checked_tick(&mut s, 1_000, waiting).unwrap();
        assert_ne!(s.last.deferred.as_ref().map(|d| d.from), Some(0));
    }

    #[test]
    fn a_reconfiguration_keeps_the_last_report_as_it_was() {
        let (config, fill, waiting) = full_cluster("easy");
        let mut s = Scheduler::new(config.clone()).unwrap();
        checked_tick(&mut s, 0, fill).unwrap();
        checked_tick(&mut s, 1_000, waiting).unwrap();
        assert!(s.last.deferred.is_some());
        let before = s.explain();
        // Without the strict-FIFO rule, "behind" would no longer wait for quota.
        let mut relaxed = config;
        relaxed.queues[1].strict_fifo = false;
        s.reconfigure(relaxed).unwrap();
        assert!(s.last.deferred.is_none());
        assert_eq!(s.explain(), before);
    }

    #[test]
    fn a_snapshot_keeps_the_deferred_report() {
        let (config, fill, waiting) = full_cluster("easy");
        let mut s = Scheduler::new(config).unwrap();
        checked_tick(&mut s, 0, fill).unwrap();
        checked_tick(&mut s, 1_000, waiting).unwrap();
        assert!(s.last.deferred.is_some());
        let restored = Scheduler::restore(s.snapshot()).unwrap();
        assert_eq!(restored.explain(), s.explain());
    }
}
